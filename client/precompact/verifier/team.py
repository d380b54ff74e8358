"""`precompact status --remote`: every instance the git remote holds (a branch each,
`<git.branch>-<instance id>`, and the shared branch of older versions), its last savepoint, and
whether it verifies against its own key. Read-only: nothing is written, here or there.

The remote is hostile input, and so is a teammate's branch. What is checked, from the branch's
tip alone: its index copy parses and holds the instance whose id the branch's name carries (a
copy of another's savepoints under a name of its own is not theirs; a logs/ may hold several
instances, and only that one's savepoints are judged); they run 1, 2, 3 … with each naming its predecessor's hash (none removed from the
middle or reordered); every line is signed by one key (the instance's own: the key of its first
signed line) and each signature checks; the last savepoint's snapshot at the tip hashes to what
its signed line states. Which key is the instance's own is the branch's claim (anyone who can
push can save under any name with a key of their own): it is named, and another instance's
branch is VERIFIED only when that key is your configured key (the root `verify` uses) or one you
pinned with `--signer` (`unpinned`, the one rule every command that reads a teammate's branch
applies); otherwise it is not verified, naming the key to pin, or, when keys were pinned and it is
none of them, naming them and never suggesting it (another key saved under the name). This project's own branch is held
to the configured key: a line there signed by another key fails (`foreign_line`). A branch whose index is encrypted to identities not here cannot be
read: it is listed, not verified. A teammate's branch rewound to an older state of its own
verifies here (its owner's `verify` says what it lacks); this project's own is also held to what
logs/ records as pushed to it (`tip_problem`: savepoints its index dropped, a snapshot file there
that no longer hashes to its line)."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from precompact.boundary import quoting
from precompact.config.settings import Config
from precompact.errors import PrecompactError
from precompact.local import savepoint_log
from precompact.verifier import signed, verdicts

if TYPE_CHECKING:
    from precompact.remote.gitstore import SnapshotsAdded


@dataclass(frozen=True)
class RemoteInstance:
    branch: str
    commit: str
    instance: str | None  # None: the index copy cannot be read here
    last: savepoint_log.Savepoint | None
    signer: str | None  # the key its lines are signed with
    yours: bool  # the instance is this project's own
    check: verdicts.Check


def instances(config: Config, pins: Collection[str] = ()) -> list[RemoteInstance]:
    """Every savepoint branch the remote holds, in name order, each judged from its tip; another
    instance's is VERIFIED only under your key or one of `pins` (`unpinned`)."""
    from precompact.remote import gitstore

    repo = gitstore.open_repository(gitstore.Target.of(config))
    target = gitstore.Target.of(config)
    tips = gitstore.fetch_savepoint_branches(repo, target)
    mine = signed.configured_key(config)
    keys = your_keys(config, mine)
    pushed = savepoint_log.savepoints(config.logs, config.instance)
    return [
        _judged(repo, target, branch, commit, config.instance, mine, keys, pins, pushed)
        for branch, commit in sorted(tips.items())
    ]


def _judged(
    repo,
    target,
    branch: str,
    commit: str,
    own_instance: str,
    mine: str | None,
    keys: dict[str, int | None],
    pins: Collection[str],
    pushed: list[savepoint_log.Savepoint],
) -> RemoteInstance:
    from precompact.remote import gitstore

    def listed(check: verdicts.Check, **found) -> RemoteInstance:
        values = {"instance": None, "last": None, "signer": None, **found}
        return RemoteInstance(branch, commit, yours=values["instance"] == own_instance, check=check, **values)

    # Before its index is read, the branch's name says whether it is this project's instance's.
    named = own_instance if branch == gitstore.instance_branch(str(target.legacy), own_instance) else None
    name = f"logs/{savepoint_log.INDEX_NAME}"
    [copy] = gitstore.files_at(repo, [(commit, name)], target.keys)
    # Another instance's branch encrypted to identities not here is not yours to read; this
    # project's own is encrypted to you, so a copy that does not open is judged (`parsed_copy`).
    if isinstance(copy, gitstore.Sealed) and (named is None or not readable_here(copy)):
        why = (
            "its index is encrypted to identities not here: not read"
            if named is None
            else f"its index copy is not read: {quoting.single_line(str(copy))}"
        )
        return listed(verdicts.Check(verdicts.NOT_VERIFIED, why), instance=named)
    read = parsed_copy(copy)
    if isinstance(read, str):
        return listed(verdicts.Check(verdicts.FAILED, read), instance=named)
    names = sorted({s.instance for s in read.savepoints})
    if not names:
        return listed(verdicts.Check(verdicts.NOT_VERIFIED, "its index copy holds no savepoint"))
    # A logs/ may hold several instances (a renamed one's predecessor): the branch is the one
    # whose id its name carries; the shared branch of older versions, its one instance.
    owner = [n for n in names if branch == gitstore.instance_branch(str(target.legacy), n)]
    if branch == target.legacy and len(names) == 1:
        owner = names
    if not owner:
        why = f"its index copy holds instance(s) {', '.join(quoting.name(n) for n in names)}, none of them the one its name says"
        return listed(verdicts.Check(verdicts.FAILED, why))
    savepoints = sorted((s for s in read.savepoints if s.instance == owner[0]), key=lambda s: s.sequence)
    signer = own_key(savepoints)
    found = {"instance": owner[0], "last": savepoints[-1], "signer": signer}
    # This project's own branch is held to the configured key, not to the key its lines claim.
    foreign = another_key(savepoints, keys, pushed) if owner[0] == own_instance else None
    if foreign:
        return listed(verdicts.Check(verdicts.FAILED, foreign), **found)
    if signer is None and _broken_chain(savepoints) is None:
        return listed(verdicts.Check(verdicts.NOT_VERIFIED, "no line of its index is signed"), **found)
    broken = index_problem(savepoints, signer)
    if broken and owner[0] == own_instance:
        # A line deleted from the middle of your own index: `restore` reads the chain back.
        added = gitstore.commits_adding_snapshots(repo, commit)
        walked = rollback(repo, target, commit, own_instance, keys, read.savepoints, added)
        broken = f"{broken}; {_walks_back(walked)}" if walked else broken
    if broken:
        return listed(verdicts.Check(verdicts.FAILED, broken), **found)
    last = savepoints[-1]
    try:
        data = gitstore.file_at(repo, commit, str(last.snapshot_file), target.keys)
    except gitstore.Sealed as e:
        if owner[0] == own_instance and not isinstance(e, gitstore.NoIdentity):
            # Your own branch, whose index the identity here opened: a snapshot sealed to others
            # at its tip is not one precompact pushed there (anyone who can push can seal bytes).
            why = f"savepoint {last.sequence}'s snapshot at its tip is not sealed to this machine's identity, which opens its index: {quoting.single_line(str(e))}"
            return listed(verdicts.Check(verdicts.FAILED, why), **found)
        return listed(
            verdicts.Check(
                verdicts.NOT_VERIFIED,
                f"{len(savepoints)} line(s) signed by {signer}; its snapshots are encrypted to identities not here",
            ),
            **found,
        )
    except gitstore.GitStoreError as e:
        return listed(verdicts.Check(verdicts.FAILED, f"savepoint {last.sequence}'s snapshot: {e}"), **found)
    if hashlib.sha256(data).hexdigest() != last.snapshot_hash:
        why = f"savepoint {last.sequence}'s snapshot does not hash to what its signed line states"
        return listed(verdicts.Check(verdicts.FAILED, why), **found)
    # This project's own branch is also held to what logs/ records as pushed to it, and to the
    # longest chain of your savepoints its history holds (what `restore` brings back).
    if owner[0] == own_instance:
        lost = tip_problem(repo, target, commit, savepoints, pushed, keys)
        if not lost:
            added = gitstore.commits_adding_snapshots(repo, commit)
            rolled = rollback(repo, target, commit, own_instance, keys, read.savepoints, added)
            lost = _walks_back(rolled) if rolled is not None else None
        lost = lost or strangers(read.savepoints, own_instance, keys)
        if lost:
            return listed(verdicts.Check(verdicts.FAILED, lost), **found)
    detail = f"{len(savepoints)} savepoint(s) signed by {signer}{' (your key)' if signer == mine else ''}, linked, the last one's snapshot checked"
    # Another instance's key is its branch's claim: anyone who can push can make one of their own.
    unvouched = None if owner[0] == own_instance else unpinned(signer, mine, pins)
    if unvouched is not None:
        detail = f"{len(savepoints)} savepoint(s), linked, the last one's snapshot checked; but {unvouched}"
        return listed(verdicts.Check(verdicts.NOT_VERIFIED, detail), **found)
    # Your own lines this machine signed before chain.keypair changed: every check held, and the
    # flush here that re-signs them is what is left to do.
    resign = previous_key(savepoints, keys, pushed) if owner[0] == own_instance else None
    if resign is not None:
        return listed(verdicts.Check(verdicts.NOT_VERIFIED, f"{detail}; but {resign}"), **found)
    return listed(verdicts.Check(verdicts.VERIFIED, detail, last.snapshot_hash), **found)


