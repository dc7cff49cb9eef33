"""The JSON aggregation snapshot written into the site. What it holds (aggregate_documents' own answers) is
index/write/build_summary.py's build_snapshot."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

from ..index.publish import remove_leftovers

SNAPSHOT_URI = "vault-mcp/snapshot.json"  # where the build writes it, relative to site_dir


def write_snapshot(snapshot: dict[str, Any], destination: Path) -> None:
    """Replace `destination` whole, readable as any file the build writes (0666 less the umask): a web server
    running as another user serves it. (mkstemp would make it private, 0600.)"""
    destination.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(destination.parent, ".snapshot-")  # from a build killed while it wrote
    temporary = destination.parent / f".snapshot-{secrets.token_hex(8)}.tmp"
    handle = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            # One line, by json's C encoder: indented, json.dump would write it piece by piece in Python.
            out.write(json.dumps(snapshot, ensure_ascii=False, separators=(",", ":")))
        os.replace(temporary, destination)
    except BaseException:  # a full disk, say: no half-written file left in the site
        temporary.unlink(missing_ok=True)
        raise
