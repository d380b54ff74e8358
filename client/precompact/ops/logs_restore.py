"""`precompact restore`: logs/ rebuilt from the git remote, once every savepoint it brings back
is checked from a root (a new clone, a second machine, a `git clean -fdx`, a deleted logs/).

The remote is hostile input: the savepoint branch is fetched, its index copy read (decrypted
with the age identity), and a savepoint counts only through a root: the user's signature over
its index line (verifier.signed, the configured public key) or, on the machine that wrote it,
this machine's tag (local.provenance). Then its snapshot must hash to the hash that line states
and name the predecessor it states, the predecessor hashes must link the instance's savepoints,
and every chunk the snapshot lists must hash to its name. Any contradiction refuses the whole
restore before anything is written, but a snapshot the tip holds altered: the signed hash is the
root, not the tip, so it is read again at the commit that pushed it and restored from there when
that copy holds, the tip's file named. A savepoint no root vouches for (another key's, or from
before signing, on another machine) is left out and named.

Anyone who can push can save under this instance's name with a key of their own: their push
merges onto the branch with their index as the tree, so the tip's index holds their lines and
not yours. Then the history is read back, a bounded walk (team.WALK commits that changed the index
copy, `--at COMMIT` to go on further), for the index holding the most savepoints your key
signed, and that commit is restored from; the line at the tip is named, never taken. So is a tip
whose index copy precompact did not write (over its size, or a line that does not parse): the
cheaper spoiling is walked past the same way; and so is a tip whose index of your key holds a
shorter chain of your savepoints (1, 2, 3 … unbroken, each linking) than an earlier copy (a
rollback, such as a `git revert` of the branch's last commits, or a line deleted from the middle:
team.own_index), so that what restore brings back is the longest chain your key signed. A
savepoint after a gap no copy fills is left out, never written after a gap in logs/.

A fresh clone gets its local savepoint branch at the remote's tip, so that Layer 2 goes on
from the remote's history. logs/ gets each checked savepoint's SAVEPOINT_CREATED line exactly as the remote holds it (its
machine tag stays the one it was written with: this machine does not claim to have written
it), its signatures, the commit that added it (pushed), its snapshot and its chunks. A savepoint
logs/ already has is left as it is; one logs/ has with other content is never overwritten, and
said. A savepoint's compaction summary comes back with it, or to a savepoint logs/ holds the
same without one, only when your key's signature binds it to that savepoint's line
(verifier.signed.offered_summary); one whose signature does not check is named and not restored,
one from before summaries were signed is named, and one logs/ holds already with other words is
kept and named. Lines no root covers (briefs given, chain confirmations) are not restored:
nothing vouches for them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path

from precompact.boundary import logs_dir, quoting
from precompact.config.settings import Config
from precompact.errors import NotVouched, PrecompactError
from precompact.local import chunks, savepoint_log
from precompact.recall import fulltext
from precompact.remote import gitstore
from precompact.verifier import signed, team, verdicts

Progress = Callable[[int, int], None]


class RestoreError(PrecompactError):
    """Nothing was restored; the message says why and what to do."""


def recall_from(
    config: Config,
    instance: str,
    query: str,
    sequence: int | None,
    since: str | None,
    role: str | None,
    tool: str | None,
    agent: str | None,
    signers: Collection[str] = (),
) -> fulltext.Results:
    """recall over `instance`'s savepoints (`teammate`): each hit's text read from a snapshot that
    hashes to the line its own key signed, that key yours or one of `signers`, quoted as every
    recalled text is."""
    if instance == config.instance:
        raise RestoreError(f"{instance} is this project's own instance: `precompact recall QUERY` searches it")
    found = teammate(config, instance, signers)
    results = fulltext.search(
        found.logs, instance, query, sequence, since, role, tool, agent=agent, signer=found.signer
    )
    left = [*found.restored.differing, *found.restored.unvouched, *found.restored.unlinked]
    results.notes.insert(
        0,
        f"{instance}'s savepoints on branch {found.branch} of {config.remote} at {found.restored.commit[:12]} (its tip; its history is not read), each checked against its own key {found.signer}, {found.vouched_by}"
        + (f"; not searched: {', '.join(left)}" if left else ""),
    )
    return results


@dataclass
class Restored:
    signer: str  # the public key whose signatures counted
    commit: str  # the remote's branch tip restored from
    branch: str  # that branch: the instance's own, else the shared one of older versions
    restored: list[savepoint_log.Savepoint] = field(default_factory=list)
    present: int = 0  # savepoints logs/ already held, the same
    differing: list[str] = field(default_factory=list)  # held in logs/ with other content: kept
    unvouched: list[str] = field(default_factory=list)  # on the remote, no root vouches: left out
    # Vouched for, but after a savepoint the index read does not hold (or left out): its link
    # was never checked, so it is left out, not written after a gap in logs/.
    unlinked: list[str] = field(default_factory=list)
    # A snapshot at the commit restored from that does not hash to its line: read where it was pushed.
    altered: list[str] = field(default_factory=list)
    chunks: int = 0  # chunks written
    # What the tip's index held that was left out: a line of this instance another key signed
    # (verifier.team.foreign_line), or a copy precompact does not write (team.parsed_copy).
    foreign: str | None = None
    walked: str | None = None  # with `foreign`: which commit's index was restored instead, or why none
    summaries: int = 0  # compaction summaries restored, each bound to its savepoint by your key
    # Summaries the index read offers whose signature does not bind them (FAILED): not restored.
    summaries_failed: list[str] = field(default_factory=list)
    # Summaries with no signature (recorded by a version before summaries were signed): not restored.
    summaries_unsigned: list[str] = field(default_factory=list)
    # Signed summaries of savepoints logs/ holds with another summary already: the local one kept.
    summaries_kept: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Whether logs/ now holds every savepoint the remote holds, as the tip holds it (a line
        another key signed at the tip, a tip's index that could not be read or that dropped
        savepoints an earlier copy held, left out, a savepoint after a gap, a snapshot the tip
        holds altered, or a compaction summary whose signature does not bind it, is not)."""
        return not (
            self.differing or self.unvouched or self.unlinked or self.foreign or self.altered or self.summaries_failed
        )


