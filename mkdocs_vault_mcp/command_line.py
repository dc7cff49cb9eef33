"""The `mkdocs-vault-mcp` command line as argparse declares it: its commands, their options and what each accepts.
cli.py runs what it parses.

`add_serve_arguments` is long because `serve` has many options, one statement each; split, a reader would look in
several places for one command's options.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

from . import __version__
from .mcp.download import DOWNLOAD_SECONDS, MAX_DOWNLOAD_SECONDS, MIN_DOWNLOAD_SECONDS
from .mcp.remote_index import (
    CACHE_ENV,
    DEFAULT_MAX_MB,
    DEFAULT_REFRESH_SECONDS,
    MAX_REFRESH_SECONDS,
    MIN_REFRESH_SECONDS,
)

DESCRIPTION = """\
`mkdocs-vault-mcp serve SITE_DIR`: the MCP tools over a built or deployed site.
`mkdocs-vault-mcp index SITE_DIR`: the index of a site built without the plugin (Zensical, a plain build)."""
DEFAULT_PORT = 8765  # not 8000: that is `mkdocs serve`'s
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PATH = "/mcp"

EXAMPLES = f"""\
examples:
  build a site with the plugin, then let an agent that starts servers (stdio) use it:
    mkdocs build
    mkdocs-vault-mcp serve site/

  serve it over Streamable HTTP on this machine (http://127.0.0.1:{DEFAULT_PORT}/mcp):
    mkdocs-vault-mcp serve site/ --transport http

  serve a deployed copy to the network, with a bearer token and the name clients call it by:
    export VAULT_MCP_TOKEN=...
    mkdocs-vault-mcp serve /srv/docs --transport http --host 0.0.0.0 \\
        --allow-host docs.example.com --token-env VAULT_MCP_TOKEN

  index a site built without the plugin (Zensical, a plain MkDocs build), then serve it:
    mkdocs-vault-mcp index site/ --config mkdocs.yml
    mkdocs-vault-mcp serve site/

`python -m mkdocs_vault_mcp` runs the same command."""


def port_number(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise argparse.ArgumentTypeError(f"expected a TCP port from 1 to 65535, got {text!r}")
    return int(text)


def worker_count(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 64:
        raise argparse.ArgumentTypeError(f"expected a number of processes from 1 to 64, got {text!r}")
    return int(text)


def as_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan  # refused by every range below


def refresh_interval(text: str) -> float:
    value = as_float(text)
    if not (value == 0 or MIN_REFRESH_SECONDS <= value <= MAX_REFRESH_SECONDS):
        raise argparse.ArgumentTypeError(
            f"expected 0 (only at start) or a number of seconds from {MIN_REFRESH_SECONDS} to "
            f"{MAX_REFRESH_SECONDS}, got {text!r}"
        )
    return value


def download_deadline(text: str) -> float:
    value = as_float(text)
    if not MIN_DOWNLOAD_SECONDS <= value <= MAX_DOWNLOAD_SECONDS:
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds from {MIN_DOWNLOAD_SECONDS} to {MAX_DOWNLOAD_SECONDS}, got {text!r}"
        )
    return value


# A URL path the HTTP server routes as it is: no query, fragment, white space or Starlette `{parameter}`.
PATH = re.compile(r"/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*")


def endpoint_path(text: str) -> str:
    if not PATH.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"expected a URL path that starts with / (such as {DEFAULT_PATH}), without white space, ?, # or "
            f"braces, got {text[:100]!r}"
        )
    return text


def model_folder(text: str) -> Path:
    if not Path(text).is_dir():
        raise argparse.ArgumentTypeError(
            f"expected the folder holding the model's tokenizer.json and ONNX file, got {text!r}"
        )
    return Path(text).absolute()


def megabytes(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 1_000_000:
        raise argparse.ArgumentTypeError(f"expected a size in MB from 1 to 1000000, got {text!r}")
    return int(text)


def command_line() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mkdocs-vault-mcp",
        description=DESCRIPTION,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser(
        "serve",
        help="serve the MCP tools from a built site's index (read-only)",
        description="Serve the MCP tools from a built site's index (read-only).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_serve_arguments(serve)
    index = commands.add_parser(
        "index",
        help="index a site already built (by Zensical, MkDocs or ProperDocs without the plugin)",
        description="Index a site already built (by Zensical, MkDocs or ProperDocs without the plugin) into "
        "SITE_DIR/vault-mcp/index.sqlite, for `mkdocs-vault-mcp serve SITE_DIR`.",
    )
    add_index_arguments(index)
    return parser


def add_serve_arguments(serve: argparse.ArgumentParser) -> None:
    serve.add_argument(
        "site",
        metavar="SITE_DIR",
        help="built site folder, the path of an index.sqlite, or a deployed "
        "site's URL (https://docs.example.com/) or its index's URL, downloaded into a cache folder",
    )
    serve.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio: the client starts this command and talks over its standard input and output "
        "(default); http: listen for Streamable HTTP clients at --host, --port and --path",
    )
    # None when not given: they apply to --transport http only, and a stdio run that gets them says so.
    serve.add_argument(
        "--host",
        help=f"HTTP: the address to listen on (default {DEFAULT_HOST}, this machine only; "
        "0.0.0.0 for every address, with --allow-host and --token-env)",
    )
    serve.add_argument("--port", type=port_number, help=f"HTTP: the port to listen on (default {DEFAULT_PORT})")
    serve.add_argument("--path", type=endpoint_path, help=f"HTTP: the endpoint's path (default {DEFAULT_PATH})")
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
    serve.add_argument(
        "--refresh",
        type=refresh_interval,
        default=DEFAULT_REFRESH_SECONDS,
        metavar="SECONDS",
        help=f"a site's URL: ask it for a new index this often (default {DEFAULT_REFRESH_SECONDS}, at least "
        f"{MIN_REFRESH_SECONDS}; 0: only at start)",
    )
    serve.add_argument(
        "--download-timeout",
        type=download_deadline,
        default=DOWNLOAD_SECONDS,
        metavar="SECONDS",
        help=f"a site's URL: give up on a download that takes longer, redirects and all (default {DOWNLOAD_SECONDS})",
    )
    serve.add_argument(
        "--cache",
        metavar="DIR",
        help=f"a site's URL: the cache folder (default: the user's cache "
        f"folder, or the environment variable {CACHE_ENV})",
    )
    serve.add_argument(
        "--max-size",
        type=megabytes,
        default=DEFAULT_MAX_MB,
        metavar="MB",
        help=f"a site's URL: refuse a larger index (default {DEFAULT_MAX_MB} MB)",
    )
    serve.add_argument(
        "--semantic-model",
        type=model_folder,
        metavar="DIR",
        help="search by meaning: the folder of the model the index's vectors were made with, where the build's "
        "folder is not (checked by content)",
    )


def add_index_arguments(index: argparse.ArgumentParser) -> None:
    index.add_argument("site", metavar="SITE_DIR", help="the built site folder; gets vault-mcp/index.sqlite")
    index.add_argument("--docs-dir", metavar="DOCS", help="the Markdown sources: front matter, git times, paths")
    index.add_argument(
        "--config",
        metavar="MKDOCS_YML",
        help="mkdocs.yml: site_name, site_url, nav titles, "
        "the vault-mcp plugin's options (and docs_dir, unless --docs-dir is given)",
    )
    index.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where the working index lives between runs (default: "
        "the plugin's cache_dir beside mkdocs.yml, else .cache/plugin/vault-mcp beside SITE_DIR)",
    )
