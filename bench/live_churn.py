"""How long a `wait_for_pending_writes` call takes after a burst of saves and deletions beside `mkdocs serve`,
this checkout beside another one (`--against`).

    .venv/bin/python bench/run.py live_churn [--against DIR] [--runs 3] [--bursts 3] [--ops 100] [--pages 200]
        [--gap 0.01] [--modes serve,dirty] [--name NAME]

A generated site (--pages pages with `tags:` front matter, theme `mkdocs`, one git commit) is copied afresh
for each run; a real `mkdocs serve` of the checkout's own venv (DIR/.venv/bin/mkdocs; `--dirty` in the `dirty`
mode) serves it, with the plugin's MCP server on a port of its own and `wait_timeout: 120`. Runs alternate
between the checkouts (A, B, A, B, ...) so the machine's load weighs on both alike. A burst is --ops operations
(fixed seed), --gap seconds apart: save a page with new text and the burst's tag, delete a page, or create a
deleted page again. Then one `count_documents` call with `wait_for_pending_writes: true` filtering on the
burst's tag, whose expected total only the final state gives, timed from the end of the last operation to its
answer. The serve log (bench/out/live-churn/run-*.log) gives the rebuilds meanwhile, the failed ones and
MkDocs' own "built in" times. Raw JSON-RPC over HTTP: `initialize` first, and a session id, if the server
hands one out (caefd90's does), sent back on every later request.

Takes ~5 minutes at the defaults. Writes bench/results/speed/live_churn.json.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from report import REPO, checkout_env, describe, table, write_results  # bench/ is on sys.path when a script runs

OUT = REPO / "bench" / "out" / "live-churn"
SEED = 11
# Freshness' DEFAULT_SETTLE_SECONDS: a change event no rebuild follows holds a waiting call this long.
SETTLE = 3.0
CONFIG = """site_name: Churn site
docs_dir: docs
theme:
  name: mkdocs
nav:
  - index.md
