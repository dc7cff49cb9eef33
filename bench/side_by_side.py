"""Our MCP tools beside the peer's nearest ones: same Markdown files, same SDK client, same run.

The peer is markdown-vault-mcp (PyPI), a standalone MCP server that indexes a folder of Markdown files
itself. It is installed into a bench-only venv, `bench/out/peer-venv/` (never a project
dependency), and pointed at the FastAPI corpus' 13 languages as `bench/build_overhead.py` copies them to
`bench/out/fastapi/docs` (1,643 pages), read in place: read-only mode, no file watcher, its index and
state under `bench/out/side-by-side/peer/`, no embeddings provider installed (so its search is keyword,
FTS5, like ours). Ours serves the index that the vault-mcp plugin built from the same files
(`bench/out/fastapi/sites/vault-warm`, the site `build_overhead.py` and `tool_latency.py` use).

One `mcp.Client` session per server over stdio, both under the initialize handshake (protocol 2025-11-25)
because MCP `ping` exists only there; each round sends, to each server in turn (ours first in even rounds,
the peer first in odd ones), a ping then every case, so load drift hits both servers and both baselines
alike. Per case: p50 and p95, the answer's size (the
JSON of the CallToolResult as the client holds it), and ours/peer. Ping's p50 on each server is the
transport baseline. Then start-up to first answer: from spawning the server to the first answer of the
keyword search, each server started `--starts` times, alternately, its index already built.

    .venv/bin/python bench/side_by_side.py [--calls 100] [--warmup 10] [--starts 5] [--peer-version 5.1.0] [--one-date]

`--one-date` serves both a copy of the corpus with every file at one modification time (`bench/out/fastapi-one-date`,
ours built from it by the plugin, the peer indexing it once into a state of its own), as every file of a fresh CI
checkout has: get_recent and the listings by date meet nothing but ties. Writes
bench/results/speed/side_by_side.json (with `--one-date`, side_by_side_one_date.json). The first run installs the peer and lets it index the corpus once
(a few minutes on 2 CPUs); the corpus files are checked unchanged at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any, cast

import mcp

from report import table, write_results  # bench/ is on sys.path when a script runs
from tool_latency import DEFAULT_SITE, SERVER_COMMAND, ensure_site, percentile

BENCH = Path(__file__).resolve().parent
OUT = BENCH / "out" / "side-by-side"
CORPUS = BENCH / "out" / "fastapi" / "docs"  # what build_overhead.copy_corpus lays out (all 13 languages)
PEER_STATE = OUT / "peer"  # the peer's index and state of CORPUS
PEER_PACKAGE = "markdown-vault-mcp"
DEFAULT_PEER_VERSION = "5.1.0"  # the newest on PyPI when this was written, the one bench/results/ measured
READ_PAGE = "en/tutorial/path-params.md"

# (label, our tool and arguments, the peer's nearest tool and arguments). The peer has no count tool:
# the nearest way to learn how many pages a folder holds is listing it.
CASES: list[tuple[str, str, dict[str, Any], str, dict[str, Any]]] = [
    ("search keyword `dependencies`", "search", {"query": "dependencies"}, "search", {"query": "dependencies"}),
    (
        "search `path parameters` in folder en",
        "search",
        {"query": "path parameters", "folder": "en"},
        "search",
        {"query": "path parameters", "folder": "en"},
    ),
    ("stats", "stats", {}, "stats", {}),
    ("get_recent, 20 rows", "get_recent", {"limit": 20}, "get_recent", {"limit": 20}),
    (
        "list folder en (155 rows)",
        "query_documents",
        {"folder": "en", "limit": 200},
        "list_documents",
        {"folder": "en"},
    ),
    # The peer's listing has one order: ours in each of the others beside it.
    *(
        (
            f"list folder en, sort={sort}",
            "query_documents",
            {"folder": "en", "limit": 200, "sort": sort},
            "list_documents",
            {"folder": "en"},
        )
        for sort in ("modified", "title")
    ),
    (f"read {READ_PAGE}", "read", {"path": READ_PAGE}, "read", {"path": READ_PAGE}),
    ("count folder en", "count_documents", {"folder": "en"}, "list_documents", {"folder": "en"}),
]
FIRST_ANSWER = ("search", {"query": "dependencies"})
# --one-date: the same corpus copied again with every file at this modification time, as every file of a fresh
# CI checkout shares one (no git history to date the pages by): get_recent and sort=modified meet only ties.
ONE_DATE = BENCH / "out" / "fastapi-one-date"
ONE_DATE_NS = 1_767_225_600 * 10**9  # 2026-01-01T00:00:00Z
PING = "ping (baseline)"


def peer_venv(version: str) -> Path:
    """The peer installed into its own venv under bench/out (once per version); returns its server command."""
    venv = BENCH / "out" / "peer-venv"
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    shown = subprocess.run([str(venv / "bin" / "pip"), "show", PEER_PACKAGE], capture_output=True, text=True).stdout
    if f"Version: {version}\n" not in shown:
        print(f"installing {PEER_PACKAGE}=={version} into {venv} (bench only) ...", flush=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"{PEER_PACKAGE}=={version}"], check=True)
    return venv / "bin" / PEER_PACKAGE


def one_date_site() -> Path:
    """The one-date corpus (copied once, every file's time set to ONE_DATE_NS) and the site the plugin builds from
    it, built again when the index is missing or of another schema version than the package imported here."""
    import build_overhead
    from mkdocs_vault_mcp.index.schema import FORMAT_VERSION

    build_overhead.copy_corpus(build_overhead.CORPUS, ONE_DATE)
    for path in (ONE_DATE / "docs").rglob("*"):
        os.utime(path, ns=(ONE_DATE_NS, ONE_DATE_NS))
    build_overhead.write_configs(ONE_DATE)
    site = ONE_DATE / "sites" / "vault-warm"
    index = site / "vault-mcp" / "index.sqlite"
    if index.is_file():
        conn = sqlite3.connect(f"{index.as_uri()}?mode=ro", uri=True)
        found = conn.execute("SELECT value FROM info WHERE key = 'schema_version'").fetchone()
        conn.close()
        if found == (FORMAT_VERSION,):
            return site
    print(f"building {site} with vault-mcp (every page dated {ONE_DATE_NS // 10**9}) ...", flush=True)
    build_overhead.build(ONE_DATE, "vault-warm", site, dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    return site


def peer_params(command: Path) -> mcp.StdioServerParameters:
    PEER_STATE.mkdir(parents=True, exist_ok=True)
    env = dict(
        os.environ,
        MARKDOWN_VAULT_MCP_SOURCE_DIR=str(CORPUS),
        MARKDOWN_VAULT_MCP_READ_ONLY="true",  # read in place: it must never write to the corpus
        MARKDOWN_VAULT_MCP_FILE_WATCHER="false",  # ours does not watch files either when serving an index
        MARKDOWN_VAULT_MCP_INDEX_PATH=str(PEER_STATE / "index.sqlite"),
        MARKDOWN_VAULT_MCP_STATE_PATH=str(PEER_STATE / "state.json"),
        MARKDOWN_VAULT_MCP_EMBEDDINGS_PATH=str(PEER_STATE / "embeddings"),
    )
    return mcp.StdioServerParameters(command=str(command), args=["serve"], env=env)


def our_params(site: Path) -> mcp.StdioServerParameters:
    # This process's environment, as the peer's: without it the SDK passes a few variables only, and a PYTHONPATH
    # naming the checkout to measure would not reach the server.
    return mcp.StdioServerParameters(command=str(SERVER_COMMAND), args=["serve", str(site)], env=dict(os.environ))


def corpus_digest() -> str:
    """Path, size and modification time of every file under the corpus: it must not change."""
    digest = hashlib.sha256()
    for path in sorted(CORPUS.rglob("*")):
        stat = path.stat()
        digest.update(f"{path.relative_to(CORPUS)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:12]


class QuietServers:
    """Both servers' stderr into one log file (the peer logs every start-up step as JSON)."""

    def __init__(self) -> None:
        OUT.mkdir(parents=True, exist_ok=True)
        self.path = OUT / "servers.log"

    def __enter__(self) -> Any:
        self.file = self.path.open("a")
        return self.file

    def __exit__(self, *exc: object) -> None:
        self.file.close()


def client(params: mcp.StdioServerParameters, errlog: Any) -> mcp.Client:
    # mcp.Client takes the transport; stdio_client is where stderr goes. Legacy mode: the initialize
    # handshake of 2025-11-25, the protocol that still has ping.
    from mcp.client.stdio import stdio_client

    return mcp.Client(stdio_client(params, errlog=errlog), mode="legacy")


def corpus_pages() -> int:
    return sum(1 for _ in CORPUS.rglob("*.md"))


async def peer_indexed(peer: mcp.Client) -> int:
    """Wait, in this session's own server process, until its index holds every page of the corpus and no job
    runs; returns its page count. Each process the peer starts checks the folder again before it answers
    in full, so every session that is timed waits here first, not only the first one."""
    pages = corpus_pages()
    for _ in range(600):
        status = (await peer.call_tool("get_index_status", {})).structured_content or {}
        indexed = int(status.get("documents_indexed", 0))
        if (
            status.get("status") == "queryable"
            and not status.get("in_flight")
            and not status.get("queue_depth")
            and indexed >= pages
        ):
            return indexed
        await asyncio.sleep(1)
    raise SystemExit(f"side_by_side: the peer did not index the corpus' {pages} pages in 10 minutes")


async def wait_until_peer_indexed(params: mcp.StdioServerParameters, errlog: Any) -> int:
    """Start the peer once and let it index the corpus (its index is kept for the timed sessions)."""
    async with client(params, errlog) as peer:
        return await peer_indexed(peer)


def answer_size(result: Any) -> int:
    """Characters of the answer as JSON: what the client received, give or take the JSON-RPC envelope."""
    return len(json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True), ensure_ascii=False))


