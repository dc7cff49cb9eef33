"""ProperDocs, the maintained fork of MkDocs 1.x: `properdocs build` and `properdocs serve` with the
plugin behave as under MkDocs. In a venv of its own (tests/helpers/tool_venvs.py) where the `properdocs` command runs,
and where the example-site and `serve` tests of this suite run again with every `mkdocs.*` import resolved to
ProperDocs, as under its command."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers.index_command import index_rows
from helpers.paths import ROOT
from helpers.site import Site
from helpers.tool_venvs import tool_venv

# The mkdocs theme is a package of its own under ProperDocs (example-site uses Material; the serve tests, mkdocs).
# Run on python3's suite only (.ci/other-pythons skips it on the other Pythons; see pyproject.toml's marker).
pytestmark = pytest.mark.one_python

PACKAGES = ["properdocs>=1.6.7,<2", "properdocs-theme-mkdocs>=1.6"]
# This suite's tests that build example-site or run `serve`, run again under ProperDocs.
AGAIN = [
    "tests/test_themes.py::test_example_site_builds_clean_but_for_its_broken_front_matter",
    "tests/test_stats_page.py::test_example_site_shows_the_page_last_in_its_nav",
    "tests/test_live.py::test_serve_keeps_the_index_current_for_an_mcp_client",
    "tests/test_live.py::test_every_kind_of_serve_run_starts_the_server",
    "tests/test_live.py::test_a_port_conflict_is_a_warning_and_serve_goes_on",
]


@pytest.fixture(scope="module")
def properdocs() -> Path:
    return tool_venv("properdocs", PACKAGES, beside_tests=True)


def test_the_example_site_and_serve_tests_pass_under_properdocs(properdocs: Path) -> None:
    done = subprocess.run(
        [str(properdocs / "python"), "-m", "pytest", "-p", "no:cacheprovider", *AGAIN],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "VAULT_MCP_TEST_GENERATOR": "properdocs"},
    )
    output = done.stdout + done.stderr
    assert "site generator: properdocs (mkdocs.commands.build is properdocs.commands.build)" in output, output
    assert done.returncode == 0, output
    summary = output.strip().splitlines()[-1]
    assert re.fullmatch(r"=* ?\d+ passed(, \d+ warnings?)? in .*", summary) and "skipped" not in summary, summary
    assert int(summary.strip("= ").split()[0]) >= len(AGAIN) + 2  # the serve kinds are parametrized


def test_properdocs_build_writes_the_index_mkdocs_build_writes(properdocs: Path, tmp_path: Path) -> None:
    with_mkdocs, with_properdocs = tmp_path / "mkdocs", tmp_path / "properdocs"
    for root in (with_mkdocs, with_properdocs):  # copy2 keeps the files' times, so the mtime-dated pages agree
        shutil.copytree(ROOT / "example-site", root, ignore=shutil.ignore_patterns(".cache", "site"))
    Site(with_mkdocs, None).build()
    done = subprocess.run(
        [str(properdocs / "properdocs"), "build", "-f", "mkdocs.yml"],
        cwd=with_properdocs,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"vault-mcp: Indexed 23 pages, 137 sections: 23 changed", done.stderr), done.stderr
    published = with_properdocs / "site" / "vault-mcp"
    assert index_rows(published / "index.sqlite") == index_rows(with_mkdocs / "site" / "vault-mcp" / "index.sqlite")
    ours, theirs = (
        json.loads((root / "site" / "vault-mcp" / "snapshot.json").read_text(encoding="utf-8"))
        for root in (with_properdocs, with_mkdocs)
    )
    assert {**ours, "generated_at": None} == {**theirs, "generated_at": None}
    assert '<div class="vm-stats">' in (with_properdocs / "site" / "stats" / "index.html").read_text(encoding="utf-8")
