"""A page's fingerprint: when the index holds it, the page is not indexed again (build_steps/incremental.py says what it covers).

The build's thread takes it for every rendered page, so the module holds no HTML parsing (page/documents.py).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from typing import Any

from ..instants import to_micros
from .front_matter import meta_fingerprint

# hashlib lets other threads run while it hashes HASH_PIECE bytes or more at once (its documented threshold). Under
# `mkdocs serve`, MkDocs' file watcher takes the GIL then, and the build's thread waits for it back at every page:
# fed in smaller pieces, the hash keeps the GIL.
HASH_PIECE = 2047


def fingerprint(*parts: object) -> str:
    """A digest of everything that, when unchanged, lets a page skip re-indexing."""
    # One string, encoded once: under `mkdocs serve` every page rendered again is fingerprinted
    data = memoryview(("\x00".join(map(str, parts)) + "\x00").encode("utf-8", "surrogatepass"))
    digest = hashlib.blake2b(digest_size=16)
    for start in range(0, len(data), HASH_PIECE):
        digest.update(data[start : start + HASH_PIECE])
    return digest.hexdigest()


def page_fingerprint(
    html_content: str,
    title: str,
    url: str,
    meta: dict[str, Any],
    modified: dt.datetime | None,
    modified_source: str,
    markdown: object,
    *more: object,
    known: str = "",
) -> str:
    """The fingerprint of a page as the plugin and `mkdocs-vault-mcp index` both take it: when it is unchanged,
    the page is not indexed again. `modified` None leaves the time out (a built site's file time); `markdown`: the
    source's text, or what stands for it (mkdocs_pages.source_version); `more`: the page's language and what it is
    a fallback of; `known`: the fingerprint the index holds for the page, if any.

    When the HTML as it is gives `known` (or its first half, build_steps/incremental.py's late content), the HTML had no
    parts that differ from run to run, and searching it for them is skipped: most pages of a rebuild are unchanged."""
    meta_json = meta_fingerprint(meta)
    micros = None if modified is None else to_micros(modified)
    rest = (title, url, meta_json, micros, modified_source, markdown, *more)
    if known:
        as_it_is = fingerprint(html_content, *rest)
        if known == as_it_is or known.startswith(as_it_is + "/"):
            return as_it_is
    return fingerprint(stable_html(html_content), *rest)


# Python's default repr of an object names its address ("<Sentinel object at 0x7f5f50b18290>"), new in every run.
# API reference generators print it for default values (mkautodoc on httpx's docs): with the address in the
# fingerprint, such a page was written again by every build though neither its source nor its text changed.
_OBJECT_ADDRESS = re.compile(r"(?<= at 0x)[0-9a-fA-F]+(?=>|&gt;)")


def without_object_addresses(html_content: str) -> str:
    """The HTML with the addresses of Python object reprs left out, for its fingerprint."""
    return _OBJECT_ADDRESS.sub("", html_content) if " at 0x" in html_content else html_content


# mkdocstrings-python's backlinks ("Referenced by: Page > Class > attribute"), drawn as a tree from a set: when one
# backlink's trail leads on from another's, which of the two the tree keeps depends on the set's order, so on
# Python's string hashing, new in every run. The pages the trails lead to are the same whichever it keeps.
_BACKLINKS = re.compile(r'<div class="[^"]*\bdoc-backlinks\b[^"]*">(.*?)</div>', re.S)
_BACKLINK_TYPE = re.compile(r'<b class="[^"]*\bdoc-backlink-type\b[^"]*">(.*?)</b>', re.S)
_HREF = re.compile(r"""\shref\s*=\s*["']([^"'#]*)""")


def _backlinks_key(block: re.Match[str]) -> str:
    inner = block.group(1)
    if "<div" in inner:  # not the block mkdocstrings-python writes: kept as it is
        whole: str = block.group(0)
        return whole
    return f"<backlinks {_BACKLINK_TYPE.findall(inner)} {sorted(set(_HREF.findall(inner)))}>"


def stable_html(html_content: str) -> str:
    """The HTML as its fingerprint takes it: without what differs from one run to the next though no source
    changed (the addresses of Python object reprs; the trails of mkdocstrings' backlinks, down to the pages
    they lead to)."""
    html_content = without_object_addresses(html_content)
    return _BACKLINKS.sub(_backlinks_key, html_content) if "doc-backlinks" in html_content else html_content
