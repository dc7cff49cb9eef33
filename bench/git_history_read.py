"""What reading a site's git history costs the plugin (its fixed cost per build), in-process.

    .venv/bin/python bench/git_history_read.py --site NAME=PATH/DOCS_DIR [--site ...] [--runs 5]

PATH is a local copy of the site's repository (bench/small_sites.py's clones). Each site is cloned again under
bench/out/git-history-read/ (so a commit can be made there), then `read_git_times` is timed:

- `cold`: no kept history (a fresh checkout, such as CI's): the whole log in one pass
- `warm`: HEAD and the index as the kept read left them: nothing read but `git status`
- `new commit`: one commit editing one page after the kept read: only the new commit is listed, the kept
  commits serve for the rest (before this, the whole log again: the `cold` figure)

Medians over the runs of wall and CPU seconds (this process and its git children; for `cold` also this process
alone: what the read, on a thread of the build, takes of the GIL MkDocs renders with), the number of commits
the repository holds, its files under docs_dir and how many of them have fewer commits than a page's history
keeps (HISTORY_LENGTH): for those the walk must go on to the first commit, whatever it found before.
Writes bench/results/speed/git_history_read.json (`--name`: another name). With PYTHONPATH=<a checkout of another
commit> it times that commit's package instead.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import mkdocs_vault_mcp
from mkdocs_vault_mcp.build_steps.git_log import HISTORY_LENGTH
from mkdocs_vault_mcp.build_steps.modified import read_git_times
from report import command_line, write_results  # bench/ is on sys.path when a script runs

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "out" / "git-history-read"


def cpu() -> tuple[float, float]:
    """CPU seconds of this process and its git children, and of this process alone."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    here = own.ru_utime + own.ru_stime
    return here + children.ru_utime + children.ru_stime, here


def timed(docs: Path, cache: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds with git's, CPU seconds of this process alone."""
    (start_cpu, start_here), start = cpu(), time.perf_counter()
    assert read_git_times(str(docs), cache) is not None
    end_cpu, end_here = cpu()
    return time.perf_counter() - start, end_cpu - start_cpu, end_here - start_here


def git(folder: Path, *arguments: str) -> str:
    return subprocess.run(
        ["git", "-C", str(folder), *arguments],
        capture_output=True,
        text=True,
        check=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "bench",
            "GIT_AUTHOR_EMAIL": "bench@example.com",
            "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "bench@example.com",
        },
    ).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", action="append", required=True, help="NAME=PATH/DOCS_DIR")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--name", default="git_history_read", help="the results file's name")
    args = parser.parse_args()
    lines = [
        f"load average before: {os.getloadavg()[0]:.1f}",
        "",
        "| site | commits | files | fewer than 10 | cold wall | cold CPU | cold CPU here | warm wall | warm CPU "
        "| new commit wall | new commit CPU |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for spec in args.site:
        name, _, path = spec.partition("=")
        docs = Path(path).resolve()
        top = Path(git(docs, "rev-parse", "--show-toplevel").strip())
        copy = OUT / name
        shutil.rmtree(copy, ignore_errors=True)
        git(top, "clone", "-q", str(top), str(copy))
        git(copy, "checkout", "-q", git(top, "rev-parse", "HEAD").strip())
        copy_docs = copy / docs.relative_to(top)
        page = next(iter(sorted(copy_docs.rglob("*.md"))))
        cache = OUT / f"{name}-cache" / "git-history.json"
        samples: dict[str, list[tuple[float, float, float]]] = {"cold": [], "warm": [], "new commit": []}
        for run in range(args.runs):
            shutil.rmtree(cache.parent, ignore_errors=True)
            # Each run in a cache file of its own: this process's memory of the last read must not serve it.
            run_cache = cache.with_name(f"git-history-{run}.json")
            samples["cold"].append(timed(copy_docs, run_cache))
            warm_cache = cache.with_name(f"git-history-{run}-warm.json")
            for kept in run_cache.parent.glob(f"{run_cache.stem}*.json"):  # the dates, and the commits if kept
                shutil.copy(kept, kept.with_name(kept.name.replace(run_cache.stem, warm_cache.stem)))
            samples["warm"].append(timed(copy_docs, warm_cache))
            page.write_text(page.read_text(encoding="utf-8") + f"\nrun {run}\n", encoding="utf-8")
            git(copy, "commit", "-q", "-a", "-m", f"bench run {run}")
            samples["new commit"].append(timed(copy_docs, run_cache))
        commits = git(copy, "rev-list", "--count", "HEAD").strip()
        cells = [
            f"{statistics.median(s[i] for s in samples[kind]):.3f} s"
            for kind in ("cold", "warm", "new commit")
            for i in ((0, 1, 2) if kind == "cold" else (0, 1))
        ]
        times = read_git_times(str(copy_docs))
        assert times is not None
        short = sum(len(commits) < HISTORY_LENGTH for commits in times.history.values())
        lines.append(f"| {name} | {commits} | {len(times.history)} | {short} | {' | '.join(cells)} |")
        print(lines[-1], flush=True)
    package = Path(mkdocs_vault_mcp.__file__).parent.parent
    commit = git(package, "rev-parse", "--short", "HEAD").strip()
    lines += [
        "",
        f"timed package: {os.path.relpath(package, REPO)} at commit {commit}",
        f"load average after: {os.getloadavg()[0]:.1f}; medians of {args.runs} runs; CPU: this process "
        "and its git children; CPU here: this process alone, what a read on a thread of the build takes from "
        "MkDocs' thread (the GIL)",
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    command = command_line()
    if os.environ.get("PYTHONPATH"):
        command = f"PYTHONPATH={os.environ['PYTHONPATH']} {command}"
    write_results(args.name, text, command)


if __name__ == "__main__":
    main()
