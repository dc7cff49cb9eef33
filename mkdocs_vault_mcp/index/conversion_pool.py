"""Large pages converted to Markdown in worker processes, not in the server's own.

Converting a very large page is one long native call that holds the GIL (html-to-markdown's) and that the
call's budget cannot stop midway: in the server's process it would hold up every other client's call, which
needs the same interpreter. In a worker process it costs the server one thread that waits. The worker keeps to
the call's budget of work (budget.py) itself between the conversion's steps, and its failures come back as the
call's.

A worker is a new Python that child_processes.py starts (`PythonWorker`, running `serve_requests`), never a fork of
the server. It takes one request at a time on its standard input and answers on its standard output, pickled. It
ends as soon as its standard input does, even mid-conversion, and the only writing end of that pipe is the
server's: whatever ends the server (SIGTERM, SIGINT, SIGKILL, its client closing stdio), its workers end with it.
No helper process (fork server, resource tracker) is involved.
"""

from __future__ import annotations

import atexit
import contextlib
import pickle
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import budget
from ..child_processes import PythonWorker

# The worker's program: child_processes.serve_requests, answering with this module's `convert`. The folder this package was imported from is last on its
# path: found there when this Python would not find it on its own.
WORKER = (
    "import sys; sys.path.append({root!r}); "
    "from mkdocs_vault_mcp.child_processes import serve_requests; "
    "from mkdocs_vault_mcp.index.conversion_pool import convert; serve_requests(convert)"
)
ROOT = str(Path(__file__).resolve().parents[2])
STOP_SECONDS = 5  # how long `stop` waits for an idle worker to end once its input is closed


_idle: list[PythonWorker] = []
_idle_lock = threading.Lock()
_slots: threading.BoundedSemaphore | None = None


def to_markdown(fragment: str, base_url: str, languages: dict[str, str], workers: int) -> str:
    """html_to_markdown(fragment, ...) in a worker process, within what is left of the current call's budget;
    at most `workers` of them at once."""
    seconds = budget.remaining()
    with _slot(workers):
        with _idle_lock:
            worker = _idle.pop() if _idle else None
        worker = worker or PythonWorker(WORKER.format(root=ROOT))
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


def convert(fragment: str, base_url: str, languages: dict[str, str], seconds: float) -> tuple[str, str, Any]:
    """(status, markdown, exception): status "done", "out of time" or "failed"."""
    # In the worker only, for lxml and html-to-markdown: the server that imports this module never loads them.
    from .html_to_markdown import html_to_markdown

    try:
        with budget.limited(seconds):
            return "done", html_to_markdown(fragment, base_url, languages), None
    except budget.OutOfTime:
        return "out of time", "", None
    except Exception as error:
        return "failed", "", error
