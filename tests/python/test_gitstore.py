"""Layer 2 against real repositories: a user's repo mid-work and a bare remote."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from precompact.boundary import git_exclude, quoting
from precompact.local import savepoint_log, snapshot
from precompact.local.snapshot import Session, Settings
from precompact.remote import encryption as remote_crypto
from precompact.remote import gitstore
from precompact.remote.encryption import CLEAR, Keys
from precompact.verifier import team
from support.commands import run_git
from support.projects import store_git

BRANCH = "precompact/savepoints"


def user_view(project: Path) -> tuple[str, str, str, str]:
    return (
        run_git(project, "rev-parse", "HEAD"),
        run_git(project, "symbolic-ref", "HEAD"),
        run_git(project, "diff", "--cached", "--name-status"),
        run_git(project, "status", "--porcelain", "--untracked-files=no"),
    )


def savepoint(project: Path) -> snapshot.WrittenSnapshot:
    settings = Settings(instance="Gabriel #215", logs=project / "logs")
    return snapshot.create_savepoint(settings, Session("s", None, str(project)), datetime.now(UTC))


def target(project: Path, remote: str = "origin") -> gitstore.Target:
    return gitstore.Target(project, remote, BRANCH)


def _own(saved: savepoint_log.Savepoint) -> bool:
    """The savepoints these tests make are this machine's own (Layer 1's default rule)."""
    return saved.written_here


def synced(repo, target: gitstore.Target, logs: Path) -> list[str]:
    """Layer 2 as the flush runs it: each outcome recorded in the index; the problems met."""
    return savepoint_log.record_outcomes(logs, gitstore.sync(repo, target, logs, _own))


def test_commits_and_pushes_without_touching_the_users_work(workspace):
    project, remote = workspace
    repo = gitstore.open_repository(target(project))
    logs_kept = git_exclude.Kept("logs/precompact-*", "logs/precompact-savepoint.jsonl")
    assert git_exclude.keep_out(project, (logs_kept,)).added == ("/logs/precompact-*",)
    assert git_exclude.keep_out(project, (logs_kept,)).added == (), "idempotent"
    before = user_view(project)

    first = savepoint(project)
    second = savepoint(project)
    assert synced(repo, target(project), project / "logs") == []

    assert user_view(project) == before, "HEAD, branch, index and working tree unchanged"
    assert "logs" not in run_git(project, "status", "--porcelain"), "logs are kept out of git status"
    states = savepoint_log.fold(savepoint_log.read(project / "logs").events)
    assert [s.layer_2 for s in states] == ["PUSHED", "PUSHED"]
    first_commit, second_commit = states[0].commit, states[1].commit
    assert store_git(project, "rev-parse", f"{second_commit}^").strip() == first_commit
    assert run_git(remote, "rev-parse", f"refs/heads/{BRANCH}").strip() == second_commit
    # The branch and its objects are precompact's own: the project's repository holds neither.
    assert run_git(project, "for-each-ref", "refs/heads/precompact", "refs/remotes/origin") == ""
    absent = subprocess.run(["git", "cat-file", "-e", second_commit], cwd=project, capture_output=True, check=False)
    assert absent.returncode != 0, "the savepoint commit is not in the project's object store"

    stored = gitstore.file_at(repo, first_commit, first.event["snapshot_file"])
    assert hashlib.sha256(stored).hexdigest() == first.sha256
    index_in_commit = gitstore.file_at(repo, second_commit, "logs/precompact-savepoint.jsonl")
    assert f"sha256:{second.sha256}".encode() in index_in_commit
    message = store_git(project, "log", "-1", "--format=%B", second_commit)
    assert message.startswith("[Gabriel #215] PRECOMPACT: Savepoint before context compaction\n")
    assert f"Snapshot hash: sha256:{second.sha256}" in message
    assert "Tokens used: 0/200000" in message

    assert synced(repo, target(project), project / "logs") == [], "nothing left to do"
    assert len(savepoint_log.read(project / "logs").events) == 6


def test_a_private_index_left_by_a_killed_process_is_removed(workspace):
    project, _ = workspace
    repo = gitstore.open_repository(target(project))
    git_dir = Path(repo.git_dir)
    finished = subprocess.Popen(["true"])
    finished.wait()
    left = [git_dir / f"precompact-index-{finished.pid}", git_dir / f"precompact-index-{finished.pid}.lock"]
    in_use = git_dir / f"precompact-index-{os.getppid()}"  # a running process's
    for file in [*left, in_use]:
        file.write_bytes(b"an index")
    savepoint(project)
    assert synced(repo, target(project), project / "logs") == []
    assert sorted(git_dir.glob("precompact-index-*")) == [in_use]


def test_failed_push_is_recorded_then_retried(workspace, tmp_path):
    project, remote = workspace
    repo = gitstore.open_repository(target(project))
    run_git(project, "remote", "set-url", "origin", str(tmp_path / "missing.git"))
    savepoint(project)
    problems = synced(repo, target(project), project / "logs")
    assert len(problems) == 1 and problems[0].startswith("push to origin failed:")
    [state] = savepoint_log.fold(savepoint_log.read(project / "logs").events)
    assert state.commit and state.layer_2 == "FAILED"

    run_git(project, "remote", "set-url", "origin", str(remote))
    assert synced(repo, target(project), project / "logs") == []
    [state] = savepoint_log.fold(savepoint_log.read(project / "logs").events)
    assert state.layer_2 == "PUSHED"
    assert run_git(remote, "rev-parse", f"refs/heads/{BRANCH}").strip() == state.commit


def test_unknown_remote_and_non_repository_are_named(workspace, tmp_path):
    project, _ = workspace
    repo = gitstore.open_repository(target(project))
    savepoint(project)
    problems = synced(repo, target(project, remote="nowhere"), project / "logs")
    assert problems == [f"remote nowhere does not exist in {project}; add it or set git.remote"]
    with pytest.raises(gitstore.GitStoreError, match="is not a git repository"):
        gitstore.open_repository(target(tmp_path))


def test_the_paths_and_names_a_layer_2_error_says_are_quoted_once(workspace, tmp_path):
    """git.remote and git.repository are the configuration's: one holding a line break or an
    escape is said as one quoted literal (quoting.path), never a line of its own; a plain one
    bare, as before."""
    project, _ = workspace
    repo = gitstore.open_repository(target(project))
    savepoint(project)
    forged = "nowhere\n\x1b[2J✓ Layer 2: up to date"
    problems = synced(repo, target(project, remote=forged), project / "logs")
    assert problems == [f"remote {quoting.inline(forged)} does not exist in {project}; add it or set git.remote"]
    odd = tmp_path / "not a\nrepository"
    odd.mkdir()
    with pytest.raises(gitstore.GitStoreError) as refused:
        gitstore.open_repository(target(odd))
    assert (
        str(refused.value)
        == f"{quoting.inline(str(odd))} is not a git repository; run `git init` there or set git.repository"
    )
    with pytest.raises(gitstore.GitStoreError, match="does not exist"):
        gitstore.open_repository(target(tmp_path / "nope"))


def test_works_on_a_detached_head_and_without_a_git_identity(workspace, monkeypatch):
    project, _ = workspace
    run_git(project, "config", "--unset", "user.name")
    run_git(project, "config", "--unset", "user.email")
    monkeypatch.setenv("HOME", str(project.parent))  # no global identity either
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    run_git(project, "checkout", "-q", "--detach", "HEAD")
    repo = gitstore.open_repository(target(project))
    savepoint(project)
    assert synced(repo, target(project), project / "logs") == []
    assert store_git(project, "log", "-1", "--format=%an", BRANCH).strip() == "precompact"
    assert run_git(project, "rev-parse", "--abbrev-ref", "HEAD").strip() == "HEAD", "still detached"


def test_sha256_object_format_repository(tmp_path):
    project = tmp_path / "sha256"
    project.mkdir()
    run_git(project, "init", "-q", "--object-format=sha256", "-b", "main")
    remote = tmp_path / "remote256.git"
    run_git(tmp_path, "init", "-q", "--bare", "--object-format=sha256", str(remote))
    run_git(project, "remote", "add", "origin", str(remote))
    repo = gitstore.open_repository(target(project))
    written = savepoint(project)
    assert synced(repo, target(project), project / "logs") == []
    [state] = savepoint_log.fold(savepoint_log.read(project / "logs").events)
    assert len(state.commit) == 64 and state.layer_2 == "PUSHED"
    stored = gitstore.file_at(repo, state.commit, written.event["snapshot_file"])
    assert hashlib.sha256(stored).hexdigest() == written.sha256


def test_blob_ids_of_many_commits_and_paths_in_one_question(workspace):
    project, _ = workspace
    repo = gitstore.open_repository(target(project))
    first, second = savepoint(project), savepoint(project)
    assert synced(repo, target(project), project / "logs") == []
    c1, c2 = (s.commit for s in savepoint_log.fold(savepoint_log.read(project / "logs").events))
    name1, name2 = first.event["snapshot_file"], second.event["snapshot_file"]
    wanted = [(c1, name1), (c2, name1), (c2, name2), (c1, name2), ("0" * 40, name1), (c2, "logs\nx"), (c2, "logs")]
    blob1, blob2 = (store_git(project, "rev-parse", f"{c2}:{name}").strip() for name in (name1, name2))
    assert gitstore.blob_ids_at(repo, wanted) == [blob1, blob1, blob2, None, None, None, None]
    assert gitstore.blob_ids_at(repo, []) == []


def test_a_branch_file_over_its_kinds_bound_is_never_read_and_says_its_size(workspace, monkeypatch):
    """docs/security.md: each kind of branch file has its bound, checked against the size git
    states before any byte is read; over it, the file is an Oversized error in its place (the
    others still read), and its blob is never asked of `cat-file --batch`."""
    project, _ = workspace
    repo = gitstore.open_repository(target(project))
    first = savepoint(project)
    assert synced(repo, target(project), project / "logs") == []
    [commit] = (s.commit for s in savepoint_log.fold(savepoint_log.read(project / "logs").events))
    name, index = first.event["snapshot_file"], f"logs/{savepoint_log.INDEX_NAME}"
    [(blob, size), _] = gitstore.blobs_at(repo, [(commit, name), (commit, index)])
    assert size == len((project / name).read_bytes())
    asked: list[str] = []
    reading = gitstore._blobs
    monkeypatch.setattr(gitstore, "_blobs", lambda repo, ids: (asked.extend(ids), reading(repo, ids))[1])
    monkeypatch.setattr(gitstore, "SNAPSHOT_LIMIT", size - 1)
    over, read = gitstore.files_at(repo, [(commit, name), (commit, index)])
    assert isinstance(over, gitstore.Oversized) and isinstance(read, bytes)
    shown = f"{name.removeprefix('logs/')} at commit {commit[:12]}"
    assert str(over) == f"snapshot {shown} is {over.measure}: not read", over
    assert over.measure.endswith(f"MB, over the {gitstore._megabytes(size - 1)} MB precompact writes")
    assert blob not in asked
    monkeypatch.setattr(gitstore, "SNAPSHOT_LIMIT", size)
    assert gitstore.file_at(repo, commit, name) == (project / name).read_bytes()
    assert gitstore.read_limit(f"{gitstore.CHUNKS_DIR}{'a' * 64}") == (f"chunk {'a' * 64}", gitstore.CHUNK_LIMIT)
    assert gitstore.read_limit(index) == ("its index copy", gitstore.INDEX_COPY_LIMIT)
    assert gitstore.read_limit("logs/anything-else")[1] == gitstore.NAMING_KEY_BLOB_LIMIT


def test_the_commits_adding_snapshots_are_read_newest_first_up_to_their_bound(workspace, monkeypatch):
    """A history with more commits than an index copy could list savepoints is read no further
    than that many, the newest first (the bound cut to 1 here), and the first commit not read is
    named, never passed over."""
    project, _ = workspace
    repo = gitstore.open_repository(target(project))
    first, second = savepoint(project), savepoint(project)
    assert synced(repo, target(project), project / "logs") == []
    c1, c2 = (s.commit for s in savepoint_log.fold(savepoint_log.read(project / "logs").events))
    tip = store_git(project, "rev-parse", f"refs/heads/{BRANCH}").strip()
    names = (first.event["snapshot_file"], second.event["snapshot_file"])
    whole = gitstore.commits_adding_snapshots(repo, tip)
    assert (whole.commits, whole.unread) == ({names[1]: c2, names[0]: c1}, None)
    assert gitstore.SNAPSHOT_COMMITS_LIMIT == 131_072  # the figure docs/security.md states
    monkeypatch.setattr(gitstore, "SNAPSHOT_COMMITS_LIMIT", 1)
    cut = gitstore.commits_adding_snapshots(repo, tip)
    assert (cut.commits, cut.unread, cut.why_unread) == ({names[1]: c2}, c1, "over 1 commits")


def _history(tmp_path: Path, commits: str) -> tuple[object, dict[str, str]]:
    """A bare repository from a `git fast-import` stream of `commits` (marks :1 an empty blob),
    and each mark's commit id by its `mark :N` name."""
    remote = tmp_path / "r.git"
    run_git(tmp_path, "init", "-q", "--bare", str(remote))
    stream = "blob\nmark :1\ndata 0\n\n" + commits
    subprocess.run(["git", "-C", str(remote), "fast-import", "--quiet"], input=stream.encode(), check=True)
    marks = {}
    for mark in ("a", "side", "main", "merge", "gone"):
        found = subprocess.run(
            ["git", "-C", str(remote), "rev-parse", "--verify", "-q", f"refs/tags/{mark}"],
            capture_output=True,
            text=True,
            check=False,
        )
        if found.returncode == 0:
            marks[mark] = found.stdout.strip()
    return gitstore.git.Repo(str(remote)), marks


