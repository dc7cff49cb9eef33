"""Write the docs pages that the code declares: the options, the tools and the JSON schema of the options.

    .venv/bin/python docs/generate.py            # rewrite the pages
    .venv/bin/python docs/generate.py --check    # exit 1, with a diff, if a page is not what the code says

- `pages/configuration.md` and `schema.json` from `VaultMcpConfig` (mkdocs_vault_mcp/config.py): each option's
  type and default from its config option, its text and example from the docstring under it.
- `pages/tools.md` from the tool declarations (mkdocs_vault_mcp/mcp/tools.py): each tool's description, every
  argument with its rule, the answer's fields, and one example call with the answer that a real run gives: a
  copy of example-site is built with `mkdocs build` and every example is called through the MCP SDK's client
  on an in-process server over its index.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import yaml
from mcp import Client
from mcp_types import TextContent
from mkdocs.config import config_options as c

from mkdocs_vault_mcp import config as config_module
from mkdocs_vault_mcp.config import VaultMcpConfig
from mkdocs_vault_mcp.mcp.schemas import FILTERS_EXPLAINED
from mkdocs_vault_mcp.mcp.server import IndexReader, create_server
from mkdocs_vault_mcp.mcp.tools import TOOLS

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
PAGES = DOCS / "pages"
COMMAND = ".venv/bin/python docs/generate.py"

# Every example file's time, so that answers do not depend on when example-site was copied (pages without
# an `updated` date in their front matter take their file's time).
EXAMPLE_FILES_TIME = 1717200000  # 2024-06-01T00:00:00Z


# --- Options -------------------------------------------------------------------------------------------------


def option_docstrings() -> dict[str, str]:
    """Each option's docstring: the string literal right under its line in VaultMcpConfig."""
    tree = ast.parse(Path(inspect.getfile(config_module)).read_text(encoding="utf-8"))
    (cls,) = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "VaultMcpConfig"]
    docs: dict[str, str] = {}
    for statement, following in zip(cls.body, cls.body[1:], strict=False):
        if (
            isinstance(statement, ast.Assign)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            (target,) = statement.targets
            assert isinstance(target, ast.Name)
            docs[target.id] = inspect.cleandoc(following.value.value)
    return docs


def options() -> list[tuple[str, c.BaseConfigOption[Any], str, Any]]:
    """(name, option, text, example) of every option, in the class's order."""
    docs = option_docstrings()
    found = []
    for name, option in VaultMcpConfig._schema:
        doc = docs.get(name)
        if not doc:
            raise SystemExit(
                f"generate: the option {name} has no docstring in mkdocs_vault_mcp/config.py; write one"
                " under it (what it does, then a last paragraph 'Example: VALUE')"
            )
        text, _, example = doc.rpartition("\n\nExample: ")
        if not text:
            raise SystemExit(f"generate: the docstring of {name} ends without 'Example: VALUE' (a YAML value)")
        value = yaml.safe_load(example)
        check = VaultMcpConfig()
        check.load_dict({name: value})
        failed, _ = check.validate()
        if failed:
            raise SystemExit(f"generate: the example of {name} ({example}) is not valid: {failed}")
        found.append((name, option, text, value))
    return found


def paragraphs(text: str) -> str:
    """A docstring's paragraphs, each on one line."""
    return "\n\n".join(" ".join(part.split()) for part in text.split("\n\n"))


def own_class_doc(option: object) -> str | None:
    cls = type(option)
    if cls.__module__ == config_module.__name__:
        return inspect.cleandoc(cls.__doc__ or "").split("\n")[0].rstrip(".") or None
    return None


TYPE_NAMES = {bool: "boolean", str: "string", int: "integer", float: "number"}


def type_name(option: object) -> str:
    own = own_class_doc(option)
    if own:
        return own[0].lower() + own[1:] if not own.startswith("`") else own
    if isinstance(option, c.Choice):
        return "one of " + ", ".join(f"`{choice}`" for choice in option.choices)
    if isinstance(option, c.Optional):
        return f"{type_name(option.option)} or `null`"
    if isinstance(option, c.ListOfItems):
        return f"list of {type_name(option.option_type)}s"
    if isinstance(option, c.Type) and option._type in TYPE_NAMES:
        return TYPE_NAMES[option._type]
    raise SystemExit(f"generate: no type name for {type(option).__name__}; add one to docs/generate.py")


def own_class_schema(option: object) -> dict[str, Any]:
    """The JSON schema of an option of this package's own classes."""
    name = type(option).__name__
    if name == "AutoOrNames":
        return {"anyOf": [{"const": "auto"}, {"type": "array", "items": {"type": "string", "minLength": 1}}]}
    if name == "ModelOrOff":
        return {"anyOf": [{"type": "boolean"}, {"type": "string", "minLength": 1}]}
    if name == "PathOrOff":
        return {"anyOf": [{"type": "string", "minLength": 1}, {"const": False}]}
    if name == "CharsOrOff":
        return {"anyOf": [{"type": "boolean"}, {"type": "integer", "minimum": 1000}]}
    if name == "McpUrl":
        return {"anyOf": [{"type": "string", "pattern": "^(/|https?://)"}, {"type": "null"}]}
    if name == "Port":
        return {"type": "integer", "minimum": 1, "maximum": 65535}
    if name == "Seconds":
        return {"type": "number", "minimum": 0}
    if name == "NonEmptyText":
        prefix = getattr(option, "prefix", "")
        return {"type": "string", "minLength": 1, **({"pattern": f"^{prefix}"} if prefix else {})}
    raise SystemExit(f"generate: no JSON schema for the option class {name}; add one to docs/generate.py")


def json_schema(option: object) -> dict[str, Any]:
    if type(option).__module__ == config_module.__name__:
        return own_class_schema(option)
    if isinstance(option, c.Choice):
        return {"enum": list(option.choices)}
    if isinstance(option, c.Optional):
        return {"anyOf": [json_schema(option.option), {"type": "null"}]}
    if isinstance(option, c.ListOfItems):
        return {"type": "array", "items": json_schema(option.option_type)}
    if isinstance(option, c.Type) and option._type in TYPE_NAMES:
        return {"type": TYPE_NAMES[option._type]}
    raise SystemExit(f"generate: no JSON schema for {type(option).__name__}; add one to docs/generate.py")


def yaml_value(value: Any) -> str:
    text = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=1000).strip()
    return text.removesuffix("\n...").strip()


