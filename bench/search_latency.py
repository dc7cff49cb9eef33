"""`search` latency on the FastAPI index, through a real stdio client session.

    .venv/bin/python bench/search_latency.py [--all-languages] [--site SITE_DIR] [--calls 30] [--warmup 3]

Spawns `.venv/bin/mkdocs-vault-mcp serve SITE_DIR` with `mcp.Client(mcp.StdioServerParameters(...))`
and calls `search` (limit 10, sections_per_page 2) with every query of bench/search_queries.json,
`--calls` times each, round robin over queries so drift hits every style alike. Reports p50 and p90 per
style (keyword, question, code), how many of the queries were relaxed (their strict form found fewer
than 10 pages), the same queries in-process (`search()` on a read-only connection: what the SQL and the
ranking cost without MCP), and an empty `prompts/list` round trip as the transport baseline.

The index: by default the English docs, built as bench/search_quality.py builds them (and cached the
same way); `--all-languages` builds the 13 languages as folders of one docs_dir; `--site` takes any
built site. Targets (issue 4): p50 <= 5 ms for keyword queries, <= 15 ms for relaxed questions.
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
from pathlib import Path

import mcp

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(REPO))

from search_quality import CORPORA, QUERIES, STYLES, build_fastapi_site  # noqa: E402

from mkdocs_vault_mcp.index import search as ranking  # noqa: E402
from mkdocs_vault_mcp.index.filters import Filters, compile_filters  # noqa: E402
from mkdocs_vault_mcp.index.store import open_read_only  # noqa: E402

SERVER_COMMAND = REPO / ".venv" / "bin" / "mkdocs-vault-mcp"
RESULTS = BENCH / "results" / "search_latency.txt"
TARGETS = {"keyword": 5.0, "question": 15.0}
BASELINE = "prompts/list (transport baseline)"


def percentile(values: list[float], fraction: float) -> float:
    """Nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(fraction * len(ordered) + 0.5) - 1))]


def was_relaxed(conn, query: str, limit: int = 10) -> bool:
    """Whether `search` goes on to the relaxed form: the strict form finds fewer pages than asked for."""
    plan = ranking.plan_query(conn, query, "all")
    if plan.relaxed in (None, plan.strict):
        return False
    return ranking._page_count(conn, plan.strict, compile_filters(conn, Filters()), limit) < limit


async def measure_stdio(site: Path, queries: list[dict], calls: int, warmup: int) -> dict[str, list[float]]:
    params = mcp.StdioServerParameters(command=str(SERVER_COMMAND), args=["serve", str(site)])
    samples: dict[str, list[float]] = {BASELINE: [], **{item["id"]: [] for item in queries}}
    async with mcp.Client(params) as client:
        for round_ in range(warmup + calls):
            start = time.perf_counter_ns()
            await client.list_prompts(cache_mode="bypass")
            if round_ >= warmup:
                samples[BASELINE].append((time.perf_counter_ns() - start) / 1e6)
            for item in queries:
                start = time.perf_counter_ns()
                result = await client.call_tool("search", {"query": item["query"]})
                elapsed = (time.perf_counter_ns() - start) / 1e6
                if result.is_error or not result.structured_content["result"]:
                    raise SystemExit(f"search_latency: {item['query']!r} failed or found nothing: {result}")
                if round_ >= warmup:
                    samples[item["id"]].append(elapsed)
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

    lines = [
        f"search latency: {corpus}; {pages} pages, {sections} sections; limit 10, sections_per_page 2.",
        f"client: mcp.Client over stdio -> {os.path.relpath(SERVER_COMMAND, REPO)} serve SITE_DIR; "
        f"{args.calls} timed calls per query after {args.warmup} warm-up rounds, round robin.",
        "",
        f"{'queries':<34} {'n':>3}  {'stdio p50':>9} {'p90':>7}  {'in-process p50':>14} {'p90':>7}  target p50",
    ]
    base = stdio[BASELINE]
    lines.append(f"{BASELINE:<34} {'':>3}  {statistics.median(base):>9.2f} {percentile(base, 0.9):>7.2f}")
    rows = [(style, style, False) for style in STYLES] + [("question", "question (relaxed only)", True)]
    for style, label, only_relaxed in rows:
        count = sum(1 for q in queries if q["style"] == style and (not only_relaxed or q["id"] in relaxed))
        over_stdio, in_process = pooled(stdio, style, only_relaxed), pooled(direct, style, only_relaxed)
        target = TARGETS.get(style)
        lines.append(
            f"{label:<34} {count:>3}  {statistics.median(over_stdio):>9.2f} {percentile(over_stdio, 0.9):>7.2f}"
            f"  {statistics.median(in_process):>14.2f} {percentile(in_process, 0.9):>7.2f}"
            f"  {f'<= {target:g} ms' if target else ''}"
        )
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
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(report)
    print(report)
    print(f"written to {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
