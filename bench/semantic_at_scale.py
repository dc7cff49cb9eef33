"""Search latency with and without section vectors on an index of about 100,000 sections, in one run.

    .venv/bin/python bench/semantic_quality.py      # first: the FastAPI index with vectors
    .venv/bin/python bench/semantic_at_scale.py [--copies 48]

The index is made, not built: the FastAPI English index with vectors (bench/semantic_quality.py's), its pages
and sections copied --copies times under other paths (`copy7/tutorial/...`) by SQL, so FTS5 indexes every copy
as a build would, and each copy's sections get the original's vector plus a little noise (unit length again).
Embedding 100,000 real sections would take hours on 2 CPUs; what the meaning side costs per query (the query's
embedding, the scan of every vector, the page lookups) does not depend on what the vectors say. The text is the
FastAPI docs repeated, so the keyword side is not what a real 100,000-section site costs (bench/real_text_search.py
measures that); the comparison is the two answers on the same index in the same run.

Every judged query (both sets), after a warm-up pass: `search.search` alone (what an index without vectors
answers) against `search.search_answer` (keywords fused with the nearest pages), alternated query by query.
Writes bench/results/speed/semantic_at_scale.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402

from mkdocs_vault_mcp.index.filters import Filters  # noqa: E402
from mkdocs_vault_mcp.index.publish import open_read_only  # noqa: E402
from mkdocs_vault_mcp.index.search import semantic  # noqa: E402
from mkdocs_vault_mcp.index.search.answer import search, search_answer  # noqa: E402
from report import write_results  # noqa: E402
from search_quality import OUT, QUERY_SETS  # noqa: E402

SOURCE = OUT / "fastapi-en-semantic" / "site" / "vault-mcp" / "index.sqlite"
TARGET = OUT / "semantic-at-scale" / "index.sqlite"
SECTION_COLUMNS = "position, level, anchor, heading, start, path, title, headings, summary, body"


def make_index(copies: int) -> None:
    if not SOURCE.is_file():
        raise SystemExit(f"{SOURCE} is missing: run bench/semantic_quality.py first")
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.unlink(missing_ok=True)
    shutil.copyfile(SOURCE, TARGET)
    conn = sqlite3.connect(TARGET, isolation_level=None)
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("BEGIN")
    originals = conn.execute("SELECT id FROM documents ORDER BY id").fetchall()
    vectors = dict(conn.execute("SELECT section_id, vector FROM section_vectors"))
    generator = np.random.default_rng(7)
    for copy in range(1, copies + 1):
        for (document_id,) in originals:
            new_id = conn.execute(
                "INSERT INTO documents (path, folder, url, title, summary, meta, headings, modified, modified_source,"
                " fingerprint, language, fallback_of) SELECT ? || path, ? || folder, url, title, summary, meta,"
                " headings, modified, modified_source, fingerprint, language, fallback_of FROM documents WHERE id = ?",
                [f"copy{copy}/", f"copy{copy}/", document_id],
            ).lastrowid
            sections = conn.execute("SELECT id FROM sections WHERE document_id = ? ORDER BY id", [document_id])
            for (section_id,) in sections.fetchall():
                new_section = conn.execute(
                    f"INSERT INTO sections (document_id, {SECTION_COLUMNS}) SELECT ?, {SECTION_COLUMNS}"
                    " FROM sections WHERE id = ?",
                    [new_id, section_id],
                ).lastrowid
                vector = np.frombuffer(vectors[section_id], dtype=np.float16).astype(np.float32)
                vector = vector + np.asarray(generator.normal(0, 0.02, vector.shape), dtype=np.float32)
                vector /= np.linalg.norm(vector)
                conn.execute(
                    "INSERT INTO section_vectors (section_id, vector) VALUES (?, ?)",
                    [new_section, vector.astype(np.float16).tobytes()],
                )
    count = conn.execute("SELECT count(*) FROM sections").fetchone()[0]
    conn.execute("UPDATE info SET value = ? WHERE key = 'section_count'", [str(count)])
    conn.execute("UPDATE info SET value = ? WHERE key = 'built_at'", [str(time.time_ns() // 1000)])
    conn.execute("COMMIT")
    conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=48, help="copies of the FastAPI pages added (48: ~100,000)")
    args = parser.parse_args()
    started = time.perf_counter()
    make_index(args.copies)
    made = time.perf_counter() - started
    conn = open_read_only(TARGET)
    sections = conn.execute("SELECT count(*) FROM sections").fetchone()[0]
    queries = [q["query"] for _, path in QUERY_SETS for q in json.loads(path.read_text())["queries"]]
    found = semantic.vectors(conn)
    assert found is not None and len(found.sections) == sections
    plain: list[float] = []
    hybrid: list[float] = []
    for timed in (False, True):
        semantic.query_vector.cache_clear()
        for query in queries:
            begun = time.perf_counter()
            search(conn, query, Filters(), limit=10)
            middle = time.perf_counter()
            answer = search_answer(conn, query, Filters(), limit=10)
            ended = time.perf_counter()
            assert answer["_meta"]["search"].startswith(("hybrid", "keywords: a code name")), answer["_meta"]
            if timed:
                plain.append((middle - begun) * 1000)
                hybrid.append((ended - middle) * 1000)

    def p(values: list[float], share: float) -> float:
        return sorted(values)[int(share * (len(values) - 1))]

    report = (
        f"Search latency on {sections:,} sections ({args.copies} copies of the FastAPI English pages beside the"
        f" originals, made in {made:.0f} s), {len(found.sections):,} section vectors (float32 in memory:"
        f" {found.matrix.nbytes / 1e6:.0f} MB)\n"
        f"{len(queries)} judged queries, alternated, after a warm-up pass; each query embedded once in the pass.\n\n"
        f"keywords alone (search.search):              p50 {statistics.median(plain):.1f} ms, p90 {p(plain, 0.9):.1f}\n"
        f"keywords + meaning (search.search_answer): p50 {statistics.median(hybrid):.1f} ms,"
        f" p90 {p(hybrid, 0.9):.1f}\n"
        f"p50 difference: {statistics.median(hybrid) - statistics.median(plain):+.1f} ms\n"
    )
    print(report)
    write_results("semantic_at_scale", report)


if __name__ == "__main__":
    main()
