"""When a page was last modified: a front-matter date, the git author time, or the file's mtime."""

from __future__ import annotations

import functools
import heapq
import json
import logging
import os
import pickle
import select
import subprocess
import threading
from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import NamedTuple

from .forked import ForkedChild, can_fork, pickled_answer, spare_cpu

log = logging.getLogger("mkdocs.plugins.vault-mcp")

GIT_TIMEOUT_SECONDS = 120
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# A git hook exports these; inherited, they would point git at another repository or index than the
# one that holds docs_dir.
_REPOSITORY_ENV_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY")
HISTORY_LENGTH = 10  # commits kept per page

# The whole history in one pass, children always before parents (--topo-order). -m (forced to mean
# "separate") diffs a merge against each parent in turn, skipping parents it is identical to; a --format
# cannot say which parent a diff is against, but --pretty=oneline writes "H P1 P2 (from P2) subject", a line
# where --pretty=raw wrote the whole commit and its message (six times the bytes to read and parse).
# The pathspec "." (docs_dir) lets git compare only docs_dir's trees, half its work on a long history; with
# --full-history --sparse every commit is still listed with its own parents (none pruned, none rewritten), so
# the output is byte for byte the one without it. The other flags pin down everything user configuration
# could change in that output.
_LOG_FLAGS = ["-c", "log.diffMerges=separate", "log", "-m", "--topo-order", "--root", "--pretty=oneline",
              "--parents", "--no-abbrev-commit", "--no-decorate", "--no-show-signature", "--no-notes",
              "--no-color", "--encoding=UTF-8", "--name-status", "--no-renames", "--relative", "-z", "--full-history",
              "--sparse"]
# Each commit's parents, author time, author name (%an: as the commit records it, no .mailmap) and commit time
# (what `git log` orders by), which the line of --pretty=oneline lacks: a second git process, whose listing of
# the commits without diffs costs git a fraction of the first one's.
_FACTS_FLAGS = ["log", "--format=%H%x00%P%x00%at%x00%an%x00%ct", "-z", "--no-show-signature", "--no-notes",
                "--no-color", "--encoding=UTF-8"]
# Past this many new commits since the kept read, reading them all is no cheaper than reading everything.
_CATCH_UP_LIMIT = 500
_STATUS_ARGS = ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--", "."]


class GitTimes(NamedTuple):
    author_times: dict[str, int]  # docs-relative POSIX path (as File.src_uri) -> author time, epoch seconds
    dirty: frozenset[str]  # docs-relative paths with uncommitted changes (staged or not) or untracked
    # docs-relative path -> its last commits, newest first: (author time, author name, subject)
    history: dict[str, list[tuple[int, str, str]]]


class _Commit(NamedTuple):
    parents: list[bytes]
    author_time: int
    diffs: dict[bytes | None, dict[bytes, bytes]]  # parent diffed against (None: root) -> path -> status
    author: str = ""
    subject: str = ""
    commit_time: int = 0  # the committer's time: `git log` lists newer ones first


def _git(args: list[str], cwd: str, allowed_status: int = 0) -> bytes:
    env = {name: value for name, value in os.environ.items() if name not in _REPOSITORY_ENV_VARS}
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", PAGER="cat", GIT_FLUSH="0")
    done = subprocess.run(["git", "--no-pager", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=GIT_TIMEOUT_SECONDS)
    if done.returncode not in (0, allowed_status):
        raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout, done.stderr)
    return done.stdout


def _commit_facts(output: bytes) -> dict[bytes, tuple[list[bytes], int, str, int]]:
    """sha -> (parents, author time, author name, commit time), from the -z listing of _FACTS_FLAGS."""
    fields = output.split(b"\0")
    return {sha: (parents.split(), int(author_time), author.decode("utf-8", "replace"), int(commit_time))
            for sha, parents, author_time, author, commit_time in zip(
                fields[0::5], fields[1::5], fields[2::5], fields[3::5], fields[4::5], strict=False)}


# A status of --name-status (M, A, D, T, ...; --no-renames: no scores) is this short; a commit's line is an id long.
_STATUS_MOST = 4


