"""Questions about the links between pages: backlinks, outlinks, broken links, orphan pages, most linked pages.

The `links` table holds one row per link of a page's content (`mkdocs_vault_mcp.page.links`), resolved to the
target page when the build commits; `pages` says which pages the nav lists. Filters are the shared ones: they
select the linking pages for `backlinks`, `outlinks` and `broken`, and the listed pages for `orphans` and
`most_linked`.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any, Literal, overload

from ...errors import InvalidArgument
from ...limits import ROWS, SEARCH_RESULTS
from ..filters import Filters, check_choice, check_range, compile_filters, no_document, split_target

if TYPE_CHECKING:
    from ..answer_types import HistoryEntry, LinkedPage, LinkRow, LinksResult, Listing, SearchHit

SHOWS = ("backlinks", "outlinks", "broken", "orphans", "most_linked", "related", "history")
WITH_TARGET = ("backlinks", "related", "history")
HOME_PAGES = ("index.md", "README.md")  # the site's root page is reached by the site's address, never an orphan
ORPHAN = "p.in_nav = 0 AND p.linked_from = 0"  # no nav entry and no other page's link leads to it

LINK_FROM = (
    " FROM links l JOIN documents d ON d.id = l.document_id"
    " LEFT JOIN sections s ON s.document_id = l.document_id AND s.position = l.position"
)
# A broken link's target is what it names: the path as written, from the linking page's file, when relative.
LINK_COLUMNS = (
    "d.path, s.heading, s.anchor, d.url, l.text, l.url,"
    " CASE WHEN l.broken = 'page' THEN coalesce(l.written, l.target) ELSE l.target_path END,"
    " l.anchor, l.broken"
)
LINK_ORDER = " ORDER BY d.path, l.position, l.rowid"


# A caller that names the show gets its rows' type.
@overload
def links(
    conn: sqlite3.Connection, show: Literal["backlinks", "outlinks", "broken"], filters: Filters, **arguments: Any
) -> Listing[LinkRow]: ...
@overload
def links(
    conn: sqlite3.Connection, show: Literal["orphans", "most_linked"], filters: Filters, **arguments: Any
) -> Listing[LinkedPage]: ...
@overload
def links(
    conn: sqlite3.Connection, show: Literal["history"], filters: Filters, **arguments: Any
) -> Listing[HistoryEntry]: ...
@overload
def links(
    conn: sqlite3.Connection, show: Literal["related"], filters: Filters, **arguments: Any
) -> Listing[SearchHit]: ...
@overload
def links(conn: sqlite3.Connection, show: str, filters: Filters, **arguments: Any) -> LinksResult: ...


def links(conn: sqlite3.Connection, show: str, filters: Filters, **arguments: Any) -> LinksResult:
    try:
        return _links(conn, show, filters, **arguments)
    except sqlite3.OperationalError as error:
        if "no such table" not in str(error):
            raise
        raise InvalidArgument(
            "This index was built by an earlier version of mkdocs-vault-mcp, without links; build the site again."
        ) from None


def _links(
    conn: sqlite3.Connection,
    show: str,
    filters: Filters,
    target: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> LinksResult:
    check_choice("show", show, SHOWS)
    check_range("limit", limit, 1, ROWS)
    check_range("offset", offset, 0)
    if (target is None) == (show in WITH_TARGET):
        raise InvalidArgument(
            "target is required with show='backlinks', 'related' and 'history' (a page path, such as "
            "'guide/install.md', or a path and an anchor, 'guide/install.md#drift') and taken by no other show; "
            f"got show={show!r}, target={target!r}."
        )
    if show == "history":
        assert target is not None  # given with this show: checked above
        return history(conn, target, limit, offset)
    if show == "related":
        assert target is not None  # given with this show: checked above
        check_range("limit", limit, 1, SEARCH_RESULTS)
        from .related import related  # and search with it: a build's snapshot asks for links, never for these

        return related(conn, target, filters, limit=limit, offset=offset)
    compiled = compile_filters(conn, filters)
    where, params = compiled.where, list(compiled.params)
    if show in ("orphans", "most_linked"):
        return _pages(conn, show, where, params, limit, offset)
    if show == "backlinks":
        assert target is not None  # given with this show: checked above
        condition, condition_params = _backlinks_to(conn, target)
        where += condition
        params += condition_params
    elif show == "broken":
        where += " AND l.broken IS NOT NULL"
    return _link_rows(conn, where, params, limit, offset)


def _backlinks_to(conn: sqlite3.Connection, target: str) -> tuple[str, list[Any]]:
    """The condition (to AND) and its parameters that keep the links to `target` from other pages."""
    path, anchor = split_target(target, conn)
    known = (
        conn.execute("SELECT 1 FROM documents WHERE path = ?", [path]).fetchone()
        or conn.execute("SELECT 1 FROM links WHERE target_path = ? LIMIT 1", [path]).fetchone()
    )
    if known is None:
        raise InvalidArgument(
            f"No page at target {path!r} and no link to it (paths are exact and case-sensitive, "
            "e.g. 'guide/install.md', optionally with '#anchor'); find paths with search or query_documents."
        )
    where = " AND l.target_path = ? AND d.path != ?"
    params: list[Any] = [path, path]
    if anchor is not None:
        where += " AND l.anchor = ?"
        params.append(anchor)
    return where, params


def _link_rows(conn: sqlite3.Connection, where: str, params: list[Any], limit: int, offset: int) -> Listing[LinkRow]:
    """The links `where` keeps, one page of them, with their total."""
    total = conn.execute(f"SELECT count(*){LINK_FROM} WHERE {where}", params).fetchone()[0]
    rows = []
    if offset < total:
        rows = conn.execute(
            f"SELECT {LINK_COLUMNS}{LINK_FROM} WHERE {where}{LINK_ORDER} LIMIT ? OFFSET ?", [*params, limit, offset]
        ).fetchall()
    result: list[LinkRow] = [
        {
            "path": path,
            "section": heading or "",
            "section_url": f"{page_url}#{section_anchor}" if section_anchor else page_url,
            "text": text,
            "url": url,
            "target": target_path,
            "anchor": anchor,
            "broken": broken,
        }
        for path, heading, section_anchor, page_url, text, url, target_path, anchor, broken in rows
    ]
    after = offset + len(result)
    return {"result": result, "total": total, "next_offset": after if after < total else None}


def history(conn: sqlite3.Connection, target: str, limit: int, offset: int) -> Listing[HistoryEntry]:
    """The page's last commits (at most 10, newest first) as the build found them in git."""
    path = split_target(target, conn)[0]
    row = conn.execute(
        "SELECT p.history FROM documents d JOIN pages p ON p.document_id = d.id WHERE d.path = ?", [path]
    ).fetchone()
    if row is None:
        raise no_document("target", path)
    commits: list[HistoryEntry] = json.loads(row[0])
    result = commits[offset : offset + limit]
    after = offset + len(result)
    return {"result": result, "total": len(commits), "next_offset": after if after < len(commits) else None}