def plugin_entry(settings: dict[str, Any]) -> str:
    lines = ["plugins:", "  - vault-mcp:"]
    lines += [f"      {name}: {yaml_value(value)}" for name, value in settings.items()]
    return "\n".join(lines)


CONFIGURATION_INTRO = """\
Every option goes under the plugin's entry in `mkdocs.yml`; all are optional. A wrong value fails the build
with MkDocs' own configuration error naming the option. Editors can check and complete these options with the
plugin's JSON schema, `docs/schema.json` in the repository: see
[Getting started](getting-started.md#check-the-options-in-your-editor).

With every option at its default:"""


def configuration_page() -> str:
    found = options()
    out = [
        f"<!-- Generated by docs/generate.py from VaultMcpConfig (mkdocs_vault_mcp/config.py): edit the docstrings"
        f" there, then run `{COMMAND}`. -->",
        "",
        "# Configuration",
        "",
        CONFIGURATION_INTRO,
        "",
        "```yaml",
        plugin_entry({name: option.default for name, option, _, _ in found}),
        "```",
    ]
    for name, option, text, example in found:
        out += [
            "",
            f"## `{name}`",
            "",
            f"**Type:** {type_name(option)}. **Default:** `{yaml_value(option.default)}`.",
            "",
            paragraphs(text),
            "",
            "```yaml",
            plugin_entry({name: example}),
            "```",
        ]
    return "\n".join(out) + "\n"


def schema_file() -> str:
    properties = {}
    for name, option, text, example in options():
        first = paragraphs(text).split(". ")[0].rstrip(".") + "."
        properties[name] = {
            "title": first,
            "markdownDescription": paragraphs(text),
            **json_schema(option),
            "default": option.default,
            "examples": [example],
        }
    schema = {
        "$schema": "https://json-schema.org/draft-07/schema",
        "title": "mkdocs-vault-mcp: index the site into SQLite FTS5 and serve it to AI agents over MCP.",
        "oneOf": [
            {"markdownDescription": "The vault-mcp plugin with its default options.", "enum": ["vault-mcp"]},
            {
                "type": "object",
                "properties": {
                    "vault-mcp": {
                        "markdownDescription": "The vault-mcp plugin's options.",
                        "type": "object",
                        "properties": properties,
                        "additionalProperties": False,
                    }
                },
                "additionalProperties": False,
            },
        ],
    }
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


# --- Tools ---------------------------------------------------------------------------------------------------

