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

from helpers.mcp_session import session_over
from mkdocs_vault_mcp import budget
from mkdocs_vault_mcp.build_steps.site_folder import PAGE_BYTES
from mkdocs_vault_mcp.index.html_to_markdown import html_to_markdown

SCRIPT = Path(sys.executable).parent / "mkdocs-vault-mcp"
SECRET = "TOPSECRET-outside-the-site"
SITEMAP_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'


def page(title: str, body: str = "") -> str:
    return (
        f'<!doctype html><html lang="en"><head><title>{title}</title></head><body><div role="main">'
        f'<h1 id="top">{title}</h1><p>{body or title + " text"}</p></div></body></html>'
    )


def run_index(site: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """The console script, as a user runs it; a hang fails the test at `timeout`."""
    return subprocess.run(
        [str(SCRIPT), "index", str(site), "--cache-dir", str(site.parent / "cache"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


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
    for file in (
        site / "vault-mcp" / "index.sqlite",
        site / "vault-mcp" / "snapshot.json",
        site.parent / "cache" / "site.sqlite",
    ):
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
    write_sitemap(
        site,
        "https://h/",
        "https://h//etc/passwd",
        "http://[h/x.html",
        "https://h/guide/%00.html",
        "https://h/missing/",
    )
    log = indexed(run_index(site))
    assert set(documents(site)) == {"index.md"}
    assert f"the sitemap lists https://h//etc/passwd, whose path leads outside {site}; skipped" in log
    assert "the sitemap lists 'http://[h/x.html', which is not a URL; skipped" in log
    assert f"the sitemap lists https://h/missing/, which is not in {site}; skipped" in log
    assert "root:" not in (site / "vault-mcp" / "snapshot.json").read_text()


def test_a_sitemap_linked_from_outside_is_not_read(site: Path, outside: Path) -> None:
    (outside / "sitemap.xml").write_text(
        f"{SITEMAP_HEAD}<url><loc>https://h/../outside/secret.html</loc></url></urlset>"
    )
    (site / "sitemap.xml").symlink_to(outside / "sitemap.xml")
    log = indexed(run_index(site))
    assert "sitemap.xml is a symbolic link that leads outside the site folder; the site's HTML files are indexed" in log
    assert set(documents(site)) == {"index.md", "guide.md"}
    assert_nothing_from_outside(site)


@pytest.mark.parametrize(
    "entities, expected",
    [
        (
            '<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">'
            '<!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">'
            '<!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;"><!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;">'
            '<!ENTITY h "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;"><!ENTITY x "&h;&h;&h;&h;&h;&h;&h;&h;&h;&h;">',
            "limit on input amplification factor",
        ),
        ('<!ENTITY x SYSTEM "file:///etc/passwd">', "undefined entity &x;"),
    ],
)
def test_a_sitemap_with_entities_is_a_clear_error(site: Path, entities: str, expected: str) -> None:
    (site / "sitemap.xml").write_text(
        f'<?xml version="1.0"?>\n<!DOCTYPE urlset [{entities}]>\n<urlset><url><loc>https://h/&x;</loc></url></urlset>\n'
    )
    done = run_index(site)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "sitemap.xml' is not a readable sitemap (" + expected in done.stderr
    assert not (site / "vault-mcp").exists()


@pytest.mark.parametrize("with_sitemap", [False, True])
def test_symbolic_links_out_of_the_site_are_not_followed(site: Path, outside: Path, with_sitemap: bool) -> None:
    (site / "leak.html").symlink_to(outside / "secret.html")
    (site / "out").symlink_to(outside, target_is_directory=True)
    (site / "guide" / "again.html").symlink_to(site / "index.html")  # a link inside the site is a page
    if with_sitemap:
        write_sitemap(
            site,
            "https://h/",
            "https://h/guide/",
            "https://h/leak.html",
            "https://h/out/secret.html",
            "https://h/guide/again.html",
        )
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
    assert f"guide/index.md in {docs} is a symbolic link that leads outside the docs folder; not read" in log
    assert set(documents(site)) == {"index.md"}  # the guide has no source of its own: a generated page
    assert_nothing_from_outside(site)


def test_an_output_folder_linked_out_of_the_site_is_an_error_and_nothing_is_written_there(
    site: Path, outside: Path
) -> None:
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
            write_sitemap(
                site,
                "https://h/",
                *(f"https://h/{name}" for name in ("zero.html", "fifo.html", "dir.html", "null.html", "sock.html")),
            )
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
    assert (
        f"huge.html holds {PAGE_BYTES + 1:,} bytes or more, over the limit of {PAGE_BYTES // (1024 * 1024)} MB "
        f"({PAGE_BYTES:,} bytes) a file; not indexed"
    ) in log
    assert set(documents(site)) == {"index.md", "guide.md"}


# --- names and paths ---------------------------------------------------------------------------------------


def test_a_file_name_that_is_not_utf8_is_a_warning(site: Path) -> None:
    (site / os.fsdecode(b"caf\xff.html")).write_text(page("Bad name"))
    (site / "café.html").write_text(page("Good name"))
    log = indexed(run_index(site))
    assert "the name of 'caf\\xff.html' is not UTF-8 text" in log
    assert documents(site)["café.md"] == "/caf%C3%A9.html"


def test_duplicate_sitemap_entries_are_one_page_and_the_counts_add_up(site: Path) -> None:
    write_sitemap(
        site, "https://h/", "https://h/guide/", "https://h/guide/", "https://h/guide/index.html", "https://h/%67uide/"
    )
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


# --- pages that made the scanning quadratic ---------------------------------------------------------------

REPEATS = 16_000  # as the pages that took 30 to 43 seconds each: `<!--` x 16,000 is a 64 kB page
HOSTILE_PIECES = {
    "comment": "<!--",
    "article": "<article ",
    "link": "<a href>",
    "lt": "<",
    "open-a": "<a ",
    "heading": "<h2>",
    "heading-tag": "<h2 ",
    "paragraph": "<p>",
    "script": "<script>",
    "image": "<img ",
    "nested": "<div>",
    "permalink": '<a class="headerlink" href="#x">',
    "excluded": "<div data-search-exclude></div>",
    "quote": '<b id="x',
    "title": "<title>",
    "unquoted": "<a class=x href=#y>",
    "comments": '<div id="__comments"></div>',
}


def test_pages_that_were_quadratic_are_indexed_in_bounded_time(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    for name, piece in HOSTILE_PIECES.items():
        (site / f"{name}.html").write_text(
            f"<html><head><title>{name.title()} - Hostile</title></head><body><div role=\"main\"><h1 id='top'>"
            f"{name.title()}</h1><p>First words of {name}.</p>{piece * REPEATS}</div></body></html>"
        )
    # Before, a third of these pages took 30 to 43 seconds each; now all of them take well under a second.
    log = indexed(run_index(site, timeout=120))
    assert f"Indexed {len(HOSTILE_PIECES)} pages" in log
    with sqlite3.connect(site / "vault-mcp" / "index.sqlite") as conn:
        titles = dict(conn.execute("SELECT path, title FROM documents"))
        summaries = dict(conn.execute("SELECT path, summary FROM documents"))
    assert titles == {f"{name}.md": name.title() for name in HOSTILE_PIECES}
    for name in HOSTILE_PIECES:
        assert summaries[f"{name}.md"] == f"First words of {name}.", name


def test_hostile_html_converts_to_markdown_within_a_calls_budget_and_keeps_its_text() -> None:
    """An element with 200,000 attributes (libxml2 builds its tree in quadratic time: a minute), control characters
    in a tab's label and a summary (which lxml refuses in a tree), NUL and a lone surrogate: each converts."""
    crowded = '<h2 id="a">Crowded</h2><p ' + " ".join(f"a{n}" for n in range(200_000)) + ">Still read.</p>"
    with budget.limited(20):
        assert html_to_markdown(crowded, "https://example.org/") == "## Crowded\n\nStill read."
    tabs = (
        '<div class="tabbed-set"><input type="radio"><label>Tab\x01 one</label><div class="tabbed-content">'
        '<div class="tabbed-block"><p>Body</p></div></div></div><details><summary>\x0cMore</summary><p>Hidden</p>'
        "</details>"
    )
    assert html_to_markdown(tabs, "/") == "**Tab one**\n\nBody\n\n> **More**\n>\n> Hidden"
    # A lone surrogate reaches libxml2 as its three bytes, each shown as U+FFFD.
    assert html_to_markdown("<p>a\x00b</p><p>c\ud800d</p>", "/") == "a\ufffdb\n\nc" + "\ufffd" * 3 + "d"


def test_unclosed_html_reads_as_a_browser_reads_it() -> None:
    """What scanning in linear time answers: an unclosed comment or script hides the rest, a link without its
    end tag ends where the next one starts, a paragraph where the next one starts."""
    from mkdocs_vault_mcp.build_steps.built_pages import content_element, page_title_text, without_theme_parts
    from mkdocs_vault_mcp.page.documents import first_paragraph, split_sections
    from mkdocs_vault_mcp.page.links import extract_links, page_anchors

    links = extract_links('<p><a href="/one/">One <a href="/two/">Two</a></p>', "/", "index.md", None, [0])
    assert [(link.text, link.target) for link in links] == [("One", "/one/"), ("Two", "/two/")]
    assert extract_links('<a href="/x/">X</a><!-- <a href="/y/">Y</a>', "/", "index.md", None, [0])[0].text == "X"
    assert len(extract_links('<a href="/x/">X</a><!-- <a href="/y/">Y</a>', "/", "index.md", None, [0])) == 1
    assert page_anchors('<h2 id="a">A</h2><!-- <h2 id="b">B</h2>') == ["a"]
    assert first_paragraph("<p><p><p>Third<p>Fourth") == "Third"
    sections = split_sections('<h2 id="a">A</h2><p>Shown<!-- hidden</p><h2 id="b">B</h2><p>B text</p>')
    assert [(s.heading, s.body) for s in sections] == [("A", "Shown"), ("B", "B text")]
    assert [s.heading for s in split_sections("<h2>" * 100 + '<h2 id="real">Real</h2>')] == ["Real"]
    assert page_title_text("<title>" * 1000) is None
    assert page_title_text("<title>Page - Site</title>") == "Page - Site"
    assert content_element('<article class="x"><div role="main">Inner</div>') == "Inner"
    content = (
        '<a class="md-content__button md-icon" href="e">Edit</a><h1 id="t">T</h1><p>Body</p>'
        '<nav class="md-tags"><a href="t">tag</a></nav>'
    )
    assert without_theme_parts(content) == ('<h1 id="t">T</h1><p>Body</p>', None)


# --- two builds at once ------------------------------------------------------------------------------------


def test_a_build_while_another_holds_the_working_index_names_the_other_build(site: Path, tmp_path: Path) -> None:
    assert run_index(site).returncode == 0
    working = tmp_path / "cache" / "site.sqlite"
    other_build = sqlite3.connect(working, isolation_level=None)
    other_build.execute("BEGIN IMMEDIATE")  # what a build does for as long as it writes
    try:
        done = run_index(site)
    finally:
        other_build.execute("ROLLBACK")
        other_build.close()
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"another build is writing the working index {working}" in done.stderr
    assert "disk with room" not in done.stderr
    indexed(run_index(site))  # once it has ended


def test_a_plugin_build_while_another_holds_the_working_index_names_the_other_build(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\nText.\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: Two builds\nplugins:\n  - vault-mcp\n")
    build = [str(Path(sys.executable).with_name("mkdocs")), "build", "-f", str(tmp_path / "mkdocs.yml")]
    assert subprocess.run(build, capture_output=True, timeout=120).returncode == 0
    working = tmp_path / ".cache" / "plugin" / "vault-mcp" / "build.sqlite"
    other_build = sqlite3.connect(working, isolation_level=None)
    other_build.execute("BEGIN IMMEDIATE")
    try:
        done = subprocess.run(build, capture_output=True, text=True, timeout=120)
    finally:
        other_build.execute("ROLLBACK")
        other_build.close()
    assert done.returncode == 1 and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
    assert errors == [
        f"ERROR   -  vault-mcp: another build is writing the working index {working}, and it was "
        "still writing after 5 seconds: an `mkdocs build` or `mkdocs serve` of this site, or an "
        "`mkdocs-vault-mcp index`, with the same cache_dir. Build again once it has ended, or give "
        "each build a cache_dir of its own."
    ], done.stderr


# --- a full disk -------------------------------------------------------------------------------------------


def can_mount() -> bool:
    return os.geteuid() == 0 and subprocess.run(["mount", "--version"], capture_output=True).returncode == 0


@pytest.mark.skipif(not can_mount(), reason="needs root and mount for a small tmpfs")
def test_a_full_site_disk_names_the_sites_file_not_the_working_index(site: Path, tmp_path: Path) -> None:
    for number in range(40):
        words = " ".join(f"word{number}x{i}" for i in range(400))
        (site / f"page{number}.html").write_text(page(f"Page {number}", words))
    published = site / "vault-mcp"
    published.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(published)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"mount is not allowed here: {mounted.stderr.strip()}")
    try:
        done = run_index(site)
        leftovers = sorted(p.name for p in published.iterdir())
    finally:
        subprocess.run(["umount", "-l", str(published)], check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().endswith(
        f"error: could not write {published}/index.sqlite (No space left on device); SITE_DIR must be writable, "
        "on a disk with room"
    )
    assert "cache" not in done.stderr.splitlines()[-1]
    assert leftovers == []

    # The plugin's publishing names the site's file too, not the working index it copied from.
    from mkdocs_vault_mcp.build_steps.faults import SITE_HINT, fault_of

    copy_error = OSError(28, "No space left on device", "/cache/build.sqlite", None, f"{published}/.index-1.tmp")
    assert str(fault_of(copy_error, f"write {published}", SITE_HINT)) == (
        f"vault-mcp could not write {published} (No space left on device: {published}/.index-1.tmp). {SITE_HINT}."
    )


def test_pages_are_named_by_folder_in_one_pass_over_the_site() -> None:
    """Each page's path comes from a set of the site's folders, not from a pass over every other page: a site of
    20,000 pages took minutes."""
    from mkdocs_vault_mcp.build_steps.built_sources import page_folders, path_from_url

    urls = {
        "",
        "guide/",
        "guide/install/",
        "guide/deep/more/page.html",
        "blog/",
        "caf%C3%A9/",
        "caf%C3%A9/x/",
        "lone",
    } | {f"many/page{number}/" for number in range(20_000)}
    folders = page_folders(urls)
    paths = {url: path_from_url(url, folders) for url in urls}
    assert {
        url: paths[url]
        for url in (
            "",
            "guide/",
            "guide/install/",
            "guide/deep/more/page.html",
            "blog/",
            "caf%C3%A9/",
            "lone",
            "many/page7/",
        )
    } == {
        "": "index.md",
        "guide/": "guide/index.md",
        "guide/install/": "guide/install.md",
        "guide/deep/more/page.html": "guide/deep/more/page.md",
        "blog/": "blog.md",
        "caf%C3%A9/": "café/index.md",
        "lone": "lone.md",
        "many/page7/": "many/page7.md",
    }
    assert folders >= {"guide/", "guide/deep/", "guide/deep/more/", "café/", "many/"}


def test_markdown_headings_are_found_in_linear_time() -> None:
    """`read` finds a source's headings line by line: a heading line with a long run of spaces, or of `{#`
    that never closes, took seconds (16,000 spaces: 4 s) where it now takes milliseconds."""
    from mkdocs_vault_mcp.page.documents import markdown_headings

    for piece in (" ", "\t", " #", "{#", " {#"):
        (heading,) = markdown_headings("# Start" + piece * 200_000 + "end\n")
        assert heading.text.startswith("Start") and heading.text.endswith("end")
    found = markdown_headings("# Title  ##  \n## Two {#two .wide}\n### Three ###\n#\n####### Seven\n#  A {: #x }  \n")
    assert [(h.level, h.text, h.anchor) for h in found] == [
        (1, "Title", None),
        (2, "Two", "two"),
        (3, "Three", None),
        (1, "", None),
        (1, "A", "x"),
    ]
