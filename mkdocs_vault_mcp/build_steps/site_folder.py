"""Reading the files of a built site (or of its docs folder) safely: regular files inside the folder only,
never through a symbolic link that leads out of it, never a FIFO or a device, never more than a limit."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class SiteError(Exception):
    """A site or command line that cannot be indexed; the message says what to give instead."""


class Unreadable(Exception):
    """A file of the site that is not read; the message says why, after the file's name."""


# A page larger than this is not read (its warning says so): the largest pages of real sites (API references)
# are far smaller, and every page's HTML is held until the index is written.
PAGE_BYTES = 32 * 1024 * 1024
SITEMAP_BYTES = 64 * 1024 * 1024  # above the sitemap protocol's own limit


def read_site_file(root: Path, file: Path, limit: int, folder: str = "the site folder") -> tuple[bytes, os.stat_result]:
    """The bytes and status of `file` when it is a regular file inside `root` (resolved: no symbolic link leads
    out of it; `folder` names it) of at most `limit` bytes, else Unreadable. Opened without blocking and without
    following a link swapped in after the check, so a FIFO or a device is never waited on or read."""
    try:
        real = os.path.realpath(file)
        status = os.stat(real)
    except (OSError, ValueError) as error:
        raise Unreadable(f"cannot be read ({getattr(error, 'strerror', None) or error})") from None
    if not Path(real).is_relative_to(root):
        raise Unreadable(f"is a symbolic link that leads outside {folder}")
    if not stat.S_ISREG(status.st_mode):
        raise Unreadable(f"is {_file_kind(status.st_mode)}, not a regular file")
    if status.st_size > limit:
        raise Unreadable(_too_large(status.st_size, limit))
    flags = os.O_RDONLY
    for name in ("O_NONBLOCK", "O_NOFOLLOW", "O_CLOEXEC", "O_BINARY"):
        flags |= getattr(os, name, 0)
    try:
        descriptor = os.open(real, flags)
    except OSError as error:
        raise Unreadable(f"cannot be read ({error.strerror or error})") from None
    try:
        opened = os.fstat(descriptor)
        if (opened.st_dev, opened.st_ino) != (status.st_dev, status.st_ino) or not stat.S_ISREG(opened.st_mode):
            raise Unreadable("changed while it was read")
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(descriptor, min(1 << 20, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise Unreadable(_too_large(size, limit))
    except OSError as error:
        raise Unreadable(f"cannot be read ({error.strerror or error})") from None
    finally:
        os.close(descriptor)
    return b"".join(chunks), opened


def _file_kind(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    return next((kind for test, kind in kinds if test(mode)), "a special file")


def _too_large(size: int, limit: int) -> str:
    return f"holds {size:,} bytes or more, over the limit of {limit // (1024 * 1024)} MB ({limit:,} bytes) a file"


def leads_outside(root: Path, path: Path) -> bool:
    """Whether writing `path` (its folders made where missing) would write outside `root`, through a symbolic link."""
    return not Path(os.path.realpath(path)).is_relative_to(root)


def is_text(name: str) -> bool:
    """Whether a file name is Unicode text (a byte that is not UTF-8 comes from the file system as a surrogate)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
