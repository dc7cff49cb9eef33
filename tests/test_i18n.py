"""Multilingual sites built with mkdocs-static-i18n (real builds, both layouts, a real MCP session): every
language's pages are documents with their own URLs and `language`, a fallback copy is marked and never
repeats text in a search without a language filter, each language has its own stats page."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from helpers.mcp_session import Session, session_over
from helpers.site import Site

pytest.importorskip("mkdocs_static_i18n")

LANGUAGES = [
    {"locale": "en", "default": True, "name": "English"},
    {"locale": "fr", "name": "Français"},
    {"locale": "de", "name": "Deutsch"},
]
# Each page's text holds a word no other language's page holds. `only-english` has no French translation:
# the French site shows the English page (a fallback copy).
TEXTS = {
    ("en", "index"): "# Home\n\nWelcome to the orchard handbook.\n",
    ("en", "guide"): "# Guide\n\nPrune the apple trees in winter.\n",
    ("en", "only-english"): "# Kumquats\n\nThe kumquat chapter exists only in English.\n",
    ("fr", "index"): "# Accueil\n\nBienvenue dans le manuel du verger.\n",
    ("fr", "guide"): "# Guide\n\nTaillez les pommiers en hiver.\n",
    ("de", "index"): "# Startseite\n\nWillkommen im Obstgarten-Handbuch.\n",
    ("de", "guide"): "# Anleitung\n\nSchneiden Sie die Apfelbäume im Winter.\n",
    ("de", "only-english"): "# Kumquats auf Deutsch\n\nDas Kapitel über Zwergorangen.\n",
}


def source_path(layout: str, language: str, name: str) -> str:
    if layout == "folder":
        return f"{language}/{name}.md"
    return f"{name}.md" if language == "en" else f"{name}.{language}.md"


# What `path` each layout gives the French fallback copy of the English-only page, and the page it copies.
FALLBACK = {"folder": ("fr/only-english.md", "en/only-english.md"), "suffix": ("only-english.fr.md", "only-english.md")}


@pytest.fixture(scope="module", params=["folder", "suffix"])
def polyglot(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Site]:
    layout = request.param
    i18n = {"i18n": {"docs_structure": layout, "fallback_to_default": True, "languages": LANGUAGES}}
    if layout == "folder":
        # Material, reconfigured per language, with vault-mcp listed after the i18n plugin.
        i18n["i18n"]["reconfigure_material"] = True
        config = {"theme": {"name": "material"}, "plugins": [i18n, "vault-mcp"]}
    else:
        config = {"theme": {"name": "mkdocs"}, "plugins": ["vault-mcp", i18n]}  # listed before it
    site = Site(tmp_path_factory.mktemp(layout), config)
    for (language, name), text in TEXTS.items():
        site.write(source_path(layout, language, name), text)
    site.build()
    return layout, site


@pytest.fixture(scope="module")
def session(polyglot: tuple[str, Site]) -> Iterator[Session]:
    with session_over(polyglot[1].index_path) as session:
        yield session


def rows(session: Session, **filters: Any) -> dict[str, dict[str, Any]]:
    return {row["path"]: row for row in session.ok("query_documents", limit=1000, **filters)["result"]}


def test_every_language_is_indexed_with_exact_counts(polyglot: tuple[str, Site], session: Session) -> None:
    _, site = polyglot
    for language in ("en", "fr", "de"):
        assert session.ok("count_documents", language=language)["total"] == 3
    assert session.ok("count_documents")["total"] == 9
    by_language = session.ok("aggregate_documents", by="language")
    assert by_language["buckets"] == [{"key": "de", "count": 3}, {"key": "en", "count": 3}, {"key": "fr", "count": 3}]
    assert session.ok("stats")["languages"] == ["de", "en", "fr"]
    # The build says what it did per language; a second build changes and removes nothing.
    site.build()
    lines = site.messages(prefix="vault-mcp: Indexed")
    assert [line.partition(" in 0.")[0].partition(" in ")[0] for line in lines] == ["vault-mcp: Indexed 3 pages"] * 3
    for line, language in zip(lines, ("en", "fr", "de"), strict=True):
        assert f"3 pages in '{language}', 3 sections: 0 changed, 3 unchanged, 0 removed in " in line


def test_each_page_has_its_language_and_its_own_url(polyglot: tuple[str, Site], session: Session) -> None:
    layout, _ = polyglot
    found = rows(session)
    for (language, name), _text in TEXTS.items():
        row = found[source_path(layout, language, name)]
        assert row["language"] == language and "fallback_of" not in row
        prefix = "" if language == "en" else f"{language}/"
        assert row["url"] == "/" + prefix + ("" if name == "index" else f"{name}/")
    fallback, original = FALLBACK[layout]
    assert found[fallback]["language"] == "fr"
    assert found[fallback]["fallback_of"] == original
    assert found[fallback]["url"] == "/fr/only-english/"
    assert found[fallback]["title"] == found[original]["title"] == "Kumquats"
    read = session.ok("read", path=fallback)
    assert read["url"] == "/fr/only-english/" and "kumquat chapter" in read["markdown"]
    french = {source_path(layout, "fr", "index"), source_path(layout, "fr", "guide"), fallback}
    assert set(rows(session, language="fr")) == french
    recent = session.ok("get_recent", language="de")["result"]
    german = [source_path(layout, "de", name) for name in ("index", "guide", "only-english")]
    assert sorted(row["path"] for row in recent) == sorted(german)


def test_search_finds_every_language_with_its_own_url(polyglot: tuple[str, Site], session: Session) -> None:
    layout, _ = polyglot
    for word, language, name in (
        ("orchard", "en", "index"),
        ("verger", "fr", "index"),
        ("Obstgarten", "de", "index"),
        ("pommiers", "fr", "guide"),
        ("Zwergorangen", "de", "only-english"),
    ):
        [hit] = session.ok("search", query=word)["result"]
        assert hit["path"] == source_path(layout, language, name)
        prefix = "" if language == "en" else f"{language}/"
        assert hit["url"] == "/" + prefix + ("" if name == "index" else f"{name}/")
        assert session.paths(word, language=language) == [hit["path"]]


def test_a_fallback_page_appears_once_per_language_that_publishes_it(
    polyglot: tuple[str, Site], session: Session
) -> None:
    layout, _ = polyglot
    fallback, original = FALLBACK[layout]
    # Without a language filter the English text shows once, as the English page.
    assert session.paths("chapter") == [original]
    assert session.paths("chapter", language="fr") == [fallback]
    assert session.paths("chapter", language="en") == [original]
    assert session.paths("chapter", language="de") == []  # the German translation says "Kapitel"
    # Only the copy passes a filter: it answers.
    if layout == "folder":
        assert session.paths("chapter", folder="fr") == [fallback]
    assert session.ok("count_documents", query="chapter")["total"] == 2  # counting is not searching: every copy
    # No answer without a language filter repeats a page's text.
    for query in ("kumquat", "chapter English", "Kumquats", "guide", "winter OR hiver OR Winter"):
        snippets = [
            (hit["title"], section["snippet"])
            for hit in session.ok("search", query=query)["result"]
            for section in hit["sections"]
        ]
        assert len(snippets) == len(set(snippets)), (query, snippets)


def test_each_language_has_its_own_stats_page(polyglot: tuple[str, Site]) -> None:
    _, site = polyglot
    for prefix, language in (("", "en"), ("fr/", "fr"), ("de/", "de")):
        page = (site.site_dir / prefix / "stats" / "index.html").read_text(encoding="utf-8")
        assert 'data-stat="pages" data-count="3"' in page
        assert f'data-language="{language}"' in page
    snapshot = json.loads((site.site_dir / "vault-mcp" / "snapshot.json").read_text(encoding="utf-8"))
    assert snapshot["total"] == 9 and snapshot["schema_version"] == 1
    assert snapshot["by_language"]["buckets"] == [{"key": k, "count": 3} for k in ("de", "en", "fr")]


def test_a_removed_translation_goes_and_the_fallback_takes_its_place(tmp_path) -> None:
    languages = [{"locale": "en", "default": True, "name": "English"}, {"locale": "fr", "name": "Français"}]
    i18n = {"i18n": {"docs_structure": "folder", "fallback_to_default": True, "languages": languages}}
    site = Site(tmp_path, {"plugins": [i18n, "vault-mcp"]})
    site.write("en/index.md", "# Home\n\nWelcome.\n")
    site.write("en/faq.md", "# FAQ\n\nQuestions.\n")
    site.write("fr/index.md", "# Accueil\n\nBienvenue.\n")
    site.write("fr/faq.md", "# FAQ\n\nQuestions fréquentes.\n")
    site.build()
    (site.docs / "fr" / "faq.md").unlink()
    site.build()
    with session_over(site.index_path) as session:
        found = rows(session)
        assert set(found) == {"en/index.md", "en/faq.md", "fr/index.md", "fr/faq.md"}
        assert found["fr/faq.md"]["fallback_of"] == "en/faq.md"
        assert session.paths("fréquentes") == []
    assert "1 changed" in site.messages(prefix="vault-mcp: Indexed")[1]


def test_a_single_language_site_takes_the_theme_language(tmp_path) -> None:
    site = Site(tmp_path, {"theme": {"name": "material", "language": "ja"}, "plugins": ["vault-mcp"]})
    site.write("index.md", "# ホーム\n\nようこそ。\n")
    site.build()
    with session_over(site.index_path) as session:
        assert session.ok("count_documents", language="ja")["total"] == 1
        assert "the site's languages: 'ja'" in session.error("search", query="ようこそ", language="en")


def test_each_language_has_its_own_llms_txt_and_markdown_copies(polyglot: tuple[str, Site]) -> None:
    _, site = polyglot
    for prefix, home in (("", "Home"), ("fr/", "Accueil"), ("de/", "Startseite")):
        text = (site.site_dir / prefix / "llms.txt").read_text(encoding="utf-8")
        links = re.findall(r"^- \[([^\]]+)\]\(([^)]+)\)", text, re.M)
        # The language's own pages (a fallback copy included), linked relative to its root: no site_url.
        assert sorted(target for _, target in links) == ["guide/index.md", "index.md", "only-english/index.md"]
        assert (home, "index.md") in links
        for _, target in links:
            assert (site.site_dir / prefix / target).read_text(encoding="utf-8").startswith("---\ntitle: ")
    french_fallback = (site.site_dir / "fr" / "only-english" / "index.md").read_text(encoding="utf-8")
    assert "The kumquat chapter exists only in English." in french_fallback
    german = (site.site_dir / "de" / "only-english" / "index.md").read_text(encoding="utf-8")
    assert "Das Kapitel über Zwergorangen." in german
