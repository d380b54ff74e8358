"""Reading the on-chain record: one record (the configured instance's, or the account at an
address) fetched, decoded, put through the verifier's chain check and compared with the local
index; and each instance's ledger, its record's whole history against the index. Imports the
Solana stack only inside the functions that use it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from precompact.boundary import quoting
from precompact.config.settings import Config, is_pubkey
from precompact.errors import PrecompactError
from precompact.local import savepoint_log

if TYPE_CHECKING:
    from precompact.chain import record
    from precompact.proof.ledger import Ledger
    from precompact.verifier import verdicts


class InspectError(PrecompactError):
    """No record could be read; the message says why and what to do."""


@dataclass
class Inspection:
    address: str
    record: record.Record
    verdict: verdicts.Check  # the verifier's chain check on this record
    signature_valid: bool  # the configured authority's signature over it, at this address
    local_index: str


def inspect(config: Config, instance: str | None = None, address: str | None = None) -> Inspection:
    """Fetches and decodes the on-chain record, puts it through the verifier's chain check and
    compares it with the local index. Raises InspectError with a one-line reason."""
    from solders.pubkey import Pubkey

    from precompact.verifier import verdicts

    try:
        roots = verdicts.roots(config.program_id, config.authority, config.keypair, instance or config.instance)
    except verdicts.NoRoot as e:
        raise InspectError(str(e)) from None
    if address is not None and not is_pubkey(address):
        raise InspectError(f"--address {address!r} is not a base58 public key")
    where = Pubkey.from_string(address) if address is not None else roots.address
    local = {s.sequence: s for s in savepoint_log.savepoints(config.logs) if s.instance == roots.instance}
    confirmed = savepoint_log.highest_confirmed(local.values()) if where == roots.address else 0
    owner, data, found = _fetch_record(config.cluster, roots, where, confirmed)
    match = local.get(found.sequence)
    verdict = verdicts.inspected_record(roots, where, owner, data, found, match, config.cluster)
    signed = where == roots.address and verdicts.signature_valid(found, roots)
    return Inspection(str(where), found, verdict, signed, _compared_with_index(found, match))


def _fetch_record(cluster: str, roots: verdicts.Roots, where, confirmed: int) -> tuple[str, bytes, record.Record]:
    """The account at `where`, decoded; `confirmed` is the last savepoint this machine's index
    marks confirmed there (0: none), for what a missing record means."""
    from precompact.chain import record, rpc

    client = rpc.Cluster(cluster, timeout=rpc.DEFAULT_TIMEOUT_SECONDS)
    try:
        account = client.account(str(where))
    except rpc.RpcError as e:
        raise InspectError(str(e)) from None
    if account is None and confirmed:
        # Posting again cannot help: the index says the chain took them.
        raise InspectError(
            f"no savepoint record at {where} on {client.shown}, though this machine's index marks savepoint {confirmed} confirmed there: it was closed, or this is not the cluster it was posted to; `precompact verify` names the first broken link"
        )
    if account is None:
        raise InspectError(
            f"no savepoint record at {where} on {client.shown}; run `precompact flush` to post queued savepoints"
        )
    owner, data = account
    try:
        return owner, data, record.decode(data)
    except record.RecordError as e:
        if owner != str(roots.program_id):
            raise InspectError(
                f"account {where} is owned by {quoting.inline(owner)}, not the precompact program {roots.program_id}"
            ) from None
        raise InspectError(f"account {where}: {e}") from None


def _compared_with_index(found: record.Record, match: savepoint_log.Savepoint | None) -> str:
    if match is None:
        return f"sequence {found.sequence} is not in the local index"
    if match.snapshot_hash == found.snapshot_hash.hex():
        return f"matches local savepoint {match.sequence}"
    return f"DIFFERS from local savepoint {match.sequence} (local sha256:{match.snapshot_hash})"


def record_json(found: Inspection) -> dict:
    """The inspected record as JSON (bytes as lowercase hex), with the verifier's verdict."""
    from solders.pubkey import Pubkey

    from precompact.chain import record

    out = record.to_json(found.record, Pubkey.from_string(found.address))
    out.update(
        {
            "lineage": found.record.lineage(),
            "signature_valid": found.signature_valid,
            "verdict": found.verdict.status,
            "verdict_detail": found.verdict.detail,
            "unsigned_fields": list(record.UNSIGNED_FIELDS),
            "local_index": found.local_index,
        }
    )
    return out


def ledgers(config: Config, records: dict[str, int]) -> list[tuple[str, Ledger]]:
    """Each instance's ledger verdict (the configured one first): the record's whole history is
    exactly savepoints 1..N, written by no one else, and reaches the savepoint `records` says its
    record holds (as `verify` read and checked it in the same run)."""
    from precompact.chain import rpc
    from precompact.proof import ledger
    from precompact.verifier import verdicts

    index = savepoint_log.read(config.logs)
    folded = index.savepoints
    if not config.chain_layer:
        return [
            (instance, ledger.chain_off())
            for instance in dict.fromkeys([config.instance, *(s.instance for s in folded)])
        ]
    client = rpc.Cluster(config.cluster, timeout=rpc.DEFAULT_TIMEOUT_SECONDS)
    return [
        (
            instance,
            ledger.check(
                verdicts.roots(config.program_id, config.authority, config.keypair, instance),
                client,
                savepoint_log.of_instance(folded, instance),
                index.rotations(instance),
                records.get(instance, 0),
            ),
        )
        for instance in dict.fromkeys([config.instance, *(s.instance for s in folded)])
    ]
