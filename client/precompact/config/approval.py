"""Which `.precompact.toml` files this user approved, like direnv's `allow`.

A repository cloned from a stranger can ship a `.precompact.toml`; precompact runs in every
project its user opens, so such a file must not take effect until the user has read and
approved it. An approval is a record in the user's own configuration directory (never in the
project), one file per approved path, mode 0600, holding the path, the SHA-256 of the exact
bytes approved, when the user named one, the git repository the savepoints may go to, and the
settings as the user saw them (so that the next approval shows what changed since).
Any change to the file's bytes withdraws the approval.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from precompact.boundary import private_file


@dataclass(frozen=True)
class Approval:
    path: str
    sha256: str
    # A repository other than the project's own that the user allowed as `git.repository`.
    repository: str | None
    # The settings as shown when approved (empty in records older than this field).
    settings: dict[str, str] = field(default_factory=dict)


def store() -> Path:
    """The directory of approvals: $XDG_CONFIG_HOME/precompact/trusted, else ~/.config/..."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "precompact" / "trusted"


def _record(path: Path) -> Path:
    return store() / f"{hashlib.sha256(str(path).encode()).hexdigest()}.json"


def digest(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def approve(path: Path, content: bytes, repository: Path | None = None, settings: dict[str, str] | None = None) -> None:
    """Records that this user trusts `path` while it holds exactly `content`, shown as `settings`."""
    record = {
        "path": str(path),
        "sha256": digest(content),
        "repository": str(repository) if repository else None,
        "settings": settings or {},
    }
    private_file.replace(_record(path), json.dumps(record, sort_keys=True).encode())


def approval(path: Path) -> Approval | None:
    """This user's approval of `path`, if any. A record another user could have written (not
    ours, or writable by others) counts as none."""
    try:
        fd = os.open(_record(path), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if info.st_uid != os.geteuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return None
        try:
            record = json.loads(f.read())
        except ValueError:
            return None
    if not isinstance(record, dict) or record.get("path") != str(path) or not isinstance(record.get("sha256"), str):
        return None
    repository = record.get("repository")
    settings = record.get("settings")
    if not isinstance(settings, dict) or not all(isinstance(v, str) for v in settings.values()):
        settings = {}
    return Approval(record["path"], record["sha256"], repository if isinstance(repository, str) else None, settings)