def _commit(ref: str, second: int, *lines: str) -> str:
    body = "".join(f"{line}\n" for line in lines)
    return f"commit {ref}\ncommitter a <a@b> {second} +0000\ndata 1\nx\n{body}\n"


def test_the_commits_adding_snapshots_follow_every_parent_of_a_merge_from_the_root(tmp_path):
    """The first commit that added each snapshot file, clear or encrypted: the root commit's own
    files, a side branch's behind a merge, one a later commit deleted, and never a file outside
    logs/precompact-saves/."""
    saves = "logs/precompact-saves"
    stream = (
        _commit("refs/tags/a", 1, f"M 100644 :1 {saves}/a.json")
        + _commit("refs/tags/side", 2, "from refs/tags/a", f"M 100644 :1 {saves}/side.json.age")
        + _commit("refs/tags/main", 3, "from refs/tags/a", f"M 100644 :1 {saves}/main.json", "M 100644 :1 logs/x.json")
        + _commit(
            "refs/tags/merge", 4, "from refs/tags/main", "merge refs/tags/side", f"M 100644 :1 {saves}/side.json.age"
        )
        + _commit("refs/tags/gone", 5, "from refs/tags/merge", f"D {saves}/main.json")
    )
    repo, marks = _history(tmp_path, stream)
    found = gitstore.commits_adding_snapshots(repo, marks["gone"])
    assert found.unread is None
    assert found.commits == {
        f"{saves}/main.json": marks["main"],
        f"{saves}/side.json": marks["side"],
        f"{saves}/a.json": marks["a"],
    }


