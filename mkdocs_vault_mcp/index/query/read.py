"""Reading a page: as its reader sees it, as its outline, or as its Markdown source.

The page as the reader sees it is Markdown made from the rendered HTML that the
index keeps (`sources.content`), cut at the same headings as the searchable
sections, so every section that `search` returns is read by its heading or its
anchor. Each heading's own part (up to the next heading of any level) is
converted on its own and the parts are joined by one blank line: the page, a
section (a heading and everything under it) and the outline's sizes are all
made of the same parts, so they agree to the character.

Conversion happens when a page is read, not during the build; the parts of the
pages read last are kept, so paging through a long page converts it once.
"""

from __future__ import annotations

import difflib
import json
import re
import sqlite3
import threading
from collections import OrderedDict
from dataclasses import dataclass

from ... import budget
from ...errors import InvalidArgument
from ...instants import rfc3339
from ...limits import READ_CHARS
from ...page.documents import FRONT_MATTER, fenced_code_languages, markdown_headings
from ..answer_types import OutlineEntry, ReadAnswer, ReadSection
from ..conversion_pool import to_markdown
from ..filters import check_choice, check_range, no_document

VIEWS = ("markdown", "outline", "source")
SEPARATOR = "\n\n"  # between the parts of a page
NEAREST_HEADINGS = 10  # headings an unknown-section error suggests
PAGES_KEPT = 32
CONVERTING_PROCESSES = 2  # large parts are converted in worker processes; heavy calls take turns anyway

# What a Markdown heading writes that its rendered text does not show: `[text](url)`, `**`, `_`, backticks.
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_INLINE_MARKUP = str.maketrans("", "", "*_`")


@dataclass(frozen=True)
class Part:
    """One heading's own part of a page, up to the next heading of any level; the text before the first
    heading is a part with level 0 and no heading. `start` and `end` delimit its HTML in the page's content."""

    heading: str
    level: int
    anchor: str | None
    start: int
    end: int


class PageText:
    """A page's parts, each converted to Markdown the first time a read needs it: a call converts what it
    returns and the parts before it, not the whole page (a release-notes page has hundreds of parts)."""

    def __init__(
        self, content: str, heads: list[tuple[str, int, str | None, int]], url: str, languages: dict[str, str]
    ) -> None:
        self.content, self.url, self.languages = content, url, languages
        starts = [start for *_, start in heads] + [len(content)]
        parts = [
            Part(heading, level, anchor, start, starts[index + 1])
            for index, (heading, level, anchor, start) in enumerate(heads)
        ]
        intro = Part("", 0, None, 0, starts[0])
        self._markdown: dict[int, str] = {}
        self.parts: tuple[Part, ...] = (intro, *parts)
        if heads and not self.markdown(0):  # nothing before the first heading: no part of its own
            self.parts, self._markdown = tuple(parts), {}

    def markdown(self, index: int) -> str:
        converted = self._markdown.get(index)
        if converted is None:
            # Imported when a page is first read, for lxml and html-to-markdown: a server that only counts and
            # searches never loads them.
            from ..html_to_markdown import HEAVY_CHARS, html_to_markdown

            part = self.parts[index]
            fragment = self.content[part.start : part.end]
            if len(fragment) > HEAVY_CHARS:
                budget.turn_heavy()  # waits for its turn before it starts
                converted = to_markdown(fragment, self.url, self.languages, CONVERTING_PROCESSES)
            else:
                converted = html_to_markdown(fragment, self.url, self.languages)
            self._markdown[index] = converted  # a race converts a part twice, to the same text
        return converted

    def text(self, indexes: range, limit: int | None = None) -> str:
        """The parts joined by SEPARATOR, converting no further than needed for `limit` characters."""
        pieces: list[str] = []
        length = 0
        for index in indexes:
            if pieces:
                pieces.append(SEPARATOR)
                length += len(SEPARATOR)
            pieces.append(self.markdown(index))
            length += len(pieces[-1])
            if limit is not None and length >= limit:
                break
        return "".join(pieces)


