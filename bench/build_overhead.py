"""What the vault-mcp plugin adds to `mkdocs build` on the FastAPI corpus, next to the built-in search plugin.

All 13 languages of the corpus are copied once into one docs_dir (bench/out/fastapi/docs/<lang>/), then
built in four configurations, round robin, each run a fresh `mkdocs build -q` subprocess into a fresh
site_dir. With `--rotate`, each round starts one configuration further on, so that no configuration always
holds the same place in the round (in one run here, the second of two `none` builds a round read 4.7% slower
than the first at the median):

  none          plugins: []
  search        plugins: [search]
  vault-cold    plugins: [vault-mcp], its cache dir deleted before the run (a first build)
  vault-warm    plugins: [vault-mcp], the cache left by the run before (the steady state of rebuilds)

  none-again    plugins: [] again: with --paired, the method's own noise floor

With `--baseline DIR` (a checkout of another commit, holding mkdocs_vault_mcp/), two more: `base-cold` and
`base-warm`, the same two builds importing the plugin from DIR (first on PYTHONPATH) with a cache dir of their
own, in the same rounds, so that both packages meet the same machine.

The baseline is `none`, measured in the same rounds; each configuration's ratio is the median of its
per-round ratios to `none`. Targets: vault-mcp adds at most 3% to a cold build and 1% to a warm one.

`--paired` runs each configuration at the same time as a `none` build instead of after it, the two pinned
to different CPUs (swapped every round), and takes the ratio within the pair. On this machine the speed of
both CPUs drifts by up to a quarter from one minute to the next; builds that run side by side meet the
same drift, so the ratio keeps only what the configuration adds. A build and everything it starts stay on
its one CPU: a cold build's writer process then competes with MkDocs for it, so a paired cold figure is
the plugin's whole CPU cost, an upper bound on what it adds to the wall time of a build on 2 CPUs.

`--metronome` takes the drift out instead, in time: beside the rounds, a small process runs the same few
milliseconds of pure Python (no memory to speak of) twice a second and notes the CPU seconds it took, which
grow and shrink with the CPUs' speed as the builds' do. Each build's wall time is divided by the mean of the
metronome's notes taken while it ran, and the ratios are taken of those drift-corrected times. The metronome
uses about 1% of a CPU; on a cold build, whose writer keeps the second CPU busy too, it takes that from the
build, so what it adds counts against vault-cold, not for it. `none-again` beside `none` shows whether the
correction leaves noise of its own.

    .venv/bin/python bench/build_overhead.py [--runs 3] [--configs none,vault-cold,vault-warm] [--paired | --metronome]
"""

from __future__ import annotations

import argparse
import atexit
import hashlib
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from report import describe, table, write_results  # bench/ is on sys.path when a script runs

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
CORPUS = REPO.parent / "shared" / "corpora" / "fastapi-docs"
OUT = BENCH / "out" / "fastapi"
RESULTS = BENCH / "results"
BASE_CACHE = ".cache/plugin/vault-mcp-base"  # the baseline's own, relative to the configs' folder
TARGET_ADDED = {"vault-cold": 0.03, "vault-warm": 0.01, "base-cold": 0.03, "base-warm": 0.01}

CONFIGS = {
    "none": "plugins: []",
    "none-again": "plugins: []",
    "search": "plugins:\n  - search",
    "vault-cold": "plugins:\n  - vault-mcp",
    "vault-warm": "plugins:\n  - vault-mcp",
    "base-cold": f"plugins:\n  - vault-mcp:\n      cache_dir: {BASE_CACHE}",
    "base-warm": f"plugins:\n  - vault-mcp:\n      cache_dir: {BASE_CACHE}",
}
CONFIG_FILE = {
    "none": "none.yml",
    "none-again": "none.yml",
    "search": "search.yml",
    "vault-cold": "vault.yml",
    "vault-warm": "vault.yml",
    "base-cold": "base.yml",
    "base-warm": "base.yml",
}
BASELINE_CONFIGS = {"base-cold", "base-warm"}


