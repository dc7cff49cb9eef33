"""Large pages converted to Markdown in worker processes, not in the server's own.

Parsing and converting a very large page is long Python work, under the GIL and with a great many
objects for the garbage collector to walk: in the server's process it would slow every other client's call,
which needs the same interpreter. In a worker process it costs the server one thread that waits. The worker
keeps to the call's budget of work (budget.py) itself, and its failures come back as the call's.

Workers are started by a fork server (Linux) or spawned, never forked from the server: the server runs threads,
and a fork copies locks another thread may hold.
"""

from __future__ import annotations

import multiprocessing
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from .. import budget

_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()


def to_markdown(fragment: str, base_url: str, languages: dict[str, str], workers: int) -> str:
    """html_to_markdown(fragment, ...) in a worker process, within what is left of the current call's budget."""
    seconds = budget.remaining()
    try:
        markdown, out_of_time = _executor(workers).submit(_convert, fragment, base_url, languages, seconds).result()
    except BrokenProcessPool:
        _forget_pool()  # a worker was killed (out of memory): the next call starts new ones
        raise RuntimeError("the process converting a page to Markdown ended without an answer") from None
    if out_of_time:
        raise budget.OutOfTime
    return markdown


def _convert(fragment: str, base_url: str, languages: dict[str, str], seconds: float) -> tuple[str, bool]:
    from .html_to_markdown import html_to_markdown

    try:
        with budget.limited(seconds):
            return html_to_markdown(fragment, base_url, languages), False
    except budget.OutOfTime:
        return "", True


def _executor(workers: int) -> ProcessPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            method = "forkserver" if sys.platform == "linux" else "spawn"
            _pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method))
        return _pool


def _forget_pool() -> None:
    global _pool
    with _pool_lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)