def rows_in(result: Any) -> int | None:
    data = result.structured_content or {}
    for key in ("result", "documents", "notes", "results", "pages"):
        if isinstance(data.get(key), list):
            return len(data[key])
    return None


TICKS = os.sysconf("SC_CLK_TCK")


def children() -> set[int]:
    """The processes this one started (the servers that stdio_client spawns)."""
    found = set()
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as stat:
                if entry.isdigit() and int(stat.read().rsplit(")", 1)[1].split()[1]) == os.getpid():
                    found.add(int(entry))
        except (OSError, ValueError):
            pass
    return found


def process_cpu(pid: int) -> float:
    """Seconds of CPU (user and system, every thread) that a process has used so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class Measured:
    """Per server and case: wall samples (ms), and CPU seconds summed over the timed calls, in the server
    process and in this client process."""

    def __init__(self) -> None:
        labels = (PING, *(c[0] for c in CASES))
        self.samples: dict[str, dict[str, list[float]]] = {side: {label: [] for label in labels} for side in SIDES}
        self.server_cpu: dict[str, dict[str, float]] = {side: dict.fromkeys(labels, 0.0) for side in SIDES}
        self.client_cpu: dict[str, dict[str, float]] = {side: dict.fromkeys(labels, 0.0) for side in SIDES}
        self.sizes: dict[str, dict[str, tuple[int, Any]]] = {side: {} for side in SIDES}
        self.server_total: dict[str, float] = dict.fromkeys(SIDES, 0.0)  # every timed round, between calls too


SIDES = ("ours", "peer")


async def measure(
    ours: mcp.StdioServerParameters, peer: mcp.StdioServerParameters, calls: int, warmup: int, errlog: Any
) -> Measured:
    """Round robin over both servers: wall time of each call, and the CPU that each call cost the server
    process and this client process (read outside the timed span)."""
    measured = Measured()
    clock = time.perf_counter_ns
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = children()
        async with client(ours, errlog) as our_client:
            (our_pid,) = children() - before
            async with client(peer, errlog) as peer_client:
                (peer_pid,) = children() - before - {our_pid}
                await peer_indexed(peer_client)
                sides = (("ours", our_client, our_pid, 1, 2), ("peer", peer_client, peer_pid, 3, 4))
                for round_ in range(warmup + calls):
                    if round_ == warmup:
                        started = {side: process_cpu(pid) for side, _, pid, _, _ in sides}
                    timed: list[tuple[str, str, float, float, float]] = []
                    # Each server goes first every other round: the one called second may find the CPU still
                    # busy with the other's answer, or the other's background work.
                    for side, session, pid, tool_at, arguments_at in sides if round_ % 2 == 0 else sides[::-1]:
                        server_before, client_before = process_cpu(pid), time.process_time()
                        start = clock()
                        await session.send_ping()
                        elapsed = (clock() - start) / 1e6
                        timed.append(
                            (side, PING, elapsed, process_cpu(pid) - server_before, time.process_time() - client_before)
                        )
                        for case in CASES:
                            tool, arguments = cast(str, case[tool_at]), cast(dict[str, Any], case[arguments_at])
                            server_before, client_before = process_cpu(pid), time.process_time()
                            start = clock()
                            result = await session.call_tool(tool, arguments)
                            elapsed = (clock() - start) / 1e6
                            timed.append(
                                (
                                    side,
                                    case[0],
                                    elapsed,
                                    process_cpu(pid) - server_before,
                                    time.process_time() - client_before,
                                )
                            )
                            if result.is_error:
                                raise SystemExit(f"side_by_side: {side} {tool} {arguments} failed: {result.content}")
                            if case[0] not in measured.sizes[side]:
                                measured.sizes[side][case[0]] = (answer_size(result), rows_in(result))
                            elif rows_in(result) != measured.sizes[side][case[0]][1]:
                                raise SystemExit(
                                    f"side_by_side: {side} {tool} {arguments} changed its row count"
                                    " between calls (an index still being built?)"
                                )
                    if round_ >= warmup:
                        for side, label, elapsed, server, client_side in timed:
                            measured.samples[side][label].append(elapsed)
                            measured.server_cpu[side][label] += server
                            measured.client_cpu[side][label] += client_side
                measured.server_total = {side: process_cpu(pid) - started[side] for side, _, pid, _, _ in sides}
    return measured


async def first_answer(params: mcp.StdioServerParameters, errlog: Any) -> tuple[float, int | None]:
    """Seconds from spawning the server to the first keyword search's answer, and its result count."""
    start = time.perf_counter()
    async with client(params, errlog) as session:
        result = await session.call_tool(*FIRST_ANSWER)
        elapsed = time.perf_counter() - start
        if result.is_error:
            raise SystemExit(f"side_by_side: first search failed: {result.content}")
    return elapsed, rows_in(result)


