"""When a page was last modified: a front-matter date, the git author time, or the file's mtime; and the git
history read beside the build (build_steps/git_log.py reads it, build_steps/git_cache.py keeps it between builds)."""

from __future__ import annotations

import functools
import logging
import os
import subprocess
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any, NamedTuple

from ..child_processes import Beside
from ..instants import EPOCH
from .git_cache import (
    CACHE_FORMAT,
    CacheKey,
    History,
    commits_file,
    read_cache,
    read_commits,
    write_cache,
    write_commits,
)
from .git_log import LOG_FLAGS, Commit, history_per_path, last_change_per_path, read_log, run_git

log = logging.getLogger("mkdocs.plugins.vault-mcp")

# Past this many new commits since the kept read, reading them all is no cheaper than reading everything.
_CATCH_UP_LIMIT = 500
_STATUS_ARGS = ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--", "."]


class GitTimes(NamedTuple):
    author_times: dict[str, int]  # docs-relative POSIX path (as File.src_uri) -> author time, epoch seconds
    dirty: frozenset[str]  # docs-relative paths with uncommitted changes (staged or not) or untracked
    # docs-relative path -> its last commits, newest first: (author time, author name, subject)
    history: dict[str, History]


# Where docs_dir sits and which commit is checked out, in one call: `--verify -q HEAD` prints the commit, or
# nothing with status 1 in a repository without commits yet.
_WHERE_ARGS = [
    "rev-parse",
    "--is-inside-work-tree",
    "--show-prefix",
    "--absolute-git-dir",
    "--git-path",
    "index",
    "--verify",
    "-q",
    "HEAD",
]
# The history last read for each cache file in this process (`mkdocs serve` rebuilds): its key, dates, commits.
_remembered: dict[Path, tuple[CacheKey, dict[bytes, int], dict[bytes, History]]] = {}


def read_git_times(docs_dir: str, cache_file: Path | None = None) -> GitTimes | None:
    """None when docs_dir is not inside a git work tree or git is not installed (no exception, no output).

    With `cache_file`, the history is worked out again only when HEAD or the work tree's index changed since
    the last read kept there (or in this process's memory of it): the log depends on nothing else. Then git
    lists only the commits made since that read when they lead straight from its HEAD to the new one (see
    `_caught_up`), else the whole history. Which files have uncommitted changes is asked every time.
    """
    try:
        where = run_git(_WHERE_ARGS, docs_dir, allowed_status=1).split(b"\n")
        inside, prefix, git_dir, index = where[:4]
        if inside != b"true":
            log.debug("vault-mcp: %s is not inside a git work tree", docs_dir)
            return None
        head = where[4] if len(where) > 4 else b""
        times, history = _history(docs_dir, prefix, git_dir, index, head, cache_file)
        # porcelain paths are relative to the top level whatever the current directory
        status = run_git(_STATUS_ARGS, docs_dir).split(b"\0")
        dirty = {entry[3:].removeprefix(prefix) for entry in status if len(entry) > 3}
    except (OSError, subprocess.SubprocessError, ValueError, LookupError, TypeError, StopIteration) as error:
        log.debug("vault-mcp: no git times for %s: %s", docs_dir, error)
        return None
    return GitTimes(
        {os.fsdecode(path): t for path, t in times.items()},
        frozenset(os.fsdecode(path) for path in dirty),
        {os.fsdecode(path): commits for path, commits in history.items()},
    )


class GitTimesRead(Beside[GitTimes | None]):
    """`read_git_times` beside the build, started at once (child_processes.Beside): git lists the history on the
    other core while MkDocs reads the files, the nav and the first pages, which need no dates. `result()` waits for
    it, and raises what the read raised beyond what read_git_times answers None for."""

    def __init__(self, docs_dir: str, cache_file: Path | None = None) -> None:
        super().__init__(functools.partial(read_git_times, docs_dir, cache_file), "vault-mcp git history")


