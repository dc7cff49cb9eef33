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
  times from git or the file, as the plugin takes them (modified.py). Without the sources: empty meta, and the
  time from the sitemap's `<lastmod>`, else the time the HTML file was first written with its current content.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import html
import json
import logging
import os
import posixpath
import re
import shutil
import stat
import time
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote, unquote, urlsplit
from xml.etree import ElementTree

import yaml

from .documents import FRONT_MATTER, page_content, split_sections, visible_text
from .fingerprints import page_fingerprint
from .front_matter import search_excluded, yaml_problem
from .index import queries
from .index.build_summary import build_snapshot
from .index.publish import open_read_only, publish
from .index.writer import IndexWriter, worth_a_process
from .limits import TEXT_CHARS
from .modified import modified_instant, read_git_times
from .page import RenderedPage
from .page_facts import site_base_path, uses_mike
from .paths import excluded_by, file_path_of_url, join_url, relative_location, server_path
from .snapshot import write_snapshot

log = logging.getLogger("mkdocs.plugins.vault-mcp")


class SiteError(Exception):
    """A site or command line that cannot be indexed; the message says what to give instead."""


# The element that holds page.content, per theme: (what it is, its start tag, its tag name). Checked in order.
# Every expression that scans a page stops at the next `<` (`[^<>]`, never `[^>]`), or ends at the end of the
# text when what it looks for is never closed: else each `<` of a page without `>` is scanned to the end again,
# quadratic time in the page's size.
CONTENT_ELEMENTS = (
    ('Material for MkDocs or Zensical: <article class="md-content__inner md-typeset">',
     re.compile(r'<article\b[^<>]*\bclass="md-content__inner md-typeset"[^<>]*>'), "article"),
    ('a Material or Zensical blog index: <header class="md-typeset">',
     re.compile(r'<div class="md-content__inner">\s*<header\b[^<>]*\bclass="md-typeset"[^<>]*>'), "header"),
    ('the readthedocs theme: <div class="section" itemprop="articleBody">',
     re.compile(r'<div\b[^<>]*\bitemprop="articleBody"[^<>]*>'), "div"),
    ('the mkdocs theme: <div role="main">', re.compile(r'<div\b[^<>]*\brole="main"[^<>]*>'), "div"),
)
LOOKED_FOR = "; ".join(name for name, _, _ in CONTENT_ELEMENTS)

# What themes write inside the content element around page.content, taken out at its start or end:
# Material's tags (Zensical's come after the content), edit/view/copy buttons, source-file facts,
# feedback form; the mkdocs theme's `source` labels.
_THEME_PARTS = re.compile(
    r'<(nav)\b[^<>]*\bclass="md-tags"[^<>]*>|<(a|button)\b[^<>]*\bclass="md-content__button[^"]*"[^<>]*>'
    r'|<(aside)\b[^<>]*\bclass="md-source-file"[^<>]*>|<(form)\b[^<>]*\bclass="md-feedback"[^<>]*>'
    r'|<(div)\b[^<>]*\bclass="source-links"[^<>]*>'
)
# A comment or raw text never closed runs to the end of the page, as a browser reads it.
_COMMENT_OR_RAW = re.compile(r"<!--.*?(?:-->|\Z)|<(script|style|textarea)\b.*?(?:</\1\s*>|\Z)", re.S | re.I)
_BARE_H1 = re.compile(r"<h1>(.*?)</h1>", re.S)
_TITLE = re.compile(r"<title>(.*?)(?:</title>|\Z)", re.S | re.I)
_LANG = re.compile(r"""<html\b[^>]*\blang\s*=\s*["']([^"']+)["']""", re.I)
STATS_MARKER = 'class="vm-stats"'  # the stats page is the index's own, never a document
GENERATOR = '<meta name="generator" content="mkdocs-vault-mcp index">'


@dataclass
class Options:
    """The plugin's options that indexing uses, as mkdocs.yml gives them (validated by the plugin's schema)."""

    indexed_fields: str | list[str] = "auto"
    tag_fields: list[str] = field(default_factory=lambda: ["tags", "categories"])
    modified: str = "auto"
    modified_meta: str | None = None
    exclude: list[str] = field(default_factory=list)
    respect_search_exclude: bool = True
    include_generated: bool = False
    cache_dir: str = ".cache/plugin/vault-mcp"
    publish_index: bool = True
    stats_page: str | bool = "stats/"


