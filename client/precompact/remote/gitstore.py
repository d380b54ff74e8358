"""Layer 2: savepoints committed onto a dedicated branch and pushed, never touching the user's
index, working tree or current branch.

Each instance has a branch of its own, here and on the remote (`instance_branch`:
`<git.branch>-<instance id>`), so that teammates and machines sharing one remote never push the
same ref; the single branch every instance shared before (`git.branch` itself) is read where an
instance has no branch yet and migrated from, never written. A push is never forced and never
deletes: one that lost a race is fetched, merged on top and pushed again (`push`).

Everything goes through git plumbing (GitPython's command layer): blobs are hashed straight
from the files, the tree is built in a private index file, the commit is made with
`commit-tree`, and the branch moves with a compare-and-swap `update-ref`, so a git command the
user runs at the same moment neither sees nor blocks this.

With recipients configured, every file is encrypted before it becomes a blob (remote_crypto):
`logs/x` is committed as `logs/x.age`, and a chunk `logs/precompact-chunks/<sha256>` under a
keyed name. `_stored_blob` (through `tree_entries`) is the only way a logs/ file becomes a blob
on the branch, and `files_at` (`file_at` for one) the only way a branch file is read back as
plaintext: both forms are handled there and nowhere else.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import hashlib
import math
import os
import random
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from precompact.boundary import git_env, logs_dir, private_file, processes, quoting, small_file

# GitPython runs `git version` when imported, by GIT_PYTHON_GIT_EXECUTABLE or else by the bare
# name, from the working directory, in this process's environment (the agent's: the project's to
# set): it is given git's absolute path (git_env.executable), never the environment's choice.
os.environ.pop("GIT_PYTHON_GIT_EXECUTABLE", None)
with contextlib.suppress(git_env.NoGit):
    os.environ["GIT_PYTHON_GIT_EXECUTABLE"] = git_env.executable()

import git
import orjson

from precompact.errors import PrecompactError
from precompact.local import chunks, provenance, savepoint_log
from precompact.remote import encryption
from precompact.remote import encryption as remote_crypto
from precompact.remote.encryption import CLEAR, Keys

if TYPE_CHECKING:
    from precompact.config.settings import Config

# A fetch or ls-remote is given up after TRANSFER_TIMEOUT_SECONDS, whole: what it brings is the
# remote's to choose (a teammate's branch may hold a planted gigabyte: docs/security.md), so only
# time bounds it. A push sends this machine's own savepoints: it is given up when git shows no
# progress for TRANSFER_TIMEOUT_SECONDS (a remote that accepts and never answers, a link gone
# dead) or runs past PUSH_CEILING_SECONDS (a remote that reads a byte at a time, or keeps sending
# its own progress lines, would otherwise hold the flush lock, and Layer 3 behind it, for ever);
# one still sending goes on, so a first push of a large session over a slow uplink lands
# (docs/reliability.md). An hour carries 100 MB at 28 KB/s.
TRANSFER_TIMEOUT_SECONDS = 20
PUSH_CEILING_SECONDS = 3600
# git's progress lines (`--progress`), which say only that the transfer moves: never a reason.
_PROGRESS = re.compile(
    r"(remote: +)?(Enumerating objects|Counting objects|Compressing objects|Writing objects|Receiving objects|"
    r"Resolving deltas|Unpacking objects|Delta compression using|Total \d+ \(delta)\b"
)
# A push the remote refused because its ref moved meanwhile (a race) is tried again this many
# times, each after a random pause of up to RACE_PAUSE_SECONDS * 2**attempt (so that writers
# who collided do not collide again in step).
RACE_RETRIES = 3
RACE_PAUSE_SECONDS = 0.2
# How git says a push lost a race: the ref moved since it was read, or another push held its lock.
_RACE = re.compile(r"\((fetch first|non-fast-forward)\)|cannot lock ref|failed to lock|incorrect old value")
REF_RETRIES = 20
REF_RETRY_SECONDS = 0.05
# git holds a ref's lock file for milliseconds; one this old was left by a killed git process.
STALE_REF_LOCK_SECONDS = 10
PRIVATE_INDEX_PREFIX = "precompact-index-"
FALLBACK_IDENTITY = {
    "GIT_AUTHOR_NAME": "precompact",
    "GIT_AUTHOR_EMAIL": "precompact@localhost",
    "GIT_COMMITTER_NAME": "precompact",
    "GIT_COMMITTER_EMAIL": "precompact@localhost",
}
# Content-addressed files (named by their plaintext SHA-256) whose remote name is keyed.
CHUNKS_DIR = f"logs/{chunks.CHUNKS_DIR}/"
NAMING_KEY_NAME = "logs/precompact-chunk-names.key"
# The key and this machine's stamp over it, with room to spare; more is not a key file.
NAMING_KEY_FILE_LIMIT = 1024
# In precompact's git directory: plaintext sha256 + recipient set -> the blob of its
# ciphertext, so a file is encrypted (and pushed) once per recipient set.
CIPHERTEXT_CACHE = "precompact-ciphertexts"
# A cache entry holds one blob id (40 or 64 hex digits).
CACHED_BLOB_LIMIT = 128
# The most read of each kind of branch file, from what precompact itself writes, checked against
# the size git states (`cat-file --batch-check`) before any byte is read: whoever can push to the
# remote writes the branch, and a planted gigabyte blob must cost a verdict, not the memory.
# An index copy: a savepoint's lines together are under 4 KB (signed line, layer marks, lineage),
# so 64 MB holds over 16,000 savepoints, years of compactions.
INDEX_COPY_LIMIT = 64 << 20
# A chunk is cut after the transcript block that brings it to chunks.TARGET_BYTES (1 MB), and a
# transcript line is at most 16 MB (claude_code.MAX_LINE_BYTES); the chunk of loaded files'
# contents holds heads of at most 256 KB each (a few hundred of them fit). Encryption adds under 1%.
CHUNK_LIMIT = 128 << 20
# A snapshot of format 2 lists its chunks and holds no history (a few MB at most: the session
# state is capped at 1 MB); one of format 1 (older versions) holds the whole redacted history of a
# session, which stays under this.
SNAPSHOT_LIMIT = 256 << 20
# The naming key encrypted to every recipient: a 1 KB file plus a stanza of under 1 KB each.
NAMING_KEY_BLOB_LIMIT = 1 << 20
# Each savepoint's snapshot is added by one commit, and its line in the index is over 512 bytes
# (the SAVEPOINT_CREATED line alone is about 850): a history with more commits than an index copy
# within its bound could list savepoints is not precompact's, and is read no further for the
# snapshot files it added (`commits_adding_snapshots`).
SNAPSHOT_COMMITS_LIMIT = INDEX_COPY_LIMIT // 512
# Nor beyond the commits whose trees along logs/precompact-saves/ (each diffed against its
# parent's) add up to this: the directory's tree holds every snapshot file (about 72 bytes an
# entry), so N savepoints make git compare about 72·N² bytes: this bound reads a branch of
# about 5,000 savepoints whole, in a second or two, and a remote's cheap commits that each add
# a file cost no more than that (docs/performance.md).
TREES_READ_LIMIT = 2 << 30
# Every fetch names the refs it brings (precompact's branches only) and no tag: git's
# auto-following would also bring any tag a pusher points into those histories. git itself has
# no bound on what one fetch brings (docs/security.md); what is read of it is bounded above.
_FETCH_OPTIONS = ("--quiet", "--no-write-fetch-head", "--no-tags")
_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
# Ciphertext does not compress: git's zlib over it (loose objects, then the pack a push sends)
# would cost more than the encryption itself.
_UNCOMPRESSED = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.compression", "GIT_CONFIG_VALUE_0": "0"}


class GitStoreError(PrecompactError):
    """Layer 2 could not be done; the message says why and what to do, then what git or the
    remote said of it (`reason`), quoted (`quoting.inline`). `unquoted` is the same failure with
    those words as they were said, for a field whose printers quote it whole (an index line's
    reason, `RemoteBranch.reason`): outside text is quoted once, where it is shown."""

    def __init__(self, message: str, reason: str | None = None, bare: str | None = None):
        """`bare`: `message` with the outside names it quotes (a remote's, a repository's path)
        as they are, for `unquoted`: quoted there, they would be quoted twice where it is shown."""
        plain = message if bare is None else bare
        super().__init__(
            message if reason is None else f"{message}: {quoting.inline(reason)}",
            unquoted=plain if reason is None else f"{plain}: {reason}",
        )


class Unopened(GitStoreError):
    """An encrypted file that could not be read; `intact` says whether the object store's
    ciphertext still hashes to the blob id the commit names (git does not check on reading)."""

    def __init__(self, message: str, intact: bool):
        super().__init__(message)
        self.intact = intact


class Oversized(GitStoreError):
    """A file of a branch larger than precompact writes of its kind: not read (anyone who can
    push to the remote writes the branch; git stated the size before any of it was read)."""

    def __init__(self, what: str, size: int, bound: int):
        self.measure = f"{_megabytes(size)} MB, over the {_megabytes(bound)} MB precompact writes"
        super().__init__(f"{what} is {self.measure}: not read")


class OtherSize(Oversized):
    """A snapshot file of a branch whose size (as git states it) is not one its savepoint's
    content can have (`_may_hold`): other content, not read."""

    def __init__(self, what: str, size: int, stated: int):
        self.measure = f"{size} bytes, a size its savepoint's content ({stated} bytes) cannot have"
        GitStoreError.__init__(self, f"{what} is {self.measure}: other content, not read")


def _megabytes(size: int) -> str:
    """`size` in MB to a tenth, rounded up: a file a byte over its bound reads as over it."""
    return f"{math.ceil(size * 10 / (1 << 20)) / 10:.1f}".removesuffix(".0")


class Sealed(Unopened):
    """The file is encrypted and no identity here opens it: its content cannot be checked."""


class NoIdentity(Sealed):
    """The file is encrypted and this machine has no identity to try (none configured, its file
    cannot be read, or it opens none of the configured encryption.recipients): nothing encrypted
    to you can be read here, so the file says nothing of itself."""


class Undecryptable(Unopened):
    """The file's ciphertext does not decrypt or authenticate: truncated or altered."""


@dataclass(frozen=True)
class Target:
    """Where one instance's savepoints go: `branch` is the instance's own (no other instance
    writes it: `instance_branch`), `legacy` the single branch every instance shared before
    (read for savepoints pushed there, migrated from, never written)."""

    repository: Path
    remote: str
    branch: str
    keys: Keys = CLEAR
    # The one URL pushed to and fetched from (`git.url`); None: the remote's in the repository.
    url: str | None = None
    legacy: str | None = None
    # The project's root: the git directory of a project forgotten on this machine is neither
    # made nor used (`open_repository`).
    project: Path | None = None

    @classmethod
    def of(cls, config: Config) -> Target:
        """The configured instance's branch, remote, URL and keys (never a Target that forgets
        the keys)."""
        return cls(
            config.repository,
            config.remote,
            instance_branch(config.branch, config.instance),
            encryption.Keys.of(config),
            config.url,
            config.branch,
            config.root,
        )

    def of_instance(self, instance: str) -> Target:
        """The same remote and keys, for `instance`'s own branch (a logs/ can hold several
        instances: a renamed one's successor, PRECOMPACT_INSTANCE)."""
        if self.legacy is None:
            return self
        return dataclasses.replace(self, branch=instance_branch(self.legacy, instance))

    @property
    def ref(self) -> str:
        return f"refs/heads/{self.branch}"

    @property
    def legacy_ref(self) -> str | None:
        return f"refs/heads/{self.legacy}" if self.legacy and self.legacy != self.branch else None


INSTANCE_ID_DIGITS = 16


def instance_branch(base: str, instance: str) -> str:
    """The branch of one instance: `<git.branch>-<instance id>`, the id being the first hex
    digits of SHA-256 of the instance name (the instance_id the on-chain record is seeded with,
    public there already), so the name says nothing the chain does not and needs no escaping."""
    return f"{base}-{instance_hash(instance)[:INSTANCE_ID_DIGITS]}"


def instance_hash(instance: str) -> str:
    return hashlib.sha256(instance.encode()).hexdigest()


class _IsolatedGit(git.Git):
    """GitPython's command runner, isolated: GitPython starts every process from a copy of
    os.environ, so each command goes through `env -i` with exactly git_env's environment, and
    names the repository explicitly (GIT_DIR)."""

    git_dir: str | None = None

    def execute(self, command, *args, env=None, **kwargs):
        if isinstance(command, str):
            raise TypeError("precompact runs git with an argument list, never through a shell")
        ours = {**({"GIT_DIR": self.git_dir} if self.git_dir else {}), **(env or {})}
        location = Path(self.git_dir or self._working_dir or os.getcwd())
        variables = [f"{k}={v}" for k, v in git_env.environment(location, **ours).items()]
        # command[0] is GitPython's name for git: git_env.argv names it by its absolute path.
        return super().execute([_env_program(), "-i", *variables, *git_env.argv(*command[1:])], *args, **kwargs)


