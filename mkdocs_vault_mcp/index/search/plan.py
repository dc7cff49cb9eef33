"""Query planning for `search`, as pure functions: the text of a query becomes the FTS5 forms to try, its style
says whether the meaning side weighs in, and `fuse` joins the keyword and meaning rankings.

No SQL runs here; how many sections hold each word is counted by the caller (`search.plan_query`) and handed in
as `WordCounts`. docs/pages/search.md explains how a query is read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .. import cjk
from ..answer_types import SearchHit
from ..filters import literal_words, scoped
from ..schema import FTS_COLUMNS

COMMON_SHARE = 0.4  # a word in more than this share of all sections is left out of the relaxed form ...
COMMON_MINIMUM = 50  # ... when that is more than this many sections

STOP_WORDS = frozenset(
    """a about after all also am an and any are as at be been before being between both but by can cannot
    could did do does doing done each either for from get gets getting got had has have having how i if in
    into is it its just let me might more most must my need no not of on once one or other our out over own
    please same shall should so some such than that the their them then there these they this those through
    to too under until up use used uses using very via want was way we were what when where whether which
    while who whom whose why will with within without would yes you your""".split()
)
FTS_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})

# Fusion (reciprocal rank fusion): a page scores the sum over both rankings of weight / (RRF_K + its rank).
# Set on bench/search_queries.json (bench/semantic_quality.py); the held-out set was only scored.
RRF_K = 5
# The weight of the meaning side, by query style; the keyword side weighs 1. Keywords are the page's own words,
# which the keyword ranking finds; a question's words often are not. A code name is looked up by keywords alone
# (the meaning side changed none of the judged code queries at any weight, and costs a query embedding and a scan),
# unless they find nothing.
MEANING_WEIGHT = {"code": 0.25, "keyword": 0.25, "question": 1.0}
QUESTION_WORDS = frozenset("how what why when where which who can could should does do is are will".split())


# Operators and punctuation that FTS5 gives a meaning to; plain keywords have none of them.
_FTS_SYNTAX = re.compile(r"[\"*^:()+{}]|\b(?:AND|OR|NOT|NEAR)\b")
# A term: word characters joined by `.`, `-` or an apostrophe (identifiers, hyphenated words, "client's").
_TERM = re.compile(r"\w+(?:[.'’-]\w+)*")
# What makes a term look like code, so that its exact spelling is worth checking: `_`, `.`, or capitals
# inside a word (`TestClient`, `APIRouter`; not `HTML` or `APIs`). The tokenizer and the stemmer drop them.
CODE_HINT = re.compile(r"[_.]|[a-z][A-Z]|[A-Z]{2,}[a-z]{2}")
# Punctuation inside a query atom that marks it as code: `include_in_schema=False`, `@app.get("/items")`.
_CODE_PUNCTUATION = re.compile(r"[^\w\s.'’-]")
# A word of a code-style query (query_style): a name, or code punctuation.
_CODE = re.compile(r"[_.]\w|[a-z][A-Z]|[A-Z]{2,}[a-z]{2}|[()=@{}/]")


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


@dataclass(frozen=True)
class QueryTerms:
    """A plain-text query cut into terms, before anything is counted."""

    pieces: list[tuple[str, ...]]  # the terms, each cut into words as the tokenizer cuts it
    verbatim: list[str]  # exact spellings to look for, case-sensitive
    every_word: list[str]  # the terms' words, CJK text left out
    cjk_runs: list[str]  # the query's runs of CJK characters, once each
    meaningful: list[str]  # the words worth counting, once each (casefolded)
    bigrams: list[str]  # the phrases of the CJK runs' overlapping bigrams


@dataclass(frozen=True)
class WordCounts:
    """How many sections hold each counted word or bigram, as far as the caller counted."""

    common: int  # a word in more sections than this is left out of the relaxed form
    counted_to: int  # how far each word was counted
    words: dict[str, int]  # meaningful word -> sections holding it
    bigrams: dict[str, int]  # bigram phrase -> sections holding it, counted to common + 1


def phrase(words: list[str] | tuple[str, ...]) -> str:
    return '"' + " ".join(words) + '"'


def is_stop_word(word: str) -> bool:
    return word.casefold() in STOP_WORDS


def has_fts_syntax(query: str) -> bool:
    """Whether the query holds FTS5 operators or punctuation (SQLite decides whether it accepts them)."""
    return bool(_FTS_SYNTAX.search(query))


def written_plan(query: str, scope: str) -> QueryPlan:
    """The plan of a query in FTS5 syntax that SQLite accepts: taken exactly as written, never relaxed."""
    words = [w for w in literal_words(cjk.separate(query)) if w not in FTS_OPERATORS and w not in FTS_COLUMNS]
    # A CJK run is one word, as fit() counts it, not one a character.
    words = [w for w in words if not cjk.has_cjk(w)] + cjk.runs(query)
    meaningful = [w for w in words if not is_stop_word(w)] or words
    written = cjk.fts_query(query.strip()).strip()
    return QueryPlan(strict=scoped(written, scope), words=list(dict.fromkeys(meaningful)), scope=scope)


def query_terms(query: str) -> QueryTerms | None:
    """The terms of a plain-text query; None when it holds no word at all."""
    pieces, verbatim = _pieces(query)
    if not pieces:
        return None
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
    return QueryTerms(
        pieces=pieces,
        verbatim=verbatim,
        every_word=every_word,
        cjk_runs=cjk_runs,
        meaningful=list({word.casefold(): word for word in meaningful}.values()),
        bigrams=[bigram for run in cjk_runs for bigram in cjk.bigram_phrases(run)],
    )


def _pieces(query: str) -> tuple[list[tuple[str, ...]], list[str]]:
    """The query's terms cut into words, and the exact spellings of those that look like code."""
    pieces: list[tuple[str, ...]] = []
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
            if CODE_HINT.search(piece):
                verbatim.append(piece)
    return pieces, verbatim


