"""The files for agents that have no MCP client, written into the site from the committed index, so they are the
`read` answers and cannot disagree with them: a Markdown copy of each page beside its HTML, `llms.txt` (and, when
asked, `llms-full.txt`) at the root of each language, and the discovery file (build_steps/server_card.py). The plugin's
build and `mkdocs-vault-mcp index SITE_DIR` both call `write_agent_files` once the index is published; only
documents are read, so drafts and excluded pages never appear."""

from __future__ import annotations

import json
import logging
import os
import posixpath
import sqlite3
from dataclasses import dataclass, replace
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from ..config import VaultMcpConfig
from ..index.publish import open_read_only
from ..index.query.agent_pages import MarkdownCache, agent_documents, site_identity
from ..index.schema import FORMAT_VERSION
from ..instants import rfc3339
from . import llms_txt, server_card
from .site_folder import PAGE_BYTES, SiteError, Unreadable, leads_outside, read_site_file

if TYPE_CHECKING:
    from .built_site_config import SiteConfig

log = logging.getLogger("mkdocs.plugins.vault-mcp")

INDEX_URI = "vault-mcp/index.sqlite"
MARKER = "mkdocs-vault-mcp"  # named by every file written here, so a later run knows its own files
NOTE = (
    "Each link is the page's text as Markdown{where}; the same text is searchable through this site's MCP "
    f"index ({MARKER})."
)


@dataclass(frozen=True)
class AgentFilesOptions:
    llms_txt: bool
    llms_full_chars: int  # 0: no llms-full.txt
    markdown_copies: bool
    discovery: bool
    hosted_mcp: str | None
    index_published: bool
    nav: Any  # the `nav` of mkdocs.yml as written; None: MkDocs makes it from the files
    site_description: str | None  # mkdocs.yml's; None: what the home page says

    @classmethod
    def of(cls, options: VaultMcpConfig, nav: Any, site_description: str | None) -> AgentFilesOptions:
        return cls(
            llms_txt=options.llms_txt,
            llms_full_chars=options.llms_full_txt,
            markdown_copies=options.markdown_copies,
            discovery=options.discovery,
            hosted_mcp=options.hosted_mcp_url,
            index_published=options.publish_index,
            nav=nav,
            site_description=site_description,
        )


@dataclass
class Written:
    """What write_agent_files wrote, relative to the site folder."""

    llms_txt: list[str]
    llms_full_txt: list[str]
    markdown_copies: int
    discovery: str | None
    left_out: int  # pages that llms-full.txt left out


def page_uri(url: str, site_url: str) -> str:
    """The page's URL relative to the site root, decoded (`guide/donn%C3%A9es/` -> `guide/données/`)."""
    base = site_url.rstrip("/") + "/" if site_url else "/"
    return unquote(url[len(base) :] if url.startswith(base) else url.lstrip("/"))


def copy_uri(uri: str) -> str:
    """Where a page's Markdown copy goes: beside `guide/setup/index.html` or `guide/setup.html`."""
    if uri == "" or uri.endswith("/"):
        return uri + "index.md"
    return uri.removesuffix(".html") + ".md"


def link_to(uri: str, site_url: str, root: str) -> str:
    """A link from `root` (the folder of llms.txt) to the site file `uri`: absolute with a site_url."""
    if site_url:
        return site_url.rstrip("/") + "/" + quote(uri)
    return quote(posixpath.relpath(uri, root or ".") if root else uri)


def read_pages(
    conn: sqlite3.Connection, site_url: str, cache: MarkdownCache | None
) -> dict[str, list[tuple[str, llms_txt.AgentPage]]]:
    """Every document as (its page URI, its AgentPage without its link), by language, in path order; its
    Markdown (converted from the page's HTML, the costly part) only with a `cache`."""
    pages: dict[str, list[tuple[str, llms_txt.AgentPage]]] = {}
    for row in agent_documents(conn):
        markdown = "" if cache is None else cache.markdown(conn, row.document_id, row.fingerprint, row.url)
        page = llms_txt.AgentPage(
            path=row.path,
            title=row.title,
            url=row.url,
            link="",
            description=llms_txt.description(json.loads(row.meta), row.summary),
            modified=rfc3339(row.modified),
            markdown=markdown,
        )
        pages.setdefault(row.language, []).append((page_uri(row.url, site_url), page))
    return pages


