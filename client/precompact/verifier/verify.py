"""`precompact verify`: every savepoint checked across the three layers, in chain order, so the
first broken link is reported first. The rules are the verifier's (`trust`); this module
gathers the evidence: this machine's index (a root only for the lines this machine tagged when
it wrote each snapshot: local.provenance), the snapshot files, git at the recorded commits,
and the on-chain record, from which every savepoint it covers is walked back through the
snapshots' own bytes. A savepoint neither tagged here nor covered by the chain is reported as
not verified, whatever else agrees with it: a `logs/` that came with the project says what it
likes about itself.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path

from precompact.config.settings import Config
from precompact.local import chunks, savepoint_log
from precompact.remote import encryption, gitstore
from precompact.remote.encryption import Keys
from precompact.verifier import verdicts

NOT_WRITTEN_HERE = "not written by this machine (its index line carries no tag of this machine's key: a logs/ that came with the project, or a savepoint from before precompact kept that record)"


@dataclass(frozen=True)
class Finding:
    sequence: int | None
    layer: str
    problem: str
    instance: str | None = None

    def __str__(self) -> str:
        where = f"savepoint {self.sequence}" if self.sequence is not None else "index"
        owner = f"{self.instance} " if self.instance else ""
        return f"{owner}{where} [{self.layer}]: {self.problem}"


@dataclass
class Report:
    checked: list[int] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    chain: str = "not checked"
    # Encrypted git copies whose content no identity here could check (not failures).
    unchecked: list[Finding] = field(default_factory=list)
    # Savepoints no root vouches for: not written here, and not covered by the chain.
    unvouched: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings


def verify(config: Config, sequence: int | None = None, check_chain: bool = True) -> Report:
    """Every instance's savepoints, or only the configured instance's savepoint `sequence`."""
    report = Report()
    index = savepoint_log.read(config.logs)
    for number in index.bad_lines:
        report.findings.append(
            Finding(None, "index", f"line {number} of {savepoint_log.INDEX_NAME} does not parse (edited or torn)")
        )
    folded = savepoint_log.fold(index.events)
    repo = _repository(config, report) if config.git_layer and any(s.commit for s in folded) else None
    on_branch = gitstore.branch_commits(repo, config.branch) if repo is not None else set()
    committed = (
        [s for s in folded if s.commit and (sequence is None or s.sequence == sequence)] if repo is not None else []
    )
    names = [str(s.snapshot_file) for s in committed]
    wanted = [(str(s.commit), path) for s, name in zip(committed, names) for path in (name, gitstore.sealed_path(name))]
    found = gitstore.blob_ids_at(repo, wanted) if repo is not None and committed else []
    # Each savepoint's snapshot blob at its commit: (clear, encrypted), either may be None.
    blobs = {(s.instance, s.sequence): (found[2 * i], found[2 * i + 1]) for i, s in enumerate(committed)}
    tip = gitstore.savepoint_tip(repo, _target(config)) if repo is not None else None
    encrypted = [s for s in committed if blobs[(s.instance, s.sequence)][1] is not None]
    copies = _decrypted_hashes(repo, config, encrypted, tip) if encrypted else {}
    instances = [config.instance] if sequence is not None else list(dict.fromkeys(s.instance for s in folded))
    chunk_store = _Chunks(config.logs, repo, encryption.Keys.of(config))
    chain_verdicts = []
    for instance in instances:
        savepoints = savepoint_log.of_instance(folded, instance)
        local = verdicts.LocalSnapshots(config.logs)
        findings = []
        previous = None
        for expected, savepoint in enumerate(savepoints, start=1):
            if savepoint.sequence != expected:
                findings.append(
                    Finding(
                        expected, "index", f"missing from the index (next is {savepoint.sequence}): a line was deleted"
                    )
                )
            if sequence is None or savepoint.sequence == sequence:
                report.checked.append(savepoint.sequence)
                findings.extend(_check_local(local, savepoint, previous, chunk_store))
                if savepoint.pruned and local.get(savepoint) is None and (repo is None or not savepoint.commit):
                    findings.append(
                        Finding(
                            savepoint.sequence,
                            "layer 2",
                            "its local copy was pruned and git cannot be read to check it",
                        )
                    )
                if repo is not None and savepoint.commit:
                    problems, unchecked = _check_git(
                        repo,
                        config,
                        savepoint,
                        blobs.get((instance, savepoint.sequence), (None, None)),
                        copies.get((instance, savepoint.sequence)),
                        local.get(savepoint),
                        on_branch,
                        tip,
                        chunk_store,
                    )
                    findings.extend(problems)
                    report.unchecked.extend(Finding(f.sequence, f.layer, f.problem, instance) for f in unchecked)
            previous = savepoint
        if sequence is not None and sequence not in report.checked:
            findings.append(Finding(sequence, "index", "no such savepoint in the index"))
        vouched_by_chain: set[int] = set()
        if check_chain and config.chain_layer and savepoints:
            chain_verdicts.append(
                _check_chain(config, instance, savepoints, sequence or 1, local, findings, vouched_by_chain)
            )
        report.unvouched.extend(
            Finding(s.sequence, "layer 1", f"{NOT_WRITTEN_HERE}; {_only_chain(config, check_chain)}", instance)
            for s in savepoints
            if s.sequence in report.checked and not s.written_here and s.sequence not in vouched_by_chain
        )
        report.findings.extend(Finding(f.sequence, f.layer, f.problem, instance) for f in findings)
    if chain_verdicts:
        report.chain = "; ".join(chain_verdicts)
    return report


def verify_file(config: Config, path: Path) -> Report:
    """Checks one snapshot file against the index entry that names its hash."""
    digest = verdicts.read_snapshot(path.read_bytes(), str(path)).sha256
    for savepoint in savepoint_log.savepoints(config.logs):
        if savepoint.snapshot_hash == digest:
            return verify(replace(config, instance=savepoint.instance), sequence=savepoint.sequence)
    report = Report()
    report.findings.append(
        Finding(None, "index", f"{path} (sha256:{digest}) is not any savepoint in the index: altered or foreign")
    )
    return report


class _Chunks:
    """Each chunk checked once per run, however many savepoints list it: in logs/ (its bytes
    hash to its name), and in git (the blob at a commit is the one those bytes make, or, when
    logs/ has no intact copy, its own bytes hash to the name)."""

    def __init__(self, logs: Path, repo, keys: Keys):
        self.logs = logs
        self.repo = repo
        self.keys = keys
        self._local: dict[str, str | None] = {}  # sha256 -> problem
        self._blobs: dict[str, str] = {}  # sha256 -> the git blob id of its intact local bytes
        self._git: dict[tuple[str, str], verdicts.Check | None] = {}  # (blob id, chunk) -> None when intact

    def local_problems(self, found: verdicts.Snapshot) -> list[str]:
        problems = []
        for ref in verdicts.chunk_refs(found):
            if ref.sha256 not in self._local:
                data = chunks.read_local(self.logs, ref)
                problem = verdicts.chunk_problem(ref, data, _CHUNKS)
                self._local[ref.sha256] = problem
                if problem is None and self.repo is not None and data is not None:
                    self._blobs[ref.sha256] = gitstore.blob_id(self.repo, data)
            if self._local[ref.sha256] is not None:
                problems.append(str(self._local[ref.sha256]))
        return problems

    def git_problems(self, found: verdicts.Snapshot, commit: str, tip: str | None) -> tuple[list[str], list[str]]:
        """Problems with the chunks `found` lists at `commit`, and those whose content could not
        be read here (encrypted for identities that are not here, at `commit` and at the branch
        tip, where `precompact rekey` re-encrypts them for the identities added since)."""
        listed = verdicts.chunk_refs(found)
        blobs = gitstore.chunk_blob_ids(self.repo, [(commit, ref) for ref in listed], self.keys)
        checks = [self._verdict(ref, commit, blob) for ref, blob in zip(listed, blobs)]
        sealed = [i for i, v in enumerate(checks) if v is not None and v.status == verdicts.NOT_VERIFIED]
        if sealed and tip is not None and tip != commit:
            at_tip = gitstore.chunk_blob_ids(self.repo, [(tip, listed[i]) for i in sealed], self.keys)
            for i, blob in zip(sealed, at_tip):
                if isinstance(blob, str) and self._verdict(listed[i], tip, blob) is None:
                    checks[i] = None
        problems = [v.detail for v in checks if v is not None and v.status == verdicts.FAILED]
        unchecked = [v.detail for v in checks if v is not None and v.status == verdicts.NOT_VERIFIED]
        return problems, unchecked

    def _verdict(self, ref: chunks.Ref, commit: str, blob: str | None | gitstore.Unopened) -> verdicts.Check | None:
        """None when the chunk at `commit` (its blob `blob`) is intact."""
        if blob is None:
            return verdicts.Check(
                verdicts.FAILED, f"chunk {ref.sha256} ({ref.size} bytes) is missing from commit {commit[:12]}"
            )
        if isinstance(blob, gitstore.Unopened):
            return _unopened(blob)
        if self._blobs.get(ref.sha256) == blob:
            return None  # the blob of the intact local bytes
        # Per (blob, chunk): one blob checked as one chunk vouches for nothing about another.
        if (blob, ref.sha256) not in self._git:
            self._git[(blob, ref.sha256)] = self._read_in_git(ref, commit)
        return self._git[(blob, ref.sha256)]

    def _read_in_git(self, ref: chunks.Ref, commit: str) -> verdicts.Check | None:
        """None when the chunk's bytes at `commit` (decrypted when encrypted) are the chunk."""
        data = gitstore.chunk_at(self.repo, commit, ref, self.keys)
        if isinstance(data, gitstore.Unopened):
            return _unopened(data, f"chunk {ref.sha256}: ")
        if verdicts.chunk_problem(ref, data, f"commit {commit[:12]}") is not None:
            return verdicts.Check(
                verdicts.FAILED,
                f"chunk {ref.sha256} ({ref.size} bytes) is altered in commit {commit[:12]}: its bytes do not hash to its name",
            )
        return None


