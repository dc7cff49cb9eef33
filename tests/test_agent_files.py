"""The files for agents without an MCP client: `llms.txt` (llmstxt.org's format), a Markdown copy of each page equal to
its `read` answer, `llms-full.txt` when asked, and the discovery file (an AI Catalog holding the site's MCP Server
Card, SEP-2127). From the plugin's build of example-site and from `mkdocs-vault-mcp index` on the same site built
without the plugin; none of it with the options off; drafts and excluded pages never. Real builds, the console
script, an MCP session over the published index."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import yaml

from helpers.index_command import run_index, summary_line
from helpers.mcp_session import Session, session_over
from helpers.site import Site, build_from, built_example_site
from mkdocs_vault_mcp.child_processes import spare_cpu
from mkdocs_vault_mcp.index.write import writer

SITE_URL = "https://breeze.example.org/"
DESCRIPTION = "A tiny open-source weather-station toolkit for ESP32 boards and a Raspberry Pi."
LINK_ITEM = re.compile(r"^- \[(?P<title>(?:[^\]\\]|\\.)+)\]\((?P<url>[^)\s]+)\)(?:: (?P<notes>.+))?$")
CARD_NAME = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")  # the Server Card schema's pattern


def with_options(root: Path, name: str, options: str, site_dir: str) -> Path:
    """A copy of example-site's mkdocs.yml with more vault-mcp options and its own site_dir."""
    config = (root / "mkdocs.yml").read_text(encoding="utf-8")
    changed = config.replace("  - vault-mcp:\n", f"  - vault-mcp:\n{options}") + f"site_dir: {site_dir}\n"
    (root / name).write_text(changed, encoding="utf-8")
    return root / name


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """example-site built with the plugin (site/), without it (site-plain/), then indexed by the command."""
    root = built_example_site(tmp_path_factory.mktemp("agent-files") / "example-site").root
    build_from(with_options(root, "mkdocs-plain.yml", "      enabled: false\n", "site-plain"))
    assert not (root / "site-plain" / "llms.txt").exists()  # the plugin did nothing there
    summary_line(run_index(str(root / "site-plain"), "--config", str(root / "mkdocs-plain.yml")))
    return root


def documents(index: Path) -> dict[str, dict[str, Any]]:
    with session_over(index) as session:
        rows = session.ok("query_documents", limit=1000)["result"]
    return {row["path"]: row for row in rows}


def whole_page(session: Session, path: str) -> dict[str, Any]:
    """The `read` answer for the whole page, its pieces joined."""
    answer = session.ok("read", path=path)
    markdown = answer["markdown"]
    while answer["next_offset"] is not None:
        answer = session.ok("read", path=path, offset=answer["next_offset"])
        markdown += answer["markdown"]
    return {**answer, "markdown": markdown}


def copy_of(url: str, site: Path) -> Path:
    """The Markdown copy a page URL of example-site has in `site`."""
    assert url.startswith(SITE_URL) and url.endswith("/"), url
    return site / unquote(url[len(SITE_URL) :]) / "index.md"


def parse_llms_txt(text: str) -> tuple[str, str, dict[str, list[dict[str, str]]]]:
    """llmstxt.org's format, strictly: one H1, a blockquote, prose without headings, then H2 sections that hold
    only a list of links (`- [title](url)` with optional `: notes`). The title, the description and the sections."""
    lines = text.splitlines()
    assert lines[0].startswith("# ") and lines[1] == "" and lines[2].startswith("> "), lines[:3]
    sections: dict[str, list[dict[str, str]]] = {}
    current: list[dict[str, str]] | None = None
    for line in lines[3:]:
        assert not line.startswith("# ") and not line.startswith("###"), line
        if line.startswith("## "):
            assert line[3:] not in sections, f"two sections {line!r}"
            current = sections.setdefault(line[3:], [])
        elif line and current is not None:
            item = LINK_ITEM.match(line)
            assert item is not None, f"not a link item: {line!r}"
            current.append(item.groupdict())
    return lines[0][2:], lines[2][2:], sections


def test_llms_txt_lists_every_published_page_once_grouped_as_the_nav_groups_them(example: Path) -> None:
    site = example / "site"
    title, description, sections = parse_llms_txt((site / "llms.txt").read_text(encoding="utf-8"))
    assert (title, description) == ("Breeze", DESCRIPTION)
    published = documents(site / "vault-mcp" / "index.sqlite")
    links = [item["url"] for items in sections.values() for item in items]
    assert len(links) == len(set(links)) == len(published) == 23
    assert sorted(links) == sorted(f"{row['url']}index.md" for row in published.values())
    assert all(not link.count("drafts/") and "internal/notes" not in link for link in links)
    # The nav's groups, in its order; pages it does not list last, under llmstxt.org's "Optional".
    assert list(sections) == [
        "Pages",
        "Getting started",
        "Guide",
        "Guide / Sensors",
        "Guide / Sensors / Wind",
        "HTTP API",
        "API reference",
        "Community",
        "Blog",
        "Optional",
    ]
    assert [item["title"] for item in sections["Getting started"]] == ["Quick start", "First reading", "Configuration"]
    assert "Privacy" in [item["title"] for item in sections["Optional"]]  # not_in_nav
    wind = {item["title"]: item["notes"] for item in sections["Guide / Sensors / Wind"]}
    assert wind["Wind vane"] == "Read wind direction from a resistor-ladder wind vane."  # front matter description


