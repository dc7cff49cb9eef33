"""`mkdocs-vault-mcp serve SITE_DIR`, the console script, against a real built site: over stdio and over
Streamable HTTP through the SDK's `Client`, its errors on a bad command line, and its promise never to
write the index."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import StdioServerParameters

from helpers.mcp_session import session_with
from helpers.ports import free_port
from helpers.site import Site, built_site
from mkdocs_vault_mcp.mcp.server import IndexReader

SCRIPT = Path(sys.executable).parent / "mkdocs-vault-mcp"
PAGES = {
    "index.md": "---\ntags: [start]\nupdated: 2025-01-02T03:04:05Z\n---\n# Home\n\nWelcome to the handbook.\n",
    "guide/install.md": "---\ntags: [start, setup]\nupdated: 2025-02-01T00:00:00+01:00\n---\n"
    "# Install\n\nRun the installer.\n\n## Upgrade\n\nRun it again.\n",
    "guide/usage.md": "---\nupdated: 2025-03-01T12:00:00Z\n---\n# Usage\n\nCall the tools.\n",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Site:
    config = {"plugins": [{"vault-mcp": {"modified_meta": "updated"}}]}
    return built_site(tmp_path_factory.mktemp("stdio"), config, PAGES)


def fingerprint(path: Path) -> tuple[str, int, int]:
    status = path.stat()
    return hashlib.sha256(path.read_bytes()).hexdigest(), status.st_mtime_ns, status.st_size


def files_beside(path: Path) -> set[str]:
    return {child.name for child in path.parent.iterdir()}


def session(server: Any, work: Any) -> Any:
    """Run `work(call, tools)` inside one client session; `call(tool, **arguments)` is synchronous."""
    with session_with(server) as mcp:
        return work(mcp.call, list(mcp.tools.values()))


def stdio(target: Path) -> StdioServerParameters:
    return StdioServerParameters(command=str(SCRIPT), args=["serve", str(target)])


def exercise(call: Any, tools: list[Any]) -> dict[str, Any]:
    """A few calls that every transport must answer alike."""
    assert {tool.name for tool in tools} == {
        "count_documents",
        "aggregate_documents",
        "get_recent",
        "query_documents",
        "search",
        "read",
        "stats",
        "links",
    }
    counted = call("count_documents", folder="guide")
    assert not counted.is_error and counted.structured_content == {"total": 2, "index_stale": False}
    assert counted.meta["index_stale"] is False
    months = call("aggregate_documents", by="month")
    assert [(b["key"], b["count"]) for b in months.structured_content["buckets"]] == [
        ("2025-01", 2),
        ("2025-03", 1),  # 2025-02-01T00:00+01:00 is January in UTC
    ]
    recent = call("get_recent", limit=1)
    assert [row["path"] for row in recent.structured_content["result"]] == ["guide/usage.md"]
    found = call("search", query="installer")
    assert [hit["path"] for hit in found.structured_content["result"]] == ["guide/install.md"]
    section = call("read", path="guide/install.md", section="Upgrade")
    assert section.structured_content["markdown"].strip() == "## Upgrade\n\nRun it again."
    wrong = call("aggregate_documents", by="author")
    assert wrong.is_error and '"folder", "tag", "month"' in wrong.content[0].text
    assert wrong.meta["index_stale"] is False
    typed = call("query_documents", limit="abc")
    assert typed.is_error and "limit must be an integer from 1 to 1000" in typed.content[0].text
    return {"stats": call("stats").structured_content}


def test_stdio_session_through_the_console_script(built: Site) -> None:
    before, beside = fingerprint(built.index_path), files_beside(built.index_path)
    result = session(stdio(built.site_dir), exercise)
    assert result["stats"]["document_count"] == len(PAGES)
    assert fingerprint(built.index_path) == before  # neither written nor touched
    assert files_beside(built.index_path) == beside  # no journal, WAL or lock file left behind


def test_stdio_serves_the_index_file_itself(built: Site) -> None:
    def count(call: Any, tools: list[Any]) -> int:
        return call("count_documents").structured_content["total"]

    assert session(stdio(built.index_path), count) == len(PAGES)


def test_a_read_only_index_in_a_read_only_folder(built: Site, tmp_path: Path) -> None:
    copy = tmp_path / "deployed"
    shutil.copytree(built.site_dir, copy)
    index = copy / "vault-mcp" / "index.sqlite"
    read_only_folders = [index.parent, copy]
    index.chmod(0o444)
    for folder in read_only_folders:
        folder.chmod(0o555)
    try:
        before, beside = fingerprint(index), files_beside(index)
        result = session(stdio(copy), exercise)
        assert result["stats"]["document_count"] == len(PAGES)
        assert fingerprint(index) == before
        assert files_beside(index) == beside
    finally:
        for folder in read_only_folders:
            folder.chmod(0o755)


def test_the_servers_connection_cannot_write(built: Site) -> None:
    """Tests run as root, where file permissions stop nothing: the connection itself must refuse."""
    before = fingerprint(built.index_path)
    conn = IndexReader(built.index_path).connection()
    assert conn.execute("PRAGMA query_only").fetchone() == (1,)
    for statement in ("DELETE FROM documents", "CREATE TABLE scratch (x)", "PRAGMA user_version = 7"):
        with pytest.raises(sqlite3.OperationalError, match=r"readonly|read-only|query_only"):
            conn.execute(statement)
            conn.commit()
    assert conn.execute("SELECT count(*) FROM documents").fetchone() == (len(PAGES),)
    assert fingerprint(built.index_path) == before


# --- A bad command line: a clear message, no traceback -----------------------------------------------


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_a_missing_site_dir_is_one_clear_error(tmp_path: Path) -> None:
    done = run_cli("serve", str(tmp_path / "nowhere"))
    assert done.returncode == 2
    assert "does not exist" in done.stderr and "vault-mcp/index.sqlite" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_a_folder_without_an_index_is_one_clear_error(tmp_path: Path) -> None:
    done = run_cli("serve", str(tmp_path))
    assert done.returncode == 2
    assert "holds no vault-mcp/index.sqlite" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "content",
    [b"this is not a database\n" * 100, b"", "sqlite"],
    ids=["text", "empty file", "sqlite without the tables"],
)
def test_a_file_that_is_not_an_index_is_refused_and_left_unchanged(tmp_path: Path, content: Any) -> None:
    target = tmp_path / "index.sqlite"
    if content == "sqlite":
        with sqlite3.connect(target) as conn:
            conn.execute("CREATE TABLE notes (text)")
        conn.close()
    else:
        target.write_bytes(content)
    before = fingerprint(target)
    done = run_cli("serve", str(target))
    assert done.returncode == 2
    assert "is not a vault-mcp index" in done.stderr and "Traceback" not in done.stderr
    assert fingerprint(target) == before


def test_a_port_out_of_range_is_one_clear_error(built: Site) -> None:
    done = run_cli("serve", str(built.site_dir), "--transport", "http", "--port", "99999")
    assert done.returncode == 2 and "from 1 to 65535" in done.stderr and "Traceback" not in done.stderr


# --- Streamable HTTP ---------------------------------------------------------------------------------


def test_the_http_transport_serves_the_index_read_only_and_a_busy_port_is_one_clear_error(built: Site) -> None:
    port = free_port()
    process = subprocess.Popen(
        [str(SCRIPT), "serve", str(built.site_dir), "--transport", "http", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None  # both piped
    try:
        announced = process.stdout.readline()  # printed once the port is bound
        assert announced.strip() == f"MCP server at http://127.0.0.1:{port}/mcp", process.stderr.read()
        before = fingerprint(built.index_path)
        result = session(f"http://127.0.0.1:{port}/mcp", exercise)
        assert result["stats"]["document_count"] == len(PAGES)
        assert fingerprint(built.index_path) == before

        busy = run_cli("serve", str(built.site_dir), "--transport", "http", "--port", str(port))
        assert busy.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in busy.stderr
        assert "--port" in busy.stderr and "Traceback" not in busy.stderr
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    assert process.returncode in (0, -15)
    assert "Traceback" not in process.stderr.read()


# --- Without MkDocs ----------------------------------------------------------------------------------

# The console script's own entry point, run with every `mkdocs` import refused: the standalone server must
# serve a built site where MkDocs is not installed (a server, a container), over either transport.
WITHOUT_MKDOCS = """
import sys

