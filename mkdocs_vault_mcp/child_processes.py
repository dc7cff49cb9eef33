"""Work on the other CPU in a copy of the build's process, made by fork(): the git history's read, and the index
writer's process.

A fresh Python (subprocess) spends a noticeable share of a small site's build starting and importing what the
writer needs; a forked copy has all of it imported already, and its start costs the build little more than the
copy-on-write of the memory it then touches. Where the copy is not safe, the caller does the work as it
would without it:

- only on Linux (macOS' system libraries are not fork-safe; Windows has no fork);
- only while the build's thread is the process's only one: fork() copies the calling thread alone, so a lock
  that another thread held then (the logging module's, SQLite's, an allocator's) would stay held in the child.
  Under `mkdocs serve` the server's threads always run, and anything that started a thread first (a plugin, the
  test runner) gets the fallback too.

The child opens no SQLite database that the build holds a transaction on at the fork (SQLite keeps its locks per
process, and the copy of them in the child would never be released): the build has none open at either fork.

The child closes every file descriptor it did not get to keep, so that no pipe of the build's stays open in it
(a reader waiting for its end would wait for the child), closes its standard streams once its work is done, and
ends with os._exit: neither the atexit handlers nor the buffered output of the build's process run twice.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable


def spare_cpu() -> bool:
    """Whether this process may run on more than one CPU, so that a child process runs beside MkDocs, not in turns."""
    try:
        return len(os.sched_getaffinity(0)) > 1
    except AttributeError:  # not Linux
        return (os.cpu_count() or 1) > 1


def can_fork() -> bool:
    """Whether a child may be forked from here now: on Linux, from a process of one thread."""
    return sys.platform == "linux" and threading.active_count() == 1


class ForkedChild:
    """A forked child that runs `work()` and ends: with status 0 when it returned, 1 when it raised. The same
    waiting methods as subprocess.Popen's that the callers use: `poll`, `wait`, `kill`, `pid`."""

    def __init__(self, work: Callable[[], object], keep_fds: tuple[int, ...]) -> None:
        """`keep_fds`: the descriptors the child works with (besides 0, 1 and 2); it closes the others. Raises
        OSError when no process can be made (a limit on processes, no memory)."""
        self.returncode: int | None = None
        pid = os.fork()
        if pid == 0:  # the child
            status = 1
            try:
                # The build's objects, as the fork found them, are left out of this copy's garbage collections,
                # which would otherwise write to (and so copy) every page of the build's memory that holds one.
                gc.freeze()
                # Ctrl-C reaches every process of the terminal; the build stops its children itself.
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                _close_all_but(keep_fds)
                work()
                status = 0
            finally:
                with contextlib.suppress(Exception):
                    sys.stderr.flush()
                # Whoever reads the build's output (a terminal's pipe, a CI log) waits until every copy of it is
                # closed: not for this copy's exit, which takes a while to free its memory.
                os.closerange(0, 3)
                os._exit(status)
        self.pid = pid

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """The child's exit status (a signal's number negated); TimeoutError when it runs past `timeout`."""
        if self.returncode is None and timeout is None:
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        deadline = time.monotonic() + (timeout or 0)
        while self.poll() is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"process {self.pid} still runs after {timeout} s")
            time.sleep(0.01)
        return self.returncode  # type: ignore[return-value]

    def kill(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(Exception):
                os.kill(self.pid, signal.SIGKILL)

    def exit_unwaited(self) -> None:
        """Let the child end without the build waiting for it: its work is done, and its exit (the kernel freeing
        its copy of the build's memory) runs beside the build. A later
        `reap_exited()` collects it, or init once the build's process has ended."""
        with _exiting_lock:
            _exiting.append(self)


# Children whose work is done and whose exit nobody waited for; the lock, as reap_in_background waits on a thread.
_exiting: list[ForkedChild] = []
_exiting_lock = threading.Lock()


def reap_exited() -> None:
    """Forget the unwaited children that have ended (collecting their status, so that none stays a zombie)."""
    with _exiting_lock:
        _exiting[:] = [child for child in _exiting if child.poll() is None]


def reap_in_background() -> None:
    """Collect every unwaited child, now or, for those still exiting, on a daemon thread as each ends. For a
    process that goes on after its build (`mkdocs serve`): no later build may come to reap them, and each would
    stay a zombie (`[mkdocs] <defunct>`) for as long as the server runs."""
    reap_exited()
    with _exiting_lock:
        exiting, _exiting[:] = list(_exiting), []
    if exiting:
        threading.Thread(target=_wait_for_all, args=(exiting,), name="vault-mcp reaper", daemon=True).start()


def _wait_for_all(children: list[ForkedChild]) -> None:
    for child in children:
        with contextlib.suppress(ChildProcessError):
            child.wait()


def pickled_answer(message: tuple[object, ...]) -> bytes:
    """A child's answer to the build, pickled; an exception in it that does not pickle goes as its text."""
    try:
        return pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return pickle.dumps(
            tuple(RuntimeError(repr(part)) if isinstance(part, BaseException) else part for part in message),
            protocol=pickle.HIGHEST_PROTOCOL,
        )


def _close_all_but(keep_fds: tuple[int, ...]) -> None:
    start = 3
    for fd in sorted(keep_fds):
        os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, os.sysconf("SC_OPEN_MAX"))
