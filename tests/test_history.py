"""A page's last commits, from the same single `git log` pass that dates pages, against `git log
-10 -- FILE` run for each file on the history of tests/test_modified.py (branches, --no-ff merges, merges
resolved by hand or with one side's version, the same change on both sides, an octopus merge, a rename)."""

from __future__ import annotations

import random

from helpers.git_repo import HISTORY_DOCS, assert_agrees_with_git_log, files_at_head, random_history
from helpers.scripted_git import REAL_RUN
from mkdocs_vault_mcp.build_steps.git_log import HISTORY_LENGTH
from mkdocs_vault_mcp.build_steps.modified import read_git_times


def git_log_history(top, path: str) -> list[tuple[int, str]]:
    out = REAL_RUN(
        ["git", "--literal-pathspecs", "log", f"-{HISTORY_LENGTH}", "--format=%at%x00%s", "--", path],
        cwd=top,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [(int(time), subject) for time, subject in (line.split("\0") for line in out.splitlines())]


def test_history_agrees_with_git_log_for_every_file(history):
    docs = history.root / HISTORY_DOCS
    times = read_git_times(str(docs))
    assert times is not None
    assert set(times.history) == files_at_head(docs)
    for path in sorted(files_at_head(docs)):
        ours = [(time, subject) for time, _, subject in times.history[path]]
        theirs = git_log_history(history.root, HISTORY_DOCS + path)
        assert sorted(ours, reverse=True) == sorted(theirs, reverse=True), path  # the same commits
        assert ours[0][0] == times.author_times[path], path  # the newest is the one that dates the page
    assert {author for commits in times.history.values() for _, author, _ in commits} == {"Tester"}
    assert times.history["conflict.md"][0][2] == "Merge branch 'conflict'"  # a merge that changed the file itself


def test_random_histories_agree_with_git_log_too(tmp_path):
    """tests/test_modified.py's random histories (any merge resolution, octopus merges, deletions, re-additions,
    clock skew), each file's history checked against `git log -- FILE` as well as its time."""
    for seed in range(4):  # the seeds of tests/test_modified.py's random histories
        repo = random_history(tmp_path / f"random{seed}", random.Random(seed))
        docs = repo.root / "docs"
        if not docs.is_dir():
            continue
        times = read_git_times(str(docs))
        assert_agrees_with_git_log(docs, times)
        assert times is not None
        for path in files_at_head(docs):
            ours = [(time, subject) for time, _, subject in times.history[path]]
            out = REAL_RUN(
                ["git", "--literal-pathspecs", "log", "--format=%at%x00%s", "--", path],
                cwd=docs,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            theirs = [(int(t), s) for t, s in (line.split("\0") for line in out.splitlines())]
            assert len(ours) == min(HISTORY_LENGTH, len(theirs)), path
            assert set(ours) <= set(theirs), path
            if len(theirs) <= HISTORY_LENGTH:
                assert sorted(ours) == sorted(theirs), path
