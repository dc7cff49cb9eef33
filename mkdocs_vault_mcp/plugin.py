"""The MkDocs plugin: adapts MkDocs events to documents, the index, the snapshot and the live server.

Order of a build (MkDocs 1.6):
  on_startup         once per `mkdocs build` / `mkdocs serve` run (its presence keeps this instance alive)
  on_config          every build: per-build state, open the working index (one write transaction)
  on_files           add the stats page (a generated file)
  on_nav             note the pages the nav lists (orphan pages); the stats page into the nav when asked
  on_page_markdown   every page (priority 49): which front matter keys the author wrote
  on_page_content    every rendered page: a document, unless unchanged since the last build
  on_env             all pages are rendered: drop vanished pages, resolve links against the site's files, commit
  on_page_context    the stats page gets its content, drawn from the committed index
  on_post_build      publish index.sqlite and snapshot.json; under serve, start the MCP server once
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import sqlite3
import sys
import time
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlsplit

from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority, get_plugin_logger
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page

from . import stats_page
from .config import VaultMcpConfig
from .documents import build_document, fingerprint, json_ready
from .freshness import Freshness
from .index import queries
from .index.queries import rfc3339
from .index.store import IndexWriter, is_corrupt, open_read_only, publish, to_micros
from .links import server_path
from .modified import GitTimes, modified_instant, read_git_times
from .snapshot import build_snapshot, write_snapshot

log = get_plugin_logger("vault-mcp")

# Run after every other plugin: material/meta (50) and material/tags (-50) change page.meta
# during on_page_markdown, and text is indexed as the reader sees it.
LAST = -100
# Right after material/meta (50) has merged `.meta.yml` into page.meta, and before plugins at the
# default priority (git-revision-date-localized, ...) add keys of their own: what page.meta holds then
# is what the author wrote.
AUTHORED = 49


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


@dataclass
class RenderedPage:
    """One candidate page as on_page_content saw it, kept until on_env checks whether its content changed since."""

    page: Page
    html: str
    digest: str
    unchanged: bool  # its document in the index is kept as it was
    fields: dict[str, Any]  # build_document's arguments other than the HTML and the fingerprint


class BuildState:
    """What one build has seen so far; made anew in every on_config."""

    def __init__(self) -> None:
        self.plugin_seconds = 0.0
        self.rendered: dict[str, RenderedPage] = {}  # path -> what on_page_content saw
        self.removed = 0
        self.git: GitTimes | None = None
        self.authored_keys: dict[str, set] = {}  # path -> the front matter keys the author wrote
        self.nav: set[str] | None = None  # the paths of the pages the nav lists (on_nav)

    @property
    def unchanged(self) -> int:
        return sum(seen.unchanged for seen in self.rendered.values())

    @property
    def changed(self) -> int:
        return len(self.rendered) - self.unchanged


class VaultMcpPlugin(BasePlugin[VaultMcpConfig]):
    def __init__(self) -> None:
        self.freshness = Freshness()
        self.live: Any = None  # the MCP server beside `mkdocs serve`, started once per serve run
        self.writer: IndexWriter | None = None
        self.state = BuildState()
        self.serving = False
        self.dirty = False
        self.stats_file: File | None = None  # set in on_files; on_nav and on_page_context look for it

    # -- run lifetime ------------------------------------------------------------------------

    def on_startup(self, *, command: str, dirty: bool) -> None:
        # Defining on_startup keeps this instance (and the live server) across serve rebuilds.
        self.dirty = dirty
        if self.config.enabled and self.config.serve_mcp and called_from_serve():
            from .live import LiveServer  # only `mkdocs serve` pays for the HTTP stack

            self.freshness = Freshness()  # this run's, whatever an earlier run in this process left

            # Take the port now, outside any build: a busy port is a warning that `--strict` does not count.
            live = LiveServer(self.config, self.freshness)
            self.live = live if live.reserve() else None

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
        cache_dir = self.cache_dir(config)
        check_cache_dir(cache_dir, config)
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
            self.writer = IndexWriter(cache_dir / name, json.dumps(options, sort_keys=True))

    def cache_dir(self, config: Any) -> Path:
        return Path(config.config_file_path or ".").parent / self.config.cache_dir

    @event_priority(LAST)
    def on_files(self, files: Files, *, config: Any) -> Files:
        self.stats_file = None
        if self.config.enabled and self.config.stats_page is not False:
            self.stats_file = stats_page.add_files(files, config, self.config.stats_page)
        return files

    @event_priority(LAST)
    def on_nav(self, nav: Any, *, config: Any, files: Files) -> Any:
        # After other plugins have shaped the nav, so the stats page stays the last entry.
        if self.stats_file is not None and self.config.stats_page_in_nav:
            stats_page.add_to_nav(nav, self.stats_file)
        self.state.nav = {page.file.src_uri for page in nav.pages}
        return nav

    def is_candidate(self, file: File) -> bool:
        """Whether a page may be a document before its front matter is known."""
        if file.generated_by is not None and not self.config.include_generated:
            return False
        return not any(fnmatch.fnmatchcase(file.src_uri, pattern) for pattern in self.config.exclude)

    @event_priority(AUTHORED)
    def on_page_markdown(self, markdown: str, *, page: Page, config: Any, files: Files) -> str:
        if self.writer is not None:
            self.state.authored_keys[page.file.src_uri] = set(page.meta)
        return markdown

    @event_priority(LAST)
    def on_page_content(self, html: str, *, page: Page, config: Any, files: Files) -> str:
        if self.writer is None or not self.is_candidate(page.file):
            return html
        with self._timed():
            self._index_page(page, html, config)
        return html

    def _index_page(self, page: Page, html: str, config: Any) -> None:
        search = page.meta.get("search")
        if self.config.respect_search_exclude and isinstance(search, dict) and search.get("exclude") is True:
            return
        if (page.markdown or "").startswith("---"):  # MkDocs removes front matter it could read
            warn_broken_front_matter(page)
        markdown = source_text(page)
        path = page.file.src_uri
        meta = authored_meta(page.meta, self.state.authored_keys.get(path))
        modified, source = modified_instant(
            path, page.file.abs_src_path, self.config.modified, self.state.git, meta, self.config.modified_meta
        )
        url = page_url(page, config)
        # MkDocs keeps a title taken from the H1 as HTML (`Tom &amp; Jerry`) and themes write every title
        # into the page as it is: a reader sees it unescaped, as the section headings are
        title = unescape(page.title or "")
        # json_ready first: YAML keys may be null, numbers or dates, which sort_keys cannot order among strings
        meta_json = json.dumps(json_ready(meta), sort_keys=True)
        history = page_history(path, self.state.git)
        digest = fingerprint(html, title, url, meta_json, to_micros(modified), source, markdown,
                             json.dumps(history))
        stored = self.writer.fingerprints.get(path, "")
        # "digest/…": a page that another plugin completed after rendering; on_env checks the rest
        unchanged = stored == digest or stored.startswith(digest + "/")
        fields = dict(path=path, url=url, title=title, meta=meta, markdown=markdown, modified=modified,
                      modified_source=source, indexed_fields=self.config.indexed_fields,
                      page_path=base_path(config) + page.url, site_url=config.site_url, history=history)
        self.state.rendered[path] = RenderedPage(page, html, digest, unchanged, fields)
        if not unchanged:
            self.writer.put(build_document(**fields, html_content=html, fingerprint=digest))

    def _index_late_content(self) -> None:
        """Index again the pages whose content a plugin changed after on_page_content.

        material/tags fills its tag listings in on_env, so what the reader sees is known only now.
        """
        for path, seen in self.state.rendered.items():
            content = seen.page.content
            if content is seen.html or not isinstance(content, str) or content == seen.html:
                continue
            digest = f"{seen.digest}/{fingerprint(content)}"
            if self.writer.fingerprints.get(path) == digest:
                continue
            seen.unchanged = False
            self.writer.put(build_document(**seen.fields, html_content=content, fingerprint=digest))

    @event_priority(LAST)
    def on_env(self, env: Any, *, config: Any, files: Files) -> Any:
        if self.writer is None:
            return env
        with self._timed():
            try:
                self._commit_index(files, config)
            except sqlite3.DatabaseError as error:
                if not is_corrupt(error):
                    raise
                # The working index is a cache and every page of this build is still at hand.
                log.info(f"The working index {self.writer.path} is damaged ({error}); indexing every page again")
                self.writer.reset()
                self._put_all_again()
                self._commit_index(files, config)
            if self.serving:
                self.freshness.index_committed()  # MCP readers see this build now, before the snapshot
            # One read of the committed index for the snapshot, the closing log line and the stats page.
            with self.read_index() as conn:
                self.stats = queries.index_stats(conn)
                self.snapshot = build_snapshot(conn, self.config.tag_fields, self.stats)
        return env

    def _commit_index(self, files: Files, config: Any) -> None:
        self._index_late_content()
        keep = set(self.state.rendered)
        if self.dirty:
            # `--dirty` renders only the changed pages; the others are still in the site.
            keep |= {
                file.src_uri
                for file in files.documentation_pages(inclusion=self._inclusion())  # drafts under serve
                if file.src_uri in self.writer.fingerprints and self.is_candidate(file)
            }
        self.state.removed = self.writer.keep_only(keep)
        base = base_path(config)
        included = InclusionLevel.is_in_serve if self.serving else InclusionLevel.is_included
        site_files = {server_path(base + file.url): file.src_uri for file in files if included(file.inclusion)}
        self.writer.commit(
            indexed_fields=self.config.indexed_fields, site_name=config.site_name, site_url=config.site_url,
            site_files=site_files, nav=self.state.nav,
        )

    def _put_all_again(self) -> None:
        """Into an empty working index, every page this build rendered, as on_page_content saw it."""
        for seen in self.state.rendered.values():
            self.writer.put(build_document(**seen.fields, html_content=seen.html, fingerprint=seen.digest))
            seen.unchanged = False

    @event_priority(50)  # before the search plugins index page.content and page.toc
    def on_page_context(self, context: dict, *, page: Page, config: Any, nav: Any) -> dict:
        if self.writer is not None and page.file is self.stats_file:
            with self._timed():
                page.content, page.toc = stats_page.render(self.snapshot, self.stats, page.url)
        return context

    @event_priority(LAST)
    def on_post_build(self, *, config: Any) -> None:
        if self.writer is None:
            return
        with self._timed():
            site = Path(config.site_dir) / "vault-mcp"
            # Under serve the live server reads the working index itself; copying it into a
            # throwaway preview folder would cost every rebuild a full copy of the file.
            if self.config.publish_index and not self.serving:
                publish(self.writer.path, site / "index.sqlite")
            write_snapshot(self.snapshot, site / "snapshot.json")
        state = self.state
        log.info(
            f"Indexed {self.snapshot['total']} pages, {self.stats['section_count']} sections: "
            f"{state.changed} changed, {state.unchanged} unchanged, "
            f"{state.removed} removed in {state.plugin_seconds:.2f} seconds"
        )
        if self.live is not None and not self.live.running and not self.live.start(self.writer.path, config):
            self.live = None  # the first build of the serve run starts it; it said why it could not
        if self.serving:
            self.freshness.build_ended()

    def on_serve(self, server: Any, *, config: Any, builder: Any) -> Any:
        # Fires only with livereload on, which is exactly when saved files cause rebuilds. MkDocs adds
        # config.watch (`-w`) after this event; theme folders (`--watch-theme`) only show in its own list.
        if self.live is not None and self.live.running:
            watched = getattr(server, "_watched_paths", {})
            self.live.watch([config.docs_dir, config.config_file_path, *config.watch, *watched])
        return server

    def on_build_error(self, *, error: Exception) -> None:
        self._close_writer()
        if self.serving:
            self.freshness.build_ended()

    # -- helpers -----------------------------------------------------------------------------

    def _inclusion(self) -> Any:
        """The pages a `--dirty` build keeps from before: drafts too under `mkdocs serve --dirty`."""
        return InclusionLevel.is_in_serve if self.serving else InclusionLevel.is_included

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


def check_cache_dir(cache_dir: Path, config: Any) -> None:
    """The working index must outlive the site (cleaned by every build) and stay out of the sources."""
    where = cache_dir.resolve()
    for option in ("docs_dir", "site_dir"):
        if where.is_relative_to(Path(config[option]).resolve()):
            raise PluginError(
                f"Plugin 'vault-mcp' option 'cache_dir': {where} is inside {option} ({config[option]}); "
                "put the working index outside docs_dir and site_dir, such as the default .cache/plugin/vault-mcp"
            )


def authored_meta(meta: dict, authored_keys: set | None) -> dict:
    """The front matter the author wrote (the file's own, and `.meta.yml` through material/meta), as other
    plugins left its values: without the keys that plugins add (git-revision-date-localized's `git_*`) and
    those they keep for themselves (material/meta's `__extends`)."""
    return {
        key: value
        for key, value in meta.items()
        if (authored_keys is None or key in authored_keys) and not (isinstance(key, str) and key.startswith("__"))
    }


def source_text(page: Page) -> str:
    """The page's file as its author wrote it, front matter included (what an agent that edits it needs)."""
    try:
        return page.file.content_string
    except (OSError, ValueError):  # gone or not UTF-8 since MkDocs read it: what MkDocs read is the best left
        return page.markdown or ""


def base_path(config: Any) -> str:
    """The path the site is served under (`/docs/` for site_url https://example.org/docs/), else `/`."""
    path = urlsplit(config.site_url).path if config.site_url else "/"
    return path if path.endswith("/") else path + "/"


def page_history(path: str, git: GitTimes | None) -> list[dict[str, Any]]:
    """The page's last commits as the index keeps them (modified.py reads them with the modification times)."""
    if git is None:
        return []
    return [{"time": rfc3339(seconds * 1_000_000), "author": author, "subject": subject}
            for seconds, author, subject in git.history.get(path, ())]


def page_url(page: Page, config: Any) -> str:
    """The page's address: absolute when site_url is set, else relative to the site root."""
    if config.site_url:
        return config.site_url.rstrip("/") + "/" + page.url
    return "/" + page.url


def warn_broken_front_matter(page: Page) -> None:
    """MkDocs drops front matter that is not valid YAML without a word (and renders it as text); say which file
    and why. MkDocs leaves such a page's Markdown as it was, so its own pattern and loader find the problem again."""
    import yaml
    from mkdocs.utils.meta import YAML_RE, SafeLoader

    match = YAML_RE.match(page.markdown or "")
    if match is None:
        return
    try:
        yaml.load(match.group(1), SafeLoader)
    except yaml.YAMLError as error:
        log.warning(
            f"Front matter of '{page.file.src_uri}' is not valid YAML ({yaml_problem(error)}); "
            "the page is indexed without it"
        )


def yaml_problem(error: Exception) -> str:
    """The YAML error with its positions counted in lines of the page's file (the front matter starts on line 2)."""
    parts = []
    for text, mark in ((getattr(error, "context", None), getattr(error, "context_mark", None)),
                       (getattr(error, "problem", None), getattr(error, "problem_mark", None))):
        if text:
            parts.append(f"{text} (line {mark.line + 2}, column {mark.column + 1})" if mark else text)
    return ", ".join(parts) or " ".join(str(error).split())