# One example a tool, on example-site: the arguments, and a line that says what the call asks.
EXAMPLES: dict[str, tuple[str, dict[str, Any]]] = {
    "count_documents": (
        "How many guide pages changed since March 2024?",
        {"folder": "guide", "modified_after": "2024-03-01T00:00:00Z"},
    ),
    "aggregate_documents": (
        "The blog's posts per category, the three largest.",
        {"by": "tag", "field": "categories", "folder": "blog", "limit": 3},
    ),
    "get_recent": ("The two pages changed last.", {"limit": 2}),
    "query_documents": (
        "The sensor pages by title, two at a time.",
        {"folder": "guide/sensors", "sort": "title", "limit": 2},
    ),
    "search": (
        "A question, as an agent asks it.",
        {"query": "how do I calibrate the wind vane?", "limit": 2, "sections_per_page": 1},
    ),
    "read": (
        "One section of a page, in a piece of 300 characters.",
        {"path": "guide/calibration.md", "section": "Apply the offset", "max_chars": 300},
    ),
    "stats": ("What the index holds (call it first).", {}),
    "links": (
        "Which pages link to the calibration page?",
        {"show": "backlinks", "target": "guide/calibration.md", "limit": 2},
    ),
}
# The tool whose parameters explain the shared filters; the others' tables point to it.
FIRST_TOOL = "count_documents"
# An example of an error: what a wrong argument gets.
ERROR_EXAMPLE = ("count_documents", {"modified_after": "2024-03-01"})
# Values that change with every build, shown as this.
VOLATILE = {"built_at": "(the build's time)"}


def build_example_site(root: Path) -> Path:
    """A copy of example-site, built by `mkdocs build`; the path of its published index."""
    site = root / "example-site"
    shutil.copytree(REPO / "example-site", site, ignore=shutil.ignore_patterns(".cache", "site"))
    for path in site.rglob("*"):
        os.utime(path, (EXAMPLE_FILES_TIME, EXAMPLE_FILES_TIME))
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(site / "mkdocs.yml")],
        capture_output=True,
        text=True,
        cwd=root,
    )
    if done.returncode != 0:
        raise SystemExit(f"generate: mkdocs build of example-site failed:\n{done.stderr[-3000:]}")
    return site / "site" / "vault-mcp" / "index.sqlite"


def run_examples(index: Path) -> tuple[dict[str, Any], dict[str, Any], str]:
    """Each example's answer, the tools as `tools/list` publishes them, and the error example's message."""
    answers: dict[str, Any] = {}

    async def run() -> tuple[dict[str, Any], str]:
        async with Client(create_server(IndexReader(index))) as client:
            published = {tool.name: tool for tool in (await client.list_tools()).tools}
            for name, (_, arguments) in EXAMPLES.items():
                result = await client.call_tool(name, arguments)
                if result.is_error:
                    raise SystemExit(f"generate: the example of {name} failed: {result.content}")
                answers[name] = result.structured_content
            result = await client.call_tool(*ERROR_EXAMPLE)
            (block,) = result.content
            assert result.is_error and isinstance(block, TextContent)
            return published, block.text.removeprefix(f"Error executing tool {ERROR_EXAMPLE[0]}: ")

    published, error = anyio.run(run)
    return answers, published, error


def steady(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: VOLATILE[key] if key in VOLATILE else steady(item) for key, item in value.items()}
    if isinstance(value, list):
        return [steady(item) for item in value]
    return value


def rule_text(rule: dict[str, Any]) -> str:
    """A parameter's type and bounds, in words."""
    if "enum" in rule:
        kind = "one of " + ", ".join(f"`{value}`" for value in rule["enum"])
    elif rule.get("type") == "object":
        kind = "object"
    else:
        kind = rule.get("type", "any")
    bounds = []
    if "minimum" in rule:
        bounds.append(f"{rule['minimum']} to {rule['maximum']}" if "maximum" in rule else f"≥ {rule['minimum']}")
    if "default" in rule:
        bounds.append(f"default `{json.dumps(rule['default'], ensure_ascii=False)}`")
    return kind + (f" ({', '.join(bounds)})" if bounds else "")


