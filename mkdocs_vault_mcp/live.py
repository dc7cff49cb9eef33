"""The MCP tools over Streamable HTTP: beside `mkdocs serve` (a background thread), or on their own."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import logging
import os
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mkdocs.plugins import get_plugin_logger

from . import limits
from .freshness import Freshness
from .server import IndexReader, create_server

log = get_plugin_logger("vault-mcp")

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
LOOPBACK_ADDRESSES = ("127.0.0.1", "localhost", "::1")
# Loggers of the HTTP stack; beside `mkdocs serve` their records go to the plugin's log at debug level.
HTTP_LOGGERS = ("mcp", "uvicorn", "sse_starlette", "starlette")
STOP_SECONDS = 3.0


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

    def __init__(self, app: Any, host: str, token: str | None) -> None:
        self.app = app
        self.every_address = host in WILDCARD_ADDRESSES
        self.expected = token.encode() if token else None

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            if self.every_address and not arrived_through_loopback(scope) and names_loopback(headers.get(b"host")):
                await refuse(send, 421, "Misdirected request: a loopback Host on a connection from the network")
                return
            if self.expected is not None and not has_token(headers.get(b"authorization", b""), self.expected):
                await refuse(send, 401, "Unauthorized: send the bearer token (Authorization: Bearer ...)",
                             [(b"www-authenticate", b'Bearer realm="mcp"')])
                return
        await self.app(scope, receive, send)


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
    server: MCPServer,
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
        evict_the_oldest_idle_session_when_full(server._lowlevel_server._session_manager)
    config = uvicorn.Config(
        Guard(app, host, token),
        log_config=None,
        access_log=False,
        lifespan="on",
        ws="none",
        timeout_graceful_shutdown=1,
    )
    return uvicorn.Server(config)


def evict_the_oldest_idle_session_when_full(manager: Any) -> None:
    """At the session limit, the SDK refuses every new client (503) until a session ends or expires; here the
    session idle the longest makes room instead (its client gets 404 on its next request and starts again,
    as after an expiry). Uses the SDK's session table and each session's idle deadline (mcp 2.3 internals).
    """
    admit = manager._admit_session

    def admit_session(requestor: Any) -> Any:
        if manager.max_sessions is not None and len(manager._server_instances) >= manager.max_sessions:
            idle = [
                (transport.idle_scope.deadline, session_id)
                for session_id, transport in manager._server_instances.items()
                if transport.idle_scope is not None and not transport._requests_in_flight
            ]
            if idle:
                oldest = min(idle)[1]  # the earliest idle deadline: the longest idle
                transport = manager._server_instances.pop(oldest)
                manager._session_owners.pop(oldest, None)
                transport.idle_scope.cancel()  # ends the session's task, which terminates it
        return admit(requestor)

    manager._admit_session = admit_session


def serve_http(
    server: MCPServer,
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
    address = endpoint(host, port, path)
    if workers == 1:
        print(f"MCP server at {address}", flush=True)
        asyncio.run(http_server(server, host, path, allowed_hosts, token, stateful).serve(sockets=[sock]))
        return
    sock.close()  # the port is free: each worker takes it with a socket of its own

    def serve(listening_now: Callable[[], None]) -> None:
        listening = bind(host, port, share_port=True)
        listening_now()
        asyncio.run(http_server(server, host, path, allowed_hosts, token, stateful).serve(sockets=[listening]))

    serve_from_processes(serve, workers, f"MCP server at {address} ({workers} worker processes)")


def serve_from_processes(serve: Callable[[Callable[[], None]], None], workers: int, ready_line: str) -> None:
    """Fork `workers` processes that each `serve`, print `ready_line` once all listen (each calls the function
    `serve` is given once it does), and wait for them.
    SIGINT or SIGTERM to this process stops them all.

    Forked, not spawned: the server and its tools are built once, before, and each process opens its own
    read-only connections to the index when it first answers (SQLite connections must not cross a fork).
    """
    ready_in, ready_out = os.pipe()
    children: set[int] = set()
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:
            os.close(ready_in)
            status = 1
            try:
                # uvicorn handles SIGINT and SIGTERM itself, and ends its requests
                serve(lambda: (os.write(ready_out, b"+"), os.close(ready_out)))
                status = 0
            finally:
                os._exit(status)
        children.add(pid)
    os.close(ready_out)

    def stop(signum: int, frame: Any) -> None:
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
    while children:
        try:
            pid, _ = os.wait()
        except ChildProcessError:
            return
        children.discard(pid)


def url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def endpoint(host: str, port: int, path: str) -> str:
    return f"http://{url_host(host)}:{port}{path}"


class LiveServer:
    """The MCP server beside `mkdocs serve`, over the working index that every rebuild updates in place.

    `reserve` takes the port when the serve run starts (outside any build, so a busy port is a warning that
    `--strict` does not turn into a failed build), `start` serves once the first build has committed the
    index, `watch` marks saved files as pending index updates, `stop` ends it all with the serve run.
    """

    def __init__(self, options: Any, freshness: Freshness) -> None:
        self.options = options
        self.freshness = freshness
        self.host: str = options.mcp_host
        self.port: int = options.mcp_port
        self.socket: socket.socket | None = None
        self.thread: threading.Thread | None = None
        self.http: uvicorn.Server | None = None
        self.observer: Any = None
        self.log_handler: ForwardToPluginLog | None = None
        self.token: str | None = None  # never logged

    @property
    def url(self) -> str:
        return endpoint(self.host, self.port, self.options.mcp_path)

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def reserve(self) -> bool:
        token_env = getattr(self.options, "mcp_token_env", None)
        if token_env:
            self.token = os.environ.get(token_env) or None
            if self.token is None:
                log.warning(
                    f"MCP server not started: the plugin option mcp_token_env names the environment variable "
                    f"{token_env}, which is not set (or empty). Set it to the bearer token clients must send."
                )
                return False
        try:
            self.socket = bind(self.host, self.port)
        except OSError as error:
            log.warning(
                f"MCP server not started: cannot listen on {self.host}:{self.port} ({error.strerror or error}). "
                f"Set the plugin option mcp_port to a free port (or serve_mcp: false). mkdocs serve goes on "
                "without MCP."
            )
            return False
        if self.host not in LOOPBACK_ADDRESSES:
            protection = (
                f"clients must send the bearer token of {token_env}" if self.token
                else "without authentication (set the plugin option mcp_token_env to require a bearer token)"
            )
            log.warning(
                f"The MCP server listens on {self.host}, beyond this machine, {protection}. Clients must call it "
                "by a host name listed in the plugin option mcp_allowed_hosts; loopback names are accepted only "
                "on connections from this machine."
            )
        return True

    def start(self, index_path: Path, mkdocs_config: Any) -> bool:
        """Serve the tools from a background thread; False (after a warning) when it cannot."""
        if self.socket is None:
            return False
        dev_port = mkdocs_config.dev_addr.port if mkdocs_config.dev_addr else None
        if dev_port == self.port:
            self.release()
            log.warning(
                f"MCP server not started: mcp_port {self.port} is the port of mkdocs serve itself (dev_addr). "
                "Set the plugin option mcp_port to another port."
            )
            return False
        reader = IndexReader(index_path, self.freshness, wait_timeout=self.options.wait_timeout)
        server = create_server(reader, name=f"{mkdocs_config.site_name} (mkdocs-vault-mcp)")
        self.http = http_server(
            server,
            self.host,
            self.options.mcp_path,
            self.options.mcp_allowed_hosts,
            self.token,
            stateful=getattr(self.options, "mcp_stateful_sessions", False),
        )
        self._route_http_logs()
        sock, http = self.socket, self.http
        self.thread = threading.Thread(
            target=lambda: asyncio.run(http.serve(sockets=[sock])), name="vault-mcp-http", daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 10
        while not http.started and self.thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        if not http.started:
            self.stop()
            log.warning(f"MCP server not started: the HTTP server on {self.host}:{self.port} failed to start.")
            return False
        log.info(f"MCP server for AI agents (Streamable HTTP): {self.url}")
        return True

    def watch(self, paths: Iterable[str], mkdocs_server: Any = None) -> None:
        """A saved file is a pending index update until the rebuild it causes has committed.

        MkDocs notices changes by polling every half second; the system's file events arrive sooner, and
        a call with wait_for_pending_writes also asks the files (their change times) before it trusts them.

        MkDocs starts watching only once the first build is over and `mkdocs_server` serves: a page saved
        before that (after the first build read it) would never be rebuilt, nor indexed. So a save found
        from the first build's start until MkDocs watches makes MkDocs rebuild.
        """
        from watchdog.observers import Observer
        from watchdog.observers.polling import PollingObserver

        targets = watch_targets(paths)
        self.freshness.probe = lambda since_ns: changed_since(targets, since_ns)
        rebuild = RebuildBeforeMkDocsWatches(mkdocs_server)
        observer = Observer()
        try:
            schedule(observer, targets, self.freshness, rebuild).start()
            self.observer = observer
        except OSError as error:  # e.g. the inotify watch limit
            observer.stop()
            log.debug(f"File events unavailable ({error}); polling for changes instead")
            self.observer = schedule(PollingObserver(timeout=0.5), targets, self.freshness, rebuild)
            self.observer.start()
        # Saved since the first build started, before these watchers: only the change times tell.
        if self.freshness.catch_up_with_saves():
            rebuild()

    def release(self) -> None:
        if self.socket is not None:
            self.socket.close()
            self.socket = None

    def stop(self) -> None:
        if self.observer is not None:
            self.observer.stop()
            self.observer = None
        if self.log_handler is not None:
            self.log_handler.stopping = True  # open event streams are cut at shutdown, as they must be
        if self.http is not None and self.thread is not None:
            self.freshness.close()  # a call waiting for a rebuild would hold the shutdown up
            self.http.should_exit = True
            self.thread.join(timeout=STOP_SECONDS)
            if self.thread.is_alive():  # a connection that would not close: drop it
                self.http.force_exit = True
                self.thread.join(timeout=1)
        self.http = self.thread = None
        self.release()  # uvicorn closed it already when it served; closing twice is harmless
        self._restore_http_logs()

    def _route_http_logs(self) -> None:
        """Keep uvicorn's and the SDK's records (a refused Host header, say) off the MkDocs console.

        They go to the plugin's log at debug level (`mkdocs serve --verbose` shows them), errors at info
        level: never as warnings, which `--strict` would count against the build that runs meanwhile.
        """
        self.log_handler = ForwardToPluginLog()
        for name in HTTP_LOGGERS:
            logger = logging.getLogger(name)
            logger.addHandler(self.log_handler)
            logger.propagate = False

    def _restore_http_logs(self) -> None:
        if self.log_handler is None:
            return
        for name in HTTP_LOGGERS:
            logger = logging.getLogger(name)
            logger.removeHandler(self.log_handler)
            logger.propagate = True
        self.log_handler = None


class ForwardToPluginLog(logging.Handler):
    stopping = False

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
            if record.exc_info:
                message += "\n" + logging.Formatter().formatException(record.exc_info)
            level = logging.INFO if record.levelno >= logging.ERROR and not self.stopping else logging.DEBUG
            log.log(level, f"MCP HTTP ({record.name}): {message}")
        except Exception:
            self.handleError(record)


def watch_targets(paths: Iterable[str]) -> dict[Path, bool]:
    """Existing paths to watch, each once: folder -> True (recursive), file -> False."""
    targets: dict[Path, bool] = {}
    for path in paths:
        if not path:
            continue
        target = Path(path).resolve()
        if target.is_dir():
            targets[target] = True
        elif target.is_file():
            targets.setdefault(target, False)
    folders = [t for t, recursive in targets.items() if recursive]
    return {
        t: recursive
        for t, recursive in targets.items()
        if not any(folder != t and folder in t.parents for folder in folders)
    }


def changed_since(targets: dict[Path, bool], since_ns: int) -> bool:
    """Whether a watched file or folder changed after `since_ns` (wall clock).

    The change time (ctime) and not mtime: the system sets it on every write, rename and removal (a removal
    changes the folder), and no tool can set it back or into the future. One stat per file and folder:
    ~60 ms for 10,000 pages in 3,000 folders.
    """
    try:
        folders = []
        for target, recursive in targets.items():
            if os.stat(target).st_ctime_ns > since_ns:
                return True
            if recursive:
                folders.append(str(target))
        while folders:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    if entry.stat(follow_symlinks=False).st_ctime_ns > since_ns:
                        return True
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
    except FileNotFoundError:
        return True  # removed since the last look: a change
    return False


class RebuildBeforeMkDocsWatches:
    """Asks MkDocs for a rebuild, as its own watcher does, for a save it has not started watching for yet.

    Uses the flag of MkDocs 1.6's LiveReloadServer that its file watcher sets (there is no public way);
    with another server, it does nothing, and the save stays pending until `settle` runs out.
    """

    def __init__(self, mkdocs_server: Any) -> None:
        self.server = mkdocs_server

    def __call__(self) -> None:
        condition = getattr(self.server, "_rebuild_cond", None)
        observer = getattr(self.server, "observer", None)
        if condition is None or observer is None or observer.is_alive():
            return  # MkDocs watches: it saw the save itself
        log.debug("A page was saved before MkDocs watched for changes; rebuilding")
        with condition:
            self.server._want_rebuild = True
            condition.notify_all()


def schedule(
    observer: Any, targets: dict[Path, bool], freshness: Freshness, rebuild: Any = lambda: None
) -> Any:
    from watchdog import events

    # Writes, creations, removals and moves only: MkDocs rebuilds on those. Opening and reading are left
    # to the kernel, so the 10,000 reads of a rebuild cost the watcher nothing (~0.5 s of CPU otherwise).
    changes = [events.FileCreatedEvent, events.FileModifiedEvent, events.FileDeletedEvent,
               events.FileMovedEvent, events.FileClosedEvent]

    class SavedFile(events.FileSystemEventHandler):
        def __init__(self, only: str | None = None) -> None:
            self.only = only

        def on_any_event(self, event: Any) -> None:
            if event.is_directory or event.event_type in ("opened", "closed_no_write"):
                return
            if self.only is None or self.only in (event.src_path, getattr(event, "dest_path", None)):
                freshness.change_seen()
                rebuild()

    for target, recursive in targets.items():
        if recursive:
            observer.schedule(SavedFile(), str(target), recursive=True, event_filter=changes)
        else:
            observer.schedule(SavedFile(str(target)), str(target.parent), recursive=False, event_filter=changes)
    return observer
