"""The stats page: a generated page, drawn from the snapshot, rendered through the site's theme.

The page's Markdown is a stub (its title); its HTML is written in `on_page_context`, once the index is
committed. Its sections are here; their charts (build_steps/stats_charts.py) are HTML with inline SVG bars, coloured by
`assets/stats.css` (copied into the site as `vault-mcp/stats.css`) through the theme's CSS variables:
no script, no inline style, nothing loaded from outside the site.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.plugins import get_plugin_logger
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.nav import Navigation
from mkdocs.structure.toc import TableOfContents, get_toc
from mkdocs.utils import get_relative_url

from .snapshot import SNAPSHOT_URI
from .stats_charts import Bar, PageHtml, bar_chart, escaped, months, number, plural, ranked

log = get_plugin_logger("vault-mcp")

TITLE = "Site statistics"
CSS_URI = "vault-mcp/stats.css"
CSS_SOURCE = Path(__file__).parent.parent / "assets" / "stats.css"


# -- the files ---------------------------------------------------------------------------------


def src_uri(option: str) -> str:
    """The page's source path for the `stats_page` option.

    `stats/` -> `stats/index.md` (URL `stats/`), `reports/site-stats.md` as given, `stats` -> `stats.md`.
    """
    option = option.replace("\\", "/")
    directory = option.endswith("/")
    option = option.strip("/")
    if directory:
        return option + "/index.md"
    return option if option.endswith(".md") else option + ".md"


def add_files(files: Files, config: Any, option: str, prefix: str = "") -> File | None:
    """Add the page and its stylesheet; None (with a warning) when the site already has that page.

    `prefix`: the folder of the site a language other than the default one is published in
    (mkdocs-static-i18n), so that each language has its own stats page (`fr/stats/`).
    """
    uri = f"{prefix}/{src_uri(option)}" if prefix else src_uri(option)
    page = File.generated(config, uri, content=f"# {TITLE}\n", inclusion=InclusionLevel.NOT_IN_NAV)
    taken = files.get_file_from_path(uri) or next((f for f in files if f.dest_uri == page.dest_uri), None)
    if taken is not None:
        log.warning(
            f"The stats page would be written to '{page.dest_uri}', which '{taken.src_uri}' "
            "already produces; no stats page is generated. Set the plugin option stats_page to another "
            "path (such as 'site-stats/') or to false."
        )
        return None
    files.append(page)
    if files.get_file_from_path(CSS_URI) is None:  # a docs/vault-mcp/stats.css of the site's own wins
        files.append(File.generated(config, CSS_URI, abs_src_path=str(CSS_SOURCE)))
    return page


def add_to_nav(nav: Navigation, file: File) -> None:
    """Append the page as the last top-level entry, unless the site's `nav` already lists it."""
    page = file.page
    if page is None or any(item is page for item in nav.pages):
        return
    previous = nav.pages[-1] if nav.pages else None
    page.parent = None
    page.previous_page, page.next_page = previous, None
    if previous is not None:
        previous.next_page = page
    nav.items.append(page)
    nav.pages.append(page)


# -- the page ----------------------------------------------------------------------------------


def render(
    snapshot: dict[str, Any],
    stats: dict[str, Any],
    broken: dict[str, Any],
    page_url: str,
    language: str | None = None,
) -> tuple[str, TableOfContents]:
    """The page's HTML and table of contents.

    `snapshot` is what snapshot.json holds: every count by folder, language, tag and month is drawn from its
    aggregate answers, never counted again. `stats` is the stats tool's answer on the same index, for what no
    aggregate answer holds (sections, oldest and newest modification). `broken` is the links tool's answer for
    show="broken" on the same index (its first rows and their total). `page_url` is the page's site-relative URL.
    `language`: on a multilingual site, the language this page is published in; `snapshot` and `stats`
    then count that language's pages.
    """
    out = PageHtml()
    snapshot_href = get_relative_url(SNAPSHOT_URI, page_url)
    site = escaped(snapshot["site_name"] or "this site")
    if snapshot.get("version"):  # one of the versions mike publishes side by side
        site += f' <span class="vm-version" data-version="{escaped(snapshot["version"])}">{escaped(snapshot["version"])}</span>'
    if language is None:
        lead = (
            f"How many pages {site} publishes, where they live, how they are tagged and when they last changed. "
            f'The numbers are in <a href="{escaped(snapshot_href)}">snapshot.json</a>, the same answers the '
            "site's MCP server gives."
        )
    else:
        lead = (
            f'How many pages {site} publishes in <span data-language="{escaped(language)}">{escaped(language)}</span> '
            "(untranslated pages shown in it included), where they live, how they are tagged and when they "
            f'last changed. Every language together is in <a href="{escaped(snapshot_href)}">snapshot.json</a>, '
            "the same answers the site's MCP server gives."
        )
    out.add(
        f'<link rel="stylesheet" href="{escaped(get_relative_url(CSS_URI, page_url))}">',
        '<div class="vm-stats">',
        f'<h1 id="site-statistics">{TITLE}</h1>',
        f'<p class="vm-lead">{lead}</p>',
    )
    totals(out, snapshot, stats)
    if language is None:
        languages(out, snapshot)
    folders(out, snapshot)
    tags(out, snapshot)
    most_linked(out, snapshot)
    broken_links(out, snapshot, broken, page_url)
    months(out, snapshot)
    out.add(
        f'<p class="vm-source">Snapshot generated {escaped(snapshot["generated_at"])} '
        f"(schema version {escaped(snapshot['schema_version'])}): "
        f'<a href="{escaped(snapshot_href)}">snapshot.json</a>. '
        "Modification times are in UTC.</p>",
        "</div>",
    )
    toc = get_toc([{"level": 1, "id": "site-statistics", "name": TITLE, "children": out.headings}])
    return "".join(out.parts), toc


