"""The shared filters (spec section 4), checked and compiled to one SQL condition.

Every tool that takes filters goes through `compile_filters`; the condition
is over the `documents` table under the alias `d`.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sqlite3
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from ..errors import InvalidArgument
from ..instants import to_micros
from ..page.front_matter import normalize_value
from . import cjk

SCOPES = {
    "all": None,
    "metadata": "{path title headings summary}",
    "body": "{body}",
}


def no_document(parameter: str, path: str, example: str = "'guide/install.md'") -> InvalidArgument:
    """The error for a page path that names no document, whichever tool and parameter took it."""
    return InvalidArgument(
        f"No document at {parameter} {path!r} (paths are exact and case-sensitive, e.g. {example}); "
        "find paths with search or query_documents."
    )


@dataclass(frozen=True)
class Filters:
    query: str | None = None
    scope: str = "all"
    path: str | None = None
    folder: str | None = None
    pattern: str | None = None
    filters: dict[str, Any] = field(default_factory=dict)
    modified_after: str | None = None
    modified_before: str | None = None
    language: str | None = None


class Compiled(NamedTuple):
    where: str  # a condition over `documents d`
    params: list[Any]
    match: str | None  # the FTS5 expression actually used, or None


def check_choice(name: str, value: str, accepted: list[str] | tuple[str, ...]) -> str:
    if value not in accepted:
        raise InvalidArgument(f"Unknown {name} {value!r}; accepted: {', '.join(map(repr, accepted))}.")
    return value


def check_range(name: str, value: int, low: int, high: int | None = None) -> int:
    if value < low or (high is not None and value > high):
        accepted = f"from {low} to {high}" if high is not None else f"{low} or more"
        raise InvalidArgument(f"{name} must be an integer {accepted}; got {value}.")
    return value


_INSTANT = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})(?:[Tt ](?P<time>\d{2}:\d{2}(?::\d{2})?)(?:\.(?P<fraction>\d+))?"
    r"(?P<zone>[Zz]|[+-]\d{2}:?\d{2})?)?"
)


def parse_instant(name: str, text: str) -> dt.datetime:
    """An RFC 3339 instant that must carry a time and a time zone."""
    problem = (
        f"{name} must be an RFC 3339 date-time with a time zone, such as "
        f"'2025-03-01T00:00:00Z' or '2025-03-01T09:30:00+02:00'; got {text!r}"
    )
    parts = _INSTANT.fullmatch(text.strip())
    if parts is None:
        raise InvalidArgument(problem + ".")
    if parts["time"] is None:
        raise InvalidArgument(problem + " (a date alone is not an instant).")
    if parts["zone"] is None:
        raise InvalidArgument(problem + " (the time zone is missing).")
    # Python before 3.11 reads neither `Z` nor fractions other than 3 or 6 digits; a finer
    # fraction than microseconds is cut, never rounded into the next second.
    fraction = (parts["fraction"] or "")[:6].ljust(6, "0")
    zone = "+00:00" if parts["zone"] in "Zz" else parts["zone"][:3] + ":" + parts["zone"][-2:]
    try:
        return dt.datetime.fromisoformat(f"{parts['date']}T{parts['time']}.{fraction}{zone}")
    except ValueError as error:
        raise InvalidArgument(f"{problem} ({error}).") from None


def normalize_folder(folder: str) -> str:
    """`\\` reads as `/`; runs of `/` count as one, and leading and trailing ones are ignored."""
    return re.sub("/+", "/", folder.replace("\\", "/")).strip("/")


def indexed_fields(conn: sqlite3.Connection) -> list[str]:
    row = conn.execute("SELECT value FROM info WHERE key = 'indexed_fields'").fetchone()
    return json.loads(row[0]) if row else []


def check_field(conn: sqlite3.Connection, name: str) -> str:
    fields = indexed_fields(conn)
    if name not in fields:
        listing = ", ".join(fields) if fields else "none on this site"
        raise InvalidArgument(f"Field {name!r} is not indexed; indexed fields: {listing}.")
    return name


def site_languages(conn: sqlite3.Connection) -> list[str]:
    """The languages of the site's pages, sorted."""
    return [row[0] for row in conn.execute("SELECT DISTINCT language FROM documents ORDER BY language")]


def check_language(conn: sqlite3.Connection, language: str) -> str:
    if conn.execute("SELECT 1 FROM documents WHERE language = ? LIMIT 1", [language]).fetchone() is None:
        listing = ", ".join(map(repr, site_languages(conn))) or "none: the index has no pages"
        raise InvalidArgument(f"No page is in language {language!r}; the site's languages: {listing}.")
    return language


