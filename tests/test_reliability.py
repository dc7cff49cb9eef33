"""Under load and hostile input: kept-alive HTTP at loopback speed, bounded inputs, a slow call that
holds no one else up, stateless sessions. Real `mkdocs-vault-mcp serve` processes, the SDK's client and raw HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import random
import signal
import socket
import sqlite3
import string
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from mcp import Client

from helpers.live_serve import write_site
from helpers.mcp_session import data, session_over, session_with, text
from helpers.ports import free_port
from helpers.processes import state
from helpers.served import PORT_ATTEMPTS, random_pages
from helpers.site import Site, built_site
from mkdocs_vault_mcp import limits
from mkdocs_vault_mcp.index.freshness import Freshness
from mkdocs_vault_mcp.mcp.live import LiveServer
from mkdocs_vault_mcp.mcp.server import IndexReader, create_server
from mkdocs_vault_mcp.mcp.streamable_http import bind
from mkdocs_vault_mcp.mcp.streamable_http import http_server as uvicorn_server

SCRIPT = Path(sys.executable).parent / "mkdocs-vault-mcp"
STARTUP_SECONDS = 30
EVERY_PREFIX = " OR ".join(f"{letter}*" for letter in string.ascii_lowercase)  # every word of the index
PAGES = {
    "index.md": "---\ntags: [home]\n---\n# Home\n\nWelcome to the wind station.\n",
    "guide/install.md": "---\ntags: [setup]\n---\n# Install\n\nRun the wind installer.\n\n## Upgrade\n\nAgain.\n",
    "guide/usage.md": "# Usage\n\nRead the vane.\n",
}


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return built_site(tmp_path_factory.mktemp("small"), {"plugins": ["vault-mcp"]}, PAGES)


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Site:
    """100 pages of 20 sections of random words (200,000 distinct words): a query on every prefix of them
    costs about a second of SQL, a count a few milliseconds."""
    config = {"plugins": [{"vault-mcp": {"stats_page": False}}]}
    return built_site(tmp_path_factory.mktemp("large"), config, random_pages(100))


@dataclass
class Served:
    port: int
    process: subprocess.Popen


@contextmanager
def http_server(index: Path, *flags: str) -> Iterator[Served]:
    """`mkdocs-vault-mcp serve INDEX --transport http` on a free loopback port."""
    for attempt in range(PORT_ATTEMPTS):
        port = free_port()
        process = subprocess.Popen(
            [str(SCRIPT), "serve", str(index), "--transport", "http", "--port", str(port), *flags],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert process.stdout is not None
        line = process.stdout.readline()
        while line.startswith("mkdocs-vault-mcp: warning:"):  # a bind beyond loopback says what it exposes first
            line = process.stdout.readline()
        if line.startswith("MCP server at"):
            break
        process.terminate()  # ended already, unless it printed something else
        output = line + process.stdout.read()
        process.wait(timeout=10)
        # Another program took the port between free_port's look and the server's bind: another port.
        if "Address already in use" not in output or attempt == PORT_ATTEMPTS - 1:
            raise AssertionError(output)
    try:
        yield Served(port, process)
    finally:
        process.terminate()
        process.wait(timeout=10)


def call_body(tool: str, arguments: dict[str, Any], number: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


class RawClient:
    """MCP over one kept-alive HTTP/1.1 connection, by hand: no session id needed (the server is stateless)."""

    def __init__(self, port: int, headers: dict[str, str] | None = None) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Mcp-Protocol-Version": "2025-06-18",
            **(headers or {}),
        }

    def post(self, body: Any) -> tuple[int, dict[str, Any] | None]:
        self.connection.request("POST", "/mcp", json.dumps(body), self.headers)
        response = self.connection.getresponse()
        text = response.read().decode()
        return response.status, rpc_message(text) if text else None

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        status, message = self.post(call_body(tool, arguments))
        assert status == 200 and message is not None, (status, message)
        return message["result"]

    def close(self) -> None:
        self.connection.close()


def rpc_message(text: str) -> dict[str, Any]:
    """The JSON-RPC answer in a response body: JSON, or the last event of an event stream."""
    events = [line[5:] for line in text.splitlines() if line.startswith("data:")]
    return json.loads(events[-1] if events else text)


# --- 1. kept-alive HTTP ------------------------------------------------------------------------------


def test_calls_on_one_kept_alive_connection_are_answered_and_sent_without_nagle(small):
    """Many calls on one kept-alive connection, by hand and by the SDK's own client; every connection the server
    accepts has Nagle's algorithm off (with it on, each answer on a kept-alive connection would wait for the
    client's delayed ACK; bench/load.py measures calls on kept-alive connections)."""
    with http_server(small.index_path) as served:
        port = served.port
        raw = RawClient(port)
        try:
            assert raw.call("count_documents")["structuredContent"] == {"total": 3, "index_stale": False}
            for _ in range(20):
                assert raw.call("count_documents", folder="guide")["structuredContent"]["total"] >= 1
        finally:
            raw.close()
        with session_with(f"http://127.0.0.1:{port}/mcp") as session:
            for _ in range(20):  # the SDK's own client keeps its connection alive too
                assert session.ok("count_documents", folder="guide")["total"] >= 1
    assert asyncio.run(nodelay_of_a_connection_accepted_on(bind("127.0.0.1", 0))), "Nagle's algorithm is on"


