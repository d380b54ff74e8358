"""The three layers in order: the library API behind `precompact savepoint`, `flush` and
`status`. Layer 1 is synchronous; Layers 2 and 3 catch up on everything still queued."""

from __future__ import annotations

from dataclasses import dataclass, field

from precompact import gitstore, savepoint_log, snapshot
from precompact.config import Config, is_pubkey

EXIT_ALL_DONE = 0
EXIT_LAYER_3_QUEUED = 1
EXIT_ERROR = 2
FLUSH_LOCK_NAME = "precompact-flush.lock"
# A pass pushes (20 s timeout) and posts each queued savepoint (10 s RPC timeout per call).
FLUSH_LOCK_TIMEOUT_SECONDS = 300


@dataclass
class FlushOutcome:
    layer_2_problems: list[str] = field(default_factory=list)
    layer_3_problems: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return EXIT_ALL_DONE if not (self.layer_2_problems or self.layer_3_problems) else EXIT_LAYER_3_QUEUED


def save(config: Config, session: snapshot.Session) -> tuple[snapshot.WrittenSnapshot, FlushOutcome]:
    """Layer 1 now, then whatever Layers 2 and 3 can do."""
    written = snapshot.create_savepoint(config.snapshot_settings(), session)
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
        return FlushOutcome(layer_2_problems=problems if config.git_layer else [], layer_3_problems=problems if config.chain_layer else [])


def _flush(config: Config) -> FlushOutcome:
    outcome = FlushOutcome()
    if config.git_layer:
        target = gitstore.Target(config.repository, config.remote, config.branch)
        try:
            repo = gitstore.open_repository(config.repository)
        except gitstore.GitStoreError as e:
            outcome.layer_2_problems = [str(e)]
        else:
            outcome.layer_2_problems = gitstore.sync(repo, target, config.logs)
    if config.chain_layer:
        # Imported here so that the hook, which only writes Layer 1, never loads the Solana stack.
        from precompact import chain_post

        outcome.layer_3_problems = chain_post.post_pending(
            config.cluster, config.keypair, config.program_id, config.instance, config.logs, git_layer=config.git_layer, authority=config.authority
        )
    return outcome


def status(config: Config) -> tuple[list[savepoint_log.Savepoint], list[int]]:
    """Every savepoint with the state of its layers, and the index lines that do not parse."""
    index = savepoint_log.read(config.logs)
    return savepoint_log.fold(index.events), index.bad_lines


@dataclass
class Inspection:
    address: str
    fields: dict
    signature_valid: bool
    local_index: str


def inspect(config: Config, instance: str | None = None, address: str | None = None, timeout: float | None = None) -> Inspection:
    """Fetches and decodes the on-chain record, checks its signature offline and compares it with
    the local index. Raises ChainError or RecordError with a one-line reason."""
    from solders.pubkey import Pubkey

    from precompact import chain, chain_post, record, rpc

    if address is not None:
        if not is_pubkey(address):
            raise chain_post.ChainError(f"--address {address!r} is not a base58 public key")
        where = Pubkey.from_string(address)
    else:
        authority = Pubkey.from_string(config.authority) if config.authority else chain_post.load_keypair(config.keypair).pubkey()
        where, _ = chain.record_address(authority, chain.instance_id(instance or config.instance))
    client = rpc.Cluster(config.cluster, timeout=timeout or chain_post.RPC_TIMEOUT_SECONDS)
    try:
        data = chain_post.fetch_record(client, where)
    except rpc.RpcError as e:
        raise chain_post.ClusterUnreachable(str(e)) from None
    if data is None:
        raise chain_post.RecordMissing(f"no savepoint record at {where} on {config.cluster}; run `precompact flush` to post queued savepoints")
    fields = record.decode(data)
    local = {s.sequence: s for s in savepoint_log.savepoints(config.logs) if chain.instance_id(s.instance) == fields["instance_id"]}
    match = local.get(fields["sequence"])
    if match is None:
        verdict = f"sequence {fields['sequence']} is not in the local index"
    elif match.snapshot_hash == fields["snapshot_hash"].hex():
        verdict = f"matches local savepoint {match.sequence}"
    else:
        verdict = f"DIFFERS from local savepoint {match.sequence} (local sha256:{match.snapshot_hash})"
    return Inspection(str(where), fields, record.signature_valid(fields, where), verdict)