def package_snapshot(out: Path) -> tuple[Path, str]:
    """A frozen copy of the package source, put first on PYTHONPATH for every build of this run.

    The package is installed editable and may be edited while the benchmark runs; without the copy,
    rounds would measure different code.
    """
    source = REPO / "mkdocs_vault_mcp"
    digest = hashlib.blake2b(digest_size=6)
    files = sorted(p for p in source.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for file in files:
        digest.update(str(file.relative_to(source)).encode() + b"\0" + file.read_bytes() + b"\0")
    root = out / "package-snapshots" / digest.hexdigest()
    if not (root / "mkdocs_vault_mcp").is_dir():
        shutil.copytree(source, root / "mkdocs_vault_mcp", ignore=shutil.ignore_patterns("__pycache__"))
    return root, digest.hexdigest()


def source_state() -> str:
    """HEAD and how many package files differ from it, for the report."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True).stdout

    changed = [line[3:] for line in git("status", "--porcelain", "--", "mkdocs_vault_mcp").splitlines() if line]
    return f"HEAD {git('rev-parse', '--short', 'HEAD').strip()} + {len(changed)} uncommitted package paths"


def copy_corpus(corpus: Path, out: Path) -> int:
    """One docs_dir with every language under its own folder; copied once, reused by later runs."""
    docs = out / "docs"
    done = out / ".docs-complete"
    if not done.exists():
        shutil.rmtree(docs, ignore_errors=True)
        languages = sorted(p.name for p in corpus.iterdir() if (p / "docs").is_dir())
        for language in languages:
            shutil.copytree(corpus / language / "docs", docs / language)
        done.write_text("\n".join(languages) + "\n")
    return sum(1 for _ in docs.rglob("*.md"))


def write_configs(out: Path) -> None:
    for name, plugins in CONFIGS.items():
        text = f"site_name: FastAPI corpus (13 languages)\ndocs_dir: docs\ntheme:\n  name: mkdocs\n{plugins}\n"
        (out / CONFIG_FILE[name]).write_text(text)


def vault_cache(out: Path, config: str = "vault-cold") -> Path:
    return out / (BASE_CACHE if config in BASELINE_CONFIGS else ".cache/plugin/vault-mcp")


def imported_package(env: dict[str, str]) -> str:
    """Where a build with `env` imports the plugin from."""
    return subprocess.run(
        [sys.executable, "-c", "import mkdocs_vault_mcp; print(mkdocs_vault_mcp.__file__)"],
        env=env,
        cwd=OUT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def env_importing(env: dict[str, str], root: Path, what: str) -> dict[str, str]:
    """`env` with `root` first on PYTHONPATH, once a build with it is seen to import the plugin from there; `what`
    names `root` in the error that stops the benchmark otherwise."""
    found = dict(env, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    where = imported_package(found)
    if not where.startswith(str(root)):
        sys.exit(f"{Path(sys.argv[0]).stem}: {what} is not the one imported ({where})")
    return found


# The metronome: a beat (about 3 ms of CPU here) twice a second, a line "<monotonic s> <CPU s>" each.
# bench/writer_interference.py --foreground beat checks that the writer, busy beside it, does not slow the beat down
# (which would hide part of what a cold build costs).
BEAT_ADDITIONS = 40_000
METRONOME = f"""
import sys, time
sys.path.insert(0, {str(BENCH)!r})
from build_overhead import beat
out = open(sys.argv[1], "w", buffering=1)
while True:
    started = time.thread_time()
    beat()
    out.write(f"{{time.monotonic():.3f}} {{time.thread_time() - started:.6f}}\\n")
    time.sleep(0.5)
"""


def beat() -> None:
    """The metronome's unit of work: pure Python on a few local integers, next to no memory."""
    total = 0
    for number in range(BEAT_ADDITIONS):
        total += number


def start_metronome(beats: Path) -> subprocess.Popen:
    """The metronome, writing its beats to `beats` until the script that started it ends (a failed build ends this
    one with sys.exit)."""
    metronome = subprocess.Popen([sys.executable, "-c", METRONOME, str(beats)])
    atexit.register(metronome.kill)
    return metronome


def beat_seconds(beats: Path, start: float, end: float) -> float:
    """The mean CPU seconds of the metronome's beats between `start` and `end` (monotonic seconds)."""
    taken = [
        float(cpu)
        for when, cpu in (line.split() for line in beats.read_text().splitlines() if line.strip())
        if start <= float(when) <= end
    ]
    if not taken:
        sys.exit("build_overhead: the metronome noted nothing while a build ran")
    return statistics.fmean(taken)


def build(out: Path, config: str, site_dir: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one `mkdocs build` subprocess; a failed build stops the benchmark.

    CPU seconds (user + system of the child, all its threads and the processes it waited for) move less
    than wall seconds when other processes compete for the CPUs, so they back up the wall times.
    """
    return build_side_by_side(out, [(config, site_dir, None)], env)[0]


def build_side_by_side(
    out: Path, builds: list[tuple[str, Path, int | None]], env: dict[str, str]
) -> list[tuple[float, float]]:
    """(wall seconds, CPU seconds) of each (configuration, site_dir, CPU or None) build, all started at once."""
    mkdocs = str(REPO / ".venv" / "bin" / "mkdocs")
    running: dict[int, tuple[int, str, Path, float]] = {}
    for config, site_dir, cpu in builds:
        shutil.rmtree(site_dir, ignore_errors=True)
        site_dir.parent.mkdir(parents=True, exist_ok=True)  # a first run: no sites/ folder yet
        log = site_dir.with_name(site_dir.name + ".log")
        command = [mkdocs, "build", "-q", "-f", str(out / CONFIG_FILE[config]), "-d", str(site_dir)]
        pin = (lambda cpu=cpu: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
        with log.open("w") as stderr:  # a file, not a pipe: nobody reads while both builds run
            child = subprocess.Popen(
                command, cwd=out, env=env, stdout=subprocess.DEVNULL, stderr=stderr, preexec_fn=pin
            )
        running[child.pid] = (len(running), config, log, time.perf_counter())
    results: list[tuple[float, float]] = [(0.0, 0.0)] * len(builds)
    while running:
        pid, status, usage = os.wait4(-1, 0)
        if pid not in running:
            continue
        index, config, log, start = running.pop(pid)
        results[index] = (time.perf_counter() - start, usage.ru_utime + usage.ru_stime)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"build_overhead: {config} build failed ({status}):\n{log.read_text()[-4000:]}")
        log.unlink()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed builds per configuration (default 3)")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="fastapi-docs folder (holds <lang>/docs)")
    parser.add_argument("--no-warmup", action="store_true", help="skip the untimed first build")
    parser.add_argument(
        "--paired",
        action="store_true",
        help="build each configuration beside a `none` build, on the other CPU (see above)",
    )
    parser.add_argument("--name", help="the results file's name (default build_overhead, or build_overhead_paired)")
    parser.add_argument(
        "--metronome",
        action="store_true",
        help="divide each build's wall time by the CPUs' speed while it ran (see above)",
    )
    parser.add_argument(
        "--rotate", action="store_true", help="start each round one configuration further on (see above)"
    )
    parser.add_argument(
        "--baseline", type=Path, help="a checkout whose plugin is built too, in the same rounds (base-cold, base-warm)"
    )
    parser.add_argument(
        "--configs",
        default=",".join(name for name in CONFIGS if name != "none-again"),
        help="the configurations to build, in this order each round (with --rotate, starting one "
        f"further on each round; default {','.join(CONFIGS)})",
    )
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be 1 or more")
    configs = args.configs.split(",")
    if args.baseline and not set(configs) & BASELINE_CONFIGS:
        configs += sorted(BASELINE_CONFIGS)
    if "none" not in configs or not set(configs) <= set(CONFIGS):
        parser.error(f"--configs must hold none and only these: {', '.join(CONFIGS)}")
    if set(configs) & BASELINE_CONFIGS and not args.baseline:
        parser.error("base-cold and base-warm need --baseline DIR")
    if args.baseline and not (args.baseline / "mkdocs_vault_mcp").is_dir():
        parser.error(f"--baseline {args.baseline}: no mkdocs_vault_mcp/ in it")
    if args.paired and len(os.sched_getaffinity(0)) < 2:
        parser.error("--paired needs 2 CPUs")
    if args.paired and args.metronome:
        parser.error("--paired and --metronome are two ways to take the drift out: choose one")
    command_line = "python " + " ".join(shlex.quote(a) for a in [os.path.relpath(__file__, REPO), *sys.argv[1:]])

    OUT.mkdir(parents=True, exist_ok=True)
    pages = copy_corpus(args.corpus, OUT)
    write_configs(OUT)
    snapshot, digest = package_snapshot(OUT)
    state = source_state()
    env = env_importing(dict(os.environ, NO_MKDOCS_2_WARNING="1"), snapshot, "the package snapshot")
    env_of = dict.fromkeys(configs, env)
    if args.baseline:
        env_of.update(dict.fromkeys(BASELINE_CONFIGS, env_importing(env, args.baseline.resolve(), "the baseline")))
    sites = OUT / "sites"
    sites.mkdir(exist_ok=True)  # a fresh checkout has none: the builds' logs go beside their site_dirs

    if not args.no_warmup:
        # Untimed: fills the OS file cache and writes bytecode, so run 1 is not the odd one out.
        print("warm-up build (untimed) ...", flush=True)
        build(OUT, "vault-cold", sites / "warmup", env)
        if args.baseline:
            build(OUT, "base-cold", sites / "warmup", env_of["base-cold"])

    seconds: dict[str, list[float]] = {name: [] for name in configs}
    cpu: dict[str, list[float]] = {name: [] for name in configs}
    # Paired: the none build run beside each configuration, its own baseline.
    baseline_of: dict[str, dict[str, list[float]]] = {
        "seconds": {name: [] for name in configs},
        "cpu": {name: [] for name in configs},
    }
    cpus = sorted(os.sched_getaffinity(0))[:2]
    windows: dict[str, list[tuple[float, float]]] = {name: [] for name in configs}  # monotonic start and end
    beats = OUT / "metronome.txt"
    metronome = start_metronome(beats) if args.metronome else None
    for run in range(1, args.runs + 1):
        start = (run - 1) % len(configs) if args.rotate else 0
        for turn, name in enumerate(configs[start:] + configs[:start]):
            if name in ("vault-cold", "base-cold"):
                shutil.rmtree(vault_cache(OUT, name), ignore_errors=True)
            if not args.paired:
                started = time.monotonic()
                wall, used = build(OUT, name, sites / name, env_of[name])
                windows[name].append((started, time.monotonic()))
                print(f"round {run}/{args.runs}  {name:<10}  {wall:7.2f} s wall  {used:7.2f} s CPU", flush=True)
            elif name == "none":
                continue
            else:
                cpu_of_none, cpu_of_config = cpus if (run + turn) % 2 else cpus[::-1]
                (base_wall, base_used), (wall, used) = build_side_by_side(
                    OUT,
                    [("none", sites / f"none-beside-{name}", cpu_of_none), (name, sites / name, cpu_of_config)],
                    env_of[name],
                )
                baseline_of["seconds"][name].append(base_wall)
                baseline_of["cpu"][name].append(base_used)
                print(
                    f"round {run}/{args.runs}  {name:<10}  {wall:7.2f} s wall  {used:7.2f} s CPU "
                    f"(CPU {cpu_of_config})  beside none {base_wall:7.2f} s wall  {base_used:7.2f} s CPU "
                    f"(CPU {cpu_of_none})",
                    flush=True,
                )
            seconds[name].append(wall)
            cpu[name].append(used)
    shutil.rmtree(sites / "warmup", ignore_errors=True)
    corrected: dict[str, list[float]] = {}  # wall seconds over the metronome's beat while the build ran
    if metronome is not None:
        corrected = {
            name: [
                wall / beat_seconds(beats, *window) for wall, window in zip(seconds[name], windows[name], strict=True)
            ]
            for name in configs
        }
    if args.paired:
        for kind, samples in (("seconds", seconds), ("cpu", cpu)):
            samples["none"] = [value for name in configs if name != "none" for value in baseline_of[kind][name]]

    def ratio(samples: dict[str, list[float]], name: str) -> float:
        if name == "none":
            return 1.0
        kind = "cpu" if samples is cpu else "seconds"
        baseline = baseline_of[kind][name] if args.paired else samples["none"]
        return statistics.median(r / b for r, b in zip(samples[name], baseline, strict=True))

    rows = [
        [
            "configuration",
            "median s",
            "min s",
            "runs (wall s)",
            "ratio vs none",
            "added",
            "CPU median s",
            "CPU ratio",
            "CPU added",
        ]
    ]
    for name, runs in seconds.items():
        wall_ratio, cpu_ratio = ratio(seconds, name), ratio(cpu, name)
        rows.append(
            [
                name,
                f"{statistics.median(runs):.2f}",
                f"{min(runs):.2f}",
                " ".join(f"{r:.1f}" for r in runs),
                f"{wall_ratio:.3f}",
                f"{(wall_ratio - 1) * 100:+.1f}%",
                f"{statistics.median(cpu[name]):.2f}",
                f"{cpu_ratio:.3f}",
                f"{(cpu_ratio - 1) * 100:+.1f}%",
            ]
        )
    drift_rows = [["configuration", "per-round ratios to none, drift-corrected", "median", "added"]]
    for name in corrected:
        per_round = [r / b for r, b in zip(corrected[name], corrected["none"], strict=True)]
        drift_rows.append(
            [
                name,
                " ".join(f"{r:.3f}" for r in per_round),
                f"{statistics.median(per_round):.3f}",
                f"{(statistics.median(per_round) - 1) * 100:+.1f}%",
            ]
        )
    verdicts = []
    for name, target in TARGET_ADDED.items():
        if name not in configs:
            continue
        added = ratio(seconds, name) - 1
        verdict = "meets" if added <= target else "MISSES"
        verdicts.append(
            f"{name}: adds {added * 100:+.1f}% wall ({(ratio(cpu, name) - 1) * 100:+.1f}% CPU) -> "
            f"{verdict} the target of at most {target * 100:.0f}% (wall)"
        )
        if corrected:
            added = ratio(corrected, name) - 1
            verdict = "meets" if added <= target else "MISSES"
            verdicts.append(f"{name}: adds {added * 100:+.1f}% wall, drift-corrected -> {verdict} the target")
    load = os.getloadavg()
    busy = max(load) > (os.cpu_count() or 1)
    verdicts.append(
        f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs"
        + (" (above the CPU count: other processes competed, trust the CPU columns more)" if busy else "")
    )

    report = "\n".join(
        [
            f"command: {command_line}",
            f"corpus: {pages} Markdown pages, 13 languages in one docs_dir ({os.path.relpath(OUT / 'docs', REPO)}),"
            " theme mkdocs; every run a fresh `mkdocs build -q` subprocess into a fresh site_dir",
            f"package: source digest {digest} ({state}); builds import a frozen copy of it",
            *(
                [
                    f"baseline (base-cold, base-warm): the plugin from {os.path.relpath(args.baseline.resolve(), REPO)} "
                    f"at {describe(args.baseline).split()[0]}"
                ]
                if args.baseline
                else []
            ),
            f"machine: Python {platform.python_version()}, {os.cpu_count()} CPUs, {platform.platform()}",
            (
                f"rounds: {args.runs}, each configuration built at the same time as a none build, the two pinned to "
                "different CPUs (swapped every round); ratio = median of the pairs' ratios"
                if args.paired
                else f"rounds: {args.runs} (round robin {' -> '.join(configs)}"
                f"{', each round starting one further on' if args.rotate else ''});"
                " ratio = median of per-round ratios to none"
            )
            + "; CPU = user + system seconds of the build process and of its writer process",
            "",
            table(rows),
            "",
            *(
                [
                    "drift-corrected: each build's wall time over the mean CPU seconds of the metronome's beats while it ran",
                    "",
                    table(drift_rows),
                    "",
                ]
                if corrected
                else []
            ),
            *verdicts,
            "",
        ]
    )
    print()
    print(report)
    write_results(args.name or ("build_overhead_paired" if args.paired else "build_overhead"), report)


if __name__ == "__main__":
    main()
