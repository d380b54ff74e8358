"""The rule of "what compaction dropped" (restore/dropped.py, #41), one class of the issue at a
time: facts read where they live (tool output, edits, prose reasons), one fact per thing,
matching that sees a paraphrase, noise left out, a confidence on each item; and the hand-labelled
development sessions (support/dropped_dev.py) as a whole."""

from __future__ import annotations

import pytest

from precompact.restore import dropped
from support.dropped_dev import SESSIONS, Conversation


def _listed(conversation: Conversation, summary: str) -> list[dropped.Fact]:
    listed, _ = dropped.dropped_facts(conversation.entries, dropped.Summary(summary, conversation.cwd))
    return listed


def _texts(listed: list[dropped.Fact], kind: str) -> list[str]:
    return [f.text for f in listed if f.kind == kind]


NOTHING = "1. Primary Request and Intent:\n   Nothing relevant here.\n"


@pytest.mark.parametrize("make", SESSIONS, ids=lambda m: m.__name__)
def test_the_hand_labelled_sessions_dropped_facts_are_listed_and_the_kept_ones_and_noise_are_not(make):
    session = make()
    listed = _listed(session.conversation, session.summary)
    wrong = [
        label
        for label in session.labels
        if any(f.kind == label.kind and label.says in f.text for f in listed) is not label.dropped
    ]
    assert not wrong, wrong


# --- where facts live -------------------------------------------------------------------------


def test_the_commit_made_and_a_migration_head_are_read_from_the_tools_output():
    c = Conversation("/p", "ids")
    c.bash("git commit -am 'Fix totals'", "[main 4f5e6d7] Fix totals\n 1 file changed, 2 insertions(+)")
    c.bash("alembic heads", "ae1027a6acf4 (head)")
    c.bash("git log --oneline -1", "9c41e7a Use Decimal.quantize for totals")
    listed = _listed(c, NOTHING)
    assert {"4f5e6d7", "ae1027a6acf4", "9c41e7a"} <= set(_texts(listed, "identifier"))
    made = next(f for f in listed if f.text == "4f5e6d7")
    assert made.detail == "[main 4f5e6d7] Fix totals" and made.entry == 2
    assert not _texts(listed, "command"), "the commit is the fact, not the command as well"


def test_counts_and_timings_in_tool_output_are_measurements_the_newest_of_each_shape():
    c = Conversation("/p", "measure")
    c.bash("python scripts/recheck.py", "checked lines\nflagged 1,284 rows with a one-cent difference")
    c.bash("psql -c 'EXPLAIN ANALYZE SELECT 1'", "Execution Time: 2874.552 ms")
    c.bash("psql -c 'EXPLAIN ANALYZE SELECT 2'", "Execution Time: 41.870 ms")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert "flagged 1,284 rows with a one-cent difference" in measured
    assert "Execution Time: 41.870 ms" in measured and "Execution Time: 2874.552 ms" not in measured


def test_a_command_not_found_is_the_error_of_its_failed_command_and_one_failure_is_one_fact():
    c = Conversation("/p", "fail")
    c.bash("mix test", "Exit code 127\nbash: erl: command not found", error=True)
    c.bash("pytest -q tests/test_a.py", "E   AssertionError: 3 != 4\nFAILED tests/test_a.py::test_x", error=True)
    listed = _listed(c, NOTHING)
    failed = {f.text: f.detail for f in listed if f.kind == "failed command"}
    assert failed == {
        "mix test": "bash: erl: command not found",
        "pytest -q tests/test_a.py": "AssertionError: 3 != 4",
    }
    assert not _texts(listed, "error"), "the error line is the failure's detail, not a second fact"


def test_what_an_edit_changed_is_one_fact_old_to_new():
    c = Conversation("/home/ana/billing", "edit")
    c.tool(
        "Edit",
        {
            "file_path": "/home/ana/billing/billing/money.py",
            "old_string": "def total(x):\n    return x.quantize(CENT, rounding=ROUND_HALF_UP)\n",
            "new_string": "def total(x):\n    return x.quantize(CENT, rounding=ROUND_HALF_EVEN)\n",
        },
        "updated",
    )
    edits = _texts(_listed(c, NOTHING), "edit")
    assert edits == [
        "billing/money.py: return x.quantize(CENT, rounding=ROUND_HALF_UP) → return x.quantize(CENT, rounding=ROUND_HALF_EVEN)"
    ]
    kept = _listed(c, "3. Files and Code Sections:\n   - money.py: totals now use ROUND_HALF_EVEN.\n")
    assert not _texts(kept, "edit")


def test_a_reason_in_plain_prose_is_a_decision_and_one_sentence_is_one_fact():
    c = Conversation("/p", "reason")
    c.user("Round per step because finance's spreadsheet does it that way.")
    c.user("Never use floats for money.")
    c.say("The loader reads the file because it must. The root cause is the cache filled before the lock.")
    listed = _listed(c, NOTHING)
    assert _texts(listed, "decision") == [
        "Round per step because finance's spreadsheet does it that way.",
        "The root cause is the cache filled before the lock.",
    ], "the model's explanations are not decisions; what it found the cause to be is"
    assert _texts(listed, "constraint") == ["Never use floats for money."]
    assert not _texts(listed, "request"), "a constraint or a reason is not listed again as a request"