def _walks_back(rolled: tuple[str | None, str, str]) -> str:
    """`status --remote`'s words for a tip `rollback` walks past: what it dropped, and the fix
    (where the walk found no copy to restore from, its own words name where to read on)."""
    source, dropped, walked = rolled
    if source is None:
        return f"{dropped}; {walked}"
    return f"{dropped}: `precompact restore` walks back for them, restoring from commit {source[:12]}"


def your_keys(config: Config, mine: str | None) -> dict[str, int | None]:
    """The keys whose signatures make a line of this project's instance its own: `mine`, the
    configured key, for every savepoint; each key the lineage rotated from to it (`key rotate`,
    as this machine recorded it in the index, sealed: a line appended to logs/ adds no key) for
    the savepoints up to the rotation, which it signed before the new key re-signs them."""
    if mine is None:
        return {}
    keys: dict[str, int | None] = {mine: None}
    for rotation in reversed(savepoint_log.read(config.logs).rotations(config.instance)):
        if rotation.new_authority in keys and rotation.old_authority not in keys:
            keys[rotation.old_authority] = rotation.sequence
    return keys


def foreign_line(savepoints: list[savepoint_log.Savepoint], keys: dict[str, int | None]) -> str | None:
    """Why this project's own instance's index (from its branch) is not its own: the first line
    signed by another key and by none of `keys` (your_keys) for its sequence (another key's
    client that saves under the same name merges with its own index as the tree, hiding yours
    from `restore`). Lines signed by no key are another check's (`index_problem`); None
    without a configured key."""
    if not keys:
        return None
    mine = next(iter(keys))
    for savepoint in sorted(savepoints, key=lambda s: s.sequence):
        yours = [k for k, last in keys.items() if last is None or savepoint.sequence <= last]
        others = other_signers(savepoint, mine)
        if others and not any(signed.signed_by(savepoint, key) for key in yours):
            return f"savepoint {savepoint.sequence}'s line on the branch is signed by {', '.join(others)}, not this project's key {mine}"
    return None


def another_key(
    savepoints: list[savepoint_log.Savepoint],
    keys: dict[str, int | None],
    written: Collection[savepoint_log.Savepoint] = (),
) -> str | None:
    """`foreign_line`, and what it means, in the words `verify`, `flush`, `status --remote` and
    `restore` give. Lines this machine wrote and signed with the key it had before chain.keypair
    changed (`written`: logs/'s savepoints of the instance) are its previous key's
    (`previous_key`): no other key's, so None here (the flush here re-signs them). When every signed line of the instance is one
    other key's and logs/ cannot say whose, it is most likely the user's own: the key they
    rotated from (with the chain off, a new chain.keypair and `precompact trust`: the machine
    that wrote the lines re-signs them at its next flush), or their key on another machine
    (`init` there makes a key of its own). The flush comes first, since it never makes the
    rotated-from key count again; then the step that makes the other machine's key this
    project's, after which `restore` brings those savepoints back. Only otherwise is it another
    key saved under the name, which the next push of yours covers (pushing over your other
    machine's lineage would fork it)."""
    foreign = foreign_line(savepoints, keys)
    if foreign is None or previous_key(savepoints, keys, written):
        # This machine's own lines under its previous key fail no check: they wait for the flush
        # here that re-signs them (`previous_key`, which its callers say as not verified yet).
        return None
    signers = {s.signer for savepoint in savepoints for s in savepoint.signatures}
    if len(signers) == 1 and not signers & keys.keys():
        [other] = signers
        return (
            f"{foreign}: every line of it is signed by that key; if it is the key you rotated from (chain.keypair "
            f"pointed at a new keypair), run `precompact flush` on the machine that wrote them, which re-signs them "
            f"with {next(iter(keys))}, then `precompact restore` here; if it is your other machine's (`precompact init` "
            f"there made a key of its own), make it this project's key here, with that machine's keypair "
            f"(`precompact init --force --keypair FILE`) or chain.authority = {other} in .precompact.toml, "
            "then run `precompact restore`; if neither, another key saved under this instance's name"
        )
    return f"{foreign}: another key saved under this instance's name"


def previous_key(
    savepoints: list[savepoint_log.Savepoint], keys: dict[str, int | None], written: Collection[savepoint_log.Savepoint]
) -> str | None:
    """When each line of `savepoints` (the instance's on its branch) that none of `keys` signed
    is one this machine wrote (`written`, logs/'s: the same sequence and snapshot, with this
    machine's tag) and signed itself with the key it had before chain.keypair changed (logs/
    holds that key's signature over the same line, and so does the branch): what to say of them
    and the fix, `precompact flush` here, whose signing pass re-signs every line this machine
    wrote with the configured key and pushes the index. None otherwise (the machine's tag is
    the root: a key logs/ merely names is not taken for this machine's)."""
    if not keys:
        return None
    mine = next(iter(keys))
    here = {(s.sequence, s.snapshot_hash): s for s in written if s.written_here}
    unsigned = [
        s
        for s in savepoints
        if not any(signed.signed_by(s, k) for k, last in keys.items() if last is None or s.sequence <= last)
    ]
    olds: set[str] = set()
    for savepoint in unsigned:
        own = here.get((savepoint.sequence, savepoint.snapshot_hash))
        both = [
            k
            for k in other_signers(savepoint, mine)
            if own is not None and signed.signed_by(savepoint, k) and signed.signed_by(own, k)
        ]
        if not both:
            return None
        olds.update(both[:1])
    if not unsigned:
        return None
    return (
        f"queued: the lines of {_sequences([s.sequence for s in unsigned])} on the branch are signed by {', '.join(sorted(olds))}, "
        f"the key this machine signed them with before chain.keypair changed (logs/ holds them as written here), "
        f"not this project's key {mine}: run `precompact flush` here, which re-signs them with {mine} and pushes the index"
    )


def unpinned(key: str | None, mine: str | None, pins: Collection[str]) -> str | None:
    """Why `key`, the key another instance's branch claims as its own (`own_key`), vouches for
    nothing here: the one rule `status --remote`, `resurrect --instance/--from` and `recall
    --from` hold a teammate's branch to. None when `key` is this project's configured key
    (`mine`) or one the user pinned (`pins`, from `--signer`); else the reason. With no pin it
    names the fix (pin `key` if you trust it); with pins, `key` is not the one the user vouched
    for: most likely another key saved under the name (a pin given for another instance, as in
    `status --remote` over several, is the other case), so it is named and never suggested."""
    if key is not None and (key == mine or key in pins):
        return None
    if not pins:
        return (
            f"signed by {key}, not a key you pinned (this project's key is {mine}): pass --signer {key} if you trust it"
        )
    pinned = sorted(set(pins))
    which = f"{pinned[0]}, the key you pinned" if len(pinned) == 1 else f"{' or '.join(pinned)}, the keys you pinned"
    return f"signed by {key}, not {which}: another key saved under this name, unless you did not pin this instance's key (`precompact restore` on the pinned key's machine walks back to its own savepoints)"


def held_to_your_keys(
    checks: dict[str, verdicts.Check], key: str, mine: str | None, pins: Collection[str]
) -> dict[str, verdicts.Check]:
    """`checks` made against `key`, the key another instance's branch claims as its own: they
    stand as VERIFIED only when `unpinned` finds nothing against `key`; otherwise each is
    NOT_VERIFIED, saying whose key it is and how to pin it."""
    why = unpinned(key, mine, pins)
    if why is None:
        return checks
    return {
        name: verdicts.Check(verdicts.NOT_VERIFIED, f"{check.detail}; but {why}", sequence=check.sequence)
        if check.status == verdicts.VERIFIED
        else check
        for name, check in checks.items()
    }


def other_signers(savepoint: savepoint_log.Savepoint, key: str | None) -> list[str]:
    """The keys other than `key` the savepoint's line claims to be signed by (unchecked: named
    in a verdict, never trusted)."""
    return sorted({s.signer for s in savepoint.signatures} - {key})


def parsed_copy(copy: object) -> savepoint_log.IndexRead | str:
    """An index copy as `gitstore.files_at` read it from a branch, parsed, or why it is not an
    index precompact writes: absent, over the size precompact writes (not read), encrypted so
    that it does not open or decrypt here, or a line that does not parse. The words `status
    --remote`, `verify` and `restore` give for a branch's tip (`restore` then reads the history
    back, `own_index`). An encrypted copy with no identity here to try is not judged by this:
    callers hold it apart (`readable_here`)."""
    from precompact.remote import gitstore

    if isinstance(copy, gitstore.Oversized):
        return f"its index copy is {copy.measure}: not read"
    if isinstance(copy, gitstore.Unopened):
        return f"its index copy cannot be read: {quoting.single_line(str(copy))}"
    if not isinstance(copy, bytes):
        return f"it holds no index copy (logs/{savepoint_log.INDEX_NAME})"
    read = savepoint_log.parse(copy.splitlines(keepends=True))
    if read.bad_lines:
        return f"line {read.bad_lines[0]} of its index copy does not parse"
    return read


def readable_here(copy: object) -> bool:
    """Whether this machine can judge an index copy at all: anything but an encrypted one with
    no identity here to try (then every copy is sealed alike, and that is this machine's setup,
    not the branch's fault: the git verdicts say "not verified")."""
    from precompact.remote import gitstore

    return not isinstance(copy, gitstore.NoIdentity)


def own_branch_problem(
    repo,
    target,
    instance: str,
    keys: dict[str, int | None],
    pushed: list[savepoint_log.Savepoint],
    tip_copy: tuple[str, object] | None,
) -> verdicts.Check | None:
    """The verdict on the index at the tip of this project's instance branch as last fetched
    from the remote (the caller fetches it), when it is not VERIFIED: FAILED for a copy that is
    not a readable index (absent, encrypted to identities not here or not decrypting, over the
    size precompact writes, a line that does not parse: `parsed_copy`), a line another key
    signed (`another_key`), two chains (`forked`), or savepoints of `pushed` (logs/'s, as it
    records them pushed) that the tip dropped or holds altered (`tip_problem`); NOT_VERIFIED when
    no check fails but lines this machine wrote are still signed by its previous key
    (`previous_key`: queued for the flush here that re-signs them). In the words `status
    --remote` gives, with the fix. `tip_copy`: the tip and its index copy (`gitstore.index_copy_at_tip`).
    None when none is, or when no identity here can try an encrypted copy (the git verdicts say
    why)."""
    if tip_copy is None or not keys:
        return None
    tip, copy = tip_copy
    if not readable_here(copy):
        return None
    where = f"branch {target.branch} at {tip[:12]}"
    read = parsed_copy(copy)
    if isinstance(read, str):
        problem: str | None = read
    else:
        at_tip = savepoint_log.of_instance(read.savepoints, instance)
        two_chains = forked(at_tip, pushed, keys)
        if two_chains:  # names its own fix: the next savepoint's push would not end it
            return verdicts.Check(verdicts.FAILED, f"{where}: {two_chains}")
        problem = (
            another_key(at_tip, keys, pushed)
            or tip_problem(repo, target, tip, at_tip, pushed, keys)
            or strangers(read.savepoints, instance, keys)
        )
        resign = None if problem else previous_key(at_tip, keys, pushed)
        if resign:
            return verdicts.Check(verdicts.NOT_VERIFIED, f"{where}: {resign}")
    if not problem:
        return None
    return verdicts.Check(
        verdicts.FAILED, f"{where}: {problem} (your next savepoint's push puts your index back on top)"
    )


def tip_problem(
    repo,
    target,
    tip: str,
    at_tip: list[savepoint_log.Savepoint],
    pushed: list[savepoint_log.Savepoint],
    keys: dict[str, int | None],
) -> str | None:
    """Why the tip `tip` of this project's own branch does not hold the savepoints logs/ records
    as pushed there (`pushed`: those whose commit is in its history, each line as logs/ holds
    it), or None: another chain of the instance in their place (`forked`), some dropped from its
    index (`at_tip`, the instance's lines there) while their commits stay in the history (a
    commit on top restoring an earlier tree, such as a `git revert` of the branch's last
    commits: `restore` elsewhere would bring back only what is left), or a snapshot file there
    that is not the one its line states (a commit on top that rewrote it: `restore` reads it
    where it was pushed, `verify` checks it there)."""
    from precompact.remote import gitstore

    two_chains = forked(at_tip, pushed, keys)
    if two_chains:
        return two_chains
    held = gitstore.history(repo, tip)
    there = [s for s in pushed if s.commit in held and s.layer_2 == savepoint_log.Layer2.PUSHED]
    if not there:
        return None
    named = {(s.sequence, s.snapshot_hash) for s in at_tip}
    dropped = [s.sequence for s in there if (s.sequence, s.snapshot_hash) not in named]
    if dropped:
        return (
            f"its index names {len(there) - len(dropped)} of the {len(there)} savepoint(s) logs/ records as pushed "
            f"to it: {_sequences(dropped)} are only in its history, dropped by a later commit (a rollback, as a "
            "`git revert` of the branch's last commits makes), so `restore` on another machine would walk back for them"
        )
    altered = altered_at_tip(repo, target, tip, [(s, str(s.commit)) for s in there])
    if altered:
        return f"{altered} (`restore` reads each where it was pushed)"
    return None


def forked(
    at_tip: list[savepoint_log.Savepoint], pushed: list[savepoint_log.Savepoint], keys: dict[str, int | None]
) -> str | None:
    """When the branch's index (`at_tip`, the instance's lines there) holds, for a savepoint
    logs/ records as pushed (`pushed`), a line of another snapshot that one of your `keys`
    signed: another machine of this instance saved its own savepoint of that number and its
    push put it in place of this machine's (what a push of older versions made in a race: a
    merge whose tree was its own). No rollback: both chains are yours, and neither command ends
    it alone (this machine's next push would put the other's savepoints out of the index, which
    Layer 2 refuses), so the step that joins them is named. None otherwise."""
    mine = {(s.sequence, s.snapshot_hash) for s in pushed if s.layer_2 == savepoint_log.Layer2.PUSHED}
    numbers = {number for number, _ in mine}
    other = sorted(
        s.sequence
        for s in at_tip
        if s.sequence in numbers
        and (s.sequence, s.snapshot_hash) not in mine
        and any(signed.signed_by(s, k) for k, last in keys.items() if last is None or s.sequence <= last)
    )
    if not other:
        return None
    instance = at_tip[0].instance
    return (
        f"its index holds {_sequences(other)} signed by your key with other snapshots than the ones logs/ records as "
        f"pushed to it: another machine of {quoting.name(instance)} saved its own and its push put them in place of "
        f"this machine's (left in the branch's history): two chains of {quoting.name(instance)}, which `precompact "
        f"restore` keeps apart and `precompact flush` never pushes over; {savepoint_log.TWO_CHAINS_FIX}"
    )


