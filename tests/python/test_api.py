"""The library as a library user drives it, through `precompact.api` alone: a project with the
chain off (Layer 2 pushing to a bare remote on this machine), savepoints saved from a Claude Code
transcript, then status, flush, verify, resurrect, recall, prune, dropped and export; and each
failure a user can cause, raised as a PrecompactError whose one line names the fix."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from precompact import api
from precompact.config import settings
from precompact.config.settings import Config
from precompact.errors import PrecompactError
from precompact.local import snapshot
from precompact.ops.layers import EXIT_ALL_DONE, EXIT_QUEUED
from support.commands import run_git
from support.projects import Project, new_project, savepoint_branch
from support.transcript_gen import Transcript, generate

BRANCH = savepoint_branch()
SUCCESSOR = "Next #2"


@pytest.fixture
def project(tmp_path) -> Project:
    return new_project(tmp_path, "project", git_layer=True, chain_layer=False)


@pytest.fixture
def transcript(tmp_path, project) -> Transcript:
    return generate(tmp_path / "session.jsonl", 20_000, project=project.path)


def load(project: Project, instance: str | None = None) -> Config:
    """The project's approved configuration, as the instance `instance` when one is given."""
    return settings.load(
        project.path, environ={**os.environ, **({"PRECOMPACT_INSTANCE": instance} if instance else {})}
    )


def save(config: Config, transcript: Transcript, session_id: str = "session-1") -> snapshot.WrittenSnapshot:
    written, outcome = api.save(config, session_id, str(transcript.path), str(config.root), "manual")
    assert outcome.exit_code == EXIT_ALL_DONE, outcome
    return written


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def statuses(found) -> dict[str, str]:
    return {name: check.status for name, check in found.checks.items()}


# --- saving and the state of the layers ----------------------------------------------------------


def test_save_writes_snapshots_whose_hashes_the_index_states_and_pushes_them(project, transcript):
    config = load(project)
    first, second = save(config, transcript), save(config, transcript)

    assert (first.sequence, second.sequence) == (1, 2)
    assert first.sha256 == sha256(first.path) and second.sha256 == sha256(second.path)
    assert second.prev_sha256 == first.sha256, "each snapshot links to the one before"
    savepoints, bad_lines = api.status(config)
    assert bad_lines == []
    assert [(s.sequence, s.snapshot_hash) for s in savepoints] == [(1, first.sha256), (2, second.sha256)]
    assert [s.layer_2 for s in savepoints] == ["PUSHED", "PUSHED"]
    assert run_git(project.remote, "rev-parse", BRANCH).strip() == savepoints[-1].commit
    assert [api.layer_3_state(config, s) for s in savepoints] == [api.CHAIN_OFF, api.CHAIN_OFF]


def test_a_save_the_remote_cannot_take_is_queued_and_flush_pushes_it_later(project, transcript):
    config = load(project)
    away = project.remote.rename(project.remote.with_name("away.git"))
    written, outcome = api.save(config, "session-1", str(transcript.path), str(project.path), "manual")

    assert written.sha256 == sha256(written.path), "Layer 1 does not wait for the remote"
    assert outcome.layer_2_problems and not outcome.layer_3_problems
    assert outcome.exit_code == EXIT_QUEUED
    [savepoint], _ = api.status(config)
    assert savepoint.layer_2 != "PUSHED"

    away.rename(project.remote)
    flushed = api.flush(config)
    assert (flushed.layer_2_problems, flushed.exit_code) == ([], EXIT_ALL_DONE)
    [savepoint], _ = api.status(config)
    assert savepoint.layer_2 == "PUSHED"
    assert run_git(project.remote, "rev-parse", BRANCH).strip() == savepoint.commit


# --- the verifier ----------------------------------------------------------------------------------


def test_verify_passes_what_was_saved_and_names_an_altered_snapshot(project, transcript):
    config = load(project)
    save(config, transcript)
    second = save(config, transcript)
    report = api.verify(config)
    assert (report.ok, report.checked, report.findings, report.unvouched) == (True, [1, 2], [], [])

    second.path.write_bytes(second.path.read_bytes().replace(b'"session-1"', b'"session-X"'))
    report = api.verify(config)
    assert not report.ok
    [finding] = report.findings
    assert (finding.sequence, finding.layer) == (2, "layer 1")
    assert second.sha256 in finding.problem, "the finding states the hash this machine recorded"
    assert api.verify(config, sequence=1).ok, "savepoint 1 alone is still sound"


def test_verify_of_a_sequence_that_does_not_exist_reports_it(project, transcript):
    config = load(project)
    save(config, transcript)
    report = api.verify(config, sequence=9)
    assert not report.ok
    assert [(f.sequence, f.problem) for f in report.findings] == [(9, "no such savepoint in the index")]


