"""The command line as a user meets it: `python -m mkdocs_vault_mcp`, its help, the options that only HTTP takes,
a bind beyond loopback, and an index of another schema version. Real builds, real processes, real MCP sessions."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from mcp import StdioServerParameters

from helpers.mcp_session import session_with
from helpers.ports import free_port
from helpers.site import Site, built_site
from mkdocs_vault_mcp import __version__
from mkdocs_vault_mcp.index.freshness import Freshness
from mkdocs_vault_mcp.index.schema import FORMAT_VERSION
from mkdocs_vault_mcp.mcp.live import LiveServer
from mkdocs_vault_mcp.mcp.streamable_http import answering_endpoints

PAGES = {
    "index.md": "# Home\n\nWelcome to the handbook.\n",
    "guide/install.md": "# Install\n\nRun the installer.\n",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return built_site(tmp_path_factory.mktemp("cli"), {"plugins": ["vault-mcp"]}, PAGES)


def run_module(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """`python -m mkdocs_vault_mcp ARGS`, as a user runs it where the script is not on PATH."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs_vault_mcp", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "COLUMNS": "100"},
    )


# --- python -m, --help --------------------------------------------------------------------------------------


def test_python_m_runs_the_command_and_serves_over_stdio(built: Site) -> None:
    done = run_module("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"mkdocs-vault-mcp {__version__}", done.stderr
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "mkdocs_vault_mcp", "serve", str(built.site_dir)]
    )
    with session_with(server) as session:
        assert session.ok("count_documents")["total"] == len(PAGES)


def help_entries(text: str) -> dict[str, str]:
    """Option -> its help text, from an argparse help screen (an entry's text may start on the next line)."""
    entries: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        option = re.match(r"  (-{1,2}[\w-]+)(?:,? [^ ]+)*(?:\s{2,}(.*))?$", line)
        if option:
            current = option[1]
            entries[current] = option[2] or ""
        elif current is not None and line.startswith(" " * 6) and line.strip():
            entries[current] += " " + line.strip()
        else:
            current = None
    return entries


@pytest.mark.parametrize("command", [[], ["serve"], ["index"]])
def test_help_gives_examples_and_says_what_every_option_does(command: list[str]) -> None:
    done = run_module(*command, "--help")
    assert done.returncode == 0, done.stderr
    entries = help_entries(done.stdout)
    assert {"-h", "--help"} & entries.keys()
    assert [option for option, text in entries.items() if len(text.strip()) < 10] == [], done.stdout
    if command != ["index"]:
        assert "examples:" in done.stdout and "mkdocs-vault-mcp serve site/ --transport http" in done.stdout
    if command == ["serve"]:
        assert {"--transport", "--host", "--port", "--path", "--allow-host", "--token-env"} <= entries.keys()
        assert "stdio" in entries["--transport"] and "http" in entries["--transport"]


@pytest.mark.parametrize(
    "options",
    [
        ["--port", "30110"],
        ["--host", "0.0.0.0"],
        ["--path", "/x"],
        ["--allow-host", "docs.example.com"],
        ["--host", "::1", "--port", "30110"],
    ],
)
def test_an_http_option_without_the_http_transport_is_an_error_that_says_so(built: Site, options: list[str]) -> None:
    done = run_module("serve", str(built.site_dir), *options)
    assert done.returncode == 2, done.stderr
    named = [option for option in options if option.startswith("--")]
    assert all(option in done.stderr for option in named), done.stderr
    assert "--transport http" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""  # nothing served over stdio


# --- a bind beyond loopback ---------------------------------------------------------------------------------


def test_the_urls_printed_for_a_bind_are_ones_the_host_check_lets_through() -> None:
    assert answering_endpoints("127.0.0.1", 8765, "/mcp", []) == ["http://127.0.0.1:8765/mcp"]
    assert answering_endpoints("0.0.0.0", 8765, "/mcp", []) == ["http://127.0.0.1:8765/mcp"]
    assert answering_endpoints("::", 8765, "/mcp", []) == ["http://[::1]:8765/mcp"]
    assert answering_endpoints("0.0.0.0", 8765, "/mcp", ["docs.example.com", "proxy.example.com:443"]) == [
        "http://127.0.0.1:8765/mcp",
        "http://docs.example.com:8765/mcp",
        "http://proxy.example.com:443/mcp",
    ]
    assert answering_endpoints("192.0.2.7", 8765, "/mcp", []) == ["http://192.0.2.7:8765/mcp"]
    # The server beside `mkdocs serve` (plugin options mcp_host, mcp_allowed_hosts) logs the same URLs.
    options = SimpleNamespace(mcp_host="0.0.0.0", mcp_port=8765, mcp_path="/mcp", mcp_allowed_hosts=["docs.example"])
    assert LiveServer(options, Freshness()).url == "http://127.0.0.1:8765/mcp and http://docs.example:8765/mcp"


