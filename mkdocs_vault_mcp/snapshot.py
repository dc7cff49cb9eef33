"""The JSON aggregation snapshot: aggregate_documents' own answers, written into the site."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import sqlite3
from pathlib import Path
from typing import Any, NamedTuple

from .index import queries
from .index.filters import Filters
from .index.links import link_summary
from .index.publish import open_read_only, remove_leftovers
from .index.queries import aggregate_documents
from .instants import now_micros, rfc3339
from .limits import ROWS  # the largest limit aggregate_documents accepts

SCHEMA_VERSION = 1
SNAPSHOT_URI = "vault-mcp/snapshot.json"  # where the build writes it, relative to site_dir


def build_snapshot(
    conn: sqlite3.Connection, tag_fields: list[str], stats: dict[str, Any], language: str | None = None
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
        # Added in issue 14, beside the others (schema_version stays 1: no reader of the others breaks).
        "links": link_summary(conn),
    }


class BuildAnswers(NamedTuple):
    """What a build publishes beside the index, from one read of the committed index."""

    stats: dict[str, Any]  # index_stats: the closing log line and the stats page
    page_snapshot: dict[str, Any]  # what the stats page draws
    site_snapshot: dict[str, Any] | None  # snapshot.json; None until the last language of the run is indexed

    @classmethod
    def read(cls, index: Path, tag_fields: list[str], language: str | None, whole_site: bool) -> BuildAnswers:
        """`language`: on a multilingual site, the language of the stats page (which counts that language's
        pages); `whole_site`: whether every language is indexed, so that snapshot.json can count them all."""
        with contextlib.closing(open_read_only(index)) as conn:
            stats = queries.index_stats(conn, language)
            page_snapshot = build_snapshot(conn, tag_fields, stats, language)
            site_snapshot = None
            if whole_site:
                every_language = language is None
                site_snapshot = page_snapshot if every_language else build_snapshot(
                    conn, tag_fields, queries.index_stats(conn))
        return cls(stats, page_snapshot, site_snapshot)


def write_snapshot(snapshot: dict[str, Any], destination: Path) -> None:
    """Replace `destination` whole, readable as any file the build writes (0666 less the umask): a web server
    running as another user serves it. (mkstemp would make it private, 0600.)"""
    destination.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(destination.parent, ".snapshot-")  # from a build killed while it wrote
    temporary = destination.parent / f".snapshot-{secrets.token_hex(8)}.tmp"
    handle = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            # One line, by json's C encoder: indented, json.dump writes it piece by piece in Python (2 ms a build).
            out.write(json.dumps(snapshot, ensure_ascii=False, separators=(",", ":")))
        os.replace(temporary, destination)
    except BaseException:  # a full disk, say: no half-written file left in the site
        temporary.unlink(missing_ok=True)
        raise
