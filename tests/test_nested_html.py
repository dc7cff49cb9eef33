"""Pages whose HTML nests very deep (raw HTML in Markdown, a plain `mkdocs build`): `read` answers each of them,
as Markdown cut at a depth with a note that says so, instead of failing in the converter's recursion; a huge one
is answered within the call's budget, and reading it holds up no other client."""

from __future__ import annotations

import threading
import time

import pytest

from helpers.mcp_session import session_over
from helpers.served import call, message, server_process
from helpers.site import Site, built_site
from mkdocs_vault_mcp.index.html_to_markdown import DEPTH_NOTE, MAX_DEPTH

HUGE_DEPTH = 100_000  # a 1.3 MB page of nested divs
DEEP_DEPTH = 30_000  # a 390 kB page: converted in a worker process, as the huge one, long enough to overlap
READERS = 8


def nested(opening: str, closing: str, depth: int, inner: str) -> str:
    return opening * depth + inner + closing * depth


PAGES = {
    "divs.md": "# Divs\n\n" + nested("<div>", "</div>", 400, "DEEP-DIV-TEXT") + "\n\nAfter the divs.\n",
    "quotes.md": "# Quotes\n\n" + nested("<blockquote>", "</blockquote>", 400, "<p>DEEP-QUOTE-TEXT</p>") + "\n",
    "lists.md": "# Lists\n\n<ul>" + nested("<li>item<ul>", "</ul></li>", 200, "<li>DEEP-LIST-TEXT</li>") + "</ul>\n",
    "shallow.md": "# Shallow\n\n<div><div><p>Plain <b>bold</b> text.</p></div></div>\n",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    pages = {**PAGES, "huge.md": "# Huge\n\n" + nested("<div>", "</div>", HUGE_DEPTH, "HUGE-DEEP-TEXT") + "\n"}
    pages.update(
        {
            f"deep{n}.md": f"# Deep {n}\n\n" + nested("<div>", "</div>", DEEP_DEPTH, f"DEEP-{n}") + "\n"
            for n in range(READERS)
        }
    )
    return built_site(tmp_path_factory.mktemp("nested"), {"plugins": [{"vault-mcp": {"stats_page": False}}]}, pages)


@pytest.mark.parametrize(
    ("path", "deep_text"),
    [("divs.md", "DEEP-DIV-TEXT"), ("quotes.md", "DEEP-QUOTE-TEXT"), ("lists.md", "DEEP-LIST-TEXT")],
)
def test_deeply_nested_html_is_read_cut_at_a_depth_with_a_note(site, path, deep_text):
    with session_over(site.index_path) as mcp:
        markdown = mcp.ok("read", path=path)["markdown"]
        assert deep_text in markdown and markdown.endswith(DEPTH_NOTE), markdown[-300:]
        assert f"more than {MAX_DEPTH} levels deep" in DEPTH_NOTE
        outline = mcp.ok("read", path=path, view="outline")["outline"]
        assert sum(part["characters"] for part in outline) == len(markdown)


def test_the_markdown_keeps_what_is_not_too_deep(site):
    with session_over(site.index_path) as mcp:
        assert mcp.ok("read", path="shallow.md")["markdown"] == "# Shallow\n\nPlain **bold** text."
        lists = mcp.ok("read", path="lists.md")["markdown"]
        assert lists.startswith("# Lists\n\n- item\n  - item\n"), lists[:200]
        assert "After the divs." in mcp.ok("read", path="divs.md")["markdown"]


def test_a_huge_nested_page_is_read_within_the_calls_budget(site):
    with session_over(site.index_path) as mcp:
        result = mcp.call("read", path="huge.md")
    if result.is_error:
        assert "seconds of work, the limit per call" in result.content[0].text, result  # type: ignore[union-attr]
    else:
        markdown = result.structured_content["markdown"]
        assert "HUGE-DEEP-TEXT" in markdown and markdown.endswith(DEPTH_NOTE)


def test_deep_pages_read_at_once_hold_up_no_other_client(site):
    """Eight reads of different deeply nested pages at once: each answers (or says it needed more than the limit
    per call), and light calls of another client meanwhile are answered as usual."""
    with server_process(site.index_path) as (port, _):
        assert not call(port, "search", query="bold").get("isError")  # warm
        reads: list[dict] = []
        paths = [f"deep{n}.md" for n in range(READERS)]
        threads = [
            threading.Thread(target=lambda path=path: reads.append(call(port, "read", path=path))) for path in paths
        ]
        for thread in threads:
            thread.start()
        time.sleep(0.1)  # the reads arrived (each is a few hundredths of a second of work once its worker runs)
        # For each light call, how many reads were answered while it waited: one held up behind the reads would
        # see most of them answered first; one that is not, at most the few that end meanwhile.
        reads_answered_while_waiting: list[int] = []
        while any(thread.is_alive() for thread in threads):
            before = len(reads)
            result = call(port, "search", query="bold")
            reads_answered_while_waiting.append(len(reads) - before)
            assert not result.get("isError") and result["structuredContent"]["result"], result
            time.sleep(0.05)
    for thread in threads:
        thread.join()
    assert len(reads) == READERS
    for result in reads:
        if result.get("isError"):
            assert "seconds of work, the limit per call" in message(result), message(result)
        else:
            markdown = result["structuredContent"]["markdown"]
            assert "DEEP-" in markdown and markdown.endswith(DEPTH_NOTE), markdown[-200:]
    assert reads_answered_while_waiting, "no light call ran while the reads did"
    assert max(reads_answered_while_waiting) < READERS // 2, reads_answered_while_waiting
