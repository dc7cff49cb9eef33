"""Work forked from the build's process (forked.py): the child keeps none of the build's pipes, its status says
how its work ended, it is made only where fork() is safe; the git history read in a forked child answers as a
read on a thread does, and a child killed before it answered costs the build nothing but the time to read again."""

from __future__ import annotations

import gc
import os
import select
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

import mkdocs_vault_mcp.build_steps.modified as modified
from helpers.git_repo import Repo
from helpers.processes import forked_children, state, wait_until_ended
from helpers.scripted_git import T0, count_subprocess_runs, isolate_git, record_git_runs
from mkdocs_vault_mcp import forked
from mkdocs_vault_mcp.build_steps.modified import GitTimesRead, read_git_times

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="only Linux forks a build"),
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]


@pytest.fixture(autouse=True)
def single_threaded() -> None:
    if not forked.can_fork():
        pytest.skip("another thread runs in this test process: nothing is forked")


def test_a_forked_child_keeps_none_of_the_builds_pipes_open():
    """A reader waits for a pipe's end until every copy of its write end is closed: a child holding one (git's
    output pipe, say) would keep the build's git read waiting for as long as the child lives."""
    read_end, write_end = os.pipe()
    child = forked.ForkedChild(lambda: time.sleep(30), keep_fds=())
    try:
        os.close(write_end)
        assert select.select([read_end], [], [], 10)[0] and os.read(read_end, 1) == b""  # the end, at once
    finally:
        os.close(read_end)
        child.kill()
    assert child.wait(timeout=10) == -signal.SIGKILL


def test_a_forked_childs_status_says_whether_its_work_returned(tmp_path):
    done = tmp_path / "done"
    assert forked.ForkedChild(done.touch, keep_fds=()).wait() == 0 and done.exists()
    assert forked.ForkedChild(lambda: 1 / 0, keep_fds=()).wait() == 1
    still_running = forked.ForkedChild(lambda: time.sleep(30), keep_fds=())
    try:
        assert still_running.poll() is None
        with pytest.raises(TimeoutError):
            still_running.wait(timeout=0.1)
    finally:
        still_running.kill()
        still_running.wait()


def test_nothing_is_forked_while_another_thread_runs():
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert not forked.can_fork()
    finally:
        release.set()
        other.join()
    assert forked.can_fork()


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Repo:
    isolate_git(monkeypatch, tmp_path / "home", tmp_path)
    monkeypatch.setattr(modified, "spare_cpu", lambda: True)
    repo = Repo(tmp_path / "repo")
    repo.commit(T0 + 1, ("docs/a.md", "1\n"), ("docs/b.md", "1\n"))
    repo.commit(T0 + 2, ("docs/a.md", "2\n"))
    return repo


def test_a_first_git_read_runs_in_a_forked_child_and_answers_as_a_read_here(repo, tmp_path, monkeypatch):
    docs = str(repo.root / "docs")
    cache = tmp_path / "cache" / "git-history.json"
    runs = record_git_runs(monkeypatch, tmp_path / "recording-git")
    here = count_subprocess_runs(monkeypatch)  # this process's runs only: a forked copy counts in its own copy
    before = forked_children()
    first = GitTimesRead(docs, cache)
    assert len(forked_children() - before) == 1  # no kept read to start from: a child reads
    times = first.result()
    assert len(runs.read_text().splitlines()) == 4 and here == []  # git ran, and not in this process
    assert times is not None and times == read_git_times(docs)
    assert times.author_times == {"a.md": T0 + 2, "b.md": T0 + 1}
    assert cache.exists()  # the child kept the read for the next build
    here.clear()
    before = forked_children()
    again = GitTimesRead(docs, cache)
    assert forked_children() <= before and again.result() == times  # a kept read: a thread reads it
    assert here, "no git run in this process"


