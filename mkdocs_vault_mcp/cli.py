"""The `mkdocs-vault-mcp` command (`serve`, `index`): runs what command_line.py declares and parses."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import socket
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

from . import __version__
from .build_steps.site_folder import SiteError
from .command_line import DEFAULT_HOST, DEFAULT_PATH, DEFAULT_PORT, command_line
from .errors import InvalidArgument
from .index import publish
from .index.schema import FORMAT_VERSION
from .mcp.download import check_url
from .mcp.http_guard import LOOPBACK_ADDRESSES, WILDCARD_ADDRESSES, BlankToken, bearer_token
from .mcp.remote_index import CacheRefused, DownloadRefused, NoIndex, RemoteIndex, index_url, is_url
from .mcp.remote_versions import RemoteVersions
from .mcp.server import IndexReader, create_server
from .mcp.stdio import serve_stdio
from .mcp.streamable_http import serve_http
from .mcp.versions import Versions, holds_versions, local_index
from .mcp.workers import WorkersFailed, unavailable

USAGE_ERROR = 2  # as argparse exits on a bad command line
WORKERS_FAILED = 3  # serve --workers: the worker processes kept ending, and the server stopped


class UsageError(Exception):
    """A command line that cannot be served; the message says what to give instead."""


def index_path(target: str) -> Path:
    """SITE_DIR, SITE_DIR/vault-mcp, or the index file itself."""
    path = Path(target)
    for candidate in (path, path / "vault-mcp" / "index.sqlite", path / "index.sqlite"):
        if candidate.is_file():
            return candidate
    problem = "does not exist" if not path.exists() else "holds no vault-mcp/index.sqlite"
    raise UsageError(
        f"{target!r} {problem}. Give a built site folder (it holds vault-mcp/index.sqlite after "
        "`mkdocs build` with the vault-mcp plugin) or the path of an index.sqlite file."
    )


REBUILD = (
    "rebuild the site with this version: `mkdocs build` for a site with the vault-mcp plugin, or "
    "`mkdocs-vault-mcp index SITE_DIR` for one built without it"
)


def default_version(versions: Versions) -> Path:
    """The index of the version a call without `version` answers from, checked as a site's own index is."""
    try:
        path: Path = versions.choose(None)[0].path
    except InvalidArgument as error:
        raise UsageError(str(error)) from None
    check_index(path)
    return path


def check_index(path: Path) -> None:
    try:
        publish.check_index(path)
    except publish.OtherSchema as other:
        found = other.schema_version
        written_by = f"mkdocs-vault-mcp {other.package_version}" if other.package_version else "an older version"
        newer = found.isdigit() and int(found) > int(FORMAT_VERSION)
        remedy = "upgrade mkdocs-vault-mcp where it serves (pip install -U mkdocs-vault-mcp), or " if newer else ""
        raise UsageError(
            f"{str(path)!r} is an index of schema version {found} (written by {written_by}); mkdocs-vault-mcp "
            f"{__version__} reads schema version {FORMAT_VERSION} only. To serve it, {remedy}{REBUILD}."
        ) from None
    except sqlite3.DatabaseError as error:
        raise UsageError(
            f"{str(path)!r} is not a vault-mcp index ({error}); build the site with the vault-mcp plugin."
        ) from None


def main(argv: list[str] | None = None) -> None:
    parser = command_line()
    args = parser.parse_args(argv)
    if args.command == "serve":
        check_serve_options(parser, args)
    try:
        if args.command == "index":
            index_site(args)
        else:
            serve_index(args)
    except UsageError as error:
        print(f"mkdocs-vault-mcp: error: {error}", file=sys.stderr)
        raise SystemExit(USAGE_ERROR) from None
    except KeyboardInterrupt:
        pass


