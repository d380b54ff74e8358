"""The evidence the verifier reads about savepoints, gathered once per run: git's copies of
their snapshots and chunks at the recorded commits, and the shapes the rules judge of them
(GitCopy, RemoteBranch; a snapshot's own, Snapshot, is snapshot_bytes.py's). Nothing here decides anything (the rules are in verdicts.py, which imports this
module, never the other way); nothing read here is trusted until a rule holds it to a root.

One rule of reading lives here and nowhere else: a copy sealed at its commit for identities
that are not here is read again from the branch tip, where `precompact rekey` re-encrypts every
file for the identities added since. What the tip gives still has to hash to what a root
vouches for, so the tip is a place to look, never a root.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, TypeVar

from precompact.config.settings import Config
from precompact.local import chunks
from precompact.local.savepoint_log import Savepoint

# GitPython is imported through gitstore where git is read: the SessionStart hook checks a
# savepoint through this package and never reads git.
if TYPE_CHECKING:
    import git

    from precompact.remote import gitstore
    from precompact.remote.encryption import Keys
    from precompact.verifier.snapshot_bytes import Snapshot

Read = TypeVar("Read")


@dataclass(frozen=True)
class GitCopy:
    """What git holds of savepoint `sequence`'s snapshot at `commit`, as evidence.py read it
    against the hash wanted."""

    sequence: int
    commit: str
    snapshot_file: str  # as the index names it (outside text: quote it)
    present: bool  # the commit holds the file, in clear or encrypted
    sha256: str | None  # what git's copy hashes to (None: not the local bytes, or not read)
    unopened: gitstore.Unopened | None  # encrypted, and it could not be read here
    data: bytes | None  # its plaintext, when the local bytes could not stand for it
    decrypted: bool  # an encrypted copy, decrypted here


@dataclass(frozen=True)
class RemoteBranch:
    """The savepoint branch as the remote stated it in this run. The remote is input: what it
    states only ever takes a verdict away (a commit it holds is still judged by its bytes)."""

    remote: str
    branch: str
    exists: bool
    reason: str | None  # why the remote could not be read, in git's words (outside text: quote it)


@dataclass(frozen=True)
class HeldBy:
    """The branch a savepoint's commit must be on (named for a verdict), and its commits."""

    branch: str
    commits: set[str]