def restore(config: Config, progress: Progress, at: str | None = None) -> Restored:
    """Fetches the savepoint branch, checks every savepoint on it, then writes what logs/ lacks.
    The index read is the tip's (or that of `at`, a commit of the branch's history), unless it
    holds a line of this instance another key signed, or is not a readable index (absent,
    encrypted to identities not here or not decrypting, over the size precompact writes, a line
    that does not parse: `team.parsed_copy`): then that of the commit among the WALK before it
    whose index holds the most savepoints your keys signed (`team.own_index`, which `resurrect`
    walks by too). With none, an unreadable copy refuses the restore naming where the walk
    stopped."""
    if not config.git_layer:
        raise RestoreError("the git layer is off in .precompact.toml: there is no remote to restore from")
    key = signed.configured_key(config)
    if key is None:
        raise RestoreError(
            f"no signing key here: copy your keypair to {config.keypair} (or set chain.authority to its public key)"
        )
    try:
        repo = gitstore.open_repository(gitstore.Target.of(config))
        target = gitstore.Target.of(config)
        # The instance's own branch; an archive not migrated yet, the shared one of older versions.
        branch = gitstore.fetch(repo, target)
    except gitstore.GitStoreError as e:
        raise RestoreError(f"{e}; nothing restored") from None
    tip = gitstore.remote_tip(repo, target)
    if tip is None:
        raise RestoreError(f"{config.remote} holds no branch {target.branch}: nothing to restore")
    start = tip if at is None else gitstore.commit_in_history(repo, at, tip)
    if start is None:
        raise RestoreError(
            f"{at!r} names no commit of branch {target.branch} as fetched from {config.remote} (at {tip[:12]}): give one `precompact restore` named"
        )
    keys = team.your_keys(config, key)
    try:
        own = team.own_index(repo, target, start, config.instance, keys)
    except (team.IndexNotRead, team.NoOwnIndex) as e:
        raise RestoreError(f"{e}; nothing restored") from None
    source, remote, left_out, walked = own.commit, own.savepoints, own.left_out, own.walked
    found = _restored_into(repo, target, source, branch, config.logs, key, remote, progress, config.remote)
    found.foreign = f"at {start[:12]}, {left_out}" if left_out else None
    found.walked = walked
    if branch == target.branch or any(s.instance == config.instance for s in remote):
        # Layer 2 goes on from there (from your own index, when another key's is at the tip: your
        # next push then puts it back on top); a shared branch of another instance's is not this
        # one's history. A branch here holding another chain (logs/ moved aside to restore this
        # one) is moved there too, unless logs/ records a commit of it.
        recorded = [str(s.commit) for s in savepoint_log.savepoints(config.logs, config.instance) if s.commit]
        gitstore.adopt_remote_branch(repo, target, source, recorded)
    return found