def test_verify_file_names_a_file_that_is_no_savepoint(project, transcript, tmp_path):
    config = load(project)
    written = save(config, transcript)
    assert api.verify_file(config, written.path).ok
    foreign = tmp_path / "foreign.json"
    foreign.write_text('{"format_version": 2}')
    [finding] = api.verify_file(config, foreign).findings
    assert "is not any savepoint in the index" in finding.problem


# --- bringing savepoints back --------------------------------------------------------------------


def test_resurrect_brings_back_the_newest_verified_and_writes_the_session_state_back(project, transcript):
    config = load(project)
    (project.path / "session_current.json").write_text(json.dumps({"current_priorities": ["ship the parser"]}))
    save(config, transcript)
    newest = save(config, transcript)
    (project.path / "session_current.json").write_text("lost\n")

    found = api.resurrect(config, restore_state=True)
    assert (found.savepoint.sequence, found.later, found.path) == (2, 0, newest.path)
    assert statuses(found) == {"integrity": "verified", "git": "verified", "chain": "off"}
    assert found.intact and found.verified
    assert found.restored_state == project.path / "session_current.json"
    assert json.loads(found.restored_state.read_text()) == {"current_priorities": ["ship the parser"]}

    older = api.resurrect(config, sequence=1)
    assert (older.savepoint.sequence, older.later) == (1, 1)


def test_resurrect_keeps_an_altered_snapshot_and_writes_gits_copy_beside_it(project, transcript):
    config = load(project)
    written = save(config, transcript)
    altered = written.path.read_bytes().replace(b'"session-1"', b'"session-X"')
    written.path.write_bytes(altered)

    found = api.resurrect(config)
    assert not found.intact
    assert statuses(found)["snapshot"] == "FAILED" and statuses(found)["git"] == "verified"
    assert written.path.read_bytes() == altered, "the altered file is evidence: kept as it is"
    assert found.path == written.path.with_name(written.path.stem + ".from-git.json")
    assert sha256(found.path) == written.sha256


def test_resurrect_into_a_successor_records_the_lineage_its_savepoints_carry(project, transcript):
    first = load(project)
    save(first, transcript)
    save(first, transcript)
    successor = load(project, SUCCESSOR)

    found = api.resurrect(successor, instance=first.instance, record_lineage=True)
    assert (found.instance, found.into, found.lineage) == (first.instance, SUCCESSOR, [first.instance, SUCCESSOR])
    save(successor, transcript, "session-2")
    assert json.loads(api.export(successor))["lineage"] == [first.instance, SUCCESSOR]


def test_verify_checks_each_instances_savepoints_against_their_own_files(project, transcript):
    first = load(project)
    save(first, transcript)
    save(load(project, SUCCESSOR), transcript, "session-2")
    assert api.verify(first).ok


def test_export_gives_the_whole_document_the_same_bytes_each_time(project, transcript):
    config = load(project)
    (project.path / "session_current.json").write_text(json.dumps({"current_priorities": ["ship the parser"]}))
    save(config, transcript)

    data = api.export(config)
    assert data == api.export(config, sequence=1)
    document = json.loads(data)
    assert document["sequence"] == 1
    assert document["session_state"]["content"] == {"current_priorities": ["ship the parser"]}
    history = json.dumps(document["conversation_history"])
    assert all(request in history for request in transcript.requests)


def test_dropped_lists_the_requests_when_no_compaction_summary_was_recorded(project, transcript):
    config = load(project)
    save(config, transcript)
    found = api.dropped(config)
    assert (found.sequence, found.summary) == (1, None)
    assert [f.text for f in found.facts if f.kind == "request"] == transcript.requests
    assert all(request in api.render_dropped(found) for request in transcript.requests)


# --- recall and prune ------------------------------------------------------------------------------


def test_recall_finds_the_saved_entry_that_holds_the_words(project, transcript):
    config = load(project)
    assert api.recall(config, "flaky test").notes == [f"{config.instance} has no savepoints yet: nothing to search"]
    save(config, transcript)

    results = api.recall(config, "explain the failure", role="user")
    wanted = [r for r in transcript.requests if "explain the failure" in r]
    assert sorted(hit.excerpt for hit in results.hits) == sorted(wanted)
    first = results.hits[0]
    shown = api.show(config, first.ref)
    [entry] = shown
    assert first.excerpt in entry.text and first.excerpt in "".join(api.render(shown))
    assert not api.recall(config, "pangolin").hits


def test_prune_removes_old_local_copies_that_git_holds_and_resurrect_brings_one_back(project, transcript):
    config = load(project)
    written = [save(config, transcript) for _ in range(3)]

    pruned = api.prune(config, keep=1)
    assert pruned.savepoints == [(config.instance, 1), (config.instance, 2)]
    assert pruned.freed_bytes > 0 and pruned.kept == []
    assert [w.path.exists() for w in written] == [False, False, True]
    assert [s.pruned for s in api.status(config)[0]] == [True, True, False]
    assert api.verify(config).ok, "verify checks git's copy of a pruned savepoint"

    found = api.resurrect(config, sequence=1)
    assert found.intact and sha256(written[0].path) == written[0].sha256
    assert api.prune(config, keep=3).savepoints == [], "nothing newer than the newest 3"


