"""The stats page: a generated page, drawn from the snapshot, rendered through the site's theme."""

from __future__ import annotations

import html
from typing import Any

from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page

MARKER = "vault-mcp-stats"


def src_uri(option: str) -> str:
    """`stats/` -> `stats/index.md`, `stats.md` -> `stats.md`, `stats` -> `stats.md`."""
    option = option.strip("/") + ("/" if option.endswith("/") else "")
    if option.endswith("/"):
        return option + "index.md"
    return option if option.endswith(".md") else option + ".md"


def add_file(files: Files, config: Any, option: str, in_nav: bool) -> File:
    file = File.generated(
        config,
        src_uri(option),
        content=f"# Site statistics\n\n<!-- {MARKER} -->\n",
        inclusion=InclusionLevel.INCLUDED if in_nav else InclusionLevel.NOT_IN_NAV,
    )
    files.append(file)
    return file


def is_stats_page(page: Page) -> bool:
    return page.file.generated_by == "vault-mcp" and page.file.src_uri.endswith(".md") and (
        page.markdown is not None and MARKER in page.markdown
    )


def render(snapshot: dict[str, Any], page: Page, config: Any) -> str:
    rows = "".join(
        f"<tr><td>{html.escape(b['key'] or '(root)')}</td><td>{b['count']}</td></tr>"
        for b in snapshot["by_folder"]["buckets"]
    )
    return (
        f"<h1 id=\"site-statistics\">Site statistics</h1><p>{snapshot['total']} pages.</p>"
        f"<table><thead><tr><th>Folder</th><th>Pages</th></tr></thead><tbody>{rows}</tbody></table>"
        '<p><a href="../vault-mcp/snapshot.json">snapshot.json</a></p>'
    )
