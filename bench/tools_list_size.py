"""How many characters `tools/list` costs an agent's context, in all and per tool.

    .venv/bin/python bench/tools_list_size.py

A real MCP client session (the SDK's `Client`, in-process) lists the tools; each size is
`len(json.dumps(...))` of the result as the client receives it (`model_dump(mode="json", by_alias=True,
exclude_none=True)`). The budget (the performance issue): each tool added costs at most 1,500 characters.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from mcp import Client

from mkdocs_vault_mcp.server import IndexReader, create_server
from report import results_from_output  # bench/ is on sys.path when a script runs


async def sizes() -> dict[str, int]:
    async with Client(create_server(IndexReader(Path("unused.sqlite")))) as client:
        listed = (await client.list_tools()).model_dump(mode="json", by_alias=True, exclude_none=True)
    return {"tools/list": len(json.dumps(listed)), **{tool["name"]: len(json.dumps(tool)) for tool in listed["tools"]}}


if __name__ == "__main__":
    with results_from_output("tools_list_size"):
        for name, size in anyio.run(sizes).items():
            print(f"{name:20} {size:7,}")
