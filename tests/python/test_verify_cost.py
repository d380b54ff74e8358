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
