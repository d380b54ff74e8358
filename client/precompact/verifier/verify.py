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

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from precompact.boundary import quoting
from precompact.config.settings import Config
from precompact.local import chunks, savepoint_log, snapshot
from precompact.verifier import signed, team, verdicts
from precompact.verifier.evidence import GitCopy, GitEvidence, RemoteBranch

if TYPE_CHECKING:
    from precompact.remote import gitstore

NOT_WRITTEN_HERE = "not written by this machine (its index line carries no tag of this machine's key: a logs/ that came with the project, or a savepoint from before precompact kept that record)"


@dataclass(frozen=True)
class Finding:
    sequence: int | None
    layer: str
    problem: str
    instance: str | None = None

    def __str__(self) -> str:
        where = f"savepoint {self.sequence}" if self.sequence is not None else "index"
        owner = f"{quoting.name(self.instance)} " if self.instance else ""
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
    # Each savepoint checked, by (instance, sequence): the verifier's verdict per layer.
    layers: dict[tuple[str, int], dict[str, verdicts.Check]] = field(default_factory=dict)
    # The snapshots the savepoint branch holds that logs/ lacks, and what logs/ holds that it lacks.
    lacking: Lacking = field(default_factory=lambda: Lacking([], []))
    # Each on-chain record that holds savepoints past the last one logs/ has, said.
    chain_ahead: list[str] = field(default_factory=list)
    # The configured instance's branch as the remote stated it in this run (None: git not read).
    remote: RemoteBranch | None = None
    # The verdict on a run that had no savepoint to check (None: it had some).
    nothing_held: verdicts.Check | None = None
    # The savepoints hooks queued (the index busy) that logs/ does not hold yet, said (None: none).
    queued: str | None = None
    # The lines of this project's branch still signed by this machine's previous key, every check
    # holding, queued for the flush here that re-signs them, said (None: none).
    resign: str | None = None
    # The savepoint each instance's on-chain record holds, as read and verified in this run
    # (signature, authority, instance, address): `verify --ledger` holds the history to it.
    records: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.findings

    def verdicts_of(self, instance: str, sequence: int) -> dict[str, verdicts.Check]:
        """The verdict on each layer of one savepoint (not verified when this run did not check it)."""
        return self.layers.get((instance, sequence)) or not_run(f"savepoint {sequence} was not checked in this run")

    @property
    def verdict(self) -> verdicts.Check:
        """The one verdict on the run: FAILED at the first broken link, VERIFIED only when every
        layer the configuration asks for holds every savepoint checked."""
        named = {f"{quoting.name(instance)} savepoint {n}": layers for (instance, n), layers in self.layers.items()}
        found = verdicts.headline(named, str(self.findings[0]) if self.findings else None)
        if found.status == verdicts.FAILED:
            return found
        if self.lacking_said is not None:
            return verdicts.Check(
                verdicts.NOT_VERIFIED, f"{self.lacking_said}; {found.detail}" if named else self.lacking_said
            )
        return self.nothing_held or found

    @property
    def lacking_said(self) -> str | None:
        """What to say of the savepoints the remote or the chain holds that logs/ lacks, and of
        those still queued here, not written yet or not re-signed yet (None: it lacks none)."""
        said = [self.lacking.notice] if self.lacking.notice else []
        queued = [said for said in (self.queued, self.resign) if said]
        return "; ".join([*said, *self.chain_ahead, *queued]) or None


@dataclass(frozen=True)
class Lacking:
    """The snapshot files the configured instance's savepoint branch holds that logs/ lacks
    (`names`), and the instance's savepoints logs/ holds that the branch lacks (`only_here`):
    with both, two chains that `precompact restore` keeps apart."""

    names: list[str]
    only_here: list[savepoint_log.Savepoint]
    # The snapshot files the branch holds altered since Layer 2 committed them
    # (gitstore.BranchSnapshots.altered): not lacking, and said apart.
    altered: list[str] = field(default_factory=list)

    @property
    def notice(self) -> str | None:
        """What every command says of them (None: logs/ lacks none, and none is altered)."""
        said = [savepoint_log.lacking_notice(len(self.names), self.only_here)] if self.names else []
        if self.altered:
            files = ", ".join(quoting.path(name) for name in self.altered)
            said.append(
                f"the savepoint branch holds {len(self.altered)} snapshot(s) with other content than Layer 2 "
                f"committed ({files}): someone who can push altered them; `precompact verify` names them, and the "
                "next savepoint's push puts logs/'s intact copies back"
            )
        return "; ".join(said) or None


