"""The index's schema: which tables a working index holds and what each column means.

One SQLite file per working index. `documents` holds one row per page, `sources` its text, `sections` one row
per heading section (kept in step with the FTS5 table `sections_fts` by triggers), `field_values` one row per
normalized front matter value, `links`, `pages` and `site_files` what links and the nav say, `info` the build's
facts (the options it was built with, site name, section count, schema and package versions, ...). Instants are
stored as instants.to_micros encodes them.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

# Bump when the schema or what goes into it changes: every page is indexed again, and `serve` refuses an index of
# another version (info `schema_version`; the prefix of info `options` in an index that predates that row).
FORMAT_VERSION = "11"
TOKENIZER = "porter unicode61 remove_diacritics 2"
FTS_COLUMNS = ("path", "title", "headings", "summary", "body")
# Every table a working index holds, the dependent ones first (the order to drop them in). `section_vectors`
# (index/search/semantic.py) only when the plugin's option semantic is on.
TABLES = (
    "section_vectors",
    "sections_vocab",
    "sections_fts",
    "sections",
    "field_values",
    "sources",
    "links",
    "pages",
    "site_files",
    "documents",
    "info",
)


# Plain DDL rather than sqlite-utils' table builder: a first build creates it on every site, and importing and
# running the builder would cost a small site's build more than the rest of the plugin's work.
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS "info" (
   "key" TEXT PRIMARY KEY,
   "value" TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS "documents" (
   "id" INTEGER PRIMARY KEY,
   "path" TEXT NOT NULL,
   "folder" TEXT NOT NULL,
   "url" TEXT NOT NULL,
   "title" TEXT NOT NULL,
   "summary" TEXT NOT NULL,
   "meta" TEXT NOT NULL,  -- JSON object
   "headings" TEXT NOT NULL,  -- JSON list
   "modified" INTEGER NOT NULL,  -- microseconds since the epoch, UTC
   "modified_source" TEXT,
   "fingerprint" TEXT,
   "language" TEXT NOT NULL,  -- the locale the page is published in
   "fallback_of" TEXT  -- NULL, or the path of the default-language page a fallback copy repeats
);
-- The page's text for read, many times a row's other fields, has a table of its own: filters and groupings scan
-- `documents`, and its rows stay narrow so that a scan reads a few pages, not the whole site. `content` is the
-- rendered HTML that the sections are cut from; `markdown` the source file's text.
CREATE TABLE IF NOT EXISTS "sources" (
   "document_id" INTEGER PRIMARY KEY REFERENCES "documents"("id"),
   "content" TEXT NOT NULL,
   "markdown" TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS "idx_documents_path" ON "documents" ("path");
-- Covers the fingerprints every build reads first.
CREATE INDEX IF NOT EXISTS "idx_documents_path_fingerprint" ON "documents" ("path", "fingerprint");
CREATE INDEX IF NOT EXISTS "idx_documents_folder_path" ON "documents" ("folder", "path");
-- One index per listing order (get_recent, query_documents' sort and order; ties by path ascending), alone and
-- after a language, in the directions it reads: an index read backwards reverses the tie too, and pages that share
-- a date (every page of a fresh checkout) would otherwise be sorted whole before the first row.
CREATE INDEX IF NOT EXISTS "idx_documents_modified_path" ON "documents" ("modified", "path");
CREATE INDEX IF NOT EXISTS "idx_documents_modified_desc_path" ON "documents" ("modified" DESC, "path");
CREATE INDEX IF NOT EXISTS "idx_documents_title_path" ON "documents" ("title", "path");
CREATE INDEX IF NOT EXISTS "idx_documents_title_desc_path" ON "documents" ("title" DESC, "path");
CREATE INDEX IF NOT EXISTS "idx_documents_language_path" ON "documents" ("language", "path");
CREATE INDEX IF NOT EXISTS "idx_documents_language_modified_path" ON "documents" ("language", "modified", "path");
CREATE INDEX IF NOT EXISTS "idx_documents_language_modified_desc_path"
  ON "documents" ("language", "modified" DESC, "path");
CREATE INDEX IF NOT EXISTS "idx_documents_language_title_path" ON "documents" ("language", "title", "path");
CREATE INDEX IF NOT EXISTS "idx_documents_language_title_desc_path" ON "documents" ("language", "title" DESC, "path");
-- Only fallback copies (mkdocs-static-i18n) have one: `search` asks whether there are any.
CREATE INDEX IF NOT EXISTS documents_fallback_of ON documents (fallback_of) WHERE fallback_of IS NOT NULL;
CREATE TABLE IF NOT EXISTS "sections" (
   "id" INTEGER PRIMARY KEY,
   "document_id" INTEGER REFERENCES "documents"("id"),
   "position" INTEGER,
   "level" INTEGER,
   "anchor" TEXT,
   "heading" TEXT,  -- as the page shows it
   "start" INTEGER,  -- where the section begins in sources.content
   "path" TEXT,
   "title" TEXT,  -- the title as search weighs it (Document.searched_title)
   "headings" TEXT,  -- the heading trail, "Install > From PyPI"
   "summary" TEXT,
   "body" TEXT
);
CREATE INDEX IF NOT EXISTS "idx_sections_document_id_position" ON "sections" ("document_id", "position");
CREATE TABLE IF NOT EXISTS "field_values" (
   "field" TEXT,
   "value" TEXT,
   "document_id" INTEGER,
   PRIMARY KEY ("field", "value", "document_id")
);
CREATE INDEX IF NOT EXISTS "idx_field_values_document_id" ON "field_values" ("document_id");
-- Which pages have a value of a field, in page order: tag grouping counts the pages without one.
CREATE INDEX IF NOT EXISTS "idx_field_values_field_document_id" ON "field_values" ("field", "document_id");
-- The sections' text for search, kept in step with `sections` by the triggers below.
CREATE VIRTUAL TABLE IF NOT EXISTS "sections_fts" USING FTS5 (
    {", ".join(f'"{column}"' for column in FTS_COLUMNS)},
    tokenize='{TOKENIZER}',
    content="sections"
);
CREATE TRIGGER IF NOT EXISTS "sections_ai" AFTER INSERT ON "sections" BEGIN
  INSERT INTO "sections_fts" (rowid, "path", "title", "headings", "summary", "body")
  VALUES (new.rowid, new."path", new."title", new."headings", new."summary", new."body");
END;
CREATE TRIGGER IF NOT EXISTS "sections_ad" AFTER DELETE ON "sections" BEGIN
  INSERT INTO "sections_fts" ("sections_fts", rowid, "path", "title", "headings", "summary", "body")
  VALUES('delete', old.rowid, old."path", old."title", old."headings", old."summary", old."body");
END;
CREATE TRIGGER IF NOT EXISTS "sections_au" AFTER UPDATE ON "sections" BEGIN
  INSERT INTO "sections_fts" ("sections_fts", rowid, "path", "title", "headings", "summary", "body")
  VALUES('delete', old.rowid, old."path", old."title", old."headings", old."summary", old."body");
  INSERT INTO "sections_fts" (rowid, "path", "title", "headings", "summary", "body")
  VALUES (new.rowid, new."path", new."title", new."headings", new."summary", new."body");
END;
-- Links, anchors, nav membership and git history.
-- One row per link of a page's content. `target` is what the page points at (links.Link); `target_path` and
-- `broken` are worked out when a build commits, against every file of the site as it is then.
CREATE TABLE IF NOT EXISTS "links" (
   "document_id" INTEGER REFERENCES "documents"("id"),
   "position" INTEGER,  -- the section of the linking page it sits in
   "text" TEXT,
   "url" TEXT,
   "target" TEXT,  -- a server path, a .md path MkDocs left unresolved, or null (external)
   "anchor" TEXT,
   "host" TEXT,  -- external links
   "written" TEXT,  -- a relative link as written, from the page's file: what a broken link names
   "target_path" TEXT,  -- the src_uri of the file at target, null when there is none
   "broken" TEXT  -- null, "page" (nothing at target) or "anchor" (the page has no such id)
);
CREATE INDEX IF NOT EXISTS "idx_links_document_id_position" ON "links" ("document_id", "position");
CREATE INDEX IF NOT EXISTS "idx_links_target_path_anchor" ON "links" ("target_path", "anchor");
CREATE INDEX IF NOT EXISTS "idx_links_broken" ON "links" ("broken");
CREATE INDEX IF NOT EXISTS "idx_links_host" ON "links" ("host");
CREATE INDEX IF NOT EXISTS "idx_links_target" ON "links" ("target");
-- Every file of the site (pages, generated pages, static files) by its server path, as the last build had them:
-- a commit re-resolves only the links whose target changed since.
CREATE TABLE IF NOT EXISTS "site_files" (
   "url" TEXT PRIMARY KEY,
   "path" TEXT NOT NULL
);
-- The number of sections that hold each term, for "more like this" (index/query/related.py); no storage of its own.
CREATE VIRTUAL TABLE IF NOT EXISTS sections_vocab USING fts5vocab(sections_fts, row);
CREATE TABLE IF NOT EXISTS "pages" (
   "document_id" INTEGER PRIMARY KEY REFERENCES "documents"("id"),
   "anchors" TEXT NOT NULL,  -- every id of the page, one per line
   "in_nav" INTEGER NOT NULL,  -- 1 when the site's nav lists the page, as of the last build
   "linked_from" INTEGER DEFAULT 0,  -- how many other pages link to it, kept up to date by each commit
   "listed_from" INTEGER DEFAULT 0,  -- of them, the generated pages listing it (a blog's index, archive, categories)
   "history" TEXT NOT NULL  -- JSON list of its last commits, newest first
);
CREATE INDEX IF NOT EXISTS "idx_pages_linked_from" ON "pages" ("linked_from");
"""


