"""The page model: one rendered page, as both the plugin and `mkdocs-vault-mcp index SITE_DIR` hand it to the index.

The plugin makes a `RenderedPage` from MkDocs' page (mkdocs_pages.rendered_page), `index SITE_DIR` from a built
site's HTML file (build_steps/built_site.py); the index writer turns it into a `documents.Document` and that into rows
(index/write/rows.py), which also reads it back. A leaf module: the build's own thread imports it for every page, so it
holds no HTML parsing and imports no MkDocs.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, fields
from typing import Any

from ..instants import rfc3339

# One git commit of a page, as build_steps/modified.py reads it: (seconds since the epoch, author, subject).
Commit = tuple[int, str, str]
# Which front matter fields the index keeps values of: "auto" (all) or their names (the plugin option).
IndexedFields = str | list[str]
# Longer text than this crosses the writer's pipe as UTF-8 bytes (__getstate__).
_LONG_TEXT = 256


@dataclass(frozen=True)
class RenderedPage:
    """One page as it was rendered: what its document (documents.build_document) is made of."""

    path: str  # its path in the index: the Markdown file's path in docs_dir
    url: str  # its address: site_url joined with the page's URL, else the URL from the site's root
    title: str
    html: str  # the rendered content HTML (not the theme's page around it)
    meta: dict[str, Any]  # its front matter, as the author wrote it
    modified: dt.datetime  # aware
    modified_source: str  # "meta", "git", "mtime" or "sitemap"
    markdown: str = ""  # its Markdown source; what stands for it when `source_file` cannot be read
    fingerprint: str = ""  # fingerprints.page_fingerprint: unchanged, the page is not indexed again
    language: str = ""  # the locale the page is published in
    fallback_of: str | None = None  # the path of the default-language page this page copies, if it is a fallback
    page_path: str = ""  # its server path (the site's base path and its URL), relative links resolve against it
    site_url: str | None = None
    history: list[Commit] = field(default_factory=list)  # its last git commits, newest first
    # The file to read `markdown` from, where the document is made (the writer's side): only a page indexed
    # again has its file read, and not on the build's thread.
    source_file: str | None = None

    def __getstate__(self) -> dict[str, Any]:
        """A page's HTML and Markdown pickled as UTF-8 bytes: pickling a str that is not ASCII makes CPython keep
        a UTF-8 copy inside the str, and MkDocs keeps every page's HTML and Markdown until the build ends."""
        return {
            name: _as_bytes(getattr(self, name)) if name in ("html", "markdown") else getattr(self, name)
            for name in _FIELD_NAMES
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(
                self, name, value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value
            )


_FIELD_NAMES = tuple(item.name for item in fields(RenderedPage))


def _as_bytes(text: str) -> str | bytes:
    return text.encode("utf-8", "surrogatepass") if len(text) > _LONG_TEXT else text


def history_rows(commits: list[Commit]) -> list[dict[str, Any]]:
    """A page's last commits as the index keeps them."""
    return [
        {"time": rfc3339(seconds * 1_000_000), "author": author, "subject": subject}
        for seconds, author, subject in commits
    ]


def commits_of_rows(rows: list[dict[str, Any]]) -> list[Commit]:
    """The inverse of history_rows."""
    return [(int(dt.datetime.fromisoformat(row["time"]).timestamp()), row["author"], row["subject"]) for row in rows]
