"""A hosted `/mcp` beside a deployed site: an ASGI application for any ASGI server.

    uvicorn --factory mkdocs_vault_mcp.asgi:create_app --http mkdocs_vault_mcp.asgi:GuardedH11Protocol \
        --host 0.0.0.0 --port 8000
    gunicorn -k uvicorn.workers.UvicornWorker "mkdocs_vault_mcp.asgi:create_app()"
    hypercorn --bind 0.0.0.0:8000 "mkdocs_vault_mcp.asgi:create_app()"

Configured by the factory's arguments or, for each one left out, by an environment variable (`VAULT_MCP_*`, see
`SETTINGS`), checked as `serve`'s options are (command_line.py). Stateless by default: every request stands alone,
so any replica behind a load balancer answers any request and none needs sticky sessions. A health endpoint
(`/healthz`) answers 200 when the index answers, for container and Kubernetes probes; it needs no token and takes
any Host.

The app is the one `serve --transport http` serves (streamable_http.guarded_app), with the same Host, Origin, token
and body checks. Its slow-connection guard and connection cap live in the HTTP protocol, which an ASGI app cannot
choose: uvicorn runs them with `--http mkdocs_vault_mcp.asgi:GuardedH11Protocol`, as the container image does.
Under another server, or uvicorn without it, the app logs at its first request that they are off.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
from collections.abc import Callable
from typing import Any

from starlette.middleware.cors import CORSMiddleware

from .cli import Source, UsageError, served_site
from .command_line import DEFAULT_PATH, download_deadline, endpoint_path, megabytes, model_folder, refresh_interval
from .mcp.download import DOWNLOAD_SECONDS
from .mcp.http_connections import ConnectionGuard
from .mcp.http_guard import BlankToken, bearer_token
from .mcp.remote_index import DEFAULT_MAX_MB, DEFAULT_REFRESH_SECONDS
from .mcp.server import IndexReader, create_server
from .mcp.streamable_http import guarded_app

log = logging.getLogger(__name__)

# Each setting's environment variable, read when the factory is not given the setting.
SETTINGS = {
    "site": "VAULT_MCP_SITE",  # built site folder, index.sqlite, mike checkout, or a deployed site's URL (required)
    "path": "VAULT_MCP_PATH",  # the MCP endpoint (default /mcp)
    "allowed_hosts": "VAULT_MCP_ALLOWED_HOSTS",  # Host names clients call it by, comma-separated
    "token": "VAULT_MCP_TOKEN",  # a bearer token clients must send (default: none)
    "cors_origins": "VAULT_MCP_CORS_ORIGINS",  # browser origins allowed to call it, comma-separated (default: none)
    "stateful": "VAULT_MCP_STATEFUL",  # 1: keep sessions (one replica, one process only)
    "health_path": "VAULT_MCP_HEALTH_PATH",  # default /healthz
    "cache_dir": "VAULT_MCP_CACHE",  # a site's URL: the cache folder
    "refresh": "VAULT_MCP_REFRESH",  # a site's URL: seconds between checks for a new index
    "max_size": "VAULT_MCP_MAX_SIZE",  # a site's URL: the largest index taken, in MB
    "download_timeout": "VAULT_MCP_DOWNLOAD_TIMEOUT",  # a site's URL: seconds a whole download may take
    "semantic_model": "VAULT_MCP_SEMANTIC_MODEL",  # the folder of the model of the index's vectors
}
TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")
DEFAULT_HEALTH_PATH = "/healthz"

# This process's connections, for every app the factory makes in it; uvicorn runs the protocol with
# `--http mkdocs_vault_mcp.asgi:GuardedH11Protocol`.
CONNECTIONS = ConnectionGuard(
    unguarded_warning="The HTTP server does not run the slow-connection guard and connection cap of "
    "mkdocs_vault_mcp: a client that sends part of a request holds its connection for ever. Under uvicorn, add "
    "--http mkdocs_vault_mcp.asgi:GuardedH11Protocol (as the container image does); under another "
    "server, set its own request-read timeout and connection limit."
)
GuardedH11Protocol = CONNECTIONS.protocol()


class ConfigurationError(SystemExit):
    """A setting the app cannot start with; the message names the setting and what it accepts. A SystemExit, so that
    an ASGI server calling the factory stops with this one line and no traceback."""

    def __init__(self, message: str) -> None:
        super().__init__(f"mkdocs-vault-mcp: error: {message}")


def setting(name: str, argument: Any) -> Any:
    """The factory's argument for setting `name`, else its environment variable's value, else None (an empty
    variable is an unset one)."""
    return argument if argument is not None else os.environ.get(SETTINGS[name]) or None


def listed(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else value
    return [item.strip() for item in items if item.strip()]


def checked(name: str, argument: Any, kind: Callable[[str], Any], default: Any) -> Any:
    """Setting `name` as `serve`'s option of the same meaning takes it (`kind` is its parser), else `default`."""
    value = setting(name, argument)
    if value is None:
        return default
    try:
        return kind(str(value))
    except argparse.ArgumentTypeError as error:
        raise ConfigurationError(f"{SETTINGS[name]} (create_app's {name}): {error}") from None


def token_setting(argument: str | None) -> str | None:
    """The bearer token without the white space around it; None when none is set; refused when blank."""
    value = argument if argument is not None else os.environ.get(SETTINGS["token"])
    if value is None:
        return None
    try:
        return bearer_token(value)
    except BlankToken:
        raise ConfigurationError(
            f"{SETTINGS['token']} (create_app's token) is set but empty or only white space; set it to the bearer "
            "token clients send, or unset it to serve without one."
        ) from None


def switch(text: str) -> bool:
    if text.strip().lower() not in TRUE + FALSE:
        raise argparse.ArgumentTypeError(f"expected one of {', '.join(TRUE + FALSE)}, got {text[:100]!r}")
    return text.strip().lower() in TRUE


def create_app(
    site: str | None = None,
    *,
    path: str | None = None,
    allowed_hosts: str | list[str] | None = None,
    token: str | None = None,
    cors_origins: str | list[str] | None = None,
    stateful: bool | None = None,
    health_path: str | None = None,
    cache_dir: str | None = None,
    refresh: float | None = None,
    max_size: int | None = None,
    download_timeout: float | None = None,
    semantic_model: str | None = None,
) -> Any:
    """The ASGI app serving the MCP tools and resources of one site at `path`."""
    site = setting("site", site)
    if not site:
        raise ConfigurationError(
            f"No site to serve: give create_app(site=...) or set {SETTINGS['site']} to a built site folder, the path "
            "of an index.sqlite, or a deployed site's URL."
        )
    endpoint = checked("path", path, endpoint_path, DEFAULT_PATH)
    health = checked("health_path", health_path, endpoint_path, DEFAULT_HEALTH_PATH)
    if endpoint == health:
        raise ConfigurationError(
            f"{SETTINGS['path']} and {SETTINGS['health_path']} are both {endpoint!r}; give the MCP endpoint and the "
            "health endpoint paths of their own."
        )
    origins = listed(setting("cors_origins", cors_origins))
    secret = token_setting(token)
    keep_sessions = checked("stateful", None if stateful is None else str(int(stateful)), switch, False)
    source = Source(
        site,
        setting("cache_dir", cache_dir),
        checked("max_size", max_size, megabytes, DEFAULT_MAX_MB),
        checked("refresh", refresh, refresh_interval, DEFAULT_REFRESH_SECONDS),
        checked("download_timeout", download_timeout, download_deadline, DOWNLOAD_SECONDS),
        checked("semantic_model", semantic_model, model_folder, None),
        SETTINGS["cache_dir"],
    )
    try:
        reader, versions = served_site(source)
    except UsageError as error:
        raise ConfigurationError(str(error)) from None
    # Bound to every address, as in a container: a loopback Host is accepted only on a loopback connection.
    app: Any = guarded_app(
        create_server(reader, versions=versions),
        "0.0.0.0",
        endpoint,
        listed(setting("allowed_hosts", allowed_hosts)),
        secret,
        keep_sessions,
        connections=CONNECTIONS,
        origins=origins,
    )
    app = WithHealth(app, health, reader)
    return with_cors(app, origins) if origins else app


def with_cors(app: Any, origins: list[str]) -> Any:
    """`app` answering the CORS preflight of browser clients from `origins`."""
    return CORSMiddleware(
        app,
        allow_origins=origins,
        allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
        allow_headers=[
            "Authorization",
            "Content-Type",
            "Accept",
            "Last-Event-ID",
            "Mcp-Session-Id",
            "Mcp-Protocol-Version",
            "Mcp-Method",
            "Mcp-Name",
        ],
        expose_headers=["Mcp-Session-Id", "WWW-Authenticate"],
        max_age=3600,
    )


class WithHealth:
    """Answers the health path itself (200 with the page count when the index answers, else 503), before any Host or
    token check: probes come from the orchestrator, by the pod's address."""

    def __init__(self, app: Any, path: str, reader: IndexReader) -> None:
        self.app, self.path, self.reader = app, path, reader

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        try:
            count = "SELECT count(*) FROM documents"
            documents = await self.reader.read(lambda conn: conn.execute(count).fetchone()[0])
            status, body = 200, {"status": "ok", "documents": documents, **self.reader.meta(self.reader.is_pending())}
        except Exception as error:  # whatever keeps the index from answering makes the replica unready
            status, body = 503, {"status": "unavailable", "problem": str(error)}
        data = json.dumps(body).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(data)).encode()),
                    (b"cache-control", b"no-store"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": data if scope["method"] != "HEAD" else b""})
