"""`precompact verify` catches and names each kind of tampering, across the three layers."""

from __future__ import annotations

import json

from click.testing import CliRunner

from precompact.edges.cli import EXIT_NOT_VERIFIED, main
from support.commands import INSTANCE, initialized_and_funded, invoke, run_git, statuses
from support.projects import savepoint_branch, store, store_git


def setup_three(workspace, localnet, monkeypatch):
    project, _ = workspace
    initialized_and_funded(project, monkeypatch, localnet.url)
    for _ in range(3):
        assert invoke("savepoint", "--no-transcript").exit_code == 0
    return project


def verify(*args):
    return CliRunner().invoke(main, ["verify", *args], catch_exceptions=False)


def test_intact_savepoints_verify_across_all_layers(workspace, localnet, monkeypatch):
    setup_three(workspace, localnet, monkeypatch)
    result = verify("--all")
    assert result.exit_code == 0, result.output
    assert (
        "✓ 3 savepoint(s) verified" in result.output
        and "record at sequence 3 verified" in result.output
        and "3 savepoint(s) linked to it" in result.output
    )
    assert verify("--sequence", "2").exit_code == 0


def test_an_edited_snapshot_byte_is_named(workspace, localnet, monkeypatch):
    project = setup_three(workspace, localnet, monkeypatch)
    path = project / statuses(project)[1]["snapshot_file"]
    data = bytearray(path.read_bytes())
    data[-5] ^= 1
    path.write_bytes(bytes(data))
    result = verify()
    assert result.exit_code == 1
    assert result.output.startswith(
        f"✗ first broken link: {INSTANCE} savepoint 2 [layer 1]: snapshot in local file {path} hashes to sha256:"
    )
    file_result = verify(str(path))
    assert file_result.exit_code == 1 and "is not any savepoint in the index" in file_result.output


def test_edited_and_deleted_index_lines_are_named(workspace, localnet, monkeypatch):
    project = setup_three(workspace, localnet, monkeypatch)
    index = project / "logs" / "precompact-savepoint.jsonl"
    lines = index.read_text().splitlines()
    created = [i for i, l in enumerate(lines) if '"SAVEPOINT_CREATED"' in l]
    edited = json.loads(lines[created[0]])
    edited["snapshot_hash"] = "sha256:" + "0" * 64
    lines[created[0]] = json.dumps(edited)
    index.write_text("\n".join(lines) + "\n")
    result = verify()
    assert (
        result.exit_code == 1
        and "savepoint 1 [layer 1]" in result.output
        and "but this machine's index recorded sha256:" + "0" * 64 in result.output
    )

    del lines[created[1]]
    index.write_text("\n".join(lines) + "\n")
    assert "savepoint 2 [index]: missing from the index" in verify().output

    index.write_text("\n".join(lines[:2] + ["{torn"] + lines[2:]) + "\n")
    assert "index [index]: line 3 of precompact-savepoint.jsonl does not parse" in verify().output


def test_rewritten_git_history_is_named(workspace, localnet, monkeypatch):
    """Rewound here and on the remote: savepoints 2 and 3 are on neither branch. (The branch here
    alone behind the remote's is another machine of the instance having saved: no rewrite,
    test_team.py::test_one_instance_on_two_machines_verifies_after_the_other_saved_and_this_one_restored.)"""
    project = setup_three(workspace, localnet, monkeypatch)
    _, remote = workspace
    first_commit = statuses(project)[0]["commit"]
    store_git(project, "update-ref", f"refs/heads/{savepoint_branch(INSTANCE)}", first_commit)
    run_git(remote, "update-ref", f"refs/heads/{savepoint_branch(INSTANCE)}", first_commit)
    result = verify()
    assert result.exit_code == 1
    assert (
        "savepoint 2 [layer 2]" in result.output
        and f"is no longer on branch {savepoint_branch(INSTANCE)}" in result.output
    )


def test_an_on_chain_record_that_differs_from_the_index_is_named(workspace, localnet, monkeypatch):
    project = setup_three(workspace, localnet, monkeypatch)
    # Rewrite the last savepoint consistently on disk and in the index: only the chain can tell.
    row = statuses(project)[2]
    path = project / row["snapshot_file"]
    doc = json.loads(path.read_bytes())
    doc["nonce"] = "00" * 16
    import hashlib

    from precompact.local.canonical import canonical

    data = canonical(doc)
    path.write_bytes(data)
    new_hash = hashlib.sha256(data).hexdigest()
    index = project / "logs" / "precompact-savepoint.jsonl"
    index.write_text(index.read_text().replace(row["snapshot_hash"], new_hash))
    result = verify()
    assert result.exit_code == 1
    assert (
        "[layer 3]: snapshot_hash on chain sha256:" in result.output and "differs from the savepoint's" in result.output
    )


