"""The MCP tools, one declaration each: what `tools/list` publishes and the query that answers a call.

Each tool is a module-level function from its checked arguments (`arguments.checked`) to a query over a
read-only connection, registered in `TOOLS` with its title, parameters and answer schema by `@tool`;
its docstring is its description. `mcp/server.py` serves the table. Each query is a thin adapter over one
function of `index`, typed by what that function returns (index/answer_types.py); `answer_type` is the answer
as published, from which `schemas.answer` writes the output schema.
"""

from __future__ import annotations

import inspect
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from mcp_types import Tool as PublishedTool
from mcp_types import ToolAnnotations

from .. import limits
from ..errors import InvalidArgument
from ..index.answer_types import (
    AggregateAnswer,
    Aggregation,
    Changes,
    Count,
    CountAnswer,
    DocumentPage,
    LinksAnswer,
    LinksResult,
    QueryAnswer,
    ReadAnswer,
    RecentAnswer,
    SearchAnswer,
    SearchResult,
    Stats,
    StatsAnswer,
)
from ..index.filters import split_target
from ..index.query import queries
from ..index.query.link_queries import SHOWS
from ..index.query.link_queries import links as link_query
from ..index.query.read import read_document
from ..index.query.version_changes import PageSections, section_changes
from ..index.search.answer import search_answer
from . import schemas as s
from .arguments import check_schema_words, filters_from_where, shared_filters

Query = Callable[[sqlite3.Connection], dict[str, Any]]  # what the server runs: it edits the answer it gets
Answer = TypeVar("Answer", bound=Mapping[str, Any])
Computes = Callable[[sqlite3.Connection], Answer]  # a tool's query, typed by its answer
ToolFunction = Callable[[dict[str, Any]], Computes[Mapping[str, Any]]]
# destructiveHint is left out: MCP gives it meaning only for a tool that is not read-only.
READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    input_schema: s.Schema
    argument_schema: s.Schema  # what arguments are checked against: input_schema, with the shared filters' full rules
    output_schema: s.Schema
    answer_type: type[Mapping[str, Any]]  # the TypedDict of the answer that output_schema publishes
    query: Callable[[dict[str, Any]], Query]
    reports_staleness: bool  # whether the answer has an `index_stale` field (it is always in `_meta`)
    small_answer: Callable[
        [dict[str, Any]], bool
    ]  # whether an answer to these arguments is small (`IndexReader.answer`)

    def published(self) -> PublishedTool:
        return PublishedTool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.input_schema,
            output_schema=self.output_schema,
            annotations=READ_ONLY,
        )


TOOLS: dict[str, Tool] = {}


def tool(
    title: str,
    parameters: dict[str, s.Schema],
    answer_type: type[Mapping[str, Any]],
    required: tuple[str, ...] = (),
    small_answer: Callable[[dict[str, Any]], bool] = lambda arguments: False,
    lists_required: bool = False,  # whether the output schema lists its required keys (`schemas.answer`)
) -> Callable[[ToolFunction], ToolFunction]:
    """Register the decorated function as the tool of its name, described by its docstring."""

    def register(function: ToolFunction) -> ToolFunction:
        # Every tool answers from any version of a site mike publishes; the tool that explains WAIT explains it.
        published = {**parameters}
        published.setdefault("version", s.VERSION_FULL if s.WAIT_FULL in parameters.values() else s.VERSION)
        input_schema = s.parameters(published, required)
        argument_schema = s.parameters({name: full_rule(name, rule) for name, rule in published.items()}, required)
        check_schema_words(function.__name__, argument_schema)
        answer = s.answer(answer_type, lists_required)
        TOOLS[function.__name__] = Tool(
            name=function.__name__,
            title=title,
            description=unwrapped(function.__doc__ or ""),
            input_schema=input_schema,
            argument_schema=argument_schema,
            output_schema=answer,
            answer_type=answer_type,
            # The server adds index_stale to the answer and takes _meta out of it: a TypedDict is a dict at run time.
            query=cast(Callable[[dict[str, Any]], Query], function),
            reports_staleness="index_stale" in answer["properties"],
            small_answer=small_answer,
        )
        return function

    return register


def full_rule(name: str, rule: s.Schema) -> s.Schema:
    """A shared filter's rule as count_documents publishes it, for the tools that publish only its type."""
    if rule is s.FILTERS.get(name):
        return s.FILTERS_EXPLAINED[name]
    return s.WAIT_FULL if rule is s.WAIT else s.VERSION_FULL if rule is s.VERSION else rule


def unwrapped(docstring: str) -> str:
    """The docstring as one line a paragraph: its line breaks are for the source, not the agent."""
    return "\n\n".join(" ".join(part.split("\n")) for part in inspect.cleandoc(docstring).split("\n\n"))


