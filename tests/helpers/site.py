"""A small MkDocs site in a temp dir, built for real in-process with the generator the suite runs under."""

from __future__ import annotations

import os

# The generator the tests build with: MkDocs, or ProperDocs when tests/test_properdocs.py runs the example-site
# tests again in ProperDocs' own venv. Its alias must be in place before anything imports `mkdocs`.
GENERATOR = os.environ.get("VAULT_MCP_TEST_GENERATOR", "mkdocs")
if GENERATOR == "properdocs":
    import properdocs.replacement  # noqa: F401  (every `mkdocs.*` import is ProperDocs' from here on)

import json
import logging
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from mkdocs.commands.build import build
from mkdocs.config import load_config

from helpers.paths import ROOT

BUILD_THEN_LIST_MODULES = textwrap.dedent("""
    import sys
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    config = load_config(config_file=sys.argv[1])
    config.plugins.on_startup(command="build", dirty=False)
    build(config)
    config.plugins.on_shutdown()
    print("\\n".join(sorted(sys.modules)))
""")

# The command line of the generator: `mkdocs` or `properdocs`, beside this Python.
GENERATOR_COMMAND = Path(sys.executable).with_name(GENERATOR)


@dataclass
class Site:
    """A site in a temp dir: `write` pages, `build` it, then read what the plugin wrote."""

    root: Path
    config: dict[str, Any] | None = field(default_factory=dict)
    logs: list[logging.LogRecord] = field(default_factory=list)

    @property
    def docs(self) -> Path:
        return self.root / "docs"

    @property
    def site_dir(self) -> Path:
        return self.root / "site"

    @property
    def index_path(self) -> Path:
        return self.site_dir / "vault-mcp" / "index.sqlite"

    def write(self, path: str, text: str, *, encoding: str = "utf-8", newline: str | None = None) -> Path:
        target = self.docs / path
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "w", encoding=encoding, newline=newline) as out:
            out.write(textwrap.dedent(text).lstrip("\n"))
        return target

    def write_pages(self, pages: dict[str, str]) -> None:
        for path, text in pages.items():
            self.write(path, text)

    def build_in_root(self, log_level: int = logging.DEBUG) -> list[logging.LogRecord]:
        """`build` from the site's own folder, as a site owner runs it (paths such as snippets' base_path are
        relative to the working directory)."""
        previous = Path.cwd()
        os.chdir(self.root)
        try:
            return self.build(log_level=log_level)
        finally:
            os.chdir(previous)

    def modules_a_build_imports(self, *, warm: bool = True) -> set[str]:
        """Build the site (mkdocs.yml as `build` writes it) in a fresh Python with nothing imported before it, and
        give the names of every module that build loaded; `warm`: after a build in this process first (which
        also writes mkdocs.yml)."""
        if warm:
            self.build()
        done = subprocess.run(
            [sys.executable, "-c", BUILD_THEN_LIST_MODULES, str(self.root / "mkdocs.yml")],
            cwd=self.root,
            capture_output=True,
            text=True,
            check=True,
        )
        return set(done.stdout.split())

    def build(self, log_level: int = logging.DEBUG, **overrides: Any) -> list[logging.LogRecord]:
        """Run a real `mkdocs build` in-process; return the log records of this build (from `log_level` up:
        MkDocs checks links to anchors only when its logger is above DEBUG).

        With `config` None, the site's own mkdocs.yml is built as it is (YAML tags such as `!relative` kept).
        """
        config_file = self.root / "mkdocs.yml"
        if self.config is not None:
            settings = {"site_name": "Test site", "docs_dir": "docs", "site_dir": "site", **self.config, **overrides}
            config_file.write_text(yaml.safe_dump(settings, allow_unicode=True), encoding="utf-8")
        records: list[logging.LogRecord] = []
        handler = _Collect(records)
        # Under ProperDocs its own loggers (`properdocs.plugins.vault-mcp`) are not below `mkdocs`.
        loggers = [logging.getLogger(name) for name in dict.fromkeys(["mkdocs", GENERATOR])]
        previous = [logger.level for logger in loggers]
        for logger in loggers:
            logger.addHandler(handler)
            logger.setLevel(log_level)
        try:
            build_from(config_file)
        finally:
            for logger, level in zip(loggers, previous, strict=True):
                logger.removeHandler(handler)
                logger.setLevel(level)
            self.logs = records  # a failed build's records too, for tests of what it logged
        return records

    def messages(self, level: int = logging.INFO, prefix: str = "") -> list[str]:
        return [r.getMessage() for r in self.logs if r.levelno >= level and r.getMessage().startswith(prefix)]

    def db(self) -> sqlite3.Connection:
        return sqlite3.connect(self.index_path)

    def documents(self) -> dict[str, dict[str, Any]]:
        with self.db() as conn:
            conn.row_factory = sqlite3.Row
            rows = conn.execute(
                "SELECT d.*, s.markdown FROM documents d JOIN sources s ON s.document_id = d.id"
            ).fetchall()
        return {row["path"]: {**dict(row), "meta": json.loads(row["meta"])} for row in rows}

    def sections(self, path: str) -> list[dict[str, Any]]:
        with self.db() as conn:
            conn.row_factory = sqlite3.Row
            rows = conn.execute(
                "SELECT s.* FROM sections s JOIN documents d ON d.id = s.document_id WHERE d.path = ?"
                " ORDER BY s.position",
                [path],
            ).fetchall()
        return [dict(row) for row in rows]

    def values(self, path: str) -> dict[str, list[str]]:
        with self.db() as conn:
            rows = conn.execute(
                "SELECT field, value FROM field_values v JOIN documents d ON d.id = v.document_id"
                " WHERE d.path = ? ORDER BY field, value",
                [path],
            ).fetchall()
        values: dict[str, list[str]] = {}
        for name, value in rows:
            values.setdefault(name, []).append(value)
        return values


def built_site(root: Path, config: dict[str, Any], pages: dict[str, str]) -> Site:
    site = Site(root, config)
    site.write_pages(pages)
    site.build()
    return site


def build_from(config_file: Path) -> None:
    """A real `mkdocs build` in-process, with the startup and shutdown events the `mkdocs build` command sends."""
    config = load_config(config_file=str(config_file))
    config.plugins.on_startup(command="build", dirty=False)
    try:
        build(config)
    finally:
        config.plugins.on_shutdown()


class _Collect(logging.Handler):
    def __init__(self, records: list[logging.LogRecord]) -> None:
        super().__init__(logging.DEBUG)
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def built_example_site(root: Path) -> Site:
    """The repository's example-site, copied into `root` (without its last build and cache) and built there."""
    shutil.copytree(ROOT / "example-site", root, dirs_exist_ok=True, ignore=shutil.ignore_patterns("site", ".cache"))
    site = Site(root, config=None)
    site.build_in_root()
    return site
