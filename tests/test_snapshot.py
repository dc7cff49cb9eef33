"""snapshot.json (spec section 6) against the MCP tools' own answers on the same build's index."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import sqlite3
import stat
from typing import Any

from helpers.mcp_session import call_tools
from mkdocs_vault_mcp.index.query import queries

SNAPSHOT_KEYS = [
    "schema_version",
    "generated_at",
    "site_name",
    "site_url",
    "total",
    "by_folder",
    "by_month",
    "by_language",
    "by_tag",
    "links",
]


def read_snapshot(site) -> dict[str, Any]:
    return json.loads((site.site_dir / "vault-mcp" / "snapshot.json").read_text(encoding="utf-8"))


def assert_snapshot_matches_tools(site, tag_fields: list[str]) -> dict[str, Any]:
    snapshot = read_snapshot(site)
    calls = [
        ("count_documents", {}),
        ("aggregate_documents", {"by": "folder", "limit": 1000}),
        ("aggregate_documents", {"by": "month", "limit": 1000}),
        ("aggregate_documents", {"by": "language", "limit": 1000}),
        *[("aggregate_documents", {"by": "tag", "field": name, "limit": 1000}) for name in tag_fields],
    ]
    count, by_folder, by_month, by_language, *by_tag = call_tools(site.index_path, calls)
    assert snapshot["total"] == count["total"]
    assert snapshot["by_folder"] == by_folder
    assert snapshot["by_month"] == by_month
    assert snapshot["by_language"] == by_language
    assert snapshot["by_tag"] == dict(zip(tag_fields, by_tag, strict=True))
    assert list(snapshot["by_tag"]) == tag_fields  # in the order of the tag_fields option
    return snapshot


def write_pages(site) -> None:
    site.write("index.md", "---\nupdated: 2024-01-05\ntags: [intro]\n---\n# Home\n\nWelcome.\n")
    site.write("guide/install.md", "---\nupdated: 2024-01-20\ntags: [setup, intro]\ncategories: Guides\n---\n# I\n")
    site.write("guide/deep/tuning.md", "---\nupdated: 2024-03-02T10:00:00+02:00\ntags: [perf]\n---\n# Tuning\n")
    site.write("guide/deep/Tuning-Upper.md", "---\nupdated: 2024-03-31T23:30:00-02:00\n---\n# Upper\n")
    site.write("blog/post.md", "---\nupdated: 2023-12-31\ncategories: [News, Guides]\ntags: [Setup, setup]\n---\n# P\n")
    site.write("hidden.md", "---\nsearch:\n  exclude: true\ntags: [hidden-only]\n---\n# Hidden\n")
    site.write("drafts/secret.md", "---\nupdated: 2030-01-01\ntags: [draft-only]\n---\n# Secret\n")
    site.write("notes/wip.md", "---\ndraft: true\nupdated: 2031-01-01\ntags: [wip-only]\n---\n# WIP\n")


def test_snapshot_is_the_aggregate_tool_answer_and_leaves_drafts_out(site):
    site.config.update(
        site_url="https://docs.example.org/base/",
        draft_docs="drafts/\n",
        plugins=[{"vault-mcp": {"modified_meta": "updated"}}],
    )
    write_pages(site)
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    site.build()
    snapshot = assert_snapshot_matches_tools(site, ["tags", "categories"])

    assert list(snapshot) == SNAPSHOT_KEYS
    assert snapshot["schema_version"] == 1
    # A single-language site: every page in the theme's language (`en` when the theme names none).
    assert snapshot["by_language"]["buckets"] == [{"key": "en", "count": snapshot["total"]}]
    generated = dt.datetime.fromisoformat(snapshot["generated_at"].replace("Z", "+00:00"))
    assert snapshot["generated_at"].endswith("Z") and before <= generated <= dt.datetime.now(dt.UTC)
    assert snapshot["site_name"] == "Test site"
    assert snapshot["site_url"] == "https://docs.example.org/base/"

    # The answers themselves, so that agreeing with a broken tool is not enough.
    assert snapshot["total"] == 6  # hidden.md (search exclude) and the draft are not documents
    assert snapshot["by_folder"]["buckets"] == [
        {"key": "guide/deep", "count": 2},
        {"key": "", "count": 1},
        {"key": "blog", "count": 1},
        {"key": "guide", "count": 1},
        {"key": "notes", "count": 1},
    ]
    months = {b["key"]: b["count"] for b in snapshot["by_month"]["buckets"]}
    assert months == {"2023-12": 1, "2024-01": 2, "2024-03": 1, "2024-04": 1, "2031-01": 1}
    tags = {b["key"]: b["count"] for b in snapshot["by_tag"]["tags"]["buckets"]}
    assert tags == {"intro": 2, "setup": 2, "Setup": 1, "perf": 1, "wip-only": 1}
    assert snapshot["by_tag"]["tags"]["missing"] == 1
    assert snapshot["by_tag"]["categories"]["buckets"] == [{"key": "Guides", "count": 2}, {"key": "News", "count": 1}]
    text = json.dumps(snapshot)
    assert "draft-only" not in text and "drafts" not in text and "2030-" not in text
    assert "hidden-only" not in text


def test_by_tag_holds_only_the_tag_fields_indexed_on_the_site(site):
    site.write("a.md", "---\ntopics: [maps, data]\ntags: [x]\n---\n# A\n")
    site.write("b.md", "---\ntopics: maps\n---\n# B\n")
    site.config["plugins"] = [{"vault-mcp": {"tag_fields": ["topics", "absent", "tags"], "indexed_fields": ["topics"]}}]
    site.build()
    snapshot = assert_snapshot_matches_tools(site, ["topics"])
    assert snapshot["by_tag"]["topics"]["buckets"] == [{"key": "maps", "count": 2}, {"key": "data", "count": 1}]

    site.config["plugins"] = ["vault-mcp"]  # default tag_fields: tags, categories; neither is used below
    (site.docs / "a.md").write_text("# A\n", encoding="utf-8")
    (site.docs / "b.md").write_text("---\nstatus: new\n---\n# B\n", encoding="utf-8")
    site.build()
    assert assert_snapshot_matches_tools(site, [])["by_tag"] == {}


def test_a_rebuild_rewrites_the_snapshot_from_the_updated_index(site):
    site.write("keep.md", "---\ntags: [a]\n---\n# Keep\n")
    site.write("gone/page.md", "---\ntags: [b]\n---\n# Gone\n")
    site.build()
    assert read_snapshot(site)["total"] == 2
    (site.docs / "gone" / "page.md").unlink()
    site.write("new/page.md", "---\ntags: [a, c]\n---\n# New\n")
    site.build()
    snapshot = assert_snapshot_matches_tools(site, ["tags"])
    assert [b["key"] for b in snapshot["by_folder"]["buckets"]] == ["", "new"]
    assert snapshot["by_tag"]["tags"]["buckets"] == [{"key": "a", "count": 2}, {"key": "c", "count": 1}]


def test_stats_kept_for_an_index_version_are_those_of_the_latest_commit(site):
    site.write("keep.md", "# Keep\n")
    site.write("old/page.md", "---\ntags: [a]\n---\n# Old\n")
    site.build()
    [before] = call_tools(site.index_path, [("stats", {})])
    assert before["indexed_frontmatter_fields"] == ["tags"]
    with contextlib.closing(sqlite3.connect(site.index_path)) as conn:  # answers are copies of what is kept
        queries.index_stats(conn)["indexed_frontmatter_fields"].append("changed by a caller")
        assert queries.index_stats(conn)["indexed_frontmatter_fields"] == ["tags"]
    (site.docs / "old" / "page.md").unlink()
    site.write("new/page.md", "---\nowner: docs team\n---\n# New\n")  # as many pages, folders and sections
    site.build()
    [after] = call_tools(site.index_path, [("stats", {})])
    assert (after["document_count"], after["section_count"]) == (before["document_count"], before["section_count"])
    assert after["indexed_frontmatter_fields"] == ["owner"]
    assert after["built_at"] != before["built_at"]
    with contextlib.closing(sqlite3.connect(site.index_path)) as conn:
        assert queries.index_stats(conn)["indexed_frontmatter_fields"] == ["owner"]


def test_empty_site_has_an_empty_snapshot(site):
    site.docs.mkdir(parents=True)
    site.build()
    snapshot = assert_snapshot_matches_tools(site, [])
    assert snapshot["total"] == 0
    assert snapshot["by_folder"] == {"total": 0, "buckets": [], "missing": 0, "truncated": False}
    assert snapshot["site_url"] is None


def test_the_snapshot_is_as_readable_as_the_index_and_the_pages(site):
    site.write("page.md", "# Page\n")
    previous = os.umask(0o022)
    try:
        site.build()
    finally:
        os.umask(previous)
    snapshot = site.site_dir / "vault-mcp" / "snapshot.json"
    assert stat.S_IMODE(snapshot.stat().st_mode) == 0o644
    assert stat.S_IMODE(site.index_path.stat().st_mode) == 0o644
    assert [p.name for p in snapshot.parent.iterdir() if p.name.startswith(".")] == []  # no temporary left
