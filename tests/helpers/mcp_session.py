"""A real MCP client session (the SDK's `Client`) driven from synchronous tests through an anyio portal."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.from_thread import start_blocking_portal
from jsonschema import Draft202012Validator
from mcp import Client
from mcp_types import CallToolResult, TextContent

from mkdocs_vault_mcp.mcp.server import IndexReader, create_server


def text(result: CallToolResult) -> str:
    """The text of an answer's one content block (this server answers in text)."""
    (block,) = result.content
    assert isinstance(block, TextContent), block
    return block.text


def index_stale(result: CallToolResult) -> Any:
    """What an answer's `_meta` says of the index's freshness (every answer of this server carries it)."""
    assert result.meta is not None, result
    return result.meta["index_stale"]


class Session:
    """Calls that check what every answer of this server must hold, whichever tool answers."""

    def __init__(self, portal: Any, client: Client) -> None:
        self.portal = portal
        self.client = client
        self.tools = {tool.name: tool for tool in portal.call(client.list_tools).tools}

    def call(self, tool: str, **arguments: Any) -> CallToolResult:
        result: CallToolResult = self.portal.call(self.client.call_tool, tool, arguments)
        assert isinstance((result.meta or {}).get("index_stale"), bool), result
        return result

    def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = self.call(tool, **arguments)
        assert not result.is_error, text(result)
        data: dict[str, Any] = result.structured_content
        errors = list(Draft202012Validator(self.tools[tool].output_schema).iter_errors(data))
        assert not errors, errors
        assert json.loads(text(result)) == data
        return data

    def error(self, tool: str, **arguments: Any) -> str:
        """The error message, without the prefix the SDK puts before it."""
        result = self.call(tool, **arguments)
        assert result.is_error, f"{tool}({arguments}) was accepted: {result.structured_content}"
        assert result.structured_content is None
        message = text(result)
        prefix = f"Error executing tool {tool}: "
        assert message.startswith(prefix) and len(message) > len(prefix) + 10, message  # not a crash
        return message[len(prefix) :]

    def paths(self, query: str, **arguments: Any) -> list[str]:
        """The pages `search` finds, best first."""
        return [hit["path"] for hit in self.ok("search", query=query, **arguments)["result"]]


@contextmanager
def session_with(server: Any) -> Iterator[Session]:
    """`server`: whatever `Client` connects to (a server object, a URL, `StdioServerParameters`)."""
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(Client(server)) as client:
        yield Session(portal, client)


@contextmanager
def session_over(index: Path) -> Iterator[Session]:
    """A session with an in-process server over the index file `index`."""
    with session_with(create_server(IndexReader(index))) as session:
        yield session


def data(result: Any) -> dict[str, Any]:
    """A tool call's structured answer, once it is not an error and its `index_stale` agrees with its meta's."""
    assert not result.is_error, result.content
    if "index_stale" in result.structured_content:
        assert result.meta["index_stale"] == result.structured_content["index_stale"]
    answer: dict[str, Any] = result.structured_content
    return answer


def call_tools(index: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Each call's structured answer through a real MCP client session, `index_stale` left out."""

    async def session() -> list[dict[str, Any]]:
        answers = []
        async with Client(create_server(IndexReader(index))) as client:
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                assert not result.is_error, result.content
                answer = dict(result.structured_content)
                answer.pop("index_stale", None)
                answers.append(answer)
        return answers

    return anyio.run(session)
