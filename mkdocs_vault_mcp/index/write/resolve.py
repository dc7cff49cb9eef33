"""What a commit works out against the whole site as the build has it: each link's target and whether it is
broken, how many pages link to each page, which pages the nav lists. Each touches only what may have changed."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable


def set_digest(items: dict[str, str] | set[str]) -> str:
    """A digest of the site's files (in MkDocs' own order, which is stable) or of the nav's pages (sorted)."""
    text = repr(items) if isinstance(items, dict) else "\n".join(sorted(items))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class SiteFiles:
    """Which file of the site a link's server path reaches, as a static server serves the built site: the file at
    that path, else (a folder's address without its trailing slash, which servers redirect to the folder) the
    page at the path with the slash. On a site whose versions mike publishes side by side (`version_base`: the
    path the versions' folders are in), an address in a folder the site does not have is taken for one in a
    version's folder (`/latest/guide/`, `/dev/guide/`) and reaches the page of this build at the rest of it.

    An address this site cannot hold is another site's on the same host (`elsewhere`): one outside the site's path
    (`base`), and a full address (`https://host/python/`, written with the host) into a top folder a site at the
    host's root does not have, as GitHub Pages serves project sites beside a user site."""

    def __init__(self, files: dict[str, str], version_base: str | None = None, base: str = "/") -> None:
        self.files = files
        self.version_base = version_base
        self.base = base
        self._folders: set[str] | None = None
        self._top: set[str] | None = None

    def find(self, target: str) -> str | None:
        path = self._at(target)
        if path is None and self.version_base is not None:
            rest = self._in_version_folder(target, self.version_base)
            if rest is not None:
                path = self._at(self.version_base + rest)
        return path

    def elsewhere(self, target: str, full_address: bool) -> bool:
        """Whether `target`, which no file of the site is at, belongs to another site on the host."""
        if not target.startswith("/"):
            return False  # a `.md` path MkDocs left as written: this site's
        if self.version_base is not None and self._in_version_folder(target, self.version_base) is not None:
            return False  # another version of this site, as mike publishes them
        if not (target + "/").startswith(self.base):
            return True
        if not full_address or self.base != "/":
            return False
        if self._top is None:
            self._top = {url[1:].partition("/")[0] for url in self.files}
        folder, slash, _ = target[1:].partition("/")
        return bool(folder) and folder not in self._top and (bool(slash) or "." not in folder)

    def _at(self, target: str) -> str | None:
        path = self.files.get(target)
        if path is None and not target.endswith("/"):
            path = self.files.get(target + "/")
        return path

    def _in_version_folder(self, target: str, base: str) -> str | None:
        """What follows the version's folder in `target` (under `base`, or beside it when `base` is itself a
        version's folder), or None when the folder is one the site has."""
        if not target.startswith(base):
            parent = base.rstrip("/").rpartition("/")[0] + "/"
            if base == "/" or not target.startswith(parent):
                return None
            base = parent
        folder, slash, rest = target[len(base) :].partition("/")
        if not slash or not folder:
            return None
        if self._folders is None:
            self._folders = {
                url[len(base) :].partition("/")[0]
                for url in self.files
                if url.startswith(base) and "/" in url[len(base) :]
            }
        return None if folder in self._folders else rest


# The rules SiteFiles finds a link's file by: an index whose links were resolved by other rules resolves them again.
FILE_RULES = "folder address without its slash; mike's version folders; other sites on the host"


def files_digest(site_files: dict[str, str], version_base: str | None, base: str = "/") -> str:
    """What decides where links lead, as the index keeps it: the site's files, the rules, mike's version base, the
    site's path."""
    return f"{set_digest(site_files)} {set_digest({FILE_RULES, version_base or '', 'base:' + base})}"


def resolve_links(
    conn: sqlite3.Connection,
    site_files: dict[str, str],
    changed: set[str],
    same_files: bool = False,
    version_base: str | None = None,
    base: str = "/",
) -> set[str]:
    """Each link's target page and whether it is broken, against the site as this build has it (SiteFiles, the site
    at server path `base`); returns the pages that gained or lost a link. A link to another site on the host is
    neither: no target page, not broken.

    Only the links that may have changed are looked at: those of the pages put in this build, those to a page put
    or removed in this build (its anchors may differ), and when the site's files changed, those whose target
    address (or its folder form) now holds another file or none, those that reached a file that moved or went,
    and the broken ones (a file may now be there). So the links of unchanged pages break when their target goes,
    under `mkdocs serve --dirty` too, and a rebuild of one page costs a few lookups, not one per link of the site.
    """
    moved = _store_site_files(conn, site_files, changed, same_files)
    rows = _links_to_check(conn, same_files, moved)
    files = SiteFiles(site_files, version_base, base)
    has_anchor = _anchor_lookup(conn)
    changes = []
    touched: set[str] = set()
    for rowid, target, anchor, host, stored_path, stored_broken in rows.values():
        path = files.find(target)
        broken = None
        if path is None:
            broken = None if files.elsewhere(target, host is not None) else "page"
        elif anchor and has_anchor(path, anchor) is False:
            broken = "anchor"
        if (path, broken) != (stored_path, stored_broken):
            changes.append((path, broken, rowid))
            touched.update(p for p in (path, stored_path) if p is not None)
    conn.executemany("UPDATE links SET target_path = ?, broken = ? WHERE rowid = ?", changes)
    return touched


