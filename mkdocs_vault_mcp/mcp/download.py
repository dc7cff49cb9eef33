"""One GET of a deployed site's index, hardened against the site: a deadline for the whole download, the size
limit enforced while streaming, redirects followed only within http(s), and URLs with a user and password refused.

http.client does the HTTP over a connection made here, so that a deadline can close it: a watchdog timer shuts the
socket down when the time is up, which ends a read that a site answering one byte at a time would otherwise keep
alive for ever (a socket timeout bounds one read, not the download). The body is written to a file the caller
names, created private and never through a symbolic link; on any failure it is removed.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit, urlunsplit

from .. import __version__

MAX_REDIRECTS = 5
DOWNLOAD_SECONDS = 300  # the whole download: a 512 MB index needs about 14 Mbit/s to arrive in time
HEADERS_SECONDS = 30  # from the start of each request to the end of its answer's headers
MIN_DOWNLOAD_SECONDS = 1
MAX_DOWNLOAD_SECONDS = 86_400
CHUNK = 1 << 20
REDIRECTS = (301, 302, 303, 307, 308)
MAX_URL = 2_000  # a URL a site names (in its discovery file) that is longer is not taken
SHOWN_URL = 200  # characters of a URL a message shows: a `data:` URL can be any length
NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)  # Windows has no symbolic links to follow here


class DownloadRefused(Exception):
    """The site's index could not be fetched, or what came is not a usable index; the message says which and why."""


class HttpError(DownloadRefused):
    """The site answered with an HTTP status other than 200 and 304, named by `status`."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class TooBig(DownloadRefused):
    """The answer is larger than the limit the caller set."""


@dataclass
class Answer:
    """What the site answered: 200 with the body written to the caller's file, or 304 (the cached index is current)."""

    status: int
    etag: str | None
    last_modified: str | None
    received: int = 0


def shown(url: str) -> str:
    """`url` as a message may show it: without any user name or password, and not longer than a line."""
    scheme, netloc, path, query, fragment = urlsplit(url)
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    text = urlunsplit((scheme, netloc, path, query, fragment))
    return text if len(text) <= SHOWN_URL else text[:SHOWN_URL] + "…"


def url_problem(url: str) -> str | None:
    """Why `url` is not one to download from, or None when it is."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        return "it is not a valid URL"
    if parts.scheme.lower() not in ("http", "https"):
        return f"its scheme is {parts.scheme or 'none'}:, and only http and https are downloaded from"
    if "@" in parts.netloc:
        return "it carries a user name or password, which would be sent to the site and shown in messages"
    if not parts.hostname:
        return "it names no host"
    return None


def plain_url(value: object) -> bool:
    """Whether `value` is an http(s) URL to download from, of one printable line (a site names it)."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= MAX_URL
        and value.isprintable()
        and " " not in value
        and url_problem(value) is None
    )


def check_url(url: str) -> None:
    """Raise DownloadRefused, naming the reason and never the password, unless `url` can be downloaded from."""
    problem = url_problem(url)
    if problem:
        raise DownloadRefused(f"cannot download from {shown(url)}: {problem}. Give an http:// or https:// URL.")


def redirect_problem(start: str, target: str) -> str | None:
    """Why a redirect to `target` of a download of `start` is not followed, or None when it is."""
    problem = url_problem(target)
    if problem:
        return problem
    if urlsplit(start).scheme.lower() == "https" and urlsplit(target).scheme.lower() == "http":
        return "it leaves https for unencrypted http"
    return None


