"""A deployed site's index by its URL (`mkdocs-vault-mcp serve https://docs.example.com/`): downloaded into a cache
folder, checked before use, refreshed with conditional requests, and served from the cache when the site is down.

The standard library's urllib does the HTTP: the download is one GET with two conditional headers, made from a
background thread, and urllib follows redirects with a limit of our choosing; no HTTP client to depend on.

A new index is downloaded to a temporary file in the cache folder, checked (size, SQLite header, the index's format
version, `PRAGMA quick_check`, the tables the tools read), then moved over the cached one with `os.replace`: the
server's reader opens the file again when it sees a new one, so every answer comes from one whole index, the old
one or the new. Anything that fails a check is deleted and the cached index stays. Nothing is written outside the
cache folder.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import json
import logging
import os
import secrets
import sqlite3
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from .. import __version__
from ..index.publish import OtherSchema, check_index, open_read_only, stored_versions
from ..index.schema import FORMAT_VERSION

log = logging.getLogger(__name__)

DEFAULT_MAX_MB = 512  # room for the index of a very large site
DEFAULT_REFRESH_SECONDS = 300
MAX_REDIRECTS = 5
TIMEOUT_SECONDS = 30
CHUNK = 1 << 20
SQLITE_HEADER = b"SQLite format 3\x00"
CACHE_ENV = "VAULT_MCP_CACHE"  # the ASGI app (asgi.py) reads the same variable
LEFTOVER_SECONDS = 3600


class DownloadRefused(Exception):
    """The site's index could not be fetched, or what came is not a usable index; the message says which and why."""


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
    host = "".join(c if c.isalnum() or c in ".-" else "_" for c in urlsplit(url).netloc) or "site"
    return cache_dir / "sites" / f"{host}-{hashlib.sha256(url.encode()).hexdigest()[:12]}"


def rfc3339_now(seconds: float) -> str:
    return _rfc3339(int(seconds))


@functools.lru_cache(maxsize=8)  # every answer's _meta names the same two instants until the next refresh
def _rfc3339(seconds: int) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat().replace("+00:00", "Z")


class LimitedRedirects(urllib.request.HTTPRedirectHandler):
    max_redirections = MAX_REDIRECTS


@dataclass
class State:
    """What the cache folder's `state.json` keeps beside the index."""

    etag: str | None = None
    last_modified: str | None = None
    downloaded_at: float | None = None  # when the cached index was downloaded (epoch seconds)
    confirmed_at: float | None = None  # when the site last said the cached index is its current one
    problem: str | None = None  # why the last attempt to refresh failed; None when it did not


