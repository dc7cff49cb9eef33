"""A hosted `/mcp` beside a deployed site: an ASGI application for any ASGI server.

    uvicorn --factory mkdocs_vault_mcp.asgi:create_app --host 0.0.0.0 --port 8000
    gunicorn -k uvicorn.workers.UvicornWorker "mkdocs_vault_mcp.asgi:create_app()"
    hypercorn --bind 0.0.0.0:8000 "mkdocs_vault_mcp.asgi:create_app()"

Configured by the factory's arguments or, for each one left out, by an environment variable (`VAULT_MCP_*`, see
`SETTINGS`). Stateless by default: every request stands alone, so any replica behind a load balancer answers any
request and none needs sticky sessions. A health endpoint (`/healthz`) answers 200 when the index answers, for
container and Kubernetes probes; it needs no token and takes any Host.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from mcp.server.lowlevel import Server
from starlette.middleware.cors import CORSMiddleware

from .mcp import streamable_http
from .mcp.http_guard import Guard, transport_security
from .mcp.remote_index import DEFAULT_MAX_MB, DEFAULT_REFRESH_SECONDS, RemoteIndex, is_url
from .mcp.server import IndexReader, create_server

log = logging.getLogger(__name__)

# Each setting's environment variable, read when the factory is not given the setting.
SETTINGS = {
    "site": "VAULT_MCP_SITE",  # built site folder, index.sqlite, or a deployed site's URL (required)
    "path": "VAULT_MCP_PATH",  # the MCP endpoint (default /mcp)
    "allowed_hosts": "VAULT_MCP_ALLOWED_HOSTS",  # Host names clients call it by, comma-separated
    "token": "VAULT_MCP_TOKEN",  # a bearer token clients must send (default: none)
    "cors_origins": "VAULT_MCP_CORS_ORIGINS",  # browser origins allowed to call it, comma-separated (default: none)
    "stateful": "VAULT_MCP_STATEFUL",  # 1: keep sessions (one replica, one process only)
    "health_path": "VAULT_MCP_HEALTH_PATH",  # default /healthz
    "cache_dir": "VAULT_MCP_CACHE",  # a site's URL: the cache folder
    "refresh": "VAULT_MCP_REFRESH",  # a site's URL: seconds between checks for a new index
    "max_size": "VAULT_MCP_MAX_SIZE",  # a site's URL: the largest index taken, in MB
    "semantic_model": "VAULT_MCP_SEMANTIC_MODEL",  # the folder of the model of the index's vectors
}
TRUE = ("1", "true", "yes", "on")


class ConfigurationError(Exception):
    """A setting the app cannot start with; the message names the setting and what it accepts."""


def setting(name: str, argument: Any) -> Any:
    """The factory's argument for setting `name`, else its environment variable's value, else None."""
    return argument if argument is not None else os.environ.get(SETTINGS[name]) or None


def listed(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else value
    return [item.strip() for item in items if item.strip()]


def number(name: str, value: Any, default: float) -> float:
    if value is None:
        return default
    try:
        return float(value)
    except ValueError:
        raise ConfigurationError(f"{SETTINGS[name]}={value!r} is not a number.") from None


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
    semantic_model: str | None = None,
) -> Any:
    """The ASGI app serving the MCP tools and resources of one site at `path`."""
    site = setting("site", site)
    if not site:
        raise ConfigurationError(
            f"No site to serve: give create_app(site=...) or set {SETTINGS['site']} to a built site folder, the path "
            "of an index.sqlite, or a deployed site's URL."
        )
    endpoint = setting("path", path) or "/mcp"
    health = setting("health_path", health_path) or "/healthz"
    hosts = listed(setting("allowed_hosts", allowed_hosts))
    origins = listed(setting("cors_origins", cors_origins))
    secret = setting("token", token)
    keep_sessions = stateful if stateful is not None else str(setting("stateful", None) or "").lower() in TRUE

    index_file, remote = site_index(
        site, setting("cache_dir", cache_dir), setting("max_size", max_size), setting("refresh", refresh)
    )
    model_folder = setting("semantic_model", semantic_model)
    if model_folder and not Path(model_folder).is_dir():
        raise ConfigurationError(
            f"{SETTINGS['semantic_model']}={model_folder!r} is not a folder; give the folder holding the model's "
            "tokenizer.json and ONNX file."
        )
    reader = IndexReader(
        index_file,
        describe=remote.describe if remote else None,
        model_folder=Path(model_folder) if model_folder else None,
    )
    # Bound to every address, as in a container: a loopback Host is accepted only on a loopback connection.
    host = "0.0.0.0"
    guarded = Guard(mcp_app(create_server(reader), host, endpoint, hosts, origins, keep_sessions), host, secret)
    app: Any = WithHealth(guarded, health, reader)
    return with_cors(app, origins) if origins else app


def site_index(site: str, cache_dir: str | None, max_size: Any, refresh: Any) -> tuple[Path, RemoteIndex | None]:
    """The index to serve: a built site's, checked, or a deployed site's, downloaded (with its RemoteIndex)."""
    if not is_url(site):
        from .cli import UsageError, check_index, index_path

        try:
            index_file = index_path(site)
            check_index(index_file)
        except UsageError as error:
            raise ConfigurationError(str(error)) from None
        return index_file, None
    from .mcp.remote_index import DownloadRefused

    remote = RemoteIndex(
        site,
        Path(cache_dir) if cache_dir else None,
        int(number("max_size", max_size, DEFAULT_MAX_MB)) << 20,
        number("refresh", refresh, DEFAULT_REFRESH_SECONDS),
    )
    try:
        return remote.start(), remote
    except DownloadRefused as error:
        raise ConfigurationError(f"{error} No cached copy to serve instead ({remote.folder}).") from None


def mcp_app(server: Server, host: str, endpoint: str, hosts: list[str], origins: list[str], stateful: bool) -> Any:
    """The SDK's Streamable HTTP app, answering the allowed Host names and the browser origins given."""
    security = transport_security(host, hosts)
    # The SDK refuses a request whose Origin it was not told of; a browser client's origin is one.
    security.allowed_origins = [*security.allowed_origins, *origins]
    return streamable_http.mcp_app(server, host, endpoint, security, stateful)


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
