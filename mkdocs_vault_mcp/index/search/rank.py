"""Ranking for `search`: BM25 over the index's sections, rescored, then grouped into pages.

`candidate_sections` ranks the sections of one FTS5 expression and rescores them (title and heading fit, stub
damping, exact spellings); `pages` and `page_result` group them. docs/pages/search.md explains the scoring.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, TypedDict, TypeVar

from ...limits import SEARCH_RESULTS
from .. import cjk
from ..answer_types import SearchHit
from ..filters import Compiled
from .marks import (
    BODY_MARK,
    BODY_MARK_END,
    HEADING_MARK,
    batches,
    marked_in_memory,
    marked_in_the_index,
    without_spellings_only_in_links,
)
from .plan import CODE_HINT, QueryPlan, is_stop_word

# How deep rankings are read (pages): an answer of up to 10 pages (the default limit, what the constants were set
# at) is the start of the ranking 10 pages deep; a longer one goes on with the further pages of the next (`in_tiers`).
DEPTHS = (10, 50, SEARCH_RESULTS)
FIRST_DEPTH = DEPTHS[0]
# BM25 column weights, in FTS column order: path, title, headings, summary, body.
COLUMN_WEIGHTS = (2.0, 10.0, 5.0, 1.5, 1.0)
OTHER_SECTIONS = 3  # further sections of a page that add credit
OTHER_SECTION_CREDIT = 0.1
TITLE_FIT = 1.0
HEADING_FIT = 0.5
STUB_CHARACTERS = 200  # about 30 words
STUB_FLOOR = 0.4
VERBATIM_BOOST = 2.0
SNIPPET_TOKENS = 30
CJK_SNIPPET_TOKENS = 64  # FTS5's most; a CJK character is a token, so 30 would be a dozen words
# The kept sections are marked (highlights, snippet) in memory rather than by a scan of the index's matches when
# their text is at most this many characters a match that the scan may read: tokenizing a character costs far
# less than reading a match.
CHARACTERS_PER_MATCH = 15
# Where each scope looks for an exact spelling.
VERBATIM_COLUMNS = {
    "all": ("body", "headings", "title"),
    "metadata": ("headings", "title", "path"),
    "body": ("body",),
}


class RankedSection(TypedDict):
    """A section as `candidate_sections` ranks it, before `pages` groups it with its page's others."""

    document_id: int
    position: int
    heading: str
    anchor: str | None
    path: str
    title: str
    url: str
    score: float
    snippet: str
    own_match: bool  # whether its own heading or text holds a match


class RankedPage(TypedDict):
    """A page's ranked sections, best first, and the page's score."""

    path: str
    title: str
    url: str
    sections: list[RankedSection]
    score: float
    shown: list[RankedSection]  # the sections its result may show


def candidate_sections(
    conn: sqlite3.Connection,
    match: str,
    within: str | None,
    base: Compiled,
    plan: QueryPlan,
    scope: str,
    count: int,
    per_page: int,
    first_rowid: int | None,
    matching: int,
) -> list[RankedSection]:
    """The `count` sections that BM25 ranks best for `match` (among those `within` matches, from
    `first_rowid` on), at most `per_page` of each page, rescored. `matching`: how many sections `match` holds
    where it is ranked, at most (what marking them in the index may read)."""
    scores = _best_sections(conn, match, within, base, count, per_page, first_rowid)
    if not scores:
        return []
    rows = _marked_rows(conn, match, scores, plan, scope, matching)
    return _rescored(rows, scores, plan)


def _marked_rows(
    conn: sqlite3.Connection, match: str, scores: dict[int, float], plan: QueryPlan, scope: str, matching: int
) -> list[tuple[Any, ...]]:
    """The sections of `scores`, best first, marked (search_marks.py) and with the exact spellings each holds."""
    columns = VERBATIM_COLUMNS[scope]
    verbatim = "".join(f", ({' OR '.join(f'instr(s.{column}, ?)' for column in columns)}) > 0" for _ in plan.verbatim)
    spellings_bound = [spelling for spelling in plan.verbatim for _ in columns]
    tokens = CJK_SNIPPET_TOKENS if plan.cjk else SNIPPET_TOKENS
    details = None
    if len(scores) < matching:  # else the index's scan reads no more than the kept sections
        budget = CHARACTERS_PER_MATCH * matching
        details = marked_in_memory(conn, match, sorted(scores), verbatim, spellings_bound, tokens, budget)
    if details is None:
        details = marked_in_the_index(conn, match, sorted(scores), verbatim, spellings_bound, tokens)
    order = {section_id: index for index, section_id in enumerate(scores)}
    rows = sorted(details, key=lambda row: order[row[0]])
    if "body" in columns:
        rows = without_spellings_only_in_links(conn, rows, plan.verbatim, columns)
    return rows


