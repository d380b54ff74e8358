"""An agent's session file (a transcript, a rollout, a chat file, the files an agent keeps beside
them) opened for reading: the only way any module opens one (an architecture test holds the
transcript readers to it). What is its own: a file opened to be streamed (a transcript may be
hundreds of megabytes, read line by line, no cap on the whole), its refusal, NotASessionFile, and
the read of a file's rest with a cap on each line (`capped_lines`: a line of gigabytes is refused
once past the cap, not read whole), and its refusal, LineTooLong.

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


class LineTooLong(OSError):
    """A line of the session file is longer than its reader reads of one line; the rest of that
    line was not read (an OSError, so every reader reports it as a file it cannot read)."""


# How much `capped_lines` reads at a time (at most its cap, so that a line within one read is
# within the cap).
_BLOCK_BYTES = 1 << 20
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


def capped_lines(handle: io.BufferedIOBase, limit: int, path: str | os.PathLike, until: int | None = None) -> bytes:
    """What `handle` (`path` open) holds from where it stands to its end, or to byte `until` of
    the file (a last line still being written included), each line at most `limit` bytes:
    LineTooLong, in one line naming where the first longer one starts, as soon as that many bytes
    of it are read. A read takes at most `limit` bytes, so only a line that spans reads can be
    longer: each read checks the line it ends and the one it leaves open, never each line."""
    step = min(_BLOCK_BYTES, limit)
    origin = handle.tell()
    left = None if until is None else max(until - origin, 0)
    parts: list[bytes] = []
    read = line_start = 0  # bytes read; where the line not yet ended starts
    while block := handle.read(step if left is None else min(step, left - read)):
        ended = block.find(b"\n")
        if ended >= 0:
            if read + ended + 1 - line_start > limit:
                break
            line_start = read + block.rfind(b"\n") + 1
        read += len(block)
        parts.append(block)
        if read - line_start > limit:
            break
    else:
        return b"".join(parts)
    most = f"{limit >> 20} MiB" if limit % (1 << 20) == 0 else f"{limit} bytes"
    raise LineTooLong(
        errno.EFBIG,
        f"its line at byte {origin + line_start} is longer than {most}, the most read of one line",
        os.fspath(path),
    )