def totals(out: PageHtml, snapshot: dict[str, Any], stats: dict[str, Any]) -> None:
    out.heading("Totals")
    cards = [
        ("pages", "Pages", snapshot["total"]),
        ("sections", "Sections", stats["section_count"]),
        ("folders", "Folders", len(snapshot["by_folder"]["buckets"])),
        ("languages", "Languages", len(snapshot["by_language"]["buckets"])),
    ]
    by_tag = snapshot["by_tag"]
    if by_tag:
        for name, result in by_tag.items():
            cards.append((f"tag:{name}", name.capitalize(), len(result["buckets"])))
    else:
        cards.append(("tags", "Tags", 0))
    out.add('<dl class="vm-totals">')
    for key, label, count in cards:
        more = "+" if truncated(snapshot, key) else ""
        out.add(
            f'<div class="vm-total" data-stat="{escaped(key)}" data-count="{count}">'
            f"<dt>{escaped(label)}</dt><dd>{number(count)}{more}</dd></div>"
        )
    links = snapshot.get("links")
    if links is not None:
        cards = [
            ("broken_links", "Broken links", links["broken_links"]),
            ("orphan_pages", "Orphan pages", links["orphan_pages"]),
        ]
        for key, label, count in cards:
            out.add(
                f'<div class="vm-total" data-stat="{key}" data-count="{count}">'
                f"<dt>{label}</dt><dd>{number(count)}</dd></div>"
            )
    for key, label in (("oldest_modified", "Oldest change"), ("newest_modified", "Newest change")):
        instant = stats[key]
        shown = f'<time datetime="{escaped(instant)}">{escaped(instant[:10])}</time>' if instant else "none"
        out.add(
            f'<div class="vm-total vm-total--date" data-stat="{key}" data-value="{escaped(instant or "")}">'
            f"<dt>{label}</dt><dd>{shown}</dd></div>"
        )
    out.add("</dl>")


def truncated(snapshot: dict[str, Any], card: str) -> bool:
    """Whether a card's count is the number of buckets of an answer that held more than it could return."""
    if card.startswith("tag:"):
        return bool(snapshot["by_tag"][card[4:]]["truncated"])
    answer = {"folders": "by_folder", "languages": "by_language"}.get(card)
    return answer is not None and bool(snapshot[answer]["truncated"])


def languages(out: PageHtml, snapshot: dict[str, Any]) -> None:
    out.heading("Pages by language")
    result = snapshot["by_language"]
    if not result["buckets"]:
        out.add("<p>No pages.</p>")
        return
    bars = ranked(result["buckets"], str, ("language", "languages"))
    bar_chart(out, "languages", bars, "Pages by language", ("Language", "Pages"))


def folder_label(key: str) -> str:
    return key if key else "(root)"


def folders(out: PageHtml, snapshot: dict[str, Any]) -> None:
    out.heading("Pages by folder")
    result = snapshot["by_folder"]
    if not result["buckets"]:
        out.add("<p>No pages.</p>")
        return
    bars = ranked(result["buckets"], folder_label, ("folder", "folders"))
    out.add(
        "<p>Pages in each folder of the docs, as <code>aggregate_documents</code> counts them: a page counts in "
        "its own folder, not in the folders above it; (root) is the pages at the top of the docs.</p>"
    )
    shown = number(len(result["buckets"]))
    note = f"Only the {shown} largest folders are in the snapshot." if result["truncated"] else ""
    bar_chart(out, "folders", bars, "Pages by folder", ("Folder", "Pages"), note)


