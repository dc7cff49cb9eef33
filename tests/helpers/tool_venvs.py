"""Virtual environments of their own for the other site generators the tests run (ProperDocs, Zensical).

Each lives under .cache/test-venvs/pyX.Y/NAME (git-ignored), one per Python the suite runs on, so that suites on
two Pythons can run at once; it is kept while what it was made from is the same, so only the first run (and CI's
fresh clone) pays for `pip install`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from helpers.paths import ROOT

CACHE = ROOT / ".cache" / "test-venvs"
INSTALL_SECONDS = 600


def tool_venv(name: str, packages: list[str], *, beside_tests: bool) -> Path:
    """The venv's bin folder, with `packages` installed by pip.

    `beside_tests`: the test venv's packages (this project installed editable, mkdocs-material, pytest) are
    importable behind the venv's own, through a .pth file, as a plugin's dependencies are beside the
    generator in a user's environment; only `packages` are installed. Without it the venv holds nothing else.
    """
    target = CACHE / f"py{sys.version_info.major}.{sys.version_info.minor}" / name
    shared = sysconfig.get_paths()["purelib"] if beside_tests else None
    recipe = json.dumps({"packages": packages, "shared": shared, "python": sys.version}, sort_keys=True)
    stamp = target / "made-from.json"
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == recipe and (target / "bin" / "python").exists():
        return target / "bin"
    shutil.rmtree(target, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(target)], check=True, timeout=INSTALL_SECONDS)
    if shared is not None:
        own = subprocess.run(
            [str(target / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        # addsitedir, not a bare path: the test venv's own .pth files (the editable install's) run too
        Path(own, "_vault_mcp_tests.pth").write_text(f"import site; site.addsitedir({shared!r})\n", encoding="utf-8")
    done = subprocess.run(
        [str(target / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", *packages],
        capture_output=True,
        text=True,
        timeout=INSTALL_SECONDS,
    )
    if done.returncode != 0:
        raise RuntimeError(f"pip install {' '.join(packages)} into {target} failed:\n{done.stdout}\n{done.stderr}")
    stamp.write_text(recipe, encoding="utf-8")
    return target / "bin"
