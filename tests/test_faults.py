"""Faults during `mkdocs build`: each ends in one clear MkDocs error, never a traceback, never a
half-written or leftover file in the site, and the index published before stays until a whole new one replaces it.

Real `mkdocs build` processes. A read-only folder is a read-only bind mount when running as root (root writes
through permissions), else a folder without write permission; a full disk is a small tmpfs. Both need `mount`,
and those tests are skipped where it is not allowed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from helpers.served import random_pages
from helpers.site import Site
from mkdocs_vault_mcp.child_processes import spare_cpu

MKDOCS = Path(sys.executable).with_name("mkdocs")
PAGES = {"index.md": "# Home\n\nWelcome.\n", "guide/install.md": "# Install\n\nRun pip.\n"}


def mkdocs_build(site: Site, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(MKDOCS), "build", "-f", str(site.root / "mkdocs.yml"), *flags],
        capture_output=True,
        text=True,
        cwd=site.root,
    )


def write_config(site: Site, **options: object) -> None:
    import yaml

    settings = {
        "site_name": "Faults",
        "docs_dir": "docs",
        "site_dir": "site",
        "plugins": [{"vault-mcp": {"stats_page": False, **options}}],
    }
    (site.root / "mkdocs.yml").write_text(yaml.safe_dump(settings))


def assert_one_clear_error(run: subprocess.CompletedProcess, *words: str) -> str:
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1 and "vault-mcp could not" in errors[0], run.stderr
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") or p.name.endswith("-journal"))


def can_mount() -> bool:
    if os.geteuid() != 0:
        return False
    probe = Path("/proc/self/mountinfo")
    return probe.exists() and subprocess.run(["mount", "--version"], capture_output=True).returncode == 0


@contextmanager
def mounted(*arguments: str, target: Path) -> Iterator[None]:
    run = subprocess.run(["mount", *arguments, str(target)], capture_output=True, text=True)
    if run.returncode != 0:
        pytest.skip(f"mount is not allowed here: {run.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(target)], check=False)


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` cannot be written to, by this user and by its build processes."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    with mounted("--bind", str(folder), target=folder):
        remount = subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], capture_output=True, text=True)
        if remount.returncode != 0:
            pytest.skip(f"a read-only remount is not allowed here: {remount.stderr.strip()}")
        yield


@pytest.fixture
def faults_site(tmp_path: Path) -> Site:
    site = Site(tmp_path, None)
    site.write_pages(PAGES)
    write_config(site)
    return site


def test_a_cache_dir_that_is_a_file_is_one_clear_error(faults_site):
    (faults_site.root / "cache-file").write_text("not a folder")
    write_config(faults_site, cache_dir="cache-file")
    assert_one_clear_error(mkdocs_build(faults_site), "cache-file", "cache_dir must be a writable folder")


def test_an_index_path_that_is_a_folder_is_one_clear_error(faults_site):
    (faults_site.root / ".cache" / "plugin" / "vault-mcp" / "build.sqlite").mkdir(parents=True)
    assert_one_clear_error(mkdocs_build(faults_site), "build.sqlite", "unable to open database file")


def test_an_unwritable_cache_dir_is_one_clear_error(faults_site):
    cache = faults_site.root / ".cache" / "plugin" / "vault-mcp"
    cache.mkdir(parents=True)
    with read_only(cache):
        assert_one_clear_error(mkdocs_build(faults_site), "working index", "cache_dir")


def test_a_read_only_site_folder_is_one_clear_error_and_keeps_the_old_index(faults_site):
    assert mkdocs_build(faults_site).returncode == 0
    published = faults_site.site_dir / "vault-mcp"
    old = (published / "index.sqlite").read_bytes()
    faults_site.write("guide/new.md", "# New\n")
    with read_only(published):
        # --dirty: MkDocs itself would otherwise fail to clean a mount point out of the site
        error = assert_one_clear_error(mkdocs_build(faults_site, "--dirty"), str(published), "site_dir")
        assert "Read-only file system" in error or "Permission denied" in error
    assert (published / "index.sqlite").read_bytes() == old
    assert leftovers(published) == []
    # The whole site read-only: MkDocs itself would end in a traceback as it cleans or writes the first page.
    with read_only(faults_site.site_dir):
        for flags in ((), ("--dirty",)):
            error = assert_one_clear_error(mkdocs_build(faults_site, *flags), str(faults_site.site_dir), "site_dir")
            assert "Read-only file system" in error or "Permission denied" in error
    assert (published / "index.sqlite").read_bytes() == old


@pytest.mark.skipif(not can_mount(), reason="needs root and mount for a small tmpfs")
def test_a_full_disk_is_one_clear_error_with_no_half_written_file(faults_site):
    published = faults_site.site_dir / "vault-mcp"
    published.mkdir(parents=True)
    with mounted("-t", "tmpfs", "-o", "size=256k", "tmpfs", target=published):
        assert mkdocs_build(faults_site, "--dirty").returncode == 0
        old = (published / "index.sqlite").read_bytes()
        faults_site.write_pages(random_pages(10, sections=10, words=100))  # an index that no longer fits
        error = assert_one_clear_error(mkdocs_build(faults_site, "--dirty"), str(published))
        assert "full" in error or "No space left" in error
        assert (published / "index.sqlite").read_bytes() == old
        assert leftovers(published) == []
    cache = faults_site.root / ".cache" / "plugin" / "vault-mcp"
    with mounted("-t", "tmpfs", "-o", "size=64k", "tmpfs", target=cache):
        error = assert_one_clear_error(mkdocs_build(faults_site), "working index")
        assert "full" in error or "No space left" in error


def test_a_build_killed_while_it_publishes_leaves_nothing_that_a_dirty_build_deploys(tmp_path):
    site = Site(tmp_path, None)
    site.write_pages(random_pages(100))  # a 10 MB index: copying it takes tens of milliseconds
    write_config(site)
    assert mkdocs_build(site).returncode == 0
    published = site.site_dir / "vault-mcp"
    old = (published / "index.sqlite").read_bytes()
    site.write("p000.md", "# Changed\n\nSo the next build publishes a new index.\n")
    for _ in range(5):  # the kill must land while the copy is under way; a busy machine may miss it
        build = subprocess.Popen(
            [str(MKDOCS), "build", "--dirty", "-f", str(site.root / "mkdocs.yml")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=site.root,
        )
        caught = False
        deadline = time.monotonic() + 60
        while build.poll() is None and time.monotonic() < deadline:
            if any(name.startswith(".index-") for name in os.listdir(published)):
                build.send_signal(signal.SIGKILL)
                caught = True
                break
        build.wait()
        if caught:
            break
    else:
        pytest.fail("the build was never caught while it published")
    assert any(name.startswith(".index-") for name in os.listdir(published)), "the kill left nothing to clean"
    assert (published / "index.sqlite").read_bytes() == old, "the old index is whole"
    run = mkdocs_build(site, "--dirty")
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    assert leftovers(published) == []
    import sqlite3

    with sqlite3.connect(published / "index.sqlite") as conn:
        assert conn.execute("SELECT title FROM documents WHERE path = 'p000.md'").fetchone() == ("Changed",)


STOP_HOOK = """
import os
import signal

