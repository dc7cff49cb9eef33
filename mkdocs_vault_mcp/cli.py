"""`mkdocs-vault-mcp serve SITE_DIR`: the MCP tools over a built or deployed site.
`mkdocs-vault-mcp index SITE_DIR`: the index of a site built without the plugin (Zensical, a plain build)."""

from __future__ import annotations

import argparse
import logging
import os
import sqlite3
import sys
from pathlib import Path

from . import __version__

DEFAULT_PORT = 8765  # not 8000: that is `mkdocs serve`'s
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


def check_index(path: Path) -> None:
    from .index import publish

    try:
        publish.check_index(path)
    except sqlite3.DatabaseError as error:
        raise UsageError(
            f"{str(path)!r} is not a vault-mcp index ({error}); build the site with the vault-mcp plugin."
        ) from None


def port_number(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise argparse.ArgumentTypeError(f"expected a TCP port from 1 to 65535, got {text!r}")
    return int(text)


def worker_count(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 64:
        raise argparse.ArgumentTypeError(f"expected a number of processes from 1 to 64, got {text!r}")
    return int(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="mkdocs-vault-mcp", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve the MCP tools from a built site's index (read-only)")
    serve.add_argument("site", metavar="SITE_DIR", help="built site folder, or the path of an index.sqlite")
    serve.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    serve.add_argument("--host", default="127.0.0.1", help="HTTP address to bind (default: loopback only)")
    serve.add_argument("--port", type=port_number, default=DEFAULT_PORT, help=f"HTTP port (default {DEFAULT_PORT})")
    serve.add_argument("--path", default="/mcp", help="HTTP endpoint path (default /mcp)")
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="a Host header to accept besides loopback names, when binding beyond loopback (repeatable)",
    )
    serve.add_argument(
        "--token-env",
        metavar="NAME",
        help="require a bearer token over HTTP: the one in environment variable NAME (never on the command line)",
    )
    serve.add_argument(
        "--workers", type=worker_count, default=1, help="HTTP: serve from this many processes (default 1)"
    )
    serve.add_argument(
        "--stateful-sessions",
        action="store_true",
        help="HTTP: keep MCP sessions between requests (default: stateless; one process only)",
    )
    index = commands.add_parser(
        "index", help="index a site already built (by Zensical, MkDocs or ProperDocs without the plugin)"
    )
    index.add_argument("site", metavar="SITE_DIR", help="the built site folder; gets vault-mcp/index.sqlite")
    index.add_argument("--docs-dir", metavar="DOCS", help="the Markdown sources: front matter, git times, paths")
    index.add_argument("--config", metavar="MKDOCS_YML", help="mkdocs.yml: site_name, site_url, nav titles, "
                       "the vault-mcp plugin's options (and docs_dir, unless --docs-dir is given)")
    index.add_argument("--cache-dir", metavar="DIR", help="where the working index lives between runs (default: "
                       "the plugin's cache_dir beside mkdocs.yml, else .cache/plugin/vault-mcp beside SITE_DIR)")
    args = parser.parse_args(argv)
    if args.command == "serve":
        if args.transport != "http" and (args.workers != 1 or args.token_env or args.stateful_sessions):
            parser.error("--workers, --token-env and --stateful-sessions apply to --transport http only")
        if args.workers != 1 and not hasattr(os, "fork"):
            parser.error("--workers needs os.fork, which this platform lacks; run one process per port instead")
        if args.workers != 1 and args.stateful_sessions:
            parser.error("--stateful-sessions needs one process: a session lives in the process that opened it")
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


def serve_index(args: argparse.Namespace) -> None:
    path = index_path(args.site)
    check_index(path)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s: %(message)s")

    from .server import IndexReader, create_server

    token = None
    if args.token_env:
        # Stripped: a value set from a file or a heredoc often ends in a newline that no client sends.
        token = (os.environ.get(args.token_env) or "").strip() or None
        if token is None:
            raise UsageError(
                f"--token-env names {args.token_env}, which is not set, empty or only white space in the environment."
            )
    server = create_server(IndexReader(path))
    if args.transport == "stdio":
        from .stdio import serve_stdio

        serve_stdio(server)
        return
    from .streamable_http import WorkersFailed, serve_http

    try:
        serve_http(server, host=args.host, port=args.port, path=args.path, allowed_hosts=args.allow_host,
                   token=token, workers=args.workers, stateful=args.stateful_sessions)
    except WorkersFailed as error:
        print(f"mkdocs-vault-mcp: error: {error}", file=sys.stderr)
        raise SystemExit(WORKERS_FAILED) from None
    except OSError as error:
        raise UsageError(
            f"cannot listen on {args.host}:{args.port} ({error.strerror or error}); choose another with --port."
        ) from None


def index_site(args: argparse.Namespace) -> None:
    from .built_site import SiteError
    from .built_site import index_site as index_built_site

    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    given = {name: Path(value) if value else None for name, value in
             (("docs_dir", args.docs_dir), ("config_file", args.config), ("cache_dir", args.cache_dir))}
    if given["config_file"] is not None and not given["config_file"].is_file():
        raise UsageError(f"--config {args.config!r} is not a file; give the site's mkdocs.yml")
    try:
        outcome = index_built_site(Path(args.site), **given)
    except SiteError as error:
        raise UsageError(str(error)) from None
    except (OSError, sqlite3.Error) as error:
        raise UsageError(f"cannot index {args.site!r}: {error}") from None
    if outcome.skipped:
        more = len(outcome.skipped) - 5
        shown = ", ".join(outcome.skipped[:5]) + (f" and {more} more" if more > 0 else "")
        print(f"mkdocs-vault-mcp: {len(outcome.skipped)} HTML files have no content element and are not pages: {shown}",
              file=sys.stderr)
    print(
        f"mkdocs-vault-mcp: Indexed {outcome.documents} pages, {outcome.sections} sections: {outcome.changed} changed, "
        f"{outcome.unchanged} unchanged, {outcome.removed} removed in {outcome.seconds:.2f} seconds; "
        f"wrote {outcome.index}" + (f" and {outcome.stats_page}" if outcome.stats_page else ""),
        file=sys.stderr,
    )
