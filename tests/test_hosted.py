"""A hosted `/mcp`: the ASGI app factory run by uvicorn as the container image runs it (health, token, CORS), and
several server processes behind a real reverse proxy (nginx, round robin) answering one client's alternating calls
exactly as one process does."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.hosted import image_command, start_app, stop, wait_until_healthy
from helpers.mcp_session import session_with
from helpers.ports import free_port
from helpers.site import Site, built_site

NGINX = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if Path(p).is_file()), None)
PAGES = {
    "index.md": "---\ntags: [start]\n---\n# Home\n\nWelcome to the weather station handbook.\n",
    "guide/install.md": "---\ntags: [start, setup]\n---\n# Install\n\nFlash the firmware to the board.\n\n"
    "## Upgrade\n\nFlash it again with the new firmware.\n",
    "guide/sensors.md": "# Sensors\n\nThe anemometer measures wind; see [install](install.md).\n",
    "reference/api.md": "# API\n\nThe station answers over HTTP with JSON readings.\n",
}
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search", {"query": "firmware"}),
    ("count_documents", {"folder": "guide"}),
    ("read", {"path": "guide/install.md", "section": "Upgrade"}),
    ("aggregate_documents", {"by": "tag"}),
    ("query_documents", {"sort": "title"}),
    ("links", {"show": "backlinks", "target": "guide/install.md"}),
    ("get_recent", {"limit": 3}),
    ("stats", {}),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return built_site(tmp_path_factory.mktemp("hosted"), {"plugins": ["vault-mcp"]}, PAGES)


@pytest.fixture
def apps(built: Site) -> Iterator[list[int]]:
    ports = [free_port() for _ in range(3)]
    processes = [start_app(built.site_dir, port) for port in ports]
    yield ports
    for process in processes:
        stop(process)


def post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **(headers or {}),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, dict(answer.headers), answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
}


def test_the_app_factory_answers_initialize_and_search_and_its_health(built: Site) -> None:
    port = free_port()
    process = start_app(built.site_dir, port)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as answer:
            health = json.loads(answer.read())
        assert health["status"] == "ok" and health["documents"] == len(PAGES)
        status, _, body = post(f"http://127.0.0.1:{port}/mcp", INITIALIZE)
        assert status == 200 and json.loads(body)["result"]["serverInfo"]["name"] == "mkdocs-vault-mcp"
        with session_with(f"http://127.0.0.1:{port}/mcp") as mcp:
            assert mcp.paths("firmware") == ["guide/install.md"]
    finally:
        stop(process)


def test_the_app_asks_for_its_token_and_answers_cors_preflights_for_the_origins_it_was_given(built: Site) -> None:
    port = free_port()
    process = start_app(
        built.site_dir, port, VAULT_MCP_TOKEN="s3cret-token", VAULT_MCP_CORS_ORIGINS="https://agent.example.com"
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        assert post(url, INITIALIZE)[0] == 401
        status, headers, _ = post(
            url, INITIALIZE, {"Authorization": "Bearer s3cret-token", "Origin": "https://agent.example.com"}
        )
        assert status == 200 and headers["access-control-allow-origin"] == "https://agent.example.com"
        preflight = urllib.request.Request(
            url,
            method="OPTIONS",
            headers={
                "Origin": "https://agent.example.com",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version",
            },
        )
        with urllib.request.urlopen(preflight, timeout=5) as answer:
            assert answer.status == 200
            assert answer.headers["access-control-allow-origin"] == "https://agent.example.com"
            assert "mcp-protocol-version" in answer.headers["access-control-allow-headers"].lower()
        other = urllib.request.Request(
            url,
            method="OPTIONS",
            headers={"Origin": "https://evil.example.net", "Access-Control-Request-Method": "POST"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(other, timeout=5)
        assert refused.value.code == 400
        # Probes need no token.
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as answer:
            assert answer.status == 200
    finally:
        stop(process)


def test_a_factory_without_a_site_says_what_to_set() -> None:
    from mkdocs_vault_mcp.asgi import ConfigurationError, create_app

    env = {k: v for k, v in os.environ.items() if k != "VAULT_MCP_SITE"}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "environ", env)
        with pytest.raises(ConfigurationError, match="set VAULT_MCP_SITE to a built site folder"):
            create_app()
    with pytest.raises(ConfigurationError, match=r"does not exist\. Give a built site folder"):
        create_app("/nonexistent-site-folder")


NGINX_CONFIG = """
daemon off;
master_process off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 256; }}
http {{
    log_format upstreams '$request_method $status $upstream_addr';
    access_log {prefix}/access.log upstreams;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    upstream vault_mcp {{
{servers}
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://vault_mcp;
            proxy_http_version 1.1;
            proxy_set_header Host $host:$server_port;
            proxy_buffering off;
        }}
    }}
}}
"""


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install nginx-light); .ci/run installs it")
def test_replicas_behind_a_round_robin_proxy_answer_alternating_calls_as_one_process_does(
    apps: list[int], tmp_path: Path
) -> None:
    port = free_port()
    servers = "\n".join(f"        server 127.0.0.1:{p};" for p in apps)
    (tmp_path / "nginx.conf").write_text(NGINX_CONFIG.format(prefix=tmp_path, servers=servers, port=port))
    assert NGINX is not None
    proxy = subprocess.Popen(
        [NGINX, "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until_healthy(f"http://127.0.0.1:{port}/healthz", proxy)
        with session_with(f"http://127.0.0.1:{apps[0]}/mcp") as one:
            expected = {tool: one.ok(tool, **arguments) for tool, arguments in CALLS}
        (tmp_path / "access.log").write_text("")
        os.kill(proxy.pid, signal.SIGUSR1)  # nginx reopens its log
        time.sleep(0.2)
        errors = 0
        answered = 0
        proxied = f"http://127.0.0.1:{port}/mcp"
        with session_with(proxied) as first, session_with(proxied) as second:
            for number in range(1000):
                tool, arguments = CALLS[number % len(CALLS)]
                client = first if number % 2 == 0 else second
                result = client.call(tool, **arguments)
                if result.is_error or result.structured_content != expected[tool]:
                    errors += 1
                answered += 1
        assert answered == 1000 and errors == 0
        posts = [line.split() for line in (tmp_path / "access.log").read_text().splitlines() if line.startswith("POST")]
        assert len(posts) >= 1000 and all(status == "200" for _, status, _ in posts)
        upstream = [address for *_, address in posts]
        by_replica = Counter(upstream)
        assert set(by_replica) == {f"127.0.0.1:{p}" for p in apps}
        assert min(by_replica.values()) >= len(posts) // len(apps) - 2  # round robin: an even share each
        # Consecutive requests went to different processes.
        assert sum(a != b for a, b in itertools.pairwise(upstream)) == len(upstream) - 1
    finally:
        stop(proxy)


READ_ONLY_ROOT = """
set -e
mount -o remount,bind,ro /
if touch "$0.probe" 2>/dev/null; then echo "the root filesystem is still writable" >&2; exit 3; fi
exec "$@"
"""


def test_the_image_command_serves_with_a_read_only_root_filesystem(built: Site) -> None:
    """As `docker run --read-only` runs it: the root filesystem remounted read-only in a mount namespace of the
    server's own (skipped where one cannot be made: not root, no unshare)."""
    unshare = shutil.which("unshare")
    probe = subprocess.run(
        [
            unshare or "unshare",
            "-m",
            "--propagation",
            "private",
            "sh",
            "-c",
            "mount -o remount,bind,ro / && ! touch /ro-probe 2>/dev/null",
        ],
        capture_output=True,
    )
    if unshare is None or probe.returncode != 0:
        pytest.skip("cannot make a mount namespace with a read-only root here (needs root and unshare)")
    port = free_port()
    process = subprocess.Popen(
        [unshare, "-m", "--propagation", "private", "sh", "-c", READ_ONLY_ROOT, "/ro-root", *image_command(port)],
        env={**os.environ, "VAULT_MCP_SITE": str(built.site_dir), "PYTHONDONTWRITEBYTECODE": "1", "HOME": "/nowhere"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd="/",
    )
    try:
        wait_until_healthy(f"http://127.0.0.1:{port}/healthz", process)
        with session_with(f"http://127.0.0.1:{port}/mcp") as mcp:
            assert mcp.paths("firmware") == ["guide/install.md"]
    finally:
        stop(process)


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("VAULT_MCP_MAX_SIZE", "nan", "expected a size in MB from 1 to 1000000, got 'nan'"),
        ("VAULT_MCP_MAX_SIZE", "inf", "expected a size in MB"),
        ("VAULT_MCP_MAX_SIZE", "-1", "expected a size in MB"),
        ("VAULT_MCP_MAX_SIZE", "0.5", "expected a size in MB"),
        ("VAULT_MCP_REFRESH", "inf", "a number of seconds from"),
        ("VAULT_MCP_REFRESH", "nan", "a number of seconds from"),
        ("VAULT_MCP_REFRESH", "-5", "a number of seconds from"),
        ("VAULT_MCP_REFRESH", "0.2", "a number of seconds from"),
        ("VAULT_MCP_DOWNLOAD_TIMEOUT", "0", "a number of seconds from"),
        ("VAULT_MCP_PATH", "mcp", "expected a URL path that starts with /"),
        ("VAULT_MCP_PATH", "/mcp?x=1", "expected a URL path that starts with /"),
        ("VAULT_MCP_PATH", "/healthz", "VAULT_MCP_PATH and VAULT_MCP_HEALTH_PATH are both '/healthz'"),
        ("VAULT_MCP_HEALTH_PATH", "/mcp", "VAULT_MCP_PATH and VAULT_MCP_HEALTH_PATH are both '/mcp'"),
        ("VAULT_MCP_STATEFUL", "maybe", "expected one of 1, true"),
        ("VAULT_MCP_TOKEN", " \n", "is set but empty or only white space"),
    ],
)
def test_a_setting_the_app_cannot_take_is_refused_when_it_is_made(
    built: Site, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, expected: str
) -> None:
    from mkdocs_vault_mcp.asgi import ConfigurationError, create_app

    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigurationError) as refused:
        create_app(str(built.site_dir))
    message = str(refused.value)
    assert expected in message and variable in message and "\n" not in message, message


