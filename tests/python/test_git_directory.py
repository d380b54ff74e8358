"""Layer 2 lives in precompact's own git directory (issue 39's last item): the savepoint branches
and their objects are in a bare repository under the user's state directory, so no git process
of Layer 2 reads the project's `.git/config` (nor its includes, hooks, attributes or filters),
and the project's own `git gc` can prune nothing a savepoint needs. Archives whose branches are
in the project's repository (older versions) are copied in on first use.

Each test runs the real binary as the user would: savepoint, flush, verify, resurrect."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from precompact.edges.cli import EXIT_LAYER_PENDING, EXIT_NOT_VERIFIED
from support.commands import precompact, run_git
from support.projects import Project, new_project, store, store_git
from support.transcript_gen import generate


def out(result: subprocess.CompletedProcess) -> str:
    return result.stdout + result.stderr


def saved(project: Project, tmp_path: Path, name: str) -> None:
    transcript = generate(tmp_path / f"{name}.jsonl", 20_000, project=project.path)
    result = precompact(project.path, "savepoint", "--transcript", str(transcript.path), "--session-id", name)
    assert result.returncode == EXIT_LAYER_PENDING, out(result)  # the chain is off


def all_layers_hold(project: Project, count: int) -> None:
    """flush, verify and resurrect all succeed, and the remote holds `count` savepoints."""
    flushed = precompact(project.path, "flush")
    assert flushed.returncode == 0, out(flushed)
    verified = precompact(project.path, "verify", "--all")
    assert verified.returncode == 0 and verified.stdout.startswith(f"✓ {count} savepoint(s) verified"), out(verified)
    resurrected = precompact(project.path, "resurrect")
    assert resurrected.returncode == 0 and "Git backup: ✓ verified" in resurrected.stdout, out(resurrected)


def project_holds_no_savepoint(project: Project) -> None:
    """The project's repository has no savepoint ref and no object of the savepoint branch."""
    assert run_git(project.path, "for-each-ref", "refs/heads/precompact/", "refs/remotes/origin/precompact/") == ""
    tip = store_git(project.path, "rev-parse", f"refs/heads/{project.branch}").strip()
    absent = subprocess.run(["git", "cat-file", "-e", tip], cwd=project.path, capture_output=True, check=False)
    assert absent.returncode != 0, "the savepoint commit is not in the project's object store"


def payload(tmp_path: Path) -> tuple[Path, Path]:
    """A program that leaves a marker file when anything runs it."""
    marker, script = tmp_path / "RAN", tmp_path / "payload.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\ncat >/dev/null\nexit 0\n')
    script.chmod(0o755)
    return marker, script


def hooks_everywhere(project: Project, script: Path) -> None:
    hooks = project.path / "evil-hooks"
    hooks.mkdir()
    for name in ("post-commit", "reference-transaction", "pre-push", "post-update", "pre-auto-gc", "post-checkout"):
        shutil.copy(script, hooks / name)
    run_git(project.path, "config", "core.hooksPath", str(hooks))
    run_git(project.path, "config", "core.fsmonitor", str(script))


