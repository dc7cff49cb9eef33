"""A folder that holds no page is an error naming the closest folders, in every tool that takes the shared
filters, as an unknown language is an error listing the languages: no one asks for an empty folder on purpose."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from helpers.mcp_session import Session, session_over
from helpers.site import Site, built_site

PAGES = {
    "index.md": "# Home\n\nSee [the API](reference/api/client.md).\n",
    "reference/index.md": "# Reference\n\nEvery option.\n",
    "reference/api/client.md": "# Client\n\nThe client class.\n",
    "guide/install.md": "# Install\n\nInstall the client.\n",
    "Guides/Upper.md": "# Upper\n\nA folder with a capital.\n",
}


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    site: Site = built_site(tmp_path_factory.mktemp("folders"), {"plugins": ["vault-mcp"]}, PAGES)
    with session_over(site.index_path) as session:
        yield session


def test_a_misspelled_folder_is_an_error_naming_the_closest_folders(mcp: Session) -> None:
    message = mcp.error("search", query="client", folder="refrence")
    assert message.startswith("No page is in folder 'refrence'")
    assert "'reference'" in message and "'guide'" not in message
    assert "'reference/api'" in mcp.error("count_documents", folder="reference/apis")
    # A wrong case is a misspelling too: folders are case-sensitive.
    assert "'Guides'" in mcp.error("query_documents", folder="guides")
    assert "'guide'" in mcp.error("get_recent", folder="Guide")


def test_every_tool_with_the_shared_filters_says_so(mcp: Session) -> None:
    for tool, arguments in [
        ("search", {"query": "client"}),
        ("count_documents", {}),
        ("query_documents", {}),
        ("aggregate_documents", {"by": "folder"}),
        ("get_recent", {}),
    ]:
        assert "'reference'" in mcp.error(tool, folder="/refrence/", **arguments), tool
    assert "'reference'" in mcp.error("links", show="orphans", where={"folder": "refrence"})


def test_a_folder_far_from_every_folder_lists_the_top_level_folders(mcp: Session) -> None:
    message = mcp.error("count_documents", folder="zzzzzz")
    assert "the site's top-level folders: 'Guides', 'guide', 'reference'." in message


def test_existing_folders_and_the_root_still_answer(mcp: Session) -> None:
    assert mcp.ok("count_documents", folder="reference")["total"] == 2
    assert mcp.ok("count_documents", folder="reference/api")["total"] == 1
    assert mcp.ok("count_documents", folder="")["total"] == 1
