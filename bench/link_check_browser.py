"""Does a browser fail to reach every link that `links(show="broken")` reports, and reach the others?

    .venv/bin/python bench/link_check_browser.py NAME=SITE_DIR [NAME=SITE_DIR ...] [--setup TEXT]

Each SITE_DIR is a site built with the plugin (its index in `vault-mcp/index.sqlite`). The site is served on
127.0.0.1 by Python's `http.server` (a static server that redirects a folder's address without its trailing
slash to the folder, as static hosts do), under the path of the index's `site_url`. Every link of the site to the
site itself is followed as a browser follows it: the address the page's HTML holds, taken relative to the page's
own address, redirects followed (HTTP ones, and the `<meta http-equiv="refresh">` of a redirect page, such as
mkdocs-redirects writes, the link's anchor kept). A link is reached when the server answers 200 and, when the link
names an anchor in an HTML page, the page holds an element with that id (or `<a name>`). Links to other hosts are
not followed, nor those the index takes for another site's on the site's host (no target page, not broken): they
are counted and listed apart, as they cannot be reached on this site alone.

It prints, for each site: the links `links(show="broken")` reports and how many of them a browser reaches (the
false alarms, which should be none), and the links it does not report and how many of them a browser does not
reach (the misses), each listed; and writes the table to bench/results/quality/link_check_browser.json.
"""

from __future__ import annotations

import argparse
import functools
import html
import http.server
import re
import sqlite3
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urljoin, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from mkdocs_vault_mcp.index.answer_types import LinkRow  # noqa: E402
from mkdocs_vault_mcp.index.filters import Filters  # noqa: E402
from mkdocs_vault_mcp.index.publish import open_read_only  # noqa: E402
from mkdocs_vault_mcp.index.query.link_queries import links  # noqa: E402
from report import table, write_results  # noqa: E402

_ID = re.compile(r"""\s(?:id|name)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+))""")
_REFRESH = re.compile(r"""<meta\s+http-equiv=["']?refresh["']?\s+content=["']?\d+\s*;\s*url=([^"'>]+)""", re.I)


class Quiet(http.server.SimpleHTTPRequestHandler):
    base = "/"

    def translate_path(self, path: str) -> str:
        # The site lives under the path of its site_url: anything else is not on it.
        if not urlsplit(path).path.startswith(self.base):
            return str(Path(self.directory) / "\0not-on-the-site")
        return super().translate_path("/" + path[len(self.base) :])

    def log_message(self, format: str, *args: object) -> None:
        pass


class NoRedirectLoops(urllib.request.HTTPRedirectHandler):
    max_redirections = 5


def every_row(conn: sqlite3.Connection, show: Literal["broken", "outlinks"]) -> list[LinkRow]:
    rows: list[LinkRow] = []
    offset: int | None = 0
    while offset is not None:
        answer = links(conn, show, Filters(), limit=1000, offset=offset)
        rows += answer["result"]
        offset = answer["next_offset"]
    return rows


def check_site(name: str, site_dir: Path) -> tuple[list[str], list[str], list[str], list[str]]:
    """(the table's row, false alarms, misses, links to other sites on the host)"""
    conn = open_read_only(site_dir / "vault-mcp" / "index.sqlite")
    site_url = conn.execute("SELECT value FROM info WHERE key = 'site_url'").fetchone()[0] or "http://site.invalid/"
    broken = every_row(conn, "broken")
    every = every_row(conn, "outlinks")
    conn.close()
    site = urlsplit(site_url)
    base = site.path if site.path.endswith("/") else site.path + "/"
    handler = functools.partial(type("Site", (Quiet,), {"base": base}), directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    local = f"http://127.0.0.1:{server.server_address[1]}"
    opener = urllib.request.build_opener(NoRedirectLoops)
    pages: dict[str, tuple[str, str] | None] = {}  # address -> (content type, text), None when not reached

    def fetch(url: str) -> tuple[str, str] | None:
        if url not in pages:
            try:
                with opener.open(url, timeout=10) as answer:
                    pages[url] = (
                        (answer.headers.get_content_type(), answer.read().decode("utf-8", "replace"))
                        if answer.status == 200
                        else None
                    )
            except (urllib.error.URLError, OSError):
                pages[url] = None
        return pages[url]

    def reached(row: LinkRow) -> bool | None:
        """Whether a browser on the page reaches the link's target; None for a link to another host."""
        page = row["section_url"].partition("#")[0]
        address = urljoin(page, row["url"])
        parts = urlsplit(address)
        if parts.scheme not in ("http", "https") or parts.hostname != (site.hostname or "site.invalid"):
            return None
        address = local + (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        found = fetch(address)
        for _ in range(NoRedirectLoops.max_redirections):  # a redirect page: the browser goes on to its target
            refresh = _REFRESH.search(found[1]) if found is not None and found[0] == "text/html" else None
            if refresh is None:
                break
            address = urljoin(address, html.unescape(refresh.group(1)).strip())
            found = fetch(address.partition("#")[0]) if urlsplit(address).netloc == urlsplit(local).netloc else None
        if found is None:
            return False
        kind, text = found
        if not parts.fragment or kind != "text/html":  # an image's fragment (`#only-dark`) names no element
            return True
        anchor = unquote(parts.fragment)
        return any(html.unescape(next(g for g in m.groups() if g is not None)) == anchor for m in _ID.finditer(text))

    shown = lambda row: f"{row['path']} -> {row['url']}"  # noqa: E731
    reported = {(row["path"], row["section"], row["url"]) for row in broken}
    false_alarms = [shown(row) for row in broken if reached(row)]
    # Another site's on this host, as the index says: not on the built site, so not followed.
    elsewhere = [row for row in every if row["target"] is None and reached(row) is not None]
    followed = [row for row in every if row["target"] is not None and reached(row) is not None]
    misses = [
        shown(row) for row in followed if (row["path"], row["section"], row["url"]) not in reported and not reached(row)
    ]
    server.shutdown()
    server.server_close()
    row = [
        name,
        str(len(followed)),
        str(len(broken)),
        str(len(false_alarms)),
        str(len(followed) - len(broken)),
        str(len(misses)),
        str(len(elsewhere)),
    ]
    return row, false_alarms, misses, [shown(row) for row in elsewhere]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sites", nargs="+", metavar="NAME=SITE_DIR")
    parser.add_argument("--setup", default="", help="how the sites were built, written into the results")
    arguments = parser.parse_args()
    rows = [
        [
            "site",
            "links to the site",
            "reported broken",
            "of them reached (false alarms)",
            "not reported",
            "of them not reached (misses)",
            "to other sites on the host (not followed)",
        ]
    ]
    details = []
    for given in arguments.sites:
        name, _, folder = given.partition("=")
        row, false_alarms, misses, elsewhere = check_site(name, Path(folder))
        rows.append(row)
        details += [
            f"{name}: reported broken but reached ({len(false_alarms)}):",
            *false_alarms,
            f"{name}: not reported but not reached ({len(misses)}):",
            *misses,
            f"{name}: to other sites on the host, not followed ({len(elsewhere)}):",
            *elsewhere,
            "",
        ]
    report = (
        "link check by a browser: each link of the site to itself followed on the built site, served by "
        "http.server\n"
        + (f"sites: {arguments.setup}\n" if arguments.setup else "")
        + "\n"
        + table(rows)
        + "\n\n"
        + "\n".join(details)
    )
    print(report)
    write_results("link_check_browser", report)


if __name__ == "__main__":
    main()
