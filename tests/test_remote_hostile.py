"""`serve URL` against a hostile site (tests/helpers/hostile_site.py, one route per misbehaviour) and a hostile
cache folder: every misbehaviour ends in a one-line refusal, within the download's deadline, with the last good
index still served, no temporary file left, and nothing written outside the cache folder."""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.hostile_site import (
    HostileSite,
    Listener,
    endless_body,
    one_line_error,
    raw,
    redirect,
    serve,
    serve_bytes,
    trickle_body,
    trickle_headers,
    wait_for,
)
from helpers.site import built_example_site
from mkdocs_vault_mcp.mcp.download import redirect_problem
from mkdocs_vault_mcp.mcp.remote_index import DownloadRefused, RemoteIndex, site_folder

INDEX = "/vault-mcp/index.sqlite"


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A good index, as the example site's build publishes it."""
    return built_example_site(tmp_path_factory.mktemp("example")).index_path.read_bytes()


@pytest.fixture
def hostile() -> Iterator[HostileSite]:
    site = HostileSite()
    yield site
    site.stop()


def with_format_version(index: bytes, version: str, path: Path) -> bytes:
    path.write_bytes(index)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE info SET value = ? WHERE key = 'schema_version'", [version])
    conn.close()
    return path.read_bytes()


def leftovers(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.rglob("*") if p.name.endswith(".tmp") or "-journal" in p.name)


@pytest.mark.parametrize("version", ["²", "9" * 5000, "7a", ""], ids=["superscript", "5000-digits", "7a", "empty"])
def test_a_format_version_that_is_no_number_is_refused_in_one_line_and_the_last_good_index_stays(
    good: bytes, hostile: HostileSite, tmp_path: Path, version: str
) -> None:
    bad = with_format_version(good, version, tmp_path / "bad.sqlite")
    hostile.routes[INDEX] = serve_bytes(bad)
    cache = tmp_path / "cache"
    message = one_line_error(serve(hostile.url("/"), cache))
    assert "which is not a format number" in message and "No cached copy" in message
    assert leftovers(cache) == []

    hostile.routes[INDEX] = serve_bytes(good, etag='"good"')
    remote = RemoteIndex(hostile.url("/"), cache, refresh_seconds=0)
    remote.start()
    hostile.routes[INDEX] = serve_bytes(bad, etag='"bad"')
    with pytest.raises(DownloadRefused, match="which is not a format number") as refused:
        remote.refresh()
    assert "\n" not in str(refused.value)
    assert remote.path.read_bytes() == good
    assert remote.describe()["index_offline"] is True
    assert sorted(p.name for p in remote.folder.iterdir()) == ["index.sqlite", "state.json"]


@pytest.mark.parametrize("misbehaviour", ["headers", "body"])
def test_a_site_that_trickles_is_given_up_on_within_the_download_deadline(
    hostile: HostileSite, tmp_path: Path, misbehaviour: str
) -> None:
    trickle = trickle_headers if misbehaviour == "headers" else trickle_body
    hostile.routes[INDEX] = trickle(hostile, every=0.5)
    # Trickling for ever: without a deadline for the whole download, `serve` would never end (its timeout fails).
    message = one_line_error(serve(hostile.url("/"), tmp_path / "cache", "--download-timeout", "2"))
    assert f"gave up on {hostile.url(INDEX)}" in message and "took more than 2 s" in message
    assert leftovers(tmp_path / "cache") == []


def test_a_refresh_that_meets_a_trickling_site_gives_up_and_the_next_refresh_still_runs(
    good: bytes, hostile: HostileSite, tmp_path: Path
) -> None:
    hostile.routes[INDEX] = serve_bytes(good, etag='"one"')
    remote = RemoteIndex(hostile.url("/"), tmp_path / "cache", refresh_seconds=0.2, download_seconds=2)
    remote.start()
    try:
        hostile.routes[INDEX] = trickle_body(hostile, every=0.5)
        wait_for(lambda: "gave up" in (remote.problem or ""), 60, "the background refresh never gave up")
        assert remote.path.read_bytes() == good
        # The refresh thread and its lock are free again: the next refresh takes a new index.
        newer = good + bytes(4096)
        hostile.routes[INDEX] = serve_bytes(newer, etag='"two"')
        wait_for(lambda: remote.problem is None, 60, "the refresh after the trickling one never ran")
        wait_for(lambda: remote.path.read_bytes() == newer, 60, "the new index never replaced the old one")
    finally:
        remote.stop()
    # Each refresh confirms the index by rewriting state.json through a temporary file; once stopped, none is left.
    wait_for(lambda: leftovers(tmp_path / "cache") == [], 10, "a temporary file stayed in the cache folder")