class _RecentPages:
    """The pages read last, by fingerprint (which changes whenever the page's HTML or URL does)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._pages: OrderedDict[str, PageText] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, fingerprint: str) -> PageText | None:
        with self._lock:
            page = self._pages.get(fingerprint)
            if page is not None:
                self._pages.move_to_end(fingerprint)
            return page

    def put(self, fingerprint: str, page: PageText) -> None:
        with self._lock:
            self._pages[fingerprint] = page
            while len(self._pages) > self.size:
                self._pages.popitem(last=False)


_recent = _RecentPages(PAGES_KEPT)


def page_text(conn: sqlite3.Connection, document_id: int, fingerprint: str, url: str, *, keep: bool = True) -> PageText:
    """The page's parts, kept among the pages read last unless `keep` is false (a build's files for agents read
    every page once)."""
    page = _recent.get(fingerprint)
    if page is None:
        # The source is read apart and dropped once its code's languages are known: a huge page's HTML and
        # Markdown are never held at once twice over (SQLite's copy and Python's).
        (markdown,) = conn.execute("SELECT markdown FROM sources WHERE document_id = ?", [document_id]).fetchone()
        languages = fenced_code_languages(markdown)
        del markdown
        (content,) = conn.execute("SELECT content FROM sources WHERE document_id = ?", [document_id]).fetchone()
        heads = conn.execute(
            "SELECT heading, level, anchor, start FROM sections WHERE document_id = ? AND level > 0 ORDER BY position",
            [document_id],
        ).fetchall()
        page = PageText(content, heads, url, languages)
        if keep:
            _recent.put(fingerprint, page)
    return page


def _normalized(text: str) -> str:
    return " ".join(text.split()).casefold()


def _as_shown(heading: str) -> str:
    """A heading as written in Markdown (`Using **bold** [link](x)`) as the page shows it, normalized."""
    return _normalized(_LINK.sub(r"\1", heading).translate(_INLINE_MARKUP))


def find_part(parts: tuple[Part, ...], wanted: str) -> int | None:
    """The index of the part that `wanted` names: an anchor id (with or without `#`) first, else the first
    heading with exactly that text, else with that text but for spaces, case and inline Markdown markup.
    "" names the text before the first heading."""
    anchor = wanted.strip().removeprefix("#")
    for index, part in enumerate(parts):
        if part.anchor is not None and part.anchor == anchor:
            return index
    exact = next((index for index, part in enumerate(parts) if part.heading == wanted), None)
    if exact is not None:
        return exact
    for key in dict.fromkeys((_normalized(wanted), _as_shown(wanted))):
        found = next((index for index, part in enumerate(parts) if _normalized(part.heading) == key), None)
        if found is not None:
            return found
    return None


def section_span(parts: tuple[Part, ...], first: int) -> range:
    """A heading's part and the parts under it, up to the next heading of the same or a higher level."""
    level = parts[first].level
    end = next(
        (index for index in range(first + 1, len(parts)) if level == 0 or parts[index].level <= level), len(parts)
    )
    return range(first, end)


def anchored(url: str, anchor: str | None) -> str:
    return f"{url}#{anchor}" if anchor else url


def outline(page: PageText, indexes: range) -> list[OutlineEntry]:
    """Every part's heading with the characters it adds to the Markdown (the separator included), so the
    sizes add up to the length of the same text read whole."""
    return [
        {
            "heading": page.parts[index].heading,
            "level": page.parts[index].level,
            "anchor": page.parts[index].anchor,
            "url": anchored(page.url, page.parts[index].anchor),
            "characters": len(page.markdown(index)) + (len(SEPARATOR) if index + 1 < indexes.stop else 0),
        }
        for index in indexes
    ]


