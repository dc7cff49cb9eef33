"""Large pages converted to Markdown in worker processes, not in the server's own.

Parsing and converting a very large page is long Python work, under the GIL and with a great many
objects for the garbage collector to walk: in the server's process it would slow every other client's call,
which needs the same interpreter. In a worker process it costs the server one thread that waits. The worker
keeps to the call's budget of work (budget.py) itself, and its failures come back as the call's.

A worker is a new Python (subprocess), never a fork of the server: the server runs threads, and a fork copies
locks another thread may hold. It takes one request at a time on its standard input and answers on its standard
output, pickled. It ends as soon as its standard input does, even mid-conversion, and the only writing end of
that pipe is the server's: whatever ends the server (SIGTERM, SIGINT, SIGKILL, its client closing stdio), its
workers end with it. No helper process (fork server, resource tracker) is involved.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .. import budget
from ..forked import pickled_answer

# The worker's program: this module's `serve_requests`. The folder this package was imported from is last on its
# path: found there when this Python would not find it on its own.
WORKER = (
    "import sys; sys.path.append({root!r}); "
    "from mkdocs_vault_mcp.index.conversion_pool import serve_requests; serve_requests()"
)
STOP_SECONDS = 5  # how long `stop` waits for an idle worker to end once its input is closed


class _Worker:
    """One worker process and its two pipes."""

    def __init__(self) -> None:
        root = str(Path(__file__).resolve().parents[2])
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER.format(root=root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
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


_idle: list[_Worker] = []
_idle_lock = threading.Lock()
_slots: threading.BoundedSemaphore | None = None


def to_markdown(fragment: str, base_url: str, languages: dict[str, str], workers: int) -> str:
    """html_to_markdown(fragment, ...) in a worker process, within what is left of the current call's budget;
    at most `workers` of them at once."""
    seconds = budget.remaining()
    with _slot(workers):
        with _idle_lock:
            worker = _idle.pop() if _idle else None
        worker = worker or _Worker()
        try:
            status, markdown, problem = worker.ask((fragment, base_url, languages, seconds))
        except (OSError, EOFError, pickle.UnpicklingError):
            worker.end(wait=0)  # killed (out of memory): the next call starts a new one
            raise RuntimeError("the process converting a page to Markdown ended without an answer") from None
        with _idle_lock:
            _idle.append(worker)
    if status == "failed":
        raise problem
    if status == "out of time":
        raise budget.OutOfTime
    return str(markdown)


@contextlib.contextmanager
def _slot(workers: int) -> Iterator[None]:
    global _slots
    with _idle_lock:
        if _slots is None:
            _slots = threading.BoundedSemaphore(workers)
        slots = _slots
    with slots:
        yield


def stop() -> None:
    """End the idle workers (at this process's exit; a worker still converting ends with the process)."""
    with _idle_lock:
        idle, _idle[:] = list(_idle), []
    for worker in idle:
        worker.end(STOP_SECONDS)


atexit.register(stop)


# --- In the worker -------------------------------------------------------------------------------------------


def serve_requests() -> None:
    """A worker's life: answer each request on stdin, on stdout, until stdin ends; then end at once, even in the
    middle of a conversion (a thread reads stdin while the main thread converts)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole terminal: the server ends its workers
    answers = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but answers goes to the server's pipe
    requests: queue.Queue[tuple[Any, ...]] = queue.Queue()
    threading.Thread(target=_read_requests, args=(sys.stdin.buffer, requests), daemon=True).start()
    while True:
        answers.write(pickled_answer(_convert(*requests.get())))
        answers.flush()


def _read_requests(stdin: IO[bytes], requests: queue.Queue[tuple[Any, ...]]) -> None:
    while True:
        try:
            requests.put(pickle.load(stdin))
        except (EOFError, OSError, pickle.UnpicklingError):
            os._exit(0)  # the server has ended (or closed this worker): nothing is left to answer


def _convert(fragment: str, base_url: str, languages: dict[str, str], seconds: float) -> tuple[str, str, Any]:
    """(status, markdown, exception): status "done", "out of time" or "failed"."""
    # In the worker only, for bs4, markdownify and lxml: the server that imports this module never loads them.
    from .html_to_markdown import html_to_markdown

    try:
        with budget.limited(seconds):
            return "done", html_to_markdown(fragment, base_url, languages), None
    except budget.OutOfTime:
        return "out of time", "", None
    except Exception as error:
        return "failed", "", error
