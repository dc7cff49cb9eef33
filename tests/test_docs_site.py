"""The documentation site (docs/): it builds with `--strict` and with the plugin itself, its index finds each
option on the configuration page first, the pages that the code declares (options, tools, the options'
JSON schema) are what docs/generate.py writes from it, and in a real headless Chromium its home page fits a
desktop and a phone screen (screenshots go to tests/out/)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.chromium import Browser, find_chromium, serve_directory
from helpers.mcp_session import Session, session_over
from mkdocs_vault_mcp.config import VaultMcpConfig
from mkdocs_vault_mcp.mcp.tools import TOOLS

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
OUT = Path(__file__).resolve().parent / "out"

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


def printed(command: list[str], cwd: Path) -> list[str]:
    """The lines a failing command prints, as a user's terminal shows them."""
    done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, stdin=subprocess.DEVNULL)
    assert done.returncode != 0
    return (done.stdout + done.stderr).strip().splitlines()


def test_troubleshooting_quotes_the_messages_the_tools_print(tmp_path: Path) -> None:
    page = (DOCS / "pages" / "troubleshooting.md").read_text(encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: Demo\nplugins:\n  - search\n  - vault-mcp:\n      stats_pag: false\n", encoding="utf-8"
    )
    build = [sys.executable, "-m", "mkdocs", "build", "--strict"]
    lines = printed(build, tmp_path)  # the misspelled option
    aborted = "Aborted with 1 configuration warnings in 'strict' mode!"
    assert aborted in lines and aborted in page
    (warning,) = [line for line in lines if line.startswith("WARNING")]
    assert warning in page
    (tmp_path / "mkdocs.yml").write_text("site_name: Demo\nplugins:\n  - search\n", encoding="utf-8")
    subprocess.run(build, capture_output=True, check=True, cwd=tmp_path)
    serve = [sys.executable, "-m", "mkdocs_vault_mcp", "serve", "site/"]
    assert printed(serve, tmp_path)[-1] in page  # a site built without the plugin
    assert printed([*serve, "--transport", "htp"], tmp_path)[-1] in page


# What a reader sees: whether the page scrolls sideways, each code block's lines against its box, and how far
# down the home page's first-command blocks end.
LAYOUT = """(() => {
  const page = document.scrollingElement;
  const blocks = [...document.querySelectorAll('.md-content pre')].map(pre => {
    const code = pre.querySelector('code') || pre, style = getComputedStyle(code), box = pre.getBoundingClientRect();
    return {start: pre.textContent.slice(0, 40), scrollWidth: code.scrollWidth, clientWidth: code.clientWidth,
            overflowX: style.overflowX, whiteSpace: style.whiteSpace, left: box.left, right: box.right,
            bottom: box.bottom + page.scrollTop};
  });
  const landing = [...document.querySelectorAll('.vm-landing pre')].map(pre => pre.getBoundingClientRect().bottom);
  const split = [...document.querySelectorAll('.md-typeset td:first-child > code')]
    .filter(code => code.getClientRects().length > 1).map(code => code.textContent);
  return {scrollWidth: page.scrollWidth, clientWidth: page.clientWidth, blocks, landing, split,
          headings: [...document.querySelectorAll('.vm-landing h2')].map(h => h.firstChild.textContent.trim())};
})()"""


def readable(block: dict[str, Any], width: int) -> bool:
    """Inside the screen, and its lines either fit, wrap, or scroll within the block (never cut off)."""
    inside = block["left"] >= 0 and block["right"] <= width + 0.5
    fits = block["scrollWidth"] <= block["clientWidth"]
    wraps = block["whiteSpace"] in ("pre-wrap", "break-spaces", "normal")
    return inside and (fits or wraps or block["overflowX"] in ("auto", "scroll"))


@pytest.mark.parametrize("width", [1280, 390])
def test_the_home_page_fits_the_screen_and_every_code_block_is_readable(docs_index: Path, width: int) -> None:
    site = docs_index.parent.parent
    browser = Browser(find_chromium())
    try:
        with serve_directory(site) as base:
            browser.open(base, width=width, height=800)
            layout = browser.evaluate(LAYOUT)
            browser.screenshot(OUT / f"docs-home-{width}.png")
            pages = {}
            for page in ("tools/", "configuration/", "hosting/"):
                browser.open(base + page, width=width, height=800)
                pages[page] = browser.evaluate(LAYOUT)
    finally:
        browser.close()
    assert layout["headings"] == ["You own the site", "Your agent reads a site", "You host the site"]
    assert layout["scrollWidth"] <= layout["clientWidth"] == width  # the body never scrolls sideways
    assert layout["blocks"] and [b["start"] for b in layout["blocks"] if not readable(b, width)] == []
    if width == 1280:
        # One desktop screen holds what it is and the first command of each reader; no line is cut off.
        assert len(layout["landing"]) == 4 and max(layout["landing"]) <= 800
        assert [b["start"] for b in layout["blocks"] if b["scrollWidth"] > b["clientWidth"]] == []
    for page, found in pages.items():
        assert found["scrollWidth"] <= found["clientWidth"], page
        assert found["split"] == [], page  # argument and option names are never broken mid-word
