"""`llms.txt` and `llms-full.txt` (llmstxt.org's format) from the pages of one language: the site's name as the H1,
its description as a blockquote, then one H2 per navigation group, each page a link to its Markdown copy with its
one-line description. Pages that the `nav` of mkdocs.yml does not list go last, under `## Optional`, the section
that llmstxt.org lets a reader skip; without a `nav`, pages are grouped by folder, as MkDocs' own navigation does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from mkdocs.utils import dirname_to_title

TOP_GROUP = "Pages"  # the pages the navigation lists outside any section
OPTIONAL = "Optional"  # llmstxt.org: links a reader may skip when it needs a shorter context
DESCRIPTION_CHARS = 300
_EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


@dataclass(frozen=True)
class AgentPage:
    """One published page as the agent files show it."""

    path: str
    title: str
    url: str  # the page's own URL, as the index has it
    link: str  # where llms.txt links: the Markdown copy, else the page
    description: str
    modified: str  # RFC 3339
    markdown: str  # the `read` answer's markdown for the whole page


def description(meta: dict[str, Any], summary: str) -> str:
    """Front matter `description`, else the first sentence of the page's summary, on one line."""
    given = meta.get("description")
    text = " ".join((given if isinstance(given, str) and given.strip() else summary).split())
    if not isinstance(given, str) or not given.strip():
        text = _SENTENCE_END.split(text, maxsplit=1)[0]
    return text if len(text) <= DESCRIPTION_CHARS else text[: DESCRIPTION_CHARS - 1].rstrip() + "…"


def nav_entries(nav: Any, trail: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """(the titles of the sections it is in, path) for each page that a `nav` as written in mkdocs.yml lists."""
    for item in nav if isinstance(nav, list) else []:
        if isinstance(item, str):
            if not _EXTERNAL.match(item):
                yield trail, PurePosixPath(item.lstrip("/")).as_posix()
        elif isinstance(item, dict):
            for title, value in item.items():
                if isinstance(value, list):
                    yield from nav_entries(value, (*trail, str(title)))
                elif isinstance(value, str) and not _EXTERNAL.match(value):
                    yield trail, PurePosixPath(value.lstrip("/")).as_posix()


def language_variants(path: str, language: str | None) -> tuple[str, ...]:
    """The paths a page of the `nav` has in `language` (mkdocs-static-i18n: `fr/page.md` or `page.fr.md`)."""
    if language is None:
        return (path,)
    stem, dot, extension = path.rpartition(".")
    return (path, f"{language}/{path}", f"{stem}.{language}.{extension}" if dot else f"{path}.{language}")


def grouped(pages: list[AgentPage], nav: Any, language: str | None) -> list[tuple[str, list[AgentPage]]]:
    """The pages in navigation order, grouped as the navigation groups them; every page once."""
    by_path = {page.path: page for page in pages}
    groups: dict[str, list[AgentPage]] = {}
    if nav is None:
        for page in sorted(pages, key=lambda page: auto_nav_order(page.path)):
            groups.setdefault(folder_title(page.path, language), []).append(page)
        return list(groups.items())
    listed: set[str] = set()
    for trail, path in nav_entries(nav):
        found = next((by_path[name] for name in language_variants(path, language) if name in by_path), None)
        if found is not None and found.path not in listed:
            listed.add(found.path)
            groups.setdefault(" / ".join(trail) or TOP_GROUP, []).append(found)
    rest = sorted((page for page in pages if page.path not in listed), key=lambda page: auto_nav_order(page.path))
    if rest:
        groups.setdefault(OPTIONAL, []).extend(rest)
    return list(groups.items())


def auto_nav_order(path: str) -> tuple[tuple[str, ...], bool, str]:
    """MkDocs' order of a navigation made from the files: by folder, a folder's index page first."""
    parts = PurePosixPath(path).parts
    return parts[:-1], PurePosixPath(path).stem not in ("index", "README"), parts[-1]


def folder_title(path: str, language: str | None) -> str:
    """A group named as MkDocs names a folder's section (`getting-started` -> `Getting started`)."""
    folders = list(PurePosixPath(path).parts[:-1])
    if folders and folders[0] == language:
        folders = folders[1:]
    return " / ".join(dirname_to_title(folder) for folder in folders) or TOP_GROUP


def link_text(text: str) -> str:
    return re.sub(r"([\\\[\]])", r"\\\1", " ".join(text.split()))


def link_target(url: str) -> str:
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def heading(site_name: str, site_description: str) -> str:
    lines = [f"# {' '.join(site_name.split()) or 'Documentation'}", ""]
    if site_description:
        lines += [f"> {' '.join(site_description.split())}", ""]
    return "\n".join(lines)


def llms_txt(site_name: str, site_description: str, groups: list[tuple[str, list[AgentPage]]], note: str) -> str:
    lines = [heading(site_name, site_description), note, ""]
    for title, pages in groups:
        lines += [f"## {title}", ""]
        for page in pages:
            entry = f"- [{link_text(page.title)}]({link_target(page.link)})"
            lines.append(f"{entry}: {page.description}" if page.description else entry)
        lines.append("")
    return "\n".join(lines)


def page_document(page: AgentPage) -> str:
    """A page's Markdown copy: its title, URL and modification time as front matter, then the `read` answer."""
    return (
        f"---\ntitle: {yaml_string(page.title)}\nurl: {yaml_string(page.url)}\nmodified: {page.modified}\n---\n\n"
        f"{page.markdown}\n"
    )


def yaml_string(text: str) -> str:
    """A double-quoted YAML scalar; JSON's string escapes are YAML's too."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + re.sub(r"[\x00-\x1f\x7f]", lambda match: f"\\x{ord(match[0]):02x}", escaped) + '"'


def llms_full_txt(
    site_name: str, site_description: str, groups: list[tuple[str, list[AgentPage]]], limit: int
) -> tuple[str, int]:
    """Every page's Markdown copy in navigation order, up to `limit` characters; what did not fit is listed at
    the end by its link. Also how many pages were left out."""
    pieces = [heading(site_name, site_description) + "Every page of this site as Markdown (mkdocs-vault-mcp).\n"]
    size, left_out = len(pieces[0]), []
    for _, pages in groups:
        for page in pages:
            document = page_document(page)
            if size + len(document) + 1 > limit:
                left_out.append(page)
                continue
            pieces.append(document)
            size += len(document) + 1
    if left_out:
        pieces.append(
            f"## Left out\n\n{len(left_out)} pages did not fit in this file's limit of {limit:,} characters; "
            "each is at its own link:\n\n"
            + "\n".join(f"- [{link_text(page.title)}]({link_target(page.link)})" for page in left_out)
            + "\n"
        )
    return "\n".join(pieces), len(left_out)
