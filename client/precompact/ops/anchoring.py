"""Layer 3 over JSON-RPC: posts queued savepoints to the program strictly in sequence order.

Each savepoint is posted only after its git commit exists (the record names it), and only as
the direct successor of what the chain holds; a savepoint the chain already holds (say, a post
whose confirmation was lost) is recognised by its hash and recorded, never posted twice. Older
savepoints the index shows unconfirmed (a logs/ rebuilt by `precompact restore`) are confirmed
only when the walk back from the record through their own snapshot bytes verifies them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

from solders.hash import Hash
from solders.keypair import Keypair
from solders.transaction import Transaction

from precompact.chain import record, rpc
from precompact.chain import wire as chain
from precompact.errors import PrecompactError
from precompact.local import provenance, savepoint_log
from precompact.verifier import signed, verdicts

CONFIRM_POLL_SECONDS = 0.05
NO_COMMIT = "0" * 40


class ChainError(PrecompactError):
    """Layer 3 could not proceed; the message says why and what to do."""


def post_pending(
    cluster: str,
    keypair_path: Path,
    program_id: str,
    instance: str,
    logs: Path,
    git_layer: bool = True,
    authority: str | None = None,
    keypair_setting: str = "chain.keypair",
) -> Iterator[savepoint_log.Outcome]:
    """Posts every savepoint not yet confirmed on chain, yielding each one's outcome as it
    happens (the caller records it). Stops at the first savepoint that cannot go.
    Without the git layer the record names no commit (40 zeros). A savepoint is confirmed only
    once the record read back from its address passes the verifier's chain check and states it."""
    index = savepoint_log.read(logs)
    mine = savepoint_log.of_instance(index.savepoints, instance)
    pending = [s for s in mine if s.layer_3 != savepoint_log.Layer3.CONFIRMED]
    if not pending:
        return
    closed = index.closing(instance)
    if closed is not None:
        yield _failed(pending[0], closed_note(closed))
        return
    try:
        signer = key_of(program_id, keypair_path, authority, keypair_setting)
    except ChainError as e:
        yield _failed(pending[0], e)
        return
    # A line the user's key signed is the user's own (restored from the remote): the chain may
    # confirm it; only one this machine wrote is ever posted.
    if not signed.line_vouched(pending[0], str(signer.pubkey())):
        # Never posted, nor walked past: one line for the whole logs/, naming the fix.
        unvouched = [(s.instance, s.sequence) for s in mine if not signed.line_vouched(s, str(signer.pubkey()))]
        yield _failed(pending[0], provenance.unvouched_note(logs, unvouched, git_layer))
        return
    roots = verdicts.Roots(chain.PROGRAM_ID, signer.pubkey(), instance)
    client = rpc.Cluster(cluster, timeout=rpc.DEFAULT_TIMEOUT_SECONDS)
    current = pending[0]
    try:
        held = _record_to_extend(client, signer, roots, savepoint_log.highest_confirmed(mine))
        below = [s for s in pending if s.sequence < held.sequence]
        for outcome in _walked_back(held, roots, mine, below, logs, client.shown):
            current = outcome.savepoint
            yield outcome
            if outcome.failed:
                return
        for savepoint in pending[len(below) :]:
            current = savepoint
            commit = savepoint.commit or (None if git_layer else NO_COMMIT)
            if commit is None:
                yield _failed(savepoint, "waiting for the git commit (Layer 2) that the on-chain record names")
                return
            if savepoint.sequence == held.sequence and held.snapshot_hash.hex() == savepoint.snapshot_hash:
                # Posted before, its confirmation lost: confirmed only if the record states it all.
                verdicts.check_record_holds(held, savepoint, commit)
                yield _confirmed(savepoint, signature=None, slot=held.slot, recovered=True, endpoint=client.shown)
                continue
            if savepoint.sequence != held.sequence + 1:
                yield _failed(
                    savepoint,
                    f"the chain holds sequence {held.sequence}; savepoint {savepoint.sequence} cannot follow it (run `precompact verify`)",
                )
                return
            if not savepoint.written_here:
                yield _not_written_here(savepoint)
                return
            signature, held = _post(client, signer, roots, savepoint, held, commit)
            yield _confirmed(savepoint, signature=signature, slot=held.slot, recovered=False, endpoint=client.shown)
    except (rpc.RpcError, ChainError) as e:
        yield _failed(current, e)
    except verdicts.Broken as e:
        yield _failed(current, f"the record read back is not trustworthy: {e}")


