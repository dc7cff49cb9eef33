"""A query of a native word and a code name (`테스트 TestClient`, `依赖项 Depends`) ranks first the page about the
code name, on real pages of the FastAPI docs in Korean and Chinese: a CJK word weighs as much as the code name beside
it, not once a character or a bigram."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from helpers.mcp_session import Session, session_over
from helpers.paths import CORPORA
from helpers.site import Site, built_site

# The pages that outranked the right one, and the right one, as the docs ship them.
PAGES = {
    "ko": [
        "tutorial/testing.md",
        "advanced/testing-websockets.md",
        "advanced/async-tests.md",
        "advanced/testing-events.md",
        "advanced/testing-dependencies.md",
        "tutorial/middleware.md",
        "tutorial/cors.md",
        "tutorial/frontend.md",
        "tutorial/dependencies/index.md",
        "tutorial/dependencies/sub-dependencies.md",
        "advanced/advanced-dependencies.md",
    ],
    # The whole tutorial, so that words weigh as they do in the docs (a few pages alone change BM25's IDF), and the
    # page on other middleware, whose opening section names `CORSMiddleware` only in a link to tutorial/cors.md.
    "zh": ["tutorial/**/*.md", "advanced/middleware.md"],
}


@pytest.fixture(scope="module", params=sorted(PAGES))
def mcp(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Session]]:
    language = request.param
    docs = CORPORA / "fastapi-docs" / language / "docs"
    if not docs.is_dir():
        pytest.skip("the FastAPI corpus is not there")
    files = [file for pattern in PAGES[language] for file in sorted(docs.glob(pattern))]
    pages = {file.relative_to(docs).as_posix(): file.read_text(encoding="utf-8") for file in files}
    # attr_list, as the docs are built: their headings end in `{ #id }`, which is otherwise part of the heading's text.
    config = {"plugins": ["vault-mcp"], "markdown_extensions": ["attr_list"]}
    site: Site = built_site(tmp_path_factory.mktemp(f"mixed-{language}"), config, pages)
    with session_over(site.index_path) as session:
        yield language, session


QUERIES = {
    "ko": {
        "테스트 TestClient": "tutorial/testing.md",
        "미들웨어 CORSMiddleware": "tutorial/cors.md",
    },
    "zh": {
        "依赖项 Depends": "tutorial/dependencies/index.md",
        "表单 Form": "tutorial/request-forms.md",
        "中间件 CORSMiddleware": "tutorial/cors.md",
    },
}


def test_a_native_word_and_a_code_name_rank_the_page_about_the_code_name_first(mcp: tuple[str, Session]) -> None:
    language, session = mcp
    for query, page in QUERIES[language].items():
        assert session.paths(query)[0] == page, query
