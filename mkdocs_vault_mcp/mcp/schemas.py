"""The JSON schemas that `tools/list` publishes: each tool's parameters and the shape of its answer.

Parameters are written as JSON Schema (2020-12, MCP's dialect) rather than derived from Python signatures,
because every agent session pays for `tools/list` in its context before its first question: the shared
filters are declared once here, explained in full once (in count_documents, the first tool), and the same
words are not repeated in four schemas. `mcp/arguments.py` checks every call against these same schemas, so
what is published is what is enforced, and `limits.py` supplies the numbers both use.

Answers are written from their types (index/answer_types.py), the one place their shape is declared, in the
same compact dialect: no titles, no `$defs`, an object inside an answer is just an object. Not by pydantic's
`TypeAdapter(...).json_schema()`, which adds titles and `$defs` and sorts keys (every agent would read more),
and on Python 3.11 takes only typing_extensions' TypedDict.
"""

from __future__ import annotations

from types import UnionType
from typing import Annotated, Any, NotRequired, Required, Union, get_args, get_origin, get_type_hints, is_typeddict

from ..index.answer_types import Described, Rows

Schema = dict[str, Any]


def text(description: str, **more: Any) -> Schema:
    return {"type": "string", "description": description, **more}


def integer(description: str, minimum: int, maximum: int | None = None, default: int | None = None) -> Schema:
    schema: Schema = {"type": "integer", "description": description, "minimum": minimum}
    if maximum is not None:
        schema["maximum"] = maximum
    if default is not None:
        schema["default"] = default
    return schema


def choice(description: str, values: tuple[str, ...], default: str | None = None) -> Schema:
    schema: Schema = {"enum": list(values), "description": description}  # enum says the type
    if default is not None:
        schema["default"] = default
    return schema


def flag(description: str) -> Schema:
    return {"type": "boolean", "description": description, "default": False}


def parameters(properties: dict[str, Schema], required: tuple[str, ...] = ()) -> Schema:
    schema: Schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


STRING: Schema = {"type": "string"}
NUMBER: Schema = {"type": "number"}
BOOL: Schema = {"type": "boolean"}

SCOPES = ("all", "metadata", "body")
FILTER_VALUE: Schema = {"anyOf": [STRING, NUMBER, BOOL]}

# --- The shared filters (count_documents, aggregate_documents, query_documents, search; links' where) ---

WAIT_FULL = flag("Wait for a pending rebuild under mkdocs serve; on timeout _meta.index_stale is true.")
WAIT: Schema = {"type": "boolean", "default": False}
# Every tool takes it; count_documents explains it, as it does the shared filters.
VERSION_FULL = text("On a site mike publishes, in every tool: version or alias (default latest).")
VERSION: Schema = {"type": "string"}

# What each filter means, said once: count_documents publishes these.
FILTERS_EXPLAINED: dict[str, Schema] = {
    "query": text(
        'FTS5: words (all must match), "phrases", OR, NOT, NEAR(a b), prefix*, title: install. Blank: every '
        "page; malformed: its literal words.",
        default="",
    ),
    "scope": choice(
        "metadata (path, title, headings, summary), body or all; terms match within one section.", SCOPES, "all"
    ),
    "path": text("Exact, case-sensitive page path."),
    "folder": text('This folder and below, case-sensitive; "": root pages only.'),
    "pattern": text("Case-sensitive glob over path: * (crosses /), ?, [a-z]."),
    "filters": {
        "type": "object",
        "additionalProperties": FILTER_VALUE,
        "description": 'Front matter equalities ({"status": "new"}); a list field matches one member. Fields: '
        "stats.indexed_frontmatter_fields.",
    },
    "modified_after": text("Modified at or after this RFC 3339 instant with zone (2025-03-01T00:00:00Z)."),
    "modified_before": text("Modified before it (RFC 3339, zone)."),
    "language": text("Language code (stats.languages); a fallback copy has the language publishing it."),
}

# The same filters in the other tools, whose descriptions say they share them: the names and types alone,
# not the rules again (each tool's schema would repeat them in every agent's context).
# `arguments.checked` holds every tool to the full rules above.
FILTERS: dict[str, Schema] = {
    name: {"type": "object"} if name == "filters" else {"enum": rule["enum"]} if "enum" in rule else STRING
    for name, rule in FILTERS_EXPLAINED.items()
}
FILTER_NAMES = tuple(FILTERS)

# --- Answers: written from their types (index/answer_types.py) ----------------------------------------

JSON_TYPES: dict[object, str] = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def answer(answer_type: object, lists_required: bool = False) -> Schema:
    """The output schema of a tool whose answers are `answer_type`, a TypedDict: its keys and their JSON types.

    `lists_required` for a seed tool (count_documents, aggregate_documents, get_recent), whose contract says
    every property is always present; the other answers, and the objects inside answers, are described by
    their properties alone (a `required` list would repeat every name, in every agent's context).
    """
    keys = get_type_hints(answer_type, include_extras=True)
    schema: Schema = {"type": "object", "properties": {key: value(hint) for key, hint in keys.items()}}
    if lists_required:
        schema["required"] = [key for key in keys if key in getattr(answer_type, "__required_keys__", ())]
    return schema


def value(hint: Any) -> Schema:
    """A key's schema: its JSON type, and what its marks say (an object inside an answer is just an object)."""
    origin = get_origin(hint)
    if origin in (Required, NotRequired):
        return value(get_args(hint)[0])
    if origin is Annotated:
        return marked(*get_args(hint))
    if origin in (Union, UnionType):
        found: list[Schema] = []
        for member in get_args(hint):
            if (schema := value(member)) not in found:
                found.append(schema)
        # anyOf rather than a list of types: clients that map schemas onto a one-`type` dialect (Gemini's
        # OpenAPI subset) reject `"type": [...]`, and the Inspector's --strict check warns about it.
        return found[0] if len(found) == 1 else {"anyOf": found}
    if origin is list:
        return {"type": "array", "items": value(get_args(hint)[0])}
    if origin is dict or is_typeddict(hint):
        return {"type": "object"}
    if hint not in JSON_TYPES:
        raise TypeError(f"no JSON type for {hint!r} in an answer type; say it in mcp/schemas.py")
    return {"type": JSON_TYPES[hint]}


def marked(hint: Any, *marks: object) -> Schema:
    """A key's schema, as its marks (`Rows`, `Described`) say it.

    Rows are named in the description rather than in an `items` subschema. A client that checks answers
    against the output schema (the SDK's own does, with jsonschema) builds a validator object for every
    subschema it applies to a value: an `items` subschema costs that once per row, whatever it holds (a typed
    field once more per row), so checking a long listing cost the client more CPU than the server's SQL and
    rows (bench/side_by_side.py, 'check, rows named' beside 'sql alone'). Without one, the check costs the
    same whatever the listing's length, and the description still names every field for agents.
    """
    schema = value(hint)
    for mark in marks:
        keys = ", ".join(required_keys(hint))
        if isinstance(mark, Rows):
            named = f"Objects with {keys}."
            schema = {"type": "array", "description": f"{named} {mark.note}" if mark.note else named}
        elif isinstance(mark, Described):
            schema = {**schema, "description": mark.text.format(keys=keys)}
    return schema


def required_keys(hint: Any) -> list[str]:
    """The required keys of the TypedDict in `hint` (itself, its rows, or one member of a union)."""
    if is_typeddict(hint):
        return [key for key in get_type_hints(hint) if key in hint.__required_keys__]
    return [key for member in get_args(hint) for key in required_keys(member)]