def _walked_back(
    held: record.Record,
    roots: verdicts.Roots,
    mine: list[savepoint_log.Savepoint],
    below: list[savepoint_log.Savepoint],
    logs: Path,
    endpoint: str,
) -> Iterator[savepoint_log.Outcome]:
    """Each savepoint under the record's that the index shows unconfirmed, confirmed once the
    walk back from the record through the snapshots' own bytes verifies it as its index line
    states it; the first that does not fails, and the rest wait."""
    if not below:
        return
    local = verdicts.LocalSnapshots(logs)
    by_sequence = {s.sequence: s for s in mine}
    walked = verdicts.walk_back(held, roots, by_sequence, below[0].sequence, lambda s, _: local.get(s), endpoint)
    for savepoint in below:
        check = walked.get(savepoint.sequence)
        if check is None or check.status != verdicts.VERIFIED or check.sha256 != savepoint.snapshot_hash:
            why = check.detail if check is not None else "it is not linked to the record"
            yield _failed(savepoint, f"the chain holds sequence {held.sequence}; savepoint {savepoint.sequence}: {why}")
            return
        yield _confirmed(savepoint, signature=None, slot=None, recovered=True, endpoint=endpoint)


def confirmed_by_record(
    held: record.Record,
    roots: verdicts.Roots,
    mine: list[savepoint_log.Savepoint],
    logs: Path,
    endpoint: str,
) -> list[savepoint_log.Outcome]:
    """The confirmations the verified record `held` (at `roots`) gives the savepoints up to its
    own that the index does not show confirmed: each linked to it through the snapshots' own
    bytes, down to the first that is not (which `flush` names when it gets there)."""
    below = [s for s in mine if s.sequence <= held.sequence and s.layer_3 != savepoint_log.Layer3.CONFIRMED]
    return [outcome for outcome in _walked_back(held, roots, mine, below, logs, endpoint) if not outcome.failed]


def closed_note(closing: savepoint_log.Closing) -> str:
    """What Layer 3 says of an instance whose record `precompact close` closed: nothing more is
    anchored (a new record would start at savepoint 1), and what to do, if anything."""
    return (
        f"the on-chain record of {closing.instance!r} at {closing.address} was closed by `precompact close` "
        f"(transaction {closing.signature}): no savepoint of it is anchored on chain any more. For on-chain "
        "proof of new savepoints start a new instance (`precompact init --force --chain <cluster> --instance "
        "<new name>`); otherwise nothing to do: git and this machine still keep and check them"
    )


def _not_written_here(savepoint: savepoint_log.Savepoint) -> savepoint_log.Outcome:
    """A savepoint the user's key signed on another machine, past what the chain holds: signing
    a savepoint this machine did not write would let the chain vouch for bytes it never held."""
    return _failed(
        savepoint,
        f"savepoint {savepoint.sequence} was not written by this machine (its index line carries no tag of this machine's key), so it is not posted from here: `precompact flush` on the machine that wrote it posts it",
    )


def key_of(program_id: str, keypair_path: Path, authority: str | None, setting: str = "chain.keypair") -> Keypair:
    """The configured key, once the program and the authority are the ones this client serves;
    `setting` is what named the keypair (chain.keypair, or PRECOMPACT_KEYPAIR), for the fix."""
    if program_id != str(chain.PROGRAM_ID):
        raise ChainError(
            f"chain.program_id {program_id} is not the program this client was built for ({chain.PROGRAM_ID})"
        )
    try:
        signer = chain.load_keypair(keypair_path)
    except chain.KeypairError as e:
        raise ChainError(str(e), unquoted=e.unquoted) from None
    if authority is not None and str(signer.pubkey()) != authority:
        raise ChainError(
            f"keypair {keypair_path} ({setting}) is {signer.pubkey()}, not chain.authority {authority}; point {setting} at that key's file, or, if that key is lost, `precompact key rotate --recover` continues the lineage under a new key"
        )
    return signer


def _record_to_extend(client: rpc.Cluster, signer: Keypair, roots: verdicts.Roots, confirmed: int) -> record.Record:
    """The instance's record as the chain holds it (created if this is its first savepoint),
    unless its history was reset under savepoints this machine saw confirmed."""
    held = verdicts.record_at(roots, client)
    if held is None and confirmed:
        raise ChainError(
            f"savepoint {confirmed} was confirmed at {roots.address}, which holds no record now: it was closed (history reset); a new instance name starts a new record"
        )
    if held is None:
        held = _initialize(client, signer, roots)
    if held.frozen:
        raise ChainError(
            f"the record at {roots.address} was rotated to {held.rotated_to()} and takes no more savepoints; `precompact key rotate` finishes the rotation on the machine that holds that key (it records it and points chain.keypair at it)"
        )
    reset = verdicts.history_reset(roots, held.sequence, confirmed)
    if reset is not None:
        raise ChainError(reset)
    return held


