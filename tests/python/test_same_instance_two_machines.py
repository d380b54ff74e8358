"""The same instance on two machines (docs/reliability.md, setup.md: keypair and identity copied),
both saving while the other does (review13a F3). Real git remotes: a bare repository the two
clones push to, as the reproduction did. A push that races the other machine's is never merged
over savepoints logs/ lacks (two chains), every command names the one step that joins them, and
that step, followed, ends it; a branch an older version already merged that way is called two
chains, not a rollback, on the machine whose savepoints it put out of the index."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest

from support import transcript_gen
from support.commands import precompact, run_git
from support.projects import Project, new_project
from test_cli_contract import schema
from test_restore import _remote_tip, _saved, _second_machine, _status

TWO_CHAINS = "two chains of Trial #1"


@pytest.fixture
def project(tmp_path) -> Project:
    made = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    _saved(made, tmp_path, 3)
    return made


def _save(cwd: Path, env: dict | None, tmp_path: Path, name: str, size: int) -> dict:
    transcript = transcript_gen.generate(tmp_path / name, target_bytes=size, project=cwd, planted=[name])
    done = precompact(cwd, "savepoint", "--transcript", str(transcript.path), "--json", env=env)
    assert done.returncode == 3, done.stdout + done.stderr
    return json.loads(done.stdout)


def _forked(project: Project, tmp_path: Path) -> tuple[Path, dict]:
    """Machine B restores 1..3; A then pushes its 4 and 5, while B saves its own 4 not knowing
    of them (B last fetched at its restore): B's push races A's."""
    clone, env = _second_machine(project, tmp_path)
    assert precompact(clone, "restore", env=env).returncode == 0
    _saved(project, tmp_path, 2, name="a.jsonl")
    return clone, env


def _fixes(output: str) -> None:
    """The words name the two chains and the one step that joins them, and no step that loops."""
    from precompact.local import savepoint_log

    assert TWO_CHAINS in output and savepoint_log.TWO_CHAINS_FIX in output, output
    assert "puts your index back on top" not in output, output
    assert "rollback" not in output, output
    assert "run `precompact restore`" not in output.replace(savepoint_log.TWO_CHAINS_FIX, ""), output


def test_a_push_racing_the_same_instance_on_another_machine_is_not_merged_over_its_savepoints(project, tmp_path):
    clone, env = _forked(project, tmp_path)
    before = _remote_tip(project)
    saved = _save(clone, env, tmp_path, "b.jsonl", 30_000)
    # B's savepoint 4 waits (queued, exit 3 as every queued save), naming the two chains: the
    # remote's branch is A's, untouched, and no merge of B's tree was pushed over it.
    assert saved["savepoint"]["sequence"] == 4 and saved["layer_2"]["state"] == "queued", saved
    _fixes(saved["layer_2"]["problem"])
    assert (
        "the remote holds 2 savepoint(s) that logs/ lacks, and logs/ holds 1 that the remote lacks (#4)"
        in (saved["layer_2"]["problem"])
    )
    assert _remote_tip(project) == before
    assert "put on top of the remote's branch" not in run_git(project.remote, "log", "--format=%s", project.branch)
    # Neither machine is told all is well, nor that it was rolled back.
    flushed = precompact(clone, "flush", env=env)
    assert flushed.returncode == 3 and "✓ Layer 2" not in flushed.stdout, flushed.stdout + flushed.stderr
    _fixes(flushed.stdout + flushed.stderr)
    verify_b = precompact(clone, "verify", env=env)
    assert verify_b.returncode != 0 and TWO_CHAINS in verify_b.stdout, verify_b.stdout
    verify_a = precompact(project.path, "verify")
    assert verify_a.returncode == 0 and verify_a.stdout.startswith("✓ 5 savepoint(s) verified"), verify_a.stdout


def test_the_step_named_for_two_chains_ends_them_on_the_machine_whose_push_was_refused(project, tmp_path):
    """B follows the step its push named: logs/ moved aside, the remote's chain (A's 1..5)
    restored, B's session saved again on top. Its branch here held its own #4's commit, which
    restore leaves behind (logs/ records none of its commits now), so the next commit holds A's
    snapshots and B's: every machine verifies all six, and a third machine restores them."""
    clone, env = _forked(project, tmp_path)
    _save(clone, env, tmp_path, "b.jsonl", 30_000)
    shutil.move(clone / "logs", tmp_path / "logs-aside-b")
    restored = precompact(clone, "restore", "--json", env=env)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert [s["sequence"] for s in json.loads(restored.stdout)["restored"]] == [1, 2, 3, 4, 5]
    again = _save(clone, env, tmp_path, "b.jsonl", 30_000)
    assert again["savepoint"]["sequence"] == 6 and again["layer_2"]["state"] == "done", again
    for cwd, home in ((clone, env), (project.path, None)):
        if home is None:
            assert precompact(cwd, "restore").returncode == 0  # A takes B's #6
        verify = precompact(cwd, "verify", env=home)
        assert verify.returncode == 0 and verify.stdout.startswith("✓ 6 savepoint(s) verified"), verify.stdout
    third = tmp_path / "third"
    third.mkdir()
    clone3, env3 = _second_machine(project, third)
    done = precompact(clone3, "restore", "--json", env=env3)
    assert done.returncode == 0 and len(json.loads(done.stdout)["restored"]) == 6, done.stdout
    names = {s["snapshot_file"] for s in _status(clone3, env3)["savepoints"]}
    assert len(names) == 6 and all((clone3 / name).is_file() for name in names)