def _unopened(error: gitstore.Unopened, about: str = "") -> verdicts.Check:
    """Sealed for the identities that are not here: not checked, unless the object store's
    ciphertext no longer hashes to the committed blob, which is an alteration either way."""
    if isinstance(error, gitstore.Sealed) and error.intact:
        return verdicts.Check(verdicts.NOT_VERIFIED, str(error))
    return verdicts.Check(verdicts.FAILED, f"{about}{error}")


_CHUNKS = f"logs/{chunks.CHUNKS_DIR}/"


def _check_local(local: verdicts.LocalSnapshots, savepoint, previous, chunk_store: _Chunks) -> list[Finding]:
    """The snapshot file against the hashes this machine recorded (the local root)."""
    n = savepoint.sequence
    expected_prev = previous.snapshot_hash if previous else None
    if savepoint.prev_snapshot_hash != expected_prev:
        return [
            Finding(
                n,
                "index",
                f"prev_snapshot_hash {savepoint.prev_snapshot_hash} does not link to savepoint {n - 1} ({expected_prev})",
            )
        ]
    found = local.get(savepoint)
    if found is None and savepoint.pruned:
        return []  # removed on purpose by prune, once git held it; the git check covers it
    if found is None:
        return [
            Finding(
                n,
                "layer 1",
                f"snapshot file {savepoint.snapshot_file!r} is missing, misnamed or not a plain file in logs/",
            )
        ]
    try:
        verdicts.check_snapshot(found, n, savepoint.instance, savepoint.snapshot_hash, verdicts.LOCAL_ROOT)
        verdicts.check_link(found, n, expected_prev, f"{verdicts.LOCAL_ROOT} for savepoint {n - 1}")
    except verdicts.Broken as e:
        return [Finding(n, e.layer, str(e))]
    return [Finding(n, "layer 1", problem) for problem in chunk_store.local_problems(found)]