def language_root(uris: list[str]) -> str:
    """The folder that holds every page of a language (`fr/`), `` for the one at the site's root."""
    common = posixpath.commonpath(["/" + posixpath.dirname(uri) for uri in uris]) if uris else "/"
    return common.strip("/") + "/" if common.strip("/") else ""


def write_file(site_dir: Path, uri: str, text: str, *, owners_own: bool = False) -> bool:
    """Write `text` at `uri` inside the site, never through a symbolic link (the site folder is untrusted).
    `owners_own`: a file the site's owner may write by hand (`llms.txt`), kept unless an earlier run wrote it."""
    destination = site_dir / uri
    if leads_outside(site_dir.resolve(), destination.parent):
        log.warning(f"vault-mcp: {destination.parent} leads outside the site folder; {uri} not written")
        return False
    if owners_own and not written_by_us(site_dir, destination):
        log.info(f"vault-mcp: the site has its own {uri}; left as it is")
        return False
    destination.parent.mkdir(parents=True, exist_ok=True)
    try:
        handle = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o666)
    except OSError as error:
        if os.path.islink(destination) or os.path.isdir(destination):
            log.warning(f"vault-mcp: {destination} is a symbolic link or a folder; not written")
            return False
        raise error
    with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
        out.write(text)
    return True


def written_by_us(site_dir: Path, destination: Path) -> bool:
    """Whether `destination` is free, or a file that names this package (as everything it writes does)."""
    if not os.path.lexists(destination):
        return True
    try:
        data, _ = read_site_file(site_dir.resolve(), destination, PAGE_BYTES)
    except (Unreadable, OSError):
        return False
    return MARKER.encode() in data


def site_description(site_dir: Path, root: str) -> str:
    """The description the language's home page gives (`<meta name="description">`, which MkDocs themes write
    from `site_description`), so a site built without the plugin says the same."""
    try:
        data, _ = read_site_file(site_dir.resolve(), site_dir / root / "index.html", PAGE_BYTES)
    except (Unreadable, OSError):
        return ""
    finder = _DescriptionFinder()
    finder.feed(data.split(b"</head>", 1)[0].decode("utf-8", errors="replace"))
    text = " ".join((finder.description or "").split())
    return "" if text == "None" else text  # MkDocs' own theme writes the missing site_description so


class _DescriptionFinder(HTMLParser):
    """The content of the first `<meta name="description">` fed (None without one)."""

    def __init__(self) -> None:
        super().__init__()
        self.description: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "meta" and self.description is None and named.get("name") == "description":
            self.description = named.get("content") or ""


def write_agent_files(index: Path, site_dir: Path, options: AgentFilesOptions) -> Written:
    """Write the agent files of the committed `index` into `site_dir`."""
    written = Written([], [], 0, None, 0)
    if not (options.llms_txt or options.llms_full_chars or options.markdown_copies or options.discovery):
        return written
    conn = open_read_only(index)
    try:
        site_name, site_url = site_identity(conn)
        cache = MarkdownCache(index) if options.markdown_copies or options.llms_full_chars else None
        languages = read_pages(conn, site_url, cache)
    finally:
        conn.close()
    if cache is not None:
        cache.save()
    descriptions: dict[str, str] = {}
    for _, pages in sorted(languages.items()):
        root = language_root([uri for uri, _ in pages]) if len(languages) > 1 else ""
        given = options.site_description if not root else None  # mkdocs.yml's is the default language's
        descriptions[root] = (
            " ".join(given.split())
            if given
            else site_description(site_dir, root)
            or next((page.description for uri, page in pages if uri == root), "")  # the home page's own
        )
        linked = []
        for uri, page in pages:
            target = copy_uri(uri) if options.markdown_copies else uri
            linked.append(replace(page, link=link_to(target, site_url, root)))
            if options.markdown_copies and write_file(site_dir, copy_uri(uri), llms_txt.page_document(page)):
                written.markdown_copies += 1
        write_language(site_dir, root, (site_name, descriptions[root]), linked, options, written)
    if options.discovery:
        description = descriptions.get("") or next((text for text in descriptions.values() if text), "")
        written.discovery = write_discovery(site_dir, site_url, site_name, description, options, written.llms_txt)
    return written


