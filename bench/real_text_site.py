"""Generate a large MkDocs site of real text: the real sections of ../shared/corpora, recombined.

Generated prose (generate_site.py) draws on ~450 words, so every word is in 5% or more of the sections and
search speed at scale is measured on a vocabulary no site has. This site is made of the corpora's own text,
so it keeps their long tail of rare words, code names and 13 languages:

- The pool: every page of fastapi-docs (13 languages) and material-docs, read in place (never changed), its
  front matter dropped, cut at its level-2 headings outside code fences into an intro (the text under the H1)
  and chunks (a `##` heading with everything under it, its `###` subsections included).
- A page: a source language, chosen in proportion to its pages; a source page of it, whose intro opens the
  page and whose folder the page goes under; a title made of that page's H1 and its first chunk's heading;
  then 1-2 chunks drawn from the whole language's pool (chunks up to 6 KB). Front matter: the title, 1-5
  tags from 200 (the commonest English heading words, Zipf-like), 1-2 categories, and an `updated:` datetime
  over 5 years (UTC and offsets, as generate_site.py), read through `modified_meta: updated`.
- Folders: `<language>/<the source page's folders>/part-<n>/`, at most ~40 pages in a leaf folder.

Deterministic for a --seed. Headings keep their `{ #id }` attribute lists (the site enables attr_list);
links and images point where the corpora point, mostly nowhere in this site, so the site turns MkDocs' link
validation off: 100,000 pages of warnings would be measured instead of the build.

    .venv/bin/python bench/real_text_site.py [--pages 100000] [--out bench/out/real-text-100000] [--seed 7]

Writes OUT/docs, OUT/theme/main.html (the page's content and nothing else: a theme whose nav lists every
page on every page makes the build quadratic in the pages), OUT/mkdocs.yml (plugin vault-mcp),
OUT/mkdocs-bare.yml (no plugin: the baseline build) and OUT/site.json, last, as the completion mark.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import datetime as dt
import itertools
import json
import os
import random
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
CORPORA = REPO.parent / "shared" / "corpora"
sys.path.insert(0, str(BENCH))

from generate_site import CATEGORIES, FIRST_DAY, OFFSETS, SPAN_SECONDS, existing, zipf_weights  # noqa: E402
from mkdocs_vault_mcp.index.search.plan import STOP_WORDS  # noqa: E402
from report import command_line, write_results  # noqa: E402

TAG_COUNT = 200
PAGES_PER_LEAF = 40
CHUNKS_PER_PAGE = (1, 2)
# Longer chunks (release notes, the 100 KB changelog entries) are left out of the pool: a 100,000-page build
# is long enough on a 2-CPU machine without repeating them thousands of times.
MAX_CHUNK_BYTES = 6_000
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ATTRIBUTES = re.compile(r"\s*\{[^}]*\}\s*$")
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_WORD = re.compile(r"\w+")


@dataclass
class SourcePage:
    language: str
    path: str  # within its language's docs folder, e.g. tutorial/security/oauth2-jwt.md
    title: str  # its H1, without the attribute list
    intro: str  # the text under the H1, before the first `##`
    chunks: list[tuple[str, str]]  # (heading text, the chunk's Markdown from its `##` line on)


def cut(text: str) -> tuple[str, str, list[tuple[str, str]]]:
    """A page's H1 text, intro and level-2 chunks; headings inside code fences are not headings."""
    text = _FRONT_MATTER.sub("", text)
    title = ""
    intro: list[str] = []
    chunks: list[tuple[str, str]] = []
    current: list[str] | None = None
    heading = ""
    fence = None
    for line in text.splitlines():
        opened = _FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)[0]
        elif fence is not None and opened and opened.group(1)[0] == fence:
            fence = None
        found = _HEADING.match(line) if fence is None else None
        if found and len(found.group(1)) == 1 and not title and current is None:
            title = _ATTRIBUTES.sub("", found.group(2))
            continue
        if found and len(found.group(1)) <= 2:
            if current is not None:
                chunks.append((heading, "\n".join(current).strip() + "\n"))
            current, heading = ["##" + line.lstrip("#")], _ATTRIBUTES.sub("", found.group(2))
            continue
        (intro if current is None else current).append(line)
    if current is not None:
        chunks.append((heading, "\n".join(current).strip() + "\n"))
    return title, "\n".join(intro).strip() + "\n", chunks


