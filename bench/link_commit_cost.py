"""What links cost a rebuild of one saved page on a large site, in-process.

    .venv/bin/python bench/link_commit_cost.py [--pages 10000]

Writes an index of N synthetic pages (each with two headings and five links to other pages' anchors) with the
package's own `build_document` and `IndexWriter`, commits it with every file of the site and the nav (as
`on_env` does), then, as `mkdocs serve --dirty` does after one saved page, opens it again, puts that page and
commits: once resolving links and the nav (what the plugin does), once without (the baseline: the same
commit with link resolution and nav left out). Then times the snapshot's `link_summary` and the `links`
questions on that index. Median of 5 rounds each.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mkdocs_vault_mcp.index.filters import Filters
from mkdocs_vault_mcp.index.publish import open_read_only
from mkdocs_vault_mcp.index.query.link_queries import link_summary, links
from mkdocs_vault_mcp.index.write.working_index import CommitSettings
from mkdocs_vault_mcp.index.write.writer import IndexWriter
from mkdocs_vault_mcp.page.model import RenderedPage
from report import results_from_output  # bench/ is on sys.path when a script runs

NOW = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)


def page(i: int, pages: int, extra: str = "") -> RenderedPage:
    linked = "".join(f'<a href="../p{(i * 7 + k) % pages}/#h">link {k}</a> ' for k in range(5))
    html = f'<h1 id="t">Page {i}</h1><p>Text {i} {extra} {linked}</p><h2 id="h">H</h2><p>more</p>'
    return RenderedPage(
        path=f"p{i}.md",
        url=f"/p{i}/",
        title=f"Page {i}",
        meta={},
        markdown="# x",
        html=html,
        modified=NOW,
        modified_source="mtime",
        fingerprint=f"f{i}{extra}",
        page_path=f"/p{i}/",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10_000)
    pages = parser.parse_args().pages
    site_files = {f"/p{i}/": f"p{i}.md" for i in range(pages)}
    nav = set(site_files.values())
    path = Path(tempfile.mkdtemp()) / "working.sqlite"
    writer = IndexWriter(path, "bench")
    for i in range(pages):
        writer.put(page(i, pages), "auto")
    writer.keep_only(nav)
    started = time.perf_counter()
    writer.commit(
        CommitSettings(indexed_fields="auto", site_name="bench", site_url=None, site_files=site_files, nav=nav)
    )
    first = time.perf_counter() - started
    writer.close()
    times: dict[str, list[float]] = {"with links": [], "without": []}
    for round_ in range(5):
        for label, files, listed in (("with links", site_files, nav), ("without", None, None)):
            writer = IndexWriter(path, "bench")
            writer.put(page(5, pages, extra=f"{label} {round_}"), "auto")
            writer.keep_only(nav)
            started = time.perf_counter()
            writer.commit(
                CommitSettings(indexed_fields="auto", site_name="bench", site_url=None, site_files=files, nav=listed)
            )
            times[label].append(time.perf_counter() - started)
            writer.close()
    conn = open_read_only(path)
    queries: dict[str, Callable[..., Any]] = {"link_summary (snapshot)": lambda: link_summary(conn)}
    for show in ("broken", "orphans", "most_linked"):
        queries[f"links show={show}"] = lambda show=show: links(conn, show, Filters(), limit=50)
    queries["links show=backlinks"] = lambda: links(conn, "backlinks", Filters(), target="p5.md", limit=50)
    print(f"{pages:,} pages, {5 * pages:,} links; first commit (every link resolved) {first:.2f} s")
    for label, values in times.items():
        print(f"commit after one saved page, {label}: {statistics.median(values) * 1000:.1f} ms")
    for label, run in queries.items():
        values = []
        for _ in range(5):
            started = time.perf_counter()
            run()
            values.append(time.perf_counter() - started)
        print(f"{label}: {statistics.median(values) * 1000:.1f} ms")


if __name__ == "__main__":
    with results_from_output("link_commit_cost"):
        main()
