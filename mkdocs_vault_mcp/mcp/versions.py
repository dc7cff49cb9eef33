"""The versions of a site mike publishes, served at once: each version's index, opened when first asked.

mike keeps one built site per version under the site root and lists them in `versions.json`
(`[{"version", "title", "aliases"}]`, newest first). An alias resolves through that file to its version's own
folder, whichever way mike wrote the alias folder (a symbolic link, a copy, or redirect pages that hold no
index): the file is what mike itself reads. It is read again when it changes, so a version deployed while the
server runs is served at its next call.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidArgument
from ..index.filters import Filters, split_target
from ..index.query.queries import count_documents
from ..index.query.version_changes import PageSections, page_sections

VERSIONS_FILE = "versions.json"
INDEX_URI = "vault-mcp/index.sqlite"  # where each version's build publishes its index, under its folder
DEFAULT_ALIAS = "latest"


@dataclass(frozen=True)
class Listed:
    """What versions.json says: the versions, newest first, and each alias's version."""

    versions: list[str]
    aliases: dict[str, str]

    def resolve(self, name: str | None) -> str:
        """The version `name` (a version or an alias) names; without one, `latest`, else the first listed."""
        if name is None:
            return self.aliases.get(DEFAULT_ALIAS, self.versions[0])
        if name in self.versions:
            return name
        if name in self.aliases:
            return self.aliases[name]
        aliases = ", ".join(f"{alias} ({version})" for alias, version in self.aliases.items())
        raise InvalidArgument(
            f"unknown version {name!r}; this site has {', '.join(self.versions)}"
            + (f" and the aliases {aliases}" if aliases else "")
            + "."
        )

    def meta(self, version: str) -> dict[str, Any]:
        """What every answer's `_meta` says: the version that answered and the versions there are."""
        return {"version": version, "versions": self.versions, "aliases": self.aliases}


def listed(text: str) -> Listed:
    """versions.json's text, read as mike writes it; ValueError when it is not that."""
    entries = json.loads(text)
    if not isinstance(entries, list) or not entries:
        raise ValueError("it lists no versions")
    versions: list[str] = []
    aliases: dict[str, str] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("version"), str):
            raise ValueError(f"an entry is not a version: {str(entry)[:80]}")
        versions.append(entry["version"])
        for alias in entry.get("aliases") or ():
            aliases.setdefault(str(alias), entry["version"])
    return Listed(versions, aliases)


def holds_versions(folder: Path) -> bool:
    return (folder / VERSIONS_FILE).is_file()


def local_index(root: Path, version: str) -> Path:
    """Where a checkout of the deploy branch holds a version's published index."""
    return root / version / INDEX_URI


class Versions:
    """A folder that holds versions.json (a checkout of mike's deploy branch, or the copy `serve URL` keeps) and a
    reader per version."""

    def __init__(self, root: Path, open_reader: Callable[[str], Any]) -> None:
        """`open_reader`: the reader (mcp/server.py's IndexReader) of a version's index, by its name
        (`local_index` for a folder)."""
        self.root = root
        self.open_reader = open_reader
        self._lock = threading.Lock()
        self._readers: dict[str, Any] = {}
        self._listed: tuple[tuple[int, int], Listed] | None = None  # versions.json's (mtime, size) and reading

    def listed(self) -> Listed:
        path = self.root / VERSIONS_FILE
        try:
            status = os.stat(path)
            key = (status.st_mtime_ns, status.st_size)
            kept = self._listed
            if kept is not None and kept[0] == key:
                return kept[1]
            reading = listed(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise InvalidArgument(f"{path} cannot be read as mike's list of versions ({error}).") from None
        self._listed = (key, reading)
        return reading

    def reader(self, version: str) -> Any:
        """The reader of `version`'s index (a version versions.json lists), opened at its first call."""
        with self._lock:
            reader = self._readers.get(version)
            if reader is None:
                reader = self._readers[version] = self.open_reader(version)
            return reader

    def choose(self, name: str | None) -> tuple[Any, dict[str, Any]]:
        """The reader of the version `name` names (default: `latest`), and the `_meta` of its answers."""
        versions = self.listed()
        version = versions.resolve(name)
        return self.reader(version), versions.meta(version)

    def opened(self, name: str | None) -> tuple[Any, dict[str, Any]] | None:
        """`choose`'s answer when that version's reader is already open (None: opening it may download)."""
        versions = self.listed()
        version = versions.resolve(name)
        reader = self._readers.get(version)
        return None if reader is None else (reader, versions.meta(version))

    async def document_counts(self) -> dict[str, int | None]:
        """Each version's page count, for stats: every version's index is opened (None: it has none to read)."""
        counts: dict[str, int | None] = {}
        for version in self.listed().versions:
            try:
                counts[version] = await self.reader(version).read(lambda conn: count_documents(conn, Filters()))
            except Exception:  # a version deployed without the plugin has no index to count: null
                counts[version] = None
        return counts


async def older_page(versions: Versions | None, since: str, target: str | None) -> PageSections | str:
    """links(show="changes"): the target page as the version `since` names has it, read from that version's own
    index (`since` itself without a target: the tool says what it needs)."""
    if versions is None:
        raise InvalidArgument(
            "since names one of the versions of a site mike publishes, and this site has none (no versions.json "
            "where it is served from)."
        )
    if target is None:
        return since
    reader, meta = versions.choose(since)
    path, version = split_target(target)[0], meta["version"]
    page: PageSections = await reader.read(lambda conn: page_sections(conn, path, version))
    return page


async def chosen(versions: Versions | None, index: Any, version: str | None) -> tuple[Any, dict[str, Any]]:
    """The reader that answers for `version` (a version or alias of a site mike publishes) and what `_meta` says.
    `index`: the default version's reader (server.IndexReader)."""
    if versions is not None:
        # A version's first call opens it on one of the reader threads: one served from a URL is downloaded then.
        opened = versions.opened(version)
        if opened is None:
            opened = await index.on_reader_thread(versions.choose, version)
        return opened
    if version is not None:
        raise InvalidArgument(
            "version names one of the versions of a site mike publishes, and this site has none (no versions.json "
            "where it is served from); leave version out."
        )
    return index, {}