def altered_at_tip(repo, target, tip: str, pushed: list[tuple[savepoint_log.Savepoint, str]]) -> str | None:
    """Which of the snapshots `pushed` (each savepoint with the commit that pushed it) the
    branch's tip `tip` holds as another file than the newest of those commits does (its tree,
    written from logs/ by Layer 2, holds every earlier snapshot as pushed), and that does not
    hash to what its line states, or is not there: None when every one is the same blob or
    hashes to its line (a rekeyed copy). Two `git ls-tree`, and a read only of the files that
    differ. A copy that differs and that this machine's identity, one that opens your
    savepoints, cannot open is altered as `restore` finds it: bytes that do not decrypt or
    authenticate, or that are not sealed to it (anyone who can push can seal bytes of their own).
    Only a machine with no such identity (NoIdentity: its setup, which the git verdicts name)
    leaves it unjudged."""
    from precompact.remote import gitstore

    newest = max(pushed, key=lambda pair: pair[0].sequence)[1]
    if newest == tip:
        return None  # the tip is the commit this machine's record says it pushed last
    at_tip, as_pushed = gitstore.snapshot_blobs(repo, tip), gitstore.snapshot_blobs(repo, newest)

    def blobs(tree: dict[str, str], name: str) -> tuple[str | None, str | None]:
        return tree.get(gitstore.sealed_path(name)), tree.get(name)

    differing = [s for s, _ in pushed if blobs(at_tip, s.snapshot_file) != blobs(as_pushed, s.snapshot_file)]
    bad = []
    reads = gitstore.snapshots_at(repo, [(tip, s) for s in differing], target.keys)
    for savepoint, data in zip(differing, reads):
        if isinstance(data, gitstore.NoIdentity):
            continue
        if isinstance(data, gitstore.Sealed):
            bad.append(
                f"savepoint {savepoint.sequence}'s snapshot ({quoting.path(savepoint.snapshot_file)}) is not sealed to this machine's identity ({quoting.single_line(str(data))}): replaced after it was pushed, or re-encrypted by `precompact key rekey` on a machine whose encryption.recipients leave this one out"
            )
        elif isinstance(data, gitstore.Unopened):
            bad.append(
                f"savepoint {savepoint.sequence}'s snapshot ({quoting.path(savepoint.snapshot_file)}) does not decrypt or authenticate with this machine's identity ({quoting.single_line(str(data))})"
            )
        elif isinstance(data, gitstore.Oversized):
            bad.append(
                f"savepoint {savepoint.sequence}'s snapshot ({quoting.path(savepoint.snapshot_file)}) is {data.measure}"
            )
        elif not isinstance(data, bytes):
            bad.append(f"savepoint {savepoint.sequence}'s snapshot is not there")
        elif hashlib.sha256(data).hexdigest() != savepoint.snapshot_hash:
            bad.append(
                f"savepoint {savepoint.sequence}'s snapshot ({quoting.path(savepoint.snapshot_file)}) does not hash to what its signed line states"
            )
    return f"at its tip {'; '.join(bad)}" if bad else None


def _sequences(numbers: list[int]) -> str:
    """Savepoint numbers in a few words: "savepoint 3", "savepoints 2..4", "savepoints 2, 5"."""
    if len(numbers) == 1:
        return f"savepoint {numbers[0]}"
    if numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"savepoints {numbers[0]}..{numbers[-1]}"
    return f"savepoints {', '.join(map(str, numbers))}"


def others_snapshots(repo, target, names: set[str], keys: dict[str, int | None]) -> set[str]:
    """Those of `names` (snapshot files the branch holds that logs/ lacks) that `restore` never
    brings back, so logs/ does not lack them: those whose line in the index at the tip of the
    branch as last fetched is signed, by none of `keys` (your_keys: another key's), and those no
    line there names at all (another chain's files the tree keeps, such as your other machine's
    under a key of its own after this machine's push: `restore` reads the tip's index alone, so
    sending the user to it would loop). Read only when some are
    lacking; none when the tip or its index cannot be read here (`restore` walks past it)."""
    from precompact.remote import gitstore

    tip = gitstore.remote_tip(repo, target)
    if tip is None or not names or not keys:
        return set()
    [copy] = gitstore.files_at(repo, [(tip, f"logs/{savepoint_log.INDEX_NAME}")], target.keys)
    if not isinstance(copy, bytes):
        return set()
    read = savepoint_log.parse(copy.splitlines(keepends=True))
    if read.bad_lines:
        return set()
    named = {s.snapshot_file for s in read.savepoints}
    return {
        s.snapshot_file
        for s in read.savepoints
        if s.snapshot_file in names and s.signatures and not any(signed.signed_by(s, key) for key in keys)
    } | (names - named)


def own_key(savepoints: list[savepoint_log.Savepoint]) -> str | None:
    """The instance's own key, as its index claims it: the signer of its first signed line (the
    key `resurrect --from` and `recall --from` hold a teammate's savepoints to, never yours)."""
    return next((s.signatures[0].signer for s in sorted(savepoints, key=lambda s: s.sequence) if s.signatures), None)


def index_problem(savepoints: list[savepoint_log.Savepoint], signer: str | None) -> str | None:
    """Why one instance's index (`savepoints`, from its branch) is not whole under `signer`, its
    own key: a savepoint missing from the middle or reordered, a broken hash link, a line
    not signed by it or whose signature does not verify (an altered line); None when whole."""
    broken = _broken_chain(sorted(savepoints, key=lambda s: s.sequence))
    if broken:
        return broken
    for savepoint in savepoints:
        if not signed.signed_by(savepoint, signer):
            how = "is not signed" if not savepoint.signatures or signer is None else "does not verify"
            return f"savepoint {savepoint.sequence}'s line {how} with its key {signer}"
    return None


def _broken_chain(savepoints: list[savepoint_log.Savepoint]) -> str | None:
    """Why the savepoints do not run 1, 2, 3 … each linking to its predecessor's hash."""
    before = None
    for expected, savepoint in enumerate(savepoints, start=1):
        if savepoint.sequence != expected:
            return f"savepoint {expected} is missing (the index goes on with {savepoint.sequence})"
        if before is not None and savepoint.prev_snapshot_hash != before.snapshot_hash:
            return f"savepoint {savepoint.sequence} does not link to savepoint {before.sequence}"
        before = savepoint
    return None


# How many commits that changed the index copy `own_index` reads back from where it starts (the
# tip, or `restore --at`) when the index there holds a line of this instance another key signed
# (a push of a client of another key under this instance's name makes its own index the tip's,
# yours staying in the history), or is one precompact does not write (over its size, a line that
# does not parse).
WALK = 200


class IndexNotRead(PrecompactError):
    """The index copy is encrypted and no identity here can try it: every copy is sealed alike,
    so walking back finds none (this machine's setup, not the branch's fault)."""


class Spoilt(PrecompactError):
    """The index copy at a commit is not a readable index: absent, encrypted so that it does not
    open or decrypt here, over the size precompact writes, or a line that does not parse (`why`,
    in `parsed_copy`'s words)."""

    def __init__(self, message: str, why: str):
        super().__init__(message)
        self.why = why


