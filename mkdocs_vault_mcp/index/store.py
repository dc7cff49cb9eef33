"""The index file: its schema, how the build writes it, and how readers open it.

One SQLite file per working index. `documents` holds one row per page,
`sections` one row per heading section (kept in step with the FTS5 table
`sections_fts` by triggers), `field_values` one row per normalized front
matter value, `info` the build's facts (options digest, site name, ...).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import tempfile
from pathlib import Path

import sqlite_utils

from ..documents import Document

# Bump when the schema or what goes into it changes: every page is indexed again.
FORMAT_VERSION = "1"
TOKENIZER = "porter unicode61 remove_diacritics 2"
FTS_COLUMNS = ("path", "title", "headings", "summary", "body")


def to_micros(instant: dt.datetime) -> int:
    delta = instant.astimezone(dt.timezone.utc) - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def create_schema(db: sqlite_utils.Database) -> None:
    db["info"].create({"key": str, "value": str}, pk="key", not_null={"value"}, if_not_exists=True)
    db["documents"].create(
        {
            "id": int,
            "path": str,
            "folder": str,
            "url": str,
            "title": str,
            "summary": str,
            "meta": str,  # JSON object
            "headings": str,  # JSON list
            "markdown": str,
            "modified": int,  # microseconds since the epoch, UTC
            "modified_source": str,
            "fingerprint": str,
        },
        pk="id",
        not_null={"path", "folder", "url", "title", "summary", "meta", "headings", "markdown", "modified"},
        if_not_exists=True,
    )
    db["documents"].create_index(["path"], unique=True, if_not_exists=True)
    db["documents"].create_index(["folder", "path"], if_not_exists=True)
    db["documents"].create_index(["modified", "path"], if_not_exists=True)
    db["sections"].create(
        {
            "id": int,
            "document_id": int,
            "position": int,
            "level": int,
            "anchor": str,
            "path": str,
            "title": str,
            "headings": str,  # the heading trail, "Install > From PyPI"
            "summary": str,
            "body": str,
        },
        pk="id",
        foreign_keys=[("document_id", "documents", "id")],
        if_not_exists=True,
    )
    db["sections"].create_index(["document_id", "position"], if_not_exists=True)
    db["field_values"].create(
        {"field": str, "value": str, "document_id": int},
        pk=("field", "value", "document_id"),
        if_not_exists=True,
    )
    db["field_values"].create_index(["document_id"], if_not_exists=True)
    if not db["sections_fts"].exists():
        db["sections"].enable_fts(FTS_COLUMNS, fts_version="FTS5", tokenize=TOKENIZER, create_triggers=True)


class IndexWriter:
    """One build's writes, in one transaction: readers see the old index until `commit`."""

    def __init__(self, path: Path, options_digest: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self.conn.execute("PRAGMA busy_timeout = 5000")
        digest = f"{FORMAT_VERSION}:{options_digest}"
        if self._info("options") != digest:
            self._recreate()
        self.conn.execute("BEGIN IMMEDIATE")
        self._write_info(options=digest)
        self.rebuilt_all = self._info("documents_written") is None
        self.fingerprints = dict(self.conn.execute("SELECT path, fingerprint FROM documents"))

    def _info(self, key: str) -> str | None:
        try:
            row = self.conn.execute("SELECT value FROM info WHERE key = ?", [key]).fetchone()
        except sqlite3.OperationalError:
            return None
        return row[0] if row else None

    def _write_info(self, **facts: str) -> None:
        self.conn.executemany("INSERT OR REPLACE INTO info (key, value) VALUES (?, ?)", facts.items())

    def _recreate(self) -> None:
        for table in ("sections_fts", "sections", "field_values", "documents", "info"):
            self.conn.execute(f"DROP TABLE IF EXISTS [{table}]")
        create_schema(sqlite_utils.Database(self.conn))

    def put(self, document: Document) -> None:
        """Insert or replace one page with its sections and values."""
        self.delete(document.path)
        cursor = self.conn.execute(
            "INSERT INTO documents (path, folder, url, title, summary, meta, headings, markdown,"
            " modified, modified_source, fingerprint) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                document.path,
                document.folder,
                document.url,
                document.title,
                document.summary,
                json.dumps(document.meta, ensure_ascii=False),
                json.dumps(document.headings, ensure_ascii=False),
                document.markdown,
                to_micros(document.modified),
                document.modified_source,
                document.fingerprint,
            ],
        )
        document_id = cursor.lastrowid
        self.conn.executemany(
            "INSERT INTO sections (document_id, position, level, anchor, path, title, headings, summary, body)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    document_id,
                    position,
                    section.level,
                    section.anchor,
                    document.path,
                    document.title,
                    section.trail,
                    document.summary,
                    section.body,
                )
                for position, section in enumerate(document.sections)
            ],
        )
        self.conn.executemany(
            "INSERT INTO field_values (field, value, document_id) VALUES (?, ?, ?)",
            [(name, value, document_id) for name, values in document.values.items() for value in values],
        )
        self.fingerprints[document.path] = document.fingerprint

    def delete(self, path: str) -> bool:
        row = self.conn.execute("SELECT id FROM documents WHERE path = ?", [path]).fetchone()
        if row is None:
            return False
        self.conn.execute("DELETE FROM sections WHERE document_id = ?", row)
        self.conn.execute("DELETE FROM field_values WHERE document_id = ?", row)
        self.conn.execute("DELETE FROM documents WHERE id = ?", row)
        self.fingerprints.pop(path, None)
        return True

    def keep_only(self, paths: set[str]) -> int:
        """Remove every document whose path is not in `paths`; return how many went."""
        gone = [path for path in self.fingerprints if path not in paths]
        for path in gone:
            self.delete(path)
        return len(gone)

    def commit(self, *, indexed_fields: str | list[str], site_name: str, site_url: str | None) -> None:
        if indexed_fields == "auto":
            fields = [row[0] for row in self.conn.execute("SELECT DISTINCT field FROM field_values ORDER BY field")]
        else:
            fields = sorted(indexed_fields)
        self._write_info(
            indexed_fields=json.dumps(fields),
            site_name=site_name,
            site_url=site_url or "",
            built_at=str(to_micros(dt.datetime.now(dt.timezone.utc))),
            documents_written="yes",
        )
        self.conn.execute("COMMIT")

    def rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    def close(self) -> None:
        self.rollback()
        self.conn.close()


def publish(working: Path, destination: Path) -> None:
    """Copy the committed index to `destination` whole or not at all (a reader never sees half a file)."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=destination.parent, prefix=".index-", suffix=".tmp")
    os.close(handle)
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
        Path(temporary).unlink(missing_ok=True)
        raise


def open_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot write; one per thread (sqlite3 connections must not cross threads)."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    conn.execute("PRAGMA query_only = ON")
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn
