"""`precompact prune --keep N`: removes the local copies of old savepoints that git holds.

A savepoint's local copy (its snapshot file, and the chunks no remaining local snapshot lists)
is removed only when it is not among the newest `keep` of its instance (so never the latest),
its commit is in the branch as the remote last had it, and the verifier finds git's copy to be
the bytes this machine recorded, chunks included. Each removal is recorded in the index
(LOCAL_COPY_PRUNED), so verify checks git's copy instead, and `resurrect --sequence N` brings
it back. Runs under the index lock: the hook writes and re-uses chunks under it too.

It also removes the project's copies of Codex and Gemini sessions (`agents.forget`): a cache of
the agent's own session file, rebuilt from it at the next save, that no savepoint needs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from precompact.boundary import logs_dir
from precompact.config.settings import Config
from precompact.errors import PrecompactError
from precompact.local import chunks, savepoint_log, snapshot
from precompact.recall import fulltext as recall
from precompact.remote import gitstore
from precompact.transcript import agents
from precompact.verifier import verdicts, verify


class PruneError(PrecompactError):
    """Nothing could be pruned; the message says why and what to do."""


@dataclass
class Pruned:
    savepoints: list[tuple[str, int]] = field(default_factory=list)
    freed_bytes: int = 0
    chunks: int = 0
    kept: list[str] = field(default_factory=list)  # why an old savepoint's copy was kept


def prune(config: Config, keep: int) -> Pruned:
    if keep < 1:
        raise PruneError("--keep must be at least 1: the latest savepoint always stays")
    if not config.git_layer:
        raise PruneError("prune removes only what git holds, and the git layer is off in .precompact.toml")
    try:
        repo = gitstore.open_repository(gitstore.Target.of(config))
    except gitstore.GitStoreError as e:
        raise PruneError(str(e)) from None
    target = gitstore.Target.of(config)
    outcome = Pruned()
    with savepoint_log.locked(config.logs, snapshot.INDEX_LOCK_TIMEOUT_SECONDS):
        folded = savepoint_log.read(config.logs).savepoints
        local = verdicts.LocalSnapshots(config.logs)
        removed: list[tuple[savepoint_log.Savepoint, verdicts.Snapshot]] = []
        for instance in dict.fromkeys(s.instance for s in folded):
            for savepoint in savepoint_log.of_instance(folded, instance)[:-keep]:
                found = local.get(savepoint)
                if savepoint.pruned or found is None:
                    continue
                why = _why_kept(config, repo, target, savepoint)
                if why is not None:
                    outcome.kept.append(f"savepoint {savepoint.sequence} of {instance}: {why}")
                    continue
                removed.append((savepoint, found))
        for savepoint, found in removed:
            name = logs_dir.within(str(savepoint.snapshot_file))
            with logs_dir.directory(config.logs) as fd:
                os.unlink(name, dir_fd=fd)
            savepoint_log.record_pruned(config.logs, savepoint)
            outcome.savepoints.append((savepoint.instance, savepoint.sequence))
            outcome.freed_bytes += len(found.data)
        if removed:
            freed, count = _remove_chunks(config, folded, removed, outcome)
            outcome.freed_bytes += freed
            outcome.chunks = count
    if removed:
        recall.discard(config.logs)
    agents.forget(config.logs)
    return outcome


def _why_kept(config: Config, repo, target: gitstore.Target, savepoint: savepoint_log.Savepoint) -> str | None:
    """Why the savepoint's local copy must stay (None: git holds it, pushed and verified), judged
    on its own instance's branch alone (a logs/ may hold several of this project's instances: a
    renamed one's predecessor), which only Layer 2 of this project pushes; no ref is written."""
    if savepoint.layer_2 != savepoint_log.Layer2.PUSHED or not savepoint.commit:
        return f"not pushed yet (Layer 2 {savepoint.layer_2})"
    own = target.of_instance(savepoint.instance)
    if not gitstore.pushed(repo, own, savepoint.commit):
        return f"commit {savepoint.commit[:12]} is not on {config.remote}/{own.branch} as last pushed or fetched"
    tip = gitstore.savepoint_tip(repo, own)
    if tip is not None and not gitstore.pushed(repo, own, tip):
        # verify may have read chunks at the tip (re-encrypted by rekey): it must be on the remote too.
        return f"the branch tip {tip[:12]} is not on {config.remote}/{own.branch} yet (run `precompact flush`)"
    report = verify.verify(config.replace(instance=savepoint.instance), savepoint.sequence, check_chain=False)
    if not report.ok:
        return f"it does not verify ({report.findings[0]})"
    git = report.verdicts_of(savepoint.instance, savepoint.sequence)[verdicts.GIT]
    if git.status != verdicts.VERIFIED:  # the remote does not hold it, or its copy cannot be read here
        return f"its git copy is {git.status} ({git.detail})"
    return None


def _remove_chunks(
    config: Config,
    folded: list[savepoint_log.Savepoint],
    removed: list[tuple[savepoint_log.Savepoint, verdicts.Snapshot]],
    outcome: Pruned,
) -> tuple[int, int]:
    """Removes the chunks the pruned snapshots listed (verified in git) that no remaining
    local snapshot lists; keeps them all when a remaining snapshot cannot be read."""
    gone = {(s.instance, s.sequence) for s, _ in removed}
    listed: set[str] = set()
    local = verdicts.LocalSnapshots(config.logs)
    for savepoint in folded:
        if (savepoint.instance, savepoint.sequence) in gone or savepoint.pruned:
            continue
        found = local.get(savepoint)
        if found is None or found.sha256 != savepoint.snapshot_hash:
            outcome.kept.append(
                f"every chunk: savepoint {savepoint.sequence} of {savepoint.instance}'s snapshot is missing or altered, so which chunks it needs is unknown (run `precompact verify`)"
            )
            return 0, 0
        listed.update(ref.sha256 for ref in verdicts.chunk_refs(found))
    freed = count = 0
    for ref in {ref for _, found in removed for ref in verdicts.chunk_refs(found)}:
        if ref.sha256 not in listed:
            chunks.remove(config.logs, ref.sha256)
            freed, count = freed + ref.size, count + 1
    return freed, count
