"""Where a small site's build spends the plugin's CPU seconds, thread by thread, cold and warm.

    bench/out/sites-venv/bin/python bench/small_site_steps.py --site NAME=PATH/mkdocs.yml [--site ...] \
        [--rounds 3] [--on-path NAME] [--name small_site_steps]

Run it with the Python of the venv that builds the sites (bench/small_sites.py's `--venv`): each build is a
fresh process of that Python, which imports what `mkdocs build` imports, then the plugin, then builds the site
with vault-mcp added (small_sites.with_vault), cold (the plugin's cache deleted) and then warm, each round after
the bare build. A wall-clock ratio on a shared 2-CPU machine moves by more than the plugin costs; CPU seconds of
one thread move far less.
Reported, the best of `--rounds` for each column:

- `import`: CPU of importing the plugin after MkDocs, Markdown and Jinja are loaded (what a build pays first);
- `events`: CPU of the plugin's events on the build's own thread, each rendered page's fingerprint and hand-over
  to the writer included;
- `events wall`: their wall time, waits included (the closing log line's seconds): beyond `events`, what the
  build's thread waited for the plugin's other parts (git's history, the writer's open and commit);
- `shutdown wall`: the wall time of on_shutdown, the build's last event: what the build's end waits for the
  writer: its index closed (in earlier versions, its process's exit too);
- `writer`: CPU of the writer thread (making documents, inserts, FTS5, the commit); a build with
  PAGES_FOR_A_PROCESS pages or more to write writes in a process of its own, counted under `git children`,
  which holds every child process, the writer's and its fork server's too (neither is waited for by the build:
  this script adopts and waits for them after it, report.reap_descendants);
- `git`: CPU of the thread that reads the git history (parsing, walking, the cache files) and of its git
  processes (a package that reads git on the build's thread counts it under `events` and `git` children);
- `stats page`: CPU of MkDocs building the plugin's stats page on the build's thread (its template, the other
  plugins' events for it, the file written), less the plugin's own events in it (under `events`);
- `build`: CPU of the whole build process and its children, for scale;
- `on the build's thread`: import + events + stats page, the plugin's fixed cost on the thread whose time is the
  build's, and its share of the CPU of the same site's bare build (its own config, no plugin; bench/small_sites.py's
  `none`), run in the same rounds.

What the second CPU's work (`writer` in a process, `git children`) costs the build's thread while it runs is
bench/writer_interference.py's measure.

Writes bench/results/speed/small_site_steps.json (`--name`: another name). The plugin is whichever copy the venv imports
(PYTHONPATH first), named under the table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from report import adopt_orphans, describe, reap_descendants, write_results  # bench/ is on sys.path when a script runs
from small_sites import build_env, with_vault

# One build in a process of its own: the CPU of each part, as JSON on the last line of its output.
ONE_BUILD = textwrap.dedent("""
    import functools, json, resource, sys, threading, time
    import jinja2, markdown, mkdocs.commands.build, mkdocs.config, mkdocs.plugins, mkdocs.structure.files
    import mkdocs.structure.nav, mkdocs.structure.pages, mkdocs.theme

    cpu = {"import": 0.0, "events": 0.0, "writer": 0.0, "git": 0.0}
    start = time.process_time()
    import mkdocs_vault_mcp.plugin as plugin
    try:
        from mkdocs_vault_mcp.index.write import working_index as writer
    except ImportError:  # a checkout before index/ was split
        from mkdocs_vault_mcp.index import working_index as writer
    cpu["import"] = time.process_time() - start

    def counted(name, function):
        @functools.wraps(function)  # pickled by name to a writer process, which runs the method unwrapped
        def run(*args, **kwargs):
            begun = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                cpu[name] += time.thread_time() - begun
        return run

    # The writer's work, on whichever thread runs it (a writer process's is counted with the children).
    for method in (writer.WorkingIndex.open, writer.WorkingIndex.put, writer.WorkingIndex.delete_all,
                   writer.WorkingIndex.commit):
        setattr(writer.WorkingIndex, method.__name__, counted("writer", method))
    # Each page's fingerprint and hand-over, timed by hand rather than under BuildState.timed (and never inside it)
    plugin.VaultMcpPlugin._index_page = counted("events", plugin.VaultMcpPlugin._index_page)
    try:
        from mkdocs_vault_mcp.build_steps import modified
    except ImportError:  # a checkout before build/ was renamed
        from mkdocs_vault_mcp.build import modified
    if hasattr(modified.GitTimesRead, "_read"):
        modified.GitTimesRead._read = counted("git", modified.GitTimesRead._read)
    elif hasattr(modified.GitTimesRead, "_run"):  # the read runs in Beside._run, on its own thread
        modified.GitTimesRead._run = counted("git", modified.GitTimesRead._run)
    timed = plugin.BuildState.timed

    def timed_cpu(self):
        begun = time.thread_time()
        with timed(self):
            yield
        cpu["events"] += time.thread_time() - begun

    import contextlib
    plugin.BuildState.timed = contextlib.contextmanager(timed_cpu)
    config = mkdocs.config.load_config(config_file=sys.argv[1], site_dir=sys.argv[2])
    build_page = mkdocs.commands.build._build_page
    cpu["stats page"] = 0.0

    def build_page_timed(page, *args, **kwargs):
        if page.file is not config.plugins["vault-mcp"].stats_file:
            return build_page(page, *args, **kwargs)
        begun, events = time.thread_time(), cpu["events"]
        try:
            return build_page(page, *args, **kwargs)
        finally:  # MkDocs' part of it: the plugin's own on_page_context is under events
            cpu["stats page"] += time.thread_time() - begun - (cpu["events"] - events)

    mkdocs.commands.build._build_page = build_page_timed
    config.plugins.on_startup(command="build", dirty=False)
    mkdocs.commands.build.build(config)
    cpu["events wall"] = config.plugins["vault-mcp"].state.plugin_seconds
    begun = time.perf_counter()
    config.plugins.on_shutdown()
    cpu["shutdown wall"] = time.perf_counter() - begun
    # children the build no longer waits for (a writer, in earlier versions): their CPU counts
    for child in getattr(writer, "_exiting", []):
        child.wait()
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu["git children"] = children.ru_utime + children.ru_stime
    cpu["build"] = own.ru_utime + own.ru_stime + cpu["git children"]
    print(json.dumps(cpu))
