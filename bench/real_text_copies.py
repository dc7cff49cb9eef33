"""A large index from copies of a real-text build's rows: search speed at scale without the long build.

    .venv/bin/python bench/real_text_copies.py [--pages 10000] [--copies 10]

A real `mkdocs build` of 100,000 pages (bench/real_text_build.py) takes over an hour of CPU on a busy 2-CPU
machine. Search speed depends on how many sections hold each word, which copies keep: this script writes
bench/out/real-text-copies-<pages x copies>/index.sqlite with the package's schema (index/schema.py) and
COPIES copies of the documents, sections and front matter values of the --pages build's index (each copy's
pages renamed `<name>-<copy>.md`, in the same folders), so that every word is in COPIES times as many
sections. The FTS5 table is filled by the schema's own triggers, as a build fills it; the build facts (`info`) are
the source's, but for the section count, which is the copies'. Not copied: page sources, links and nav
(search, count and aggregate do not read them).

Then: `.venv/bin/python bench/real_text_search.py --index bench/out/real-text-copies-100000/index.sqlite`.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sqlite3
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

import real_text_site  # noqa: E402
from mkdocs_vault_mcp.index.schema import create_schema  # noqa: E402


def copied_path(column: str, copy: int) -> str:
    """SQL for `column` (a page's path, `….md`) with the copy's number before `.md`."""
    return f"substr({column}, 1, length({column}) - 3) || '-{copy}.md'"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10_000, help="the real build to copy (default 10000)")
    parser.add_argument("--copies", type=int, default=10)
    args = parser.parse_args()
    command_line = "python " + " ".join(shlex.quote(a) for a in [os.path.relpath(__file__, REPO), *sys.argv[1:]])
    source = real_text_site.default_out(args.pages) / "site-vault" / "vault-mcp" / "index.sqlite"
    if not source.exists():
        sys.exit(
            f"real_text_copies: no index at {source}; run bench/real_text_build.py --pages {args.pages}"
            " --configs vault first"
        )
    out = BENCH / "out" / f"real-text-copies-{args.pages * args.copies}"
    out.mkdir(parents=True, exist_ok=True)
    target = out / "index.sqlite"
    target.unlink(missing_ok=True)
    start = time.perf_counter()
    conn = sqlite3.connect(target, isolation_level=None)
    conn.execute("PRAGMA journal_mode = OFF")  # a throw-away file, written once
    conn.execute("PRAGMA synchronous = OFF")
    create_schema(conn)
    conn.execute("ATTACH DATABASE ? AS source", [f"{source.resolve().as_uri()}?mode=ro"])
    documents = conn.execute("SELECT max(id) FROM source.documents").fetchone()[0]
    sections = conn.execute("SELECT max(id) FROM source.sections").fetchone()[0]
    conn.execute("BEGIN")
    conn.execute("INSERT INTO info SELECT * FROM source.info")
    for copy in range(args.copies):
        print(f"copy {copy + 1} of {args.copies} ...", flush=True)
        conn.execute(
            "INSERT INTO documents (id, path, folder, url, title, summary, meta, headings, modified, modified_source,"
            f" fingerprint, language, fallback_of) SELECT id + ?, {copied_path('path', copy)}, folder,"
            f" substr(url, 1, length(url) - 1) || '-{copy}/', title, summary, meta, headings, modified,"
            " modified_source, fingerprint, language, fallback_of FROM source.documents",
            [copy * documents],
        )
        conn.execute(
            "INSERT INTO sections (id, document_id, position, level, anchor, heading, start, path, title, headings,"
            f" summary, body) SELECT id + ?, document_id + ?, position, level, anchor, heading, start,"
            f" {copied_path('path', copy)}, title, headings, summary, body FROM source.sections",
            [copy * sections, copy * documents],
        )
        conn.execute(
            "INSERT INTO field_values (field, value, document_id) SELECT field, value, document_id + ?"
            " FROM source.field_values",
            [copy * documents],
        )
    # Search reads the count (its 40%-of-sections cut-off for common words); the copied one is the source's.
    conn.execute("UPDATE info SET value = (SELECT count(*) FROM sections) WHERE key = 'section_count'")
    conn.execute("COMMIT")
    conn.execute("DETACH DATABASE source")
    conn.close()
    seconds = time.perf_counter() - start
    conn = sqlite3.connect(target)
    counts = [conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("documents", "sections")]
    conn.close()
    print(
        f"command: {command_line}\nwrote {os.path.relpath(target, REPO)}: {counts[0]:,} documents, {counts[1]:,}"
        f" sections, {target.stat().st_size / 1e6:.0f} MB in {seconds:.0f} s"
    )


if __name__ == "__main__":
    main()
