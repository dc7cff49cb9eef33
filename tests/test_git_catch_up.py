"""A new HEAD after a kept read: when the new commits lead in a single line from the kept HEAD, git
lists only them and the kept commits serve for the rest; the dates and histories are those of a whole read
(and of `git log -- FILE`). Anything else (a merge, HEAD moved back, a rewritten commit, too many new
commits, a damaged kept file) reads the whole history, with the same result."""

from __future__ import annotations

import json
import random

import pytest

import mkdocs_vault_mcp.build_steps.modified as modified
from helpers.git_repo import Repo, assert_agrees_with_git_log, files_at_head, random_history
from helpers.scripted_git import T0, count_subprocess_runs, isolate_git
from mkdocs_vault_mcp.build_steps.modified import read_git_times


@pytest.fixture(autouse=True)
def isolated_git(tmp_path, monkeypatch):
    isolate_git(monkeypatch, tmp_path / "home", ceiling=tmp_path)


def logs(calls) -> list[list[str]]:
    return [args for args, _ in calls if "log" in args]


def caught_up(calls) -> bool:
    """Whether the reads since `calls` was last cleared listed only new commits (no whole log)."""
    runs = logs(calls)
    return bool(runs) and all("--not" in args for args in runs)


def assert_same_as_a_whole_read(docs, times) -> None:
    assert times == read_git_times(str(docs))  # no cache: one whole pass (against git log: test_history.py)
    assert_agrees_with_git_log(docs, times)


def test_commits_in_a_line_are_listed_alone_on_random_histories(tmp_path, monkeypatch):
    """Random histories (merges of any resolution, octopus merges, clock skew), then commits on top that edit,
    delete and add back files, some with a long history before; after each, only the new commits are listed."""
    names = ["a.md", "b.md", "Ünïcödé dir/c d.md", "e/f.md", "g.md"]
    for seed in range(3):
        rnd = random.Random(seed)
        repo = random_history(tmp_path / f"random{seed}", rnd)
        docs = repo.root / "docs"
        cache = tmp_path / f"cache{seed}" / "git-history.json"
        read_git_times(str(docs), cache)
        calls = count_subprocess_runs(monkeypatch)
        clock = T0 + 100_000
        for step in range(6):
            for _ in range(rnd.randint(1, 3)):
                clock += rnd.randint(-500, 2000)
                path = "docs/" + rnd.choice(names)
                if (repo.root / path).exists() and rnd.random() < 0.3:
                    (repo.root / path).unlink()
                else:
                    repo.write(path, f"{step} {rnd.random()}\n")
                repo.git("add", "-A")
                repo.git(
                    "commit",
                    "-q",
                    "--allow-empty",
                    "-m",
                    f"step {step}",
                    when=clock,
                    author=clock - rnd.randint(0, 3000),
                )
            calls.clear()
            times = read_git_times(str(docs), cache)
            assert caught_up(calls), (seed, step)
            if files_at_head(docs):
                assert_same_as_a_whole_read(docs, times)
            else:
                assert times == read_git_times(str(docs))


def test_a_long_history_then_one_commit_lists_one_commit(tmp_path, monkeypatch):
    repo = Repo(tmp_path / "repo")
    for n in range(60):  # each page changed often: more than HISTORY_LENGTH commits each
        repo.commit(T0 + n, (f"docs/page{n % 4}.md", f"{n}\n"), ("outside.md", f"{n}\n"))
    docs = repo.root / "docs"
    cache = tmp_path / "cache" / "git-history.json"
    read_git_times(str(docs), cache)
    old_head = repo.git("rev-parse", "HEAD").stdout.strip()
    repo.commit(T0 + 100, ("docs/page1.md", "new\n"), ("docs/added.md", "new\n"))
    calls = count_subprocess_runs(monkeypatch)
    times = read_git_times(str(docs), cache)
    assert caught_up(calls) and old_head in logs(calls)[0]
    assert times is not None and times.author_times["page1.md"] == times.author_times["added.md"] == T0 + 100
    assert [t for t, _, _ in times.history["page1.md"]] == [T0 + 100, *[T0 + n for n in range(57, 24, -4)]]
    assert_same_as_a_whole_read(docs, times)


