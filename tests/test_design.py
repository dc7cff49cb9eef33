"""The design stays visible: layers that import one way, modules small enough to read whole, functions short
enough to read at once, and the architecture page naming every module the package has.

A function may be longer than the limit when its module's docstring names it in backticks and says why; the
exception is then written where a reader of the module sees it first.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "mkdocs_vault_mcp"
HOW_IT_WORKS = REPO / "docs" / "pages" / "how-it-works.md"
MODULE_LINES = 400
FUNCTION_LINES = 60


# Each layer of the package and the layers it may import (beside itself); the entry points may import any.
BOTTOM = {"errors", "instants", "limits", "budget", "child_processes", "adapters", "__init__"}
INDEX = {"index", "page", "bottom"}
MAY_IMPORT = {
    "bottom": {"bottom"},
    "page": {"bottom"},
    "config": {"page", "bottom"},
    # The index's own parts in the order a newcomer reads them: the shared base (schema, filters, the answers'
    # types), then searching, then the other questions, then writing, which asks questions of what it wrote.
    "index": {"page", "bottom"},
    "index.search": INDEX,
    "index.query": INDEX | {"index.search"},
    "index.write": INDEX | {"index.search", "index.query"},
    "build_steps": {"index", "index.write", "index.query", "index.search", "page", "config", "bottom"},
    "mcp": {"index", "index.query", "index.search", "page", "bottom"},
}
ENTRY_POINTS = {"plugin", "cli", "command_line", "asgi", "__main__"}


def package_modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def layer_of(dotted: str) -> str:
    """The layer of a module named relative to the package (`index.search.answer`, `errors`)."""
    parts = dotted.split(".")
    first = parts[0] or "__init__"
    if first in BOTTOM:
        return "bottom"
    if first == "index" and len(parts) > 2:
        return f"index.{parts[1]}"
    return "entry point" if first in ENTRY_POINTS else first


def module_name(path: Path) -> str:
    """`path`'s module named relative to the package (`index.search.answer`; a folder's `__init__.py` is the folder)."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path) for path in package_modules()}


def imported_by(node: ast.Import | ast.ImportFrom, path: Path) -> set[str]:
    """The package's modules one import statement of `path` imports, named relative to the package."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
        return {name.removeprefix(PACKAGE.name).lstrip(".") for name in names if name.split(".")[0] == PACKAGE.name}
    if node.level:
        package = list(path.relative_to(PACKAGE).parts[:-1])  # `.` is the folder of a module and of an __init__.py
        base = ".".join([*package[: len(package) - node.level + 1], *([node.module] if node.module else [])])
    elif (node.module or "").split(".")[0] == PACKAGE.name:
        base = (node.module or "").removeprefix(PACKAGE.name).lstrip(".")
    else:
        return set()
    submodules = {f"{base}.{alias.name}".lstrip(".") for alias in node.names}  # `from . import cjk`
    return {base} | (submodules & MODULES)


def imported_modules(path: Path) -> set[str]:
    """The package's modules that `path` imports anywhere: at the top, under TYPE_CHECKING, inside functions."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            found |= imported_by(node, path)
    return found


def imported_in_functions(path: Path) -> set[str]:
    """The package's modules that `path` imports inside a function."""
    found: set[str] = set()
    for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    found |= imported_by(node, path)
    return found


# The package's own modules imported inside a function, each for what its import would load where it is not used.
DEFERRED_IMPORTS = {
    (
        "cli.py",
        "build_steps.built_site",
    ): "MkDocs, Jinja2, Markdown, Babel: only `index` uses them; `serve` starts without",
    ("plugin.py", "mcp.live"): "the SDK and the HTTP stack: only `mkdocs serve` uses them, a build never",
    (
        "index/query/link_queries.py",
        "index.query.related",
    ): "search: the build summary's links never use it, the tools' do",
    ("index/query/read.py", "index.html_to_markdown"): "lxml and html-to-markdown: only reading a page uses them",
    ("index/conversion_pool.py", "index.html_to_markdown"): "lxml and html-to-markdown: in the worker, not the server",
    (
        "index/query/agent_pages.py",
        "index.query.read",
    ): "the HTML parsing: only a page whose Markdown copy is not kept needs it",
    # The build's own process imports working_index.py (plugin.py, writer.py); only the writer uses these.
    (
        "index/write/working_index.py",
        "page.documents",
    ): "the HTML parsing: the build's own thread never makes a document",
    ("index/write/working_index.py", "index.search.semantic"): "search by meaning: only the writer's commit uses it",
    ("index/write/working_index.py", "index.write.build_summary"): "the queries: only the writer's commit uses them",
}


