"""The one verifier: every rule that decides whether a savepoint is "verified" lives here, and
`verify`, `resurrect` (so the SessionStart brief), `inspect`, `status` and Layer 3's
confirmation all use it.

Trust roots are only what the user set up: the configured authority public key, the instance
name, the program id, and the hashes this machine recorded in its own index when it wrote each
snapshot. Everything else (the RPC's answers, the git branch, the index copy on it, snapshot
bytes from anywhere) is evidence, checked against a root before it counts:

- **The chain root.** The account at the PDA of (program, authority, sha256(instance)), owned
  by the program, whose decoded authority and instance are the configured ones and whose
  signature verifies over the message rebuilt from its fields at that address. It vouches for
  savepoint N (its snapshot hash, predecessor hash and commit). What cannot be checked from here
  is that the record is on the chain: the account is what one RPC endpoint answered, and an
  endpoint that answers with the record built from the worker's own transaction passes every
  rule above. So every verdict that rests on a record names the endpoint that reported it
  (`reported_by`): "verified" on the chain means "as reported by RPC <url>", never more.
- **The walk back.** An older savepoint k is verified from N only through snapshot bytes: the
  hash of snapshot k must equal the predecessor hash written inside the verified snapshot k+1,
  and snapshot N's predecessor must equal the record's signed `prev_snapshot_hash`.
- **The local root.** A snapshot whose bytes hash to what this machine's index recorded: a
  SAVEPOINT_CREATED line carrying this machine's tag (local.provenance). The callers hold the
  hash to it only for such lines; a `logs/` that came with the project states hashes nobody here
  computed.

An encrypted git copy (remote_crypto) is checked the same way once decrypted. Without an
identity that opens it, the most git shows is that the ciphertext is the blob the commit names
(so the one the signed record's commit holds): its content is NOT_VERIFIED, never VERIFIED.
A ciphertext that does not decrypt or authenticate is FAILED.

Verdicts mean the same everywhere, per savepoint and per layer, and only this module decides
one (tests/python/test_architecture.py keeps it so): VERIFIED (held, and checked against a root;
for git, the remote's savepoint branch holds the commit), NOT_VERIFIED (held, or maybe held, but
not checked; says why), PENDING (the layer has not taken it yet), NOT_ON_REMOTE (committed here,
but the remote does not hold it; says git's reason), FAILED (evidence contradicts a root; says
which savepoint, which layer and which field), OFF (the configuration does not ask for the
layer). `headline` turns them into the one verdict on a run: VERIFIED only when every layer the
configuration asks for holds every savepoint.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from precompact.boundary import quoting
from precompact.config.endpoint import shown as shown_endpoint
from precompact.errors import PrecompactError
from precompact.local import chunks, snapshot
from precompact.local.savepoint_log import Closing, Layer2, Layer3, Savepoint, chain_ahead_notice
from precompact.records import Record
from precompact.verifier.snapshot_bytes import Snapshot

# The Solana side (solders, borsh, httpx) is imported where it is used: the SessionStart hook
# checks local snapshots through this module, and those imports would cost it ~100 ms.
if TYPE_CHECKING:
    from solders.pubkey import Pubkey

    from precompact.chain import record, rpc
    from precompact.config.settings import Config
    from precompact.remote import gitstore
    from precompact.verifier.evidence import GitCopy, HeldBy, RemoteBranch

VERIFIED, NOT_VERIFIED, PENDING, NOT_ON_REMOTE, FAILED, OFF = (
    "verified",
    "not verified",
    "pending",
    "not on the remote",
    "FAILED",
    "off",
)
# Every status a verdict can have (the architecture rule that keeps verdicts here lists them too).
STATUSES = (VERIFIED, NOT_VERIFIED, PENDING, NOT_ON_REMOTE, FAILED, OFF)
# How a verdict is marked wherever it is shown: only a check is ✓, only a contradiction ✗.
MARKS = {VERIFIED: "✓", FAILED: "✗"}
UNMARKED = "–"

# The layers of a savepoint, as every verdict names them.
SNAPSHOT, GIT, CHAIN = "snapshot", "git", "chain"
# Beside them, for a savepoint with a compaction summary: its signature (verifier.signed.summary_verdict).
SUMMARY = "summary"


def mark(status: str) -> str:
    return MARKS.get(status, UNMARKED)


# How every verdict names the local root: the hash this machine recorded when it wrote a snapshot.
LOCAL_ROOT = "this machine's index recorded"


class Check(Record, frozen=True):
    status: str
    detail: str
    sha256: str | None = None  # the snapshot hash a VERIFIED check vouches for
    sequence: int | None = None  # the savepoint a FAILED or NOT_VERIFIED check is about, when known
    layer: str | None = None  # and the layer, when known
    # Whose word a VERIFIED check takes that no root can check (`reported_by`: the RPC endpoint
    # that served the chain's record); a one-line rendering that keeps only the ✓ keeps this too.
    resting_on: str | None = None


class Broken(Exception):
    """Evidence contradicts a root: `layer` and `sequence` say where, the message what."""

    def __init__(self, layer: str, sequence: int | None, reason: str):
        super().__init__(reason)
        self.layer = layer
        self.sequence = sequence


class Unreached(Exception):
    """A source a check needs did not answer, or does not hold the savepoint yet: nothing is
    contradicted, nothing is verified. `sequence` says which savepoint, when known."""

    def __init__(self, reason: str, sequence: int | None = None):
        super().__init__(reason)
        self.sequence = sequence


def judged(check: Callable[[], str]) -> Check:
    """The verdict of a check run end to end (a proof bundle, the ledger's history): VERIFIED
    with what `check` says it checked, FAILED where it raised Broken, NOT_VERIFIED where it
    raised Unreached."""
    try:
        detail = check()
    except Broken as e:
        return Check(FAILED, str(e), sequence=e.sequence, layer=e.layer)
    except Unreached as e:
        return Check(NOT_VERIFIED, str(e), sequence=e.sequence)
    return Check(VERIFIED, detail)


def ledger_unread_chain_off() -> Check:
    """The ledger's verdict when the chain layer is off: not read (no cluster is called)."""
    return Check(
        OFF,
        "not checked: the ledger is the on-chain record's history, and the chain layer is off in .precompact.toml",
    )


class Unrooted(Exception):
    """No root can vouch for a savepoint's local bytes: this machine did not write its index
    line, or the bytes are not here. The message says which."""


class NoRoot(PrecompactError):
    """The configuration names no authority to anchor the chain in."""


class Roots(Record, frozen=True):
    program_id: Pubkey
    authority: Pubkey
    instance: str

    @property
    def instance_id(self) -> bytes:
        from precompact.chain import wire as chain

        return chain.instance_id(self.instance)

    @property
    def address(self) -> Pubkey:
        from precompact.chain import wire as chain

        return chain.record_address(self.authority, self.instance_id, self.program_id)[0]


def roots(program_id: str, authority: str | None, keypair: Path, instance: str) -> Roots:
    """The roots the configuration names: `chain.authority`, else the keypair's public key."""
    from solders.pubkey import Pubkey

    from precompact.chain import wire as chain

    if authority is not None:
        key = Pubkey.from_string(authority)
    else:
        try:
            key = chain.load_keypair(keypair).pubkey()
        except chain.KeypairError as e:
            raise NoRoot(f"{e}; or set chain.authority to the public key that signs your savepoints") from None
    return Roots(Pubkey.from_string(program_id), key, instance)


# --- Layer 3: the record ----------------------------------------------------------------------


def reported_by(url: str) -> str:
    """What a verdict on an on-chain record rests on: the word of the endpoint that served it
    (its shown form, config/endpoint), which this machine cannot check against the chain (a
    dishonest endpoint can answer with the record built from the worker's own transaction, and
    every other rule holds)."""
    return f"as reported by RPC {shown_endpoint(url)}, not checked against the chain itself"


def check_record(roots: Roots, owner: str, data: bytes) -> record.Record:
    """The record at `roots.address` as the account holds it, once every rule of the chain root
    holds; raises Broken naming the field that does not. A record not yet written to (sequence 0)
    passes the owner, authority and instance checks only: it vouches for nothing."""
    from solders.pubkey import Pubkey

    from precompact.chain import record

    where = f"the account at {roots.address}"
    if owner != str(roots.program_id):
        # the owner is the RPC endpoint's word: quoted unless it is an address's letters and digits
        said = owner if owner.isascii() and owner.isalnum() else quoting.inline(owner)
        raise Broken("layer 3", None, f"{where} is owned by {said}, not the precompact program {roots.program_id}")
    try:
        found = record.decode(data)
    except record.RecordError as e:
        raise Broken("layer 3", None, f"{where}: {e}") from None
    n = found.sequence or None
    if found.authority != bytes(roots.authority):
        raise Broken(
            "layer 3",
            n,
            f"the record's authority {Pubkey.from_bytes(found.authority)} is not the configured authority {roots.authority}",
        )
    if found.instance_id != roots.instance_id:
        raise Broken(
            "layer 3",
            n,
            f"the record's instance_id {found.instance_id.hex()[:16]}… is not sha256({quoting.name(roots.instance)})",
        )
    if found.sequence == 0:
        return found
    if not signature_valid(found, roots):
        raise Broken(
            "layer 3",
            n,
            f"the record's signature does not verify: not the configured authority's over savepoint {n} at address {roots.address}",
        )
    return found


def signature_valid(found: record.Record, roots: Roots) -> bool:
    """Whether the configured authority signed the record's fields for this program and address
    (for a savepoint carried over by a key rotation, the previous authority at its address)."""
    from solders.signature import Signature

    signer = found.savepoint_signer(roots.authority, roots.program_id)
    if signer is None:
        return False
    key, address = signer
    try:
        message = found.signed_fields().signed_message(address, roots.program_id)
    except ValueError:  # a git_commit that is not 40 ASCII characters
        return False
    return Signature.from_bytes(found.signature).verify(key, message)


class ChainRead(Record, frozen=True):
    """What the cluster said about the instance: `record` is set only when the verdict is
    VERIFIED; otherwise `status` and `detail` say why not."""

    status: str
    detail: str
    record: record.Record | None = None
    sequence: int | None = None  # the savepoint a failure is about, when known
    endpoint: str = ""  # the RPC endpoint that served `record`, as shown (config/endpoint)


def record_at(roots: Roots, client: rpc.Cluster) -> record.Record | None:
    """The record at the PDA once it passes check_record (else Broken; RpcError when the cluster
    gives no usable answer); None before initialize, including when only lamports were sent to
    the address (anyone can send them)."""
    from precompact.chain import wire as chain

    account = client.account(str(roots.address))
    if account is None or account == (str(chain.SYSTEM_PROGRAM_ID), b""):
        return None
    return check_record(roots, *account)


def history_reset(roots: Roots, held: int, confirmed: int) -> str | None:
    """Why a record holding savepoint `held` cannot be the one this machine saw confirm savepoint
    `confirmed` (None when it can): a record's sequence only ever grows, unless it was closed and
    initialized again, or an endpoint replays an older state."""
    if held >= confirmed:
        return None
    holds = f"holds savepoint {held}" if held else "holds no savepoint"
    return f"the record at {roots.address} {holds}, but savepoint {confirmed} was confirmed there before: it was closed and re-initialized, or the cluster replays an older state (history reset)"


def read_record(roots: Roots, client: rpc.Cluster, confirmed: int = 0, closed: Closing | None = None) -> ChainRead:
    """The chain's verdict on the instance, given the highest savepoint this machine saw
    confirmed on chain (0: none, or the index is not this machine's) and the closing of its
    record this machine recorded (`precompact close`), if any. Never raises for what the
    cluster answers."""
    from precompact.chain import rpc

    try:
        found = record_at(roots, client)
    except rpc.RpcError as e:
        return ChainRead(NOT_VERIFIED, str(e))
    except Broken as e:
        return ChainRead(FAILED, str(e), sequence=e.sequence)
    if found is None and closed is not None and closed.address == str(roots.address):
        return ChainRead(
            NOT_VERIFIED,
            f"the record of {quoting.name(roots.instance)} at {roots.address} was closed by `precompact close` after savepoint {closed.sequence} (transaction {closed.signature}, as this machine recorded it): the chain can no longer vouch for any savepoint of it; git and this machine's own record are checked as before",
        )
    if found is None and confirmed:
        return ChainRead(
            FAILED,
            f"savepoint {confirmed} was confirmed on chain, but there is no record of {quoting.name(roots.instance)} at {roots.address} on {client.shown}: it was closed, or this is not the cluster it was posted to",
            sequence=confirmed,
        )
    if found is None:
        return ChainRead(
            PENDING, f"no record of {quoting.name(roots.instance)} at {roots.address} on {client.shown} yet"
        )
    reset = history_reset(roots, found.sequence, confirmed)
    if reset is not None:
        return ChainRead(FAILED, reset, sequence=confirmed)
    if found.sequence == 0:
        return ChainRead(PENDING, f"the record at {roots.address} holds no savepoint yet")
    return ChainRead(
        VERIFIED,
        f"record {roots.address}, savepoint {found.sequence}, slot {found.slot}, signature valid{continuation(found)}, {reported_by(client.shown)}",
        found,
        endpoint=client.shown,
    )


def chain_record(
    config: Config, instance: str, confirmed: int, closed: Closing | None = None
) -> tuple[Roots | None, ChainRead]:
    """The configured roots for `instance` and the chain's verdict on its record, given the
    highest savepoint this machine saw confirmed (0: none, or the index is not this machine's)
    and the record's closing this machine recorded, if any."""
    from precompact.chain import rpc

    try:
        configured = roots(config.program_id, config.authority, config.keypair, instance)
    except NoRoot as e:
        return None, ChainRead(NOT_VERIFIED, str(e))
    client = rpc.Cluster(config.cluster, timeout=rpc.DEFAULT_TIMEOUT_SECONDS)
    return configured, read_record(configured, client, confirmed, closed)


def posted_in_full(config: Config, instance: str, savepoints: list[Savepoint], closed: Closing | None) -> Check:
    """Layer 3's verdict when nothing is left to post (`flush`: every savepoint of `instance`
    is marked confirmed): the record read once now against what this machine's index holds.
    VERIFIED only when the record passes every rule of the chain root and states the index's
    last savepoint as its line does; FAILED as `verify` fails it (the record gone or replayed
    older under savepoints this machine saw confirmed, another field); otherwise the state
    `verify` gives: not verified (the cluster unreachable, no root, the record closed, or
    holding savepoints logs/ lacks), pending (no record yet)."""
    confirmed = max((s.sequence for s in savepoints if s.written_here and s.layer_3 == Layer3.CONFIRMED), default=0)
    configured, read = chain_record(config, instance, confirmed, closed)
    last = savepoints[-1] if savepoints else None
    if read.record is None or configured is None:
        if last is None and read.status == PENDING:
            return Check(
                VERIFIED, f"nothing to post: logs/ holds no savepoint of {quoting.name(instance)}, and {read.detail}"
            )
        return Check(read.status, read.detail, sequence=read.sequence, layer="layer 3")
    held = read.record
    if last is None or held.sequence > last.sequence:
        ahead = chain_ahead_notice(instance, held.sequence, last.sequence if last else 0, [])
        return Check(NOT_VERIFIED, f"{ahead} ({read.detail})", layer="layer 3")
    if held.sequence < last.sequence:
        return Check(
            FAILED,
            f"savepoint {last.sequence} is marked confirmed on chain in this machine's index, but the record read now holds savepoint {held.sequence} ({read.detail}): it was closed and re-initialized, or the cluster replays an older state (history reset)",
            sequence=last.sequence,
            layer="layer 3",
        )
    try:
        check_record_holds(held, last, last.commit)
    except Broken as e:
        return Check(FAILED, str(e), sequence=e.sequence, layer=e.layer)
    return Check(
        VERIFIED,
        f"nothing to post; the record read now holds savepoint {held.sequence} as this machine's index states it ({read.detail})",
        sha256=last.snapshot_hash,
        resting_on=reported_by(read.endpoint),
    )


def continuation(found: record.Record) -> str:
    """What a record carried over from another authority's says about how (empty otherwise): a
    recovery is never passed off as a rotation the old key signed."""
    previous = found.continued_from()
    if previous is None:
        return ""
    signer = found.signed_by()
    signed = "" if signer is None else f" (its signature is {signer}'s, a key before {previous})"
    if found.recovered:
        return f"; continued without the old key's signature: savepoint {found.sequence} was carried over from authority {previous}'s record by the new key alone (recovery){signed}"
    return f"; savepoint {found.sequence} was carried over from authority {previous}'s record by a rotation both keys signed{signed}"


def check_record_holds(found: record.Record, savepoint: Savepoint, commit: str | None) -> None:
    """The record states exactly this savepoint: sequence, snapshot hash, predecessor, commit.
    Raises Broken naming the first field that differs."""
    from precompact.chain import wire as chain

    n = savepoint.sequence
    if found.sequence != n:
        raise Broken("layer 3", n, f"the record holds sequence {found.sequence}, not {n}")
    if found.snapshot_hash.hex() != savepoint.snapshot_hash:
        raise Broken(
            "layer 3",
            n,
            f"snapshot_hash on chain sha256:{found.snapshot_hash.hex()} differs from the savepoint's sha256:{savepoint.snapshot_hash}",
        )
    if found.prev_snapshot_hash.hex() != (savepoint.prev_snapshot_hash or "0" * 64):
        raise Broken(
            "layer 3",
            n,
            f"prev_snapshot_hash on chain sha256:{found.prev_snapshot_hash.hex()} differs from the savepoint's {savepoint.prev_snapshot_hash}",
        )
    if commit is not None and found.commit != commit[: chain.GIT_COMMIT_LEN]:
        raise Broken(
            "layer 3",
            n,
            f"git_commit on chain {found.commit} differs from the savepoint's commit {commit[: chain.GIT_COMMIT_LEN]}",
        )


# --- Layer 1 and the hash chain: snapshot bytes ------------------------------------------------


def read_snapshot(data: bytes, where: str) -> Snapshot:
    digest = hashlib.sha256(data).hexdigest()
    try:
        document = snapshot.SnapshotReader(data).document
    except ValueError:
        document = snapshot.Document.of({})
    return Snapshot(digest, document.sequence, document.instance_id, document.previous_hash, where, data)


def contents(found: Snapshot, fetch: chunks.Fetch, where: str, layer: str = "layer 1") -> bytes:
    """The full document `found` stands for (a format-1 snapshot is it; a chunked one is
    rebuilt from chunks `fetch` gives, from `where`), each chunk checked against the hash the
    snapshot lists for it. Raises Broken naming the first chunk missing or altered."""
    document = parts(found, fetch, where, layer)
    return document if isinstance(document, bytes) else document.joined()


def parts(found: Snapshot, fetch: chunks.Fetch, where: str, layer: str = "layer 1") -> bytes | chunks.Rebuilt:
    """`contents`, a chunked snapshot's checked chunks not yet joined (chunks.Rebuilt)."""
    try:
        return chunks.rebuilt(found.data, fetch)
    except chunks.ChunkError as e:
        raise Broken(layer, _number(found.sequence), f"{e} in {where}; the snapshot lists it") from None
    except ValueError as e:
        raise Broken(
            layer,
            _number(found.sequence),
            f"snapshot in {found.where} lists no usable chunks: {quoting.inline(str(e))}",
        ) from None


def chunk_problem(ref: chunks.Ref, data: bytes | None, where: str) -> str | None:
    """Why `data` (from `where`) is not the chunk `ref` names; None when it is."""
    try:
        chunks.checked(ref, data)
    except chunks.ChunkError as e:
        return f"{e} in {where}; the snapshot lists it"
    return None


def chunk_refs(found: Snapshot) -> list[chunks.Ref]:
    """The chunks `found` lists (none for a format-1 snapshot or one that does not parse)."""
    if not chunks.is_chunked(found.data):
        return []
    try:
        return chunks.refs(snapshot.SnapshotReader(found.data).fields)
    except ValueError:
        return []


def _number(sequence: object) -> int | None:
    return sequence if isinstance(sequence, int) else None


def check_snapshot(
    found: Snapshot, sequence: int, instance: str, expected: str, root: str, layer: str = "layer 1"
) -> None:
    """The bytes are savepoint `sequence` of `instance` and hash to `expected`, the value `root`
    vouches for. Raises Broken naming what differs."""
    if found.sha256 != expected:
        raise Broken(
            layer, sequence, f"snapshot in {found.where} hashes to sha256:{found.sha256}, but {root} sha256:{expected}"
        )
    if found.sequence != sequence or found.instance != instance:
        raise Broken(
            layer,
            sequence,
            f"snapshot in {found.where} says it is savepoint {found.sequence} of {quoting.name(str(found.instance))}",
        )


def check_link(found: Snapshot, sequence: int, expected_previous: str | None, root: str) -> None:
    """The predecessor hash written inside the snapshot is the one `root` gives for savepoint
    `sequence - 1` (None for the first)."""
    if found.previous != expected_previous:
        raise Broken(
            "hash chain",
            sequence,
            f"snapshot {sequence} names predecessor sha256:{found.previous}, but {root} sha256:{expected_previous}",
        )


class LocalSnapshots:
    """The snapshot files this machine's logs/ holds, each read once: only under a name Layer 1
    writes for that savepoint and never through a link (logs_dir). Kept by file and sequence:
    the instances of one project number their savepoints from 1 each."""

    def __init__(self, logs: Path):
        self.logs = logs
        self._read: dict[tuple[str, int], Snapshot | None] = {}

    def get(self, savepoint: Savepoint) -> Snapshot | None:
        from precompact.boundary import logs_dir

        name = savepoint.snapshot_file
        key = (name, savepoint.sequence)
        if key not in self._read:
            data = logs_dir.read_snapshot(self.logs, name, savepoint.sequence)
            self._read[key] = (
                None if data is None else read_snapshot(data, f"local file {quoting.path(self.logs.parent / name)}")
            )
        return self._read[key]


Locate = Callable[[Savepoint, str | None], Snapshot | None]


def walk_back(
    found: record.Record,
    roots: Roots,
    by_sequence: dict[int, Savepoint],
    down_to: int,
    locate: Locate,
    endpoint: str,
) -> dict[int, Check]:
    """Chain verdicts for savepoints `down_to`..N, N being the record's as RPC `endpoint` served
    it: each snapshot's bytes must hash to what the record (for N) or the verified snapshot after
    it names. `locate` returns bytes for a savepoint (any source: they are checked here), given
    the hash wanted."""
    verdicts: dict[int, Check] = {}
    n = found.sequence
    expected: str | None = found.snapshot_hash.hex()
    expected_previous = found.prev_snapshot_hash.hex()
    root = f"the signed record's snapshot_hash (savepoint {n}) is"
    for k in range(n, down_to - 1, -1):
        savepoint = by_sequence.get(k)
        if expected is None:
            # Savepoint k+1 verified as an instance's first: nothing comes before it.
            verdicts[k] = Check(FAILED, f"savepoint {k + 1} is the first of its chain, yet savepoint {k} exists")
            for j in range(k - 1, down_to - 1, -1):
                verdicts[j] = Check(NOT_VERIFIED, f"the chain ends at savepoint {k + 1}, above savepoint {j}")
            break
        located = locate(savepoint, expected) if savepoint is not None else None
        if located is None:
            reason = "is not in the index" if savepoint is None else "has no snapshot bytes here or in git"
            for j in range(k, down_to - 1, -1):
                verdicts[j] = Check(
                    NOT_VERIFIED,
                    f"savepoint {k} {reason}, so savepoint {j} cannot be linked to the on-chain record {n}",
                )
            break
        try:
            check_snapshot(located, k, roots.instance, expected, root, layer="layer 3")
            if k == n:
                check_link(
                    located,
                    k,
                    None if expected_previous == "0" * 64 else expected_previous,
                    "the signed record's prev_snapshot_hash is",
                )
        except Broken as e:
            verdicts[k] = Check(FAILED, str(e))
            for j in range(k - 1, down_to - 1, -1):
                verdicts[j] = Check(NOT_VERIFIED, f"the chain is broken at savepoint {k}, above savepoint {j}")
            break
        signed = f"record {roots.address}, savepoint {n}, slot {found.slot}, signature valid, {reported_by(endpoint)}"
        verdicts[k] = Check(
            VERIFIED,
            signed if k == n else f"{signed}; savepoint {k} links to it through the snapshots' own bytes",
            located.sha256,
            resting_on=reported_by(endpoint),
        )
        expected = located.previous
        root = f"the verified snapshot {k} names as its predecessor"
    return verdicts


# --- Layer 2: the git copy (evidence.py reads it) ----------------------------------------------


def unread_copy(copy: gitstore.Unopened, commit: str, snapshot_file: str, sequence: int) -> Check:
    """The verdict on a snapshot copy git holds encrypted and that cannot be read here:
    NOT_VERIFIED when it is encrypted for identities that are not here and its ciphertext is the
    blob the commit names; FAILED when that ciphertext is broken or is not the committed one."""
    from precompact.remote import gitstore

    if not copy.intact:
        return Check(
            FAILED,
            f"savepoint {sequence}: the object store's copy of {quoting.path(gitstore.sealed_path(snapshot_file))} at commit {commit[:12]} does not hash to the blob the commit names: altered",
        )
    if isinstance(copy, gitstore.Undecryptable):
        return Check(FAILED, f"savepoint {sequence}: the encrypted snapshot {copy}")
    return Check(
        NOT_VERIFIED,
        f"commit {commit[:12]} holds the ciphertext it committed for savepoint {sequence}; its content was not checked ({copy})",
    )


def git_copy(copy: GitCopy, wanted: str, root: str) -> Check:
    """Layer 2's verdict on a savepoint's snapshot at its commit: VERIFIED when git's copy hashes
    to `wanted`, the hash `root` vouches for (git is no root of its own: a caller whose `wanted`
    no root vouches for says so); NOT_VERIFIED when its content cannot be read here; FAILED when
    the commit does not hold it or it is other bytes."""
    where = f"commit {copy.commit[:12]}"
    if not copy.present:
        return Check(FAILED, f"{where} does not hold {quoting.path(copy.snapshot_file)}: history was rewritten")
    if copy.unopened is not None:
        return unread_copy(copy.unopened, copy.commit, copy.snapshot_file, copy.sequence)
    if copy.sha256 != wanted:
        return Check(
            FAILED, f"{quoting.path(copy.snapshot_file)} at {where} does not hash to the sha256:{wanted} {root}"
        )
    return Check(VERIFIED, f"{where} (encrypted copy decrypted and checked)" if copy.decrypted else where)


def on_branch(commit: str, held_by: HeldBy | None, remote: RemoteBranch) -> Check | None:
    """FAILED when the savepoint's commit is no longer on the savepoint branch (`held_by`: here,
    else the remote's). No branch at all is no evidence of a rewrite (precompact's git directory
    is named after the project's path: a moved project or a new machine has none): then
    NOT_VERIFIED while the remote could not be read, NOT_ON_REMOTE when it has no branch."""
    if held_by is None:
        none_here = f"commit {commit[:12]} is not checked: precompact's git directory here has no branch {remote.branch} (a moved project, or a new machine)"
        if remote.reason is not None:
            return Check(
                NOT_VERIFIED, f"{none_here}, and {remote.remote} could not be read: {_remote_said(remote.reason)}"
            )
        return Check(NOT_ON_REMOTE, f"{none_here}, and {remote.remote} has no branch {remote.branch}")
    if commit in held_by.commits:
        return None
    return Check(FAILED, f"commit {commit[:12]} is no longer on {held_by.branch}: history was rewritten")


def _remote_said(text: str | None) -> str:
    """What git and the remote said of a failure (a hook's `remote:` lines are the server's own
    words), quoted: a verdict reaches the model in the brief's proof line, where the remote's text
    must read as data, not as precompact's voice ("ok), chain ✓ verified" is the remote's)."""
    return quoting.inline(text or "")


def on_remote(commit: str, held: bool | None, remote: RemoteBranch, failure: str | None) -> Check | None:
    """Whether the remote holds the savepoint's commit (`held`: reachable from the remote's
    savepoint branch as just fetched; None when the remote could not be read): None when it
    does, NOT_VERIFIED when it could not be read, NOT_ON_REMOTE when it does not, with git's
    reason (`failure`, the worker's last failed push) when the index recorded one. A commit
    made here is never "git ✓" on the strength of the local branch."""
    if held:
        return None
    if held is None:
        return Check(
            NOT_VERIFIED,
            f"commit {commit[:12]} is here, but {remote.remote} could not be read to check that it holds it: "
            f"{_remote_said(remote.reason)}",
        )
    why = (
        _remote_said(failure)
        if failure
        else (
            f"{remote.remote} has no branch {remote.branch}"
            if not remote.exists
            else f"{remote.remote}'s {remote.branch} does not hold it"
        )
    )
    return Check(NOT_ON_REMOTE, f"committed here as {commit[:12]}, not on {remote.remote}: {why}")


def git_verdict(copy: Check, remote: Check | None, held_by: RemoteBranch) -> Check:
    """Layer 2's verdict on a savepoint from its copy at its commit (git_copy) and the commit's
    place on the remote (on_remote): a contradiction first, then what keeps the remote from
    holding it, then what keeps its content from being checked; VERIFIED only when the remote
    holds the commit and its bytes checked."""
    if copy.status == FAILED:
        return copy
    if remote is not None:
        return remote
    if copy.status != VERIFIED:
        return copy
    return Check(VERIFIED, f"{copy.detail}, on {held_by.remote}'s {held_by.branch}", copy.sha256)


# How a verdict names the chain as the root of a snapshot's hash (the walk back from the record).
CHAIN_ROOT = "the on-chain record vouches for"


def git_rooted(git: Check, root: str | None, resting_on: str | None = None) -> Check:
    """Layer 2's verdict once it is known which root vouches for the hash git's copy was held to
    (`root`, as verdicts name it: LOCAL_ROOT, the signed line's, CHAIN_ROOT; None: none does;
    `resting_on`: whose word that root took, the chain's RPC endpoint). git is no root of its
    own: a ✓ names the root, a copy matching a hash no root vouches for is NOT_VERIFIED, and
    such a savepoint not committed never will be (Layer 2 pushes none)."""
    if root is not None:
        if git.status != VERIFIED:
            return git
        detail = f"{git.detail}; its bytes hash to the sha256 {root}"
        return Check(VERIFIED, detail, git.sha256, resting_on=git.resting_on or resting_on)
    if git.status == VERIFIED:
        return Check(
            NOT_VERIFIED, f"{git.detail} holds the snapshot its index line names, but no root vouches for that hash"
        )
    if git.status == PENDING:
        return Check(NOT_VERIFIED, "not committed: Layer 2 never pushes a savepoint no root vouches for")
    return git


def chunk_unopened(error: gitstore.Unopened, about: str = "") -> Check:
    """A chunk sealed for the identities that are not here: not checked, unless the object
    store's ciphertext no longer hashes to the committed blob, which is an alteration either way."""
    from precompact.remote import gitstore

    if isinstance(error, gitstore.Sealed) and error.intact:
        return Check(NOT_VERIFIED, str(error))
    return Check(FAILED, f"{about}{error}")


def chunk_in_git(
    ref: chunks.Ref, commit: str, data: bytes | None | gitstore.Unopened | gitstore.Oversized
) -> Check | None:
    """The verdict on chunk `ref`'s bytes as git gives them at `commit`; None when they are it."""
    from precompact.remote import gitstore

    if isinstance(data, gitstore.Oversized):
        return Check(FAILED, str(data))
    if data is None:
        return Check(FAILED, f"chunk {ref.sha256} ({ref.size} bytes) is missing from commit {commit[:12]}")
    if isinstance(data, gitstore.Unopened):
        return chunk_unopened(data, f"chunk {ref.sha256}: ")
    if chunk_problem(ref, data, f"commit {commit[:12]}") is not None:
        return Check(
            FAILED,
            f"chunk {ref.sha256} ({ref.size} bytes) is altered in commit {commit[:12]}: its bytes do not hash to its name",
        )
    return None


def recorded_git(git_layer: bool, savepoint: Savepoint, remote: str) -> Check:
    """Git as the worker recorded it in the index: never "verified", which takes reading the
    remote (a session start reads neither git nor the chain); a commit whose push failed is not
    on the remote, whatever the local branch holds."""
    if not git_layer:
        return Check(OFF, "the git layer is off in .precompact.toml")
    if savepoint.commit and savepoint.layer_2 == Layer2.FAILED:
        return Check(
            NOT_ON_REMOTE,
            f"committed here as {savepoint.commit[:12]}, not on {remote}: "
            f"{_remote_said(savepoint.layer_2_failure) if savepoint.layer_2_failure else 'its push failed'}",
        )
    if savepoint.layer_2 == Layer2.PUSHED and savepoint.commit:
        return Check(
            NOT_VERIFIED,
            f"pushed to {remote} as commit {savepoint.commit[:12]} per the index, not re-read",
        )
    if savepoint.layer_2 == Layer2.COMMITTED and savepoint.commit:
        return Check(PENDING, f"committed here as {savepoint.commit[:12]}, not pushed to {remote} yet")
    return Check(PENDING, "Layer 2 queued: not committed yet")


def recorded_chain(chain_layer: bool, savepoint: Savepoint) -> Check:
    """The chain as the worker recorded it in the index (not "verified", as for git). A
    savepoint the chain anchored stays confirmed when the layer is turned off later; one it did
    not is off, neither queued nor failed."""
    if savepoint.layer_3 == Layer3.CONFIRMED:
        return Check(
            NOT_VERIFIED,
            f"confirmed at slot {savepoint.chain_slot} {_confirmed_by(savepoint)}per the index, not re-read",
        )
    if not chain_layer:
        return Check(OFF, "the chain layer is off in .precompact.toml")
    return Check(PENDING, "Layer 3 queued: not on chain yet")


def _confirmed_by(savepoint: Savepoint) -> str:
    """Whose word the worker's confirmation took (the index's words: quoted unless a plain URL)."""
    said = savepoint.chain_endpoint
    if said is None:
        return "(by an RPC endpoint the index does not name) "
    return f"by RPC {shown_endpoint(said)} "


def confirmations(savepoints: list[Savepoint]) -> str | None:
    """Whose word the index's Layer 3 confirmations of `savepoints` rest on, in one line for
    `status` (None when none is confirmed): each RPC endpoint the worker took it from."""
    confirmed = [s for s in savepoints if s.layer_3 == Layer3.CONFIRMED]
    if not confirmed:
        return None
    counts: dict[str, int] = {}
    for s in confirmed:
        said = _confirmed_by(s).strip()
        counts[said] = counts.get(said, 0) + 1
    each = "; ".join(f"{n} {said}" for said, n in counts.items())
    return f"CONFIRMED as the worker was told: {each}; not checked against the chain itself (`precompact verify` re-reads the record)"


def unread_git(git_layer: bool, savepoint: Savepoint, checked: Check | None, readable: bool) -> Check:
    """Layer 2's verdict in a `verify` run: what its checks found (`checked`), else why git's
    copy was not judged."""
    if not git_layer:
        return Check(OFF, "the git layer is off in .precompact.toml")
    if checked is not None:
        return checked
    if not savepoint.commit:
        return Check(PENDING, "not committed yet (Layer 2 queued)")
    if not readable:
        return Check(NOT_VERIFIED, "the repository could not be read")
    return Check(NOT_VERIFIED, f"git's copy at commit {savepoint.commit[:12]} was not read")


def chain_verdict(read: ChainRead, walked: dict[int, Check], sequence: int) -> Check:
    """The chain's verdict on savepoint `sequence`, from the record read (`read`) and the walk
    back from it (`walked`)."""
    if sequence in walked:
        return walked[sequence]
    if read.record is not None and read.record.sequence < sequence:
        return Check(PENDING, f"the chain holds savepoint {read.record.sequence}; {sequence} is not posted yet")
    if read.record is not None:
        return Check(NOT_VERIFIED, f"the on-chain record of savepoint {read.record.sequence} does not vouch for it")
    if read.status == FAILED and read.sequence != sequence:
        return Check(NOT_VERIFIED, f"the on-chain record failed its checks: {read.detail}")
    return Check(read.status, read.detail)


# --- The savepoint as a whole -------------------------------------------------------------------


def snapshot_verdict(
    savepoint: Savepoint, unvouched: str | None, present: bool, chain: Check | None, signed_root: str | None
) -> Check:
    """Layer 1's verdict on a savepoint whose local checks found nothing wrong: VERIFIED when a
    root vouches for its bytes (this machine's recorded hash, the user's signature over its index
    line, named by `signed_root`, or the chain's), NOT_VERIFIED when none does (`unvouched` says
    why), OFF when `precompact prune` removed it on purpose."""
    if unvouched is not None:
        return Check(NOT_VERIFIED, unvouched)
    if not present and savepoint.pruned:
        return Check(OFF, "its local copy was pruned on purpose (`precompact prune`); git's copy is checked instead")
    if savepoint.written_here:
        return Check(VERIFIED, f"hash matches the one {LOCAL_ROOT}; hash link to the previous savepoint holds")
    if signed_root is not None:
        return Check(VERIFIED, f"hash matches the one {signed_root}; hash link to the previous savepoint holds")
    return Check(
        VERIFIED,
        f"hash is the one the on-chain record vouches for ({chain.detail if chain else 'chain'})",
        resting_on=chain.resting_on if chain else None,
    )


def not_backed_up(git: Check, savepoint: Savepoint) -> bool:
    """The savepoint is not backed up to git: git's verdict says the remote does not hold its
    commit (its push failed, or the remote's branch no longer holds it), or this machine's index
    records that its push failed and nothing since showed the remote holding it. A savepoint
    not pushed yet (the worker is on it) is not said to be."""
    return git.status == NOT_ON_REMOTE or (savepoint.layer_2 == Layer2.FAILED and git.status != VERIFIED)


def intact(checks: dict[str, Check]) -> bool:
    """No check of a savepoint failed."""
    return all(c.status != FAILED for c in checks.values())


# The checks of this machine's own copies (the snapshot file, its chunks in logs/): when one of
# them fails, the copy in use is git's, checked against the same root in their place.
LOCAL_COPIES = ("snapshot", "chunks")


def replaced_from_git(checks: dict[str, Check]) -> bool:
    """Only a local copy failed: git's copy, which every other check passed, stands in for it
    (verifier/savepoint.py decides which copy is used; a local copy fails only when git's can
    serve instead)."""
    failed = {name for name, c in checks.items() if c.status == FAILED}
    return bool(failed) and failed <= set(LOCAL_COPIES)


def vouched(checks: dict[str, Check]) -> bool:
    """Intact, and vouched for by a root: this machine's recorded hash (the integrity check) or
    the chain."""
    return intact(checks) and VERIFIED in (checks["integrity"].status, checks["chain"].status)


def copy_vouched(checks: dict[str, Check]) -> bool:
    """The copy in use is vouched for by a root: the savepoint is, or only this machine's copy
    failed and git's, which every other check passed, stands in for it."""
    return (intact(checks) or replaced_from_git(checks)) and VERIFIED in (
        checks["integrity"].status,
        checks["chain"].status,
    )


def check_local_root(found: Snapshot, savepoint: Savepoint, root: str = LOCAL_ROOT) -> None:
    """The bytes are `savepoint` as its index line states it (its hash, which `root` vouches
    for, its sequence, instance and predecessor). Raises Broken naming what differs."""
    n = savepoint.sequence
    check_snapshot(found, n, savepoint.instance, savepoint.snapshot_hash, root)
    check_link(found, n, savepoint.prev_snapshot_hash, f"{root} for savepoint {n - 1}")


def local_root_document(savepoint: Savepoint, found: Snapshot | None, fetch: chunks.Fetch, where: str) -> bytes:
    """The full document of a savepoint whose local bytes the local root vouches for (its index
    line is this machine's, and the bytes and every chunk they list hash as recorded). Raises
    Unrooted when no root can vouch for them, Broken when they contradict it."""
    return contents(locally_rooted(savepoint, found), fetch, where)


def locally_rooted(savepoint: Savepoint, found: Snapshot | None) -> Snapshot:
    """`found`, once the local root vouches for its bytes (not yet for the chunks they list,
    which the caller checks: `contents`, `chunk_problem`). Raises Unrooted or Broken as
    `local_root_document` does."""
    if not savepoint.written_here:
        raise Unrooted(
            "this machine did not write it (its index line carries no tag of this machine's key): no root vouches for it"
        )
    if found is None:
        raise Unrooted(
            f"its snapshot {quoting.path(savepoint.snapshot_file)} is missing, misnamed or not a plain file in logs/"
        )
    check_local_root(found, savepoint)
    return found


def unlinked(savepoint: Savepoint, before: Savepoint | None) -> str | None:
    """Why the hash link from `savepoint` to `before`, the savepoint before it in the same index
    (None: the index holds none), does not hold, or None once it was checked and holds (the
    first savepoint has none to check). A savepoint after one the index does not hold is not
    linked to anything: its link was never checked, so it never holds."""
    n = savepoint.sequence
    if n > 1 and before is None:
        return f"the index holds no savepoint {n - 1}, so savepoint {n}'s hash link to it is not checked: a line was deleted from the middle (`precompact verify` names it)"
    if before is not None and before.snapshot_hash != savepoint.prev_snapshot_hash:
        return f"savepoint {n} does not link to savepoint {before.sequence} in the index"
    return None


def integrity(
    found: Snapshot, savepoint: Savepoint, before: Savepoint | None, unrooted: str | None, chain_verified: bool
) -> Check:
    """The snapshot against its index line: this machine's recorded hash (a root; `unrooted` is
    None), or an index this machine did not write (`unrooted` says which), which counts only
    when the chain verified the same bytes."""
    root = LOCAL_ROOT if unrooted is None else f"{unrooted} names"
    try:
        check_local_root(found, savepoint, root)
    except Broken as e:
        return Check(FAILED, str(e))
    broken = unlinked(savepoint, before)
    if broken is not None:
        return Check(FAILED, broken)
    if unrooted is None:
        return Check(VERIFIED, "hash matches the one this machine recorded; hash link to the previous savepoint holds")
    if chain_verified:
        return Check(
            VERIFIED,
            f"hash is the one the on-chain record vouches for, as its RPC endpoint reported the record (the chain check names it); {unrooted} agrees and its hash link holds",
        )
    return Check(
        NOT_VERIFIED,
        f"consistent with {unrooted}, which no root vouches for; only the on-chain record of the configured authority could",
    )


# --- The verdict on a run ----------------------------------------------------------------------


def headline(savepoints: dict[str, dict[str, Check]], contradicted: str | None = None) -> Check:
    """The one verdict over `savepoints` (a savepoint's name -> its layer -> its check): FAILED
    when a check failed, or when `contradicted` names evidence outside any savepoint's layers
    that contradicts a root (an index line); VERIFIED only when every layer the configuration
    asks for holds every savepoint, checked against a root (a layer it does not ask for is OFF);
    NOT_VERIFIED otherwise, naming each savepoint and layer that is not."""
    if contradicted is not None:
        return Check(FAILED, contradicted)
    failed = [
        (name, layer, c) for name, layers in savepoints.items() for layer, c in layers.items() if c.status == FAILED
    ]
    if failed:
        name, layer, check = failed[0]
        return Check(FAILED, f"{name} [{layer}]: {check.detail}")
    short = [
        f"{name} [{layer}]: {c.status} ({c.detail})"
        for name, layers in savepoints.items()
        for layer, c in layers.items()
        if c.status not in (VERIFIED, OFF)
    ]
    if short:
        held = sum(all(c.status in (VERIFIED, OFF) for c in layers.values()) for layers in savepoints.values())
        return Check(
            NOT_VERIFIED,
            f"{len(savepoints) - held} of {len(savepoints)} savepoint(s) not held and checked on every layer the configuration asks for: "
            + "; ".join(short),
        )
    return Check(VERIFIED, f"{len(savepoints)} savepoint(s) held and checked on every layer the configuration asks for")


# --- One record, as `inspect` reads it ----------------------------------------------------------


def inspected_record(
    roots: Roots, where: Pubkey, owner: str, data: bytes, found: record.Record, match: Savepoint | None, endpoint: str
) -> Check:
    """The verdict on the record `inspect` read at `where` from RPC `endpoint`: the chain root's
    rules, the address being the configured instance's, and (when the local index has its
    savepoint) that it states that savepoint."""
    try:
        if where != roots.address:
            raise Broken(
                "layer 3",
                None,
                f"{where} is not the record address of {quoting.name(roots.instance)} under authority {roots.authority} ({roots.address})",
            )
        check_record(roots, owner, data)
        if match is not None:
            check_record_holds(found, match, match.commit)
    except Broken as e:
        return Check(FAILED, str(e))
    return Check(
        VERIFIED,
        "address, owner, authority, instance and signature checked"
        + (", and it states the local savepoint" if match else "")
        + f", {reported_by(endpoint)}",
        resting_on=reported_by(endpoint),
    )
