"""The JSON schemas that `tools/list` publishes: each tool's parameters and the shape of its answer.

Written as JSON Schema (2020-12, MCP's dialect) rather than derived from Python signatures, because every
agent session pays for `tools/list` in its context before its first question: the shared filters are
declared once here, explained in full once (in count_documents, the first tool), and the same words are
not repeated in four schemas. `mcp/arguments.py` checks every call against these same schemas, so what is
published is what is enforced, and `limits.py` supplies the numbers both use.
"""

from __future__ import annotations

from typing import Any

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


def nullable(schema: Schema) -> Schema:
    # anyOf rather than a list of types: clients that map schemas onto a one-`type` dialect (Gemini's
    # OpenAPI subset) reject `"type": [...]`, and the Inspector's --strict check warns about it.
    return {"anyOf": [schema, {"type": "null"}]}


def parameters(properties: dict[str, Schema], required: tuple[str, ...] = ()) -> Schema:
    schema: Schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


def answer(properties: dict[str, Schema]) -> Schema:
    """The output schema of a seed tool (count_documents, aggregate_documents, get_recent), whose contract
    says every property is always present."""
    return {"type": "object", "properties": properties, "required": list(properties)}


def rows(fields: tuple[str, ...], description: str | None = None) -> Schema:
    """A list of objects that each have these fields, named in the description rather than in an `items`
    subschema, with `description` saying what they hold.

    A client that checks answers against the output schema (the SDK's own does, with jsonschema) builds a
    validator object for every subschema it applies to a value: an `items` subschema costs that once per
    row, whatever it holds (a typed field once more per row), so checking a long listing cost the client
    more CPU than the server's SQL and rows (bench/side_by_side.py, 'check, rows named' beside 'sql alone').
    Without one, the check costs the same whatever the listing's length, and the description still names
    every field for agents.
    """
    named = f"Objects with {', '.join(fields)}."
    return {"type": "array", "description": f"{named} {description}" if description else named}


def row(properties: dict[str, Schema]) -> Schema:
    """An object described by its properties alone: the other answers and the objects inside answers (a
    `required` list would repeat every name, in every agent's context)."""
    return {"type": "object", "properties": properties}


STRING: Schema = {"type": "string"}
INT: Schema = {"type": "integer"}
NUMBER: Schema = {"type": "number"}
BOOL: Schema = {"type": "boolean"}
OBJECT: Schema = {"type": "object"}
STRINGS: Schema = {"type": "array", "items": STRING}

SCOPES = ("all", "metadata", "body")
FILTER_VALUE: Schema = {"anyOf": [STRING, NUMBER, BOOL]}

# --- The shared filters (count_documents, aggregate_documents, query_documents, search; links' where) ---

WAIT_FULL = flag("Wait for a pending rebuild under mkdocs serve; on timeout _meta.index_stale is true.")
WAIT: Schema = {"type": "boolean", "default": False}

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

# --- Answers ---------------------------------------------------------------------------------------

NEXT_OFFSET: Schema = nullable(INT)  # the descriptions say to pass it as offset until it is null
DOCUMENT_ROWS = rows(
    ("path", "title", "folder", "url", "modified", "summary", "meta", "language"),
    "Strings but meta (front matter, an object); modified: RFC 3339 UTC; only on an untranslated copy, "
    "fallback_of: the page it repeats.",
)

COUNT_ANSWER = answer({"total": INT, "index_stale": BOOL})
AGGREGATE_ANSWER = answer(
    {
        "total": INT,
        "buckets": rows(("key", "count")),
        "missing": INT,
        "truncated": BOOL,
        "index_stale": BOOL,
    }
)
RECENT_ANSWER = answer({"result": DOCUMENT_ROWS})
QUERY_ANSWER = row({"result": DOCUMENT_ROWS, "total": INT, "next_offset": NEXT_OFFSET, "index_stale": BOOL})
SEARCH_ANSWER = row(
    {
        "result": rows(
            ("path", "title", "url", "score", "sections"),
            "sections: the best, each with heading, url, snippet (matched terms **marked**) and score.",
        ),
        "index_stale": BOOL,
    }
)
READ_ANSWER = row(
    {
        "path": STRING,
        "title": STRING,
        "url": STRING,
        "modified": STRING,
        "meta": OBJECT,
        "section": {**nullable(OBJECT), "description": "heading, level, anchor, url of the section read."},
        "markdown": STRING,
        "next_offset": NEXT_OFFSET,
        "outline": {
            **nullable({"type": "array", "items": OBJECT}),
            "description": "view=outline: heading, level, anchor, url, characters of each.",
        },
    }
)
STATS_ANSWER = row(
    {
        "document_count": INT,
        "section_count": INT,
        "folder_count": INT,
        "indexed_frontmatter_fields": STRINGS,
        "oldest_modified": nullable(STRING),
        "newest_modified": nullable(STRING),
        "built_at": nullable(STRING),
        "site_name": STRING,
        "site_url": nullable(STRING),
        "languages": STRINGS,
        "index_stale": BOOL,
    }
)
LINKS_ANSWER = row(
    {
        "result": {"type": "array", "items": OBJECT},
        "total": INT,
        "next_offset": NEXT_OFFSET,
        "index_stale": BOOL,
    }
)
