"""`search` ranks by the query, the filters and the index alone, never by `limit`: for every judged query of bench/
(English, Chinese, Japanese, Korean) and limits 1, 3, 5, 10, 20 and 50, each answer is the start of the next, with
meaning off and on and under filters, so the first result at `limit: 1` is the first at `limit: 50`. And when fewer
than the limit's pages hold every word, the pages that hold some of them follow those that hold all.

The indexes are real builds: the English FastAPI docs (the suite's session build), the Chinese, Japanese and Korean
docs as folders of one site, and a few English pages with vectors of the real small model (as tests/test_semantic.py
builds them; skipped, saying so, without the model).
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import minilm
from helpers.paths import CORPORA, ROOT
from helpers.site import Site, built_site
from mkdocs_vault_mcp.index.answer_types import SearchHit
from mkdocs_vault_mcp.index.filters import Filters
from mkdocs_vault_mcp.index.publish import open_read_only
from mkdocs_vault_mcp.index.search.answer import search, search_answer

LIMITS = (1, 3, 5, 10, 20, 50)
FASTAPI = CORPORA / "fastapi-docs"
CJK = ("zh", "ja", "ko")
# English pages with vectors: few enough to embed in seconds, more than one tier (10 pages) of answers.
SEMANTIC_PAGES = [
    "tutorial/cors.md",
    "tutorial/middleware.md",
    "tutorial/header-params.md",
    "tutorial/query-params.md",
    "tutorial/request-forms.md",
    "tutorial/body.md",
    "how-to/conditional-openapi.md",
    "tutorial/debugging.md",
    "tutorial/response-status-code.md",
    "tutorial/cookie-params.md",
    "tutorial/background-tasks.md",
    "tutorial/static-files.md",
    "advanced/templates.md",
    "advanced/response-headers.md",
    "advanced/wsgi.md",
]


def judged(*names: str, language: str | None = None) -> list[str]:
    """The queries of bench/'s judged sets `names` (of `language` only, when given)."""
    queries = [item for name in names for item in json.loads((ROOT / "bench" / name).read_text())["queries"]]
    return [item["query"] for item in queries if language is None or item.get("language") == language]


ENGLISH = judged("search_queries.json", "search_queries_holdout.json")
CJK_QUERIES = {
    language: judged("cjk_queries.json", "cjk_mixed_queries.json", "cjk_queries_inside.json", language=language)
    for language in CJK
}


def answers_are_prefixes(answer: Callable[[int], list[SearchHit]], what: str) -> int:
    """Assert that the answer at each limit is the start of the answer at the next; return the longest's length."""
    answers = {limit: answer(limit) for limit in LIMITS}
    for smaller, larger in itertools.pairwise(LIMITS):
        assert answers[smaller] == answers[larger][:smaller], (
            f"{what}: the answer at limit {smaller} is not the start of the answer at {larger} (pages, scores or"
            f" sections): {[hit['path'] for hit in answers[smaller]]} against"
            f" {[hit['path'] for hit in answers[larger][:smaller]]}"
        )
    return len(answers[LIMITS[-1]])


def needs_corpus() -> None:
    if not (FASTAPI / "en" / "docs").is_dir():
        pytest.skip(f"needs the shared corpora beside the repository ({FASTAPI})")


@pytest.fixture(scope="module")
def english(fastapi_en: Path) -> Iterator[sqlite3.Connection]:
    conn = open_read_only(fastapi_en)
    yield conn
    conn.close()


@pytest.fixture(scope="module")
def cjk_docs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    """The tutorial of the FastAPI docs in Chinese, Japanese and Korean, each language a folder of one site."""
    needs_corpus()
    pages = {
        f"{language}/{file.relative_to(FASTAPI / language / 'docs').as_posix()}": file.read_text(encoding="utf-8")
        for language in CJK
        for file in sorted((FASTAPI / language / "docs" / "tutorial").rglob("*.md"))
    }
    config = {"plugins": ["vault-mcp"], "markdown_extensions": ["attr_list"]}
    site = built_site(tmp_path_factory.mktemp("cjk-depth"), config, pages)
    conn = open_read_only(site.index_path)
    yield conn
    conn.close()


def keyword_answer(conn: sqlite3.Connection, query: str, filters: Filters) -> Callable[[int], list[SearchHit]]:
    return lambda limit: search(conn, query, filters, limit=limit)