def whole_reads_after(tmp_path, monkeypatch, change) -> None:
    """After a kept read and `change(repo)`, the whole log is read and gives a whole read's answer."""
    repo = Repo(tmp_path / "repo")
    repo.commit(T0 + 1, ("docs/a.md", "1\n"), ("docs/b.md", "1\n"))
    repo.commit(T0 + 2, ("docs/a.md", "2\n"))
    docs = repo.root / "docs"
    cache = tmp_path / "cache" / "git-history.json"
    assert read_git_times(str(docs), cache) is not None
    change(repo, cache)
    calls = count_subprocess_runs(monkeypatch)
    times = read_git_times(str(docs), cache)
    assert any("--not" not in args for args in logs(calls))  # the whole log
    assert_same_as_a_whole_read(docs, times)


def test_a_merge_reads_the_whole_history(tmp_path, monkeypatch):
    def merge(repo, cache):
        repo.git("checkout", "-q", "-b", "side", "HEAD~1")
        repo.commit(T0 + 3, ("docs/b.md", "side\n"))
        repo.git("checkout", "-q", "main")
        repo.merge(T0 + 4, "side")

    whole_reads_after(tmp_path, monkeypatch, merge)


def test_head_moved_back_reads_the_whole_history(tmp_path, monkeypatch):
    whole_reads_after(tmp_path, monkeypatch, lambda repo, cache: repo.git("reset", "-q", "--hard", "HEAD~1"))


def test_a_rewritten_commit_reads_the_whole_history(tmp_path, monkeypatch):
    def amend(repo, cache):
        repo.write("docs/b.md", "amended\n")
        repo.git("add", "-A")
        repo.git("commit", "-q", "--amend", "--no-edit", when=T0 + 9, author=T0 + 9)

    whole_reads_after(tmp_path, monkeypatch, amend)


def test_a_kept_head_that_is_gone_reads_the_whole_history(tmp_path, monkeypatch):
    def forget(repo, cache):
        kept = cache.with_name("git-history-commits.json")
        data = json.loads(kept.read_text())
        data["head"] = "0123456789" * 4  # a commit this repository does not have
        kept.write_text(json.dumps(data))
        repo.commit(T0 + 5, ("docs/a.md", "5\n"))

    whole_reads_after(tmp_path, monkeypatch, forget)


def test_a_damaged_kept_file_reads_the_whole_history(tmp_path, monkeypatch):
    def damage(repo, cache):
        cache.with_name("git-history-commits.json").write_text('{"key": [2], "head": ')
        repo.commit(T0 + 5, ("docs/a.md", "5\n"))

    whole_reads_after(tmp_path, monkeypatch, damage)


def test_more_new_commits_than_the_limit_read_the_whole_history(tmp_path, monkeypatch):
    monkeypatch.setattr(modified, "_CATCH_UP_LIMIT", 2)

    def three_commits(repo, cache):
        for n in range(3):
            repo.commit(T0 + 10 + n, ("docs/b.md", f"{n}\n"))

    whole_reads_after(tmp_path, monkeypatch, three_commits)


def test_the_index_alone_changed_walks_the_kept_commits_without_git_log(tmp_path, monkeypatch):
    repo = Repo(tmp_path / "repo")
    repo.commit(T0 + 1, ("docs/a.md", "1\n"))
    docs = repo.root / "docs"
    cache = tmp_path / "cache" / "git-history.json"
    read_git_times(str(docs), cache)
    kept = cache.with_name("git-history-commits.json")
    written = kept.read_bytes(), kept.stat().st_mtime_ns
    repo.write("docs/b.md", "staged\n")
    repo.git("add", "docs/b.md")
    calls = count_subprocess_runs(monkeypatch)
    times = read_git_times(str(docs), cache)
    assert not logs(calls) and (kept.read_bytes(), kept.stat().st_mtime_ns) == written  # not written again
    assert times == read_git_times(str(docs)) and times is not None and times.dirty == {"b.md"}