def _parse_log(output: bytes, facts: dict[bytes, tuple[list[bytes], int, str, int]]) -> dict[bytes, _Commit]:
    """Commits of the oneline -z log, in output order. Entries look like
    b"H P1 P2 (from P1) subject", b"M", b"path", b"A", b"path", ...; an entry without changes is its line alone.
    `facts`: _commit_facts of the same commits, whose parents tell where the subject starts."""
    commits: dict[bytes, _Commit] = {}
    tokens = output.split(b"\0")
    position, count = 0, len(tokens)
    while position < count:
        line = tokens[position]
        position += 1
        if not line:
            continue
        sha = line.partition(b" ")[0]
        parents, author_time, author, commit_time = facts[sha]
        ids = b" ".join([sha, *parents])
        if not line.startswith(ids):
            raise ValueError(f"the log's commit {sha!r} has other parents than git's listing of it")
        rest = line[len(ids):]
        diffed_parent = None
        if len(parents) > 1 and rest.startswith(b" (from "):
            marked = rest[7:rest.find(b")")]
            if marked in parents:  # else the subject of a merge identical to its parents starts so
                diffed_parent, rest = marked, rest[8 + len(marked):]
        commit = commits.get(sha)
        if commit is None:
            subject = rest.removeprefix(b" ").decode("utf-8", "replace")
            commit = commits[sha] = _Commit(parents, author_time, {}, author, subject, commit_time)
        # no "(from P)": a commit with at most one parent, or a merge identical to all of its parents
        changes = commit.diffs.setdefault(diffed_parent or (parents[0] if parents else None), {})
        while position + 1 < count and 0 < len(tokens[position]) <= _STATUS_MOST:
            changes[tokens[position + 1]] = tokens[position]
            position += 2
    return commits


def _read_log(docs_dir: str, revisions: list[str], log_flags: list[str]) -> dict[bytes, _Commit]:
    """The commits of `git log REVISIONS -- .` in docs_dir, with what each changed there."""
    facts = _commit_facts(_git([*_FACTS_FLAGS, *revisions, "--"], docs_dir))
    return _parse_log(_git([*log_flags, *revisions, "--", "."], docs_dir), facts)


def _last_change_per_path(commits: dict[bytes, _Commit]) -> dict[bytes, int]:
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

    def hand_over(sha: bytes | None, paths: set[bytes]) -> None:
        if sha is None or not paths:
            return
        waiting = pending.setdefault(sha, paths)
        if waiting is not paths:  # several children lead here: merge the smaller set into the larger
            larger, smaller = (waiting, paths) if len(waiting) >= len(paths) else (paths, waiting)
            larger |= smaller
            pending[sha] = larger

    for sha, commit in commits.items():  # children before parents, so `pending` is complete
        paths = pending.pop(sha, None)
        if not paths:
            continue
        parents: Sequence[bytes | None] = commit.parents or [None]
        diffs = [commit.diffs.get(parent, {}) for parent in parents]
        differ_from_first = [path for path in diffs[0] if path in paths]
        paths.difference_update(differ_from_first)
        hand_over(parents[0], paths)
        for path in differ_from_first:
            same = next((p for p, diff in zip(parents[1:], diffs[1:], strict=True) if path not in diff), None)
            if same is not None:
                hand_over(same, {path})
            elif diffs[0][path] != b"D":  # deleted here, so absent at HEAD: no page to date
                times[path] = commit.author_time
    return times


