"""`search` and `read` through a real MCP client session (the SDK's `Client`, in-process), over the index
of a real `mkdocs build` of a small documentation site written so that each ranking rule tells right from
wrong, and, for the size of answers, of the FastAPI English docs.

Where a test claims that ranking beats plain full-text search, it first checks on the same index that
plain FTS5 (the query as a MATCH, bm25()) gets it wrong, so the test can fail.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.mcp_session import Session, session_over, text
from helpers.site import Site, built_site
from mkdocs_vault_mcp.index.filters import fts_expression
from mkdocs_vault_mcp.index.search.rank import COLUMN_WEIGHTS

EXTENSIONS = [
    "attr_list",
    "md_in_html",
    "tables",
    {"toc": {"permalink": True}},
    "pymdownx.superfences",
    "pymdownx.blocks.admonition",
    "pymdownx.blocks.details",
]

LONG_PAGE = "".join(
    f"## Part {n} — ünïcode 🙂 {n}\n\nParagraph {n} of the handbook, with 漢字 and emoji 🎉 so that pieces "
    f"cut between code points of several bytes still reassemble. Filler text about nothing in particular.\n\n"
    for n in range(1, 121)
)

PAGES: dict[str, str] = {
    "index.md": """
        # Home

        Welcome to the Orchard docs. Start with the tutorial, then read the guides about fruit, about
        vegetables, about the tools of the orchard and their care, about the seasons and the weather, and
        about whatever else the gardeners wrote down over the years; the handbook in particular.
        """,
    # The page that explains background tasks; its sections are long and say the words once or twice.
    "tutorial/background-tasks.md": """
        ---
        tags: [tutorial, tasks]
        ---
        # Background Tasks

        You can define background tasks to be run after returning a response. This is useful for
        operations that need to happen after a request, but that the client doesn't really have to be
        waiting for the operation to complete before receiving the response, like sending an email
        notification or processing a data file after an upload.

        ## Using `BackgroundTasks` { #using-backgroundtasks }

        First, import `BackgroundTasks` and define a parameter in your path operation function with a
        type declaration of `BackgroundTasks`. Then call `add_task()` on it with the function to run
        and its arguments. The work starts only once the response has been sent to the client, so the
        client never waits for it.

        ## Caveat

        If you need to perform heavy background computation and you don't necessarily need it to be run
        by the same process, you might benefit from using other bigger tools like a task queue.
        """,
    # A stub: one heading that says exactly the query, over one short line. Plain BM25 puts it first.
    "misc/changelog.md": """
        # Changelog

        ## Background tasks

        Background tasks.

        ## Version 2

        Bug fixes in the scheduler, the logger and the orchard planner.
        """,
    # The page that explains webhook retries, in a section of a page whose title does not say so ...
    "guides/delivery.md": """
        # Delivering events

        Events go out as HTTP requests to the endpoints that subscribers register.

        ## Webhook retries

        When a webhook delivery fails, because the endpoint answers with an error or does not answer in
        time, the delivery is retried with exponential backoff: the first retry comes after a minute, the
        next ones after 2, 4, 8 minutes and so on, for up to 24 hours. Every retry sends the same payload
        and the same event id, so receivers can ignore duplicates. After the last retry the event is
        marked as failed and shows in the dashboard, where it can be sent again by hand.
        """,
    # ... and a glossary entry that only names them: a stub, which plain BM25 ranks first.
    "glossary.md": """
        # Glossary

        ## Webhook retries

        Webhook retries.

        ## Payload

        The body of an event: a JSON object with the event's type, id and data.
        """,
    # A title that is the topic, against a longer title that mentions it among other things.
    "tutorial/dependencies.md": """
        # Dependencies

        A dependency is a function that a path operation declares it needs; the framework calls it first
        and passes its result in. Declare one with a default value, and it runs for every request that
        reaches the path operation. Dependencies can have dependencies of their own.
        """,
    "advanced/operation-decorators.md": """
        # Dependencies, tags and responses in path operation decorators

        Decorators take dependencies, tags, responses: dependencies run, tags group, responses document.
        Dependencies given here run before the function; their results are thrown away. Dependencies,
        dependencies: the decorator's dependencies.
        """,
    # A code name that the stemmer merges with another: `APIRoute` and `APIRouter` both stem to `apirout`.
    "how-to/custom-route.md": """
        # Custom APIRoute class

        Subclass `APIRoute` to change how a route handles a request: a custom `APIRoute` can time each
        request, log the body, or decompress it. Each instance wraps one path operation, and the subclass
        is given to the application as its route class.
        """,
    "tutorial/bigger-applications.md": """
        # Bigger Applications

        Split an application into several files with `APIRouter`: each module declares its own router
        and the main module includes them all, with a prefix, tags and dependencies for each of them.
        """,
    # `include_in_schema=False` named exactly, against a page that has the same words, scattered.
    "advanced/openapi.md": """
        # Path operation configuration

        ## Exclude from OpenAPI

        To leave a path operation out of the generated OpenAPI schema and the docs, pass
        `include_in_schema=False` to the decorator, as in `@app.get("/items", include_in_schema=False)`.
        """,
    "reference/app.md": """
        # The app object

        ## Items

        The app lists items: open the app to see the items, and the items appear in the app at once.
        Getting them is quick.
        """,
    "tutorial/schema-words.md": """
        # Schema notes

        ## False friends

        Schema, schema: include what is in the schema, and false is false. In the schema, include
        everything; false values are included in the schema too. Include the schema; false alarms.
        """,
    # A theme feature name with dots.
    "setup/code-blocks.md": """
        # Code blocks

        ## Code copy button

        Enable the feature `content.code.copy` in the theme's features to show a button that copies a
        code block's content.
        """,
    "setup/content.md": """
        # Content and code

        Content, code and copy: copy the content of the code, code the content, content the copy.
        """,
    # Words for the FTS5 syntax cases: phrases, prefix, NEAR, OR, NOT, column filters, scopes.
    "fruit/kiwi.md": """
        ---
        tags: [fruit]
        ---
        # Kiwi

        The kiwi mango smoothie needs ripe fruit.

        ## Harvest

        Pick the kiwi in autumn; alpha and omega of the orchard year.
        """,
    "fruit/mango.md": """
        ---
        tags: [fruit, tropical]
        ---
        # Mango

        A mango kiwi salad, with the mango first.

        ## Storage

        Keep alpha varieties cool. Much later in the text, after many other words about storing fruit
        in a dry cellar away from the light, comes omega.
        """,
    "vegetables/zucchini.md": """
        # Zucchini

        Zucchini grow fast; no kiwi here, but the word orchard appears.
        """,
    "handbook.md": "# Handbook\n\n" + LONG_PAGE,
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Site:
    config = {"plugins": ["vault-mcp"], "markdown_extensions": EXTENSIONS}
    return built_site(tmp_path_factory.mktemp("search"), config, PAGES)


@pytest.fixture(scope="module")
def mcp(built: Site) -> Iterator[Session]:
    with session_over(built.index_path) as session:
        yield session


def plain_fts(site: Site, query: str) -> list[str]:
    """The baseline: the query as an FTS5 MATCH (its literal words ANDed when malformed), plain bm25(), each
    page at the rank of its best section."""
    with sqlite3.connect(site.index_path) as conn:
        match = fts_expression(conn, query, "all")
        if match is None:
            return []
        rows = conn.execute(
            "SELECT s.path FROM sections_fts JOIN sections s ON s.id = sections_fts.rowid"
            " WHERE sections_fts MATCH ? ORDER BY bm25(sections_fts)",
            [match],
        ).fetchall()
    return list(dict.fromkeys(path for (path,) in rows))


# --- FTS5 syntax ---------------------------------------------------------------------------------


def test_a_phrase_matches_the_words_adjacent_and_in_order(mcp: Session) -> None:
    assert mcp.paths('"kiwi mango"') == ["fruit/kiwi.md"]
    assert mcp.paths('"mango kiwi"') == ["fruit/mango.md"]


def test_a_prefix_matches_every_word_that_starts_with_it(mcp: Session) -> None:
    assert set(mcp.paths("zucch*")) == {"vegetables/zucchini.md"}
    assert set(mcp.paths("orch*")) == {"index.md", "fruit/kiwi.md", "vegetables/zucchini.md", "misc/changelog.md"}


def test_near_bounds_the_distance_between_its_phrases(mcp: Session) -> None:
    # kiwi.md: "alpha and omega"; mango.md: alpha ... many words ... omega.
    assert mcp.paths("NEAR(alpha omega, 3)") == ["fruit/kiwi.md"]
    assert set(mcp.paths("NEAR(alpha omega, 40)")) == {"fruit/kiwi.md", "fruit/mango.md"}


def test_or_and_not_work_per_section_and_an_operator_query_is_never_relaxed(mcp: Session) -> None:
    assert set(mcp.paths("zucchini OR smoothie")) == {"vegetables/zucchini.md", "fruit/kiwi.md"}
    # Per section, and a page's summary is in each of its sections: kiwi.md's summary names mango.
    assert mcp.paths("kiwi NOT mango") == ["vegetables/zucchini.md"]
    assert mcp.paths("zucchini NOT kiwi") == []
    # An operator query is never relaxed: pages with only some of its words do not follow.
    assert mcp.paths("kiwi AND zucchini AND smoothie") == []


def test_a_column_filter_searches_only_that_column(mcp: Session) -> None:
    assert mcp.paths("title: kiwi") == ["fruit/kiwi.md"]
    assert mcp.paths("headings: storage") == ["fruit/mango.md"]
    assert set(mcp.paths("{title headings}: (harvest OR storage)")) == {"fruit/kiwi.md", "fruit/mango.md"}


def test_each_scope_is_a_hard_condition(mcp: Session) -> None:
    # "Harvest" is only a heading (metadata); "autumn" is only body text, past the first paragraph
    # (which is the page's summary, metadata too).
    assert mcp.paths("harvest", scope="metadata") == ["fruit/kiwi.md"]
    assert mcp.paths("harvest", scope="body") == []
    assert mcp.paths("autumn", scope="metadata") == []
    assert mcp.paths("autumn", scope="body") == ["fruit/kiwi.md"]
    assert mcp.paths("autumn harvest", scope="all") == ["fruit/kiwi.md"]
    # Relaxing a query keeps its scope.
    assert mcp.paths("zucchini harvest", scope="body") == ["vegetables/zucchini.md"]
    assert set(mcp.paths("zucchini harvest", scope="metadata")) == {"vegetables/zucchini.md", "fruit/kiwi.md"}


def test_filters_combine_with_the_query(mcp: Session) -> None:
    assert set(mcp.paths("kiwi", folder="fruit")) == {"fruit/kiwi.md", "fruit/mango.md"}
    assert mcp.paths("kiwi", filters={"tags": "tropical"}) == ["fruit/mango.md"]
    assert mcp.paths("kiwi", pattern="vegetables/*") == ["vegetables/zucchini.md"]
    assert mcp.paths("kiwi", path="fruit/mango.md") == ["fruit/mango.md"]
    # The filters also hold for the relaxed form of a question.
    assert mcp.paths("how do I store kiwi fruit?", folder="vegetables") == ["vegetables/zucchini.md"]
    assert "No page is in folder 'nowhere'" in mcp.error("search", query="kiwi", folder="nowhere")


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "(",
        ")",
        "a) OR (b",
        "NEAR(",
        "NEAR(kiwi",
        "*",
        "kiwi*mango",
        "title:",
        "nosuchcolumn: kiwi",
        "AND",
        "OR kiwi",
        "kiwi NOT",
        "^",
        "^kiwi",
        "kiwi + ",
        "{title",
        "-kiwi",
        "kiwi:",
        '""',
        "🙂",
        "\\",
        "'",
        "kiwi's",
        "c++",
        "x = y",
        "@",
        "$$$",
        "SELECT * FROM sections; --",
    ],
)
def test_a_malformed_fts5_query_never_errors_and_still_finds_its_words(mcp: Session, query: str) -> None:
    result = mcp.ok("search", query=query)
    words = re.findall(r"[^\W_]+", query)
    if any(word.casefold() == "kiwi" for word in words):
        assert "fruit/kiwi.md" in {hit["path"] for hit in result["result"]}, query


def test_malformed_fts5_matches_its_literal_words(mcp: Session) -> None:
    assert set(mcp.paths('"kiwi mango', limit=2)) == {"fruit/kiwi.md", "fruit/mango.md"}
    assert mcp.paths("zucchini)") == ["vegetables/zucchini.md"]


# --- ranking -------------------------------------------------------------------------------------


def weighted_bm25_first(site: Site, match: str) -> str:
    """The page of the best section by BM25 alone, with search's own column weights."""
    weights = ", ".join(map(str, COLUMN_WEIGHTS))
    with sqlite3.connect(site.index_path) as conn:
        [(first,)] = conn.execute(
            f"SELECT s.path FROM sections_fts JOIN sections s ON s.id = sections_fts.rowid"
            f" WHERE sections_fts MATCH ? ORDER BY bm25(sections_fts, {weights}) LIMIT 1",
            [match],
        ).fetchall()
    return first


