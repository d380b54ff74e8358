"""The blind labelled sessions (support/dropped_blind.py) are well formed: every label names words
its session really holds, a dropped label's words are not in its summary (else the label is
wrong, not the rule), every class is one the set defines, every session has kept and dropped
facts, and every summary has Claude Code's nine sections in order; and the rule holds its figures
on it (`scripts/bench_dropped.py --blind`), scored by the lead after each round of the rule, never
by whoever writes the rule."""

from __future__ import annotations

import re

import pytest

from support import dropped_blind, dropped_dev, dropped_fresh, labelled
from support.dropped_dev import score


def _says_words(words: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(words.lower())}(?!\w)", text.lower()) is not None


@pytest.mark.parametrize("make", dropped_blind.SESSIONS, ids=lambda make: make.__name__)
def test_every_label_names_words_of_its_session(make):
    session = make()
    transcript = labelled.transcript_text(session.conversation.entries)
    assert [label.says for label in session.labels if label.says not in transcript] == []


@pytest.mark.parametrize("make", dropped_blind.SESSIONS, ids=lambda make: make.__name__)
def test_no_dropped_label_is_in_its_summary(make):
    session = make()
    kept_in_words = [
        label.says for label in session.labels if label.dropped and _says_words(label.says, session.summary)
    ]
    assert kept_in_words == []


@pytest.mark.parametrize("make", dropped_blind.SESSIONS, ids=lambda make: make.__name__)
def test_every_session_has_kept_and_dropped_facts_of_known_classes(make):
    labels = make().labels
    assert {dropped_dev.label_class(label) for label in labels} <= set(dropped_blind.CLASSES)
    assert any(label.dropped for label in labels)
    assert any(not label.dropped for label in labels)
    says = [label.says for label in labels]
    assert len(says) == len(set(says)), "a fact labelled twice"


@pytest.mark.parametrize("make", dropped_blind.SESSIONS, ids=lambda make: make.__name__)
def test_every_summary_has_the_nine_sections(make):
    assert labelled.has_the_nine_sections_in_order(make().summary)


def test_the_set_is_new_and_big_enough_to_score():
    names = [make.__name__ for make in dropped_blind.SESSIONS]
    assert len(names) == len(set(names)) >= 16
    earlier = {make.__name__ for make in dropped_dev.SESSIONS + dropped_fresh.SESSIONS}
    assert not set(names) & earlier
    classes = {dropped_dev.label_class(label) for make in dropped_blind.SESSIONS for label in make().labels}
    assert classes == set(dropped_blind.CLASSES)


def test_on_the_blind_sessions_the_rule_holds_its_figures():
    """A regression floor, not #41's target of 0.85: rule 4 scored precision 0.541 and recall 0.487
    on this set when it was made, rule 5 0.530 (53 of 100 listed) and 0.487 (55 of 113 dropped),
    rule 6 0.517 (62 of 120) and 0.549 (62 of 113), rule 7 0.521 (63 of 121) and 0.566 (64 of
    113); the floor is rule 7's minus 0.02."""
    scored = score(dropped_blind.SESSIONS)
    assert scored.precision >= 0.501, (scored.precision, scored.unwanted)
    assert scored.recall >= 0.546, (scored.recall, scored.missed)
