"""What `mkdocs.yml` says that `mkdocs-vault-mcp index SITE_DIR --config mkdocs.yml` needs: the site's name,
URL and docs folder, the `nav` and its titles, the theme's language and the plugin's options (validated by the
plugin's own schema, `config.VaultMcpConfig`). The YAML is read with MkDocs' loader (its `!ENV` tag); every
other tag (`!relative`, `!!python/name:...`) is taken as its plain value, since nothing here runs the site's
Markdown extensions."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from mkdocs.config.config_options import PathSpec
from mkdocs.utils.yaml import get_yaml_loader

from ..config import VaultMcpConfig
from .mkdocs_pages import uses_mike
from .site_folder import SiteError


def plugin_options(values: dict[str, Any], config_file: Path | None = None) -> VaultMcpConfig:
    """The plugin's options through the plugin's own schema, so a wrong value reads as it does in a build."""
    options = VaultMcpConfig()
    options.load_dict(dict(values))
    errors, _ = options.validate()
    if errors:
        name, error = errors[0]
        raise SiteError(f"{str(config_file)!r}: plugin 'vault-mcp' option {name!r}: {error}")
    return options


@dataclass
class SiteConfig:
    """What mkdocs.yml says that indexing needs (all optional)."""

    site_name: str | None = None
    site_url: str | None = None
    site_description: str | None = None
    docs_dir: Path | None = None
    use_directory_urls: bool = True
    language: str = "en"  # the theme's, as the plugin takes a single-language site's (plugin.theme_language)
    nav_titles: dict[str, str] = field(default_factory=dict)  # path -> the title `nav` gives it
    options: VaultMcpConfig = field(default_factory=lambda: plugin_options({}))
    base: Path | None = None  # the folder of mkdocs.yml
    nav: Any = None  # the `nav` as written; None: MkDocs lists every page but those `not_in_nav` names
    not_in_nav: str | None = None
    versioned: bool = False  # mike publishes the site's versions side by side (mkdocs_pages.uses_mike)


class _PlainTagLoader(yaml.SafeLoader):
    """YAML that takes every tag MkDocs' loader does not know as its plain value."""


def _plain_value(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    assert isinstance(node, yaml.MappingNode)
    return loader.construct_mapping(node, deep=True)


_PlainTagLoader.add_multi_constructor("", _plain_value)
_ConfigLoader = get_yaml_loader(loader=_PlainTagLoader)  # adds MkDocs' `!ENV`


def read_config(config_file: Path) -> SiteConfig:
    try:
        raw = yaml.load(config_file.read_text(encoding="utf-8-sig"), _ConfigLoader)
    except OSError as error:
        raise SiteError(f"cannot read {str(config_file)!r} ({error.strerror or error})") from None
    except yaml.YAMLError as error:
        raise SiteError(f"{str(config_file)!r} is not valid YAML ({' '.join(str(error).split())})") from None
    if not isinstance(raw, dict):
        raise SiteError(f"{str(config_file)!r} is not an MkDocs configuration (no keys at its top level)")
    base = config_file.resolve().parent
    docs = raw.get("docs_dir") or "docs"
    return SiteConfig(
        site_name=str(raw["site_name"]) if raw.get("site_name") is not None else None,
        site_url=raw.get("site_url") or None,
        site_description=str(raw["site_description"]) if raw.get("site_description") is not None else None,
        docs_dir=base / str(docs),
        use_directory_urls=raw.get("use_directory_urls", True) is not False,
        language=theme_language(raw.get("theme")),
        nav_titles=nav_titles(raw.get("nav")),
        options=plugin_options(plugin_entry(raw.get("plugins")), config_file),
        base=base,
        nav=raw.get("nav"),
        not_in_nav=raw["not_in_nav"] if isinstance(raw.get("not_in_nav"), str) else None,
        versioned=uses_mike(raw.get("extra"), raw.get("plugins")),
    )


def plugin_entry(plugins: Any) -> dict[str, Any]:
    """The options `plugins:` gives vault-mcp, in its list form or its mapping form; none when it is not named."""
    if isinstance(plugins, dict):
        return plugins.get("vault-mcp") or {}
    options: dict[str, Any] = {}
    for entry in plugins or []:
        if entry == "vault-mcp":
            options = {}
        elif isinstance(entry, dict) and "vault-mcp" in entry:
            options = entry["vault-mcp"] or {}
    return options


def theme_language(theme: Any) -> str:
    """Material's `theme.language`, MkDocs' `theme.locale`, else `en` (as i18n.theme_language reads a loaded config)."""
    if isinstance(theme, dict):
        language = theme.get("language") or theme.get("locale")
        if language:
            return str(language)
    return "en"


def nav_titles(nav: Any) -> dict[str, str]:
    """`- Quick start: getting-started/install.md` anywhere in `nav`: the title MkDocs gives that page."""
    titles: dict[str, str] = {}
    items = nav if isinstance(nav, list) else []
    for item in items:
        if isinstance(item, dict):
            for title, value in item.items():
                if isinstance(value, str) and not re.match(r"^[a-z][a-z0-9+.-]*:", value, re.I):
                    titles.setdefault(value.lstrip("/"), str(title))
                else:
                    titles.update({k: v for k, v in nav_titles(value).items() if k not in titles})
    return titles


def nav_pages(config: SiteConfig, pages: set[str]) -> set[str]:
    """The paths of the pages the nav lists, as MkDocs makes it: every path the `nav` config names (a URL or a
    folder there is a link, no page), else every page but those that `not_in_nav` names."""
    if config.nav is not None:
        named: list[str] = []

        def walk(item: Any) -> None:
            if isinstance(item, dict):
                for value in item.values():
                    walk(value)
            elif isinstance(item, list):
                for value in item:
                    walk(value)
            elif isinstance(item, str):
                named.append(PurePosixPath(item).as_posix())

        walk(config.nav)
        return set(named)
    if not config.not_in_nav:
        return set(pages)
    not_in_nav = PathSpec().run_validation(config.not_in_nav)
    return {page for page in pages if not not_in_nav.match_file(page)}