# --- the error family ------------------------------------------------------------------------------


# What the user does: (the call, whether the project holds three savepoints first, the error,
# words of its line).
REFUSED: dict[str, tuple[Callable[[Config], object], bool, str, str]] = {
    "resurrect a sequence that does not exist": (
        lambda c: api.resurrect(c, sequence=9),
        True,
        "ResurrectError",
        "has no savepoint 9; it has 1 to 3",
    ),
    "resurrect at a time that is not ISO 8601": (
        lambda c: api.resurrect(c, at="yesterday"),
        True,
        "WrongTime",
        "e.g. 2026-11-30T14:05:00Z",
    ),
    "resurrect before the first savepoint": (
        lambda c: api.resurrect(c, at="2000-01-01T00:00:00Z"),
        True,
        "ResurrectError",
        "has no savepoint at or before 2000-01-01T00:00:00Z; the first is from",
    ),
    "resurrect in a project without savepoints": (api.resurrect, False, "ResurrectError", f"branch {BRANCH} is not in"),
    "export a sequence that does not exist": (
        lambda c: api.export(c, sequence=9),
        True,
        "ResurrectError",
        "has no savepoint 9",
    ),
    "dropped in a project without savepoints": (api.dropped, False, "ResurrectError", "no savepoint of Trial #1 in"),
    "dropped of a sequence that does not exist": (
        lambda c: api.dropped(c, sequence=9),
        True,
        "ResurrectError",
        "has no savepoint 9",
    ),
    "prune keeping none": (lambda c: api.prune(c, keep=0), False, "PruneError", "--keep must be at least 1"),
    "recall without words": (lambda c: api.recall(c, " ... "), False, "WrongRequest", "no words to search for"),
    "recall by a role that does not exist": (
        lambda c: api.recall(c, "parser", role="wizard"),
        False,
        "RecallError",
        "is not one of user, assistant, tool, meta",
    ),
    "recall since a time that is not ISO 8601": (
        lambda c: api.recall(c, "parser", since="soon"),
        False,
        "WrongRequest",
        "e.g. 2026-11-30T14:05:00Z",
    ),
    "recall in a savepoint that does not exist": (
        lambda c: api.recall(c, "parser", savepoint=9),
        True,
        "RecallError",
        "`precompact status` lists its savepoints",
    ),
    "show a reference that is not one": (
        lambda c: api.show(c, "three"),
        False,
        "WrongRequest",
        "give SAVEPOINT:ENTRY or SAVEPOINT:FIRST-LAST",
    ),
    "inspect an address that is not a key": (
        lambda c: api.inspect(c, address="not-a-key"),
        False,
        "InspectError",
        "is not a base58 public key",
    ),
}


@pytest.mark.parametrize("case", REFUSED)
def test_each_failure_a_user_causes_is_one_line_of_the_family_naming_the_fix(case, project, transcript):
    call, with_savepoints, error, words = REFUSED[case]
    config = load(project)
    for _ in range(3 if with_savepoints else 0):
        save(config, transcript)
    with pytest.raises(PrecompactError) as raised:
        call(config)
    assert type(raised.value).__name__ == error
    message = str(raised.value)
    assert words in message and "\n" not in message, message


def test_what_needs_the_git_layer_says_it_is_off(tmp_path):
    project = new_project(tmp_path, "local-only", git_layer=False, chain_layer=False)
    config = load(project)
    for call, error in ((lambda: api.prune(config, keep=1), "PruneError"), (lambda: api.rekey(config), "RekeyError")):
        with pytest.raises(PrecompactError, match="the git layer is off in .precompact.toml") as raised:
            call()
        assert type(raised.value).__name__ == error


def test_resurrect_without_git_refuses_an_altered_snapshot_and_restores_no_state(tmp_path):
    project = new_project(tmp_path, "local-only", git_layer=False, chain_layer=False)
    config = load(project)
    transcript = generate(tmp_path / "session.jsonl", 20_000, project=project.path)
    (project.path / "session_current.json").write_text("kept\n")
    written = save(config, transcript)
    written.path.write_bytes(written.path.read_bytes().replace(b'"session-1"', b'"session-X"'))

    with pytest.raises(PrecompactError, match=r"is altered and git has no usable copy .*; run `precompact verify`"):
        api.resurrect(config, restore_state=True)
    with pytest.raises(PrecompactError, match=r"run `precompact verify`"):
        api.dropped(config)
    assert (project.path / "session_current.json").read_text() == "kept\n"
