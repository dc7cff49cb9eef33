"""Search quality on the FastAPI English docs: our ranking against a plain FTS5 baseline.

    .venv/bin/python bench/search_quality.py [--details] [--rebuild]

Builds the corpus for real (`mkdocs build`, theme mkdocs, plugin vault-mcp) into
bench/out/fastapi-en/, reusing that build while its inputs (the corpus, the
plugin's indexing code, the MkDocs config, the installed MkDocs and Markdown
versions) are unchanged. Then scores every query of bench/search_queries.json
with MRR@10 and Recall@5, per style and overall, for `search` and for the
baseline in the same run, and writes the table to bench/results/search_quality.txt.

Baseline: the query as an FTS5 MATCH (its literal words ANDed when SQLite
rejects it), over the same sections table, ranked by plain bm25(), each page
once at the rank of its best section.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mkdocs_vault_mcp.index.filters import Filters, fts_expression  # noqa: E402
from mkdocs_vault_mcp.index.search import search  # noqa: E402
from mkdocs_vault_mcp.index.store import open_read_only  # noqa: E402

CORPORA = ROOT.parent / "shared" / "corpora" / "fastapi-docs"
QUERIES = ROOT / "bench" / "search_queries.json"
RESULTS = ROOT / "bench" / "results" / "search_quality.txt"
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
READ_ONLY_MODULES = {"index/search.py", "index/queries.py", "index/filters.py", "index/links.py", "index/related.py",
                     "server.py", "live.py", "cli.py"}


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


# --- the two systems ----------------------------------------------------------------------------


def ours(conn: sqlite3.Connection, query: str, limit: int) -> list[str]:
    return [page["path"] for page in search(conn, query, Filters(), limit=limit)]


def baseline(conn: sqlite3.Connection, query: str, limit: int) -> list[str]:
    match = fts_expression(conn, query, "all")
    if match is None:
        return []
    rows = conn.execute(
        "SELECT d.path FROM sections_fts JOIN sections s ON s.id = sections_fts.rowid"
        " JOIN documents d ON d.id = s.document_id WHERE sections_fts MATCH ? ORDER BY bm25(sections_fts), d.path",
        [match],
    )
    return list(dict.fromkeys(path for (path,) in rows))[:limit]


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


def table(results: dict[str, dict[str, tuple]]) -> str:
    lines = [
        f"{'style':<10} {'n':>3}  {'MRR@10 ours':>11} {'baseline':>9}  {'R@5 ours':>9} {'baseline':>9}"
        f"  {'zero ours':>9} {'baseline':>9}",
    ]
    for style in (*STYLES, "overall"):
        o, b = results["ours"][style], results["baseline"][style]
        lines.append(
            f"{style:<10} {o[3]:>3}  {o[0]:>11.3f} {b[0]:>9.3f}  {o[1]:>9.3f} {b[1]:>9.3f}  {o[2]:>9} {b[2]:>9}"
        )
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

    queries = json.loads(QUERIES.read_text())["queries"]
    site = build_fastapi_site(rebuild=args.rebuild)
    conn = open_read_only(site / "vault-mcp" / "index.sqlite")
    documents = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    sections = conn.execute("SELECT count(*) FROM sections").fetchone()[0]
    unknown = {p for q in queries for p in q["relevant"]} - {
        p for (p,) in conn.execute("SELECT path FROM documents")
    }
    if unknown:
        raise SystemExit(f"judged pages missing from the index: {sorted(unknown)}")

    per_system = {"ours": evaluate(conn, ours, queries), "baseline": evaluate(conn, baseline, queries)}
    results = {name: summarize(scored, queries) for name, scored in per_system.items()}
    header = (
        f"Search quality: {len(queries)} judged queries ({QUERIES.name}) over the FastAPI English docs, "
        f"{documents} pages, {sections} sections.\n"
        "ours = mkdocs_vault_mcp.index.search.search; baseline = the query as FTS5 MATCH "
        "(literal words when malformed), plain bm25(), pages by best section.\n"
        "Targets: MRR@10 >= 0.85 keyword and code, >= 0.70 question; no query with zero results.\n"
        f"command: .venv/bin/python bench/search_quality.py {' '.join(sys.argv[1:])}".rstrip() + "\n"
    )
    report = header + "\n" + table(results) + "\n"
    not_perfect = misses(per_system["ours"], queries)
    report += (
        f"\nQueries where ours is not perfect (first relevant not at rank 1, or Recall@5 < 1): {len(not_perfect)}\n"
    )
    report += "\n".join(not_perfect) + "\n"
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(report)
    print(report if args.details else header + "\n" + table(results))
    print(f"\nwritten to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
