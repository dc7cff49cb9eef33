"""mkdocs_vault_mcp.modified against real git repositories built in tmp_path (no mocks).

The reference for a file's git time is always `git log -1 --format=%at -- FILE`, run per file."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from mkdocs_vault_mcp.modified import GitTimes, modified_instant, read_git_times
from scripted_git import REAL_RUN, T0, count_subprocess_runs, git_log_time, isolate_git, run_git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

UNICODE_DIR = "Ünïcödé dir"  # non-ASCII characters and a space
UTC = UTC


@pytest.fixture(autouse=True)
def isolated_git(tmp_path, monkeypatch):
    isolate_git(monkeypatch, tmp_path / "home", ceiling=tmp_path)  # each repository is below tmp_path


class Repo:
    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str, when: int = T0, author: int | None = None,
            check: bool = True) -> subprocess.CompletedProcess:
        return run_git(self.root, *args, when=when, author=author, check=check)

    def write(self, path: str, text: str) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def commit(self, when: int, *changes: tuple[str, str], author: int | None = None) -> None:
        for path, text in changes:
            self.write(path, text)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", f"at {when}", when=when, author=author)

    def merge(self, when: int, *branches: str) -> None:
        self.git("merge", "-q", "--no-ff", "--no-edit", *branches, when=when)

    def merge_resolving(self, when: int, branch: str, path: str, text: str | None = None) -> None:
        """Merge a conflicting branch; write `text`, or keep the branch's version when text is None."""
        assert self.git("merge", "-q", "--no-edit", branch, when=when, check=False).returncode == 1
        if text is None:
            self.git("checkout", "--theirs", "--", path)
        else:
            self.write(path, text)
        self.git("add", "-A")
        self.git("commit", "-q", "--no-edit", when=when)


def files_at_head(docs: Path) -> set[str]:
    out = REAL_RUN(["git", "ls-tree", "-r", "-z", "--name-only", "HEAD"], cwd=docs, capture_output=True, check=True)
    return {os.fsdecode(name) for name in out.stdout.split(b"\0") if name}


def assert_agrees_with_git_log(docs: Path, times: GitTimes | None) -> None:
    assert times is not None, f"no git times for {docs}"
    prefix = REAL_RUN(["git", "rev-parse", "--show-prefix"], cwd=docs, capture_output=True, text=True).stdout.strip()
    top = docs.parents[prefix.count("/") - 1] if prefix else docs
    tracked = files_at_head(docs)
    assert tracked and set(times.author_times) == tracked
    for path in sorted(tracked):
        assert times.author_times[path] == git_log_time(top, prefix + path), path


D = "handbook/docs/"  # docs_dir is a subfolder, two levels down
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


