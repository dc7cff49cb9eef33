"""`mkdocs-vault-mcp index SITE_DIR`: a site built without the plugin, indexed from its HTML, gives the
index the plugin gives of the same build. Real MkDocs builds in temp dirs, the console script, real SQLite, an
MCP session over what it wrote."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
import yaml

from helpers.index_command import BLOG_META, QUERIES, index_rows, run_index, summary_line
from helpers.mcp_session import session_over
from helpers.paths import ROOT
from helpers.site import Site, build_from, built_site
from mkdocs_vault_mcp.build_steps.built_pages import requoted


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# --- example-site, built by MkDocs without the plugin ------------------------------------------------------


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """example-site built twice from one copy: with the plugin (site/) and with it disabled (site-plain/)."""
    root = tmp_path_factory.mktemp("built") / "example-site"
    shutil.copytree(ROOT / "example-site", root, ignore=shutil.ignore_patterns(".cache", "site"))
    Site(root, None).build()
    config = (root / "mkdocs.yml").read_text(encoding="utf-8")
    plain = config.replace("  - vault-mcp:\n", "  - vault-mcp:\n      enabled: false\n") + "site_dir: site-plain\n"
    (root / "mkdocs-plain.yml").write_text(plain, encoding="utf-8")
    build_from(root / "mkdocs-plain.yml")
    assert not (root / "site-plain" / "vault-mcp").exists()  # the plugin did nothing there
    return root


def test_a_site_built_without_the_plugin_gets_the_plugins_index(example: Path) -> None:
    done = run_index(str(example / "site-plain"), "--config", str(example / "mkdocs-plain.yml"))
    assert summary_line(done).startswith("mkdocs-vault-mcp: Indexed 23 pages, 137 sections: 23 changed, 0 unchanged")
    # the broken front matter is reported as the plugin reports it, line numbers of the file included
    assert (
        "vault-mcp: Front matter of 'community/contributing.md' is not valid YAML (while parsing a flow sequence "
        "(line 3, column 7)"
    ) in done.stderr
    published = example / "site-plain" / "vault-mcp" / "index.sqlite"
    plugin = index_rows(example / "site" / "vault-mcp" / "index.sqlite", meta_less=BLOG_META)
    assert index_rows(published, meta_less=BLOG_META) == plugin
    # the plugin's own index differs only by what material/blog put into page.meta
    assert {k for doc in index_rows(example / "site" / "vault-mcp" / "index.sqlite").values() for k in doc["meta"]} - {
        k for doc in index_rows(published).values() for k in doc["meta"]
    } == {"template", "hide"}

    snapshot = example / "site-plain" / "vault-mcp" / "snapshot.json"
    ours, theirs = (
        json.loads(p.read_text(encoding="utf-8")) for p in (snapshot, example / "site" / "vault-mcp" / "snapshot.json")
    )
    for key in ("total", "by_folder", "by_month", "by_tag", "site_name", "site_url"):
        assert ours[key] == theirs[key], key
    umask = os.umask(0)
    os.umask(umask)
    assert mode(published) == mode(snapshot) == 0o666 & ~umask  # readable by the web server, as the plugin's

    stats = (example / "site-plain" / "stats" / "index.html").read_text(encoding="utf-8")
    assert '<div class="vm-stats">' in stats and "<title>Site statistics - Breeze</title>" in stats
    assert (example / "site-plain" / "vault-mcp" / "stats.css").is_file()

    with session_over(published) as ours_session, session_over(example / "site" / "vault-mcp" / "index.sqlite") as base:
        for query in QUERIES:
            assert ours_session.paths(query)[:3] == base.paths(query)[:3], query
        assert ours_session.ok("stats")["document_count"] == 23
        calibration = ours_session.ok("read", path="guide/calibration.md", section="Apply the offset")
        assert calibration["markdown"].startswith("## Apply the offset\n")
        source = ours_session.ok("read", path="guide/calibration.md", view="source")["markdown"]
        assert source.startswith("---\n")  # the file as written, from --docs-dir / mkdocs.yml's docs_dir


def test_indexing_again_after_a_rebuild_indexes_only_what_changed(example: Path) -> None:
    arguments = (str(example / "site-plain"), "--config", str(example / "mkdocs-plain.yml"))
    summary_line(run_index(*arguments))
    build_from(example / "mkdocs-plain.yml")  # every HTML file written anew
    assert ": 0 changed, 23 unchanged, 0 removed" in summary_line(run_index(*arguments))
    # the stats page this command wrote is its own: never a document, rewritten in place
    assert "stats.md" not in index_rows(example / "site-plain" / "vault-mcp" / "index.sqlite")
    before = index_rows(example / "site-plain" / "vault-mcp" / "index.sqlite")
    page = example / "docs" / "guide" / "troubleshooting.md"
    page.write_bytes(page.read_bytes() + b"\r\n## Still stuck\r\n\r\nAsk on the forum.\r\n")
    (example / "docs" / "api-reference" / "stations.md").unlink()  # tags.md lists it
    build_from(example / "mkdocs-plain.yml")
    line = summary_line(run_index(*arguments))
    assert "Indexed 22 pages" in line and ": 2 changed, 20 unchanged, 1 removed" in line
    after = index_rows(example / "site-plain" / "vault-mcp" / "index.sqlite")
    assert {path for path in after if after[path] != before[path]} == {"guide/troubleshooting.md", "tags.md"}
    assert after["guide/troubleshooting.md"]["sections"][-1][3:5] == ("Still stuck", "Troubleshooting > Still stuck")
    assert set(before) - set(after) == {"api-reference/stations.md"}


# --- no sources, no mkdocs.yml; MkDocs' own themes ----------------------------------------------------------

PAGES = {
    "index.md": "# Home\n\nWelcome to the site.\n\n## Start here { #start }\n\nFirst steps.\n",
    "guide/index.md": "# Guide\n\nAll about it.\n",
    "guide/setup.md": '---\ntags: [setup]\n---\n# Setup\n\n!!! note "Before you start"\n    Read this.\n\n'
    "Steps follow.\n\n### Install\n\n```bash\n# comment, not a heading\npip install x\n```\n",
    "guide/usage.md": "Usage\n=====\n\nUse it.\n\nDetails\n-------\n\nMore.\n",
    "notes.md": "No heading on this page.\n",
}
EXTENSIONS = ["attr_list", "admonition", {"toc": {"permalink": True}}, "pymdownx.superfences"]


@pytest.mark.parametrize(
    "theme, directory_urls", [("mkdocs", True), ("readthedocs", True), ("material", True), ("material", False)]
)
def test_a_site_built_without_the_plugin_in_any_theme_is_indexed_as_the_plugin_indexes_it(
    tmp_path: Path,
    theme: str,
    directory_urls: bool,
) -> None:
    settings = {
        "theme": {"name": theme},
        "markdown_extensions": EXTENSIONS,
        "site_url": "https://docs.example.com/",
        "use_directory_urls": directory_urls,
    }
    plugin = built_site(tmp_path / "plugin", {**settings, "plugins": ["search", "vault-mcp"]}, PAGES)
    plain = built_site(tmp_path / "plain", {**settings, "plugins": ["search"]}, PAGES)
    line = summary_line(run_index(str(plain.site_dir)))  # no --docs-dir, no --config
    assert "Indexed 5 pages" in line
    expected = index_rows(plugin.index_path)
    got = index_rows(plain.index_path)
    assert set(got) == set(expected)  # paths made from the URLs: guide/ holds pages, so it is guide/index.md
    for path, document in got.items():
        assert document["sections"] == expected[path]["sections"], path
        assert (document["url"], document["title"], document["headings"], document["summary"]) == (
            expected[path]["url"],
            expected[path]["title"],
            expected[path]["headings"],
            expected[path]["summary"],
        )
        assert document["meta"] == {} and document["modified_source"] == "mtime"
    with session_over(plain.index_path) as mcp:
        assert "without --docs-dir" in mcp.error("read", path="guide/setup.md", view="source")
        assert mcp.ok("read", path="guide/setup.md", section="Install")["markdown"].startswith("### Install\n")
    # a rebuild writes every HTML file anew; pages whose content did not change keep their row and time
    before = index_rows(plain.index_path)
    plain.build()
    assert ": 0 changed, 5 unchanged" in summary_line(run_index(str(plain.site_dir)))
    assert index_rows(plain.index_path) == before


# --- the FastAPI docs ---------------------------------------------------------------------------------------


@pytest.mark.one_python
def test_the_fastapi_docs_built_without_the_plugin_get_the_plugins_index(fastapi_en: Path) -> None:
    root = fastapi_en.parent.parent.parent
    settings = yaml.safe_load((root / "mkdocs.yml").read_text(encoding="utf-8"))
    settings.update(plugins=["search"], site_dir="site-plain")
    (root / "mkdocs-plain.yml").write_text(yaml.safe_dump(settings), encoding="utf-8")
    build_from(root / "mkdocs-plain.yml")
    line = summary_line(run_index(str(root / "site-plain"), "--config", str(root / "mkdocs-plain.yml")))
    assert "Indexed 155 pages, 2082 sections: 155 changed" in line
    assert index_rows(root / "site-plain" / "vault-mcp" / "index.sqlite") == index_rows(fastapi_en)


def test_a_minified_page_is_quoted_again_but_in_its_scripts_and_comments() -> None:
    page = '<div class=a title="x a=b" data-v=1><script>if (a<b c=d>e) {}</script><!-- <i class=x> --><p hidden id=p>'
    assert requoted(page) == (
        '<div class="a" title="x a=b" data-v="1"><script>if (a<b c=d>e) {}</script><!-- <i class=x> --><p hidden id="p">'
    )
    quoted = '<div class="a" title="x a=b"><p>x=1</p>'
    assert requoted(quoted) == quoted


# --- errors: one line, no traceback -------------------------------------------------------------------------


def test_a_site_with_no_known_content_element_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "guide").mkdir()
    (tmp_path / "index.html").write_text("<html><body><main><h1>Home</h1></main></body></html>")
    (tmp_path / "guide" / "index.html").write_text("<html><body><div class='content'>Guide</div></body></html>")
    done = run_index(str(tmp_path))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    message = done.stderr.strip()
    assert len(message.splitlines()) == 1, message
    assert message.startswith("mkdocs-vault-mcp: error: ") and "holds 2 pages and none has a content element" in message
    for looked_for in (
        '<article class="md-content__inner md-typeset">',
        '<div role="main">',
        '<div class="section" itemprop="articleBody">',
    ):
        assert looked_for in message
    assert not (tmp_path / "vault-mcp").exists()


@pytest.mark.parametrize(
    "args, expected",
    [
        (["{tmp}/nowhere"], "does not exist"),
        (["{tmp}", "--docs-dir", "{tmp}/no-docs"], "--docs-dir"),
        (["{tmp}", "--config", "{tmp}/mkdocs.yml"], "--config"),
    ],
)
def test_a_bad_command_line_is_one_line(tmp_path: Path, args: list[str], expected: str) -> None:
    (tmp_path / "index.html").write_text('<div role="main"><h1 id="home">Home</h1></div>')
    done = run_index(*(arg.format(tmp=tmp_path) for arg in args))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and expected in done.stderr
