"""Pages as MCP resources, through the SDK's client: the listing (paged), the template, reading a page (the text
`read` gives), completing a path, and the change events a listener gets when the site is rebuilt."""

from __future__ import annotations

import asyncio
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.subscriptions import Subscription
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp_types import ResourceTemplateReference, ResourceUpdatedNotification, TextResourceContents

from helpers.mcp_session import session_over
from helpers.ports import free_port
from helpers.site import Site, built_site
from mkdocs_vault_mcp.mcp import resource_reads, resources, streamable_http
from mkdocs_vault_mcp.mcp.server import IndexReader, create_server
from mkdocs_vault_mcp.mcp.streamable_http import bind

PAGES = {
    "index.md": "# Home\n\nWelcome to the handbook.\n",
    "guide/install.md": "---\ndescription: How to install it.\n---\n# Install\n\nRun the installer.\n\n"
    "## Upgrade\n\nRun it again.\n",
    "guide/usage.md": "# Usage\n\nCall the tools.\n",
    "notes/my page.md": "# My page\n\nA path with a space.\n",
    "notes/日本語.md": "# 日本語\n\n本文です。\n",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Site:
    config = {"site_url": "https://docs.example.com/handbook/", "plugins": ["vault-mcp"]}
    return built_site(tmp_path_factory.mktemp("resources"), config, PAGES)


def every_resource(mcp: Any) -> list[Any]:
    listed, cursor = [], None
    while True:
        answer = mcp.portal.call(lambda given=cursor: mcp.client.list_resources(cursor=given))
        listed += answer.resources
        cursor = answer.next_cursor
        if cursor is None:
            return listed


def read_text(mcp: Any, uri: str) -> TextResourceContents:
    answer = mcp.portal.call(lambda: mcp.client.read_resource(uri, cache_mode="bypass"))
    (contents,) = answer.contents
    assert isinstance(contents, TextResourceContents)
    assert answer.meta is not None and answer.meta["index_stale"] is False
    return contents


def test_every_page_is_listed_in_pages_of_the_listing_with_its_uri_title_and_url(
    built: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resource_reads, "RESOURCES_PER_PAGE", 2)
    with session_over(built.index_path) as mcp:
        first = mcp.portal.call(mcp.client.list_resources)
        assert len(first.resources) == 2 and first.next_cursor is not None
        listed = every_resource(mcp)
    assert [r.name for r in listed] == sorted(PAGES)
    install = next(r for r in listed if r.name == "guide/install.md")
    assert install.uri == "docs://docs.example.com/guide/install.md"
    assert install.title == "Install"
    assert install.description == "How to install it."
    assert install.mime_type == "text/markdown"
    assert install.meta == {"url": "https://docs.example.com/handbook/guide/install/", "language": "en"}
    assert install.annotations is not None and install.annotations.last_modified
    uris = {r.name: r.uri for r in listed}
    assert uris["notes/my page.md"] == "docs://docs.example.com/notes/my%20page.md"
    assert uris["notes/日本語.md"] == "docs://docs.example.com/notes/%E6%97%A5%E6%9C%AC%E8%AA%9E.md"


def test_reading_a_page_gives_the_markdown_read_gives(built: Site) -> None:
    with session_over(built.index_path) as mcp:
        for resource in every_resource(mcp):
            contents = read_text(mcp, resource.uri)
            assert contents.mime_type == "text/markdown"
            assert contents.uri == resource.uri
            read = mcp.ok("read", path=resource.name, max_chars=100_000)
            assert contents.text == read["markdown"] and contents.text
            assert contents.meta is not None and contents.meta["url"] == read["url"]
        section = read_text(mcp, "docs://docs.example.com/guide/install.md#upgrade")
        assert section.text == mcp.ok("read", path="guide/install.md", section="upgrade")["markdown"]
        assert section.meta is not None and section.meta["url"].endswith("/guide/install/#upgrade")


def test_a_uri_that_names_no_page_is_an_error_that_says_what_is_accepted(built: Site) -> None:
    with session_over(built.index_path) as mcp:
        for uri, expected in [
            ("docs://docs.example.com/guide/missing.md", "No document at path 'guide/missing.md'"),
            (
                "docs://other.example.com/index.md",
                "is not a page of this server; its pages are docs://docs.example.com/",
            ),
            ("https://docs.example.com/handbook/", "list them with resources/list"),
            ("docs://docs.example.com/guide/install.md#nowhere", "No section 'nowhere'"),
        ]:
            with pytest.raises(MCPError) as raised:
                mcp.portal.call(lambda uri=uri: mcp.client.read_resource(uri, cache_mode="bypass"))
            assert expected in raised.value.message, raised.value.message


def test_the_template_names_the_path_and_completion_offers_paths(built: Site) -> None:
    with session_over(built.index_path) as mcp:
        (template,) = mcp.portal.call(mcp.client.list_resource_templates).resource_templates
        assert template.uri_template == "docs://docs.example.com/{+path}"
        assert template.mime_type == "text/markdown"
        ref = ResourceTemplateReference(uri=template.uri_template)

        def complete(value: str, reference: Any = ref, argument: str = "path") -> Any:
            asked = {"name": argument, "value": value}
            return mcp.portal.call(lambda: mcp.client.complete(reference, asked)).completion

        assert complete("guide/").values == ["guide/install.md", "guide/usage.md"]
        assert complete("").values == sorted(PAGES) and complete("").total == len(PAGES)
        # Prefixes first, then paths that hold the text elsewhere, case aside.
        assert complete("US").values == ["guide/usage.md"]
        assert complete("notes/日").values == ["notes/日本語.md"]
        assert complete("nothing").values == [] and complete("nothing").total == 0
        assert complete("x", argument="other").values == []
        assert complete("g", ResourceTemplateReference(uri="docs://elsewhere/{+path}")).values == []


def test_listing_pages_with_a_cursor_it_did_not_give_is_an_error(built: Site) -> None:
    with session_over(built.index_path) as mcp, pytest.raises(MCPError) as raised:
        mcp.portal.call(lambda: mcp.client.list_resources(cursor="%%%not-base64"))
    assert "pass nextCursor as it came" in raised.value.message


def test_a_site_without_site_url_has_uris_without_a_host(tmp_path: Path) -> None:
    site = built_site(tmp_path, {"plugins": ["vault-mcp"]}, {"index.md": "# Home\n\nHi.\n"})
    with session_over(site.index_path) as mcp:
        (resource,) = every_resource(mcp)
        assert resource.uri == "docs:///index.md"
        assert read_text(mcp, "docs:///index.md").text.startswith("# Home")


def test_a_listener_learns_when_pages_come_or_go_and_when_its_page_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resources, "CHANGE_POLL_SECONDS", 0.05)
    site = built_site(
        tmp_path / "site", {"plugins": ["vault-mcp"]}, {"index.md": "# Home\n\nHi.\n", "a.md": "# A\n\nFirst.\n"}
    )
    served = tmp_path / "served.sqlite"
    shutil.copyfile(site.index_path, served)

    def publish() -> None:
        site.build()
        copy = tmp_path / "next.sqlite"
        shutil.copyfile(site.index_path, copy)
        copy.replace(served)  # as a deploy replaces the file: whole

    async def main() -> list[Any]:
        events: list[Any] = []
        server = create_server(IndexReader(served))
        async with (
            Client(server) as client,
            client.listen(resources_list_changed=True, resource_subscriptions=["docs:///a.md"]) as sub,
        ):

            async def collect(sub: Subscription) -> None:
                async for event in sub:
                    events.append(event)

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(collect, sub)
                await anyio.sleep(0.3)  # the watcher has seen the index as it is
                site.write("a.md", "# A\n\nSecond.\n")
                await anyio.to_thread.run_sync(publish)
                with anyio.fail_after(10):
                    while not events:
                        await anyio.sleep(0.05)
                site.write("b.md", "# B\n\nNew.\n")
                await anyio.to_thread.run_sync(publish)
                with anyio.fail_after(10):
                    while len(events) < 2:
                        await anyio.sleep(0.05)
                tasks.cancel_scope.cancel()
        return events

    events = anyio.run(main)
    assert isinstance(events[0], ResourceUpdated) and events[0].uri == "docs:///a.md"
    assert isinstance(events[1], ResourcesListChanged)