async def nodelay_of_a_connection_accepted_on(listening: socket.socket) -> int:
    """TCP_NODELAY of the connection asyncio (uvicorn's loop) accepts on a socket the server binds."""
    accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.set_result(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(on_connection, sock=listening)
    async with server:
        _, client = await asyncio.open_connection("127.0.0.1", listening.getsockname()[1])
        try:
            return await asyncio.wait_for(accepted, timeout=30)
        finally:
            client.close()


# --- 2. bounded inputs, and a slow call that holds no one up -------------------------------------


def test_every_input_limit_is_an_error_naming_the_limit(small):
    with session_over(small.index_path) as mcp:
        too_long = "wind " * (limits.QUERY_CHARS // 5 + 1)
        message = mcp.error("count_documents", query=too_long)
        assert f"the limit is {limits.QUERY_CHARS} characters" in message and message.startswith("query ")
        many_words = " ".join(f"w{n}" for n in range(limits.QUERY_TERMS + 1))
        message = mcp.error("search", query=many_words)
        assert f"the limit is {limits.QUERY_TERMS} words" in message
        assert mcp.ok("search", query=" ".join(["wind"] * limits.QUERY_TERMS))["result"], "at the limit it works"
        # SQLite's own limit (50,000 bytes) used to end in a bare "Error executing tool".
        message = mcp.error("query_documents", pattern="*" * 60_000)
        assert f"pattern is 60000 characters long; the limit is {limits.PATTERN_CHARS}" in message
        filters = {f"field{n}": "x" for n in range(limits.FILTER_FIELDS + 1)}
        assert f"the limit is {limits.FILTER_FIELDS} fields" in mcp.error("count_documents", filters=filters)
        message = mcp.error("read", path="a" * 5_000)
        assert f"path is 5000 characters long; the limit is {limits.TEXT_CHARS}" in message
        message = mcp.error("count_documents", filters={"tags": "x" * 5_000})
        assert "filters['tags'] is 5000 characters long" in message
        # Every error, whatever it quotes, stays short.
        for tool, arguments in (
            ("count_documents", {"unknown" * 10_000: 1}),
            ("count_documents", {"modified_after": "9" * 999}),
            ("aggregate_documents", {"by": "x" * 100_000}),
        ):
            result = mcp.call(tool, **arguments)
            assert result.is_error and len(text(result)) <= limits.MESSAGE_CHARS


@pytest.mark.parametrize("parameter", ["query", "pattern", "folder", "path", "filters"])
def test_nul_bytes_and_lone_surrogates_are_errors_naming_the_parameter(small, parameter):
    """SQLite cut text at a NUL ("wind\\0zzz" counted the pages with "wind"); a lone surrogate cannot be encoded."""
    with session_over(small.index_path) as mcp:
        for bad, what in (("wind\x00zzzqqq", "NUL"), ("wind\ud800", "lone surrogate")):
            value: Any = {"tags": bad} if parameter == "filters" else bad
            message = mcp.error("count_documents", **{parameter: value})
            assert message.startswith(parameter) and what in message, message
        assert mcp.ok("count_documents", query="wind")["total"] == 2


def test_nul_and_surrogates_over_raw_http_get_errors(small):
    """As a client sends them on the wire: JSON escapes. The SDK decodes a NUL into the string (the tool refuses
    it, naming the parameter); its JSON parser refuses a lone surrogate itself, with a JSON-RPC parse error."""
    with http_server(small.index_path) as served:
        raw = RawClient(served.port)
        try:
            for escaped in ('"wind\\u0000zzzqqq"', '"wind\\ud800"'):
                body = (
                    '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "count_documents",'
                    f' "arguments": {{"query": {escaped}}}}}}}'
                )
                raw.connection.request("POST", "/mcp", body.encode(), raw.headers)
                response = raw.connection.getresponse()
                text = response.read().decode()
                if "ud800" in escaped:
                    assert response.status == 400 and json.loads(text)["error"]["code"] == -32700, text
                    continue
                assert response.status == 200, (response.status, text)
                result = rpc_message(text)["result"]
                assert result["isError"] and result["content"][0]["text"].startswith(
                    "Error executing tool count_documents: query holds a NUL"
                ), result
                assert result["_meta"] == {"index_stale": False}
        finally:
            raw.close()


def test_a_call_that_works_too_long_is_stopped_with_an_error_naming_the_limit(large):
    with session_with(create_server(IndexReader(large.index_path, call_seconds=0.05))) as mcp:
        message = mcp.error("search", query=EVERY_PREFIX)
        assert "more than 0.05 seconds of work, the limit per call" in message
        assert mcp.ok("count_documents", folder="")["total"] == 100, "the next call is served as usual"


def test_a_small_answer_whose_sql_outgrows_the_event_loops_share_is_finished_on_a_worker_thread(small):
    """A small answer is tried on the event loop for INLINE_SECONDS of SQL work, then started again on a thread."""
    count_to = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT count(*) FROM c"
    threads: list[int] = []

    def compute(limit: int) -> Any:
        def run(conn: sqlite3.Connection) -> dict[str, Any]:
            threads.append(threading.get_ident())
            return {"total": conn.execute(count_to, (limit,)).fetchone()[0]}

        return run

    async def answers() -> tuple[int, list[Any]]:
        reader = IndexReader(small.index_path)
        quick = await reader.answer(compute(10), wait=False, small_answer=True)
        slow = await reader.answer(compute(3_000_000), wait=False, small_answer=True)
        return threading.get_ident(), [quick["structuredContent"]["total"], slow["structuredContent"]["total"]]

    loop_thread, totals = anyio.run(answers)
    assert totals == [10, 3_000_000]
    assert threads[0] == loop_thread  # the quick one on the event loop
    assert threads[1] == loop_thread and threads[2] != loop_thread  # the slow one gave up there, then a thread


def test_work_that_cannot_check_its_budget_never_starts_on_the_event_loop(small):
    """A call tried on the event loop that reaches such work (a model's inference) starts again on a thread."""
    from mkdocs_vault_mcp import budget

    threads: list[int] = []

    def compute(conn: sqlite3.Connection) -> dict[str, Any]:
        threads.append(threading.get_ident())
        budget.leave_event_loop()
        return {"total": conn.execute("SELECT count(*) FROM documents").fetchone()[0]}

    async def answer() -> tuple[int, dict[str, Any]]:
        reader = IndexReader(small.index_path)
        return threading.get_ident(), await reader.answer(compute, wait=False, small_answer=True)

    loop_thread, answered = anyio.run(answer)
    assert answered["structuredContent"]["total"] == 3
    assert threads[0] == loop_thread and threads[1] != loop_thread and len(threads) == 2


def test_a_cheap_call_is_answered_while_an_expensive_one_runs(large):
    with http_server(large.index_path) as served:
        port = served.port
        slow_done = threading.Event()
        slow_results: list[Any] = []

        def expensive() -> None:
            client = RawClient(port)
            try:
                slow_results.append(client.call("search", query=EVERY_PREFIX, limit=100, sections_per_page=10))
            finally:
                client.close()
                slow_done.set()

        cheap = RawClient(port)
        try:
            cheap.call("count_documents")  # warm: the first call opens this thread's connection
            slow = threading.Thread(target=expensive)
            slow.start()
            time.sleep(0.2)  # the expensive call is under way
            # A cheap call held up behind the expensive one would be answered only once that one is: then the
            # loop ends after it. Answered while it runs, several are.
            answered_while_it_ran = 0
            while not slow_done.is_set() and answered_while_it_ran < 20:
                assert cheap.call("count_documents", folder="")["structuredContent"]["total"] == 100
                answered_while_it_ran += not slow_done.is_set()
            slow.join(timeout=30)
        finally:
            cheap.close()
        assert len(slow_results) == 1 and not slow_results[0].get("isError"), slow_results
        assert answered_while_it_ran >= 3, f"{answered_while_it_ran} cheap calls answered while the expensive one ran"


# --- 3. sessions ---------------------------------------------------------------------------------------


def test_the_http_server_is_stateless_so_abandoned_clients_cost_nothing(small):
    with http_server(small.index_path) as served:
        port = served.port
        raw = RawClient(port)
        try:
            initialize = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
            for _ in range(500):  # abandoned: never a DELETE
                raw.connection.request("POST", "/mcp", json.dumps(initialize), raw.headers)
                response = raw.connection.getresponse()
                response.read()
                assert response.status == 200 and response.getheader("mcp-session-id") is None
            rss_before = rss_of(served.process.pid)
            # Each session a stateful server kept cost ~30 KB (10,000: ~300 MB, then 503 for every new client).
            for _ in range(1_000):
                raw.connection.request("POST", "/mcp", json.dumps(initialize), raw.headers)
                response = raw.connection.getresponse()
                response.read()
                assert response.status == 200
            rss_after = rss_of(served.process.pid)
            assert rss_after - rss_before < 10 * 2**20, (rss_before, rss_after)
            # A new client is served: no session limit to run into.
            assert raw.call("count_documents")["structuredContent"]["total"] == 3
        finally:
            raw.close()


def rss_of(pid: int) -> int:
    """Resident memory (bytes) of a process."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for process {pid}")


# --- 4. freshness from the start of mkdocs serve, one snapshot per answer -----------------------------

# Saves a page at the end of the first build: after MkDocs read the pages, before anyone watches for changes.
SAVE_DURING_FIRST_BUILD = """
import pathlib

def on_post_build(config):
    late = pathlib.Path(config.docs_dir) / "guide" / "late.md"
    if not late.exists():
        late.write_text("# Late\\n\\nSaved while the first build ended.\\n")
"""


def test_a_page_saved_before_serve_watches_is_indexed_or_flagged(tmp_path, serve_factory):
    port = free_port()
    config = write_site(tmp_path, mcp_port=port)
    (tmp_path / "hooks" / "late.py").write_text(SAVE_DURING_FIRST_BUILD)
    config.write_text(config.read_text().replace("  - hooks/slow.py\n", "  - hooks/slow.py\n  - hooks/late.py\n"))
    serve = serve_factory(config, mcp_port=port)
    serve.wait_for(r"Serving on ")

    async def session() -> None:
        async with Client(serve.url) as client:
            answer = data(await client.call_tool("count_documents", {"path": "guide/late.md"}))
            assert answer["total"] == 1 or answer["index_stale"], answer
            waited = data(
                await client.call_tool("count_documents", {"path": "guide/late.md", "wait_for_pending_writes": True})
            )
            assert waited == {"total": 1, "index_stale": False}, serve.log

    asyncio.run(session())
    serve.interrupt()


def test_a_count_and_its_rows_come_from_one_snapshot_while_the_index_changes(small):
    """query_documents counts and lists in two statements; a commit between them tore the answer."""
    working = small.root / ".cache" / "plugin" / "vault-mcp" / "build.sqlite"
    with contextlib.closing(sqlite3.connect(working)) as conn:
        conn.execute("PRAGMA journal_mode = WAL")  # as the working index of `mkdocs serve` is
    stop = threading.Event()
    commits = [0]

    def write_and_remove() -> None:
        writer = sqlite3.connect(working, isolation_level=None)
        try:
            while not stop.is_set():
                writer.execute("BEGIN IMMEDIATE")
                writer.executemany(
                    "INSERT INTO documents (path, folder, url, title, summary, meta, headings, modified, language)"
                    " VALUES (?, 'extra', '/x/', 'x', '', '{}', '[]', 0, 'en')",
                    [(f"extra/{n}.md",) for n in range(50)],
                )
                writer.execute("COMMIT")
                writer.execute("DELETE FROM documents WHERE folder = 'extra'")
                commits[0] += 2
        finally:
            writer.close()

    thread = threading.Thread(target=write_and_remove)
    torn = []
    with session_over(working) as mcp:
        thread.start()
        try:
            for _ in range(300):
                answer = mcp.ok("query_documents", limit=1000)
                if answer["total"] != len(answer["result"]):
                    torn.append((answer["total"], len(answer["result"])))
        finally:
            stop.set()
            thread.join()
    assert commits[0] > 100, "the index hardly changed while it was read; the test proves nothing"
    assert not torn, torn


# --- 7. beyond loopback: the Host the connection really came through, a bearer token -------------------


@contextmanager
def network_test_host() -> Iterator[Callable[[int, dict[str, str]], int]]:
    """A host of this test's own on a network namespace joined to this machine by a veth pair (TEST-NET-2
    addresses, nothing beyond the pair): `post(port, headers)` posts from it to this machine's side and gives
    the HTTP status. Skips where namespaces cannot be made (not root, no iproute2)."""
    remove_stale_test_hosts()
    tag = f"{os.getpid() % 100000}"
    namespace, here, there = f"vaultmcp{tag}", f"vmh{tag}", f"vmn{tag}"
    setup = [
        ["ip", "netns", "add", namespace],
        ["ip", "link", "add", here, "type", "veth", "peer", "name", there],
        ["ip", "link", "set", there, "netns", namespace],
        ["ip", "addr", "add", f"{HOST_SIDE}/24", "dev", here],
        ["ip", "link", "set", here, "up"],
        ["ip", "netns", "exec", namespace, "ip", "addr", "add", "198.51.100.2/24", "dev", there],
        ["ip", "netns", "exec", namespace, "ip", "link", "set", there, "up"],
    ]
    try:
        for command in setup:
            if subprocess.run(command, capture_output=True).returncode != 0:
                pytest.skip(f"cannot make a network namespace here ({' '.join(command)} failed)")

        def post(port: int, headers: dict[str, str]) -> int:
            run = subprocess.run(
                [
                    "ip",
                    "netns",
                    "exec",
                    namespace,
                    sys.executable,
                    "-c",
                    POST_FROM_THE_HOST,
                    HOST_SIDE,
                    str(port),
                    json.dumps(headers),
                ],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert run.returncode == 0, run.stderr
            return int(run.stdout.split()[-1])

        yield post
    finally:
        subprocess.run(["ip", "link", "del", here], capture_output=True)
        subprocess.run(["ip", "netns", "del", namespace], capture_output=True)


def remove_stale_test_hosts() -> None:
    """A run killed inside `network_test_host` leaves its namespace and link behind, holding HOST_SIDE: remove those
    whose process is gone, so that one killed run does not fail every later one."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split("\n")
    for name in (line.split()[0] for line in listed if line.startswith("vaultmcp")):
        tag = name.removeprefix("vaultmcp")
        if tag.isdigit() and not Path(f"/proc/{tag}").exists():
            subprocess.run(["ip", "link", "del", f"vmh{tag}"], capture_output=True)
            subprocess.run(["ip", "netns", "del", name], capture_output=True)


HOST_SIDE = "198.51.100.1"
POST_FROM_THE_HOST = """
import http.client, json, sys
address, port, headers = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "count_documents", "arguments": {}}})
connection = http.client.HTTPConnection(address, port, timeout=10)
connection.request("POST", "/mcp", body, {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-06-18", **headers})
print(connection.getresponse().status)
"""


def post_status(address: str, port: int, headers: dict[str, str]) -> int:
    connection = http.client.HTTPConnection(address, port, timeout=10)
    try:
        body = json.dumps(call_body("count_documents", {}))
        connection.request(
            "POST",
            "/mcp",
            body,
            {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "Mcp-Protocol-Version": "2025-06-18",
                **headers,
            },
        )
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def test_bound_to_every_address_a_loopback_host_is_served_only_through_loopback(small):
    with network_test_host() as post_from_the_network, http_server(small.index_path, "--host", "0.0.0.0") as served:
        port = served.port
        assert post_status("127.0.0.1", port, {"Host": f"localhost:{port}"}) == 200
        assert post_status("127.0.0.1", port, {"Host": f"127.0.0.1:{port}"}) == 200
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "localhost"):
            assert post_from_the_network(port, {"Host": host}) == 421, f"a spoofed {host} came through"
        assert post_from_the_network(port, {"Host": f"{HOST_SIDE}:{port}"}) == 421, "not an allowed host"
        with http_server(small.index_path, "--host", "0.0.0.0", "--allow-host", "docs.example") as allowing:
            assert post_from_the_network(allowing.port, {"Host": f"docs.example:{allowing.port}"}) == 200


