"""How many sections match an FTS5 expression, counted once per index version and kept in memory.

Counting reads every match up to the count asked for, and the same words recur from query to query, so each
count is kept for the index version (its commit time and section count) it was made on.
"""

from __future__ import annotations

import sqlite3

from ..schema import KeptPerVersion, index_version


def document_frequency(conn: sqlite3.Connection, expression: str, enough: int) -> int:
    """How many sections match, counting no further than `enough`.

    Counting reads every match up to `enough`, and the same words recur from query to query, so each count is
    kept for the index version it was made on (`_counts`).
    """
    counts = _counts(conn)
    known = counts.get(expression) if counts is not None else None
    if known is not None:
        found, counted_to = known
        if found < counted_to or enough <= counted_to:  # exact, or at least `enough`
            return min(found, enough)
    found = int(
        conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM sections_fts WHERE sections_fts MATCH ? LIMIT ?)",
            [expression, enough],
        ).fetchone()[0]
    )
    if counts is not None:
        if len(counts) >= KEPT_COUNTS:
            counts.clear()
        counts[expression] = (found, enough)
    return found


# Match counts by index version (its commit time and section count, from `info`): expression -> (sections
# found, the count it stopped at). A version is what one commit wrote, so its counts never change; a new
# commit has a new version, and the oldest versions are dropped.
KEPT_VERSIONS = 4  # e.g. `mkdocs serve`'s working index, rebuilt while a published index is served
KEPT_COUNTS = 10_000  # expressions kept per version; past that the version starts afresh
_COUNTS_BY_VERSION: KeptPerVersion[dict[str, tuple[int, int]]] = KeptPerVersion(KEPT_VERSIONS)


def _counts(conn: sqlite3.Connection) -> dict[str, tuple[int, int]] | None:
    """The counts kept for the index version `conn` reads; None for an index that does not say its version."""
    version = index_version(conn)
    return None if version is None else _COUNTS_BY_VERSION.get(version, dict)


def forget_counts() -> None:
    """Drop every kept match count (benchmarks time searches without them)."""
    _COUNTS_BY_VERSION.clear()


def section_count(conn: sqlite3.Connection) -> int:
    """How many sections the index holds, as its last commit counted them (one lookup, whatever the site's size).

    An index written before the count was kept is counted here instead.
    """
    row = conn.execute("SELECT value FROM info WHERE key = 'section_count'").fetchone()
    if row is not None:
        return int(row[0])
    counted: int = conn.execute("SELECT count(*) FROM sections").fetchone()[0]
    return counted