def test_a_session_of_an_earlier_protocol_that_subscribed_to_a_page_hears_when_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resources, "CHANGE_POLL_SECONDS", 0.05)
    site = built_site(tmp_path / "site", {"plugins": ["vault-mcp"]}, {"index.md": "# Home\n\nHi.\n"})
    served = tmp_path / "served.sqlite"
    shutil.copyfile(site.index_path, served)
    heard: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            heard.append(message.params.uri)

    async def main() -> None:
        server = create_server(IndexReader(served))
        async with Client(server, mode="legacy", message_handler=on_message) as client:
            assert client.server_capabilities.resources is not None
            assert client.server_capabilities.resources.subscribe is True
            with pytest.warns(MCPDeprecationWarning):
                await client.subscribe_resource("docs:///index.md")
            await anyio.sleep(0.3)
            site.write("index.md", "# Home\n\nChanged.\n")
            await anyio.to_thread.run_sync(site.build)
            copy = tmp_path / "next.sqlite"
            shutil.copyfile(site.index_path, copy)
            copy.replace(served)
            with anyio.fail_after(10):
                while not heard:
                    await anyio.sleep(0.05)

    anyio.run(main)
    assert heard == ["docs:///index.md"]


def test_beside_mkdocs_serve_a_listener_over_http_learns_that_a_saved_page_joined_the_site(tmp_path: Path) -> None:
    from helpers.live_serve import Serve

    port = free_port()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\nHi.\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text(f"site_name: Live resources\nplugins:\n  - vault-mcp:\n      mcp_port: {port}\n")
    serve = Serve(config, mcp_port=port)
    try:
        serve.wait_for(r"MCP server for AI agents")

        async def main() -> list[Any]:
            events: list[Any] = []
            async with Client(serve.url) as client, client.listen(resources_list_changed=True) as sub:
                listed = await client.list_resources(cache_mode="bypass")
                assert [r.name for r in listed.resources] == ["index.md"]

                async def collect() -> None:
                    async for event in sub:
                        events.append(event)

                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(collect)
                    await anyio.sleep(1.5)  # the watcher has seen the index as it is
                    (tmp_path / "docs" / "new.md").write_text("# New\n\nJust saved.\n")
                    with anyio.fail_after(30):
                        while not events:
                            await anyio.sleep(0.1)
                    tasks.cancel_scope.cancel()
                listed = await client.list_resources(cache_mode="bypass")
                assert [r.name for r in listed.resources] == ["index.md", "new.md"]
            return events

        events = anyio.run(main)
        assert isinstance(events[0], ResourcesListChanged), serve.log
    finally:
        serve.kill()