def test_a_stub_section_does_not_outrank_the_page_that_explains_the_topic(mcp: Session, built: Site) -> None:
    assert weighted_bm25_first(built, "webhook retries") == "glossary.md"  # BM25 alone is fooled by the stub
    assert mcp.paths("webhook retries") == ["guides/delivery.md", "glossary.md"]
    assert plain_fts(built, "background tasks")[0] == "misc/changelog.md"
    assert mcp.paths("background tasks")[:2] == ["tutorial/background-tasks.md", "misc/changelog.md"]


def test_a_page_titled_with_the_topic_outranks_a_page_that_lists_it_among_others(mcp: Session, built: Site) -> None:
    assert weighted_bm25_first(built, "dependencies") == "advanced/operation-decorators.md"
    assert mcp.paths("dependencies")[:2] == ["tutorial/dependencies.md", "advanced/operation-decorators.md"]


def test_a_question_finds_the_page_that_answers_it(mcp: Session, built: Site) -> None:
    question = "How can I run a task after returning the response?"
    assert plain_fts(built, question) == []  # malformed, and its literal words ANDed match nothing
    assert mcp.paths(question)[0] == "tutorial/background-tasks.md"


def test_stop_words_do_not_sink_a_question(mcp: Session) -> None:
    assert mcp.paths("what is the zucchini?") == ["vegetables/zucchini.md"]
    assert mcp.paths("where can I find the kiwi harvest?")[0] == "fruit/kiwi.md"


