"""BENCHMARKS.md is what bench/write_benchmarks.py writes from bench/results/, as committed.

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


def test_every_table_in_benchmarks_md_is_the_committed_results_file_it_names() -> None:
    if not SCRIPT.is_file() or not (REPO / ".git").exists():
        pytest.skip("needs the repository's bench/ and its git history (not an sdist)")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", "--rev", "HEAD"], capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr
