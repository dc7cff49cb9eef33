"""Hostile clients, against every way of hosting the HTTP server alike: `serve --transport http` and the container
image's command (uvicorn running the ASGI app factory, as the Dockerfile's CMD says). Clients that hold connections
without sending a request cannot starve the others: with the server's limit of open files at 1,024, 1,100
connections that send part of their headers (and reconnect when closed) leave a well-behaved client's calls answered
at once, and the server logs no stream of accept errors. The bearer token is the one given without the white space
around it, and a blank one is refused at start. A body over 4 MB is refused. Subscriptions over stateless HTTP cost the server nothing. Real
servers in processes of their own, over loopback, and raw sockets."""

from __future__ import annotations

import resource
import socket
import subprocess
import threading
import time
from collections.abc import Iterator

import pytest

from helpers.hosted import HOSTINGS, TOKEN_ENV, Hosted, hosting_command, rpc
from helpers.ports import free_port
from helpers.site import Site, built_site

SLOW_CONNECTIONS = 1_100
SERVER_FILES = 1_024  # the server's limit of open files (soft and hard), as `ulimit -n 1024` sets it
PARTIAL_HEADERS = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
CONTROL_CALLS = 6
SUBSCRIPTIONS = 400
LONG_URI = "docs:///" + "a" * 100_000
GROWTH_KB = 20 * 1024  # what 400 subscriptions may add to the server's resident memory


def tool_call(tool: str, **arguments: object) -> dict[str, object]:
    return {"name": tool, "arguments": arguments}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return built_site(
        tmp_path_factory.mktemp("hostile"),
        {"plugins": [{"vault-mcp": {"stats_page": False}}]},
        {"index.md": "# Home\n\nThe lighthouse keeper.\n", "other.md": "# Other\n\nA lighthouse.\n"},
    )


@pytest.fixture(params=HOSTINGS)
def hosting(request: pytest.FixtureRequest) -> str:
    hosting: str = request.param
    return hosting


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


def test_slow_connections_starve_no_well_behaved_client(site, hosting, enough_files):
    from mkdocs_vault_mcp import limits

    # A call the slow connections starved would wait until the server drops one of them at its read limit; a
    # call that has to wait half of that for its answer has not been answered at once.
    patience = limits.REQUEST_READ_SECONDS / 2
    with Hosted(hosting, site.site_dir, preexec=few_files) as server:
        assert rpc(server.port, "tools/call", tool_call("search", query="lighthouse"))[0] == 200  # warm
        with SlowClients(server.port) as slow:
            assert slow.opened >= SLOW_CONNECTIONS * 0.9, f"only {slow.opened} slow connections opened"
            for number in range(CONTROL_CALLS):
                tool = "search" if number % 2 else "count_documents"
                try:
                    status, answer = rpc(
                        server.port, "tools/call", tool_call(tool, query="lighthouse"), timeout=patience
                    )
                except TimeoutError:
                    pytest.fail(f"call {number} ({tool}) waited {patience} s among the slow connections")
                assert status == 200 and answer is not None and not answer["result"].get("isError"), answer
                result = answer["result"]["structuredContent"]
                assert result["result"] if tool == "search" else result["total"] == 2, answer
            # The slow clients notice a closed connection at their next sweep; the read limit closes one at the latest.
            deadline = time.monotonic() + limits.REQUEST_READ_SECONDS + 10
            while slow.opened == SLOW_CONNECTIONS and time.monotonic() < deadline:
                time.sleep(0.1)
            reopened = slow.opened - SLOW_CONNECTIONS
        server.stop()
        errors = server.output()
    assert reopened > 0, "the server closed no slow connection; the test proves nothing"
    assert errors.count("socket.accept() out of system resource") <= 1, errors[-2000:]
    assert errors.count("Cannot accept new connections") <= 1, errors[-2000:]
    assert "slow-connection guard" not in errors and "Traceback" not in errors, errors[-2000:]


def test_a_connection_that_never_finishes_its_headers_is_closed(site, hosting):
    """After REQUEST_READ_SECONDS the server closes it."""
    from mkdocs_vault_mcp import limits

    with Hosted(hosting, site.site_dir) as server:
        sock = socket.create_connection(("127.0.0.1", server.port))
        try:
            sock.sendall(PARTIAL_HEADERS)
            sock.settimeout(limits.REQUEST_READ_SECONDS / 2)
            with pytest.raises(TimeoutError):  # not closed before its time
                sock.recv(1)
            sock.settimeout(limits.REQUEST_READ_SECONDS + 30)
            assert sock.recv(1) == b"", "the server answered a request it never got"
        finally:
            sock.close()
        assert rpc(server.port, "tools/call", tool_call("count_documents"))[0] == 200


def test_a_token_with_white_space_around_it_is_the_token_without_it(site, hosting):
    """As a Kubernetes Secret or a file read into the variable gives it: with a newline at its end."""
    with Hosted(hosting, site.site_dir, token="  padded-token\n") as server:
        call = tool_call("count_documents")
        status, answer = rpc(server.port, "tools/call", call, token="padded-token")
        assert status == 200 and answer is not None and answer["result"]["structuredContent"]["total"] == 2
        assert rpc(server.port, "tools/call", call, token="wrong-token")[0] == 401
        assert rpc(server.port, "tools/call", call)[0] == 401


def test_a_body_over_the_limit_is_refused_before_it_is_parsed(site, hosting):
    with Hosted(hosting, site.site_dir) as server:
        status, _ = rpc(server.port, "tools/call", tool_call("search", query="x" * (5 << 20)))
        assert status == 413
        assert rpc(server.port, "tools/call", tool_call("count_documents"))[0] == 200


@pytest.mark.parametrize("value", ["", " \n\t "])
def test_a_blank_token_is_refused_at_start(site, hosting, value):
    command, env = hosting_command(hosting, site.site_dir, free_port(), value)
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode != 0, run
    variable = TOKEN_ENV if hosting == HOSTINGS[0] else "VAULT_MCP_TOKEN"
    (line,) = [line for line in run.stderr.splitlines() if "empty or only white space" in line]
    assert line.startswith("mkdocs-vault-mcp: error: ") and variable in line, run.stderr
    assert "Traceback" not in run.stderr


def test_subscriptions_over_stateless_http_are_refused_and_cost_the_server_nothing(site, hosting):
    """No change could reach a connection that ends with its request: subscribing is refused, to a page or to a
    100 kB URI that names none, and 400 of them leave the server's memory as it was."""
    with Hosted(hosting, site.site_dir) as server:
        status, answer = rpc(server.port, "resources/subscribe", {"uri": "docs:///index.md"})
        assert status == 200 and answer is not None, answer
        assert "needs a session" in answer["error"]["message"], answer
        for number in range(20):  # warm
            rpc(server.port, "resources/subscribe", {"uri": f"{LONG_URI}{number}"})
        before = server.rss_kb()
        for number in range(SUBSCRIPTIONS):
            status, answer = rpc(server.port, "resources/subscribe", {"uri": f"{LONG_URI}{number}"})
            assert status == 200 and answer is not None and "error" in answer, (status, answer)
            assert len(answer["error"]["message"]) < 2_000
        grown = server.rss_kb() - before
        assert rpc(server.port, "tools/call", tool_call("count_documents"))[0] == 200
    assert grown <= GROWTH_KB, f"{SUBSCRIPTIONS} subscriptions of 100 kB URIs grew the server by {grown} kB"