class GitEvidence:
    """One repository's savepoint branch as evidence: its commits, copies and chunks."""

    def __init__(self, repo: git.Repo, target: gitstore.Target, keys: Keys):
        self.repo = repo
        self.target = target
        self.keys = keys
        self._at_tip: dict[
            str, bytes | None | gitstore.Unopened | gitstore.Oversized
        ] = {}  # chunk sha256 -> as the tip holds it
        self._instances: dict[gitstore.Target, GitEvidence] = {}
        # (commit, chunk sha256) -> its blob at that commit, as `locate_chunks` found it
        self._chunk_blobs: dict[tuple[str, str], str | None | gitstore.Unopened] = {}

    def of_instance(self, instance: str) -> GitEvidence:
        """The same repository as evidence for `instance`'s own branch (where Layer 2 commits
        its savepoints), each read once per run."""
        target = self.target.of_instance(instance)
        if target == self.target:
            return self
        if target not in self._instances:
            self._instances[target] = GitEvidence(self.repo, target, self.keys)
        return self._instances[target]

    @classmethod
    def of(cls, config: Config) -> tuple[GitEvidence | None, str | None]:
        """The configured repository, or None and why it cannot be read."""
        from precompact.remote import encryption, gitstore

        if not config.git_layer:
            return None, "the git layer is off in .precompact.toml"
        try:
            repo = gitstore.open_repository(gitstore.Target.of(config))
        except gitstore.GitStoreError as e:
            return None, str(e)
        return cls(repo, gitstore.Target.of(config), encryption.Keys.of(config)), None

    @cached_property
    def tip(self) -> str | None:
        """The savepoint branch's tip (local, else as last fetched), read once."""
        from precompact.remote import gitstore

        return gitstore.savepoint_tip(self.repo, self.target)

    def fetch(self) -> None:
        """Fetches the savepoint branch from the remote (GitStoreError when it cannot)."""
        from precompact.remote import gitstore

        gitstore.fetch(self.repo, self.target)
        self.__dict__.pop("tip", None)
        self.__dict__.pop("_remote_commits", None)
        self._at_tip.clear()

    @cached_property
    def remote_branch(self) -> RemoteBranch:
        """The savepoint branch as the remote states it now, read once (and fetched into its
        remote-tracking ref when the remote has it)."""
        from precompact.remote import gitstore

        try:
            exists = gitstore.remote_has_branch(self.repo, self.target)
            if exists:
                self.fetch()
        except gitstore.GitStoreError as e:
            return RemoteBranch(self.target.remote, self.target.branch, False, e.unquoted)
        return RemoteBranch(self.target.remote, self.target.branch, exists, None)

    @cached_property
    def index_at_remote_tip(self) -> tuple[str, object] | None:
        """The remote's savepoint branch tip as this run fetched it, and the index copy it holds
        as `gitstore.files_at` read it (its bytes, or why not), read once for the run's checks of
        it (`gitstore.index_copy_at_tip`); None when the remote holds no such branch."""
        from precompact.remote import gitstore

        return gitstore.index_copy_at_tip(self.repo, self.target) if self.remote_branch.exists else None

    def on_remote(self, commit: str) -> bool | None:
        """Whether the remote's savepoint branch holds `commit` (None: the remote could not be
        read; `remote_branch.reason` says why)."""

        branch = self.remote_branch
        if branch.reason is not None:
            return None
        return branch.exists and commit in self._remote_commits

    @cached_property
    def _remote_commits(self) -> set[str]:
        """The commits of the branch as the remote last had it, read once the remote was asked
        (`remote_branch` fetches it into its remote-tracking ref)."""
        from precompact.remote import gitstore

        return gitstore.remote_branch_commits(self.repo, self.target)

    def has_commit(self, commit: str) -> bool:
        from precompact.remote import gitstore

        return gitstore.has_commit(self.repo, commit)

    @cached_property
    def on_branch(self) -> HeldBy | None:
        """The savepoint branch a commit is held to: the one here, else (precompact's git
        directory is named after the project's path, so a moved project or a new machine starts
        with none: no evidence of a rewrite) the remote's, fetched in this run; None when there
        is none to hold it to (none here, and the remote has none or could not be read)."""
        from precompact.remote import gitstore

        # An archive not migrated yet holds its commits on the shared branch of older versions.
        shared = self.target.legacy if self.target.legacy_ref else None
        legacy = gitstore.branch_commits(self.repo, shared) if shared else set()
        here = gitstore.branch_commits(self.repo, self.target.branch) | legacy
        remote = self.remote_branch
        fetched = remote.reason is None and remote.exists
        if here and fetched:
            # Another machine of this instance may have saved since this one last fetched: the
            # branch here is behind the remote's, which is no rewrite (`restore` takes its lines).
            held = here | self._remote_commits
            return HeldBy(f"branch {self.target.branch} here or on {remote.remote}", held)
        if here:
            return HeldBy(f"branch {self.target.branch}", here)
        if not fetched:
            return None
        return HeldBy(f"{remote.remote}'s branch {remote.branch}", self._remote_commits)

    def _rekeyed(self, commit: str, found: Read, read: Callable[[str], Read]) -> Read:
        """`found`, read at `commit`; when it is sealed for identities that are not here (and is
        the ciphertext the commit names: an altered one is a finding, not a reason to look
        elsewhere), what `read` gives at the branch tip instead, if that is bytes."""
        from precompact.remote import gitstore

        if isinstance(found, gitstore.Sealed) and found.intact and self.tip not in (None, commit):
            again = read(str(self.tip))
            if isinstance(again, bytes):
                return again
        return found

    def snapshot_reads(self, wanted: list[tuple[str, str]]) -> list[bytes | gitstore.GitStoreError]:
        """For each (commit, file): its plaintext, else the GitStoreError saying why not (an
        Unopened one when it is encrypted and cannot be read here); one git process for all."""
        from precompact.remote import gitstore

        def at(name: str) -> Callable[[str], bytes | gitstore.GitStoreError]:
            def read(commit: str) -> bytes | gitstore.GitStoreError:
                try:
                    return gitstore.file_at(self.repo, commit, name, self.keys)
                except gitstore.GitStoreError as e:
                    return e

            return read

        found = gitstore.files_at(self.repo, wanted, self.keys)
        return [self._rekeyed(commit, copy, at(name)) for (commit, name), copy in zip(wanted, found)]

    def chunk(self, commit: str, ref: chunks.Ref) -> bytes | None | gitstore.Unopened | gitstore.Oversized:
        """Chunk `ref`'s plaintext at `commit` (unchecked): None when absent, the Unopened error
        when encrypted and unreadable here, the Oversized one when over what precompact writes."""
        from precompact.remote import gitstore

        def read(at: str) -> bytes | None | gitstore.Unopened | gitstore.Oversized:
            if at != self.tip:
                return gitstore.chunk_at(self.repo, at, ref, self.keys)
            # Every savepoint sealed at its commit reads its chunks here: each one once.
            if ref.sha256 not in self._at_tip:
                self._at_tip[ref.sha256] = gitstore.chunk_at(self.repo, at, ref, self.keys)
            return self._at_tip[ref.sha256]

        return self._rekeyed(commit, read(commit), read)

    def chunk_blobs(self, commit: str, listed: list[chunks.Ref]) -> list[str | None | gitstore.Unopened]:
        """The blob of each chunk `listed` at `commit` (gitstore.chunk_blob_ids), as `locate_chunks`
        found them for the whole run, else asked now."""
        from precompact.remote import gitstore

        if all((commit, ref.sha256) in self._chunk_blobs for ref in listed):
            return [self._chunk_blobs[(commit, ref.sha256)] for ref in listed]
        return gitstore.chunk_blob_ids(self.repo, [(commit, ref) for ref in listed], self.keys)

    def locate_chunks(self, wanted: list[tuple[str, chunks.Ref]]) -> None:
        """Finds the blob of every (commit, chunk) a run will check in one batch (one process for
        all of them, not one per savepoint); `chunk_blobs` answers from it. Only where each
        blob is: whether its bytes are the chunk is still checked, per savepoint."""
        from precompact.remote import gitstore

        found = gitstore.chunk_blob_ids(self.repo, wanted, self.keys)
        self._chunk_blobs.update({(commit, ref.sha256): blob for (commit, ref), blob in zip(wanted, found)})

    def blob_id(self, data: bytes) -> str:
        from precompact.remote import gitstore

        return gitstore.blob_id(self.repo, data)

    def commit_adding(self, name: str) -> str | None:
        """The branch's commit that added file `name` (a savepoint the index copy names without
        a commit)."""
        from precompact.remote import gitstore

        return gitstore.commit_adding(self.repo, self.tip, name) if self.tip else None

    def snapshot_copies(self, wanted: list[tuple[Savepoint, str, Snapshot | None, str]]) -> list[GitCopy]:
        """Git's copy of each (savepoint, commit, local bytes, hash wanted). Where the local
        bytes hash to the one wanted and git holds the file in clear, the blob ids compare them
        without reading git; otherwise git's copy is read (decrypted), one git process for all."""
        from precompact.remote import gitstore

        paths = [
            (commit, path)
            for savepoint, commit, _, _ in wanted
            for path in (savepoint.snapshot_file, gitstore.sealed_path(savepoint.snapshot_file))
        ]
        blobs = gitstore.blob_ids_at(self.repo, paths)
        to_read = [
            i
            for i, (_, _, local, sha256) in enumerate(wanted)
            if (blobs[2 * i] or blobs[2 * i + 1]) and not (blobs[2 * i] and _serves(local, sha256))
        ]
        reads = dict(zip(to_read, self.snapshot_reads([(wanted[i][1], wanted[i][0].snapshot_file) for i in to_read])))
        copies = []
        for i, (savepoint, commit, local, sha256) in enumerate(wanted):
            clear, sealed = blobs[2 * i], blobs[2 * i + 1]
            name = savepoint.snapshot_file
            if i not in reads:
                same = clear is not None and local is not None and clear == self.blob_id(local.data)
                present, found = clear is not None, sha256 if same else None
                copies.append(GitCopy(savepoint.sequence, commit, name, present, found, None, None, False))
                continue
            read = reads[i]
            if isinstance(read, gitstore.Unopened):
                copies.append(GitCopy(savepoint.sequence, commit, name, True, None, read, None, True))
                continue
            if isinstance(read, Exception):
                raise read  # the commit names the file, yet it cannot be read: the object store
            digest = hashlib.sha256(read).hexdigest()
            kept = None if _serves(local, digest) else read
            decrypted = sealed is not None and clear is None
            copies.append(GitCopy(savepoint.sequence, commit, name, True, digest, None, kept, decrypted))
        return copies


def _serves(local: Snapshot | None, sha256: str) -> bool:
    return local is not None and local.sha256 == sha256
