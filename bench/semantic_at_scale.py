"""Search latency with vectors on ~100,000 sections: the shortlist against the scan of every vector, in one run.

    .venv/bin/python bench/run.py semantic_quality      # first: the FastAPI index with vectors
    .venv/bin/python bench/run.py semantic_at_scale [--copies 48]

The index is made, not built: the FastAPI English index with vectors (bench/semantic_quality.py's), its pages
and sections copied --copies times under other paths (`copy7/tutorial/...`) by SQL, so FTS5 indexes every copy
as a build would, and each copy's sections get the original's vector plus a little noise (unit length again).
Embedding 100,000 real sections would take hours on 2 CPUs; what the meaning side costs per query (the query's
embedding, the scan, the page lookups) does not depend on what the vectors say, though how often a shortlist
misses depends on how the vectors lie (noise spreads them over every direction, which makes it miss more). The text is the
FastAPI docs repeated, so the keyword side is not what a real 100,000-section site costs (bench/real_text_search.py
measures that); the comparison is the two answers on the same index in the same run.

Every judged query (both sets), after a warm-up pass, alternated query by query in one pass (the order of the
two hybrid answers swapped every query, each embedding its query afresh):

- `search.search` alone (what an index without vectors answers);
- `search.search_answer` (keywords fused with the nearest pages) as it runs: the nearest pages from a shortlist
  picked on the vectors' leading directions and scored exactly (semantic.nearest_rows);
- the same on a copy of the index read with every vector scanned (the baseline: the exact scan);
- its parts alone: the query's embedding, and the meaning ranking (semantic.nearest_pages, 10 pages deep) from
  the shortlist and from the exact scan, and from shortlists on fewer leading directions.

Then whether the shortlist changes any answer: for every judged query, the meaning ranking 10, 50 and 100 pages
deep (each depth the fused ranking reads, semantic.in_tiers) from the shortlist against the exact scan's, pages,
sections and scores. Writes bench/results/speed/semantic_at_scale.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402

from mkdocs_vault_mcp.index.filters import Filters  # noqa: E402
from mkdocs_vault_mcp.index.publish import open_read_only  # noqa: E402
from mkdocs_vault_mcp.index.search import semantic  # noqa: E402
from mkdocs_vault_mcp.index.search.answer import search, search_answer  # noqa: E402
from mkdocs_vault_mcp.index.search.embedding import QUERY_THREADS, Model, load_model  # noqa: E402
from mkdocs_vault_mcp.index.search.rank import DEPTHS  # noqa: E402
from report import write_results  # noqa: E402
from search_quality import OUT, QUERY_SETS  # noqa: E402

SOURCE = OUT / "fastapi-en-semantic" / "site" / "vault-mcp" / "index.sqlite"
TARGET = OUT / "semantic-at-scale" / "index.sqlite"
EXACT = OUT / "semantic-at-scale" / "exact" / "index.sqlite"  # a copy, read with every vector scanned
SECTION_COLUMNS = "position, level, anchor, heading, start, path, title, headings, summary, body"
OTHER_DIRECTIONS = (64, 96)  # leading directions measured beside the chosen semantic.LEADING_DIRECTIONS


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


def exact_vectors(conn: sqlite3.Connection) -> semantic.Vectors:
    """The copy's vectors read as a small index's are: every one scanned."""
    kept, semantic.SHORTLIST_FROM = semantic.SHORTLIST_FROM, sys.maxsize
    try:
        found = semantic.vectors(conn)
    finally:
        semantic.SHORTLIST_FROM = kept
    assert found is not None and found.leading is None
    return found


def timed(call: Callable[[], object]) -> float:
    begun = time.perf_counter()
    call()
    return (time.perf_counter() - begun) * 1000


def line(label: str, values: list[float]) -> str:
    def share(part: float) -> float:
        return sorted(values)[round(part * (len(values) - 1))]

    return f"{label:<36} {statistics.median(values):5.1f} {share(0.9):5.1f} {share(0.95):5.1f} {max(values):5.1f}"


def agreement(
    conn: sqlite3.Connection, exact: semantic.Vectors, other: semantic.Vectors, targets: list[np.ndarray]
) -> str:
    """At each depth the fused ranking reads, the judged queries whose meaning ranking `other` gives as `exact`."""
    same = []
    for depth in DEPTHS:
        count = sum(
            semantic.nearest_pages(conn, other, target, Filters(), depth, 2)
            == semantic.nearest_pages(conn, exact, target, Filters(), depth, 2)
            for target in targets
        )
        same.append(str(count))
    return "/".join(same)


@dataclasses.dataclass
class Scans:
    """What one run compares: the index as read (a shortlist), its copy read as a small index (the exact scan),
    and shortlists on other numbers of leading directions."""

    conn: sqlite3.Connection
    exact_conn: sqlite3.Connection
    found: semantic.Vectors
    exact: semantic.Vectors
    others: dict[int, semantic.Vectors]
    model: Model


def steps_of(scans: Scans, query: str, target: np.ndarray) -> list[tuple[str, Callable[[], object]]]:
    """What is timed for one query, in order: the two hybrid answers swapped by the caller every other query."""
    conn, found, exact = scans.conn, scans.found, scans.exact
    steps: list[tuple[str, Callable[[], object]]] = [
        ("hybrid (search_answer), shortlist", lambda: search_answer(conn, query, Filters(), limit=10)),
        ("hybrid, exact scan (baseline)", lambda: search_answer(scans.exact_conn, query, Filters(), limit=10)),
        (
            f"meaning ranking, shortlist ({semantic.LEADING_DIRECTIONS})",
            lambda: semantic.nearest_pages(conn, found, target, Filters(), 10, 2),
        ),
        ("meaning ranking, exact scan", lambda: semantic.nearest_pages(conn, exact, target, Filters(), 10, 2)),
        ("keywords alone (search)", lambda: search(conn, query, Filters(), limit=10)),
        ("the query's embedding alone", lambda: scans.model.embed([query])),
    ]
    return steps + [
        (
            f"meaning ranking, shortlist ({directions})",
            lambda other=other: semantic.nearest_pages(conn, other, target, Filters(), 10, 2),
        )
        for directions, other in scans.others.items()
    ]


def timed_runs(scans: Scans, queries: list[str]) -> dict[str, list[float]]:
    """Each step's milliseconds per query, after a warm-up pass."""
    runs: dict[str, list[float]] = {}
    for timed_pass in (False, True):
        for number, query in enumerate(queries):
            steps = steps_of(scans, query, scans.model.embed([query])[0])
            if number % 2:
                steps[0], steps[1] = steps[1], steps[0]
            for label, call in steps:
                semantic.query_vector.cache_clear()
                spent = timed(call)
                if timed_pass:
                    runs.setdefault(label, []).append(spent)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=48, help="copies of the FastAPI pages added (48: ~100,000)")
    args = parser.parse_args()
    started = time.perf_counter()
    make_index(args.copies)
    EXACT.parent.mkdir(exist_ok=True)
    shutil.copyfile(TARGET, EXACT)
    made = time.perf_counter() - started
    conn, exact_conn = open_read_only(TARGET), open_read_only(EXACT)
    sections = conn.execute("SELECT count(*) FROM sections").fetchone()[0]
    queries = [q["query"] for _, path in QUERY_SETS for q in json.loads(path.read_text())["queries"]]
    begun = time.perf_counter()
    found = semantic.vectors(conn)
    read_shortlisted = time.perf_counter() - begun
    begun = time.perf_counter()
    exact = exact_vectors(exact_conn)
    read_exact = time.perf_counter() - begun
    assert found is not None and found.leading is not None and len(found.sections) == sections
    usable = semantic.usable_vectors(conn)
    assert not isinstance(usable, str), usable
    model = load_model(usable.model, QUERY_THREADS)
    others = {directions: semantic.with_shortlist(found, directions) for directions in OTHER_DIRECTIONS}
    scans = Scans(conn, exact_conn, found, exact, others, model)
    load_before = os.getloadavg()[0]
    runs = timed_runs(scans, queries)
    load_after = os.getloadavg()[0]
    targets = [model.embed([query])[0] for query in queries]
    same = ", ".join(
        f"{agreement(conn, exact, other, targets)} ({directions} directions)"
        for directions, other in sorted({semantic.LEADING_DIRECTIONS: found, **others}.items(), reverse=True)
    )
    report = (
        f"{f'ms, {sections:,} sections':<36}   p50   p90   p95   max\n"
        + "\n".join(line(label, values) for label, values in runs.items())
        + f"\nthe same meaning ranking as the exact scan, {'/'.join(map(str, DEPTHS))} pages deep, of {len(queries)}:"
        f" {same}\n\n"
        f"{len(queries)} judged queries, alternated after a warm-up pass; each hybrid answer embeds its query; load"
        f" average {load_before:.1f} before the timed pass, {load_after:.1f} after.\n"
        f"The index: {args.copies} copies of the FastAPI English pages beside the originals, made in {made:.0f} s."
        f" Its vectors: float32 in memory, {found.matrix.nbytes / 1e6:.0f} MB, and {found.leading.nbytes / 1e6:.0f} MB"
        f" on their {semantic.LEADING_DIRECTIONS} leading directions; read in {read_shortlisted:.1f} s with those,"
        f" {read_exact:.1f} s without. The shortlist: {semantic.SHORTLIST} sections scored exactly per section"
        " wanted (4,000 for 10 pages); (N): on N leading directions. Meaning ranking: semantic.nearest_pages, 10"
        " pages deep; compared: pages, sections and scores.\n"
    )
    print(report)
    write_results("semantic_at_scale", report)


if __name__ == "__main__":
    main()
