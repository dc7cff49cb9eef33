"""`mkdocs-vault-mcp index SITE_DIR`: the index of a site that is already built, whatever built it.

For sites that no MkDocs plugin can see being built: Zensical (which reads mkdocs.yml but runs no MkDocs
plugin), a site built by MkDocs or ProperDocs without the plugin, a deployed copy. Each page's content is
found in the theme's page, the theme's own bits inside it are taken out, and what is left goes through the
same `build_document`, `IndexWriter`, `publish` and snapshot as the plugin's pages, so both make the same
index of the same rendered content.

- Pages: the `<loc>`s of `sitemap.xml` when the site has one, else every HTML file (less `404.html`).
- Content: the first of CONTENT_ELEMENTS that the page holds (Material and Zensical, MkDocs' own `mkdocs` and
  `readthedocs` themes). A page without one is skipped and named; a site with none at all is an error.
- Path (the document's identity): with the sources (`--docs-dir`), the Markdown file whose URL the page has
  (MkDocs' rules), or, for pages a plugin moved (Material's blog posts), the one whose slug or title gives the
  page's last URL segment; pages without a source are generated and left out unless `include_generated`.
  Without the sources, the path is made from the URL (`guide/install/` -> `guide/install.md`, a folder that
  holds other pages -> `index.md`).
- Title: the `nav` title of mkdocs.yml, else the page's `<title>` less ` - site_name`, else (home page) front
  matter `title`, the H1 the theme wrote, the first H1, `Home`.
- Front matter and source text from the Markdown file (python-frontmatter, as MkDocs reads it); modification
  times from git or the file, as the plugin takes them (build_steps/modified.py). Without the sources: empty meta, and the
  time from the sitemap's `<lastmod>`, else the time the HTML file was first written with its current content.

This module is the run (`index_site`) and what it works out for each page; the parts it runs are their own
modules: `built_site_config` (mkdocs.yml), `sitemap` (which pages), `site_folder` (reading the site's files),
`built_pages` (a page's content and title), `built_sources` (the Markdown sources), `built_site_output` (what is
written into the site).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..config import INDEXING_OPTIONS, VaultMcpConfig
from ..index.write.summary_request import SummaryRequest
from ..index.write.working_index import CommitSettings
from ..index.write.writer import IndexWriter, worth_a_process
from ..limits import TEXT_CHARS
from ..page.fingerprints import page_fingerprint
from ..page.front_matter import search_excluded
from ..page.model import RenderedPage
from ..page.paths import excluded_by, join_url, relative_location, server_path
from .agent_files import into_built_site
from .built_pages import (
    LOOKED_FOR,
    STATS_MARKER,
    content_element,
    guess_site_name,
    page_language,
    page_title,
    page_title_text,
    requoted,
    without_theme_parts,
)
from .built_site_config import SiteConfig, nav_pages, read_config
from .built_site_output import GENERATOR, publish_into_site
from .built_sources import Source, match_sources, page_folders, path_from_url, read_sources
from .mkdocs_pages import site_base_path
from .modified import GitTimes, modified_instant, read_git_times
from .site_folder import PAGE_BYTES, SiteError, Unreadable, is_text, read_site_file
from .sitemap import SitePage, site_pages

log = logging.getLogger("mkdocs.plugins.vault-mcp")


@dataclass
class IndexRun:
    """What one run of `index SITE_DIR` did, for the command's summary line."""

    documents: int
    sections: int
    changed: int
    unchanged: int
    removed: int
    seconds: float
    index: Path
    skipped: list[str]  # site files with no recognised content element
    stats_page: Path | None


@dataclass
class PageRead:
    """One page of the site as read: its HTML, its content without the theme's parts, the H1 the theme wrote."""

    page: SitePage
    html: str
    content: str
    theme_title: str | None


