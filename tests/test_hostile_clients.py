"""Clients that hold connections without sending a request cannot starve the others: with the server's limit of
open files at 1,024, 1,100 connections that send part of their headers (and reconnect when closed) leave a
well-behaved client's calls answered at once, and the server logs no stream of accept errors. Real servers in
processes of their own, over loopback, and raw sockets."""

from __future__ import annotations

import resource
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from helpers.served import call, server_process
from helpers.site import Site, built_site

SLOW_CONNECTIONS = 1_100
SERVER_FILES = 1_024  # the server's limit of open files (soft and hard), as `ulimit -n 1024` sets it
PARTIAL_HEADERS = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return built_site(
        tmp_path_factory.mktemp("hostile"),
        {"plugins": [{"vault-mcp": {"stats_page": False}}]},
        {"index.md": "# Home\n\nThe lighthouse keeper.\n", "other.md": "# Other\n\nA lighthouse.\n"},
    )


@pytest.fixture
def enough_files() -> Iterator[None]:
    """This process holds the slow connections: it needs more open files than the server may have."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = SLOW_CONNECTIONS + 256
    if soft != resource.RLIM_INFINITY and soft < wanted:
        if hard != resource.RLIM_INFINITY and hard < wanted:
            pytest.skip(f"this process may open {hard} files; the test needs {wanted}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def few_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (SERVER_FILES, SERVER_FILES))


class SlowClients:
    """SLOW_CONNECTIONS connections that each send part of a request's headers and nothing more; one the server
    closes is opened again, for as long as they run."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sockets: list[socket.socket | None] = [None] * SLOW_CONNECTIONS
        self.running = True
        self.opened = 0
        self.thread = threading.Thread(target=self._hold, daemon=True)

    def open(self, index: int) -> None:
        sock = socket.socket()
        sock.settimeout(5)
        try:
            sock.connect(("127.0.0.1", self.port))
            sock.sendall(PARTIAL_HEADERS)
        except OSError:
            sock.close()
            return
        sock.setblocking(False)
        self.sockets[index] = sock
        self.opened += 1

    def _hold(self) -> None:
        while self.running:
            for index, sock in enumerate(self.sockets):
                if not self.running:
                    break
                if sock is not None:
                    try:
                        if sock.recv(1, socket.MSG_PEEK) != b"":
                            continue
                    except BlockingIOError:
                        continue  # still open, nothing from the server
                    except OSError:
                        pass
                    sock.close()
                    self.sockets[index] = None
                self.open(index)
            time.sleep(0.2)

    def __enter__(self) -> SlowClients:
        for index in range(SLOW_CONNECTIONS):
            self.open(index)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.running = False
        self.thread.join(timeout=30)
        for sock in self.sockets:
            if sock is not None:
                sock.close()


def test_slow_connections_starve_no_well_behaved_client(site, enough_files):
    from mkdocs_vault_mcp import limits

    # A call the slow connections starved would wait until the server drops one of them at its read limit; a
    # call that has to wait half of that for its answer has not been answered at once.
    patience = limits.REQUEST_READ_SECONDS / 2
    with server_process(site.index_path, preexec=few_files) as (port, process):
        call(port, "search", query="lighthouse")  # warm
        with SlowClients(port) as slow:
            assert slow.opened >= SLOW_CONNECTIONS * 0.9, f"only {slow.opened} slow connections opened"
            for number in range(30):
                tool = "search" if number % 2 else "count_documents"
                try:
                    result = call(port, tool, query="lighthouse", timeout=patience)
                except TimeoutError:
                    pytest.fail(f"call {number} ({tool}) waited {patience} s among the slow connections")
                assert not result.get("isError"), result
                answer = result["structuredContent"]
                assert answer["result"] if tool == "search" else answer["total"] == 2, result
                time.sleep(0.1)
            reopened = slow.opened - SLOW_CONNECTIONS
        process.terminate()
        _, errors = process.communicate(timeout=20)
    assert reopened > 0, "the server closed no slow connection; the test proves nothing"
    assert errors.count("socket.accept() out of system resource") <= 1, errors[-2000:]
    assert errors.count("Cannot accept new connections") <= 1, errors[-2000:]


def test_a_connection_that_never_finishes_its_headers_is_closed(site):
    """After REQUEST_READ_SECONDS the server closes it (a short limit here: the server is given one)."""
    from mkdocs_vault_mcp import limits

    with server_process(site.index_path) as (port, _):
        sock = socket.create_connection(("127.0.0.1", port))
        try:
            sock.sendall(PARTIAL_HEADERS)
            sock.settimeout(limits.REQUEST_READ_SECONDS / 2)
            with pytest.raises(TimeoutError):  # not closed before its time
                sock.recv(1)
            sock.settimeout(limits.REQUEST_READ_SECONDS + 30)
            assert sock.recv(1) == b"", "the server answered a request it never got"
        finally:
            sock.close()
        assert not call(port, "count_documents").get("isError")