import mkdocs_vault_mcp.index.write.writer as index_writer

index_writer.PAGES_FOR_A_PROCESS = 0  # a writer process, however few the pages


def on_env(env, config, files, **kwargs):  # before vault-mcp's on_env, which asks the process for the commit
    writer = config.plugins["vault-mcp"].indexing.writer
    writer.fingerprints  # the index is open
    pid = writer._writes.worker_pid()
    os.environ["STOPPED_WRITER"] = str(pid)  # for kill_hook.py
    os.kill(pid, signal.SIGSTOP)
    return env
"""
KILL_HOOK = """
import os
import signal

from mkdocs.plugins import event_priority


@event_priority(-200)  # after vault-mcp's on_env: the commit is asked for, and waited for later
def on_env(env, config, files, **kwargs):
    os.kill(int(os.environ.pop("STOPPED_WRITER")), signal.SIGKILL)
    return env
"""


@pytest.mark.skipif(not spare_cpu(), reason="a writer process runs only with a second CPU")
def test_a_commit_that_fails_in_the_writer_process_is_one_clear_error_that_blames_no_page(tmp_path):
    """The process commits while MkDocs renders the templates, and the stats page (rendered last) waits for it;
    its failure is still the plugin's one error, without MkDocs' "Error building page" before it."""
    site = Site(tmp_path, None)
    site.write_pages(PAGES)
    (site.root / "stop_hook.py").write_text(STOP_HOOK, encoding="utf-8")
    (site.root / "kill_hook.py").write_text(KILL_HOOK, encoding="utf-8")
    write_config(site, stats_page="stats/")
    with (site.root / "mkdocs.yml").open("a", encoding="utf-8") as config:
        config.write("hooks:\n- stop_hook.py\n- kill_hook.py\n")
    assert_one_clear_error(mkdocs_build(site), "working index", "writer process ended")
    published = site.site_dir / "vault-mcp"
    assert not (published / "index.sqlite").exists() and not (published / "snapshot.json").exists()