@functools.cache
def _env_program() -> str:
    """`env`'s absolute path (`processes.program_on_path`), never looked up by the bare name."""
    found = processes.program_on_path("env")
    if found is None:
        raise git_env.NoGit("env is not on PATH (its absolute entries outside the project): put /usr/bin on PATH")
    return found


class _IsolatedRepo(git.Repo):
    GitCommandWrapperType = _IsolatedGit


def open_repository(target: Target) -> git.Repo:
    """precompact's own git directory for the project repository `target.repository`
    (git_env.store: outside the project, made on first use), where the savepoint branches and
    their objects live, with the project's savepoint branches of older versions copied in
    (`_adopt_project_branches`); every git process it starts runs isolated, on that directory
    alone: none reads the project's repository or its configuration. GitStoreError for a project
    forgotten on this machine (local/registry.layers_wait: Layer 2 waits)."""
    from precompact.local import registry

    waiting = registry.layers_wait(target.project) if target.project is not None else None
    if waiting is not None:
        raise GitStoreError(f"Layer 2 {waiting}")
    path = target.repository
    if not path.exists():
        raise GitStoreError(
            f"git repository {quoting.path(path)} does not exist; set git.repository in .precompact.toml"
        )
    common = git_env.common_directory(path)
    if common is None:
        raise GitStoreError(f"{quoting.path(path)} is not a git repository; run `git init` there or set git.repository")
    try:
        made = git_env.store(common, TRANSFER_TIMEOUT_SECONDS)
    except processes.TimeoutExpired as e:
        raise GitStoreError(
            f"precompact's git directory for {quoting.path(path)} cannot be made: git gave no answer within {e.timeout:g} s"
        ) from None
    except OSError as e:
        raise GitStoreError(
            f"precompact's git directory for {quoting.path(path)} cannot be made: {quoting.os_error(e)}"
        ) from None
    if not isinstance(made, Path):
        raise GitStoreError(
            f"precompact's git directory for {quoting.path(path)} cannot be made",
            reason=_said(made.stderr, made.returncode),
        )
    repo = _IsolatedRepo(made)
    repo.git.git_dir = repo.git_dir  # type: ignore[attr-defined]  # read by _IsolatedGit.execute
    _adopt_project_branches(repo, target, common)
    return repo


# In the store: one empty file per (git.branch, remote) whose branches were copied from the
# project's repository (`_adopt_project_branches`), written once the copy is whole.
ADOPTED_DIR = "precompact-adopted"
_STAGED = "refs/precompact/adopting/"


def _adopt_project_branches(repo: git.Repo, target: Target, common: Path) -> None:
    """Savepoint branches made before precompact had a git directory of its own are in the
    project's repository (`common`): on first use each one (every instance's `<git.branch>-<id>`,
    the shared `git.branch`, and their remote-tracking copies) is copied here with every object it
    reaches, by a fetch from that path under git_env's TRANSFER_GUARD, with the ciphertext cache.
    A ref is only created, never moved (one the store has is newer); nothing is pushed; the
    project's refs are left as they are. Interrupted, it is done again whole the next time (the
    marker is written last); a project without such refs (found by reading its ref files) costs
    no git process at all."""
    base = target.legacy or target.branch
    marker = Path(repo.git_dir) / ADOPTED_DIR / hashlib.sha256(f"{base}\0{target.remote}".encode()).hexdigest()[:32]
    if marker.exists():
        return
    prefixes = {"heads": f"refs/heads/{base}", "remotes": f"refs/remotes/{target.remote}/{base}"}
    if _may_hold_refs(common, tuple(prefixes.values())):
        done = _transfer(
            repo,
            "fetch",
            str(common),
            f"copying the savepoint branches of {target.repository}",
            *(f"+{prefix}*:{_STAGED}{kind}/{base}*" for kind, prefix in prefixes.items()),
            options=_FETCH_OPTIONS,
        )
        if done.returncode != 0:
            raise GitStoreError(
                f"the savepoint branches in {quoting.path(target.repository)} could not be copied into precompact's git directory",
                reason=refusal(done.stderr, done.returncode),
            )
        named = re.compile(rf"{re.escape(base)}(-[0-9a-f]{{{INSTANCE_ID_DIGITS}}})?")
        listing = repo.git.for_each_ref("--format=%(objectname) %(refname)", _STAGED)
        for line in listing.splitlines():
            commit, _, staged = line.partition(" ")
            kind, _, name = staged.removeprefix(_STAGED).partition("/")
            if named.fullmatch(name) and _resolve(repo, staged) is not None:
                final = f"refs/heads/{name}" if kind == "heads" else f"refs/remotes/{target.remote}/{name}"
                with contextlib.suppress(git.GitCommandError):  # the store has it already: kept
                    repo.git.update_ref(final, commit, "0" * len(commit))
            repo.git.update_ref("-d", staged)
        _adopt_ciphertext_cache(repo, common)
    private_file.replace(marker, b"")


def _may_hold_refs(common: Path, wanted: tuple[str, ...]) -> bool:
    """Whether the project's repository may hold a ref starting with one of `wanted`, read from
    its ref files as data (loose refs, packed-refs); a reftable repository may."""
    if (common / "reftable").is_dir():
        return True
    with contextlib.suppress(OSError), (common / "packed-refs").open("rb") as packed:
        for line in packed:
            ref = line.rstrip(b"\n").partition(b" ")[2].decode("utf-8", "replace")
            if ref.startswith(wanted):
                return True
    for prefix in wanted:
        folder = (common / prefix).parent
        for root, _, names in os.walk(folder):
            for name in names:
                ref = Path(root, name).relative_to(common).as_posix()
                if ref.startswith(prefix) and not ref.endswith(".lock"):
                    return True
    return False


def _adopt_ciphertext_cache(repo: git.Repo, common: Path) -> None:
    """The project's ciphertext cache of older versions, copied: without it every file would be
    encrypted and committed again once."""
    ours = Path(repo.git_dir) / CIPHERTEXT_CACHE
    try:
        entries = list((common / CIPHERTEXT_CACHE).iterdir())
    except OSError:
        return
    for entry in entries:
        if not re.fullmatch(r"[0-9a-f]{16}-[0-9a-f]{64}", entry.name) or (ours / entry.name).exists():
            continue
        try:
            blob = entry.read_bytes()[:100].strip()
        except OSError:
            continue
        if _OBJECT_ID.fullmatch(blob.decode("ascii", "replace")):
            private_file.replace(ours / entry.name, blob)


def commit_message(savepoint: savepoint_log.Savepoint, keys: Keys = CLEAR) -> str:
    if keys.encrypting:
        # The instance name, hashes and token counts stay inside the encrypted index.
        return f"PRECOMPACT: encrypted savepoint\n\nSequence: {savepoint.sequence}\n"
    tokens, remaining = savepoint.tokens_used, savepoint.tokens_remaining
    window = tokens + remaining if tokens is not None and remaining is not None else "?"
    return (
        f"[{savepoint.instance}] PRECOMPACT: Savepoint before context compaction\n\n"
        f"Instance: {savepoint.instance}\n"
        f"Sequence: {savepoint.sequence}\n"
        f"Timestamp: {savepoint.timestamp}\n"
        f"Snapshot hash: sha256:{savepoint.snapshot_hash}\n"
        f"Tokens used: {tokens}/{window}\n"
    )


def commit_savepoint(
    repo: git.Repo,
    target: Target,
    logs: Path,
    savepoint: savepoint_log.Savepoint,
    repaired: Collection[savepoint_log.Savepoint] = (),
) -> str:
    """Commits `savepoint`'s snapshot and the current index file onto the branch; returns the
    commit id. Only a file named as Layer 1 names snapshots, read from logs/ without following
    links, and holding the bytes whose hash the index recorded, is committed. With it, the
    snapshot of each of `repaired` (committed before, its copy on the branch altered since:
    BranchSnapshots.altered) whose file in logs/ still holds those bytes, over the altered copy;
    one logs/ has no such copy of is left as the branch holds it (`verify` names it)."""
    name, sequence = savepoint.snapshot_file, savepoint.sequence
    if not logs_dir.is_snapshot_name(name, sequence):
        raise GitStoreError(
            f"the index names {quoting.path(name)} as savepoint {sequence}'s snapshot, which is not a name precompact writes; not committed"
        )
    index_name = f"logs/{savepoint_log.INDEX_NAME}"
    sha256 = savepoint.snapshot_hash
    files: dict[str, str | None] = {name: sha256}
    files.update(_chunks_to_commit(repo, target, logs, _listed_chunks(logs, name, sha256)))
    files[index_name] = None
    restored: dict[str, str | None] = {}
    for earlier in repaired:
        if not logs_dir.is_snapshot_name(earlier.snapshot_file, earlier.sequence):
            continue
        try:
            restored.update(tree_entries(repo, target, logs, {earlier.snapshot_file: earlier.snapshot_hash}))
        except (GitStoreError, OSError):
            continue
    return _commit_files(repo, target, logs, files, commit_message(savepoint, target.keys), restored)


def commit_index(repo: git.Repo, target: Target, logs: Path) -> str:
    """Commits the current index file alone onto the branch (the signatures of savepoints
    committed before they were signed); returns the commit id."""
    message = "PRECOMPACT: savepoint index signed\n"
    return _commit_files(repo, target, logs, {f"logs/{savepoint_log.INDEX_NAME}": None}, message)


def _commit_files(
    repo: git.Repo,
    target: Target,
    logs: Path,
    files: dict[str, str | None],
    message: str,
    entries: dict[str, str | None] | None = None,
) -> str:
    """A commit on the branch of `files` (logs/ names, with the sha256 their bytes must have
    when known), and of `entries` (tree paths and blobs, `tree_entries`), over its tip, the
    branch moved to it by compare-and-swap."""
    blobs = {**(entries or {}), **tree_entries(repo, target, logs, files)}
    environment = _identity(repo)
    for _ in range(REF_RETRIES):
        parent = _resolve(repo, target.ref)
        with _private_index(repo) as index:
            env = {**environment, "GIT_INDEX_FILE": str(index)}
            repo.git.read_tree(*([parent] if parent else ["--empty"]), env=env)
            tree = _write_tree(repo, blobs, env)
        parents = ["-p", parent] if parent else []
        commit = repo.git.commit_tree(tree, *parents, "-m", message, env=environment)
        expected = parent or "0" * len(commit)
        try:
            repo.git.update_ref(target.ref, commit, expected)
            return commit
        except git.GitCommandError:
            # Another precompact process moved the branch first (rebuild on its commit), or a
            # killed one left the branch's lock behind (only precompact writes this branch).
            if not _remove_stale_ref_lock(repo, target.ref):
                time.sleep(REF_RETRY_SECONDS)
    raise GitStoreError(f"branch {target.branch} kept moving or stayed locked; another process is committing to it")


def _write_tree(repo: git.Repo, blobs: dict[str, str | None], env: dict) -> str:
    """The tree of the private index in `env` with `blobs` applied (None: the path removed)."""
    zero = "0" * (64 if object_format(repo) == "sha256" else 40)
    # --index-info, not --force-remove, which wants a work tree (a bare repository has none).
    lines = "".join(f"100644 {blob}\t{path}\n" if blob else f"0 {zero}\t{path}\n" for path, blob in blobs.items())
    with tempfile.TemporaryFile() as f:
        f.write(lines.encode())
        f.seek(0)
        repo.git.update_index("--index-info", istream=f, env=env)
    return repo.git.write_tree(env=env)


def tree_entries(repo: git.Repo, target: Target, logs: Path, files: dict[str, str | None]) -> dict[str, str | None]:
    """The tree path and blob of each logs/ file (with the sha256 its bytes must have, when
    known), and None for the path of its other form (clear or encrypted), which leaves the tree.
    A chunk's keyed name needs the naming key, which travels with the chunks."""
    keys = target.keys
    naming_key = None
    entries: dict[str, str | None] = {}
    if keys.encrypting and any(name.startswith(CHUNKS_DIR) for name in files):
        naming_key = _naming_key(repo, target, logs)
        # Committed from the key itself: the file in logs/ also holds this machine's stamp.
        entries[NAMING_KEY_NAME] = None
        entries[sealed_path(NAMING_KEY_NAME)] = _sealed_blob(
            repo, naming_key, hashlib.sha256(naming_key).hexdigest(), keys
        )
    for name, sha256 in files.items():
        path, blob = _stored_blob(repo, logs, name, keys, sha256, naming_key)
        if keys.encrypting:
            entries[name] = None
        elif not name.startswith(CHUNKS_DIR):  # a chunk's encrypted name needs the key: left as is
            entries[name + remote_crypto.SUFFIX] = None
        entries[path] = blob
    return entries


