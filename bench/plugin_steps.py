"""CPU seconds of each of the plugin's build steps on the FastAPI corpus, against the bare build's.

    .venv/bin/python bench/plugin_steps.py [--rounds 3] [--package DIR]

A build on a shared 2-CPU machine swings by ±15% in wall time, far more than the plugin costs; CPU seconds
of the same code, step by step, move by a few percent. So this script:

1. builds bench/out/fastapi/ (made by bench/build_overhead.py: 1,643 pages, 13 languages, theme mkdocs)
   once without plugins but with a MkDocs hook that keeps what the plugin would see of each page
   (its HTML after rendering, title, URL, front matter, Markdown, file) in bench/out/fastapi/pages.pickle,
   and takes that build's CPU seconds (user + system, all threads) as the baseline;
2. replays the plugin's steps on those pages in this process, `--rounds` times, with the writer on a thread
   and in a process of its own (index/write/writer.py: sites of PAGES_FOR_A_PROCESS pages or more), and reports
   the best CPU seconds of each step, and of the whole, as a share of the bare build's: a cold build (every
   page indexed: fingerprint, hand over, the writer's document, inserts and commit) and a warm one (every
   page fingerprinted against the index the cold one left, none indexed).

CPU seconds count every thread and the writer's process. "build thread" is the CPU of the build's own thread
plus its wait for the commit: the plugin's share of a build's wall time when a second core runs the writer.
Steps the replay does not have (MkDocs' own events, the stats page rendered through the theme) are in
bench/plugin_share.py's figures, read from the plugin's log line of a real build.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import shutil
import subprocess
import sys
import time
from html import unescape
from pathlib import Path

from report import write_results  # bench/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "bench" / "out" / "fastapi"
PAGES = SITE / "pages.pickle"
BASELINE = SITE / "pages-baseline.json"

HOOK = """
import os, pickle
PAGES = []

def on_page_content(html, page, config, files):
    PAGES.append(dict(src_uri=page.file.src_uri, abs_src_path=page.file.abs_src_path, html=html,
                      title=page.title, url=page.url, meta=dict(page.meta), markdown=page.markdown))
    return html

def on_post_build(config):
    with open(os.environ["VAULT_PAGES_PICKLE"], "wb") as out:
        pickle.dump(PAGES, out)
"""


def capture() -> float:
    """Build once without plugins, keeping every page; the build's CPU seconds."""
    hook = SITE / "capture_hook.py"
    hook.write_text(HOOK)
    config = SITE / "capture.yml"
    config.write_text((SITE / "none.yml").read_text() + "hooks:\n  - capture_hook.py\n")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [
            str(ROOT / ".venv" / "bin" / "mkdocs"),
            "build",
            "-q",
            "-f",
            str(config),
            "-d",
            str(SITE / "sites" / "capture"),
        ],
        cwd=SITE,
        check=True,
        env={**os.environ, "VAULT_PAGES_PICKLE": str(PAGES), "NO_MKDOCS_2_WARNING": "1"},
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    BASELINE.write_text(json.dumps({"cpu": cpu}))
    return cpu


