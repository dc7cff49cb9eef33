"""One token per CJK character (what the index does) against overlapping bigrams (Lucene's CJK analyzer).

    .venv/bin/python bench/cjk_bigrams.py

Uses the zh, ja and ko sites of bench/cjk_search_quality.py (run it first) and both judged sets
(bench/cjk_queries.json, bench/cjk_queries_inside.json). The sections of each site, as the reader sees
them, go into two in-memory FTS5 tables with the index's tokenizer:

- characters: `cjk.separate` (a separator beside each CJK character); a CJK run of the query is the
  phrase of its characters;
- bigrams: each CJK run of two or more characters replaced by its overlapping bigrams, space-separated
  (`跨域资源` -> `跨域 域资 资源`), as Lucene's CJKBigramFilter emits them (a lone character stays a
  unigram); a CJK run of the query is the phrase of its bigrams.

Both rank alike, to compare the tokenization alone: every run of the query (and its Latin words) ANDed,
bm25() with the index's column weights, a page by its best section. Prints MRR@10 and empty answers per
language for both, and the size of each FTS5 table's index (its `_data` rows, in bytes).
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mkdocs_vault_mcp.index import cjk  # noqa: E402
from mkdocs_vault_mcp.index.filters import literal_words  # noqa: E402
from mkdocs_vault_mcp.index.publish import open_read_only  # noqa: E402
from mkdocs_vault_mcp.index.schema import TOKENIZER  # noqa: E402
from mkdocs_vault_mcp.index.search.rank import COLUMN_WEIGHTS  # noqa: E402
from report import results_from_output  # noqa: E402  (bench/ is on sys.path when a script runs)

OUT = ROOT / "bench" / "out"
QUERY_FILES = [ROOT / "bench" / "cjk_queries.json", ROOT / "bench" / "cjk_queries_inside.json"]
RUN = re.compile(f"[{cjk.CJK_CHARACTERS}]+")


def bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


def bigram_text(text: str) -> str:
    return RUN.sub(lambda match: " " + " ".join(bigrams(match.group())) + " ", text)


def expression(query: str, scheme: str) -> str:
    parts = []
    for run in cjk.runs(query):
        tokens = list(run) if scheme == "characters" else bigrams(run)
        parts.append('"' + " ".join(tokens) + '"')
    parts += [f'"{word}"' for word in literal_words(RUN.sub(" ", query))]
    return " AND ".join(parts)


def main() -> None:
    queries = [q for path in QUERY_FILES for q in json.loads(path.read_text())["queries"]]
    weights = ", ".join(map(str, COLUMN_WEIGHTS))
    print("command: .venv/bin/python bench/cjk_bigrams.py")
    print(
        f"{'language':<8} {'n':>3}  {'MRR@10 characters':>17} {'bigrams':>8}  {'empty':>5} {'bigrams':>8}"
        f"  {'index bytes characters':>22} {'bigrams':>9}"
    )
    for language in ("zh", "ja", "ko"):
        index = open_read_only(OUT / f"fastapi-{language}" / "site" / "vault-mcp" / "index.sqlite")
        rows = [
            (path, *(cjk.join(value) for value in values))
            for path, *values in index.execute(
                "SELECT d.path, s.path, s.title, s.headings, s.summary, s.body"
                " FROM sections s JOIN documents d ON d.id = s.document_id"
            )
        ]
        mine = [q for q in queries if q["language"] == language]
        scores, sizes = {}, {}
        for scheme, prepare in (("characters", cjk.separate), ("bigrams", bigram_text)):
            conn = sqlite3.connect(":memory:")
            conn.execute(
                "CREATE VIRTUAL TABLE t USING fts5(page UNINDEXED, path, title, headings, summary, body,"
                f" tokenize='{TOKENIZER}')"
            )
            conn.executemany(
                "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", [(row[0], *map(prepare, row[1:])) for row in rows]
            )
            conn.commit()
            sizes[scheme] = conn.execute("SELECT sum(length(block)) FROM t_data").fetchone()[0]
            ranks, empty = [], 0
            for item in mine:
                found = list(
                    dict.fromkeys(
                        page
                        for (page,) in conn.execute(
                            f"SELECT page FROM t WHERE t MATCH ? ORDER BY bm25(t, 0, {weights})",
                            [expression(item["query"], scheme)],
                        )
                    )
                )[:10]
                empty += not found
                rank = next((n for n, page in enumerate(found, 1) if page in item["relevant"]), None)
                ranks.append(1 / rank if rank else 0.0)
            scores[scheme] = (sum(ranks) / len(ranks), empty)
        (c_mrr, c_empty), (b_mrr, b_empty) = scores["characters"], scores["bigrams"]
        print(
            f"{language:<8} {len(mine):>3}  {c_mrr:>17.3f} {b_mrr:>8.3f}  {c_empty:>5} {b_empty:>8}"
            f"  {sizes['characters']:>22,} {sizes['bigrams']:>9,}"
        )


if __name__ == "__main__":
    with results_from_output("cjk_bigrams"):
        main()
