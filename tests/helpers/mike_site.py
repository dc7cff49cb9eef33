"""A site published in versions by the real `mike`: a git repository whose docs change between versions, each
version deployed with `mike deploy` onto its `gh-pages` branch, which is checked out into a folder to serve."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers.scripted_git import REAL_RUN, run_git

BIN = Path(sys.executable).parent  # mike runs `mkdocs` from PATH: this venv's, with this checkout on PYTHONPATH
ROOT = Path(__file__).resolve().parents[2]

# The docs of each version: `guide.md` gains, loses and changes sections; `new.md` appears in 2.0 and `old.md`
# is gone from it.
VERSION_1 = {
    "index.md": "# Home\n\nThe first release of the widget docs.\n",
    "guide.md": (
        "# Guide\n\n## Install\n\nRun pip install widget.\nIt needs Python 3.9.\n\n"
        "## Legacy mode\n\nThe zanzibar switch turns on legacy mode.\n\n## Usage\n\nCall widget.run().\n"
    ),
    "old.md": "# Old page\n\nOnly the first release has this page.\n",
}
VERSION_2 = {
    "index.md": "# Home\n\nThe second release of the widget docs.\n",
    "guide.md": (
        "# Guide\n\n## Install\n\nRun pip install widget.\nIt needs Python 3.11.\n\n"
        "## Usage\n\nCall widget.run().\n\n## Plugins\n\nThe quasar hook loads plugins.\n"
    ),
    "new.md": "# New page\n\nOnly the second release has this page.\n",
}
CONFIG = "site_name: Widget\nsite_url: https://example.com/widget/\nuse_directory_urls: true\nplugins:\n  - vault-mcp\n"


class MikeRepo:
    """The docs repository; `deploy` builds its current docs as a version with `mike deploy`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")
        (root / ".gitignore").write_text("site/\n.cache/\n")
        (root / "mkdocs.yml").write_text(CONFIG)

    def git(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_git(self.root, *args)

    def deploy(self, pages: dict[str, str], version: str, *aliases: str) -> None:
        docs = self.root / "docs"
        for old in docs.glob("*.md"):
            old.unlink()
        docs.mkdir(exist_ok=True)
        for path, text in pages.items():
            (docs / path).write_text(text, encoding="utf-8")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", f"docs of {version}")
        self.mike("deploy", "--update-aliases", version, *aliases)

    def mike(self, *args: str) -> None:
        env = {
            **os.environ,
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
            "GIT_AUTHOR_NAME": "Tester",
            "GIT_AUTHOR_EMAIL": "tester@example.com",
            "GIT_COMMITTER_NAME": "Tester",
            "GIT_COMMITTER_EMAIL": "tester@example.com",
        }
        done = REAL_RUN([str(BIN / "mike"), *args], cwd=self.root, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]

    def checkout(self, folder: Path) -> Path:
        """The deploy branch in a folder of its own, as a web server would serve it."""
        self.git("worktree", "add", "-q", "--force", str(folder), "gh-pages")
        return folder


def mike_site(root: Path) -> tuple[MikeRepo, Path]:
    """Versions 1.0 and 2.0 (alias `latest`) deployed, and the deploy branch checked out."""
    repo = MikeRepo(root / "repo")
    repo.deploy(VERSION_1, "1.0", "latest")
    repo.deploy(VERSION_2, "2.0", "latest")
    return repo, repo.checkout(root / "published")
