"""The plugin's own events at 10,000 and 100,000 pages of real text: pages per second and memory.

    .venv/bin/python bench/plugin_at_scale.py [--pages 10000,100000] [--seed 7] [--name plugin_at_scale]

MkDocs renders about 20 pages a second here, so a real `mkdocs build` of 100,000 pages takes more than an hour
(bench/real_text_build.py measures real builds of 10,000 and 30,000 pages). This script runs everything else of
a build for real: MkDocs loads the config, finds the files, builds the nav and reads each page's Markdown and
front matter, and every MkDocs event goes through the plugin collection to vault-mcp, as `mkdocs build` sends
them (on_startup, on_config, on_files, on_nav, on_page_markdown, on_page_content, on_env, the stats page's
on_page_context, on_post_build, on_shutdown). Only the Markdown-to-HTML step is replaced: each page's HTML is
recombined from the sections of the FastAPI corpus as MkDocs rendered them (bench/out/fastapi/pages.pickle,
made by bench/plugin_steps.py), so the text keeps its real vocabulary, code names and long tail of rare words.
Pages have front matter (tags from 60, a date within three years) in 100 folders.

Each page count runs twice, each in a fresh subprocess: `bare` (the same replay, no plugin) and `vault`. Reported:
the pages per second of the replay from the first page to the end of on_post_build, the plugin's own seconds
(its closing log line: the build's thread inside the plugin's events, waits for the writer included), and
memory: the build process's peak resident set (VmHWM) and its resident set when the pages are done, beside the
bare replay's, and the writer process's: its peak resident set and, as a forked writer's counts the build's pages
it shares, the most of its own (private) memory. MkDocs keeps every page (its Markdown and HTML) until the build
ends, so the bare replay grows with the site; the plugin's own share is the difference.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from report import table, write_results  # bench/ is on sys.path when a script runs

BENCH = Path(__file__).resolve().parent
PAGES_PICKLE = BENCH / "out" / "fastapi" / "pages.pickle"
OUT = BENCH / "out" / "plugin-at-scale"
TAGS = [f"topic-{n}" for n in range(60)]
_SECTION_START = re.compile(r"(?=<h2\b)")


def section_pool() -> list[str]:
    with PAGES_PICKLE.open("rb") as file:
        pages = pickle.load(file)
    return [part for page in pages for part in _SECTION_START.split(page["html"]) if part.startswith("<h2")]


def write_site(pages: int, seed: int) -> Path:
    """docs/ with `pages` Markdown files and a mkdocs.yml per configuration; written once per page count."""
    root = OUT / str(pages)
    done = root / ".complete"
    if done.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    generator = random.Random(seed)
    for number in range(pages):
        folder = root / "docs" / f"area-{number % 100:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        tags = generator.sample(TAGS, 2)
        day = 1_640_995_200 + generator.randrange(3 * 365) * 86_400
        date = time.strftime("%Y-%m-%d", time.gmtime(day))
        (folder / f"page-{number}.md").write_text(
            f"---\ntags: [{tags[0]}, {tags[1]}]\ndate: {date}\n---\n# Page {number}\n\nRecombined sections.\n",
            encoding="utf-8",
        )
    for name, plugins in (("bare", "[]"), ("vault", "\n  - vault-mcp")):
        (root / f"{name}.yml").write_text(
            f"site_name: Plugin at scale\ndocs_dir: docs\nsite_dir: site-{name}\ntheme:\n  name: mkdocs\n"
            f"plugins: {plugins}\n",
            encoding="utf-8",
        )
    done.touch()
    return root


def memory(pid: int | str = "self") -> dict[str, int]:
    """VmRSS and VmHWM of a process, in KB."""
    facts = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            facts[key] = int(value.split()[0])
    return facts


def private_kb(pid: int | str) -> int:
    """The memory a process does not share (smaps_rollup's Private_Clean and Private_Dirty), in KB: a writer
    forked from the build (as earlier versions did) counts in its VmRSS and VmHWM every page of the build's it
    still shares, so those say nothing of its own memory. 0 once the process is gone."""
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0
    return sum(
        int(value.split()[0])
        for key, _, value in (line.partition(":") for line in rollup.splitlines())
        if key in ("Private_Clean", "Private_Dirty")
    )


def children_of_this_process() -> list[str]:
    return [pid for pid in os.listdir("/proc") if pid.isdigit() and _parent(pid) == str(os.getpid())]


def replay(root: Path, config_name: str, seed: int) -> dict:
    """One build's events over the site at `root`; run in a fresh process (see main)."""
    import logging

    from mkdocs.config import load_config
    from mkdocs.structure.files import get_files
    from mkdocs.structure.nav import get_navigation

    closing = re.compile(r"Indexed .* in ([\d.]+) seconds")
    plugin_seconds = []

    class Closing(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            found = closing.search(record.getMessage())
            if found:
                plugin_seconds.append(float(found.group(1)))

    logging.getLogger("mkdocs").addHandler(Closing())
    logging.getLogger("mkdocs").setLevel(logging.INFO)
    pool = section_pool()
    generator = random.Random(seed)
    shutil.rmtree(root / ".cache", ignore_errors=True)
    config = load_config(config_file=str(root / f"{config_name}.yml"))
    plugins = config.plugins
    plugins.on_startup(command="build", dirty=False)
    config = plugins.on_config(config)
    files = plugins.on_files(get_files(config), config=config)
    nav = plugins.on_nav(get_navigation(files, config), config=config, files=files)
    children = children_of_this_process()  # the writer's process, started by on_files (and a first git read's)
    started = time.perf_counter()
    at_10k: dict[str, int] = {}
    writer_private = 0
    pages = files.documentation_pages()
    for count, file in enumerate(pages, start=1):
        page = file.page
        if page is None:  # the stats page and others the nav does not hold
            continue
        page.read_source(config)
        page.markdown = plugins.on_page_markdown(page.markdown or "", page=page, config=config, files=files)
        html = f'<h1 id="page">{page.title}</h1>\n' + "".join(generator.sample(pool, generator.randint(3, 6)))
        page.content = plugins.on_page_content(html, page=page, config=config, files=files)
        if count == 10_000:
            at_10k = memory()
        if count % 1_000 == 0:
            writer_private = max(writer_private, *(private_kb(pid) for pid in children), 0)
    rendered = memory()
    env = plugins.on_env(config.theme.get_env(), config=config, files=files)
    writer_peak = max((memory(pid).get("VmHWM", 0) for pid in children if Path(f"/proc/{pid}").exists()), default=0)
    for file in files.documentation_pages():
        if file.page is not None and file.generated_by is not None:  # the stats page: its content from the index
            plugins.on_page_context({}, page=file.page, config=config, nav=nav)  # type: ignore[typeddict-item]
    plugins.on_post_build(config=config)
    seconds = time.perf_counter() - started
    # After the commit: the writer's page cache holds what the FTS5 merges read and wrote.
    writer_private = max(writer_private, *(private_kb(pid) for pid in children), 0)
    plugins.on_shutdown()
    del env
    return {
        "pages": len(pages),
        "seconds": seconds,
        "plugin_seconds": plugin_seconds[0] if plugin_seconds else None,
        "at_10k": at_10k,
        "rendered": rendered,
        "end": memory(),
        "writer_peak_kb": writer_peak,
        "writer_private_kb": writer_private,
    }


def _parent(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
    except (OSError, IndexError):
        return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default="10000,100000", help="page counts, comma-separated")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--name", default="plugin_at_scale", help="the results file's name")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # a child: page count and configuration
    args = parser.parse_args()
    if args.one:
        pages, config_name = int(args.one[0]), args.one[1]
        print(json.dumps(replay(OUT / str(pages), config_name, args.seed)))
        return
    if not PAGES_PICKLE.is_file():
        raise SystemExit(f"{PAGES_PICKLE} is missing: run bench/plugin_steps.py first (it captures the pages)")
    rows = [
        [
            "pages",
            "replay",
            "pages/s",
            "plugin s",
            "plugin ms/page",
            "peak RSS MB",
            "RSS at end of pages MB",
            "over bare MB",
            "over bare KB/page",
            "writer process peak MB",
            "writer private MB",
        ]
    ]
    notes = []
    for pages in [int(count) for count in args.pages.split(",")]:
        write_site(pages, args.seed)
        results = {}
        for config_name in ("bare", "vault"):
            child = subprocess.run(
                [sys.executable, __file__, "--one", str(pages), config_name, "--seed", str(args.seed)],
                capture_output=True,
                text=True,
                cwd=BENCH.parent,
            )
            if child.returncode != 0:
                raise SystemExit(
                    f"plugin_at_scale: the {config_name} replay of {pages} pages failed:\n{child.stderr[-3000:]}"
                )
            results[config_name] = json.loads(child.stdout.strip().splitlines()[-1])
            print(f"{pages} {config_name}: {results[config_name]}", flush=True)
        bare_rss = results["bare"]["rendered"]["VmRSS"]
        for config_name, result in results.items():
            over = result["rendered"]["VmRSS"] - bare_rss
            plugin = result["plugin_seconds"]
            rows.append(
                [
                    f"{pages:,}",
                    config_name,
                    f"{result['pages'] / result['seconds']:.0f}",
                    "-" if plugin is None else f"{plugin:.1f}",
                    "-" if plugin is None else f"{1000 * plugin / result['pages']:.2f}",
                    f"{result['end']['VmHWM'] / 1024:.0f}",
                    f"{result['rendered']['VmRSS'] / 1024:.0f}",
                    "-" if config_name == "bare" else f"{over / 1024:+.0f}",
                    "-" if config_name == "bare" else f"{over / (result['pages'] / 1000) / 1000:+.2f}",
                    "-" if not result["writer_peak_kb"] else f"{result['writer_peak_kb'] / 1024:.0f}",
                    "-" if not result.get("writer_private_kb") else f"{result['writer_private_kb'] / 1024:.0f}",
                ]
            )
        notes.append(
            f"{pages:,} pages: the vault replay took {results['vault']['seconds']:.0f} s, the bare one "
            f"{results['bare']['seconds']:.0f} s"
        )
    report = "\n".join(
        [
            f"site: {OUT.relative_to(BENCH.parent)}/<pages> (sections of bench/out/fastapi/pages.pickle recombined, "
            f"3-6 a page; 100 folders; tags from {len(TAGS)}; seed {args.seed}); theme mkdocs, no nav",
            "each replay a fresh process: MkDocs' config, files, nav and page reading, every event through the plugin "
            "collection; the HTML recombined instead of rendered",
            "pages/s: from the first page to the end of on_post_build; plugin s: the plugin's closing log line (the "
            "build's thread in its events, waits for the writer included)",
            "RSS at end of pages: the build process when every page has been handed over (before on_env); over bare: "
            "less the bare replay's, per 1,000 pages",
            "writer process peak: its VmHWM, which for a writer forked from the build (earlier versions) "
            "also counts every page of the build's it shares; writer private: the "
            "most of its own memory (smaps_rollup's Private_Clean + Private_Dirty) read every 1,000 pages and after "
            "the commit",
            f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs",
            "",
            table(rows),
            "",
            *notes,
            "",
        ]
    )
    print(report)
    write_results(args.name, report)


if __name__ == "__main__":
    main()
