"""What compaction dropped, listed once and kept (restore/dropped_store.py): the worker PostCompact
starts keeps the list once the summary is known; `precompact dropped` and the viewer read it; a
kept list that was altered, whose key is not the savepoint's now (another summary, another rule
version, other bytes) or whose shape is not the one written is never shown: the list is made
again instead."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from precompact.config import settings as configuration
from precompact.local import provenance, savepoint_log, snapshot
from precompact.restore import dropped as dropping
from precompact.restore import dropped_store
from precompact.restore import resurrect as resurrection
from support.browser import viewer
from support.commands import precompact, wait_until, workers_of
from support.planted import session, write_transcript
from support.projects import Project, new_project
from support.transcript_gen import payload

MARKER = "Never ship the marker the test planted in the kept list."
SESSION = "planted-5"


def _kept_files(project: Project) -> list[Path]:
    return sorted((project.path / "logs" / dropped_store.STORE_DIR).glob("*.json"))


def _worker_done(project: Project) -> bool:
    """No worker of the project running (on its processes: support.commands.worker_finished says
    why not on its lock)."""
    return not workers_of(project.path)


def _kept_document(path: Path) -> dict:
    body = provenance.made_here(dropped_store.PURPOSE, path.read_bytes())
    assert body is not None, "the kept list carries this machine's stamp"
    return json.loads(body)


def _restamped(path: Path, change: Callable[[dict], None]) -> None:
    """The kept list changed by `change` and stamped again with this machine's key, as only
    precompact on this machine could have written it."""
    document = _kept_document(path)
    change(document)
    path.write_bytes(provenance.stamped(dropped_store.PURPOSE, json.dumps(document).encode()))


def _with_marker(document: dict) -> None:
    sequence = document["dropped"]["sequence"]
    document["dropped"]["dropped"].insert(
        0,
        {
            "kind": "constraint",
            "text": MARKER,
            "entry": 1,
            "detail": None,
            "confidence": dropping.DROPPED,
            "ref": f"{sequence}:1",
        },
    )


def _dropped_json(project: Project, *args: str) -> dict:
    done = precompact(project.path, "dropped", "--json", *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _made_now(project: Project) -> dict:
    """The list the rule makes now, in this process, reading nothing kept."""
    return dropping.of_savepoint(configuration.load(project.path)).to_json()


# --- through the hook, the worker and the command ------------------------------------------------


def _compacted_through_the_hook(tmp_path: Path) -> tuple[Project, Path, str]:
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    planted = session(5, cwd=str(project.path))
    transcript = write_transcript(planted, tmp_path / "session.jsonl")
    saved = precompact(project.path, "hook", stdin=payload("PreCompact", project.path, transcript, session_id=SESSION))
    assert saved.returncode == 0, saved.stderr
    assert wait_until(lambda: (project.path / "logs" / "precompact-recall.sqlite").exists(), 120)
    assert wait_until(lambda: _worker_done(project), 120)
    assert _kept_files(project) == [], "no summary yet: nothing to compare the history with"
    recorded = precompact(
        project.path,
        "hook",
        stdin=payload("PostCompact", project.path, transcript, session_id=SESSION, compact_summary=planted.summary),
    )
    assert recorded.returncode == 0, recorded.stderr
    assert wait_until(lambda: len(_kept_files(project)) == 1 and _worker_done(project), 120), (
        project.path / "logs" / "precompact-worker.log"
    ).read_text(errors="replace")
    return project, transcript, planted.summary


def test_the_worker_keeps_the_list_once_post_compact_records_the_summary_and_dropped_reads_it(tmp_path):
    project, _, summary = _compacted_through_the_hook(tmp_path)
    [kept] = _kept_files(project)
    made = _made_now(project)
    assert _kept_document(kept)["dropped"] == made
    assert made["summary"] == summary and made["dropped"], "the list compares the history with the summary"
    assert _dropped_json(project) == made
    # `dropped` reads the kept list: one this machine stamped under the savepoint's key is shown as it is.
    _restamped(kept, _with_marker)
    shown = _dropped_json(project)
    assert shown["dropped"][0]["text"] == MARKER and shown["dropped"][1:] == made["dropped"]
    text = precompact(project.path, "dropped")
    assert text.returncode == 0 and json.dumps(MARKER) in text.stdout


def test_a_list_kept_by_another_rule_version_or_for_another_summary_is_made_again(tmp_path):
    project, transcript, _ = _compacted_through_the_hook(tmp_path)
    [kept] = _kept_files(project)

    def by_the_previous_rule(document: dict) -> None:
        _with_marker(document)
        document["key"]["rule"] = dropping.RULE_VERSION - 1

    _restamped(kept, by_the_previous_rule)
    assert _dropped_json(project) == _made_now(project), "a list the previous rule made is not shown"
    # The next worker keeps it again, by this rule.
    again = precompact(
        project.path,
        "hook",
        stdin=payload("PostCompact", project.path, transcript, session_id=SESSION, compact_summary="Fixed the export."),
    )
    assert again.returncode == 0, again.stderr
    assert wait_until(
        lambda: _kept_document(kept)["key"]["rule"] == dropping.RULE_VERSION and _worker_done(project), 120
    )
    document = _kept_document(kept)
    assert document["dropped"]["summary"] == "Fixed the export." and MARKER not in json.dumps(document)
    assert _dropped_json(project) == _made_now(project) == document["dropped"]
    # A list kept for the summary PostCompact recorded before is not the list of the one recorded now.
    _restamped(kept, _with_marker)
    assert _dropped_json(project)["dropped"][0]["text"] == MARKER
    fresh = precompact(
        project.path,
        "hook",
        stdin=payload("PostCompact", project.path, transcript, session_id=SESSION, compact_summary="Fixed the import."),
    )
    assert fresh.returncode == 0, fresh.stderr
    shown = _dropped_json(project)
    assert shown["summary"] == "Fixed the import." and MARKER not in json.dumps(shown)


def test_the_viewer_shows_the_kept_list_on_the_first_visit(tmp_path):
    project, _, _ = _compacted_through_the_hook(tmp_path)
    [kept] = _kept_files(project)
    _restamped(kept, _with_marker)
    loaded = configuration.load(project.path)
    with viewer(project.path, tmp_path / "view.log") as url:
        page = httpx.get(url + "savepoint", params={"instance": loaded.instance, "sequence": 1}, timeout=60).text
    assert 'class="listing"' not in page, "the kept list is read at once, not listed in the background"
    assert MARKER in page.split('id="dropped"', 1)[1]


# --- what is never shown ---------------------------------------------------------------------------


def _kept_in_process(tmp_path: Path, recorded: bool = True) -> tuple[configuration.Config, Project]:
    """A compaction savepoint of the planted session, its summary recorded, and its list kept by
    the worker's job (run here)."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    planted = session(5, cwd=str(project.path))
    transcript = write_transcript(planted, tmp_path / "session.jsonl")
    loaded = configuration.load(project.path)
    snapshot.create_savepoint(
        snapshot.Settings.of(loaded), snapshot.Session(SESSION, str(transcript), str(project.path), "auto")
    )
    if recorded:
        latest = savepoint_log.latest(loaded.logs, loaded.instance)
        assert latest is not None
        savepoint_log.mark(
            loaded.logs, latest, savepoint_log.Event.COMPACT_SUMMARY, trigger="auto", summary=planted.summary
        )
        assert [s.sequence for s in dropped_store.due(loaded)] == [1]
        assert dropped_store.keep_due(loaded, lambda: False)
        assert dropped_store.due(loaded) == []
    return loaded, project


