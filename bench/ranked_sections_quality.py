"""What search's bound on ranked sections costs in quality where it applies.

    .venv/bin/python bench/ranked_sections_quality.py [--caps 600,200,100]

`search` ranks at most `RANKED_SECTIONS` sections by BM25 (index/search/answer.py; docs/pages/search.md, "Bounded work");
the FastAPI English index of bench/search_quality.py has 2,082 sections, so there the bound never applies and
the judged scores cannot show what it does. This script lowers the bound in-process, so that the judged queries
meet it as queries with common words meet it on a large site, and scores both judged sets (tuned on, held out)
with search_quality.py's own MRR@10 and Recall@5, beside the scores at the package's bound. Baseline: the
same queries at the package's own bound, in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

import search_quality  # noqa: E402
from mkdocs_vault_mcp.index.publish import open_read_only  # noqa: E402
from mkdocs_vault_mcp.index.search import answer as ranked  # noqa: E402
from report import table, write_results  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--caps", default="600,200,100", help="bounds to try, comma-separated (default 600,200,100)")
    args = parser.parse_args()
    command_line = "python " + " ".join(shlex.quote(a) for a in [os.path.relpath(__file__, REPO), *sys.argv[1:]])
    site = search_quality.build_fastapi_site()
    conn = open_read_only(site / "vault-mcp" / "index.sqlite")
    sections = conn.execute("SELECT count(*) FROM sections").fetchone()[0]
    sets = {name: json.loads(path.read_text())["queries"] for name, path in search_quality.QUERY_SETS}
    package_cap = ranked.RANKED_SECTIONS
    rows = [
        ["RANKED_SECTIONS", "share of sections", "set", "MRR@10 keyword", "question", "code", "overall", "R@5 overall"]
    ]
    try:
        for cap in [package_cap, *(int(c) for c in args.caps.split(","))]:
            ranked.RANKED_SECTIONS = cap
            for name, queries in sets.items():
                summary = search_quality.summarize(search_quality.evaluate(conn, search_quality.ours, queries), queries)
                label = f"{cap:,}" + (" (the package's)" if cap == package_cap else "")
                rows.append(
                    [
                        label,
                        f"{min(1, cap / sections):.0%}",
                        name,
                        *(f"{summary[style][0]:.3f}" for style in ("keyword", "question", "code", "overall")),
                        f"{summary['overall'][1]:.3f}",
                    ]
                )
    finally:
        ranked.RANKED_SECTIONS = package_cap
        conn.close()
    report = "\n".join(
        [
            f"command: {command_line}",
            f"index: the FastAPI English docs of bench/search_quality.py ({sections:,} sections); the judged queries of"
            " search_queries.json (tuned on) and search_queries_holdout.json (held out)",
            "the bound lowered in-process; a share of sections below 100% is where a large site's common words are",
            "",
            table(rows),
            "",
        ]
    )
    print(report)
    write_results("ranked_sections_quality", report)


if __name__ == "__main__":
    main()