def compact(value: Any, indent: str = "") -> str:
    """JSON as a reader scans it: an object or list on one line when it fits, else one member a line."""
    flat = json.dumps(value, ensure_ascii=False)
    if len(indent) + len(flat) <= 110 or not isinstance(value, (dict, list)) or not value:
        return flat
    inner = indent + "  "
    if isinstance(value, dict):
        members = [
            f"{inner}{json.dumps(key, ensure_ascii=False)}: {compact(item, inner)}" for key, item in value.items()
        ]
        return "{\n" + ",\n".join(members) + "\n" + indent + "}"
    return "[\n" + ",\n".join(inner + compact(item, inner) for item in value) + "\n" + indent + "]"


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def tools_page(index: Path) -> str:
    answers, published, error = run_examples(index)
    out = [
        f"<!-- Generated by docs/generate.py from the tool declarations (mkdocs_vault_mcp/mcp/tools.py) and a run on"
        f" example-site: run `{COMMAND}` after changing either. -->",
        "",
        "# The tools",
        "",
        "Every tool is read-only and idempotent (and says so in its MCP annotations), publishes an output schema",
        "and returns structured content. Every answer, errors included, carries `_meta.index_stale`: true when an",
        "index update was pending while it was produced. A wrong argument gets a tool error that names the",
        "parameter, what it accepts and what was sent; for example:",
        "",
        "```text",
        f"→ {ERROR_EXAMPLE[0]} {json.dumps(ERROR_EXAMPLE[1], ensure_ascii=False)}",
        f"← error: {error}",
        "```",
        "",
        "The descriptions below are what `tools/list` gives the agent. Each example is a real call on",
        "[example-site](getting-started.md#try-it-on-the-example-site), a copy of it built with `mkdocs build`",
        "(its files dated 2024-06-01 where the front matter gives no `updated` date), and the answer it got.",
    ]
    for name, tool in TOOLS.items():
        shown = published[name]
        assert shown.description == tool.description, name
        required = set(tool.argument_schema.get("required", ()))
        out += ["", f"## `{name}`", "", f"**{tool.title}.** {paragraphs(tool.description)}", ""]
        out += ["| argument | type | what it does |", "| --- | --- | --- |"]
        shared = [
            argument
            for argument, rule in tool.argument_schema["properties"].items()
            if name != FIRST_TOOL and rule is FILTERS_EXPLAINED.get(argument)
        ]
        for argument, rule in tool.argument_schema["properties"].items():
            if argument in shared:
                continue
            mark = " (required)" if argument in required else ""
            out.append(f"| `{argument}`{mark} | {cell(rule_text(rule))} | {cell(rule.get('description', ''))} |")
        if shared:
            names = ", ".join(f"`{argument}`" for argument in shared)
            out.append(f"| {names} | | the shared filters, as [`{FIRST_TOOL}`](#{FIRST_TOOL}) explains them |")
        fields = tool.output_schema.get("properties", {})
        out += ["", "The answer's fields: " + ", ".join(f"`{field}`" for field in fields) + "."]
        descriptions = [
            f"`{field}`: {schema['description']}"
            for field, schema in fields.items()
            if isinstance(schema, dict) and schema.get("description")
        ]
        if descriptions:
            out += [" ".join(descriptions)]
        purpose, arguments = EXAMPLES[name]
        out += [
            "",
            f"Example: {purpose}",
            "",
            "```text",
            f"→ {name} {json.dumps(arguments, ensure_ascii=False)}",
            "← " + compact(steady(answers[name]), "  "),
            "```",
        ]
    return "\n".join(out) + "\n"


# --- Writing and checking ------------------------------------------------------------------------------------


def generated() -> dict[Path, Callable[[], str]]:
    def tools() -> str:
        with tempfile.TemporaryDirectory(prefix="vault-mcp-docs-") as root:
            return tools_page(build_example_site(Path(root)))

    return {
        PAGES / "configuration.md": configuration_page,
        DOCS / "schema.json": schema_file,
        PAGES / "tools.md": tools,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 with a diff if a page differs")
    parser.add_argument(
        "--only", choices=("configuration", "schema", "tools"), action="append", help="only this page (repeatable)"
    )
    args = parser.parse_args()
    stale = []
    for path, make in generated().items():
        if args.only and path.stem not in args.only:
            continue
        wanted = make()
        current = path.read_text(encoding="utf-8") if path.is_file() else ""
        if wanted == current:
            continue
        name = str(path.relative_to(REPO))
        if args.check:
            sys.stdout.writelines(
                difflib.unified_diff(current.splitlines(True), wanted.splitlines(True), name, f"{name} as generated")
            )
            stale.append(name)
        else:
            path.write_text(wanted, encoding="utf-8")
            print(f"wrote {name}")
    if stale:
        raise SystemExit(
            f"generate: {', '.join(stale)} differ from what the code declares; run `{COMMAND}` and commit the result"
        )


if __name__ == "__main__":
    main()
