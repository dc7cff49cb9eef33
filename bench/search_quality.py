"""Search quality on the FastAPI English docs: our ranking against plain FTS5 baselines, on two query sets.

    .venv/bin/python bench/search_quality.py [--details] [--rebuild]

Builds the corpus for real (`mkdocs build`, theme mkdocs, plugin vault-mcp) into
bench/out/fastapi-en/, reusing that build while its inputs (the corpus, the
plugin's indexing code, the MkDocs config, the installed MkDocs and Markdown
versions) are unchanged. Then scores every query of two judged sets with MRR@10
and Recall@5, per style and overall, for `search` and for the baselines in the
same run, and writes the tables to bench/results/quality/search_quality.json:

- tuned on: bench/search_queries.json, the queries the ranking constants were set on;
- held out: bench/search_queries_holdout.json, written and committed before any run
  scored it, and never used to tune anything.

Baselines, both over the same sections table, ranked by plain bm25() with no
column weights (FTS5's default: every column weighs 1), each page once at the rank
of its best section:

- OR (the fair one): the query's words as the unicode61 tokenizer cuts them,
  minus stop words (a fixed list kept in this file), ORed. A question keeps its
  content words, so it is not lost for one stop word missing from a page.
- AND: the query as an FTS5 MATCH (its literal words ANDed when SQLite rejects
  it). A question rarely has all its words in one section, so questions score
  near 0 by construction; it is kept to show what the strict reading alone gives.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mkdocs_vault_mcp.index.filters import Filters, fts_expression  # noqa: E402
from mkdocs_vault_mcp.index.publish import open_read_only  # noqa: E402
from mkdocs_vault_mcp.index.search.answer import search  # noqa: E402
from report import write_results  # noqa: E402  (bench/ is on sys.path when a script runs)

CORPORA = ROOT.parent / "shared" / "corpora" / "fastapi-docs"
QUERIES = ROOT / "bench" / "search_queries.json"
HOLDOUT = ROOT / "bench" / "search_queries_holdout.json"
QUERY_SETS = (("tuned on", QUERIES), ("held out", HOLDOUT))
RESULTS = ROOT / "bench" / "results" / "quality" / "search_quality.json"
OUT = ROOT / "bench" / "out"
MKDOCS = Path(sys.executable).parent / "mkdocs"
STYLES = ("keyword", "question", "code")

# What FastAPI's own site uses, minus what is not installed here (mdx_include, so the
# `{* ../../docs_src/... *}` code includes stay as text, as on a site that lacks them).
CONFIG = """\
site_name: FastAPI
theme:
  name: mkdocs
markdown_extensions:
  - attr_list
  - md_in_html
  - tables
  - toc:
      permalink: true
  - pymdownx.superfences
  - pymdownx.blocks.admonition
  - pymdownx.blocks.details
  - pymdownx.blocks.tab
plugins:
  - vault-mcp
