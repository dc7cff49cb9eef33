"""The answers' one source: each tool's answer type (index/answer_types.py), from which `schemas.answer` writes the
output schema that `tools/list` publishes.

Real answers of every tool, from a real build through a real MCP client session, are checked against both: the
published schema (as the SDK client checks them) and the answer type, key by key down into every row. What the
compact schema says in words (the rows' other keys, the keys of objects inside rows) is checked against the type,
and `tools/list` against a stored copy of it, byte for byte.
"""

# No `from __future__ import annotations`: Python 3.11 counts a `NotRequired` key written as a string as required
# (the TypedDicts below would be read wrong).
import re
import types
from collections.abc import Iterator
from typing import Annotated, Any, NotRequired, Required, TypedDict, Union, get_args, get_origin, get_type_hints

import pytest

from helpers.git_repo import git
from helpers.mcp_session import Session, session_over
from helpers.site import Site
from helpers.tools_list import STORED, published_tools_list
from mkdocs_vault_mcp.index import answer_types
from mkdocs_vault_mcp.index.answer_types import Described, Rows
from mkdocs_vault_mcp.mcp.schemas import answer
from mkdocs_vault_mcp.mcp.tools import TOOLS

PAGES = {
    "index.md": "# Home\n\nStart with [the install guide](guide/install.md#from-pypi); [gone](missing.md).\n",
    "guide/install.md": (
        "---\ntags: [setup, pip]\nupdated: 2025-03-01\n---\n# Install\n\n## From PyPI\n\nRun pip install. "
        "Back [home](../index.md).\n\n## Upgrade\n\nRun pip install again to upgrade.\n"
    ),
    "guide/usage.md": "---\ntags: [usage]\n---\n# Usage\n\nCall the tool after you install it.\n",
    "orphan.md": "# Orphan\n\nNo page links here.\n",
}
# Every tool, and every kind of answer it gives: each call's answer is checked.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("count_documents", {"query": "install"}),
    ("aggregate_documents", {"by": "tag"}),
    ("aggregate_documents", {"by": "month"}),
    ("get_recent", {}),
    ("query_documents", {"folder": "guide", "limit": 1}),
    ("search", {"query": "install"}),
    ("read", {"path": "guide/install.md"}),
    ("read", {"path": "guide/install.md", "section": "Upgrade"}),
    ("read", {"path": "guide/install.md", "view": "outline"}),
    ("read", {"path": "guide/install.md", "view": "source", "max_chars": 20}),
    ("stats", {}),
    *[("links", {"show": show, "target": "guide/install.md"}) for show in ("backlinks", "related", "history")],
    *[("links", {"show": show}) for show in ("outlinks", "broken", "orphans", "most_linked")],
]


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    # A nav that leaves orphan.md out, and a git history: every links listing has rows.
    site = Site(
        tmp_path_factory.mktemp("answers"), {"plugins": ["vault-mcp"], "nav": sorted(set(PAGES) - {"orphan.md"})}
    )
    site.write_pages(PAGES)
    git(site.root, "init", "-q")
    git(site.root, "add", "-A")
    git(site.root, "commit", "-q", "-m", "First pages")
    site.build_in_root()
    with session_over(site.index_path) as session:
        yield session


def unmarked(hint: Any) -> Any:
    """The type without its Required/NotRequired and Annotated marks."""
    while get_origin(hint) in (Required, NotRequired, Annotated):
        hint = get_args(hint)[0]
    return hint


def is_typed_dict(hint: Any) -> bool:
    return isinstance(hint, type) and hasattr(hint, "__required_keys__")


def mismatches(value: Any, hint: Any, where: str = "answer") -> list[str]:
    """Where `value` is not of the type `hint`: a missing or unknown key, a wrong JSON type, a wrong row."""
    hint = unmarked(hint)
    origin = get_origin(hint)
    if hint is Any:
        return []
    if origin in (Union, types.UnionType):
        found = [mismatches(value, member, where) for member in get_args(hint)]
        return [] if [] in found else min(found, key=len)
    if is_typed_dict(hint):
        if not isinstance(value, dict):
            return [f"{where}: {value!r} is not an object"]
        keys = get_type_hints(hint, include_extras=True)
        problems = [f"{where}.{key}: missing" for key in keys if key in hint.__required_keys__ and key not in value]
        problems += [f"{where}.{key}: not a key of {hint.__name__}" for key in value if key not in keys]
        for key in (key for key in value if key in keys):
            problems += mismatches(value[key], keys[key], f"{where}.{key}")
        return problems
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {value!r} is not a list"]
        return [
            problem for i, row in enumerate(value) for problem in mismatches(row, get_args(hint)[0], f"{where}[{i}]")
        ]
    wanted = {dict: (dict,), float: (int, float), type(None): (type(None),)}.get(origin or hint, (origin or hint,))
    if isinstance(value, bool) is not (bool in wanted) or not isinstance(value, wanted):
        return [f"{where}: {value!r} is not {hint!r}"]
    return []


@pytest.mark.parametrize(("tool", "arguments"), CALLS)
def test_a_real_answer_is_its_published_schema_and_its_answer_type(
    mcp: Session, tool: str, arguments: dict[str, Any]
) -> None:
    found = mcp.ok(tool, **arguments)  # checked against the published output schema, as the SDK client does
    assert mismatches(found, TOOLS[tool].answer_type) == []


