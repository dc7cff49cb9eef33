"""What a build asks the writer's commit to read back for it (build_summary.read_build_summary). Its own module:
build_summary.py takes it without importing working_index.py, which calls build_summary.py."""

from __future__ import annotations

from typing import NamedTuple


class SummaryRequest(NamedTuple):
    """Which build summary to read (read_build_summary)."""

    tag_fields: list[str]  # the fields the stats page counts pages by
    # on a multilingual site, the language of the stats page (which counts that language's pages); else None
    language: str | None
    whole_site: bool  # whether every language is indexed, so that snapshot.json can count them all