def _rescored(rows: list[tuple[Any, ...]], scores: dict[int, float], plan: QueryPlan) -> list[RankedSection]:
    """Each marked section with its BM25 score scaled by its length, the exact spellings it holds and how well
    its page's title and its heading fit the query."""
    wanted = max(1, len(plan.words))
    query_words = frozenset(word.casefold() for word in plan.words)
    title_fits: dict[str, float] = {}  # every section of a page has the same title
    # An exact spelling that nearly every candidate holds (a product name such as `FastAPI`) tells
    # them apart no better than its stem: weigh each spelling by the share of candidates that lack it.
    spellings = len(plan.verbatim)
    rarity = [1 - sum(row[12 + index] for row in rows) / len(rows) for index in range(spellings)] if rows else []
    sections = []
    for row in rows:
        characters, marked_title, marked_trail = row[5], row[9], row[10]
        score = -scores[row[0]]
        score *= STUB_FLOOR + (1 - STUB_FLOOR) * min(1.0, characters / STUB_CHARACTERS)
        if spellings:
            held = sum(weight for weight, hit in zip(rarity, row[12:], strict=True) if hit)
            score *= 1 + VERBATIM_BOOST * held / spellings
        if marked_title not in title_fits:
            title_fits[marked_title] = fit(marked_title, wanted, query_words)
        heading_fit = fit(last_heading(marked_trail), wanted, query_words)
        score *= 1 + TITLE_FIT * title_fits[marked_title] + HEADING_FIT * heading_fit
        sections.append(_section(row, score))
    return sections


def _section(row: tuple[Any, ...], score: float) -> RankedSection:
    _, document_id, position, heading, anchor, _, path, title, url = row[:9]
    marked_trail, snippet = row[10:12]
    return {
        "document_id": document_id,
        "position": position,
        "heading": heading,
        "anchor": anchor,
        "path": path,
        "title": title,
        "url": url,
        "score": score,
        "snippet": cjk.join(snippet.replace(BODY_MARK, "**").replace(BODY_MARK_END, "**")),
        # Whether the section's own heading or text holds a match, not only the page's title, path or
        # summary, or a heading above it (columns every section of the page shares).
        "own_match": HEADING_MARK in last_heading(marked_trail) or BODY_MARK in snippet,
    }


class _Ranking(NamedTuple):
    """What the statements that rank one expression's sections by BM25 share."""

    weights: str  # bm25()'s column weights
    after: str  # the condition on the first rowid to rank, or ""
    inside: str  # the condition that `within` matches too, or "1"
    params: list[Any]  # the expression, the first rowid, the filters' parameters, `within`


def _best_sections(
    conn: sqlite3.Connection,
    match: str,
    within: str | None,
    base: Compiled,
    count: int,
    per_page: int,
    first_rowid: int | None,
) -> dict[int, float]:
    """The `count` sections that BM25 ranks best, at most `per_page` of each page: section id -> bm25(), best
    first (FTS5's bm25() is negative).

    BM25 is read once per row in a plain scan, sorted by SQLite. With ORDER BY rank instead, FTS5 ranks the rows
    in a statement of its own, and reading their rank back counts every section of every phrase a second time
    for its IDF.
    """
    ranking = _Ranking(
        weights=", ".join(str(weight) for weight in COLUMN_WEIGHTS),
        after=" AND sections_fts.rowid >= ?" if first_rowid is not None else "",
        inside="s.id IN (SELECT rowid FROM sections_fts WHERE sections_fts MATCH ?)" if within else "1",
        params=[match, *([] if first_rowid is None else [first_rowid]), *base.params, *([within] if within else [])],
    )
    rows = count * per_page  # the best sections of all: enough unless a few pages hold most of them
    ranked = _ranked(conn, ranking, within, base, rows)
    kept = _at_most_per_page(conn, ranked, count, per_page)
    if len(kept) == count or len(ranked) < rows:
        return kept
    # A few pages hold most of the best sections (release notes): each page's best, counted by a window.
    best = conn.execute(
        "SELECT id, score FROM (SELECT id, score, row_number() OVER (PARTITION BY document_id ORDER BY score, id)"
        f" AS nth FROM (SELECT s.id AS id, s.document_id AS document_id, bm25(sections_fts, {ranking.weights}) AS"
        " score FROM sections_fts JOIN sections s ON s.id = sections_fts.rowid JOIN documents d ON d.id ="
        f" s.document_id WHERE sections_fts MATCH ?{ranking.after} AND {base.where} AND {ranking.inside}))"
        " WHERE nth <= ? ORDER BY score, id LIMIT ?",
        [*ranking.params, per_page, count],
    ).fetchall()
    return dict(best)


