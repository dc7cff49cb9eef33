"""Does `read` give back every section that `search` can return, without theme chrome?

    .venv/bin/python bench/read_coverage.py [--corpus fastapi-en|fastapi|material ...]

Builds each corpus of ../shared/corpora with the plugin (a real `mkdocs build`, theme material, the
extensions its site uses), then, for every indexed section (what search can return), reads it once by its
heading as search returns it and once by its anchor id, and reads every page whole. It prints, per corpus:
sections, those read back by heading, anchored sections, those read back by anchor, pages, and answers
that hold theme chrome (a permalink sign, a copy button's text, navigation) that the page's source does not
write itself. The goal is 100% and 0.

Counts, not times: the figures do not depend on the machine. `tests/test_read_coverage.py` runs the same
check on the English FastAPI docs.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from mkdocs_vault_mcp.errors import InvalidArgument  # noqa: E402
from mkdocs_vault_mcp.index.publish import open_read_only  # noqa: E402
from mkdocs_vault_mcp.index.query.read import read_document  # noqa: E402
from report import table, write_results  # noqa: E402

CORPORA = ROOT.parent / "shared" / "corpora"
OUT = ROOT / "bench" / "out" / "read-coverage"

# What a page's chrome would leave in an answer: permalinks, copy buttons, navigation, the theme's footer.
CHROME = (
    "¶",
    "Copy to clipboard",
    "Skip to content",
    "md-nav",
    "md-header",
    "Back to top",
    "Made with",
    "headerlink",
    "__codelineno",
)

FASTAPI_EXTENSIONS = [
    "abbr",
    "admonition",
    "attr_list",
    "def_list",
    "footnotes",
    "md_in_html",
    "tables",
    {"toc": {"permalink": True}},
    "pymdownx.details",
    {"pymdownx.highlight": {"line_spans": "__span"}},
    "pymdownx.inlinehilite",
    "pymdownx.superfences",
    {"pymdownx.tabbed": {"alternate_style": True}},
    "pymdownx.blocks.admonition",
    "pymdownx.blocks.details",
    "pymdownx.blocks.tab",
]

MATERIAL_EXTENSIONS = [
    "abbr",
    "admonition",
    "attr_list",
    "def_list",
    "footnotes",
    "md_in_html",
    "tables",
    {"toc": {"permalink": True}},
    {"pymdownx.arithmatex": {"generic": True}},
    {"pymdownx.betterem": {"smart_enable": "all"}},
    "pymdownx.caret",
    "pymdownx.details",
    {"pymdownx.highlight": {"anchor_linenums": True, "line_spans": "__span", "pygments_lang_class": True}},
    "pymdownx.inlinehilite",
    "pymdownx.keys",
    "pymdownx.mark",
    "pymdownx.smartsymbols",
    {"pymdownx.snippets": {"auto_append": ["includes/mkdocs.md"]}},
    "pymdownx.superfences",
    {"pymdownx.tabbed": {"alternate_style": True, "combine_header_slug": True}},
    {"pymdownx.tasklist": {"custom_checkbox": True}},
    "pymdownx.tilde",
]


def corpus_site(name: str) -> tuple[Path, dict]:
    """Where a corpus' sources are, and the mkdocs.yml settings its site is built with."""
    if name == "material":
        return CORPORA / "material-docs", {
            "site_name": "Material for MkDocs",
            "theme": {"name": "material", "custom_dir": "overrides"},
            "plugins": [{"blog": {"authors": False}}, "search", "vault-mcp"],
            "markdown_extensions": MATERIAL_EXTENSIONS,
        }
    languages = (
        ["en"]
        if name == "fastapi-en"
        else sorted(p.name for p in (CORPORA / "fastapi-docs").iterdir() if (p / "docs").is_dir())
    )
    return CORPORA / "fastapi-docs", {
        "site_name": "FastAPI",
        "theme": {"name": "material"},
        "plugins": ["search", "vault-mcp"],
        "markdown_extensions": FASTAPI_EXTENSIONS,
        "languages": languages,
    }