@dataclass
class BuiltSite:
    """The site being indexed: its pages as read, its configuration and sources, and what is worked out once
    from them for every page."""

    site_dir: Path
    docs_dir: Path | None
    config: SiteConfig
    pages: dict[str, PageRead]  # by URL
    site_name: str
    titles: dict[str, str]  # each page's `<title>`, by URL
    sources: dict[str, Source]  # by path; none without --docs-dir
    matched: dict[str, str]  # page URL -> source path
    git: GitTimes | None
    folders: set[str]  # page_folders
    base_path: str  # the site's path on its server

    @property
    def options(self) -> VaultMcpConfig:
        return self.config.options


def index_site(
    site_dir: Path, *, docs_dir: Path | None = None, config_file: Path | None = None, cache_dir: Path | None = None
) -> IndexRun:
    """Index the built site in `site_dir` into its `vault-mcp/` folder, through the working index in `cache_dir`."""
    started = time.perf_counter()
    check_site_dir(site_dir)
    config = read_config(config_file) if config_file is not None else SiteConfig()
    docs_dir = sources_folder(docs_dir, config)
    listed = site_pages(site_dir, config.site_url)
    pages, skipped = read_pages(site_dir, listed)
    site = read_site(site_dir, docs_dir, config, pages)
    cache_dir = working_index_folder(site_dir, config, cache_dir)
    options_json = indexing_options_json(config.options, docs_dir, site_dir, cache_dir)
    writer = IndexWriter(cache_dir / "site.sqlite", options_json, in_process=worth_a_process(len(pages)))
    try:
        kept, changed, page_paths = index_pages(writer, site)
        removed = writer.keep_only(kept)
        summary = writer.commit(
            CommitSettings(
                indexed_fields=site.options.indexed_fields,
                site_name=site.site_name,
                site_url=config.site_url,
                site_files=site_files(site_dir, site.base_path, page_paths),
                nav=nav_pages(config, set(site.sources) if docs_dir is not None else set(page_paths.values())),
                version_base=site.base_path if config.versioned else None,
                # read by the writer from the committed index, as the plugin's build has it read
                summary=SummaryRequest(site.options.tag_fields, None, True),
            )
        )
        assert summary is not None  # asked for: the commit reads it or raises
        published = publish_into_site(writer.path, site_dir, summary, site.options.stats_page, site.site_name)
        into_built_site(writer.path, site_dir, site.options, config)  # llms.txt, Markdown copies, discovery
    finally:
        writer.close()
    return IndexRun(
        documents=published.stats["document_count"],
        sections=published.stats["section_count"],
        changed=changed,
        unchanged=len(kept) - changed,
        removed=removed,
        seconds=time.perf_counter() - started,
        index=published.index,
        skipped=skipped,
        stats_page=published.stats_page,
    )


# -- before indexing -------------------------------------------------------------------------------------


def check_site_dir(site_dir: Path) -> None:
    """SiteError unless `site_dir` is a folder."""
    if not site_dir.is_dir():
        problem = "does not exist" if not site_dir.exists() else "is not a folder"
        raise SiteError(f"{str(site_dir)!r} {problem}; give the folder of a built site (such as site/)")


def sources_folder(docs_dir: Path | None, config: SiteConfig) -> Path | None:
    """`--docs-dir`, else mkdocs.yml's `docs_dir` when that folder exists, else None (no sources)."""
    if docs_dir is None and config.docs_dir is not None and config.docs_dir.is_dir():
        docs_dir = config.docs_dir
    if docs_dir is not None and not docs_dir.is_dir():
        raise SiteError(f"--docs-dir {str(docs_dir)!r} is not a folder; give the folder of the site's Markdown sources")
    return docs_dir


