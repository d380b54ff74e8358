"""Resurrection: a savepoint brought back and checked against every layer it reached.

The savepoints come from the local index or, on a machine that has only the git remote, from
the copy of the index committed on the savepoint branch. Everything is anchored to the hash the
index names: the snapshot bytes (from disk, else from git) must hash to it, git must hold the
same blob at the savepoint's commit, the on-chain record must hold it (or a later savepoint that
links back to it) under a valid signature, and its hash link must reach the savepoint before.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from precompact import atomic_file, savepoint_log, snapshot
from precompact.config import Config

if TYPE_CHECKING:
    from precompact import gitstore

VERIFIED, NOT_VERIFIED, FAILED, OFF = "verified", "not verified", "FAILED", "off"


class ResurrectError(Exception):
    """Nothing trustworthy to resurrect; the message says why and what to do."""


@dataclass(frozen=True)
class Check:
    status: str
    detail: str


@dataclass
class Resurrection:
    instance: str  # whose savepoint came back
    into: str  # the instance running now
    savepoint: savepoint_log.Savepoint
    later: int  # savepoints of `instance` newer than this one
    path: Path  # the snapshot on disk
    contents: snapshot.SnapshotReader
    checks: dict[str, Check]
    source: str
    lineage: list[str] = field(default_factory=list)
    restored_state: Path | None = None

    @property
    def document(self) -> dict:
        """Every field of the snapshot but its history (`contents.newest_entries()`)."""
        return self.contents.fields

    @property
    def intact(self) -> bool:
        return all(c.status != FAILED for c in self.checks.values())

    @property
    def size(self) -> int:
        return self.savepoint.created.get("snapshot_size_bytes") or 0


def resurrect(
    config: Config,
    instance: str | None = None,
    sequence: int | None = None,
    at: str | None = None,
    restore_state: bool = False,
    record_lineage: bool = False,
    check_chain: bool = True,
    rpc_timeout: float | None = None,
    offline: bool = False,
) -> Resurrection:
    """Loads and checks one savepoint of `instance` (default: the configured one): `sequence`,
    the newest at or before the ISO time `at`, or the newest. With `record_lineage`, the
    configured instance records that it continues `instance`; with `restore_state`, the saved
    session-state file is written back. `offline` (a session start) uses neither the network
    nor GitPython (whose import alone is most of a hook's start-up): the local index only, the
    snapshot re-hashed, git and chain as the worker recorded them in the index, not re-read."""
    name = instance or config.instance
    repo, repo_problem = (None, None) if offline else _repository(config)
    savepoints, source = _savepoints(config, repo, repo_problem, name, offline)
    target = _choose(savepoints, name, sequence, at)
    checks: dict[str, Check] = {}
    local = config.root / target.created["snapshot_file"]
    if offline:
        checks["chain"], checks["git"] = _recorded_chain(config, target), _recorded_git(config, target)
        local_digests, git_bytes = _sha256_of(local), None
    else:
        from precompact import gitstore

        checks["chain"], onchain_commit = _check_chain(config, name, target, savepoints, check_chain, rpc_timeout)
        local_digests = gitstore.file_digests(local) if local.is_file() else None
        commit = target.commit or onchain_commit or _commit_from_branch(config, repo, target)
        checks["git"], git_bytes = _check_git(config, repo, repo_problem, target, commit, local_digests)
    data, path = _intact_bytes(target, local, local_digests, git_bytes, checks)
    reader = snapshot.SnapshotReader(data)
    document = reader.fields
    checks["integrity"] = _check_integrity(document, name, target, savepoints)
    found = Resurrection(name, config.instance, target, sum(s.sequence > target.sequence for s in savepoints), path, reader, checks, source)
    found.lineage = _lineage(document, name, config.instance)
    if found.intact and record_lineage and name != config.instance:
        events = savepoint_log.read(config.logs).events
        if savepoint_log.lineage(events, config.instance) != found.lineage:
            savepoint_log.record(
                config.logs,
                {"event": savepoint_log.RESURRECTED, "instance": config.instance, "from_instance": name, "from_sequence": target.sequence, "lineage": found.lineage},
            )
    if restore_state:
        if not found.intact:
            raise ResurrectError(f"savepoint {target.sequence} of {name} failed verification; the session state was not restored")
        found.restored_state = _restore_state(config, document, target)
    return found


def _repository(config: Config):
    from precompact import gitstore

    if not config.git_layer:
        return None, "the git layer is off in .precompact.toml"
    try:
        return gitstore.open_repository(config.repository), None
    except gitstore.GitStoreError as e:
        return None, str(e)


def _target(config: Config):
    from precompact import gitstore

    return gitstore.Target(config.repository, config.remote, config.branch)


def _savepoints(config: Config, repo, repo_problem: str | None, name: str, offline: bool) -> tuple[list[savepoint_log.Savepoint], str]:
    local = savepoint_log.savepoints(config.logs, name)
    if local:
        return local, "local index"
    index = savepoint_log.index_path(config.logs)
    if offline:
        raise ResurrectError(f"no savepoint of {name} in {index}")
    from precompact import gitstore

    if repo is None:
        raise ResurrectError(f"no savepoint of {name} in {index} ({repo_problem}); check the instance name or run from the project")
    target = _target(config)
    try:
        gitstore.fetch(repo, target)
        fetched = ""
    except gitstore.GitStoreError as e:
        fetched = f"; {e}"
    tip = gitstore.savepoint_tip(repo, target)
    if tip is None:
        raise ResurrectError(f"no savepoint of {name} in {index}, and branch {config.branch} is not in {config.repository}{fetched}")
    try:
        committed = gitstore.file_at(repo, tip, str(index.relative_to(config.root)))
    except Exception:
        raise ResurrectError(f"branch {config.branch} in {config.repository} holds no {index.name}; it is not a precompact savepoint branch") from None
    savepoints = savepoint_log.of_instance(savepoint_log.fold(savepoint_log.parse(committed.splitlines(keepends=True)).events), name)
    if not savepoints:
        raise ResurrectError(f"no savepoint of {name} in {index} or on branch {config.branch}; check the instance name (see `precompact status`)")
    return savepoints, f"branch {config.branch} of {config.repository}"


def _choose(savepoints: list, name: str, sequence: int | None, at: str | None):
    if sequence is not None:
        for savepoint in savepoints:
            if savepoint.sequence == sequence:
                return savepoint
        raise ResurrectError(f"{name} has no savepoint {sequence}; it has {savepoints[0].sequence} to {savepoints[-1].sequence}")
    if at is not None:
        moment = parse_time(at)
        earlier = [s for s in savepoints if s.created.get("unix_timestamp", 0) <= moment.timestamp()]
        if not earlier:
            raise ResurrectError(f"{name} has no savepoint at or before {at}; the first is from {savepoints[0].created.get('timestamp')}")
        return earlier[-1]
    return savepoints[-1]


def parse_time(text: str) -> datetime:
    """An ISO 8601 time; without a zone it is UTC."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ResurrectError(f"--at {text!r} is not an ISO 8601 time; e.g. 2026-11-30T14:05:00Z") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _check_chain(config: Config, name: str, target, savepoints: list, check_chain: bool, rpc_timeout: float | None) -> tuple[Check, str | None]:
    """The chain's verdict, and the commit its record names when it is the target's."""
    if not config.chain_layer:
        return Check(OFF, "the chain layer is off in .precompact.toml"), None
    if not check_chain:
        return Check(NOT_VERIFIED, "not asked to read the chain"), None
    from precompact import chain_post, layers, record

    try:
        found = layers.inspect(config, name, timeout=rpc_timeout)
    except chain_post.ClusterUnreachable as e:
        return Check(NOT_VERIFIED, str(e)), None
    except chain_post.RecordMissing:
        if target.layer_3 == "CONFIRMED":
            return Check(FAILED, f"the index says savepoint {target.sequence} is on chain, but {config.cluster} has no record of {name}"), None
        return Check(NOT_VERIFIED, f"nothing of {name} on {config.cluster} yet (Layer 3 queued)"), None
    except (chain_post.ChainError, record.RecordError) as e:
        return Check(FAILED, str(e)), None
    fields = found.fields
    held = fields["sequence"]
    if not found.signature_valid:
        return Check(FAILED, f"the record at {found.address} does not carry a valid signature of its authority"), None
    if held < target.sequence:
        return Check(NOT_VERIFIED, f"the chain holds savepoint {held}; {target.sequence} is not posted yet"), None
    by_sequence = {s.sequence: s for s in savepoints}
    newest = by_sequence.get(held)
    if newest is None or newest.snapshot_hash != fields["snapshot_hash"].hex():
        return Check(FAILED, f"the on-chain record (savepoint {held}, sha256:{fields['snapshot_hash'].hex()[:16]}) differs from the index"), None
    commit = fields["git_commit"].decode("ascii", errors="replace")
    where = f"record {found.address}, savepoint {held}, slot {fields['slot']}, signature valid"
    if held == target.sequence:
        return Check(VERIFIED, where), None if set(commit) == {"0"} else commit
    for n in range(target.sequence + 1, held + 1):
        after, before = by_sequence.get(n), by_sequence.get(n - 1)
        if after is None or before is None or after.prev_snapshot_hash != before.snapshot_hash:
            return Check(FAILED, f"the hash chain from savepoint {target.sequence} to the on-chain savepoint {held} is broken at {n}"), None
    return Check(VERIFIED, f"{where}; savepoint {target.sequence} links to it through the hash chain"), None


@dataclass(frozen=True)
class _Hashed:
    sha256: str


def _sha256_of(path: Path) -> _Hashed | None:
    if not path.is_file():
        return None
    with path.open("rb") as f:
        return _Hashed(hashlib.file_digest(f, "sha256").hexdigest())


def _recorded_chain(config: Config, target) -> Check:
    """The chain as the worker recorded it in the index: never "verified", which takes reading
    the record."""
    if not config.chain_layer:
        return Check(OFF, "the chain layer is off in .precompact.toml")
    if target.layer_3 == "CONFIRMED":
        return Check(NOT_VERIFIED, f"confirmed at slot {target.chain_slot} per the index, not re-read")
    return Check(NOT_VERIFIED, "Layer 3 queued")


def _recorded_git(config: Config, target) -> Check:
    """Git as the worker recorded it in the index (not "verified", as for the chain)."""
    if not config.git_layer:
        return Check(OFF, "the git layer is off in .precompact.toml")
    if target.layer_2 in ("PUSHED", "COMMITTED") and target.commit:
        return Check(NOT_VERIFIED, f"{target.layer_2.lower()} as commit {target.commit[:12]} per the index, not re-read")
    return Check(NOT_VERIFIED, "Layer 2 queued")


def _commit_from_branch(config: Config, repo, target) -> str | None:
    from precompact import gitstore

    if repo is None:
        return None
    tip = gitstore.savepoint_tip(repo, _target(config))
    return gitstore.commit_adding(repo, tip, target.created["snapshot_file"]) if tip else None


def _check_git(config: Config, repo, repo_problem: str | None, target, commit: str | None, local: gitstore.FileDigests | None) -> tuple[Check, bytes | None]:
    """Git's verdict, and the snapshot's bytes from git when the local copy cannot serve."""
    from precompact import gitstore

    if repo is None:
        return Check(OFF if not config.git_layer else NOT_VERIFIED, repo_problem or ""), None
    if commit is None:
        return Check(NOT_VERIFIED, f"savepoint {target.sequence} is not committed yet (Layer 2 queued)"), None
    if not gitstore.has_commit(repo, commit):
        try:
            gitstore.fetch(repo, _target(config))
        except gitstore.GitStoreError as e:
            return Check(NOT_VERIFIED, f"commit {commit[:12]} is not here and {e}"), None
        if not gitstore.has_commit(repo, commit):
            return Check(FAILED, f"commit {commit[:12]} is neither here nor on {config.remote}: history was rewritten"), None
    name = target.created["snapshot_file"]
    blob = gitstore.blob_id_at(repo, commit, name)
    if blob is None:
        return Check(FAILED, f"commit {commit[:12]} does not contain {name}"), None
    where = f"commit {commit[:12]} on {config.branch}"
    if local is not None and local.sha256 == target.snapshot_hash:
        if blob != local.blob_id(repo):
            return Check(FAILED, f"{name} at {where} differs from the snapshot the index names"), None
        return Check(VERIFIED, where), None
    stored = gitstore.file_at(repo, commit, name)
    if hashlib.sha256(stored).hexdigest() != target.snapshot_hash:
        return Check(FAILED, f"{name} at {where} does not hash to the index's sha256:{target.snapshot_hash[:16]}"), None
    return Check(VERIFIED, f"{where} (copy restored from git)"), stored


def _intact_bytes(target, local: Path, digests: gitstore.FileDigests | None, git_bytes: bytes | None, checks: dict) -> tuple[bytes, Path]:
    """The snapshot bytes that hash to the index's value, and where they are on disk."""
    if digests is not None and digests.sha256 == target.snapshot_hash:
        return local.read_bytes(), local
    if digests is not None:
        checks["snapshot"] = Check(FAILED, f"{local} was altered (sha256 {digests.sha256[:16]} != index {target.snapshot_hash[:16]})")
    if git_bytes is None:
        problem = "is altered" if digests is not None else "is missing"
        raise ResurrectError(f"snapshot {local} {problem} and git has no verified copy ({checks['git'].detail}); run `precompact verify`")
    # Never overwrite an altered local file: it is evidence.
    path = local if digests is None else local.with_name(local.stem + ".from-git.json")
    atomic_file.write(path, git_bytes, 0o600)
    return git_bytes, path


def _check_integrity(document: dict, name: str, target, savepoints: list) -> Check:
    prev = target.prev_snapshot_hash
    inner_prev = (document.get("previous") or {}).get("snapshot_hash")
    if document.get("instance_id") != name or document.get("sequence") != target.sequence:
        return Check(FAILED, f"the snapshot says it is savepoint {document.get('sequence')} of {document.get('instance_id')}")
    if inner_prev != prev:
        return Check(FAILED, f"the snapshot links to {inner_prev}, the index to {prev}")
    before = next((s for s in savepoints if s.sequence == target.sequence - 1), None)
    if before is not None and before.snapshot_hash != prev:
        return Check(FAILED, f"savepoint {target.sequence} does not link to savepoint {before.sequence}")
    return Check(VERIFIED, "hash matches the index; hash link to the previous savepoint holds")


def _lineage(document: dict, name: str, into: str) -> list[str]:
    lineage = [str(n) for n in document.get("lineage") or []] or [name]
    if lineage[-1] != name:
        lineage.append(name)
    if into != name:
        lineage.append(into)
    return lineage


def _restore_state(config: Config, document: dict, target) -> Path:
    if config.session_state is None:
        raise ResurrectError("snapshot.session_state is not set in .precompact.toml; set it to the file to restore")
    saved = document.get("session_state") or {}
    if "content" not in saved:
        raise ResurrectError(f"savepoint {target.sequence} holds no session state ({saved.get('problem', 'none was configured')})")
    content = saved["content"]
    text = content if isinstance(content, str) else json.dumps(content, indent=2, ensure_ascii=False) + "\n"
    atomic_file.write(config.session_state, text.encode("utf-8"), 0o600)
    return config.session_state
