"""`precompact verify`: every savepoint checked across the three layers, in chain order, so the
first broken link is reported first.

Per savepoint: the index entry, the snapshot file's SHA-256, the hash chain (the index's and
the snapshot's own `previous`), the git blob at the recorded commit and that commit still being
on the savepoint branch. Then the on-chain record, when the cluster answers, against the local
savepoint of the same sequence, with its signature checked offline.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path

import orjson

from precompact import gitstore, savepoint_log
from precompact.config import Config


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

    @property
    def ok(self) -> bool:
        return not self.findings


def verify(config: Config, sequence: int | None = None, check_chain: bool = True) -> Report:
    """Every instance's savepoints, or only the configured instance's savepoint `sequence`."""
    report = Report()
    index = savepoint_log.read(config.logs)
    for number in index.bad_lines:
        report.findings.append(Finding(None, "index", f"line {number} of {savepoint_log.INDEX_NAME} does not parse (edited or torn)"))
    folded = savepoint_log.fold(index.events)
    repo = _repository(config, report) if config.git_layer and any(s.commit for s in folded) else None
    on_branch = gitstore.branch_commits(repo, config.branch) if repo is not None else set()
    instances = [config.instance] if sequence is not None else list(dict.fromkeys(s.instance for s in folded))
    chain_verdicts = []
    for instance in instances:
        savepoints = savepoint_log.of_instance(folded, instance)
        findings = []
        previous = None
        for expected, savepoint in enumerate(savepoints, start=1):
            if savepoint.sequence != expected:
                findings.append(Finding(expected, "index", f"missing from the index (next is {savepoint.sequence}): a line was deleted"))
            if sequence is None or savepoint.sequence == sequence:
                report.checked.append(savepoint.sequence)
                local_findings, local = _check_local(config, savepoint, previous)
                findings.extend(local_findings)
                if repo is not None and savepoint.commit:
                    findings.extend(_check_git(repo, config, savepoint, local, on_branch))
            previous = savepoint
        if sequence is not None and sequence not in report.checked:
            findings.append(Finding(sequence, "index", "no such savepoint in the index"))
        if check_chain and config.chain_layer and savepoints:
            chain_verdicts.append(_check_chain(config, instance, {s.sequence: s for s in savepoints}, findings))
        report.findings.extend(Finding(f.sequence, f.layer, f.problem, instance) for f in findings)
    if chain_verdicts:
        report.chain = "; ".join(chain_verdicts)
    return report


def verify_file(config: Config, path: Path) -> Report:
    """Checks one snapshot file against the index entry that names its hash."""
    digest = gitstore.file_digests(path).sha256
    for savepoint in savepoint_log.savepoints(config.logs):
        if savepoint.snapshot_hash == digest:
            return verify(replace(config, instance=savepoint.instance), sequence=savepoint.sequence)
    report = Report()
    report.findings.append(Finding(None, "index", f"{path} (sha256:{digest}) is not any savepoint in the index: altered or foreign"))
    return report


def _check_local(config: Config, savepoint, previous) -> tuple[list[Finding], gitstore.FileDigests | None]:
    """Findings about the index entry and the snapshot file, and the file's digests when it is
    the one the index names."""
    findings = []
    n = savepoint.sequence
    expected_prev = previous.snapshot_hash if previous else None
    recorded_prev = savepoint.prev_snapshot_hash
    if recorded_prev != expected_prev:
        findings.append(Finding(n, "index", f"prev_snapshot_hash {recorded_prev} does not link to savepoint {n - 1} ({expected_prev})"))
    path = config.root / savepoint.created.get("snapshot_file", "")
    if not path.is_file():
        return findings + [Finding(n, "layer 1", f"snapshot file {path} is missing")], None
    digests = gitstore.file_digests(path)
    if digests.sha256 != savepoint.snapshot_hash:
        return findings + [Finding(n, "layer 1", f"snapshot file {path} was altered: sha256 {digests.sha256} != index {savepoint.snapshot_hash}")], None
    try:
        document = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError:
        return findings + [Finding(n, "layer 1", f"snapshot file {path} is not JSON")], digests
    inner_prev = (document.get("previous") or {}).get("snapshot_hash")
    if document.get("sequence") != n or inner_prev != expected_prev:
        findings.append(Finding(n, "layer 1", f"snapshot {path} names sequence {document.get('sequence')} after {inner_prev}, not {n} after {expected_prev}"))
    return findings, digests


def _repository(config: Config, report: Report):
    try:
        return gitstore.open_repository(config.repository)
    except gitstore.GitStoreError as e:
        report.findings.append(Finding(None, "layer 2", str(e)))
        return None


def _check_git(repo, config: Config, savepoint, local: gitstore.FileDigests | None, on_branch: set[str]) -> list[Finding]:
    n, commit = savepoint.sequence, savepoint.commit
    name = savepoint.created.get("snapshot_file", "")
    blob = gitstore.blob_id_at(repo, commit, name)
    if blob is None:
        return [Finding(n, "layer 2", f"commit {commit} (or {name} in it) is gone from {config.repository}: history was rewritten")]
    # The local file matches the index: git holds the same bytes iff it has the same blob id.
    intact = blob == local.blob_id(repo) if local is not None else hashlib.sha256(gitstore.file_at(repo, commit, name)).hexdigest() == savepoint.snapshot_hash
    if not intact:
        return [Finding(n, "layer 2", f"{name} at commit {commit[:12]} does not hash to the index's sha256:{savepoint.snapshot_hash}")]
    if commit not in on_branch:
        return [Finding(n, "layer 2", f"commit {commit[:12]} is no longer on branch {config.branch}: history was rewritten")]
    return []


def _check_chain(config: Config, instance: str, by_sequence: dict, findings: list[Finding]) -> str:
    from precompact import chain_post, layers, record

    try:
        found = layers.inspect(config, instance)
    except chain_post.ClusterUnreachable as e:
        return f"not verified ({e})"
    except chain_post.RecordMissing:
        return "nothing posted yet"
    except (chain_post.ChainError, record.RecordError) as e:
        findings.append(Finding(None, "layer 3", str(e)))
        return "failed"
    fields = found.fields
    n = fields["sequence"]
    local = by_sequence.get(n)
    if local is None:
        findings.append(Finding(n, "layer 3", "the chain holds a savepoint the local index does not have"))
    elif fields["snapshot_hash"].hex() != local.snapshot_hash:
        findings.append(Finding(n, "layer 3", f"on-chain sha256:{fields['snapshot_hash'].hex()} differs from the index's sha256:{local.snapshot_hash}"))
    elif local.commit and fields["git_commit"].decode("ascii", "replace") != local.commit[:40]:
        findings.append(Finding(n, "layer 3", f"on-chain commit {fields['git_commit'].decode('ascii', 'replace')} differs from git's {local.commit[:40]}"))
    if not found.signature_valid:
        findings.append(Finding(n, "layer 3", "the on-chain signature does not verify against the authority"))
    return f"record at sequence {n} checked"
