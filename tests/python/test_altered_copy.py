"""This machine's copy of a savepoint altered while git holds a good one (#48): `resurrect`'s
report names the check that failed and against which root, and `dropped` and the viewer read
git's verified copy as `resurrect` does, saying so; a savepoint whose checks fail otherwise is
still refused."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from precompact.local import chunks
from support.browser import viewer
from support.commands import precompact
from support.projects import Project, new_project
from support.transcript_gen import generate


def saved_in_git(tmp_path: Path) -> tuple[Project, Path]:
    """One savepoint of a several-chunk conversation, pushed (in clear), and its snapshot file."""
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False, encrypted=False)
    transcript = generate(tmp_path / "session.jsonl", 300_000, project=project.path)
    done = precompact(project.path, "savepoint", "--transcript", str(transcript.path))
    assert done.returncode == 3, done.stderr  # saved, Layer 3 off
    [snapshot_file] = (project.logs / "precompact-saves").glob("snapshot_*")
    return project, snapshot_file


def last_line(output: str) -> str:
    return output.strip().splitlines()[-1]


def test_the_report_names_an_altered_chunk_and_says_git_copy_was_used(tmp_path):
    project, snapshot_file = saved_in_git(tmp_path)
    first = chunks.refs(json.loads(snapshot_file.read_bytes()))[0]
    chunk = project.logs / chunks.CHUNKS_DIR / first.sha256
    chunk.write_bytes(chunk.read_bytes().replace(b"Request", b"Rekuest", 1))

    report = precompact(project.path, "resurrect")
    assert report.returncode == 1, "a check failed: exit 1, as docs/cli.md says"
    assert "Integrity: ✓ verified (hash matches the one this machine recorded;" in report.stdout
    assert (
        f"Local chunks: ✗ FAILED (1 chunk(s) in logs/precompact-chunks/ altered (first {first.sha256}): they do not hash "
        "to the names the checked snapshot lists; git's copies, which do, were used)"
    ) in report.stdout
    assert last_line(report.stdout) == (
        "LOCAL COPY ALTERED: Local chunks failed; what was restored is git's copy, which passed every other check "
        "(the altered file stays as evidence); run `precompact verify`."
    )


def test_the_report_names_an_altered_snapshot_against_the_root_it_was_held_to(tmp_path):
    project, snapshot_file = saved_in_git(tmp_path)
    snapshot_file.write_bytes(snapshot_file.read_bytes().replace(b'"', b"'", 1))

    report = precompact(project.path, "resurrect")
    assert report.returncode == 1
    altered = next(line for line in report.stdout.splitlines() if line.startswith("Local copy: "))
    assert altered.startswith(f"Local copy: ✗ FAILED ({snapshot_file} was altered: sha256 ")
    assert altered.endswith("… as this machine's index recorded)")
    assert last_line(report.stdout).startswith("LOCAL COPY ALTERED: Local copy failed; what was restored is git's copy")
    assert "✓" not in altered


def test_dropped_and_the_viewer_read_gits_copy_when_the_local_one_is_altered(tmp_path):
    project, snapshot_file = saved_in_git(tmp_path)
    snapshot_file.write_bytes(snapshot_file.read_bytes().replace(b'"', b"'", 1))

    listed = precompact(project.path, "dropped", "1")
    assert listed.returncode == 0, listed.stderr
    assert "git has no usable copy" not in listed.stderr
    [note] = listed.stderr.strip().splitlines()
    assert note.startswith(
        f"note: this machine's copy of savepoint 1 of Trial #1 failed its check ({snapshot_file} was altered"
    )
    assert note.endswith("git's copy, which passed every other check, is read instead")
    assert listed.stdout.startswith("savepoint 1 of Trial #1: ") and "Request 1:" in listed.stdout
    as_json = precompact(project.path, "dropped", "1", "--json")
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["dropped"]

    with viewer(project.path, tmp_path / "view.log") as url:
        page = httpx.get(url + "savepoint", params={"instance": "Trial #1", "sequence": 1}, timeout=60)
        conversation = httpx.get(url + "conversation", params={"instance": "Trial #1", "sequence": 1}, timeout=60)
    for shown in (page, conversation):
        assert shown.status_code == 200, shown.text
        assert "git has no usable copy" not in shown.text
        assert "git&#39;s copy, which passed every other check, is read instead" in shown.text
    assert "Request 1:" in conversation.text


def test_dropped_still_refuses_when_git_has_no_copy(tmp_path):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "session.jsonl", 100_000, project=project.path)
    assert precompact(project.path, "savepoint", "--transcript", str(transcript.path)).returncode == 3
    [snapshot_file] = (project.logs / "precompact-saves").glob("snapshot_*")
    snapshot_file.write_bytes(snapshot_file.read_bytes().replace(b'"', b"'", 1))
    refused = precompact(project.path, "dropped", "1")
    assert refused.returncode == 1
    assert "is altered and git has no usable copy" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
