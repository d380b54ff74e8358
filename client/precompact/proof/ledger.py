"""`precompact verify --ledger`: every transaction that ever touched an instance's record, read
from the cluster's history, must together be exactly this machine's savepoints 1..N, in order:
one initialize, then each savepoint as the index recorded it, nothing written by anyone else,
no close. The record's current state can look right after a stolen key posted, or after a close
and re-initialise replayed the same savepoints; its history cannot.

A recovery (`key rotate --recover`) leaves the old record as it was: the program cannot change it
without the old key, so whoever holds that key can still write there. Those writes are not the
lineage's, which left that record; they are warnings (the revoked key is in someone's hands),
never a broken link the key's holder could keep red.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from precompact.boundary import quoting
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
    status: str  # the verifier's (verdicts.judged)
    detail: str
    findings: list[Finding] = field(default_factory=list)
    # Writes by a revoked key to the record a recovery left: outside the lineage, said, not failed.
    warnings: list[Finding] = field(default_factory=list)


@dataclass
class _Walk:
    """The record's life as the history tells it, one transaction at a time."""

    mine: dict[int, savepoint_log.Savepoint]
    authority: object
    # Keys this machine's index says the lineage left (its rotations): a recovery names only the
    # record it continued, which the old key may since have closed.
    left: tuple[str, ...] = ()
    findings: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    written: int = 0  # the last savepoint written to the record as it stands
    highest: int = 0  # the highest savepoint ever written, whatever closes came between
    initialized: bool = False
    closed: bool = False
    # The savepoint the history begins at when its first write is a savepoint, with no initialize
    # before it: the endpoint keeps (or gives) only the record's later history (0: it does not).
    begins_at: int = 0
    ignored: int = 0  # failed, read-only or lamports-only: they changed nothing the record holds
    transactions: int = 0  # read in this record's history and those of the records it continues
    reached: bool = False  # the walk met the transaction it was to stop at
    rotated_to: object = None  # the authority a rotation froze this record for
    carried: int = 0  # the savepoint a rotation carried into this record from the one before
    lineage: list[str] = field(default_factory=list)  # the records before this one, oldest first

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


def chain_off() -> Ledger:
    """The ledger with the chain layer off: not read, and no cluster called."""
    verdict = verdicts.ledger_unread_chain_off()
    return Ledger(verdict.status, verdict.detail)


def check(
    roots: verdicts.Roots,
    client: rpc.Cluster,
    savepoints: list[savepoint_log.Savepoint],
    rotations: Sequence[savepoint_log.Rotation] = (),
    held: int = 0,
) -> Ledger:
    """The verdict on the record's whole history against one instance's savepoints, following a
    key rotation (or recovery) back through the records the lineage came from (`rotations`, as
    this machine's index recorded them, name the keys a recovered record may no longer show).
    `held` is the savepoint the record holds as the verifier read it in the same run (its
    signature checked against the configured key; 0: not read, or none): the history must reach
    it, and this machine's confirmations, on any machine. A history that holds less (none at all,
    cut at its start or its end) is not verified: it is the endpoint's history that is incomplete;
    one that skips a savepoint, or shows another writer, is a broken link. The verifier turns what
    the walk found into the verdict (verdicts.judged)."""
    findings: list[Finding] = []
    warnings: list[Finding] = []

    def checked() -> str:
        try:
            left = tuple(r.old_authority for r in rotations)
            walk = _walk(roots, client, {s.sequence: s for s in savepoints}, left=left)
        except rpc.RpcError as e:
            raise verdicts.Unreached(str(e)) from None
        warnings.extend(walk.warnings)
        if walk.findings:
            findings.extend(walk.findings)
            raise verdicts.Broken("layer 3", walk.findings[0].sequence, str(walk.findings[0]))
        _reaches(walk, roots, client, savepoints, held)
        start = "; ".join(walk.lineage) if walk.lineage else "one initialize"
        frozen = f"; then frozen by a rotation to {walk.rotated_to}" if walk.rotated_to is not None else ""
        abandoned = (
            f"; {len(walk.warnings)} write(s) by a revoked key to a record a recovery left (warnings below)"
            if walk.warnings
            else ""
        )
        if not walk.initialized and not walk.lineage:
            return f"no transaction touched {roots.address}, {verdicts.reported_by(client.shown)}: no record, and logs/ holds no savepoint of {quoting.name(roots.instance)}"
        written = (
            f"savepoints {walk.carried + 1}..{walk.written} in order, each this machine's, by the authority"
            if walk.written > walk.carried
            else "no savepoint"
        )
        return f"{walk.transactions} transaction(s) touched {roots.address}, {verdicts.reported_by(client.shown)}: {start}, then {written}{frozen} ({walk.ignored} failed, read-only or lamports-only ignored){abandoned}"

    verdict = verdicts.judged(checked)
    return Ledger(verdict.status, verdict.detail, findings, warnings)


