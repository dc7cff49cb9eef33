"""The MCP server: each tool is a thin adapter over one query function of `index`."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
import sqlite3
import threading
import time
import weakref
from pathlib import Path
from typing import Annotated, Any, Callable, Literal

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, WithJsonSchema

from . import __version__, limits
from .freshness import Freshness
from .index import queries
from .index import search as ranked
from .index.links import links as link_query
from .index.read import read_document
from .index.filters import Filters, InvalidArgument
from .index.publish import open_read_only

INSTRUCTIONS = (
    "Read-only tools over the pages of one MkDocs documentation site. Start with stats to learn the site "
    "and its indexed front matter fields; search finds the sections that answer a question; read returns "
    "a page or one of its sections as Markdown; count_documents, aggregate_documents, query_documents and get_recent answer "
    "questions about the pages themselves (how many, where, which tags, what changed); links moves through the "
    "site: backlinks, outlinks, broken links, orphan pages, most linked and related pages, a page's git history."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, destructive_hint=False, open_world_hint=False)

# --- Parameters shared by several tools --------------------------------------------------------
# A parameter without a value is `= None`, and its type is plain `str` rather than `str | None`: the
# SDK JSON-decodes a string given to any parameter not typed `str`, which would read a folder named
# `null` as no folder at all. `CheckedTool` drops explicit nulls, so pydantic never sees one.

Query = Annotated[
    str,
    Field(
        description="FTS5: words (all must match), \"phrases\", OR, NOT, NEAR(a b), prefix*, title: install. "
        "Blank: every page; malformed: its literal words."
    ),
]
Scope = Annotated[
    Literal["all", "metadata", "body"],
    Field(
        description="metadata (path, title, headings, summary), body or all; terms match within one section."
    ),
]
Path_ = Annotated[str, Field(description="Exact, case-sensitive page path (guide/install.md).")]
Folder = Annotated[
    str,
    Field(
        description="This folder and below, case-sensitive ('guide'); \"\": root pages only."
    ),
]
Pattern = Annotated[
    str, Field(description="Case-sensitive glob over path: * (crosses /), ?, [a-z] ('blog/*.md').")
]
FieldFilters = Annotated[
    Any,
    WithJsonSchema(
        {
            "type": "object",
            # anyOf rather than a list of types: some clients read only one `type`.
            "additionalProperties": {
                "anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}],
                "description": "one value; a list field matches when one member equals it",
            },
            "description": "Front matter equalities, ANDed ({\"status\": \"new\"}); a list field matches one "
            "member. Fields: stats.indexed_frontmatter_fields.",
        }
    ),
]
After = Annotated[
    str, Field(description="Modified at or after this RFC 3339 instant, with zone (2025-03-01T00:00:00Z).")
]
Before = Annotated[str, Field(description="Modified before this RFC 3339 instant, with zone.")]
Wait = Annotated[
    bool,
    Field(
        description="Wait for a pending rebuild under mkdocs serve; on timeout _meta.index_stale is true."
    ),
]
PageLimit = Annotated[int, Field(ge=1, le=limits.ROWS, description="Pages returned at most.")]
Language = Annotated[
    str,
    Field(
        description="Language code ('en'; stats.languages); a fallback copy has the language publishing it."
    ),
]


# --- Output models (the published output schemas) ----------------------------------------------


class DocumentRow(BaseModel):
    path: str
    title: str
    folder: str = Field(description="Directory part of path; \"\" at the root.")
    url: str = Field(description="The page's address on the site.")
    modified: str = Field(description="RFC 3339, UTC.")
    summary: str
    meta: dict[str, Any] = Field(description="The page's front matter.")
    language: str = Field(description="The language the page is published in.")
    fallback_of: str | None = Field(
        description="For a fallback copy (an untranslated page published in this language), the path of the "
        "default-language page it repeats; null otherwise."
    )


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


class SectionRead(BaseModel):
    heading: str
    level: int
    anchor: str | None
    url: str


class OutlineEntry(BaseModel):
    heading: str = Field(description="\"\" with level 0 for the text before the first heading.")
    level: int
    anchor: str | None
    url: str
    characters: int = Field(description="What this heading's own text adds to the page's markdown.")


class ReadOutput(BaseModel):
    path: str
    title: str
    url: str
    modified: str
    meta: dict[str, Any]
    section: SectionRead | None = Field(description="The section read, when section was given.")
    markdown: str
    next_offset: int | None = Field(description="Pass as offset to read on; null when nothing is left.")
    outline: list[OutlineEntry] | None = Field(description="With view=outline: every heading, in page order.")


class LinksOutput(BaseModel):
    result: Annotated[list, WithJsonSchema({"type": "array"})]
    total: int
    next_offset: Annotated[Any, WithJsonSchema({"type": ["integer", "null"]})]
    index_stale: bool


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
    languages: list[str] = Field(description="The languages of the site's pages, sorted.")
    index_stale: bool


# --- The index, one read-only connection per thread ------------------------------------------


READER_THREADS = 8


class IndexReader:
    """Opens the index read-only, once per worker thread, and again after the file was replaced."""

    def __init__(
        self,
        path: Path,
        freshness: Freshness | None = None,
        wait_timeout: float = 30.0,
        call_seconds: float = limits.CALL_SECONDS,
    ) -> None:
        self.path = path
        self.freshness = freshness or Freshness()
        self.wait_timeout = wait_timeout
        self.call_seconds = call_seconds
        self._local = threading.local()
        self._limiters: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # event loop -> its limiter

    def connection(self) -> sqlite3.Connection:
        try:
            identity = os.stat(self.path).st_ino
        except FileNotFoundError:
            raise ToolError(f"The index {self.path} does not exist yet; build the site with the vault-mcp plugin.")
        cached = getattr(self._local, "cached", None)
        if cached is None or cached[0] != identity:
            if cached is not None:
                cached[1].close()
            conn = open_read_only(self.path)
            # Every 10,000 SQLite steps (~0.1 ms), whether this call has used up its time.
            conn.set_progress_handler(self._out_of_time, 10_000)
            self._local.cached = cached = (identity, conn)
        return cached[1]

    def _out_of_time(self) -> bool:
        # No deadline outside a call (a connection used directly): no limit.
        return time.monotonic() > getattr(self._local, "deadline", float("inf"))

    def is_pending(self) -> bool:
        return self.freshness.pending

    async def answer(
        self, compute: Callable[[sqlite3.Connection], dict[str, Any]], wait: bool, stale_field: bool = True
    ) -> CallToolResult:
        """Run one query on a worker thread, in one read transaction, within `call_seconds` of SQL work.

        On a worker thread so that a slow call never holds the event loop, which serves every other client
        (SQLite releases the GIL while it works). In one transaction so that every statement of an answer
        (a count and its rows) reads the same snapshot of the index.
        """
        if wait and self.freshness.may_be_pending:
            await anyio.to_thread.run_sync(self.freshness.wait, self.wait_timeout)
        token = self.freshness.begin_read()
        data = await anyio.to_thread.run_sync(self._read, compute, limiter=self._reader_threads())
        stale = self.freshness.is_stale(token)
        if stale_field:
            data["index_stale"] = stale
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(data, ensure_ascii=False))],
            structured_content=data,
            _meta={"index_stale": stale},
        )

    def _reader_threads(self) -> anyio.CapacityLimiter:
        """At most READER_THREADS calls read at once (per event loop): each reading thread keeps a connection
        and its page cache, and on a few cores more threads only share the same CPUs."""
        loop = asyncio.get_running_loop()
        limiter = self._limiters.get(loop)
        if limiter is None:
            limiter = self._limiters[loop] = anyio.CapacityLimiter(READER_THREADS)
        return limiter

    def _read(self, compute: Callable[[sqlite3.Connection], dict[str, Any]]) -> dict[str, Any]:
        conn = self.connection()
        self._local.deadline = time.monotonic() + self.call_seconds
        try:
            conn.execute("BEGIN")
            try:
                return compute(conn)
            finally:
                conn.rollback()  # nothing was written: ends the read, and its snapshot
        except InvalidArgument as error:
            raise ToolError(str(error)) from None
        except sqlite3.OperationalError as error:
            if str(error) == "interrupted":
                raise ToolError(
                    f"This call needed more than {self.call_seconds:g} seconds of work, the limit per call; "
                    "narrow it (a folder, a path pattern, fewer or more specific query words)."
                ) from None
            raise ToolError(f"The index could not answer: {error}.") from None


# --- Arguments, checked against the published input schema -------------------------------------


class CheckedTool(Tool):
    """A tool whose arguments are checked against its own input schema before pydantic reads them.

    So every rejected argument gets one message that names it and says what it accepts (pydantic's
    would name its internal model and leave out the range or the choices), an argument the tool
    does not take is an error rather than silently ignored, and error results carry
    `_meta.index_stale` like the others.
    """

    is_stale: Callable[[], bool] = Field(default=lambda: False, exclude=True)

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
        try:
            return await super().run(self.checked(arguments), context, convert_result)
        except InvalidArgument as error:
            message = f"Error executing tool {self.name}: {error}"
        except UnexpectedToolError:
            raise  # a crash: the SDK logs it and tells the client no more than that it happened
        except ToolError as error:
            message = str(error)
        return CallToolResult(
            content=[TextContent(type="text", text=limits.cut(message))],
            is_error=True,
            _meta={"index_stale": self.is_stale()},
        )

    def checked(self, arguments: dict[str, Any]) -> dict[str, Any]:
        properties: dict[str, Any] = self.parameters["properties"]
        required = self.parameters.get("required", [])
        unknown = [name for name in arguments if name not in properties]
        if unknown:
            hint = ' Front matter conditions go in filters, e.g. {"tags": "api"}.' if "filters" in properties else ""
            raise InvalidArgument(
                f"unknown argument {', '.join(map(repr, unknown))}; this tool takes {', '.join(properties)}.{hint}"
            )
        checked = {}
        for name, value in arguments.items():
            if value is None and name not in required:
                continue  # null stands for "not given"
            value = decoded(value, properties[name])
            problem = violation(properties[name], value)
            if problem is not None:
                where, rule, found = problem
                note = f" ({rule['description']})" if where and "description" in rule else ""
                raise InvalidArgument(f"{name}{where} must be {accepted(rule)}{note}; got {shown(found)}.")
            limits.check_argument(name, value)
            checked[name] = value
        for name in required:
            if name not in checked:
                rule = properties[name]
                raise InvalidArgument(f"{name} is required: {rule.get('description') or accepted(rule)}")
        return checked


# The JSON schema keywords that pydantic writes for our parameter types, and all that `violation` checks;
# `create_server` refuses a parameter whose schema says more. (The jsonschema package would check any
# schema, but importing it costs more than a whole call, and every call counts when a client starts.)
SCHEMA_WORDS = {
    "type", "anyOf", "enum", "minimum", "maximum", "additionalProperties", "description", "title", "default"
}

# JSON type -> whether a Python value is of it, and how a message names it.
JSON_TYPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "string": (lambda value: isinstance(value, str), "a string"),
    "integer": (
        lambda value: (isinstance(value, int) and not isinstance(value, bool))
        or (isinstance(value, float) and value.is_integer()),
        "an integer",
    ),
    "number": (lambda value: isinstance(value, (int, float)) and not isinstance(value, bool), "a number"),
    "boolean": (lambda value: isinstance(value, bool), "a boolean"),
    "object": (lambda value: isinstance(value, dict), "an object"),
    "array": (lambda value: isinstance(value, list), "a list"),
    "null": (lambda value: value is None, "null"),
}


def json_types(rule: dict[str, Any]) -> list[str]:
    if "anyOf" in rule:
        return [kind for alternative in rule["anyOf"] for kind in json_types(alternative)]
    kinds = rule.get("type", [])
    return [kinds] if isinstance(kinds, str) else kinds


def violation(rule: dict[str, Any], value: Any, where: str = "") -> tuple[str, dict[str, Any], Any] | None:
    """Where `value` first breaks `rule`, the part of the rule it breaks there, and the value found there."""
    kinds = json_types(rule)
    if kinds and not any(JSON_TYPES[kind][0](value) for kind in kinds):
        return where, rule, value
    if "enum" in rule and not any(value == choice and type(value) is type(choice) for choice in rule["enum"]):
        return where, rule, value
    if ("minimum" in rule and value < rule["minimum"]) or ("maximum" in rule and value > rule["maximum"]):
        return where, rule, value
    members = rule.get("additionalProperties")
    if isinstance(members, dict) and isinstance(value, dict):
        for key, member in value.items():
            problem = violation(members, member, f"{where}[{json.dumps(key, ensure_ascii=False)}]")
            if problem is not None:
                return problem
    return None


def accepted(rule: dict[str, Any]) -> str:
    """What a rule accepts, in words: `an integer from 1 to 1000`, `one of "asc", "desc"`."""
    if "enum" in rule:
        return "one of " + ", ".join(json.dumps(choice) for choice in rule["enum"])
    kinds = json_types(rule)
    if kinds == ["boolean"]:
        return "true or false"
    names = [JSON_TYPES[kind][1] for kind in kinds]
    text = " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 2 else names) or "any value"
    low, high = rule.get("minimum"), rule.get("maximum")
    if low is not None:
        text += f" from {low} to {high}" if high is not None else f" of {low} or more"
    members = rule.get("additionalProperties")
    if isinstance(members, dict):
        text += f" whose values are each {accepted(members)}"
    return text


def check_schema_words(tool: Tool) -> None:
    for name, rule in tool.parameters["properties"].items():
        for part in (rule, rule.get("additionalProperties") or {}):
            unchecked = set(part) - SCHEMA_WORDS
            if unchecked:
                raise TypeError(f"{tool.name}({name}): schema keywords {sorted(unchecked)} would go unchecked")


def decoded(value: Any, rule: dict[str, Any]) -> Any:
    """A parameter that is not a string may arrive JSON-encoded in a string (some clients send `"5"`)."""
    kinds = json_types(rule)
    if not isinstance(value, str) or "string" in kinds or "enum" in rule:
        return value
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return value
    return value if isinstance(parsed, str) else parsed


def shown(value: Any, width: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def published_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as `tools/list` publishes it: every `$ref` to `$defs` replaced by its target, and without
    the `title` pydantic gives every schema and the `"default": null` of every optional parameter.

    Every agent session pays for `tools/list` in its context before its first question, and those titles
    only repeat the names. Clients that validate results against the output schema (the SDK's own client
    does) also pay for each reference lookup on every list item.
    """
    definitions = schema.get("$defs", {})

    def compact(node: Any) -> Any:
        """`node` is a schema: its keywords are compacted, and the schemas inside it."""
        if isinstance(node, list):
            return [compact(item) for item in node]
        if not isinstance(node, dict):
            return node
        reference = node.get("$ref", "")
        if reference.startswith("#/$defs/"):
            return compact(definitions[reference.removeprefix("#/$defs/")])
        compacted = {}
        for key, value in node.items():
            if key in ("$defs", "title") or (key == "default" and value is None):
                continue
            if key == "properties":
                value = {name: compact(rule) for name, rule in value.items()}
            elif key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf"):
                value = compact(value)
            compacted[key] = value
        return compacted

    return compact(schema)


