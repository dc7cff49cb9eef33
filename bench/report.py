"""What the benchmark scripts share: their plain-text tables, their kinds and the results file each one writes.

Every script writes `bench/results/<kind>/<name>.json` through `write_results` (or `results_from_output`): one
JSON object holding the report (the script's text table) and what says where it comes from: the command that
produced it (`.venv/bin/python bench/run.py NAME ...`), the commit it measured (with the package files that
differed from that commit, if any), the date, the machine, the load average when it was written, and the
baseline the report measured in the same run. The kind, `speed` or `quality`, and the baseline come from
`BENCHMARKS`, one entry per script; `bench/run.py` lists them. `bench/write_benchmarks.py` reads these files to
write the performance page's tables, each under a line saying which commit its figures came from.
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import functools
import io
import json
import os
import platform
import re
import shlex
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "results"
RUNNER = "bench/run.py"

# What decides the figures: the package and its build settings. A bench script's own edits are reported
# apart, since a script may change what it measures without changing what is measured.
PACKAGE_PATHS = ("mkdocs_vault_mcp", "pyproject.toml")

# A results file's fields, in the order they are written.
FIELDS = ("name", "command", "commit", "date", "machine", "load", "baseline", "report")


@dataclass(frozen=True)
class Benchmark:
    """What a script measures (`speed`: time, memory, size, work; `quality`: what the answers hold) and the
    baseline its report measures in the same run, in a sentence (None where the report has none)."""

    kind: str
    baseline: str | None


SPEED, QUALITY = "speed", "quality"
KINDS = (SPEED, QUALITY)
# One entry per script that `bench/run.py` runs: its results go under bench/results/<kind>/.
BENCHMARKS: dict[str, Benchmark] = {
    "abandoned_sessions": Benchmark(
        SPEED, "The server's resident memory after 200 warm-up `initialize` calls, read before the abandoned ones."
    ),
    "build_instructions": Benchmark(
        SPEED, "The `none` build: the site's own configuration without vault-mcp, counted in the same run."
    ),
    "build_overhead": Benchmark(SPEED, "The `none` build (no plugins) of the same corpus, in the same rounds."),
    "build_overhead_instructions": Benchmark(
        SPEED, "The `none` build (no plugins) of the same corpus, counted in the same run."
    ),
    "cjk_bigrams": Benchmark(QUALITY, "Overlapping bigrams (Lucene's CJK analyzer) on the same queries, ranked alike."),
    "cjk_index_cost": Benchmark(SPEED, "The same sections inserted into FTS5 as they are, without CJK separation."),
    "cjk_search_quality": Benchmark(QUALITY, None),
    "generate_site": Benchmark(SPEED, None),
    "git_history_read": Benchmark(SPEED, "The cold read (no kept history) of the same repository, in the same run."),
    "hostile_index": Benchmark(SPEED, "A plain page of the same size (paragraphs of words), in the same run."),
    "index_built_site": Benchmark(
        SPEED, "A fresh `mkdocs build -q` of the same site (search only), in the same round."
    ),
    "inspector_strict": Benchmark(QUALITY, None),
    "languages_one_site": Benchmark(QUALITY, None),
    "large_page": Benchmark(
        SPEED, "The bare build (no plugin) of the same site, with this checkout's venv, in the same rounds."
    ),
    "large_site": Benchmark(SPEED, "`SELECT count(*) FROM documents` on the same connection, in the same rounds."),
    "link_check": Benchmark(QUALITY, "MkDocs' own link warnings for the same build."),
    "link_check_browser": Benchmark(QUALITY, "What a browser reaches, following every link of the same site."),
    "link_commit_cost": Benchmark(SPEED, "The same commit after one saved page without links, in the same run."),
    "live_churn": Benchmark(
        SPEED, "Another commit's package (`--against`) under the same bursts, its serve runs alternated with these."
    ),
    "live_update": Benchmark(
        SPEED, "The rebuild of `mkdocs serve` after the same save: the plugin's share of its main thread."
    ),
    "load": Benchmark(SPEED, "One client alone, over one kept-alive connection and in-process, before the load."),
    "plugin_at_scale": Benchmark(SPEED, "A bare replay (no plugin) of the same pages, each replay a fresh process."),
    "plugin_share": Benchmark(
        SPEED, "The whole build it is part of: the plugin's closing log line against the build's wall time."
    ),
    "plugin_steps": Benchmark(SPEED, "The bare build's CPU seconds (no plugins, the same corpus)."),
    "ranked_sections_quality": Benchmark(QUALITY, "The same queries at the package's own bound, in the same run."),
    "read_coverage": Benchmark(QUALITY, None),
    "real_text_build": Benchmark(SPEED, "The bare build (no plugin) of the same site."),
    "real_text_copies": Benchmark(SPEED, None),
    "real_text_search": Benchmark(SPEED, "`SELECT 1` on the same connection, in the same rounds."),
    "real_text_search_ab": Benchmark(
        SPEED, "Another commit's package (`--against`), interleaved query by query in the same process."
    ),
    "real_text_site": Benchmark(SPEED, None),
    "related_quality": Benchmark(
        QUALITY, "Chance: the share of the other relevant pages among as many pages drawn at random."
    ),
    "related_semantic": Benchmark(
        QUALITY, "Related pages from tf-idf neighbours alone (the index without vectors), in the same run."
    ),
    "search_latency": Benchmark(SPEED, "MCP `ping` over the same transport, in the same rounds."),
    "search_profile": Benchmark(SPEED, None),
    "search_quality": Benchmark(
        QUALITY, "Plain FTS5 `bm25()` over the same sections, the query's words ORed (and ANDed)."
    ),
    "semantic_at_scale": Benchmark(
        SPEED, "The scan of every vector, on a copy of the same index, query by query in the same pass."
    ),
    "semantic_build": Benchmark(
        SPEED, "The same first build by the `--against` checkout, and fastembed on the same texts, in the same rounds."
    ),
    "semantic_quality": Benchmark(QUALITY, "The keyword ranking alone (the index without vectors), in the same run."),
    "side_by_side": Benchmark(
        SPEED,
        "markdown-vault-mcp's nearest tools on the same corpus, and each server's own `ping`, in the same rounds.",
    ),
    "small_site_steps": Benchmark(SPEED, "The same site's bare build (no plugin), in the same rounds."),
    "writer_executor": Benchmark(
        SPEED, "The same site's own build without vault-mcp (`none`), in the same rounds; thread against process."
    ),
    "small_sites": Benchmark(
        SPEED,
        "The same site's own build without vault-mcp (`none`), in the same round;"
        " the bare build run twice is the noise floor.",
    ),
    "stats_page_time": Benchmark(
        SPEED, "The whole build of the FastAPI corpus the snapshot and stats page are part of."
    ),
    "stemming": Benchmark(QUALITY, "The index's own `porter` tokenizer on the same sections and queries."),
    "tool_latency": Benchmark(SPEED, "MCP `ping` over the same transport, in the same rounds."),
    "tools_list_size": Benchmark(SPEED, "No baseline run: character counts, set against the budgets the report names."),
    "url_mode_latency": Benchmark(SPEED, "The same site served from its folder, call by call in the same rounds."),
    "writer_interference": Benchmark(SPEED, "The same trials with the background process stopped, pair by pair."),
}


def table(rows: list[list[str]]) -> str:
    """Rows of cells as aligned columns: the first left-aligned, the rest right-aligned, a rule under the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def command_line(argv: list[str] | None = None) -> str:
    """The command that ran this script, as typed from the repository root with the project's venv: a benchmark
    through the runner (`.venv/bin/python bench/run.py NAME ...`), however it was started."""
    argv = sys.argv if argv is None else argv
    script = Path(os.path.abspath(argv[0]))
    # An absolute path (another checkout for --against) as seen from the repository: no path of this machine.
    arguments = [os.path.relpath(argument, REPO) if os.path.isabs(argument) else argument for argument in argv[1:]]
    if script.parent == BENCH and script.stem in BENCHMARKS:
        return shlex.join([".venv/bin/python", RUNNER, script.stem, *arguments])
    return shlex.join([".venv/bin/python", os.path.relpath(script, REPO), *arguments])


