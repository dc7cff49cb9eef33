"""The writer: one build's writes to the working index, in one transaction, on a thread of its own."""

from __future__ import annotations

import functools
import json
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from ..documents import Document
from ..instants import now_micros, to_micros
from . import cjk
from .publish import is_corrupt
from .resolve import count_linking_pages, mark_nav, resolve_links, set_digest
from .schema import FORMAT_VERSION, TABLES, create_schema

log = logging.getLogger("mkdocs.plugins.vault-mcp")


QUEUED_DOCUMENTS = 32  # writes waiting for the writer thread, at most


class IndexWriter:
    """One build's writes, in one transaction: readers see the old index until `commit`.

    The connection lives on a thread of its own: SQLite releases the GIL while it
    tokenizes and writes, so indexing overlaps with MkDocs rendering the next pages
    on another core. `put` queues a document and returns at once (or, when
    QUEUED_DOCUMENTS writes are waiting, as soon as the writer takes one); every other
    method waits for the queue to drain, and raises what a queued write raised.
    """

    def __init__(self, path: Path, options_json: str) -> None:
        """`options_json`: the options that decide what goes into the index; when they differ from those the
        working index was written with, it is emptied and every page written again."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()  # never blocks: `close` may run while Ctrl-C stops serve
        # Bounded: when the writer falls behind MkDocs' rendering, `put` waits for room instead of holding ever
        # more documents (each with its page's HTML and Markdown) in memory.
        self._room = threading.BoundedSemaphore(QUEUED_DOCUMENTS)
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._work, name="vault-mcp-index-writer", daemon=True)
        self._thread.start()
        self._options = f"{FORMAT_VERSION}:{options_json}"  # what the info row `options` holds
        try:
            self.fingerprints: dict[str, str] = {}
            self.languages: dict[str, str] = {}  # path -> language, of every stored document
            self._call(self._open, self._options)
        except BaseException:
            self.close()
            raise

    # -- the calling thread's side --------------------------------------------------------

    def put(self, document: Document) -> None:
        """Insert or replace one page with its sections and values."""
        self.fingerprints[document.path] = document.fingerprint
        self.languages[document.path] = document.language
        self._room.acquire()
        self._jobs.put((functools.partial(self._put_queued, document), None))

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

    def commit_with(self, last_writes: Callable[[], None], **facts: Any) -> None:
        """Run `last_writes` (the build's last puts and removals), then `commit(**facts)`.

        The working index is a cache, so damage is never repaired: when the writes find the index damaged, it is
        thrown away and both run again on an empty one, where `last_writes` puts every page of the build (every
        page whose fingerprint `fingerprints` lacks). Damage found when the index is opened is handled there.
        """
        try:
            last_writes()
            self.commit(**facts)
        except sqlite3.DatabaseError as error:
            if not is_corrupt(error):
                raise
            log.info(f"vault-mcp: The working index {self.path} is damaged ({error}); indexing every page again")
            self.fingerprints, self.languages = {}, {}
            self._call(self._discard_and_open, self._options)
            last_writes()
            self.commit(**facts)

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

    def _open(self, options: str) -> None:
        try:
            return self._open_as_is(options)
        except sqlite3.DatabaseError as error:
            if not is_corrupt(error):
                raise
            log.info(f"vault-mcp: The working index {self.path} is damaged ({error}); starting a new one")
            return self._discard_and_open(options)

    def _discard_and_open(self, options: str) -> None:
        """The working index is a cache: a damaged one is thrown away, never repaired."""
        self._close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)
        return self._open_as_is(options)

    def _open_as_is(self, options: str) -> None:
        self._changed: set[str] = set()  # paths put or removed in this build's transaction
        self._sections_added = 0  # sections put less sections deleted in this transaction
        self._recount: set[str] = set()  # pages whose incoming links may have changed
        self._connect()
        if self._info("options") != options:
            self._recreate()
        self.conn.execute("BEGIN IMMEDIATE")
        self._write_info(options=options)
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
        for table in TABLES:
            self.conn.execute(f"DROP TABLE IF EXISTS [{table}]")
        create_schema(self.conn)

    def _put_queued(self, document: Document) -> None:
        try:
            self._put(document)
        finally:
            self._room.release()

    def _put(self, document: Document) -> None:
        self._changed.add(document.path)
        self._delete(document.path)
        self._sections_added += len(document.sections)
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
            self._sections_added -= self.conn.execute("DELETE FROM sections WHERE document_id = ?", row).rowcount
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

    def _commit(self, indexed_fields: str | list[str], site_name: str, site_url: str | None,
                site_files: dict[str, str] | None, nav: set[str] | None) -> None:
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
            # Kept by the count of what this transaction added and deleted: exact, and no scan of `sections`.
            section_count=str(int(self._info("section_count") or 0) + self._sections_added),
            site_name=site_name,
            site_url=site_url or "",
            built_at=str(now_micros()),
        )
        self._sections_added = 0
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
                del self.conn  # a connection while there is one: closed, none until _connect
