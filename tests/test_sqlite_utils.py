"""The index keeps sqlite-utils' conventions: sqlite-utils opens a built index as it is, finds the sections'
full-text table, and its `table.search()` finds what the pages say (the docs' browsing page shows this)."""

from __future__ import annotations

import sqlite_utils

from helpers.site import Site


def test_sqlite_utils_searches_the_sections_of_a_built_index(site: Site) -> None:
    site.write_pages(
        {
            "index.md": "# Home\n\nWelcome.\n",
            "guide/calibrate.md": "# Calibration\n\nHow to calibrate the station.\n\n"
            "## Apply the offset\n\nOffsets are added to raw readings.\n\n"
            "## Drift\n\nA wind vane drifts as it ages.\n",
            "guide/wiring.md": "# Wiring\n\nConnect the vane to pin 34.\n",
        }
    )
    site.build()
    db = sqlite_utils.Database(site.index_path)
    try:
        sections = db.table("sections")
        assert sections.detect_fts() == "sections_fts"
        found = list(sections.search("offsets", columns=["path", "headings"]))
        assert found == [{"path": "guide/calibrate.md", "headings": "Calibration > Apply the offset"}]
        # The porter stemmer, as the tools search: "drifting" finds "drifts"; two pages hold "vane".
        assert [row["headings"] for row in sections.search("drifting", columns=["headings"])] == ["Calibration > Drift"]
        assert sorted(row["path"] for row in sections.search("vane", columns=["path"])) == [
            "guide/calibrate.md",
            "guide/wiring.md",
        ]
        assert db.table("documents").count == 3
    finally:
        db.close()
