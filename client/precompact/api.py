"""The library API: the three layers in order, behind `precompact savepoint`, `flush` and
`status`. Layer 1 is synchronous; Layers 2 and 3 catch up on everything still queued."""

from __future__ import annotations

from dataclasses import dataclass, field

from precompact.chain import record
from precompact.config.settings import Config, is_pubkey
from precompact.errors import PrecompactError
from precompact.local import savepoint_log, snapshot
from precompact.remote import gitstore
from precompact.verifier import verdicts

# Layer 3 of a savepoint the chain did not anchor while it is off in .precompact.toml: not
# queued, not failed. Turned on again, the chain anchors such savepoints in order.
CHAIN_OFF = "OFF"
# Whether a flush left anything queued (the worker retries then); the command line's exit
# codes are edges/cli.py's.
EXIT_ALL_DONE = 0
EXIT_QUEUED = 1
FLUSH_LOCK_NAME = "precompact-flush.lock"
# A pass pushes (20 s timeout) and posts each queued savepoint (10 s RPC timeout per call).
FLUSH_LOCK_TIMEOUT_SECONDS = 300


@dataclass
class FlushOutcome:
    layer_2_problems: list[str] = field(default_factory=list)
    layer_3_problems: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return EXIT_ALL_DONE if not (self.layer_2_problems or self.layer_3_problems) else EXIT_QUEUED


def save(config: Config, session: snapshot.Session) -> tuple[snapshot.WrittenSnapshot, FlushOutcome]:
    """Layer 1 now, then whatever Layers 2 and 3 can do."""
    written = snapshot.create_savepoint(snapshot.Settings.of(config), session)
    return written, flush(config)


def flush(config: Config) -> FlushOutcome:
    """Commits and pushes what is not yet in git, then posts what is not yet on chain, in order.
    One pass at a time per project: a `precompact flush` run while the background worker posts
    would otherwise send the same sequence twice (one refused) and report a false failure."""
    try:
        with savepoint_log.locked(config.logs, FLUSH_LOCK_TIMEOUT_SECONDS, FLUSH_LOCK_NAME):
            return _flush(config)
    except savepoint_log.LockTimeout as e:
        problems = [f"{e}; run `precompact flush` again later"]
        return FlushOutcome(
            layer_2_problems=problems if config.git_layer else [],
            layer_3_problems=problems if config.chain_layer else [],
        )


def _flush(config: Config) -> FlushOutcome:
    outcome = FlushOutcome()
    if config.git_layer:
        target = gitstore.Target.of(config)
        try:
            repo = gitstore.open_repository(config.repository)
        except gitstore.GitStoreError as e:
            outcome.layer_2_problems = [str(e)]
        else:
            outcome.layer_2_problems = savepoint_log.record_outcomes(
                config.logs, gitstore.sync(repo, target, config.logs)
            )
    if config.chain_layer:
        # Imported here so that the hook, which only writes Layer 1, never loads the Solana stack.
        from precompact.ops import anchoring as chain_post

        posts = chain_post.post_pending(
            config.cluster,
            config.keypair,
            config.program_id,
            config.instance,
            config.logs,
            git_layer=config.git_layer,
            authority=config.authority,
        )
        outcome.layer_3_problems = savepoint_log.record_outcomes(config.logs, posts)
    return outcome


def status(config: Config) -> tuple[list[savepoint_log.Savepoint], list[int]]:
    """Every savepoint with the state of its layers, and the index lines that do not parse."""
    index = savepoint_log.read(config.logs)
    return savepoint_log.fold(index.events), index.bad_lines


def layer_3_state(config: Config, savepoint: savepoint_log.Savepoint) -> str:
    """Where a savepoint's on-chain record stands, as every report shows it."""
    if not config.chain_layer and savepoint.layer_3 != savepoint_log.Layer3.CONFIRMED:
        return CHAIN_OFF
    return savepoint.layer_3