WHERE_KEYS = (
    "query", "scope", "path", "folder", "pattern", "filters", "modified_after", "modified_before", "language"
)


def filters_from_where(where: Any) -> Filters:
    """The `links` tool's `where`: the shared filters in one object, checked as the other tools check them."""
    if where is None:
        return Filters()
    unknown = [key for key in where if key not in WHERE_KEYS]
    if unknown:
        raise InvalidArgument(
            f"where has unknown key {', '.join(map(repr, unknown))}; it takes {', '.join(WHERE_KEYS)}."
        )
    for key, value in where.items():
        wanted = dict if key == "filters" else str
        if value is not None and not isinstance(value, wanted):
            kind = "an object" if wanted is dict else "a string"
            raise InvalidArgument(f"where[{key!r}] must be {kind}; got {shown(value)}.")
        limits.check_argument(key, value, label=f"where[{key!r}]")
    given = {key: value for key, value in where.items() if value is not None}
    return filters_from(**{"scope": "all", **given})


def brief(text: str) -> Any:
    """The description of a `links` parameter: brief, since each tool added may cost at most 1,500 characters
    of tools/list."""
    return Field(description=text)


def filters_from(
    query: str | None = "",
    scope: str = "all",
    path: str | None = None,
    folder: str | None = None,
    pattern: str | None = None,
    filters: Any = None,
    modified_after: str | None = None,
    modified_before: str | None = None,
    language: str | None = None,
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
        language=language,
    )


