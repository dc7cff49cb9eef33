"""What vault-mcp adds to `mkdocs build` of small real sites, counted in instructions (<= 5%).

    .venv/bin/python bench/build_instructions.py --site NAME=PATH/mkdocs.yml [--site ...] \
        [--venv bench/out/sites-venv] [--baseline DIR] [--cache-sim] [--name build_instructions]

The same builds as bench/small_sites.py (`none`, `vault-cold`, `vault-warm`, and with `--baseline DIR` the same two
importing the plugin from DIR), each run once under valgrind (`--tool=cachegrind --cache-sim=no
--trace-children=yes`, one log per process), which counts the instructions every process executes. A wall-clock
ratio of a 3-second build moves by more than 5% from one run to the next on a shared machine whose CPUs change speed
(see small_sites' results); an instruction count of the same build moves by less than 0.5% (`none` runs twice to
show it), so it can tell a few percent apart. It counts work, not time:

- `build process`: every thread of the `mkdocs build` process (MkDocs, the plugin's events, the git history's
  thread, the writer's thread). Work on another thread is counted in full, though part of it runs beside MkDocs
  (SQLite and git release the GIL), so this is the most the plugin can add to the build's own CPU;
- `other processes`: git's, and the writer's process (a first build of PAGES_FOR_A_PROCESS pages or more) where it is
  a new Python, which run on another CPU beside the build when there is one;
- `forked`: how many children the build forked (in earlier versions the writer's process and a first git read;
  none now: the writer's process comes from a fork server). Their instructions are in neither column:
  valgrind's count in a forked child goes on from its
  parent's at the fork, so it cannot tell the child's own work. Their CPU seconds, which start from zero in a
  child, are small_site_steps.py's. They add to the machine's work, not to the build's thread.

The ratios are to the `none` build's process. PYTHONHASHSEED=0 for every build (set and string order decide some
work). Writes bench/results/speed/build_instructions.json (`--name`: another name). Takes about a minute a build.

Instructions are not cycles: code that misses the caches (a module imported, memory touched for the first time)
takes more cycles an instruction than MkDocs' steady rendering. `--cache-sim` has valgrind simulate the caches
(L1, and as last level the host's, as valgrind reads it) and counts, instead of instructions, KCachegrind's cycle
estimate: instructions + 10 x first-level misses + 100 x last-level misses. Still deterministic; three times as slow.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from report import describe, write_results  # bench/ is on sys.path when a script runs
from small_sites import REPO, build_env, plugin_package, with_vault

VALGRIND = ["valgrind", "--tool=cachegrind", "--trace-children=yes", "--cachegrind-out-file=/dev/null"]
INSTRUCTIONS = re.compile(r"I\s+refs:\s+([\d,]+)")
FIRST_LEVEL_MISSES = re.compile(r"LL refs:\s+([\d,]+)")  # what missed L1 (instructions and data) went on to LL
LAST_LEVEL_MISSES = re.compile(r"LL misses:\s+([\d,]+)")
PARENT = re.compile(r"Parent PID:\s+(\d+)")
BUILD_COMMAND = " build -q -f "  # in the command line a valgrind log starts with


def number(pattern: re.Pattern[str], text: str) -> int:
    found = pattern.search(text)
    assert found is not None, f"no {pattern.pattern!r} in a valgrind log"
    return int(found.group(1).replace(",", ""))


def count(python: Path, mkdocs: Path, config: Path, env: dict[str, str], cache_sim: bool) -> tuple[int, int, int]:
    """(instructions of the build's own process, of every other program it started, how many children it forked)
    for one `mkdocs build`, or with `cache_sim` their estimated cycles."""
    with tempfile.TemporaryDirectory() as scratch:
        logs = Path(scratch) / "logs"
        logs.mkdir()
        done = subprocess.run(
            [
                *VALGRIND,
                f"--cache-sim={'yes' if cache_sim else 'no'}",
                f"--log-file={logs}/%p.log",
                str(python),
                str(mkdocs),
                "build",
                "-q",
                "-f",
                str(config),
                "-d",
                str(Path(scratch) / "site"),
            ],
            cwd=config.parent,
            env=env,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise SystemExit(f"building {config} failed: {done.stderr.strip().splitlines()[-1:]}")
        texts = {int(log.stem): log.read_text(encoding="utf-8", errors="replace") for log in logs.iterdir()}
        own = others = forked = 0
        for text in texts.values():
            if INSTRUCTIONS.search(text) is None:  # a process that exec'd another program: counted under that one's log
                continue
            instructions = number(INSTRUCTIONS, text)
            if cache_sim:
                instructions += 10 * number(FIRST_LEVEL_MISSES, text) + 100 * number(LAST_LEVEL_MISSES, text)
            if number(PARENT, text) not in texts:  # the build's own process: no logged process started it
                own += instructions
            elif BUILD_COMMAND in text:  # forked from the build: its count starts from the build's at the fork
                forked += 1
            else:
                others += instructions
        return own, others, forked


def require_valgrind() -> None:
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", action="append", required=True, help="NAME=PATH/mkdocs.yml")
    parser.add_argument("--venv", type=Path, default=REPO / ".venv", help="the venv whose mkdocs builds the sites")
    parser.add_argument("--baseline", type=Path, help="a checkout whose plugin is counted too")
    parser.add_argument("--cache-sim", action="store_true", help="count estimated cycles rather than instructions")
    parser.add_argument("--name", default="build_instructions", help="the results file's name")
    args = parser.parse_args()
    require_valgrind()
    venv = args.venv.absolute()
    python, mkdocs = venv / "bin" / "python", venv / "bin" / "mkdocs"
    env = build_env(mkdocs.parent) | {"PYTHONHASHSEED": "0"}
    plugins = {"vault": (env, plugin_package(mkdocs))}
    if args.baseline:
        base_env = {**env, "PYTHONPATH": str(args.baseline.resolve())}
        plugins["base"] = (base_env, plugin_package(mkdocs, base_env))

    rows, sites = [], []
    for spec in args.site:
        name, _, path = spec.partition("=")
        config = Path(path).resolve()
        child = with_vault(config)
        cache = config.parent / ".cache" / "plugin" / "vault-mcp"
        first, again = (count(python, mkdocs, config, env, args.cache_sim) for _ in range(2))
        none = first[0]
        rows.append(
            f"| {name} | none | {first[0] / 1e9:.3f} G | {again[0] / none - 1:+.2%} (again) | "
            f"{first[1] / 1e9:.3f} G | | {first[2]} |"
        )
        for kind, (kind_env, _) in plugins.items():
            shutil.rmtree(cache, ignore_errors=True)
            for build in ("cold", "warm"):  # warm: the cache the cold build left
                own, others, forked = count(python, mkdocs, child, kind_env, args.cache_sim)
                rows.append(
                    f"| {name} | {kind}-{build} | {own / 1e9:.3f} G | {own / none - 1:+.2%} | "
                    f"{others / 1e9:.3f} G | {(own + others) / (first[0] + first[1]) - 1:+.2%} | {forked} |"
                )
        shutil.rmtree(cache, ignore_errors=True)
        sites.append(f"{name}: {describe(config.parent)}")
        print(*rows[-1 - 2 * len(plugins) :], sep="\n", flush=True)

    header = (
        "| site | build | build process | over `none` | other processes | all processes over `none` | forked |\n"
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
    )
    counted = (
        "estimated cycles (instructions + 10 x L1 misses + 100 x LL misses, caches simulated) counted"
        if args.cache_sim
        else "instructions counted"
    )
    packages = "; ".join(f"{kind}: {package}" for kind, (_, package) in plugins.items())
    text = (
        f"{header}\n" + "\n".join(rows) + f"\n\nsites: {'; '.join(sites)}; built with {mkdocs.relative_to(REPO)}"
        f"; plugin {packages}\n\n{counted} by valgrind's cachegrind; `over none`: the build process "
        "against the same site's `none` (and `none` run again against the first); `other processes`: git's and "
        "the writer process's where it is a new Python, which run beside the build on another CPU; `all "
        "processes`: the build and those, against `none`'s; `forked`: children forked from the build (in "
        "earlier versions the writer's process, a first git read), in neither count: valgrind's count in a "
        "forked child goes on "
        "from its parent's at the fork"
    )
    write_results(args.name, text)


if __name__ == "__main__":
    main()
