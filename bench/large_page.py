"""What one very large page (30 MB of Markdown) costs a real `mkdocs build` with vault-mcp: peak memory, time, index size.

    .venv/bin/python bench/run.py large_page [--against DIR] [--rounds 2] [--megabytes 30] [--seed 7]
                                             [--plain [--headings 500]] [--name NAME]

The site (bench/out/large-page/, written once per size and seed) holds three small pages and `big.md`: the
English FastAPI docs (../shared/corpora/fastapi-docs/en/docs, read in place) drawn in a seeded order and repeated
until the page reaches `--megabytes` MB, every heading numbered (so its id is unique) and demoted under `##`,
`{ #id }` attribute lists and snippet includes dropped, relative links turned into their text. Theme `mkdocs`.
`--plain` writes instead a page of plain paragraphs (the corpus's words in a seeded order, 100 a paragraph) under
`--headings` level-2 headings: what MkDocs itself holds of such a page is small, so what the plugin adds shows.
`--name` writes the results under another name.

Each round builds, in this order, this checkout (`A`, vault-mcp with its defaults), `--against DIR`'s checkout
(`B`, another commit of this project) and the bare site (no plugin, the baseline, with A's venv), each with the
checkout's `DIR/.venv/bin/mkdocs build -f CONFIG` (this Python's venv when DIR has none) and DIR first on
`PYTHONPATH` (its package, whichever venv installed one), cold (site_dir and `.cache` removed first), a fresh process whose own resource usage `os.wait4` returns. Reported per build,
median and range over the rounds: the maximum resident set (wait4's ru_maxrss: the largest single process of
the build, as /usr/bin/time -v gives it), the peak of the whole process tree's summed RSS (sampled every 50 ms:
a writer process counts too), wall and CPU seconds (user + system, children included), and the size of the
built site's `vault-mcp/index.sqlite` and of the working index under `.cache/plugin/vault-mcp/`. Last, each
index's tables and indexes by size (SQLite's `dbstat`), from the last round.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
OUT = BENCH / "out" / "large-page"
CORPUS = REPO.parent / "shared" / "corpora" / "fastapi-docs" / "en" / "docs"
sys.path.insert(0, str(BENCH))

from report import describe, table, tree_rss_kb, write_results  # noqa: E402

SMALL_PAGES = {
    "index.md": "# Home\n\nA site with one very large page, [Big](big.md).\n",
    "about.md": "# About\n\nWhat this site is for: measuring one large page.\n\n## Why\n\nTo see what it costs.\n",
    "notes.md": "# Notes\n\n## First\n\nA short section.\n\n## Second\n\nAnother with `inline code`.\n",
}
_ATTRS = re.compile(r"\s*\{\s*#[^}]*\}\s*$")
_INCLUDE = re.compile(r"^\{\*.*\*\}\s*$", re.M)
_RELATIVE_LINK = re.compile(r"!?\[([^\]]*)\]\((?!https?:)[^)]*\)")
_FENCE = re.compile(r"^\s*(```|~~~)")
# Python-Markdown's fenced_code copies the whole page once per fence (quadratic): one corpus page in
# FENCED_EVERY keeps its fences, the others' code becomes indented blocks, so the build measures the plugin.
FENCED_EVERY = 100
SAMPLE_SECONDS = 0.05  # the process tree's RSS is read this often


def corpus_pages() -> list[tuple[str, str]]:
    """Every English page of the corpus: its path and its Markdown without front matter, includes or
    attribute lists, its relative links as their text."""
    pages = []
    for path in sorted(CORPUS.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        if text.startswith("---\n"):
            text = text.split("\n---\n", 1)[-1]
        text = _RELATIVE_LINK.sub(r"\1", _INCLUDE.sub("", text))
        pages.append((str(path.relative_to(CORPUS)), text))
    return pages


def numbered(text: str, number: int) -> str:
    """A corpus page's headings numbered `number.k` and demoted one level (its H1 becomes `##`), outside code
    fences: numbered, every heading id of the large page is unique, as MkDocs' toc makes ids in linear time.
    Its code fences become indented code blocks unless `number` is a multiple of FENCED_EVERY."""
    lines, fenced, count = [], False, 0
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            if number % FENCED_EVERY:
                lines.append("")
                continue
        elif fenced and number % FENCED_EVERY:
            line = "    " + line
        elif not fenced and line.startswith("#"):
            hashes, _, title = line.partition(" ")
            if hashes.strip("#") == "":
                count += 1
                title = _ATTRS.sub("", title)
                line = f"{'#' * min(len(hashes) + 1, 6)} {number}.{count} {title}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def plain_page(big: TextIO, target: int, headings: int, rng: random.Random) -> None:
    """Paragraphs of the corpus's words, 100 a paragraph, under `headings` level-2 headings, to `target` characters."""
    words = sorted({word for _, text in corpus_pages() for word in re.findall(r"[A-Za-z]{2,}", text)})
    size, per_heading = 0, target // headings
    for number in range(1, headings + 1):
        size += big.write(f"## Part {number}\n\n")
        while size < per_heading * number:
            size += big.write(" ".join(rng.choices(words, k=100)) + ".\n\n")


