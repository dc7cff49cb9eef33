"""Whether the index writer's process pays: a first build with the writer in a process of its own against the same
build with it on a thread, beside the bare build and a warm one, alternating in the same rounds.

    .venv/bin/python bench/run.py writer_executor [--rounds 8] [--baseline DIR]

Copies `../shared/corpora/fastapi-docs/en/docs` (155 pages) into `bench/out/writer_executor/`, theme `mkdocs`, and
builds it round robin, each round starting one configuration further on, each build a fresh `mkdocs build -q`
process:

- `none`: `plugins: []` (the baseline)
- `process`: vault-mcp, its cache deleted first (a first build: the writer in a process of its own)
- `thread`: the same, with the writer held on a thread (PAGES_FOR_A_PROCESS raised past the site's pages)
- `warm`: vault-mcp, after a build of the same site (every page indexed: the writer on a thread)
- with `--baseline DIR`, `base-cold` and `base-warm`: another checkout's package (its `mkdocs_vault_mcp` first on
  PYTHONPATH) in the same rounds

Per configuration, the median wall time and the median CPU time of the build's own process (os.wait4's user +
system: its threads and the children it waited for; a writer process is the fork server's child, not the
build's, and is left out of it: what the process takes off the build's thread). The wall time carries what
else runs on the machine: read the load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from report import write_results  # bench/ is on sys.path when a script runs

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "out" / "writer_executor"
CORPUS = REPO.parent / "shared" / "corpora" / "fastapi-docs" / "en" / "docs"
# Runs MkDocs with the writer held on a thread when asked: the one switch the package has is its page threshold.
LAUNCH = (
    "import sys, mkdocs_vault_mcp.index.write.writer as w\n"
    "if sys.argv.pop(1) == 'thread': w.PAGES_FOR_A_PROCESS = 10**9\n"
    "from mkdocs.__main__ import cli; sys.argv[0] = 'mkdocs'; cli()"
)


def build(name: str, package: Path, writer: str) -> tuple[float, float]:
    """One `mkdocs build` of configuration `name`: (wall seconds, CPU seconds of the build's own process)."""
    shutil.rmtree(OUT / f"site-{name}", ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=str(package), NO_MKDOCS_2_WARNING="1")
    command = [sys.executable, "-c", LAUNCH, writer, "build", "-q", "-f", str(OUT / f"{name}.yml")]
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=OUT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"the {name} build failed: run {' '.join(command)} in {OUT}")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--baseline", type=Path, help="another checkout, built in the same rounds")
    args = parser.parse_args()
    if not (OUT / "docs").is_dir():
        shutil.copytree(CORPUS, OUT / "docs")
    configs = {"none": (REPO, "process"), "process": (REPO, "process"), "thread": (REPO, "thread"), "warm": (REPO, "")}
    if args.baseline:
        configs |= {"base-cold": (args.baseline.resolve(), "process"), "base-warm": (args.baseline.resolve(), "")}
    for name in configs:
        plugins = "plugins: []\n" if name == "none" else f"plugins:\n- vault-mcp:\n    cache_dir: .cache-{name}\n"
        (OUT / f"{name}.yml").write_text(
            f"site_name: bench\ndocs_dir: docs\ntheme: mkdocs\nsite_dir: site-{name}\n{plugins}"
        )
    wall: dict[str, list[float]] = {name: [] for name in configs}
    cpu: dict[str, list[float]] = {name: [] for name in configs}
    names = list(configs)
    for round_ in range(args.rounds):
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            package, writer = configs[name]
            shutil.rmtree(OUT / f".cache-{name}", ignore_errors=True)
            if not writer:  # warm: the cache of a build just before
                build(name, package, "process")
            seconds, cpu_seconds = build(name, package, writer or "process")
            wall[name].append(seconds)
            cpu[name].append(cpu_seconds)
        print(f"round {round_ + 1} of {args.rounds} done, load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    wall_median = {name: statistics.median(values) for name, values in wall.items()}
    cpu_median = {name: statistics.median(values) for name, values in cpu.items()}
    lines = [
        "| build | wall s (median) | over `none` | build process CPU s (median) | over `none` |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name in configs:
        lines.append(
            f"| {name} | {wall_median[name]:.2f} | {wall_median[name] / wall_median['none'] - 1:+.1%} "
            f"| {cpu_median[name]:.2f} | {cpu_median[name] / cpu_median['none'] - 1:+.1%} |"
        )
    lines.append("")
    lines.append(
        f"thread against process, a first build: wall {wall_median['thread'] / wall_median['process']:.3f}, "
        f"build process CPU {cpu_median['thread'] / cpu_median['process']:.3f}"
    )
    if args.baseline:
        lines.append(
            f"this checkout against the baseline: cold wall {wall_median['process'] / wall_median['base-cold']:.3f}, "
            f"CPU {cpu_median['process'] / cpu_median['base-cold']:.3f}; warm wall "
            f"{wall_median['warm'] / wall_median['base-warm']:.3f}, CPU {cpu_median['warm'] / cpu_median['base-warm']:.3f}"
        )
    lines.append(
        f"corpus: {CORPUS.relative_to(REPO.parent)} ({len(list(CORPUS.rglob('*.md')))} Markdown pages), theme mkdocs; {args.rounds} rounds"
    )
    report = "\n".join(lines)
    print(report)
    write_results("writer_executor", report)


if __name__ == "__main__":
    main()
