"""Layers 2 and 3 as a whole: flushing (commit and push what is not yet in git, then post what is
not yet on chain, in order, one pass at a time per project), re-encrypting the savepoint branch
under the same lock, and which committed snapshots git holds in clear text.

The facade imports this module when it is imported (for FlushOutcome and the exit codes), so
the hook loads it on every event: it imports GitPython and the Solana stack only inside the
functions that use them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from precompact.config.settings import Config
from precompact.errors import PrecompactError
from precompact.local import savepoint_log

if TYPE_CHECKING:
    from precompact.verifier import signed, verdicts

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
    # Why the remote's branch of this instance is not its own (a line another key signed), or None.
    foreign_branch: str | None = None
    # What the flush set aside and why, one line each, naming the fix (PRECOMPACT_KEYPAIR).
    notices: list[str] = field(default_factory=list)
    # The savepoints in logs/ no root vouches for, which Layer 2 never pushes, in one line naming
    # the fix (None: there are none). No retry changes it: it is not counted as queued.
    unvouched: str | None = None
    # Why Layers 2 and 3 did not run (`layers_wait`), naming the fix; None when they ran. No
    # retry changes it either: the user's command does.
    waiting: str | None = None
    # How many savepoints hooks left queued (the index lock busy) are still not in logs/ after
    # flush wrote the queue: each layer on counts them as queued.
    hook_queued: int = 0
    # With nothing left to post, the verifier's verdict on the record read once now against the
    # index (verdicts.posted_in_full); None when this flush posted, or tried to (a post reads the
    # record back), or the chain layer is off.
    layer_3_read: verdicts.Check | None = None

    @property
    def all_done(self) -> bool:
        """Whether nothing is left queued: Layers 2 and 3 hold every savepoint."""
        return not (self.layer_2_problems or self.layer_3_problems)

    @property
    def exit_code(self) -> int:
        return EXIT_ALL_DONE if self.all_done else EXIT_QUEUED


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


def layers_wait(config: Config) -> str | None:
    """Why Layers 2 and 3 wait in this project, naming the fix (local/registry.layers_wait: it
    is forgotten on this machine); None when they run, or the git layer is off (Layer 3 alone
    keeps no copy of the project's text)."""
    from precompact.local import registry

    return registry.layers_wait(config.root) if config.git_layer else None


def _flush(config: Config) -> FlushOutcome:
    outcome = _flushed(config)
    if outcome.waiting is None:
        _count_hook_queued(config, outcome)
    return outcome


def _count_hook_queued(config: Config, outcome: FlushOutcome) -> None:
    """Savepoints a hook left queued are on no layer yet, though the index says nothing of
    them: queued on each layer that is on, first (a flush that pushed all logs/ holds is not
    "up to date" while one waits to be written)."""
    from precompact.local import snapshot

    outcome.hook_queued = snapshot.queued_savepoints(config.logs)
    if not outcome.hook_queued:
        return
    said = (
        f"{outcome.hook_queued} savepoint(s) a hook left queued (the index lock was busy) are not in logs/ yet: "
        "`precompact flush` writes them first (its Layer 1 line says why it could not), then pushes them"
    )
    for enabled, problems in (
        (config.git_layer, outcome.layer_2_problems),
        (config.chain_layer, outcome.layer_3_problems),
    ):
        if enabled:
            problems.insert(0, said)


def _flushed(config: Config) -> FlushOutcome:
    from precompact.remote import gitstore

    waiting = layers_wait(config)
    if waiting is not None:
        return FlushOutcome(waiting=waiting)
    outcome = FlushOutcome()
    config, ignored = keypair_counted(config)
    outcome.notices = [ignored] if ignored else []
    # Whatever layers are on: a signed line stays the user's own when this machine's key is lost
    # (Layer 1 saves after it, Layer 3 posts it), and with the git layer it travels to the remote.
    newly_signed = _sign_lines(config)
    if config.git_layer:
        from precompact.verifier import signed, team, verdicts

        vouched = signed.vouching(config)
        keys = team.your_keys(config, signed.configured_key(config))
        passed_over: list[tuple[str, int]] = []

        def vouched_noted(savepoint: savepoint_log.Savepoint) -> bool:
            """`vouched`, each savepoint Layer 2 passes over noted for the one line said of them."""
            if vouched(savepoint):
                return True
            passed_over.append((savepoint.instance, savepoint.sequence))
            return False

        target = gitstore.Target.of(config)
        unread: list[str] = []
        try:
            repo = gitstore.open_repository(target)
        except gitstore.GitStoreError as e:
            outcome.layer_2_problems = [str(e)]
        else:
            outcome.layer_2_problems = savepoint_log.record_outcomes(
                config.logs,
                gitstore.sync(
                    repo,
                    target,
                    config.logs,
                    vouched_noted,
                    newly_signed,
                    lambda own, names: team.others_snapshots(repo, own, names, keys),
                    unread.append,
                ),
            )
            # Pushed before, not read back now: not up to date, and not a failed savepoint either.
            outcome.layer_2_problems.extend(unread)
            branch = _own_branch(config, repo, target)
            if branch is not None and branch.status == verdicts.FAILED:
                outcome.foreign_branch = branch.detail
            elif branch is not None:  # not failed, not done yet: lines the next flush re-signs
                outcome.layer_2_problems.append(branch.detail)
        if passed_over:
            from precompact.local import provenance

            outcome.unvouched = provenance.unvouched_note(config.logs, passed_over, remote=True)
    if config.chain_layer:
        # Imported here so that the hook, which only writes Layer 1, never loads the Solana stack.
        from precompact.ops import anchoring as chain_post

        index = savepoint_log.read(config.logs)
        mine = savepoint_log.of_instance(index.savepoints, config.instance)
        idle = all(s.layer_3 == savepoint_log.Layer3.CONFIRMED for s in mine)
        posts = chain_post.post_pending(
            config.cluster,
            config.keypair,
            config.program_id,
            config.instance,
            config.logs,
            git_layer=config.git_layer,
            authority=config.authority,
            keypair_setting=config.keypair_setting,
        )
        outcome.layer_3_problems = savepoint_log.record_outcomes(config.logs, posts)
        if idle and not outcome.layer_3_problems:
            # Nothing was posted, so nothing was read: "up to date" is said only of a record read.
            from precompact.verifier import verdicts

            outcome.layer_3_read = verdicts.posted_in_full(
                config, config.instance, mine, index.closing(config.instance)
            )
    return outcome


def unvouched(config: Config) -> tuple[set[tuple[str, int]], str | None]:
    """The savepoints in logs/ that no root vouches for (verifier.signed.vouching), by (instance,
    sequence), and what `status` says of them, as `flush` does (None: a root vouches for every one)."""
    from precompact.local import provenance
    from precompact.verifier import signed

    vouched = signed.vouching(config)
    found = [(s.instance, s.sequence) for s in savepoint_log.savepoints(config.logs) if not vouched(s)]
    return set(found), (provenance.unvouched_note(config.logs, found, config.git_layer) if found else None)


def shipped(config: Config, approved_authority: str | None) -> str | None:
    """What `trust` says, before asking, of the savepoints in logs/ that no root the user already
    holds vouches for, in one line; None when there are none. The roots counted are this
    machine's tag, the keypair's public key and `approved_authority` (the chain.authority of the
    version the user approved before, if the file under review keeps it), never the
    chain.authority the file under review sets: a file that names the key its own logs/ is signed
    with would vouch for itself. Those that key signs are said apart: approving the file makes
    them verify as yours. A logs/ that cannot be read is said in one line too (every command that
    reads it refuses it the same way)."""
    from precompact.boundary import quoting
    from precompact.local import provenance
    from precompact.verifier import signed

    held = {key for key in (_keypair_key(config), approved_authority) if key is not None}
    try:
        found = [
            s
            for s in savepoint_log.savepoints(config.logs)
            if not s.written_here and not any(signed.signed_by(s, key) for key in held)
        ]
    except (PrecompactError, OSError) as e:
        return f"{quoting.path(config.logs)} cannot be read to count its savepoints: {quoting.inline(str(e))}"
    if not found:
        return None
    new = config.authority if config.authority not in held else None
    vouched_by_new = sum(1 for s in found if signed.signed_by(s, new))
    return provenance.shipped_note(config.logs, len(found), new, vouched_by_new)


def new_authority(config: Config, approved_authority: str | None) -> str | None:
    """What `trust` says, before asking, of a chain.authority the user holds no root for: not the
    keypair's public key, nor the one they approved before. Approving the file makes that key
    theirs: what it signs (in logs/, on the remote, on chain) verifies as their own savepoints.
    None when the file sets none, or one the user already holds."""
    if config.authority is None or config.authority in (_keypair_key(config), approved_authority):
        return None
    return (
        f"chain.authority {config.authority} is not the key of your keypair ({config.keypair}) and you have not "
        "approved it before: approving this file makes every savepoint that key signs (in logs/, on the git remote, "
        "on chain) verify as yours; approve only if it is your own key"
    )


def resign_notice(config: Config) -> str | None:
    """What `trust` says after approving a configuration whose keypair is not the key that
    signed the savepoints this machine wrote (chain.keypair pointed at a new keypair: the
    rotation with the chain off): their lines on the remote stay the previous key's until a
    flush re-signs them (`_sign_lines`) and pushes the index, so `verify` here and `restore` on
    a machine holding only the new key count none of them till then. None when the git layer is
    off, the keypair does not sign here, or every such line is signed by it already."""
    from precompact.verifier import signed, team

    key = _keypair_key(config)
    if key is None or not config.git_layer or config.authority not in (None, key):
        return None
    written = [s for s in savepoint_log.savepoints(config.logs) if s.written_here and s.signatures]
    stale = [s for s in written if not signed.signed_by(s, key)]
    if not stale:
        return None
    previous = sorted({other for s in stale for other in team.other_signers(s, key)})
    return (
        f"{len(stale)} savepoint(s) this machine wrote are signed by {', '.join(previous)}, not by this file's key "
        f"{key}: run `precompact flush` now, which re-signs them with it and pushes their lines (until then `verify` "
        "here and `restore` on a machine holding only the new key find them signed by another key)"
    )


def _keypair_key(config: Config) -> str | None:
    """The public key of the keypair the configuration names (None: it cannot be read)."""
    from precompact.verifier import signed

    try:
        return signed.Signer.load(config.keypair).public_key
    except signed.SigningKeyError:
        return None


def _own_branch(config: Config, repo, target) -> verdicts.Check | None:
    """verifier.team's verdict on the instance's branch as the remote holds it now, when not
    VERIFIED: FAILED when it is not this project's own (a save under this instance's name by
    another key replaced the tip's index, two chains), NOT_VERIFIED while lines this machine
    wrote are still its previous key's (None: neither, or not read)."""
    from precompact.remote import gitstore
    from precompact.verifier import signed, team

    try:
        gitstore.fetch(repo, target, exact=True)
    except gitstore.GitStoreError:
        return None  # not on the remote (yet), or unreadable: the push's outcome says which
    keys = team.your_keys(config, signed.configured_key(config))
    pushed = savepoint_log.savepoints(config.logs, config.instance)
    return team.own_branch_problem(
        repo, target, config.instance, keys, pushed, gitstore.index_copy_at_tip(repo, target)
    )


def keypair_counted(config: Config) -> tuple[Config, str | None]:
    """`config` with the keypair that signs: PRECOMPACT_KEYPAIR counts only where the approved
    configuration names its public key as chain.authority (docs/setup.md); a file holding another
    key (or none that can be read) would sign nothing that verifies, so the file's chain.keypair
    signs instead, and the line returned says so, naming the variable and the fix (None: nothing
    set aside). Checked here, where the key is used, not when the configuration loads: that
    would cost every hook cryptography's import."""
    from precompact.verifier import signed

    if config.keypair_in_file is None or config.authority is None:
        return config, None
    try:
        key = signed.Signer.load(config.keypair).public_key
    except signed.SigningKeyError as e:
        why = f"{e}"
    else:
        if key == config.authority:
            return config, None
        why = f"it holds {key}, not chain.authority {config.authority}"
    return config.replace(keypair=config.keypair_in_file, keypair_in_file=None), (
        f"PRECOMPACT_KEYPAIR {config.keypair} ignored: {why}; chain.keypair {config.keypair_in_file} signs "
        f"instead (unset PRECOMPACT_KEYPAIR, or point it at {config.authority}'s keypair file)"
    )


def signing_key(config: Config) -> signed.Signer | None:
    """The key a flush signs with here, of `config` as `keypair_counted` leaves it (the flush
    counted it already), or None when a flush here signs nothing: no keypair that reads, or
    chain.authority naming another key (what it signed could not verify; `status` and `verify`
    name the fix)."""
    from precompact.verifier import signed

    try:
        signer = signed.Signer.load(config.keypair)
    except signed.SigningKeyError:
        return None
    return signer if config.authority in (None, signer.public_key) else None


def _sign_lines(config: Config) -> bool:
    """Signs, with the user's signing key, every line this machine wrote that the key has not
    signed yet, whatever layers are on, before Layer 2 commits the index (verifier.signed): the
    copy on the remote then verifies on any machine with the public key, and the lines stay
    vouched for here if this machine's key (local/provenance) is lost. Without the keypair here
    (or with chain.authority naming another key) nothing is signed: what it would sign could not
    verify. The compaction summaries this machine recorded are signed too, each bound to its
    savepoint's line: a summary recorded after its savepoint was pushed (PostCompact runs after
    PreCompact's worker) goes with the next index copy, and nothing signed before changes.
    Returns whether it signed anything."""
    from precompact.verifier import signed

    signer = signing_key(config)
    if signer is None:
        return False
    savepoints = savepoint_log.savepoints(config.logs)
    todo = signed.unsigned(savepoints, signer)
    if todo:
        savepoint_log.record_signatures(config.logs, [(s, signer.sign(s)) for s in todo])
    summaries = signed.unsigned_summaries(savepoints, signer)
    if summaries:
        savepoint_log.record_summary_signatures(
            config.logs, [(s, signer.sign_summary(s, text)) for s, text in summaries]
        )
    return bool(todo or summaries)


class RekeyError(PrecompactError):
    """The branch could not be re-encrypted; the message says why."""


def rekey(config: Config) -> tuple[str | None, int, int]:
    """Re-encrypts the savepoint branch to the current recipients as a new commit and pushes
    it (under the flush lock, so no savepoint is committed meanwhile). Returns the commit (None:
    nothing to change), the number of files re-encrypted and the number left as they were,
    encrypted only to keys the configured identity does not hold."""
    from precompact.remote import gitstore
    from precompact.verifier import signed, team

    if not config.git_layer:
        raise RekeyError("the git layer is off in .precompact.toml; there is no branch to re-encrypt")
    target = gitstore.Target.of(config)
    keys = team.your_keys(config, signed.configured_key(config))
    try:
        with savepoint_log.locked(config.logs, FLUSH_LOCK_TIMEOUT_SECONDS, FLUSH_LOCK_NAME):
            repo = gitstore.open_repository(target)
            commit, files, left = gitstore.rekey(repo, target, config.logs)
            # Its tree is this branch's: never merged over savepoints another machine pushed meanwhile.
            every = savepoint_log.savepoints(config.logs)
            waiting = [s for s in every if s.instance == config.instance and s.layer_2 != savepoint_log.Layer2.PUSHED]
            hidden = gitstore.merge_hides(
                repo, target, every, waiting, lambda own, names: team.others_snapshots(repo, own, names, keys)
            )
            gitstore.push(repo, target, hidden)
    except (gitstore.GitStoreError, savepoint_log.LockTimeout) as e:
        raise RekeyError(str(e)) from None
    return commit, files, left


def in_clear(config: Config, savepoints: list[savepoint_log.Savepoint]) -> list[savepoint_log.Savepoint]:
    """The committed savepoints whose commit holds the snapshot in clear text (so the remote
    does, once pushed); none when git cannot be read."""
    from precompact.remote import gitstore

    committed = [s for s in savepoints if s.commit]
    if not config.git_layer or not committed:
        return []
    try:
        repo = gitstore.open_repository(gitstore.Target.of(config))
    except gitstore.GitStoreError:
        return []
    wanted = [(str(s.commit), str(s.snapshot_file)) for s in committed]
    return [s for s, clear in zip(committed, gitstore.in_clear(repo, wanted)) if clear]


def no_longer_on_remote(config: Config, savepoints: list[savepoint_log.Savepoint]) -> list[savepoint_log.Savepoint]:
    """The configured instance's savepoints this machine's index records as pushed whose commit
    the remote's branch, as last read here (by a push, `flush` or `verify`), no longer holds: it
    was rewound or deleted since (the next flush pushes them again). No network: what the
    remote holds now is `verify`'s to read. None when git cannot be read."""
    from precompact.remote import gitstore

    pushed = [
        s for s in savepoints if s.instance == config.instance and s.layer_2 == savepoint_log.Layer2.PUSHED and s.commit
    ]
    if not config.git_layer or not pushed:
        return []
    target = gitstore.Target.of(config)
    try:
        repo = gitstore.open_repository(target)
    except gitstore.GitStoreError:
        return []
    if gitstore.remote_tip(repo, target) is None or gitstore.pushed(repo, target, str(pushed[-1].commit)):
        return []  # never read here, or it holds the newest (so every older one: history only grows)
    return [s for s in pushed if not gitstore.pushed(repo, target, str(s.commit))]
