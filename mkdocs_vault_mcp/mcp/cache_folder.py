"""The cache folder of `serve URL`: one private folder per index URL, confined (nothing in it is reached through a
symbolic link), and its `state.json`, read as untrusted input.

The site folder and the `sites` folder above it are checked with `lstat` and created with mode 0700, so once they
are checked no other user can put anything into them; a symbolic link in their place is replaced by a folder of
our own, never written through. Files are created with O_EXCL and O_NOFOLLOW.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import secrets
import stat
from dataclasses import asdict, dataclass
from pathlib import Path

from .download import NO_FOLLOW, DownloadRefused, plain_url

log = logging.getLogger(__name__)

STATE_FILE = "state.json"
MAX_STATE_BYTES = 64 << 10
LATEST_TIME = 4_102_444_800.0  # 2100-01-01: a later time in state.json is not one this program wrote
MAX_PROBLEM = 2_000
# What http.client sends as a header value: latin-1 text without control characters (a CR or LF would be refused).
HEADER_VALUE = re.compile(r"[\t\x20-\x7e\x80-\xff]{1,1024}")


class CacheRefused(DownloadRefused):
    """The cache folder cannot be used safely; the message names the folder and why."""


@dataclass
class State:
    """What the cache folder's `state.json` keeps beside the index."""

    etag: str | None = None
    last_modified: str | None = None
    downloaded_at: float | None = None  # when the cached index was downloaded (epoch seconds)
    confirmed_at: float | None = None  # when the site last said the cached index is its current one
    problem: str | None = None  # why the last attempt to refresh failed; None when it did not
    index_url: str | None = None  # where the cached index came from, as the site's discovery file said
    catalog_etag: str | None = None  # the discovery file's ETag, sent back at the next refresh


def header_value(value: object) -> str | None:
    """`value` when it can be sent back as a header value (an ETag, a date), else None."""
    return value if isinstance(value, str) and HEADER_VALUE.fullmatch(value) else None


def parsed_state(data: object) -> State:
    """The State `data` (state.json's content) says; ValueError, naming what is wrong, for anything unexpected."""
    if not isinstance(data, dict):
        raise ValueError(f"it holds a JSON {type(data).__name__}, not an object")
    for key in ("etag", "last_modified", "catalog_etag"):
        if data.get(key) is not None and header_value(data[key]) is None:
            raise ValueError(f"its {key} is not a value an HTTP header can carry")
    for key in ("downloaded_at", "confirmed_at"):
        value = data.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"its {key} is not a number")
        if not 0 <= value <= LATEST_TIME:
            raise ValueError(f"its {key} is not a time this program writes")
    problem = data.get("problem")
    if problem is not None and not isinstance(problem, str):
        raise ValueError("its problem is not text")
    index_url = data.get("index_url")
    if index_url is not None and not plain_url(index_url):
        raise ValueError("its index_url is not an http(s) URL")
    return State(
        etag=data.get("etag"),
        last_modified=data.get("last_modified"),
        downloaded_at=None if data.get("downloaded_at") is None else float(data["downloaded_at"]),
        confirmed_at=None if data.get("confirmed_at") is None else float(data["confirmed_at"]),
        problem=None if problem is None else problem[:MAX_PROBLEM],
        index_url=index_url,
        catalog_etag=data.get("catalog_etag"),
    )


def load_state(folder: Path) -> tuple[State, int | None]:
    """The folder's state and its file's modification time; anything unexpected: one warning and a fresh state."""
    file = folder / STATE_FILE
    try:
        descriptor = os.open(file, os.O_RDONLY | NO_FOLLOW)
    except FileNotFoundError:
        return State(), None
    except OSError as error:
        return fresh_state(file, f"it cannot be read: {error.strerror or error}"), None
    with open(descriptor, "rb") as opened:
        seen = os.fstat(descriptor).st_mtime_ns
        text = opened.read(MAX_STATE_BYTES + 1)
    if len(text) > MAX_STATE_BYTES:
        return fresh_state(file, f"it is over {MAX_STATE_BYTES >> 10} kB"), seen
    try:
        return parsed_state(json.loads(text.decode("utf-8"))), seen
    except (ValueError, RecursionError) as error:
        reason = str(error) if not isinstance(error, json.JSONDecodeError) else f"it is not JSON ({error.msg})"
        return fresh_state(file, reason if not isinstance(error, UnicodeError) else "it is not UTF-8 text"), seen


def fresh_state(file: Path, reason: str) -> State:
    log.warning("mkdocs-vault-mcp: the cache's %s is not usable (%s); starting afresh.", file, reason)
    return State()


def save_state(folder: Path, state: State) -> None:
    temporary = folder / f".state-{secrets.token_hex(8)}.tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NO_FOLLOW, 0o600)
    try:
        with open(descriptor, "w", encoding="utf-8") as out:
            json.dump(asdict(state), out)
        os.replace(temporary, folder / STATE_FILE)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def confined_folder(cache_dir: Path, name: str) -> Path:
    """`cache_dir/sites/name`, made (mode 0700) or checked: real folders of this user, not symbolic links.

    Raises CacheRefused, saying why, when it cannot be used."""
    try:
        cache_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder = cache_dir
        for part in ("sites", name):
            folder = folder / part
            private_folder(folder)
        for file in ("index.sqlite", STATE_FILE):
            # Only this user writes here now; a link left from before is dropped, not followed.
            if (folder / file).is_symlink():
                (folder / file).unlink()
    except OSError as error:
        raise CacheRefused(
            f"cannot use the cache folder {cache_dir} ({error.strerror or error}); give another with --cache."
        ) from None
    return folder


def private_folder(folder: Path) -> None:
    """Make `folder` a folder of this user's only, replacing a symbolic link in its place."""
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:  # another worker process made it first: check what it is
            private_folder(folder)
        return
    if stat.S_ISLNK(info.st_mode):
        log.warning(
            "mkdocs-vault-mcp: the cache folder %s is a symbolic link; it is replaced by a folder of its own, "
            "and nothing is written where it pointed.",
            folder,
        )
        os.unlink(folder)
        os.mkdir(folder, 0o700)
        return
    if not stat.S_ISDIR(info.st_mode):
        raise OSError(f"{folder} is not a folder")
    owner = getattr(os, "getuid", None)
    if owner is not None and info.st_uid != owner():
        raise OSError(f"{folder} belongs to another user")
    if info.st_mode & 0o077:
        os.chmod(folder, 0o700)
