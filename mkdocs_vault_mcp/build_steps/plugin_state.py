"""The plugin's state of one build (plugin.py keeps one, made anew in every on_config): what the build has seen so
far, and the `IndexingPlan` on_config makes, whole, for a build that indexes."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mkdocs.exceptions import PluginError
from mkdocs.structure.pages import Page

from ..index.write.writer import CommitWaiter
from .mkdocs_pages import PageOptions
from .modified import GitTimes, GitTimesRead

if TYPE_CHECKING:
    from ..index.write.build_summary import BuildSummary


@dataclass(frozen=True)
class IndexingPlan:
    """What on_config decides for a build that indexes, all of it at once: none of it when the build does not."""

    working_index: Path  # where this build indexes to
    options_json: str  # the options that decide what goes into the index
    page_options: PageOptions  # what every page asks of the plugin's options
    semantic: dict[str, str] | None  # the model and cache file of section vectors, when the option is on


class BuildState:
    """What one build has seen so far; made anew in every on_config."""

    def __init__(self) -> None:
        self.plugin_seconds = 0.0
        self.git_read: GitTimesRead | None = None  # started in on_config, waited for by the first page's dates
        # Rendered pages (and their HTML) to index once git is done and the writer has opened the index
        self.waiting: list[tuple[Page, str]] = []
        self.authored_keys: dict[str, set[str]] = {}  # path -> the front matter keys the author wrote
        self.nav: set[str] | None = None  # the paths of the pages the nav lists (on_nav)
        self.plan: IndexingPlan | None = None  # set by on_config when the plugin is enabled
        self.fault: PluginError | None = None  # the working index failed while pages rendered: on_env says so
        self.committed: CommitWaiter | None = None  # waits for the commit on_env asked for
        self.answers: BuildSummary | None = None  # read from the committed index by the writer, with the commit

    @property
    def git(self) -> GitTimes | None:
        return self.git_read.result() if self.git_read is not None else None

    @contextlib.contextmanager
    def timed(self) -> Iterator[None]:
        """Count the time spent in this plugin, for the closing log line."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.plugin_seconds += time.perf_counter() - start
