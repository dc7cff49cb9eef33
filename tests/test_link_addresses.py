"""Links a browser follows to a page, though not to its exact address, are links to that page, not broken ones: a
folder's address without its trailing slash (every static server redirects it to the folder), a full address on
the site's own `site_url`, and on a site whose versions mike publishes (`extra.version.provider: mike`), an
address in a version's folder (`/latest/...`, `/dev/...`). Real builds with the plugin, asked through a real MCP
session; incremental builds where the linked page comes and goes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from helpers.mcp_session import session_over
from helpers.site import Site

PAGES = {
    "index.md": """
        # Home

        Read the [quick start](/quickstart#first-request) and [the arguments](https://docs.example.org/tutorial/arguments).
        Over plain http too: [arguments](http://docs.example.org/tutorial/arguments/#kinds).

        <p>Pick <a href="user-guide/choosing-your-theme">a theme</a> or <a href="tutorial">the tutorial</a>.</p>

        Gone for real: [nothing](/nothing-here) and [no anchor](/quickstart#nope).
        """,
    "quickstart.md": "# Quick start\n\n## First request\n\nBack [home](index.md).\n",
    "tutorial/index.md": "# Tutorial\n\nSee [arguments](arguments.md).\n",
    "tutorial/arguments.md": "# Arguments\n\n## Kinds\n\nTwo kinds.\n",
    "user-guide/choosing-your-theme.md": "# Choosing your theme\n\nAny.\n",
}


def links_of(site: Site) -> dict[str, Any]:
    with session_over(site.index_path) as mcp:
        broken = mcp.ok("links", show="broken", limit=100)["result"]
        out = mcp.ok("links", show="outlinks", where={"path": "index.md"}, limit=100)["result"]
        most = mcp.ok("links", show="most_linked", limit=100)["result"]
    return {
        "broken": sorted((row["target"], row["anchor"], row["broken"]) for row in broken),
        "targets": {row["text"]: (row["target"], row["anchor"]) for row in out},
        "linked_from": {row["path"]: row["linked_from"] for row in most},
    }


def test_folder_addresses_without_a_slash_and_the_sites_own_address_reach_the_page(tmp_path: Path) -> None:
    site = Site(tmp_path, {"site_url": "https://docs.example.org/", "plugins": ["vault-mcp"]})
    site.write_pages(PAGES)
    site.build()
    found = links_of(site)
    assert found["broken"] == [("/nothing-here", None, "page"), ("quickstart.md", "nope", "anchor")]
    assert found["targets"] == {
        "quick start": ("quickstart.md", "first-request"),
        "the arguments": ("tutorial/arguments.md", None),
        "arguments": ("tutorial/arguments.md", "kinds"),
        "a theme": ("user-guide/choosing-your-theme.md", None),
        "the tutorial": ("tutorial/index.md", None),
        "nothing": ("/nothing-here", None),
        "no anchor": ("quickstart.md", "nope"),
    }
    assert found["linked_from"]["tutorial/arguments.md"] == 2  # home and the tutorial

    # the linked page goes, and comes back, while the linking page stays as it was
    moved = site.docs / "user-guide" / "choosing-your-theme.md"
    moved.rename(tmp_path / "kept.md")
    site.build()
    assert ("user-guide/choosing-your-theme", None, "page") in links_of(site)["broken"]
    (tmp_path / "kept.md").rename(moved)
    site.build()
    assert links_of(site)["targets"]["a theme"] == ("user-guide/choosing-your-theme.md", None)


def test_without_directory_urls_a_page_address_needs_its_exact_name(tmp_path: Path) -> None:
    site = Site(
        tmp_path, {"site_url": "https://docs.example.org/", "use_directory_urls": False, "plugins": ["vault-mcp"]}
    )
    site.write_pages(PAGES)
    site.build()
    targets = links_of(site)["targets"]
    assert targets["the tutorial"] == ("tutorial/index.md", None)  # a folder with an index page: redirected
    assert targets["quick start"] == ("/quickstart", "first-request")  # quickstart.html: no server finds it


def test_version_folders_of_a_mike_site_reach_this_builds_page(tmp_path: Path) -> None:
    pages = {
        "index.md": """
            # Home

            The [latest guide](/latest/guide/#setup), the [development one](https://docs.example.org/dev/guide/),
            the [stable home](/1.2/). Not there in any version: [gone](/latest/gone/),
            [gone in full](https://docs.example.org/dev/gone/). A folder of the site is no
            version: [wrong](/guide/setup/).
            """,
        "guide.md": "# Guide\n\n## Setup\n\nDone.\n",
    }
    mike = {
        "site_url": "https://docs.example.org/",
        "plugins": ["vault-mcp"],
        "extra": {"version": {"provider": "mike"}},
    }
    site = Site(tmp_path, mike)
    site.write_pages(pages)
    site.build()
    found = links_of(site)
    assert found["targets"] == {
        "latest guide": ("guide.md", "setup"),
        "development one": ("guide.md", None),
        "stable home": ("index.md", None),
        "gone": ("/latest/gone/", None),
        "gone in full": ("/dev/gone/", None),  # in a version of this site, not another site on the host
        "wrong": ("/guide/setup/", None),
    }
    assert [target for target, _, _ in found["broken"]] == ["/dev/gone/", "/guide/setup/", "/latest/gone/"]

    # without mike in the config, the same links are broken, but for the full address into a folder this site at
    # the host's root does not have: another site's on the host (as GitHub Pages serves project sites)
    site.build(extra={})
    assert [target for target, _, _ in links_of(site)["broken"]] == [
        "/1.2/",
        "/guide/setup/",
        "/latest/gone/",
        "/latest/guide/",
    ]


def test_an_index_whose_links_other_rules_resolved_resolves_them_again(tmp_path: Path) -> None:
    site = Site(tmp_path, {"site_url": "https://docs.example.org/", "plugins": ["vault-mcp"]})
    site.write_pages(PAGES)
    site.build()
    expected = links_of(site)
    # as an earlier version left it: the folder addresses without their slash broken, under its rules' digest
    working = tmp_path / ".cache" / "plugin" / "vault-mcp" / "build.sqlite"
    with sqlite3.connect(working) as conn:
        changed = conn.execute(
            "UPDATE links SET target_path = NULL, broken = 'page' WHERE target NOT LIKE '%/' AND target LIKE '/%'"
        ).rowcount
        conn.execute("UPDATE info SET value = 'earlier rules' WHERE key = 'site_files'")
    assert changed == 6
    site.build()  # no page changed, no file of the site either
    assert links_of(site) == expected


def test_pages_mkdocs_redirects_writes_are_reached_and_other_sites_on_the_host_are_external(tmp_path: Path) -> None:
    pages = {
        "index.md": """
            # Home

            Moved: [the old guide](/old-guide/#setup), [in full](https://docs.example.org/old-guide/),
            [relative](old-guide/), [out to PyPI](moved-out/). No page behind it: [no target](/nowhere-new/).
            Other sites on the host: [Python handler](https://docs.example.org/python/),
            [its reference](https://docs.example.org/python/reference/#api). Gone on this site: [a typo in a
            folder it has](https://docs.example.org/guide/typo/), [a path](/python/).
            """,
        "guide/index.md": "# Guide\n\n## Setup\n\nDone.\n",
    }
    redirects = {
        "old-guide.md": "guide/index.md#setup",
        "moved-out.md": "https://pypi.org/",
        "nowhere-new.md": "missing.md",  # mkdocs-redirects writes no page for a target that is not there
    }
    config = {
        "site_url": "https://docs.example.org/",
        "plugins": [{"redirects": {"redirect_maps": redirects}}, "vault-mcp"],
    }
    site = Site(tmp_path, config)
    site.write_pages(pages)
    site.build()
    assert (site.site_dir / "old-guide" / "index.html").is_file()  # written by mkdocs-redirects, after the plugin
    assert not (site.site_dir / "nowhere-new").exists()
    found = links_of(site)
    assert found["broken"] == [
        ("/guide/typo/", None, "page"),
        ("/nowhere-new/", None, "page"),
        ("/python/", None, "page"),
    ]
    assert found["targets"]["the old guide"] == (
        "old-guide/index.html",
        "setup",
    )  # the redirect page, as index finds it
    assert found["targets"]["Python handler"] == (None, None)
    with sqlite3.connect(site.index_path) as conn:
        hosts = dict(conn.execute("SELECT text, host FROM links WHERE target_path IS NULL AND broken IS NULL"))
    assert hosts == {"Python handler": "docs.example.org", "its reference": "docs.example.org"}
    counts = json.loads((site.site_dir / "vault-mcp" / "snapshot.json").read_text(encoding="utf-8"))["links"]
    assert (counts["links"], counts["external_links"], counts["broken_links"]) == (7, 2, 3)


def test_addresses_outside_the_sites_path_on_its_host_are_external(tmp_path: Path) -> None:
    pages = {
        "index.md": """
            # Home

            Beside this site on the host: [the blog](https://docs.example.org/blog/post/), [the root](/),
            [another project](/other/guide/). This site's own: [the guide](https://docs.example.org/proj/guide/),
            [a gone page](https://docs.example.org/proj/gone/), [the root page](/proj).
            """,
        "guide.md": "# Guide\n\nDone.\n",
    }
    site = Site(tmp_path, {"site_url": "https://docs.example.org/proj/", "plugins": ["vault-mcp"]})
    site.write_pages(pages)
    site.build()
    found = links_of(site)
    assert found["broken"] == [("/proj/gone/", None, "page")]
    assert found["targets"] == {
        "the blog": (None, None),
        "the root": (None, None),
        "another project": (None, None),
        "the guide": ("guide.md", None),
        "a gone page": ("/proj/gone/", None),
        "the root page": ("index.md", None),
    }
