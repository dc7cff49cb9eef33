"""Does the index writer, busy on the other CPU, slow MkDocs' own thread down?

    .venv/bin/python bench/writer_interference.py [--trials 60] [--pages 100] [--foreground markdown|beat]

A cold build's writer process works on the second CPU while MkDocs renders on the first, so its CPU is not on
the build's critical path; but the two CPUs share caches and memory bandwidth, and this machine's CPUs are
virtual. Wall-clock builds cannot show an effect of a few percent here (a bare build's per-round ratios move by
±10%), so this script measures it directly, in trials of about a second:

- in the foreground, MkDocs' main work: Markdown to HTML (the extensions MkDocs enables by default, those of
  bench/out/fastapi/none.yml) over the first `--pages` pages of the FastAPI corpus, timed by wall clock and by
  this thread's CPU;
- in the background, one process, stopped (SIGSTOP) or running (SIGCONT) from one trial to the next, the order
  swapped every pair:
  - `writer`: the plugin's writer replayed over the 1,643 captured pages (bench/plugin_steps.py's replay: the
    documents, the inserts and FTS5, the commit), again and again;
  - `busy loop`: a Python loop that touches almost no memory: a second CPU in use, nothing more.

The ratio of a pair (running / stopped) is what the background costs MkDocs' thread while it runs; the medians
over `--trials` pairs are reported.

`--foreground beat` times bench/build_overhead.py's metronome beat instead (100 beats a trial, written to
bench/results/speed/writer_interference_beat.json): `--metronome` divides a build's time by the beat's, so a beat
the writer slowed down would hide part of what a cold build costs; a ratio near 1 says it does not.

bench/plugin_steps.py must have captured the pages (it does on its first run).
"""

from __future__ import annotations

import argparse
import functools
import os
import pickle
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import markdown

from build_overhead import beat  # bench/ is on sys.path when a script runs
from report import table, write_results

BENCH = Path(__file__).resolve().parent
PAGES = BENCH / "out" / "fastapi" / "pages.pickle"
WRITER_LOOP = f"""
import pickle, sys, tempfile
from pathlib import Path
sys.path[:0] = [{str(BENCH)!r}, {str(BENCH.parent)!r}]
from plugin_steps import replay
pages = pickle.load(open({str(PAGES)!r}, "rb"))
print("ready", flush=True)
while True:
    with tempfile.TemporaryDirectory() as cache:
        replay(pages, Path(cache), in_process=False)
"""
BUSY_LOOP = "print('ready', flush=True)\nwhile True: pass\n"
BACKGROUNDS = {"writer": WRITER_LOOP, "busy loop": BUSY_LOOP}


def render(texts: list[str]) -> tuple[float, float]:
    """Wall and thread CPU seconds of converting every text, as MkDocs does a page's Markdown."""
    converter = markdown.Markdown(extensions=["toc", "tables", "fenced_code"])
    wall, cpu = time.perf_counter(), time.thread_time()
    for text in texts:
        converter.reset().convert(text)
    return time.perf_counter() - wall, time.thread_time() - cpu


def beats(count: int) -> tuple[float, float]:
    """Wall and thread CPU seconds of `count` metronome beats (bench/build_overhead.py), back to back."""
    wall, cpu = time.perf_counter(), time.thread_time()
    for _ in range(count):
        beat()
    return time.perf_counter() - wall, time.thread_time() - cpu


def paired_trials(code: str, foreground: Callable[[], tuple[float, float]], trials: int) -> list[tuple[float, float]]:
    """(wall ratio, CPU ratio) of each pair: the background running against it stopped."""
    background = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert background.stdout is not None and background.stdout.readline().strip() == "ready"
        time.sleep(1)  # past the first pages of its first pass
        pairs = []
        for trial in range(trials):
            measured = {}
            for running in (True, False) if trial % 2 else (False, True):
                background.send_signal(signal.SIGCONT if running else signal.SIGSTOP)
                time.sleep(0.2)  # the background back at full speed, or off the CPU
                measured[running] = foreground()
            pairs.append((measured[True][0] / measured[False][0], measured[True][1] / measured[False][1]))
        return pairs
    finally:
        background.send_signal(signal.SIGCONT)
        background.kill()
        background.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--foreground", choices=("markdown", "beat"), default="markdown")
    args = parser.parse_args()
    if not PAGES.is_file():
        raise SystemExit(f"{PAGES} is missing: run bench/plugin_steps.py first (it captures the pages)")
    with PAGES.open("rb") as file:
        texts = [page["markdown"] for page in pickle.load(file)][: args.pages]
    if args.foreground == "beat":
        foreground: Callable[[], tuple[float, float]] = functools.partial(beats, 100)
        described, victim = "100 beats of bench/build_overhead.py's metronome, back to back", "the metronome's beat"
    else:
        foreground = functools.partial(render, texts)
        described = f"Markdown to HTML of {len(texts)} FastAPI pages (extensions toc, tables, fenced_code)"
        victim = "MkDocs' thread"
    foreground()  # imports and caches warm
    rows = [["background", "wall ratio median", "wall mean ± s.e.", "CPU ratio median", "CPU mean ± s.e."]]
    for name, code in BACKGROUNDS.items():
        pairs = paired_trials(code, foreground, args.trials)
        cells = [name]
        for column in (0, 1):
            ratios = [pair[column] for pair in pairs]
            error = statistics.stdev(ratios) / len(ratios) ** 0.5
            cells += [f"{statistics.median(ratios):.3f}", f"{statistics.mean(ratios):.3f} ± {error:.3f}"]
        rows.append(cells)
    text = (
        "\n".join(
            [
                f"foreground: {described}, wall and thread CPU",
                f"trials: {args.trials} pairs per background, background running vs stopped (SIGCONT / SIGSTOP), "
                "order swapped every pair",
                f"machine: {os.cpu_count()} CPUs, load average at the end {os.getloadavg()[0]:.1f}",
                "",
                table(rows),
                "",
                f"ratio: {victim} with the background running over the same work with it stopped",
            ]
        )
        + "\n"
    )
    print(text, end="")
    write_results("writer_interference_beat" if args.foreground == "beat" else "writer_interference", text)


if __name__ == "__main__":
    main()
