"""Time what the snapshot and the stats page cost a build of the FastAPI corpus (at most 0.5 s).

All 13 languages are copied once into one docs_dir (bench/out/stats-fastapi/docs/<lang>/), built with the
`mkdocs` theme and the search plugin (without it the theme's own script fails on every page) in this
process, several times. Counted, per build: index_stats and build_snapshot (read by the writer after its
commit), writing snapshot.json,
adding the page and stylesheet (on_files) and the nav entry, the plugin's on_page_context for every page
(the stats page's render, and the identity check on every other page), and MkDocs
rendering the stats page through the theme and writing it. Optionally screenshots the page in Chromium.

    .venv/bin/python bench/stats_page_time.py [--runs 5] [--screenshot bench/out/stats-fastapi.png]
"""

from __future__ import annotations

import argparse
import functools
import os
import shlex
import shutil
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import mkdocs.commands.build as mkdocs_build
from mkdocs.config import load_config

import mkdocs_vault_mcp.plugin as plugin
from mkdocs_vault_mcp.build_steps import incremental, stats_page
from mkdocs_vault_mcp.index.write import build_summary as answers
from report import results_from_output  # bench/ is on sys.path when a script runs

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
CORPUS = REPO.parent / "shared" / "corpora" / "fastapi-docs"
OUT = BENCH / "out" / "stats-fastapi"
TARGET_SECONDS = 0.5

spent: dict[str, float] = defaultdict(float)


def timed(name: str, function, only=None):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if only is not None and not only(*args, **kwargs):
            return function(*args, **kwargs)
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[name] += time.perf_counter() - start

    return wrapper


def instrument() -> None:
    # The writer's read_build_summary builds the snapshot, by the names in index/write/build_summary.py. The writer is
    # made a thread here, so that what it reads after its commit is timed in this process.
    incremental.worth_a_process = lambda pages_to_write: False
    answers.build_snapshot = timed("build_snapshot", answers.build_snapshot)
    plugin.write_snapshot = timed("write_snapshot", plugin.write_snapshot)
    stats_page.add_files = timed("add_files", stats_page.add_files)
    stats_page.add_to_nav = timed("add_to_nav", stats_page.add_to_nav)
    plugin.VaultMcpPlugin.on_page_context = timed(  # type: ignore[method-assign]
        "on_page_context (all pages)", plugin.VaultMcpPlugin.on_page_context
    )
    answers.index_stats = timed("index_stats", answers.index_stats)  # with build_snapshot, by the writer
    # A part of on_page_context, reported apart (not added to the total a second time).
    stats_page.render = timed("part: render", stats_page.render)
    mkdocs_build._build_page = timed(
        "theme render + write of the stats page",
        mkdocs_build._build_page,
        only=lambda page, *args, **kwargs: page.file.generated_by is not None and page.file.src_uri == "stats/index.md",
    )


def copy_corpus() -> int:
    docs, done = OUT / "docs", OUT / ".docs-complete"
    if not done.exists():
        shutil.rmtree(docs, ignore_errors=True)
        for language in sorted(p.name for p in CORPUS.iterdir() if (p / "docs").is_dir()):
            shutil.copytree(CORPUS / language / "docs", docs / language)
        done.write_text("")
    return sum(1 for _ in docs.rglob("*.md"))


def build_once() -> tuple[dict[str, float], float]:
    spent.clear()
    config = load_config(config_file=str(OUT / "mkdocs.yml"))
    config.plugins.on_startup(command="build", dirty=False)
    start = time.perf_counter()
    try:
        mkdocs_build.build(config)
    finally:
        config.plugins.on_shutdown()
    return dict(spent), time.perf_counter() - start


def screenshot(destination: Path) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    from helpers.chromium import Browser, find_chromium, serve_directory

    browser = Browser(find_chromium())
    try:
        with serve_directory(OUT / "site") as base:
            browser.open(base + "stats/")
            errors = browser.console_errors()
            browser.screenshot(destination)
            print(f"screenshot: {os.path.relpath(destination, REPO)} (console errors: {errors or 'none'})")
    finally:
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--screenshot", type=Path, help="write a PNG of the built stats page (needs Chromium)")
    args = parser.parse_args()
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    OUT.mkdir(parents=True, exist_ok=True)
    pages = copy_corpus()
    (OUT / "mkdocs.yml").write_text(
        "site_name: FastAPI corpus (13 languages)\ndocs_dir: docs\nsite_dir: site\ntheme:\n  name: mkdocs\n"
        "  highlightjs: false\nplugins:\n  - search\n  - vault-mcp\n"
    )
    instrument()
    build_once()  # untimed: bytecode, file cache, the plugin's working index
    totals, builds = [], []
    for run in range(1, args.runs + 1):
        parts, seconds = build_once()
        totals.append(sum(value for name, value in parts.items() if not name.startswith("part: ")))
        builds.append(seconds)
        detail = ", ".join(f"{name} {value * 1000:.1f} ms" for name, value in sorted(parts.items()))
        print(f"run {run}: snapshot + stats page {totals[-1] * 1000:.1f} ms of a {seconds:.2f} s build ({detail})")
    worst = max(totals)
    command = [".venv/bin/python", os.path.relpath(__file__, REPO), *sys.argv[1:]]
    print(
        f"\ncommand: {' '.join(shlex.quote(a) for a in command)}\n"
        f"corpus: {pages} pages, 13 language folders in one docs_dir, theme mkdocs\n"
        f"snapshot + stats page: median {statistics.median(totals) * 1000:.1f} ms, worst {worst * 1000:.1f} ms "
        f"(builds: median {statistics.median(builds):.2f} s) -> "
        f"{'meets' if worst <= TARGET_SECONDS else 'MISSES'} the target of at most {TARGET_SECONDS} s"
    )
    if args.screenshot:
        screenshot(args.screenshot)


if __name__ == "__main__":
    with results_from_output("stats_page_time"):
        main()
