"""The MCP server beside `mkdocs serve`: real `mkdocs serve` processes on temp sites, talked to over HTTP with the
SDK's client; the pending-write state and the file watcher in-process, against a real index and MCP session."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import logging
import re
import socket
import sqlite3
import subprocess
import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest
from mcp import Client

from helpers.live_serve import MKDOCS, STARTUP_SECONDS, Serve, write_site
from helpers.mcp_session import data
from helpers.ports import free_port
from mkdocs_vault_mcp.index.freshness import Freshness
from mkdocs_vault_mcp.mcp.live import LiveServer, changed_since
from mkdocs_vault_mcp.mcp.server import IndexReader, create_server


def can_bind(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def tags(aggregate: dict[str, Any]) -> dict[str, int]:
    return {bucket["key"]: bucket["count"] for bucket in aggregate["buckets"]}


def raw_post(port: int, headers: dict[str, str], body: dict[str, Any]) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.putrequest("POST", "/mcp", skip_host="Host" in headers, skip_accept_encoding=True)
    payload = json.dumps(body).encode()
    for name, value in {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Content-Length": str(len(payload)),
        **headers,
    }.items():
        connection.putheader(name, value)
    connection.endheaders(payload)
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def open_event_stream(port: int) -> http.client.HTTPConnection:
    """An initialized client with its server-to-client event stream open, as long-running MCP clients keep it
    (the server is stateless: it gives no session id)."""
    initialized = raw_post(port, {}, INITIALIZE)
    assert initialized.getheader("mcp-session-id") is None
    session = {"Mcp-Protocol-Version": "2025-06-18"}
    assert raw_post(port, session, {"jsonrpc": "2.0", "method": "notifications/initialized"}).status == 202
    stream = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    stream.request("GET", "/mcp", headers={**session, "Accept": "text/event-stream"})
    assert stream.getresponse().status == 200
    return stream


def wait_until(condition: Any, serve: Serve) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert condition(), serve.log


def run_catching(coroutine_function: Any) -> None:
    """Run it; a call cut short by the server's shutdown may end in a connection error."""
    with contextlib.suppress(Exception):
        asyncio.run(coroutine_function())


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


# --- the end-to-end run ------------------------------------------------------------------------


