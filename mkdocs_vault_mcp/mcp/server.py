"""The MCP server: the tools of `mcp/tools.py` over the index, each call answered from one read of it.

Built on the SDK's low-level `Server`, its documented layer for a server that publishes exact schemas and
builds its own results: the tools publish the compact schemas of `mcp/schemas.py` (a signature-derived one
would repeat the shared filters in four tools, with pydantic's titles), every answer and every error
carries `_meta.index_stale`, and arguments are checked by `mcp/arguments.py`, whose messages say what is
accepted, before any query runs.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, overload

import anyio
import pydantic_core
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
)

from .. import __version__, budget, limits
from ..errors import InvalidArgument
from ..index.freshness import Freshness
from ..index.publish import open_read_only
from ..index.search import embedding
from .arguments import checked
from .resources import IndexIdentity, Resources
from .tools import TOOLS
from .versions import Versions, chosen, older_page

log = logging.getLogger(__name__)
T = TypeVar("T")

INSTRUCTIONS = (
    "Read-only tools over the pages of one MkDocs documentation site. Start with stats to learn the site "
    "and its indexed front matter fields; search finds the sections that answer a question; read returns "
    "a page or one of its sections as Markdown; count_documents, aggregate_documents, query_documents and "
    "get_recent answer questions about the pages themselves (how many, where, which tags, what changed); links "
    "moves through the site: backlinks, outlinks, broken links, orphan pages, most linked and related pages, a "
    "page's git history. count_documents, aggregate_documents, query_documents and search share one set of "
    "filters, explained in count_documents' parameters; wait_for_pending_writes means the same in every tool."
)


class CannotAnswer(Exception):
    """The index could not answer this call (missing, corrupt, or the call ran out of time); the message
    says what to do."""


# --- The index, one read-only connection per thread ------------------------------------------

# Calls that work at once in their first LIGHT_SECONDS of CPU work (the others wait for their turn): enough that
# a burst of calls that will turn out heavy does not queue a light one behind it, few enough to bound the threads.
READER_THREADS = 16
# Calls past LIGHT_SECONDS of work that work at once: one per CPU, the others wait for their turn (see budget.py).
HEAVY_CALLS = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
LIGHT_SECONDS = 0.05
# Work a call may do on the event loop before it moves to a worker thread (and starts again there): enough for most
# calls, so that they pay no hand-over between threads, whose fight for the GIL costs more than the call under load.
INLINE_SECONDS = 0.01


class IndexReader:
    """Opens the index read-only, once per worker thread, and again after the file was replaced."""

    def __init__(
        self,
        path: Path,
        freshness: Freshness | None = None,
        wait_timeout: float = 30.0,
        call_seconds: float = limits.CALL_SECONDS,
        describe: Callable[[], dict[str, Any]] | None = None,
        queued_calls: int = limits.QUEUED_CALLS,
        model_folder: Path | None = None,
    ) -> None:
        """`model_folder`: the folder of the model of the index's vectors, where the build's is not (search by
        meaning, index/search/embedding.py's `locate`)."""
        self.path = path
        self.model_folder = model_folder
        # What every answer's `_meta` says besides index_stale (a downloaded index: where from, how old).
        self.describe = describe
        self.freshness = freshness or Freshness()
        self.wait_timeout = wait_timeout
        self.call_seconds = call_seconds
        self.lanes = budget.Lanes(READER_THREADS, HEAVY_CALLS, queued_calls, LIGHT_SECONDS)
        self._local = threading.local()
        self._limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.CapacityLimiter] = (
            weakref.WeakKeyDictionary()
        )  # event loop -> its limiter

    def connection(self) -> sqlite3.Connection:
        try:
            identity = os.stat(self.path).st_ino
        except FileNotFoundError:
            raise CannotAnswer(
                f"The index {self.path} does not exist yet; build the site with the vault-mcp plugin."
            ) from None
        cached = getattr(self._local, "cached", None)
        if cached is None or cached[0] != identity:
            if cached is not None:
                cached[1].close()
            conn = open_read_only(self.path)
            # Every 1,000 SQLite steps, whether this call has used up its work (none outside a call); an FTS5 step can
            # be long, and a heavy call must be found out in its first LIGHT_SECONDS of work (budget.py).
            conn.set_progress_handler(budget.exhausted, 1_000)
            self._local.cached = cached = (identity, conn)
        return cached[1]

    def is_pending(self) -> bool:
        return self.freshness.pending

    def identity(self) -> IndexIdentity:
        """The index file and the freshness generation, which the resources' change events watch."""
        file: tuple[int, int, int] | None
        try:
            stat = os.stat(self.path)
            file = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        except OSError:
            file = None
        return file, self.freshness.begin_read().generation

    def meta(self, stale: bool) -> dict[str, Any]:
        return {"index_stale": stale} if self.describe is None else {"index_stale": stale, **self.describe()}

    async def read(self, compute: Callable[[sqlite3.Connection], Any]) -> Any:
        """What `compute` returns from one read transaction, on a worker thread (as `answer` reads)."""
        return await self.on_reader_thread(self._read, compute)

    async def on_reader_thread(self, work: Callable[..., T], *args: Any) -> T:
        """`work(*args)` on one of the reader threads, for work that would hold the event loop (opening a version's
        index, which may download it)."""
        return await anyio.to_thread.run_sync(work, *args, limiter=self._reader_threads())

    async def answer(
        self,
        compute: Callable[[sqlite3.Connection], dict[str, Any]],
        wait: bool,
        reports_staleness: bool = True,
        small_answer: bool = False,
    ) -> dict[str, Any]:
        """Run one query in one read transaction, within `call_seconds` of work (CPU time, see budget.py).

        In one transaction so that every statement of an answer (a count and its rows) reads the same
        snapshot of the index. A small answer (little Python work on what SQL returns) first tries on the event
        loop, with INLINE_SECONDS of work: most calls take less time there than the hand-over to a worker thread
        costs, which under load is mostly the threads and the loop taking turns for the GIL at every SQLite step.
        Past that, on a worker thread, so that a slow call never holds the event loop, which serves every other
        client. Heavy calls take turns (budget.py):
        when `queued_calls` of them already wait for theirs, one more is refused at once, with a message.

        The answer is the CallToolResult in its wire form (a dict), which the SDK serializes as it is: given a
        CallToolResult it would dump the model to that dict first, a pass over every row of the answer. The
        text copy of the structured content is compact JSON from pydantic_core, faster and shorter than
        json.dumps'.
        """
        if wait and self.freshness.may_be_pending:
            await anyio.to_thread.run_sync(self.freshness.wait, self.wait_timeout)
        token = self.freshness.begin_read()
        data = self._read(compute, INLINE_SECONDS) if small_answer else None
        if data is None:
            data = await self.on_reader_thread(self._read, compute, None, self.lanes)
        stale = self.freshness.is_stale(token)
        if reports_staleness:
            data["index_stale"] = stale
        notes = data.pop("_meta", {})  # what the query says about how it answered (search: keywords or hybrid)
        return {
            "content": [{"type": "text", "text": pydantic_core.to_json(data).decode()}],
            "structuredContent": data,
            "_meta": {**self.meta(stale), **notes},
            "resultType": "complete",  # required from protocol 2026-07-28 on; the SDK drops it for earlier ones
        }

    def _reader_threads(self) -> anyio.CapacityLimiter:
        """Threads enough for every call the lanes take at once (per event loop): the calls take their turns in
        `budget.Lanes`, where one that waits holds no CPU. Each thread keeps a connection and its page cache."""
        loop = asyncio.get_running_loop()
        limiter = self._limiters.get(loop)
        if limiter is None:
            lanes = self.lanes
            limiter = self._limiters[loop] = anyio.CapacityLimiter(READER_THREADS + lanes.heavy_limit)
        return limiter

    @overload
    def _read(
        self,
        compute: Callable[[sqlite3.Connection], dict[str, Any]],
        try_seconds: None = None,
        lanes: budget.Lanes | None = None,
    ) -> dict[str, Any]: ...
    @overload
    def _read(
        self, compute: Callable[[sqlite3.Connection], dict[str, Any]], try_seconds: float
    ) -> dict[str, Any] | None: ...

    def _read(
        self,
        compute: Callable[[sqlite3.Connection], dict[str, Any]],
        try_seconds: float | None = None,
        lanes: budget.Lanes | None = None,
    ) -> dict[str, Any] | None:
        """The answer; None when `try_seconds` of work were not enough (nothing else is limited)."""
        conn = self.connection()
        try:
            with (
                budget.limited(try_seconds or self.call_seconds, lanes, inline=try_seconds is not None),
                embedding.folder_given(self.model_folder),
            ):
                conn.execute("BEGIN")
                try:
                    return compute(conn)
                finally:
                    conn.rollback()  # nothing was written: ends the read, and its snapshot
        except budget.Busy:
            raise CannotAnswer(
                f"The server is busy: {self.lanes.heavy_limit} long calls already work or wait for their turn, the "
                "most it takes at once, and this one needed more than a moment; try again in a few seconds, or "
                "narrow it."
            ) from None
        except (sqlite3.OperationalError, budget.OutOfTime) as error:
            out_of_time = isinstance(error, budget.OutOfTime) or str(error) == "interrupted"
            if out_of_time and try_seconds is not None:
                return None
            if out_of_time:
                raise CannotAnswer(
                    f"This call needed more than {self.call_seconds:g} seconds of work, the limit per call; "
                    "narrow it (a folder, a path pattern, fewer or more specific query words, a section of a page)."
                ) from None
            raise CannotAnswer(f"The index could not answer: {error}.") from None


