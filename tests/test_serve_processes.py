"""`mkdocs serve` leaves no defunct process: the children of the first build (git, the index writer's process) are
collected, though the server runs on and no later build may come to do it. A real
`mkdocs serve` on a small site in a git repository; its children read from /proc."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from helpers.live_serve import Serve
from helpers.ports import free_port
from helpers.scripted_git import isolate_git, run_git
from mkdocs_vault_mcp.index.write import writer

# More pages than the writer takes a process of its own for (index/write/writer.py's PAGES_FOR_A_PROCESS).
PAGES = {
    f"page-{number}.md": f"# Page {number}\n\nText of page {number}.\n"
    for number in range(writer.PAGES_FOR_A_PROCESS + 2)
}


def children(pid: int) -> dict[int, str]:
    """The child processes of `pid` and their states (`Z` for a zombie), from /proc."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # ended meanwhile
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after its last ')'
        state, parent = stat.rpartition(")")[2].split()[:2]
        if int(parent) == pid:
            found[int(entry.name)] = state
    return found


def zombies_after(pid: int, seconds: float) -> list[int]:
    """The zombie children of `pid` left once `seconds` have passed (or none left, whichever comes first)."""
    deadline = time.monotonic() + seconds
    while True:
        left = [child for child, state in children(pid).items() if state == "Z"]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


@pytest.mark.skipif(sys.platform != "linux", reason="/proc is Linux's")
def test_mkdocs_serve_leaves_no_defunct_process(tmp_path: Path, serve_factory, monkeypatch) -> None:
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: the build starts no writer process")
    isolate_git(monkeypatch, tmp_path / "home", tmp_path)
    root = tmp_path / "site"
    for path, text in PAGES.items():
        (root / "docs" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / path).write_text(text, encoding="utf-8")
    mcp_port = free_port()
    (root / "mkdocs.yml").write_text(f"site_name: Processes\nplugins:\n  - vault-mcp:\n      mcp_port: {mcp_port}\n")
    # A repository and no kept history: the first build reads the whole history, running git.
    run_git(root, "init", "-q", "-b", "main")
    run_git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", "pages")
    serve: Serve = serve_factory(root / "mkdocs.yml", mcp_port=mcp_port)
    serve.wait_for(r"Serving on ")
    assert zombies_after(serve.process.pid, 5) == [], serve.log

    # A rebuild closes the first build's writer process, which then exits.
    mark = len(serve.lines)
    (root / "docs" / "page-0.md").write_text("# Page 0\n\nChanged.\n", encoding="utf-8")
    serve.wait_for(r"Indexed \d+ pages", after=mark)
    serve.wait_for(r"Documentation built", after=mark)
    assert zombies_after(serve.process.pid, 5) == [], serve.log
    serve.interrupt()
    assert serve.process.returncode == 0, serve.log
