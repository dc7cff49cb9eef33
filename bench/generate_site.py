"""Generate a large MkDocs site for the benchmarks: N pages (default 100,000) in folders 4 deep.

Every page has front matter: a title, 1-5 tags from a vocabulary of 200 (Zipf-like: a few tags on many
pages, most on few), 1-2 categories, and an `updated:` datetime spread over 5 years (some in UTC, some
with an offset, so month buckets meet pages whose local month differs), read through
`modified_meta: updated`. The body is an H1 and 3-6 H2 sections of a few sentences of generated prose,
its words Zipf-like from a small word list. Deterministic for a given --seed.

    .venv/bin/python bench/generate_site.py [--pages 100000] [--out bench/out/large-site] [--seed 7]

The site is written to OUT/docs with OUT/mkdocs.yml (theme mkdocs, plugin vault-mcp with
modified_meta: updated); OUT/site.json records the parameters so callers can tell it is complete.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import random
import shutil
import time
from pathlib import Path

from report import command_line, write_results  # bench/ is on sys.path when a script runs

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DEFAULT_OUT = BENCH / "out" / "large-site"
RESULTS = BENCH / "results"

TAG_COUNT = 200
FIRST_DAY = dt.datetime(2021, 1, 1, tzinfo=dt.UTC)
SPAN_SECONDS = 5 * 365 * 86_400
OFFSETS = [
    dt.UTC,
    dt.UTC,
    dt.timezone(dt.timedelta(hours=2)),
    dt.timezone(dt.timedelta(hours=-7)),
    dt.timezone(dt.timedelta(hours=9)),
]
# Folder fan-out per level (10 x 8 x 6 x 5 = 2,400 leaf folders, ~42 pages each at 100,000 pages).
FAN_OUT = (10, 8, 6, 5)

WORDS = """
access account action adapter address agent alert algorithm alias allocate anchor api app archive argument
array asset async attribute audit backend backup balance bandwidth batch benchmark binary bind block body
boolean boot branch broker browser buffer bug build bundle byte cache callback canary capacity certificate
channel checksum chunk class cli client clock cluster code column command commit compile component
compress config connection console constant container context contract cookie core counter credential cron
cursor daemon dashboard data database dataset deadline debug default delete dependency deploy descriptor
device dialog digest directory disk dispatch document domain driver duration edge editor element encode
endpoint engine entity entry environment error event exception export expression extension factory feature
field file filter firewall flag folder font fork format frame function gateway generator graph grid group
handler hash header heap helper host hook identity image import index input instance integer interface
iterator job journal kernel key label lambda latency layer layout library limit link listener load locale
lock log loop manifest map marker memory message metadata method metric middleware migration mirror mode
model module monitor mount namespace network node notebook object offset operator option order origin
output package page parameter parser partition patch path payload peer permission pipeline plugin pointer
policy pool port process profile project prompt property protocol proxy query queue quota range record
redirect region registry release replica report repository request resolver resource response retry role
rollback route row rule runtime sandbox scheduler schema scope script secret section segment selector
sensor server service session shard shell signal snapshot socket source span stack stage state storage
stream string subnet suite switch symbol sync table tag target task template tenant terminal test thread
threshold ticket timeout token topic trace transaction trigger tunnel type unit update upload user value
variable vector version view volume webhook widget window worker workflow zone
quickly safely always never often rarely carefully usually simply correctly explicitly gracefully
creates reads writes returns sends stores checks builds starts stops opens closes loads saves moves copies
handles keeps drops finds sorts merges splits maps counts tracks limits waits runs calls uses needs
new old fast slow small large local remote public private shared empty full valid invalid stable
the a of to and in for with on by from at as is are this that each every when if then before after
""".split()
NAMES = """alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau
upsilon phi chi psi omega aurora borealis cascade dune ember fjord glacier harbor island jungle karst lagoon
mesa nebula oasis prairie quarry reef savanna tundra urban valley willow yonder zenith""".split()
CATEGORIES = [
    "tutorial",
    "how-to",
    "reference",
    "explanation",
    "release",
    "blog",
    "faq",
    "internals",
    "security",
    "operations",
    "design",
    "community",
]


def zipf_weights(count: int, exponent: float = 1.07) -> list[float]:
    return [1 / (rank**exponent) for rank in range(1, count + 1)]


def tag_vocabulary() -> list[str]:
    names = [f"{a}-{b}" for a, b in itertools.product(NAMES[:20], NAMES[20:])]
    return sorted(set(names), key=names.index)[:TAG_COUNT]


def folders(rng: random.Random) -> list[str]:
    pools = [rng.sample(NAMES, fan) for fan in FAN_OUT]
    leaves = []
    for a, b, c, d in itertools.product(*(range(fan) for fan in FAN_OUT)):
        leaves.append("/".join([pools[0][a], f"{pools[1][b]}-{b}", f"{pools[2][c]}-{c}", f"part-{d}"]))
    return leaves


class Prose:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.words = WORDS[:]
        rng.shuffle(self.words)
        self.cumulative = list(itertools.accumulate(zipf_weights(len(self.words), 0.8)))

    def sentence(self) -> str:
        count = self.rng.randint(6, 14)
        words = self.rng.choices(self.words, cum_weights=self.cumulative, k=count)
        return " ".join(words).capitalize() + "."

    def title(self) -> str:
        return " ".join(self.rng.choices(self.words, cum_weights=self.cumulative, k=self.rng.randint(2, 5))).title()

    def paragraph(self) -> str:
        return " ".join(self.sentence() for _ in range(self.rng.randint(2, 5)))


def page_text(rng: random.Random, prose: Prose, tags: list[str], tag_cumulative: list[float], number: int) -> str:
    title = f"{prose.title()} {number}"
    chosen = list(dict.fromkeys(rng.choices(tags, cum_weights=tag_cumulative, k=rng.randint(1, 5))))
    categories = list(dict.fromkeys(rng.choices(CATEGORIES, k=rng.randint(1, 2))))
    updated = (FIRST_DAY + dt.timedelta(seconds=rng.randrange(SPAN_SECONDS))).astimezone(rng.choice(OFFSETS))
    lines = [
        "---",
        f"title: {title}",
        f"tags: [{', '.join(chosen)}]",
        f"categories: [{', '.join(categories)}]",
        f"updated: {updated.isoformat()}",
        "---",
        "",
        f"# {title}",
        "",
        prose.paragraph(),
        "",
    ]
    for _ in range(rng.randint(3, 6)):
        lines += [f"## {prose.title()}", "", prose.paragraph(), ""]
        if rng.random() < 0.3:
            lines += [prose.paragraph(), ""]
    return "\n".join(lines)


MKDOCS_YML = """site_name: Generated site ({pages} pages)
docs_dir: docs
theme:
  name: mkdocs
