"""`search` latency on the FastAPI index, through a real stdio client session.

    .venv/bin/python bench/search_latency.py [--all-languages] [--site SITE_DIR] [--calls 30] [--warmup 3]

Spawns `.venv/bin/mkdocs-vault-mcp serve SITE_DIR` twice with `mcp.Client(mcp.StdioServerParameters(...))`
and holds two sessions open: one under the initialize handshake (protocol 2025-11-25, which has MCP
`ping`) and one under 2026-07-28 (mcp.Client's default, which has no ping). Each round sends a ping, then
`search` (limit 10, sections_per_page 2) with every query of bench/search_queries.json in both sessions,
one call after the other, `--calls` rounds, so drift hits every style and the baseline alike. The
baseline is that ping: the cheapest round trip over the same transport, in the same rounds; each style's
p50 is also given as a ratio to ping's p50. Reports p50 and p90 per style (keyword, question, code), how
many of the queries were relaxed (their strict form found fewer than 10 pages), and the same queries
in-process (`search()` on a read-only connection: what the SQL and the ranking cost without MCP).

The index: by default the English docs, built as bench/search_quality.py builds them (and cached the
same way); `--all-languages` builds the 13 languages as folders of one docs_dir; `--site` takes any
built site. Targets: p50 <= 5 ms for keyword queries, <= 15 ms for relaxed questions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import statistics
import sys
import time
import warnings
from pathlib import Path

import mcp

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(REPO))

from mkdocs_vault_mcp.index.filters import Filters, compile_filters  # noqa: E402
from mkdocs_vault_mcp.index.publish import open_read_only  # noqa: E402
from mkdocs_vault_mcp.index.search import answer as ranking  # noqa: E402
from report import write_results  # noqa: E402
from search_quality import CORPORA, QUERIES, STYLES, build_fastapi_site  # noqa: E402

SERVER_COMMAND = REPO / ".venv" / "bin" / "mkdocs-vault-mcp"
RESULTS = BENCH / "results" / "speed" / "search_latency.json"
TARGETS = {"keyword": 5.0, "question": 15.0}
BASELINE = "ping (baseline)"
LEGACY, MODERN = "2025-11-25", "2026-07-28"


def percentile(values: list[float], fraction: float) -> float:
    """Nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(fraction * len(ordered) + 0.5) - 1))]


def was_relaxed(conn, query: str) -> bool:
    """Whether `search` goes on to the relaxed form: the strict form finds fewer than STRICT_PAGES pages."""
    plan = ranking.plan_query(conn, query, "all")
    if plan.relaxed is None or plan.relaxed == plan.strict or plan.strict is None:
        return False
    enough = ranking.STRICT_PAGES
    return ranking._page_count(conn, plan.strict, compile_filters(conn, Filters()), enough) < enough


async def measure_stdio(site: Path, queries: list[dict], calls: int, warmup: int) -> dict[str, dict[str, list[float]]]:
    """protocol -> (BASELINE or query id) -> samples in ms; the ping goes to the 2025-11-25 session."""
    params = mcp.StdioServerParameters(command=str(SERVER_COMMAND), args=["serve", str(site)])
    samples: dict[str, dict[str, list[float]]] = {
        LEGACY: {BASELINE: [], **{item["id"]: [] for item in queries}},
        MODERN: {item["id"]: [] for item in queries},
    }
    clock = time.perf_counter_ns
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "ping is removed as of 2026-07-28": it is sent to the 2025-11-25 session
        async with mcp.Client(params, mode="legacy") as legacy, mcp.Client(params) as modern:
            if legacy.protocol_version != LEGACY or modern.protocol_version != MODERN:
                raise SystemExit(
                    f"search_latency: negotiated {legacy.protocol_version} and "
                    f"{modern.protocol_version}, expected {LEGACY} and {MODERN}"
                )
            for round_ in range(warmup + calls):
                start = clock()
                await legacy.send_ping()
                if round_ >= warmup:
                    samples[LEGACY][BASELINE].append((clock() - start) / 1e6)
                for item in queries:
                    for protocol, client in ((LEGACY, legacy), (MODERN, modern)):
                        start = clock()
                        result = await client.call_tool("search", {"query": item["query"]})
                        elapsed = (clock() - start) / 1e6
                        if result.is_error or not result.structured_content["result"]:
                            raise SystemExit(
                                f"search_latency: {item['query']!r} failed or found nothing ({protocol}): {result}"
                            )
                        if round_ >= warmup:
                            samples[protocol][item["id"]].append(elapsed)
    return samples


