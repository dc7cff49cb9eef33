"""`serve URL` finds the index through the site's discovery file (`.well-known/ai-catalog.json`, as the build writes
it): a built site on a real HTTP server on loopback with its index moved, answered through the SDK client; and a
hostile or broken catalog (huge, not JSON, naming another origin, trickling) falls back to the index's usual place
or is refused in one line, nothing connecting to another origin."""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import StdioServerParameters

from helpers.hostile_site import (
    SCRIPT,
    HostileSite,
    Listener,
    endless_body,
    one_line_error,
    serve,
    serve_bytes,
    trickle_body,
)
from helpers.mcp_session import session_with
from helpers.site import Site, built_example_site
from helpers.web_server import WebServer
from mkdocs_vault_mcp.build_steps import server_card
from mkdocs_vault_mcp.index.schema import FORMAT_VERSION
from mkdocs_vault_mcp.mcp import discovery
from mkdocs_vault_mcp.mcp.remote_index import RemoteIndex, site_folder

CATALOG = "/.well-known/ai-catalog.json"
USUAL = "/vault-mcp/index.sqlite"
MOVED = "/files/moved-index.sqlite"


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return built_example_site(tmp_path_factory.mktemp("example"))


@pytest.fixture(scope="module")
def good(example: Site) -> bytes:
    return example.index_path.read_bytes()


@pytest.fixture
def hostile() -> Iterator[HostileSite]:
    site = HostileSite()
    yield site
    site.stop()


def catalog_of(site_url: str, index: str | None = MOVED, hosted: str | None = None, schema: str = "") -> bytes:
    """The discovery file the build writes for a site at `site_url` whose index is at `index`."""
    card = server_card.server_card(
        site_url, "Breeze", "", hosted, index.lstrip("/") if index else None, schema or FORMAT_VERSION, []
    )
    return json.dumps(server_card.ai_catalog(site_url, card)).encode()


def test_the_names_read_are_those_the_build_writes() -> None:
    assert discovery.CATALOG_URI == server_card.CATALOG_URI
    assert discovery.CARD_TYPE == server_card.CARD_TYPE
    assert discovery.META_INDEX == server_card.META_INDEX
    assert discovery.catalog_url("https://x.example/en") == "https://x.example/en/.well-known/ai-catalog.json"
    assert discovery.catalog_url("https://x.example/a/index.sqlite") is None


def test_serve_url_finds_an_index_moved_elsewhere_through_the_discovery_file(example: Site, tmp_path: Path) -> None:
    deployed = tmp_path / "deployed"
    shutil.copytree(example.site_dir, deployed)
    web = WebServer(deployed)
    try:
        # The built catalog names the index at its usual place on site_url's host: deployed here, it is moved.
        built = json.loads((deployed / CATALOG.lstrip("/")).read_text(encoding="utf-8"))
        meta = built["entries"][0]["data"]["_meta"][server_card.META_INDEX]
        assert meta == {"url": "https://breeze.example.org/vault-mcp/index.sqlite", "schemaVersion": FORMAT_VERSION}
        meta["url"] = web.url.rstrip("/") + MOVED
        (deployed / CATALOG.lstrip("/")).write_text(json.dumps(built), encoding="utf-8")
        (deployed / MOVED.lstrip("/")).parent.mkdir()
        (deployed / USUAL.lstrip("/")).rename(deployed / MOVED.lstrip("/"))

        cache = tmp_path / "cache"
        # The whole environment: the SDK passes a few variables only, and the server must run the code under test.
        remote = StdioServerParameters(
            command=str(SCRIPT), args=["serve", web.url, "--cache", str(cache)], env=dict(os.environ)
        )
        with session_with(remote) as mcp:
            assert mcp.ok("stats")["site_name"] == "Breeze"
            assert mcp.ok("search", query="temperature sensor")["result"]
            answer = mcp.call("read", path="index.md")
            assert answer.meta is not None and answer.meta["index_url"] == web.url.rstrip("/") + MOVED
        assert web.paths()[:2] == [CATALOG, MOVED]
        assert web.requests[0][1]["Accept"] == "application/ai-catalog+json, application/json"
        state = json.loads((site_folder(cache, web.url + USUAL[1:]) / "state.json").read_text(encoding="utf-8"))
        assert state["index_url"] == web.url.rstrip("/") + MOVED
    finally:
        web.stop()
    # Started again with the site down: the index found through the catalog is served, and named.
    with session_with(remote) as mcp:
        stats = mcp.call("stats")
        assert stats.meta is not None and stats.meta["index_offline"] is True
        assert stats.meta["index_url"] == web.url.rstrip("/") + MOVED


