"""The plugin's options, as MkDocs validates them."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from mkdocs.config import base
from mkdocs.config import config_options as c


class AutoOrNames(c.BaseConfigOption[str | list]):
    """`auto`, or a list of front matter keys."""

    def __init__(self, default: str = "auto") -> None:
        super().__init__()
        self.default = default

    def run_validation(self, value: Any) -> str | list[str]:
        if value == "auto":
            return value
        if isinstance(value, list) and all(isinstance(item, str) and item for item in value):
            return list(dict.fromkeys(value))
        raise base.ValidationError(f"expected 'auto' or a list of front matter keys, got {value!r}")


class PathOrOff(c.BaseConfigOption[str | Literal[False]]):
    """A site path such as `stats/`, or `false` to turn the feature off."""

    def __init__(self, default: str) -> None:
        super().__init__()
        self.default = default

    def run_validation(self, value: Any) -> str | Literal[False]:
        if value is False:
            return False
        if isinstance(value, str) and value.strip("/") and ".." not in value.split("/"):
            return value
        raise base.ValidationError(
            f"expected a path inside the site such as 'stats/' or 'stats.md', or false, got {value!r}"
        )


class Port(c.Type[int]):
    def __init__(self, default: int) -> None:
        super().__init__(int, default=default)

    def run_validation(self, value: object) -> int:
        if isinstance(value, bool):  # YAML `true` is an int to Python
            raise base.ValidationError(f"expected a TCP port from 1 to 65535, got {value!r}")
        port = super().run_validation(value)
        if not 1 <= port <= 65535:
            raise base.ValidationError(f"expected a TCP port from 1 to 65535, got {port}")
        return port


class Seconds(c.BaseConfigOption[float]):
    def __init__(self, default: float) -> None:
        super().__init__()
        self.default = default

    def run_validation(self, value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
            raise base.ValidationError(f"expected a number of seconds, 0 or more, got {value!r}")
        return value


class NonEmptyText(c.Type[str]):
    """A string with something in it; `hint` says what a good one looks like."""

    def __init__(self, default: str, hint: str, prefix: str = "") -> None:
        super().__init__(str, default=default)
        self.hint, self.prefix = hint, prefix

    def run_validation(self, value: object) -> str:
        if not isinstance(value, str) or not value.strip() or not value.startswith(self.prefix):
            raise base.ValidationError(f"expected {self.hint}, got {value!r}")
        return value


class ModelOrOff(c.BaseConfigOption[str | bool]):
    """`false`, `true` (the default model), or a sentence-embedding model: a name on the model hub or a folder."""

    def __init__(self) -> None:
        super().__init__()
        self.default = False

    def run_validation(self, value: Any) -> str | bool:
        if isinstance(value, bool) or (isinstance(value, str) and value.strip()):
            return value
        raise base.ValidationError(
            "expected false, true, a model name such as 'sentence-transformers/all-MiniLM-L6-v2', or a folder "
            f"holding model.onnx and tokenizer.json, got {value!r}"
        )


DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def semantic_model(value: str | Literal[True], config_folder: Path) -> str:
    """The option `semantic`, when on, as the index records it: a folder's absolute path, or a model name.
    Here rather than in index/semantic.py, which a build's own process never imports."""
    if value is True:
        return DEFAULT_MODEL
    folder = config_folder / value
    return str(folder.resolve()) if folder.is_dir() else value


class VaultMcpConfig(base.Config):
    enabled = c.Type(bool, default=True)

    # What is indexed.
    indexed_fields = AutoOrNames(default="auto")
    tag_fields = c.ListOfItems(c.Type(str), default=["tags", "categories"])
    modified = c.Choice(("auto", "git", "mtime"), default="auto")
    modified_meta = c.Optional(c.Type(str))
    exclude = c.ListOfItems(c.Type(str), default=[])
    respect_search_exclude = c.Type(bool, default=True)
    include_generated = c.Type(bool, default=False)
    semantic = ModelOrOff()  # search by meaning too: section vectors from this model (index/semantic.py)

    # Where it goes.
    cache_dir = NonEmptyText(".cache/plugin/vault-mcp", "a directory, relative to mkdocs.yml or absolute")
    publish_index = c.Type(bool, default=True)
    stats_page = PathOrOff(default="stats/")
    stats_page_in_nav = c.Type(bool, default=False)

    # The live MCP server beside `mkdocs serve`.
    serve_mcp = c.Type(bool, default=True)
    mcp_host = c.Type(str, default="127.0.0.1")
    mcp_port = Port(default=8765)
    mcp_path = NonEmptyText("/mcp", "a URL path that starts with '/', such as '/mcp'", prefix="/")
    mcp_allowed_hosts = c.ListOfItems(c.Type(str), default=[])
    mcp_token_env = c.Optional(c.Type(str))  # the environment variable that holds the bearer token
    mcp_stateful_sessions = c.Type(bool, default=False)  # MCP sessions kept between requests (capped, expiring)
    wait_timeout = Seconds(default=30)