def _stored_blob(
    repo: git.Repo, logs: Path, name: str, keys: Keys, sha256: str | None = None, naming_key: bytes | None = None
) -> tuple[str, str]:
    """Stores the file `name` (in logs/) as a blob, only if its bytes hash to `sha256` when
    given: exactly its bytes (no filters), or with recipients their ciphertext. Returns the
    tree path and the blob id."""
    fd = logs_dir.open_file(logs, logs_dir.within(name), os.O_RDONLY)
    with os.fdopen(fd, "rb") as f:
        found = hashlib.file_digest(f, "sha256").hexdigest() if sha256 is not None or keys.encrypting else None
        if sha256 is not None and found != sha256:
            raise GitStoreError(
                f"{quoting.path(name)} does not hash to the sha256 the index recorded for it; not committed (run `precompact verify`)"
            )
        f.seek(0)
        if not keys.encrypting:
            return name, repo.git.hash_object("-w", "--no-filters", "--stdin", istream=f)
        data = f.read()
    if hashlib.sha256(data).hexdigest() != found:
        raise GitStoreError(f"{quoting.path(name)} changed while it was being committed; not committed")
    return sealed_path(name, naming_key), _sealed_blob(repo, data, found, keys)


def sealed_path(name: str, naming_key: bytes | None = None) -> str:
    """Where the encrypted form of logs/ file `name` is in the tree: a chunk's is keyed by
    `naming_key` (tree_entries always has it for chunks)."""
    if name.startswith(CHUNKS_DIR) and naming_key is not None:
        return CHUNKS_DIR + remote_crypto.keyed_name(naming_key, name.removeprefix(CHUNKS_DIR)) + remote_crypto.SUFFIX
    return name + remote_crypto.SUFFIX


def _sealed_blob(repo: git.Repo, data: bytes, sha256: str, keys: Keys) -> str:
    """The blob of `data` encrypted to `keys`' recipients: the one made before for the same
    plaintext and recipients when the repository still has it, else a new ciphertext."""
    cached = _cached_ciphertext(repo, sha256, keys)
    if cached is not None:
        return cached
    try:
        ciphertext = remote_crypto.seal(data, keys)
    except remote_crypto.CryptoError as e:
        raise GitStoreError(str(e)) from None
    with tempfile.TemporaryFile() as f:
        f.write(ciphertext)
        f.seek(0)
        blob = repo.git.hash_object("-w", "--no-filters", "--stdin", istream=f, env=_UNCOMPRESSED)
    private_file.replace(_ciphertext_cache(repo, sha256, keys), blob.encode())
    return blob


def _ciphertext_cache(repo: git.Repo, sha256: str, keys: Keys) -> Path:
    return Path(repo.common_dir) / CIPHERTEXT_CACHE / f"{keys.fingerprint}-{sha256}"


def _sealed_here(repo: git.Repo, keys: Keys) -> set[str]:
    """The blobs this repository encrypted to `keys`' recipients (its ciphertext cache)."""
    found: set[str] = set()
    try:
        entries = list((Path(repo.common_dir) / CIPHERTEXT_CACHE).glob(f"{keys.fingerprint}-*"))
    except OSError:
        return found
    for entry in entries:
        try:
            blob = small_file.read(entry, CACHED_BLOB_LIMIT, follow_links=False)[0].decode().strip()
        except (OSError, UnicodeDecodeError):
            continue
        if _OBJECT_ID.fullmatch(blob):
            found.add(blob)
    return found


def _cached_ciphertext(repo: git.Repo, sha256: str, keys: Keys) -> str | None:
    """The blob of the ciphertext made before for this plaintext and these recipients, if the
    repository still has it."""
    cached = _cache_entry(repo, sha256, keys)
    return cached if cached is not None and _is_blob(repo, cached) else None


def _cache_entry(repo: git.Repo, sha256: str, keys: Keys) -> str | None:
    """The blob id the ciphertext cache names for this plaintext and these recipients (the
    blob itself may be gone)."""
    try:
        stored = small_file.read(_ciphertext_cache(repo, sha256, keys), CACHED_BLOB_LIMIT, follow_links=False)[0]
        cached = stored.decode().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return cached if _OBJECT_ID.fullmatch(cached) else None


def _is_blob(repo: git.Repo, object_id: str) -> bool:
    try:
        return repo.git.cat_file("-t", object_id).strip() == "blob"
    except git.GitCommandError:
        return False


NAMING_KEY_PURPOSE = "chunk naming key"


def _naming_key(repo: git.Repo, target: Target, logs: Path) -> bytes:
    """The instance's chunk naming key: the one this machine keeps in logs/, stamped as made
    here, else a new one made here. A key is never taken from the remote, in clear or encrypted:
    anyone can encrypt a key to the user's public recipient, and a remote that planted one could
    map chunk names to the hashes of guessed contents. (Another machine, or a logs/ restored from
    the remote, makes its own: its chunks are committed again under their new names; the
    commits made before keep the key that names theirs, which reading takes from each commit.)"""
    local = logs_dir.within(NAMING_KEY_NAME)
    try:
        stored: bytes | None = logs_dir.read_bytes(logs, local, limit=NAMING_KEY_FILE_LIMIT)
    except FileNotFoundError:
        stored = None
    if stored is not None:
        key = provenance.made_here(NAMING_KEY_PURPOSE, stored)
        if key is not None and len(key) == remote_crypto.NAMING_KEY_BYTES:
            return key
        raise GitStoreError(
            f"{quoting.path(logs / local)} was not made on this machine (a key that came with the project could be known to whoever shipped it); remove it and precompact makes a new one"
        )
    key = remote_crypto.new_naming_key()
    logs_dir.write_atomic(logs, local, provenance.stamped(NAMING_KEY_PURPOSE, key))
    return key


def _naming_keys_at(repo: git.Repo, commits: list[str], keys: Keys) -> dict[str, bytes | None | GitStoreError]:
    """The naming key each commit carries in its encrypted form (None: it has none), or the
    Unopened error when it cannot be read here. A clear form is ignored: whoever can push to the
    remote could have put it there. Located for every commit by one `git cat-file
    --batch-check`; each distinct ciphertext is read once and opened once (the commits of a
    branch share one blob until the key changes), so `verify` costs no process per savepoint."""
    wanted = list(dict.fromkeys(commits))
    located = blobs_at(repo, [(commit, sealed_path(NAMING_KEY_NAME)) for commit in wanted])
    blobs = [found[0] if found else None for found in located]
    oversized = {found[0]: found[1] for found in located if found and found[1] > NAMING_KEY_BLOB_LIMIT}
    distinct = [blob for blob in dict.fromkeys(blobs) if blob is not None and blob not in oversized]
    try:
        ciphertexts = dict(zip(distinct, list(_blobs(repo, distinct))))
    except GitStoreError as e:
        return {commit: None if blob is None else e for commit, blob in zip(wanted, blobs)}
    identities = _identities(keys) if distinct else []
    opened: dict[str, bytes] = {}
    found: dict[str, bytes | None | GitStoreError] = {}
    for commit, blob in zip(wanted, blobs):
        if blob is None:
            found[commit] = None
            continue
        if blob in oversized:
            where = f"{sealed_path(NAMING_KEY_NAME)} at commit {commit[:12]}"
            found[commit] = Oversized(where, oversized[blob], NAMING_KEY_BLOB_LIMIT)
            continue
        key = opened.get(blob)
        if key is None:
            where = f"{sealed_path(NAMING_KEY_NAME)} at commit {commit[:12]}"
            tried = _opened(repo, blob, ciphertexts[blob], identities, keys, where)
            if isinstance(tried, Unopened):
                found[commit] = tried
                continue
            key = opened[blob] = tried
        if len(key) != remote_crypto.NAMING_KEY_BYTES:
            found[commit] = Undecryptable(f"{NAMING_KEY_NAME} at commit {commit[:12]} is not a naming key", intact=True)
            continue
        found[commit] = key
    return found


def _identities(keys: Keys) -> list | remote_crypto.CryptoError:
    try:
        return remote_crypto.load_identities(keys)
    except remote_crypto.CryptoError as e:
        return e


def _opened(
    repo: git.Repo, blob: str, ciphertext: bytes, identities: list | remote_crypto.CryptoError, keys: Keys, where: str
) -> bytes | Unopened:
    """The plaintext of the encrypted blob `blob`, else why not: Sealed when no identity here
    opens it, Undecryptable when its ciphertext is broken."""
    if isinstance(identities, remote_crypto.CryptoError):
        return NoIdentity(
            f"{where} is encrypted and cannot be read here: {identities}", _hashes_to(repo, ciphertext, blob)
        )
    try:
        return remote_crypto.open_sealed(ciphertext, identities)
    except remote_crypto.NotForUs as e:
        if keys.recipients and not remote_crypto.opened_recipients(identities, keys.recipients):
            # Not the copy's doing: this identity opens nothing your savepoints are sealed to.
            return NoIdentity(
                f"{where} is encrypted and cannot be read here: {quoting.path(keys.identity)} opens none of the recipients your savepoints are sealed to (encryption.recipients): copy yours there with `precompact key import FILE`",
                _hashes_to(repo, ciphertext, blob),
            )
        return Sealed(
            f"{where} cannot be read with {quoting.path(keys.identity)}: {e}", _hashes_to(repo, ciphertext, blob)
        )
    except remote_crypto.CryptoError as e:
        return Undecryptable(f"{where}: {e}", _hashes_to(repo, ciphertext, blob))


def _hashes_to(repo: git.Repo, data: bytes, blob: str) -> bool:
    return blob_id(repo, data) == blob


def _blobs(repo: git.Repo, ids: list[str]) -> Iterator[bytes]:
    """The content of each blob, in order, streamed from one `git cat-file --batch`."""
    for size, stream in _batch(repo, ids):
        yield stream.read(size)


# How much of a blob is held at once while its sha256 is taken (`_sha256s`).
HASH_STEP = 1 << 20


def _sha256s(repo: git.Repo, ids: list[str]) -> Iterator[str]:
    """The sha256 of each blob's content, in order, streamed from one `git cat-file --batch`
    in HASH_STEP pieces (no blob is held whole)."""
    for (size, stream), blob in zip(_batch(repo, ids), ids):
        digest = hashlib.sha256()
        while size:
            piece = stream.read(min(size, HASH_STEP))
            if not piece:
                raise GitStoreError(f"git cat-file ended inside blob {blob} in {quoting.path(repo.common_dir)}")
            digest.update(piece)
            size -= len(piece)
        yield digest.hexdigest()


def _batch(repo: git.Repo, ids: list[str]) -> Iterator[tuple[int, IO[bytes]]]:
    """Each blob's size and git's output where its content starts, in order, from one `git
    cat-file --batch`: the caller reads exactly that many bytes of it before the next."""
    if not ids:
        return
    with tempfile.TemporaryFile() as names:
        names.write("".join(f"{blob}\n" for blob in ids).encode())
        names.seek(0)
        process = repo.git.cat_file("--batch", istream=names, as_process=True)
        for blob in ids:
            header = process.stdout.readline().split()
            if len(header) != 3 or header[1] != b"blob":
                raise GitStoreError(f"git cat-file could not read blob {blob} in {quoting.path(repo.common_dir)}")
            yield int(header[2]), process.stdout
            process.stdout.read(1)
        process.wait()


def _chunk_path(sha256: str) -> str:
    """A chunk's name under logs/, its path in the branch's tree when in clear (sealed_path keys
    it when encrypted)."""
    return CHUNKS_DIR + sha256


def _chunks_to_commit(repo: git.Repo, target: Target, logs: Path, listed: list[chunks.Ref]) -> dict[str, str]:
    """The listed chunks the branch does not hold yet as the target's keys would commit them
    (encrypted, to the current recipients), by logs/ name -> sha256 (checked when stored). A
    chunk encrypted to earlier recipients is committed again, so those added since can read
    every savepoint made after they were."""
    tip = _resolve(repo, target.ref)
    paths = _chunk_tree_paths(repo, target, logs, listed)
    present = blob_ids_at(repo, [(tip, path) for path in paths]) if tip else [None] * len(listed)

    def held(ref: chunks.Ref, blob: str | None) -> bool:
        if not target.keys.encrypting:
            return blob is not None
        return blob is not None and blob == _cached_ciphertext(repo, ref.sha256, target.keys)

    return {_chunk_path(ref.sha256): ref.sha256 for ref, blob in zip(listed, present) if not held(ref, blob)}


def _chunk_tree_paths(repo: git.Repo, target: Target, logs: Path, listed: list[chunks.Ref]) -> list[str]:
    """Where each chunk is in the branch's tree under the target's keys (keyed when encrypted)."""
    names = [_chunk_path(ref.sha256) for ref in listed]
    if not target.keys.encrypting or not names:
        return names
    naming_key = _naming_key(repo, target, logs)
    return [sealed_path(name, naming_key) for name in names]


