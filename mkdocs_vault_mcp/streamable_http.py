"""The MCP tools over Streamable HTTP: the app, its guards and the serving loop, for the standalone server
(`mkdocs-vault-mcp serve --transport http`) and the live server beside `mkdocs serve` alike.

It imports nothing of MkDocs, so the standalone server runs where MkDocs is not installed or not wanted.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from uvicorn.protocols.http.h11_impl import H11Protocol

from . import limits
from .adapters import mcp_sdk

log = logging.getLogger(__name__)

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
LOOPBACK_ADDRESSES = ("127.0.0.1", "localhost", "::1")


WILDCARD_ADDRESSES = ("0.0.0.0", "::", "")


def transport_security(host: str, allowed_hosts: list[str]) -> TransportSecuritySettings:
    """DNS rebinding protection: only loopback names, plus the hosts the owner allowed, may call.

    Bound to one address beyond loopback, no request can come through loopback: a loopback name in its Host
    would be a lie. (Bound to every address, `Guard` refuses it on the connections that did not.)
    """
    one_outside_address = host not in LOOPBACK_ADDRESSES + WILDCARD_ADDRESSES
    names = ([] if one_outside_address else list(LOOPBACK_NAMES)) + [h for h in allowed_hosts if h]
    if one_outside_address:
        names.append(url_host(host))
    hosts = []
    for name in dict.fromkeys(names):
        hosts += [name] if has_port(name) else [name, f"{name}:*"]
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def has_port(name: str) -> bool:
    return name.rpartition(":")[2].isdigit() and (not name.startswith("[") or "]:" in name)


def bind(host: str, port: int, share_port: bool = False) -> socket.socket:
    """Bind and listen before serving, so a busy port is an error here and not a dead thread.

    `share_port`: each worker process listens on a socket of its own on the same port (SO_REUSEPORT), and the
    kernel spreads new connections over them. (One socket shared by all would not: asyncio accepts every
    connection waiting when it wakes, so a burst of clients can all land on the first process to wake.)
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP given, not left 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on accepted
    # sockets whose proto says TCP, and with it on, every answer on a kept-alive connection waits ~40 ms
    # for the client's delayed ACK.
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


class Guard:
    """In front of the SDK's app: a loopback Host only on a connection that came through loopback, and the bearer
    token when one is set.

    The SDK checks the Host header against the allowed names, but a client on the network can send
    `Host: localhost` to a server bound to every address; only the address the connection arrived at tells.
    """

    def __init__(self, app: Any, host: str, token: str | None, connections: ConnectionGuard | None = None) -> None:
        self.app = app
        self.every_address = host in WILDCARD_ADDRESSES
        self.expected = token.encode() if token else None
        # Requests being answered now, event streams (GET) aside: a server that stops lets them finish first.
        self.answering = 0
        self.connections = connections or ConnectionGuard()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            log_accept_errors_once(asyncio.get_running_loop())
        if scope["type"] == "http":
            receive, send = self.connections.follow(scope, receive, send)
            headers = dict(scope["headers"])
            if self.every_address and not arrived_through_loopback(scope) and names_loopback(headers.get(b"host")):
                await refuse(send, 421, "Misdirected request: a loopback Host on a connection from the network")
                return
            if self.expected is not None and not has_token(headers.get(b"authorization", b""), self.expected):
                await refuse(send, 401, "Unauthorized: send the bearer token (Authorization: Bearer ...)",
                             [(b"www-authenticate", b'Bearer realm="mcp"')])
                return
        answering = scope["type"] == "http" and scope["method"] != "GET"
        self.answering += answering
        try:
            await self.app(scope, receive, send)
        finally:
            self.answering -= answering


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

    def __init__(self, max_connections: int | None = None, read_seconds: float = limits.REQUEST_READ_SECONDS) -> None:
        self.max_connections = max_connections or connection_limit()
        self.read_seconds = read_seconds
        self.connections: dict[tuple, _Connection] = {}
        self._sweeping: asyncio.TimerHandle | None = None

    def protocol(self) -> type[asyncio.Protocol]:
        """uvicorn's h11 protocol, reporting its connections here (uvicorn takes a protocol class as `http`)."""
        guard = self

        class GuardedH11Protocol(H11Protocol):
            _guard_key: tuple = (None, None)

            def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
                super().connection_made(transport)
                guard.opened(self, transport)

            def connection_lost(self, exc: Exception | None) -> None:
                guard.closed(self, self._guard_key)
                super().connection_lost(exc)

        return GuardedH11Protocol

    def opened(self, protocol: Any, transport: asyncio.Transport) -> None:
        key = protocol._guard_key = connection_key(transport.get_extra_info("peername"),
                                                    transport.get_extra_info("sockname"))
        self.connections[key] = _Connection(protocol, transport)
        if len(self.connections) > self.max_connections:
            waiting = [k for k, c in self.connections.items() if not c.answering and c.protocol is not protocol]
            self._close(min(waiting, key=lambda k: self.connections[k].waiting_since) if waiting else key)
        if self._sweeping is None:
            self._sweeping = asyncio.get_running_loop().call_later(1, self._sweep)

    def closed(self, protocol: Any, key: tuple) -> None:
        known = self.connections.get(key)
        if known is not None and known.protocol is protocol:
            del self.connections[key]

    def _close(self, key: tuple) -> None:
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

    def follow(self, scope: dict, receive: Any, send: Any) -> tuple[Any, Any]:
        """`receive` and `send` of one request, which mark its connection as answered from when its request was
        read whole to when its answer was sent."""
        connection = self.connections.get(connection_key(scope.get("client"), scope.get("server")))
        if connection is None:
            return receive, send
        if scope.get("method") in ("GET", "HEAD", "DELETE", "OPTIONS"):
            connection.answering = True  # no body to wait for (an event stream may last)

        async def receiving() -> dict:
            message = await receive()
            if message["type"] == "http.request" and not message.get("more_body", False):
                connection.answering = True
            return message

        async def sending(message: dict) -> None:
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                connection.answering = False
                connection.waiting_since = time.monotonic()

        return receiving, sending


