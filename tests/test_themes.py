"""The plugin beside themes and other plugins: the `mkdocs` and `material` themes
with the `search` plugin, material's meta and tags plugins, and a build of example-site/."""

from __future__ import annotations

import json
import logging
import re
import shutil
from pathlib import Path

import pytest

from helpers.paths import ROOT
from helpers.site import Site, built_site

PAGES = {
    "index.md": "# Home\n\nWelcome to the site.\n\n## Start here { #start }\n\nFirst steps.\n",
    "guide/setup.md": "---\ntags: [setup, guide]\ndescription: How to set up.\n---\n# Setup\n\n"
    '!!! note "Before you start"\n    Read this.\n\nSteps follow.\n\n### Install\n\n'
    "```bash\n# comment, not a heading\npip install x\n```\n",
    "guide/usage.md": "Usage\n=====\n\nUse it.\n\nDetails\n-------\n\nMore.\n",
}
EXTENSIONS = ["attr_list", "admonition", {"toc": {"permalink": True}}, "pymdownx.superfences"]
THEMES = ["mkdocs", "material"]
BUILD_DATE = re.compile(r"Build Date UTC : [^\n]*")


def build_site(root: Path, theme: str, plugins: list) -> Site:
    return built_site(root, {"theme": {"name": theme}, "plugins": plugins, "markdown_extensions": EXTENSIONS}, PAGES)


def page_files(site: Site) -> dict[str, str]:
    """Every page the site shows but the stats page, less the build time the mkdocs theme writes into one."""
    return {
        str(path.relative_to(site.site_dir)): BUILD_DATE.sub("", path.read_text(encoding="utf-8"))
        for path in site.site_dir.rglob("*.html")
        if "stats" not in path.parts
    }


def search_entries(site: Site) -> list[dict]:
    index = json.loads((site.site_dir / "search" / "search_index.json").read_text(encoding="utf-8"))
    return [doc for doc in index["docs"] if not doc["location"].startswith("stats/")]


def index_content(site: Site) -> list[tuple]:
    with site.db() as conn:
        return conn.execute(
            "SELECT d.path, d.url, d.title, d.summary, d.meta, d.headings, s.position, s.level, s.anchor,"
            " s.headings, s.body FROM documents d JOIN sections s ON s.document_id = d.id ORDER BY d.path, s.position"
        ).fetchall()


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[tuple[str, bool], Site]:
    """Each theme with the search plugin, with and without vault-mcp."""
    return {
        (theme, with_vault): build_site(
            tmp_path_factory.mktemp(f"{theme}-{with_vault}"),
            theme,
            ["search", "vault-mcp"] if with_vault else ["search"],
        )
        for theme in THEMES
        for with_vault in (True, False)
    }


@pytest.mark.parametrize("theme", THEMES)
def test_pages_are_indexed_under_each_theme_beside_the_search_plugin(builds, theme):
    site = builds[theme, True]
    assert site.messages(logging.WARNING) == []
    docs = site.documents()
    assert set(docs) == set(PAGES)
    assert json.loads(docs["guide/setup.md"]["headings"]) == ["Setup", "Install"]
    assert docs["guide/setup.md"]["summary"] == "How to set up."
    assert [s["headings"] for s in site.sections("guide/usage.md")] == ["Usage", "Usage > Details"]
    assert [(s["anchor"], s["headings"]) for s in site.sections("index.md")] == [
        ("home", "Home"),
        ("start", "Home > Start here"),
    ]


def test_the_theme_does_not_change_what_is_indexed(builds):
    assert index_content(builds["mkdocs", True]) == index_content(builds["material", True])


@pytest.mark.parametrize("theme", THEMES)
def test_the_site_is_unchanged_but_for_the_plugins_own_files(builds, theme):
    with_vault, without = builds[theme, True], builds[theme, False]
    assert page_files(with_vault) == page_files(without)
    assert search_entries(with_vault) == search_entries(without)  # the search plugin sees the same pages
    assert (with_vault.site_dir / "vault-mcp" / "index.sqlite").is_file()
    assert not (without.site_dir / "vault-mcp").exists()


# --- material's meta and tags plugins ------------------------------------------------------------------


@pytest.fixture
def tagged(site) -> Site:
    site.config = {"theme": {"name": "material"}, "plugins": ["search", "meta", "tags", "vault-mcp"]}
    site.write("index.md", "# Home\n")
    site.write("weather/.meta.yml", "tags: [weather]\nstatus: stable\n")
    site.write("weather/wind.md", "---\ntags: [wind]\n---\n# Wind\n")
    site.write("weather/rain.md", "# Rain\n")
    site.write("tags.md", "# Tags\n\n<!-- material/tags -->\n")
    site.build()
    return site


def test_front_matter_is_read_after_material_meta_merged_meta_yml(tagged):
    assert tagged.values("weather/wind.md") == {"status": ["stable"], "tags": ["weather", "wind"]}
    assert tagged.values("weather/rain.md") == {"status": ["stable"], "tags": ["weather"]}
    assert tagged.documents()["weather/wind.md"]["meta"] == {"tags": ["weather", "wind"], "status": "stable"}
    with tagged.db() as conn:  # material/meta's own bookkeeping key is no front matter field
        fields = json.loads(conn.execute("SELECT value FROM info WHERE key = 'indexed_fields'").fetchone()[0])
    assert fields == ["status", "tags"]


def test_a_tags_listing_is_indexed_as_the_reader_sees_it(tagged):
    # material/tags fills its listings only after every page is rendered (on_env)
    headings = json.loads(tagged.documents()["tags.md"]["headings"])
    assert headings == ["Tags", "weather", "wind"]
    body = " ".join(s["body"] for s in tagged.sections("tags.md"))
    assert "Wind" in body and "Rain" in body and "material/tags" not in body


def test_a_tags_listing_is_indexed_again_when_a_tag_changes_elsewhere_and_only_then(tagged):
    tagged.build()
    assert ": 0 changed, 4 unchanged, 0 removed" in tagged.messages(logging.INFO, "vault-mcp: Indexed")[0]
    tagged.write("weather/rain.md", "---\ntags: [rain]\n---\n# Rain\n")
    tagged.build()
    assert ": 2 changed, 2 unchanged, 0 removed" in tagged.messages(logging.INFO, "vault-mcp: Indexed")[0]
    assert json.loads(tagged.documents()["tags.md"]["headings"]) == ["Tags", "rain", "weather", "wind"]


# --- example-site/ ----------------------------------------------------------------------------------------


def test_example_site_builds_clean_but_for_its_broken_front_matter(tmp_path, monkeypatch):
    root = tmp_path / "example-site"
    shutil.copytree(ROOT / "example-site", root, ignore=shutil.ignore_patterns(".cache", "site"))
    monkeypatch.chdir(tmp_path)  # the README builds it from elsewhere too: snippets must still be found
    site = Site(root, None)
    site.build()
    warnings = site.messages(logging.WARNING)
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("vault-mcp: Front matter of 'community/contributing.md' is not valid YAML (")
    docs = site.documents()
    assert 15 <= len(docs) <= 30
    assert not any(
        path.startswith(("drafts/", "internal/", "blog/archive/", "blog/category/", "stats")) for path in docs
    )
    assert docs["community/contributing.md"]["meta"] == {}
    assert "legal/privacy.md" in docs  # not_in_nav
    assert any(not path.isascii() for path in docs)
    assert {doc["modified_source"] for doc in docs.values()} >= {"meta"}
    tags_headings = json.loads(docs["tags.md"]["headings"])
    assert "sensors" in tags_headings and not any("/name" in heading for heading in tags_headings)
