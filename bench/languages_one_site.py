"""The FastAPI docs' 13 languages built as one site: does each language's word find that language's page?

    .venv/bin/python bench/languages_one_site.py [--rebuild]

Builds (or reuses) bench/out/fastapi-all/: all 13 folders of ../shared/corpora/fastapi-docs/<lang>/docs
copied under one docs_dir (`docs/<lang>/`, as bench/build_overhead.py lays them out; the config of
bench/search_quality.py; about a minute on 2 CPUs). For each language, one query written from the running
text of that language's `tutorial/cors.md` (chosen before any run). Checks:

- in its folder: `search(query, folder=<lang>)` ranks `<lang>/tutorial/cors.md` first (the acceptance);
- on the whole site, without a filter: the first result is in the query's own language folder.

Writes the table to bench/results/quality/languages_one_site.json.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "bench"))

from mkdocs_vault_mcp.index.filters import Filters  # noqa: E402
from mkdocs_vault_mcp.index.publish import open_read_only  # noqa: E402
from mkdocs_vault_mcp.index.search.answer import search  # noqa: E402
from report import write_results  # noqa: E402
from search_quality import CORPORA, build_fastapi_site  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "quality" / "languages_one_site.json"
# A word (or two) from the running text of each language's tutorial/cors.md: "combination of protocol ...".
QUERIES = {
    "en": "combination protocol",
    "de": "Kombination Protokoll",
    "es": "combinación protocolo",
    "fr": "combinaison protocole",
    "pt": "combinação protocolo",
    "ru": "совокупность протокола",
    "uk": "комбінацією протоколу",
    "tr": "birleşimidir",
    "hi": "स्थितियों",
    "ja": "オリジン",
    "ko": "출처",
    "zh": "跨域资源共享",
    "zh-hant": "連接埠",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rebuild", action="store_true", help="build the site even when a cached build fits")
    args = parser.parse_args()
    languages = sorted(path.parent.name for path in CORPORA.glob("*/docs"))
    assert sorted(QUERIES) == languages, languages
    site = build_fastapi_site(languages, rebuild=args.rebuild)
    conn = open_read_only(site / "vault-mcp" / "index.sqlite")
    pages = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    lines = [f"{'language':<8} {'query':<24} {'in folder: rank of cors.md':>26}  {'whole site: first result':<40}"]
    first_in_folder = own_language_first = 0
    for language, query in QUERIES.items():
        wanted = f"{language}/tutorial/cors.md"
        found = [hit["path"] for hit in search(conn, query, Filters(folder=language), limit=10)]
        rank = found.index(wanted) + 1 if wanted in found else None
        first_in_folder += rank == 1
        anywhere = [hit["path"] for hit in search(conn, query, Filters(), limit=10)]
        top = anywhere[0] if anywhere else "(nothing)"
        own_language_first += top.startswith(language + "/")
        lines.append(f"{language:<8} {query:<24} {rank or 'not found'!s:>26}  {top:<40}")
    report = (
        f"13 languages as one site: {pages} pages.\n"
        f"command: .venv/bin/python bench/languages_one_site.py {' '.join(sys.argv[1:])}".rstrip()
        + "\n\n"
        + "\n".join(lines)
        + f"\n\nin its folder, the language's page first: {first_in_folder} of {len(QUERIES)}"
        + f"\nwhole site, first result in the query's language: {own_language_first} of {len(QUERIES)}\n"
    )
    write_results(RESULTS.stem, report)
    print(report)


if __name__ == "__main__":
    main()
