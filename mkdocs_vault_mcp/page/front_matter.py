"""Front matter as plain values: what the index stores and filters compare (`normalize_value`), what a page's
fingerprint takes, and what an author's YAML error says.

The build's thread takes every page's meta_fingerprint and asks search_excluded of it, so the module holds no HTML
parsing; the writer's page/documents.py takes field_values and json_ready from here.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Mapping
from typing import Any

from ..adapters.cpython_json import sorted_encoder


def normalize_value(value: Any) -> str | None:
    """One scalar as the index stores it, or None when it gives no value."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return json.dumps(value)
    if isinstance(value, dt.date):  # a datetime is a date too
        return value.isoformat()
    if isinstance(value, str):
        return value
    return None


def field_values(meta: dict[str, Any], indexed_fields: str | list[str]) -> dict[str, list[str]]:
    """Normalized values of every indexable top-level key; a list gives one value per scalar member."""
    keys = meta.keys() if indexed_fields == "auto" else [key for key in indexed_fields if key in meta]
    values: dict[str, list[str]] = {}
    for key in keys:
        raw = meta[key]
        members = raw if isinstance(raw, list) else [raw]
        normalized = [v for v in (normalize_value(member) for member in members) if v is not None]
        if normalized:
            values[json_key(key)] = list(dict.fromkeys(normalized))
    return values


def json_key(key: Any) -> str:
    """A front matter key as JSON names it: YAML also allows `null`, `true`, `2024` or a date as a key."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(key)
    if isinstance(key, dt.date):
        return key.isoformat()
    return str(key)


def json_ready(value: Any) -> Any:
    """Front matter as JSON can carry it: dates as ISO strings, anything else odd as its text."""
    if isinstance(value, dict):
        return {json_key(key): json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [json_ready(item) for item in value]
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _json_fallback(value: Any) -> Any:
    if isinstance(value, dt.date):  # the usual one: `date:` or `updated:`
        return value.isoformat()
    return list(value) if isinstance(value, (set, frozenset)) else json_ready(value)


# json.dumps(json_ready(meta), sort_keys=True) without first copying the front matter: the encoder meets an odd value
# (a date, a set) only when there is one, and it is made once rather than for every page.
_encode_meta = sorted_encoder(_json_fallback)


def meta_fingerprint(meta: dict[str, Any]) -> str:
    """Front matter as the fingerprint takes it: JSON with sorted keys."""
    try:
        return _encode_meta(meta)
    # YAML keys may be null, numbers or dates, which sort_keys cannot order among strings; json_ready writes a
    # non-finite number as text
    except (TypeError, ValueError):
        return json.dumps(json_ready(meta), sort_keys=True)


def search_excluded(meta: Mapping[str, Any]) -> bool:
    """Whether front matter says `search: {exclude: true}` (Material's convention)."""
    search = meta.get("search")
    return isinstance(search, dict) and search.get("exclude") is True


def yaml_problem(error: Exception) -> str:
    """A YAML error with its positions counted in lines of the page's file (the front matter starts on line 2)."""
    parts = []
    for text, mark in (
        (getattr(error, "context", None), getattr(error, "context_mark", None)),
        (getattr(error, "problem", None), getattr(error, "problem_mark", None)),
    ):
        if text:
            parts.append(f"{text} (line {mark.line + 2}, column {mark.column + 1})" if mark else text)
    return ", ".join(parts) or " ".join(str(error).split())
