"""Spec sections 1-3 through a real `mkdocs build`: which pages are documents, their fields, section rows,
front matter values. Most tests read one module-scoped build of a site that has one page per rule."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest
from mkdocs.exceptions import Abort

from helpers.site import Site

SNIPPET = "Snippet text pulled in by pymdownx.snippets."
BROKEN = "broken/front-matter.md"
NON_ASCII = "Ünï côdé/dönnées.md"

PAGES = {
    "index.md": """
        Text before any heading.

        # Install { #first-steps }

        Install text.

        ## From PyPI

        --8<-- "pypi.md"

        ```console
        # not a heading
        $ pip install thing
        ```

        Setext two
        ----------

        Under setext.

        ### Deep { .special }

        Deep text.
        """,
    # Documents or not (spec section 1)
    "drafts/wip.md": "# Work in progress\n",
    "private/secret.md": "# Secret\n",
    "hidden.md": "# Hidden from the nav\n",
    "no-search.md": "---\nsearch:\n  exclude: true\n---\n# Not for search\n",
    "search-kept.md": "---\nsearch:\n  exclude: false\n---\n# Kept for search\n",
    "skip/this.md": "# Skipped\n",
    "skip/deeper/that.md": "# Skipped too\n",
    "notes/todo.private.md": "# Private notes\n",
    # Titles in MkDocs' order
    "titles/nav.md": "---\ntitle: Front matter title\n---\n# Heading title\n",
    "titles/front-matter.md": "---\ntitle: Front matter title\n---\n# Heading title\n",
    "titles/heading.md": "# Heading title { #custom-id }\n\nText.\n",
    "titles/file_name-only.md": "No heading at all.\n",
    "titles/markup.md": "# Tom &amp; Jerry *and* `<code>`\n",
    # Fields
    "Guide/Install Steps.md": "# Install steps\n",
    NON_ASCII: "# Données météo\n\nLes données de la station.\n",
    "summary/description.md": "---\ndescription: Given description, with a comma.\n---\n# Described\n\nFirst paragraph.\n",
    "summary/paragraph.md": """
        ---
        description: [not, a, string]
        ---
        # Paragraph summary

        !!! note "Admonition title"
            Admonition body.

        First paragraph of prose, with **markup** &amp; an [inline link](../index.md).

        Second paragraph.
        """,
    "summary/blank-description.md": '---\ndescription: "  "\n---\n# Blank\n\nThe paragraph instead.\n',
    "values.md": """
        ---
        title: Values
        tags: [alpha, beta, alpha, {nested: 1}, [inner]]
        keywords: "red, green, blue"
        padded: "  spaced  "
        flag: true
        disabled: false
        quoted_true: "true"
        year: 2024
        ratio: 1.5
        big: 10000000000
        day: 2024-06-12
        stamp: 2024-06-12 10:30:00
        stamp_utc: 2024-06-12T10:30:00Z
        stamp_offset: 2024-06-12T10:30:00.250000+02:00
        nothing: null
        empty: []
        obj: {a: 1}
        nested_only: [[1, 2]]
        2024: numeric key
        ~: null key
        ---
        # Values
        """,
    BROKEN: "---\ntitle: [unclosed\ntags: x\n---\n# Broken front matter\n\nStill indexed.\n",
}


def write_rich_site(root: Path) -> Site:
    (root / "snippets").mkdir(parents=True)
    (root / "snippets" / "pypi.md").write_text(SNIPPET + "\n", encoding="utf-8")
    site = Site(
        root,
        {
            "plugins": ["search", {"vault-mcp": {"exclude": ["skip/*", "*.private.md"]}}],
            "markdown_extensions": [
                "attr_list",
                "admonition",
                {"toc": {"permalink": True}},
                "pymdownx.superfences",
                {"pymdownx.snippets": {"base_path": [str(root / "snippets")], "check_paths": True}},
            ],
            "nav": [{"Navigation title": "titles/nav.md"}, "index.md"],
            "not_in_nav": "hidden.md\n",
            "draft_docs": "drafts/\n",
            "exclude_docs": "private/\n",
        },
    )
    site.write_pages(PAGES)
    # CRLF line endings everywhere, front matter and setext underlines included
    site.write(
        "crlf.md",
        "---\r\ntitle: CRLF page\r\ntags: [crlf]\r\n---\r\nCRLF heading\r\n"
        "============\r\n\r\nCRLF body.\r\n\r\n## Second\r\n\r\nMore.\r\n",
        newline="",
    )
    site.write("bom.md", "---\ntitle: BOM page\ntags: [bom]\n---\n# BOM heading\n\nBOM body.\n", encoding="utf-8-sig")
    assert (site.docs / "bom.md").read_bytes().startswith(b"\xef\xbb\xbf---")
    assert b"\r\n" in (site.docs / "crlf.md").read_bytes()
    return site


@pytest.fixture(scope="module")
def rich(tmp_path_factory) -> Site:
    site = write_rich_site(tmp_path_factory.mktemp("rich"))
    site.build()
    return site


@pytest.fixture(scope="module")
def docs(rich) -> dict[str, dict]:
    return rich.documents()


# --- Which pages are documents (spec section 1) ---------------------------------------------------------


def test_documents_are_the_pages_that_the_build_publishes_less_the_excluded_ones(rich, docs):
    expected = {
        "index.md",
        "hidden.md",
        "search-kept.md",
        "titles/nav.md",
        "titles/front-matter.md",
        "titles/heading.md",
        "titles/file_name-only.md",
        "titles/markup.md",
        "Guide/Install Steps.md",
        NON_ASCII,
        "summary/description.md",
        "summary/paragraph.md",
        "summary/blank-description.md",
        "values.md",
        BROKEN,
        "crlf.md",
        "bom.md",
    }
    assert set(docs) == expected
    # the left-out pages are left out by the rule under test, not by accident: MkDocs published them
    for published in (
        "no-search/index.html",
        "skip/this/index.html",
        "skip/deeper/that/index.html",
        "notes/todo.private/index.html",
        "hidden/index.html",
    ):
        assert (rich.site_dir / published).is_file(), published


def test_drafts_reach_nothing_that_mkdocs_build_writes(rich, docs):
    assert not any(path.startswith("drafts/") for path in docs)
    assert not (rich.site_dir / "drafts").exists()
    snapshot = (rich.site_dir / "vault-mcp" / "snapshot.json").read_text(encoding="utf-8")
    assert "drafts" not in snapshot and "Work in progress" not in snapshot
    stats_page = (rich.site_dir / "stats" / "index.html").read_text(encoding="utf-8")
    assert "drafts" not in stats_page and "Work in progress" not in stats_page
    with rich.db() as conn:
        assert conn.execute(
            "SELECT count(*) FROM sections WHERE body LIKE '%Work in progress%' OR headings LIKE '%Work in progress%'"
        ).fetchone() == (0,)


def test_exclude_docs_pages_are_absent_and_not_in_nav_pages_present(docs):
    assert "private/secret.md" not in docs
    assert docs["hidden.md"]["title"] == "Hidden from the nav"


def test_search_exclude_front_matter_leaves_a_page_out_and_exclude_false_keeps_it(docs):
    assert "no-search.md" not in docs
    assert docs["search-kept.md"]["meta"] == {"search": {"exclude": False}}


def test_plugin_exclude_globs_match_the_whole_path(docs):
    # fnmatch globs: `*` also crosses `/`, so skip/* covers skip/deeper/that.md
    assert not {"skip/this.md", "skip/deeper/that.md", "notes/todo.private.md"} & set(docs)


def test_the_plugins_own_stats_page_is_generated_but_not_a_document(rich, docs):
    assert (rich.site_dir / "stats" / "index.html").is_file()
    assert not any(path.startswith("stats") for path in docs)


def test_respect_search_exclude_false_indexes_search_excluded_pages(tmp_path):
    site = Site(tmp_path, {"plugins": [{"vault-mcp": {"respect_search_exclude": False}}]})
    site.write("no-search.md", PAGES["no-search.md"])
    site.write("other.md", "# Other\n")
    site.build()
    assert set(site.documents()) == {"no-search.md", "other.md"}
    assert site.documents()["no-search.md"]["meta"] == {"search": {"exclude": True}}


BLOG_PAGES = {
    "index.md": "# Home\n",
    "blog/index.md": "# Blog\n",
    "blog/posts/first.md": "---\ndate: 2024-01-02\ncategories: [News]\n---\n# First post\n\nExcerpt.\n",
    "blog/posts/second.md": "---\ndate: 2024-02-03\ncategories: [News, Other]\n---\n# Second post\n\nExcerpt.\n",
}
GENERATED = {"blog/archive/2024.md", "blog/category/news.md", "blog/category/other.md", "stats/index.md"}


@pytest.mark.parametrize("include_generated", [False, True])
def test_pages_generated_by_plugins_are_documents_only_with_include_generated(tmp_path, include_generated):
    site = Site(
        tmp_path,
        {"theme": {"name": "material"}, "plugins": ["blog", {"vault-mcp": {"include_generated": include_generated}}]},
    )
    site.write_pages(BLOG_PAGES)
    site.build()
    for generated in ("blog/archive/2024", "blog/category/news", "blog/category/other", "stats"):
        assert (site.site_dir / generated / "index.html").is_file(), generated
    authored = {"index.md", "blog/index.md", "blog/posts/first.md", "blog/posts/second.md"}
    assert set(site.documents()) == (authored | GENERATED if include_generated else authored)


# --- Fields of a document (spec section 2) -------------------------------------------------------------


def test_path_keeps_case_spaces_and_non_ascii_and_folder_is_its_directory(docs):
    assert docs["Guide/Install Steps.md"]["folder"] == "Guide"
    assert docs[NON_ASCII]["folder"] == "Ünï côdé"
    assert docs[NON_ASCII]["title"] == "Données météo"
    assert docs["index.md"]["folder"] == ""
    assert docs["titles/heading.md"]["folder"] == "titles"


def test_url_without_site_url_is_relative_to_the_site_root(docs):
    assert docs["index.md"]["url"] == "/"
    assert docs["Guide/Install Steps.md"]["url"] == "/Guide/Install%20Steps/"
    assert docs[NON_ASCII]["url"] == "/%C3%9Cn%C3%AF%20c%C3%B4d%C3%A9/d%C3%B6nn%C3%A9es/"


def test_url_with_site_url_is_absolute_and_follows_use_directory_urls(tmp_path):
    site = Site(tmp_path, {"plugins": ["vault-mcp"], "site_url": "https://example.org/docs/"})
    site.write("index.md", "# Home\n")
    site.write("Guide/Page.md", "# Page\n")
    site.build()
    assert {p: d["url"] for p, d in site.documents().items()} == {
        "index.md": "https://example.org/docs/",
        "Guide/Page.md": "https://example.org/docs/Guide/Page/",
    }
    site.build(use_directory_urls=False)
    assert {p: d["url"] for p, d in site.documents().items()} == {
        "index.md": "https://example.org/docs/index.html",
        "Guide/Page.md": "https://example.org/docs/Guide/Page.html",
    }


def test_title_follows_mkdocs_order_nav_then_front_matter_then_h1_then_file_name(docs):
    assert docs["titles/nav.md"]["title"] == "Navigation title"
    assert docs["titles/front-matter.md"]["title"] == "Front matter title"
    assert docs["titles/heading.md"]["title"] == "Heading title"  # no `{ #custom-id }`, no permalink sign
    assert docs["titles/file_name-only.md"]["title"] == "File name only"
    assert docs["index.md"]["title"] == "Home"  # text comes before its H1, so MkDocs names it after the file


def test_title_and_headings_are_the_text_a_reader_sees_not_html(docs):
    # MkDocs' Page.title is `Tom &amp; Jerry and &lt;code&gt;` here, which the browser shows as below
    assert docs["titles/markup.md"]["title"] == "Tom & Jerry and <code>"
    assert json.loads(docs["titles/markup.md"]["headings"]) == ["Tom & Jerry and <code>"]


def test_meta_is_the_front_matter_as_json_with_iso_dates(docs):
    meta = docs["values.md"]["meta"]
    assert meta["day"] == "2024-06-12"
    assert meta["stamp"] == "2024-06-12T10:30:00"
    assert meta["stamp_offset"] == "2024-06-12T10:30:00.250000+02:00"
    assert meta["tags"] == ["alpha", "beta", "alpha", {"nested": 1}, ["inner"]]
    assert (meta["nothing"], meta["empty"], meta["obj"]) == (None, [], {"a": 1})
    assert meta["2024"] == "numeric key" and meta["null"] == "null key"  # YAML keys that are not strings
    assert (meta["flag"], meta["year"], meta["ratio"]) == (True, 2024, 1.5)


def test_summary_is_the_description_string_else_the_first_paragraph_of_prose(docs):
    assert docs["summary/description.md"]["summary"] == "Given description, with a comma."
    assert docs["summary/paragraph.md"]["summary"] == ("First paragraph of prose, with markup & an inline link.")
    assert docs["summary/blank-description.md"]["summary"] == "The paragraph instead."
    assert docs["index.md"]["summary"] == "Text before any heading."
    assert docs["titles/heading.md"]["summary"] == "Text."
    assert docs["hidden.md"]["summary"] == ""


def test_headings_are_atx_and_setext_in_order_without_fenced_code(docs):
    assert json.loads(docs["index.md"]["headings"]) == ["Install", "From PyPI", "Setext two", "Deep"]
    assert json.loads(docs["crlf.md"]["headings"]) == ["CRLF heading", "Second"]


def test_modified_is_stored_with_its_source(docs):
    # not in a git repository: `auto` falls back to the file's mtime (times are tested in test_build_modified.py)
    assert {doc["modified_source"] for doc in docs.values()} == {"mtime"}
    assert all(isinstance(doc["modified"], int) and doc["modified"] > 1_500_000_000_000_000 for doc in docs.values())


# --- Sections (spec section 3) ----------------------------------------------------------------------------


def test_sections_cut_at_every_heading_with_trails_and_rendered_ids(rich):
    rows = [(s["level"], s["anchor"], s["headings"], s["body"]) for s in rich.sections("index.md")]
    assert rows == [
        (0, None, "", "Text before any heading."),
        (1, "first-steps", "Install", "Install text."),
        (2, "from-pypi", "Install > From PyPI", f"{SNIPPET} # not a heading $ pip install thing"),
        (2, "setext-two", "Install > Setext two", "Under setext."),
        (3, "deep", "Install > Setext two > Deep", "Deep text."),
    ]


def test_each_section_row_carries_the_page_level_fields(rich, docs):
    for section in rich.sections("summary/paragraph.md"):
        assert (section["path"], section["title"], section["summary"]) == (
            "summary/paragraph.md",
            "Paragraph summary",
            docs["summary/paragraph.md"]["summary"],
        )


def test_no_attribute_list_or_permalink_sign_reaches_the_index(rich):
    with rich.db() as conn:
        texts = conn.execute(
            "SELECT title || headings || body FROM sections UNION ALL"
            " SELECT title || headings || summary FROM documents"
        ).fetchall()
    assert texts and not [t for (t,) in texts if "¶" in t or "{" in t or "#first-steps" in t or ".special" in t]


def test_full_text_search_uses_the_specified_tokenizer(rich):
    with rich.db() as conn:
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'sections_fts'").fetchone()[0]
        assert "porter unicode61 remove_diacritics 2" in sql

        def match(query: str) -> set[str]:
            return {p for (p,) in conn.execute("SELECT path FROM sections_fts WHERE sections_fts MATCH ?", [query])}

        assert match("donnees") == {NON_ASCII}  # diacritics removed
        assert match("snippet") == {"index.md"}  # snippets expanded before indexing
        assert match("installing") >= {"index.md", "Guide/Install Steps.md"}  # porter stemming


# --- Front matter values (spec section 3) -------------------------------------------------------------


def test_values_are_normalized_to_strings(rich):
    assert rich.values("values.md") == {
        "2024": ["numeric key"],
        "big": ["10000000000"],
        "day": ["2024-06-12"],
        "disabled": ["false"],
        "flag": ["true"],
        "keywords": ["red, green, blue"],  # never split on commas
        "null": ["null key"],
        "padded": ["  spaced  "],  # never stripped
        "quoted_true": ["true"],
        "ratio": ["1.5"],
        "stamp": ["2024-06-12T10:30:00"],
        "stamp_offset": ["2024-06-12T10:30:00.250000+02:00"],
        "stamp_utc": ["2024-06-12T10:30:00+00:00"],
        "tags": ["alpha", "beta"],  # one per scalar member, de-duplicated; nested ones give nothing
        "title": ["Values"],
        "year": ["2024"],
    }


def test_auto_indexed_fields_are_the_keys_with_a_value_on_some_page(rich):
    with rich.db() as conn:
        fields = json.loads(conn.execute("SELECT value FROM info WHERE key = 'indexed_fields'").fetchone()[0])
    assert set(fields) == {
        "2024",
        "big",
        "day",
        "description",
        "disabled",
        "flag",
        "keywords",
        "null",
        "padded",
        "quoted_true",
        "ratio",
        "stamp",
        "stamp_offset",
        "stamp_utc",
        "tags",
        "title",
        "year",
    }
    assert not {"nothing", "empty", "obj", "nested_only", "search"} & set(fields)


def test_an_explicit_indexed_fields_list_indexes_only_those_keys(tmp_path):
    site = Site(tmp_path, {"plugins": [{"vault-mcp": {"indexed_fields": ["tags", "year", "absent"]}}]})
    site.write("values.md", PAGES["values.md"])
    site.build()
    assert site.values("values.md") == {"tags": ["alpha", "beta"], "year": ["2024"]}
    with site.db() as conn:
        stored = conn.execute("SELECT value FROM info WHERE key = 'indexed_fields'").fetchone()[0]
    assert set(json.loads(stored)) == {"tags", "year", "absent"}
    assert site.documents()["values.md"]["meta"]["keywords"] == "red, green, blue"  # meta stays whole


# --- Front matter that is not valid YAML, CRLF, BOM --------------------------------------------------


def test_broken_front_matter_is_indexed_with_empty_meta_and_one_warning(rich, docs):
    assert docs[BROKEN]["meta"] == {}
    # MkDocs shows the unreadable front matter as text, so its first heading is not the page's title
    assert docs[BROKEN]["title"] == "Front matter"
    assert rich.values(BROKEN) == {}
    assert "Still indexed." in " ".join(s["body"] for s in rich.sections(BROKEN))
    warnings = rich.messages(logging.WARNING)
    assert len(warnings) == 1, warnings
    assert f"'{BROKEN}'" in warnings[0] and "not valid YAML" in warnings[0]
    assert "did not find expected ',' or ']'" in warnings[0]  # the YAML error itself
    assert "line 2, column 8" in warnings[0]  # counted in lines of the file


def test_broken_front_matter_fails_a_strict_build(tmp_path):
    site = Site(tmp_path, {"plugins": ["vault-mcp"]})
    site.write("broken.md", PAGES[BROKEN])
    with pytest.raises(Abort):
        site.build(strict=True)
    assert len([m for m in site.messages(logging.WARNING) if "broken.md" in m]) == 1


def test_a_page_starting_with_a_rule_is_not_taken_for_broken_front_matter(tmp_path):
    site = Site(tmp_path, {"plugins": ["vault-mcp"]})
    site.write("rule.md", "---\n\nJust a horizontal rule first.\n")
    site.write("after.md", "---\ntitle: After\n---\n---\n\nA rule right after the front matter.\n")
    site.build()
    assert site.messages(logging.WARNING) == []
    assert site.documents()["after.md"]["meta"] == {"title": "After"}


def test_crlf_line_endings_and_a_bom_are_read_like_any_page(rich, docs):
    crlf = docs["crlf.md"]
    assert (crlf["title"], crlf["meta"]) == ("CRLF page", {"title": "CRLF page", "tags": ["crlf"]})
    assert [s["body"] for s in rich.sections("crlf.md")] == ["CRLF body.", "More."]
    assert (docs["bom.md"]["title"], docs["bom.md"]["meta"]) == ("BOM page", {"title": "BOM page", "tags": ["bom"]})
    assert json.loads(docs["bom.md"]["headings"]) == ["BOM heading"]
    assert "\ufeff" not in docs["bom.md"]["markdown"] and "\r" not in docs["crlf.md"]["markdown"]


def test_the_published_index_is_a_sqlite_database_with_one_row_per_section(rich, docs):
    with sqlite3.connect(rich.index_path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        sections = conn.execute("SELECT count(*) FROM sections").fetchone()[0]
        assert conn.execute("SELECT count(*) FROM sections_fts").fetchone()[0] == sections
        assert conn.execute(
            "SELECT count(*) FROM sections WHERE document_id NOT IN (SELECT id FROM documents)"
        ).fetchone() == (0,)
    assert sections == sum(len(rich.sections(path)) for path in docs)


def test_a_page_with_more_rows_than_one_statement_takes_keeps_every_row_in_order(tmp_path):
    """The writer inserts a page's sections, links and values many rows a statement (SQLite binds at most 999
    values to one): a page of 250 sections, 400 links and 120 tags keeps them all, in page order."""
    site = Site(tmp_path, {"plugins": ["search", {"vault-mcp": {"indexed_fields": ["tags"]}}]})
    tags = "".join(f"  - tag-{n:03}\n" for n in range(120))
    sections = "".join(f"## Part {n}\n\nText {n}: [next](#part-{n + 1}) and [home](index.md).\n\n" for n in range(250))
    site.write_pages({"index.md": "# Home\n", "big.md": f"---\ntags:\n{tags}---\n# Big\n\n{sections}"})
    site.build()
    headings = [section["heading"] for section in site.sections("big.md")]
    assert headings == ["Big", *(f"Part {n}" for n in range(250))]
    assert [section["position"] for section in site.sections("big.md")] == list(range(251))
    assert site.values("big.md")["tags"] == [f"tag-{n:03}" for n in range(120)]
    with site.db() as conn:
        links = conn.execute(
            "SELECT links.position, links.url FROM links JOIN documents d ON d.id = document_id"
            " WHERE d.path = 'big.md' ORDER BY links.rowid"
        ).fetchall()
    assert len(links) == 500
    assert [position for position, _ in links] == [n + 1 for n in range(250) for _ in range(2)]
    hits = conn.execute("SELECT count(*) FROM sections_fts WHERE sections_fts MATCH 'body:text'").fetchone()
    assert hits == (250,)