class RemoteIndex:
    """The cached copy of one site's index and the refreshing of it."""

    def __init__(
        self,
        target: str,
        cache_dir: Path | None = None,
        max_bytes: int = DEFAULT_MAX_MB << 20,
        refresh_seconds: float = DEFAULT_REFRESH_SECONDS,
    ) -> None:
        self.url = index_url(target)
        self.folder = site_folder(cache_dir or default_cache_dir(), self.url)
        self.path = self.folder / "index.sqlite"
        self.max_bytes = max_bytes
        self.refresh_seconds = refresh_seconds
        # Kept in the cache folder, so every process serving this index (worker processes, forked or not) says
        # the same of it, whichever one refreshed it.
        self._state_seen: int | None = None
        self.state = self._load_state()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._opener = urllib.request.build_opener(LimitedRedirects())

    # -- the cache folder ---------------------------------------------------------------------------------------

    def _load_state(self) -> State:
        file = self.folder / "state.json"
        try:
            self._state_seen = file.stat().st_mtime_ns
            data = json.loads(file.read_text(encoding="utf-8"))
            return State(**{key: data.get(key) for key in State.__dataclass_fields__})
        except (OSError, ValueError, TypeError):
            return State()

    def _save_state(self) -> None:
        temporary = self.folder / f".state-{secrets.token_hex(8)}.tmp"
        temporary.write_text(json.dumps(self.state.__dict__), encoding="utf-8")
        os.replace(temporary, self.folder / "state.json")

    def _current_state(self) -> State:
        """The state as the cache folder holds it now (another process may have refreshed the index)."""
        try:
            changed = (self.folder / "state.json").stat().st_mtime_ns != self._state_seen
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

        Raises DownloadRefused when there is no cached index to fall back on."""
        self.folder.mkdir(parents=True, exist_ok=True)
        for leftover in self.folder.glob(".*.tmp*"):
            # A download killed halfway; a recent one may be another worker process's, still running.
            with contextlib.suppress(OSError):
                if time.time() - leftover.stat().st_mtime > LEFTOVER_SECONDS:
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
            log.warning(
                "mkdocs-vault-mcp: %s Serving the cached index from %s (%s).",
                error,
                rfc3339_now(self.state.downloaded_at or 0),
                self.path,
            )
        if self.refresh_seconds > 0:
            self._thread = threading.Thread(target=self._keep_refreshing, name="vault-mcp-refresh", daemon=True)
            self._thread.start()
        return self.path

    def stop(self) -> None:
        self._stop.set()

    def _keep_refreshing(self) -> None:
        while not self._stop.wait(self.refresh_seconds):
            try:
                self.refresh()
            except DownloadRefused as error:
                log.warning("mkdocs-vault-mcp: %s The cached index stays.", error)
            except Exception:  # the refreshing must go on whatever one attempt met
                log.exception("mkdocs-vault-mcp: refreshing the index from %s failed", self.url)

    def refresh(self) -> bool:
        """Ask the site for its index if it changed; True when a new index replaced the cached one."""
        with self._lock:
            try:
                return self._fetch()
            except DownloadRefused as error:
                self.state.problem = str(error)
                with contextlib.suppress(OSError):
                    self._save_state()
                raise

    def _fetch(self) -> bool:
        headers = {"User-Agent": f"mkdocs-vault-mcp/{__version__}", "Accept-Encoding": "identity"}
        if self.has_cache:
            if self.state.etag:
                headers["If-None-Match"] = self.state.etag
            if self.state.last_modified:
                headers["If-Modified-Since"] = self.state.last_modified
        request = urllib.request.Request(self.url, headers=headers)
        try:
            response = self._opener.open(request, timeout=TIMEOUT_SECONDS)
        except urllib.error.HTTPError as error:
            with contextlib.closing(error):
                if error.code == 304 and self.has_cache:
                    self.state.confirmed_at = time.time()
                    self.state.problem = None
                    self._save_state()
                    return False
                if error.code in (301, 302, 303, 307, 308):
                    last = error.headers.get("Location")
                    raise DownloadRefused(
                        f"{self.url} redirected more than {MAX_REDIRECTS} times (last to {last})."
                    ) from None
                hint = " (is the site built with the vault-mcp plugin, and is this its URL?)"
                hint = hint if error.code == 404 else ""
                raise DownloadRefused(f"{self.url} answered HTTP {error.code} {error.reason}{hint}.") from None
        except (urllib.error.URLError, OSError, ValueError) as error:
            reason = getattr(error, "reason", error)
            raise DownloadRefused(f"cannot reach {self.url} ({reason}).") from None
        with contextlib.closing(response):
            length = response.headers.get("Content-Length")
            if length and length.isdigit() and int(length) > self.max_bytes:
                raise DownloadRefused(self._too_big(int(length)))
            temporary = self.folder / f".download-{secrets.token_hex(8)}.tmp"
            try:
                received = 0
                with open(temporary, "wb") as out:
                    while chunk := response.read(CHUNK):
                        received += len(chunk)
                        if received > self.max_bytes:
                            raise DownloadRefused(self._too_big(received, at_least=True))
                        out.write(chunk)
                if length and length.isdigit() and received != int(length):
                    raise DownloadRefused(f"{self.url} sent {received} of the {length} bytes it announced.")
                check_downloaded(temporary, self.max_bytes)
                os.replace(temporary, self.path)
            except (DownloadRefused, OSError) as error:
                for suffix in ("", "-journal", "-wal", "-shm"):
                    temporary.with_name(temporary.name + suffix).unlink(missing_ok=True)
                if isinstance(error, DownloadRefused):
                    raise DownloadRefused(f"The index downloaded from {self.url} was refused: {error}") from None
                raise DownloadRefused(f"cannot write the index into {self.folder} ({error}).") from None
            now = time.time()
            self.state = State(
                etag=response.headers.get("ETag"),
                last_modified=response.headers.get("Last-Modified"),
                downloaded_at=now,
                confirmed_at=now,
            )
            self._save_state()
            return True

    def _too_big(self, size: int, at_least: bool = False) -> str:
        return (
            f"{self.url} is {'over ' if at_least else ''}{size / (1 << 20):.1f} MB, above the limit of "
            f"{self.max_bytes / (1 << 20):g} MB; raise it with --max-size if this is the site's index."
        )

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
    """Raise DownloadRefused unless `path` is a whole, readable index of a format this server reads."""
    size = path.stat().st_size
    if size > max_bytes:
        raise DownloadRefused(f"it is {size / (1 << 20):.1f} MB, above the limit of {max_bytes / (1 << 20):g} MB.")
    with open(path, "rb") as file:
        header = file.read(100)
    if not header.startswith(SQLITE_HEADER):
        shown = header[:40].decode("utf-8", "replace").strip()
        raise DownloadRefused(f"it is not an SQLite database (it begins {shown!r}).")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    if len(header) < 100 or (pages and size < pages * page_size):
        raise DownloadRefused(f"it is cut short: {size} bytes of the {pages * page_size} its header announces.")
    try:
        conn = open_read_only(path)
        try:
            problems = [row[0] for row in conn.execute("PRAGMA quick_check")]
            if problems != ["ok"]:
                raise DownloadRefused(f"SQLite finds it damaged ({'; '.join(problems[:3])}).")
            version, _ = stored_versions(conn)
        finally:
            conn.close()
        if version is None or not version.isdigit():
            raise DownloadRefused("it is an SQLite database but not a vault-mcp index (it says no format version).")
        try:
            check_index(path)
        except OtherSchema:
            if int(version) > int(FORMAT_VERSION):
                raise DownloadRefused(
                    f"it is of index format {version}, newer than this mkdocs-vault-mcp {__version__} reads (format "
                    f"{FORMAT_VERSION}); upgrade it (pip install -U mkdocs-vault-mcp, or uvx mkdocs-vault-mcp@latest)."
                ) from None
            raise DownloadRefused(
                f"it is of index format {version}, older than this mkdocs-vault-mcp {__version__} reads "
                f"(format {FORMAT_VERSION}); the site must be built again with a current plugin."
            ) from None
    except sqlite3.DatabaseError as error:
        raise DownloadRefused(f"it is not a vault-mcp index SQLite can read ({error}).") from None
