"""Links as plain data: what one rendered page links to, and which ids it offers as anchors.

MkDocs has resolved every Markdown link to another page (and mkdocstrings' autorefs every cross-reference)
when the plugin sees the page's HTML, so a link here is an `<a href>` of the content HTML, read with a
regular expression (as `page/documents.py` reads headings: a build-time hot path, no parser per page).

A link to the site is kept as the server path it points at (percent-decoding undone, `index.html` dropped:
`/guide/install/`), which the index maps to a page when the build commits, so that a link to a page indexed
in another build (incremental builds, `mkdocs serve --dirty`) is resolved against the site as it is now.
A link MkDocs could not resolve keeps its `.md` target, which is taken relative to the page's file, as
MkDocs' own warning names it (`guide/missing.md`). A link elsewhere keeps its host, and so does a full address on
the site's own host: the commit tells the site's pages from another site's on that host (index/write/resolve.py).
"""

from __future__ import annotations

import bisect
import html
import posixpath
import re
from typing import NamedTuple
from urllib.parse import SplitResult, quote, unquote, urlsplit

from .paths import server_path

# Each expression is linear in the page's size, whatever it holds (page/documents.py says how): a link's text ends at
# its end tag or where the next link starts, as a browser ends it; a comment never closed runs to the end.
_LINK = re.compile(r"<a\b([^<>]*)>((?:[^<]++|<(?!/?a\b))*+)(?:</a\s*>|(?=<a\b))", re.I)
_HREF = re.compile(r"""\shref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)
_IMAGE_ALT = re.compile(r"""<img\b[^<>]*\salt\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.I)
# Every id (and `<a name>`) of the page: what a link's `#fragment` may name, as MkDocs collects them.
_ANCHOR = re.compile(r"""<[a-zA-Z][^<>]*?\s(?:id|name)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+))""")
_IMAGE = re.compile(r"<img\b([^<>]*)>", re.I)
_SRC = re.compile(r"""\ssrc\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)
_ALT = re.compile(r"""\salt\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_TAG = re.compile(r"<[^<>]+>")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


# What `resolve` makes of an href: (url, target, anchor, host, written), a Link's last five fields.
Resolved = tuple[str, str | None, str | None, str | None, str | None]


class Link(NamedTuple):  # a tuple: pages have hundreds of links, and a tuple is the cheapest to make
    position: int  # the section it sits in (its position among the page's sections)
    text: str  # the visible text, else an image's alt text
    url: str  # where it points: the server path with its #anchor, or the external URL
    target: str | None  # a server path (`/guide/install/`), a `.md` path MkDocs left as is, or None (external)
    anchor: str | None
    host: str | None  # external links, and full addresses on the site's own host (perhaps another site there)
    written: str | None = None  # a relative link as its author wrote it, taken from the page's file (broken links)


def _first(match: re.Match[str] | None) -> str | None:
    return None if match is None else next((g for g in match.groups() if g is not None), None)


def extract_links(content: str, page_path: str, src_uri: str, site_url: str | None, starts: list[int]) -> list[Link]:
    """The links (`<a href>`) and images (`<img src>`, which MkDocs checks as links too) of a page's content
    HTML, in page order.

    `page_path` is the page's server path (`/docs/guide/install/`: the site's base path and the page URL),
    `starts` where each of its sections begins in `content`. Left out: what sits in an HTML comment (no reader
    sees it), links without text that point into the page itself (code line anchors), and `mailto:`, `tel:`,
    `javascript:` and `data:` addresses.
    """
    site = urlsplit(site_url) if site_url else None
    comments = [(m.start(), m.end()) for m in _COMMENT.finditer(content)] if "<!--" in content else []
    found: list[tuple[int, str, str]] = []  # (offset, href, text)
    for match in _LINK.finditer(content):
        href = _first(_HREF.search(match.group(1)))
        if href is None:
            continue
        inner = match.group(2)
        text = " ".join((html.unescape(_TAG.sub(" ", inner)) if "<" in inner or "&" in inner else inner).split())
        if not text:
            text = html.unescape(_first(_IMAGE_ALT.search(inner)) or "")
        href = html.unescape(href).strip()
        if href and (text or not href.startswith("#")):
            found.append((match.start(), href, text))
    if "<img" in content or "<IMG" in content:
        for match in _IMAGE.finditer(content):
            src = _first(_SRC.search(match.group(1)))
            if src:
                alt = html.unescape(_first(_ALT.search(match.group(1))) or "")
                found.append((match.start(), html.unescape(src).strip(), alt))
        found.sort(key=lambda item: item[0])
    links: list[Link] = []
    seen: dict[str, Resolved | None] = {}  # a page often links to one address many times
    for offset, href, text in found:
        if comments and any(start <= offset < end for start, end in comments):
            continue
        resolved = seen[href] if href in seen else seen.setdefault(href, resolve(href, page_path, src_uri, site))
        if resolved is not None:
            links.append(Link(max(bisect.bisect_right(starts, offset) - 1, 0), text, *resolved))
    return links


def resolve(href: str, page_path: str, src_uri: str, site: SplitResult | None) -> Resolved | None:
    """(url, target, anchor, host, written) of one href, or None for a link that goes nowhere a reader browses."""
    if href.startswith(("https://", "http://")):  # most links of a page: the fast way to their host
        netloc = href.partition("://")[2].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
        netloc = netloc.rpartition("@")[2].lower()
        if site is None or netloc != site.netloc.rpartition("@")[2].lower():
            return href, None, None, netloc.rsplit(":", 1)[0] if not netloc.endswith("]") else netloc, None
    parts = urlsplit(href)
    own_host = None
    if parts.scheme or parts.netloc:
        if parts.scheme not in ("http", "https", ""):
            return None  # mailto:, tel:, javascript:, data:
        host = parts.hostname or ""
        if site is None or host != site.hostname or parts.port != site.port:
            return href, None, None, host.lower(), None
        path = parts.path or "/"  # a full address on the site's host: this site's, or another's beside it
        own_host = host.lower()
    elif _SCHEME.match(href):
        return None
    elif parts.path.endswith(".md") and not parts.path.startswith("/"):
        # MkDocs found no page for it and left it as written, relative to the page's file.
        target = posixpath.normpath(posixpath.join(posixpath.dirname(src_uri), unquote(parts.path)))
        return href, target, parts.fragment or None, None, target
    else:
        path = posixpath.join(posixpath.dirname(page_path + "x"), parts.path) if parts.path else page_path
    anchor = unquote(parts.fragment) or None
    target = server_path(path)
    written = None
    if (
        not parts.scheme
        and not parts.netloc
        and parts.path
        and not parts.path.startswith("/")
        and not parts.path.endswith(("/", ".html"))
    ):
        # A link to a file that MkDocs found nothing for stays as written, relative to the page's file; what
        # MkDocs rewrites to a page ends with `/` or `.html`.
        written = posixpath.normpath(posixpath.join(posixpath.dirname(src_uri), unquote(parts.path)))
        if written.startswith("../"):  # above docs_dir: written for the page's URL (raw HTML), not its file
            written = None
    # Absolute when site_url is set, as read writes the page's links, so it works wherever it is quoted.
    origin = f"{site.scheme}://{site.netloc}" if site is not None else ""
    return origin + path_part(target) + (f"#{anchor}" if anchor else ""), target, anchor, own_host, written


def path_part(target: str) -> str:
    """A server path as a URL writes it (percent-encoded, as MkDocs writes page URLs)."""
    return quote(target, safe="/:@!$&'()*+,;=-._~%")


def page_anchors(html_content: str) -> list[str]:
    """Every id (and `<a name>`) of a page, in order, each once."""
    if "<!--" in html_content:
        html_content = _COMMENT.sub("", html_content)
    return list(
        dict.fromkeys(
            html.unescape(next(g for g in m.groups() if g is not None)) for m in _ANCHOR.finditer(html_content)
        )
    )