def read_pool() -> dict[str, list[SourcePage]]:
    """Every source page by language; `material` is Material for MkDocs' docs (English)."""
    roots = {
        folder.name: folder / "docs"
        for folder in sorted((CORPORA / "fastapi-docs").iterdir())
        if (folder / "docs").is_dir()
    }
    roots["material"] = CORPORA / "material-docs" / "docs"
    pool: dict[str, list[SourcePage]] = {}
    for language, root in roots.items():
        pages = []
        for file in sorted(root.rglob("*.md")):
            title, intro, chunks = cut(file.read_text(encoding="utf-8-sig"))
            if chunks:
                relative = file.relative_to(root).as_posix()
                pages.append(SourcePage(language, relative, title or file.stem.replace("-", " "), intro, chunks))
        pool[language] = pages
    return pool


def tag_vocabulary(pool: dict[str, list[SourcePage]]) -> list[str]:
    """The commonest words of English chunk headings (4+ letters, no stop words), commonest first: real topic
    names."""
    counts: collections.Counter[str] = collections.Counter()
    for language in ("en", "material"):
        for page in pool[language]:
            for heading, _ in page.chunks:
                words = _WORD.findall(heading.casefold())
                counts.update(w for w in words if len(w) >= 4 and w.isalpha() and w not in STOP_WORDS)
    commonest = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [word for word, _ in commonest[:TAG_COUNT]]


def vocabulary_size(pool: dict[str, list[SourcePage]]) -> int:
    words: set[str] = set()
    for pages in pool.values():
        for page in pages:
            words.update(_WORD.findall(page.intro.casefold()))
            for _, chunk in page.chunks:
                words.update(_WORD.findall(chunk.casefold()))
    return len(words)


def yaml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML string


def page_text(
    rng: random.Random, source: SourcePage, chunks: list[tuple[str, str]], tags: list[str], tag_cumulative: list[float]
) -> str:
    title = f"{source.title}: {chunks[0][0]}" if chunks[0][0] != source.title else source.title
    chosen = list(dict.fromkeys(rng.choices(tags, cum_weights=tag_cumulative, k=rng.randint(1, 5))))
    categories = list(dict.fromkeys(rng.choices(CATEGORIES, k=rng.randint(1, 2))))
    updated = (FIRST_DAY + dt.timedelta(seconds=rng.randrange(SPAN_SECONDS))).astimezone(rng.choice(OFFSETS))
    head = [
        "---",
        f"title: {yaml_string(title)}",
        f"tags: [{', '.join(chosen)}]",
        f"categories: [{', '.join(categories)}]",
        f"updated: {updated.isoformat()}",
        "---",
        "",
        f"# {title}",
        "",
        source.intro,
    ]
    return "\n".join(head) + "\n" + "\n".join(chunk for _, chunk in chunks)


MKDOCS_YML = """site_name: Real text ({pages} pages)
docs_dir: docs
theme:
  name: null
  custom_dir: theme
markdown_extensions:
  - attr_list
  - tables
  - fenced_code
  - toc:
      permalink: true
validation:
  nav:
    omitted_files: ignore
    not_found: ignore
    absolute_links: ignore
  links:
    not_found: ignore
    anchors: ignore
    absolute_links: ignore
    unrecognized_links: ignore
plugins: {plugins}
"""
PLUGIN = """
  - vault-mcp:
      modified: mtime  # the dates come from `updated:`; bench/out is git-ignored, so git has no history here
      modified_meta: updated"""
THEME = "<!doctype html><title>{{ page.title }}</title>\n{{ page.content }}\n"