def not_run(why: str) -> dict[str, verdicts.Check]:
    """Each layer's verdict when the verifier did not check a savepoint: not verified, and why."""
    return dict.fromkeys((verdicts.SNAPSHOT, verdicts.GIT, verdicts.CHAIN), verdicts.Check(verdicts.NOT_VERIFIED, why))


def verify(config: Config, sequence: int | None = None, check_chain: bool = True) -> Report:
    """Every instance's savepoints, or only the configured instance's savepoint `sequence`."""
    report = Report()
    index = savepoint_log.read(config.logs)
    for number in index.bad_lines:
        report.findings.append(
            Finding(None, "index", f"line {number} of {savepoint_log.INDEX_NAME} does not parse (edited or torn)")
        )
    folded = index.savepoints
    for recreated in (s for s in folded if s.recreated):
        report.findings.append(
            Finding(recreated.sequence, "index", savepoint_log.recreated_notice(recreated), recreated.instance)
        )
    remote, problem = GitEvidence.of(config) if config.git_layer else (None, None)
    if problem is not None:
        report.findings.append(Finding(None, "layer 2", problem))
    if remote is not None:
        # The remote, not logs/, says what there is to verify: its branch is fetched first, so
        # what logs/ lacks is read against it, and a store without the branch can read its commits.
        report.remote = remote.remote_branch
    run = _Run(config, report, verdicts.LocalSnapshots(config.logs), remote, _Chunks(config.logs, remote))
    run.signer = signed.configured_key(config)
    run.remote_index = _remote_index(remote)
    report.lacking = lacking(config, folded)
    report.queued = snapshot.queued_notice(config.logs)
    report.unvouched.extend(_lacking(report.remote.branch if report.remote else config.branch, report.lacking))
    committed = [s for s in folded if s.commit and (sequence is None or s.sequence == sequence)] if remote else []
    if remote is not None and committed:
        wanted = [(s, str(s.commit), run.local.get(s), s.snapshot_hash) for s in committed]
        run.copies = dict(zip([(s.instance, s.sequence) for s in committed], remote.snapshot_copies(wanted)))
        _locate_chunks(run, committed)
    # The configured instance always: its record may hold savepoints logs/ lacks.
    instances = list(dict.fromkeys([*(s.instance for s in folded if sequence is None), config.instance]))
    chain_reads = {
        instance: _check_instance(run, instance, savepoint_log.of_instance(folded, instance), sequence, check_chain)
        for instance in instances
    }
    if any(said for said, _ in chain_reads.values()):
        report.chain = "; ".join(said for said, _ in chain_reads.values() if said)
    if not report.layers:
        report.nothing_held = _nothing_held(config, report.remote, chain_reads[config.instance][1])
    if remote is not None and remote.remote_branch.exists:  # fetched: its tip is the remote's
        keys = team.your_keys(config, run.signer)
        pushed = savepoint_log.of_instance(folded, config.instance)
        branch = team.own_branch_problem(
            remote.repo, remote.target, config.instance, keys, pushed, remote.index_at_remote_tip
        )
        if branch is not None and branch.status == verdicts.FAILED:
            report.findings.append(Finding(None, "layer 2", branch.detail, config.instance))
        elif branch is not None:
            report.resign = branch.detail
    return report


