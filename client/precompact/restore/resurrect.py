"""Resurrection: a savepoint brought back and checked by the verifier (`trust`).

The savepoints come from this machine's index or, on a machine that has only the git remote,
from the copy of the index committed on the savepoint branch: there it only says where to look,
and nothing it states counts until a root vouches for it. A savepoint is verified when its bytes
hash to the value this machine recorded when it wrote them (the local root: an index line this
machine tagged, local.provenance; a logs/ that came with the project has none), or when the
on-chain record of the configured authority and instance covers it: directly, or through the
predecessor hashes inside each later snapshot (the chain root). Git shows that its copy is the
committed one; it is no root of its own.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from precompact.boundary import atomic_file, logs_dir
from precompact.config.settings import Config
from precompact.errors import PrecompactError
from precompact.local import chunks, savepoint_log, snapshot
from precompact.remote import encryption
from precompact.verifier import verdicts
from precompact.verifier.verdicts import FAILED, NOT_VERIFIED, OFF, VERIFIED, Check

__all__ = ["FAILED", "NOT_VERIFIED", "OFF", "VERIFIED", "Check", "ResurrectError", "Resurrection", "resurrect"]
LOCAL_INDEX = "local index"
NOT_WRITTEN_HERE = "the index in logs/ (not written by this machine: its line carries no tag of this machine's key)"


class ResurrectError(PrecompactError):
    """Nothing trustworthy to resurrect; the message says why and what to do."""


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
    def verified(self) -> bool:
        """Intact, and vouched for by a root: this machine's recorded hash or the chain."""
        return self.intact and VERIFIED in (self.checks["integrity"].status, self.checks["chain"].status)

    @property
    def size(self) -> int:
        return self.savepoint.snapshot_size_bytes or 0

    @property
    def conversation_size(self) -> int:
        """The restored conversation's bytes: a chunked snapshot's history rebuilt from its
        chunks, not the snapshot file (which only lists them)."""
        try:
            return self.contents.history_end - len(chunks.HISTORY_OPEN)
        except ValueError:
            return len(self.contents.data)


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
    local_root = source == LOCAL_INDEX and target.written_here
    if not logs_dir.is_snapshot_name(target.snapshot_file, target.sequence):
        raise ResurrectError(
            f"the index names {target.snapshot_file!r} as savepoint {target.sequence}'s snapshot, not a name precompact writes"
        )
    evidence = _Evidence(config, repo, {s.sequence: s for s in savepoints})
    checks: dict[str, Check] = {}
    local = evidence.local(target)
    if offline:
        checks["chain"], checks["git"] = _recorded_chain(config, target), _recorded_git(config, target)
        wanted, git_bytes = target.snapshot_hash, None
    else:
        checks["chain"] = _check_chain(config, name, target, evidence, local_root, check_chain, rpc_timeout)
        # The hash to hold the bytes to: this machine's record, else what the chain verified.
        rooted = local_root or checks["chain"].status == VERIFIED
        wanted = target.snapshot_hash if local_root else (checks["chain"].sha256 or target.snapshot_hash)
        checks["git"], git_bytes = _check_git(
            config, repo, repo_problem, target, evidence.commit_of(target), wanted, rooted, local
        )
    local_path = config.root / target.snapshot_file
    usable, path = _usable_bytes(config.logs, local_path, local, wanted, git_bytes, checks["git"], checks)
    commit = evidence.commit_of(target) if repo is not None else None
    reader = snapshot.SnapshotReader(_contents(config, repo, usable, target, commit, checks))
    document = reader.fields
    before = evidence.by_sequence.get(target.sequence - 1)
    checks["integrity"] = _check_integrity(
        usable, name, target, before, local_root, checks["chain"].status == VERIFIED, source == LOCAL_INDEX
    )
    found = Resurrection(
        name,
        config.instance,
        target,
        sum(s.sequence > target.sequence for s in savepoints),
        path,
        reader,
        checks,
        source,
    )
    found.lineage = _lineage(document, name, config.instance)
    if found.intact and record_lineage and name != config.instance:
        events = savepoint_log.read(config.logs).events
        if savepoint_log.lineage(events, config.instance) != found.lineage:
            savepoint_log.record(
                config.logs,
                {
                    "event": savepoint_log.Event.RESURRECTED,
                    "instance": config.instance,
                    "from_instance": name,
                    "from_sequence": target.sequence,
                    "lineage": found.lineage,
                },
            )
    if restore_state:
        if not found.intact:
            raise ResurrectError(
                f"savepoint {target.sequence} of {name} failed verification; the session state was not restored"
            )
        if not found.verified:
            raise ResurrectError(
                f"savepoint {target.sequence} of {name} is not verified from a root (this machine's recorded hash or the chain); the session state was not restored"
            )
        found.restored_state = _restore_state(config, document, target)
    return found


