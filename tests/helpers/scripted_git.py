"""Real git repositories with scripted commit dates, kept apart from the developer's git setup."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

T0 = 1_600_000_000
# Taken at import, before a test swaps in a counting `subprocess.run`, so helpers never count themselves.
REAL_RUN = subprocess.run


def isolate_git(monkeypatch: pytest.MonkeyPatch, home: Path, ceiling: Path) -> None:
    """Keep the developer's git configuration, and any repository at or above `ceiling`, out of a test."""
    home.mkdir()
    (home / ".gitconfig").write_text("")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(ceiling))
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.delenv(name, raising=False)


def run_git(
    root: Path, *args: str, when: int = T0, author: int | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """git in `root`, committing at `when` (and authoring at `author`, else `when`)."""
    env = {**os.environ, "GIT_AUTHOR_DATE": f"@{author or when} +0000", "GIT_COMMITTER_DATE": f"@{when} +0000"}
    return REAL_RUN(
        ["git", "-c", "user.name=Tester", "-c", "user.email=tester@example.com", "-c", "commit.gpgsign=false", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=check,
    )


def git_log_time(repo_root: Path, path: str) -> int:
    """The reference for a file's git time: `git log -1 --format=%at -- FILE`, run for that file alone."""
    out = REAL_RUN(
        ["git", "--literal-pathspecs", "log", "-1", "--format=%at", "--", path],
        cwd=repo_root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return int(out)


def record_git_runs(monkeypatch: pytest.MonkeyPatch, folder: Path) -> Path:
    """Note every git run from now on, by any process, one line of arguments each, in the file returned; each still
    runs. A script named git, first on PATH, notes them."""
    folder.mkdir()
    runs = folder / "git-runs.txt"
    runs.touch()
    script = folder / "git"
    script.write_text(f'#!/bin/sh\necho "$*" >> "{runs}"\nexec "{shutil.which("git")}" "$@"\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return runs


def count_subprocess_runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[str], dict[str, Any]]]:
    """Every `subprocess.run` from now on, as (args, keyword arguments); each still runs."""
    calls: list[tuple[list[str], dict[str, Any]]] = []

    def counting_run(args: Any, *rest: Any, **kwargs: Any) -> Any:
        calls.append((list(args), kwargs))
        return REAL_RUN(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "run", counting_run)
    return calls
