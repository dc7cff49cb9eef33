"""The writer: one build's writes to the working index, in one transaction, beside the build.

`IndexWriter` is what the build calls. The writes themselves (making each page's document from its HTML, the
inserts, FTS5's tokenizing, the commit) are `WorkingIndex`'s. For a build with PAGES_FOR_A_PROCESS pages or more
to write and a second CPU, it runs in a process of its own (forked from the build where that is safe, else a new
Python: forked.py): MkDocs renders on one core, the page's document and
its inserts are made on another one, and the build itself only hands each page over; it commits while MkDocs
renders the templates, and the build waits for the commit when it needs the index. Otherwise it runs on a
thread, which writes the pages when the build next waits for it (the commit): making a document holds the GIL,
and a thread writing beside MkDocs would only take turns with it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import pickle
import queue
import select
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .. import __version__
from ..forked import ForkedChild, can_fork, pickled_answer, reap_exited, spare_cpu
from ..instants import now_micros, to_micros
from . import cjk
from .publish import is_corrupt
from .resolve import count_linking_pages, files_digest, mark_nav, resolve_links, set_digest
from .schema import FORMAT_VERSION, TABLES, create_schema

if TYPE_CHECKING:
    from .answers import BuildAnswers

log = logging.getLogger("mkdocs.plugins.vault-mcp")


# From this many pages a build may write, the writes go to a process of their own, when there is a second CPU to
# run it on. Each page handed over saves the build's own thread 1.5 to 5 ms of Python (bench/plugin_steps.py,
# bench/small_site_steps.py) that a writer thread would take from it (the GIL); forking the process (forked.py)
# costs the build's thread about 2 ms and the copy-on-write of its memory, starting a new Python where a fork is
# not safe about 0.1 s of CPU on the other core. Below ten pages the saving is lost in the noise of a build; on
# one CPU the process would only take turns with MkDocs.
PAGES_FOR_A_PROCESS = 10
# The pipe to the writer's process holds this much, where Linux gives a pipe 64 KB: about three pages with their
# HTML, so MkDocs waited at every page the writer took longer over than MkDocs took over the next ones (about
# 0.2 s of MkDocs' thread in a cold FastAPI build, replayed at a build's pace). 1 MB is the most an unprivileged
# process may ask for.
PIPE_BYTES = 1 << 20


def worth_a_process(pages_to_write: int) -> bool:
    """Whether a build that writes this many pages writes them in a process of its own (PAGES_FOR_A_PROCESS, and
    a second CPU to run it on)."""
    return pages_to_write >= PAGES_FOR_A_PROCESS and spare_cpu()


def stored_documents(path: Path, options_json: str) -> int:
    """How many documents the working index at `path` holds for these options: at most that many pages a build
    will not write again (0 when the index is missing, damaged or written with other options). About 1 ms."""
    try:
        with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as conn:
            options = conn.execute("SELECT value FROM info WHERE key = 'options'").fetchone()
            if options != (f"{FORMAT_VERSION}:{options_json}",):
                return 0
            return conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    except sqlite3.Error:
        return 0


class WriterStopped(OSError):
    """The writer's process ended before the build did (killed, out of memory)."""


class IndexBusy(sqlite3.OperationalError):
    """Another build holds the working index (SQLite's lock), past the time a build waits for it."""


# How long a build waits for another build that holds the working index (SQLite's busy timeout).
BUSY_MILLISECONDS = 5_000


def _is_busy(error: sqlite3.Error) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "database is locked" in str(error)


