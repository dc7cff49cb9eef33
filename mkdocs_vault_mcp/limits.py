"""Every bound on what one tool call may ask of the server, in one place.

The arguments are checked against these before any work starts, and each error names the limit, so an agent
can narrow its call. Together they keep every call short: no query, pattern or filter is long enough to cost
much even on a very large site, and `CALL_SECONDS` stops any call whose work still runs long
(so one call can never hold a worker thread, or the index, for others). Text must be valid Unicode without NUL:
SQLite would cut a string at a NUL byte, and a lone surrogate cannot be encoded at all.
"""

from __future__ import annotations

import re
from typing import Any

from .errors import InvalidArgument

QUERY_CHARS = 2_000  # a long question pasted whole fits; a query far longer would take seconds
QUERY_TERMS = 64  # words of a query as the tokenizer cuts them; each may cost an FTS5 lookup
PATTERN_CHARS = 1_000  # SQLite itself refuses GLOB patterns over 50,000 bytes, with a bare error
FILTER_FIELDS = 32  # fields in `filters`; each is one more condition per page
TEXT_CHARS = 1_000  # any other string: path, folder, section, field, filter names and values, instants
CALL_SECONDS = 5.0  # CPU work of one call (SQL and Python); the call is stopped and answers an error naming this limit
# Long calls (beyond a twentieth of a second of work) a server process keeps waiting for their turn; one more is
# refused at once, with a message.
QUEUED_CALLS = 32
# Sessions, only when HTTP is served statefully (stateless is the default): at the limit, the longest idle one
# makes room for a new client, and one idle this long ends.
MAX_SESSIONS = 1_000
SESSION_IDLE_SECONDS = 10 * 60
# HTTP connections a server process keeps open at once (fewer where it may not open that many files); at the
# limit a new one closes the one that has waited longest for a request. A connection not being answered is closed
# once it has waited this long for its request, whole (headers and body).
HTTP_CONNECTIONS = 1_000
REQUEST_READ_SECONDS = 10
MESSAGE_CHARS = 2_000  # an error message, whatever value it quotes (a listing of headings fits)
# What one answer holds at most: the tools' schemas publish these bounds and the query functions check them.
ROWS = 1_000  # pages, buckets or link rows of one call (totals count every match whatever the limit)
SEARCH_RESULTS = 100  # pages search ranks (related pages are ranked by search too)
SECTIONS_PER_PAGE = 10  # sections search shows for one page
READ_CHARS = 100_000  # characters of one read

LIMITED_TEXT = {"query": QUERY_CHARS, "pattern": PATTERN_CHARS}

# Words as the unicode61 tokenizer cuts them (runs of letters, digits and marks).
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def check_argument(name: str, value: Any, label: str | None = None) -> None:
    """Raise InvalidArgument when `value` breaks a limit; `name` is the parameter, `label` how the message
    names it (`where['query']` for a shared filter inside the `links` tool's `where`)."""
    label = label or name
    if isinstance(value, str):
        check_text(label, value, LIMITED_TEXT.get(name, TEXT_CHARS))
        if name == "query":
            terms = len(_WORD.findall(value))
            if terms > QUERY_TERMS:
                raise InvalidArgument(
                    f"{label} has {terms} words; the limit is {QUERY_TERMS} words. Keep the words that matter."
                )
    elif isinstance(value, dict):
        if len(value) > FILTER_FIELDS:
            raise InvalidArgument(f"{label} has {len(value)} fields; the limit is {FILTER_FIELDS} fields.")
        for key, member in value.items():
            check_text(f"{label} field name", key, TEXT_CHARS)
            if isinstance(member, str):
                check_text(f"{label}[{key!r}]", member, TEXT_CHARS)


def check_text(name: str, text: str, limit: int) -> None:
    if len(text) > limit:
        raise InvalidArgument(f"{name} is {len(text)} characters long; the limit is {limit} characters.")
    if "\x00" in text:
        raise InvalidArgument(f"{name} holds a NUL character (\\u0000) at {text.index(chr(0))}; remove it.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InvalidArgument(
            f"{name} holds a lone surrogate (\\u{ord(text[error.start]):04x}) at {error.start}, which is not "
            "Unicode text; send whole characters (a surrogate pair in JSON is one character)."
        ) from None


def cut(message: str) -> str:
    """A message no longer than MESSAGE_CHARS, whatever value it quotes."""
    return message if len(message) <= MESSAGE_CHARS else message[: MESSAGE_CHARS - 1] + "…"
