"""MCP tool latency on the FastAPI corpus' published index, through a real stdio client session.

The client spawns `mkdocs-vault-mcp serve SITE_DIR` twice and holds two sessions open over stdio: one
under the initialize handshake (protocol 2025-11-25, which has MCP `ping`) and one under 2026-07-28 (what
`mcp.Client` negotiates by default; it has no ping). Each round calls, one after the other: ping, every case
in the 2025-11-25 session, then every case in the 2026-07-28 session; so drift hits every case and the
baseline alike. The baseline is that ping: the cheapest round trip over the same
transport, measured in the same rounds. Every p50 is reported as a ratio to ping's p50 (the 2026-07-28
rows too: same transport, same rounds, the other session). Each case also runs in-process as a bare query
function on a read-only connection ("sql p50"), so what the SQL costs and what the MCP layer adds can be
told apart.

Then time to first answer: from spawning the server process to the first count_documents result
(target <= 0.5 s), split into interpreter start, imports (`python -X importtime`) and the rest.

    .venv/bin/python bench/tool_latency.py [--site SITE_DIR] [--calls 200] [--starts 10]

Without --site it uses the site that bench/build_overhead.py left (bench/out/fastapi/sites/vault-warm),
building the corpus with the vault-mcp plugin first when that is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import re
import shlex
import sqlite3
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp

from report import table, write_results  # bench/ is on sys.path when a script runs

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
SERVER_COMMAND = REPO / ".venv" / "bin" / "mkdocs-vault-mcp"
PYTHON = REPO / ".venv" / "bin" / "python"
RESULTS = BENCH / "results"
DEFAULT_SITE = BENCH / "out" / "fastapi" / "sites" / "vault-warm"
FIRST_ANSWER_TARGET = 0.5

sys.path.insert(0, str(BENCH))


def ensure_site(site: Path) -> None:
    if (site / "vault-mcp" / "index.sqlite").is_file():
        return
    if site != DEFAULT_SITE:
        sys.exit(f"tool_latency: no index at {site}/vault-mcp/index.sqlite; build the site with vault-mcp first.")
    import build_overhead

    out = build_overhead.OUT
    out.mkdir(parents=True, exist_ok=True)
    build_overhead.copy_corpus(build_overhead.CORPUS, out)
    build_overhead.write_configs(out)
    print(f"building {site} with vault-mcp (once) ...", flush=True)
    build_overhead.build(out, "vault-warm", site, dict(os.environ, NO_MKDOCS_2_WARNING="1"))


def percentile(values: list[float], fraction: float) -> float:
    """Nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(fraction * len(ordered) + 0.5) - 1))]


