"""What changed on a page between two versions of a site mike publishes: its sections added, removed and changed.

Read from the two versions' own indexes, each in its own read (mcp/versions.py gives each version a reader):
`page_sections` reads the older version's page, `section_changes` compares it with the answered version's. A
section is matched by its anchor (by its heading where it has none), and its text is the Markdown `read` gives.
A heading the page repeats (a changelog's "Added" under every release) is matched by the headings above it
instead, since its anchor is numbered by position (`added_2`) and shifts when a section is inserted above.
Links in a version's pages carry its folder (`/1.0/`), so lines are compared with that folder left out: a
section is not changed by its version's address alone.
"""

from __future__ import annotations

import difflib
import sqlite3
from collections import Counter
from dataclasses import dataclass

from ...errors import InvalidArgument
from ..answer_types import Changes, SectionChange
from ..filters import check_range
from .read import anchored, page_text

CHANGED_LINES = 40  # changed lines listed per section, at most
LINE_CHARS = 300  # characters kept of each listed line


@dataclass(frozen=True)
class Section:
    heading: str
    level: int
    anchor: str | None
    markdown: str


@dataclass(frozen=True)
class PageSections:
    """A page of one version, as `page_sections` read it; `url` None: the version has no such page."""

    version: str
    url: str | None
    sections: tuple[Section, ...]


def page_sections(conn: sqlite3.Connection, path: str, version: str) -> PageSections:
    row = conn.execute("SELECT id, url, fingerprint FROM documents WHERE path = ?", [path]).fetchone()
    if row is None:
        return PageSections(version, None, ())
    document_id, url, fingerprint = row
    page = page_text(conn, document_id, fingerprint, url)
    parts = page.parts
    sections = tuple(Section(part.heading, part.level, part.anchor, page.markdown(i)) for i, part in enumerate(parts))
    return PageSections(version, url, sections)


def section_changes(
    conn: sqlite3.Connection, path: str, version: str, since: PageSections, limit: int, offset: int
) -> Changes:
    """The sections of `path` added, removed and changed since the version `since` read; added and changed in the
    answered version's order, then the removed in theirs."""
    check_range("offset", offset, 0)
    newer = page_sections(conn, path, version)
    if newer.url is None and since.url is None:
        raise InvalidArgument(
            f"No page at target {path!r} in version {version} or in {since.version} (paths are exact and "
            "case-sensitive, e.g. 'guide/install.md'); find paths with search or query_documents."
        )
    rows = compared(newer, since)
    if newer.url is None:
        page = "gone"
    elif since.url is None:
        page = "new"
    else:
        page = "changed" if rows else "unchanged"
    end = offset + limit
    return {
        "result": rows[offset:end],
        "total": len(rows),
        "next_offset": end if end < len(rows) else None,
        "page": page,
    }


def compared(newer: PageSections, since: PageSections) -> list[SectionChange]:
    """The rows: added and changed in the newer page's order, then the removed in the older page's."""
    repeated = repeated_headings(since.sections) | repeated_headings(newer.sections)
    older = keyed(since.sections, repeated)
    kept = keyed(newer.sections, repeated)
    rows: list[SectionChange] = []
    for key, section in kept.items():
        before = older.get(key)
        if before is None:
            rows.append(row("added", section, newer.url, None, since.url))
            continue
        lines = changed_lines(before.markdown, since.version, section.markdown, newer.version)
        if lines:
            rows.append(row("changed", section, newer.url, lines, since.url, before))
    rows += [row("removed", section, None, None, since.url) for key, section in older.items() if key not in kept]
    return rows


def repeated_headings(sections: tuple[Section, ...]) -> set[str]:
    return {heading for heading, count in Counter(s.heading for s in sections).items() if count > 1}


def keyed(sections: tuple[Section, ...], repeated: set[str]) -> dict[str, Section]:
    """The sections by the key that matches them across versions: the anchor, or the heading where it has none;
    for a heading repeated in either version, the headings above it and its own (numbered if those repeat too)."""
    above: list[Section] = []
    seen: Counter[str] = Counter()
    keys: dict[str, Section] = {}
    for section in sections:
        while above and above[-1].level >= section.level:
            above.pop()
        if section.heading in repeated:
            trail = "\n".join(s.heading for s in [*above, section])  # no anchor holds a line break
            seen[trail] += 1
            keys[f"{trail}\n{seen[trail]}"] = section
        else:
            keys[section.anchor or section.heading] = section
        above.append(section)
    return keys


def row(
    change: str,
    section: Section,
    url: str | None,
    lines: list[str] | None,
    since_url: str | None,
    before: Section | None = None,
) -> SectionChange:
    """`before`: the older version's section where its anchor differs (a repeated heading's numbered anchor)."""
    shown = lines or []
    since_anchor = (before or section).anchor
    return {
        "change": change,
        "heading": section.heading,
        "level": section.level,
        "url": anchored(url, section.anchor) if url is not None and change != "removed" else None,
        "since_url": anchored(since_url, since_anchor) if since_url is not None and change != "added" else None,
        "lines": [line[:LINE_CHARS] for line in shown[:CHANGED_LINES]],
        "more_lines": max(0, len(shown) - CHANGED_LINES),
    }


def changed_lines(before: str, before_version: str, after: str, after_version: str) -> list[str]:
    """The lines removed ("- ") and added ("+ "), compared without each version's folder in its addresses."""
    old, new = before.splitlines(), after.splitlines()
    same_old = [line.replace(f"/{before_version}/", "/") for line in old]
    same_new = [line.replace(f"/{after_version}/", "/") for line in new]
    lines: list[str] = []
    matcher = difflib.SequenceMatcher(None, same_old, same_new, autojunk=False)
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if tag != "equal":
            lines += [f"- {line}" for line in old[old_start:old_end]]
            lines += [f"+ {line}" for line in new[new_start:new_end]]
    return lines