def test_a_git_readers_exit_is_not_waited_for_once_it_has_answered(repo, tmp_path, monkeypatch):
    """The child's exit frees its copy of the build's memory, beside the build. Here the
    child does not end until the test lets it; its answer is there before."""
    send = modified._send_git_times
    may_end = tmp_path / "may-end"

    def send_then_linger(*args):
        send(*args)
        linger_until(may_end)

    monkeypatch.setattr(modified, "_send_git_times", send_then_linger)
    docs = str(repo.root / "docs")
    before = forked_children()
    reading = GitTimesRead(docs, tmp_path / "cache" / "git-history.json")
    (child,) = forked_children() - before
    assert reading.result() == read_git_times(docs)
    assert state(child) not in (None, "Z")  # answered while the child still runs
    may_end.touch()
    wait_until_ended(child)
    forked.reap_exited()
    assert state(child) is None  # collected: no zombie left


def test_a_git_reader_killed_before_it_answered_leaves_the_read_to_the_build(repo, tmp_path):
    docs = str(repo.root / "docs")
    before = forked_children()
    reading = GitTimesRead(docs, tmp_path / "cache" / "git-history.json")
    (child,) = forked_children() - before
    os.kill(child, signal.SIGKILL)
    assert reading.result() == read_git_times(docs)


class Unpicklable(Exception):
    def __reduce__(self):
        raise TypeError("not this one")


@pytest.mark.parametrize(
    ("error", "raised", "says"),
    [
        (OSError("the disk is gone"), OSError, "the disk is gone"),
        (Unpicklable("odd"), RuntimeError, r"Unpicklable\('odd'\)"),  # its text, where it does not pickle
    ],
    ids=["picklable", "unpicklable"],
)
def test_what_a_forked_git_read_raised_is_raised_by_result(repo, tmp_path, monkeypatch, error, raised, says):
    def failing_read(*args):
        raise error

    monkeypatch.setattr(modified, "read_git_times", failing_read)  # the child is a copy: it runs this too
    before = forked_children()
    reading = GitTimesRead(str(repo.root / "docs"), tmp_path / "cache" / "git-history.json")
    assert len(forked_children() - before) == 1
    with pytest.raises(raised, match=says):
        reading.result()
    with pytest.raises(raised, match=says):
        reading.result()  # the same failure again, not a second read


def test_a_git_read_with_a_kept_read_or_one_cpu_or_no_repository_stays_on_a_thread(repo, tmp_path, monkeypatch):
    docs = str(repo.root / "docs")
    cache = tmp_path / "cache" / "git-history.json"
    before = forked_children()
    unkept = GitTimesRead(docs)  # no cache file: a read for `serve SITE_DIR`, kept nowhere
    assert forked_children() <= before and unkept.result() == read_git_times(docs)
    outside = tmp_path / "outside" / "docs"  # no .git in it or above it: git would find no repository
    outside.mkdir(parents=True)
    elsewhere = GitTimesRead(str(outside), cache)
    assert forked_children() <= before and elsewhere.result() is None
    monkeypatch.setattr(modified, "spare_cpu", lambda: False)
    one_cpu = GitTimesRead(docs, cache)
    assert forked_children() <= before and one_cpu.result() == unkept.result()


def linger_until(may_end: Path) -> None:
    """In a forked child: do not end until the test creates `may_end` (or a minute has passed)."""
    deadline = time.monotonic() + 60
    while not may_end.exists() and time.monotonic() < deadline:
        time.sleep(0.01)


def no_process(*args):
    raise BlockingIOError(11, "Resource temporarily unavailable")  # fork()'s error at the limit on processes


def open_descriptors() -> int:
    gc.collect()  # an earlier test's unreferenced connection would close in the middle of the count
    return len(os.listdir("/proc/self/fd"))


def test_with_no_process_to_be_had_git_is_read_on_a_thread(repo, tmp_path, monkeypatch):
    docs = str(repo.root / "docs")
    before = open_descriptors()
    monkeypatch.setattr(os, "fork", no_process)
    reading = GitTimesRead(docs, tmp_path / "cache" / "git-history.json")
    answer = reading.result()  # counted once the thread's git processes are done with their pipes
    assert open_descriptors() == before  # the pipe for a child closed again
    monkeypatch.undo()
    assert answer == read_git_times(docs)