def test_the_commits_adding_snapshots_stop_where_the_trees_git_compares_reach_their_bound(tmp_path, monkeypatch):
    """The snapshots directory's tree holds every file, so each commit adding one makes git
    compare a bigger tree: the commits are read newest first only while the trees compared (a
    commit's along logs/precompact-saves/ and its parent's) stay within TREES_READ_LIMIT, and the
    first commit beyond is named unread, with why."""
    saves = "logs/precompact-saves"
    stream = "".join(_commit("refs/heads/b", n + 1, f"M 100644 :1 {saves}/s{n}.json") for n in range(6))
    repo, _ = _history(tmp_path, stream)
    commits = run_git(tmp_path / "r.git", "rev-list", "refs/heads/b").split()  # newest first
    trees = [
        sum(int(run_git(tmp_path / "r.git", "cat-file", "-s", f"{commit}:{path}")) for path in ("", "logs", saves))
        for commit in commits
    ]
    # The two newest commits' trees and their parents', a byte short of the third's.
    monkeypatch.setattr(gitstore, "TREES_READ_LIMIT", trees[0] + 2 * trees[1] + trees[2] + trees[2] + trees[3] - 1)
    found = gitstore.commits_adding_snapshots(repo, commits[0])
    assert found.commits == {f"{saves}/s5.json": commits[0], f"{saves}/s4.json": commits[1]}
    assert found.unread == commits[2]
    assert (
        found.why_unread
        == f"the trees git compares for the newer ones reach {gitstore._megabytes(gitstore.TREES_READ_LIMIT)} MB"
    )
    monkeypatch.setattr(gitstore, "TREES_READ_LIMIT", sum(trees) * 2)
    assert gitstore.commits_adding_snapshots(repo, commits[0]).unread is None


