"""Proof bundles (docs/proof-bundle.md): one JSON document that proves savepoint N to someone
who trusts only the authority's public key (which they pin: the bundle's own is its claim),
checked offline, or against a cluster the auditor picks.

`build` reads what it needs from the index (which transaction anchored each savepoint) and the
cluster (those transactions), and writes nothing it has not verified with `check`. `check` is
the one place that decides whether a bundle holds; it reads only the bundle (and, when asked,
a snapshot file and a cluster).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from solders.pubkey import Pubkey
from solders.signature import Signature

from precompact.boundary import outside_json, quoting
from precompact.chain import rpc
from precompact.chain import wire as chain
from precompact.config import endpoint
from precompact.config.settings import Config
from precompact.errors import PrecompactError
from precompact.local import savepoint_log
from precompact.proof import history, transaction
from precompact.verifier import verdicts

FORMAT = "precompact-proof-bundle"
VERSION = 2
ZERO_HASH = "0" * 64
_HEX = re.compile(r"[0-9a-f]*")
_TOP = {
    "format",
    "version",
    "instance",
    "instance_id",
    "program_id",
    "authorities",
    "savepoint",
    "snapshot_hash",
    "chain",
}
_LINK = {"sequence", "timestamp", "snapshot_hash", "prev_snapshot_hash", "git_commit", "signature", "transaction"}
_TX = {"signature", "slot", "block_time", "base64"}
_AUTHORITY = {"authority", "record", "first", "continued"}
_CONTINUED = {"kind", "transaction"}
# How a record continues the one before it: rotate_authority (both keys signed) or
# recover_lineage (the new key alone), as the transaction that created it states.
_CONTINUED_BY = {"rotation": "rotated_in", "recovery": "recovered_in"}


class ProofError(PrecompactError):
    """No bundle can be written; the message says why and what to do."""


# --- build ------------------------------------------------------------------------------------


def build(config: Config, sequence: int, with_snapshot: bool = False) -> dict:
    """The bundle for the configured instance's savepoint `sequence`, checked before it is
    returned."""
    try:
        roots = verdicts.roots(config.program_id, config.authority, config.keypair, config.instance)
    except verdicts.NoRoot as e:
        raise ProofError(str(e)) from None
    mine = {s.sequence: s for s in savepoint_log.savepoints(config.logs, config.instance)}
    if sequence not in mine:
        raise ProofError(
            f"savepoint {sequence} of {config.instance!r} is not in the index; `precompact status` lists them"
        )
    unconfirmed = [k for k in range(1, sequence + 1) if not _anchored(mine.get(k))]
    rotations = savepoint_log.read(config.logs).rotations(config.instance)
    if unconfirmed:
        # The savepoint asked for, when it is among them: its number is the one the user knows.
        first = sequence if sequence in unconfirmed else unconfirmed[0]
        if not config.chain_layer:
            raise ProofError(_not_on_chain(config, sequence, first))
        client = rpc.Cluster(config.cluster, timeout=rpc.DEFAULT_TIMEOUT_SECONDS)
        raise ProofError(_not_on_chain(config, sequence, first, _cut_rotation(client, roots, rotations)))
    client = rpc.Cluster(config.cluster, timeout=rpc.DEFAULT_TIMEOUT_SECONDS)
    try:
        written = of_savepoints(roots, client, mine, sequence, rotations)
    except ProofError as e:
        cut = _cut_rotation(client, roots, rotations)
        raise ProofError(f"{e}; {cut}" if cut else str(e)) from None
    if with_snapshot:
        written["snapshot"] = _snapshot(config, mine[sequence])
    verdict = check(written)
    if verdict.status == verdicts.FAILED:
        raise ProofError(f"the bundle built from {endpoint.shown(config.cluster)} does not verify: {verdict.detail}")
    return written


def _anchored(savepoint: savepoint_log.Savepoint | None) -> bool:
    """Whether the index records the savepoint confirmed on chain (as `_anchoring_signatures` reads it)."""
    return savepoint is not None and (
        bool(savepoint.chain_signature) or savepoint.layer_3 == savepoint_log.Layer3.CONFIRMED
    )


def _cut_rotation(client: rpc.Cluster, roots: verdicts.Roots, rotations: list[savepoint_log.Rotation]) -> str | None:
    """What the chain says of a rotation this machine's index does not record (one cut after its
    transaction landed), with the command that finishes it: the configured record frozen and
    naming its successor, or begun as a rotation or recovery into the configured key. None when
    the chain says neither, or cannot be read (the error said first stands alone)."""
    if any(r.new_authority == str(roots.authority) for r in rotations):
        return None
    try:
        held = verdicts.record_at(roots, client)
        if held is not None and held.rotated_to() is not None:
            return f"the record of {roots.authority} was rotated on chain to {held.rotated_to()} after savepoint {held.sequence}, and this machine's index does not record it (a rotation cut short): `precompact key rotate` finishes it"
        began = _first_write(client, roots)
    except (rpc.RpcError, verdicts.Broken):
        return None
    if began is None or began.kind not in _CONTINUED_BY.values() or began.authority != roots.authority:
        return None
    how = "rotation" if began.kind == _CONTINUED_BY["rotation"] else "recovery"
    again = "`precompact key rotate`" if how == "rotation" else "`precompact key rotate --recover`"
    return f"the record of {roots.authority} began as a {how} of another key's lineage, and this machine's index does not record it (a {how} cut short): {again} records it from the chain, then prove again"


def _first_write(client: rpc.Cluster, roots: verdicts.Roots) -> transaction.Write | None:
    """The program's first write to `roots`' record (history.first_write)."""
    parsed = history.first_write(client, roots.program_id, roots.address)
    return parsed.writes[0] if parsed is not None else None


def _not_on_chain(config: Config, sequence: int, first: int, cut: str | None = None) -> str:
    """Why savepoint `sequence` cannot be proven: savepoint `first` (the first of 1..`sequence`,
    all of which the bundle holds, not confirmed on chain) is not; names the fix that works now
    (`cut`: a rotation cut short, which must be finished before it can be confirmed)."""
    missing = (
        f"savepoint {sequence}"
        if first == sequence
        else f"savepoint {first} (the bundle of {sequence} holds 1 to {sequence})"
    )
    if not config.chain_layer:
        return (
            f"{missing} is not on chain: the chain layer is off in .precompact.toml; turn it on with "
            "`precompact init --force --chain devnet` (or a cluster URL), then run `precompact flush`"
        )
    if cut is not None:
        return f"{missing} is not confirmed on chain: {cut}, then `precompact flush`, and prove {sequence} once `precompact status` shows it confirmed"
    return f"{missing} is not confirmed on chain; run `precompact flush` and prove {sequence} once `precompact status` shows it confirmed"


@dataclass(frozen=True)
class _Segment:
    """One authority of the lineage: it signed savepoints `first`.. (until the next one's first);
    `rotation` moved the lineage to it (None for the first)."""

    roots: verdicts.Roots
    first: int
    rotation: savepoint_log.Rotation | None


def of_savepoints(
    roots: verdicts.Roots,
    client: rpc.Cluster,
    mine: dict[int, savepoint_log.Savepoint],
    sequence: int,
    rotations: list[savepoint_log.Rotation] | None = None,
) -> dict:
    """The bundle of savepoints 1..`sequence` (`mine`: this machine's, by sequence), each from the
    transaction that wrote it, as `client` returns it, across the key rotations this machine
    recorded (`rotations`, oldest first; the bundle is checked before anyone trusts it)."""
    segments = _segments(roots, rotations or [], sequence)
    try:
        signatures = _anchoring_signatures(client, segments, mine, sequence)
        links = [_link(client, _signer_of(segments, k).roots, mine[k], signatures[k]) for k in range(1, sequence + 1)]
        authorities = [_authority(client, segment) for segment in segments]
    except rpc.RpcError as e:
        raise ProofError(str(e)) from None
    return {
        "format": FORMAT,
        "version": VERSION,
        "instance": roots.instance,
        "instance_id": roots.instance_id.hex(),
        "program_id": str(roots.program_id),
        "authorities": authorities,
        "savepoint": sequence,
        "snapshot_hash": links[-1]["snapshot_hash"],
        "chain": links,
    }


def _segments(roots: verdicts.Roots, rotations: list[savepoint_log.Rotation], sequence: int) -> list[_Segment]:
    """The authorities that signed savepoints 1..`sequence`, oldest first."""
    from solders.pubkey import Pubkey

    if not rotations:
        return [_Segment(roots, 1, None)]
    first = verdicts.Roots(roots.program_id, Pubkey.from_string(rotations[0].old_authority), roots.instance)
    segments = [_Segment(first, 1, None)]
    for rotation in rotations:
        key = Pubkey.from_string(rotation.new_authority)
        segments.append(
            _Segment(verdicts.Roots(roots.program_id, key, roots.instance), rotation.sequence + 1, rotation)
        )
    if segments[-1].roots.authority != roots.authority:
        raise ProofError(
            f"this machine's index records rotations ending at {segments[-1].roots.authority}, not the configured authority {roots.authority}"
        )
    return [s for s in segments if s.first <= sequence]


def _signer_of(segments: list[_Segment], k: int) -> _Segment:
    return [s for s in segments if s.first <= k][-1]


def _authority(client: rpc.Cluster, segment: _Segment) -> dict:
    roots = segment.roots
    address, bump = chain.record_address(roots.authority, roots.instance_id, roots.program_id)
    continued = None
    if segment.rotation is not None:
        signature = segment.rotation.signature
        fetched = history.transaction(client, signature)
        if fetched is None or fetched.failed:
            state = "not found" if fetched is None else "failed on chain"
            raise ProofError(f"the rotation transaction {signature} to {roots.authority} is {state} on {client.shown}")
        kind = "recovery" if segment.rotation.recovered else "rotation"
        continued = {"kind": kind, "transaction": _transaction(fetched)}
    return {
        "authority": str(roots.authority),
        "record": {
            "address": str(address),
            "seeds": [chain.SAVEPOINT_SEED.hex(), bytes(roots.authority).hex(), roots.instance_id.hex()],
            "bump": bump,
        },
        "first": segment.first,
        "continued": continued,
    }


def _transaction(fetched: history.Fetched) -> dict:
    return {
        "signature": fetched.signature,
        "slot": fetched.slot,
        "block_time": fetched.block_time,
        "base64": base64.b64encode(fetched.data).decode(),
    }


def _anchoring_signatures(
    client: rpc.Cluster, segments: list[_Segment], mine: dict[int, savepoint_log.Savepoint], sequence: int
) -> dict[int, str]:
    """The transaction that wrote each savepoint 1..`sequence`: as the index recorded it, else
    (a confirmation recovered after a lost answer records none) found in its record's history."""
    found = {k: s.chain_signature for k, s in mine.items() if k <= sequence and s.chain_signature}
    missing = [k for k in range(1, sequence + 1) if k not in found]
    for roots in dict.fromkeys(_signer_of(segments, k).roots for k in missing):
        for entry in history.signatures_for_address(client, str(roots.address)):
            if entry.get("err") is not None:
                continue
            fetched = history.transaction(client, entry["signature"])
            if fetched is None:
                continue
            try:
                parsed = transaction.parse(fetched.data, roots.program_id, roots.address)
            except transaction.Unreadable:
                continue
            for write in parsed.writes:
                if write.fields is not None and write.fields.sequence in missing:
                    found[write.fields.sequence] = fetched.signature
    still = [k for k in missing if k not in found]
    if still:
        raise ProofError(
            f"no transaction that wrote savepoint {still[0]} is in the history of {_signer_of(segments, still[0]).roots.address} on {client.shown}"
        )
    return found


def _link(client: rpc.Cluster, roots: verdicts.Roots, savepoint: savepoint_log.Savepoint, signature: str) -> dict:
    fetched = history.transaction(client, signature)
    if fetched is None or fetched.failed:
        state = "not found" if fetched is None else "failed on chain"
        raise ProofError(f"transaction {signature} of savepoint {savepoint.sequence} is {state} on {client.shown}")
    try:
        parsed = transaction.parse(fetched.data, roots.program_id, roots.address)
    except transaction.Unreadable as e:
        raise ProofError(f"transaction {signature} of savepoint {savepoint.sequence}: {e}") from None
    write = next((w for w in parsed.writes if w.fields is not None and w.fields.sequence == savepoint.sequence), None)
    if write is None or write.fields is None or write.signature is None:
        raise ProofError(f"transaction {signature} does not write savepoint {savepoint.sequence} to {roots.address}")
    fields = write.fields
    if fields.snapshot_hash.hex() != savepoint.snapshot_hash:
        raise ProofError(
            f"transaction {signature} wrote snapshot sha256:{fields.snapshot_hash.hex()} as savepoint {savepoint.sequence}, not this machine's sha256:{savepoint.snapshot_hash}: run `precompact verify --ledger`"
        )
    return {
        "sequence": fields.sequence,
        "timestamp": fields.timestamp,
        "snapshot_hash": fields.snapshot_hash.hex(),
        "prev_snapshot_hash": fields.prev_snapshot_hash.hex(),
        "git_commit": fields.git_commit,
        "signature": write.signature.hex(),
        "transaction": _transaction(fetched),
    }


def _snapshot(config: Config, savepoint: savepoint_log.Savepoint) -> dict:
    """The snapshot file as the remote holds it at the savepoint's commit (encrypted there when
    the project encrypts), else this machine's copy."""
    from precompact.boundary import logs_dir
    from precompact.remote import gitstore

    name = str(savepoint.snapshot_file)
    if config.git_layer and savepoint.commit:
        try:
            repo = gitstore.open_repository(gitstore.Target.of(config))
        except gitstore.GitStoreError as e:
            raise ProofError(str(e)) from None
        sealed, clear = gitstore.blob_ids_at(
            repo, [(savepoint.commit, gitstore.sealed_path(name)), (savepoint.commit, name)]
        )
        for blob, encrypted in ((sealed, True), (clear, False)):
            if blob is not None:
                data = repo.odb.stream(bytes.fromhex(blob)).read()
                return {"encrypted": encrypted, "base64": base64.b64encode(data).decode()}
    data = logs_dir.read_snapshot(config.logs, name, savepoint.sequence)
    if data is None:
        raise ProofError(
            f"savepoint {savepoint.sequence}'s snapshot is neither in git nor in logs/; prove it without --with-snapshot"
        )
    return {"encrypted": False, "base64": base64.b64encode(data).decode()}


# --- check ------------------------------------------------------------------------------------


@dataclass
class Verdict:
    status: str  # the verifier's (verdicts.judged)
    detail: str
    sequence: int | None = None
    layer: str | None = None
    notes: list[str] = field(default_factory=list)  # what was not verified, when status is VERIFIED


def check(
    bundle: object,
    snapshot: bytes | None = None,
    cluster: str | None = None,
    authority: str | None = None,
    program_id: str = str(chain.PROGRAM_ID),
    moved_from: dict[str, int] | None = None,
) -> Verdict:
    """The verdict on a bundle: every signature, hash link, the address derivation and each
    anchoring transaction, offline; with `snapshot`, that those bytes are savepoint N; with
    `cluster`, that each transaction is finalized there at its slot. The bundle names its own
    keys, so a bundle anyone signed passes those checks: it is verified only for the pinned
    `authority` (None: not pinned, never verified) and `program_id`, the roots its reader
    trusts, or for a key of `moved_from` (the keys the pinned one's lineage moved from, each
    with the last savepoint it signed: `pins`) up to that savepoint. The verifier turns what the
    checks found into the verdict (verdicts.judged)."""
    notes: list[str] = []

    def checked() -> str:
        top, found = _check_offline(bundle)
        notes.extend(found + _check_snapshot(top, snapshot))
        if cluster is None:
            notes.append(
                "ledger inclusion: no cluster was asked, so no transaction was seen finalized (give --cluster URL)"
            )
        else:
            try:
                _check_ledger(_transactions(top), cluster)
            except rpc.RpcError as e:
                raise verdicts.Unreached(f"ledger inclusion not checked: {e}") from None
        # Last: a bundle that contradicts itself is FAILED whoever signed it.
        signers = _check_pins(top, authority, program_id, moved_from or {})
        n = top["savepoint"]
        where = (
            f"finalized on {endpoint.shown(cluster)} at the slots the bundle names"
            if cluster
            else "not checked (offline; give --cluster URL)"
        )
        authorities = top["authorities"]
        records = ", ".join(a["record"]["address"] for a in authorities)
        rotations = f", {len(authorities) - 1} key rotation(s)" if len(authorities) > 1 else ""
        return (
            f"savepoint {n} of {top['instance']!r}, {signers}: record {records} (address derivation), "
            f"{n} signature(s), {n - 1} hash link(s), {n} anchoring transaction(s){rotations}; ledger inclusion: {where}"
        )

    verdict = verdicts.judged(checked)
    return Verdict(
        verdict.status,
        verdict.detail,
        verdict.sequence,
        verdict.layer,
        notes if verdict.status == verdicts.VERIFIED else [],
    )


def pins(
    authority: str | None, program_id: str | None, config: Config | None
) -> tuple[str | None, str, dict[str, int]]:
    """The roots a bundle is checked against: those given, else `config`'s (the project's
    configured key and program), else no authority (never verified) and the program this
    client was built for; and, when the key is the project's, the keys its lineage moved from
    to it (`key rotate`, as this machine recorded it, sealed: team.your_keys), each with the
    last savepoint it signed, which bundles of savepoints before the rotation carry alone."""
    from precompact.verifier import signed, team

    moved_from: dict[str, int] = {}
    if config is not None:
        configured = signed.configured_key(config)
        if authority is None or authority == configured:
            authority = configured
            keys = team.your_keys(config, configured)
            moved_from = {key: last for key, last in keys.items() if last is not None}
        program_id = program_id or config.program_id
    return authority, program_id or str(chain.PROGRAM_ID), moved_from


def _check_pins(top: dict, authority: str | None, program_id: str, moved_from: dict[str, int]) -> str:
    """How the bundle's keys meet the reader's roots, once they do: its program is the pinned
    one, and the key that signed savepoint N is the pinned authority or was handed the lineage
    from it by rotations (each signed by both keys), or is a key of `moved_from` that signed
    savepoints up to N or beyond before the lineage moved on (a bundle of those ends before the
    rotation, so it carries that key alone). A recovery after the pinned key was signed by the
    new key alone, so it vouches for nothing the pinned key did not sign."""
    if top["program_id"] != program_id:
        raise _fail(
            "pin",
            None,
            f"written for program {top['program_id']}, not the pinned program {program_id}: pass --program-id {top['program_id']} if you trust it",
        )
    keys = [entry["authority"] for entry in top["authorities"]]
    signer = keys[-1]
    if authority is None:
        raise verdicts.Unreached(
            f"signed by {signer}, which you did not pin: pass --authority {signer} if you trust it"
        )
    n = top["savepoint"]
    if authority not in keys and signer in moved_from:
        last = moved_from[signer]
        if n > last:
            raise _fail(
                "pin",
                n,
                f"signed by {signer}, which signed savepoints up to {last} only: after it this machine recorded the lineage moving on to your key {authority}",
            )
        return f"pinned authority {signer} (the lineage moved from it to your key {authority} after savepoint {last}, as this machine recorded), pinned program {program_id}"
    if authority not in keys:
        raise _fail(
            "pin",
            None,
            f'signed by {signer}, not the pinned authority {authority}: if {signer} is a key your lineage moved from (`precompact verify --ledger` names each: "savepoints 1..N under KEY"), pass --authority {signer}',
        )
    handed_on = top["authorities"][len(keys) - keys[::-1].index(authority) :]
    recovered = [entry["authority"] for entry in handed_on if entry["continued"]["kind"] == "recovery"]
    if recovered:
        raise _fail(
            "pin",
            None,
            f"{recovered[0]} took the lineage over from the pinned authority {authority} without its signature (a recovery): pass --authority {signer} if you trust it",
        )
    via = "" if authority == signer else f", rotated to {signer}"
    return f"pinned authority {authority}{via}, pinned program {program_id}"


def _fail(layer: str, sequence: int | None, reason: str) -> verdicts.Broken:
    return verdicts.Broken(layer, sequence, reason)


def _keys(
    value: object, expected: set[str], where: str, sequence: int | None, optional: frozenset[str] = frozenset()
) -> dict:
    if not isinstance(value, dict):
        raise _fail("bundle", sequence, f"{where} is not a JSON object")
    missing, unknown = expected - value.keys(), value.keys() - expected - optional
    if missing or unknown:
        raise _fail("bundle", sequence, f"{where} lacks {sorted(missing)} or has unknown {sorted(unknown)}")
    return value


def _hex(value: object, size: int, name: str, sequence: int | None) -> bytes:
    if not isinstance(value, str) or len(value) != 2 * size or not _HEX.fullmatch(value):
        raise _fail("bundle", sequence, f"{name} is not {size} bytes of lowercase hex")
    return bytes.fromhex(value)


def _int(value: object, name: str, sequence: int | None, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise _fail("bundle", sequence, f"{name} is not an integer in [{low}, {high}]")
    return value


def _pubkey(value: object, name: str) -> Pubkey:
    try:
        key = Pubkey.from_string(value) if isinstance(value, str) else None
    except ValueError:
        key = None
    if key is None or str(key) != value:
        raise _fail("bundle", None, f"{name} is not a base58 public key")
    return key


def _check_offline(bundle: object) -> tuple[dict, list[str]]:
    """The bundle, once every offline rule holds, and what it says was not signed by the key
    before (a recovery)."""
    top = _keys(bundle, _TOP, "the bundle", None, optional=frozenset({"snapshot"}))
    if top["format"] != FORMAT or type(top["version"]) is not int or top["version"] != VERSION:
        raise _fail("bundle", None, f"not a {FORMAT} of version {VERSION} (this verifier reads version {VERSION} only)")
    program_id = _pubkey(top["program_id"], "program_id")
    if not isinstance(top["instance"], str):
        raise _fail("bundle", None, "instance is not a string")
    instance_id = _hex(top["instance_id"], 32, "instance_id", None)
    if instance_id != chain.instance_id(top["instance"]):
        raise _fail("address", None, f"instance_id is not sha256({top['instance']!r})")
    n = _int(top["savepoint"], "savepoint", None, 1, 2**64 - 1)
    segments, notes = _check_authorities(top["authorities"], n, program_id, instance_id)
    links = top["chain"]
    if not isinstance(links, list) or len(links) != n:
        raise _fail("bundle", None, f"chain does not hold savepoints 1..{n}")
    previous = ZERO_HASH
    previous_timestamp, previous_slot = -(2**63), -1
    for k, link in enumerate(links, start=1):
        for authority, _address, first, rotation_slot in segments:
            if first == k and rotation_slot is not None:
                if rotation_slot < previous_slot:
                    raise _fail("rotation", k, f"the rotation to {authority} is before savepoint {k - 1}'s slot")
                previous_slot = rotation_slot
        authority, address, _first, _slot = [s for s in segments if s[2] <= k][-1]
        fields, slot, timestamp = _check_link(link, k, program_id, authority, address, instance_id)
        if fields.prev_snapshot_hash.hex() != previous:
            raise _fail(
                "hash chain",
                k,
                f"prev_snapshot_hash sha256:{fields.prev_snapshot_hash.hex()} is not savepoint {k - 1}'s snapshot_hash sha256:{previous}",
            )
        if timestamp < previous_timestamp or slot < previous_slot:
            raise _fail("hash chain", k, f"its timestamp or slot is before savepoint {k - 1}'s")
        previous, previous_timestamp, previous_slot = fields.snapshot_hash.hex(), timestamp, slot
    if top["snapshot_hash"] != previous:
        raise _fail(
            "bundle", n, f"snapshot_hash {top['snapshot_hash']!r} is not savepoint {n}'s signed sha256:{previous}"
        )
    return top, notes


def _check_record(value: object, authority: Pubkey, instance_id: bytes, program_id: Pubkey, where: str) -> Pubkey:
    """The record address `value` states, once it is the program address of (authority, instance)."""
    record = _keys(value, {"address", "seeds", "bump"}, where, None)
    address = _pubkey(record["address"], f"{where}.address")
    seeds = record["seeds"]
    if not isinstance(seeds, list) or len(seeds) != 3:
        raise _fail("address", None, f"{where}.seeds is not three seeds")
    expected_seeds = [chain.SAVEPOINT_SEED, bytes(authority), instance_id]
    if [_hex(s, len(e), "a seed", None) for s, e in zip(seeds, expected_seeds)] != expected_seeds:
        raise _fail("address", None, f'{where}.seeds are not ["savepoint", authority, instance_id]')
    derived, bump = chain.record_address(authority, instance_id, program_id)
    if (derived, bump) != (address, record["bump"]) or type(record["bump"]) is not int:
        raise _fail(
            "address", None, f"{where}.address is not the program address of those seeds (it is {derived}, bump {bump})"
        )
    return address


def _check_authorities(
    value: object, n: int, program_id: Pubkey, instance_id: bytes
) -> tuple[list[tuple[Pubkey, Pubkey, int, int | None]], list[str]]:
    """Each authority's (key, record, first savepoint, slot of the rotation to it), oldest first,
    once each record is derived from its key and each rotation is the transaction that created
    that record from the one before; and a note for each recovery."""
    if not isinstance(value, list) or not value:
        raise _fail("bundle", None, "authorities is not a non-empty list")
    segments: list[tuple[Pubkey, Pubkey, int, int | None]] = []
    notes: list[tuple[int, str]] = []
    for i, entry in enumerate(value):
        where = f"authorities[{i}]"
        entry = _keys(entry, _AUTHORITY, where, None)
        authority = _pubkey(entry["authority"], f"{where}.authority")
        address = _check_record(entry["record"], authority, instance_id, program_id, f"{where}.record")
        first = _int(entry["first"], f"{where}.first", None, 1, n)
        if not segments:
            if first != 1 or entry["continued"] is not None:
                raise _fail(
                    "rotation", None, f"{where} is the first authority: it starts at savepoint 1, continuing none"
                )
            segments.append((authority, address, first, None))
            continue
        before, before_address, before_first, _ = segments[-1]
        if first < max(2, before_first):
            raise _fail("rotation", first, f"{where}.first {first} does not follow the authority before it")
        kind, slot, signature = _check_continued(
            entry["continued"], where, first, program_id, (before, before_address), (authority, address)
        )
        if kind == "recovery":
            notes.append(
                (len(segments), f"{authority} took over from {before} alone (recovery, transaction {signature})")
            )
        segments.append((authority, address, first, slot))
    ends = [s[2] - 1 for s in segments[1:]] + [n]
    said = [
        f"savepoints {segments[i][2]}..{ends[i]} continue without the old key's signature: {how}" for i, how in notes
    ]
    return segments, said


def _check_continued(
    value: object,
    where: str,
    first: int,
    program_id: Pubkey,
    before: tuple[Pubkey, Pubkey],
    after: tuple[Pubkey, Pubkey],
) -> tuple[str, int, str]:
    """The rotation (or recovery) transaction that created `after`'s record from `before`'s:
    (kind, slot, signature)."""
    continued = _keys(value, _CONTINUED, f"{where}.continued", first)
    kind = continued["kind"]
    if kind not in _CONTINUED_BY:
        raise _fail("bundle", first, f"{where}.continued.kind is not one of {sorted(_CONTINUED_BY)}")
    tx = _keys(continued["transaction"], _TX, f"{where}.continued.transaction", first)
    slot = _int(tx["slot"], "transaction.slot", first, 0, 2**64 - 1)
    if tx["block_time"] is not None:
        _int(tx["block_time"], "transaction.block_time", first, -(2**63), 2**63 - 1)
    try:
        parsed = transaction.parse(_base64(tx["base64"], first), program_id, after[1])
    except transaction.Unreadable as e:
        raise _fail("rotation", first, f"the {kind} transaction: {e}") from None
    if not parsed.legacy or parsed.signature != tx["signature"]:
        raise _fail(
            "rotation", first, f"the {kind} transaction is not a legacy transaction whose id is {tx['signature']!r}"
        )
    writes = parsed.writes
    other = before[0] if kind == "rotation" else before[1]
    if (
        len(writes) != 1
        or writes[0].kind != _CONTINUED_BY[kind]
        or writes[0].problem is not None
        or (writes[0].authority, writes[0].other) != (after[0], other)
    ):
        raise _fail(
            "rotation",
            first,
            f"transaction {parsed.signature} is not the {kind} that created {after[1]} for {after[0]} from {before[0]}'s record",
        )
    return kind, slot, parsed.signature


def _transactions(top: dict) -> list[tuple[int, dict]]:
    """Every transaction the bundle holds, with the savepoint it is about."""
    rotations = [(a["first"], a["continued"]["transaction"]) for a in top["authorities"] if a["continued"]]
    return [(k, link["transaction"]) for k, link in enumerate(top["chain"], start=1)] + rotations


def _check_link(
    link: object, k: int, program_id: Pubkey, authority: Pubkey, address: Pubkey, instance_id: bytes
) -> tuple[chain.SavepointFields, int, int]:
    link = _keys(link, _LINK, f"chain entry {k}", k)
    if link["sequence"] != k or type(link["sequence"]) is not int:
        raise _fail("bundle", k, f"chain entry {k} says sequence {link['sequence']!r}")
    commit = link["git_commit"]
    if not isinstance(commit, str) or len(commit) != chain.GIT_COMMIT_LEN or not _HEX.fullmatch(commit):
        raise _fail("bundle", k, f"git_commit is not {chain.GIT_COMMIT_LEN} lowercase hex digits")
    fields = chain.SavepointFields(
        sequence=k,
        timestamp=_int(link["timestamp"], "timestamp", k, -(2**63), 2**63 - 1),
        instance_id=instance_id,
        snapshot_hash=_hex(link["snapshot_hash"], 32, "snapshot_hash", k),
        prev_snapshot_hash=_hex(link["prev_snapshot_hash"], 32, "prev_snapshot_hash", k),
        git_commit=commit,
    )
    signature = _hex(link["signature"], 64, "signature", k)
    message = fields.signed_message(address, program_id)
    if not Signature.from_bytes(signature).verify(authority, message):
        raise _fail("signature", k, f"the signature does not verify: not {authority}'s over savepoint {k} at {address}")
    tx = _keys(link["transaction"], _TX, f"chain entry {k}'s transaction", k)
    slot = _int(tx["slot"], "transaction.slot", k, 0, 2**64 - 1)
    if tx["block_time"] is not None:
        _int(tx["block_time"], "transaction.block_time", k, -(2**63), 2**63 - 1)
    data = _base64(tx["base64"], k)
    try:
        parsed = transaction.parse(data, program_id, address)
    except transaction.Unreadable as e:
        raise _fail("transaction", k, f"its transaction: {e}") from None
    if not parsed.legacy:
        raise _fail(
            "transaction",
            k,
            f"its transaction {parsed.signature} is not a legacy transaction (version 1 bundles hold only those)",
        )
    if parsed.signature != tx["signature"]:
        raise _fail(
            "transaction",
            k,
            f"transaction.signature {tx['signature']!r} is not the transaction's own id {parsed.signature}",
        )
    saves = [w for w in parsed.writes if w.kind == "savepoint"]
    if len(parsed.writes) != 1 or len(saves) != 1:
        raise _fail(
            "transaction",
            k,
            f"transaction {parsed.signature} does not hold exactly one savepoint instruction on the record",
        )
    write = saves[0]
    if write.problem is not None:
        raise _fail("transaction", k, f"transaction {parsed.signature}'s savepoint instruction: {write.problem}")
    if write.authority != authority or write.fields != fields or write.signature != signature:
        raise _fail(
            "transaction",
            k,
            f"transaction {parsed.signature} wrote a savepoint other than this entry (its authority, fields or signature differ)",
        )
    return fields, slot, fields.timestamp


def _base64(value: object, k: int) -> bytes:
    try:
        data = base64.b64decode(value, validate=True) if isinstance(value, str) else None
    except (binascii.Error, ValueError):
        data = None
    if data is None or base64.b64encode(data).decode() != value:
        raise _fail("bundle", k, "transaction.base64 is not canonical base64")
    return data


def _check_snapshot(bundle: dict, given: bytes | None) -> list[str]:
    """Notes on what could not be checked; raises Broken when a clear-text copy of the snapshot,
    the one the bundle embeds or the file given, is not savepoint N: each copy is checked, since
    the embedded one travels on with the bundle whatever file its verifier held."""
    n = bundle["savepoint"]
    copies: list[tuple[bytes, str]] = []
    notes: list[str] = []
    embedded = bundle.get("snapshot")
    if embedded is not None:
        embedded = _keys(embedded, {"encrypted", "base64"}, "snapshot", n)
        if type(embedded["encrypted"]) is not bool:
            raise _fail("bundle", n, "snapshot.encrypted is not true or false")
        try:
            data = base64.b64decode(embedded["base64"], validate=True) if isinstance(embedded["base64"], str) else None
        except (binascii.Error, ValueError):
            data = None
        if data is None or base64.b64encode(data).decode() != embedded["base64"]:
            raise _fail("bundle", n, "snapshot.base64 is not canonical base64")
        if embedded["encrypted"]:
            fix = "the file given was" if given is not None else "decrypt it and give --snapshot"
            notes.append(f"the embedded snapshot is encrypted: its content was not checked ({fix})")
        else:
            copies.append((data, "the bundle (its embedded copy)"))
    if given is not None:
        copies.append((given, "the file given (--snapshot)"))
    if not copies:
        return notes or ["no snapshot given: its bytes were not checked (give --snapshot PATH)"]
    previous = bundle["chain"][-1]["prev_snapshot_hash"]
    for data, where in copies:
        found = verdicts.read_snapshot(data, where)
        verdicts.check_snapshot(
            found,
            n,
            bundle["instance"],
            bundle["snapshot_hash"],
            f"savepoint {n}'s signed snapshot_hash is",
            layer="snapshot",
        )
        verdicts.check_link(found, n, None if previous == ZERO_HASH else previous, "the signed prev_snapshot_hash is")
    return notes


def _check_ledger(transactions: list[tuple[int, dict]], url: str) -> None:
    client = rpc.Cluster(url, timeout=rpc.DEFAULT_TIMEOUT_SECONDS)
    signatures = [tx["signature"] for _, tx in transactions]
    for (k, tx), status in zip(transactions, history.statuses(client, signatures)):
        if status is None:
            raise _fail("ledger", k, f"transaction {tx['signature']} is not in the ledger of {client.shown}")
        if status.get("err") is not None:
            raise _fail("ledger", k, f"transaction {tx['signature']} failed on chain: {json.dumps(status['err'])}")
        if status.get("slot") != tx["slot"]:
            raise _fail(
                "ledger",
                k,
                f"transaction {tx['signature']} is at slot {status.get('slot')!r} on {client.shown}, not {tx['slot']}",
            )
        if status.get("confirmationStatus") != "finalized":
            raise verdicts.Unreached(
                f"transaction {tx['signature']} at slot {tx['slot']} is {status.get('confirmationStatus')!r}, not yet finalized on {client.shown}",
                k,
            )
        fetched = history.transaction(client, tx["signature"], commitment="finalized")
        if fetched is None:
            raise _fail(
                "ledger", k, f"transaction {tx['signature']} is not returned by getTransaction on {client.shown}"
            )
        if base64.b64encode(fetched.data).decode() != tx["base64"] or fetched.slot != tx["slot"]:
            raise _fail(
                "ledger",
                k,
                f"the ledger of {client.shown} holds other bytes or another slot for transaction {tx['signature']}",
            )
        if fetched.block_time != tx["block_time"]:
            raise _fail(
                "ledger",
                k,
                f"transaction {tx['signature']}'s block time is {fetched.block_time} on {client.shown}, not {tx['block_time']}",
            )
        if fetched.failed:
            raise _fail("ledger", k, f"transaction {tx['signature']} failed on chain")


def read(path: Path) -> object:
    """The bundle in `path`, within outside_json's limits: its size is checked before it is read,
    its depth and that no object repeats a key as it is decoded; one line naming the file
    otherwise."""
    advice = "give a bundle written by `precompact prove`"
    try:
        with path.open("rb") as f:
            data = f.read(outside_json.MAX_BUNDLE_BYTES + 1)
    except OSError as e:
        raise ProofError(f"{path} cannot be read ({quoting.os_error(e)}); {advice}") from None
    if len(data) > outside_json.MAX_BUNDLE_BYTES:
        raise ProofError(f"{path} is larger than {outside_json.MAX_BUNDLE_BYTES >> 30} GiB; {advice}")
    try:
        return outside_json.loads_unique(data)
    except outside_json.RepeatedKey as e:
        raise ProofError(f"{path} is not a bundle: {e}; {advice}") from None
    except ValueError as e:
        raise ProofError(f"{path} is not JSON ({quoting.inline(str(e))}); {advice}") from None
