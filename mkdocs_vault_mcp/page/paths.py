"""Paths and addresses as the index keys them: a URL's server path, a page's address, the `exclude` globs.

The build's thread asks these of every file and page, so the module holds no HTML parsing (page/links.py).
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import os
import posixpath
from urllib.parse import unquote, urlsplit


# Cached: every build resolves every file of the site, and a rebuild under serve the same ones again.
@functools.lru_cache(maxsize=1 << 16)
def server_path(path: str) -> str:
    """A URL path as links and pages are matched by: `.` and `..` worked out, decoded, with a trailing
    `index.html` dropped (`/guide/./index.html` is `/guide/`)."""
    normalized = "/" + posixpath.normpath(path).lstrip("/")
    if path.endswith(("/", "/.")) and not normalized.endswith("/"):
        normalized += "/"
    path = unquote(normalized)
    if path.endswith("/index.html") or path == "index.html":
        path = path[: -len("index.html")]
    return path


@functools.lru_cache(maxsize=8)  # asked for every rendered page, of the one site_url a build has
def site_base_path(site_url: str | None) -> str:
    """The path a site is served under (`/docs/` for site_url https://example.org/docs/), else `/`."""
    path = urlsplit(site_url).path if site_url else "/"
    return path if path.endswith("/") else path + "/"


def join_url(site_url: str | None, page_url: str) -> str:
    """A page's address: `site_url` joined with the site-relative URL when set, else relative to the site root."""
    if site_url:
        return site_url.rstrip("/") + "/" + page_url
    return "/" + page_url


def excluded_by(path: str, patterns: list[str]) -> bool:
    """Whether one of the plugin option `exclude`'s globs (`*` crosses `/`, case-sensitive) matches the path."""
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in patterns)


def file_path_of_url(url_path: str) -> str | None:
    """The file path, relative to the site folder, that a site-relative URL path names (percent-decoded once, as
    a web server does), or None when it names no file inside the folder: a `..` segment in any encoding (`%2e%2e`,
    `..%2f`), a path that starts at the root (`//etc/passwd`), a NUL or a backslash (a separator on Windows)."""
    path = unquote(url_path)
    if path.startswith("/") or "\x00" in path or "\\" in path or ".." in path.split("/"):
        return None
    return path


def relative_location(path: str | os.PathLike[str], start: str | os.PathLike[str]) -> str:
    """`path` relative to `start`, with `/` separators: how the index keeps a folder (the options it was built with),
    since it is published and must not hold the build machine's absolute paths. A digest of the absolute path where
    there is no relative one (another drive, on Windows)."""
    try:
        return os.path.relpath(os.path.abspath(path), os.path.abspath(start)).replace(os.sep, "/")
    except ValueError:
        return "sha256:" + hashlib.sha256(os.fsencode(os.path.abspath(path))).hexdigest()
