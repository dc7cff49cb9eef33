"""A web server on loopback that misbehaves as a hostile or broken site does, one route per misbehaviour: the tests
of `serve URL` point it at a route and see what the download makes of it."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from helpers.ports import free_port

Route = Callable[[BaseHTTPRequestHandler], None]
SCRIPT = Path(sys.executable).parent / "mkdocs-vault-mcp"


class HostileSite:
    """A threaded HTTP server on 127.0.0.1; `routes` maps a path to what is done with a GET of it (404 otherwise)."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []  # path and headers of every GET, in order
        self.stopping = threading.Event()
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                site.requests.append((self.path, dict(self.headers.items())))
                route = site.routes.get(self.path.partition("?")[0])
                if route is None:
                    self.send_error(404, "File not found")
                else:
                    route(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.port = free_port()
        self.http = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.http.daemon_threads = True
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def trickle(self, handler: BaseHTTPRequestHandler, data: bytes, every: float) -> None:
        """Send `data` one byte at a time, `every` seconds apart, until it is sent, the client leaves or the server
        stops."""
        for byte in data:
            if self.stopping.wait(every):
                return
            try:
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
            except OSError:
                return

    def stop(self) -> None:
        self.stopping.set()
        self.http.shutdown()
        self.http.server_close()


def serve_bytes(data: bytes, etag: str | None = None) -> Route:
    """A route answering 200 with `data` (304 when the client already has `etag`)."""

    def route(handler: BaseHTTPRequestHandler) -> None:
        if etag is not None and handler.headers.get("If-None-Match") == etag:
            handler.send_response(304)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(data)))
        if etag is not None:
            handler.send_header("ETag", etag)
        handler.end_headers()
        handler.wfile.write(data)

    return route


def redirect(location: str, status: int = 302) -> Route:
    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        handler.send_header("Location", location)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    return route


def raw(answer: bytes) -> Route:
    """A route that answers `answer` as it is, whatever it is, and closes the connection."""

    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.wfile.write(answer)
        handler.close_connection = True

    return route


def trickle_headers(site: HostileSite, every: float) -> Route:
    """A status line, then headers that never end: one byte every `every` seconds."""

    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
        handler.wfile.flush()
        site.trickle(handler, b"X-Slow: " + b"a" * 100_000, every)

    return route


def trickle_body(site: HostileSite, every: float, length: int = 1 << 20) -> Route:
    """Headers announcing `length` bytes, then a body of one byte every `every` seconds."""

    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(length))
        handler.end_headers()
        handler.wfile.flush()
        site.trickle(handler, b"SQLite format 3\x00" + bytes(length - 16), every)

    return route


def endless_body(site: HostileSite) -> Route:
    """A chunked answer that never ends, as fast as it can be read: only the size limit stops it."""

    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        chunk = b"%x\r\n%s\r\n" % (1 << 16, bytes(1 << 16))
        try:
            while not site.stopping.is_set():
                handler.wfile.write(chunk)
        except OSError:
            return

    return route


class Listener:
    """A TCP listener on loopback that records whether anything connected (a redirect must not reach it)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.sock = socket.create_server(("127.0.0.1", self.port))
        self.sock.settimeout(0.2)
        self.connections = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.accept, daemon=True)
        self.thread.start()

    def accept(self) -> None:
        while not self.stopping.is_set():
            try:
                connection, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            connection.close()

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(5)
        self.sock.close()


def wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def serve(url: str, cache: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """`serve URL` run to its end (it ends at once when the index cannot be had), its output kept."""
    return subprocess.run(
        [str(SCRIPT), "serve", url, "--cache", str(cache), *options],
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
    )


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    """The one line of error that a `serve` that could not start printed (exit status 2, no traceback)."""
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert len(errors) == 1, done.stderr
    return errors[0]
