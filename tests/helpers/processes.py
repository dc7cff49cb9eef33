"""This test process's children as Linux's /proc shows them: the copies of it that the package forks, seen from
outside, as any program would see them (not through the package's own objects)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from pathlib import Path

# How long a process may take to end after its parent did, before a test that left it fails.
GRACE_SECONDS = 5.0


def forked_children() -> set[int]:
    """Pids of the children this thread made that run this process's own program (by name): copies of it that
    were forked here, ended ones too until they are collected. Children that other threads start (git, run by a
    thread that reads on the side) are not listed, even between their fork and their exec, when they run this
    program too."""
    own = Path("/proc/self/comm").read_text()
    listed = Path(f"/proc/self/task/{threading.get_native_id()}/children").read_text().split()
    pids = set()
    for pid in map(int, listed):
        try:
            if Path(f"/proc/{pid}/comm").read_text() == own:
                pids.add(pid)
        except OSError:  # collected meanwhile
            pass
    return pids


def state(pid: int) -> str | None:
    """The process's state letter from /proc (R, S, Z for a zombie, ...), or None when no such process is left."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    return stat.rpartition(")")[2].split()[0]


def wait_until_ended(pid: int, timeout: float = 30) -> None:
    """Until the process has ended (a zombie, or gone); fails after `timeout` seconds, a guard against a hang."""
    deadline = time.monotonic() + timeout
    while state(pid) not in (None, "Z"):
        assert time.monotonic() < deadline, f"process {pid} still runs after {timeout} s"
        time.sleep(0.01)


class LeftBehind:
    """The processes that a test leaves running: those of this test run's process group (whatever their parent
    now: a process whose parent ended is handed to init, or to a subreaper, and keeps its group) that are not
    this process's descendants, i.e. whose parent ended before them. At the end of the run, also this
    process's own descendants that still run. Linux only (/proc); cheap: each process of another group is read
    once, those of the group present at the start never."""

    def __init__(self) -> None:
        self.available = Path("/proc/self/stat").exists()
        self.own = os.getpid()
        self.group = os.getpgid(0) if self.available else 0
        self.others: set[int] = set()  # processes of another group (their group never becomes this one)
        self.before: set[int] = set()  # the group's processes at the start (the shell's pipeline)
        if self.available:
            self.before = set(self.processes())

    def processes(self) -> dict[int, tuple[str, int]]:
        """pid -> (state, parent pid) of each process of the group, but this one and those there at the start."""
        pids = {int(name) for name in os.listdir("/proc") if name.isdigit()}
        self.others &= pids  # an ended process's pid may come back in the group
        self.before &= pids
        found = {}
        for pid in pids - self.others - self.before - {self.own}:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            except OSError:  # ended meanwhile
                continue
            if int(fields[2]) != self.group:
                self.others.add(pid)
            else:
                found[pid] = (fields[0], int(fields[1]))
        return found

    def running(self, descendants_too: bool) -> list[int]:
        """The processes left running (zombies aside): orphans, and with `descendants_too` this one's children
        and their own."""
        found = self.processes()
        left = []
        for pid, (state, parent) in found.items():
            while parent in found:
                parent = found[parent][1]
            if state != "Z" and (parent != self.own or descendants_too) and parent not in self.before:
                if parent == self.own and found[pid][1] == self.own and stdlib_helper(pid):
                    continue
                left.append(pid)
        return left

    def check(self, descendants_too: bool = False, grace: float = GRACE_SECONDS) -> None:
        """Fail, naming them, when processes are still left after `grace` seconds; they are killed first."""
        if not self.available:
            return
        deadline = time.monotonic() + grace
        left = self.running(descendants_too)
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = self.running(descendants_too)
        if not left:
            return
        described = [f"{pid} {command_line(pid)}" for pid in left]
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        raise AssertionError(f"{len(left)} processes left running: " + "; ".join(described))


# The fork server and resource tracker that multiprocessing starts for the writer's process in the builds this process
# runs in-process: they end when this process does (each reads a pipe only this process holds open), as they do at the
# end of every `mkdocs build`.
STDLIB_HELPERS = ("from multiprocessing.forkserver import main", "from multiprocessing.resource_tracker import main")


def stdlib_helper(pid: int) -> bool:
    return any(helper in command_line(pid) for helper in STDLIB_HELPERS)


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()[:200]
    except OSError:
        return "(ended)"