def script_of(command: str) -> str | None:
    """The benchmark a recorded command ran (`bench/run.py NAME` or `bench/NAME.py`), None for another command."""
    found = re.search(rf"{re.escape(RUNNER)} (\w+)|bench/(\w+)\.py", command)
    return (found[1] or found[2]) if found else None


def _git(*arguments: str) -> str:
    done = subprocess.run(["git", "-C", str(REPO), *arguments], capture_output=True, text=True)
    # Only trailing white space: a porcelain line starts with a status column that may be a space.
    return done.stdout.rstrip() if done.returncode == 0 else ""


def describe(folder: Path) -> str:
    """The commit a checkout (a site's copy, another commit of this project) has checked out and how many commits
    its history holds (what git reads)."""

    def git(*arguments: str) -> str:
        done = subprocess.run(["git", "-C", str(folder), *arguments], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else "?"

    return f"{git('rev-parse', '--short=10', 'HEAD')} ({git('rev-list', '--count', 'HEAD')} commits)"


@functools.cache
def checkout_env(checkout: Path) -> dict[str, str]:
    """The environment in which `checkout`'s own `.venv` imports `checkout`'s package: its root first on PYTHONPATH,
    since a worktree's `.venv` may be a link to another checkout's, whose editable install would be imported
    instead; stops the benchmark if it still is not."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    probe = [
        str(checkout / ".venv" / "bin" / "python"),
        "-P",
        "-c",
        "import mkdocs_vault_mcp; print(mkdocs_vault_mcp.__file__)",
    ]
    where = subprocess.run(probe, env=env, capture_output=True, text=True).stdout.strip()
    if not where.startswith(str(checkout) + os.sep):
        sys.exit(f"{Path(sys.argv[0]).stem}: {checkout}/.venv imports the package from {where or 'nowhere'}")
    return env


def commit_note(script: str | None = None) -> str:
    """`git rev-parse --short HEAD`, and which package files (and this script) differ from it, if any."""
    head = _git("rev-parse", "--short", "HEAD")
    if not head:
        return "not recorded (no git repository)"
    dirty = _git("status", "--porcelain", "--", *PACKAGE_PATHS).splitlines()
    note = head
    if dirty:
        paths = sorted(line[3:] for line in dirty)
        note += f" + uncommitted package files: {', '.join(paths)}"
    if script and _git("status", "--porcelain", "--", script):
        note += f" + uncommitted {script}"
    return note


def machine_note() -> str:
    """CPU count, Python, SQLite and mcp (the load average is a field of its own)."""
    try:
        from importlib.metadata import version

        mcp = f", mcp {version('mcp')}"
    except Exception:  # a script run outside the project's venv still gets its header
        mcp = ""
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()},"
        f" SQLite {sqlite3.sqlite_version}{mcp}"
    )


# The commit when the script started (report is imported at its start): a run takes minutes, and a commit
# made meanwhile in the same work tree must not be named as the one measured.
STARTED_AT = _git("rev-parse", "--short", "HEAD") if (REPO / ".git").exists() else ""


def benchmark_of(name: str, command: str) -> Benchmark:
    """The entry of the script that wrote results `name`: the one its command ran, else the longest script name
    that `name` starts with (`small_sites_tenth` is small_sites')."""
    script = script_of(command)
    if script in BENCHMARKS:
        return BENCHMARKS[script]
    prefixes = [known for known in BENCHMARKS if name == known or name.startswith(known + "_")]
    if not prefixes:
        raise ValueError(f"no benchmark in report.BENCHMARKS wrote results {name!r}: add the script there")
    return BENCHMARKS[max(prefixes, key=len)]


def write_results(name: str, report: str, command: str | None = None) -> Path:
    """Write `bench/results/<kind>/<name>.json`: the report with its command, commit, date, machine, load and
    baseline (the kind and the baseline are the script's entry in BENCHMARKS), its fields in FIELDS' order.

    `command` defaults to this process's own command line (`command_line()`); pass it when the script
    was run through another one. Returns the path written.
    """
    command = command or command_line()
    entry = benchmark_of(name, command)
    script = script_of(command)
    now = datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    commit = commit_note(f"bench/{script}.py" if script else None)
    if STARTED_AT and not commit.startswith(STARTED_AT):
        commit = f"{STARTED_AT} when the run started; at its end {commit}"
    record = {
        "name": name,
        "command": command,
        "commit": commit,
        "date": now,
        "machine": machine_note(),
        "load": round(os.getloadavg()[0], 2),
        "baseline": entry.baseline,
        "report": report.rstrip("\n") + "\n",
    }
    path = RESULTS / entry.kind / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


class _Tee(io.TextIOBase):
    """Writes through to the real stdout and keeps a copy."""

    def __init__(self, through: io.TextIOBase) -> None:
        self.through, self.copy = through, io.StringIO()

    def write(self, text: str) -> int:
        self.copy.write(text)
        return self.through.write(text)

    def flush(self) -> None:
        self.through.flush()


@contextlib.contextmanager
def results_from_output(name: str, command: str | None = None) -> Iterator[None]:
    """For a script whose report is what it prints: print as usual, then write what was printed to its results
    file (`write_results`), if the block ends without an error."""
    tee = _Tee(sys.stdout)  # type: ignore[arg-type]
    with contextlib.redirect_stdout(tee):
        yield
    write_results(name, tee.copy.getvalue(), command)


def read_results(text: str) -> dict[str, Any]:
    """A results file's fields; ValueError if it is not one (not JSON, or a field missing)."""
    record = json.loads(text)
    if not isinstance(record, dict):
        raise ValueError("a results file holds one JSON object")
    missing = [key for key in FIELDS if key not in record]
    if missing:
        raise ValueError(f"no {', '.join(missing)}")
    return record


# CPU and memory of a command's whole process tree, grandchildren included. `getrusage(RUSAGE_CHILDREN)` counts a
# process only once its parent waited for it and that parent was waited for in turn; a build's writer is started
# by multiprocessing's fork server, which outlives the build and is never waited for by it, so its CPU would be
# lost. `adopt_orphans()` makes this process the Linux "subreaper" of everything it starts (an orphaned descendant
# is re-parented here instead of to init) and `reap_descendants()` waits for them before the usage is read.
PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
REAP_SECONDS = 30  # a fork server exits when the build that started it closes its socket


def adopt_orphans() -> bool:
    """Become the subreaper of what this process starts; False where the OS has none (then the figures lack
    the orphans' CPU, as before)."""
    if not sys.platform.startswith("linux"):
        return False
    return bool(ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def reap_descendants(seconds: float = REAP_SECONDS) -> None:
    """Wait for every descendant adopted here to end, so that RUSAGE_CHILDREN holds their CPU and peak memory;
    a process still running after `seconds` is an error of the measured command, not something to wait out."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if time.monotonic() > deadline:
                raise RuntimeError(f"a process of the measured command is still running after {seconds} s")
            time.sleep(0.002)


def tree_rss_kb(pid: int) -> list[int]:
    """The resident memory (VmRSS, kB) of a process and of each of its descendants, now (none for what has
    ended)."""
    sizes, pending = [], [pid]
    while pending:
        current = pending.pop()
        try:
            resident = re.search(r"VmRSS:\s+(\d+)", Path(f"/proc/{current}/status").read_text())
            sizes.append(int(resident[1]) if resident else 0)
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(child) for child in (task / "children").read_text().split()]
        except (OSError, TypeError):
            continue
    return sizes
