"""Documents as plain data: what one rendered page (page.RenderedPage) contributes to the index.

Nothing here knows SQL or MkDocs events: `build_document` makes a rendered page's `Document`, the model the
index's rows are made from (index/write/rows.py). The index writer makes documents, so this module
(and page/links.py) loads where it runs: a build's own thread needs only a page's fingerprint (page/fingerprints.py), its
front matter's values (page/front_matter.py) and its paths (page/paths.py).
"""

from __future__ import annotations

import datetime as dt
import html
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .front_matter import field_values, json_ready
from .links import Link, extract_links, page_anchors
from .model import IndexedFields, RenderedPage, history_rows

log = logging.getLogger("mkdocs.plugins.vault-mcp")


class Section(NamedTuple):
    """The text from one heading to the next heading of any level."""

    heading: str  # as the page shows it; "" for the text before the first heading
    level: int  # 0 for the text before the first heading
    anchor: str | None  # the id the rendered page gives the heading
    trail: str  # "Install > From PyPI"
    body: str  # the visible text, for search
    start: int = 0  # where the section begins in the page's content HTML, for read


@dataclass
class Document:
    path: str
    url: str
    title: str
    summary: str
    meta: dict[str, Any]
    markdown: str  # the source file's Markdown, for read(view="source")
    content: str  # the rendered HTML that sections and read(view="markdown") are cut from
    modified: dt.datetime  # aware, UTC
    modified_source: str  # "meta", "git" or "mtime"
    sections: list[Section] = field(default_factory=list)
    values: dict[str, list[str]] = field(default_factory=dict)
    fingerprint: str = ""
    language: str = ""  # the locale the page is published in (mkdocs-static-i18n's, else theme.language)
    fallback_of: str | None = None  # the path of the default-language page this page copies, if it is a fallback
    links: list[Link] = field(default_factory=list)  # links.extract_links
    anchors: list[str] = field(default_factory=list)  # every id of the page, what a link's #fragment may name
    history: list[dict[str, Any]] = field(default_factory=list)  # its last git commits, newest first

    @property
    def folder(self) -> str:
        return self.path.rpartition("/")[0]

    @property
    def headings(self) -> list[str]:
        return [section.heading for section in self.sections if section.level]

    @property
    def searched_title(self) -> str:
        """What search weighs as the title: MkDocs' title, and beside it the page's own first level-1
        heading and front matter `title` when they say more (a short `nav` label is often the title)."""
        names = [self.title]
        own_title = self.meta.get("title")
        first_h1 = next((section.heading for section in self.sections if section.level == 1), "")
        for name in (first_h1, own_title if isinstance(own_title, str) else ""):
            if name and all(name.casefold() not in known.casefold() for known in names):
                names.append(name)
        return " · ".join(names)


def build_document(page: RenderedPage, indexed_fields: IndexedFields) -> Document:
    """The document of a rendered page; `indexed_fields`: which front matter fields it keeps values of."""
    content = page_content(page.html)
    try:
        sections = split_sections(content)
    except Exception as error:  # one odd page must never fail a build: its text stays searchable as one section
        log.warning(f"vault-mcp: {page.path} could not be cut at its headings ({error}); indexed as one section")
        sections = [Section("", 0, None, "", visible_text(content))]
    starts = [section.start for section in sections]
    description = page.meta.get("description")
    # A blank description is no description, as themes treat it (Material falls back to site_description).
    summary = description if isinstance(description, str) and description.strip() else first_paragraph(content)
    return Document(
        path=page.path,
        url=page.url,
        title=page.title,
        summary=summary,
        meta=json_ready(page.meta),
        markdown=page.markdown,
        content=content,
        modified=page.modified,
        modified_source=page.modified_source,
        sections=sections,
        values=field_values(page.meta, indexed_fields),
        fingerprint=page.fingerprint,
        language=page.language,
        fallback_of=page.fallback_of,
        links=extract_links(content, page.page_path or "/", page.path, page.site_url, starts),
        anchors=page_anchors(page.html),
        history=history_rows(page.history),
    )


