"""One page model (page.RenderedPage) for both ways a site gets its index: the plugin during `mkdocs build`, and
`mkdocs-vault-mcp index SITE_DIR` over a site built without it. Both indexes are read back through the one module
that maps pages to rows (index/write/rows.py), and the models compared page by page. Real MkDocs builds in a temp dir,
the console script, real SQLite."""

from __future__ import annotations

import contextlib
import datetime as dt
import shutil
import sqlite3
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from helpers.index_command import index_rows, run_index
from helpers.mcp_session import call_tools
from helpers.paths import ROOT
from helpers.site import Site, build_from
from mkdocs_vault_mcp.index.write.rows import rendered_page_from_rows, stored_paths
from mkdocs_vault_mcp.page.documents import build_document
from mkdocs_vault_mcp.page.model import RenderedPage

PLUGIN_ENTRY = "  - vault-mcp:\n      modified_meta: updated\n      stats_page_in_nav: true\n"
# Keys that material/blog puts into page.meta before the plugin reads it; `index SITE_DIR` reads the front matter
# the author wrote (docs/pages/other-generators.md).
BLOG_META = {"template", "hide"}


def blog_dates_as_written(meta: dict[str, Any]) -> dict[str, Any]:
    """The meta with material/blog's datetimes (what it makes of a post's `date` dict) as the dates written."""
    date = meta.get("date")
    if isinstance(date, dict):
        return {**meta, "date": {key: value[:10] for key, value in date.items()}}
    return meta


def page_models(index: Path) -> dict[str, RenderedPage]:
    with contextlib.closing(sqlite3.connect(index)) as conn:
        models = {path: rendered_page_from_rows(conn, path) for path in stored_paths(conn)}
    assert None not in models.values()
    return models  # type: ignore[return-value]


@pytest.fixture(scope="module")
def both_ways(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, RenderedPage], dict[str, RenderedPage]]:
    """example-site's page models as the plugin indexed them, and as `index SITE_DIR` indexed a plain build."""
    root = tmp_path_factory.mktemp("page-model") / "example-site"
    shutil.copytree(ROOT / "example-site", root, ignore=shutil.ignore_patterns(".cache", "site"))
    Site(root, None).build()
    config = (root / "mkdocs.yml").read_text(encoding="utf-8")
    assert PLUGIN_ENTRY in config
    (root / "mkdocs-plain.yml").write_text(
        config.replace(PLUGIN_ENTRY, "") + "site_dir: site-plain\n", encoding="utf-8"
    )
    build_from(root / "mkdocs-plain.yml")
    assert not (root / "site-plain" / "vault-mcp").exists()  # no plugin in that build
    # The plugin's options (modified_meta) are in mkdocs.yml, which `index` reads them from.
    done = run_index(str(root / "site-plain"), "--config", str(root / "mkdocs.yml"))
    assert done.returncode == 0, done.stderr
    return page_models(root / "site" / "vault-mcp" / "index.sqlite"), page_models(
        root / "site-plain" / "vault-mcp" / "index.sqlite"
    )


def test_both_ways_index_the_same_pages(both_ways) -> None:
    plugin, from_html = both_ways
    assert sorted(plugin) == sorted(from_html)
    assert len(plugin) == 23


def test_both_ways_read_back_the_same_page_model(both_ways) -> None:
    plugin, from_html = both_ways
    for path, ours in plugin.items():
        theirs = from_html[path]
        # Each way fingerprints what it has (the plugin: the HTML MkDocs rendered, the file's size and time and its
        # git history; `index`: the content cut from the theme's page and the Markdown's text), to know when it
        # must index the page again: the two are never compared with each other.
        assert ours.fingerprint and theirs.fingerprint
        # material/blog adds its own keys to a post's meta before the plugin reads it; `index` reads the file.
        assert set(ours.meta) - set(theirs.meta) <= BLOG_META, path
        # `index` cuts the content out of the theme's page, which may end it without the newline MkDocs' page
        # content ends with: the same HTML, but for white space at its end.
        assert ours.html.rstrip() == theirs.html.rstrip(), path
        # ... and makes the dates of a post's `date` datetimes, which the index keeps as ISO 8601 text.
        meta = {key: value for key, value in ours.meta.items() if key not in BLOG_META}
        ours = replace(ours, fingerprint="", html=ours.html.rstrip(), meta=blog_dates_as_written(meta))
        theirs = replace(theirs, fingerprint="", html=theirs.html.rstrip())
        for field in fields(RenderedPage):
            assert getattr(ours, field.name) == getattr(theirs, field.name), (path, field.name)


