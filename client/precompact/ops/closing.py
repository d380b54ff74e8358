"""`precompact close`: the instance's on-chain record is closed and its rent goes back to the
authority (the program's `close`).

The record is the chain root of every savepoint of the instance, so closing it ends Layer 3 for
that instance: nothing can be anchored there again (a new record would have to start at
savepoint 1), and what the chain vouched for can no longer be checked on chain. So the closing
is recorded in the index, sealed with this machine's key, and `flush`, `savepoint` and `verify`
say so rather than retrying, re-initializing or reporting a broken link.
"""

from __future__ import annotations

from dataclasses import dataclass

from precompact.chain import rpc
from precompact.chain import wire as chain
from precompact.config import endpoint
from precompact.config.settings import Config
from precompact.errors import PrecompactError
from precompact.local import savepoint_log
from precompact.ops import anchoring
from precompact.verifier import verdicts


class CloseError(PrecompactError):
    """The record could not be closed; the message says why and what to do."""


@dataclass(frozen=True)
class Plan:
    """What closing the configured instance's record would do: the record at `address` holding
    savepoint `sequence` and `lamports`; `queued`, the savepoints not yet confirmed on chain."""

    instance: str
    address: str
    authority: str
    sequence: int
    lamports: int
    queued: list[int]


def plan(config: Config) -> Plan:
    """The record to close, read and checked through the verifier; refuses what cannot be closed."""
    roots, client = _roots_and_client(config)
    closed = savepoint_log.read(config.logs).closing(config.instance)
    if closed is not None and closed.address == str(roots.address):
        raise CloseError(
            f"the record of {config.instance!r} at {roots.address} is already closed (transaction {closed.signature}); nothing to do"
        )
    try:
        held = verdicts.record_at(roots, client)
        lamports = client.balance(str(roots.address))
    except rpc.RpcError as e:
        raise CloseError(str(e)) from None
    except verdicts.Broken as e:
        raise CloseError(f"the record at {roots.address} is not trustworthy: {e}; run `precompact verify`") from None
    if held is None:
        raise CloseError(
            f"there is no record of {config.instance!r} at {roots.address} on {endpoint.shown(config.cluster)}: nothing to close"
        )
    if held.frozen:
        raise CloseError(
            f"the record at {roots.address} was rotated to {held.rotated_to()}: the program never closes a frozen record; close that key's record (point chain.keypair at it)"
        )
    queued = [
        s.sequence
        for s in savepoint_log.savepoints(config.logs, config.instance)
        if s.layer_3 != savepoint_log.Layer3.CONFIRMED
    ]
    return Plan(config.instance, str(roots.address), str(roots.authority), held.sequence, lamports, queued)


def close(config: Config, force: bool = False) -> savepoint_log.Closing:
    """Closes the configured instance's record with its authority's key, once nothing is queued
    for it (or `force`), and records the closing in the index."""
    planned = plan(config)
    if planned.queued and not force:
        shown = ", ".join(str(n) for n in planned.queued[:5]) + (", ..." if len(planned.queued) > 5 else "")
        raise CloseError(
            f"{len(planned.queued)} savepoint(s) of {config.instance!r} are still queued for the chain ({shown}): run `precompact flush` first, or `precompact close --force` to close without anchoring them"
        )
    roots, client = _roots_and_client(config)
    try:
        signer = anchoring.key_of(config.program_id, config.keypair, config.authority, config.keypair_setting)
        signature = anchoring.send(client, signer, [chain.close_instruction(signer.pubkey(), roots.address)])
        left = verdicts.record_at(roots, client)
    except (anchoring.ChainError, rpc.RpcError) as e:
        raise CloseError(f"the record at {roots.address} was not closed: {e}") from None
    except verdicts.Broken as e:
        raise CloseError(f"close confirmed in transaction {signature}, but {roots.address} now holds: {e}") from None
    if left is not None:
        raise CloseError(f"close confirmed in transaction {signature}, but {roots.address} still holds a record")
    closing = savepoint_log.Closing(
        config.instance, planned.address, planned.authority, planned.sequence, planned.lamports, signature
    )
    savepoint_log.record_closing(config.logs, closing)
    return closing


def _roots_and_client(config: Config) -> tuple[verdicts.Roots, rpc.Cluster]:
    if not config.chain_layer:
        raise CloseError("the chain layer is off in .precompact.toml: there is no on-chain record to close")
    if config.program_id != str(chain.PROGRAM_ID):
        raise CloseError(
            f"chain.program_id {config.program_id} is not the program this client was built for ({chain.PROGRAM_ID})"
        )
    try:
        roots = verdicts.roots(config.program_id, config.authority, config.keypair, config.instance)
    except verdicts.NoRoot as e:
        raise CloseError(str(e)) from None
    return roots, rpc.Cluster(config.cluster, timeout=rpc.DEFAULT_TIMEOUT_SECONDS)