def _ranked(
    conn: sqlite3.Connection, ranking: _Ranking, within: str | None, base: Compiled, rows: int
) -> list[tuple[int, float]]:
    """The `rows` sections that BM25 ranks best, whatever their page: (section id, bm25())."""
    if base.where == "1":
        # No filter: the FTS5 table alone, without a lookup of each match's section and page. `+` keeps SQLite
        # from handing the list to FTS5 rowid by rowid.
        within_rows = " AND +rowid IN (SELECT rowid FROM sections_fts WHERE sections_fts MATCH ?)" if within else ""
        return conn.execute(
            f"SELECT rowid, bm25(sections_fts, {ranking.weights}) AS score FROM sections_fts"
            f" WHERE sections_fts MATCH ?{ranking.after}{within_rows} ORDER BY score, rowid LIMIT ?",
            [*ranking.params, rows],
        ).fetchall()
    return conn.execute(
        f"SELECT s.id, bm25(sections_fts, {ranking.weights}) AS score FROM sections_fts"
        " JOIN sections s ON s.id = sections_fts.rowid JOIN documents d ON d.id = s.document_id"
        f" WHERE sections_fts MATCH ?{ranking.after} AND {base.where} AND {ranking.inside}"
        " ORDER BY score, s.id LIMIT ?",
        [*ranking.params, rows],
    ).fetchall()


def _at_most_per_page(
    conn: sqlite3.Connection, ranked: list[tuple[int, float]], count: int, per_page: int
) -> dict[int, float]:
    """The first `count` of `ranked`, at most `per_page` of each page."""
    pages: dict[int, int] = {}
    for ids in batches([section_id for section_id, _ in ranked]):
        listed = ", ".join("?" * len(ids))
        pages.update(conn.execute(f"SELECT id, document_id FROM sections WHERE id IN ({listed})", ids))
    kept: dict[int, float] = {}
    seen: dict[int, int] = {}
    for section_id, score in ranked:
        page = pages[section_id]
        seen[page] = seen.get(page, 0) + 1
        if seen[page] <= per_page:
            kept[section_id] = score
            if len(kept) == count:
                break
    return kept


Ranked = TypeVar("Ranked", bound=Mapping[str, Any])


def in_tiers(rank: Callable[[int], list[Ranked]], limit: int) -> list[Ranked]:
    """The first `limit` pages of a ranking that does not depend on `limit`: `rank(depth)` ranks `depth` pages
    deep, at the DEPTHS only.

    The pages of the first depth, then those of each next depth that the ones before did not give, as far as
    `limit` needs. A depth that gives fewer pages than it could is the whole ranking: a deeper one adds nothing.
    So an answer is always the start of any longer one, and the first pages cost no more than the default limit's.
    """
    found: list[Ranked] = []
    for depth in DEPTHS:
        given = {page["path"] for page in found}
        ranked = rank(depth)
        found += [page for page in ranked if page["path"] not in given]
        if limit <= depth or len(ranked) < depth:
            break
    return found[:limit]


def depth_of(limit: int) -> int:
    """The deepest ranking `in_tiers` reads for `limit` pages."""
    return next(depth for depth in DEPTHS if limit <= depth)


def last_heading(trail: str) -> str:
    return trail.rpartition(" > ")[2]


