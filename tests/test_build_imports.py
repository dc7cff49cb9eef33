"""What a build imports: every module a build loads is paid for by every build of every site, however small (the
fixed cost of a small site's build). The tools' side (search, related pages, the MCP server, the HTML to
Markdown conversion) loads only when something asks it a question."""

from __future__ import annotations

import subprocess
import sys

from helpers.site import Site


def test_a_build_imports_none_of_the_tools_side(tmp_path):
    site = Site(tmp_path, {"plugins": ["search", "vault-mcp"]})
    site.write_pages({"index.md": "# Home\n\nSee [the guide](guide.md).\n", "guide.md": "# Guide\n\n## Part\n"})
    modules = site.modules_a_build_imports()
    assert "mkdocs_vault_mcp.plugin" in modules  # the build did run the plugin
    assert (tmp_path / "site" / "vault-mcp" / "index.sqlite").is_file()
    tools_side = {
        "mkdocs_vault_mcp.index.search.answer",
        "mkdocs_vault_mcp.index.query.related",
        "mkdocs_vault_mcp.mcp.server",
        "mkdocs_vault_mcp.mcp.tools",
        "mkdocs_vault_mcp.index.html_to_markdown",
        "mcp",
        "uvicorn",
        "html_to_markdown",
    }
    assert modules & tools_side == set()
    # Nor what this build has no use for: search by meaning (off), the answers' types (the schemas' source), a
    # writer process (two pages write on a thread), the suggestions of a mistyped folder.
    unused = {
        "mkdocs_vault_mcp.index.search.semantic",
        "mkdocs_vault_mcp.index.answer_types",
        "mkdocs_vault_mcp.build_steps.built_site_config",
        "multiprocessing",
        "concurrent.futures.process",
        "difflib",
    }
    assert modules & unused == set()


def test_the_plugin_loads_no_html_parsing_before_a_document_is_made():
    """The build's own thread fingerprints each page and hands it to the writer, which makes the documents: the
    HTML parsing (page/documents.py, page/links.py: their regular expressions are a fifth of the plugin's import) loads
    there, in the writer's process on the other CPU when the writer has one."""
    done = subprocess.run(
        [sys.executable, "-c", "import sys, mkdocs_vault_mcp.plugin; print('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    )
    modules = set(done.stdout.split())
    assert {"mkdocs_vault_mcp.plugin", "mkdocs_vault_mcp.page.fingerprints", "mkdocs_vault_mcp.page.paths"} <= modules
    assert modules & {"mkdocs_vault_mcp.page.documents", "mkdocs_vault_mcp.page.links"} == set()


def test_the_plugin_loads_no_queries_before_the_writer_reads_what_the_build_publishes():
    """The stats page's and snapshot.json's answers are read by the writer, right after its commit (on the other
    CPU when the writer has a process): the queries and the filter compiler never load in the build's process."""
    done = subprocess.run(
        [sys.executable, "-c", "import sys, mkdocs_vault_mcp.plugin; print('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    )
    modules = set(done.stdout.split())
    assert {
        "mkdocs_vault_mcp.plugin",
        "mkdocs_vault_mcp.build_steps.snapshot",
        "mkdocs_vault_mcp.build_steps.stats_page",
    } <= modules
    queries = {
        "mkdocs_vault_mcp.index.answer_types",
        "mkdocs_vault_mcp.index.query.queries",
        "mkdocs_vault_mcp.index.filters",
        "mkdocs_vault_mcp.index.query.link_queries",
    }
    assert modules & queries == set()
