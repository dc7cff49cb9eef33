"""The git history read beside the build (build_steps/modified.py's GitTimesRead, on a thread of the build's
process that waits for git: child_processes.Beside): it answers as a read on the build's own thread does, keeps
its read for the next build, raises what the read raised, and leaves no process behind, MkDocs' never forked."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

import mkdocs_vault_mcp.build_steps.modified as modified
from helpers.git_repo import Repo
from helpers.processes import forked_children
from helpers.scripted_git import T0, isolate_git, record_git_runs
from mkdocs_vault_mcp.build_steps.modified import GitTimesRead, read_git_times

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Repo:
    isolate_git(monkeypatch, tmp_path / "home", tmp_path)
    repo = Repo(tmp_path / "repo")
    repo.commit(T0 + 1, ("docs/a.md", "1\n"), ("docs/b.md", "1\n"))
    repo.commit(T0 + 2, ("docs/a.md", "2\n"))
    return repo


def running_children() -> set[int]:
    """Pids of this process's children, whichever thread started them, that have not been collected."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        try:
            found |= {int(pid) for pid in (task / "children").read_text().split()}
        except OSError:  # the thread ended meanwhile
            continue
    return found


def test_a_first_git_read_answers_as_a_read_here_and_keeps_it_for_the_next_build(repo, tmp_path, monkeypatch):
    docs = str(repo.root / "docs")
    cache = tmp_path / "cache" / "git-history.json"
    runs = record_git_runs(monkeypatch, tmp_path / "recording-git")
    first = GitTimesRead(docs, cache)
    times = first.result()
    assert len(runs.read_text().splitlines()) == 4  # where, the two passes of the log, status
    assert times is not None and times == read_git_times(docs)
    assert times.author_times == {"a.md": T0 + 2, "b.md": T0 + 1}
    assert cache.exists()  # kept for the next build
    again = GitTimesRead(docs, cache)
    assert again.result() == times
    assert first.done() and again.done()


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="children are read from Linux's /proc")
def test_a_git_read_forks_nothing_and_leaves_no_process_once_it_answered(repo, tmp_path):
    before = running_children()
    forked_before = forked_children()
    reading = GitTimesRead(str(repo.root / "docs"), tmp_path / "cache" / "git-history.json")
    assert forked_children() <= forked_before  # no copy of this process: git runs as a program of its own
    assert reading.result() is not None
    assert running_children() <= before  # every git it ran has ended and been collected


class Refused(Exception):
    pass


def test_what_the_git_read_raised_is_raised_by_result_each_time(repo, tmp_path, monkeypatch):
    reads = []

    def failing_read(*args):
        reads.append(threading.current_thread().name)
        raise Refused("the disk is gone")

    monkeypatch.setattr(modified, "read_git_times", failing_read)
    reading = GitTimesRead(str(repo.root / "docs"), tmp_path / "cache" / "git-history.json")
    with pytest.raises(Refused, match="the disk is gone"):
        reading.result()
    with pytest.raises(Refused, match="the disk is gone"):
        reading.result()  # the same failure again, not a second read
    assert reads == ["vault-mcp git history"]  # read once, beside the caller's thread


def test_a_git_read_outside_any_repository_answers_none(tmp_path, monkeypatch):
    isolate_git(monkeypatch, tmp_path / "home", tmp_path)
    outside = tmp_path / "outside" / "docs"
    outside.mkdir(parents=True)
    assert GitTimesRead(str(outside), tmp_path / "cache" / "git-history.json").result() is None
