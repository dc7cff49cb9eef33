"""The plugin's options, as MkDocs validates them."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

from mkdocs.config import base
from mkdocs.config import config_options as c

# The options that decide what goes into the index: when one changes, every page is indexed again.
INDEXING_OPTIONS = (
    "indexed_fields",
    "modified",
    "modified_meta",
    "exclude",
    "respect_search_exclude",
    "include_generated",
)


class AutoOrNames(base.BaseConfigOption[str | list[str]]):
    """`auto`, or a list of front matter keys."""

    def __init__(self, default: str = "auto") -> None:
        super().__init__()
        self.default = default

    def run_validation(self, value: Any) -> str | list[str]:
        if value == "auto":
            return "auto"
        if isinstance(value, list) and all(isinstance(item, str) and item for item in value):
            return list(dict.fromkeys(value))
        raise base.ValidationError(f"expected 'auto' or a list of front matter keys, got {value!r}")


class PathOrOff(base.BaseConfigOption[str | Literal[False]]):
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
    """A TCP port, 1 to 65535."""

    def __init__(self, default: int) -> None:
        super().__init__(int, default=default)

    def run_validation(self, value: object) -> int:
        if isinstance(value, bool):  # YAML `true` is an int to Python
            raise base.ValidationError(f"expected a TCP port from 1 to 65535, got {value!r}")
        port = super().run_validation(value)
        if not 1 <= port <= 65535:
            raise base.ValidationError(f"expected a TCP port from 1 to 65535, got {port}")
        return port


class Seconds(base.BaseConfigOption[float]):
    """A number of seconds, 0 or more."""

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


class ModelOrOff(base.BaseConfigOption[str | bool]):
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


class CharsOrOff(base.BaseConfigOption[int]):
    """`false`, `true` (1,000,000 characters) or a number of characters (1000 or more)."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.default = False
        self.limit = limit

    def run_validation(self, value: Any) -> int:
        if value is False or value is None:
            return 0
        if value is True:
            return self.limit
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1000:
            return value
        raise base.ValidationError(f"expected true, false or a number of characters of at least 1000, got {value!r}")


class McpUrl(base.BaseConfigOption[str | None]):
    """An http(s) URL or a path on the site's host such as `/mcp`, or `null`."""

    def run_validation(self, value: Any) -> str | None:
        if value is None:
            return None
        if isinstance(value, str) and re.match(r"^(/|https?://[^/\s]+)\S*$", value):
            return value
        raise base.ValidationError(
            f"expected the URL of the site's hosted MCP endpoint, such as 'https://docs.example.com/mcp' or '/mcp', "
            f"got {value!r}"
        )


# A model hub name: "name" or "owner/name" (index/search/embedding.py tells them from folders alike).
_HUB_NAME = re.compile(r"[\w.-]+(/[\w.-]+)?")


def semantic_model(value: str | Literal[True], config_folder: Path) -> str:
    """The option `semantic`, when on, as the build hands it to the writer: a folder's absolute path (relative to
    mkdocs.yml when given relative; the index records it by name and digest, not by where it was), or a model
    hub name. A value that names no folder and is no hub name is a folder too, so that its absence is reported as
    a missing folder. Here rather than in index/search/semantic.py, which a build's own process never imports."""
    if value is True:
        return DEFAULT_MODEL
    folder = config_folder / Path(value).expanduser()
    # "models/minilm" beside a `models` folder is a folder, even one not there: its absence is what to report.
    is_folder = folder.is_dir() or not _HUB_NAME.fullmatch(value) or ("/" in value and folder.parent.is_dir())
    return os.path.abspath(folder) if is_folder else value


