"""A page's rows in the index, both ways: a `Document` written into the tables (`insert_document`, `insert_source`,
`delete_document`), and the `RenderedPage` read back from them (`rendered_page_from_rows`).

The one place that knows which column holds which of a page's values; the writer (working_index.py) runs it in
the build's transaction.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from ...instants import EPOCH, to_micros
from ...page.model import RenderedPage, commits_of_rows
from .. import cjk

if TYPE_CHECKING:
    from ...page.documents import Document

# Bound variables per statement: SQLite allows 999 before 3.32 (32,766 since).
STATEMENT_VARIABLES = 999


def insert_rows(conn: sqlite3.Connection, table_and_columns: str, rows: list[tuple[Any, ...]]) -> None:
    """Insert `rows` (tuples, one value per column) with one statement per 999 values, in order: executemany
    runs the statement once per row, and on the writer thread each run gives the GIL up and takes it back, each
    time waiting for MkDocs' rendering to hand it over."""
    if not rows:
        return
    width = len(rows[0])
    per_statement = max(1, STATEMENT_VARIABLES // width)
    row_marks = "(" + ", ".join("?" * width) + ")"
    for start in range(0, len(rows), per_statement):
        chunk = rows[start : start + per_statement]
        conn.execute(
            f"INSERT INTO {table_and_columns} VALUES {', '.join([row_marks] * len(chunk))}",
            [value for row in chunk for value in row],
        )


def insert_document(conn: sqlite3.Connection, document: Document) -> int:
    """Write the document's rows but its source (insert_source, next), none of its path may be there
    (delete_document first); return its id. Apart, a huge page's source is read and written once its sections are
    no longer held."""
    cursor = conn.execute(
        "INSERT INTO documents (path, folder, url, title, summary, meta, headings,"
        " modified, modified_source, fingerprint, language, fallback_of)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            document.path,
            document.folder,
            document.url,
            document.title,
            document.summary,
            json.dumps(document.meta, ensure_ascii=False),
            json.dumps(document.headings, ensure_ascii=False),
            to_micros(document.modified),
            document.modified_source,
            document.fingerprint,
            document.language,
            document.fallback_of,
        ],
    )
    document_id = cursor.lastrowid
    assert document_id is not None  # an INSERT's
    insert_sections(conn, document_id, document)
    insert_rows(
        conn,
        "field_values (field, value, document_id)",
        [(name, value, document_id) for name, values in document.values.items() for value in values],
    )
    insert_rows(
        conn,
        "links (document_id, position, text, url, target, anchor, host, written)",
        [
            (document_id, link.position, link.text, link.url, link.target, link.anchor, link.host, link.written)
            for link in document.links
        ],
    )
    conn.execute(
        "INSERT INTO pages (document_id, anchors, in_nav, history) VALUES (?, ?, 0, ?)",
        [document_id, "\n".join(document.anchors), json.dumps(document.history, ensure_ascii=False)],
    )
    return document_id


def insert_source(conn: sqlite3.Connection, document_id: int, content: str, markdown: str) -> None:
    """The page's text (its content HTML and Markdown source): the row insert_document leaves out."""
    conn.execute(
        "INSERT INTO sources (document_id, content, markdown) VALUES (?, ?, ?)", [document_id, content, markdown]
    )


def insert_sections(conn: sqlite3.Connection, document_id: int | None, document: Document) -> None:
    """The document's searched rows, one a section."""
    # The FTS5 columns hold CJK text one character a token (index/cjk.py); page-level text once a page.
    path, summary = cjk.separate(document.path), cjk.separate(document.summary)
    searched_title = cjk.separate(document.searched_title)
    insert_rows(
        conn,
        "sections (document_id, position, level, anchor, heading, start, path, title, headings, summary, body)",
        [
            (
                document_id,
                position,
                section.level,
                section.anchor,
                section.heading,
                section.start,
                path,
                searched_title,
                cjk.separate(section.trail),
                summary,
                cjk.separate(section.body),
            )
            for position, section in enumerate(document.sections)
        ],
    )


class Deleted(NamedTuple):
    """What deleting a page's rows took away that the rest of the index counts."""

    sections: int  # how many sections it had (the index keeps their count)
    link_targets: set[str]  # the pages it linked to, whose incoming links are counted again


def delete_document(conn: sqlite3.Connection, path: str) -> Deleted:
    """Remove every row of the page at `path`, if the index holds it."""
    row = conn.execute("SELECT id FROM documents WHERE path = ?", [path]).fetchone()
    if row is None:
        return Deleted(0, set())
    sections = conn.execute("DELETE FROM sections WHERE document_id = ?", row).rowcount
    conn.execute("DELETE FROM field_values WHERE document_id = ?", row)
    conn.execute("DELETE FROM sources WHERE document_id = ?", row)
    targets = {
        target
        for (target,) in conn.execute(
            "SELECT DISTINCT target_path FROM links WHERE document_id = ? AND target_path IS NOT NULL", row
        )
    }
    conn.execute("DELETE FROM links WHERE document_id = ?", row)
    conn.execute("DELETE FROM pages WHERE document_id = ?", row)
    conn.execute("DELETE FROM documents WHERE id = ?", row)
    return Deleted(sections, targets)


def rendered_page_from_rows(conn: sqlite3.Connection, path: str) -> RenderedPage | None:
    """The page at `path` as the index holds it, or None.

    Its `html` is the content the index keeps (documents.page_content: without permalinks and search-excluded
    blocks), which makes the same document again; `page_path` is its address's path (what the plugin and
    `index SITE_DIR` both resolve its links against); `source_file` is None, the source being `markdown`."""
    row = conn.execute(
        "SELECT d.url, d.title, s.content, d.meta, d.modified, d.modified_source, s.markdown, d.fingerprint,"
        " d.language, d.fallback_of, p.history FROM documents d JOIN sources s ON s.document_id = d.id"
        " JOIN pages p ON p.document_id = d.id WHERE d.path = ?",
        [path],
    ).fetchone()
    if row is None:
        return None
    url, title, content, meta, modified, modified_source, markdown, fingerprint, language, fallback_of, history = row
    site_url = conn.execute("SELECT value FROM info WHERE key = 'site_url'").fetchone()
    return RenderedPage(
        path=path,
        url=url,
        title=title,
        html=content,
        meta=json.loads(meta),
        modified=EPOCH + dt.timedelta(microseconds=modified),
        modified_source=modified_source,
        markdown=markdown,
        fingerprint=fingerprint,
        language=language,
        fallback_of=fallback_of,
        page_path=urlsplit(url).path,
        site_url=(site_url[0] or None) if site_url else None,
        history=commits_of_rows(json.loads(history or "[]")),
    )


def stored_paths(conn: sqlite3.Connection) -> list[str]:
    """The path of every page the index holds, in order."""
    return [path for (path,) in conn.execute("SELECT path FROM documents ORDER BY path")]
