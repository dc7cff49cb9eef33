"""Rebuilds (spec section 3, Incremental): what a second `mkdocs build` re-indexes,
how the copy in site_dir is replaced, and what a failed build or a damaged working index leaves behind."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import logging
import os
import re
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from helpers.incremental_site import PAGES, summary
from helpers.paths import ROOT
from helpers.site import Site
from mkdocs_vault_mcp.build_steps import incremental
from mkdocs_vault_mcp.index import publish, schema
from mkdocs_vault_mcp.index.search.counts import section_count
from mkdocs_vault_mcp.index.write import writer, writes
from mkdocs_vault_mcp.index.write.working_index import CommitSettings
from mkdocs_vault_mcp.page.model import RenderedPage


def row_ids(site: Site) -> dict[str, tuple[int, tuple[int, ...]]]:
    """Each page's document id and its sections' ids: what a rewrite of the page would change."""
    with site.db() as conn:
        documents = dict(conn.execute("SELECT path, id FROM documents"))
        return {
            path: (
                doc_id,
                tuple(
                    i
                    for (i,) in conn.execute(
                        "SELECT id FROM sections WHERE document_id = ? ORDER BY position", [doc_id]
                    )
                ),
            )
            for path, doc_id in documents.items()
        }


def index_files(site: Site) -> list[str]:
    """Files of site/vault-mcp other than the snapshot and the stats page's assets."""
    return sorted(p.name for p in site.index_path.parent.iterdir() if p.name != "snapshot.json" and p.suffix != ".css")


def working_index(site: Site) -> Path:
    return site.root / ".cache" / "plugin" / "vault-mcp" / "build.sqlite"


def writes_in(monkeypatch, writes: str) -> None:
    """Every build of the test writes its index on a thread ("thread"), or in a process of its own ("process", as a
    build with PAGES_FOR_A_PROCESS pages or more to write does on a machine of two CPUs or more)."""
    monkeypatch.setattr(writer, "PAGES_FOR_A_PROCESS", sys.maxsize if writes == "thread" else 0)
    monkeypatch.setattr(writer, "spare_cpu", lambda: True)


# A commit with the least settings, for the writer's own tests.
LEAST = CommitSettings(indexed_fields="auto", site_name="s", site_url=None)
IN_PROCESS = "vault-mcp: writing the index in a process of its own"


@pytest.fixture
def five(request, site, monkeypatch) -> Site:
    """Five pages, built once. Parametrized indirectly with "process", every build of the test writes the index in a
    process of its own, else on a thread."""
    writes = getattr(request, "param", "thread")
    writes_in(monkeypatch, writes)
    site.write_pages(PAGES)
    site.build()
    assert summary(site) == (5, 10, 5, 0, 0)
    in_process = [m for m in site.messages(logging.DEBUG) if m == IN_PROCESS]
    assert len(in_process) == (writes == "process")
    return site


EACH_WAY = pytest.mark.parametrize("five", ["thread", "process"], indirect=True)


def test_the_closing_line_counts_pages_sections_and_changes(five):
    with five.db() as conn:
        assert conn.execute("SELECT count(*) FROM documents").fetchone() == (5,)
        assert conn.execute("SELECT count(*) FROM sections").fetchone() == (10,)
    ours = [r for r in five.logs if r.name.startswith("mkdocs.plugins.vault-mcp") and r.levelno >= logging.INFO]
    assert [r.levelname for r in ours] == ["INFO"]
    # it closes the plugin's part: nothing of the build's own comes after it but the final timing
    later = [r.getMessage() for r in five.logs[five.logs.index(ours[0]) + 1 :] if r.levelno >= logging.INFO]
    assert all(m.startswith("Documentation built in") for m in later), later


@EACH_WAY
def test_an_unchanged_site_is_not_indexed_again(five):
    before = row_ids(five)
    five.build()
    assert summary(five) == (5, 10, 0, 5, 0)
    assert row_ids(five) == before


