"""Live update under `mkdocs serve` on a generated 10,000-page site.

One page is saved; measured, per save:

- the plugin's own time in the rebuild that follows, split where it goes: the saved page's own indexing
  (render check, document, write) and the per-build costs around it (git history, opening the index and
  reading every fingerprint, the check of every page MkDocs rendered again, commit, snapshot, stats page,
  publishing the index into the site). Target: the index update for that page <= 50 ms.
- the time from the save to the page being visible through MCP (a `count_documents` call with
  `wait_for_pending_writes: true` over Streamable HTTP, filtering on a tag only the saved version has),
  next to the time of the MkDocs rebuild itself.

Real `mkdocs serve` subprocesses, in two runs: plain (MkDocs renders every page again on each save) and
`--dirty` (MkDocs renders only the changed page). The site comes from `generate_site.py` (front matter with
title, tags, categories and `updated:`), in a git repository of its own (one commit), theme `mkdocs`.
Its nav lists only the home page (`not_in_nav` for the rest): with the whole tree in the nav, the `mkdocs`
theme writes 10,000 nav entries into each of the 10,000 pages and one rebuild takes ~15 minutes here.
The plugin's option `wait_timeout` is raised to 600 s so a wait outlasts a full rebuild.

The plugin is timed from inside the serve process by a MkDocs hooks file (written beside the site) that
wraps the plugin's event methods and the functions they call; the first build (before the hook is
loaded into the plugin's class) is not timed, only the rebuilds. One untimed save comes first. Each timed
function gets wall time (perf_counter) and the calling thread's CPU time (thread_time): on a shared machine the
CPU column is the steadier one. The functions every rendered page calls (document_fields, page_rendered,
page_fingerprint, source_version) are timed only with `--detail`: a wrapped call costs a few microseconds,
which at 10,000 pages would inflate the plain run's total by ~0.1 s (the report gives the hook's own cost).
Beside the plugin's share of MkDocs' own "built in" time, the report gives its share of the CPU time of the
serve process and of its main thread over the same build: MkDocs 1.6's serve polls docs_dir on a thread of its
own (watchdog's PollingObserver, every 0.5 s: tens of seconds of CPU in a plain rebuild of 10,000 pages on a
busy machine), and a busy machine stretches wall times many times over while CPU times stay comparable.
Each serve run takes a new port, so MkDocs' site_url differs from the run before and the first build (untimed)
indexes every page again.

    .venv/bin/python bench/live_update.py [--pages 10000] [--saves 3] [--runs serve,dirty] [--detail]

Takes ~10 minutes on a quiet 2-CPU machine (most of it MkDocs rendering 10,000 pages in the plain run); ~40 at
load average 8, where `--saves 1` keeps it near 25.
Writes bench/results/speed/live_update.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx2
import mcp
from mcp.client.streamable_http import streamable_http_client

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "results"
sys.path.insert(0, str(BENCH))

import generate_site  # noqa: E402
from mkdocs_vault_mcp.mcp.live import changed_since  # noqa: E402
from report import table, write_results  # noqa: E402

MKDOCS = REPO / ".venv" / "bin" / "mkdocs"
SEED = 7

CONFIG = """site_name: Generated site ({pages} pages)
docs_dir: docs
theme:
  name: mkdocs
nav:
  - index.md