def fit(marked: str, wanted: int, query_words: frozenset[str] = frozenset()) -> float:
    """How well a title or heading says what the query says: the Dice overlap of their meaningful words.

    `marked` holds each match between U+0001 and U+0002 (FTS5 highlight()); `wanted` counts the query's words,
    a CJK run one word (QueryPlan.words). A matched word that looks like code (`APIRoute`) counts only when the
    query spells it the same way (casefolded): the stemmer matches `APIRoute` for `APIRouter`, a different class.
    A run of CJK characters counts as one word too, matched by the share of its characters marked: a character a
    word, a native word of three characters would outweigh the code name beside it (`中间件 CORSMiddleware`).
    """
    joined, marks = _unmarked(marked)
    matched = 0.0
    total = 0
    run_length = run_marked = 0
    run_end = -1
    for unit in _fit_units().finditer(joined):
        if unit.group(1) is None:
            word = unit.group()
            if not is_stop_word(word):
                total += 1
                matched += marks[unit.start()] and (not CODE_HINT.search(word) or word.casefold() in query_words)
            continue
        # Characters that only separators divide are one run (the index stores a separator between each two).
        if run_length and joined[run_end : unit.start()].strip(cjk.SEPARATOR):
            total, matched = total + 1, matched + run_marked / run_length
            run_length = run_marked = 0
        run_length += 1
        run_marked += marks[unit.start()]
        run_end = unit.end()
    if run_length:
        total, matched = total + 1, matched + run_marked / run_length
    return 2 * min(matched, wanted) / (total + wanted) if total else 0.0


@functools.lru_cache(maxsize=4096)
def _unmarked(marked: str) -> tuple[str, list[bool]]:
    """The text of a highlight() without its marks, and whether each character was marked (kept: the same titles
    and headings are marked again by the next tier and the next query)."""
    text: list[str] = []
    marks: list[bool] = []
    inside = False
    for piece in _MARKS.split(marked):
        if piece in ("\x01", "\x02"):
            inside = piece == "\x01"
        else:
            text.append(piece)
            marks += [inside] * len(piece)
    return "".join(text), marks


_MARKS = re.compile("([\x01\x02])")


@functools.cache
def _fit_units() -> re.Pattern[str]:
    """A CJK character (group 1), or a word as the tokenizer cuts it without CJK in it; compiled when first needed,
    as index/cjk.py compiles its character class."""
    return re.compile(f"([{cjk.CJK_CHARACTERS}])|[^\\W_{cjk.CJK_CHARACTERS}]+")


def pages(sections: list[RankedSection]) -> dict[int, RankedPage]:
    """Group sections into pages: best section plus a small credit for the next few."""
    grouped: dict[int, list[RankedSection]] = {}
    for section in sections:
        grouped.setdefault(section["document_id"], []).append(section)
    pages: dict[int, RankedPage] = {}
    for document_id, own_sections in grouped.items():
        first = own_sections[0]  # every section of a page has its path, title and URL
        own_sections.sort(key=lambda section: (-section["score"], section["position"]))
        scores = [section["score"] for section in own_sections]
        # Only sections that hold a match themselves are shown; a page matched only by its title, path or summary
        # shows its opening section, which carries them.
        own = [section for section in own_sections if section["own_match"]]
        pages[document_id] = {
            "path": first["path"],
            "title": first["title"],
            "url": first["url"],
            "sections": own_sections,
            "score": scores[0] + OTHER_SECTION_CREDIT * sum(scores[1 : 1 + OTHER_SECTIONS]),
            "shown": own or [min(own_sections, key=lambda section: section["position"])],
        }
    return pages


def shown_score(score: float) -> float:
    """A score to 4 decimals, or to 4 significant digits when that would show 0: FTS5 gives a word found in more than
    half of all sections (common on a small site) an IDF of 1e-6, and a matching section never scores 0."""
    return round(score, 4) or float(f"{score:.4g}")


def page_result(page: RankedPage, sections_per_page: int) -> SearchHit:
    return {
        "path": page["path"],
        "title": page["title"],
        "url": page["url"],
        "score": shown_score(page["score"]),
        "sections": [
            {
                "heading": section["heading"],
                "url": page["url"] + (f"#{section['anchor']}" if section["anchor"] else ""),
                "snippet": section["snippet"],
                "score": shown_score(section["score"]),
            }
            for section in page["shown"][:sections_per_page]
        ],
    }