PAGE_LIMIT = s.integer("Pages returned at most.", 1, limits.ROWS)


def always(arguments: dict[str, Any]) -> bool:
    return True


def few_rows(arguments: dict[str, Any]) -> bool:
    """Few rows to build in Python from what SQL returns (which no budget check interrupts). A full-text query may
    hold the event loop for one FTS5 step longer than its share (SQLite's progress handler cannot stop FTS5 within
    a step), once: past its share, the call goes on a worker thread."""
    return bool(arguments["limit"] <= SMALL_ROWS)


SMALL_ROWS = 50


@tool(
    "Count pages",
    {**s.FILTERS_EXPLAINED, "wait_for_pending_writes": s.WAIT_FULL},
    CountAnswer,
    small_answer=always,
    lists_required=True,
)
def count_documents(arguments: dict[str, Any]) -> Computes[Count]:
    """Count the pages that match all given filters (shared with aggregate_documents, query_documents and
    search, and explained here).

    Use it for "how many": exact, each page once, no result cap. Per folder, tag or month in one call:
    aggregate_documents; which pages: query_documents; passages: search.
    """
    filters = shared_filters(arguments)
    return lambda conn: {"total": queries.count_documents(conn, filters)}


@tool(
    "Group pages",
    {
        "by": s.choice(
            'folder ("": the root), tag (values of field), month (UTC YYYY-MM of modified) or language.',
            queries.AGGREGATIONS,
        ),
        "field": s.text("Indexed front matter field for by=tag (stats); ignored otherwise.", default="tags"),
        "limit": s.integer("Most buckets returned; never caps total.", 1, limits.ROWS, 100),
        **s.FILTERS,
        "wait_for_pending_writes": s.WAIT,
    },
    AggregateAnswer,
    required=("by",),
    small_answer=few_rows,
    lists_required=True,
)
def aggregate_documents(arguments: dict[str, Any]) -> Computes[Aggregation]:
    """Count the matching pages per folder, tag value, month or language.

    Use it for a distribution in one call, not one count_documents per value; a bucket's pages:
    query_documents. total: every match, whatever limit. by=tag: a page counts once per value of field,
    so counts can sum above total; pages without one count in missing. Order: count descending,
    key.casefold(), key; truncated: more buckets than limit.
    """
    filters = shared_filters(arguments)
    by, field, limit = arguments["by"], arguments["field"], arguments["limit"]
    return lambda conn: queries.aggregate_documents(conn, by, filters, field=field, limit=limit)


@tool(
    "Recent pages",
    {
        "limit": {**PAGE_LIMIT, "default": 20},
        "folder": s.text("This folder and below."),
        "language": s.text("Language code."),
        "wait_for_pending_writes": s.WAIT,
    },
    RecentAnswer,
    small_answer=few_rows,
    lists_required=True,
)
def get_recent(arguments: dict[str, Any]) -> Computes[RecentAnswer]:
    """List the most recently modified pages, newest first, ties by path.

    Use it for what changed lately. Only folder and language narrow it: for dates, other filters or
    paging, query_documents with sort=modified. modified: last git commit, file time or a front matter
    date, in UTC.
    """
    limit, folder, language = arguments["limit"], arguments["folder"], arguments["language"]
    return lambda conn: {"result": queries.get_recent(conn, limit=limit, folder=folder, language=language)}


@tool(
    "List pages",
    {
        **s.FILTERS,
        "sort": s.choice("path and title by code point; ties by path.", tuple(queries.SORT_COLUMNS), "path"),
        "order": s.choice("Default asc, desc for modified.", ("asc", "desc")),
        "limit": {**PAGE_LIMIT, "default": 50},
        "offset": s.integer("Pages to skip; pass next_offset.", 0, default=0),
        "wait_for_pending_writes": s.WAIT,
    },
    QueryAnswer,
    small_answer=few_rows,
)
def query_documents(arguments: dict[str, Any]) -> Computes[DocumentPage]:
    """List the pages that match all given filters as rows (as get_recent's, without text), sorted and paged.

    Use it to enumerate pages. total is exact; pass next_offset as offset until it is null. query only
    selects here: to rank and see passages, search; a number alone, count_documents; per group,
    aggregate_documents.
    """
    filters = shared_filters(arguments)
    sort, order, limit, offset = arguments["sort"], arguments["order"], arguments["limit"], arguments["offset"]
    return lambda conn: queries.query_documents(conn, filters, sort=sort, order=order, limit=limit, offset=offset)