def _listed_chunks(logs: Path, name: str, sha256: str) -> list[chunks.Ref]:
    """The chunks the snapshot `name` lists, once its bytes hash to `sha256`."""
    data = logs_dir.read_bytes(logs, logs_dir.within(name))
    if hashlib.sha256(data).hexdigest() != sha256 or not chunks.is_chunked(data):
        return []  # _stored_blob has refused an altered snapshot already; format 1 lists none
    try:
        return chunks.refs(orjson.loads(data))
    except (orjson.JSONDecodeError, ValueError) as e:
        raise GitStoreError(
            f"{quoting.path(name)} lists no usable chunks ({quoting.inline(str(e))}); not committed (run `precompact verify`)"
        ) from None


def chunk_at(repo: git.Repo, commit: str, ref: chunks.Ref, keys: Keys = CLEAR) -> bytes | None | Unopened | Oversized:
    """The plaintext of chunk `ref` at `commit` (unchecked): None when either is absent, the
    Unopened error when it is encrypted and cannot be read here, the Oversized one when it is
    over what precompact writes (not read)."""
    try:
        return file_at(repo, commit, _chunk_path(ref.sha256), keys)
    except (Unopened, Oversized) as e:
        return e
    except GitStoreError:
        return None


def chunk_blob_ids(
    repo: git.Repo, wanted: list[tuple[str, chunks.Ref]], keys: Keys = CLEAR
) -> list[str | None | Unopened]:
    """The blob id of each (commit, chunk): its encrypted form's, under the name the commit's
    naming key gives it, else its clear form's; None where neither is there, the Unopened error
    where only the naming key could say and it cannot be read here."""
    located = _located(repo, [(commit, _chunk_path(ref.sha256)) for commit, ref in wanted], keys)
    return [s[0] if isinstance(s, tuple) else (s if isinstance(s, Unopened) else None) for s in located]