@pytest.fixture
def history(tmp_path) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.commit(T0 + 100, *[(D + name, f"{name} v1\n") for name in
                            ("index.md", "guide.md", "old-name.md", "conflict.md", "theirs.md", "twin.md",
                             "octopus.md", f"{UNICODE_DIR}/my page.md")],
                ("README.md", "readme\n"), ("handbook/mkdocs.yml", "site_name: x\n"))
    repo.commit(T0 + 200, (D + "guide.md", "guide v2\n"), author=T0 + 50)
    repo.commit(T0 + 300, ("README.md", "outside docs_dir\n"))

    repo.git("checkout", "-q", "-b", "feature")
    repo.commit(T0 + 400, (D + "index.md", "index v2\n"), (D + "feature.md", "new\n"))
    repo.git("checkout", "-q", "main")
    repo.commit(T0 + 500, (D + f"{UNICODE_DIR}/my page.md", "page v2\n"))
    repo.merge(T0 + 600, "feature")

    repo.git("mv", D + "old-name.md", D + "new-name.md")
    repo.commit(T0 + 700)

    repo.git("checkout", "-q", "-b", "conflict")
    repo.commit(T0 + 800, (D + "conflict.md", "branch side\n"))
    repo.git("checkout", "-q", "main")
    repo.commit(T0 + 900, (D + "conflict.md", "main side\n"))
    repo.merge_resolving(T0 + 1000, "conflict", D + "conflict.md", "resolved by hand\n")

    repo.git("checkout", "-q", "-b", "theirs")
    repo.commit(T0 + 1100, (D + "theirs.md", "branch version\n"))
    repo.git("checkout", "-q", "main")
    repo.commit(T0 + 1200, (D + "theirs.md", "main version\n"))
    repo.merge_resolving(T0 + 1300, "theirs", D + "theirs.md")

    repo.git("checkout", "-q", "-b", "twin")
    repo.git("checkout", "-q", "main")
    repo.commit(T0 + 1400, (D + "twin.md", "same change\n"))
    repo.git("checkout", "-q", "twin")
    repo.commit(T0 + 1500, (D + "twin.md", "same change\n"))
    repo.git("checkout", "-q", "main")
    repo.merge(T0 + 1600, "twin")

    repo.git("checkout", "-q", "-b", "o1")
    repo.commit(T0 + 1700, ("README.md", "octopus branch one\n"), (D + "octopus.md", "octopus branches\n"))
    repo.git("checkout", "-q", "-b", "o2", "main")
    repo.commit(T0 + 1800, (D + "octopus.md", "octopus branches\n"), (D + "HEAD", "ref-like name\n"))
    repo.git("checkout", "-q", "main")
    repo.merge(T0 + 1900, "o1", "o2")

    repo.commit(T0 + 10, (D + "skew.md", "clock skew\n"))

    # uncommitted work: unstaged, staged, untracked (also in an untracked folder), and outside docs_dir
    repo.write(D + "index.md", "edited, not staged\n")
    repo.write(D + "guide.md", "edited and staged\n")
    repo.git("add", D + "guide.md")
    repo.write(D + f"{UNICODE_DIR}/new draft.md", "untracked\n")
    repo.write(D + "drafts/idea.md", "untracked folder\n")
    repo.write("README.md", "dirty outside docs_dir\n")
    return repo


def test_history_scenarios_give_the_expected_times(history):
    times = read_git_times(str(history.root / D))
    assert times is not None
    assert times.author_times == EXPECTED  # old-name.md is gone; README.md is outside docs_dir


def test_every_tracked_file_agrees_with_git_log(history):
    docs = history.root / D
    assert_agrees_with_git_log(docs, read_git_times(str(docs)))


def test_dirty_set_holds_uncommitted_and_untracked_files(history):
    times = read_git_times(str(history.root / D))
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
    assert read_git_times(str(history.root / D)) is not None
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
    docs = history.root / D
    expected = read_git_times(str(docs))
    hostile = tmp_path / "hostile.gitconfig"
    hostile.write_text(
        "[log]\n decorate = full\n abbrevCommit = true\n showRoot = false\n diffMerges = first-parent\n"
        "[color]\n ui = always\n[diff]\n renames = copies\n relative = true\n noprefix = true\n"
        "[status]\n showUntrackedFiles = no\n renames = true\n relativePaths = true\n"
        "[core]\n quotePath = true\n pager = false\n")
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


def random_history(root: Path, rnd: random.Random) -> Repo:
    """A repository at `root` whose history `rnd` draws: commits, branches and merges of any parents."""
    names = ["a.md", "b.md", f"{UNICODE_DIR}/c d.md", "e/f.md", "../outside.md"]
    repo = Repo(root)
    trees: dict[str, dict[str, str]] = {}
    clock = T0

    def commit(state: dict[str, str], parents: list[str]) -> str:
        nonlocal clock
        clock += rnd.randint(-500, 2000)
        for old in repo.root.iterdir():
            if old.name != ".git":
                shutil.rmtree(old) if old.is_dir() else old.unlink()
        for path, text in state.items():
            repo.write(os.path.normpath("docs/" + path), text)
        repo.git("add", "-A")
        tree = repo.git("write-tree").stdout.strip()
        parent_args = [arg for parent in parents for arg in ("-p", parent)]
        sha = repo.git("commit-tree", tree, "-m", "random", *parent_args,
                       when=clock, author=clock - rnd.randint(0, 3000)).stdout.strip()
        trees[sha] = state
        return sha

    def edit(state: dict[str, str]) -> dict[str, str]:
        state = dict(state)
        for _ in range(rnd.randint(0, 3)):
            path = rnd.choice(names)
            if path in state and rnd.random() < 0.2:
                del state[path]
            else:
                state[path] = rnd.choice("xyz")  # few contents, so sides often agree by chance
        return state

    tips = {"main": commit(edit({}), [])}
    for step in range(30):
        branch = rnd.choice(sorted(tips))
        others = [b for b in sorted(tips) if tips[b] != tips[branch]]
        roll = rnd.random()
        if roll < 0.5 or not others:
            tips[branch] = commit(edit(trees[tips[branch]]), [tips[branch]])
        elif roll < 0.65:
            tips[f"b{step}"] = tips[branch]
        else:
            merged_in = rnd.sample(others, min(len(others), rnd.choice([1, 1, 2])))
            parents = [tips[branch]] + [tips[b] for b in merged_in]
            merged = {}
            for path in set().union(*(trees[p] for p in parents)):
                text = rnd.choice([trees[p].get(path) for p in parents] + [rnd.choice("xyz"), None])
                if text is not None:
                    merged[path] = text
            tips[branch] = commit(merged, parents)
    repo.git("reset", "-q", "--hard", tips[rnd.choice(sorted(tips))])
    return repo


