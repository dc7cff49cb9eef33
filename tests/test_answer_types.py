"""Each tool's answer type (`Tool.answer_type`, a TypedDict of index/answer_types.py) against the output schema
that `tools/list` publishes for it: the same keys, the same required keys and the same JSON types, down into
nested objects and the rows of lists.

What a schema leaves unsaid is checked against what it says in words:
- an object without `required` (`schemas.row`, which leaves the list out to keep `tools/list` short) has every
  property in every answer, so each is a required key of its TypedDict;
- a list whose rows are named in its description rather than in `items` (`schemas.rows`: "Objects with a, b.")
  has rows whose required keys are those names, and whose other keys the description names too;
- an object or rows without properties (`{"type": "object"}`) have keys the description names, when it has one.
"""

# No `from __future__ import annotations`: Python 3.11 counts a `NotRequired` key written as a string as required
# (the TypedDicts below would be read wrong).
import re
import types
from typing import Any, NotRequired, Required, TypedDict, Union, get_args, get_origin, get_type_hints, is_typeddict

import pytest

from mkdocs_vault_mcp.index import answer_types
from mkdocs_vault_mcp.mcp.tools import TOOLS

JSON_TYPES: dict[object, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
    list: "array",
    dict: "object",
}
NAMED_ROWS = re.compile(r"^Objects with ([^.]+)\.")


def alternatives(hint: Any) -> list[Any]:
    """The members of a union (`X | Y`, `Optional[X]`), or the hint alone."""
    if get_origin(hint) in (Union, types.UnionType):
        return list(get_args(hint))
    return [hint]


def json_type(hint: Any) -> str | None:
    """The JSON type of one Python type; None for Any (no claim to check)."""
    if hint is Any:
        return None
    if is_typeddict(hint):
        return "object"
    return JSON_TYPES.get(get_origin(hint) or hint, f"no JSON type for {hint!r}")


def branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    return list(schema["anyOf"]) if "anyOf" in schema else [schema]


