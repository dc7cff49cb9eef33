"""Whether an index update is pending, shared between the build (writer) and the MCP tools (readers).

Under `mkdocs serve` an update is pending from the moment a watched file is saved
until the rebuild that picks the change up has committed the index:

    saved --(MkDocs polls, waits for quiet)-- build started -- index committed -- build ended
    |------------------------------ pending ----------------------|

A change seen while a build runs is left for the next build, which MkDocs starts
as soon as the current one ends. A change that never causes a build (MkDocs failed
to load its config, say) stops counting once `settle` seconds have passed without
a build starting, so one stray file event cannot keep every answer stale.

File events reach `change_seen` from the watcher's threads, which may lag behind a
save by tens of milliseconds while a build holds the GIL. A reader that waits
therefore first asks `probe` (the watched files' change times) whether anything
changed that neither a build nor an event has accounted for yet.

Readers take a token before they read and ask afterwards whether anything was
pending or landed meanwhile.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import NamedTuple

# Longer than MkDocs' polling and its wait for quiet before a rebuild, with slack for loading the config and
# the plugins of a large site before our on_config marks the build.
DEFAULT_SETTLE_SECONDS = 3.0


class ReadToken(NamedTuple):
    generation: int
    pending: bool


class Freshness:
    def __init__(self, settle: float = DEFAULT_SETTLE_SECONDS) -> None:
        self.settle = settle
        # Given a wall-clock instant (ns), whether a watched file changed after it; None: no watcher.
        self.probe: Callable[[int], bool] | None = None
        self._condition = threading.Condition()
        self._build_uncommitted = False  # a build started and has not committed the index yet
        self._building = False  # MkDocs is inside a build (it starts no other until this one ends)
        self._build_started = 0.0
        self._idle_since = time.monotonic()
        self._change_waiting = False  # a change no build has picked up yet
        self._last_change = 0.0
        self._accounted_until_ns = 0  # changes up to this wall-clock instant are in a build or seen as events
        self._generation = 0
        self._closed = False
        self._waiting = 0  # calls inside `wait`

    # -- writer side --------------------------------------------------------------------------

    def change_seen(self) -> None:
        """A watched file was saved: MkDocs will rebuild."""
        with self._condition:
            self._change_waiting = True
            self._last_change = time.monotonic()
            self._accounted_until_ns = max(self._accounted_until_ns, time.time_ns())
            self._condition.notify_all()

    def build_started(self) -> None:
        with self._condition:
            self._build_uncommitted = self._building = True
            self._build_started = time.monotonic()
            # The build reads the files after this point, so it holds every change made before it.
            self._accounted_until_ns = max(self._accounted_until_ns, time.time_ns())

    def index_committed(self) -> None:
        """The build's pages are in the index; changes seen after the build started stay pending."""
        with self._condition:
            self._finish_update()

    def build_ended(self) -> None:
        """MkDocs finished the build, or gave it up; either way nothing more comes from this build."""
        with self._condition:
            if self._build_uncommitted:
                self._finish_update()
            self._building = False
            self._idle_since = time.monotonic()
            self._condition.notify_all()

    def _finish_update(self) -> None:
        """The build's pages reach readers: a token taken before now is stale; the caller holds the condition."""
        self._build_uncommitted = False
        if self._last_change <= self._build_started:
            self._change_waiting = False
        self._generation += 1
        self._condition.notify_all()

    def close(self) -> None:
        """The server is stopping: waits, those in progress too, give up at once (and answer stale)."""
        with self._condition:
            self._closed = True
            self._condition.notify_all()

    # -- reader side --------------------------------------------------------------------------

    @property
    def waiting_calls(self) -> int:
        """How many calls are inside `wait` now."""
        with self._condition:
            return self._waiting

    @property
    def pending(self) -> bool:
        with self._condition:
            return self._is_pending()

    def _is_pending(self) -> bool:
        """Whether an update is pending now; the caller holds the condition."""
        return self._pending_seconds(time.monotonic()) > 0

    def _pending_seconds(self, now: float) -> float:
        """0 when nothing is pending; else how long it may stay pending without news (inf: until news)."""
        if self._build_uncommitted or (self._change_waiting and self._building):
            return float("inf")
        if not self._change_waiting:
            return 0.0
        left = max(self._last_change, self._idle_since) + self.settle - now
        if left <= 0:
            self._change_waiting = False  # no build came for it: MkDocs did not take it for a change
            return 0.0
        return left

    @property
    def may_be_pending(self) -> bool:
        """Whether `wait` has anything to do: an update is pending, or a watcher's files may hold a save
        whose event has not arrived (`wait` then looks at them, which blocks: call it off the event loop)."""
        with self._condition:
            return self.probe is not None or self._is_pending()

    def wait(self, timeout: float) -> bool:
        """Wait until nothing is pending; False when the timeout ran out first (or the server is closing)."""
        deadline = time.monotonic() + timeout
        self.catch_up_with_saves()
        with self._condition:
            self._waiting += 1
            try:
                while True:
                    now = time.monotonic()
                    left = self._pending_seconds(now)
                    if left == 0:
                        return True
                    if now >= deadline or self._closed:
                        return False
                    self._condition.wait(min(left, deadline - now))
            finally:
                self._waiting -= 1

    def catch_up_with_saves(self) -> bool:
        """A save whose file event has not arrived yet is pending too: ask the files themselves.

        True when they hold a save that no build and no event had accounted for.
        """
        with self._condition:
            if self.probe is None or self._accounted_until_ns == 0 or self._is_pending():
                return False  # no watcher, no build yet to compare with, or waiting already
            since = self._accounted_until_ns
        if self.probe(since):
            self.change_seen()
            return True
        return False

    def begin_read(self) -> ReadToken:
        with self._condition:
            return ReadToken(self._generation, self._is_pending())

    def is_stale(self, token: ReadToken) -> bool:
        with self._condition:
            return token.pending or self._generation != token.generation or self._is_pending()