def _merged_as_older_versions_did(project: Project, clone: Path, env: dict, tmp_path: Path) -> str:
    """The branch a push of older versions left after that race: B's commit of its #4 merged over
    A's tip with B's tree (parents B's, A's), pushed as a fast-forward. Made here with git from B's
    commit, as `_merge_on_top` made it."""
    _save(clone, env, tmp_path, "b.jsonl", 30_000)
    [own] = [s for s in _status(clone, env)["savepoints"] if s["sequence"] == 4]
    # precompact's git directory of B: $XDG_STATE_HOME/precompact/git/<digest>.git (git_env)
    [directory] = (Path(env["XDG_STATE_HOME"]) / "precompact" / "git").glob("*.git")
    run_git(directory, "push", "-q", str(project.remote), f"{own['commit']}:refs/heads/b-side")
    work = tmp_path / "mate"
    run_git(tmp_path, "clone", "-q", "-b", project.branch, str(project.remote), str(work))
    run_git(work, "fetch", "-q", "origin", "b-side")
    mate = ("-c", "user.name=precompact", "-c", "user.email=p@x")
    merge = run_git(
        work, *mate, "commit-tree", "FETCH_HEAD^{tree}", "-p", "FETCH_HEAD", "-p", "HEAD", "-m", "merged"
    ).strip()
    run_git(work, "push", "-q", "origin", f"{merge}:refs/heads/{project.branch}")
    return merge


