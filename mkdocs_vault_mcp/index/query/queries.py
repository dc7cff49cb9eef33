"""One function per question an agent (or the snapshot, or the stats page) asks the index.

Each takes an open connection and checked-or-raw arguments and returns plain
JSON-ready data; `InvalidArgument` says what was wrong with an argument.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

from ...instants import rfc3339
from ...limits import ROWS
from ..filters import (
    Compiled,
    Filters,
    check_choice,
    check_field,
    check_range,
    compile_filters,
    indexed_fields,
    site_languages,
)
from ..schema import KeptPerVersion, index_version

if TYPE_CHECKING:
    from ..answer_types import Aggregation, Bucket, DocumentPage, DocumentRow, Stats

DOCUMENT_COLUMNS = "d.path, d.title, d.folder, d.url, d.modified, d.summary, d.meta, d.language, d.fallback_of"


def document_row(row: tuple[Any, ...]) -> DocumentRow:
    path, title, folder, url, modified, summary, meta, language, fallback_of = row
    found: DocumentRow = {
        "path": path,
        "title": title,
        "folder": folder,
        "url": url,
        "modified": rfc3339(modified),
        "summary": summary,
        "meta": {} if meta == "{}" else json.loads(meta),  # most pages have no front matter
        "language": language,
    }
    # Only on an untranslated copy: a null in every other row would lengthen every listing (twice: the
    # structured content and its text copy) and tell nothing.
    if fallback_of is not None:
        found["fallback_of"] = fallback_of
    return found


def count_documents(conn: sqlite3.Connection, filters: Filters) -> int:
    return count_matching(conn, compile_filters(conn, filters))


def count_matching(conn: sqlite3.Connection, compiled: Compiled) -> int:
    count: int = conn.execute(f"SELECT count(*) FROM documents d WHERE {compiled.where}", compiled.params).fetchone()[0]
    return count


# The month of the whole second, rounded down, in integers: SQLite's `/` rounds toward zero (so
# 1969-12-31T23:59:59.5Z would fall in 1970-01), and strftime rounds a fractional second to the
# millisecond (so 2025-01-31T23:59:59.9999Z would fall in 2025-02).
MONTH_OF_MODIFIED = (
    "strftime('%Y-%m', (d.modified - ((d.modified % 1000000) + 1000000) % 1000000) / 1000000, 'unixepoch')"
)


def bucket_order(bucket: Bucket) -> tuple[int, str, str]:
    return (-bucket["count"], bucket["key"].casefold(), bucket["key"])


AGGREGATIONS = ("folder", "tag", "month", "language")


def aggregate_documents(
    conn: sqlite3.Connection, by: str, filters: Filters, field: str = "tags", limit: int = 100
) -> Aggregation:
    check_choice("by", by, AGGREGATIONS)
    check_range("limit", limit, 1, ROWS)
    compiled = compile_filters(conn, filters)
    where, params = compiled.where, compiled.params
    total = count_matching(conn, compiled)
    missing = 0
    if by in ("folder", "language"):
        sql = f"SELECT d.{by}, count(*) FROM documents d WHERE {where} GROUP BY d.{by}"
    elif by == "month":
        sql = f"SELECT {MONTH_OF_MODIFIED} AS month, count(*) FROM documents d WHERE {where} GROUP BY month"
    else:
        check_field(conn, field)
        # Driven by field_values' own indexes: documents are read only when a filter asks about them.
        pages = "" if where == "1" else f" AND document_id IN (SELECT d.id FROM documents d WHERE {where})"
        sql = f"SELECT value, count(*) FROM field_values WHERE field = ?{pages} GROUP BY value"
        params = [field, *params]
        with_value = conn.execute(
            f"SELECT count(DISTINCT document_id) FROM field_values WHERE field = ?{pages}", params
        ).fetchone()[0]
        missing = total - with_value
    buckets: list[Bucket] = [{"key": key, "count": count} for key, count in conn.execute(sql, params)]
    buckets.sort(key=bucket_order)
    return {"total": total, "buckets": buckets[:limit], "missing": missing, "truncated": len(buckets) > limit}


def get_recent(
    conn: sqlite3.Connection, limit: int = 20, folder: str | None = None, language: str | None = None
) -> list[DocumentRow]:
    check_range("limit", limit, 1, ROWS)
    compiled = compile_filters(conn, Filters(folder=folder, language=language))
    rows = conn.execute(
        f"SELECT {DOCUMENT_COLUMNS} FROM documents d WHERE {compiled.where}"
        " ORDER BY d.modified DESC, d.path ASC LIMIT ?",
        [*compiled.params, limit],
    )
    return [document_row(row) for row in rows]


SORT_COLUMNS = {"path": "d.path", "modified": "d.modified", "title": "d.title"}
DEFAULT_ORDER = {"path": "asc", "modified": "desc", "title": "asc"}


def query_documents(
    conn: sqlite3.Connection,
    filters: Filters,
    sort: str = "path",
    order: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> DocumentPage:
    check_choice("sort", sort, tuple(SORT_COLUMNS))
    order = DEFAULT_ORDER[sort] if order is None else check_choice("order", order, ("asc", "desc"))
    check_range("limit", limit, 1, ROWS)
    check_range("offset", offset, 0)
    compiled = compile_filters(conn, filters)
    total = count_matching(conn, compiled)
    tie = "" if sort == "path" else ", d.path ASC"
    result: list[DocumentRow] = []
    if offset < total:  # past the end there is nothing to read, and an offset beyond 64 bits would not bind
        rows = conn.execute(
            f"SELECT {DOCUMENT_COLUMNS} FROM documents d WHERE {compiled.where}"
            f" ORDER BY {SORT_COLUMNS[sort]} {order.upper()}{tie} LIMIT ? OFFSET ?",
            [*compiled.params, limit, offset],
        )
        result = [document_row(row) for row in rows]
    after = offset + len(result)
    return {"result": result, "total": total, "next_offset": after if after < total else None}


# The stats of an index version never change, and `stats` is the call agents make first: kept, they cost one lookup
# in `info` instead of scans that grow with the site (DISTINCT folder and language read an index each).
KEPT_STATS = 8  # versions and languages: a live index rebuilt while a published one is served, a few languages
_STATS_BY_VERSION: KeptPerVersion[Stats] = KeptPerVersion(KEPT_STATS)


def index_stats(conn: sqlite3.Connection, language: str | None = None) -> Stats:
    """The index's facts; with `language`, counts and dates of that language's pages only (a stats page
    of a multilingual site describes the language it is published in)."""
    version = index_version(conn)
    if version is None:
        return _read_stats(conn, language)
    kept = _STATS_BY_VERSION.get((version, language), lambda: _read_stats(conn, language))
    # A copy: the server adds index_stale to the answer it is given.
    return {
        **kept,
        "indexed_frontmatter_fields": list(kept["indexed_frontmatter_fields"]),
        "languages": list(kept["languages"]),
    }


def _read_stats(conn: sqlite3.Connection, language: str | None) -> Stats:
    info = dict(conn.execute("SELECT key, value FROM info"))
    where, params = ("WHERE language = ?", [language]) if language is not None else ("", [])
    # One statement each: together they would scan the table, apart each reads an index.
    documents = conn.execute(f"SELECT count(*) FROM documents {where}", params).fetchone()[0]
    folders = conn.execute(f"SELECT count(*) FROM (SELECT DISTINCT folder FROM documents {where})", params).fetchone()[
        0
    ]
    oldest = conn.execute(f"SELECT min(modified) FROM documents {where}", params).fetchone()[0]
    newest = conn.execute(f"SELECT max(modified) FROM documents {where}", params).fetchone()[0]
    if language is None:
        sections = conn.execute("SELECT count(*) FROM sections").fetchone()[0]
    else:
        sections = conn.execute(
            "SELECT count(*) FROM sections WHERE document_id IN (SELECT id FROM documents WHERE language = ?)", params
        ).fetchone()[0]
    return {
        "document_count": documents,
        "section_count": sections,
        "folder_count": folders,
        "indexed_frontmatter_fields": indexed_fields(conn),
        "oldest_modified": rfc3339(oldest) if oldest is not None else None,
        "newest_modified": rfc3339(newest) if newest is not None else None,
        "built_at": rfc3339(int(info["built_at"])) if "built_at" in info else None,
        "site_name": info.get("site_name", ""),
        "site_url": info.get("site_url") or None,
        "languages": site_languages(conn) if language is None else [language],
    }


__all__ = [
    "Filters",
    "aggregate_documents",
    "count_documents",
    "get_recent",
    "index_stats",
    "query_documents",
]
