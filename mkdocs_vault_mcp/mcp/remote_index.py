"""A deployed site's index by its URL (`mkdocs-vault-mcp serve https://docs.example.com/`): downloaded into a cache
folder, checked before use, refreshed with conditional requests, and served from the cache when the site is down.

The download (download.py) is one GET with two conditional headers, made at start and then from a background
thread, within one deadline, of the index where the site's discovery file says it is (discovery.py), or at its usual
place `vault-mcp/index.sqlite`; the cache folder (cache_folder.py) is private and confined. No HTTP client to depend
on: the standard library's http.client does the HTTP.

A new index is downloaded to a temporary file in the cache folder, checked (size, SQLite header, the index's format
version, `PRAGMA quick_check`, the tables the tools read), then moved over the cached one with `os.replace`: the
server's reader opens the file again when it sees a new one, so every answer comes from one whole index, the old
one or the new. Anything that fails a check, or any other failure, deletes the temporary file, and the cached index
stays. Nothing is written outside the cache folder.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import logging
import os
import secrets
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from .. import __version__
from ..index.publish import OtherSchema, check_index, open_read_only, stored_versions
from ..index.schema import FORMAT_VERSION
from .cache_folder import (
    STATE_FILE,
    CacheRefused,
    State,
    confined_folder,
    fresh_state,
    header_value,
    load_state,
    save_state,
)
from .discovery import Discovered, NoIndex, catalog_url, discover, origin
from .download import DOWNLOAD_SECONDS, DownloadRefused, check_url, download, shown

__all__ = [
    "CacheRefused",
    "DownloadRefused",
    "NoIndex",
    "RemoteIndex",
    "State",
    "check_downloaded",
    "index_url",
    "is_url",
]

log = logging.getLogger(__name__)

DEFAULT_MAX_MB = 512  # room for the index of a very large site
DEFAULT_REFRESH_SECONDS = 300
# Below this, a site whose index changes at every request would be downloaded over and over; 0 (only at start)
# is allowed too.
MIN_REFRESH_SECONDS = 5
MAX_REFRESH_SECONDS = 86_400 * 30
SQLITE_HEADER = b"SQLite format 3\x00"
CACHE_ENV = "VAULT_MCP_CACHE"  # the ASGI app (asgi.py) reads the same variable
LEFTOVER_SECONDS = 3600


def is_url(target: str) -> bool:
    return target.lower().startswith(("http://", "https://"))


def index_url(target: str) -> str:
    """The URL of the published index: the URL itself when it names an `.sqlite` file, else the site's
    `vault-mcp/index.sqlite`."""
    parts = urlsplit(target)
    if parts.path.endswith(".sqlite"):
        return target
    base = target if parts.path.endswith("/") else target + "/"
    return urljoin(base, "vault-mcp/index.sqlite")


def default_cache_dir() -> Path:
    """The user's cache folder, as each platform names it (XDG on Linux and the BSDs)."""
    from_environment = os.environ.get(CACHE_ENV)
    if from_environment:
        return Path(from_environment)
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "mkdocs-vault-mcp"


def site_folder(cache_dir: Path, url: str) -> Path:
    """One folder per index URL: its host for a reader of the folder, a digest of the whole URL to tell apart."""
    netloc = urlsplit(url).netloc.rpartition("@")[2]  # never a user name or password in a folder's name
    host = "".join(c if c.isalnum() or c in ".-" else "_" for c in netloc)[:100] or "site"
    return cache_dir / "sites" / f"{host}-{hashlib.sha256(url.encode()).hexdigest()[:12]}"


def rfc3339_now(seconds: float) -> str:
    return _rfc3339(int(seconds))


@functools.lru_cache(maxsize=8)  # every answer's _meta names the same two instants until the next refresh
def _rfc3339(seconds: int) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat().replace("+00:00", "Z")