@tool(
    "Search",
    {
        "query": s.text("Keywords, a question, a code name (status.HTTP_201_CREATED) or FTS5 (see count_documents)."),
        "scope": s.FILTERS["scope"],
        "limit": s.integer("Most pages returned.", 1, limits.SEARCH_RESULTS, 10),
        "sections_per_page": s.integer("Best sections shown per page.", 1, limits.SECTIONS_PER_PAGE, 2),
        **{name: rule for name, rule in s.FILTERS.items() if name not in ("query", "scope")},
        "wait_for_pending_writes": s.WAIT,
    },
    SearchAnswer,
    required=("query",),
    small_answer=few_rows,
)
def search(arguments: dict[str, Any]) -> Computes[SearchResult]:
    """Find the pages and sections that answer a question, best first, with snippets and heading links.

    Use it to look things up, then read a result's path (and section). Each page once, by its best
    sections; pages matching every word first, then pages matching most meaningful words (ranked together
    when fewer than 10 match every word). A smaller limit gives the start of a larger one's list.
    Filters always hold. Without language, an untranslated page shows once. Capped and ranked, so never
    count results: totals count_documents, complete lists query_documents.
    """
    filters = shared_filters(arguments)
    query, limit, sections = arguments["query"], arguments["limit"], arguments["sections_per_page"]
    return lambda conn: search_answer(conn, query, filters, limit=limit, sections_per_page=sections)


@tool(
    "Read a page",
    {
        "path": s.text("Exact page path."),
        "section": s.text('A heading as search gives it, or its anchor ("": the text before the first).'),
        "view": s.choice(
            "markdown: as the reader sees it (generated API reference, snippets, macros included); outline: "
            "headings, no text; source: the Markdown file, to edit.",
            ("markdown", "outline", "source"),
            "markdown",
        ),
        "offset": s.integer("Character to start at; pass next_offset.", 0, default=0),
        "max_chars": s.integer("Most characters returned.", 1, limits.READ_CHARS, 20_000),
        "wait_for_pending_writes": s.WAIT,
    },
    ReadAnswer,
    required=("path",),
)
def read(arguments: dict[str, Any]) -> Computes[ReadAnswer]:
    """Return a page as its reader sees it, in Markdown, with title, URL, modified and front matter.

    Use it after search, query_documents or get_recent, with their path. section: that heading and all
    under it. Long text comes in pieces: call again with offset=next_offset until it is null.
    view=outline first, to choose a section.
    """
    path, section, view = arguments["path"], arguments["section"], arguments["view"]
    offset, max_chars = arguments["offset"], arguments["max_chars"]
    return lambda conn: read_document(conn, path, section=section, view=view, offset=offset, max_chars=max_chars)


@tool("Site statistics", {"wait_for_pending_writes": s.WAIT}, StatsAnswer, small_answer=always)
def stats(arguments: dict[str, Any]) -> Computes[Stats]:
    """The index: page, section and folder counts, the front matter fields that filters and
    aggregate_documents by=tag accept (indexed_frontmatter_fields), languages, oldest and newest
    modification, build time.

    Call it first. Counts under conditions: count_documents.
    """
    return queries.index_stats


@tool(
    "Links and history",
    {
        "show": s.choice("What to list", (*SHOWS, "changes")),
        "target": s.text("Page path[#anchor]"),
        "since": s.text("Older version"),
        "where": {"type": "object", "description": "query_documents' filters"},
        "limit": s.integer("Max rows", 1, limits.ROWS, 50),
        "offset": s.integer("Rows to skip", 0, default=0),
        "wait_for_pending_writes": {**s.WAIT, "description": "Wait for updates"},
    },
    LinksAnswer,
    required=("show",),
)
def links(arguments: dict[str, Any]) -> Computes[LinksResult]:
    """show: backlinks (to target), outlinks (of pages where selects), broken (page or anchor missing),
    orphans (not linked, not in nav), most_linked (by linking pages), related (like target), history (target's
    commits), changes (target's sections vs since). where selects linking pages, else listed ones. total is
    exact (related: ranked).
    """
    filters = filters_from_where(arguments["where"])
    show: str = arguments["show"]  # one of SHOWS: any of the rows
    target, limit, offset = arguments["target"], arguments["limit"], arguments["offset"]
    if show == "changes" or arguments["since"] is not None:
        return changes(arguments)
    return lambda conn: link_query(conn, show, filters, target=target, limit=limit, offset=offset)


def changes(arguments: dict[str, Any]) -> Computes[Changes]:
    """links(show="changes"): `since` is the older version's page, as the server read it from that version."""
    since, target = arguments["since"], arguments["target"]
    if arguments["show"] != "changes":
        raise InvalidArgument(f"since is taken by show='changes' only; got show={arguments['show']!r}.")
    if target is None or not isinstance(since, PageSections):
        raise InvalidArgument(
            "show='changes' needs target (a page path) and since (the version or alias to compare with, on a site "
            "mike publishes in versions)."
        )
    path, version, limit, offset = (
        split_target(target)[0],
        arguments["version"],
        arguments["limit"],
        arguments["offset"],
    )
    return lambda conn: section_changes(conn, path, version, since, limit, offset)
