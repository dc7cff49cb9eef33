"""Headless Chromium driven over the DevTools protocol (on a pipe, so no websocket library is needed),
and a static HTTP server for a built site. Used by the browser tests of the stats page.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import functools
import http.server
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str:
    """The browser's path; skips the test when there is none, but under CI its absence is a failure."""
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    reason = "Chromium is not installed (Debian: apt-get install chromium); the browser tests need it"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(reason + " and CI is set")
    pytest.skip(reason)


@contextlib.contextmanager
def serve_directory(root: Path) -> Iterator[str]:
    """Serve `root` on a free loopback port in a thread; yields the base URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


class DevToolsError(RuntimeError):
    pass


def above_4(fd: int) -> int:
    """The same pipe end on a close-on-exec descriptor above 4, so dup2 onto 3 and 4 cannot clobber it."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 5)
    os.close(fd)
    return moved


class Browser:
    """One headless Chromium; `open` a page, then evaluate script in it and take screenshots.

    Every host but the loopback resolves to nothing, so a page that needs the network shows it as a
    console error instead of quietly loading it.
    """

    def __init__(self, executable: str, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="vault-mcp-chromium-")
        commands_read, self._commands = map(above_4, os.pipe())
        self._replies, replies_write = map(above_4, os.pipe())

        def on_fds_3_and_4() -> None:  # --remote-debugging-pipe reads fd 3 and writes fd 4
            os.dup2(commands_read, 3)
            os.dup2(replies_write, 4)

        self.process = subprocess.Popen(
            [
                executable,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--no-first-run",
                "--no-default-browser-check",
                "--hide-scrollbars",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                f"--user-data-dir={self.profile}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=on_fds_3_and_4,
            close_fds=False,  # keeps fds 3 and 4; the pipes' own fds are close-on-exec
        )
        os.close(commands_read)
        os.close(replies_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    # -- the protocol ------------------------------------------------------------------------

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise DevToolsError("Chromium did not answer in time")
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                raise DevToolsError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        reply: dict[str, Any] = json.loads(message)
        return reply

    def send(self, method: str, params: dict[str, Any] | None = None, *, browser: bool = False) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if not browser and self.session is not None:
            message["sessionId"] = self.session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise DevToolsError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            if "method" in reply:
                self.events.append(reply)

    def wait_for(self, method: str, after: int = 0) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        index = after
        while True:
            for event in self.events[index:]:
                if event["method"] == method:
                    return event
            index = len(self.events)
            self.events.append(self._read_message(deadline))

    def pump(self, seconds: float) -> None:
        """Collect the events that arrive within `seconds` (late console errors)."""
        self.send(
            "Runtime.evaluate",
            {"expression": f"new Promise(r => setTimeout(r, {int(seconds * 1000)}))", "awaitPromise": True},
        )

    # -- pages -------------------------------------------------------------------------------

    def open(self, url: str, width: int = 1280, height: int = 900, dark: bool = False) -> None:
        """Open `url` in a fresh tab, in light or dark colour scheme, and wait for its load event."""
        # A fresh browser context per page: no storage carried over (Material remembers the palette).
        context = self.send("Target.createBrowserContext", browser=True)["browserContextId"]
        target = self.send("Target.createTarget", {"url": "about:blank", "browserContextId": context}, browser=True)[
            "targetId"
        ]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True}, browser=True)[
            "sessionId"
        ]
        self.events.clear()
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        scheme = "dark" if dark else "light"
        self.send("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
        mark = len(self.events)
        self.send("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired", mark)
        self.pump(0.3)

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise DevToolsError(f"{expression!r} raised {result['exceptionDetails']}")
        return result["result"].get("value")

    def console_errors(self) -> list[str]:
        """Uncaught exceptions, console.error calls and failed loads (as the DevTools console shows)."""
        errors = []
        for event in self.events:
            params = event.get("params", {})
            if event["method"] == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                errors.append(details.get("exception", {}).get("description") or details.get("text", ""))
            elif event["method"] == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                errors.append(" ".join(str(arg.get("value", arg.get("description"))) for arg in params["args"]))
            elif event["method"] == "Log.entryAdded" and params["entry"]["level"] == "error":
                entry = params["entry"]
                errors.append(f"{entry['text']} {entry.get('url', '')}".strip())
        return errors

    def screenshot(self, destination: Path) -> Path:
        """A PNG of the whole page, not just the viewport."""
        height = self.evaluate("Math.ceil(document.documentElement.scrollHeight)")
        width = self.evaluate("document.documentElement.clientWidth")
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": min(int(height), 16000), "deviceScaleFactor": 1, "mobile": False},
        )
        self.pump(0.2)
        data = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"]
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(base64.b64decode(data))
        return destination

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.send("Browser.close", browser=True)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        os.close(self._commands)
        os.close(self._replies)
        shutil.rmtree(self.profile, ignore_errors=True)