@EACH_WAY
def test_one_changed_page_is_the_only_one_indexed_again(five):
    before = row_ids(five)
    five.write("page-2.md", PAGES["page-2.md"].replace("Original text 2.", "Rewritten text 2.").replace("t2", "new"))
    five.build()
    assert summary(five) == (5, 10, 1, 4, 0)
    after = row_ids(five)
    assert {path: ids for path, ids in after.items() if path != "page-2.md"} == {
        path: ids for path, ids in before.items() if path != "page-2.md"
    }
    assert after["page-2.md"] != before["page-2.md"]
    assert five.sections("page-2.md")[0]["body"] == "Rewritten text 2."
    assert five.values("page-2.md") == {"tags": ["new", "shared"]}
    with five.db() as conn:  # the old rows went with the old version
        original = conn.execute("SELECT count(*) FROM sections_fts WHERE sections_fts MATCH 'body:original'")
        assert original.fetchone() == (4,)
        assert conn.execute("SELECT count(*) FROM field_values WHERE value = 't2'").fetchone() == (0,)


def test_an_object_address_new_in_every_build_does_not_index_a_page_again(five):
    # As mkautodoc prints a default value on httpx's API page: Python's repr, with an address new in every run.
    hook = five.root / "hooks" / "defaults.py"
    hook.parent.mkdir()
    hook.write_text(
        "import secrets\n\n\n"
        "def on_page_markdown(markdown, page, **kwargs):\n"
        "    if page.file.src_uri != 'page-3.md':\n"
        "        return markdown\n"
        "    return markdown + f'\\n`timeout=<UseClientDefault object at 0x{secrets.token_hex(6)}>`\\n'\n"
    )
    assert five.config is not None
    five.config["hooks"] = ["hooks/defaults.py"]
    five.build()
    assert summary(five) == (5, 10, 1, 4, 0)
    first = five.sections("page-3.md")[-1]["body"]
    five.build()
    assert summary(five) == (5, 10, 0, 5, 0)
    assert five.sections("page-3.md")[-1]["body"] == first
    assert re.search(r"timeout=<UseClientDefault object at 0x[0-9a-f]{12}>", first), first
    five.write("page-3.md", PAGES["page-3.md"].replace("More 3.", "Changed 3."))
    five.build()  # anything else of the page still counts
    assert summary(five) == (5, 10, 1, 4, 0)


def test_a_new_modification_time_alone_indexes_the_page_again(five):
    target = five.docs / "page-1.md"
    os.utime(target, ns=(1_700_000_000_123_456_000, 1_700_000_000_123_456_000))
    five.build()
    assert summary(five) == (5, 10, 1, 4, 0)
    assert five.documents()["page-1.md"]["modified"] == 1_700_000_000_123_456


def test_a_new_nav_title_indexes_the_page_again(five):
    five.build(nav=[{"Renamed in the nav": "page-3.md"}])
    assert summary(five) == (5, 10, 1, 4, 0)
    assert five.documents()["page-3.md"]["title"] == "Renamed in the nav"


@EACH_WAY
def test_a_deleted_page_disappears_with_its_sections_and_values(five):
    (five.docs / "page-4.md").unlink()
    five.build()
    assert summary(five) == (4, 8, 0, 4, 1)
    assert "page-4.md" not in five.documents()
    with five.db() as conn:
        for table in ("sections", "field_values"):
            orphans = conn.execute(f"SELECT count(*) FROM {table} WHERE document_id NOT IN (SELECT id FROM documents)")
            assert orphans.fetchone() == (0,), table
        assert conn.execute("SELECT count(*) FROM sections_fts WHERE sections_fts MATCH 'body:more'").fetchone() == (4,)
        assert conn.execute("SELECT count(*) FROM field_values WHERE value = 't4'").fetchone() == (0,)


def test_a_page_that_becomes_excluded_is_removed(five):
    five.write("page-0.md", "---\nsearch:\n  exclude: true\n---\n# Page 0\n")
    five.build()
    assert summary(five) == (4, 8, 0, 4, 1)
    assert "page-0.md" not in five.documents()


@pytest.mark.parametrize(
    "option",
    [
        {"exclude": ["page-0.md"]},
        {"indexed_fields": ["tags"]},
        {"modified": "mtime"},
        {"modified_meta": "updated"},
        {"respect_search_exclude": False},
        {"include_generated": True},
    ],
)
def test_a_changed_indexing_option_indexes_everything_again(five, option):
    five.config = {"plugins": [{"vault-mcp": option}]}
    five.build()
    pages, _, changed, unchanged, removed = summary(five)
    assert (changed, unchanged, removed) == (pages, 0, 0)


