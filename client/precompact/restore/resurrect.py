"""Resurrection: a savepoint chosen, put through the verifier (verifier/savepoint.py), and
brought back: what only git had is kept in logs/, the lineage recorded, the session state
restored.

The savepoints come from this machine's index or, on a machine that has only the git remote,
from the copy of the index committed on the savepoint branch: there it only says where to look,
and nothing it states counts until a root vouches for it. A savepoint is verified when its bytes
hash to the value this machine recorded when it wrote them (the local root: an index line this
machine tagged, local.provenance; a logs/ that came with the project has none), or when the
on-chain record of the configured authority and instance covers it: directly, or through the
predecessor hashes inside each later snapshot (the chain root). Git shows that its copy is the
committed one; it is no root of its own.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from precompact.boundary import logs_dir, private_file, quoting
from precompact.config.settings import Config
from precompact.errors import PrecompactError, WrongValue
from precompact.local import chunks, savepoint_log, snapshot
from precompact.records import Record, field
from precompact.verifier import savepoint as verification
from precompact.verifier import signed, verdicts
from precompact.verifier.verdicts import FAILED, NOT_VERIFIED, OFF, VERIFIED, Check

if TYPE_CHECKING:  # from_this_machine (a session start) reads no git evidence
    from precompact.verifier.evidence import GitEvidence

__all__ = [
    "FAILED",
    "NOT_VERIFIED",
    "OFF",
    "VERIFIED",
    "Check",
    "NotVouched",
    "ResurrectError",
    "Resurrection",
    "from_this_machine",
    "resurrect",
]
LOCAL_INDEX = "local index"


class ResurrectError(PrecompactError):
    """Nothing trustworthy to resurrect; the message says why and what to do."""


class WrongTime(ResurrectError, WrongValue):
    """An --at that is not an ISO 8601 time."""


class NotVouched(ResurrectError):
    """What a savepoint holds was asked for, and no root vouches for the copy in use (a `logs/`
    that came with the project) or it fails its checks; nothing of it is given."""


class Resurrection(Record):
    instance: str  # whose savepoint came back
    into: str  # the instance running now
    savepoint: savepoint_log.Savepoint
    later: int  # savepoints of `instance` newer than this one, by their hook's time (capture.newer)
    path: Path  # the snapshot on disk
    _contents: snapshot.SnapshotReader  # read through `contents`, which refuses what no root vouches for
    checks: dict[str, Check]
    source: str
    lineage: list[str] = field(default_factory=list)
    restored_state: Path | None = None
    # Read from your own branch where its tip's index was left out (verifier.team.own_index, as
    # `restore` walks): what was left out and which commit's index was read instead.
    left_out: str | None = None
    # What hooks queued for the configured instance (the index busy) that is not written yet, as
    # every command says it (snapshot.queued_notice): a later savepoint may be among it.
    queued: str | None = None

    @property
    def contents(self) -> snapshot.SnapshotReader:
        """What the savepoint holds, for every reader of it (export, uncompact, dropped, the
        briefs, the viewer's pages): only once `check_vouched` passes."""
        self.check_vouched()
        return self._contents

    def contents_as_asked(self) -> snapshot.SnapshotReader:
        """What the savepoint holds, whatever its checks say: only for `resurrect`'s report and
        JSON, which the user asks for by name, which say NOT VERIFIED or NOT INTACT first and
        exit non-zero (tests/python/test_architecture.py keeps every other reader on `contents`)."""
        return self._contents

    def check_vouched(self) -> None:
        """The check every reader of what the savepoint holds meets: a root (this machine's
        recorded hash, your signing key's signature or the chain) vouches for the copy in use
        (verdicts.copy_vouched: git's, when only this machine's failed). NotVouched otherwise,
        in one line that names the check and the fix; `recall` and `show` hold their snapshots
        to the same roots (verifier.signed.local_document)."""
        if self.copy_verified:
            return
        n = self.savepoint.sequence
        failed = [f"{name}: {c.detail}" for name, c in self.checks.items() if c.status == FAILED]
        if failed:
            raise NotVouched(
                f"savepoint {n} of {quoting.name(self.instance)} failed a check ({failed[0]}); nothing of it is given; run `precompact verify`"
            )
        why = "; ".join(f"{name}: {self.checks[name].detail}" for name in ("integrity", "chain") if name in self.checks)
        raise NotVouched(
            f"savepoint {n} of {quoting.name(self.instance)} is not verified from a root (this machine's recorded hash, your signing key's signature or the chain): {why}; "
            "nothing of it is given. `precompact resurrect --format report` shows the checks"
        )

    @property
    def document(self) -> snapshot.Document:
        """Every field of the snapshot but its history (`contents.newest_entries()`)."""
        return self.contents.document

    @property
    def intact(self) -> bool:
        return verdicts.intact(self.checks)

    @property
    def verified(self) -> bool:
        return verdicts.vouched(self.checks)

    @property
    def copy_verified(self) -> bool:
        """The bytes in use are vouched for by a root (git's, when only this machine's copy failed)."""
        return verdicts.copy_vouched(self.checks)

    @property
    def replaced_from_git(self) -> bool:
        """Only this machine's copy failed; the bytes in use are git's, which passed every other check."""
        return verdicts.replaced_from_git(self.checks)

    @property
    def size(self) -> int:
        return self.savepoint.snapshot_size_bytes or 0

    @property
    def conversation_size(self) -> int:
        """The restored conversation's bytes: a chunked snapshot's history rebuilt from its
        chunks, not the snapshot file (which only lists them)."""
        try:
            return self._contents.history_end - len(chunks.HISTORY_OPEN)
        except ValueError:
            return len(self._contents.data)


def resurrect(
    config: Config,
    instance: str | None = None,
    sequence: int | None = None,
    at: str | None = None,
    restore_state: bool = False,
    record_lineage: bool = False,
    of_compaction: bool = False,
    signer: str | None = None,
) -> Resurrection:
    """Loads and checks one savepoint of `instance` (default: the configured one): `sequence`,
    the newest at or before the ISO time `at`, or the newest (with `of_compaction`, the latest
    made at or for a compaction of the newest session, capture.latest_compaction). With `record_lineage`, the
    configured instance records that it continues `instance` (once verified); with `restore_state`, the saved
    session-state file is written back. Another instance's branch is held to the key it claims,
    which vouches only when it is yours or `signer`, the key the user pinned."""
    from precompact.verifier.evidence import GitEvidence

    name = instance or config.instance
    remote, remote_problem = GitEvidence.of(config)
    if remote is not None:
        remote = remote.of_instance(name)  # its own branch: a teammate's, for `--from NAME`
    savepoints, source, left_out = _savepoints(config, remote, remote_problem, name)
    target = _choose(savepoints, name, sequence, at, of_compaction)
    _check_name(target)
    unrooted = None if source == LOCAL_INDEX and target.written_here else _unrooted(source)
    roots = config
    if source != LOCAL_INDEX and name != config.instance:
        # A teammate's (or another machine's) instance, read from its branch: held to its own
        # key, the one its index is signed with, and to that key's on-chain record; never yours.
        roots = config.replace(authority=_own_key(savepoints, name, source))
    try:
        checked = verification.check(
            roots, remote, remote_problem, savepoints, target, unrooted, signed.configured_key(roots)
        )
    except verification.Unusable as e:
        raise ResurrectError(str(e)) from None
    if roots is not config:
        from precompact.verifier import team

        checked.checks = team.held_to_your_keys(
            checked.checks, str(roots.authority), signed.configured_key(config), () if signer is None else (signer,)
        )
    # Queue entries are this project's, so the configured instance's: what `verify` counts.
    queued = snapshot.queued_notice(config.logs) if name == config.instance else None
    found = _kept(config, name, savepoints, target, source, checked, remote).replace(left_out=left_out, queued=queued)
    continues = found.intact and record_lineage and name != config.instance
    if continues and not found.verified and roots is config:
        # A copy in logs/ no root vouches for: its lineage would be written into every later snapshot.
        raise ResurrectError(
            f"savepoint {target.sequence} of {quoting.name(name)} is not verified from a root (this machine's recorded hash, your signing key's signature or the chain); the lineage was not recorded"
        )
    continues = continues and found.verified  # a branch signed by a key not yours: reported, not continued
    if continues and savepoint_log.read(config.logs).lineage(config.instance) != found.lineage:
        savepoint_log.record_lineage(config.logs, config.instance, target, found.lineage)
    if restore_state:
        if not found.intact:
            raise ResurrectError(
                f"savepoint {target.sequence} of {quoting.name(name)} failed verification; the session state was not restored"
            )
        if not found.verified:
            raise ResurrectError(
                f"savepoint {target.sequence} of {quoting.name(name)} is not verified from a root (this machine's recorded hash, your signing key's signature or the chain); the session state was not restored"
            )
        found.restored_state = _restore_state(config, found.document, target)
    return found


def from_this_machine(
    config: Config,
    instance: str | None = None,
    sequence: int | None = None,
    of_compaction: bool = False,
    git_when_altered: bool = False,
    saved: list[savepoint_log.Savepoint] | None = None,
) -> Resurrection:
    """Savepoint `sequence` of `instance` (default: the configured instance; its newest with a
    conversation, or with `of_compaction` its latest compaction's as `resurrect` chooses) from this machine's index and bytes only, neither the network nor GitPython
    (whose import alone is most of a hook's start-up); git and chain as the worker recorded them
    in the index. For a session that is starting, and for pages that read what is here. With
    `git_when_altered` (`dropped`, the viewer), a local copy that cannot serve (altered, missing)
    is replaced as `resurrect` replaces it: by git's copy, checked against the same root
    (`copy_note` says so). `saved`: the configured instance's savepoints as the caller just read
    them from the index (a session start reads it once); None reads them here."""
    name = instance or config.instance
    given = saved if name == config.instance else None  # another instance's are read here
    if name != config.instance:
        config = config.replace(instance=name)
    savepoints = savepoint_log.savepoints(config.logs, name) if given is None else given
    if not savepoints:
        raise ResurrectError(
            f"no savepoint of {quoting.name(name)} in {quoting.path(savepoint_log.index_path(config.logs))}"
        )
    target = _choose(savepoints, name, sequence, None, of_compaction)
    _check_name(target)
    try:
        checked = verification.check_recorded(config, savepoints, target)
    except verification.Unusable as e:
        if git_when_altered and e.git_unread and config.git_layer:
            return resurrect(config, name, target.sequence)
        raise ResurrectError(str(e)) from None
    return _kept(config, name, savepoints, target, LOCAL_INDEX, checked)


def copy_note(found: Resurrection) -> str | None:
    """What a reader is told when this machine's copy of the savepoint failed its check and
    git's copy is read in its place; None when the copy read is this machine's."""
    if not found.replaced_from_git:
        return None
    failed = "; ".join(found.checks[name].detail for name in verdicts.LOCAL_COPIES if name in found.checks)
    return (
        f"this machine's copy of savepoint {found.savepoint.sequence} of {quoting.name(found.instance)} failed its check ({failed}); "
        "git's copy, which passed every other check, is read instead"
    )


def _check_name(target: savepoint_log.Savepoint) -> None:
    if not logs_dir.is_snapshot_name(target.snapshot_file, target.sequence):
        raise ResurrectError(
            f"the index names {quoting.path(target.snapshot_file)} as savepoint {target.sequence}'s snapshot, not a name precompact writes"
        )


def _unrooted(source: str) -> str:
    """Which index no root vouches for, as the checks name it."""
    return verification.NOT_WRITTEN_HERE if source == LOCAL_INDEX else "the index copy from git"


def _kept(
    config: Config,
    name: str,
    savepoints: list[savepoint_log.Savepoint],
    target: savepoint_log.Savepoint,
    source: str,
    checked: verification.Checked,
    remote: GitEvidence | None = None,
) -> Resurrection:
    """The checked savepoint as a Resurrection, keeping what only git had: the snapshot (never
    over an altered local file, which is evidence) and the chunks; in logs/ when logs/ indexes
    the savepoint, else (read from a branch: another instance's, or this one's where logs/ does not
    index it, as on a second machine) beside that branch in precompact's git directory, as
    `recall --from` keeps it: in logs/ it would have no index line."""
    from precompact.local import capture

    logs, path = config.logs, config.root / target.snapshot_file
    if source != LOCAL_INDEX and remote is not None:
        # Here only: a session start, which reads logs/ alone, must not import GitPython.
        from precompact.remote import gitstore

        logs = gitstore.teammate_logs(remote.repo, name)
        path = logs / logs_dir.SAVES_DIR / Path(target.snapshot_file).name
    if checked.from_git is not None:
        if "snapshot" in checked.checks:
            path = path.with_name(path.stem + ".from-git.json")
        logs_dir.write_atomic(logs, path.relative_to(logs).as_posix(), checked.from_git)
    for data in checked.chunks_from_git:
        chunks.store(logs, data)
    reader = snapshot.SnapshotReader(checked.document)
    return Resurrection(
        name,
        config.instance,
        target,
        capture.newer(savepoints, target),
        path,
        reader,
        checked.checks,
        source,
        _lineage(reader.document, name, config.instance),
    )


def export(config: Config, instance: str | None = None, sequence: int | None = None) -> bytes:
    """The full document of a savepoint (conversation history, session state, files in play,
    git state): a chunked snapshot rebuilt from its chunks, the same bytes every time. Refuses
    a savepoint that fails a check."""
    found = resurrect(config, instance, sequence)
    if not found.intact:
        failed = next(f"{name}: {c.detail}" for name, c in found.checks.items() if c.status == FAILED)
        raise ResurrectError(
            f"savepoint {found.savepoint.sequence} of {quoting.name(found.instance)} failed a check ({failed}); nothing exported"
        )
    return found.contents.data


def _savepoints(
    config: Config, remote: GitEvidence | None, remote_problem: str | None, name: str
) -> tuple[list[savepoint_log.Savepoint], str, str | None]:
    """`name`'s savepoints from this machine's index, else from the index committed on the
    savepoint branch, which of the two they come from, and (your own branch's tip index left
    out, read from an older commit's: `_own_savepoints`) what was left out."""
    local = savepoint_log.savepoints(config.logs, name)
    if local:
        return local, LOCAL_INDEX, None
    index = savepoint_log.index_path(config.logs)
    from precompact.remote import gitstore

    if remote is None:
        raise ResurrectError(
            f"no savepoint of {quoting.name(name)} in {quoting.path(index)} ({remote_problem}); check the instance name or run from the project"
        )
    try:
        remote.fetch()
        fetched = ""
    except gitstore.GitStoreError as e:
        fetched = f"; {e}"
    if remote.tip is None:
        raise ResurrectError(
            f"no savepoint of {quoting.name(name)} in {quoting.path(index)}, and branch {remote.target.branch} is not in {config.repository}{fetched}"
        )
    branch = remote.target.branch
    if name == config.instance:
        return _own_savepoints(config, remote, name)
    [committed] = remote.snapshot_reads([(remote.tip, str(index.relative_to(config.root)))])
    if isinstance(committed, gitstore.Sealed):
        raise ResurrectError(
            f"{quoting.name(name)}'s savepoints on branch {branch} are not encrypted to you ({committed}); ask {quoting.name(name)}'s owner to add your public key (`precompact key show`) to their encryption.recipients, then run `precompact trust` and `precompact key rekey`"
        )
    if isinstance(committed, gitstore.Unopened):
        raise ResurrectError(f"the savepoints on branch {branch} cannot be read: {committed}")
    if not isinstance(committed, (bytes, gitstore.Oversized)):
        raise ResurrectError(
            f"branch {branch} in {config.repository} holds no {index.name}; it is not a precompact savepoint branch"
        )
    from precompact.verifier import team

    read = team.parsed_copy(committed)
    if isinstance(read, str):
        # A teammate's branch is judged at its tip, as `status --remote` and `recall --from`
        # judge it: an index copy precompact does not write is refused whole, never read for the
        # lines that parse, and its history is its owner's to read back.
        raise ResurrectError(
            f"{quoting.name(name)}'s branch {branch} at {remote.tip[:12]}: {read}; nothing was resurrected (a teammate's branch is read at its tip only: its history is not checked here)"
        )
    savepoints = savepoint_log.of_instance(read.savepoints, name)
    if not savepoints:
        raise ResurrectError(
            f"no savepoint of {quoting.name(name)} in {quoting.path(index)} or on branch {branch}; check the instance name (see `precompact status --remote`)"
        )
    return savepoints, f"branch {branch} of {config.repository}", None


def _own_savepoints(
    config: Config, remote: GitEvidence, name: str
) -> tuple[list[savepoint_log.Savepoint], str, str | None]:
    """Your own instance's savepoints from its branch, where logs/ holds none (a new machine):
    read as `restore` reads them (verifier.team.own_index), walking past a tip index that is not
    a readable one or holds a line another key signed to your own behind it, and saying what it
    left out."""
    from precompact.remote import gitstore
    from precompact.verifier import team

    assert remote.tip is not None
    branch = remote.target.branch
    keys = team.your_keys(config, signed.configured_key(config))
    try:
        added = gitstore.commits_adding_snapshots(remote.repo, remote.tip)
        own = team.own_index(remote.repo, remote.target, remote.tip, name, keys, added)
    except (team.IndexNotRead, team.NoOwnIndex) as e:
        raise ResurrectError(f"{e}; nothing was resurrected") from None
    savepoints = savepoint_log.of_instance(own.savepoints, name)
    if not savepoints:
        raise ResurrectError(
            f"no savepoint of {quoting.name(name)} in {quoting.path(savepoint_log.index_path(config.logs))} or on branch {branch}; check the instance name (see `precompact status --remote`)"
        )
    if own.commit == remote.tip:
        # Nothing left out: the tip's index read (a line another key signed, with no index of
        # yours behind it, is shown with its own verdict: not verified).
        return savepoints, f"branch {branch} of {config.repository}", None
    return (
        savepoints,
        f"branch {branch} of {config.repository} at {own.commit[:12]}",
        f"at {remote.tip[:12]}, {own.left_out}; {own.walked}",
    )


def _own_key(savepoints: list[savepoint_log.Savepoint], name: str, source: str) -> str:
    """The key `name`'s index on its branch is signed with, once every line of it checks under
    that key and the savepoints link 1, 2, 3 … (verifier.team, as `status --remote` judges it)."""
    from precompact.verifier import team

    key = team.own_key(savepoints)
    if key is None:
        raise ResurrectError(
            f"no line of {quoting.name(name)}'s index on {source} is signed: there is no key of {quoting.name(name)}'s to check its savepoints against"
        )
    problem = team.index_problem(savepoints, key)
    if problem is not None:
        raise ResurrectError(f"{quoting.name(name)}'s index on {source} is altered: {problem}")
    return key


def _choose(savepoints: list, name: str, sequence: int | None, at: str | None, of_compaction: bool = False):
    if sequence is not None:
        for savepoint in savepoints:
            if savepoint.sequence == sequence:
                return savepoint
        raise ResurrectError(
            f"{quoting.name(name)} has no savepoint {sequence}; it has {savepoints[0].sequence} to {savepoints[-1].sequence}"
        )
    if at is not None:
        moment = parse_time(at)
        # When each was saved: its hook's time (a savepoint written later from its queue entry
        # holds the conversation as it was then), newest last whatever order they were written in.
        earlier = sorted((s for s in savepoints if s.made_at <= moment.timestamp()), key=lambda s: s.made_at)
        if not earlier:
            first = min(savepoints, key=lambda s: s.made_at)
            raise ResurrectError(
                f"{quoting.name(name)} has no savepoint at or before {at}; the first is from {quoting.timestamp(first.made_timestamp)}"
            )
        return _with_conversation(earlier)
    if of_compaction:
        from precompact.local import capture

        return capture.latest_compaction(savepoints) or _with_conversation(savepoints)
    return _with_conversation(savepoints)


def _with_conversation(savepoints: list):
    """The newest savepoint that holds a conversation (the newest, when none does): one made
    without a transcript restores nothing."""
    from precompact.local import capture

    return capture.latest_with_conversation(savepoints) or savepoints[-1]


def parse_time(text: str) -> datetime:
    """An ISO 8601 time; without a zone it is UTC."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise WrongTime(f"--at {text!r} is not an ISO 8601 time; e.g. 2026-11-30T14:05:00Z") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _lineage(document: snapshot.Document, name: str, into: str) -> list[str]:
    lineage = list(document.lineage) or [name]
    if lineage[-1] != name:
        lineage.append(name)
    if into != name:
        lineage.append(into)
    return lineage


def _restore_state(config: Config, document: snapshot.Document, target) -> Path:
    if config.session_state is None:
        raise ResurrectError("snapshot.session_state is not set in .precompact.toml; set it to the file to restore")
    saved = document.session_state
    if not saved.kept:
        raise ResurrectError(
            f"savepoint {target.sequence} holds no session state ({saved.problem or 'none was configured'})"
        )
    content = saved.content
    text = content if isinstance(content, str) else json.dumps(content, indent=2, ensure_ascii=False) + "\n"
    private_file.replace(config.session_state, text.encode("utf-8"))
    return config.session_state
