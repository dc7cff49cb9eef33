"""The site's pages as MCP resources: listed (paged), one resource template, read as Markdown, paths completed.

A page's URI is `docs://HOST/PATH`: HOST is the host of the site's `site_url` (empty when the site has none, as in
`docs:///guide/install.md`), PATH the page's path as the tools name it, percent-encoded as RFC 6570 expands
`{+path}`. A client shows it as it is, it says which site and which page it is, and the resource's `_meta.url`
is the page's address on the site. `resources/read` gives the text `read` gives for the same path (at its
largest `max_chars`); `#anchor` after the path reads one section, as `read`'s `section` does.

Changes reach clients through the SDK's `subscriptions/listen` streams (protocol 2026-07-28): when the index
changes (a rebuild under `mkdocs serve`, a new published index, a refreshed download), a listener learns that the
list changed if pages came or went, and that a page it subscribed to changed if its text did. Clients of earlier
protocols subscribe with `resources/subscribe`: only to a page of the index, at most SUBSCRIPTIONS per session, and
only in a session that outlives its request (stdio, stateful HTTP); the table is dropped with the session.
"""

from __future__ import annotations

import base64
import logging
import sqlite3
import string
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any, Protocol
from urllib.parse import quote, unquote, urlsplit

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
    Annotations,
    CompleteRequestParams,
    CompleteResult,
    Completion,
    EmptyResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ResourceTemplateReference,
    SubscribeRequestParams,
    TextResourceContents,
    UnsubscribeRequestParams,
)

from .. import limits
from ..adapters.mcp_sdk import client_connection
from ..errors import InvalidArgument
from ..index.read import read_document
from ..instants import rfc3339

log = logging.getLogger(__name__)

SCHEME = "docs"
MIME_TYPE = "text/markdown"
RESOURCES_PER_PAGE = 100
COMPLETIONS = 100  # the most values MCP lets one completion answer hold
SUBSCRIPTIONS = 1_000  # pages one session may subscribe to with resources/subscribe
# SQLite's lower() folds ASCII letters only: what was typed is folded the same way, or the two would never agree.
ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
# Characters RFC 6570 leaves as they are in a `{+path}` expansion: unreserved and reserved ones, `%` aside.
KEPT_IN_PATH = "/:@!$&'()*+,;=-._~"
# How often the server looks whether the index changed, while someone listens.
CHANGE_POLL_SECONDS = 1.0
# The index file (inode, mtime, size; None when missing) and the freshness generation: when it is unchanged,
# the pages are not read again.
IndexIdentity = tuple[tuple[int, int, int] | None, int]


def host_of(site_url: str | None) -> str:
    return urlsplit(site_url).netloc if site_url else ""


def page_uri(host: str, path: str, anchor: str | None = None) -> str:
    return f"{SCHEME}://{host}/{quote(path, safe=KEPT_IN_PATH)}" + (f"#{quote(anchor, safe='')}" if anchor else "")


def template_uri(host: str) -> str:
    return f"{SCHEME}://{host}/{{+path}}"


