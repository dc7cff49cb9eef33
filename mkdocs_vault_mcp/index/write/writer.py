"""The writer: one build's writes to the working index, in one transaction, beside the build.

`IndexWriter` is what the build calls: it hands each page over as a `RenderedPage` (page/model.py) and commits with
one `CommitSettings`. The writes themselves (making each page's document from its HTML, its rows (rows.py), FTS5's
tokenizing, the commit) are working_index.WorkingIndex's, run through writes.IndexWrites on one executor of one
worker. For a build with PAGES_FOR_A_PROCESS pages or more to write and a second CPU, that worker is a process of its
own: MkDocs renders on one core, the page's document and its inserts are made on another one, and the build itself
only hands each page over; it commits while MkDocs renders the templates, and the build waits for the commit when it
needs the index. Otherwise it is a thread, which writes the pages when the build next waits for it (the commit):
making a document holds the GIL, and a thread writing beside MkDocs would only take turns with it.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ...child_processes import spare_cpu
from ...page.model import IndexedFields, RenderedPage
from ..publish import is_corrupt
from ..schema import FORMAT_VERSION
from .working_index import CommitSettings
from .writes import Answer, ExecutorWrites, IndexWrites, Opened

if TYPE_CHECKING:
    from .build_summary import BuildSummary

__all__ = [
    "CommitWaiter",
    "IndexWriter",
    "stored_documents",
    "worth_a_process",
]

log = logging.getLogger("mkdocs.plugins.vault-mcp")

# From this many pages a build may write, the writes go to a process of their own, when there is a second CPU to
# run it on: each page handed over saves the build's own thread the Python that a writer thread would take from it
# (the GIL), and below this many the saving is lost in what starting the process (a fork server, then a writer
# importing the package) costs: a small real site's first build is cheaper on a thread in wall and CPU time alike.
# On one CPU the process would only take turns with MkDocs.
PAGES_FOR_A_PROCESS = 50

# Waits for a commit, and returns the build summary the commit was asked to read, else None.
CommitWaiter = Callable[[], "BuildSummary | None"]


def worth_a_process(pages_to_write: int) -> bool:
    """Whether a build that writes this many pages writes them in a process of its own (PAGES_FOR_A_PROCESS, and
    a second CPU to run it on)."""
    return pages_to_write >= PAGES_FOR_A_PROCESS and spare_cpu()


def stored_documents(path: Path, options_json: str) -> int:
    """How many documents the working index at `path` holds for these options: at most that many pages a build
    will not write again (0 when the index is missing, damaged or written with other options)."""
    try:
        with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as conn:
            options = conn.execute("SELECT value FROM info WHERE key = 'options'").fetchone()
            if options != (f"{FORMAT_VERSION}:{options_json}",):
                return 0
            count: int = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
            return count
    except sqlite3.Error:
        return 0


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
        self._writes, opening = _open(path, self._options, live_readers, in_process)
        self._opening: Answer[Opened] | None = opening
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

    def put(self, page: RenderedPage, indexed_fields: IndexedFields) -> None:
        """Insert or replace one page; `indexed_fields`: which front matter fields its document keeps values of."""
        self.fingerprints[page.path] = page.fingerprint
        self.languages[page.path] = page.language
        self._writes.put(page, indexed_fields)

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
        self._writes.remove(gone)

    def commit(self, settings: CommitSettings) -> BuildSummary | None:
        """Commit and wait for it: `commit_beside` with no last writes."""
        return self.commit_beside(None, settings)()

    def commit_beside(self, last_writes: Callable[[], None] | None, settings: CommitSettings) -> CommitWaiter:
        """Run `last_writes` (the build's last puts and removals), then commit; return a function that waits for the
        commit and returns the build summary `settings` asked for (else None), or raises what the commit raised.

        A process commits beside the build, and the function waits for it: the last pages (those a plugin
        completed late, such as mkdocstrings' API pages) are made into documents while MkDocs renders its
        templates. A thread has committed when this returns: beside MkDocs it would take turns with it for the GIL.

        The working index is a cache, so damage is never repaired: when the writes find the index damaged, it is
        thrown away and both run again on an empty one, where `last_writes` puts every page of the build (every
        page whose fingerprint `fingerprints` lacks). Damage found when the index is opened is handled there.
        """

        def write_and_commit() -> Answer[BuildSummary | None]:
            if last_writes is not None:
                last_writes()
            self._opened()
            return self._writes.commit(settings)

        def again_if_damaged(error: sqlite3.DatabaseError) -> BuildSummary | None:
            if not is_corrupt(error):
                raise error
            log.info(f"vault-mcp: The working index {self.path} is damaged ({error}); indexing every page again")
            self._fingerprints, self._languages = {}, {}
            self._writes.discard_and_open(self._options)()
            return write_and_commit()()

        def wait_for(answer: Answer[BuildSummary | None]) -> BuildSummary | None:
            try:
                return answer()
            except sqlite3.DatabaseError as error:
                return again_if_damaged(error)

        try:
            answer = write_and_commit()
        except sqlite3.DatabaseError as error:  # a failed open, or a put that waited for the writer
            return _done(again_if_damaged(error))
        if self._writes.runs_beside:
            return lambda: wait_for(answer)
        return _done(wait_for(answer))

    def close(self) -> None:
        """Roll back whatever was not committed and stop the writer."""
        self._opening = None  # its answer, or its failure, matters no more
        self._writes.stop()


def _open(path: Path, options: str, live_readers: bool, in_process: bool) -> tuple[IndexWrites, Answer[Opened]]:
    """The writes, on a process of their own (else, or when no process can be started, on a thread), asked to open
    the index."""
    if in_process:
        writes = ExecutorWrites(path, in_process=True)
        try:
            opening = writes.open(options, live_readers)  # starts the process
            log.debug("vault-mcp: writing the index in a process of its own")
            return writes, opening
        except OSError as error:  # no processes left, no Python to start (an embedded interpreter)
            writes.stop()
            log.debug(f"vault-mcp: indexing on a thread; no process for it ({error})")
    writes = ExecutorWrites(path, in_process=False)
    return writes, writes.open(options, live_readers)


def _done(summary: BuildSummary | None) -> CommitWaiter:
    """The waiter of a commit that is done: it returns its summary at once."""
    return lambda: summary
