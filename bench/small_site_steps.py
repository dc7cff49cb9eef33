"""Where a small site's build spends the plugin's CPU seconds, thread by thread, cold and warm (issue 11).

    bench/out/sites-venv/bin/python bench/small_site_steps.py --site NAME=PATH/mkdocs.yml [--site ...] \
        [--rounds 3] [--on-path NAME] [--name small_site_steps]

Run it with the Python of the venv that builds the sites (bench/small_sites.py's `--venv`): each build is a
fresh process of that Python, which imports what `mkdocs build` imports, then the plugin, then builds the site
with vault-mcp added (small_sites.with_vault), cold (the plugin's cache deleted) and then warm. A wall-clock
ratio on a shared 2-CPU machine moves by more than the plugin costs; CPU seconds of one thread move far less.
Reported, the best of `--rounds` for each column:

- `import`: CPU of importing the plugin after MkDocs, Markdown and Jinja are loaded (what a build pays first);
- `events`: CPU of the plugin's events on the build's own thread;
- `events wall`: their wall time, waits included (the closing log line's seconds): beyond `events`, what the
  build's thread waited for the plugin's other parts (git's history, the writer's open and commit);
- `writer`: CPU of the writer thread (making documents, inserts, FTS5, the commit); a build with
  PAGES_FOR_A_PROCESS pages or more to write writes in a process of its own, counted under `git children`,
  which holds every child process;
- `git`: CPU of the thread that reads the git history (parsing, walking, the cache files) and of its git
  processes (a package that reads git on the build's thread counts it under `events` and `git` children);
- `build`: CPU of the whole build process and its children, for scale (the bare build is bench/small_sites.py's
  `none`).

Writes bench/results/small_site_steps.txt (`--name`: another name). The plugin is whichever copy the venv imports
(PYTHONPATH first), named under the table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from report import write_results  # bench/ is on sys.path when a script runs
from small_sites import describe, with_vault

# One build in a process of its own: the CPU of each part, as JSON on the last line of its output.
ONE_BUILD = textwrap.dedent("""
    import json, resource, sys, threading, time
    import jinja2, markdown, mkdocs.commands.build, mkdocs.config, mkdocs.plugins, mkdocs.structure.files
    import mkdocs.structure.nav, mkdocs.structure.pages, mkdocs.theme

    cpu = {"import": 0.0, "events": 0.0, "writer": 0.0, "git": 0.0}
    start = time.process_time()
    import mkdocs_vault_mcp.plugin as plugin
    from mkdocs_vault_mcp.index import writer
    cpu["import"] = time.process_time() - start

    def counted(name, function):
        def run(*args, **kwargs):
            begun = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                cpu[name] += time.thread_time() - begun
        return run

    writer._ThreadWrites._work = counted("writer", writer._ThreadWrites._work)
    from mkdocs_vault_mcp import modified
    if hasattr(modified, "GitTimesRead"):
        modified.GitTimesRead._read = counted("git", modified.GitTimesRead._read)
    timed = plugin.BuildState.timed

    def timed_cpu(self):
        begun = time.thread_time()
        with timed(self):
            yield
        cpu["events"] += time.thread_time() - begun

    import contextlib
    plugin.BuildState.timed = contextlib.contextmanager(timed_cpu)
    config = mkdocs.config.load_config(config_file=sys.argv[1], site_dir=sys.argv[2])
    config.plugins.on_startup(command="build", dirty=False)
    mkdocs.commands.build.build(config)
    cpu["events wall"] = config.plugins["vault-mcp"].state.plugin_seconds
    config.plugins.on_shutdown()
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu["git children"] = children.ru_utime + children.ru_stime
    cpu["build"] = own.ru_utime + own.ru_stime + cpu["git children"]
    print(json.dumps(cpu))
""")
COLUMNS = ("import", "events", "events wall", "writer", "git", "git children", "build")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", action="append", required=True, help="NAME=PATH/mkdocs.yml")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--on-path", action="append", default=[], metavar="NAME",
                        help="put this site's folder on PYTHONPATH")
    parser.add_argument("--name", default="small_site_steps", help="the results file's name")
    args = parser.parse_args()
    lines = [f"load average before: {os.getloadavg()[0]:.1f}", "",
             "| site | build | import | events | events wall | writer | git | git children | build CPU |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    origins = []
    for spec in args.site:
        name, _, path = spec.partition("=")
        config = Path(path).resolve()
        vault = with_vault(config)
        cache = config.parent / ".cache" / "plugin" / "vault-mcp"
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as bench/small_sites.py: an installed package comes compiled
        if name in args.on_path:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(config.parent), env.get("PYTHONPATH")]))
        origins.append(f"{name}: {describe(config.parent)}")
        best: dict[str, dict[str, float]] = {}
        try:
            for round_number in range(args.rounds + 1):  # round 0 compiles and warms the page cache, untimed
                for kind in ("cold", "warm"):
                    if kind == "cold":
                        shutil.rmtree(cache, ignore_errors=True)
                    site_dir = Path(__file__).resolve().parent / "out" / "small-site-steps" / name
                    shutil.rmtree(site_dir, ignore_errors=True)
                    # -P: the site's folder is the working directory, and a repository's own package there
                    # (MkDocs' docs hold `mkdocs/`) must not shadow the venv's, as it does not for `mkdocs build`
                    done = subprocess.run([sys.executable, "-P", "-c", ONE_BUILD, str(vault), str(site_dir)],
                                          cwd=config.parent, env=env, capture_output=True, text=True, check=True)
                    if round_number:
                        measured = json.loads(done.stdout.strip().splitlines()[-1])
                        kept = best.setdefault(kind, measured)
                        for column in COLUMNS:
                            kept[column] = min(kept[column], measured[column])
        finally:
            vault.unlink()
        for kind, cpu in best.items():
            lines.append(f"| {name} | {kind} | " + " | ".join(f"{cpu[column]:.3f} s" for column in COLUMNS) + " |")
            print(lines[-1], flush=True)
    where = subprocess.run([sys.executable, "-c", "import mkdocs_vault_mcp; print(mkdocs_vault_mcp.__file__)"],
                           capture_output=True, text=True, cwd="/").stdout.strip()
    package = Path(where).parent.parent
    lines += ["", f"sites: {'; '.join(origins)}; plugin {package} at {describe(package).split()[0]}", "",
              f"load average after: {os.getloadavg()[0]:.1f}; CPU seconds, the best of {args.rounds} rounds for each "
              "column (`events wall`: wall seconds); `git` counts only a package that reads git on a thread of its own"]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    write_results(args.name, text)


if __name__ == "__main__":
    main()