def site_url(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT value FROM info WHERE key = 'site_url'").fetchone()
    return row[0] if row and row[0] else None


def site_name(conn: sqlite3.Connection) -> str:
    row = conn.execute("SELECT value FROM info WHERE key = 'site_name'").fetchone()
    return row[0] if row and row[0] else "the site"


def parse_uri(uri: str, host: str) -> tuple[str, str | None]:
    """The page path and the anchor (or None) a URI of this server names; InvalidArgument for any other URI."""
    parts = urlsplit(uri)
    if parts.scheme != SCHEME or parts.netloc != host or not parts.path.startswith("/") or len(parts.path) < 2:
        raise InvalidArgument(
            f"{uri!r} is not a page of this server; its pages are {template_uri(host)} (for example "
            f"{page_uri(host, 'index.md')}): list them with resources/list."
        )
    return unquote(parts.path[1:]), unquote(parts.fragment) if parts.fragment else None


def page_of(conn: sqlite3.Connection, uri: str) -> str:
    """The URI of the page (without its #anchor) that `uri` names; InvalidArgument unless the index has it."""
    host = host_of(site_url(conn))
    path, _ = parse_uri(uri, host)
    if conn.execute("SELECT 1 FROM documents WHERE path = ?", [path]).fetchone() is None:
        raise InvalidArgument(f"{uri[:200]!r} names no page of this server; list its pages with resources/list.")
    return page_uri(host, path)


def encode_cursor(path: str) -> str:
    return base64.urlsafe_b64encode(path.encode()).decode()


def decode_cursor(cursor: str) -> str:
    try:
        return base64.urlsafe_b64decode(cursor.encode()).decode()
    except (ValueError, UnicodeError):
        raise MCPError(
            INVALID_PARAMS,
            f"cursor {cursor[:100]!r} is not one this server gave; pass nextCursor as it came, or no cursor.",
        ) from None


# --- What each request reads from the index ----------------------------------------------------------------


def list_page(conn: sqlite3.Connection, after: str | None) -> dict[str, Any]:
    """One page of the listing, by path (keyset paging: a cursor stays valid while pages come and go)."""
    host = host_of(site_url(conn))
    rows = conn.execute(
        "SELECT path, title, url, summary, modified, language FROM documents WHERE path > ? ORDER BY path LIMIT ?",
        [after or "", RESOURCES_PER_PAGE + 1],
    ).fetchall()
    more = len(rows) > RESOURCES_PER_PAGE
    rows = rows[:RESOURCES_PER_PAGE]
    resources = [
        Resource(
            uri=page_uri(host, path),
            name=path,
            title=title,
            description=summary or None,
            mime_type=MIME_TYPE,
            annotations=Annotations(last_modified=rfc3339(modified)),
            _meta={"url": url, "language": language},
        )
        for path, title, url, summary, modified, language in rows
    ]
    return {"resources": resources, "next": encode_cursor(rows[-1][0]) if more else None}


def read_page(conn: sqlite3.Connection, uri: str) -> dict[str, Any]:
    path, anchor = parse_uri(uri, host_of(site_url(conn)))
    answer = read_document(conn, path, section=anchor, max_chars=limits.READ_CHARS)
    url = answer["section"]["url"] if answer["section"] else answer["url"]
    meta: dict[str, Any] = {"url": url, "title": answer["title"], "modified": answer["modified"]}
    if answer["next_offset"] is not None:
        # A page longer than one `read`: the rest comes from `read` itself, with this offset.
        meta["next_offset"] = answer["next_offset"]
    return {"text": answer["markdown"], "meta": meta}


def complete_path(conn: sqlite3.Connection, typed: str) -> Completion:
    """Paths that start with what was typed, then (case-insensitively) those that hold it elsewhere, by path."""
    start = conn.execute(
        "SELECT path FROM documents WHERE substr(path, 1, ?) = ? ORDER BY path LIMIT ?",
        [len(typed), typed, COMPLETIONS + 1],
    ).fetchall()
    values = [path for (path,) in start]
    starts = "substr(path, 1, ?) = ?"
    total = conn.execute(f"SELECT count(*) FROM documents WHERE {starts}", [len(typed), typed]).fetchone()[0]
    if typed:
        pattern = "%" + typed.translate(ASCII_LOWER).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        inside = "lower(path) LIKE ? ESCAPE '\\' AND substr(path, 1, ?) != ?"
        inside_parameters = [pattern, len(typed), typed]
        total += conn.execute(f"SELECT count(*) FROM documents WHERE {inside}", inside_parameters).fetchone()[0]
        if len(values) <= COMPLETIONS:
            values += [
                path
                for (path,) in conn.execute(
                    f"SELECT path FROM documents WHERE {inside} ORDER BY path LIMIT ?",
                    [pattern, len(typed), typed, COMPLETIONS + 1 - len(values)],
                )
            ]
    return Completion(values=values[:COMPLETIONS], total=total, has_more=total > COMPLETIONS)


def fingerprints(conn: sqlite3.Connection) -> dict[str, str]:
    return {path: fingerprint or "" for path, fingerprint in conn.execute("SELECT path, fingerprint FROM documents")}


# --- The handlers --------------------------------------------------------------------------------------------


class ReadsIndex(Protocol):
    """What the resource handlers use of the server's index reader (server.IndexReader, which makes them)."""

    async def read(self, compute: Callable[[sqlite3.Connection], Any]) -> Any: ...
    def meta(self, stale: bool) -> dict[str, Any]: ...
    def is_pending(self) -> bool: ...
    def identity(self) -> IndexIdentity: ...


class Resources:
    """The resource handlers of one server over `index`, and the change events its listeners get."""

    def __init__(self, index: ReadsIndex) -> None:
        self.index = index
        self.bus = CountedBus()
        self.listen = ListenHandler(self.bus)
        # Protocol 2025-11-25 and before: the page URIs each client connection subscribed to (resources/subscribe).
        self.subscribed: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()

    async def _read(self, compute: Callable[[sqlite3.Connection], Any]) -> Any:
        try:
            return await self.index.read(compute)
        except InvalidArgument as error:
            raise MCPError(INVALID_PARAMS, limits.cut(str(error))) from None

    def _meta(self) -> dict[str, Any]:
        return self.index.meta(self.index.is_pending())

    async def list_resources(
        self, ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        after = decode_cursor(params.cursor) if params is not None and params.cursor else None
        page = await self._read(lambda conn: list_page(conn, after))
        return ListResourcesResult(resources=page["resources"], next_cursor=page["next"], _meta=self._meta())

    async def list_templates(
        self, ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListResourceTemplatesResult:
        url, name = await self._read(lambda conn: (site_url(conn), site_name(conn)))
        template = ResourceTemplate(
            uri_template=template_uri(host_of(url)),
            name="page",
            title=f"A page of {name}",
            description="A page of the site as its reader sees it, in Markdown, by its path (as the tools name it, "
            "e.g. guide/install.md); #anchor after the path: one section. Complete the path with completion/complete.",
            mime_type=MIME_TYPE,
        )
        return ListResourceTemplatesResult(resource_templates=[template], _meta=self._meta())

    async def read_resource(self, ctx: ServerRequestContext, params: ReadResourceRequestParams) -> ReadResourceResult:
        uri = params.uri
        page = await self._read(lambda conn: read_page(conn, uri))
        contents = TextResourceContents(uri=uri, mime_type=MIME_TYPE, text=page["text"], _meta=page["meta"])
        return ReadResourceResult(contents=[contents], _meta=self._meta())

    async def complete(self, ctx: ServerRequestContext, params: CompleteRequestParams) -> CompleteResult:
        """Page paths for the template's `path`; nothing for any other reference (this server has no prompts)."""
        ref = params.ref
        if not isinstance(ref, ResourceTemplateReference) or params.argument.name != "path":
            return CompleteResult(completion=Completion(values=[], total=0, has_more=False))
        typed = params.argument.value
        try:
            limits.check_text("argument.value", typed, limits.TEXT_CHARS)
        except InvalidArgument as error:
            raise MCPError(INVALID_PARAMS, str(error)) from None

        def compute(conn: sqlite3.Connection) -> Completion:
            if ref.uri != template_uri(host_of(site_url(conn))):
                return Completion(values=[], total=0, has_more=False)
            return complete_path(conn, typed)

        return CompleteResult(completion=await self._read(compute))

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
        page = await self._read(lambda conn: page_of(conn, uri))
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
                uri = await self._read(lambda conn: page_of(conn, uri))
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
