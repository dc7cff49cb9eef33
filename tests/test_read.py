"""`read` gives back what `search` finds, as the reader sees it: a real `mkdocs build` of a site with the plugins
and extensions real sites run (mkdocstrings over a small package, snippets, macros, Material's content tabs,
admonitions and meta plugin, git-revision-date-localized, a hook that adds a heading), read through a real MCP
client session."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.git_repo import git
from helpers.mcp_session import Session, session_over
from helpers.site import Site

FIXTURES = Path(__file__).resolve().parent / "fixtures"

PAGES = {
    "index.md": """
        ---
        title: Weatherkit home
        ---
        # Welcome

        Station {{ station_name }} reports {{ 6 * 7 }} readings an hour.

        --8<-- "wiring.md"

        ## Install **quickly** with `pip` from [PyPI](https://pypi.org/project/weatherkit/)

        === "Python"

            ```python
            import weatherkit
            ```

        === "Shell"

            ```bash linenums="1"
            pip install weatherkit
            pip install weatherkit[plots]
            ```

        !!! note "Calibrate first"

            Every sensor drifts; see [calibration](guide/calibrate.md#drift).

        > ## Quoted heading
        >
        > Text inside the quote.

        <h2>Raw heading</h2>

        <p>A raw paragraph under it.</p>

        Secret zebra paragraph, left out of search.
        { data-search-exclude }

        <div data-search-exclude markdown>

        ## Hidden heading

        More secret zebra text.

        </div>

        ## Duplicate

        The first one.

        ## Duplicate

        The second one.

        ![Mast at dusk](img/mast.png)

        | Sensor | Unit |
        | --- | --- |
        | thermometer | °C |
        """,
    "api.md": """
        # API reference

        ::: weatherkit
        """,
    "advanced.md": """
        # Advanced environment configuration

        Matrices of stations and their overrides.
        """,
    "guide/calibrate.md": """
        ---
        tags: [setup]
        ---
        # Calibrate

        ## Drift { #drift }

        Sensors drift by a tenth of a degree a year.
        """,
}

SNIPPET = "## Wiring\n\nConnect the red wire to the anemometer's left terminal.\n"

HOOK = """
def on_page_markdown(markdown, page, **kwargs):
    return markdown + "\\n\\n## Feedback\\n\\nTell us what is missing.\\n"
"""

CONFIG = {
    "theme": {"name": "material"},
    "nav": [{"Home": "index.md"}, {"API": "api.md"}, {"Advanced": "advanced.md"}, {"Guide": ["guide/calibrate.md"]}],
    "extra": {"station_name": "North Ridge"},
    "hooks": ["hooks.py"],
    "plugins": [
        "meta",
        {"macros": {"on_error_fail": True}},
        {"mkdocstrings": {"handlers": {"python": {"paths": [str(FIXTURES / "weatherkit")]}}}},
        {"git-revision-date-localized": {"enable_creation_date": True}},
        "vault-mcp",
    ],
    "markdown_extensions": [
        "attr_list",
        "md_in_html",
        "admonition",
        "tables",
        {"toc": {"permalink": True}},
        "pymdownx.details",
        {"pymdownx.highlight": {"anchor_linenums": True}},
        "pymdownx.superfences",
        {"pymdownx.tabbed": {"alternate_style": True}},
        {"pymdownx.snippets": {"base_path": ["snippets"], "check_paths": True}},
    ],
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Site:
    site = Site(tmp_path_factory.mktemp("read"), dict(CONFIG))
    site.write_pages(PAGES)
    site.write("guide/.meta.yml", "audience: operators\n")
    (site.root / "snippets").mkdir()
    (site.root / "snippets" / "wiring.md").write_text(SNIPPET, encoding="utf-8")
    (site.root / "hooks.py").write_text(HOOK, encoding="utf-8")
    git(site.root, "init", "-q")
    git(site.root, "add", "-A")
    git(site.root, "commit", "-q", "-m", "Pages")
    site.build_in_root()  # snippets' base_path is relative to the site's folder
    return site


@pytest.fixture(scope="module")
def mcp(built: Site) -> Iterator[Session]:
    with session_over(built.index_path) as session:
        yield session


def read(mcp: Session, path: str, **arguments) -> str:
    return mcp.ok("read", path=path, max_chars=100_000, **arguments)["markdown"]


def searchable_sections(site: Site) -> list[tuple[str, int, str, str | None]]:
    with sqlite3.connect(site.index_path) as conn:
        return conn.execute(
            "SELECT d.path, s.level, s.heading, s.anchor FROM sections s JOIN documents d ON d.id = s.document_id"
            " ORDER BY d.path, s.position"
        ).fetchall()


def test_every_section_search_can_return_is_read_by_its_heading_and_by_its_anchor(mcp: Session, built: Site) -> None:
    sections = searchable_sections(built)
    headings = {heading for _, _, heading, _ in sections}
    # The headings that a Markdown-source reader could not find: generated, quoted, raw, marked up, added.
    assert {
        "read_temperature(station, unit='C')",
        "Quoted heading",
        "Raw heading",
        "Wiring",
        "Feedback",
        "Install quickly with pip from PyPI",
    } <= headings
    assert "weatherkit.read_temperature" in {anchor for *_, anchor in sections}
    for path, level, heading, anchor in sections:
        by_heading = mcp.ok("read", path=path, section=heading)
        assert by_heading["section"]["heading"] == heading, (path, heading)
        assert by_heading["section"]["level"] == level
        if anchor:
            by_anchor = mcp.ok("read", path=path, section=anchor)
            assert by_anchor["section"]["anchor"] == anchor, (path, anchor)
            assert by_anchor["section"]["url"].endswith(f"#{anchor}")


def test_search_hits_name_sections_that_read_accepts(mcp: Session) -> None:
    for query in ("read_temperature", "gust", "red wire", "quote", "raw paragraph", "missing", "Celsius"):
        hits = mcp.ok("search", query=query, sections_per_page=10)["result"]
        assert hits, query
        for page in hits:
            for hit in page["sections"]:
                answer = mcp.ok("read", path=page["path"], section=hit["heading"])
                assert answer["section"]["heading"] == hit["heading"]
                anchor = hit["url"].partition("#")[2]
                if anchor:
                    assert mcp.ok("read", path=page["path"], section=anchor)["section"]["url"] == hit["url"]


def test_the_api_page_reads_as_its_generated_reference(mcp: Session) -> None:
    api = read(mcp, "api.md")
    assert "## `read_temperature(station, unit='C')`" in api
    assert "The station's identifier, such as `north-ridge`." in api
    assert "`C` for Celsius or `F` for Fahrenheit." in api
    assert "How many seconds to look back over." in api
    section = read(mcp, "api.md", section="weatherkit.read_temperature")
    assert "The station's identifier" in section and "How many seconds" not in section
    source = read(mcp, "api.md", view="source")
    assert source == "# API reference\n\n::: weatherkit\n"


def test_the_home_page_reads_as_rendered_without_chrome(mcp: Session) -> None:
    home = read(mcp, "index.md")
    assert "Station North Ridge reports 42 readings an hour." in home  # macros
    assert "## Wiring\n\nConnect the red wire to the anemometer's left terminal." in home  # snippet
    assert "## Install **quickly** with `pip` from [PyPI](https://pypi.org/project/weatherkit/)" in home
    assert "**Python**\n\n```python\nimport weatherkit\n```" in home  # tabs, language kept
    assert "**Shell**\n\n```bash\npip install weatherkit\npip install weatherkit[plots]\n```" in home
    assert "> **Calibrate first**\n>\n> Every sensor drifts; see [calibration](/guide/calibrate/#drift)." in home
    assert "## Quoted heading" in home and "Text inside the quote." in home
    assert "## Raw heading\n\nA raw paragraph under it." in home
    assert "![Mast at dusk](/img/mast.png)" in home
    assert "| thermometer | °C |" in home
    assert "## Feedback\n\nTell us what is missing." in home  # the hook's heading
    for chrome in ("¶", "Copy to clipboard", "Permanent link", "__codelineno", "tabbed", "<"):
        assert chrome not in home, chrome
    assert "{{" not in home and "--8<--" not in home


def test_blocks_marked_search_exclude_are_neither_searched_nor_read(mcp: Session, built: Site) -> None:
    assert mcp.ok("count_documents", query="zebra")["total"] == 0
    home = read(mcp, "index.md")
    assert "zebra" not in home and "Hidden heading" not in home
    assert "Hidden heading" not in {heading for _, _, heading, _ in searchable_sections(built)}
    # Material's own search index leaves the same text out.
    search_index = built.site_dir / "search" / "search_index.json"
    if search_index.exists():
        assert "zebra" not in search_index.read_text(encoding="utf-8")


def test_a_heading_that_names_two_sections_reads_the_first_and_says_which(mcp: Session) -> None:
    answer = mcp.ok("read", path="index.md", section="Duplicate")
    assert answer["markdown"] == "## Duplicate\n\nThe first one."
    assert answer["section"]["anchor"] == "duplicate"
    second = mcp.ok("read", path="index.md", section="duplicate_1")
    assert second["markdown"].startswith("## Duplicate\n\nThe second one.")


def test_an_unknown_section_lists_at_most_ten_nearest_headings_that_read_accepts(mcp: Session) -> None:
    message = mcp.error("read", path="index.md", section="Instal quickly")
    named = re.findall(r"'([^']*)'", message.partition("Nearest headings:")[2].partition("Use view=")[0])
    assert named[0] == "Install quickly with pip from PyPI" and 1 <= len(named) <= 10
    for heading in named:
        mcp.ok("read", path="index.md", section=heading)


def test_every_page_read_in_pieces_of_1000_characters_is_the_one_piece_answer(mcp: Session, built: Site) -> None:
    for path in ("index.md", "api.md", "advanced.md", "guide/calibrate.md"):
        for view in ("markdown", "source"):
            whole = read(mcp, path, view=view)
            pieces, offset = [], 0
            while offset is not None:
                answer = mcp.ok("read", path=path, view=view, offset=offset, max_chars=1000)
                pieces.append(answer["markdown"])
                offset = answer["next_offset"]
            assert "".join(pieces) == whole, (path, view)


def test_the_outline_lists_every_heading_with_sizes_that_add_up_to_the_text(mcp: Session) -> None:
    answer = mcp.ok("read", path="index.md", view="outline")
    outline = answer["outline"]
    assert answer["markdown"] == "" and answer["next_offset"] is None
    assert [entry["heading"] for entry in outline][:3] == ["Welcome", "Wiring", "Install quickly with pip from PyPI"]
    assert sum(entry["characters"] for entry in outline) == len(read(mcp, "index.md"))
    assert outline[1]["url"] == "/#wiring" and outline[1]["level"] == 2
    section = mcp.ok("read", path="index.md", view="outline", section="Welcome")["outline"]
    assert sum(entry["characters"] for entry in section) == len(read(mcp, "index.md", section="Welcome"))


def test_the_first_heading_and_front_matter_title_weigh_as_the_title_beside_a_nav_label(mcp: Session) -> None:
    assert mcp.ok("read", path="advanced.md")["title"] == "Advanced"  # MkDocs' title: the nav label
    assert mcp.paths("title:environment") == ["advanced.md"]
    assert mcp.paths("title:Weatherkit") == ["index.md"]  # front matter title, under the nav label "Home"


def test_only_front_matter_the_author_wrote_is_indexed_and_kept(mcp: Session, built: Site) -> None:
    stats = mcp.ok("stats")
    assert stats["indexed_frontmatter_fields"] == ["audience", "tags", "title"]
    assert mcp.ok("count_documents", filters={"audience": "operators"})["total"] == 1
    meta = mcp.ok("read", path="guide/calibrate.md")["meta"]
    assert meta == {"tags": ["setup"], "audience": "operators"}
    # git-revision-date-localized did run, and put its keys into page.meta, which the index leaves out.
    page = (built.site_dir / "guide" / "calibrate" / "index.html").read_text(encoding="utf-8")
    assert "git-revision-date-localized-plugin" in page
