"""The output schemas of listing tools: rows named in the description, checked by the SDK client without a
subschema per row, and the names always those the rows carry."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from helpers.mcp_session import Session, session_over
from helpers.site import Site, built_site

PAGES = {
    "index.md": "# Home\n\nWelcome.\n",
    "guide/install.md": "---\ntags: [setup]\nupdated: 2025-03-01\n---\n# Install\n\nRun pip install.\n",
    "guide/usage.md": "# Usage\n\nCall the tool.\n\n## Options\n\nSome options.\n",
    "api/client.md": "---\ndescription: The client class.\n---\n# Client\n\nText.\n",
}

# (tool, arguments, the answer's key holding the rows)
LISTINGS: list[tuple[str, dict[str, Any], str]] = [
    ("get_recent", {}, "result"),
    ("query_documents", {}, "result"),
    ("query_documents", {"folder": "guide", "sort": "modified"}, "result"),
    ("aggregate_documents", {"by": "folder"}, "buckets"),
    ("search", {"query": "install"}, "result"),
]


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    site: Site = built_site(tmp_path_factory.mktemp("listing"), {"plugins": ["vault-mcp"]}, PAGES)
    with session_over(site.index_path) as session:
        yield session


def named_fields(schema: dict[str, Any]) -> list[str]:
    found = re.match(r"Objects with ([a-z_, ]+)\.", schema.get("description", ""))
    assert found, schema
    return found.group(1).split(", ")


@pytest.mark.parametrize(("tool", "arguments", "key"), LISTINGS)
def test_each_row_has_the_fields_its_schema_names_and_no_others(
    mcp: Session, tool: str, arguments: dict[str, Any], key: str
) -> None:
    schema = mcp.tools[tool].output_schema["properties"][key]
    assert schema["type"] == "array"
    fields = named_fields(schema)
    rows = mcp.ok(tool, **arguments)[key]  # checked against the published schema, as the SDK client does
    assert rows
    for row in rows:
        # fallback_of appears only on an untranslated copy, and the description says so.
        assert set(row) - {"fallback_of"} == set(fields), (tool, row)


@pytest.mark.parametrize("tool", ["get_recent", "query_documents", "aggregate_documents", "search"])
def test_a_listing_is_checked_without_a_subschema_per_row(mcp: Session, tool: str) -> None:
    schema = mcp.tools[tool].output_schema
    key = "buckets" if tool == "aggregate_documents" else "result"
    # An `items` subschema makes jsonschema build a validator for every row the client checks.
    assert "items" not in schema["properties"][key]
    validator = Draft202012Validator(schema)
    answer = mcp.ok(
        tool,
        **({"by": "folder"} if tool == "aggregate_documents" else {"query": "install"} if tool == "search" else {}),
    )
    assert not list(validator.iter_errors(answer))
    # What the schema still holds the answer to: the rows are a list, and the answer's own fields are there.
    assert list(validator.iter_errors({**answer, key: {"path": "index.md"}}))
    required = schema.get("required", [])
    for name in required:
        assert list(validator.iter_errors({k: v for k, v in answer.items() if k != name})), name
