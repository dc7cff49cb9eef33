"""One page model (page.RenderedPage) for both ways a site gets its index: the plugin during `mkdocs build`, and
`mkdocs-vault-mcp index SITE_DIR` over a site built without it. Both indexes are read back through the one module
that maps pages to rows (index/rows.py), and the models compared page by page. Real MkDocs builds in a temp dir,
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

from helpers.index_command import run_index
from helpers.paths import ROOT
from helpers.site import Site, build_from
from mkdocs_vault_mcp.index.rows import rendered_page_from_rows, stored_paths
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