# Run in a network namespace of its own (only its loopback device): the server binds every address there, and
# no port of the machine opens. It posts an MCP initialize to every URL the server printed, as a client would.
IN_NAMESPACE = textwrap.dedent("""
    import json, subprocess, sys, urllib.request
    server = subprocess.Popen([sys.executable, "-m", "mkdocs_vault_mcp", *sys.argv[1:]], stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = server.stdout.readline().strip()
    answers = {}
    try:
        for url in line.removeprefix("MCP server at ").split(" and ") if line else ():
            host = url.split("/")[2]
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}}).encode()
            request = urllib.request.Request("http://127.0.0.1:" + host.rpartition(":")[2] + "/mcp", data=body,
                                             headers={"Host": host, "Content-Type": "application/json",
                                                      "Accept": "application/json, text/event-stream"})
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    answers[url] = response.status
            except urllib.error.HTTPError as error:
                answers[url] = error.code
    finally:
        server.terminate()
        _, errors = server.communicate(timeout=30)
    print(json.dumps({"line": line, "answers": answers, "stderr": errors}))
""")


def in_own_network(*args: str) -> dict:
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs a network namespace of its own (unshare -rn) to bind every address safely")
    script = 'ip link set lo up 2>/dev/null; python="$0" code="$1"; shift; exec "$python" -c "$code" "$@"'
    done = subprocess.run(
        [unshare, "-rn", "sh", "-c", script, sys.executable, IN_NAMESPACE, *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_bind_to_every_address_prints_urls_that_answer_and_warns_how_to_narrow_it(built: Site) -> None:
    port = free_port()
    outcome = in_own_network(
        "serve",
        str(built.site_dir),
        "--transport",
        "http",
        "--host",
        "0.0.0.0",
        "--port",
        str(port),
        "--allow-host",
        "docs.example.com",
    )
    assert outcome["line"] == (f"MCP server at http://127.0.0.1:{port}/mcp and http://docs.example.com:{port}/mcp")
    assert "0.0.0.0:" not in outcome["line"]
    assert set(outcome["answers"].values()) == {200}, outcome
    warning = outcome["stderr"]
    assert "warning" in warning and "--allow-host" in warning and "--token-env" in warning, warning
    assert "Traceback" not in warning


def test_a_loopback_bind_gives_no_warning(built: Site) -> None:
    outcome = in_own_network("serve", str(built.site_dir), "--transport", "http", "--port", str(free_port()))
    assert set(outcome["answers"].values()) == {200}, outcome
    assert "warning" not in outcome["stderr"]


# --- the schema and package versions in the index -----------------------------------------------------------


def info(index: Path) -> dict[str, str]:
    with sqlite3.connect(index) as conn:
        facts = dict(conn.execute("SELECT key, value FROM info"))
    conn.close()
    return facts


def index_copy(built: Site, folder: Path, *, set_rows: dict[str, str], delete: tuple[str, ...] = ()) -> Path:
    copy = folder / "index.sqlite"
    shutil.copyfile(built.index_path, copy)
    with sqlite3.connect(copy) as conn:
        conn.executemany("INSERT OR REPLACE INTO info (key, value) VALUES (?, ?)", set_rows.items())
        conn.executemany("DELETE FROM info WHERE key = ?", [[key] for key in delete])
    conn.close()
    return copy


def test_the_index_says_which_schema_and_package_version_wrote_it(built: Site) -> None:
    facts = info(built.index_path)
    assert facts["schema_version"] == FORMAT_VERSION and facts["package_version"] == __version__


@pytest.mark.parametrize(
    ("found", "newer"), [(str(int(FORMAT_VERSION) - 1), False), (str(int(FORMAT_VERSION) + 1), True)]
)
def test_an_index_of_another_schema_is_refused_with_both_versions_and_the_rebuild_command(
    built: Site, tmp_path: Path, found: str, newer: bool
) -> None:
    copy = index_copy(built, tmp_path, set_rows={"schema_version": found, "package_version": "0.0.7"})
    done = run_module("serve", str(copy))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    message = done.stderr
    assert f"schema version {found}" in message and f"schema version {FORMAT_VERSION}" in message
    assert "mkdocs-vault-mcp 0.0.7" in message and f"mkdocs-vault-mcp {__version__}" in message
    assert "`mkdocs build`" in message and "`mkdocs-vault-mcp index SITE_DIR`" in message
    assert ("pip install -U mkdocs-vault-mcp" in message) is newer


def test_an_index_from_before_versions_were_kept_is_refused_by_its_options_version(built: Site, tmp_path: Path) -> None:
    options = info(built.index_path)["options"].partition(":")[2]
    old = str(int(FORMAT_VERSION) - 1)
    copy = index_copy(
        built, tmp_path, set_rows={"options": f"{old}:{options}"}, delete=("schema_version", "package_version")
    )
    done = run_module("serve", str(copy))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"schema version {old} (written by an older version)" in done.stderr
    assert "`mkdocs build`" in done.stderr and "not a vault-mcp index" not in done.stderr


def test_an_index_from_another_package_version_of_the_same_schema_is_served(built: Site, tmp_path: Path) -> None:
    copy = index_copy(built, tmp_path, set_rows={"package_version": "0.0.7"})
    server = StdioServerParameters(command=sys.executable, args=["-m", "mkdocs_vault_mcp", "serve", str(copy)])
    with session_with(server) as session:
        assert session.ok("count_documents")["total"] == len(PAGES)
