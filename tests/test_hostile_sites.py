"""`mkdocs-vault-mcp index SITE_DIR` on hostile sites: a site folder is often built from contributed content (a
pull-request preview), so nothing outside the folder may reach the index, no file may hang or exhaust the
command, no page may take it quadratic time, and every failure is one clear message, never a traceback.

Each case is a small site written here and indexed by the console script, under a timeout (bounded time, not
timed: bench/hostile_index.py measures the times)."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_session import session_over
from mkdocs_vault_mcp.built_site import PAGE_BYTES

SCRIPT = Path(sys.executable).parent / "mkdocs-vault-mcp"
SECRET = "TOPSECRET-outside-the-site"
SITEMAP_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'


def page(title: str, body: str = "") -> str:
    return (f'<!doctype html><html lang="en"><head><title>{title}</title></head><body><div role="main">'
            f'<h1 id="top">{title}</h1><p>{body or title + " text"}</p></div></body></html>')


def run_index(site: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """The console script, as a user runs it; a hang fails the test at `timeout`."""
    return subprocess.run([str(SCRIPT), "index", str(site), "--cache-dir", str(site.parent / "cache"), *args],
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def indexed(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done.stderr


def documents(site: Path) -> dict[str, str]:
    """path -> url of every document the published index holds."""
    with sqlite3.connect(site / "vault-mcp" / "index.sqlite") as conn:
        return dict(conn.execute("SELECT path, url FROM documents"))


def assert_nothing_from_outside(site: Path) -> None:
    """Neither the index, nor the snapshot, nor the working index holds a byte of the outside file."""
    for file in (site / "vault-mcp" / "index.sqlite", site / "vault-mcp" / "snapshot.json",
                 site.parent / "cache" / "site.sqlite"):
        assert SECRET.encode() not in file.read_bytes(), file
    assert all(".." not in path and not path.startswith("/") for path in documents(site))


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the site that holds a page the site must never publish."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.html").write_text(page("Secret", SECRET))
    (folder / "secret.md").write_text(f"# Secret\n\n{SECRET}\n")
    return folder


@pytest.fixture
def site(tmp_path: Path) -> Path:
    folder = tmp_path / "site"
    (folder / "guide").mkdir(parents=True)
    (folder / "index.html").write_text(page("Home"))
    (folder / "guide" / "index.html").write_text(page("Guide"))
    return folder


def write_sitemap(site: Path, *locations: str) -> None:
    entries = "".join(f"<url><loc>{location}</loc></url>\n" for location in locations)
    (site / "sitemap.xml").write_text(f"{SITEMAP_HEAD}{entries}</urlset>\n")


# --- nothing from outside the site folder -----------------------------------------------------------------


def test_sitemap_locations_that_lead_outside_the_site_are_skipped_with_a_warning(site: Path, outside: Path) -> None:
    escapes = [
        f"https://h/{outside}/secret.html",  # https://h//tmp/.../secret.html: an absolute path
        "https://h/../outside/secret.html",
        "https://h/%2e%2e/outside/secret.html",
        "https://h/%2E%2E/outside/secret.html",
        "https://h/guide/..%2f..%2foutside/secret.html",
        "https://h/guide/%2e%2e%2f%2e%2e%2foutside/secret.html",
        "https://h/..%5coutside%5csecret.html",
    ]
    write_sitemap(site, "https://h/", "https://h/guide/", *escapes)
    log = indexed(run_index(site))
    assert documents(site) == {"index.md": "https://h/", "guide.md": "https://h/guide/"}
    for escape in escapes:
        assert f"the sitemap lists {escape}, whose path leads outside {site}; skipped" in log
    assert "Indexed 2 pages, 2 sections: 2 changed, 0 unchanged, 0 removed" in log
    assert_nothing_from_outside(site)


def test_a_sitemap_location_that_is_no_file_path_is_a_warning(site: Path) -> None:
    write_sitemap(site, "https://h/", "https://h//etc/passwd", "http://[h/x.html", "https://h/guide/%00.html",
                  "https://h/missing/")
    log = indexed(run_index(site))
    assert set(documents(site)) == {"index.md"}
    assert f"the sitemap lists https://h//etc/passwd, whose path leads outside {site}; skipped" in log
    assert "the sitemap lists 'http://[h/x.html', which is not a URL; skipped" in log
    assert f"the sitemap lists https://h/missing/, which is not in {site}; skipped" in log
    assert "root:" not in (site / "vault-mcp" / "snapshot.json").read_text()


@pytest.mark.parametrize("with_sitemap", [False, True])
def test_symbolic_links_out_of_the_site_are_not_followed(site: Path, outside: Path, with_sitemap: bool) -> None:
    (site / "leak.html").symlink_to(outside / "secret.html")
    (site / "out").symlink_to(outside, target_is_directory=True)
    (site / "guide" / "again.html").symlink_to(site / "index.html")  # a link inside the site is a page
    if with_sitemap:
        write_sitemap(site, "https://h/", "https://h/guide/", "https://h/leak.html", "https://h/out/secret.html",
                      "https://h/guide/again.html")
    log = indexed(run_index(site))
    assert set(documents(site)) == {"index.md", "guide/index.md", "guide/again.md"}
    assert "leak.html is a symbolic link that leads outside the site folder; not indexed" in log
    if with_sitemap:
        assert "out/secret.html is a symbolic link that leads outside the site folder; not indexed" in log
    assert_nothing_from_outside(site)


def test_sources_that_lead_outside_the_docs_folder_are_not_read(site: Path, outside: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n\nHome text\n")
    (docs / "guide" / "index.md").symlink_to(outside / "secret.md")
    log = indexed(run_index(site, "--docs-dir", str(docs)))
    assert f"guide/index.md in {docs} is a symbolic link that leads outside the site folder; not read" in log
    assert set(documents(site)) == {"index.md"}  # the guide has no source of its own: a generated page
    assert_nothing_from_outside(site)


def test_an_output_folder_linked_out_of_the_site_is_an_error_and_nothing_is_written_there(
        site: Path, outside: Path) -> None:
    (site / "vault-mcp").symlink_to(outside, target_is_directory=True)
    done = run_index(site)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{site}/vault-mcp is a symbolic link that leads outside the site folder; remove it" in done.stderr
    assert sorted(p.name for p in outside.iterdir()) == ["secret.html", "secret.md"]


def test_the_stats_page_is_never_written_through_a_link(site: Path, outside: Path) -> None:
    (site / "stats").mkdir()
    (site / "stats" / "index.html").symlink_to(outside / "elsewhere.html")  # leads nowhere yet
    (site / "vault-mcp").mkdir()
    (site / "vault-mcp" / "stats.css").symlink_to(outside / "stats.css")
    log = indexed(run_index(site))
    assert "no stats page written there" in log
    assert sorted(p.name for p in outside.iterdir()) == ["secret.html", "secret.md"]


# --- files that would hang the command or exhaust its memory -----------------------------------------------


@pytest.mark.parametrize("with_sitemap", [False, True])
def test_devices_fifos_and_sockets_are_not_read(site: Path, tmp_path: Path, with_sitemap: bool) -> None:
    (site / "zero.html").symlink_to("/dev/zero")
    os.mkfifo(site / "fifo.html")
    (site / "dir.html").mkdir()
    inside_device = site / "null.html"
    inside_device.symlink_to("/dev/null")
    listening = socket.socket(socket.AF_UNIX)
    short = Path(f"/tmp/vm-{os.getpid()}-{int(with_sitemap)}")  # a socket's path is at most 107 bytes
    short.mkdir(exist_ok=True)
    try:
        listening.bind(str(short / "s.html"))
        (site / "socket.html").symlink_to(short / "s.html")
        os.rename(short / "s.html", site / "sock.html")
        if with_sitemap:
            write_sitemap(site, "https://h/", *(f"https://h/{name}" for name in
                                                ("zero.html", "fifo.html", "dir.html", "null.html", "sock.html")))
        log = indexed(run_index(site, timeout=60))
    finally:
        listening.close()
        short.rmdir()
    assert "zero.html is a symbolic link that leads outside the site folder; not indexed" in log
    assert "fifo.html is a FIFO (named pipe), not a regular file; not indexed" in log
    assert "sock.html is a socket, not a regular file; not indexed" in log
    assert "null.html is a symbolic link that leads outside the site folder; not indexed" in log
    assert "index.md" in documents(site)


def test_a_page_over_the_size_limit_is_not_read(site: Path) -> None:
    with open(site / "huge.html", "wb") as huge:
        huge.truncate(PAGE_BYTES + 1)  # sparse: no disk, and never read
    log = indexed(run_index(site))
    assert (f"huge.html holds {PAGE_BYTES + 1:,} bytes or more, over the limit of {PAGE_BYTES // (1024 * 1024)} MB "
            f"({PAGE_BYTES:,} bytes) a file; not indexed") in log
    assert set(documents(site)) == {"index.md", "guide.md"}


# --- names and paths ---------------------------------------------------------------------------------------


def test_a_file_name_that_is_not_utf8_is_a_warning(site: Path) -> None:
    (site / os.fsdecode(b"caf\xff.html")).write_text(page("Bad name"))
    (site / "café.html").write_text(page("Good name"))
    log = indexed(run_index(site))
    assert "the name of 'caf\\xff.html' is not UTF-8 text" in log
    assert documents(site)["café.md"] == "/caf%C3%A9.html"


def test_duplicate_sitemap_entries_are_one_page_and_the_counts_add_up(site: Path) -> None:
    write_sitemap(site, "https://h/", "https://h/guide/", "https://h/guide/", "https://h/guide/index.html",
                  "https://h/%67uide/")
    log = indexed(run_index(site))
    assert set(documents(site)) == {"index.md", "guide.md"}
    assert "Indexed 2 pages, 2 sections: 2 changed, 0 unchanged, 0 removed" in log
    assert "the sitemap lists https://h/guide/index.html and https://h/guide/, which are the same page" in log


def test_a_path_longer_than_the_tools_take_is_skipped_with_a_warning(site: Path) -> None:
    folder = site
    for letter in "abcde":
        folder = folder / (letter * 200)
    folder.mkdir(parents=True)
    (folder / "deep.html").write_text(page("Deep"))
    log = indexed(run_index(site))
    assert "characters, which no tool can be given (the limit is 1,000); not indexed" in log
    assert set(documents(site)) == {"index.md", "guide.md"}


def test_a_page_whose_name_holds_a_query_and_a_fragment_is_a_links_target(site: Path) -> None:
    (site / "q?x=1#frag.html").write_text(page("Odd name"))
    indexed(run_index(site))
    assert documents(site)["q?x=1#frag.md"] == "/q%3Fx%3D1%23frag.html"
    with session_over(site / "vault-mcp" / "index.sqlite") as session:
        assert session.ok("read", path="q?x=1#frag.md")
        for show in ("backlinks", "related"):
            session.ok("links", show=show, target="q?x=1#frag.md")
            session.ok("links", show=show, target="q?x=1#frag.md#top")
