"""What the files for agents read of a committed index (build_steps/agent_files.py writes them): every document in path
order, the site's name and address, and each page's whole Markdown as `read` gives it, kept between builds.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from pathlib import Path
from typing import NamedTuple

from ... import __version__

log = logging.getLogger("mkdocs.plugins.vault-mcp")


class AgentDocument(NamedTuple):
    document_id: int
    path: str
    title: str
    url: str
    modified: int
    meta: str  # the front matter as JSON
    summary: str
    fingerprint: str
    language: str


def agent_documents(conn: sqlite3.Connection) -> list[AgentDocument]:
    rows = conn.execute(
        "SELECT id, path, title, url, modified, meta, summary, fingerprint, language FROM documents ORDER BY path"
    ).fetchall()
    return [AgentDocument(*row) for row in rows]


def site_identity(conn: sqlite3.Connection) -> tuple[str, str]:
    """The site's name and `site_url` (either may be empty)."""
    info = dict(conn.execute("SELECT key, value FROM info WHERE key IN ('site_name', 'site_url')").fetchall())
    return info.get("site_name", ""), info.get("site_url", "")


class MarkdownCache:
    """The pages' Markdown from the last run, by fingerprint (which changes with the page's HTML, URL or source),
    beside the working index: a build converts only the pages that changed, conversion being nearly all of the
    files' cost. A cache: when it cannot be read or written, pages are converted again."""

    def __init__(self, index: Path) -> None:
        self.path = index.with_name(f"{index.stem}-markdown.sqlite")
        self.known: dict[str, str] = {}
        self.used: dict[str, str] = {}
        try:
            with contextlib.closing(sqlite3.connect(self.path)) as conn:
                conn.execute("CREATE TABLE IF NOT EXISTS markdown (key TEXT PRIMARY KEY, text TEXT NOT NULL)")
                self.known = dict(conn.execute("SELECT key, text FROM markdown").fetchall())
        except sqlite3.Error as error:
            log.debug(f"vault-mcp: the Markdown cache {self.path} is not readable ({error}); converting every page")
            self.path.unlink(missing_ok=True)

    def markdown(self, conn: sqlite3.Connection, document_id: int, fingerprint: str, url: str) -> str:
        key = f"{__version__}:{fingerprint}"  # another version of the package may convert differently
        text = self.known.get(key)
        if text is None:
            # Imported for a page whose Markdown is not kept: it loads the HTML parsing, which a build where no page
            # changed never needs (the plugin's build imports nothing of the queries otherwise).
            from .read import page_text

            page = page_text(conn, document_id, fingerprint, url, keep=False)
            text = page.text(range(len(page.parts)))
        self.used[key] = text
        return text

    def save(self) -> None:
        """Keep the pages of this run only; nothing to write when the cache holds them already (the writer filled
        it after its commit, and the files for agents then read every page from it)."""
        if self.used == self.known:
            return
        try:
            with contextlib.closing(sqlite3.connect(self.path)) as conn, conn:
                conn.execute("DELETE FROM markdown")
                conn.executemany("INSERT INTO markdown (key, text) VALUES (?, ?)", self.used.items())
        except sqlite3.Error as error:
            log.debug(f"vault-mcp: the Markdown cache {self.path} was not written ({error})")


def keep_markdown_copies(conn: sqlite3.Connection, index: Path) -> None:
    """Convert every page whose Markdown the cache lacks, and keep them: the writer does it right after its commit,
    beside MkDocs rendering the templates (in the writer's process on a first build), so that the files for agents
    then only read the cache."""
    cache = MarkdownCache(index)
    for document in agent_documents(conn):
        cache.markdown(conn, document.document_id, document.fingerprint, document.url)
    cache.save()
