"""What MkDocs' pages and files say, as plain data: a rendered page's model (page.RenderedPage), the paths its
pages take in the index, and the site's files by the URL links point at.

The plugin hands pages and files over as MkDocs and the other plugins left them.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from html import unescape
from typing import Any, NamedTuple

from mkdocs.plugins import get_plugin_logger
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page

from ..config import VaultMcpConfig
from ..page.front_matter import yaml_problem
from ..page.model import RenderedPage
from ..page.paths import excluded_by, join_url, server_path
from ..page.paths import site_base_path as site_base_path  # built_site.py's, from here
from .file_statuses import FileStatuses
from .i18n import I18nBuild, document_identity
from .modified import GitTimes, modified_instant

log = get_plugin_logger("vault-mcp")


class PageOptions(NamedTuple):
    """The plugin options every rendered page asks for, read once a build: an option of MkDocs' plugin config is a
    descriptor over a dict, slow enough to show on a large site's rebuilds under `mkdocs serve`."""

    include_generated: bool
    exclude: list[str]
    modified: str
    modified_meta: str | None
    respect_search_exclude: bool

    @classmethod
    def of(cls, options: VaultMcpConfig) -> PageOptions:
        return cls(
            options.include_generated,
            list(options.exclude),
            options.modified,
            options.modified_meta,
            options.respect_search_exclude,
        )


def is_candidate(file: File, options: PageOptions) -> bool:
    """Whether a page may be a document before its front matter is known (plugin options `include_generated`,
    `exclude`)."""
    if file.generated_by is not None and not options.include_generated:
        return False
    return not excluded_by(file.src_uri, options.exclude)


def page_paths(
    files: Files, included: Callable[[InclusionLevel], bool], options: PageOptions, i18n: I18nBuild | None
) -> list[str]:
    """The index paths of every page of the site that may be a document, rendered by this build or not."""
    levels = included_levels(included)
    return [
        document_identity(file, i18n)[0]
        for file in files
        if file.inclusion in levels and file.is_documentation_page() and is_candidate(file, options)
    ]


def site_files(files: Files, included: Callable[[InclusionLevel], bool], config: Any) -> dict[str, str]:
    """Every file of the site (pages, generated pages, static files, the redirect pages mkdocs-redirects writes
    once the build is done) by its server path: what links resolve to."""
    base, levels = base_path(config), included_levels(included)
    found = {file_server_path(base + file.url): file.src_uri for file in files if file.inclusion in levels}
    for url, dest_path in redirect_pages(files, config):
        found.setdefault(file_server_path(base + url), dest_path)
    return found


def redirect_pages(files: Files, config: Any) -> list[tuple[str, str]]:
    """(URL, path in the site) of each page mkdocs-redirects writes (its `redirect_maps`), as it decides: a source
    whose target is a page of the site or a full address. The site's file at that path, as `index SITE_DIR` finds
    it, is the redirect page, not its target."""
    found = []
    pages = {file.src_uri for file in files.documentation_pages()}
    for plugin in config.plugins.values():
        if type(plugin).__module__.partition(".")[0] != "mkdocs_redirects":
            continue
        maps = plugin.config.get("redirect_maps") or {}
        for source, target in maps.items() if isinstance(maps, Mapping) else ():
            target = str(target)
            if target.lower().startswith(("http://", "https://")) or target.partition("#")[0] in pages:
                stub = File(str(source), "", "", config.use_directory_urls)
                found.append((stub.url, stub.dest_uri))
    return found


def listed_pages(files: Files) -> dict[str, int]:
    """How many generated listing pages link to each page, by its path: a Material blog's index, archive, category
    and author pages list its posts in their templates, where the page's content (what is indexed) does not hold
    them. The pages of one listing's pagination list the same posts, and count once."""
    listings: dict[int, list[Any]] = {}
    for file in files.documentation_pages():
        posts = getattr(file.page, "posts", None)
        if isinstance(posts, list):
            listings.setdefault(id(posts), posts)
    counts: dict[str, int] = {}
    for posts in listings.values():
        for path in {post.file.src_uri for post in posts if isinstance(getattr(post, "file", None), File)}:
            counts[path] = counts.get(path, 0) + 1
    return counts


def included_levels(included: Callable[[InclusionLevel], bool]) -> tuple[InclusionLevel, ...]:
    """The inclusion levels `included` lets in: a file's level is found among them by identity, where calling
    `included` for each of a site's files costs an enum lookup each time."""
    return tuple(level for level in InclusionLevel if included(level))


# Every build asks for the server path of every file of the site, and a rebuild under `mkdocs serve` has the same
# files as the build before: the paths are worked out once a serve run (a bound above any real site's file count)
file_server_path = functools.lru_cache(maxsize=1 << 17)(server_path)


def rendered_page(
    page: Page,
    site_url: str | None,
    options: PageOptions,
    *,
    git: GitTimes | None,
    authored_keys: set[str] | None,
    language: str,
    i18n: I18nBuild | None,
) -> RenderedPage:
    """The page model of a page MkDocs rendered, without its HTML, fingerprint and Markdown source (the build adds
    them: build_steps/incremental.py, `with_source`). `authored_keys`: the front matter keys the page had right after
    material/meta (None: all of them)."""
    if (page.markdown or "").startswith("---"):  # MkDocs removes front matter it could read
        warn_broken_front_matter(page)
    meta = authored_meta(page.meta, authored_keys)
    path, fallback_of = document_identity(page.file, i18n)
    modified, source = modified_instant(
        page.file.src_uri, page.file.abs_src_path, options.modified, git, meta, options.modified_meta
    )
    page_url = page.url
    return RenderedPage(
        path=path,
        url=join_url(site_url, page_url),
        # MkDocs keeps a title taken from the H1 as HTML (`Tom &amp; Jerry`) and themes write every title into
        # the page as it is: a reader sees it unescaped, as the section headings are
        title=unescape(page.title or ""),
        html="",
        meta=meta,
        modified=modified,
        modified_source=source,
        language=language,
        fallback_of=fallback_of,
        page_path=site_base_path(site_url) + page_url,
        site_url=site_url,
        history=git.history.get(page.file.src_uri, []) if git is not None else [],
    )