def test_serve_keeps_the_index_current_for_an_mcp_client(tmp_path, serve_factory):
    port = free_port()
    serve = serve_factory(write_site(tmp_path, mcp_port=port), mcp_port=port)
    docs = tmp_path / "docs"
    serving_line = serve.wait_for(r"Serving on ")
    url_line = serve.wait_for(rf"MCP server for AI agents \(Streamable HTTP\): {re.escape(serve.url)}$")
    assert url_line.string in serve.lines[: serve.lines.index(serving_line.string)]

    def indexed_since(mark: int, changed: int, unchanged: int, removed: int) -> None:
        serve.wait_for(rf"Indexed \d+ pages, .*: {changed} changed, {unchanged} unchanged, {removed} removed", mark)

    async def session() -> None:
        async with Client(serve.url) as client:
            count = lambda **args: client.call_tool("count_documents", args)  # noqa: E731
            by_tag = lambda **args: client.call_tool("aggregate_documents", {"by": "tag", **args})  # noqa: E731

            assert data(await count(folder="guide")) == {"total": 3, "index_stale": False}
            assert data(await count())["total"] == 5, "the draft is a document under serve"

            mark = len(serve.lines)
            (docs / "guide" / "new.md").write_text("# New\n\nJust saved.\n")
            waited = data(await count(folder="guide", wait_for_pending_writes=True))
            assert waited == {"total": 4, "index_stale": False}, serve.log
            indexed_since(mark, changed=1, unchanged=5, removed=0)

            mark = len(serve.lines)
            (docs / "guide" / "usage.md").write_text("---\ntags: [python, advanced]\n---\n# Usage\n\nCall it.\n")
            after = data(await by_tag(wait_for_pending_writes=True))
            assert tags(after) == {"python": 2, "advanced": 1, "home": 1, "idea": 1, "setup": 1}
            assert after["index_stale"] is False
            indexed_since(mark, changed=1, unchanged=5, removed=0)

            mark = len(serve.lines)
            (docs / "guide" / "install.md").unlink()
            assert data(await count(folder="guide", wait_for_pending_writes=True))["total"] == 3
            assert data(await count(path="guide/install.md"))["total"] == 0
            indexed_since(mark, changed=0, unchanged=5, removed=1)

            # A slow rebuild: the hook sleeps while rendering the page that asks for it.
            before = {"python": 1, "advanced": 1, "home": 1, "idea": 1}
            (docs / "guide" / "slow.md").write_text("---\ntags: [slow]\n---\n# Slow\n\nSLOW-BUILD\n")
            # The save is pending before MkDocs notices it (it polls twice a second); the file event may
            # take a few milliseconds to arrive. The rebuild takes seconds, so every answer here is old.
            for _ in range(50):
                saved = data(await by_tag())
                assert tags(saved) == before
                if saved["index_stale"]:
                    break
                await asyncio.sleep(0.01)
            assert saved["index_stale"] is True
            flag = tmp_path / "state" / "slow-build-started"
            await asyncio.to_thread(wait_until, flag.exists, serve)
            during = data(await by_tag())
            assert tags(during) == before and during["index_stale"] is True
            after = data(await by_tag(wait_for_pending_writes=True))
            assert tags(after) == {**before, "slow": 1} and after["index_stale"] is False

    asyncio.run(session())

    # DNS rebinding protection: a foreign Host or Origin is refused, loopback ones are served.
    assert 400 <= raw_post(port, {"Host": "evil.example"}, INITIALIZE).status < 500
    foreign_origin = {"Host": f"127.0.0.1:{port}", "Origin": "http://evil.example"}
    assert 400 <= raw_post(port, foreign_origin, INITIALIZE).status < 500
    dev_site = {"Host": f"localhost:{port}", "Origin": f"http://127.0.0.1:{serve.dev_port}"}
    assert raw_post(port, dev_site, INITIALIZE).status == 200
    assert raw_post(port, {"Host": f"127.0.0.1:{port}"}, INITIALIZE).status == 200

    # Ctrl-C during a rebuild, with a client's event stream open and a call waiting for the rebuild.
    stream = open_event_stream(port)
    flag = tmp_path / "state" / "slow-build-started"
    flag.unlink()
    (docs / "guide" / "slow.md").write_text("---\ntags: [slower]\n---\n# Slow\n\nSLOW-BUILD UNTIL-A-CALL-WAITS\n")
    wait_until(flag.exists, serve)
    waiting: list[Any] = []

    async def wait_for_the_rebuild() -> None:
        async with Client(serve.url) as client:
            waiting.append(await client.call_tool("count_documents", {"wait_for_pending_writes": True}))

    caller = threading.Thread(target=run_catching, args=[wait_for_the_rebuild])
    caller.start()
    # Interrupted only once the call waits: on a loaded machine its request may take a second to get there.
    wait_until((tmp_path / "state" / "call-waiting").exists, serve)
    try:
        serve.interrupt()
    finally:
        stream.close()
    caller.join(timeout=10)
    assert not caller.is_alive()
    assert len(waiting) == 1, "the waiting call got no answer"
    assert data(waiting[0])["index_stale"] is True, "the rebuild never committed"
    assert serve.process.returncode == 0, serve.log
    assert can_bind(serve.dev_port) and can_bind(port)
    # The refused requests and the HTTP stack's own records (the cut stream too) stay off the MkDocs console.
    http_records = r"Invalid (Host|Origin)|uvicorn|Traceback|Started server|Processing request"
    assert not re.search(http_records, serve.log), serve.log


# --- the ways to run mkdocs serve ---------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--no-livereload", "--clean", "--dirty"])
def test_every_kind_of_serve_run_starts_the_server(tmp_path, serve_factory, flag):
    port = free_port()
    serve = serve_factory(write_site(tmp_path, mcp_port=port), flag, mcp_port=port)
    serve.wait_for(r"Serving on ")

    async def session() -> dict[str, Any]:
        async with Client(serve.url) as client:
            return data(await client.call_tool("count_documents", {}))

    # `--clean` builds exactly as `mkdocs build` does, drafts left out; the other runs preview drafts.
    assert asyncio.run(session()) == {"total": 4 if flag == "--clean" else 5, "index_stale": False}
    serve.interrupt()
    assert can_bind(port)


