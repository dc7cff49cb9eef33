"""The README is the package's page on PyPI and a newcomer's first two minutes: short, the install and the
`plugins:` lines near the top, no link that breaks on the package page, and the test command that CI runs
word for word."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mkdocs_vault_mcp import __version__

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_short() -> None:
    assert len(README) <= 8_000


def test_install_and_the_plugins_lines_come_within_the_first_40_lines() -> None:
    """Install lines that work before a release is on PyPI: from a clone, and from the wheel that this version's
    `python -m build` writes (tests/test_package.py builds it and checks the README names it)."""
    top = README.splitlines()[:40]
    installs = [line.partition("#")[0].split() for line in top if line.startswith("pip install ")]
    assert ["pip", "install", "./mkdocs-vault-mcp"] in installs
    assert ["pip", "install", f"./mkdocs-vault-mcp/dist/mkdocs_vault_mcp-{__version__}-py3-none-any.whl"] in installs
    plugins = top.index("plugins:")
    assert top[plugins + 1 : plugins + 3] == ["  - search", "  - vault-mcp"]


def test_every_link_resolves_on_the_package_page_too() -> None:
    """PyPI renders the README away from the repository: a relative link or image would break there."""
    targets = re.findall(r"\]\(([^)]*)\)", README) + re.findall(r"""(?:href|src)=["']([^"']*)""", README)
    assert [target for target in targets if not target.startswith("https://")] == []


def test_ci_runs_the_readme_test_command_word_for_word() -> None:
    ci = REPO / ".ci" / "run"
    if not ci.is_file():
        pytest.skip("needs the repository's .ci/ (not an sdist)")
    commands = [line for line in README.splitlines() if line.startswith("python3 -m venv .venv && ")]
    test_command = [command for command in commands if "pytest" in command]
    assert len(test_command) == 1, commands
    (command,) = test_command
    assert "mkdocs build --strict -f docs/mkdocs.yml" in command
    assert f"\n{command} || status=$?\n" in ci.read_text(encoding="utf-8")