def test_every_english_answer_is_the_start_of_every_longer_one(english: sqlite3.Connection) -> None:
    longest = [answers_are_prefixes(keyword_answer(english, query, Filters()), query) for query in ENGLISH]
    assert max(longest) == LIMITS[-1]  # the deep tier was reached, not only the first ten pages


@pytest.mark.parametrize(
    "filters",
    [
        Filters(folder="tutorial"),
        Filters(scope="metadata"),
        Filters(scope="body", folder="advanced"),
        Filters(pattern="*/*"),
        Filters(modified_after="2000-01-01T00:00:00Z"),
    ],
    ids=["folder", "metadata", "body-in-folder", "pattern", "modified"],
)
def test_filtered_answers_are_the_start_of_every_longer_one(english: sqlite3.Connection, filters: Filters) -> None:
    for query in ENGLISH[::5]:  # a fifth of the queries under each filter
        answers_are_prefixes(keyword_answer(english, query, filters), f"{query} {filters}")


@pytest.mark.parametrize("language", CJK)
def test_every_cjk_answer_is_the_start_of_every_longer_one(cjk_docs: sqlite3.Connection, language: str) -> None:
    assert CJK_QUERIES[language]
    for query in CJK_QUERIES[language]:
        answers_are_prefixes(keyword_answer(cjk_docs, query, Filters(folder=language)), f"{language} {query}")


# --- meaning on ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def with_vectors(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    """A few English FastAPI pages built with `semantic`: all-MiniLM-L6-v2 (int8 ONNX) from the two packages."""
    needs_corpus()
    model = minilm.model_folder(tmp_path_factory.mktemp("minilm"))
    docs = FASTAPI / "en" / "docs"
    pages = {path: (docs / path).read_text(encoding="utf-8") for path in SEMANTIC_PAGES}
    config: dict[str, Any] = {
        "plugins": [{"vault-mcp": {"semantic": str(model)}}],
        "markdown_extensions": ["attr_list"],
    }
    site: Site = built_site(tmp_path_factory.mktemp("semantic-depth"), config, pages)
    conn = open_read_only(site.index_path)
    yield conn
    conn.close()


def hybrid_answer(conn: sqlite3.Connection, query: str, filters: Filters) -> Callable[[int], list[SearchHit]]:
    def answer(limit: int) -> list[SearchHit]:
        found = search_answer(conn, query, filters, limit=limit)
        assert found["_meta"]["search"].startswith(("hybrid", "keywords: a code name")), found["_meta"]
        return found["result"]

    return answer


def test_every_hybrid_answer_is_the_start_of_every_longer_one(with_vectors: sqlite3.Connection) -> None:
    longest = [answers_are_prefixes(hybrid_answer(with_vectors, query, Filters()), query) for query in ENGLISH]
    assert max(longest) > 10  # the fused ranking's deep tier was reached


def test_filtered_hybrid_answers_are_the_start_of_every_longer_one(with_vectors: sqlite3.Connection) -> None:
    for query in ENGLISH[::4]:
        answers_are_prefixes(hybrid_answer(with_vectors, query, Filters(folder="tutorial")), f"{query} in tutorial")


# --- strict pages first --------------------------------------------------------------------------------------


def test_pages_with_some_of_the_words_follow_the_pages_with_all_of_them(tmp_path: Path) -> None:
    both = {f"both/p{n:02}.md": f"# Page {n}\n\nConfigure the gateway timeout here, case {n}.\n" for n in range(12)}
    one = {
        f"one/p{n:02}.md": f"# Other {n}\n\nThe gateway gateway gateway sits in front, case {n}.\n" for n in range(5)
    }
    site = built_site(tmp_path, {"plugins": ["vault-mcp"]}, {**both, **one})
    conn = open_read_only(site.index_path)
    try:
        answer = [hit["path"] for hit in search(conn, "gateway timeout", Filters(), limit=50)]
        first = [hit["path"] for hit in search(conn, "gateway timeout", Filters(), limit=10)]
        narrowed = search(conn, "gateway timeout", Filters(folder="both"), limit=50)
    finally:
        conn.close()
    # Twelve pages hold both words: they come first, and the five that hold one word follow them.
    assert sorted(answer[:12]) == sorted(both) and sorted(answer[12:]) == sorted(one), answer
    assert first == answer[:10]
    assert sorted(hit["path"] for hit in narrowed) == sorted(both)