def test_dirty_rebuilds_update_only_the_changed_pages_and_keep_the_drafts(tmp_path, serve_factory):
    port = free_port()
    serve = serve_factory(write_site(tmp_path, mcp_port=port), "--dirty", mcp_port=port)
    serve.wait_for(r"Serving on ")
    docs = tmp_path / "docs"

    async def session() -> None:
        async with Client(serve.url) as client:
            by_tag = lambda: client.call_tool(  # noqa: E731
                "aggregate_documents", {"by": "tag", "wait_for_pending_writes": True}
            )
            mark = len(serve.lines)
            (docs / "guide" / "usage.md").write_text("---\ntags: [python, advanced]\n---\n# Usage\n\nCall it.\n")
            after = data(await by_tag())
            assert after["total"] == 5, "pages MkDocs did not render again (the draft among them) stay"
            assert tags(after) == {"python": 2, "advanced": 1, "home": 1, "idea": 1, "setup": 1}, serve.log
            serve.wait_for(r"Indexed 5 pages, .*: 1 changed, 0 unchanged, 0 removed", mark)

            mark = len(serve.lines)
            (docs / "guide" / "install.md").unlink()
            after = data(await by_tag())
            assert after["total"] == 4 and "setup" not in tags(after)
            serve.wait_for(r"Indexed 4 pages, .*: 0 changed, 0 unchanged, 1 removed", mark)

    asyncio.run(session())
    serve.interrupt()


def test_serve_indexes_an_edit_that_only_the_source_shows(tmp_path, serve_factory):
    # Under serve the files' sizes and times come from a process of their own (build_steps/file_statuses.py).
    port = free_port()
    serve = serve_factory(write_site(tmp_path, mcp_port=port), mcp_port=port)
    serve.wait_for(r"Serving on ")
    usage = tmp_path / "docs" / "guide" / "usage.md"
    edited = usage.read_text(encoding="utf-8").replace("tags: [python]", "tags: [python]  # reviewed")
    mark = len(serve.lines)
    usage.write_text(edited, encoding="utf-8")
    serve.wait_for(r"Indexed 5 pages, .*: 1 changed, 4 unchanged, 0 removed", mark)
    index = tmp_path / ".cache" / "plugin" / "vault-mcp" / "serve.sqlite"
    with contextlib.closing(sqlite3.connect(f"file:{index}?mode=ro", uri=True)) as conn:
        stored = conn.execute(
            "SELECT s.markdown FROM sources s JOIN documents d ON d.id = s.document_id WHERE d.path = ?",
            ["guide/usage.md"],
        ).fetchone()[0]
    assert stored == edited
    serve.interrupt()


@pytest.mark.parametrize("flags", [(), ("--dirty",)], ids=["serve", "dirty"])
def test_links_resolve_against_the_files_of_each_rebuild(tmp_path, serve_factory, flags):
    """The site's files, which links resolve to, are worked out by every rebuild (their server paths are kept
    across rebuilds): a page added mends the link to it, removed breaks it again, though the linking page is the
    same (under `--dirty` MkDocs does not even render it again)."""
    port = free_port()
    config = write_site(tmp_path, mcp_port=port)
    docs = tmp_path / "docs"
    # The address, not notes.md: MkDocs rewrites a link to a page's file only when it renders the linking page
    (docs / "links.md").write_text("# Links\n\nSee [the notes](../notes/).\n", encoding="utf-8")
    serve = serve_factory(config, *flags, mcp_port=port)
    serve.wait_for(r"Serving on ")

    async def session() -> None:
        async with Client(serve.url) as client:

            async def broken() -> set[str]:
                answer = data(
                    await client.call_tool("links", {"show": "broken", "limit": 100, "wait_for_pending_writes": True})
                )
                return {row["target"] for row in answer["result"]}

            assert "/notes/" in await broken()
            (docs / "notes.md").write_text("# Notes\n\nWritten later.\n", encoding="utf-8")
            assert "/notes/" not in await broken(), serve.log
            (docs / "notes.md").unlink()
            assert "/notes/" in await broken(), serve.log

    asyncio.run(session())
    serve.interrupt()