def _nothing_held(config: Config, remote: RemoteBranch | None, chain: verdicts.ChainRead | None) -> verdicts.Check:
    """The verdict on a run with no savepoint to check, from what the remote's branch and the
    on-chain record said: nothing to verify only when each layer asked for was read (what holds
    savepoints logs/ lacks is said before this is)."""
    read, unread = ["the index holds no savepoint"], []
    if not config.git_layer:
        read.append("git off")
    elif remote is None or remote.reason is not None:
        unread.append(
            f"{config.remote} could not be read: {quoting.inline(remote.reason) if remote and remote.reason else 'the repository did not open'}"
        )
    else:
        read.append(f"{remote.remote}'s {remote.branch} " + ("holds none" if remote.exists else "does not exist"))
    if not config.chain_layer:
        read.append("chain off")
    elif chain is None:
        unread.append("the on-chain record was not read")
    elif chain.status == verdicts.PENDING:
        read.append(chain.detail)
    else:
        unread.append(f"the on-chain record: {chain.detail}")
    if unread:
        return verdicts.Check(
            verdicts.NOT_VERIFIED,
            f"logs/ holds no savepoint, and whether the others do is not known: {'; '.join(unread)}",
        )
    return verdicts.Check(verdicts.VERIFIED, f"nothing to verify: {', '.join(read)}")


@dataclass
class _Run:
    """The evidence one `verify` gathers, each piece once, and the report it fills."""

    config: Config
    report: Report
    local: verdicts.LocalSnapshots
    remote: GitEvidence | None
    chunk_store: _Chunks
    copies: dict[tuple[str, int], GitCopy] = field(default_factory=dict)
    layer_2: dict[tuple[str, int], verdicts.Check] = field(default_factory=dict)  # git's verdict per savepoint
    signer: str | None = None  # the public key whose signatures are a root (verifier.signed)
    # The index copy at the remote's branch tip, as `restore` reads it there (None: not read).
    remote_index: RemoteIndex | None = None
    # What makes a flush here sign with `signer` (verifier.signed.signing_fix), said once a run.
    signing_fix: str | None = None


@dataclass(frozen=True)
class RemoteIndex:
    """The savepoints the index copy at the remote's branch tip holds, and where that is."""

    where: str
    savepoints: dict[tuple[str, int], savepoint_log.Savepoint]


def _remote_index(remote: GitEvidence | None) -> RemoteIndex | None:
    """The index copy at the tip of the remote's branch as fetched in this run; None when there
    is none that reads (a copy that is not a readable index is `team.own_branch_problem`'s to
    judge, FAILED; one encrypted to identities not here, the git verdicts')."""
    if remote is None:
        return None
    read = remote.index_at_remote_tip
    if read is None or not team.readable_here(read[1]):
        return None
    tip, copy = read
    parsed = team.parsed_copy(copy)
    if isinstance(parsed, str):
        return None
    where = f"the index copy on {remote.remote_branch.remote}'s {remote.remote_branch.branch} at {tip[:12]}"
    return RemoteIndex(where, {(s.instance, s.sequence): s for s in parsed.savepoints})


