"""The MCP tools over stdio, answering every line a client sends, even one that is not a JSON-RPC message.

The SDK's stdio transport hands a line it cannot read to the server as an exception, which the server drops
without a word, and it reads a request whose id is an object as a notification, which gets no answer: either
way the client waits forever. (Over HTTP the SDK answers both with a JSON-RPC error.) Here each such line gets
a JSON-RPC error, with the request's id when one can be read from it, else null.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import ErrorData, JSONRPCError, jsonrpc_message_adapter

from .. import limits

PARSE_ERROR = -32700  # JSON-RPC 2.0: not JSON
INVALID_REQUEST = -32600  # JSON, but not one JSON-RPC message (a batch, an object as id, a missing method)


def serve_stdio(server: Server) -> None:
    anyio.run(_serve, server)


async def _serve(server: Server) -> None:
    """As the SDK's `MCPServer.run("stdio")` does, with the lines in between checked."""
    # UTF-8 whatever the locale, bad bytes replaced, as the SDK reads stdin itself.
    text = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    errors_in, errors_out = anyio.create_memory_object_stream[JSONRPCError](16)
    lines = CheckedLines(anyio.wrap_file(text), errors_in)
    # The SDK annotates stdin as an AsyncFile[str] yet only iterates its lines (`async for line in stdin`).
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        checked_in, checked_out = anyio.create_memory_object_stream[Any](0)

        async def forward() -> None:
            """The server's messages; the SDK's own read errors answered, not dropped."""
            async with checked_in:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        await write_stream.send(SessionMessage(error_for(item)))
                    else:
                        await checked_in.send(item)

        async def answer_unreadable() -> None:
            async with errors_out:
                async for error in errors_out:
                    await write_stream.send(SessionMessage(error))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(forward)
            tasks.start_soon(answer_unreadable)
            await server.run(checked_out, write_stream, server.create_initialization_options())
            tasks.cancel_scope.cancel()


class CheckedLines:
    """The lines of stdin that may be JSON-RPC messages; an error for each of the others goes to `errors`."""

    def __init__(self, lines: Any, errors: Any) -> None:
        self.lines = lines
        self.errors = errors

    async def __aiter__(self) -> AsyncIterator[str]:
        async with self.errors:
            async for line in self.lines:
                if not line.strip():
                    continue  # a blank line is no message, and asks for no answer
                problem = line_problem(line)
                if problem is None:
                    yield line
                else:
                    await self.errors.send(problem)


def line_problem(line: str) -> JSONRPCError | None:
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as error:
        reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        return rpc_error(None, PARSE_ERROR, f"Parse error: the line is not JSON ({reason}).")
    if not isinstance(message, dict):
        kind = "a batch (a JSON array), which MCP does not take" if isinstance(message, list) else "not an object"
        return rpc_error(None, INVALID_REQUEST, f"Invalid request: the message is {kind}.")
    if "id" in message and type(message["id"]) not in (int, str):
        return rpc_error(None, INVALID_REQUEST, "Invalid request: id must be a string or a number.")
    try:  # as the SDK will read it; where it would fail, the id is known here and lost there
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception as error:  # pydantic's, or a recursion limit: any is a bad message
        return error_for(error, message.get("id"))
    return None


def error_for(problem: Exception, request_id: int | str | None = None) -> JSONRPCError:
    """The answer to a line that is not a JSON-RPC message (`problem` says why)."""
    details = problem.errors() if hasattr(problem, "errors") else []
    request_id = (
        request_id
        if request_id is not None
        else next(
            (
                found["id"]
                for found in (detail.get("input") for detail in details)
                if isinstance(found, dict) and type(found.get("id")) in (int, str)
            ),
            None,
        )
    )
    first = details[0].get("msg") if details else str(problem)
    return rpc_error(request_id, INVALID_REQUEST, f"Invalid request: not a JSON-RPC 2.0 message ({first}).")


def rpc_error(request_id: int | str | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=limits.cut(message)))