@dataclass
class SiteConfig:
    """What mkdocs.yml says that indexing needs (all optional)."""

    site_name: str | None = None
    site_url: str | None = None
    docs_dir: Path | None = None
    use_directory_urls: bool = True
    language: str = "en"  # the theme's, as the plugin takes a single-language site's (plugin.theme_language)
    nav_titles: dict[str, str] = field(default_factory=dict)  # path -> the title `nav` gives it
    options: Options = field(default_factory=Options)
    base: Path | None = None  # the folder of mkdocs.yml
    nav: Any = None  # the `nav` as written; None: MkDocs lists every page but those `not_in_nav` names
    not_in_nav: str | None = None
    versioned: bool = False  # mike publishes the site's versions side by side (page_facts.uses_mike)


@dataclass
class SitePage:
    url: str  # site-relative, as the site writes it (percent-encoded), "" for the home page
    file: Path  # inside the site folder, as the site names it (not resolved)
    lastmod: dt.datetime | None = None
    loc: str | None = None  # the address the sitemap gives it
    mtime_ns: int = 0  # the file's, once read


@dataclass
class Outcome:
    documents: int
    sections: int
    changed: int
    unchanged: int
    removed: int
    seconds: float
    index: Path
    skipped: list[str]  # site files with no recognised content element
    stats_page: Path | None


# -- mkdocs.yml --------------------------------------------------------------------------------------------


class _ConfigLoader(yaml.SafeLoader):
    """YAML with MkDocs' tags: `!ENV` read from the environment, every other tag (`!relative`,
    `!!python/name:...`) taken as its plain value."""


def _env_tag(loader: yaml.SafeLoader, node: yaml.ScalarNode | yaml.SequenceNode) -> Any:
    """`!ENV NAME` or `!ENV [NAME, ..., DEFAULT]` (anything else is a ConstructorError from construct_sequence)."""
    names = [loader.construct_scalar(node)] if isinstance(node, yaml.ScalarNode) else loader.construct_sequence(node)
    default = names.pop() if len(names) > 1 else None
    return next((os.environ[name] for name in names if name in os.environ), default)


def _any_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.ScalarNode | yaml.SequenceNode | yaml.MappingNode) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_mapping(node, deep=True)


_ConfigLoader.add_constructor("!ENV", _env_tag)
_ConfigLoader.add_multi_constructor("", _any_tag)


def read_config(config_file: Path) -> SiteConfig:
    try:
        raw = yaml.load(config_file.read_text(encoding="utf-8-sig"), _ConfigLoader)
    except OSError as error:
        raise SiteError(f"cannot read {str(config_file)!r} ({error.strerror or error})") from None
    except yaml.YAMLError as error:
        raise SiteError(f"{str(config_file)!r} is not valid YAML ({' '.join(str(error).split())})") from None
    if not isinstance(raw, dict):
        raise SiteError(f"{str(config_file)!r} is not an MkDocs configuration (no keys at its top level)")
    base = config_file.resolve().parent
    docs = raw.get("docs_dir") or "docs"
    plugin_options: dict = {}
    for entry in raw.get("plugins") or []:
        if entry == "vault-mcp":
            plugin_options = {}
        elif isinstance(entry, dict) and "vault-mcp" in entry:
            plugin_options = entry["vault-mcp"] or {}
    if isinstance(raw.get("plugins"), dict):  # the mapping form of `plugins:`
        plugin_options = raw["plugins"].get("vault-mcp") or {}
    return SiteConfig(
        site_name=str(raw["site_name"]) if raw.get("site_name") is not None else None,
        site_url=raw.get("site_url") or None,
        docs_dir=base / str(docs),
        use_directory_urls=raw.get("use_directory_urls", True) is not False,
        language=theme_language(raw.get("theme")),
        nav_titles=nav_titles(raw.get("nav")),
        options=validated_options(plugin_options, config_file),
        base=base,
        nav=raw.get("nav"),
        not_in_nav=raw["not_in_nav"] if isinstance(raw.get("not_in_nav"), str) else None,
        versioned=uses_mike(raw.get("extra"), raw.get("plugins")),
    )


def theme_language(theme: Any) -> str:
    """Material's `theme.language`, MkDocs' `theme.locale`, else `en` (as plugin.theme_language)."""
    if isinstance(theme, dict):
        language = theme.get("language") or theme.get("locale")
        if language:
            return str(language)
    return "en"