def _history_per_path(commits: dict[bytes, _Commit], paths: set[bytes]) -> dict[bytes, list[tuple[int, str, str]]]:
    """`git log -10 -- PATH` for every path still present at HEAD, all at once: the same walk as
    `_last_change_per_path` (history simplification), which goes on past the first change. A commit with one
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
    kept: dict[bytes, list[tuple[int, int, _Commit]]] = {path: [] for path in paths}
    done: set[bytes] = set()
    pending: dict[bytes, set[bytes]] = {listed[0][0]: set(paths)}

    def hand_over(sha: bytes | None, handed: set[bytes]) -> None:
        if sha is None or not handed:
            return
        waiting = pending.setdefault(sha, handed)
        if waiting is not handed:
            larger, smaller = (waiting, handed) if len(waiting) >= len(handed) else (handed, waiting)
            larger |= smaller
            pending[sha] = larger

    for position, (sha, commit) in enumerate(listed):
        walking = pending.pop(sha, None)
        if not walking:
            continue
        parents: Sequence[bytes | None] = commit.parents or [None]
        diffs = [commit.diffs.get(parent, {}) for parent in parents]
        changed = [path for path in diffs[0] if path in walking]
        walking.difference_update(changed)
        hand_over(parents[0], walking)
        for path in changed:
            same = next((p for p, diff in zip(parents[1:], diffs[1:], strict=True) if path not in diff), None)
            if same is not None:
                hand_over(same, {path})
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
                hand_over(parent, {path})
    return {path: [(commit.author_time, commit.author, commit.subject)
                   for _, _, commit in sorted(newest, key=lambda entry: (-entry[0], -entry[1]))]
            for path, newest in kept.items() if newest}


# Where docs_dir sits and which commit is checked out, in one call: `--verify -q HEAD` prints the commit, or
# nothing with status 1 in a repository without commits yet.
_WHERE_ARGS = ["rev-parse", "--is-inside-work-tree", "--show-prefix", "--absolute-git-dir", "--git-path", "index",
               "--verify", "-q", "HEAD"]
# Bump when what the history cache holds changes.
_CACHE_FORMAT = 3
# The history last read for each cache file in this process (`mkdocs serve` rebuilds): its key, dates, commits.
_remembered: dict[Path, tuple[list, dict[bytes, int], dict[bytes, list]]] = {}


def read_git_times(docs_dir: str, cache_file: Path | None = None) -> GitTimes | None:
    """None when docs_dir is not inside a git work tree or git is not installed (no exception, no output).

    With `cache_file`, the history is worked out again only when HEAD or the work tree's index changed since
    the last read kept there (or in this process's memory of it): the log depends on nothing else. Then git
    lists only the commits made since that read when they lead straight from its HEAD to the new one (see
    `_caught_up`), else the whole history. Which files have uncommitted changes is asked every time.
    """
    try:
        where = _git(_WHERE_ARGS, docs_dir, allowed_status=1).split(b"\n")
        inside, prefix, git_dir, index = where[:4]
        if inside != b"true":
            log.debug("vault-mcp: %s is not inside a git work tree", docs_dir)
            return None
        head = where[4] if len(where) > 4 else b""
        times, history = _history(docs_dir, prefix, git_dir, index, head, cache_file)
        # porcelain paths are relative to the top level whatever the current directory
        status = _git(_STATUS_ARGS, docs_dir).split(b"\0")
        dirty = {entry[3:].removeprefix(prefix) for entry in status if len(entry) > 3}
    except (OSError, subprocess.SubprocessError, ValueError, LookupError, TypeError, StopIteration) as error:
        log.debug("vault-mcp: no git times for %s: %s", docs_dir, error)
        return None
    return GitTimes({os.fsdecode(path): t for path, t in times.items()},
                    frozenset(os.fsdecode(path) for path in dirty),
                    {os.fsdecode(path): commits for path, commits in history.items()})


class GitTimesRead:
    """`read_git_times` beside the build, started at once: git lists the history (a long one takes git tenths of
    a second on the other core) while MkDocs reads the files, the nav and the first pages, which need no dates.
    `result()` waits for it, and raises what the read raised beyond what read_git_times answers None for.

    Where no kept read will answer (`cache_file` missing: a first build, an emptied cache) and a second CPU and
    fork() allow (forked.py), in a forked child: there parsing the whole history (0.03 s of Python on MkDocs'
    docs, 2,118 commits) does not hold the build's GIL, which MkDocs' thread would wait for. Otherwise on a
    daemon thread: a build that fails meanwhile does not wait for git at exit (the cache files are replaced
    whole, never left half written)."""

    def __init__(self, docs_dir: str, cache_file: Path | None = None) -> None:
        self._times: GitTimes | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._child: ForkedChild | None = None
        if cache_file is not None and not cache_file.exists() and _has_git_folder(docs_dir) and spare_cpu() \
                and can_fork():
            read_end, write_end = os.pipe()
            try:
                self._child = ForkedChild(functools.partial(_send_git_times, write_end, docs_dir, cache_file),
                                          keep_fds=(write_end,))
            except OSError as error:  # no process to be had: a thread reads it
                log.debug("vault-mcp: reading the git history on a thread; no process for it (%s)", error)
                os.close(read_end)
            else:
                self._answer = os.fdopen(read_end, "rb")
                self._args = docs_dir, cache_file
                return
            finally:
                os.close(write_end)
        self._thread = threading.Thread(target=self._read, args=(docs_dir, cache_file),
                                        name="vault-mcp git history", daemon=True)
        self._thread.start()

    def _read(self, docs_dir: str, cache_file: Path | None) -> None:
        try:
            self._times = read_git_times(docs_dir, cache_file)
        except BaseException as error:  # handed to the build's thread by result()
            self._error = error

    def done(self) -> bool:
        if self._child is not None:  # its answer, or its end, is in the pipe
            return bool(select.select([self._answer], [], [], 0)[0])
        return self._thread is None or not self._thread.is_alive()

    def wait(self) -> None:
        if self._child is not None:
            self._receive()
        elif self._thread is not None:
            self._thread.join()

    def result(self) -> GitTimes | None:
        self.wait()
        if self._error is not None:
            raise self._error
        return self._times

    def _receive(self) -> None:
        child, self._child = self._child, None
        assert child is not None
        with self._answer:
            answer = self._answer.read()
        try:
            self._times, self._error = pickle.loads(answer)
        except (EOFError, pickle.UnpicklingError):  # the child ended without answering (killed): read here
            log.debug("vault-mcp: the git history reader process ended with status %s", child.wait())
            self._read(*self._args)
        else:  # its answer is whole once its end of the pipe is closed; its exit need not be waited for
            child.exit_unwaited()


def _has_git_folder(docs_dir: str) -> bool:
    """Whether docs_dir or a folder above it holds `.git`, as git finds a repository: a site outside any (a
    tarball, a generated folder) is read on a thread, where finding no repository costs no process a build."""
    folder = Path(docs_dir).resolve()
    return any((parent / ".git").exists() for parent in (folder, *folder.parents))


def _send_git_times(answer_fd: int, docs_dir: str, cache_file: Path) -> None:
    """The forked child's work (GitTimesRead): read_git_times, its answer pickled as (times, error)."""
    try:
        answer: tuple = (read_git_times(docs_dir, cache_file), None)
    except Exception as error:
        answer = (None, error)
    with os.fdopen(answer_fd, "wb") as out:
        out.write(pickled_answer(answer))


def _history(docs_dir: str, prefix: bytes, git_dir: bytes, index: bytes, head: bytes,
             cache_file: Path | None) -> tuple[dict[bytes, int], dict[bytes, list]]:
    """Each file's last change and last commits: kept ones when HEAD and the index are those of the read
    `cache_file` keeps, else from the log's commits (the kept ones and the new, or one whole pass)."""
    key = None
    if cache_file is not None and head:  # a repository without commits has nothing worth keeping
        try:
            index_time = os.stat(os.path.join(docs_dir, os.fsdecode(index))).st_mtime_ns
        except OSError:
            index_time = 0
        key = [_CACHE_FORMAT, os.fsdecode(git_dir), os.fsdecode(prefix), os.fsdecode(head), index_time]
        remembered = _remembered.get(cache_file)
        if remembered is not None and remembered[0] == key:
            return remembered[1], remembered[2]
        stored = _read_cache(cache_file, key) if remembered is None else None
        if stored is not None:
            _remembered[cache_file] = (key, *stored)
            return stored
    commits, kept = _caught_up(docs_dir, key, head, _commits_file(cache_file)) if cache_file and key else (None, False)
    if commits is None:
        commits = _read_log(docs_dir, ["--ignore-missing", "HEAD"], _LOG_FLAGS)
    times = _last_change_per_path(commits)
    history = _history_per_path(commits, set(times))
    if key is not None and cache_file is not None:  # key: only with a cache file
        _remembered[cache_file] = (key, times, history)
        _write_cache(cache_file, key, times, history)
        if not kept:
            _write_commits(_commits_file(cache_file), key, commits)
    return times, history


def _commits_file(cache_file: Path) -> Path:
    """Where the log's commits are kept beside the dates and histories: read only when HEAD moved."""
    return cache_file.with_name(cache_file.stem + "-commits.json")


def _caught_up(docs_dir: str, key: list, head: bytes,
               commits_file: Path) -> tuple[dict[bytes, _Commit] | None, bool]:
    """The whole log's commits from the kept ones and those made since (None when the log must be read whole),
    and whether they are the kept ones as they were.

    Only when every new commit has one parent, in a single line from the kept HEAD to the new one (the edit,
    commit, build loop): the whole log is then exactly the new commits followed by the kept log, in the same
    order, so the walks over it give what a whole read would. git lists the new commits only; the kept ones
    are read from the file and walked again, far cheaper than git's pass over them. A merge, a HEAD moved
    back or to another branch, a rewritten history: the whole log is read again."""
    stored = _read_commits(commits_file, key)
    if stored is None:
        return None, False
    kept_head, commits = stored
    if kept_head == head:  # only the index changed, and the log does not depend on it
        return commits, True
    try:
        new = _read_log(docs_dir, [head.decode(), "--not", kept_head.decode()],
                        [*_LOG_FLAGS, f"--max-count={_CATCH_UP_LIMIT}"])
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


def _read_cache(cache_file: Path, key: list) -> tuple[dict[bytes, int], dict[bytes, list]] | None:
    try:
        stored = json.loads(cache_file.read_text(encoding="utf-8"))
        if stored.get("key") != key:
            return None
        times = {os.fsencode(path): time for path, time in stored["times"].items()}
        history = {os.fsencode(path): [tuple(commit) for commit in commits]
                   for path, commits in stored["history"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # missing or damaged: read git again
        return None
    return times, history


def _write_cache(cache_file: Path, key: list, times: dict[bytes, int], history: dict[bytes, list]) -> None:
    _write_json(cache_file, {"key": key, "times": {os.fsdecode(path): time for path, time in times.items()},
                             "history": {os.fsdecode(path): commits for path, commits in history.items()}})


def _read_commits(commits_file: Path, key: list) -> tuple[bytes, dict[bytes, _Commit]] | None:
    """The kept HEAD and the log's commits at it, when they were read from the same repository and docs_dir."""
    try:
        stored = json.loads(commits_file.read_text(encoding="utf-8"))
        if stored.get("key") != key[:3]:
            return None
        commits = {}
        for sha, parents, *changed in stored["commits"]:
            if not changed:  # changes nothing in docs_dir: the walks only pass through it
                commits[sha.encode()] = _Commit([parent.encode() for parent in parents], 0, {})
                continue
            author_time, author, subject, diffs, commit_time = changed
            commits[sha.encode()] = _Commit(
                [parent.encode() for parent in parents], author_time,
                {None if parent is None else parent.encode():
                 {os.fsencode(path): status.encode() for path, status in changes.items()} for parent, changes in diffs},
                author, subject, commit_time)
        return stored["head"].encode(), commits
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # missing or damaged: read git again
        return None


def _write_commits(commits_file: Path, key: list, commits: dict[bytes, _Commit]) -> None:
    rows: list[list] = []
    for sha, commit in commits.items():
        row: list = [sha.decode(), [parent.decode() for parent in commit.parents]]
        if any(commit.diffs.values()):  # most commits change nothing in docs_dir: their graph is all that counts
            row += [commit.author_time, commit.author, commit.subject,
                    [[None if parent is None else parent.decode(),
                      {os.fsdecode(path): status.decode() for path, status in changes.items()}]
                     for parent, changes in commit.diffs.items()], commit.commit_time]
        rows.append(row)
    _write_json(commits_file, {"key": key[:3], "head": key[3], "commits": rows})


def _write_json(file: Path, data: dict) -> None:
    temporary = file.with_name(file.name + ".tmp")
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        # ASCII escapes: a path that is not UTF-8 (os.fsdecode's surrogates) goes through JSON and back as it was
        temporary.write_text(json.dumps(data), encoding="utf-8")
        os.replace(temporary, file)  # a build killed meanwhile leaves the old cache or none, never half
    except OSError as error:  # a cache only: the next build reads git again
        log.debug("vault-mcp: could not keep git history in %s: %s", file, error)


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


def modified_instant(src_uri: str, abs_src_path: str | None, mode: str, git: GitTimes | None,
                     meta: dict, modified_meta: str | None) -> tuple[datetime, str]:
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
        return _EPOCH + timedelta(seconds=author_time), "git"
    # st_mtime_ns, not the float st_mtime, so the microseconds come out exact
    return _EPOCH + timedelta(microseconds=os.stat(abs_src_path).st_mtime_ns // 1000), "mtime"