def unknown_section(section: str, path: str, headings: list[str]) -> InvalidArgument:
    nearest = difflib.get_close_matches(section, headings, n=NEAREST_HEADINGS, cutoff=0) if headings else []
    names = ", ".join(repr(heading) for heading in nearest) or "none"
    return InvalidArgument(
        f"No section {section!r} in {path!r}; give a heading as search returns it or its anchor id. "
        f"Nearest headings: {names}. Use view='outline' for all of them."
    )


def read_document(
    conn: sqlite3.Connection,
    path: str,
    section: str | None = None,
    view: str = "markdown",
    offset: int = 0,
    max_chars: int = 20_000,
) -> ReadAnswer:
    check_choice("view", view, VIEWS)
    check_range("offset", offset, 0)
    check_range("max_chars", max_chars, 1, READ_CHARS)
    row = conn.execute(
        "SELECT id, path, title, url, modified, meta, fingerprint FROM documents WHERE path = ?", [path]
    ).fetchone()
    if row is None:
        raise no_document("path", path)
    document_id, path, title, url, modified, meta, fingerprint = row
    page = page_text(conn, document_id, fingerprint, url)
    indexes, chosen = range(len(page.parts)), None
    if section is not None:
        first = find_part(page.parts, section)
        if first is None:
            raise unknown_section(section, path, [part.heading for part in page.parts if part.level])
        indexes, chosen = section_span(page.parts, first), page.parts[first]
    headings: list[OutlineEntry] | None = None
    if view == "outline":
        headings, piece, next_offset = outline(page, indexes), "", None
    else:
        if view == "source":
            text = source_markdown(conn, document_id, chosen)
        else:
            # One character past the piece tells whether anything is left.
            text = page.text(indexes, limit=offset + max_chars + 1)
        piece = text[offset : offset + max_chars]
        end = offset + len(piece)
        next_offset = end if end < len(text) else None
    return {
        "path": path,
        "title": title,
        "url": url,
        "modified": rfc3339(modified),
        "meta": json.loads(meta),
        "section": None if chosen is None else read_section(chosen, url),
        "outline": headings,
        "markdown": piece,
        "next_offset": next_offset,
    }


def read_section(part: Part, url: str) -> ReadSection:
    return {"heading": part.heading, "level": part.level, "anchor": part.anchor, "url": anchored(url, part.anchor)}


def source_markdown(conn: sqlite3.Connection, document_id: int, wanted: Part | None) -> str:
    """The page's Markdown file as written (front matter included), or the stretch of it that holds the
    section that begins with the part `wanted`.

    A section is found in the source by its heading's text or its explicit `{ #anchor }`; a heading the
    source does not write (generated by a plugin, raw HTML) has no stretch of its own, and the error says so.
    """
    markdown: str = conn.execute("SELECT markdown FROM sources WHERE document_id = ?", [document_id]).fetchone()[0]
    if not markdown:
        raise InvalidArgument(
            "The index holds no Markdown source for this page (an empty file, or a site indexed from its HTML by "
            "`mkdocs-vault-mcp index` without --docs-dir); read it with view='markdown'."
        )
    if wanted is None:
        return markdown
    front_matter = FRONT_MATTER.match(markdown)
    body_start = front_matter.end() if front_matter else 0
    headings = [h for h in markdown_headings(markdown) if h.start >= body_start]
    if wanted.level == 0:
        return markdown[body_start : headings[0].start if headings else len(markdown)]
    for index, heading in enumerate(headings):
        if (wanted.anchor and heading.anchor == wanted.anchor) or _as_shown(heading.text) == _normalized(
            wanted.heading
        ):
            end = next((h.start for h in headings[index + 1 :] if h.level <= heading.level), len(markdown))
            return markdown[heading.start : end]
    raise InvalidArgument(
        f"The section {wanted.heading!r} is not written as a Markdown heading in the page's source (a plugin, "
        "a snippet or raw HTML made it); read it with view='markdown', or read the whole source."
    )