def test_the_catalog_is_asked_again_with_its_etag_and_a_304_keeps_the_index_it_named(
    good: bytes, hostile: HostileSite, tmp_path: Path
) -> None:
    hostile.routes[CATALOG] = serve_bytes(catalog_of(hostile.url("/")), etag='"c1"')
    hostile.routes[MOVED] = serve_bytes(good, etag='"i1"')
    remote = RemoteIndex(hostile.url("/"), tmp_path / "cache", refresh_seconds=0)
    remote.start()
    assert remote.url == hostile.url(MOVED)
    assert remote.refresh() is False
    (catalog_path, catalog_headers), (index_path, index_headers) = hostile.requests[-2:]
    assert (catalog_path, catalog_headers["If-None-Match"]) == (CATALOG, '"c1"')
    assert (index_path, index_headers["If-None-Match"]) == (MOVED, '"i1"')
    # The site moves its index back to the usual place and drops the catalog: it is found there.
    hostile.routes = {USUAL: serve_bytes(good + bytes(4096), etag='"i2"')}
    assert remote.refresh() is True
    assert remote.url == hostile.url(USUAL) and remote.path.read_bytes() == good + bytes(4096)


BROKEN_CATALOGS = {
    "huge": lambda site: serve_bytes(b'{"entries": [' + b" " * (1 << 20) + b"]}"),
    "endless": endless_body,
    "not JSON": lambda site: serve_bytes(b"<!doctype html><title>Not here</title>"),
    "deeply nested": lambda site: serve_bytes(b"[" * 60_000),
    "no entries": lambda site: serve_bytes(b'{"entries": {"a": 1}}'),
    "no card": lambda site: serve_bytes(b'{"entries": [{"type": "application/a2a-agent-card+json", "data": {}}]}'),
    "no index key": lambda site: serve_bytes(catalog_of(site.url("/"), index=None).replace(b"remotes", b"x")),
    "an index url that is no URL": lambda site: serve_bytes(catalog_of(site.url("/")).replace(b"http://", b"ftp://")),
}


@pytest.mark.parametrize("route", BROKEN_CATALOGS.values(), ids=BROKEN_CATALOGS.keys())
def test_a_broken_catalog_falls_back_to_the_usual_place(
    good: bytes, hostile: HostileSite, tmp_path: Path, route: Any, caplog: pytest.LogCaptureFixture
) -> None:
    hostile.routes[CATALOG] = route(hostile)
    hostile.routes[USUAL] = serve_bytes(good)
    remote = RemoteIndex(hostile.url("/"), tmp_path / "cache", refresh_seconds=0)
    with caplog.at_level(logging.DEBUG, logger="mkdocs_vault_mcp"):
        assert remote.start() == remote.path
    assert remote.url == hostile.url(USUAL) and remote.path.read_bytes() == good
    assert any("discovery file" in r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG)
    assert [path for path, _ in hostile.requests] == [CATALOG, USUAL]
    assert sorted(p.name for p in remote.folder.iterdir()) == ["index.sqlite", "state.json"]


def test_a_trickling_catalog_is_given_up_on_within_the_deadline_and_the_index_still_served(
    good: bytes, hostile: HostileSite, tmp_path: Path
) -> None:
    hostile.routes[CATALOG] = trickle_body(hostile, every=0.5)
    hostile.routes[USUAL] = serve_bytes(good)
    remote = RemoteIndex(hostile.url("/"), tmp_path / "cache", refresh_seconds=0, download_seconds=2)
    remote.start()
    assert remote.path.read_bytes() == good and remote.describe()["index_offline"] is False


