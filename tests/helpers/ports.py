"""Loopback ports for the servers the tests start."""

from __future__ import annotations

import random
import socket
import sys

# Below Linux's ephemeral range (32768-60999), where outgoing connections take their local ports, and one
# stretch per Python: suites on several Pythons run at once (.ci/other-pythons), and a port that one suite
# found free could otherwise be taken by another suite's server before this one binds it.
PORTS_PER_PYTHON = 3_000
FIRST_PORT = 20_000 + (sys.version_info[1] % 4) * PORTS_PER_PYTHON


_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on right now, from this Python's own stretch of ports, and never
    one handed out before in this run: a test takes two (MkDocs' and the MCP server's) before either is bound."""
    for _ in range(200):
        port = random.randrange(FIRST_PORT, FIRST_PORT + PORTS_PER_PYTHON)
        if port in _HANDED_OUT:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            _HANDED_OUT.add(port)
            return port
    raise RuntimeError(f"no free port in {FIRST_PORT}-{FIRST_PORT + PORTS_PER_PYTHON - 1}")
