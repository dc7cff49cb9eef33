"""Where a deployed site's index is, as its discovery file says: the AI Catalog at `.well-known/ai-catalog.json`
beside the site (build_steps/server_card.py writes it), whose first MCP Server Card names the index under this package's
own `_meta` key.

The catalog and a card it links to are untrusted input: fetched by download.py (its deadline, redirect rules and
private temporary file) with a limit of 64 kB, parsed as JSON of any shape, and only URLs on the origin of the URL
the user gave are taken. A catalog that is missing, malformed, too big or names no index sends the download to the
index's usual place, `vault-mcp/index.sqlite`; one that cannot be had at all (the site down) leaves the index where
it was last found.
"""

from __future__ import annotations

import json
import logging
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from .download import DownloadRefused, HttpError, TooBig, download, plain_url, shown

log = logging.getLogger(__name__)

# The names build_steps/server_card.py writes (a test checks they agree; the mcp layer does not import the build layer).
CATALOG_URI = ".well-known/ai-catalog.json"
CARD_TYPE = "application/mcp-server-card+json"
META_INDEX = "mkdocs-vault-mcp/index"
CATALOG_ACCEPT = "application/ai-catalog+json, application/json"
CARD_ACCEPT = "application/mcp-server-card+json, application/json"
MAX_BYTES = 64 << 10
MAX_SECONDS = 30  # 64 kB needs no longer, and the index's own download keeps the rest of its deadline
GONE = (404, 410)


class NoIndex(DownloadRefused):
    """The site's card names a hosted MCP endpoint and no index: there is nothing to download."""


class Unusable(Exception):
    """The discovery file says nothing this server can use; the message says why."""


@dataclass
class Discovered:
    """Where to download the index from now, and what to keep for the next refresh."""

    index_url: str
    etag: str | None = None  # the catalog's, sent back at the next refresh; None when it named no index
    schema_version: str | None = None  # the index format the card announces, when it says one
    note: str | None = None  # why the card's index was not taken, for a message when the usual place fails too


def catalog_url(target: str) -> str | None:
    """The discovery file of the site at `target` (beside the site, so a site under a path has its own); None when
    `target` names an index file itself."""
    parts = urlsplit(target)
    if parts.path.endswith(".sqlite"):
        return None
    return urljoin(target if parts.path.endswith("/") else target + "/", CATALOG_URI)


def origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)


def resolved(value: object, base: str) -> str | None:
    """`value` resolved against `base` when it is an http(s) URL a message can show on one line, else None."""
    if not isinstance(value, str):
        return None
    url = urljoin(base, value)
    return url if plain_url(url) else None


def discover(catalog: str, usual: str, known: str | None, etag: str | None, folder: Path, seconds: float) -> Discovered:
    """Where the index is: as the catalog at `catalog` says, else at `usual`; `known` and `etag` are what the last
    refresh found (the catalog is asked with that ETag). Raises DownloadRefused when the site says it publishes no
    index (NoIndex)."""
    headers = {"If-None-Match": etag} if known and etag else {}
    try:
        status, catalog_data, new_etag = fetch_json(catalog, CATALOG_ACCEPT, headers, folder, seconds)
        if status == 304:
            if known and etag:
                return Discovered(known, etag)
            raise Unusable("it answered 304 Not Modified to a plain request")
        card, base = card_of(catalog, catalog_data, folder, seconds)
        return index_of(card, base, catalog, usual, new_etag)
    except Unusable as error:
        log.debug("mkdocs-vault-mcp: the discovery file %s is not used (%s); trying %s", shown(catalog), error, usual)
        return Discovered(usual)
    except (HttpError, TooBig) as error:
        if isinstance(error, HttpError) and error.status not in GONE:
            return unreachable(catalog, error, known or usual)
        log.debug("mkdocs-vault-mcp: no usable discovery file (%s); trying %s", error, usual)
        return Discovered(usual)
    except NoIndex:
        raise
    except DownloadRefused as error:
        return unreachable(catalog, error, known or usual)


def unreachable(catalog: str, error: DownloadRefused, url: str) -> Discovered:
    # The site down or failing: where the index was last found is the best guess.
    log.debug("mkdocs-vault-mcp: the discovery file %s could not be had (%s); trying %s", shown(catalog), error, url)
    return Discovered(url)


def fetch_json(
    url: str, accept: str, headers: dict[str, str], folder: Path, seconds: float
) -> tuple[int, Any, str | None]:
    """GET `url` (at most MAX_BYTES) through a private temporary file in `folder`: its status, JSON and ETag."""
    temporary = folder / f".discovery-{secrets.token_hex(8)}.tmp"
    try:
        got = download(url, {"Accept": accept, **headers}, temporary, MAX_BYTES, min(seconds, MAX_SECONDS))
        if got.status == 304:
            return 304, None, got.etag
        body = temporary.read_bytes()
    finally:
        temporary.unlink(missing_ok=True)
    try:
        return 200, json.loads(body.decode("utf-8")), got.etag
    except (ValueError, RecursionError) as error:
        said = error.msg if isinstance(error, json.JSONDecodeError) else type(error).__name__
        raise Unusable(f"it is not JSON ({said})") from None


def card_of(catalog: str, data: Any, folder: Path, seconds: float) -> tuple[dict[str, Any], str]:
    """The catalog's first MCP Server Card, inline or fetched from the site's origin, and the URL its own URLs are
    relative to."""
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise Unusable("it is not an AI Catalog: no list of entries")
    entry = next((e for e in entries if isinstance(e, dict) and e.get("type") == CARD_TYPE), None)
    if entry is None:
        raise Unusable(f"it lists no {CARD_TYPE}")
    if isinstance(entry.get("data"), dict):
        return entry["data"], catalog
    url = resolved(entry.get("url"), catalog)
    if url is None:
        raise Unusable("its server card has neither data nor an http(s) url")
    if origin(url) != origin(catalog):
        raise Unusable(f"its server card is at {shown(url)}, on another origin")
    try:
        _, card, _ = fetch_json(url, CARD_ACCEPT, {}, folder, seconds)
    except DownloadRefused as error:
        raise Unusable(f"its server card could not be had: {error}") from None
    if not isinstance(card, dict):
        raise Unusable("its server card is not a JSON object")
    return card, url


def index_of(card: dict[str, Any], base: str, catalog: str, usual: str, etag: str | None) -> Discovered:
    """The index `card` names under META_INDEX; NoIndex when it names a hosted endpoint and no index."""
    meta = card.get("_meta")
    entry = meta.get(META_INDEX) if isinstance(meta, dict) else None
    if not isinstance(entry, dict):
        remotes = card.get("remotes")
        remote = remotes[0] if isinstance(remotes, list) and remotes and isinstance(remotes[0], dict) else {}
        endpoint = resolved(remote.get("url"), base)
        if endpoint is not None:
            raise NoIndex(f"this site publishes no index; connect your MCP client to {shown(endpoint)}")
        raise Unusable(f"its server card names no {META_INDEX}")
    url = resolved(entry.get("url"), base)
    if url is None:
        raise Unusable(f"its {META_INDEX} has no http(s) url")
    if origin(url) != origin(catalog):
        note = (
            f"The site's discovery file names its index at {shown(url)}, on another origin than "
            f"{shown(usual)}, which is not downloaded from."
        )
        log.debug("mkdocs-vault-mcp: %s", note)
        return Discovered(usual, note=note)
    version = entry.get("schemaVersion")
    announced = version if isinstance(version, str) and version.isascii() and version.isdigit() else None
    return Discovered(url, etag, announced if announced and len(announced) <= 9 else None)