def _pages(
    conn: sqlite3.Connection, show: str, where: str, params: list[Any], limit: int, offset: int
) -> Listing[LinkedPage]:
    # pages.linked_from: how many other pages link to the page, kept by every commit (index/write/resolve.py).
    sql = f" FROM documents d JOIN pages p ON p.document_id = d.id WHERE {where}"
    if show == "orphans":
        sql += f" AND {ORPHAN} AND d.path NOT IN ({', '.join('?' * len(HOME_PAGES))})"
        params = [*params, *HOME_PAGES]
        order = " ORDER BY d.path"
    else:
        sql += " AND p.linked_from > 0"
        order = " ORDER BY p.linked_from DESC, d.path"
    total = conn.execute(f"SELECT count(*){sql}", params).fetchone()[0]
    rows = []
    if offset < total:
        rows = conn.execute(
            f"SELECT d.path, d.title, d.url, p.in_nav, p.linked_from{sql}{order} LIMIT ? OFFSET ?",
            [*params, limit, offset],
        ).fetchall()
    result: list[LinkedPage] = [
        {"path": path, "title": title, "url": url, "in_nav": bool(in_nav), "linked_from": linked_from}
        for path, title, url, in_nav, linked_from in rows
    ]
    after = offset + len(result)
    return {"result": result, "total": total, "next_offset": after if after < total else None}


def orphan_count(conn: sqlite3.Connection) -> int:
    """`links(show="orphans")`'s total for the whole site, without joining every page to its document."""
    count: int = conn.execute(
        f"SELECT count(*) FROM pages p WHERE {ORPHAN} AND p.document_id NOT IN"
        f" (SELECT id FROM documents WHERE path IN ({', '.join('?' * len(HOME_PAGES))}))",
        HOME_PAGES,
    ).fetchone()[0]
    return count


def link_summary(conn: sqlite3.Connection, top: int = 10) -> dict[str, Any]:
    """What the snapshot and the stats page show: broken links, orphan pages and the most linked pages."""
    broken = dict(conn.execute("SELECT broken, count(*) FROM links WHERE broken IS NOT NULL GROUP BY broken"))
    # A link to another site on the site's host has a target address but neither a page nor a fault: external.
    external = "target IS NULL OR (target_path IS NULL AND broken IS NULL)"
    return {
        "links": conn.execute(f"SELECT count(*) FROM links WHERE NOT ({external})").fetchone()[0],
        "external_links": conn.execute(f"SELECT count(*) FROM links WHERE {external}").fetchone()[0],
        # Every link belongs to a stored page, so the broken ones are those counted above: `links(show="broken")`
        # would scan and sort them all for the same total.
        "broken_links": sum(broken.values()),
        "broken_pages": broken.get("page", 0),
        "broken_anchors": broken.get("anchor", 0),
        "orphan_pages": orphan_count(conn),
        "most_linked": [
            {"path": row["path"], "title": row["title"], "url": row["url"], "linked_from": row["linked_from"]}
            for row in most_linked(conn, top)
        ],
    }


def most_linked(conn: sqlite3.Connection, top: int) -> list[LinkedPage]:
    """The first `top` rows of `links(show="most_linked")` over the whole site."""
    check_range("limit", top, 1, ROWS)
    everything = compile_filters(conn, Filters())
    return _pages(conn, "most_linked", everything.where, list(everything.params), top, 0)["result"]