def cpu_now() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def replay(pages: list[dict], cache: Path, in_process: bool) -> dict[str, float]:
    """One build's worth of the plugin's steps; CPU seconds of each, and of the build's own thread.

    `in_process`: the writer runs in a process of its own (as for sites of writer.PAGES_FOR_A_PROCESS pages or
    more), else on a thread."""
    from mkdocs_vault_mcp.build_steps.modified import modified_instant, read_git_times
    from mkdocs_vault_mcp.index.write.working_index import CommitSettings
    from mkdocs_vault_mcp.index.write.writer import IndexWriter
    from mkdocs_vault_mcp.page.fingerprints import page_fingerprint
    from mkdocs_vault_mcp.page.model import RenderedPage
    from mkdocs_vault_mcp.page.paths import server_path

    steps = dict.fromkeys(("open", "fingerprint", "hand over", "commit", "total"), 0.0)
    # fingerprint and hand over: the build's thread alone (what it cannot do while MkDocs renders); open and
    # commit: the build's thread too, waits included (the writer finishing its queue); "writer": what the writer
    # did meanwhile, on its thread or in its process; total: all of it.
    started, started_children, thread_started = cpu_now(), children_cpu(), time.thread_time()
    mark = time.perf_counter()
    git = read_git_times(str(SITE / "docs"))
    writer = IndexWriter(cache / "build.sqlite", json.dumps({"bench": 1}), in_process=in_process)
    for page in pages:
        mark = time.thread_time()
        status = os.stat(page["abs_src_path"])  # as plugin.source_version: the file by size and time
        modified, source = modified_instant(page["src_uri"], page["abs_src_path"], "auto", git, page["meta"], None)
        title = unescape(page["title"] or "")
        url = "/" + page["url"]
        commits = git.history.get(page["src_uri"], []) if git is not None else []
        digest = page_fingerprint(
            page["html"],
            title,
            url,
            page["meta"],
            modified,
            source,
            (status.st_size, status.st_mtime_ns),
            "en",
            None,
            commits,
        )
        steps["fingerprint"] += time.thread_time() - mark
        if writer.fingerprints.get(page["src_uri"]) == digest:
            continue
        mark = time.thread_time()
        writer.put(
            RenderedPage(
                path=page["src_uri"],
                url=url,
                title=title,
                meta=page["meta"],
                markdown=page["markdown"],
                source_file=page["abs_src_path"],
                modified=modified,
                modified_source=source,
                language="en",
                fallback_of=None,
                page_path="/" + page["url"],
                site_url=None,
                history=commits,
                html=page["html"],
                fingerprint=digest,
            ),
            "auto",
        )
        steps["hand over"] += time.thread_time() - mark
    mark = time.perf_counter()
    writer.keep_only({page["src_uri"] for page in pages})
    site_files = {server_path("/" + page["url"]): page["src_uri"] for page in pages}
    writer.commit(
        CommitSettings(
            indexed_fields="auto",
            site_name="bench",
            site_url=None,
            site_files=site_files,
            nav={page["src_uri"] for page in pages},
        )
    )
    steps["commit"] = time.perf_counter() - mark  # wall: the build's thread waits for the writer's queue and commit
    writer.close()
    steps["build thread"] = time.thread_time() - thread_started + steps["commit"]
    steps["total"] = cpu_now() - started + children_cpu() - started_children
    steps["writer"] = steps["total"] - (time.thread_time() - thread_started)
    return steps


def replay_best(pages_file: Path, rounds: int) -> dict[str, dict[str, float]]:
    """The best round (least total CPU) of each build: "thread cold", "thread warm", "process cold", ..."""
    with pages_file.open("rb") as file:
        pages = pickle.load(file)
    cache = SITE / ".cache" / "plugin-steps"
    best: dict[str, dict[str, float]] = {}
    for _ in range(rounds):
        for writes in ("thread", "process"):
            shutil.rmtree(cache, ignore_errors=True)
            for kind in ("cold", "warm"):
                steps = replay(pages, cache, in_process=writes == "process")
                build = f"{writes} {kind}"
                if build not in best or steps["total"] < best[build]["total"]:
                    best[build] = steps
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--package",
        type=Path,
        action="append",
        help="a directory holding mkdocs_vault_mcp (repeat to compare; default: this checkout)",
    )
    parser.add_argument("--recapture", action="store_true", help="build the bare site again for the baseline")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child: one package, JSON out
    args = parser.parse_args()
    packages = [package.resolve() for package in args.package or [ROOT]]
    if args.one:
        sys.path.insert(0, str(packages[0]))
        print(json.dumps(replay_best(PAGES, args.rounds)))
        return
    if not (SITE / "none.yml").is_file():
        raise SystemExit(f"{SITE} has no site: run bench/build_overhead.py first (it copies the corpus)")
    if args.recapture or not PAGES.is_file() or not BASELINE.is_file():
        capture()
    baseline = json.loads(BASELINE.read_text())["cpu"]
    with PAGES.open("rb") as file:
        count = len(pickle.load(file))
    lines = [
        f"pages: {count}; bare build (no plugins, same corpus, captured with the pages): {baseline:.2f} CPU s; "
        f"load {os.getloadavg()[0]:.1f}",
        f"best of {args.rounds} rounds, CPU seconds and share of the bare build's CPU:",
    ]
    for package in packages:
        child = subprocess.run(
            [sys.executable, __file__, "--one", "--rounds", str(args.rounds), "--package", str(package)],
            check=True,
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        best = json.loads(child.stdout)
        builds = list(best)
        lines += [
            "",
            f"package: {package}",
            "",
            "| step | " + " | ".join(builds) + " |",
            "| --- |" + " ---: |" * len(builds),
        ]
        for step in ("open", "fingerprint", "hand over", "commit", "build thread", "writer", "total"):
            lines.append(
                f"| {step} | "
                + " | ".join(
                    f"{best[build].get(step, 0.0):.3f} s ({100 * best[build].get(step, 0.0) / baseline:.2f}%)"
                    for build in builds
                )
                + " |"
            )
        lines += [
            "",
            "build thread: the CPU of MkDocs' own thread, plus its wall-clock wait at the commit: what the",
            "plugin adds to a build's wall time on a machine with a core to spare (the writer runs beside it)",
        ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    write_results("plugin_steps", text)


if __name__ == "__main__":
    main()