class RemoteIndex:
    """The cached copy of one site's index and the refreshing of it."""

    def __init__(
        self,
        target: str,
        cache_dir: Path | None = None,
        max_bytes: int = DEFAULT_MAX_MB << 20,
        refresh_seconds: float = DEFAULT_REFRESH_SECONDS,
        download_seconds: float = DOWNLOAD_SECONDS,
    ) -> None:
        # The usual place of the index names the cache folder, so that a restart finds it before asking the site's
        # discovery file (catalog_url) where the index is now.
        self.usual_url = index_url(target)
        self.catalog_url = catalog_url(target)
        self.cache_dir = cache_dir or default_cache_dir()
        self.folder = site_folder(self.cache_dir, self.usual_url)
        self.path = self.folder / "index.sqlite"
        self.max_bytes = max_bytes
        self.refresh_seconds = refresh_seconds
        self.download_seconds = download_seconds
        # Kept in the cache folder, so every process serving this index (worker processes, forked or not) says
        # the same of it, whichever one refreshed it; read once the folder is known to be confined.
        self._state_seen: int | None = None
        self.state = State()
        self._lock = threading.Lock()
        self._stop = threading.Event()

    # -- the cache folder ---------------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """Where the cached index came from, or is first looked for."""
        return self.state.index_url or self.usual_url

    def _load_state(self) -> State:
        state, self._state_seen = load_state(self.folder)
        if state.index_url is not None and origin(state.index_url) != origin(self.usual_url):
            return fresh_state(self.folder / STATE_FILE, f"its index_url is not on {shown(self.usual_url)}'s origin")
        return state

    def _save_state(self) -> None:
        save_state(self.folder, self.state)

    def _current_state(self) -> State:
        """The state as the cache folder holds it now (another process may have refreshed the index)."""
        try:
            changed = (self.folder / STATE_FILE).stat().st_mtime_ns != self._state_seen
        except OSError:
            changed = False
        if changed:
            self.state = self._load_state()
        return self.state

    @property
    def problem(self) -> str | None:
        return self._current_state().problem

    @property
    def has_cache(self) -> bool:
        return self.path.is_file()

    # -- fetching -----------------------------------------------------------------------------------------------

    def start(self) -> Path:
        """Fetch (or confirm) the index once, then keep refreshing it in the background; the cached index's path.

        Raises DownloadRefused when the URL or the cache folder cannot be used, or there is no cached index to fall
        back on (CacheRefused, a kind of it, for the cache folder)."""
        check_url(self.usual_url)
        confined_folder(self.cache_dir, self.folder.name)
        self.state = self._load_state()
        for leftover in self.folder.glob(".*.tmp*"):
            # A download killed halfway; a recent one may be another worker process's, still running.
            with contextlib.suppress(OSError):
                if time.time() - leftover.lstat().st_mtime > LEFTOVER_SECONDS:
                    leftover.unlink()
        if self.has_cache:
            # A cached copy that the cache folder holds but no longer passes the checks is thrown away.
            try:
                check_downloaded(self.path, self.max_bytes)
            except DownloadRefused as error:
                log.warning(
                    "mkdocs-vault-mcp: the cached index %s is not usable (%s); downloading it again", self.path, error
                )
                self.path.unlink(missing_ok=True)
                self.state = State()
        try:
            self.refresh()
        except DownloadRefused as error:
            if not self.has_cache:
                raise
            downloaded = self.state.downloaded_at
            log.warning(
                "mkdocs-vault-mcp: %s Serving the cached index, downloaded %s (%s).",
                error,
                f"at {rfc3339_now(downloaded)}" if downloaded else "at a time not recorded",
                self.path,
            )
        if self.refresh_seconds > 0:
            start_refreshing(
                self._stop, self.refresh_seconds, self.refresh, "index", f"the index from {shown(self.url)}"
            )
        return self.path

    def stop(self) -> None:
        self._stop.set()

    def refresh(self) -> bool:
        """Ask the site for its index if it changed; True when a new index replaced the cached one.

        Takes at most the download's deadline and the check of what came."""
        with self._lock:
            try:
                return self._fetch()
            except DownloadRefused as error:
                self.state.problem = str(error)
                with contextlib.suppress(OSError):
                    self._save_state()
                raise

    def _discover(self) -> Discovered:
        """Where the index is now, as the site's discovery file says; DownloadRefused when the site says it has no
        index, or one of a format this server does not read."""
        if self.catalog_url is None:
            return Discovered(self.usual_url)
        known = self.state.index_url if self.has_cache else None
        found = discover(
            self.catalog_url, self.usual_url, known, self.state.catalog_etag, self.folder, self.download_seconds
        )
        if found.schema_version is not None and found.schema_version != FORMAT_VERSION:
            raise DownloadRefused(f"The index at {shown(found.index_url)} {other_format(found.schema_version)}")
        return found

    def _fetch(self) -> bool:
        found = self._discover()
        try:
            return self._download(found)
        except DownloadRefused as error:
            if found.note is None:
                raise
            raise DownloadRefused(f"{error} {found.note}") from None

    def _download(self, found: Discovered) -> bool:
        url = found.index_url
        headers: dict[str, str] = {}
        # Conditional only for the index the cached copy came from: an ETag says nothing of another URL's file.
        if self.has_cache and url == self.url:
            # Checked again: a value that cannot be a header must not make every later request fail.
            if etag := header_value(self.state.etag):
                headers["If-None-Match"] = etag
            if last_modified := header_value(self.state.last_modified):
                headers["If-Modified-Since"] = last_modified
        temporary = self.folder / f".download-{secrets.token_hex(8)}.tmp"
        try:
            got = download(url, headers, temporary, self.max_bytes, self.download_seconds)
            if got.status == 304:
                if not headers:
                    raise DownloadRefused(f"{shown(url)} answered 304 Not Modified to a plain request.")
                self.state.confirmed_at = time.time()
                self.state.problem = None
                self.state.index_url, self.state.catalog_etag = url, header_value(found.etag)
                self._save_state()
                return False
            try:
                check_downloaded(temporary, self.max_bytes)
            except DownloadRefused as error:
                raise DownloadRefused(f"The index downloaded from {shown(url)} was refused: {error}") from None
            os.replace(temporary, self.path)
        except OSError as error:
            raise DownloadRefused(f"cannot write the index into {self.folder} ({error.strerror or error}).") from None
        finally:
            for suffix in ("", "-journal", "-wal", "-shm"):
                with contextlib.suppress(OSError):
                    temporary.with_name(temporary.name + suffix).unlink(missing_ok=True)
        now = time.time()
        self.state = State(
            header_value(got.etag), header_value(got.last_modified), now, now, None, url, header_value(found.etag)
        )
        self._save_state()
        return True

    # -- what answers say -----------------------------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """The `_meta` of every answer: where the index came from and how old it is."""
        state = self._current_state()
        now = time.time()
        meta: dict[str, Any] = {
            "index_url": self.url,
            "index_downloaded_at": rfc3339_now(state.downloaded_at) if state.downloaded_at else None,
            "index_checked_at": rfc3339_now(state.confirmed_at) if state.confirmed_at else None,
            "index_age_seconds": int(now - state.confirmed_at) if state.confirmed_at else None,
            "index_offline": state.problem is not None,
        }
        if state.problem is not None:
            meta["index_problem"] = state.problem
        return meta


