"""What the benchmark scripts share: their plain-text tables and the results file each one writes.

Every script writes `bench/results/<name>.txt` through `write_results`, which puts a header above the
script's own report: the command that produced it, the commit it measured (with the package files that
differed from that commit, if any), the date and the machine. `bench/write_benchmarks.py` reads that
header to say, beside every table it copies into the performance page, which commit the figures came from.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import os
import platform
import shlex
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "results"

# What decides the figures: the package and its build settings. A bench script's own edits are reported
# apart, since a script may change what it measures without changing what is measured.
PACKAGE_PATHS = ("mkdocs_vault_mcp", "pyproject.toml")

# The header's keys, in order; `read_header` stops at the first line that is not one of them.
HEADER_KEYS = ("results", "command", "commit", "date", "machine")
HEADER_PREFIX = "# "


def table(rows: list[list[str]]) -> str:
    """Rows of cells as aligned columns: the first left-aligned, the rest right-aligned, a rule under the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                       for i, (cell, w) in enumerate(zip(row, widths, strict=True)))
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def command_line(argv: list[str] | None = None) -> str:
    """The command that ran this script, as typed from the repository root with the project's venv."""
    argv = sys.argv if argv is None else argv
    script = os.path.relpath(os.path.abspath(argv[0]), REPO)
    return shlex.join([".venv/bin/python", script, *argv[1:]])


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
    """CPU count, Python, SQLite, mcp, and the load average now (other work inflates wall times)."""
    try:
        from importlib.metadata import version

        mcp = f", mcp {version('mcp')}"
    except Exception:  # a script run outside the project's venv still gets its header
        mcp = ""
    load = os.getloadavg()[0]
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()},"
            f" SQLite {sqlite3.sqlite_version}{mcp}; load average {load:.1f} when written")


# The commit when the script started (report is imported at its start): a run takes minutes, and a commit
# made meanwhile in the same work tree must not be named as the one measured.
STARTED_AT = _git("rev-parse", "--short", "HEAD") if (REPO / ".git").exists() else ""


def header(name: str, command: str | None = None) -> str:
    """The lines `write_results` puts above a report (each `# key: value`)."""
    command = command or command_line()
    script = command.split()[1] if command.startswith(".venv/bin/python ") else None
    now = datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    commit = commit_note(script)
    if STARTED_AT and not commit.startswith(STARTED_AT):
        commit = f"{STARTED_AT} when the run started; at its end {commit}"
    values = {"results": f"bench/results/{name}.txt", "command": command, "commit": commit,
              "date": now, "machine": machine_note()}
    return "\n".join(f"{HEADER_PREFIX}{key}: {values[key]}" for key in HEADER_KEYS)


def write_results(name: str, report: str, command: str | None = None) -> Path:
    """Write `bench/results/<name>.txt`: the header (command, commit, date, machine), a blank line, the report.

    `command` defaults to this process's own command line (`command_line()`); pass it when the script
    was run through another one. Returns the path written.
    """
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.txt"
    path.write_text(header(name, command) + "\n\n" + report.rstrip("\n") + "\n", encoding="utf-8")
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
    """For a script whose report is what it prints: print as usual, then write what was printed to
    `bench/results/<name>.txt` with the header, if the block ends without an error."""
    tee = _Tee(sys.stdout)  # type: ignore[arg-type]
    with contextlib.redirect_stdout(tee):
        yield
    write_results(name, tee.copy.getvalue(), command)


def read_header(text: str) -> tuple[dict[str, str], str]:
    """(the header's keys and values, the report under it) of a results file; an old file has no header."""
    values: dict[str, str] = {}
    lines = text.splitlines()
    consumed = 0
    for line in lines:
        key, _, value = line.removeprefix(HEADER_PREFIX).partition(": ")
        if not line.startswith(HEADER_PREFIX) or key not in HEADER_KEYS:
            break
        values[key] = value
        consumed += 1
    body = "\n".join(lines[consumed:]).lstrip("\n")
    return values, body