def export(config: Config, instance: str | None = None, sequence: int | None = None) -> bytes:
    """The full document of a savepoint (conversation history, session state, files in play,
    git state): a chunked snapshot rebuilt from its chunks, the same bytes every time. Refuses
    a savepoint that fails a check."""
    found = resurrect(config, instance, sequence)
    if not found.intact:
        failed = next(f"{name}: {c.detail}" for name, c in found.checks.items() if c.status == FAILED)
        raise ResurrectError(
            f"savepoint {found.savepoint.sequence} of {found.instance} failed a check ({failed}); nothing exported"
        )
    return found.contents.data


def _repository(config: Config):
    from precompact.remote import gitstore

    if not config.git_layer:
        return None, "the git layer is off in .precompact.toml"
    try:
        return gitstore.open_repository(config.repository), None
    except gitstore.GitStoreError as e:
        return None, str(e)


def _target(config: Config):
    from precompact.remote import gitstore

    return gitstore.Target.of(config)


def _savepoints(
    config: Config, repo, repo_problem: str | None, name: str, offline: bool
) -> tuple[list[savepoint_log.Savepoint], str]:
    local = savepoint_log.savepoints(config.logs, name)
    if local:
        return local, LOCAL_INDEX
    index = savepoint_log.index_path(config.logs)
    if offline:
        raise ResurrectError(f"no savepoint of {name} in {index}")
    from precompact.remote import gitstore

    if repo is None:
        raise ResurrectError(
            f"no savepoint of {name} in {index} ({repo_problem}); check the instance name or run from the project"
        )
    target = _target(config)
    try:
        gitstore.fetch(repo, target)
        fetched = ""
    except gitstore.GitStoreError as e:
        fetched = f"; {e}"
    tip = gitstore.savepoint_tip(repo, target)
    if tip is None:
        raise ResurrectError(
            f"no savepoint of {name} in {index}, and branch {config.branch} is not in {config.repository}{fetched}"
        )
    try:
        committed = gitstore.file_at(repo, tip, str(index.relative_to(config.root)), encryption.Keys.of(config))
    except (gitstore.Sealed, gitstore.Undecryptable) as e:
        raise ResurrectError(f"the savepoints on branch {config.branch} cannot be read: {e}") from None
    except gitstore.GitStoreError:
        raise ResurrectError(
            f"branch {config.branch} in {config.repository} holds no {index.name}; it is not a precompact savepoint branch"
        ) from None
    savepoints = savepoint_log.of_instance(
        savepoint_log.fold(savepoint_log.parse(committed.splitlines(keepends=True)).events), name
    )
    if not savepoints:
        raise ResurrectError(
            f"no savepoint of {name} in {index} or on branch {config.branch}; check the instance name (see `precompact status`)"
        )
    return savepoints, f"branch {config.branch} of {config.repository}"


def _choose(savepoints: list, name: str, sequence: int | None, at: str | None):
    if sequence is not None:
        for savepoint in savepoints:
            if savepoint.sequence == sequence:
                return savepoint
        raise ResurrectError(
            f"{name} has no savepoint {sequence}; it has {savepoints[0].sequence} to {savepoints[-1].sequence}"
        )
    if at is not None:
        moment = parse_time(at)
        earlier = [s for s in savepoints if s.unix_timestamp <= moment.timestamp()]
        if not earlier:
            raise ResurrectError(
                f"{name} has no savepoint at or before {at}; the first is from {savepoints[0].timestamp}"
            )
        return _with_conversation(earlier)
    return _with_conversation(savepoints)


