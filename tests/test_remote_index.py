"""`mkdocs-vault-mcp serve URL`: a built site served by a real HTTP server on loopback, its index downloaded into a
cache folder, answered from as from the site folder, refreshed, served from the cache when the site is down, and
every unusable download refused while the cached index keeps answering."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from mcp import StdioServerParameters

from helpers.mcp_session import Session, session_with
from helpers.ports import free_port
from helpers.site import Site, built_example_site
from helpers.web_server import QuietHandler, WebServer
from mkdocs_vault_mcp.mcp.remote_index import DownloadRefused, RemoteIndex, index_url, site_folder
from mkdocs_vault_mcp.mcp.server import IndexReader, create_server

SCRIPT = Path(sys.executable).parent / "mkdocs-vault-mcp"
# One call of every tool, as an agent makes them.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("stats", {}),
    ("count_documents", {"folder": "guide"}),
    ("aggregate_documents", {"by": "folder"}),
    ("get_recent", {"limit": 5}),
    ("query_documents", {"sort": "title", "limit": 20}),
    ("search", {"query": "temperature sensor"}),
    ("read", {"path": "index.md"}),
    ("links", {"show": "most_linked"}),
]


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return built_example_site(tmp_path_factory.mktemp("example"))


@pytest.fixture
def web(example: Site, tmp_path: Path) -> Iterator[tuple[WebServer, Path]]:
    """The built site, copied into a folder of its own (what is deployed), on a web server."""
    deployed = tmp_path / "deployed"
    shutil.copytree(example.site_dir, deployed)
    server = WebServer(deployed)
    yield server, deployed
    server.stop()


def answers(mcp: Session) -> list[Any]:
    return [mcp.ok(tool, **arguments) for tool, arguments in CALLS]


def deploy(deployed: Path, data: bytes, later: float) -> None:
    """Put `data` where the site publishes its index, as a deploy does, dated `later` seconds from now (a web
    server's Last-Modified counts whole seconds)."""
    target = deployed / "vault-mcp" / "index.sqlite"
    target.write_bytes(data)
    moment = time.time() + later
    os.utime(target, (moment, moment))


def test_the_index_url_of_a_site_and_of_an_index() -> None:
    assert index_url("https://docs.example.com") == "https://docs.example.com/vault-mcp/index.sqlite"
    assert index_url("https://docs.example.com/en/") == "https://docs.example.com/en/vault-mcp/index.sqlite"
    assert index_url("https://x.example/a/index.sqlite") == "https://x.example/a/index.sqlite"


def test_serving_a_sites_url_answers_as_serving_its_folder_refreshes_and_falls_back_to_the_cache(
    example: Site, web: tuple[WebServer, Path], tmp_path: Path
) -> None:
    server, deployed = web
    cache = tmp_path / "cache"
    local = StdioServerParameters(command=str(SCRIPT), args=["serve", str(example.site_dir)])
    remote = StdioServerParameters(
        command=str(SCRIPT), args=["serve", server.url, "--cache", str(cache), "--refresh", "5"]
    )
    with session_with(local) as mcp:
        expected = answers(mcp)
    with session_with(remote) as mcp:
        assert answers(mcp) == expected
        first = mcp.call("stats")
        assert first.meta is not None
        assert first.meta["index_url"] == server.url + "vault-mcp/index.sqlite"
        assert first.meta["index_offline"] is False and first.meta["index_age_seconds"] < 60
        # Everything it wrote is in the cache folder.
        folder = site_folder(cache, server.url + "vault-mcp/index.sqlite")
        assert {p.name for p in folder.iterdir()} == {"index.sqlite", "state.json"}

        # The site is rebuilt with a changed page and deployed: the next refresh serves it.
        page = example.docs / "index.md"
        original = page.read_text(encoding="utf-8")
        try:
            page.write_text(original + "\n## Anemometer calibration\n\nZephyrwhistle calibration steps.\n", "utf-8")
            example.build_in_root()
            deploy(deployed, example.index_path.read_bytes(), later=5)
        finally:
            page.write_text(original, encoding="utf-8")
        deadline = time.monotonic() + 40
        while not mcp.ok("search", query="Zephyrwhistle")["result"]:
            assert time.monotonic() < deadline, "the rebuilt site's index was never served"
            time.sleep(0.1)
        assert mcp.ok("search", query="Zephyrwhistle")["result"][0]["path"] == "index.md"

        # The site goes down: the cached index answers, and says it could not be checked.
        server.stop()
        deadline = time.monotonic() + 40
        while not (mcp.call("stats").meta or {}).get("index_offline"):
            assert time.monotonic() < deadline, "no answer said the site is unreachable"
            time.sleep(0.1)
        offline = mcp.call("count_documents")
        assert offline.meta is not None and "cannot reach" in offline.meta["index_problem"]
        assert isinstance(offline.meta["index_age_seconds"], int)
        assert mcp.ok("search", query="Zephyrwhistle")["result"][0]["path"] == "index.md"

    # Started again with the site down: the cached index is served.
    with session_with(remote) as mcp:
        stats = mcp.call("stats")
        assert stats.meta is not None and stats.meta["index_offline"] is True
        assert mcp.ok("search", query="Zephyrwhistle")["result"]


def test_every_unusable_download_is_refused_with_a_message_and_the_cached_index_keeps_answering(
    web: tuple[WebServer, Path], tmp_path: Path
) -> None:
    server, deployed = web
    good = (deployed / "vault-mcp" / "index.sqlite").read_bytes()
    remote = RemoteIndex(server.url, tmp_path / "cache", max_bytes=len(good) * 2, refresh_seconds=0)
    remote.start()
    reader = IndexReader(remote.path, describe=remote.describe)
    not_sqlite = b"<!doctype html><html><body>Page not found</body></html>\n" * 50
    newer_format = of_format(good, "99", tmp_path / "newer.sqlite")
    older_format = of_format(good, "8", tmp_path / "older.sqlite")
    with session_with(create_server(reader)) as mcp:
        expected = answers(mcp)
        cases = [
            (good[: len(good) // 2], "it is cut short"),
            (not_sqlite, "it is not an SQLite database (it begins '<!doctype html>"),
            (good + bytes(len(good) * 2), "above the limit of"),
            (newer_format, "it is of index format 99, newer than"),
            (older_format, "it is of index format 8, older than"),
            (None, "answered HTTP 404 File not found (is the site built with the vault-mcp plugin"),
        ]
        for later, (data, message) in enumerate(cases, start=2):
            if data is None:
                (deployed / "vault-mcp" / "index.sqlite").unlink()
            else:
                deploy(deployed, data, later=later * 10)
            with pytest.raises(DownloadRefused) as refused:
                remote.refresh()
            assert message in str(refused.value), str(refused.value)
            assert answers(mcp) == expected
            meta = mcp.call("stats").meta
            assert meta is not None and meta["index_offline"] is True and message in meta["index_problem"]
            assert sorted(p.name for p in remote.folder.iterdir()) == ["index.sqlite", "state.json"]
        # The site publishes a good index again: it is taken, and answers say so.
        deploy(deployed, good, later=100)
        assert remote.refresh() is True
        assert mcp.call("stats").meta["index_offline"] is False  # type: ignore[index]
        assert answers(mcp) == expected


def of_format(index: bytes, version: str, path: Path) -> bytes:
    """A copy of `index` as a package of another index format writes it: both rows that say the format."""
    path.write_bytes(index)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE info SET value = ? || substr(value, instr(value, ':')) WHERE key = 'options'", [version])
        conn.execute("UPDATE info SET value = ? WHERE key = 'schema_version'", [version])
    conn.close()
    return path.read_bytes()


def test_too_many_redirects_and_an_unreachable_site_without_a_cache_are_errors_that_say_so(tmp_path: Path) -> None:
    class Loop(QuietHandler):
        def do_GET(self) -> None:
            self.send_response(302)
            self.send_header("Location", "/again" + self.path)
            self.end_headers()

    port = free_port()
    http = ThreadingHTTPServer(("127.0.0.1", port), Loop)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    try:
        with pytest.raises(DownloadRefused, match="redirected more than 5 times"):
            RemoteIndex(f"http://127.0.0.1:{port}/", tmp_path / "cache", refresh_seconds=0).start()
    finally:
        http.shutdown()
        http.server_close()

    done = subprocess.run(
        [str(SCRIPT), "serve", f"http://127.0.0.1:{free_port()}/", "--cache", str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "cannot reach http://127.0.0.1:" in done.stderr and "No cached copy to serve instead" in done.stderr
    assert "Traceback" not in done.stderr


def test_every_worker_process_says_the_same_of_the_index_whichever_refreshed_it(
    web: tuple[WebServer, Path], tmp_path: Path
) -> None:
    server, _ = web
    port = free_port()
    process = subprocess.Popen(
        [
            str(SCRIPT),
            "serve",
            server.url,
            "--cache",
            str(tmp_path / "cache"),
            "--refresh",
            "5",
            "--transport",
            "http",
            "--port",
            str(port),
            "--workers",
            "2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert "worker processes" in process.stdout.readline()
        with session_with(f"http://127.0.0.1:{port}/mcp") as mcp:
            assert all((mcp.call("stats").meta or {})["index_offline"] is False for _ in range(6))
            server.stop()
            deadline = time.monotonic() + 40
            while not all((mcp.call("stats").meta or {})["index_offline"] for _ in range(10)):
                assert time.monotonic() < deadline, "some worker never said the site is unreachable"
                time.sleep(0.2)
    finally:
        process.terminate()
        process.wait(10)


def test_the_hosted_app_serves_a_sites_url_from_a_cache_folder(web: tuple[WebServer, Path], tmp_path: Path) -> None:
    import json
    import urllib.request

    from helpers.hosted import start_app, stop

    server, _ = web
    port = free_port()
    process = start_app(server.url, port, VAULT_MCP_CACHE=str(tmp_path / "cache"))
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as answer:
            health = json.loads(answer.read())
        assert health["status"] == "ok" and health["index_url"] == server.url + "vault-mcp/index.sqlite"
        with session_with(f"http://127.0.0.1:{port}/mcp") as mcp:
            assert mcp.ok("stats")["site_name"] == "Breeze"
        assert (site_folder(tmp_path / "cache", health["index_url"]) / "index.sqlite").is_file()
    finally:
        stop(process)
