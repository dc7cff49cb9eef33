"""The MkDocs plugin: adapts MkDocs events to documents, the index, the snapshot and the live server.

Order of a build (MkDocs 1.6):
  on_startup         once per `mkdocs build` / `mkdocs serve` run: which command runs (its presence keeps this
                     instance alive across serve rebuilds)
  on_config          every build: per-build state, git history read on a thread (pages wait for it, not MkDocs)
  on_files           open the working index (one write transaction, beside the build); add the stats page
  on_nav             note the pages the nav lists (orphan pages); the stats page into the nav when asked
  on_page_markdown   every page (priority 49): which front matter keys the author wrote
  on_page_content    every rendered page: a document, unless unchanged since the last build (build_steps/incremental.py)
  on_env             all pages are rendered: late content, drop vanished pages, resolve links, commit (a writer
                     process commits while MkDocs renders the templates)
  on_page_context    the stats page (rendered last) gets its content, drawn from the committed index
  on_post_build      publish index.sqlite and snapshot.json; under serve, start the MCP server once

mkdocs-static-i18n builds every other language by calling MkDocs' `build()` again from its
on_post_build, so all these events run once per language within one `mkdocs build`. Each language's
build indexes that language's pages (fallback copies included) next to the others', removes only its
own vanished pages, and renders its own stats page; the last one publishes the index and the snapshot.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority, get_plugin_logger
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page

from .adapters import mkdocs_serve
from .build_steps import agent_files, mkdocs_pages, stats_page
from .build_steps.faults import CACHE_HINT, SITE_HINT, build_fault, check_cache_dir, check_site_dir, fault_of
from .build_steps.i18n import I18nBuild, LanguageRun, i18n_build, theme_language
from .build_steps.incremental import IncrementalBuild
from .build_steps.mkdocs_pages import PageOptions, is_candidate, page_paths, rendered_page, site_files
from .build_steps.modified import GitTimesRead
from .build_steps.plugin_state import BuildState, IndexingPlan
from .build_steps.snapshot import write_snapshot
from .config import INDEXING_OPTIONS, VaultMcpConfig, semantic_model
from .index.freshness import Freshness
from .index.publish import publish
from .index.write.working_index import CommitSettings, SummaryRequest
from .page.front_matter import search_excluded
from .page.model import RenderedPage
from .page.paths import relative_location

if TYPE_CHECKING:
    from jinja2 import Environment
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.livereload import LiveReloadServer
    from mkdocs.structure.nav import Navigation
    from mkdocs.utils.templates import TemplateContext

    from .index.write.build_summary import BuildSummary
    from .mcp.live import LiveServer

log = get_plugin_logger("vault-mcp")

# Run after every other plugin: material/meta (50) and material/tags (-50) change page.meta
# during on_page_markdown, and text is indexed as the reader sees it.
LAST = -100
# Right after material/meta (50) has merged `.meta.yml` into page.meta, and before plugins at the
# default priority (git-revision-date-localized, ...) add keys of their own: what page.meta holds then
# is what the author wrote.
AUTHORED = 49
# mkdocs-static-i18n works at -100 too. Its on_files drops generated pages it does not know and its on_nav
# rebuilds the nav, so the stats page is added after it; its on_post_build builds the other languages,
# and each build publishes (or not) before that.
AFTER_I18N = -110
BEFORE_I18N_BUILDS = -90
# The module whose `serve` runs `mkdocs serve`, and ProperDocs' own (it aliases `mkdocs.*` to `properdocs.*`,
# so the function's module is named properdocs.commands.serve under `properdocs serve`).
SERVE_MODULES = frozenset({"mkdocs.commands.serve", "properdocs.commands.serve"})


def called_from_serve() -> bool:
    """Whether `mkdocs serve` (or `properdocs serve`) runs this code: the one witness of `mkdocs serve --clean`,
    which reports command='build' to on_startup (see VaultMcpPlugin.on_startup)."""
    here = inspect.currentframe()
    frame: FrameType | None = here.f_back if here is not None else None
    while frame is not None:
        if frame.f_globals.get("__name__") in SERVE_MODULES:
            return True
        frame = frame.f_back
    return False


# MkDocs' BasePlugin.__init_subclass__ is untyped; only `mypy --strict` says so (hence unused-ignore).
class VaultMcpPlugin(BasePlugin[VaultMcpConfig]):  # type: ignore[no-untyped-call, unused-ignore]
    def __init__(self) -> None:
        self.freshness = Freshness()
        self.live: LiveServer | None = None  # the MCP server beside `mkdocs serve`, started once per serve run
        self.indexing: IncrementalBuild | None = None  # the running build's, from on_config to on_shutdown
        self.state = BuildState()
        self.serving = False
        self.dirty = False
        self.stats_file: File | None = None  # set in on_files; on_nav and on_page_context look for it
        self.i18n: I18nBuild | None = None  # mkdocs-static-i18n's view of the running build
        self.language = "en"  # the language of the running build's pages
        self.languages = LanguageRun()

    # -- run lifetime ------------------------------------------------------------------------

    def on_startup(self, *, command: str, dirty: bool) -> None:
        # Defining on_startup keeps this instance (and the live server) across serve rebuilds.
        # `mkdocs serve --clean` reports command='build' (MkDocs 1.6 builds it as `mkdocs build` does, drafts
        # left out), yet it serves the site and wants its live MCP server: for that one case the call stack is
        # asked who runs the build.
        self.serving = command == "serve" or called_from_serve()
        self.dirty = dirty
        if self.config.enabled and self.config.serve_mcp and self.serving:
            from .mcp.live import LiveServer  # only `mkdocs serve` pays for the HTTP stack

            self.freshness = Freshness()  # this run's, whatever an earlier run in this process left
            # Take the port now, outside any build: a busy port is a warning that `--strict` does not count.
            live = LiveServer(self.config, self.freshness)
            self.live = live if live.reserve() else None

    def on_shutdown(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
        self._close_index()

    # -- one build ---------------------------------------------------------------------------

    @event_priority(LAST)
    def on_config(self, config: MkDocsConfig) -> None:
        # First: this instance may have served an earlier build in this process, with the plugin enabled.
        self._close_index()
        if self.state.git_read is not None:  # an earlier build of this serve run may not have needed its dates:
            self.state.git_read.wait()  # its read ends before this one writes the same cache files
        self.state = BuildState()
        if not self.config.enabled:
            return
        cache_dir = Path(config.config_file_path or ".").parent / self.config.cache_dir
        check_cache_dir(cache_dir, config)
        check_site_dir(config)
        self.i18n = i18n_build(config)
        self.language = self.i18n.language if self.i18n else theme_language(config)
        self.languages.build_started(self.i18n)
        self.freshness.build_started()
        with self.state.timed():
            if self.config.modified != "mtime":
                self.state.git_read = GitTimesRead(config.docs_dir, cache_dir / "git-history.json")
            # docs_dir relative to mkdocs.yml: the index is published, and holds no absolute path of this machine.
            project = os.path.dirname(config.config_file_path) if config.config_file_path else os.getcwd()
            options = {key: self.config[key] for key in INDEXING_OPTIONS} | {
                "docs_dir": relative_location(config.docs_dir, project)
            }
            semantic = None
            if self.config.semantic is not False:  # off by default; on, the writer makes the vectors
                model = semantic_model(self.config.semantic, Path(config.config_file_path or ".").parent)
                semantic = {"model": model, "cache": str(cache_dir / "embeddings.sqlite")}
            self.state.plan = IndexingPlan(
                working_index=cache_dir / ("serve.sqlite" if self.serving else "build.sqlite"),
                options_json=json.dumps(options, sort_keys=True),
                page_options=PageOptions.of(self.config),
                semantic=semantic,
            )

    @event_priority(AFTER_I18N)
    def on_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        self.stats_file = None
        if (plan := self.state.plan) is not None:
            path = plan.working_index
            with self.state.timed(), build_fault(f"open the working index {path}", CACHE_HINT):
                fields_of = functools.partial(self._fields, config.site_url, plan.page_options)
                self.indexing = IncrementalBuild(
                    path,
                    plan.options_json,
                    fields_of,
                    indexed_fields=self.config.indexed_fields,
                    pages=len(files.documentation_pages()),
                    live_readers=self.live is not None,
                    file_statuses=mkdocs_pages.page_file_statuses(files) if self.serving else None,
                    largest_page=functools.partial(mkdocs_pages.largest_page_bytes, files),
                )
        if self.config.enabled and self.config.stats_page is not False:
            # Each language of a multilingual site has its own stats page, under its own URL prefix.
            prefix = self.i18n.site_folder if self.i18n else ""
            self.stats_file = stats_page.add_files(files, config, self.config.stats_page, prefix)
        return files

    @event_priority(AFTER_I18N)
    def on_nav(self, nav: Navigation, *, config: MkDocsConfig, files: Files) -> Navigation:
        # After other plugins have shaped the nav, so the stats page stays the last entry.
        if self.stats_file is not None and self.config.stats_page_in_nav:
            stats_page.add_to_nav(nav, self.stats_file)
        self.state.nav = {page.file.src_uri for page in nav.pages}
        return nav

    @event_priority(AUTHORED)
    def on_page_markdown(self, markdown: str, *, page: Page, config: MkDocsConfig, files: Files) -> str:
        if self.indexing is not None:
            self.state.authored_keys[page.file.src_uri] = set(page.meta)
        return markdown

    @event_priority(LAST)
    def on_page_content(self, html: str, *, page: Page, config: MkDocsConfig, files: Files) -> str:
        plan = self.state.plan
        if self.indexing is None or plan is None or not is_candidate(page.file, plan.page_options):
            return html
        if plan.page_options.respect_search_exclude and search_excluded(page.meta):
            return html  # known only now: material/meta may have set it from a .meta.yml
        if self.state.fault is not None:
            return html
        git_read = self.state.git_read
        if (git_read is not None and not git_read.done()) or not self.indexing.writer.is_open():
            # A page's fingerprint holds its git dates, and is checked against those the index holds: while git
            # still reads the history or the writer (a process, on a first build) still opens the index, pages
            # wait (in rendering order) and MkDocs goes on rendering, rather than the build waiting at its first page.
            self.state.waiting.append((page, html))
        else:
            self._index_waiting_pages()
            self._index_page(page, html)
        return html

    def _index_waiting_pages(self) -> None:
        waiting, self.state.waiting = self.state.waiting, []
        for page, html in waiting:
            self._index_page(page, html)

    def _index_page(self, page: Page, html: str) -> None:
        indexing = self.indexing
        if indexing is None or self.state.fault is not None:
            return
        # Timed and guarded by hand rather than with `timed()` and build_fault: every page rendered again under
        # `mkdocs serve` comes here, and two context managers would be a large part of an unchanged page's time.
        start = time.perf_counter()
        try:
            indexing.page_rendered(page, html)
        except (OSError, sqlite3.Error) as error:
            # Raised here, MkDocs would put "Error reading page" before it, though no page is at fault.
            self.state.fault = fault_of(error, f"write the working index {indexing.writer.path}", CACHE_HINT)
            self.state.fault.__cause__ = error
        finally:
            self.state.plugin_seconds += time.perf_counter() - start

    @event_priority(LAST)
    def on_env(self, env: Environment, *, config: MkDocsConfig, files: Files) -> Environment:
        if self.indexing is None or (plan := self.state.plan) is None:
            return env
        self._index_waiting_pages()  # git, or the writer opening the index, took longer than MkDocs rendering
        if self.state.fault is not None:
            raise self.state.fault
        with self.state.timed(), build_fault(f"write the working index {self.indexing.writer.path}", CACHE_HINT):
            self.languages.indexed_language(self.language, self.i18n)
            included = InclusionLevel.is_in_serve if self.serving else InclusionLevel.is_included  # drafts
            settings = CommitSettings(
                indexed_fields=self.config.indexed_fields,
                site_name=config.site_name,
                site_url=config.site_url,
                site_files=site_files(files, included, config),
                nav=self.state.nav,
                listed=mkdocs_pages.listed_pages(files),
                **mkdocs_pages.versioning(config, self.config.site_version),
                summary=SummaryRequest(self.config.tag_fields, self.page_language, self.languages.complete),
                semantic=plan.semantic,
                markdown_copies=agent_files.wants_markdown(self.config, self.serving),
            )
            self.state.committed = self.indexing.commit(
                settings,
                # `--dirty` renders only the changed pages; the others are still in the site.
                kept_unrendered=page_paths(files, included, plan.page_options, self.i18n) if self.dirty else (),
                language=self.page_language,
                site_languages=set(self.i18n.languages) if self.i18n and self.languages.complete else None,
            )
        return env

    def _answers(self) -> BuildSummary | None:
        """What the build publishes, read from the committed index by the writer. The first call waits for the
        commit: a writer process commits and reads them while MkDocs renders the pages' templates
        (IndexWriter.commit_beside), and the stats page is rendered last (on_files adds it last). None when the
        commit or the read failed: the fault is kept for on_post_build to raise, as a page's is for on_env (raised
        while the stats page renders, MkDocs would put "Error building page 'stats/index.md'" before it, though no
        page is at fault)."""
        state, indexing = self.state, self.indexing
        assert indexing is not None and state.committed is not None  # on_env asked for the commit
        if state.answers is None and state.fault is None:
            try:
                with state.timed(), build_fault(f"write the working index {indexing.writer.path}", CACHE_HINT):
                    state.answers = state.committed()
                    self.freshness.index_committed()  # MCP readers see this build now, before the snapshot
            except PluginError as fault:
                state.fault = fault
        return state.answers

    @event_priority(50)  # before the search plugins index page.content and page.toc
    def on_page_context(
        self, context: TemplateContext, *, page: Page, config: MkDocsConfig, nav: Navigation
    ) -> TemplateContext:
        if self.indexing is not None and page.file is self.stats_file:
            answers = self._answers()
            if answers is None:  # on_post_build ends the build with the fault
                return context
            with self.state.timed():
                page.content, page.toc = stats_page.render(
                    answers["page_snapshot"], answers["stats"], answers["broken_links"], page.url, self.page_language
                )
        return context

    @event_priority(BEFORE_I18N_BUILDS)
    def on_post_build(self, *, config: MkDocsConfig) -> None:
        if self.indexing is None:
            return
        answers = self._answers()
        if answers is None:
            assert self.state.fault is not None  # what _answers kept
            raise self.state.fault
        snapshot = answers["site_snapshot"]  # once every language of the run is indexed
        if snapshot is not None:
            with self.state.timed():
                site = Path(config.site_dir) / "vault-mcp"
                # Under serve the live server reads the working index itself; copying it into a
                # throwaway preview folder would cost every rebuild a full copy of the file.
                with build_fault(f"write {site}", SITE_HINT):
                    if self.config.publish_index and not self.serving:
                        publish(self.indexing.writer.path, site / "index.sqlite")
                    write_snapshot(snapshot, site / "snapshot.json")
                    agent_files.after_build(self.indexing.writer.path, config, self.config, self.serving)
        indexing, stats, where = self.indexing, answers["stats"], f" in '{self.language}'" if self.i18n else ""
        log.info(
            f"Indexed {stats['document_count']} pages{where}, {stats['section_count']} sections: "
            f"{indexing.changed} changed, {indexing.unchanged} unchanged, "
            f"{indexing.removed} removed in {self.state.plugin_seconds:.2f} seconds"
        )
        if self.live is not None and not self.live.running and not self.live.start(indexing.writer.path, config):
            self.live = None  # the first build of the serve run starts it; it said why it could not
        self.freshness.build_ended()

    def on_serve(
        self, server: LiveReloadServer, *, config: MkDocsConfig, builder: Callable[..., Any]
    ) -> LiveReloadServer:
        # Fires only with livereload on, which is exactly when saved files cause rebuilds. MkDocs adds
        # config.watch (`-w`) after this event; theme folders (`--watch-theme`) only show in its own list.
        if self.live is not None and self.live.running:
            watched = mkdocs_serve.watched_paths(server)
            self.live.watch([config.docs_dir, config.config_file_path, *config.watch, *watched], server)
        return server

    def on_build_error(self, *, error: Exception) -> None:
        self._close_index()
        self.freshness.build_ended()

    # -- helpers -----------------------------------------------------------------------------

    def _fields(self, site_url: str | None, page_options: PageOptions, page: Page) -> RenderedPage:
        """The page's model but for its HTML, fingerprint and source. `site_url`: the config's, read once a build
        (a MkDocs config option costs an ABC check and a dict lookup, for each of a site's pages)."""
        return rendered_page(
            page,
            site_url,
            page_options,
            git=self.state.git,
            language=self.language,
            i18n=self.i18n,
            authored_keys=self.state.authored_keys.get(page.file.src_uri),
        )

    def _close_index(self) -> None:
        if self.indexing is not None:
            self.indexing.close()
            self.indexing = None

    @property
    def page_language(self) -> str | None:
        """The language whose pages the stats page counts: the build's on a multilingual site, else every one."""
        return self.language if self.i18n else None