# --- Rendered HTML ---------------------------------------------------------

# Regular expressions rather than an HTML parser: MkDocs' own output is regular
# enough, and they are fast enough for every page of a build. Each one is linear in the page's size,
# whatever the page holds: a tag's attributes stop at the next `<` (`[^<>]`), an element's text at the next start
# of one like it, and what is never closed runs to the end of its text; else every `<` of a page without `>`
# (or every unclosed `<!--`, `<h2>`, `<a>`) would be scanned to the end again.
_HEADING = re.compile(r"<h([1-6])((?:\s[^<>]*)?)>((?:[^<]++|<(?!h[1-6]\b|/h\1\b))*+)</h\1\s*>", re.I)
_ID = re.compile(r"""\sid\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)
# The expressions below run over a page's fragments joined by _SEPARATOR, which none of them may cross: a stray `<`
# in one fragment (`--8<--` in raw HTML) would otherwise swallow the fragments up to the next `>`.
_PERMALINK = re.compile(r'<a\b[^<>]*\bclass="[^"<>]*\bheaderlink\b[^"<>]*"[^<>]*>(?:[^<]++|<(?!/?a\b))*+</a>', re.I)
_INVISIBLE = re.compile(
    r"<(script|style|template)\b[^\x00]*?(?:</\1\s*>|(?=\x00)|\Z)|<!--[^\x00]*?(?:-->|(?=\x00)|\Z)", re.I
)
# The block elements' names (p div br hr li ul ol dl dt dd pre table thead tbody tr td th blockquote section
# details summary figure figcaption h1-h6) written as a tree of their prefixes: tried at every `<` of the page,
# which is faster than a flat list of the names.
_BLOCK_TAG = re.compile(
    r"</?(?:p(?:re)?|d(?:iv|etails|[ltd])|b(?:r|lockquote)|h[r1-6]|li|ul|ol|t(?:able|head|body|[rdh])"
    r"|s(?:ection|ummary)|fig(?:ure|caption))\b[^<>\x00]*>",
    re.I,
)
_TAG = re.compile(r"<[^<>\x00]+>")
_SUMMARY_TAG = re.compile(r"<(/?)(p|div|details|aside)\b([^<>]*)>", re.I)
_SEPARATOR = "\x00"  # joins fragments, so each expression runs once over all of them


def visible_text(fragment: str) -> str:
    return " ".join(_texts([fragment.replace(_SEPARATOR, "")])[0].split())


def _texts(fragments: list[str]) -> list[str]:
    """The visible text of each fragment; one pass of each expression over all of them (a build-time hot path)."""
    joined = _SEPARATOR.join(fragments)
    joined = _TAG.sub("", _BLOCK_TAG.sub(" ", _INVISIBLE.sub(" ", joined)))
    return html.unescape(joined).split(_SEPARATOR)


# How many characters of a page's fragments are made visible text at once: one pass of each expression over
# many fragments is fast, and a bound on it keeps a huge page's intermediate copies and words small.
TEXT_BATCH_CHARS = 1_000_000
_WHITE_SPACE = re.compile(r"\s+")


def _squeezed_texts(content: str, spans: list[tuple[int, int]]) -> list[str]:
    """The visible text of each fragment `content[start:end]`, its white space runs made one space and its ends
    stripped, taken TEXT_BATCH_CHARS of fragments at a time."""
    texts: list[str] = []
    batch: list[str] = []
    size = 0
    for start, end in spans:
        if batch and size + end - start > TEXT_BATCH_CHARS:
            texts += _squeezed_batch(batch)
            batch, size = [], 0
        batch.append(content[start:end])
        size += end - start
    return texts + _squeezed_batch(batch)


def _squeezed_batch(fragments: list[str]) -> list[str]:
    """One split over the batch rather than one per fragment (the separator is not white space); a batch larger
    than TEXT_BATCH_CHARS (one huge fragment) has its runs replaced instead, without a list of its words."""
    joined = _SEPARATOR.join(fragments)
    fragments.clear()
    joined = html.unescape(_TAG.sub("", _BLOCK_TAG.sub(" ", _INVISIBLE.sub(" ", joined))))
    squeezed = _WHITE_SPACE.sub(" ", joined) if len(joined) > TEXT_BATCH_CHARS else " ".join(joined.split())
    return [text.strip(" ") for text in squeezed.split(_SEPARATOR)]


def page_content(html_content: str) -> str:
    """The rendered page as the index keeps it: without permalinks (`¶`) and without the blocks that
    Material's search leaves out (`data-search-exclude`), so neither search nor read sees them."""
    content = _PERMALINK.sub("", html_content.replace(_SEPARATOR, ""))
    return remove_search_excluded(content) if "data-search-exclude" in content else content


_EXCLUDED_START = re.compile(r"<([a-zA-Z][\w-]*)\b[^<>]*\sdata-search-exclude\b[^<>]*>")
_VOID_ELEMENTS = frozenset("area base br col embed hr img input link meta source track wbr".split())


def remove_search_excluded(content: str) -> str:
    """Every element marked `data-search-exclude`, with all it holds, cut out."""
    kept: list[str] = []
    position = 0
    while (start := _EXCLUDED_START.search(content, position)) is not None:
        name = start.group(1).lower()
        end = start.end()
        if name not in _VOID_ELEMENTS and not start.group(0).endswith("/>"):
            depth = 1
            tags = re.compile(rf"<(/?){re.escape(name)}\b[^<>]*>", re.I)
            for tag in tags.finditer(content, start.end()):
                depth += -1 if tag.group(1) else 1
                if depth == 0:
                    end = tag.end()
                    break
            else:
                end = len(content)  # never closed: the browser would hide the rest too
        kept.append(content[position : start.start()])
        position = end
    kept.append(content[position:])
    return "".join(kept)


def split_sections(content: str) -> list[Section]:
    """Cut a page's content HTML at every heading; the text before the first one is a section when not empty."""
    content = content.replace(_SEPARATOR, " ")  # the fragments' separator, never text (same length: starts hold)
    spans: list[tuple[int, int]] = []  # where each fragment is: body, then heading and body for each heading
    heads: list[tuple[int, str | None, int]] = []
    position = 0
    for match in _HEADING.finditer(content):
        spans += [(position, match.start()), match.span(3)]
        id_match = _ID.search(match.group(2))
        anchor = next((g for g in id_match.groups() if g is not None), None) if id_match else None
        heads.append((int(match.group(1)), anchor, match.start()))
        position = match.end()
    spans.append((position, len(content)))
    texts = _squeezed_texts(content, spans)

    sections: list[Section] = []
    if texts[0] or not heads:
        sections.append(Section("", 0, None, "", texts[0]))
    trail: list[tuple[int, str]] = []
    for (level, anchor, start), heading, body in zip(heads, texts[1::2], texts[2::2], strict=True):
        while trail and trail[-1][0] >= level:
            trail.pop()
        trail.append((level, heading))
        sections.append(Section(heading, level, anchor, " > ".join(t for _, t in trail), body, start))
    return sections


def first_paragraph(html_content: str) -> str:
    """The first paragraph of the page's own prose: not an admonition's title, nor inside an admonition or a
    collapsible block (asides); a page that has nothing but asides gets the first paragraph inside one."""
    containers: list[bool] = []  # one per open container: whether it is an aside
    fallback = ""
    tags = list(_SUMMARY_TAG.finditer(html_content))
    # A paragraph ends at the next <p> or </p>, as a browser closes it (where the next paragraph starts)
    paragraph_ends = [len(html_content)] * len(tags)
    following = len(html_content)
    for index in range(len(tags) - 1, -1, -1):
        paragraph_ends[index] = following
        if tags[index].group(2).lower() == "p":
            following = tags[index].start()
    for match, paragraph_end in zip(tags, paragraph_ends, strict=True):
        closing, tag, attributes = match.group(1), match.group(2).lower(), match.group(3)
        if tag != "p":
            if closing:
                if containers:
                    containers.pop()
            else:
                containers.append(tag == "details" or tag == "aside" or "admonition" in attributes)
            continue
        if closing or "admonition-title" in attributes:
            continue
        paragraph = html_content[match.end() : paragraph_end]
        text = visible_text(paragraph) if paragraph and not paragraph.isspace() else ""
        if not text:
            continue
        if not any(containers):
            return text
        fallback = fallback or text
    return fallback


# --- Markdown source -------------------------------------------------------

# Front matter as MkDocs finds it: mkdocs.utils.meta.YAML_RE's pattern (tests/test_page_model.py holds them equal),
# written out because the server must not import MkDocs, and importing that module imports the whole mkdocs.utils.
FRONT_MATTER = re.compile(r"^-{3}[ \t]*\n(.*?\n)(?:\.{3}|-{3})[ \t]*\n", re.UNICODE | re.DOTALL)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# Linear in a line's length, as the HTML's expressions are in a page's (a run of white space is tried from its
# start only): `read` finds the headings of a page's Markdown source with these.
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_ATTR_LIST = re.compile(r"(?<!\s)\s*\{\s*[:#.][^{}]*\}\s*$")
_CLOSING_HASHES = re.compile(r"(?:^|(?<![ \t])[ \t]+)#+[ \t]*$")


class MarkdownHeading(NamedTuple):
    start: int  # character offset of the heading's first line
    level: int
    text: str  # without closing hashes and attribute lists
    anchor: str | None  # an explicit `{ #id }`, when given


def markdown_headings(markdown: str) -> list[MarkdownHeading]:
    """ATX and setext headings of a Markdown source, skipping fenced code blocks."""
    headings: list[MarkdownHeading] = []
    fence: str | None = None
    previous: tuple[int, str] | None = None  # (offset, line) of a candidate setext text line
    for offset, line in _lines_with_offsets(markdown):
        fence_match = _FENCE.match(line)
        if fence is not None:
            if fence_match and fence_match.group(1)[0] == fence[0] and len(fence_match.group(1)) >= len(fence):
                fence = None
            continue
        if fence_match:
            fence, previous = fence_match.group(1), None
            continue
        atx = _ATX.match(line)
        setext = _SETEXT.match(line)
        if atx:
            text = _CLOSING_HASHES.sub("", (atx.group(2) or "").rstrip(" \t"))
            headings.append(_heading(offset, len(atx.group(1)), text))
            previous = None
        elif setext and previous is not None:
            level = 1 if setext.group(1)[0] == "=" else 2
            headings.append(_heading(previous[0], level, previous[1].strip()))
            previous = None
        else:
            previous = (offset, line) if line.strip() and not line.startswith("    ") else None
    return headings


def _heading(offset: int, level: int, text: str) -> MarkdownHeading:
    anchor = None
    attr = _ATTR_LIST.search(text)
    if attr:
        id_match = re.search(r"#([^\s}]+)", attr.group(0))
        anchor = id_match.group(1) if id_match else None
        text = text[: attr.start()]
    return MarkdownHeading(offset, level, text.strip(), anchor)


_ANY_FENCE = re.compile(r"^[ \t>]*(`{3,}|~{3,})[ \t]*\{?[ \t]*\.?([\w+#.-]*)")


def fenced_code_languages(markdown: str) -> dict[str, str]:
    """The language of each fenced code block of a Markdown source, by its code with all white space
    removed: rendered HTML says a block's language only when the site asks Pygments to, so `read` finds
    it here. Fences at any indentation count (inside tabs, admonitions, lists)."""
    languages: dict[str, str] = {}
    fence: str | None = None
    language = ""
    code: list[str] = []
    for line in markdown.splitlines():
        match = _ANY_FENCE.match(line)
        if fence is None:
            if match:
                fence, language, code = match.group(1), match.group(2), []
        elif match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) and not match.group(2):
            if language:
                languages.setdefault("".join("".join(code).split()), language)
            fence = None
        else:
            code.append(line)
    return languages


def _lines_with_offsets(text: str) -> Iterator[tuple[int, str]]:
    offset = 0
    for line in text.splitlines(keepends=True):
        yield offset, line.rstrip("\r\n")
        offset += len(line)
