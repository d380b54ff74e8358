"""What the model is given after a compaction (#46), scored on #41's held-out sessions by
scripts/bench_brief_real.py: the scorer counts a fact exactly when its anchor is in what the hooks
gave; one session replayed through the installed hooks gets the SessionStart brief and is scored
on it; the slow check replays every session and fails below the floor."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCORER = REPO / "scripts" / "bench_brief_real.py"
sys.path.insert(0, str(SCORER.parent))  # the script imports its neighbour throwaway_home
_spec = importlib.util.spec_from_file_location("bench_brief_real", SCORER)
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench  # dataclasses look their module up by name
_spec.loader.exec_module(bench)

SESSION = "01-invoice-rounding-regression"
# Regression bounds, not the targets: what the model is given (`.venv/bin/python
# scripts/bench_brief_real.py`), with a margin of 0.02. Before the brief in two parts (main on
# 2026-12-03): back 0.100, 21 of 210 dropped facts; repeated 0.526, 152 of 289 kept facts; 2,264
# characters median, 3,447 max, all of it at SessionStart. With the two parts and the second round
# of the dropped rule: back 0.314 (66 of 210), repeated 0.159 (46 of 289), 2,706 median, 3,883 max;
# with its third round: back 0.395 (83 of 210), repeated 0.166 (48 of 289), 2,788 median, 3,914 max;
# with its fourth: back 0.505 (106 of 210), repeated 0.173 (50 of 289), 2,954 median, 3,702 max;
# with its fifth: back 0.529 (111 of 210), repeated 0.176 (51 of 289), 2,990 median, 3,863 max;
# with its sixth: back 0.567 (119 of 210), repeated 0.176 (51 of 289), 3,249 median, 3,975 max.
# with its seventh: back 0.562 (118 of 210), repeated 0.176 (51 of 289), 3,248 median, 3,975 max.
# with its fourteenth: back 0.567 (119 of 210), repeated 0.180 (52 of 289), 3,068 median, 3,862 max.
# Issue #46's targets are back >= 0.80 and repeated <= 0.30; these bounds follow the brief up.
BACK_FLOOR = 0.547
REPEATED_CEILING = 0.196


def scorer(*args: str) -> dict:
    done = subprocess.run(
        [sys.executable, str(SCORER), "--json", *args], check=False, capture_output=True, text=True, cwd=REPO
    )
    assert done.stdout.startswith("{"), done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert done.returncode == 0, result["problems"]
    return result


def test_a_fact_counts_as_given_when_its_anchor_is_in_either_part_and_only_then():
    facts = bench.labelled.labels(bench.labelled.SESSIONS / SESSION)
    dropped = next(f for f in facts if f["dropped"])
    kept = next(f for f in facts if not f["dropped"])

    nothing = bench.score(SESSION, facts, "", "")
    assert (sum(nothing.back.values()), sum(nothing.repeated.values())) == (0, 0)
    assert sum(nothing.dropped.values()) + sum(nothing.kept.values()) == len(facts)

    # The anchors recased and rewrapped, one in each part: matched as bench_dropped_real matches.
    session_start = f"Brief.\n> {kept['anchors'][0].upper()}"
    prompt = "Left out:\n> " + dropped["anchors"][-1].replace(" ", "\n  ")
    both = bench.score(SESSION, facts, session_start, prompt, after="ignored")
    assert sum(both.back.values()) == both.back[dropped["class"]] == 1
    assert dropped["id"] not in both.missed and len(both.missed) == sum(both.dropped.values()) - 1
    assert both.repeated_ids == [kept["id"]]
    assert (both.characters, both.after_characters) == (len(session_start) + len(prompt), len("ignored"))


def test_one_session_replayed_through_the_installed_hooks_is_scored_on_its_session_start_brief():
    result = scorer("--session", SESSION)

    assert result["problems"] == [] and result["sessions"] == 1
    [session] = result["per_session"]
    assert session["events"][:3] == ["PreCompact", "SessionStart", "PostCompact"], session["events"]
    given = session["given"]
    assert given["session_start"].startswith("[precompact] Restored from savepoint 1 of Trial #1:")
    assert session["session_start_characters"] == len(given["session_start"])
    assert session["characters"] == len(given["session_start"]) + len(given["prompt"])
    # The first part quotes the newest request verbatim (entry 47): the summary kept it, so it is
    # repeated; the first request (entry 1), which only a whole brief would quote, is not.
    assert "export-request" in session["repeated_ids"], session["repeated_ids"]
    assert "find-change" not in session["repeated_ids"], session["repeated_ids"]
    assert session["dropped"] + session["kept"] == len(bench.labelled.labels(bench.labelled.SESSIONS / SESSION))
    assert session["after_characters"] == 0, "nothing is given twice: a PostToolUse after the prompt adds nothing"


@pytest.mark.slow
def test_what_the_model_is_given_stays_within_its_bounds_on_the_held_out_set():
    result = scorer()

    assert result["problems"] == []
    assert result["sessions"] == len(bench.labelled.session_dirs())
    assert result["back"] >= BACK_FLOOR, result["by_class"]
    assert result["repeated"] <= REPEATED_CEILING, result["by_class"]
    assert result["characters"]["max"] <= bench.TARGET_CHARACTERS, result["characters"]
    assert result["after_characters"]["max"] == 0, "nothing is given twice"