def _check_instance(
    run: _Run, instance: str, savepoints: list[savepoint_log.Savepoint], sequence: int | None, check_chain: bool
) -> tuple[str | None, verdicts.ChainRead | None]:
    """Adds an instance's findings to the report; returns the chain's verdict in words and the
    record as read (None, None when the chain was not read)."""
    report, config = run.report, run.config
    findings = []
    previous = None
    for expected, savepoint in enumerate(savepoints, start=1):
        if savepoint.sequence != expected:
            findings.append(
                Finding(expected, "index", f"missing from the index (next is {savepoint.sequence}): a line was deleted")
            )
        if sequence is None or savepoint.sequence == sequence:
            report.checked.append(savepoint.sequence)
            findings.extend(_check_savepoint(run, instance, savepoint, previous))
        previous = savepoint
    if sequence is not None and sequence not in report.checked:
        findings.append(Finding(sequence, "index", "no such savepoint in the index"))
    chain_checks: dict[int, verdicts.Check] = {}
    chain, read = None, None
    if check_chain and config.chain_layer:
        chain, read = _check_chain(config, instance, savepoints, sequence or 1, run.local, findings, chain_checks)
        held, last = (read.record.sequence if read.record else 0), max((s.sequence for s in savepoints), default=0)
        if read.status == verdicts.VERIFIED and held:
            report.records[instance] = held
        if held > last:
            # The branch's savepoints logs/ lacks are counted for the configured instance alone.
            only_here = report.lacking.only_here if instance == config.instance else []
            report.chain_ahead.append(savepoint_log.chain_ahead_notice(instance, held, last, only_here))
    vouched_by_chain = {n for n, check in chain_checks.items() if check.status == verdicts.VERIFIED}
    unvouched = [
        Finding(s.sequence, "layer 1", f"{NOT_WRITTEN_HERE}; {_only_chain(config, check_chain)}", instance)
        for s in savepoints
        if s.sequence in report.checked
        and not s.written_here
        and s.sequence not in vouched_by_chain
        and not signed.signed_by(s, run.signer)
    ]
    report.unvouched.extend(unvouched)
    findings.extend(
        Finding(
            s.sequence,
            "index",
            f"its signature by {run.signer} does not verify: the index line or the signature was altered",
        )
        for s in savepoints
        if s.sequence in report.checked and run.signer is not None and signed.refuted(s, run.signer)
    )
    summaries = {
        s.sequence: check
        for s in savepoints
        if (sequence is None or s.sequence == sequence) and (check := _summary(run, instance, s)) is not None
    }
    findings.extend(
        Finding(n, verdicts.SUMMARY, check.detail) for n, check in summaries.items() if check.status == verdicts.FAILED
    )
    report.findings.extend(Finding(f.sequence, f.layer, f.problem, instance) for f in findings)
    for s in savepoints:
        if sequence is None or s.sequence == sequence:
            layers = _layers(run, instance, s, findings, unvouched, chain_checks, check_chain)
            if s.sequence in summaries:
                layers[verdicts.SUMMARY] = summaries[s.sequence]
            report.layers[(instance, s.sequence)] = layers
    return chain, read


def _summary(run: _Run, instance: str, savepoint: savepoint_log.Savepoint) -> verdicts.Check | None:
    """The verdict on the savepoint's compaction summary, held to the configured key as `restore`
    holds it (verifier.signed.summary_verdict), in logs/ and in the index copy at the remote's
    tip, where that holds the same savepoint: FAILED where either fails; VERIFIED only when each
    that holds the savepoint holds the same summary, signed (a signed one the remote does not
    hold yet waits for the next flush; one only the remote holds, for `restore`). None when
    neither holds a summary or a summary signature."""
    if run.signing_fix is None:
        run.signing_fix = signed.signing_fix(run.config, run.signer)
    here = signed.summary_verdict(savepoint, run.signer, run.signing_fix)
    index = run.remote_index
    copy = index.savepoints.get((instance, savepoint.sequence)) if index is not None else None
    if index is None or copy is None or copy.snapshot_hash != savepoint.snapshot_hash:
        return None if here is None else _said(here, "in logs/")
    there = signed.summary_verdict(copy, run.signer, None)
    if here is None and there is None:
        return None
    for check, where in ((here, "in logs/"), (there, index.where)):
        if check is not None and check.status == verdicts.FAILED:
            return _said(check, where)
    if here is None:
        assert there is not None
        if there.status == verdicts.VERIFIED:
            return verdicts.Check(
                verdicts.NOT_VERIFIED,
                f"logs/ lacks the compaction summary {index.where} holds, signed: `precompact restore` brings it back",
            )
        return _said(there, index.where)
    if here.status != verdicts.VERIFIED:
        return _said(here, "in logs/")
    if there is None:
        return verdicts.Check(
            verdicts.NOT_VERIFIED,
            f"compaction summary signed in logs/; {index.where} holds its savepoint without it: the next flush pushes it (`precompact flush`)",
        )
    if there.status != verdicts.VERIFIED:
        return _said(there, index.where)
    if there.sha256 != here.sha256:
        return verdicts.Check(
            verdicts.NOT_VERIFIED,
            f"{index.where} holds another signed compaction summary of it than logs/: the next flush pushes logs/' (`precompact flush`)",
        )
    return verdicts.Check(verdicts.VERIFIED, f"{here.detail}, in logs/ and in {index.where}", here.sha256)


def _said(check: verdicts.Check, where: str) -> verdicts.Check:
    """`check` with where it was made (logs/, or the remote's index copy) before its words."""
    return verdicts.Check(check.status, f"{where}: {check.detail}", check.sha256)