def filter_driver(project: Project, script: Path) -> None:
    (project.path / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (project.path / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    for key in ("filter.evil.clean", "filter.evil.smudge", "filter.evil.process", "diff.evil.textconv"):
        run_git(project.path, "config", key, str(script))
    run_git(project.path, "config", "filter.evil.required", "true")


def included_file(project: Project, script: Path) -> None:
    more = project.path / ".git" / "more.inc"
    more.write_text(f"[core]\n\tfsmonitor = {script}\n\tsshCommand = {script}\n\thooksPath = {project.path}\n")
    run_git(project.path, "config", "include.path", str(more))


def unreadable_include(project: Project, script: Path) -> None:
    """An include git cannot parse: every git process that reads the project's configuration
    fails, so Layer 2 working at all shows that none of its processes reads it."""
    (project.path / ".git" / "broken.inc").write_text("[core\n\tfsmonitor = {script}\n")
    with (project.path / ".git" / "config").open("a") as f:
        f.write("[include]\n\tpath = broken.inc\n")


def eager_gc(project: Project, script: Path) -> None:
    for key, value in (
        ("gc.auto", "1"),
        ("gc.autoPackLimit", "1"),
        ("gc.pruneExpire", "now"),
        ("gc.reflogExpire", "now"),
    ):
        run_git(project.path, "config", key, value)


HOSTILE = {
    "hooks and fsmonitor": hooks_everywhere,
    "filter drivers by attributes": filter_driver,
    "an include setting program keys": included_file,
    "an include git cannot parse": unreadable_include,
    "gc at every command": eager_gc,
}


@pytest.mark.parametrize("hostile", HOSTILE)
def test_the_projects_git_configuration_never_reaches_layer_2(tmp_path, hostile):
    project = new_project(tmp_path, "p", git_layer=True, chain_layer=False)
    saved(project, tmp_path, "first")
    assert precompact(project.path, "flush").returncode == 0
    marker, script = payload(tmp_path)
    HOSTILE[hostile](project, script)

    saved(project, tmp_path, "second")
    all_layers_hold(project, 2)
    assert not marker.exists(), marker.read_text()
    (project.path / ".git" / "broken.inc").write_text("")  # so that the test's own git reads the project
    project_holds_no_savepoint(project)


def test_the_users_gc_in_the_project_prunes_nothing_a_savepoint_needs(tmp_path):
    project = new_project(tmp_path, "p", git_layer=True, chain_layer=False)
    for name in ("first", "second"):
        saved(project, tmp_path, name)
    assert precompact(project.path, "flush").returncode == 0
    # The user tidies up: every reflog expired, everything unreachable pruned at once.
    run_git(project.path, "reflog", "expire", "--expire=now", "--all")
    run_git(project.path, "gc", "--quiet", "--prune=now")
    project_holds_no_savepoint(project)
    all_layers_hold(project, 2)


def old_layout(project: Project) -> tuple[str, str]:
    """The archive as versions before precompact's own git directory left it: the savepoint
    branch, its remote-tracking copy, their objects and the ciphertext cache in the project's
    repository, no git directory of precompact's. Returns the branch's and the tracking ref's tips."""
    directory = store(project.path)
    branch, tracking = f"refs/heads/{project.branch}", f"refs/remotes/origin/{project.branch}"
    run_git(project.path, "fetch", "-q", str(directory), f"{branch}:{branch}", f"{tracking}:{tracking}")
    shutil.copytree(directory / "precompact-ciphertexts", project.path / ".git" / "precompact-ciphertexts")
    tips = (
        store_git(project.path, "rev-parse", branch).strip(),
        store_git(project.path, "rev-parse", tracking).strip(),
    )
    shutil.rmtree(directory)
    return tips


def test_an_archive_with_its_branches_in_the_project_is_copied_in_on_first_use(tmp_path):
    project = new_project(tmp_path, "p", git_layer=True, chain_layer=False)
    for name in ("first", "second"):
        saved(project, tmp_path, name)
    assert precompact(project.path, "flush").returncode == 0
    branch_tip, tracking_tip = old_layout(project)
    remote_before = run_git(project.remote, "rev-parse", f"refs/heads/{project.branch}").strip()

    verified = precompact(project.path, "verify", "--all")
    assert verified.returncode == 0 and verified.stdout.startswith("✓ 2 savepoint(s) verified"), out(verified)
    assert store_git(project.path, "rev-parse", f"refs/heads/{project.branch}").strip() == branch_tip
    assert store_git(project.path, "rev-parse", f"refs/remotes/origin/{project.branch}").strip() == tracking_tip
    assert (store(project.path) / "precompact-ciphertexts").is_dir()
    assert run_git(project.path, "rev-parse", f"refs/heads/{project.branch}").strip() == branch_tip, "left as it was"

    saved(project, tmp_path, "third")
    all_layers_hold(project, 3)
    remote_after = run_git(project.remote, "rev-parse", f"refs/heads/{project.branch}").strip()
    run_git(project.remote, "merge-base", "--is-ancestor", remote_before, remote_after)  # no force-push
    assert store_git(project.path, "rev-parse", f"refs/heads/{project.branch}").strip() == remote_after


def test_an_interrupted_copy_is_done_again_and_never_moves_a_branch_the_store_has(tmp_path):
    project = new_project(tmp_path, "p", git_layer=True, chain_layer=False)
    saved(project, tmp_path, "first")
    assert precompact(project.path, "flush").returncode == 0
    branch_tip, _ = old_layout(project)
    assert precompact(project.path, "verify").returncode == 0
    # As if killed before the copy was recorded as whole: the marker is gone, the refs stay.
    shutil.rmtree(store(project.path) / "precompact-adopted")
    saved(project, tmp_path, "second")
    all_layers_hold(project, 2)
    newer = store_git(project.path, "rev-parse", f"refs/heads/{project.branch}").strip()
    assert newer != branch_tip
    shutil.rmtree(store(project.path) / "precompact-adopted")
    assert precompact(project.path, "verify").returncode == 0
    assert store_git(project.path, "rev-parse", f"refs/heads/{project.branch}").strip() == newer, "not moved back"
    assert store_git(project.path, "for-each-ref", "refs/precompact/adopting/") == ""


def test_precompacts_git_directory_is_private_and_outside_the_project(tmp_path):
    project = new_project(tmp_path, "p", git_layer=True, chain_layer=False)
    saved(project, tmp_path, "first")
    assert precompact(project.path, "flush").returncode == 0
    directory = store(project.path)
    assert not directory.is_relative_to(project.path)
    assert (directory.parent.stat().st_mode & 0o777) == 0o700
    config = (directory / "config").read_text()
    assert str(project.path) not in config and "hooksPath" not in config and "fsmonitor" not in config


def test_a_push_that_fails_after_every_savepoint_landed_leaves_flush_queued_not_up_to_date(tmp_path):
    """The remote holds every savepoint's commit but not the branch's tip here (an index-only
    commit, the signatures the remote's copy verifies by elsewhere; a push cut on silence leaves
    it so), and the push that would land it fails: flush says the newest savepoint is queued,
    naming why (exit 3, `--json` state queued), never "up to date"; once the remote takes pushes
    again, the next flush lands it (exit 0)."""
    project = new_project(tmp_path, "p", git_layer=True, chain_layer=False)
    saved(project, tmp_path, "first")
    assert precompact(project.path, "flush").returncode == 0
    branch = f"refs/heads/{project.branch}"
    tip = store_git(project.path, "rev-parse", branch).strip()
    ahead = store_git(project.path, "commit-tree", f"{tip}^{{tree}}", "-p", tip, "-m", "index only").strip()
    store_git(project.path, "update-ref", branch, ahead, tip)
    lock = project.remote / f"{branch}.lock"  # the remote's ref locked: it lists, it refuses a push
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    try:
        flushed = precompact(project.path, "flush", "--json")
        assert flushed.returncode == EXIT_LAYER_PENDING, flushed.stdout + flushed.stderr
        layer_2 = json.loads(flushed.stdout)["layer_2"]
        assert layer_2["state"] == "queued", layer_2
        assert layer_2["problem"].startswith("the remote holds its commit but not the index copy after it"), layer_2
    finally:
        lock.unlink()
    landed = precompact(project.path, "flush")
    assert landed.returncode == 0 and "✓ Layer 2: up to date" in landed.stdout, landed.stdout + landed.stderr
    run_git(project.remote, "merge-base", "--is-ancestor", ahead, branch)  # fails the test unless it landed


def _remote_removed(project: Project) -> None:
    project.remote.rename(project.remote.with_name("moved.git"))


def _remote_answering_garbage(project: Project) -> None:
    """Where the remote was, a folder that is no repository: git reads garbage and fails."""
    project.remote.rename(project.remote.with_name("moved.git"))
    project.remote.mkdir()
    (project.remote / "HEAD").write_text("not a ref\n")
    (project.remote / "packed-refs").write_bytes(b"\x00garbage\xff\n")


def _remote_a_fifo(project: Project) -> None:
    """git.url a `file://` URL naming a FIFO: nothing a repository is read there."""
    fifo = project.path.parent / "remote.fifo"
    os.mkfifo(fifo)
    project.set_git_url(fifo.as_uri())


UNREADABLE_REMOTES = {
    "removed": _remote_removed,
    "answering garbage": _remote_answering_garbage,
    "a file:// URL naming a FIFO": _remote_a_fifo,
}


@pytest.mark.parametrize("unreadable", UNREADABLE_REMOTES)
def test_flush_after_everything_is_pushed_never_says_up_to_date_of_a_remote_it_could_not_read(tmp_path, unreadable):
    """Every savepoint pushed, the remote then cannot be read (gone, garbage, its URL a FIFO):
    flush cannot know whether it still holds them, so it says what it did not check
    and why (exit 3, `--json` state queued, naming the remote), never "✓ up to date", nor do
    `status --remote` (exit 1) and `verify` (exit 4); once the
    remote answers again, the next flush checks it and is up to date (exit 0)."""
    project = new_project(tmp_path, "p", git_layer=True, chain_layer=False)
    saved(project, tmp_path, "first")
    assert precompact(project.path, "flush").returncode == 0
    UNREADABLE_REMOTES[unreadable](project)
    flushed = precompact(project.path, "flush")
    assert flushed.returncode == EXIT_LAYER_PENDING, out(flushed)
    assert "✓ Layer 2" not in flushed.stdout and "origin could not be read" in flushed.stdout, out(flushed)
    as_json = precompact(project.path, "flush", "--json")
    assert as_json.returncode == EXIT_LAYER_PENDING, out(as_json)
    layer_2 = json.loads(as_json.stdout)["layer_2"]
    assert layer_2["state"] == "queued" and "was not checked" in layer_2["problem"], layer_2
    # The other commands that read the remote give no ✓ for it either.
    listed = precompact(project.path, "status", "--remote")
    assert listed.returncode == 1 and "✓" not in listed.stdout and "origin" in listed.stderr, out(listed)
    verified = precompact(project.path, "verify")
    assert verified.returncode == EXIT_NOT_VERIFIED and "✓" not in verified.stdout, out(verified)
    assert "origin could not be read to check that it holds it" in verified.stdout, out(verified)
    moved = project.remote.with_name("moved.git")
    if moved.exists():
        shutil.rmtree(project.remote, ignore_errors=True)
        moved.rename(project.remote)
    project.set_git_url(str(project.remote))
    landed = precompact(project.path, "flush")
    assert landed.returncode == 0 and "✓ Layer 2: up to date" in landed.stdout, out(landed)