def _repository(config: Config, report: Report):
    try:
        return gitstore.open_repository(config.repository)
    except gitstore.GitStoreError as e:
        report.findings.append(Finding(None, "layer 2", str(e)))
        return None


def _target(config: Config) -> gitstore.Target:
    return gitstore.Target.of(config)


def _decrypted_hashes(repo, config: Config, savepoints: list, tip: str | None) -> dict:
    """(instance, sequence) -> the SHA-256 of each encrypted snapshot's plaintext, or the
    verifier's verdict on why it could not be read; one git process for all of them, and no
    plaintext kept."""
    wanted = [(str(s.commit), str(s.snapshot_file), s.sequence) for s in savepoints]
    found = {}
    for savepoint, (data, verdict) in zip(
        savepoints, verdicts.read_git_copies(repo, wanted, encryption.Keys.of(config), tip)
    ):
        digest = hashlib.sha256(data).hexdigest() if isinstance(data, bytes) else None
        found[(savepoint.instance, savepoint.sequence)] = (digest, verdict)
    return found


def _check_git(
    repo,
    config: Config,
    savepoint,
    blobs: tuple[str | None, str | None],
    decrypted: tuple[str | None, verdicts.Check | None] | None,
    local: verdicts.Snapshot | None,
    on_branch: set[str],
    tip: str | None,
    chunk_store: _Chunks,
) -> tuple[list[Finding], list[Finding]]:
    """Problems, and encrypted copies whose content was not checked. `blobs`: the ids git gives
    `snapshot_file` at the savepoint's commit, clear and encrypted (None: absent); `decrypted`:
    the encrypted one's plaintext hash or verdict (_decrypted_hashes)."""
    n, commit = savepoint.sequence, savepoint.commit
    name = savepoint.snapshot_file
    clear, sealed = blobs
    if clear is None and sealed is None:
        return [
            Finding(
                n,
                "layer 2",
                f"commit {commit} (or {name} in it) is gone from {config.repository}: history was rewritten",
            )
        ], []
    unchecked = []
    # When the local file holds the recorded bytes, git holds the same bytes iff it has the same blob id.
    stored = None
    if sealed is not None and decrypted is not None:
        digest, verdict = decrypted
    elif clear is not None and local is not None and local.sha256 == savepoint.snapshot_hash:
        digest, verdict = (savepoint.snapshot_hash if clear == gitstore.blob_id(repo, local.data) else None), None
    else:
        stored, verdict = verdicts.read_git_copy(repo, commit, name, encryption.Keys.of(config), n, rekeyed=tip)
        digest = hashlib.sha256(stored).hexdigest() if stored is not None else None
    if verdict is not None and verdict.status == verdicts.FAILED:
        return [Finding(n, "layer 2", verdict.detail)], []
    if verdict is not None:
        unchecked.append(Finding(n, "layer 2", verdict.detail))
    intact = verdict is not None or digest == savepoint.snapshot_hash
    if not intact:
        return [
            Finding(
                n,
                "layer 2",
                f"{name} at commit {commit[:12]} does not hash to the sha256:{savepoint.snapshot_hash} {verdicts.LOCAL_ROOT}",
            )
        ], []
    if commit not in on_branch:
        return [
            Finding(n, "layer 2", f"commit {commit[:12]} is no longer on branch {config.branch}: history was rewritten")
        ], []
    if verdict is not None:  # its content could not be read here, nor the chunks it lists
        return [], unchecked
    if local is not None and local.sha256 == savepoint.snapshot_hash:
        committed = local
    else:
        if stored is None:
            stored, _ = verdicts.read_git_copy(repo, commit, name, encryption.Keys.of(config), n, rekeyed=tip)
        if stored is None:
            return [Finding(n, "layer 2", f"{name} at commit {commit[:12]} could not be read again")], unchecked
        committed = verdicts.read_snapshot(stored, "git")
    problems, chunks_unchecked = chunk_store.git_problems(committed, commit, tip)
    unchecked += [Finding(n, "layer 2", detail) for detail in chunks_unchecked]
    return [Finding(n, "layer 2", problem) for problem in problems], unchecked


