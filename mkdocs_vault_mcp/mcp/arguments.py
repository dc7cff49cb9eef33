"""Every tool call's arguments, checked against the input schema the tool publishes.

One message per rejected argument that names it, says what it accepts and quotes what came (pydantic's
would name an internal model and leave out the range or the choices); an argument the tool does not take
is an error rather than silently ignored; `limits.py` bounds every text. The schemas use only the keywords
in `SCHEMA_WORDS`, and `check_schema_words` refuses any other, so nothing published goes unchecked. (The
jsonschema package would check any schema, but importing it costs more than a whole call, and every call
counts when a client starts.)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .. import limits
from ..errors import InvalidArgument
from ..index.filters import Filters
from .schemas import FILTER_NAMES, Schema

SCHEMA_WORDS = {"type", "anyOf", "enum", "minimum", "maximum", "additionalProperties", "description", "default"}

# JSON type -> whether a Python value is of it, and how a message names it.
JSON_TYPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "string": (lambda value: isinstance(value, str), "a string"),
    "integer": (
        lambda value: (
            (isinstance(value, int) and not isinstance(value, bool))
            or (isinstance(value, float) and value.is_integer())
        ),
        "an integer",
    ),
    "number": (lambda value: isinstance(value, (int, float)) and not isinstance(value, bool), "a number"),
    "boolean": (lambda value: isinstance(value, bool), "a boolean"),
    "object": (lambda value: isinstance(value, dict), "an object"),
    "array": (lambda value: isinstance(value, list), "a list"),
    "null": (lambda value: value is None, "null"),
}
# What a member of `filters` is, said where a message quotes one (the schema leaves it out, for size).
MEMBER_NOTE = "one value; a list field matches when one member equals it"


def checked(schema: Schema, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments as the tool reads them: checked, decoded, with every default filled in.

    Raises InvalidArgument with the message for the first argument that is wrong.
    """
    properties: dict[str, Schema] = schema["properties"]
    required = schema.get("required", ())
    unknown = [name for name in arguments if name not in properties]
    if unknown:
        hint = ' Front matter conditions go in filters, e.g. {"tags": "api"}.' if "filters" in properties else ""
        raise InvalidArgument(
            f"unknown argument {', '.join(map(repr, unknown))}; this tool takes {', '.join(properties)}.{hint}"
        )
    values = {name: rule.get("default") for name, rule in properties.items()}
    for name, value in arguments.items():
        if value is None and name not in required:
            continue  # null stands for "not given"
        rule = properties[name]
        value = decoded(value, rule)
        problem = violation(rule, value)
        if problem is not None:
            where, broken, found = problem
            note = f" ({MEMBER_NOTE})" if where else ""
            raise InvalidArgument(f"{name}{where} must be {accepted(broken)}{note}; got {shown(found)}.")
        limits.check_argument(name, value)
        values[name] = int(value) if isinstance(value, float) and "integer" in json_types(rule) else value
    for name in required:
        if values[name] is None:
            rule = properties[name]
            raise InvalidArgument(f"{name} is required: {rule.get('description') or accepted(rule)}")
    return values


def json_types(rule: Schema) -> list[str]:
    if "anyOf" in rule:
        return [kind for alternative in rule["anyOf"] for kind in json_types(alternative)]
    kinds = rule.get("type", [])
    return [kinds] if isinstance(kinds, str) else kinds


def violation(rule: Schema, value: Any, where: str = "") -> tuple[str, Schema, Any] | None:
    """Where `value` first breaks `rule`, the part of the rule it breaks there, and the value found there."""
    kinds = json_types(rule)
    if kinds and not any(JSON_TYPES[kind][0](value) for kind in kinds):
        return where, rule, value
    if "enum" in rule and not any(value == choice and type(value) is type(choice) for choice in rule["enum"]):
        return where, rule, value
    if ("minimum" in rule and value < rule["minimum"]) or ("maximum" in rule and value > rule["maximum"]):
        return where, rule, value
    members = rule.get("additionalProperties")
    if isinstance(members, dict) and isinstance(value, dict):
        for key, member in value.items():
            problem = violation(members, member, f"{where}[{json.dumps(key, ensure_ascii=False)}]")
            if problem is not None:
                return problem
    return None


def accepted(rule: Schema) -> str:
    """What a rule accepts, in words: `an integer from 1 to 1000`, `one of "asc", "desc"`."""
    if "enum" in rule:
        return "one of " + ", ".join(json.dumps(choice) for choice in rule["enum"])
    kinds = json_types(rule)
    if kinds == ["boolean"]:
        return "true or false"
    names = [JSON_TYPES[kind][1] for kind in kinds]
    text = " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 2 else names) or "any value"
    low, high = rule.get("minimum"), rule.get("maximum")
    if low is not None:
        text += f" from {low} to {high}" if high is not None else f" of {low} or more"
    members = rule.get("additionalProperties")
    if isinstance(members, dict):
        text += f" whose values are each {accepted(members)}"
    return text


def decoded(value: Any, rule: Schema) -> Any:
    """A parameter that is not a string may arrive JSON-encoded in a string (some clients send `"5"`)."""
    kinds = json_types(rule)
    if not isinstance(value, str) or "string" in kinds or "enum" in rule:
        return value
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return value
    return value if isinstance(parsed, str) else parsed


def shown(value: Any, width: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def check_schema_words(name: str, schema: Schema) -> None:
    """Refuse a published parameter whose schema says more than `checked` enforces."""
    for parameter, rule in schema["properties"].items():
        for part in (rule, rule.get("additionalProperties") or {}, *rule.get("anyOf", ())):
            unchecked = set(part) - SCHEMA_WORDS
            if unchecked:
                raise TypeError(f"{name}({parameter}): schema keywords {sorted(unchecked)} would go unchecked")


def shared_filters(values: dict[str, Any]) -> Filters:
    """The shared filters among a tool's checked arguments."""
    present = {name: values[name] for name in FILTER_NAMES if name in values}
    return Filters(
        query=present.get("query") if present.get("query") is not None else "",
        scope=present.get("scope") or "all",
        path=present.get("path"),
        folder=present.get("folder"),
        pattern=present.get("pattern"),
        filters=present.get("filters") or {},
        modified_after=present.get("modified_after"),
        modified_before=present.get("modified_before"),
        language=present.get("language"),
    )


def filters_from_where(where: dict[str, Any] | None) -> Filters:
    """The `links` tool's `where`: the shared filters in one object, checked as the other tools check them."""
    if not where:
        return Filters()
    unknown = [key for key in where if key not in FILTER_NAMES]
    if unknown:
        raise InvalidArgument(
            f"where has unknown key {', '.join(map(repr, unknown))}; it takes {', '.join(FILTER_NAMES)}."
        )
    for key, value in where.items():
        wanted = dict if key == "filters" else str
        if value is not None and not isinstance(value, wanted):
            kind = "an object" if wanted is dict else "a string"
            raise InvalidArgument(f"where[{key!r}] must be {kind}; got {shown(value)}.")
        limits.check_argument(key, value, label=f"where[{key!r}]")
    return shared_filters({key: value for key, value in where.items() if value is not None})