def test_the_strict_form_alone_ranks_when_it_finds_enough_pages(mcp: Session) -> None:
    # "kiwi mango" in one section: kiwi.md and mango.md. zucchini.md has only kiwi.
    assert set(mcp.paths("kiwi mango", limit=2)) == {"fruit/kiwi.md", "fruit/mango.md"}
    assert set(mcp.paths("kiwi mango", limit=10)) == {"fruit/kiwi.md", "fruit/mango.md", "vegetables/zucchini.md"}
    # With stop words that the strict form needs, snippets still mark only the meaningful words.
    [hit] = mcp.ok("search", query="the kiwi mango smoothie", limit=1)["result"]
    assert hit["path"] == "fruit/kiwi.md"
    assert "**the**" not in hit["sections"][0]["snippet"].casefold()


def test_the_last_word_is_read_as_a_prefix_when_no_section_has_it_whole(mcp: Session) -> None:
    assert mcp.paths("zucchi") == ["vegetables/zucchini.md"]
    assert mcp.paths("backgrou")[0] == "tutorial/background-tasks.md"


def test_a_code_name_finds_the_page_that_names_it_not_its_stemmed_look_alike(mcp: Session, built: Site) -> None:
    assert plain_fts(built, "APIRouter")[0] == "how-to/custom-route.md"  # the stemmer merges the two
    assert mcp.paths("APIRouter")[0] == "tutorial/bigger-applications.md"