# MkDocs' Config.__init_subclass__ (which gathers the options below) has no annotations.
class VaultMcpConfig(base.Config):  # type: ignore[no-untyped-call, unused-ignore]
    enabled = c.Type(bool, default=True)
    """Whether the plugin does anything. With `false` a build indexes nothing and writes no index, snapshot or
    stats page, and `mkdocs serve` starts no MCP server; a site built that way can still be indexed later with
    `mkdocs-vault-mcp index SITE_DIR --config mkdocs.yml`, which reads the other options from this entry.

    Example: false
    """

    # What is indexed.
    indexed_fields = AutoOrNames(default="auto")
    """Which front matter keys the tools' `filters` and `aggregate_documents(by="tag")` accept. `auto`: every
    top-level key that holds a non-null scalar or a non-empty list of scalars on some page. A list names the
    keys; a listed key that no page holds is still a field (filters on it match nothing rather than fail).
    Values are compared as strings: `true`/`false`, numbers as JSON writes them, dates `YYYY-MM-DD`.

    Example: [tags, status, audience]
    """

    tag_fields = c.ListOfItems(c.Type(str), default=["tags", "categories"])
    """The front matter fields that `snapshot.json` (`by_tag`) and the stats page group pages by, in this
    order; a field that is not indexed on the site is left out.

    Example: [tags, audience]
    """

    modified = c.Choice(("auto", "git", "mtime"), default="auto")
    """Where a page's modification time comes from. `auto`: the git author time of the newest commit of a file
    tracked by git with no uncommitted change, else the file's mtime. `git`: the git author time whenever the
    file has one. `mtime`: the file's mtime, and git is not read (pages then have no `history`). The history is
    read in one pass and agrees with `git log -1 --format=%at -- FILE`, merges included.

    Example: mtime
    """

    modified_meta = c.Optional(c.Type(str))
    """A front matter key whose date or datetime wins over git and the file's time when a page has it. A date
    is midnight UTC; a datetime without a time zone is taken as UTC. `null`: no key.

    Example: updated
    """

    exclude = c.ListOfItems(c.Type(str), default=[])
    """Globs over the page path (`guide/install.md`) that leave pages out of the index, matched
    case-sensitively; `*` crosses `/`. MkDocs' own `exclude_docs` and drafts are left out anyway.

    Example: ["drafts/*", "*/_*.md"]
    """

    respect_search_exclude = c.Type(bool, default=True)
    """Leave out the pages whose front matter says `search: {exclude: true}` (Material's convention), as the
    site's own search does. `false` indexes them.

    Example: false
    """

    include_generated = c.Type(bool, default=False)
    """Index the pages that plugins generate (blog archives and category pages, tag indexes). This plugin's own
    stats page is never a document.

    Example: true
    """

    semantic = ModelOrOff()
    """Search by meaning too (`pip install 'mkdocs-vault-mcp[semantic]'`): the build stores a vector of each
    section, made off the build's thread and cached by text, and `search` fuses the nearest sections in meaning
    with the keyword ranking. `false`: keywords only. `true`: the default model, all-MiniLM-L6-v2, downloaded
    from the model hub on first use. Or a model name on the hub, or a folder (relative to mkdocs.yml) that holds
    `model.onnx` and `tokenizer.json`. A server without the model answers by keywords and says so in `_meta`.

    Example: true
    """

    # Where it goes.
    cache_dir = NonEmptyText(".cache/plugin/vault-mcp", "a directory, relative to mkdocs.yml or absolute")
    """Where the working index lives, relative to `mkdocs.yml`: `build.sqlite` for `mkdocs build` and
    `serve.sqlite` for `mkdocs serve` (so drafts never reach a build), and the git history read last. Keep it
    between builds (CI too) and a build indexes only the pages that changed; add `.cache/` to `.gitignore`. It
    may not lie inside `docs_dir` or `site_dir`.

    Example: .cache/vault-mcp
    """

    publish_index = c.Type(bool, default=True)
    """Write the index into the built site as `vault-mcp/index.sqlite`, so that `mkdocs-vault-mcp serve
    SITE_DIR` can serve a built or deployed site. `false` leaves it out (the snapshot and the stats page are
    still written).

    Example: false
    """

    stats_page = PathOrOff(default="stats/")
    """Where the stats page goes: `stats/` gives `stats/index.md` (URL `stats/`), `reports/site-stats.md` is
    used as given, `stats` gives `stats.md`; `false` turns the page off. A page of the site with that path wins,
    with one warning.

    Example: reports/site-stats.md
    """

    stats_page_in_nav = c.Type(bool, default=False)
    """Append the stats page to the navigation as its last top-level entry. A `nav:` that already lists it
    keeps it where it is.

    Example: true
    """

    # Files for agents that have no MCP client, and discovery.
    llms_txt = c.Type(bool, default=True)
    """Write `llms.txt` at the site's root (one per language, at each language's root), in llmstxt.org's format:
    the site's name and description, then the pages grouped as the navigation groups them, each a link to its
    Markdown copy with its one-line description. One line per page, so small. `false` leaves it out.

    Example: false
    """

    llms_full_txt = CharsOrOff(limit=1_000_000)
    """Also write `llms-full.txt` beside `llms.txt`: every page's Markdown copy, in navigation order. `true` limits
    it to 1,000,000 characters, a number sets another limit; pages beyond it are left out and listed at its end.
    Off by default: it holds the whole site's text.

    Example: 400000
    """

    markdown_copies = c.Type(bool, default=True)
    """Write a Markdown copy of each page beside its HTML (`guide/setup/index.md` beside
    `guide/setup/index.html`), with its title, URL and modification time at the top: the same text that the
    `read` tool answers. Drafts and pages left out of the index get none. `false` leaves them out.

    Example: false
    """

    discovery = c.Type(bool, default=True)
    """Write the discovery file `.well-known/ai-catalog.json` (an AI Catalog holding the site's MCP Server Card,
    SEP-2127), which names the published index and `hosted_mcp_url`. It needs `site_url`. `false` leaves it out.

    Example: false
    """

    hosted_mcp_url = McpUrl()
    """The URL of the site's hosted MCP endpoint (see Hosting /mcp beside your site), for the discovery file: an
    absolute URL, or a path on the site's host. `null`: the site hosts none.

    Example: /mcp
    """

    site_version = c.Optional(c.Type(str))
    """The version this build is published as, recorded in the index, snapshot.json and the stats page. Unset:
    the version `mike deploy` builds (its `MIKE_DOCS_VERSION`), else none. Set it when another tool publishes
    one site per version.

    Example: "2.0"
    """

    # The live MCP server beside `mkdocs serve`.
    serve_mcp = c.Type(bool, default=True)
    """Serve the MCP tools over Streamable HTTP while `mkdocs serve` runs, answering from the index as each
    rebuild updates it. `mkdocs build` never starts a server.

    Example: false
    """

    mcp_host = c.Type(str, default="127.0.0.1")
    """The address the live MCP server listens on. Beyond loopback (`0.0.0.0`) your docs are open to your
    network: MkDocs warns, and clients must call the server by a name in `mcp_allowed_hosts`.

    Example: 0.0.0.0
    """

    mcp_port = Port(default=8765)
    """The port of the live MCP server. When it is taken, or is `mkdocs serve`'s own port, MkDocs warns and
    serves the site without MCP.

    Example: 8766
    """

    mcp_path = NonEmptyText("/mcp", "a URL path that starts with '/', such as '/mcp'", prefix="/")
    """The URL path of the live MCP endpoint.

    Example: /docs-mcp
    """

    mcp_allowed_hosts = c.ListOfItems(c.Type(str), default=[])
    """Host names (`NAME` or `NAME:PORT`) the live server accepts in `Host` and `Origin` besides loopback
    names, for a server bound beyond loopback. Any other host gets 421, which keeps web pages out by DNS
    rebinding.

    Example: [docs.internal, "docs.internal:8765"]
    """

    mcp_token_env = c.Optional(c.Type(str))  # the environment variable that holds the bearer token
    """The name of an environment variable that holds a bearer token: clients must then send
    `Authorization: Bearer <token>`, others get 401. The token itself is never in `mkdocs.yml`, on a command line
    or in a log; when the variable is not set, MkDocs warns and serves the site without MCP.

    Example: DOCS_MCP_TOKEN
    """

    mcp_stateful_sessions = c.Type(bool, default=False)  # MCP sessions kept between requests (capped, expiring)
    """Keep MCP sessions between requests, for a client that insists on one. By default every request stands
    alone (stateless), so an abandoned client costs nothing. Kept sessions end after 10 minutes idle, and at
    1,000 live sessions the one idle longest makes room for a new client.

    Example: true
    """

    wait_timeout = Seconds(default=30)
    """How long, in seconds, a call with `wait_for_pending_writes: true` waits for a rebuild under `mkdocs
    serve` before it answers from the current index with `index_stale: true`.

    Example: 10
    """