def measure_in_process(index: Path, queries: list[dict], calls: int) -> dict[str, list[float]]:
    conn = open_read_only(index)
    samples: dict[str, list[float]] = {item["id"]: [] for item in queries}
    for item in queries:
        ranking.search(conn, item["query"], Filters())
    for _ in range(calls):
        for item in queries:
            start = time.perf_counter_ns()
            ranking.search(conn, item["query"], Filters())
            samples[item["id"]].append((time.perf_counter_ns() - start) / 1e6)
    conn.close()
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, help="a built site with vault-mcp/index.sqlite")
    parser.add_argument("--all-languages", action="store_true", help="all 13 languages as one docs_dir")
    parser.add_argument("--calls", type=int, default=30, help="timed calls per query")
    parser.add_argument("--warmup", type=int, default=3, help="untimed rounds first")
    args = parser.parse_args()

    if args.site:
        site, corpus = args.site, f"the site at {args.site}"
    elif args.all_languages:
        languages = sorted(p.name for p in CORPORA.iterdir() if (p / "docs").is_dir())
        site, corpus = build_fastapi_site(languages), f"FastAPI docs, {len(languages)} languages as one docs_dir"
    else:
        site, corpus = build_fastapi_site(), "FastAPI docs, English only"
    index = site / "vault-mcp" / "index.sqlite"
    queries = json.loads(QUERIES.read_text())["queries"]

    conn = open_read_only(index)
    pages = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    sections = conn.execute("SELECT count(*) FROM sections").fetchone()[0]
    relaxed = {item["id"] for item in queries if was_relaxed(conn, item["query"])}
    conn.close()

    stdio = asyncio.run(measure_stdio(site, queries, args.calls, args.warmup))
    direct = measure_in_process(index, queries, args.calls)

    def pooled(samples: dict[str, list[float]], style: str, only_relaxed: bool = False) -> list[float]:
        return [
            value
            for item in queries
            if item["style"] == style and (not only_relaxed or item["id"] in relaxed)
            for value in samples[item["id"]]
        ]

    ping = statistics.median(stdio[LEGACY][BASELINE])
    lines = [
        f"search latency: {corpus}; {pages} pages, {sections} sections; limit 10, sections_per_page 2.",
        f"client: mcp.Client over stdio -> {os.path.relpath(SERVER_COMMAND, REPO)} serve SITE_DIR, two sessions"
        f" (each its own server process): {LEGACY} (initialize handshake) and {MODERN} (mcp.Client's default);",
        f"{args.calls} timed rounds after {args.warmup} warm-up rounds; each round a ping ({LEGACY}), then every"
        " query in both sessions, one call after the other.",
        f"baseline: MCP ping in the {LEGACY} session ({MODERN} has none), p50 {ping:.2f} ms; /ping = p50 / ping's p50.",
        "",
        f"{'queries':<24} {'n':>3}  {LEGACY + ' p50':>14} {'p90':>6} {'/ping':>6}  {MODERN + ' p50':>14} {'p90':>6}"
        f" {'/ping':>6}  {'in-process p50':>14} {'p90':>6}  target p50",
    ]
    base = stdio[LEGACY][BASELINE]
    lines.append(f"{BASELINE:<24} {'':>3}  {ping:>14.2f} {percentile(base, 0.9):>6.2f} {1:>6.2f}")
    rows = [(style, style, False) for style in STYLES] + [("question", "question (relaxed only)", True)]
    for style, label, only_relaxed in rows:
        count = sum(1 for q in queries if q["style"] == style and (not only_relaxed or q["id"] in relaxed))
        cells = f"{label:<24} {count:>3}"
        for protocol in (LEGACY, MODERN):
            over_stdio = pooled(stdio[protocol], style, only_relaxed)
            p50 = statistics.median(over_stdio)
            cells += f"  {p50:>14.2f} {percentile(over_stdio, 0.9):>6.2f} {p50 / ping:>6.2f}"
        in_process = pooled(direct, style, only_relaxed)
        target = TARGETS.get(style)
        cells += f"  {statistics.median(in_process):>14.2f} {percentile(in_process, 0.9):>6.2f}"
        cells += f"  {f'<= {target:g} ms ({MODERN})' if target else ''}"
        lines.append(cells.rstrip())
    per_style = {s: sum(1 for q in queries if q["style"] == s and q["id"] in relaxed) for s in STYLES}
    lines += [
        "",
        "relaxed (strict form found < 10 pages): " + ", ".join(f"{s} {n}" for s, n in per_style.items()),
        "times in milliseconds; stdio = one call_tool round trip as the client sees it (its output-schema"
        " validation included).",
        f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} when the run ended"
        " (other work on the machine inflates every number).",
        f"command: .venv/bin/python bench/search_latency.py {shlex.join(sys.argv[1:])}".rstrip(),
    ]
    report = "\n".join(lines) + "\n"
    write_results(RESULTS.stem, report)
    print(report)
    print(f"written to {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