def test_chain_unreachable_is_reported_not_failed_and_not_verified(workspace, localnet, monkeypatch):
    """The chain is a layer the configuration asks for: while it cannot be read, no savepoint is
    held on every layer, so no ✓ and exit 4, not a failure (1)."""
    setup_three(workspace, localnet, monkeypatch)
    localnet.stop()
    result = verify()
    assert result.exit_code == EXIT_NOT_VERIFIED, result.output
    assert "✓" not in result.output and "[chain]: not verified (cluster" in result.output
    assert result.output.startswith("✗ 3 of 3 savepoint(s) not verified: ")


def test_verify_and_resurrect_give_one_verdict_on_a_git_copy_of_other_bytes(tmp_path):
    """Layer 2's verdict is written once (verdicts.git_copy): a commit the index names that holds
    other bytes under the snapshot's name fails both `verify` and `resurrect`, in the same words
    but for the root each holds the bytes to."""
    import os
    import subprocess

    from precompact.local import savepoint_log
    from support.commands import precompact
    from support.projects import new_project
    from support.transcript_gen import generate

    project = new_project(tmp_path, "p", git_layer=True, chain_layer=False, encrypted=False)
    transcript = generate(tmp_path / "session.jsonl", 20_000, project=project.path)
    assert (
        precompact(project.path, "savepoint", "--transcript", str(transcript.path)).returncode == 3
    )  # saved; the chain is off
    [savepoint] = savepoint_log.savepoints(project.logs)
    branch = f"refs/heads/{project.branch}"
    other = (
        subprocess.run(
            ["git", "--git-dir", str(store(project.path)), "hash-object", "-w", "--stdin"],
            input=b"{}",
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    index_file = {**os.environ, "GIT_INDEX_FILE": str(tmp_path / "forged-index")}
    for args in (
        ["read-tree", branch],
        ["update-index", "--cacheinfo", f"100644,{other},{savepoint.snapshot_file}"],
    ):
        subprocess.run(["git", "--git-dir", str(store(project.path)), *args], env=index_file, check=True)
    tree = subprocess.run(
        ["git", "--git-dir", str(store(project.path)), "write-tree"],
        env=index_file,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    forged = store_git(project.path, "commit-tree", tree, "-p", branch, "-m", "forged").strip()
    store_git(project.path, "update-ref", branch, forged)
    savepoint_log.mark(project.logs, savepoint, savepoint_log.Event.LAYER_2_COMMITTED, commit=forged)

    said = f"{savepoint.snapshot_file} at commit {forged[:12]} does not hash to the sha256:{savepoint.snapshot_hash}"
    verified = precompact(project.path, "verify")
    assert verified.returncode == 1 and f"{said} this machine's index recorded" in verified.stdout, verified.stdout
    resurrected = precompact(project.path, "resurrect")
    assert resurrected.returncode == 1, resurrected.stdout
    assert (
        "Git backup: ✗ FAILED" in resurrected.stdout and f"{said} this machine's index recorded" in resurrected.stdout
    )


def _moved(project, to):
    """`project` moved with a plain `mv` (its configuration approved again where it is now):
    precompact's git directory is named after the project's path, so the new one starts empty."""
    from support.projects import trust

    project.path.rename(to)
    trust(to)
    return to


def _git(repository, *args):
    import subprocess

    return subprocess.run(["git", *args], cwd=repository, check=True, capture_output=True, text=True).stdout.strip()


def test_an_empty_index_is_not_verified_while_the_remote_holds_savepoints(tmp_path):
    """No ✓ over zero savepoints while the remote holds some: `verify` reads the remote's branch
    itself (a copy of the project starts with an empty git directory, so its refs say nothing);
    a new project with nothing anywhere is "nothing to verify", saying what was read, and one
    whose remote cannot be read is not verified."""
    import shutil

    from support.commands import precompact
    from support.projects import new_project, trust

    project = new_project(tmp_path, "p", git_layer=True, chain_layer=False)
    fresh = precompact(project.path, "verify")
    assert fresh.returncode == 0, fresh.stdout
    assert fresh.stdout.startswith(
        f"✓ nothing to verify: the index holds no savepoint, origin's {project.branch} does not exist, chain off"
    )
    assert precompact(project.path, "savepoint", "--no-transcript").returncode == 3  # saved; the chain is off
    # Moved, not copied beside it: a copy on this machine would write the same chain, which
    # `trust` refuses (docs/setup.md, "Two projects on one machine").
    copy = tmp_path / "copy"
    shutil.move(project.path, copy)
    trust(copy)
    (copy / "logs" / "precompact-savepoint.jsonl").unlink()

    said = precompact(copy, "verify")
    assert said.returncode == EXIT_NOT_VERIFIED and "✓" not in said.stdout, said.stdout
    assert said.stdout.startswith("✗ the remote holds 1 savepoint(s) that logs/ lacks: run `precompact restore`")
    document = json.loads(precompact(copy, "verify", "--json").stdout)
    assert document["verified"] is False and document["verdict"]["status"] == "not verified"
    assert "run `precompact restore`" in document["verdict"]["detail"]

    unread = new_project(tmp_path, "q", git_layer=True, chain_layer=False)
    unread.set_git_url(str(tmp_path / "nowhere.git"))
    unreadable = precompact(unread.path, "verify")
    assert unreadable.returncode == EXIT_NOT_VERIFIED and "✓" not in unreadable.stdout, unreadable.stdout
    assert unreadable.stdout.startswith(
        "✗ not verified: logs/ holds no savepoint, and whether the others do is not known: origin could not be read"
    )


def test_an_empty_index_is_not_verified_while_the_chain_holds_savepoints(tmp_path, localnet):
    """The configured instance's on-chain record is read even when logs/ holds no savepoint:
    the record at sequence 1 makes the run not verified, naming `precompact restore`."""
    from support.commands import precompact
    from support.projects import new_project

    made = new_project(tmp_path, "p", git_layer=False, chain_layer=True, cluster=localnet.url, airdrop=True)
    assert precompact(made.path, "savepoint", "--no-transcript").returncode == 3  # saved; git is off
    (made.logs / "precompact-savepoint.jsonl").unlink()
    said = precompact(made.path, "verify")
    assert said.returncode == EXIT_NOT_VERIFIED and "✓" not in said.stdout, said.stdout
    assert said.stdout.startswith(
        f"✗ the on-chain record of {made.instance} holds savepoint 1, logs/ none: run `precompact restore`"
    )


def test_a_moved_project_verifies_against_the_remote_and_flush_takes_its_branch_up(tmp_path):
    """After a plain `mv` the store has no savepoint branch: that is no rewrite. `verify` checks
    the commits against the remote's branch (✓, exit 0), and `flush` takes that branch up in the
    new store before it says it is up to date."""
    from support.commands import precompact
    from support.projects import new_project

    project = new_project(tmp_path, "p", git_layer=True, chain_layer=False)
    for _ in range(2):
        assert precompact(project.path, "savepoint", "--no-transcript").returncode == 3  # the chain is off
    moved = _moved(project, tmp_path / "moved")
    verified = precompact(moved, "verify")
    assert verified.returncode == 0, verified.stdout
    assert verified.stdout.startswith("✓ 2 savepoint(s) verified: snapshots, index, hash chain, git (held by origin)")
    flushed = precompact(moved, "flush")
    assert flushed.returncode == 0 and "✓ Layer 2: up to date" in flushed.stdout, flushed.stdout
    tip = _git(project.remote, "rev-parse", f"refs/heads/{project.branch}")
    assert store_git(moved, "rev-parse", f"refs/heads/{project.branch}").strip() == tip


def test_a_moved_project_still_catches_a_rewritten_remote_and_a_lost_branch_is_no_rewrite(tmp_path):
    """A moved project's commits are held to the remote's branch: one that exists without them
    is a rewrite (exit 1, and `flush` names them instead of ✓); a remote with no branch at all is
    not verified (exit 4), never called a rewrite."""
    from support.commands import precompact
    from support.projects import new_project

    project = new_project(tmp_path, "p", git_layer=True, chain_layer=False)
    assert precompact(project.path, "savepoint", "--no-transcript").returncode == 3  # the chain is off
    ref = f"refs/heads/{project.branch}"
    tree = _git(project.remote, "rev-parse", f"{ref}^{{tree}}")
    forged = _git(
        project.remote, "-c", "user.name=X", "-c", "user.email=x@x.invalid", "commit-tree", tree, "-m", "forged"
    )
    _git(project.remote, "update-ref", ref, forged)

    moved = _moved(project, tmp_path / "moved")
    rewritten = precompact(moved, "verify")
    assert rewritten.returncode == 1, rewritten.stdout
    assert "savepoint 1 [layer 2]: commit" in rewritten.stdout
    assert f"is no longer on origin's branch {project.branch}: history was rewritten" in rewritten.stdout
    flushed = precompact(moved, "flush")
    assert flushed.returncode == 3 and "✓ Layer 2" not in flushed.stdout, flushed.stdout
    assert "is neither in precompact's git directory here" in flushed.stdout

    _git(project.remote, "update-ref", "-d", ref)
    again = _moved(type(project)(moved, project.remote, project.keypair_file, project.instance), tmp_path / "again")
    lost = precompact(again, "verify")
    assert lost.returncode == EXIT_NOT_VERIFIED and "rewritten" not in lost.stdout, lost.stdout
    assert f"origin has no branch {project.branch}" in lost.stdout
    resurrected = precompact(again, "resurrect")  # its own git check words it as verify does
    assert "rewritten" not in resurrected.stdout and f"origin has no branch {project.branch}" in resurrected.stdout, (
        resurrected.stdout
    )
