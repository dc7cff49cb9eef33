"""Indexing the real-text site through a real `mkdocs build`: pages per second and peak memory, beside the bare build.

    .venv/bin/python bench/real_text_build.py [--pages 10000,100000] [--configs bare,vault] [--seed 7]
                                              [--report-only]

For each page count, the site of bench/real_text_site.py (generated once) is built by a fresh
`mkdocs build` subprocess under `/usr/bin/time -v`, cold (site_dir and the plugin's cache deleted first):

- `bare`: OUT/mkdocs-bare.yml, no plugin (the baseline);
- `vault`: OUT/mkdocs.yml, vault-mcp alone.

Both use the site's minimal theme (the page's content, no nav: the `mkdocs` theme lists every page on every
page, which makes 100,000 pages quadratic). Recorded per build: wall and CPU seconds (user + system, every
thread), the maximum resident set size, and the plugin's own seconds from its closing log line. Each build
is kept as OUT/build-<config>.json, so the builds can run in separate invocations (the 100,000-page ones take
long) and one report gathers them all into bench/results/speed/real_text_build.json.

Memory: MkDocs itself keeps every page (its Markdown, HTML and table of contents) until the build ends, so the
bare build grows with the site. What the plugin must keep bounded is its own share: the vault build's
maximum RSS less the bare build's, per 1,000 pages, should not grow from 10,000 to 100,000 pages beyond the
small per-page bookkeeping (fingerprints, what on_env needs of each page).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
MKDOCS = REPO / ".venv" / "bin" / "mkdocs"
sys.path.insert(0, str(BENCH))

import real_text_site  # noqa: E402
from report import table, write_results  # noqa: E402

CONFIG_FILES = {"bare": "mkdocs-bare.yml", "vault": "mkdocs.yml"}
_INDEXED = re.compile(r"vault-mcp: Indexed (\d+) pages, (\d+) sections.* in ([\d.]+) seconds")
_TIME_FIELDS = {
    "Maximum resident set size (kbytes)": "max_rss_kb",
    "User time (seconds)": "user_s",
    "System time (seconds)": "system_s",
}


def build(site: Path, config: str, package: Path | None = None, name: str | None = None) -> dict:
    """One cold build of SITE with CONFIG (with PACKAGE's mkdocs_vault_mcp first on the path) into
    site-NAME; its measures."""
    site_dir = site / f"site-{name or config}"
    shutil.rmtree(site_dir, ignore_errors=True)
    if config == "vault":  # only this build has a cache; a bare build may run beside it
        shutil.rmtree(site / ".cache", ignore_errors=True)
    command = ["/usr/bin/time", "-v", str(MKDOCS), "build", "-f", CONFIG_FILES[config], "-d", site_dir.name]
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    if package is not None:
        env["PYTHONPATH"] = str(package.resolve())
    start = time.perf_counter()
    done = subprocess.run(command, cwd=site, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"real_text_build: {' '.join(command)} failed:\n{done.stderr[-3000:]}")
    record: dict = {
        "config": config,
        "wall_s": wall,
        "load_average_at_end": os.getloadavg()[0],
        "package": os.path.relpath(package, REPO) if package else None,
    }
    for line in done.stderr.splitlines():
        name, _, value = line.strip().partition(": ")
        if name in _TIME_FIELDS:
            record[_TIME_FIELDS[name]] = float(value)
        found = _INDEXED.search(line)
        if found:
            record.update(indexed_pages=int(found[1]), indexed_sections=int(found[2]), plugin_s=float(found[3]))
    if config == "vault":
        index = site_dir / "vault-mcp" / "index.sqlite"
        record["index_mb"] = index.stat().st_size / 1e6
        conn = sqlite3.connect(f"{index.resolve().as_uri()}?mode=ro", uri=True)
        try:
            record["indexed_terms"] = conn.execute("SELECT count(*) FROM sections_vocab").fetchone()[0]
        finally:
            conn.close()
    return record


def report(page_counts: list[int], seed: int, command_line: str) -> str:
    rows = [
        [
            "pages",
            "build",
            "wall s",
            "CPU s",
            "pages/s (wall)",
            "pages/CPU s",
            "plugin s",
            "plugin pages/s",
            "max RSS MB",
            "RSS over bare MB",
            "over bare per 1k pages",
        ]
    ]
    notes = []
    for pages in page_counts:
        site = real_text_site.default_out(pages)
        records = {}
        for path in sorted(site.glob("build-*.json")):
            record = json.loads(path.read_text())
            records[path.stem.removeprefix("build-")] = record
            if record.get("package"):
                notes.append(f"  {pages:,} {path.stem.removeprefix('build-')}: the package at {record['package']}")
        bare_rss = records["bare"]["max_rss_kb"] / 1024 if "bare" in records else None
        for config, record in records.items():
            cpu = record["user_s"] + record["system_s"]
            rss = record["max_rss_kb"] / 1024
            over = rss - bare_rss if bare_rss is not None and not config.startswith("bare") else None
            plugin = record.get("plugin_s")
            rows.append(
                [
                    f"{pages:,}",
                    config,
                    f"{record['wall_s']:.0f}",
                    f"{cpu:.0f}",
                    f"{pages / record['wall_s']:.0f}",
                    f"{pages / cpu:.0f}",
                    f"{plugin:.1f}" if plugin else "-",
                    f"{pages / plugin:.0f}" if plugin else "-",
                    f"{rss:.0f}",
                    f"{over:+.0f}" if over is not None else "-",
                    f"{over / pages * 1000:+.1f}" if over is not None else "-",
                ]
            )
            notes.append(
                f"  {pages:,} {config}: load average {record['load_average_at_end']:.2f} at the end"
                + (
                    f"; {record['indexed_pages']:,} pages, {record['indexed_sections']:,} sections indexed,"
                    f" index {record['index_mb']:.0f} MB, {record['indexed_terms']:,} distinct indexed terms"
                    " (stems, fts5vocab)"
                    if "indexed_terms" in record
                    else ""
                )
            )
    return "\n".join(
        [
            f"command: {command_line}",
            "site: bench/real_text_site.py (the corpora's real sections recombined), seed "
            f"{seed}; minimal theme; cold builds (no site_dir, no cache), one `mkdocs build` subprocess each under"
            " /usr/bin/time -v",
            f"machine: Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, {os.cpu_count()} CPUs"
            " shared with other work: read CPU seconds and the plugin's own seconds, wall times swing with the load",
            "plugin s = the plugin's own seconds from its closing log line; RSS = /usr/bin/time's maximum resident set",
            "",
            table(rows),
            "",
            *notes,
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default="10000,100000", help="page counts, comma-separated (default 10000,100000)")
    parser.add_argument("--configs", default="bare,vault", help="builds to run: bare, vault (default both)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--report-only", action="store_true", help="build nothing: report the builds recorded")
    parser.add_argument(
        "--package",
        type=Path,
        help="a folder holding another mkdocs_vault_mcp to build with (e.g."
        " `git archive COMMIT mkdocs_vault_mcp | tar -x -C DIR`); its builds are recorded as"
        " <config>-<--label>",
    )
    parser.add_argument("--label", default="before", help="the name of --package's builds (default before)")
    args = parser.parse_args()
    page_counts = [int(p) for p in args.pages.split(",")]
    command_line = "python " + " ".join(shlex.quote(a) for a in [os.path.relpath(__file__, REPO), *sys.argv[1:]])
    if not args.report_only:
        for pages in page_counts:
            site, _ = real_text_site.ensure(pages, args.seed)
            for config in args.configs.split(","):
                print(f"building {pages} pages, {config} ...", flush=True)
                name = f"{config}-{args.label}" if args.package else config
                record = build(site, config, args.package, name)
                (site / f"build-{name}.json").write_text(json.dumps(record, indent=1))
                print(f"  {json.dumps(record)}", flush=True)
    text = report(page_counts, args.seed, command_line)
    print(text)
    write_results("real_text_build", text)


if __name__ == "__main__":
    main()