def _post(
    client: rpc.Cluster,
    signer: Keypair,
    roots: verdicts.Roots,
    savepoint: savepoint_log.Savepoint,
    held: record.Record,
    commit: str,
) -> tuple[str, record.Record]:
    """Posts `savepoint` as the successor of `held`; returns the signature and the record read
    back, once it states the savepoint."""
    fields = chain.SavepointFields(
        sequence=savepoint.sequence,
        timestamp=int(savepoint.unix_timestamp),
        instance_id=roots.instance_id,
        snapshot_hash=bytes.fromhex(savepoint.snapshot_hash),
        prev_snapshot_hash=held.snapshot_hash,
        git_commit=commit[: chain.GIT_COMMIT_LEN],
    )
    signature = send(client, signer, chain.savepoint_instructions(signer, fields, metadata(savepoint)))
    after = verdicts.record_at(roots, client)
    if after is None:
        raise ChainError(f"transaction {signature} confirmed, but {roots.address} holds no record")
    verdicts.check_record_holds(after, savepoint, commit)
    return signature, after


def metadata(savepoint: savepoint_log.Savepoint) -> bytes:
    """The on-chain metadata: trigger and token usage, compact JSON within 256 bytes."""
    fields = {
        "trigger": savepoint.trigger,
        "tokens_used": savepoint.tokens_used,
        "tokens_remaining": savepoint.tokens_remaining,
    }
    return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()[: chain.METADATA_MAX_LEN]


def _initialize(client: rpc.Cluster, signer: Keypair, roots: verdicts.Roots) -> record.Record:
    """Creates the instance's record (the program takes over an address someone sent lamports
    to); returns it as the chain then holds it."""
    try:
        send(client, signer, [chain.initialize_instruction(signer.pubkey(), signer.pubkey(), roots.instance_id)])
    except rpc.RpcError:
        if verdicts.record_at(roots, client) is None:
            raise
    held = verdicts.record_at(roots, client)  # ours, or created meanwhile by another machine with this key
    if held is None:
        raise ChainError(f"initialize confirmed, but {roots.address} holds no record")
    return held


def send(client: rpc.Cluster, payer: Keypair, instructions, cosigners: tuple[Keypair, ...] = ()) -> str:
    """Sends `instructions` paid by `payer` and signed by it and `cosigners`; returns the
    signature once the cluster confirms it."""
    try:
        blockhash = Hash.from_string(client.latest_blockhash())
    except ValueError:
        raise rpc.RpcError(
            f"cluster {client.shown} answered getLatestBlockhash with an invalid blockhash; check chain.cluster"
        ) from None
    tx = Transaction.new_signed_with_payer(instructions, payer.pubkey(), [payer, *cosigners], blockhash)
    signature = client.send_transaction(bytes(tx))
    deadline = time.monotonic() + rpc.DEFAULT_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        status = client.signature_status(signature)
        if status is not None and status.get("err") is not None:
            raise ChainError(f"transaction {signature} failed on chain: {status['err']}")
        # Confirmed, not just processed: the record is read back at the confirmed level.
        if status is not None and status.get("confirmationStatus") in ("confirmed", "finalized"):
            return signature
        time.sleep(CONFIRM_POLL_SECONDS)
    raise ChainError(
        f"transaction {signature} not confirmed within {rpc.DEFAULT_TIMEOUT_SECONDS} s; it will be checked again on the next flush"
    )


def _confirmed(
    savepoint, signature: str | None, slot: int | None, recovered: bool, endpoint: str
) -> savepoint_log.Outcome:
    """The confirmation, with the RPC endpoint whose answers it rests on (its shown form: the
    index is pushed with Layer 2, and a hosted endpoint's URL holds the user's API key): `status`
    and the brief say whose word it was."""
    details = {
        "signature": signature,
        "slot": slot,
        "endpoint": endpoint,
        **({"recovered": True} if recovered else {}),
    }
    return savepoint_log.Outcome(savepoint, savepoint_log.Event.LAYER_3_CONFIRMED, details)


def _failed(savepoint, reason: str | PrecompactError) -> savepoint_log.Outcome:
    """Layer 3 failed for `savepoint`: precompact's own words, or an error whose message quotes
    outside words once (said now) while the index keeps them as said (`unquoted`): `status`
    quotes the index's reason whole, so it is quoted once there too."""
    if isinstance(reason, PrecompactError):
        said = str(reason)
        return savepoint_log.Outcome(
            savepoint, savepoint_log.Event.LAYER_3_FAILED, {"reason": reason.unquoted}, said=said
        )
    return savepoint_log.Outcome(savepoint, savepoint_log.Event.LAYER_3_FAILED, {"reason": reason})