# ---- modified_instant ----

MTIME_NS = 1_700_000_000_123_456_789
MTIME = datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=UTC)  # MTIME_NS, to the microsecond


@pytest.fixture
def pages(tmp_path) -> tuple[Path, GitTimes | None]:
    repo = Repo(tmp_path / "pages")
    repo.commit(T0 + 60, ("docs/clean.md", "c\n"), ("docs/dirty.md", "d\n"), ("docs/time.md", "t\n"),
                author=T0 + 30)
    repo.write("docs/dirty.md", "changed\n")
    repo.write("docs/untracked.md", "new\n")
    docs = repo.root / "docs"
    for page in docs.iterdir():
        os.utime(page, ns=(MTIME_NS, MTIME_NS))
    return docs, read_git_times(str(docs))


def instant(docs: Path, git: GitTimes | None, name: str, mode: str, meta=None, key=None):
    return modified_instant(name, str(docs / name), mode, git, meta or {}, key)


GIT_TIME = datetime.fromtimestamp(T0 + 30, UTC)


@pytest.mark.parametrize(("name", "mode", "expected"), [
    ("clean.md", "auto", (GIT_TIME, "git")),
    ("dirty.md", "auto", (MTIME, "mtime")),
    ("untracked.md", "auto", (MTIME, "mtime")),
    ("clean.md", "git", (GIT_TIME, "git")),
    ("dirty.md", "git", (GIT_TIME, "git")),
    ("untracked.md", "git", (MTIME, "mtime")),
    ("clean.md", "mtime", (MTIME, "mtime")),
    ("untracked.md", "mtime", (MTIME, "mtime")),
])
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


@pytest.mark.parametrize(("value", "expected"), [
    (date(2024, 1, 2), datetime(2024, 1, 2, tzinfo=UTC)),
    (datetime(2024, 1, 2, 3, 4, 5), datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
    (datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2))), datetime(2024, 1, 2, 1, 4, 5, tzinfo=UTC)),
    ("2024-01-02", datetime(2024, 1, 2, tzinfo=UTC)),
    ("2024-01-02T03:04:05", datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
    ("2024-01-02T03:04:05-05:30", datetime(2024, 1, 2, 8, 34, 5, tzinfo=UTC)),
])
def test_a_front_matter_date_wins_over_git_and_mtime_in_every_mode(pages, value, expected):
    docs, git = pages
    for mode in ("auto", "git", "mtime"):
        when, source = instant(docs, git, "clean.md", mode, {"updated": value}, "updated")
        assert (when, source) == (expected, "meta")
        assert when.utcoffset() == timedelta(0)
    assert modified_instant("gen.md", None, "auto", git, {"updated": value}, "updated") == (expected, "meta")


@pytest.mark.parametrize("value", ["yesterday", "2024-13-45", "", 1_700_000_000, 3.5, True, None,
                                   ["2024-01-02"], {"date": "2024-01-02"}])
def test_other_front_matter_values_are_ignored(pages, value):
    docs, git = pages
    assert instant(docs, git, "clean.md", "auto", {"updated": value}, "updated") == (GIT_TIME, "git")


def test_front_matter_only_under_the_configured_key(pages):
    docs, git = pages
    meta = {"updated": date(2024, 1, 2)}
    assert instant(docs, git, "clean.md", "auto", meta, None) == (GIT_TIME, "git")
    assert instant(docs, git, "clean.md", "auto", meta, "modified") == (GIT_TIME, "git")