def test_layers_import_one_way() -> None:
    against_the_flow = []
    for path in package_modules():
        layer = layer_of(".".join(path.relative_to(PACKAGE).with_suffix("").parts))
        if layer == "entry point":
            continue
        for target in imported_modules(path):
            if layer_of(target) not in MAY_IMPORT[layer] | {layer}:
                against_the_flow.append(f"{path.relative_to(REPO)} ({layer}) imports {target} ({layer_of(target)})")
    assert against_the_flow == []


def test_no_module_is_over_400_lines() -> None:
    long_modules = {
        str(path.relative_to(REPO)): length
        for path in package_modules()
        if (length := len(path.read_text(encoding="utf-8").splitlines())) > MODULE_LINES
    }
    assert long_modules == {}


def test_a_function_over_60_lines_is_explained_in_its_module_docstring() -> None:
    unexplained = []
    for path in package_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        explained = set(re.findall(r"`([A-Za-z_][\w.]*)`", ast.get_docstring(tree) or ""))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > FUNCTION_LINES and node.name not in explained:
                    unexplained.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({length} lines)")
    assert unexplained == []


def test_the_architecture_page_names_every_module_and_only_modules_that_exist() -> None:
    page = HOW_IT_WORKS.read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:[a-z0-9_]+/)*[a-z0-9_]+\.py)`", page)) - set(
        re.findall(r"`((?:bench|docs|tests)/[a-z0-9_/]+\.py)`", page)
    )
    modules = {str(path.relative_to(PACKAGE)) for path in package_modules() if path.name != "__init__.py"}
    assert sorted(modules - named) == [], "modules the architecture page does not describe"
    assert sorted(named - modules) == [], "modules the architecture page names that do not exist"


def dispatches_by_name(source: str) -> list[str]:
    """The calls of a method looked up by a name held in a variable: `getattr(x, name)(...)`, or such a lookup
    handed straight to another call (`functools.partial(getattr(x, name), ...)`, `executor.submit(getattr(...))`).
    A name written in the code (a string, or a module's constant in capitals) is a lookup, not a dispatch."""

    def by_variable(node: ast.AST) -> bool:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"):
            return False
        name = node.args[1] if len(node.args) > 1 else None
        return not isinstance(name, ast.Constant) and not (isinstance(name, ast.Name) and name.id.isupper())

    def runs_a_callable(call: ast.Call) -> bool:  # hands its first argument on to be called
        name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
        return name in {"partial", "submit", "map", "to_thread", "run_in_executor", "call_soon"}

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and (
            by_variable(node.func) or (runs_a_callable(node) and any(by_variable(arg) for arg in node.args[:1]))
        ):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_dispatches_by_method_name_strings() -> None:
    dispatching = {
        str(path.relative_to(REPO)): found
        for path in package_modules()
        if (found := dispatches_by_name(path.read_text(encoding="utf-8")))
    }
    assert dispatching == {}


def test_the_dispatch_check_finds_a_method_called_by_its_name() -> None:
    assert dispatches_by_name("status, value = 'done', getattr(index, method)(*args)")
    assert dispatches_by_name("held.append(functools.partial(getattr(self._index, method), *args))")
    assert not dispatches_by_name("admit = getattr(manager, METHOD)\nvalue = getattr(page, 'title')()")
    assert not dispatches_by_name("{name: getattr(self, name) for name in FIELDS}")


def test_no_import_cycle_even_through_deferred_imports() -> None:
    """A module's import runs its folder's __init__.py too; no module reaches itself through the imports of any."""
    imports = {module_name(path): imported_modules(path) for path in package_modules()}
    for imported in imports.values():
        imported |= {".".join(name.split(".")[:end]) for name in set(imported) for end in range(name.count(".") + 1)}
    reached: dict[str, set[str]] = {}
    for start in imports:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for target in imports.get(todo.pop(), set()) - seen:
                seen.add(target)
                todo.append(target)
        reached[start] = seen
    cycles = {
        tuple(sorted(m for m in reached[start] if start in reached[m])) for start in imports if start in reached[start]
    }
    assert sorted(cycles) == []


def test_the_package_imports_its_own_modules_inside_a_function_only_where_allowed() -> None:
    deferred = {
        (str(path.relative_to(PACKAGE)), name) for path in package_modules() for name in imported_in_functions(path)
    }
    assert sorted(deferred - DEFERRED_IMPORTS.keys()) == [], "import these at the top of the module"
    assert sorted(DEFERRED_IMPORTS.keys() - deferred) == [], "allowed, but no longer imported inside a function"


# The calls that start a thread or a process, by the dotted name they are called by (the last parts of it suffice:
# `threading.Thread` and `Thread` alike).
STARTS_THREADS_OR_PROCESSES = {
    "threading.Thread",
    "subprocess.run",
    "subprocess.Popen",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "os.fork",
    "os.forkpty",
    "os.posix_spawn",
    "os.posix_spawnp",
    "os.system",
    "os.popen",
    "multiprocessing.Process",
    "multiprocessing.Pool",
    "ProcessPoolExecutor",
    "ThreadPoolExecutor",
    "to_thread.run_sync",
    "asyncio.to_thread",
    "run_in_executor",
    "asyncio.create_subprocess_exec",
    "asyncio.create_subprocess_shell",
    "anyio.run_process",
    "anyio.open_process",
}
# The only modules that start threads or processes, each for its reason (how-it-works.md, "Threads and processes").
STARTS_THREADS_OR_PROCESSES_IN = {
    "child_processes.py": "git, the stat reader and the conversion workers are programs of their own; the thread "
    "that waits for git's answer beside the build",
    "index/write/writes.py": "the index writer: a thread, or a process of its own on the other CPU for a first build",
    "mcp/server.py": "the reader threads: a slow call never holds the event loop that serves every client",
    "mcp/live.py": "the live MCP server beside `mkdocs serve`, whose own thread MkDocs holds",
    "mcp/workers.py": "`serve --workers N`: forked server processes sharing a port",
    "mcp/remote_index.py": "`serve URL`: the refresher of the downloaded index and of a versioned site's versions",
}


def starts_threads_or_processes(source: str) -> list[str]:
    """The calls in `source` that start a thread or a process (STARTS_THREADS_OR_PROCESSES)."""

    def dotted(node: ast.AST) -> str:
        if isinstance(node, ast.Attribute):
            return f"{dotted(node.value)}.{node.attr}"
        return node.id if isinstance(node, ast.Name) else "?"

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = dotted(node.func)
            if any(name == start or name.endswith(f".{start}") for start in STARTS_THREADS_OR_PROCESSES) or (
                name.split(".")[-1] in {"Thread", "Popen", "fork", "ProcessPoolExecutor", "ThreadPoolExecutor"}
            ):
                found.append(f"line {node.lineno}: {name}")
    return found


def test_at_most_six_modules_start_threads_or_processes_each_for_its_reason() -> None:
    starting = {
        str(path.relative_to(PACKAGE))
        for path in package_modules()
        if starts_threads_or_processes(path.read_text(encoding="utf-8"))
    }
    assert sorted(starting) == sorted(STARTS_THREADS_OR_PROCESSES_IN)
    assert len(STARTS_THREADS_OR_PROCESSES_IN) <= 6
    page = HOW_IT_WORKS.read_text(encoding="utf-8").partition("## Threads and processes")[2].partition("\n## ")[0]
    assert sorted(module for module in STARTS_THREADS_OR_PROCESSES_IN if f"`{module}`" not in page) == []


def test_the_thread_and_process_check_finds_each_way_to_start_one() -> None:
    for source in (
        "threading.Thread(target=work).start()",
        "Thread(target=work)",
        "subprocess.run(['git'])",
        "done = subprocess.Popen(command)",
        "pid = os.fork()",
        "executor = concurrent.futures.ProcessPoolExecutor(1)",
        "ThreadPoolExecutor(1)",
        "await anyio.to_thread.run_sync(work)",
        "await loop.run_in_executor(None, work)",
    ):
        assert starts_threads_or_processes(source), source
    assert not starts_threads_or_processes("raise subprocess.CalledProcessError(1, 'git')\nthreading.Event()")