def _with_conversation(savepoints: list):
    """The newest savepoint that holds a conversation (the newest, when none does): one made
    without a transcript restores nothing."""
    from precompact.local import capture

    return capture.latest_with_conversation(savepoints) or savepoints[-1]


def parse_time(text: str) -> datetime:
    """An ISO 8601 time; without a zone it is UTC."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ResurrectError(f"--at {text!r} is not an ISO 8601 time; e.g. 2026-11-30T14:05:00Z") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class _Evidence:
    """Where each savepoint's snapshot bytes can be found: the local file, else git at its
    commit. Nothing here is trusted: the verifier checks whatever bytes it is handed."""

    def __init__(self, config: Config, repo, by_sequence: dict[int, savepoint_log.Savepoint]):
        self.config = config
        self.repo = repo
        self.by_sequence = by_sequence
        self.record_commits: dict[int, str] = {}  # named by the verified on-chain record
        self.local = verdicts.LocalSnapshots(config.logs).get

    def commit_of(self, savepoint) -> str | None:
        """The signed record's commit first: the index (a copy from git, perhaps) only points."""
        return (
            self.record_commits.get(savepoint.sequence)
            or savepoint.commit
            or _commit_from_branch(self.config, self.repo, savepoint)
        )

    def locate(self, savepoint, expected: str | None) -> verdicts.Snapshot | None:
        """The bytes that hash to `expected` if any source has them, else the first found."""
        local = self.local(savepoint)
        if local is not None and local.sha256 == expected:
            return local
        commit = self.commit_of(savepoint) if self.repo is not None else None
        if commit is not None:
            from precompact.remote import gitstore

            tip = gitstore.savepoint_tip(self.repo, _target(self.config))
            try:
                stored, _ = verdicts.read_git_copy(
                    self.repo,
                    commit,
                    savepoint.snapshot_file,
                    encryption.Keys.of(self.config),
                    savepoint.sequence,
                    tip,
                )
            except gitstore.GitStoreError:  # commit or file absent: that source has nothing
                return local
            if stored is None:  # encrypted for another identity, or broken: _check_git says which
                return local
            from_git = verdicts.read_snapshot(stored, f"git commit {commit[:12]}")
            if local is None or from_git.sha256 == expected:
                return from_git
        return local


def _check_chain(
    config: Config,
    name: str,
    target,
    evidence: _Evidence,
    local_root: bool,
    check_chain: bool,
    rpc_timeout: float | None,
) -> Check:
    """The chain root's verdict on `target`: the record, then the walk back to it."""
    if not config.chain_layer:
        return Check(OFF, "the chain layer is off in .precompact.toml")
    if not check_chain:
        return Check(NOT_VERIFIED, "not asked to read the chain")
    from precompact.chain import rpc

    try:
        roots = verdicts.roots(config.program_id, config.authority, config.keypair, name)
    except verdicts.NoRoot as e:
        return Check(NOT_VERIFIED, str(e))
    # Only this machine's own index can say what was confirmed; a copy from git could lie.
    confirmed = savepoint_log.highest_confirmed(evidence.by_sequence.values()) if local_root else 0
    read = verdicts.read_record(
        roots, rpc.Cluster(config.cluster, timeout=rpc_timeout or rpc.DEFAULT_TIMEOUT_SECONDS), confirmed
    )
    if read.record is None:
        return Check(read.status, read.detail)
    held = read.record
    if held.sequence < target.sequence:
        return Check(NOT_VERIFIED, f"the chain holds savepoint {held.sequence}; {target.sequence} is not posted yet")
    if set(held.commit) != {"0"}:
        evidence.record_commits[held.sequence] = held.commit
    return verdicts.walk_back(held, roots, evidence.by_sequence, target.sequence, evidence.locate)[target.sequence]


