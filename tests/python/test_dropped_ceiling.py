"""The scorers' `--ceiling`: against a summary that says nothing, the rule lists every fact it
extracts, so what it finds there bounds what it finds against any summary."""

from __future__ import annotations

import pytest

from support import dropped_dev, dropped_fresh


@pytest.mark.parametrize("sessions", [dropped_dev.SESSIONS, dropped_fresh.SESSIONS], ids=["dev", "fresh"])
def test_against_a_summary_that_says_nothing_every_fact_the_rule_finds_is_still_found(sessions):
    with_summary = dropped_dev.score(sessions)
    ceiling = dropped_dev.score(sessions, ceiling=True)
    for kind, found in with_summary.found.items():
        assert ceiling.found.get(kind, 0) >= found, kind
    assert ceiling.right + ceiling.wrong + ceiling.noise > with_summary.right + with_summary.wrong + with_summary.noise