def check_downloaded(path: Path, max_bytes: int) -> None:
    """Raise DownloadRefused unless `path` is a whole, readable index of a format this server reads; whatever the
    file holds, a one-line refusal and never another exception."""
    try:
        check_file(path, max_bytes)
    except (DownloadRefused, OSError):
        raise
    except sqlite3.DatabaseError as error:
        raise DownloadRefused(f"it is not a vault-mcp index SQLite can read ({one_line(error)}).") from None
    except Exception as error:  # a check that met something no rule above foresaw still refuses the file
        raise DownloadRefused(f"it could not be checked ({type(error).__name__}: {one_line(error)}).") from None


def one_line(error: BaseException) -> str:
    return " ".join(str(error).split())[:300]


def check_file(path: Path, max_bytes: int) -> None:
    size = path.stat().st_size
    if size > max_bytes:
        raise DownloadRefused(f"it is {size / (1 << 20):.1f} MB, above the limit of {max_bytes / (1 << 20):g} MB.")
    with open(path, "rb") as file:
        header = file.read(100)
    if not header.startswith(SQLITE_HEADER):
        shown_start = header[:40].decode("utf-8", "replace").strip()
        raise DownloadRefused(f"it is not an SQLite database (it begins {shown_start!r}).")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    if len(header) < 100 or (pages and size < pages * page_size):
        raise DownloadRefused(f"it is cut short: {size} bytes of the {pages * page_size} its header announces.")
    conn = open_read_only(path)
    try:
        problems = [row[0] for row in conn.execute("PRAGMA quick_check")]
        if problems != ["ok"]:
            raise DownloadRefused(f"SQLite finds it damaged ({'; '.join(map(str, problems[:3]))}).")
        version, _ = stored_versions(conn)
    finally:
        conn.close()
    if version is None:
        raise DownloadRefused("it is an SQLite database but not a vault-mcp index (it says no format version).")
    if not isinstance(version, str) or not (version.isascii() and version.isdigit()) or len(version) > 9:
        said = repr(version)[:24] + ("…" if len(repr(version)) > 24 else "")
        raise DownloadRefused(f"it says its index format is {said}, which is not a format number.")
    try:
        check_index(path)
    except OtherSchema:
        raise DownloadRefused(f"it {other_format(version)}") from None


def other_format(version: str) -> str:
    """What to say of an index of format `version` (digits, not FORMAT_VERSION), after "it"."""
    if int(version) > int(FORMAT_VERSION):
        return (
            f"is of index format {version}, newer than this mkdocs-vault-mcp {__version__} reads (format "
            f"{FORMAT_VERSION}); upgrade it (pip install -U mkdocs-vault-mcp, or uvx mkdocs-vault-mcp@latest)."
        )
    return (
        f"is of index format {version}, older than this mkdocs-vault-mcp {__version__} reads "
        f"(format {FORMAT_VERSION}); the site must be built again with a current plugin."
    )


def start_refreshing(
    stop: threading.Event, seconds: float, refresh: Callable[[], object], kept: str, what: str
) -> None:
    """Call `refresh` every `seconds` on a daemon thread until `stop` is set (`serve URL`'s one refresh loop, for the
    index and a versioned site's list of versions alike): a refusal is a warning that the cached `kept` stays, and
    any other failure is logged, for the refreshing must go on whatever one attempt met."""

    def keep_refreshing() -> None:
        while not stop.wait(seconds):
            try:
                refresh()
            except DownloadRefused as error:
                log.warning("mkdocs-vault-mcp: %s The cached %s stays.", error, kept)
            except Exception:
                log.exception("mkdocs-vault-mcp: refreshing %s failed", what)

    threading.Thread(target=keep_refreshing, name="vault-mcp-refresh", daemon=True).start()
