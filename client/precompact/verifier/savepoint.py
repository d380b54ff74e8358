"""One savepoint put through the verifier, for whoever brings it back (resurrect, export, the
SessionStart brief): its evidence gathered once (the local bytes, git's copy at its commit, the
on-chain record and the snapshots that link to it) and every verdict decided by verdicts.py.

Nothing here writes: bytes only git had come back in `Checked`, and the caller decides whether
to keep them. Two ways in: `check` reads git and the chain; `check_recorded` (a session start,
which must not wait on the network or load GitPython) reads the local bytes only, and takes git
and the chain as the worker recorded them in the index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from precompact.boundary import quoting
from precompact.config.settings import Config
from precompact.errors import PrecompactError
from precompact.local import chunks
from precompact.local.savepoint_log import Savepoint
from precompact.records import Record, field
from precompact.verifier import signed, verdicts
from precompact.verifier.verdicts import FAILED, NOT_ON_REMOTE, NOT_VERIFIED, OFF, PENDING, VERIFIED, Check

if TYPE_CHECKING:  # a session start's check (check_recorded) reads no git evidence
    from precompact.verifier.evidence import GitEvidence


class Unusable(PrecompactError):
    """No bytes of the savepoint can be used: the message says why and what to do.
    `git_unread`: git was not asked (a check of this machine's bytes only), so git's copy may
    still serve."""

    def __init__(self, message: str, git_unread: bool = False):
        super().__init__(message)
        self.git_unread = git_unread


class Checked(Record):
    """The verifier's checks on one savepoint, and the bytes they were made on."""

    checks: dict[str, Check]
    snapshot: verdicts.Snapshot  # the snapshot bytes that hash to the value wanted
    document: bytes | chunks.Rebuilt  # the full document those bytes stand for (a chunked one rebuilt)
    from_git: bytes | None = None  # snapshot bytes only git had (the local file is missing or altered)
    chunks_from_git: list[bytes] = field(default_factory=list)  # chunks logs/ did not have


def check(
    config: Config,
    remote: GitEvidence | None,
    remote_problem: str | None,
    savepoints: list[Savepoint],
    target: Savepoint,
    unrooted: str | None,
    signer: str | None = None,
) -> Checked:
    """`target` (one of `savepoints`, an instance's from one index) across the three layers.
    `unrooted` says which index no root vouches for (None: this machine's own line, the local
    root); then only the chain, or `signer`'s signature over the line (verifier.signed), can
    make it VERIFIED."""
    locator = _Locator(config.logs, remote, {s.sequence: s for s in savepoints})
    local = locator.local(target)
    checks = {"chain": _chain(config, target, locator, unrooted is None)}
    signed_root = unrooted is not None and signed.signed_by(target, signer)
    rooted = unrooted is None or signed_root or checks["chain"].status == VERIFIED
    # The hash to hold the bytes to: this machine's record or the signed line, else what the
    # chain verified.
    own = unrooted is None or signed_root
    wanted = target.snapshot_hash if own else (checks["chain"].sha256 or target.snapshot_hash)
    commit = locator.commit_of(target) if remote is not None else None
    signed_by = signer if signed_root else None
    chain_root = checks["chain"].status == VERIFIED
    root = _root(unrooted, signed_by, chain_root)
    # git's ✓ on a hash the chain vouches for rests on the chain's word: its RPC endpoint's.
    chain_word = checks["chain"].resting_on if root == verdicts.CHAIN_ROOT else None
    checks["git"], git_bytes = _git(
        config, remote, remote_problem, target, commit, wanted, (root, chain_word), rooted, local
    )
    return _checked(
        config, remote, target, locator.by_sequence, checks, local, wanted, git_bytes, commit, unrooted, signed_by
    )


def check_recorded(config: Config, savepoints: list[Savepoint], target: Savepoint) -> Checked:
    """`target` from this machine's index, its local bytes only: no network, no git."""
    checks = {
        "chain": verdicts.recorded_chain(config.chain_layer, target),
        "git": verdicts.recorded_git(config.git_layer, target, config.remote),
    }
    local = verdicts.LocalSnapshots(config.logs).get(target)
    unrooted = None if target.written_here else NOT_WRITTEN_HERE
    key = signed.configured_key(config) if unrooted is not None else None
    signer = key if signed.signed_by(target, key) else None
    by_sequence = {s.sequence: s for s in savepoints}
    return _checked(
        config,
        None,
        target,
        by_sequence,
        checks,
        local,
        target.snapshot_hash,
        None,
        None,
        unrooted,
        signer,
        git_taken_as_recorded=True,
    )


NOT_WRITTEN_HERE = "the index in logs/ (not written by this machine: its line carries no tag of this machine's key)"


def _checked(
    config: Config,
    remote: GitEvidence | None,
    target: Savepoint,
    by_sequence: dict[int, Savepoint],
    checks: dict[str, Check],
    local: verdicts.Snapshot | None,
    wanted: str,
    git_bytes: bytes | None,
    commit: str | None,
    unrooted: str | None,
    signer: str | None = None,
    git_taken_as_recorded: bool = False,
) -> Checked:
    """`git_taken_as_recorded`: git was not read (a session start's check): a copy there that
    may serve is not ruled out, and the refusal says so."""
    local_path = config.root / target.snapshot_file
    if local is not None and local.sha256 != wanted:
        root = _root(unrooted, signer, checks["chain"].status == VERIFIED)
        checks["snapshot"] = Check(
            FAILED, f"{quoting.path(local_path)} was altered: sha256 {local.sha256[:16]}…, not {wanted[:16]}… as {root}"
        )
    if local is not None and local.sha256 == wanted:
        usable, from_git = local, None
    elif git_bytes is not None:
        usable, from_git = verdicts.read_snapshot(git_bytes, f"git commit {str(commit)[:12]}"), git_bytes
    elif local is None and target.pruned:
        where = f" as commit {str(target.commit)[:12]}" if target.commit else ""
        raise Unusable(
            f"savepoint {target.sequence} of {quoting.name(target.instance)} was pruned locally (`precompact prune`); it is in git{where}: `precompact resurrect --sequence {target.sequence}` brings it back"
        )
    else:
        problem = "is altered" if local is not None else "is missing"
        git = "git was not read here" if git_taken_as_recorded and config.git_layer else "git has no usable copy"
        raise Unusable(
            f"snapshot {quoting.path(local_path)} {problem} and {git} ({checks['git'].detail}); run `precompact verify`",
            git_unread=remote is None,
        )
    document, fetched = _document(config.logs, remote, usable, target, commit, checks)
    before = by_sequence.get(target.sequence - 1)
    checks["integrity"] = (
        signed.integrity(usable, target, before, signer)
        if signer is not None
        else verdicts.integrity(usable, target, before, unrooted, checks["chain"].status == VERIFIED)
    )
    return Checked(checks, usable, document, from_git, fetched)


def _root(unrooted: str | None, signer: str | None, chain_verified: bool) -> str:
    """The root the bytes were held to, as every verdict names it (or the index that names
    them, when no root vouches for it)."""
    if unrooted is None:
        return verdicts.LOCAL_ROOT
    if signer is not None:
        return signed.root(signer)
    return verdicts.CHAIN_ROOT if chain_verified else f"{unrooted} names (no root vouches for it)"


class _Locator:
    """Where each savepoint's snapshot bytes can be found: the local file, else git at its
    commit. Nothing here is trusted: the verifier checks whatever bytes it is handed."""

    def __init__(self, logs, remote: GitEvidence | None, by_sequence: dict[int, Savepoint]):
        self.remote = remote
        self.by_sequence = by_sequence
        self.record_commits: dict[int, str] = {}  # named by the verified on-chain record
        self.local = verdicts.LocalSnapshots(logs).get

    def commit_of(self, savepoint: Savepoint) -> str | None:
        """The signed record's commit first: the index (a copy from git, perhaps) only points."""
        if self.remote is None:
            return None
        return (
            self.record_commits.get(savepoint.sequence)
            or savepoint.commit
            or self.remote.commit_adding(savepoint.snapshot_file)
        )

    def locate(self, savepoint: Savepoint, expected: str | None) -> verdicts.Snapshot | None:
        """The bytes that hash to `expected` if any source has them, else the first found."""
        local = self.local(savepoint)
        if local is not None and local.sha256 == expected:
            return local
        commit = self.commit_of(savepoint)
        if self.remote is None or commit is None:
            return local
        [stored] = self.remote.snapshot_reads([(commit, savepoint.snapshot_file)])
        if not isinstance(stored, bytes):  # absent, or encrypted for another identity: _git says which
            return local
        from_git = verdicts.read_snapshot(stored, f"git commit {commit[:12]}")
        return from_git if local is None or from_git.sha256 == expected else local


def _chain(config: Config, target: Savepoint, locator: _Locator, local_root: bool) -> Check:
    """The chain root's verdict on `target`: the record, then the walk back to it."""
    if not config.chain_layer:
        return Check(OFF, "the chain layer is off in .precompact.toml")
    from precompact.local import savepoint_log

    # Only this machine's own index can say what was confirmed; a copy from git could lie.
    confirmed = savepoint_log.highest_confirmed(locator.by_sequence.values()) if local_root else 0
    closed = savepoint_log.read(config.logs).closing(target.instance)  # sealed by this machine's key
    roots, read = verdicts.chain_record(config, target.instance, confirmed, closed)
    if roots is None or read.record is None:
        return Check(read.status, read.detail)
    held = read.record
    if set(held.commit) != {"0"}:
        locator.record_commits[held.sequence] = held.commit
    walked = (
        verdicts.walk_back(held, roots, locator.by_sequence, target.sequence, locator.locate, read.endpoint)
        if held.sequence >= target.sequence
        else {}
    )
    return verdicts.chain_verdict(read, walked, target.sequence)


def _git(
    config: Config,
    remote: GitEvidence | None,
    remote_problem: str | None,
    target: Savepoint,
    commit: str | None,
    wanted: str,
    named: tuple[str, str | None],
    rooted: bool,
    local: verdicts.Snapshot | None,
) -> tuple[Check, bytes | None]:
    """Git's verdict (its copy is the committed one, and matches the hash `named`'s root states,
    which only a root vouches for when `rooted`; with whose word that root took, if any), and
    the snapshot's bytes from git when the local copy cannot serve."""
    root, resting_on = named

    if remote is None:
        return Check(OFF if not config.git_layer else NOT_VERIFIED, remote_problem or ""), None
    if commit is None:
        pending = Check(PENDING, f"savepoint {target.sequence} is not committed yet (Layer 2 queued)")
        return verdicts.git_rooted(pending, root if rooted else None), None
    remote = remote.of_instance(target.instance)  # the branch Layer 2 commits its savepoints to
    on_remote = remote.on_remote(commit)  # reads the remote's branch, fetching it
    if not remote.has_commit(commit):
        if remote.remote_branch.reason is not None:
            return Check(
                NOT_VERIFIED,
                f"commit {commit[:12]} is not here and the remote could not be read: {quoting.inline(remote.remote_branch.reason)}",
            ), None
        branch = remote.remote_branch
        if not branch.exists:  # no branch at all is no evidence of a rewrite (a moved project, a new machine)
            return Check(
                NOT_ON_REMOTE, f"commit {commit[:12]} is not here, and {branch.remote} has no branch {branch.branch}"
            ), None
        return Check(
            FAILED, f"commit {commit[:12]} is neither here nor on {config.remote}: history was rewritten"
        ), None
    [copy] = remote.snapshot_copies([(target, commit, local, wanted)])
    verdict = verdicts.git_copy(copy, wanted, root)
    if verdict.status != VERIFIED:
        return verdict, None
    if not rooted:
        return verdicts.git_rooted(verdict, None), copy.data
    if copy.data is not None:
        verdict = Check(VERIFIED, f"{verdict.detail} (copy restored from git)", verdict.sha256)
    held = verdicts.on_remote(commit, on_remote, remote.remote_branch, target.layer_2_failure)
    return verdicts.git_rooted(verdicts.git_verdict(verdict, held, remote.remote_branch), root, resting_on), copy.data


def _document(
    logs, remote: GitEvidence | None, found: verdicts.Snapshot, target: Savepoint, commit: str | None, checks: dict
) -> tuple[bytes | chunks.Rebuilt, list[bytes]]:
    """The full document: a chunked snapshot's chunks from logs/, else from git at `commit`,
    each checked against the hash the snapshot lists; and the chunks only git had. An altered
    local chunk fails the "chunks" check, as an altered snapshot file does."""
    altered: list[chunks.Ref] = []
    fetched: list[bytes] = []

    def fetch(ref: chunks.Ref) -> bytes | None:
        data = chunks.read_local(logs, ref)
        if verdicts.chunk_problem(ref, data, "logs/") is None:
            return data
        if data is not None:
            altered.append(ref)
        if remote is None or commit is None:
            return data
        stored = remote.chunk(commit, ref)
        if not isinstance(stored, bytes) or verdicts.chunk_problem(ref, stored, "git") is not None:
            return data
        if data is None:
            fetched.append(stored)
        return stored

    where = f"logs/{chunks.CHUNKS_DIR}/" + (f" or commit {commit[:12]}" if commit else "")
    try:
        document = verdicts.parts(found, fetch, where)
    except verdicts.Broken as e:
        raise Unusable(
            f"savepoint {target.sequence}'s conversation cannot be rebuilt: {e}; run `precompact verify`",
            git_unread=remote is None,
        ) from None
    if altered:
        checks["chunks"] = Check(
            FAILED,
            f"{len(altered)} chunk(s) in logs/{chunks.CHUNKS_DIR}/ altered (first {altered[0].sha256}): they do not hash "
            "to the names the checked snapshot lists; git's copies, which do, were used",
        )
    return document, fetched
