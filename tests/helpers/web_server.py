"""A real HTTP server (the standard library's) on loopback, serving a folder in a thread, as a static host serves a
deployed site; it records the path and headers of every request."""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from helpers.ports import free_port


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class WebServer:
    """The folder `folder` at `url`; `requests` holds (path, headers) of every GET, in order."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.requests: list[tuple[str, dict[str, str]]] = []
        server = self

        class Recording(QuietHandler):
            def do_GET(self) -> None:
                server.requests.append((self.path, dict(self.headers.items())))
                super().do_GET()

        handler = functools.partial(Recording, directory=str(folder))
        self.http = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()