def common_count(section_count: int) -> int:
    """Sections a word may be in before the relaxed form leaves it out."""
    return max(COMMON_MINIMUM, int(COMMON_SHARE * section_count))


def counted_to(terms: QueryTerms, common: int) -> int:
    """How far to count each meaningful word: one word is never left out, so whether any section holds it is
    all there is to know (a prefix when none does)."""
    return common + 1 if len(terms.meaningful) > 1 else 1


def relaxed_plan(query: str, terms: QueryTerms, scope: str, counts: WordCounts) -> QueryPlan:
    """The strict form (every term ANDed) and the relaxed one (the meaningful words ORed, common words left out)."""
    unique, frequencies, common = terms.meaningful, counts.words, counts.common
    rare = [word for word in unique if frequencies[word] <= common] or unique
    alternatives = [phrase([word]) for word in rare]
    last = unique[-1] if unique else ""
    if query.rstrip()[-1:].isalnum() and len(last) >= 3 and frequencies[last] == 0 and not terms.cjk_runs:
        alternatives[rare.index(last)] = phrase([last]) + " *"  # perhaps still being typed
    bigrams = terms.bigrams
    alternatives += [bigram for bigram in bigrams if counts.bigrams[bigram] <= common] or bigrams
    alternatives += [phrase(words) for words in terms.pieces if len(words) > 1]
    strict = " AND ".join(dict.fromkeys(phrase(words) for words in terms.pieces))
    alternatives = list(dict.fromkeys(alternatives))
    return QueryPlan(
        strict=scoped(strict, scope),
        relaxed=scoped(" OR ".join(_weighted(alternatives, terms.cjk_runs)), scope),
        strict_has_extra_words=len(rare) < len({word.casefold() for word in terms.every_word}),
        words=rare + terms.cjk_runs,  # a CJK run one word, as fit() counts a title's runs
        verbatim=list(dict.fromkeys(terms.verbatim)),
        cjk=bool(terms.cjk_runs),
        alternatives=alternatives,
        counted={phrase([word]): frequencies[word] for word in unique if frequencies[word] < counts.counted_to},
        scope=scope,
    )


def _weighted(alternatives: list[str], cjk_runs: list[str]) -> list[str]:
    """The alternatives to OR, each Latin term repeated beside CJK runs.

    BM25 adds up the phrases an expression holds, and a CJK run is one phrase per bigram besides itself: each
    Latin term is repeated as often, so that a code name weighs as much as the word beside it
    (`ミドルウェア CORSMiddleware`: once against six).
    """
    latin = [alternative for alternative in alternatives if not cjk.has_cjk(alternative)]
    if not (latin and cjk_runs):
        return alternatives
    repeats = round((len(alternatives) - len(latin)) / len(cjk_runs))
    return alternatives + latin * (repeats - 1)


def query_style(query: str) -> str:
    """code (a name with `_`, `.`, inner capitals or code punctuation; one capitalized word), question (a
    question word first, a question mark, or six words and more), or keyword."""
    words = query.split()
    if any(_CODE.search(word) for word in words) or (len(words) == 1 and words[0][:1].isupper()):
        return "code"
    if query.rstrip().endswith("?") or (words and words[0].casefold() in QUESTION_WORDS) or len(words) >= 6:
        return "question"
    return "keyword"


def fuse(keyword: list[SearchHit], meaning: list[SearchHit], weight: float, limit: int) -> list[SearchHit]:
    """Reciprocal rank fusion of two page rankings, the meaning side's weighed `weight`; a page both give keeps
    the keyword side's sections (their snippets mark the query's words)."""
    scores: dict[str, float] = {}
    pages: dict[str, SearchHit] = {}
    for side, ranking in ((1.0, keyword), (weight, meaning)):
        for rank, page in enumerate(ranking, start=1):
            scores[page["path"]] = scores.get(page["path"], 0.0) + side / (RRF_K + rank)
            pages.setdefault(page["path"], page)
    order = sorted(scores, key=lambda path: -scores[path])[:limit]
    return [{**pages[path], "score": round(scores[path], 4)} for path in order]
