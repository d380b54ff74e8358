"""Layer 3 over JSON-RPC: posts queued savepoints to the program strictly in sequence order.

Each savepoint is posted only after its git commit exists (the record names it), and only as
the direct successor of what the chain holds; a savepoint the chain already holds (say, a post
whose confirmation was lost) is recognised by its hash and recorded, never posted twice.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from solders.hash import Hash
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.transaction import Transaction

from precompact import chain, rpc, savepoint_log

RPC_TIMEOUT_SECONDS = 10
CONFIRM_POLL_SECONDS = 0.05
RECORD_SEQUENCE = slice(241, 249)
RECORD_SNAPSHOT_HASH = slice(73, 105)
NO_COMMIT = "0" * 40
SYSTEM_PROGRAM = "11111111111111111111111111111111"


class ChainError(Exception):
    """Layer 3 could not proceed; the message says why and what to do."""


class ClusterUnreachable(ChainError):
    """The cluster gave no usable answer: what it holds is unknown, not wrong."""


class RecordMissing(ChainError):
    """The instance has no record on chain yet."""


def load_keypair(path: Path) -> Keypair:
    try:
        values = json.loads(path.read_text())
    except FileNotFoundError:
        raise ChainError(f"keypair {path} does not exist; run `precompact init` or set chain.keypair") from None
    except (OSError, ValueError) as e:
        raise ChainError(f"keypair {path} is unreadable or not JSON ({e}); point chain.keypair at a Solana CLI keypair file") from None
    if not (isinstance(values, list) and len(values) == 64 and all(isinstance(v, int) and 0 <= v < 256 for v in values)):
        raise ChainError(f"keypair {path} is not a Solana CLI keypair (a JSON array of 64 bytes)")
    try:
        return Keypair.from_bytes(bytes(values))
    except ValueError as e:
        raise ChainError(f"keypair {path} is not a valid ed25519 keypair ({e})") from None


def post_pending(cluster: str, keypair_path: Path, program_id: str, instance: str, logs: Path, git_layer: bool = True, authority: str | None = None) -> list[str]:
    """Posts every savepoint not yet confirmed on chain; returns the problems met (each also
    appended to the index as LAYER_3_FAILED). Stops at the first savepoint that cannot go.
    Without the git layer the record names no commit (40 zeros)."""
    pending = [s for s in savepoint_log.savepoints(logs, instance) if s.layer_3 != "CONFIRMED"]
    if not pending:
        return []
    if program_id != str(chain.PROGRAM_ID):
        return _failed(logs, pending[0], f"chain.program_id {program_id} is not the program this client was built for ({chain.PROGRAM_ID})")
    expected = authority
    try:
        authority = load_keypair(keypair_path)
    except ChainError as e:
        return _failed(logs, pending[0], str(e))
    if expected is not None and str(authority.pubkey()) != expected:
        return _failed(logs, pending[0], f"keypair {keypair_path} is {authority.pubkey()}, not chain.authority {expected}; point chain.keypair at that key's file")
    instance_id = chain.instance_id(instance)
    record, _ = chain.record_address(authority.pubkey(), instance_id)
    client = rpc.Cluster(cluster, timeout=RPC_TIMEOUT_SECONDS)
    current = pending[0]
    try:
        held = _held(client, record)
        if held is None:
            held = _initialize(client, authority, instance_id, record)
        for savepoint in pending:
            current = savepoint
            commit = savepoint.commit or (None if git_layer else NO_COMMIT)
            if commit is None:
                return _failed(logs, savepoint, "waiting for the git commit (Layer 2) that the on-chain record names")
            sequence, chain_hash = held
            local_hash = bytes.fromhex(savepoint.snapshot_hash)
            if savepoint.sequence == sequence and chain_hash == local_hash:
                _confirmed(logs, savepoint, signature=None, slot=None, recovered=True)
                continue
            if savepoint.sequence != sequence + 1:
                return _failed(logs, savepoint, f"the chain holds sequence {sequence}; savepoint {savepoint.sequence} cannot follow it (run `precompact verify`)")
            fields = chain.SavepointFields(
                sequence=savepoint.sequence,
                timestamp=int(savepoint.created.get("unix_timestamp", 0)),
                instance_id=instance_id,
                snapshot_hash=local_hash,
                prev_snapshot_hash=chain_hash,
                git_commit=commit[: chain.GIT_COMMIT_LEN],
            )
            signature, slot = _send(client, authority, chain.savepoint_instructions(authority, fields, metadata(savepoint.created)))
            _confirmed(logs, savepoint, signature=signature, slot=slot, recovered=False)
            held = (savepoint.sequence, local_hash)
    except (rpc.RpcError, ChainError) as e:
        return _failed(logs, current, str(e))
    return []


def metadata(created: dict) -> bytes:
    """The on-chain metadata: trigger and token usage, compact JSON within 256 bytes."""
    fields = {"trigger": created.get("trigger"), "tokens_used": created.get("tokens_used_this_session"), "tokens_remaining": created.get("tokens_remaining")}
    return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()[: chain.METADATA_MAX_LEN]


def fetch_record(client: rpc.Cluster, record: Pubkey) -> bytes | None:
    """The record account's data, None when it does not exist; refuses a foreign owner."""
    account = client.account(str(record))
    return None if account is None else _record_data(record, account)


