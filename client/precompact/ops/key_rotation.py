"""`precompact key rotate [--recover]`: the instance's lineage moves to a new signing key without
breaking the hash chain.

A rotation is one transaction both keys sign: the program creates the new key's record holding
the old record's last savepoint and freezes the old record. `--recover` is for a key that is gone:
the new key alone starts its record from the old one's last savepoint, which the program marks as
not signed by the old key (and the verifier says so). Either way the new key is created first
(so a crash after the transaction confirms cannot lose it), then the transaction is sent, the
configuration switched to the new key and re-approved, and the rotation recorded in the index.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from solders.keypair import Keypair
from solders.pubkey import Pubkey

from precompact.boundary import private_file
from precompact.chain import record, rpc
from precompact.chain import wire as chain
from precompact.config import approval as config_trust
from precompact.config import settings as configuration
from precompact.config.settings import Config, ConfigError
from precompact.errors import PrecompactError
from precompact.local import savepoint_log
from precompact.ops import anchoring, project_init
from precompact.verifier import verdicts


class RotationError(PrecompactError):
    """The lineage could not move to a new key; the message says why and what to do."""


@dataclass(frozen=True)
class Rotated:
    rotation: savepoint_log.Rotation
    keypair: Path  # the new key's file, now chain.keypair
    config: Path


def rotate(config: Config, recover: bool = False, airdrop: bool = False) -> Rotated:
    """Moves the configured instance's lineage to a new key: with the configured key's signature,
    or (`recover`) without it."""
    if not config.chain_layer:
        raise RotationError("the chain layer is off in .precompact.toml: there is no on-chain lineage to rotate")
    if config.program_id != str(chain.PROGRAM_ID):
        raise RotationError(
            f"chain.program_id {config.program_id} is not the program this client was built for ({chain.PROGRAM_ID})"
        )
    old_key = None if recover else _old_keypair(config)
    try:
        old = (
            old_key.pubkey()
            if old_key
            else verdicts.roots(config.program_id, config.authority, config.keypair, config.instance).authority
        )
    except verdicts.NoRoot as e:
        raise RotationError(f"{e}; --recover needs chain.authority set to the lost key's public key") from None
    old_roots = verdicts.Roots(chain.PROGRAM_ID, old, config.instance)
    client = rpc.Cluster(config.cluster, timeout=rpc.DEFAULT_TIMEOUT_SECONDS)
    held = _record_to_continue(config, old_roots, client)

    new_key = Keypair()
    path = _store_keypair(config.instance, new_key)
    if airdrop:
        try:
            project_init.airdrop(config, str(new_key.pubkey()))
        except project_init.InitError as e:
            raise RotationError(f"{e} (the new key is kept at {path})") from None
    cosigners: tuple[Keypair, ...] = ()
    if old_key is not None:
        instruction = chain.rotate_authority_instruction(old, old, new_key.pubkey(), old_roots.instance_id)
        payer, cosigners = old_key, (new_key,)
    else:
        instruction = chain.recover_lineage_instruction(
            new_key.pubkey(), new_key.pubkey(), old_roots.address, old_roots.instance_id
        )
        payer = new_key
    try:
        signature = anchoring.send(client, payer, [instruction], cosigners)
    except (rpc.RpcError, anchoring.ChainError) as e:
        raise RotationError(f"the rotation was not confirmed: {e} (the unused new key is kept at {path})") from None
    _check_continued(client, config.instance, new_key.pubkey(), held)
    rotation = savepoint_log.Rotation(
        config.instance, held.sequence, str(old), str(new_key.pubkey()), signature, recovered=recover
    )
    savepoint_log.record_rotation(config.logs, rotation)
    config_path = _switch_config(config, path, str(new_key.pubkey()))
    return Rotated(rotation, path, config_path)


def _old_keypair(config: Config) -> Keypair:
    try:
        key = chain.load_keypair(config.keypair)
    except chain.KeypairError as e:
        raise RotationError(
            f"{e}; if that key is lost, `precompact key rotate --recover` continues without it"
        ) from None
    if config.authority is not None and str(key.pubkey()) != config.authority:
        raise RotationError(
            f"keypair {config.keypair} is {key.pubkey()}, not chain.authority {config.authority}; point chain.keypair at that key's file"
        )
    return key


def _record_to_continue(config: Config, roots: verdicts.Roots, client: rpc.Cluster) -> record.Record:
    """The record the rotation continues, once it holds this machine's last confirmed savepoint
    (a lineage this machine cannot vouch for is not carried over to a new key)."""
    try:
        held = verdicts.record_at(roots, client)
    except rpc.RpcError as e:
        raise RotationError(str(e)) from None
    except verdicts.Broken as e:
        raise RotationError(f"the record is not trustworthy: {e}; run `precompact verify`") from None
    if held is None or held.sequence == 0:
        raise RotationError(
            f"{roots.address} holds no savepoint of {config.instance!r} yet: nothing to carry over; point chain.keypair at the new key instead"
        )
    successor = held.rotated_to()
    if held.frozen:
        raise RotationError(
            f"the record at {roots.address} was already rotated to {successor}; point chain.keypair at that key"
        )
    mine = {s.sequence: s for s in savepoint_log.savepoints(config.logs, config.instance)}
    ours = mine.get(held.sequence)
    if ours is None or ours.layer_3 != savepoint_log.Layer3.CONFIRMED:
        raise RotationError(
            f"the record holds savepoint {held.sequence}, which this machine's index does not show confirmed; run `precompact flush`, then `precompact verify`"
        )
    try:
        verdicts.check_record_holds(held, ours, ours.commit or anchoring.NO_COMMIT)
    except verdicts.Broken as e:
        raise RotationError(f"{e}; run `precompact verify`") from None
    return held


def _store_keypair(instance: str, key: Keypair) -> Path:
    """The new key's file beside init's (0600, never over an existing file)."""
    own = Path(project_init.own_keypair_path(instance)).expanduser()
    path = own.with_name(f"{own.stem}-{str(key.pubkey())[:8]}.json")
    private_file.create(path, json.dumps(list(bytes(key))).encode())
    return path


def _check_continued(client: rpc.Cluster, instance: str, new: Pubkey, held: record.Record) -> None:
    """The new key's record, read back, verifies and states the savepoint carried over."""
    roots = verdicts.Roots(chain.PROGRAM_ID, new, instance)
    try:
        after = verdicts.record_at(roots, client)
    except (rpc.RpcError, verdicts.Broken) as e:
        raise RotationError(f"the new record at {roots.address} could not be read back: {e}") from None
    if after is None or (after.sequence, after.snapshot_hash) != (held.sequence, held.snapshot_hash):
        raise RotationError(f"the new record at {roots.address} does not hold savepoint {held.sequence}")


