"""Does language-aware stemming beat the index's English `porter` tokenizer on other languages?

    .venv/bin/pip install PyStemmer     # only for this measurement: the package does not use it
    .venv/bin/python bench/stemming.py [--languages es pt de fr ru]

For each language, builds the FastAPI docs of that language as a site (as bench/cjk_search_quality.py
does, cached in bench/out/fastapi-<lang>/) and reads its sections from the built index. Then a
known-item test: each page's title is a query, the page the answer, searched in the section bodies
only (titles and headings left out, so the query's word forms must meet the text's: `Tareas en segundo
plano` against `tarea`, `tareas`, `planos`). The same sections are indexed twice in memory:

- porter: the index's own tokenizer, `porter unicode61 remove_diacritics 2`;
- snowball: each word lower-cased and reduced by the language's Snowball stemmer (PyStemmer) before
  indexing, then `unicode61 remove_diacritics 2`; the query the same way.

Both rank alike: the title's words (one letter or shorter left out) ORed, sections by bm25(), a page by its
best section. Reports MRR@10 and how many titles find their page at rank 1, per language, and writes the
table to bench/results/quality/stemming.json.
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "bench"))

from cjk_search_quality import build  # noqa: E402
from mkdocs_vault_mcp.index import cjk  # noqa: E402
from mkdocs_vault_mcp.index.publish import open_read_only  # noqa: E402
from report import write_results  # noqa: E402
from search_quality import CONFIG, CORPORA, MKDOCS, OUT, reciprocal_rank  # noqa: E402

SNOWBALL = {"es": "spanish", "pt": "portuguese", "de": "german", "fr": "french", "ru": "russian"}
RESULTS = ROOT / "bench" / "results" / "quality" / "stemming.json"
WORD = re.compile(r"[^\W_]+")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--languages", nargs="+", default=list(SNOWBALL), choices=list(SNOWBALL))
    args = parser.parse_args()
    import Stemmer  # PyStemmer

    lines = [
        f"{'language':<8} {'pages':>5}  {'MRR@10 porter':>13} {'snowball':>9}  {'rank 1 porter':>13} {'snowball':>9}"
    ]
    for language in args.languages:
        site = build(language, ROOT, False, CONFIG, CORPORA, MKDOCS, OUT)
        index = open_read_only(site / "vault-mcp" / "index.sqlite")
        sections = [
            (path, cjk.join(body))
            for path, body in index.execute(
                "SELECT d.path, s.body FROM sections s JOIN documents d ON d.id = s.document_id"
            )
        ]
        titles = dict(index.execute("SELECT path, title FROM documents"))
        index.close()
        stemmer = Stemmer.Stemmer(SNOWBALL[language])

        def stemmed(text: str, stemmer: Stemmer.Stemmer = stemmer) -> str:
            return " ".join(stemmer.stemWords([word.lower() for word in WORD.findall(text)]))

        scores = {}
        for arm, tokenizer, prepare in (
            ("porter", "porter unicode61 remove_diacritics 2", lambda text: text),
            ("snowball", "unicode61 remove_diacritics 2", stemmed),
        ):
            conn = sqlite3.connect(":memory:")
            conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(path UNINDEXED, body, tokenize='{tokenizer}')")
            conn.executemany("INSERT INTO t VALUES (?, ?)", [(path, prepare(body)) for path, body in sections])
            ranks = []
            for path, title in titles.items():
                words = [word for word in WORD.findall(prepare(title)) if len(word) > 1]
                if not words:
                    continue
                match = " OR ".join(f'"{word}"' for word in dict.fromkeys(words))
                found = list(
                    dict.fromkeys(
                        row[0] for row in conn.execute("SELECT path FROM t WHERE t MATCH ? ORDER BY bm25(t)", [match])
                    )
                )
                ranks.append(reciprocal_rank(found, {path}))
            scores[arm] = (sum(ranks) / len(ranks), sum(1 for r in ranks if r == 1.0), len(ranks))
        (p_mrr, p_top, n), (s_mrr, s_top, _) = scores["porter"], scores["snowball"]
        lines.append(f"{language:<8} {n:>5}  {p_mrr:>13.3f} {s_mrr:>9.3f}  {p_top:>13} {s_top:>9}")
    report = (
        "Stemming: known-item search, each page's title against the section bodies of its language's FastAPI docs.\n"
        f"command: .venv/bin/python bench/stemming.py {' '.join(sys.argv[1:])}".rstrip()
        + "\n\n"
        + "\n".join(lines)
        + "\n"
    )
    write_results(RESULTS.stem, report)
    print(report)


if __name__ == "__main__":
    main()
