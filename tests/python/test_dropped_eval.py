"""The held-out set for "what compaction dropped" (#41): realistic sessions under tests/dropped_eval/,
each with a nine-section summary and facts labelled by hand. The fast checks keep the set honest
(every session builds into a transcript precompact's own reader reads without loss, every label
points at something the session says, at an entry that says it); the slow check runs the scorer,
scripts/bench_dropped_real.py, and fails when the rule falls below the floor."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from precompact.transcript import claude_code, conversation

REPO = Path(__file__).resolve().parents[2]
SCORER = REPO / "scripts" / "bench_dropped_real.py"
sys.path.insert(0, str(SCORER.parent))  # the script imports its neighbour throwaway_home
_spec = importlib.util.spec_from_file_location("bench_dropped_real", SCORER)
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench  # dataclasses look their module up by name
_spec.loader.exec_module(bench)

SESSIONS = bench.session_dirs()
FILE_TOOLS = {"Read", "Edit", "Write"}
SECTIONS = (
    "1. Primary Request and Intent",
    "2. Key Technical Concepts",
    "3. Files and Code Sections",
    "4. Errors and fixes",
    "5. Problem Solving",
    "6. All user messages",
    "7. Pending Tasks",
    "8. Current Work",
    "9. Optional Next Step",
)
# A regression floor, not the target: the rule as measured on this held-out set (`.venv/bin/python
# scripts/bench_dropped_real.py`: precision 0.147 / recall 0.229 when the set was made, 0.233 /
# 0.414 with the first rule of 2026-12-03, 0.444 / 0.319 with its second round, which traded
# recall for precision: it lists no names, numbers or plain commands said in passing; 0.520 / 0.405
# with the third, which reads results, ids and files where tool output holds them; 0.563 / 0.510
# with the fourth, which reads the figures the model reports and one-line answers; 0.571 / 0.538
# with the fifth, which reads settings read in files, commit authors, closed issues; 0.571 / 0.581
# with the sixth, which reads tokens of tool output the session goes on with, pins, build times,
# decisions in prose, values an edit brought in, files a command wrote); 0.581 / 0.581 with the
# seventh, which reads what a command asked for (the fields it selects, crontab lines, a failure's
# DETAIL) and figures the model reports changed) minus 0.02.
# Issue #41's targets are 0.85 and 0.85; it stays open until the rule reaches them.
PRECISION_FLOOR = 0.561
RECALL_FLOOR = 0.561


def entry_text(entry: dict) -> str:
    """Every string an entry's message holds (text, tool input, tool result), as the scorer folds it."""
    return bench.folded("\n".join(_strings(entry["message"]["content"])))


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_the_set_holds_at_least_20_sessions():
    assert len(SESSIONS) >= 20, [p.name for p in SESSIONS]


@pytest.mark.parametrize("folder", SESSIONS, ids=lambda p: p.name)
def test_a_session_builds_into_a_transcript_precompact_reads_without_loss(folder: Path, tmp_path: Path):
    session = bench.parse(folder / "session.txt")
    built = bench.build(session)
    assert 25 <= len(built) <= 80, f"{folder.name}: {len(built)} entries (a session has 25 to 80)"
    path = tmp_path / f"{built[0]['sessionId']}.jsonl"
    path.write_text(bench.jsonl(built), encoding="utf-8")

    scan = claude_code.TranscriptScan(path=str(path))
    read = [
        entry for block in claude_code.blocks(path, scan) for _, entry in claude_code.entries(block.split(b"\n"), scan)
    ]

    assert read == built
    assert (scan.malformed_lines, scan.reappended_lines, scan.partial_last_line) == (0, 0, False)
    typed = [b.body.strip() for b in session.blocks if b.kind == "user"]
    assert [conversation.user_text(e) for e in read if conversation.user_text(e)] == typed
    assert all(conversation.is_said(e) for e in read)
    tool_paths = {
        block["input"]["file_path"]
        for e in read
        if e["type"] == "assistant"
        for block in e["message"]["content"]
        if block["type"] == "tool_use" and block["name"] in FILE_TOOLS
    }
    assert set(scan.files) == tool_paths


@pytest.mark.parametrize("folder", SESSIONS, ids=lambda p: p.name)
def test_every_label_points_at_what_its_session_says(folder: Path):
    """Each fact has a known class, anchors that occur in the transcript, and an entry that holds
    one of them; a fact labelled dropped has no anchor in the summary (that would be the summary
    keeping it)."""
    entries = bench.build(bench.parse(folder / "session.txt"))
    texts = [entry_text(e) for e in entries]
    whole = "\n".join(texts)
    summary = bench.folded((folder / "summary.md").read_text(encoding="utf-8"))
    facts = bench.labels(folder)

    assert 10 <= len(facts) <= 30, f"{folder.name}: {len(facts)} facts"
    assert len({f["id"] for f in facts}) == len(facts), "fact ids repeat"
    for fact in facts:
        where = f"{folder.name}/{fact['id']}"
        assert set(fact) == {"id", "class", "dropped", "anchors", "entry", "note"}, where
        assert fact["class"] in bench.CLASSES, where
        assert isinstance(fact["dropped"], bool) and fact["note"], where
        anchors = [bench.folded(a) for a in fact["anchors"]]
        assert anchors and all(anchors), where
        missing = [a for a in anchors if a not in whole]
        assert not missing, f"{where}: anchors the session never says: {missing}"
        assert 1 <= fact["entry"] <= len(entries), f"{where}: entry {fact['entry']} of {len(entries)}"
        assert any(a in texts[fact["entry"] - 1] for a in anchors), f"{where}: entry {fact['entry']} says none"
        if fact["dropped"]:
            kept = [a for a in anchors if a in summary]
            assert not kept, f"{where}: labelled dropped, but the summary says {kept}"


@pytest.mark.parametrize("folder", SESSIONS, ids=lambda p: p.name)
def test_a_summary_has_claude_codes_nine_sections(folder: Path):
    text = (folder / "summary.md").read_text(encoding="utf-8")
    places = [text.find(section) for section in SECTIONS]
    assert -1 not in places and places == sorted(places), f"{folder.name}: sections missing or out of order"


def test_the_set_labels_every_class_dropped_and_kept():
    facts = [f for folder in SESSIONS for f in bench.labels(folder)]
    for fact_class in bench.CLASSES:
        mine = [f for f in facts if f["class"] == fact_class]
        assert any(f["dropped"] for f in mine) and not all(f["dropped"] for f in mine), fact_class


@pytest.mark.slow
def test_the_rule_stays_above_its_floor_on_the_held_out_set():
    done = subprocess.run(
        [sys.executable, str(SCORER), "--json"], check=False, capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["sessions"] == len(SESSIONS)
    assert result["precision"] >= PRECISION_FLOOR, result["precision_by_kind"]
    assert result["recall"] >= RECALL_FLOOR, result["recall_by_class"]
