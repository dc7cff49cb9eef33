"""The performance page (docs/pages/performance.md) is what bench/write_benchmarks.py writes from bench/results/,
as committed, and stays within its size.

Read through git at HEAD, so a bench run that is not committed yet (a results file rewritten in the
work tree) cannot fail it; a results file committed without regenerating the page does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "bench" / "write_benchmarks.py"
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
    assert headings == ["## What does it add to my build?", "## How fast are the tools?", "## How good is search?",
                        "## How far does it scale?"]
    assert "/work/" not in text and "/tmp/" not in text  # no path of the machine that measured