def generate(pages: int, out: Path, seed: int) -> dict:
    """Write the site; returns its facts (also written to OUT/site.json, last, as the completion mark)."""
    rng = random.Random(seed)
    marker = out / "site.json"
    marker.unlink(missing_ok=True)
    shutil.rmtree(out / "docs", ignore_errors=True)
    pool = read_pool()
    for pages_of_language in pool.values():
        for page in pages_of_language:
            page.chunks = [chunk for chunk in page.chunks if len(chunk[1].encode("utf-8")) <= MAX_CHUNK_BYTES]
    pool = {language: [page for page in listed if page.chunks] for language, listed in pool.items()}
    tags = tag_vocabulary(pool)
    tag_cumulative = list(itertools.accumulate(zipf_weights(len(tags))))
    languages = sorted(pool)
    language_cumulative = list(itertools.accumulate(len(pool[language]) for language in languages))
    chunk_pools = {language: [chunk for page in pool[language] for chunk in page.chunks] for language in languages}
    docs = out / "docs"
    docs.mkdir(parents=True)
    (docs / "index.md").write_text(f"# Real text\n\n{pages} pages recombined from the real sections of the corpora.\n")
    leaves: dict[str, int] = {}  # a source folder -> pages placed under it so far
    made: set[Path] = set()
    size = 0
    sections = 0
    for number in range(1, pages):
        language = languages[bisect.bisect_right(language_cumulative, rng.randrange(language_cumulative[-1]))]
        source = rng.choice(pool[language])
        chunks = [rng.choice(source.chunks)]
        chunks += rng.choices(chunk_pools[language], k=rng.randint(*CHUNKS_PER_PAGE) - 1)
        text = page_text(rng, source, chunks, tags, tag_cumulative)
        source_folder = "/".join([language, *source.path.split("/")[:-1]])
        placed = leaves.get(source_folder, 0)
        leaves[source_folder] = placed + 1
        folder = docs / source_folder / f"part-{placed // PAGES_PER_LEAF}"
        if folder not in made:
            folder.mkdir(parents=True, exist_ok=True)
            made.add(folder)
        (folder / f"{Path(source.path).stem}-{number:06d}.md").write_text(text, encoding="utf-8")
        size += len(text.encode("utf-8"))
        sections += 1 + len(chunks)
    (out / "theme").mkdir(exist_ok=True)
    (out / "theme" / "main.html").write_text(THEME)
    (out / "mkdocs.yml").write_text(MKDOCS_YML.format(pages=pages, plugins=PLUGIN))
    (out / "mkdocs-bare.yml").write_text(MKDOCS_YML.format(pages=pages, plugins="[]"))
    facts = {
        "pages": pages,
        "seed": seed,
        "leaf_folders": len(made),
        "tags": len(tags),
        "markdown_bytes": size,
        "top_level_sections": sections,
        "pool_pages": sum(len(p) for p in pool.values()),
        "pool_chunks": sum(len(c) for c in chunk_pools.values()),
        "pool_distinct_words": vocabulary_size(pool),
        "languages": {language: len(pool[language]) for language in languages},
    }
    marker.write_text(json.dumps(facts, indent=1))
    return facts


def default_out(pages: int) -> Path:
    return BENCH / "out" / f"real-text-{pages}"


def ensure(pages: int, seed: int = 7, out: Path | None = None) -> tuple[Path, dict]:
    """The site of these pages and seed, generated when it is not there yet."""
    out = out or default_out(pages)
    facts = existing(out, pages, seed)
    if facts is None:
        print(f"generating {pages} pages of real text in {os.path.relpath(out, REPO)} ...", flush=True)
        facts = generate(pages, out, seed)
    return out, facts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000, help="pages to generate (default 100000)")
    parser.add_argument("--out", type=Path, help="site folder (default bench/out/real-text-PAGES)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.pages < 2:
        parser.error("--pages must be 2 or more")
    out = args.out or default_out(args.pages)
    start = time.perf_counter()
    facts = generate(args.pages, out, args.seed)
    seconds = time.perf_counter() - start
    report = "\n".join(
        [
            f"command: {command_line()}",
            f"site: {os.path.relpath(out, REPO)}/docs, mkdocs.yml (vault-mcp) and mkdocs-bare.yml (no plugin) beside it",
            "",
            f"pages              {facts['pages']}",
            f"pool               {facts['pool_pages']} source pages, {facts['pool_chunks']} level-2 chunks,"
            f" {facts['pool_distinct_words']} distinct words (casefolded \\w+ runs), 14 languages",
            "source pages       " + ", ".join(f"{language} {count}" for language, count in facts["languages"].items()),
            f"sections written   {facts['top_level_sections']} (intro + 1-2 chunks a page, chunks keep their ### parts)",
            f"leaf folders       {facts['leaf_folders']} (<language>/<source folders>/part-<n>, <= {PAGES_PER_LEAF} pages)",
            f"tag vocabulary     {facts['tags']} commonest English heading words (1-5 per page, Zipf-like),"
            f" categories {len(CATEGORIES)} (1-2 per page)",
            f"updated dates      {FIRST_DAY.date()} + 5 years, offsets UTC/+02:00/-07:00/+09:00",
            f"Markdown           {facts['markdown_bytes'] / 1e6:.1f} MB",
            f"generated in       {seconds:.1f} s",
            "",
        ]
    )
    print(report)
    write_results("real_text_site", report)


if __name__ == "__main__":
    main()