def test_each_markdown_copy_is_the_read_answer_with_its_title_url_and_time_on_top(example: Path) -> None:
    site = example / "site"
    copies = {path.relative_to(site).as_posix() for path in site.rglob("*.md")}
    published = documents(site / "vault-mcp" / "index.sqlite")
    assert copies == {copy_of(row["url"], site).relative_to(site).as_posix() for row in published.values()}
    assert not [copy for copy in copies if copy.startswith(("drafts/", "internal/"))]
    with session_over(site / "vault-mcp" / "index.sqlite") as session:
        for path, row in published.items():
            text = copy_of(row["url"], site).read_text(encoding="utf-8")
            head, separator, body = text.removeprefix("---\n").partition("\n---\n\n")
            assert text.startswith("---\n") and separator, path
            answer = whole_page(session, path)
            assert yaml.load(head, yaml.BaseLoader) == {
                "title": answer["title"],
                "url": answer["url"],
                "modified": answer["modified"],
            }
            assert body == answer["markdown"] + "\n", path
    calibration = (site / "guide" / "calibration" / "index.md").read_text(encoding="utf-8")
    assert calibration.startswith('---\ntitle: "Calibration"\nurl: "https://breeze.example.org/guide/calibration/"\n')


def test_the_discovery_file_is_an_ai_catalog_with_the_sites_server_card(example: Path) -> None:
    catalog = json.loads((example / "site" / ".well-known" / "ai-catalog.json").read_text(encoding="utf-8"))
    assert catalog["specVersion"] == "1.0"
    (entry,) = catalog["entries"]
    assert entry["identifier"] == "urn:air:breeze.example.org:mcp:docs"
    assert entry["type"] == "application/mcp-server-card+json" and "url" not in entry
    card = entry["data"]
    # The Server Card schema's required fields and limits (experimental-ext-server-card, schema.ts).
    assert card["$schema"] == "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
    assert CARD_NAME.match(card["name"]) and card["name"] == "org.example.breeze/docs"
    assert 1 <= len(card["description"]) <= 100 and card["description"] == DESCRIPTION
    assert card["title"] == "Breeze" and card["websiteUrl"] == SITE_URL
    assert "remotes" not in card  # no hosted /mcp configured
    index = card["_meta"]["mkdocs-vault-mcp/index"]
    assert index["url"] == f"{SITE_URL}vault-mcp/index.sqlite"
    assert card["_meta"]["mkdocs-vault-mcp/llms-txt"] == [f"{SITE_URL}llms.txt"]


def test_index_on_a_site_built_without_the_plugin_writes_the_same_files(example: Path) -> None:
    plugin, plain = example / "site", example / "site-plain"
    for name in ("llms.txt", ".well-known/ai-catalog.json"):
        assert (plain / name).read_text(encoding="utf-8") == (plugin / name).read_text(encoding="utf-8"), name
    ours = {path.relative_to(plain).as_posix() for path in plain.rglob("*.md")}
    assert ours == {path.relative_to(plugin).as_posix() for path in plugin.rglob("*.md")}
    different = [name for name in ours if (plain / name).read_bytes() != (plugin / name).read_bytes()]
    assert different == []


def test_the_options_turn_each_file_off_in_the_build_and_in_index(example: Path) -> None:
    off = "      llms_txt: false\n      markdown_copies: false\n      discovery: false\n"
    build_from(with_options(example, "mkdocs-off.yml", off, "site-off"))
    site = example / "site-off"
    assert (site / "vault-mcp" / "index.sqlite").is_file()  # the rest of the plugin still runs
    assert not (site / "llms.txt").exists() and not (site / ".well-known").exists()
    assert list(site.rglob("*.md")) == []
    plain = with_options(example, "mkdocs-plain-off.yml", "      enabled: false\n" + off, "site-plain-off")
    build_from(plain)
    summary_line(run_index(str(example / "site-plain-off"), "--config", str(plain)))
    assert not (example / "site-plain-off" / "llms.txt").exists()
    assert not (example / "site-plain-off" / ".well-known").exists()
    assert list((example / "site-plain-off").rglob("*.md")) == []


