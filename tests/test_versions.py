"""A site published in versions by the real `mike` (spec section 9): each version's index, snapshot and stats
page name the version it was built as, and one server answers from every version."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from mcp import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import ResourceTemplateReference

from helpers.hosted import start_app, stop
from helpers.mcp_session import Session, session_over, session_with
from helpers.mike_site import VERSION_2, mike_site
from helpers.ports import free_port
from helpers.scripted_git import isolate_git, run_git
from helpers.site import built_site
from mkdocs_vault_mcp.index.query.version_changes import (
    CHANGED_LINES,
    LINE_CHARS,
    PageSections,
    Section,
    changed_lines,
    compared,
    row,
)
from mkdocs_vault_mcp.mcp.server import IndexReader, create_server
from mkdocs_vault_mcp.mcp.versions import Versions, local_index


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Versions 1.0 and 2.0 (alias latest) deployed by mike, the deploy branch checked out."""
    root = tmp_path_factory.mktemp("mike")
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate_git(monkeypatch, root / "home", ceiling=root.parent)
        return mike_site(root)[1]


def info(index: Path, key: str) -> str | None:
    with sqlite3.connect(f"file:{index}?mode=ro", uri=True) as conn:
        row = conn.execute("SELECT value FROM info WHERE key = ?", [key]).fetchone()
    return row[0] if row else None


@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_each_version_records_the_version_mike_built_it_as(published: Path, version: str) -> None:
    assert json.loads((published / "versions.json").read_text())[0]["aliases"] == ["latest"]
    assert info(published / version / "vault-mcp" / "index.sqlite", "site_version") == version
    snapshot = json.loads((published / version / "vault-mcp" / "snapshot.json").read_text())
    assert snapshot["version"] == version
    stats_html = (published / version / "stats" / "index.html").read_text()
    assert f'data-version="{version}"' in stats_html


def test_the_version_option_names_the_version_and_an_unversioned_site_names_none(tmp_path: Path) -> None:
    named = built_site(
        tmp_path / "named", {"plugins": [{"vault-mcp": {"site_version": "3.1"}}]}, {"index.md": "# Home\n"}
    )
    assert info(named.index_path, "site_version") == "3.1"
    assert json.loads((named.site_dir / "vault-mcp" / "snapshot.json").read_text())["version"] == "3.1"
    plain = built_site(tmp_path / "plain", {"plugins": ["vault-mcp"]}, {"index.md": "# Home\n"})
    assert info(plain.index_path, "site_version") == ""
    assert "version" not in json.loads((plain.site_dir / "vault-mcp" / "snapshot.json").read_text())
    assert "data-version" not in (plain.site_dir / "stats" / "index.html").read_text()


@pytest.fixture
def versioned(published: Path) -> Iterator[Session]:
    """A session with a server of every version of the checkout, as `serve FOLDER` makes it."""
    versions = Versions(published, lambda name: IndexReader(local_index(published, name)))
    with session_with(create_server(versions.choose(None)[0], versions=versions)) as session:
        yield session


def test_search_with_a_version_finds_what_only_that_version_has(versioned: Session) -> None:
    assert versioned.paths("zanzibar", version="1.0") == ["guide.md"]
    assert versioned.paths("zanzibar", version="2.0") == []
    assert versioned.paths("quasar", version="2.0") == ["guide.md"]
    assert versioned.paths("quasar", version="1.0") == []
    assert versioned.ok("read", path="old.md", version="1.0")["title"] == "Old page"
    assert "old.md" in versioned.error("read", path="old.md")


def test_without_a_version_the_answer_is_from_latest_and_says_so(versioned: Session) -> None:
    answer = versioned.call("search", query="quasar")
    assert answer.meta is not None
    assert answer.meta["version"] == "2.0"
    assert answer.meta["versions"] == ["2.0", "1.0"]
    assert answer.meta["aliases"] == {"latest": "2.0"}
    by_alias = versioned.call("count_documents", version="latest")
    assert by_alias.meta is not None and by_alias.meta["version"] == "2.0"
    older = versioned.call("stats", version="1.0")
    assert older.meta is not None and older.meta["version"] == "1.0"


def read_page(session: Session, uri: str) -> tuple[str, dict[str, Any]]:
    """The Markdown `resources/read` gives for `uri`, and the answer's `_meta`."""
    answer = session.portal.call(lambda: session.client.read_resource(uri, cache_mode="bypass"))
    return answer.contents[0].text, answer.meta or {}