def check_serve_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse (as argparse does, exit status 2) options that do not go together; fill in the HTTP defaults."""
    http_only = [
        option
        for option, value in (
            ("--host", args.host),
            ("--port", args.port),
            ("--path", args.path),
            ("--allow-host", args.allow_host),
        )
        if value
    ]
    if args.transport != "http" and http_only:
        several = len(http_only) > 1
        parser.error(
            f"{', '.join(http_only)} {'apply' if several else 'applies'} to --transport http only; add "
            f"--transport http to serve over HTTP, or leave {'them' if several else 'it'} out to serve "
            "over stdio"
        )
    args.host = DEFAULT_HOST if args.host is None else args.host
    args.port = DEFAULT_PORT if args.port is None else args.port
    args.path = DEFAULT_PATH if args.path is None else args.path
    if args.transport != "http" and (args.workers != 1 or args.token_env or args.stateful_sessions):
        parser.error("--workers, --token-env and --stateful-sessions apply to --transport http only")
    if args.workers != 1:
        lacking = unavailable()
        if lacking:
            parser.error(
                f"--workers {args.workers} needs {lacking}, which this platform lacks (as Windows does); "
                "serve with --workers 1, or run one server per port behind a load balancer"
            )
    if args.workers != 1 and args.stateful_sessions:
        parser.error("--stateful-sessions needs one process: a session lives in the process that opened it")


def serve_index(args: argparse.Namespace) -> None:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s: %(message)s")
    source = Source(
        args.site, args.cache, args.max_size, args.refresh, args.download_timeout, args.semantic_model, "--cache"
    )
    reader, versions = served_site(source)

    token = None
    if args.token_env:
        try:
            token = bearer_token(os.environ.get(args.token_env) or "")
        except BlankToken:
            raise UsageError(
                f"--token-env names {args.token_env}, which is not set, empty or only white space in the environment."
            ) from None
    server = create_server(reader, versions=versions)
    if args.transport == "stdio":
        serve_stdio(server)
        return
    warning = exposure_warning(args.host, args.port, args.allow_host, args.token_env)
    if warning:
        print(f"mkdocs-vault-mcp: warning: {warning}", file=sys.stderr, flush=True)
    try:
        serve_http(
            server,
            host=args.host,
            port=args.port,
            path=args.path,
            allowed_hosts=args.allow_host,
            token=token,
            workers=args.workers,
            stateful=args.stateful_sessions,
        )
    except WorkersFailed as error:
        print(f"mkdocs-vault-mcp: error: {error}", file=sys.stderr)
        raise SystemExit(WORKERS_FAILED) from None
    except OSError as error:
        raise UsageError(
            f"cannot listen on {args.host}:{args.port} ({error.strerror or error}); choose another with --port."
        ) from None


@dataclass(frozen=True)
class Source:
    """Where `serve` and the hosted app take a site from, and how a deployed one is downloaded."""

    site: str  # a built site folder, an index.sqlite, a folder holding mike's versions.json, or a URL
    cache_dir: str | None
    max_mb: int
    refresh: float
    download_seconds: float
    model_folder: Path | None
    cache_option: str  # the option or setting that names another cache folder, for messages


def served_site(source: Source) -> tuple[IndexReader, Versions | None]:
    """The reader of the site to serve (the default version's, on a site mike publishes) and, on such a site, every
    version's: for `serve` and the hosted app alike."""
    remote, versions = downloaded_site(source) if is_url(source.site) else (None, None)
    if remote is not None:
        path = remote.path
    elif versions is not None:
        path = default_version(versions)
    elif holds_versions(Path(source.site)):
        root, model = Path(source.site), source.model_folder
        versions = Versions(root, lambda name: IndexReader(local_index(root, name), model_folder=model))
        path = default_version(versions)
    else:
        path = index_path(source.site)
        check_index(path)
    return IndexReader(path, describe=remote.describe if remote else None, model_folder=source.model_folder), versions


def downloaded_site(source: Source) -> tuple[RemoteIndex | None, Versions | None]:
    """The site's published index; where its root has none, the versions mike publishes there, if it does."""
    try:
        return (
            remote_index(
                source.site,
                source.cache_dir,
                source.max_mb,
                source.refresh,
                source.download_seconds,
                source.cache_option,
            ),
            None,
        )
    except UsageError as no_index:
        if "answered HTTP 404" not in str(no_index):
            raise  # a site that cannot be reached, or answers wrong, is not asked again for versions.json
        remote = RemoteVersions(
            source.site,
            Path(source.cache_dir) if source.cache_dir else None,
            lambda index: IndexReader(index.path, describe=index.describe, model_folder=source.model_folder),
            source.refresh,
            source.download_seconds,
            max_bytes=source.max_mb << 20,
        )
        try:
            return None, remote.start()
        except (DownloadRefused, OSError):
            raise no_index from None


def remote_index(
    site: str, cache_dir: str | None, max_mb: int, refresh: float, download_seconds: float, cache_option: str
) -> RemoteIndex:
    """A deployed site's index, downloaded (or confirmed) now, for `serve URL` and the hosted app alike;
    `cache_option` is the option or setting that names another cache folder."""
    try:
        check_url(index_url(site))
    except DownloadRefused as error:
        raise UsageError(str(error)) from None
    cache = Path(cache_dir) if cache_dir else None
    remote = RemoteIndex(site, cache, max_mb << 20, refresh, download_seconds)
    try:
        remote.start()
    except (CacheRefused, NoIndex) as error:  # no cached copy would help: the message says what to do
        raise UsageError(str(error)) from None
    except DownloadRefused as error:
        raise UsageError(f"{error} No cached copy to serve instead ({remote.folder}).") from None
    except OSError as error:
        raise UsageError(
            f"cannot use the cache folder {remote.folder} ({error}); give another with {cache_option}."
        ) from None
    return remote


def exposure_warning(host: str, port: int, allowed_hosts: list[str], token_env: str | None) -> str | None:
    """What a bind beyond loopback exposes, and the options that narrow it; None for a loopback bind."""
    try:
        loopback = host in LOOPBACK_ADDRESSES or ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to any address
        loopback = False
    if loopback:
        return None
    access = (
        f"clients must send the bearer token in {token_env}"
        if token_env
        else f"anyone who can reach port {port} can call the tools: add --token-env NAME to require a bearer token"
    )
    allowed = (
        f"allowed now: {', '.join(allowed_hosts)}" if allowed_hosts else f"e.g. --allow-host {socket.gethostname()}"
    )
    if host in WILDCARD_ADDRESSES:
        reach = (
            "Clients on the network are answered only when they call it by a name given with --allow-host "
            f"NAME[:PORT] ({allowed}); the loopback URL answers on this machine only."
        )
    else:
        reach = (
            f"Clients are answered when they call it as {host}, or by a name given with --allow-host NAME[:PORT] "
            f"({allowed})."
        )
    return f"--host {host} listens beyond this machine; {access}. {reach}"


def index_site(args: argparse.Namespace) -> None:
    # MkDocs (with Jinja2, Markdown and Babel) loads only for this command: `serve` starts without it.
    from .build_steps.built_site import index_site as index_built_site

    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    locations = {
        name: Path(value) if value else None
        for name, value in (("docs_dir", args.docs_dir), ("config_file", args.config), ("cache_dir", args.cache_dir))
    }
    if locations["config_file"] is not None and not locations["config_file"].is_file():
        raise UsageError(f"--config {args.config!r} is not a file; give the site's mkdocs.yml")
    try:
        indexed = index_built_site(Path(args.site), **locations)
    except SiteError as error:
        raise UsageError(str(error)) from None
    except (OSError, sqlite3.Error) as error:
        raise UsageError(f"cannot index {args.site!r}: {error}") from None
    if indexed.skipped:
        more = len(indexed.skipped) - 5
        shown = ", ".join(indexed.skipped[:5]) + (f" and {more} more" if more > 0 else "")
        print(
            f"mkdocs-vault-mcp: {len(indexed.skipped)} HTML files have no content element and are not pages: {shown}",
            file=sys.stderr,
        )
    print(
        f"mkdocs-vault-mcp: Indexed {indexed.documents} pages, {indexed.sections} sections: {indexed.changed} changed, "
        f"{indexed.unchanged} unchanged, {indexed.removed} removed in {indexed.seconds:.2f} seconds; "
        f"wrote {indexed.index}" + (f" and {indexed.stats_page}" if indexed.stats_page else ""),
        file=sys.stderr,
    )