def test_a_tracking_ref_lock_left_by_a_killed_fetch_is_one_line_then_removed_when_stale(workspace):
    # A flush killed mid-fetch (its git child with it) leaves refs/remotes/…/<branch>.lock in
    # precompact's git directory; the next fetch (verify's, flush's) said a GitCommandError traceback.
    project, _ = workspace
    repo = gitstore.open_repository(target(project))
    savepoint(project)
    assert synced(repo, target(project), project / "logs") == []
    lock = Path(repo.common_dir) / f"refs/remotes/origin/{target(project).branch}.lock"
    lock.write_bytes(b"")
    with pytest.raises(gitstore.GitStoreError) as refused:
        gitstore.fetch(repo, target(project))
    assert "stayed locked" in str(refused.value) and "\n" not in str(refused.value)
    assert lock.exists(), "a fresh lock may be another precompact's: left alone"
    old = lock.stat().st_mtime - gitstore.STALE_REF_LOCK_SECONDS - 1
    os.utime(lock, (old, old))
    assert gitstore.fetch(repo, target(project)) == target(project).branch
    assert not lock.exists()


# A snapshot's file is named by its second and sequence (logs_dir.snapshot_name): two savepoints
# N of one instance written in one second share it (another machine of the instance, or this
# one after logs/ was lost, numbering from 1 again).
_SAME_SECOND = datetime(2026, 12, 1, 5, 27, 41, tzinfo=UTC)


