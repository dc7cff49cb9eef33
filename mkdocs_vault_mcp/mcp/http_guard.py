"""The guards in front of the SDK's HTTP app: the Host and Origin names it accepts (`transport_security`), a loopback
Host only on a loopback connection, and the bearer token (`Guard`).

It imports nothing of MkDocs, so the standalone server runs where MkDocs is not installed or not wanted.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings

from .http_connections import ConnectionGuard, Scope, log_accept_errors_once

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
LOOPBACK_ADDRESSES = ("127.0.0.1", "localhost", "::1")
WILDCARD_ADDRESSES = ("0.0.0.0", "::", "")


def transport_security(host: str, allowed_hosts: list[str]) -> TransportSecuritySettings:
    """DNS rebinding protection: only loopback names, plus the hosts the owner allowed, may call.

    Bound to one address beyond loopback, no request can come through loopback: a loopback name in its Host
    would be a lie. (Bound to every address, `Guard` refuses it on the connections that did not.)
    """
    one_outside_address = host not in LOOPBACK_ADDRESSES + WILDCARD_ADDRESSES
    names = ([] if one_outside_address else list(LOOPBACK_NAMES)) + [h for h in allowed_hosts if h]
    if one_outside_address:
        names.append(url_host(host))
    hosts = []
    for name in dict.fromkeys(names):
        hosts += [name] if has_port(name) else [name, f"{name}:*"]
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


class BlankToken(ValueError):
    """A bearer token that is empty or only white space: it would lock every client out, or let every one in."""


def bearer_token(value: str) -> str:
    """`value` without the white space around it (a value set from a file, a heredoc or a Kubernetes Secret often ends
    in a newline that no client sends); BlankToken when nothing is left."""
    token = value.strip()
    if not token:
        raise BlankToken(value)
    return token


def has_port(name: str) -> bool:
    return name.rpartition(":")[2].isdigit() and (not name.startswith("[") or "]:" in name)


class Guard:
    """In front of the SDK's app: a loopback Host only on a connection that came through loopback, and the bearer
    token when one is set.

    The SDK checks the Host header against the allowed names, but a client on the network can send
    `Host: localhost` to a server bound to every address; only the address the connection arrived at tells.
    """

    def __init__(self, app: Any, host: str, token: str | None, connections: ConnectionGuard | None = None) -> None:
        self.app = app
        self.every_address = host in WILDCARD_ADDRESSES
        # A blank token raises BlankToken here, whoever hosts the app: it never means "no authentication".
        self.expected = bearer_token(token).encode() if token is not None else None
        # Requests being answered now, event streams (GET) aside: a server that stops lets them finish first.
        self.answering = 0
        self.connections = connections or ConnectionGuard()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            log_accept_errors_once(asyncio.get_running_loop())
        if scope["type"] == "http":
            receive, send = self.connections.follow(scope, receive, send)
            headers = dict(scope["headers"])
            if self.every_address and not arrived_through_loopback(scope) and names_loopback(headers.get(b"host")):
                await refuse(send, 421, "Misdirected request: a loopback Host on a connection from the network")
                return
            if self.expected is not None and not has_token(headers.get(b"authorization", b""), self.expected):
                await refuse(
                    send,
                    401,
                    "Unauthorized: send the bearer token (Authorization: Bearer ...)",
                    [(b"www-authenticate", b'Bearer realm="mcp"')],
                )
                return
        answering = scope["type"] == "http" and scope["method"] != "GET"
        self.answering += answering
        try:
            await self.app(scope, receive, send)
        finally:
            self.answering -= answering


def has_token(authorization: bytes, expected: bytes) -> bool:
    """`Authorization: Bearer <token>`, the scheme in any case (RFC 6750), compared in constant time."""
    scheme, _, presented = authorization.strip().partition(b" ")
    return scheme.lower() == b"bearer" and hmac.compare_digest(presented.strip(), expected)


def arrived_through_loopback(scope: Scope) -> bool:
    local = (scope.get("server") or ("", 0))[0]
    try:
        address = ipaddress.ip_address(local)
    except ValueError:
        return False  # a Unix socket or an unknown address: not loopback
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def names_loopback(host_header: bytes | None) -> bool:
    name = (host_header or b"").decode("latin-1").strip().lower()
    if name.startswith("["):
        name = name[: name.find("]") + 1]  # [::1]:8765
    elif name.count(":") == 1:
        name = name.rpartition(":")[0]  # localhost:8765
    return name in LOOPBACK_NAMES or name == "::1"


async def refuse(send: Any, status: int, text: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
