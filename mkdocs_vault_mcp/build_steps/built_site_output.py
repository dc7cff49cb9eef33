"""What `mkdocs-vault-mcp index SITE_DIR` writes into the site: the committed index as
`vault-mcp/index.sqlite`, `vault-mcp/snapshot.json`, and the stats page as a plain HTML page with the plugin's
stylesheet (no theme renders it here). A write that would leave the site folder through a symbolic link is
refused."""

from __future__ import annotations

import html
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..index.publish import publish
from ..index.write.build_summary import BuildSummary
from . import stats_page
from .site_folder import PAGE_BYTES, SiteError, Unreadable, leads_outside, read_site_file
from .snapshot import write_snapshot

log = logging.getLogger("mkdocs.plugins.vault-mcp")

# Marks the stats page this command wrote, so that a later run neither indexes it nor refuses to replace it.
GENERATOR = '<meta name="generator" content="mkdocs-vault-mcp index">'


@dataclass
class Published:
    index: Path  # the index inside the site
    stats: dict[str, Any]  # the stats tool's answer on it
    stats_page: Path | None  # the stats page written, if any


def publish_into_site(
    working_index: Path, site_dir: Path, summary: BuildSummary, stats_option: str | bool, site_name: str
) -> Published:
    """Publish the committed working index, its snapshot and the stats page (`summary`: the commit's reading of
    the index) into `site_dir/vault-mcp/`."""
    stats, snapshot = summary["stats"], summary["site_snapshot"]
    assert snapshot is not None  # the whole site is indexed: one run of `index` indexes every language
    out = site_dir / "vault-mcp"
    if leads_outside(site_dir.resolve(), out):
        raise SiteError(
            f"{out} is a symbolic link that leads outside the site folder; remove it (this command "
            "writes the index there)"
        )
    # What failed is named by the file of the site it was writing (a copy's error names the working index).
    written: Path | None = out / "index.sqlite"
    try:
        publish(working_index, out / "index.sqlite")
        written = out / "snapshot.json"
        write_snapshot(snapshot, out / "snapshot.json")
        written = None  # the stats page: its error names its file
        stats_file = write_stats_page(site_dir, stats_option, summary, site_name)
    except OSError as error:
        raise SiteError(
            f"could not write {written or error.filename or site_dir} ({error.strerror or error}); "
            "SITE_DIR must be writable, on a disk with room"
        ) from None
    return Published(out / "index.sqlite", stats, stats_file)


def write_stats_page(site_dir: Path, option: str | bool, summary: BuildSummary, site_name: str) -> Path | None:
    """The stats page where the `stats_page` option puts it; never over a page the site already has (such as
    the plugin's own)."""
    if option is False:
        return None
    uri = stats_page.src_uri(str(option))
    stem = uri.removesuffix(".md")
    folder = stem.removesuffix("index").rstrip("/") if stem == "index" or stem.endswith("/index") else stem
    destination = site_dir / folder / "index.html"
    if not _may_write_stats_page(site_dir.resolve(), destination):
        return None
    page_url = f"{folder}/" if folder else ""
    snapshot = summary["site_snapshot"]
    assert snapshot is not None  # publish_into_site checked it
    body, _ = stats_page.render(snapshot, summary["stats"], summary["broken_links"], page_url)
    home = "../" * page_url.count("/") or "./"
    document = (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width,initial-scale=1">\n'
        f"{GENERATOR}\n<title>{html.escape(stats_page.TITLE)} - {html.escape(site_name)}</title>\n</head>\n"
        f'<body>\n<main class="vm-plain">\n<p><a href="{home}">{html.escape(site_name)}</a></p>\n{body}\n'
        "</main>\n</body>\n</html>\n"
    )
    destination.parent.mkdir(parents=True, exist_ok=True)
    destination.write_text(document, encoding="utf-8")
    css = site_dir / stats_page.CSS_URI
    if not os.path.lexists(css):  # never through a link (one that leads nowhere, too)
        shutil.copyfile(stats_page.CSS_SOURCE, css)
    return destination


def _may_write_stats_page(root: Path, destination: Path) -> bool:
    """Whether `destination` is no link, inside the site, and either free or the stats page an earlier run wrote."""
    if os.path.islink(destination) or leads_outside(root, destination.parent):
        log.warning(f"vault-mcp: {destination} is a symbolic link or in one; no stats page written there")
        return False
    if os.path.lexists(destination):
        try:
            ours = GENERATOR.encode() in read_site_file(root, destination, PAGE_BYTES)[0]
        except Unreadable:
            ours = False
        if not ours:
            log.info(f"vault-mcp: {destination} is already a page of the site; no stats page written there")
            return False
    return True
