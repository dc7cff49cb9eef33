"""Ranked search over heading sections: the `search` tool's answer (`search_answer`), its keyword ranking
(`search`), and what bounds their work.

`search_answer` runs the plan of one search: the keyword ranking, then the meaning ranking when the index has
section vectors that can be used for this query (semantic.py ranks by meaning, as one ranker among two), then
their fusion (search_plan.fuse). `plan_query` counts what the pure planning (search_plan.py) needs; `search`
tries the strict form, then the relaxed one, and `bounded` narrows an expression that matches too many sections
for BM25 to rank them all; search_rank.py ranks, rescores and groups the sections, search_marks.py marks them.
docs/pages/search.md explains the method. Every constant was set on the judged queries of bench/search_queries.json
(bench/search_quality.py); bench/search_queries_holdout.json is held out: never tune on it.
"""

from __future__ import annotations

import sqlite3

from ...errors import InvalidArgument
from ...limits import SEARCH_RESULTS, SECTIONS_PER_PAGE
from .. import cjk
from ..answer_types import SearchHit, SearchResult
from ..filters import Compiled, Filters, check_range, fts_expression, ranked_pages_filter, scoped
from . import semantic
from .counts import document_frequency, section_count
from .plan import (
    MEANING_WEIGHT,
    QueryPlan,
    WordCounts,
    common_count,
    counted_to,
    fuse,
    has_fts_syntax,
    phrase,
    query_style,
    query_terms,
    relaxed_plan,
    written_plan,
)
from .rank import OTHER_SECTIONS, RankedPage, candidate_sections, depth_of, in_tiers, page_result, pages

# The strict form (every word) ranks alone when it finds at least this many pages, else the relaxed one.
STRICT_PAGES = 10
RANKED_SECTIONS = 10_000  # sections BM25 ranks for one query, at most
# The narrower reading of an expression that matches too many sections: its words in these columns. (One
# reading only: counting the sections of each further one reads every match again.)
NARROWER_COLUMNS = "title headings"


def uses_fts_syntax(conn: sqlite3.Connection, query: str, scope: str) -> bool:
    """Whether the query is an FTS5 expression (operators, phrases, ...) that SQLite accepts."""
    written = cjk.fts_query(query.strip()).strip()
    return has_fts_syntax(query) and fts_expression(conn, query, scope) == scoped(written, scope)


def plan_query(conn: sqlite3.Connection, query: str, scope: str) -> QueryPlan:
    """The forms of `query` that `search` tries: planned by search_plan.py, with the match counts it needs."""
    if uses_fts_syntax(conn, query, scope):
        return written_plan(query, scope)
    terms = query_terms(query)
    if terms is None:
        return QueryPlan(strict=None)
    # Words in a large share of all sections (`fastapi` on the FastAPI docs) add next to nothing to BM25
    # (their IDF is near 0) but make the relaxed form rank thousands of rows: leave them out of it.
    common = common_count(section_count(conn))
    enough = counted_to(terms, common)
    words = {word: document_frequency(conn, phrase([word]), enough) for word in terms.meaningful}
    bigrams = {bigram: document_frequency(conn, bigram, common + 1) for bigram in terms.bigrams}
    return relaxed_plan(query, terms, scope, WordCounts(common, enough, words, bigrams))


def search_answer(
    conn: sqlite3.Connection, query: str, filters: Filters, limit: int = 10, sections_per_page: int = 2
) -> SearchResult:
    """The `search` tool's answer: the keyword ranking (`search`), fused with the pages nearest in meaning when
    the index has vectors and their model loads; `_meta.search` says which ran (and why keywords alone)."""
    # As deep as the fused ranking reads it; each answer below is the first `limit` of one ranking (in_tiers).
    keyword = search(conn, query, filters, limit=depth_of(limit), sections_per_page=sections_per_page)
    vectors = semantic.usable_vectors(conn)
    if isinstance(vectors, str):
        return {"result": keyword[:limit], "_meta": {"search": vectors}}
    if filters.scope != "all":
        return {"result": keyword[:limit], "_meta": {"search": f"keywords only: scope {filters.scope!r} names columns"}}
    if uses_fts_syntax(conn, query, filters.scope):
        return {"result": keyword[:limit], "_meta": {"search": "keywords only: the query is an FTS5 expression"}}
    style = query_style(query)
    if style == "code" and keyword:
        return {"result": keyword[:limit], "_meta": {"search": "keywords: a code name, found by its spelling"}}
    target = semantic.query_vector(vectors.model, query)

    def fused(depth: int) -> list[SearchHit]:
        meaning = semantic.nearest_pages(conn, vectors, target, filters, depth, sections_per_page)
        return fuse(keyword[:depth], meaning, MEANING_WEIGHT[style], depth)

    return {"result": in_tiers(fused, limit), "_meta": {"search": f"hybrid ({style})"}}