_SECTION = re.compile(r"\s*\[([^\]]+)\]\s*(#.*)?$")


def _switch_config(config: Config, keypair: Path, authority: str) -> Path:
    """Points chain.keypair (and chain.authority, when set) at the new key and approves the
    result, as `init` approves what it writes."""
    path = config.root / configuration.CONFIG_NAME
    content = configuration.read_own(path)
    approved = config_trust.approval(path)
    if approved is None or approved.sha256 != config_trust.digest(content):
        raise RotationError(f"{path} changed since you trusted it; set chain.keypair = {str(keypair)!r} yourself")
    home = Path.home()
    shown = f"~/{keypair.relative_to(home)}" if keypair.is_relative_to(home) else str(keypair)
    updated = _with_chain_values(
        content.decode("utf-8"), {"keypair": shown, **({"authority": authority} if config.authority else {})}
    ).encode("utf-8")
    try:
        parsed = configuration.parse(config.root, updated, environ={})
    except ConfigError as e:
        raise RotationError(f"{path} could not be updated ({e}); set chain.keypair = {shown!r} yourself") from None
    if parsed.keypair != keypair.expanduser():
        raise RotationError(f"{path} could not be updated; set chain.keypair = {shown!r} yourself")
    private_file.replace(path, updated)
    repository = Path(approved.repository) if approved.repository else None
    config_trust.approve(path.resolve(), updated, repository, approved.settings)
    return path


def _with_chain_values(text: str, values: dict[str, str]) -> str:
    """`text` with each of `values` set in its [chain] table (replaced where set, else added
    under the table's header, which is added when missing)."""
    lines = text.splitlines()
    section = None
    header = None
    left = dict(values)
    for i, line in enumerate(lines):
        found = _SECTION.match(line)
        if found:
            section = found.group(1).strip()
            if section == "chain":
                header = i
            continue
        if section != "chain":
            continue
        for key in list(left):
            if re.match(rf"\s*{key}\s*=", line):
                lines[i] = f"{key} = {json.dumps(left.pop(key))}"
    added = [f"{key} = {json.dumps(value)}" for key, value in left.items()]
    if header is None:
        lines += ["", "[chain]", *added]
    else:
        lines[header + 1 : header + 1] = added
    return "\n".join(lines) + "\n"
