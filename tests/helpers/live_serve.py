"""A real `mkdocs serve` process on a temp site (`write_site`), its log collected line by line."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from helpers.ports import free_port
from helpers.site import GENERATOR_COMMAND

MKDOCS = GENERATOR_COMMAND  # `mkdocs`, or `properdocs` when tests/test_properdocs.py runs these tests
STARTUP_SECONDS = 30  # generous: only a broken server takes this long

PAGES = {
    "index.md": "---\ntags: [home]\n---\n# Home\n\nWelcome.\n",
    "guide/install.md": "---\ntags: [setup, python]\n---\n# Install\n\nRun pip.\n",
    "guide/usage.md": "---\ntags: [python]\n---\n# Usage\n\nCall it.\n",
    "guide/slow.md": "# Slow\n\nA plain page.\n",
    "drafts/idea.md": "---\ntags: [idea]\n---\n# Idea\n\nNot published yet.\n",
}
# Sleeps while rendering a page that asks for it, after telling the test (through files outside the watched
# folders) that the rebuild is under way; or, for a page that asks for that, sleeps until Ctrl-C once an MCP call
# waits for the rebuild.
SLOW_HOOK = """
import pathlib
import time

def on_page_markdown(markdown, page, config, files):
    if "SLOW-BUILD" in markdown:
        state = pathlib.Path(config.config_file_path).parent / "state"
        state.mkdir(exist_ok=True)
        (state / "slow-build-started").write_text("")
        if "UNTIL-A-CALL-WAITS" in markdown:
            freshness = config.plugins["vault-mcp"].freshness
            deadline = time.monotonic() + 30
            while not freshness.waiting_calls and time.monotonic() < deadline:
                time.sleep(0.01)
            (state / "call-waiting").write_text("")
            time.sleep(60)  # until Ctrl-C: MkDocs builds on its main thread
        time.sleep(3)
    return markdown
"""


def write_site(root: Path, **plugin_options: Any) -> Path:
    for path, text in PAGES.items():
        (root / "docs" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / path).write_text(text, encoding="utf-8")
    (root / "hooks").mkdir(exist_ok=True)
    (root / "hooks" / "slow.py").write_text(SLOW_HOOK)
    options = "".join(f"\n      {key}: {json.dumps(value)}" for key, value in plugin_options.items())
    (root / "mkdocs.yml").write_text(
        "site_name: Live test\ndraft_docs: |\n  drafts/\nhooks:\n  - hooks/slow.py\n"
        f"plugins:\n  - vault-mcp:{options}\n"
    )
    return root / "mkdocs.yml"


class Serve:
    """A real `mkdocs serve` process; its log (MkDocs logs to stderr) is collected line by line."""

    def __init__(self, config: Path, *flags: str, mcp_port: int, dev_port: int | None = None) -> None:
        self.dev_port = dev_port or free_port()
        self.mcp_port = mcp_port
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [str(MKDOCS), "serve", "-f", str(config), "-a", f"127.0.0.1:{self.dev_port}", *flags],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=config.parent,
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.mcp_port}/mcp"

    @property
    def log(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, pattern: str, after: int = 0, timeout: float = STARTUP_SECONDS) -> re.Match[str]:
        """The first log line from index `after` on that matches `pattern`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines[after:]:
                if match := re.search(pattern, line):
                    return match
            if self.process.poll() is not None and not self.reader.is_alive():
                break
            time.sleep(0.05)
        raise AssertionError(f"no log line matching {pattern!r}; the log:\n{self.log}")

    def interrupt(self) -> None:
        """SIGINT, as Ctrl-C sends it; the process must end within a few seconds."""
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"mkdocs serve still ran 5 s after SIGINT; the log:\n{self.log}") from None
        self.reader.join(timeout=5)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