SPLIT_CALLS = 100


def json_type(value: Any) -> str:
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "array",
        dict: "object",
        type(None): "null",
    }[type(value)]


def rows_typed(schema: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """The schema with the item schema of the answer's `result` rows typing every field the rows have, each
    by the JSON type of its values (`anyOf` where it is sometimes null): what a check of typed rows costs."""
    rows = answer.get("result")
    if not isinstance(rows, list) or not rows or not all(isinstance(row, dict) for row in rows):
        return schema
    seen: dict[str, set[str]] = {}
    for row in rows:
        for name, value in row.items():
            seen.setdefault(name, set()).add(json_type(value))
    properties = {}
    for name, types in seen.items():
        branches = [{"type": kind} for kind in sorted(types - {"null"})]
        branches += [{"type": "null"}] if "null" in types else []
        properties[name] = branches[0] if len(branches) == 1 else {"anyOf": branches}
    result = dict(schema["properties"]["result"], items={"type": "object", "properties": properties})
    return dict(schema, properties=dict(schema["properties"], result=result))


def rows_named(schema: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """The schema with an item schema naming the fields of the answer's `result` rows (`type` and `required`):
    what the check cost when each row had a subschema of its own."""
    rows = answer.get("result")
    if not isinstance(rows, list) or not rows or not all(isinstance(row, dict) for row in rows):
        return schema
    fields = sorted(set.intersection(*(set(row) for row in rows)))
    result = dict(schema["properties"]["result"], items={"type": "object", "required": fields})
    return dict(schema, properties=dict(schema["properties"], result=result))


def sql_alone(tool: str, arguments: dict[str, Any]) -> Any:
    """The query function our tool adapts, with the same arguments (no MCP, no JSON, no pydantic)."""
    from mkdocs_vault_mcp.index.query import queries
    from mkdocs_vault_mcp.index.search import answer as ranked
    from mkdocs_vault_mcp.mcp.arguments import shared_filters

    folder = shared_filters({"folder": arguments.get("folder")})
    return {
        "stats": lambda conn: queries.index_stats(conn),
        "get_recent": lambda conn: queries.get_recent(conn, limit=arguments.get("limit", 20)),
        "query_documents": lambda conn: queries.query_documents(
            conn, folder, sort=arguments.get("sort", "path"), limit=arguments.get("limit", 50)
        ),
        "count_documents": lambda conn: queries.count_documents(conn, folder),
        "search": lambda conn: ranked.search(conn, arguments.get("query", ""), folder),
    }.get(tool)


async def where_time_goes(index: Path) -> list[list[str]]:
    """Our cases in-process (no transport): the call with and without the SDK client's output-schema check,
    the check alone, the check alone with every field of the rows typed, and the SQL alone.

    In CPU time of this process (all threads: client, server and its reader thread), not wall time: the
    client and the server are one process here, and CPU time does not grow when other work on the machine
    holds the CPUs, which on a shared 2-CPU machine moves wall medians by several times.
    """
    from jsonschema.validators import validator_for
    from mcp.client.session import ClientSession
    from referencing import Registry

    from mkdocs_vault_mcp.index.publish import open_read_only
    from mkdocs_vault_mcp.mcp.server import IndexReader, create_server

    def p50_of(function: Any) -> float:
        function()
        samples = []
        for _ in range(SPLIT_CALLS):
            start = time.process_time_ns()
            function()
            samples.append((time.process_time_ns() - start) / 1e6)
        return statistics.median(samples)

    rows = [
        [
            "our call, in-process (CPU ms)",
            "p50",
            "without client check",
            "client check alone",
            "check, rows named",
            "check, rows typed",
            "sql alone",
        ]
    ]
    conn = open_read_only(index)
    checked = ClientSession.validate_tool_result
    async with mcp.Client(create_server(IndexReader(index)), mode="legacy") as session:
        schemas = {tool.name: tool.output_schema for tool in (await session.list_tools()).tools}
        for label, tool, arguments, _, _ in CASES:

            async def call_p50(tool: str = tool, arguments: dict[str, Any] = arguments) -> float:
                samples = []
                for round_ in range(10 + SPLIT_CALLS):
                    start = time.process_time_ns()
                    await session.call_tool(tool, arguments)
                    if round_ >= 10:
                        samples.append((time.process_time_ns() - start) / 1e6)
                return statistics.median(samples)

            whole = await call_p50()

            async def unchecked(self: Any, name: str, result: Any) -> None:
                return None

            ClientSession.validate_tool_result = unchecked  # type: ignore[method-assign]
            try:
                without = await call_p50()
            finally:
                ClientSession.validate_tool_result = checked  # type: ignore[method-assign]
            answer = (await session.call_tool(tool, arguments)).structured_content
            schema = schemas[tool]
            assert schema is not None, f"{tool} publishes no output schema"
            full = validator_for(schema)(schema, registry=Registry())
            typed_schema = rows_typed(schema, answer or {})
            typed = validator_for(typed_schema)(typed_schema, registry=Registry())
            named_schema = rows_named(schema, answer or {})
            named = validator_for(named_schema)(named_schema, registry=Registry())
            if list(typed.iter_errors(answer)) or list(named.iter_errors(answer)):
                raise SystemExit(f"side_by_side: a variant of the schema of {tool} rejects its own answer")
            query = sql_alone(tool, arguments)
            sql = f"{p50_of(lambda query=query: query(conn)):.2f}" if query else "-"
            rows.append(
                [
                    f"{label} ({tool})",
                    f"{whole:.2f}",
                    f"{without:.2f}",
                    f"{p50_of(lambda full=full, answer=answer: list(full.iter_errors(answer))):.2f}",
                    f"{p50_of(lambda named=named, answer=answer: list(named.iter_errors(answer))):.2f}",
                    f"{p50_of(lambda typed=typed, answer=answer: list(typed.iter_errors(answer))):.2f}",
                    sql,
                ]
            )
    conn.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100, help="timed rounds (default 100)")
    parser.add_argument("--warmup", type=int, default=10, help="untimed rounds first (default 10)")
    parser.add_argument("--starts", type=int, default=5, help="starts of each server for the first answer")
    parser.add_argument("--peer-version", default=DEFAULT_PEER_VERSION, help=f"default {DEFAULT_PEER_VERSION}")
    parser.add_argument(
        "--one-date",
        action="store_true",
        help=f"every file of the corpus at one time (a copy under {os.path.relpath(ONE_DATE, BENCH.parent)});"
        " results side_by_side_one_date",
    )
    args = parser.parse_args()

    global CORPUS, PEER_STATE
    if args.one_date:
        site, CORPUS, PEER_STATE = one_date_site(), ONE_DATE / "docs", OUT / "peer-one-date"
    else:
        site = DEFAULT_SITE
        ensure_site(site)
    if not CORPUS.is_dir():
        sys.exit(f"side_by_side: no corpus at {CORPUS}; run bench/build_overhead.py (or tool_latency.py) once")
    before = corpus_digest()
    ours, peer = our_params(site), peer_params(peer_venv(args.peer_version))
    with QuietServers() as errlog:
        peer_pages = asyncio.run(wait_until_peer_indexed(peer, errlog))
        measured = asyncio.run(measure(ours, peer, args.calls, args.warmup, errlog))
        samples, sizes = measured.samples, measured.sizes
        for label, (_, peer_rows) in sizes["peer"].items():
            if peer_rows == 0 or (peer_rows is not None and sizes["ours"][label][1] not in (None, peer_rows)):
                sys.exit(f"side_by_side: {label}: the peer listed {peer_rows} rows, ours {sizes['ours'][label][1]}")
        load_during = os.getloadavg()[0]
        starts: dict[str, list[tuple[float, int | None]]] = {"ours": [], "peer": []}
        for _ in range(args.starts):
            for side, params in (("ours", ours), ("peer", peer)):
                starts[side].append(asyncio.run(first_answer(params, errlog)))
                if not starts[side][-1][1]:
                    sys.exit(f"side_by_side: {side}'s first search found nothing")
    split = asyncio.run(where_time_goes(site / "vault-mcp" / "index.sqlite"))
    after = corpus_digest()
    if after != before:
        sys.exit(f"side_by_side: the corpus changed during the run ({before} -> {after})")

    p50 = {
        side: {label: statistics.median(values) for label, values in by_label.items()}
        for side, by_label in samples.items()
    }
    rows = [
        [
            "call",
            "our tool",
            "peer's tool",
            "ours p50 ms",
            "p95",
            "peer p50 ms",
            "p95",
            "ours/peer",
            "ours/our ping",
            "peer/peer ping",
            "ours chars (rows)",
            "peer chars (rows)",
        ]
    ]

    def size_cell(side: str, label: str) -> str:
        chars, count = sizes[side][label]
        return f"{chars:,}" + (f" ({count})" if count is not None else "")

    rows.append(
        [
            PING,
            "ping",
            "ping",
            f"{p50['ours'][PING]:.2f}",
            f"{percentile(samples['ours'][PING], 0.95):.2f}",
            f"{p50['peer'][PING]:.2f}",
            f"{percentile(samples['peer'][PING], 0.95):.2f}",
            f"{p50['ours'][PING] / p50['peer'][PING]:.2f}",
            "1.00",
            "1.00",
            "",
            "",
        ]
    )
    slower = []
    for label, our_tool, _, peer_tool, _ in CASES:
        ratio = p50["ours"][label] / p50["peer"][label]
        if ratio > 1:
            slower.append(f"{label}: ours {ratio:.2f}x the peer's {peer_tool}")
        rows.append(
            [
                label,
                our_tool,
                peer_tool,
                f"{p50['ours'][label]:.2f}",
                f"{percentile(samples['ours'][label], 0.95):.2f}",
                f"{p50['peer'][label]:.2f}",
                f"{percentile(samples['peer'][label], 0.95):.2f}",
                f"{ratio:.2f}",
                f"{p50['ours'][label] / p50['ours'][PING]:.2f}",
                f"{p50['peer'][label] / p50['peer'][PING]:.2f}",
                size_cell("ours", label),
                size_cell("peer", label),
            ]
        )
    cpu_rows = [["call", "ours: server", "client", "both", "peer: server", "client", "both", "ours/peer"]]
    for label in (PING, *(c[0] for c in CASES)):
        ours_cpu, peer_cpu = (
            [measured.server_cpu[side][label] / args.calls * 1e3, measured.client_cpu[side][label] / args.calls * 1e3]
            for side in SIDES
        )
        cells = (*ours_cpu, sum(ours_cpu), *peer_cpu, sum(peer_cpu))
        cpu_rows.append([label, *(f"{value:.2f}" for value in cells), f"{sum(ours_cpu) / sum(peer_cpu):.2f}"])
    between = {
        side: (measured.server_total[side] - sum(measured.server_cpu[side].values())) / args.calls * 1e3
        for side in SIDES
    }
    first = {side: statistics.median(s for s, _ in values) for side, values in starts.items()}
    first_rows = [
        ["start-up to first answer (spawn -> first search result)", "ours s", "peer s", "ours/peer"],
        [
            f"median of {args.starts} starts each, alternating",
            f"{first['ours']:.2f}",
            f"{first['peer']:.2f}",
            f"{first['ours'] / first['peer']:.2f}",
        ],
        ["min", f"{min(s for s, _ in starts['ours']):.2f}", f"{min(s for s, _ in starts['peer']):.2f}", ""],
        ["max", f"{max(s for s, _ in starts['ours']):.2f}", f"{max(s for s, _ in starts['peer']):.2f}", ""],
    ]
    from importlib.metadata import version

    report = "\n".join(
        [
            f"corpus: {os.path.relpath(CORPUS, BENCH.parent)} (1,643 Markdown pages, 13 languages"
            + (f", every file's time {ONE_DATE_NS // 10**9} (one date)" if args.one_date else "")
            + f"; digest {before},"
            " unchanged after the run)",
            f"ours: mkdocs-vault-mcp serve {os.path.relpath(site, BENCH.parent)} (the index the plugin built"
            " from those files)",
            f"peer: {PEER_PACKAGE} {args.peer_version} (bench-only venv), read-only, no file watcher, no embeddings"
            f" provider; its own index of the same folder ({peer_pages} notes)",
            f"client: mcp {version('mcp')} mcp.Client over stdio, one session per server, protocol 2025-11-25"
            f" (ping exists only there); {args.calls} timed rounds after {args.warmup} warm-up rounds; each round"
            " pings then calls every case on one server, then on the other (each first every other round)",
            "ratio: ours/peer is our p50 over the peer's p50 in the same rounds (below 1: ours faster);"
            " x/ping is each server's p50 over its own ping p50",
            "chars: the answer's CallToolResult as JSON (content and structured content), first call; rows where it"
            " lists rows",
            f"load average {load_during:.1f} after the rounds (other work on the machine inflates every number;"
            " the ratios less so)",
            "",
            table(rows),
            "",
            table(first_rows),
            "",
            "ours slower than the peer's nearest tool: " + ("; ".join(slower) if slower else "none"),
            "",
            "CPU per call in the same rounds (ms, mean over the timed calls): the server process (every thread),"
            f" read from /proc/PID/stat in clock ticks of {1e3 / TICKS:g} ms, so a mean over {args.calls} calls is"
            " good to some 0.1 ms; and this client process (mcp.Client: the JSON-RPC message read, the result's"
            " pydantic model, the output-schema check). Unlike wall time, CPU is not inflated by other work on the"
            " machine. A server's CPU between calls (work after an answer was sent) is counted in no row: per round,"
            f" ours {between['ours']:.2f} ms, the peer's {between['peer']:.2f} ms",
            "",
            table(cpu_rows),
            "",
            f"where our time goes: each of our cases in-process (mcp.Client on create_server, no transport),"
            f" {SPLIT_CALLS} calls each, p50 of the process's CPU time per call (client, server and reader thread"
            " together; unlike wall time, not inflated by other work on the machine); 'client check' is the SDK client's"
            " jsonschema check of the answer against"
            " the tool's published output schema (mcp.ClientSession.validate_tool_result, switched off for the"
            " second column); 'rows named' is the same check with an item schema giving each `result` row's fields"
            " (`type` and `required`, one subschema per row, as published before the rows were named in the"
            " description only); 'rows typed' is the same check with the schema of each `result` row typing every field"
            ' the rows have (`{"type": "string"}` and so on, as a schema that describes each field\'s type'
            " would), what the check would cost if the rows were published typed",
            "",
            table(split),
        ]
    )
    print(report)
    path = write_results("side_by_side_one_date" if args.one_date else "side_by_side", report)
    print(f"written to {os.path.relpath(path, BENCH.parent)}")


if __name__ == "__main__":
    main()
