"""Adapters: the one place where this package reaches into a dependency's private parts.

Each module here wraps one dependency's names that are not its public interface (a private attribute, an
implementation detail of CPython), for a need its public interface does not meet. Each says what it relies on and
why, checks that the installed version still has it (`missing()` lists what it lacks, and a use raises
`AdapterMismatch` naming the dependency and its version), and is covered by tests/test_adapters.py, so that a new
version of the dependency fails the suite with a clear message rather than changing behaviour silently.
tests/test_private_names.py keeps every other module to public names.

Nothing here is imported by `mkdocs_vault_mcp/adapters/__init__.py` itself: each user imports the one it needs, so
that the standalone server imports nothing of MkDocs.
"""

from __future__ import annotations

from importlib import metadata


class AdapterMismatch(RuntimeError):
    """The installed version of a dependency lacks what an adapter relies on; the message says which and what."""


def mismatch(distribution: str, missing: list[str], supported: str) -> AdapterMismatch:
    """The error for a dependency that lacks the private names `missing`, naming its installed version."""
    try:
        installed = metadata.version(distribution)
    except metadata.PackageNotFoundError:
        installed = "unknown"
    return AdapterMismatch(
        f"mkdocs-vault-mcp relies on {', '.join(missing)} of {distribution} {supported}, which {distribution} "
        f"{installed} lacks: install {distribution} {supported} (the versions this package is tested with), or "
        "upgrade mkdocs-vault-mcp."
    )