def write_site(megabytes: float, seed: int, plain_headings: int | None = None) -> Path:
    """OUT/docs (the small pages and big.md), OUT/mkdocs.yml (vault-mcp) and OUT/mkdocs-bare.yml; kept when
    OUT/site.json says the same size, seed and kind. `plain_headings`: a page of plain paragraphs under so many
    headings, else the corpus's pages repeated."""
    mark = OUT / "site.json"
    wanted = {"megabytes": megabytes, "seed": seed}
    if plain_headings is not None:
        wanted["headings"] = plain_headings
    if mark.is_file() and json.loads(mark.read_text()) == wanted:
        return OUT
    shutil.rmtree(OUT, ignore_errors=True)
    docs = OUT / "docs"
    docs.mkdir(parents=True)
    for name, text in SMALL_PAGES.items():
        (docs / name).write_text(text, encoding="utf-8")
    pages, rng = corpus_pages(), random.Random(seed)
    target, size, number = int(megabytes * 1_000_000), 0, 0
    with (docs / "big.md").open("w", encoding="utf-8") as big:
        big.write("# Big\n\nOne page of the FastAPI docs, repeated.\n\n")
        if plain_headings is not None:
            plain_page(big, target, plain_headings, rng)
        while plain_headings is None and size < target:
            for _, text in rng.sample(pages, len(pages)):
                number += 1
                size += big.write(numbered(text, number) + "\n")
                if size >= target:
                    break
    common = "site_name: Large page\ntheme:\n  name: mkdocs\n"
    (OUT / "mkdocs.yml").write_text(common + "plugins:\n  - vault-mcp\n", encoding="utf-8")
    (OUT / "mkdocs-bare.yml").write_text(common + "plugins: []\n", encoding="utf-8")
    mark.write_text(json.dumps(wanted))
    return OUT


def du_mb(path: Path) -> float:
    """Megabytes of a file, or of the files under a folder (0 if missing)."""
    if path.is_file():
        return path.stat().st_size / 1e6
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6 if path.is_dir() else 0.0


def build(site: Path, checkout: Path, config: str) -> dict:
    """One cold `mkdocs build -f CONFIG` of SITE with CHECKOUT's venv: its measures."""
    shutil.rmtree(site / "site", ignore_errors=True)
    shutil.rmtree(site / ".cache", ignore_errors=True)
    env = os.environ | {"PYTHONPATH": str(checkout), "NO_MKDOCS_2_WARNING": "1"}
    venv = checkout / ".venv" / "bin" if (checkout / ".venv").is_dir() else Path(sys.executable).parent
    command = [str(venv / "mkdocs"), "build", "-q", "-f", config]
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=site, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak, done = [0], threading.Event()

    def sample() -> None:
        while not done.wait(SAMPLE_SECONDS):
            peak[0] = max(peak[0], sum(tree_rss_kb(process.pid)))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stderr = process.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit(f"large_page: {' '.join(command)} in {site} failed:\n{stderr.decode()[-3000:]}")
    return {
        "rss_mb": usage.ru_maxrss / 1024,
        "tree_mb": peak[0] / 1024,
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "index_mb": du_mb(site / "site" / "vault-mcp" / "index.sqlite"),
        "cache_mb": du_mb(site / ".cache" / "plugin" / "vault-mcp"),
    }


