"""The Markdown sources of a built site (`--docs-dir`), and which page each one is: by MkDocs' URL rules, or,
for pages a plugin moved (Material's blog posts), by the source's `slug` as written, or the slug of its title or
first heading. Without sources, a page's path is made from its URL (`path_from_url`)."""

from __future__ import annotations

import logging
import posixpath
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import yaml
from markdown.extensions.toc import slugify

from ..page.documents import FRONT_MATTER
from ..page.front_matter import yaml_problem
from .site_folder import PAGE_BYTES, Unreadable, is_text, read_site_file
from .sitemap import SitePage

log = logging.getLogger("mkdocs.plugins.vault-mcp")


@dataclass
class Source:
    path: str  # relative to docs_dir, POSIX
    file: Path
    text: str  # as MkDocs reads it (UTF-8, BOM dropped, newlines made \n)
    meta: dict[str, Any]
    problem: str | None  # the YAML error of front matter that is not valid


def read_sources(docs_dir: Path) -> dict[str, Source]:
    import frontmatter
    from frontmatter.default_handlers import YAMLHandler

    sources: dict[str, Source] = {}
    root = docs_dir.resolve()
    for file in sorted(docs_dir.rglob("*.md")):
        path = file.relative_to(docs_dir).as_posix()
        if any(part.startswith(".") for part in path.split("/")) or path.startswith("templates/"):
            continue  # MkDocs' own exclusions
        if not is_text(path):
            continue  # no page's address names it
        try:
            text = read_site_file(root, file, PAGE_BYTES, "the docs folder")[0].decode("utf-8-sig")
        except Unreadable as reason:
            log.warning(f"vault-mcp: {path} in {docs_dir} {reason}; not read")
            continue
        except UnicodeDecodeError:
            continue
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        meta: dict[str, Any] = {}
        problem = None
        if FRONT_MATTER.match(text):  # MkDocs' own test for a front matter block, before python-frontmatter reads it
            try:
                loaded = frontmatter.loads(text, handler=YAMLHandler()).metadata
                meta = dict(loaded) if isinstance(loaded, dict) else {}
            except Exception as error:  # python-frontmatter raises what the YAML loader raises
                problem = _front_matter_problem(text, error)
        sources[path] = Source(path, file, text, meta, problem)
    return sources


def _front_matter_problem(text: str, error: Exception) -> str:
    """The YAML problem with its line in the file, as the plugin reports it (python-frontmatter's block starts
    with the newline after `---`, one line early)."""
    block = FRONT_MATTER.match(text)
    if block is not None:
        try:
            yaml.load(block.group(1), getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError as exact:
            return yaml_problem(exact)
    return yaml_problem(error) if isinstance(error, yaml.YAMLError) else " ".join(str(error).split())


def source_url(path: str, directory_urls: bool) -> str:
    """The site-relative URL MkDocs gives a Markdown file (unquoted)."""
    stem, _ = posixpath.splitext(path)
    folder, name = posixpath.split(stem)
    if name in ("index", "README"):
        return f"{folder}/" if folder else ""
    if directory_urls:
        return f"{stem}/"
    return f"{stem}.html"


def slug(text: str) -> str:
    """Python-Markdown's toc slugify, which MkDocs' anchors and many plugins name pages with."""
    return slugify(text, "-")


_TAGS = re.compile(r"</?[^<>]*>")
_NOT_IN_SLUG = re.compile(r"[^\w\- ]")


def blog_slug(text: str) -> str:
    """The slug Material's blog names a post's URL with by default (pymdownx.slugs.slugify(case="lower")),
    which keeps letters of every script where toc's slugify keeps ASCII only."""
    text = _TAGS.sub("", unicodedata.normalize("NFC", text)).strip().lower()
    return _NOT_IN_SLUG.sub("", text).replace(" ", "-")


def first_heading(text: str) -> str | None:
    match = re.search(r"^#\s+(.+?)\s*#*\s*$", text, re.M)
    return re.sub(r"\s*\{[^}]*\}$", "", match.group(1)) if match else None


def match_sources(pages: list[SitePage], sources: dict[str, Source], directory_urls: bool) -> dict[str, str]:
    """page URL -> source path, by MkDocs' URL rules, then (pages a plugin moved, such as blog posts) by the last
    URL segment being the source's `slug` as written, or the slug of its title or first heading."""
    by_url: dict[str, str] = {}
    for path in sources:
        url = _url_key(source_url(path, directory_urls))
        if path.endswith("README.md") and url in by_url:
            continue  # index.md wins over README.md
        by_url[url] = path
    matched = {page.url: by_url[_url_key(page.url)] for page in pages if _url_key(page.url) in by_url}
    matched_paths = set(matched.values())
    # slug -> the unmatched sources it names: one look-up a page, not a pass over the sources (quadratic)
    by_slug: dict[str, set[str]] = {}
    slugs: dict[str, set[str]] = {}
    for path, source in sources.items():
        if path not in matched_paths:
            titles = (str(source.meta.get("title") or ""), first_heading(source.text) or "")
            slugs[path] = {
                # An explicit slug names the URL as written (Material's blog: `slug: mkdocs-2.0`), never slugified.
                str(source.meta.get("slug") or "").strip("/"),
                *(slug(title) for title in titles),
                *(blog_slug(title) for title in titles),
            }
            for name in slugs[path]:
                by_slug.setdefault(name, set()).add(path)
    for page in pages:
        if page.url in matched:
            continue
        last = unquote(page.url).rstrip("/").rpartition("/")[2].removesuffix(".html")
        candidates = by_slug.get(last, set()) if last else set()
        if len(candidates) == 1:
            (path,) = candidates
            matched[page.url] = path
            for name in slugs[path]:
                by_slug[name].discard(path)
    return matched


def _url_key(url: str) -> str:
    """A page URL as matching compares it: unquoted, `x/index.html` (a site without directory URLs) as `x/`."""
    return unquote(url).removesuffix("index.html")


def path_from_url(url: str, folders: set[str]) -> str:
    """A page's path when there are no sources: `guide/install/` -> `guide/install.md`, a folder that holds
    other pages (`page_folders`; or the root) -> `index.md` in it."""
    url = unquote(url)
    if url.endswith(".html"):
        return url.removesuffix(".html") + ".md"
    if not url:
        return "index.md"
    folder = url if url.endswith("/") else url + "/"
    if folder in folders:
        return folder + "index.md"
    return url.rstrip("/") + ".md"


def page_folders(urls: Iterable[str]) -> set[str]:
    """Every folder (`guide/`, unquoted) that holds a page other than its own, from the pages' URLs: a set, so
    that each page's path is one look-up rather than a pass over every page (quadratic in a site's pages)."""
    folders: set[str] = set()
    for url in urls:
        path = unquote(url)
        cut = path.rfind("/", 0, len(path) - 1)
        while cut >= 0 and path[: cut + 1] not in folders:  # a folder in the set has its own folders in it
            folders.add(path[: cut + 1])
            cut = path.rfind("/", 0, cut)
    return folders
