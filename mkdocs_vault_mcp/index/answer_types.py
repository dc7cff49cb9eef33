"""The shape of every tool's answer and of the rows inside it, as `TypedDict`s: the one source of the answers.

The query functions of `index` return these (plain dicts at run time, so the JSON sent is unchanged), and
mcp/schemas.py writes each tool's output schema, as `tools/list` publishes it, from its answer type here; the
`Rows` and `Described` marks say what a key's schema says in words. A query returns its answer without
`index_stale`, which the server adds to the tools whose schema has it: for those, the published answer type is
the query's result type plus that key.

Typing only, importing nothing of the package. The query modules name these types for the type checker only: a
build reads its summary through them without loading this module; the server loads it for the tools' schemas.
"""

# No `from __future__ import annotations`: Python 3.11 computes `__required_keys__` from the annotations as
# written, and counts a `NotRequired` key written as a string as required.
from dataclasses import dataclass
from typing import Annotated, Any, Generic, NotRequired, TypedDict, TypeVar

# --- What the published schema says in words -------------------------------------------------------


@dataclass(frozen=True)
class Rows:
    """A list of objects published without a subschema per row (mcp/schemas.py says why): its description names
    the rows' required keys ("Objects with key, count."), then says `note`, which names any other key."""

    note: str = ""


@dataclass(frozen=True)
class Described:
    """The description of a key's schema; `{keys}` stands for the required keys of the object it holds, or of
    its rows."""

    text: str


# --- Rows ------------------------------------------------------------------------------------------


class DocumentRow(TypedDict):
    """A page as get_recent and query_documents list it."""

    path: str
    title: str
    folder: str
    url: str
    modified: str  # RFC 3339, UTC
    summary: str
    meta: dict[str, Any]  # the page's front matter
    language: str
    fallback_of: NotRequired[str]  # only on an untranslated copy: the page it repeats


class Bucket(TypedDict):
    """One group of aggregate_documents: a folder, tag value, month or language, and its pages."""

    key: str
    count: int


class SearchSection(TypedDict):
    """One of a search hit's best sections."""

    heading: str
    url: str
    snippet: str  # matched terms **marked** (keyword search), or the section's first words (by meaning)
    score: float


class SearchHit(TypedDict):
    """A page that search (or links show=related) finds, with its best sections."""

    path: str
    title: str
    url: str
    score: float
    sections: list[SearchSection]


class ReadSection(TypedDict):
    """The section that read returns, when one was asked for."""

    heading: str
    level: int
    anchor: str | None
    url: str


class OutlineEntry(TypedDict):
    """One heading of read's outline, with the characters its part adds to the page's Markdown."""

    heading: str
    level: int
    anchor: str | None
    url: str
    characters: int


class LinkRow(TypedDict):
    """A link, as links lists it for show=backlinks, outlinks and broken."""

    path: str  # the linking page
    section: str  # the heading of the section it sits in ("" before the first)
    section_url: str
    text: str
    url: str
    target: str | None  # the page it leads to (a broken link: what it names), None when external
    anchor: str | None
    broken: str | None  # None, "page" or "anchor"


class LinkedPage(TypedDict):
    """A page, as links lists it for show=orphans and most_linked."""

    path: str
    title: str
    url: str
    in_nav: bool
    linked_from: int  # how many other pages link to it


class SectionChange(TypedDict):
    """A section added, removed or changed between two versions, as links lists them for show=changes."""

    change: str  # "added", "removed" or "changed"
    heading: str  # "" for the text before the first heading
    level: int
    url: str | None  # its anchor URL in the answered version (None: removed)
    since_url: str | None  # in the version `since` names (None: added)
    lines: list[str]  # changed: the lines removed ("- ") and added ("+ "), at most CHANGED_LINES
    more_lines: int  # changed lines left out past that bound


class HistoryEntry(TypedDict):
    """One of a page's last commits, as links lists them for show=history."""

    time: str  # RFC 3339, UTC
    author: str
    subject: str


# --- What the queries return ---------------------------------------------------------------------------

Row = TypeVar("Row")


class Count(TypedDict):
    total: int


DOCUMENT_ROWS = Rows(
    "Strings but meta (front matter, an object); modified: RFC 3339 UTC; only on an untranslated copy, "
    "fallback_of: the page it repeats."
)


class Aggregation(TypedDict):
    total: int
    buckets: Annotated[list[Bucket], Rows()]
    missing: int  # by=tag: the matching pages without a value of the field
    truncated: bool


class RecentAnswer(TypedDict):
    result: Annotated[list[DocumentRow], DOCUMENT_ROWS]


class DocumentPage(TypedDict):
    """One page of query_documents' rows, with the total and where the next page starts."""

    result: Annotated[list[DocumentRow], DOCUMENT_ROWS]
    total: int
    next_offset: int | None


class SearchNotes(TypedDict):
    search: str  # which search ran: keywords or hybrid, and why keywords alone


class SearchHits(TypedDict):
    result: Annotated[
        list[SearchHit],
        Rows("sections: the best, each with heading, url, snippet (matched terms **marked**) and score."),
    ]


class SearchResult(SearchHits):
    """search's answer as the query gives it: the server moves `_meta` into the reply's own `_meta`."""

    _meta: SearchNotes


class ReadAnswer(TypedDict):
    path: str
    title: str
    url: str
    modified: str
    meta: dict[str, Any]
    section: Annotated[ReadSection | None, Described("{keys} of the section read.")]
    markdown: str
    next_offset: int | None
    outline: Annotated[list[OutlineEntry] | None, Described("view=outline: {keys} of each.")]


class Stats(TypedDict):
    document_count: int
    section_count: int
    folder_count: int
    indexed_frontmatter_fields: list[str]
    oldest_modified: str | None
    newest_modified: str | None
    built_at: str | None
    site_name: str
    site_url: str | None
    languages: list[str]


class Listing(TypedDict, Generic[Row]):
    """One page of a links listing, with the total and where the next page starts."""

    result: list[Row]
    total: int
    next_offset: int | None


class Changes(TypedDict):
    """show=changes: the page's sections that differ from the version `since`, and whether the page itself is new
    or gone."""

    result: list[SectionChange]
    total: int
    next_offset: int | None
    page: str


LinksResult = Listing[LinkRow] | Listing[LinkedPage] | Listing[HistoryEntry] | Listing[SearchHit] | Changes

# --- What the tools publish: the queries' results, with index_stale where the schema has it ---------------


class CountAnswer(Count):
    index_stale: bool


class AggregateAnswer(Aggregation):
    index_stale: bool


class QueryAnswer(DocumentPage):
    index_stale: bool


class SearchAnswer(SearchHits):
    index_stale: bool


class StatsAnswer(Stats):
    index_stale: bool


class LinksAnswer(TypedDict):
    # Written out rather than derived from Listing: a generic TypedDict's subclass keeps its type variable in
    # `get_type_hints`, which the test reads.
    result: list[LinkRow] | list[LinkedPage] | list[HistoryEntry] | list[SearchHit] | list[SectionChange]
    total: int
    next_offset: int | None
    page: NotRequired[str]  # show=changes: "new", "gone", "changed" or "unchanged" since `since`
    index_stale: bool