def test_a_bearer_token_from_the_environment_is_required_and_never_shown(small, monkeypatch):
    token = "s3cret-" + "".join(random.choices(string.ascii_letters, k=24))
    monkeypatch.setenv("VAULT_TEST_TOKEN", token)
    with http_server(small.index_path, "--token-env", "VAULT_TEST_TOKEN") as served:
        port = served.port
        assert post_status("127.0.0.1", port, {}) == 401
        assert post_status("127.0.0.1", port, {"Authorization": "Bearer wrong"}) == 401
        assert post_status("127.0.0.1", port, {"Authorization": f"Bearer {token}x"}) == 401
        assert post_status("127.0.0.1", port, {"Authorization": f"Bearer {token}"}) == 200
        assert post_status("127.0.0.1", port, {"Authorization": f"bearer {token}"}) == 200  # RFC 6750: any case
        assert post_status("127.0.0.1", port, {"Authorization": f"Basic {token}"}) == 401
        raw = RawClient(port, {"Authorization": f"Bearer {token}"})
        try:
            assert raw.call("count_documents")["structuredContent"]["total"] == 3
        finally:
            raw.close()
        served.process.terminate()
        output = served.process.communicate(timeout=10)[0]
    assert token not in output
    monkeypatch.delenv("VAULT_TEST_TOKEN")
    run = subprocess.run(
        [str(SCRIPT), "serve", str(small.index_path), "--transport", "http", "--token-env", "VAULT_TEST_TOKEN"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert run.returncode == 2 and "VAULT_TEST_TOKEN, which is not set" in run.stderr


def test_the_live_server_takes_its_token_from_the_environment_variable_the_option_names(small, monkeypatch):
    options = SimpleNamespace(
        mcp_host="127.0.0.1",
        mcp_port=free_port(),
        mcp_path="/mcp",
        mcp_allowed_hosts=[],
        wait_timeout=1,
        mcp_token_env="VAULT_LIVE_TOKEN",
    )
    monkeypatch.delenv("VAULT_LIVE_TOKEN", raising=False)
    assert not LiveServer(options, Freshness()).reserve(), "no token set: not served at all"
    monkeypatch.setenv("VAULT_LIVE_TOKEN", "live-token")
    live = LiveServer(options, Freshness())
    assert live.reserve()
    assert live.start(small.index_path, SimpleNamespace(dev_addr=None, site_name="Test site"))
    try:
        assert post_status("127.0.0.1", options.mcp_port, {}) == 401
        assert post_status("127.0.0.1", options.mcp_port, {"Authorization": "Bearer live-token"}) == 200
    finally:
        live.stop()


# --- 9. more processes -----------------------------------------------------------------------------------


def test_workers_serve_the_index_from_that_many_processes(small):
    with http_server(small.index_path, "--workers", "2") as served:
        children = [
            int(pid)
            for pid in Path(f"/proc/{served.process.pid}/task/{served.process.pid}/children").read_text().split()
        ]
        assert len(children) == 2
        before = {child: socket_count(child) for child in children}
        clients = [RawClient(served.port) for _ in range(16)]
        try:
            for client in clients:  # kept open: each connection stays with the process that accepted it
                assert client.call("count_documents")["structuredContent"]["total"] == 3
            gained = {child: socket_count(child) - before[child] for child in children}
            assert all(count > 0 for count in gained.values()), f"connections per process: {gained}"
        finally:
            for client in clients:
                client.close()
        served.process.send_signal(signal.SIGINT)
        assert served.process.wait(timeout=10) == 0
        assert not any(state(child) not in (None, "Z") for child in children)  # each ended: gone or a zombie


def socket_count(pid: int) -> int:
    return sum(1 for fd in Path(f"/proc/{pid}/fd").iterdir() if link_target(fd).startswith("socket:"))


def link_target(fd: Path) -> str:
    """What an open file of another process is, or "" when it was closed after the listing."""
    try:
        return os.readlink(fd)
    except FileNotFoundError:
        return ""


# --- 8. malformed JSON-RPC over stdio ---------------------------------------------------------------------


def test_every_malformed_line_over_stdio_gets_a_json_rpc_error_and_the_session_goes_on(small):
    server = subprocess.Popen(
        [str(SCRIPT), "serve", str(small.index_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    stdin, stdout, stderr = server.stdin, server.stdout, server.stderr
    answers: list[dict[str, Any]] = []
    reader = threading.Thread(target=lambda: answers.extend(json.loads(line) for line in stdout), daemon=True)
    reader.start()

    def send(line: str) -> None:
        stdin.write(line + "\n")
        stdin.flush()

    def next_answer(count: int) -> dict[str, Any]:
        deadline = time.monotonic() + 10
        while len(answers) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        if len(answers) < count:
            server.kill()  # so that its stderr ends, and can be read whole
            pytest.fail(f"no answer to line {count}; stderr: {stderr.read()!r}")
        return answers[count - 1]

    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    malformed = [
        ("garbage", -32700, None),
        (json.dumps([ping]), -32600, None),  # a batch
        (json.dumps({**ping, "id": {"an": "object"}}), -32600, None),
        ("[" * 10_000 + "]" * 10_000, -32700, None),
        (json.dumps({"jsonrpc": "2.0", "id": 5, "params": {}}), -32600, 5),  # no method
        ('{"jsonrpc": "2.0", "id": 8, "method": "ping", "params": ' + "[" * 300 + "]" * 300 + "}", -32600, 8),
        ('{"jsonrpc": "2.0", "id": 6, "method": "x' + "y" * 100_000, -32700, None),  # cut short, and long
    ]
    try:
        for number, (line, code, request_id) in enumerate(malformed, start=1):
            send(line)
            answer = next_answer(number)
            assert answer["error"]["code"] == code and answer["id"] == request_id, answer
            assert len(answer["error"]["message"]) <= limits.MESSAGE_CHARS
        send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 9,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "1"},
                    },
                }
            )
        )
        assert next_answer(len(malformed) + 1)["result"]["serverInfo"]["name"] == "mkdocs-vault-mcp"
    finally:
        stdin.close()
        assert server.wait(timeout=10) == 0


