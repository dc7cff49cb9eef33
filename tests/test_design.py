"""The design stays visible: modules small enough to read whole, functions short enough to read at once, and the
architecture page naming every module the package has.

A function may be longer than the limit when its module's docstring names it in backticks and says why; the
exception is then written where a reader of the module sees it first.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "mkdocs_vault_mcp"
HOW_IT_WORKS = REPO / "docs" / "pages" / "how-it-works.md"
MODULE_LINES = 400
FUNCTION_LINES = 60


def package_modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_no_module_is_over_400_lines() -> None:
    long_modules = {
        str(path.relative_to(REPO)): length
        for path in package_modules()
        if (length := len(path.read_text(encoding="utf-8").splitlines())) > MODULE_LINES
    }
    assert long_modules == {}


def test_a_function_over_60_lines_is_explained_in_its_module_docstring() -> None:
    unexplained = []
    for path in package_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        explained = set(re.findall(r"`([A-Za-z_][\w.]*)`", ast.get_docstring(tree) or ""))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > FUNCTION_LINES and node.name not in explained:
                    unexplained.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({length} lines)")
    assert unexplained == []


def test_the_architecture_page_names_every_module_and_only_modules_that_exist() -> None:
    page = HOW_IT_WORKS.read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:[a-z0-9_]+/)*[a-z0-9_]+\.py)`", page)) - set(
        re.findall(r"`((?:bench|docs|tests)/[a-z0-9_/]+\.py)`", page)
    )
    modules = {str(path.relative_to(PACKAGE)) for path in package_modules() if path.name != "__init__.py"}
    assert sorted(modules - named) == [], "modules the architecture page does not describe"
    assert sorted(named - modules) == [], "modules the architecture page names that do not exist"
