"""An agent's session file (a transcript, a rollout, a chat file, the files an agent keeps beside
them) opened for reading: the only way any module opens one (an architecture test holds the
transcript readers to it). What is its own: a file opened to be streamed (a transcript may be
hundreds of megabytes, read line by line, no cap), and its refusal, NotASessionFile.

The path comes from outside (the hook's event, the agent's folders); the open and the checks on
the descriptor are boundary/small_file's (without blocking: a FIFO's open() would wait for a
writer forever; a regular file only: a device may never end; not a file the kernel makes up as
it is read, such as /proc/self/environ: the hook's own environment, not a session), and what is
read is that descriptor, never the path a second time: a FIFO or a link renamed onto the path
between a check and a read would otherwise be what is read. The path is stat'ed first only so
that a device is not opened at all in the common case; that stat decides nothing.
"""

from __future__ import annotations

import errno
import io
import os
import stat

from precompact.boundary import small_file


class NotASessionFile(OSError):
    """What the path names is not a file any reader may read (an OSError, so every reader that
    reads a missing file as nothing reads this as nothing too)."""


NOT_A_FILE = "is not a file (a FIFO, a device or a directory)"
MADE_UP = f"{small_file.MADE_UP}, not a session's"


def open_read(path: str | os.PathLike) -> io.BufferedReader:
    """`path` open for reading, checked on the open descriptor (NotASessionFile when it is not a
    regular file, or is one the kernel makes up); other OSErrors as open() raises them."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise NotASessionFile(errno.EINVAL, NOT_A_FILE, os.fspath(path))
    try:
        fd, _ = small_file.open_regular(path, follow_links=True)
    except small_file.Refused as e:
        said = MADE_UP if isinstance(e, small_file.MadeUp) else NOT_A_FILE
        raise NotASessionFile(errno.EINVAL, said, os.fspath(path)) from None
    try:
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