def split_target(target: str, conn: sqlite3.Connection | None = None) -> tuple[str, str | None]:
    """`guide/install.md#drift` as (path, anchor). With `conn`, a page whose own path holds a `#` (a file named
    `q?x=1#frag.html`) is found whole, or with an anchor after the `#` its path ends before."""
    if conn is not None and "#" in target:
        cuts = [len(target)] + [at for at in range(len(target) - 1, -1, -1) if target[at] == "#"]
        for cut in cuts:
            if conn.execute("SELECT 1 FROM documents WHERE path = ?", [target[:cut]]).fetchone() is not None:
                return target[:cut], target[cut + 1 :] or None
    path, _, anchor = target.partition("#")
    return path, anchor or None


def without_repeated_text(conn: sqlite3.Connection, base: Compiled) -> Compiled:
    """Leave out a fallback copy (mkdocs-static-i18n) when the page it copies passes the same filters.

    A fallback copy holds the default language's text under another language's URL: without a language
    filter both would match and rank alike, showing the same text twice. The copy still answers when
    only it passes the filters (a folder of its language).
    """
    if conn.execute("SELECT 1 FROM documents WHERE fallback_of IS NOT NULL LIMIT 1").fetchone() is None:
        return base
    where = (
        f"({base.where}) AND (d.fallback_of IS NULL OR d.fallback_of NOT IN"
        f" (SELECT d.path FROM documents d WHERE {base.where}))"
    )
    return Compiled(where, [*base.params, *base.params], base.match)


def ranked_pages_filter(conn: sqlite3.Connection, filters: Filters) -> Compiled:
    """The pages either side of search (keywords, meaning) may rank: those the filters other than query select,
    a fallback copy left out unless a language is asked for."""
    base = compile_filters(conn, replace(filters, query=None))
    return base if filters.language is not None else without_repeated_text(conn, base)


CLOSEST_FOLDERS = 5  # named by the error for a folder that holds no page
LISTED_FOLDERS = 20  # top-level folders named when none is close


def check_folder(conn: sqlite3.Connection, folder: str) -> str:
    """A normalized folder that holds no page is an error naming the closest folders: a folder without pages
    cannot be asked for on purpose, so it is a misspelling (`refrence`) or a wrong case (`Guide`)."""
    if conn.execute(
        "SELECT 1 FROM documents WHERE folder = ? OR (folder >= ? AND folder < ?) LIMIT 1",
        [folder, folder + "/", folder + "0"],
    ).fetchone():
        return folder
    # Every ancestor of a page's folder is a folder that holds pages too.
    known = sorted(
        {
            "/".join(parts[:depth])
            for (name,) in conn.execute("SELECT DISTINCT folder FROM documents WHERE folder != ''")
            for parts in [name.split("/")]
            for depth in range(1, len(parts) + 1)
        }
    )
    by_casefold: dict[str, list[str]] = {}
    for name in known:
        by_casefold.setdefault(name.casefold(), []).append(name)
    import difflib  # only for a folder that matches none: its suggestion

    close = difflib.get_close_matches(folder.casefold(), list(by_casefold), n=CLOSEST_FOLDERS, cutoff=0.6)
    closest = [name for key in close for name in by_casefold[key]][:CLOSEST_FOLDERS]
    top = [name for name in known if "/" not in name]
    if closest:
        listing = "the closest folders: " + ", ".join(map(repr, closest))
    elif top:
        more = ", ..." if len(top) > LISTED_FOLDERS else ""
        listing = "the site's top-level folders: " + ", ".join(map(repr, top[:LISTED_FOLDERS])) + more
    else:
        listing = "none: every page is at the root (folder '')"
    raise InvalidArgument(
        f"No page is in folder {folder!r} (folders are case-sensitive paths under docs_dir); {listing}."
    )


def compile_filters(conn: sqlite3.Connection, filters: Filters) -> Compiled:
    check_choice("scope", filters.scope, tuple(SCOPES))
    clauses: list[str] = []
    params: list[Any] = []
    _where_the_page_is(conn, filters, clauses, params)
    # With a folder, path, pattern or date narrowing the pages, checking each of them for the value is
    # cheap; without one, the pages holding the value are the smaller set to start from.
    narrowed = bool(clauses) or filters.modified_after is not None or filters.modified_before is not None
    _field_values(conn, filters.filters, narrowed, clauses, params)

    # After the field filters: a language is most of a single-language site, no narrowing worth an EXISTS.
    if filters.language is not None:
        clauses.append("d.language = ?")
        params.append(check_language(conn, filters.language))

    if filters.modified_after is not None:
        clauses.append("d.modified >= ?")
        params.append(to_micros(parse_instant("modified_after", filters.modified_after)))
    if filters.modified_before is not None:
        clauses.append("d.modified < ?")
        params.append(to_micros(parse_instant("modified_before", filters.modified_before)))

    match = None
    if filters.query is not None and filters.query.strip():
        match = fts_expression(conn, filters.query, filters.scope)
        if match is None:
            clauses.append("0")
        else:
            clauses.append(
                "d.id IN (SELECT s.document_id FROM sections s WHERE s.id IN"
                " (SELECT rowid FROM sections_fts WHERE sections_fts MATCH ?))"
            )
            params.append(match)

    return Compiled(" AND ".join(clauses) or "1", params, match)


