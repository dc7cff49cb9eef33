"""Every section that search lists holds a query term itself, in its heading or its text: a page's title, path and
summary, and the headings above a section, are in every one of its sections' rows, and a section matched through
them alone is not listed (a page matched only through them shows its opening section). A property test over
random queries against a real build, and the case that showed it (`跨域` listing a Korean section without it)."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator

import pytest

from helpers.mcp_session import Session, session_over
from helpers.site import Site, built_site
from mkdocs_vault_mcp.index import cjk
from mkdocs_vault_mcp.index.filters import literal_words
from mkdocs_vault_mcp.index.schema import TOKENIZER

PAGES = {
    "zh/cors.md": """
        # CORS（跨域资源共享）

        本页说明跨域资源共享的配置。

        ## 사용

        미들웨어를 허용합니다.

        ## 使用中间件

        导入 `CORSMiddleware` 并把它加到应用的中间件列表中。
        """,
    "guide/tasks.md": """
        ---
        description: Background tasks run after the response is sent.
        ---

        # Background tasks

        Define tasks that run after returning a response.

        ## Dependencies

        Use `Depends` with a task; the dependency injection system resolves it.

        ## Caveats

        Heavy computation belongs in a queue such as Celery.
        """,
    "guide/testing.md": """
        # Testing

        Use `TestClient` to call the application in tests.

        ## Fixtures

        A fixture builds the client once per module.

        ## Async tests

        Run async tests with anyio; the client is an `AsyncClient` there.

        ## 테스트

        `TestClient`로 애플리케이션을 테스트합니다.
        """,
    "reference/middleware.md": """
        # Middleware reference

        ## CORSMiddleware

        Parameters: allow_origins, allow_methods, allow_headers.

        ## GZipMiddleware

        Compresses responses larger than minimum_size.

        ## Other

        Nothing about the title's words here.
        """,
    "reference/response.md": """
        # Responses

        Return a JSONResponse, an HTMLResponse or a StreamingResponse.

        ## Streaming

        Stream large files chunk by chunk.
        """,
}


@pytest.fixture(scope="module")
def own_site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return built_site(tmp_path_factory.mktemp("own"), {"plugins": ["vault-mcp"]}, PAGES)


@pytest.fixture(scope="module")
def mcp(own_site: Site) -> Iterator[Session]:
    with session_over(own_site.index_path) as session:
        yield session


def holds_a_term(texts: list[str], query: str) -> bool:
    """Whether any of `texts` holds any word of `query` as the index's tokenizer reads it (stemmed, case folded), a
    CJK character pair of it, or a prefix of its last word: the loosest reading search makes of a query."""
    memory = sqlite3.connect(":memory:")
    memory.execute(f"CREATE VIRTUAL TABLE t USING fts5(text, tokenize='{TOKENIZER}')")
    memory.executemany("INSERT INTO t VALUES (?)", [(cjk.separate(text),) for text in texts])
    latin = [word for word in literal_words(query) if not cjk.has_cjk(word)]
    phrases = [f'"{word}"' for word in latin]
    phrases += [f'"{latin[-1]}" *'] if latin else []
    for run in cjk.runs(query):
        phrases += [cjk.query_phrase(run[i : i + 2]) for i in range(max(1, len(run) - 1))]
    if not phrases:
        return False
    return memory.execute("SELECT 1 FROM t WHERE t MATCH ?", [" OR ".join(phrases)]).fetchone() is not None


def section_texts(site: Site) -> dict[str, dict[str, str]]:
    """Each page's sections' own text (heading and body) by URL, as search gives it; under "" what every section of
    the page shares: its path, title, summary and headings."""
    texts: dict[str, dict[str, str]] = {}
    with site.db() as conn:
        for path, url, title, summary, heading, anchor, body in conn.execute(
            "SELECT d.path, d.url, d.title, d.summary, s.heading, s.anchor, s.body"
            " FROM sections s JOIN documents d ON d.id = s.document_id"
        ):
            page = texts.setdefault(path, {"": " ".join([path, title, summary])})
            page[url + (f"#{anchor}" if anchor else "")] = cjk.join(f"{heading} {body}")
            page[""] += " " + heading
    return texts


def test_a_section_without_the_word_is_not_listed(mcp: Session) -> None:
    hit = mcp.ok("search", query="跨域", sections_per_page=10)["result"]
    assert [page["path"] for page in hit] == ["zh/cors.md"]
    assert [section["heading"] for section in hit[0]["sections"]] == ["CORS（跨域资源共享）"]
    # A section found through the heading above it alone: `Other` is under `Middleware reference`.
    headings = [
        s["heading"]
        for page in mcp.ok("search", query="reference", sections_per_page=10)["result"]
        for s in page["sections"]
    ]
    assert "Other" not in headings and "Middleware reference" in headings


def test_a_matching_section_never_scores_0(site: Site) -> None:
    # A word in more than half of all sections (every section of a small site) has an IDF of 1e-6 in FTS5.
    site.write("tasks.md", "# Tasks\n\nTasks run later.\n\n## More\n\nMore about tasks.\n")
    site.write("other.md", "# Other\n\nTasks elsewhere.\n")
    site.build()
    with session_over(site.index_path) as session:
        pages = session.ok("search", query="tasks", sections_per_page=10)["result"]
    assert len(pages) == 2
    for page in pages:
        assert page["score"] > 0 and all(section["score"] > 0 for section in page["sections"]), page


def test_every_listed_section_holds_a_query_term_for_random_queries(mcp: Session, own_site: Site) -> None:
    texts = section_texts(own_site)
    vocabulary = sorted({word for text in PAGES.values() for word in literal_words(text) if not cjk.has_cjk(word)})
    runs = sorted({run for text in PAGES.values() for run in cjk.runs(text)})
    cjk_words = sorted({run[i : i + length] for run in runs for length in (2, 3) for i in range(len(run) - 1)})
    noise = ["zebra", "quantum", "websock", "respon", "the", "how", "do", "I", "之", "없다"]
    rng = random.Random(2026)
    asked = answered = 0
    for _ in range(250):
        words = [rng.choice(rng.choice([vocabulary, vocabulary, cjk_words, noise])) for _ in range(rng.randint(1, 3))]
        query = " ".join(words)
        if rng.random() < 0.1:
            query = f'"{query}"'
        asked += 1
        for page in mcp.ok("search", query=query, limit=20, sections_per_page=10)["result"]:
            answered += 1
            own = texts[page["path"]]
            listed = [section["url"] for section in page["sections"]]
            with_term = [url for url in listed if holds_a_term([own[url]], query)]
            if with_term != listed:
                # Matched only through what every section of the page shares: its opening section alone.
                assert with_term == [] and len(listed) == 1, (query, page)
                assert holds_a_term([own[""]], query), (query, page)
    assert answered > asked  # the queries found pages, most of them several
