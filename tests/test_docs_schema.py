"""docs/schema.json, the JSON schema of the plugin's entry in mkdocs.yml that editors validate against: it
accepts every real option (each option's documented example, its default, and the configs of example-site and
of the docs), and flags a misspelled option or a wrong value, as MkDocs' own validation does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft7Validator
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.utils.yaml import get_yaml_loader

from mkdocs_vault_mcp.config import VaultMcpConfig

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "docs" / "schema.json"

pytestmark = pytest.mark.skipif(not SCHEMA.is_file(), reason="needs the repository's docs/ (not an sdist)")
OPTIONS = [name for name, _ in VaultMcpConfig._schema]


def validator() -> Draft7Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    Draft7Validator.check_schema(schema)
    return Draft7Validator(schema)


def errors(entry: Any) -> list[str]:
    return [error.message for error in validator().iter_errors(entry)]


def mkdocs_accepts(options: dict[str, Any]) -> bool:
    config = VaultMcpConfig()
    config.load_dict(options)
    failed, _ = config.validate()
    return not failed


def test_the_schema_names_every_option_and_nothing_else() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    properties = schema["oneOf"][1]["properties"]["vault-mcp"]["properties"]
    assert list(properties) == OPTIONS
    for name, option in VaultMcpConfig._schema:
        assert properties[name]["default"] == option.default, name
        assert properties[name]["title"] and properties[name]["markdownDescription"], name


def test_the_plain_entry_and_every_default_are_accepted() -> None:
    assert errors("vault-mcp") == []
    assert errors({"vault-mcp": {}}) == []
    assert errors({"vault-mcp": {name: option.default for name, option in VaultMcpConfig._schema}}) == []


def test_a_misspelled_option_is_flagged() -> None:
    assert errors({"vault-mcp": {"mcp_prot": 8766}})
    assert errors({"vault-mcp": {"exclude_docs": ["drafts/*"]}})  # MkDocs' option, not the plugin's
    assert errors("vault_mcp")


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("modified", "yesterday"),
        ("mcp_port", 0),
        ("mcp_port", 70000),
        ("mcp_port", "8765"),
        ("mcp_path", "mcp"),
        ("wait_timeout", -1),
        ("indexed_fields", "tags"),
        ("stats_page", True),
        ("tag_fields", "tags"),
        ("enabled", "yes"),
        ("cache_dir", ""),
    ],
)
def test_a_value_that_mkdocs_refuses_is_flagged(option: str, value: Any) -> None:
    assert not mkdocs_accepts({option: value})
    assert errors({"vault-mcp": {option: value}}), (option, value)


def documented_examples() -> list[tuple[str, Any]]:
    """Each option's example, as its docstring in VaultMcpConfig gives it (and the configuration page shows)."""
    if not SCHEMA.is_file():
        return []
    properties = json.loads(SCHEMA.read_text(encoding="utf-8"))["oneOf"][1]["properties"]["vault-mcp"]["properties"]
    return [(name, example) for name, prop in properties.items() for example in prop["examples"]]


@pytest.mark.parametrize(("option", "value"), documented_examples())
def test_every_real_option_is_accepted_with_its_documented_example(option: str, value: Any) -> None:
    assert mkdocs_accepts({option: value})
    assert errors({"vault-mcp": {option: value}}) == []


def test_every_option_has_a_documented_example() -> None:
    assert sorted(name for name, _ in documented_examples()) == sorted(OPTIONS)


def plugin_entries(config_file: Path) -> list[Any]:
    with config_file.open(encoding="utf-8") as file:
        # MkDocs' own loader, for its !ENV and !relative tags (the latter need a config to resolve against).
        config = yaml.load(file, Loader=get_yaml_loader(config=MkDocsConfig(config_file_path=str(config_file))))
    entries = [
        entry
        for entry in config["plugins"]
        if entry == "vault-mcp" or (isinstance(entry, dict) and "vault-mcp" in entry)
    ]
    assert entries, config_file
    return entries


@pytest.mark.parametrize("config_file", ["example-site/mkdocs.yml", "docs/mkdocs.yml"])
def test_the_configs_of_example_site_and_of_the_docs_are_accepted(config_file: str) -> None:
    for entry in plugin_entries(REPO / config_file):
        assert errors(entry) == [], entry


def test_the_wrapper_that_getting_started_shows_checks_only_the_vault_mcp_entry() -> None:
    """The whole-file schema of the getting-started page: the vault-mcp entries checked, other plugins left alone."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    wrapper = {
        "$schema": "https://json-schema.org/draft-07/schema",
        "properties": {
            "plugins": {
                "items": {
                    "if": {"anyOf": [{"const": "vault-mcp"}, {"type": "object", "required": ["vault-mcp"]}]},
                    "then": {"$ref": "#/definitions/vault-mcp"},
                }
            }
        },
        "definitions": {"vault-mcp": schema},
    }
    check = Draft7Validator(wrapper)
    good = {"plugins": ["search", {"blog": {"enabled": True}}, {"vault-mcp": {"mcp_port": 8766}}]}
    bad = {"plugins": ["search", {"blog": {"enabled": True}}, {"vault-mcp": {"mcp_prot": 8766}}]}
    assert list(check.iter_errors(good)) == []
    assert [error.message for error in check.iter_errors(bad)]
    getting_started = (REPO / "docs" / "pages" / "getting-started.md").read_text(encoding="utf-8")
    assert '"if": {"anyOf": [{"const": "vault-mcp"}, {"type": "object", "required": ["vault-mcp"]}]}' in getting_started
