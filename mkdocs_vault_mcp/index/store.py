"""The index file: its schema, how the build writes it, and how readers open it.

One SQLite file per working index. `documents` holds one row per page,
`sections` one row per heading section (kept in step with the FTS5 table
`sections_fts` by triggers), `field_values` one row per normalized front
matter value, `info` the build's facts (options digest, site name, ...).
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import logging
import os
import queue
import sqlite3
import secrets
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable


from ..documents import Document
from . import cjk

log = logging.getLogger("mkdocs.plugins.vault-mcp")

# Bump when the schema or what goes into it changes: every page is indexed again.
FORMAT_VERSION = "8"
TOKENIZER = "porter unicode61 remove_diacritics 2"
FTS_COLUMNS = ("path", "title", "headings", "summary", "body")


EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def to_micros(instant: dt.datetime) -> int:
    """Microseconds since the epoch of an aware instant, as the index stores `modified`.

    Exact, and without converting to UTC first: that overflows near year 1 and year 9999.
    """
    return (instant - EPOCH) // dt.timedelta(microseconds=1)


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


class IndexWriter:
    """One build's writes, in one transaction: readers see the old index until `commit`.

    The connection lives on a thread of its own: SQLite releases the GIL while it
    tokenizes and writes, so indexing overlaps with MkDocs rendering the next pages
    on another core. `put` queues a document and returns at once; every other
    method waits for the queue to drain, and raises what a queued write raised.
    """

    def __init__(self, path: Path, options_digest: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._work, name="vault-mcp-index-writer", daemon=True)
        self._thread.start()
        self._digest = f"{FORMAT_VERSION}:{options_digest}"
        try:
            self.fingerprints: dict[str, str] = {}
            self.languages: dict[str, str] = {}  # path -> language, of every stored document
            self._call(self._open, self._digest)
        except BaseException:
            self.close()
            raise

    # -- the calling thread's side --------------------------------------------------------

    def put(self, document: Document) -> None:
        """Insert or replace one page with its sections and values."""
        self.fingerprints[document.path] = document.fingerprint
        self.languages[document.path] = document.language
        self._jobs.put((functools.partial(self._put, document), None))

    def keep_only(self, paths: set[str], languages: set[str] | None = None) -> int:
        """Remove every document whose path is not in `paths`; return how many went.

        With `languages`, only documents of those languages can go (mkdocs-static-i18n builds one language
        at a time, and the others' pages stay), and documents of a language outside `languages` stay too.
        """
        gone = [
            path
            for path in self.fingerprints
            if path not in paths and (languages is None or self.languages[path] in languages)
        ]
        self._remove(gone)
        return len(gone)

    def keep_languages(self, languages: set[str]) -> int:
        """Remove every document of a language outside `languages` (one the site no longer builds)."""
        gone = [path for path, language in self.languages.items() if language not in languages]
        self._remove(gone)
        return len(gone)

    def _remove(self, gone: list[str]) -> None:
        for path in gone:
            del self.fingerprints[path]
            del self.languages[path]
        self._call(self._delete_all, gone)

    def commit(
        self,
        *,
        indexed_fields: str | list[str],
        site_name: str,
        site_url: str | None,
        site_files: dict[str, str] | None = None,
        nav: set[str] | None = None,
    ) -> None:
        """`site_files`: every file of the site by its server path (links.server_path), which links are
        resolved against; `nav`: the paths of the pages the nav lists."""
        self._call(self._commit, indexed_fields, site_name, site_url, site_files, nav)

    def close(self) -> None:
        """Roll back whatever was not committed and stop the writer thread."""
        if self._thread.is_alive():
            self._jobs.put((self._close, None))
            self._jobs.put((None, None))
            self._thread.join()

    def reset(self) -> None:
        """Throw the working index away and start an empty one (after `is_corrupt` said it is damaged)."""
        self.fingerprints, self.languages = {}, {}
        self._call(self._discard_and_open, self._digest)

    def _call(self, job: Callable, *args: Any) -> Any:
        done: Future = Future()
        self._jobs.put((functools.partial(job, *args), done))
        try:
            return done.result()
        finally:
            # A queued write failed before this job ran: that earlier failure is the one to report.
            failure, self._failure = self._failure, None
            if failure is not None:
                raise failure

    # -- the writer thread's side ---------------------------------------------------------

    def _work(self) -> None:
        while True:
            job, done = self._jobs.get()
            if job is None:
                return
            try:
                result = job()
            except BaseException as error:  # handed to the caller, never lost in this thread
                if done is None:
                    self._failure = self._failure or error
                else:
                    done.set_exception(error)
                continue
            if done is not None:
                done.set_result(result)

    def _open(self, digest: str) -> None:
        try:
            return self._open_as_is(digest)
        except sqlite3.DatabaseError as error:
            if not is_corrupt(error):
                raise
            log.info(f"vault-mcp: The working index {self.path} is damaged ({error}); starting a new one")
            return self._discard_and_open(digest)

    def _discard_and_open(self, digest: str) -> None:
        """The working index is a cache: a damaged one is thrown away, never repaired."""
        self._close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)
        return self._open_as_is(digest)

    def _open_as_is(self, digest: str) -> None:
        self._changed: set[str] = set()  # paths put or removed in this build's transaction
        self._recount: set[str] = set()  # pages whose incoming links may have changed
        self._connect()
        if self._info("options") != digest:
            self._recreate()
        self.conn.execute("BEGIN IMMEDIATE")
        self._write_info(options=digest)
        # Filled on this thread while the caller waits for the result: no other thread touches them yet.
        self.fingerprints, self.languages = {}, {}
        for path, fingerprint, language in self.conn.execute("SELECT path, fingerprint, language FROM documents"):
            self.fingerprints[path] = fingerprint
            self.languages[path] = language

    def _connect(self) -> None:
        self.conn = sqlite3.connect(self.path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self.conn.execute("PRAGMA busy_timeout = 5000")

    def _info(self, key: str) -> str | None:
        try:
            row = self.conn.execute("SELECT value FROM info WHERE key = ?", [key]).fetchone()
        except sqlite3.OperationalError:
            return None
        return row[0] if row else None

    def _write_info(self, **facts: str) -> None:
        self.conn.executemany("INSERT OR REPLACE INTO info (key, value) VALUES (?, ?)", facts.items())

    def _recreate(self) -> None:
        for table in ("sections_vocab", "sections_fts", "sections", "field_values", "sources", "links", "pages",
                      "site_files", "documents", "info"):
            self.conn.execute(f"DROP TABLE IF EXISTS [{table}]")
        create_schema(self.conn)

    def _put(self, document: Document) -> None:
        self._changed.add(document.path)
        self._delete(document.path)
        cursor = self.conn.execute(
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
        self.conn.execute(
            "INSERT INTO sources (document_id, content, markdown) VALUES (?, ?, ?)",
            [document_id, document.content, document.markdown],
        )
        # The FTS5 columns hold CJK text one character a token (index/cjk.py); page-level text once a page.
        path, summary = cjk.separate(document.path), cjk.separate(document.summary)
        searched_title = cjk.separate(document.searched_title)
        self.conn.executemany(
            "INSERT INTO sections (document_id, position, level, anchor, heading, start, path, title, headings,"
            " summary, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
        self.conn.executemany(
            "INSERT INTO field_values (field, value, document_id) VALUES (?, ?, ?)",
            [(name, value, document_id) for name, values in document.values.items() for value in values],
        )
        self.conn.executemany(
            "INSERT INTO links (document_id, position, text, url, target, anchor, host, written)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(document_id, link.position, link.text, link.url, link.target, link.anchor, link.host, link.written)
             for link in document.links],
        )
        self.conn.execute(
            "INSERT INTO pages (document_id, anchors, in_nav, history) VALUES (?, ?, 0, ?)",
            [document_id, "\n".join(document.anchors), json.dumps(document.history, ensure_ascii=False)],
        )

    def _delete(self, path: str) -> None:
        row = self.conn.execute("SELECT id FROM documents WHERE path = ?", [path]).fetchone()
        if row is not None:
            self.conn.execute("DELETE FROM sections WHERE document_id = ?", row)
            self.conn.execute("DELETE FROM field_values WHERE document_id = ?", row)
            self.conn.execute("DELETE FROM sources WHERE document_id = ?", row)
            self._recount.update(target for (target,) in self.conn.execute(
                "SELECT DISTINCT target_path FROM links WHERE document_id = ? AND target_path IS NOT NULL", row))
            self.conn.execute("DELETE FROM links WHERE document_id = ?", row)
            self.conn.execute("DELETE FROM pages WHERE document_id = ?", row)
            self.conn.execute("DELETE FROM documents WHERE id = ?", row)

    def _delete_all(self, paths: list[str]) -> None:
        self._changed.update(paths)
        for path in paths:
            self._delete(path)

    def _commit(
        self,
        indexed_fields: str | list[str],
        site_name: str,
        site_url: str | None,
        site_files: dict[str, str] | None = None,
        nav: set[str] | None = None,
    ) -> None:
        # A digest of the site's files and of the nav: when neither changed (a rebuild after one saved page),
        # neither table is read whole.
        if site_files is not None:
            digest = set_digest(site_files)
            self._recount |= resolve_links(
                self.conn, site_files, self._changed, same_files=self._info("site_files") == digest)
            self._write_info(site_files=digest)
            count_linking_pages(self.conn, self._recount | self._changed)
        if nav is not None:
            digest = set_digest(nav)
            mark_nav(self.conn, nav, self._changed if self._info("nav") == digest else None)
            self._write_info(nav=digest)
        self._changed, self._recount = set(), set()
        if indexed_fields == "auto":
            fields = [row[0] for row in self.conn.execute("SELECT DISTINCT field FROM field_values ORDER BY field")]
        else:
            fields = sorted(indexed_fields)
        self._write_info(
            indexed_fields=json.dumps(fields),
            site_name=site_name,
            site_url=site_url or "",
            built_at=str(to_micros(dt.datetime.now(dt.timezone.utc))),
        )
        self.conn.execute("COMMIT")

    def _close(self) -> None:
        if getattr(self, "conn", None) is not None:
            try:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
            except sqlite3.DatabaseError as error:
                if not is_corrupt(error):
                    raise
            finally:
                self.conn.close()
                self.conn = None


def set_digest(items: dict[str, str] | set[str]) -> str:
    """A digest of the site's files (in MkDocs' own order, which is stable) or of the nav's pages (sorted)."""
    text = repr(items) if isinstance(items, dict) else "\n".join(sorted(items))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def resolve_links(
    conn: sqlite3.Connection, site_files: dict[str, str], changed: set[str], same_files: bool = False
) -> set[str]:
    """Each link's target page and whether it is broken, against the site as this build has it; returns the
    pages that gained or lost a link.

    Only the links that may have changed are looked at: those of the pages put in this build, those whose
    target address now holds another file or none (or holds one again), and those to a page put or removed in
    this build (its anchors may differ). So the links of unchanged pages break when their target goes, under
    `mkdocs serve --dirty` too, and a rebuild of one page costs a few lookups, not one per link of the site.
    """
    stored = {} if same_files else dict(conn.execute("SELECT url, path FROM site_files"))
    moved = [] if same_files else [url for url in stored.keys() | site_files.keys()
                                   if stored.get(url) != site_files.get(url)]
    conn.executemany("DELETE FROM site_files WHERE url = ?", [[url] for url in moved if url in stored])
    conn.executemany("INSERT INTO site_files (url, path) VALUES (?, ?)",
                     [(url, site_files[url]) for url in moved if url in site_files])
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS changed_keys (kind TEXT, key TEXT, PRIMARY KEY (kind, key))")
    conn.execute("DELETE FROM temp.changed_keys")
    conn.executemany("INSERT OR IGNORE INTO temp.changed_keys VALUES ('url', ?)", [[url] for url in moved])
    conn.executemany("INSERT OR IGNORE INTO temp.changed_keys VALUES ('path', ?)", [[path] for path in changed])
    columns = "SELECT l.rowid, l.target, l.anchor, l.target_path, l.broken FROM links l"
    rows = {}
    for sql in (
        f"{columns} JOIN documents d ON d.id = l.document_id"
        " WHERE d.path IN (SELECT key FROM temp.changed_keys WHERE kind = 'path') AND l.target IS NOT NULL",
        f"{columns} WHERE l.target IN (SELECT key FROM temp.changed_keys WHERE kind = 'url')",
        f"{columns} WHERE l.target_path IN (SELECT key FROM temp.changed_keys WHERE kind = 'path')",
    ):
        rows.update((row[0], row) for row in conn.execute(sql))
    documents: dict[str, int] = {}
    anchors: dict[int, set[str]] = {}

    def has_anchor(path: str, anchor: str) -> bool | None:
        """None when the target is not an indexed page (a static file, an excluded or generated page)."""
        if path not in documents:
            row = conn.execute(
                "SELECT p.document_id, p.anchors FROM pages p JOIN documents d ON d.id = p.document_id"
                " WHERE d.path = ?", [path]).fetchone()
            documents[path] = row[0] if row else -1
            if row:
                anchors[row[0]] = set(row[1].split("\n"))
        document_id = documents[path]
        return None if document_id < 0 else anchor in anchors[document_id]

    changes = []
    touched: set[str] = set()
    for rowid, target, anchor, stored_path, stored_broken in rows.values():
        path = site_files.get(target)
        broken = None
        if path is None:
            broken = "page"
        elif anchor and has_anchor(path, anchor) is False:
            broken = "anchor"
        if (path, broken) != (stored_path, stored_broken):
            changes.append((path, broken, rowid))
            touched.update(p for p in (path, stored_path) if p is not None)
    conn.executemany("UPDATE links SET target_path = ?, broken = ? WHERE rowid = ?", changes)
    return touched