@pytest.mark.parametrize("conflict", ["port in use", "port of mkdocs serve"])
def test_a_port_conflict_is_a_warning_and_serve_goes_on(tmp_path, serve_factory, conflict):
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen()
    port = blocker.getsockname()[1]
    try:
        config = write_site(tmp_path, mcp_port=port)
        if conflict == "port in use":
            serve = serve_factory(config, mcp_port=port)
        else:
            blocker.close()
            serve = serve_factory(config, mcp_port=port, dev_port=port)
        warning = serve.wait_for(r"WARNING .*MCP server not started").string
        assert str(port) in warning and "mcp_port" in warning
        serve.wait_for(r"Serving on ")
        page = http.client.HTTPConnection("127.0.0.1", serve.dev_port, timeout=10)
        page.request("GET", "/guide/usage/")
        assert page.getresponse().status == 200
        page.close()
        assert "MCP server for AI agents" not in serve.log
        serve.interrupt()
    finally:
        blocker.close()


def test_mkdocs_build_never_starts_the_server(tmp_path):
    port = free_port()
    config = write_site(tmp_path, mcp_port=port)
    run = subprocess.run([str(MKDOCS), "build", "-f", str(config)], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "MCP server" not in run.stderr
    cache = tmp_path / ".cache" / "plugin" / "vault-mcp"
    assert (cache / "build.sqlite").exists() and not (cache / "serve.sqlite").exists()


# --- in-process: pending writes, the wait, the watcher -----------------------------------------


def test_a_change_is_pending_until_a_build_that_started_after_it_commits():
    freshness = Freshness()
    assert not freshness.pending
    freshness.change_seen()
    assert freshness.pending
    freshness.build_started()
    freshness.change_seen()  # saved again while the build runs: that build may have read the old text
    freshness.index_committed()
    assert freshness.pending
    freshness.build_ended()
    assert freshness.pending
    freshness.build_started()
    token = freshness.begin_read()
    freshness.index_committed()
    assert not freshness.pending
    assert freshness.is_stale(token), "the index changed while it was being read"
    assert not freshness.is_stale(freshness.begin_read())
    freshness.build_ended()
    assert not freshness.pending


def test_a_failed_build_ends_the_pending_write():
    freshness = Freshness()
    freshness.change_seen()
    freshness.build_started()
    freshness.build_ended()  # on_build_error: nothing will land for this change
    assert not freshness.pending


def test_stopping_sends_the_stale_answer_of_a_call_waiting_for_a_rebuild_before_the_server_ends(site):
    site.write("a.md", "# A\n")
    site.build()
    port = free_port()
    freshness = Freshness()
    options = SimpleNamespace(
        mcp_host="127.0.0.1", mcp_port=port, mcp_path="/mcp", mcp_allowed_hosts=[], wait_timeout=3600
    )  # a stop that waited for it would hang the test
    live = LiveServer(options, freshness)
    assert live.reserve()
    assert live.start(site.index_path, SimpleNamespace(dev_addr=None, site_name="Test site"))
    freshness.change_seen()
    freshness.build_started()  # a rebuild that will not end before the server stops
    answers: list[Any] = []

    async def call() -> None:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            answers.append(data(await client.call_tool("count_documents", {"wait_for_pending_writes": True})))

    caller = threading.Thread(target=run_catching, args=[call])
    caller.start()
    deadline = time.monotonic() + STARTUP_SECONDS
    while not freshness.waiting_calls and time.monotonic() < deadline:
        time.sleep(0.01)
    assert freshness.waiting_calls == 1
    stopping = threading.Thread(target=live.stop, daemon=True)
    stopping.start()
    stopping.join(timeout=STARTUP_SECONDS)
    assert not stopping.is_alive(), "stop waits for the call's wait_timeout (an hour)"
    caller.join(timeout=10)
    assert answers == [{"total": 1, "index_stale": True}]
    assert can_bind(port)


def test_a_change_no_build_picks_up_stops_counting_after_the_settle_time():
    freshness = Freshness(settle=0.2)
    freshness.change_seen()
    assert freshness.pending
    assert freshness.wait(timeout=10)
    assert not freshness.pending


def test_the_wait_is_bounded_by_wait_timeout_and_then_answers_stale(site):
    site.write("a.md", "# A\n")
    site.build()
    freshness = Freshness()

    def count_waiting(wait_timeout: float) -> dict[str, Any]:
        async def call() -> dict[str, Any]:
            async with Client(create_server(IndexReader(site.index_path, freshness, wait_timeout))) as client:
                return data(await client.call_tool("count_documents", {"wait_for_pending_writes": True}))

        return asyncio.run(call())

    freshness.build_started()  # and it does not commit
    assert count_waiting(wait_timeout=0.2) == {"total": 1, "index_stale": True}
    threading.Timer(0.3, freshness.index_committed).start()
    assert count_waiting(wait_timeout=30) == {"total": 1, "index_stale": False}


def test_a_wait_sees_a_save_whose_file_event_has_not_arrived(tmp_path):
    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "guide" / "page.md").write_text("# Page\n")
    freshness = Freshness(settle=0.3)
    freshness.probe = lambda since_ns: changed_since({docs: True}, since_ns)  # no watcher: only the probe
    freshness.build_started()
    freshness.index_committed()
    freshness.build_ended()
    assert freshness.wait(timeout=5), "nothing changed since the build started"
    for change in (
        lambda: (docs / "guide" / "page.md").write_text("# Changed\n"),
        lambda: (docs / "guide" / "page.md").unlink(),
        lambda: (docs / "guide" / "new.md").write_text("# New\n"),
    ):
        time.sleep(0.1)  # a change time after the last accounted instant, whatever the clock's granularity
        change()
        assert not freshness.pending, "no file event in this test"
        assert not freshness.wait(timeout=0.1), "the probe found the save: it waits for the rebuild"
        assert freshness.pending
        assert freshness.wait(timeout=5), "no build came, and the probe does not count the same save twice"


