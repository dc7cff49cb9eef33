"""The adapters (mkdocs_vault_mcp/adapters/) find what they rely on in the installed dependencies, and say clearly
which version lacks what when they do not: a new MCP SDK, MkDocs or CPython fails here, by name, rather than
changing the server's behaviour without a word."""

from __future__ import annotations

import datetime as dt
import json
import json.encoder
import re
import threading
import tomllib
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mkdocs.livereload import LiveReloadServer
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from mkdocs_vault_mcp.adapters import AdapterMismatch, cpython_json, mcp_sdk, mkdocs_serve

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def declared(distribution: str) -> SpecifierSet:
    dependencies = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"]
    for line in dependencies:
        requirement = Requirement(line)
        if requirement.name == distribution:
            return requirement.specifier
    raise AssertionError(f"{distribution} is not a dependency in pyproject.toml")


# --- The versions -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("adapter", [mcp_sdk, mkdocs_serve], ids=lambda adapter: adapter.DISTRIBUTION)
def test_the_installed_version_is_the_one_the_adapter_supports(adapter: Any) -> None:
    installed = metadata.version(adapter.DISTRIBUTION)
    assert installed in SpecifierSet(adapter.SUPPORTED), (
        f"{adapter.DISTRIBUTION} {installed} is installed; {adapter.__name__} is written for "
        f"{adapter.SUPPORTED}. Check what its docstring says it relies on, then widen SUPPORTED and the pin."
    )


def test_pyproject_pins_the_mcp_sdk_to_the_minor_the_adapter_supports() -> None:
    """A minor release of the SDK may change the internals mcp_sdk relies on: none is installed untested."""
    for distribution in ("mcp", "mcp-types"):
        assert declared(distribution) == SpecifierSet(mcp_sdk.SUPPORTED), distribution
    assert declared("mkdocs") == SpecifierSet(mkdocs_serve.SUPPORTED)


# --- The MCP SDK --------------------------------------------------------------------------------------------


def session_manager() -> StreamableHTTPSessionManager:
    return StreamableHTTPSessionManager(app=Server("adapters"), max_sessions=2)


def test_the_mcp_sdk_has_what_the_adapter_relies_on() -> None:
    manager = session_manager()
    assert mcp_sdk.missing(manager) == []
    mcp_sdk.evict_longest_idle_session_when_full(manager)  # wraps the admission without complaint
    assert getattr(manager, mcp_sdk.METHOD).__name__ == "admit_session"


def test_an_sdk_without_them_is_refused_with_the_names_and_the_version() -> None:
    manager = SimpleNamespace(max_sessions=2)  # a session manager of another shape: no session tables
    with pytest.raises(AdapterMismatch) as refused:
        mcp_sdk.evict_longest_idle_session_when_full(manager)  # type: ignore[arg-type]
    message = str(refused.value)
    assert "StreamableHTTPSessionManager._server_instances" in message
    assert "StreamableHTTPSessionManager._session_owners" in message
    assert f"mcp {metadata.version('mcp')} lacks" in message and mcp_sdk.SUPPORTED in message


def test_eviction_makes_room_by_ending_the_longest_idle_session() -> None:
    """The admission wrapped: at the limit, the idle session with the earliest deadline goes, a busy one stays."""
    manager = session_manager()
    admitted: list[Any] = []

    def admit(requestor: Any) -> str:
        admitted.append(requestor)
        return "new transport"

    class Scope:
        def __init__(self, deadline: float) -> None:
            self.deadline, self.cancelled = deadline, False

        def cancel(self) -> None:
            self.cancelled = True

    busy, idle_long, idle_short = (SimpleNamespace(idle_scope=Scope(d)) for d in (float("inf"), 10.0, 20.0))
    sessions: dict[str, Any] = manager._server_instances
    sessions.update({"busy": busy, "long": idle_long, "short": idle_short})
    setattr(manager, mcp_sdk.METHOD, admit)
    manager.max_sessions = 3
    mcp_sdk.evict_longest_idle_session_when_full(manager)
    assert getattr(manager, mcp_sdk.METHOD)("someone") == "new transport" and admitted == ["someone"]
    assert set(sessions) == {"busy", "short"} and idle_long.idle_scope.cancelled
    assert not busy.idle_scope.cancelled and not idle_short.idle_scope.cancelled


def test_a_request_context_without_a_client_connection_is_refused_by_name() -> None:
    context = SimpleNamespace(session=SimpleNamespace())
    with pytest.raises(AdapterMismatch, match=re.escape("ServerSession._connection")):
        mcp_sdk.client_connection(context)  # type: ignore[arg-type]
    connection = object()
    assert mcp_sdk.client_connection(SimpleNamespace(session=SimpleNamespace(_connection=connection))) is connection  # type: ignore[arg-type]


