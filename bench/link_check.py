"""Do the index's broken links agree with MkDocs' own link warnings for the same build?

    .venv/bin/python bench/link_check.py [--corpus material|fastapi-en]

Builds the corpus once (bench/read_coverage.py's `build_corpus`, the Material docs by default) with MkDocs'
link validation raised to warnings (`validation: {links: {not_found: warn, anchors: warn}}`, what
`mkdocs build --strict` fails on), collects every "Doc file ... contains a link ..." warning, and lists it
beside the `links` tool's `show=broken` answer on the published index (each link as source page, target
page and anchor). It prints both lists, what only one of them holds, and the counts, and writes the table to
bench/results/quality/link_check.json.
"""

from __future__ import annotations

import argparse
import logging
import posixpath
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from mkdocs_vault_mcp.index.filters import Filters  # noqa: E402
from mkdocs_vault_mcp.index.publish import open_read_only  # noqa: E402
from mkdocs_vault_mcp.index.query.link_queries import links  # noqa: E402
from read_coverage import OUT, build_corpus  # noqa: E402
from report import table, write_results  # noqa: E402

WARNING = re.compile(r"Doc file '([^']+)' contains a link '([^']+)', but (?:the target|the doc|there is no such)")
VALIDATION = {"validation": {"links": {"not_found": "warn", "anchors": "warn"}}}


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def mkdocs_key(source: str, link: str) -> tuple[str, str, str | None]:
    path, _, anchor = link.partition("#")
    target = posixpath.normpath(posixpath.join(posixpath.dirname(source), path)) if path else source
    return source, target, anchor or None


def our_broken(index: Path) -> list[tuple[str, str | None, str | None]]:
    """The `links` tool's `show=broken` answer, each link as (linking page, target, anchor): the target page,
    or for a missing page what the link names (as written, from the linking page's file, like MkDocs)."""
    conn = open_read_only(index)
    keys = []
    offset: int | None = 0
    while offset is not None:
        answer = links(conn, "broken", Filters(), limit=1000, offset=offset)
        keys += [(row["path"], row["target"], row["anchor"]) for row in answer["result"]]
        offset = answer["next_offset"]
    conn.close()
    return keys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="material", choices=["material", "fastapi-en"])
    arguments = parser.parse_args()
    collect = Collect()
    logging.getLogger("mkdocs").addHandler(collect)
    index = build_corpus(arguments.corpus, OUT.parent / "link-check" / arguments.corpus, VALIDATION)
    theirs = sorted({mkdocs_key(*match.groups()) for m in collect.messages if (match := WARNING.search(m))})
    ours = sorted(set(our_broken(index)))
    both = sorted(set(theirs) & set(ours))
    shown = lambda key: f"{key[0]} -> {key[1]}" + (f"#{key[2]}" if key[2] else "")  # noqa: E731
    lines = [
        f"MkDocs warns ({len(theirs)}):",
        *map(shown, theirs),
        "",
        f"links show=broken ({len(ours)}):",
        *map(shown, ours),
        "",
        "only MkDocs: " + (", ".join(map(shown, sorted(set(theirs) - set(ours)))) or "none"),
        "only ours: " + (", ".join(map(shown, sorted(set(ours) - set(theirs)))) or "none"),
    ]
    report = (
        "link check: the index's broken links against MkDocs' own link warnings, one build\n"
        f"command: .venv/bin/python bench/link_check.py --corpus {arguments.corpus}\n\n"
        + table(
            [
                ["corpus", "MkDocs warnings", "broken (ours)", "in both", "only MkDocs", "only ours"],
                [
                    arguments.corpus,
                    str(len(theirs)),
                    str(len(ours)),
                    str(len(both)),
                    str(len(set(theirs) - set(ours))),
                    str(len(set(ours) - set(theirs))),
                ],
            ]
        )
        + "\n\n"
        + "\n".join(lines)
        + "\n"
    )
    print(report)
    write_results("link_check", report)


if __name__ == "__main__":
    main()
