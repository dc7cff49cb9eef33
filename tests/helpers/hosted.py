"""The container image's server (uvicorn running the ASGI app factory, as the Dockerfile's CMD says) started on a
loopback port, waited for until healthy, and stopped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from helpers.paths import ROOT

UVICORN = Path(sys.executable).parent / "uvicorn"


def image_command(port: int) -> list[str]:
    """The container image's command (the Dockerfile's CMD), on a loopback port of this test's own."""
    line = next(line for line in (ROOT / "Dockerfile").read_text().splitlines() if line.startswith("CMD "))
    command = json.loads(line.removeprefix("CMD "))
    assert command[0] == "uvicorn" and command[command.index("--port") + 1] == "8000"
    command[command.index("--port") + 1] = str(port)
    command[command.index("--host") + 1] = "127.0.0.1"
    return [str(UVICORN), *command[1:]]


def start_app(site: Path | str, port: int, **env: str) -> subprocess.Popen[str]:
    """What the image runs, configured by the environment as the image is."""
    process = subprocess.Popen(
        image_command(port),
        env={**os.environ, "VAULT_MCP_SITE": str(site), "PYTHONDONTWRITEBYTECODE": "1", **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_until_healthy(f"http://127.0.0.1:{port}/healthz", process)
    return process


def wait_until_healthy(url: str, process: subprocess.Popen[str] | None = None) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError):
            pass
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the server exited: {process.stderr.read() if process.stderr else ''}")
        assert time.monotonic() < deadline, f"{url} never answered 200"
        time.sleep(0.1)


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