def test_llms_full_txt_is_bounded_and_says_what_it_left_out_and_the_card_names_the_hosted_mcp(example: Path) -> None:
    options = "      llms_full_txt: 6000\n      hosted_mcp_url: /mcp\n      publish_index: false\n"
    build_from(with_options(example, "mkdocs-full.yml", options, "site-full"))
    site = example / "site-full"
    full = (site / "llms-full.txt").read_text(encoding="utf-8")
    kept = re.findall(r'^url: "([^"]+)"$', full, re.M)
    head, _, left_out = full.partition("\n## Left out\n\n")
    assert len(head) <= 6000 and kept
    listed = [item["url"] for line in left_out.splitlines() if (item := LINK_ITEM.match(line)) is not None]
    assert re.match(rf"{len(listed)} pages did not fit in this file's limit of 6,000 characters", left_out)
    assert sorted([f"{url}index.md" for url in kept] + listed) == sorted(
        f"{row['url']}index.md" for row in documents(example / "site" / "vault-mcp" / "index.sqlite").values()
    )
    card = json.loads((site / ".well-known" / "ai-catalog.json").read_text(encoding="utf-8"))["entries"][0]["data"]
    assert card["remotes"] == [{"type": "streamable-http", "url": "https://breeze.example.org/mcp"}]
    assert "mkdocs-vault-mcp/index" not in card["_meta"]  # publish_index: false
    assert not (example / "site" / "llms-full.txt").exists()  # only when asked for


def test_a_site_without_site_url_gets_relative_links_no_discovery_file_and_keeps_its_own_llms_txt(
    tmp_path: Path,
) -> None:
    site = Site(tmp_path, {"plugins": ["vault-mcp"], "nav": ["index.md", {"Guide": ["guide/setup.md"]}]})
    site.write("index.md", "# Home\n\nThe home page. More text here.\n")
    site.write("guide/setup.md", "---\ndescription: Set it up.\n---\n# Setup\n\nSteps.\n")
    site.write("llms.txt", "# My own llms.txt\n")  # a static file of the site: the owner's, kept
    site.build()
    assert (site.site_dir / "llms.txt").read_text(encoding="utf-8") == "# My own llms.txt\n"
    assert "the site has its own llms.txt; left as it is" in " ".join(site.messages(prefix="vault-mcp"))
    assert not (site.site_dir / ".well-known").exists()  # no site_url: no absolute address to name
    assert (
        (site.site_dir / "guide" / "setup" / "index.md")
        .read_text(encoding="utf-8")
        .startswith('---\ntitle: "Setup"\nurl: "/guide/setup/"\n')
    )
    (site.docs / "llms.txt").unlink()
    site.build()
    _, _, sections = parse_llms_txt((site.site_dir / "llms.txt").read_text(encoding="utf-8"))
    assert sections == {
        "Pages": [{"title": "Home", "url": "index.md", "notes": "The home page."}],
        "Guide": [{"title": "Setup", "url": "guide/setup/index.md", "notes": "Set it up."}],
    }


def test_index_never_writes_through_a_link_or_over_a_folder_of_a_hostile_site(example: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(example / "site-plain", site)
    outside = tmp_path / "outside"
    outside.mkdir()
    (site / "llms.txt").unlink()
    (site / "llms.txt").symlink_to(outside / "llms.txt")
    (site / "guide" / "calibration" / "index.md").unlink()
    (site / "guide" / "calibration" / "index.md").mkdir()
    (site / "api" / "index.md").unlink()
    (site / "api" / "index.md").symlink_to(outside / "api.md")
    done = run_index(str(site), "--config", str(example / "mkdocs-plain.yml"))
    summary_line(done)
    assert list(outside.iterdir()) == []
    assert "calibration/index.md is a symbolic link or a folder; not written" in done.stderr
    assert "the site has its own llms.txt; left as it is" in done.stderr
    assert (site / "guide" / "sensors" / "index.md").is_file()  # the other pages' copies are written


@pytest.mark.skipif(not spare_cpu(), reason="the writer has a process of its own only with a second CPU")
def test_a_first_build_leaves_the_markdown_conversion_to_the_writers_process(tmp_path: Path) -> None:
    """Converting every page's HTML to Markdown is a first build's cost of the copies: where a writer process
    writes the index, it converts them after its commit, on the other CPU, and the build's own process never loads
    the conversion."""
    site = Site(tmp_path, {"plugins": [{"vault-mcp": {"cache_dir": "cache"}}]})
    pages = writer.PAGES_FOR_A_PROCESS + 2  # a site whose first build writes in a process of its own
    site.write_pages(
        {f"page{n}.md": f"# Page {n}\n\nThe text of page {n}.\n\n## Part\n\nMore.\n" for n in range(pages)}
    )
    site.build()
    shutil.rmtree(tmp_path / "cache")  # the next build is a first one again: every page to write and convert
    shutil.rmtree(site.site_dir)
    modules = site.modules_a_build_imports(warm=False)
    assert "mkdocs_vault_mcp.plugin" in modules
    assert "html_to_markdown" not in modules and "mkdocs_vault_mcp.index.html_to_markdown" not in modules
    copy = (site.site_dir / "page3" / "index.md").read_text(encoding="utf-8")
    assert "The text of page 3." in copy and "## Part" in copy
