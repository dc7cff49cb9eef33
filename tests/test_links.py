"""Links, related pages and history: a real `mkdocs build` of a site whose pages link to each other,
to anchors, to a missing page and a missing anchor, from a snippet and through mkdocstrings cross-references,
with a nav that leaves pages out and a git history; read through a real MCP client session. Then incremental
builds and `mkdocs serve --dirty`, where the linking or the linked page changes or goes."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client

from helpers.git_repo import git
from helpers.live_serve import write_site
from helpers.mcp_session import Session, data, session_over
from helpers.ports import free_port
from helpers.site import Site

PAGES = {
    "index.md": """
        # Home

        Start with [the install guide](guide/install.md), or go [straight to PyPI](guide/install.md#from-pypi).
        Some links go nowhere: [a gone page](missing.md) and [a gone heading](guide/install.md#nope).
        The package is [on PyPI](https://pypi.org/project/weatherkit/). The reading function is
        [read_wind][linkkit.read_wind]. See also [a page outside the nav](linked.md).

        --8<-- "wiring.md"
        """,
    "guide/install.md": """
        # Install

        ## From PyPI

        Back [home](../index.md); the [API reference](../api.md) lists every function.

        ## Wiring { #wiring }

        Red to left, black to right.
        """,
    "guide/nav-only.md": "# Nav only\n\nNothing links here, but the nav lists it.\n",
    "api.md": "# API reference\n\n::: linkkit\n",
    "linked.md": "# Linked\n\nNot in the nav, but the home page links here.\n",
    "orphan.md": "# Orphan\n\nNeither linked nor in the nav: [home](index.md#home).\n",
}
SNIPPET = "## Wiring diagram\n\nWire it as [the guide](guide/install.md#wiring) says.\n"
# A package whose docstrings link (mkdocstrings cross-references, resolved by autorefs): to its own objects
# and to a heading of a Markdown page.
PACKAGE = '''"""Linkkit: read a station's wind."""


def read_wind(station: str) -> float:
    """Read the wind speed; mount the [Anemometer][linkkit.Anemometer] as [the wiring guide][wiring] says.

    Parameters:
        station: The station's identifier.
    """
    return 0.0


class Anemometer:
    """A cup anemometer, read by [read_wind][linkkit.read_wind]."""
'''
CONFIG = {
    "theme": {"name": "material"},
    "nav": ["index.md", "guide/install.md", "guide/nav-only.md", "api.md"],
    "validation": {"links": {"anchors": "warn"}},
    "plugins": [
        "autorefs",  # listed, so it also knows the headings of Markdown pages
        {"mkdocstrings": {"handlers": {"python": {"paths": ["src"]}}}},
        "vault-mcp",
    ],
    "markdown_extensions": [
        "attr_list",
        {"toc": {"permalink": True}},
        {"pymdownx.snippets": {"base_path": ["snippets"], "check_paths": True}},
    ],
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Site:
    site = Site(tmp_path_factory.mktemp("links"), dict(CONFIG))
    site.write_pages(PAGES)
    (site.root / "snippets").mkdir()
    (site.root / "snippets" / "wiring.md").write_text(SNIPPET, encoding="utf-8")
    (site.root / "src" / "linkkit").mkdir(parents=True)
    (site.root / "src" / "linkkit" / "__init__.py").write_text(PACKAGE, encoding="utf-8")
    git(site.root, "init", "-q")
    git(site.root, "add", "-A")
    git(site.root, "commit", "-q", "-m", "First pages")
    install = site.docs / "guide" / "install.md"
    install.write_text(install.read_text(encoding="utf-8") + "\nGround the mast.\n", encoding="utf-8")
    git(site.root, "commit", "-q", "-am", "Install: ground the mast")
    site.build_in_root(log_level=logging.INFO)
    return site


@pytest.fixture(scope="module")
def mcp(built: Site) -> Iterator[Session]:
    with session_over(built.index_path) as session:
        yield session


def rows(mcp: Session, show: str, **arguments) -> list[dict]:
    answer = mcp.ok("links", show=show, limit=1000, **arguments)
    assert answer["total"] == len(answer["result"]) and answer["next_offset"] is None
    return answer["result"]


def test_outlinks_resolve_pages_anchors_snippets_and_cross_references(mcp: Session) -> None:
    links = {
        (row["text"], row["target"], row["anchor"], row["broken"], row["section"])
        for row in rows(mcp, "outlinks", where={"path": "index.md"})
    }
    assert links == {
        ("the install guide", "guide/install.md", None, None, "Home"),
        ("straight to PyPI", "guide/install.md", "from-pypi", None, "Home"),
        ("a gone page", "missing.md", None, "page", "Home"),  # what it names, from the page's file
        ("a gone heading", "guide/install.md", "nope", "anchor", "Home"),
        ("on PyPI", None, None, None, "Home"),  # external
        ("read_wind", "api.md", "linkkit.read_wind", None, "Home"),  # a cross-reference (autorefs)
        ("a page outside the nav", "linked.md", None, None, "Home"),
        ("the guide", "guide/install.md", "wiring", None, "Wiring diagram"),  # from the snippet
    }
    external = next(row for row in rows(mcp, "outlinks", where={"path": "index.md"}) if row["text"] == "on PyPI")
    assert external["url"] == "https://pypi.org/project/weatherkit/"
    gone = next(row for row in rows(mcp, "outlinks", where={"path": "index.md"}) if row["text"] == "a gone page")
    assert gone["url"] == "missing.md" and gone["section_url"] == "/#home"


def test_links_on_the_generated_api_page_are_found_with_their_sections(mcp: Session) -> None:
    links = {
        (row["text"], row["target"], row["anchor"], row["section"])
        for row in rows(mcp, "outlinks", where={"path": "api.md"})
    }
    assert ("Anemometer", "api.md", "linkkit.Anemometer", "read_wind(station)") in links
    assert ("the wiring guide", "guide/install.md", "wiring", "read_wind(station)") in links  # a Markdown heading
    assert ("read_wind", "api.md", "linkkit.read_wind", "Anemometer") in links


def test_backlinks_to_a_page_and_to_an_anchor(mcp: Session) -> None:
    to_install = rows(mcp, "backlinks", target="guide/install.md")
    assert sorted(row["anchor"] or "" for row in to_install) == ["", "from-pypi", "nope", "wiring", "wiring"]
    assert {row["path"] for row in to_install} == {"index.md", "api.md"}
    assert [(row["path"], row["text"]) for row in rows(mcp, "backlinks", target="guide/install.md#wiring")] == [
        ("api.md", "the wiring guide"),
        ("index.md", "the guide"),
    ]
    assert {row["path"] for row in rows(mcp, "backlinks", target="api.md")} == {"index.md", "guide/install.md"}
    # the shared filters select the linking pages
    assert rows(mcp, "backlinks", target="api.md", where={"folder": "guide"})[0]["path"] == "guide/install.md"
    assert len(rows(mcp, "backlinks", target="api.md", where={"folder": "guide"})) == 1
    # a page's link to itself is no backlink
    assert {row["path"] for row in rows(mcp, "backlinks", target="index.md")} == {"guide/install.md", "orphan.md"}


def test_broken_links_agree_with_mkdocs_own_warnings(mcp: Session, built: Site) -> None:
    ours = {(row["path"], row["url"]) for row in rows(mcp, "broken")}
    assert ours == {("index.md", "missing.md"), ("index.md", "/guide/install/#nope")}
    assert {(row["target"], row["anchor"]) for row in rows(mcp, "broken")} == {
        ("missing.md", None),
        ("guide/install.md", "nope"),
    }
    warnings = " ".join(built.messages(logging.WARNING))
    assert "'missing.md'" in warnings and "'#nope'" in warnings, warnings
    mkdocs_links = re.findall(r"Doc file '([^']+)' contains a link '([^']+)'", warnings)
    assert {source for source, _ in mkdocs_links} == {"index.md"} and len(mkdocs_links) == len(ours)


def test_orphans_are_pages_nothing_links_to_and_most_linked_counts_linking_pages(mcp: Session) -> None:
    orphans = rows(mcp, "orphans")
    assert [row["path"] for row in orphans] == ["orphan.md"]
    assert orphans[0]["in_nav"] is False and orphans[0]["linked_from"] == 0
    most = rows(mcp, "most_linked")
    assert [(row["path"], row["linked_from"]) for row in most] == [
        ("api.md", 2),
        ("guide/install.md", 2),
        ("index.md", 2),
        ("linked.md", 1),
    ]  # ties by path
    assert "guide/nav-only.md" not in {row["path"] for row in most}
    paged = mcp.ok("links", show="most_linked", limit=1)
    assert paged["total"] == len(most) and paged["next_offset"] == 1 and paged["result"] == most[:1]
    assert mcp.ok("links", show="most_linked", limit=1, offset=1)["result"] == most[1:2]


def test_posts_listed_by_a_material_blog_are_linked_from_its_generated_pages_and_not_orphans(tmp_path: Path) -> None:
    blog = Site(
        tmp_path,
        {
            "site_url": "https://example.org/",
            "theme": {"name": "material"},
            # one post a page: the index's second page lists the same posts, and counts once
            "plugins": [{"blog": {"pagination_per_page": 1}}, "vault-mcp"],
            "nav": ["index.md", "blog/index.md"],
        },
    )
    blog.write_pages(
        {
            "index.md": "# Home\n\nWelcome.\n",
            "blog/index.md": "# Blog\n",
            "blog/posts/first.md": "---\ndate: 2024-01-02\n---\n\n# First post\n\nHello.\n",
            "blog/posts/second.md": "---\ndate: 2024-02-03\ncategories: [News]\n---\n\n# Second post\n\nHi.\n",
            "lost.md": "# Lost\n\nNothing links here.\n",
        }
    )
    blog.build()
    assert (blog.site_dir / "blog" / "page" / "2" / "index.html").is_file()  # the listing's second page

    def answers() -> tuple[list[str], dict[str, int]]:
        with session_over(blog.index_path) as session:
            orphans = [row["path"] for row in rows(session, "orphans")]
            most = {row["path"]: row["linked_from"] for row in rows(session, "most_linked")}
        return orphans, most

    # listed by the blog's index and its archive, the second post by its category's page too
    assert answers() == (["lost.md"], {"blog/posts/second.md": 3, "blog/posts/first.md": 2})
    blog.write("blog/posts/second.md", "---\ndate: 2024-02-03\n---\n\n# Second post\n\nHi.\n")
    blog.build()  # the category's page is gone; the first post, unchanged, is still listed
    assert answers() == (["lost.md"], {"blog/posts/first.md": 2, "blog/posts/second.md": 2})


def test_history_keeps_the_last_commits_newest_first(mcp: Session) -> None:
    install = rows(mcp, "history", target="guide/install.md")
    assert [(row["author"], row["subject"]) for row in install] == [
        ("Ana", "Install: ground the mast"),
        ("Ana", "First pages"),
    ]
    assert install[0]["time"] >= install[1]["time"] and install[0]["time"].endswith("Z")
    assert [row["subject"] for row in rows(mcp, "history", target="index.md")] == ["First pages"]


def test_related_pages_leave_the_page_out_and_follow_the_filters(mcp: Session) -> None:
    related = mcp.ok("links", show="related", target="guide/install.md", limit=5)["result"]
    assert related and "guide/install.md" not in {hit["path"] for hit in related}
    assert {"path", "title", "url", "score", "sections"} <= set(related[0])
    only_guide = mcp.ok("links", show="related", target="index.md", where={"folder": "guide"})["result"]
    assert only_guide and {hit["path"] for hit in only_guide} <= {"guide/install.md", "guide/nav-only.md"}
    section = mcp.ok("links", show="related", target="guide/install.md#wiring")["result"]
    assert "guide/install.md" not in {hit["path"] for hit in section}


def test_bad_arguments_say_what_is_accepted(mcp: Session) -> None:
    assert "target is required" in mcp.error("links", show="backlinks")
    assert "target is required" in mcp.error("links", show="broken", target="index.md")
    assert "No page at target 'nope.md'" in mcp.error("links", show="backlinks", target="nope.md")
    assert "No document at target" in mcp.error("links", show="history", target="nope.md")
    assert "No section with anchor" in mcp.error("links", show="related", target="index.md#nope")
    assert "show" in mcp.error("links", show="sideways")
    unknown_key = mcp.error("links", show="broken", where={"tags": "x"})
    assert "where has unknown key 'tags'; it takes query, scope" in unknown_key
    assert "where['folder'] must be a string" in mcp.error("links", show="broken", where={"folder": 3})
    assert "modified_after must be an RFC 3339" in mcp.error("links", show="broken", where={"modified_after": "2024"})
    assert "Field 'nope' is not indexed" in mcp.error("links", show="orphans", where={"filters": {"nope": 1}})


def test_outline_sizes_add_up_to_the_read_length_on_every_page(mcp: Session, built: Site) -> None:
    for path in built.documents():
        outline = mcp.ok("read", path=path, view="outline")["outline"]
        whole = mcp.ok("read", path=path, max_chars=100_000)["markdown"]
        assert sum(entry["characters"] for entry in outline) == len(whole), path


# --- incremental builds and mkdocs serve --dirty ------------------------------------------------


def link_states(site: Site) -> set[tuple[str, str, str | None, str | None]]:
    with sqlite3.connect(site.index_path) as conn:
        # Each page's count of linking pages, kept incrementally, is what the links table says now.
        kept = dict(conn.execute("SELECT d.path, p.linked_from FROM pages p JOIN documents d ON d.id = p.document_id"))
        counted = dict(
            conn.execute(
                "SELECT d.path, (SELECT count(DISTINCT l.document_id) FROM links l WHERE l.target_path = d.path"
                " AND l.document_id != d.id) FROM documents d"
            )
        )
        assert kept == counted
        return set(
            conn.execute(
                "SELECT d.path, l.url, l.target_path, l.broken FROM links l JOIN documents d ON d.id = l.document_id"
            )
        )


def test_incremental_builds_keep_links_right_when_either_end_changes_or_goes(site: Site) -> None:
    site.write_pages(
        {
            "a.md": "# A\n\nTo [b's x](b.md#x).\n",
            "b.md": "# B\n\n## X { #x }\n\nText.\n",
            "c.md": "# C\n\nTo [b](b.md).\n",
        }
    )
    site.config = {"plugins": ["vault-mcp"], "markdown_extensions": ["attr_list"]}
    site.build()
    assert link_states(site) == {("a.md", "/b/#x", "b.md", None), ("c.md", "/b/", "b.md", None)}

    (site.docs / "b.md").unlink()  # the linked page goes: links of unchanged pages break
    site.build()
    assert link_states(site) == {("a.md", "b.md#x", None, "page"), ("c.md", "b.md", None, "page")}

    site.write("b.md", "# B\n\nNo anchor now.\n")  # it comes back without the anchor
    site.build()
    assert link_states(site) == {("a.md", "/b/#x", "b.md", "anchor"), ("c.md", "/b/", "b.md", None)}

    assert link_states(site) and [
        row[0]
        for row in sqlite3.connect(site.index_path).execute(
            "SELECT d.path FROM pages p JOIN documents d ON d.id = p.document_id WHERE p.linked_from = 2"
        )
    ] == ["b.md"]

    site.write("a.md", "# A\n\nNo links.\n")  # the linking page changes
    (site.docs / "c.md").unlink()  # the linking page goes
    site.build()
    assert link_states(site) == set()


def test_serve_dirty_keeps_links_and_backlinks_right_as_pages_change(tmp_path: Path) -> None:
    from helpers.live_serve import Serve

    port = free_port()
    config = write_site(tmp_path, mcp_port=port)
    docs = tmp_path / "docs"
    (docs / "guide" / "usage.md").write_text("# Usage\n\nFirst [install](install.md#setup).\n", encoding="utf-8")
    (docs / "guide" / "install.md").write_text("# Install\n\n## Setup\n\nRun pip.\n", encoding="utf-8")
    serve = Serve(config, "--dirty", mcp_port=port)
    try:
        serve.wait_for(r"Serving on ")

        async def session() -> None:
            async with Client(serve.url) as client:

                async def broken() -> list[tuple[str, str | None]]:
                    answer = data(await client.call_tool("links", {"show": "broken", "wait_for_pending_writes": True}))
                    return [(row["path"], row["broken"]) for row in answer["result"]]

                assert await broken() == []
                mark = len(serve.lines)
                # Only install.md is rendered again; usage.md's link to its heading breaks all the same.
                (docs / "guide" / "install.md").write_text("# Install\n\nRun pip.\n", encoding="utf-8")
                serve.wait_for(r"Indexed \d+ pages, .*: 1 changed", mark)
                assert await broken() == [("guide/usage.md", "anchor")]
                mark = len(serve.lines)
                (docs / "guide" / "install.md").unlink()
                serve.wait_for(r"Indexed \d+ pages, .* 1 removed", mark)
                assert await broken() == [("guide/usage.md", "page")]

        asyncio.run(session())
    finally:
        serve.interrupt()


def test_the_snapshot_counts_broken_links_and_orphans_as_the_tool_does(mcp: Session, built: Site) -> None:
    snapshot = json.loads((built.site_dir / "vault-mcp" / "snapshot.json").read_text(encoding="utf-8"))
    links = snapshot["links"]
    assert snapshot["schema_version"] == 1
    assert links["broken_links"] == mcp.ok("links", show="broken")["total"] == 2
    assert (links["broken_pages"], links["broken_anchors"]) == (1, 1)
    assert links["orphan_pages"] == mcp.ok("links", show="orphans")["total"] == 1
    assert links["most_linked"] == [
        {key: row[key] for key in ("path", "title", "url", "linked_from")}
        for row in mcp.ok("links", show="most_linked", limit=10)["result"]
    ]
    assert links["external_links"] == 1
    page = (built.site_dir / "stats" / "index.html").read_text(encoding="utf-8")
    assert 'data-stat="broken_links" data-count="2"' in page and 'data-stat="orphan_pages" data-count="1"' in page
    assert 'data-chart="most_linked"' in page and 'data-key="api.md" data-count="2"' in page


def test_the_links_tool_costs_at_most_1500_characters_of_tools_list(mcp: Session) -> None:
    published = mcp.tools["links"].model_dump(mode="json", by_alias=True, exclude_none=True)
    assert len(json.dumps(published)) <= 1500
    # version is explained once, in count_documents, as the shared filters are.
    assert all(
        rule.get("description") for name, rule in published["inputSchema"]["properties"].items() if name != "version"
    )