class IndexWriter:
    """One build's writes, in one transaction: readers see the old index until `commit`.

    `put` and the removals (`keep_only`, `keep_languages`) hand their writes over and return at once (on a thread:
    held until the next method that waits; in a process: as soon as the pipe takes them); every other method waits
    for the writes before it, and raises what a write raised. `in_process`: the writes run in a process of their
    own.
    """

    def __init__(self, path: Path, options_json: str, *, in_process: bool = False, live_readers: bool = False) -> None:
        """`options_json`: the options that decide what goes into the index; when they differ from those the
        working index was written with, it is emptied and every page written again. `live_readers`: others read
        the working index while it is written (the live server beside `mkdocs serve`).

        Returns before the index is open: it opens beside the build, and the first method that needs it waits
        for it (and raises what opening it raised)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._options = f"{FORMAT_VERSION}:{options_json}"  # what the info row `options` holds
        self._writes = _process_or_thread_writes(path) if in_process else _ThreadWrites(path)
        self._opening: Callable[[], Any] | None = self._writes.ask("open", self._options, live_readers)
        self._fingerprints: dict[str, str] = {}
        self._languages: dict[str, str] = {}  # path -> language, of every stored document

    @property
    def fingerprints(self) -> dict[str, str]:
        """path -> fingerprint, of every stored document."""
        self._opened()
        return self._fingerprints

    @property
    def languages(self) -> dict[str, str]:
        """path -> language, of every stored document."""
        self._opened()
        return self._languages

    def is_open(self) -> bool:
        """Whether the index has opened (or failed to): a page handed over now waits for nothing."""
        return self._opening is None or self._writes.answered()

    def _opened(self) -> None:
        if self._opening is not None:
            opening, self._opening = self._opening, None
            self._fingerprints, self._languages, damage = opening()
            if damage:
                log.info(f"vault-mcp: The working index {self.path} is damaged ({damage}); starting a new one")

    def put(self, **arguments: Any) -> None:
        """Insert or replace one page: `arguments` are documents.build_document's, and `source_file` the file to
        read the page's Markdown source from (`markdown` stands for it when the file cannot be read)."""
        self.fingerprints[arguments["path"]] = arguments["fingerprint"]
        self.languages[arguments["path"]] = arguments.get("language", "")
        self._writes.send("put", arguments)

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
        self._opened()
        for path in gone:
            del self.fingerprints[path]
            del self.languages[path]
        self._writes.send("delete_all", gone)

    def commit(
        self,
        *,
        indexed_fields: str | list[str],
        site_name: str,
        site_url: str | None,
        site_files: dict[str, str] | None = None,
        nav: set[str] | None = None,
        answers: dict[str, Any] | None = None,
        version_base: str | None = None,
        semantic: dict[str, str] | None = None,
    ) -> BuildAnswers | None:
        """`site_files`: every file of the site by its server path (paths.server_path), which links are
        resolved against; `nav`: the paths of the pages the nav lists. `answers`: read_answers' arguments but the
        connection; then the committed index's answers (answers.BuildAnswers) are read and returned.
        `version_base`: on a site whose versions mike publishes, the path their folders are in (resolve.SiteFiles).
        `semantic`: semantic.store_vectors' (the model and the cache file), or None for no section vectors."""
        return self._ask_commit(indexed_fields, site_name, site_url, site_files, nav, answers, version_base, semantic)()

    def _ask_commit(self, indexed_fields: str | list[str], site_name: str, site_url: str | None,
                    site_files: dict[str, str] | None = None, nav: set[str] | None = None,
                    answers: dict[str, Any] | None = None, version_base: str | None = None,
                    semantic: dict[str, str] | None = None) -> Callable[[], Any]:
        self._opened()
        return self._writes.ask("commit", indexed_fields, site_name, site_url, site_files, nav, answers,
                                version_base, semantic)

    def close(self) -> None:
        """Roll back whatever was not committed and stop the writer."""
        self._opening = None  # its answer, or its failure, matters no more
        self._writes.stop()
        reap_exited()  # this writer's process, an earlier build's or a git read's may have ended meanwhile

    def commit_with(self, last_writes: Callable[[], None], **facts: Any) -> Callable[[], BuildAnswers | None]:
        """Run `last_writes` (the build's last puts and removals), then `commit(**facts)`; return a function that
        waits for the commit and returns what it returned (the answers, when `facts` ask for them), or raises
        what it raised.

        A process commits beside the build, and the function waits for it: the last pages (those a plugin
        completed late, such as mkdocstrings' API pages) are made into documents while MkDocs renders its
        templates. A thread has committed when this returns: beside MkDocs it would take turns with it for the GIL.

        The working index is a cache, so damage is never repaired: when the writes find the index damaged, it is
        thrown away and both run again on an empty one, where `last_writes` puts every page of the build (every
        page whose fingerprint `fingerprints` lacks). Damage found when the index is opened is handled there.
        """

        def write_and_commit() -> Callable[[], Any]:
            last_writes()
            return self._ask_commit(**facts)

        def again_if_damaged(error: sqlite3.DatabaseError) -> BuildAnswers | None:
            if not is_corrupt(error):
                raise error
            log.info(f"vault-mcp: The working index {self.path} is damaged ({error}); indexing every page again")
            self._fingerprints, self._languages = {}, {}
            self._writes.call("discard_and_open", self._options)
            return write_and_commit()()

        def wait_for(answer: Callable[[], Any]) -> BuildAnswers | None:
            try:
                return answer()
            except sqlite3.DatabaseError as error:
                return again_if_damaged(error)

        try:
            answer = write_and_commit()
        except sqlite3.DatabaseError as error:  # a failed open, or a put that waited for the writer
            return functools.partial(_given, again_if_damaged(error))
        if self._writes.runs_beside:
            return functools.partial(wait_for, answer)
        return functools.partial(_given, wait_for(answer))


