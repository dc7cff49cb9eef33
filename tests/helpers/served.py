"""A real HTTP server in a process of its own over loopback, built as a test asks (a budget, a queue), and raw
HTTP/1.1 clients of it: the tests of hostile clients measure what one client's load does to the others."""

from __future__ import annotations

import http.client
import json
import random
import string
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from helpers.ports import free_port

SERVER = """
import sys
from pathlib import Path
from mkdocs_vault_mcp.mcp.server import IndexReader, create_server
from mkdocs_vault_mcp.mcp.streamable_http import serve_http

index, port, seconds, queued = sys.argv[1:5]
reader = IndexReader(Path(index), call_seconds=float(seconds), queued_calls=int(queued))
serve_http(create_server(reader), host="127.0.0.1", port=int(port), path="/mcp", allowed_hosts=[])
"""
PORT_ATTEMPTS = 3
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "Mcp-Protocol-Version": "2025-06-18",
}
# A client's first request, as any MCP client sends it.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
}
EVERY_PREFIX = " OR ".join(f"{letter}*" for letter in string.ascii_lowercase)  # every word of the index


def random_pages(count: int, sections: int = 20, words: int = 100, lede: str = "") -> dict[str, str]:
    """`count` pages of `sections` sections of `words` random 7-letter words each: a query on every prefix of
    them costs SQL in proportion to `count`, a query on one word almost nothing. `lede`: a paragraph under each
    page's title, for a light query that finds every page."""
    rng = random.Random(3)
    pages = {}
    for number in range(count):
        parts = [
            f"## Part {part}\n\n" + " ".join("".join(rng.choices(string.ascii_lowercase, k=7)) for _ in range(words))
            for part in range(sections)
        ]
        opening = f"{lede}\n\n" if lede else ""
        pages[f"p{number:03}.md"] = f"# Page {number}\n\n{opening}" + "\n\n".join(parts) + "\n"
    return pages


@contextmanager
def server_process(
    index: Path, call_seconds: float = 5.0, queued_calls: int = 32, *, preexec: Any = None
) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    for attempt in range(PORT_ATTEMPTS):
        port = free_port()
        process = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(index), str(port), str(call_seconds), str(queued_calls)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=preexec,
        )
        assert process.stdout is not None and process.stderr is not None
        line = process.stdout.readline()
        if line.startswith("MCP server at"):
            break
        process.terminate()  # ended already, unless it printed something else
        errors = process.stderr.read()
        process.wait(timeout=20)
        # Another program took the port between free_port's look and the server's bind: another port.
        if "Address already in use" not in errors or attempt == PORT_ATTEMPTS - 1:
            raise AssertionError(line + errors)
    try:
        yield port, process
    finally:
        process.terminate()
        process.wait(timeout=20)


def call(port: int, tool: str, timeout: float = 120, **arguments: Any) -> dict[str, Any]:
    """One tools/call on a connection of its own; its `result`."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
        connection.request("POST", "/mcp", json.dumps(body), HEADERS)
        response = connection.getresponse()
        text = response.read().decode()
        assert response.status == 200, (response.status, text)
        result: dict[str, Any] = json.loads(text)["result"]
        return result
    finally:
        connection.close()


def message(result: dict[str, Any]) -> str:
    text: str = result["content"][0]["text"]
    return text