def _history(
    docs_dir: str, prefix: bytes, git_dir: bytes, index: bytes, head: bytes, cache_file: Path | None
) -> tuple[dict[bytes, int], dict[bytes, History]]:
    """Each file's last change and last commits: kept ones when HEAD and the index are those of the read
    `cache_file` keeps, else from the log's commits (the kept ones and the new, or one whole pass)."""
    key = None
    if cache_file is not None and head:  # a repository without commits has nothing worth keeping
        try:
            index_time = os.stat(os.path.join(docs_dir, os.fsdecode(index))).st_mtime_ns
        except OSError:
            index_time = 0
        key = [CACHE_FORMAT, os.fsdecode(git_dir), os.fsdecode(prefix), os.fsdecode(head), index_time]
        remembered = _remembered.get(cache_file)
        if remembered is not None and remembered[0] == key:
            return remembered[1], remembered[2]
        stored = read_cache(cache_file, key) if remembered is None else None
        if stored is not None:
            _remembered[cache_file] = (key, *stored)
            return stored
    commits, kept = _caught_up(docs_dir, key, head, commits_file(cache_file)) if cache_file and key else (None, False)
    if commits is None:
        commits = read_log(docs_dir, ["--ignore-missing", "HEAD"], LOG_FLAGS)
    times = last_change_per_path(commits)
    history = history_per_path(commits, set(times))
    if key is not None and cache_file is not None:  # key: only with a cache file
        _remembered[cache_file] = (key, times, history)
        write_cache(cache_file, key, times, history)
        if not kept:
            write_commits(commits_file(cache_file), key, commits)
    return times, history


def _caught_up(
    docs_dir: str, key: CacheKey, head: bytes, commits_file: Path
) -> tuple[dict[bytes, Commit] | None, bool]:
    """The whole log's commits from the kept ones and those made since (None when the log must be read whole),
    and whether they are the kept ones as they were.

    Only when every new commit has one parent, in a single line from the kept HEAD to the new one (the edit,
    commit, build loop): the whole log is then exactly the new commits followed by the kept log, in the same
    order, so the walks over it give what a whole read would. git lists the new commits only; the kept ones
    are read from the file and walked again, far cheaper than git's pass over them. A merge, a HEAD moved
    back or to another branch, a rewritten history: the whole log is read again."""
    stored = read_commits(commits_file, key)
    if stored is None:
        return None, False
    kept_head, commits = stored
    if kept_head == head:  # only the index changed, and the log does not depend on it
        return commits, True
    try:
        new = read_log(
            docs_dir, [head.decode(), "--not", kept_head.decode()], [*LOG_FLAGS, f"--max-count={_CATCH_UP_LIMIT}"]
        )
    except (OSError, subprocess.SubprocessError, ValueError, LookupError, StopIteration) as error:
        log.debug("vault-mcp: reading the whole git history again: %s", error)  # e.g. the kept HEAD is gone
        return None, False
    child = kept_head
    for sha, commit in reversed(new.items()):  # oldest first
        if commit.parents != [child]:
            return None, False
        child = sha
    if child != head:  # more new commits than the limit, or HEAD is an ancestor of the kept one
        return None, False
    return new | commits, False  # the new commits first, as the whole log lists them


def _meta_instant(value: object) -> datetime | None:
    if isinstance(value, str):
        text = value
        for parse in (datetime.fromisoformat, date.fromisoformat):
            try:
                value = parse(text)
                break
            except ValueError:
                continue
    if isinstance(value, datetime):  # before date: a datetime is a date too
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, date):
        return datetime.combine(value, time(), UTC)
    return None


def modified_instant(
    src_uri: str,
    abs_src_path: str | None,
    mode: str,
    git: GitTimes | None,
    meta: dict[str, Any],
    modified_meta: str | None,
) -> tuple[datetime, str]:
    """Return (aware UTC datetime, source) where source is one of "meta", "git", "mtime".
    mode "auto": git author time for a tracked file without uncommitted changes, else mtime;
    "git": git author time when there is one, else mtime; "mtime": always the file's mtime."""
    if mode not in ("auto", "git", "mtime"):
        raise ValueError(f"unknown modified mode {mode!r}")
    from_meta = _meta_instant(meta.get(modified_meta)) if modified_meta else None
    if from_meta is not None:
        return from_meta, "meta"
    if abs_src_path is None:  # a generated page has no file and no history
        return datetime.now(UTC), "mtime"
    author_time = git.author_times.get(src_uri) if git and mode != "mtime" else None
    if author_time is not None and git and (mode == "git" or src_uri not in git.dirty):
        return EPOCH + timedelta(seconds=author_time), "git"
    # st_mtime_ns, not the float st_mtime, so the microseconds come out exact
    return EPOCH + timedelta(microseconds=os.stat(abs_src_path).st_mtime_ns // 1000), "mtime"
