"""This machine's own record of the savepoints it wrote: the local root.

A `logs/` directory can arrive with a project (a downloaded archive, a copy, a `Logs/` that git
tracks on a case-insensitive filesystem) holding a complete index, snapshots and chunks made
elsewhere. Its index states hashes, but nothing in the project can say that this machine
computed them. So each SAVEPOINT_CREATED line carries a tag: HMAC-SHA256, under a per-user key
kept outside every project (`$XDG_STATE_HOME/precompact/machine.key`, default
`~/.local/state/precompact/`, 0600, created on the first write), over the fields that make the
savepoint (instance, sequence, snapshot hash, predecessor hash, snapshot file, time). An entry
whose tag checks was written by this user on this machine; any other entry holds no local root
and counts only once the on-chain record vouches for it.

Why a key and not a per-project list of recorded hashes: the record must follow the project
when it is moved or renamed on this machine (a list keyed by path would not), it must stay
constant in size however many savepoints are written, and it needs no second copy of what the
index already holds. The tag binds the instance name, the project's identity as the chain sees
it, rather than its path for the same reason. A clone of the project carries no `logs/` (git
does not track it), so nothing needs to survive there; the index copy on the savepoint branch
carries the tags, which vouch on this machine only.

Savepoints written before this record existed carry no tag, and a first run of this code cannot
tell them from a copied `logs/`: they are "not verified" locally, and verified when the chain's
record covers them (`precompact verify` with the chain layer on). Removing the key file makes
every savepoint written so far unvouched in the same way.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import json
import os
import shlex
from pathlib import Path

from precompact.boundary import private_file, quoting, small_file
from precompact.errors import PrecompactError

KEY_NAME = "machine.key"
KEY_BYTES = 32
TAG_FIELD = "machine_tag"
# The fields of a SAVEPOINT_CREATED line the tag covers: those that say which bytes it was.
TAGGED_FIELDS = ("instance", "sequence", "snapshot_hash", "prev_snapshot_hash", "snapshot_file", "unix_timestamp")
_CONTEXT = b"precompact/savepoint-written/v1\0"


class ProvenanceError(PrecompactError, OSError):
    """This machine's key cannot be used; the message names the file and the fix."""

    def __str__(self) -> str:
        return self.strerror or ""


def state_dir() -> Path:
    """$XDG_STATE_HOME/precompact, else ~/.local/state/precompact."""
    return private_file.state_directory()


def key_path() -> Path:
    return state_dir() / KEY_NAME


def tag(event: dict) -> str:
    """The tag this machine gives a SAVEPOINT_CREATED line it writes (the key is made if there
    is none yet)."""
    return _tag(_key(create=True), event)


def written_here(created: dict) -> bool:
    """Whether this machine wrote the SAVEPOINT_CREATED line `created` (its tag checks)."""
    found = created.get(TAG_FIELD)
    if not isinstance(found, str):
        return False
    try:
        key = _key(create=False)
    except (FileNotFoundError, ProvenanceError):
        return False
    # As bytes: compare_digest refuses a str with non-ASCII characters, which a line may hold.
    return hmac.compare_digest(found.encode(errors="surrogateescape"), _tag(key, created).encode())


def unvouched_note(logs: Path, savepoints: list[tuple[str, int]], remote: bool) -> str:
    """What Layers 1, 2 and 3 and `status` say, in one line naming the fix, of the savepoints in
    `logs` (instance, sequence) that no root vouches for: no tag of this machine's key, no
    signature of the configured key (the user's own too, written before this machine's key was
    lost and never signed: the worker signs them at its next run). `remote`: whether the git
    layer is on, so that `precompact restore` can bring the user's own back. Pushing one would back up someone else's savepoint as the
    user's, and saving after one would make it the predecessor of the user's own, which neither
    `verify` nor the chain ever accepts. The instance names are the index's words: quoted."""
    named = ", ".join(f"{quoting.inline(instance)} #{sequence}" for instance, sequence in savepoints[:3])
    more = f" and {len(savepoints) - 3} more" if len(savepoints) > 3 else ""
    return (
        f"{logs} holds {len(savepoints)} savepoint(s) no root vouches for ({named}{more}: not written by this machine, "
        "not signed by your key; a logs/ that came with the project, a copy or an archive, or your own from before "
        f"this machine's key {key_path()} was lost or replaced), so precompact neither "
        f"pushes them nor saves after them: move it away (`mv {shlex.quote(str(logs))} {shlex.quote(str(logs) + '.foreign')}`: "
        "nothing in it is lost)" + (", and `precompact restore` brings back your own from the remote" if remote else "")
    )


