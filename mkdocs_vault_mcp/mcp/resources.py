"""The site's pages as MCP resources: listed (paged), one resource template, read as Markdown, paths completed.

resource_reads.py says what a page's URI is and reads each request's answer from an index; this module chooses
the index (on a site mike publishes, the version the URI or the completion context names; the default version
when none is named), and tells listeners of changes. `resources/list` lists the default version's pages, and its
`_meta` names that version and the others. `resources/read` gives the text `read` gives for the same path (at its
largest `max_chars`); `#anchor` after the path reads one section, as `read`'s `section` does.

Changes reach clients through the SDK's `subscriptions/listen` streams (protocol 2026-07-28): when the index
changes (a rebuild under `mkdocs serve`, a new published index, a refreshed download), a listener learns that the
list changed if pages came or went, and that a page it subscribed to changed if its text did. Clients of earlier
protocols subscribe with `resources/subscribe`: only to a page of the index, at most SUBSCRIPTIONS per session, and
only in a session that outlives its request (stdio, stateful HTTP); the table is dropped with the session.
"""

from __future__ import annotations

import logging
import sqlite3
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any, Protocol, TypeVar

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
)
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    CompleteRequestParams,
    CompleteResult,
    Completion,
    EmptyResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    ResourceTemplate,
    ResourceTemplateReference,
    SubscribeRequestParams,
    TextResourceContents,
    UnsubscribeRequestParams,
)

from .. import limits
from ..adapters.mcp_sdk import client_connection
from ..errors import InvalidArgument
from .resource_reads import (
    COMPLETIONS,
    MIME_TYPE,
    complete_path,
    decode_cursor,
    fingerprints,
    host_of,
    list_page,
    page_of,
    page_uri,
    read_page,
    site_name,
    site_url,
    template_uri,
    uri_version,
)
from .versions import Versions, chosen

log = logging.getLogger(__name__)
T = TypeVar("T")

SUBSCRIPTIONS = 1_000  # pages one session may subscribe to with resources/subscribe
# How often the server looks whether the index changed, while someone listens.
CHANGE_POLL_SECONDS = 1.0
# The index file (inode, mtime, size; None when missing) and the freshness generation: when it is unchanged,
# the pages are not read again.
IndexIdentity = tuple[tuple[int, int, int] | None, int]


# --- The handlers --------------------------------------------------------------------------------------------


class ReadsIndex(Protocol):
    """What the resource handlers use of the server's index reader (server.IndexReader, which makes them)."""

    async def read(self, compute: Callable[[sqlite3.Connection], Any]) -> Any: ...
    async def on_reader_thread(self, work: Callable[..., T], *args: Any) -> T: ...
    def meta(self, stale: bool) -> dict[str, Any]: ...
    def is_pending(self) -> bool: ...
    def identity(self) -> IndexIdentity: ...


