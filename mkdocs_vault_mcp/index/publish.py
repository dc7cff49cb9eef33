"""The committed index as readers get it: copied into the site whole, opened read-only, checked."""

from __future__ import annotations

import os
import secrets
import sqlite3
from pathlib import Path


def is_corrupt(error: sqlite3.DatabaseError) -> bool:
    """Whether SQLite says the file is damaged or not a database at all (rather than busy, full, ...)."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
    return "malformed" in str(error) or "not a database" in str(error)


def publish(working: Path, destination: Path) -> None:
    """Copy the committed index to `destination` whole or not at all (a reader never sees half a file)."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    # A build killed while it published (kill -9, power loss) left its copy here; a `--dirty` build does not
    # clean the site, and would deploy it.
    for leftover in destination.parent.glob(".index-*.tmp*"):
        leftover.unlink(missing_ok=True)
    # Not mkstemp, which makes the file private (0600): a published site is read by a web server or another
    # user, so the copy gets the permissions of any file the build writes (0666 less the umask).
    temporary = destination.parent / f".index-{secrets.token_hex(8)}.tmp"
    os.close(os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    try:
        source = sqlite3.connect(f"{working.resolve().as_uri()}?mode=ro", uri=True)
        target = sqlite3.connect(temporary)
        try:
            source.backup(target)
            # A deployed site may be read-only: no -wal or -shm files beside the copy.
            target.execute("PRAGMA journal_mode = DELETE")
        finally:
            target.close()
            source.close()
        os.replace(temporary, destination)
    except BaseException:
        for leftover in (temporary, temporary.with_name(temporary.name + "-journal")):
            leftover.unlink(missing_ok=True)
        raise


def open_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot write; one per thread (sqlite3 connections must not cross threads)."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    conn.execute("PRAGMA query_only = ON")
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


def check_index(path: Path) -> None:
    """Raise sqlite3.DatabaseError unless `path` is an index whose pages and build facts can be read."""
    conn = open_read_only(path)
    try:
        # Names every table and column the tools read, without reading the rows (start-up time).
        conn.execute(
            "SELECT d.path, d.folder, d.url, d.title, d.summary, d.meta, d.modified, d.fingerprint, d.language,"
            " d.fallback_of, s.content, s.markdown, i.key, i.value FROM documents d, sources s, info i LIMIT 0"
        ).fetchall()
        conn.execute("SELECT document_id, position, level, heading, start, headings, anchor FROM sections LIMIT 0")
        conn.execute("SELECT field, value, document_id FROM field_values LIMIT 0").fetchall()
        conn.execute("SELECT rowid FROM sections_fts LIMIT 0").fetchall()
    finally:
        conn.close()