not_in_nav: |
  /**
plugins:
  - vault-mcp:
      mcp_port: {mcp_port}
      wait_timeout: 120
"""
WORDS = "alpha beta gamma delta index query token build commit page folder writer reader server cache".split()
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def page_text(number: int, tag: str, rng: random.Random) -> str:
    body = " ".join(rng.choice(WORDS) for _ in range(60))
    return f"---\ntitle: Page {number}\ntags: [{tag}, group-{number % 7}]\n---\n\n# Page {number}\n\n{body}\n"


def make_template(pages: int) -> Path:
    """The generated site, written once per page count and copied for every run."""
    template = OUT / f"template-{pages}"
    if (template / ".git").is_dir():
        return template
    shutil.rmtree(template, ignore_errors=True)
    docs = template / "docs"
    docs.mkdir(parents=True)
    rng = random.Random(SEED)
    (docs / "index.md").write_text("# Churn site\n\nGenerated pages.\n")
    for number in range(pages):
        (docs / f"p{number:04d}.md").write_text(page_text(number, "initial", rng))
    (template / ".gitignore").write_text(".cache/\nsite/\nmkdocs.yml\n")
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.org"]
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "generated"]):
        subprocess.run([*git, *command], cwd=template, check=True)
    return template


class Serve:
    """A `mkdocs serve` subprocess of one checkout, its log lines kept with the instant each was read."""

    def __init__(self, checkout: Path, site: Path, mcp_port: int, dirty: bool) -> None:
        self.lines: list[tuple[float, str]] = []
        self.started = time.monotonic()
        command = [str(checkout / ".venv" / "bin" / "mkdocs"), "serve", "-f", str(site / "mkdocs.yml")]
        command += ["--dev-addr", f"127.0.0.1:{free_port()}", *(["--dirty"] if dirty else [])]
        env = {**checkout_env(checkout), "NO_MKDOCS_2_WARNING": "1"}  # each checkout's venv imports its own package
        self.process = subprocess.Popen(
            command, cwd=site, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def since(self, pattern: str, after: float) -> list[tuple[float, re.Match]]:
        found = [(at, re.search(pattern, line)) for at, line in list(self.lines) if at >= after]
        return [(at, match) for at, match in found if match]

    def wait_for(self, pattern: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.since(pattern, 0):
            if self.process.poll() is not None or time.monotonic() > deadline:
                tail = "\n".join(line for _, line in self.lines[-30:])
                raise SystemExit(f"live_churn: no {pattern!r} in the serve log; it ends:\n{tail}")
            time.sleep(0.05)

    def cpu(self) -> float:
        """CPU seconds of the serve process and of its children it has reaped (a forked writer)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Client:
    """Raw JSON-RPC over Streamable HTTP, for a stateless server and for one that hands out a session id."""

    def __init__(self, port: int) -> None:
        self.http = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        self.headers = dict(HEADERS)
        info = {"name": "live_churn", "version": "1"}
        params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": info}
        self.request("initialize", params)
        self.request("notifications/initialized", None)

    def request(self, method: str, params: dict | None) -> dict | None:
        message: dict = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message |= {"id": 1, "params": params}
        try:
            self.http.request("POST", "/mcp", json.dumps(message), self.headers)
            response = self.http.getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            # The server closes a kept-alive connection left idle (a long burst): connect again once.
            self.http.close()
            self.http.request("POST", "/mcp", json.dumps(message), self.headers)
            response = self.http.getresponse()
        text = response.read().decode()
        if session := response.getheader("mcp-session-id"):
            self.headers["Mcp-Session-Id"] = session
        if response.status >= 300:
            raise RuntimeError(f"HTTP {response.status}: {text[:300]}")
        data = [line[5:] for line in text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1]) if data else (json.loads(text) if text.strip() else None)

    def count(self, tag: str) -> int:
        arguments = {"filters": {"tags": tag}, "wait_for_pending_writes": True}
        answer = self.request("tools/call", {"name": "count_documents", "arguments": arguments})
        assert answer is not None and "result" in answer, answer
        return int(answer["result"]["structuredContent"]["total"])


def connect(port: int, serve: Serve, timeout: float = 60) -> Client:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return Client(port)
        except (OSError, RuntimeError, http.client.HTTPException):
            if time.monotonic() > deadline or serve.process.poll() is not None:
                raise
            time.sleep(0.1)


def burst(docs: Path, pages: dict[str, str | None], rng: random.Random, tag: str, ops: int, gap: float) -> None:
    """`ops` saves, deletions and re-creations; `pages` maps each page to the tag its text holds (None: deleted)."""
    alive = {name for name, held in pages.items() if held is not None}
    deleted = sorted(name for name, held in pages.items() if held is None)
    for number in range(ops):
        if number and gap:
            time.sleep(gap)
        kind = rng.choice(("save", "save", "delete", "create")) if deleted else rng.choice(("save", "delete"))
        if kind == "delete":
            name = rng.choice(sorted(alive))
            (docs / name).unlink()
            alive.remove(name)
            pages[name] = None
            deleted.append(name)
            continue
        name = rng.choice(sorted(alive)) if kind == "save" else deleted.pop(rng.randrange(len(deleted)))
        (docs / name).write_text(page_text(int(name[1:5]), tag, rng) + f"\nEdit {number} of {tag}.\n")
        alive.add(name)
        pages[name] = tag


def measure_run(checkout: Path, template: Path, label: str, args: argparse.Namespace, run: int) -> list[dict]:
    """One serve run of `checkout` (label: its name and the mode): --bursts bursts, each timed."""
    site = OUT / f"run-{label}"
    shutil.rmtree(site, ignore_errors=True)
    shutil.copytree(template, site, symlinks=True)
    mcp_port = free_port()
    (site / "mkdocs.yml").write_text(CONFIG.format(mcp_port=mcp_port))
    docs = site / "docs"
    pages: dict[str, str | None] = {p.name: "initial" for p in docs.glob("p*.md")}
    rng = random.Random(SEED * 1000 + run)
    serve = Serve(checkout, site, mcp_port, label.endswith("dirty"))
    results = []
    try:
        serve.wait_for(r"Serving on ", timeout=300)
        client = connect(mcp_port, serve)
        for number in range(args.bursts):
            client.count("initial")  # nothing pending before the burst
            time.sleep(1.0)
            tag = f"churn-{run}-{number}"
            started, cpu = time.monotonic(), serve.cpu()
            burst(docs, pages, rng, tag, args.ops, args.gap)
            ended = time.monotonic()
            total = client.count(tag)
            answered = time.monotonic()
            expected = sum(1 for held in pages.values() if held == tag)
            time.sleep(2.0)  # a rebuild the answer did not wait for shows up in the log by now
            cpu = serve.cpu() - cpu
            built = serve.since(r"Documentation built in ([\d.]+) seconds", started)
            result: dict[str, Any] = {
                "wait": answered - ended,
                "burst": ended - started,
                "correct": total == expected,
                "cpu": cpu,
                "rebuilds": len(serve.since(r"Building documentation", started)),
                "failed": len(serve.since(r"An error happened during the rebuild", started)),
                "after_answer": len(serve.since(r"Building documentation", answered)),
                "built_in": [float(match[1]) for _, match in built],
                "last_built": max((at for at, _ in built), default=answered) - ended,
            }
            print(
                f"[{label} run {run} burst {number}] wait {result['wait']:.2f} s, {total}/{expected}"
                f" {'ok' if result['correct'] else 'WRONG'}, rebuilds {result['rebuilds']}"
                f" ({result['failed']} failed; built in {', '.join(f'{s:.2f}' for s in result['built_in'])} s),"
                f" after the answer {result['after_answer']}",
                flush=True,
            )
            results.append(result)
    finally:
        serve.stop()
        # Kept beside the site for reading where the time went; bench/out is not committed.
        log = "\n".join(f"{at - serve.started:9.3f} {line}" for at, line in serve.lines)
        (OUT / f"run-{label}-{run}.log").write_text(log + "\n")
    return results


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def report(checkouts: dict[str, Path], measured: dict[str, list[dict]], args: argparse.Namespace) -> str:
    rows = [["", *measured], ["checkout", *[describe(checkouts[n.split()[0]]).split()[0] for n in measured]]]
    for key, label in [
        ("wait", "last operation -> answer, s: median (range)"),
        ("burst", "the burst itself, s"),
        ("last_built", "last operation -> last rebuild's end, s"),
        ("rebuilds", "rebuilds per burst"),
        ("failed", "  of which failed (a page deleted while read)"),
        ("cpu", "serve's CPU seconds per burst (until 2 s after the answer)"),
    ]:
        rows.append([label, *[spread([r[key] for r in results]) for results in measured.values()]])
    rows.append(
        [
            "MkDocs 'built in' per rebuild, s",
            *[spread([s for r in rs for s in r["built_in"]] or [0.0]) for rs in measured.values()],
        ]
    )
    for label, counted in [
        (f"waits of {SETTLE} s or more (the plugin's settle window)", lambda r: r["wait"] >= SETTLE),
        ("bursts with a rebuild started after the answer", lambda r: r["after_answer"] > 0),
        ("answers correct", lambda r: r["correct"]),
    ]:
        rows.append([label, *[f"{sum(counted(r) for r in rs)}/{len(rs)}" for rs in measured.values()]])
    lines = [
        f"{args.pages} generated pages, theme mkdocs; `mkdocs serve` (and `--dirty`) of each checkout's venv;",
        f"{args.runs} serve runs a checkout and mode, alternated between the checkouts, {args.bursts} bursts a run;",
        f"a burst: {args.ops} operations {args.gap} s apart (save with a new tag, delete, create again; seed {SEED});",
        "then count_documents(filters={tags: the burst's tag}, wait_for_pending_writes=true), timed from the end",
        "of the burst's last operation; correct: the total the final state gives",
        f"load average at the start: {args.load:.2f}",
        "",
        table(rows),
        "",
        "every wait, s, in the order measured:",
        *[f"  {name}: " + ", ".join(f"{r['wait']:.2f}" for r in rs) for name, rs in measured.items()],
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, help="another checkout with its own .venv")
    parser.add_argument("--runs", type=int, default=3, help="serve runs per checkout and mode")
    parser.add_argument("--bursts", type=int, default=3, help="bursts per serve run")
    parser.add_argument("--ops", type=int, default=100)
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--gap", type=float, default=0.01, help="seconds between two operations")
    parser.add_argument("--modes", default="serve,dirty", help="serve (plain), dirty (mkdocs serve --dirty)")
    parser.add_argument("--name", default="live_churn", help="the results file's name")
    args = parser.parse_args()
    args.load = os.getloadavg()[0]
    checkouts = {"this": REPO}
    if args.against:
        checkouts["against"] = args.against.resolve()
    template = make_template(args.pages)
    measured: dict[str, list[dict]] = {}
    for mode in args.modes.split(","):
        for run in range(args.runs):
            for name, checkout in checkouts.items():
                label = f"{name} {mode}"
                results = measure_run(checkout, template, label.replace(" ", "-"), args, run)
                measured.setdefault(label, []).extend(results)
    text = report(checkouts, measured, args)
    print("\n" + text)
    write_results(args.name, text)


if __name__ == "__main__":
    main()
