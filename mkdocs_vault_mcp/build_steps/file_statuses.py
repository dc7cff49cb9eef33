"""The size and modification time of every page's file, read at once by a Python process of its own under
`mkdocs serve`.

A page's fingerprint takes its file's size and modification time (mkdocs_pages.source_version). `os.stat` lets
other threads run while the system answers, and under `mkdocs serve` MkDocs' file watcher, a thread that polls every
file of the site, takes the GIL then: at every page, the build's thread would wait for it back. So a serve build
asks another process for the status of every page's file when it learns the files (on_files), and each page reads
its file's status from that answer; a page rendered before the answer came, or whose file the answer lacks, asks
`os.stat` itself.

A file saved between the question and MkDocs reading it has its earlier time in this build's fingerprint. Its save
makes MkDocs build again, and that build asks again.
"""

from __future__ import annotations

import functools
import pickle
import subprocess
import sys

from .. import child_processes
from ..child_processes import Beside

# Reads NUL-separated paths on stdin, writes {path: (size, mtime_ns)} for those it can stat, pickled.
STAT_EACH_PATH = """\
import os, pickle, sys
statuses = {}
for path in sys.stdin.buffer.read().decode("utf-8", "surrogateescape").split("\\0"):
    try:
        status = os.stat(path)
    except OSError:
        continue
    statuses[path] = (status.st_size, status.st_mtime_ns)
pickle.dump(statuses, sys.stdout.buffer)
"""
ANSWER_SECONDS = 60  # the pages ask os.stat themselves meanwhile: a slow answer costs only the process


class FileStatuses:
    """The statuses of `paths`, asked for on a thread of this process that waits for the other process
    (child_processes.Beside)."""

    def __init__(self, paths: list[str]) -> None:
        self._answer = Beside(functools.partial(_ask, paths), "vault-mcp file statuses")

    def get(self, path: str) -> tuple[int, int] | None:
        """(size, mtime_ns) of the file, or None when the answer has not come or lacks it."""
        if not self._answer.done():
            return None
        return self._answer.result().get(path)

    def wait(self) -> None:
        """Wait for the answer."""
        self._answer.wait()


def _ask(paths: list[str]) -> dict[str, tuple[int, int]]:
    try:
        done = child_processes.run(
            [sys.executable, "-S", "-c", STAT_EACH_PATH],  # -S: the standard library is all it needs
            input="\0".join(paths).encode("utf-8", "surrogateescape"),
            timeout=ANSWER_SECONDS,
        )
        if done.returncode == 0:
            statuses: dict[str, tuple[int, int]] = pickle.loads(done.stdout)
            return statuses
    except (OSError, subprocess.SubprocessError, pickle.UnpicklingError, EOFError):
        pass
    return {}  # every page asks os.stat itself, as without this