@contextmanager
def stateful_server(index: Path, max_sessions: int, idle_seconds: float) -> Iterator[int]:
    """The HTTP server with sessions kept (`--stateful-sessions`), its limits made small; yields the port."""
    sock = bind("127.0.0.1", 0)
    http = uvicorn_server(
        create_server(IndexReader(index)),
        "127.0.0.1",
        "/mcp",
        [],
        stateful=True,
        max_sessions=max_sessions,
        session_idle_seconds=idle_seconds,
    )
    thread = threading.Thread(target=lambda: asyncio.run(http.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_SECONDS
    while not http.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield sock.getsockname()[1]
    finally:
        http.should_exit = True
        thread.join(timeout=10)


def open_session(raw: RawClient) -> str:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }
    raw.connection.request("POST", "/mcp", json.dumps(initialize), raw.headers)
    response = raw.connection.getresponse()
    response.read()
    assert response.status == 200, response.status
    session = response.getheader("mcp-session-id")
    assert session, "no mcp-session-id header"
    return session


def session_status(raw: RawClient, session: str) -> int:
    raw.connection.request(
        "POST", "/mcp", json.dumps(call_body("count_documents", {})), {**raw.headers, "Mcp-Session-Id": session}
    )
    response = raw.connection.getresponse()
    response.read()
    return response.status


def test_stateful_sessions_make_room_by_evicting_the_longest_idle_and_expire(small):
    with stateful_server(small.index_path, max_sessions=3, idle_seconds=60) as port:
        raw = RawClient(port)
        try:
            first, second, third = (open_session(raw) for _ in range(3))
            assert session_status(raw, first) == 200  # used last: the second is now idle the longest
            fourth = open_session(raw)  # at the limit: a new client is served, not refused with 503
            assert fourth and session_status(raw, fourth) == 200
            assert session_status(raw, second) == 404, "the longest idle session made room"
            assert all(session_status(raw, s) == 200 for s in (first, third, fourth))
        finally:
            raw.close()
    with stateful_server(small.index_path, max_sessions=3, idle_seconds=0.3) as port:
        raw = RawClient(port)
        try:
            session = open_session(raw)
            deadline = time.monotonic() + 10
            while session_status(raw, session) == 200 and time.monotonic() < deadline:
                time.sleep(0.5)  # longer than the idle time: each poll finds it idle past its time
            assert session_status(raw, session) == 404, "an idle session expires"
        finally:
            raw.close()