class Deadline:
    """The time left for one download, and a watchdog that shuts the connection down when a limit is reached."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.expired: str | None = None  # what took too long, once something did
        self._waiting_for = ""
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._timer: threading.Timer | None = None

    def left(self) -> float:
        return max(0.001, self.end - time.monotonic())

    def arm(self, seconds: float, waiting_for: str) -> None:
        """Give up `seconds` from now (never later than the whole download's end), saying what was awaited."""
        limit = min(seconds, self.end - time.monotonic())
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._waiting_for = f"{waiting_for} took more than {min(seconds, self.seconds):g} s"
            self._timer = threading.Timer(max(0.0, limit), self._expire)
            self._timer.daemon = True
            self._timer.start()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._socket = sock
        if self.expired:
            self._shut(sock)

    def cancel(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()

    def _expire(self) -> None:
        with self._lock:
            self.expired = self._waiting_for
            sock = self._socket
        if sock is not None:
            self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        # The plain socket's shutdown, also for TLS: it wakes a read blocked in another thread without touching
        # the TLS state that read is using.
        with contextlib.suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)


def download(
    url: str,
    headers: dict[str, str],
    destination: Path,
    max_bytes: int,
    seconds: float = DOWNLOAD_SECONDS,
) -> Answer:
    """GET `url` (following redirects within http(s)) into `destination`, all within `seconds`.

    Raises DownloadRefused, with the reason, for anything but a whole answer of 200 or 304; `destination` then
    does not exist."""
    check_url(url)
    deadline = Deadline(seconds)
    try:
        return follow(
            url, {"User-Agent": f"mkdocs-vault-mcp/{__version__}", **headers}, destination, max_bytes, deadline
        )
    except Exception as error:
        destination.unlink(missing_ok=True)
        if deadline.expired:
            raise DownloadRefused(f"gave up on {shown(url)}: {deadline.expired}.") from None
        if isinstance(error, DownloadRefused):
            raise
        # Whatever the connection or the site's answer raised, the caller gets one line that names it.
        reason = getattr(error, "reason", None) or getattr(error, "strerror", None) or error
        if isinstance(error, ssl.SSLCertVerificationError):
            reason = f"its certificate is not trusted: {error.verify_message}"
        said = " ".join(str(reason).split())[:300] or type(error).__name__
        raise DownloadRefused(f"cannot reach {shown(url)} ({said}).") from None
    finally:
        deadline.cancel()


def follow(url: str, headers: dict[str, str], destination: Path, max_bytes: int, deadline: Deadline) -> Answer:
    """The answer to `url`, after at most MAX_REDIRECTS redirects, each of them checked."""
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        connection, response = request(current, headers, deadline)
        with contextlib.closing(connection), contextlib.closing(response):
            if response.status in REDIRECTS:
                location = response.getheader("Location")
                if not location:
                    raise DownloadRefused(f"{shown(current)} answered HTTP {response.status} without a Location.")
                target = urljoin(current, location.strip())
                problem = redirect_problem(url, target)
                if problem:
                    raise DownloadRefused(
                        f"{shown(current)} redirected to {shown(target)}, which is not followed: {problem}."
                    )
                current = target
                continue
            return answer(current, response, destination, max_bytes, deadline)
    raise DownloadRefused(f"{shown(url)} redirected more than {MAX_REDIRECTS} times (last to {shown(current)}).")


def request(
    url: str, headers: dict[str, str], deadline: Deadline
) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    """A GET of `url` on a new connection, its answer's status and headers read within HEADERS_SECONDS."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    secure = parts.scheme.lower() == "https"
    port = parts.port or (443 if secure else 80)
    deadline.arm(HEADERS_SECONDS, "connecting and the answer's headers")
    sock = connect(host, port, deadline)
    connection: http.client.HTTPConnection
    if secure:
        context = ssl.create_default_context()
        sock = context.wrap_socket(sock, server_hostname=host)
        deadline.watch(sock)
        connection = http.client.HTTPSConnection(host, port, context=context)
    else:
        connection = http.client.HTTPConnection(host, port)
    # The connection made here, so the deadline holds the socket it reads from.
    connection.sock = sock
    path = urlunsplit(("", "", parts.path or "/", parts.query, ""))
    connection.request("GET", path, headers={**headers, "Accept-Encoding": "identity", "Connection": "close"})
    response = connection.getresponse()
    deadline.arm(deadline.seconds, "the download")
    return connection, response


def connect(host: str, port: int, deadline: Deadline) -> socket.socket:
    """A TCP connection to one of `host`'s addresses, each tried with the time left."""
    failure: OSError = OSError(f"{host} has no address")
    for family, kind, protocol, _, address in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        sock = socket.socket(family, kind, protocol)
        deadline.watch(sock)
        try:
            sock.settimeout(deadline.left())
            sock.connect(address)
            return sock
        except OSError as error:
            sock.close()
            failure = error
            if deadline.expired:
                break
    raise failure


def answer(
    url: str, response: http.client.HTTPResponse, destination: Path, max_bytes: int, deadline: Deadline
) -> Answer:
    """The final answer: a 304, or a 200 whose body, within the limits, is written to `destination`."""
    etag, last_modified = response.getheader("ETag"), response.getheader("Last-Modified")
    if response.status == 304:
        return Answer(304, etag, last_modified)
    if response.status != 200:
        hint = " (is the site built with the vault-mcp plugin, and is this its URL?)" if response.status == 404 else ""
        raise HttpError(f"{shown(url)} answered HTTP {response.status} {response.reason}{hint}.", response.status)
    length = response.length  # None unless a valid Content-Length came (http.client parses it)
    if length is not None and length > max_bytes:
        raise TooBig(too_big(url, length, max_bytes))
    received = 0
    descriptor = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NO_FOLLOW, 0o600)
    with open(descriptor, "wb") as out:
        # Never more than one byte past the limit is read: enough to know the limit is passed.
        while chunk := response.read(min(CHUNK, max_bytes + 1 - received)):
            received += len(chunk)
            if received > max_bytes:
                raise TooBig(too_big(url, received, max_bytes, at_least=True))
            out.write(chunk)
    if deadline.expired:
        raise DownloadRefused(f"gave up on {shown(url)}: {deadline.expired}.")
    if length is not None and received != length:
        raise DownloadRefused(f"{shown(url)} sent {received} of the {length} bytes it announced.")
    return Answer(200, etag, last_modified, received)


def too_big(url: str, size: int, max_bytes: int, at_least: bool = False) -> str:
    return (
        f"{shown(url)} is {'over ' if at_least else ''}{size / (1 << 20):.1f} MB, above the limit of "
        f"{max_bytes / (1 << 20):g} MB; raise it with --max-size if this is the site's index."
    )
