"""The gates restore/dropped.py puts before its slower scans (issue 41's speed target): each skips
only texts the scan behind it would find nothing in, so what the rule lists stays the same."""

from __future__ import annotations

import unicodedata

from precompact.restore import dropped
from support import dropped_dev, dropped_fresh

# One text for each kind of identifier `_identifiers` adds, and whether it is looked for as a path.
ONE_OF_EACH = (
    ("the spec is at https://example.org/spec", False),
    ("request 123e4567-e89b-12d3-a456-426614174000 timed out", False),
    ("this fixes #412 for good", False),
    ("run `git show 9f3c2ab` first", False),
    ("that is PAY-2210 in the tracker", False),
    ("the regression came with 9f3c2ab in the merge", False),
    ("look in services/reports for it", True),
    ("look in reports.py for it", True),
)


def _found(text: str, paths: bool) -> list[tuple[str, str]]:
    added: list[tuple[str, str]] = []
    dropped._identifiers(text, 1, lambda kind, value, *_, **__: added.append((kind, value)), paths)
    return added


def test_an_identifier_of_every_kind_is_still_found_behind_the_gate():
    for text, paths in ONE_OF_EACH:
        assert _found(text, paths), text


def _adds(matches) -> list[tuple[str | None, int, int]]:
    return [
        (m.lastgroup, *m.span())
        for m in matches
        if m.lastgroup in ("url", "uuid", "issue", "ticket", "hex", "ticked", "path")
    ]


def test_the_runs_scanned_give_every_match_the_whole_texts_scan_gives_of_the_labelled_sessions():
    texts = [text for text, _ in ONE_OF_EACH]
    texts += ["see a/b.py, then c-12 and https://x.org/y", "closes #12 in `a b/c.py`", "x\u00a0src/app.py\tTKT-123 end"]
    for make in (*dropped_dev.SESSIONS, *dropped_fresh.SESSIONS):
        for entry in make().conversation.entries:
            texts.extend(dropped._strings(entry))
    assert len(texts) > 1000
    found = 0
    for text in texts:
        for paths in (False, True):
            whole = _adds(dropped._IDENTIFIER.finditer(text))
            if not paths:
                whole = [m for m in whole if m[0] != "path"]
            scanned = _adds(dropped._scanned(text, paths))
            assert [m for m in scanned if paths or m[0] != "path"] == whole, text[:200]
            found += bool(whole)
    assert found > 100


def test_prose_without_a_mark_is_not_scanned_and_adds_nothing():
    text = "Keep the invoice table as it is, since finance reads it."
    assert list(dropped._scanned(text, True)) == [] and _found(text, True) == []
    # A sentence's full stop is no file extension: only ".x" is.
    assert list(dropped._scanned("It works. Ship it.", True)) == []


def test_a_number_the_summary_lacks_is_still_missing_when_its_digits_are_not_ascii():
    summary = dropped.Summary("1. Primary Request and Intent:\n   Flag the rows of the invoice table.\n")
    assert summary._missing_numbers("keep the invoice table as it is") == []
    assert summary._missing_numbers("flag the 1284 rows of the invoice table") == ["1284"]
    # Superscript digits are no digit to `\d` but are digits after NFKC: the shortcut is for ASCII alone.
    assert summary._missing_numbers("flag the \u00b9\u00b2\u2078\u2074 rows of the invoice table") == ["1284"]


# One phrase for each alternative of CONSTRAINT_WORDS and REASON_WORDS, as a user or the model says it.
SAYS_A_CONSTRAINT = (
    *("You MUST run it", "never touch it", "Always ask", "only the api", "do not push", "Don't push"),
    *("dont push", "Should not change", "shouldn't change", "must not go", "Mustn't go", "WITHOUT tests"),
    *("avoid it", "Keep it", "make sure it runs", "no more than two", "at most 3", "at least once"),
    *("instead of that", "not allowed here", "Forbidden there", "tests are required", "require a lock"),
)
GIVES_A_REASON = (
    *("Because it broke", "since it broke", "so that it runs", "due to the lock", "in order to ship"),
    *("Otherwise it fails", "rather than that", "I'd rather not", "instead of this", "I prefer that"),
    *("We'll keep it", "we keep it", "would also work", "the trade-off is", "a tradeoff", "we decided"),
    *("decide now", "I chose it", "choose one", "Going with A", "went with B", "opted for C"),
    *("the root cause", "caused by a race", "the culprit is", "The reason is", "it comes from x"),
    *("they come from y", "it came with z", "it broke, so I left it"),
)


