"""Whether an index update is pending, shared between the build (writer) and the MCP tools (readers).

A change to the docs that MkDocs has not rebuilt yet is pending ("queued"),
and so is a rebuild that is running. Readers take a token before they read
and ask afterwards whether anything was pending or landed meanwhile.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class ReadToken:
    generation: int
    pending: bool


class Freshness:
    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._building = False
        self._build_started = 0.0
        self._changed_at: float | None = None  # the earliest change not yet rebuilt
        self._generation = 0

    @property
    def pending(self) -> bool:
        return self._building or self._changed_at is not None

    def change_seen(self) -> None:
        with self._condition:
            if self._changed_at is None:
                self._changed_at = time.monotonic()

    def build_started(self) -> None:
        with self._condition:
            self._building = True
            self._build_started = time.monotonic()

    def build_finished(self) -> None:
        """The build committed (or gave up); changes seen after it started stay pending."""
        with self._condition:
            self._building = False
            if self._changed_at is not None and self._changed_at <= self._build_started:
                self._changed_at = None
            self._generation += 1
            self._condition.notify_all()

    def wait(self, timeout: float) -> bool:
        """Wait until nothing is pending; False when the timeout ran out first."""
        with self._condition:
            return self._condition.wait_for(lambda: not self.pending, timeout)

    def begin_read(self) -> ReadToken:
        with self._condition:
            return ReadToken(self._generation, self.pending)

    def is_stale(self, token: ReadToken) -> bool:
        with self._condition:
            return token.pending or self.pending or self._generation != token.generation
