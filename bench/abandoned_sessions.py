"""Memory of the HTTP server after 10,000 abandoned clients (memory flat, new clients still served).

Starts `mkdocs-vault-mcp serve SITE_DIR --transport http` on a free loopback port, sends 200 `initialize`
requests (warm-up), reads the server's resident memory, sends --clients more, each abandoned (never a DELETE),
reads it again, then checks that a new client is served.

    .venv/bin/python bench/abandoned_sessions.py [--site SITE_DIR] [--clients 10000]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from load import HEADERS, INITIALIZE, Connection, rss_bytes, start_server
from report import results_from_output
from tool_latency import DEFAULT_SITE, SERVER_COMMAND, ensure_site


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=DEFAULT_SITE)
    parser.add_argument("--clients", type=int, default=10_000)
    args = parser.parse_args()
    ensure_site(args.site)
    server, port = start_server(SERVER_COMMAND, args.site, 1)
    try:
        connection = Connection(port)

        def initialize() -> None:
            connection.http.request("POST", "/mcp", json.dumps(INITIALIZE), HEADERS)
            response = connection.http.getresponse()
            response.read()
            assert response.status == 200, response.status

        for _ in range(200):
            initialize()
        before = rss_bytes(server.pid)
        start = time.perf_counter()
        for _ in range(args.clients):
            initialize()
        seconds = time.perf_counter() - start
        after = rss_bytes(server.pid)
        served = Connection(port).call("count_documents", {}) is None
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(
        f"{args.clients:,} abandoned initialize calls in {seconds:.0f} s: server RSS {before / 2**20:.1f} MB -> "
        f"{after / 2**20:.1f} MB; a new client served afterwards: {served}"
    )


if __name__ == "__main__":
    with results_from_output("abandoned_sessions"):
        main()