def _layers(
    run: _Run,
    instance: str,
    savepoint: savepoint_log.Savepoint,
    findings: list[Finding],
    unvouched: list[Finding],
    chain_checks: dict[int, verdicts.Check],
    check_chain: bool,
) -> dict[str, verdicts.Check]:
    """The verifier's verdict on each layer of one savepoint checked: the first finding about it
    on that layer, else what its checks found."""
    config, n = run.config, savepoint.sequence

    def failed(*layers: str) -> verdicts.Check | None:
        found = next((f for f in findings if f.sequence == n and f.layer in layers), None)
        return None if found is None else verdicts.Check(verdicts.FAILED, found.problem)

    snapshot = failed("index", "layer 1", "hash chain") or verdicts.snapshot_verdict(
        savepoint,
        next((f.problem for f in unvouched if f.sequence == n), None),
        run.local.get(savepoint) is not None,
        chain_checks.get(n),
        signed.root(run.signer) if run.signer is not None and signed.signed_by(savepoint, run.signer) else None,
    )
    chain_check = chain_checks.get(n)
    root = _root(run, savepoint, chain_check)
    git = failed("layer 2") or verdicts.git_rooted(
        verdicts.unread_git(config.git_layer, savepoint, run.layer_2.get((instance, n)), run.remote is not None),
        root,
        chain_check.resting_on if chain_check is not None and root == verdicts.CHAIN_ROOT else None,
    )
    if not config.chain_layer:
        chain = verdicts.Check(verdicts.OFF, "the chain layer is off in .precompact.toml")
    elif not check_chain:
        chain = verdicts.Check(verdicts.NOT_VERIFIED, "the on-chain record was not read")
    else:
        chain = failed("layer 3") or chain_checks[n]
    return {verdicts.SNAPSHOT: snapshot, verdicts.GIT: git, verdicts.CHAIN: chain}


def _check_savepoint(
    run: _Run, instance: str, savepoint: savepoint_log.Savepoint, previous: savepoint_log.Savepoint | None
) -> list[Finding]:
    """One savepoint's local bytes and git copy; encrypted copies not checked go to the report."""
    findings = _check_local(run.local, savepoint, previous, run.chunk_store)
    if savepoint.pruned and run.local.get(savepoint) is None and (run.remote is None or not savepoint.commit):
        findings.append(
            Finding(savepoint.sequence, "layer 2", "its local copy was pruned and git cannot be read to check it")
        )
    copy = run.copies.get((instance, savepoint.sequence))
    if run.remote is not None and copy is not None:
        own = run.remote.of_instance(instance)
        # The hash git's copy is held to, named by its root where one is known before the chain is read.
        root = _root(run, savepoint, None) or "its index line in logs/ names (no root vouches for it)"
        problems, unchecked, verdict = _check_git(own, savepoint, copy, run.local.get(savepoint), run.chunk_store, root)
        findings.extend(problems)
        run.report.unchecked.extend(Finding(f.sequence, f.layer, f.problem, instance) for f in unchecked)
        run.layer_2[(instance, savepoint.sequence)] = verdict
    return findings


def _root(run: _Run, savepoint: savepoint_log.Savepoint, chain: verdicts.Check | None) -> str | None:
    """The root that vouches for the savepoint's hash, as verdicts name it: this machine's
    record, the configured key's signature over its index line, or the chain's walk (`chain`,
    its verdict on the savepoint); None when none does."""
    if savepoint.written_here:
        return verdicts.LOCAL_ROOT
    if run.signer is not None and signed.signed_by(savepoint, run.signer):
        return signed.root(run.signer)
    if chain is not None and chain.status == verdicts.VERIFIED and chain.sha256 == savepoint.snapshot_hash:
        return verdicts.CHAIN_ROOT
    return None


def _locate_chunks(run: _Run, committed: list[savepoint_log.Savepoint]) -> None:
    """Where git holds the chunks each committed snapshot lists, found for every savepoint at
    once (`_check_git` then checks each chunk per savepoint). Only for copies the local bytes
    stand for: any other is read from git's own copy when it is checked."""
    assert run.remote is not None
    wanted: dict[str, list] = {}
    for s in committed:
        copy, local = run.copies.get((s.instance, s.sequence)), run.local.get(s)
        if copy is not None and copy.data is None and local is not None:
            wanted.setdefault(s.instance, []).extend((copy.commit, ref) for ref in verdicts.chunk_refs(local))
    for instance, pairs in wanted.items():
        run.remote.of_instance(instance).locate_chunks(pairs)


