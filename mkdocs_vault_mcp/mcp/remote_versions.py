"""`serve URL` of a site mike publishes: its `versions.json` kept in the cache and refreshed, and one RemoteIndex
(mcp/remote_index.py) per version, started when the version is first asked for.

The copy of versions.json lives in a cache folder of its own, so mcp/versions.py reads it as it reads a checkout's.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from ..errors import InvalidArgument
from .cache_folder import confined_folder
from .download import DOWNLOAD_SECONDS, DownloadRefused, download, shown
from .remote_index import DEFAULT_REFRESH_SECONDS, RemoteIndex, default_cache_dir, site_folder, start_refreshing
from .versions import VERSIONS_FILE, Versions, listed

log = logging.getLogger(__name__)

LIST_BYTES = 1 << 20  # a versions.json of thousands of versions is far smaller


class RemoteVersions:
    """A deployed site's versions.json, downloaded now and every `refresh_seconds`, and its versions' indexes."""

    def __init__(
        self,
        site: str,
        cache_dir: Path | None,
        open_reader: Callable[[RemoteIndex], Any],
        refresh_seconds: float = DEFAULT_REFRESH_SECONDS,
        download_seconds: float = DOWNLOAD_SECONDS,
        **remote: Any,
    ) -> None:
        """`open_reader`: the reader of a version's started RemoteIndex; `remote`: RemoteIndex's other options."""
        self.site = site if site.endswith("/") else site + "/"
        self.url = urljoin(self.site, VERSIONS_FILE)
        self.cache_dir = cache_dir or default_cache_dir()
        self.folder = site_folder(self.cache_dir, self.url)
        self.refresh_seconds, self.download_seconds = refresh_seconds, download_seconds
        self.remote = remote
        self.open_reader = open_reader
        self.versions = Versions(self.folder, self._open)
        self._stop = threading.Event()

    def start(self) -> Versions:
        """Download versions.json once (raises DownloadRefused when the site has none, or not mike's), then keep
        refreshing it."""
        confined_folder(self.cache_dir, self.folder.name)
        self.refresh()
        if self.refresh_seconds > 0:
            start_refreshing(self._stop, self.refresh_seconds, self.refresh, "list of versions", shown(self.url))
        return self.versions

    def stop(self) -> None:
        self._stop.set()

    def refresh(self) -> None:
        temporary = self.folder / f".versions-{secrets.token_hex(8)}.tmp"
        try:
            download(self.url, {}, temporary, LIST_BYTES, self.download_seconds)
            try:
                listed(temporary.read_text(encoding="utf-8"))
            except (ValueError, UnicodeDecodeError) as error:
                raise DownloadRefused(f"{shown(self.url)} is not mike's list of versions ({error}).") from None
            os.replace(temporary, self.folder / VERSIONS_FILE)
        finally:
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)

    def _open(self, version: str) -> Any:
        """A version's index, downloaded (or confirmed) at its first call and refreshed from then on."""
        remote = RemoteIndex(
            urljoin(self.site, f"{version}/"),
            self.cache_dir,
            refresh_seconds=self.refresh_seconds,
            download_seconds=self.download_seconds,
            **self.remote,
        )
        try:
            remote.start()
        except DownloadRefused as error:
            raise InvalidArgument(f"version {version} cannot be served: {error}") from None
        return self.open_reader(remote)
