"""Five tagged pages to build and build again, and the numbers of a build's closing `vault-mcp: Indexed` line."""

from __future__ import annotations

import logging
import re

from helpers.site import Site

SUMMARY = re.compile(
    r"^vault-mcp: Indexed (\d+) pages, (\d+) sections: (\d+) changed, (\d+) unchanged, (\d+) removed"
    r" in (\d+\.\d\d) seconds$"
)
PAGES = {
    f"page-{n}.md": f"---\ntags: [t{n}, shared]\n---\n# Page {n}\n\nOriginal text {n}.\n\n## Part\n\nMore {n}.\n"
    for n in range(5)
}


def summary(site: Site) -> tuple[int, int, int, int, int]:
    """The numbers of the build's closing line: pages, sections, changed, unchanged, removed."""
    lines = site.messages(logging.INFO, "vault-mcp: Indexed ")
    assert len(lines) == 1, lines
    match = SUMMARY.match(lines[0])
    assert match, lines[0]
    pages, sections, changed, unchanged, removed = (int(group) for group in match.groups()[:5])
    return pages, sections, changed, unchanged, removed
