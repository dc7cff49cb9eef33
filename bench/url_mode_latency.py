"""Every tool and resource answer served from a deployed site's URL against the same site served from its folder.

A built site is put on a real HTTP server on loopback (the standard library's); two servers are spawned, each over
stdio through the SDK's client: `mkdocs-vault-mcp serve SITE_DIR` (the baseline) and `mkdocs-vault-mcp serve
http://127.0.0.1:PORT/` (URL mode: the index downloaded into a cache folder, refreshed in the background, and
described in every answer's `_meta`). Each round calls every case once in each session, alternating which goes
first, so drift hits both alike; the report gives each case's p50 in both modes, and the p50 of the paired
differences (each round's URL call less its folder call, which cancels what the machine's load does to a round):
the target is that difference within 1 ms.

    .venv/bin/python bench/url_mode_latency.py [--site SITE_DIR] [--calls 200] [--refresh SECONDS]

Without --site it builds the repository's example-site into bench/out/example-site.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from report import table, write_results  # bench/ is on sys.path when a script runs

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
SERVER_COMMAND = REPO / ".venv" / "bin" / "mkdocs-vault-mcp"
DEFAULT_SITE = BENCH / "out" / "example-site" / "site"
TARGET_MS = 1.0
CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("tool", "stats", {}),
    ("tool", "count_documents", {"folder": "guide"}),
    ("tool", "aggregate_documents", {"by": "folder"}),
    ("tool", "get_recent", {"limit": 10}),
    ("tool", "query_documents", {"sort": "modified", "limit": 50}),
    ("tool", "search", {"query": "sensor calibration"}),
    ("tool", "read", {"path": "index.md"}),
    ("tool", "links", {"show": "most_linked"}),
    ("resource", "resources/list", {}),
    ("resource", "resources/read", {"path": "index.md"}),
]


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def ensure_site(site: Path) -> None:
    if (site / "vault-mcp" / "index.sqlite").is_file():
        return
    if site != DEFAULT_SITE:
        sys.exit(f"url_mode_latency: no index at {site}/vault-mcp/index.sqlite; build the site with vault-mcp first.")
    source = DEFAULT_SITE.parent
    shutil.copytree(REPO / "example-site", source, dirs_exist_ok=True)
    subprocess.run([str(REPO / ".venv" / "bin" / "mkdocs"), "build", "-q"], cwd=source, check=True)


def caller(client: Client, kind: str, name: str, arguments: dict[str, Any]) -> Callable[[], Awaitable[Any]]:
    if kind == "tool":
        return lambda: client.call_tool(name, arguments)
    if name == "resources/list":
        return lambda: client.list_resources(cache_mode="bypass")

    async def read() -> Any:
        listed = await client.list_resources(cache_mode="bypass")
        uri = next(r.uri for r in listed.resources if r.name == arguments["path"])
        return lambda: client.read_resource(uri, cache_mode="bypass")

    return read


async def measure(site: Path, url: str, calls: int, refresh: float) -> dict[str, dict[str, list[float]]]:
    cache = Path(tempfile.mkdtemp(prefix="url-mode-cache-"))
    local = StdioServerParameters(command=str(SERVER_COMMAND), args=["serve", str(site)])
    remote = StdioServerParameters(
        command=str(SERVER_COMMAND), args=["serve", url, "--cache", str(cache), "--refresh", str(refresh)]
    )
    times: dict[str, dict[str, list[float]]] = {"folder": {}, "url": {}}
    try:
        async with Client(local) as folder_client, Client(remote) as url_client:
            clients = {"folder": folder_client, "url": url_client}
            calls_of: dict[str, dict[str, Callable[[], Awaitable[Any]]]] = {"folder": {}, "url": {}}
            for mode, client in clients.items():
                for kind, name, arguments in CASES:
                    call = caller(client, kind, name, arguments)
                    if name == "resources/read":
                        call = await call()  # the URI, found once
                    calls_of[mode][name] = call
                    times[mode][name] = []
                    for _ in range(5):  # warm: connections, caches, converted pages
                        await call()
            for round_number in range(calls):
                order = ("folder", "url") if round_number % 2 == 0 else ("url", "folder")
                for _, name, _ in CASES:
                    for mode in order:
                        started = time.perf_counter()
                        await calls_of[mode][name]()
                        times[mode][name].append(time.perf_counter() - started)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return times


def describe_microseconds(url: str) -> float:
    from mkdocs_vault_mcp.mcp.remote_index import RemoteIndex

    remote = RemoteIndex(url, Path(tempfile.mkdtemp(prefix="url-mode-describe-")), refresh_seconds=0)
    remote.state.downloaded_at = remote.state.confirmed_at = time.time()
    rounds = 20_000
    started = time.perf_counter()
    for _ in range(rounds):
        remote.describe()
    return (time.perf_counter() - started) / rounds * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", type=Path, default=DEFAULT_SITE)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--refresh", type=float, default=300.0, help="URL mode's --refresh (default: the default)")
    args = parser.parse_args()
    site = args.site.resolve()
    ensure_site(site)
    http = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=http.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{http.server_address[1]}/"
    try:
        times = asyncio.run(measure(site, url, args.calls, args.refresh))
    finally:
        http.shutdown()
    shown = site.relative_to(REPO) if site.is_relative_to(REPO) else site
    rows = [["case", "folder p50 ms", "URL p50 ms", "paired difference p50 ms", f"within {TARGET_MS:g} ms"]]
    worst = 0.0
    for _, name, _ in CASES:
        folder = statistics.median(times["folder"][name]) * 1000
        remote = statistics.median(times["url"][name]) * 1000
        paired = statistics.median(u - f for u, f in zip(times["url"][name], times["folder"][name], strict=True)) * 1000
        worst = max(worst, paired)
        rows.append([name, f"{folder:.3f}", f"{remote:.3f}", f"{paired:+.3f}", "yes" if paired <= TARGET_MS else "NO"])
    describe = describe_microseconds(url)
    report = (
        f"URL mode against folder mode, {args.calls} rounds, stdio, each case alternately first; site {shown} "
        f"served from http://127.0.0.1 (--refresh {args.refresh:g}).\n\n{table(rows)}\n\n"
        f"Largest difference at p50: {worst:+.3f} ms (target: within {TARGET_MS:g} ms).\n"
        f"What URL mode adds to each answer, in-process: its _meta (RemoteIndex.describe), {describe:.2f} us.\n"
    )
    print(report)
    if args.site == DEFAULT_SITE:
        write_results("url_mode_latency", report)


if __name__ == "__main__":
    main()
