"""The MkDocs plugin: adapts MkDocs events to documents, the index, the snapshot and the live server.

Order of a build (MkDocs 1.6):
  on_startup         once per `mkdocs build` / `mkdocs serve` run (its presence keeps this instance alive)
  on_config          every build: per-build state, open the working index (one write transaction)
  on_files           add the stats page (a generated file)
  on_page_content    every rendered page: a document, unless unchanged since the last build
  on_env             all pages are rendered: drop vanished pages, commit
  on_page_context    the stats page gets its content, drawn from the committed index
  on_post_build      publish index.sqlite and snapshot.json; under serve, start the MCP server once
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any, Iterator

from mkdocs.plugins import BasePlugin, event_priority, get_plugin_logger
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from . import stats_page
from .config import VaultMcpConfig
from .documents import build_document, fingerprint
from .freshness import Freshness
from .index.store import IndexWriter, open_read_only, publish, to_micros
from .modified import GitTimes, modified_instant, read_git_times
from .snapshot import build_snapshot, write_snapshot

log = get_plugin_logger("vault-mcp")

# Run after every other plugin: material/meta (50) and material/tags (-50) change page.meta
# during on_page_markdown, and text is indexed as the reader sees it.
LAST = -100


def called_from_serve() -> bool:
    """Whether `mkdocs serve` runs this build.

    `mkdocs serve --clean` reports command='build' to on_startup and `on_serve` does not fire without
    livereload, so the caller is the only reliable witness.
    """
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__") == "mkdocs.commands.serve":
            return True
        frame = frame.f_back
    return False


class BuildState:
    """What one build has seen so far; made anew in every on_config."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.plugin_seconds = 0.0
        self.rendered: set[str] = set()
        self.changed = 0
        self.unchanged = 0
        self.removed = 0
        self.git: GitTimes | None = None