class Resources:
    """The resource handlers of one server over `index`, and the change events its listeners get."""

    def __init__(self, index: ReadsIndex, versions: Versions | None = None) -> None:
        """`versions`: on a site mike publishes, every version's index (`index` is the default version's)."""
        self.index = index
        self.versions = versions
        self.bus = CountedBus()
        self.listen = ListenHandler(self.bus)
        # Protocol 2025-11-25 and before: the page URIs each client connection subscribed to (resources/subscribe).
        self.subscribed: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()

    async def _read(self, compute: Callable[[sqlite3.Connection], Any], version: Any = None) -> Any:
        """`compute` on the index of `version` (None: the default one), and the `_meta` of the answer."""
        try:
            reader, version_meta = await chosen(self.versions, self.index, version)
            return await reader.read(compute), {**reader.meta(reader.is_pending()), **version_meta}
        except InvalidArgument as error:
            raise MCPError(INVALID_PARAMS, limits.cut(str(error))) from None

    async def list_resources(
        self, ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        after = decode_cursor(params.cursor) if params is not None and params.cursor else None
        page, meta = await self._read(lambda conn: list_page(conn, after))
        return ListResourcesResult(resources=page["resources"], next_cursor=page["next"], _meta=meta)

    async def list_templates(
        self, ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListResourceTemplatesResult:
        (url, name), meta = await self._read(lambda conn: (site_url(conn), site_name(conn)))
        described = "A page of the site as its reader sees it, in Markdown, by its path (as the tools name it, "
        described += "e.g. guide/install.md); #anchor after the path: one section."
        if self.versions is not None:
            described += " ?version=VERSION: that version's page (a version or alias; default: the default one)."
        template = ResourceTemplate(
            uri_template=template_uri(host_of(url), self.versions is not None),
            name="page",
            title=f"A page of {name}",
            description=described + " Complete the arguments with completion/complete.",
            mime_type=MIME_TYPE,
        )
        return ListResourceTemplatesResult(resource_templates=[template], _meta=meta)

    async def read_resource(self, ctx: ServerRequestContext, params: ReadResourceRequestParams) -> ReadResourceResult:
        uri = params.uri
        page, meta = await self._read(lambda conn: read_page(conn, uri), self._checked(uri_version, uri))
        contents = TextResourceContents(uri=uri, mime_type=MIME_TYPE, text=page["text"], _meta=page["meta"])
        return ReadResourceResult(contents=[contents], _meta=meta)

    def _checked(self, check: Callable[[str], Any], value: str) -> Any:
        try:
            return check(value)
        except InvalidArgument as error:
            raise MCPError(INVALID_PARAMS, limits.cut(str(error))) from None

    async def complete(self, ctx: ServerRequestContext, params: CompleteRequestParams) -> CompleteResult:
        """The template's page paths (of the version the context names) and, on a versioned site, its versions;
        nothing for any other reference (this server has no prompts)."""
        ref, name, typed = params.ref, params.argument.name, params.argument.value
        if not isinstance(ref, ResourceTemplateReference) or name not in ("path", "version"):
            return CompleteResult(completion=Completion(values=[], total=0, has_more=False))
        self._checked(lambda text: limits.check_text("argument.value", text, limits.TEXT_CHARS), typed)
        if name == "version":
            return CompleteResult(completion=self._versions_starting(ref.uri, typed))
        context = (params.context.arguments if params.context else None) or {}
        version = context.get("version") if self.versions is not None else None

        def compute(conn: sqlite3.Connection) -> Completion:
            if ref.uri != template_uri(host_of(site_url(conn)), self.versions is not None):
                return Completion(values=[], total=0, has_more=False)
            return complete_path(conn, typed)

        return CompleteResult(completion=(await self._read(compute, version or None))[0])

    def _versions_starting(self, uri: str, typed: str) -> Completion:
        """The versions, then the aliases, that start with what was typed (none on a site without versions)."""
        if self.versions is None or not uri.endswith("{?version}"):
            return Completion(values=[], total=0, has_more=False)
        versions = self.versions
        listed = self._checked(lambda _: versions.listed(), uri)
        values = [name for name in [*listed.versions, *listed.aliases] if name.startswith(typed)]
        return Completion(values=values[:COMPLETIONS], total=len(values), has_more=len(values) > COMPLETIONS)

    async def subscribe(self, ctx: ServerRequestContext, params: SubscribeRequestParams) -> EmptyResult:
        connection = client_connection(ctx)
        if ctx.request is not None and connection.session_id is None:
            # Stateless HTTP: the connection ends with this request, so no change could ever be told on it.
            raise MCPError(
                INVALID_REQUEST,
                "resources/subscribe needs a session, and this server is stateless over HTTP: each request stands "
                "alone. Read the page again to see changes, listen with subscriptions/listen (protocol 2026-07-28), "
                "or serve with stateful sessions.",
            )
        uri = params.uri
        page, _ = await self._read(lambda conn: page_of(conn, uri))
        pages = self.subscribed.get(connection)
        if pages is None:
            pages = self.subscribed[connection] = set()
            connection.exit_stack.callback(self.subscribed.pop, connection, None)
        if page not in pages and len(pages) >= SUBSCRIPTIONS:
            message = f"this session is subscribed to {SUBSCRIPTIONS} pages, the most it may be; unsubscribe first."
            raise MCPError(INVALID_PARAMS, message)
        pages.add(page)
        return EmptyResult()

    async def unsubscribe(self, ctx: ServerRequestContext, params: UnsubscribeRequestParams) -> EmptyResult:
        pages, uri = self.subscribed.get(client_connection(ctx)), params.uri
        if pages:
            with suppress(MCPError):  # a page that has left the index since: its URI as it was given
                uri = (await self._read(lambda conn: page_of(conn, uri)))[0]
            pages.discard(uri)
        return EmptyResult()

    # -- change events ----------------------------------------------------------------------------------------

    async def _tell(self, event: ServerEvent) -> None:
        await self.bus.publish(event)
        if isinstance(event, ResourceUpdated):
            for connection, pages in list(self.subscribed.items()):
                if event.uri not in pages:
                    continue
                try:
                    await connection.send_resource_updated(event.uri)
                except Exception as error:  # a connection that has ended: it hears nothing more
                    log.debug("Could not tell a client that %s changed: %s", event.uri, error)
                    self.subscribed.pop(connection, None)

    @asynccontextmanager
    async def watching(self, server: Any) -> AsyncIterator[dict[str, Any]]:
        """The server's lifespan: while anyone listens, look for index changes and publish them."""
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._watch)
            try:
                yield {}
            finally:
                self.listen.close()
                tasks.cancel_scope.cancel()

    async def _watch(self) -> None:
        seen: IndexIdentity | None = None
        known: dict[str, str] | None = None
        while True:
            await anyio.sleep(CHANGE_POLL_SECONDS)
            if not self.bus.listeners and not any(self.subscribed.values()):
                seen = known = None
                continue
            identity = self.index.identity()
            if identity == seen and known is not None:
                continue
            try:
                now = await self.index.read(fingerprints)
            except Exception as error:  # an index being replaced or missing: look again next time
                log.debug("Could not read the index for change events: %s", error)
                continue
            seen = identity
            if known is not None:
                for event in changes(known, now, await self.index.read(lambda conn: host_of(site_url(conn)))):
                    await self._tell(event)
            known = now


def changes(before: dict[str, str], after: dict[str, str], host: str) -> list[ServerEvent]:
    events: list[ServerEvent] = []
    if before.keys() != after.keys():
        events.append(ResourcesListChanged())
    events += [
        ResourceUpdated(uri=page_uri(host, path))
        for path, digest in after.items()
        if path in before and before[path] != digest
    ]
    return events


class CountedBus:
    """The SDK's in-process fan-out (`SubscriptionBus`), knowing whether anyone listens (so an idle server
    never reads the index for change events)."""

    def __init__(self) -> None:
        self._bus = InMemorySubscriptionBus()
        self.listeners = 0

    async def publish(self, event: ServerEvent) -> None:
        await self._bus.publish(event)

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        unsubscribe = self._bus.subscribe(listener)
        self.listeners += 1
        done = False

        def undo() -> None:
            nonlocal done
            if not done:
                done = True
                self.listeners -= 1
                unsubscribe()

        return undo
