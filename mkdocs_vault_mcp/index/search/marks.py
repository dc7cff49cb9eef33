"""Marking the sections `search` keeps: title and heading highlights, the snippet, and the exact spellings held.

The index's FTS5 table marks them, or an in-memory table of the kept sections alone when reading their text
costs less than a scan of the index's matches.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import Any

from ..schema import FTS_COLUMNS, TOKENIZER


def without_spellings_only_in_links(
    conn: sqlite3.Connection, rows: list[tuple[Any, ...]], spellings: list[str], columns: tuple[str, ...]
) -> list[tuple[Any, ...]]:
    """`rows` with an exact spelling not counted as held (row[12:]) by a section whose text holds it only inside
    the text of its links: a link names the page it points to (`使用 CORSMiddleware 处理 CORS` on the page about
    other middleware), not what the section itself is about."""
    held = {row[0]: row for row in rows if any(row[12:])}
    if not held:
        return rows
    places = {(row[1], row[2]): row[0] for row in held.values()}
    link_texts: dict[int, list[str]] = {}
    # Only the links whose text holds a spelling: a page of release notes has thousands of links.
    holds = " OR ".join("instr(text, ?) > 0" for _ in spellings)
    for ids in batches(sorted({document_id for document_id, _ in places})):
        for document_id, position, text in conn.execute(
            f"SELECT document_id, position, text FROM links WHERE document_id IN ({', '.join('?' * len(ids))})"
            f" AND ({holds})",
            [*ids, *spellings],
        ):
            section_id = places.get((document_id, position))
            if section_id is not None:
                link_texts.setdefault(section_id, []).append(text)
    if not link_texts:
        return rows
    fields: dict[int, tuple[str, ...]] = {}
    for ids in batches(sorted(link_texts)):
        selected = ", ".join(f"coalesce(s.{column}, '')" for column in columns)
        for section_id, *texts in conn.execute(
            f"SELECT s.id, {selected} FROM sections s WHERE s.id IN ({', '.join('?' * len(ids))})", ids
        ):
            fields[section_id] = tuple(texts)
    changed = {}
    for section_id, texts in link_texts.items():
        row = held[section_id]
        own = dict(zip(columns, fields[section_id], strict=True))
        hits = [
            hit
            and (
                any(spelling in own[column] for column in columns if column != "body")
                or own["body"].count(spelling) > sum(text.count(spelling) for text in texts)
            )
            for spelling, hit in zip(spellings, row[12:], strict=True)
        ]
        changed[section_id] = (*row[:12], *hits)
    return [changed.get(row[0], row) for row in rows]


# How highlight() and snippet() mark matches in the kept sections: in the title and headings, and in the body (turned
# into `**` for the reader once the section's own matches are known).
HEADING_MARK = "\x01"
BODY_MARK, BODY_MARK_END = "\x03", "\x04"


def marked_in_the_index(
    conn: sqlite3.Connection, match: str, ids: list[int], verbatim: str, spellings: list[str], tokens: int
) -> list[tuple[Any, ...]]:
    """The kept sections' fields, title and heading highlights, snippet and exact spellings held, marked by
    the index's own FTS5 table.

    highlight(), snippet() and instr() load whole rows: only for the rows kept. A scan of the matches between
    the first and the last of them finds them (`+` keeps SQLite from handing the list to FTS5, which would
    start the whole expression again for each rowid, which costs more on the whole than the scan).
    """
    details: list[tuple[Any, ...]] = []
    for batch in batches(ids):
        details += conn.execute(
            "SELECT s.id, s.document_id, s.position, s.heading, s.anchor, length(s.body), d.path, d.title, d.url,"
            " highlight(sections_fts, 1, char(1), char(2)), highlight(sections_fts, 2, char(1), char(2)),"
            f" snippet(sections_fts, 4, char(3), char(4), '…', {tokens})"
            f"{verbatim} FROM sections_fts JOIN sections s ON s.id = sections_fts.rowid"
            " JOIN documents d ON d.id = s.document_id"
            " WHERE sections_fts MATCH ? AND sections_fts.rowid BETWEEN ? AND ?"
            f" AND +sections_fts.rowid IN ({', '.join('?' * len(batch))})",
            [*spellings, match, batch[0], batch[-1], *batch],
        ).fetchall()
    return details


def marked_in_memory(
    conn: sqlite3.Connection,
    match: str,
    ids: list[int],
    verbatim: str,
    spellings: list[str],
    tokens: int,
    characters: int,
) -> list[tuple[Any, ...]] | None:
    """What `marked_in_the_index` returns, marked by an in-memory FTS5 table that holds the kept sections
    alone; None when their text (every FTS column) is longer than `characters`, where that would not pay.

    highlight() and snippet() depend only on a row's text and the expression's phrases, so a table of the
    same columns and tokenizer marks them exactly as the index would. On a large site the index's scan between
    the first and the last kept section reads thousands of matches; tokenizing the kept sections again costs
    less while their text is short (search_rank.CHARACTERS_PER_MATCH).
    """
    rows: list[tuple[Any, ...]] = []
    for batch in batches(ids):
        rows += conn.execute(
            "SELECT s.id, s.document_id, s.position, s.heading, s.anchor, length(s.body), d.path, d.title, d.url,"
            f" s.path, s.title, s.headings, s.summary, s.body{verbatim}"
            " FROM sections s JOIN documents d ON d.id = s.document_id"
            f" WHERE s.id IN ({', '.join('?' * len(batch))})",
            [*spellings, *batch],
        ).fetchall()
    if sum(len(text or "") for row in rows for text in row[9:14]) > characters:
        return None
    memory = _memory_table()
    memory.execute("BEGIN")
    try:
        memory.executemany(
            f"INSERT INTO sections_fts (rowid, {', '.join(FTS_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?)",
            [(row[0], *row[9:14]) for row in rows],
        )
        marks = {
            rowid: (marked_title, marked_trail, snippet)
            for rowid, marked_title, marked_trail, snippet in memory.execute(
                "SELECT rowid, highlight(sections_fts, 1, char(1), char(2)),"
                " highlight(sections_fts, 2, char(1), char(2)),"
                f" snippet(sections_fts, 4, char(3), char(4), '…', {tokens})"
                " FROM sections_fts WHERE sections_fts MATCH ?",
                [match],
            )
        }
    finally:
        memory.execute("ROLLBACK")  # the table is empty again for the next search
    if len(marks) < len(rows):  # every kept section matches; if one did not here, the index decides
        return None
    return [(*row[:9], *marks[row[0]], *row[14:]) for row in rows]


_MEMORY = threading.local()  # an SQLite connection is used by the thread that opened it


def _memory_table() -> sqlite3.Connection:
    """This thread's in-memory FTS5 table with the index's columns and tokenizer, empty."""
    memory: sqlite3.Connection | None = getattr(_MEMORY, "connection", None)
    if memory is None:
        memory = sqlite3.connect(":memory:", isolation_level=None)
        memory.execute(
            f"CREATE VIRTUAL TABLE sections_fts USING fts5({', '.join(FTS_COLUMNS)}, tokenize='{TOKENIZER}')"
        )
        _MEMORY.connection = memory
    return memory


def batches(ids: list[int], size: int = 500) -> list[list[int]]:
    """`ids` in lists short enough to bind: SQLite before 3.32 takes at most 999 parameters a statement."""
    return [ids[start : start + size] for start in range(0, len(ids), size)]