def in_clear(config: Config, savepoints: list[savepoint_log.Savepoint]) -> list[savepoint_log.Savepoint]:
    """The committed savepoints whose commit holds the snapshot in clear text (so the remote
    does, once pushed); none when git cannot be read."""
    committed = [s for s in savepoints if s.commit]
    if not config.git_layer or not committed:
        return []
    try:
        repo = gitstore.open_repository(config.repository)
    except gitstore.GitStoreError:
        return []
    wanted = [(str(s.commit), str(s.snapshot_file)) for s in committed]
    return [s for s, clear in zip(committed, gitstore.in_clear(repo, wanted)) if clear]


class RekeyError(PrecompactError):
    """The branch could not be re-encrypted; the message says why."""


def rekey(config: Config) -> tuple[str | None, int]:
    """Re-encrypts the savepoint branch to the current recipients as a new commit and pushes
    it (under the flush lock, so no savepoint is committed meanwhile). Returns the commit (None:
    nothing to change) and the number of files re-encrypted."""
    if not config.git_layer:
        raise RekeyError("the git layer is off in .precompact.toml; there is no branch to re-encrypt")
    target = gitstore.Target.of(config)
    try:
        with savepoint_log.locked(config.logs, FLUSH_LOCK_TIMEOUT_SECONDS, FLUSH_LOCK_NAME):
            repo = gitstore.open_repository(config.repository)
            commit, files = gitstore.rekey(repo, target, config.logs)
            gitstore.push(repo, target)
    except (gitstore.GitStoreError, savepoint_log.LockTimeout) as e:
        raise RekeyError(str(e)) from None
    return commit, files


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

    try:
        roots = verdicts.roots(config.program_id, config.authority, config.keypair, instance or config.instance)
    except verdicts.NoRoot as e:
        raise InspectError(str(e)) from None
    if address is not None and not is_pubkey(address):
        raise InspectError(f"--address {address!r} is not a base58 public key")
    where = Pubkey.from_string(address) if address is not None else roots.address
    owner, data, found = _fetch_record(config.cluster, roots, where)
    local = {s.sequence: s for s in savepoint_log.savepoints(config.logs) if s.instance == roots.instance}
    match = local.get(found.sequence)
    verdict = _inspection_verdict(roots, where, owner, data, found, match)
    signed = where == roots.address and verdicts.signature_valid(found, roots)
    return Inspection(str(where), found, verdict, signed, _compared_with_index(found, match))


def _fetch_record(cluster: str, roots: verdicts.Roots, where) -> tuple[str, bytes, record.Record]:
    from precompact.chain import rpc

    client = rpc.Cluster(cluster, timeout=rpc.DEFAULT_TIMEOUT_SECONDS)
    try:
        account = client.account(str(where))
    except rpc.RpcError as e:
        raise InspectError(str(e)) from None
    if account is None:
        raise InspectError(
            f"no savepoint record at {where} on {cluster}; run `precompact flush` to post queued savepoints"
        )
    owner, data = account
    try:
        return owner, data, record.decode(data)
    except record.RecordError as e:
        if owner != str(roots.program_id):
            raise InspectError(
                f"account {where} is owned by {owner}, not the precompact program {roots.program_id}"
            ) from None
        raise InspectError(f"account {where}: {e}") from None


def _compared_with_index(found: record.Record, match: savepoint_log.Savepoint | None) -> str:
    if match is None:
        return f"sequence {found.sequence} is not in the local index"
    if match.snapshot_hash == found.snapshot_hash.hex():
        return f"matches local savepoint {match.sequence}"
    return f"DIFFERS from local savepoint {match.sequence} (local sha256:{match.snapshot_hash})"


def _inspection_verdict(
    roots: verdicts.Roots, where, owner: str, data: bytes, found: record.Record, match: savepoint_log.Savepoint | None
) -> verdicts.Check:
    try:
        if where != roots.address:
            raise verdicts.Broken(
                "layer 3",
                None,
                f"{where} is not the record address of {roots.instance!r} under authority {roots.authority} ({roots.address})",
            )
        verdicts.check_record(roots, owner, data)
        if match is not None:
            verdicts.check_record_holds(found, match, match.commit)
    except verdicts.Broken as e:
        return verdicts.Check(verdicts.FAILED, str(e))
    return verdicts.Check(
        verdicts.VERIFIED,
        "address, owner, authority, instance and signature checked"
        + (", and it states the local savepoint" if match else ""),
    )
