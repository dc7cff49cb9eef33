"""Reading one page of a built site: its attributes quoted again where a minifier took the quotes off, the
element that holds the page's content in each known theme, that content without the bits the theme wrote around
it (tags, edit buttons, source-file facts, feedback form, comment system, the H1 it wrote for a page without
one), and the page's title and language."""

from __future__ import annotations

import html
import posixpath
import re
from collections import Counter
from typing import Any
from urllib.parse import unquote

from ..page.documents import page_content, split_sections, visible_text


def _is(name: str, value: str) -> str:
    """An attribute with this value, quoted as MkDocs writes it or unquoted as a minifier leaves it."""
    return rf'\b{name}=(?:"{value}"|{value}(?=[\s/>]))'


# The element that holds page.content, per theme: (what it is, its start tag, its tag name). Checked in order.
# Every expression that scans a page stops at the next `<` (`[^<>]`, never `[^>]`), or ends at the end of the
# text when what it looks for is never closed: else each `<` of a page without `>` is scanned to the end again,
# quadratic time in the page's size.
CONTENT_ELEMENTS = (
    (
        'Material for MkDocs or Zensical: <article class="md-content__inner md-typeset">',
        re.compile(r'<article\b[^<>]*\bclass="md-content__inner md-typeset"[^<>]*>'),
        "article",
    ),
    (
        'a Material or Zensical blog index: <header class="md-typeset">',
        re.compile(rf"<div {_is('class', 'md-content__inner')}>\s*<header\b[^<>]*{_is('class', 'md-typeset')}[^<>]*>"),
        "header",
    ),
    (
        'the readthedocs theme: <div class="section" itemprop="articleBody">',
        re.compile(rf"<div\b[^<>]*{_is('itemprop', 'articleBody')}[^<>]*>"),
        "div",
    ),
    ('the mkdocs theme: <div role="main">', re.compile(rf"<div\b[^<>]*{_is('role', 'main')}[^<>]*>"), "div"),
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
# The comment system Material's docs show how to add (partials/comments.html) comes last in the article, under a
# heading with this id, alone or in an element that holds it.
_COMMENTS = re.compile(r'<[a-zA-Z][^<>]*\sid="__comments"[^<>]*>')
_WRAPPERS = {"div", "section", "aside"}
# A comment or raw text never closed runs to the end of the page, as a browser reads it.
_COMMENT_OR_RAW = re.compile(r"<!--.*?(?:-->|\Z)|<(script|style|textarea)\b.*?(?:</\1\s*>|\Z)", re.S | re.I)
_BARE_H1 = re.compile(r"<h1>(.*?)</h1>", re.S)
_TITLE = re.compile(r"<title>(.*?)(?:</title>|\Z)", re.S | re.I)
_LANG = re.compile(r"""<html\b[^<>]*\blang\s*=\s*(?:"([^"<>]+)"|'([^'<>]+)'|([^\s"'<>=`]+))""", re.I)
STATS_MARKER = 'class="vm-stats"'  # the stats page is the index's own, never a document
# A start tag with an attribute value a minifier left unquoted (`class=headerlink`): the page needs quoting again.
_UNQUOTED = re.compile(r"""<[a-zA-Z][^<>]*?\s[^\s"'<>/=]+=[^\s"'<>=`]""")
_START_TAG = re.compile(r"<[a-zA-Z][^\s/<>]*\s[^<>]*>")
_ATTRIBUTE = re.compile(r"""([^\s"'<>/=]+)(\s*=\s*)("[^"]*+"|'[^']*+'|[^\s"'<>=`]++)""")
_BARE_VALUE = re.compile(r"""([^\s"'<>/=]+\s*=\s*)([^\s"'<>=`]++)""")


def requoted(page_html: str) -> str:
    """The HTML with every attribute value quoted, as MkDocs writes it: mkdocs-minify-plugin (htmlmin) takes off
    the quotes it may (`class=headerlink`), and permalinks, the theme's parts and what the index reads are found
    by their quoted attributes. Comments, scripts, styles and text areas are left as they are."""
    if _UNQUOTED.search(page_html) is None:
        return page_html
    parts: list[str] = []
    position = 0
    for raw in _COMMENT_OR_RAW.finditer(page_html):
        parts += [_START_TAG.sub(_requoted_tag, page_html[position : raw.start()]), raw.group(0)]
        position = raw.end()
    parts.append(_START_TAG.sub(_requoted_tag, page_html[position:]))
    return "".join(parts)


def _requoted_tag(tag: re.Match[str]) -> str:
    text = tag.group(0)
    if '"' not in text and "'" not in text:  # no quoted value to step over: one substitution in C
        return _BARE_VALUE.sub(r'\1"\2"', text)
    return _ATTRIBUTE.sub(_quoted, text)


def _quoted(attribute: re.Match[str]) -> str:
    name, equals, value = attribute.groups()
    return attribute.group(0) if value[0] in "\"'" else f'{name}{equals}"{value}"'


def _masked(html_text: str) -> str:
    """The HTML with its comments, scripts, styles and text areas made spaces: no tag in them counts."""
    return _COMMENT_OR_RAW.sub(lambda m: " " * len(m.group(0)), html_text)


def element_inner(page_html: str, start: re.Match[str], tag: str) -> str:
    """The HTML inside the element whose start tag `start` matched, up to its own end tag."""
    masked = _masked(page_html)
    depth = 1
    for match in re.finditer(rf"<(/?){tag}\b[^<>]*>", masked[start.end() :], re.I):
        depth += -1 if match.group(1) else 1
        if depth == 0:
            return page_html[start.end() : start.end() + match.start()]
    return page_html[start.end() :]


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


def without_comments(content: str) -> str:
    """The content up to the comment system: the outermost element that holds its heading, else the heading."""
    comments = _COMMENTS.search(_masked(content))
    if comments is None:
        return content
    ends = _element_ends(content, _WRAPPERS)
    holders = [start for start, end in ends.items() if start < comments.start() < end]
    return content[: min(holders, default=comments.start())]


def without_theme_parts(content: str) -> tuple[str, str | None]:
    """page.content as the theme was given it, and the title of the H1 the theme wrote when the page had none."""
    content = without_comments(content)
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
    if bare is not None and "<h1" not in content[bare.end() :]:
        theme_title = html.unescape(visible_text(bare.group(1)))
        content = content[bare.end() :].strip()
    return content, theme_title


def page_title_text(page_html: str) -> str | None:
    match = _TITLE.search(page_html)
    if match is None or not match.group(0).lower().endswith("</title>"):
        return None
    return html.unescape(" ".join(match.group(1).split()))


def guess_site_name(titles: list[str]) -> str | None:
    """The text after ` - ` that most page titles end with (themes write `Page - Site`)."""
    counts: Counter[str] = Counter()
    for title in titles:
        parts = title.split(" - ")
        for cut in range(1, len(parts)):
            counts[" - ".join(parts[cut:])] += 1
    return counts.most_common(1)[0][0] if counts else None


def page_title(
    title_text: str, site_name: str, url: str, meta: dict[str, Any], theme_title: str | None, content: str
) -> str:
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


def page_language(page_html: str, default: str) -> str:
    """The language the theme wrote into the page (`<html lang>`), else `default` (mkdocs.yml's)."""
    lang = _LANG.search(page_html[:2000])
    return next(value for value in lang.groups() if value) if lang else default