@contextlib.contextmanager
def _private_index(repo: git.Repo) -> Iterator[Path]:
    """An index file of our own for building the tree, in precompact's git directory rather
    than a temporary directory (a process killed mid-commit would leave that behind for good).
    It is named after this process, so one left by a dead process is removed here."""
    git_dir = Path(repo.git_dir)
    for left in git_dir.glob(f"{PRIVATE_INDEX_PREFIX}*"):
        owner = left.name.removeprefix(PRIVATE_INDEX_PREFIX).split(".")[0]  # also git's .lock
        if owner.isdigit() and not _running(int(owner)):
            left.unlink(missing_ok=True)
    index = git_dir / f"{PRIVATE_INDEX_PREFIX}{os.getpid()}"
    try:
        yield index
    finally:
        index.unlink(missing_ok=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def rekey(repo: git.Repo, target: Target, logs: Path) -> tuple[str | None, int, int]:
    """A new commit on the branch whose tree holds every file encrypted to the current
    recipients (clear ones too) that the identity here reads, so that their identities read
    every savepoint; the history before it is left as it is (it was pushed). A file encrypted
    only to other keys (an identity used before this one) is left as it is: no key here opens
    it. Returns the commit (None: nothing to change), the number of files re-encrypted and the
    number left for want of their identity."""
    keys = target.keys
    if not keys.encrypting:
        raise GitStoreError("encryption.recipients is empty: there is nothing to re-encrypt to; add a recipient first")
    environment = _identity(repo)
    identities = _identities(keys)
    if isinstance(identities, remote_crypto.CryptoError):
        raise GitStoreError(str(identities))
    for _ in range(REF_RETRIES):
        local = _resolve(repo, target.ref)
        parent = local or savepoint_tip(repo, target)
        if parent is None:
            return None, 0, 0
        changes: dict[str, str | None] = {}
        naming_key = None
        left = 0
        files = _files(repo, parent)
        current = _sealed_here(repo, keys)
        for (path, blob), stored in zip(files, _blobs(repo, [blob for _, blob in files])):
            if blob in current:
                continue  # encrypted here to these very recipients
            if path.endswith(remote_crypto.SUFFIX):
                data = _opened(repo, blob, stored, identities, keys, f"{path} at commit {parent[:12]}")
                if isinstance(data, Sealed):
                    left += 1
                    continue
                if isinstance(data, GitStoreError):
                    raise data
                new_path = path
            else:
                data = stored
                if path.startswith(CHUNKS_DIR) and naming_key is None:
                    naming_key = _naming_key(repo, target, logs)
                new_path = sealed_path(path, naming_key)
                changes[path] = None
            new = _sealed_blob(repo, data, hashlib.sha256(data).hexdigest(), keys)
            if new != blob or new_path != path:
                changes[new_path] = new
        if naming_key is not None:
            changes[sealed_path(NAMING_KEY_NAME)] = _sealed_blob(
                repo, naming_key, hashlib.sha256(naming_key).hexdigest(), keys
            )
        if not changes:
            return None, 0, left
        with _private_index(repo) as index:
            env = {**environment, "GIT_INDEX_FILE": str(index)}
            repo.git.read_tree(parent, env=env)
            tree = _write_tree(repo, changes, env)
        message = f"PRECOMPACT: savepoints re-encrypted to {len(keys.recipients)} recipient(s)\n"
        commit = repo.git.commit_tree(tree, "-p", parent, "-m", message, env=environment)
        try:
            repo.git.update_ref(target.ref, commit, local or "0" * len(commit))
            return commit, sum(blob is not None for blob in changes.values()), left
        except git.GitCommandError:
            if not _remove_stale_ref_lock(repo, target.ref):
                time.sleep(REF_RETRY_SECONDS)
    raise GitStoreError(f"branch {target.branch} kept moving or stayed locked; another process is committing to it")


def _files(repo: git.Repo, commit: str) -> list[tuple[str, str]]:
    """(path, blob id) of every file in `commit`'s tree."""
    listing = repo.git.ls_tree("-r", "-z", "--full-tree", commit, stdout_as_string=False).decode()
    found = []
    for entry in filter(None, listing.split("\0")):
        info, _, path = entry.partition("\t")
        _, kind, blob = info.split()
        if kind == "blob":
            found.append((path, blob))
    return found


def snapshot_blobs(repo: git.Repo, commit: str) -> dict[str, str]:
    """The blob id of every snapshot file (clear or encrypted, by its path) in `commit`'s tree,
    from one `git ls-tree` (empty when git does not hold the commit)."""
    try:
        listing = repo.git.ls_tree("-r", "-z", "--full-tree", commit, "--", SAVES_PREFIX)
    except git.GitCommandError:
        return {}
    found = {}
    for entry in filter(None, listing.split("\0")):
        info, _, path = entry.partition("\t")
        fields = info.split()
        if len(fields) == 3 and fields[1] == "blob":
            found[path] = fields[2]
    return found


def in_clear(repo: git.Repo, savepoints: list[tuple[str, str]]) -> list[bool]:
    """For each (commit, snapshot file): whether the commit holds it in clear text."""
    return [blob is not None for blob in blob_ids_at(repo, savepoints)]


def _remove_stale_ref_lock(repo: git.Repo, ref: str) -> bool:
    lock = Path(repo.common_dir) / f"{ref}.lock"
    try:
        if time.time() - lock.stat().st_mtime < STALE_REF_LOCK_SECONDS:
            return False
        lock.unlink()
    except FileNotFoundError:
        return False
    return True


def push(repo: git.Repo, target: Target, hidden: Callable[[], str | None] = lambda: None) -> int:
    """Pushes the instance's branch to the remote's one URL (git_env.transport: none of the
    repository's configuration is read), never forced, and moves the remote-tracking ref to what
    the remote now holds; returns how many retries it took. When the remote's branch moved since
    (a race, or another machine of this instance): fetch it, put this branch on top of it with a
    merge commit that keeps every commit of both (none rewritten, so every commit a savepoint
    recorded stays on the remote), and push again, up to RACE_RETRIES times after a random pause.
    The merge's tree is this branch's, so before it `hidden` is asked, the fetched tip now the
    remote-tracking ref, what that tree would put out of the tip's index (savepoints another
    machine of the instance pushed that logs/ lacks: two chains); when it names any, nothing is
    merged and GitStoreError says it. Raises GitStoreError with git's whole reason (redacted) on
    any other refusal."""
    url = remote_url(target)
    for attempt in range(RACE_RETRIES + 1):
        commit = _resolve(repo, target.ref)
        if commit is None:
            raise GitStoreError(
                f"branch {target.branch} does not exist in {quoting.path(target.repository)}; nothing to push"
            )
        done = _transfer(
            repo,
            "push",
            url,
            f"push to {target.remote}",
            f"{commit}:{target.ref}",
            options=("--progress", "--no-verify"),
        )
        if done.returncode == 0:
            # The remote holds the commit now: a tracking ref left locked by a killed process
            # does not undo the push (the next fetch moves it).
            with contextlib.suppress(GitStoreError):
                _set_tracking_ref(repo, target, commit)
            return attempt
        if not _RACE.search(done.stderr + done.stdout) or attempt == RACE_RETRIES:
            break
        time.sleep(random.uniform(0, RACE_PAUSE_SECONDS * 2**attempt))
        try:
            fetch(repo, target, exact=True)
        except GitStoreError:
            continue  # deleted meanwhile, or unreadable: the next push says which
        theirs = remote_tip(repo, target)
        if theirs is not None and _is_ancestor(repo, commit, theirs):
            return attempt + 1  # the remote holds this branch's commits already
        if theirs is not None:
            refused = hidden()
            if refused:
                raise GitStoreError(refused)
            _merge_on_top(repo, target, commit, theirs)
    raise GitStoreError(
        f"push to {quoting.path(target.remote)} failed",
        reason=refusal(done.stdout + done.stderr, done.returncode),
        bare=f"push to {target.remote} failed",
    )


def _merge_on_top(repo: git.Repo, target: Target, ours: str, theirs: str) -> str:
    """A commit over both `ours` (this branch's tip) and `theirs` (what the remote holds) whose
    tree is ours: the instance's namespace is this branch alone, so nothing of theirs is taken
    into the tree, and nothing of theirs is rewritten or dropped from history."""
    tree = repo.git.rev_parse(f"{ours}^{{tree}}")
    message = "PRECOMPACT: savepoints put on top of the remote's branch\n"
    try:
        merged = repo.git.commit_tree(tree, "-p", ours, "-p", theirs, "-m", message, env=_identity(repo))
        repo.git.update_ref(target.ref, merged, ours)
    except git.GitCommandError as e:
        raise GitStoreError(
            f"branch {target.branch} could not be put on top of the remote's", reason=_said(str(e.stderr), e.status)
        ) from None
    return merged


def _related(repo: git.Repo, one: str, other: str) -> bool:
    """Whether two commits share any history (a common ancestor)."""
    try:
        repo.git.merge_base(one, other)
    except git.GitCommandError:
        return False
    return True


def _is_ancestor(repo: git.Repo, commit: str, of: str) -> bool:
    try:
        repo.git.merge_base("--is-ancestor", commit, of)
    except git.GitCommandError:
        return False
    return True


def remote_refs(repo: git.Repo, target: Target, *patterns: str) -> dict[str, str]:
    """The refs the remote states it has now (`git ls-remote`), by name, of those `patterns`
    name exactly (all of them without patterns); GitStoreError with git's reason when the remote
    cannot be read. The remote is input: what it states is a reason to withhold a verdict or to
    push again, never one to give a verdict."""
    url = remote_url(target)
    listed = _transfer(repo, "ls-remote", url, f"reading {target.branch} on {target.remote}", *patterns)
    if listed.returncode != 0:
        raise GitStoreError(
            f"reading {target.branch} on {quoting.path(target.remote)} failed",
            reason=refusal(listed.stderr, listed.returncode),
            bare=f"reading {target.branch} on {target.remote} failed",
        )
    found = {}
    for line in str(listed.stdout).splitlines():
        commit, _, name = line.partition("\t")
        # ls-remote matches a pattern by its tail: only the refs named count.
        if _OBJECT_ID.fullmatch(commit) and (not patterns or name in patterns):
            found[name] = commit
    return found


def _archive_ref(listed: dict[str, str], target: Target) -> str | None:
    """Which remote ref holds the instance's savepoints: its own branch, else (savepoints pushed
    before branches were per instance, not migrated yet) the shared branch."""
    if target.ref in listed:
        return target.ref
    return target.legacy_ref if target.legacy_ref in listed else None


def fetch(repo: git.Repo, target: Target, exact: bool = False) -> str:
    """Fetches the instance's savepoints from the remote's one URL (git_env.transport) into its
    remote-tracking ref: its branch, else the shared branch of older versions (not with `exact`);
    returns which of the two it fetched; raises GitStoreError on failure."""
    url = remote_url(target)
    ref = target.ref
    if not exact and target.legacy_ref is not None:
        ref = _archive_ref(remote_refs(repo, target, target.ref, target.legacy_ref), target) or ref
    fetched = "refs/precompact/fetched"
    done = _transfer(
        repo,
        "fetch",
        url,
        f"fetching {target.branch} from {target.remote}",
        f"+{ref}:{fetched}",
        options=_FETCH_OPTIONS,
    )
    if done.returncode != 0:
        raise GitStoreError(
            f"fetching {target.branch} from {quoting.path(target.remote)} failed",
            reason=refusal(done.stderr, done.returncode),
            bare=f"fetching {target.branch} from {target.remote} failed",
        )
    tip = _resolve(repo, fetched)
    if tip is None:
        raise GitStoreError(
            f"fetching {target.branch} from {quoting.path(target.remote)} gave no commit",
            bare=f"fetching {target.branch} from {target.remote} gave no commit",
        )
    _set_tracking_ref(repo, target, tip)
    return ref.removeprefix("refs/heads/")


def _set_tracking_ref(repo: git.Repo, target: Target, tip: str) -> None:
    """Moves the remote-tracking ref to `tip`. Only precompact writes it, in its own git
    directory; a lock on it that outlives the retries was left by a killed git process (a flush
    killed mid-fetch): removed once it is old enough, else said in one line, never a traceback."""
    tracking = _tracking(target)
    for _ in range(REF_RETRIES):
        try:
            repo.git.update_ref(tracking, tip)
            return
        except git.GitCommandError:
            if not _remove_stale_ref_lock(repo, tracking):
                time.sleep(REF_RETRY_SECONDS)
    lock = Path(repo.common_dir) / f"{tracking}.lock"
    raise GitStoreError(
        f"{tracking} stayed locked ({quoting.path(lock)}); another precompact is fetching, or a killed one left the lock:"
        f" it is removed once {STALE_REF_LOCK_SECONDS} s old, try again then"
    )


# In precompact's git directory: a teammate's savepoints `recall --from` checked, one logs/ each.
TEAMMATE_PREFIX = "precompact-teammate-"


def teammate_logs(repo: git.Repo, instance: str) -> Path:
    """Where `recall --from` keeps `instance`'s savepoints once checked against its own key: a
    logs/ of its own in precompact's git directory, outside the project (whose logs/ holds
    only its own instances' savepoints, which Layer 2 pushes)."""
    return Path(repo.git_dir) / f"{TEAMMATE_PREFIX}{instance_hash(instance)[:INSTANCE_ID_DIGITS]}"


def remove_teammate_logs(repo: git.Repo, instance: str) -> None:
    """Deletes what `teammate_logs` kept of `instance` (a copy no longer what its branch holds)."""
    shutil.rmtree(teammate_logs(repo, instance))


def fetch_savepoint_branches(repo: git.Repo, target: Target) -> dict[str, str]:
    """Every savepoint branch the remote holds (each instance's, `<base>-<id>`, and the shared
    branch of older versions), fetched in one go: branch name -> its tip commit, now in
    precompact's git directory (no branch there is moved). GitStoreError when the remote
    cannot be read."""
    base = target.legacy or target.branch.rpartition("-")[0]
    listed = remote_refs(repo, target)
    wanted = {
        name.removeprefix("refs/heads/"): commit
        for name, commit in listed.items()
        if name == f"refs/heads/{base}"
        or re.fullmatch(rf"refs/heads/{re.escape(base)}-[0-9a-f]{{{INSTANCE_ID_DIGITS}}}", name)
    }
    if not wanted:
        return {}
    done = _transfer(
        repo,
        "fetch",
        remote_url(target),
        f"fetching the savepoint branches from {target.remote}",
        *(f"+refs/heads/{branch}:refs/precompact/team/{branch}" for branch in wanted),
        options=_FETCH_OPTIONS,
    )
    if done.returncode != 0:
        raise GitStoreError(
            f"fetching the savepoint branches from {quoting.path(target.remote)} failed",
            reason=refusal(done.stderr, done.returncode),
            bare=f"fetching the savepoint branches from {target.remote} failed",
        )
    fetched = {}
    for branch in wanted:
        tip = _resolve(repo, f"refs/precompact/team/{branch}")
        if tip is not None:
            fetched[branch] = tip
    return fetched


def _transfer(
    repo: git.Repo, command: str, url: str, doing: str, *args: str, options: tuple[str, ...] = ()
) -> processes.CompletedProcess:
    """`git command` to or from the remote's one URL (git_env.transport); GitStoreError naming
    `doing` when git cannot be run or gives no answer in time (for a push: shows no progress; a
    refusal is the caller's to read, in git's output without its progress lines)."""
    pushing = command == "push"
    try:
        done = git_env.transport(
            Path(repo.git_dir),
            command,
            url,
            *args,
            options=options,
            timeout=PUSH_CEILING_SECONDS if pushing else TRANSFER_TIMEOUT_SECONDS,
            silence=TRANSFER_TIMEOUT_SECONDS if pushing else None,
        )
    except processes.TimeoutExpired as e:
        raise GitStoreError(f"{doing} failed: git gave no answer within {e.timeout:g} s") from None
    except OSError as e:
        raise GitStoreError(f"{doing} failed: {quoting.os_error(e)}") from None
    said = "".join(line for line in done.stderr.splitlines(keepends=True) if not _PROGRESS.match(line))
    return processes.CompletedProcess(done.args, done.returncode, done.stdout, said)


def remote_url(target: Target) -> str:
    """The one URL the branch is pushed to and fetched from: `git.url` as approved; the
    repository's own configuration is not read for it. Only a configuration written before
    `git.url` existed falls back to the remote's URL there (git_env.remote_url)."""
    if target.url is not None:
        return target.url
    try:
        url = git_env.remote_url(target.repository, target.remote)
    except processes.TimeoutExpired as e:
        raise GitStoreError(
            f"cannot read remote {quoting.path(target.remote)}'s URL in {quoting.path(target.repository)}: git gave no answer within {e.timeout:g} s",
            bare=f"cannot read remote {target.remote}'s URL in {target.repository}: git gave no answer within {e.timeout:g} s",
        ) from None
    except OSError as e:
        raise GitStoreError(
            f"cannot read remote {quoting.path(target.remote)}'s URL in {quoting.path(target.repository)}: {quoting.os_error(e)}",
            bare=f"cannot read remote {target.remote}'s URL in {target.repository}: {quoting.os_error(e)}",
        ) from None
    if url is None:
        raise GitStoreError(
            f"remote {quoting.path(target.remote)} does not exist in {quoting.path(target.repository)}; add it or set git.remote",
            bare=f"remote {target.remote} does not exist in {target.repository}; add it or set git.remote",
        )
    return url


def _tracking(target: Target) -> str:
    return f"refs/remotes/{target.remote}/{target.branch}"


def remote_has_branch(repo: git.Repo, target: Target) -> bool:
    """Whether the remote states it has the instance's savepoints now (its branch, else the
    shared branch of older versions: `git ls-remote`); raises GitStoreError with git's reason
    when the remote cannot be read."""
    patterns = [target.ref, *([target.legacy_ref] if target.legacy_ref else [])]
    return _archive_ref(remote_refs(repo, target, *patterns), target) is not None


def branch_tip(repo: git.Repo, target: Target) -> str | None:
    """The instance's branch here (not its remote-tracking copy)."""
    return _resolve(repo, target.ref)


def savepoint_tip(repo: git.Repo, target: Target) -> str | None:
    """The newest savepoint commit known here: the local branch, else its remote-tracking copy."""
    return _resolve(repo, target.ref) or _resolve(repo, f"refs/remotes/{target.remote}/{target.branch}")


def pushed(repo: git.Repo, target: Target, commit: str) -> bool:
    """Whether `commit` is in the branch as the remote last had it (its remote-tracking ref,
    which a push or fetch updates)."""
    try:
        repo.git.merge_base("--is-ancestor", commit, f"refs/remotes/{target.remote}/{target.branch}")
    except git.GitCommandError:
        return False
    return True


def remote_branch_commits(repo: git.Repo, target: Target) -> set[str]:
    """Every commit in the branch as the remote last had it (its remote-tracking ref): `pushed`
    of many commits at once, from one `git rev-list`."""
    try:
        return set(repo.git.rev_list(f"refs/remotes/{target.remote}/{target.branch}", "--").split())
    except git.GitCommandError:
        return set()


def history(repo: git.Repo, tip: str) -> set[str]:
    """Every commit of `tip`'s history, `tip` included, from one `git rev-list` (empty when git
    does not hold it)."""
    try:
        return set(repo.git.rev_list(tip, "--").split())
    except git.GitCommandError:
        return set()


def has_commit(repo: git.Repo, commit: str) -> bool:
    return _resolve(repo, commit) is not None


# A path-limited log follows only the parent of a merge whose tree has the path as the merge
# has it, so a merge whose tree is an earlier state (a rollback pushed as a merge: anyone who can
# push) would hide every file added on its other side: every parent is followed, and a commit is
# listed after every commit descended from it, whatever dates the commits claim.
_ADDS_ANYWHERE = ("--full-history", "--topo-order")


def commit_adding(repo: git.Repo, tip: str, path: str) -> str | None:
    """The first commit in `tip`'s history that added logs/ file `path`, clear or encrypted
    (`rekey` adds the encrypted form of a clear one later), whichever parent of a merge it is
    behind (`_ADDS_ANYWHERE`)."""
    found = repo.git.log(*_ADDS_ANYWHERE, "--diff-filter=A", "--format=%H", tip, "--", path, sealed_path(path)).split()
    return found[-1] if found else None


def blob_id(repo: git.Repo, data: bytes) -> str:
    """The id `repo` gives a blob of these bytes."""
    return hashlib.new(object_format(repo), f"blob {len(data)}\0".encode() + data).hexdigest()


# By git directory: a store's object format never changes.
_OBJECT_FORMATS: dict[str, str] = {}


def object_format(repo: git.Repo) -> str:
    """ "sha1" or "sha256"."""
    git_dir = str(repo.git_dir)
    found = _OBJECT_FORMATS.get(git_dir)
    if found is None:
        found = str(repo.config_reader("repository").get_value("extensions", "objectformat", "sha1"))
        _OBJECT_FORMATS[git_dir] = found
    return found


def blob_ids_at(repo: git.Repo, wanted: list[tuple[str, str]]) -> list[str | None]:
    """The blob id of each (commit, path), None where either is missing (`blobs_at`)."""
    return [found[0] if found else None for found in blobs_at(repo, wanted)]


def blobs_at(repo: git.Repo, wanted: list[tuple[str, str]]) -> list[tuple[str, int] | None]:
    """The blob id and size (as git states it, nothing read) of each (commit, path), None where
    either is missing, from one `git cat-file --batch-check` (GitPython parses every tree on the
    way: over a branch of N savepoints, each holding all earlier snapshots, that grows as N
    squared)."""
    return [
        (found[0], found[2]) if found is not None and found[1] == "blob" else None
        for found in _batch_check(repo, [f"{commit}:{path}" for commit, path in wanted])
    ]


def _batch_check(repo: git.Repo, questions: list[str]) -> list[tuple[str, str, int] | None]:
    """The id, type and size (as git states them, nothing read) of the object each of
    `questions` names (`<commit>:<path>` and the like), None where it names none, from one `git
    cat-file --batch-check`."""
    askable = [i for i, question in enumerate(questions) if "\n" not in question]
    found: list[tuple[str, str, int] | None] = [None] * len(questions)
    if not askable:
        return found
    with tempfile.TemporaryFile() as names:
        names.write("".join(f"{questions[i]}\n" for i in askable).encode())
        names.seek(0)
        answer = repo.git.cat_file(
            "--batch-check=%(objectname) %(objecttype) %(objectsize)", istream=names
        ).splitlines()
    if len(answer) != len(askable):
        raise GitStoreError(
            f"git cat-file gave {len(answer)} answers to {len(askable)} questions in {quoting.path(repo.git_dir)}"
        )
    for i, line in zip(askable, answer):
        fields = line.split(" ")
        if len(fields) == 3 and fields[2].isdigit():
            found[i] = (fields[0], fields[1], int(fields[2]))
    return found


def read_limit(path: str) -> tuple[str, int]:
    """What the branch file `path` (as logs/ names it) is, and the most of it precompact reads:
    the bound of its kind (INDEX_COPY_LIMIT and the others); any other file, the smallest."""
    if path == f"logs/{savepoint_log.INDEX_NAME}":
        return "its index copy", INDEX_COPY_LIMIT
    if path.startswith(CHUNKS_DIR):
        return f"chunk {path.removeprefix(CHUNKS_DIR)}", CHUNK_LIMIT
    if path.startswith(SAVES_PREFIX):
        return f"snapshot {path.removeprefix('logs/')}", SNAPSHOT_LIMIT
    return path, NAMING_KEY_BLOB_LIMIT


def branch_commits(repo: git.Repo, branch: str) -> set[str]:
    """Every commit in the history of `branch` (empty if it does not exist)."""
    try:
        return set(repo.git.rev_list(f"refs/heads/{branch}", "--").split())
    except git.GitCommandError:
        return set()


def file_at(repo: git.Repo, commit: str, path: str, keys: Keys = CLEAR) -> bytes:
    """The plaintext of logs/ file `path` as `commit` holds it: its encrypted form opened with
    `keys`' identity, else its clear form. GitStoreError when either commit or file is absent,
    Sealed when no identity here opens it, Undecryptable when its ciphertext is broken."""
    [found] = files_at(repo, [(commit, path)], keys)
    if isinstance(found, GitStoreError):
        raise found
    return found


def files_at(repo: git.Repo, wanted: list[tuple[str, str]], keys: Keys = CLEAR) -> Iterator[bytes | GitStoreError]:
    """`file_at` of each (commit, path), in order, the error in place of the bytes, every blob
    read through one git process (a process per file would cost `verify` seconds)."""
    return _read(repo, wanted, keys, [None] * len(wanted))


def snapshots_at(
    repo: git.Repo, wanted: list[tuple[str, savepoint_log.Savepoint]], keys: Keys = CLEAR
) -> Iterator[bytes | GitStoreError]:
    """`files_at` of each savepoint's snapshot file at a commit, but OtherSize, nothing read,
    for a file whose size git states is not one that savepoint's content can have: whoever can
    push cannot make a reader of the branch read SNAPSHOT_LIMIT per savepoint."""
    return _read(repo, [(commit, s.snapshot_file) for commit, s in wanted], keys, [s for _, s in wanted])


def _read(
    repo: git.Repo,
    wanted: list[tuple[str, str]],
    keys: Keys,
    savepoints: list[savepoint_log.Savepoint | None],
) -> Iterator[bytes | GitStoreError]:
    """`files_at`, each file whose savepoint is given read only at a size its content can have."""
    sources: list[tuple[str, str | None, int] | GitStoreError] = []
    for (commit, path), source, savepoint in zip(wanted, _located(repo, wanted, keys), savepoints):
        what, bound = read_limit(path)
        if isinstance(source, tuple) and source[2] > bound:
            source = Oversized(f"{what} at commit {commit[:12]}", source[2], bound)
        elif (
            isinstance(source, tuple) and savepoint is not None and not _may_hold(savepoint, source[2], bool(source[1]))
        ):
            source = OtherSize(f"{what} at commit {commit[:12]}", source[2], savepoint.snapshot_size_bytes)
        sources.append(source)
    identities = _identities(keys) if any(isinstance(s, tuple) and s[1] for s in sources) else []
    contents = _blobs(repo, [s[0] for s in sources if isinstance(s, tuple)])
    for source in sources:
        if isinstance(source, GitStoreError):
            yield source
            continue
        blob, where, _ = source
        data = next(contents)
        yield data if where is None else _opened(repo, blob, data, identities, keys, where)


def _located(
    repo: git.Repo, wanted: list[tuple[str, str]], keys: Keys
) -> list[tuple[str, str | None, int] | GitStoreError]:
    """Where each (commit, logs/ file) is: the blob of its encrypted form (a chunk's under the
    name the commit's naming key gives it), where that is and its size, else the blob of its
    clear form, None and its size; the GitStoreError when neither is there (the Unopened one when
    only a naming key that cannot be read here could say)."""
    naming_keys = _naming_keys_at(repo, [commit for commit, path in wanted if path.startswith(CHUNKS_DIR)], keys)
    candidates = []
    for commit, path in wanted:
        sealed: str | None = sealed_path(path)
        if path.startswith(CHUNKS_DIR):
            key = naming_keys[commit]
            sealed = sealed_path(path, key) if isinstance(key, bytes) else None
        candidates.append((commit, path, sealed))
    ids = blobs_at(
        repo, [pair for commit, path, sealed in candidates for pair in ((commit, sealed or path), (commit, path))]
    )
    sources: list[tuple[str, str | None, int] | GitStoreError] = []
    for i, (commit, path, sealed) in enumerate(candidates):
        encrypted, clear = ids[2 * i], ids[2 * i + 1]
        if sealed is not None and encrypted is not None:
            sources.append((encrypted[0], f"{sealed} at commit {commit[:12]}", encrypted[1]))
        elif clear is not None:
            sources.append((clear[0], None, clear[1]))
        else:
            key = naming_keys.get(commit) if path.startswith(CHUNKS_DIR) else None
            absent = GitStoreError(
                f"commit {commit[:12]} or {quoting.path(path)} in it is not in {quoting.path(repo.common_dir)}"
            )
            sources.append(key if isinstance(key, GitStoreError) else absent)
    return sources


def sync(
    repo: git.Repo,
    target: Target,
    logs: Path,
    vouched: Callable[[savepoint_log.Savepoint], bool],
    newly_signed: bool = False,
    others: Callable[[Target, set[str]], set[str]] = lambda _target, _names: set(),
    unread: Callable[[str], None] = lambda _reason: None,
) -> Iterator[savepoint_log.Outcome]:
    """Commits and pushes each instance's savepoints onto its own branch (`_sync_branch`): the
    configured instance's first (started from the shared branch of older versions when it has
    none here), then any other instance logs/ holds (a renamed instance's predecessor, one named
    by PRECOMPACT_INSTANCE), so that no instance's savepoints land on another's branch. Only the
    savepoints a root vouches for (`vouched`: this machine's tag, or the configured key's
    signature, verifier.signed.vouching): one that came with the project is never pushed as the
    user's own (the caller says so, provenance.unvouched_note). `others` names which of the
    snapshots a branch holds that logs/ lacks are another key's (verifier.team.others_snapshots):
    committing over them hides nothing of yours, so they hold no commit back. `unread` is told,
    with why, of each branch whose savepoints were all pushed before when the remote could not
    be read to check that it still holds them: no savepoint's record changes, and no verdict
    may say the branch is up to date."""
    _migrate(repo, target)
    savepoints = savepoint_log.savepoints(logs)
    branches: dict[Target, list[savepoint_log.Savepoint]] = {target: []}
    for savepoint in savepoints:
        if vouched(savepoint):
            branches.setdefault(target.of_instance(savepoint.instance), []).append(savepoint)
    for own, mine in branches.items():
        yield from _sync_branch(repo, own, logs, savepoints, mine, newly_signed and own == target, others, unread)


def _sync_branch(
    repo: git.Repo,
    target: Target,
    logs: Path,
    every: list[savepoint_log.Savepoint],
    savepoints: list[savepoint_log.Savepoint],
    newly_signed: bool,
    others: Callable[[Target, set[str]], set[str]],
    unread: Callable[[str], None],
) -> Iterator[savepoint_log.Outcome]:
    """Commits every savepoint of `savepoints` (one instance's) not yet committed, in sequence
    order, then pushes once, yielding each savepoint's outcome as it happens (the caller records
    it). Stops at the first savepoint that cannot be committed: later ones must not be committed
    ahead of it. With `newly_signed` (signatures were added to the index) and no savepoint to
    commit, the index is committed alone, so that the remote's copy carries them; with nothing
    to push, the remote is asked whether it still holds the branch (`_pushed_again`)."""
    Outcome, Event = savepoint_log.Outcome, savepoint_log.Event
    committed = [s for s in savepoints if s.commit]
    if committed and _resolve(repo, target.ref) is None:
        lost = list(_branch_taken_up(repo, target, committed))
        if lost:
            yield from lost
            return  # nothing is committed on top of a history this store does not hold
    uncommitted = [s for s in savepoints if not s.commit]
    hidden, altered = _not_in_logs(repo, target, every, others) if uncommitted else (0, frozenset[str]())
    if hidden:
        # The commit's index copy, which `precompact restore` reads, would no longer name them;
        # nor would restore bring them back over the savepoints only logs/ holds.
        reason = f"branch {target.branch}: {savepoint_log.lacking_notice(hidden, uncommitted)}"
        yield Outcome(uncommitted[0], Event.LAYER_2_FAILED, {"reason": reason})
        return
    if newly_signed and all(s.commit for s in savepoints) and _resolve(repo, target.ref):
        try:
            commit_index(repo, target, logs)
        except (GitStoreError, git.GitCommandError, OSError):
            pass  # the next savepoint's commit carries the index, signatures included
    # The first commit puts logs/'s bytes back over the copies someone altered since they were
    # committed; the commits after it keep its tree.
    repaired = [s for s in savepoints if s.commit and s.snapshot_file in altered]
    for savepoint in savepoints:
        if savepoint.commit:
            continue
        try:
            commit = commit_savepoint(repo, target, logs, savepoint, repaired)
            repaired = []
        except GitStoreError as e:
            yield _failed(savepoint, e)
            return
        except OSError as e:
            yield Outcome(savepoint, Event.LAYER_2_FAILED, {"reason": str(e)}, said=quoting.os_error(e))
            return
        except git.GitCommandError as e:
            yield _failed(
                savepoint,
                GitStoreError(
                    f"committing savepoint {savepoint.sequence} failed", reason=_said(str(e.stderr), e.status)
                ),
            )
            return
        yield Outcome(savepoint, Event.LAYER_2_COMMITTED, {"commit": commit, "branch": target.branch})
        savepoint.commit = commit
    unpushed = [s for s in savepoints if s.commit and s.layer_2 != savepoint_log.Layer2.PUSHED]
    hidden_by_merge = merge_hides(repo, target, every, unpushed, others)
    if not unpushed:
        yield from _pushed_again(repo, target, [s for s in savepoints if s.commit], unread, hidden_by_merge)
        return
    try:
        push(repo, target, hidden_by_merge)
    except GitStoreError as e:
        for savepoint in unpushed:
            yield _failed(savepoint, e, commit=savepoint.commit)
        return
    for savepoint in unpushed:
        yield Outcome(savepoint, Event.LAYER_2_PUSHED, {"commit": savepoint.commit, "remote": target.remote})


def _branch_taken_up(
    repo: git.Repo, target: Target, committed: list[savepoint_log.Savepoint]
) -> Iterator[savepoint_log.Outcome]:
    """The instance's branch, for savepoints the index records as committed when the store has no
    such branch (it is named after the project's path: the project moved, or logs/ came to a new
    machine): fetched from the remote and taken up here when it holds every one of their commits.
    Each savepoint whose commit then neither the store nor the remote's branch holds fails, with
    why: never "up to date" on the strength of an index line."""
    try:
        fetch(repo, target)
        tip = remote_tip(repo, target)
    except GitStoreError as e:
        why = f"precompact's git directory here has no branch {target.branch} (the project moved, or this is a new machine), and it could not be fetched"
        for savepoint in committed:
            yield _failed(savepoint, e, commit=savepoint.commit, why=why)
        return
    lost = [s for s in committed if tip is None or not _is_ancestor(repo, str(s.commit), tip)]
    for savepoint in lost:
        reason = f"commit {str(savepoint.commit)[:12]} is neither in precompact's git directory here (named after the project's path: the project moved, or logs/ came from another machine) nor on {target.remote}'s {target.branch}: the remote lost it (history rewritten), or it was never pushed"
        yield savepoint_log.Outcome(
            savepoint, savepoint_log.Event.LAYER_2_FAILED, {"reason": reason, "commit": savepoint.commit}
        )
    if not lost and tip is not None:
        adopt_remote_branch(repo, target, tip, [str(s.commit) for s in committed])


def _pushed_again(
    repo: git.Repo,
    target: Target,
    committed: list[savepoint_log.Savepoint],
    unread: Callable[[str], None],
    hidden: Callable[[], str | None],
) -> Iterator[savepoint_log.Outcome]:
    """With every savepoint recorded as pushed, asks the remote what its branch holds now and
    pushes again when that is not this branch's tip: an index-only commit not pushed yet, a
    branch migrated from the shared one, or a branch the remote lost or rewound (a force-push,
    a deletion), never merged over what `hidden` names (`push`). A push that then fails records,
    for each savepoint the remote no longer holds, that it is not backed up, with git's reason;
    when it holds them all, that the newest is not (the index copy after it is not there). A remote that cannot be read changes no record
    (nothing is known to be missing), and `unread` is told why it was not checked."""
    tip = _resolve(repo, target.ref)
    if tip is None:
        return
    try:
        held = remote_refs(repo, target, target.ref).get(target.ref)
    except GitStoreError as e:
        unread(
            f"{target.remote} could not be read, so whether it still holds {target.branch} as pushed was not "
            f"checked ({e}); run `precompact flush` again once it answers"
        )
        return
    if held == tip:
        _set_tracking_ref(repo, target, tip)
        return
    try:
        push(repo, target, hidden)
    except GitStoreError as e:
        kept = held if held is not None and _resolve(repo, held) is not None else None
        lost = [s for s in committed if kept is None or not _is_ancestor(repo, str(s.commit), kept)]
        for savepoint in lost:
            yield _failed(savepoint, e, commit=savepoint.commit, why="the remote no longer holds it")
        if not lost and committed:
            # The remote holds every savepoint's commit, not this branch's tip (an index-only
            # commit: the signatures that make the remote's copy verify elsewhere): the newest
            # savepoint is not backed up whole until it lands, and the next flush pushes it.
            newest = max(committed, key=lambda s: s.sequence)
            why = "the remote holds its commit but not the index copy after it (the signatures it carries)"
            yield _failed(newest, e, commit=newest.commit, why=why)


def _failed(
    savepoint: savepoint_log.Savepoint, error: GitStoreError, commit: str | None = None, why: str | None = None
) -> savepoint_log.Outcome:
    """Layer 2 failed for `savepoint` with `error`, after `why` (precompact's words) when given: the
    index line keeps git's words as they were said (its printers quote the reason whole), the
    outcome says them quoted now (`flush`'s line)."""
    reason, said = (error.unquoted, str(error)) if why is None else (f"{why}: {error.unquoted}", f"{why}: {error}")
    details = {"reason": reason, **({"commit": commit} if commit is not None else {})}
    return savepoint_log.Outcome(savepoint, savepoint_log.Event.LAYER_2_FAILED, details, said=said)


def _migrate(repo: git.Repo, target: Target) -> None:
    """An archive from before branches were per instance: the instance's branch starts where the
    shared branch is here, its commits (which the index and the chain recorded) kept as they
    are; the shared branch is left as it is, here and on the remote (never forced, never
    deleted), and the next push creates the instance's branch there."""
    legacy = target.legacy_ref
    if legacy is None or _resolve(repo, target.ref) is not None:
        return
    tip = _resolve(repo, legacy)
    if tip is not None:
        with contextlib.suppress(git.GitCommandError):  # made meanwhile by another precompact process
            repo.git.update_ref(target.ref, tip, "0" * len(tip))


def _said(stderr: str, status: object) -> str:
    """Git's own complaint: a lock left by a crashed git (whose fix is in the message), else the
    last line (GitPython's quotes around its captured stderr removed, a quote of git's kept);
    redacted and bounded (`_shown`)."""
    detail = [line.strip() for line in stderr.strip().splitlines()]
    for line in detail:
        if "Unable to create" in line and ".lock" in line:
            complaint = line.split("error: ", 1)[-1].removeprefix("fatal: ").rstrip(".")
            return _shown(f"{complaint}; if no git command is running there, a crashed one left it: delete that file")
    if not detail:
        return f"git exited {status}"
    last = detail[-1].removeprefix("stderr: ").strip()
    if len(detail) == 1 and stderr.strip().startswith("stderr: '"):
        last = last.removeprefix("'").removesuffix("'")
    return _shown(last)


# Lines of git's that name no reason: its advice, and the close of every failed push.
_NO_REASON = ("hint:", "To ", "Please make sure you have the correct access rights", "and the repository exists")


def refusal(output: str, status: int) -> str:
    """Why git failed to talk to the remote, whole, as git and the remote said it: every
    `remote:` line (a hook's message, a size limit, a full disk, a protected branch), each ref
    rejected and why, and git's own errors, without git's advice (`hint:`, "Please make sure you
    have the correct access rights and the repository exists"), its `To <url>` line and its
    closing "failed to push some refs", which name no reason; redacted and bounded (`_shown`)."""
    if "Unable to create" in output and ".lock" in output:
        return _said(output, status)  # a lock a crashed git left, and its fix
    kept = []
    for line in (line.strip() for line in output.splitlines()):
        text = line.removeprefix("remote:").strip()
        if not text or text.startswith(_NO_REASON) or "failed to push some refs" in line:
            continue
        kept.append(text)
    return _shown("; ".join(dict.fromkeys(kept))) if kept else _said(output, status)


# What of git's words a reason keeps: a remote's hook may print without end.
GIT_SAID_MAX_CHARS = 2000


def _shown(text: str) -> str:
    """Git's words as a reason shows them: redacted (a URL's password, a token a hook echoed),
    then cut at GIT_SAID_MAX_CHARS; quoted by whoever shows them (`quoting.inline`)."""
    from precompact.transcript.redact import Redactor

    said = Redactor().redact(text)
    return said if len(said) <= GIT_SAID_MAX_CHARS else said[: GIT_SAID_MAX_CHARS - 1] + quoting.CUT_MARK


def _resolve(repo: git.Repo, ref: str) -> str | None:
    try:
        return repo.git.rev_parse("--verify", "--quiet", f"{ref}^{{commit}}")
    except git.GitCommandError:
        return None


def _identity(repo: git.Repo) -> dict:
    """The user's git identity when configured, else a neutral one, so commits never fail on it."""
    reader = repo.config_reader()
    if reader.has_option("user", "name") and reader.has_option("user", "email"):
        return {}
    return dict(FALLBACK_IDENTITY)


SAVES_PREFIX = f"logs/{logs_dir.SAVES_DIR}/"


@dataclass(frozen=True)
class BranchSnapshots:
    """The snapshot files a savepoint branch holds (as the index names them: the encrypted
    form's suffix removed), measured against the savepoints logs/ holds by content, never by
    name alone: a name is a second and a sequence (logs_dir.snapshot_name), which two machines
    of one instance writing savepoint N in the same second share."""

    lacking: frozenset[str]  # held with content no savepoint logs/ names so has (or none names)
    held: frozenset[str]  # held with the content of logs/'s savepoint of that name, and only so
    # Held with other content than logs/'s savepoint of that name, which logs/ records committed
    # in the history of the commit that holds it: no savepoint of Layer 2's replaces a committed
    # one, so someone who can push altered the copy (verify FAILs it); Layer 2 commits logs/'s
    # bytes back over it (`_sync_branch`).
    altered: frozenset[str] = frozenset()


class _Copy(enum.Enum):
    """What a snapshot file at a commit is to logs/ (`_snapshots_at`)."""

    HELD = "held"
    ALTERED = "altered"
    LACKING = "lacking"


def branch_snapshots(repo: git.Repo, target: Target, savepoints: list[savepoint_log.Savepoint]) -> BranchSnapshots:
    """The snapshot files the savepoint branch holds here or as last fetched from the remote
    (refs only: no network), against `savepoints` (logs/'s). What was last fetched counts only
    when it shares history with the branch here (or, before the migration, with the shared
    branch here): the shared branch of older versions, fetched where the instance has no branch
    on the remote yet, may be a teammate's, and Layer 2 only ever adds on top of its own history
    (a race is merged, never replaced). A blob both tips hold is judged once."""
    named: dict[str, list[savepoint_log.Savepoint]] = {}
    for savepoint in savepoints:
        named.setdefault(savepoint.snapshot_file, []).append(savepoint)
    found: dict[_Copy, set[str]] = {copy: set() for copy in _Copy}
    here = _resolve(repo, target.ref) or (_resolve(repo, target.legacy_ref) if target.legacy_ref else None)
    tips: list[str] = []
    judged: dict[tuple[str, str], bool] = {}
    for ref in (target.ref, f"refs/remotes/{target.remote}/{target.branch}"):
        tip = _resolve(repo, ref)
        if tip is None or tip in tips or (ref != target.ref and here is not None and not _related(repo, here, tip)):
            continue
        tips.append(tip)
        for name, copy in _snapshots_at(repo, target, tip, named, judged).items():
            found[copy].add(name)
    lacking = found[_Copy.LACKING]
    altered = found[_Copy.ALTERED] - lacking
    return BranchSnapshots(frozenset(lacking), frozenset(found[_Copy.HELD] - lacking - altered), frozenset(altered))


def _snapshots_at(
    repo: git.Repo,
    target: Target,
    tip: str,
    named: dict[str, list[savepoint_log.Savepoint]],
    judged: dict[tuple[str, str], bool],
) -> dict[str, _Copy]:
    """Each snapshot file the commit `tip` holds, and what it is to `named` (logs/'s savepoints,
    by file). HELD when every form of it there (clear, encrypted) holds the content of a
    savepoint of that name: the blob its own recorded commit holds at that path (what Layer 2
    committed, or `restore` wrote from), the ciphertext this repository made of its bytes (a
    crash between Layer 2's commit and its record), else the blob's own bytes, opened, hashing
    to its sha256. Those bytes are read only when the blob's size (as git states it, nothing
    read) is one that content can have: the size the savepoint's line states with the hash, in
    clear, or at most what sealing it makes (encryption.sealed_size_bound); a blob of any other
    size holds other content, unread, so whoever can push cannot make every command read and
    hash SNAPSHOT_LIMIT per savepoint. `judged` remembers each (name, blob) read this run. A
    blob no identity here opens cannot be compared: it counts by its name, as before (`restore`
    could not read it either); a broken or oversized one is not the savepoint's. Other content
    is ALTERED when a savepoint of that name records a commit in `tip`'s history (its copy was
    replaced after Layer 2 committed it), else LACKING (another chain's savepoint logs/ lacks)."""
    try:
        listing = repo.git.ls_tree("-r", "-z", "--long", "--full-tree", tip, "--", SAVES_PREFIX)
    except git.GitCommandError as e:
        raise GitStoreError(
            f"branch {target.branch} cannot be listed",
            reason=_said(str(e.stderr or e), e.status if isinstance(e.status, int) else 1),
        ) from None
    entries: list[tuple[str, str, str, float]] = []  # (name, path, blob, size: inf when not stated)
    for entry in filter(None, listing.split("\0")):
        meta, _, path = entry.partition("\t")
        fields = meta.split()
        size = int(fields[3]) if len(fields) == 4 and fields[3].isdigit() else math.inf
        entries.append((path.removesuffix(remote_crypto.SUFFIX), path, fields[2] if len(fields) > 2 else "", size))
    asked = [(path, s) for name, path, _, _ in entries for s in named.get(name, []) if s.commit]
    at_commits = blob_ids_at(repo, [(str(s.commit), path) for path, s in asked]) if asked else []
    recorded = {(path, blob) for (path, _), blob in zip(asked, at_commits) if blob is not None}
    ours: dict[str, bool] = {}
    unsure: list[tuple[str, str, str]] = []
    for name, path, blob, size in entries:
        candidates = named.get(name, [])
        sealed = path.endswith(remote_crypto.SUFFIX)
        if (path, blob) in recorded or (
            sealed and any(_cache_entry(repo, s.snapshot_hash, target.keys) == blob for s in candidates)
        ):
            ours.setdefault(name, True)
        elif (name, blob) in judged:
            ours[name] = ours.get(name, True) and judged[name, blob]
        elif any(_may_hold(s, size, sealed) for s in candidates):
            unsure.append((name, path, blob))
        else:
            ours[name] = False
    keys = target.keys
    sealed_unsure = [(name, path, blob) for name, path, blob in unsure if path.endswith(remote_crypto.SUFFIX)]
    identities = _identities(keys) if sealed_unsure else []
    # The blobs first in zip: their reader then waits for git once the last is read.
    for data, (name, path, blob) in zip(_blobs(repo, [blob for _, _, blob in sealed_unsure]), sealed_unsure):
        content = _opened(repo, blob, data, identities, keys, f"{path} at commit {tip[:12]}")
        same = isinstance(content, Sealed) or (
            isinstance(content, bytes) and hashlib.sha256(content).hexdigest() in {s.snapshot_hash for s in named[name]}
        )
        judged[name, blob] = same
        ours[name] = ours.get(name, True) and same
    clear_unsure = [(name, path, blob) for name, path, blob in unsure if not path.endswith(remote_crypto.SUFFIX)]
    for digest, (name, path, blob) in zip(_sha256s(repo, [blob for _, _, blob in clear_unsure]), clear_unsure):
        same = digest in {s.snapshot_hash for s in named[name]}
        judged[name, blob] = same
        ours[name] = ours.get(name, True) and same
    return {name: _Copy.HELD if held else _other_copy(repo, tip, named.get(name, [])) for name, held in ours.items()}


def _may_hold(savepoint: savepoint_log.Savepoint, size: float, sealed: bool) -> bool:
    """Whether a blob of `size` bytes (inf: not stated) may hold `savepoint`'s snapshot: in
    clear, exactly the size its line states with its hash (any size up to SNAPSHOT_LIMIT when
    it states none); encrypted, no more than sealing that size makes."""
    if size > SNAPSHOT_LIMIT:
        return False
    stated = savepoint.snapshot_size_bytes
    if not stated:
        return True
    return size <= remote_crypto.sealed_size_bound(stated) if sealed else size == stated


def _other_copy(repo: git.Repo, tip: str, candidates: list[savepoint_log.Savepoint]) -> _Copy:
    """What a file at `tip` with other content than logs/'s savepoints of its name is: ALTERED
    when one of them records its commit in `tip`'s history (Layer 2 committed it there, and
    nothing of precompact's replaces a committed snapshot), else LACKING."""
    committed = {str(s.commit) for s in candidates if s.commit and _OBJECT_ID.fullmatch(str(s.commit))}
    if any(commit == tip or _is_ancestor(repo, commit, tip) for commit in committed):
        return _Copy.ALTERED
    return _Copy.LACKING


def merge_hides(
    repo: git.Repo,
    target: Target,
    every: list[savepoint_log.Savepoint],
    waiting: list[savepoint_log.Savepoint],
    others: Callable[[Target, set[str]], set[str]],
) -> Callable[[], str | None]:
    """`push`'s `hidden` for a branch of the savepoints logs/ holds (`every`; `waiting`: those of
    them the push brings): what a merge over the remote's tip just fetched would put out of its
    index, in the words of the check made before committing (`_not_in_logs`, on what the race
    brought): another machine of the instance pushed savepoints logs/ lacks, so with `waiting`
    the two hold two chains."""

    def hidden() -> str | None:
        count, _ = _not_in_logs(repo, target, every, others)
        return f"branch {target.branch}: {savepoint_log.lacking_notice(count, waiting)}" if count else None

    return hidden


def _not_in_logs(
    repo: git.Repo,
    target: Target,
    savepoints: list[savepoint_log.Savepoint],
    others: Callable[[Target, set[str]], set[str]],
) -> tuple[int, frozenset[str]]:
    """How many snapshots the branch holds (here, or as last fetched) whose content the index
    does not name (`branch_snapshots`: one of the same name with other content counts, but for
    an altered copy of one logs/ committed there), but for another key's (`others`); and the
    names of those altered copies."""
    try:
        found = branch_snapshots(repo, target, savepoints)
    except GitStoreError:
        return 0, frozenset()  # an unreadable branch: committing to it will say why
    missing = set(found.lacking)
    return (len(missing - others(target, missing)) if missing else 0), found.altered


def index_copy_at_tip(repo: git.Repo, target: Target) -> tuple[str, bytes | GitStoreError] | None:
    """The tip of this project's instance branch as last fetched from the remote, and the index
    copy it holds as `files_at` read it (its bytes, or why not); None when there is no such tip.
    Read once a run: `verifier/team.own_branch_problem` and `verify`'s summary check both judge it."""
    tip = remote_tip(repo, target)
    if tip is None:
        return None
    [copy] = files_at(repo, [(tip, f"logs/{savepoint_log.INDEX_NAME}")], target.keys)
    return tip, copy


def remote_tip(repo: git.Repo, target: Target) -> str | None:
    """The savepoint branch as last fetched from the remote (its remote-tracking ref)."""
    return _resolve(repo, f"refs/remotes/{target.remote}/{target.branch}")


def commits_changing(repo: git.Repo, tip: str, path: str, limit: int) -> list[str]:
    """The commits of `tip`'s history that changed `path` (clear or encrypted), `tip`'s side
    first (every commit before its parents, whatever dates the commits claim), at most `limit`."""
    return repo.git.rev_list(
        "--topo-order", "--full-history", f"--max-count={limit}", tip, "--", path, sealed_path(path)
    ).split()


def commit_in_history(repo: git.Repo, given: str, tip: str) -> str | None:
    """The commit `given` names (its hexadecimal id, 7 characters or more) when it is `tip` or
    one of its ancestors, else None: a user's name for a commit of a branch is read no further."""
    if not re.fullmatch(r"[0-9a-f]{7,64}", given):
        return None
    commit = _resolve(repo, given)
    return commit if commit is not None and (commit == tip or _is_ancestor(repo, commit, tip)) else None


@dataclass(frozen=True)
class SnapshotsAdded:
    """The commits of a history that added snapshot files, as far as it was read."""

    # For each snapshot file (as the index names it), the first commit that added it, clear or
    # encrypted, newest first (what reads only the newest of them takes from the front).
    commits: dict[str, str]
    # The newest commit whose additions were not read (None: the whole history was), and why.
    unread: str | None = None
    why_unread: str | None = None


def commits_adding_snapshots(repo: git.Repo, tip: str) -> SnapshotsAdded:
    """Which commit of `tip`'s history first added each snapshot file, whichever parent of a
    merge it is behind (every parent's history is listed), read newest first (`--topo-order`)
    for as long as the trees git compares stay within TREES_READ_LIMIT and the commits within
    SNAPSHOT_COMMITS_LIMIT; the first commit beyond is named unread. A commit costs git the
    trees along SAVES_PREFIX of it and of its parent: a directory of N snapshot files is one tree
    of N entries, read again at every commit that adds one, so reading them all grows with the
    square of the commits (docs/performance.md). Their sizes are asked of git (`cat-file
    --batch-check`, a level of the path at a time, each only of the commits within the bound so
    far) before one `diff-tree --stdin` lists what the commits within it added."""
    listing = repo.git.log("--topo-order", f"--max-count={SNAPSHOT_COMMITS_LIMIT + 1}", "--format=%H %T %P", tip, "--")
    history = [line.split() for line in listing.splitlines()]
    # One commit beyond the bound is listed: it may be the parent the last one is diffed against.
    roots = {fields[0]: fields[1] for fields in history}
    parents = {fields[0]: fields[2:] for fields in history}
    # The trees along SAVES_PREFIX of each commit asked about, root first, with their sizes.
    along: dict[str, list[tuple[str, int]]] = {commit: [] for commit in roots}
    read = [fields[0] for fields in history[:SNAPSHOT_COMMITS_LIMIT]]
    for depth, name in enumerate(("", *SAVES_PREFIX.strip("/").split("/"))):
        # Each commit within the bound so far, and the parent it is diffed against, whose path
        # reached this level: its tree here, by the tree above it (an absent one costs nothing).
        measured = {c for commit in read for c in (commit, *parents[commit][:1]) if c in along}
        asked = {
            c: roots[c] if depth == 0 else f"{along[c][-1][0]}:{name}"
            for c in measured
            if len(along[c]) == depth and (depth == 0 or along[c][-1][0])
        }
        questions = sorted(set(asked.values()))
        answers = dict(zip(questions, _trees(repo, questions)))
        for c, question in asked.items():
            along[c].append(answers[question] or ("", 0))
        read = _within_bound(read, parents, along)
    unread = history[len(read)][0] if len(read) < len(history) else None
    why = None
    if unread is not None:
        why = (
            f"over {SNAPSHOT_COMMITS_LIMIT:,} commits"
            if len(read) == SNAPSHOT_COMMITS_LIMIT
            else f"the trees git compares for the newer ones reach {_megabytes(TREES_READ_LIMIT)} MB"
        )
    return SnapshotsAdded(_added(repo, read), unread, why)


def _within_bound(read: list[str], parents: dict[str, list[str]], along: dict[str, list[tuple[str, int]]]) -> list[str]:
    """The newest of `read` whose trees (`along`: as far as known), with those of their first
    parent (diffed against them; a merge is not diffed), add up to at most TREES_READ_LIMIT."""
    total = 0
    for i, commit in enumerate(read):
        compared = [commit] if len(parents[commit]) > 1 else [commit, *parents[commit]]
        if any(c not in along for c in compared):
            return read[:i]  # its parent is beyond SNAPSHOT_COMMITS_LIMIT: not measured
        total += sum(size for c in compared for _, size in along[c])
        if total > TREES_READ_LIMIT:
            return read[:i]
    return read


def _trees(repo: git.Repo, questions: list[str]) -> list[tuple[str, int] | None]:
    """The id and size (as git states it, nothing read) of the tree each of `questions` names
    (`<tree>` or `<tree>:<name>`), None where it names none, from one `git cat-file --batch-check`."""
    return [
        (found[0], found[2]) if found is not None and found[1] == "tree" else None
        for found in _batch_check(repo, questions)
    ]


def _added(repo: git.Repo, commits: list[str]) -> dict[str, str]:
    """The first of `commits` (newest first) that added each snapshot file, from one `git
    diff-tree --stdin` (a root commit against the empty tree, a merge not at all)."""
    if not commits:
        return {}
    with tempfile.TemporaryFile() as names:
        names.write("".join(f"{commit}\n" for commit in commits).encode())
        names.seek(0)
        listing = repo.git.diff_tree(
            "--stdin", "--root", "-r", "--diff-filter=A", "--name-only", "-z", "--", SAVES_PREFIX, istream=names
        )
    listed: list[tuple[str, str]] = []
    commit = None
    for field in listing.split("\0"):
        field = field.strip("\n")
        if _OBJECT_ID.fullmatch(field):
            commit = field
        elif field.startswith(SAVES_PREFIX) and commit is not None:
            listed.append((field.removesuffix(remote_crypto.SUFFIX), commit))
    added: dict[str, str] = {}
    for name, commit in reversed(listed):  # oldest first: the first commit that added it stays
        added.setdefault(name, commit)
    return dict(reversed(added.items()))


def adopt_remote_branch(repo: git.Repo, target: Target, tip: str, recorded: Collection[str]) -> bool:
    """Starts the local savepoint branch at the remote's `tip` so that Layer 2 commits the next
    savepoint on top of the remote's history (its tree is the next commit's base); returns
    whether it did. A branch here is moved there only when it is not ahead of `tip` and none of
    `recorded` (the commits logs/ records its savepoints in) is outside `tip`'s history: then
    what it holds beyond `tip` is no savepoint logs/ knows (another chain's, whose logs/ was
    moved aside to restore this one), and building on its tree would leave `tip`'s snapshots
    out of the next commit."""
    here = _resolve(repo, target.ref)
    if here is not None and (
        here == tip
        or _is_ancestor(repo, tip, here)
        or not all(commit == tip or _is_ancestor(repo, commit, tip) for commit in recorded)
    ):
        return False
    try:
        repo.git.update_ref(target.ref, tip, here or "0" * len(tip))
    except git.GitCommandError:
        return False  # moved meanwhile by another precompact process
    return True


def unpushed(project: Path) -> dict[Path, list[str]]:
    """Each of precompact's git directories that may hold the savepoints of the project at
    `project` (git_env.stores_of), with its branches whose tip no remote-tracking ref there
    holds: savepoints that, as far as this machine knows, never reached the remote."""
    found = {}
    for store in git_env.stores_of(project):
        repo = _IsolatedRepo(store)
        repo.git.git_dir = repo.git_dir  # type: ignore[attr-defined]  # read by _IsolatedGit.execute
        refs = [line.split(" ", 1) for line in repo.git.for_each_ref("--format=%(objectname) %(refname)").splitlines()]
        tracked = [tip for tip, name in refs if name.startswith("refs/remotes/")]
        found[store] = [
            name.removeprefix("refs/heads/")
            for tip, name in refs
            if name.startswith("refs/heads/") and not any(_is_ancestor(repo, tip, held) for held in tracked)
        ]
    return found


CHECKED_PREFIX = "refs/precompact/held/"


def not_held_by(project: Path, url: str, skipped: Collection[Path] = ()) -> dict[Path, list[str]]:
    """Each of precompact's git directories of the project at `project` (git_env.stores_of) but
    `skipped`, with its branches whose tip the remote at `url` does not hold now: asked, not
    remembered (a remote-tracking ref says only what the remote had at the last push; a branch
    deleted or forced over since is gone all the same). GitStoreError, with git's reason, when
    the remote cannot be read."""
    found = {}
    for store in git_env.stores_of(project):
        if store in skipped:
            continue
        repo = _IsolatedRepo(store)
        repo.git.git_dir = repo.git_dir  # type: ignore[attr-defined]  # read by _IsolatedGit.execute
        found[store] = _not_held(repo, url)
    return found


def _not_held(repo: git.Repo, url: str) -> list[str]:
    """`ls-remote` (git_env.transport, as `verify` asks), then, for a branch whose tip there is
    another commit not known here, a fetch of it to see whether its history holds ours (another
    machine of the instance pushed on top)."""
    heads = {
        name: tip
        for tip, name in (
            line.split(" ", 1)
            for line in repo.git.for_each_ref("--format=%(objectname) %(refname)", "refs/heads/").splitlines()
        )
    }
    if not heads:
        return []
    listed = _transfer(repo, "ls-remote", url, "asking the remote", *heads)
    if listed.returncode != 0:
        raise GitStoreError("asking the remote failed", reason=refusal(listed.stderr, listed.returncode))
    theirs = {}
    for line in str(listed.stdout).splitlines():
        commit, _, name = line.partition("\t")
        if _OBJECT_ID.fullmatch(commit) and name in heads:  # ls-remote matches a pattern by its tail
            theirs[name] = commit
    unknown = {
        name: f"{CHECKED_PREFIX}{name.removeprefix('refs/heads/')}"
        for name in heads
        if name in theirs
        and theirs[name] != heads[name]
        and not (has_commit(repo, theirs[name]) and _is_ancestor(repo, heads[name], theirs[name]))
    }
    if unknown:
        done = _transfer(
            repo,
            "fetch",
            url,
            "fetching from the remote",
            *(f"+{name}:{ref}" for name, ref in unknown.items()),
            options=_FETCH_OPTIONS,
        )
        if done.returncode != 0:
            raise GitStoreError("fetching from the remote failed", reason=refusal(done.stderr, done.returncode))
    held = {name for name in theirs if name not in unknown} | {
        name for name, ref in unknown.items() if _is_ancestor(repo, heads[name], ref)
    }
    return sorted(name.removeprefix("refs/heads/") for name in heads if name not in held)


def remove_store(store: Path) -> None:
    """Deletes precompact's git directory `store` (`projects --forget`, once nothing in it is
    unpushed and no other registered project uses it)."""
    shutil.rmtree(store)
