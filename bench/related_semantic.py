"""Related pages with section vectors (the plugin option `semantic`) against tf-idf neighbours alone, in one run.

    .venv/bin/python bench/semantic_quality.py   # first: builds both FastAPI indexes (with and without vectors)
    .venv/bin/python bench/related_semantic.py

The same question as bench/related_quality.py (for every judged query of bench/search_queries.json with two or
more relevant pages, and each of its relevant pages: how many of the query's other relevant pages are among the
page's 10 neighbours), asked of the index without vectors (tf-idf terms searched, index/query/related.py) and of the
index with them (those, fused by rank with the pages nearest the mean of the page's section vectors,
index/search/semantic.py). Writes
bench/results/quality/related_semantic.json.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from mkdocs_vault_mcp.index.filters import Filters  # noqa: E402
from mkdocs_vault_mcp.index.publish import open_read_only  # noqa: E402
from mkdocs_vault_mcp.index.query.related import related  # noqa: E402
from related_quality import DEPTHS, ask_neighbours, judged_queries  # noqa: E402
from report import table, write_results  # noqa: E402
from search_quality import OUT  # noqa: E402

INDEXES = {
    "tf-idf (no vectors)": OUT / "fastapi-en" / "site" / "vault-mcp" / "index.sqlite",
    "tf-idf + vectors, fused": OUT / "fastapi-en-semantic" / "site" / "vault-mcp" / "index.sqlite",
}


def main() -> None:
    queries = judged_queries()
    rows = [
        [
            "neighbours from",
            "neighbours",
            "relevant pages asked",
            "recall of the other relevant pages",
            "chance",
            "lift",
            "share with at least one",
            "median ms",
            "max ms",
        ]
    ]
    for name, index in INDEXES.items():
        if not index.is_file():
            raise SystemExit(f"{index} is missing: run bench/semantic_quality.py first")
        conn = open_read_only(index)
        pages = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
        related(conn, "index.md", Filters())  # the vectors are read once per index version
        asked = ask_neighbours(conn, queries)
        recall, any_hit, times = asked.recall, asked.any_hit, asked.times
        for depth in DEPTHS:
            chance = depth / (pages - 1)
            mean = statistics.mean(recall[depth])
            rows.append(
                [
                    name,
                    f"{depth}",
                    str(len(recall[depth])),
                    f"{mean:.3f}",
                    f"{chance:.3f}",
                    f"{mean / chance:.1f}x",
                    f"{statistics.mean(any_hit[depth]):.3f}",
                    f"{statistics.median(times) * 1000:.1f}",
                    f"{max(times) * 1000:.1f}",
                ]
            )
    report = (
        "related pages on the judged queries with two or more relevant pages (FastAPI English docs), from the"
        " index without vectors and the index with them\ncommand: .venv/bin/python bench/related_semantic.py\n\n"
        + table(rows)
        + "\n"
    )
    print(report)
    write_results("related_semantic", report)


if __name__ == "__main__":
    main()
