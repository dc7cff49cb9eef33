"""A code name that a section holds only as the text of a link names the page the link points to, not what the
section is about: its exact spelling does not lift that section (`中间件 CORSMiddleware` put the page on other
middleware, which links to the CORS page as "使用 CORSMiddleware 处理 CORS", above the CORS page). A section that
names it in its own text as well still holds it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.mcp_session import Session, session_over
from helpers.site import built_site

FILLER = "Each request passes through the application, which answers it with a response the client reads."

PAGES = {
    "advanced/middleware.md": f"""
        # Advanced middleware

        The tutorial shows how to add [custom middleware](../tutorial/middleware.md), and how to
        [use `CORSMiddleware` to handle CORS](../tutorial/cors.md).

        ## Adding ASGI middleware

        Any ASGI middleware works: pass its class to `app.add_middleware()` with its options. {FILLER}

        ## Compressing responses

        `GZipMiddleware` compresses large responses for clients that accept gzip (see
        [GZipMiddleware in Starlette](https://www.starlette.io/middleware/)). {FILLER}

        ## Trusted hosts

        `TrustedHostMiddleware` checks the Host header of every request against the allowed hosts. {FILLER}
        """,
    "tutorial/middleware.md": f"""
        # Middleware

        A middleware is a function that runs for every request before the path operation, and for every
        response before it is returned. {FILLER} {FILLER}

        ## Create a middleware

        Decorate a function with `@app.middleware("http")`; it receives the request and `call_next`. {FILLER}

        ## Before and after

        Code before `call_next` runs before the path operation, code after it once the response exists. {FILLER}
        """,
    "tutorial/cors.md": f"""
        # CORS (Cross-Origin Resource Sharing)

        CORS refers to situations where a front end running in a browser talks to a back end in another origin.
        {FILLER} {FILLER} {FILLER}

        ## Origin

        An origin is the combination of protocol, domain and port. {FILLER} {FILLER}

        ## Use CORSMiddleware

        Import `CORSMiddleware`, create a list of allowed origins and add it to the application as a
        middleware, with whether credentials, methods and headers are allowed. {FILLER}
        """,
    "tutorial/compression.md": f"""
        # Compression middleware

        A middleware can compress responses: the advanced guide shows
        [`GZipMiddleware`](../advanced/middleware.md). {FILLER}
        """,
    "tutorial/first-steps.md": f"""
        # First steps

        Create an application and run it with the development server. {FILLER} {FILLER}
        """,
    "tutorial/path-params.md": f"""
        # Path parameters

        Declare path parameters with the same syntax as Python format strings. {FILLER} {FILLER}
        """,
    "tutorial/query-params.md": f"""
        # Query parameters

        Parameters of the function that are not path parameters are read from the query string. {FILLER}
        """,
}
# Pages on other topics, so that `middleware` is as rare as on a real site (a word in most sections weighs nothing).
TOPICS = ("body", "cookies", "headers", "forms", "files", "errors", "security", "testing", "debugging", "templates")
PAGES |= {f"tutorial/{topic}.md": f"# Request {topic}\n\nHow to work with {topic}. {FILLER}\n" for topic in TOPICS}


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    site = built_site(Path(tmp_path_factory.mktemp("link-text")), {"plugins": ["vault-mcp"]}, PAGES)
    with session_over(site.index_path) as session:
        yield session


def test_a_code_name_only_in_a_link_does_not_outrank_the_page_the_link_points_to(session: Session) -> None:
    assert session.paths("middleware CORSMiddleware")[0] == "tutorial/cors.md"


def test_a_code_name_in_a_section_s_own_text_counts_beside_a_link_with_it(session: Session) -> None:
    assert session.paths("middleware GZipMiddleware")[0] == "advanced/middleware.md"
