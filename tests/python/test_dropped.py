"""What compaction dropped (restore/dropped.py): on sessions with planted facts, the ones the
summary does not contain are listed, each at its entry, and the ones it keeps (verbatim or in a
normalised form) are not; the command prints them, and refuses a savepoint that fails its check."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import httpx
import pytest
from jsonschema import Draft202012Validator

from precompact.config import settings as configuration
from precompact.local import savepoint_log, snapshot
from precompact.restore import dropped
from support.commands import precompact
from support.planted import session, shown, write_transcript
from support.projects import new_project

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"


@pytest.mark.parametrize("seed", range(8))
def test_planted_facts_the_summary_drops_are_listed_and_the_kept_ones_are_not(seed):
    planted = session(seed)
    listed, kept = dropped.dropped_facts(planted.entries, dropped.Summary(planted.summary, planted.cwd))
    listed_pairs = shown(listed)
    missed = [p for p in planted.planted if not p.kept and (p.kind, p.text) not in listed_pairs]
    wrongly = [p for p in planted.planted if p.kept and (p.kind, p.text) in listed_pairs]
    assert not missed, f"dropped facts not listed: {missed}"
    assert not wrongly, f"kept facts listed as dropped: {wrongly}"
    assert kept >= sum(p.kept for p in planted.planted)


def test_each_fact_points_at_the_entry_that_says_it():
    planted = session(3)
    listed, _ = dropped.dropped_facts(planted.entries, dropped.Summary(planted.summary, planted.cwd))
    assert listed
    for fact in listed:
        entry = planted.entries[fact.entry - 1]
        # A request is shown without its constraint sentences, " … " where they were; an edit
        # as "path: old → new".
        pieces = re.split(r": | → ", fact.text) if fact.kind == "edit" else fact.text.split(" … ")
        for piece in pieces:
            assert dropped.normalised(piece) in dropped.normalised(json.dumps(entry, ensure_ascii=False)), fact


def test_the_rule_matches_whole_words_after_normalising_and_nothing_looser():
    summary = dropped.Summary(
        "Ran `pytest -k Walnut`; port 8438; see https://a.example.com/docs/v2s and Don’t   TOUCH the Ledger.",
        "/home/dev/shop",
    )

    def has(kind: str, text: str) -> bool:
        return summary.contains(dropped.Fact(kind, text, 1))

    assert has("failed command", "pytest -k walnut")  # case and punctuation
    assert has("constraint", "don't touch the ledger")  # curly quote, spaces, case
    assert not has("measurement", "843 rows")  # part of a longer number
    assert not has("measurement", "8437 rows")
    assert not has("url", "https://a.example.com/docs/v2")  # part of a longer URL
    assert has("file edited", "/home/dev/shop/src/a.py") is False
    assert dropped.Summary("edited src/a.py", "/home/dev/shop").contains(
        dropped.Fact("file edited", "/home/dev/shop/src/a.py", 1)
    )
    assert dropped.Summary("edited a.py", None).contains(dropped.Fact("file edited", "/elsewhere/a.py", 1))


def test_without_a_summary_every_fact_is_listed():
    planted = session(1)
    listed, kept = dropped.dropped_facts(planted.entries, None)
    assert kept == 0
    assert {(p.kind, p.text) for p in planted.planted} <= shown(listed)


def test_claude_codes_own_entries_are_not_facts():
    entries = [
        {"type": "user", "isCompactSummary": True, "message": {"content": "Please keep port 9911 in mind always."}},
        {"type": "user", "isMeta": True, "message": {"content": "<command-name>/compact</command-name> at 5555"}},
        {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted 7777"},
        {"type": "user", "message": {"content": "Now please run the importer on batch 4242 today."}},
    ]
    texts = " ".join(f.text for f in dropped.facts(entries))
    assert "4242" in texts
    assert not any(n in texts for n in ("9911", "5555", "7777"))


def _shown(report: dict) -> set[tuple[str, str]]:
    """shown() of a `dropped --json` report."""
    return shown(dropped.Fact(f["kind"], f["text"], f["entry"], f["detail"]) for f in report["dropped"])


def _saved(tmp_path, seed: int, summary: bool = True):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    planted = session(seed, cwd=str(project.path))
    transcript = write_transcript(planted, tmp_path / "session.jsonl")
    loaded = configuration.load(project.path)
    written = snapshot.create_savepoint(
        snapshot.Settings.of(loaded), snapshot.Session(f"planted-{seed}", str(transcript), str(project.path), "auto")
    )
    if summary:
        saved = savepoint_log.latest(loaded.logs, loaded.instance)
        assert saved is not None
        savepoint_log.mark(
            loaded.logs, saved, savepoint_log.Event.COMPACT_SUMMARY, trigger="auto", summary=planted.summary
        )
    return project, planted, written


def test_the_command_lists_a_saved_sessions_dropped_facts_with_references(tmp_path):
    project, planted, written = _saved(tmp_path, 5)
    done = precompact(project.path, "dropped", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    Draft202012Validator(json.loads((SCHEMAS / "dropped.schema.json").read_text())).validate(report)
    assert report["sequence"] == written.sequence
    assert report["summary_source"] == dropped.RECORDED
    listed_pairs = _shown(report)
    for fact in planted.planted:
        assert ((fact.kind, fact.text) in listed_pairs) is not fact.kept, fact
    first = report["dropped"][0]
    assert first["ref"] == f"{written.sequence}:{first['entry']}"
    # The reference is the one `precompact show` takes, and that entry says the fact.
    entry = precompact(project.path, "show", first["ref"], "--json")
    assert entry.returncode == 0, entry.stderr
    assert dropped.normalised(first["text"]) in dropped.normalised(entry.stdout)
    text = precompact(project.path, "dropped", "1")
    assert text.returncode == 0 and "not in the compaction summary" in text.stdout
    assert json.dumps(first["text"], ensure_ascii=False) in text.stdout


def test_the_command_names_a_missing_or_tampered_savepoint_in_one_line(tmp_path):
    project, _, written = _saved(tmp_path, 2, summary=False)
    missing = precompact(project.path, "dropped", "9")
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    data = written.path.read_bytes()
    written.path.write_bytes(data.replace(b"pytest", b"pytesX", 1))
    tampered = precompact(project.path, "dropped", "1")
    assert tampered.returncode == 1 and "Traceback" not in tampered.stderr, tampered.stderr


def test_without_a_recorded_summary_the_one_a_later_savepoint_of_the_session_holds_is_used(tmp_path):
    """PostCompact did not run: the summary entry Claude Code wrote after the compaction is in
    the history the session's next savepoint saved."""
    project, planted, _ = _saved(tmp_path, 4, summary=False)
    transcript = tmp_path / "session.jsonl"
    with transcript.open("a", encoding="utf-8") as f:
        for line in (
            {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "uuid": "b-1"},
            {
                "type": "user",
                "uuid": "summary-1",
                "isCompactSummary": True,
                "message": {"role": "user", "content": planted.summary},
            },
            {
                "type": "user",
                "uuid": "after-1",
                "message": {"role": "user", "content": "Carry on with the export work now."},
            },
        ):
            f.write(json.dumps(line) + "\n")
    loaded = configuration.load(project.path)
    snapshot.create_savepoint(
        snapshot.Settings.of(loaded), snapshot.Session("planted-4", str(transcript), str(project.path), "auto")
    )
    report = json.loads(precompact(project.path, "dropped", "1", "--json").stdout)
    assert report["summary_source"] == dropped.LATER_SAVEPOINT.format(2)
    listed_pairs = _shown(report)
    for fact in planted.planted:
        assert ((fact.kind, fact.text) in listed_pairs) is not fact.kept, fact
    alone = json.loads(precompact(project.path, "dropped", "2", "--json").stdout)
    assert alone["summary"] is None and alone["summary_source"] == dropped.NONE_RECORDED