@pytest.mark.parametrize(
    "query, page",
    [
        ("include_in_schema=False", "advanced/openapi.md"),
        ('@app.get("/items")', "advanced/openapi.md"),
        ("content.code.copy", "setup/code-blocks.md"),
    ],
)
def test_code_with_punctuation_finds_the_page_that_names_it(mcp: Session, built: Site, query: str, page: str) -> None:
    plain = plain_fts(built, query)  # malformed: its literal words, ANDed
    assert plain and plain[0] != page
    assert mcp.paths(query)[0] == page


def test_a_page_appears_once_with_at_most_sections_per_page_sections(mcp: Session) -> None:
    for sections_per_page in (1, 2, 3):
        hits = mcp.ok("search", query="background tasks", sections_per_page=sections_per_page)["result"]
        assert len({hit["path"] for hit in hits}) == len(hits)
        assert all(1 <= len(hit["sections"]) <= sections_per_page for hit in hits)
    [best] = mcp.ok("search", query="background tasks", limit=1, sections_per_page=3)["result"]
    assert len(best["sections"]) == 3
    assert [s["score"] for s in best["sections"]] == sorted((s["score"] for s in best["sections"]), reverse=True)
    assert best["score"] >= best["sections"][0]["score"]


def test_a_page_with_many_matching_sections_does_not_crowd_out_the_others(mcp: Session, built: Site) -> None:
    with sqlite3.connect(built.index_path) as conn:
        best = conn.execute(
            "SELECT DISTINCT s.path FROM (SELECT rowid FROM sections_fts WHERE sections_fts MATCH 'particular'"
            " ORDER BY rank LIMIT 100) AS hit JOIN sections s ON s.id = hit.rowid"
        ).fetchall()
    assert best == [("handbook.md",)]  # the handbook's 120 sections come first, index.md's after them
    assert set(mcp.paths("particular")) == {"handbook.md", "index.md"}


