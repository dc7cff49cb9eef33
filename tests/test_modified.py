"""mkdocs_vault_mcp.build_steps.modified against real git repositories built in tmp_path (no mocks).

The reference for a file's git time is always `git log -1 --format=%at -- FILE`, run per file."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from helpers.git_repo import HISTORY_DOCS, UNICODE_DIR, Repo, assert_agrees_with_git_log, random_history
from helpers.scripted_git import T0, count_subprocess_runs, isolate_git
from mkdocs_vault_mcp.build_steps.modified import GitTimes, modified_instant, read_git_times

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

UTC = UTC


@pytest.fixture(autouse=True)
def isolated_git(tmp_path, monkeypatch):
    isolate_git(monkeypatch, tmp_path / "home", ceiling=tmp_path)  # each repository is below tmp_path


# Expected git time of every page at the end of `history`, with the reason.
EXPECTED = {
    "index.md": T0 + 400,  # changed on a branch merged with --no-ff: the branch commit, not the merge
    "feature.md": T0 + 400,  # added on that branch
    "guide.md": T0 + 50,  # author date T0+50, committer date T0+200
    f"{UNICODE_DIR}/my page.md": T0 + 500,
    "new-name.md": T0 + 700,  # renamed: the rename commit
    "conflict.md": T0 + 1000,  # conflict resolved with new text: the merge commit itself
    "theirs.md": T0 + 1100,  # conflict resolved with the branch's (older) version: the branch commit
    "twin.md": T0 + 1400,  # same change on both sides: git follows the first parent
    "octopus.md": T0 + 1700,  # octopus merge, same change on both merged branches: the first of them
    "HEAD": T0 + 1800,  # a file named like a revision, added on the octopus's last branch only
    "skew.md": T0 + 10,  # committed with a clock earlier than its parent's
}


def test_history_scenarios_give_the_expected_times(history):
    times = read_git_times(str(history.root / HISTORY_DOCS))
    assert times is not None
    assert times.author_times == EXPECTED  # old-name.md is gone; README.md is outside docs_dir


def test_every_tracked_file_agrees_with_git_log(history):
    docs = history.root / HISTORY_DOCS
    assert_agrees_with_git_log(docs, read_git_times(str(docs)))


def test_dirty_set_holds_uncommitted_and_untracked_files(history):
    times = read_git_times(str(history.root / HISTORY_DOCS))
    assert times is not None
    assert times.dirty == {"index.md", "guide.md", f"{UNICODE_DIR}/new draft.md", "drafts/idea.md"}
    assert isinstance(times.dirty, frozenset)


def test_reading_git_times_takes_the_same_few_git_processes_for_any_history(history, tmp_path, monkeypatch):
    small = Repo(tmp_path / "small")
    small.commit(T0, ("docs/a.md", "a\n"))
    calls = count_subprocess_runs(monkeypatch)
    assert read_git_times(str(small.root / "docs")) is not None
    small_count = len(calls)
    calls.clear()
    assert read_git_times(str(history.root / HISTORY_DOCS)) is not None
    assert len(calls) == small_count <= 4
    assert sum("--name-status" in args for args, _ in calls) == 1  # the whole history in one walk
    assert sum("log" in args for args, _ in calls) == 2  # and a listing of the commits' authors
    for args, kwargs in calls:
        assert args[0] == "git"
        assert kwargs["capture_output"] and kwargs["timeout"] and kwargs["stdin"] == subprocess.DEVNULL
        assert kwargs["env"]["GIT_OPTIONAL_LOCKS"] == "0" and kwargs["env"]["GIT_TERMINAL_PROMPT"] == "0"


def test_a_docs_dir_at_the_top_of_the_repository_gets_its_git_times(tmp_path):
    repo = Repo(tmp_path / "top")
    repo.commit(T0 + 1, ("index.md", "1\n"), (f"{UNICODE_DIR}/page.md", "1\n"))
    repo.git("checkout", "-q", "-b", "side")
    repo.commit(T0 + 2, (f"{UNICODE_DIR}/page.md", "2\n"))
    repo.git("checkout", "-q", "main")
    repo.commit(T0 + 3, ("index.md", "3\n"))
    repo.merge(T0 + 4, "side")
    times = read_git_times(str(repo.root))
    assert times is not None
    assert times.author_times == {"index.md": T0 + 3, f"{UNICODE_DIR}/page.md": T0 + 2}
    assert_agrees_with_git_log(repo.root, times)


def test_user_config_and_hook_environment_do_not_change_the_result(history, tmp_path, monkeypatch):
    docs = history.root / HISTORY_DOCS
    expected = read_git_times(str(docs))
    hostile = tmp_path / "hostile.gitconfig"
    hostile.write_text(
        "[log]\n decorate = full\n abbrevCommit = true\n showRoot = false\n diffMerges = first-parent\n"
        "[color]\n ui = always\n[diff]\n renames = copies\n relative = true\n noprefix = true\n"
        "[status]\n showUntrackedFiles = no\n renames = true\n relativePaths = true\n"
        "[core]\n quotePath = true\n pager = false\n"
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(hostile))
    other = Repo(tmp_path / "other")  # what a git hook's GIT_DIR would point at
    other.commit(T0, ("x.md", "x\n"))
    monkeypatch.setenv("GIT_DIR", str(other.root / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other.root / ".git" / "index"))
    assert read_git_times(str(docs)) == expected


def test_a_repository_without_commits_has_no_times_and_every_file_dirty(tmp_path):
    repo = Repo(tmp_path / "fresh")
    repo.write("docs/a b.md", "draft\n")
    assert read_git_times(str(repo.root / "docs")) == GitTimes({}, frozenset({"a b.md"}), {})


def test_outside_a_repository_or_without_git_there_are_no_git_times_and_no_output(tmp_path, monkeypatch, capsys):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert read_git_times(str(plain)) is None
    assert read_git_times(str(tmp_path / "missing")) is None
    repo = Repo(tmp_path / "repo")
    assert read_git_times(str(repo.root / ".git")) is None  # inside git's own directory, not a work tree
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    assert read_git_times(str(repo.root)) is None
    assert capsys.readouterr() == ("", "")


def test_random_histories_agree_with_git_log(tmp_path):
    """Arbitrary merge resolutions, octopus merges, deletions, re-additions and clock skew, built
    with plumbing so any tree can follow any parents."""
    for seed in range(4):
        repo = random_history(tmp_path / f"random{seed}", random.Random(seed))
        if (repo.root / "docs").is_dir():
            assert_agrees_with_git_log(repo.root / "docs", read_git_times(str(repo.root / "docs")))


# ---- modified_instant ----

MTIME_NS = 1_700_000_000_123_456_789
MTIME = datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=UTC)  # MTIME_NS, to the microsecond


@pytest.fixture
def pages(tmp_path) -> tuple[Path, GitTimes | None]:
    repo = Repo(tmp_path / "pages")
    repo.commit(T0 + 60, ("docs/clean.md", "c\n"), ("docs/dirty.md", "d\n"), ("docs/time.md", "t\n"), author=T0 + 30)
    repo.write("docs/dirty.md", "changed\n")
    repo.write("docs/untracked.md", "new\n")
    docs = repo.root / "docs"
    for page in docs.iterdir():
        os.utime(page, ns=(MTIME_NS, MTIME_NS))
    return docs, read_git_times(str(docs))


def instant(docs: Path, git: GitTimes | None, name: str, mode: str, meta=None, key=None):
    return modified_instant(name, str(docs / name), mode, git, meta or {}, key)


GIT_TIME = datetime.fromtimestamp(T0 + 30, UTC)


@pytest.mark.parametrize(
    ("name", "mode", "expected"),
    [
        ("clean.md", "auto", (GIT_TIME, "git")),
        ("dirty.md", "auto", (MTIME, "mtime")),
        ("untracked.md", "auto", (MTIME, "mtime")),
        ("clean.md", "git", (GIT_TIME, "git")),
        ("dirty.md", "git", (GIT_TIME, "git")),
        ("untracked.md", "git", (MTIME, "mtime")),
        ("clean.md", "mtime", (MTIME, "mtime")),
        ("untracked.md", "mtime", (MTIME, "mtime")),
    ],
)
def test_each_modified_mode_takes_the_time_from_its_source(pages, name, mode, expected):
    docs, git = pages
    assert git.dirty == {"dirty.md", "untracked.md"}
    result = instant(docs, git, name, mode)
    assert result == expected
    assert result[0].utcoffset() == timedelta(0)


def test_the_mtime_is_kept_to_the_microsecond(pages):
    docs, git = pages
    when, _ = instant(docs, git, "clean.md", "mtime")
    assert when.microsecond == 123456
    mtime_us = os.stat(docs / "clean.md").st_mtime_ns // 1000
    assert when == datetime.fromtimestamp(0, UTC) + timedelta(microseconds=mtime_us)


def test_without_git_every_mode_falls_back_to_mtime(pages):
    docs, _ = pages
    for mode in ("auto", "git", "mtime"):
        assert instant(docs, None, "clean.md", mode) == (MTIME, "mtime")


def test_a_generated_page_is_dated_now(pages):
    _, git = pages
    before = datetime.now(UTC)
    when, source = modified_instant("generated.md", None, "auto", git, {}, None)
    assert source == "mtime" and before <= when <= datetime.now(UTC) and when.utcoffset() == timedelta(0)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (date(2024, 1, 2), datetime(2024, 1, 2, tzinfo=UTC)),
        (datetime(2024, 1, 2, 3, 4, 5), datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        (datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2))), datetime(2024, 1, 2, 1, 4, 5, tzinfo=UTC)),
        ("2024-01-02", datetime(2024, 1, 2, tzinfo=UTC)),
        ("2024-01-02T03:04:05", datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2024-01-02T03:04:05-05:30", datetime(2024, 1, 2, 8, 34, 5, tzinfo=UTC)),
    ],
)
def test_a_front_matter_date_wins_over_git_and_mtime_in_every_mode(pages, value, expected):
    docs, git = pages
    for mode in ("auto", "git", "mtime"):
        when, source = instant(docs, git, "clean.md", mode, {"updated": value}, "updated")
        assert (when, source) == (expected, "meta")
        assert when.utcoffset() == timedelta(0)
    assert modified_instant("gen.md", None, "auto", git, {"updated": value}, "updated") == (expected, "meta")


@pytest.mark.parametrize(
    "value", ["yesterday", "2024-13-45", "", 1_700_000_000, 3.5, True, None, ["2024-01-02"], {"date": "2024-01-02"}]
)
def test_other_front_matter_values_are_ignored(pages, value):
    docs, git = pages
    assert instant(docs, git, "clean.md", "auto", {"updated": value}, "updated") == (GIT_TIME, "git")


def test_front_matter_only_under_the_configured_key(pages):
    docs, git = pages
    meta = {"updated": date(2024, 1, 2)}
    assert instant(docs, git, "clean.md", "auto", meta, None) == (GIT_TIME, "git")
    assert instant(docs, git, "clean.md", "auto", meta, "modified") == (GIT_TIME, "git")
