"""The discovery file: an AI Catalog at `/.well-known/ai-catalog.json` that holds the site's MCP Server Card inline,
as SEP-2127 ("MCP Server Cards", Draft) and the discovery document of its extension repository have them. The card
names the site's hosted `/mcp` where the owner configured one (`remotes`), and, under this package's own `_meta`
key, the published index that `mkdocs-vault-mcp serve URL` downloads."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urljoin, urlsplit

from .. import __version__

CATALOG_URI = ".well-known/ai-catalog.json"
CATALOG_SPEC_VERSION = "1.0"
CARD_TYPE = "application/mcp-server-card+json"
CARD_SCHEMA = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
META_INDEX = "mkdocs-vault-mcp/index"  # the published index: {"url", "schemaVersion"}
META_LLMS_TXT = "mkdocs-vault-mcp/llms-txt"  # the llms.txt files, one per language
META_GENERATOR = "mkdocs-vault-mcp/generator"  # which package wrote the card, and so may replace it
CARD_TEXT_CHARS = 100  # the schema's limit on `description` and `title`


def card_name(site_url: str) -> tuple[str, str]:
    """The card's reverse-DNS `name` (`org.example.breeze/docs`) and its AI Catalog identifier
    (`urn:air:breeze.example.org:mcp:docs`): the site's host, and its path on that host (`docs` at the root)."""
    parts = urlsplit(site_url)
    host = (parts.hostname or "localhost").lower()
    slug = re.sub(r"[^a-zA-Z0-9._-]+", "-", parts.path.strip("/")).strip("-.") or "docs"
    reverse = ".".join(reversed([label for label in re.split(r"[^a-z0-9-]+", host) if label])) or "localhost"
    return f"{reverse}/{slug}", f"urn:air:{host}:mcp:{slug}"


def clipped(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= CARD_TEXT_CHARS else text[: CARD_TEXT_CHARS - 1].rstrip() + "…"


def server_card(
    site_url: str,
    site_name: str,
    site_description: str,
    hosted_mcp: str | None,
    index_uri: str | None,
    schema_version: str,
    llms_txt: list[str],
) -> dict[str, Any]:
    name, _ = card_name(site_url)
    card: dict[str, Any] = {
        "$schema": CARD_SCHEMA,
        "name": name,
        "version": __version__,  # the serverInfo.version that this package's server reports
        "description": clipped(site_description or f"Search and read the documentation of {site_name}."),
        "title": clipped(site_name) or name,
        "websiteUrl": site_url,
    }
    if hosted_mcp:
        card["remotes"] = [{"type": "streamable-http", "url": urljoin(site_url, hosted_mcp)}]
    meta: dict[str, Any] = {META_GENERATOR: f"mkdocs-vault-mcp {__version__}"}
    if index_uri is not None:
        meta[META_INDEX] = {"url": urljoin(site_url, index_uri), "schemaVersion": schema_version}
    if llms_txt:
        meta[META_LLMS_TXT] = [urljoin(site_url, uri) for uri in llms_txt]
    card["_meta"] = meta
    return card


def ai_catalog(site_url: str, card: dict[str, Any]) -> dict[str, Any]:
    """The catalog, with the card inline (`data`): one request finds everything."""
    _, identifier = card_name(site_url)
    return {
        "specVersion": CATALOG_SPEC_VERSION,
        "entries": [{"identifier": identifier, "type": CARD_TYPE, "data": card}],
    }