@dataclass(frozen=True)
class Teammate:
    """A teammate's instance as `recall --from` reads it: its savepoints, checked against its
    own key, copied out of its branch into a logs/ of their own in precompact's git directory
    (never the project's logs/)."""

    instance: str
    logs: Path
    signer: str  # the key its index is signed with: its own, as its branch claims it
    vouched_by: str  # why that key counts: "your key" or "the key you pinned"
    branch: str
    restored: Restored


def teammate(config: Config, instance: str, signers: Collection[str] = ()) -> Teammate:
    """`instance`'s savepoints from its own branch on the remote, every signature (by the key its
    index is signed with, never yours), snapshot, chunk and link checked before any is kept; read
    only when that key is yours or one of `signers` (verifier.team.unpinned), else NotVouched."""
    if not config.git_layer:
        raise RestoreError(
            "the git layer is off in .precompact.toml: there is no remote to read a teammate's savepoints from"
        )
    try:
        repo = gitstore.open_repository(gitstore.Target.of(config))
        target = gitstore.Target.of(config).of_instance(instance)
        branch = gitstore.fetch(repo, target)
    except gitstore.GitStoreError as e:
        raise RestoreError(f"{instance}'s savepoints cannot be read from {config.remote}: {e}") from None
    tip = gitstore.remote_tip(repo, target)
    if tip is None:
        raise RestoreError(f"{config.remote} holds no branch {target.branch} of {instance}")
    try:
        remote = savepoint_log.of_instance(team.index_at(repo, target, tip), instance)
    except team.IndexNotRead as e:
        raise RestoreError(f"{e}; nothing was searched") from None
    except team.Sealed as e:
        raise RestoreError(
            f"{instance}'s savepoints on branch {branch} are not encrypted to you ({e.why}); ask {instance}'s owner to add your public key (`precompact key show`) to their encryption.recipients, then run `precompact trust` and `precompact key rekey`"
        ) from None
    except team.Spoilt as e:
        # A teammate's branch is judged at its tip, as `status --remote` judges it: its history
        # is its owner's to read back (`restore` on their machine), never taken here on trust.
        raise RestoreError(
            f"{instance}'s branch {branch} at {tip[:12]}: {e.why}; nothing was searched (a teammate's branch is read at its tip only: its history is not checked here)"
        ) from None
    key = team.own_key(remote)
    if key is None:
        raise RestoreError(f"no savepoint of {instance} on branch {branch} is signed: nothing of it can be checked")
    problem = team.index_problem(remote, key)
    if problem is not None:
        raise RestoreError(f"{instance}'s index on branch {branch} is altered: {problem}")
    mine = signed.configured_key(config)
    why = team.unpinned(key, mine, signers)
    if why is not None:
        raise NotVouched(f"{instance}'s savepoints on branch {branch} are not verified: {why}; nothing was searched")
    logs = gitstore.teammate_logs(repo, instance)
    stated = {(s.sequence, s.snapshot_hash) for s in remote}
    if any((s.sequence, s.snapshot_hash) not in stated for s in savepoint_log.savepoints(logs)):
        # Kept from an earlier read, and not what the tip's index states now (another key's
        # index on top, or a history rewritten): never searched under the tip's key.
        gitstore.remove_teammate_logs(repo, instance)
    restored = _restored_into(repo, target, tip, branch, logs, key, remote, lambda done, total: None, config.remote)
    return Teammate(instance, logs, key, "your key" if key == mine else "the key you pinned", branch, restored)


