"""Layer 2: savepoints committed onto a dedicated branch and pushed, never touching the user's
index, working tree or current branch.

Everything goes through git plumbing (GitPython's command layer): blobs are hashed straight
from the files, the tree is built in a private index file, the commit is made with
`commit-tree`, and the branch moves with a compare-and-swap `update-ref`, so a git command the
user runs at the same moment neither sees nor blocks this.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import git
import orjson

from precompact import chunks, git_env, logs_dir, savepoint_log

PUSH_TIMEOUT_SECONDS = 20
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


class GitStoreError(Exception):
    """Layer 2 could not be done; the message says why and what to do."""


@dataclass(frozen=True)
class Target:
    repository: Path
    remote: str
    branch: str

    @property
    def ref(self) -> str:
        return f"refs/heads/{self.branch}"


class _IsolatedGit(git.Git):
    """GitPython's command runner, isolated: GitPython starts every process from a copy of
    os.environ, so each command goes through `env -i` with exactly git_env's environment, and
    names the repository explicitly (GIT_DIR)."""

    git_dir: str | None = None

    def execute(self, command, *args, env=None, **kwargs):
        if isinstance(command, str):
            raise TypeError("precompact runs git with an argument list, never through a shell")
        ours = {**({"GIT_DIR": self.git_dir} if self.git_dir else {}), **(env or {})}
        variables = [f"{k}={v}" for k, v in git_env.environment(**ours).items()]
        return super().execute(
            ["env", "-i", *variables, *git_env.argv(*command[1:], executable=command[0])], *args, **kwargs
        )


class _IsolatedRepo(git.Repo):
    GitCommandWrapperType = _IsolatedGit


def open_repository(path: Path) -> git.Repo:
    """The repository at `path` (a work tree, or a bare repository's directory); every git
    process it starts runs isolated."""
    try:
        repo = _IsolatedRepo(path)
        repo.git.git_dir = repo.git_dir  # type: ignore[attr-defined]  # read by _IsolatedGit.execute
        return repo
    except git.NoSuchPathError:
        raise GitStoreError(f"git repository {path} does not exist; set git.repository in .precompact.toml") from None
    except git.InvalidGitRepositoryError:
        raise GitStoreError(f"{path} is not a git repository; run `git init` there or set git.repository") from None


def commit_message(event: dict) -> str:
    tokens = event.get("tokens_used_this_session")
    remaining = event.get("tokens_remaining")
    window = tokens + remaining if isinstance(tokens, int) and isinstance(remaining, int) else "?"
    return (
        f"[{event['instance']}] PRECOMPACT: Savepoint before context compaction\n\n"
        f"Instance: {event['instance']}\n"
        f"Sequence: {event['sequence']}\n"
        f"Timestamp: {event['timestamp']}\n"
        f"Snapshot hash: {event['snapshot_hash']}\n"
        f"Tokens used: {tokens}/{window}\n"
    )


def commit_savepoint(repo: git.Repo, target: Target, logs: Path, event: dict) -> str:
    """Commits the snapshot named by `event` and the current index file onto the branch; returns
    the commit id. Only a file named as Layer 1 names snapshots, read from logs/ without
    following links, and holding the bytes whose hash the index recorded, is committed."""
    name, sequence = event.get("snapshot_file"), event.get("sequence")
    if not isinstance(name, str) or not isinstance(sequence, int) or not logs_dir.is_snapshot_name(name, sequence):
        raise GitStoreError(
            f"the index names {name!r} as savepoint {sequence}'s snapshot, which is not a name precompact writes; not committed"
        )
    index_name = f"logs/{savepoint_log.INDEX_NAME}"
    sha256 = event["snapshot_hash"].removeprefix("sha256:")
    blobs = {name: _stored_blob(repo, logs, name, sha256)}
    # The chunks it lists that the branch does not hold yet (each checked against its name).
    listed = _listed_chunks(logs, name, sha256)
    tip = _resolve(repo, target.ref)
    present = blob_ids_at(repo, [(tip, _chunk_path(ref.sha256)) for ref in listed]) if tip else [None] * len(listed)
    for ref, there in zip(listed, present):
        if there is None:
            blobs[_chunk_path(ref.sha256)] = _stored_blob(repo, logs, _chunk_path(ref.sha256), ref.sha256)
    blobs[index_name] = _stored_blob(repo, logs, index_name)
    environment = _identity(repo)
    for _ in range(REF_RETRIES):
        parent = _resolve(repo, target.ref)
        with _private_index(repo) as index:
            env = {**environment, "GIT_INDEX_FILE": str(index)}
            repo.git.read_tree(*([parent] if parent else ["--empty"]), env=env)
            with tempfile.TemporaryFile() as entries:
                entries.write("".join(f"100644 {blob}\t{name}\n" for name, blob in blobs.items()).encode())
                entries.seek(0)
                repo.git.update_index("--index-info", istream=entries, env=env)
            tree = repo.git.write_tree(env=env)
        parents = ["-p", parent] if parent else []
        commit = repo.git.commit_tree(tree, *parents, "-m", commit_message(event), env=environment)
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


def _stored_blob(repo: git.Repo, logs: Path, name: str, sha256: str | None = None) -> str:
    """Stores the file `name` (in logs/) as a blob, exactly its bytes (no filters) and only if
    they hash to `sha256` when given; returns the blob id."""
    fd = logs_dir.open_file(logs, logs_dir.within(name), os.O_RDONLY)
    with os.fdopen(fd, "rb") as f:
        if sha256 is not None:
            found = hashlib.file_digest(f, "sha256").hexdigest()
            if found != sha256:
                raise GitStoreError(
                    f"{name} does not hash to the sha256 the index recorded for it; not committed (run `precompact verify`)"
                )
            f.seek(0)
        return repo.git.hash_object("-w", "--no-filters", "--stdin", istream=f)


def _chunk_path(sha256: str) -> str:
    """Where a chunk is in the branch's tree: the one place that says so."""
    return f"logs/{chunks.CHUNKS_DIR}/{sha256}"


def _listed_chunks(logs: Path, name: str, sha256: str) -> list[chunks.Ref]:
    """The chunks the snapshot `name` lists, once its bytes hash to `sha256`."""
    data = logs_dir.read_bytes(logs, logs_dir.within(name))
    if hashlib.sha256(data).hexdigest() != sha256 or not chunks.is_chunked(data):
        return []  # _stored_blob has refused an altered snapshot already; format 1 lists none
    try:
        return chunks.refs(orjson.loads(data))
    except (orjson.JSONDecodeError, ValueError) as e:
        raise GitStoreError(f"{name} lists no usable chunks ({e}); not committed (run `precompact verify`)") from None


def chunk_at(repo: git.Repo, commit: str, ref: chunks.Ref) -> bytes | None:
    """The bytes of chunk `ref` at `commit` (unchecked), None when either is absent."""
    try:
        return file_at(repo, commit, _chunk_path(ref.sha256))
    except GitStoreError:
        return None


def chunk_blob_ids(repo: git.Repo, wanted: list[tuple[str, chunks.Ref]]) -> list[str | None]:
    """The blob id of each (commit, chunk), None where either is missing."""
    return blob_ids_at(repo, [(commit, _chunk_path(ref.sha256)) for commit, ref in wanted])


@contextlib.contextmanager
def _private_index(repo: git.Repo) -> Iterator[Path]:
    """An index file of our own for building the tree, in the repository's git directory rather
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


def _remove_stale_ref_lock(repo: git.Repo, ref: str) -> bool:
    lock = Path(repo.common_dir) / f"{ref}.lock"
    try:
        if time.time() - lock.stat().st_mtime < STALE_REF_LOCK_SECONDS:
            return False
        lock.unlink()
    except FileNotFoundError:
        return False
    return True


def push(repo: git.Repo, target: Target) -> None:
    """Pushes the branch; raises GitStoreError with git's reason on failure."""
    if target.remote not in [r.name for r in repo.remotes]:
        raise GitStoreError(f"remote {target.remote!r} does not exist in {target.repository}; add it or set git.remote")
    try:
        repo.git.push(
            "--quiet",
            "--no-verify",
            target.remote,
            f"{target.ref}:{target.ref}",
            kill_after_timeout=PUSH_TIMEOUT_SECONDS,
        )
    except git.GitCommandError as e:
        raise GitStoreError(f"push to {target.remote} failed: {_reason(e)}") from None


def fetch(repo: git.Repo, target: Target) -> None:
    """Fetches the savepoint branch into its remote-tracking ref; raises GitStoreError on failure."""
    if target.remote not in [r.name for r in repo.remotes]:
        raise GitStoreError(f"remote {target.remote!r} does not exist in {target.repository}; add it or set git.remote")
    refspec = f"+{target.ref}:refs/remotes/{target.remote}/{target.branch}"
    try:
        repo.git.fetch("--quiet", target.remote, refspec, kill_after_timeout=PUSH_TIMEOUT_SECONDS)
    except git.GitCommandError as e:
        raise GitStoreError(f"fetching {target.branch} from {target.remote} failed: {_reason(e)}") from None


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


def has_commit(repo: git.Repo, commit: str) -> bool:
    return _resolve(repo, commit) is not None


def commit_adding(repo: git.Repo, tip: str, path: str) -> str | None:
    """The commit in `tip`'s history that added `path`."""
    found = repo.git.log("--diff-filter=A", "--format=%H", "-1", tip, "--", path).strip()
    return found or None


def blob_id(repo: git.Repo, data: bytes) -> str:
    """The id `repo` gives a blob of these bytes."""
    return hashlib.new(object_format(repo), f"blob {len(data)}\0".encode() + data).hexdigest()


def object_format(repo: git.Repo) -> str:
    """ "sha1" or "sha256"."""
    return _object_format(str(repo.common_dir))


@functools.cache
def _object_format(common_dir: str) -> str:
    return str(_IsolatedRepo(common_dir).config_reader("repository").get_value("extensions", "objectformat", "sha1"))


def blob_ids_at(repo: git.Repo, wanted: list[tuple[str, str]]) -> list[str | None]:
    """The blob id of each (commit, path), None where either is missing, from one `git cat-file
    --batch-check` (GitPython parses every tree on the way: over a branch of N savepoints, each
    holding all earlier snapshots, that grows as N squared)."""
    askable = [i for i, (commit, path) in enumerate(wanted) if "\n" not in commit + path]
    ids: list[str | None] = [None] * len(wanted)
    if not askable:
        return ids
    with tempfile.TemporaryFile() as names:
        names.write("".join(f"{wanted[i][0]}:{wanted[i][1]}\n" for i in askable).encode())
        names.seek(0)
        answer = repo.git.cat_file("--batch-check=%(objectname) %(objecttype)", istream=names).splitlines()
    if len(answer) != len(askable):
        raise GitStoreError(f"git cat-file gave {len(answer)} answers to {len(askable)} questions in {repo.git_dir}")
    for i, line in zip(askable, answer):
        name, _, kind = line.rpartition(" ")
        ids[i] = name if kind == "blob" else None
    return ids


def branch_commits(repo: git.Repo, branch: str) -> set[str]:
    """Every commit in the history of `branch` (empty if it does not exist)."""
    try:
        return set(repo.git.rev_list(f"refs/heads/{branch}", "--").split())
    except git.GitCommandError:
        return set()


def file_at(repo: git.Repo, commit: str, path: str) -> bytes:
    """The bytes of `path` in `commit`; GitStoreError when either is absent."""
    try:
        return repo.git.cat_file("blob", f"{commit}:{path}", stdout_as_string=False)
    except git.GitCommandError:
        raise GitStoreError(f"commit {commit[:12]} or {path} in it is not in {repo.common_dir}") from None


def sync(repo: git.Repo, target: Target, logs: Path) -> list[str]:
    """Commits every savepoint not yet committed, in sequence order, then pushes once. Returns the
    problems met (each also appended to the index as LAYER_2_FAILED)."""
    problems = []
    savepoints = savepoint_log.savepoints(logs)
    for savepoint in savepoints:
        if savepoint.commit:
            continue
        try:
            commit = commit_savepoint(repo, target, logs, savepoint.created)
        except (GitStoreError, git.GitCommandError, OSError) as e:
            reason = e.stderr.strip() if isinstance(e, git.GitCommandError) else str(e)
            savepoint_log.mark(logs, savepoint, savepoint_log.Event.LAYER_2_FAILED, reason=reason)
            problems.append(reason)
            return problems  # later savepoints must not be committed ahead of this one
        savepoint_log.mark(logs, savepoint, savepoint_log.Event.LAYER_2_COMMITTED, commit=commit, branch=target.branch)
        savepoint.commit = commit
    unpushed = [s for s in savepoints if s.commit and s.layer_2 != savepoint_log.Layer2.PUSHED]
    if not unpushed:
        return problems
    try:
        push(repo, target)
    except GitStoreError as e:
        for savepoint in unpushed:
            savepoint_log.mark(
                logs, savepoint, savepoint_log.Event.LAYER_2_FAILED, reason=str(e), commit=savepoint.commit
            )
        problems.append(str(e))
        return problems
    for savepoint in unpushed:
        savepoint_log.mark(
            logs, savepoint, savepoint_log.Event.LAYER_2_PUSHED, commit=savepoint.commit, remote=target.remote
        )
    return problems


def _reason(error: git.GitCommandError) -> str:
    """Git's own complaint: a lock left by a crashed git (whose fix is in the message), else the
    last line."""
    detail = [line.strip() for line in (error.stderr or "").strip().splitlines()]
    for line in detail:
        if "Unable to create" in line and ".lock" in line:
            complaint = line.split("error: ", 1)[-1].removeprefix("fatal: ").rstrip(".")
            return f"{complaint}; if no git command is running there, a crashed one left it: delete that file"
    return detail[-1].removeprefix("stderr: ").strip(" '") if detail else f"git exited {error.status}"


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


def exclude_logs(repo: git.Repo, pattern: str = "logs/precompact-*") -> bool:
    """Adds `pattern` to `.git/info/exclude` once; returns whether it was added."""
    exclude = Path(repo.git_dir) / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    existing = exclude.read_text().splitlines() if exclude.exists() else []
    if pattern in existing:
        return False
    with exclude.open("a") as f:
        if existing and not exclude.read_text().endswith("\n"):
            f.write("\n")
        f.write(pattern + "\n")
    return True
