"""The plugin's options: a typed Config whose wrong values fail the build with MkDocs'
own configuration error naming the option, and where the working index may live."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml
from mkdocs.config import load_config
from mkdocs.exceptions import Abort

from mkdocs_vault_mcp.config import VaultMcpConfig

WRONG = [
    ("enabled", "yes"),
    ("indexed_fields", 3),
    ("indexed_fields", "tags"),
    ("indexed_fields", ["tags", ""]),
    ("tag_fields", "tags"),
    ("modified", "sometimes"),
    ("modified_meta", 5),
    ("exclude", "drafts/*"),
    ("exclude", [1]),
    ("respect_search_exclude", "no"),
    ("include_generated", 1),
    ("cache_dir", 5),
    ("cache_dir", ""),
    ("publish_index", "x"),
    ("llms_txt", "x"),
    ("llms_full_txt", 10),
    ("llms_full_txt", "big"),
    ("markdown_copies", "x"),
    ("discovery", "x"),
    ("hosted_mcp_url", "mcp"),
    ("hosted_mcp_url", "https://docs.example.com/my mcp"),
    ("hosted_mcp_url", 5),
    ("stats_page", 5),
    ("stats_page", "../outside/"),
    ("stats_page_in_nav", "x"),
    ("serve_mcp", "x"),
    ("mcp_host", 5),
    ("mcp_port", 0),
    ("mcp_port", 70000),
    ("mcp_port", True),
    ("mcp_path", "mcp"),
    ("mcp_allowed_hosts", "localhost"),
    ("wait_timeout", -1),
    ("wait_timeout", "long"),
]


def config_errors(tmp_path: Path, options: dict, caplog) -> list[str]:
    """Load a mkdocs.yml with these plugin options; return the errors MkDocs logged (and assert it aborted)."""
    (tmp_path / "docs").mkdir(exist_ok=True)
    config_file = tmp_path / "mkdocs.yml"
    config_file.write_text(yaml.safe_dump({"site_name": "x", "plugins": [{"vault-mcp": options}]}), encoding="utf-8")
    caplog.clear()
    with caplog.at_level(logging.ERROR, logger="mkdocs"), pytest.raises(Abort, match="configuration error"):
        load_config(config_file=str(config_file))
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("option, value", WRONG, ids=[f"{o}={v!r}" for o, v in WRONG])
def test_a_wrong_value_is_mkdocs_own_config_error_naming_the_option(tmp_path, caplog, option, value):
    errors = config_errors(tmp_path, {option: value}, caplog)
    assert len(errors) == 1, errors
    assert f"Plugin 'vault-mcp' option '{option}'" in errors[0]
    assert "expected" in errors[0].lower(), errors[0]  # and says what is accepted


def test_the_messages_say_what_is_accepted(tmp_path, caplog):
    assert (
        "expected 'auto' or a list of front matter keys, got 3"
        in config_errors(tmp_path, {"indexed_fields": 3}, caplog)[0]
    )
    assert "('auto', 'git', 'mtime')" in config_errors(tmp_path, {"modified": "sometimes"}, caplog)[0]
    assert "from 1 to 65535, got 0" in config_errors(tmp_path, {"mcp_port": 0}, caplog)[0]
    assert "such as 'stats/'" in config_errors(tmp_path, {"stats_page": 5}, caplog)[0]
    assert (
        "such as 'https://docs.example.com/mcp' or '/mcp'"
        in config_errors(tmp_path, {"hosted_mcp_url": "mcp"}, caplog)[0]
    )
    assert (
        "a number of characters of at least 1000, got 10" in config_errors(tmp_path, {"llms_full_txt": 10}, caplog)[0]
    )


def test_a_wrong_value_fails_the_build(site, caplog):
    site.write("index.md", "# Home\n")
    site.config = {"plugins": [{"vault-mcp": {"modified": "sometimes"}}]}
    with caplog.at_level(logging.ERROR, logger="mkdocs"), pytest.raises(Abort):
        site.build()
    assert not site.index_path.exists()


def test_every_option_has_its_documented_default_and_type(tmp_path):
    (tmp_path / "docs").mkdir()
    config_file = tmp_path / "mkdocs.yml"
    config_file.write_text("site_name: x\nplugins:\n  - vault-mcp\n", encoding="utf-8")
    options = load_config(config_file=str(config_file)).plugins["vault-mcp"].config
    assert isinstance(options, VaultMcpConfig)
    assert {
        key: options[key]
        for key in (
            "enabled",
            "indexed_fields",
            "tag_fields",
            "modified",
            "modified_meta",
            "exclude",
            "respect_search_exclude",
            "include_generated",
            "cache_dir",
            "publish_index",
            "llms_txt",
            "llms_full_txt",
            "markdown_copies",
            "discovery",
            "hosted_mcp_url",
        )
    } == {
        "enabled": True,
        "indexed_fields": "auto",
        "tag_fields": ["tags", "categories"],
        "modified": "auto",
        "modified_meta": None,
        "exclude": [],
        "respect_search_exclude": True,
        "include_generated": False,
        "cache_dir": ".cache/plugin/vault-mcp",
        "publish_index": True,
        "llms_txt": True,
        "llms_full_txt": 0,  # off
        "markdown_copies": True,
        "discovery": True,
        "hosted_mcp_url": None,
    }


def test_good_values_are_accepted_as_given(tmp_path):
    (tmp_path / "docs").mkdir()
    config_file = tmp_path / "mkdocs.yml"
    given = {
        "indexed_fields": ["tags", "status", "tags"],
        "modified": "mtime",
        "modified_meta": "updated",
        "exclude": ["drafts/*", "*.private.md"],
        "stats_page": False,
        "mcp_port": 9000,
        "wait_timeout": 0.5,
    }
    config_file.write_text(yaml.safe_dump({"site_name": "x", "plugins": [{"vault-mcp": given}]}), encoding="utf-8")
    options = load_config(config_file=str(config_file)).plugins["vault-mcp"].config
    assert options.indexed_fields == ["tags", "status"]  # duplicates dropped, order kept
    assert (options.modified, options.modified_meta, options.exclude) == ("mtime", "updated", given["exclude"])
    assert (options.stats_page, options.mcp_port, options.wait_timeout) == (False, 9000, 0.5)


def test_an_unknown_option_is_mkdocs_own_warning_and_fails_a_strict_build(site):
    site.write("index.md", "# Home\n")
    site.config = {"plugins": [{"vault-mcp": {"indexed_feilds": ["tags"]}}]}
    with pytest.raises(Abort):
        site.build(strict=True)
    assert any("option 'indexed_feilds': Unrecognised configuration name" in m for m in site.messages(logging.WARNING))


def test_the_working_index_lives_beside_mkdocs_yml_by_default(site):
    site.write("index.md", "# Home\n")
    site.build()
    assert (site.root / ".cache" / "plugin" / "vault-mcp" / "build.sqlite").is_file()
    assert not list(site.docs.rglob("*.sqlite"))


def test_cache_dir_may_point_anywhere_outside_docs_and_site(site, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("cache") / "index-cache"
    site.write("index.md", "# Home\n")
    site.config = {"plugins": [{"vault-mcp": {"cache_dir": str(elsewhere)}}]}
    site.build()
    assert (elsewhere / "build.sqlite").is_file()
    assert not (site.root / ".cache").exists()
    assert set(site.documents()) == {"index.md"}


@pytest.mark.parametrize("inside", ["docs/.cache", "site/cache"])
def test_cache_dir_inside_docs_dir_or_site_dir_fails_the_build(site, inside, caplog):
    site.write("index.md", "# Home\n")
    site.config = {"plugins": [{"vault-mcp": {"cache_dir": inside}}]}
    with caplog.at_level(logging.ERROR, logger="mkdocs"), pytest.raises(Abort):
        site.build()
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any("Plugin 'vault-mcp' option 'cache_dir'" in e and "outside docs_dir and site_dir" in e for e in errors)


def test_enabled_false_leaves_the_site_as_mkdocs_builds_it(site):
    site.write("index.md", "# Home\n")
    site.config = {"plugins": [{"vault-mcp": {"enabled": False}}]}
    site.build()
    assert not (site.site_dir / "vault-mcp").exists()
    assert not (site.site_dir / "stats").exists()
    assert not (site.root / ".cache").exists()
    assert site.messages(logging.INFO, "vault-mcp") == []