class RefuseMkDocs:
    def find_spec(self, name, path=None, target=None):
        if name == "mkdocs" or name.startswith("mkdocs."):
            raise ImportError(f"the standalone server imported {name}")
        return None

sys.meta_path.insert(0, RefuseMkDocs())
from mkdocs_vault_mcp.cli import main
main(sys.argv[1:])
"""


def test_the_standalone_server_serves_stdio_without_mkdocs(built: Site) -> None:
    server = StdioServerParameters(command=sys.executable, args=["-c", WITHOUT_MKDOCS, "serve", str(built.site_dir)])
    assert session(server, exercise)["stats"]["document_count"] == len(PAGES)


def test_the_standalone_server_serves_http_without_mkdocs(built: Site) -> None:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            WITHOUT_MKDOCS,
            "serve",
            str(built.site_dir),
            "--transport",
            "http",
            "--port",
            str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None  # both piped
    try:
        announced = process.stdout.readline()
        assert announced.strip() == f"MCP server at http://127.0.0.1:{port}/mcp", process.stderr.read()
        assert session(f"http://127.0.0.1:{port}/mcp", exercise)["stats"]["document_count"] == len(PAGES)
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert "the standalone server imported" not in process.stderr.read()


def test_the_http_transport_module_imports_nothing_of_mkdocs() -> None:
    code = (
        "import sys, mkdocs_vault_mcp.cli, mkdocs_vault_mcp.mcp.server, mkdocs_vault_mcp.mcp.stdio, "
        "mkdocs_vault_mcp.mcp.streamable_http\n"
        "print(sorted(m for m in sys.modules if m == 'mkdocs' or m.startswith('mkdocs.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]", done.stdout


# --- Schema portability ------------------------------------------------------------------------------


@pytest.mark.one_python
def test_the_inspectors_strict_check_finds_no_schema_a_client_may_reject(built: Site) -> None:
    """`npx @modelcontextprotocol/inspector --cli --method tools/list --strict`, with the Node 22 it needs, both
    installed by npm into .cache/inspector once (about a minute); later runs take ~15 s."""
    script = Path(__file__).resolve().parent.parent / "bench" / "inspector_strict.py"
    done = subprocess.run(
        [sys.executable, str(script), "--site", str(built.site_dir), "--no-results"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if done.returncode == 3:
        pytest.skip(f"the Inspector could not be installed from the npm registry: {done.stderr.strip()}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "warnings and errors: 0" in done.stdout
