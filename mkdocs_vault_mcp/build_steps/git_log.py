"""What `git log` says of each file in docs_dir: its last change and its last commits, read for every file at once
from one pass over the history (the walks answer what `git log -1 -- FILE` and `git log -10 -- FILE` would)."""

from __future__ import annotations

import heapq
import os
import subprocess
from collections.abc import Sequence
from typing import NamedTuple

from .. import child_processes
from ..page import model

GIT_TIMEOUT_SECONDS = 120
# A git hook exports these; inherited, they would point git at another repository or index than the
# one that holds docs_dir.
REPOSITORY_ENV_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY")
HISTORY_LENGTH = 10  # commits kept per page

# The whole history in one pass, children always before parents (--topo-order). -m (forced to mean
# "separate") diffs a merge against each parent in turn, skipping parents it is identical to; a --format
# cannot say which parent a diff is against, but --pretty=oneline writes "H P1 P2 (from P2) subject", a line
# where --pretty=raw would write the whole commit and its message.
# The pathspec "." (docs_dir) lets git compare only docs_dir's trees; with --full-history --sparse every commit is
# still listed with its own parents (none pruned, none rewritten), so the output is byte for byte the one without
# it. The other flags pin down everything user configuration could change in that output.
LOG_FLAGS = [
    "-c",
    "log.diffMerges=separate",
    "log",
    "-m",
    "--topo-order",
    "--root",
    "--pretty=oneline",
    "--parents",
    "--no-abbrev-commit",
    "--no-decorate",
    "--no-show-signature",
    "--no-notes",
    "--no-color",
    "--encoding=UTF-8",
    "--name-status",
    "--no-renames",
    "--relative",
    "-z",
    "--full-history",
    "--sparse",
]
# Each commit's parents, author time, author name (%an: as the commit records it, no .mailmap) and commit time
# (what `git log` orders by), which the line of --pretty=oneline lacks: a second, cheap git process that lists
# the commits without diffs.
COMMIT_FIELDS_FLAGS = [
    "log",
    "--format=%H%x00%P%x00%at%x00%an%x00%ct",
    "-z",
    "--no-show-signature",
    "--no-notes",
    "--no-color",
    "--encoding=UTF-8",
]


class Commit(NamedTuple):
    parents: list[bytes]
    author_time: int
    diffs: dict[bytes | None, dict[bytes, bytes]]  # parent diffed against (None: root) -> path -> status
    author: str = ""
    subject: str = ""
    commit_time: int = 0  # the committer's time: `git log` lists newer ones first


# sha -> (parents, author time, author name, commit time)
CommitFields = tuple[list[bytes], int, str, int]


def run_git(args: list[str], cwd: str, allowed_status: int = 0) -> bytes:
    env = {name: value for name, value in os.environ.items() if name not in REPOSITORY_ENV_VARS}
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", PAGER="cat", GIT_FLUSH="0")
    done = child_processes.run(["git", "--no-pager", *args], cwd=cwd, env=env, timeout=GIT_TIMEOUT_SECONDS)
    if done.returncode not in (0, allowed_status):
        raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout, done.stderr)
    return done.stdout


def commit_fields(output: bytes) -> dict[bytes, CommitFields]:
    """sha -> (parents, author time, author name, commit time), from the -z listing of COMMIT_FIELDS_FLAGS."""
    fields = output.split(b"\0")
    return {
        sha: (parents.split(), int(author_time), author.decode("utf-8", "replace"), int(commit_time))
        for sha, parents, author_time, author, commit_time in zip(
            fields[0::5], fields[1::5], fields[2::5], fields[3::5], fields[4::5], strict=False
        )
    }


# A status of --name-status (M, A, D, T, ...; --no-renames: no scores) is this short; a commit's line is an id long.
_STATUS_MOST = 4


def parse_log(output: bytes, fields: dict[bytes, CommitFields]) -> dict[bytes, Commit]:
    """Commits of the oneline -z log, in output order. Entries look like
    b"H P1 P2 (from P1) subject", b"M", b"path", b"A", b"path", ...; an entry without changes is its line alone.
    `fields`: commit_fields of the same commits, whose parents tell where the subject starts."""
    commits: dict[bytes, Commit] = {}
    tokens = output.split(b"\0")
    position, count = 0, len(tokens)
    while position < count:
        line = tokens[position]
        position += 1
        if not line:
            continue
        sha = line.partition(b" ")[0]
        parents, author_time, author, commit_time = fields[sha]
        ids = b" ".join([sha, *parents])
        if not line.startswith(ids):
            raise ValueError(f"the log's commit {sha!r} has other parents than git's listing of it")
        rest = line[len(ids) :]
        diffed_parent = None
        if len(parents) > 1 and rest.startswith(b" (from "):
            marked = rest[7 : rest.find(b")")]
            if marked in parents:  # else the subject of a merge identical to its parents starts so
                diffed_parent, rest = marked, rest[8 + len(marked) :]
        commit = commits.get(sha)
        if commit is None:
            subject = rest.removeprefix(b" ").decode("utf-8", "replace")
            commit = commits[sha] = Commit(parents, author_time, {}, author, subject, commit_time)
        # no "(from P)": a commit with at most one parent, or a merge identical to all of its parents
        changes = commit.diffs.setdefault(diffed_parent or (parents[0] if parents else None), {})
        while position + 1 < count and 0 < len(tokens[position]) <= _STATUS_MOST:
            changes[tokens[position + 1]] = tokens[position]
            position += 2
    return commits