def test_limit_caps_the_pages(mcp: Session) -> None:
    assert len(mcp.paths("kiwi OR mango OR zucchini OR orchard", limit=2)) == 2


# --- results: urls and snippets ------------------------------------------------------------------


def test_a_section_url_is_the_page_url_and_the_id_of_its_heading_in_the_built_html(mcp: Session, built: Site) -> None:
    hits = mcp.ok("search", query="BackgroundTasks add_task", limit=3, sections_per_page=3)["result"]
    page = next(hit for hit in hits if hit["path"] == "tutorial/background-tasks.md")
    assert page["url"] == "/tutorial/background-tasks/"
    section = next(s for s in page["sections"] if s["heading"] == "Using BackgroundTasks")
    assert section["url"] == "/tutorial/background-tasks/#using-backgroundtasks"
    html = (built.site_dir / "tutorial" / "background-tasks" / "index.html").read_text(encoding="utf-8")
    for hit in hits:
        for found in hit["sections"]:
            page_url, _, anchor = found["url"].partition("#")
            assert page_url == hit["url"]
            if anchor:
                page_html = (built.site_dir / page_url.strip("/") / "index.html").read_text(encoding="utf-8")
                assert f'id="{anchor}"' in page_html
    assert 'id="using-backgroundtasks"' in html


def test_snippets_mark_the_matched_words_and_stay_short(mcp: Session) -> None:
    hits = mcp.ok("search", query="background computation queue", sections_per_page=3)["result"]
    snippets = [section["snippet"] for hit in hits for section in hit["sections"]]
    assert any("**computation**" in snippet and "**queue**" in snippet for snippet in snippets)
    for snippet in snippets:
        assert len(snippet.split()) <= 40
        marked = re.findall(r"\*\*(.+?)\*\*", snippet)
        assert all(word.casefold().startswith(("background", "computation", "queue")) for word in marked)
    long_page = mcp.ok("search", query="handbook filler particular")["result"][0]
    assert all(len(section["snippet"].split()) <= 40 for section in long_page["sections"])


# --- read ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("view", ["markdown", "source"])
def test_read_pages_through_a_long_document_and_the_pieces_reassemble_it_exactly(
    mcp: Session, built: Site, view: str
) -> None:
    whole = mcp.ok("read", path="handbook.md", view=view, max_chars=100_000)
    text = whole["markdown"]
    assert len(text) > 20_000 and whole["next_offset"] is None
    if view == "source":
        assert text == (built.docs / "handbook.md").read_text(encoding="utf-8")
    else:
        assert text.startswith("# Handbook\n\n## Part 1 — ünïcode 🙂 1\n\nParagraph 1 of the handbook")
    pieces, offset = [], 0
    while offset is not None:
        answer = mcp.ok("read", path="handbook.md", view=view, offset=offset, max_chars=997)
        assert len(answer["markdown"]) <= 997
        pieces.append(answer["markdown"])
        offset = answer["next_offset"]
    assert len(pieces) > 20
    assert "".join(pieces) == text
    first = mcp.ok("read", path="handbook.md", view=view)
    assert first["markdown"] == text[:20_000] and first["next_offset"] == 20_000
    assert mcp.ok("read", path="handbook.md", view=view, offset=len(text) + 5)["markdown"] == ""


