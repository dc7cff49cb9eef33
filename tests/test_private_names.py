"""No module of the package, outside `mkdocs_vault_mcp/adapters/`, uses a dependency's private names.

A name starting with `_` (and CPython's `json.encoder.c_make_encoder`) is no part of a library's interface: it may
change in any release, without a word. Where the package needs one, an adapter holds it, says what it relies on and
checks the installed version (tests/test_adapters.py). Found by reading every module with `ast`:

- `from X import _name` from any module but the package's own;
- `module._name` (or deeper, `module.sub._name`) on a module or a name imported from a dependency: `sys._getframe`;
- any `obj._name` where the package never defines `_name` itself (so it is someone else's private attribute), and
  `getattr(obj, "_name")` and its kin;
- the private names that adapters wrap, under any spelling.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "mkdocs_vault_mcp"
ADAPTERS = PACKAGE / "adapters"
# What the adapters wrap: never used elsewhere, whichever object it is reached through.
ADAPTED = frozenset(
    {
        "_admit_session",
        "_server_instances",
        "_session_owners",
        "_requests_in_flight",
        "_connection",  # mcp
        "_rebuild_cond",
        "_want_rebuild",
        "_watched_paths",  # mkdocs.livereload
        "_getframe",
        "c_make_encoder",  # CPython
    }
)
# Documented public names that start with an underscore.
PUBLIC = frozenset({"os._exit", "sys._xoptions"})
ATTRIBUTE_FUNCTIONS = frozenset({"getattr", "setattr", "hasattr", "delattr"})


def modules() -> Iterator[Path]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if ADAPTERS not in path.parents:
            yield path


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def own_private_names() -> set[str]:
    """Every private name the package defines: functions, classes, variables, attributes it assigns."""
    names: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
    return {name for name in names if is_private(name)} - ADAPTED


def outside(module: str | None, level: int = 0) -> bool:
    """Whether an import names a module outside the package (a dependency, or the standard library)."""
    return level == 0 and module is not None and not module.startswith("mkdocs_vault_mcp")


def imported_names(tree: ast.Module) -> dict[str, str]:
    """Local name -> what it names, for each import of a module outside the package: `json`, `os.path`,
    `mcp.server.lowlevel.Server`."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if outside(alias.name):
                    local = alias.asname or alias.name.partition(".")[0]
                    bound[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom) and outside(node.module, node.level):
            bound.update({alias.asname or alias.name: f"{node.module}.{alias.name}" for alias in node.names})
    return bound


def dotted(node: ast.expr) -> list[str] | None:
    """`a.b.c` as ["a", "b", "c"]; None for anything but names and attributes."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def private_import(node: ast.ImportFrom) -> Iterator[str]:
    if outside(node.module, node.level):
        assert node.module is not None
        for alias in node.names:
            if is_private(alias.name) or alias.name in ADAPTED or is_private(node.module.split(".")[-1]):
                yield f"from {node.module} import {alias.name}"


def private_attribute(node: ast.Attribute, imported: dict[str, str], own: set[str]) -> Iterator[str]:
    parts = dotted(node)
    full = ".".join([imported.get(parts[0], parts[0]), *parts[1:]]) if parts else None
    if full in PUBLIC:
        return
    if parts and parts[0] in imported and any(is_private(part) or part in ADAPTED for part in parts[1:]):
        yield str(full)
    elif node.attr in ADAPTED:
        yield f".{node.attr}"
    elif is_private(node.attr) and node.attr not in own:
        owner = node.value.id if isinstance(node.value, ast.Name) else "..."
        if owner not in ("self", "cls"):
            yield f"{owner}.{node.attr}, an attribute the package does not define"


def private_attribute_by_name(node: ast.Call, own: set[str]) -> Iterator[str]:
    """getattr(obj, "_name") and its kin."""
    if not (isinstance(node.func, ast.Name) and node.func.id in ATTRIBUTE_FUNCTIONS and len(node.args) >= 2):
        return
    name = node.args[1].value if isinstance(node.args[1], ast.Constant) else None
    if isinstance(name, str) and (name in ADAPTED or (is_private(name) and name not in own)):
        yield f"{node.func.id}(..., {name!r})"


def findings(source: str, where: str, own: set[str]) -> Iterator[str]:
    """Each use of a private name in the module `source` (named `where` in the findings)."""
    tree = ast.parse(source)
    imported = imported_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found = private_import(node)
        elif isinstance(node, ast.Attribute):
            found = private_attribute(node, imported, own)
        elif isinstance(node, ast.Call):
            found = private_attribute_by_name(node, own)
        else:
            continue
        yield from (f"{where}:{node.lineno}: {what}" for what in found)


def test_no_module_outside_the_adapters_uses_a_dependencys_private_names() -> None:
    own = own_private_names()
    found = [
        finding
        for path in modules()
        for finding in findings(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE.parent)), own)
    ]
    assert not found, (
        "Private names of dependencies used outside mkdocs_vault_mcp/adapters/ (move each into an adapter that "
        "says what it relies on, or use the public interface):\n  " + "\n  ".join(found)
    )


def test_the_check_finds_what_it_looks_for() -> None:
    """Each kind of use the check is for is found, and os._exit (documented) is not."""
    code = """
import sys
import json.encoder
from mcp.server.streamable_http_manager import _error_response
from mkdocs import livereload

frame = sys._getframe(1)
encoder = json.encoder.c_make_encoder
server = livereload.LiveReloadServer._watched_paths
def admit(manager):
    return manager._admit_session, manager._unknown_private, getattr(manager, "_server_instances")
import os
os._exit(0)
"""
    found = list(findings(code, "probe.py", own_private_names()))
    expected = [
        "from mcp.server.streamable_http_manager import _error_response",
        "sys._getframe",
        "json.encoder.c_make_encoder",
        "mkdocs.livereload.LiveReloadServer._watched_paths",
        ".\u005fadmit_session",
        "manager._unknown_private",
        "getattr(..., '_server_instances')",
    ]
    for what in expected:
        assert any(what in finding for finding in found), (what, found)
    assert not any("os._exit" in finding for finding in found), found
