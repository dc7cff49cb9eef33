"""MkDocs' live-reload server (`mkdocs serve`), asked what it watches and made to rebuild.

MkDocs has no public way to list the paths its server watches (`--watch-theme` folders appear only there) nor to
ask for a rebuild from outside its own file watcher, which starts only once the first build is over. This relies on
these private attributes of MkDocs 1.6's `mkdocs.livereload.LiveReloadServer`, set in its constructor:

- `_watched_paths`: the watched paths (path to a count of watchers);
- `_rebuild_cond` and `_want_rebuild`: the condition its build loop waits on and the flag that asks it to rebuild,
  set together as its own watcher does.

A server of another class (a test's, or none) has none of them: then nothing is watched beyond what MkDocs' config
names, and no rebuild is asked. Public `watched_paths()` and `request_rebuild()` methods would be worth proposing
to MkDocs.
"""

from __future__ import annotations

from typing import Any

from . import mismatch

DISTRIBUTION = "mkdocs"
SUPPORTED = ">=1.6,<2"
ATTRIBUTES = ("_watched_paths", "_rebuild_cond", "_want_rebuild")
# Its module under MkDocs, and under ProperDocs, the fork that serves the same class from its own package.
LIVERELOAD_MODULES = frozenset({"mkdocs.livereload", "properdocs.livereload"})


def is_livereload_server(server: Any) -> bool:
    """Whether `server` is (a subclass of) MkDocs' or ProperDocs' LiveReloadServer, without importing either."""
    return any(
        cls.__name__ == "LiveReloadServer" and cls.__module__ in LIVERELOAD_MODULES for cls in type(server).__mro__
    )


def missing(server: Any) -> list[str]:
    """The attributes this adapter relies on that `server`, a LiveReloadServer, lacks (none for another server)."""
    if not is_livereload_server(server):
        return []
    return [f"LiveReloadServer.{name}" for name in ATTRIBUTES if not hasattr(server, name)]


def require(server: Any) -> None:
    """Raise AdapterMismatch, naming what is missing, when `server` is a LiveReloadServer without what is used here."""
    absent = missing(server)
    if absent:
        raise mismatch(DISTRIBUTION, absent, SUPPORTED)


def watched_paths(server: Any) -> list[str]:
    """The paths `server` watches; none for a server that is not MkDocs' LiveReloadServer."""
    if not is_livereload_server(server):
        return []
    require(server)
    return list(server._watched_paths)


def request_rebuild(server: Any) -> bool:
    """Ask `server` to rebuild, as its own file watcher does; False (nothing asked) for another server."""
    if not is_livereload_server(server):
        return False
    require(server)
    with server._rebuild_cond:
        server._want_rebuild = True
        server._rebuild_cond.notify_all()
    return True