class Sealed(Spoilt):
    """The index copy is encrypted to identities not here (`why`: git's store says so): on a
    teammate's branch, not encrypted to you; on your own, spoilt like any other unreadable copy."""


class NoOwnIndex(PrecompactError):
    """Your own branch's index copy where the walk starts is not a readable index, and none of
    the WALK commits behind it holds one of your key's savepoints: the message says both."""


def index_at(repo, target, commit: str) -> list[savepoint_log.Savepoint]:
    """The savepoints the branch's index copy at `commit` holds (every instance's): IndexNotRead
    or Spoilt (Sealed) when it is not a readable index."""
    from precompact.remote import gitstore

    [copy] = gitstore.files_at(repo, [(commit, f"logs/{savepoint_log.INDEX_NAME}")], target.keys)
    if not readable_here(copy):
        raise IndexNotRead(f"the index copy on {target.branch} cannot be read: {quoting.single_line(str(copy))}")
    read = parsed_copy(copy)
    if isinstance(read, str):
        spoilt = Sealed if isinstance(copy, gitstore.Sealed) else Spoilt
        raise spoilt(f"branch {target.branch} at {commit[:12]}: {read}", read)
    return read.savepoints


@dataclass(frozen=True)
class OwnIndex:
    """The index your own instance's savepoints are read from on its branch (`restore`, and
    `resurrect` where logs/ holds none of them)."""

    commit: str  # the commit whose index copy was read
    savepoints: list[savepoint_log.Savepoint]  # every instance's, as that copy holds them
    # What the copy where the walk started held that was left out, and why (None: nothing).
    left_out: str | None = None
    # With `left_out`: which commit's index was read instead, or why none was.
    walked: str | None = None


def own_index(repo, target, start: str, instance: str, keys: dict[str, int | None], added: SnapshotsAdded) -> OwnIndex:
    """The index copy at `start` (the branch's tip, or a commit of its history), unless it holds
    a line of `instance` another key signed (`another_key`), is not a readable index
    (`index_at`), or holds fewer of your key's savepoints than an earlier copy of its history (a
    rollback: `_rolled_back`), or holds a line of another instance no root of yours vouches for
    (`strangers`): then that of the commit the walk back finds (`_walk`), saying what was left
    out. IndexNotRead when no identity here can try an encrypted copy; NoOwnIndex when
    the copy at `start` is unreadable and the walk finds none of yours behind it."""
    try:
        read = index_at(repo, target, start)
        left_out = another_key(savepoint_log.of_instance(read, instance), keys)
    except Spoilt as e:
        read, left_out = [], f"{e.why}, so the tip's index was left out"
    if left_out is None:
        rolled = _rolled_back(repo, target, start, instance, keys, read, added)
        if rolled is not None:
            return rolled
        left_out = strangers(read, instance, keys)
        if left_out is None:
            return OwnIndex(start, read)
    source, walked, _, _ = _walk(repo, target, start, instance, keys)
    if source != start:
        return OwnIndex(source, index_at(repo, target, source), left_out, walked)
    if not read:
        raise NoOwnIndex(f"branch {target.branch} at {start[:12]}: {left_out}; {walked}")
    return OwnIndex(start, read, left_out, walked)


def _rolled_back(
    repo,
    target,
    start: str,
    instance: str,
    keys: dict[str, int | None],
    read: list[savepoint_log.Savepoint],
    added: SnapshotsAdded,
) -> OwnIndex | None:
    """The index to restore from when the one at `start` is a rollback (`rollback`), or None."""
    found = rollback(repo, target, start, instance, keys, read, added)
    if found is None:
        return None
    source, dropped, walked = found
    if source is None:  # no copy found to restore from: the tip's, said not to be whole
        return OwnIndex(start, read, f"{dropped}, so what the tip's index lacks was not restored", walked)
    return OwnIndex(source, index_at(repo, target, source), f"{dropped}, so the tip's index was left out", walked)