def table_sizes(index: Path) -> dict[str, float]:
    """Megabytes of each table and index of an SQLite file (`dbstat`)."""
    if not index.is_file():
        return {}
    connection = sqlite3.connect(f"{index.resolve().as_uri()}?mode=ro", uri=True)
    try:
        rows = connection.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
    finally:
        connection.close()
    return {name: size / 1e6 for name, size in rows}


def spread(values: list[float], digits: int) -> str:
    """The median and the range of the rounds' values."""
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def summary(builds: dict[str, list[dict]]) -> str:
    """One row per build: each measure's median and range over the rounds, and RSS against the bare build."""
    header = ["build", "max RSS MB", "tree RSS MB", "over bare MB", "wall s", "CPU s", "index MB", "cache MB"]
    rows = [header]
    bare = statistics.median(record["rss_mb"] for record in builds["bare"])
    for label, records in builds.items():
        column = {key: [record[key] for record in records] for key in records[0]}
        over = statistics.median(column["rss_mb"]) - bare
        rows.append(
            [
                label,
                spread(column["rss_mb"], 0),
                spread(column["tree_mb"], 0),
                f"{over:+.0f}" if label != "bare" else "-",
                spread(column["wall_s"], 1),
                spread(column["cpu_s"], 1),
                spread(column["index_mb"], 1),
                spread(column["cache_mb"], 1),
            ]
        )
    return table(rows)


def sizes_table(sizes: dict[str, dict[str, float]]) -> str:
    """Each table or index of the built index, in MB, for every checkout, the largest first."""
    names = sorted(
        {name for found in sizes.values() for name in found}, key=lambda n: -max(s.get(n, 0) for s in sizes.values())
    )
    rows = [["table or index (dbstat)", *sizes]]
    rows += [
        [name, *(f"{found.get(name, 0):.2f}" for found in sizes.values())]
        for name in names
        if max(s.get(name, 0) for s in sizes.values()) >= 0.01
    ]
    return table(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another checkout of this project, with its own .venv")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--megabytes", type=float, default=30.0, help="size of the large page (default 30)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--plain", action="store_true", help="a page of plain paragraphs under --headings headings")
    parser.add_argument("--headings", type=int, default=500, help="with --plain: how many (default 500)")
    parser.add_argument("--name", default="large_page", help="the results' name (default large_page)")
    args = parser.parse_args()
    site = write_site(args.megabytes, args.seed, args.headings if args.plain else None)
    checkouts = {"A (this checkout)": (REPO, "mkdocs.yml")}
    if args.against:
        checkouts[f"B ({args.against.name})"] = (args.against.resolve(), "mkdocs.yml")
    checkouts["bare"] = (REPO, "mkdocs-bare.yml")
    builds: dict[str, list[dict]] = {label: [] for label in checkouts}
    sizes: dict[str, dict[str, float]] = {}
    for round_number in range(1, args.rounds + 1):
        for label, (checkout, config) in checkouts.items():
            record = build(site, checkout, config)
            builds[label].append(record)
            if label != "bare":
                sizes[label.split()[0]] = table_sizes(site / "site" / "vault-mcp" / "index.sqlite")
            print(f"round {round_number} {label}: {json.dumps(record)}", flush=True)
    page_mb = (site / "docs" / "big.md").stat().st_size / 1e6
    lines = [
        f"One page of {page_mb:.1f} MB of Markdown (seed {args.seed}"
        + (f", plain paragraphs under {args.headings} headings" if args.plain else ", the corpus's pages repeated")
        + "), and three small pages, theme `mkdocs`;"
        f" {args.rounds} rounds of cold builds, A, B, bare in turn; median (range) over the rounds.",
        f"A: this checkout, {describe(REPO)}."
        + (f" B: {args.against.name}, {describe(args.against)}." if args.against else ""),
        "max RSS = the build's largest single process (wait4's ru_maxrss, as /usr/bin/time -v);"
        " tree RSS = the peak of the build's processes' summed RSS, sampled every 50 ms;"
        " index = site/vault-mcp/index.sqlite; cache = .cache/plugin/vault-mcp/.",
        "",
        summary(builds),
        "",
        sizes_table(sizes),
    ]
    text = "\n".join(lines)
    print(text)
    write_results(args.name, text)


if __name__ == "__main__":
    main()