def _lacking(branch: str, lacking: Lacking) -> list[Finding]:
    """A finding for each savepoint the savepoint branch holds (here, or as fetched in this run)
    that logs/ lacks: a verify of logs/ alone would pass over them."""
    step = (
        "logs/ holds another chain of its instance (the headline says how to keep both)"
        if lacking.only_here
        else "run `precompact restore`"
    )
    here = {s.snapshot_file for s in lacking.only_here}  # the same name, with logs/'s own content
    return [
        Finding(
            None,
            "layer 2",
            f"{name} is on branch {branch} {'with other content than the file of that name in logs/' if name in here else 'but not in logs/'}: {step}",
        )
        for name in lacking.names
    ]


def lacking(config: Config, folded: list[savepoint_log.Savepoint]) -> Lacking:
    """The snapshot files the savepoint branch holds, here or as last fetched from the remote
    (refs only: no network), whose content the index in logs/ does not name (one it names with
    other content counts: `gitstore.branch_snapshots`), but for those another key
    signed (one saving under this instance's name: `restore` never brings them back, so sending
    the user to it would loop); with some, the instance's savepoints logs/ holds that the branch
    lacks (restore keeps those apart: it would loop too)."""
    from precompact.remote import gitstore

    if not config.git_layer:
        return Lacking([], [])
    try:
        target = gitstore.Target.of(config)
        repo = gitstore.open_repository(target)
        branch = gitstore.branch_snapshots(repo, target, folded)
        missing = set(branch.lacking)
        if missing:
            missing -= team.others_snapshots(
                repo, target, missing, team.your_keys(config, signed.configured_key(config))
            )
    except gitstore.GitStoreError:
        return Lacking([], [])
    only_here = [s for s in savepoint_log.of_instance(folded, config.instance) if s.snapshot_file not in branch.held]
    return Lacking(sorted(missing), only_here if missing else [], sorted(branch.altered))


def verify_file(config: Config, path: Path) -> Report:
    """Checks one snapshot file against the index entry that names its hash."""
    digest = verdicts.read_snapshot(path.read_bytes(), str(path)).sha256
    for savepoint in savepoint_log.savepoints(config.logs):
        if savepoint.snapshot_hash == digest:
            return verify(config.replace(instance=savepoint.instance), sequence=savepoint.sequence)
    report = Report()
    report.findings.append(
        Finding(None, "index", f"{path} (sha256:{digest}) is not any savepoint in the index: altered or foreign")
    )
    return report


class _Chunks:
    """Each chunk checked once per run, however many savepoints list it: in logs/ (its bytes
    hash to its name), and in git (the blob at a commit is the one those bytes make, or, when
    logs/ has no intact copy, its own bytes hash to the name)."""

    def __init__(self, logs: Path, remote: GitEvidence | None):
        self.logs = logs
        self.remote = remote
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
                if problem is None and self.remote is not None and data is not None:
                    self._blobs[ref.sha256] = self.remote.blob_id(data)
            if self._local[ref.sha256] is not None:
                problems.append(str(self._local[ref.sha256]))
        return problems

    def git_problems(self, remote: GitEvidence, found: verdicts.Snapshot, commit: str) -> tuple[list[str], list[str]]:
        """Problems with the chunks `found` lists at `commit`, and those whose content could not
        be read here (encrypted for identities that are not here)."""
        listed = verdicts.chunk_refs(found)
        checks = [
            self._verdict(remote, ref, commit, blob) for ref, blob in zip(listed, remote.chunk_blobs(commit, listed))
        ]
        problems = [v.detail for v in checks if v is not None and v.status == verdicts.FAILED]
        unchecked = [v.detail for v in checks if v is not None and v.status == verdicts.NOT_VERIFIED]
        return problems, unchecked

    def _verdict(
        self, remote: GitEvidence, ref: chunks.Ref, commit: str, blob: str | None | gitstore.Unopened
    ) -> verdicts.Check | None:
        """None when the chunk at `commit` (its blob `blob`) is intact."""
        if blob is None:
            return verdicts.chunk_in_git(ref, commit, None)
        if isinstance(blob, str) and self._blobs.get(ref.sha256) == blob:
            return None  # the blob of the intact local bytes
        # Per (blob, chunk): one blob checked as one chunk vouches for nothing about another.
        # A blob the naming key here cannot locate is read (from the rekeyed tip, if need be).
        key = (blob if isinstance(blob, str) else f"{commit}:unlocated", ref.sha256)
        if key not in self._git:
            self._git[key] = verdicts.chunk_in_git(ref, commit, remote.chunk(commit, ref))
        return self._git[key]


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
                f"snapshot file {quoting.path(savepoint.snapshot_file)} is missing, misnamed or not a plain file in logs/",
            )
        ]
    try:
        verdicts.check_local_root(found, savepoint)
    except verdicts.Broken as e:
        return [Finding(n, e.layer, str(e))]
    return [Finding(n, "layer 1", problem) for problem in chunk_store.local_problems(found)]