def tags(out: PageHtml, snapshot: dict[str, Any]) -> None:
    if not snapshot["by_tag"]:
        out.heading("Most used tags")
        out.add("<p>No page of this site has a tag field (plugin option <code>tag_fields</code>).</p>")
        return
    for name, result in snapshot["by_tag"].items():
        out.heading(f"Most used {name}")
        bars = ranked(result["buckets"], str, ("value", "values"))
        values = plural(len(result["buckets"]), "value", "values")
        notes = [f"{values}; a page with several values counts once for each."]
        if result["missing"]:
            notes.append(f"{plural(result['missing'], 'page has', 'pages have')} no {name}.")
        if result["truncated"]:
            notes.append(f"Only the {number(len(result['buckets']))} most used values are in the snapshot.")
        title, columns = f"Pages per value of {name}", (name.capitalize(), "Pages")
        bar_chart(out, f"tag:{name}", bars, title, columns, " ".join(notes))


def most_linked(out: PageHtml, snapshot: dict[str, Any]) -> None:
    links = snapshot.get("links")
    if links is None:
        return
    out.heading("Most linked pages")
    if not links["most_linked"]:
        out.add("<p>No page links to another.</p>")
        return
    out.add(
        f"<p>{plural(links['links'], 'link', 'links')} between pages, "
        f"{plural(links['external_links'], 'link', 'links')} to other sites; "
        f"{plural(links['broken_links'], 'link is', 'links are')} broken "
        f"({number(links['broken_pages'])} to a missing page, {number(links['broken_anchors'])} to a missing "
        f"anchor) and {plural(links['orphan_pages'], 'page is', 'pages are')} orphans (not in the nav, linked "
        "from no other page). The MCP tool <code>links</code> lists them.</p>"
    )
    bars = [Bar(page["title"] or page["path"], page["linked_from"], page["path"]) for page in links["most_linked"]]
    bar_chart(out, "most_linked", bars, "Pages linked from the most other pages", ("Page", "Linking pages"))


def broken_links(out: PageHtml, snapshot: dict[str, Any], broken: dict[str, Any], page_url: str) -> None:
    """The broken links the Totals card counts: the first rows of the links tool's answer, and how many more."""
    if snapshot.get("links") is None:
        return
    out.heading("Broken links")
    rows, total = broken["result"], broken["total"]
    if not rows:
        out.add("<p>No link of this site leads to a missing page or anchor.</p>")
        return
    out.add(
        f"<p>{plural(total, 'link leads', 'links lead')} to a page or an anchor the site does not have, "
        "listed by the page they are on.</p>",
        '<table class="vm-broken"><thead><tr><th>Page</th><th>Link</th><th>Leads to</th></tr></thead><tbody>',
    )
    for row in rows:
        target = (row["target"] or row["url"]) + (f"#{row['anchor']}" if row["anchor"] else "")
        out.add(
            f'<tr data-path="{escaped(row["path"])}" data-broken="{escaped(row["broken"])}">'
            f'<td><a href="{escaped(site_href(row["section_url"], page_url))}"><code>{escaped(row["path"])}</code></a>'
            f"{section_note(row)}</td><td>{escaped(row['text'])}</td><td><code>{escaped(target)}</code> "
            f'<span class="vm-note">(no such {escaped(row["broken"])})</span></td></tr>'
        )
    out.add("</tbody></table>")
    if total > len(rows):
        out.add(
            f'<p class="vm-note">And {plural(total - len(rows), "more", "more")}: the MCP tool <code>links</code> '
            'with <code>show="broken"</code> lists every one.</p>'
        )


def section_note(row: dict[str, Any]) -> str:
    return f'<br><span class="vm-note">{escaped(row["section"])}</span>' if row["section"] else ""


def site_href(url: str, page_url: str) -> str:
    """A page's address as a link from this page: relative when the index holds it from the site's root."""
    if url.startswith("/") and not url.startswith("//"):
        path, hash_mark, anchor = url[1:].partition("#")
        href = get_relative_url(path, page_url)
        if path == "" or path.endswith("/"):  # a folder's address keeps its slash: `../`, not `..`
            href = href.rstrip("/") + "/"
        return href + hash_mark + anchor
    return url