def write_language(
    site_dir: Path,
    root: str,
    site: tuple[str, str],
    pages: list[llms_txt.AgentPage],
    options: AgentFilesOptions,
    written: Written,
) -> None:
    language = root.rstrip("/") or None
    groups = llms_txt.grouped(pages, options.nav, language)
    if options.llms_txt:
        where = (
            " (a copy beside each page's HTML: add `index.md` or `.md` to its URL)" if options.markdown_copies else ""
        )
        text = llms_txt.llms_txt(*site, groups, NOTE.format(where=where))
        if write_file(site_dir, f"{root}llms.txt", text, owners_own=True):
            written.llms_txt.append(f"{root}llms.txt")
    if options.llms_full_chars:
        text, left_out = llms_txt.llms_full_txt(*site, groups, options.llms_full_chars)
        if write_file(site_dir, f"{root}llms-full.txt", text, owners_own=True):
            written.llms_full_txt.append(f"{root}llms-full.txt")
            written.left_out += left_out


def write_discovery(
    site_dir: Path, site_url: str, site_name: str, description: str, options: AgentFilesOptions, llms: list[str]
) -> str | None:
    """The AI Catalog with the site's Server Card; it needs the site's absolute URL (`site_url`)."""
    if not site_url:
        log.debug("vault-mcp: no discovery file written: it needs the site's address (site_url in mkdocs.yml)")
        return None
    index_uri = INDEX_URI if options.index_published else None
    if index_uri is None and not options.hosted_mcp:
        return None  # nothing to discover
    card = server_card.server_card(
        site_url, site_name, description, options.hosted_mcp, index_uri, FORMAT_VERSION, llms
    )
    text = json.dumps(server_card.ai_catalog(site_url, card), ensure_ascii=False, indent=2) + "\n"
    return server_card.CATALOG_URI if write_file(site_dir, server_card.CATALOG_URI, text, owners_own=True) else None


def wants_markdown(options: VaultMcpConfig, serving: bool) -> bool:
    """Whether after_build will write every page's Markdown (its copies, llms-full.txt), which the writer then
    converts after its commit (agent_pages.keep_markdown_copies)."""
    return not serving and bool(options.markdown_copies or options.llms_full_txt)


def after_build(index: Path, config: Any, options: VaultMcpConfig, serving: bool) -> None:
    """write_agent_files after the plugin's build (MkDocs' `config`); not under `mkdocs serve`, whose preview is
    thrown away and rebuilt at every save."""
    if not serving:
        write_agent_files(
            index, Path(config.site_dir), AgentFilesOptions.of(options, config.nav, config.site_description)
        )


def into_built_site(index: Path, site_dir: Path, options: VaultMcpConfig, config: SiteConfig) -> Written:
    """write_agent_files for `index SITE_DIR`: a failed write is one SiteError naming the folder."""
    try:
        return write_agent_files(index, site_dir, AgentFilesOptions.of(options, config.nav, config.site_description))
    except OSError as error:
        raise SiteError(
            f"could not write {error.filename or site_dir} ({error.strerror or error}); "
            "SITE_DIR must be writable, on a disk with room"
        ) from None
