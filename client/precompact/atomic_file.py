"""Files replaced whole or not at all: written to a temporary name, fsynced, renamed over the
target, and the directory fsynced, so a crash leaves the old content or the new, never a mix."""

from __future__ import annotations

import os
from pathlib import Path


def write(path: Path, data: bytes, mode: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Not `.snapshot_*.tmp`: those are Layer 1's own and removed as stale under the index lock,
    # which this writer does not hold.
    tmp = path.with_name(f".precompact-{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def fsync_dir(directory: Path) -> None:
    """Makes a rename in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