def _given(value: Any) -> Any:
    """What a commit that is done returns when waited for."""
    return value


class WorkingIndex:
    """The working index's connection and the build's one transaction: the writer's side, on the writer's thread
    or in its process (a sqlite3 connection must not cross threads)."""

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
        # log, then into the file at the checkpoint): the commit takes half the time and publishing a third.
        self.conn.execute(f"PRAGMA journal_mode = {'WAL' if self.live_readers else 'DELETE'}")
        self.conn.execute("PRAGMA synchronous = NORMAL")
        # FTS5 merges its segments through the page cache: 64 MB, from SQLite's 2 MB, makes a first build's writes
        # a fifth faster. It fills only as far as the index is large.
        self.conn.execute("PRAGMA cache_size = -65536")
        self.conn.execute(f"PRAGMA busy_timeout = {BUSY_MILLISECONDS}")

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
        # The dropped tables' pages would stay in the file as free pages, and be published with it: what the old
        # options named (an absolute docs_dir, in an index of an earlier version) included.
        self.conn.execute("VACUUM")
        create_schema(self.conn)

    def put(self, arguments: dict[str, Any]) -> None:
        """Make the page's document (IndexWriter.put's `arguments`) and insert or replace it."""
        source_file = arguments.pop("source_file", None)
        if source_file is not None:
            # As MkDocs reads it (File.content_string); a file gone or no longer UTF-8 since MkDocs read it leaves
            # what MkDocs read in its place.
            with contextlib.suppress(OSError, ValueError):
                arguments["markdown"] = Path(source_file).read_text(encoding="utf-8-sig")
        # Imported where documents are made (the writer's process or thread): a build's own thread never loads
        # the HTML parsing, whose regular expressions and classes are a fifth of the plugin's import.
        from ..documents import build_document

        document = build_document(**arguments)
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
        _insert_rows(
            self.conn,
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
        _insert_rows(
            self.conn, "field_values (field, value, document_id)",
            [(name, value, document_id) for name, values in document.values.items() for value in values],
        )
        _insert_rows(
            self.conn, "links (document_id, position, text, url, target, anchor, host, written)",
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

    def delete_all(self, paths: list[str]) -> None:
        self._changed.update(paths)
        for path in paths:
            self._delete(path)

    def commit(self, indexed_fields: str | list[str], site_name: str, site_url: str | None,
               site_files: dict[str, str] | None, nav: set[str] | None,
               answers: dict[str, Any] | None = None, version_base: str | None = None,
               semantic: dict[str, str] | None = None) -> BuildAnswers | None:
        # A digest of the site's files and of the nav: when neither changed (a rebuild after one saved page),
        # neither table is read whole.
        if site_files is not None:
            digest = files_digest(site_files, version_base)
            self._recount |= resolve_links(
                self.conn, site_files, self._changed, same_files=self._info("site_files") == digest,
                version_base=version_base)
            self._write_info(site_files=digest)
            count_linking_pages(self.conn, self._recount | self._changed)
        if nav is not None:
            digest = set_digest(nav)
            mark_nav(self.conn, nav, self._changed if self._info("nav") == digest else None)
            self._write_info(nav=digest)
        pages_changed = bool(self._changed)
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
            # What `serve` checks before it reads an index: the schema must be the one it reads.
            schema_version=FORMAT_VERSION,
            package_version=__version__,
        )
        self._sections_added = 0
        # Here, on the writer's side: embedding the sections a first build adds can take minutes.
        from .semantic import store_vectors

        store_vectors(self.conn, semantic, pages_changed)
        self.conn.execute("COMMIT")
        if answers is None:
            return None
        # Here, beside MkDocs rendering the templates, rather than on the build's thread once it waits for the
        # commit; imported here, as documents.py is in put, where only the writer pays for the import.
        from .answers import read_answers

        return read_answers(self.conn, **answers)

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


# Bound variables per statement: SQLite allows 999 before 3.32 (32,766 since).
_STATEMENT_VARIABLES = 999


def _insert_rows(conn: sqlite3.Connection, table_and_columns: str, rows: list[tuple]) -> None:
    """Insert `rows` (tuples, one value per column) with one statement per 999 values, in order: executemany
    runs the statement once per row, and on the writer thread each run gives the GIL up and takes it back; beside
    MkDocs' rendering, taking it back waits up to the switch interval (5 ms), so a page of a few hundred sections
    and links waited far longer than SQLite worked on it, and the build waited for the backlog at its commit."""
    if not rows:
        return
    width = len(rows[0])
    per_statement = max(1, _STATEMENT_VARIABLES // width)
    row_marks = "(" + ", ".join("?" * width) + ")"
    for start in range(0, len(rows), per_statement):
        chunk = rows[start:start + per_statement]
        conn.execute(f"INSERT INTO {table_and_columns} VALUES {', '.join([row_marks] * len(chunk))}",
                     [value for row in chunk for value in row])


class _Writes:
    """Runs WorkingIndex's methods, by name, beside the build: `send` without waiting, `call` for the result.

    A failed `send` is raised by the next `call`: the earlier failure is the one to report."""

    runs_beside = False  # whether the writes run while the build's thread goes on, not in turns with it

    def send(self, method: str, *args: Any) -> None:
        raise NotImplementedError

    def call(self, method: str, *args: Any) -> Any:
        return self.ask(method, *args)()

    def ask(self, method: str, *args: Any) -> Callable[[], Any]:
        """`call` without waiting: the function returned waits for the result. Nothing else is asked before it."""
        raise NotImplementedError

    def answered(self) -> bool:
        """Whether the answer to the last `ask` is there, so that waiting for it would not wait."""
        raise NotImplementedError

    def stop(self) -> None:
        """Roll back what was not committed; wait for the writer to end."""
        raise NotImplementedError


class _ThreadWrites(_Writes):
    """WorkingIndex on a thread. What is sent is held until the next `ask`, and handed over with it: the build
    waits for that answer anyway. Written beside MkDocs' rendering instead, the thread took the GIL back after
    every SQLite statement, hundreds of hand-overs between the two CPUs in a build that wrote one page, for no
    gain: the thread writes when a process would not pay (few pages to write, or one CPU)."""

    def __init__(self, path: Path) -> None:
        self._index = WorkingIndex(path)
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()  # never blocks: `stop` may run while Ctrl-C stops serve
        # What was sent since the last `ask`: the pages' HTML and front matter are MkDocs' own objects, which it
        # keeps until the build ends, so holding them costs a reference each.
        self._held: list[Callable[[], Any]] = []
        self._failure: BaseException | None = None
        self._asked: Future | None = None
        self._thread = threading.Thread(target=self._work, name="vault-mcp-index-writer", daemon=True)
        self._thread.start()

    def send(self, method: str, *args: Any) -> None:
        self._held.append(functools.partial(getattr(self._index, method), *args))

    def ask(self, method: str, *args: Any) -> Callable[[], Any]:
        held, self._held = self._held, []
        for job in held:
            self._jobs.put((job, None))
        done: Future = Future()
        self._asked = done
        self._jobs.put((functools.partial(getattr(self._index, method), *args), done))

        def result() -> Any:
            try:
                return done.result()
            finally:
                failure, self._failure = self._failure, None
                if failure is not None:
                    raise failure

        return result

    def answered(self) -> bool:
        return self._asked is None or self._asked.done()

    def stop(self) -> None:
        if self._thread.is_alive():
            self._jobs.put((self._index.close, None))
            self._jobs.put((None, None))
            self._thread.join()

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


def _process_or_thread_writes(path: Path) -> _Writes:
    try:
        return _ProcessWrites(path)
    except OSError as error:  # no Python to start (an embedded interpreter), no processes left: a thread does it
        log.debug(f"vault-mcp: indexing on a thread; no process for it ({error})")
        return _ThreadWrites(path)


class _ProcessWrites(_Writes):
    """WorkingIndex in a child process, fed through a pipe: (method, args, whether to answer), pickled.

    The pipe (PIPE_BYTES) bounds what waits: when the child falls behind, `send` waits for room."""

    runs_beside = True

    def __init__(self, path: Path) -> None:
        self._child: subprocess.Popen | ForkedChild
        if can_fork():  # a copy of this process, with every module the writes need already imported
            requests_read, requests_write = os.pipe()
            answers_read, answers_write = os.pipe()
            try:
                self._child = ForkedChild(
                    functools.partial(_serve_forked_writes, requests_read, answers_write, path),
                    keep_fds=(requests_read, answers_write))
            except OSError:  # no process to be had: _process_or_thread_writes gives the writes a thread
                os.close(requests_write)
                os.close(answers_read)
                raise
            finally:
                os.close(requests_read)
                os.close(answers_write)
            self._requests: IO[bytes] = os.fdopen(requests_write, "wb")
            self._answers: IO[bytes] = os.fdopen(answers_read, "rb")
            started = "forked from the build"
        else:
            # The folder this package was imported from, last on the child's path: found there when this Python
            # would not find it on its own (a site run from a checkout), and never before the standard library.
            start = (f"import sys; sys.path.append({str(Path(__file__).resolve().parents[2])!r}); "
                     "from mkdocs_vault_mcp.index.writer import serve_writes; serve_writes()")
            self._child = subprocess.Popen([sys.executable, "-c", start, str(path)], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE)
            self._requests = self._child.stdin  # type: ignore[assignment]
            self._answers = self._child.stdout  # type: ignore[assignment]
            started = "a new Python"
        log.debug(f"vault-mcp: writing the index in process {self._child.pid} ({started})")
        with contextlib.suppress(ImportError, AttributeError, OSError):  # not Linux, or a lower limit: as it is
            import fcntl

            fcntl.fcntl(self._requests.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)

    def send(self, method: str, *args: Any) -> None:
        self._write((method, tuple(_long_text_as_bytes(arg) for arg in args), False))

    def ask(self, method: str, *args: Any) -> Callable[[], Any]:
        self._write((method, args, True))
        try:
            self._requests.flush()
        except (BrokenPipeError, ValueError):
            raise self._stopped() from None
        return self._answer

    def answered(self) -> bool:
        # The pipe, not the reader's buffer: nothing is read ahead of an answer, as every answer is waited for
        # before the next one is asked.
        try:
            return bool(select.select([self._answers], [], [], 0)[0])
        except (OSError, ValueError):  # Windows selects sockets only: the caller waits for the answer, as before
            return True

    def _answer(self) -> Any:
        try:
            outcome, value, failure = pickle.load(self._answers)
        except (EOFError, OSError, pickle.UnpicklingError):
            raise self._stopped() from None
        if failure is not None:
            raise failure
        if outcome == "failed":
            raise value
        return value

    def stop(self) -> None:
        if self._answers.closed:  # stopped already
            return
        # The child rolls back and ends when its input ends (a dead child's pipe refuses what was left in it).
        with contextlib.suppress(OSError, ValueError):
            self._requests.close()
        child = self._child
        if isinstance(child, ForkedChild):
            # Its answers end once the index is closed. The exit that follows (the kernel freeing the child's
            # copy of the build's memory: 10 to 20 ms of a small site's first build) runs beside the build's end
            # instead of before it; a later stop reaps it, or init once the build's process has ended.
            if not _closed_in_time(self._answers, STOP_SECONDS):
                child.kill()
            child.exit_unwaited()
        elif child.poll() is None:
            try:
                child.wait(timeout=STOP_SECONDS)
            except (subprocess.TimeoutExpired, TimeoutError):
                child.kill()
                child.wait()
        self._answers.close()

    def _write(self, request: tuple) -> None:
        try:
            pickle.dump(request, self._requests, protocol=pickle.HIGHEST_PROTOCOL)
        except (BrokenPipeError, ValueError):
            raise self._stopped() from None

    def _stopped(self) -> WriterStopped:
        status = self._child.wait()
        return WriterStopped(f"the index writer process ended with exit status {status}")


# How long a writer may take to roll back and end once its input has ended, before it is killed.
STOP_SECONDS = 30


def _closed_in_time(answers: IO[bytes], seconds: float) -> bool:
    """Whether the writer closed its end of the answers within `seconds`; what it answered unasked is dropped."""
    deadline = time.monotonic() + seconds
    try:
        while (left := deadline - time.monotonic()) > 0:
            if select.select([answers], [], [], left)[0] and not os.read(answers.fileno(), 1 << 16):
                return True
    except OSError:  # a pipe that cannot be read: the caller stops the writer the hard way
        pass
    return False


def _long_text_as_bytes(argument: Any) -> Any:
    """A page's HTML and Markdown as UTF-8 bytes: pickling a str that is not ASCII makes CPython keep a UTF-8 copy
    inside the str, and MkDocs keeps every page's HTML and Markdown until the build ends (7 KB more a page on
    bench/plugin_at_scale.py's site)."""
    if not isinstance(argument, dict):
        return argument
    return {key: value.encode("utf-8", "surrogatepass") if isinstance(value, str) and len(value) > 256 else value
            for key, value in argument.items()}


def _long_text_as_str(argument: Any) -> Any:
    """The inverse of _long_text_as_bytes, in the writer process."""
    if not isinstance(argument, dict):
        return argument
    return {key: value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value
            for key, value in argument.items()}


def serve_writes() -> None:
    """The child of _ProcessWrites started as a fresh Python (no fork): its input and output are the pipes."""
    # Ctrl-C reaches every process of the terminal: the build stops the writer by closing its input.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The answers get stdout's pipe to themselves; anything printed goes to stderr.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    _serve(sys.stdin.buffer, answers, Path(sys.argv[1]))
    # Every answer is flushed as it is written and the index is closed: ending here spares the build, which waits
    # for this process at its end, the interpreter's teardown (30 to 60 ms).
    sys.stderr.flush()
    os._exit(0)


def _serve_forked_writes(requests_fd: int, answers_fd: int, path: Path) -> None:
    """The child of _ProcessWrites forked from the build (forked.ForkedChild ends it)."""
    _serve(os.fdopen(requests_fd, "rb"), os.fdopen(answers_fd, "wb"), path)


def _serve(requests: IO[bytes], answers: IO[bytes], path: Path) -> None:
    """Run each request on a WorkingIndex until the input ends, then roll back."""
    index = WorkingIndex(path)
    failure: BaseException | None = None
    try:
        while True:
            try:
                method, args, answer = pickle.load(requests)
            except EOFError:
                break
            args = tuple(_long_text_as_str(arg) for arg in args)
            try:
                outcome, value = "done", getattr(index, method)(*args)
            except Exception as error:
                outcome, value = "failed", error
                if not answer:
                    failure = failure or error
            if answer:
                answers.write(pickled_answer((outcome, value, failure)))
                answers.flush()
                failure = None
    finally:
        index.close()
        # The build's stop waits for this end of the answers, not for the process's exit (_ProcessWrites.stop).
        with contextlib.suppress(OSError):
            answers.close()

