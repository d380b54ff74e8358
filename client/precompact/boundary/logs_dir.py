"""The confined `logs/` directory: the only place the hooks and the worker write, and where
every file precompact reads back from the project lives.

A repository can ship a `logs/` of its own: an index naming files, symbolic links to the
user's ~/.ssh. So every name precompact keeps in `logs/` starts with OWN_PREFIX (`_split` and
`directory` refuse any other), `logs/` must be a real directory in which git tracks none of
those names (nor `logs` itself, a file or a link: `_check_untracked`; a project's own files
under other names, a `logs/.gitkeep`, are its business), and every file in
it is opened relative to a descriptor of that directory with O_NOFOLLOW: a symbolic link
anywhere under it (or a second hard link to a file) is refused, never followed. Snapshot names
must be exactly the ones Layer 1 writes. A FIFO, socket or device under a name precompact uses
is refused without waiting on it (opened with O_NONBLOCK, then checked), and no file is read
beyond a size cap. This module is the only one that opens files under logs/ (an architecture
test holds every other module to it).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import hashlib
import os
import re
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from precompact.boundary import atomic_file, quoting
from precompact.errors import PrecompactError

if TYPE_CHECKING:
    from precompact.boundary import processes

# Every file and folder precompact keeps in logs/ is named so (`init` keeps `logs/precompact-*`
# out of `git status`); `atomic_file` writes beside a name under `.precompact-<name>...tmp`.
OWN_PREFIX = "precompact-"
ASIDE_PREFIX = "." + OWN_PREFIX
SAVES_DIR = "precompact-saves"
# The name Layer 1 gives a snapshot, relative to the project root; group 1 is the sequence.
SNAPSHOT_FILE = re.compile(r"logs/precompact-saves/snapshot_\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z_(\d{6,})\.json")
GIT_TIMEOUT_SECONDS = 5.0
# How git (LC_ALL=C, as git_env runs it) begins to say that no work tree's repository holds a
# directory: none found, or only a bare one (as precompact's own store is), which git_env's
# safe.bareRepository=explicit has git refuse to find by search, and which tracks no work tree.
OUTSIDE_A_REPOSITORY = ("fatal: not a git repository", "fatal: cannot use bare repository")
# The most precompact reads of any one file in logs/: a snapshot of a session of hundreds of MB
# stays under it; a file planted to exhaust memory does not.
MAX_READ_BYTES = 1 << 30
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class ConfinementError(PrecompactError, OSError):
    """`logs/` or a file in it is not what precompact wrote; the message says what to remove."""

    def __str__(self) -> str:
        return self.strerror or ""


def snapshot_name(stamp: str, sequence: int) -> str:
    """The snapshot file Layer 1 writes, relative to the project root."""
    return f"logs/{SAVES_DIR}/snapshot_{stamp}_{sequence:06d}.json"


def is_snapshot_name(name: object, sequence: int) -> bool:
    """Whether `name` is exactly a snapshot name Layer 1 writes for savepoint `sequence`."""
    match = SNAPSHOT_FILE.fullmatch(name) if isinstance(name, str) else None
    return match is not None and int(match.group(1)) == sequence


def within(name: str) -> str:
    """`name` relative to logs/ (`logs/x/y` -> `x/y`)."""
    return name.removeprefix("logs/")


@contextlib.contextmanager
def directory(logs: Path, sub: str | None = None, create: bool = True) -> Iterator[int]:
    """A descriptor of `logs` (or of its subdirectory `sub`), created when missing if asked."""
    if sub is not None:
        _require_own(sub)
    fd = _open_dir(logs, create)
    try:
        if sub is not None:
            parent, fd = fd, -1
            try:
                fd = _open_subdir(parent, logs, sub, create)
            finally:
                os.close(parent)
        yield fd
    finally:
        if fd >= 0:
            os.close(fd)


def _split(name: str) -> tuple[str | None, str]:
    """`file` or `sub/file` -> (sub, file); any other shape (`..`, deeper, absolute) is refused."""
    parts = name.split("/")
    if len(parts) > 2 or any(part in ("", ".", "..") for part in parts):
        raise ConfinementError(errno.EPERM, f"logs/{name} is not a file name precompact writes in logs/")
    _require_own(parts[0])
    return (parts[0] if len(parts) == 2 else None), parts[-1]


def _require_own(top: str) -> None:
    """Refuses a name in logs/ that is not precompact's (OWN_PREFIX): the tracked-files check
    covers only those, so precompact never reads or writes a file the project may track."""
    if not top.startswith(OWN_PREFIX):
        raise ConfinementError(errno.EPERM, f"logs/{top} is not a name precompact writes in logs/ (only {OWN_PREFIX}*)")


def open_file(logs: Path, name: str, flags: int, mode: int = 0o600, limit: int = MAX_READ_BYTES) -> int:
    """A descriptor of the file `name` in logs/ (`name` may be `sub/file`), never through a
    link, of a regular file no larger than `limit` bytes. With O_CREAT the directories are
    created as needed."""
    sub, leaf = _split(name)
    with directory(logs, sub, create=bool(flags & os.O_CREAT)) as dir_fd:
        return open_in(dir_fd, logs / name, leaf, flags, mode, limit)


def open_in(dir_fd: int, shown: Path, leaf: str, flags: int, mode: int = 0o600, limit: int = MAX_READ_BYTES) -> int:
    """Opens `leaf` relative to `dir_fd`; `shown` is its path for messages. O_NONBLOCK so that
    a FIFO in its place is refused here instead of waiting for a writer that never comes (it
    changes nothing for a regular file)."""
    try:
        fd = os.open(leaf, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, mode, dir_fd=dir_fd)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise ConfinementError(
                errno.ELOOP,
                f"{quoting.path(shown)} is a symbolic link; precompact never follows links in logs/: remove it",
            ) from None
        # A socket, or a FIFO opened for writing with no reader; a directory opened for writing.
        if e.errno in (errno.ENXIO, errno.EISDIR):
            raise ConfinementError(
                e.errno, f"{quoting.path(shown)} is not a regular file; precompact refuses it: remove it"
            ) from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
        os.close(fd)
        what = "is not a regular file" if not stat.S_ISREG(info.st_mode) else "has other hard links"
        raise ConfinementError(errno.EPERM, f"{quoting.path(shown)} {what}; precompact refuses it: remove it")
    if info.st_size > limit:
        os.close(fd)
        raise ConfinementError(
            errno.EFBIG,
            f"{quoting.path(shown)} is {info.st_size} bytes, over the {limit} precompact reads of it; remove it",
        )
    return fd


def read_bytes(logs: Path, name: str, limit: int = MAX_READ_BYTES) -> bytes:
    """The whole file `name` in logs/, refused when over `limit` bytes (also when it grows past
    that while being read)."""
    fd = open_file(logs, name, os.O_RDONLY, limit=limit)
    with os.fdopen(fd, "rb") as f:
        # Asked for the size the file has (open_file refused it over `limit`), not for `limit`:
        # Python makes a buffer of the size asked, and a gigabyte's fresh pages cost more than
        # the read (a 1 MB chunk: 0.41 against 0.26 ms of CPU; docs/performance.md, #42).
        size = os.fstat(f.fileno()).st_size
        data = f.read(size + 1)
        if len(data) > size:  # it grew while being read: the rest, up to the limit
            data += f.read(limit + 1 - len(data))
    if len(data) > limit:
        raise ConfinementError(
            errno.EFBIG, f"{quoting.path(logs / name)} grew over the {limit} bytes precompact reads of it; remove it"
        )
    return data


def read_snapshot(logs: Path, name: object, sequence: int) -> bytes | None:
    """Savepoint `sequence`'s snapshot bytes under `name` (as an index names it); None when the
    name is not one Layer 1 writes for it, or the file is absent or not a plain file here."""
    if not isinstance(name, str) or not is_snapshot_name(name, sequence):
        return None
    try:
        return read_bytes(logs, within(name))
    except (FileNotFoundError, ConfinementError):
        return None


def write_atomic(logs: Path, name: str, data: bytes) -> None:
    """Writes `name` in logs/ whole or not at all (atomic_file), never through a link."""
    sub, leaf = _split(name)
    with directory(logs, sub) as dir_fd:
        atomic_file.write_in(dir_fd, leaf, data, 0o600)


def names_in(logs: Path, sub: str) -> list[str]:
    """The names in the subdirectory `sub` of logs/ ([] when there is none)."""
    try:
        with directory(logs, sub, create=False) as fd:
            return os.listdir(fd)
    except FileNotFoundError:
        return []


def handed_over(logs: Path, sub: str, create: bool) -> Path:
    """The subdirectory `sub` of logs/, for a library that opens its files by path itself
    (tantivy, recall's text index), once checked: a real directory (not a link), this user's and
    writable by no one else, holding only regular files of this user's, each with no other hard
    link and no larger than the cap (what `open_file` would refuse, checked before the library
    opens anything). FileNotFoundError when it is absent and not to be created. What the library
    creates later is its own; a file planted between this check and its open needs write access
    to a directory only this user can write."""
    _split(sub)
    with directory(logs, sub, create=create) as fd:
        info = os.fstat(fd)
        if info.st_uid != os.getuid() or info.st_mode & 0o022:
            raise ConfinementError(
                errno.EPERM,
                f"{quoting.path(logs / sub)} is not this user's own directory; precompact refuses it: remove it",
            )
        for name in os.listdir(fd):
            # A name the project's files brought (any bytes but / and NUL): quoted, on one line.
            shown = quoting.inline(str(logs / sub / name))
            entry = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(entry.st_mode):
                raise ConfinementError(
                    errno.ELOOP, f"{shown} is a symbolic link; precompact never follows links in logs/: remove it"
                )
            if not stat.S_ISREG(entry.st_mode) or entry.st_nlink > 1 or entry.st_uid != os.getuid():
                raise ConfinementError(
                    errno.EPERM, f"{shown} is not a regular file of this user's alone; precompact refuses it: remove it"
                )
            if entry.st_size > MAX_READ_BYTES:
                raise ConfinementError(
                    errno.EFBIG,
                    f"{shown} is {entry.st_size} bytes, over the {MAX_READ_BYTES} precompact reads of it; remove it",
                )
    return logs / sub


def made_private(logs: Path, sub: str) -> None:
    """Each regular file in the subdirectory `sub` of logs/ narrowed to 0600, for a library that
    creates its files by path itself (tantivy) with the process's umask: the directory (0700)
    already keeps others out, and at rest every file precompact leaves in logs/ is 0600 as well.
    A link or anything but a regular file is left alone (`handed_over` refuses it before the next
    open); each file is opened without following a link or waiting on a FIFO."""
    _split(sub)
    with directory(logs, sub, create=False) as fd:
        for name in os.listdir(fd):
            try:
                file = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
            except OSError:
                continue
            try:
                info = os.fstat(file)
                if stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) != 0o600:
                    os.fchmod(file, 0o600)
            finally:
                os.close(file)


def remove_directory(logs: Path, sub: str) -> None:
    """Removes the subdirectory `sub` of logs/ and the files in it, if it is there; a link in
    its place or in it is removed itself, never followed, and a subdirectory in it is refused
    (precompact writes none)."""
    _split(sub)
    with directory(logs) as fd:
        try:
            if not stat.S_ISDIR(os.stat(sub, dir_fd=fd, follow_symlinks=False).st_mode):
                os.unlink(sub, dir_fd=fd)
                return
        except FileNotFoundError:
            return
    try:
        with directory(logs, sub, create=False) as fd:
            for name in os.listdir(fd):
                os.unlink(name, dir_fd=fd)
    except FileNotFoundError:
        return
    except IsADirectoryError:
        raise ConfinementError(
            errno.EPERM,
            f"{quoting.path(logs / sub)} holds a directory precompact did not write; remove {quoting.path(logs / sub)} by hand",
        ) from None
    with directory(logs) as fd, contextlib.suppress(FileNotFoundError):
        os.rmdir(sub, dir_fd=fd)


def identities(logs: Path, names: tuple[str, ...], subs: tuple[str, ...]) -> tuple[str, ...]:
    """The identity of each file `names` of logs/ and of every file in its subdirectories `subs`,
    as they stand, links not followed: the same only while none of them is added, removed,
    replaced or written to. A name that is not there is said to be missing."""
    found = []
    try:
        with directory(logs, create=False) as fd:
            for name in names:
                found.append(f"{name} {_identity_at(fd, name)}")
    except FileNotFoundError:
        return ("logs/ missing",)
    for sub in subs:
        try:
            with directory(logs, sub, create=False) as fd:
                found += sorted(f"{sub}/{name} {_identity_at(fd, name)}" for name in os.listdir(fd))
        except FileNotFoundError:
            found.append(f"{sub} missing")
    return tuple(found)


# The file `writable` creates and removes to learn whether logs/ takes a write; the bytes it
# writes, so that a full disk (which may still give a file its inode) refuses it too.
PROBE_NAME = OWN_PREFIX + "probe"
PROBE_BYTES = 4096


def writable(logs: Path) -> OSError | None:
    """Whether logs/ takes a write now: a probe file created, written, flushed to disk and removed
    (through its descriptor, never a link); the OSError that refused it, or None."""
    leaf = f"{PROBE_NAME}-{os.getpid()}"
    try:
        with directory(logs, create=False) as fd:
            probe = open_in(fd, logs / leaf, leaf, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            try:
                os.write(probe, b"\0" * PROBE_BYTES)
                os.fsync(probe)
            finally:
                os.close(probe)
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(leaf, dir_fd=fd)
    except ConfinementError:
        raise
    except OSError as e:
        return e
    return None


def others_may_change(logs: Path) -> int | None:
    """logs/'s permission bits when users other than its owner may add, rename or remove entries
    in it (group or other write, no sticky bit); None when only its owner may, or it is missing."""
    try:
        info = os.stat(logs, follow_symlinks=False)
    except FileNotFoundError:
        return None
    mode = stat.S_IMODE(info.st_mode)
    return mode if mode & 0o022 and not mode & stat.S_ISVTX else None


def _identity_at(dir_fd: int, name: str) -> str:
    try:
        return identity(os.stat(name, dir_fd=dir_fd, follow_symlinks=False))
    except FileNotFoundError:
        return "missing"


def claim(logs: Path, name: str, to: str) -> bool:
    """Renames `name` to `to` in its directory of logs/ (a link is moved, never followed), so
    that of processes racing for it exactly one has it; False when `name` is not there (any more)."""
    sub, leaf = _split(name)
    if _split(to)[0] != sub:
        raise ConfinementError(errno.EPERM, f"logs/{to} is not in the directory of logs/{name}")
    try:
        with directory(logs, sub, create=False) as fd:
            os.rename(leaf, _split(to)[1], src_dir_fd=fd, dst_dir_fd=fd)
    except FileNotFoundError:
        return False
    return True


def take_once(logs: Path, name: str, held: str, limit: int) -> bytes | None:
    """The bytes of the file `name` in logs/, taken by exactly one of the processes racing for
    them, or of `held`, the claim a process killed while taking them left. The taker holds an
    exclusive lock on the file while it renames it `held`, reads it and removes it: a process
    killed meanwhile leaves the file whole and unlocked under one of the two names (the kernel
    drops a dead process's lock), for the next taker. None when neither is there, or a live
    process is taking it. ConfinementError for a file that is not a regular one within `limit`."""
    sub, held_leaf = _split(held)
    if _split(name)[0] != sub:
        raise ConfinementError(errno.EPERM, f"logs/{held} is not in the directory of logs/{name}")
    for source in (held, name):
        try:
            fd = open_file(logs, source, os.O_RDONLY, limit=limit)
        except FileNotFoundError:
            continue
        with os.fdopen(fd, "rb") as f:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return None
            with directory(logs, sub, create=False) as dir_fd:
                leaf = _split(source)[1]
                try:
                    named = os.stat(leaf, dir_fd=dir_fd, follow_symlinks=False)
                except FileNotFoundError:
                    continue  # taken meanwhile by a process that has finished
                opened = os.fstat(fd)
                if (named.st_dev, named.st_ino) != (opened.st_dev, opened.st_ino):
                    continue  # the name is another file's since
                if leaf != held_leaf:
                    os.rename(leaf, held_leaf, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                data = f.read(limit + 1)
                if len(data) > limit:
                    raise ConfinementError(
                        errno.EFBIG,
                        f"{quoting.path(logs / held)} grew over the {limit} bytes precompact reads of it; remove it",
                    )
                os.unlink(held_leaf, dir_fd=dir_fd)
            return data
    return None


def remove(logs: Path, name: str) -> None:
    """Removes `name` from logs/ if it is there (a link itself, never what it points to)."""
    sub, leaf = _split(name)
    try:
        with directory(logs, sub, create=False) as fd:
            os.unlink(leaf, dir_fd=fd)
    except FileNotFoundError:
        pass


def _open_dir(logs: Path, create: bool) -> int:
    _check_untracked(logs)
    try:
        return os.open(logs, _DIRECTORY)
    except FileNotFoundError:
        if not create:
            raise
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            raise ConfinementError(
                e.errno,
                f"{quoting.path(logs)} is a symbolic link or not a directory; precompact keeps its files in a real logs/ directory: remove it",
            ) from None
        raise
    with contextlib.suppress(FileExistsError):
        os.mkdir(logs, 0o700)
    return _open_dir(logs, create=False)


def _open_subdir(parent: int, logs: Path, sub: str, create: bool) -> int:
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(sub, 0o700, dir_fd=parent)
    try:
        return os.open(sub, _DIRECTORY, dir_fd=parent)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            raise ConfinementError(
                e.errno,
                f"{quoting.path(logs / sub)} is a symbolic link or not a directory; precompact never follows links in logs/: remove it",
            ) from None
        raise


def identity(info: os.stat_result) -> str:
    """A file's identity as it stands (device, inode, size, modification and change times): the
    same only while the file is neither replaced nor written to, as no tool sets a change time back."""
    return f"{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"


UNTRACKED_NAME = "untracked-logs"


@functools.cache
def _check_untracked(logs: Path) -> None:
    """Refuses a logs/ holding files git tracks: the repository shipped them, so they are not
    this machine's record. Checked once per process; and across processes, git's answer that
    nothing in logs/ is tracked is kept (`_untracked_seen`) under the identity of every file git
    answered from (git_env.index_identity): a command searching a hundred projects does not start
    a hundred git processes, and any change to the repository's index, its configuration or where
    git finds it asks git again."""
    from precompact.boundary import git_env, processes

    before = git_env.index_identity(logs.parent)
    seen = _untracked_seen(before) if before is not None else None
    if seen is not None and seen in _untracked_kept():
        return
    try:
        listed = git_env.run(logs.parent, "ls-files", "-z", "--cached", "--", logs.name, timeout=GIT_TIMEOUT_SECONDS)
    except OSError:
        return  # no git on this machine: nothing is tracked by it
    except processes.TimeoutExpired:
        raise ConfinementError(errno.EPERM, _unanswered(logs, f"no answer within {GIT_TIMEOUT_SECONDS:g} s")) from None
    if listed.returncode != 0 and not listed.stderr.startswith(OUTSIDE_A_REPOSITORY):
        listed = _listed_from_the_index_alone(logs, listed)
    listed_names = [name for name in listed.stdout.split("\0") if name] if listed.returncode == 0 else []
    tracked = [name for name in listed_names if _is_ours(name, logs.name)]
    if tracked and tracked[0] == logs.name:
        raise ConfinementError(
            errno.EPERM,
            f"git tracks {logs} itself, a file or a link ({quoting.inline(tracked[0])}); precompact keeps its files in a real directory there: rename it (`git mv {logs.name} <another name>`), then try again",
        )
    if tracked:
        more = f" and {len(tracked) - 1} more" if len(tracked) > 1 else ""
        raise ConfinementError(
            errno.EPERM,
            f"{logs} holds files tracked by git under the names precompact keeps its own files by ({quoting.inline(tracked[0])}{more}): they came with the repository and are no record of this machine; move them out of logs/{OWN_PREFIX}* (`git mv <name> <new name>` each) or stop tracking them (`git rm -r --cached --ignore-unmatch -- ':(icase){logs.name}/{OWN_PREFIX}*' ':(icase){logs.name}/{ASIDE_PREFIX}*'`), then try again; savepoints of another machine left in logs/ are never pushed nor saved after: move those away too (`mv logs logs.foreign`)",
        )
    if seen is not None and listed.returncode == 0 and git_env.index_identity(logs.parent) == before:
        _keep_untracked(seen)


def _is_ours(tracked: str, logs: str) -> bool:
    """Whether a name git tracks (`logs/...`, from the project's root) is one precompact keeps, or
    `logs` itself: compared without case, as a case-insensitive file system (macOS, Windows) opens
    `logs/Precompact-Saves/` as precompact's folder."""
    name = tracked.casefold()
    logs = logs.casefold()
    return name == logs or name.startswith((f"{logs}/{OWN_PREFIX}", f"{logs}/{ASIDE_PREFIX}"))


def _listed_from_the_index_alone(logs: Path, failed: processes.CompletedProcess) -> processes.CompletedProcess:
    """Git could not answer in the repository (its configuration does not parse, say): the same
    question asked of the repository's index file alone, none of its configuration read; still no
    answer refuses logs/."""
    from precompact.boundary import git_env, processes

    found = git_env.index_of(logs.parent)
    if found is not None:
        index, prefix = found
        pathspec = f"{prefix}/{logs.name}" if prefix != "." else logs.name
        try:
            listed = git_env.list_index(index, pathspec, timeout=GIT_TIMEOUT_SECONDS)
        except (OSError, processes.TimeoutExpired):
            listed = None
        if listed is not None and listed.returncode == 0:
            # Named from the work tree's top: from logs.parent, as `git ls-files` run there names them.
            names = [name.removeprefix(f"{prefix}/") for name in listed.stdout.split("\0")]
            return processes.CompletedProcess(listed.args, 0, "\0".join(names), listed.stderr)
    said = failed.stderr.strip().splitlines()
    raise ConfinementError(
        errno.EPERM, _unanswered(logs, quoting.inline(said[0][:200]) if said else f"exit {failed.returncode}")
    )


def _unanswered(logs: Path, why: str) -> str:
    """Git could not say whether logs/ holds tracked files: that is no "nothing tracked"."""
    return (
        f"git could not say whether {logs} holds files it tracks ({why}); precompact uses a logs/ only once git "
        f"says it tracks nothing there: run `git ls-files logs` in {logs.parent}, fix what git reports, then try again"
    )


def _untracked_seen(identity: str) -> str:
    """What is kept of one answer: a digest of its identity (no path in clear)."""
    return hashlib.sha256(identity.encode("utf-8", "surrogateescape")).hexdigest()


def _untracked_path() -> Path:
    from precompact.boundary import private_file

    return private_file.state_directory() / UNTRACKED_NAME


MAX_UNTRACKED_KEPT = 10_000  # answers kept; past it the oldest go (a project's changed index leaves its old one behind)


@functools.cache
def _untracked_kept() -> dict[str, None]:
    """The answers kept, oldest first, read once per process; a file not of their shape is read
    as none."""
    try:
        with open(_untracked_path(), "rb", opener=_no_follow) as f:
            text = f.read(65 * MAX_UNTRACKED_KEPT).decode("ascii")
    except (OSError, UnicodeDecodeError):
        return {}
    kept = text.split("\n")
    return dict.fromkeys(kept) if all(_DIGEST.fullmatch(line) for line in kept) else {}


def _no_follow(name: str, flags: int) -> int:
    return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC)


_DIGEST = re.compile(r"[0-9a-f]{64}")


_KEEPING = threading.local()  # per thread: whether answers wait for the end of `answers_kept_together`


@contextlib.contextmanager
def answers_kept_together() -> Iterator[None]:
    """The answers git gives inside this block kept in one write at its end: writing the file
    (fsynced) costs more than the git process it saves next time, so a search over many projects
    writes it once, not once per project."""
    if getattr(_KEEPING, "waiting", False):
        yield
        return
    _KEEPING.waiting = True
    try:
        yield
    finally:
        _KEEPING.waiting = False
        if getattr(_KEEPING, "changed", False):
            _KEEPING.changed = False
            _write_untracked()


def _keep_untracked(seen: str) -> None:
    """Adds an answer to the file, written whole, 0600 (a concurrent writer may drop the other's
    newest answer, which only costs a git process later)."""
    kept = _untracked_kept()
    kept.pop(seen, None)
    kept[seen] = None
    while len(kept) > MAX_UNTRACKED_KEPT:
        kept.pop(next(iter(kept)))
    if getattr(_KEEPING, "waiting", False):
        _KEEPING.changed = True
    else:
        _write_untracked()


def _write_untracked() -> None:
    from precompact.boundary import private_file

    kept = _untracked_kept()
    try:
        private_file.make_directory(_untracked_path().parent)
        private_file.replace(_untracked_path(), "\n".join(kept).encode("ascii"))
    except OSError:
        pass  # not kept on disk: git is asked again by the next process
