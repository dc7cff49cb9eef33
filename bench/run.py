"""The one entry point of the benchmarks: list them, or run one by name with its own options.

    .venv/bin/python bench/run.py --list                  # every benchmark: name, kind, what it answers
    .venv/bin/python bench/run.py NAME [its options...]   # run bench/NAME.py as its own command would
    .venv/bin/python bench/run.py NAME --help             # its options

A benchmark is a script of bench/ named in `report.BENCHMARKS`, which gives its kind (`speed` or `quality`: the
folder of bench/results/ its results go to); what it answers is the first sentence of its docstring. The script
runs in this process as `__main__` (runpy), with its own arguments, so its results file records this command.
"""

from __future__ import annotations

import ast
import difflib
import runpy
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:  # the scripts import their shared modules (report, ...) from bench/
    sys.path.insert(0, str(BENCH))

from report import BENCHMARKS  # noqa: E402

PURPOSE_WIDTH = 110  # characters of the purpose shown in the listing


def purpose(script: Path) -> str:
    """The first sentence of a script's docstring, on one line."""
    docstring = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""
    paragraph = " ".join(docstring.split("\n\n")[0].split())
    sentence = paragraph.split(". ")[0].rstrip(".")
    return sentence if len(sentence) <= PURPOSE_WIDTH else sentence[: PURPOSE_WIDTH - 3].rstrip() + "..."


def listing() -> str:
    """One line per benchmark: its name, its kind and what it answers."""
    width = max(map(len, BENCHMARKS))
    return "\n".join(
        f"{name:<{width}}  {entry.kind:<7}  {purpose(BENCH / f'{name}.py')}"
        for name, entry in sorted(BENCHMARKS.items())
    )


def run(name: str, arguments: list[str]) -> None:
    """Run bench/NAME.py as `__main__` with `arguments`, as `python bench/NAME.py ARGUMENTS` would."""
    script = BENCH / f"{name}.py"
    sys.argv = [str(script), *arguments]
    runpy.run_path(str(script), run_name="__main__")


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if not arguments or arguments[0] in ("-h", "--help"):
        print(
            __doc__.strip().splitlines()[0] + "\n\nusage: .venv/bin/python bench/run.py (--list | NAME [options...])"
            "\n\n" + listing()
        )
        return 0 if arguments else 2
    if arguments[0] == "--list":
        print(listing())
        return 0
    name = arguments[0].removeprefix("bench/").removesuffix(".py")
    if name not in BENCHMARKS:
        near = difflib.get_close_matches(name, BENCHMARKS, n=3)
        print(
            f"bench/run.py: no benchmark {name!r}"
            + (f"; did you mean {', '.join(near)}?" if near else "")
            + " (--list lists them)",
            file=sys.stderr,
        )
        return 2
    run(name, arguments[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
