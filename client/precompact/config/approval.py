"""Which `.precompact.toml` files this user approved, like direnv's `allow`.

A repository cloned from a stranger can ship a `.precompact.toml`; precompact runs in every
project its user opens, so such a file must not take effect until the user has read and
approved it. An approval is a record in the user's own configuration directory (never in the
project), one file per approved path, mode 0600, holding the path, the SHA-256 of the exact
bytes approved, when the user named one, the git repository the savepoints may go to, and the
settings as the user saw them (so that the next approval shows what changed since).
Any change to the file's bytes withdraws the approval.

The hook asks `approved_as_is` on every event of every agent before importing anything else
(edges/hook.py): this module imports `os`, `stat`, `json`, CPython's built-in SHA-256,
`boundary/small_file` (which reads each file without blocking on a FIFO) and `boundary/user_roots`
(`os`, `pwd`) alone at its top.
"""

from __future__ import annotations

import errno
import json
import os
import stat

from precompact.boundary import small_file, user_roots
from precompact.errors import PrecompactError

try:  # CPython 3.11's own SHA-256: hashlib loads OpenSSL first, a few ms of every hook event in a project
    from _sha256 import sha256  # type: ignore[import-not-found]
except ImportError:  # elsewhere (3.12 renamed it `_sha2`, which the plugin's launcher test sees as not stdlib)
    from hashlib import sha256

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a few ms)
if TYPE_CHECKING:
    from pathlib import Path


# A `.precompact.toml` is a few KB, an approval record the same plus the settings as shown: past
# these neither is one (`small_file` refuses it rather than reading a device without end).
MAX_CONFIG_BYTES = 1 << 20
MAX_RECORD_BYTES = 2 << 20


class Approval:
    """An approval record as read: the path approved, the SHA-256 of its bytes, a repository
    other than the project's own that the user allowed as `git.repository` (None: none), and
    the settings as shown when approved (empty in records older than that field). A plain
    class: `dataclasses` imports `inspect`, milliseconds of every hook event in a project."""

    __slots__ = ("path", "repository", "settings", "sha256")

    def __init__(self, path: str, sha256: str, repository: str | None, settings: dict[str, str]) -> None:
        self.path, self.sha256, self.repository, self.settings = path, sha256, repository, settings

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Approval) and self._fields() == other._fields()

    def __repr__(self) -> str:
        return f"Approval(path={self.path!r}, sha256={self.sha256!r}, repository={self.repository!r}, settings={self.settings!r})"

    def _fields(self) -> tuple:
        return (self.path, self.sha256, self.repository, self.settings)


class NotOwn(PrecompactError):
    """The configuration file may not be read as this user's: the message says why and the fix."""


def store() -> Path:
    """The directory of approvals: <the configuration home>/precompact/trusted (boundary/user_roots:
    $XDG_CONFIG_HOME, else ~/.config; in the hook, the worker and the MCP server never a place in
    the project, so no approval there is one)."""
    from pathlib import Path

    return Path(_store())


def _store() -> str:
    return os.path.join(user_roots.config_home(), "precompact", "trusted")


def _record(path: Path | str) -> str:
    return os.path.join(_store(), f"{sha256(str(path).encode()).hexdigest()}.json")


def digest(content: bytes) -> str:
    return sha256(content).hexdigest()


def read_own(path: Path | str) -> bytes:
    """The bytes of a configuration file this user owns and only this user can change; NotOwn
    (its message naming the fix) for any other."""
    try:
        content, info = small_file.read(path, MAX_CONFIG_BYTES, follow_links=False)
    except small_file.Refused as e:
        if e.errno == errno.ELOOP:
            raise NotOwn(
                f"{path} is a symbolic link; precompact reads only a regular file there: replace the link with the file"
            ) from None
        raise NotOwn(f"{path} {e.reason}; precompact ignores it: remove it") from None
    except OSError as e:
        from precompact.boundary import quoting  # only on failure: the hook's fast path reads this module

        raise NotOwn(f"cannot read {path}: {quoting.os_error(e)}") from None
    if info.st_uid != os.geteuid():
        raise NotOwn(
            f"{path} belongs to uid {info.st_uid}, not to you; precompact ignores it: remove it, or copy it into a file of your own"
        )
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise NotOwn(
            f"{path} can be changed by other users (mode {stat.S_IMODE(info.st_mode):o}); precompact ignores it: `chmod 600 {path}`, then `precompact trust`"
        )
    return content


def approved_as_is(path: str) -> bool:
    """Whether `path` is this user's own configuration file and they approved exactly its bytes:
    the first checks `settings.load` makes, answered without its imports. False where anything
    is in doubt; `settings.load` then says what."""
    try:
        content = read_own(path)
    except NotOwn:
        return False
    approved = approval(path)
    return approved is not None and approved.sha256 == digest(content)


def approve(path: Path, content: bytes, repository: Path | None = None, settings: dict[str, str] | None = None) -> None:
    """Records that this user trusts `path` while it holds exactly `content`, shown as `settings`."""
    from pathlib import Path

    from precompact.boundary import private_file

    record = {
        "path": str(path),
        "sha256": digest(content),
        "repository": str(repository) if repository else None,
        "settings": settings or {},
    }
    private_file.replace(Path(_record(path)), json.dumps(record, sort_keys=True).encode())


def approval(path: Path | str) -> Approval | None:
    """This user's approval of `path`, if any. A record another user could have written (not
    ours, or writable by others) counts as none."""
    try:
        content, info = small_file.read(_record(path), MAX_RECORD_BYTES, follow_links=False)
    except OSError:
        return None
    if info.st_uid != os.geteuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    try:
        record = json.loads(content)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or record.get("path") != str(path) or not isinstance(record.get("sha256"), str):
        return None
    repository = record.get("repository")
    settings = record.get("settings")
    if not isinstance(settings, dict) or not all(isinstance(v, str) for v in settings.values()):
        settings = {}
    return Approval(record["path"], record["sha256"], repository if isinstance(repository, str) else None, settings)