def connection_key(peer: Any, local: Any) -> tuple:
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
        if str(context.get("message", "")).startswith("socket.accept() out of system resource"):
            if not logged:
                logged = True
                log.error(
                    "Cannot accept new connections: %s. Raise the limit of open files (ulimit -n); this is logged "
                    "once.", context.get("exception")
                )
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


async def serve_on(http: uvicorn.Server, sock: socket.socket) -> None:
    """`http.serve(sockets=[sock])`, with room for LISTEN_BACKLOG connections waiting to be accepted: asyncio
    accepts at most its backlog (ACCEPT_BACKLOG) in one turn, and listens with the same, so that a burst of new
    connections would fill the queue and the kernel would drop the next ones (the client retries a second later)."""
    serving = asyncio.create_task(http.serve(sockets=[sock]))
    while not http.started and not serving.done():
        await asyncio.sleep(0.01)
    if http.started:
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


def has_token(authorization: bytes, expected: bytes) -> bool:
    """`Authorization: Bearer <token>`, the scheme in any case (RFC 6750), compared in constant time."""
    scheme, _, given = authorization.strip().partition(b" ")
    return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), expected)


def arrived_through_loopback(scope: dict) -> bool:
    local = (scope.get("server") or ("", 0))[0]
    try:
        address = ipaddress.ip_address(local)
    except ValueError:
        return False  # a Unix socket or an unknown address: not loopback
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def names_loopback(host_header: bytes | None) -> bool:
    name = (host_header or b"").decode("latin-1").strip().lower()
    if name.startswith("["):
        name = name[: name.find("]") + 1]  # [::1]:8765
    elif name.count(":") == 1:
        name = name.rpartition(":")[0]  # localhost:8765
    return name in LOOPBACK_NAMES or name == "::1"


