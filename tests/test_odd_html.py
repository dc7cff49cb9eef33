"""Odd HTML never fails a build: stray `<` and `>`, unclosed comments and tags, entities, NUL and raw blocks that
run across headings still give one section per heading, in a property test over random pages and in real builds."""

from __future__ import annotations

import random
import re

import pytest

from helpers.site import Site
from mkdocs_vault_mcp.page.documents import TEXT_BATCH_CHARS, build_document, split_sections
from mkdocs_vault_mcp.page.model import RenderedPage

# Pieces of text that are not headings: what raw HTML and prose put between them.
JUNK = [
    "<",
    ">",
    "a < b",
    "b > a",
    "--8<--",
    '--8<-- "docs/img/plugin-events.svg"',
    "<!--",
    "-->",
    "<!-- a comment -->",
    "<details>",
    "</details>",
    "<summary>More</summary>",
    "<div class='x'",
    "</div>",
    "<p>",
    "</p>",
    "<script>",
    "</script>",
    "<style>p{}</style>",
    "<template>",
    "<br>",
    "<a href='x'>",
    "</a",
    "&lt;",
    "&gt;",
    "&amp;",
    "&#0;",
    "&#x0;",
    "&nbsp;",
    "&unknown;",
    "&",
    "\x00",
    "text",
    "跨域",
    "word",
    " ",
    "\n",
    "<pre><code>",
    "</code></pre>",
    "<span title='a > b'>",
    "<em",
]


def random_junk(rng: random.Random) -> str:
    return "".join(rng.choice(JUNK) for _ in range(rng.randint(0, 12)))


def random_page(rng: random.Random) -> tuple[str, list[tuple[int, str]]]:
    """A page's content HTML and its headings (level, id), in order."""
    parts = [random_junk(rng)]
    headings = []
    for number in range(rng.randint(0, 6)):
        level = rng.randint(1, 6)
        anchor = f"h{number}"
        title = rng.choice(["Intro", "A &amp; B", "x &lt; y", "跨域 <code>CORS</code>", "<em>odd</em>", ""])
        parts.append(f'<h{level} id="{anchor}">{title}</h{level}>{random_junk(rng)}')
        headings.append((level, anchor))
    return "".join(parts), headings


def test_random_html_never_fails_split_sections_and_gives_one_section_per_heading() -> None:
    rng = random.Random(20260312)
    for _ in range(3000):
        content, headings = random_page(rng)
        sections = split_sections(content)
        assert [(s.level, s.anchor) for s in sections if s.level] == headings, content
        assert all("\x00" not in s.body and "\x00" not in s.heading for s in sections)
        # Each section starts at its heading, where read cuts the page.
        for section in sections:
            if section.level:
                assert content[section.start :].startswith(f"<h{section.level} id=")


def test_a_stray_angle_bracket_stays_in_its_own_section() -> None:
    content = (
        '<h2 id="a">A</h2><details><p>--8<-- "docs/img/plugin-events.svg"</p></details>'
        '<h2 id="b">B</h2><p>x > y</p><h2 id="c"><code>C</code></h2><p>after <em>this</em></p>'
    )
    sections = split_sections(content)
    assert [(s.heading, s.body) for s in sections] == [
        ("A", '--8<-- "docs/img/plugin-events.svg"'),
        ("B", "x > y"),
        ("C", "after this"),
    ]


def test_random_html_never_fails_a_document() -> None:
    import datetime as dt

    rng = random.Random(7)
    for number in range(300):
        content, headings = random_page(rng)
        document = build_document(
            RenderedPage(
                path=f"p{number}.md",
                url=f"p{number}/",
                title="Page",
                meta={},
                markdown="",
                html=content,
                modified=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
                modified_source="mtime",
                fingerprint="x",
            ),
            [],
        )
        assert len(document.headings) == len(headings)


def random_markdown(rng: random.Random) -> tuple[str, list[str]]:
    """A page of Markdown headings with random raw HTML and prose between them (raw blocks left open across
    headings too), and the ids of its headings."""
    lines: list[str] = []
    anchors = []
    for number in range(rng.randint(1, 5)):
        lines += ["", f"## Heading {number}", ""]
        anchors.append(f"heading-{number}")
        for _ in range(rng.randint(0, 3)):
            lines += [random_junk(rng).replace("\n", " "), ""]
    return "\n".join(lines) + "\n", anchors


@pytest.fixture(scope="module")
def odd_site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    rng = random.Random(31)
    pages = {"index.md": "# Home\n\nAn ordinary page.\n"}
    for number in range(30):
        pages[f"odd/page{number}.md"] = random_markdown(rng)[0]
    # MkDocs' own docs: a snippet marker inside raw HTML, built without pymdownx.snippets.
    pages["dev-guide/plugins.md"] = """
        # MkDocs Plugins

        ## Events

        <details class="card">
          <summary>Events</summary>
          <figure>
            --8<-- "docs/img/plugin-events.svg"
          </figure>
        </details>

        ## One-time Events

        One-time events run once per `mkdocs` invocation.

        ## Page Events

        Page events are called once for each Markdown page.
        """
    site = Site(tmp_path_factory.mktemp("odd"), {"plugins": ["vault-mcp"]})
    site.write_pages(pages)
    site.write("nul.md", "# NUL\n\nbefore\x00after <b\x00> x\n\n## Next\n\n<div>\x00\n")
    site.build()
    return site


def test_a_snippet_marker_in_raw_html_builds_and_each_heading_is_a_section(odd_site: Site) -> None:
    sections = odd_site.sections("dev-guide/plugins.md")
    assert [s["heading"] for s in sections] == ["MkDocs Plugins", "Events", "One-time Events", "Page Events"]
    assert '--8<-- "docs/img/plugin-events.svg"' in sections[1]["body"]
    assert "once per" in sections[2]["body"]


def test_random_pages_build_and_every_written_heading_is_a_section(odd_site: Site) -> None:
    documents = odd_site.documents()
    assert len(documents) == 33
    assert not odd_site.messages(prefix="vault-mcp", level=30)
    rng = random.Random(31)
    for number in range(30):
        anchors = random_markdown(rng)[1]
        indexed = [s["anchor"] for s in odd_site.sections(f"odd/page{number}.md") if s["level"]]
        # A raw block left open can hold a heading that follows it; every other heading is a section.
        html = (odd_site.site_dir / "odd" / f"page{number}" / "index.html").read_text(encoding="utf-8")
        shown = [anchor for anchor in anchors if re.search(rf'<h2 id="{anchor}"', html)]
        assert [anchor for anchor in indexed if anchor in anchors] == shown


def test_a_page_longer_than_a_batch_gives_the_sections_its_parts_give_alone() -> None:
    """A huge page is made text a batch of fragments at a time, and a fragment longer than a batch alone: each
    section's text is the same as in a page of that section only."""
    words = " ".join(f"w{n}&amp;\u00a0 <b>x</b>\t<!-- c -->\n" for n in range(TEXT_BATCH_CHARS // 20))
    parts = [f"<p>{words}</p>", '<h2 id="a">A &lt; \u2003 B</h2><p>short</p>', f'<h2 id="b">B</h2><p>{words}</p>']
    sections = split_sections("".join(parts))
    assert len("".join(parts)) > 2 * TEXT_BATCH_CHARS
    alone = [section for part in parts for section in split_sections(part)]
    assert [(s.heading, s.level, s.anchor, s.body) for s in sections] == [
        (s.heading, s.level, s.anchor, s.body) for s in alone
    ]
    assert sections[0].body.startswith("w0& x w1& x") and sections[1].heading == "A < B"
