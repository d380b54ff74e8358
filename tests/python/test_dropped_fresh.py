"""The fresh labelled sessions (support/dropped_fresh.py) are well formed: every label names words
its session really holds (a label no item could ever name would count as a miss of the rule), with
a kind the scorer knows, and every summary has the nine sections Claude Code's compaction writes.
Nothing here runs the rule: its figures on this set come from `scripts/bench_dropped.py --fresh`."""

from __future__ import annotations

import pytest

from support import dropped_dev, dropped_fresh, labelled

KNOWN_KINDS = {label.kind for make in dropped_dev.SESSIONS for label in make().labels}
KNOWN_KINDS |= set(dropped_dev.NOISE_KINDS) | set(dropped_dev.CLASSES)


@pytest.mark.parametrize("make", dropped_fresh.SESSIONS, ids=lambda make: make.__name__)
def test_every_label_names_words_of_its_session(make):
    session = make()
    transcript = labelled.transcript_text(session.conversation.entries)
    absent = [label.says for label in session.labels if label.says not in transcript]
    assert absent == []
    assert {label.kind for label in session.labels} <= KNOWN_KINDS
    assert any(label.dropped for label in session.labels)
    assert any(not label.dropped for label in session.labels)


@pytest.mark.parametrize("make", dropped_fresh.SESSIONS, ids=lambda make: make.__name__)
def test_every_summary_has_the_nine_sections(make):
    assert labelled.has_the_nine_sections_in_order(make().summary)


def test_the_set_is_new_and_big_enough_to_score():
    names = [make.__name__ for make in dropped_fresh.SESSIONS]
    assert len(names) == len(set(names)) >= 12
    assert not set(names) & {make.__name__ for make in dropped_dev.SESSIONS}
