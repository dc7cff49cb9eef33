"""`mkdocs-vault-mcp index SITE_DIR` resolves links as the plugin does: one site built by MkDocs with the plugin
and again without it, then indexed from its HTML, gives the same `links` answers (broken links, backlinks,
outlinks, orphans, most linked pages), with a nav in mkdocs.yml and without one (MkDocs then lists every page but
those `not_in_nav` names), a page that mkdocs-redirects writes and another site on the host. Real builds, the
console script, real MCP sessions over both indexes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from helpers.mcp_session import Session, session_over
from helpers.site import Site, build_from

SCRIPT = Path(sys.executable).parent / "mkdocs-vault-mcp"
PAGES = {
    "index.md": """
        # Home

        Start with [the install guide](guide/install.md), or [straight to PyPI](guide/install.md#from-pypi).
        Gone: [a page](missing.md) and [a heading](guide/install.md#nope). Also [the FAQ](faq.md) and
        [the site's own address](https://docs.example.org/guide/install/). ![Logo](img/logo.png)
        Moved: [the old FAQ](https://docs.example.org/old-faq/). Another site on the host: [its
        guide](https://docs.example.org/python/guide/).
        """,
    "guide/install.md": """
        # Install

        ## From PyPI

        Back [home](../index.md); see [wiring](wiring.md#red-wire) and [a gone sibling](gone.md).

        <a href="../../faq/">the FAQ, as raw HTML</a> and <a href="../../nowhere/">nowhere</a>.
        """,
    "guide/wiring.md": "# Wiring\n\n## Red wire\n\nTo [the install guide](install.md#from-pypi).\n",
    "faq.md": "# FAQ\n\nSee the [wiring](guide/wiring.md).\n",
    "orphan.md": "# Orphan\n\nNeither linked nor listed: [home](index.md).\n",
    "drafts/notes.md": "# Notes\n\nOnly [home](../index.md).\n",
}
SHOWS = ("broken", "orphans", "most_linked")
# mkdocs-redirects writes its pages once the build is done: the plugin knows them from its config, the index finds them.
REDIRECTS = {"redirects": {"redirect_maps": {"old-faq.md": "faq.md"}}}


def all_rows(session: Session, show: str, **arguments: Any) -> list[dict]:
    answer = session.ok("links", show=show, limit=1000, **arguments)
    assert answer["next_offset"] is None
    return answer["result"]


def answers(index: Path, paths: list[str]) -> dict[str, Any]:
    with session_over(index) as session:
        found: dict[str, Any] = {show: all_rows(session, show) for show in SHOWS}
        for path in paths:
            found[f"backlinks {path}"] = all_rows(session, "backlinks", target=path)
            found[f"outlinks {path}"] = all_rows(session, "outlinks", where={"path": path})
    return found


@pytest.mark.parametrize(
    "nav",
    [
        {
            "nav": [
                "index.md",
                {"Guide": ["guide/install.md", {"Wiring": "guide/wiring.md"}]},
                {"Elsewhere": "https://example.org/"},
            ]
        },
        {"not_in_nav": "drafts/\nfaq.md\n"},
    ],
    ids=["nav", "not_in_nav"],
)
def test_index_of_a_site_built_without_the_plugin_answers_links_as_the_plugin(
    tmp_path: Path, nav: dict[str, Any]
) -> None:
    site = Site(
        tmp_path,
        {
            "site_url": "https://docs.example.org/",
            "plugins": ["vault-mcp", REDIRECTS],
            "validation": {"links": {"anchors": "warn"}},
            **nav,
        },
    )
    site.write_pages(PAGES)
    (site.docs / "img").mkdir()
    (site.docs / "img" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    site.build()
    plain = yaml.safe_load((tmp_path / "mkdocs.yml").read_text(encoding="utf-8"))
    plain.update(site_dir="site-plain", plugins=[{"vault-mcp": {"enabled": False}}, REDIRECTS])
    (tmp_path / "mkdocs-plain.yml").write_text(yaml.safe_dump(plain), encoding="utf-8")
    build_from(tmp_path / "mkdocs-plain.yml")
    done = subprocess.run(
        [str(SCRIPT), "index", str(tmp_path / "site-plain"), "--config", str(tmp_path / "mkdocs-plain.yml")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr

    paths = sorted(PAGES)
    plugin = answers(site.index_path, paths)
    ours = answers(tmp_path / "site-plain" / "vault-mcp" / "index.sqlite", paths)
    # what the plugin found, so that the comparison below compares something
    assert {(row["path"], row["target"], row["anchor"]) for row in plugin["broken"]} == {
        ("index.md", "missing.md", None),
        ("index.md", "guide/install.md", "nope"),
        ("guide/install.md", "guide/gone.md", None),
        ("guide/install.md", "/nowhere/", None),
    }
    outlinks = {row["text"]: row["target"] for row in plugin["outlinks index.md"]}
    assert (outlinks["the old FAQ"], outlinks["its guide"]) == ("old-faq/index.html", None)
    assert {row["path"]: row["linked_from"] for row in plugin["most_linked"]} == {
        "index.md": 3,
        "faq.md": 2,
        "guide/install.md": 2,
        "guide/wiring.md": 2,
    }
    assert {row["path"] for row in plugin["orphans"]} == (
        {"orphan.md", "drafts/notes.md"} if "nav" in nav else {"drafts/notes.md"}
    )
    assert {row["path"] for row in plugin["backlinks faq.md"]} == {"index.md", "guide/install.md"}
    for key, expected in plugin.items():
        assert ours[key] == expected, key
