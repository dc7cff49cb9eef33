"""Ranked search over heading sections, and reading a page or one of its sections.

Ranking, in short (the README explains it at length):
1. The query runs as FTS5 reads it (the strict form). Malformed syntax falls
   back to its literal words, ANDed.
2. When the strict form finds fewer pages than asked for, the query is relaxed:
   its meaningful words (stop words and question words dropped), ORed, so that
   pages matching most of them still rank. Pages the strict form found keep
   their place above the rest.
3. Each section scores by BM25 with title and headings weighted above body;
   very short sections are damped so a stub never outranks the page that
   explains the topic. A page scores by its best section plus a small credit
   for its other matching sections.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from typing import Any

from ..documents import markdown_headings
from .filters import Filters, InvalidArgument, check_range, compile_filters, fts_expression, literal_expression
from .filters import literal_words, scoped
from .queries import rfc3339

# BM25 column weights, in FTS column order: path, title, headings, summary, body.
COLUMN_WEIGHTS = (2.0, 10.0, 5.0, 1.5, 1.0)
CANDIDATE_SECTIONS = 400
OTHER_SECTION_CREDIT = 0.15
STUB_WORDS = 25
SNIPPET_TOKENS = 32

STOP_WORDS = frozenset(
    """a about an and are as at be by can could do does did for from get got has have how i if in into is it its
    me my of on or should so than that the their them then there these this to use using was we what when where
    which who why will with would you your""".split()
)


def meaningful_words(query: str) -> list[str]:
    words = literal_words(query)
    kept = [word for word in words if word.casefold() not in STOP_WORDS]
    return list(dict.fromkeys(kept or words))


def search(
    conn: sqlite3.Connection, query: str, filters: Filters, limit: int = 10, sections_per_page: int = 2
) -> list[dict[str, Any]]:
    if not query or not query.strip():
        raise InvalidArgument("query must not be blank; give keywords, a question or an FTS5 expression.")
    check_range("limit", limit, 1, 100)
    check_range("sections_per_page", sections_per_page, 1, 10)
    base = compile_filters(conn, dataclasses.replace(filters, query=None))
    strict = fts_expression(conn, query, filters.scope)
    pages = _ranked_pages(conn, strict, base.where, base.params) if strict else {}
    if len(pages) < limit:
        relaxed = literal_expression(meaningful_words(query), " OR ")
        if relaxed:
            relaxed = scoped(relaxed, filters.scope)
            floor = min((page["score"] for page in pages.values()), default=0.0)
            for document_id, page in _ranked_pages(conn, relaxed, base.where, base.params).items():
                if document_id not in pages:
                    # Below every strict hit: all of the query beats most of it.
                    page["score"] = min(page["score"], floor * 0.999) if floor else page["score"]
                    pages[document_id] = page
    best = sorted(pages.values(), key=lambda page: (-page["score"], page["path"]))[:limit]
    return [_page_result(conn, page, sections_per_page) for page in best]


def _ranked_pages(conn: sqlite3.Connection, match: str, where: str, params: list[Any]) -> dict[int, dict[str, Any]]:
    weights = ", ".join(str(weight) for weight in COLUMN_WEIGHTS)
    rows = conn.execute(
        f"SELECT s.document_id, s.id, s.level, s.headings, s.anchor, -bm25(sections_fts, {weights}) AS score,"
        " length(s.body) - length(replace(s.body, ' ', '')) + 1 AS words, d.path, d.title, d.url, s.position"
        " FROM sections_fts JOIN sections s ON s.id = sections_fts.rowid JOIN documents d ON d.id = s.document_id"
        f" WHERE sections_fts MATCH ? AND {where} ORDER BY rank LIMIT {CANDIDATE_SECTIONS}",
        [match, *params],
    ).fetchall()
    pages: dict[int, dict[str, Any]] = {}
    for document_id, section_id, level, trail, anchor, score, words, path, title, url, position in rows:
        damped = score * (0.4 + 0.6 * min(1.0, words / STUB_WORDS))
        page = pages.setdefault(
            document_id, {"path": path, "title": title, "url": url, "match": match, "sections": []}
        )
        page["sections"].append(
            {"id": section_id, "heading": trail.rpartition(" > ")[2], "anchor": anchor, "score": damped,
             "position": position}
        )
    for page in pages.values():
        page["sections"].sort(key=lambda section: (-section["score"], section["position"]))
        scores = [section["score"] for section in page["sections"]]
        page["score"] = scores[0] + OTHER_SECTION_CREDIT * sum(scores[1:4])
    return pages


def _page_result(conn: sqlite3.Connection, page: dict[str, Any], sections_per_page: int) -> dict[str, Any]:
    chosen = page["sections"][:sections_per_page]
    snippets = dict(
        conn.execute(
            f"SELECT rowid, snippet(sections_fts, 4, '**', '**', '…', {SNIPPET_TOKENS}) FROM sections_fts"
            f" WHERE sections_fts MATCH ? AND rowid IN ({', '.join('?' * len(chosen))})",
            [page["match"], *(section["id"] for section in chosen)],
        )
    )
    return {
        "path": page["path"],
        "title": page["title"],
        "url": page["url"],
        "score": round(page["score"], 4),
        "sections": [
            {
                "heading": section["heading"],
                "url": page["url"] + (f"#{section['anchor']}" if section["anchor"] else ""),
                "snippet": snippets.get(section["id"], ""),
                "score": round(section["score"], 4),
            }
            for section in chosen
        ],
    }


# --- read ------------------------------------------------------------------


def _normalized(text: str) -> str:
    return " ".join(text.split()).casefold()


def section_bounds(markdown: str, wanted: str, rendered: list[tuple[str, str | None]]) -> tuple[int, int] | None:
    """Where the heading named `wanted` starts in the Markdown, and where its section ends.

    `wanted` may be the heading as the page shows it, as the Markdown writes it, or its anchor id.
    `rendered` pairs each rendered heading with its anchor, in page order.
    """
    key = _normalized(wanted.lstrip("#"))
    headings = markdown_headings(markdown)
    for index, heading in enumerate(headings):
        shown, anchor = rendered[index] if index < len(rendered) else ("", None)
        names = {_normalized(heading.text), _normalized(shown), heading.anchor, anchor}
        if key in names:
            end = next((h.start for h in headings[index + 1 :] if h.level <= heading.level), len(markdown))
            return heading.start, end
    return None


def read_document(
    conn: sqlite3.Connection, path: str, section: str | None = None, offset: int = 0, max_chars: int = 20_000
) -> dict[str, Any]:
    check_range("offset", offset, 0)
    check_range("max_chars", max_chars, 1, 100_000)
    row = conn.execute(
        "SELECT id, path, title, url, modified, meta, markdown FROM documents WHERE path = ?", [path]
    ).fetchone()
    if row is None:
        raise InvalidArgument(
            f"No document at path {path!r} (paths are exact and case-sensitive, e.g. 'guide/install.md'); "
            "find paths with search or query_documents."
        )
    document_id, path, title, url, modified, meta, markdown = row
    if section is not None:
        rendered = conn.execute(
            "SELECT headings, anchor FROM sections WHERE document_id = ? AND level > 0 ORDER BY position",
            [document_id],
        ).fetchall()
        bounds = section_bounds(markdown, section, [(trail.rpartition(" > ")[2], a) for trail, a in rendered])
        if bounds is None:
            names = ", ".join(repr(trail.rpartition(" > ")[2]) for trail, _ in rendered) or "none"
            raise InvalidArgument(
                f"No section {section!r} in {path!r}; its headings: {names}. "
                "search returns the headings of the sections that match a query."
            )
        markdown = markdown[bounds[0] : bounds[1]]
    piece = markdown[offset : offset + max_chars]
    end = offset + len(piece)
    return {
        "path": path,
        "title": title,
        "url": url,
        "modified": rfc3339(modified),
        "meta": json.loads(meta),
        "markdown": piece,
        "next_offset": end if end < len(markdown) else None,
    }