def shipped_note(logs: Path, count: int, authority: str | None = None, by_authority: int = 0) -> str:
    """What `trust` says, before asking, of the `count` savepoints in `logs` that this machine did
    not write and no key the user holds signed (a `logs/` that came with the project): that
    approving the file does not make them the user's, or, for the `by_authority` of them signed by
    `authority` (the chain.authority the file under review sets), that approving it does. The
    path is outside text: quoted."""
    said = (
        f"{quoting.path(logs)} already holds {count} savepoint(s) this machine did not write and your key did not "
        "sign (a logs/ that came with the project, a copy or an archive)"
    )
    refused = "precompact neither pushes them nor saves after them"
    if not by_authority:
        return f"{said}: they will not verify as yours, approved or not, and {refused}"
    which = "signed" if by_authority == count else f"{by_authority} of them signed"
    rest = "" if by_authority == count else f"; the other {count - by_authority} will not, approved or not"
    return (
        f"{said}: {which} by chain.authority {authority}, which this file sets: approving it makes them verify as "
        f"yours{rest} (approve only if {authority} is your own key)"
    )


def stamped(purpose: str, data: bytes) -> bytes:
    """`data` followed by this machine's tag over it, for a file in logs/ whose origin matters
    (the chunk naming key): `made_here` gives `data` back only from this machine's stamp."""
    return data + _mac(_key(create=True), purpose, data)


def made_here(purpose: str, stored: bytes) -> bytes | None:
    """The data `stamped(purpose, data)` wrote, if `stored` is that; None for anything else
    (a file from another machine, an older unstamped one, a malformed one)."""
    data, found = stored[:-_MAC_BYTES], stored[-_MAC_BYTES:]
    if len(stored) <= _MAC_BYTES:
        return None
    try:
        key = _key(create=False)
    except (FileNotFoundError, ProvenanceError):
        return None
    return data if hmac.compare_digest(found, _mac(key, purpose, data)) else None


_MAC_BYTES = 32


def _mac(key: bytes, purpose: str, data: bytes) -> bytes:
    return hmac.new(key, b"precompact/made-here/v1\0" + purpose.encode() + b"\0" + data, hashlib.sha256).digest()


def _tag(key: bytes, event: dict) -> str:
    covered = json.dumps([event.get(name) for name in TAGGED_FIELDS], ensure_ascii=False, separators=(",", ":"))
    return hmac.new(key, _CONTEXT + covered.encode("utf-8"), hashlib.sha256).hexdigest()


_cached: dict[Path, bytes] = {}


def _key(create: bool) -> bytes:
    path = key_path()
    if path in _cached:
        return _cached[path]
    try:
        key = _read_key(path)
    except FileNotFoundError:
        if not create:
            raise
        key = _create_key(path)
    _cached[path] = key
    return key


def _create_key(path: Path) -> bytes:
    """A new key at `path`, whole before any reader can see it (written aside, then linked into
    place); the one another process made first when it won."""
    with contextlib.suppress(FileExistsError):
        private_file.create(path, os.urandom(KEY_BYTES))
    return _read_key(path)


def _read_key(path: Path) -> bytes:
    """The key, if only this user can read it and it is exactly KEY_BYTES long."""
    try:
        key, info = small_file.read(path, KEY_BYTES, follow_links=False)
    except small_file.Refused as e:
        if e.errno == errno.ELOOP:
            raise ProvenanceError(
                e.errno, f"{path} is a symbolic link; remove it (precompact makes a new key)"
            ) from None
        if e.errno == errno.EFBIG:
            raise ProvenanceError(
                errno.EINVAL, f"{path} is not a {KEY_BYTES}-byte key; remove it (precompact makes a new key)"
            ) from None
        raise ProvenanceError(
            errno.EPERM, f"{path} is not a file only you can read; remove it (precompact makes a new key)"
        ) from None
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise ProvenanceError(
            errno.EPERM, f"{path} is not a file only you can read; remove it (precompact makes a new key)"
        )
    if len(key) != KEY_BYTES:
        raise ProvenanceError(
            errno.EINVAL, f"{path} is not a {KEY_BYTES}-byte key; remove it (precompact makes a new key)"
        )
    return key