def _reaches(
    walk: _Walk, roots: verdicts.Roots, client: rpc.Cluster, savepoints: list[savepoint_log.Savepoint], held: int
) -> None:
    """Raises Unreached unless the history holds the record's whole life up to the savepoint the
    record was read holding (`held`) and the last this machine saw confirmed: from an initialize
    (or the rotation that carried the lineage in) on. An empty history passes only where nothing
    is to be had: no record read, none confirmed, and no savepoint of the instance in logs/."""
    confirmed = savepoint_log.highest_confirmed(savepoints)
    floor = max(held, confirmed)
    reported = verdicts.reported_by(client.shown)
    seen = f"its history, {reported}, holds {walk.transactions} transaction(s)"
    why = []
    if held:
        why.append(f"the record at {roots.address} holds savepoint {held} (read and its signature checked in this run)")
    if confirmed > held:
        why.append(f"this machine's index records savepoint {confirmed} confirmed there")
    if floor == 0 and not walk.initialized and not walk.lineage:
        if savepoints or walk.transactions:
            raise verdicts.Unreached(
                f"no initialize in the history of {roots.address} ({walk.transactions} transaction(s), {reported}): no savepoint of {quoting.name(roots.instance)} is on chain there yet"
            )
        return
    incomplete = "the endpoint's history of the record is incomplete (a node that keeps no long history, or one that hides some): set chain.cluster to one that keeps it whole"
    if walk.begins_at:
        raise verdicts.Unreached(
            f"{seen}, beginning at savepoint {walk.begins_at} with no initialize before it: {incomplete}"
        )
    if walk.highest < floor:
        wrote = f"savepoints up to {walk.highest} only" if walk.highest else "no savepoint"
        raise verdicts.Unreached(
            f"{' and '.join(why)}, but {seen}, which wrote {wrote}: savepoint(s) {walk.highest + 1}..{floor} have no transaction in it; {incomplete}"
        )


def _walk(
    roots: verdicts.Roots,
    client: rpc.Cluster,
    mine: dict[int, savepoint_log.Savepoint],
    until: str | None = None,
    recovered: bool = False,
    left: tuple[str, ...] = (),
) -> _Walk:
    """The record's history walked in order, up to and including the transaction `until` (a
    rotation or recovery the lineage moved on with). What the record's key wrote after a rotation
    is a finding (the program froze the record: a write there means it did not). After a
    recovery (`recovered`) it is a warning: the record was abandoned, not frozen, and its key,
    revoked, is in someone's hands (the "lost" key was taken, not lost)."""
    walk = _Walk(mine, roots.authority, left)
    for entry in history.signatures_for_address(client, str(roots.address)):
        walk.transactions += 1
        if walk.reached:
            _after_leaving(walk, roots, client, entry, until, recovered)
            continue
        _step(walk, roots, client, entry)
        if entry["signature"] == until:
            walk.reached = True
    return walk


def _after_leaving(
    walk: _Walk, roots: verdicts.Roots, client: rpc.Cluster, entry: dict, left_in: str | None, recovered: bool
) -> None:
    """A transaction in a record's history after the lineage left it: anything it wrote there
    is named (a finding after a rotation, a warning after a recovery)."""
    later = _Walk(walk.mine, roots.authority, walk.left, written=walk.written, initialized=True)
    _step(later, roots, client, entry)
    walk.ignored += later.ignored
    if later.written == walk.written and not later.closed and not later.findings:
        return
    sequence = later.written if later.written != walk.written else None
    if recovered:
        posted = later.written if later.written != walk.written and later.written else None
        what = "a close" if later.closed else f"savepoint {posted}" if posted is not None else "a write"
        walk.warnings.append(
            Finding(
                posted,
                entry["slot"],
                entry["signature"],
                f"{what} by {roots.authority}, the key revoked by the recovery in transaction {left_in}, on its abandoned record {roots.address}: not part of this lineage; if you did not write it, someone else holds that key",
            )
        )
        return
    walk.findings.append(
        Finding(
            sequence,
            entry["slot"],
            entry["signature"],
            f"written to {roots.address} after the lineage moved on from it in transaction {left_in}: its key is still in use",
        )
    )


