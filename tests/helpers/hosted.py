"""The container image's server (uvicorn running the ASGI app factory, as the Dockerfile's CMD says) started on a
loopback port, waited for until healthy, and stopped; and every way of hosting the HTTP server (`Hosted`), for the
checks that each must pass alike."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from helpers.paths import ROOT
from helpers.ports import free_port

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


# Every way of hosting the HTTP server: `serve --transport http` and the container image's command.
HOSTINGS = ("serve --transport http", "uvicorn --factory (the image)")
CLI = Path(sys.executable).parent / "mkdocs-vault-mcp"
TOKEN_ENV = "VAULT_TEST_TOKEN"  # the variable `serve --token-env` is given; the ASGI app reads VAULT_MCP_TOKEN
PORT_ATTEMPTS = 3


def hosting_command(hosting: str, site: Path, port: int, token: str | None) -> tuple[list[str], dict[str, str]]:
    """The command and environment that serve `site` on a loopback port in `hosting`'s way, with `token` if given."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    if hosting == HOSTINGS[0]:
        command = [str(CLI), "serve", str(site), "--transport", "http", "--port", str(port)]
        if token is not None:
            command += ["--token-env", TOKEN_ENV]
            env[TOKEN_ENV] = token
        return command, env
    env["VAULT_MCP_SITE"] = str(site)
    if token is not None:
        env["VAULT_MCP_TOKEN"] = token
    return image_command(port), env


class Hosted:
    """A server started in `hosting`'s way in a process of its own; its log goes to a file (a pipe nobody reads
    would block it)."""

    def __init__(self, hosting: str, site: Path, token: str | None = None, preexec: Any = None) -> None:
        self.log = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed in __exit__, with the server)
        for attempt in range(PORT_ATTEMPTS):
            self.port = free_port()
            command, env = hosting_command(hosting, site, self.port, token)
            self.log.seek(0)
            self.log.truncate()
            self.process = subprocess.Popen(
                command, env=env, stdout=self.log, stderr=subprocess.STDOUT, text=True, preexec_fn=preexec
            )
            if self._answers():
                return
            # Another program took the port between free_port's look and the server's bind: another port.
            if "already in use" not in self.output() or attempt == PORT_ATTEMPTS - 1:
                self.stop()
                raise AssertionError(f"the server did not start: {self.output()}")

    def _answers(self) -> bool:
        deadline = time.monotonic() + 60
        while self.process.poll() is None and time.monotonic() < deadline:
            try:
                rpc(self.port, "ping", {}, timeout=5)
                return True
            except OSError:
                time.sleep(0.1)
        return False

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def rss_kb(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))

    def stop(self) -> None:
        stop(self.process)

    def __enter__(self) -> Hosted:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self.log.close()


def rpc(
    port: int, method: str, params: dict[str, Any], token: str | None = None, timeout: float = 60
) -> tuple[int, dict[str, Any] | None]:
    """One JSON-RPC request to /mcp on a connection of its own (protocol 2025-06-18, no session): the HTTP status and
    the JSON answer (None when the body is not JSON, as a 401's is not)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Mcp-Protocol-Version": "2025-06-18",
    }
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    try:
        connection.request(
            "POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}), headers
        )
        response = connection.getresponse()
        body = response.read()
        try:
            return response.status, json.loads(body)
        except ValueError:
            return response.status, None
    finally:
        connection.close()
