"""What vault-mcp adds to `mkdocs build` of the FastAPI corpus, counted in instructions rather than timed.

    .venv/bin/python bench/build_overhead_instructions.py [--baseline DIR] [--cache-sim] [--name NAME]

build_overhead.py's builds of the 13 languages (its copy of the corpus, its configurations and its frozen copy of
the package), each run once under valgrind as bench/build_instructions.py runs a small site's: `none`,
`vault-cold` and `vault-warm`, and with `--baseline DIR` (a checkout of another commit) `base-cold` and
`base-warm`, the same two importing the plugin from DIR with a cache dir of their own. On a machine whose CPUs
change speed from one minute to the next, a 50-second build's wall ratio moves by several percent from round to
round (build_overhead's results); an instruction count moves by well under 0.5%, so two packages can be told
apart by a fraction of a percent.

What it counts is the build's own process (every thread of it), the work that lies on the build's way; the
writer's process, forked from the build on a first build of this many pages, runs on the other CPU and is in no
column (valgrind's count in a forked child goes on from its parent's). What the build waits for at its end and
what the writer's work costs MkDocs' thread beside it are build_overhead's and plugin_share's to show.

The builds run two or three at a time (their counts do not depend on what runs beside them); a warm build after
its cold one. About 36 minutes for the five builds on 2 CPUs, three times that with `--cache-sim`.
"""

from __future__ import annotations

import argparse
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from build_instructions import count, require_valgrind
from build_overhead import (
    BASELINE_CONFIGS,
    CONFIG_FILE,
    CORPUS,
    OUT,
    copy_corpus,
    env_importing,
    package_snapshot,
    source_state,
    vault_cache,
    write_configs,
)
from report import REPO, describe, write_results  # bench/ is on sys.path when a script runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="a checkout whose plugin is counted too (base-cold, base-warm)")
    parser.add_argument("--cache-sim", action="store_true", help="count estimated cycles rather than instructions")
    parser.add_argument("--name", default="build_overhead_instructions", help="the results file's name")
    args = parser.parse_args()
    require_valgrind()
    if args.baseline and not (args.baseline / "mkdocs_vault_mcp").is_dir():
        parser.error(f"--baseline {args.baseline}: no mkdocs_vault_mcp/ in it")

    OUT.mkdir(parents=True, exist_ok=True)
    pages = copy_corpus(CORPUS, OUT)
    write_configs(OUT)
    snapshot, digest = package_snapshot(OUT)
    # PYTHONHASHSEED=0: set and string order decide some work, so that it is the same in every build.
    env = env_importing(dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONHASHSEED="0"), snapshot, "the package snapshot")
    env_of = dict.fromkeys(["none", "vault-cold", "vault-warm"], env)
    packages = [f"vault: {os.path.relpath(snapshot, REPO)} (source digest {digest}, {source_state()})"]
    if args.baseline:
        baseline = args.baseline.resolve()
        env_of |= dict.fromkeys(BASELINE_CONFIGS, env_importing(env, baseline, "the baseline"))
        packages.append(f"base: {os.path.relpath(baseline, REPO)} at {describe(baseline).split()[0]}")
    python, mkdocs = REPO / ".venv" / "bin" / "python", REPO / ".venv" / "bin" / "mkdocs"

    def counted(name: str) -> tuple[int, int, int]:
        if name.endswith("-cold"):
            shutil.rmtree(vault_cache(OUT, name), ignore_errors=True)
        result = count(python, mkdocs, OUT / CONFIG_FILE[name], env_of[name], args.cache_sim)
        print(f"{name}: {result[0] / 1e9:.3f} G in the build's process", flush=True)
        return result

    phases = [
        ["none", "vault-cold", *(["base-cold"] if args.baseline else [])],
        ["vault-warm", *(["base-warm"] if args.baseline else [])],
    ]
    results: dict[str, tuple[int, int, int]] = {}
    with ThreadPoolExecutor(max_workers=3) as pool:
        for phase in phases:
            results |= dict(zip(phase, pool.map(counted, phase), strict=True))

    none = results["none"][0]
    what = "estimated cycles" if args.cache_sim else "instructions"
    rows = [
        f"| build | build process ({what}) | over `none` | other processes | forked |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    rows += [
        f"| {name} | {own / 1e9:.3f} G | {own / none - 1:+.2%} | {others / 1e9:.3f} G | {forked} |"
        for name, (own, others, forked) in results.items()
    ]
    text = "\n".join(
        [
            *rows,
            "",
            f"corpus: {pages} Markdown pages, 13 languages in one docs_dir ({os.path.relpath(OUT / 'docs', REPO)}), "
            "theme mkdocs, build_overhead.py's configurations; built with .venv/bin/mkdocs, PYTHONHASHSEED=0",
            "packages: " + "; ".join(packages),
            f"{what} counted by valgrind's cachegrind"
            + (" (instructions + 10 x L1 misses + 100 x LL misses, caches simulated)" if args.cache_sim else "")
            + "; `build process`: every thread of the `mkdocs build` process; `other processes`: git's; `forked`: "
            "children forked from the build (in earlier versions the writer's process, a first git read), in no count",
        ]
    )
    print(text)
    write_results(args.name, text)


if __name__ == "__main__":
    main()