def _only_chain(config: Config, check_chain: bool) -> str:
    if not config.chain_layer:
        return "only the on-chain record could vouch for it, and the chain layer is off in .precompact.toml"
    if not check_chain:
        return "only the on-chain record could vouch for it, and it was not read"
    return "only the on-chain record could vouch for it, and it does not cover it"


def _check_chain(
    config: Config,
    instance: str,
    savepoints: list,
    down_to: int,
    local: verdicts.LocalSnapshots,
    findings: list[Finding],
    vouched: set[int],
) -> str:
    """The chain's verdict in words; the savepoints it verified are added to `vouched`."""
    from precompact.chain import rpc

    try:
        roots = verdicts.roots(config.program_id, config.authority, config.keypair, instance)
    except verdicts.NoRoot as e:
        return f"not verified ({e})"
    # Only this machine's own lines can say what was confirmed; a copied index could claim anything.
    confirmed = savepoint_log.highest_confirmed(s for s in savepoints if s.written_here)
    read = verdicts.read_record(roots, rpc.Cluster(config.cluster, timeout=rpc.DEFAULT_TIMEOUT_SECONDS), confirmed)
    if read.status == verdicts.FAILED:
        findings.append(Finding(read.sequence, "layer 3", read.detail))
        return "failed"
    if read.record is None:
        return f"not verified ({read.detail})"
    held = read.record
    by_sequence = {s.sequence: s for s in savepoints}
    newest = by_sequence.get(held.sequence)
    if newest is None:
        findings.append(Finding(held.sequence, "layer 3", "the chain holds a savepoint the local index does not have"))
        return "failed"
    try:
        verdicts.check_record_holds(held, newest, newest.commit)
    except verdicts.Broken as e:
        findings.append(Finding(e.sequence, e.layer, str(e)))
        return "failed"
    walked = verdicts.walk_back(
        held, roots, by_sequence, min(down_to, held.sequence), lambda savepoint, expected: local.get(savepoint)
    )
    findings.extend(
        Finding(n, "layer 3", check.detail) for n, check in sorted(walked.items()) if check.status == verdicts.FAILED
    )
    vouched.update(n for n, check in walked.items() if check.status == verdicts.VERIFIED)
    covered = sum(check.status == verdicts.VERIFIED for check in walked.values())
    return f"record at sequence {held.sequence} verified (authority, instance, address, signature), {covered} savepoint(s) linked to it; its unsigned fields (slot, chain_timestamp, metadata) are reported, not verified{_rotations(config, instance, held)}"


def _rotations(config: Config, instance: str, held) -> str:
    """The key rotations the lineage went through, as the record states it (while it still holds
    the savepoint carried over) or this machine's index recorded them: a lineage continued
    without the old key's signature is said, never passed over."""
    said = verdicts.continuation(held)
    for rotation in savepoint_log.rotations(savepoint_log.read(config.logs).events, instance):
        if rotation.sequence == held.sequence and said:
            continue
        how = (
            "continued without the old key's signature (recovery)"
            if rotation.recovered
            else "rotated with both keys' signatures"
        )
        said += f"; after savepoint {rotation.sequence} the lineage moved from {rotation.old_authority} to {rotation.new_authority}: {how}"
    return said
