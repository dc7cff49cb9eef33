"""The bearer token of `serve --token-env`: white space around it is no part of it, and a blank one is refused."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.ports import free_port
from helpers.site import Site, built_site

SCRIPT = Path(sys.executable).parent / "mkdocs-vault-mcp"
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "count_documents", "arguments": {}}}


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return built_site(tmp_path_factory.mktemp("small"), {"plugins": ["vault-mcp"]}, {"index.md": "# Home\n\nHi.\n"})


def post_status(port: int, authorization: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(
            "POST",
            "/mcp",
            json.dumps(CALL),
            {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "Mcp-Protocol-Version": "2025-06-18",
                "Authorization": authorization,
            },
        )
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def test_a_token_with_white_space_around_it_is_the_token_without_it(small, monkeypatch):
    monkeypatch.setenv("VAULT_TEST_TOKEN", "  padded-token\n")
    port = free_port()
    process = subprocess.Popen(
        [
            str(SCRIPT),
            "serve",
            str(small.index_path),
            "--transport",
            "http",
            "--port",
            str(port),
            "--token-env",
            "VAULT_TEST_TOKEN",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("MCP server at"), line + process.stdout.read()
        assert post_status(port, "Bearer padded-token") == 200
        assert post_status(port, "Bearer wrong-token") == 401
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.parametrize("value", ["", "   ", "\n\t"])
def test_a_blank_token_is_refused_at_start(small, monkeypatch, value):
    monkeypatch.setenv("VAULT_TEST_TOKEN", value)
    run = subprocess.run(
        [
            str(SCRIPT),
            "serve",
            str(small.index_path),
            "--transport",
            "http",
            "--port",
            str(free_port()),
            "--token-env",
            "VAULT_TEST_TOKEN",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert run.returncode == 2, run
    assert "VAULT_TEST_TOKEN, which is not set, empty or only white space" in run.stderr
    assert "Traceback" not in run.stderr
