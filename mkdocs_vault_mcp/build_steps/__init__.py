"""A build's work: MkDocs' pages, their times, incremental indexing, built sites, what a build publishes."""
