"""The chain-off key rotation docs/security.md documents ("point `chain.keypair` at a new keypair
and run `precompact trust`"), before the machine that wrote the lines flushed (review13a F5): its
lines on the remote are still signed by the key the user just stopped trusting. Every command
names the step that ends it, `precompact flush` on that machine, and none advises trusting the
previous key again first. Real git remote (a bare repository), chain off."""

from __future__ import annotations

import json
import shutil

import pytest

from support.commands import precompact, run_git
from support.projects import Project, new_project
from test_restore import _saved, _second_machine

FLUSH_HERE = "the key this machine signed them with before chain.keypair changed"
TRUST_OLD = "chain.authority = "


@pytest.fixture
def rotated(tmp_path) -> tuple[Project, str, str, object]:
    """A project with three pushed savepoints signed by its key, then chain.keypair pointed at a
    new keypair and `precompact trust` run: the project, the old and new public keys, trust's
    outcome."""
    from solders.keypair import Keypair

    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    _saved(project, tmp_path, 3)
    old = str(project.authority().pubkey())
    new = Keypair()
    new_file = tmp_path / "new-id.json"
    new_file.write_text(json.dumps(list(bytes(new))))
    config = project.path / ".precompact.toml"
    config.write_text(config.read_text().replace(str(project.keypair_file), str(new_file)))
    trusted = precompact(project.path, "trust", "--yes", "--json")
    assert trusted.returncode == 0, trusted.stderr
    shutil.copy(new_file, project.keypair_file)  # _second_machine copies it: a new machine holds the new key only
    return project, old, str(new.pubkey()), trusted


def test_trust_of_a_new_keypair_names_the_flush_that_re_signs_this_machines_lines(rotated):
    _, old, new, trusted = rotated
    said = json.loads(trusted.stdout)["resign"]
    assert said.startswith(f"3 savepoint(s) this machine wrote are signed by {old}, not by this file's key {new}")
    assert "run `precompact flush` now" in said and said in trusted.stderr


def test_trust_says_nothing_of_re_signing_when_the_keypair_did_not_change(tmp_path):
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    _saved(project, tmp_path, 1)
    config = project.path / ".precompact.toml"
    config.write_text(config.read_text() + "\n# touched\n")
    trusted = precompact(project.path, "trust", "--yes", "--json")
    assert trusted.returncode == 0 and json.loads(trusted.stdout)["resign"] is None, trusted.stdout


def test_verify_after_the_rotation_names_the_flush_here_and_never_the_previous_key_as_yours(rotated):
    """Every check holds (each line's signature by the previous key, this machine's tag on the
    same line in logs/, the commits and bytes): what is left is the flush here that re-signs
    them, so the branch is not verified yet (exit 4, queued), never FAILED."""
    project, old, new, _ = rotated
    for argv in (("verify",), ("status", "--remote")):
        done = precompact(project.path, *argv)
        assert done.returncode == 4 and "FAILED" not in done.stdout, done.stdout
        assert f"queued: the lines of savepoints 1..3 on the branch are signed by {old}, {FLUSH_HERE}" in done.stdout
        assert f"run `precompact flush` here, which re-signs them with {new}" in done.stdout, done.stdout
        assert TRUST_OLD not in done.stdout and "init --force" not in done.stdout, done.stdout
        assert "puts your index back on top" not in done.stdout, done.stdout
    as_json = precompact(project.path, "verify", "--json")
    verdict = json.loads(as_json.stdout)
    assert as_json.returncode == 4 and verdict["verdict"]["status"] == "not verified", as_json.stdout
    assert FLUSH_HERE in verdict["verdict"]["detail"] and verdict["findings"] == [], as_json.stdout
    # The step named ends it: flush re-signs and pushes the index, after which every check holds.
    flushed = precompact(project.path, "flush")
    assert flushed.returncode == 0 and "✓ Layer 2: up to date" in flushed.stdout, flushed.stdout
    verify = precompact(project.path, "verify")
    assert verify.returncode == 0 and verify.stdout.startswith("✓ 3 savepoint(s) verified"), verify.stdout


def test_a_new_machine_holding_only_the_new_key_is_told_to_flush_where_the_lines_were_written_first(rotated, tmp_path):
    project, old, new, _ = rotated
    clone, env = _second_machine(project, tmp_path)
    restored = precompact(clone, "restore", env=env)
    assert restored.returncode == 1, restored.stdout
    said = restored.stdout + restored.stderr
    flush_there = f"run `precompact flush` on the machine that wrote them, which re-signs them with {new}"
    assert flush_there in said, said
    # The step that would make the previous key count again comes after, never first.
    assert said.index(flush_there) < said.index(f"{TRUST_OLD}{old}"), said
    flushed = precompact(project.path, "flush")
    assert flushed.returncode == 0, flushed.stdout
    again = precompact(clone, "restore", "--json", env=env)
    assert again.returncode == 0 and len(json.loads(again.stdout)["restored"]) == 3, again.stdout
    verify = precompact(clone, "verify", env=env)
    assert verify.returncode == 0 and verify.stdout.startswith("✓ 3 savepoint(s) verified"), verify.stdout


def test_a_check_that_fails_beside_the_previous_keys_lines_is_failed_not_queued(rotated, tmp_path):
    """The lines wait for the flush here, but the tip's last snapshot was rewritten by a commit
    on top: that check failed, and the verdict is FAILED (exit 1), not "queued"."""
    project, _, _, _ = rotated
    work = tmp_path / "rewrite"
    run_git(tmp_path, "clone", "-q", "-b", project.branch, str(project.remote), str(work))
    last = max(run_git(work, "ls-files", "logs/precompact-saves/").split())
    (work / last).write_bytes(b"rewritten")
    mate = ("-c", "user.name=x", "-c", "user.email=x@x")
    run_git(work, *mate, "commit", "-q", "-am", "rewrite the last snapshot")
    run_git(work, "push", "-q", "origin", project.branch)
    done = precompact(project.path, "verify")
    assert done.returncode == 1 and done.stdout.startswith("✗ first broken link"), done.stdout
    assert "queued: the lines" not in done.stdout, done.stdout
    listed = precompact(project.path, "status", "--remote")
    assert listed.returncode == 1 and "queued: the lines" not in listed.stdout, listed.stdout