def validated_options(given: dict, config_file: Path) -> Options:
    """The plugin's options through the plugin's own schema, so a wrong value reads as it does in a build."""
    from .config import VaultMcpConfig

    schema = VaultMcpConfig()
    schema.load_dict(dict(given))
    errors, _ = schema.validate()
    if errors:
        name, error = errors[0]
        raise SiteError(f"{str(config_file)!r}: plugin 'vault-mcp' option {name!r}: {error}")
    return Options(**{key: schema[key] for key in Options.__dataclass_fields__})


def nav_titles(nav: Any) -> dict[str, str]:
    """`- Quick start: getting-started/install.md` anywhere in `nav`: the title MkDocs gives that page."""
    titles: dict[str, str] = {}
    items = nav if isinstance(nav, list) else []
    for item in items:
        if isinstance(item, dict):
            for title, value in item.items():
                if isinstance(value, str) and not re.match(r"^[a-z][a-z0-9+.-]*:", value, re.I):
                    titles.setdefault(value.lstrip("/"), str(title))
                else:
                    titles.update({k: v for k, v in nav_titles(value).items() if k not in titles})
    return titles


# -- the site's pages ------------------------------------------------------------------------------------


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
        if not _is_text(relative):
            shown = relative.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            log.warning(f"vault-mcp: the name of '{shown}' is not "
                        "UTF-8 text, which a page's address must be; not indexed (rename the file)")
            continue
        url = quote(relative.removesuffix("index.html") if relative.endswith("index.html") else relative)
        pages.append(SitePage(url, file))
    return pages


def _is_text(name: str) -> bool:
    """Whether a file name is Unicode text (a byte that is not UTF-8 comes from the file system as a surrogate)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
    while base != "/" and not all(_page_file(site_dir, p[len(base):]) for p in urls[:3] if p.startswith(base)):
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
        relative = path[len(base):] if path.startswith(base) else path[1:]
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


# A page larger than this is not read (its warning says so): the largest pages of real sites (API references)
# are a few MB, and every page's HTML is held until the index is written.
PAGE_BYTES = 32 * 1024 * 1024
SITEMAP_BYTES = 64 * 1024 * 1024  # the sitemap protocol's own limit is 50 MB


class Unreadable(Exception):
    """A file of the site that is not read; the message says why, after the file's name."""