@pytest.fixture(params=["clear", "encrypted"])
def keys(request, tmp_path) -> Keys:
    if request.param == "clear":
        return CLEAR
    identity = tmp_path / "identity.txt"
    remote_crypto.generate_identity(identity)
    return Keys(tuple(remote_crypto.public_keys(identity.read_bytes(), "identity")), identity)


def _saved_at(project: Path, session: str, when: datetime) -> snapshot.WrittenSnapshot:
    settings = Settings(instance="Gabriel #215", logs=project / "logs")
    return snapshot.create_savepoint(settings, Session(session, None, str(project)), when)


def test_a_savepoint_named_as_the_branchs_is_never_committed_over_it(workspace, keys):
    """logs/ lost, then savepoint 1 written again in the second the branch's savepoint 1 was:
    the same file name, other content. Layer 2 counts the branch's as lacking and commits
    nothing over it (the tip's tree would lose the remote's snapshot, its index copy the line)."""
    project, remote = workspace
    own = gitstore.Target(project, "origin", BRANCH, keys)
    repo = gitstore.open_repository(own)
    theirs = _saved_at(project, "first machine", _SAME_SECOND)
    assert synced(repo, own, project / "logs") == []
    name = theirs.path.relative_to(project).as_posix() + (remote_crypto.SUFFIX if keys.encrypting else "")
    held = run_git(remote, "rev-parse", f"{BRANCH}:{name}").strip()

    shutil.rmtree(project / "logs")
    mine = _saved_at(project, "second machine", _SAME_SECOND)
    assert mine.path == theirs.path and mine.sha256 != theirs.sha256
    problems = synced(repo, own, project / "logs")
    assert problems == [
        f"branch {BRANCH}: "
        + savepoint_log.lacking_notice(1, savepoint_log.savepoints(project / "logs", "Gabriel #215"))
    ], problems
    assert (
        "the remote holds 1 savepoint(s) that logs/ lacks, and logs/ holds 1 that the remote lacks (#1)" in problems[0]
    )
    assert run_git(remote, "rev-parse", f"{BRANCH}:{name}").strip() == held
    assert run_git(project, "--git-dir", str(repo.git_dir), "rev-parse", f"{BRANCH}:{name}").strip() == held
    [state] = savepoint_log.savepoints(project / "logs")
    assert state.commit is None and state.layer_2 == savepoint_log.Layer2.FAILED


