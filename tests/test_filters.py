"""The parts of the filter compiler that the tool tests reach only in their common forms."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from mkdocs_vault_mcp.errors import InvalidArgument
from mkdocs_vault_mcp.index.filters import comparable_values, fts_expression, normalize_folder, parse_instant
from mkdocs_vault_mcp.index.schema import TOKENIZER
from mkdocs_vault_mcp.instants import to_micros

UTC = UTC


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2025-03-01T00:00:00Z", datetime(2025, 3, 1, tzinfo=UTC)),
        ("2025-03-01t00:00:00z", datetime(2025, 3, 1, tzinfo=UTC)),
        ("2025-03-01 09:30+02:00", datetime(2025, 3, 1, 7, 30, tzinfo=UTC)),  # space, no seconds
        ("2025-03-01T09:30:00+0200", datetime(2025, 3, 1, 7, 30, tzinfo=UTC)),
        ("2025-03-01T00:00:00.5Z", datetime(2025, 3, 1, 0, 0, 0, 500_000, tzinfo=UTC)),
        # Nanoseconds are cut, never rounded up into the next second (or month).
        ("2025-01-31T23:59:59.999999999Z", datetime(2025, 1, 31, 23, 59, 59, 999_999, tzinfo=UTC)),
        (" 2025-03-01T00:00:00-01:30 ", datetime(2025, 3, 1, 1, 30, tzinfo=UTC)),
    ],
)
def test_rfc_3339_instants_are_read_as_utc_and_cut_to_the_microsecond(text: str, expected: datetime) -> None:
    assert parse_instant("modified_after", text) == expected


@pytest.mark.parametrize(
    "text, reason",
    [
        ("2025-03-01", "a date alone"),
        ("2025-03-01T10:00:00", "time zone is missing"),
        ("2025-03-01T10:00:00 UTC", "RFC 3339"),
        ("2025-02-29T00:00:00Z", "day is out of range"),
        ("2025-03-01T24:00:00Z", "hour must be"),
        ("2025-03-01T00:00:00+25:00", "RFC 3339"),
        ("March 1st", "RFC 3339"),
        ("", "RFC 3339"),
    ],
)
def test_an_instant_that_is_not_rfc_3339_is_refused_with_the_reason_and_an_example(text: str, reason: str) -> None:
    with pytest.raises(InvalidArgument, match=reason) as refused:
        parse_instant("modified_before", text)
    assert "modified_before" in str(refused.value) and "2025-03-01T00:00:00Z" in str(refused.value)


def test_instants_at_the_ends_of_the_calendar_do_not_overflow() -> None:
    first = parse_instant("modified_after", "0001-01-01T00:00:00+01:00")
    last = parse_instant("modified_before", "9999-12-31T23:59:59.999999-01:00")
    year_one = (datetime(1, 1, 1, tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    assert to_micros(first) == year_one - 3_600_000_000
    assert to_micros(last) > to_micros(parse_instant("x", "9999-12-31T23:59:59Z"))
    assert to_micros(parse_instant("x", "1969-12-31T23:59:59.5Z")) == -500_000


@pytest.mark.parametrize(
    "given, folder",
    [
        ("", ""),
        ("/", ""),
        ("///", ""),
        ("a", "a"),
        ("a/", "a"),
        ("/a/", "a"),
        ("a//b", "a/b"),
        ("\\a\\b\\", "a/b"),
        ("A_b%", "A_b%"),
    ],
)
def test_a_folder_is_normalized_to_one_spelling(given: str, folder: str) -> None:
    assert normalize_folder(given) == folder


def test_whole_numbers_match_either_way_they_are_written() -> None:
    assert comparable_values(2) == ["2", "2.0"]
    assert comparable_values(2.0) == ["2.0", "2"]
    assert comparable_values(1.5) == ["1.5"]
    assert comparable_values(True) == ["true"]
    assert comparable_values("2") == ["2"]  # a string is compared as written


@pytest.fixture
def fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        f"CREATE VIRTUAL TABLE sections_fts USING fts5(path, title, headings, summary, body, tokenize='{TOKENIZER}')"
    )
    return conn


@pytest.mark.parametrize(
    "query, scope, expression",
    [
        ("install pip", "all", "install pip"),
        ("install", "metadata", "{path title headings summary} : (install)"),
        ('"unterminated', "body", '{body} : ("unterminated")'),
        ("foo AND (", "all", '"foo" "AND"'),
        ("NOT", "all", '"NOT"'),
        ("a -b", "all", '"a" "b"'),
        ("foo:bar", "all", '"foo" "bar"'),
        # Malformed alone, though it would parse once wrapped in the scope's parentheses.
        ("kiwi) OR (zebra", "metadata", '{path title headings summary} : ("kiwi" "OR" "zebra")'),
        ("(", "all", None),
        ("*", "body", None),
    ],
)
def test_each_query_and_scope_compiles_to_its_fts5_expression(
    fts: sqlite3.Connection,
    query: str,
    scope: str,
    expression: str | None,
) -> None:
    assert fts_expression(fts, query, scope) == expression