def rollback(
    repo,
    target,
    start: str,
    instance: str,
    keys: dict[str, int | None],
    read: list[savepoint_log.Savepoint],
    added: SnapshotsAdded,
) -> tuple[str | None, str, str] | None:
    """When the index at `start` (`read`) holds only your own lines but a shorter chain of your
    savepoints (`unbroken`: 1, 2, 3 … each there, signed and linking) than an earlier copy of
    its history: a commit on top whose tree is an earlier state of the branch (a `git revert`
    of its last commits, your own earlier index replayed, either pushed as a merge), or whose
    index lost a line from the middle. Then the commit holding the longest chain (`_walk`), what
    the tip dropped, and the walk's words; None otherwise. Walked only when the tip's own lines
    do not run 1, 2, 3 … each linking (a gap), or the history added a snapshot file no line of
    the index at `start` that a root of yours vouches for names (`added`: the commits of
    `start`'s history that added snapshot files, `gitstore.commits_adding_snapshots`, read up to
    its bound; an intact branch names every one it added), or that log was cut at its bound (what it left
    unread may be what the tip dropped: a cut log never reads as "nothing unnamed", and only a
    walk that read every commit changing the index copy clears it). The walk also reads the
    index at the commit that added its newest line's snapshot, and at the WALK newest commits
    that added a snapshot file the index does not name (commits that change the index copy are
    cheap to push by the hundred, and so are those that add a file: the older ones are named as
    not read).
    When even so no copy holds a longer chain, and the walk stopped before the history's end,
    the source is None: nothing to restore from was found, and the words say so and where to
    read on (where the cut log stopped too), never "no rollback"."""
    own = savepoint_log.of_instance(read, instance)
    # An index whose lines run 1, 2, 3 … each linking, and whose lines your keys vouch for name
    # every snapshot file its history added, is no rollback (a line re-labelled as another
    # instance's, or stripped of its signature, names nothing: review15a F8).
    intact = _broken_chain(own) is None
    adding_commits = added.commits
    unnamed = set(adding_commits) - _named_by_yours(read, instance, keys)
    # A log cut at its bound proves nothing unnamed: the commits that added the dropped
    # savepoints' files may be the ones it did not read (review16a F1: re-adds pushed on top),
    # so the history is walked as when a file is unnamed.
    cut = added.unread
    if intact and not unnamed and cut is None:
        return None
    held = unbroken(own, keys)
    # Your lines after the chain's break (each signature checked once: those up to it were).
    after = sorted({s.sequence for s in own if s.sequence > held and any(signed.signed_by(s, k) for k in keys)})
    yours, broken_off = [*range(1, held + 1), *after], bool(after)
    # Only a copy that holds the tip's own chain as its beginning is one the tip rolled back; one
    # that holds another savepoint your key signed under a number of it is another chain of the
    # instance (two machines of it: `forked`, "two chains"), not a longer copy of this one.
    tips = {s.sequence: s.snapshot_hash for s in own if s.sequence <= held}
    # The commits that added what the tip's index lacks, and the one that added its newest line's
    # snapshot (after a line deleted from the middle, the copy written with it is whole).
    newest = max(own, key=lambda s: s.sequence, default=None)
    # The latter first, then the rest newest first (`_walk` reads the WALK first of them).
    named_last = (
        [adding_commits[newest.snapshot_file]] if newest is not None and newest.snapshot_file in adding_commits else []
    )
    adding = list(dict.fromkeys([*named_last, *(commit for name, commit in adding_commits.items() if name in unnamed)]))
    source, walked, longest, unread = _walk(repo, target, start, instance, keys, agreeing_with=tips, also=adding)
    # Where the log of the adding commits stopped is a place to read on only where the walk
    # stopped before the history's end too: a walk that read every commit changing the index
    # copy read every copy it held, and what the log left unread adds none.
    also_unread = f"; {_cut_words(added)}" if cut is not None and unread is not None else ""
    if longest is None or longest <= held:
        if unread is None:
            return None  # every copy read: none holds more of this chain than the tip
        what = (
            f"its history added {len(unnamed)} snapshot file(s) its index does not name"
            if unnamed
            else f"its index holds your {_sequences(sorted({s.sequence for s in own}))}, not 1, 2, 3 … each linking"
            if not intact
            else f"the commits of its history from {(cut or '')[:12]} back were not read for the snapshot files they added ({added.why_unread})"
        )
        return (
            None,
            f"{what}, and no copy of the index read holds a longer chain of your savepoints",
            f"older commits were not read: `precompact restore --at {unread[:12]}` reads on from there{also_unread}",
        )
    walked += also_unread
    # What the earlier chain holds that the tip's does not: those its index lacks, else (a link
    # broken between lines it holds) every one after the break.
    dropped = [n for n in range(held + 1, longest + 1) if n not in yours] or list(range(held + 1, longest + 1))
    were = "was" if len(dropped) == 1 else "were"
    if broken_off:
        present = {s.sequence for s in own}
        missing = [n for n in range(1, yours[-1]) if n not in present]
        gap = (
            f"{_sequences(missing)} missing from the middle"
            if missing
            else f"the chain broken after #{held} (savepoint {held + 1}'s line is not signed by your key or does not link)"
        )
        # Lines of yours after the gap that the earlier chain does not reach: never restored
        # after a gap, so named, not passed over.
        later = [n for n in after if n > longest]
        beyond = (
            f"; {_sequences(later)}, at the tip only after the gap, {'is' if len(later) == 1 else 'are'} left out"
            if later
            else ""
        )
        words = (
            f"its index holds your {_sequences(yours)} with {gap}, an earlier copy in its history holds "
            f"savepoints 1..{longest} unbroken: {_sequences(dropped)} {were} dropped by a later commit (a line "
            f"deleted from the index, or a rollback){beyond}"
        )
    elif held:
        words = (
            f"its index holds your savepoints up to #{held}, an earlier copy in its history up to #{longest}: "
            f"{_sequences(dropped)} {were} dropped by a later commit (a rollback, as a `git revert` of the branch's last commits makes)"
        )
    else:
        words = f"its index holds none of your savepoints, an earlier copy in its history up to #{longest}: a later commit dropped them (a rollback)"
    return source, words, walked


def _cut_words(added: SnapshotsAdded) -> str:
    """What `rollback` says of a history whose commits adding snapshot files were read only up to
    their bound (`added.unread`: the newest commit not read)."""
    unread = added.unread or ""
    return (
        f"the commits from {unread[:12]} back were not read for the snapshot files they added ({added.why_unread}), so a "
        f"savepoint added by one of them was not looked for: `precompact restore --at {unread[:12]}` reads on from there"
    )


def _named_by_yours(read: list[savepoint_log.Savepoint], instance: str, keys: dict[str, int | None]) -> set[str]:
    """The snapshot files that lines of the index copy `read` (of `instance`'s own branch) name
    and that a root of yours vouches for (`vouched`). Without a configured key nothing can be
    checked: `instance`'s lines name theirs (no verdict calls them signed)."""
    if not keys:
        return {s.snapshot_file for s in read if s.instance == instance}
    return {s.snapshot_file for s in read if vouched(s, keys)}


def vouched(savepoint: savepoint_log.Savepoint, keys: dict[str, int | None]) -> bool:
    """Whether a line on your own instance's branch is yours, of whichever instance: this
    machine wrote it (its tag) or one of `keys` (your_keys) signed it. A logs/ holds another
    instance's lines only where this project saved under it (a renamed instance's predecessor,
    PRECOMPACT_INSTANCE), so under your key too; a line of yours re-labelled as another's
    instance no longer verifies, and an unsigned one is anyone's."""
    return savepoint.written_here or any(signed.signed_by(savepoint, k) for k in keys)


def strangers(read: list[savepoint_log.Savepoint], instance: str, keys: dict[str, int | None]) -> str | None:
    """Why the index copy `read` at `instance`'s own branch is not one this project wrote: a line
    of another instance that no root of yours vouches for (`vouched`): whoever pushed it put it
    there (your own lines re-labelled so, their snapshots removed, hide a rollback: review15a
    F8). None when there is none, or without a configured key (nothing to check them against)."""
    if not keys:
        return None
    found = sorted(
        (s for s in read if s.instance != instance and not vouched(s, keys)), key=lambda s: (s.instance, s.sequence)
    )
    if not found:
        return None
    first = found[0]
    return (
        f"its index holds {len(found)} line(s) of another instance that no key of this project signed "
        f"({quoting.name(first.instance)} #{first.sequence} first): put there by whoever pushed, not by this project"
    )


