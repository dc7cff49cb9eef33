"""Zensical, the successor of Material for MkDocs: it reads mkdocs.yml but runs no MkDocs plugin.
example-site built by `zensical build` (in a venv of its own) and indexed with `mkdocs-vault-mcp index
--docs-dir` gives the plugin's index of the MkDocs build of the same files, but for what
docs/pages/other-generators.md lists."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from mcp import StdioServerParameters

from helpers.index_command import BLOG_META, QUERIES, SCRIPT, index_rows, run_index, summary_line
from helpers.mcp_session import session_over, session_with
from helpers.paths import ROOT
from helpers.site import Site
from helpers.tool_venvs import tool_venv

# Run on python3's suite only (.ci/other-pythons skips it on the other Pythons; see pyproject.toml's marker).
pytestmark = pytest.mark.one_python

# 0.0.73 is the last release that installs from the package index the tests use: 0.0.74 and 0.1.x need
# `zensical-ui`, which it does not serve (docs/pages/other-generators.md).
PACKAGES = ["zensical==0.0.73"]


@pytest.fixture(scope="module")
def zensical() -> Path:
    return tool_venv("zensical", PACKAGES, beside_tests=False)


def example_for_zensical(root: Path) -> None:
    """example-site as Zensical can build it: without the page whose front matter is broken (Zensical stops
    there, MkDocs warns) and with the snippets folder given as a path (Zensical knows no `!relative` tag)."""
    shutil.copytree(ROOT / "example-site", root, ignore=shutil.ignore_patterns(".cache", "site"))
    (root / "docs" / "community" / "contributing.md").unlink()
    config = root / "mkdocs.yml"
    text = config.read_text(encoding="utf-8")
    assert "[!relative $config_dir/snippets]" in text
    config.write_text(text.replace("[!relative $config_dir/snippets]", f"[{root / 'snippets'}]"), encoding="utf-8")


def test_a_zensical_build_indexed_from_its_html_is_the_plugins_index(zensical: Path, tmp_path: Path) -> None:
    built_by_zensical, built_by_mkdocs = tmp_path / "zensical", tmp_path / "mkdocs"
    example_for_zensical(built_by_zensical)
    shutil.copytree(built_by_zensical, built_by_mkdocs)  # copy2: the same file times, so mtime-dated pages agree
    done = subprocess.run(
        [str(zensical / "zensical"), "build", "-f", "mkdocs.yml"],
        cwd=built_by_zensical,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0 and (built_by_zensical / "site" / "sitemap.xml").is_file(), done.stdout + done.stderr
    assert not (built_by_zensical / "site" / "vault-mcp").exists()  # Zensical ran no plugin
    Site(built_by_mkdocs, None).build()

    site = built_by_zensical / "site"
    line = summary_line(run_index(str(site), "--docs-dir", "docs", "--config", "mkdocs.yml", cwd=built_by_zensical))
    assert "Indexed 22 pages, 130 sections: 22 changed" in line
    ours = index_rows(site / "vault-mcp" / "index.sqlite", meta_less=BLOG_META)
    plugins = index_rows(built_by_mkdocs / "site" / "vault-mcp" / "index.sqlite", meta_less=BLOG_META)
    assert ours == plugins  # documents, titles, URLs, meta, times, sections, anchors, filter values

    with (
        session_over(site / "vault-mcp" / "index.sqlite") as zen,
        session_over(built_by_mkdocs / "site" / "vault-mcp" / "index.sqlite") as mk,
    ):
        for query in QUERIES:
            assert zen.paths(query)[:3] == mk.paths(query)[:3], query
        assert zen.ok("stats")["document_count"] == mk.ok("stats")["document_count"] == 22

    # `mkdocs-vault-mcp serve SITE_DIR` over what the command wrote into the Zensical site
    with session_with(StdioServerParameters(command=str(SCRIPT), args=["serve", str(site)])) as served:
        assert served.ok("count_documents", folder="guide")["total"] == 8
        assert served.paths("calibrate the wind vane")[0] == "guide/sensors/wind/wind-vane.md"

    # Zensical rebuilds from its cache; indexing again finds nothing changed
    rebuilt = subprocess.run(
        [str(zensical / "zensical"), "build", "-f", "mkdocs.yml"],
        cwd=built_by_zensical,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    again = summary_line(run_index(str(site), "--docs-dir", "docs", "--config", "mkdocs.yml", cwd=built_by_zensical))
    assert ": 0 changed, 22 unchanged, 0 removed" in again


def test_zensical_stops_at_front_matter_that_mkdocs_only_warns_about(zensical: Path, tmp_path: Path) -> None:
    """Why example-site is built without community/contributing.md here (a listed difference)."""
    example_for_zensical(tmp_path / "site")
    shutil.copy2(
        ROOT / "example-site" / "docs" / "community" / "contributing.md",
        tmp_path / "site" / "docs" / "community" / "contributing.md",
    )
    done = subprocess.run(
        [str(zensical / "zensical"), "build", "-f", "mkdocs.yml"],
        cwd=tmp_path / "site",
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0
    assert "error reading page metadata 'community/contributing.md'" in done.stdout + done.stderr