def test_the_size_limit_holds_while_streaming_an_answer_of_no_announced_length(
    hostile: HostileSite, tmp_path: Path
) -> None:
    hostile.routes[INDEX] = endless_body(hostile)
    remote = RemoteIndex(hostile.url("/"), tmp_path / "cache", max_bytes=2 << 20, refresh_seconds=0)
    with pytest.raises(DownloadRefused, match=r"is over 2\.0 MB, above the limit of 2 MB"):
        remote.start()
    assert leftovers(tmp_path / "cache") == []


NOT_HTTP = {
    "another protocol": b"SSH-2.0-OpenSSH_9.6\r\n",
    "a thousand headers": b"HTTP/1.1 200 OK\r\n" + b"X-A: b\r\n" * 1000 + b"\r\n",
    "a bad length": "HTTP/1.1 200 OK\r\nContent-Length: ²\r\n\r\nSQLite".encode(),
}


@pytest.mark.parametrize("answer", NOT_HTTP.values(), ids=NOT_HTTP.keys())
def test_an_answer_that_is_not_http_is_refused_in_one_line(hostile: HostileSite, tmp_path: Path, answer: bytes) -> None:
    hostile.routes[INDEX] = raw(answer)
    message = one_line_error(serve(hostile.url("/"), tmp_path / "cache"))
    assert f"{hostile.url(INDEX)}" in message and "No cached copy" in message
    assert leftovers(tmp_path / "cache") == []


BAD_STATES = {
    "a list": "[]",
    "text": "not json at all",
    "a huge time": '{"downloaded_at": 1e300, "confirmed_at": 1e300}',
    "a time as text": '{"downloaded_at": "yesterday"}',
    "not a number": '{"confirmed_at": NaN}',
    "a CRLF in the ETag": '{"etag": "\\"a\\"\\r\\nX-Injected: 1", "downloaded_at": 1700000000}',
    "an ETag of a number": '{"etag": 5}',
    "an index URL of ftp": '{"index_url": "ftp://127.0.0.1/index.sqlite"}',
    "an index URL of two lines": '{"index_url": "http://127.0.0.1/a\\nb"}',
    "an index URL on another site": '{"index_url": "http://elsewhere.example/index.sqlite"}',
    "a CRLF in the catalog's ETag": '{"catalog_etag": "\\"a\\"\\r\\nX-Injected: 1"}',
}


@pytest.mark.parametrize("content", BAD_STATES.values(), ids=BAD_STATES.keys())
def test_a_state_file_of_an_unexpected_shape_gives_one_warning_and_a_fresh_start(
    good: bytes, hostile: HostileSite, tmp_path: Path, content: str, caplog: pytest.LogCaptureFixture
) -> None:
    cache = tmp_path / "cache"
    folder = site_folder(cache, hostile.url(INDEX))
    folder.mkdir(parents=True)
    (folder / "index.sqlite").write_bytes(good)
    (folder / "state.json").write_text(content, encoding="utf-8")
    # The site down: the cached index is served, whatever the state file said.
    remote = RemoteIndex(hostile.url("/"), cache, refresh_seconds=0)
    with caplog.at_level(logging.WARNING):
        assert remote.start() == folder / "index.sqlite"
    assert remote.describe()["index_offline"] is True
    assert len([r for r in caplog.records if "state.json is not usable" in r.getMessage()]) == 1
    # The site up: the index is downloaded again, with no header taken from the bad file.
    (folder / "state.json").write_text(content, encoding="utf-8")
    hostile.routes[INDEX] = serve_bytes(good, etag='"fresh"')
    remote = RemoteIndex(hostile.url("/"), cache, refresh_seconds=0)
    remote.start()
    assert remote.describe()["index_offline"] is False
    sent = hostile.requests[-1][1]
    assert "X-Injected" not in sent and not any("\r" in value or "\n" in value for value in sent.values())
    assert remote.refresh() is False  # the ETag now kept is the site's, and it is sent back
    assert hostile.requests[-1][1]["If-None-Match"] == '"fresh"'