def count_linking_pages(conn: sqlite3.Connection, paths: set[str]) -> None:
    """`pages.linked_from` (how many other pages link to the page) for the pages whose links changed."""
    conn.executemany(
        "UPDATE pages SET linked_from = (SELECT count(DISTINCT l.document_id) FROM links l"
        " WHERE l.target_path = ?1 AND l.document_id != pages.document_id)"
        " WHERE document_id = (SELECT id FROM documents WHERE path = ?1)",
        [[path] for path in paths],
    )


def mark_nav(conn: sqlite3.Connection, nav: set[str], only: set[str] | None = None) -> None:
    """`pages.in_nav` as the nav of this build says, touching only the pages whose membership changed; with
    `only` (the nav is the one of the last build), looking at those pages alone (the ones put in this build)."""
    if only is not None:
        conn.executemany(
            "UPDATE pages SET in_nav = 1 WHERE document_id = (SELECT id FROM documents WHERE path = ?)",
            [[path] for path in only if path in nav])
        return
    listed = dict(conn.execute(
        "SELECT d.path, p.in_nav FROM pages p JOIN documents d ON d.id = p.document_id"))
    flips = [(int(path in nav), path) for path, in_nav in listed.items() if bool(in_nav) != (path in nav)]
    conn.executemany(
        "UPDATE pages SET in_nav = ? WHERE document_id = (SELECT id FROM documents WHERE path = ?)", flips)


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