async def refuse(send: Any, status: int, text: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()), *(headers or [])
    ]})
    await send({"type": "http.response.body", "body": body})


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
    # Stateless by default: every request stands alone, so no session outlives its request (10,000 abandoned
    # sessions once held ~300 MB and refused new clients), and replicas behind a load balancer need no
    # sticky sessions. The tools need no session: they never call the client back. Answers are plain
    # JSON rather than a one-event stream (the tools send no progress): ~3 ms less per call.
    app = server.streamable_http_app(
        streamable_http_path=path,
        transport_security=transport_security(host, allowed_hosts),
        host=host,
        stateless_http=not stateful,
        json_response=True,
        max_sessions=max_sessions,
        session_idle_timeout=session_idle_seconds,
    )
    if stateful:
        # At the limit the SDK refuses new clients; here the longest idle session makes room instead.
        mcp_sdk.evict_longest_idle_session_when_full(server.session_manager)
    connections = ConnectionGuard()
    config = uvicorn.Config(
        Guard(app, host, token, connections),
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


class WorkersFailed(Exception):
    """The worker processes kept ending soon after they started; the message says how often."""


# A worker that ends is replaced; this many replacements within RESTART_WINDOW seconds mean the workers cannot
# serve (a fault each new one meets), and the parent stops rather than fork for ever.
RESTARTS_PER_WINDOW = 5
RESTART_WINDOW = 60.0


def serve_from_processes(serve: Callable[[Callable[[], None]], None], workers: int, ready_line: str) -> None:
    """Fork `workers` processes that each `serve`, print `ready_line` once all listen (each calls the function
    `serve` is given once it does), and supervise them until SIGINT or SIGTERM to this process stops them all.

    A worker that ends otherwise is replaced; when replacements keep ending (RESTARTS_PER_WINDOW within
    RESTART_WINDOW seconds) the others are stopped and WorkersFailed raised. A worker ends when this process
    does, whatever ended it (SIGKILL too): it watches a pipe whose writing end only this process holds, so that
    no orphaned worker keeps the port.

    Forked, not spawned: the server and its tools are built once, before, and each process opens its own
    read-only connections to the index when it first answers (SQLite connections must not cross a fork).
    """
    ready_in, ready_out = os.pipe()
    alive_in, alive_out = os.pipe()  # never written: its end tells the workers this process ended
    children: set[int] = set()

    def fork_worker(announce: bool) -> int:
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                # The parent's handlers stop its workers: in a worker, until uvicorn sets its own, the default's.
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.default_int_handler)
                os.close(alive_out)
                if announce:
                    os.close(ready_in)
                _end_with_parent(alive_in)

                def listening() -> None:
                    if announce:
                        os.write(ready_out, b"+")
                        os.close(ready_out)

                # uvicorn handles SIGINT and SIGTERM itself, and ends its requests
                serve(listening)
                status = 0
            finally:
                os._exit(status)
        children.add(pid)
        return pid

    for _ in range(workers):
        fork_worker(announce=True)
    os.close(ready_out)
    stopping = False

    def stop(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGTERM)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    started = 0
    while started < workers:
        signals = os.read(ready_in, workers)
        if not signals:
            break
        started += len(signals)
    os.close(ready_in)
    if started < workers:  # a worker could not take the port (it said why on stderr)
        stop(signal.SIGTERM, None)
        for child in children:
            os.waitpid(child, 0)
        raise OSError(f"only {started} of {workers} worker processes could listen")
    print(ready_line, flush=True)
    restarts: list[float] = []
    while children:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            return
        except InterruptedError:
            continue
        children.discard(pid)
        if stopping:
            continue
        now = time.monotonic()
        restarts = [moment for moment in restarts if moment > now - RESTART_WINDOW] + [now]
        ended = describe_exit(status)
        if len(restarts) > RESTARTS_PER_WINDOW:
            stop(signal.SIGTERM, None)
            for child in list(children):
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(child, 0)
            raise WorkersFailed(
                f"worker processes ended {len(restarts)} times within {RESTART_WINDOW:g} seconds (the last one "
                f"{ended}); stopped. The log above says why."
            )
        print(f"mkdocs-vault-mcp: worker process {pid} {ended}; starting another", file=sys.stderr, flush=True)
        fork_worker(announce=False)


def _end_with_parent(alive: int) -> None:
    """In a worker: stop (as SIGTERM does) when the pipe `alive` ends, i.e. when the parent process has ended (if
    it ended before this worker watched, at once)."""

    def watch() -> None:
        with contextlib.suppress(OSError):
            os.read(alive, 1)  # returns when the last writing end, the parent's, is closed
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)  # uvicorn ends its requests first; a worker that has not ended by then is ended
        os._exit(1)

    threading.Thread(target=watch, name="vault-mcp-parent-watch", daemon=True).start()


def describe_exit(status: int) -> str:
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
        return f"was killed by signal {-code}"
    return f"exited with status {code}"


def url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


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
