"""Files only this user may read (keys and identities, trust records, a conversation or session
state written back, an exported snapshot): one way to make them. The file has mode 0600 from its
first instant (never widened, then narrowed by a chmod), the directories made for it have 0700,
its bytes and then its directory are fsynced, the name is never followed as a symbolic link, and
the file appears whole or not at all. What is already at the name is kept unless the caller
replaces it on purpose."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from precompact.boundary import atomic_file, user_roots

FILE_MODE = 0o600
DIRECTORY_MODE = 0o700


def state_directory() -> Path:
    """precompact's own files outside every project: <the state home>/precompact
    ($XDG_STATE_HOME, else ~/.local/state, as boundary/user_roots decides)."""
    return Path(user_roots.state_home()) / "precompact"


def runtime_directory() -> Path:
    """Where a file that lives only while a command runs goes: $XDG_RUNTIME_DIR/precompact (the
    user's own tmpfs, emptied at logout), else the state directory."""
    runtime = user_roots.runtime_home()
    return Path(runtime) / "precompact" if runtime else state_directory()


def create(path: Path, data: bytes) -> None:
    """A new file at `path` holding `data`. FileExistsError when anything (a file, a link, a
    directory) is already there; it is left as it was."""
    with _parent(path) as directory:
        atomic_file.create_in(directory, path.name, data, FILE_MODE)


def replace(path: Path, data: bytes) -> None:
    """`create`, over the file at `path` if there is one: renamed over it, so a symbolic link
    there is replaced, not written through."""
    with _parent(path) as directory:
        atomic_file.write_in(directory, path.name, data, FILE_MODE)


def make_directory(path: Path) -> None:
    """`path` and the directories above it that are missing, each made 0700 and made durable in
    its parent; the ones that exist are left as they are."""
    missing = []
    for directory in (path, *path.parents):
        if os.path.isdir(directory):
            break
        missing.append(directory)
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(directory, DIRECTORY_MODE)
        _fsync_directory(directory.parent)


@contextlib.contextmanager
def _parent(path: Path) -> Iterator[int]:
    make_directory(path.parent)
    directory = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield directory
    finally:
        os.close(directory)


def _fsync_directory(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked(lock: Path) -> Iterator[None]:
    """Holds an exclusive lock on the file `lock` (made private and empty when absent, never
    followed through a link), waiting for whoever holds it; released on leaving."""
    with contextlib.suppress(FileExistsError):
        create(lock, b"")
    fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
