"""Regenerate the performance page's figures from bench/results/, each with the commit it was measured on.

The performance page (docs/pages/performance.md) is prose written by hand around marker comments; between each
pair of markers this script writes one results file's report as it stands, under a line naming the file, the
commit it measured, the date, the machine and its load, the baseline and the command:

    <!-- results: speed/tool_latency -->            whole report of bench/results/speed/tool_latency.json
    <!-- results: quality/link_check first=12 -->   its first 12 lines (the rest stays in the file)
    <!-- results: link_check -->                    the same file: a name alone is looked up under each kind
    <!-- /results -->

Everything outside the markers is kept as written, so the prose explains the figures and the figures come
only from results files. The commit, date, machine, load and baseline come from the fields that
`report.write_results` puts in each file.

    .venv/bin/python bench/write_benchmarks.py            # rewrite the performance page
    .venv/bin/python bench/write_benchmarks.py --check    # exit 1 if the page is not what it would write

The page stays within PAGE_LIMIT bytes: show the first lines of a long report (`first=N`), not all of it.
`--check` only reads files, for CI; `--check --rev HEAD` reads the page and bench/results/ as committed
at HEAD (through git), so a bench run that has not been committed yet cannot make it fail.
"""

from __future__ import annotations

import argparse
import difflib
import re
import subprocess
import sys
from collections.abc import Callable

from report import KINDS, REPO, RESULTS, read_results

PAGE = REPO / "docs" / "pages" / "performance.md"
PAGE_NAME = str(PAGE.relative_to(REPO))
PAGE_LIMIT = 30_000  # bytes: current figures a reader can find, not every run
MARKER = re.compile(
    r"(?P<open><!-- results: (?:(?P<kind>\w+)/)?(?P<name>[\w-]+)(?: first=(?P<first>\d+))? -->\n)"
    r"(?P<generated>.*?)"
    r"(?P<close><!-- /results -->)",
    re.DOTALL,
)


Reader = Callable[[str], "str | None"]  # a path relative to the repository -> its text, None if absent


def working_tree(path: str) -> str | None:
    file = REPO / path
    return file.read_text(encoding="utf-8") if file.is_file() else None


def committed_at(rev: str) -> Reader:
    def read(path: str) -> str | None:
        done = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:{path}"], capture_output=True)
        return done.stdout.decode("utf-8") if done.returncode == 0 else None

    return read


def find_results(kind: str | None, name: str, read: Reader) -> tuple[str, str]:
    """(the path, the text) of the results file a marker names: `kind/name`, or `name` under whichever kind has
    it (exactly one)."""
    if kind is not None and kind not in KINDS:
        raise SystemExit(f"write_benchmarks: {PAGE_NAME} names kind {kind!r}, not one of {', '.join(KINDS)}")
    folder = RESULTS.relative_to(REPO)
    paths = [f"{folder}/{each}/{name}.json" for each in ([kind] if kind else KINDS)]
    found = [(path, text) for path in paths if (text := read(path)) is not None]
    if len(found) != 1:
        what = "does not exist" if not found else "exists under more than one kind; name it as kind/name"
        raise SystemExit(f"write_benchmarks: {PAGE_NAME} names {' or '.join(paths)}, which {what}")
    return found[0]


def block(kind: str | None, name: str, first: int | None, read: Reader = working_tree) -> str:
    """What goes between one pair of markers: where the figures come from, then the report."""
    path, text = find_results(kind, name, read)
    try:
        values = read_results(text)
    except ValueError as error:
        raise SystemExit(
            f"write_benchmarks: {path} is not a results file ({error}); write it with report.write_results"
        ) from error
    lines = str(values["report"]).rstrip("\n").splitlines()
    shown = lines if first is None else lines[:first]
    source = f"`{path}`"  # not a link: the docs site does not publish bench/
    commit = str(values["commit"])
    hash_ = re.match(r"[0-9a-f]{7,40}\b", commit)
    measured = f", measured at commit `{hash_[0]}`{commit[hash_.end() :]}" if hash_ else f"; commit {commit}"
    facts = [f"From {source}{measured}"]
    if values["date"]:
        facts.append(f"on {values['date']}")
    head = " ".join(facts) + "."
    if values["machine"]:
        load = f"; load average {values['load']:.1f}" if values["load"] is not None else ""
        head += f" Machine: {values['machine']}{load}."
    if values["baseline"]:
        head += f"\nBaseline: {values['baseline']}"
    rest = (
        f"\n\n(First {len(shown)} of its {len(lines)} lines; the rest is in the file.)"
        if len(shown) < len(lines)
        else ""
    )
    return f"{head}\nCommand: `{values['command']}`\n\n```text\n" + "\n".join(shown) + "\n```" + rest + "\n"


def generate(text: str, read: Reader = working_tree) -> str:
    """The page's text with every marked block written anew from its results file."""

    def replace(match: re.Match[str]) -> str:
        first = int(match["first"]) if match["first"] else None
        return match["open"] + block(match["kind"], match["name"], first, read) + match["close"]

    return MARKER.sub(replace, text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 (with a diff) if the page differs from what would be written",
    )
    parser.add_argument("--rev", help="with --check: read the files as committed at this git revision")
    args = parser.parse_args()
    if args.rev and not args.check:
        parser.error("--rev goes with --check (the page is written from the working tree)")
    read = committed_at(args.rev) if args.rev else working_tree
    current = read(PAGE_NAME)
    if current is None:
        raise SystemExit(f"write_benchmarks: no {PAGE_NAME}" + (f" at {args.rev}" if args.rev else ""))
    wanted = generate(current, read)
    size = len(wanted.encode("utf-8"))
    if size > PAGE_LIMIT:
        raise SystemExit(
            f"write_benchmarks: {PAGE_NAME} would be {size:,} bytes, over {PAGE_LIMIT:,}; show fewer"
            " lines of a long report (first=N) or fewer reports"
        )
    names = [match["name"] for match in MARKER.finditer(current)]
    unused = sorted(f"{p.parent.name}/{p.stem}" for p in RESULTS.glob("*/*.json") if p.stem not in names)
    if args.check:
        if wanted != current:
            sys.stdout.writelines(
                difflib.unified_diff(
                    current.splitlines(True), wanted.splitlines(True), PAGE_NAME, f"{PAGE_NAME} as generated"
                )
            )
            raise SystemExit(
                f"write_benchmarks: {PAGE_NAME} is not what bench/write_benchmarks.py writes;"
                " run it and commit the result"
            )
        print(f"{PAGE_NAME} is up to date with bench/results/ ({len(names)} blocks, {size:,} bytes)")
        return
    if wanted != current:
        PAGE.write_text(wanted, encoding="utf-8")
    print(
        f"{PAGE_NAME}: {len(names)} blocks, {size:,} bytes from bench/results/"
        + (f"; results files not shown: {', '.join(unused)}" if unused else "")
    )


if __name__ == "__main__":
    main()
