"""The MCP tools over Streamable HTTP: beside `mkdocs serve` (a background thread), or on their own."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mkdocs.plugins import get_plugin_logger

from .freshness import Freshness
from .server import IndexReader, create_server

log = get_plugin_logger("vault-mcp")

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def transport_security(host: str, allowed_hosts: list[str]) -> TransportSecuritySettings:
    """DNS rebinding protection: only loopback names, plus the hosts the owner allowed, may call."""
    hosts = [f"{name}:*" for name in LOOPBACK_NAMES] + [h if ":" in h else f"{h}:*" for h in allowed_hosts]
    if host not in ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::"):
        hosts.append(f"{host}:*")
    origins = [f"http://{h}" for h in hosts] + [f"https://{h}" for h in hosts]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def bind(host: str, port: int) -> socket.socket:
    """Bind before starting, so a busy port is an error here and not a dead thread."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def http_server(server: MCPServer, sock: socket.socket, host: str, path: str, allowed_hosts: list[str]) -> uvicorn.Server:
    app = server.streamable_http_app(
        streamable_http_path=path, transport_security=transport_security(host, allowed_hosts), host=host
    )
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on", timeout_graceful_shutdown=2)
    return uvicorn.Server(config)


def serve_http(server: MCPServer, *, host: str, port: int, path: str, allowed_hosts: list[str]) -> None:
    """Serve until interrupted (the `mkdocs-vault-mcp serve --transport http` command)."""
    sock = bind(host, port)
    print(f"MCP server at http://{url_host(host)}:{port}{path}", flush=True)
    asyncio.run(http_server(server, sock, host, path, allowed_hosts).serve(sockets=[sock]))


def url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


class LiveServer:
    """The MCP server beside `mkdocs serve`: reads the working index that every rebuild updates in place."""

    def __init__(self, index_path: Path, freshness: Freshness, options: Any, mkdocs_config: Any) -> None:
        self.index_path = index_path
        self.freshness = freshness
        self.options = options
        self.mkdocs_config = mkdocs_config
        self.thread: threading.Thread | None = None
        self.http: uvicorn.Server | None = None
        self.observer: Any = None

    @property
    def url(self) -> str:
        return f"http://{url_host(self.options.mcp_host)}:{self.options.mcp_port}{self.options.mcp_path}"

    def start(self) -> None:
        host, port = self.options.mcp_host, self.options.mcp_port
        try:
            sock = bind(host, port)
        except OSError as error:
            log.warning(
                f"MCP server not started: cannot listen on {host}:{port} ({error.strerror}). "
                "Set the plugin option mcp_port to a free port, or serve_mcp: false to turn it off."
            )
            return
        reader = IndexReader(self.index_path, self.freshness, wait_timeout=self.options.wait_timeout)
        server = create_server(reader, name=f"{self.mkdocs_config.site_name} (mkdocs-vault-mcp)")
        self.http = http_server(server, sock, host, self.options.mcp_path, self.options.mcp_allowed_hosts)
        self.thread = threading.Thread(
            target=lambda: asyncio.run(self.http.serve(sockets=[sock])), name="vault-mcp-http", daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.http.started and self.thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        log.info(f"MCP server (Streamable HTTP) at {self.url}")

    def watch(self, paths: list[str]) -> None:
        """A saved file is a pending index update until the rebuild it causes has committed."""
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        freshness = self.freshness

        class Handler(FileSystemEventHandler):
            def __init__(self, only: str | None = None) -> None:
                self.only = only

            def on_any_event(self, event: Any) -> None:
                # Reads (the build's own included) are not changes; MkDocs rebuilds on the others.
                if event.is_directory or event.event_type in ("opened", "closed_no_write"):
                    return
                if self.only is None or self.only in (event.src_path, getattr(event, "dest_path", None)):
                    freshness.change_seen()

        self.observer = Observer()
        for path in paths:
            target = Path(path).resolve()
            if target.is_file():
                self.observer.schedule(Handler(str(target)), str(target.parent), recursive=False)
            elif target.is_dir():
                self.observer.schedule(Handler(), str(target), recursive=True)
        self.observer.start()

    def stop(self) -> None:
        if self.observer is not None:
            self.observer.stop()
            self.observer = None
        if self.http is not None and self.thread is not None:
            self.http.should_exit = True
            self.thread.join(timeout=5)
        self.http = self.thread = None