def search(
    conn: sqlite3.Connection, query: str, filters: Filters, limit: int = 10, sections_per_page: int = 2
) -> list[SearchHit]:
    """The `limit` best pages for `query`: the first `limit` of one ranking that depends on the query, the filters
    and the index alone (search_rank.in_tiers), never on `limit`."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgument("query must not be blank; give keywords, a question, a code name or an FTS5 expression.")
    check_range("limit", limit, 1, SEARCH_RESULTS)
    check_range("sections_per_page", sections_per_page, 1, SECTIONS_PER_PAGE)
    base = ranked_pages_filter(conn, filters)
    plan = plan_query(conn, query, filters.scope)
    per_page = max(sections_per_page, 1 + OTHER_SECTIONS)
    found = in_tiers(lambda depth: ranked_pages(conn, plan, base, depth, per_page), limit)
    return [page_result(page, sections_per_page) for page in found]


def ranked_pages(
    conn: sqlite3.Connection, plan: QueryPlan, base: Compiled, depth: int, per_page: int
) -> list[RankedPage]:
    """The `depth` best pages of `plan`, best first, each with up to `per_page` of its sections.

    The strict form ranks when it finds STRICT_PAGES pages or more, and the pages only the relaxed form finds
    follow its own when they are fewer than `depth`; else the relaxed form ranks.
    """
    strict, relaxed = plan.strict, plan.relaxed
    if strict is None:
        return []
    match, within, then = strict, None, None
    if relaxed is not None and relaxed != strict:
        if _page_count(conn, strict, base, STRICT_PAGES) < STRICT_PAGES:
            match = relaxed
        else:
            then = relaxed
            if plan.strict_has_extra_words:
                # Only strict matches rank, but stop words must neither score nor be marked.
                match, within = relaxed, strict
    found = _best_pages(conn, match, within, base, plan, depth, per_page)
    if then is not None and len(found) < depth:
        given = {page["path"] for page in found}
        more = _best_pages(conn, then, None, base, plan, depth, per_page)
        found += [page for page in more if page["path"] not in given][: depth - len(found)]
    return found


def _best_pages(
    conn: sqlite3.Connection,
    match: str,
    within: str | None,
    base: Compiled,
    plan: QueryPlan,
    depth: int,
    per_page: int,
) -> list[RankedPage]:
    """The `depth` pages whose sections rank best for `match` (among those `within` matches), best first."""
    count = depth * per_page  # enough sections for `depth` pages, if there are as many
    # How many matches marking the kept sections in the index would read, at most (counted again by `bounded`,
    # kept: no second count).
    matching = min(document_frequency(conn, match, RANKED_SECTIONS + 1), RANKED_SECTIONS)
    ranked, first_rowid = bounded(conn, match, count, plan)
    sections = candidate_sections(conn, ranked, within, base, plan, plan.scope, count, per_page, first_rowid, matching)
    if not sections and within is not None and (ranked, first_rowid) != (match, None):
        # On a large site the bounded reading of the relaxed form can miss every section of the strict form,
        # which found enough pages: rank the strict form itself (its stop words score) rather than find nothing.
        matching = min(document_frequency(conn, within, RANKED_SECTIONS + 1), RANKED_SECTIONS)
        ranked, first_rowid = bounded(conn, within, count)
        sections = candidate_sections(
            conn, ranked, None, base, plan, plan.scope, count, per_page, first_rowid, matching
        )
    return sorted(pages(sections).values(), key=lambda page: (-page["score"], page["path"]))[:depth]


def bounded(conn: sqlite3.Connection, match: str, enough: int, plan: QueryPlan | None = None) -> tuple[str, int | None]:
    """`match`, or a narrower reading of it, that BM25 can rank in bounded time, and the first rowid to rank
    (None: all of them).

    Above RANKED_SECTIONS matching sections, the first of these that holds at least `enough` and at most
    RANKED_SECTIONS sections: for the relaxed form, the sections holding its rarest alternatives (`rarest`);
    the sections that hold its words in their title or headings. The expression stays ANDed in whole, so that
    every word still scores and snippets still mark its words in the body. Else the RANKED_SECTIONS indexed
    last of the title and heading reading when it has more, or of `match` when it has fewer.
    """
    if document_frequency(conn, match, RANKED_SECTIONS + 1) <= RANKED_SECTIONS:
        return match, None
    if plan is not None and match == plan.relaxed and len(plan.alternatives) > 1:
        rare = rarest(conn, plan.alternatives, enough, plan.counted)
        if rare is not None:
            return f"({match}) AND ({scoped(rare, plan.scope)})", None
    narrower = f"({match}) AND ({{{NARROWER_COLUMNS}}} : ({match}))"
    # The same sections as `narrower`, read once instead of twice, unless a NOT makes the column filter
    # keep sections that the whole expression leaves out.
    counted = narrower if "NOT" in match else f"{{{NARROWER_COLUMNS}}} : ({match})"
    # Its RANKED_SECTIONS-th and next rowids, counted from the last: when both exist, it holds too many, and the
    # first says where to start (one read of its matches instead of a count and then that read).
    tail = _rowids_from_the_end(conn, counted, RANKED_SECTIONS, 2)
    if len(tail) == 2:
        return narrower, tail[0]
    if document_frequency(conn, counted, enough) >= enough:
        return narrower, None
    return match, _rowids_from_the_end(conn, match, RANKED_SECTIONS, 1)[0]


def _rowids_from_the_end(conn: sqlite3.Connection, expression: str, nth: int, count: int) -> list[int]:
    """The rowids of up to `count` matching sections from the `nth` last on, going back."""
    rows = conn.execute(
        "SELECT rowid FROM sections_fts WHERE sections_fts MATCH ? ORDER BY rowid DESC LIMIT ? OFFSET ?",
        [expression, count, nth - 1],
    )
    return [rowid for (rowid,) in rows]


def rarest(
    conn: sqlite3.Connection, alternatives: list[str], enough: int, counted: dict[str, int] | None = None
) -> str | None:
    """The rarest of the relaxed form's alternatives ORed, as many as hold at most RANKED_SECTIONS sections in
    all and at least `enough`; None when there are none such, or when that would be all of them.

    They weigh most in BM25 (the rarer a word, the higher its IDF), so the best sections of an OR of several
    words are mostly among those holding its rarest ones, as a question's best sections hold its key word.
    """
    known = counted or {}
    enough_counted = RANKED_SECTIONS + 1
    frequencies = sorted(
        (min(known[term], enough_counted) if term in known else document_frequency(conn, term, enough_counted), term)
        for term in alternatives
    )
    chosen: list[str] = []
    total = 0
    for sections, term in frequencies:
        if total + sections > RANKED_SECTIONS:
            break
        chosen.append(term)
        total += sections
    if total < enough or len(chosen) == len(alternatives):
        return None
    return " OR ".join(chosen)


def _page_count(conn: sqlite3.Connection, match: str, base: Compiled, enough: int) -> int:
    """How many pages `match` finds, counting no further than `enough`."""
    rows = conn.execute(
        "SELECT DISTINCT s.document_id FROM sections_fts JOIN sections s ON s.id = sections_fts.rowid"
        f" JOIN documents d ON d.id = s.document_id WHERE sections_fts MATCH ? AND {base.where} LIMIT ?",
        [match, *base.params, enough],
    )
    return len(rows.fetchall())
