"""The documentation site (docs/): it builds with `--strict` and with the plugin itself, its index finds each
option on the configuration page first, and the pages that the code declares (options, tools, the options'
JSON schema) are what docs/generate.py writes from it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.mcp_session import Session, session_over
from mkdocs_vault_mcp.config import VaultMcpConfig
from mkdocs_vault_mcp.mcp.tools import TOOLS

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"

pytestmark = pytest.mark.skipif(
    not (DOCS / "mkdocs.yml").is_file() or not (REPO / "CHANGELOG.md").is_file(),
    reason="needs docs/ and CHANGELOG.md (the changelog page includes it)",
)


@pytest.fixture(scope="module")
def docs_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The docs built by `mkdocs build --strict` from a copy (the repository's own docs/.cache stays untouched)."""
    root = tmp_path_factory.mktemp("docs-site")
    shutil.copytree(DOCS, root / "docs", ignore=shutil.ignore_patterns(".cache", "site"))
    shutil.copy(REPO / "CHANGELOG.md", root / "CHANGELOG.md")  # the changelog page includes it
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "docs" / "mkdocs.yml")]
    done = subprocess.run(command, capture_output=True, text=True, cwd=root)
    assert done.returncode == 0, done.stderr[-4000:]
    index = root / "docs" / "site" / "vault-mcp" / "index.sqlite"
    assert index.is_file()
    return index


@pytest.fixture(scope="module")
def docs_session(docs_index: Path) -> Iterator[Session]:
    with session_over(docs_index) as session:
        yield session


def test_the_docs_publish_their_own_index_snapshot_and_stats_page(docs_index: Path) -> None:
    site = docs_index.parent.parent
    assert (site / "vault-mcp" / "snapshot.json").is_file()
    assert (site / "stats" / "index.html").is_file()
    assert (site / "changelog" / "index.html").read_text(encoding="utf-8").count("Keep a Changelog") == 1
    assert (site / "schema.json").read_bytes() == (DOCS / "schema.json").read_bytes()  # editors refer to it by URL


@pytest.mark.parametrize("option", [name for name, _ in VaultMcpConfig._schema])
def test_search_for_an_option_name_finds_the_configuration_page_first(docs_session: Session, option: str) -> None:
    (first, *_) = docs_session.ok("search", query=option, limit=3)["result"]
    assert first["path"] == "configuration.md", (option, first["path"])
    assert first["sections"][0]["heading"] == option


def test_every_option_and_every_tool_has_its_heading(docs_session: Session) -> None:
    outline = docs_session.ok("read", path="configuration.md", view="outline")["outline"]
    options = [name for name, _ in VaultMcpConfig._schema]
    assert [entry["heading"] for entry in outline if entry["level"] == 2] == options
    outline = docs_session.ok("read", path="tools.md", view="outline")["outline"]
    assert [entry["heading"] for entry in outline if entry["level"] == 2] == list(TOOLS)


@pytest.mark.one_python  # the same bytes on any Python; it builds example-site once more
def test_the_generated_pages_are_what_the_code_declares() -> None:
    if not (REPO / "example-site").is_dir():
        pytest.skip("needs the repository's example-site (not an sdist)")
    done = subprocess.run(
        [sys.executable, str(DOCS / "generate.py"), "--check"], capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