def test_hosts_the_owner_allows_are_served_and_others_refused(site):
    site.write("a.md", "# A\n")
    site.build()
    port = free_port()
    options = SimpleNamespace(
        mcp_host="127.0.0.1",
        mcp_port=port,
        mcp_path="/mcp",
        mcp_allowed_hosts=["docs.example", "wiki.example:8080"],
        wait_timeout=1,
    )
    live = LiveServer(options, Freshness())
    root = logging.getLogger()
    before = (root.level, list(root.handlers))
    assert live.reserve()
    assert live.start(site.index_path, SimpleNamespace(dev_addr=None, site_name="Test site"))
    try:
        assert (root.level, list(root.handlers)) == before, "the MCP SDK must not take over the root logger"
        assert raw_post(port, {"Host": f"docs.example:{port}"}, INITIALIZE).status == 200
        other_port = {"Host": "wiki.example:8080", "Origin": "https://docs.example"}
        assert raw_post(port, other_port, INITIALIZE).status == 200
        assert raw_post(port, {"Host": f"[::1]:{port}"}, INITIALIZE).status == 200
        assert raw_post(port, {"Host": f"wiki.example:{port}"}, INITIALIZE).status == 421, "only the port given"
        assert raw_post(port, {"Host": f"docs.example.evil:{port}"}, INITIALIZE).status == 421
        lookalike = {"Host": f"127.0.0.1:{port}", "Origin": "http://127.0.0.1.evil"}
        assert raw_post(port, lookalike, INITIALIZE).status == 403
    finally:
        live.stop()
    assert can_bind(port)


def test_saving_a_file_is_a_pending_write_but_reading_one_is_not(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.md").write_text("# Page\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: x\n")
    (tmp_path / "other.txt").write_text("")
    freshness = Freshness(settle=30)
    live = LiveServer(SimpleNamespace(mcp_host="127.0.0.1", mcp_port=0), freshness)
    live.watch([str(docs), str(tmp_path / "mkdocs.yml")])
    try:
        (docs / "page.md").read_text()
        (tmp_path / "other.txt").write_text("beside mkdocs.yml, not watched")
        time.sleep(0.3)  # time for any event to arrive
        assert not freshness.pending
        (tmp_path / "mkdocs.yml").write_text("site_name: y\n")
        deadline = time.monotonic() + 10
        while not freshness.pending and time.monotonic() < deadline:
            time.sleep(0.01)
        assert freshness.pending
    finally:
        live.stop()
