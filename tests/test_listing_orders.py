"""Every listing order is read from an index in its own directions: get_recent and each `sort`/`order` of
query_documents, alone and with the common filters, on a real built site whose pages all share one file time
(as every page of a fresh CI checkout does). SQLite's own plan of the statement each query function runs
(`EXPLAIN QUERY PLAN` of the statement and parameters caught as it ran) sorts nothing; and the rows are in the order the spec
gives (ties by path ascending), here where every page ties on `modified`."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from helpers.site import Site
from mkdocs_vault_mcp.index.filters import Filters
from mkdocs_vault_mcp.index.query import queries

ONE_TIME_NS = 1_767_225_600 * 10**9  # 2026-01-01T00:00:00Z
TITLES = ("Alpha", "beta", "Gamma", "Alpha")  # ties on title, and a lowercase title: code point order
SORTS = [(sort, order) for sort in ("path", "modified", "title") for order in ("asc", "desc")]
SORTED = "USE TEMP B-TREE FOR"  # SQLite's plan line for a sort (of all rows, or of each run of equal keys)
# The filters an index serves with the order: none, a language (an equality) and dates from an instant on (a range of
# the sort key itself, or a check of each row read in path or title order); a window of dates only for the dates'
# own order (below, what the others sort).
SERVED = {
    "no filter": Filters(),
    "language": Filters(language="en"),
    "modified_after": Filters(modified_after="2025-01-01T00:00:00Z"),
    "dates between": Filters(modified_after="2025-01-01T00:00:00Z", modified_before="2027-01-01T00:00:00Z"),
}
SERVED_ORDERS = [
    (name, sort, order) for name in SERVED for sort, order in SORTS if name != "dates between" or sort == "modified"
]


class Recording(sqlite3.Connection):
    """A connection that keeps each statement it runs with its parameters: SQLite plans a LIMIT given as a
    parameter otherwise than one written in the statement, so the plan is asked of the statement as it ran."""

    ran: list[tuple[str, Any]]

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        if hasattr(self, "ran"):
            self.ran.append((sql, parameters))
        return super().execute(sql, parameters)


@pytest.fixture(scope="module")
def one_date_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recording]:
    site = Site(tmp_path_factory.mktemp("one-date"), {"plugins": [{"vault-mcp": {"tag_fields": ["tags"]}}]})
    pages = {}
    for number in range(24):
        folder = ("", "guide/", "guide/deep/", "reference/")[number % 4]
        tags = "tags: [common]\n" if number % 3 == 0 else ""
        pages[f"{folder}page-{number:02}.md"] = f"---\n{tags}---\n# {TITLES[number % 4]}\n\nText {number}.\n"
    site.write_pages(pages)
    for path in site.docs.rglob("*"):
        os.utime(path, ns=(ONE_TIME_NS, ONE_TIME_NS))
    site.build()
    conn = sqlite3.connect(f"{site.index_path.as_uri()}?mode=ro", uri=True, factory=Recording)
    try:
        yield conn
    finally:
        conn.close()


def plans(conn: Recording, call: Callable[[], Any]) -> list[str]:
    """SQLite's plan of each listing statement `call` runs on `conn` (the statements that read rows in order)."""
    conn.ran = []
    try:
        call()
        listings = [(sql, parameters) for sql, parameters in conn.ran if " ORDER BY " in sql]
    finally:
        del conn.ran
    assert listings, "no listing statement ran"
    return [
        " | ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", parameters))
        for sql, parameters in listings
    ]


def expected_paths(conn: sqlite3.Connection, filters: Filters, sort: str, order: str) -> list[str]:
    """Every matching page in the spec's order, sorted here in Python from what count_documents matches."""
    rows: list[dict[str, Any]] = [dict(row) for row in queries.query_documents(conn, filters, limit=1000)["result"]]
    assert len(rows) == queries.count_documents(conn, filters) > 0
    rows.sort(key=lambda row: row["path"])  # ties: by path ascending, whichever way the key goes
    if sort != "path" or order == "desc":
        rows.sort(key=lambda row: row[sort], reverse=order == "desc")
    return [row["path"] for row in rows]


def test_every_page_shares_one_date(one_date_index: Recording) -> None:
    dates = {row["modified"] for row in queries.query_documents(one_date_index, Filters(), limit=1000)["result"]}
    assert dates == {"2026-01-01T00:00:00Z"}


@pytest.mark.parametrize(("name", "sort", "order"), SERVED_ORDERS)
def test_query_documents_reads_each_order_from_an_index(
    one_date_index: Recording, name: str, sort: str, order: str
) -> None:
    filters = SERVED[name]
    for plan in plans(one_date_index, lambda: queries.query_documents(one_date_index, filters, sort, order, 5)):
        assert SORTED not in plan, plan
    everything = expected_paths(one_date_index, filters, sort, order)
    for offset in (0, 5, 20):
        page = queries.query_documents(one_date_index, filters, sort, order, limit=5, offset=offset)["result"]
        assert [row["path"] for row in page] == everything[offset : offset + 5]


@pytest.mark.parametrize("language", [None, "en"])
def test_get_recent_reads_the_newest_first_from_an_index(one_date_index: Recording, language: str | None) -> None:
    for plan in plans(one_date_index, lambda: queries.get_recent(one_date_index, limit=5, language=language)):
        assert SORTED not in plan, plan
    recent = [row["path"] for row in queries.get_recent(one_date_index, limit=7, language=language)]
    assert recent == expected_paths(one_date_index, Filters(language=language), "modified", "desc")[:7]


# What SQLite reads from another index first and then sorts: a folder takes the pages of every folder below it, a
# range of `folder` values that come out of the folder index in folder order; a field value or a full-text query
# starts from the pages that hold it; a window of dates, taken (without statistics) to hold a few pages, is read
# from the date index. Each sorts only the pages it matched, never the runs of pages that share a date alone, and
# still gives the spec's order.
SORTED_AFTER_NARROWING = {
    "folder": Filters(folder="guide"),
    "field value": Filters(filters={"tags": "common"}),
    "full-text query": Filters(query="text"),
    "dates between": SERVED["dates between"],
}


@pytest.mark.parametrize("name", list(SORTED_AFTER_NARROWING))
@pytest.mark.parametrize(("sort", "order"), SORTS)
def test_narrowing_filters_sort_only_their_pages_in_the_spec_order(
    one_date_index: Recording, name: str, sort: str, order: str
) -> None:
    filters = SORTED_AFTER_NARROWING[name]
    everything = expected_paths(one_date_index, filters, sort, order)
    page = queries.query_documents(one_date_index, filters, sort, order, limit=3, offset=1)["result"]
    assert [row["path"] for row in page] == everything[1:4]
    if name == "folder":
        recent = queries.get_recent(one_date_index, limit=3, folder="guide")
        assert [row["path"] for row in recent] == expected_paths(one_date_index, filters, "modified", "desc")[:3]
