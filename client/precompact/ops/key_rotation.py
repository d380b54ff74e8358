"""`precompact key rotate [--recover]`: the instance's lineage moves to a new signing key without
breaking the hash chain.

A rotation is one transaction both keys sign: the program creates the new key's record holding
the old record's last savepoint and freezes the old record. `--recover` is for a key that is gone:
the new key alone starts its record from the old one's last savepoint, which the program marks as
not signed by the old key (and the verifier says so). Either way the new key is created first
(so a crash after the transaction confirms cannot lose it), then the transaction is sent, the
rotation recorded in the index, and the configuration switched to the new key and re-approved.
A run cut after the transaction landed is finished by the next: the chain says what happened
(the frozen old record names its successor; a recovery is the record of a key stored here), and
the transaction is read from the new record's history, never taken from logs/.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

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
from precompact.proof import history, transaction
from precompact.verifier import signed, verdicts

if TYPE_CHECKING:
    from precompact.verifier.verify import Report


class RotationError(PrecompactError):
    """The lineage could not move to a new key; the message says why and what to do."""


@dataclass(frozen=True)
class Rotated:
    rotation: savepoint_log.Rotation
    keypair: Path  # the new key's file, now chain.keypair
    config: Path
    finished: bool  # the transaction had landed before (a run cut short): this run finished it


def rotate(config: Config, recover: bool = False, airdrop: bool = False) -> Rotated:
    """Moves the configured instance's lineage to a new key: with the configured key's signature,
    or (`recover`) without it. A rotation whose transaction landed in a run cut short (a crash,
    a kill, a lost answer) is finished instead, from what the chain says happened."""
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
    held = _record_held(config, old_roots, client)
    arrivals = _unrecorded_arrivals(config, old_roots, client)
    for arrival in arrivals:
        savepoint_log.record_rotation(config.logs, arrival)
    landed = _landed_continuation(config, old_roots, held, client, recover)
    if landed is not None:
        return _finish(config, landed, finished=True)
    if arrivals:
        # The configuration already signs with the key the lineage came to: finishing is recording it.
        return Rotated(arrivals[-1], config.keypair, config.root / configuration.CONFIG_NAME, finished=True)
    if held.frozen:
        successor = held.rotated_to()
        raise RotationError(
            f"the record at {old_roots.address} was already rotated to {successor}, whose key file is not on this machine ({_stored_path(config.instance, str(successor))}); run `precompact key rotate` on the machine that rotated it, which finishes the rotation there"
        )
    _check_ours(config, old_roots, held, client)

    new_key = Keypair()
    path = _store_keypair(config.instance, new_key)
    again = f"`precompact key rotate{' --recover' if recover else ''}`"
    if airdrop:
        try:
            project_init.airdrop(config, str(new_key.pubkey()))
        except project_init.InitError as e:
            raise RotationError(f"{e} (the unused new key is kept at {path})") from None
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
        anchoring.send(client, payer, [instruction], cosigners)
    except (rpc.RpcError, anchoring.ChainError) as e:
        # The answer may be what was lost, not the transaction: the chain says which.
        raise RotationError(
            f"the rotation was not confirmed: {e}; run {again} again: it finishes the rotation if the transaction landed, else starts a new one (the new key is kept at {path})"
        ) from None
    landed = _landed_continuation(config, old_roots, held, client, recover, only=path)
    if landed is None:
        raise RotationError(
            f"the rotation was confirmed but the new record at {verdicts.Roots(chain.PROGRAM_ID, new_key.pubkey(), config.instance).address} does not continue {old_roots.address}; run `precompact verify`"
        )
    return _finish(config, landed, finished=False)


def verify(config: Config, sequence: int | None = None, check_chain: bool = True) -> Report:
    """The verifier's report (verifier.verify), its chain's words naming a recovery cut short,
    which only the keys `key rotate --recover` stored here can find (`unrecorded_recovery`)."""
    from precompact.verifier import verify as verification

    report = verification.verify(config, sequence, check_chain)
    cut = unrecorded_recovery(config) if check_chain else None
    if cut is not None:
        report.chain = f"{report.chain}; {cut}"
    return report


def unrecorded_recovery(config: Config) -> str | None:
    """What `verify` says of a recovery cut short: the chain holds the record of a key `key rotate
    --recover` stored on this machine continuing the configured record without its key, and this
    machine's index does not record it (the configured record, left as it was, does not say so,
    as a frozen one names its successor). None when there is none, or the chain cannot say."""
    if not config.chain_layer:
        return None
    recorded = {r.new_authority[:8] for r in savepoint_log.read(config.logs).rotations(config.instance)}
    stored = [p for p in _stored_paths(config.instance) if p.stem[-8:] not in recorded]
    if not stored:
        return None
    try:
        old = verdicts.Roots(
            chain.PROGRAM_ID,
            verdicts.roots(config.program_id, config.authority, config.keypair, config.instance).authority,
            config.instance,
        )
        client = rpc.Cluster(config.cluster, timeout=rpc.DEFAULT_TIMEOUT_SECONDS)
        held = verdicts.record_at(old, client)
        if held is None or held.frozen or held.sequence == 0:
            return None
        landed = _landed_continuation(config, old, held, client, recover=True, candidates=stored)
    except (verdicts.NoRoot, verdicts.Broken, rpc.RpcError, RotationError):
        return None
    if landed is None:
        return None
    return (
        f"the lineage was recovered on chain to {landed.rotation.new_authority} after savepoint {landed.rotation.sequence} "
        f"(transaction {landed.rotation.signature}), and this machine's index does not record it (a recovery cut short): "
        "`precompact key rotate --recover` finishes it"
    )


@dataclass(frozen=True)
class _Landed:
    """A continuation of the old record the chain holds, under a key stored on this machine."""

    rotation: savepoint_log.Rotation
    keypair: Path


def _finish(config: Config, landed: _Landed, finished: bool) -> Rotated:
    """Records the rotation (unless this machine's index already holds its sealed line) and
    points the configuration at the new key: every step is one a rerun may repeat."""
    recorded = landed.rotation in savepoint_log.read(config.logs).rotations(config.instance)
    if finished and recorded and _configured_keypair(config) == landed.keypair:
        raise RotationError(
            f"the record of {landed.rotation.old_authority} was already rotated to {landed.rotation.new_authority}, recorded in the index, and {configuration.CONFIG_NAME} signs with that key: nothing to finish (PRECOMPACT_KEYPAIR or PRECOMPACT_AUTHORITY named the old key)"
        )
    if not recorded:
        savepoint_log.record_rotation(config.logs, landed.rotation)
    config_path = _switch_config(config, landed.keypair, landed.rotation.new_authority)
    try:
        signer = signed.Signer.load(landed.keypair)
    except signed.SigningKeyError as e:
        raise RotationError(
            f"{e}: the rotation is recorded, but the index lines it carried over are not signed with the new key"
        ) from None
    mine = savepoint_log.savepoints(config.logs, config.instance)
    old, up_to = landed.rotation.old_authority, landed.rotation.sequence
    handed_on = signed.carried_over(mine, old, up_to, signer)
    savepoint_log.record_signatures(config.logs, [(s, signer.sign(s)) for s in handed_on])
    summaries = signed.carried_over_summaries(mine, old, up_to, signer)
    savepoint_log.record_summary_signatures(config.logs, [(s, signer.sign_summary(s, text)) for s, text in summaries])
    return Rotated(landed.rotation, landed.keypair, config_path, finished)


def _configured_keypair(config: Config) -> Path | None:
    """The keypair .precompact.toml itself names (without the environment's overrides)."""
    try:
        return configuration.parse(
            config.root, configuration.read_own(config.root / configuration.CONFIG_NAME), environ={}
        ).keypair.expanduser()
    except (ConfigError, OSError):
        return None


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


def _record_held(config: Config, roots: verdicts.Roots, client: rpc.Cluster) -> record.Record:
    """The record to continue, verified (its signature under its authority, at its address),
    holding at least one savepoint."""
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
    return held


def _check_ours(config: Config, roots: verdicts.Roots, held: record.Record, client: rpc.Cluster) -> None:
    """The record holds this lineage's savepoint: one in this machine's index that a root vouches
    for (this machine wrote it, or the record's key signed its line, as `restore` checked), with
    every field the record states; the chain, read here, is what confirms it (a lineage this
    machine cannot vouch for is not carried over to a new key). The savepoints the record
    thereby confirms are recorded confirmed, so Layer 3 goes on from them under the new key."""
    mine = savepoint_log.savepoints(config.logs, config.instance)
    ours = {s.sequence: s for s in mine}.get(held.sequence)
    if ours is None:
        raise RotationError(
            f"the record holds savepoint {held.sequence}, which this machine's index does not have; run `precompact restore`, then `precompact key rotate` again"
        )
    if not signed.line_vouched(ours, str(roots.authority)):
        raise RotationError(
            f"savepoint {held.sequence} in this machine's index is neither written here nor signed by {roots.authority}; run `precompact restore` (with chain.authority = {roots.authority}), then `precompact key rotate` again"
        )
    try:
        verdicts.check_record_holds(held, ours, ours.commit or anchoring.NO_COMMIT)
    except verdicts.Broken as e:
        raise RotationError(f"{e}; run `precompact verify`") from None
    savepoint_log.record_outcomes(
        config.logs, anchoring.confirmed_by_record(held, roots, mine, config.logs, client.shown)
    )


def _landed_continuation(
    config: Config,
    old: verdicts.Roots,
    held: record.Record,
    client: rpc.Cluster,
    recover: bool,
    only: Path | None = None,
    candidates: list[Path] | None = None,
) -> _Landed | None:
    """The continuation of `old`'s record the chain holds under a key `key rotate` stored on this
    machine (`only`: that key's file), with the transaction that made it; None when there is
    none. After a rotation the old record names its successor (it is frozen); a recovery leaves
    the old record as it was, so each stored key's record (of `candidates`, when given) is read
    for one that recovered it."""
    successor = held.rotated_to()
    if only is not None:
        candidates = [only]
    elif recover:
        candidates = _stored_paths(config.instance) if candidates is None else candidates
    elif successor is not None:
        candidates = [_stored_path(config.instance, str(successor))]
    else:
        return None
    for path in candidates:
        try:
            key = chain.load_keypair(path).pubkey()
        except chain.KeypairError:
            continue  # not a key of this lineage's: the chain decides, and says nothing of it
        if only is None and not recover and key != successor:
            continue
        continued = verdicts.Roots(chain.PROGRAM_ID, key, config.instance)
        try:
            now = verdicts.record_at(continued, client)
            if now is None:
                continue
            signature = _continuing_transaction(client, continued, old, recover)
        except rpc.RpcError as e:
            raise RotationError(str(e)) from None
        except verdicts.Broken as e:
            raise RotationError(f"the new record at {continued.address} is not trustworthy: {e}") from None
        if signature is None:
            continue
        # A rotation freezes the old record at the savepoint it carried over; a recovery's record
        # states it until the new key posts the next one.
        sequence = held.sequence if not recover else now.sequence if now.continued_from() == old.authority else None
        if sequence is None or (now.sequence == held.sequence and now.snapshot_hash != held.snapshot_hash):
            raise RotationError(
                f"the new record at {continued.address} does not hold savepoint {held.sequence} as {old.address} does; run `precompact verify`"
            )
        rotation = savepoint_log.Rotation(
            config.instance, sequence, str(old.authority), str(key), signature, recovered=recover
        )
        return _Landed(rotation, path)
    return None


_MOST_ARRIVALS = 64  # rotations followed back from the configured key before giving up


def _unrecorded_arrivals(config: Config, roots: verdicts.Roots, client: rpc.Cluster) -> list[savepoint_log.Rotation]:
    """The rotations and recoveries that brought the lineage to `roots`' key which this machine's
    index does not record (a rotation cut short, then chain.keypair pointed at the new key by
    hand), oldest first, as the chain states them: each record's first transaction, followed
    back until a record this index records arriving at, or one that started the lineage."""
    recorded = {r.new_authority for r in savepoint_log.read(config.logs).rotations(config.instance)}
    found: list[savepoint_log.Rotation] = []
    current = roots
    try:
        for _ in range(_MOST_ARRIVALS):
            if str(current.authority) in recorded:
                break
            arrival = _arrival(client, current)
            if arrival is None:
                break
            found.append(arrival)
            current = verdicts.Roots(chain.PROGRAM_ID, Pubkey.from_string(arrival.old_authority), config.instance)
    except rpc.RpcError as e:
        raise RotationError(str(e)) from None
    except verdicts.Broken as e:
        raise RotationError(
            f"the record at {current.address} is not trustworthy: {e}; run `precompact verify`"
        ) from None
    return found[::-1]


def _arrival(client: rpc.Cluster, roots: verdicts.Roots) -> savepoint_log.Rotation | None:
    """How `roots`' record began, when the transaction that created it (its first that
    succeeded) continued another key's record: that key, the savepoint carried over and the
    transaction; None for a record that began the lineage or cannot be read as either."""
    entries = [e for e in history.signatures_for_address(client, str(roots.address)) if e.get("err") is None]
    # Lamports sent to the address (anyone can, before the record exists too) write nothing: skipped.
    writes = ((entry["signature"], w) for entry in entries if (w := _writes(client, roots, entry["signature"])))
    first = next(writes, None)
    if first is None:
        return None
    signature, began = first[0], first[1][0]
    if began.problem is not None or began.authority != roots.authority or began.other is None:
        return None
    if began.kind == "rotated_in":
        old = began.other
    elif began.kind == "recovered_in":
        account = client.account(str(began.other))
        try:
            continued = record.decode(account[1]) if account and account[0] == str(roots.program_id) else None
        except record.RecordError:
            return None
        if continued is None:
            return None
        old = Pubkey.from_bytes(continued.authority)
        if chain.record_address(old, roots.instance_id, roots.program_id)[0] != began.other:
            return None
    else:
        return None
    # The savepoint carried over: the one before the record's first own savepoint, else the one it holds.
    posted = next((w.fields.sequence for _, ws in writes for w in ws if w.kind == "savepoint" and w.fields), None)
    if posted is not None:
        sequence = posted - 1
    else:
        now = verdicts.record_at(roots, client)
        if now is None:
            return None
        sequence = now.sequence
    return savepoint_log.Rotation(
        roots.instance, sequence, str(old), str(roots.authority), signature, recovered=began.kind == "recovered_in"
    )


def _writes(client: rpc.Cluster, roots: verdicts.Roots, signature: str) -> list[transaction.Write]:
    """The program's writes to `roots`' record in the transaction `signature` (none when it
    failed or cannot be read)."""
    fetched = history.transaction(client, signature)
    if fetched is None or fetched.failed:
        return []
    try:
        return transaction.parse(fetched.data, roots.program_id, roots.address).writes
    except transaction.Unreadable:
        return []


def _continuing_transaction(
    client: rpc.Cluster, continued: verdicts.Roots, old: verdicts.Roots, recover: bool
) -> str | None:
    """The transaction that created `continued`'s record as a continuation of `old`'s (both keys
    signing, or with `recover` the new key alone), as the record's own history states it: its
    first transaction that wrote to it; None when that is not one."""
    parsed = history.first_write(client, continued.program_id, continued.address)
    if parsed is None:
        return None
    for write in parsed.writes:
        if write.problem is not None or write.authority != continued.authority:
            continue
        if (not recover and write.kind == "rotated_in" and write.other == old.authority) or (
            recover and write.kind == "recovered_in" and write.other == old.address
        ):
            return parsed.signature
    return None


def _store_keypair(instance: str, key: Keypair) -> Path:
    """The new key's file beside init's (0600, never over an existing file)."""
    path = _stored_path(instance, str(key.pubkey()))
    private_file.create(path, json.dumps(list(bytes(key))).encode())
    return path


def _stored_path(instance: str, key: str) -> Path:
    """Where `_store_keypair` keeps `key`'s file: named after init's, and the key's first 8 characters."""
    own = Path(project_init.own_keypair_path(instance)).expanduser()
    return own.with_name(f"{own.stem}-{key[:8]}.json")


_STORED_KEY_TAIL = re.compile(r"-[1-9A-HJ-NP-Za-km-z]{8}\.json")


def _stored_paths(instance: str) -> list[Path]:
    """The files `_store_keypair` may have written for `instance` (each a candidate only: a key
    counts once the chain names it)."""
    own = Path(project_init.own_keypair_path(instance)).expanduser()
    try:
        names = sorted(entry.name for entry in os.scandir(own.parent))
    except OSError:
        return []
    return [
        own.with_name(name)
        for name in names
        if name.startswith(own.stem) and _STORED_KEY_TAIL.fullmatch(name[len(own.stem) :])
    ]


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
