"""Modification times through the plugin (spec section 2, `modified`): a real git
repository with scripted commit dates, built with a real `mkdocs build`, compared page for page with
`git log -1 --format=%at -- FILE`. (tests/test_modified.py covers the git walk itself in depth.)"""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime

import pytest

from helpers.scripted_git import T0, git_log_time, isolate_git, record_git_runs, run_git
from helpers.site import Site

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

MICROS = 1_000_000
DIRTY_MTIME_NS = 1_650_000_000_123_456_000  # an exact instant with microseconds
UNTRACKED_MTIME_NS = 1_660_000_000_654_321_000


@pytest.fixture(autouse=True)
def isolated_git(tmp_path, monkeypatch):
    isolate_git(monkeypatch, tmp_path / "home", ceiling=tmp_path.parent)  # the repository is tmp_path


def commit(site: Site, when: int, pages: dict[str, str], author: int | None = None) -> None:
    site.write_pages(pages)
    run_git(site.root, "add", "-A", "docs")
    run_git(site.root, "commit", "-q", "-m", f"at {when}", when=when, author=author)


def page_git_time(site: Site, path: str) -> int:
    return git_log_time(site.root, f"docs/{path}")


def micros(when: datetime) -> int:
    return int(when.timestamp()) * MICROS + when.microsecond


@pytest.fixture
def repo(site) -> Site:
    """A site whose docs_dir has a history: author dates unlike commit dates, a merged branch, a page
    with uncommitted changes and a page git does not know."""
    run_git(site.root, "init", "-q", "-b", "main")
    commit(
        site,
        T0 + 100,
        {
            "index.md": "# Home\n",
            "guide.md": "# Guide\n",
            "dirty.md": "# Dirty\n",
            "Ünï côdé/page.md": "# Non-ASCII\n",
            "meta-date.md": "---\nupdated: 2021-03-04\n---\n# Dated\n",
            "meta-datetime.md": "---\nupdated: 2021-03-04T05:06:07.5+02:00\n---\n# Dated and timed\n",
            "meta-unreadable.md": "---\nupdated: soon\n---\n# Not a date\n",
        },
    )
    commit(site, T0 + 300, {"guide.md": "# Guide\n\nv2\n"}, author=T0 + 200)  # author time, not commit time
    run_git(site.root, "checkout", "-q", "-b", "side")
    commit(site, T0 + 400, {"index.md": "# Home\n\nfrom the branch\n", "side.md": "# Side\n"})
    run_git(site.root, "checkout", "-q", "main")
    commit(site, T0 + 500, {"Ünï côdé/page.md": "# Non-ASCII\n\nv2\n"})
    run_git(site.root, "merge", "-q", "--no-ff", "--no-edit", "side", when=T0 + 600)

    site.write("dirty.md", "# Dirty\n\nnot committed yet\n")
    os.utime(site.docs / "dirty.md", ns=(DIRTY_MTIME_NS, DIRTY_MTIME_NS))
    site.write("untracked.md", "# Untracked\n")
    os.utime(site.docs / "untracked.md", ns=(UNTRACKED_MTIME_NS, UNTRACKED_MTIME_NS))
    return site


TRACKED = [
    "index.md",
    "guide.md",
    "dirty.md",
    "Ünï côdé/page.md",
    "side.md",
    "meta-date.md",
    "meta-datetime.md",
    "meta-unreadable.md",
]


def times(site: Site) -> dict[str, tuple[int, str]]:
    return {path: (doc["modified"], doc["modified_source"]) for path, doc in site.documents().items()}


def build(site: Site, **options) -> dict[str, tuple[int, str]]:
    site.config = {"plugins": [{"vault-mcp": options}]}
    site.build()
    return times(site)


