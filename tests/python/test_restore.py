"""A root that travels with the user (issue #38): each savepoint's index line is signed with the
user's signing key before Layer 2 commits it, so that the savepoints on the git remote verify on
any machine that has the public key, chain off; `precompact restore` rebuilds logs/ from the
remote, checking every signature, hash, chunk and link; and no command says `✓ 0 savepoint(s)`
while the remote holds savepoints logs/ lacks. Everything through the installed binary."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from support import transcript_gen
from support.commands import PRECOMPACT, RUN_SECONDS, invoke, precompact, run_git
from support.projects import Project, new_project, pushed_branch

LACKING = "the remote holds 3 savepoint(s) that logs/ lacks: run `precompact restore`"


def _saved(project: Project, tmp_path: Path, count: int, name: str = "session.jsonl") -> list[dict]:
    """`count` savepoints of one growing session, each committed, signed and pushed."""
    for n in range(count):
        transcript = transcript_gen.generate(
            tmp_path / name, target_bytes=20_000 * (n + 1), project=project.path, planted=[f"marker{n}"]
        )
        done = precompact(project.path, "savepoint", "--transcript", str(transcript.path), "--json")
        assert done.returncode == 3, done.stderr  # saved, the chain layer off
        assert json.loads(done.stdout)["layer_2"]["state"] == "done", done.stdout
    return _status(project.path)["savepoints"]


def _status(cwd: Path, home: dict | None = None) -> dict:
    done = precompact(cwd, "status", "--json", env=home)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _index(logs: Path) -> list[dict]:
    return [json.loads(line) for line in (logs / "precompact-savepoint.jsonl").read_text().splitlines() if line]


@pytest.fixture
def project(tmp_path) -> Project:
    """A git-only project (chain off, encrypted remote) with three pushed savepoints."""
    made = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    _saved(made, tmp_path, 3)
    return made


def test_the_worker_signs_each_line_before_it_is_committed_and_the_remote_copy_carries_it(project):
    signed = [e for e in _index(project.logs) if e["event"] == "SAVEPOINT_SIGNED"]
    assert [e["sequence"] for e in signed] == [1, 2, 3]
    assert {e["signer"] for e in signed} == {str(project.authority().pubkey())}
    # The third savepoint's commit holds an index copy that already signs it.
    shutil.rmtree(project.logs)
    done = precompact(project.path, "resurrect", "--sequence", "3", "--json")
    assert done.returncode == 0, done.stderr
    checks = json.loads(done.stdout)["checks"]
    assert checks["integrity"]["status"] == "verified", checks
    assert f"signed by {project.authority().pubkey()}" in checks["integrity"]["detail"]


def test_lost_logs_every_command_says_so_and_restore_brings_them_back(project):
    before = (project.logs / "precompact-savepoint.jsonl").read_bytes()
    shutil.rmtree(project.logs)

    status = precompact(project.path, "status")
    assert status.returncode == 0 and LACKING in status.stdout, status.stdout
    assert _status(project.path)["lacking_from_logs"] == 3
    verify = precompact(project.path, "verify")
    assert verify.returncode == 4, verify.stdout  # not verified: nothing contradicts a root
    assert (
        "✓" not in verify.stdout
        and LACKING in verify.stdout
        and "not in logs/: run `precompact restore`" in verify.stdout
    )
    recall = precompact(project.path, "recall", "marker1")
    assert LACKING in recall.stdout, recall.stdout
    uncompact = precompact(project.path, "uncompact", "--sequence", "2", home=project.path.parent / "home")
    assert uncompact.returncode == 0 and LACKING in uncompact.stderr, uncompact.stderr

    restored = precompact(project.path, "restore", "--json")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    document = json.loads(restored.stdout)
    assert [s["sequence"] for s in document["restored"]] == [1, 2, 3]
    assert document["complete"] and document["signer"] == str(project.authority().pubkey())
    assert "checked 3/3 savepoint(s)" in restored.stderr

    verify = precompact(project.path, "verify")
    assert verify.returncode == 0 and verify.stdout.startswith("✓ 3 savepoint(s) verified"), verify.stdout
    assert LACKING not in precompact(project.path, "status").stdout
    assert "marker1" in precompact(project.path, "recall", "marker1").stdout
    # Idempotent: a second restore writes nothing.
    again = json.loads(precompact(project.path, "restore", "--json").stdout)
    assert (again["restored"], again["present"], again["complete"]) == ([], 3, True)
    # Layer 2 does not commit the restored savepoints again.
    assert precompact(project.path, "flush").returncode == 0
    commits = run_git(project.remote, "rev-list", "--count", project.branch).strip()
    assert commits == "3"
    created = [line for line in before.splitlines() if b'"SAVEPOINT_CREATED"' in line]
    assert created == [
        line for line in (project.logs / "precompact-savepoint.jsonl").read_bytes().splitlines() if b"CREATED" in line
    ]


def _second_machine(project: Project, tmp_path: Path) -> tuple[Path, dict]:
    """A fresh clone of the remote and a HOME of its own that holds only the keypair and the age
    identity (copied): the configuration comes with the project, approved there."""
    home = tmp_path / "home2"
    keys = home / ".config" / "solana"
    keys.mkdir(parents=True)
    shutil.copy(project.keypair_file, keys / "id.json")
    shutil.copy(project.keypair_file.parent / "precompact-age-identity.txt", keys / "precompact-age-identity.txt")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(project.remote), str(clone)], check=True, capture_output=True)
    shutil.copy(project.path / ".precompact.toml", clone / ".precompact.toml")
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),  # its own project registry, as a machine has
        "PRECOMPACT_KEYPAIR": str(keys / "id.json"),
        "PRECOMPACT_IDENTITY": str(keys / "precompact-age-identity.txt"),
    }
    done = precompact(clone, "trust", "--yes", env=env)
    assert done.returncode == 0, done.stderr
    return clone, env


def test_a_second_machine_with_only_the_remote_and_the_key_restores_and_verifies(project, tmp_path, monkeypatch):
    clone, env = _second_machine(project, tmp_path)
    status = precompact(clone, "status", env=env)
    assert LACKING in status.stdout, status.stdout
    found = precompact(clone, "uncompact", "--sequence", "2", "--json", env=env)
    assert found.returncode == 0, found.stdout + found.stderr  # verified by the signature alone

    restored = precompact(clone, "restore", env=env)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert restored.stdout.startswith("restored 3 savepoint(s)"), restored.stdout
    verify = precompact(clone, "verify", env=env)
    assert verify.returncode == 0 and verify.stdout.startswith("✓ 3 savepoint(s) verified"), verify.stdout
    assert "marker2" in precompact(clone, "recall", "marker2", env=env).stdout
    # The restored lines keep the first machine's tag: this machine does not claim it wrote them.
    assert all(e.get("machine_tag") for e in _index(clone / "logs") if e["event"] == "SAVEPOINT_CREATED")
    # A session starting there is briefed from the restored logs/ alone (no git, no network).
    from precompact import api
    from precompact.config import settings

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    brief = api.session_start_brief(settings.load(clone), 3, None)
    [proof] = [line for line in brief.splitlines() if line.startswith("Proof: savepoint 3")]
    assert "integrity ✓ verified" in proof, proof


def test_without_the_signing_key_a_second_machine_verifies_nothing(project, tmp_path):
    clone, env = _second_machine(project, tmp_path)
    Path(env["PRECOMPACT_KEYPAIR"]).unlink()
    refused = precompact(clone, "restore", env=env)
    assert refused.returncode == 1
    assert refused.stderr.strip().endswith("(or set chain.authority to its public key)"), refused.stderr
    assert not (clone / "logs" / "precompact-savepoint.jsonl").exists()


def test_a_foreign_signers_lines_are_not_verified(project, tmp_path):
    """The remote rewritten by someone with their own key: each line re-signed by it, and the
    signatures of the user's key removed. None of those lines is taken: restore reads the
    branch's history back for the user's own index (review7b F4) and restores its savepoints,
    each checked against the user's key, naming the line it left out (exit 1)."""
    from solders.keypair import Keypair

    foreign = Keypair()
    _rewrite_remote(project, tmp_path, {"logs/precompact-savepoint.jsonl": _signed_by(project, foreign)})
    clone, env = _second_machine(project, tmp_path)
    restored = precompact(clone, "restore", "--json", env=env)
    assert restored.returncode == 1
    document = json.loads(restored.stdout)
    restored_back = [{"instance": "Trial #1", "sequence": n} for n in (1, 2, 3)]
    assert (document["restored"], document["unvouched"]) == (restored_back, []), document
    assert f"signed by {foreign.pubkey()}, not this project's key" in document["foreign"]
    rewritten = subprocess.run(
        ["git", "rev-parse", f"refs/heads/{project.branch}"],
        cwd=project.remote,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert document["commit"] != rewritten and document["walked"].startswith("restored instead from commit")
    found = precompact(clone, "resurrect", "--sequence", "2", "--json", env=env)
    checks = json.loads(found.stdout)["checks"]
    assert checks["integrity"]["status"] == "verified", checks
    assert str(foreign.pubkey()) not in checks["integrity"]["detail"], checks


def _signed_by(project, foreign) -> bytes:
    """The project's index with every savepoint's line signed by `foreign` (a Keypair), not its own key."""
    from precompact.local import savepoint_log
    from precompact.verifier import signed

    signer = signed.Signer(bytes(foreign)[:32], str(foreign.pubkey()))
    read = savepoint_log.parse((project.logs / "precompact-savepoint.jsonl").read_bytes().splitlines(keepends=True))
    lines = [json.dumps(e) for e in read.events if e["event"] == "SAVEPOINT_CREATED"]
    for savepoint in read.savepoints:
        line = signer.sign(savepoint)
        lines.append(
            json.dumps(
                {
                    "event": "SAVEPOINT_SIGNED",
                    "instance": savepoint.instance,
                    "sequence": savepoint.sequence,
                    "signer": line.signer,
                    "line_signature": line.signature,
                }
            )
        )
    return ("\n".join(lines) + "\n").encode()


def _rewrite_remote(project: Project, tmp_path: Path, files: dict[str, bytes | None]) -> None:
    """A new commit on the remote's savepoint branch whose tree holds `files` (logs/ names, in
    clear; None: the file removed, clear and encrypted) instead of what it held: someone who can
    push rewrote it."""
    work = tmp_path / "rewrite"
    if work.exists():
        shutil.rmtree(work)
    subprocess.run(["git", "clone", "-q", "-b", project.branch, str(project.remote), str(work)], check=True)
    for name, data in files.items():
        for stale in (work / name, work / (name + ".age")):
            stale.unlink(missing_ok=True)
        if data is not None:
            (work / name).write_bytes(data)
    run_git(work, "add", "-A")
    run_git(work, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", "rewritten")
    run_git(work, "push", "-q", "--force", "origin", project.branch)


@pytest.fixture
def clear_remote(tmp_path) -> tuple[Project, Path]:
    """A clear-text remote with three savepoints, and its pristine copy (made once for all the
    property's examples)."""
    root = tmp_path / "clear"
    root.mkdir()
    made = new_project(root, "project", git_layer=True, chain_layer=False, encrypted=False)
    _saved(made, root, 3)
    pristine = root / "pristine.git"
    shutil.copytree(made.remote, pristine)
    return made, pristine


def _blobs(remote: Path) -> list[str]:
    listing = run_git(remote, "ls-tree", "-r", "--name-only", pushed_branch(remote))
    return [name for name in listing.splitlines() if name.startswith("logs/")]


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_single_changed_byte_on_the_remote_verifies_after_restore(clear_remote, tmp_path_factory, data):
    """Any single byte of any file on the branch (the index copy, a snapshot, a chunk) changed
    by a new commit: restore refuses, or what it wrote is exactly the original bytes (the change
    was in something it does not take, or left out unvouched)."""
    project, pristine = clear_remote
    shutil.rmtree(project.remote)
    shutil.copytree(pristine, project.remote)
    name = data.draw(st.sampled_from(_blobs(project.remote)))
    original = subprocess.run(
        ["git", "show", f"{project.branch}:{name}"], cwd=project.remote, check=True, capture_output=True
    ).stdout
    at = data.draw(st.integers(0, len(original) - 1))
    flip = data.draw(st.integers(1, 255))
    changed = original[:at] + bytes([original[at] ^ flip]) + original[at + 1 :]
    tmp = tmp_path_factory.mktemp("flip")
    _rewrite_remote(project, tmp, {name: changed})
    home = {"XDG_STATE_HOME": str(tmp / "other-machine")}  # not the machine that wrote them
    logs = project.logs
    kept = tmp / "logs"
    shutil.move(logs, kept)
    try:
        done = precompact(project.path, "restore", "--json", env=home)
        event(f"{name.split('/')[1].split('_')[0]}: {'refused' if 'error' in json.loads(done.stdout) else 'restored'}")
        if done.returncode == 1 and "error" in json.loads(done.stdout):
            assert not logs.exists() or not any(logs.rglob("*.json*")), "a refused restore wrote nothing"
            return
        for restored in (p for p in logs.rglob("*") if p.is_file() and not p.name.endswith(".lock")):
            relative = restored.relative_to(logs)
            if relative.name == "precompact-savepoint.jsonl":
                theirs = {json.dumps(e, sort_keys=True) for e in _index(kept) if e["event"] == "SAVEPOINT_CREATED"}
                ours = {json.dumps(e, sort_keys=True) for e in _index(logs) if e["event"] == "SAVEPOINT_CREATED"}
                assert ours <= theirs, (name, at)
            else:
                assert restored.read_bytes() == (kept / relative).read_bytes(), (name, at, relative)
    finally:
        if logs.exists():
            shutil.rmtree(logs)
        shutil.move(kept, logs)


def test_savepoints_pushed_before_signing_are_signed_and_pushed_at_the_next_flush(tmp_path):
    """An archive from before signing (here: made while the keypair was away): the next flush
    signs this machine's lines and commits the index alone, so a second machine restores it."""
    made = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    away = tmp_path / "away.json"
    made.keypair_file.rename(away)
    _saved(made, tmp_path, 3)
    assert not [e for e in _index(made.logs) if e["event"] == "SAVEPOINT_SIGNED"]
    away.rename(made.keypair_file)

    assert precompact(made.path, "flush").returncode == 0
    assert [e["sequence"] for e in _index(made.logs) if e["event"] == "SAVEPOINT_SIGNED"] == [1, 2, 3]
    assert run_git(made.remote, "log", "-1", "--format=%s", made.branch).strip() == (
        "PRECOMPACT: savepoint index signed"
    )
    clone, env = _second_machine(made, tmp_path)
    restored = precompact(clone, "restore", env=env)
    assert restored.returncode == 0 and restored.stdout.startswith("restored 3 savepoint(s)"), restored.stdout


# `precompact ARGS` with Layer 1's clock at the unix second given first: a snapshot's file is
# named by its second and sequence (logs_dir.snapshot_name), so two savepoints N of one instance
# written in one second share it, whatever the wall clock of the run.
_SAVED_AT = """
import sys
from datetime import datetime
from precompact.local import snapshot
second = int(sys.argv[1])
class _At(datetime):
    @classmethod
    def now(cls, tz=None):
        return datetime.fromtimestamp(second, tz)
snapshot.datetime = _At
sys.argv = ["precompact", *sys.argv[2:]]
from precompact.edges.command import main
sys.exit(main())
"""


def _saved_at(cwd: Path, second: int, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", _SAVED_AT, str(second), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
        check=False,
    )


@pytest.mark.parametrize("shared", [True, False], ids=["its-file-name-shared", "a-name-of-its-own"])
def test_a_savepoint_written_into_an_empty_logs_is_never_overwritten_nor_hides_the_remotes(project, tmp_path, shared):
    """logs/ lost, then a compaction writes savepoint 1 again before `restore`, in the second the
    remote's savepoint 1 was written (the same snapshot file name, other content) or another: Layer 2
    does not commit it (its index copy would no longer name the remote's three, its tree would lose
    the remote's savepoint 1), and restore keeps it and leaves that instance's savepoints of the
    remote out, saying so."""
    [first] = [e for e in _index(project.logs) if e["event"] == "SAVEPOINT_CREATED" and e["sequence"] == 1]
    tree_before = run_git(project.remote, "ls-tree", "-r", project.branch)
    shutil.rmtree(project.logs)
    transcript = transcript_gen.generate(tmp_path / "other.jsonl", project=project.path, seed=11)
    second = first["unix_timestamp"] + (0 if shared else 3600)
    done = _saved_at(project.path, second, "savepoint", "--transcript", str(transcript.path), "--json")
    assert done.returncode == 3, done.stdout + done.stderr
    saved = json.loads(done.stdout)
    assert saved["savepoint"]["path"].endswith(first["snapshot_file"]) == shared, saved
    layer_2 = saved["layer_2"]
    assert layer_2["state"] == "queued" and (
        "the remote holds 3 savepoint(s) that logs/ lacks, and logs/ holds 1 that the remote lacks (#1)"
        in layer_2["problem"]
    ), layer_2
    assert run_git(project.remote, "ls-tree", "-r", project.branch) == tree_before
    mine = (project.logs / "precompact-savepoint.jsonl").read_bytes()
    status = _status(project.path)
    assert status["lacking_from_logs"] == 3, status
    verify = precompact(project.path, "verify")
    assert verify.returncode == 4, verify.stdout
    named = (
        f"{first['snapshot_file']} is on branch {project.branch} with other content than the file of that name in logs/"
    )
    assert (named in verify.stdout) == shared, verify.stdout

    restored = precompact(project.path, "restore")
    assert restored.returncode == 1, restored.stdout
    assert "✗ kept 3 savepoint(s) logs/ holds with other content than the remote's (not overwritten)" in restored.stdout
    assert (project.logs / "precompact-savepoint.jsonl").read_bytes() == mine


# `precompact restore` on a second machine whose check of the remote's snapshots (network time)
# is the moment another session's compaction saves into logs/.
_RESTORE_WHILE_A_SAVE_LANDS = """
import subprocess, sys
from precompact.ops import logs_restore
checked, save = logs_restore._checked_bytes, [sys.argv[1], "savepoint", "--transcript", sys.argv[2]]
def a_save_lands_meanwhile(*args, **kwargs):
    subprocess.run(save, capture_output=True, check=False)
    return checked(*args, **kwargs)
logs_restore._checked_bytes = a_save_lands_meanwhile
sys.argv = ["precompact", "restore"]
from precompact.edges.command import main
sys.exit(main())
"""


def _restore_while_a_save_lands(
    project: Project, tmp_path: Path
) -> tuple[Path, dict, Path, subprocess.CompletedProcess]:
    """A second machine whose `restore` a savepoint interleaves (_RESTORE_WHILE_A_SAVE_LANDS):
    the clone, its environment, the transcript saved meanwhile and restore's outcome (exit 1)."""
    clone, env = _second_machine(project, tmp_path)
    transcript = transcript_gen.generate(tmp_path / "other.jsonl", project=clone, seed=11)
    restored = subprocess.run(
        [sys.executable, "-c", _RESTORE_WHILE_A_SAVE_LANDS, PRECOMPACT, str(transcript.path)],
        cwd=clone,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
        check=False,
    )
    assert restored.returncode == 1, restored.stdout + restored.stderr
    return clone, env, transcript.path, restored


def test_after_restore_raced_a_save_every_command_names_the_step_that_joins_the_two_chains(project, tmp_path):
    """After the race above, logs/ holds this machine's #1 and the remote #1..#3: restore keeps
    them apart and flush never pushes over the remote's, so neither may send the user to the
    other (a loop). flush, the worker, status and verify name the step that joins them, and
    that step, followed, ends it: a second restore and a second flush change nothing more."""
    from precompact.local import savepoint_log

    clone, env, transcript, _ = _restore_while_a_save_lands(project, tmp_path)
    two_chains = "the remote holds 3 savepoint(s) that logs/ lacks, and logs/ holds 1 that the remote lacks (#1): two chains of Trial #1"
    flushed = precompact(clone, "flush", "--json", env=env)
    assert flushed.returncode == 3, flushed.stderr
    said = json.loads(flushed.stdout)["layer_2"]["problem"]
    assert two_chains in said and savepoint_log.TWO_CHAINS_FIX in said, said
    status = precompact(clone, "status", env=env)
    verify = precompact(clone, "verify", env=env)
    assert verify.returncode == 4
    for output in (
        flushed.stderr,
        status.stdout,
        verify.stdout,
        (clone / "logs" / "precompact-savepoint.jsonl").read_text(),
    ):
        assert "run `precompact restore`" not in output.replace(savepoint_log.TWO_CHAINS_FIX, ""), output
    for output in (status.stdout, verify.stdout):
        assert two_chains in output and savepoint_log.TWO_CHAINS_FIX in output, output
    # The background worker, as a hook starts it: each retry it logs names the same step.
    worker = subprocess.run(
        [sys.executable, "-m", "precompact.edges.worker", str(clone)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
        check=False,
    )
    retries = [line for line in worker.stdout.splitlines() if "queued, retrying" in line]
    assert retries and all(two_chains in line for line in retries), worker.stdout + worker.stderr
    assert "run `precompact restore`" not in worker.stdout.replace(savepoint_log.TWO_CHAINS_FIX, "")

    # The step named: logs/ moved aside, the remote's chain restored whole, this machine's session saved on top.
    shutil.move(clone / "logs", tmp_path / "logs-aside")
    assert precompact(clone, "restore", env=env).returncode == 0
    again = precompact(clone, "restore", "--json", env=env)
    assert again.returncode == 0 and json.loads(again.stdout)["restored"] == [], again.stdout
    saved = precompact(clone, "savepoint", "--transcript", str(transcript), "--json", env=env)
    assert saved.returncode == 3 and json.loads(saved.stdout)["savepoint"]["sequence"] == 4, saved.stdout
    for _ in range(2):
        flushed = precompact(clone, "flush", env=env)
        assert flushed.returncode == 0 and "✓ Layer 2: up to date" in flushed.stdout, flushed.stdout
    status = precompact(clone, "status", env=env)
    assert "logs/ lacks" not in status.stdout, status.stdout
    verify = precompact(clone, "verify", env=env)
    assert verify.returncode == 0 and verify.stdout.startswith("✓ 4 savepoint(s) verified"), verify.stdout


def test_a_savepoint_written_while_restore_fetches_keeps_its_own_lines_and_restore_says_so(project, tmp_path):
    """review9b F1: restore compares with logs/ again under the index lock: the savepoint the
    hook wrote meanwhile took sequence 1, so the remote's #1..#3 are kept out (not appended on top
    of it, its layer lines saying "pushed" in a commit that does not hold it), their snapshots
    written for nothing are removed, and the one line says how to keep both."""
    from precompact.local import savepoint_log

    clone, env, _, restored = _restore_while_a_save_lands(project, tmp_path)
    assert "✗ kept 3 savepoint(s) logs/ holds with other content than the remote's" in restored.stdout
    assert savepoint_log.TWO_CHAINS_FIX in restored.stdout
    lines = _index(clone / "logs")
    [created] = [e for e in lines if e["event"] == "SAVEPOINT_CREATED"]
    assert created["sequence"] == 1
    assert not [e for e in lines if e["event"] == "LAYER_2_PUSHED"], lines
    saved = sorted(p.name for p in (clone / "logs" / "precompact-saves").iterdir())
    assert saved == [created["snapshot_file"].rsplit("/", 1)[1]]
    [savepoint] = _status(clone, env)["savepoints"]
    assert savepoint["layer_2"] != "PUSHED", savepoint


def test_an_index_that_creates_a_savepoint_twice_is_said_by_status_and_fails_verify(project):
    """An index written before restore re-read logs/ under the lock (or copied together from two
    machines): the second SAVEPOINT_CREATED of #1 and the lines after it are not taken for #1's,
    and both commands name it and the way to keep both."""
    from precompact.local import savepoint_log

    index = project.logs / "precompact-savepoint.jsonl"
    [first] = [e for e in _index(project.logs) if e["event"] == "SAVEPOINT_CREATED" and e["sequence"] == 1]
    other = {**first, "snapshot_hash": "sha256:" + "e" * 64, "session_id": "elsewhere"}
    about = {"instance": first["instance"], "sequence": 1}
    with index.open("a") as f:
        for line in (other, {"event": "LAYER_2_COMMITTED", **about, "commit": "f" * 40, "branch": project.branch}):
            f.write(json.dumps(line) + "\n")

    status = precompact(project.path, "status")
    assert status.returncode == 0
    assert f"#1 (sha256:{first['snapshot_hash'][7:23]}) is created again by a later index line" in status.stderr
    assert savepoint_log.TWO_CHAINS_FIX in status.stderr
    assert _status(project.path)["savepoints"][0]["commit"] != "f" * 40
    verify = precompact(project.path, "verify")
    assert verify.returncode == 1, verify.stdout
    assert f"is created again by a later index line with another snapshot (sha256:{'e' * 16})" in verify.stdout


def test_a_snapshot_altered_at_the_tip_is_restored_from_the_commit_that_pushed_it_and_every_command_fails_the_tip(
    project, tmp_path
):
    """review12b F4: someone who can push rewrites one old snapshot at the tip (no force needed).
    The signed hash is the root, not the tip: `verify` and `status --remote` on the machine that
    pushed it fail the tip naming the savepoint and the file (exit 1), and with logs/ lost
    `restore` brings back every savepoint, that one read at the commit that pushed it, whose
    bytes hash to its signed line, and names the file the tip holds altered (exit 1,
    `complete: false`); what it wrote is the original bytes."""
    name = _status(project.path)["savepoints"][1]["snapshot_file"]
    original = (project.path / name).read_bytes()
    altered = bytearray(original)
    altered[100] ^= 0x01
    _rewrite_remote(project, tmp_path, {name: bytes(altered)})
    tip = _remote_tip(project)
    said = f"at its tip savepoint 2's snapshot ({name}) does not hash to what its signed line states"
    verify = precompact(project.path, "verify")
    assert verify.returncode == 1 and verify.stdout.startswith("✗") and said in verify.stdout, verify.stdout
    listed = precompact(project.path, "status", "--remote")
    assert listed.returncode == 1 and said in listed.stdout and "✓" not in listed.stdout, listed.stdout

    shutil.rmtree(project.logs)
    restored = precompact(project.path, "restore", "--json")
    assert restored.returncode == 1, restored.stdout + restored.stderr
    document = json.loads(restored.stdout)
    assert [s["sequence"] for s in document["restored"]] == [1, 2, 3] and not document["complete"], document
    [why] = document["altered"]
    assert why.startswith(f"Trial #1 #2 ({name} at {tip[:12]}: snapshot in git commit {tip[:12]} hashes to "), why
    assert why.endswith(", which pushed it)") and str(project.authority().pubkey()) in why, why
    assert (project.path / name).read_bytes() == original
    again = precompact(project.path, "verify")
    assert again.returncode == 1 and said in again.stdout, again.stdout  # the tip is still altered
    assert not any(f"savepoint {n} [" in again.stdout for n in (1, 2, 3)), again.stdout  # each savepoint checks


def test_a_snapshot_altered_at_the_tip_stops_no_later_savepoint_and_the_next_push_puts_it_back(project, tmp_path):
    """review16a F2: one byte of savepoint 1's snapshot flipped at the tip (anyone who can push,
    no force). `flush` fails the tip and says the next savepoint's push puts the index back on
    top; it does: the next savepoint is committed and pushed (before, it and every later one
    were refused as "two chains", for good), the tip holds savepoint 1's pushed copy again, and
    `verify` passes."""
    name = _status(project.path)["savepoints"][0]["snapshot_file"]
    pushed = run_git(project.remote, "rev-parse", f"{project.branch}:{name}.age").strip()
    altered = bytearray((project.path / name).read_bytes())
    altered[100] ^= 0x01
    _rewrite_remote(project, tmp_path, {name: bytes(altered)})
    flushed = precompact(project.path, "flush")
    said = f"at its tip savepoint 1's snapshot ({name}) does not hash to what its signed line states"
    assert flushed.returncode == 1 and said in flushed.stdout, flushed.stdout
    assert "your next savepoint's push puts your index back on top" in flushed.stdout, flushed.stdout
    listed = precompact(project.path, "status")
    assert listed.returncode == 0 and "that logs/ lacks" not in listed.stdout, listed.stdout
    assert (
        f"the savepoint branch holds 1 snapshot(s) with other content than Layer 2 committed ({name}): someone"
        in listed.stdout
    ), listed.stdout
    [fourth] = _saved(project, tmp_path, 1, name="next.jsonl")[3:]
    assert fourth["layer_2"] == "PUSHED", fourth
    listed = run_git(project.remote, "ls-tree", "-r", "--name-only", project.branch).splitlines()
    assert name not in listed, listed  # the altered clear copy is gone
    assert run_git(project.remote, "rev-parse", f"{project.branch}:{name}.age").strip() == pushed
    again = precompact(project.path, "flush")
    assert again.returncode == 0 and again.stdout.startswith("✓ Layer 2: up to date"), again.stdout
    assert "other content than Layer 2 committed" not in precompact(project.path, "status").stdout
    verify = precompact(project.path, "verify")
    assert verify.returncode == 0 and verify.stdout.startswith("✓"), verify.stdout


def test_a_snapshot_altered_at_the_tip_with_no_other_copy_refuses_the_restore_naming_it_and_at(
    project, tmp_path, monkeypatch
):
    """review12b F4: when no commit the history names holds a copy that hashes to the signed line
    (here: a history longer than the log of commits adding snapshots reads), the restore is
    refused in one line naming the savepoint, its file and `restore --at COMMIT` (exit 1, nothing
    written); `--at` the commit before the rewrite restores them."""
    from precompact.remote import gitstore

    before = _remote_tip(project)
    name = _status(project.path)["savepoints"][1]["snapshot_file"]
    altered = bytearray((project.path / name).read_bytes())
    altered[100] ^= 0x01
    _rewrite_remote(project, tmp_path, {name: bytes(altered)})
    shutil.rmtree(project.logs)
    monkeypatch.setattr(gitstore, "SNAPSHOT_COMMITS_LIMIT", 0)
    monkeypatch.chdir(project.path)
    refused = invoke("restore")
    assert refused.exit_code == 1, refused.output
    [line] = [line for line in refused.output.splitlines() if line.startswith("Error:")]
    assert f"but the index line signed by {project.authority().pubkey()} states sha256:" in line, line
    assert f"(savepoint 2 of 'Trial #1', {name}, " in line and "`precompact restore --at COMMIT`" in line, line
    assert line.endswith("; nothing restored"), line
    assert not any(project.logs.rglob("*.json*")), "a refused restore writes nothing"
    restored = invoke("restore", "--at", before[:12])
    assert restored.exit_code == 0 and "restored 3 savepoint(s)" in restored.output, restored.output


def _oversized_index() -> bytes:
    """An index copy one byte over what precompact writes (git stores its repeated bytes cheaply)."""
    from precompact.remote import gitstore

    return b"{}\n" * (gitstore.INDEX_COPY_LIMIT // 3) + b"\n" * (gitstore.INDEX_COPY_LIMIT % 3 + 1)


def _remote_tip(project: Project) -> str:
    return run_git(project.remote, "rev-parse", f"refs/heads/{project.branch}").strip()


def _garbage_appended(project: Project) -> bytes:
    """The project's index with one line that does not parse appended (anyone who can push)."""
    return (project.logs / "precompact-savepoint.jsonl").read_bytes() + b"not json\n"


INDEX_COPY = "logs/precompact-savepoint.jsonl"


def _spoilt_tip(project: Project, spoilt: str) -> dict[str, bytes | None]:
    """The files a push that spoils the tip's index copy writes (anyone who can push)."""
    import pyrage

    if spoilt == "garbage":
        return {INDEX_COPY: _garbage_appended(project)}
    if spoilt == "oversized":
        return {INDEX_COPY: _oversized_index()}
    if spoilt == "deleted":
        return {INDEX_COPY: None}
    if spoilt == "undecryptable":
        return {INDEX_COPY + ".age": b"age-encryption.org/v1\n-> X25519 garbage\n--- x\n" + b"\0" * 64}
    # Encrypted to a recipient of the pusher's own: no identity of yours opens it.
    other = pyrage.x25519.Identity.generate().to_public()
    return {INDEX_COPY + ".age": pyrage.encrypt((project.logs / "precompact-savepoint.jsonl").read_bytes(), [other])}


@pytest.mark.parametrize("spoilt", ["garbage", "oversized", "deleted", "undecryptable", "sealed"])
def test_an_index_copy_at_the_tip_precompact_did_not_write_is_walked_past_and_every_command_fails_it(
    project, tmp_path, spoilt
):
    """review8 F3, review10 F3, docs/cli.md: whoever can push puts at the tip of your own branch
    an index copy with a line that does not parse, one of 64 MB + 1 byte (never read: git states
    its size first), none at all, one that does not decrypt, or one encrypted to a recipient of
    their own. `restore` walks back past it as past another key's line: it restores your
    savepoints from the commit before, verified, and says in one line what it left out and where
    it restored from (exit 1); `flush`, `verify` and `status --remote` on the machine that wrote
    them each fail the branch in the same words (exit 1), naming it as this project's own, until
    its next savepoint's push puts its index back on top."""
    before = _remote_tip(project)
    lines = len((project.logs / "precompact-savepoint.jsonl").read_bytes().splitlines())
    _rewrite_remote(project, tmp_path, _spoilt_tip(project, spoilt))
    tip = _remote_tip(project)
    why = {  # the words, or their start where age's own text follows
        "garbage": f"line {lines + 1} of its index copy does not parse",
        "oversized": "its index copy is 64.1 MB, over the 64 MB precompact writes: not read",
        "deleted": "it holds no index copy (logs/precompact-savepoint.jsonl)",
        "undecryptable": f"its index copy cannot be read: {INDEX_COPY}.age at commit {tip[:12]}: it does not decrypt or authenticate (",
        "sealed": f"its index copy cannot be read: {INDEX_COPY}.age at commit {tip[:12]} cannot be read with ",
    }[spoilt]
    clone, env = _second_machine(project, tmp_path)
    restored = precompact(clone, "restore", env=env)
    assert restored.returncode == 1, restored.stdout + restored.stderr
    walked = f", so the tip's index was left out; restored instead from commit {before[:12]}: "
    assert restored.stdout.startswith("restored 3 savepoint(s)"), restored.stdout
    assert f"✗ at {tip[:12]}, {why}" in restored.stdout and walked in restored.stdout, restored.stdout
    [said] = [line for line in restored.stdout.splitlines() if line.startswith("✗")]
    assert "\n" not in said and walked in said, "one line"
    verified = precompact(clone, "verify", env=env)
    assert verified.stdout.startswith("✗") and verified.returncode == 1, verified.stdout
    found = precompact(clone, "resurrect", "--sequence", "3", "--json", env=env)
    assert json.loads(found.stdout)["checks"]["integrity"]["status"] == "verified", found.stdout

    verify = precompact(project.path, "verify")
    assert verify.returncode == 1 and verify.stdout.startswith("✗"), verify.stdout + verify.stderr
    assert f"branch {project.branch} at {tip[:12]}: {why}" in verify.stdout, verify.stdout
    listed = precompact(project.path, "status", "--remote")
    assert listed.returncode == 1, listed.stdout + listed.stderr
    mine = f"✗ Trial #1 (this project's instance): branch {project.branch}, last savepoint -, commit {tip[:10]}"
    [first, detail] = listed.stdout.splitlines()
    assert first == mine and detail.startswith(f"    FAILED: {why}"), listed.stdout
    flushed = precompact(project.path, "flush")
    assert flushed.returncode == 1 and f"✗ Layer 2: branch {project.branch} at {tip[:12]}: {why}" in flushed.stdout
    # As verify and flush say, the next savepoint's push puts the index back on top: verified again.
    fix = "(your next savepoint's push puts your index back on top)"
    assert fix in verify.stdout and fix in flushed.stdout, verify.stdout + flushed.stdout
    _saved(project, tmp_path, 1, name="next.jsonl")
    again = precompact(project.path, "verify")
    assert again.returncode == 0 and again.stdout.startswith("✓ 4 savepoint(s) verified"), again.stdout


@pytest.mark.parametrize("spoilt", ["garbage", "oversized", "deleted", "undecryptable", "sealed"])
def test_resurrect_of_your_own_instance_on_a_new_machine_walks_past_a_spoilt_tip_as_restore_does(
    project, tmp_path, spoilt
):
    """docs/cli.md: with logs/ holding none of your savepoints, `resurrect` reads your own branch
    as `restore` does (verifier.team.own_index): past a tip index precompact did not write, to the
    commit before, whose savepoints it checks against your key (verified); it says in one line
    what it left out and where it read instead, and exits 1 as restore does."""
    before = _remote_tip(project)
    _rewrite_remote(project, tmp_path, _spoilt_tip(project, spoilt))
    tip = _remote_tip(project)
    clone, env = _second_machine(project, tmp_path)
    walked = f", so the tip's index was left out; restored instead from commit {before[:12]}: "

    found = precompact(clone, "resurrect", "--json", env=env)
    assert found.returncode == 1, found.stdout + found.stderr
    document = json.loads(found.stdout)
    assert document["left_out"].startswith(f"at {tip[:12]}, ") and walked in document["left_out"], document
    assert (document["sequence"], document["intact"], document["verified"]) == (3, True, True), document
    assert document["source"].endswith(f" at {before[:12]}"), document["source"]
    said = precompact(clone, "resurrect", "--sequence", "2", env=env)
    assert said.returncode == 1 and "Ready to resume work." in said.stdout, said.stdout + said.stderr
    [line] = [line for line in said.stderr.splitlines() if line.startswith("✗")]
    assert line == f"✗ {document['left_out']}", said.stderr
    assert precompact(clone, "restore", env=env).returncode == found.returncode


def test_resurrect_of_your_own_instance_with_none_of_your_index_behind_a_spoilt_tip_is_refused(
    project, tmp_path, monkeypatch
):
    """As restore: with the walk cut to one commit, a tip whose index copy does not parse and no
    index of yours behind it within the walk: one line naming where the walk stopped (exit 1)."""
    from precompact.verifier import team

    _rewrite_remote(project, tmp_path, {INDEX_COPY: _garbage_appended(project)})
    tip = _remote_tip(project)
    clone, env = _second_machine(project, tmp_path)
    monkeypatch.setattr(team, "WALK", 1)
    monkeypatch.chdir(clone)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    refused = invoke("resurrect")
    assert refused.exit_code == 1, refused.output
    assert f"branch {project.branch} at {tip[:12]}: line " in refused.output, refused.output
    assert (
        "none of the 1 commit(s) of its history that changed the index copy holds an index of your key's savepoints"
        in refused.output
    )
    assert refused.output.rstrip().endswith("nothing was resurrected"), refused.output


def test_a_branch_none_of_whose_history_holds_an_index_is_not_a_savepoint_branch(project, tmp_path):
    """review10 F3: the walk keeps "not a precompact savepoint branch" for a branch none of whose
    commits ever held an index copy (exit 1, nothing written)."""
    work = tmp_path / "orphan"
    run_git(tmp_path, "init", "-q", str(work))
    (work / "README").write_text("not savepoints\n")
    run_git(work, "add", "-A")
    run_git(work, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", "other")
    run_git(work, "push", "-q", "--force", str(project.remote), f"HEAD:refs/heads/{project.branch}")
    clone, env = _second_machine(project, tmp_path)
    refused = precompact(clone, "restore", env=env)
    assert refused.returncode == 1 and refused.stdout == "", refused.stdout + refused.stderr
    tip = _remote_tip(project)
    assert refused.stderr.splitlines() == [
        f"Error: branch {project.branch} at {tip[:12]}: it holds no index copy (logs/precompact-savepoint.jsonl), so the tip's index was left out; no commit of its history holds logs/precompact-savepoint.jsonl: not a precompact savepoint branch; nothing restored"
    ], refused.stderr
    assert not (clone / "logs" / "precompact-savepoint.jsonl").exists()


def test_an_unreadable_tip_with_none_of_your_index_behind_it_within_the_walk_is_refused_naming_at(
    project, tmp_path, monkeypatch
):
    """review8 F3: with the walk cut to one commit, a tip whose index copy does not parse holds
    nothing to restore and the walk read no index of yours: the refusal (exit 1, nothing written)
    names `precompact restore --at COMMIT`, the commit before, which restores them."""
    from precompact.verifier import team

    before = _remote_tip(project)
    _rewrite_remote(project, tmp_path, {"logs/precompact-savepoint.jsonl": _garbage_appended(project)})
    tip = _remote_tip(project)
    clone, env = _second_machine(project, tmp_path)
    monkeypatch.setattr(team, "WALK", 1)
    monkeypatch.chdir(clone)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    refused = invoke("restore")
    assert refused.exit_code == 1, refused.output
    assert f"branch {project.branch} at {tip[:12]}: line " in refused.output, refused.output
    assert f"`precompact restore --at {before[:12]}` reads on from there" in refused.output, refused.output
    assert refused.output.rstrip().endswith("nothing restored"), refused.output
    assert not (clone / "logs" / "precompact-savepoint.jsonl").exists()
    restored = invoke("restore", "--at", before[:12])
    assert restored.exit_code == 0 and "restored 3 savepoint(s)" in restored.output, restored.output


def test_restores_walk_back_skips_an_index_copy_over_what_precompact_writes_and_names_it(project, tmp_path):
    """An oversized index copy pushed, then another key's index on top: restore's walk back
    through the history leaves the oversized copy unread, names its commit, and restores the
    user's own savepoints from before it, verified."""
    from solders.keypair import Keypair

    _rewrite_remote(project, tmp_path, {"logs/precompact-savepoint.jsonl": _oversized_index()})
    oversized = _remote_tip(project)
    foreign = Keypair()
    _rewrite_remote(project, tmp_path, {"logs/precompact-savepoint.jsonl": _signed_by(project, foreign)})
    clone, env = _second_machine(project, tmp_path)
    restored = precompact(clone, "restore", "--json", env=env)
    assert restored.returncode == 1, restored.stdout + restored.stderr
    document = json.loads(restored.stdout)
    assert [s["sequence"] for s in document["restored"]] == [1, 2, 3], document
    assert document["walked"].startswith("restored instead from commit"), document
    skipped = f"; not read, over the size precompact writes: the index copy at {oversized[:12]} (64.1 MB, over the 64 MB precompact writes)"
    assert document["walked"].endswith(skipped), document["walked"]


def test_with_the_chain_on_layer_3_takes_up_a_restored_logs_and_goes_on(tmp_path, localnet):
    """Three savepoints anchored; logs/ lost and restored: the next flush confirms them from the
    record (the walk back through their bytes), posts nothing twice, and the next savepoint
    follows the record."""
    made = new_project(tmp_path, "project", git_layer=True, chain_layer=True, cluster=localnet.url, airdrop=True)
    for _ in range(3):
        done = precompact(made.path, "savepoint", "--no-transcript")
        assert done.returncode == 0, done.stdout + done.stderr
    shutil.rmtree(made.logs)
    assert precompact(made.path, "restore").returncode == 0
    flushed = precompact(made.path, "flush")
    assert flushed.returncode == 0, flushed.stdout
    assert [r["layer_3"] for r in _status(made.path)["savepoints"]] == ["CONFIRMED"] * 3
    done = precompact(made.path, "savepoint", "--no-transcript", "--json")
    assert done.returncode == 0, done.stdout
    assert json.loads(done.stdout)["savepoint"]["sequence"] == 4
    verify = precompact(made.path, "verify")
    assert verify.returncode == 0 and verify.stdout.startswith("✓ 4 savepoint(s) verified"), verify.stdout


def test_after_restore_raced_a_save_with_the_chain_on_verify_sends_no_one_to_restore(tmp_path, localnet):
    """The race above with the chain on: the on-chain record holds the remote's #3, logs/ this
    machine's #1. verify's line on the record ahead of logs/ names no `precompact restore`
    (which keeps the chains apart: a loop), in text and `--json`; it names both chains and the
    step that joins them is said once, with them."""
    from precompact.local import savepoint_log

    made = new_project(tmp_path, "project", git_layer=True, chain_layer=True, cluster=localnet.url, airdrop=True)
    for _ in range(3):
        done = precompact(made.path, "savepoint", "--no-transcript")
        assert done.returncode == 0, done.stdout + done.stderr
    clone, env, _, _ = _restore_while_a_save_lands(made, tmp_path)
    verify = precompact(clone, "verify", env=env)
    assert verify.returncode == 4, verify.stdout + verify.stderr
    ahead = f"the on-chain record of {made.instance} holds savepoint 3, logs/ up to 1: it is the record of the remote's chain"
    assert ahead in verify.stdout and "(#1)" in verify.stdout, verify.stdout
    assert verify.stdout.count(savepoint_log.TWO_CHAINS_FIX) == 1, verify.stdout
    assert "run `precompact restore`" not in verify.stdout.replace(savepoint_log.TWO_CHAINS_FIX, ""), verify.stdout
    as_json = precompact(clone, "verify", "--json", env=env)
    detail = json.loads(as_json.stdout)["verdict"]["detail"]
    assert ahead in detail and "run `precompact restore`" not in detail.replace(savepoint_log.TWO_CHAINS_FIX, "")


def _rolled_back(project: Project, tmp_path: Path, how: str) -> None:
    """A fast-forward on top of the branch whose tree is savepoint 1's (anyone who can push, no
    force): a `git revert` of its last two commits, savepoint 1's own commit's tree replayed
    (every index line in it the user's, validly signed), or the same tree as a merge whose first
    parent is savepoint 1's commit and second the tip (review13a F1: git's default history
    simplification follows the first parent alone, whose tree the merge's is)."""
    work = tmp_path / "mate"
    run_git(tmp_path, "clone", "-q", "-b", project.branch, str(project.remote), str(work))
    mate = ("-c", "user.name=mate", "-c", "user.email=m@x")
    if how == "revert":
        run_git(work, *mate, "revert", "--no-edit", "HEAD~2..HEAD")
    else:
        first = run_git(work, "rev-list", "--reverse", "HEAD").split()[0]
        parents = ("-p", first, "-p", "HEAD") if how == "merged" else ("-p", "HEAD")
        replay = run_git(work, *mate, "commit-tree", f"{first}^{{tree}}", *parents, "-m", "tidy").strip()
        run_git(work, "reset", "-q", "--hard", replay)
    run_git(work, "push", "-q", "origin", project.branch)


@pytest.mark.parametrize("how", ["revert", "replayed", "merged"])
def test_a_tip_that_rolls_the_branch_back_is_walked_past_by_restore_and_failed_by_verify(project, tmp_path, how):
    """review12b F1: a fast-forward whose tree is an earlier state of the branch leaves an index
    of your key that holds savepoint 1 of 3 at the tip. The machine that pushed them fails the
    tip naming the savepoints it dropped (verify, status --remote, flush: exit 1); a second
    machine's `restore` walks back to the copy holding all three, restores them, and says the tip
    rolled back (exit 1, `complete: false`), and its `status --remote` (before) and `verify`
    (after) fail the tip too, never ✓. The
    next savepoint's push puts the index back on top: a restore elsewhere is then whole (after
    the merge, through precompact's own merge after the push race: the remote moved on from
    the commit it had pushed last, and that merge is a state every machine verifies)."""
    pushed = _remote_tip(project)
    _rolled_back(project, tmp_path, how)
    tip = _remote_tip(project)
    dropped = (
        "its index names 1 of the 3 savepoint(s) logs/ records as pushed to it: savepoints 2..3 are only in its history"
    )
    for command in (("verify",), ("status", "--remote"), ("flush",)):
        done = precompact(project.path, *command)
        assert done.returncode == 1 and dropped in done.stdout, (command, done.stdout + done.stderr)
        assert "✓ Trial" not in done.stdout and not done.stdout.startswith("✓"), (command, done.stdout)

    clone, env = _second_machine(project, tmp_path)
    # With nothing in logs/ yet, status --remote reads the branch's history as restore does.
    listed = precompact(clone, "status", "--remote", env=env)
    walks = f"savepoints 2..3 were dropped by a later commit (a rollback, as a `git revert` of the branch's last commits makes): `precompact restore` walks back for them, restoring from commit {pushed[:12]}"
    assert listed.returncode == 1 and walks in listed.stdout, listed.stdout
    restored = precompact(clone, "restore", "--json", env=env)
    assert restored.returncode == 1, restored.stdout + restored.stderr
    document = json.loads(restored.stdout)
    assert [s["sequence"] for s in document["restored"]] == [1, 2, 3], document
    assert (document["complete"], document["commit"]) == (False, pushed), document
    assert document["foreign"].startswith(
        f"at {tip[:12]}, its index holds your savepoints up to #1, an earlier copy in its history up to #3: savepoints 2..3 were dropped by a later commit"
    ), document["foreign"]
    assert document["walked"].startswith(f"restored instead from commit {pushed[:12]}: "), document["walked"]
    verify = precompact(clone, "verify", env=env)
    assert verify.returncode == 1 and dropped in verify.stdout, verify.stdout
    found = precompact(clone, "resurrect", "--json", env=env)
    assert json.loads(found.stdout)["sequence"] == 3, found.stdout

    _saved(project, tmp_path, 1, name="next.jsonl")
    parents, subject = run_git(project.remote, "log", "-1", "--format=%P%n%s", project.branch).splitlines()
    assert len(parents.split()) == 2 and subject == "PRECOMPACT: savepoints put on top of the remote's branch"
    healed = precompact(project.path, "verify")
    assert healed.returncode == 0 and healed.stdout.startswith("✓ 4 savepoint(s) verified"), healed.stdout
    third = tmp_path / "third"
    third.mkdir()
    again_clone, again_env = _second_machine(project, third)
    listed = precompact(again_clone, "status", "--remote", env=again_env)
    assert listed.returncode == 0 and listed.stdout.startswith("✓ Trial #1"), listed.stdout
    again = precompact(again_clone, "restore", env=again_env)
    assert again.returncode == 0 and again.stdout.startswith("restored 4 savepoint(s)"), again.stdout + again.stderr
    verified = precompact(again_clone, "verify", env=again_env)
    assert verified.returncode == 0 and verified.stdout.startswith("✓ 4 savepoint(s) verified"), verified.stdout


def _line_deleted(project: Project, tmp_path: Path, sequence: int) -> str:
    """A fast-forward whose index copy holds your own validly signed lines but none of savepoint
    `sequence`'s, its snapshot file removed (review13a F2: a teammate who can push and is one of
    your recipients, or anyone on a clear-text remote); returns that file's name."""
    index = project.logs / "precompact-savepoint.jsonl"
    kept = [
        line for line in index.read_bytes().splitlines(keepends=True) if json.loads(line).get("sequence") != sequence
    ]
    name = _status(project.path)["savepoints"][sequence - 1]["snapshot_file"]
    _rewrite_remote(project, tmp_path, {INDEX_COPY: b"".join(kept), name: None})
    return name


def test_a_line_deleted_from_the_middle_of_the_tips_index_is_walked_past_and_failed_never_restored_whole(
    project, tmp_path
):
    """review13a F2: the tip's index holds your signed savepoints 1 and 3, 2's line and file gone.
    A chain is 1..N with every link checked, not the highest signed sequence: the machine that
    pushed them fails the tip (verify, status --remote, flush: exit 1); a new machine's `status
    --remote` names the gap and the walk back; its `restore` restores 1..3 from the commit whose
    index holds them unbroken and says the tip dropped savepoint 2 (exit 1, `complete: false`),
    and `verify` there then fails the tip too."""
    pushed = _remote_tip(project)
    _line_deleted(project, tmp_path, 2)
    tip = _remote_tip(project)
    dropped = "its index names 2 of the 3 savepoint(s) logs/ records as pushed to it: savepoint 2 "
    for command in (("verify",), ("flush",)):
        done = precompact(project.path, *command)
        assert done.returncode == 1 and dropped in done.stdout, (command, done.stdout + done.stderr)
    gap = (
        "its index holds your savepoints 1, 3 with savepoint 2 missing from the middle, an earlier copy in its "
        "history holds savepoints 1..3 unbroken: savepoint 2 was dropped by a later commit"
    )
    walks = f"(a line deleted from the index, or a rollback): `precompact restore` walks back for them, restoring from commit {pushed[:12]}"
    clone, env = _second_machine(project, tmp_path)
    for machine, home in ((project.path, None), (clone, env)):  # as logs/ records it, and with logs/ empty
        listed = precompact(machine, "status", "--remote", env=home)
        assert listed.returncode == 1 and "✓" not in listed.stdout, listed.stdout
        assert f"FAILED: savepoint 2 is missing (the index goes on with 3); {gap} {walks}" in listed.stdout, (
            listed.stdout
        )
    restored = precompact(clone, "restore", "--json", env=env)
    assert restored.returncode == 1, restored.stdout + restored.stderr
    document = json.loads(restored.stdout)
    assert [s["sequence"] for s in document["restored"]] == [1, 2, 3], document
    assert (document["complete"], document["commit"], document["unlinked"]) == (False, pushed, []), document
    assert document["foreign"].startswith(f"at {tip[:12]}, {gap}"), document["foreign"]
    assert "unbroken from #1 (up to #3)" in document["walked"], document["walked"]
    verify = precompact(clone, "verify", env=env)
    assert verify.returncode == 1 and dropped in verify.stdout, verify.stdout


def test_a_savepoint_after_a_gap_no_copy_within_the_walk_fills_is_left_out_and_its_link_never_said_to_hold(
    project, tmp_path, monkeypatch
):
    """review13a F2: with the walk cut to the tip alone (and without the commits that added
    snapshot files, which review14a F3 added to it), no copy holds savepoint 2. `resurrect`
    on a new machine reads savepoint 3 from the tip's index and FAILS its integrity (the index
    holds no savepoint 2, so its link was never checked: never "hash link … holds"), exit 1;
    `restore` writes savepoint 1 only, names 3 as left out after a gap and `restore --at COMMIT`
    (exit 1, `unlinked`, `complete: false`); `--at` the commit before the deletion restores the
    rest and is complete."""
    from precompact.verifier import team

    before = _remote_tip(project)
    _line_deleted(project, tmp_path, 2)
    tip = _remote_tip(project)
    clone, env = _second_machine(project, tmp_path)
    monkeypatch.setattr(team, "WALK", 1)
    walk = team._walk
    monkeypatch.setattr(team, "_walk", lambda *args, also=(), **named: walk(*args, **named))
    monkeypatch.chdir(clone)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    found = invoke("resurrect", "--json")
    assert found.exit_code == 1, found.output
    integrity = json.loads(found.output)["checks"]["integrity"]
    assert integrity["status"] == "FAILED", integrity
    assert integrity["detail"].startswith(
        "the index holds no savepoint 2, so savepoint 3's hash link to it is not checked: a line was deleted from the middle"
    ), integrity
    report = invoke("resurrect")
    assert report.exit_code == 1 and "link to the previous savepoint holds" not in report.output, report.output

    restored = invoke("restore")
    assert restored.exit_code == 1, restored.output
    assert "\nrestored 1 savepoint(s) " in restored.output, restored.output  # after the progress line
    assert (
        f"✗ left out 1 savepoint(s) after a gap in the index at {tip[:12]}, whose link back was never checked: Trial #1 #3 (savepoint 2 is not in the index read); a line was deleted from its middle: `precompact restore --at COMMIT`"
        in restored.output
    ), restored.output
    assert [s["sequence"] for s in _status(clone, env)["savepoints"]] == [1]
    as_json = invoke("restore", "--json")
    document = json.loads(as_json.output)
    assert as_json.exit_code == 1 and not document["complete"], as_json.output
    assert document["unlinked"] == ["Trial #1 #3 (savepoint 2 is not in the index read)"], document
    again = invoke("restore", "--at", before[:12])
    assert again.exit_code == 0 and "restored 2 savepoint(s)" in again.output, again.output


@pytest.mark.parametrize("replaced", ["undecryptable", "sealed", "last sealed"])
def test_a_snapshot_at_the_tip_that_does_not_open_on_a_recipient_machine_is_failed_not_skipped(
    project, tmp_path, replaced
):
    """review13a F4: anyone who can push (no identity needed) replaces savepoint 2's encrypted
    snapshot at the tip with bytes that do not decrypt, or with a ciphertext to a recipient of
    their own (also the last one's, which `status --remote` reads itself). On the machine that
    pushed it, whose identity is a recipient, `verify`, `status --remote` and `flush` fail the
    tip naming the savepoint and its file (exit 1, `--json` FAILED), as `restore` elsewhere
    names it altered; only a machine with no identity that opens your savepoints leaves it
    unjudged (its setup: not verified, exit 4, never ✓)."""
    import pyrage

    sequence = 3 if replaced == "last sealed" else 2
    name = _status(project.path)["savepoints"][sequence - 1]["snapshot_file"]
    stranger = pyrage.x25519.Identity.generate()
    data = (
        b"age-encryption.org/v1\n-> X25519 garbage\n--- x\n" + b"\0" * 64
        if replaced == "undecryptable"
        else pyrage.encrypt(b"not yours", [stranger.to_public()])
    )
    _rewrite_remote(project, tmp_path, {name + ".age": data})
    tip = _remote_tip(project)
    sealed = f"at its tip savepoint {sequence}'s snapshot ({name}) is not sealed to this machine's identity ({name}.age at commit {tip[:12]} cannot be read with "
    said = {
        "undecryptable": f"at its tip savepoint 2's snapshot ({name}) does not decrypt or authenticate with this machine's identity ({name}.age at commit {tip[:12]}: it does not decrypt or authenticate (",
        "sealed": sealed,
        "last sealed": sealed,
    }[replaced]
    verify = precompact(project.path, "verify")
    assert verify.returncode == 1 and verify.stdout.startswith("✗") and said in verify.stdout, verify.stdout
    as_json = json.loads(precompact(project.path, "verify", "--json").stdout)
    assert as_json["verdict"]["status"] == "FAILED" and said in as_json["verdict"]["detail"], as_json["verdict"]
    flushed = precompact(project.path, "flush")
    assert flushed.returncode == 1 and said in flushed.stdout, flushed.stdout
    listed = precompact(project.path, "status", "--remote")
    if replaced == "last sealed":  # status --remote reads the last snapshot at the tip itself
        said = f"FAILED: savepoint 3's snapshot at its tip is not sealed to this machine's identity, which opens its index: {name}.age at commit {tip[:12]} cannot be read with "
    assert listed.returncode == 1 and said in listed.stdout and "✓" not in listed.stdout, listed.stdout

    other = tmp_path / "stranger-identity.txt"
    other.write_text(str(stranger) + "\n")
    other.chmod(0o600)
    elsewhere = precompact(project.path, "verify", env={"PRECOMPACT_IDENTITY": str(other)})
    assert elsewhere.returncode == 4 and not elsewhere.stdout.startswith("✓"), elsewhere.stdout
    assert "opens none of the recipients your savepoints are sealed to" in elsewhere.stdout, elsewhere.stdout


def test_a_savepoint_at_the_tip_after_a_gap_no_earlier_copy_reaches_is_named_left_out(project, tmp_path):
    """review13a F2, a gap *and* a later line: the branch rewound to savepoint 3's commit, then a
    tip whose index holds your signed 1, 3 and 4 (2's line and file gone; 4 is at the tip only).
    The longest chain is 1..3 in the history: `restore` restores it and names 4 as left out, at
    the tip only after the gap (exit 1), never a chain that skips 2."""
    _saved(project, tmp_path, 1, name="fourth.jsonl")
    held = _status(project.path)["savepoints"]
    third = held[2]["commit"]
    run_git(project.remote, "update-ref", f"refs/heads/{project.branch}", third)
    fourth = held[3]["snapshot_file"]
    index = project.logs / "precompact-savepoint.jsonl"
    kept = [line for line in index.read_bytes().splitlines(keepends=True) if json.loads(line).get("sequence") != 2]
    _rewrite_remote(
        project,
        tmp_path,
        {INDEX_COPY: b"".join(kept), held[1]["snapshot_file"]: None, fourth: (project.path / fourth).read_bytes()},
    )
    tip = _remote_tip(project)
    clone, env = _second_machine(project, tmp_path)
    restored = precompact(clone, "restore", "--json", env=env)
    assert restored.returncode == 1, restored.stdout + restored.stderr
    document = json.loads(restored.stdout)
    assert [s["sequence"] for s in document["restored"]] == [1, 2, 3], document
    assert (document["complete"], document["commit"]) == (False, third), document
    assert document["foreign"].startswith(
        f"at {tip[:12]}, its index holds your savepoints 1, 3, 4 with savepoint 2 missing from the middle, an earlier copy in its history holds savepoints 1..3 unbroken: savepoint 2 was dropped by a later commit (a line deleted from the index, or a rollback); savepoint 4, at the tip only after the gap, is left out"
    ), document["foreign"]


def _churned(project: Project, tmp_path: Path, replay_first: bool, churned: str, pairs: int) -> None:
    """Anyone who can push (no force) puts commits on the branch: with `replay_first`, one whose
    tree is savepoint 1's (a rollback); then `pairs` pairs that each remove the file of logs/
    whose path holds `churned` (the first) and put it back (review14a F3: the index copy, more changes of it
    than the walk's WALK newest; review16a F1: savepoint 1's snapshot, a file the tip's index
    names, more adding commits than the log of them reads)."""
    work = tmp_path / "mate"
    run_git(tmp_path, "clone", "-q", "-b", project.branch, str(project.remote), str(work))
    mate = ("-c", "user.name=mate", "-c", "user.email=m@x")
    if replay_first:
        first = run_git(work, "rev-list", "--reverse", "HEAD").split()[0]
        replay = run_git(work, *mate, "commit-tree", f"{first}^{{tree}}", "-p", "HEAD", "-m", "tidy").strip()
        run_git(work, "reset", "-q", "--hard", replay)
    path = next(p for p in run_git(work, "ls-files", "logs/").split() if churned in p)
    for n in range(pairs):
        run_git(work, "rm", "-q", path)
        run_git(work, *mate, "commit", "-q", "-m", f"gone {n}")
        run_git(work, "checkout", "HEAD~1", "--", path)
        run_git(work, *mate, "commit", "-q", "-m", f"back {n}")
    run_git(work, "push", "-q", "origin", project.branch)


def _index_churned(project: Project, tmp_path: Path, replay_first: bool) -> None:
    """review14a F3: 202 commits that each change the index copy (`_churned`)."""
    _churned(project, tmp_path, replay_first, "precompact-savepoint.jsonl", 101)


def test_a_rollback_hidden_behind_more_index_commits_than_the_walk_reads_is_still_found(project, tmp_path):
    """review14a F3: a rollback to savepoint 1's tree, then 202 commits that delete and put back
    the index copy. The walk also reads the commits that added the snapshot files the tip's index
    does not name (padding those is review16a F1's test, below): a new machine's `status
    --remote` fails the tip and names the walk back, `restore` brings back 1..3 (exit 1, not complete), never "✓ complete"
    with savepoint 1 alone."""
    pushed = _remote_tip(project)
    _index_churned(project, tmp_path, replay_first=True)
    clone, env = _second_machine(project, tmp_path)
    listed = precompact(clone, "status", "--remote", env=env)
    assert listed.returncode == 1 and "✓" not in listed.stdout, listed.stdout
    assert f"`precompact restore` walks back for them, restoring from commit {pushed[:12]}" in listed.stdout
    restored = precompact(clone, "restore", "--json", env=env)
    document = json.loads(restored.stdout)
    assert restored.returncode == 1 and document["complete"] is False, restored.stdout
    assert [s["sequence"] for s in document["restored"]] == [1, 2, 3], document
    assert "and the 3 that added a snapshot file the index lacks, or its newest line's" in document["walked"], document[
        "walked"
    ]
    verify = precompact(clone, "verify", env=env)
    assert verify.returncode != 0 and "✓" not in verify.stdout.splitlines()[0], verify.stdout


def test_a_gap_behind_more_index_commits_than_the_walk_reads_is_filled_from_the_commit_that_added_the_newest(
    project, tmp_path
):
    """review14a F3, its gap variant: savepoint 2's line and file deleted, then 202 commits that
    churn the index copy. The commit that added the newest line's snapshot holds 1..3 unbroken:
    `restore` brings them back from there (exit 1, not complete, the walk named)."""
    pushed = _remote_tip(project)
    _line_deleted(project, tmp_path, 2)
    _index_churned(project, tmp_path, replay_first=False)
    clone, env = _second_machine(project, tmp_path)
    listed = precompact(clone, "status", "--remote", env=env)
    assert listed.returncode == 1 and "savepoint 2 is missing" in listed.stdout, listed.stdout
    assert f"restoring from commit {pushed[:12]}" in listed.stdout, listed.stdout
    restored = precompact(clone, "restore", "--json", env=env)
    document = json.loads(restored.stdout)
    assert restored.returncode == 1 and document["complete"] is False, restored.stdout
    assert [s["sequence"] for s in document["restored"]] == [1, 2, 3], document


def test_a_rollback_no_copy_within_the_walk_outruns_is_not_called_whole_and_names_where_to_read_on(
    project, tmp_path, monkeypatch
):
    """review14a F3: with the walk cut to one commit and without the commits that added snapshot
    files, no copy read holds a longer chain than the rolled-back tip: `status --remote` still
    fails the tip (never ✓) naming `precompact restore --at` the next commit back, and `restore`
    is not complete (exit 1)."""
    from precompact.verifier import team

    work = tmp_path / "mate"
    run_git(tmp_path, "clone", "-q", "-b", project.branch, str(project.remote), str(work))
    mate = ("-c", "user.name=mate", "-c", "user.email=m@x")
    first = run_git(work, "rev-list", "--reverse", "HEAD").split()[0]
    replay = run_git(work, *mate, "commit-tree", f"{first}^{{tree}}", "-p", "HEAD", "-m", "tidy").strip()
    run_git(work, "push", "-q", "origin", f"{replay}:refs/heads/{project.branch}")
    behind = run_git(work, "rev-parse", "HEAD").strip()  # the commit before the replay
    clone, env = _second_machine(project, tmp_path)
    monkeypatch.setattr(team, "WALK", 1)
    walk = team._walk
    monkeypatch.setattr(team, "_walk", lambda *args, also=(), **named: walk(*args, **named))
    monkeypatch.chdir(clone)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    listed = invoke("status", "--remote")
    assert listed.exit_code == 1 and "✓" not in listed.output, listed.output
    assert "added 2 snapshot file(s) its index does not name, and no copy of the index read holds a longer chain" in (
        listed.output
    ), listed.output
    assert f"`precompact restore --at {behind[:12]}` reads on from there" in listed.output, listed.output
    restored = invoke("restore", "--json")
    assert restored.exit_code == 1, restored.output
    document = json.loads(restored.output[restored.output.index("{") :])  # after the progress line
    assert document["complete"] is False and [s["sequence"] for s in document["restored"]] == [1], restored.output


def _padded_past_the_adding_log(project: Project, tmp_path: Path, monkeypatch, replay_first: bool = True) -> str:
    """review16a F1: with `replay_first`, a rollback to savepoint 1's tree; then 5 pairs of
    commits that remove and re-add a snapshot file the tip's signed index names, more adding
    commits than the log of them reads (its bound cut to 4 here: 131,072 commits push in 24 s).
    A second machine's clone is the working directory, in-process with that bound; the newest
    commit the log leaves unread (the fifth newest: it lists 4) is returned."""
    from precompact.remote import gitstore

    _churned(project, tmp_path, replay_first, "precompact-saves/", 5)
    clone, env = _second_machine(project, tmp_path)
    monkeypatch.setattr(gitstore, "SNAPSHOT_COMMITS_LIMIT", 4)
    monkeypatch.chdir(clone)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return run_git(tmp_path / "mate", "rev-parse", "HEAD~4").strip()


def test_a_rollback_behind_more_adding_commits_than_the_log_reads_is_still_walked_back(project, tmp_path, monkeypatch):
    """review16a F1: a log of the adding commits cut at its bound is never "nothing unnamed":
    the history is walked all the same, so `status --remote` and `verify` fail the tip (exit 1,
    no ✓) and `restore` brings back 1..3 from the commit that pushed them (exit 1, not
    complete), never "✓ complete" with savepoint 1 alone."""
    pushed = _remote_tip(project)
    _padded_past_the_adding_log(project, tmp_path, monkeypatch)
    listed = invoke("status", "--remote")
    assert listed.exit_code == 1 and "✓" not in listed.output, listed.output
    assert f"`precompact restore` walks back for them, restoring from commit {pushed[:12]}" in listed.output
    restored = invoke("restore", "--json")
    document = json.loads(restored.output[restored.output.index("{") :])  # after the progress line
    assert restored.exit_code == 1 and document["complete"] is False, restored.output
    assert [s["sequence"] for s in document["restored"]] == [1, 2, 3], document
    assert document["commit"] == pushed and "savepoints 2..3 were dropped" in document["foreign"], document
    verify = invoke("verify")
    assert verify.exit_code == 1 and "✓" not in verify.output.splitlines()[0], verify.output


def test_a_cut_adding_log_with_no_longer_copy_read_is_not_called_whole(project, tmp_path, monkeypatch):
    """review16a F1, where the walk (cut to one commit, without the adding commits) stops before
    the history's end and finds no longer chain: the tip is still not called whole, `status
    --remote` fails it naming `precompact restore --at` the newest commit the log left unread
    (exit 1), and `restore` is not complete (exit 1)."""
    from precompact.verifier import team

    unread = _padded_past_the_adding_log(project, tmp_path, monkeypatch)
    monkeypatch.setattr(team, "WALK", 1)
    walk = team._walk
    monkeypatch.setattr(team, "_walk", lambda *args, also=(), **named: walk(*args, **named))
    listed = invoke("status", "--remote")
    assert listed.exit_code == 1 and "✓" not in listed.output, listed.output
    assert (
        f"the commits of its history from {unread[:12]} back were not read for the snapshot files they added "
        "(over 4 commits), and no copy of the index read"
    ) in listed.output, listed.output
    assert (
        f"the commits from {unread[:12]} back were not read for the snapshot files they added (over 4 commits), so a "
        f"savepoint added by one of them was not looked for: `precompact restore --at {unread[:12]}` reads on from there"
    ) in listed.output, listed.output
    restored = invoke("restore", "--json")
    document = json.loads(restored.output[restored.output.index("{") :])
    assert restored.exit_code == 1 and document["complete"] is False, restored.output
    assert [s["sequence"] for s in document["restored"]] == [1], document


def test_adding_commits_past_the_log_over_a_history_the_walk_reads_whole_are_no_rollback(
    project, tmp_path, monkeypatch
):
    """review16a F1's padding with no rollback under it: the log of the adding commits is cut,
    but the walk reads every commit that changed the index copy, so every copy it held, and none
    holds more than the tip. The tip stays whole (`status --remote` ✓, exit 0; `restore`
    complete with 1..3): commits anyone can push cannot fail a branch for good."""
    _padded_past_the_adding_log(project, tmp_path, monkeypatch, replay_first=False)
    listed = invoke("status", "--remote")
    assert listed.exit_code == 0 and listed.output.startswith("✓"), listed.output
    restored = invoke("restore", "--json")
    document = json.loads(restored.output[restored.output.index("{") :])
    assert restored.exit_code == 0 and document["complete"] is True, restored.output
    assert [s["sequence"] for s in document["restored"]] == [1, 2, 3], document


def _relabelled(project: Project, tmp_path: Path, sequences: tuple[int, ...], unsigned: bool, remove: bool) -> None:
    """review15a F8: one commit on top (anyone who can push) whose index puts your lines of
    `sequences` under another instance's name, "someone-else" (with `unsigned`, their signature
    lines dropped: another instance's lines need no signature of yours); with `remove`, those
    lines leave yours and their snapshot files go; without, the relabelled copies are added."""
    kept, gone = [], {}
    for raw in (project.logs / "precompact-savepoint.jsonl").read_bytes().splitlines(keepends=True):
        event = json.loads(raw)
        if event.get("sequence") not in sequences:
            kept.append(raw)
            continue
        if remove and event.get("snapshot_file"):
            gone[event["snapshot_file"]] = None
        if not remove:
            kept.append(raw)
        if unsigned and event["event"] != "SAVEPOINT_CREATED":
            continue
        event["instance"] = "someone-else"
        kept.append((json.dumps(event, separators=(",", ":")) + "\n").encode())
    _rewrite_remote(project, tmp_path, {INDEX_COPY: b"".join(kept), **gone})


@pytest.mark.parametrize("unsigned", [False, True], ids=["signatures-left", "unsigned"])
def test_a_rollback_disguised_as_another_instances_lines_is_failed_and_walked_back(project, tmp_path, unsigned):
    """review15a F8: your lines 2 and 3 put under another instance's name at the tip, their
    snapshots removed. A snapshot file counts as named only by a line a root of yours vouches
    for, so the history is walked: a new machine's `status --remote` fails the tip naming the
    rollback and the commit `restore` reads from (exit 1), and `restore` brings back 1..3 saying
    what the tip dropped (exit 1, not complete), as for the lines simply deleted."""
    pushed = _remote_tip(project)
    _relabelled(project, tmp_path, (2, 3), unsigned=unsigned, remove=True)
    clone, env = _second_machine(project, tmp_path)
    listed = precompact(clone, "status", "--remote", env=env)
    assert listed.returncode == 1 and "✓" not in listed.stdout, listed.stdout
    assert "savepoints 2..3 were dropped by a later commit" in listed.stdout, listed.stdout
    assert f"`precompact restore` walks back for them, restoring from commit {pushed[:12]}" in listed.stdout
    restored = precompact(clone, "restore", "--json", env=env)
    document = json.loads(restored.stdout)
    assert restored.returncode == 1 and document["complete"] is False, restored.stdout + restored.stderr
    assert [s["sequence"] for s in document["restored"]] == [1, 2, 3], document
    assert document["commit"] == pushed and "savepoints 2..3 were dropped" in document["foreign"], document


def test_another_instances_lines_no_key_of_yours_signed_fail_your_own_branch(project, tmp_path):
    """review15a F8: a copy of your line 1 under another instance's name, unsigned, added to the
    tip's index (nothing of yours dropped). A logs/ holds another instance's lines only where
    this project saved under it, under your key: the machine that pushed fails the tip (`verify`,
    `flush`: exit 1), and so does a new machine's `status --remote`; its `restore` names the line
    and is not complete (exit 1), restoring your 1..3."""
    _relabelled(project, tmp_path, (1,), unsigned=True, remove=False)
    said = "its index holds 1 line(s) of another instance that no key of this project signed (someone-else #1 first)"
    verify = precompact(project.path, "verify")
    assert verify.returncode == 1 and said in verify.stdout and "✓" not in verify.stdout, verify.stdout
    clone, env = _second_machine(project, tmp_path)
    listed = precompact(clone, "status", "--remote", env=env)
    assert listed.returncode == 1 and said in listed.stdout and "✓" not in listed.stdout, listed.stdout
    restored = precompact(clone, "restore", "--json", env=env)
    document = json.loads(restored.stdout)
    assert restored.returncode == 1 and document["complete"] is False, restored.stdout + restored.stderr
    assert [s["sequence"] for s in document["restored"]] == [1, 2, 3], document
    assert said in document["foreign"], document
    flushed = precompact(project.path, "flush")
    assert flushed.returncode == 1 and said in flushed.stdout, flushed.stdout


def test_the_walk_reads_each_distinct_index_copy_once_and_names_the_adding_commits_it_did_not_read(
    tmp_path, monkeypatch
):
    """review15a F1: commits that each add a snapshot file are as cheap to push as those that
    change the index copy. Of them too the walk reads the WALK newest, and each distinct index
    copy once (here one copy under every commit): the tip is not called whole, and the newest
    commit not read is named for `precompact restore --at`."""
    from precompact.remote import gitstore
    from precompact.verifier import team

    remote = tmp_path / "r.git"
    run_git(tmp_path, "init", "-q", "--bare", str(remote))
    index = b'{"event":"SAVEPOINT_CREATED","instance":"x","sequence":1}\n' * 1000
    stream = [b"blob\nmark :1\ndata %d\n" % len(index), index, b"\nblob\nmark :2\ndata 0\n\n"]
    stream.append(b"commit refs/heads/b\ncommitter a <a@b> 1 +0000\ndata 1\nx\nM 100644 :1 " + INDEX_COPY.encode())
    for n in range(8):
        stream.append(
            b"\n\ncommit refs/heads/b\ncommitter a <a@b> %d +0000\ndata 1\nx\nM 100644 :2 logs/precompact-saves/junk-%d.json"
            % (n + 2, n)
        )
    subprocess.run(["git", "-C", str(remote), "fast-import", "--quiet"], input=b"".join(stream) + b"\n", check=True)
    repo = gitstore.git.Repo(str(remote))
    commits = run_git(remote, "rev-list", "refs/heads/b").split()  # newest first
    read: list[tuple[str, str]] = []
    files_at = gitstore.files_at
    monkeypatch.setattr(
        gitstore, "files_at", lambda repo, wanted, keys: read.extend(wanted) or files_at(repo, wanted, keys)
    )
    monkeypatch.setattr(team, "WALK", 3)
    target = gitstore.Target(repository=remote, remote="origin", branch="b", keys=gitstore.CLEAR)
    found = team.rollback(repo, target, commits[0], "x", {}, [], gitstore.commits_adding_snapshots(repo, commits[0]))
    assert found is not None and found[0] is None, found
    assert found[2] == f"older commits were not read: `precompact restore --at {commits[3][:12]}` reads on from there"
    assert read == [(commits[-1], INDEX_COPY)], read  # the commit that wrote it, once
