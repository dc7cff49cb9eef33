"""Rules of the test suite itself, read from its source with `ast`:

- No test module (tests/test_*.py) and no helper module (tests/helpers/) imports a test module or `conftest`:
  shared code lives in tests/helpers/, fixtures in tests/conftest.py, where pytest finds them.
- No assert on a measured duration: how fast something runs depends on the machine and on what else runs on
  it, and belongs to bench/. An assert is taken for one when it compares a timing with a number. A timing is an
  operand that calls a clock (`time.perf_counter()`, `time.monotonic()`, `time.time()` and their `_ns` forms),
  or names a lowercase variable, attribute or function one of whose words (split at `_`) is in TIMING_WORDS
  (`elapsed`, `seconds`, `median`, ...). A number is an operand with a numeric literal in it, an UPPER_CASE
  name (a constant such as `LIGHT_LATENCY`) or a name with a word of BOUND_WORDS (`bound`, `budget`, `limit`).
  So `assert time.monotonic() - started < 2` and `assert max(latencies) < LIMIT` are refused; a hang guard,
  `assert time.monotonic() < deadline, "..."`, compares with a variable and passes, as does a wait with a
  timeout that fails with a message.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
TIMING_WORDS = {
    "elapsed",
    "seconds",
    "duration",
    "durations",
    "took",
    "median",
    "medians",
    "p50",
    "p95",
    "p99",
    "latency",
    "latencies",
    "slowest",
    "fastest",
}
BOUND_WORDS = {"bound", "budget", "limit"}  # a lowercase name that holds the number a timing is held to
CLOCKS = {"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns"}


def modules_of_tests() -> list[Path]:
    return sorted(TESTS.glob("test_*.py"))


def suite_modules() -> list[Path]:
    return [*modules_of_tests(), *sorted((TESTS / "helpers").glob("*.py"))]


def imported_modules(tree: ast.AST) -> set[str]:
    """The top-level names of every module imported anywhere in the tree (inside functions too)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def calls_a_clock(node: ast.AST) -> bool:
    return any(
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in CLOCKS
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == "time"
        for call in ast.walk(node)
    )


def identifiers(node: ast.AST) -> list[str]:
    return [
        sub.id if isinstance(sub, ast.Name) else sub.attr
        for sub in ast.walk(node)
        if isinstance(sub, ast.Name | ast.Attribute)
    ]


def is_timing(node: ast.AST) -> bool:
    return calls_a_clock(node) or any(
        name == name.lower() and TIMING_WORDS & set(name.split("_")) for name in identifiers(node)
    )


def is_number(node: ast.AST) -> bool:
    return any(isinstance(sub, ast.Constant) and type(sub.value) in (int, float) for sub in ast.walk(node)) or any(
        (name == name.upper() and any(c.isalpha() for c in name)) or BOUND_WORDS & set(name.split("_"))
        for name in identifiers(node)
    )


def duration_asserts(tree: ast.AST) -> list[int]:
    """Line numbers of the asserts that compare a timing with a number (the module docstring says how)."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert):
            continue
        for compare in (sub for sub in ast.walk(node.test) if isinstance(sub, ast.Compare)):
            operands = [compare.left, *compare.comparators]
            if any(is_timing(a) and is_number(b) for a in operands for b in operands if a is not b):
                lines.append(node.lineno)
                break
    return lines


def test_no_test_or_helper_module_imports_a_test_module_or_conftest() -> None:
    test_names = {path.stem for path in modules_of_tests()}
    found = {}
    for path in suite_modules():
        wrong = imported_modules(ast.parse(path.read_text(encoding="utf-8"))) & (test_names | {"conftest"})
        if wrong:
            found[path.relative_to(TESTS).as_posix()] = sorted(wrong)
    assert not found, f"move what they import to tests/helpers/ (fixtures to conftest.py): {found}"


def test_no_test_asserts_a_measured_duration() -> None:
    found = {}
    for path in [*suite_modules(), TESTS / "conftest.py"]:
        lines = duration_asserts(ast.parse(path.read_text(encoding="utf-8")))
        if lines:
            found[path.relative_to(TESTS).as_posix()] = lines
    assert not found, f"asserts on a duration (timings belong to bench/): {found}"


@pytest.mark.parametrize(
    ("source", "refused"),
    [
        ("assert time.monotonic() - started < 2", True),
        ("assert time.perf_counter() - start <= 0.5, 'slow'", True),
        ("assert elapsed < 5", True),
        ("assert 0.3 < took_seconds", True),
        ("assert statistics.median(during) < 0.050", True),
        ("assert max(latencies) < LIGHT_LATENCY", True),
        ("assert result.seconds == 3", True),
        ("assert max(latencies) < bound", True),
        ("assert slowest > budget", True),
        ("assert time.monotonic() < deadline, 'never answered'", False),  # a hang guard
        ("assert len(calls) == 4", False),
        ("assert max(waited) < HEAVY // 2", False),
        ("assert STARTUP_SECONDS > 0", False),  # constants alone are not timings
        ("assert answer['index_age_seconds'] < 60", False),  # a value the server reports, not a measured one
    ],
)
def test_the_duration_detector(source: str, refused: bool) -> None:
    assert bool(duration_asserts(ast.parse(source))) is refused


def test_the_import_detector_sees_imports_inside_functions() -> None:
    tree = ast.parse("def f():\n    from test_live import Serve\n    import conftest\nfrom helpers.site import Site\n")
    assert imported_modules(tree) == {"test_live", "conftest", "helpers"}