def test_read_returns_the_page_fields(mcp: Session) -> None:
    answer = mcp.ok("read", path="fruit/mango.md")
    assert answer["title"] == "Mango"
    assert answer["url"] == "/fruit/mango/"
    assert answer["meta"] == {"tags": ["fruit", "tropical"]}
    assert answer["markdown"].startswith("# Mango\n")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", answer["modified"])


def test_read_one_section_by_heading_text_or_anchor(mcp: Session) -> None:
    expected = "## Using `BackgroundTasks`\n\nFirst, import `BackgroundTasks` and define a"
    for section in (
        "Using BackgroundTasks",
        "using backgroundtasks",
        "Using `BackgroundTasks`",
        "using-backgroundtasks",
        "#using-backgroundtasks",
    ):
        answer = mcp.ok("read", path="tutorial/background-tasks.md", section=section)
        assert answer["markdown"].startswith(expected), section
        assert answer["markdown"].endswith("so the\nclient never waits for it."), section
        assert "## Caveat" not in answer["markdown"]
        assert answer["section"] == {
            "heading": "Using BackgroundTasks",
            "level": 2,
            "anchor": "using-backgroundtasks",
            "url": "/tutorial/background-tasks/#using-backgroundtasks",
        }
    source = mcp.ok("read", path="tutorial/background-tasks.md", section="using-backgroundtasks", view="source")
    assert source["markdown"].startswith("## Using `BackgroundTasks` { #using-backgroundtasks }\n\nFirst, import")
    assert "## Caveat" not in source["markdown"]
    # A level-1 heading takes everything under it.
    whole = mcp.ok("read", path="tutorial/background-tasks.md", section="Background Tasks")["markdown"]
    assert whole.startswith("# Background Tasks") and "## Caveat" in whole


def test_read_pages_through_one_section(mcp: Session) -> None:
    section = mcp.ok("read", path="handbook.md", section="Part 7 — ünïcode 🙂 7")["markdown"]
    assert section.startswith("## Part 7 ") and "Part 8" not in section
    pieces, offset = [], 0
    while offset is not None:
        answer = mcp.ok("read", path="handbook.md", section="part-7-unicode-7", offset=offset, max_chars=50)
        pieces.append(answer["markdown"])
        offset = answer["next_offset"]
    assert "".join(pieces) == section


def test_an_unknown_path_is_an_error_naming_the_tools_to_find_it(mcp: Session) -> None:
    message = mcp.error("read", path="fruit/Kiwi.md")
    assert "'fruit/Kiwi.md'" in message and "search" in message and "query_documents" in message


def test_an_unknown_section_is_an_error_listing_the_headings(mcp: Session) -> None:
    message = mcp.error("read", path="fruit/kiwi.md", section="Pruning")
    assert "'Pruning'" in message and "'Harvest'" in message and "search" in message


def test_an_unknown_section_on_a_page_with_many_headings_names_the_ten_nearest(mcp: Session) -> None:
    message = mcp.error("read", path="handbook.md", section="Part 99 — ünïcode 🙂 99x")
    named = re.findall(r"'(Part \d+ — ünïcode 🙂 \d+)'", message)
    assert len(named) == 10 and named[0] == "Part 99 — ünïcode 🙂 99" and len(message) < 1_500
    assert "view='outline'" in message


# --- size of answers on a real documentation site ------------------------------------------------


@pytest.fixture(scope="module")
def fastapi(fastapi_en: Path) -> Iterator[Session]:
    """The English FastAPI docs, as conftest's session fixture builds them once for every test that reads them."""
    with session_over(fastapi_en) as session:
        yield session


@pytest.mark.parametrize(
    "query",
    [
        "release notes",
        "fastapi",
        "response",
        "how do I return a custom status code?",
        "include_in_schema=False",
        "dependencies OR security OR response OR request",
        "a",
    ],
)
def test_search_with_limit_10_on_the_fastapi_docs_stays_under_20000_characters(fastapi: Session, query: str) -> None:
    result = fastapi.call("search", query=query, limit=10)
    assert not result.is_error
    assert 0 < len(result.structured_content["result"]) <= 10
    assert len(text(result)) < 20_000
    assert len(json.dumps(result.structured_content)) < 20_000
