"""Chinese, Japanese and Korean text through a real MCP session over a real build: a word inside an
unbroken run of CJK characters is found, a phrase still matches as a phrase, snippets and headings read
as the page does."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from helpers.mcp_session import Session, session_over
from helpers.site import Site, built_site
from mkdocs_vault_mcp.index import cjk

PAGES = {
    "zh/cors.md": """
        # CORS（跨域资源共享）

        本页说明跨域资源共享的配置。浏览器中运行的前端与后端通信时需要它。

        ## 使用中间件

        导入 `CORSMiddleware` 并把它加到应用的中间件列表中。
        """,
    "zh/tasks.md": """
        # 后台任务

        你可以定义在返回响应后运行的后台任务。资源的释放也在这里进行。
        """,
    "ja/proxy.md": """
        # プロキシの背後

        アプリケーションの前段にあるプロキシによって転送されたリクエストを扱います。
        """,
    "ko/middleware.md": """
        # 미들웨어

        미들웨어를 애플리케이션에 추가할 수 있습니다.
        """,
    "en/middleware.md": """
        # Middleware

        Add middleware to the application; the CORS middleware is one of them.
        """,
}


@pytest.fixture(scope="module")
def cjk_site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return built_site(tmp_path_factory.mktemp("cjk"), {"plugins": ["vault-mcp"]}, PAGES)


@pytest.fixture(scope="module")
def session(cjk_site: Site) -> Iterator[Session]:
    with session_over(cjk_site.index_path) as session:
        yield session


def test_a_word_inside_a_run_of_characters_is_found(session: Session) -> None:
    # `跨域` stands inside `本页说明跨域资源共享的配置`, one token for unicode61 alone.
    assert session.paths("跨域") == ["zh/cors.md"]
    assert session.paths("转送") == []
    assert session.paths("転送") == ["ja/proxy.md"]  # inside `によって転送されたリクエスト`
    assert session.paths("미들웨어") == ["ko/middleware.md"]  # `미들웨어를`, a particle attached
    assert session.ok("count_documents", query="资源")["total"] == 2  # `资源共享`, `资源的释放`
    assert session.ok("count_documents", query="跨域", folder="zh")["total"] == 1


def test_a_phrase_matches_only_in_its_order(session: Session) -> None:
    assert session.paths('"资源共享"') == ["zh/cors.md"]
    assert session.paths('"共享资源"') == []
    assert session.ok("count_documents", query='"共享资源"')["total"] == 0
    # FTS5 syntax around CJK words still works: OR, NOT, column filters.
    assert sorted(session.paths("跨域 OR 后台任务")) == ["zh/cors.md", "zh/tasks.md"]
    assert session.paths("资源 NOT 跨域") == ["zh/tasks.md"]
    assert session.paths("title:后台") == ["zh/tasks.md"]


def test_a_longer_query_is_relaxed_to_its_bigrams(session: Session) -> None:
    # `跨域配置` is not in the text; its bigrams `跨域` and `配置` are, in the same section.
    assert session.paths("跨域配置")[0] == "zh/cors.md"


def test_a_query_mixing_chinese_and_a_code_name_ranks_the_page_with_both_first(session: Session) -> None:
    hits = session.ok("search", query="中间件 CORSMiddleware")["result"]
    assert hits[0]["path"] == "zh/cors.md"
    assert hits[0]["sections"][0]["heading"] == "使用中间件"


def test_snippets_and_headings_read_as_the_page(session: Session) -> None:
    hit = session.ok("search", query="跨域")["result"][0]
    section = hit["sections"][0]
    assert cjk.SEPARATOR not in section["snippet"] and cjk.SEPARATOR not in section["heading"]
    assert "**跨域**" in section["snippet"]
    assert "本页说明**跨域**资源共享的配置" in section["snippet"]
    heading = session.ok("search", query="中间件")["result"][0]["sections"][0]["heading"]
    read = session.ok("read", path="zh/cors.md", section=heading)
    assert read["markdown"].startswith("## 使用中间件")


def test_latin_text_keeps_its_tokens(session: Session, cjk_site: Site) -> None:
    assert session.paths("application") == ["en/middleware.md"]
    assert session.paths("middleware")[0] == "en/middleware.md"  # ko/middleware.md by its path only
    # Only text with CJK in it is changed; the documents table keeps the title as written.
    assert not any(cjk.SEPARATOR in section["body"] for section in cjk_site.sections("en/middleware.md"))
    assert any(cjk.SEPARATOR in section["body"] for section in cjk_site.sections("zh/tasks.md"))
    assert cjk_site.documents()["zh/tasks.md"]["title"] == "后台任务"


def test_cjk_text_is_stored_with_separators_and_read_back_without_them() -> None:
    stored = cjk.separate("FastAPI的中间件 CORS（跨域）")
    assert stored == "FastAPI\u200b的\u200b中\u200b间\u200b件\u200b CORS（\u200b跨\u200b域\u200b）"
    assert cjk.join(stored) == "FastAPI的中间件 CORS（跨域）"
    assert cjk.join("本\u200b**跨**\u200b**域**\u200b资") == "本**跨域**资"
    assert cjk.fts_query('跨域* OR "跨域 资源"') == ' "跨 域" * OR " 跨 域   资 源 "'
    assert cjk.bigram_phrases("容器镜像") == ['"容 器"', '"器 镜"', '"镜 像"']