"""

# Modules that only read the index: changing them does not change what a build writes.
READ_ONLY_MODULES = {
    "index/search/answer.py",
    "index/search/plan.py",
    "index/search/counts.py",
    "index/search/rank.py",
    "index/search/marks.py",
    "index/query/queries.py",
    "index/filters.py",
    "index/query/link_queries.py",
    "index/query/related.py",
    "mcp/server.py",
    "mcp/live.py",
    "cli.py",
}


def inputs_digest(languages: list[str]) -> str:
    digest = hashlib.sha256(CONFIG.encode())
    for name in ("mkdocs", "markdown", "pymdown-extensions"):
        digest.update(f"{name}={metadata.version(name)}".encode())
    package = ROOT / "mkdocs_vault_mcp"
    sources = [p for p in sorted(package.rglob("*")) if p.is_file() and "__pycache__" not in p.parts]
    for path in sources:
        if path.relative_to(package).as_posix() not in READ_ONLY_MODULES:
            digest.update(path.relative_to(package).as_posix().encode() + path.read_bytes())
    for language in languages:
        docs = CORPORA / language / "docs"
        for path in sorted(docs.rglob("*")):
            if path.is_file():
                digest.update(f"{language}/{path.relative_to(docs).as_posix()}".encode() + path.read_bytes())
    return digest.hexdigest()


def build_fastapi_site(languages: list[str] | None = None, rebuild: bool = False) -> Path:
    """Build the corpus (English, or several languages as folders of one docs_dir); return the site dir.

    The corpus is copied, never built in place.
    """
    languages = languages or ["en"]
    name = "fastapi-en" if languages == ["en"] else "fastapi-all"
    work = OUT / name
    stamp = work / "inputs.sha256"
    digest = inputs_digest(languages)
    site = work / "site"
    fresh = stamp.is_file() and stamp.read_text() == digest and (site / "vault-mcp" / "index.sqlite").is_file()
    if fresh and not rebuild:
        return site
    if work.exists():
        shutil.rmtree(work)
    docs = work / "docs"
    for language in languages:
        target = docs if languages == ["en"] else docs / language
        shutil.copytree(CORPORA / language / "docs", target)
    (work / "mkdocs.yml").write_text(CONFIG)
    started = time.perf_counter()
    subprocess.run([str(MKDOCS), "build", "-q"], cwd=work, check=True)
    print(f"built {name} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    stamp.write_text(digest)
    return site


# --- the systems ------------------------------------------------------------------------------

# The OR baseline's stop words: English function words and question words. A copy made for the baseline,
# so that the baseline stays the same when the package's own list changes.
BASELINE_STOP_WORDS = frozenset(
    """a about after all also am an and any are as at be been before being between both but by can cannot
    could did do does doing done each either for from get gets getting got had has have having how i if in
    into is it its just let me might more most must my need no not of on once one or other our out over own
    please same shall should so some such than that the their them then there these they this those through
    to too under until up use used uses using very via want was way we were what when where whether which
    while who whom whose why will with within without would yes you your""".split()
)
# Words as FTS5's unicode61 tokenizer cuts them: runs of letters, digits and marks.
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def ours(conn: sqlite3.Connection, query: str, limit: int) -> list[str]:
    return [page["path"] for page in search(conn, query, Filters(), limit=limit)]


def pages_by_best_section(conn: sqlite3.Connection, match: str, limit: int) -> list[str]:
    """Pages in the order of their best section under plain bm25() (no column weights)."""
    rows = conn.execute(
        "SELECT d.path FROM sections_fts JOIN sections s ON s.id = sections_fts.rowid"
        " JOIN documents d ON d.id = s.document_id WHERE sections_fts MATCH ? ORDER BY bm25(sections_fts), d.path",
        [match],
    )
    return list(dict.fromkeys(path for (path,) in rows))[:limit]


def or_expression(query: str) -> str | None:
    """The query's words minus stop words (all of them when only stop words are left), each quoted, ORed."""
    words = list({word.casefold(): word for word in _WORD.findall(query)}.values())
    meaningful = [word for word in words if word.casefold() not in BASELINE_STOP_WORDS] or words
    return " OR ".join(f'"{word}"' for word in meaningful) or None


def or_baseline(conn: sqlite3.Connection, query: str, limit: int) -> list[str]:
    match = or_expression(query)
    return [] if match is None else pages_by_best_section(conn, match, limit)


def and_baseline(conn: sqlite3.Connection, query: str, limit: int) -> list[str]:
    match = fts_expression(conn, query, "all")
    return [] if match is None else pages_by_best_section(conn, match, limit)


SYSTEMS: dict[str, Callable] = {"ours": ours, "OR bm25": or_baseline, "AND bm25": and_baseline}


# --- scoring --------------------------------------------------------------------------------------


def reciprocal_rank(found: list[str], relevant: set[str], depth: int = 10) -> float:
    for rank, path in enumerate(found[:depth], start=1):
        if path in relevant:
            return 1.0 / rank
    return 0.0


def recall(found: list[str], relevant: set[str], depth: int = 5) -> float:
    return len(relevant.intersection(found[:depth])) / len(relevant)


def evaluate(conn: sqlite3.Connection, system: Callable, queries: list[dict]) -> dict[str, dict]:
    per_query = {}
    for item in queries:
        found = system(conn, item["query"], 10)
        relevant = set(item["relevant"])
        per_query[item["id"]] = {
            "found": found,
            "rr": reciprocal_rank(found, relevant),
            "recall": recall(found, relevant),
        }
    return per_query


def summarize(per_query: dict[str, dict], queries: list[dict]) -> dict[str, tuple[float, float, int, int]]:
    """style -> (MRR@10, Recall@5, zero-result queries, queries)."""
    groups = {style: [q for q in queries if q["style"] == style] for style in STYLES}
    groups["overall"] = queries
    summary = {}
    for style, members in groups.items():
        scored = [per_query[q["id"]] for q in members]
        summary[style] = (
            sum(s["rr"] for s in scored) / len(scored),
            sum(s["recall"] for s in scored) / len(scored),
            sum(1 for s in scored if not s["found"]),
            len(scored),
        )
    return summary


