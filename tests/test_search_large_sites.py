"""What search does for speed on large sites, on a small real index.

It keeps how many sections match a word for the index version that it counted them on, and marks the kept
sections (highlights, snippet) in an in-memory table of them alone rather than by a scan of the index. The index
is the package's schema and triggers, rows written as a commit writes them; which statements SQLite runs is seen
through its trace callback.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest

from mkdocs_vault_mcp.index import cjk
from mkdocs_vault_mcp.index.filters import Filters
from mkdocs_vault_mcp.index.schema import create_schema
from mkdocs_vault_mcp.index.search import answer as searching
from mkdocs_vault_mcp.index.search import marks as search_marks
from mkdocs_vault_mcp.index.search.counts import forget_counts

COUNTING = "SELECT count(*) FROM (SELECT 1 FROM sections_fts"
PROSE = [
    "Declare the `APIRouter` with its dependencies, then include_in_schema=False hides a route from the "
    "OpenAPI schema. " * 12 + "Routers group path operations; a router's dependencies run first.",
    # As the writer stores CJK text: a separator beside each character.
    cjk.separate("跨域资源共享 (CORS) 指浏览器中运行的前端拥有与后端通信的 JavaScript 代码。"),
    "Templates render HTML; the router returns a TemplateResponse. " * 30,
]


def add_pages(conn: sqlite3.Connection, texts: list[str], built_at: str) -> None:
    """One commit: a page per text (one section each), and the facts a commit writes."""
    conn.execute("BEGIN")
    first = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM documents").fetchone()[0]
    for number, text in enumerate(texts, start=first):
        path = f"page-{number}.md"
        conn.execute(
            "INSERT INTO documents (id, path, folder, url, title, summary, meta, headings, modified, language)"
            " VALUES (?, ?, '', ?, ?, '', '{}', '[]', 0, 'en')",
            [number, path, f"page-{number}/", f"Page {number}"],
        )
        conn.execute(
            "INSERT INTO sections (document_id, position, level, anchor, heading, start, path, title, headings,"
            " summary, body) VALUES (?, 0, 1, '', ?, 0, ?, ?, '', '', ?)",
            [number, f"Page {number}", path, f"Page {number}", text],
        )
    sections = conn.execute("SELECT count(*) FROM sections").fetchone()[0]
    conn.executemany(
        "INSERT OR REPLACE INTO info (key, value) VALUES (?, ?)",
        [("built_at", built_at), ("section_count", str(sections))],
    )
    conn.execute("COMMIT")


@pytest.fixture
def index() -> Iterator[sqlite3.Connection]:
    forget_counts()
    conn = sqlite3.connect(":memory:", isolation_level=None)
    create_schema(conn)
    add_pages(conn, ["routers and dependencies"] * 3 + ["templates"] * 2, built_at="1")
    yield conn
    conn.close()
    forget_counts()


def counting_statements(conn: sqlite3.Connection, query: str) -> int:
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        searching.search(conn, query, Filters())
    finally:
        conn.set_trace_callback(None)
    return sum(statement.startswith(COUNTING) for statement in statements)


def test_a_words_count_is_read_once_per_index_version(index: sqlite3.Connection) -> None:
    assert counting_statements(index, "routers templates") > 0
    assert counting_statements(index, "routers templates") == 0
    assert counting_statements(index, "templates") == 0  # each word's count is kept, not only the query's


def test_a_new_commit_counts_again_and_search_weighs_words_by_the_new_counts(index: sqlite3.Connection) -> None:
    assert searching.document_frequency(index, '"templates"', 100) == 2
    add_pages(index, ["templates"] * 4, built_at="2")
    assert searching.document_frequency(index, '"templates"', 100) == 6
    assert counting_statements(index, "routers templates") > 0


def test_a_count_cut_short_is_counted_again_when_more_is_asked(index: sqlite3.Connection) -> None:
    assert searching.document_frequency(index, '"routers"', 2) == 2
    assert searching.document_frequency(index, '"routers"', 1) == 1
    assert searching.document_frequency(index, '"routers"', 100) == 3  # not the 2 it stopped at
    assert searching.document_frequency(index, '"routers"', 2) == 2


def test_an_index_that_does_not_say_its_version_is_counted_every_time(index: sqlite3.Connection) -> None:
    index.execute("DELETE FROM info WHERE key = 'built_at'")
    assert counting_statements(index, "routers templates") > 0
    assert counting_statements(index, "routers templates") > 0


@pytest.mark.parametrize(
    "match",
    [
        '"routers" OR "dependencies"',
        '("router" OR "templates") AND ({title headings} : ("page"))',
        '"include in schema" OR "APIRouter" OR "hides"',
        '"跨 域"',
        'NEAR("router" "dependencies", 5) OR "templat" *',
    ],
)
def test_the_kept_sections_are_marked_in_memory_exactly_as_the_index_marks_them(
    index: sqlite3.Connection, match: str
) -> None:
    add_pages(index, PROSE, built_at="2")
    ids = [rowid for (rowid,) in index.execute("SELECT rowid FROM sections_fts WHERE sections_fts MATCH ?", [match])]
    assert ids
    verbatim = ", instr(s.body, ?) > 0"
    for tokens in (8, 30, 64):  # short snippets cut the body, long ones hold it whole
        in_memory = search_marks.marked_in_memory(index, match, ids, verbatim, ["APIRouter"], tokens, 10**9)
        assert in_memory == search_marks.marked_in_the_index(index, match, ids, verbatim, ["APIRouter"], tokens)


def test_sections_whose_text_is_longer_than_the_budget_are_left_to_the_index(index: sqlite3.Connection) -> None:
    add_pages(index, PROSE, built_at="2")
    ids = [rowid for (rowid,) in index.execute("SELECT rowid FROM sections_fts WHERE sections_fts MATCH 'templates'")]
    assert search_marks.marked_in_memory(index, '"templates"', ids, "", [], 30, 100) is None


def test_a_code_name_with_a_stop_word_finds_its_pages_when_the_bound_leaves_them_out(
    index: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The strict form (the name's words as a phrase) finds enough pages (STRICT_PAGES), so only its sections
    rank, scored by the relaxed form; on a large site the relaxed form is bounded to the sections indexed last
    that hold its words in a title, none of which holds the phrase."""
    add_pages(index, ["Speeds up get_path_param_names() in routing."] * (searching.STRICT_PAGES + 2), built_at="2")
    index.execute("BEGIN")
    first = index.execute("SELECT max(id) FROM documents").fetchone()[0] + 1
    for number in range(first, first + 20):
        index.execute(
            "INSERT INTO documents (id, path, folder, url, title, summary, meta, headings, modified, language)"
            " VALUES (?, ?, '', ?, 'Path operations', '', '{}', '[]', 0, 'en')",
            [number, f"path-{number}.md", f"path-{number}/"],
        )
        index.execute(
            "INSERT INTO sections (document_id, position, level, anchor, heading, start, path, title, headings,"
            " summary, body) VALUES (?, 0, 1, '', 'Path operations', 0, ?, 'Path operations', '', '', 'Paths.')",
            [number, f"path-{number}.md"],
        )
    index.execute("UPDATE info SET value = '3' WHERE key = 'built_at'")
    index.execute("COMMIT")
    monkeypatch.setattr(searching, "RANKED_SECTIONS", 5)
    found = searching.search(index, "get_path_param_names()", Filters(), limit=2)
    assert len(found) == 2
    assert all("**" in page["sections"][0]["snippet"] for page in found)
    assert {page["path"] for page in found} <= {f"page-{n}.md" for n in range(6, first)}