def test_a_resource_uri_names_the_version_it_reads(versioned: Session) -> None:
    old, meta = read_page(versioned, "docs://example.com/guide.md?version=1.0")
    assert "zanzibar" in old and "quasar" not in old and meta["version"] == "1.0"
    by_alias, meta = read_page(versioned, "docs://example.com/guide.md?version=latest")
    assert "quasar" in by_alias and meta["version"] == "2.0"
    default, meta = read_page(versioned, "docs://example.com/guide.md")
    assert default == by_alias and meta["version"] == "2.0" and meta["versions"] == ["2.0", "1.0"]
    assert "Only the first release" in read_page(versioned, "docs://example.com/old.md?version=1.0")[0]
    for uri, expected in [
        ("docs://example.com/old.md", "old.md"),
        ("docs://example.com/guide.md?version=9.9", "unknown version '9.9'"),
        ("docs://example.com/guide.md?lang=en", "only ?version=VERSION"),
    ]:
        with pytest.raises(MCPError) as raised:
            read_page(versioned, uri)
        assert expected in raised.value.message, raised.value.message


def test_resources_list_the_default_version_and_complete_versions_and_their_paths(versioned: Session) -> None:
    listed = versioned.portal.call(lambda: versioned.client.list_resources(cache_mode="bypass"))
    assert sorted(resource.name for resource in listed.resources) == sorted(VERSION_2)
    assert listed.resources[0].uri.startswith("docs://example.com/") and "?" not in listed.resources[0].uri
    assert listed.meta is not None and listed.meta["version"] == "2.0" and listed.meta["aliases"] == {"latest": "2.0"}
    (template,) = versioned.portal.call(versioned.client.list_resource_templates).resource_templates
    assert template.uri_template == "docs://example.com/{+path}{?version}"
    ref = ResourceTemplateReference(uri=template.uri_template)

    def complete(name: str, value: str, context: dict[str, str] | None = None) -> list[str]:
        asked = {"name": name, "value": value}
        return versioned.portal.call(lambda: versioned.client.complete(ref, asked, context)).completion.values

    assert complete("version", "") == ["2.0", "1.0", "latest"]
    assert complete("version", "1") == ["1.0"] and complete("version", "la") == ["latest"]
    assert complete("path", "o", {"version": "1.0"}) == ["old.md"]
    assert complete("path", "ne", {"version": "1.0"}) == []
    assert complete("path", "ne") == ["new.md"]  # the default version's pages
    with pytest.raises(MCPError) as raised:
        complete("path", "g", {"version": "9.9"})
    assert "unknown version '9.9'" in raised.value.message


def test_a_site_without_versions_keeps_its_resource_uris_and_refuses_a_version(tmp_path: Path) -> None:
    plain = built_site(
        tmp_path, {"site_url": "https://example.com/", "plugins": ["vault-mcp"]}, {"index.md": "# Home\n\nHi.\n"}
    )
    with session_over(plain.index_path) as session:
        (template,) = session.portal.call(session.client.list_resource_templates).resource_templates
        assert template.uri_template == "docs://example.com/{+path}"
        assert "Hi." in read_page(session, "docs://example.com/index.md")[0]
        with pytest.raises(MCPError) as raised:
            read_page(session, "docs://example.com/index.md?version=1.0")
        assert "no versions.json" in raised.value.message


def test_an_unknown_version_is_an_error_that_lists_the_versions(versioned: Session) -> None:
    message = versioned.error("search", query="widget", version="9.9")
    assert "unknown version '9.9'" in message and "2.0, 1.0" in message and "latest (2.0)" in message


def test_a_site_without_versions_refuses_a_version_and_answers_as_before(tmp_path: Path) -> None:
    plain = built_site(tmp_path, {"plugins": ["vault-mcp"]}, {"index.md": "# Home\n\nThe zanzibar switch.\n"})
    with session_over(plain.index_path) as session:
        assert "no versions.json" in session.error("search", query="zanzibar", version="1.0")
        answer = session.call("search", query="zanzibar")
        assert answer.meta is not None and "version" not in answer.meta and "versions" not in answer.meta
        assert session.paths("zanzibar") == ["index.md"]