# --- MkDocs' live-reload server -----------------------------------------------------------------------------


@pytest.fixture
def livereload(tmp_path: Path) -> Any:
    server = LiveReloadServer(builder=lambda: None, host="127.0.0.1", port=0, root=str(tmp_path))
    yield server
    server.server_close()


def test_mkdocs_livereload_server_has_what_the_adapter_relies_on(livereload: LiveReloadServer, tmp_path: Path) -> None:
    assert mkdocs_serve.missing(livereload) == []
    theme = tmp_path / "theme"
    theme.mkdir()
    livereload.watch(str(theme))
    assert mkdocs_serve.watched_paths(livereload) == [str(theme)]
    asked = threading.Event()

    def wait_for_rebuild() -> None:
        with livereload._rebuild_cond:
            if livereload._rebuild_cond.wait_for(lambda: livereload._want_rebuild, timeout=10):
                asked.set()

    waiting = threading.Thread(target=wait_for_rebuild)
    waiting.start()
    assert mkdocs_serve.request_rebuild(livereload)
    waiting.join(timeout=10)
    assert asked.is_set(), "MkDocs' build loop was not woken to rebuild"


def test_another_server_is_left_alone() -> None:
    other = SimpleNamespace(observer=None)
    assert mkdocs_serve.missing(other) == [] and mkdocs_serve.watched_paths(other) == []
    assert mkdocs_serve.request_rebuild(other) is False and mkdocs_serve.watched_paths(None) == []


def test_a_livereload_server_without_them_is_refused_with_the_names_and_the_version() -> None:
    bare = LiveReloadServer.__new__(LiveReloadServer)  # as a version whose constructor sets none of them
    assert mkdocs_serve.missing(bare) == [f"LiveReloadServer.{name}" for name in mkdocs_serve.ATTRIBUTES]
    with pytest.raises(AdapterMismatch) as refused:
        mkdocs_serve.request_rebuild(bare)
    assert "LiveReloadServer._rebuild_cond" in str(refused.value)
    assert f"mkdocs {metadata.version('mkdocs')} lacks" in str(refused.value)


# --- CPython's C JSON encoder -------------------------------------------------------------------------------

VALUES = [
    {"title": "Wind vane", "tags": ["b", "a"], "draft": False, "weight": 1.5, "none": None, "ü": "é\n\u2028"},
    {"date": dt.date(2024, 5, 20), "when": dt.datetime(2024, 5, 20, 9, 30), "set": {"x"}},
    [1, "two", {"three": 3}],
    "plain text",
]


def fallback(value: Any) -> Any:
    if isinstance(value, dt.date):
        return value.isoformat()
    return sorted(value) if isinstance(value, set) else str(value)


def test_cpython_has_a_c_encoder_the_adapter_can_use() -> None:
    assert cpython_json.C_ENCODER_PROBLEM is None, (
        f"{cpython_json.C_ENCODER_PROBLEM}: front matter fingerprints fall back to the pure-Python encoder. Check "
        "json.encoder.c_make_encoder's arguments in this Python against adapters/cpython_json.py."
    )


@pytest.mark.parametrize("value", VALUES)
def test_both_encoders_write_what_json_dumps_writes(value: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = json.dumps(value, sort_keys=True, default=fallback, allow_nan=False)
    assert cpython_json.sorted_encoder(fallback)(value) == expected
    monkeypatch.setattr(cpython_json, "C_ENCODER_PROBLEM", "absent, as on PyPy")
    assert cpython_json.sorted_encoder(fallback)(value) == expected


def test_both_encoders_refuse_what_json_dumps_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    for problem in (None, "absent"):
        monkeypatch.setattr(cpython_json, "C_ENCODER_PROBLEM", problem)
        encode = cpython_json.sorted_encoder(fallback)
        with pytest.raises(ValueError):
            encode({"x": float("nan")})
        with pytest.raises(TypeError):
            encode({1: "a", "b": 2})  # keys sort_keys cannot order


def test_an_absent_or_changed_c_encoder_is_named_and_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    assert "is None" in (cpython_json._problem() or "")

    def changed(*arguments: Any) -> Any:
        raise TypeError(f"make_encoder() takes 10 arguments ({len(arguments)} given)")

    monkeypatch.setattr(json.encoder, "c_make_encoder", changed)
    assert "fails" in (cpython_json._problem() or "")
