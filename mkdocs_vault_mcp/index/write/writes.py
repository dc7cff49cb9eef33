"""The writer's executor: `WorkingIndex`'s methods, called as methods, beside the build, on one executor of one
worker: a thread (`ThreadPoolExecutor`) or a process of its own (`ProcessPoolExecutor`, started by a fork server on
Linux, else spawned; never a fork of the build's own process).

`IndexWrites` is the interface the writer's front (writer.py) calls; `ExecutorWrites` is its one implementation,
whichever executor it runs on. In a process, the pages cross as pickles (page.RenderedPage.__getstate__ sends
their HTML and Markdown as UTF-8 bytes) and each method is sent as the function `WorkingIndex.<method>` itself.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable
from concurrent.futures import BrokenExecutor, Executor, Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar

from ...page.model import IndexedFields, RenderedPage
from .working_index import CommitSettings, WorkingIndex

if TYPE_CHECKING:
    from .build_summary import BuildSummary

__all__ = ["Answer", "ExecutorWrites", "IndexWrites", "Opened", "WriterStopped"]

P = ParamSpec("P")
T = TypeVar("T")

# Waits for one asked method's result and returns it, or raises what it (or a write sent before it) raised.
Answer = Callable[[], T]
# What opening the index finds: path -> fingerprint and path -> language of every stored document, and the damage
# that made it start a new index (else None).
Opened = tuple[dict[str, str], dict[str, str], str | None]


class WriterStopped(OSError):
    """The writer's process ended before the build did (killed, out of memory)."""


STOPPED = "the index writer process ended before the build did"


class IndexWrites(Protocol):
    """The working index's writes, run beside the build: `put` and `remove` hand their work over and return at once;
    the others return an `Answer` to wait for, which raises what a write sent before it raised (the earlier failure
    is the one to report). Nothing else is asked before an answer is waited for."""

    @property
    def runs_beside(self) -> bool:
        """Whether the writes run while the build's thread goes on (a process), not in turns with it (a thread)."""
        ...

    def open(self, options: str, live_readers: bool) -> Answer[Opened]: ...

    def discard_and_open(self, options: str) -> Answer[tuple[dict[str, str], dict[str, str]]]: ...

    def put(self, page: RenderedPage, indexed_fields: IndexedFields) -> None: ...

    def remove(self, paths: list[str]) -> None: ...

    def commit(self, settings: CommitSettings) -> Answer[BuildSummary | None]: ...

    def answered(self) -> bool:
        """Whether the last answer asked for is there, so that waiting for it would not wait."""
        ...

    def worker_pid(self) -> int:
        """The process the writes run in (the build's own, on a thread), once what was asked before is done."""
        ...

    def stop(self) -> None:
        """Roll back what was not committed; wait for the writer to end."""
        ...


class ExecutorWrites:
    """IndexWrites on one executor of one worker, so the methods run in the order they were called.

    On a thread, what is sent is held until the next answer is asked for, and handed over with it: the build waits
    for that answer anyway, and a thread writing beside MkDocs' rendering would take the GIL back after every SQLite
    statement, for no gain. In a process it is handed over at once, and written on the other CPU."""

    def __init__(self, path: Path, *, in_process: bool) -> None:
        """Raises OSError when no process can be started (the caller then writes on a thread)."""
        self._executor: Executor
        self._index: WorkingIndex | None  # the thread's; a process holds its own (_worker_index)
        if in_process:
            # Imported here: a build that writes on a thread (a small site's, or one with few pages to write) never
            # loads multiprocessing.
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            method = "forkserver" if sys.platform == "linux" else "spawn"
            self._executor = ProcessPoolExecutor(
                1, multiprocessing.get_context(method), initializer=_start_worker, initargs=(path,)
            )
            self._index = None
        else:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="vault-mcp-index-writer")
            self._index = WorkingIndex(path)
        self.runs_beside = in_process
        self._held: list[Callable[[], Future[None]]] = []
        self._failure: BaseException | None = None  # the first failure of what was sent, raised with the next answer
        self._asked: Future[Any] | None = None
        self._stopped = False

    def open(self, options: str, live_readers: bool) -> Answer[Opened]:
        return self._ask(WorkingIndex.open, options, live_readers)

    def discard_and_open(self, options: str) -> Answer[tuple[dict[str, str], dict[str, str]]]:
        return self._ask(WorkingIndex.discard_and_open, options)

    def put(self, page: RenderedPage, indexed_fields: IndexedFields) -> None:
        self._send(lambda: self._submit(WorkingIndex.put, page, indexed_fields))

    def remove(self, paths: list[str]) -> None:
        self._send(lambda: self._submit(WorkingIndex.delete_all, paths))

    def commit(self, settings: CommitSettings) -> Answer[BuildSummary | None]:
        return self._ask(WorkingIndex.commit, settings)

    def answered(self) -> bool:
        return self._asked is None or self._asked.done()

    def worker_pid(self) -> int:
        return self._submit(_pid).result()

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._held = []
        with contextlib.suppress(OSError):  # a process that ended (or never started) rolled back with its end
            self._submit(WorkingIndex.close)
        self._executor.shutdown(wait=True)

    def _send(self, submit: Callable[[], Future[None]]) -> None:
        if self.runs_beside:
            submit().add_done_callback(self._note_failure)
        else:
            self._held.append(submit)

    def _ask(self, method: Callable[Concatenate[WorkingIndex, P], T], *args: P.args, **kwargs: P.kwargs) -> Answer[T]:
        held, self._held = self._held, []
        for submit in held:
            submit().add_done_callback(self._note_failure)
        done = self._submit(method, *args, **kwargs)
        self._asked = done

        def result() -> T:
            try:
                return done.result()
            except BrokenExecutor:  # a process pool's BrokenProcessPool (a thread pool has no initializer to fail)
                raise WriterStopped(STOPPED) from None
            finally:
                failure, self._failure = self._failure, None
                if failure is not None:
                    raise failure

        return result

    def _submit(
        self, method: Callable[Concatenate[WorkingIndex, P], T], *args: P.args, **kwargs: P.kwargs
    ) -> Future[T]:
        try:
            if self._index is not None:
                return self._executor.submit(method, self._index, *args, **kwargs)
            return self._executor.submit(OnWorkerIndex(method), *args, **kwargs)
        except BrokenExecutor:
            raise WriterStopped(STOPPED) from None

    def _note_failure(self, future: Future[None]) -> None:
        if not future.cancelled() and (error := future.exception()) is not None and self._failure is None:
            self._failure = WriterStopped(STOPPED) if isinstance(error, BrokenExecutor) else error


# The writer process's WorkingIndex: one a process, as its executor has one worker.
_worker_index: WorkingIndex | None = None


def _start_worker(path: Path) -> None:
    """The writer process's start: its index (opened by the first `open`)."""
    global _worker_index
    # Ctrl-C reaches every process of the terminal: the build stops the writer by shutting its executor down.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _worker_index = WorkingIndex(path)


class OnWorkerIndex(Generic[P, T]):
    """One of WorkingIndex's methods, to run on the writer process's index (it pickles as the function's name)."""

    def __init__(self, method: Callable[Concatenate[WorkingIndex, P], T]) -> None:
        self.method = method

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> T:
        assert _worker_index is not None  # _start_worker ran first: it is the executor's initializer
        return self.method(_worker_index, *args, **kwargs)


def _pid(_index: WorkingIndex) -> int:
    return os.getpid()
