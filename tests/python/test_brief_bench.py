"""What a compacted session is given, on the labelled sets the brief may be tuned on
(scripts/bench_brief.py, issue 46): the floors under what it measured, and its scorer's rule (a
fact is back only when its label's words are given whole)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.dropped_dev import Label

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

import bench_brief  # the script, from scripts/


def bench(*args: str) -> dict:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "bench_brief.py"), *args, "--json"],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
def test_on_the_fresh_sessions_the_two_parts_bring_back_what_they_did_within_the_budget():
    """Floors just under `scripts/bench_brief.py --fresh` (docs/performance.md): on main of
    2026-12-05 it brought back 0.858 of the dropped facts and repeated 0.258 of the kept ones,
    in 2,913 characters median, 3,899 at most, on the first 40; with rule 14's three new
    sessions (43, main 71bc7ac) 0.860 (264 of 307) and 0.261, 2,903 median, 3,966 at most; with
    rule 15's three (46, rule 15) 0.842 (288 of 342) and 0.252 (117 of 464), 2,903 median, 3,966
    at most: the three new sessions' facts are harder to bring back (rule 15's recall on them 0.686);
    with rule 16's three (49, 2026-12-06) 0.832 and 0.253, 2,904 median, 3,878 at most (rule 16's
    recall on those three 0.692), the parts sharing the budget less the standing-failure line's 103
    characters; with the whole budget where no failure stands (fix16c) 0.832 (306 of 368) and 0.253
    again, 2,903 median, 3,965 at most."""
    figures = bench("--fresh")
    assert figures["sessions"] == 49
    assert figures["back"] >= 0.82, figures
    assert figures["repeated"] <= 0.28, figures
    assert figures["characters"]["max"] <= 4_000, figures
    assert figures["given_again"] == 0, "the PostToolUse after the prompt gave the addendum again"


@pytest.mark.slow
def test_on_the_development_sessions_under_a_small_budget_the_most_important_come_first():
    """`scripts/bench_brief.py --dev --budget 2000`: on main of 2026-12-05 0.739 back (17 of 23),
    0.196 repeated (11 of 56); 0.826 (19 of 23) and 0.196 once a line too long for what is left
    leaves its room to the shorter ones after it; 0.783 (18 of 23) and 0.179 while the two parts
    kept 103 characters for the line a standing failure gives (2026-12-06; at 2,103, 0.826 again);
    0.826 (19 of 23) and 0.196, 1,972 characters at most, since they keep them only when that line
    is given (fix16c)."""
    figures = bench("--dev", "--budget", "2000")
    assert figures["back"] >= 0.82, figures
    assert figures["repeated"] <= 0.22, figures
    assert figures["characters"]["max"] <= 2_000, figures


def given(first: str, second: str = "", again: str = "") -> bench_brief.Given:
    labels = [
        Label("measurement", "40 passed", dropped=True),
        Label("identifier", "9c41e7a", dropped=False),
        Label("constraint", "Never change the VAT lines", dropped=True),
        Label("number", "214", dropped=False),  # noise: not scored
    ]
    return bench_brief.Given("s", first, second, again, labels)


def test_a_fact_is_back_only_when_its_words_are_given_whole_and_in_order():
    scored = bench_brief.Score()
    scored.add(given('- measurement [1:3]: "140 passed in 2s"', "the VAT lines: never change"))
    assert scored.figures()["back_facts"] == 0, "a longer number, words out of order"
    scored = bench_brief.Score()
    scored.add(given("> Never change the “VAT” lines!", '- measurement [1:3]: "40 passed in 0.8s" -> "9c41e7a"'))
    figures = scored.figures()
    assert (figures["back_facts"], figures["dropped_facts"]) == (2, 2)
    assert (figures["repeated_facts"], figures["kept_facts"]) == (1, 1), "the noise label is not a kept fact"
    assert figures["characters"]["max"] == len("> Never change the “VAT” lines!") + len(
        '- measurement [1:3]: "40 passed in 0.8s" -> "9c41e7a"'
    )


def test_what_the_tool_call_after_the_prompt_gives_is_counted_not_scored():
    scored = bench_brief.Score()
    scored.add(given("nothing", "", again="40 passed"))
    figures = scored.figures()
    assert figures["given_again"] == 1 and figures["back_facts"] == 0