def _check_git(
    remote: GitEvidence,
    savepoint: savepoint_log.Savepoint,
    copy: GitCopy,
    local: verdicts.Snapshot | None,
    chunk_store: _Chunks,
    root: str,
) -> tuple[list[Finding], list[Finding], verdicts.Check]:
    """Problems, encrypted copies whose content was not checked, and Layer 2's verdict: the
    verifier's verdict on git's copy (held to the savepoint's hash, which `root` states), the
    commit's place on the branch and on the remote, and the chunks the committed snapshot lists.
    Which root vouches for that hash is the caller's to add (verdicts.git_rooted)."""
    n = savepoint.sequence

    def found(check: verdicts.Check) -> list[Finding]:
        return [Finding(n, "layer 2", check.detail)]

    # First: a commit not on its branch is not in the store either, and git_copy would only
    # say the commit does not hold the file.
    moved = verdicts.on_branch(copy.commit, remote.on_branch, remote.remote_branch)
    if moved is not None:
        return (found(moved) if moved.status == verdicts.FAILED else []), [], moved
    verdict = verdicts.git_copy(copy, savepoint.snapshot_hash, root)
    if verdict.status == verdicts.FAILED:
        return found(verdict), [], verdict
    held = verdicts.on_remote(
        copy.commit, remote.on_remote(copy.commit), remote.remote_branch, savepoint.layer_2_failure
    )
    layer_2 = verdicts.git_verdict(verdict, held, remote.remote_branch)
    if verdict.status == verdicts.NOT_VERIFIED:  # its content could not be read here, nor the chunks it lists
        return [], found(verdict), layer_2
    committed = verdicts.read_snapshot(copy.data, "git") if copy.data is not None else local
    if committed is None:
        unread = verdicts.Check(
            verdicts.FAILED, f"{quoting.path(copy.snapshot_file)} at commit {copy.commit[:12]} could not be read"
        )
        return found(unread), [], unread
    problems, unchecked = chunk_store.git_problems(remote, committed, copy.commit)
    if unchecked and layer_2.status == verdicts.VERIFIED:
        layer_2 = verdicts.Check(verdicts.NOT_VERIFIED, f"{len(unchecked)} chunk(s) not checked: {unchecked[0]}")
    return [Finding(n, "layer 2", p) for p in problems], [Finding(n, "layer 2", u) for u in unchecked], layer_2


def _only_chain(config: Config, check_chain: bool) -> str:
    unsigned = "the configured key did not sign its index line"
    if not config.chain_layer:
        return f"{unsigned}, and the chain layer is off in .precompact.toml"
    if not check_chain:
        return f"{unsigned}, and the on-chain record was not read"
    return f"{unsigned}, and the on-chain record does not cover it"


