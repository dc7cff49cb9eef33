"""Search by meaning too (opt-in: the plugin option `semantic`, the extra `mkdocs-vault-mcp[semantic]`).

Build side. When the option names a model, the writer's commit gives every section without a vector one: its
page title, heading trail and text, embedded by the model (index/search/embedding.py loads it and caches what it
embeds). The index keeps them in `section_vectors` (section id, float16 BLOB) and names the model in `info`: `serve
SITE_DIR` and a deployed index use them as they are. Without the option a build imports nothing here, unless an
earlier build left vectors: `store_vectors` then drops them.

Query side: a ranker that search.py calls. `usable_vectors` says whether the index's vectors can rank here (or
why not), `query_vector` embeds the query, and `nearest_pages` ranks the pages whose sections lie nearest it;
search.py fuses that ranking with its keyword one (search_plan.fuse), and related.py with its tf-idf one. The
pages it may rank are those the keyword side may (filters.ranked_pages_filter). The vectors are read once per
index version into one float32 matrix and scanned with numpy: every vector, up to SHORTLIST_FROM of them; above,
their projections on the LEADING_DIRECTIONS along which the index's vectors vary most (principal components, a
third of the bytes to read) pick a shortlist, and only its sections are scored exactly (`nearest_rows`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import logging
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import budget
from .. import cjk
from ..answer_types import SearchHit, SearchSection
from ..filters import Filters, ranked_pages_filter
from ..schema import KeptPerVersion, index_version
from .embedding import (
    MAX_TOKENS,
    QUERY_THREADS,
    ModelUnavailable,
    cached_vectors,
    forget_model,
    load_model,
    locate,
    model_key,
    record_model,
    recorded_model,
)

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger("mkdocs.plugins.vault-mcp")

NEAREST_SECTIONS = 200  # nearest sections read before pages are formed
# From this many vectors on, a first pass on their leading directions picks the sections scored exactly: below,
# scanning every vector costs little. Set with bench/semantic_at_scale.py against the exact scan of every vector.
SHORTLIST_FROM = 20_000
LEADING_DIRECTIONS = 128  # of the model's 384: with 96, a judged query's nearest pages changed at 100,000 sections
SHORTLIST = 20  # sections scored exactly for each section wanted
SNIPPET_WORDS = 30

# --- the build's side: the writer's commit -------------------------------------------------------------------


def section_text(title: str, headings: str, body: str) -> str:
    """What a section is embedded as: where it sits (page title, heading trail) and what it says."""
    trail = cjk.join(headings)
    place = cjk.join(title) if not trail or trail == cjk.join(title) else f"{cjk.join(title)}: {trail}"
    return f"{place}\n{cjk.join(body)}"


def store_vectors(conn: sqlite3.Connection, semantic: dict[str, str] | None, pages_changed: bool = True) -> None:
    """In the writer's transaction, before its commit: give every section without a vector one (`semantic`:
    {"model": config.semantic_model's answer, "cache": the cache file}), or drop the vectors when `semantic` is None.
    `pages_changed`: whether the transaction put or removed pages (if not, and the model is the same, every
    section has its vector already)."""
    if semantic is None:
        conn.execute("DROP TABLE IF EXISTS section_vectors")
        forget_model(conn)
        return
    model = semantic["model"]
    recorded = recorded_model(conn)
    same_model = recorded is not None and recorded.source == model
    if same_model and not pages_changed:
        return
    conn.execute("CREATE TABLE IF NOT EXISTS section_vectors (section_id INTEGER PRIMARY KEY, vector BLOB NOT NULL)")
    if not same_model:
        conn.execute("DELETE FROM section_vectors")
    conn.execute("DELETE FROM section_vectors WHERE section_id NOT IN (SELECT id FROM sections)")
    missing = conn.execute(
        "SELECT id, title, headings, body FROM sections WHERE id NOT IN (SELECT section_id FROM section_vectors)"
    ).fetchall()
    if missing:
        try:
            _embed_sections(conn, model, Path(semantic["cache"]), missing)
        except ModelUnavailable as error:
            log.warning(f"vault-mcp: search by meaning is off for this build: {error}")
            conn.execute("DROP TABLE IF EXISTS section_vectors")
            forget_model(conn)
            return
    record_model(conn, model)


def _embed_sections(conn: sqlite3.Connection, model: str, cache_path: Path, missing: list[tuple[Any, ...]]) -> None:
    # The cut is part of what made a vector: a cache filled with another cut must not serve this one.
    key_of_model = f"{model_key(model)}\ncut at {MAX_TOKENS}"
    texts = {section_id: section_text(title, headings, body) for section_id, title, headings, body in missing}
    keys = {
        section_id: hashlib.sha256(f"{key_of_model}\n{text}".encode()).hexdigest() for section_id, text in texts.items()
    }
    found = cached_vectors(model, cache_path, {key: texts[section_id] for section_id, key in keys.items()})
    conn.executemany(
        "INSERT OR REPLACE INTO section_vectors (section_id, vector) VALUES (?, ?)",
        [(section_id, found[key]) for section_id, key in keys.items()],
    )


# --- the query's side ----------------------------------------------------------------------------------------


@dataclasses.dataclass
class Vectors:
    model: str
    sections: np.ndarray  # section ids, in the matrix's row order
    documents: np.ndarray  # each row's page
    matrix: np.ndarray  # float32, one unit vector a row
    directions: np.ndarray | None = None  # the leading directions, one a column (None: every vector is scanned)
    leading: np.ndarray | None = None  # each row's projection on them
    shortlist: int = SHORTLIST


# Two versions: the one being read and the next, while `mkdocs serve` publishes it (each is a float32 matrix).
_kept: KeptPerVersion[Vectors | None] = KeptPerVersion(limit=2)


def stored_model(conn: sqlite3.Connection) -> str | None:
    """The model the index's vectors were made with; None when it has none (no numpy needed to tell)."""
    row = conn.execute("SELECT value FROM info WHERE key = 'semantic_model'").fetchone()
    return row[0] if row else None


def vectors(conn: sqlite3.Connection) -> Vectors | None:
    model = stored_model(conn)
    if model is None:
        return None
    version = index_version(conn)
    if version is None:
        return _read_vectors(conn, model)
    return _kept.get((conn.execute("PRAGMA database_list").fetchone()[2], *version), lambda: _read_vectors(conn, model))


def _read_vectors(conn: sqlite3.Connection, model: str) -> Vectors | None:
    try:
        import numpy as np
    except ImportError:  # the extra is not installed where the index is served: keywords alone
        return None

    rows = conn.execute(
        "SELECT v.section_id, s.document_id, v.vector FROM section_vectors v JOIN sections s ON s.id = v.section_id"
        " ORDER BY v.section_id"
    ).fetchall()
    if not rows:
        return None
    matrix = np.frombuffer(b"".join(row[2] for row in rows), dtype=np.float16).reshape(len(rows), -1)
    found = Vectors(
        model,
        np.array([row[0] for row in rows], dtype=np.int64),
        np.array([row[1] for row in rows], dtype=np.int64),
        matrix.astype(np.float32),
    )
    return with_shortlist(found) if len(rows) >= SHORTLIST_FROM else found


def with_shortlist(found: Vectors, directions: int = LEADING_DIRECTIONS) -> Vectors:
    """`found` with its rows projected on the `directions` along which they vary most, for `nearest_rows`' first
    pass: the leading eigenvectors of the rows' second moments (from a sample of rows), which keep most of every
    dot product."""
    import numpy as np

    sample = found.matrix[:: max(1, len(found.matrix) // 8192)].astype(np.float64)
    _, vectors = np.linalg.eigh(sample.T @ sample)  # ascending eigenvalues
    leading = np.ascontiguousarray(vectors[:, ::-1][:, :directions], dtype=np.float32)
    return dataclasses.replace(found, directions=leading, leading=found.matrix @ leading)


@functools.lru_cache(maxsize=256)
def query_vector(model: str, query: str) -> np.ndarray:
    """A query embedded once: agents repeat and refine queries."""
    vector: np.ndarray = load_model(model, QUERY_THREADS).embed([query])[0]
    return vector


def usable_vectors(conn: sqlite3.Connection) -> Vectors | str:
    """The index's vectors with their model loaded, or why search is by keywords alone."""
    recorded = recorded_model(conn)
    if recorded is None:
        return "keywords only: the index holds no section vectors (the plugin's option semantic is off)"
    budget.leave_event_loop()  # loading the model and embedding the query cannot be stopped part way
    try:
        model = locate(recorded)
        load_model(model, QUERY_THREADS)
    except ModelUnavailable as error:
        return f"keywords only: the model of the index's vectors is not available here ({error})"
    found = vectors(conn)
    if found is None:
        return "keywords only: the index holds no section vectors"
    return dataclasses.replace(found, model=model)  # the model as found here, for query_vector


def nearest_pages(
    conn: sqlite3.Connection,
    found: Vectors,
    target: np.ndarray,
    filters: Filters,
    limit: int,
    per_page: int,
    leave_out: int | None = None,
) -> list[SearchHit]:
    """The `limit` pages whose sections lie nearest `target`, best first, each with its `per_page` nearest
    sections, as search.py gives pages (the snippet: the section's first words). Only pages `filters` select;
    `leave_out`: a page id never given."""
    import numpy as np

    base = ranked_pages_filter(conn, filters)
    allowed = None
    if base.where != "1" or leave_out is not None:
        kept = {row[0] for row in conn.execute(f"SELECT d.id FROM documents d WHERE {base.where}", base.params)}
        kept.discard(leave_out)
        allowed = np.isin(found.documents, list(kept))
    best, similarity = nearest_rows(found, target, allowed, max(NEAREST_SECTIONS, limit * per_page * 4))
    chosen: dict[int, list[tuple[int, float]]] = {}
    for row, score in zip(best.tolist(), similarity.tolist(), strict=True):
        page = chosen.setdefault(int(found.documents[row]), [])
        if len(page) < per_page:
            page.append((int(found.sections[row]), score))
        if len(chosen) > limit:
            break
    pages = list(chosen.items())[:limit]
    return [_page(conn, document_id, sections) for document_id, sections in pages]


def nearest_rows(
    found: Vectors, target: np.ndarray, allowed: np.ndarray | None, count: int
) -> tuple[np.ndarray, np.ndarray]:
    """The (up to) `count` rows nearest `target` among the `allowed` ones (a mask; None: all), best first (ties:
    the first row first), and their similarities.

    With `found.leading`, only the `found.shortlist` * `count` rows nearest on the leading directions are scored
    exactly: the rest are not read again."""
    import numpy as np

    rows = np.arange(len(found.matrix)) if allowed is None else np.flatnonzero(allowed)
    wanted = found.shortlist * count
    if found.leading is not None and found.directions is not None and len(rows) > wanted:
        # einsum rather than `@`: BLAS wakes its threads for each product, which costs more than the whole
        # product on a busy machine; einsum's own loop runs on this thread.
        rough = np.einsum("ij,j->i", found.leading, np.einsum("ij,i->j", found.directions, target))
        if allowed is not None:
            rough = np.where(allowed, rough, -np.inf)
        rows = np.sort(np.argpartition(-rough, wanted - 1)[:wanted])
        similarity = np.einsum("ij,j->i", found.matrix[rows], target)
    elif allowed is None:
        similarity = np.einsum("ij,j->i", found.matrix, target)
    else:
        similarity = np.einsum("ij,j->i", found.matrix[rows], target)
    count = min(count, len(rows))
    if not count:
        return rows, similarity
    best = np.argpartition(-similarity, count - 1)[:count]
    best = best[np.lexsort((best, -similarity[best]))]
    return rows[best], similarity[best]


def _page(conn: sqlite3.Connection, document_id: int, sections: list[tuple[int, float]]) -> SearchHit:
    path, title, url = conn.execute("SELECT path, title, url FROM documents WHERE id = ?", [document_id]).fetchone()
    shown: list[SearchSection] = []
    for section_id, score in sections:
        heading, anchor, body = conn.execute(
            "SELECT heading, anchor, body FROM sections WHERE id = ?", [section_id]
        ).fetchone()
        words = cjk.join(body).split()
        snippet = " ".join(words[:SNIPPET_WORDS]) + (" …" if len(words) > SNIPPET_WORDS else "")
        shown.append(
            {
                "heading": heading,
                "url": url + (f"#{anchor}" if anchor else ""),
                "snippet": snippet,
                "score": round(score, 4),
            }
        )
    return {"path": path, "title": title, "url": url, "score": round(sections[0][1], 4), "sections": shown}


def related_pages(
    conn: sqlite3.Connection, document_id: int, sections: set[int] | None, filters: Filters, wanted: int
) -> list[SearchHit] | None:
    """Pages like a page (or its `sections`: a section and those under it): nearest the mean of its section
    vectors. None when the index has no vectors (or none for that page): tf-idf alone answers then."""
    found = vectors(conn)
    if found is None:
        return None
    import numpy as np

    rows = np.flatnonzero(found.documents == document_id)
    if sections is not None:
        rows = rows[np.isin(found.sections[rows], list(sections))]
    if not len(rows):
        return None
    target = found.matrix[rows].mean(axis=0)
    target /= max(float(np.linalg.norm(target)), 1e-12)
    return nearest_pages(conn, found, target, filters, wanted, 2, leave_out=document_id)