def build_corpus(name: str, root: Path, overrides: dict | None = None) -> Path:
    """A real `mkdocs build` of the corpus under `root` (with `overrides` of its settings); returns the
    published index."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    source, settings = corpus_site(name)
    settings.update(overrides or {})
    languages = settings.pop("languages", None)
    shutil.rmtree(root, ignore_errors=True)
    docs = root / "docs"
    if languages is None:
        shutil.copytree(source / "docs", docs)
        shutil.copytree(source / "includes", root / "includes")
        # The templates its pages ask for live in Material's repository beside the docs, not in the corpus.
        (root / "overrides").mkdir()
        for template in ("home.html", "custom.html", "redirect.html"):
            (root / "overrides" / template).write_text('{% extends "main.html" %}\n', encoding="utf-8")
    else:
        for language in languages:
            target = docs if languages == ["en"] else docs / language
            shutil.copytree(source / language / "docs", target)
    config_file = root / "mkdocs.yml"
    config_file.write_text(yaml.safe_dump({**settings, "docs_dir": "docs", "site_dir": "site"}), encoding="utf-8")
    config = load_config(config_file=str(config_file))
    config.plugins.on_startup(command="build", dirty=False)
    try:
        build(config)
    finally:
        config.plugins.on_shutdown()
    return root / "site" / "vault-mcp" / "index.sqlite"


def read_coverage(index: Path) -> dict[str, Any]:
    """Every section read back by heading and by anchor, and every page read whole, checked for chrome."""
    conn = open_read_only(index)
    sections = conn.execute(
        "SELECT d.path, s.heading, s.anchor FROM sections s JOIN documents d ON d.id = s.document_id"
        " ORDER BY d.path, s.position"
    ).fetchall()
    by_heading = by_anchor = anchored = 0
    misses: list[str] = []
    for path, heading, anchor in sections:
        try:
            chosen = read_document(conn, path, section=heading, view="outline")["section"]
            assert chosen is not None  # a section was asked for
            # A heading that names two sections reads the first: accepted, with the heading asked for.
            by_heading += chosen["heading"] == heading
        except InvalidArgument:
            misses.append(f"{path} heading {heading!r}")
        if anchor:
            anchored += 1
            try:
                chosen = read_document(conn, path, section=anchor, view="outline")["section"]
                assert chosen is not None  # a section was asked for
                by_anchor += chosen["anchor"] == anchor
            except InvalidArgument:
                misses.append(f"{path} anchor {anchor!r}")
    paths = [path for (path,) in conn.execute("SELECT path FROM documents ORDER BY path")]
    with_chrome: list[str] = []
    outline_mismatches: list[str] = []
    for path in paths:
        text = read_document(conn, path, max_chars=100_000)
        markdown, offset = text["markdown"], text["next_offset"]
        while offset is not None:
            more = read_document(conn, path, offset=offset, max_chars=100_000)
            markdown, offset = markdown + more["markdown"], more["next_offset"]
        outline = read_document(conn, path, view="outline")["outline"]
        assert outline is not None  # view=outline has one
        if sum(entry["characters"] for entry in outline) != len(markdown):  # the outline's sizes
            outline_mismatches.append(path)
        source = read_document(conn, path, view="source", max_chars=100_000)["markdown"]
        # A page about the theme may write these words itself (Material's docs show `¶` and `md-nav`).
        found = [mark for mark in CHROME if mark in markdown and mark not in source]
        if found:
            with_chrome.append(f"{path}: {', '.join(found)}")
    conn.close()
    return {
        "sections": len(sections),
        "by_heading": by_heading,
        "anchored": anchored,
        "by_anchor": by_anchor,
        "pages": len(paths),
        "pages_with_chrome": len(with_chrome),
        "misses": misses,
        "chrome": with_chrome,
        "outline_mismatches": outline_mismatches,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus", nargs="+", default=["fastapi", "material"], choices=["fastapi-en", "fastapi", "material"]
    )
    arguments = parser.parse_args()
    rows = []
    for name in arguments.corpus:
        found = read_coverage(build_corpus(name, OUT / name))
        for line in found["misses"][:10] + found["chrome"][:10]:
            print(f"  {name}: {line}")
        rows.append(
            [
                name,
                str(found["sections"]),
                f"{found['by_heading']} ({found['by_heading'] / found['sections']:.1%})",
                str(found["anchored"]),
                f"{found['by_anchor']} ({found['by_anchor'] / max(1, found['anchored']):.1%})",
                str(found["pages"]),
                str(found["pages_with_chrome"]),
            ]
        )
    header = ["corpus", "sections", "read by heading", "anchored", "read by anchor", "pages", "pages with chrome"]
    report = (
        "read coverage: every indexed section read back by its heading and by its anchor; every page read whole\n"
        f"command: .venv/bin/python bench/read_coverage.py --corpus {' '.join(arguments.corpus)}\n\n"
        + table([header, *rows])
        + "\n"
    )
    print(report)
    write_results("read_coverage", report)


if __name__ == "__main__":
    main()
