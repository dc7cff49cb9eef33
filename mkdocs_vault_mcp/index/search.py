"""Ranked search over heading sections.

How `search` ranks
------------------

The index holds one FTS5 row per heading section: path, title, heading trail,
summary and body, cut into words by `unicode61` and reduced to stems by the
Porter stemmer (so `tasks` finds `task`, and `Depends` finds `dependencies`).

1. Reading the query. A query that uses FTS5 syntax (`"phrase"`, `OR`, `NOT`,
   `NEAR(...)`, `prefix*`, `title:` column filters, parentheses) and that SQLite
   accepts is taken exactly as written, and never relaxed: its operators say
   what to leave out. Any other query is plain text: keywords, a question, or
   code. Plain text is cut into terms at spaces and at code punctuation
   (`( ) = , : { } / @` and quotes), keeping identifiers and hyphenated words
   whole: `@app.exception_handler(RequestValidationError)` gives the terms
   `app.exception_handler` and `RequestValidationError`. A term of several words
   (`include_in_schema`, `server-sent`, `status.HTTP_201_CREATED`) is a phrase:
   those words, adjacent, in that order. A query with no word at all finds nothing.
   Chinese, Japanese and Korean text is indexed one character a token (index/cjk.py):
   a CJK run in the query is the phrase of its characters, so `跨域` finds exactly
   that text inside a sentence; the relaxed form (3.) uses its overlapping bigrams.
   A run weighs as one word, as a Latin word does: in the relaxed form each Latin
   term beside a run is repeated as often as the run has phrases (BM25 adds them
   up), and the fit (4.) counts a run once. Beside CJK text, a capitalized Latin
   word is a code name (`依赖项 Depends`): its exact spelling is checked (4.).
2. Strict first. The strict form is every term ANDed, within one section; for
   plain keywords that is exactly how FTS5 reads them. When it finds at least
   as many pages as asked for, only those pages rank.
3. Relaxed when short. Otherwise the query is relaxed to its meaningful words,
   ORed. Left out: stop words and question words (`how`, `do`, `I`, `the`, ...),
   so they cannot sink a question; one-letter words; and words found in more
   than 40% of all sections (`fastapi` on the FastAPI docs), which BM25 weighs
   at a tenth or less of a word found in 1% of them, but which would make the
   relaxed form rank most rows of the index. Each multi-word term also counts
   as a phrase of its own, so a section holding `include_in_schema` outscores
   one with `include`, `in` and `schema` apart. A last word found in no section
   is read as a prefix (`websock` finds `websockets`): the query may still be
   being typed. When the strict form alone ranks but requires words the relaxed
   form leaves out, the relaxed form scores its pages, so stop words neither
   score nor get marked.
   Pages matching every word get no tier of their own: BM25 already adds up the
   words a section matches, and on the judged queries a tier for "every
   meaningful word in one section" lost more than it won (MRR@10 for questions
   0.83 against 0.90): a page that happens to hold an incidental word
   (`read`, `custom`) in the same section as the key one beats the page about
   the key word.
4. Sections score by BM25 with column weights (title 10, headings 5, path 2,
   summary 1.5, body 1), then:
   - Title and heading fit: BM25 saturates, so a word in a long title counts
     about as much as in a title that is nothing but that word. The section is
     scaled by 1 + fit(page title) + 0.5 x fit(its own heading), where fit is the
     Dice overlap of the meaningful words of the title or heading and of the
     query: 1 when they say the same thing, 0 when they share nothing. This is
     what lifts `Dependencies` above `Advanced Dependencies` for `Depends`.
   - Stubs: a section shorter than about 30 words (200 characters: a heading
     over one sentence, an empty parent heading) is damped, to as little as 40%,
     since BM25's length normalization would put it above the section that
     explains the topic.
   - Code: where a term looks like code (`_` or `.` inside, or capitals inside
     a word: `include_in_schema`, `APIRouter`), or an atom holds code
     punctuation (`include_in_schema=False`), or the whole query is one
     capitalized word (`Depends`), its exact spelling is looked up,
     case-sensitively, in the section's text. A section holding it scores up to
     3 times as much; each spelling counts in proportion to the share of the
     candidate sections that lack it, so a name that nearly every section holds
     (`FastAPI` on the FastAPI docs) changes nothing. A spelling that a section
     holds only inside the text of its links is not held: a link names the page
     it points to (`使用 CORSMiddleware 处理 CORS` on the page about other
     middleware), not the section's own topic. In a title or heading, a
     code-like word that matched only through its stem (`APIRoute` for the
     query `APIRouter`) does not count toward the fit. This tells `Depends`
     from `dependencies` and `APIRouter` from `APIRoute`, which the stemmer merges.
5. Pages. A page scores by its best section plus 10% of each of its next three
   matching sections, appears once, and shows its best `sections_per_page`
   sections that hold a match in their own heading or text: every section's row
   also holds the page's path, title and summary and the headings above it, and
   a section matched through those alone is not shown (a page matched only
   through them shows its opening section). A score that would show as 0 (FTS5
   gives a word in over half of all sections an IDF of 1e-6) is shown to 4
   significant digits. The adjustments above re-rank the sections that BM25 ranks best,
   at most 4 (or `sections_per_page`) of any one page, so that a page with
   hundreds of matching sections (release notes) cannot crowd the others out:
   40 of them, or 4 (or `sections_per_page`) per page asked for when that is more.
6. Bounded work on large sites. FTS5 computes BM25 for every section an
   expression matches before it can hand over the best (a few microseconds
   each): a word in most sections of a 100,000-page site (`md` in every path,
   `fastapi` on every page of FastAPI's docs) would take seconds. When the
   expression matches more than 10,000 sections, only some of them are ranked,
   the first of these that are at least 40 and at most 10,000: for the relaxed
   form, the sections holding its rarest alternatives, as many as fit (the
   words with the highest IDF, which a question's best sections hold); the
   sections holding the words in their title or headings (where the column
   weights put the best matches anyway); else the 10,000 indexed last of
   those, when they are more, or of all its sections, when they are fewer. A
   site of fewer than 10,000 sections is never narrowed. (FTS5's BM25 also
   counts, once a statement, every section that holds each word: about 0.05 µs
   a section, which no bound removes. So BM25 is read once per section in a
   plain scan: ORDER BY rank would count them twice, once to sort and once to
   read the rank back.) The counts that the relaxed form's cut-off and the
   bound make (how many sections hold a word: up to 40% of all sections, ~15
   ms for a common word at 100,000 pages) are kept in memory for the index
   version they were made on (its commit time and section count): a word is
   counted once per commit, not once per query.
7. Snippets are FTS5 snippets of the section text, at most 30 tokens, with the
   meaningful query words marked `**like this**`. A section's URL is the page
   URL plus `#` and the id that the rendered page gives its heading.

Every constant here was set on the judged queries of bench/search_queries.json
(bench/search_quality.py); each one changes a few of them at most. bench/search_queries_holdout.json is
held out: never tune on it.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import sqlite3
import threading
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidArgument
from ..limits import SEARCH_RESULTS, SECTIONS_PER_PAGE
from . import cjk
from .filters import (
    Compiled,
    Filters,
    check_range,
    compile_filters,
    fts_expression,
    literal_words,
    scoped,
)
from .schema import FTS_COLUMNS, TOKENIZER, KeptPerVersion, index_version

# BM25 column weights, in FTS column order: path, title, headings, summary, body.
COLUMN_WEIGHTS = (2.0, 10.0, 5.0, 1.5, 1.0)
CANDIDATE_SECTIONS = 40  # sections scored before pages are formed, at least
OTHER_SECTIONS = 3  # further sections of a page that add credit
OTHER_SECTION_CREDIT = 0.1
TITLE_FIT = 1.0
HEADING_FIT = 0.5
STUB_CHARACTERS = 200  # about 30 words
STUB_FLOOR = 0.4
VERBATIM_BOOST = 2.0
SNIPPET_TOKENS = 30
CJK_SNIPPET_TOKENS = 64  # FTS5's most; a CJK character is a token, so 30 would be a dozen words
COMMON_SHARE = 0.4  # a word in more than this share of all sections is left out of the relaxed form ...
COMMON_MINIMUM = 50  # ... when that is more than this many sections
RANKED_SECTIONS = 10_000  # sections BM25 ranks for one query, at most (about 3 µs each)
# The kept sections are marked (highlights, snippet) in memory rather than by a scan of the index's matches when
# their text is at most this many characters a match that the scan may read: tokenizing costs about 0.1 µs a
# character, the scan about 1.5 µs a match.
CHARACTERS_PER_MATCH = 15
# The narrower reading of an expression that matches too many sections: its words in these columns. (One
# reading only: counting the sections of each further one reads every match again, ~10 ms at 100,000 pages.)
NARROWER_COLUMNS = "title headings"

STOP_WORDS = frozenset(
    """a about after all also am an and any are as at be been before being between both but by can cannot
    could did do does doing done each either for from get gets getting got had has have having how i if in
    into is it its just let me might more most must my need no not of on once one or other our out over own
    please same shall should so some such than that the their them then there these they this those through
    to too under until up use used uses using very via want was way we were what when where whether which
    while who whom whose why will with within without would yes you your""".split()
)
FTS_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})

# Operators and punctuation that FTS5 gives a meaning to; plain keywords have none of them.
_FTS_SYNTAX = re.compile(r"[\"*^:()+{}]|\b(?:AND|OR|NOT|NEAR)\b")
# A term: word characters joined by `.`, `-` or an apostrophe (identifiers, hyphenated words, "client's").
_TERM = re.compile(r"\w+(?:[.'’-]\w+)*")
# What makes a term look like code, so that its exact spelling is worth checking: `_`, `.`, or capitals
# inside a word (`TestClient`, `APIRouter`; not `HTML` or `APIs`). The tokenizer and the stemmer drop them.
_CODE_HINT = re.compile(r"[_.]|[a-z][A-Z]|[A-Z]{2,}[a-z]{2}")
# Punctuation inside a query atom that marks it as code: `include_in_schema=False`, `@app.get("/items")`.
_CODE_PUNCTUATION = re.compile(r"[^\w\s.'’-]")
# Where each scope looks for an exact spelling.
_VERBATIM_COLUMNS = {
    "all": ("body", "headings", "title"),
    "metadata": ("headings", "title", "path"),
    "body": ("body",),
}


@dataclass
class QueryPlan:
    """The forms of one query that `search` tries, and what it scores sections with."""

    strict: str | None  # FTS5 expression tried first; None: the query has no words
    relaxed: str | None = None  # meaningful words and phrases ORed; None: never relaxed
    # Whether the strict form requires words (stop words, common words) that should neither score nor be marked.
    strict_has_extra_words: bool = False
    words: list[str] = field(default_factory=list)  # the meaningful words
    verbatim: list[str] = field(default_factory=list)  # exact spellings to look for, case-sensitive
    cjk: bool = False  # whether the query holds CJK text (one token a character: longer snippets)
    alternatives: list[str] = field(default_factory=list)  # what the relaxed form ORs, unscoped
    counted: dict[str, int] = field(default_factory=dict)  # sections holding some of them, as far as counted
    scope: str = "all"


def phrase(words: list[str] | tuple[str, ...]) -> str:
    return '"' + " ".join(words) + '"'


def is_stop_word(word: str) -> bool:
    return word.casefold() in STOP_WORDS


def uses_fts_syntax(conn: sqlite3.Connection, query: str, scope: str) -> bool:
    """Whether the query is an FTS5 expression (operators, phrases, ...) that SQLite accepts."""
    written = cjk.fts_query(query.strip()).strip()
    return bool(_FTS_SYNTAX.search(query)) and fts_expression(conn, query, scope) == scoped(written, scope)


def plan_query(conn: sqlite3.Connection, query: str, scope: str) -> QueryPlan:
    if uses_fts_syntax(conn, query, scope):
        words = [w for w in literal_words(cjk.separate(query)) if w not in FTS_OPERATORS and w not in FTS_COLUMNS]
        # A CJK run is one word, as fit() counts it, not one a character.
        words = [w for w in words if not cjk.has_cjk(w)] + cjk.runs(query)
        meaningful = [w for w in words if not is_stop_word(w)] or words
        written = cjk.fts_query(query.strip()).strip()
        return QueryPlan(strict=scoped(written, scope), words=list(dict.fromkeys(meaningful)))

    pieces: list[tuple[str, ...]] = []  # the terms, each cut into words as the tokenizer cuts it
    verbatim: list[str] = []
    for atom in query.split():
        found = _TERM.findall(atom)
        code = atom.strip("?!.,;")
        if len(found) > 1 and _CODE_PUNCTUATION.search(code):
            verbatim.append(code)
        for piece in found:
            # A CJK run is a phrase of its characters, as the index stores them (index/cjk.py).
            piece_words = tuple(literal_words(cjk.separate(piece)))
            if not piece_words:
                continue
            pieces.append(piece_words)
            if _CODE_HINT.search(piece):
                verbatim.append(piece)
    if not pieces:
        return QueryPlan(strict=None)
    if len(pieces) == 1 and not verbatim and query.strip()[:1].isupper():
        verbatim.append(query.strip())  # one capitalized word, alone: a class or function name (`Depends`)
    if cjk.has_cjk(query):
        # Beside CJK text, which has no capitals, a capitalized Latin word is a name too (`依赖项 Depends`).
        latin = [piece for piece in _TERM.findall(query) if not cjk.has_cjk(piece)]
        verbatim += [piece for piece in latin if piece[:1].isupper() and piece not in verbatim]

    # CJK characters are tokens of one character each: the relaxed form uses their bigrams instead.
    every_word = [word for words in pieces for word in words if not cjk.has_cjk(word)]
    cjk_runs = list(dict.fromkeys(cjk.runs(query)))
    meaningful = [word for word in every_word if not is_stop_word(word)] or every_word
    meaningful = [word for word in meaningful if len(word) > 1] or meaningful
    unique = list({word.casefold(): word for word in meaningful}.values())
    # Words in a large share of all sections (`fastapi` on the FastAPI docs) add next to nothing to BM25
    # (their IDF is near 0) but make the relaxed form rank thousands of rows: leave them out of it.
    common = max(COMMON_MINIMUM, int(COMMON_SHARE * section_count(conn)))
    # One word is never left out: whether any section holds it is all there is to know (the prefix below),
    # and counting a common one reads ~15 ms of its matches on a 100,000-page site.
    counted = common + 1 if len(unique) > 1 else 1
    frequencies = {word: document_frequency(conn, phrase([word]), counted) for word in unique}
    rare = [word for word in unique if frequencies[word] <= common] or unique
    alternatives = [phrase([word]) for word in rare]
    last = unique[-1] if unique else ""
    if query.rstrip()[-1:].isalnum() and len(last) >= 3 and frequencies[last] == 0 and not cjk_runs:
        alternatives[rare.index(last)] = phrase([last]) + " *"  # perhaps still being typed
    bigrams = [bigram for run in cjk_runs for bigram in cjk.bigram_phrases(run)]
    alternatives += [bigram for bigram in bigrams if document_frequency(conn, bigram, common + 1) <= common] or bigrams
    alternatives += [phrase(words) for words in pieces if len(words) > 1]
    strict = " AND ".join(dict.fromkeys(phrase(words) for words in pieces))
    alternatives = list(dict.fromkeys(alternatives))
    weighted = alternatives
    latin = [alternative for alternative in alternatives if not cjk.has_cjk(alternative)]
    if latin and cjk_runs:
        # BM25 adds up the phrases an expression holds, and a CJK run is one phrase per bigram besides itself: each
        # Latin term is repeated as often, so that a code name weighs as much as the word beside it
        # (`ミドルウェア CORSMiddleware`: once against six).
        repeats = round((len(alternatives) - len(latin)) / len(cjk_runs))
        weighted = alternatives + latin * (repeats - 1)
    return QueryPlan(
        strict=scoped(strict, scope),
        relaxed=scoped(" OR ".join(weighted), scope),
        strict_has_extra_words=len(rare) < len({word.casefold() for word in every_word}),
        words=rare + cjk_runs,  # a CJK run one word, as fit() counts a title's runs
        verbatim=list(dict.fromkeys(verbatim)),
        cjk=bool(cjk_runs),
        alternatives=alternatives,
        counted={phrase([word]): frequencies[word] for word in unique if frequencies[word] < counted},
        scope=scope,
    )


def document_frequency(conn: sqlite3.Connection, expression: str, enough: int) -> int:
    """How many sections match, counting no further than `enough`.

    Counting reads every match up to `enough` (~15 ms for a word in 140,000 sections), and the same words
    recur from query to query, so each count is kept for the index version it was made on (`_counts`).
    """
    counts = _counts(conn)
    known = counts.get(expression) if counts is not None else None
    if known is not None:
        found, counted_to = known
        if found < counted_to or enough <= counted_to:  # exact, or at least `enough`
            return min(found, enough)
    found = conn.execute(
        "SELECT count(*) FROM (SELECT 1 FROM sections_fts WHERE sections_fts MATCH ? LIMIT ?)",
        [expression, enough],
    ).fetchone()[0]
    if counts is not None:
        if len(counts) >= KEPT_COUNTS:
            counts.clear()
        counts[expression] = (found, enough)
    return found


# Match counts by index version (its commit time and section count, from `info`): expression -> (sections
# found, the count it stopped at). A version is what one commit wrote, so its counts never change; a new
# commit has a new version, and the oldest versions are dropped.
KEPT_VERSIONS = 4  # e.g. `mkdocs serve`'s working index, rebuilt while a published index is served
KEPT_COUNTS = 10_000  # expressions kept per version (a few MB); past that the version starts afresh
_COUNTS_BY_VERSION: KeptPerVersion[dict[str, tuple[int, int]]] = KeptPerVersion(KEPT_VERSIONS)


def _counts(conn: sqlite3.Connection) -> dict[str, tuple[int, int]] | None:
    """The counts kept for the index version `conn` reads; None for an index that does not say its version."""
    version = index_version(conn)
    return None if version is None else _COUNTS_BY_VERSION.get(version, dict)


def forget_counts() -> None:
    """Drop every kept match count (benchmarks time searches without them)."""
    _COUNTS_BY_VERSION.clear()


def section_count(conn: sqlite3.Connection) -> int:
    """How many sections the index holds, as its last commit counted them (one lookup, whatever the site's size).

    An index written before the count was kept is counted here instead.
    """
    row = conn.execute("SELECT value FROM info WHERE key = 'section_count'").fetchone()
    if row is not None:
        return int(row[0])
    return conn.execute("SELECT count(*) FROM sections").fetchone()[0]


# --- search ------------------------------------------------------------------


def search(
    conn: sqlite3.Connection, query: str, filters: Filters, limit: int = 10, sections_per_page: int = 2
) -> list[dict[str, Any]]:
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgument(
            "query must not be blank; give keywords, a question, a code name or an FTS5 expression."
        )
    check_range("limit", limit, 1, SEARCH_RESULTS)
    check_range("sections_per_page", sections_per_page, 1, SECTIONS_PER_PAGE)
    base = compile_filters(conn, dataclasses.replace(filters, query=None))
    if filters.language is None:
        base = without_repeated_text(conn, base)
    plan = plan_query(conn, query, filters.scope)
    if plan.strict is None:
        return []
    match, within = plan.strict, None
    if plan.relaxed not in (None, plan.strict):
        if _page_count(conn, plan.strict, base, limit) < limit:
            match = plan.relaxed
        elif plan.strict_has_extra_words:
            # Only strict matches rank, but stop words must neither score nor be marked.
            match, within = plan.relaxed, plan.strict
    per_page = max(sections_per_page, 1 + OTHER_SECTIONS)
    count = max(CANDIDATE_SECTIONS, limit * per_page)  # enough for `limit` pages, if there are as many
    # How many matches marking the kept sections in the index would read, at most (counted again by `bounded`,
    # kept: no second count).
    matching = min(document_frequency(conn, match, RANKED_SECTIONS + 1), RANKED_SECTIONS)
    ranked, first_rowid = bounded(conn, match, count, plan)
    sections = _candidate_sections(
        conn, ranked, within, base, plan, filters.scope, count, per_page, first_rowid, matching
    )
    if not sections and within is not None and (ranked, first_rowid) != (match, None):
        # On a large site the bounded reading of the relaxed form can miss every section of the strict form,
        # which found enough pages: rank the strict form itself (its stop words score) rather than find nothing.
        matching = min(document_frequency(conn, within, RANKED_SECTIONS + 1), RANKED_SECTIONS)
        ranked, first_rowid = bounded(conn, within, count)
        sections = _candidate_sections(
            conn, ranked, None, base, plan, filters.scope, count, per_page, first_rowid, matching
        )
    pages = sorted(_pages(sections).values(), key=lambda page: (-page["score"], page["path"]))[:limit]
    return [_page_result(page, sections_per_page) for page in pages]


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


def without_repeated_text(conn: sqlite3.Connection, base: Compiled) -> Compiled:
    """Leave out a fallback copy (mkdocs-static-i18n) when the page it copies passes the same filters.

    A fallback copy holds the default language's text under another language's URL: without a language
    filter both would match and rank alike, showing the same text twice. The copy still answers when
    only it passes the filters (a folder of its language).
    """
    if conn.execute("SELECT 1 FROM documents WHERE fallback_of IS NOT NULL LIMIT 1").fetchone() is None:
        return base
    where = (
        f"({base.where}) AND (d.fallback_of IS NULL OR d.fallback_of NOT IN"
        f" (SELECT d.path FROM documents d WHERE {base.where}))"
    )
    return Compiled(where, [*base.params, *base.params], base.match)


def _page_count(conn: sqlite3.Connection, match: str, base: Compiled, enough: int) -> int:
    """How many pages `match` finds, counting no further than `enough`."""
    rows = conn.execute(
        "SELECT DISTINCT s.document_id FROM sections_fts JOIN sections s ON s.id = sections_fts.rowid"
        f" JOIN documents d ON d.id = s.document_id WHERE sections_fts MATCH ? AND {base.where} LIMIT ?",
        [match, *base.params, enough],
    )
    return len(rows.fetchall())


def _candidate_sections(
    conn: sqlite3.Connection,
    match: str,
    within: str | None,
    base: Compiled,
    plan: QueryPlan,
    scope: str,
    count: int,
    per_page: int,
    first_rowid: int | None = None,
    matching: int = RANKED_SECTIONS,
) -> list[dict[str, Any]]:
    """The `count` sections that BM25 ranks best for `match` (among those `within` matches, from
    `first_rowid` on), at most `per_page` of each page, rescored. `matching`: how many sections `match` holds
    where it is ranked, at most (what marking them in the index may read)."""
    scores = _best_sections(conn, match, within, base, count, per_page, first_rowid)
    if not scores:
        return []
    columns = _VERBATIM_COLUMNS[scope]
    verbatim = "".join(
        f", ({' OR '.join(f'instr(s.{column}, ?)' for column in columns)}) > 0" for _ in plan.verbatim
    )
    spellings_bound = [spelling for spelling in plan.verbatim for _ in columns]
    tokens = CJK_SNIPPET_TOKENS if plan.cjk else SNIPPET_TOKENS
    details = None
    if len(scores) < matching:  # else the index's scan reads no more than the kept sections
        budget = CHARACTERS_PER_MATCH * matching
        details = _marked_in_memory(conn, match, sorted(scores), verbatim, spellings_bound, tokens, budget)
    if details is None:
        details = _marked_in_the_index(conn, match, sorted(scores), verbatim, spellings_bound, tokens)
    order = {section_id: index for index, section_id in enumerate(scores)}
    rows = sorted(details, key=lambda row: order[row[0]])
    if "body" in columns:
        rows = _without_spellings_only_in_links(conn, rows, plan.verbatim, columns)
    wanted = max(1, len(plan.words))
    query_words = frozenset(word.casefold() for word in plan.words)
    title_fits: dict[str, float] = {}  # every section of a page has the same title
    # An exact spelling that nearly every candidate holds (a product name such as `FastAPI`) tells
    # them apart no better than its stem: weigh each spelling by the share of candidates that lack it.
    spellings = len(plan.verbatim)
    rarity = [1 - sum(row[12 + index] for row in rows) / len(rows) for index in range(spellings)] if rows else []
    sections = []
    for row in rows:
        section_id, document_id, position, heading, anchor, characters, path, title, url = row[:9]
        marked_title, marked_trail, snippet = row[9:12]
        score = -scores[section_id]
        score *= STUB_FLOOR + (1 - STUB_FLOOR) * min(1.0, characters / STUB_CHARACTERS)
        if spellings:
            held = sum(weight for weight, hit in zip(rarity, row[12:], strict=True) if hit)
            score *= 1 + VERBATIM_BOOST * held / spellings
        if marked_title not in title_fits:
            title_fits[marked_title] = fit(marked_title, wanted, query_words)
        heading_fit = fit(last_heading(marked_trail), wanted, query_words)
        score *= 1 + TITLE_FIT * title_fits[marked_title] + HEADING_FIT * heading_fit
        sections.append(
            {
                "document_id": document_id,
                "position": position,
                "heading": heading,
                "anchor": anchor,
                "path": path,
                "title": title,
                "url": url,
                "score": score,
                "snippet": cjk.join(snippet.replace(_BODY_MARK, "**").replace(_BODY_MARK_END, "**")),
                # Whether the section's own heading or text holds a match, not only the page's title, path or
                # summary, or a heading above it (columns every section of the page shares).
                "own_match": _HEADING_MARK in last_heading(marked_trail) or _BODY_MARK in snippet,
            }
        )
    return sections


def _without_spellings_only_in_links(
    conn: sqlite3.Connection, rows: list[tuple[Any, ...]], spellings: list[str], columns: tuple[str, ...]
) -> list[tuple[Any, ...]]:
    """`rows` with an exact spelling not counted as held (row[12:]) by a section whose text holds it only inside
    the text of its links: a link names the page it points to (`使用 CORSMiddleware 处理 CORS` on the page about
    other middleware), not what the section itself is about."""
    held = {row[0]: row for row in rows if any(row[12:])}
    if not held:
        return rows
    places = {(row[1], row[2]): row[0] for row in held.values()}
    link_texts: dict[int, list[str]] = {}
    for ids in _batches(sorted({document_id for document_id, _ in places})):
        for document_id, position, text in conn.execute(
            f"SELECT document_id, position, text FROM links WHERE document_id IN ({', '.join('?' * len(ids))})", ids
        ):
            section_id = places.get((document_id, position))
            if section_id is not None and text and any(spelling in text for spelling in spellings):
                link_texts.setdefault(section_id, []).append(text)
    if not link_texts:
        return rows
    fields: dict[int, tuple[str, ...]] = {}
    for ids in _batches(sorted(link_texts)):
        selected = ", ".join(f"coalesce(s.{column}, '')" for column in columns)
        for section_id, *texts in conn.execute(
            f"SELECT s.id, {selected} FROM sections s WHERE s.id IN ({', '.join('?' * len(ids))})", ids
        ):
            fields[section_id] = tuple(texts)
    changed = {}
    for section_id, texts in link_texts.items():
        row = held[section_id]
        own = dict(zip(columns, fields[section_id], strict=True))
        hits = [
            hit
            and (
                any(spelling in own[column] for column in columns if column != "body")
                or own["body"].count(spelling) > sum(text.count(spelling) for text in texts)
            )
            for spelling, hit in zip(spellings, row[12:], strict=True)
        ]
        changed[section_id] = (*row[:12], *hits)
    return [changed.get(row[0], row) for row in rows]


# How highlight() and snippet() mark matches in the kept sections: in the title and headings, and in the body (turned
# into `**` for the reader once the section's own matches are known).
_HEADING_MARK = "\x01"
_BODY_MARK, _BODY_MARK_END = "\x03", "\x04"


def _marked_in_the_index(
    conn: sqlite3.Connection, match: str, ids: list[int], verbatim: str, spellings: list[str], tokens: int
) -> list[tuple[Any, ...]]:
    """The kept sections' fields, title and heading highlights, snippet and exact spellings held, marked by
    the index's own FTS5 table.

    highlight(), snippet() and instr() load whole rows: only for the rows kept. A scan of the matches between
    the first and the last of them finds them (`+` keeps SQLite from handing the list to FTS5, which would
    start the whole expression again for each rowid: ~0.2 ms each, more on the whole than the scan).
    """
    details: list[tuple[Any, ...]] = []
    for batch in _batches(ids):
        details += conn.execute(
            "SELECT s.id, s.document_id, s.position, s.heading, s.anchor, length(s.body), d.path, d.title, d.url,"
            " highlight(sections_fts, 1, char(1), char(2)), highlight(sections_fts, 2, char(1), char(2)),"
            f" snippet(sections_fts, 4, char(3), char(4), '…', {tokens})"
            f"{verbatim} FROM sections_fts JOIN sections s ON s.id = sections_fts.rowid"
            " JOIN documents d ON d.id = s.document_id"
            " WHERE sections_fts MATCH ? AND sections_fts.rowid BETWEEN ? AND ?"
            f" AND +sections_fts.rowid IN ({', '.join('?' * len(batch))})",
            [*spellings, match, batch[0], batch[-1], *batch],
        ).fetchall()
    return details


def _marked_in_memory(
    conn: sqlite3.Connection,
    match: str,
    ids: list[int],
    verbatim: str,
    spellings: list[str],
    tokens: int,
    characters: int,
) -> list[tuple[Any, ...]] | None:
    """What `_marked_in_the_index` returns, marked by an in-memory FTS5 table that holds the kept sections
    alone; None when their text (every FTS column) is longer than `characters`, where that would not pay.

    highlight() and snippet() depend only on a row's text and the expression's phrases, so a table of the
    same columns and tokenizer marks them exactly as the index would. On a large site the index's scan between
    the first and the last kept section reads thousands of matches (~10 ms for a common word at 100,000
    pages); tokenizing the kept sections again costs about 0.1 µs a character (CHARACTERS_PER_MATCH).
    """
    rows: list[tuple[Any, ...]] = []
    for batch in _batches(ids):
        rows += conn.execute(
            "SELECT s.id, s.document_id, s.position, s.heading, s.anchor, length(s.body), d.path, d.title, d.url,"
            f" s.path, s.title, s.headings, s.summary, s.body{verbatim}"
            " FROM sections s JOIN documents d ON d.id = s.document_id"
            f" WHERE s.id IN ({', '.join('?' * len(batch))})",
            [*spellings, *batch],
        ).fetchall()
    if sum(len(text or "") for row in rows for text in row[9:14]) > characters:
        return None
    memory = _memory_table()
    memory.execute("BEGIN")
    try:
        memory.executemany(
            f"INSERT INTO sections_fts (rowid, {', '.join(FTS_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?)",
            [(row[0], *row[9:14]) for row in rows],
        )
        marks = {
            rowid: (marked_title, marked_trail, snippet)
            for rowid, marked_title, marked_trail, snippet in memory.execute(
                "SELECT rowid, highlight(sections_fts, 1, char(1), char(2)),"
                " highlight(sections_fts, 2, char(1), char(2)),"
                f" snippet(sections_fts, 4, char(3), char(4), '…', {tokens})"
                " FROM sections_fts WHERE sections_fts MATCH ?",
                [match],
            )
        }
    finally:
        memory.execute("ROLLBACK")  # the table is empty again for the next search
    if len(marks) < len(rows):  # every kept section matches; if one did not here, the index decides
        return None
    return [(*row[:9], *marks[row[0]], *row[14:]) for row in rows]


_MEMORY = threading.local()  # an SQLite connection is used by the thread that opened it


def _memory_table() -> sqlite3.Connection:
    """This thread's in-memory FTS5 table with the index's columns and tokenizer, empty."""
    memory: sqlite3.Connection | None = getattr(_MEMORY, "connection", None)
    if memory is None:
        memory = sqlite3.connect(":memory:", isolation_level=None)
        memory.execute(
            f"CREATE VIRTUAL TABLE sections_fts USING fts5({', '.join(FTS_COLUMNS)}, tokenize='{TOKENIZER}')"
        )
        _MEMORY.connection = memory
    return memory


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
    for its IDF: half of the statement's time for a common word on a large site.
    """
    weights = ", ".join(str(weight) for weight in COLUMN_WEIGHTS)
    after = " AND sections_fts.rowid >= ?" if first_rowid is not None else ""
    inside = "s.id IN (SELECT rowid FROM sections_fts WHERE sections_fts MATCH ?)" if within else "1"
    params = [match, *([first_rowid] if first_rowid is not None else []), *base.params, *([within] if within else [])]
    rows = count * per_page  # the best sections of all: enough unless a few pages hold most of them
    if base.where == "1":
        # No filter: the FTS5 table alone, without a lookup of each match's section and page (half the time
        # when `within` narrows a common expression). `+` keeps SQLite from handing the list to FTS5 rowid by
        # rowid.
        within_rows = " AND +rowid IN (SELECT rowid FROM sections_fts WHERE sections_fts MATCH ?)" if within else ""
        ranked = conn.execute(
            f"SELECT rowid, bm25(sections_fts, {weights}) AS score FROM sections_fts WHERE sections_fts MATCH ?"
            f"{after}{within_rows} ORDER BY score, rowid LIMIT ?",
            [*params, rows],
        ).fetchall()
    else:
        ranked = conn.execute(
            f"SELECT s.id, bm25(sections_fts, {weights}) AS score FROM sections_fts"
            " JOIN sections s ON s.id = sections_fts.rowid JOIN documents d ON d.id = s.document_id"
            f" WHERE sections_fts MATCH ?{after} AND {base.where} AND {inside} ORDER BY score, s.id LIMIT ?",
            [*params, rows],
        ).fetchall()
    pages: dict[int, int] = {}
    for ids in _batches([section_id for section_id, _ in ranked]):
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
                return kept
    if len(ranked) < rows:
        return kept
    # A few pages hold most of the best sections (release notes): each page's best, counted by a window.
    ranked = conn.execute(
        "SELECT id, score FROM (SELECT id, score, row_number() OVER (PARTITION BY document_id ORDER BY score, id)"
        f" AS nth FROM (SELECT s.id AS id, s.document_id AS document_id, bm25(sections_fts, {weights}) AS score"
        " FROM sections_fts JOIN sections s ON s.id = sections_fts.rowid JOIN documents d ON d.id = s.document_id"
        f" WHERE sections_fts MATCH ?{after} AND {base.where} AND {inside})) WHERE nth <= ? ORDER BY score, id"
        " LIMIT ?",
        [*params, per_page, count],
    ).fetchall()
    return dict(ranked)


def _batches(ids: list[int], size: int = 500) -> list[list[int]]:
    """`ids` in lists short enough to bind: SQLite before 3.32 takes at most 999 parameters a statement."""
    return [ids[start : start + size] for start in range(0, len(ids), size)]


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
    text: list[str] = []
    marks: list[bool] = []
    inside = False
    for character in marked:
        if character in "\x01\x02":
            inside = character == "\x01"
        else:
            text.append(character)
            marks.append(inside)
    joined = "".join(text)
    matched = 0.0
    total = 0
    run_length = run_marked = 0
    run_end = -1
    for unit in _fit_units().finditer(joined):
        if unit.group(1) is None:
            word = unit.group()
            if not is_stop_word(word):
                total += 1
                matched += marks[unit.start()] and (not _CODE_HINT.search(word) or word.casefold() in query_words)
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


@functools.cache
def _fit_units() -> re.Pattern[str]:
    """A CJK character (group 1), or a word as the tokenizer cuts it without CJK in it; compiled when first needed,
    as index/cjk.py compiles its character class."""
    return re.compile(f"([{cjk.CJK_CHARACTERS}])|[^\\W_{cjk.CJK_CHARACTERS}]+")


def _pages(sections: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Group sections into pages: best section plus a small credit for the next few."""
    pages: dict[int, dict[str, Any]] = {}
    for section in sections:
        page = pages.setdefault(
            section["document_id"],
            {"path": section["path"], "title": section["title"], "url": section["url"], "sections": []},
        )
        page["sections"].append(section)
    for page in pages.values():
        page["sections"].sort(key=lambda section: (-section["score"], section["position"]))
        scores = [section["score"] for section in page["sections"]]
        page["score"] = scores[0] + OTHER_SECTION_CREDIT * sum(scores[1 : 1 + OTHER_SECTIONS])
        # Only sections that hold a match themselves are shown; a page matched only by its title, path or summary
        # shows its opening section, which carries them. (A section not marked by _candidate_sections is shown.)
        own = [section for section in page["sections"] if section.get("own_match", True)]
        page["shown"] = own or [min(page["sections"], key=lambda section: section["position"])]
    return pages


def shown_score(score: float) -> float:
    """A score to 4 decimals, or to 4 significant digits when that would show 0: FTS5 gives a word found in more than
    half of all sections (common on a small site) an IDF of 1e-6, and a matching section never scores 0."""
    return round(score, 4) or float(f"{score:.4g}")


def _page_result(page: dict[str, Any], sections_per_page: int) -> dict[str, Any]:
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