def test_serve_of_the_checkout_answers_from_every_version(published: Path) -> None:
    command = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mkdocs_vault_mcp", "serve", str(published)],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    with session_with(command) as session:
        assert session.paths("zanzibar", version="1.0") == ["guide.md"]
        answer = session.call("search", query="quasar")
        assert answer.meta is not None and answer.meta["version"] == "2.0"
        assert session.paths("quasar") == ["guide.md"]


def test_the_hosted_app_under_uvicorn_answers_from_every_version(published: Path) -> None:
    port = free_port()
    process = start_app(published, port)
    try:
        with session_with(f"http://127.0.0.1:{port}/mcp") as session:
            assert session.paths("zanzibar", version="1.0") == ["guide.md"]
            assert session.paths("zanzibar") == []
            answer = session.call("search", query="quasar")
            assert answer.meta is not None and answer.meta["version"] == "2.0"
            assert answer.meta["versions"] == ["2.0", "1.0"]
            assert "unknown version '9.9'" in session.error("search", query="widget", version="9.9")
    finally:
        stop(process)


def test_changes_lists_the_sections_added_removed_and_changed_since_a_version(versioned: Session) -> None:
    answer = versioned.ok("links", show="changes", target="guide.md", since="1.0")
    assert answer["page"] == "changed" and answer["total"] == 3
    by_change = {row["change"]: row for row in answer["result"]}
    assert [row["change"] for row in answer["result"]] == ["changed", "added", "removed"]
    changed = by_change["changed"]
    assert changed["heading"] == "Install"
    assert changed["url"] == "https://example.com/widget/2.0/guide/#install"
    assert changed["since_url"] == "https://example.com/widget/1.0/guide/#install"
    assert changed["lines"] == ["- It needs Python 3.9.", "+ It needs Python 3.11."], changed["lines"]
    assert changed["more_lines"] == 0
    assert by_change["added"]["heading"] == "Plugins" and by_change["added"]["since_url"] is None
    removed = by_change["removed"]
    assert removed["heading"] == "Legacy mode" and removed["url"] is None
    assert removed["since_url"] == "https://example.com/widget/1.0/guide/#legacy-mode"
    backwards = versioned.ok("links", show="changes", target="guide.md", since="latest", version="1.0")
    assert {row["heading"]: row["change"] for row in backwards["result"]} == {
        "Install": "changed",
        "Legacy mode": "added",
        "Plugins": "removed",
    }


def test_changes_says_when_a_page_is_new_or_gone(versioned: Session) -> None:
    new = versioned.ok("links", show="changes", target="new.md", since="1.0")
    assert new["page"] == "new" and [row["change"] for row in new["result"]] == ["added"]
    gone = versioned.ok("links", show="changes", target="old.md", since="1.0")
    assert gone["page"] == "gone" and [row["change"] for row in gone["result"]] == ["removed"]
    same = versioned.ok("links", show="changes", target="guide.md", since="2.0")
    assert same["page"] == "unchanged" and same["result"] == []
    assert "nowhere.md" in versioned.error("links", show="changes", target="nowhere.md", since="1.0")
    assert "unknown version '0.1'" in versioned.error("links", show="changes", target="guide.md", since="0.1")
    assert "needs target" in versioned.error("links", show="changes", since="1.0")
    assert "show='changes' only" in versioned.error("links", show="broken", since="1.0")


def test_a_changed_section_lists_its_changed_lines_within_bounds() -> None:
    before = "\n".join(f"line {n} " + "y" * 400 for n in range(100))
    after = "\n".join(f"line {n} at /2.0/ " + "x" * 400 for n in range(100))
    lines = changed_lines(before, "1.0", after, "2.0")
    assert len(lines) == 200 and lines[0].startswith("- line 0 y") and lines[100].startswith("+ line 0 at /2.0/ x")
    shown = row("changed", Section("Install", 2, "install", after), "https://x/2.0/", lines, "https://x/1.0/")
    assert len(shown["lines"]) == CHANGED_LINES and shown["more_lines"] == 200 - CHANGED_LINES
    assert max(len(line) for line in shown["lines"]) == LINE_CHARS
    moved = changed_lines("[Home](https://x/1.0/home/)", "1.0", "[Home](https://x/2.0/home/)", "2.0")
    assert moved == []  # a link's version folder alone changes nothing