def _check_chain(
    config: Config,
    instance: str,
    savepoints: list,
    down_to: int,
    local: verdicts.LocalSnapshots,
    findings: list[Finding],
    checks: dict[int, verdicts.Check],
) -> tuple[str, verdicts.ChainRead]:
    """The chain's verdict in words, and the record as read; its verdict on each savepoint goes
    into `checks`."""
    # Only this machine's own lines can say what was confirmed; a copied index could claim anything.
    confirmed = savepoint_log.highest_confirmed(s for s in savepoints if s.written_here)
    closed = savepoint_log.read(config.logs).closing(instance)
    roots, read = verdicts.chain_record(config, instance, confirmed, closed)
    said, walked = _walk_chain(config, instance, savepoints, down_to, local, findings, roots, read)
    checks.update({s.sequence: verdicts.chain_verdict(read, walked, s.sequence) for s in savepoints})
    return said, read


def _walk_chain(
    config: Config,
    instance: str,
    savepoints: list,
    down_to: int,
    local: verdicts.LocalSnapshots,
    findings: list[Finding],
    roots: verdicts.Roots | None,
    read: verdicts.ChainRead,
) -> tuple[str, dict[int, verdicts.Check]]:
    """The record read, in words, and the walk back from it (empty when there is none to walk)."""
    if read.status == verdicts.FAILED:
        findings.append(Finding(read.sequence, "layer 3", read.detail))
        return "failed", {}
    if roots is None or read.record is None:
        return f"{read.status} ({read.detail})", {}
    held = read.record
    by_sequence = {s.sequence: s for s in savepoints}
    newest = by_sequence.get(held.sequence)
    if newest is None and held.sequence > max(by_sequence, default=0):
        # Past the last savepoint in logs/: savepoints logs/ lacks (`precompact restore`), said by the caller.
        return (
            f"record at sequence {held.sequence} verified (authority, instance, address, signature), {verdicts.reported_by(read.endpoint)}; logs/ lacks it",
            {},
        )
    if newest is None:
        findings.append(Finding(held.sequence, "layer 3", "the chain holds a savepoint the local index does not have"))
        return "failed", {}
    try:
        verdicts.check_record_holds(held, newest, newest.commit)
    except verdicts.Broken as e:
        findings.append(Finding(e.sequence, e.layer, str(e)))
        return "failed", {}
    walked = verdicts.walk_back(
        held,
        roots,
        by_sequence,
        min(down_to, held.sequence),
        lambda savepoint, expected: local.get(savepoint),
        read.endpoint,
    )
    findings.extend(
        Finding(n, "layer 3", check.detail) for n, check in sorted(walked.items()) if check.status == verdicts.FAILED
    )
    covered = sum(check.status == verdicts.VERIFIED for check in walked.values())
    return (
        f"record at sequence {held.sequence} verified (authority, instance, address, signature), {verdicts.reported_by(read.endpoint)}; {covered} savepoint(s) linked to it; its unsigned fields (slot, chain_timestamp, metadata) are reported, not verified{_rotations(config, instance, held)}",
        walked,
    )


def _rotations(config: Config, instance: str, held) -> str:
    """The key rotations the lineage went through, as the record states it (while it still holds
    the savepoint carried over) or this machine's index recorded them (sealed: a line that is not
    is said as ignored, never repeated): a lineage continued without the old key's signature is
    said, never passed over."""
    said = verdicts.continuation(held)
    index = savepoint_log.read(config.logs)
    unsealed = index.unsealed_rotations(instance)
    if unsealed:
        said += f"; {unsealed} rotation line(s) in logs/ not sealed by this machine: ignored, not checked"
    rotations = index.rotations(instance)
    successor = held.rotated_to()
    if successor is not None and not any(r.new_authority == str(successor) for r in rotations):
        said += f"; the lineage was rotated on chain to {successor} after savepoint {held.sequence}, and this machine's index does not record it (a rotation cut short): `precompact key rotate` finishes it, on the machine that holds that key"
    for rotation in rotations:
        if rotation.sequence == held.sequence and said:
            continue
        how = (
            "continued without the old key's signature (recovery)"
            if rotation.recovered
            else "rotated with both keys' signatures"
        )
        said += f"; after savepoint {rotation.sequence} the lineage moved from {rotation.old_authority} to {rotation.new_authority}: {how}"
    return said