def _recorded_chain(config: Config, target) -> Check:
    """The chain as the worker recorded it in the index: never "verified", which takes reading
    the record."""
    if not config.chain_layer:
        return Check(OFF, "the chain layer is off in .precompact.toml")
    if target.layer_3 == savepoint_log.Layer3.CONFIRMED:
        return Check(NOT_VERIFIED, f"confirmed at slot {target.chain_slot} per the index, not re-read")
    return Check(NOT_VERIFIED, "Layer 3 queued")


def _recorded_git(config: Config, target) -> Check:
    """Git as the worker recorded it in the index (not "verified", as for the chain)."""
    if not config.git_layer:
        return Check(OFF, "the git layer is off in .precompact.toml")
    if target.layer_2 in (savepoint_log.Layer2.PUSHED, savepoint_log.Layer2.COMMITTED) and target.commit:
        return Check(
            NOT_VERIFIED, f"{target.layer_2.lower()} as commit {target.commit[:12]} per the index, not re-read"
        )
    return Check(NOT_VERIFIED, "Layer 2 queued")


def _commit_from_branch(config: Config, repo, target) -> str | None:
    from precompact.remote import gitstore

    if repo is None:
        return None
    tip = gitstore.savepoint_tip(repo, _target(config))
    return gitstore.commit_adding(repo, tip, target.snapshot_file) if tip else None


def _check_git(
    config: Config,
    repo,
    repo_problem: str | None,
    target,
    commit: str | None,
    wanted: str,
    rooted: bool,
    local: verdicts.Snapshot | None,
) -> tuple[Check, bytes | None]:
    """Git's verdict (its copy is the committed one, and matches what a root vouches for), and
    the snapshot's bytes from git when the local copy cannot serve."""
    from precompact.remote import gitstore

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
            return Check(
                FAILED, f"commit {commit[:12]} is neither here nor on {config.remote}: history was rewritten"
            ), None
    name = target.snapshot_file
    clear, sealed = gitstore.blob_ids_at(repo, [(commit, name), (commit, gitstore.sealed_path(name))])
    if clear is None and sealed is None:
        return Check(FAILED, f"commit {commit[:12]} does not contain {name}"), None
    where = f"commit {commit[:12]} on {config.branch}"
    root = "the verified hash" if rooted else "the hash the index copy from git names (no root vouches for it)"
    stored: bytes | None
    if clear is not None and local is not None and local.sha256 == wanted:
        stored = None
        intact = clear == gitstore.blob_id(repo, local.data)
    else:
        tip = gitstore.savepoint_tip(repo, _target(config))
        stored, unread = verdicts.read_git_copy(repo, commit, name, encryption.Keys.of(config), target.sequence, tip)
        if unread is not None:
            return unread, None
        intact = hashlib.sha256(stored or b"").hexdigest() == wanted
        if intact and local is not None and local.sha256 == wanted:
            stored, where = None, f"{where} (encrypted copy decrypted and checked)"
    if not intact:
        return Check(FAILED, f"{name} at {where} does not hash to {root} sha256:{wanted[:16]}"), None
    if not rooted:
        return Check(
            NOT_VERIFIED, f"{where} holds the snapshot the index copy names, but no root vouches for that hash"
        ), stored
    return Check(VERIFIED, where if stored is None else f"{where} (copy restored from git)"), stored


def _usable_bytes(
    logs: Path,
    local_path: Path,
    local: verdicts.Snapshot | None,
    wanted: str,
    git_bytes: bytes | None,
    git_check: Check,
    checks: dict,
) -> tuple[verdicts.Snapshot, Path]:
    """The snapshot bytes that hash to the wanted value, and where they are on disk."""
    if local is not None and local.sha256 == wanted:
        return local, local_path
    if local is not None:
        checks["snapshot"] = Check(FAILED, f"{local_path} was altered (sha256 {local.sha256[:16]} != {wanted[:16]})")
    if git_bytes is None:
        problem = "is altered" if local is not None else "is missing"
        raise ResurrectError(
            f"snapshot {local_path} {problem} and git has no usable copy ({git_check.detail}); run `precompact verify`"
        )
    # Never overwrite an altered local file: it is evidence.
    path = local_path if local is None else local_path.with_name(local_path.stem + ".from-git.json")
    logs_dir.write_atomic(logs, f"{logs_dir.SAVES_DIR}/{path.name}", git_bytes)
    return verdicts.read_snapshot(git_bytes, str(path)), path


