"""The pages of a built site: the `<loc>`s of its `sitemap.xml` (with their `<lastmod>`), each resolved to
its file inside the site folder, else every HTML file but `404.html` and the index's own folder."""

from __future__ import annotations

import datetime as dt
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit
from xml.etree import ElementTree

from ..page.paths import file_path_of_url
from .site_folder import SITEMAP_BYTES, SiteError, Unreadable, is_text, read_site_file

log = logging.getLogger("mkdocs.plugins.vault-mcp")


@dataclass
class SitePage:
    url: str  # site-relative, as the site writes it (percent-encoded), "" for the home page
    file: Path  # inside the site folder, as the site names it (not resolved)
    lastmod: dt.datetime | None = None
    loc: str | None = None  # the address the sitemap gives it
    mtime_ns: int = 0  # the file's, once read


def site_pages(site_dir: Path, site_url: str | None) -> list[SitePage]:
    sitemap = site_dir / "sitemap.xml"
    if os.path.lexists(sitemap):
        pages = sitemap_pages(sitemap, site_dir, site_url)
        if pages:
            return pages
    pages = []
    for file in sorted(site_dir.rglob("*.html")):
        relative = file.relative_to(site_dir).as_posix()
        if relative == "404.html" or relative.startswith("vault-mcp/"):
            continue
        if not is_text(relative):
            shown = relative.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            log.warning(
                f"vault-mcp: the name of '{shown}' is not "
                "UTF-8 text, which a page's address must be; not indexed (rename the file)"
            )
            continue
        url = quote(relative.removesuffix("index.html") if relative.endswith("index.html") else relative)
        pages.append(SitePage(url, file))
    return pages


def sitemap_pages(sitemap: Path, site_dir: Path, site_url: str | None) -> list[SitePage]:
    try:
        data, _ = read_site_file(site_dir.resolve(), sitemap, SITEMAP_BYTES)
        root = ElementTree.fromstring(data)
    except Unreadable as reason:
        log.warning(f"vault-mcp: {sitemap} {reason}; the site's HTML files are indexed instead")
        return []
    except ElementTree.ParseError as error:
        raise SiteError(f"{str(sitemap)!r} is not a readable sitemap ({error})") from None
    entries = []
    for url in root.iter():
        if url.tag.rpartition("}")[2] != "url":
            continue
        texts = {child.tag.rpartition("}")[2]: (child.text or "").strip() for child in url}
        if texts.get("loc"):
            entries.append((texts["loc"], texts.get("lastmod")))
    paths = [_url_path(loc) for loc, _ in entries]
    # Without site_url, the pages' common prefix, character by character (RUF071), cut back to its last "/".
    urls = [path for path in paths if path is not None]
    base = (_url_path(site_url) or "/") if site_url else os.path.commonprefix(urls).rpartition("/")[0] + "/"  # noqa: RUF071
    if not base.endswith("/"):
        base += "/"
    # The common prefix of a site whose pages are all in one folder is too long: shorten it until pages resolve.
    while base != "/" and not all(_page_file(site_dir, p[len(base) :]) for p in urls[:3] if p.startswith(base)):
        base = base.rstrip("/").rpartition("/")[0] + "/"
    if len(entries) > 1 and len({lastmod for _, lastmod in entries}) == 1:
        # MkDocs and ProperDocs write the build date into every entry: that says nothing about any page.
        entries = [(loc, None) for loc, _ in entries]
    pages = []
    files: dict[str, str] = {}  # each page's file -> the location listed first for it
    for (loc, lastmod), path in zip(entries, paths, strict=True):
        if path is None:
            log.warning(f"vault-mcp: the sitemap lists {loc!r}, which is not a URL; skipped")
            continue
        relative = path[len(base) :] if path.startswith(base) else path[1:]
        file = _page_file(site_dir, relative)
        if file is None:
            where = "which is not in" if file_path_of_url(relative) is not None else "whose path leads outside"
            log.warning(f"vault-mcp: the sitemap lists {loc}, {where} {site_dir}; skipped")
            continue
        named = os.path.normpath(file)
        if named in files:
            log.warning(f"vault-mcp: the sitemap lists {loc} and {files[named]}, which are the same page; indexed once")
            continue
        files[named] = loc
        pages.append(SitePage(relative, file, _lastmod(lastmod), loc))
    return pages


def _url_path(loc: str) -> str | None:
    """The path of a sitemap location (`/guide/`), or None when it is no URL at all (`http://[x/`)."""
    try:
        return urlsplit(loc).path or "/"
    except ValueError:
        return None


def _page_file(site_dir: Path, relative_url: str) -> Path | None:
    """The file inside `site_dir` that a site-relative URL names (`guide/` its `index.html`), when there is one;
    None when there is none or the URL leads outside (`../`, `%2e%2e/`, `//etc/passwd`). The file is only named
    here: read_site_file checks what it is."""
    relative = file_path_of_url(relative_url)
    if relative is None:
        return None
    candidate = site_dir / relative
    if not relative or relative.endswith("/") or (os.path.isdir(candidate) and not os.path.islink(candidate)):
        candidate = candidate / "index.html"
    return candidate if os.path.lexists(candidate) else None


def _lastmod(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    try:
        instant = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return instant.replace(tzinfo=dt.UTC) if instant.tzinfo is None else instant.astimezone(dt.UTC)
