"""The work one tool call may do, counted as the CPU time of the thread that answers it.

Counted in CPU time (`time.thread_time`), not wall-clock time, so that a call is judged by its own work: on a
busy server a call shares the CPUs with every other call, and time spent waiting for a CPU, or for a turn
behind other calls, is no work of its own. The SQL of a call checks its budget from SQLite's progress handler,
the Python work of a call (the conversion of a page to Markdown) calls `check()` as it goes.

A call that keeps working past `light_seconds` is a heavy one: it goes on only while it holds one of a few
heavy slots, and waits for one otherwise, so that heavy calls share some CPUs in turns and the light calls of
every other client (almost all of them) are never queued behind them. When as many heavy calls as the lanes
take already work or wait, one more is refused at once: its client learns so, rather than waiting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

_call = threading.local()


class OutOfTime(Exception):
    """The call used up its budget of work."""


class Busy(Exception):
    """The call turned heavy while the heavy lane was full (`Lanes.queued` calls already wait)."""


class Lanes:
    """The slots calls run in: `light` calls at once; of those that turn heavy, `heavy` at once, and at most
    `queued` more waiting for their turn."""

    def __init__(self, light: int, heavy: int, queued: int, light_seconds: float) -> None:
        self.light = threading.BoundedSemaphore(light)
        self.heavy = threading.BoundedSemaphore(heavy)
        self.heavy_limit = heavy + queued
        self.heavy_calls = 0  # working or waiting in the heavy lane
        self.light_seconds = light_seconds
        self._counting = threading.Lock()

    def enter_heavy(self) -> bool:
        """Take a place in the heavy lane (False when it is full) and wait for a turn."""
        with self._counting:
            if self.heavy_calls >= self.heavy_limit:
                return False
            self.heavy_calls += 1
        self.heavy.acquire()
        return True

    def leave_heavy(self) -> None:
        self.heavy.release()
        with self._counting:
            self.heavy_calls -= 1


class _State:
    __slots__ = ("deadline", "inline", "lane", "lanes", "light_until", "refused")

    def __init__(self, deadline: float, lanes: Lanes | None, light_until: float, inline: bool) -> None:
        self.deadline, self.lanes, self.light_until, self.inline = deadline, lanes, light_until, inline
        self.lane = "light" if lanes is not None else None
        self.refused = False


@contextmanager
def limited(seconds: float, lanes: Lanes | None = None, inline: bool = False) -> Iterator[None]:
    """Run the block as one call of `seconds` of CPU work on this thread; in a light slot of `lanes` (waiting for
    one first), and in a heavy one once it worked `lanes.light_seconds`. Raises Busy when the call was refused
    a place in the heavy lane (whatever the block raised then: SQLite's "interrupted"). `inline`: the call is
    tried on the event loop, where work that cannot check its budget must not run (`leave_event_loop`)."""
    if lanes is not None:
        lanes.light.acquire()
    start = time.thread_time()
    light_until = start + lanes.light_seconds if lanes is not None else float("inf")
    previous = getattr(_call, "state", None)
    _call.state = state = _State(start + seconds, lanes, light_until, inline)
    try:
        yield
    except Exception:
        if state.refused:
            raise Busy from None
        raise
    finally:
        _call.state = previous
        if lanes is not None and state.lane == "light":
            lanes.light.release()
        elif lanes is not None and state.lane == "heavy":
            lanes.leave_heavy()


def exhausted() -> bool:
    """Whether the current call must stop: it used up its budget, or was refused a place in the heavy lane (False
    outside a call). A call that turned heavy waits here for its turn first. For SQLite's progress handler,
    which may not raise."""
    state: _State | None = getattr(_call, "state", None)
    if state is None:
        return False
    now = time.thread_time()
    if now > state.light_until:
        _turn_heavy(state)
    return state.refused or now > state.deadline


def remaining() -> float:
    """Seconds of work the current call has left (all the time there is outside a call)."""
    state: _State | None = getattr(_call, "state", None)
    return float("inf") if state is None else max(0.0, state.deadline - time.thread_time())


def check() -> None:
    """Raise OutOfTime or Busy when the current call must stop (see `exhausted`)."""
    if exhausted():
        raise OutOfTime


def leave_event_loop() -> None:
    """Raise OutOfTime when the current call is tried on the event loop, before work that cannot check its budget
    as it goes (a model's inference): the call starts again on a worker thread."""
    state: _State | None = getattr(_call, "state", None)
    if state is not None and state.inline:
        raise OutOfTime


def turn_heavy() -> None:
    """Count the current call as a heavy one from now on, before it works that long: for work that cannot check
    its budget as it goes (parsing a large page), which leaves the event loop first."""
    leave_event_loop()
    state: _State | None = getattr(_call, "state", None)
    if state is not None:
        _turn_heavy(state)


def _turn_heavy(state: _State) -> None:
    state.light_until = float("inf")
    if state.lanes is None or state.lane != "light":
        return
    state.lanes.light.release()  # a light call waiting for a slot may have it now
    state.lane = None
    if state.lanes.enter_heavy():
        state.lane = "heavy"
    else:
        state.refused = True
