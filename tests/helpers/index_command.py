"""`mkdocs-vault-mcp index SITE_DIR`, the console script beside this Python, and a whole index read back as rows
to compare two indexes by."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

SCRIPT = Path(sys.executable).parent / "mkdocs-vault-mcp"
# Keys that material/blog puts into page.meta before the plugin reads it, and its `date` made datetimes:
# the index command reads the front matter the author wrote (docs/pages/other-generators.md).
BLOG_META = {"template", "hide", "date"}
QUERIES = [
    "how do I calibrate the wind vane?",
    "api token",
    "install breeze on a raspberry pi",
    "données météo",
    "anemometer",
    "release 0.4",
]


def run_index(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), "index", *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=cwd
    )


def summary_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    last: str = done.stderr.strip().splitlines()[-1]
    return last


def index_rows(index: Path, *, meta_less: AbstractSet[str] = frozenset()) -> dict[str, Any]:
    """Everything the tools answer from, by path: the document, its sections and its filter values."""
    conn = sqlite3.connect(index)
    try:
        documents = {
            path: {
                "url": url,
                "title": title,
                "summary": summary,
                "headings": headings,
                "modified": modified,
                "modified_source": source,
                "language": language,
                "meta": {k: v for k, v in json.loads(meta).items() if k not in meta_less},
            }
            for path, url, title, summary, meta, headings, modified, source, language in conn.execute(
                "SELECT path, url, title, summary, meta, headings, modified, modified_source, language FROM documents"
            )
        }
        for path, position, level, anchor, heading, trail, searched, body in conn.execute(
            "SELECT d.path, s.position, s.level, s.anchor, s.heading, s.headings, s.title, s.body FROM sections s"
            " JOIN documents d ON d.id = s.document_id ORDER BY d.path, s.position"
        ):
            documents[path].setdefault("sections", []).append((position, level, anchor, heading, trail, searched, body))
        for field, value, path in conn.execute(
            "SELECT v.field, v.value, d.path FROM field_values v JOIN documents d ON d.id = v.document_id ORDER BY 1, 2"
        ):
            if field not in meta_less:
                documents[path].setdefault("values", []).append((field, value))
        return documents
    finally:
        conn.close()
