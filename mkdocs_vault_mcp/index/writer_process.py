"""The writer's process layer: `WorkingIndex` in a child process (forked from the build where that is safe, else a
new Python: forked.py), fed its requests through a pipe, pickled; the pages' HTML and Markdown cross it as UTF-8
bytes (page.RenderedPage.__getstate__)."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import pickle
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ..forked import ForkedChild, can_fork, pickled_answer
from .working_index import WorkingIndex
from .writes import ThreadWrites, Writes

log = logging.getLogger("mkdocs.plugins.vault-mcp")

# The pipe to the writer's process holds this much, where Linux gives a pipe 64 KB, so that MkDocs does not wait at
# every page the writer takes longer over than MkDocs takes over the next ones. 1 MB is the most an unprivileged
# process may ask for.
PIPE_BYTES = 1 << 20


class WriterStopped(OSError):
    """The writer's process ended before the build did (killed, out of memory)."""


def process_or_thread_writes(path: Path) -> Writes:
    try:
        return ProcessWrites(path)
    except OSError as error:  # no Python to start (an embedded interpreter), no processes left: a thread does it
        log.debug(f"vault-mcp: indexing on a thread; no process for it ({error})")
        return ThreadWrites(path)


class ProcessWrites(Writes):
    """WorkingIndex in a child process, fed through a pipe: (method, args, whether to reply), pickled.

    The pipe (PIPE_BYTES) bounds what waits: when the child falls behind, `send` waits for room."""

    runs_beside = True

    def __init__(self, path: Path) -> None:
        self._child: subprocess.Popen[bytes] | ForkedChild
        if can_fork():  # a copy of this process, with every module the writes need already imported
            requests_read, requests_write = os.pipe()
            replies_read, replies_write = os.pipe()
            try:
                self._child = ForkedChild(
                    functools.partial(_serve_forked_writes, requests_read, replies_write, path),
                    keep_fds=(requests_read, replies_write),
                )
            except OSError:  # no process to be had: process_or_thread_writes gives the writes a thread
                os.close(requests_write)
                os.close(replies_read)
                raise
            finally:
                os.close(requests_read)
                os.close(replies_write)
            self._requests: IO[bytes] = os.fdopen(requests_write, "wb")
            self._replies: IO[bytes] = os.fdopen(replies_read, "rb")
            started = "forked from the build"
        else:
            # The folder this package was imported from, last on the child's path: found there when this Python
            # would not find it on its own (a site run from a checkout), and never before the standard library.
            start = (
                f"import sys; sys.path.append({str(Path(__file__).resolve().parents[2])!r}); "
                "from mkdocs_vault_mcp.index.writer_process import serve_writes; serve_writes()"
            )
            self._child = subprocess.Popen(
                [sys.executable, "-c", start, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
            self._requests = self._child.stdin  # type: ignore[assignment]
            self._replies = self._child.stdout  # type: ignore[assignment]
            started = "a new Python"
        log.debug(f"vault-mcp: writing the index in process {self._child.pid} ({started})")
        with contextlib.suppress(ImportError, AttributeError, OSError):  # not Linux, or a lower limit: as it is
            import fcntl

            fcntl.fcntl(self._requests.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)

    def send(self, method: str, *args: Any) -> None:
        self._write((method, args, False))

    def ask(self, method: str, *args: Any) -> Callable[[], Any]:
        self._write((method, args, True))
        try:
            self._requests.flush()
        except (BrokenPipeError, ValueError):
            raise self._stopped() from None
        return self._reply

    def answered(self) -> bool:
        # The pipe, not the reader's buffer: nothing is read ahead of a reply, as every reply is waited for
        # before the next one is asked.
        try:
            return bool(select.select([self._replies], [], [], 0)[0])
        except (OSError, ValueError):  # Windows selects sockets only: the caller waits for the reply, as before
            return True

    def _reply(self) -> Any:
        try:
            status, value, failure = pickle.load(self._replies)
        except (EOFError, OSError, pickle.UnpicklingError):
            raise self._stopped() from None
        if failure is not None:
            raise failure
        if status == "failed":
            raise value
        return value

    def stop(self) -> None:
        if self._replies.closed:  # stopped already
            return
        # The child rolls back and ends when its input ends (a dead child's pipe refuses what was left in it).
        with contextlib.suppress(OSError, ValueError):
            self._requests.close()
        child = self._child
        if isinstance(child, ForkedChild):
            # Its replies end once the index is closed. The exit that follows (the kernel freeing the child's
            # copy of the build's memory) runs beside the build's end instead of before it; a later stop reaps it,
            # or init once the build's process has ended.
            if not _closed_in_time(self._replies, STOP_SECONDS):
                child.kill()
            child.exit_unwaited()
        elif child.poll() is None:
            try:
                child.wait(timeout=STOP_SECONDS)
            except (subprocess.TimeoutExpired, TimeoutError):
                child.kill()
                child.wait()
        self._replies.close()

    def _write(self, request: tuple[str, tuple[Any, ...], bool]) -> None:
        try:
            pickle.dump(request, self._requests, protocol=pickle.HIGHEST_PROTOCOL)
        except (BrokenPipeError, ValueError):
            raise self._stopped() from None

    def _stopped(self) -> WriterStopped:
        status = self._child.wait()
        return WriterStopped(f"the index writer process ended with exit status {status}")


# How long a writer may take to roll back and end once its input has ended, before it is killed.
STOP_SECONDS = 30


def _closed_in_time(replies: IO[bytes], seconds: float) -> bool:
    """Whether the writer closed its end of the replies within `seconds`; what it replied unasked is dropped."""
    deadline = time.monotonic() + seconds
    try:
        while (left := deadline - time.monotonic()) > 0:
            if select.select([replies], [], [], left)[0] and not os.read(replies.fileno(), 1 << 16):
                return True
    except OSError:  # a pipe that cannot be read: the caller stops the writer the hard way
        pass
    return False


def serve_writes() -> None:
    """The child of ProcessWrites started as a fresh Python (no fork): its input and output are the pipes."""
    # Ctrl-C reaches every process of the terminal: the build stops the writer by closing its input.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The replies get stdout's pipe to themselves; anything printed goes to stderr.
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    _serve(sys.stdin.buffer, replies, Path(sys.argv[1]))
    # Every reply is flushed as it is written and the index is closed: ending here spares the build, which waits
    # for this process at its end, the interpreter's teardown.
    sys.stderr.flush()
    os._exit(0)


def _serve_forked_writes(requests_fd: int, replies_fd: int, path: Path) -> None:
    """The child of ProcessWrites forked from the build (forked.ForkedChild ends it)."""
    _serve(os.fdopen(requests_fd, "rb"), os.fdopen(replies_fd, "wb"), path)


def _serve(requests: IO[bytes], replies: IO[bytes], path: Path) -> None:
    """Run each request on a WorkingIndex until the input ends, then roll back."""
    index = WorkingIndex(path)
    failure: BaseException | None = None
    try:
        while True:
            try:
                method, args, wants_reply = pickle.load(requests)
            except EOFError:
                break
            try:
                status, value = "done", getattr(index, method)(*args)
            except Exception as error:
                status, value = "failed", error
                if not wants_reply:
                    failure = failure or error
            if wants_reply:
                replies.write(pickled_answer((status, value, failure)))
                replies.flush()
                failure = None
    finally:
        index.close()
        # The build's stop waits for this end of the replies, not for the process's exit (ProcessWrites.stop).
        with contextlib.suppress(OSError):
            replies.close()
