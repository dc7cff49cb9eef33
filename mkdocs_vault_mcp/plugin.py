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

mkdocs-static-i18n builds every other language by calling MkDocs' `build()` again from its
on_post_build, so all these events run once per language within one `mkdocs build`. Each language's
build indexes that language's pages (fallback copies included) next to the others', removes only its
own vanished pages, and renders its own stats page; the last one publishes the index and the snapshot.
"""

from __future__ import annotations

import contextlib
import json
import os
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
from .documents import (build_document, excluded_by, fingerprint, join_url, page_fingerprint, search_excluded,
                        yaml_problem)
from .freshness import Freshness
from .index import queries
from .index.publish import is_corrupt, open_read_only, publish
from .index.writer import IndexWriter
from .instants import rfc3339
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
# mkdocs-static-i18n works at -100 too. Its on_files drops generated pages it does not know and its on_nav
# rebuilds the nav, so the stats page is added after it; its on_post_build builds the other languages,
# and each build publishes (or not) before that.
AFTER_I18N = -110
BEFORE_I18N_BUILDS = -90


# The module whose `serve` runs `mkdocs serve`, and ProperDocs' own (it aliases `mkdocs.*` to `properdocs.*`,
# so the function's module is named properdocs.commands.serve under `properdocs serve`).
SERVE_MODULES = frozenset({"mkdocs.commands.serve", "properdocs.commands.serve"})


def called_from_serve() -> bool:
    """Whether `mkdocs serve` (or `properdocs serve`) runs this build.

    `mkdocs serve --clean` reports command='build' to on_startup and `on_serve` does not fire without
    livereload, so the caller is the only reliable witness.
    """
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__") in SERVE_MODULES:
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


@dataclass(frozen=True)
class I18nBuild:
    """What mkdocs-static-i18n says about the build that runs now."""

    language: str  # the language this build publishes
    default: str
    languages: tuple[str, ...]  # every language it builds in one `mkdocs build`
    structure: str  # "folder" (docs/fr/page.md) or "suffix" (docs/page.fr.md)
    nested: bool  # a build it runs from its own on_post_build (not the first language's)

    @property
    def site_folder(self) -> str:
        """Where this language's pages go in the site: "" for the default language, else its code."""
        return "" if self.language == self.default else self.language


def i18n_build(config: Any) -> I18nBuild | None:
    i18n = config.plugins.get("i18n")
    if i18n is None or not hasattr(i18n, "build_languages"):
        return None
    default = i18n.default_language
    return I18nBuild(
        # None until its own on_config has run for the first time (when it is listed after this plugin)
        language=i18n.current_language or default,
        default=default,
        languages=tuple(i18n.build_languages),
        structure=i18n.config.docs_structure,
        nested=bool(i18n.building),
    )


def theme_language(config: Any) -> str:
    """A single-language site's language: Material's `theme.language`, MkDocs' `theme.locale`, else `en`."""
    language = config.theme.get("language") or config.theme.get("locale")
    return str(language) if language else "en"


