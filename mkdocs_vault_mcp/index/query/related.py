"""Pages like a given page or section ("more like this"), from the index alone: no model, no download.

The page's (or section's) text is cut into terms by the index's own tokenizer (an in-memory FTS5 table with
the same tokenizer, so the terms are the index's stems), each term weighed by how often the page uses it
times how rare it is across the site's sections (`sections_vocab`: tf x idf). Its most distinctive terms,
ORed, are then searched as any query is (`search.search`: BM25 with the column weights, pages ranked by their
best sections), and the page itself is left out. When the index holds section vectors (index/search/semantic.py), the
pages nearest the mean of the page's vectors are fused with those by rank (still no model: the vectors are stored).
"""

from __future__ import annotations

import dataclasses
import math
import re
import sqlite3

from ...errors import InvalidArgument
from ...limits import SEARCH_RESULTS
from ..answer_types import Listing, SearchHit
from ..filters import Filters, no_document, split_target
from ..schema import TOKENIZER
from ..search.answer import search
from ..search.counts import section_count
from ..search.plan import COMMON_MINIMUM, fuse, is_stop_word
from ..search.semantic import related_pages

TERMS = 25  # distinctive terms searched for
TITLE_WEIGHT = 3  # the title and headings count as this many uses of their words
_PLAIN_TERM = re.compile(r"^[a-z][a-z0-9]*$")


def _sections_of(document_id: int, anchor: str | None) -> tuple[str, list[int | str]]:
    """The WHERE clause of `sections` that selects a page's sections, or the one at `anchor` and those under it."""
    where = "document_id = ?"
    params: list[int | str] = [document_id]
    if anchor is not None:
        where += " AND position >= (SELECT position FROM sections WHERE document_id = ? AND anchor = ?)"
        where += (
            " AND position < coalesce((SELECT min(b.position) FROM sections a JOIN sections b ON"
            " b.document_id = a.document_id AND b.position > a.position AND b.level <= a.level"
            " WHERE a.document_id = ? AND a.anchor = ?), 1e9)"
        )
        params += [document_id, anchor, document_id, anchor]
    return where, params


def section_ids(conn: sqlite3.Connection, document_id: int, anchor: str | None) -> set[int]:
    where, params = _sections_of(document_id, anchor)
    return {row[0] for row in conn.execute(f"SELECT id FROM sections WHERE {where}", params)}


def distinctive_terms(conn: sqlite3.Connection, document_id: int, anchor: str | None) -> list[str]:
    where, params = _sections_of(document_id, anchor)
    rows = conn.execute(f"SELECT title, headings, body FROM sections WHERE {where} ORDER BY position", params)
    texts = []
    for title, headings, body in rows:
        texts += [f"{title} {headings}"] * TITLE_WEIGHT + [body]
    memory = sqlite3.connect(":memory:")
    try:
        memory.execute(f"CREATE VIRTUAL TABLE page USING fts5(text, tokenize='{TOKENIZER}')")
        memory.executemany("INSERT INTO page (text) VALUES (?)", [[text] for text in texts])
        memory.execute("CREATE VIRTUAL TABLE page_vocab USING fts5vocab(page, row)")
        counts = memory.execute("SELECT term, cnt FROM page_vocab").fetchall()
    finally:
        memory.close()
    total = section_count(conn) or 1  # rowids leave gaps where pages were written again
    uses = {
        term: count for term, count in counts if len(term) >= 2 and _PLAIN_TERM.match(term) and not is_stop_word(term)
    }
    terms = list(uses)
    frequencies: dict[str, int] = {}
    for start in range(0, len(terms), 500):  # the vocabulary table answers IN with one lookup per term
        chunk = terms[start : start + 500]
        frequencies.update(
            conn.execute(f"SELECT term, doc FROM sections_vocab WHERE term IN ({', '.join('?' * len(chunk))})", chunk)
        )
    weights = {}
    for term, count in uses.items():
        sections = frequencies.get(term, 0)
        # In no other section, or too common: in a quarter of the site's sections and more than a small site has.
        if sections <= 1 or sections > max(total / 4, COMMON_MINIMUM):
            continue
        weights[term] = math.log(1 + count) * math.log(total / sections)
    return sorted(weights, key=lambda term: (-weights[term], term))[:TERMS]


def related(
    conn: sqlite3.Connection, target: str, filters: Filters, limit: int = 10, offset: int = 0
) -> Listing[SearchHit]:
    if filters.query is not None and filters.query.strip():
        raise InvalidArgument("query does not apply to show='related' (its terms come from target); leave it out.")
    path, anchor = split_target(target, conn)
    row = conn.execute("SELECT id FROM documents WHERE path = ?", [path]).fetchone()
    if row is None:
        raise no_document("target", path, "'guide/install.md', optionally with '#anchor'")
    if (
        anchor
        and conn.execute("SELECT 1 FROM sections WHERE document_id = ? AND anchor = ?", [row[0], anchor]).fetchone()
        is None
    ):
        raise InvalidArgument(f"No section with anchor {anchor!r} in {path!r}; read view='outline' lists them.")
    wanted = min(SEARCH_RESULTS, offset + limit + 1)
    hits: list[SearchHit] = []
    terms = distinctive_terms(conn, row[0], anchor or None)
    if terms:
        expression = " OR ".join(f'"{term}"' for term in terms)
        hits = [
            hit
            for hit in search(conn, expression, dataclasses.replace(filters, query=None), limit=wanted)
            if hit["path"] != path
        ]
    # With section vectors (index/search/semantic.py), the pages nearest in meaning too, fused by rank: on the judged
    # queries the two together find more of a page's fellow relevant pages than either alone.
    sections = section_ids(conn, row[0], anchor) if anchor else None
    nearest = related_pages(conn, row[0], sections, filters, wanted)
    if nearest is not None:
        hits = fuse(hits, nearest, 1.0, wanted)
    result = hits[offset : offset + limit]
    after = offset + len(result)
    return {"result": result, "total": len(hits), "next_offset": after if after < len(hits) else None}