class VaultMcpPlugin(BasePlugin[VaultMcpConfig]):
    def __init__(self) -> None:
        self.freshness = Freshness()
        self.live: Any = None  # the MCP server beside `mkdocs serve`, started once per serve run
        self.writer: IndexWriter | None = None
        self.state = BuildState()
        self.serving = False

    # -- run lifetime ------------------------------------------------------------------------

    def on_startup(self, *, command: str, dirty: bool) -> None:
        # Defining on_startup keeps this instance (and the live server) across serve rebuilds.
        self.dirty = dirty

    def on_shutdown(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
        self._close_writer()

    # -- one build ---------------------------------------------------------------------------

    @event_priority(LAST)
    def on_config(self, config: Any) -> None:
        if not self.config.enabled:
            return
        self._close_writer()
        self.state = BuildState()
        self.serving = called_from_serve()
        if self.serving:
            self.freshness.build_started()
        with self._timed():
            if self.config.modified != "mtime":
                self.state.git = read_git_times(config.docs_dir)
            options = {
                key: self.config[key]
                for key in ("indexed_fields", "modified", "modified_meta", "exclude",
                            "respect_search_exclude", "include_generated")
            }
            options["docs_dir"] = config.docs_dir
            name = "serve.sqlite" if self.serving else "build.sqlite"
            self.writer = IndexWriter(self.cache_dir(config) / name, json.dumps(options, sort_keys=True))

    def cache_dir(self, config: Any) -> Path:
        return Path(config.config_file_path or ".").parent / self.config.cache_dir

    @event_priority(LAST)
    def on_files(self, files: Files, *, config: Any) -> Files:
        if self.config.enabled and self.config.stats_page is not False:
            stats_page.add_file(files, config, self.config.stats_page, self.config.stats_page_in_nav)
        return files

    def is_candidate(self, file: File) -> bool:
        """Whether a page may be a document before its front matter is known."""
        if file.generated_by is not None and not self.config.include_generated:
            return False
        return not any(fnmatch.fnmatchcase(file.src_uri, pattern) for pattern in self.config.exclude)

    @event_priority(LAST)
    def on_page_content(self, html: str, *, page: Page, config: Any, files: Files) -> str:
        if self.writer is None or not self.is_candidate(page.file):
            return html
        with self._timed():
            self._index_page(page, html, config)
        return html

    def _index_page(self, page: Page, html: str, config: Any) -> None:
        meta = page.meta
        search = meta.get("search")
        if self.config.respect_search_exclude and isinstance(search, dict) and search.get("exclude") is True:
            return
        markdown = page.markdown or ""
        if not meta and markdown.startswith("---"):
            warn_broken_front_matter(page.file)
        path = page.file.src_uri
        modified, source = modified_instant(
            path, page.file.abs_src_path, self.config.modified, self.state.git, meta, self.config.modified_meta
        )
        url = page_url(page, config)
        title = page.title or ""
        meta_json = json.dumps(meta, sort_keys=True, default=str)
        digest = fingerprint(html, title, url, meta_json, to_micros(modified), source, markdown)
        self.state.rendered.add(path)
        if self.writer.fingerprints.get(path) == digest:
            self.state.unchanged += 1
            return
        document = build_document(
            path=path,
            url=url,
            title=title,
            meta=meta,
            markdown=markdown,
            html_content=html,
            modified=modified,
            modified_source=source,
            indexed_fields=self.config.indexed_fields,
            fingerprint=digest,
        )
        self.writer.put(document)
        self.state.changed += 1

    @event_priority(LAST)
    def on_env(self, env: Any, *, config: Any, files: Files) -> Any:
        if self.writer is None:
            return env
        with self._timed():
            keep = set(self.state.rendered)
            if self.dirty:
                # `--dirty` renders only the changed pages; the others are still in the site.
                keep |= {
                    file.src_uri
                    for file in files.documentation_pages()
                    if file.src_uri in self.writer.fingerprints and self.is_candidate(file)
                }
            self.state.removed = self.writer.keep_only(keep)
            self.writer.commit(
                indexed_fields=self.config.indexed_fields, site_name=config.site_name, site_url=config.site_url
            )
            with self.read_index() as conn:
                self.snapshot = build_snapshot(conn, self.config.tag_fields)
                self.section_count = conn.execute("SELECT count(*) FROM sections").fetchone()[0]
        if self.serving:
            self.freshness.build_finished()
        return env

    def on_page_context(self, context: dict, *, page: Page, config: Any, nav: Any) -> dict:
        if self.writer is not None and stats_page.is_stats_page(page):
            with self._timed():
                page.content = stats_page.render(self.snapshot, page, config)
        return context

    @event_priority(LAST)
    def on_post_build(self, *, config: Any) -> None:
        if self.writer is None:
            return
        with self._timed():
            site = Path(config.site_dir) / "vault-mcp"
            if self.config.publish_index:
                publish(self.writer.path, site / "index.sqlite")
            write_snapshot(self.snapshot, site / "snapshot.json")
        state = self.state
        log.info(
            f"Indexed {self.snapshot['total']} pages, {self.section_count} sections: "
            f"{state.changed} changed, {state.unchanged} unchanged, "
            f"{state.removed} removed in {state.plugin_seconds:.2f} seconds"
        )
        if self.serving and self.config.serve_mcp and self.live is None:
            from .live import LiveServer  # only `mkdocs serve` pays for the HTTP stack

            self.live = LiveServer(self.writer.path, self.freshness, self.config, config)
            self.live.start()

    def on_serve(self, server: Any, *, config: Any, builder: Any) -> Any:
        # Fires only with livereload on, which is exactly when saved files cause rebuilds.
        if self.live is not None:
            self.live.watch([config.docs_dir, config.config_file_path])
        return server

    def on_build_error(self, *, error: Exception) -> None:
        self._close_writer()
        if self.serving:
            self.freshness.build_finished()

    # -- helpers -----------------------------------------------------------------------------

    def read_index(self) -> contextlib.closing:
        assert self.writer is not None
        return contextlib.closing(open_read_only(self.writer.path))

    def _close_writer(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    @contextlib.contextmanager
    def _timed(self) -> Iterator[None]:
        """Count the time spent in this plugin, for the closing log line."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.state.plugin_seconds += time.perf_counter() - start


def page_url(page: Page, config: Any) -> str:
    """The page's address: absolute when site_url is set, else relative to the site root."""
    if config.site_url:
        return config.site_url.rstrip("/") + "/" + page.url
    return "/" + page.url


def warn_broken_front_matter(file: File) -> None:
    """MkDocs drops front matter that is not valid YAML without a word; say which file and why."""
    import frontmatter
    import yaml

    try:
        frontmatter.loads(file.content_string)
    except yaml.YAMLError as error:
        problem = " ".join(str(error).split())
        log.warning(f"Front matter of '{file.src_uri}' is not valid YAML; indexed with empty meta: {problem}")
    except Exception:  # any other parse failure: MkDocs already read the page, so just index it
        logging.getLogger(__name__).debug("front matter check failed", exc_info=True)
