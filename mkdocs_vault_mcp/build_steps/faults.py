"""A build's failures as MkDocs errors: what failed and what to check, in one line, never a traceback."""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

from ..index.write.working_index import IndexBusy

CACHE_HINT = (
    "cache_dir must be a writable folder on a disk with room (the working index is a cache: deleting it is safe)"
)
SITE_HINT = "site_dir must be writable, on a disk with room; the index published before is left as it was"


_DESTINATION_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})


@contextlib.contextmanager
def build_fault(doing: str, hint: str) -> Iterator[None]:
    """A file system or SQLite failure (a full disk, a read-only folder, a file where a folder should be) ends the
    build with one MkDocs error that says what failed and what to check, never a traceback."""
    try:
        yield
    except (OSError, sqlite3.Error) as error:
        raise fault_of(error, doing, hint) from error


def fault_of(error: OSError | sqlite3.Error, doing: str, hint: str) -> PluginError:
    """build_fault's error, for a caller that catches the failure itself."""
    if isinstance(error, IndexBusy):  # no fault of the disk: the message says whose it is
        return PluginError(f"vault-mcp: {error}.")
    if isinstance(error, (FileExistsError, NotADirectoryError)) and error.filename:
        reason = f"{error.filename} is a file where a folder should be"
    elif isinstance(error, OSError) and error.strerror:
        # A copy's error names both files (shutil: the source first); a full or read-only disk is the destination's.
        written = error.filename2 if error.errno in _DESTINATION_ERRORS else None
        named = written or error.filename
        reason = error.strerror + (f": {named}" if named else "")
    else:
        reason = str(error)
    return PluginError(f"vault-mcp could not {doing} ({reason}). {hint}.")


def check_site_dir(config: Any) -> None:
    """MkDocs cleans and writes site_dir after on_config, and a folder it cannot write ends the build in a
    traceback: say so first, in one error."""
    folder = Path(config.site_dir).resolve()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # MkDocs will create the rest
    for target in (folder, folder / "vault-mcp"):
        if target.is_dir() and not os.access(target, os.W_OK):
            read_only = bool(os.statvfs(target).f_flag & os.ST_RDONLY)
            reason = "Read-only file system" if read_only else "Permission denied"
            raise PluginError(f"vault-mcp could not write {target} ({reason}). {SITE_HINT}.")


def check_cache_dir(cache_dir: Path, config: Any) -> None:
    """The working index must outlive the site (cleaned by every build) and stay out of the sources."""
    where = cache_dir.resolve()
    for option in ("docs_dir", "site_dir"):
        if where.is_relative_to(Path(config[option]).resolve()):
            raise PluginError(
                f"Plugin 'vault-mcp' option 'cache_dir': {where} is inside {option} ({config[option]}); "
                "put the working index outside docs_dir and site_dir, such as the default .cache/plugin/vault-mcp"
            )