def test_a_session_subscribes_only_to_pages_at_most_subscriptions_of_them_and_drops_them_when_it_ends(
    built: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resources, "SUBSCRIPTIONS", 2)
    server = create_server(IndexReader(built.index_path))
    entry = server.get_request_handler("resources/subscribe")
    assert entry is not None
    pages: resources.Resources = entry.handler.__self__  # type: ignore[attr-defined]
    host = "docs://docs.example.com/"

    async def main() -> None:
        async with Client(server, mode="legacy") as client:
            with pytest.warns(MCPDeprecationWarning):
                for uri, expected in [
                    (f"{host}guide/missing.md", "names no page of this server"),
                    ("docs://elsewhere/index.md", "is not a page of this server"),
                    (host + "a" * 100_000, "names no page of this server"),
                ]:
                    with pytest.raises(MCPError) as refused:
                        await client.subscribe_resource(uri)
                    assert expected in refused.value.message and len(refused.value.message) < 1_000
                await client.subscribe_resource(f"{host}index.md")
                await client.subscribe_resource(f"{host}guide/install.md#upgrade")  # the page, whatever section
                await client.subscribe_resource(f"{host}index.md")  # again: no more room needed
                with pytest.raises(MCPError) as full:
                    await client.subscribe_resource(f"{host}guide/usage.md")
                assert "subscribed to 2 pages, the most it may be" in full.value.message
                await client.unsubscribe_resource(f"{host}index.md")
                await client.subscribe_resource(f"{host}guide/usage.md")
            (subscribed,) = pages.subscribed.values()
            assert subscribed == {f"{host}guide/install.md", f"{host}guide/usage.md"}

    anyio.run(main)
    assert not pages.subscribed, "the session ended and its subscriptions stayed"


def test_completion_folds_case_as_sqlite_does_ascii_letters_only(tmp_path: Path) -> None:
    """SQLite's lower() folds A-Z only: what was typed is folded the same way, so an accented capital finds itself."""
    site = built_site(tmp_path, {"plugins": ["vault-mcp"]}, {"index.md": "# Home\n", "notes/Ärger.md": "# Ärger\n"})
    with session_over(site.index_path) as mcp:
        (template,) = mcp.portal.call(mcp.client.list_resource_templates).resource_templates
        ref = ResourceTemplateReference(uri=template.uri_template)

        def complete(value: str) -> list[str]:
            return mcp.portal.call(lambda: mcp.client.complete(ref, {"name": "path", "value": value})).completion.values

        assert complete("ÄRGER") == ["notes/Ärger.md"]
        assert complete("NOTES/Ä") == ["notes/Ärger.md"]
        assert complete("ärger") == []  # not ASCII: SQLite keeps its case


@contextmanager
def http_server(index: Path, stateful: bool) -> Iterator[tuple[str, resources.Resources]]:
    """`serve --transport http`'s server in a thread of this process, so that its subscription table can be seen."""
    server = create_server(IndexReader(index))
    entry = server.get_request_handler("resources/subscribe")
    assert entry is not None
    sock = bind("127.0.0.1", 0)
    http = streamable_http.http_server(server, "127.0.0.1", "/mcp", [], stateful=stateful)
    thread = threading.Thread(target=lambda: asyncio.run(http.serve(sockets=[sock])), daemon=True)
    thread.start()
    while not http.started and thread.is_alive():
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", entry.handler.__self__  # type: ignore[attr-defined]
    finally:
        http.should_exit = True
        thread.join(timeout=10)


@pytest.mark.parametrize("stateful", [False, True])
def test_over_http_only_a_session_subscribes_and_its_subscriptions_end_with_it(built: Site, stateful: bool) -> None:
    host = "docs://docs.example.com/"

    async def subscribe(url: str) -> None:
        async with Client(url, mode="legacy") as client:
            with pytest.warns(MCPDeprecationWarning):
                if stateful:
                    await client.subscribe_resource(f"{host}index.md")
                    assert pages.subscribed, "a session's subscription was not kept"
                else:
                    with pytest.raises(MCPError, match="needs a session, and this server is stateless over HTTP"):
                        await client.subscribe_resource(f"{host}index.md")

    with http_server(built.index_path, stateful) as (url, pages):
        anyio.run(subscribe, url)
        deadline = time.monotonic() + 10
        while pages.subscribed and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not pages.subscribed, "the session ended and its subscriptions stayed"
