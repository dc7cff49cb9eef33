"""HTTP load on the FastAPI index: many clients at once, each on its own kept-alive connection.

`mkdocs-vault-mcp serve SITE_DIR --transport http --workers N` on a free loopback port, for each N of
--workers. First the baseline: one client alone, --single calls per case, round robin (its p50 is what a call
costs with nobody else around). Then --clients clients for --duration seconds, each looping over the cases
(search, count_documents, aggregate_documents, get_recent) in its own shuffled order, one call at a time, on its
own HTTP/1.1 connection, with raw JSON-RPC (each connection initializes first, and sends the session id back when
the server gives one: a stateless server gives none). The clients run in
--client-processes processes of threads, so the client side is not one GIL; they share the machine's CPUs with
the server, as they would on one host.

Reported per N: calls, errors (an HTTP status other than 200, a JSON-RPC error, a tool error, a timeout), calls
per second, p50 / p99 latency under load beside the single client's p50, and the server's resident memory (all
its processes) before and after the load.

    .venv/bin/python bench/load.py [--site SITE_DIR] [--clients 50] [--duration 60] [--workers 1,2] [--against DIR]
        [--against-site SITE_DIR]

--against DIR: the same load, right after this checkout's one-worker run, on the server of another checkout of
the project (DIR/.venv/bin/mkdocs-vault-mcp, one worker, the same index), so that the two are measured in the
same run on the same machine. Each server imports its own checkout's package (its root first on PYTHONPATH).
--against-site: that checkout's own build of the same site, for a checkout that cannot read this one's index
schema (the single client's in-process baseline always reads --site).

Without --site it uses (and if needed builds) the site of bench/tool_latency.py. Loopback only; every loop is
bounded by --duration.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from report import checkout_env, command_line, table, write_results  # bench/ is on sys.path when a script runs
from tool_latency import DEFAULT_SITE, REPO, SERVER_COMMAND, ensure_site, percentile

CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("search keywords", "search", {"query": "dependencies yield"}),
    ("search question", "search", {"query": "how do I upload a file?", "limit": 5}),
    ("count_documents folder", "count_documents", {"folder": "en/tutorial"}),
    ("count_documents query", "count_documents", {"query": "security"}),
    ("aggregate_documents by=folder", "aggregate_documents", {"by": "folder"}),
    ("aggregate_documents by=month", "aggregate_documents", {"by": "month"}),
    ("get_recent", "get_recent", {}),
]
BLOCK = 50
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "Mcp-Protocol-Version": "2025-06-18",
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": HEADERS["Mcp-Protocol-Version"],
        "capabilities": {},
        "clientInfo": {"name": "load", "version": "1"},
    },
}


class Connection:
    def __init__(self, port: int) -> None:
        self.http = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.headers = self._initialize()

    def _initialize(self) -> dict[str, str]:
        """The headers of every call: the session id, when the server keeps sessions."""
        self.http.request("POST", "/mcp", json.dumps(INITIALIZE), HEADERS)
        response = self.http.getresponse()
        response.read()
        session = response.getheader("mcp-session-id")
        if session is None:
            return HEADERS
        headers = {**HEADERS, "Mcp-Session-Id": session}
        self.http.request(
            "POST", "/mcp", json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), headers
        )
        self.http.getresponse().read()
        return headers

    def call(self, tool: str, arguments: dict[str, Any]) -> str | None:
        """None when the call succeeded, else what went wrong."""
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
        )
        try:
            self.http.request("POST", "/mcp", body, self.headers)
            response = self.http.getresponse()
            text = response.read().decode()
        except (OSError, http.client.HTTPException) as error:
            self.http.close()  # reconnects on the next call
            return f"{type(error).__name__}: {error}"
        if response.status != 200:
            return f"HTTP {response.status}: {text[:200]}"
        data = [line[5:] for line in text.splitlines() if line.startswith("data:")]
        message = json.loads(data[-1]) if data else json.loads(text)
        if "error" in message:
            return f"JSON-RPC error {message['error']}"
        if message["result"].get("isError"):
            return f"tool error {message['result']['content'][0]['text'][:200]}"
        return None


def client_process(port: int, threads: int, seconds: float, seed: int, results: Any) -> None:
    """`threads` clients until the deadline; puts (latencies by case, errors, calls) on `results`."""
    deadline = time.monotonic() + seconds
    lock = threading.Lock()
    latencies: dict[str, list[float]] = {label: [] for label, _, _ in CASES}
    errors: list[str] = []

    def client(number: int) -> None:
        rng = random.Random(seed * 1000 + number)
        connection = Connection(port)
        mine: dict[str, list[float]] = {label: [] for label, _, _ in CASES}
        failed: list[str] = []
        order = list(CASES)
        while time.monotonic() < deadline:
            rng.shuffle(order)
            for label, tool, arguments in order:
                start = time.perf_counter()
                problem = connection.call(tool, arguments)
                mine[label].append(time.perf_counter() - start)
                if problem is not None:
                    failed.append(problem)
                if time.monotonic() >= deadline:
                    break
        with lock:
            for label, values in mine.items():
                latencies[label] += values
            errors.extend(failed)

    workers = [threading.Thread(target=client, args=[n]) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    results.put((latencies, errors))


def rss_bytes(pid: int) -> int:
    """Resident memory of a process and its children (the worker processes)."""
    total = 0
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(child) for child in children.read_text().split()]
    for one in pids:
        for line in Path(f"/proc/{one}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) * 1024
    return total


def start_server(command: Path, site: Path, workers: int) -> tuple[subprocess.Popen, int]:
    port = free_port()
    server = subprocess.Popen(
        [
            str(command),
            "serve",
            str(site),
            "--transport",
            "http",
            "--port",
            str(port),
            # Asked for only when more than one, so that a checkout from before the option is served too.
            *(["--workers", str(workers)] if workers > 1 else []),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=checkout_env(command.parents[2]),  # the checkout whose .venv/bin/ holds the command imports its package
    )
    assert server.stdout is not None and server.stderr is not None
    line = server.stdout.readline()
    if not line.startswith("MCP server at"):
        server.kill()
        sys.exit(f"load: the server did not start: {line}{server.stderr.read()}")
    return server, port


def run(
    command: Path, site: Path, workers: int, clients: int, seconds: float, processes: int, single: int, served: Path
) -> dict[str, Any]:
    """The load on `command`'s server of `served`; the in-process baseline reads `site`, this checkout's index."""
    server, port = start_server(command, served, workers)
    try:
        single_latencies, in_process = single_client(site, port, single)
        rss_before = rss_bytes(server.pid)
        results: Any = multiprocessing.Queue()
        shares = [clients // processes + (1 if n < clients % processes else 0) for n in range(processes)]
        started = time.perf_counter()
        children = [
            multiprocessing.Process(target=client_process, args=(port, share, seconds, n, results))
            for n, share in enumerate(shares)
            if share
        ]
        for child in children:
            child.start()
        gathered = [results.get(timeout=seconds + 120) for _ in children]
        for child in children:
            child.join()
        elapsed = time.perf_counter() - started
        rss_after = rss_bytes(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)
    latencies: dict[str, list[float]] = {label: [] for label, _, _ in CASES}
    errors: list[str] = []
    for by_case, failed in gathered:
        for label, values in by_case.items():
            latencies[label] += values
        errors += failed
    return {
        "workers": workers,
        "elapsed": elapsed,
        "latencies": latencies,
        "errors": errors,
        "single": single_latencies,
        "in_process": in_process,
        "rss_before": rss_before,
        "rss_after": rss_after,
    }


def single_client(site: Path, port: int, rounds: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """One client alone: each case over kept-alive HTTP, then through the SDK's client connected in-process
    (same index, same server code, no transport), in blocks of BLOCK calls, block after block, so both see the
    same machine over time while each stays warm within its block (on a busy machine, waking an idle process
    for every call costs more than the call). Returns (HTTP durations, in-process durations) by case."""
    import asyncio

    from mcp import Client

    from mkdocs_vault_mcp.mcp.server import IndexReader, create_server

    async def measure() -> tuple[dict[str, list[float]], dict[str, list[float]]]:
        over_http: dict[str, list[float]] = {label: [] for label, _, _ in CASES}
        in_process: dict[str, list[float]] = {label: [] for label, _, _ in CASES}
        alone = Connection(port)
        server = create_server(IndexReader(site / "vault-mcp" / "index.sqlite"))
        async with Client(server) as client:
            for round_number in range(rounds // BLOCK + 1):
                for label, tool, arguments in CASES:
                    for _ in range(BLOCK):
                        start = time.perf_counter()
                        problem = alone.call(tool, arguments)
                        if round_number:  # the first round warms up
                            over_http[label].append(time.perf_counter() - start)
                        assert problem is None, problem
                    for _ in range(BLOCK):
                        start = time.perf_counter()
                        result = await client.call_tool(tool, arguments)
                        if round_number:
                            in_process[label].append(time.perf_counter() - start)
                        assert not result.is_error, result
        alone.http.close()
        return over_http, in_process

    return asyncio.run(measure())


def commit_of(checkout: Path) -> str:
    """A checkout named by its commit, as the results name this one's."""
    head = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return f"commit {head.stdout.strip()}" if head.returncode == 0 else str(checkout)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=DEFAULT_SITE)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts to compare")
    parser.add_argument("--client-processes", type=int, default=5)
    parser.add_argument("--single", type=int, default=100, help="calls per case of the single-client baseline")
    parser.add_argument("--against", type=Path, help="another checkout of the project, with its own .venv")
    parser.add_argument("--name", default="load", help="the results file's name")
    parser.add_argument(
        "--against-site",
        type=Path,
        help="the --against checkout's own build of the same site, for an older index schema",
    )
    args = parser.parse_args()
    ensure_site(args.site)
    servers = [("this checkout", SERVER_COMMAND, int(n), args.site) for n in args.workers.split(",")]
    if args.against is not None:
        against = args.against.resolve() / ".venv" / "bin" / "mkdocs-vault-mcp"
        servers.insert(1, (commit_of(args.against), against, 1, args.against_site or args.site))
    runs = [
        {"server": label}
        | run(command, args.site, workers, args.clients, args.duration, args.client_processes, args.single, served)
        for label, command, workers, served in servers
    ]

    rows = [
        [
            "server",
            "workers",
            "calls",
            "errors",
            "calls/s",
            "vs this checkout, 1 worker",
            "p50",
            "p99",
            "single-client p50",
            "RSS before",
            "RSS after",
        ]
    ]
    base = None
    for result in runs:
        everything = [v for values in result["latencies"].values() for v in values]
        single = [v for values in result["single"].values() for v in values]
        rate = len(everything) / result["elapsed"]
        base = base or rate
        rows.append(
            [
                result["server"],
                str(result["workers"]),
                str(len(everything)),
                str(len(result["errors"])),
                f"{rate:.0f}",
                f"{rate / base:.2f}",
                ms(statistics.median(everything)),
                ms(percentile(everything, 0.99)),
                ms(statistics.median(single)),
                f"{result['rss_before'] / 2**20:.0f} MB",
                f"{result['rss_after'] / 2**20:.0f} MB",
            ]
        )
    per_case = [
        [
            "case",
            "in-process p50",
            "kept-alive HTTP p50 (1 worker)",
            "HTTP - in-process",
            "p50 under load (last run)",
            "p99 under load (last run)",
        ]
    ]
    first, last = runs[0], runs[-1]
    for label, _, _ in CASES:
        values = last["latencies"][label]
        http_p50 = statistics.median(first["single"][label])
        in_process_p50 = statistics.median(first["in_process"][label])
        per_case.append(
            [
                label,
                ms(in_process_p50),
                ms(http_p50),
                ms(http_p50 - in_process_p50),
                ms(statistics.median(values)),
                ms(percentile(values, 0.99)),
            ]
        )
    first_errors = sorted({error for result in runs for error in result["errors"]})[:5]
    command = command_line()
    report = "\n".join(
        [
            f"$ {command}",
            f"{args.clients} clients x {args.duration:g} s on {os.path.relpath(args.site.resolve(), REPO)} ({os.cpu_count()} CPUs, "
            f"Python {platform.python_version()}, load average before: {os.getloadavg()[0]:.2f})",
            *(
                [f"the --against server on its own build of it, {os.path.relpath(args.against_site.resolve(), REPO)}"]
                if args.against and args.against_site
                else []
            ),
            "",
            table(rows),
            "",
            table(per_case),
            "",
            "errors: " + ("none" if not first_errors else "; ".join(first_errors)),
            "",
        ]
    )
    print(report)
    write_results(args.name, report)


if __name__ == "__main__":
    main()
