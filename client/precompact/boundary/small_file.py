"""The one way to open a file precompact was told to read: a signing keypair, an age identity,
this machine's key, a `.precompact.toml`, an approval record, an agent's settings, MCP and plugin
files (config/agent_settings: its caps and decoding), an agent's session file
(boundary/session_file: its streaming reads and its message). Each name is outside input (an
environment variable, a configuration, a repository's file, a hook's event), so it may be a FIFO
(whose open waits for a writer: a hook or the worker hung, holding its locks), a device
(`/dev/zero` never ends), a directory, a symbolic link, or a file the kernel makes up as it is
read (/proc/self/environ: size 0, yet the hook's own environment comes out). So: opened without
blocking (O_NONBLOCK), and without following a link where the caller's rule refuses links
(O_NOFOLLOW); then the open descriptor is checked (fstat: a regular file that is not made up, at
most `limit` bytes) and read, never the name a second time. A refusal is a `Refused` (an
OSError, so callers that catch OSError keep doing so; its subclass says which check refused)
whose message is one line; a name that does not exist is FileNotFoundError, as `open` raises it.
Imports `os`, `stat` and `errno` alone: the hook reads its configuration's approval through it
before importing anything else (edges/hook.py), the plugin's launcher reads the agents' settings
through it before any dependency exists."""

from __future__ import annotations

import errno
import os
import stat

_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
MADE_UP = "is a file the system makes up as it is read (its size is 0, yet it holds bytes)"


class Refused(OSError):
    """The name is not a regular file of at most the size asked for, or is a symbolic link where
    links are refused; `reason` is what it is, in words ("is a symbolic link", ...)."""

    def __init__(self, path: str | os.PathLike, reason: str, code: int) -> None:
        super().__init__(code, f"{os.fspath(path)} {reason}")
        self.reason = reason

    def __str__(self) -> str:
        return self.strerror or ""  # the one line, without OSError's "[Errno N]"


class IsALink(Refused):
    """A symbolic link where the caller refuses links."""


class NotRegular(Refused):
    """A FIFO, a device, a directory or a socket."""


class MadeUp(Refused):
    """A regular file of size 0 that yields bytes: the kernel makes it up as it is read."""


class TooLarge(Refused):
    """A regular file larger than the caller's limit."""


def open_regular(path: str | os.PathLike, *, follow_links: bool) -> tuple[int, os.stat_result]:
    """A descriptor open for reading (without blocking) on `path` and its fstat, once that says
    a regular file the kernel does not make up; the caller closes it. Refused for a symbolic link
    when `follow_links` is False, and for anything else (a FIFO returns at once: it was opened
    without blocking)."""
    flags = _READ | (0 if follow_links else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if e.errno == errno.ELOOP and not follow_links:
            raise IsALink(path, "is a symbolic link", errno.ELOOP) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(path, f"is not a regular file (it is {_kind(info.st_mode)})", errno.EINVAL)
        if info.st_size == 0 and os.pread(fd, 1, 0):
            raise MadeUp(path, MADE_UP, errno.EINVAL)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read(path: str | os.PathLike, limit: int, *, follow_links: bool) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file at `path` and its fstat (for the caller's checks of owner
    and mode), read from the descriptor `open_regular` checked. Refused past `limit` bytes."""
    fd, info = open_regular(path, follow_links=follow_links)
    with os.fdopen(fd, "rb") as f:
        if info.st_size > limit:
            raise TooLarge(path, f"is larger than {limit} bytes: not such a file", errno.EFBIG)
        data = f.read(limit + 1)
    if len(data) > limit:  # it grew after the fstat
        raise TooLarge(path, f"is larger than {limit} bytes: not such a file", errno.EFBIG)
    return data, info


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"
