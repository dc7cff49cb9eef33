"""The MCP server beside `mkdocs serve`: a background thread serving the working index over Streamable HTTP
(`mcp/streamable_http.py`), and the watchers that mark saved files as pending index updates."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import uvicorn
from mkdocs.plugins import get_plugin_logger

from ..adapters import mkdocs_serve
from ..index.freshness import Freshness
from .http_guard import LOOPBACK_ADDRESSES
from .server import IndexReader, create_server
from .streamable_http import answering_endpoints, bind, http_server, serve_on, wait_for_answers

log = get_plugin_logger("vault-mcp")

# Loggers of the HTTP stack; beside `mkdocs serve` their records go to the plugin's log at debug level.
HTTP_LOGGERS = ("mcp", "uvicorn", "sse_starlette", "starlette")
STOP_SECONDS = 3.0


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
        """Where clients reach it: for a bind to every address, the loopback URL and each allowed host's (the Host
        check refuses http://0.0.0.0:PORT)."""
        return " and ".join(
            answering_endpoints(self.host, self.port, self.options.mcp_path, self.options.mcp_allowed_hosts)
        )

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def reserve(self) -> bool:
        token_env = getattr(self.options, "mcp_token_env", None)
        if token_env:
            # Stripped, as `serve --token-env` does: a trailing newline is no part of the token a client sends.
            self.token = (os.environ.get(token_env) or "").strip() or None
            if self.token is None:
                log.warning(
                    f"MCP server not started: the plugin option mcp_token_env names the environment variable "
                    f"{token_env}, which is not set, empty or only white space. Set it to the bearer token clients "
                    "must send."
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
                f"clients must send the bearer token of {token_env}"
                if self.token
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
            target=lambda: asyncio.run(serve_on(http, sock)), name="vault-mcp-http", daemon=True
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
            # A call waiting for a rebuild would hold the shutdown up: it answers stale, and its answer goes out
            # before the server stops.
            self.freshness.close()
            wait_for_answers(self.http, STOP_SECONDS)
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
    changes the folder), and no tool can set it back or into the future. One stat per file and folder.
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

    There is no public way to ask (adapters/mkdocs_serve.py); with a server other than MkDocs' LiveReloadServer,
    it does nothing, and the save stays pending until `settle` runs out.
    """

    def __init__(self, mkdocs_server: Any) -> None:
        self.server = mkdocs_server

    def __call__(self) -> None:
        observer = getattr(self.server, "observer", None)
        if observer is None or observer.is_alive():
            return  # MkDocs watches: it saw the save itself
        if mkdocs_serve.request_rebuild(self.server):
            log.debug("A page was saved before MkDocs watched for changes; rebuilding")


def schedule(observer: Any, targets: dict[Path, bool], freshness: Freshness, rebuild: Any = lambda: None) -> Any:
    from watchdog import events

    # Writes, creations, removals and moves only: MkDocs rebuilds on those. Opening and reading are left
    # to the kernel, so the many reads of a rebuild cost the watcher nothing.
    changes = [
        events.FileCreatedEvent,
        events.FileModifiedEvent,
        events.FileDeletedEvent,
        events.FileMovedEvent,
        events.FileClosedEvent,
    ]

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