def test_every_tool_and_every_links_listing_is_called() -> None:
    assert {tool for tool, _ in CALLS} == set(TOOLS)
    # show=changes needs a site mike publishes in versions: test_versions.py calls it.
    assert {arguments["show"] for tool, arguments in CALLS if tool == "links"} | {"changes"} == set(
        TOOLS["links"].argument_schema["properties"]["show"]["enum"]
    )


def test_rows_and_rows_inside_them_are_answered(mcp: Session) -> None:
    """The answers above hold what the check walks into: rows, their sections, a section read, an outline."""
    assert mcp.ok("search", query="install")["result"][0]["sections"]
    assert mcp.ok("read", path="guide/install.md", section="Upgrade")["section"]
    assert mcp.ok("read", path="guide/install.md", view="outline")["outline"]
    for show in ("outlinks", "broken", "orphans", "most_linked"):
        assert mcp.ok("links", show=show)["result"], show
    for show in ("backlinks", "related", "history"):
        assert mcp.ok("links", show=show, target="guide/install.md")["result"], show


@pytest.mark.parametrize(
    ("found", "finding"),
    [
        ({"total": 3}, "answer.index_stale: missing"),
        ({"total": 3, "index_stale": False, "more": 1}, "answer.more: not a key of CountAnswer"),
        ({"total": "3", "index_stale": False}, "answer.total: '3' is not"),
        ({"total": True, "index_stale": False}, "answer.total: True is not"),
    ],
)
def test_the_check_finds_what_differs_from_the_type(found: dict[str, Any], finding: str) -> None:
    assert any(finding in problem for problem in mismatches(found, answer_types.CountAnswer)), finding


def test_the_check_finds_a_wrong_row() -> None:
    hit = {"path": "a.md", "title": "A", "url": "/a/", "score": 1.5, "sections": [{"heading": "A", "url": "/a/"}]}
    problems = mismatches({"result": [hit], "index_stale": False}, answer_types.SearchAnswer)
    assert problems == ["answer.result[0].sections[0].snippet: missing", "answer.result[0].sections[0].score: missing"]
    row = {"path": "a.md", "title": "A", "url": "/a/", "in_nav": 1, "linked_from": 0}
    problems = mismatches(
        {"result": [row], "total": 1, "next_offset": None, "index_stale": False}, answer_types.LinksAnswer
    )
    assert any("in_nav: 1 is not <class 'bool'>" in problem for problem in problems), problems


# --- What the compact schema says in words ---------------------------------------------------------------


def row_types(hint: Any) -> list[Any]:
    """The TypedDicts of a key's value: itself, its rows, each member of a union."""
    hint = unmarked(hint)
    if is_typed_dict(hint):
        return [hint]
    if get_origin(hint) is list:
        return row_types(get_args(hint)[0])
    return [found for member in get_args(hint) for found in row_types(member)]


def named_in(description: str, key: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(key)}(?!\w)", description) is not None


@pytest.mark.parametrize("name", list(TOOLS))
def test_every_key_a_schema_does_not_list_is_named_in_its_description(mcp: Session, name: str) -> None:
    """A key marked Rows or Described is published as an object or rows whose keys only its description names:
    each of them, and each key of an object inside its rows."""
    properties = mcp.tools[name].output_schema["properties"]
    for key, hint in get_type_hints(TOOLS[name].answer_type, include_extras=True).items():
        if not any(isinstance(mark, (Rows, Described)) for mark in getattr(unmarked_once(hint), "__metadata__", ())):
            continue
        description = properties[key]["description"]
        for row in row_types(hint):
            for inner, inner_hint in get_type_hints(row).items():
                assert named_in(description, inner), (name, key, inner, description)
                for nested in row_types(inner_hint):
                    for nested_key in get_type_hints(nested):
                        assert named_in(description, nested_key), (name, key, inner, nested_key, description)


def unmarked_once(hint: Any) -> Any:
    """The type without its Required/NotRequired mark, its Annotated marks kept."""
    return get_args(hint)[0] if get_origin(hint) in (Required, NotRequired) else hint


# --- How a type is published -----------------------------------------------------------------------------


class Item(TypedDict):
    name: str
    size: NotRequired[int]


class Sample(TypedDict):
    rows: Annotated[list[Item], Rows("size: when known.")]
    bare: Annotated[list[Item], Rows()]
    one: Annotated[Item | None, Described("{keys} of the one.")]
    many: list[Item] | list[Item] | list[str]
    meta: dict[str, Any]
    score: float
    total: NotRequired[int]


def test_a_type_is_published_in_the_compact_dialect() -> None:
    assert answer(Sample) == {
        "type": "object",
        "properties": {
            "rows": {"type": "array", "description": "Objects with name. size: when known."},
            "bare": {"type": "array", "description": "Objects with name."},
            "one": {"anyOf": [{"type": "object"}, {"type": "null"}], "description": "name of the one."},
            "many": {
                "anyOf": [
                    {"type": "array", "items": {"type": "object"}},
                    {"type": "array", "items": {"type": "string"}},
                ]
            },
            "meta": {"type": "object"},
            "score": {"type": "number"},
            "total": {"type": "integer"},
        },
    }
    assert answer(Sample, lists_required=True)["required"] == ["rows", "bare", "one", "many", "meta", "score"]


def test_tools_list_is_the_stored_copy_byte_for_byte(mcp: Session) -> None:
    """What every agent session reads first changes only on purpose: a meant change rewrites the copy with
    `PYTHONPATH=.:tests .venv/bin/python -m helpers.tools_list`."""
    assert published_tools_list(mcp) == STORED.read_text(encoding="utf-8")