def read_pages(site_dir: Path, listed: list[SitePage]) -> tuple[dict[str, PageRead], list[str]]:
    """Each page that has content, by URL, and the site files that have no content element."""
    pages: dict[str, PageRead] = {}
    skipped: list[str] = []
    root = site_dir.resolve()
    for page in listed:
        try:
            data, status = read_site_file(root, page.file, PAGE_BYTES)
        except Unreadable as reason:
            log.warning(f"vault-mcp: {page.file.relative_to(site_dir).as_posix()} {reason}; not indexed")
            continue
        page.mtime_ns = status.st_mtime_ns
        page_html = data.decode("utf-8", errors="replace")
        if GENERATOR in page_html:
            continue  # the stats page an earlier run wrote
        content = content_element(page_html)
        if content is None:
            skipped.append(str(page.file.relative_to(site_dir)))
            continue
        content = requoted(content)
        if STATS_MARKER in content:
            continue
        content, theme_title = without_theme_parts(content)
        pages[page.url] = PageRead(page, page_html, content, theme_title)
    if not pages:
        what = f"{len(listed)} pages" if listed else "no HTML page"
        raise SiteError(
            f"{str(site_dir)!r} holds {what} and none has a content element this command knows; it looked for "
            f"{LOOKED_FOR}. Build the site with one of those themes, or with MkDocs and the vault-mcp plugin."
        )
    return pages, skipped


def read_site(site_dir: Path, docs_dir: Path | None, config: SiteConfig, pages: dict[str, PageRead]) -> BuiltSite:
    """The site's name (mkdocs.yml's, else the one most page titles end with, else the folder's), its sources
    and which page each is, and the git history of its docs folder."""
    titles = {url: page_title_text(read.html) or "" for url, read in pages.items()}
    site_name = config.site_name
    if site_name is None:
        site_name = guess_site_name(list(titles.values())) or site_dir.resolve().name
    sources = read_sources(docs_dir) if docs_dir is not None else {}
    matched = (
        match_sources([read.page for read in pages.values()], sources, config.use_directory_urls)
        if docs_dir is not None
        else {}
    )
    git = read_git_times(str(docs_dir)) if docs_dir is not None and config.options.modified != "mtime" else None
    return BuiltSite(
        site_dir,
        docs_dir,
        config,
        pages,
        site_name,
        titles,
        sources,
        matched,
        git,
        page_folders(pages),
        site_base_path(config.site_url),
    )


def working_index_folder(site_dir: Path, config: SiteConfig, cache_dir: Path | None) -> Path:
    """`--cache-dir`, else the plugin option `cache_dir` beside mkdocs.yml (or the site folder); never inside
    the site."""
    if cache_dir is None:
        base = config.base or site_dir.resolve().parent
        cache_dir = base / config.options.cache_dir
    if cache_dir.resolve().is_relative_to(site_dir.resolve()):
        raise SiteError(f"the working index would be inside the site ({cache_dir}); give --cache-dir outside it")
    return cache_dir


def indexing_options_json(options: VaultMcpConfig, docs_dir: Path | None, site_dir: Path, cache_dir: Path) -> str:
    """What the index was made with: when it changes, every page is indexed again."""
    return json.dumps(
        {key: options[key] for key in INDEXING_OPTIONS}
        | {
            "command": "index",
            # Relative to the working index's folder: the index is published, with no absolute path of this machine.
            "docs_dir": relative_location(docs_dir, cache_dir) if docs_dir else None,
            "site_dir": relative_location(site_dir, cache_dir),
            # links resolved against each page's own address: an index whose links were not is made anew
            "links": "page address",
        },
        sort_keys=True,
    )


# -- indexing --------------------------------------------------------------------------------------------


def index_pages(writer: IndexWriter, site: BuiltSite) -> tuple[set[str], int, dict[str, str]]:
    """Put every page that changed; the paths of the pages indexed, how many changed, and every page's path by
    its URL (what the site's files name it by)."""
    kept: set[str] = set()
    changed = 0
    page_paths: dict[str, str] = {}
    for url, read in site.pages.items():
        source = site.sources.get(site.matched.get(url, ""))
        path = source.path if source is not None else path_from_url(url, site.folders)
        page_paths[url] = path
        if not indexed_path(site, path, source, kept, read.page.loc or url):
            continue
        page = rendered_page(site, url, read, source, path)
        if page is None:
            continue
        kept.add(path)
        if writer.fingerprints.get(path) == page.fingerprint:
            continue
        changed += 1
        writer.put(page, site.options.indexed_fields)
    return kept, changed, page_paths


