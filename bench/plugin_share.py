"""The plugin's own share of `mkdocs build` on the FastAPI docs' 13 languages, cold and warm.

    .venv/bin/python bench/plugin_share.py [--package DIR] [--runs 1]

A short check, not bench/build_overhead.py's full comparison: builds bench/out/fastapi-all/ (made by
bench/languages_one_site.py or bench/search_quality.py) with `mkdocs build` (theme mkdocs, vault-mcp
only), first with the working index deleted (cold: every page indexed), then again (warm: every page
fingerprinted, none indexed), and reads from the build log the plugin's own seconds (its closing line
"Indexed ... in S seconds") and MkDocs' "Documentation built in T seconds". Reports S, T and S / T;
the share is what the plugin adds to a build, measured inside the same build, so a busy machine moves
it less than it moves wall times. `--package DIR` builds with another copy of the package first on the
import path (for example main before a change: `git archive <commit> mkdocs_vault_mcp | tar -x -C DIR`).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from report import results_from_output  # bench/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "out" / "fastapi-all"
MKDOCS = Path(sys.executable).parent / "mkdocs"


def build(package: Path, config: Path) -> tuple[float, float, str]:
    environment = {**os.environ, "PYTHONPATH": str(package), "NO_MKDOCS_2_WARNING": "1"}
    log = subprocess.run(
        [str(MKDOCS), "build", "-f", str(config), "-d", "site-share"],
        cwd=config.parent,
        env=environment,
        check=True,
        capture_output=True,
        text=True,
    ).stderr
    plugin = re.search(r"vault-mcp: (Indexed .* in ([\d.]+) seconds)", log)
    total = re.search(r"Documentation built in ([\d.]+) seconds", log)
    assert plugin and total, log
    return float(plugin.group(2)), float(total.group(1)), plugin.group(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", type=Path, default=ROOT, help="a directory holding mkdocs_vault_mcp")
    parser.add_argument("--runs", type=int, default=1, help="cold and warm builds each")
    parser.add_argument(
        "--config",
        type=Path,
        default=WORK / "mkdocs.yml",
        help="the site's mkdocs.yml (bench/out/fastapi/vault.yml: build_overhead.py's copy)",
    )
    args = parser.parse_args()
    config = args.config.resolve()
    if not config.is_file():
        raise SystemExit(f"{config} is missing: run bench/languages_one_site.py (or bench/build_overhead.py) first")
    package = args.package.resolve()
    print(f"package: {package / 'mkdocs_vault_mcp'}")
    print(f"command: .venv/bin/python bench/plugin_share.py {' '.join(sys.argv[1:])}".rstrip())
    for _ in range(args.runs):
        shutil.rmtree(config.parent / ".cache", ignore_errors=True)
        for kind in ("cold", "warm"):
            plugin, total, line = build(package, config)
            print(f"{kind}: plugin {plugin:.2f} s of {total:.2f} s = {100 * plugin / total:.1f}%   ({line})")
    shutil.rmtree(config.parent / "site-share", ignore_errors=True)


if __name__ == "__main__":
    # A run on another package (--package) measures another commit: kept apart from this one's.
    with results_from_output("plugin_share_package" if "--package" in sys.argv else "plugin_share"):
        main()