def test_without_a_number_it_takes_the_compaction_a_later_session_end_savepoint_holds(tmp_path):
    """SessionEnd saved the session after its compaction (savepoint 2: the boundary, the summary,
    a request after): `dropped` takes it, compares the history before the boundary with the
    summary entry after it, and leaves out what was said after."""
    project, planted, first = _saved(tmp_path, 4, summary=False)
    transcript = tmp_path / "session.jsonl"
    with transcript.open("a", encoding="utf-8") as f:
        for line in (
            {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "uuid": "b-1"},
            {
                "type": "user",
                "uuid": "s-1",
                "isCompactSummary": True,
                "isVisibleInTranscriptOnly": True,  # as Claude Code 2.1.332 writes it
                "message": {"role": "user", "content": planted.summary},
            },
            {
                "type": "user",
                "uuid": "after-1",
                "message": {"role": "user", "content": "Carry on with the export work now."},
            },
        ):
            f.write(json.dumps(line) + "\n")
    end = precompact(
        project.path,
        "hook",
        stdin={
            "hook_event_name": "SessionEnd",
            "session_id": "planted-4",
            "transcript_path": str(transcript),
            "cwd": str(project.path),
        },
    )
    assert end.returncode == 0, end.stderr
    report = json.loads(precompact(project.path, "dropped", "--json").stdout)
    assert report["sequence"] == first.sequence + 1
    assert report["summary_source"] == dropped.AFTER_BOUNDARY.format(first.sequence + 1)
    assert report["entries"] == len(planted.entries), "the history before the boundary"
    listed_pairs = _shown(report)
    for fact in planted.planted:
        assert ((fact.kind, fact.text) in listed_pairs) is not fact.kept, fact
    assert not any("Carry on with the export" in f["text"] for f in report["dropped"])
    text = precompact(project.path, "dropped")
    assert text.returncode == 0 and f"savepoint {first.sequence + 1} of" in text.stdout