def _where_the_page_is(conn: sqlite3.Connection, filters: Filters, clauses: list[str], params: list[Any]) -> None:
    """Add the conditions of `path`, `folder` and `pattern`."""
    if filters.path is not None:
        clauses.append("d.path = ?")
        params.append(filters.path)

    if filters.folder is not None:
        folder = normalize_folder(filters.folder)
        if folder:
            check_folder(conn, folder)
            # A range over the index instead of LIKE: case-sensitive, and `_` and `%` stay plain.
            clauses.append("(d.folder = ? OR (d.folder >= ? AND d.folder < ?))")
            params += [folder, folder + "/", folder + "0"]  # "0" is the character after "/"
        else:
            clauses.append("d.folder = ''")

    if filters.pattern is not None:
        clauses.append("d.path GLOB ?")
        params.append(filters.pattern)


def _field_values(
    conn: sqlite3.Connection, fields: dict[str, Any], narrowed: bool, clauses: list[str], params: list[Any]
) -> None:
    """Add a condition for each front matter field of `filters`: the page holds that value."""
    if not isinstance(fields, dict):
        raise InvalidArgument(
            f"filters must be an object of field -> value (string, number or boolean); got {fields!r}."
        )
    for name, value in fields.items():
        if value is None or isinstance(value, (list, dict)):
            raise InvalidArgument(
                f"filters[{name!r}] must be a string, number or boolean; got {json.dumps(value)}. "
                "Give one value per field; all given fields must match."
            )
        check_field(conn, name)
        values = comparable_values(value)
        holds_value = f"field = ? AND value IN ({', '.join('?' * len(values))})"
        if narrowed:
            clauses.append(f"EXISTS (SELECT 1 FROM field_values WHERE document_id = d.id AND {holds_value})")
        else:
            clauses.append(f"d.id IN (SELECT document_id FROM field_values WHERE {holds_value})")
        params += [name, *values]


def comparable_values(value: str | int | float | bool) -> list[str | None]:
    """The stored forms that equal `value`: a whole number matches `2` and `2.0` alike, since JSON
    clients written in JavaScript cannot tell the two apart. [None] for a value never stored (a float that is
    not finite): `IN (NULL)` matches nothing."""
    normalized = normalize_value(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or normalized is None:
        return [normalized]
    if isinstance(value, float) and not value.is_integer():
        return [normalized]
    whole = int(value)
    return list(dict.fromkeys([normalized, str(whole), f"{whole}.0"]))


# --- FTS5 expressions ------------------------------------------------------

# Words as the unicode61 tokenizer cuts them: runs of letters, digits and marks.
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def literal_words(query: str) -> list[str]:
    return _WORD.findall(query)


def literal_expression(words: list[str], joiner: str = " ") -> str | None:
    """Each word quoted; a word with CJK in it becomes the phrase of its tokens as the index stores them."""
    return joiner.join('"' + " ".join(literal_words(cjk.separate(word))) + '"' for word in words) or None


def scoped(expression: str, scope: str) -> str:
    columns = SCOPES[scope]
    return expression if columns is None else f"{columns} : ({expression})"


def is_valid_match(conn: sqlite3.Connection, expression: str) -> bool:
    try:
        conn.execute("SELECT rowid FROM sections_fts WHERE sections_fts MATCH ? LIMIT 1", [expression]).fetchall()
    except sqlite3.OperationalError:
        return False
    return True


def fts_expression(conn: sqlite3.Connection, query: str, scope: str) -> str | None:
    """The query as FTS5 reads it; when SQLite rejects it, its literal words ANDed (None: no words).

    The query is checked on its own before it is scoped: `a) OR (b` is malformed, but once
    wrapped as `{columns} : (a) OR (b)` it would parse, with `b` outside the scope. CJK runs are
    spelled as the index stores them (index/cjk.py).
    """
    written = cjk.fts_query(query.strip()).strip()
    if is_valid_match(conn, written):
        expression = scoped(written, scope)
        if is_valid_match(conn, expression):
            return expression
    literal = literal_expression(literal_words(query))
    return None if literal is None else scoped(literal, scope)