def _restored_into(
    repo,
    target: gitstore.Target,
    tip: str,
    branch: str,
    logs: Path,
    key: str,
    remote: list[savepoint_log.Savepoint],
    progress: Progress,
    remote_name: str,
) -> Restored:
    """Checks every savepoint of `remote` (the index copy at `tip`) `key` or this machine's tag
    vouches for, then writes into `logs` what it lacks."""
    found = Restored(signer=key, commit=tip, branch=branch)
    held = _held(logs)
    vouched = _vouched(remote, key, found)
    wanted = _lacking(vouched, held, held, found)
    snapshots, fetched, found.altered = _checked_bytes(repo, target, tip, logs, wanted, progress)
    added = gitstore.commits_adding_snapshots(repo, tip).added  # the commit each savepoint was pushed in
    written: list[tuple[tuple[savepoint_log.Savepoint, str], bool]] = []
    for (savepoint, root), data in zip(wanted, snapshots):
        existing = logs_dir.read_snapshot(logs, savepoint.snapshot_file, savepoint.sequence)
        if existing is not None and existing != data:
            found.differing.append(f"{savepoint.instance} #{savepoint.sequence} ({savepoint.snapshot_file} differs)")
            continue
        if existing is None:
            logs_dir.write_atomic(logs, logs_dir.within(savepoint.snapshot_file), data)
        written.append(((savepoint, root), existing is None))
    for data in fetched:
        chunks.store(logs, data)
    found.chunks = len(fetched)
    # Compared with logs/ again under the index lock, and appended under it: a hook that saved
    # while restore fetched took the next sequence of logs/ as it was, and the remote's lines
    # would land on its savepoint (its layer lines, "pushed" in a commit that does not hold it).
    with savepoint_log.locked(logs, 10.0):
        now = _held(logs)
        kept = {(s.instance, s.sequence) for s, _ in _lacking([pair for pair, _ in written], now, held, found)}
        lines = []
        for (savepoint, _), wrote in written:
            if (savepoint.instance, savepoint.sequence) not in kept:
                if wrote and savepoint.snapshot_file not in {s.snapshot_file for s in now.values()}:
                    logs_dir.remove(logs, logs_dir.within(savepoint.snapshot_file))
                continue
            commit = added.get(savepoint.snapshot_file, tip)
            good = [s for s in savepoint.signatures if s.signer == key and signed.signed_by(_only(savepoint, s), key)]
            # The branch Layer 2 commits the instance's next savepoints to, on top of this commit.
            lines += savepoint_log.restored_lines(savepoint, good, commit, target.branch, remote_name)
            lines += _summary_lines(savepoint, None, key, found)
            found.restored.append(savepoint)
        restored = {(s.instance, s.sequence) for s in found.restored}
        # A savepoint logs/ holds the same: its summary, when logs/ has none.
        for savepoint, _ in vouched:
            mine = now.get((savepoint.instance, savepoint.sequence))
            same = mine is not None and mine.snapshot_hash == savepoint.snapshot_hash
            if same and (savepoint.instance, savepoint.sequence) not in restored:
                lines += _summary_lines(savepoint, mine, key, found)
        if lines:
            savepoint_log.append_restored(logs, lines)
    return found


