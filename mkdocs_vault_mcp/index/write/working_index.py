"""The writer's side of the working index: its connection and the build's one transaction, on the writer's thread
or in its process (writes.py runs it there; a sqlite3 connection must not cross threads).

A page comes in as a `RenderedPage` and is made into its `Document` here, where the writes run, and the document
into rows by index/write/rows.py.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ... import __version__
from ...instants import now_micros
from ...page.model import IndexedFields, RenderedPage
from ...page.paths import site_base_path
from ..publish import is_corrupt
from ..query.agent_pages import keep_markdown_copies
from ..schema import FORMAT_VERSION, TABLES, create_schema
from .resolve import count_linking_pages, files_digest, mark_listed, mark_nav, resolve_links, set_digest
from .rows import delete_document, insert_document, insert_source
from .summary_request import SummaryRequest as SummaryRequest  # plugin.py imports it from here

if TYPE_CHECKING:
    from .build_summary import BuildSummary


class IndexBusy(sqlite3.OperationalError):
    """Another build holds the working index (SQLite's lock), past the time a build waits for it."""


# How long a build waits for another build that holds the working index (SQLite's busy timeout).
BUSY_MILLISECONDS = 5_000


def _is_busy(error: sqlite3.Error) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "database is locked" in str(error)


@dataclass(frozen=True)
class CommitSettings:
    """What a commit writes beside the pages (IndexWriter.commit's keyword arguments)."""

    indexed_fields: IndexedFields
    site_name: str
    site_url: str | None
    # every file of the site by its server path (paths.server_path), which links are resolved against
    site_files: dict[str, str] | None = None
    nav: set[str] | None = None  # the paths of the pages the nav lists
    # what to read from the committed index for the build to publish (build_summary.read_build_summary), if any
    summary: SummaryRequest | None = None
    # on a site whose versions mike publishes, the path their folders are in (resolve.SiteFiles)
    version_base: str | None = None
    site_version: str | None = None  # the version the site is built as (mike's, or the `site_version` option)
    semantic: dict[str, str] | None = None  # semantic.store_vectors' (the model and the cache file), or None
    # how many generated pages (a blog's index, archive, categories) list each page, by its path, if known
    listed: dict[str, int] | None = None
    # whether the files for agents will want every page's Markdown: the writer converts it after the commit
    markdown_copies: bool = False


# A page whose content HTML is longer than this gives back the memory its document took (give_memory_back).
LARGE_PAGE_CHARS = 1_000_000


def give_memory_back() -> None:
    """Return to the system what the process freed: glibc keeps freed blocks in each thread's pool, and a huge
    page's sections, freed, would stay resident under the build's next peaks. Nothing where there is no glibc."""
    import ctypes  # only for a large page: the build's own process imports this module

    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError, TypeError):  # not glibc (musl, macOS, Windows)
        return


