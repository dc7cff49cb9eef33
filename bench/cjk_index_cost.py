"""What CJK separation costs the writer: the 13-language index's sections inserted into FTS5 raw and separated.

    .venv/bin/python bench/cjk_index_cost.py

Reads the 15,354 sections of bench/out/fastapi-all/ (built by bench/languages_one_site.py), takes their
text as the reader sees it, and inserts all five FTS5 columns into an in-memory FTS5 table with the
index's tokenizer, three times each way: as they are, and after `cjk.separate`. Prints the best CPU
seconds of preparing and of inserting for each.
"""

from __future__ import annotations

import sqlite3
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mkdocs_vault_mcp.index import cjk  # noqa: E402
from mkdocs_vault_mcp.index.schema import TOKENIZER  # noqa: E402
from report import results_from_output  # noqa: E402  (bench/ is on sys.path when a script runs)

INDEX = ROOT / "bench" / "out" / "fastapi-all" / "site" / "vault-mcp" / "index.sqlite"


def main() -> None:
    source = sqlite3.connect(INDEX)
    rows = [
        tuple(cjk.join(value) for value in row)
        for row in source.execute("SELECT path, title, headings, summary, body FROM sections")
    ]

    def run(prepare) -> tuple[float, float]:
        conn = sqlite3.connect(":memory:")
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(path, title, headings, summary, body, tokenize='{TOKENIZER}')")
        started = time.process_time()
        data = [tuple(prepare(value) for value in row) for row in rows]
        prepared = time.process_time() - started
        started = time.process_time()
        conn.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", data)
        conn.commit()
        return prepared, time.process_time() - started

    print(f"{len(rows)} sections; command: .venv/bin/python bench/cjk_index_cost.py")
    for name, prepare in (("raw", lambda value: value), ("separated", cjk.separate)):
        prepared, inserted = min((run(prepare) for _ in range(3)), key=sum)
        print(f"{name:<10} prepare {prepared:.2f} s CPU, FTS5 insert {inserted:.2f} s CPU")


if __name__ == "__main__":
    with results_from_output("cjk_index_cost"):
        main()
