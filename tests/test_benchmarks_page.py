"""The performance page (docs/pages/performance.md) is what bench/write_benchmarks.py writes from bench/results/,
as committed, and stays within its size; every benchmark is known to the runner, bench/run.py, and every results
file holds the fields of bench/report.py's format, under its benchmark's kind.

Read through git at HEAD, so a bench run that is not committed yet (a results file rewritten in the
work tree) cannot fail it; a results file committed without regenerating the page does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench"
SCRIPT = BENCH / "write_benchmarks.py"
NOT_BENCHMARKS = {"report", "run", "write_benchmarks"}  # the shared module, the runner, the page writer
PAGE = REPO / "docs" / "pages" / "performance.md"


def test_every_table_of_the_performance_page_is_the_committed_results_file_it_names() -> None:
    if not SCRIPT.is_file() or not (REPO / ".git").exists():
        pytest.skip("needs the repository's bench/ and its git history (not an sdist)")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", "--rev", "HEAD"], capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr


def test_the_performance_page_holds_current_figures_only() -> None:
    if not PAGE.is_file():
        pytest.skip("needs the repository's docs/ (not an sdist)")
    text = PAGE.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) <= 30_000
    # Organised by what a user asks, not by run.
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == [
        "## What does it add to my build?",
        "## How fast are the tools?",
        "## How good is search?",
        "## How far does it scale?",
    ]
    assert "/work/" not in text and "/tmp/" not in text  # no path of the machine that measured


def test_the_runner_lists_every_benchmark_script_with_its_kind() -> None:
    if not SCRIPT.is_file():
        pytest.skip("needs the repository's bench/ (not an sdist)")
    done = subprocess.run([sys.executable, str(BENCH / "run.py"), "--list"], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    listed = {line.split()[0]: line.split()[1] for line in done.stdout.splitlines()}
    scripts = {path.stem for path in BENCH.glob("*.py")} - NOT_BENCHMARKS
    assert set(listed) == scripts
    assert set(listed.values()) <= {"speed", "quality"}


def test_every_results_file_has_the_fields_of_the_format_under_its_benchmarks_kind() -> None:
    if not SCRIPT.is_file():
        pytest.skip("needs the repository's bench/ (not an sdist)")
    sys.path.insert(0, str(BENCH))
    from report import FIELDS, KINDS, RESULTS, benchmark_of

    files = sorted(RESULTS.glob("*/*.json"))
    assert files and not list(RESULTS.glob("*.txt"))
    for path in files:
        record = json.loads(path.read_text(encoding="utf-8"))
        assert list(record) == list(FIELDS), path
        assert record["name"] == path.stem and path.parent.name in KINDS, path
        assert benchmark_of(record["name"], record["command"]).kind == path.parent.name, path
        assert record["command"].startswith(".venv/bin/python bench/run.py "), path
        assert record["report"].strip(), path
