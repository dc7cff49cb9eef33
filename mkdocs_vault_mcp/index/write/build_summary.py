"""What a build publishes beside the index (the stats page, snapshot.json, the closing log line), read from the
committed index in one pass, by the writer right after its commit: the build's own process never imports the
queries."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any, TypedDict

from ...instants import now_micros, rfc3339
from ...limits import ROWS  # the largest limit aggregate_documents accepts
from ..filters import Filters
from ..query.link_queries import link_summary, links
from ..query.queries import aggregate_documents, index_stats
from .summary_request import SummaryRequest

if TYPE_CHECKING:
    from ..answer_types import Stats

SCHEMA_VERSION = 1
BROKEN_LISTED = 50  # the stats page lists this many broken links; the links tool pages through the rest


class BuildSummary(TypedDict):
    """What a build publishes, read from its committed index: a plain dict, so that it crosses the writer's pipe
    without the build importing this module."""

    stats: dict[str, Any]  # index_stats: the closing log line and the stats page
    page_snapshot: dict[str, Any]  # what the stats page draws
    site_snapshot: dict[str, Any] | None  # snapshot.json; None until the last language of the run is indexed
    broken_links: dict[str, Any]  # the first rows of links(show="broken") over the whole site, with their total


def build_snapshot(
    conn: sqlite3.Connection, tag_fields: list[str], stats: Stats, language: str | None = None
) -> dict[str, Any]:
    """Spec section 6: each `by_*` is aggregate_documents' answer with no filters and the largest limit.

    `stats` is index_stats' answer on the same connection. `by_tag` has one entry per field of `tag_fields`
    that is indexed on this site, in `tag_fields` order. With `language`, every answer is for that
    language's pages only (what a multilingual site's stats page in that language shows). `links` counts
    links, broken links and orphan pages (the `links` tool's totals) and lists the ten most linked pages.
    """
    everything = Filters(language=language)
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_at": rfc3339(now_micros()),
        "site_name": stats["site_name"],
        "site_url": stats["site_url"],
        "total": stats["document_count"],
        "by_folder": aggregate_documents(conn, "folder", everything, limit=ROWS),
        "by_month": aggregate_documents(conn, "month", everything, limit=ROWS),
        "by_language": aggregate_documents(conn, "language", everything, limit=ROWS),
        "by_tag": {
            field: aggregate_documents(conn, "tag", everything, field=field, limit=ROWS)
            for field in tag_fields
            if field in stats["indexed_frontmatter_fields"]
        },
        # Beside the others, so that schema_version stays 1: no reader of the others breaks.
        "links": link_summary(conn),
        **site_version(conn),
    }


def site_version(conn: sqlite3.Connection) -> dict[str, str]:
    """`{"version": ...}` when the site was built as a version (mike's, or the `site_version` option); else nothing, so
    that an unversioned site's snapshot stays as it was."""
    row = conn.execute("SELECT value FROM info WHERE key = 'site_version'").fetchone()
    return {"version": row[0]} if row and row[0] else {}


def read_build_summary(conn: sqlite3.Connection, request: SummaryRequest) -> BuildSummary:
    """The stats, the stats page's snapshot and snapshot.json (once the whole site is indexed) of the index."""
    tag_fields, language = request.tag_fields, request.language
    stats = index_stats(conn, language)
    page_snapshot = build_snapshot(conn, tag_fields, stats, language)
    site_snapshot = None
    if request.whole_site:
        site_snapshot = page_snapshot if language is None else build_snapshot(conn, tag_fields, index_stats(conn))
    # The whole site's, as the snapshot's broken_links counts them, in every language's stats page.
    broken = links(conn, "broken", Filters(), limit=BROKEN_LISTED)
    return BuildSummary(
        stats=dict(stats), page_snapshot=page_snapshot, site_snapshot=site_snapshot, broken_links=dict(broken)
    )