def read_site_file(root: Path, file: Path, limit: int, folder: str = "the site folder"
                   ) -> tuple[bytes, os.stat_result]:
    """The bytes and status of `file` when it is a regular file inside `root` (resolved: no symbolic link leads
    out of it; `folder` names it) of at most `limit` bytes, else Unreadable. Opened without blocking and without
    following a link swapped in after the check, so a FIFO or a device is never waited on or read."""
    try:
        real = os.path.realpath(file)
        status = os.stat(real)
    except (OSError, ValueError) as error:
        raise Unreadable(f"cannot be read ({getattr(error, 'strerror', None) or error})") from None
    if not Path(real).is_relative_to(root):
        raise Unreadable(f"is a symbolic link that leads outside {folder}")
    if not stat.S_ISREG(status.st_mode):
        raise Unreadable(f"is {_file_kind(status.st_mode)}, not a regular file")
    if status.st_size > limit:
        raise Unreadable(_too_large(status.st_size, limit))
    flags = os.O_RDONLY
    for name in ("O_NONBLOCK", "O_NOFOLLOW", "O_CLOEXEC", "O_BINARY"):
        flags |= getattr(os, name, 0)
    try:
        descriptor = os.open(real, flags)
    except OSError as error:
        raise Unreadable(f"cannot be read ({error.strerror or error})") from None
    try:
        opened = os.fstat(descriptor)
        if (opened.st_dev, opened.st_ino) != (status.st_dev, status.st_ino) or not stat.S_ISREG(opened.st_mode):
            raise Unreadable("changed while it was read")
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(descriptor, min(1 << 20, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise Unreadable(_too_large(size, limit))
    except OSError as error:
        raise Unreadable(f"cannot be read ({error.strerror or error})") from None
    finally:
        os.close(descriptor)
    return b"".join(chunks), opened


def _file_kind(mode: int) -> str:
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
    return next((kind for test, kind in kinds if test(mode)), "a special file")


def _too_large(size: int, limit: int) -> str:
    return f"holds {size:,} bytes or more, over the limit of {limit // (1024 * 1024)} MB ({limit:,} bytes) a file"


def _leads_outside(root: Path, path: Path) -> bool:
    """Whether writing `path` (its folders made where missing) would write outside `root`, through a symbolic link."""
    return not Path(os.path.realpath(path)).is_relative_to(root)


def _lastmod(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    try:
        instant = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return instant.replace(tzinfo=dt.UTC) if instant.tzinfo is None else instant.astimezone(dt.UTC)


# -- one page's content ----------------------------------------------------------------------------------


def _masked(html_text: str) -> str:
    """The HTML with its comments, scripts, styles and text areas made spaces: no tag in them counts."""
    return _COMMENT_OR_RAW.sub(lambda m: " " * len(m.group(0)), html_text)


def element_inner(page_html: str, start: re.Match, tag: str) -> str:
    """The HTML inside the element whose start tag `start` matched, up to its own end tag."""
    masked = _masked(page_html)
    depth = 1
    for match in re.finditer(rf"<(/?){tag}\b[^<>]*>", masked[start.end():], re.I):
        depth += -1 if match.group(1) else 1
        if depth == 0:
            return page_html[start.end(): start.end() + match.start()]
    return page_html[start.end():]


def _stripped(text: str, start: int, end: int) -> tuple[int, int]:
    """`text[start:end].strip()` as where it starts and ends in `text`."""
    part = text[start:end]
    left = len(part) - len(part.lstrip())
    return start + left, max(start + left, end - (len(part) - len(part.rstrip())))


def content_element(page_html: str) -> str | None:
    for _, start_tag, tag in CONTENT_ELEMENTS:
        start = start_tag.search(page_html)
        if start is not None:
            return element_inner(page_html, start, tag)
    return None


def _element_ends(html_text: str, names: set[str]) -> dict[int, int]:
    """Where each element of these tag names ends (its end tag included), by where its start tag starts, in one
    pass; an element never closed is left out (it runs to the end)."""
    ends: dict[int, int] = {}
    open_tags: dict[str, list[int]] = {}
    tags = re.compile(rf"<(/?)({'|'.join(sorted(names))})\b[^<>]*>", re.I)
    for tag in tags.finditer(_masked(html_text)):
        name = tag.group(2).lower()
        if not tag.group(1):
            open_tags.setdefault(name, []).append(tag.start())
        elif open_tags.get(name):
            ends[open_tags[name].pop()] = tag.end()
    return ends


def without_theme_parts(content: str) -> tuple[str, str | None]:
    """page.content as the theme was given it, and the title of the H1 the theme wrote when the page had none."""
    parts = list(_THEME_PARTS.finditer(content))
    names = {next(name for name in part.groups() if name) for part in parts}
    ends = _element_ends(content, names) if names else {}
    start, end = _stripped(content, 0, len(content))
    while (first := _THEME_PARTS.match(content, start, end)) is not None:
        start, end = _stripped(content, min(ends.get(first.start(), end), end), end)
    # The last part that reaches the end, again and again: each one's end is where it closes in the content as
    # it was, or the end of what is left when that was cut off.
    for part in reversed(parts):
        if start <= part.start() < end and min(ends.get(part.start(), end), end) == end:
            start, end = _stripped(content, start, part.start())
    content = content[start:end]
    theme_title = None
    # Material and Zensical write <h1>{{ page.title }}</h1> (no id: MkDocs' toc gives every heading one) when
    # page.content has no <h1.
    bare = _BARE_H1.match(content)
    if bare is not None and "<h1" not in content[bare.end():]:
        theme_title = html.unescape(visible_text(bare.group(1)))
        content = content[bare.end():].strip()
    return content, theme_title


# -- sources ---------------------------------------------------------------------------------------------


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
        if not _is_text(path):
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
    """Python-Markdown's toc slugify, as Material's blog names post URLs."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", text).strip().lower())


def first_heading(text: str) -> str | None:
    match = re.search(r"^#\s+(.+?)\s*#*\s*$", text, re.M)
    return re.sub(r"\s*\{[^}]*\}$", "", match.group(1)) if match else None


def match_sources(pages: list[SitePage], sources: dict[str, Source], directory_urls: bool) -> dict[str, str]:
    """page URL -> source path, by MkDocs' URL rules, then (pages a plugin moved, such as blog posts) by the last
    URL segment being the slug of the source's `slug` or title."""
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
            slugs[path] = {slug(str(source.meta.get("slug") or "")), slug(str(source.meta.get("title") or "")),
                           slug(first_heading(source.text) or "")}
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


# -- titles ----------------------------------------------------------------------------------------------


def page_title_text(page_html: str) -> str | None:
    match = _TITLE.search(page_html)
    if match is None or not match.group(0).lower().endswith("</title>"):
        return None
    return html.unescape(" ".join(match.group(1).split()))


def guess_site_name(titles: list[str]) -> str | None:
    """The text after ` - ` that most page titles end with (themes write `Page - Site`)."""
    counts: Counter = Counter()
    for title in titles:
        parts = title.split(" - ")
        for cut in range(1, len(parts)):
            counts[" - ".join(parts[cut:])] += 1
    return counts.most_common(1)[0][0] if counts else None


# -- indexing --------------------------------------------------------------------------------------------


def index_site(site_dir: Path, *, docs_dir: Path | None = None, config_file: Path | None = None,
               cache_dir: Path | None = None) -> Outcome:
    started = time.perf_counter()
    if not site_dir.is_dir():
        problem = "does not exist" if not site_dir.exists() else "is not a folder"
        raise SiteError(f"{str(site_dir)!r} {problem}; give the folder of a built site (such as site/)")
    config = read_config(config_file) if config_file is not None else SiteConfig()
    if docs_dir is None and config.docs_dir is not None and config.docs_dir.is_dir():
        docs_dir = config.docs_dir
    if docs_dir is not None and not docs_dir.is_dir():
        raise SiteError(f"--docs-dir {str(docs_dir)!r} is not a folder; give the folder of the site's Markdown sources")
    options = config.options

    pages = site_pages(site_dir, config.site_url)
    contents: dict[str, tuple[SitePage, str, str, str | None]] = {}  # url -> page, html, content, theme title
    skipped: list[str] = []
    root = site_dir.resolve()
    for page in pages:
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
        if STATS_MARKER in content:
            continue
        content, theme_title = without_theme_parts(content)
        contents[page.url] = (page, page_html, content, theme_title)
    if not contents:
        what = f"{len(pages)} pages" if pages else "no HTML page"
        raise SiteError(
            f"{str(site_dir)!r} holds {what} and none has a content element this command knows; it looked for "
            f"{LOOKED_FOR}. Build the site with one of those themes, or with MkDocs and the vault-mcp plugin."
        )

    site_name = config.site_name
    titles = {url: page_title_text(item[1]) or "" for url, item in contents.items()}
    if site_name is None:
        site_name = guess_site_name(list(titles.values())) or site_dir.resolve().name
    sources = read_sources(docs_dir) if docs_dir is not None else {}
    matched = match_sources([item[0] for item in contents.values()], sources, config.use_directory_urls) \
        if docs_dir is not None else {}
    git = read_git_times(str(docs_dir)) if docs_dir is not None and options.modified != "mtime" else None

    if cache_dir is None:
        base = config.base or site_dir.resolve().parent
        cache_dir = base / options.cache_dir
    if cache_dir.resolve().is_relative_to(site_dir.resolve()):
        raise SiteError(f"the working index would be inside the site ({cache_dir}); give --cache-dir outside it")
    options_json = json.dumps({
        "command": "index", "indexed_fields": options.indexed_fields, "modified": options.modified,
        "modified_meta": options.modified_meta, "exclude": options.exclude,
        "respect_search_exclude": options.respect_search_exclude, "include_generated": options.include_generated,
        # Relative to the working index's folder: the index is published, with no absolute path of this machine.
        "docs_dir": relative_location(docs_dir, cache_dir) if docs_dir else None,
        "site_dir": relative_location(site_dir, cache_dir),
        # links resolved against each page's own address: an index whose links were not is made anew
        "links": "page address",
    }, sort_keys=True)
    writer = IndexWriter(cache_dir / "site.sqlite", options_json, in_process=worth_a_process(len(contents)))
    try:
        kept: set[str] = set()
        changed = 0
        folders = page_folders(contents)
        base_path = site_base_path(config.site_url)
        page_paths: dict[str, str] = {}  # page URL -> its path (what the site's files name it by)
        for url, (page, page_html, content, theme_title) in contents.items():
            source = sources.get(matched.get(url, "")) if docs_dir is not None else None
            path = source.path if source is not None else path_from_url(url, folders)
            page_paths[url] = path
            if docs_dir is not None and source is None and not options.include_generated:
                continue  # no Markdown file: a page a plugin generated (blog archive, category, tags index)
            if len(path) > TEXT_CHARS:
                log.warning(f"vault-mcp: the page {path[:60]}… has a path of {len(path):,} characters, which no tool "
                            f"can be given (the limit is {TEXT_CHARS:,}); not indexed")
                continue
            if path in kept:
                log.warning(f"vault-mcp: {page.loc or url} is the page {path} again; indexed once")
                continue
            if excluded_by(path, options.exclude):
                continue
            meta = source.meta if source is not None else {}
            if source is not None and source.problem is not None:
                log.warning(f"vault-mcp: Front matter of '{path}' is not valid YAML ({source.problem}); "
                            "the page is indexed without it")
            if options.respect_search_exclude and search_excluded(meta):
                continue
            title = (config.nav_titles.get(path) if source is not None else None) or page_title(
                titles[url], site_name, url, meta, theme_title, content)
            document_url = join_url(config.site_url, url) if config.site_url else (page.loc or join_url(None, url))
            markdown = source.text if source is not None else ""
            # the language the theme wrote into the page (<html lang>), else mkdocs.yml's
            lang = _LANG.search(page_html[:2000])
            language = lang.group(1) if lang else config.language
            if source is not None:
                modified, modified_source = modified_instant(
                    path, str(source.file), options.modified, git, meta, options.modified_meta)
                digest = page_fingerprint(
                    content, title, document_url, meta, modified, modified_source, markdown, language)
            elif page.lastmod is not None:
                modified, modified_source = page.lastmod, "sitemap"
                digest = page_fingerprint(
                    content, title, document_url, meta, modified, modified_source, markdown, language)
            else:
                # The HTML file's time changes with every build: the page keeps the time it was first indexed
                # with its current content, so the time is left out of the fingerprint.
                modified = dt.datetime.fromtimestamp(page.mtime_ns / 1e9, dt.UTC)
                modified_source = "mtime"
                digest = page_fingerprint(content, title, document_url, meta, None, modified_source, markdown, language)
            kept.add(path)
            if writer.fingerprints.get(path) == digest:
                continue
            changed += 1
            writer.put(RenderedPage(
                path=path, url=document_url, title=title, html=content, meta=meta, markdown=markdown,
                modified=modified, modified_source=modified_source, fingerprint=digest, language=language,
                page_path=base_path + url, site_url=config.site_url,
                history=git.history.get(path, []) if git is not None and source is not None else []),
                options.indexed_fields)
        removed = writer.keep_only(kept)
        writer.commit(indexed_fields=options.indexed_fields, site_name=site_name, site_url=config.site_url,
                      site_files=site_files(site_dir, base_path, page_paths),
                      nav=nav_pages(config, set(sources) if docs_dir is not None else set(page_paths.values())),
                      version_base=base_path if config.versioned else None)
        with contextlib.closing(open_read_only(writer.path)) as conn:
            stats = queries.index_stats(conn)
            snapshot = build_snapshot(conn, options.tag_fields, stats)
        out = site_dir / "vault-mcp"
        if _leads_outside(root, out):
            raise SiteError(f"{out} is a symbolic link that leads outside the site folder; remove it (this command "
                            "writes the index there)")
        # What failed is named by the file of the site it was writing (a copy's error names the working index).
        written: Path | None = out / "index.sqlite"
        try:
            publish(writer.path, out / "index.sqlite")
            written = out / "snapshot.json"
            write_snapshot(snapshot, out / "snapshot.json")
            written = None  # the stats page: its error names its file
            stats_file = write_stats_page(site_dir, options.stats_page, snapshot, dict(stats), site_name)
        except OSError as error:
            raise SiteError(f"could not write {written or error.filename or site_dir} ({error.strerror or error}); "
                            "SITE_DIR must be writable, on a disk with room") from None
    finally:
        writer.close()
    return Outcome(
        documents=stats["document_count"], sections=stats["section_count"], changed=changed,
        unchanged=len(kept) - changed, removed=removed, seconds=time.perf_counter() - started,
        index=out / "index.sqlite", skipped=skipped, stats_page=stats_file,
    )


def page_title(title_text: str, site_name: str, url: str, meta: dict[str, Any], theme_title: str | None,
               content: str) -> str:
    suffix = f" - {site_name}"
    if title_text.endswith(suffix) and title_text != suffix:
        return title_text[: -len(suffix)]
    if url and title_text and title_text != site_name:
        return title_text
    own = meta.get("title")
    if isinstance(own, str) and own:
        return own
    if theme_title:
        return theme_title
    sections = split_sections(page_content(content))
    first = sections[0] if sections else None
    if first is not None and first.level == 1:
        return first.heading
    if first is not None and first.level == 0 and not first.body and len(sections) > 1 and sections[1].level == 1:
        return sections[1].heading
    return "Home" if not url else posixpath.basename(unquote(url).rstrip("/")).replace("-", " ").capitalize()


# -- links ----------------------------------------------------------------------------------------------


def site_files(site_dir: Path, base_path: str, page_paths: dict[str, str]) -> dict[str, str]:
    """Every file of the built site by its server path (paths.server_path), as the plugin has the site's files
    for links to resolve against: a page by its document's path, any other file by its path in the site (a
    static file's path in docs_dir)."""
    files: dict[str, str] = {}
    for file in site_dir.rglob("*"):
        relative = file.relative_to(site_dir).as_posix()
        if _is_text(relative) and not relative.startswith("vault-mcp/") and file.is_file():
            files[server_path(base_path + quote(relative))] = relative
    for url, path in page_paths.items():
        files[server_path(base_path + url)] = path
    return files


def nav_pages(config: SiteConfig, pages: set[str]) -> set[str]:
    """The paths of the pages the nav lists, as MkDocs makes it: every path the `nav` config names (a URL or a
    folder there is a link, no page), else every page but those that `not_in_nav` names."""
    if config.nav is not None:
        named: list[str] = []

        def walk(item: Any) -> None:
            if isinstance(item, dict):
                for value in item.values():
                    walk(value)
            elif isinstance(item, list):
                for value in item:
                    walk(value)
            elif isinstance(item, str):
                named.append(PurePosixPath(item).as_posix())

        walk(config.nav)
        return set(named)
    if not config.not_in_nav:
        return set(pages)
    from mkdocs.config.config_options import PathSpec

    not_in_nav = PathSpec().run_validation(config.not_in_nav)
    return {page for page in pages if not not_in_nav.match_file(page)}


# -- the stats page --------------------------------------------------------------------------------------


def write_stats_page(site_dir: Path, option: str | bool, snapshot: dict[str, Any], stats: dict[str, Any],
                     site_name: str) -> Path | None:
    """The stats page as a plain HTML page with the plugin's stylesheet (no theme renders it here), where the
    `stats_page` option puts it; never over a page the site already has (such as the plugin's own)."""
    if option is False:
        return None
    from . import stats_page

    uri = stats_page.src_uri(str(option))
    stem = uri.removesuffix(".md")
    folder = stem.removesuffix("index").rstrip("/") if stem == "index" or stem.endswith("/index") else stem
    destination = site_dir / folder / "index.html"
    root = site_dir.resolve()
    if os.path.islink(destination) or _leads_outside(root, destination.parent):
        log.warning(f"vault-mcp: {destination} is a symbolic link or in one; no stats page written there")
        return None
    if os.path.lexists(destination):
        try:
            ours = GENERATOR.encode() in read_site_file(root, destination, PAGE_BYTES)[0]
        except Unreadable:
            ours = False
        if not ours:
            log.info(f"vault-mcp: {destination} is already a page of the site; no stats page written there")
            return None
    page_url = f"{folder}/" if folder else ""
    body, _ = stats_page.render(snapshot, stats, page_url)
    home = "../" * page_url.count("/") or "./"
    document = (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width,initial-scale=1">\n'
        f"{GENERATOR}\n<title>{html.escape(stats_page.TITLE)} - {html.escape(site_name)}</title>\n</head>\n"
        f'<body>\n<main class="vm-plain">\n<p><a href="{home}">{html.escape(site_name)}</a></p>\n{body}\n'
        "</main>\n</body>\n</html>\n"
    )
    destination.parent.mkdir(parents=True, exist_ok=True)
    destination.write_text(document, encoding="utf-8")
    css = site_dir / stats_page.CSS_URI
    if not os.path.lexists(css):  # never through a link (one that leads nowhere, too)
        shutil.copyfile(stats_page.CSS_SOURCE, css)
    return destination