@pytest.mark.parametrize("where", ["index", "card"])
def test_nothing_is_fetched_from_another_origin_the_catalog_names(
    good: bytes, hostile: HostileSite, tmp_path: Path, where: str
) -> None:
    listener = Listener()
    elsewhere = f"http://127.0.0.1:{listener.port}/"
    try:
        if where == "index":
            hostile.routes[CATALOG] = serve_bytes(catalog_of(elsewhere))
        else:
            entry = {"identifier": "x", "type": discovery.CARD_TYPE, "url": elsewhere + "card.json"}
            hostile.routes[CATALOG] = serve_bytes(json.dumps({"specVersion": "1.0", "entries": [entry]}).encode())
        # Without an index at the usual place: refused in one line, which names the index the catalog named.
        message = one_line_error(serve(hostile.url("/"), tmp_path / "cache"))
        assert f"{hostile.url(USUAL)} answered HTTP 404" in message
        if where == "index":
            assert f"names its index at {elsewhere}{MOVED[1:]}, on another origin" in message
        # With one there: it is served.
        hostile.routes[USUAL] = serve_bytes(good)
        remote = RemoteIndex(hostile.url("/"), tmp_path / "cache", refresh_seconds=0)
        remote.start()
        assert remote.url == hostile.url(USUAL) and remote.path.read_bytes() == good
    finally:
        listener.stop()
    assert listener.connections == 0


def test_a_card_at_a_url_of_the_same_origin_is_fetched(good: bytes, hostile: HostileSite, tmp_path: Path) -> None:
    card = json.loads(catalog_of(hostile.url("/")))["entries"][0]["data"]
    entry = {"identifier": "x", "type": discovery.CARD_TYPE, "url": "/mcp/server-card"}
    hostile.routes[CATALOG] = serve_bytes(json.dumps({"specVersion": "1.0", "entries": [entry]}).encode())
    hostile.routes["/mcp/server-card"] = serve_bytes(json.dumps(card).encode())
    hostile.routes[MOVED] = serve_bytes(good)
    remote = RemoteIndex(hostile.url("/"), tmp_path / "cache", refresh_seconds=0)
    remote.start()
    assert remote.url == hostile.url(MOVED)
    assert hostile.requests[1][1]["Accept"] == "application/mcp-server-card+json, application/json"


def test_an_index_of_another_format_is_refused_in_one_line_without_downloading_it(
    good: bytes, hostile: HostileSite, tmp_path: Path
) -> None:
    hostile.routes[CATALOG] = serve_bytes(catalog_of(hostile.url("/"), schema="99"))
    hostile.routes[MOVED] = serve_bytes(good)
    message = one_line_error(serve(hostile.url("/"), tmp_path / "cache"))
    assert f"The index at {hostile.url(MOVED)} is of index format 99, newer than this mkdocs-vault-mcp" in message
    assert "uvx mkdocs-vault-mcp@latest" in message
    assert MOVED not in [path for path, _ in hostile.requests]


def test_a_site_that_publishes_no_index_but_hosts_mcp_says_where_to_connect(
    good: bytes, hostile: HostileSite, tmp_path: Path
) -> None:
    hostile.routes[CATALOG] = serve_bytes(catalog_of(hostile.url("/"), index=None, hosted="/mcp"))
    hostile.routes[USUAL] = serve_bytes(good)  # a leftover of an earlier build: not taken
    message = one_line_error(serve(hostile.url("/"), tmp_path / "cache"))
    assert message == (
        f"mkdocs-vault-mcp: error: this site publishes no index; connect your MCP client to {hostile.url('/mcp')}"
    )
    assert [path for path, _ in hostile.requests] == [CATALOG]


def test_a_site_down_keeps_the_index_where_the_catalog_last_named_it(
    good: bytes, hostile: HostileSite, tmp_path: Path
) -> None:
    hostile.routes[CATALOG] = serve_bytes(catalog_of(hostile.url("/")), etag='"c1"')
    hostile.routes[MOVED] = serve_bytes(good, etag='"i1"')
    RemoteIndex(hostile.url("/"), tmp_path / "cache", refresh_seconds=0).start()

    def failing(handler: Any) -> None:
        handler.send_error(503, "Busy")

    # The catalog failing (not missing): the index is asked for where it was found, and is current.
    hostile.routes[CATALOG] = failing
    remote = RemoteIndex(hostile.url("/"), tmp_path / "cache", refresh_seconds=0)
    remote.start()
    assert hostile.requests[-1][0] == MOVED and remote.describe()["index_offline"] is False
