"""The index's schema: which tables a working index holds and what each column means.

One SQLite file per working index. `documents` holds one row per page, `sources` its text, `sections` one row
per heading section (kept in step with the FTS5 table `sections_fts` by triggers), `field_values` one row per
normalized front matter value, `links`, `pages` and `site_files` what links and the nav say, `info` the build's
facts (the options it was built with, site name, section count, ...). Instants are stored as instants.to_micros
encodes them.
"""

from __future__ import annotations

import sqlite3
from typing import Any

# Bump when the schema or what goes into it changes: every page is indexed again.
FORMAT_VERSION = "9"
TOKENIZER = "porter unicode61 remove_diacritics 2"
FTS_COLUMNS = ("path", "title", "headings", "summary", "body")
# Every table a working index holds, the dependent ones first (the order to drop them in).
TABLES = ("sections_vocab", "sections_fts", "sections", "field_values", "sources", "links", "pages", "site_files",
          "documents", "info")


def create_schema(conn: sqlite3.Connection) -> None:
    # Imported here: only the build writes a schema, and serving should not pay for the import.
    import sqlite_utils

    db = sqlite_utils.Database(conn)
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
            "modified": int,  # microseconds since the epoch, UTC
            "modified_source": str,
            "fingerprint": str,
            "language": str,  # the locale the page is published in
            "fallback_of": str,  # NULL, or the path of the default-language page a fallback copy repeats
        },
        pk="id",
        not_null={"path", "folder", "url", "title", "summary", "meta", "headings", "modified", "language"},
        if_not_exists=True,
    )
    # The page's text for read, many times a row's other fields, has a table of its own: filters and
    # groupings scan `documents`, and its rows stay narrow so that a scan reads a few pages, not the whole site.
    # `content` is the rendered HTML that the sections are cut from; `markdown` the source file's text.
    db["sources"].create(
        {"document_id": int, "content": str, "markdown": str},
        pk="document_id",
        foreign_keys=[("document_id", "documents", "id")],
        not_null={"content", "markdown"},
        if_not_exists=True,
    )
    db["documents"].create_index(["path"], unique=True, if_not_exists=True)
    # Covers the fingerprints every build reads first.
    db["documents"].create_index(["path", "fingerprint"], if_not_exists=True)
    db["documents"].create_index(["folder", "path"], if_not_exists=True)
    db["documents"].create_index(["modified", "path"], if_not_exists=True)
    db["documents"].create_index(["language", "path"], if_not_exists=True)
    # Only fallback copies (mkdocs-static-i18n) have one: `search` asks whether there are any.
    conn.execute(
        "CREATE INDEX IF NOT EXISTS documents_fallback_of ON documents (fallback_of) WHERE fallback_of IS NOT NULL"
    )
    db["sections"].create(
        {
            "id": int,
            "document_id": int,
            "position": int,
            "level": int,
            "anchor": str,
            "heading": str,  # as the page shows it
            "start": int,  # where the section begins in sources.content
            "path": str,
            "title": str,  # the title as search weighs it (Document.searched_title)
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
    # Which pages have a value of a field, in page order: tag grouping counts the pages without one.
    db["field_values"].create_index(["field", "document_id"], if_not_exists=True)
    if not db["sections_fts"].exists():
        db["sections"].enable_fts(FTS_COLUMNS, fts_version="FTS5", tokenize=TOKENIZER, create_triggers=True)
    create_link_schema(db)


def create_link_schema(db: Any) -> None:
    """Links, anchors, nav membership and git history (issue 14)."""
    # One row per link of a page's content. `target` is what the page points at (links.Link); `target_path`
    # and `broken` are worked out when a build commits, against every file of the site as it is then.
    db["links"].create(
        {
            "document_id": int,
            "position": int,  # the section of the linking page it sits in
            "text": str,
            "url": str,
            "target": str,  # a server path, a .md path MkDocs left unresolved, or null (external)
            "anchor": str,
            "host": str,  # external links
            "written": str,  # a relative link as written, from the page's file: what a broken link names
            "target_path": str,  # the src_uri of the file at target, null when there is none
            "broken": str,  # null, "page" (nothing at target) or "anchor" (the page has no such id)
        },
        foreign_keys=[("document_id", "documents", "id")],
        if_not_exists=True,
    )
    db["links"].create_index(["document_id", "position"], if_not_exists=True)
    db["links"].create_index(["target_path", "anchor"], if_not_exists=True)
    db["links"].create_index(["broken"], if_not_exists=True)
    db["links"].create_index(["host"], if_not_exists=True)
    db["links"].create_index(["target"], if_not_exists=True)
    # Every file of the site (pages, generated pages, static files) by its server path, as the last build had
    # them: a commit re-resolves only the links whose target changed since.
    db["site_files"].create({"url": str, "path": str}, pk="url", not_null={"path"}, if_not_exists=True)
    # The number of sections that hold each term, for "more like this" (index/related.py); no storage of its own.
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS sections_vocab USING fts5vocab(sections_fts, row)")
    db["pages"].create(
        {
            "document_id": int,
            "anchors": str,  # every id of the page, one per line
            "in_nav": int,  # 1 when the site's nav lists the page, as of the last build
            "linked_from": int,  # how many other pages link to it, kept up to date by each commit
            "history": str,  # JSON list of its last commits, newest first
        },
        pk="document_id",
        foreign_keys=[("document_id", "documents", "id")],
        not_null={"anchors", "in_nav", "history"},
        defaults={"linked_from": 0},
        if_not_exists=True,
    )
    db["pages"].create_index(["linked_from"], if_not_exists=True)