def schema_types(schema: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for branch in branches(schema):
        if "type" in branch:
            found.add(branch["type"])
        elif "enum" in branch:
            found |= {JSON_TYPES[type(value)] for value in branch["enum"]}
    return found


def named_in(description: str, key: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(key)}(?!\w)", description) is not None


def required_keys(typed: Any) -> set[str]:
    return set(typed.__required_keys__)


def optional_keys(typed: Any) -> set[str]:
    return set(typed.__optional_keys__)


def hints(typed: Any) -> dict[str, Any]:
    """The TypedDict's value types, without their Required/NotRequired marks."""
    return {
        key: get_args(hint)[0] if get_origin(hint) in (Required, NotRequired) else hint
        for key, hint in get_type_hints(typed, include_extras=True).items()
    }


def check_keys_named(typed: Any, description: str, where: str, problems: list[str]) -> None:
    """Keys that no schema lists: the description must name each, and their rows' keys too."""
    for key, hint in hints(typed).items():
        if not named_in(description, key):
            problems.append(f"{where}.{key}: not named in the schema's description {description!r}")
        for alternative in alternatives(hint):
            rows = get_args(alternative)[0] if get_origin(alternative) is list else alternative
            if is_typeddict(rows):
                check_keys_named(rows, description, f"{where}.{key}", problems)


def check_object(typed: Any, schema: dict[str, Any], where: str, problems: list[str], description: str) -> None:
    """A TypedDict against an object schema."""
    marked = {
        key for key, hint in get_type_hints(typed, include_extras=True).items() if get_origin(hint) is NotRequired
    }
    if marked != optional_keys(typed):
        problems.append(
            f"{where}: __optional_keys__ {sorted(optional_keys(typed))} are not the keys marked "
            f"NotRequired {sorted(marked)}"
        )
    properties = schema.get("properties")
    if properties is None:
        if description:
            check_keys_named(typed, description, where, problems)
        return
    keys = set(hints(typed))
    if keys != set(properties):
        problems.append(f"{where}: keys {sorted(keys)} but the schema's properties are {sorted(properties)}")
    required = set(schema.get("required", properties))
    if required_keys(typed) != required:
        problems.append(
            f"{where}: required keys {sorted(required_keys(typed))} but the schema requires {sorted(required)}"
        )
    for key, hint in hints(typed).items():
        if key in properties:
            check_value(hint, properties[key], f"{where}.{key}", problems)


def check_rows(item: Any, schema: dict[str, Any], where: str, problems: list[str], description: str) -> None:
    """A list's row type against the array schema: its `items`, else the rows its description names."""
    if "items" in schema:
        check_value(item, schema["items"], f"{where}[]", problems, description)
        return
    named = NAMED_ROWS.match(description)
    for row in alternatives(item):
        if not is_typeddict(row):
            problems.append(f"{where}[]: {row!r} rows, but the schema says nothing of its rows' type")
        elif named is None:
            check_keys_named(row, description, f"{where}[]", problems)
        else:
            fields = set(named.group(1).split(", "))
            if required_keys(row) != fields:
                problems.append(
                    f"{where}[]: required keys {sorted(required_keys(row))} but the description names {sorted(fields)}"
                )
            for key in optional_keys(row):
                if not named_in(description, key):
                    problems.append(f"{where}[].{key}: an optional key the description does not name")
            for key, hint in hints(row).items():
                for alternative in alternatives(hint):
                    nested = get_args(alternative)[0] if get_origin(alternative) is list else alternative
                    if is_typeddict(nested):
                        check_keys_named(nested, description, f"{where}[].{key}", problems)


def check_value(hint: Any, schema: dict[str, Any], where: str, problems: list[str], description: str = "") -> None:
    """A value's type against its schema: the same JSON types, then each object and array inside."""
    description = schema.get("description", description)
    python_types = {kind for alternative in alternatives(hint) if (kind := json_type(alternative)) is not None}
    if python_types and python_types != schema_types(schema):
        problems.append(
            f"{where}: {hint!r} is {sorted(python_types)} in JSON, the schema says {sorted(schema_types(schema))}"
        )
        return
    for alternative in alternatives(hint):
        kind = json_type(alternative)
        branch = next((branch for branch in branches(schema) if branch.get("type") == kind), {})
        if is_typeddict(alternative):
            check_object(alternative, branch, where, problems, description)
        elif kind == "array":
            check_rows(get_args(alternative)[0], branch, where, problems, description)


def published_schema(name: str) -> dict[str, Any]:
    """The tool's output schema as `tools/list` publishes it."""
    schema = TOOLS[name].published().output_schema
    assert schema is not None
    return schema


def problems_of(answer_type: Any, schema: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    check_value(answer_type, schema, "answer", problems)
    return problems


@pytest.mark.parametrize("name", list(TOOLS))
def test_answer_type_is_the_published_schema(name: str) -> None:
    tool = TOOLS[name]
    assert is_typeddict(tool.answer_type), f"{name}'s answer_type is not a TypedDict"
    assert tool.answer_type.__module__ == answer_types.__name__
    assert problems_of(tool.answer_type, published_schema(name)) == []


def test_every_answer_type_is_declared_once() -> None:
    declared = [tool.answer_type for tool in TOOLS.values()]
    assert len(set(declared)) == len(declared)


# --- The check finds what differs ------------------------------------------------------------------------


class MissingKey(TypedDict):
    total: int


class WrongType(TypedDict):
    total: str
    index_stale: bool


class SometimesTotal(TypedDict):
    total: NotRequired[int]
    index_stale: bool


class BadSection(TypedDict):
    heading: str
    level: int
    anchor: str | None
    url: str
    depth: int


class BadRow(TypedDict):
    path: str
    title: str
    folder: str
    url: str
    modified: str
    summary: str
    meta: dict[str, Any]
    language: str
    author: str


class BadRecent(TypedDict):
    result: list[BadRow]


class NotNullable(TypedDict):
    path: str
    title: str
    url: str
    modified: str
    meta: dict[str, Any]
    section: answer_types.ReadSection  # the schema allows null
    outline: list[answer_types.OutlineEntry] | None
    markdown: str
    next_offset: int | None


class UnnamedSectionKey(TypedDict):
    path: str
    title: str
    url: str
    modified: str
    meta: dict[str, Any]
    section: BadSection | None
    outline: list[answer_types.OutlineEntry] | None
    markdown: str
    next_offset: int | None


@pytest.mark.parametrize(
    ("answer_type", "tool", "finding"),
    [
        (MissingKey, "count_documents", "keys ['total'] but the schema's properties are ['index_stale', 'total']"),
        (WrongType, "count_documents", "answer.total: <class 'str'> is ['string'] in JSON, the schema says"),
        (SometimesTotal, "count_documents", "required keys ['index_stale'] but the schema requires"),
        (BadRecent, "get_recent", "answer.result[]: required keys"),
        (NotNullable, "read", "answer.section: "),
        (UnnamedSectionKey, "read", "answer.section.depth: not named"),
    ],
)
def test_the_check_finds_a_difference(answer_type: Any, tool: str, finding: str) -> None:
    problems = problems_of(answer_type, published_schema(tool))
    assert any(finding in problem for problem in problems), problems