def table(results: dict[str, dict[str, dict[str, tuple]]]) -> str:
    """set -> system -> style -> (MRR@10, Recall@5, zero-result queries, queries), as one table."""
    names = list(SYSTEMS)
    header = ["set", "style", "n"] + [f"MRR@10 {n}" for n in names] + [f"R@5 {n}" for n in names]
    header += [f"zero {n}" for n in names]
    rows = [header]
    for set_name, per_system in results.items():
        for style in (*STYLES, "overall"):
            cells = [set_name, style, str(per_system["ours"][style][3])]
            cells += [f"{per_system[n][style][0]:.3f}" for n in names]
            cells += [f"{per_system[n][style][1]:.3f}" for n in names]
            cells += [str(per_system[n][style][2]) for n in names]
            rows.append(cells)
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = []
    for number, row in enumerate(rows):
        if number > 1 and row[0] != rows[number - 1][0]:
            lines.append("")
        lines.append(
            "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
        )
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def misses(per_query: dict[str, dict], queries: list[dict]) -> list[str]:
    lines = []
    for item in queries:
        scored = per_query[item["id"]]
        if scored["rr"] < 1.0 or scored["recall"] < 1.0:
            top = ", ".join(scored["found"][:3]) or "(nothing)"
            lines.append(
                f"{item['id']} rr={scored['rr']:.2f} r@5={scored['recall']:.2f} {item['query']!r}\n"
                f"      want {', '.join(item['relevant'])}\n      got  {top}"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--details", action="store_true", help="list every query that is not a perfect hit")
    parser.add_argument("--rebuild", action="store_true", help="build the site even when a cached build fits")
    args = parser.parse_args()

    query_sets = {name: json.loads(path.read_text())["queries"] for name, path in QUERY_SETS}
    site = build_fastapi_site(rebuild=args.rebuild)
    conn = open_read_only(site / "vault-mcp" / "index.sqlite")
    documents = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    sections = conn.execute("SELECT count(*) FROM sections").fetchone()[0]
    indexed = {p for (p,) in conn.execute("SELECT path FROM documents")}
    unknown = {p for queries in query_sets.values() for q in queries for p in q["relevant"]} - indexed
    if unknown:
        raise SystemExit(f"judged pages missing from the index: {sorted(unknown)}")

    scored = {
        set_name: {name: evaluate(conn, system, queries) for name, system in SYSTEMS.items()}
        for set_name, queries in query_sets.items()
    }
    results = {
        set_name: {name: summarize(per_query, query_sets[set_name]) for name, per_query in per_system.items()}
        for set_name, per_system in scored.items()
    }
    sets = "; ".join(f"{name}: {len(query_sets[name])} queries ({path.name})" for name, path in QUERY_SETS)
    header = (
        f"Search quality over the FastAPI English docs, {documents} pages, {sections} sections.\n"
        f"Query sets, judged by reading the pages. {sets}.\n"
        "  tuned on = the set the ranking constants were set on; held out = written and committed before any run\n"
        "  scored it, never used to tune.\n"
        "Systems, each page once at the rank of its best section:\n"
        "  ours     = mkdocs_vault_mcp.index.search.answer.search (BM25 with column weights, relaxation, re-ranking)\n"
        "  OR bm25  = the fair baseline: the query's words minus stop words, ORed; plain bm25(), no column weights\n"
        "  AND bm25 = the query as FTS5 MATCH (literal words ANDed when malformed); plain bm25(), no column weights\n"
        "Targets: MRR@10 >= 0.85 keyword and code, >= 0.70 question; no query with zero results.\n"
        f"command: .venv/bin/python bench/search_quality.py {' '.join(sys.argv[1:])}".rstrip()
        + "\n"
    )
    report = header + "\n" + table(results) + "\n"
    for set_name, queries in query_sets.items():
        not_perfect = misses(scored[set_name]["ours"], queries)
        report += (
            f"\n{set_name}: queries where ours is not perfect (first relevant not at rank 1, or Recall@5 < 1):"
            f" {len(not_perfect)}\n"
        )
        report += "\n".join(not_perfect) + "\n"
    for set_name, queries in query_sets.items():
        ours_scored, fair = scored[set_name]["ours"], scored[set_name]["OR bm25"]
        better = [q for q in queries if fair[q["id"]]["rr"] > ours_scored[q["id"]]["rr"]]
        worse = [q for q in queries if fair[q["id"]]["rr"] < ours_scored[q["id"]]["rr"]]
        report += (
            f"\n{set_name}: reciprocal rank, ours against OR bm25: ours higher on {len(worse)},"
            f" lower on {len(better)}\n"
        )
        for item in better:
            report += (
                f"{item['id']} ours rr={ours_scored[item['id']]['rr']:.2f}, OR bm25 rr={fair[item['id']]['rr']:.2f}"
                f" {item['query']!r}\n      OR bm25 got {', '.join(fair[item['id']]['found'][:3])}\n"
            )
    write_results(RESULTS.stem, report)
    print(report if args.details else header + "\n" + table(results))
    print(f"\nwritten to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
