"""Search, count and aggregate speed on the real-text site's index, in-process.

    .venv/bin/python bench/real_text_search.py [--pages 100000] [--queries 100] [--rounds 3] [--words 25]
                                               [--seed 7]

Reads the index that `bench/real_text_build.py` left (a real `mkdocs build` of bench/real_text_site.py's site:
OUT/site-vault/vault-mcp/index.sqlite) and times the query functions on one `open_read_only` connection.
Baseline, in the same rounds on the same connection: `SELECT 1` (a round trip into SQLite and back).

Queries, drawn from the corpora's English pages (fastapi-docs/en and material-docs) with --seed, like the
judged ones of bench/search_queries.json:

- keyword: 1-3 words of a real section heading, stop words left out (`custom operation ids`);
- code: a real inline code name that looks like code (`include_in_schema=False`, `APIRouter`, `Depends`);
- question: a real heading asked as a question (`how do I create a typescript sdk?`).

Each query is run once untimed, then --rounds times round robin with the others. Target: p95 <= 50 ms per kind.

Single words: the --words indexed terms (fts5vocab) that the most sections hold, each searched alone
--rounds times; target: none over 200 ms (its slowest call). count_documents and aggregate_documents run
as bench/large_site.py runs them (the largest folder, the commonest, a middling and the rarest tag).
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import random
import re
import shlex
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

import real_text_site  # noqa: E402
from large_site import filter_cases, percentile, pick_filters  # noqa: E402
from mkdocs_vault_mcp.index.filters import Filters  # noqa: E402
from mkdocs_vault_mcp.index.publish import open_read_only  # noqa: E402
from mkdocs_vault_mcp.index.search.answer import search  # noqa: E402
from mkdocs_vault_mcp.index.search.counts import forget_counts  # noqa: E402
from mkdocs_vault_mcp.index.search.plan import CODE_HINT as _CODE_HINT  # noqa: E402
from mkdocs_vault_mcp.index.search.plan import STOP_WORDS  # noqa: E402
from report import table, write_results  # noqa: E402

QUESTION_FORMS = (
    "how do I use {}?",
    "how can I set up {}?",
    "what is {}?",
    "how does {} work?",
    "what should I know about {}?",
)
_CODE_SPAN = re.compile(r"`([^`\n]{3,40})`")
# A code name as an agent would paste it: an identifier, dotted or called, perhaps with `=value`; no paths, no
# file names, no bare numbers.
_CODE_NAME = re.compile(r"@?[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*(?:\(\))?(?:=[\w\"']+)?")
_CAPITALIZED = re.compile(r"[A-Z][a-z]{3,}")
_FILE_NAME = re.compile(r"\.(md|py|ya?ml|html|txt|json|toml|js|css|cfg|ini|png|svg)$")
_WORD = re.compile(r"[^\W\d_]+")


def english_chunks() -> list[tuple[str, str]]:
    pool = real_text_site.read_pool()
    return [chunk for language in ("en", "material") for page in pool[language] for chunk in page.chunks]


def heading_words(heading: str) -> list[str]:
    plain = heading.replace("`", " ")
    return [word.casefold() for word in _WORD.findall(plain) if word.casefold() not in STOP_WORDS and len(word) > 1]


def draw_queries(count: int, seed: int) -> dict[str, list[str]]:
    """Keyword, code and question queries from the real English headings and code spans, deterministic."""
    rng = random.Random(seed)
    chunks = english_chunks()
    headings = sorted({heading for heading, _ in chunks if len(heading_words(heading)) >= 1})
    phrases = sorted(
        {
            re.sub(r"[`*]", "", heading).strip().lower()
            for heading in headings
            if len(heading_words(heading)) >= 2 and len(heading.split()) <= 8
        }
    )
    names = set()
    for _, text in chunks:
        for span in _CODE_SPAN.findall(text):
            looks_like_code = _CODE_HINT.search(span) or _CAPITALIZED.fullmatch(span)
            if _CODE_NAME.fullmatch(span) and not _FILE_NAME.search(span) and looks_like_code:
                names.add(span)
    keywords = []
    for heading in rng.sample(headings, count):
        words = heading_words(heading)
        start = rng.randrange(len(words))
        keywords.append(" ".join(words[start : start + rng.randint(1, 3)]))
    questions = [rng.choice(QUESTION_FORMS).format(phrase) for phrase in rng.sample(phrases, count)]
    return {"keyword": keywords, "code": rng.sample(sorted(names), count), "question": questions}


def commonest_terms(conn: sqlite3.Connection, count: int) -> list[tuple[str, int]]:
    """The indexed terms (stems) that the most sections hold, with how many; words of letters only."""
    rows = conn.execute("SELECT term, doc FROM sections_vocab ORDER BY doc DESC LIMIT ?", [count * 4]).fetchall()
    return list(dict.fromkeys((term, sections) for term, sections in rows if term.isalpha()))[:count]


def timed(run: Callable[[], object]) -> float:
    start = time.perf_counter_ns()
    run()
    return (time.perf_counter_ns() - start) / 1e6


def timed_cpu(run: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU milliseconds of this thread: on a machine shared with other work the CPU time is what the
    query costs, and the wall time what it costs under that load."""
    start, cpu = time.perf_counter_ns(), time.thread_time_ns()
    run()
    return (time.perf_counter_ns() - start) / 1e6, (time.thread_time_ns() - cpu) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000, help="the site's pages (default 100000)")
    parser.add_argument("--queries", type=int, default=100, help="queries of each kind (default 100)")
    parser.add_argument("--rounds", type=int, default=3, help="timed calls of each query (default 3)")
    parser.add_argument("--words", type=int, default=25, help="commonest indexed words searched alone (default 25)")
    parser.add_argument("--calls", type=int, default=15, help="timed calls of each count/aggregate case")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--cold",
        action="store_true",
        help="forget search's kept match counts before each timed"
        " call (the first search of each word on a fresh index version)",
    )
    parser.add_argument(
        "--index", type=Path, help="another index to read (bench/real_text_copies.py's); default: the --pages build's"
    )
    args = parser.parse_args()
    command_line = "python " + " ".join(shlex.quote(a) for a in [os.path.relpath(__file__, REPO), *sys.argv[1:]])
    index = args.index or real_text_site.default_out(args.pages) / "site-vault" / "vault-mcp" / "index.sqlite"
    if not index.exists():
        sys.exit(
            f"real_text_search: no index at {index}; run bench/real_text_build.py --pages {args.pages}"
            " --configs vault first"
        )
    load_at_start = os.getloadavg()[0]
    queries = draw_queries(args.queries, args.seed)
    conn = open_read_only(index)
    documents, sections = (conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("documents", "sections"))
    print(f"{documents} documents, {sections} sections; finding the commonest terms ...", flush=True)
    words = commonest_terms(conn, args.words)
    every = [(kind, query) for kind, listed in queries.items() for query in listed]
    every += [("single word", term) for term, _ in words]
    no_filters = Filters()
    for _, query in every:  # warm-up: page cache, prepared statements
        search(conn, query, no_filters)
    baseline: list[float] = []
    samples: dict[tuple[str, str], list[float]] = {item: [] for item in every}
    cpu_samples: dict[tuple[str, str], list[float]] = {item: [] for item in every}
    print(f"timing {len(every)} queries x {args.rounds} rounds ...", flush=True)
    for _ in range(args.rounds):
        for item in every:
            baseline.append(timed(lambda: conn.execute("SELECT 1").fetchone()))
            if args.cold:
                forget_counts()
            wall, cpu = timed_cpu(functools.partial(search, conn, item[1], no_filters))
            samples[item].append(wall)
            cpu_samples[item].append(cpu)
    base = statistics.median(baseline)

    rows = [
        [
            "case",
            "n",
            "p50 ms",
            "p95 ms",
            "max ms",
            "p50/baseline",
            "p95/baseline",
            "CPU p50 ms",
            "CPU p95 ms",
            "target",
            "verdict (wall / CPU)",
        ]
    ]
    rows.append(
        [
            "SELECT 1 (baseline)",
            str(len(baseline)),
            f"{base:.4f}",
            f"{percentile(baseline, 0.95):.4f}",
            f"{max(baseline):.3f}",
            "1",
            "1",
            "-",
            "-",
            "-",
            "",
        ]
    )
    for kind in queries:
        values = [v for (k, _), listed in samples.items() if k == kind for v in listed]
        cpus = [v for (k, _), listed in cpu_samples.items() if k == kind for v in listed]
        p95, cpu95 = percentile(values, 0.95), percentile(cpus, 0.95)
        rows.append(
            [
                f"search: {kind} queries",
                str(len(values)),
                f"{statistics.median(values):.2f}",
                f"{p95:.2f}",
                f"{max(values):.1f}",
                f"{statistics.median(values) / base:,.0f}",
                f"{p95 / base:,.0f}",
                f"{statistics.median(cpus):.2f}",
                f"{cpu95:.2f}",
                "p95 <= 50 ms",
                f"{'ok' if p95 <= 50 else 'MISSED'} / {'ok' if cpu95 <= 50 else 'MISSED'}",
            ]
        )
    counts = dict(words)
    worst = max((item for item in every if item[0] == "single word"), key=lambda item: max(samples[item]))
    worst_cpu = max((item for item in every if item[0] == "single word"), key=lambda item: max(cpu_samples[item]))
    word_rows = [
        [
            "single word (sections holding it)",
            "p50 ms",
            "max ms",
            "max/baseline",
            "CPU max ms",
            "target",
            "verdict (wall / CPU)",
        ]
    ]
    for term, held in words:
        values, cpus = samples[("single word", term)], cpu_samples[("single word", term)]
        word_rows.append(
            [
                f"{term!r} ({held:,})",
                f"{statistics.median(values):.1f}",
                f"{max(values):.1f}",
                f"{max(values) / base:,.0f}",
                f"{max(cpus):.1f}",
                "<= 200 ms",
                f"{'ok' if max(values) <= 200 else 'MISSED'} / {'ok' if max(cpus) <= 200 else 'MISSED'}",
            ]
        )
    slowest = {
        kind: sorted(((max(v), q) for (k, q), v in samples.items() if k == kind), reverse=True)[:3] for kind in queries
    }

    workload = pick_filters(conn)
    cases = filter_cases(workload)
    for case in cases:
        case.run(conn)
    filter_rows = [
        [
            "count / aggregate (large_site.py's cases)",
            "p50 ms",
            "p95 ms",
            "p50/baseline",
            "CPU p50 ms",
            "target",
            "verdict (wall / CPU)",
        ]
    ]
    case_samples: dict[str, list[tuple[float, float]]] = {case.label: [] for case in cases}
    for _ in range(args.calls):
        for case in cases:
            case_samples[case.label].append(timed_cpu(functools.partial(case.run, conn)))
    for case in cases:
        values = [wall for wall, _ in case_samples[case.label]]
        p50, cpu50 = statistics.median(values), statistics.median(cpu for _, cpu in case_samples[case.label])
        filter_rows.append(
            [
                case.label,
                f"{p50:.2f}",
                f"{percentile(values, 0.95):.2f}",
                f"{p50 / base:,.0f}",
                f"{cpu50:.2f}",
                f"p50 <= {case.target_ms:g} ms" if case.target_ms else "-",
                f"{'ok' if p50 <= case.target_ms else 'MISSED'} / {'ok' if cpu50 <= case.target_ms else 'MISSED'}"
                if case.target_ms
                else "",
            ]
        )
    conn.close()

    examples = {kind: ", ".join(repr(q) for q in listed[:4]) for kind, listed in queries.items()}
    lines = [
        f"command: {command_line}",
        f"index: {os.path.relpath(index, REPO)} ({documents:,} documents, {sections:,} sections; "
        + (
            "copies of a real build's rows by bench/real_text_copies.py)"
            if args.index
            else "a real `mkdocs build` of bench/real_text_site.py's site by bench/real_text_build.py)"
        ),
        f"machine: Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, {os.cpu_count()} CPUs;"
        f" load average {load_at_start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end (above {os.cpu_count()},"
        " the wall times carry other work's waits: read the CPU columns, this thread's CPU time per call)",
        f"queries: {args.queries} of each kind drawn with seed {args.seed} from the English headings and code spans;"
        f" {args.rounds} timed calls each, round robin, after one untimed; search() with no filters, limit 10; "
        + (
            "search's kept match counts forgotten before each timed call (--cold)"
            if args.cold
            else "search's match counts kept from call to call, as a server keeps them (warm; --cold forgets them)"
        ),
        *(f"  {kind}: {text}, ..." for kind, text in examples.items()),
        "",
        table(rows),
        "",
        *(
            f"slowest {kind}: " + ", ".join(f"{q!r} {ms:.0f} ms" for ms, q in listed)
            for kind, listed in slowest.items()
        ),
        "",
        f"the {len(words)} indexed terms that the most sections hold (stems, from fts5vocab), each searched alone;"
        f" worst: {worst[1]!r} ({counts[worst[1]]:,} sections) {max(samples[worst]):.1f} ms wall;"
        f" by CPU {worst_cpu[1]!r} ({counts[worst_cpu[1]]:,} sections) {max(cpu_samples[worst_cpu]):.1f} ms",
        table(word_rows),
        "",
        table(filter_rows),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    write_results("real_text_search_cold" if args.cold else "real_text_search", text)


if __name__ == "__main__":
    main()
