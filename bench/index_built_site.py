"""What `mkdocs-vault-mcp index` costs next to the build it follows.

    .venv/bin/python bench/index_built_site.py [--runs 3]

Builds the English FastAPI docs (../shared/corpora, 155 pages, theme material, no plugins but `search`) once
per round with a fresh `mkdocs build -q` process (the baseline), then runs `mkdocs-vault-mcp index SITE
--config mkdocs.yml` on it twice as a fresh process: cold (its working index deleted first: every page
indexed) and warm (the working index of the cold run kept: every page fingerprinted, none indexed again).
Ratio = median over rounds of the command's wall time to the same round's build. Writes
bench/results/speed/index_built_site.json.
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

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from read_coverage import corpus_site  # noqa: E402
from report import table, write_results  # noqa: E402

OUT = ROOT / "bench" / "out" / "index-built-site"
BIN = Path(sys.executable).parent


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        command,
        check=True,
        capture_output=True,
        cwd=OUT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"},
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    source, settings = corpus_site("fastapi-en")
    settings.pop("languages")
    shutil.rmtree(OUT, ignore_errors=True)
    shutil.copytree(source / "en" / "docs", OUT / "docs")
    settings.update(plugins=["search"], docs_dir="docs", site_dir="site")
    (OUT / "mkdocs.yml").write_text(yaml.safe_dump(settings), encoding="utf-8")
    times: dict[str, list[float]] = {"build": [], "cold": [], "warm": []}
    index = [str(BIN / "mkdocs-vault-mcp"), "index", "site", "--config", "mkdocs.yml"]
    for _ in range(args.runs):
        times["build"].append(timed([str(BIN / "mkdocs"), "build", "-q"]))
        shutil.rmtree(OUT / ".cache", ignore_errors=True)
        times["cold"].append(timed(index))
        times["warm"].append(timed(index))
    rows = [["step", "median wall", "vs the build"]]
    for name, label in (
        ("build", "`mkdocs build -q`, search only (baseline)"),
        ("cold", "`mkdocs-vault-mcp index`, cold"),
        ("warm", "`mkdocs-vault-mcp index`, warm"),
    ):
        ratios = [t / b for t, b in zip(times[name], times["build"], strict=True)]
        rows.append([label, f"{statistics.median(times[name]):.2f} s", f"{statistics.median(ratios):.3f}"])
    report = f"$ .venv/bin/python bench/index_built_site.py --runs {args.runs}\n\n{table(rows)}\n"
    print(report)
    write_results("index_built_site", report)


if __name__ == "__main__":
    main()