def pick_cases(index: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """(label, tool, arguments); the field filter uses a front matter value that exists in this index."""
    conn = sqlite3.connect(f"{index.resolve().as_uri()}?mode=ro", uri=True)
    field_value = conn.execute(
        "SELECT v.field, v.value, substr(d.folder, 1, instr(d.folder || '/', '/') - 1), count(*)"
        " FROM field_values v JOIN documents d ON d.id = v.document_id GROUP BY 1, 2, 3 ORDER BY 4 DESC LIMIT 1"
    ).fetchone()
    conn.close()
    cases: list[tuple[str, str, dict[str, Any]]] = [
        ("stats", "stats", {}),
        ("count_documents {}", "count_documents", {}),
        ("count_documents folder=en/tutorial", "count_documents", {"folder": "en/tutorial"}),
    ]
    if field_value:
        field, value, top, _ = field_value
        cases.append(
            (
                f"count_documents folder={top} filters={{{field}: {value}}}",
                "count_documents",
                {"folder": top, "filters": {field: value}},
            )
        )
    cases += [
        (
            "count_documents folder=en modified_after",
            "count_documents",
            {"folder": "en", "modified_after": "2020-01-01T00:00:00Z"},
        ),
        ("count_documents query=dependencies", "count_documents", {"query": "dependencies"}),
        ("get_recent {} (limit 20)", "get_recent", {}),
        ("get_recent folder=en/tutorial", "get_recent", {"folder": "en/tutorial"}),
        ("aggregate_documents by=folder", "aggregate_documents", {"by": "folder"}),
        ("aggregate_documents by=folder folder=en", "aggregate_documents", {"by": "folder", "folder": "en"}),
        ("aggregate_documents by=month", "aggregate_documents", {"by": "month"}),
        ("query_documents folder=en/tutorial (limit 50)", "query_documents", {"folder": "en/tutorial"}),
        ("query_documents sort=modified (limit 50)", "query_documents", {"sort": "modified"}),
    ]
    return cases


SMALL_ANSWER_TARGET = 1.5  # p50 / ping p50 for small answers (the performance issue, point 3)


def target_for(label: str) -> float | None:
    """Small answers: the stats and counts whose SQL is a fraction of a millisecond (not a full-text query)."""
    small = label == "stats" or (label.startswith("count_documents") and "query=" not in label)
    return SMALL_ANSWER_TARGET if small else None


def direct_function(label: str, tool: str, arguments: dict[str, Any]) -> Callable[[sqlite3.Connection], Any]:
    """The query function the tool adapts, with the same arguments (no MCP, no JSON, no pydantic)."""
    from mkdocs_vault_mcp.index.query import queries
    from mkdocs_vault_mcp.mcp.arguments import shared_filters as filters_from

    args = dict(arguments)
    if tool == "stats":
        return queries.index_stats
    if tool == "get_recent":
        return lambda conn: queries.get_recent(conn, folder=args.get("folder"))
    if tool == "aggregate_documents":
        by = args.pop("by")
        return lambda conn: queries.aggregate_documents(conn, by, filters_from(args))
    if tool == "query_documents":
        sort = args.pop("sort", "path")
        return lambda conn: queries.query_documents(conn, filters_from(args), sort=sort)
    return lambda conn: queries.count_documents(conn, filters_from(args))


PING = "ping (baseline)"
LEGACY, MODERN = "2025-11-25", "2026-07-28"


async def measure_sessions(
    site: Path, cases: list[tuple[str, str, dict[str, Any]]], calls: int, warmup: int
) -> dict[str, dict[str, list[float]]]:
    """Both sessions, round robin over ping and the cases; returns protocol -> label -> samples (ms).

    Ping exists only under the initialize handshake (2025-11-25); the 2026-07-28 session's rows are divided
    by the same ping (the server publishes tools only, so it has no cheaper request to measure there).
    """
    params = mcp.StdioServerParameters(command=str(SERVER_COMMAND), args=["serve", str(site)])
    samples: dict[str, dict[str, list[float]]] = {
        LEGACY: {PING: [], **{label: [] for label, _, _ in cases}},
        MODERN: {label: [] for label, _, _ in cases},
    }
    clock = time.perf_counter_ns
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "ping is removed as of 2026-07-28": it is sent to the 2025-11-25 session
        async with mcp.Client(params, mode="legacy") as legacy, mcp.Client(params) as modern:
            if legacy.protocol_version != LEGACY or modern.protocol_version != MODERN:
                raise SystemExit(
                    f"tool_latency: negotiated {legacy.protocol_version} and {modern.protocol_version},"
                    f" expected {LEGACY} and {MODERN}"
                )
            for round_ in range(warmup + calls):
                timed: list[tuple[str, str, float]] = []
                start = clock()
                await legacy.send_ping()
                timed.append((LEGACY, PING, (clock() - start) / 1e6))
                for protocol, client in ((LEGACY, legacy), (MODERN, modern)):
                    for label, tool, arguments in cases:
                        start = clock()
                        result = await client.call_tool(tool, arguments)
                        timed.append((protocol, label, (clock() - start) / 1e6))
                        if result.is_error:
                            raise SystemExit(f"tool_latency: {label} failed ({protocol}): {result.content}")
                if round_ >= warmup:
                    for protocol, label, elapsed in timed:
                        samples[protocol][label].append(elapsed)
    return samples


def measure_direct(index: Path, cases: list[tuple[str, str, dict[str, Any]]], calls: int) -> dict[str, float]:
    from mkdocs_vault_mcp.index.publish import open_read_only

    conn = open_read_only(index)
    functions = {label: direct_function(label, tool, arguments) for label, tool, arguments in cases}
    samples: dict[str, list[float]] = {label: [] for label in functions}
    for function in functions.values():
        function(conn)
    for _ in range(calls):
        for label, function in functions.items():
            start = time.perf_counter_ns()
            function(conn)
            samples[label].append((time.perf_counter_ns() - start) / 1e6)
    conn.close()
    return {label: statistics.median(values) for label, values in samples.items()}


async def first_answer(site: Path) -> tuple[float, float]:
    """Seconds from spawning the server to (initialize done, first count_documents result)."""
    params = mcp.StdioServerParameters(command=str(SERVER_COMMAND), args=["serve", str(site)])
    start = time.perf_counter()
    async with mcp.Client(params) as client:
        initialized = time.perf_counter() - start
        result = await client.call_tool("count_documents", {})
        answered = time.perf_counter() - start
        if result.is_error:
            raise SystemExit(f"tool_latency: first count_documents failed: {result.content}")
    return initialized, answered


def run_seconds(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def imported_seconds(already: str, modules: str) -> float:
    """Median seconds, timed inside a fresh interpreter, to import `modules` after `already`."""
    code = (f"import {already}\n" if already else "") + (
        f"import time\nstart = time.perf_counter()\nimport {modules}\nprint(time.perf_counter() - start)"
    )
    runs = [
        float(subprocess.run([str(PYTHON), "-c", code], capture_output=True, text=True, check=True).stdout)
        for _ in range(7)
    ]
    return statistics.median(runs)


def import_profile() -> tuple[float, list[tuple[float, str]]]:
    """Import seconds of the server's modules (-X importtime, self times summed per top-level package)."""
    done = subprocess.run(
        [str(PYTHON), "-X", "importtime", "-c", "import mkdocs_vault_mcp.cli, mkdocs_vault_mcp.mcp.server"],
        capture_output=True,
        text=True,
        check=True,
    )
    packages: dict[str, float] = {}
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|\s*(\S+)", line)
        if match:
            name = match.group(3).split(".")[0]
            packages[name] = packages.get(name, 0.0) + int(match.group(1)) / 1e6
    ranked = sorted(((seconds, name) for name, seconds in packages.items()), reverse=True)
    return sum(packages.values()), ranked


def main() -> None:
    global SERVER_COMMAND
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=DEFAULT_SITE, help="a site built with vault-mcp")
    parser.add_argument("--calls", type=int, default=200, help="timed calls per case (default 200)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed calls per case first (default 20)")
    parser.add_argument("--starts", type=int, default=10, help="server starts for time to first answer")
    parser.add_argument(
        "--server",
        type=Path,
        default=SERVER_COMMAND,
        help="the mkdocs-vault-mcp command to measure (another checkout's, for a before/after)",
    )
    parser.add_argument(
        "--out", type=Path, default=RESULTS / "speed" / "tool_latency.json", help="where the report goes"
    )
    args = parser.parse_args()
    SERVER_COMMAND = args.server.absolute()
    command_line = "python " + " ".join(shlex.quote(a) for a in [os.path.relpath(__file__, REPO), *sys.argv[1:]])

    site = args.site.resolve()
    ensure_site(site)
    index = site / "vault-mcp" / "index.sqlite"
    cases = pick_cases(index)
    pages = sqlite3.connect(f"{index.as_uri()}?mode=ro", uri=True).execute("SELECT count(*) FROM documents")
    pages = pages.fetchone()[0]

    samples = asyncio.run(measure_sessions(site, cases, args.calls, args.warmup))
    load_during = os.getloadavg()[0]
    direct = measure_direct(index, cases, args.calls)
    ping = statistics.median(samples[LEGACY][PING])

    rows = [
        [
            "case (stdio)",
            f"p50 ms {LEGACY}",
            "p95 ms",
            "p50/ping",
            f"p50 ms {MODERN}",
            "p95 ms",
            "p50/ping",
            "sql p50 ms",
            "target p50/ping",
            "verdict",
        ]
    ]
    for label in [PING, *(label for label, _, _ in cases)]:
        cells = [label]
        for protocol in (LEGACY, MODERN):
            values = samples[protocol].get(label)
            if values:
                p50 = statistics.median(values)
                cells += [f"{p50:.3f}", f"{percentile(values, 0.95):.3f}", f"{p50 / ping:.2f}"]
            else:
                cells += ["-", "-", "-"]
        target = target_for(label)
        ratios = [
            statistics.median(samples[protocol][label]) / ping
            for protocol in (LEGACY, MODERN)
            if label in samples[protocol]
        ]
        cells += [
            f"{direct[label]:.3f}" if label in direct else "-",
            f"<= {target:g}" if target else "-",
            ("ok" if max(ratios) <= target else "MISSED") if target else "",
        ]
        rows.append(cells)

    starts = [asyncio.run(first_answer(site)) for _ in range(args.starts)]
    interpreter = statistics.median(run_seconds([str(PYTHON), "-c", "pass"]) for _ in range(7))
    sdk = imported_seconds("", "mcp.server.lowlevel")
    ours = imported_seconds("mcp.server.lowlevel", "mkdocs_vault_mcp.cli, mkdocs_vault_mcp.mcp.server")
    import_total, ranked = import_profile()
    initialized = statistics.median(s[0] for s in starts)
    answered = statistics.median(s[1] for s in starts)
    verdict = "ok" if answered <= FIRST_ANSWER_TARGET else "MISSED"
    first = [
        f"time to first answer (spawn -> first count_documents result), {args.starts} starts:",
        f"  median {answered:.3f} s, min {min(s[1] for s in starts):.3f} s, max {max(s[1] for s in starts):.3f} s"
        f" (target <= {FIRST_ANSWER_TARGET} s: {verdict}); the client's handshake was done at {initialized:.3f} s",
        "where it goes (medians of 7 fresh interpreters each; imports timed inside them):",
        f"  interpreter start and exit (python -c pass)                 {interpreter:.3f} s",
        f"  import mcp.server.lowlevel (the SDK's server)              {sdk:.3f} s",
        f"  import mkdocs_vault_mcp.cli + .server on top of that         {ours:.3f} s",
        f"  the rest: index check, create_server, stdio, handshake, first call  "
        f"{answered - interpreter - sdk - ours:.3f} s",
        f"  costliest packages by import self time (-X importtime, total {import_total:.3f} s):",
        *[f"    {seconds * 1000:7.1f} ms  {name}" for seconds, name in ranked[:12]],
    ]

    report = "\n".join(
        [
            f"command: {command_line}",
            f"index: {os.path.relpath(index, REPO)} ({pages} pages, {index.stat().st_size / 1e6:.1f} MB)",
            f"client: mcp.Client over stdio -> {os.path.relpath(SERVER_COMMAND, REPO)} serve SITE_DIR; "
            f"{args.calls} timed rounds after {args.warmup} warm-up rounds; two sessions, each its own server process:"
            f" {LEGACY} (initialize handshake) and {MODERN} (mcp.Client's default)",
            f"each round: ping ({LEGACY}), every case in {LEGACY}, every case in {MODERN}",
            f"baseline: MCP ping, {LEGACY} session (it does not exist in {MODERN}); every p50/ping divides by its p50,"
            f" {ping:.3f} ms",
            f"verdict: small answers (stats, counts without a full-text query) within {SMALL_ANSWER_TARGET}x ping in both"
            " sessions",
            "sql p50: the same query function called in-process on a read-only connection (no MCP, no JSON)",
            f"machine: Python {platform.python_version()}, {os.cpu_count()} CPUs, mcp {mcp_version()};"
            f" load average {load_during:.1f} after the sessions, {os.getloadavg()[0]:.1f} at the end"
            " (other work on the machine inflates every number; the ratios to ping less so)",
            "",
            table(rows),
            "",
            *first,
            "",
        ]
    )
    print(report)
    if args.out == RESULTS / "speed" / "tool_latency.json":
        write_results("tool_latency", report)
    else:
        args.out.parent.mkdir(exist_ok=True)
        args.out.write_text(report)


def mcp_version() -> str:
    from importlib.metadata import version

    return version("mcp")


if __name__ == "__main__":
    main()
