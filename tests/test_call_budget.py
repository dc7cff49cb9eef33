"""The work one call may do is its own CPU time, not the time it waited behind others: many long calls at once all
answer (or are refused at once past a queue), and a light call sent meanwhile is answered without waiting for
them. Real servers in processes of their own, over loopback."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from helpers.served import EVERY_PREFIX, call, message, random_pages, server_process
from helpers.site import Site, built_site
from mkdocs_vault_mcp.mcp.server import HEAVY_CALLS

HEAVY = 16  # long calls sent at once
BURST_SECONDS = 0.5  # for the long calls to arrive (all of them take longer than this)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    config = {"plugins": [{"vault-mcp": {"stats_page": False}}]}
    return built_site(tmp_path_factory.mktemp("budget"), config, random_pages(40, lede="A lighthouse keeper."))


class Calls:
    """What happened, in order, to the long calls of one test and to the light ones sent meanwhile; no clock: the
    tests check which call was answered before which, the same on any machine."""

    def __init__(self) -> None:
        self.events: list[str] = []  # "long answered", "long refused", "light answered", in the order they happened
        self.lock = threading.Lock()
        self.long_sent_after: list[int] = []  # for each long call, how many long ones were answered before it left
        self.long_answers_while_light_waited: list[int] = []

    def record(self, event: str) -> None:
        with self.lock:
            self.events.append(event)

    def long_answers(self) -> int:
        with self.lock:
            return sum(event.startswith("long") for event in self.events)


def heavy_search(port: int, done: threading.Semaphore, calls: Calls | None = None) -> tuple[dict[str, Any], float]:
    if calls is not None:
        calls.long_sent_after.append(calls.long_answers())
    start = time.perf_counter()
    try:
        result = call(port, "search", query=EVERY_PREFIX, limit=100, sections_per_page=10)
    finally:
        done.release()
    if calls is not None:
        calls.record("long refused" if result.get("isError") else "long answered")
    return result, time.perf_counter() - start


def light_calls_while(
    port: int, running: threading.Event, done: threading.Semaphore, refused: int, calls: Calls
) -> None:
    """Light searches (one word) sent one after another while `running` is set, from once the long calls have
    arrived (the server reads a burst of requests on its event loop before anything else) and the `refused` of them
    have been (each works a moment first, to be known as long); for each, how many long calls were answered while
    it waited."""
    time.sleep(BURST_SECONDS)
    for _ in range(refused):
        done.acquire()
    while running.is_set():
        before = calls.long_answers()
        result = call(port, "search", query="lighthouse", limit=3)
        calls.long_answers_while_light_waited.append(calls.long_answers() - before)
        calls.record("light answered")
        assert not result.get("isError"), message(result)
        assert result["structuredContent"]["result"], result
        time.sleep(0.05)


def long_calls_with_light_ones_between(
    port: int, queued_calls: int | None = None
) -> tuple[list[dict[str, Any]], Calls]:
    running = threading.Event()
    running.set()
    done = threading.Semaphore(0)
    refused = 0 if queued_calls is None else HEAVY - HEAVY_CALLS - queued_calls
    calls = Calls()
    with ThreadPoolExecutor(HEAVY + 1) as pool:
        heavy = [pool.submit(heavy_search, port, done, calls) for _ in range(HEAVY)]
        light = pool.submit(light_calls_while, port, running, done, refused, calls)
        results = [future.result()[0] for future in heavy]
        running.clear()
        light.result()
        return results, calls


def assert_light_calls_did_not_wait_for_the_long_ones(calls: Calls) -> None:
    """A light call queued behind the long ones would see most of them answered before its own answer; one that
    is not sees at most the few that end while it works (each long call works many times longer than it)."""
    waited = calls.long_answers_while_light_waited
    assert waited, "no light call was sent while the long ones ran"
    assert max(waited) < HEAVY // 2, f"long calls answered while each light call waited: {waited}"
    first_light = calls.events.index("light answered")
    assert calls.events[:first_light].count("long answered") < HEAVY // 2, calls.events


def test_many_long_calls_at_once_all_answer_and_a_light_one_is_not_held_up(site):
    with server_process(site.index_path) as (port, _):
        call(port, "count_documents")  # warm
        alone = min(heavy_search(port, threading.Semaphore(0))[1] for _ in range(2))
    # A budget that one call alone uses a third of: HEAVY of them at once on a few CPUs take far longer than it
    # in wall-clock time, each waiting for the others, though each does the same work.
    budget = 3 * alone
    with server_process(site.index_path, call_seconds=budget) as (port, _):
        results, calls = long_calls_with_light_ones_between(port)
    failed = [message(result) for result in results if result.get("isError")]
    assert not failed, failed
    assert all(len(result["structuredContent"]["result"]) == 40 for result in results)
    # All at once, HEAVY_CALLS at a time: the later ones waited several budgets for their turn and still answered.
    assert max(calls.long_sent_after) < HEAVY_CALLS, f"the long calls never ran together: {calls.long_sent_after}"
    assert_light_calls_did_not_wait_for_the_long_ones(calls)


def test_long_calls_past_the_queue_are_refused_at_once_and_the_others_answer(site):
    with server_process(site.index_path, queued_calls=1) as (port, _):
        results, calls = long_calls_with_light_ones_between(port, queued_calls=1)
    answered = [result for result in results if not result.get("isError")]
    refused = [message(result) for result in results if result.get("isError")]
    assert len(answered) == HEAVY_CALLS + 1 and len(refused) == HEAVY - len(answered), results
    for text in refused:
        assert "The server is busy" in text and "try again in a few seconds" in text, text
    # At once: every refusal came before the answer of the last call let in, which waited for its turn.
    last_answer = len(calls.events) - calls.events[::-1].index("long answered") - 1
    assert "long refused" not in calls.events[last_answer:], calls.events
    assert_light_calls_did_not_wait_for_the_long_ones(calls)