def test_a_branch_merged_over_this_machines_savepoints_is_two_chains_with_the_step_that_ends_them(project, tmp_path):
    """A, whose #4 and #5 the merge put out of the tip's index, is told two chains (B's #4 in
    place of its own, both signed by your key), not a rollback its next push undoes (that push
    is refused: it would put B's #4 out). The step named, followed on A, ends it."""
    clone, env = _forked(project, tmp_path)
    _merged_as_older_versions_did(project, clone, env, tmp_path)
    verify = precompact(project.path, "verify")
    assert verify.returncode == 1, verify.stdout
    _fixes(verify.stdout)
    assert "its index holds savepoint 4 signed by your key with other snapshots" in verify.stdout
    as_json = precompact(project.path, "verify", "--json")
    assert as_json.returncode == 1 and TWO_CHAINS in as_json.stdout, as_json.stdout
    flushed = precompact(project.path, "flush")
    assert flushed.returncode == 1 and "✓ Layer 2" not in flushed.stdout, flushed.stdout
    _fixes(flushed.stdout + flushed.stderr)
    _push_said_under_a_failed_layer(project, flushed.stdout)
    listed = precompact(project.path, "status", "--remote")
    assert listed.returncode == 1 and TWO_CHAINS in listed.stdout, listed.stdout

    shutil.move(project.path / "logs", tmp_path / "logs-aside-a")
    assert precompact(project.path, "restore").returncode == 0
    again = _save(project.path, None, tmp_path, "a.jsonl", 100_000)
    assert again["savepoint"]["sequence"] == 5 and again["layer_2"]["state"] == "done", again
    verify = precompact(project.path, "verify")
    assert verify.returncode == 0 and verify.stdout.startswith("✓ 5 savepoint(s) verified"), verify.stdout
    assert precompact(clone, "restore", env=env).returncode == 0
    verify_b = precompact(clone, "verify", env=env)
    assert verify_b.returncode == 0 and verify_b.stdout.startswith("✓ 5 savepoint(s) verified"), verify_b.stdout
    # A's commit was made on the merged tree (restore moved its branch there), so the tip holds
    # B's #4 too: a third machine restores all five from it.
    names = run_git(project.remote, "ls-tree", "-r", "--name-only", project.branch, "--", "logs/precompact-saves/")
    assert len(names.split()) == 5, names
    third = tmp_path / "third"
    third.mkdir()
    clone3, env3 = _second_machine(project, third)
    done = precompact(clone3, "restore", "--json", env=env3)
    assert done.returncode == 0 and len(json.loads(done.stdout)["restored"]) == 5, done.stdout


def _push_said_under_a_failed_layer(project: Project, said: str) -> None:
    """flush's Layer 2 verdict on a branch that is not this project's own is failed, in text and
    JSON alike: what the push did is said after the ✗, never as a ✓ or a state `done`."""
    [verdict, push] = [line for line in said.splitlines() if "Layer 2" in line or "the push itself" in line]
    assert verdict.startswith("✗ Layer 2: ") and push == "  (the push itself: nothing left queued to push)", said
    as_json = precompact(project.path, "flush", "--json")
    flushed = json.loads(as_json.stdout)
    assert as_json.returncode == 1 and flushed["layer_2"]["state"] == "failed", as_json.stdout
    assert flushed["layer_2"]["problem"] == flushed["foreign_branch"] and TWO_CHAINS in flushed["foreign_branch"]
    schema("flush").validate(flushed)  # the state the schema names


def test_a_rekey_racing_the_same_instance_on_another_machine_is_not_merged_over_its_savepoints(project, tmp_path):
    """`key rekey` commits this branch's tree re-encrypted and pushes it: the same rule as a
    savepoint's push. Refused (exit 1) naming what the remote holds that logs/ lacks and
    `precompact restore`; after it, the rekey lands on top of A's savepoints, every one kept."""
    from precompact.remote import encryption as remote_crypto

    clone, env = _forked(project, tmp_path)
    before = _remote_tip(project)
    added = remote_crypto.generate_identity(tmp_path / "teammate.txt")
    config = clone / ".precompact.toml"
    [mine] = tomllib.loads(config.read_text())["encryption"]["recipients"]
    config.write_text(config.read_text().replace(f'recipients = ["{mine}"]', f'recipients = ["{mine}", "{added}"]'))
    assert precompact(clone, "trust", "--yes", env=env).returncode == 0
    refused = precompact(clone, "key", "rekey", env=env)
    said = refused.stdout + refused.stderr
    assert refused.returncode == 1, said
    assert "the remote holds 2 savepoint(s) that logs/ lacks: run `precompact restore`" in said, said
    assert _remote_tip(project) == before
    assert precompact(clone, "restore", env=env).returncode == 0
    rekeyed = precompact(clone, "key", "rekey", env=env)
    assert rekeyed.returncode == 0 and "to 2 recipient(s)" in rekeyed.stdout, rekeyed.stdout + rekeyed.stderr
    for cwd, home in ((clone, env), (project.path, None)):
        verify = precompact(cwd, "verify", env=home)
        assert verify.returncode == 0 and verify.stdout.startswith("✓ 5 savepoint(s) verified"), verify.stdout
