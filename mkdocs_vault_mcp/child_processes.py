"""The child processes the build and the server start for their own work, and the thread that waits beside the build
for one's answer; every one a new program (git, a fresh Python), never a fork of the caller's process.

- `run`: a program run to its end, its output read whole: git's log and status, a Python that stats the site's
  files (build_steps/git_log.py, build_steps/file_statuses.py);
- `Beside`: work run on a daemon thread while the build's thread goes on, for work that is mostly waiting for such
  a program (the git history, the files' statuses): the wait holds no GIL;
- `PythonWorker` and `serve_requests`: a Python that answers pickled requests on its standard input, one at a
  time, and ends as soon as that input ends, even mid-request (index/conversion_pool.py's workers).

Never a fork: MkDocs' process and the server run threads (the file watcher, the live server, the readers), and a
fork copies the calling thread alone, so a lock another thread held then (the logging module's, SQLite's, an
allocator's) would stay held in the child.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from typing import IO, Any, Generic, TypeVar

T = TypeVar("T")


def spare_cpu() -> bool:
    """Whether this process may run on more than one CPU, so that a child process runs beside MkDocs, not in turns."""
    try:
        return len(os.sched_getaffinity(0)) > 1
    except AttributeError:  # not Linux
        return (os.cpu_count() or 1) > 1


def run(
    command: list[str],
    *,
    timeout: float,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    input: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """`command` run to its end, its output and errors captured; without `input`, its standard input is empty."""
    return subprocess.run(
        command,
        cwd=cwd,
        env=env,
        input=input,
        stdin=subprocess.DEVNULL if input is None else None,
        capture_output=True,
        timeout=timeout,
    )


class Beside(Generic[T]):
    """`work()` on a daemon thread, started at once; `result()` waits for it and returns what it returned or raises
    what it raised. A daemon: a build that fails meanwhile does not wait for it at exit."""

    def __init__(self, work: Callable[[], T], name: str) -> None:
        self._answer: tuple[T] | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = threading.Thread(target=self._run, args=(work,), name=name, daemon=True)
        self._thread.start()

    def _run(self, work: Callable[[], T]) -> None:
        try:
            self._answer = (work(),)
        except BaseException as error:  # handed to the waiting thread by result()
            self._error = error

    def done(self) -> bool:
        return self._thread is None or not self._thread.is_alive()

    def wait(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None  # a build asks at every page: joined once

    def result(self) -> T:
        self.wait()
        if self._error is not None:
            raise self._error
        assert self._answer is not None
        return self._answer[0]


def pickled_answer(message: tuple[object, ...]) -> bytes:
    """A child's answer, pickled; an exception in it that does not pickle goes as its text."""
    try:
        return pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return pickle.dumps(
            tuple(RuntimeError(repr(part)) if isinstance(part, BaseException) else part for part in message),
            protocol=pickle.HIGHEST_PROTOCOL,
        )


class PythonWorker:
    """A Python running `program` (which calls `serve_requests`), and its two pipes."""

    def __init__(self, program: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", program], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.requests: IO[bytes] = self.process.stdin  # type: ignore[assignment]
        self.answers: IO[bytes] = self.process.stdout  # type: ignore[assignment]

    def ask(self, request: tuple[Any, ...]) -> tuple[Any, ...]:
        pickle.dump(request, self.requests, protocol=pickle.HIGHEST_PROTOCOL)
        self.requests.flush()
        answer: tuple[Any, ...] = pickle.load(self.answers)
        return answer

    def end(self, wait: float | None = None) -> None:
        """Close its input (it ends on its own), killing it when it has not ended within `wait` seconds."""
        with contextlib.suppress(OSError):
            self.requests.close()
        try:
            self.process.wait(wait)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.answers.close()


def serve_requests(answer: Callable[..., tuple[Any, ...]]) -> None:
    """A worker's life: `answer(*request)` for each request on stdin, on stdout, until stdin ends; then end at once,
    even in the middle of an answer (a thread reads stdin while the main thread answers). The only writing end of
    that pipe is the parent's: whatever ends the parent (SIGTERM, SIGINT, SIGKILL), its workers end with it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole terminal: the parent ends its workers
    answers = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but answers goes to the parent's pipe
    requests: queue.Queue[tuple[Any, ...]] = queue.Queue()
    threading.Thread(target=_read_requests, args=(sys.stdin.buffer, requests), daemon=True).start()
    while True:
        answers.write(pickled_answer(answer(*requests.get())))
        answers.flush()


def _read_requests(stdin: IO[bytes], requests: queue.Queue[tuple[Any, ...]]) -> None:
    while True:
        try:
            requests.put(pickle.load(stdin))
        except (EOFError, OSError, pickle.UnpicklingError):
            os._exit(0)  # the parent has ended (or closed this worker): nothing is left to answer
