"""Connections of the HTTP server that cannot starve the others: slow or idle ones are closed (`ConnectionGuard`),
and no more are kept than the process may open files for.

It imports nothing of MkDocs, so the standalone server runs where MkDocs is not installed or not wanted.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import MutableMapping
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from .. import limits

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]  # an ASGI scope
Message = MutableMapping[str, Any]  # an ASGI message
ConnectionKey = tuple[tuple[Any, ...] | None, tuple[Any, ...] | None]  # the peer's address and the local one


class _Connection:
    __slots__ = ("answering", "protocol", "transport", "waiting_since")

    def __init__(self, protocol: asyncio.Protocol, transport: asyncio.Transport) -> None:
        self.protocol, self.transport = protocol, transport
        self.answering = False  # a whole request was read, its answer not yet sent
        self.waiting_since = time.monotonic()  # for a request: since the connection opened or its last answer


class ConnectionGuard:
    """Slow or idle connections cannot starve the others.

    uvicorn closes a kept-alive connection some seconds after an answer, but sets no time for a request to
    arrive: a client that sends part of its headers, or of its body, holds its connection, and a file descriptor,
    for ever. Here a connection that is not being answered is closed once it has waited `read_seconds` for its
    request (since it opened, or since its last answer); and at `max_connections` (below the process's limit of
    open files, so that accepting never fails), a new connection closes the one that has waited longest instead of
    being refused. uvicorn's `limit_concurrency` would refuse the new client itself, with a 503.

    A connection is known to the app by the addresses in the request's scope, which are its socket's.
    """

    def __init__(
        self,
        max_connections: int | None = None,
        read_seconds: float = limits.REQUEST_READ_SECONDS,
        unguarded_warning: str | None = None,
    ) -> None:
        self.max_connections = max_connections or connection_limit()
        self.read_seconds = read_seconds
        self.connections: dict[ConnectionKey, _Connection] = {}
        self._sweeping: asyncio.TimerHandle | None = None
        self._sweeping_loop: asyncio.AbstractEventLoop | None = None
        # Logged at the first request when the server does not run `protocol()`, so nothing here guards it.
        self.unguarded_warning = unguarded_warning
        self.protocol_runs = False

    def protocol(self) -> type[asyncio.Protocol]:
        """uvicorn's h11 protocol, reporting its connections here (uvicorn takes a protocol class as `http`)."""
        guard = self

        class GuardedH11Protocol(H11Protocol):
            _guard_key: ConnectionKey = (None, None)

            def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
                super().connection_made(transport)
                guard.opened(self, transport)

            def connection_lost(self, exc: Exception | None) -> None:
                guard.closed(self, self._guard_key)
                super().connection_lost(exc)

        return GuardedH11Protocol

    def opened(self, protocol: Any, transport: asyncio.Transport) -> None:
        self.protocol_runs = True
        key = protocol._guard_key = connection_key(
            transport.get_extra_info("peername"), transport.get_extra_info("sockname")
        )
        self.connections[key] = _Connection(protocol, transport)
        if len(self.connections) > self.max_connections:
            waiting = [k for k, c in self.connections.items() if not c.answering and c.protocol is not protocol]
            self._close(min(waiting, key=lambda k: self.connections[k].waiting_since) if waiting else key)
        loop = asyncio.get_running_loop()
        # One guard may outlive its event loop (asgi.py's serves the process): a new loop gets a sweep of its own.
        if self._sweeping is None or self._sweeping_loop is not loop:
            self._sweeping, self._sweeping_loop = loop.call_later(1, self._sweep), loop

    def closed(self, protocol: Any, key: ConnectionKey) -> None:
        known = self.connections.get(key)
        if known is not None and known.protocol is protocol:
            del self.connections[key]

    def _close(self, key: ConnectionKey) -> None:
        # Forgotten now, not when asyncio reports it closed (a turn of the loop later), so that no other new
        # connection picks the same one to close.
        self.connections.pop(key).transport.abort()

    def _sweep(self) -> None:
        """Close the connections that waited too long for a request; again every second while any is open."""
        too_old = time.monotonic() - self.read_seconds
        for key, connection in list(self.connections.items()):
            if not connection.answering and connection.waiting_since < too_old:
                self._close(key)
        self._sweeping = asyncio.get_running_loop().call_later(1, self._sweep) if self.connections else None

    def follow(self, scope: Scope, receive: Any, send: Any) -> tuple[Any, Any]:
        """`receive` and `send` of one request, which mark its connection as answered from when its request was
        read whole to when its answer was sent."""
        connection = self.connections.get(connection_key(scope.get("client"), scope.get("server")))
        if connection is None:
            if not self.protocol_runs and self.unguarded_warning:
                log.warning(self.unguarded_warning)
                self.unguarded_warning = None
            return receive, send
        if scope.get("method") in ("GET", "HEAD", "DELETE", "OPTIONS"):
            connection.answering = True  # no body to wait for (an event stream may last)

        async def receiving() -> Message:
            message: Message = await receive()
            if message["type"] == "http.request" and not message.get("more_body", False):
                connection.answering = True
            return message

        async def sending(message: Message) -> None:
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                connection.answering = False
                connection.waiting_since = time.monotonic()

        return receiving, sending


def connection_key(peer: Any, local: Any) -> ConnectionKey:
    """A connection by its two addresses (host and port of each), as a socket and an ASGI scope both give them."""
    return (tuple(peer[:2]) if peer else None, tuple(local[:2]) if local else None)


ACCEPT_BACKLOG = 32  # connections that asyncio accepts in one turn of its loop
LISTEN_BACKLOG = 1024  # connections that may wait to be accepted
# Open files besides the connections kept: the index's and the threads' (128), and the connections accepted in the
# turns of the event loop before a new connection is known here (two) and the one it replaces is closed (one more).
FILES_KEPT = 128 + 8 * ACCEPT_BACKLOG


def connection_limit() -> int:
    """limits.HTTP_CONNECTIONS, or fewer where the process may not open that many files (with room for the
    index's, the threads' and a burst of connections accepted before the oldest are closed)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return limits.HTTP_CONNECTIONS
    if soft == resource.RLIM_INFINITY:
        return limits.HTTP_CONNECTIONS
    return max(16, min(limits.HTTP_CONNECTIONS, soft - FILES_KEPT))


def log_accept_errors_once(loop: asyncio.AbstractEventLoop) -> None:
    """asyncio logs every failed accept() with its traceback (out of file descriptors: each time it retries); here
    the first is logged with what to do, and the others not at all."""
    previous = loop.get_exception_handler()
    logged = False

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        nonlocal logged
        message = str(context.get("message", ""))
        if "_start_serving" in message and isinstance(context.get("exception"), ValueError):
            return  # accepting, paused for lack of files, resumed after the server closed its socket: nothing lost
        if message.startswith("socket.accept() out of system resource"):
            if not logged:
                logged = True
                log.error(
                    "Cannot accept new connections: %s. Raise the limit of open files (ulimit -n); this is logged "
                    "once.",
                    context.get("exception"),
                )
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
