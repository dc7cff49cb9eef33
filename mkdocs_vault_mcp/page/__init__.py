"""The page model and what a page becomes: plain data, no SQL and no MkDocs."""