def changelog(version: str, releases: list[tuple[str, str]]) -> PageSections:
    """A changelog as Python-Markdown anchors it: each release's "Added" numbered by its position on the page."""
    sections = [Section("Changelog", 1, "changelog", "# Changelog")]
    for n, (release, added) in enumerate(releases):
        suffix = f"_{n}" if n else ""
        sections += [
            Section(release, 2, release.replace(".", ""), f"## {release}"),
            Section("Added", 3, f"added{suffix}", added),
        ]
    return PageSections(version, f"https://x/{version}/changelog/", tuple(sections))


def test_a_repeated_heading_is_matched_under_the_headings_above_it_not_by_its_numbered_anchor() -> None:
    older = changelog("1.0", [("1.0", "- Widgets."), ("0.9", "- Gadgets.")])
    newer = changelog("2.0", [("2.0", "- Plugins."), ("1.0", "- Widgets, faster."), ("0.9", "- Gadgets.")])
    rows = compared(newer, older)
    assert [(r["change"], r["heading"], r["url"], r["since_url"]) for r in rows] == [
        ("added", "2.0", "https://x/2.0/changelog/#20", None),
        ("added", "Added", "https://x/2.0/changelog/#added", None),
        ("changed", "Added", "https://x/2.0/changelog/#added_1", "https://x/1.0/changelog/#added"),
    ], rows  # 0.9's "Added" is unchanged though its anchor moved from added_1 to added_2
    assert rows[2]["lines"] == ["- - Widgets.", "+ - Widgets, faster."]


def test_stats_counts_the_pages_of_every_version(versioned: Session) -> None:
    answer = versioned.call("stats")
    assert answer.meta is not None
    assert answer.meta["version_documents"] == {"2.0": 3, "1.0": 3}
    assert answer.structured_content is not None and answer.structured_content["document_count"] == 3


def test_a_version_deployed_while_serving_is_served_at_the_next_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(monkeypatch, tmp_path / "home", ceiling=tmp_path.parent)
    repo, checkout = mike_site(tmp_path)
    versions = Versions(checkout, lambda name: IndexReader(local_index(checkout, name)))
    with session_with(create_server(versions.choose(None)[0], versions=versions)) as session:
        assert "unknown version '3.0'" in session.error("count_documents", version="3.0")
        repo.deploy({**VERSION_2, "later.md": "# Later\n\nThe nebula flag arrives in 3.0.\n"}, "3.0", "dev")
        run_git(checkout, "reset", "-q", "--hard")  # the checkout follows the branch, as a pull would
        assert session.paths("nebula", version="dev") == ["later.md"]
        answer = session.call("count_documents", version="3.0")
        assert answer.meta is not None and answer.meta["versions"] == ["3.0", "2.0", "1.0"]
        default = session.call("count_documents").meta
        assert default is not None and default["version"] == "2.0"  # latest stayed on 2.0


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_serve_url_of_a_versioned_site_answers_from_every_version_and_picks_up_a_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(monkeypatch, tmp_path / "home", ceiling=tmp_path.parent)
    repo, checkout = mike_site(tmp_path)
    http = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(checkout)))
    threading.Thread(target=http.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{http.server_address[1]}/"
    command = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mkdocs_vault_mcp", "serve", url, "--cache", str(tmp_path / "cache"), "--refresh", "5"],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    try:
        with session_with(command) as session:
            assert session.paths("zanzibar", version="1.0") == ["guide.md"]
            answer = session.call("search", query="quasar")
            assert answer.meta is not None and answer.meta["version"] == "2.0"
            assert answer.meta["index_url"] == url + "2.0/vault-mcp/index.sqlite"
            assert "unknown version '9.9'" in session.error("stats", version="9.9")
            changes = session.ok("links", show="changes", target="guide.md", since="1.0")
            assert sorted(row["change"] for row in changes["result"]) == ["added", "changed", "removed"]
            repo.deploy({**VERSION_2, "later.md": "# Later\n\nThe nebula flag arrives in 3.0.\n"}, "3.0", "dev")
            run_git(checkout, "reset", "-q", "--hard")
            deadline = time.monotonic() + 120
            while "3.0" not in (session.call("stats").meta or {})["versions"]:
                assert time.monotonic() < deadline, "the new version was never served"
                time.sleep(1)
            assert session.paths("nebula", version="3.0") == ["later.md"]
    finally:
        http.shutdown()
        http.server_close()
