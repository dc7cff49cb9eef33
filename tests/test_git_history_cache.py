"""The git history kept between builds: worked out again only when HEAD or the work tree's index
changed, and then the same as a read without it; uncommitted changes are seen in every build. (Which commits
git lists then: tests/test_git_catch_up.py.)"""

from __future__ import annotations

import shutil

from helpers.git_repo import Repo
from helpers.scripted_git import T0, count_subprocess_runs, isolate_git
from mkdocs_vault_mcp.build_steps.modified import read_git_times


def log_runs(calls) -> int:
    """How many walks of the history (a `git log` with its changes; each comes with a listing of its commits)."""
    return sum("--name-status" in args for args, _ in calls)


def test_history_is_read_again_only_when_head_or_the_index_changed(tmp_path, monkeypatch):
    isolate_git(monkeypatch, tmp_path / "home", tmp_path)
    repo = Repo(tmp_path / "repo")
    repo.commit(T0 + 1, ("docs/a.md", "1\n"), ("docs/b.md", "1\n"))
    docs = str(repo.root / "docs")
    cache = tmp_path / "cache" / "git-history.json"
    calls = count_subprocess_runs(monkeypatch)

    first = read_git_times(docs, cache)
    assert first is not None and first == read_git_times(docs) and log_runs(calls) == 2
    assert read_git_times(docs, cache) == first and log_runs(calls) == 2  # nothing changed: not read again

    repo.write("docs/a.md", "edited, not committed\n")
    edited = read_git_times(docs, cache)
    assert edited is not None
    assert edited.dirty == {"a.md"} and edited.author_times == first.author_times and log_runs(calls) == 2

    repo.commit(T0 + 5, ("docs/a.md", "2\n"))  # a new HEAD: git lists the new commit alone
    after_commit = read_git_times(docs, cache)
    assert after_commit is not None and after_commit == read_git_times(docs) and log_runs(calls) == 4
    assert after_commit.author_times == {"a.md": T0 + 5, "b.md": T0 + 1} and after_commit.dirty == set()

    repo.write("docs/c.md", "new\n")
    repo.git("add", "docs/c.md")  # the index changed, HEAD did not: the kept commits serve, no log
    staged = read_git_times(docs, cache)
    assert staged == read_git_times(docs) and log_runs(calls) == 5


def test_the_kept_file_serves_a_new_process_and_a_damaged_one_is_read_again(tmp_path, monkeypatch):
    isolate_git(monkeypatch, tmp_path / "home", tmp_path)
    repo = Repo(tmp_path / "repo")
    repo.commit(T0 + 1, ("docs/a.md", "1\n"))
    repo.commit(T0 + 2, ("docs/a.md", "2\n"), ("docs/b.md", "1\n"))
    docs = str(repo.root / "docs")
    cache = tmp_path / "cache" / "git-history.json"
    expected = read_git_times(docs, cache)
    calls = count_subprocess_runs(monkeypatch)

    # Another cache file path is what a new `mkdocs build` process sees: nothing in memory, the file on disk.
    copy = tmp_path / "other" / "git-history.json"
    copy.parent.mkdir()
    shutil.copy(cache, copy)
    assert read_git_times(docs, copy) == expected and log_runs(calls) == 0

    damaged = tmp_path / "damaged" / "git-history.json"
    damaged.parent.mkdir()
    damaged.write_text('{"key": ')
    assert read_git_times(docs, damaged) == expected and log_runs(calls) == 1