REFUSED_REDIRECTS = {
    "ftp": ("ftp://127.0.0.1:{port}/index.sqlite", "only http and https are downloaded from"),
    "file": ("file:///etc/passwd", "its scheme is file:, and only http and https are downloaded from"),
    "data": ("data:application/octet-stream;base64,U1FMaXRl", "its scheme is data:"),
    "credentials": ("http://alice:s3cret@127.0.0.1:{port}/index.sqlite", "carries a user name or password"),
}


@pytest.mark.parametrize("target, reason", REFUSED_REDIRECTS.values(), ids=REFUSED_REDIRECTS.keys())
def test_a_redirect_out_of_http_is_refused_with_its_reason_and_never_followed(
    hostile: HostileSite, tmp_path: Path, target: str, reason: str
) -> None:
    listener = Listener()
    try:
        hostile.routes[INDEX] = redirect(target.format(port=listener.port))
        remote = RemoteIndex(hostile.url("/"), tmp_path / "cache", refresh_seconds=0)
        with pytest.raises(DownloadRefused) as refused:
            remote.start()
        message = str(refused.value)
        assert "which is not followed" in message and reason in message, message
        assert "redirected more than" not in message and "s3cret" not in message
    finally:
        listener.stop()
    assert listener.connections == 0


def test_redirects_stay_on_https_once_there() -> None:
    assert redirect_problem("https://a.example/x", "http://b.example/y") == "it leaves https for unencrypted http"
    assert redirect_problem("http://a.example/x", "http://b.example/y") is None
    assert redirect_problem("http://a.example/x", "https://b.example/y") is None
    assert redirect_problem("https://a.example/x", "https://b.example:8443/y") is None


@pytest.mark.parametrize("linked", ["sites", "site"])
def test_a_cache_folder_that_is_a_symbolic_link_is_replaced_and_never_written_through(
    good: bytes, hostile: HostileSite, tmp_path: Path, linked: str
) -> None:
    cache = tmp_path / "cache"
    folder = site_folder(cache, hostile.url(INDEX))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / ".old-download.tmp").write_bytes(b"someone else's")
    os.utime(elsewhere / ".old-download.tmp", (0, 0))
    link = folder if linked == "site" else folder.parent
    link.parent.mkdir(parents=True)
    link.symlink_to(elsewhere, target_is_directory=True)
    hostile.routes[INDEX] = serve_bytes(good)
    remote = RemoteIndex(hostile.url("/"), cache, refresh_seconds=0)
    assert remote.start() == folder / "index.sqlite"
    assert sorted(p.name for p in elsewhere.iterdir()) == [".old-download.tmp"]
    assert (folder / "index.sqlite").read_bytes() == good
    for made in (folder, folder.parent):
        assert not made.is_symlink()
        assert stat.S_IMODE(made.stat().st_mode) == 0o700


def test_an_existing_cache_folder_open_to_others_is_made_private(
    good: bytes, hostile: HostileSite, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    folder = site_folder(cache, hostile.url(INDEX))
    folder.mkdir(parents=True, mode=0o777)
    os.chmod(folder, 0o777)
    hostile.routes[INDEX] = serve_bytes(good)
    RemoteIndex(hostile.url("/"), cache, refresh_seconds=0).start()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_a_url_with_a_user_and_password_is_refused_and_the_password_never_shown(
    hostile: HostileSite, tmp_path: Path
) -> None:
    url = f"http://alice:s3cret@127.0.0.1:{hostile.port}/"
    message = one_line_error(serve(url, tmp_path / "cache"))
    assert "carries a user name or password" in message and "s3cret" not in message
    with pytest.raises(DownloadRefused) as refused:
        RemoteIndex(url, tmp_path / "cache", refresh_seconds=0).start()
    assert "user name or password" in str(refused.value) and "s3cret" not in str(refused.value)
    assert hostile.requests == []
    assert not any("s3cret" in p.name for p in tmp_path.rglob("*"))


@pytest.mark.parametrize(
    "option, value, expected",
    [
        ("--refresh", "0.2", "expected 0 (only at start) or a number of seconds from 5 to"),
        ("--refresh", "nan", "expected 0 (only at start) or a number of seconds from 5 to"),
        ("--download-timeout", "0", "expected a number of seconds from 1 to 86400"),
    ],
)
def test_a_refresh_interval_or_deadline_out_of_range_is_refused(
    tmp_path: Path, option: str, value: str, expected: str
) -> None:
    done = serve("http://127.0.0.1:9/", tmp_path / "cache", option, value)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"argument {option}: {expected}" in done.stderr, done.stderr
    assert not (tmp_path / "cache").exists()
