"""The suite's fixtures; the code they share with test modules is in tests/helpers/."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# First among the helpers: under ProperDocs, helpers.site puts its `mkdocs` alias in place before anything
# imports mkdocs.
from helpers.site import GENERATOR, Site  # isort: skip
from helpers.git_repo import Repo, build_history
from helpers.live_serve import Serve
from helpers.paths import CORPORA, ROOT
from helpers.processes import LeftBehind
from mkdocs_vault_mcp.index import conversion_pool

# A suite started in the background by a non-interactive shell (as .ci/other-pythons starts them) begins with Ctrl-C
# ignored, and every process it starts would inherit that: the serve tests stop `mkdocs serve` with SIGINT, as a user
# does. Python's own handler, put back, is reset to the default in each child process.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


LEFT_BEHIND = LeftBehind()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """A test fails when it leaves a process running once its fixtures are torn down: one whose parent ended
    before it (a server's helper), and after the last test any process this one started."""
    result = yield
    if nextitem is None:
        conversion_pool.stop()  # the workers of this process's own sessions' reads
    LEFT_BEHIND.check(descendants_too=nextitem is None)
    return result


@pytest.fixture
def site(tmp_path: Path) -> Site:
    return Site(tmp_path, {"plugins": ["vault-mcp"]})


@pytest.fixture
def history(tmp_path: Path) -> Repo:
    """A git repository whose history has every case the git times read must handle (helpers.git_repo)."""
    return build_history(tmp_path / "repo")


@pytest.fixture
def serve_factory() -> Iterator[Callable[..., Serve]]:
    """Starts real `mkdocs serve` processes; each is killed at the end of the test if it still runs."""
    started: list[Serve] = []

    def start(config: Path, *flags: str, mcp_port: int, dev_port: int | None = None) -> Serve:
        started.append(Serve(config, *flags, mcp_port=mcp_port, dev_port=dev_port))
        return started[-1]

    yield start
    for process in started:
        process.kill()


@pytest.fixture(scope="session")
def fastapi_en(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The English FastAPI docs built once with the plugin: the published index; the site is beside it."""
    if not (CORPORA / "fastapi-docs" / "en" / "docs").is_dir():
        pytest.skip(
            f"needs the shared corpora beside the repository ({CORPORA / 'fastapi-docs'}), which a checkout "
            "of the project has and the sdist does not"
        )
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    from read_coverage import build_corpus

    return build_corpus("fastapi-en", tmp_path_factory.mktemp("fastapi") / "fastapi-en")


def pytest_report_header(config: Any) -> str:
    import mkdocs.commands.build

    return f"site generator: {GENERATOR} (mkdocs.commands.build is {mkdocs.commands.build.__name__})"
