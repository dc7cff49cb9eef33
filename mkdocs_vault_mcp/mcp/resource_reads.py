"""What each resource request reads from one version's index, and the grammar of the page URIs.

A page's URI is `docs://HOST/PATH`: HOST is the host of the site's `site_url` (empty when the site has none, as in
`docs:///guide/install.md`), PATH the page's path as the tools name it, percent-encoded as RFC 6570 expands
`{+path}`. On a site mike publishes in versions, `?version=VERSION` after the path (the template's `{?version}`)
names the version or alias to read; without it the default version answers (`latest`, else the newest). A query
keeps every path a path: a page folder named like a version is never mistaken for one.
"""

from __future__ import annotations

import base64
import sqlite3
import string
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, Annotations, Completion, Resource

from .. import limits
from ..errors import InvalidArgument
from ..index.query.read import read_document
from ..instants import rfc3339

SCHEME = "docs"
MIME_TYPE = "text/markdown"
RESOURCES_PER_PAGE = 100
COMPLETIONS = 100  # the most values MCP lets one completion answer hold
# SQLite's lower() folds ASCII letters only: what was typed is folded the same way, or the two would never agree.
ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
# Characters RFC 6570 leaves as they are in a `{+path}` expansion: unreserved and reserved ones, `%` aside.
KEPT_IN_PATH = "/:@!$&'()*+,;=-._~"


def host_of(site_url: str | None) -> str:
    return urlsplit(site_url).netloc if site_url else ""


def page_uri(host: str, path: str, anchor: str | None = None) -> str:
    return f"{SCHEME}://{host}/{quote(path, safe=KEPT_IN_PATH)}" + (f"#{quote(anchor, safe='')}" if anchor else "")


def template_uri(host: str, versioned: bool = False) -> str:
    return f"{SCHEME}://{host}/{{+path}}" + ("{?version}" if versioned else "")


def uri_version(uri: str) -> str | None:
    """The version a URI's `?version=` names (None: the default one); InvalidArgument for any other query."""
    query = urlsplit(uri).query
    if not query:
        return None
    fields = parse_qs(query, keep_blank_values=True)
    if set(fields) != {"version"} or len(fields["version"]) != 1 or not fields["version"][0]:
        raise InvalidArgument(
            f"{uri[:200]!r} has the query {query[:100]!r}; a page URI takes only ?version=VERSION (one version or "
            "alias of a site mike publishes), or no query."
        )
    return fields["version"][0]