Held = dict[tuple[str, int], savepoint_log.Savepoint]


def _summary_lines(
    savepoint: savepoint_log.Savepoint, mine: savepoint_log.Savepoint | None, key: str, found: Restored
) -> list[dict]:
    """The index lines that bring back `savepoint`'s compaction summary as the index read offers
    it, when `key`'s signature binds it to the savepoint (restored now, or `mine`: logs/ holds it
    the same, without a summary); none otherwise, each refusal, unsigned summary or summary logs/
    holds with other words named in `found`."""
    offered = signed.offered_summary(savepoint, key)
    named = f"{savepoint.instance} #{savepoint.sequence}"
    if offered.refused is not None:
        found.summaries_failed.append(f"{named} ({offered.refused})")
        return []
    here = mine.compact_summary if mine is not None else None
    if here is not None:
        if offered.text is not None and offered.text != here:
            found.summaries_kept.append(f"{named} (logs/ holds another summary of it: kept)")
        return []
    if offered.unsigned:
        found.summaries_unsigned.append(named)
    elif offered.text is not None:
        found.summaries += 1
        good = [
            s
            for s in savepoint.summary_signatures
            if signed.summary_signed_by(_only_summary(savepoint, s), offered.text, key)
        ]
        return savepoint_log.restored_summary_lines(savepoint, offered.text, good)
    return []


def _held(logs: Path) -> Held:
    return {(s.instance, s.sequence): s for s in savepoint_log.savepoints(logs)}


def _lacking(
    candidates: list[tuple[savepoint_log.Savepoint, str]], held: Held, before: Held, found: Restored
) -> list[tuple[savepoint_log.Savepoint, str]]:
    """The candidates logs/ (`held`) lacks, counting those it holds the same as `present` and
    naming those it holds with other content in `differing`. An instance logs/ numbers
    differently (savepoints written after logs/ was lost), or that gained a savepoint since
    restore first read logs/ (`before`: a hook saved meanwhile), keeps its own chain: the
    remote's would not link to it."""
    lacking: list[tuple[savepoint_log.Savepoint, str]] = []
    candidate = {(s.instance, s.sequence) for s, _ in candidates}
    forked = {instance for instance, sequence in held.keys() - before.keys() - candidate}
    for savepoint, root in candidates:
        mine = held.get((savepoint.instance, savepoint.sequence))
        if mine is None:
            lacking.append((savepoint, root))
        elif mine.snapshot_hash == savepoint.snapshot_hash:
            found.present += 1
        else:
            forked.add(savepoint.instance)
            found.differing.append(
                f"{savepoint.instance} #{savepoint.sequence} (logs/ holds sha256:{mine.snapshot_hash[:16]}, the remote sha256:{savepoint.snapshot_hash[:16]})"
            )
    for savepoint, _ in lacking:
        if savepoint.instance in forked:
            found.differing.append(
                f"{savepoint.instance} #{savepoint.sequence} (its instance's chain in logs/ differs)"
            )
    return [(s, root) for s, root in lacking if s.instance not in forked]


def _only(savepoint: savepoint_log.Savepoint, signature: savepoint_log.LineSignature) -> savepoint_log.Savepoint:
    """`savepoint` with `signature` alone, to keep only the signatures that check."""
    return savepoint_log.Savepoint(savepoint.sequence, savepoint.created, signatures=[signature])


def _only_summary(
    savepoint: savepoint_log.Savepoint, signature: savepoint_log.SummarySignature
) -> savepoint_log.Savepoint:
    """`savepoint` with the summary signature `signature` alone, to keep only those that check."""
    return savepoint_log.Savepoint(savepoint.sequence, savepoint.created, summary_signatures=[signature])


