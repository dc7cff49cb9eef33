"""`serve --workers N` supervises its worker processes: one that dies is replaced, all of them end when the parent
does (SIGKILL too, so that a restart can take the port), and the exit status says what happened."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from helpers.ports import free_port
from helpers.served import call
from helpers.site import Site, built_site

SCRIPT = Path(sys.executable).parent / "mkdocs-vault-mcp"
WAIT_SECONDS = 30


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return built_site(
        tmp_path_factory.mktemp("workers"),
        {"plugins": ["vault-mcp"]},
        {"index.md": "# Home\n\nThe lighthouse keeper.\n"},
    )


@contextmanager
def workers_server(index: Path, port: int, workers: int = 2) -> Iterator[subprocess.Popen]:
    process = subprocess.Popen(
        [str(SCRIPT), "serve", str(index), "--transport", "http", "--port", str(port), "--workers", str(workers)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("MCP server at"), line + (process.stderr.read() if process.stderr else "")
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=WAIT_SECONDS)


def children(pid: int) -> list[int]:
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:
        return []


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"not within {WAIT_SECONDS} s: {what}"
        time.sleep(0.05)


pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads the process tree from /proc")


def test_a_dead_worker_is_replaced(site):
    port = free_port()
    with workers_server(site.index_path, port) as parent:
        first = children(parent.pid)
        assert len(first) == 2
        os.kill(first[0], signal.SIGKILL)
        until(lambda: len(children(parent.pid)) == 2 and first[0] not in children(parent.pid), "a replacement")
        for _ in range(6):  # the kernel spreads connections over both workers
            assert not call(port, "count_documents").get("isError")
        parent.terminate()
        assert parent.wait(timeout=WAIT_SECONDS) == 0, "stopped as asked: status 0"
        assert parent.stderr is not None
        assert f"worker process {first[0]} was killed by SIGKILL; starting another" in parent.stderr.read()


def test_the_workers_end_when_the_parent_is_killed_and_the_port_can_be_taken_again(site):
    port = free_port()
    with workers_server(site.index_path, port) as parent:
        workers = children(parent.pid)
        assert len(workers) == 2
        parent.kill()
        parent.wait(timeout=WAIT_SECONDS)
        until(lambda: not any(alive(worker) for worker in workers), "the orphaned workers ending")
    with workers_server(site.index_path, port) as again:
        assert not call(port, "count_documents").get("isError")
        again.terminate()
        assert again.wait(timeout=WAIT_SECONDS) == 0


def test_workers_that_keep_dying_stop_the_server_with_a_status_that_says_so(site):
    from mkdocs_vault_mcp.mcp.workers import RESTARTS_PER_WINDOW

    port = free_port()
    with workers_server(site.index_path, port, workers=2) as parent:
        killed: set[int] = set()
        deadline = time.monotonic() + WAIT_SECONDS
        while parent.poll() is None and time.monotonic() < deadline:
            for worker in children(parent.pid):
                if worker not in killed:
                    os.kill(worker, signal.SIGKILL)
                    killed.add(worker)
            time.sleep(0.05)
        status = parent.wait(timeout=WAIT_SECONDS)
        assert parent.stderr is not None
        errors = parent.stderr.read()
    assert status == 3, errors
    assert len(killed) > RESTARTS_PER_WINDOW
    assert "worker processes ended" in errors and "was killed by SIGKILL); stopped" in errors, errors
    assert "Traceback" not in errors
