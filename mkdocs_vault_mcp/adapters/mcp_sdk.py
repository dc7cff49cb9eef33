"""The MCP SDK where its public interface falls short: a full session manager that evicts, and a request's client
connection.

Eviction.

At `max_sessions` the SDK's StreamableHTTPSessionManager refuses every new client (503) until a session ends or
expires, and no public option changes that. With `evict_longest_idle_session_when_full`, the session idle the
longest makes room instead: its client gets 404 on its next request and starts again, as after an expiry.

It relies on these private names of mcp 2.3's `mcp.server.streamable_http_manager.StreamableHTTPSessionManager`:

- `_admit_session(requestor)`: called under the manager's lock to register a new session, or to refuse it with
  None at the limit; it is wrapped, so that room is made first.
- `_server_instances`: the table of open sessions (session id to its transport), from which the evicted one is
  dropped at once, before admission counts them.
- `_session_owners`: the credential of each session, dropped with it.

and on each transport's public `idle_scope`, whose deadline is infinite while a request is in flight and is set
when the last one ends (so the earliest finite deadline is the session idle the longest). It should be proposed
upstream as an option of the session manager (evict the longest idle session instead of refusing).

The client's connection. A request handler gets a `ServerRequestContext`, whose `session` is made for that request
alone; the client's `Connection`, which lives as long as the client is connected and whose `send_resource_updated`
is public, is reachable only as the session's private `_connection` (`ServerSession.__init__(request_outbound,
connection)` keeps it there). The SDK's `Context` has a public `connection` property; the same on
`ServerRequestContext` would be worth proposing upstream.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from . import mismatch

DISTRIBUTION = "mcp"
SUPPORTED = ">=2.3,<2.4"
METHOD = "_admit_session"
TABLES = ("_server_instances", "_session_owners")


def missing(manager: Any = None) -> list[str]:
    """What the installed SDK lacks of what this adapter relies on: of the class, and of `manager` when given."""
    absent = []
    admit = getattr(StreamableHTTPSessionManager, METHOD, None)
    if not callable(admit) or list(inspect.signature(admit).parameters) != ["self", "requestor"]:
        absent.append(f"StreamableHTTPSessionManager.{METHOD}(requestor)")
    if list(inspect.signature(ServerSession.__init__).parameters)[:3] != ["self", "request_outbound", "connection"]:
        absent.append("ServerSession._connection (set from ServerSession.__init__'s connection)")
    if manager is not None:
        absent += [
            f"StreamableHTTPSessionManager.{name}"
            for name in TABLES
            if not isinstance(getattr(manager, name, None), dict)
        ]
    return absent


def require(manager: Any = None) -> None:
    """Raise AdapterMismatch, naming what is missing, unless the installed SDK has all this adapter relies on."""
    absent = missing(manager)
    if absent:
        raise mismatch(DISTRIBUTION, absent, SUPPORTED)


def evict_longest_idle_session_when_full(manager: StreamableHTTPSessionManager) -> None:
    """At the session limit, end the session idle the longest to admit a new one (see the module's docstring)."""
    require(manager)
    admit = getattr(manager, METHOD)
    sessions: dict[str, Any] = getattr(manager, TABLES[0])
    owners: dict[str, Any] = getattr(manager, TABLES[1])

    def admit_session(requestor: Any) -> Any:
        if manager.max_sessions is not None and len(sessions) >= manager.max_sessions:
            idle = [
                (transport.idle_scope.deadline, session_id)
                for session_id, transport in sessions.items()
                if transport.idle_scope is not None and math.isfinite(transport.idle_scope.deadline)
            ]
            if idle:
                oldest = min(idle)[1]  # the earliest idle deadline: the longest idle
                transport = sessions.pop(oldest)
                owners.pop(oldest, None)
                transport.idle_scope.cancel()  # ends the session's task, which terminates it
        return admit(requestor)

    setattr(manager, METHOD, admit_session)


def client_connection(ctx: ServerRequestContext[Any, Any]) -> Any:
    """The client's connection behind a request's context: the same object for every request of that client."""
    connection = getattr(ctx.session, "_connection", None)
    if connection is None:
        raise mismatch(DISTRIBUTION, ["ServerSession._connection"], SUPPORTED)
    return connection
