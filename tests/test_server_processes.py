"""No process outlives `mkdocs-vault-mcp serve`: once the server has converted a large page (in a worker process,
index/conversion_pool.py), whatever ends it (SIGTERM, SIGINT, SIGKILL, even mid-conversion, or its client closing
stdio) leaves no process of its session running. The server runs in a session of its own, so that every process
it started, however reparented, is found by its session id in /proc."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from helpers.ports import free_port
from helpers.served import INITIALIZE, call
from helpers.site import Site, built_site

DEEP_DEPTH = 12_000  # a 160 kB page of nested divs: converted in a worker process
HUGE_DEPTH = 100_000  # a 1.3 MB one: its conversion runs long enough to be interrupted
ENDED_WITHIN = 30  # seconds: a generous bound for a busy machine, not a measure

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="sessions are read from Linux's /proc")


def nested(depth: int, inner: str) -> str:
    return "<div>" * depth + inner + "</div>" * depth


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    pages = {
        "index.md": "# Home\n\nA small page.\n",
        "deep.md": "# Deep\n\n" + nested(DEEP_DEPTH, "DEEP-TEXT") + "\n",
        "huge.md": "# Huge\n\n" + nested(HUGE_DEPTH, "HUGE-TEXT") + "\n",
    }
    return built_site(tmp_path_factory.mktemp("processes"), {"plugins": [{"vault-mcp": {"stats_page": False}}]}, pages)


def session_processes(session: int) -> dict[int, str]:
    """The processes of `session` that have not ended (zombies aside): pid -> command line."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
            if int(fields[3]) == session and fields[0] != "Z":
                found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:  # ended meanwhile
            continue
    return found


def left_after_the_server(server: subprocess.Popen[Any]) -> dict[int, str]:
    """Once the server has ended: what of its session still runs after ENDED_WITHIN seconds (or nothing, sooner)."""
    server.wait(timeout=ENDED_WITHIN)
    deadline = time.monotonic() + ENDED_WITHIN
    while (left := session_processes(server.pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def end_session(server: subprocess.Popen[Any]) -> None:
    """Kill the server and whatever of its session a failed test leaves."""
    server.kill()
    server.wait()
    for pid in session_processes(server.pid):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def serve(site: Site, *options: str, **pipes: Any) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "mkdocs_vault_mcp", "serve", str(site.site_dir), *options]
    return subprocess.Popen(command, text=True, start_new_session=True, stderr=subprocess.PIPE, **pipes)


def started_over_http(site: Site) -> tuple[subprocess.Popen[str], int]:
    port = free_port()
    server = serve(site, "--transport", "http", "--port", str(port), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    assert server.stdout is not None
    announced = server.stdout.readline()
    assert announced.startswith("MCP server at"), announced
    return server, port


def read_deep_page(port: int) -> None:
    markdown = call(port, "read", path="deep.md")["structuredContent"]["markdown"]
    assert "DEEP-TEXT" in markdown


@pytest.mark.parametrize("ending", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=lambda s: s.name)
def test_no_process_outlives_an_http_server_that_converted_a_large_page(site: Site, ending: signal.Signals) -> None:
    server, port = started_over_http(site)
    try:
        read_deep_page(port)
        assert len(session_processes(server.pid)) >= 2  # the server and its worker
        server.send_signal(ending)
        assert left_after_the_server(server) == {}
    finally:
        end_session(server)
    assert server.stderr is not None and "Traceback" not in server.stderr.read()


def test_no_process_outlives_a_server_killed_in_the_middle_of_a_conversion(site: Site) -> None:
    server, port = started_over_http(site)
    try:
        read_deep_page(port)  # the worker has started
        # The huge page's conversion runs for seconds in the worker; the answer never comes.
        threading.Thread(target=lambda: call_ignoring_errors(port), daemon=True).start()
        time.sleep(1)
        server.kill()
        assert left_after_the_server(server) == {}
    finally:
        end_session(server)


def call_ignoring_errors(port: int) -> None:
    with contextlib.suppress(Exception):  # the server was killed: no answer
        call(port, "read", path="huge.md")


def test_no_process_outlives_a_stdio_server_whose_client_closed_its_input(site: Site) -> None:
    server = serve(site, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    try:
        requests = [
            INITIALIZE,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "read", "arguments": {"path": "deep.md"}},
            },
        ]
        for request in requests:
            server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        answers = [json.loads(server.stdout.readline()) for _ in range(2)]
        assert "DEEP-TEXT" in answers[1]["result"]["structuredContent"]["markdown"]
        assert len(session_processes(server.pid)) >= 2
        server.stdin.close()
        assert left_after_the_server(server) == {}
    finally:
        end_session(server)