not_in_nav: |
  /**
hooks:
  - vault_bench_hook.py
plugins:
  - vault-mcp:
      modified_meta: updated
      mcp_port: {mcp_port}
      wait_timeout: 600
"""

HOOK = '''"""Times the vault-mcp plugin inside `mkdocs serve` for bench/live_update.py (a MkDocs hooks file)."""
import functools
import json
import os
import threading
import time

import mkdocs_vault_mcp.build_steps.incremental as incremental
import mkdocs_vault_mcp.index.write.writer as writer
import mkdocs_vault_mcp.build_steps.modified as modified
import mkdocs_vault_mcp.plugin as plugin

if not hasattr(plugin, "_vault_bench"):  # MkDocs loads this file again for every rebuild
    state = plugin._vault_bench = {"seconds": {}, "cpu": {}, "cpu_other": {}, "calls": {}, "page": None, "wall": {}}

    def record(name, seconds, cpu):
        state["seconds"][name] = state["seconds"].get(name, 0.0) + seconds
        # "cpu" is MkDocs' thread's, of which the plugin's share is measured; a writer thread's CPU is kept apart
        clock = "cpu" if threading.current_thread() is threading.main_thread() else "cpu_other"
        state[clock][name] = state[clock].get(name, 0.0) + cpu
        state["calls"][name] = state["calls"].get(name, 0) + 1

    def timed(name, function, before=None, after=None):
        @functools.wraps(function)  # keeps mkdocs_priority
        def wrapper(*args, **kwargs):
            if before is not None:
                before()
            start, start_cpu = time.perf_counter(), time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                seconds, cpu = time.perf_counter() - start, time.thread_time() - start_cpu
                record(name, seconds, cpu)
                if after is not None:
                    after(seconds, cpu, *args, **kwargs)
        return wrapper

    def build_begins():
        state["seconds"], state["cpu"], state["cpu_other"], state["calls"] = {}, {}, {}, {}
        state["wall"] = {"on_config": time.time()}
        # CPU seconds over the build, from on_config to the end of on_post_build: the whole serve process (MkDocs,
        # its file watcher, the plugin's threads, the MCP server) and the main thread (MkDocs' rendering and the
        # plugin's events)
        state["build_cpu"] = {"process": -time.process_time(), "main": -time.thread_time()}
        try:
            with open(os.environ["VAULT_BENCH_PAGE_FILE"]) as page:
                state["page"] = page.read().strip()
        except FileNotFoundError:
            state["page"] = None

    def page_indexed(seconds, cpu, self, html, *, page, **kwargs):
        if page.file.src_uri == state["page"]:
            record("saved page: on_page_content", seconds, cpu)

    def committed(seconds, cpu, *args, **kwargs):
        state["wall"]["committed"] = time.time()

    def build_ends(seconds, cpu, *args, **kwargs):
        state["wall"]["post_build_end"] = time.time()
        state["build_cpu"]["process"] += time.process_time()
        state["build_cpu"]["main"] += time.thread_time()
        with open(os.environ["VAULT_BENCH_TIMINGS"], "a") as out:
            out.write(json.dumps(state) + "\\n")

    cls = plugin.VaultMcpPlugin
    cls.on_config = timed("on_config", cls.on_config, before=build_begins)
    cls.on_page_content = timed("on_page_content", cls.on_page_content, after=page_indexed)
    cls.on_post_build = timed("on_post_build", cls.on_post_build, after=build_ends)
    for name in ("on_files", "on_nav", "on_page_markdown", "on_env", "on_page_context"):
        if hasattr(cls, name):
            setattr(cls, name, timed(name, getattr(cls, name)))
    for name in ("build_snapshot", "publish", "write_snapshot", "build_document",
                 "page_paths", "site_files"):
        if hasattr(plugin, name):
            setattr(plugin, name, timed(name, getattr(plugin, name)))
    if hasattr(incremental, "build_document"):  # a changed page's document
        incremental.build_document = timed("incremental.build_document", incremental.build_document)
    if hasattr(incremental, "IncrementalBuild") and hasattr(incremental.IncrementalBuild, "_write_final_content"):
        method = incremental.IncrementalBuild._write_final_content
        incremental.IncrementalBuild._write_final_content = timed("IncrementalBuild._write_final_content", method)
    if os.environ.get("VAULT_BENCH_DETAIL"):
        # Inside on_page_content, for every rendered page: where the check of an unchanged page goes. Each
        # wrapped call adds the hook's own cost (microseconds) to on_page_content, so only with --detail.
        for name in ("page_fingerprint", "source_version"):
            if hasattr(incremental, name):
                setattr(incremental, name, timed(f"incremental.{name}", getattr(incremental, name)))
        if hasattr(plugin, "document_fields"):
            plugin.document_fields = timed("document_fields", plugin.document_fields)
        if hasattr(plugin, "rendered_page"):  # the page model, which document_fields became
            plugin.rendered_page = timed("document_fields", plugin.rendered_page)
        if hasattr(incremental, "IncrementalBuild") and hasattr(incremental.IncrementalBuild, "page_rendered"):
            method = incremental.IncrementalBuild.page_rendered
            incremental.IncrementalBuild.page_rendered = timed("IncrementalBuild.page_rendered", method)
    if hasattr(plugin, "BuildAnswers"):  # before the writer read the answers
        plugin.BuildAnswers.read = timed("BuildAnswers.read", plugin.BuildAnswers.read)
    try:  # the writer reads them after its commit: timed here on a writer thread (in on_env), not in a process
        import mkdocs_vault_mcp.index.answers as answers
    except ImportError:
        pass
    else:
        answers.read_answers = timed("read_answers", answers.read_answers)
    try:
        import mkdocs_vault_mcp.index.write.build_summary as build_summary
    except ImportError:
        pass
    else:
        build_summary.read_build_summary = timed("read_answers", build_summary.read_build_summary)
    if hasattr(modified, "GitTimesRead"):  # git reads on a thread; MkDocs waits in result()
        modified.GitTimesRead.result = timed("GitTimesRead.result", modified.GitTimesRead.result)
        modified.read_git_times = timed("read_git_times", modified.read_git_times)
    for name in ("run_git", "_history"):  # inside read_git_times: its git subprocesses, the history (cached or not)
        if hasattr(modified, name):
            setattr(modified, name, timed(f"modified.{name}", getattr(modified, name)))
    if hasattr(plugin, "stats_page") and hasattr(plugin.stats_page, "render"):
        plugin.stats_page.render = timed("stats_page.render", plugin.stats_page.render)
    writer.IndexWriter.__init__ = timed("IndexWriter.__init__", writer.IndexWriter.__init__)
    writer.IndexWriter.commit = timed("IndexWriter.commit", writer.IndexWriter.commit, after=committed)
    if hasattr(writer.IndexWriter, "commit_beside"):  # the build's commit: returns what waits for it
        commit_beside = writer.IndexWriter.commit_beside

        def commit_beside_timed(self, *args, **kwargs):
            wait = timed("IndexWriter.commit_beside", commit_beside)(self, *args, **kwargs)
            return timed("IndexWriter.commit (waited for)", wait, after=committed)

        writer.IndexWriter.commit_beside = commit_beside_timed
    for name in ("put", "keep_only"):
        setattr(writer.IndexWriter, name, timed(f"IndexWriter.{name}", getattr(writer.IndexWriter, name)))
'''


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def prepare_site(out: Path, pages: int) -> None:
    if generate_site.existing(out, pages, SEED) is None or not (out / ".git").is_dir():
        shutil.rmtree(out, ignore_errors=True)
        print(f"generating {pages} pages in {out} ...", flush=True)
        generate_site.generate(pages, out, SEED)
        git = lambda *a: subprocess.run(["git", *a], cwd=out, check=True, capture_output=True)  # noqa: E731
        (out / ".gitignore").write_text(".cache/\nsite/\nvault_bench_*\nlive.yml\n.bench-*\n")
        git("init", "-q")
        git("add", "-A")
        git("-c", "user.name=bench", "-c", "user.email=bench@example.org", "commit", "-q", "-m", "generated")
    else:
        subprocess.run(["git", "checkout", "-q", "--", "docs"], cwd=out, check=True)
        subprocess.run(["git", "clean", "-qfd", "--", "docs"], cwd=out, check=True)
    (out / "vault_bench_hook.py").write_text(HOOK)


class Serve:
    def __init__(self, out: Path, flags: list[str], mcp_port: int, timings: Path, detail: bool = False) -> None:
        self.lines: list[tuple[float, str]] = []
        env = {
            **os.environ,
            "NO_MKDOCS_2_WARNING": "1",
            "VAULT_BENCH_TIMINGS": str(timings),
            "VAULT_BENCH_PAGE_FILE": str(out / ".bench-page"),
            "VAULT_BENCH_DETAIL": "1" if detail else "",
        }
        self.mcp_url = f"http://127.0.0.1:{mcp_port}/mcp"
        self.process = subprocess.Popen(
            [str(MKDOCS), "serve", "-f", str(out / "live.yml"), "-a", f"127.0.0.1:{free_port()}", *flags],
            cwd=out,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def first(self, pattern: str, after: float, timeout: float) -> tuple[float, re.Match]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for at, line in list(self.lines):
                if at >= after and (match := re.search(pattern, line)):
                    return at, match
            if self.process.poll() is not None:
                break
            time.sleep(0.01)
        log = "\n".join(line for _, line in self.lines[-40:])
        raise SystemExit(f"live_update: no log line {pattern!r} after the save; the log ends:\n{log}")

    def count(self, pattern: str, after: float) -> int:
        return sum(1 for at, line in list(self.lines) if at >= after and re.search(pattern, line))

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def add_tag(text: str, tag: str) -> str:
    return re.sub(r"^tags: \[(.*)\]$", lambda m: f"tags: [{m[1]}, {tag}]", text, count=1, flags=re.MULTILINE)


async def measure_run(
    out: Path, name: str, flags: list[str], saves: int, pages: list[str], detail: bool = False
) -> list[dict]:
    timings = out / f".bench-timings-{name}.jsonl"
    timings.unlink(missing_ok=True)
    mcp_port = free_port()
    (out / "live.yml").write_text(CONFIG.format(pages=len(pages), mcp_port=mcp_port))
    serve = Serve(out, flags, mcp_port, timings, detail)
    try:
        print(f"[{name}] first build ...", flush=True)
        serve.first(r"Serving on ", 0, timeout=3600)
        results = []
        # No read timeout: a wait lasts as long as the rebuild (up to the plugin's wait_timeout, 600 s), and on a
        # busy machine a plain rebuild of 10,000 pages outlasts the SDK client's default of 300 s.
        http = httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=None))
        async with http, mcp.Client(streamable_http_client(serve.mcp_url, http_client=http)) as client:
            for number in range(saves + 1):  # the first save warms up
                page = pages[(number * 997 + len(name) * 31) % len(pages)]
                tag = f"live-bench-{name}-{number}-{time.time_ns()}"
                (out / ".bench-page").write_text(page)
                source = out / "docs" / page
                text = add_tag(source.read_text(encoding="utf-8"), tag)
                time.sleep(1.0)  # nothing else in flight
                saved, saved_wall = time.monotonic(), time.time()
                source.write_text(text, encoding="utf-8")
                while True:
                    answer = await client.call_tool(
                        "count_documents", {"filters": {"tags": tag}, "wait_for_pending_writes": True}
                    )
                    if answer.is_error:
                        raise SystemExit(f"live_update: count_documents failed: {answer.content}")
                    if answer.structured_content["total"] == 1:
                        break
                visible = time.monotonic()
                detected, _ = serve.first(r"Detected file changes", saved, timeout=60)
                built_at, built = serve.first(r"Documentation built in ([\d.]+) seconds", saved, timeout=3600)
                time.sleep(1.5)  # a second rebuild, if the save straddled two polls, shows up by now
                records = [json.loads(line) for line in timings.read_text().splitlines()]
                plugin = next(r for r in records if r["page"] == page and r["wall"]["on_config"] > saved_wall)
                result = {
                    "page": page,
                    "save_to_on_config": plugin["wall"]["on_config"] - saved_wall,
                    "on_config_to_commit": plugin["wall"]["committed"] - plugin["wall"]["on_config"],
                    "save_to_visible": visible - saved,
                    "save_to_detected": detected - saved,
                    "mkdocs_rebuild": float(built[1]),
                    "save_to_built": built_at - saved,
                    "rebuilds": serve.count(r"Building documentation", saved),
                    "plugin": plugin,
                }
                label = "warm-up" if number == 0 else f"save {number}"
                print(
                    f"[{name}] {label}: {page} visible after {result['save_to_visible']:.3f} s, "
                    f"MkDocs rebuild {result['mkdocs_rebuild']:.2f} s, "
                    f"plugin {sum_events(result['plugin']) * 1000:.0f} ms",
                    flush=True,
                )
                if number:
                    results.append(result)
        return results
    finally:
        serve.stop()


EVENTS = (
    "on_config",
    "on_files",
    "on_nav",
    "on_page_markdown",
    "on_page_content",
    "on_env",
    "on_page_context",
    "on_post_build",
)


def sum_events(record: dict, measure: str = "seconds") -> float:
    """The plugin's time in one rebuild; `measure`: "seconds" (wall) or "cpu" (the calling thread's CPU time)."""
    return sum(record[measure].get(name, 0.0) for name in EVENTS)


def breakdown(record: dict, measure: str = "seconds") -> dict[str, float]:
    """Milliseconds of one rebuild, split where they go. The rows not indented add up to the plugin's total;
    "  of which" rows split the row above them (they are part of it). `measure`: as in sum_events."""
    s = {key: value * 1000 for key, value in record[measure].items()}
    get = lambda key: s.get(key, 0.0)  # noqa: E731
    # CPU of the functions that ran on a thread other than MkDocs' (the build summary, the git history): shown in
    # their own rows, never in the rows that add up to the plugin's share of MkDocs' thread.
    other = {key: value * 1000 for key, value in record.get("cpu_other", {}).items()} if measure == "cpu" else {}
    elsewhere = lambda key: get(key) + other.get(key, 0.0)  # noqa: E731
    page = get("saved page: on_page_content")
    opened = get("IndexWriter.__init__")
    keep = get("IndexWriter.keep_only")
    answers = get("BuildAnswers.read") + get("read_answers")
    # The commit as on_env starts it (a process's commit is waited for in the event that waits, on_page_context).
    # A writer thread reads the build summary within it, which has a row of its own: its wall time is left out
    # here; its CPU time is the writer thread's, never the calling thread's.
    within = measure == "seconds" and "IndexWriter.commit_beside" in s
    commit = get("IndexWriter.commit") + get("IndexWriter.commit_beside") - (get("read_answers") if within else 0.0)
    others = get("on_page_content") - page
    final = get("IncrementalBuild._write_final_content")
    paths, files = get("page_paths"), get("site_files")
    git = elsewhere("read_git_times")  # on its own thread: not in the plugin's total
    git_wait = get("GitTimesRead.result")  # MkDocs' thread waiting for it, inside on_page_content or on_env
    stats, publish, write_snapshot = get("on_page_context"), get("publish"), get("write_snapshot")
    markdown = get("on_page_markdown")
    rendered = get("IncrementalBuild.page_rendered")
    fingerprint, source = get("incremental.page_fingerprint"), get("incremental.source_version")
    document = get("incremental.build_document")
    on_env_rest = get("on_env") - keep - commit - final - paths - files - answers
    total = sum_events(record, measure) * 1000
    parts = {
        "saved page: render check + document + write (on_page_content)": page,
        "open the index, read every fingerprint (IndexWriter.__init__)": opened,
        "drop vanished pages (keep_only)": keep,
        "commit": commit,
        "index update for the page (the four above)": page + opened + keep + commit,
        "check of the other pages MkDocs rendered again": others,
    }
    if "document_fields" in s:  # --detail
        parts |= {
            "  of which document_fields (all pages)": get("document_fields"),
            "  of which page_fingerprint (all pages)": fingerprint,
            "  of which source_version: os.stat (all pages)": source,
            "  of which page_rendered's rest: json.dumps(history), lookups (all pages; the saved page's document"
            " left out)": rendered - fingerprint - source - document,
            "  of which on_page_content's rest (is_candidate, search_excluded, the plugin's timer)": get(
                "on_page_content"
            )
            - get("document_fields")
            - rendered,
        }
    parts |= {
        "authored keys of every page (on_page_markdown)": markdown,
        "final-content check of every rendered page (_write_final_content)": final,
        "paths of the pages --dirty kept (page_paths)": paths,
        "the site's files for links (site_files)": files,
        "stats + snapshot answers (read_answers, by a writer thread after its commit)": answers,
        "on_env otherwise": on_env_rest,
        "stats page (on_page_context)": stats,
        "publish index.sqlite into the site (publish)": publish,
        "snapshot.json (write_snapshot)": write_snapshot,
    }
    accounted = page + opened + keep + commit + others + markdown + final + paths + files + answers
    accounted += on_env_rest + stats + publish + write_snapshot
    parts["rest (on_config, on_files, on_nav, on_post_build otherwise)"] = total - accounted
    parts["plugin total in the rebuild"] = total
    parts |= {
        "(of the rows above, MkDocs' thread waiting for the git history: GitTimesRead.result)": git_wait,
        "(git history, on a thread of its own beside MkDocs: read_git_times)": git,
        "  of which git subprocesses: rev-parse, status (run_git)": elsewhere("modified.run_git"),
        "  of which history: cache or log (_history)": elsewhere("modified._history"),
    }
    if other:
        parts["(the build summary, read by a writer thread after its commit: read_answers)"] = other.get(
            "read_answers", 0.0
        )
    return parts


def hook_call_cost() -> float:
    """Seconds one timed() wrapper of the hook adds to a call (its own clocks and bookkeeping), on a no-op."""
    seconds: dict[str, float] = {}
    cpu: dict[str, float] = {}
    calls: dict[str, int] = {}

    def noop() -> None:
        return None

    def wrapper() -> None:  # the hook's timed(), without functools.wraps and `after`
        start, start_cpu = time.perf_counter(), time.thread_time()
        try:
            return noop()
        finally:
            took, took_cpu = time.perf_counter() - start, time.thread_time() - start_cpu
            seconds["x"] = seconds.get("x", 0.0) + took
            cpu["x"] = cpu.get("x", 0.0) + took_cpu
            calls["x"] = calls.get("x", 0) + 1

    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(100_000):
            wrapper()
        middle = time.perf_counter()
        for _ in range(100_000):
            noop()
        samples.append(((middle - start) - (time.perf_counter() - middle)) / 100_000)
    return min(samples)


def cpu_share(record: dict, of: str = "process") -> float:
    """The plugin's events' CPU time over the serve process's CPU time in the same build: all its threads
    ("process"; MkDocs' file watcher polls docs_dir on a thread of its own) or the main thread's ("main")."""
    return sum_events(record, "cpu") / record["build_cpu"][of]


def nested_calls(record: dict) -> int:
    """Wrapped calls inside the plugin's events in one rebuild: each adds the hook's own cost to the total."""
    return sum(
        count for name, count in record["calls"].items() if name not in EVENTS and not name.startswith("saved page")
    )


def probe_time(docs: Path) -> float:
    """The file scan a wait does before trusting the file events (changed_since; nothing changed: a full scan)."""
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        changed_since({docs.resolve(): True}, time.time_ns() + 10**12)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--saves", type=int, default=3, help="timed saves per run (after one warm-up save)")
    parser.add_argument("--runs", default="serve,dirty", help="comma-separated: serve (plain), dirty (--dirty)")
    parser.add_argument("--out", type=Path, default=BENCH / "out" / "live-site")
    parser.add_argument(
        "--detail",
        action="store_true",
        help="also time the functions every rendered page calls (adds the hook's own cost to them)",
    )
    args = parser.parse_args()
    args.out = args.out.resolve()
    command_line = "python " + " ".join(shlex.quote(a) for a in [os.path.relpath(__file__, REPO), *sys.argv[1:]])
    runs = {"serve": [], "dirty": ["--dirty"]}
    chosen = [name.strip() for name in args.runs.split(",") if name.strip()]
    if not chosen or any(name not in runs for name in chosen):
        parser.error(f"--runs takes a comma-separated list of {', '.join(runs)}")

    prepare_site(args.out, args.pages)
    pages = sorted(p.relative_to(args.out / "docs").as_posix() for p in (args.out / "docs").rglob("*.md"))
    pages = [p for p in pages if p != "index.md"]
    load_before = os.getloadavg()
    measured = {}
    try:
        for name in chosen:
            measured[name] = asyncio.run(measure_run(args.out, name, runs[name], args.saves, pages, args.detail))
    finally:
        prepare_site(args.out, args.pages)  # the saved pages back as generated
    probe = probe_time(args.out / "docs")
    call_cost = hook_call_cost()

    median = lambda values: statistics.median(values)  # noqa: E731
    report = [
        f"command: {command_line}",
        f"site: {os.path.relpath(args.out, REPO)} ({args.pages} pages from generate_site.py, seed {SEED}, "
        "theme mkdocs, nav = home page only, git repository with one commit, modified_meta: updated)",
        f"machine: Python {platform.python_version()}, {os.cpu_count()} CPUs, load average before "
        f"{load_before[0]:.1f}, after {os.getloadavg()[0]:.1f} (other work on the machine inflates wall times)",
        f"each run: a real `mkdocs serve` subprocess; {args.saves} timed saves after 1 warm-up save, medians below;",
        "a save adds a new tag to one page's front matter; visible = count_documents(filters={tags: <new tag>},",
        "wait_for_pending_writes=true) over Streamable HTTP answers 1",
        "",
    ]
    header = ["", *[f"{name} (ms)" for name in measured]]
    rows = [["", *[f"{name} {column}" for name in measured for column in ("wall ms", "CPU ms")]]]
    keys = list(breakdown(measured[chosen[0]][0]["plugin"], "cpu"))  # the CPU breakdown has every row
    for key in keys:
        values = [
            median([breakdown(r["plugin"], measure).get(key, 0.0) for r in measured[name]])
            for name in measured
            for measure in ("seconds", "cpu")
        ]
        rows.append([key, *[f"{value:.1f}" for value in values]])
    rows.append(
        [
            "(pages MkDocs rendered in the rebuild)",
            *[
                str(max(r["plugin"]["calls"].get("on_page_content", 0) for r in measured[name]))
                for name in measured
                for _ in (0, 1)
            ],
        ]
    )
    report += [
        "plugin time in the rebuild after one save, where it goes (wall: perf_counter; CPU: the calling",
        "thread's thread_time, which leaves out the writer thread and time spent waiting for it or for git,",
        "and which other work on the machine inflates less than wall time):",
        table(rows),
        "",
    ]
    rows = [header]
    for key, label in [
        ("save_to_detected", "save -> MkDocs notices the change"),
        ("save_to_on_config", "save -> the rebuild reaches the plugin's on_config"),
        ("on_config_to_commit", "on_config -> index committed (MkDocs renders, plugin indexes)"),
        ("save_to_visible", "save -> visible through MCP (wait_for_pending_writes)"),
        ("mkdocs_rebuild", "MkDocs rebuild (its own 'Documentation built in')"),
        ("save_to_built", "save -> rebuild finished"),
    ]:
        rows.append([label, *[f"{median([r[key] for r in measured[name]]) * 1000:.0f}" for name in measured]])
    rows.append(
        [
            "plugin share of the rebuild (wall: its events' time / MkDocs' 'built in')",
            *[
                f"{median([sum_events(r['plugin']) / r['mkdocs_rebuild'] for r in measured[name]]) * 100:.1f}%"
                for name in measured
            ],
        ]
    )
    rows.append(
        [
            "process CPU from on_config to the end of on_post_build (all threads)",
            *[
                f"{median([r['plugin']['build_cpu']['process'] for r in measured[name]]) * 1000:.0f}"
                for name in measured
            ],
        ]
    )
    rows.append(
        [
            "  of which the main thread (MkDocs rendering, the plugin's events)",
            *[f"{median([r['plugin']['build_cpu']['main'] for r in measured[name]]) * 1000:.0f}" for name in measured],
        ]
    )
    rows.append(
        [
            "plugin CPU share: its events' CPU / the process CPU above",
            *[f"{median([cpu_share(r['plugin']) for r in measured[name]]) * 100:.1f}%" for name in measured],
        ]
    )
    rows.append(
        [
            "plugin CPU share of the main thread: its events' CPU / the main thread's",
            *[f"{median([cpu_share(r['plugin'], 'main') for r in measured[name]]) * 100:.1f}%" for name in measured],
        ]
    )
    rows.append(["rebuilds per save (max)", *[str(max(r["rebuilds"] for r in measured[name])) for name in measured]])
    report += ["from the save:", table(rows), ""]
    report.append(
        f"the file scan a waiting call makes before it trusts the file events (changed_since over "
        f"docs/, nothing changed): {probe * 1000:.1f} ms"
    )
    report.append(
        "the timing hook's own cost, inside the plugin totals above: "
        + ", ".join(
            f"{name} {max(nested_calls(r['plugin']) for r in measured[name])} wrapped calls x "
            f"{call_cost * 1e6:.2f} us = "
            f"{max(nested_calls(r['plugin']) for r in measured[name]) * call_cost * 1000:.1f} ms"
            for name in measured
        )
    )
    update = [
        median([breakdown(r["plugin"])["index update for the page (the four above)"] for r in measured[name]])
        for name in measured
    ]
    report.append(
        "target: index update for the page <= 50 ms: "
        + ", ".join(
            f"{name} {value:.1f} ms {'ok' if value <= 50 else 'MISSED'}"
            for name, value in zip(measured, update, strict=True)
        )
    )
    text = "\n".join(report) + "\n"
    print("\n" + text)
    write_results("live_update", text)


if __name__ == "__main__":
    main()
