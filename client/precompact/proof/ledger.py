"""`precompact verify --ledger`: every transaction that ever touched an instance's record, read
from the cluster's history, must together be exactly this machine's savepoints 1..N, in order:
one initialize, then each savepoint as the index recorded it, nothing written by anyone else,
no close. The record's current state can look right after a stolen key posted, or after a close
and re-initialise replayed the same savepoints; its history cannot.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from precompact.chain import rpc
from precompact.local import savepoint_log
from precompact.proof import history, transaction
from precompact.verifier import verdicts


@dataclass(frozen=True)
class Finding:
    sequence: int | None
    slot: int | None
    signature: str | None
    problem: str

    def __str__(self) -> str:
        where = [f"savepoint {self.sequence}" if self.sequence is not None else "record"]
        if self.slot is not None:
            where.append(f"slot {self.slot}")
        if self.signature is not None:
            where.append(f"transaction {self.signature}")
        return f"{', '.join(where)}: {self.problem}"


@dataclass
class Ledger:
    status: str  # verdicts.VERIFIED / NOT_VERIFIED / FAILED
    detail: str
    findings: list[Finding] = field(default_factory=list)


@dataclass
class _Walk:
    """The record's life as the history tells it, one transaction at a time."""

    mine: dict[int, savepoint_log.Savepoint]
    authority: object
    findings: list[Finding] = field(default_factory=list)
    written: int = 0  # the last savepoint written to the record as it stands
    highest: int = 0  # the highest savepoint ever written, whatever closes came between
    initialized: bool = False
    closed: bool = False
    ignored: int = 0  # failed, read-only or lamports-only: they changed nothing the record holds

    def savepoint(self, fields, slot: int, signature: str) -> None:
        k = fields.sequence
        if k != self.written + 1:
            gap = f"savepoint(s) {self.written + 1}..{k - 1} have no transaction in this history (gap)"
            self.findings.append(
                Finding(
                    k,
                    slot,
                    signature,
                    f"follows savepoint {self.written}: {gap}"
                    if k > self.written
                    else f"rewrites savepoint {k} after savepoint {self.written}",
                )
            )
        self.written, self.highest = k, max(self.highest, k)
        ours = self.mine.get(k)
        if ours is None:
            self.findings.append(
                Finding(
                    k,
                    slot,
                    signature,
                    f"unknown writer: sha256:{fields.snapshot_hash.hex()} is no savepoint of this machine's index (a key used elsewhere?)",
                )
            )
            return
        differs = [
            name
            for name, theirs, expected in (
                ("snapshot_hash", fields.snapshot_hash.hex(), ours.snapshot_hash),
                ("prev_snapshot_hash", fields.prev_snapshot_hash.hex(), ours.prev_snapshot_hash or "0" * 64),
                ("git_commit", fields.git_commit, (ours.commit or fields.git_commit)[: len(fields.git_commit)]),
            )
            if theirs != expected
        ]
        if differs:
            self.findings.append(
                Finding(
                    k,
                    slot,
                    signature,
                    f"unknown writer: its {', '.join(differs)} differ from this machine's savepoint {k}",
                )
            )


def check(roots: verdicts.Roots, client: rpc.Cluster, savepoints: list[savepoint_log.Savepoint]) -> Ledger:
    """The verdict on the record's whole history against one instance's savepoints."""
    try:
        entries = history.signatures_for_address(client, str(roots.address))
        walk = _Walk({s.sequence: s for s in savepoints}, roots.authority)
        for entry in entries:
            _step(walk, roots, client, entry)
    except rpc.RpcError as e:
        return Ledger(verdicts.NOT_VERIFIED, str(e))
    confirmed = savepoint_log.highest_confirmed(savepoints)
    if walk.highest < confirmed:
        walk.findings.append(
            Finding(
                walk.highest + 1,
                None,
                None,
                f"confirmed on chain per this machine's index, but no transaction in the history of {roots.address} wrote savepoints {walk.highest + 1}..{confirmed} (gap)",
            )
        )
    if walk.findings:
        return Ledger(verdicts.FAILED, str(walk.findings[0]), walk.findings)
    return Ledger(
        verdicts.VERIFIED,
        f"{len(entries)} transaction(s) touched {roots.address} on {client.url}: one initialize, then savepoints 1..{walk.written} in order, each this machine's, by the authority ({walk.ignored} failed, read-only or lamports-only ignored)",
    )


def _step(walk: _Walk, roots: verdicts.Roots, client: rpc.Cluster, entry: dict) -> None:
    signature, slot = entry["signature"], entry["slot"]
    if entry.get("err") is not None:
        walk.ignored += 1
        return
    fetched = history.transaction(client, signature)
    if fetched is None:
        raise rpc.RpcError(
            f"cluster {client.url} lists transaction {signature} for {roots.address} but getTransaction returns nothing"
        )
    if fetched.failed:
        walk.ignored += 1
        return
    try:
        parsed = transaction.parse(fetched.data, roots.program_id, roots.address)
    except transaction.Unreadable as e:
        walk.findings.append(Finding(None, slot, signature, f"a transaction touching the record is unreadable: {e}"))
        return
    if not parsed.writable and str(roots.address) not in fetched.loaded_writable:
        walk.ignored += 1
        return
    if not parsed.writes and not parsed.foreign_programs:
        walk.ignored += 1  # lamports sent to the address: anyone can, and they change no record
        return
    if parsed.foreign_programs or not parsed.writes:
        programs = ", ".join(str(p) for p in parsed.foreign_programs)
        walk.findings.append(
            Finding(None, slot, signature, f"unknown writer: program(s) {programs} ran with the record writable")
        )
        return
    for write in parsed.writes:
        if write.problem is not None or write.authority != roots.authority:
            why = write.problem or f"signed by {write.authority}, not the authority"
            walk.findings.append(Finding(None, slot, signature, f"unknown writer: a {write.kind} instruction {why}"))
        elif write.kind == "initialize":
            if walk.closed:
                walk.findings.append(
                    Finding(
                        None,
                        slot,
                        signature,
                        "re-initialized after a close that this machine's index does not record (history reset)",
                    )
                )
            walk.initialized, walk.closed, walk.written = True, False, 0
        elif write.kind == "close":
            walk.findings.append(
                Finding(
                    walk.written or None,
                    slot,
                    signature,
                    f"the record was closed after savepoint {walk.written}; this machine's index records no close (history reset)",
                )
            )
            walk.closed, walk.initialized = True, False
        elif write.kind == "savepoint" and write.fields is not None:
            if not walk.initialized:
                walk.findings.append(
                    Finding(write.fields.sequence, slot, signature, "written to a record no initialize created")
                )
            walk.savepoint(write.fields, slot, signature)
        else:
            walk.findings.append(
                Finding(None, slot, signature, f"unknown writer: a {write.kind} instruction of the program")
            )