plugins:
  - vault-mcp:
      modified_meta: updated
"""


def generate(pages: int, out: Path, seed: int) -> dict:
    """Write the site; returns its parameters (also written to OUT/site.json, last, as the completion mark)."""
    rng = random.Random(seed)
    marker = out / "site.json"
    marker.unlink(missing_ok=True)
    shutil.rmtree(out / "docs", ignore_errors=True)
    leaves = folders(rng)
    tags = tag_vocabulary()
    tag_cumulative = list(itertools.accumulate(zipf_weights(len(tags))))
    prose = Prose(rng)
    docs = out / "docs"
    docs.mkdir(parents=True)
    (docs / "index.md").write_text(f"# Generated site\n\n{pages} generated pages in folders 4 deep.\n")
    made: set[str] = set()
    written = 1
    size = 0
    for number in range(1, pages):
        folder = leaves[(number * 7919) % len(leaves)]  # a stride, so each leaf fills evenly
        if folder not in made:
            (docs / folder).mkdir(parents=True, exist_ok=True)
            made.add(folder)
        text = page_text(rng, prose, tags, tag_cumulative, number)
        (docs / folder / f"page-{number:06d}.md").write_text(text, encoding="utf-8")
        size += len(text)
        written += 1
    (out / "mkdocs.yml").write_text(MKDOCS_YML.format(pages=pages))
    facts = {
        "pages": written,
        "seed": seed,
        "leaf_folders": len(made),
        "tags": len(tags),
        "markdown_bytes": size,
        "fan_out": list(FAN_OUT),
    }
    marker.write_text(json.dumps(facts, indent=1))
    return facts


def existing(out: Path, pages: int, seed: int) -> dict | None:
    """The parameters of a complete site already at OUT with these pages and seed, else None."""
    try:
        facts = json.loads((out / "site.json").read_text())
    except (FileNotFoundError, ValueError):
        return None
    return facts if facts.get("pages") == pages and facts.get("seed") == seed else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000, help="pages to generate (default 100000)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="site folder (default bench/out/large-site)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.pages < 2:
        parser.error("--pages must be 2 or more")
    start = time.perf_counter()
    facts = generate(args.pages, args.out, args.seed)
    seconds = time.perf_counter() - start
    report = "\n".join(
        [
            f"command: {command_line()}",
            f"site: {os.path.relpath(args.out, REPO)}/docs, mkdocs.yml beside it",
            "",
            f"pages            {facts['pages']}",
            f"leaf folders     {facts['leaf_folders']} (4 deep, fan-out {' x '.join(map(str, FAN_OUT))})",
            f"tag vocabulary   {facts['tags']} (1-5 per page, Zipf-like), categories {len(CATEGORIES)} (1-2 per page)",
            f"updated dates    {FIRST_DAY.date()} + 5 years, offsets UTC/+02:00/-07:00/+09:00",
            f"Markdown         {facts['markdown_bytes'] / 1e6:.1f} MB",
            f"generated in     {seconds:.1f} s",
            "",
        ]
    )
    print(report)
    write_results("generate_site", report)


if __name__ == "__main__":
    main()