# --- matching that sees a paraphrase ----------------------------------------------------------


def test_a_request_restated_or_quoted_with_an_elision_is_kept():
    c = Conversation("/p", "restated")
    c.user("Can you make the export round per step instead of at the end, like finance's spreadsheet does?")
    c.user("Please migrate the users table to the new schema and keep the old column until Friday.")
    summary = (
        "6. All user messages:\n"
        "   - The user wants the export rounded at each step rather than at the end, matching finance's spreadsheet.\n"
        '   - "Please migrate the users table … until Friday."\n'
    )
    assert not _listed(c, summary)


def test_numbers_are_matched_with_tolerance_but_a_neighbour_is_not_the_number():
    c = Conversation("/p", "numbers")
    c.bash("wc -l reports/orders.py", "641 reports/orders.py")
    c.say("The sum is 84.1499999 and 1,284 rows moved; port 5433 is the replica.")
    summary = "reports/orders.py is about 640 lines; the sum 84.14999… and 1284 rows; port 5434 is the primary."
    numbers = _texts(_listed(c, summary), "number")
    assert numbers == ["5433"]


def test_a_file_name_matches_only_the_one_session_path_it_can_mean():
    c = Conversation("/home/li/portal", "paths")
    c.tool("Read", {"file_path": "/home/li/portal/services/reports.py"}, "x")
    c.tool("Read", {"file_path": "/home/li/portal/api/reports.py"}, "x")
    for language in ("en", "de", "fr", "es"):
        c.tool("Edit", {"file_path": f"/home/li/portal/locales/{language}/reports.json"}, "updated")
    summary = "3. Files and Code Sections:\n   - api/reports.py\n   - locale files (en/de/fr reports.json)\n"
    listed = _listed(c, summary)
    assert _texts(listed, "file read") == ["/home/li/portal/services/reports.py"]
    assert _texts(listed, "file edited") == ["/home/li/portal/locales/es/reports.json"]
    assert {f.confidence for f in listed} == {dropped.POSSIBLY_DROPPED}, "a file of that name is in the summary"


def test_a_sentence_another_fact_matches_better_is_that_facts_restatement():
    c = Conversation("/p", "rivals")
    c.user("Never touch the invoice ledger table while the migration runs.")
    c.user("Never touch the payroll ledger table while the migration runs.")
    listed = _listed(c, "Never touch the payroll ledger table while the migration runs.")
    assert [(f.text, f.confidence) for f in listed] == [
        ("Never touch the invoice ledger table while the migration runs.", dropped.POSSIBLY_DROPPED)
    ]


# --- noise ------------------------------------------------------------------------------------


def test_dates_line_numbers_arithmetic_escapes_and_code_fragments_are_not_facts():
    c = Conversation("/p", "noise")
    c.say(
        "Deployed on 2026-11-23 at 10:42; line 214 and money.py:1234 raise it; 1284 / 12000 = 10.7% of lines. "
        "The codes \\x1b[0m and \\033[1m come from the bar; os.path, request.user and r.text are fine."
    )
    listed = _listed(c, NOTHING)
    assert _texts(listed, "number") == []
    assert _texts(listed, "path") == ["money.py"]


def test_a_number_inside_a_listed_request_is_shown_there_and_not_counted_as_kept():
    c = Conversation("/p", "inside")
    c.user("Open port 5433 on the replica for the reporting job.")
    listed, kept = dropped.dropped_facts(c.entries, dropped.Summary(NOTHING, c.cwd))
    assert [(f.kind, f.text) for f in listed] == [("request", "Open port 5433 on the replica for the reporting job.")]
    assert kept == 0


def test_routine_commands_are_not_facts():
    c = Conversation("/p", "routine")
    for command in ("ls -l", "docker compose ps", "docker compose logs web", "docker compose logs web", "git status"):
        c.bash(command, "ok")
    c.bash("cd /p && make deploy 2>&1 | tail -5", "done")
    assert _texts(_listed(c, NOTHING), "command") == ["cd /p && make deploy 2>&1 | tail -5"]
    assert not _listed(c, "Ran `make deploy`.")


def test_the_constraint_splitter_cuts_at_no_decimal_point_and_no_file_extension():
    c = Conversation("/p", "split")
    c.user("Show the margin as 87.30 instead of 84.15 for the sample. Only edit billing.py and never touch the ledger.")
    assert _texts(_listed(c, NOTHING), "constraint") == [
        "Show the margin as 87.30 instead of 84.15 for the sample.",
        "Only edit billing.py and never touch the ledger.",
    ]


# --- ranking ----------------------------------------------------------------------------------


def test_the_likely_important_come_first_and_the_surer_first_within_a_kind():
    c = Conversation("/p", "rank")
    c.say("The cache key is built in make_cache_key from port 8443.")
    c.user("Please add the report for the regional managers next.")
    c.user("Never log the customer email address anywhere.")
    c.user("Never log the customer phone number anywhere.")
    listed = _listed(c, "Never log the customer email address.")
    kinds = [f.kind for f in listed]
    assert kinds.index("constraint") < kinds.index("request") < kinds.index("name") < kinds.index("number")
    assert [f.confidence for f in listed if f.kind == "constraint"] == [dropped.POSSIBLY_DROPPED]