""")
# The same site without the plugin, for scale: the CPU of its process.
BARE_BUILD = textwrap.dedent("""
    import json, resource, sys
    import mkdocs.commands.build, mkdocs.config

    config = mkdocs.config.load_config(config_file=sys.argv[1], site_dir=sys.argv[2])
    config.plugins.on_startup(command="build", dirty=False)
    mkdocs.commands.build.build(config)
    config.plugins.on_shutdown()
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"build": own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime}))
""")
COLUMNS = ("import", "events", "events wall", "shutdown wall", "stats page", "writer", "git", "git children", "build")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", action="append", required=True, help="NAME=PATH/mkdocs.yml")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--on-path", action="append", default=[], metavar="NAME", help="put this site's folder on PYTHONPATH"
    )
    parser.add_argument("--name", default="small_site_steps", help="the results file's name")
    args = parser.parse_args()
    adopt_orphans()
    # Each build runs in its site's folder: a relative PYTHONPATH (another checkout to measure) would name nothing
    # there, and the venv's own package would be measured instead, silently.
    if os.environ.get("PYTHONPATH"):
        os.environ["PYTHONPATH"] = os.pathsep.join(map(os.path.abspath, os.environ["PYTHONPATH"].split(os.pathsep)))
    lines = [
        f"load average before: {os.getloadavg()[0]:.1f}",
        "",
        "| site | build | import | events | events wall | shutdown wall | stats page | writer | git "
        "| git children | build CPU | on the build's thread |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    origins, bare_builds = [], []
    for spec in args.site:
        name, _, path = spec.partition("=")
        config = Path(path).resolve()
        vault = with_vault(config)
        cache = config.parent / ".cache" / "plugin" / "vault-mcp"
        env = build_env(Path(sys.executable).parent)  # as bench/small_sites.py builds
        if name in args.on_path:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(config.parent), env.get("PYTHONPATH")]))
        origins.append(f"{name}: {describe(config.parent)}")
        best: dict[str, dict[str, float]] = {}
        try:
            for round_number in range(args.rounds + 1):  # round 0 compiles and warms the page cache, untimed
                for kind in ("bare", "cold", "warm"):
                    if kind == "cold":
                        shutil.rmtree(cache, ignore_errors=True)
                    site_dir = Path(__file__).resolve().parent / "out" / "small-site-steps" / name
                    shutil.rmtree(site_dir, ignore_errors=True)
                    one_build, config_file = (BARE_BUILD, config) if kind == "bare" else (ONE_BUILD, vault)
                    # -P: the site's folder is the working directory, and a repository's own package there
                    # (MkDocs' docs hold `mkdocs/`) must not shadow the venv's, as it does not for `mkdocs build`
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    done = subprocess.run(
                        [sys.executable, "-P", "-c", one_build, str(config_file), str(site_dir)],
                        cwd=config.parent,
                        env=env,
                        capture_output=True,
                        text=True,
                        check=True,
                    )
                    reap_descendants()  # a writer process and its fork server, which the build never waits for
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    if round_number:
                        measured = json.loads(done.stdout.strip().splitlines()[-1])
                        # The whole tree, from outside: the build's own figure misses what it did not wait for.
                        whole = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
                        if "git children" in measured:
                            measured["git children"] += whole - measured["build"]
                        measured["build"] = whole
                        kept = best.setdefault(kind, measured)
                        for column in measured:
                            kept[column] = min(kept[column], measured[column])
        finally:
            vault.unlink()
        bare = best.pop("bare")["build"]
        for kind, cpu in best.items():
            own = cpu["import"] + cpu["events"] + cpu["stats page"]
            lines.append(
                f"| {name} | {kind} | "
                + " | ".join(f"{cpu[column]:.3f} s" for column in COLUMNS)
                + f" | {own:.3f} s ({100 * own / bare:.1f}%) |"
            )
            print(lines[-1], flush=True)
        bare_builds.append(f"{name} {bare:.3f} s")
    where = subprocess.run(
        [sys.executable, "-c", "import mkdocs_vault_mcp; print(mkdocs_vault_mcp.__file__)"],
        capture_output=True,
        text=True,
        cwd="/",
    ).stdout.strip()
    package = Path(where).parent.parent
    lines += [
        "",
        f"sites: {'; '.join(origins)}; plugin {package} at {describe(package).split()[0]}",
        "",
        f"load average after: {os.getloadavg()[0]:.1f}; CPU seconds, the best of {args.rounds} rounds for each "
        "column (`events wall`, `shutdown wall`: wall seconds); `git` counts only a package that reads git on a "
        "thread of its own; `on the build's thread`: import + events + stats page, and its share of the bare "
        f"build's CPU (the best of the same rounds: {', '.join(bare_builds)})",
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    write_results(args.name, text)


if __name__ == "__main__":
    main()
