"""The shape of every tool's answer and of the rows inside it, as `TypedDict`s.

The query functions of `index` return these (plain dicts at run time, so the JSON sent is unchanged), and
tests/test_answer_types.py holds each tool's answer type to the output schema that `tools/list` publishes
(mcp/schemas.py). A query returns its answer without `index_stale`, which the server adds to the tools whose
schema has it: for those, the published answer type is the query's result type plus that key.

Typing only, importing nothing of the package: the build's processes and the standalone server import the
query modules, and with them this one.
"""

# No `from __future__ import annotations`: Python 3.11 computes `__required_keys__` from the annotations as
# written, and counts a `NotRequired` key written as a string as required.
from typing import Any, Generic, NotRequired, TypedDict, TypeVar

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


class HistoryEntry(TypedDict):
    """One of a page's last commits, as links lists them for show=history."""

    time: str  # RFC 3339, UTC
    author: str
    subject: str


# --- What the queries return ---------------------------------------------------------------------------

Row = TypeVar("Row")


class Count(TypedDict):
    total: int


class Aggregation(TypedDict):
    total: int
    buckets: list[Bucket]
    missing: int  # by=tag: the matching pages without a value of the field
    truncated: bool


class RecentAnswer(TypedDict):
    result: list[DocumentRow]


class DocumentPage(TypedDict):
    """One page of query_documents' rows, with the total and where the next page starts."""

    result: list[DocumentRow]
    total: int
    next_offset: int | None


class SearchNotes(TypedDict):
    search: str  # which search ran: keywords or hybrid, and why keywords alone


class SearchHits(TypedDict):
    result: list[SearchHit]


class SearchResult(SearchHits):
    """search's answer as the query gives it: the server moves `_meta` into the reply's own `_meta`."""

    _meta: SearchNotes


class ReadAnswer(TypedDict):
    path: str
    title: str
    url: str
    modified: str
    meta: dict[str, Any]
    section: ReadSection | None
    outline: list[OutlineEntry] | None  # view=outline only
    markdown: str
    next_offset: int | None


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


LinksResult = Listing[LinkRow] | Listing[LinkedPage] | Listing[HistoryEntry] | Listing[SearchHit]

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
    result: list[LinkRow] | list[LinkedPage] | list[HistoryEntry] | list[SearchHit]
    total: int
    next_offset: int | None
    index_stale: bool