def test_the_markdown_source_is_in_both_indexes(both_ways) -> None:
    """Both ways hold the Markdown source: the plugin from MkDocs' files, `index` from the docs_dir of the
    mkdocs.yml it is given."""
    plugin, from_html = both_ways
    source = plugin["guide/calibration.md"].markdown
    assert source.startswith("---\n") and source == from_html["guide/calibration.md"].markdown


def test_a_page_read_back_makes_the_document_it_was_made_into(both_ways) -> None:
    """The model read back from the rows is the model the rows were made from: its document is the same again."""
    plugin, _ = both_ways
    page = plugin["guide/calibration.md"]
    document = build_document(page, "auto")
    assert (document.path, document.url, document.title, document.fingerprint) == (
        page.path,
        page.url,
        page.title,
        page.fingerprint,
    )
    assert document.content == page.html  # the index keeps content page_content has made: it stays as it is
    assert document.modified.tzinfo is not None and document.modified > dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
    assert [row["subject"] for row in document.history] == [subject for _, _, subject in page.history]


def test_the_front_matter_pattern_is_mkdocs_own() -> None:
    """documents.FRONT_MATTER writes out MkDocs' pattern, as the server does not import MkDocs: the same one."""
    from mkdocs.utils.meta import YAML_RE

    from mkdocs_vault_mcp.page.documents import FRONT_MATTER

    assert (FRONT_MATTER.pattern, FRONT_MATTER.flags) == (YAML_RE.pattern, YAML_RE.flags)


# --- minified sites: what a browser shows, read from the HTML mkdocs-minify-plugin wrote ----------------------

MINIFY = {"minify": {"minify_html": True}}
PAGES = {
    "index.md": "# Home\n\nWelcome to   the *site*.\n\n## Start here { #start }\n\nFirst steps with `pip`.\n",
    "guide/setup.md": '---\ntags: [setup]\n---\n# Setup\n\n!!! note "Before you start"\n    Read this.\n\n'
    "| Option | Default |\n| --- | --- |\n| `name` | none |\n\n### Install\n\n```bash\n# comment\npip  install x\n```\n",
    "guide/usage.md": "Usage\n=====\n\nUse it,\nline by line.\n\nDetails\n-------\n\nMore, [on setup](setup.md#install).\n\n"
    "> Quoted over\n> two lines.\n\n- an item\n  wrapped\n- another\n",
    "notes.md": "No heading on this page.\n",
}
# Material's blog: its index page, and posts whose URLs are named by an explicit dotted slug and by the title
# (slugified as Material does, which keeps the Chinese letters).
BLOG = {
    "blog/index.md": "# Blog\n\nNews from the project.\n",
    "blog/posts/two.md": "---\ndate: 2024-02-01\nslug: mkdocs-2.0\n---\n# What 2.0 means\n\nA lot.\n\n## Upgrading\n\nSoon.\n",
    "blog/posts/hello.md": "---\ndate: 2024-01-01\n---\n# Hello world\n\nThe first post.\n",
    "blog/posts/zh.md": "---\ndate: 2024-03-01\n---\n# Recherche en chinois – 中文搜索\n\nEnfin.\n",
}
# Theme chrome inside the article after the page's content: Material's feedback form, and a comment system as
# Material's docs show it (and mkdocstrings' docs write it, in an element of its own).
FEEDBACK = {"title": "Was this page helpful?", "ratings": [{"icon": "material/thumb-up", "name": "Yes", "data": 1}]}
COMMENTS = (
    '<div id="feedback" style="display: none;">\n  <h2 id="__comments">Feedback</h2>\n'
    '  <script src="https://giscus.app/client.js" data-repo="example/site" async></script>\n</div>\n'
)