# --- The tools -----------------------------------------------------------------------------------


def create_server(index: IndexReader, name: str = "mkdocs-vault-mcp") -> MCPServer:
    async def count_documents(
        query: Query = "",
        scope: Scope = "all",
        path: Path_ = None,
        folder: Folder = None,
        pattern: Pattern = None,
        filters: FieldFilters = None,
        modified_after: After = None,
        modified_before: Before = None,
        language: Language = None,
        wait_for_pending_writes: Wait = False,
    ) -> Annotated[CallToolResult, CountOutput]:
        """Count the pages that match all given filters; returns the number alone.

        Use it for "how many" questions: the total is exact, counts each page once and no result cap
        applies; with no filter it counts every page. All given filters must hold; stats lists the front
        matter fields that filters accepts. For one count per folder, tag or month in a single call use
        aggregate_documents; to see which pages match use query_documents; to find the text that answers
        a question use search.
        """
        given = filters_from(query, scope, path, folder, pattern, filters, modified_after, modified_before, language)
        return await index.answer(lambda conn: {"total": queries.count_documents(conn, given)}, wait_for_pending_writes)

    async def aggregate_documents(
        by: Annotated[
            Literal["folder", "tag", "month", "language"],
            Field(
                description="folder (each page counts in its own folder; \"\" is the root), tag (the values of "
                "field), month (UTC YYYY-MM of the modification time) or language."
            ),
        ],
        field: Annotated[
            str, Field(description="Indexed front matter field for by=tag (see stats); ignored otherwise.")
        ] = "tags",
        limit: Annotated[
            int,
            Field(ge=1, le=limits.ROWS, description=f"Maximum buckets returned, 1-{limits.ROWS}; never caps total."),
        ] = 100,
        query: Query = "",
        scope: Scope = "all",
        path: Path_ = None,
        folder: Folder = None,
        pattern: Pattern = None,
        filters: FieldFilters = None,
        modified_after: After = None,
        modified_before: Before = None,
        language: Language = None,
        wait_for_pending_writes: Wait = False,
    ) -> Annotated[CallToolResult, AggregateOutput]:
        """Group the pages that match all given filters into buckets by folder, tag value, month of
        modification or language, with a count per bucket.

        Use it for a distribution in one call ("pages per folder", "most used tags", "changes per month")
        instead of one count_documents call per value; use query_documents to list the pages of a bucket.
        total counts every matching page whatever limit is. With by=tag a page counts once per value of
        field, so counts can sum above total, and pages without a value count in missing. Buckets come by
        count descending, then key.casefold(), then key; truncated is true when more buckets existed than
        limit.
        """
        given = filters_from(query, scope, path, folder, pattern, filters, modified_after, modified_before, language)
        return await index.answer(
            lambda conn: queries.aggregate_documents(conn, by, given, field=field, limit=limit),
            wait_for_pending_writes,
        )

    async def get_recent(
        limit: PageLimit = 20,
        folder: Folder = None,
        language: Language = None,
        wait_for_pending_writes: Wait = False,
    ) -> Annotated[CallToolResult, RecentOutput]:
        """List the most recently modified pages, newest first (ties by path), with title, URL, summary and
        front matter.

        Use it to see what changed lately or to resume work on recent pages; it needs no query. Only folder
        and language narrow it: for a date range, other filters, another order or paging use query_documents with
        sort=modified. A page's modification time is its last git commit, its file time, or a front matter
        date when the site is configured so; times are in UTC.
        """
        return await index.answer(
            lambda conn: {"result": queries.get_recent(conn, limit=limit, folder=folder, language=language)},
            wait_for_pending_writes,
            stale_field=False,
        )

    async def query_documents(
        query: Query = "",
        scope: Scope = "all",
        path: Path_ = None,
        folder: Folder = None,
        pattern: Pattern = None,
        filters: FieldFilters = None,
        modified_after: After = None,
        modified_before: Before = None,
        language: Language = None,
        sort: Annotated[
            Literal["path", "modified", "title"],
            Field(description="path and title sort by code point; ties by path."),
        ] = "path",
        order: Annotated[
            Literal["asc", "desc"], Field(description="Default asc for path and title, desc for modified.")
        ] = None,
        limit: PageLimit = 50,
        offset: Annotated[int, Field(ge=0, description="Pages to skip; pass next_offset to page on.")] = 0,
        wait_for_pending_writes: Wait = False,
    ) -> Annotated[CallToolResult, QueryOutput]:
        """List the pages that match all given filters, as rows (path, title, folder, url, modified, summary,
        front matter, language) without their text, sorted and paged.

        Use it to enumerate pages by folder, path glob, front matter value or date range. total is the exact
        number of matches; pass next_offset back as offset until it is null to see them all. A query here
        only selects pages: to rank pages by relevance and see matching passages use search. For a number
        alone use count_documents, for counts per group aggregate_documents.
        """
        given = filters_from(query, scope, path, folder, pattern, filters, modified_after, modified_before, language)
        return await index.answer(
            lambda conn: queries.query_documents(conn, given, sort=sort, order=order, limit=limit, offset=offset),
            wait_for_pending_writes,
        )

    async def search(
        query: Annotated[
            str,
            Field(
                description="Keywords, a plain question, a code name (status.HTTP_201_CREATED) or an FTS5 "
                "expression (\"phrase\", OR, NOT, NEAR, prefix*, title: column filter)."
            ),
        ],
        scope: Scope = "all",
        limit: Annotated[
            int, Field(ge=1, le=limits.SEARCH_RESULTS, description=f"Maximum pages returned, 1-{limits.SEARCH_RESULTS}.")
        ] = 10,
        sections_per_page: Annotated[
            int,
            Field(
                ge=1,
                le=limits.SECTIONS_PER_PAGE,
                description=f"Best sections shown per page, 1-{limits.SECTIONS_PER_PAGE}.",
            ),
        ] = 2,
        path: Path_ = None,
        folder: Folder = None,
        pattern: Pattern = None,
        filters: FieldFilters = None,
        modified_after: After = None,
        modified_before: Before = None,
        language: Language = None,
        wait_for_pending_writes: Wait = False,
    ) -> Annotated[CallToolResult, SearchOutput]:
        """Find the pages and sections that answer a question, best first, with snippets that mark the
        matched terms and links to the headings.

        Use it to look something up. Each page appears once with its best sections; pass a result's path
        (and a section heading) to read for the full text. Ranked by relevance; when fewer than limit pages
        match every word, pages matching most of the meaningful words rank with them. Filters always hold.
        On a multilingual site, without language an untranslated page shows once, not once per language.
        Results are capped and ranked, so do not count them: for exact totals use count_documents, for
        complete lists query_documents.
        """
        given = filters_from(query, scope, path, folder, pattern, filters, modified_after, modified_before, language)
        return await index.answer(
            lambda conn: {
                "result": ranked.search(conn, query, given, limit=limit, sections_per_page=sections_per_page)
            },
            wait_for_pending_writes,
        )

    async def read(
        path: Annotated[str, Field(description="Exact page path from search, query_documents or get_recent.")],
        section: Annotated[
            str,
            Field(
                description="A heading as search returns it, or its anchor id: read that heading and everything "
                "under it instead of the page (\"\" reads the text before the first heading)."
            ),
        ] = None,
        view: Annotated[
            Literal["markdown", "outline", "source"],
            Field(
                description="markdown: the page as its reader sees it (generated API reference, snippets and "
                "macros included). outline: its headings with level, anchor, URL and size, no text. source: the "
                "Markdown file as written, for editing it."
            ),
        ] = "markdown",
        offset: Annotated[
            int, Field(ge=0, description="Character offset to start at; pass next_offset to read on.")
        ] = 0,
        max_chars: Annotated[
            int, Field(ge=1, le=limits.READ_CHARS, description=f"Maximum characters returned, 1-{limits.READ_CHARS}.")
        ] = 20_000,
        wait_for_pending_writes: Wait = False,
    ) -> Annotated[CallToolResult, ReadOutput]:
        """Return a page as its reader sees it, in Markdown, with its title, URL, modification time and front
        matter.

        Use it after search, query_documents or get_recent, with the exact path they returned. With section,
        return that heading and everything under it up to the next heading of the same or a higher level.
        Long text comes in pieces: call again with offset=next_offset until it is null. view=outline lists
        the headings first, to choose a section; view=source gives the Markdown file to edit.
        """
        return await index.answer(
            lambda conn: read_document(
                conn, path, section=section, view=view, offset=offset, max_chars=max_chars
            ),
            wait_for_pending_writes,
            stale_field=False,
        )

    async def stats(wait_for_pending_writes: Wait = False) -> Annotated[CallToolResult, StatsOutput]:
        """Describe the site's index: page, section and folder counts, the front matter fields that filters
        and tag grouping accept (indexed_frontmatter_fields), the oldest and newest modification, and when
        the index was built.

        Call it first to learn which fields exist before using filters or aggregate_documents with by=tag.
        For counts under conditions use count_documents.
        """
        return await index.answer(queries.index_stats, wait_for_pending_writes)

    async def links(
        show: Annotated[
            Literal["backlinks", "outlinks", "broken", "orphans", "most_linked", "related", "history"],
            brief("What to list"),
        ],
        target: Annotated[str, brief("Page path, optionally #anchor")] = None,
        where: Annotated[
            Any,
            WithJsonSchema({"type": "object", "description": "query_documents' filters, in one object"}),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=limits.ROWS, description="Max rows")] = 50,
        offset: Annotated[int, Field(ge=0, description="Rows to skip")] = 0,
        wait_for_pending_writes: Annotated[bool, brief("Wait for index updates")] = False,
    ) -> Annotated[CallToolResult, LinksOutput]:
        """show: backlinks (links to target from other pages), outlinks (of the pages where selects), broken
        (page or anchor missing), orphans (not linked, not in nav), most_linked (by linking pages), related
        (pages like target), history (target's last commits). where selects the linking pages, else those
        listed. total is exact (related: ranked).
        """
        return await index.answer(
            lambda conn: link_query(conn, show, filters_from_where(where), target=target, limit=limit, offset=offset),
            wait_for_pending_writes,
        )

    titles = {
        count_documents: "Count pages",
        aggregate_documents: "Group pages by folder, tag, month or language",
        get_recent: "Recently modified pages",
        query_documents: "List pages",
        search: "Search the documentation",
        read: "Read a page",
        stats: "Site statistics",
        links: "Links and history",
    }
    tools = []
    for function, title in titles.items():
        tool = CheckedTool.from_function(
            function,
            title=title,
            description=inspect.cleandoc(function.__doc__ or ""),
            annotations=READ_ONLY,
            structured_output=True,
        )
        tool.is_stale = index.is_pending
        tool.parameters = published_schema(tool.parameters)
        tool.fn_metadata.output_schema = published_schema(tool.fn_metadata.output_schema)
        check_schema_words(tool)
        tools.append(tool)

    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    server = MCPServer(name, version=__version__, instructions=INSTRUCTIONS, tools=tools)
    # MCPServer configures the root logger; the host (MkDocs, or our CLI) owns logging.
    root.setLevel(level)
    root.handlers[:] = handlers
    return server
