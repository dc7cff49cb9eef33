"""Search quality on the FastAPI docs in Chinese, Japanese and Korean.

    .venv/bin/python bench/cjk_search_quality.py [--details] [--rebuild] [--package DIR] [--queries FILE]

Builds each of `../shared/corpora/fastapi-docs/{zh,ja,ko}/docs` as a site of its own
(`mkdocs build`, theme mkdocs, plugin vault-mcp; the config of bench/search_quality.py) into
bench/out/fastapi-<lang>/, reusing a build while its inputs are unchanged, then scores every
query of bench/cjk_queries.json (judged before any run) with MRR@10 and Recall@5 per
language and style (`word`: a 2-4 character word seen inside running text; `mixed`: a CJK
word and an English code name), and counts queries with no result. Writes the table to
bench/results/quality/cjk_search_quality.json. `--queries bench/cjk_queries_inside.json` scores the second
judged set instead (words that stand inside unbroken runs of zh and ja text), written to
bench/results/quality/cjk_search_quality_inside.json.

`--package DIR` measures another copy of the package (for example the code before CJK
support: `git archive caefd90 mkdocs_vault_mcp | tar -x -C /tmp/before`): the sites are
built and searched with DIR first on the import path, into bench/out/fastapi-<lang>-other/.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from report import write_results  # bench/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parent.parent
LANGUAGES = ("zh", "ja", "ko")
STYLES = ("word", "mixed")
QUERIES = ROOT / "bench" / "cjk_queries.json"
RESULTS = ROOT / "bench" / "results" / "quality" / "cjk_search_quality.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--details", action="store_true", help="list every query that is not a perfect hit")
    parser.add_argument("--rebuild", action="store_true", help="build the sites even when cached builds fit")
    parser.add_argument("--package", type=Path, help="a directory holding another mkdocs_vault_mcp to measure")
    parser.add_argument("--queries", type=Path, default=QUERIES, help="the judged queries (default: %(default)s)")
    args = parser.parse_args()
    package_root = args.package.resolve() if args.package else ROOT
    sys.path.insert(0, str(package_root))
    sys.path.insert(1, str(ROOT / "bench"))
    # The package first: search_quality puts this repository first on the path when it is imported.
    from mkdocs_vault_mcp.index.filters import Filters
    from mkdocs_vault_mcp.index.publish import open_read_only
    from mkdocs_vault_mcp.index.search.answer import search
    from search_quality import CONFIG, CORPORA, MKDOCS, OUT, recall, reciprocal_rank

    assert Path(sys.modules["mkdocs_vault_mcp"].__file__ or "").is_relative_to(package_root)
    queries = json.loads(args.queries.read_text())["queries"]
    lines = []
    per_query_lines = []
    for language in [language for language in LANGUAGES if any(q["language"] == language for q in queries)]:
        site = build(language, package_root, args.rebuild, CONFIG, CORPORA, MKDOCS, OUT)
        conn = open_read_only(site / "vault-mcp" / "index.sqlite")
        paths = {path for (path,) in conn.execute("SELECT path FROM documents")}
        mine = [q for q in queries if q["language"] == language]
        unknown = {p for q in mine for p in q["relevant"]} - paths
        if unknown:
            raise SystemExit(f"{language}: judged pages missing from the index: {sorted(unknown)}")
        scored = {}
        for item in mine:
            found = [page["path"] for page in search(conn, item["query"], Filters(), limit=10)]
            relevant = set(item["relevant"])
            scored[item["id"]] = (reciprocal_rank(found, relevant), recall(found, relevant), found)
            if scored[item["id"]][0] < 1.0:
                top = ", ".join(found[:3]) or "(nothing)"
                per_query_lines.append(
                    f"{item['id']} rr={scored[item['id']][0]:.2f} {item['query']!r}\n"
                    f"      want {', '.join(item['relevant'])}\n      got  {top}"
                )
        for style in (*STYLES, "all"):
            members = [q for q in mine if style == "all" or q["style"] == style]
            if not members:
                continue
            rr = [scored[q["id"]][0] for q in members]
            r5 = [scored[q["id"]][1] for q in members]
            empty = sum(1 for q in members if not scored[q["id"]][2])
            lines.append(
                f"{language:<8} {style:<6} {len(members):>3}  {sum(rr) / len(rr):>7.3f}  {sum(r5) / len(r5):>7.3f}"
                f"  {empty:>5}"
            )
        conn.close()
    header = (
        f"CJK search quality: {len(queries)} judged queries ({args.queries.name}), FastAPI docs, "
        "one site per language.\n"
        f"package: {package_root / 'mkdocs_vault_mcp'}\n"
        "Target: MRR@10 >= 0.80 in each language, no empty answer.\n"
        f"command: .venv/bin/python bench/cjk_search_quality.py {' '.join(sys.argv[1:])}".rstrip()
        + "\n"
    )
    table = f"{'language':<8} {'style':<6} {'n':>3}  {'MRR@10':>7}  {'R@5':>7}  {'empty':>5}\n" + "\n".join(lines)
    report = header + "\n" + table + "\n\nQueries whose first relevant page is not at rank 1:\n"
    report += "\n".join(per_query_lines) + "\n"
    if args.package is None:
        kind = "".join(f"_{part}" for part in args.queries.stem.split("_") if part not in ("cjk", "queries"))
        results = RESULTS.with_name(RESULTS.stem + kind + ".json")  # cjk_queries.json: no kind
        write_results(results.stem, report)
    print(report if args.details else header + "\n" + table)


def build(language, package_root, rebuild, config, corpora, mkdocs, out) -> Path:
    """Build one language's docs as a site (cached while the corpus, config and package are unchanged)."""
    work = out / (f"fastapi-{language}" if package_root == ROOT else f"fastapi-{language}-other")
    digest = hashlib.sha256(config.encode())
    for path in sorted((package_root / "mkdocs_vault_mcp").rglob("*.py")):
        digest.update(path.read_bytes())
    docs = corpora / language / "docs"
    for path in sorted(docs.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(docs).as_posix().encode() + path.read_bytes())
    stamp, site = work / "inputs.sha256", work / "site"
    if not rebuild and stamp.is_file() and stamp.read_text() == digest.hexdigest():
        return site
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(docs, work / "docs")
    (work / "mkdocs.yml").write_text(config)
    environment = {**os.environ, "PYTHONPATH": str(package_root), "NO_MKDOCS_2_WARNING": "1"}
    subprocess.run([str(mkdocs), "build", "-q"], cwd=work, check=True, env=environment)
    stamp.write_text(digest.hexdigest())
    return site


if __name__ == "__main__":
    main()