def authored_meta(meta: Mapping[Any, Any], authored_keys: set[str] | None) -> dict[Any, Any]:
    """The front matter the author wrote (the file's own, and `.meta.yml` through material/meta), as other
    plugins left its values: without the keys that plugins add (git-revision-date-localized's `git_*`) and
    those they keep for themselves (material/meta's `__extends`)."""
    return {
        key: value
        for key, value in meta.items()
        if (authored_keys is None or key in authored_keys) and not (isinstance(key, str) and key.startswith("__"))
    }


def page_file_statuses(files: Files) -> FileStatuses:
    """The sizes and modification times of the site's page files on disk, asked for beside the build."""
    return FileStatuses(
        [file.abs_src_path for file in files if file.abs_src_path is not None and file.is_documentation_page()]
    )


def largest_page_bytes(files: Files) -> int:
    """The size of the site's largest page file on disk (0 without one)."""
    largest = 0
    for file in files.documentation_pages():
        if file.abs_src_path is not None:
            with contextlib.suppress(OSError):
                largest = max(largest, os.stat(file.abs_src_path).st_size)
    return largest


def source_version(page: Page, statuses: FileStatuses | None = None) -> tuple[int, int] | str:
    """What a page's fingerprint takes of its file: the size and modification time of a file on disk (an edit
    gives it a new time, so only the pages indexed again have their file read), else the text a plugin gave it.
    `statuses`: the files' sizes and times read beside a serve build, where they have them."""
    if page.file.abs_src_path is not None:
        known = statuses.get(page.file.abs_src_path) if statuses is not None else None
        if known is not None:
            return known
        try:
            status = os.stat(page.file.abs_src_path)
            return status.st_size, status.st_mtime_ns
        except OSError:
            pass
    return source_text(page)


def with_source(page: Page, model: RenderedPage, html: str, fingerprint: str) -> RenderedPage:
    """The page model with its HTML, its fingerprint and its Markdown source, for IndexWriter.put: the file to
    read the source from, and what stands for it when the file cannot be read. The writer reads the file, off the
    build's thread, and only for a page indexed again."""
    if page.file.abs_src_path is not None:  # a file on disk (a plugin that sets a file's content clears it)
        return replace(
            model, html=html, fingerprint=fingerprint, markdown=page.markdown or "", source_file=page.file.abs_src_path
        )
    return replace(model, html=html, fingerprint=fingerprint, markdown=source_text(page))


def source_text(page: Page) -> str:
    """The page's file as its author wrote it, front matter included (what an agent that edits it needs)."""
    try:
        return page.file.content_string
    except (OSError, ValueError):  # gone or not UTF-8 since MkDocs read it: what MkDocs read is the best left
        return page.markdown or ""


# What `mike deploy` sets while it builds a version: the version's name.
MIKE_VERSION = "MIKE_DOCS_VERSION"


def uses_mike(extra: Any, plugins: Any) -> bool:
    """Whether the config says mike publishes the site's versions: Material's version selector set to mike
    (`extra.version.provider`), or mike's own plugin listed."""
    version = extra.get("version") if isinstance(extra, Mapping) else None
    if isinstance(version, Mapping) and version.get("provider") == "mike":
        return True
    if isinstance(plugins, Mapping):
        return "mike" in plugins
    return isinstance(plugins, list) and any(
        entry == "mike" or (isinstance(entry, Mapping) and "mike" in entry) for entry in plugins
    )


def version_base(config: Any) -> str | None:
    """Where mike puts the versions' folders (the site's base path), on a site it publishes; else None."""
    return base_path(config) if uses_mike(config.extra, config.plugins) else None


def base_path(config: Any) -> str:
    """The path the site is served under (`/docs/` for site_url https://example.org/docs/), else `/`."""
    return site_base_path(config.site_url)


def warn_broken_front_matter(page: Page) -> None:
    """MkDocs drops front matter that is not valid YAML without a word (and renders it as text); say which file
    and why. MkDocs leaves such a page's Markdown as it was, so its own pattern and loader find the problem again."""
    import yaml
    from mkdocs.utils.meta import YAML_RE

    match = YAML_RE.match(page.markdown or "")
    if match is None:
        return
    try:
        yaml.load(match.group(1), getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # as MkDocs loads it
    except yaml.YAMLError as error:
        log.warning(
            f"Front matter of '{page.file.src_uri}' is not valid YAML ({yaml_problem(error)}); "
            "the page is indexed without it"
        )


def versioning(config: Any, version: str | None) -> dict[str, str | None]:
    """CommitSettings' `version_base` and `site_version`: the version the build is published as is the
    `site_version` option, else the one `mike deploy` builds."""
    return {"version_base": version_base(config), "site_version": version or os.environ.get(MIKE_VERSION) or None}
