"""How many characters `tools/list` costs an agent's context, in all and per tool.

    .venv/bin/python bench/tools_list_size.py

A real MCP client session (the SDK's `Client`, in-process) lists the tools; each size is
`len(json.dumps(...))` of the result as the client receives it (`model_dump(mode="json", by_alias=True,
exclude_none=True)`, json.dumps' default separators, as every earlier figure was measured); the bytes on the
wire (compact JSON) are reported beside. The budget (the performance issue, point 4): the seven original
tools at most 12,000 characters, each tool added later at most 1,500 more. Writes
bench/results/speed/tools_list_size.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from mcp import Client

from mkdocs_vault_mcp.mcp.server import IndexReader, create_server
from report import write_results  # bench/ is on sys.path when a script runs

ORIGINAL = ("count_documents", "aggregate_documents", "get_recent", "query_documents", "search", "read", "stats")
ORIGINAL_BUDGET = 12_000
ADDED_BUDGET = 1_500


async def listed_tools() -> tuple[dict, int]:
    async with Client(create_server(IndexReader(Path("unused.sqlite")))) as client:
        result = await client.list_tools()
    return result.model_dump(mode="json", by_alias=True, exclude_none=True), len(
        result.model_dump_json(by_alias=True, exclude_none=True)
    )


def report(listed: dict, wire: int) -> str:
    tools = {tool["name"]: tool for tool in listed["tools"]}
    original = len(json.dumps({"tools": [tools[name] for name in ORIGINAL]}))
    lines = [
        "command: python bench/tools_list_size.py",
        "characters: len(json.dumps(result)) of the tools/list result as the SDK client receives it",
        "",
        f"{'tools/list':24} {len(json.dumps(listed)):7,}   (on the wire, compact JSON: {wire:,})",
        f"{'the seven original tools':24} {original:7,}   budget {ORIGINAL_BUDGET:,}: "
        + ("ok" if original <= ORIGINAL_BUDGET else "MISSED"),
        "",
        f"{'tool':24} {'all':>7} {'description':>12} {'inputSchema':>12} {'outputSchema':>13}",
    ]
    for name, tool in tools.items():
        size = len(json.dumps(tool))
        verdict = (
            ""
            if name in ORIGINAL
            else f"   added later, budget {ADDED_BUDGET:,}: " + ("ok" if size <= ADDED_BUDGET else "MISSED")
        )
        lines.append(
            f"{name:24} {size:7,} {len(tool['description']):12,} {len(json.dumps(tool['inputSchema'])):12,} "
            f"{len(json.dumps(tool.get('outputSchema'))):13,}{verdict}"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    text = report(*anyio.run(listed_tools))
    print(text, end="")
    write_results("tools_list_size", text)
