"""This test process's children as Linux's /proc shows them: the copies of it that the package forks, seen from
outside, as any program would see them (not through the package's own objects)."""

from __future__ import annotations

import threading
import time
from pathlib import Path


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
