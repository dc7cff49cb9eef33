"""mkdocs-vault-mcp: index an MkDocs site into SQLite FTS5 and serve it to AI agents over MCP."""

__version__ = "0.1.0"