def _continue_from(walk: _Walk, roots: verdicts.Roots, client: rpc.Cluster, write, slot: int, signature: str) -> None:
    """The record starts from another authority's: that record's history, up to the rotation or
    recovery transaction, must be this lineage's savepoints 1..N, and this record starts at N."""
    from solders.pubkey import Pubkey

    from precompact.chain import record
    from precompact.chain import wire as chain

    if walk.initialized or walk.written:
        walk.findings.append(Finding(None, slot, signature, "a rotation onto a record that already had a history"))
    authority = write.other if write.kind == "rotated_in" else None
    if write.kind == "recovered_in":
        # The recovery names the record it continued, not its key: the key is the one whose
        # address that is, among what the record holds now and the keys the index says were left.
        account = client.account(str(write.other))
        try:
            held = record.decode(account[1]) if account and account[0] == str(roots.program_id) else None
        except record.RecordError:
            held = None
        candidates = [Pubkey.from_bytes(held.authority)] if held is not None else []
        candidates += [Pubkey.from_string(key) for key in walk.left]
        named = [
            key
            for key in candidates
            if chain.record_address(key, roots.instance_id, roots.program_id)[0] == write.other
        ]
        if named:
            authority = named[0]
        else:
            walk.findings.append(
                Finding(None, slot, signature, f"recovered from {write.other}, which holds no record of this instance")
            )
            return
    if authority is None:
        walk.findings.append(Finding(None, slot, signature, "a rotation that names no previous authority"))
        return
    previous = verdicts.Roots(roots.program_id, authority, roots.instance)
    before = _walk(previous, client, walk.mine, signature, write.kind == "recovered_in", walk.left)
    walk.transactions += before.transactions
    walk.begins_at = walk.begins_at or before.begins_at
    walk.warnings.extend(before.warnings)
    walk.ignored += before.ignored
    walk.findings.extend(
        Finding(f.sequence, f.slot, f.signature, f"in the history of {previous.address}: {f.problem}")
        for f in before.findings
    )
    if not before.reached:
        walk.findings.append(
            Finding(
                None,
                slot,
                signature,
                f"this transaction is not in the history of the record it continues, {previous.address}",
            )
        )
    how = (
        "continued without the old key's signature (recovery)"
        if write.kind == "recovered_in"
        else "rotated to this key, both keys signing"
    )
    walk.lineage.extend(before.lineage)
    walk.lineage.append(
        f"savepoints 1..{before.written} under {authority} at {previous.address}, {how} in transaction {signature} at slot {slot}"
    )
    walk.initialized, walk.written, walk.carried = True, before.written, before.written
    walk.highest = max(walk.highest, before.highest)


def _step(walk: _Walk, roots: verdicts.Roots, client: rpc.Cluster, entry: dict) -> None:
    signature, slot = entry["signature"], entry["slot"]
    if entry.get("err") is not None:
        walk.ignored += 1
        return
    fetched = history.transaction(client, signature)
    if fetched is None:
        raise rpc.RpcError(
            f"cluster {client.shown} lists transaction {signature} for {roots.address} but getTransaction returns nothing"
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
        elif write.kind in ("rotated_in", "recovered_in"):
            _continue_from(walk, roots, client, write, slot, signature)
        elif write.kind == "rotated_out":
            walk.rotated_to = write.other
        elif write.kind == "savepoint" and write.fields is not None:
            if not (walk.initialized or walk.closed or walk.highest or walk.findings):
                # Nothing before it: a history cut short at its start, not a write without an
                # initialize (the program refuses those). The rest is walked from here.
                walk.begins_at, walk.initialized, walk.written = write.fields.sequence, True, write.fields.sequence - 1
            if not walk.initialized:
                walk.findings.append(
                    Finding(write.fields.sequence, slot, signature, "written to a record no initialize created")
                )
            walk.savepoint(write.fields, slot, signature)
        else:
            walk.findings.append(
                Finding(None, slot, signature, f"unknown writer: a {write.kind} instruction of the program")
            )
