"""`serve --workers N` forks its workers and shares the port with SO_REUSEPORT: where the platform lacks either (as
Windows does), the command line refuses N > 1 with a message that says so, and one process serves as anywhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SITECUSTOMIZE = {
    "os.fork": "import os\ndel os.fork\n",
    "SO_REUSEPORT": "import socket\nif hasattr(socket, 'SO_REUSEPORT'):\n    del socket.SO_REUSEPORT\n",
}


def serve_without(lacking: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m mkdocs_vault_mcp serve ARGS` in a Python whose `sitecustomize` removed `lacking` at start."""
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE[lacking])
    path = os.pathsep.join([str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])])
    return subprocess.run(
        [sys.executable, "-m", "mkdocs_vault_mcp", "serve", *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": path},
    )


@pytest.mark.parametrize("lacking", ["os.fork", "SO_REUSEPORT"])
def test_workers_are_refused_where_the_platform_lacks_fork_or_reuseport(lacking: str, tmp_path: Path) -> None:
    done = serve_without(lacking, tmp_path, str(tmp_path / "site"), "--transport", "http", "--workers", "2")
    assert done.returncode == 2, done.stderr
    assert f"--workers 2 needs {lacking}, which this platform lacks" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_one_worker_needs_no_fork(tmp_path: Path) -> None:
    done = serve_without("os.fork", tmp_path, str(tmp_path / "site"), "--transport", "http", "--workers", "1")
    assert done.returncode == 2, done.stderr  # refused for the missing site, not for the platform
    assert "does not exist" in done.stderr and "lacks" not in done.stderr, done.stderr
