"""The MCP tools over Streamable HTTP: the app and the serving loop, for the standalone server
(`mkdocs-vault-mcp serve --transport http`) and the live server beside `mkdocs serve` alike. The guards in front of
the app are in mcp/http_guard.py and mcp/http_connections.py, the worker processes of `--workers` in mcp/workers.py.

It imports nothing of MkDocs, so the standalone server runs where MkDocs is not installed or not wanted.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable
from typing import Any

import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings

from .. import limits
from ..adapters import mcp_sdk
from .http_connections import ACCEPT_BACKLOG, LISTEN_BACKLOG, ConnectionGuard
from .http_guard import LOOPBACK_ADDRESSES, WILDCARD_ADDRESSES, Guard, has_port, transport_security, url_host
from .workers import serve_from_processes


def bind(host: str, port: int, share_port: bool = False) -> socket.socket:
    """Bind and listen before serving, so a busy port is an error here and not a dead thread.

    `share_port`: each worker process listens on a socket of its own on the same port (SO_REUSEPORT), and the
    kernel spreads new connections over them. (One socket shared by all would not: asyncio accepts every
    connection waiting when it wakes, so a burst of clients can all land on the first process to wake.)
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP passed, not left 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on accepted
    # sockets whose proto says TCP, and with it on, every answer on a kept-alive connection waits for the
    # client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    # Lets a restarted server take its port back from connections still in TIME_WAIT; Linux still refuses
    # the bind while another socket listens there.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if share_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


async def serve_on(http: uvicorn.Server, sock: socket.socket) -> None:
    """`http.serve(sockets=[sock])`, with room for LISTEN_BACKLOG connections waiting to be accepted: asyncio
    accepts at most its backlog (ACCEPT_BACKLOG) in one turn, and listens with the same, so that a burst of new
    connections would fill the queue and the kernel would drop the next ones (the client retries a second later)."""
    serving = asyncio.create_task(http.serve(sockets=[sock]))
    while not http.started and not serving.done():
        await asyncio.sleep(0.01)
    # A stop asked for during startup (SIGTERM to a new worker) may have closed the socket already.
    if http.started and sock.fileno() != -1:
        sock.listen(LISTEN_BACKLOG)
    await serving


def wait_for_answers(http: uvicorn.Server, seconds: float) -> None:
    """Block until every request the server is answering, event streams aside, has had its answer sent, or
    `seconds` have passed. For a thread other than the server's.

    uvicorn's own graceful shutdown waits for every connection, open event streams too, which never end on their
    own: so it is given one second, too little for an answer still being computed on a busy machine."""
    guard = http.config.app
    assert isinstance(guard, Guard)
    deadline = time.monotonic() + seconds
    while guard.answering and time.monotonic() < deadline:
        time.sleep(0.01)


def mcp_app(
    server: Server,
    host: str,
    path: str,
    security: TransportSecuritySettings,
    stateful: bool,
    max_sessions: int = limits.MAX_SESSIONS,
    session_idle_seconds: float = limits.SESSION_IDLE_SECONDS,
) -> Any:
    """The SDK's Streamable HTTP app at `path`, for `serve --transport http`, the live server and asgi.py alike.

    Stateless by default: every request stands alone, so no session outlives its request (abandoned sessions hold
    memory and, at the limit, keep new clients out), and replicas behind a load balancer need no sticky sessions.
    The tools need no session: they never call the client back. Answers are plain JSON rather than a one-event
    stream (the tools send no progress), which is quicker to answer."""
    return server.streamable_http_app(
        streamable_http_path=path,
        transport_security=security,
        host=host,
        stateless_http=not stateful,
        json_response=True,
        max_sessions=max_sessions,
        session_idle_timeout=session_idle_seconds,
    )


def guarded_app(
    server: Server,
    host: str,
    path: str,
    allowed_hosts: list[str],
    token: str | None = None,
    stateful: bool = False,
    *,
    connections: ConnectionGuard,
    origins: list[str] | None = None,
    max_sessions: int = limits.MAX_SESSIONS,
    session_idle_seconds: float = limits.SESSION_IDLE_SECONDS,
) -> Guard:
    """The app every way of hosting serves (`serve --transport http`, the live server, asgi.py): the SDK's app behind
    the Host and Origin checks, the bearer token and `connections`, whose protocol the HTTP server must run for the
    slow-connection guard and the connection cap to hold. `origins`: browser origins allowed besides the hosts'."""
    security = transport_security(host, allowed_hosts)
    security.allowed_origins = [*security.allowed_origins, *(origins or [])]
    app = mcp_app(server, host, path, security, stateful, max_sessions, session_idle_seconds)
    if stateful:
        # At the limit the SDK refuses new clients; here the longest idle session makes room instead.
        mcp_sdk.evict_longest_idle_session_when_full(server.session_manager)
    return Guard(app, host, token, connections)


def http_server(
    server: Server,
    host: str,
    path: str,
    allowed_hosts: list[str],
    token: str | None = None,
    stateful: bool = False,
    max_sessions: int = limits.MAX_SESSIONS,
    session_idle_seconds: float = limits.SESSION_IDLE_SECONDS,
) -> uvicorn.Server:
    connections = ConnectionGuard()
    app = guarded_app(
        server,
        host,
        path,
        allowed_hosts,
        token,
        stateful,
        connections=connections,
        max_sessions=max_sessions,
        session_idle_seconds=session_idle_seconds,
    )
    config = uvicorn.Config(
        app,
        http=connections.protocol(),
        # Connections accepted at once, before any is closed: with room for them below the limit of open files.
        backlog=ACCEPT_BACKLOG,
        log_config=None,
        access_log=False,
        lifespan="on",
        ws="none",
        timeout_graceful_shutdown=1,
    )
    return uvicorn.Server(config)


def serve_http(
    server: Server,
    *,
    host: str,
    port: int,
    path: str,
    allowed_hosts: list[str],
    token: str | None = None,
    workers: int = 1,
    stateful: bool = False,
) -> None:
    """Serve until interrupted (the `mkdocs-vault-mcp serve --transport http` command), from `workers` processes."""
    sock = bind(host, port)
    address = " and ".join(answering_endpoints(host, port, path, allowed_hosts))
    if workers == 1:
        print(f"MCP server at {address}", flush=True)
        asyncio.run(serve_on(http_server(server, host, path, allowed_hosts, token, stateful), sock))
        return
    sock.close()  # the port is free: each worker takes it with a socket of its own

    def serve(listening_now: Callable[[], None]) -> None:
        listening = bind(host, port, share_port=True)
        listening_now()
        asyncio.run(serve_on(http_server(server, host, path, allowed_hosts, token, stateful), listening))

    serve_from_processes(serve, workers, f"MCP server at {address} ({workers} worker processes)")


def endpoint(host: str, port: int, path: str) -> str:
    return f"http://{url_host(host)}:{port}{path}"


def answering_endpoints(host: str, port: int, path: str, allowed_hosts: list[str]) -> list[str]:
    """The URLs that the Host check lets a client call: never http://0.0.0.0:PORT, which no Host check allows. Bound
    to every address, the loopback URL (from this machine) and the allowed hosts' (from the network)."""
    if host in LOOPBACK_ADDRESSES:
        return [endpoint(host, port, path)]
    first = ("::1" if ":" in host else "127.0.0.1") if host in WILDCARD_ADDRESSES else host
    names = [f"http://{name}{path}" if has_port(name) else endpoint(name, port, path) for name in allowed_hosts if name]
    return list(dict.fromkeys([endpoint(first, port, path), *names]))