def document_identity(file: File, i18n: I18nBuild | None) -> tuple[str, str | None]:
    """A page's `path`, and for a fallback copy the path of the default-language page it copies.

    A page is its file's `src_uri`. A fallback copy (mkdocs-static-i18n publishing a default-language file in
    a language that lacks it) takes the path its translation would have: `fr/guide.md` in the folder layout,
    `guide.fr.md` in the suffix layout. No file has that path (else it would not be a fallback), so paths stay
    unique, and the same in every build.
    """
    locale = getattr(file, "locale", None)
    if i18n is None or locale is None or locale == i18n.language:
        return file.src_uri, None
    plain = getattr(file, "norm_src_uri", file.src_uri)  # the src_uri without its language
    if i18n.structure == "suffix":
        stem, dot, extension = plain.rpartition(".")
        return (f"{stem}.{i18n.language}.{extension}" if dot else f"{plain}.{i18n.language}"), file.src_uri
    return f"{i18n.language}/{plain}", file.src_uri


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
        self.i18n: I18nBuild | None = None  # mkdocs-static-i18n's view of the running build
        self.language = "en"  # the language of the running build's pages
        self.languages_indexed: set[str] = set()  # the languages this `mkdocs build` has indexed so far
        self.last_language = True  # whether the running build is the last (or only) one of the run

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
        check_site_dir(config)
        self._close_writer()
        self.state = BuildState()
        self.i18n = i18n_build(config)
        self.language = self.i18n.language if self.i18n else theme_language(config)
        if self.i18n is None or not self.i18n.nested:
            self.languages_indexed = set()  # a new `mkdocs build`, or a rebuild under serve
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
            with build_fault(f"open the working index {cache_dir / name}", CACHE_HINT):
                self.writer = IndexWriter(cache_dir / name, json.dumps(options, sort_keys=True))

    def cache_dir(self, config: Any) -> Path:
        return Path(config.config_file_path or ".").parent / self.config.cache_dir

    @event_priority(AFTER_I18N)
    def on_files(self, files: Files, *, config: Any) -> Files:
        self.stats_file = None
        if self.config.enabled and self.config.stats_page is not False:
            # Each language of a multilingual site has its own stats page, under its own URL prefix.
            prefix = self.i18n.site_folder if self.i18n else ""
            self.stats_file = stats_page.add_files(files, config, self.config.stats_page, prefix)
        return files

    @event_priority(AFTER_I18N)
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
        return not excluded_by(file.src_uri, self.config.exclude)

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
        if self.config.respect_search_exclude and search_excluded(page.meta):
            return
        if (page.markdown or "").startswith("---"):  # MkDocs removes front matter it could read
            warn_broken_front_matter(page)
        markdown = source_text(page)
        meta = authored_meta(page.meta, self.state.authored_keys.get(page.file.src_uri))
        path, fallback_of = document_identity(page.file, self.i18n)
        modified, source = modified_instant(
            page.file.src_uri, page.file.abs_src_path, self.config.modified, self.state.git, meta,
            self.config.modified_meta,
        )
        url = join_url(config.site_url, page.url)
        # MkDocs keeps a title taken from the H1 as HTML (`Tom &amp; Jerry`) and themes write every title
        # into the page as it is: a reader sees it unescaped, as the section headings are
        title = unescape(page.title or "")
        history = page_history(page.file.src_uri, self.state.git)
        digest = page_fingerprint(html, title, url, meta, modified, source, markdown, self.language, fallback_of,
                                  json.dumps(history))
        stored = self.writer.fingerprints.get(path, "")
        # "digest/…": a page that another plugin completed after rendering; on_env checks the rest
        unchanged = stored == digest or stored.startswith(digest + "/")
        fields = dict(path=path, url=url, title=title, meta=meta, markdown=markdown, modified=modified,
                      modified_source=source, indexed_fields=self.config.indexed_fields, language=self.language,
                      fallback_of=fallback_of, page_path=base_path(config) + page.url, site_url=config.site_url,
                      history=history)
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
        with self._timed(), build_fault(f"write the working index {self.writer.path}", CACHE_HINT):
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
            # A multilingual site's stats page counts its own language's pages; snapshot.json, written
            # once every language is indexed, the whole site's.
            page_language = self.language if self.i18n else None
            with self.read_index() as conn:
                self.stats = queries.index_stats(conn, page_language)
                self.page_snapshot = build_snapshot(conn, self.config.tag_fields, self.stats, page_language)
                self.snapshot = None  # written by the last language's build only
                if self.last_language and page_language is None:
                    self.snapshot = self.page_snapshot
                elif self.last_language:
                    self.snapshot = build_snapshot(conn, self.config.tag_fields, queries.index_stats(conn))
        return env

    def _commit_index(self, files: Files, config: Any) -> None:
        self._index_late_content()
        keep = set(self.state.rendered)
        if self.dirty:
            # `--dirty` renders only the changed pages; the others are still in the site.
            kept_paths = (
                document_identity(file, self.i18n)[0]
                for file in files.documentation_pages(inclusion=self._inclusion())  # drafts under serve
                if self.is_candidate(file)
            )
            keep |= {path for path in kept_paths if path in self.writer.fingerprints}
        self.languages_indexed.add(self.language)
        self.last_language = self.i18n is None or self.languages_indexed >= set(self.i18n.languages)
        if self.i18n is None:
            self.state.removed = self.writer.keep_only(keep)
        else:
            # The other languages' pages were indexed by their own builds (or will be, later in this run).
            self.state.removed = self.writer.keep_only(keep, {self.language})
            if self.last_language:  # a language the site no longer builds
                self.state.removed += self.writer.keep_languages(set(self.i18n.languages))
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
                language = self.language if self.i18n else None
                page.content, page.toc = stats_page.render(self.page_snapshot, self.stats, page.url, language)
        return context

    @event_priority(BEFORE_I18N_BUILDS)
    def on_post_build(self, *, config: Any) -> None:
        if self.writer is None:
            return
        if self.last_language:
            with self._timed():
                site = Path(config.site_dir) / "vault-mcp"
                # Under serve the live server reads the working index itself; copying it into a
                # throwaway preview folder would cost every rebuild a full copy of the file.
                with build_fault(f"write {site}", SITE_HINT):
                    if self.config.publish_index and not self.serving:
                        publish(self.writer.path, site / "index.sqlite")
                    write_snapshot(self.snapshot, site / "snapshot.json")
        state = self.state
        where = f" in '{self.language}'" if self.i18n else ""
        log.info(
            f"Indexed {self.stats['document_count']} pages{where}, {self.stats['section_count']} sections: "
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
            self.live.watch([config.docs_dir, config.config_file_path, *config.watch, *watched], server)
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


CACHE_HINT = (
    "cache_dir must be a writable folder on a disk with room (the working index is a cache: deleting it is safe)"
)
SITE_HINT = "site_dir must be writable, on a disk with room; the index published before is left as it was"


@contextlib.contextmanager
def build_fault(doing: str, hint: str) -> Iterator[None]:
    """A file system or SQLite failure (a full disk, a read-only folder, a file where a folder should be) ends the
    build with one MkDocs error that says what failed and what to check, never a traceback."""
    try:
        yield
    except (OSError, sqlite3.Error) as error:
        if isinstance(error, (FileExistsError, NotADirectoryError)) and error.filename:
            reason = f"{error.filename} is a file where a folder should be"
        elif isinstance(error, OSError) and error.strerror:
            reason = error.strerror + (f": {error.filename}" if error.filename else "")
        else:
            reason = str(error)
        raise PluginError(f"vault-mcp could not {doing} ({reason}). {hint}.") from error


def check_site_dir(config: Any) -> None:
    """MkDocs cleans and writes site_dir after on_config, and a folder it cannot write ends the build in a
    traceback: say so first, in one error."""
    folder = Path(config.site_dir).resolve()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # MkDocs will create the rest
    for target in (folder, folder / "vault-mcp"):
        if target.is_dir() and not os.access(target, os.W_OK):
            read_only = bool(os.statvfs(target).f_flag & os.ST_RDONLY)
            reason = "Read-only file system" if read_only else "Permission denied"
            raise PluginError(f"vault-mcp could not write {target} ({reason}). {SITE_HINT}.")


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