# --- The server ----------------------------------------------------------------------------------


def create_server(index: IndexReader, name: str = "mkdocs-vault-mcp", versions: Versions | None = None) -> Server:
    """`versions`: on a site mike publishes, every version's index (`index` is the default version's)."""
    listing = ListToolsResult(tools=[tool.published() for tool in TOOLS.values()])

    async def list_tools(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
        return listing

    async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult | dict[str, Any]:
        tool = TOOLS.get(params.name)
        if tool is None:
            return failure(f"Unknown tool: {params.name}; this server has {', '.join(TOOLS)}.", index)
        try:
            arguments = checked(tool.argument_schema, params.arguments or {})
            reader: IndexReader
            reader, version_meta = await chosen(versions, index, arguments["version"])
            arguments["version"] = version_meta.get("version")
            if arguments.get("since") is not None:
                arguments["since"] = await older_page(versions, arguments["since"], arguments["target"])
            wait = arguments["wait_for_pending_writes"]
            query = tool.query(arguments)
            answer = await reader.answer(query, wait, tool.reports_staleness, tool.small_answer(arguments))
            answer["_meta"].update(version_meta)
            if versions is not None and tool.name == "stats":
                answer["_meta"]["version_documents"] = await versions.document_counts()
            return answer
        except (InvalidArgument, CannotAnswer) as error:
            return failure(f"Error executing tool {tool.name}: {error}", index)
        except Exception:
            # A bug: the details stay in the server's log, the client learns only that it happened.
            log.exception("Tool %r raised an unexpected exception", tool.name)
            return failure(f"Error executing tool {tool.name}: an internal error (the server log has details).", index)

    def input_schema(tool_name: str) -> dict[str, Any] | None:
        tool = TOOLS.get(tool_name)
        return None if tool is None else tool.input_schema

    pages = Resources(index, versions)
    return Server(
        name,
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=pages.watching,
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        # The SDK's runner takes a handler's result as a model or as its wire-form dict (HandlerResult);
        # on_call_tool's annotation names only the model. IndexReader.answer says why the dict.
        on_call_tool=call_tool,  # type: ignore[arg-type]
        on_list_resources=pages.list_resources,
        on_list_resource_templates=pages.list_templates,
        on_read_resource=pages.read_resource,
        on_subscribe_resource=pages.subscribe,
        on_unsubscribe_resource=pages.unsubscribe,
        on_completion=pages.complete,
        on_subscriptions_listen=pages.listen,
    )


def failure(message: str, index: IndexReader) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=limits.cut(message))],
        is_error=True,
        _meta=index.meta(index.is_pending()),
    )
