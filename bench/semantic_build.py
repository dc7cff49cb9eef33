"""The first build with search by meaning (`semantic`): sections embedded a second, whole-build wall and peak memory.

    .venv/bin/python bench/run.py semantic_build --against /work/wt-base-680 \\
        [--venv-fastembed bench/out/fastembed-venv] [--rounds 2]

Builds the FastAPI English docs (as bench/search_quality.py does) with `semantic` naming all-MiniLM-L6-v2 int8
(bench/semantic_quality.py's model folder), from an empty work folder each time: no plugin cache, no embedding
cache, so every section is embedded. Each round builds with this checkout, then with the `--against` checkout
(its own `.venv`, a link to this one's is fine, with its root first on PYTHONPATH), then embeds the same section
texts with fastembed, in that order, ROUNDS times.

- sections/s: the sections embedded over the seconds between the build log's "embedding N sections" line and its
  "embedded N sections" line (timed as each line arrives);
- wall: the whole `mkdocs build`;
- peak RSS: the largest sum of the resident memory of the build's process tree (the build and its writer),
  sampled from /proc every SAMPLE_SECONDS; also the largest single process.

fastembed runs in a venv of its own (`--venv-fastembed`: `python -m venv DIR && DIR/bin/pip install fastembed
onnxruntime==<this venv's>`), never in the project's: `TextEmbedding` with the model registered by
`add_custom_model` and loaded from a local folder (`specific_model_path`: the same model.onnx and tokenizer, cut at
this checkout's MAX_TOKENS), so nothing is downloaded. It embeds this checkout's section texts (the index of the
round's build), its default batch size, with its peak RSS sampled the same way. Without the venv it is left out.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from mkdocs_vault_mcp.index.search.embedding import MAX_TOKENS  # noqa: E402
from mkdocs_vault_mcp.index.search.semantic import section_text  # noqa: E402
from report import checkout_env, describe, tree_rss_kb, write_results  # noqa: E402
from search_quality import CONFIG, CORPORA, OUT  # noqa: E402
from semantic_quality import model_folder  # noqa: E402

SAMPLE_SECONDS = 0.1
WORK = OUT / "semantic-build"
TOKENIZER_FILES = ("config.json", "special_tokens_map.json", "tokenizer_config.json")

FASTEMBED = """
import json, sys, time
from fastembed import TextEmbedding
from fastembed.common.model_description import ModelSource, PoolingType
folder, texts_file = sys.argv[1], sys.argv[2]
texts = json.load(open(texts_file))
TextEmbedding.add_custom_model(
    "local/all-minilm-l6-v2-int8", pooling=PoolingType.MEAN, normalization=True,
    sources=ModelSource(hf="local/all-minilm-l6-v2-int8"), dim=384, model_file="model.onnx",
)
model = TextEmbedding("local/all-minilm-l6-v2-int8", specific_model_path=folder, local_files_only=True)
started = time.perf_counter()
vectors = list(model.embed(texts))
print(len(vectors), time.perf_counter() - started)
"""


class Sampled(NamedTuple):
    """What run_sampled saw of one command."""

    wall: float  # seconds
    peak: float  # MB resident, the process tree summed, at its largest
    largest: float  # MB resident of its largest process
    lines: list[tuple[float, str]]  # its stderr lines, each with the second it arrived (from the start), then stdout


@dataclass
class Runs:
    """One system's rounds: sections, sections/s of the embedding, wall s, peak RSS (MB, tree sum and largest)."""

    sections: list[int] = field(default_factory=list)
    rate: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    peak: list[float] = field(default_factory=list)
    largest: list[float] = field(default_factory=list)
    load: list[float] = field(default_factory=list)

    def add(self, sections: int, seconds: float, sampled: Sampled) -> None:
        """One round: `sections` embedded in `seconds`, and run_sampled's wall and memory."""
        self.sections.append(sections)
        self.rate.append(sections / seconds)
        self.wall.append(sampled.wall)
        self.peak.append(sampled.peak)
        self.largest.append(sampled.largest)


