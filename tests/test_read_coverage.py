"""On the English FastAPI docs, built for real: `read` accepts every section that `search` can return, by its
heading and by its anchor, no page reads with theme chrome, and every page's outline sizes add up to its length.
The same check as bench/read_coverage.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helpers.paths import ROOT

sys.path.insert(0, str(ROOT / "bench"))
from read_coverage import read_coverage

# Run on python3's suite only (.ci/other-pythons skips it on the other Pythons; see pyproject.toml's marker).
pytestmark = pytest.mark.one_python


def test_every_fastapi_section_is_read_by_heading_and_anchor_and_no_page_has_chrome(fastapi_en: Path) -> None:
    found = read_coverage(fastapi_en)
    assert found["sections"] > 2000 and found["pages"] > 150
    assert found["misses"] == []
    assert found["by_heading"] == found["sections"]
    assert found["by_anchor"] == found["anchored"] > 2000
    assert found["chrome"] == []
    assert found["outline_mismatches"] == []  # every page's outline sizes add up to its read length
