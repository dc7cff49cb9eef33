"""`server.json`, the package's entry for the MCP registry: the registry's current schema and field names, the PyPI
package at this version, and a command that runs; the README carries the name, as the registry's ownership check
of a PyPI package asks."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from mkdocs_vault_mcp import __version__

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(sys.executable).parent / "mkdocs-vault-mcp"
# The registry's current schema (pkg/model/constants.go in modelcontextprotocol/registry, CurrentSchemaVersion).
SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
SERVER = json.loads((ROOT / "server.json").read_text(encoding="utf-8"))


def test_it_describes_this_version_of_the_pypi_package_in_the_current_schema() -> None:
    assert SERVER["$schema"] == SCHEMA
    assert SERVER["version"] == __version__
    [package] = SERVER["packages"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert package["registryType"] == "pypi" and package["registryBaseUrl"] == "https://pypi.org"
    assert package["identifier"] == project["name"] and package["version"] == __version__
    assert package["runtimeHint"] == "uvx" and package["transport"] == {"type": "stdio"}
    # The schema's limits: a reverse-DNS name with one slash, a description of at most 100 characters.
    assert re.fullmatch(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+", SERVER["name"])
    assert 0 < len(SERVER["description"]) <= 100


def test_its_arguments_make_the_serve_command() -> None:
    arguments = SERVER["packages"][0]["packageArguments"]
    assert all(argument["type"] == "positional" for argument in arguments)
    command = [argument.get("value") or "." for argument in arguments]
    assert command == ["serve", "."] and arguments[1]["isRequired"] is True
    done = subprocess.run([str(SCRIPT), *command[:-1], "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "SITE_DIR" in done.stdout, done.stderr


def test_the_readme_names_the_server_for_the_registrys_ownership_check() -> None:
    assert f"mcp-name: {SERVER['name']}" in (ROOT / "README.md").read_text(encoding="utf-8")