def run_sampled(command: list[str], cwd: Path, env: dict[str, str]) -> Sampled:
    """Run `command` and sample its process tree's memory while it runs."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[tuple[float, str]] = []
    reader = threading.Thread(
        target=lambda: lines.extend((time.perf_counter() - started, line) for line in process.stderr or [])
    )
    reader.start()
    peak = largest = 0.0
    while process.poll() is None:
        sizes = tree_rss_kb(process.pid)
        peak, largest = max(peak, sum(sizes) / 1024), max(largest, max(sizes, default=0) / 1024)
        time.sleep(SAMPLE_SECONDS)
    wall = time.perf_counter() - started
    reader.join()
    output = process.stdout.read() if process.stdout else ""
    if process.returncode:
        sys.exit(f"semantic_build: {' '.join(command)} failed:\n{''.join(line for _, line in lines)}{output}")
    lines.append((wall, output))
    return Sampled(wall, peak, largest, lines)


def build(checkout: Path, folder: Path, runs: Runs) -> Path:
    """A first build with `semantic` by `checkout`, from nothing: its figures into `runs`; the site's index."""
    work = WORK / checkout.name
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(CORPORA / "en" / "docs", work / "docs")
    (work / "mkdocs.yml").write_text(CONFIG.replace("  - vault-mcp\n", f"  - vault-mcp:\n      semantic: {folder}\n"))
    runs.load.append(os.getloadavg()[0])
    mkdocs = checkout / ".venv" / "bin" / "mkdocs"
    sampled = run_sampled([str(mkdocs), "build"], work, checkout_env(checkout))
    lines = sampled.lines
    start = next(at for at, line in lines if "vault-mcp: embedding " in line)
    end, count = next((at, int(line.split("embedded ")[1].split()[0])) for at, line in lines if " sections in " in line)
    runs.add(count, end - start, sampled)
    return work / "site" / "vault-mcp" / "index.sqlite"


def fastembed_folder(folder: Path) -> Path:
    """The model folder as fastembed loads it: the same files, and the tokenizer's config cut at MAX_TOKENS."""
    target = OUT / "minilm-int8-fastembed"
    target.mkdir(parents=True, exist_ok=True)
    source = Path(os.path.realpath(folder / "tokenizer.json")).parent
    for name in ("model.onnx", "tokenizer.json"):
        if not (target / name).exists():
            (target / name).symlink_to(os.path.realpath(folder / name))
    for name in TOKENIZER_FILES:
        shutil.copyfile(source / name, target / name)
    config = json.loads((target / "tokenizer_config.json").read_text())
    config["model_max_length"] = MAX_TOKENS
    (target / "tokenizer_config.json").write_text(json.dumps(config))
    return target


def fastembed(venv: Path, folder: Path, index: Path, runs: Runs) -> None:
    """fastembed embeds the texts of the sections of `index`, as this checkout embeds them."""
    conn = sqlite3.connect(index)
    texts = [section_text(*row) for row in conn.execute("SELECT title, headings, body FROM sections ORDER BY id")]
    conn.close()
    texts_file = WORK / "texts.json"
    texts_file.write_text(json.dumps(texts))
    runs.load.append(os.getloadavg()[0])
    command = [str(venv / "bin" / "python"), "-c", FASTEMBED, str(folder), str(texts_file)]
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"} | {"HF_HUB_OFFLINE": "1"}
    sampled = run_sampled(command, WORK, env)
    count, seconds = sampled.lines[-1][1].split()
    runs.add(int(count), float(seconds), sampled)


def row(name: str, runs: Runs) -> str:
    def median(values: list[float]) -> str:
        return f"{statistics.median(values):.1f} {[round(value, 1) for value in values]}"

    return (
        f"{name}: sections {runs.sections[0]}; sections/s {median(runs.rate)}; wall s {median(runs.wall)};"
        f" peak RSS MB (tree sum) {median(runs.peak)}; largest process MB {median(runs.largest)};"
        f" load {[round(load, 2) for load in runs.load]}\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, required=True, help="the baseline checkout (with its .venv)")
    parser.add_argument("--venv-fastembed", type=Path, default=OUT / "fastembed-venv", help="fastembed's own venv")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, each system once a round (default 2)")
    args = parser.parse_args()
    folder = model_folder()
    against = args.against.resolve()
    checkout_env(ROOT), checkout_env(against)  # both import their own package, or the run stops here
    with_fastembed = (args.venv_fastembed / "bin" / "python").is_file()
    mine, base, other = Runs(), Runs(), Runs()
    for number in range(args.rounds):
        index = build(ROOT, folder, mine)
        build(against, folder, base)
        if with_fastembed:
            fastembed(args.venv_fastembed, fastembed_folder(folder), index, other)
        print(f"round {number + 1}: this {mine.rate[-1]:.1f}/s, baseline {base.rate[-1]:.1f}/s", flush=True)
    report = (
        f"The first build with `semantic` (all-MiniLM-L6-v2 int8, no cache) of the FastAPI English docs,"
        f" {args.rounds} rounds alternated, {os.cpu_count()} CPUs; peak RSS sampled from /proc every"
        f" {SAMPLE_SECONDS} s over the build's process tree.\n"
        + row(f"this checkout {describe(ROOT)}", mine)
        + row(f"baseline {describe(against)}", base)
    )
    if with_fastembed:
        report += row(
            f"fastembed (its default batch, cut at {MAX_TOKENS} word pieces; wall: the embedding's process)", other
        )
    report += (
        f"this checkout / baseline, sections/s: {statistics.median(mine.rate) / statistics.median(base.rate):.2f}\n"
    )
    write_results("semantic_build", report)
    print(report)


if __name__ == "__main__":
    main()
