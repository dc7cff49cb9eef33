"""The MCP server: each tool is a thin adapter over one query function of `index`."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
from pathlib import Path
from typing import Annotated, Any, Callable

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, WithJsonSchema

from .freshness import Freshness
from .index import queries
from .index import search as ranked
from .index.filters import Filters, InvalidArgument
from .index.store import open_read_only

INSTRUCTIONS = (
    "Read-only tools over the pages of one MkDocs documentation site. Start with stats to learn the site "
    "and its indexed front matter fields; search finds the sections that answer a question; read returns "
    "a page's Markdown; count_documents, aggregate_documents, query_documents and get_recent answer "
    "questions about the pages themselves (how many, where, which tags, what changed)."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, destructive_hint=False, open_world_hint=False)

# --- Parameters shared by several tools --------------------------------------------------------

Query = Annotated[
    str,
    Field(
        description="FTS5 expression: words (all must match), \"phrases\", OR, NOT, NEAR(a b), prefix*, "
        "column filters (title: install). Blank selects all pages. Malformed syntax matches its literal words."
    ),
]
Scope = Annotated[
    str,
    Field(
        description="Where the query matches: metadata (path, title, headings, summary), body, or all. "
        "Terms must match within one section.",
        json_schema_extra={"enum": ["all", "metadata", "body"]},
    ),
]
Path_ = Annotated[str | None, Field(description="Exact, case-sensitive page path, including .md.")]
Folder = Annotated[
    str | None,
    Field(description="This folder and its descendants, case-sensitive ('guide' or 'guide/'). \"\" selects root pages only."),
]
Pattern = Annotated[
    str | None,
    Field(description="Case-sensitive glob over path: * (crosses /), ?, [a-z], [^a]. Example: 'blog/posts/*.md'."),
]
FieldFilters = Annotated[
    Any,
    WithJsonSchema(
        {
            "type": "object",
            "additionalProperties": {"type": ["string", "number", "boolean"]},
            "description": "Front matter equality, ANDed: {\"status\": \"new\", \"beta\": true}. A list field "
            "matches when one member equals the value. Fields: stats.indexed_frontmatter_fields.",
        }
    ),
]
After = Annotated[
    str | None, Field(description="Modified at or after this RFC 3339 instant with time zone (2025-03-01T00:00:00Z).")
]
Before = Annotated[str | None, Field(description="Modified strictly before this RFC 3339 instant with time zone.")]
Wait = Annotated[
    bool,
    Field(
        description="Wait for a running or queued index update (a rebuild under mkdocs serve) before answering. "
        "On timeout, answer from the current index with _meta.index_stale=true."
    ),
]
Limit = Annotated[int, Field(description="Maximum rows returned (1-1000).")]

# --- Output models (the published output schemas) ----------------------------------------------


class DocumentRow(BaseModel):
    path: str
    title: str
    folder: str = Field(description="Directory part of path; \"\" at the root.")
    url: str = Field(description="The page's address on the site.")
    modified: str = Field(description="RFC 3339, UTC.")
    summary: str
    meta: dict[str, Any] = Field(description="The page's front matter.")


class CountOutput(BaseModel):
    total: int
    index_stale: bool


class Bucket(BaseModel):
    key: str
    count: int


class AggregateOutput(BaseModel):
    total: int = Field(description="Matching pages; never capped by limit.")
    buckets: list[Bucket]
    missing: int = Field(description="Matching pages without a value in field (tag grouping).")
    truncated: bool = Field(description="More buckets existed than limit.")
    index_stale: bool


class RecentOutput(BaseModel):
    result: list[DocumentRow]


class QueryOutput(BaseModel):
    result: list[DocumentRow]
    total: int
    next_offset: int | None = Field(description="Offset of the next page of rows; null at the end.")
    index_stale: bool


class SectionHit(BaseModel):
    heading: str
    url: str = Field(description="Link to the heading on the published page.")
    snippet: str = Field(description="Matched terms marked **like this**.")
    score: float


class PageHit(BaseModel):
    path: str
    title: str
    url: str
    score: float
    sections: list[SectionHit]


class SearchOutput(BaseModel):
    result: list[PageHit]
    index_stale: bool


class ReadOutput(BaseModel):
    path: str
    title: str
    url: str
    modified: str
    meta: dict[str, Any]
    markdown: str
    next_offset: int | None = Field(description="Pass as offset to read on; null when nothing is left.")


class StatsOutput(BaseModel):
    document_count: int
    section_count: int
    folder_count: int
    indexed_frontmatter_fields: list[str]
    oldest_modified: str | None
    newest_modified: str | None
    built_at: str | None
    site_name: str
    site_url: str | None
    index_stale: bool


# --- The index, one read-only connection per thread ------------------------------------------


class IndexReader:
    """Opens the index read-only, once per worker thread, and again after the file was replaced."""

    def __init__(self, path: Path, freshness: Freshness | None = None, wait_timeout: float = 30.0) -> None:
        self.path = path
        self.freshness = freshness or Freshness()
        self.wait_timeout = wait_timeout
        self._local = threading.local()

    def connection(self) -> sqlite3.Connection:
        try:
            identity = os.stat(self.path).st_ino
        except FileNotFoundError:
            raise ToolError(f"The index {self.path} does not exist yet; build the site with the vault-mcp plugin.")
        cached = getattr(self._local, "cached", None)
        if cached is None or cached[0] != identity:
            if cached is not None:
                cached[1].close()
            self._local.cached = cached = (identity, open_read_only(self.path))
        return cached[1]

    def answer(
        self, compute: Callable[[sqlite3.Connection], dict[str, Any]], wait: bool, stale_field: bool = True
    ) -> CallToolResult:
        if wait:
            self.freshness.wait(self.wait_timeout)
        token = self.freshness.begin_read()
        try:
            data = compute(self.connection())
        except InvalidArgument as error:
            raise ToolError(str(error)) from None
        stale = self.freshness.is_stale(token)
        if stale_field:
            data["index_stale"] = stale
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(data, ensure_ascii=False))],
            structured_content=data,
            _meta={"index_stale": stale},
        )


def filters_from(
    query: str = "",
    scope: str = "all",
    path: str | None = None,
    folder: str | None = None,
    pattern: str | None = None,
    filters: Any = None,
    modified_after: str | None = None,
    modified_before: str | None = None,
) -> Filters:
    return Filters(
        query=query,
        scope=scope,
        path=path,
        folder=folder,
        pattern=pattern,
        filters={} if filters is None else filters,
        modified_after=modified_after,
        modified_before=modified_before,
    )


def create_server(index: IndexReader, name: str = "mkdocs-vault-mcp") -> MCPServer:
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    server = MCPServer(name, instructions=INSTRUCTIONS)
    # MCPServer configures the root logger; the host (MkDocs, or our CLI) owns logging.
    root.setLevel(level)
    root.handlers[:] = handlers

    tool = lambda title: server.tool(title=title, annotations=READ_ONLY, structured_output=True)  # noqa: E731

    @tool("Count pages")
    def count_documents(
        query: Query = "",
        scope: Scope = "all",
        path: Path_ = None,
        folder: Folder = None,
        pattern: Pattern = None,
        filters: FieldFilters = None,
        modified_after: After = None,
        modified_before: Before = None,
        wait_for_pending_writes: Wait = False,
    ) -> Annotated[CallToolResult, CountOutput]:
        """Count the pages that match all given filters, without fetching them.

        Use it for "how many" questions; the total is exact, counts each page once and ignores any result cap.
        For counts per folder, tag or month in one call use aggregate_documents; to list the pages use
        query_documents; to find the text that answers a question use search.
        """
        given = filters_from(query, scope, path, folder, pattern, filters, modified_after, modified_before)
        return index.answer(lambda conn: {"total": queries.count_documents(conn, given)}, wait_for_pending_writes)

    @tool("Group pages by folder, tag or month")
    def aggregate_documents(
        by: Annotated[
            str,
            Field(
                description="folder (the page's own folder), tag (values of field) or month (UTC YYYY-MM of modified).",
                json_schema_extra={"enum": ["folder", "tag", "month"]},
            ),
        ],
        field: Annotated[
            str, Field(description="Indexed front matter field for by=tag (see stats); ignored otherwise.")
        ] = "tags",
        limit: Annotated[int, Field(description="Maximum buckets returned, 1-1000; never caps total.")] = 100,
        query: Query = "",
        scope: Scope = "all",
        path: Path_ = None,
        folder: Folder = None,
        pattern: Pattern = None,
        filters: FieldFilters = None,
        modified_after: After = None,
        modified_before: Before = None,
        wait_for_pending_writes: Wait = False,
    ) -> Annotated[CallToolResult, AggregateOutput]:
        """Group the matching pages into count-ranked buckets by folder, tag value or UTC month of modification.

        Use it for distributions ("pages per folder", "most used tags", "changes per month") instead of
        calling count_documents once per value; use query_documents to see the pages behind a bucket.
        total counts every matching page. A page with several tag values counts in each bucket, so bucket
        counts can sum above total; pages without a value count in missing. Buckets are ordered by count
        descending, then key.casefold(), then key; truncated says more buckets existed than limit.
        """
        given = filters_from(query, scope, path, folder, pattern, filters, modified_after, modified_before)
        return index.answer(
            lambda conn: queries.aggregate_documents(conn, by, given, field=field, limit=limit),
            wait_for_pending_writes,
        )

    @tool("Recently modified pages")
    def get_recent(
        limit: Annotated[int, Field(description="Maximum pages returned, 1-1000.")] = 20,
        folder: Folder = None,
        wait_for_pending_writes: Wait = False,
    ) -> Annotated[CallToolResult, RecentOutput]:
        """List the most recently modified pages, newest first (ties by path), without a search query.

        Use it to see what changed lately or to resume work on recent pages. Modification time comes from git
        history or the file (or a front matter date when the site configures one). For date ranges, other
        filters or paging use query_documents with sort=modified.
        """
        return index.answer(
            lambda conn: {"result": queries.get_recent(conn, limit=limit, folder=folder)},
            wait_for_pending_writes,
            stale_field=False,
        )

    @tool("List pages")
    def query_documents(
        query: Query = "",
        scope: Scope = "all",
        path: Path_ = None,
        folder: Folder = None,
        pattern: Pattern = None,
        filters: FieldFilters = None,
        modified_after: After = None,
        modified_before: Before = None,
        sort: Annotated[str, Field(json_schema_extra={"enum": ["path", "modified", "title"]})] = "path",
        order: Annotated[
            str | None, Field(description="asc or desc; default asc for path and title, desc for modified.")
        ] = None,
        limit: Limit = 50,
        offset: Annotated[int, Field(description="Rows to skip; pass next_offset to page on.")] = 0,
        wait_for_pending_writes: Wait = False,
    ) -> Annotated[CallToolResult, QueryOutput]:
        """List the pages that match all given filters (path, title, url, modified, summary, front matter), without text.

        Use it to enumerate pages by folder, glob, front matter or date, sorted and paged: pass next_offset
        back as offset until it is null. total is the exact number of matches. A query here only selects
        pages; to rank pages by relevance and see matching passages use search; for counts alone use
        count_documents.
        """
        given = filters_from(query, scope, path, folder, pattern, filters, modified_after, modified_before)
        return index.answer(
            lambda conn: queries.query_documents(conn, given, sort=sort, order=order, limit=limit, offset=offset),
            wait_for_pending_writes,
        )

    @tool("Search the documentation")
    def search(
        query: Annotated[
            str,
            Field(
                description="Keywords, a plain question, a code name (status.HTTP_201_CREATED) or an FTS5 "
                "expression (\"phrase\", OR, NOT, NEAR, prefix*, title: column filter)."
            ),
        ],
        scope: Scope = "all",
        limit: Annotated[int, Field(description="Maximum pages returned, 1-100.")] = 10,
        sections_per_page: Annotated[int, Field(description="Best sections shown per page, 1-10.")] = 2,
        path: Path_ = None,
        folder: Folder = None,
        pattern: Pattern = None,
        filters: FieldFilters = None,
        modified_after: After = None,
        modified_before: Before = None,
        wait_for_pending_writes: Wait = False,
    ) -> Annotated[CallToolResult, SearchOutput]:
        """Find the pages and sections that answer a question, best first, with marked snippets and heading links.

        Use it to look something up. Each page appears once with its best sections; pass a result's path (and
        a section heading) to read for the full text. When not every word matches, pages matching most of the
        meaningful words still rank, after the full matches. Ranking is relevance, not a count: for exact
        totals use count_documents, for complete lists query_documents.
        """
        given = filters_from(query, scope, path, folder, pattern, filters, modified_after, modified_before)
        return index.answer(
            lambda conn: {
                "result": ranked.search(conn, query, given, limit=limit, sections_per_page=sections_per_page)
            },
            wait_for_pending_writes,
        )

    @tool("Read a page")
    def read(
        path: Annotated[str, Field(description="Exact page path from search, query_documents or get_recent.")],
        section: Annotated[
            str | None, Field(description="Heading text (or anchor id) of one section to read instead of the page.")
        ] = None,
        offset: Annotated[int, Field(description="Character offset to start at; pass next_offset to read on.")] = 0,
        max_chars: Annotated[int, Field(description="Maximum characters returned, 1-100000.")] = 20_000,
        wait_for_pending_writes: Wait = False,
    ) -> Annotated[CallToolResult, ReadOutput]:
        """Return a page's Markdown source with its title, URL, modification time and front matter.

        With section, return that heading and everything under it up to the next heading of the same or a
        higher level. Long text comes in pieces: call again with offset=next_offset until it is null.
        """
        return index.answer(
            lambda conn: ranked.read_document(conn, path, section=section, offset=offset, max_chars=max_chars),
            wait_for_pending_writes,
            stale_field=False,
        )

    @tool("Site statistics")
    def stats(wait_for_pending_writes: Wait = False) -> Annotated[CallToolResult, StatsOutput]:
        """Describe the index: page, section and folder counts, the front matter fields that filters and tag
        grouping accept (indexed_frontmatter_fields), the oldest and newest modification, when it was built.

        Call it first to learn which fields exist. For counts under conditions use count_documents.
        """
        return index.answer(queries.index_stats, wait_for_pending_writes)

    return server
