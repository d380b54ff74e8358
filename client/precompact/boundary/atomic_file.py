"""Files replaced whole or not at all: written to a temporary name, fsynced, renamed over the
target, and the directory fsynced, so a crash leaves the old content or the new, never a mix."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def write(path: Path, data: bytes, mode: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    directory = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        write_in(directory, path.name, data, mode)
    finally:
        os.close(directory)


def write_in(directory: int, name: str, data: bytes, mode: int) -> None:
    """`write` for the file `name` in the directory open as `directory`; neither the temporary
    file nor the target is ever reached through a symbolic link (the rename replaces a link)."""
    tmp = _write_aside(directory, name, data, mode)
    try:
        os.replace(tmp, name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=directory)
        raise
    os.fsync(directory)


def create_in(directory: int, name: str, data: bytes, mode: int) -> None:
    """`write_in` for a file that must not exist yet: linked into place, which fails with
    FileExistsError when anything (a file, a link, a directory) holds `name`, left untouched."""
    tmp = _write_aside(directory, name, data, mode)
    try:
        os.link(tmp, name, src_dir_fd=directory, dst_dir_fd=directory, follow_symlinks=False)
    finally:
        os.unlink(tmp, dir_fd=directory)
    os.fsync(directory)


def _write_aside(directory: int, name: str, data: bytes, mode: int) -> str:
    """A new file holding `data`, fsynced, under a temporary name beside `name`; that name."""
    # Not `.snapshot_*.tmp`: those are Layer 1's own and removed as stale under the index lock,
    # which this writer does not hold.
    tmp = f".precompact-{name}.{os.getpid()}.tmp"
    # Whatever holds the name (a file a killed writer left, or a link planted there) is
    # removed, not written through.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp, dir_fd=directory)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=directory)
        raise
    return tmp
