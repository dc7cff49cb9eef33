"""search of this checkout against another commit's, interleaved query by query in one process.

    git worktree add --detach /tmp/wt-before <commit>
    .venv/bin/python bench/real_text_search_ab.py --index bench/out/real-text-copies-100000/index.sqlite \
        --against /tmp/wt-before --label main [--queries 60] [--rounds 3] [--cold] [--limit 10] [--name NAME]

On a 2-CPU machine shared with other sessions, this thread's CPU time per call swings by a third from one run of
real_text_search.py to the next (the other work shares the cores' caches), so two runs at different times
cannot tell a change of a few milliseconds. Here both packages answer the same queries (real_text_search.py's,
same seed, and the commonest single words) on the same connection, each query by one and then the other (the
order alternating by round), after one untimed call of each. The other package is copied under another name
(its modules import each other relatively), so both load in this process. With --cold, this checkout's kept
match counts (index/search/answer.py) are forgotten before each of its timed calls.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from large_site import percentile  # noqa: E402
from mkdocs_vault_mcp.index.filters import Filters  # noqa: E402
from mkdocs_vault_mcp.index.publish import open_read_only  # noqa: E402
from mkdocs_vault_mcp.index.search import answer as ours  # noqa: E402
from mkdocs_vault_mcp.index.search.counts import forget_counts  # noqa: E402
from real_text_search import commonest_terms, draw_queries  # noqa: E402
from report import table, write_results  # noqa: E402

KINDS = ("keyword", "code", "question", "single word")


def load_other(checkout: Path) -> tuple[Any, Any]:
    """The other checkout's search module and Filters class, its package copied under another name."""
    copies = Path(tempfile.mkdtemp(prefix="search-ab-"))
    shutil.copytree(checkout / "mkdocs_vault_mcp", copies / "other_vault_mcp")
    sys.path.insert(0, str(copies))
    # A checkout from before the index was split by job has its search in index/search.py.
    layout = (
        "index.search.answer" if (checkout / "mkdocs_vault_mcp/index/search/answer.py").exists() else "index.search"
    )
    return importlib.import_module(f"other_vault_mcp.{layout}"), importlib.import_module(
        "other_vault_mcp.index.filters"
    ).Filters


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--against", type=Path, required=True, help="a checkout of the other commit")
    parser.add_argument("--label", default="other", help="what to call the other commit (e.g. main)")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--words", type=int, default=25)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--cold", action="store_true")
    parser.add_argument("--limit", type=int, default=10, help="search's limit (default 10)")
    parser.add_argument("--name", help="the results' name (default real_text_search_ab, _cold with --cold)")
    args = parser.parse_args()
    other_commit = (
        subprocess.run(
            ["git", "-C", str(args.against), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        or "?"
    )
    theirs, their_filters = load_other(args.against)
    conn = open_read_only(args.index)
    queries = draw_queries(args.queries, args.seed)
    every = [(kind, query) for kind, listed in queries.items() for query in listed]
    every += [("single word", term) for term, _ in commonest_terms(conn, args.words)]
    systems = {args.label: (theirs.search, their_filters()), "this checkout": (ours.search, Filters())}
    for _, query in every:
        for run, filters in systems.values():
            run(conn, query, filters, limit=args.limit)
    cpu: dict[tuple[str, str], list[float]] = {(name, kind): [] for name in systems for kind in KINDS}
    load_at_start = os.getloadavg()[0]
    for round_number in range(args.rounds):
        for kind, query in every:
            names = list(systems) if round_number % 2 == 0 else list(reversed(systems))
            for name in names:
                run, filters = systems[name]
                if args.cold and name == "this checkout":
                    forget_counts()
                started = time.thread_time_ns()
                run(conn, query, filters, limit=args.limit)
                cpu[(name, kind)].append((time.thread_time_ns() - started) / 1e6)
    rows = [
        [
            "case",
            "n",
            f"{args.label} CPU p50 ms",
            f"{args.label} CPU p95 ms",
            "this CPU p50 ms",
            "this CPU p95 ms",
            "p95 this/other",
            "target (this)",
        ]
    ]
    for kind in KINDS[:3]:
        mine, other = cpu[("this checkout", kind)], cpu[(args.label, kind)]
        rows.append(
            [
                f"search: {kind} queries",
                str(len(mine)),
                f"{statistics.median(other):.2f}",
                f"{percentile(other, 0.95):.2f}",
                f"{statistics.median(mine):.2f}",
                f"{percentile(mine, 0.95):.2f}",
                f"{percentile(mine, 0.95) / percentile(other, 0.95):.2f}",
                f"p95 <= 50 ms: {'ok' if percentile(mine, 0.95) <= 50 else 'MISSED'}",
            ]
        )
    mine, other = cpu[("this checkout", "single word")], cpu[(args.label, "single word")]
    rows.append(
        [
            f"single words, the {args.words} commonest: slowest call",
            str(len(mine)),
            "",
            f"{max(other):.2f}",
            "",
            f"{max(mine):.2f}",
            f"{max(mine) / max(other):.2f}",
            f"<= 200 ms: {'ok' if max(mine) <= 200 else 'MISSED'}",
        ]
    )
    lines = [
        f"index: {os.path.relpath(args.index, REPO)}",
        f"{args.label}: the package at {other_commit} ({args.against}); this checkout: the package of this commit"
        + (
            "; this checkout's kept match counts forgotten before each of its timed calls (--cold)"
            if args.cold
            else "; this checkout's match counts kept from call to call, as a server keeps them"
        ),
        f"queries: real_text_search.py's, {args.queries} of each kind with seed {args.seed}, and the {args.words}"
        f" commonest indexed words alone; {args.rounds} timed calls each per package, interleaved query by query"
        f" (order alternating by round), after one untimed call of each; search() with no filters, limit {args.limit}",
        f"CPU: this thread's CPU time per call; load average {load_at_start:.2f} at the start,"
        f" {os.getloadavg()[0]:.2f} at the end",
        "",
        table(rows),
    ]
    text = "\n".join(lines)
    print(text)
    write_results(args.name or ("real_text_search_ab_cold" if args.cold else "real_text_search_ab"), text)


if __name__ == "__main__":
    main()
