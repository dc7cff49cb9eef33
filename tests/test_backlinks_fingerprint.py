"""A warm rebuild of a site with mkdocstrings' backlinks indexes no page again. mkdocstrings-python draws an
object's backlinks ("Referenced by: API > Plugin > handlers") as a tree built from a set: when one reference's
trail leads on from another's, which of the two the page shows depends on Python's string hashing, new in every
run (mkdocstrings' own docs). Real `mkdocs build` runs in processes with two hash seeds that draw the tree both
ways; a new reference from another page is still a change."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from helpers.site import GENERATOR_COMMAND, Site

PACKAGE = '''"""A package whose objects refer to each other."""


class Handlers:
    """The collection of handlers."""


class Plugin:
    """The plugin, which holds [Handlers][pkg.Handlers]."""

    @property
    def handlers(self) -> Handlers:
        """Its [handlers][pkg.Handlers]."""
        return Handlers()
'''
CONFIG = {
    "theme": {"name": "material"},
    "markdown_extensions": ["toc"],
    "plugins": [
        "autorefs",
        {
            "mkdocstrings": {
                "handlers": {"python": {"paths": ["src"], "options": {"backlinks": "tree", "show_root_heading": True}}}
            }
        },
        "vault-mcp",
    ],
}
# Two hash seeds under which the tree of Handlers' backlinks keeps a different one of its two trails.
SEEDS = ("0", "2")


def build(site: Site, seed: str) -> tuple[str, str]:
    """(the summary the plugin logs, the backlinks of the API page as the build wrote them)"""
    done = subprocess.run(
        [str(GENERATOR_COMMAND), "build", "-f", str(site.root / "mkdocs.yml")],
        cwd=site.root,
        env={**os.environ, "PYTHONHASHSEED": seed},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    summary = next(line for line in done.stderr.splitlines() if "vault-mcp: Indexed" in line)
    page = (site.site_dir / "index.html").read_text(encoding="utf-8")
    return summary, "".join(re.findall(r'<div class="doc doc-backlinks">.*?</div>', page, re.S))


def test_a_warm_rebuild_indexes_no_page_whose_backlinks_only_changed_their_trail(tmp_path: Path) -> None:
    site = Site(tmp_path, CONFIG)
    site.write("index.md", "# API\n\n::: pkg\n")
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text(PACKAGE, encoding="utf-8")
    site.build(log_level=30)  # writes mkdocs.yml; the builds below run in processes of their own
    _, first_backlinks = build(site, SEEDS[0])
    second, second_backlinks = build(site, SEEDS[1])
    assert first_backlinks != second_backlinks  # the page as a reader sees it differs from one run to the next
    assert "#pkg.Plugin.handlers" in first_backlinks + second_backlinks
    assert "0 changed, 1 unchanged" in second, second
    assert "0 changed, 1 unchanged" in build(site, SEEDS[0])[0]

    # a reference from another page is a change of the API page's backlinks
    site.write("guide.md", "# Guide\n\nPlug in the [Handlers][pkg.Handlers].\n")
    summary, backlinks = build(site, SEEDS[0])
    assert "guide/" in backlinks
    assert "2 changed, 0 unchanged" in summary, summary
