"""Nothing the build publishes names a folder of the build machine: the site is deployed, and the index, the
snapshot and the stats page go with it. Real builds in temp dirs, whose path is looked for in every byte."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from helpers.site import Site

SCRIPT = Path(sys.executable).parent / "mkdocs-vault-mcp"
PAGES = {
    "index.md": "---\ntags: [start]\n---\n# Home\n\nWelcome. See [the guide](guide/install.md).\n",
    "guide/install.md": "# Install\n\nRun the installer.\n\n## Upgrade\n\nRun it again.\n",
}


def files_naming(folder: Path, text: str) -> list[str]:
    """The files under `folder` whose bytes hold `text` (as UTF-8, or JSON-escaped as the snapshot would hold it)."""
    needles = {text.encode(), json.dumps(text)[1:-1].encode()}
    return sorted(
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_file() and any(needle in path.read_bytes() for needle in needles)
    )


def machine_paths(site: Site) -> list[str]:
    """Both spellings of the temp dir (it may lie under a symlink, such as /tmp on macOS)."""
    return list(dict.fromkeys([str(site.root), str(site.root.resolve())]))


def test_a_built_site_publishes_no_absolute_path_of_the_build_machine(site: Site) -> None:
    site.config = {"plugins": [{"vault-mcp": {"stats_page": "numbers/"}}]}
    site.write_pages(PAGES)
    site.build()
    published = site.site_dir / "vault-mcp"
    assert {"index.sqlite", "snapshot.json"} <= {path.name for path in published.iterdir()}
    assert (site.site_dir / "numbers" / "index.html").is_file()
    for path in machine_paths(site):
        assert files_naming(site.site_dir, path) == []
    with site.db() as conn:
        (stored,) = conn.execute("SELECT value FROM info WHERE key = 'options'").fetchone()
    options = json.loads(stored.partition(":")[2])
    assert options["docs_dir"] == "docs"  # where the pages are, relative to mkdocs.yml


def test_an_index_from_a_version_that_kept_absolute_paths_leaves_none_in_the_site(site: Site) -> None:
    """A working index whose options named the absolute docs_dir (as earlier versions wrote it) is rebuilt on new
    options; the dropped tables' pages, which held that row, must not travel in the published copy."""
    site.write_pages(PAGES)
    site.build()
    working = site.root / ".cache" / "plugin" / "vault-mcp" / "build.sqlite"
    # Long enough that the new index cannot reuse (and so overwrite) every page it took.
    old_options = json.dumps({"docs_dir": str(site.docs.resolve()), "history": [str(site.docs.resolve())] * 20_000})
    with sqlite3.connect(working) as conn:
        conn.execute("UPDATE info SET value = ? WHERE key = 'options'", ["9:" + old_options])
    conn.close()
    assert files_naming(working.parent, str(site.docs.resolve())) == ["build.sqlite"]
    site.build()
    for path in machine_paths(site):
        assert files_naming(site.site_dir, path) == []
    # Where SQLite zeroes what it deletes (secure_delete, on in some builds) the bytes above are gone either way;
    # elsewhere only a file without free pages is sure not to carry them.
    with sqlite3.connect(site.index_path) as conn:
        assert conn.execute("PRAGMA freelist_count").fetchone() == (0,)
    conn.close()


def test_the_index_command_publishes_no_absolute_path(tmp_path: Path) -> None:
    site = Site(tmp_path, {})  # built without the plugin, then indexed from its HTML
    site.write_pages(PAGES)
    site.build()
    done = subprocess.run(
        [str(SCRIPT), "index", str(site.site_dir), "--config", str(site.root / "mkdocs.yml")],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert (site.site_dir / "vault-mcp" / "index.sqlite").is_file()
    for path in machine_paths(site):
        assert files_naming(site.site_dir, path) == []