@pytest.mark.parametrize("path", ["mcp", "/mcp?x=1", "/{x}"])
def test_serve_checks_its_path_as_the_app_does(built: Site, path: str, capsys: pytest.CaptureFixture[str]) -> None:
    from mkdocs_vault_mcp.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["serve", str(built.site_dir), "--transport", "http", "--path", path])
    assert stopped.value.code == 2
    assert "expected a URL path that starts with /" in capsys.readouterr().err


@pytest.mark.parametrize(("variable", "value"), [("VAULT_MCP_MAX_SIZE", "nan"), ("VAULT_MCP_PATH", "mcp")])
def test_the_image_command_stops_on_a_bad_setting_with_one_line(built: Site, variable: str, value: str) -> None:
    run = subprocess.run(
        image_command(free_port()),
        env={**os.environ, "VAULT_MCP_SITE": str(built.site_dir), variable: value},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode != 0
    (line,) = [line for line in run.stderr.splitlines() if variable in line]
    assert line.startswith("mkdocs-vault-mcp: error: ") and "expected" in line, run.stderr
    assert "Traceback" not in run.stderr, run.stderr


def test_uvicorn_without_the_guarded_protocol_is_warned_of_once(built: Site, tmp_path: Path) -> None:
    """The guard cannot come from the app alone: run without it, the app says so (once) rather than be silent."""
    port = free_port()
    command = image_command(port)
    at = command.index("--http")
    del command[at : at + 2]
    with (tmp_path / "log").open("w+") as log:
        process = subprocess.Popen(
            command,
            env={**os.environ, "VAULT_MCP_SITE": str(built.site_dir)},
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            wait_until_healthy(f"http://127.0.0.1:{port}/healthz")
            for _ in range(3):
                assert post(f"http://127.0.0.1:{port}/mcp", INITIALIZE)[0] == 200
        finally:
            stop(process)
        log.seek(0)
        output = log.read()
    assert output.count("does not run the slow-connection guard") == 1, output
    assert "--http mkdocs_vault_mcp.asgi:GuardedH11Protocol" in output