def test_every_phrase_the_marker_searches_find_passes_their_gate():
    for pattern, marks, phrases in (
        (dropped.CONSTRAINT_WORDS, dropped._CONSTRAINT_MARKS, SAYS_A_CONSTRAINT),
        (dropped.REASON_WORDS, dropped._REASON_MARKS, GIVES_A_REASON),
    ):
        for phrase in phrases:
            assert pattern.search(phrase), phrase  # the phrase is one the search finds…
            assert dropped._may_say(phrase, marks), phrase  # …so the gate must let it through


def test_the_marker_gates_let_through_every_sentence_of_the_labelled_sessions_the_searches_find():
    found = {"constraint": 0, "reason": 0}
    for make in (*dropped_dev.SESSIONS, *dropped_fresh.SESSIONS):
        for entry in make().conversation.entries:
            for text in dropped._strings(entry):
                for sentence in (text, *dropped.sentences(text)):
                    if dropped.CONSTRAINT_WORDS.search(sentence):
                        found["constraint"] += 1
                        assert dropped._may_say(sentence, dropped._CONSTRAINT_MARKS), sentence[:200]
                    if dropped.REASON_WORDS.search(sentence):
                        found["reason"] += 1
                        assert dropped._may_say(sentence, dropped._REASON_MARKS), sentence[:200]
    assert min(found.values()) > 100  # the sessions say many of both: the check checked something


def test_a_message_without_a_marker_is_not_searched_and_one_not_ascii_always_is():
    assert not dropped._may_say("Ship the invoice export tonight.", dropped._REASON_MARKS)
    assert not dropped._may_say("Ship the invoice export tonight.", dropped._CONSTRAINT_MARKS)
    # IGNORECASE matches "ſ" (long s) to "s": a lower-case copy would miss "ſince", the search does not.
    assert dropped.REASON_WORDS.search("ſince it broke")
    assert dropped._may_say("ſince it broke", dropped._REASON_MARKS)


def _numbers_asked_for(text: str) -> list[str]:
    """What `_missing_numbers` looks for in `text`, with no gate before it: its exact numbers of two digits or more."""
    said = dropped.numbers(dropped._NOT_NUMBERS.sub(" ", text))
    return [n for n, share, _ in said if not share and len(n.replace(".", "")) >= 2]


def test_every_text_with_a_number_missing_numbers_asks_for_passes_its_gate():
    texts = ["42 rows", "it took 4.2 s", "1,500 users", "v2 and 3", "5k rows", "7 rows", "on 2026-12-04 at 12:30"]
    for make in (*dropped_dev.SESSIONS, *dropped_fresh.SESSIONS):
        for entry in make().conversation.entries:
            texts.extend(dropped._strings(entry))
    asked = 0
    for text in texts:
        if text.isascii() and _numbers_asked_for(text):
            asked += 1
            assert dropped._TWO_DIGITS.search(text), text[:200]
    assert asked > 100
    # Two digits only round ("5k") or none at all: nothing is asked for, and the gate says so.
    assert not _numbers_asked_for("5k rows") and not dropped._TWO_DIGITS.search("5k rows")


def test_a_number_of_two_digits_the_summary_lacks_is_still_missing():
    summary = dropped.Summary("The export was fixed.")
    assert summary._missing_numbers("it took 4.2 s for 1,500 users") == ["4.2", "1500"]
    assert summary._missing_numbers("it took 4 s") == []


def test_ascii_text_is_already_plain_and_other_text_is_still_made_plain():
    # `_plain` returns ASCII text as it is: NFKC and the plain quotes and dashes must leave every ASCII character so.
    for code in range(128):
        character = chr(code)
        assert unicodedata.normalize("NFKC", character).translate(dropped._PLAIN) == character, code
    assert dropped._plain("it’s the “retry” – ﬁle") == 'it\'s the "retry" - file'
    assert dropped.normalised("Don’t   TOUCH ﬁles") == dropped.normalised("don't touch files") == "don t touch files"