def _record_data(record: Pubkey, account: tuple[str, bytes]) -> bytes:
    owner, data = account
    if owner != str(chain.PROGRAM_ID):
        raise ChainError(f"account {record} is owned by {owner}, not the precompact program")
    return data


def _held(client: rpc.Cluster, record: Pubkey) -> tuple[int, bytes] | None:
    """(sequence, snapshot hash) the record holds; None before initialize, including when only
    lamports were sent to the address (initialize takes such an account over)."""
    account = client.account(str(record))
    if account is None or account == (SYSTEM_PROGRAM, b""):
        return None
    data = _record_data(record, account)
    return int.from_bytes(data[RECORD_SEQUENCE], "little"), data[RECORD_SNAPSHOT_HASH]


def _initialize(client: rpc.Cluster, authority: Keypair, instance_id: bytes, record: Pubkey) -> tuple[int, bytes]:
    """Creates the instance's record; returns what the chain then holds."""
    try:
        _send(client, authority, [chain.initialize_instruction(authority.pubkey(), authority.pubkey(), instance_id)])
    except rpc.RpcError:
        account = client.account(str(record))
        if account is None:
            raise
        if account[0] == SYSTEM_PROGRAM:
            # Anyone can send lamports to the address; Anchor then creates the record with
            # CreateAccountAllowPrefund, which older system programs refuse.
            raise ChainError(f"someone sent lamports to the record address {record} before it was created, and this cluster cannot take it over; choose another instance name with `precompact init --force --instance NAME`") from None
        held = _held(client, record)  # created meanwhile by another machine with this key
        if held is None:
            raise
        return held
    return 0, bytes(32)


def _send(client: rpc.Cluster, payer: Keypair, instructions) -> tuple[str, int]:
    try:
        blockhash = Hash.from_string(client.latest_blockhash())
    except ValueError:
        raise rpc.RpcError(f"cluster {client.url} answered getLatestBlockhash with an invalid blockhash; check chain.cluster") from None
    tx = Transaction.new_signed_with_payer(instructions, payer.pubkey(), [payer], blockhash)
    signature = client.send_transaction(bytes(tx))
    deadline = time.monotonic() + RPC_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        status = client.signature_status(signature)
        if status is not None and status.get("err") is not None:
            raise ChainError(f"transaction {signature} failed on chain: {status['err']}")
        if status is not None and status.get("confirmationStatus") is not None:
            return signature, status.get("slot")
        time.sleep(CONFIRM_POLL_SECONDS)
    raise ChainError(f"transaction {signature} not confirmed within {RPC_TIMEOUT_SECONDS} s; it will be checked again on the next flush")


def _confirmed(logs: Path, savepoint, signature: str | None, slot: int | None, recovered: bool) -> None:
    details = {"signature": signature, "slot": slot, **({"recovered": True} if recovered else {})}
    savepoint_log.mark(logs, savepoint, "LAYER_3_CONFIRMED", **details)


def _failed(logs: Path, savepoint, reason: str) -> list[str]:
    savepoint_log.mark(logs, savepoint, "LAYER_3_FAILED", reason=reason)
    return [reason]
