"""A site published in versions by the real `mike` (spec section 9): each version's index, snapshot and stats
page name the version it was built as, and one server answers from every version."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from helpers.mike_site import mike_site
from helpers.scripted_git import isolate_git
from helpers.site import built_site


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Versions 1.0 and 2.0 (alias latest) deployed by mike, the deploy branch checked out."""
    root = tmp_path_factory.mktemp("mike")
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate_git(monkeypatch, root / "home", ceiling=root.parent)
        return mike_site(root)[1]


def info(index: Path, key: str) -> str | None:
    with sqlite3.connect(f"file:{index}?mode=ro", uri=True) as conn:
        row = conn.execute("SELECT value FROM info WHERE key = ?", [key]).fetchone()
    return row[0] if row else None


@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_each_version_records_the_version_mike_built_it_as(published: Path, version: str) -> None:
    assert json.loads((published / "versions.json").read_text())[0]["aliases"] == ["latest"]
    assert info(published / version / "vault-mcp" / "index.sqlite", "site_version") == version
    snapshot = json.loads((published / version / "vault-mcp" / "snapshot.json").read_text())
    assert snapshot["version"] == version
    stats_html = (published / version / "stats" / "index.html").read_text()
    assert f'data-version="{version}"' in stats_html


def test_the_version_option_names_the_version_and_an_unversioned_site_names_none(tmp_path: Path) -> None:
    named = built_site(tmp_path / "named", {"plugins": [{"vault-mcp": {"version": "3.1"}}]}, {"index.md": "# Home\n"})
    assert info(named.index_path, "site_version") == "3.1"
    assert json.loads((named.site_dir / "vault-mcp" / "snapshot.json").read_text())["version"] == "3.1"
    plain = built_site(tmp_path / "plain", {"plugins": ["vault-mcp"]}, {"index.md": "# Home\n"})
    assert info(plain.index_path, "site_version") == ""
    assert "version" not in json.loads((plain.site_dir / "vault-mcp" / "snapshot.json").read_text())
    assert "data-version" not in (plain.site_dir / "stats" / "index.html").read_text()
