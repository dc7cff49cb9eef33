"""Real git repositories in temp dirs, written commit by commit with fixed times, and their reference reading
(`git log` per file) to check the package's git times against."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

from helpers.scripted_git import REAL_RUN, T0, git_log_time, run_git
from mkdocs_vault_mcp.build_steps.modified import GitTimes

UNICODE_DIR = "Ünïcödé dir"  # non-ASCII characters and a space
HISTORY_DOCS = "handbook/docs/"  # docs_dir of `build_history`: a subfolder, two levels down


class Repo:
    """A git repository in a folder of its own, committed to at the times a test gives."""

    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")

    def git(
        self, *args: str, when: int = T0, author: int | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
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


def build_history(root: Path) -> Repo:
    """A repository at `root` with branches, --no-ff and conflicting merges, a rename, an octopus merge, clock skew
    and uncommitted work: tests/test_modified.py says what time each page must get."""
    repo = Repo(root)
    repo.commit(
        T0 + 100,
        *[
            (HISTORY_DOCS + name, f"{name} v1\n")
            for name in (
                "index.md",
                "guide.md",
                "old-name.md",
                "conflict.md",
                "theirs.md",
                "twin.md",
                "octopus.md",
                f"{UNICODE_DIR}/my page.md",
            )
        ],
        ("README.md", "readme\n"),
        ("handbook/mkdocs.yml", "site_name: x\n"),
    )
    repo.commit(T0 + 200, (HISTORY_DOCS + "guide.md", "guide v2\n"), author=T0 + 50)
    repo.commit(T0 + 300, ("README.md", "outside docs_dir\n"))

    repo.git("checkout", "-q", "-b", "feature")
    repo.commit(T0 + 400, (HISTORY_DOCS + "index.md", "index v2\n"), (HISTORY_DOCS + "feature.md", "new\n"))
    repo.git("checkout", "-q", "main")
    repo.commit(T0 + 500, (HISTORY_DOCS + f"{UNICODE_DIR}/my page.md", "page v2\n"))
    repo.merge(T0 + 600, "feature")

    repo.git("mv", HISTORY_DOCS + "old-name.md", HISTORY_DOCS + "new-name.md")
    repo.commit(T0 + 700)

    repo.git("checkout", "-q", "-b", "conflict")
    repo.commit(T0 + 800, (HISTORY_DOCS + "conflict.md", "branch side\n"))
    repo.git("checkout", "-q", "main")
    repo.commit(T0 + 900, (HISTORY_DOCS + "conflict.md", "main side\n"))
    repo.merge_resolving(T0 + 1000, "conflict", HISTORY_DOCS + "conflict.md", "resolved by hand\n")

    repo.git("checkout", "-q", "-b", "theirs")
    repo.commit(T0 + 1100, (HISTORY_DOCS + "theirs.md", "branch version\n"))
    repo.git("checkout", "-q", "main")
    repo.commit(T0 + 1200, (HISTORY_DOCS + "theirs.md", "main version\n"))
    repo.merge_resolving(T0 + 1300, "theirs", HISTORY_DOCS + "theirs.md")

    repo.git("checkout", "-q", "-b", "twin")
    repo.git("checkout", "-q", "main")
    repo.commit(T0 + 1400, (HISTORY_DOCS + "twin.md", "same change\n"))
    repo.git("checkout", "-q", "twin")
    repo.commit(T0 + 1500, (HISTORY_DOCS + "twin.md", "same change\n"))
    repo.git("checkout", "-q", "main")
    repo.merge(T0 + 1600, "twin")

    repo.git("checkout", "-q", "-b", "o1")
    repo.commit(T0 + 1700, ("README.md", "octopus branch one\n"), (HISTORY_DOCS + "octopus.md", "octopus branches\n"))
    repo.git("checkout", "-q", "-b", "o2", "main")
    repo.commit(
        T0 + 1800, (HISTORY_DOCS + "octopus.md", "octopus branches\n"), (HISTORY_DOCS + "HEAD", "ref-like name\n")
    )
    repo.git("checkout", "-q", "main")
    repo.merge(T0 + 1900, "o1", "o2")

    repo.commit(T0 + 10, (HISTORY_DOCS + "skew.md", "clock skew\n"))

    # uncommitted work: unstaged, staged, untracked (also in an untracked folder), and outside docs_dir
    repo.write(HISTORY_DOCS + "index.md", "edited, not staged\n")
    repo.write(HISTORY_DOCS + "guide.md", "edited and staged\n")
    repo.git("add", HISTORY_DOCS + "guide.md")
    repo.write(HISTORY_DOCS + f"{UNICODE_DIR}/new draft.md", "untracked\n")
    repo.write(HISTORY_DOCS + "drafts/idea.md", "untracked folder\n")
    repo.write("README.md", "dirty outside docs_dir\n")
    return repo


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
        sha: str = repo.git(
            "commit-tree", tree, "-m", "random", *parent_args, when=clock, author=clock - rnd.randint(0, 3000)
        ).stdout.strip()
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


def git(root: Path, *arguments: str) -> None:
    """Run git in `root` as the author and committer Ana, at the current time; fail when git does."""
    environment = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Ana",
        "GIT_AUTHOR_EMAIL": "ana@example.org",
        "GIT_COMMITTER_NAME": "Ana",
        "GIT_COMMITTER_EMAIL": "ana@example.org",
    }
    subprocess.run(["git", *arguments], cwd=root, env=environment, check=True, capture_output=True)
