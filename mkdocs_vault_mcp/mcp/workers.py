"""A group of worker processes forked from this one, each serving on the same port, supervised until SIGINT or
SIGTERM stops them all (`serve_from_processes`, for `serve --workers N`).

Forked, not spawned: the server and its tools are built once, before. It needs `os.fork` and SO_REUSEPORT
(`unavailable()` says when this platform lacks either).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, NoReturn


class WorkersFailed(Exception):
    """The worker processes kept ending soon after they started; the message says how often."""


# A worker that ends is replaced; this many replacements within RESTART_WINDOW seconds mean the workers cannot
# serve (a fault each new one meets), and the parent stops rather than fork for ever.
RESTARTS_PER_WINDOW = 5
RESTART_WINDOW = 60.0


def unavailable() -> str | None:
    """What this platform lacks to serve from several processes, or None when it has all (Windows has neither)."""
    lacking = [
        name
        for name, present in (("os.fork", hasattr(os, "fork")), ("SO_REUSEPORT", hasattr(socket, "SO_REUSEPORT")))
        if not present
    ]
    return " and ".join(lacking) or None


def serve_from_processes(serve: Callable[[Callable[[], None]], None], workers: int, ready_line: str) -> None:
    """Fork `workers` processes that each `serve`, print `ready_line` once all listen (each calls the function
    `serve` is given once it does), and supervise them until SIGINT or SIGTERM to this process stops them all.

    A worker that ends otherwise is replaced; when replacements keep ending (RESTARTS_PER_WINDOW within
    RESTART_WINDOW seconds) the others are stopped and WorkersFailed raised. A worker ends when this process
    does, whatever ended it (SIGKILL too): it watches a pipe whose writing end only this process holds, so that
    no orphaned worker keeps the port.

    Forked, not spawned: the server and its tools are built once, before, and each process opens its own
    read-only connections to the index when it first answers (SQLite connections must not cross a fork).
    """
    group = WorkerGroup(serve)
    for _ in range(workers):
        group.fork_worker(announce=True)
    group.all_forked()
    signal.signal(signal.SIGINT, group.stop)
    signal.signal(signal.SIGTERM, group.stop)
    started = group.count_listening(workers)
    if started < workers:  # a worker could not take the port (it said why on stderr)
        group.stop()
        group.reap()
        raise OSError(f"only {started} of {workers} worker processes could listen")
    print(ready_line, flush=True)
    group.supervise()


class WorkerGroup:
    """The worker processes and the two pipes between them and this process: `ready`, on which each first worker
    writes once it listens, and `alive`, never written, whose end tells the workers this process ended."""

    def __init__(self, serve: Callable[[Callable[[], None]], None]) -> None:
        self.serve = serve
        self.ready_in, self.ready_out = os.pipe()
        self.alive_in, self.alive_out = os.pipe()
        self.children: set[int] = set()
        self.stopping = False

    def fork_worker(self, announce: bool) -> int:
        """A new worker; `announce`: it writes on the `ready` pipe once it listens (the first workers only)."""
        pid = os.fork()
        if pid == 0:
            self._be_worker(announce)
        self.children.add(pid)
        return pid

    def _be_worker(self, announce: bool) -> NoReturn:
        """In the forked child: serve, then end the process (it never returns into the parent's code)."""
        status = 1
        try:
            # The parent's handlers stop its workers: in a worker, until uvicorn sets its own, the default's.
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            os.close(self.alive_out)
            if announce:
                os.close(self.ready_in)
            _end_with_parent(self.alive_in)

            def listening() -> None:
                if announce:
                    os.write(self.ready_out, b"+")
                    os.close(self.ready_out)

            self.serve(listening)  # uvicorn handles SIGINT and SIGTERM itself, and ends its requests
            status = 0
        finally:
            os._exit(status)

    def all_forked(self) -> None:
        """The first workers are forked: only they hold the `ready` pipe's writing end now."""
        os.close(self.ready_out)

    def count_listening(self, workers: int) -> int:
        """Wait until `workers` workers listen, or the rest have ended without; how many listen."""
        started = 0
        while started < workers:
            signals = os.read(self.ready_in, workers)
            if not signals:
                break
            started += len(signals)
        os.close(self.ready_in)
        return started

    def stop(self, signum: int = signal.SIGTERM, frame: Any = None) -> None:
        """Stop every worker (as the handler of SIGINT and SIGTERM to this process, too)."""
        self.stopping = True
        for child in self.children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGTERM)

    def reap(self) -> None:
        """Wait for every worker to end."""
        for child in list(self.children):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child, 0)

    def supervise(self) -> None:
        """Replace each worker that ends, until stopped; raise WorkersFailed when replacements keep ending."""
        restarts: list[float] = []
        while self.children:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                return
            except InterruptedError:
                continue
            self.children.discard(pid)
            if self.stopping:
                continue
            now = time.monotonic()
            restarts = [moment for moment in restarts if moment > now - RESTART_WINDOW] + [now]
            ended = describe_exit(status)
            if len(restarts) > RESTARTS_PER_WINDOW:
                self.stop()
                self.reap()
                raise WorkersFailed(
                    f"worker processes ended {len(restarts)} times within {RESTART_WINDOW:g} seconds (the last one "
                    f"{ended}); stopped. The log above says why."
                )
            print(f"mkdocs-vault-mcp: worker process {pid} {ended}; starting another", file=sys.stderr, flush=True)
            self.fork_worker(announce=False)


def _end_with_parent(alive: int) -> None:
    """In a worker: stop (as SIGTERM does) when the pipe `alive` ends, i.e. when the parent process has ended (if
    it ended before this worker watched, at once)."""

    def watch() -> None:
        with contextlib.suppress(OSError):
            os.read(alive, 1)  # returns when the last writing end, the parent's, is closed
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)  # uvicorn ends its requests first; a worker that has not ended by then is ended
        os._exit(1)

    threading.Thread(target=watch, name="vault-mcp-parent-watch", daemon=True).start()


def describe_exit(status: int) -> str:
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
        return f"was killed by signal {-code}"
    return f"exited with status {code}"