def test_a_savepoint_committed_before_a_crash_kept_its_record_is_committed_on_not_called_lacking(workspace, keys):
    """The crash between Layer 2's commit and its record: the branch holds this savepoint's own
    snapshot under its name, which hides nothing; the next sync goes on from there."""
    project, remote = workspace
    own = gitstore.Target(project, "origin", BRANCH, keys)
    repo = gitstore.open_repository(own)
    _saved_at(project, "s", _SAME_SECOND)
    assert synced(repo, own, project / "logs") == []
    _saved_at(project, "s", _SAME_SECOND)
    [_, second] = savepoint_log.savepoints(project / "logs")
    gitstore.commit_savepoint(repo, own, project / "logs", second)  # then killed: nothing recorded
    assert synced(repo, own, project / "logs") == []
    states = savepoint_log.savepoints(project / "logs")
    assert [s.layer_2 for s in states] == [savepoint_log.Layer2.PUSHED] * 2
    assert run_git(remote, "rev-parse", BRANCH).strip() == states[-1].commit


def _pushed_over(tmp_path: Path, remote: Path, files: dict[str, bytes]) -> str:
    """A commit on top of the remote's branch whose tree holds `files` (tree paths) instead of
    both forms of each: someone who can push (no force) replaced them. Returns the commit."""
    work = tmp_path / "pusher"
    shutil.rmtree(work, ignore_errors=True)
    run_git(tmp_path, "clone", "-q", "-b", BRANCH, str(remote), str(work))
    for path, data in files.items():
        for form in (path.removesuffix(remote_crypto.SUFFIX), path.removesuffix(remote_crypto.SUFFIX) + ".age"):
            (work / form).unlink(missing_ok=True)
        (work / path).write_bytes(data)
    run_git(work, "add", "-A")
    run_git(work, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", "replaced")
    run_git(work, "push", "-q", "origin", BRANCH)
    return run_git(work, "rev-parse", "HEAD").strip()


def test_a_committed_snapshot_altered_on_the_branch_is_put_back_by_the_next_savepoint_not_called_lacking(
    workspace, keys, tmp_path
):
    """review16a F2: someone who can push flips one byte of savepoint 1's snapshot at the tip,
    and the branch here is taken up from the remote (a new machine, `restore`). The copy is
    ALTERED, not lacking (logs/ records savepoint 1 committed in that history: nothing of
    precompact's replaces a committed snapshot), so the next savepoint is committed, with logs/'s
    own bytes of savepoint 1 back over the altered copy, and pushed; before, every later
    savepoint was refused as two chains, for good."""
    project, remote = workspace
    own = gitstore.Target(project, "origin", BRANCH, keys)
    repo = gitstore.open_repository(own)
    first = savepoint(project)
    assert synced(repo, own, project / "logs") == []
    name = first.path.relative_to(project).as_posix()
    form = name + (remote_crypto.SUFFIX if keys.encrypting else "")
    genuine = run_git(remote, "rev-parse", f"{BRANCH}:{form}").strip()
    altered = bytearray(first.path.read_bytes())
    altered[100] ^= 0x01
    tip = _pushed_over(tmp_path, remote, {name: bytes(altered)})
    gitstore.fetch(repo, own)
    repo.git.update_ref(own.ref, tip)  # taken up from the remote, as adopt_remote_branch does

    found = gitstore.branch_snapshots(repo, own, savepoint_log.savepoints(project / "logs"))
    assert not found.lacking and name not in found.held, found
    assert found.altered == {name}, found
    savepoint(project)
    assert synced(repo, own, project / "logs") == []
    states = savepoint_log.savepoints(project / "logs")
    assert [s.layer_2 for s in states] == [savepoint_log.Layer2.PUSHED] * 2
    assert run_git(remote, "rev-parse", BRANCH).strip() == states[-1].commit
    assert run_git(remote, "rev-parse", f"{BRANCH}:{form}").strip() == genuine
    listed = run_git(remote, "ls-tree", "-r", "--name-only", BRANCH).splitlines()
    assert (name in listed) == (not keys.encrypting), listed  # the altered clear copy is gone
    after = gitstore.branch_snapshots(repo, own, savepoint_log.savepoints(project / "logs"))
    assert not after.altered and not after.lacking and name in after.held, after


def test_a_same_named_snapshot_of_another_chain_is_still_lacking(workspace, tmp_path):
    """The rule above holds only for a savepoint logs/ committed in the branch's history: with
    logs/ lost and savepoint 1 written again under the branch's file name (not committed), the
    branch's own savepoint 1 is lacking, as before (`_sync_branch` commits nothing over it)."""
    project, _ = workspace
    own = gitstore.Target(project, "origin", BRANCH)
    repo = gitstore.open_repository(own)
    theirs = _saved_at(project, "first machine", _SAME_SECOND)
    assert synced(repo, own, project / "logs") == []
    shutil.rmtree(project / "logs")
    mine = _saved_at(project, "second machine", _SAME_SECOND)
    assert mine.path == theirs.path
    name = mine.path.relative_to(project).as_posix()
    found = gitstore.branch_snapshots(repo, own, savepoint_log.savepoints(project / "logs"))
    assert found.lacking == {name}, found
    assert not found.altered, found


class _CountedReads:
    """`repo.git.cat_file` with the bytes every `--batch` read takes from git counted."""

    def __init__(self, repo):
        self.bytes = 0
        self._cat_file = repo.git.cat_file

    def __call__(self, *args, **kwargs):
        done = self._cat_file(*args, **kwargs)
        if "--batch" not in args or not kwargs.get("as_process"):
            return done
        counted = self

        class Stream:
            def readline(self):
                return done.stdout.readline()

            def read(self, size=-1):
                data = done.stdout.read(size)
                counted.bytes += len(data)
                return data

        class Process:
            stdout = Stream()

            def wait(self):
                return done.wait()

        return Process()


def _read_once(data: bytes) -> range:
    """What reading `data` once through `git cat-file --batch` takes: its bytes, and the newline
    git writes after them when the reader goes on."""
    return range(len(data), len(data) + 2) if data else range(1)


def test_a_pushed_snapshot_of_another_size_is_never_read(workspace, keys, tmp_path, monkeypatch):
    """review16a F3: someone who can push replaces each savepoint's snapshot, both forms, by a
    32 MiB blob (zeros: a cheap push). Before, every status, verify and flush read each whole
    (up to SNAPSHOT_LIMIT a file) and hashed it; now a blob whose size (as git states it) is not
    one the savepoint's content can have is other content, nothing of it read. One replaced by
    bytes of the snapshot's own size is read once, however many tips hold it, and hashed
    without being held."""
    project, remote = workspace
    own = gitstore.Target(project, "origin", BRANCH, keys)
    repo = gitstore.open_repository(own)
    made = [savepoint(project) for _ in range(3)]
    assert synced(repo, own, project / "logs") == []
    names = [m.path.relative_to(project).as_posix() for m in made]
    zeros = bytes(32 << 20)
    suffix = remote_crypto.SUFFIX if keys.encrypting else ""
    same_size = bytes(len(made[2].path.read_bytes()) if not keys.encrypting else 0)
    replaced = {names[0]: zeros, names[1] + suffix: zeros}
    if not keys.encrypting:
        replaced[names[2]] = same_size
    tip = _pushed_over(tmp_path, remote, replaced)
    gitstore.fetch(repo, own)
    repo.git.update_ref(own.ref, tip)
    reads = _CountedReads(repo)
    monkeypatch.setattr(repo.git, "cat_file", reads)
    found = gitstore.branch_snapshots(repo, own, savepoint_log.savepoints(project / "logs"))
    assert reads.bytes in _read_once(same_size), reads.bytes
    assert found.altered == set(replaced) - {names[1] + suffix} | {names[1]} and not found.lacking, found
    # `flush` and `status --remote` name what the tip holds altered, reading no more.
    reads.bytes = 0
    states = savepoint_log.savepoints(project / "logs")
    said = team.altered_at_tip(repo, own, tip, [(s, str(s.commit)) for s in states])
    assert reads.bytes in _read_once(same_size), reads.bytes
    for n in (1, 2):
        assert f"savepoint {n}'s snapshot ({quoting.path(names[n - 1])}) is {32 << 20} bytes, a size" in str(said), said
