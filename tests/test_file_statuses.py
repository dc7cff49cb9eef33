"""Under `mkdocs serve`, the sizes and times of the page files come from a process of their own (build_steps/file_statuses.py);
what it answers is what os.stat says, and without an answer each page asks os.stat itself."""

from __future__ import annotations

import os
import sys

from mkdocs_vault_mcp.build_steps.file_statuses import FileStatuses


def test_the_answer_is_what_os_stat_says_of_each_file_and_nothing_of_a_missing_one(tmp_path):
    pages = [tmp_path / "index.md", tmp_path / "guide" / "über uns.md"]
    pages[1].parent.mkdir()
    for number, page in enumerate(pages):
        page.write_text("# Page\n" * (number + 1), encoding="utf-8")
    missing = tmp_path / "gone.md"
    statuses = FileStatuses([str(page) for page in pages] + [str(missing)])
    statuses.wait()
    for page in pages:
        status = os.stat(page)
        assert statuses.get(str(page)) == (status.st_size, status.st_mtime_ns)
    assert statuses.get(str(missing)) is None
    assert statuses.get(str(tmp_path / "never-asked.md")) is None


def test_without_a_process_to_ask_every_page_asks_os_stat_itself(tmp_path, monkeypatch):
    page = tmp_path / "index.md"
    page.write_text("# Home\n", encoding="utf-8")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python"))
    statuses = FileStatuses([str(page)])
    statuses.wait()
    assert statuses.get(str(page)) is None