def _contents(config: Config, repo, found: verdicts.Snapshot, target, commit: str | None, checks: dict) -> bytes:
    """The full document: a chunked snapshot's chunks from logs/, else from git at `commit`
    (and then kept in logs/ where it had none), each checked against the hash the snapshot
    lists. An altered local chunk fails the "chunks" check, as an altered snapshot file does."""
    altered: list[chunks.Ref] = []

    def fetch(ref: chunks.Ref) -> bytes | None:
        data = chunks.read_local(config.logs, ref)
        if verdicts.chunk_problem(ref, data, "logs/") is None:
            return data
        if data is not None:
            altered.append(ref)
        if commit is None:
            return data
        from precompact.remote import gitstore

        stored = gitstore.chunk_at(repo, commit, ref, encryption.Keys.of(config))
        if isinstance(stored, gitstore.Sealed):
            # Encrypted for identities not here at its commit: `precompact rekey` re-encrypts
            # the branch's tip for those added since (the chunk's own hash still decides).
            tip = gitstore.savepoint_tip(repo, _target(config))
            stored = gitstore.chunk_at(repo, tip, ref, encryption.Keys.of(config)) if tip is not None else stored
        if not isinstance(stored, bytes) or verdicts.chunk_problem(ref, stored, "git") is not None:
            return data
        if data is None:
            chunks.store(config.logs, stored)
        return stored

    where = f"logs/{chunks.CHUNKS_DIR}/" + (f" or commit {commit[:12]}" if commit else "")
    try:
        document = verdicts.contents(found, fetch, where)
    except verdicts.Broken as e:
        raise ResurrectError(
            f"savepoint {target.sequence}'s conversation cannot be rebuilt: {e}; run `precompact verify`"
        ) from None
    if altered:
        checks["chunks"] = Check(
            FAILED,
            f"{len(altered)} chunk(s) in logs/{chunks.CHUNKS_DIR}/ altered (first {altered[0].sha256}); git's copies were used",
        )
    return document


def _check_integrity(
    found: verdicts.Snapshot, name: str, target, before, local_root: bool, chain_verified: bool, in_logs: bool
) -> Check:
    """The snapshot against the index entry: this machine's recorded hash (a root), or an
    index this machine did not write (a copy from git, a logs/ that came with the project),
    which counts only when the chain verified the same bytes."""
    unrooted = NOT_WRITTEN_HERE if in_logs else "the index copy from git"
    root = f"{verdicts.LOCAL_ROOT}" if local_root else f"{unrooted} names"
    try:
        verdicts.check_snapshot(found, target.sequence, name, target.snapshot_hash, root)
        verdicts.check_link(
            found, target.sequence, target.prev_snapshot_hash, f"{root} for savepoint {target.sequence - 1}"
        )
    except verdicts.Broken as e:
        return Check(FAILED, str(e))
    if before is not None and before.snapshot_hash != target.prev_snapshot_hash:
        return Check(FAILED, f"savepoint {target.sequence} does not link to savepoint {before.sequence} in the index")
    if not local_root and chain_verified:
        return Check(
            VERIFIED,
            f"hash is the one the on-chain record vouches for; {unrooted} agrees and its hash link holds",
        )
    if not local_root:
        return Check(
            NOT_VERIFIED,
            f"consistent with {unrooted}, which no root vouches for; only the on-chain record of the configured authority could",
        )
    return Check(VERIFIED, "hash matches the one this machine recorded; hash link to the previous savepoint holds")


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
        raise ResurrectError(
            f"savepoint {target.sequence} holds no session state ({saved.get('problem', 'none was configured')})"
        )
    content = saved["content"]
    text = content if isinstance(content, str) else json.dumps(content, indent=2, ensure_ascii=False) + "\n"
    atomic_file.write(config.session_state, text.encode("utf-8"), 0o600)
    return config.session_state
