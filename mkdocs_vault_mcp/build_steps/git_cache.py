"""The git history read last, kept in the build's cache folder: each file's last change and commits, keyed by
the repository, docs_dir, HEAD and the index's time, and the log's commits for catching up from that HEAD.
Files are replaced whole, so a build killed meanwhile leaves the old cache or none, never half of one."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from ..page import model
from .git_log import Commit

log = logging.getLogger("mkdocs.plugins.vault-mcp")

# Bump when what the history cache holds changes.
CACHE_FORMAT = 3
# [CACHE_FORMAT, git dir, docs_dir's prefix, HEAD, the index's mtime in ns]; the commits file keeps the first three.
CacheKey = list[Any]
# A file's last commits as the cache keeps them: (author time, author name, subject).
History = list[model.Commit]


def commits_file(cache_file: Path) -> Path:
    """Where the log's commits are kept beside the dates and histories: read only when HEAD moved."""
    return cache_file.with_name(cache_file.stem + "-commits.json")


def read_cache(cache_file: Path, key: CacheKey) -> tuple[dict[bytes, int], dict[bytes, History]] | None:
    try:
        stored = json.loads(cache_file.read_text(encoding="utf-8"))
        if stored.get("key") != key:
            return None
        times = {os.fsencode(path): time for path, time in stored["times"].items()}
        history = {
            os.fsencode(path): [(commit[0], commit[1], commit[2]) for commit in commits]
            for path, commits in stored["history"].items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # missing or damaged: read git again
        return None
    return times, history


def write_cache(cache_file: Path, key: CacheKey, times: dict[bytes, int], history: dict[bytes, History]) -> None:
    _write_json(
        cache_file,
        {
            "key": key,
            "times": {os.fsdecode(path): time for path, time in times.items()},
            "history": {os.fsdecode(path): commits for path, commits in history.items()},
        },
    )


def read_commits(commits_file: Path, key: CacheKey) -> tuple[bytes, dict[bytes, Commit]] | None:
    """The kept HEAD and the log's commits at it, when they were read from the same repository and docs_dir."""
    try:
        stored = json.loads(commits_file.read_text(encoding="utf-8"))
        if stored.get("key") != key[:3]:
            return None
        commits: dict[bytes, Commit] = {}
        for sha, parents, *changed in stored["commits"]:
            if not changed:  # changes nothing in docs_dir: the walks only pass through it
                commits[sha.encode()] = Commit([parent.encode() for parent in parents], 0, {})
                continue
            author_time, author, subject, diffs, commit_time = changed
            commits[sha.encode()] = Commit(
                [parent.encode() for parent in parents],
                author_time,
                {
                    None if parent is None else parent.encode(): {
                        os.fsencode(path): status.encode() for path, status in changes.items()
                    }
                    for parent, changes in diffs
                },
                author,
                subject,
                commit_time,
            )
        return stored["head"].encode(), commits
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # missing or damaged: read git again
        return None


def write_commits(commits_file: Path, key: CacheKey, commits: dict[bytes, Commit]) -> None:
    rows: list[list[Any]] = []
    for sha, commit in commits.items():
        row: list[Any] = [sha.decode(), [parent.decode() for parent in commit.parents]]
        if any(commit.diffs.values()):  # most commits change nothing in docs_dir: their graph is all that counts
            row += [
                commit.author_time,
                commit.author,
                commit.subject,
                [
                    [
                        None if parent is None else parent.decode(),
                        {os.fsdecode(path): status.decode() for path, status in changes.items()},
                    ]
                    for parent, changes in commit.diffs.items()
                ],
                commit.commit_time,
            ]
        rows.append(row)
    _write_json(commits_file, {"key": key[:3], "head": key[3], "commits": rows})


def _write_json(file: Path, data: dict[str, Any]) -> None:
    temporary = file.with_name(file.name + ".tmp")
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        # ASCII escapes: a path that is not UTF-8 (os.fsdecode's surrogates) goes through JSON and back as it was
        temporary.write_text(json.dumps(data), encoding="utf-8")
        os.replace(temporary, file)  # a build killed meanwhile leaves the old cache or none, never half
    except OSError as error:  # a cache only: the next build reads git again
        log.debug("vault-mcp: could not keep git history in %s: %s", file, error)
