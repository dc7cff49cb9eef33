"""The package as a site owner gets it: the sdist and wheel built from this repository, the wheel installed into a
fresh virtual environment, a copy of example-site built outside the repository, and an answer over stdio; the sdist as
a packager gets it, with a test suite that runs from it."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import venv
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from mcp import StdioServerParameters

from helpers.mcp_session import session_with
from helpers.paths import ROOT
from mkdocs_vault_mcp import __version__

# Third-party modules the package needs but loads by name rather than imports, and where it names them.
LOADED_BY_NAME: dict[str, str] = {}
# The optional extra `semantic`'s modules (index/search/semantic.py imports them where it uses them) and its distributions.
SEMANTIC_MODULES = {
    "numpy": "numpy",
    "onnxruntime": "onnxruntime",
    "tokenizers": "tokenizers",
    "huggingface_hub": "huggingface-hub",
}


def normalized(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()  # PEP 503


def requirement_name(requirement: str) -> str:
    """`PyYAML>=6` -> `pyyaml`."""
    name = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert name is not None, requirement
    return normalized(name[0])


def imported_modules() -> set[str]:
    """The top-level modules that some module of the package imports, other than its own and the standard
    library's (imports inside functions and under TYPE_CHECKING included)."""
    found: set[str] = set()
    for path in (ROOT / "mkdocs_vault_mcp").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                found.update(alias.name.partition(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.partition(".")[0])
    return found - set(sys.stdlib_module_names) - {"mkdocs_vault_mcp"}


def test_the_declared_dependencies_are_what_the_package_imports() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {requirement_name(requirement) for requirement in project["dependencies"]}
    for module, where in LOADED_BY_NAME.items():
        assert f'"{module}"' in (ROOT / "mkdocs_vault_mcp" / where).read_text(encoding="utf-8"), (module, where)
    semantic = {requirement_name(requirement) for requirement in project["optional-dependencies"]["semantic"]}
    assert semantic == set(SEMANTIC_MODULES.values())
    installed = packages_distributions()  # top-level module -> the distributions that install it
    providers: dict[str, set[str]] = {}
    for module in imported_modules() - set(SEMANTIC_MODULES) | set(LOADED_BY_NAME):
        assert module in installed, f"the package imports {module}, which is not installed"
        providers[module] = {normalized(distribution) for distribution in installed[module]}
    assert {module for module, names in providers.items() if not names & declared} == set(), "not declared"
    assert declared - set().union(*providers.values()) == set(), "declared, imported by no module of the package"


def run(*command: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    try:
        import build  # noqa: F401
    except ImportError:
        pytest.skip("the `build` package is not installed (it is in the test extra)")
    # From a copy: setuptools writes build/ and *.egg-info into the tree it builds, where a stale build/lib could
    # slip removed modules into the wheel, and where a suite on another Python may be building at the same time.
    source = tmp_path_factory.mktemp("source") / "mkdocs-vault-mcp"
    left_behind = shutil.ignore_patterns(".git", ".venv*", ".cache", "site", "*.egg-info", "__pycache__", "out")

    def ignored(folder: str, names: list[str]) -> set[str]:
        # build/ and dist/ only at the top: the package has a build/ subpackage of its own
        at_top = {"build", "dist"} & set(names) if Path(folder) == ROOT else set()
        return set(left_behind(folder, names)) | at_top

    shutil.copytree(ROOT, source, ignore=ignored)
    run(sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", out, source)
    return out


def test_the_sdist_holds_the_package_its_license_and_the_test_suite(dist: Path) -> None:
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = [name.split("/", 1)[1] for name in archive.getnames() if "/" in name]
    assert "LICENSE" in names and "README.md" in names and "pyproject.toml" in names
    assert "mkdocs_vault_mcp/index/query/read.py" in names and "mkdocs_vault_mcp/assets/stats.css" in names
    assert "mkdocs_vault_mcp/__main__.py" in names
    tests = {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "tests").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.relative_to(ROOT / "tests").parts[0] != "out"
    }
    assert tests - set(names) == set()
    assert "example-site/mkdocs.yml" in names and "example-site/docs/guide/calibration.md" in names
    assert not [name for name in names if "__pycache__" in name or name.startswith(("example-site/site/", ".ci/"))]


def test_the_suite_collects_from_the_unpacked_sdist_and_what_needs_a_checkout_skips_saying_so(
    dist: Path, tmp_path: Path
) -> None:
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        # The "data" filter (Python 3.11.4 and later) refuses members that would land outside tmp_path.
        if hasattr(tarfile, "data_filter"):
            archive.extractall(tmp_path, filter="data")
        else:
            archive.extractall(tmp_path)  # our own sdist, just built
    (unpacked,) = tmp_path.iterdir()
    # `python -m pytest` from the unpacked folder: its package, not the installed one, is the one imported.
    collected = run(sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", cwd=unpacked)
    files = {line.partition("::")[0] for line in collected.splitlines() if "::" in line}
    assert files == {f"tests/{path.name}" for path in (ROOT / "tests").glob("test_*.py")}, collected[-3000:]
    assert re.search(r"^(\d+) tests collected", collected, re.M), collected[-3000:]
    # The FastAPI corpus lives beside a checkout only; the sdist's suite skips its tests, and says why.
    skipped = run(
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-rs",
        "-p",
        "no:cacheprovider",
        "tests/test_read_coverage.py",
        cwd=unpacked,
    )
    assert "1 skipped" in skipped and "needs the shared corpora" in skipped, skipped[-3000:]


def test_twine_check_passes_on_both_distributions_and_the_readme_names_the_wheel(dist: Path) -> None:
    """What the release workflow checks before it uploads: the metadata and the README render on PyPI."""
    try:
        import twine  # noqa: F401
    except ImportError:
        pytest.skip("the `twine` package is not installed (it is in the test extra)")
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    checked = run(sys.executable, "-m", "twine", "check", "--strict", sdist, wheel)
    assert checked.count("PASSED") == 2, checked
    assert sdist.name == f"mkdocs_vault_mcp-{__version__}.tar.gz"
    # The README's install line before a release: the wheel that this version's build writes, by its name.
    assert f"dist/{wheel.name}" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_release_workflow_publishes_by_trusted_publishing_what_the_tests_check() -> None:
    """The release is one procedure: the version from one place, the same build and checks as this module, then
    PyPI's trusted publishing (no stored token)."""
    workflow_file = ROOT / ".github" / "workflows" / "release.yml"
    if not workflow_file.is_file():
        pytest.skip("needs the repository's .github/ (not an sdist)")
    workflow = workflow_file.read_text(encoding="utf-8")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "mkdocs_vault_mcp.__version__"}
    assert "python -m build --sdist --wheel" in workflow and "twine check --strict dist/*" in workflow
    assert "uses: pypa/gh-action-pypi-publish@release/v1" in workflow and "id-token: write" in workflow
    assert "password:" not in workflow  # trusted publishing: no token
    assert re.search(rf"^## \[(Unreleased|{re.escape(__version__)})\]", (ROOT / "CHANGELOG.md").read_text(), re.M)


def test_the_wheel_installs_builds_example_site_and_answers_over_stdio(dist: Path, tmp_path: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    environment = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(environment)
    python = environment / "bin" / "python"
    run(python, "-m", "pip", "install", "-q", wheel, "mkdocs-material>=9.5")
    assert run(environment / "bin" / "mkdocs-vault-mcp", "--version").strip() == f"mkdocs-vault-mcp {__version__}"
    site = tmp_path / "example-site"
    shutil.copytree(ROOT / "example-site", site, ignore=shutil.ignore_patterns("site", ".cache"))
    run(environment / "bin" / "mkdocs", "build", "-q", cwd=site)
    index = site / "site" / "vault-mcp" / "index.sqlite"
    assert index.is_file()
    script = environment / "bin" / "mkdocs-vault-mcp"
    server = StdioServerParameters(command=str(script), args=["serve", str(site / "site")])
    with session_with(server) as session:
        assert session.ok("count_documents")["total"] >= 20
        answer = session.ok("read", path="guide/calibration.md", section="Apply the offset")
        assert answer["markdown"].startswith("## Apply the offset\n\nOffsets are added to raw readings")