def create_schema(conn: sqlite3.Connection) -> None:
    """Every table, index and trigger of an index, in one transaction (`conn` in autocommit mode)."""
    conn.executescript(f"BEGIN;\n{SCHEMA}\nCOMMIT;")


def index_version(conn: sqlite3.Connection) -> tuple[str, str] | None:
    """What the index's last commit wrote, as `info` names it: its commit time (in microseconds) and section count.
    What is read from one version never changes, so answers may be kept for it. None for an index that does not
    say (one written before the section count was kept)."""
    facts = dict(conn.execute("SELECT key, value FROM info WHERE key IN ('built_at', 'section_count')"))
    if len(facts) < 2:
        return None
    return facts["built_at"], facts["section_count"]


Kept = TypeVar("Kept")


class KeptPerVersion(Generic[Kept]):
    """What was read from an index version, kept for the server's reading threads (which share it): the `limit`
    newest keys, the oldest dropped first. A key is an index_version, alone or with what else the value depends on."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._kept: dict[Hashable, Kept] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], Kept]) -> Kept:
        """The value kept for `key`, made (once, whichever thread asks first) when there is none."""
        with self._lock:
            value = self._kept.get(key)
            if value is None:
                while len(self._kept) >= self.limit:
                    del self._kept[next(iter(self._kept))]
                value = self._kept[key] = make()
            return value

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
