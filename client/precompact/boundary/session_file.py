"""An agent's session file (a transcript, a rollout, a chat file, the files an agent keeps beside
them) opened for reading: the only way any module opens one (an architecture test holds the
transcript readers to it).

The path comes from outside (the hook's event, the agent's folders), so what it names is checked
on the descriptor that is then read, never on the path before a second open: a FIFO or a link
renamed onto the path between a check and a read would otherwise be what is read. It is opened
without blocking (a FIFO's open() would wait for a writer forever), then refused unless the
open file is a regular file (a device may never end) whose size is not 0 while bytes come out
(the files the kernel makes up as they are read, such as /proc/self/environ: the hook's own
environment, not a session). The path is stat'ed first only so that a device is not opened at
all in the common case; that stat decides nothing.
"""

from __future__ import annotations

import errno
import io
import os
import stat

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class NotASessionFile(OSError):
    """What the path names is not a file any reader may read (an OSError, so every reader that
    reads a missing file as nothing reads this as nothing too)."""


NOT_A_FILE = "is not a file (a FIFO, a device or a directory)"
MADE_UP = "is a file the system makes up as it is read (its size is 0, yet it holds bytes), not a session's"


def open_read(path: str | os.PathLike) -> io.BufferedReader:
    """`path` open for reading, checked on the open descriptor (NotASessionFile when it is not a
    regular file, or is one the kernel makes up); other OSErrors as open() raises them."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise NotASessionFile(errno.EINVAL, NOT_A_FILE, os.fspath(path))
    fd = os.open(path, _FLAGS)
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise NotASessionFile(errno.EINVAL, NOT_A_FILE, os.fspath(path))
        if opened.st_size == 0 and os.pread(fd, 1, 0):
            raise NotASessionFile(errno.EINVAL, MADE_UP, os.fspath(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
