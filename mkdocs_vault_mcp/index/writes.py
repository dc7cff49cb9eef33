"""The writer's message layer: `WorkingIndex`'s methods run, by name, beside the build, on a thread
(`ThreadWrites`) or in a process of its own (writer_process.ProcessWrites, over this same interface)."""

from __future__ import annotations

import functools
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from .working_index import WorkingIndex


class Writes:
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


class ThreadWrites(Writes):
    """WorkingIndex on a thread. What is sent is held until the next `ask`, and handed over with it: the build
    waits for that answer anyway. Written beside MkDocs' rendering instead, the thread would take the GIL back
    after every SQLite statement, for no gain: the thread writes when a process would not pay (few pages to
    write, or one CPU)."""

    def __init__(self, path: Path) -> None:
        self._index = WorkingIndex(path)
        # Never blocks: `stop` may run while Ctrl-C stops serve.
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any] | None, Future[Any] | None]] = queue.SimpleQueue()
        # What was sent since the last `ask`: the pages' HTML and front matter are MkDocs' own objects, which it
        # keeps until the build ends, so holding them costs a reference each.
        self._held: list[Callable[[], Any]] = []
        self._failure: BaseException | None = None
        self._asked: Future[Any] | None = None
        self._thread = threading.Thread(target=self._work, name="vault-mcp-index-writer", daemon=True)
        self._thread.start()

    def send(self, method: str, *args: Any) -> None:
        self._held.append(functools.partial(getattr(self._index, method), *args))

    def ask(self, method: str, *args: Any) -> Callable[[], Any]:
        held, self._held = self._held, []
        for job in held:
            self._jobs.put((job, None))
        done: Future[Any] = Future()
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