def site_url(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT value FROM info WHERE key = 'site_url'").fetchone()
    return row[0] if row and row[0] else None


def site_name(conn: sqlite3.Connection) -> str:
    row = conn.execute("SELECT value FROM info WHERE key = 'site_name'").fetchone()
    return row[0] if row and row[0] else "the site"


def parse_uri(uri: str, host: str) -> tuple[str, str | None]:
    """The page path and the anchor (or None) a URI of this server names; InvalidArgument for any other URI."""
    parts = urlsplit(uri)
    if parts.scheme != SCHEME or parts.netloc != host or not parts.path.startswith("/") or len(parts.path) < 2:
        raise InvalidArgument(
            f"{uri!r} is not a page of this server; its pages are {template_uri(host)} (for example "
            f"{page_uri(host, 'index.md')}): list them with resources/list."
        )
    uri_version(uri)
    return unquote(parts.path[1:]), unquote(parts.fragment) if parts.fragment else None


def page_of(conn: sqlite3.Connection, uri: str) -> str:
    """The URI of the page (without its #anchor) that `uri` names; InvalidArgument unless the index has it."""
    host = host_of(site_url(conn))
    path, _ = parse_uri(uri, host)
    if uri_version(uri) is not None:
        # Change events are told for the default version's pages only, by their URIs without a version.
        raise InvalidArgument(
            f"{uri[:200]!r} names a version: subscriptions follow the default version's pages; subscribe to the "
            "URI without ?version."
        )
    if conn.execute("SELECT 1 FROM documents WHERE path = ?", [path]).fetchone() is None:
        raise InvalidArgument(f"{uri[:200]!r} names no page of this server; list its pages with resources/list.")
    return page_uri(host, path)


def encode_cursor(path: str) -> str:
    return base64.urlsafe_b64encode(path.encode()).decode()


def decode_cursor(cursor: str) -> str:
    try:
        return base64.urlsafe_b64decode(cursor.encode()).decode()
    except (ValueError, UnicodeError):
        raise MCPError(
            INVALID_PARAMS,
            f"cursor {cursor[:100]!r} is not one this server gave; pass nextCursor as it came, or no cursor.",
        ) from None


# --- What each request reads from the index ----------------------------------------------------------------


def list_page(conn: sqlite3.Connection, after: str | None) -> dict[str, Any]:
    """One page of the listing, by path (keyset paging: a cursor stays valid while pages come and go)."""
    host = host_of(site_url(conn))
    rows = conn.execute(
        "SELECT path, title, url, summary, modified, language FROM documents WHERE path > ? ORDER BY path LIMIT ?",
        [after or "", RESOURCES_PER_PAGE + 1],
    ).fetchall()
    more = len(rows) > RESOURCES_PER_PAGE
    rows = rows[:RESOURCES_PER_PAGE]
    resources = [
        Resource(
            uri=page_uri(host, path),
            name=path,
            title=title,
            description=summary or None,
            mime_type=MIME_TYPE,
            annotations=Annotations(last_modified=rfc3339(modified)),
            _meta={"url": url, "language": language},
        )
        for path, title, url, summary, modified, language in rows
    ]
    return {"resources": resources, "next": encode_cursor(rows[-1][0]) if more else None}


def read_page(conn: sqlite3.Connection, uri: str) -> dict[str, Any]:
    path, anchor = parse_uri(uri, host_of(site_url(conn)))
    answer = read_document(conn, path, section=anchor, max_chars=limits.READ_CHARS)
    url = answer["section"]["url"] if answer["section"] else answer["url"]
    meta: dict[str, Any] = {"url": url, "title": answer["title"], "modified": answer["modified"]}
    if answer["next_offset"] is not None:
        # A page longer than one `read`: the rest comes from `read` itself, with this offset.
        meta["next_offset"] = answer["next_offset"]
    return {"text": answer["markdown"], "meta": meta}


def complete_path(conn: sqlite3.Connection, typed: str) -> Completion:
    """Paths that start with what was typed, then (case-insensitively) those that hold it elsewhere, by path."""
    start = conn.execute(
        "SELECT path FROM documents WHERE substr(path, 1, ?) = ? ORDER BY path LIMIT ?",
        [len(typed), typed, COMPLETIONS + 1],
    ).fetchall()
    values = [path for (path,) in start]
    starts = "substr(path, 1, ?) = ?"
    total = conn.execute(f"SELECT count(*) FROM documents WHERE {starts}", [len(typed), typed]).fetchone()[0]
    if typed:
        pattern = "%" + typed.translate(ASCII_LOWER).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        inside = "lower(path) LIKE ? ESCAPE '\\' AND substr(path, 1, ?) != ?"
        inside_parameters = [pattern, len(typed), typed]
        total += conn.execute(f"SELECT count(*) FROM documents WHERE {inside}", inside_parameters).fetchone()[0]
        if len(values) <= COMPLETIONS:
            values += [
                path
                for (path,) in conn.execute(
                    f"SELECT path FROM documents WHERE {inside} ORDER BY path LIMIT ?",
                    [pattern, len(typed), typed, COMPLETIONS + 1 - len(values)],
                )
            ]
    return Completion(values=values[:COMPLETIONS], total=total, has_more=total > COMPLETIONS)


def fingerprints(conn: sqlite3.Connection) -> dict[str, str]:
    return {path: fingerprint or "" for path, fingerprint in conn.execute("SELECT path, fingerprint FROM documents")}
