"""What vault-mcp adds to `mkdocs build` of small real sites, each with its own configuration (<= 5%).

    .venv/bin/python bench/small_sites.py --site NAME=PATH/mkdocs.yml [--site ...] [--runs 3] \
        [--venv bench/out/sites-venv] [--on-path NAME] [--name small_sites]

PATH is a local copy of the site's repository (a `git clone` under bench/out/ of a mirror got with the
`fetch` tool, so its git history is there: the plugin reads it), whose mkdocs.yml builds as it is with the
packages of `--venv` (default: the project's .venv). The sites' own requirements (mkdocstrings, mkautodoc and
the package it documents, redirects, ...) are not the project's: they go in a bench-only venv under bench/out/
with this project installed in it too (`pip install -e .`). `--on-path NAME` puts that site's folder on
PYTHONPATH, as the `python -m mkdocs build` its project runs from there would (pymdown-extensions' docs
import `tools.*`). Each site's commit and commit count are listed under the table. Per site, round robin, each
a fresh `mkdocs build` subprocess into a fresh site_dir; each round starts one configuration further on (a cold
build and its warm one stay together), so that none always runs first:

- `none`: the site's own mkdocs.yml (its own plugins, without vault-mcp)
- `none-again`: the same build once more, elsewhere in the round: its ratio to `none` is the noise floor, what the
  ratios of two identical builds spread over on this machine
- `vault-cold`: the same with vault-mcp added to its plugins (a file beside it that INHERITs it), the plugin's
  cache deleted first
- `vault-warm`: the same, the cache of the build before kept (the steady state of repeated builds)
- with `--baseline DIR` (a checkout of another commit, such as main's): `base-cold` and `base-warm`, the same two
  builds importing the plugin from DIR (put first on PYTHONPATH), in the same rounds, so that both packages meet
  the same load; reported as a second row per site

Reported per site: median wall and CPU seconds (user + system, all threads of every process of the build: the
writer process, started by a fork server the build never waits for, is adopted and waited for here,
report.reap_descendants) and their ratio to the same round's `none` build, and the plugin's own seconds from its
closing log line. With `--metronome`, two more columns: the wall ratios with each build's time divided by the CPUs'
speed while it ran (bench/build_overhead.py's metronome, beside the builds). Under the table, how far the rounds
spread: the quartiles of each ratio, beside those of the bare build run twice (the noise floor); each median ratio
with its 90% bootstrap interval, how far the median itself may be off with this many rounds; and each kind's best
of the rounds (its fastest build) over the bare build's best, the measure first reported ("best of 2"). One untimed
build of each configuration comes first. Writes bench/results/speed/small_sites.json (`--name`: another name, such
as a baseline's).

`--cpu N` runs every build on CPU N alone (its affinity, inherited by its threads and by git): the builds compared
then all run on the same one of this machine's two virtual CPUs, whose speeds drift apart. Pinned, the plugin's git
thread and its writer share the build's CPU instead of using the other one (a cold build writes on a thread, with
no second CPU for a writer process), so a pinned ratio is an upper bound of what the plugin adds. It leaves the
metronome, which times the other CPU, out.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import time
from pathlib import Path
from typing import Literal

import yaml

from build_overhead import beat_seconds, start_metronome  # bench/ is on sys.path when a script runs
from report import adopt_orphans, describe, reap_descendants, write_results

REPO = Path(__file__).resolve().parent.parent
PLUGIN_LINE = re.compile(r"vault-mcp: Indexed .* in ([\d.]+) seconds")


class TolerantLoader(yaml.SafeLoader):
    """Reads a mkdocs.yml's plugin list whatever tags (`!ENV`, `!relative`, `!!python/name`) it uses elsewhere."""


TolerantLoader.add_multi_constructor("", lambda loader, suffix, node: None)
TolerantLoader.add_multi_constructor("!", lambda loader, suffix, node: None)


def with_vault(config: Path) -> Path:
    """A config beside `config` that inherits it and adds vault-mcp after its plugins."""
    settings = yaml.load(config.read_text(encoding="utf-8"), TolerantLoader) or {}
    plugins = settings.get("plugins") or ["search"]  # MkDocs' default when the key is absent
    if isinstance(plugins, dict):
        plugins = [{name: options} if options else name for name, options in plugins.items()]
    child = config.with_name("vault-bench.yml")
    child.write_text(yaml.safe_dump({"INHERIT": config.name, "plugins": [*plugins, "vault-mcp"]}, sort_keys=False))
    return child