def _vouched(
    remote: list[savepoint_log.Savepoint], key: str, found: Restored
) -> list[tuple[savepoint_log.Savepoint, str]]:
    """The remote's savepoints a root vouches for, with the root's name; refuses a signature that
    claims the key and does not verify, a name Layer 1 does not write and a broken link. Each
    instance's chain runs 1, 2, 3 … from the index read: a savepoint whose predecessor it does
    not hold, or left out, is left out too (`unlinked`), with every one after it, since no link
    to it can be checked (a line deleted from the middle of the index is never a gap in logs/)."""
    vouched = []
    for savepoint in remote:
        where = f"savepoint {savepoint.sequence} of {savepoint.instance!r} on the remote"
        if signed.refuted(savepoint, key):
            raise RestoreError(
                f"{where}: its signature by {key} does not verify: the index copy was altered; nothing restored"
            )
        if signed.signed_by(savepoint, key):
            root = signed.root(key)
        elif savepoint.written_here:
            root = verdicts.LOCAL_ROOT
        else:
            others = team.other_signers(savepoint, key)
            signer = f" (signed by {', '.join(others)})" if others else ""
            found.unvouched.append(f"{savepoint.instance} #{savepoint.sequence}{signer}")
            continue
        if not logs_dir.is_snapshot_name(savepoint.snapshot_file, savepoint.sequence):
            raise RestoreError(
                f"{where} names {savepoint.snapshot_file!r}, not a name precompact writes; nothing restored"
            )
        vouched.append((savepoint, root))
    by_key = {(s.instance, s.sequence): s for s, _ in vouched}
    for savepoint, _ in vouched:
        before = by_key.get((savepoint.instance, savepoint.sequence - 1))
        first = savepoint.sequence == 1 and savepoint.prev_snapshot_hash is not None
        if first or (before is not None and before.snapshot_hash != savepoint.prev_snapshot_hash):
            raise RestoreError(
                f"savepoint {savepoint.sequence} of {savepoint.instance!r} on the remote does not link to savepoint {savepoint.sequence - 1}; nothing restored"
            )
    linked: set[tuple[str, int]] = set()
    for savepoint, _ in sorted(vouched, key=lambda pair: (pair[0].instance, pair[0].sequence)):
        if savepoint.sequence == 1 or (savepoint.instance, savepoint.sequence - 1) in linked:
            linked.add((savepoint.instance, savepoint.sequence))
            continue
        gap = savepoint.sequence - 1
        why = "is not in the index read" if (savepoint.instance, gap) not in by_key else "is left out"
        found.unlinked.append(f"{savepoint.instance} #{savepoint.sequence} (savepoint {gap} {why})")
    return [(s, root) for s, root in vouched if (s.instance, s.sequence) in linked]