def _altered(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"entries":', b'"entries": ', 1))


CHANGES: dict[str, Callable[[Path], None]] = {
    "its bytes altered, its stamp left": _altered,
    "its stamp another machine's": lambda path: path.write_bytes(path.read_bytes()[:-32] + bytes(32)),
    "kept for other bytes": lambda path: _restamped(
        path, lambda d: (_with_marker(d), d["key"].update(snapshot_sha256="0" * 64))
    ),
    "kept for another summary": lambda path: _restamped(
        path, lambda d: (_with_marker(d), d["key"].update(summary_sha256=hashlib.sha256(b"other").hexdigest()))
    ),
    "kept by another rule version": lambda path: _restamped(
        path, lambda d: (_with_marker(d), d["key"].update(rule=dropping.RULE_VERSION + 1))
    ),
    "the format's version a boolean": lambda path: _restamped(
        path, lambda d: (_with_marker(d), d["key"].update(format=True))
    ),
}


@pytest.mark.parametrize("change", CHANGES, ids=list(CHANGES))
def test_a_kept_list_altered_or_under_another_key_is_not_shown_and_the_list_is_made_again(tmp_path, change):
    loaded, project = _kept_in_process(tmp_path)
    [kept] = _kept_files(project)
    CHANGES[change](kept)
    assert dropped_store.due(loaded) == [savepoint_log.latest(loaded.logs, loaded.instance)], (
        "the worker makes it again"
    )
    shown = _dropped_json(project)
    assert MARKER not in json.dumps(shown)
    assert shown == _made_now(project)


def _fact_changed(**fields: object) -> Callable[[dict], None]:
    def change(document: dict) -> None:
        _with_marker(document)
        document["dropped"]["dropped"][0].update(fields)

    return change


SHAPES: dict[str, Callable[[dict], None]] = {
    "an entry before the first": _fact_changed(entry=0, ref="1:0"),
    "an entry past the history": _fact_changed(entry=10_000, ref="1:10000"),
    "an entry that is a boolean": _fact_changed(entry=True),
    "a kind the rule does not give": _fact_changed(kind="proof"),
    "a confidence the rule does not give": _fact_changed(confidence="verified"),
    "a text that is no string": _fact_changed(text=["a", "b"]),
    "a reference to another entry": _fact_changed(ref="1:2"),
    "a field the rule does not write": _fact_changed(verdict="VERIFIED"),
    "a field missing": lambda d: (_with_marker(d), d["dropped"]["dropped"][0].pop("detail")),
    "another summary than the recorded one": lambda d: (_with_marker(d), d["dropped"].update(summary="Nothing.")),
    "a summary source the rule does not name": lambda d: (
        _with_marker(d),
        d["dropped"].update(summary_source="the chain's record"),
    ),
    "another savepoint's list": lambda d: (_with_marker(d), d["dropped"].update(sequence=2)),
    "no list of facts": lambda d: d["dropped"].update(dropped={"constraint": MARKER}),
    "a negative count kept": lambda d: (_with_marker(d), d["dropped"].update(kept=-1)),
}


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
def test_a_kept_list_not_of_the_shape_written_is_refused_even_under_this_machines_stamp(tmp_path, shape):
    loaded, project = _kept_in_process(tmp_path)
    [kept] = _kept_files(project)
    found = resurrection.from_this_machine(loaded)
    _restamped(kept, _with_marker)
    control = dropped_store.kept(loaded, found)
    assert control is not None and control.facts[0].text == MARKER, "the same list, well formed, is read"
    _restamped(kept, SHAPES[shape])
    assert dropped_store.kept(loaded, found) is None
    listed = dropped_store.of_resurrection(loaded, found)
    assert MARKER not in json.dumps(listed.to_json()) and listed.to_json() == _made_now(project)


def test_without_a_recorded_summary_the_list_is_keyed_by_the_later_savepoints_of_the_session(tmp_path):
    """PostCompact did not run: the summary entry is in a later savepoint of the session; a list
    kept then is made again when the session saves once more (that one might hold it)."""
    loaded, project = _kept_in_process(tmp_path, recorded=False)
    assert dropped_store.due(loaded) == [], "no summary recorded and no later savepoint: nothing to compare with"
    planted = session(5, cwd=str(project.path))
    transcript = tmp_path / "session.jsonl"

    def append_and_save(*lines: dict) -> None:
        with transcript.open("a", encoding="utf-8") as f:
            for line in lines:
                f.write(json.dumps(line) + "\n")
        snapshot.create_savepoint(
            snapshot.Settings.of(loaded), snapshot.Session(SESSION, str(transcript), str(project.path), "auto")
        )

    append_and_save(
        {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "uuid": "b-1"},
        {
            "type": "user",
            "uuid": "summary-1",
            "isCompactSummary": True,
            "isVisibleInTranscriptOnly": True,
            "message": {"role": "user", "content": planted.summary},
        },
    )
    assert 1 in [s.sequence for s in dropped_store.due(loaded)]
    dropped_store.keep_due(loaded, lambda: False)
    found = resurrection.from_this_machine(loaded, None, 1)
    kept = dropped_store.kept(loaded, found)
    assert kept is not None and kept.summary_source == dropping.LATER_SAVEPOINT.format(2)
    assert kept.to_json() == dropping.of_resurrection(loaded, found).to_json()
    append_and_save({"type": "user", "uuid": "more-1", "message": {"role": "user", "content": "One more thing."}})
    assert dropped_store.kept(loaded, resurrection.from_this_machine(loaded, None, 1)) is None
    assert 1 in [s.sequence for s in dropped_store.due(loaded)]


def test_the_worker_lists_nothing_more_once_a_savepoint_arrived(tmp_path):
    """A savepoint that arrives is flushed first: the worker asks before each list."""
    loaded, project = _kept_in_process(tmp_path)
    for path in _kept_files(project):
        path.unlink()
    assert dropped_store.keep_due(loaded, lambda: True) == []
    assert [s.sequence for s in dropped_store.due(loaded)] == [1]