def build_env(commands: Path) -> dict[str, str]:
    """The environment of a measured build: this one, without MkDocs 2's notice, writing bytecode, and with the
    venv's `commands` folder first on PATH, as in a shell that activated it (a site's hook may run one: uvicorn's
    docs run `uvicorn --help`). An installed package comes byte-compiled; an editable one is compiled by its first
    import, unless this shell forbids it: then every build would compile the plugin's modules again."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PATH"] = os.pathsep.join([str(commands), os.environ.get("PATH", "")])
    return env


class BuildFailed(Exception):
    """A site that does not build with this venv's packages: reported in its row, the others still measured."""


def build(mkdocs: Path, config: Path, site_dir: Path, env: dict[str, str]) -> tuple[float, float, float | None]:
    """(wall seconds, CPU seconds, the plugin's own seconds or None) of one build; a failed build stops here."""
    shutil.rmtree(site_dir, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [str(mkdocs), "build", "-f", str(config), "-d", str(site_dir)],
        cwd=config.parent,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    reap_descendants()  # the writer and its fork server: their CPU is the build's
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1:] or [f"status {done.returncode}"]
        raise BuildFailed(f"building {config.name} failed: {last[0]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    plugin = PLUGIN_LINE.search(done.stderr)
    return wall, cpu, float(plugin.group(1)) if plugin else None


def plugin_package(mkdocs: Path, env: dict[str, str] | None = None) -> str:
    """Which copy of the plugin the builds import (PYTHONPATH may choose another than the venv's), at which commit."""
    where = "import mkdocs_vault_mcp; print(mkdocs_vault_mcp.__file__)"
    done = subprocess.run(
        [str(mkdocs.with_name("python")), "-c", where], capture_output=True, text=True, cwd="/", env=env
    )
    folder = Path(done.stdout.strip()).parent.parent
    return f"{os.path.relpath(folder, REPO)} at {describe(folder).split()[0]}"


# A build's results by kind, one a round: wall, CPU and plugin seconds, and the wall seconds drift-corrected or None
Samples = dict[str, list[tuple[float, float, float | None, float | None]]]


def round_ratios(samples: Samples, kind: str, column: Literal[0, 1, 3]) -> list[float]:
    """A kind's wall (0), CPU (1) or drift-corrected wall (3) seconds over those of the same round's `none`."""
    pairs = [(s[column], n[column]) for s, n in zip(samples[kind], samples["none"], strict=True)]
    return [seconds / baseline for seconds, baseline in pairs if seconds and baseline]


def ratio(samples: Samples, kind: str, column: Literal[0, 1, 3]) -> float:
    """The median of round_ratios."""
    return statistics.median(round_ratios(samples, kind, column))


def spread(samples: Samples, kind: str, column: Literal[0, 1, 3]) -> str:
    """The lower quartile, median and upper quartile of round_ratios, as percentages."""
    ratios = round_ratios(samples, kind, column)
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    return " / ".join(f"{100 * (value - 1):+.1f}%" for value in quartiles)


def interval(samples: Samples, kind: str, column: Literal[0, 1, 3], resamples: int = 2000) -> str:
    """The median of round_ratios and its 90% bootstrap interval (the rounds drawn again with replacement,
    seeded, so a rerun of the script on the same samples prints the same), as percentages."""
    ratios = round_ratios(samples, kind, column)
    draw = random.Random(0)
    medians = sorted(statistics.median(draw.choices(ratios, k=len(ratios))) for _ in range(resamples))
    low, high = medians[int(0.05 * resamples)], medians[int(0.95 * resamples) - 1]
    return f"{100 * (statistics.median(ratios) - 1):+.1f}% [{100 * (low - 1):+.1f}%, {100 * (high - 1):+.1f}%]"


def best(samples: Samples, kind: str, column: Literal[0, 1]) -> str:
    """A kind's fastest build over the fastest `none` build, as a percentage."""
    fastest = min(s[column] for s in samples[kind])
    return f"{100 * (fastest / min(n[column] for n in samples['none']) - 1):+.1f}%"


def plugin(samples: Samples, kind: str) -> str:
    seconds = [s[2] for s in samples[kind] if s[2] is not None]
    none_wall = statistics.median(n[0] for n in samples["none"])
    median = statistics.median(seconds)
    return f"{median:.3f} s ({100 * median / none_wall:.1f}%)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", action="append", required=True, help="NAME=PATH/mkdocs.yml")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--venv", type=Path, default=REPO / ".venv", help="the venv whose mkdocs builds the sites")
    parser.add_argument(
        "--on-path", action="append", default=[], metavar="NAME", help="put this site's folder on PYTHONPATH"
    )
    parser.add_argument("--name", default="small_sites", help="the results file's name")
    parser.add_argument("--baseline", type=Path, help="a checkout whose plugin is built too, in the same rounds")
    parser.add_argument(
        "--metronome", action="store_true", help="also the wall ratios divided by the CPUs' speed while each build ran"
    )
    parser.add_argument("--cpu", type=int, help="run every build on this CPU alone")
    args = parser.parse_args()
    adopt_orphans()
    if args.cpu is not None:
        if args.metronome:
            parser.error("--cpu leaves no CPU for the builds' metronome: choose one of --cpu and --metronome")
        os.sched_setaffinity(0, {args.cpu})  # inherited by every build, its threads and the processes it starts
    # The editable install of the venv must be a path entry (`pip install -e . --config-settings
    # editable_mode=compat`), else its import hook wins over PYTHONPATH and both rows would build this package.
    base_path = {"PYTHONPATH": str(args.baseline.resolve())} if args.baseline else None
    mkdocs = args.venv.resolve() / "bin" / "mkdocs"
    origins = []
    corrected_columns = " cold wall, drift-corrected | warm wall, drift-corrected |" if args.metronome else ""
    lines = [
        f"load average before: {os.getloadavg()[0]:.1f}",
        "",
        "| site | pages | none wall | cold wall | warm wall | cold CPU | warm CPU | plugin cold | plugin warm |"
        + corrected_columns,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |" + " ---: |" * (2 * args.metronome),
    ]
    beats = REPO / "bench" / "out" / "small-sites" / args.name / "metronome.txt"
    beats.parent.mkdir(parents=True, exist_ok=True)
    metronome = start_metronome(beats) if args.metronome else None
    spreads: list[str] = []  # the quartiles under the table: a line per row and measure
    bests: list[str] = []  # each kind's fastest build over the bare build's fastest: a line per row
    intervals: list[str] = []  # each median ratio with its bootstrap interval: a line per row and measure
    for spec in args.site:
        name, _, path = spec.partition("=")
        config = Path(path).resolve()
        vault = with_vault(config)
        cache = config.parent / ".cache" / "plugin" / "vault-mcp"
        out = REPO / "bench" / "out" / "small-sites" / args.name / name  # runs of other names may build meanwhile
        samples: Samples = {"none": [], "none-again": [], "vault-cold": [], "vault-warm": []}
        if base_path:
            samples |= {"base-cold": [], "base-warm": []}
        env = build_env(mkdocs.parent)
        if name in args.on_path:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(config.parent), env.get("PYTHONPATH")]))
        origins.append(f"{name}: {describe(config.parent)}")
        try:
            units = [
                ["none"],
                ["vault-cold", "vault-warm"],
                ["none-again"],
                *([["base-cold", "base-warm"]] if base_path else []),
            ]
            for round_number in range(args.runs + 1):  # round 0 is the untimed warm-up
                # A build runs a little slower or faster for what ran just before it (caches, the CPUs' clock):
                # run in a fixed order, that bias falls on the same configurations in every round.
                shift = round_number % len(units)
                for kind in [kind for unit in units[shift:] + units[:shift] for kind in unit]:
                    if kind.endswith("-cold"):
                        shutil.rmtree(cache, ignore_errors=True)
                    kind_env = env
                    if kind.startswith("base-") and base_path:  # before the site's own folder (--on-path)
                        kind_env = {
                            **env,
                            "PYTHONPATH": os.pathsep.join(
                                filter(None, [base_path["PYTHONPATH"], env.get("PYTHONPATH")])
                            ),
                        }
                    started = time.monotonic()
                    wall, cpu, plugin_seconds = build(
                        mkdocs, config if kind.startswith("none") else vault, out / kind, kind_env
                    )
                    corrected = wall / beat_seconds(beats, started, time.monotonic()) if metronome else None
                    if round_number:
                        samples[kind].append((wall, cpu, plugin_seconds, corrected))
        except BuildFailed as error:
            vault.unlink()
            lines.append(f"| {name} | {error} | | | | | | | |")
            print(lines[-1], flush=True)
            continue
        pages = sum(1 for _ in (out / "none").rglob("index.html"))
        measures: list[tuple[str, Literal[0, 1, 3]]] = [("wall", 0), ("CPU", 1)]
        if metronome:
            measures.append(("drift-corrected", 3))
        for prefix, label in [("vault", name), *([("base", f"{name} (baseline)")] if base_path else [])]:
            lines.append(
                f"| {label} | {pages} | {statistics.median(n[0] for n in samples['none']):.2f} s "
                f"| {100 * (ratio(samples, f'{prefix}-cold', 0) - 1):+.1f}% "
                f"| {100 * (ratio(samples, f'{prefix}-warm', 0) - 1):+.1f}% "
                f"| {100 * (ratio(samples, f'{prefix}-cold', 1) - 1):+.1f}% "
                f"| {100 * (ratio(samples, f'{prefix}-warm', 1) - 1):+.1f}% "
                f"| {plugin(samples, f'{prefix}-cold')} | {plugin(samples, f'{prefix}-warm')} |"
                + (
                    f" {100 * (ratio(samples, f'{prefix}-cold', 3) - 1):+.1f}% "
                    f"| {100 * (ratio(samples, f'{prefix}-warm', 3) - 1):+.1f}% |"
                    if metronome
                    else ""
                )
            )
            print(lines[-1], flush=True)
            for measure, column in measures:
                spreads.append(
                    f"{label}, {measure}: bare again {spread(samples, 'none-again', column)}; "
                    f"cold {spread(samples, f'{prefix}-cold', column)}; "
                    f"warm {spread(samples, f'{prefix}-warm', column)}"
                )
                intervals.append(
                    f"{label}, {measure}: bare again {interval(samples, 'none-again', column)}; "
                    f"cold {interval(samples, f'{prefix}-cold', column)}; "
                    f"warm {interval(samples, f'{prefix}-warm', column)}"
                )
            bests.append(
                f"{label}: bare again {best(samples, 'none-again', 0)} wall, "
                f"{best(samples, 'none-again', 1)} CPU; cold {best(samples, f'{prefix}-cold', 0)} wall, "
                f"{best(samples, f'{prefix}-cold', 1)} CPU; warm {best(samples, f'{prefix}-warm', 0)} wall, "
                f"{best(samples, f'{prefix}-warm', 1)} CPU"
            )
        vault.unlink()
    built = f"built with {os.path.relpath(mkdocs, REPO)}, plugin {plugin_package(mkdocs)}"
    if args.cpu is not None:
        built += f"; every build on CPU {args.cpu} alone"
    if base_path:
        built += f"; baseline rows: plugin {plugin_package(mkdocs, {**os.environ, **base_path})}"
    lines += [
        "",
        "quartiles of each ratio over the rounds (lower / median / upper); `bare again`: the bare build "
        "run twice in a round, the second against the first, what two identical builds read here:",
        "",
        *spreads,
    ]
    lines += [
        "",
        "each median ratio and its 90% bootstrap interval (where the median of rounds like these falls 9 times in 10):",
        "",
        *intervals,
    ]
    lines += ["", f"best of {args.runs}: each kind's fastest build over the fastest bare build:", "", *bests]
    lines += ["", f"sites: {'; '.join(origins)}; {built}"]
    lines += [
        "",
        f"load average after: {os.getloadavg()[0]:.1f}; medians of {args.runs} rounds; ratios to the same "
        "round's build without vault-mcp; plugin: its own seconds (closing log line), and as a share of the "
        "median build without it",
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    write_results(args.name, text)


if __name__ == "__main__":
    main()
