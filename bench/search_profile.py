"""Where one search's time goes, statement by statement, on a large index.

    .venv/bin/python bench/search_profile.py --index bench/out/real-text-copies-100000/index.sqlite
                                             [--queries 60] [--kind question] [--top 10] [--query TEXT ...]

Draws real_text_search.py's queries (same seed), runs each once to warm the page cache, then runs the --top
slowest of a kind again with every SQL statement timed (execute and fetch, this thread's CPU): each statement's
share of the query's CPU time, the function of index/search/answer.py that ran it, and the statement text. What the
statements leave over is Python (planning, rescoring, grouping). Prints only; nothing is written to results/.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from mkdocs_vault_mcp.index.filters import Filters  # noqa: E402
from mkdocs_vault_mcp.index.publish import open_read_only  # noqa: E402
from mkdocs_vault_mcp.index.search import answer as searching  # noqa: E402
from real_text_search import draw_queries  # noqa: E402


class TimedCursor:
    """A cursor whose statement is timed from execute to the last row fetched."""

    def __init__(
        self, log: list[tuple[str, str, float, int]], caller: str, sql: str, cursor: sqlite3.Cursor, spent: float
    ) -> None:
        self.log, self.caller, self.sql, self.cursor, self.spent = log, caller, sql, cursor, spent

    def _done(self, started: float, rows: int) -> None:
        self.log.append((self.caller, self.sql, self.spent + time.thread_time() - started, rows))

    def fetchall(self) -> list[Any]:
        started = time.thread_time()
        rows = self.cursor.fetchall()
        self._done(started, len(rows))
        return rows

    def fetchone(self) -> Any:
        started = time.thread_time()
        row = self.cursor.fetchone()
        self._done(started, 1)
        return row

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class TimedConnection:
    """Stands in for the connection: every execute is timed with the function of search.py that called it."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.log: list[tuple[str, str, float, int]] = []

    def execute(self, sql: str, params: Any = ()) -> TimedCursor:
        frames = [
            frame for frame in traceback.extract_stack()[:-1] if frame.filename.endswith(("search.py", "filters.py"))
        ]
        caller = frames[-1].name if frames else "?"
        started = time.thread_time()
        cursor = self.conn.execute(sql, params)
        match = next((param for param in params if isinstance(param, str) and param[:1] in '"({'), "")
        return TimedCursor(
            self.log, caller, f"{sql} -- {match}" if match else sql, cursor, time.thread_time() - started
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--kind", default="question", help="keyword, code or question")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--query", action="append", help="profile these queries instead")
    args = parser.parse_args()
    conn = open_read_only(args.index)
    queries = args.query or draw_queries(args.queries, args.seed)[args.kind]
    costs = []
    for query in queries:
        searching.search(conn, query, Filters())
        started = time.thread_time()
        searching.search(conn, query, Filters())
        costs.append((time.thread_time() - started, query))
    for _, query in sorted(costs, reverse=True)[: args.top]:
        timed = TimedConnection(conn)
        started = time.thread_time()
        searching.search(timed, query, Filters())  # type: ignore[arg-type]
        total = time.thread_time() - started
        in_sql = sum(spent for _, _, spent, _ in timed.log)
        print(
            f"\n{query!r}: {total * 1000:.1f} ms CPU, {len(timed.log)} statements {in_sql * 1000:.1f} ms,"
            f" Python {(total - in_sql) * 1000:.1f} ms"
        )
        for caller, sql, spent, rows in timed.log:
            if spent * 1000 >= 0.3:
                print(f"  {spent * 1000:7.1f} ms {rows:6d} rows  {caller:22s} {' '.join(sql.split())[-200:]}")


if __name__ == "__main__":
    main()
