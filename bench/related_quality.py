"""Related pages ("more like this") on the judged queries: do a relevant page's neighbours hold the other
relevant pages of the same query more often than chance?

    .venv/bin/python bench/related_quality.py

Uses the FastAPI English docs index that bench/search_quality.py builds (and builds it when missing or out of
date). For every judged query of bench/search_queries.json with at least two relevant pages, and for each of
its relevant pages, asks the `links` tool's `show="related"` question (index/query/related.py) for 10 neighbours and
counts the query's other relevant pages among them. Chance is what 10 pages drawn at random from the other
pages of the site would hold: 10 / (pages - 1) of them. Writes the table to bench/results/quality/related_quality.json.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from mkdocs_vault_mcp.index.filters import Filters  # noqa: E402
from mkdocs_vault_mcp.index.publish import open_read_only  # noqa: E402
from mkdocs_vault_mcp.index.query.related import related  # noqa: E402
from report import table, write_results  # noqa: E402
from search_quality import QUERIES, build_fastapi_site  # noqa: E402

DEPTHS = (5, 10)


@dataclass
class Neighbours:
    """For each depth, the recall of each asked page's fellow relevant pages and whether any was found; each call's
    seconds."""

    recall: dict[int, list[float]]
    any_hit: dict[int, list[bool]]
    times: list[float]


def judged_queries() -> list[dict[str, Any]]:
    """The judged queries with two or more relevant pages: those whose pages can find each other."""
    return [q for q in json.loads(QUERIES.read_text(encoding="utf-8"))["queries"] if len(q["relevant"]) >= 2]


def ask_neighbours(conn: sqlite3.Connection, queries: list[dict[str, Any]]) -> Neighbours:
    """Ask each relevant page of each query for its neighbours and count the query's other relevant pages."""
    known = {path for (path,) in conn.execute("SELECT path FROM documents")}
    asked = Neighbours({depth: [] for depth in DEPTHS}, {depth: [] for depth in DEPTHS}, [])
    for query in queries:
        relevant = [path for path in query["relevant"] if path in known]
        for page in relevant:
            others = set(relevant) - {page}
            started = time.perf_counter()
            found = [hit["path"] for hit in related(conn, page, Filters(), limit=max(DEPTHS))["result"]]
            asked.times.append(time.perf_counter() - started)
            for depth in DEPTHS:
                hits = len(others & set(found[:depth]))
                asked.recall[depth].append(hits / len(others))
                asked.any_hit[depth].append(hits > 0)
    return asked


def main() -> None:
    site = build_fastapi_site()
    conn = open_read_only(site / "vault-mcp" / "index.sqlite")
    pages = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    asked = ask_neighbours(conn, judged_queries())
    recall, any_hit, times = asked.recall, asked.any_hit, asked.times
    rows = []
    for depth in DEPTHS:
        chance = depth / (pages - 1)
        mean = statistics.mean(recall[depth])
        rows.append(
            [
                f"{depth}",
                str(len(recall[depth])),
                f"{mean:.3f}",
                f"{chance:.3f}",
                f"{mean / chance:.1f}x",
                f"{statistics.mean(any_hit[depth]):.3f}",
            ]
        )
    report = (
        "related pages on the judged queries with two or more relevant pages (FastAPI English docs, "
        f"{pages} pages)\ncommand: .venv/bin/python bench/related_quality.py\n\n"
        + table(
            [
                [
                    "neighbours",
                    "relevant pages asked",
                    "recall of the other relevant pages",
                    "chance",
                    "lift",
                    "share with at least one",
                ],
                *rows,
            ]
        )
        + f"\n\nper call: median {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms"
        " (in-process, the query alone)\n"
    )
    print(report)
    write_results("related_quality", report)


if __name__ == "__main__":
    main()