def _checked_bytes(
    repo,
    target: gitstore.Target,
    tip: str,
    logs: Path,
    wanted: list[tuple[savepoint_log.Savepoint, str]],
    progress: Progress,
) -> tuple[list[bytes], list[bytes], list[str]]:
    """Each wanted savepoint's snapshot, checked against what its root vouches for, the chunks
    they list that logs/ lacks, each checked against its name, and the snapshots the tip holds
    altered. A snapshot is read at the tip; one there that does not hold to its root (a commit on
    top rewrote it) is read again at the commit that added it: the signed hash is the root, not
    the tip, and that copy is restored when it holds, the tip's named. A chunk is read where the
    first savepoint listing it was committed, else at the tip: each machine names the chunks it
    commits with a naming key of its own, so the tip's key names only the chunks its own machine
    committed (another machine's savepoints keep theirs under their commit's key)."""
    added = gitstore.commits_adding_snapshots(repo, tip).added
    reads = list(gitstore.files_at(repo, [(tip, s.snapshot_file) for s, _ in wanted], target.keys))
    read_from = [tip] * len(wanted)
    spoilt = [i for i, (pair, data) in enumerate(zip(wanted, reads)) if _contradicts(data, *pair, tip) is not None]
    again = [i for i in spoilt if added.get(wanted[i][0].snapshot_file, tip) != tip]
    pushed = [added[wanted[i][0].snapshot_file] for i in again]
    altered = []
    for i, commit, data in zip(
        again,
        pushed,
        gitstore.files_at(repo, [(c, wanted[i][0].snapshot_file) for i, c in zip(again, pushed)], target.keys),
    ):
        savepoint, root = wanted[i]
        if _contradicts(data, savepoint, root, commit) is None:
            altered.append(
                f"{savepoint.instance} #{savepoint.sequence} ({quoting.path(savepoint.snapshot_file)} at {tip[:12]}: {_contradicts(reads[i], savepoint, root, tip)}; restored from commit {commit[:12]}, which pushed it)"
            )
            reads[i], read_from[i] = data, commit
    snapshots: list[bytes] = []
    refs: dict[str, chunks.Ref] = {}
    read_at: dict[str, str] = {}
    for done, ((savepoint, root), data, commit) in enumerate(zip(wanted, reads, read_from), start=1):
        if isinstance(data, (gitstore.Unopened, gitstore.Oversized)):
            raise RestoreError(f"savepoint {savepoint.sequence} of {savepoint.instance!r}: {data}; nothing restored")
        problem = _contradicts(data, savepoint, root, commit)
        if problem is not None or not isinstance(data, bytes):
            raise RestoreError(
                f"{problem} (savepoint {savepoint.sequence} of {savepoint.instance!r}, {quoting.path(savepoint.snapshot_file)}, holds no other copy that does in the commit that pushed it: `precompact restore --at COMMIT` reads the branch at a commit of its history from before it changed); nothing restored"
            )
        found = verdicts.read_snapshot(data, f"git commit {commit[:12]}")
        snapshots.append(data)
        for ref in verdicts.chunk_refs(found):
            refs.setdefault(ref.sha256, ref)
            read_at.setdefault(ref.sha256, added.get(savepoint.snapshot_file, tip))
        progress(done, len(wanted))
    missing = [ref for ref in refs.values() if verdicts.chunk_problem(ref, chunks.read_local(logs, ref), "logs/")]
    paths = [(read_at[ref.sha256], f"{gitstore.CHUNKS_DIR}{ref.sha256}") for ref in missing]
    first = list(gitstore.files_at(repo, paths, target.keys))
    # Not there, or sealed for identities not here (rekey re-encrypts at the tip): the tip's copy.
    again = [i for i, data in enumerate(first) if not isinstance(data, bytes) and paths[i][0] != tip]
    retried = gitstore.files_at(repo, [(tip, paths[i][1]) for i in again], target.keys)
    for i, data in zip(again, retried):
        if isinstance(data, bytes) or not isinstance(first[i], gitstore.Unopened):
            first[i], paths[i] = data, (tip, paths[i][1])
    fetched = []
    for ref, (commit, _), data in zip(missing, paths, first):
        if isinstance(data, (gitstore.Unopened, gitstore.Oversized)):
            raise RestoreError(f"{data}; nothing restored")
        problem = verdicts.chunk_problem(ref, data if isinstance(data, bytes) else None, f"commit {commit[:12]}")
        if problem is not None or not isinstance(data, bytes):
            raise RestoreError(f"{problem}; nothing restored")
        fetched.append(data)
    return snapshots, fetched, altered


def _contradicts(
    data: bytes | gitstore.GitStoreError, savepoint: savepoint_log.Savepoint, root: str, commit: str
) -> str | None:
    """Why the snapshot read at `commit` is not `savepoint` as its root vouches for it (not
    there, not read, or other bytes), or None when it is."""
    if isinstance(data, gitstore.GitStoreError):
        return str(data)
    try:
        verdicts.check_local_root(verdicts.read_snapshot(data, f"git commit {commit[:12]}"), savepoint, root)
    except verdicts.Broken as e:
        return str(e)
    return None