def test_without_a_recorded_summary_later_savepoints_without_one_are_passed_over(tmp_path):
    """SessionStart and PostCompact save before Claude Code writes its summary entry: the first
    later savepoint of the session may not hold it; the next one that does is used."""
    project, planted, _ = _saved(tmp_path, 4, summary=False)
    transcript = tmp_path / "session.jsonl"
    loaded = configuration.load(project.path)

    def append_and_save(*lines: dict) -> None:
        with transcript.open("a", encoding="utf-8") as f:
            for line in lines:
                f.write(json.dumps(line) + "\n")
        snapshot.create_savepoint(
            snapshot.Settings.of(loaded), snapshot.Session("planted-4", str(transcript), str(project.path), "auto")
        )

    append_and_save({"type": "user", "uuid": "more-1", "message": {"role": "user", "content": "One more thing."}})
    append_and_save(
        {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "uuid": "b-1"},
        {
            "type": "user",
            "uuid": "summary-1",
            "isCompactSummary": True,
            "isVisibleInTranscriptOnly": True,
            "message": {"role": "user", "content": [{"type": "text", "text": planted.summary}]},
        },
    )
    report = json.loads(precompact(project.path, "dropped", "1", "--json").stdout)
    assert report["summary_source"] == dropped.LATER_SAVEPOINT.format(3)
    listed_pairs = _shown(report)
    for fact in planted.planted:
        assert ((fact.kind, fact.text) in listed_pairs) is not fact.kept, fact


def test_the_command_and_the_viewer_say_possibly_dropped_where_the_rule_is_unsure(tmp_path):
    """A fact the summary holds something like is "possibly dropped" in the text, the JSON and
    the viewer; one it holds nothing like is "dropped"."""
    from support.browser import viewer
    from support.dropped_dev import rounding

    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    dev = rounding()
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("".join(json.dumps(e) + "\n" for e in dev.conversation.entries), encoding="utf-8")
    loaded = configuration.load(project.path)
    snapshot.create_savepoint(
        snapshot.Settings.of(loaded), snapshot.Session("dev", str(transcript), str(project.path), "auto")
    )
    saved = savepoint_log.latest(loaded.logs, loaded.instance)
    assert saved is not None
    savepoint_log.mark(loaded.logs, saved, savepoint_log.Event.COMPACT_SUMMARY, trigger="auto", summary=dev.summary)
    done = precompact(project.path, "dropped", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    Draft202012Validator(json.loads((SCHEMAS / "dropped.schema.json").read_text())).validate(report)
    confidence = {f["text"]: f["confidence"] for f in report["dropped"]}
    unsure = "Never change the rounding of the VAT lines in billing/vat.py."
    assert confidence[unsure] == dropped.POSSIBLY_DROPPED
    assert confidence["4f5e6d7"] == dropped.DROPPED
    text = precompact(project.path, "dropped").stdout
    assert f'(possibly dropped) "{unsure}"' in text
    assert '] "4f5e6d7" -> ' in text
    # the constraint and the edit (an unsure kind); the recheck's "checked 12000 lines" is how much
    # it went through, no result (rule 8)
    assert "2 of them possibly dropped" in text.splitlines()[0]
    with viewer(project.path, tmp_path / "view.log") as url:
        for _ in range(100):
            page = httpx.get(url + "savepoint", params={"instance": loaded.instance, "sequence": 1}).text
            if 'class="listing"' not in page:
                break
            time.sleep(0.1)
    section = page.split('id="dropped"', 1)[1]
    assert section.count('<span class="possibly">possibly dropped</span>') == 2
    assert 'possibly dropped</span> <span class="fact">Never change the rounding' in section