def test_an_option_that_does_not_touch_the_index_keeps_it(five):
    five.config = {"plugins": [{"vault-mcp": {"tag_fields": ["tags"], "stats_page": "numbers/"}}]}
    five.build()
    assert summary(five) == (5, 10, 0, 5, 0)


def test_a_new_index_format_version_indexes_everything_again(five, monkeypatch):
    before = row_ids(five)
    monkeypatch.setattr(writer, "FORMAT_VERSION", schema.FORMAT_VERSION + "-next")
    five.build()
    assert summary(five) == (5, 10, 5, 0, 0)
    assert set(row_ids(five)) == set(before)
    with five.db() as conn:
        options = conn.execute("SELECT value FROM info WHERE key = 'options'").fetchone()[0]
    assert options.startswith(writer.FORMAT_VERSION + ":")


def test_the_section_count_that_search_weighs_words_by_stays_exact_as_pages_change_and_go(five):
    """search leaves out of its relaxed form the words in over 40% of sections: of the sections there are, not of
    every section id ever given out, which grows with each rewrite during a long `mkdocs serve`."""
    for text in ("# Page 1\n\n## A\n\nOne.\n\n## B\n\nTwo.\n", "# Page 1\n\nShorter.\n"):
        five.write("page-1.md", text)
        five.build()
    (five.docs / "page-2.md").unlink()
    five.build()
    with five.db() as conn:
        counted = conn.execute("SELECT count(*) FROM sections").fetchone()[0]
        assert counted == 7 < conn.execute("SELECT max(rowid) FROM sections").fetchone()[0]
        assert section_count(conn) == counted


# --- The copy in site_dir --------------------------------------------------------------------------------


