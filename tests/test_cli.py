"""The command line as a user meets it: `python -m mkdocs_vault_mcp`, its help, the options that only HTTP takes,
a bind beyond loopback, and an index of another schema version. Real builds, real processes, real MCP sessions."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from mcp import StdioServerParameters

from conftest import Site, built_site
from mcp_session import session_with
from mkdocs_vault_mcp import __version__

PAGES = {
    "index.md": "# Home\n\nWelcome to the handbook.\n",
    "guide/install.md": "# Install\n\nRun the installer.\n",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return built_site(tmp_path_factory.mktemp("cli"), {"plugins": ["vault-mcp"]}, PAGES)


def run_module(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """`python -m mkdocs_vault_mcp ARGS`, as a user runs it where the script is not on PATH."""
    return subprocess.run([sys.executable, "-m", "mkdocs_vault_mcp", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "100"})


# --- python -m, --help --------------------------------------------------------------------------------------


def test_python_m_runs_the_command_and_serves_over_stdio(built: Site) -> None:
    done = run_module("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"mkdocs-vault-mcp {__version__}", done.stderr
    server = StdioServerParameters(command=sys.executable, args=["-m", "mkdocs_vault_mcp", "serve",
                                                                 str(built.site_dir)])
    with session_with(server) as session:
        assert session.ok("count_documents")["total"] == len(PAGES)


def help_entries(text: str) -> dict[str, str]:
    """Option -> its help text, from an argparse help screen (an entry's text may start on the next line)."""
    entries: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        option = re.match(r"  (-{1,2}[\w-]+)(?:,? [^ ]+)*(?:\s{2,}(.*))?$", line)
        if option:
            current = option[1]
            entries[current] = option[2] or ""
        elif current is not None and line.startswith(" " * 6) and line.strip():
            entries[current] += " " + line.strip()
        else:
            current = None
    return entries


@pytest.mark.parametrize("command", [[], ["serve"], ["index"]])
def test_help_gives_examples_and_says_what_every_option_does(command: list[str]) -> None:
    done = run_module(*command, "--help")
    assert done.returncode == 0, done.stderr
    entries = help_entries(done.stdout)
    assert {"-h", "--help"} & entries.keys()
    assert [option for option, text in entries.items() if len(text.strip()) < 10] == [], done.stdout
    if command != ["index"]:
        assert "examples:" in done.stdout and "mkdocs-vault-mcp serve site/ --transport http" in done.stdout
    if command == ["serve"]:
        assert {"--transport", "--host", "--port", "--path", "--allow-host", "--token-env"} <= entries.keys()
        assert "stdio" in entries["--transport"] and "http" in entries["--transport"]


@pytest.mark.parametrize("options", [["--port", "30110"], ["--host", "0.0.0.0"], ["--path", "/x"],
                                     ["--allow-host", "docs.example.com"], ["--host", "::1", "--port", "30110"]])
def test_an_http_option_without_the_http_transport_is_an_error_that_says_so(built: Site, options: list[str]) -> None:
    done = run_module("serve", str(built.site_dir), *options)
    assert done.returncode == 2, done.stderr
    named = [option for option in options if option.startswith("--")]
    assert all(option in done.stderr for option in named), done.stderr
    assert "--transport http" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""  # nothing served over stdio