def unbroken(savepoints: list[savepoint_log.Savepoint], keys: dict[str, int | None]) -> int:
    """How far one instance's savepoints (`savepoints`, as one index copy holds them) run 1, 2,
    3 … unbroken: each there, signed by one of `keys` (your_keys), the first naming no
    predecessor and each other its predecessor's hash. The chain ends before the first that is
    missing, unsigned, or does not link: what follows a gap is not counted, however high."""
    before: savepoint_log.Savepoint | None = None
    for expected, savepoint in enumerate(sorted(savepoints, key=lambda s: s.sequence), start=1):
        linked = savepoint.prev_snapshot_hash == (None if before is None else before.snapshot_hash)
        if savepoint.sequence != expected or not linked or not any(signed.signed_by(savepoint, k) for k in keys):
            return expected - 1
        before = savepoint
    return len(savepoints)


def _walk(
    repo,
    target,
    start: str,
    instance: str,
    keys: dict[str, int | None],
    agreeing_with: dict[int, str] | None = None,
    also: Sequence[str] = (),
) -> tuple[str, str, int | None, str | None]:
    """The commit to restore from when the index at `start` holds a line of `instance` another
    key signed, is not a copy precompact writes, or holds a shorter chain of yours than an
    earlier copy (`rollback`), what to say of it, and how long a chain it holds: of the WALK
    newest commits of `start`'s history (every parent of a merge followed) that changed the
    index copy, the one whose index holds the longest chain of `instance`'s savepoints
    (`unbroken`: 1, 2, 3 … each signed by one of `keys`, none by another, each linking; a copy
    with a line deleted from the middle counts only up to the gap, and copies of a prefix of
    yours, pushed later, lose to the longer index), the newest on a tie; `start` itself (and
    None) when none holds any. `agreeing_with` (sequence -> snapshot hash): only copies that hold
    those savepoints as they are count. `also`: commits of `start`'s history read besides (those
    that added a snapshot file the index at `start` lacks: `rollback`). The last value: the newest
    commit that changed the index copy and was not read (None: the walk read them all)."""
    from precompact.remote import gitstore

    name = f"logs/{savepoint_log.INDEX_NAME}"
    commits = gitstore.commits_changing(repo, start, name, WALK + 1)
    newest, beyond = commits[:WALK], commits[WALK:]
    # A commit that adds a file is as cheap to push as one that changes the index: of those, too,
    # the WALK newest are read, and the rest named as not read.
    changing = set(newest)
    besides = [c for c in also if c not in changing]
    besides, unread_besides = besides[:WALK], besides[WALK:]
    read = [*newest, *besides]
    best: tuple[int, str] | None = None
    oversized: list[str] = []
    for commit, copy in zip(read, _distinct_copies(repo, target, read, name)):
        if copy is None:
            continue  # the same copy as a newer commit's read before: its chain was weighed there
        if isinstance(copy, gitstore.Oversized):
            oversized.append(f"{commit[:12]} ({copy.measure})")
            continue
        if not isinstance(copy, bytes):
            continue  # encrypted to identities not here, or not there: not yours to restore
        parsed = savepoint_log.parse(copy.splitlines(keepends=True))
        mine = savepoint_log.of_instance(parsed.savepoints, instance)
        if parsed.bad_lines or not mine or (best is not None and mine[-1].sequence <= best[0]):
            continue  # none of it, or no longer a chain than the best so far: its signatures go unchecked
        if foreign_line(mine, keys):
            continue
        if agreeing_with and any(agreeing_with.get(m.sequence, m.snapshot_hash) != m.snapshot_hash for m in mine):
            continue  # another chain of the instance, not this one's earlier state
        chain = unbroken(mine, keys)  # an unsigned line, or one after a gap, counts for nothing
        if chain and (best is None or chain > best[0]):
            best = (chain, commit)
    skipped = (
        f"; not read, over the size precompact writes: the index copy at {', '.join(oversized)}" if oversized else ""
    )
    which = f"the {len(newest)} commit(s) of its history that changed the index copy" + (
        f" and the {len(besides)} that added a snapshot file the index lacks, or its newest line's" if besides else ""
    )
    unread = beyond[0] if beyond else unread_besides[0] if unread_besides else None
    not_read = (
        f"; {len(unread_besides)} older commit(s) that added one were not read (`precompact restore --at {unread_besides[0][:12]}` reads on from there)"
        if unread_besides
        else ""
    )
    if best is not None:
        return (
            best[1],
            f"restored instead from commit {best[1][:12]}: of {which}, the one whose index holds the most savepoints your key signed, unbroken from #1 (up to #{best[0]}); your next savepoint's push puts your index back on top{not_read}{skipped}",
            best[0],
            unread,
        )
    if not read:
        return start, f"no commit of its history holds {name}: not a precompact savepoint branch", None, None
    more = (
        f"; older ones were not read: `precompact restore --at {unread[:12]}` reads on from there"
        if unread
        else " (the whole history)"
    )
    return (
        start,
        f"none of {which} holds an index of your key's savepoints{more}{skipped}",
        None,
        unread,
    )


def _distinct_copies(repo, target, commits: list[str], name: str) -> list[bytes | PrecompactError | None]:
    """`gitstore.files_at` of `name` at each of `commits`, each distinct copy (its blobs, clear
    and encrypted, as one `git cat-file --batch-check` names them) read once, at the first commit
    that holds it: None at the others (a remote's commits can repeat one large copy thousands of
    times)."""
    from precompact.remote import gitstore

    ids = gitstore.blob_ids_at(repo, [pair for c in commits for pair in ((c, gitstore.sealed_path(name)), (c, name))])
    firsts: dict[tuple[str | None, str | None], int] = {}
    for i in range(len(commits)):
        firsts.setdefault((ids[2 * i], ids[2 * i + 1]), i)
    wanted = sorted(firsts.values())
    copies: list[bytes | PrecompactError | None] = [None] * len(commits)
    for i, copy in zip(wanted, gitstore.files_at(repo, [(commits[i], name) for i in wanted], target.keys)):
        copies[i] = copy
    return copies
