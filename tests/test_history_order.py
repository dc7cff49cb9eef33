"""`links(show="history")` lists a page's commits in the order `git log -10 -- FILE` does: newest commit time
first, wherever the commits sit in the graph. A real git repository whose two branches change one page at
interleaved times (so the graph's order, one branch after the other, is not the dates' order), more than ten
times, built for real with the plugin and asked through a real MCP session."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from helpers.mcp_session import session_over
from helpers.scripted_git import REAL_RUN, T0, isolate_git, run_git
from helpers.site import Site

PAGE = "docs/guide.md"
TOP = "# Guide\n\nTop line {}.\n\n" + "Filler paragraph.\n\n" * 8 + "Bottom line {}.\n"


@pytest.fixture(autouse=True)
def isolated_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home", ceiling=tmp_path)


def commit(root: Path, when: int, top: int, bottom: int, message: str) -> None:
    (root / PAGE).write_text(TOP.format(top, bottom), encoding="utf-8")
    run_git(root, "add", "-A", when=when)
    # authored a day before it was committed (a rebase or an applied patch): git orders by the commit time
    run_git(root, "commit", "-q", "-m", message, when=when, author=when - 86_400)


def git_log(root: Path) -> list[tuple[str, str]]:
    out = REAL_RUN(
        ["git", "log", "-10", "--format=%aI%x00%s", "--", PAGE], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    return [tuple(line.split("\0")) for line in out.splitlines()]  # type: ignore[misc]


def test_history_is_newest_first_as_git_log_lists_it_when_branches_interleave(tmp_path: Path) -> None:
    site = Site(tmp_path / "site", {"plugins": ["vault-mcp"]})
    site.write("index.md", "# Home\n")
    root = site.root
    run_git(root, "init", "-q", "-b", "main")
    commit(root, T0, 0, 0, "start")
    run_git(root, "checkout", "-q", "-b", "side")
    run_git(root, "checkout", "-q", "main")
    # main changes the top line, side the bottom one, taking turns an hour apart: git merges both cleanly
    for turn in range(1, 7):
        when = T0 + turn * 7200
        run_git(root, "checkout", "-q", "main")
        commit(root, when, turn, 0, f"main {turn}")
        run_git(root, "checkout", "-q", "side")
        (root / PAGE).write_text(TOP.format(0, turn), encoding="utf-8")
        run_git(root, "add", "-A", when=when)
        run_git(root, "commit", "-q", "-m", f"side {turn}", when=when + 3600, author=when + 3600 - 86_400)
    run_git(root, "checkout", "-q", "main")
    run_git(root, "merge", "-q", "--no-ff", "-m", "merge side", "side", when=T0 + 100_000)
    expected = git_log(root)
    assert len(expected) == 10 and expected[0][1] == "merge side"
    assert [subject for _, subject in expected[1:5]] == ["side 6", "main 6", "side 5", "main 5"]  # interleaved

    site.config = None
    (root / "mkdocs.yml").write_text("site_name: History\nplugins:\n  - vault-mcp\n", encoding="utf-8")
    site.build()
    with session_over(site.index_path) as mcp:
        answer = mcp.ok("links", show="history", target="guide.md")
    assert answer["total"] == 10
    ours = [(row["time"], row["subject"]) for row in answer["result"]]
    assert [subject for _, subject in ours] == [subject for _, subject in expected]
    # the times are the author times git shows (%aI), in UTC
    assert [time for time, _ in ours] == [
        dt.datetime.fromisoformat(when).astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") for when, _ in expected
    ]