def test_git_mode_agrees_with_git_log_page_for_page(repo):
    found = build(repo, modified="git")
    expected_git = {
        "index.md": T0 + 400,
        "guide.md": T0 + 200,
        "dirty.md": T0 + 100,
        "Ünï côdé/page.md": T0 + 500,
        "side.md": T0 + 400,
    }
    for path in TRACKED:
        reference = page_git_time(repo, path)
        assert found[path] == (reference * MICROS, "git"), path
        assert reference == expected_git.get(path, T0 + 100), path  # the history is the one scripted above
    # git mode takes the commit time even for a page with uncommitted changes; an untracked page has none
    assert found["untracked.md"] == (UNTRACKED_MTIME_NS // 1000, "mtime")


def test_auto_mode_uses_the_mtime_of_pages_with_uncommitted_changes(repo):
    found = build(repo)  # `auto` is the default
    assert found["dirty.md"] == (DIRTY_MTIME_NS // 1000, "mtime")
    assert found["untracked.md"] == (UNTRACKED_MTIME_NS // 1000, "mtime")
    for path in set(TRACKED) - {"dirty.md"}:
        assert found[path] == (page_git_time(repo, path) * MICROS, "git"), path


def test_mtime_mode_reads_the_file_time_to_the_microsecond(repo):
    exact = 1_700_000_000_999_999_000
    os.utime(repo.docs / "guide.md", ns=(exact, exact))
    found = build(repo, modified="mtime")
    assert found["guide.md"] == (exact // 1000, "mtime")
    for path, (instant, source) in found.items():
        assert (instant, source) == ((repo.docs / path).stat().st_mtime_ns // 1000, "mtime"), path


def test_a_front_matter_date_named_by_modified_meta_wins(repo):
    found = build(repo, modified="git", modified_meta="updated")
    assert found["meta-date.md"] == (micros(datetime(2021, 3, 4, tzinfo=UTC)), "meta")
    assert found["meta-datetime.md"] == (micros(datetime(2021, 3, 4, 3, 6, 7, 500_000, tzinfo=UTC)), "meta")
    # a value that is no date leaves the page to the mode's own source
    assert found["meta-unreadable.md"] == (page_git_time(repo, "meta-unreadable.md") * MICROS, "git")
    assert found["index.md"] == (page_git_time(repo, "index.md") * MICROS, "git")


def test_git_runs_a_fixed_number_of_times_per_build_whatever_the_page_count(repo, monkeypatch):
    for n in range(20):
        repo.write(f"many/page-{n}.md", f"# Page {n}\n")
    run_git(repo.root, "add", "-A", "docs")
    run_git(repo.root, "commit", "-q", "-m", "many", when=T0 + 700)
    runs = record_git_runs(monkeypatch, repo.root.parent / "recording-git")  # a forked read's runs too
    found = build(repo, modified="git")
    calls = runs.read_text().splitlines()
    assert len(found) == 29
    # where we are, the history in one pass and the list of its commits, the uncommitted changes
    assert len(calls) == 4 and sum("log" in call.split() for call in calls) == 2, calls
    assert all(found[f"many/page-{n}.md"] == ((T0 + 700) * MICROS, "git") for n in range(20))


def test_a_site_outside_any_repository_falls_back_to_mtime(site):
    site.write("page.md", "# Page\n")
    os.utime(site.docs / "page.md", ns=(DIRTY_MTIME_NS, DIRTY_MTIME_NS))
    assert build(site, modified="git") == {"page.md": (DIRTY_MTIME_NS // 1000, "mtime")}


def test_pages_rendered_while_git_reads_the_history_get_its_dates(repo, monkeypatch):
    """git reads the history beside the build: MkDocs renders pages meanwhile, and each page still gets the
    date `git log -1 -- FILE` gives. A real git, made slow by a script before it on PATH that waits before the
    plugin's history pass (the one `git log` run with `log.diffMerges`) and notes when that pass ended."""
    real_git = shutil.which("git")
    slow = repo.root / "slow-git"
    slow.mkdir()
    log_ended = repo.root / "log-ended.txt"
    script = slow / "git"
    script.write_text(
        "#!/bin/sh\n"
        'case "$*" in *log.diffMerges=separate*) sleep 1.5; slow=1;; esac\n'
        f'"{real_git}" "$@"\n'
        "status=$?\n"
        f'[ -n "$slow" ] && date +%s.%N >> "{log_ended}"\n'
        "exit $status\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{slow}{os.pathsep}{os.environ['PATH']}")
    rendered = repo.root / "rendered.txt"
    (repo.root / "hooks.py").write_text(
        "import time\n\n\n"
        "def on_page_content(html, page, **kwargs):\n"
        f"    with open({str(rendered)!r}, 'a') as out:\n"
        "        out.write(f'{time.time()}\\n')\n"
        "    return html\n"
    )
    repo.config = {"plugins": [{"vault-mcp": {"modified": "git"}}], "hooks": ["hooks.py"]}
    repo.build()
    found = times(repo)
    # the pages were rendered before the history pass ended: the build did not wait for git at on_config
    assert min(map(float, rendered.read_text().split())) < float(log_ended.read_text())
    for path in TRACKED:
        assert found[path] == (page_git_time(repo, path) * MICROS, "git"), path
    assert found["untracked.md"] == (UNTRACKED_MTIME_NS // 1000, "mtime")