def indexed_path(site: BuiltSite, path: str, source: Source | None, kept: set[str], address: str) -> bool:
    """Whether the page at `path` may be a document: not generated (unless `include_generated`), a path a tool
    can be given, not a page indexed already, not excluded."""
    if site.docs_dir is not None and source is None and not site.options.include_generated:
        return False  # no Markdown file: a page a plugin generated (blog archive, category, tags index)
    if len(path) > TEXT_CHARS:
        log.warning(
            f"vault-mcp: the page {path[:60]}… has a path of {len(path):,} characters, which no tool "
            f"can be given (the limit is {TEXT_CHARS:,}); not indexed"
        )
        return False
    if path in kept:
        log.warning(f"vault-mcp: {address} is the page {path} again; indexed once")
        return False
    return not excluded_by(path, site.options.exclude)


def rendered_page(site: BuiltSite, url: str, read: PageRead, source: Source | None, path: str) -> RenderedPage | None:
    """The page model of one page, as the plugin would make it; None when its front matter asks search to leave
    it out."""
    meta = source.meta if source is not None else {}
    if source is not None and source.problem is not None:
        log.warning(
            f"vault-mcp: Front matter of '{path}' is not valid YAML ({source.problem}); the page is indexed without it"
        )
    if site.options.respect_search_exclude and search_excluded(meta):
        return None
    config = site.config
    title = (config.nav_titles.get(path) if source is not None else None) or page_title(
        site.titles[url], site.site_name, url, meta, read.theme_title, read.content
    )
    document_url = join_url(config.site_url, url) if config.site_url else (read.page.loc or join_url(None, url))
    markdown = source.text if source is not None else ""
    language = page_language(read.html, config.language)
    modified, modified_source, fingerprinted = page_modified(site, path, source, read.page, meta)
    digest = page_fingerprint(
        read.content, title, document_url, meta, fingerprinted, modified_source, markdown, language
    )
    history = site.git.history.get(path, []) if site.git is not None and source is not None else []
    return RenderedPage(
        path=path,
        url=document_url,
        title=title,
        html=read.content,
        meta=meta,
        markdown=markdown,
        modified=modified,
        modified_source=modified_source,
        fingerprint=digest,
        language=language,
        page_path=site.base_path + url,
        site_url=config.site_url,
        history=history,
    )


def page_modified(
    site: BuiltSite, path: str, source: Source | None, page: SitePage, meta: dict[str, Any]
) -> tuple[dt.datetime, str, dt.datetime | None]:
    """The page's modification time, where it comes from, and the time its fingerprint holds: from the source
    as the plugin takes it, else the sitemap's `<lastmod>`, else the HTML file's time."""
    if source is not None:
        modified, modified_source = modified_instant(
            path, str(source.file), site.options.modified, site.git, meta, site.options.modified_meta
        )
        return modified, modified_source, modified
    if page.lastmod is not None:
        return page.lastmod, "sitemap", page.lastmod
    # The HTML file's time changes with every build: the page keeps the time it was first indexed with its
    # current content, so the time is left out of the fingerprint.
    return dt.datetime.fromtimestamp(page.mtime_ns / 1e9, dt.UTC), "mtime", None


# -- links ----------------------------------------------------------------------------------------------


def site_files(site_dir: Path, base_path: str, page_paths: dict[str, str]) -> dict[str, str]:
    """Every file of the built site by its server path (paths.server_path), as the plugin has the site's files
    for links to resolve against: a page by its document's path, any other file by its path in the site (a
    static file's path in docs_dir)."""
    files: dict[str, str] = {}
    for file in site_dir.rglob("*"):
        relative = file.relative_to(site_dir).as_posix()
        if is_text(relative) and not relative.startswith("vault-mcp/") and file.is_file():
            files[server_path(base_path + quote(relative))] = relative
    for url, path in page_paths.items():
        files[server_path(base_path + url)] = path
    return files
