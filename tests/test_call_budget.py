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
from mkdocs_vault_mcp.server import HEAVY_CALLS

HEAVY = 16  # long calls sent at once
LIGHT_LATENCY = 0.5  # the most a light call sent meanwhile may take, on a machine whose other work slows it
# no more than a light call alone takes this many times over (tests share the CPUs with other work)
LIGHT_SLOWDOWN = 30
BURST_SECONDS = 0.5  # for the long calls to arrive (all of them take longer than this)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    config = {"plugins": [{"vault-mcp": {"stats_page": False}}]}
    return built_site(tmp_path_factory.mktemp("budget"), config, random_pages(40, lede="A lighthouse keeper."))


def heavy_search(port: int, done: threading.Semaphore) -> tuple[dict[str, Any], float]:
    start = time.perf_counter()
    try:
        result = call(port, "search", query=EVERY_PREFIX, limit=100, sections_per_page=10)
    finally:
        done.release()
    return result, time.perf_counter() - start


def light_calls_while(port: int, running: threading.Event, done: threading.Semaphore, refused: int) -> list[float]:
    """Latencies of light searches (one word) sent one after another while `running` is set, from once the long
    calls have arrived (the server reads a burst of requests on its event loop before anything else) and the
    `refused` of them have been (each works a moment first, to be known as long)."""
    latencies: list[float] = []
    time.sleep(BURST_SECONDS)
    for _ in range(refused):
        done.acquire()
    while running.is_set():
        start = time.perf_counter()
        result = call(port, "search", query="lighthouse", limit=3)
        latencies.append(time.perf_counter() - start)
        assert not result.get("isError"), message(result)
        assert result["structuredContent"]["result"], result
        time.sleep(0.05)
    return latencies


def light_bound(port: int) -> float:
    """LIGHT_LATENCY, or more on a machine so busy that a light call alone takes more than its share of it."""
    alone = []
    for _ in range(5):
        start = time.perf_counter()
        call(port, "search", query="lighthouse", limit=3)
        alone.append(time.perf_counter() - start)
    return max(LIGHT_LATENCY, LIGHT_SLOWDOWN * sorted(alone)[2])


def long_calls_with_light_ones_between(
    port: int, queued_calls: int | None = None
) -> tuple[list[tuple[dict[str, Any], float]], list[float]]:
    running = threading.Event()
    running.set()
    done = threading.Semaphore(0)
    refused = 0 if queued_calls is None else HEAVY - HEAVY_CALLS - queued_calls
    with ThreadPoolExecutor(HEAVY + 1) as pool:
        heavy = [pool.submit(heavy_search, port, done) for _ in range(HEAVY)]
        light = pool.submit(light_calls_while, port, running, done, refused)
        results = [future.result() for future in heavy]
        running.clear()
        return results, light.result()


def test_many_long_calls_at_once_all_answer_and_a_light_one_is_not_held_up(site):
    with server_process(site.index_path) as (port, _):
        call(port, "count_documents")  # warm
        alone = min(heavy_search(port, threading.Semaphore(0))[1] for _ in range(2))
    # A budget that one call alone uses a third of: HEAVY of them at once on a few CPUs take far longer than it
    # in wall-clock time, each waiting for the others, though each does the same work.
    budget = 3 * alone
    with server_process(site.index_path, call_seconds=budget) as (port, _):
        bound = light_bound(port)
        results, light = long_calls_with_light_ones_between(port)
    failed = [message(result) for result, _ in results if result.get("isError")]
    assert not failed, failed
    assert all(len(result["structuredContent"]["result"]) == 40 for result, _ in results)
    slowest = max(seconds for _, seconds in results)
    assert slowest > budget, f"the calls never waited for each other ({slowest:.2f} s); the test proves nothing"
    assert light, "no light call was sent while the long ones ran"
    assert max(light) < bound, [round(x, 3) for x in light]


def test_long_calls_past_the_queue_are_refused_at_once_and_the_others_answer(site):
    with server_process(site.index_path, queued_calls=1) as (port, _):
        bound = light_bound(port)
        results, light = long_calls_with_light_ones_between(port, queued_calls=1)
    answered = [seconds for result, seconds in results if not result.get("isError")]
    refused = [(message(result), seconds) for result, seconds in results if result.get("isError")]
    assert len(answered) == HEAVY_CALLS + 1 and len(refused) == HEAVY - len(answered), results
    for text, seconds in refused:
        assert "The server is busy" in text and "try again in a few seconds" in text, text
        assert seconds < max(answered), "a refused call waited for the answered ones"
    assert light and max(light) < bound, [round(x, 3) for x in light]
