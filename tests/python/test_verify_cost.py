"""What `precompact verify --all` costs as an archive grows (#48): the git processes it starts do
not grow with the number of savepoints. It once started four per savepoint (the chunk naming
key located and read, the chunks located, a merge-base against the remote's branch): 28 s over
1,000 savepoints on a quiet machine, against the 5 s docs/performance.md promises. Counted
through a `git` on PATH that logs each run and hands it to the real one, on archives of 5 and 25
savepoints (git layer on, encrypted, pushed), made as scripts/bench.py makes its 1,000."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from precompact.config import settings as configuration
from precompact.local import savepoint_log, snapshot
from precompact.remote import gitstore
from precompact.verifier import signed
from support.commands import precompact
from support.projects import new_project
from support.transcript_gen import generate


def archive(root: Path, savepoints: int) -> Path:
    path = new_project(root, f"verify-{savepoints}", git_layer=True, chain_layer=False).path
    loaded = configuration.load(path)
    transcript = generate(root / f"session-{savepoints}.jsonl", 20_000, project=path)
    session = snapshot.Session("cost", str(transcript.path), str(path), "auto")
    for _ in range(savepoints):
        snapshot.create_savepoint(snapshot.Settings.of(loaded), session)
    target = gitstore.Target.of(loaded)
    problems = savepoint_log.record_outcomes(
        loaded.logs, gitstore.sync(gitstore.open_repository(target), target, loaded.logs, signed.vouching(loaded))
    )
    assert not problems, problems
    return path


def git_processes_of_verify(root: Path, project: Path) -> list[str]:
    """The git command lines `precompact verify --all` ran in `project`."""
    wrapper, log = root / "counting-bin", root / f"{project.name}-git.log"
    wrapper.mkdir(exist_ok=True)
    git = wrapper / "git"
    real = shutil.which("git")
    # The log's path is written into the wrapper: precompact runs git with an environment of its
    # own making (boundary/git_env.py), which keeps PATH and drops other variables.
    git.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec {real} "$@"\n')
    git.chmod(0o755)
    done = precompact(
        project,
        "verify",
        "--all",
        env={"PATH": f"{wrapper}{os.pathsep}{os.environ['PATH']}"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "savepoint(s) verified" in done.stdout
    return log.read_text().splitlines()


@pytest.mark.slow
def test_verify_all_starts_as_many_git_processes_for_25_savepoints_as_for_5(tmp_path):
    few = git_processes_of_verify(tmp_path, archive(tmp_path, 5))
    many = git_processes_of_verify(tmp_path, archive(tmp_path, 25))
    assert few, "the wrapper saw verify's git processes"
    assert len(many) == len(few), f"{len(few)} git processes over 5 savepoints, {len(many)} over 25"


def test_verify_reads_the_index_copy_at_the_remote_tip_once(tmp_path, monkeypatch):
    """The branch check and the compaction summaries' check judge one read of the index copy at
    the remote's tip (it was read for each: up to 64 MB twice)."""
    from precompact.verifier import verify

    project = archive(tmp_path, 1)
    asked: list[str] = []
    files_at = gitstore.files_at

    def counted(repo, wanted, keys=gitstore.CLEAR):
        asked.extend(path for _, path in wanted)
        return files_at(repo, wanted, keys)

    monkeypatch.setattr(gitstore, "files_at", counted)
    report = verify.verify(configuration.load(project))
    assert report.remote is not None and report.remote.exists, report.remote
    assert asked.count(f"logs/{savepoint_log.INDEX_NAME}") == 1, asked


def test_restore_lists_the_commits_adding_snapshots_once(tmp_path, monkeypatch):
    """`restore` asks which commit pushed each snapshot file once a run: the rollback check and
    the restore share the answer (each asked it again: the git log whose cost grows with the
    square of the branch's commits, three times over)."""
    from precompact.ops import logs_restore

    project = archive(tmp_path, 2)
    tips: list[str] = []
    listed = gitstore.commits_adding_snapshots

    def counted(repo, tip):
        tips.append(tip)
        return listed(repo, tip)

    monkeypatch.setattr(gitstore, "commits_adding_snapshots", counted)
    found = logs_restore.restore(configuration.load(project), lambda done, total: None)
    assert found.present == 2 and found.complete, found
    assert len(tips) == 1, tips


def test_status_remote_walks_a_history_past_the_trees_bound_and_names_what_neither_read(tmp_path, monkeypatch):
    """`status --remote` weighs a rollback of your branch against the snapshot files its history
    added, read newest first within gitstore.TREES_READ_LIMIT: past it (cut to a byte here) the
    history is walked back instead, VERIFIED only when the walk read every index copy; where the
    walk stops early too (cut to one commit here), the first commit not read is named, never
    VERIFIED."""
    from precompact import api
    from precompact.verifier import team, verdicts

    project = archive(tmp_path, 2)
    loaded = configuration.load(project)
    assert not api.flush(loaded).layer_2_problems  # signs the lines and pushes them
    [judged] = team.instances(loaded)
    assert judged.yours and judged.check.status == verdicts.VERIFIED, judged.check
    monkeypatch.setattr(gitstore, "TREES_READ_LIMIT", 1, raising=False)
    [judged] = team.instances(loaded)
    assert judged.check.status == verdicts.VERIFIED, judged.check
    monkeypatch.setattr(team, "WALK", 1)
    walk = team._walk
    monkeypatch.setattr(team, "_walk", lambda *args, also=(), **named: walk(*args, **named))
    [judged] = team.instances(loaded)
    assert judged.check.status != verdicts.VERIFIED, judged.check
    assert (
        f"from {judged.commit[:12]} back were not read for the snapshot files they added (the trees git compares"
        in (judged.check.detail)
    ), judged.check
    assert f"`precompact restore --at {judged.commit[:12]}` reads on from there" in judged.check.detail
