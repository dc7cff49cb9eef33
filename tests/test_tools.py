"""The MCP tools through a real client session (the SDK's `Client`, in-process), against the index of a
real `mkdocs build` of a site designed so that every case of the shared filters tells right from wrong.

The expected answers are written out by hand (or computed from the hand-written `MODIFIED` instants),
never derived from the code under test.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from helpers.mcp_session import Session, index_stale, session_over, session_with, text
from helpers.site import Site, built_site
from mkdocs_vault_mcp.index.freshness import Freshness
from mkdocs_vault_mcp.mcp.server import IndexReader, create_server


def page(front_matter: str, body: str) -> str:
    return f"---\n{front_matter.strip()}\n---\n{body.strip()}\n"


# Every page says "common" (so `search` for it returns whatever the filters leave). The words that
# the query tests look for appear only where written: foo, bar, and, not, a, b, zebra, kiwi, mango.
PAGES = {
    "index.md": page(
        "tags: [alpha, beta]\nlabels: [zeta]\nstatus: published\nversion: 2\nfeatured: true\n"
        "updated: 2025-01-15T12:00:00Z",
        "# Home\n\nCommon welcome text.",
    ),
    "about.md": page(
        "labels: [zeta]\nstatus: draft\npublished: 2024-01-02\nupdated: 2025-02-01T00:00:00Z",
        "# About zebra\n\nCommon facts about us.",
    ),
    "changelog.md": page(
        "description: Release notes.\nlabels: [a]\nupdated: 2025-01-31T23:59:59.999999Z",
        "# Changelog\n\nCommon release notes.\n\nZebra crossing moved; null pointer fixed.",
    ),
    "proj/one.md": page(
        "tags: [alpha]\nlabels: [B]\nfeatured: true\nversion: 1.5\nupdated: 2025-03-31T23:30:00-02:00",
        "# One\n\nCommon foo and bar.",
    ),
    "proj/sub/deep.md": page(
        "tags: [gamma]\nlabels: [b]\nfeatured: false\nupdated: 2025-04-01T00:30:00+02:00",
        "# Deep\n\nCommon bar foo.",
    ),
    "project/two.md": page(
        "tags: [alpha, gamma]\nlabels: [ß]\nstatus: published\nupdated: 2025-04-01T01:30:00Z",
        "# Two\n\nCommon unterminated strings.",
    ),
    "a_b/page.md": page("updated: 2024-06-01T00:00:00Z", "# Underscore\n\nCommon text."),
    "axb/page.md": page("updated: 2024-06-01T00:00:00Z", "# Decoy x\n\nCommon text."),
    "c%d/page.md": page("updated: 2024-07-01T00:00:00Z", "# Percent\n\nCommon text."),
    "cxxd/page.md": page("updated: 2024-07-01T00:00:00Z", "# Decoy xx\n\nCommon text."),
    "guide/install.md": page(
        'tags: [beta, "with, comma"]\nlabels: [st]\nstatus: published\nupdated: 2025-05-10T08:00:00+05:30',
        "# Install\n\nCommon steps, not hard.\n\n## Kiwi\n\nKiwi first.\n\n## Mango\n\nMango second.",
    ),
    "guide/advanced/tuning.md": page("updated: 2025-05-10T02:30:00Z", "# Tuning\n\nCommon kiwi mango blend."),
    "Guide/Upper.md": page("updated: 2024-12-31T23:00:00-01:00", "# Upper\n\nCommon words."),
    "misc/eclair.md": page("updated: 2023-03-03T03:03:03.25Z", "# Éclair\n\nCommon pastry."),
    "misc/apple.md": page("updated: 2023-01-01T00:00:00Z", "# apple\n\nCommon fruit."),
    "twin/first.md": page("updated: 2023-06-01T00:00:00Z", "# Twin\n\nCommon twin."),
    "twin/second.md": page("updated: 2023-06-01T00:00:00Z", "# Twin\n\nCommon twin."),
    "history/old.md": page("updated: 1969-12-31T23:59:59.5Z", "# Old\n\nCommon history."),
}

# The `updated` instants above, in UTC, as the tools must write them.
MODIFIED = {
    "index.md": "2025-01-15T12:00:00Z",
    "about.md": "2025-02-01T00:00:00Z",
    "changelog.md": "2025-01-31T23:59:59.999999Z",
    "proj/one.md": "2025-04-01T01:30:00Z",
    "proj/sub/deep.md": "2025-03-31T22:30:00Z",
    "project/two.md": "2025-04-01T01:30:00Z",
    "a_b/page.md": "2024-06-01T00:00:00Z",
    "axb/page.md": "2024-06-01T00:00:00Z",
    "c%d/page.md": "2024-07-01T00:00:00Z",
    "cxxd/page.md": "2024-07-01T00:00:00Z",
    "guide/install.md": "2025-05-10T02:30:00Z",
    "guide/advanced/tuning.md": "2025-05-10T02:30:00Z",
    "Guide/Upper.md": "2025-01-01T00:00:00Z",
    "misc/eclair.md": "2023-03-03T03:03:03.25Z",
    "misc/apple.md": "2023-01-01T00:00:00Z",
    "twin/first.md": "2023-06-01T00:00:00Z",
    "twin/second.md": "2023-06-01T00:00:00Z",
    "history/old.md": "1969-12-31T23:59:59.5Z",
}
ALL = set(PAGES)
ROOT = {"index.md", "about.md", "changelog.md"}
PROJ = {"proj/one.md", "proj/sub/deep.md"}
INDEXED_FIELDS = ["description", "featured", "labels", "published", "status", "tags", "updated", "version"]
FILTER_TOOLS = ["count_documents", "aggregate_documents", "query_documents", "search"]
TOOLS = ["count_documents", "aggregate_documents", "get_recent", "query_documents", "search", "read", "stats", "links"]
SHARED = {
    "query",
    "scope",
    "path",
    "folder",
    "pattern",
    "filters",
    "modified_after",
    "modified_before",
    "language",
    "wait_for_pending_writes",
}


def folder_of(path: str) -> str:
    return path.rpartition("/")[0]


def instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def modified_in(after: str | None = None, before: str | None = None) -> set[str]:
    return {
        path
        for path, when in MODIFIED.items()
        if (after is None or instant(when) >= instant(after)) and (before is None or instant(when) < instant(before))
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Site:
    config = {"plugins": [{"vault-mcp": {"modified_meta": "updated"}}]}
    return built_site(tmp_path_factory.mktemp("tools"), config, PAGES)


@pytest.fixture(scope="module")
def mcp(built: Site) -> Iterator[Session]:
    with session_over(built.index_path) as session:
        yield session


def outcome(mcp: Session, tool: str, **arguments: Any) -> tuple[int, Counter | None, set[str] | None]:
    """(how many pages, how many per folder, which pages) as far as the tool tells."""
    if tool == "count_documents":
        return mcp.ok(tool, **arguments)["total"], None, None
    if tool == "aggregate_documents":
        data = mcp.ok(tool, by="folder", limit=1000, **arguments)
        assert not data["truncated"] and data["missing"] == 0
        folders = Counter({bucket["key"]: bucket["count"] for bucket in data["buckets"]})
        assert sum(folders.values()) == data["total"]
        return data["total"], folders, None
    if tool == "query_documents":
        data = mcp.ok(tool, limit=1000, **arguments)
        assert data["next_offset"] is None and len(data["result"]) == data["total"]
        return data["total"], Counter(row["folder"] for row in data["result"]), {row["path"] for row in data["result"]}
    if tool == "search":
        arguments.setdefault("query", "common")
        hits = mcp.ok(tool, limit=100, **arguments)["result"]
        paths = {hit["path"] for hit in hits}
        assert len(paths) == len(hits)
        return len(hits), Counter(folder_of(path) for path in paths), paths
    if tool == "get_recent":
        rows = mcp.ok(tool, limit=1000, **arguments)["result"]
        return len(rows), Counter(row["folder"] for row in rows), {row["path"] for row in rows}
    raise AssertionError(tool)


def assert_selects(mcp: Session, tool: str, expected: set[str], **arguments: Any) -> None:
    total, folders, paths = outcome(mcp, tool, **arguments)
    assert total == len(expected), (tool, arguments)
    if folders is not None:
        assert folders == Counter(folder_of(path) for path in expected), (tool, arguments)
    if paths is not None:
        assert paths == expected, (tool, arguments)


# --- The site as indexed ---------------------------------------------------------------------------


def test_every_page_is_a_document_with_its_exact_modification_time(mcp: Session) -> None:
    rows = mcp.ok("query_documents", limit=1000)["result"]
    assert {row["path"]: row["modified"] for row in rows} == MODIFIED
    stats = mcp.ok("stats")
    assert stats["document_count"] == len(PAGES)
    assert stats["folder_count"] == len({folder_of(path) for path in PAGES})
    assert stats["indexed_frontmatter_fields"] == INDEXED_FIELDS
    assert (stats["oldest_modified"], stats["newest_modified"]) == ("1969-12-31T23:59:59.5Z", "2025-05-10T02:30:00Z")
    assert stats["index_stale"] is False


# --- folder --------------------------------------------------------------------------------------

FOLDER_CASES = {
    "": ROOT,
    "/": ROOT,
    "//": ROOT,
    "proj": PROJ,
    "proj/": PROJ,
    "/proj/": PROJ,
    "proj\\": PROJ,
    "proj/sub": {"proj/sub/deep.md"},
    "proj//sub/": {"proj/sub/deep.md"},
    "project": {"project/two.md"},
    "guide": {"guide/install.md", "guide/advanced/tuning.md"},
    "Guide": {"Guide/Upper.md"},
    "a_b": {"a_b/page.md"},
    "c%d": {"c%d/page.md"},
}
# Folders that hold no page: an error naming the closest folders (tests/test_unknown_folder.py), never an empty
# answer. As LIKE patterns `a%b` would match a_b and axb, and `c_d` would match c%d; `null` is a name, not JSON null.
NO_PAGE_FOLDERS = ["pro", "GUIDE", "a%b", "c_d", "missing", "null"]


@pytest.mark.parametrize("tool", [*FILTER_TOOLS, "get_recent"])
@pytest.mark.parametrize("folder", NO_PAGE_FOLDERS)
def test_a_folder_that_holds_no_page_is_an_error(mcp: Session, tool: str, folder: str) -> None:
    arguments = {"search": {"query": "common"}, "aggregate_documents": {"by": "folder"}}.get(tool, {})
    assert f"No page is in folder {folder!r}" in mcp.error(tool, folder=folder, **arguments)


@pytest.mark.parametrize("tool", [*FILTER_TOOLS, "get_recent"])
@pytest.mark.parametrize("folder", list(FOLDER_CASES))
def test_folder_selects_the_pages_under_it_or_for_the_root_only_the_root_pages(
    mcp: Session,
    tool: str,
    folder: str,
) -> None:
    assert_selects(mcp, tool, FOLDER_CASES[folder], folder=folder)


# --- pattern -------------------------------------------------------------------------------------

PATTERN_CASES = {
    "*": ALL,
    "proj/*": PROJ,  # `*` crosses `/`
    "*/*/*": {"proj/sub/deep.md", "guide/advanced/tuning.md"},
    "guide/?nstall.md": {"guide/install.md"},
    "guide/?install.md": set(),
    "[a-z]*": {path for path in ALL if "a" <= path[0] <= "z"},
    "[^a]*": {path for path in ALL if path[0] != "a"},
    "[Gc]*/*": {"Guide/Upper.md", "c%d/page.md", "cxxd/page.md"},
    "GUIDE/*": set(),
    "*.MD": set(),
    "a_b/*": {"a_b/page.md"},
    "c%d/*": {"c%d/page.md"},
    "[1]": set(),  # a bracket class, not a JSON list
    "": set(),
}


@pytest.mark.parametrize("tool", FILTER_TOOLS)
@pytest.mark.parametrize("pattern", list(PATTERN_CASES))
def test_pattern_selects_the_paths_its_glob_matches(mcp: Session, tool: str, pattern: str) -> None:
    assert_selects(mcp, tool, PATTERN_CASES[pattern], pattern=pattern)


# --- path ----------------------------------------------------------------------------------------

PATH_CASES = {
    "guide/install.md": {"guide/install.md"},
    "Guide/install.md": set(),
    "guide/Install.md": set(),
    "guide/install": set(),
    "/guide/install.md": set(),
    "c%d/page.md": {"c%d/page.md"},
    "": set(),
}


@pytest.mark.parametrize("tool", FILTER_TOOLS)
@pytest.mark.parametrize("path", list(PATH_CASES))
def test_path_selects_exactly_that_page(mcp: Session, tool: str, path: str) -> None:
    assert_selects(mcp, tool, PATH_CASES[path], path=path)


# --- filters -------------------------------------------------------------------------------------

FILTER_CASES = [
    ({"tags": "alpha"}, {"index.md", "proj/one.md", "project/two.md"}),  # list field: one member equals
    ({"tags": "with, comma"}, {"guide/install.md"}),  # never split on commas
    ({"tags": "with"}, set()),
    ({"status": "published"}, {"index.md", "project/two.md", "guide/install.md"}),
    ({"status": "Published"}, set()),  # case-sensitive
    ({"featured": True}, {"index.md", "proj/one.md"}),
    ({"featured": "true"}, {"index.md", "proj/one.md"}),  # normalized alike
    ({"featured": False}, {"proj/sub/deep.md"}),
    ({"version": 2}, {"index.md"}),
    ({"version": 2.0}, {"index.md"}),
    ({"version": "2"}, {"index.md"}),
    ({"version": 1.5}, {"proj/one.md"}),
    ({"version": 1}, set()),
    ({"published": "2024-01-02"}, {"about.md"}),  # a date
    ({"updated": "2025-03-31T23:30:00-02:00"}, {"proj/one.md"}),  # a datetime, as isoformat() writes it
    ({"updated": "2025-04-01T01:30:00+00:00"}, {"project/two.md"}),
    ({"updated": "2025-04-01T01:30:00Z"}, set()),  # a string compares as written; rows show the stored form
    ({"labels": "ß"}, {"project/two.md"}),
    ({"tags": "alpha", "featured": True}, {"index.md", "proj/one.md"}),
    ({"tags": "alpha", "status": "published"}, {"index.md", "project/two.md"}),
    ({"tags": "beta", "labels": "st"}, {"guide/install.md"}),
    ({}, ALL),
]


@pytest.mark.parametrize("tool", FILTER_TOOLS)
@pytest.mark.parametrize("filters, expected", FILTER_CASES, ids=[json.dumps(case[0]) for case in FILTER_CASES])
def test_filters_select_the_pages_whose_front_matter_matches(
    mcp: Session,
    tool: str,
    filters: dict,
    expected: set[str],
) -> None:
    assert_selects(mcp, tool, expected, filters=filters)


def test_filters_given_as_a_json_string_are_read_as_the_object(mcp: Session) -> None:
    assert mcp.ok("count_documents", filters='{"tags": "alpha"}')["total"] == 3


# --- modified_after / modified_before ------------------------------------------------------------

TIME_CASES = [
    # The instant of proj/one.md and project/two.md, written in UTC and with offsets.
    {"modified_after": "2025-04-01T01:30:00Z"},
    {"modified_after": "2025-03-31T23:30:00-02:00"},
    {"modified_after": "2025-04-01T03:30:00+02:00"},
    {"modified_after": "2025-04-01T01:30:00.000001Z"},
    {"modified_after": "2025-04-01T01:29:59.999999Z"},
    {"modified_before": "2025-04-01T01:30:00Z"},
    {"modified_before": "2025-04-01T03:30:00+02:00"},
    {"modified_before": "2025-04-01T01:30:00.000001Z"},
    # proj/sub/deep.md, written with the offset of its own front matter.
    {"modified_before": "2025-04-01T00:30:00+02:00"},
    {"modified_after": "2025-03-31T22:30:00Z", "modified_before": "2025-04-01T01:30:00Z"},
    # The last microsecond of January, and the first of February.
    {"modified_after": "2025-01-31T23:59:59.999999Z", "modified_before": "2025-02-01T00:00:00Z"},
    {"modified_after": "2025-02-01T00:00:00Z", "modified_before": "2025-02-01T00:00:00.000001Z"},
    {"modified_before": "1970-01-01T00:00:00Z"},
    {"modified_after": "2025-04-01T01:30:00Z", "modified_before": "2025-04-01T01:30:00Z"},
]


@pytest.mark.parametrize("tool", FILTER_TOOLS)
@pytest.mark.parametrize("window", TIME_CASES, ids=[json.dumps(case) for case in TIME_CASES])
def test_modified_after_and_before_select_the_pages_in_that_window(
    mcp: Session,
    tool: str,
    window: dict[str, str],
) -> None:
    assert_selects(mcp, tool, modified_in(window.get("modified_after"), window.get("modified_before")), **window)


def test_time_cases_fall_on_the_boundaries() -> None:
    assert modified_in("2025-04-01T01:30:00Z") == {
        "proj/one.md",
        "project/two.md",
        "guide/install.md",
        "guide/advanced/tuning.md",
    }
    assert modified_in("2025-04-01T01:30:00.000001Z") == {"guide/install.md", "guide/advanced/tuning.md"}
    assert modified_in(None, "2025-04-01T00:30:00+02:00") == modified_in(None, "2025-04-01T01:30:00Z") - {
        "proj/sub/deep.md"
    }
    assert modified_in("2025-01-31T23:59:59.999999Z", "2025-02-01T00:00:00Z") == {"changelog.md"}
    assert modified_in(None, "1970-01-01T00:00:00Z") == {"history/old.md"}


# --- query and scope -----------------------------------------------------------------------------

QUERY_CASES = [
    # (query, scope, pages)
    ("zebra", "metadata", {"about.md"}),  # in a title
    ("zebra", "body", {"changelog.md"}),  # in section text, not in the summary
    ("zebra", "all", {"about.md", "changelog.md"}),
    ("cxxd", "metadata", {"cxxd/page.md"}),  # the path is metadata
    ("cxxd", "body", set()),
    ("kiwi mango", "all", {"guide/advanced/tuning.md"}),  # within one section, not across two
    ("kiwi OR mango", "all", {"guide/install.md", "guide/advanced/tuning.md"}),
    ("kiwi NOT mango", "all", {"guide/install.md"}),
    ('"foo and bar"', "all", {"proj/one.md"}),
    ("unterm*", "all", {"project/two.md"}),
    ("title: zebra", "all", {"about.md"}),
    ("null", "all", {"changelog.md"}),  # a word, not JSON null
    # Malformed FTS5: its literal words, ANDed.
    ("foo AND (", "all", {"proj/one.md"}),  # foo and "and"
    ('"unterminated', "all", {"project/two.md"}),
    ("(", "all", set()),  # no words
    ("foo:bar", "all", {"proj/one.md", "proj/sub/deep.md"}),
    ("NOT", "all", {"guide/install.md"}),  # the word "not"
    ("a -b", "all", {"a_b/page.md"}),  # a and b: only in the path a_b/page.md
    ("a -b", "body", set()),
    ("kiwi) OR (zebra", "metadata", set()),  # malformed: its words, all within the metadata
    ("kiwi) OR (zebra", "all", set()),
    ("", "all", ALL),
    ("   ", "body", ALL),
]


@pytest.mark.parametrize("tool", ["count_documents", "aggregate_documents", "query_documents"])
@pytest.mark.parametrize("query, scope, expected", QUERY_CASES, ids=[f"{q!r}-{s}" for q, s, _ in QUERY_CASES])
def test_query_selects_the_pages_that_match_it_in_its_scope(
    mcp: Session,
    tool: str,
    query: str,
    scope: str,
    expected: set[str],
) -> None:
    assert_selects(mcp, tool, expected, query=query, scope=scope)


@pytest.mark.parametrize(
    "query, scope, expected",
    [case for case in QUERY_CASES if case[0].strip()],
    ids=[f"{q!r}-{s}" for q, s, _ in QUERY_CASES if q.strip()],
)
def test_search_ranks_the_pages_matching_the_whole_query_first(
    mcp: Session,
    query: str,
    scope: str,
    expected: set[str],
) -> None:
    """search never fails on a query; on this site the pages matching the whole query are the best ranked, and
    where no page matches it whole, every page shown matches one of its words."""
    hits = [hit["path"] for hit in mcp.ok("search", query=query, scope=scope, limit=100)["result"]]
    if expected:
        assert set(hits[: len(expected)]) == expected
    else:
        any_word = " OR ".join(f'"{word}"' for word in re.findall(r"\w+", query))
        for path in hits:
            assert mcp.ok("count_documents", path=path, query=any_word, scope=scope)["total"] == 1, path


def test_search_scope_is_a_hard_condition(mcp: Session) -> None:
    assert {hit["path"] for hit in mcp.ok("search", query="zebra", scope="metadata")["result"]} == {"about.md"}
    assert {hit["path"] for hit in mcp.ok("search", query="zebra", scope="body")["result"]} == {"changelog.md"}
    assert mcp.ok("search", query="(")["result"] == []


# --- aggregate_documents -------------------------------------------------------------------------


def buckets(data: dict[str, Any]) -> list[tuple[str, int]]:
    return [(bucket["key"], bucket["count"]) for bucket in data["buckets"]]


def test_month_buckets_are_utc_months(mcp: Session) -> None:
    data = mcp.ok("aggregate_documents", by="month")
    assert buckets(data) == [
        ("2025-01", 3),  # changelog (its last microsecond), index, Guide/Upper (local time: December 2024)
        ("2023-06", 2),
        ("2024-06", 2),
        ("2024-07", 2),
        ("2025-04", 2),  # proj/one (local time: March 31) and project/two
        ("2025-05", 2),
        ("1969-12", 1),  # before the epoch: rounded down, not toward zero
        ("2023-01", 1),
        ("2023-03", 1),
        ("2025-02", 1),
        ("2025-03", 1),  # proj/sub/deep (local time: April 1)
    ]
    assert (data["total"], data["missing"], data["truncated"]) == (len(PAGES), 0, False)


def test_month_bucket_of_a_page_whose_local_time_is_another_month(mcp: Session) -> None:
    one = mcp.ok("aggregate_documents", by="month", path="proj/one.md")
    deep = mcp.ok("aggregate_documents", by="month", path="proj/sub/deep.md")
    assert (buckets(one), buckets(deep)) == ([("2025-04", 1)], [("2025-03", 1)])


def test_folder_buckets_count_each_page_in_its_own_folder(mcp: Session) -> None:
    data = mcp.ok("aggregate_documents", by="folder", pattern="proj*")
    assert buckets(data) == [("proj", 1), ("proj/sub", 1), ("project", 1)]
    assert (data["total"], data["missing"]) == (3, 0)


def test_tag_buckets_sum_above_total_and_count_missing(mcp: Session) -> None:
    data = mcp.ok("aggregate_documents", by="tag", filters={"tags": "alpha"})
    assert buckets(data) == [("alpha", 3), ("beta", 1), ("gamma", 1)]
    assert (data["total"], data["missing"]) == (3, 0)
    everything = mcp.ok("aggregate_documents", by="tag")
    assert buckets(everything) == [("alpha", 3), ("beta", 2), ("gamma", 2), ("with, comma", 1)]
    assert (everything["total"], everything["missing"]) == (len(PAGES), len(PAGES) - 5)


def test_tag_ties_are_broken_by_casefold_then_raw_key(mcp: Session) -> None:
    # casefold, not lower: "ß" folds to "ss", which sorts before "st".
    data = mcp.ok("aggregate_documents", by="tag", field="labels")
    assert buckets(data) == [("zeta", 2), ("a", 1), ("B", 1), ("b", 1), ("ß", 1), ("st", 1)]
    assert (data["total"], data["missing"], data["truncated"]) == (len(PAGES), len(PAGES) - 7, False)


@pytest.mark.parametrize("limit", [1, 3, 5, 6, 1000])
def test_limit_truncates_buckets_and_never_changes_total(mcp: Session, limit: int) -> None:
    full = [("zeta", 2), ("a", 1), ("B", 1), ("b", 1), ("ß", 1), ("st", 1)]
    data = mcp.ok("aggregate_documents", by="tag", field="labels", limit=limit)
    assert buckets(data) == full[:limit]
    assert data["truncated"] is (limit < len(full))
    assert (data["total"], data["missing"]) == (len(PAGES), len(PAGES) - 7)


def test_field_is_ignored_unless_grouping_by_tag(mcp: Session) -> None:
    assert mcp.ok("aggregate_documents", by="folder", field="no such field")["total"] == len(PAGES)
    assert mcp.ok("aggregate_documents", by="month", field="no such field")["total"] == len(PAGES)


# --- get_recent ----------------------------------------------------------------------------------


def newest_first(paths: set[str]) -> list[str]:
    by_path = sorted(paths)
    return sorted(by_path, key=lambda path: instant(MODIFIED[path]), reverse=True)  # stable: ties by path


def test_get_recent_is_newest_first_with_ties_by_path(mcp: Session) -> None:
    rows = mcp.ok("get_recent", limit=1000)["result"]
    assert [row["path"] for row in rows] == newest_first(ALL)
    assert [row["path"] for row in rows[:4]] == [
        "guide/advanced/tuning.md",
        "guide/install.md",
        "proj/one.md",
        "project/two.md",
    ]
    assert [row["path"] for row in mcp.ok("get_recent")["result"]] == newest_first(ALL)[:20]
    assert [row["path"] for row in mcp.ok("get_recent", limit=3)["result"]] == newest_first(ALL)[:3]


def test_get_recent_rows_hold_the_page_fields_and_no_body(mcp: Session) -> None:
    row = mcp.ok("get_recent", folder="proj/sub")["result"][0]
    assert row == {
        "path": "proj/sub/deep.md",
        "title": "Deep",
        "folder": "proj/sub",
        "url": "/proj/sub/deep/",
        "modified": "2025-03-31T22:30:00Z",
        "summary": "Common bar foo.",
        "meta": {"tags": ["gamma"], "labels": ["b"], "featured": False, "updated": "2025-04-01T00:30:00+02:00"},
        "language": "en",
    }  # and no fallback_of, which only an untranslated copy has


def test_get_recent_in_the_root_folder_only(mcp: Session) -> None:
    rows = mcp.ok("get_recent", folder="")["result"]
    assert [row["path"] for row in rows] == newest_first(ROOT)


# --- query_documents: sorting and paging ---------------------------------------------------------

ORDERS = [("path", None), ("path", "desc"), ("modified", None), ("modified", "asc"), ("title", None), ("title", "desc")]


def expected_order(sort: str, order: str | None) -> list[str]:
    titles = {path: text.split("# ", 1)[1].split("\n", 1)[0] for path, text in PAGES.items()}
    by_path = sorted(ALL)
    if sort == "path":
        return by_path[::-1] if order == "desc" else by_path
    if sort == "title":  # code point order, ties by path ascending either way
        return sorted(by_path, key=lambda path: titles[path], reverse=order == "desc")
    return sorted(by_path, key=lambda path: instant(MODIFIED[path]), reverse=order != "asc")


def test_expected_title_order_is_by_code_point() -> None:
    titles = [PAGES[path].split("# ", 1)[1].split("\n", 1)[0] for path in expected_order("title", None)]
    assert titles[:2] == ["About zebra", "Changelog"]
    assert titles[-3:] == ["Upper", "apple", "Éclair"]  # upper case, then lower case, then beyond ASCII
    assert expected_order("title", None).index("twin/first.md") + 1 == expected_order("title", None).index(
        "twin/second.md"
    )
    assert expected_order("title", "desc").index("twin/first.md") + 1 == expected_order("title", "desc").index(
        "twin/second.md"
    )


@pytest.mark.parametrize("sort, order", ORDERS)
@pytest.mark.parametrize("limit", [1, 4, 7, 1000])
def test_paging_visits_every_page_once_in_order(mcp: Session, sort: str, order: str | None, limit: int) -> None:
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        data = mcp.ok("query_documents", sort=sort, order=order, limit=limit, offset=offset)
        assert data["total"] == len(PAGES)
        assert len(data["result"]) == min(limit, len(PAGES) - offset)
        seen += [row["path"] for row in data["result"]]
        assert data["next_offset"] in (None, offset + limit)
        offset = data["next_offset"]
        assert len(seen) <= len(PAGES)
    assert seen == expected_order(sort, order)


def test_paging_with_filters_and_past_the_end(mcp: Session) -> None:
    first = mcp.ok("query_documents", folder="guide", limit=1)
    assert ([row["path"] for row in first["result"]], first["total"], first["next_offset"]) == (
        ["guide/advanced/tuning.md"],
        2,
        1,
    )
    last = mcp.ok("query_documents", folder="guide", limit=1, offset=1)
    assert ([row["path"] for row in last["result"]], last["next_offset"]) == (["guide/install.md"], None)
    beyond = mcp.ok("query_documents", folder="guide", offset=2**70)
    assert (beyond["result"], beyond["total"], beyond["next_offset"]) == ([], 2, None)


# --- Bad input: one clear error each ----------------------------------------------------------------

BAD_INPUT = [
    # (tool, arguments, words the message must contain)
    ("count_documents", {"scope": "title"}, ["scope", '"title"', '"all"', '"metadata"', '"body"']),
    ("aggregate_documents", {"by": "author"}, ["by", '"author"', '"folder"', '"tag"', '"month"']),
    ("query_documents", {"sort": "size"}, ["sort", '"size"', '"path"', '"modified"', '"title"']),
    ("query_documents", {"order": "up"}, ["order", '"up"', '"asc"', '"desc"']),
    ("aggregate_documents", {"by": "tag", "limit": 0}, ["limit", "from 1 to 1000", "got 0"]),
    ("aggregate_documents", {"by": "tag", "limit": 1001}, ["limit", "from 1 to 1000", "got 1001"]),
    ("get_recent", {"limit": 0}, ["limit", "from 1 to 1000", "got 0"]),
    ("get_recent", {"limit": 1001}, ["limit", "from 1 to 1000", "got 1001"]),
    ("query_documents", {"limit": 0}, ["limit", "from 1 to 1000", "got 0"]),
    ("query_documents", {"limit": 1001}, ["limit", "from 1 to 1000", "got 1001"]),
    ("search", {"query": "common", "limit": 0}, ["limit", "from 1 to 100", "got 0"]),
    ("search", {"query": "common", "limit": 101}, ["limit", "from 1 to 100", "got 101"]),
    ("search", {"query": "common", "sections_per_page": 11}, ["sections_per_page", "from 1 to 10", "got 11"]),
    ("read", {"path": "index.md", "max_chars": 0}, ["max_chars", "from 1 to 100000", "got 0"]),
    ("query_documents", {"offset": -1}, ["offset", "0 or more", "got -1"]),
    ("read", {"path": "index.md", "offset": -5}, ["offset", "0 or more", "got -5"]),
    ("count_documents", {"modified_after": "2025-03-01T00:00:00"}, ["modified_after", "time zone", "00:00:00Z"]),
    ("count_documents", {"modified_before": "2025-03-01"}, ["modified_before", "date alone", "time zone"]),
    ("count_documents", {"modified_after": "last week"}, ["modified_after", "RFC 3339", "'last week'"]),
    ("count_documents", {"modified_after": "2025-02-30T00:00:00Z"}, ["modified_after", "day is out of range"]),
    ("count_documents", {"filters": {"author": "me"}}, ["'author'", "not indexed", ", ".join(INDEXED_FIELDS)]),
    ("aggregate_documents", {"by": "tag", "field": "author"}, ["'author'", "not indexed", INDEXED_FIELDS[0]]),
    ("count_documents", {"filters": 5}, ["filters", "an object", "got 5"]),
    ("count_documents", {"filters": "tags=alpha"}, ["filters", "an object", 'got "tags=alpha"']),
    ("count_documents", {"filters": ["tags", "alpha"]}, ["filters", "an object", "got ["]),
    ("count_documents", {"filters": {"tags": None}}, ['filters["tags"]', "a string, a number or a boolean", "null"]),
    ("count_documents", {"filters": {"tags": ["alpha", "beta"]}}, ['filters["tags"]', "one value", '"beta"]']),
    ("count_documents", {"filters": {"tags": {"any": "alpha"}}}, ['filters["tags"]', "a string", '{"any": "alpha"}']),
    ("search", {"query": ""}, ["query", "blank"]),
    ("search", {"query": "  \t "}, ["query", "blank"]),
    ("search", {}, ["query is required", "Keywords"]),
    ("aggregate_documents", {}, ["by is required", "folder", "tag", "month"]),
    ("read", {"path": "guide/Install.md"}, ["'guide/Install.md'", "case-sensitive", "search", "query_documents"]),
    ("read", {"path": "guide/install.md", "section": "Papaya"}, ["'Papaya'", "'Kiwi'", "'Mango'", "search"]),
    ("read", {}, ["path is required"]),
    # Wrong JSON types.
    ("aggregate_documents", {"by": "tag", "limit": "abc"}, ["limit", "an integer from 1 to 1000", 'got "abc"']),
    ("query_documents", {"limit": 2.5}, ["limit", "an integer", "got 2.5"]),
    ("query_documents", {"limit": True}, ["limit", "an integer", "got true"]),
    ("aggregate_documents", {"by": 3}, ["by", '"folder"', "got 3"]),
    ("count_documents", {"folder": 3}, ["folder", "a string", "got 3"]),
    ("count_documents", {"folder": ["guide"]}, ["folder", "a string", 'got ["guide"]']),
    ("count_documents", {"query": {"text": "x"}}, ["query", "a string"]),
    ("count_documents", {"wait_for_pending_writes": "maybe"}, ["wait_for_pending_writes", "true or false"]),
    ("count_documents", {"tags": "alpha"}, ["unknown argument 'tags'", "folder", "filters"]),
    (
        "get_recent",
        {"pattern": "*"},
        ["unknown argument 'pattern'", "limit, folder, language, wait_for_pending_writes"],
    ),
    ("count_documents", {"language": "xx"}, ["No page is in language 'xx'", "languages: 'en'"]),
    ("aggregate_documents", {"by": "country"}, ['"language"']),
]


@pytest.mark.parametrize("tool, arguments, words", BAD_INPUT, ids=[f"{t}-{json.dumps(a)}" for t, a, _ in BAD_INPUT])
def test_bad_input_is_a_clear_tool_error(mcp: Session, tool: str, arguments: dict, words: list[str]) -> None:
    message = mcp.error(tool, **arguments)
    for word in words:
        assert word in message, message
    assert "pydantic" not in message and "Arguments" not in message


@pytest.mark.parametrize("tool", ["count_documents", "aggregate_documents", "query_documents", "search"])
def test_every_filter_tool_checks_every_filter(mcp: Session, tool: str) -> None:
    base = {"by": "tag"} if tool == "aggregate_documents" else {"query": "common"} if tool == "search" else {}
    assert "scope" in mcp.error(tool, **base, scope="title")
    assert "time zone" in mcp.error(tool, **base, modified_after="2025-03-01")
    assert "time zone" in mcp.error(tool, **base, modified_before="2025-03-01T10:00:00")
    assert "not indexed" in mcp.error(tool, **base, filters={"author": "me"})
    assert "an object" in mcp.error(tool, **base, filters=5)
    assert "got null" in mcp.error(tool, **base, filters={"tags": None})
    assert "a string" in mcp.error(tool, **base, folder=7)


def test_null_stands_for_an_argument_not_given(mcp: Session) -> None:
    everything = mcp.ok(
        "query_documents",
        folder=None,
        pattern=None,
        path=None,
        filters=None,
        order=None,
        modified_after=None,
        modified_before=None,
        limit=1000,
    )
    assert everything["total"] == len(PAGES)
    assert [row["path"] for row in everything["result"]] == sorted(ALL)


def test_numbers_and_booleans_sent_as_strings_are_read(mcp: Session) -> None:
    assert len(mcp.ok("get_recent", limit="3")["result"]) == 3
    assert mcp.ok("count_documents", wait_for_pending_writes="true")["total"] == len(PAGES)


WEIRD_VALUES = [
    None,
    True,
    0,
    -1,
    2.5,
    10**30,
    -(10**30),
    1e308,
    "",
    " ",
    "abc",
    "(",
    "null",
    "[1]",
    "{}",
    "\x00",
    "é" * 5000,
    [],
    ["a"],
    {},
    {"tags": None},
    {"tags": [1]},
    {"": ""},
    {"tags": {"a": 1}},
    "2025-13-45T99:99:99Z",
]


@pytest.mark.parametrize("tool", TOOLS)
def test_no_input_makes_a_tool_crash(mcp: Session, tool: str) -> None:
    """Every parameter of every tool, given values of every JSON type: an answer or a clear error."""
    base = {"aggregate_documents": {"by": "tag"}, "search": {"query": "common"}, "read": {"path": "index.md"}}
    for name in mcp.tools[tool].input_schema["properties"]:
        for value in WEIRD_VALUES:
            result = mcp.call(tool, **{**base.get(tool, {}), name: value})
            if result.is_error:
                message = text(result)
                assert message.startswith(f"Error executing tool {tool}: ") and len(message) > 40, (name, value)
    assert mcp.ok("count_documents")["total"] == len(PAGES)


# --- The published tools -------------------------------------------------------------------------


def test_every_tool_is_published_read_only_with_schemas(mcp: Session) -> None:
    assert sorted(mcp.tools) == sorted(TOOLS)
    for tool in mcp.tools.values():
        assert tool.title and tool.description
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.idempotent_hint is True
        assert tool.annotations.destructive_hint is not True  # left out: MCP reads it only when not read-only
        assert tool.input_schema["type"] == "object" and tool.output_schema["type"] == "object"
        Draft202012Validator.check_schema(tool.input_schema)
        Draft202012Validator.check_schema(tool.output_schema)
        for name, rule in tool.input_schema["properties"].items():
            # The shared filters are explained once, in count_documents; the others name them only.
            assert rule.get("description") or name in SHARED | {"version"}, (tool.name, name)
    for name, rule in mcp.tools["count_documents"].input_schema["properties"].items():
        assert len(rule.get("description", "")) > 15, name
    for name in FILTER_TOOLS[1:]:
        assert "count_documents" in mcp.tools[name].description or "all given filters" in mcp.tools[name].description


def test_seed_tools_keep_their_parameters_and_outputs(mcp: Session) -> None:
    shared = SHARED | {"version"}  # every tool takes version (a site mike publishes: test_versions.py)
    count = mcp.tools["count_documents"]
    assert set(count.input_schema["properties"]) == shared
    assert set(count.output_schema["required"]) == {"total", "index_stale"}
    aggregate = mcp.tools["aggregate_documents"]
    assert set(aggregate.input_schema["properties"]) == shared | {"by", "field", "limit"}
    assert aggregate.input_schema["required"] == ["by"]
    assert aggregate.input_schema["properties"]["field"]["default"] == "tags"
    assert set(aggregate.output_schema["required"]) == {"total", "buckets", "missing", "truncated", "index_stale"}
    recent = mcp.tools["get_recent"]
    assert set(recent.input_schema["properties"]) == {
        "limit",
        "folder",
        "language",
        "wait_for_pending_writes",
        "version",
    }
    assert recent.input_schema["properties"]["limit"]["default"] == 20
    assert set(recent.output_schema["required"]) == {"result"}


def test_every_tool_answers_with_structured_content_and_index_stale(mcp: Session) -> None:
    calls = {
        "count_documents": {},
        "aggregate_documents": {"by": "folder"},
        "get_recent": {},
        "query_documents": {},
        "search": {"query": "kiwi"},
        "read": {"path": "guide/install.md", "section": "Kiwi"},
        "stats": {},
    }
    for tool, arguments in calls.items():
        result = mcp.call(tool, **arguments)
        assert not result.is_error
        assert index_stale(result) is False
        data = mcp.ok(tool, **arguments)
        if "index_stale" in mcp.tools[tool].output_schema["properties"]:
            assert data["index_stale"] is False
    assert mcp.ok("read", path="guide/install.md", section="Kiwi")["markdown"].startswith("## Kiwi")
    assert index_stale(mcp.call("count_documents", scope="nowhere")) is False  # errors carry it too


def test_answers_during_an_index_update_say_they_may_be_stale(built: Site) -> None:
    freshness = Freshness()
    freshness.build_started()  # and never finishes: waiting runs out
    server = create_server(IndexReader(built.index_path, freshness, wait_timeout=0.05))
    with session_with(server) as pending:
        for wait in (False, True):
            result = pending.call("count_documents", wait_for_pending_writes=wait)
            assert index_stale(result) is True
            assert result.structured_content == {"total": len(PAGES), "index_stale": True}
        assert index_stale(pending.call("get_recent", limit=1)) is True
        assert index_stale(pending.call("count_documents", scope="nowhere")) is True


def test_descriptions_fit_the_budget_and_point_to_the_right_sibling(mcp: Session) -> None:
    descriptions = {name: tool.description for name, tool in mcp.tools.items()}
    assert sum(map(len, descriptions.values())) < 6000
    for description in descriptions.values():
        assert "\n    " not in description  # docstring indentation is not sent
    siblings = {
        "count_documents": ["aggregate_documents", "query_documents", "search", "exact"],
        "aggregate_documents": [
            "count_documents",
            "query_documents",
            "sum above total",
            "missing",
            "casefold",
            "truncated",
        ],
        "query_documents": ["search", "count_documents", "aggregate_documents", "next_offset"],
        "search": ["count_documents", "query_documents", "read"],
        "get_recent": ["query_documents", "newest first", "ties by path"],
        "read": ["search", "query_documents", "next_offset"],
        "stats": ["indexed_frontmatter_fields", "filters", "aggregate_documents"],
    }
    for name, words in siblings.items():
        for word in words:
            assert word in descriptions[name], (name, word)
        assert "Use it" in descriptions[name] or "Call it" in descriptions[name], name


def test_tools_list_of_the_seven_original_tools_fits_in_12000_characters(mcp: Session) -> None:
    """What every agent session pays in context before its first question (bench/tools_list_size.py)."""
    published = [mcp.tools[name].model_dump(mode="json", by_alias=True, exclude_none=True) for name in TOOLS[:7]]
    assert len(json.dumps({"tools": published})) <= 12_000