def read_log(docs_dir: str, revisions: list[str], log_flags: list[str]) -> dict[bytes, Commit]:
    """The commits of `git log REVISIONS -- .` in docs_dir, with what each changed there."""
    fields = commit_fields(run_git([*COMMIT_FIELDS_FLAGS, *revisions, "--"], docs_dir))
    return parse_log(run_git([*log_flags, *revisions, "--", "."], docs_dir), fields)


def hand_over(pending: dict[bytes, set[bytes]], sha: bytes | None, paths: set[bytes]) -> None:
    """Pass `paths` down the walk to the commit `sha` (None: past the root); several children lead to one
    commit, so the smaller set is merged into the larger."""
    if sha is None or not paths:
        return
    waiting = pending.setdefault(sha, paths)
    if waiting is not paths:
        larger, smaller = (waiting, paths) if len(waiting) >= len(paths) else (paths, waiting)
        larger |= smaller
        pending[sha] = larger


def last_change_per_path(commits: dict[bytes, Commit]) -> dict[bytes, int]:
    """Answer `git log -1 --format=%at -- PATH` for every path still present at HEAD, all at once.

    For one path git walks back from HEAD (history simplification): a commit with one parent (or none)
    is the answer when it changes the path; a merge passes the walk to its first parent that has the
    same version of the path, and is the answer itself when it differs from every parent. Being a
    single chain, the answer does not depend on commit dates. Here the paths travel down together."""
    if not commits:
        return {}
    # Start from every path the log ever names: a path present at HEAD was added on its own chain.
    head = next(iter(commits))
    pending = {head: {path for c in commits.values() for diff in c.diffs.values() for path in diff}}
    times: dict[bytes, int] = {}

    for sha, commit in commits.items():  # children before parents, so `pending` is complete
        paths = pending.pop(sha, None)
        if not paths:
            continue
        parents: Sequence[bytes | None] = commit.parents or [None]
        diffs = [commit.diffs.get(parent, {}) for parent in parents]
        differ_from_first = [path for path in diffs[0] if path in paths]
        paths.difference_update(differ_from_first)
        hand_over(pending, parents[0], paths)
        for path in differ_from_first:
            same = next((p for p, diff in zip(parents[1:], diffs[1:], strict=True) if path not in diff), None)
            if same is not None:
                hand_over(pending, same, {path})
            elif diffs[0][path] != b"D":  # deleted here, so absent at HEAD: no page to date
                times[path] = commit.author_time
    return times


def history_per_path(commits: dict[bytes, Commit], paths: set[bytes]) -> dict[bytes, list[model.Commit]]:
    """`git log -10 -- PATH` for every path still present at HEAD, all at once: the same walk as
    `last_change_per_path` (history simplification), which goes on past the first change. A commit with one
    parent (or none) counts when it changes the path; a merge passes the path to its first parent that has the
    same version, and when it has none, counts itself and passes the path to every parent. Which commits count
    does not depend on the order of the walk; git lists them newest commit time first (children before parents
    among equal times) and keeps the first HISTORY_LENGTH, so a path's walk ends once no commit left in the log
    is newer than the oldest of its newest HISTORY_LENGTH."""
    if not commits:
        return {}
    listed = list(commits.items())  # children before parents
    newest_after = [0] * (len(listed) + 1)  # the newest commit time from each position of the log to its end
    for position in range(len(listed) - 1, -1, -1):
        newest_after[position] = max(newest_after[position + 1], listed[position][1].commit_time)
    # per path, the newest HISTORY_LENGTH commits found so far as a heap whose first is the oldest of them
    kept: dict[bytes, list[tuple[int, int, Commit]]] = {path: [] for path in paths}
    done: set[bytes] = set()
    pending: dict[bytes, set[bytes]] = {listed[0][0]: set(paths)}

    for position, (sha, commit) in enumerate(listed):
        walking = pending.pop(sha, None)
        if not walking:
            continue
        parents: Sequence[bytes | None] = commit.parents or [None]
        diffs = [commit.diffs.get(parent, {}) for parent in parents]
        changed = [path for path in diffs[0] if path in walking]
        walking.difference_update(changed)
        hand_over(pending, parents[0], walking)
        for path in changed:
            same = next((p for p, diff in zip(parents[1:], diffs[1:], strict=True) if path not in diff), None)
            if same is not None:
                hand_over(pending, same, {path})
                continue
            if path in done:
                continue
            newest = kept[path]
            entry = (commit.commit_time, -position, commit)
            if len(newest) < HISTORY_LENGTH:
                heapq.heappush(newest, entry)
            else:
                heapq.heappushpop(newest, entry)
            if len(newest) == HISTORY_LENGTH and newest[0][0] >= newest_after[position + 1]:
                done.add(path)  # nothing further down the log can be one of its newest
                continue
            for parent in parents:  # on past an addition too: the file may have lived there before
                hand_over(pending, parent, {path})
    return {
        path: [
            (commit.author_time, commit.author, commit.subject)
            for _, _, commit in sorted(newest, key=lambda entry: (-entry[0], -entry[1]))
        ]
        for path, newest in kept.items()
        if newest
    }


# Where docs_dir sits and which commit is checked out, in one call: `--verify -q HEAD` prints the commit, or
# nothing with status 1 in a repository without commits yet.