def minified_site(root: Path, theme: str) -> Site:
    """A site built with its HTML minified, with the plugin (site/) and without it (site-plain/); the Material
    one has a blog, the feedback form and a comment system."""
    blog = theme == "material"
    plugins: list[Any] = ["search", "blog", MINIFY] if blog else ["search", MINIFY]
    settings: dict[str, Any] = {
        "theme": {"name": theme, "custom_dir": "overrides"} if blog else {"name": theme},
        "markdown_extensions": [
            "attr_list",
            "admonition",
            "tables",
            {"toc": {"permalink": True}},
            "pymdownx.superfences",
        ],
        "plugins": plugins,
    }
    if blog:
        settings["extra"] = {"analytics": {"feedback": FEEDBACK}}
        (root / "overrides" / "partials").mkdir(parents=True)
        (root / "overrides" / "partials" / "comments.html").write_text(COMMENTS, encoding="utf-8")
    site = Site(root, {**settings, "plugins": [*plugins, "vault-mcp"]})
    site.write_pages(PAGES | (BLOG if blog else {}))
    site.build()
    (root / "mkdocs-plain.yml").write_text(
        yaml.safe_dump({"site_name": "Test site", "site_dir": "site-plain", **settings}), encoding="utf-8"
    )
    build_from(root / "mkdocs-plain.yml")
    return site


@pytest.mark.parametrize("theme", ["material", "mkdocs"])
def test_a_minified_site_read_from_its_html_gives_the_plugins_documents_headings_and_sections(
    tmp_path: Path, theme: str
) -> None:
    site = minified_site(tmp_path, theme)
    plain = tmp_path / "site-plain"
    page = (plain / "index.html").read_text(encoding="utf-8")
    assert "class=headerlink" in page and 'class="headerlink"' not in page  # minified: its quotes taken off
    done = run_index(str(plain), "--config", str(tmp_path / "mkdocs-plain.yml"))
    assert done.returncode == 0, done.stderr
    plugin, from_html = page_models(site.index_path), page_models(plain / "vault-mcp" / "index.sqlite")
    expected = {*PAGES, *(BLOG if theme == "material" else ())}
    assert set(plugin) == set(from_html) == expected  # every post and the blog's index page
    for path, ours in plugin.items():
        meta = blog_dates_as_written({key: value for key, value in ours.meta.items() if key not in BLOG_META})
        # the minifier made the HTML's white space one space, which neither a browser nor the index shows
        assert replace(ours, fingerprint="", html="", meta=meta) == replace(from_html[path], fingerprint="", html="")
    rows = index_rows(site.index_path, meta_less=BLOG_META)
    assert index_rows(plain / "vault-mcp" / "index.sqlite", meta_less=BLOG_META) == rows
    headings = [heading for document in rows.values() for _, _, _, heading, *_ in document["sections"]]
    assert "Start here" in headings and not any("¶" in heading or "Feedback" in heading for heading in headings)
    calls = [("read", {"path": path}) for path in rows] + [
        ("read", {"path": path, "section": heading})
        for path, document in rows.items()
        for _, _, _, heading, *_ in document["sections"]
        if heading
    ]
    answers = [call_tools(index, calls) for index in (site.index_path, plain / "vault-mcp" / "index.sqlite")]
    # meta is compared above; the minifier made a paragraph's line breaks spaces, which is how a browser shows them
    by_plugin, from_site = (
        [{**answer, "meta": None, "markdown": as_shown(answer["markdown"])} for answer in each] for each in answers
    )
    assert from_site == by_plugin
    assert all(answer["markdown"] for answer in from_site)
    wrapped = [answer["markdown"] for answer in answers[0] if "line by line" in answer["markdown"]]
    assert wrapped and all("Use it,\nline by line." in markdown for markdown in wrapped)  # the plugin's breaks


def as_shown(markdown: str) -> str:
    """Markdown with its line breaks and block quotes' `>` as one space: the text as a browser lays it out."""
    return " ".join(word for word in markdown.split() if word != ">")