def _store_site_files(
    conn: sqlite3.Connection, site_files: dict[str, str], changed: set[str], same_files: bool
) -> list[str]:
    """Bring `site_files` up to date and fill `temp.changed_keys` with what changed; returns the addresses whose
    file moved, came or went."""
    stored = {} if same_files else dict(conn.execute("SELECT url, path FROM site_files"))
    moved = (
        []
        if same_files
        else [url for url in stored.keys() | site_files.keys() if stored.get(url) != site_files.get(url)]
    )
    conn.executemany("DELETE FROM site_files WHERE url = ?", [[url] for url in moved if url in stored])
    conn.executemany(
        "INSERT INTO site_files (url, path) VALUES (?, ?)",
        [(url, site_files[url]) for url in moved if url in site_files],
    )
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS changed_keys (kind TEXT, key TEXT, PRIMARY KEY (kind, key))")
    conn.execute("DELETE FROM temp.changed_keys")
    conn.executemany(
        "INSERT OR IGNORE INTO temp.changed_keys VALUES ('url', ?)",
        [[key] for url in moved for key in (url, url[:-1]) if key],
    )
    conn.executemany("INSERT OR IGNORE INTO temp.changed_keys VALUES ('path', ?)", [[path] for path in changed])
    conn.executemany(
        "INSERT OR IGNORE INTO temp.changed_keys VALUES ('gone', ?)", [[stored[url]] for url in moved if url in stored]
    )
    return moved


def _links_to_check(
    conn: sqlite3.Connection, same_files: bool, moved: list[str]
) -> dict[int, tuple[int, str, str | None, str | None, str | None, str | None]]:
    """The links that may lead elsewhere now (see `resolve_links`): rowid -> rowid, target, anchor, host, target path
    and broken, as stored."""
    columns = "SELECT l.rowid, l.target, l.anchor, l.host, l.target_path, l.broken FROM links l"
    rows: dict[int, tuple[int, str, str | None, str | None, str | None, str | None]] = {}  # rowid -> the columns
    queries = [
        f"{columns} JOIN documents d ON d.id = l.document_id"
        " WHERE d.path IN (SELECT key FROM temp.changed_keys WHERE kind = 'path') AND l.target IS NOT NULL",
        f"{columns} WHERE l.target IN (SELECT key FROM temp.changed_keys WHERE kind = 'url')",
        f"{columns} WHERE l.target_path IN (SELECT key FROM temp.changed_keys WHERE kind = 'path')",
    ]
    if not same_files and not moved:  # the same files, read another way (mike's versions turned on or off)
        queries = [f"{columns} WHERE l.target IS NOT NULL"]
    elif moved:
        queries += [
            f"{columns} WHERE l.target_path IN (SELECT key FROM temp.changed_keys WHERE kind = 'gone')",
            f"{columns} WHERE l.broken = 'page'",
        ]
    for sql in queries:
        rows.update((row[0], row) for row in conn.execute(sql))
    return rows


def _anchor_lookup(conn: sqlite3.Connection) -> Callable[[str, str], bool | None]:
    """Whether a page has an anchor, each page's anchors read once."""
    documents: dict[str, int] = {}
    anchors: dict[int, set[str]] = {}

    def has_anchor(path: str, anchor: str) -> bool | None:
        """None when the target is not an indexed page (a static file, an excluded or generated page)."""
        if path not in documents:
            row = conn.execute(
                "SELECT p.document_id, p.anchors FROM pages p JOIN documents d ON d.id = p.document_id"
                " WHERE d.path = ?",
                [path],
            ).fetchone()
            documents[path] = row[0] if row else -1
            if row:
                anchors[row[0]] = set(row[1].split("\n"))
        document_id = documents[path]
        return None if document_id < 0 else anchor in anchors[document_id]

    return has_anchor


def count_linking_pages(conn: sqlite3.Connection, paths: set[str]) -> None:
    """`pages.linked_from` (how many other pages link to the page, the generated pages listing it included) for the
    pages whose links changed."""
    conn.executemany(
        "UPDATE pages SET linked_from = listed_from + (SELECT count(DISTINCT l.document_id) FROM links l"
        " WHERE l.target_path = :path AND l.document_id != pages.document_id)"
        " WHERE document_id = (SELECT id FROM documents WHERE path = :path)",
        [{"path": path} for path in paths],
    )


def mark_listed(conn: sqlite3.Connection, listed: dict[str, int], scope: set[str]) -> set[str]:
    """`pages.listed_from` as this build's generated listing pages say (`listed`: a page's path -> how many list
    it), for the pages of this build (`scope`: a multilingual site's other languages keep theirs); returns the
    pages whose count changed."""
    stored = dict(
        conn.execute(
            "SELECT d.path, p.listed_from FROM pages p JOIN documents d ON d.id = p.document_id WHERE p.listed_from > 0"
        )
    )
    flips = {path: count for path, count in listed.items() if stored.get(path, 0) != count}
    flips |= {path: 0 for path in stored if path not in listed and path in scope}
    conn.executemany(
        "UPDATE pages SET listed_from = ? WHERE document_id = (SELECT id FROM documents WHERE path = ?)",
        [(count, path) for path, count in flips.items()],
    )
    return set(flips)


def mark_nav(conn: sqlite3.Connection, nav: set[str], only: set[str] | None = None) -> None:
    """`pages.in_nav` as the nav of this build says, touching only the pages whose membership changed; with
    `only` (the nav is the one of the last build), looking at those pages alone (the ones put in this build)."""
    if only is not None:
        conn.executemany(
            "UPDATE pages SET in_nav = 1 WHERE document_id = (SELECT id FROM documents WHERE path = ?)",
            [[path] for path in only if path in nav],
        )
        return
    listed = dict(conn.execute("SELECT d.path, p.in_nav FROM pages p JOIN documents d ON d.id = p.document_id"))
    flips = [(int(path in nav), path) for path, in_nav in listed.items() if bool(in_nav) != (path in nav)]
    conn.executemany("UPDATE pages SET in_nav = ? WHERE document_id = (SELECT id FROM documents WHERE path = ?)", flips)
