"""`python -m mkdocs_vault_mcp`: the `mkdocs-vault-mcp` command, for where its script is not on PATH."""

from .cli import main

if __name__ == "__main__":
    main()