class WorkingIndex:
    """The working index's connection and the build's one transaction."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.live_readers = False

    def open(self, options: str, live_readers: bool) -> tuple[dict[str, str], dict[str, str], str | None]:
        """Begin the build's transaction; (fingerprints, languages, the damage that made a new index or None)."""
        self.live_readers = live_readers
        try:
            return *self._open_as_is(options), None
        except sqlite3.DatabaseError as error:
            if not is_corrupt(error):
                raise
            return *self.discard_and_open(options), str(error)

    def discard_and_open(self, options: str) -> tuple[dict[str, str], dict[str, str]]:
        """The working index is a cache: a damaged one is thrown away, never repaired."""
        self.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)
        return self._open_as_is(options)

    def _open_as_is(self, options: str) -> tuple[dict[str, str], dict[str, str]]:
        try:
            return self._begin(options)
        except sqlite3.OperationalError as error:
            if not _is_busy(error):
                raise
            self.close()
            raise IndexBusy(
                f"another build is writing the working index {self.path}, and it was still writing after "
                f"{BUSY_MILLISECONDS // 1000} seconds: an `mkdocs build` or `mkdocs serve` of this site, or an "
                "`mkdocs-vault-mcp index`, with the same cache_dir. Build again once it has ended, or give each "
                "build a cache_dir of its own"
            ) from None

    def _begin(self, options: str) -> tuple[dict[str, str], dict[str, str]]:
        self._changed: set[str] = set()  # paths put or removed in this build's transaction
        self._sections_added = 0  # sections put less sections deleted in this transaction
        self._recount: set[str] = set()  # pages whose incoming links may have changed
        self._connect()
        if self._info("options") != options:
            self._recreate()
        self.conn.execute("BEGIN IMMEDIATE")
        self._write_info(options=options)
        fingerprints, languages = {}, {}
        for path, fingerprint, language in self.conn.execute("SELECT path, fingerprint, language FROM documents"):
            fingerprints[path] = fingerprint
            languages[path] = language
        return fingerprints, languages

    def _connect(self) -> None:
        self.conn = sqlite3.connect(self.path, isolation_level=None)
        # Live readers need the write-ahead log, to read the last commit while the next one is written. Without
        # them, a rollback journal writes a first build's pages once, where the log writes them twice (into the
        # log, then into the file at the checkpoint), which makes the commit and publishing slower.
        self.conn.execute(f"PRAGMA journal_mode = {'WAL' if self.live_readers else 'DELETE'}")
        self.conn.execute("PRAGMA synchronous = NORMAL")
        # FTS5 merges its segments through the page cache: one larger than SQLite's default makes a first build's
        # writes faster. It fills only as far as the index is large.
        self.conn.execute("PRAGMA cache_size = -65536")
        self.conn.execute(f"PRAGMA busy_timeout = {BUSY_MILLISECONDS}")

    def _info(self, key: str) -> str | None:
        try:
            row = self.conn.execute("SELECT value FROM info WHERE key = ?", [key]).fetchone()
        except sqlite3.OperationalError:
            return None
        return row[0] if row else None

    def _has_table(self, name: str) -> bool:
        return (
            self.conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [name]).fetchone()
            is not None
        )

    def _write_info(self, **values: str) -> None:
        self.conn.executemany("INSERT OR REPLACE INTO info (key, value) VALUES (?, ?)", values.items())

    def _recreate(self) -> None:
        for table in TABLES:
            self.conn.execute(f"DROP TABLE IF EXISTS [{table}]")
        # The dropped tables' pages would stay in the file as free pages, and be published with it: what the old
        # options named (an absolute docs_dir, in an index of an earlier version) included.
        self.conn.execute("VACUUM")
        create_schema(self.conn)

    def put(self, page: RenderedPage, indexed_fields: IndexedFields) -> None:
        """Make the page's document and insert or replace it."""
        # Imported where documents are made (the writer's process or thread): a build's own thread never loads
        # the HTML parsing, whose regular expressions and classes are a large part of the plugin's import.
        from ...page.documents import build_document

        document = build_document(page, indexed_fields)
        self._changed.add(document.path)
        self._delete(document.path)
        self._sections_added += len(document.sections)
        document_id = insert_document(self.conn, document)
        content, markdown = document.content, document.markdown
        del document  # its sections: a long page's source is read and written without them beside it
        if len(content) > LARGE_PAGE_CHARS:
            give_memory_back()
        if page.source_file is not None:
            # As MkDocs reads it (File.content_string); a file gone or no longer UTF-8 since MkDocs read it leaves
            # what MkDocs read in its place.
            with contextlib.suppress(OSError, ValueError):
                markdown = Path(page.source_file).read_text(encoding="utf-8-sig")
        insert_source(self.conn, document_id, content, markdown)

    def _delete(self, path: str) -> None:
        deleted = delete_document(self.conn, path)
        self._sections_added -= deleted.sections
        self._recount |= deleted.link_targets

    def delete_all(self, paths: list[str]) -> None:
        self._changed.update(paths)
        for path in paths:
            self._delete(path)

    def commit(self, settings: CommitSettings) -> BuildSummary | None:
        # A digest of the site's files and of the nav: when neither changed (a rebuild after one saved page),
        # neither table is read whole.
        if settings.site_files is not None:
            base = site_base_path(settings.site_url)
            digest = files_digest(settings.site_files, settings.version_base, base)
            self._recount |= resolve_links(
                self.conn,
                settings.site_files,
                self._changed,
                same_files=self._info("site_files") == digest,
                version_base=settings.version_base,
                base=base,
            )
            self._write_info(site_files=digest)
            if settings.listed is not None:
                self._recount |= mark_listed(self.conn, settings.listed, set(settings.site_files.values()))
            count_linking_pages(self.conn, self._recount | self._changed)
        if settings.nav is not None:
            digest = set_digest(settings.nav)
            mark_nav(self.conn, settings.nav, self._changed if self._info("nav") == digest else None)
            self._write_info(nav=digest)
        pages_changed = bool(self._changed)
        self._changed, self._recount = set(), set()
        if settings.indexed_fields == "auto":
            fields = [row[0] for row in self.conn.execute("SELECT DISTINCT field FROM field_values ORDER BY field")]
        else:
            fields = sorted(settings.indexed_fields)
        self._write_info(
            indexed_fields=json.dumps(fields),
            # Kept by the count of what this transaction added and deleted: exact, and no scan of `sections`.
            section_count=str(int(self._info("section_count") or 0) + self._sections_added),
            site_name=settings.site_name,
            site_url=settings.site_url or "",
            site_version=settings.site_version or "",
            built_at=str(now_micros()),
            # What `serve` checks before it reads an index: the schema must be the one it reads.
            schema_version=FORMAT_VERSION,
            package_version=__version__,
        )
        self._sections_added = 0
        self._store_vectors(settings.semantic, pages_changed)
        self.conn.execute("COMMIT")
        if settings.markdown_copies:
            keep_markdown_copies(self.conn, self.path)
        # The page cache (cache_size) is given back: the connection then waits for the next build, which may be
        # none, while the build goes on writing the site with what memory is left.
        self.conn.execute("PRAGMA shrink_memory")
        if settings.summary is None:
            return None
        # Here, beside MkDocs rendering the templates, rather than on the build's thread once it waits for the
        # commit; imported here because the build's own process imports this module (plugin.py, writer.py) and
        # never loads the queries.
        from .build_summary import read_build_summary

        return read_build_summary(self.conn, settings.summary)

    def _store_vectors(self, semantic: dict[str, str] | None, pages_changed: bool) -> None:
        """semantic.store_vectors, on the writer's side (embedding the sections a first build adds can take minutes),
        imported only when there are vectors to make or to drop: a build without meaning never loads search by
        meaning."""
        if semantic is not None or self._has_table("section_vectors"):
            from ..search.semantic import store_vectors

            store_vectors(self.conn, semantic, pages_changed)

    def close(self) -> None:
        if getattr(self, "conn", None) is not None:
            try:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
            except sqlite3.DatabaseError as error:
                if not is_corrupt(error):
                    raise
            finally:
                self.conn.close()
                del self.conn  # a connection while there is one: closed, none until _connect
