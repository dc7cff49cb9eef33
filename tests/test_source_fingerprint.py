"""A page's file enters its fingerprint by size and modification time (an unchanged page's file is not
read again), so an edit that changes neither the HTML nor the front matter still re-indexes the page's source."""

from __future__ import annotations

from helpers.incremental_site import PAGES, summary


def stored_source(site, path: str) -> str:
    with site.db() as conn:
        return conn.execute(
            "SELECT s.markdown FROM sources s JOIN documents d ON d.id = s.document_id WHERE d.path = ?", [path]
        ).fetchone()[0]


def test_an_edit_only_the_source_shows_is_indexed_and_an_untouched_file_is_not(site):
    site.write_pages(PAGES)
    site.build()
    assert summary(site) == (5, 10, 5, 0, 0)
    site.build()
    assert summary(site) == (5, 10, 0, 5, 0)

    # A YAML comment: the same front matter values, the same HTML, another source file.
    edited = PAGES["page-1.md"].replace("tags: [t1, shared]", "tags: [t1, shared]  # reviewed")
    site.write("page-1.md", edited)
    site.build()
    assert summary(site) == (5, 10, 1, 4, 0)
    assert stored_source(site, "page-1.md") == edited
    assert stored_source(site, "page-2.md") == PAGES["page-2.md"]


def test_a_known_fingerprint_gives_the_same_answer_as_searching_the_html_for_run_dependent_parts():
    from mkdocs_vault_mcp.page.fingerprints import page_fingerprint

    backlinks = '<div class="doc-backlinks"><b class="doc-backlink-type">Used by:</b><a href="b/">B</a></div>'
    pages = {
        "plain": "<p>The lighthouse keeper.</p>",
        "address": "<p>timeout=&lt;UseClientDefault object at 0x7f5f50b18290&gt;</p>",
        "backlinks": f"<p>x</p>{backlinks}",
    }
    for name, html in pages.items():
        whole = page_fingerprint(html, "Title", "/p/", {"tags": ["a"]}, None, "mtime", (1, 2))
        for known in ("", whole, f"{whole}/late", "another"):
            assert page_fingerprint(html, "Title", "/p/", {"tags": ["a"]}, None, "mtime", (1, 2), known=known) == whole
        # The same text with another address: the same page to the index.
        moved = html.replace("7f5f50b18290", "55d0c0ffee00")
        assert page_fingerprint(moved, "Title", "/p/", {"tags": ["a"]}, None, "mtime", (1, 2), known=whole) == whole, (
            name
        )