def test_the_published_index_is_a_whole_self_contained_database(five):
    assert index_files(five) == ["index.sqlite"]  # no -wal, -shm or -journal beside it
    with sqlite3.connect(f"{five.index_path.as_uri()}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    # as readable as any other file of the site (not the 0600 of a temporary file)
    page_mode = stat.S_IMODE((five.site_dir / "page-0" / "index.html").stat().st_mode)
    assert stat.S_IMODE(five.index_path.stat().st_mode) == page_mode


def test_a_rebuild_replaces_the_published_file_instead_of_writing_into_it(five):
    before = five.index_path.stat()
    reader = sqlite3.connect(f"{five.index_path.as_uri()}?mode=ro", uri=True)
    try:
        assert reader.execute("SELECT count(*) FROM documents").fetchone() == (5,)
        five.write("page-5.md", "# Page 5\n")
        five.build()
        # a reader that had the old file open still reads the old, complete index
        assert reader.execute("SELECT count(*) FROM documents").fetchone() == (5,)
        assert reader.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        reader.close()
    assert five.index_path.stat().st_ino != before.st_ino
    assert index_files(five) == ["index.sqlite"]  # no temporary file left beside it
    assert len(five.documents()) == 6


def test_publish_that_fails_leaves_the_destination_and_no_temporary_file(tmp_path):
    destination = tmp_path / "site" / "vault-mcp" / "index.sqlite"
    destination.parent.mkdir(parents=True)
    destination.write_bytes(b"previous copy")
    not_a_database = tmp_path / "working.sqlite"
    not_a_database.write_bytes(b"this is not a database" * 100)
    with pytest.raises(sqlite3.DatabaseError):
        publish.publish(not_a_database, destination)
    assert destination.read_bytes() == b"previous copy"
    assert [p.name for p in destination.parent.iterdir()] == ["index.sqlite"]


def test_publish_index_false_writes_no_index_into_the_site(five):
    five.config = {"plugins": [{"vault-mcp": {"publish_index": False}}]}
    five.build()
    assert not five.index_path.exists()
    assert working_index(five).is_file()


# --- Failed builds and a damaged working index ----------------------------------------------------------


HOOK = """
from pathlib import Path
from typing import Any

def on_page_markdown(markdown, page, **kwargs):
    if Path(__file__).with_name("FAIL").exists() and page.file.src_uri == "page-3.md":
        raise RuntimeError("the build breaks down half way")
    return markdown
"""


def test_an_interrupted_build_leaves_the_previous_index_and_the_next_build_is_right(tmp_path):
    site = Site(tmp_path, {"plugins": ["vault-mcp"], "hooks": ["hook.py"]})
    (tmp_path / "hook.py").write_text(HOOK, encoding="utf-8")
    site.write_pages(PAGES)
    site.build()
    first = row_ids(site)

    site.write("page-1.md", "# Page 1\n\nChanged before the failure.\n")  # rendered (and queued) before page-3
    (tmp_path / "FAIL").touch()
    with pytest.raises(RuntimeError, match="half way"):
        site.build()
    with sqlite3.connect(f"{working_index(site).as_uri()}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        bodies = dict(conn.execute("SELECT path, body FROM sections WHERE position = 0"))
    assert bodies["page-1.md"] == "Original text 1."  # the failed build's writes were rolled back
    assert len(bodies) == 5

    (tmp_path / "FAIL").unlink()
    site.build()
    assert summary(site) == (5, 9, 1, 4, 0)
    assert site.sections("page-1.md")[0]["body"] == "Changed before the failure."
    assert {p: ids for p, ids in row_ids(site).items() if p != "page-1.md"} == {
        p: ids for p, ids in first.items() if p != "page-1.md"
    }


@EACH_WAY
@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_working_index_that_is_not_a_database_is_replaced(five, damage):
    path = working_index(five)
    data = path.read_bytes()
    path.write_bytes(b"not a database " * 300 if damage == "garbage" else data[: len(data) // 3])
    five.build()
    assert summary(five) == (5, 10, 5, 0, 0)
    assert five.messages(logging.WARNING) == []
    assert [m for m in five.messages(logging.INFO, "vault-mcp: The working index") if "starting a new one" in m]
    assert len(five.documents()) == 5 and five.values("page-0.md") == {"tags": ["shared", "t0"]}


@EACH_WAY
def test_damage_found_only_while_writing_is_repaired_from_the_pages_at_hand(five):
    """Damage in the sections table is not seen when the index is opened, only when a changed page is written."""
    path = working_index(five)
    with sqlite3.connect(path) as conn:
        try:
            pages = [n for (n,) in conn.execute("SELECT pageno FROM dbstat WHERE name = 'sections'")]
        except sqlite3.OperationalError:
            pytest.skip("SQLite built without the dbstat table")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    with open(path, "r+b") as out:
        for number in pages:
            out.seek((number - 1) * page_size)
            out.write(b"\xff" * page_size)
    five.write("page-2.md", "# Page 2\n\nChanged.\n")
    five.build()
    assert summary(five) == (5, 9, 5, 0, 0)
    assert [m for m in five.messages(logging.INFO, "vault-mcp: The working index") if "every page again" in m]
    assert five.sections("page-2.md")[0]["body"] == "Changed."
    with five.db() as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    five.build()  # and the repaired working index serves the next build as usual
    assert summary(five) == (5, 9, 0, 5, 0)


# --- The writer in a process of its own ----------------------------------------------------------------


def test_an_interrupted_build_in_a_writer_process_leaves_the_previous_index(tmp_path, monkeypatch):
    writes_in(monkeypatch, "process")
    site = Site(tmp_path, {"plugins": ["vault-mcp"], "hooks": ["hook.py"]})
    (tmp_path / "hook.py").write_text(HOOK, encoding="utf-8")
    site.write_pages(PAGES)
    site.build()
    site.write("page-1.md", "# Page 1\n\nChanged before the failure.\n")
    (tmp_path / "FAIL").touch()
    with pytest.raises(RuntimeError, match="half way"):
        site.build()
    with sqlite3.connect(f"{working_index(site).as_uri()}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert dict(conn.execute("SELECT path, body FROM sections WHERE position = 0"))["page-1.md"] == (
            "Original text 1."
        )


NEW_YEAR = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def small_page(number: int) -> RenderedPage:
    """A small page for IndexWriter.put."""
    return RenderedPage(
        path=f"p{number}.md",
        url=f"/p{number}/",
        title=f"P{number}",
        meta={},
        markdown="",
        html=f"<h1 id='p'>P{number}</h1><p>Text {number}</p>",
        modified=NEW_YEAR,
        modified_source="mtime",
        fingerprint=f"f{number}",
        language="en",
    )


def test_a_write_that_fails_in_the_writer_process_is_raised_by_the_next_call_with_its_type(tmp_path):
    index = writer.IndexWriter(tmp_path / "w.sqlite", "{}", in_process=True)
    try:
        index.put(small_page(1), "auto")
        not_an_instant: Any = "not an instant"  # which build_document cannot encode
        index.put(replace(small_page(2), modified=not_an_instant), "auto")
        index.put(small_page(3), "auto")
        with pytest.raises(TypeError):
            index.commit(LEAST)
    finally:
        index.close()


def test_a_writer_process_that_dies_is_one_clear_error_and_the_working_index_stays_whole(tmp_path):
    path = tmp_path / "w.sqlite"
    index = writer.IndexWriter(path, "{}", in_process=True)
    index.put(small_page(1), "auto")
    index.commit(LEAST)
    index.close()

    index = writer.IndexWriter(path, "{}", in_process=True)
    try:
        assert index.fingerprints == {"p1.md": "f1"}
        index.put(small_page(2), "auto")
        assert index._writes.runs_beside
        os.kill(index._writes.worker_pid(), signal.SIGKILL)  # what the kernel does to a process out of memory
        with pytest.raises(writes.WriterStopped, match=r"the index writer process ended before the build did"):
            index.commit(LEAST)
    finally:
        index.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("SELECT path FROM documents").fetchall() == [("p1.md",)]


def test_pages_wait_for_a_busy_writer_process_in_its_queue_not_in_the_build(tmp_path):
    index = writer.IndexWriter(tmp_path / "w.sqlite", "{}", in_process=True)
    try:
        assert index.fingerprints == {}  # the writer has opened the index
        assert index._writes.runs_beside
        pid = index._writes.worker_pid()
        page = replace(small_page(0), html="<p>" + "word " * 20_000 + "</p>")  # 100 KB of HTML

        def hand_over_eight_pages() -> None:  # 800 KB, more than a pipe holds
            for number in range(8):
                index.put(replace(page, path=f"p{number}.md"), "auto")

        os.kill(pid, signal.SIGSTOP)  # a writer busy with a long page
        try:
            handing_over = threading.Thread(target=hand_over_eight_pages, daemon=True)
            handing_over.start()
            handing_over.join(10)
            assert not handing_over.is_alive()
        finally:
            os.kill(pid, signal.SIGCONT)
        index.commit(LEAST)
    finally:
        index.close()
    with sqlite3.connect(tmp_path / "w.sqlite") as conn:
        assert conn.execute("SELECT count(*) FROM documents").fetchone() == (8,)


def test_a_writer_process_still_opening_the_index_says_it_is_not_open_and_pages_can_wait_for_it(tmp_path):
    """The plugin keeps a first build's pages back while the writer's process starts and opens the index
    (on_page_content), rather than MkDocs waiting for it at its first page: `is_open` must not wait, and must turn
    true. Another process's write lock holds the open back, for as long as the test wants."""
    path = tmp_path / "w.sqlite"
    writer.IndexWriter(path, "{}").close()  # the file, with its tables
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "c.execute('BEGIN EXCLUSIVE'); print('held', flush=True); sys.stdin.read()",
            str(path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline() == "held\n"
        index = writer.IndexWriter(path, "{}", in_process=True)
        try:
            assert index._writes.runs_beside
            time.sleep(0.2)
            assert not index.is_open()
            holder.stdin.close()  # the lock goes with the process
            holder.wait()
            deadline = time.monotonic() + 30
            while not index.is_open() and time.monotonic() < deadline:
                time.sleep(0.01)
            assert index.is_open()
            index.put(small_page(0), "auto")
            index.commit(LEAST)
        finally:
            index.close()
    finally:
        holder.kill()
        holder.wait()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM documents").fetchone() == (1,)


def test_example_site_indexed_by_a_writer_process_holds_the_rows_a_thread_writes(tmp_path, monkeypatch):
    def rows(root: Path) -> dict[str, list]:
        with sqlite3.connect(root / "site" / "vault-mcp" / "index.sqlite") as conn:
            return {
                table: conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
                for table in ("documents", "sources", "sections", "field_values", "links", "pages", "site_files")
            } | {
                "info": conn.execute(
                    "SELECT * FROM info WHERE key NOT IN ('built_at', 'options') ORDER BY 1"
                ).fetchall()
            }

    built = {}
    for way in ("thread", "process"):
        root = tmp_path / way
        shutil.copytree(ROOT / "example-site", root, ignore=shutil.ignore_patterns(".cache", "site"))
        writes_in(monkeypatch, way)
        site = Site(root, None)
        site.build_in_root()
        assert site.messages(logging.DEBUG, IN_PROCESS) == ([IN_PROCESS] if way == "process" else [])
        built[way] = rows(root)
    assert built["process"]["documents"] and built["process"]["links"]
    assert built["process"] == built["thread"]


def test_a_writer_process_is_started_for_the_pages_a_build_will_write_not_for_those_it_finds_indexed(site, monkeypatch):
    monkeypatch.setattr(writer, "PAGES_FOR_A_PROCESS", 5)
    monkeypatch.setattr(writer, "spare_cpu", lambda: True)
    site.write_pages(PAGES)

    def writes_in_a_process() -> bool:
        site.build()
        return any(m == IN_PROCESS for m in site.messages(logging.DEBUG))

    assert writes_in_a_process()  # five pages to write
    assert not writes_in_a_process()  # five pages, all indexed
    site.write("page-5.md", "# Page 5\n")
    assert not writes_in_a_process()  # one page to write
    (working_index(site)).unlink()
    assert writes_in_a_process()  # the working index gone: six pages to write


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is Linux's")
def test_a_first_build_of_ten_pages_writes_in_a_process_unless_the_build_has_one_cpu(site):
    site.write_pages({f"page-{n}.md": f"# Page {n}\n\nText {n}.\n" for n in range(writer.PAGES_FOR_A_PROCESS)})

    def first_build_writes_in_a_process() -> bool:
        working_index(site).unlink(missing_ok=True)
        site.build()
        return any(m == IN_PROCESS for m in site.messages(logging.DEBUG))

    cpus = os.sched_getaffinity(0)
    if len(cpus) > 1:
        assert first_build_writes_in_a_process()
    os.sched_setaffinity(0, {min(cpus)})
    try:
        assert not first_build_writes_in_a_process()
    finally:
        os.sched_setaffinity(0, cpus)
    assert summary(site)[0] == writer.PAGES_FOR_A_PROCESS


AUTOREFS_LIKE_HOOK = """
def on_page_content(html, page, **kwargs):
    return html.replace("[[guide]]", '<autoref identifier="guide">the guide</autoref>')


def on_env(env, config, files, **kwargs):
    for file in files.documentation_pages():
        if file.page is not None and file.page.content:
            file.page.content = file.page.content.replace(
                '<autoref identifier="guide">the guide</autoref>', '<a href="../guide/">the guide</a>')
    return env
"""


def test_a_page_with_autorefs_is_written_once_with_its_links_resolved(tmp_path):
    """mkdocs-autorefs leaves <autoref> elements in a page's HTML and turns them into links at on_env (a hook does
    the same here): the page is written once, at the commit, with the links a reader sees."""
    site = Site(tmp_path, {"plugins": ["vault-mcp"], "hooks": ["hooks.py"]})
    (tmp_path / "hooks.py").write_text(AUTOREFS_LIKE_HOOK, encoding="utf-8")
    site.write_pages(
        {"a.md": "# A\n", "refs.md": "# Refs\n\nSee [[guide]].\n", "guide.md": "# Guide\n", "z.md": "# Z\n"}
    )
    site.build()
    with site.db() as conn:
        ids = dict(conn.execute("SELECT path, id FROM documents"))
        content = conn.execute("SELECT content FROM sources WHERE document_id = ?", [ids["refs.md"]]).fetchone()[0]
        links = conn.execute(
            "SELECT url, target_path, broken FROM links WHERE document_id = ?", [ids["refs.md"]]
        ).fetchall()
    assert "<autoref" not in content and '<a href="../guide/">the guide</a>' in content
    assert links == [("/guide/", "guide.md", None)]
    # one insert a page: a page written twice would have left its first id unused
    assert sorted(ids.values()) == list(range(1, 5))
    assert site.sections("refs.md")[0]["body"] == "See the guide."
    site.build()
    assert any("0 changed, 4 unchanged" in message for message in site.messages())
    with site.db() as conn:
        assert dict(conn.execute("SELECT path, id FROM documents")) == ids


STOP_THE_WRITER_HOOK = """
import os
import signal
import threading
from pathlib import Path
from typing import Any

NOTES = Path(__file__).with_name("notes.txt")
stopped = []


def on_env(env, config, files, **kwargs):  # before vault-mcp's on_env, which asks for the commit
    writer = config.plugins["vault-mcp"].indexing.writer
    writer.fingerprints  # waits for the index to open: on so small a site the pages wait for it (on_page_content)
    pid = writer._writes.worker_pid()
    os.kill(pid, signal.SIGSTOP)
    going_on = threading.Timer(20, os.kill, (pid, signal.SIGCONT))  # a build that waited would go on after this
    going_on.start()
    stopped.append((pid, going_on))
    return env


def on_post_page(output, page, config, **kwargs):
    if stopped:
        pid, going_on = stopped.pop()
        going_on.cancel()
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rpartition(")")[2].split()[0]
        NOTES.write_text(f"{page.file.src_uri} written with the writer in state {state}")
        os.kill(pid, signal.SIGCONT)
    return output
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="a process's state is read from Linux's /proc")
def test_a_writer_process_commits_while_mkdocs_writes_the_pages(tmp_path, monkeypatch):
    """The commit's last pages (mkdocstrings' API pages, written at the commit) are made into documents while
    MkDocs renders the templates: with the writer stopped when the commit is asked for, the build writes its
    first page, and the stats page (rendered last) waits for the commit."""
    writes_in(monkeypatch, "process")
    site = Site(tmp_path, {"plugins": ["vault-mcp"], "hooks": ["hooks.py"]})
    (tmp_path / "hooks.py").write_text(STOP_THE_WRITER_HOOK, encoding="utf-8")
    site.write_pages(PAGES)
    site.build()
    assert (tmp_path / "notes.txt").read_text() == "page-0.md written with the writer in state T"
    assert summary(site) == (5, 10, 5, 0, 0)
    stats = (site.site_dir / "stats" / "index.html").read_text(encoding="utf-8")
    assert '<div class="vm-stats">' in stats and ">5<" in stats


def test_with_no_process_to_be_had_the_index_is_written_on_a_thread(tmp_path, monkeypatch, caplog):
    class NoProcesses(ProcessPoolExecutor):
        def submit(self, *args, **kwargs):
            raise BlockingIOError(11, "Resource temporarily unavailable")  # fork()'s error at the limit on processes

    # writes.py imports it when it starts a writer process
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", NoProcesses)
    caplog.set_level(logging.DEBUG, "mkdocs.plugins.vault-mcp")
    index = writer.IndexWriter(tmp_path / "w.sqlite", "{}", in_process=True)
    try:
        assert not index._writes.runs_beside
        index.commit(LEAST)
    finally:
        index.close()
    assert any("indexing on a thread; no process for it" in m for m in caplog.messages)
    with sqlite3.connect(tmp_path / "w.sqlite") as conn:
        assert conn.execute("SELECT value FROM info WHERE key = 'site_name'").fetchone() == ("s",)


def test_a_site_with_a_huge_page_is_indexed_on_a_thread_not_through_a_process(tmp_path):
    """Handed to a process, a huge page would be copied through the pipe into both processes."""

    def writes_beside(largest: int) -> bool:
        indexing = incremental.IncrementalBuild(
            tmp_path / "w.sqlite",
            "{}",
            lambda page: small_page(0),
            indexed_fields="auto",
            pages=writer.PAGES_FOR_A_PROCESS,
            live_readers=False,
            largest_page=lambda: largest,
        )
        try:
            return indexing.writer._writes.runs_beside
        finally:
            indexing.close()

    assert not writes_beside(incremental.HUGE_PAGE_BYTES + 1)
    assert writes_beside(incremental.HUGE_PAGE_BYTES) == writer.worth_a_process(writer.PAGES_FOR_A_PROCESS)
