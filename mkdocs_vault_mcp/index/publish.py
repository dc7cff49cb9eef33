"""The committed index as readers get it: copied into the site whole, opened read-only, checked."""

from __future__ import annotations

import os
import secrets
import shutil
import sqlite3
from pathlib import Path

from .schema import FORMAT_VERSION


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
    remove_leftovers(destination.parent, ".index-")
    # Not mkstemp, which makes the file private (0600): a published site is read by a web server or another
    # user, so the copy gets the permissions of any file the build writes (0666 less the umask).
    temporary = destination.parent / f".index-{secrets.token_hex(8)}.tmp"
    os.close(os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    try:
        copy_committed(working, temporary)
        target = sqlite3.connect(temporary)
        try:
            # A deployed site may be read-only: no -wal or -shm files beside the copy.
            target.execute("PRAGMA journal_mode = DELETE")
        finally:
            target.close()
        os.replace(temporary, destination)
    except BaseException:
        for suffix in ("", "-journal", "-wal", "-shm"):
            temporary.with_name(temporary.name + suffix).unlink(missing_ok=True)
        raise


def remove_leftovers(folder: Path, prefix: str) -> None:
    """Delete the temporary files (`PREFIX….tmp…`) that a build killed while it wrote left in `folder`. A listing
    of the folder: pathlib's glob compiles a regular expression, a millisecond or two of every build."""
    for entry in os.scandir(folder):
        if entry.name.startswith(prefix) and ".tmp" in entry.name:
            Path(entry.path).unlink(missing_ok=True)


def copy_committed(working: Path, destination: Path) -> None:
    """The committed index into `destination`: the file's bytes, copied by the kernel once the write-ahead log is
    folded into it (far faster than SQLite's page-by-page backup), else through the backup."""
    source = sqlite3.connect(f"{working.resolve().as_uri()}?mode=rw", uri=True, isolation_level=None)
    try:
        busy, frames, folded = source.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy or frames != folded:  # a reader holds part of the log back: copy page by page instead
            target = sqlite3.connect(destination)
            try:
                source.backup(target)
            finally:
                target.close()
            return
        # A read transaction from an empty log: no checkpoint can write the file until it ends.
        source.execute("BEGIN")
        source.execute("SELECT count(*) FROM sqlite_master").fetchone()
        shutil.copyfile(working, destination)
        source.execute("COMMIT")
    finally:
        source.close()


def open_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot write; one per thread (sqlite3 connections must not cross threads)."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    conn.execute("PRAGMA query_only = ON")
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


class OtherSchema(Exception):
    """An index written with another schema version than the one this package reads."""

    def __init__(self, schema_version: str, package_version: str | None) -> None:
        super().__init__(f"schema version {schema_version}, this package reads {FORMAT_VERSION}")
        self.schema_version = schema_version
        self.package_version = package_version  # None: written before the package version was kept


def stored_versions(conn: sqlite3.Connection) -> tuple[str | None, str | None]:
    """The schema and package versions an index was written with (None where it does not say). An index that
    predates the `schema_version` row says its schema as the prefix of its `options` row."""
    facts = dict(
        conn.execute("SELECT key, value FROM info WHERE key IN ('schema_version', 'package_version', 'options')")
    )
    schema = facts.get("schema_version")
    if schema is None and ":" in facts.get("options", ""):
        schema = facts["options"].partition(":")[0]
    return schema, facts.get("package_version")


def check_index(path: Path) -> None:
    """Raise sqlite3.DatabaseError unless `path` is an index whose pages and build facts can be read, OtherSchema
    when it is one of another schema version (an index from another package version of the same schema is fine)."""
    conn = open_read_only(path)
    try:
        schema, package = stored_versions(conn)
        if schema is not None and schema != FORMAT_VERSION:
            raise OtherSchema(schema, package)
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
