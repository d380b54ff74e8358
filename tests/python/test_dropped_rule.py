"""The rule of "what compaction dropped" (restore/dropped.py, #41), one class of the issue at a
time: facts read where they live (tool output, edits, prose reasons), one fact per thing,
matching that sees a paraphrase, noise left out, a confidence on each item; and the hand-labelled
development sessions (support/dropped_dev.py) as a whole."""

from __future__ import annotations

import time

import pytest

from precompact.restore import dropped
from support import dropped_fresh
from support.dropped_dev import Conversation, score


def _listed(conversation: Conversation, summary: str) -> list[dropped.Fact]:
    listed, _ = dropped.dropped_facts(conversation.entries, dropped.Summary(summary, conversation.cwd))
    return listed


def _texts(listed: list[dropped.Fact], kind: str) -> list[str]:
    return [f.text for f in listed if f.kind == kind]


NOTHING = "1. Primary Request and Intent:\n   Nothing relevant here.\n"


def test_on_the_hand_labelled_sessions_most_listed_items_name_a_dropped_fact_and_most_dropped_facts_are_listed():
    """The development set's floor (`scripts/bench_dropped.py --dev` prints the figures, the
    misses and the items that are not right). The rule of 2026-12-03 scored precision 0.267 and
    recall 0.652 on it, rule 2 0.800 and 0.870, rule 3 0.759 and 0.957, rules 4 to 7 0.767 and 0.957,
    rule 8 (an age, how much a tool went through: no result) 0.821 and 0.957."""
    scored = score()
    assert scored.precision >= 0.80, (scored.precision, scored.unwanted)
    assert scored.recall >= 0.95, (scored.recall, scored.missed)
    assert scored.found.get("decision") == scored.dropped["decision"], "every reason in prose the summary lost"


def test_on_the_fresh_sessions_the_rule_holds_its_figures():
    """The fresh set's floor, just under the rule's figures (`scripts/bench_dropped.py --fresh`):
    rule 3 scored precision 0.478 and recall 0.491 on it, rule 4 0.505 and 0.595, rule 5 0.547
    and 0.665, rule 6 (tool output and commands the session went on with; decisions in prose,
    values an edit brought in, files a command wrote) 0.559 and 0.757, rule 7's candidate (what a
    command asked for: the fields it selects, a crontab line, a failure's DETAIL) 0.572 and 0.827,
    rule 8 (a failure fixed red then green, a message quoted sentence by sentence, how much a tool
    went through: no result) 0.618 and 0.827 on its first 26 sessions; with the five of round 10
    (advisories, versions, benchmarks, migrations, query rows: 31 sessions) rule 8 scores 0.632
    and 0.778, rule 9 (identifiers and measurements where tools print them) 0.675 and 0.860. Far
    from #41's 0.85 precision: the floor keeps a change from losing what rules 6 to 9 gained. Round
    12 added four sessions labelled before the rule ran on them (37): rule 10 scored 0.681 and 0.822
    on all, 0.760 and 0.567 on the four; rule 11 0.704 and 0.860 on all, 0.690 and 0.863 on the first 33.
    Round 13 added three (40): rule 12 scored 0.686 and 0.851 on all, 0.464 and 0.706 on the three;
    rule 13 (a check's clean result, a configuration's key an edit set, a figure the model singles
    out of a table or writes with its thousands marked) 0.710 and 0.861 on all, 0.702 and 0.863 on
    the first 33. Round 14 added three (43): rule 13 scored 0.701 and 0.837 on all, 0.594 and 0.577
    on the three; rule 14 (what extraction never reached: a pattern or a test's string an edit
    brought in, a tool's version, an image, a cloud resource, a peak memory, a tally counted again)
    0.717 and 0.863 on all, 0.709 and 0.861 on the first 40. Round 15 added three (46): rule 14 scored
    0.725 and 0.825 on all, 0.938 and 0.486 on the three; rule 15 (a constraint's reason after its
    colon, a program not found told only as missing, a plan's changes and a runtime's memory each
    run, a count said in its magnitude's word, a choice reported made) 0.729 and 0.848 on all, 0.955
    and 0.686 on the three, 0.717 and 0.866 on the first 43. Round 16 added three (49): rule 15 scored
    0.715 and 0.826 on all, 0.500 and 0.538 on the three; rule 16 (an error line's colon goes on on
    the next line, the addresses and hosts an output names, a dependency a diff moved) 0.719 and
    0.837 on all, 0.576 and 0.692 on the three, 0.730 and 0.848 on the first 46."""
    before = score(dropped_fresh.SESSIONS[:ROUND_11_SESSIONS])
    assert before.precision >= 0.695, (before.precision, before.unwanted)
    assert before.recall >= 0.860, (before.recall, before.missed)
    round_13 = score(dropped_fresh.SESSIONS[:ROUND_13_SESSIONS])
    assert round_13.precision >= 0.705, (round_13.precision, round_13.unwanted)
    assert round_13.recall >= 0.855, (round_13.recall, round_13.missed)
    round_14 = score(dropped_fresh.SESSIONS[:ROUND_14_SESSIONS])
    assert round_14.precision >= 0.710, (round_14.precision, round_14.unwanted)
    assert round_14.recall >= 0.860, (round_14.recall, round_14.missed)
    round_15 = score(dropped_fresh.SESSIONS[:ROUND_15_SESSIONS])
    assert round_15.precision >= 0.725, (round_15.precision, round_15.unwanted)
    assert round_15.recall >= 0.845, (round_15.recall, round_15.missed)
    scored = score(dropped_fresh.SESSIONS)
    assert scored.precision >= ALL_FRESH_PRECISION, (scored.precision, scored.unwanted)
    assert scored.recall >= ALL_FRESH_RECALL, (scored.recall, scored.missed)


# The fresh set's sessions up to round 11's; round 12 added four, labelled before the rule ran on them,
# whose forms the rule was then changed for: the floors of the first ones stay where they were.
ROUND_11_SESSIONS = 33
# ... and up to round 13's (40); round 14 added three the same way.
ROUND_13_SESSIONS = 40
# ... and up to round 14's (43); round 15 added three the same way.
ROUND_14_SESSIONS = 43
# ... and up to round 15's (46); round 16 added three the same way.
ROUND_15_SESSIONS = 46
ALL_FRESH_PRECISION = 0.715
ALL_FRESH_RECALL = 0.830


def test_on_the_fresh_and_development_sessions_an_item_listed_dropped_is_right_as_a_user_reads_it():
    """What "dropped" promises, against "possibly dropped" (`precision by confidence` of
    `scripts/bench_dropped.py`): rule 9 listed fresh 135 of 175 "dropped" items right (0.77),
    development 10 of 10; rule 10 says "dropped" only of what the rule has evidence for (a lookup's
    answer, a line grep picked, a name said again, a failed run's tally, a baseline's figures are
    "possibly"): fresh 109 of 120 (0.91), development 10 of 10; rule 11 on the 37 fresh sessions 123 of 136 (0.90);
    rule 13 on the 40, 130 of 146 (0.89); rule 14 on the 43, 143 of 160 (0.89); rule 15 on the 46, 152
    of 169 (0.90), on the 49 of round 16 158 of 180 (0.88); rule 16 on the 49, 161 of 183 (0.88)."""
    for sessions, floor in (
        (dropped_fresh.SESSIONS[:ROUND_13_SESSIONS], 0.89),
        (dropped_fresh.SESSIONS[:ROUND_15_SESSIONS], 0.89),
        (dropped_fresh.SESSIONS, 0.87),
        (None, 0.9),
    ):
        right, listed = score(sessions).by_confidence[dropped.DROPPED]
        assert right / listed >= floor, (right, listed)


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


def test_counts_and_timings_in_tool_output_are_measurements_the_newest_of_each_shape_but_a_benchmarks_each():
    c = Conversation("/p", "measure")
    c.bash("python scripts/recheck.py", "checked lines\nflagged 1,284 rows with a one-cent difference")
    c.bash("python scripts/recheck.py", "checked lines\nflagged 1,190 rows with a one-cent difference")
    c.bash("psql -c 'EXPLAIN ANALYZE SELECT 1'", "Execution Time: 2874.552 ms")
    c.bash("psql -c 'EXPLAIN ANALYZE SELECT 2'", "Execution Time: 41.870 ms")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert "flagged 1,190 rows with a one-cent difference" in measured
    assert "flagged 1,284 rows with a one-cent difference" not in measured, "a rerun's count is the newest"
    # a benchmark's result is run to be compared with the run before the change: each is a fact
    assert "Execution Time: 41.870 ms" in measured and "Execution Time: 2874.552 ms" in measured


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


def test_a_failures_detail_is_the_line_that_says_why_not_the_one_that_says_it_failed():
    c = Conversation("/p", "why")
    c.bash(
        "cargo build",
        "error[E0502]: cannot borrow `seen` as mutable\nerror: could not compile `dedupe` due to 1 previous error",
        error=True,
    )
    c.bash(
        "cargo clippy -- -D warnings",
        "warning: this `if` has identical blocks\nerror: could not compile `dedupe` due to 1 previous error",
        error=True,
    )
    c.bash("go test -race ./pool", "WARNING: DATA RACE\n--- FAIL: TestDrain (0.31s)\nFAIL", error=True)
    c.bash(
        "go test ./pool",
        "--- FAIL: TestDrain (0.04s)\n    pool_test.go:88: drained 499 jobs, want 500\nFAIL",
        error=True,
    )
    listed = _listed(c, NOTHING)
    assert [f.detail for f in listed] == [
        "error[E0502]: cannot borrow `seen` as mutable",
        "warning: this `if` has identical blocks",
        "WARNING: DATA RACE",
        "pool_test.go:88: drained 499 jobs, want 500",
    ]
    told = "4. Errors and fixes:\n   - E0502 borrow error in the scan loop.\n   - The race detector found a data race in the pool.\n"
    assert [f.text for f in _listed(c, told)] == ["cargo clippy -- -D warnings", "go test ./pool"], (
        "a failure the summary tells in its own words is kept; `pool`, which both go runs say, does not keep the second"
    )


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
    c.say(
        "The loader reads the file at start, so the cache is warm. "
        "I'll guard the counter with the existing mutex rather than a channel, since Drain runs once per shutdown. "
        "The root cause is the cache filled before the lock."
    )
    listed = _listed(c, NOTHING)
    assert _texts(listed, "decision") == [
        "Round per step because finance's spreadsheet does it that way.",
        "I'll guard the counter with the existing mutex rather than a channel, since Drain runs once per shutdown.",
        "The root cause is the cache filled before the lock.",
    ], "the model's narration ('X, so Y') is no decision; a choice with its reason, or a cause, is"
    assert _texts(listed, "constraint") == ["Never use floats for money."]
    assert not _texts(listed, "request"), "a constraint or a reason is not listed again as a request"
    assert {f.confidence for f in listed if f.kind == "decision"} == {dropped.POSSIBLY_DROPPED}


def test_a_decision_whose_choice_the_summary_keeps_but_not_its_reason_is_listed():
    c = Conversation("/p", "why")
    c.say(
        "I'll rename our bucket to acme-ci-cache-eu1 rather than importing the old one, "
        "because importing would put another team's bucket under our state."
    )
    assert _texts(
        _listed(
            c, "5. Problem Solving:\n   Renamed the bucket to acme-ci-cache-eu1 instead of importing the old one.\n"
        ),
        "decision",
    )
    kept = "5. Problem Solving:\n   Renamed the bucket to acme-ci-cache-eu1; importing would have put the other team's bucket under our state.\n"
    assert not _listed(c, kept)


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
    c.bash("python scripts/count.py", "641 lines read")
    c.bash("python scripts/sum.py", "total 84.1499999 ms")
    c.bash("python scripts/move.py", "1,284 rows moved")
    c.bash("python scripts/port.py", "5433 requests served")
    summary = "The script read about 640 lines; the sum took 84.14999… ms and 1284 rows moved; 5434 requests."
    assert _texts(_listed(c, summary), "measurement") == ["5433 requests served"]
    failed = Conversation("/p", "failed")
    failed.bash("pytest -q tests/test_pool.py --count=50", "pool_test.go:88: drained 499 jobs, want 500", error=True)
    told = "4. Errors and fixes:\n   - The pool test failed: drained 499 jobs, want 500.\n"
    assert not _listed(failed, told)
    assert _texts(_listed(failed, told.replace("499", "498")), "failed command"), (
        "a number the failure gives is not kept"
    )


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


def test_numbers_names_and_paths_the_model_says_in_passing_are_not_facts():
    c = Conversation("/p", "noise")
    c.say(
        "Deployed on 2026-11-23 at 10:42; line 214 and money.py:1234 raise it; 1284 / 12000 = 10.7% of lines. "
        "The codes \\x1b[0m and \\033[1m come from the bar; os.path, request.user and r.text are fine; "
        "`make_cache_key` builds it from port 8443 in settings/base.py."
    )
    assert not _listed(c, NOTHING)
    c.user("The settings live in settings/base.py and the docs at https://example.com/cache are right.")
    assert {(f.kind, f.text) for f in _listed(c, NOTHING)} == {
        ("request", "The settings live in settings/base.py and the docs at https://example.com/cache are right.")
    }, "what the user names is shown in the request"


def test_a_number_inside_a_listed_request_is_shown_there_and_not_counted_as_kept():
    c = Conversation("/p", "inside")
    c.user("Open port 5433 on the replica for the reporting job.")
    listed, kept = dropped.dropped_facts(c.entries, dropped.Summary(NOTHING, c.cwd))
    assert [(f.kind, f.text) for f in listed] == [("request", "Open port 5433 on the replica for the reporting job.")]
    assert kept == 0


def test_a_command_that_ran_is_a_fact_only_through_the_result_its_output_gives():
    c = Conversation("/p", "ran")
    for command in ("ls -l", "docker compose ps", "docker compose logs web", "git status", "make deploy"):
        c.bash(command, "ok")
    c.bash("npx jest src", " PASS  src/a.test.ts\nTests:       212 passed, 212 total\nTime:        9.12 s")
    c.bash("python manage.py backfill", "batch 0: 10000 rows\nbatch 1: 10000 rows\nupdated 20,000 rows in 184.2 s")
    c.bash("cargo build 2>&1 | tail -2", "    Finished dev [unoptimized + debuginfo] target(s) in 4.21s")
    listed = _listed(c, NOTHING)
    assert [(f.kind, f.text, f.detail) for f in listed] == [
        ("measurement", "Tests:       212 passed, 212 total", "npx jest src"),
        ("measurement", "updated 20,000 rows in 184.2 s", "python manage.py backfill"),
    ], "the result line (the last), not the time the command took"


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
    c.bash("git commit -am 'Cache key'", "[main 4f5e6d7] Cache key\n 1 file changed")
    c.user("Please add the report for the regional managers next.")
    c.user("Never log the customer email address anywhere.")
    c.user("Never log the customer phone number anywhere.")
    c.bash("python scripts/recheck.py", "flagged 1,284 rows")
    listed = _listed(c, "Never log the customer email address.")
    kinds = [f.kind for f in listed]
    assert kinds == ["constraint", "request", "identifier", "measurement"]
    assert [f.confidence for f in listed if f.kind == "constraint"] == [dropped.POSSIBLY_DROPPED]


# --- rule 3: where facts live, read more widely; less noise -----------------------------------


def test_an_error_line_is_a_failure_only_of_a_command_that_failed_or_whose_pipe_hid_its_status():
    c = Conversation("/p", "errors")
    c.bash(
        "git bisect run go test ./handlers/",
        "[9f8e7d6] cart: lazy-load line items\n--- FAIL: TestCheckoutEmptyCart (0.01s)\n"
        "9f8e7d6 is the first bad commit",
    )
    c.tool(
        "Edit",
        {"file_path": "/p/a.py", "old_string": "x = 1", "new_string": "x = 2"},
        "String to replace not found in file.",
        error=True,
    )
    c.bash("cargo build 2>&1 | tail -3", "error[E0433]: failed to resolve: could not find `Server` in `axum`")
    c.bash("cargo test 2>&1 | tail -1", "error: could not compile `tiles` due to 1 previous error")
    c.bash("kubectl logs checkout-api-7f9c --previous | tail -2", "FATAL ERROR: JavaScript heap out of memory")
    listed = _listed(c, NOTHING)
    assert [(f.kind, f.text, f.detail) for f in listed if f.kind in ("failed command", "measurement")] == [
        (
            "failed command",
            "cargo build 2>&1 | tail -3",
            "error[E0433]: failed to resolve: could not find `Server` in `axum`",
        )
    ], (
        "a bisect's failing step and a log are what they read; an Edit refused is the tool's; `could not compile` alone says no why"
    )
    assert _texts(listed, "identifier") == ["9f8e7d6"]


def test_a_compilers_diagnostic_is_the_line_that_says_why_a_build_failed():
    c = Conversation("/p", "diagnostic")
    c.bash(
        "go build ./...",
        "# github.com/rui/shop/internal/handlers\ninternal/handlers/checkout.go:62:5: undefined: errors\n",
        error=True,
    )
    listed = _listed(c, NOTHING)
    assert [(f.text, f.detail) for f in listed] == [("go build ./...", "undefined: errors")]
    assert not _listed(c, '4. Errors and fixes:\n   - Build error "undefined: errors": fixed by adding the import.\n')


def test_ids_come_from_commands_that_ask_for_them_and_from_a_commands_own_arguments():
    c = Conversation("/p", "ids3")
    c.bash("git bisect reset", "Previous HEAD position was 3a2b1c0 docs: checkout sequence diagram")
    c.bash("git checkout main", "Switched to branch 'main'\nYour branch is ahead by 1 commit (e4d5c6b).")
    c.bash("gh run watch 8812345678 --exit-status", "✓ build in 3m41s")
    c.bash("head -c 7000000 /dev/urandom > /tmp/t.bin", "")
    c.bash("python manage.py showmigrations customers | tail -2", " [X] 0041_auto_20261102\n [ ] 0042_customer_region")
    c.say("Customer C-10442 reproduces it; the ticket is ENG-812, and the hash is SHA-256.")
    listed = _listed(c, NOTHING)
    assert [(f.text, f.confidence) for f in listed if f.kind == "identifier"] == [
        ("8812345678", dropped.DROPPED),
        ("C-10442", dropped.DROPPED),
        ("ENG-812", dropped.DROPPED),
        ("0041_auto_20261102", dropped.POSSIBLY_DROPPED),
        ("0042_customer_region", dropped.POSSIBLY_DROPPED),
    ], "not an id a git command mentions in passing, nor a flag's value; one of several unmarked ids is a guess"


def test_a_file_a_search_found_a_fact_in_or_a_command_printed_is_a_file_read():
    c = Conversation("/home/sam/web", "found")
    c.bash(
        'grep -rn "useFakeTimers" src/',
        "src/backoff.test.ts:7:  vi.useFakeTimers();\nsrc/poll.test.ts:12:  vi.useFakeTimers({ toFake: ['setTimeout'] });",
    )
    c.bash("grep -rn TODO .", "\n".join(f"src/m{i}.ts:1: // TODO" for i in range(5)))
    c.bash("cat config/limits.yaml", "max_body: 8MB")
    c.bash("cat package.json | grep -A3 date-fns", '"date-fns": "^2.30.0",')
    listed = _listed(c, NOTHING)
    assert [(f.text, f.confidence, f.detail) for f in listed if f.kind == "file read"] == [
        ("src/backoff.test.ts", dropped.POSSIBLY_DROPPED, "src/backoff.test.ts:7:  vi.useFakeTimers();"),
        (
            "src/poll.test.ts",
            dropped.POSSIBLY_DROPPED,
            "src/poll.test.ts:12:  vi.useFakeTimers({ toFake: ['setTimeout'] });",
        ),
        # a file a command printed is read as often for a line of it as for itself: unlike a Read, unsure
        ("config/limits.yaml", dropped.POSSIBLY_DROPPED, None),
    ], "a search naming five files is a survey; `cat X | grep Y` looks a value up"
    kept = _listed(c, "3. Files and Code Sections:\n   - config/limits.yaml, src/poll.test.ts (fake timers)\n")
    assert [f.text for f in kept if f.kind == "file read"] == ["src/backoff.test.ts"]


def test_an_outputs_last_two_results_are_measurements_judged_by_their_telling_numbers():
    c = Conversation("/p", "measure3")
    c.bash(
        "bundle exec brakeman -q 2>&1 | tail -12",
        "Checks Run: 77\nErrors: 0\nSecurity Warnings: 5\n\n== Warnings ==\nMessage: Unscoped call to `Invoice#find`",
    )
    c.bash(
        "./gradlew test 2>&1 | tail -4",
        "    org.opentest4j.AssertionFailedError: expected: <[O-3]> but was: <[O-3, O-3]>\n\n47 tests completed, 1 failed",
        error=True,
    )
    c.bash("grep -A2 'Session Metrics' /tmp/boot.log", "0 nanoseconds spent executing 0 JDBC batches;")
    c.bash("valgrind ./tini_dump ok.ini", "==42310== ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 0 from 0)")
    c.bash("bundle exec rspec spec/requests/cross_account_spec.rb", "Finished in 1.71 seconds\n3 examples, 1 failure")
    c.bash("kubectl get pods", "NAME  READY  STATUS  RESTARTS  AGE\napi-7f9c   0/1   Running   5 (12s ago)   52m")
    c.bash(
        "go test -bench=Submit -run=^$",
        "BenchmarkSubmit-8   1843210   651.2 ns/op   48 B/op\nPASS\nok  \tacme/pool\t2.071s",
    )
    c.bash(
        "bundle exec rspec 2>&1 | tail -3", "Finished in 2 minutes 3.4 seconds\n1412 examples, 0 failures, 6 pending\n"
    )
    listed = _listed(c, "5. Problem Solving:\n   6 specs are pending; 1 failure fixed.\n")
    assert [(f.text, f.confidence) for f in listed if f.kind == "measurement"] == [
        ("Security Warnings: 5", dropped.DROPPED),
        ("BenchmarkSubmit-8   1843210   651.2 ns/op   48 B/op", dropped.DROPPED),
        ("1412 examples, 0 failures, 6 pending", dropped.DROPPED),
        # a failed run's tally says again that it failed: unsure, beside its failure
        ("47 tests completed, 1 failed", dropped.POSSIBLY_DROPPED),
    ], (
        "not a line of zeros (a process id, an address, an age aside); a summary's '6' and '1' do not keep '1412 examples'"
    )


def test_an_edit_of_code_is_a_fact_when_it_changed_a_value_and_an_edit_of_prose_by_its_words():
    c = Conversation("/home/rui/shop", "edits3")
    c.tool(
        "Edit",
        {
            "file_path": "/home/rui/shop/infra/main.tf",
            "old_string": '  bucket = "acme-ci-cache"',
            "new_string": '  bucket = "acme-ci-cache-eu1"',
        },
        "updated",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/rui/shop/src/scan.rs",
            "old_string": "if meta.is_symlink() { visit(path) } else { visit(path) }",
            "new_string": "visit(path)",
        },
        "updated",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/rui/shop/src/retry.ts",
            "old_string": "export async function retry(fn: Fn, options: RetryOptions = {})",
            "new_string": "export async function retry(\n  fn: Fn,\n  options: RetryOptions = {},\n  random: () => number = Math.random,\n)",
        },
        "updated",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/home/rui/shop/CHANGELOG.md",
            "old_string": "## Unreleased\n",
            "new_string": "## Unreleased\n- exports: the CSV keeps leading zeros of postcodes\n",
        },
        "updated",
    )
    assert _texts(_listed(c, NOTHING), "edit") == [
        'infra/main.tf: bucket = "acme-ci-cache" → bucket = "acme-ci-cache-eu1"',
        "CHANGELOG.md:  → - exports: the CSV keeps leading zeros of postcodes",
    ], "code rewritten or added is told by its file"
    told = "3. Files and Code Sections:\n   - CHANGELOG.md: the CSV export now keeps the leading zeros of postcodes.\n"
    assert _texts(_listed(c, told), "edit") == [
        'infra/main.tf: bucket = "acme-ci-cache" → bucket = "acme-ci-cache-eu1"'
    ]


def test_since_a_version_is_no_reason_and_a_comparison_of_figures_is_no_choice_but_a_measurement():
    c = Conversation("/p", "since")
    c.user("Since v2.14 the checkout returns 500 on an empty cart.")
    c.say("0 failures in 200 runs, and the file now takes 41 ms instead of about 5 s.")
    listed = _listed(c, NOTHING)
    assert [(f.kind, f.text) for f in listed] == [
        ("request", "Since v2.14 the checkout returns 500 on an empty cart."),
        ("measurement", "0 failures in 200 runs, and the file now takes 41 ms instead of about 5 s"),
    ]


def test_what_a_command_made_and_printed_the_address_of_and_other_schemes_addresses_are_facts():
    c = Conversation("/p", "made")
    c.bash(
        "gh pr create --fill", "branch 'logs' set up to track 'origin/logs'.\nhttps://github.com/acme/infra/pull/1187"
    )
    c.bash(
        "terraform plan", "│ Error: Error acquiring the state lock\n│   ID:        5b1e7c2a-93f4-4d0e-8c1a-2f6b9d4e7a31"
    )
    c.bash("git checkout -b hotfix && git cherry-pick 6aa0c1f", "[hotfix 91f0c3e] tax: reduced VAT\n 1 file changed")
    c.bash(
        "curl -s https://api.example.com/v1/status", "ok, see https://status.example.com and https://docs.example.com"
    )
    c.say("The offsite copy in s3://acme-db-offsite/weekly/ has every weekly; this PR closes #198.")
    listed = _listed(c, NOTHING)
    assert [(f.kind, f.text) for f in listed if f.kind in ("identifier", "url")] == [
        ("identifier", "5b1e7c2a-93f4-4d0e-8c1a-2f6b9d4e7a31"),
        ("identifier", "6aa0c1f"),
        ("identifier", "91f0c3e"),
        ("identifier", "closes #198"),
        ("url", "https://github.com/acme/infra/pull/1187"),
        ("url", "s3://acme-db-offsite/weekly/"),
    ], "one address an output prints is what the command made; two are what it read"


def test_what_the_model_reports_it_measured_is_a_measurement_once_and_with_its_clause():
    c = Conversation("/p", "prose")
    c.bash("go test -bench Submit ./internal/pool/", "BenchmarkSubmit-8   1843021   651.2 ns/op\nok  pool 2.1s")
    c.say(
        "Submit costs 651 ns/op after the change. The backfill ran in batches: 3071 rows lower-cased; "
        "41 mixed-case rows remain, all among the duplicates. The page grows from 2.87 kB to 3.41 kB. "
        "A rough saving: about $223/month."
    )
    listed = _listed(c, NOTHING)
    assert _texts(listed, "measurement") == [
        "BenchmarkSubmit-8   1843021   651.2 ns/op",
        "3071 rows lower-cased",
        "41 mixed-case rows remain, all among the duplicates",
        "The page grows from 2.87 kB to 3.41 kB",
        "about $223/month",
    ], "the model's 651 ns/op restates the output's 651.2; each clause of a report is its own figure"
    kept = "5. Problem Solving:\n   3071 rows were lower-cased, 41 remain (duplicates); the page went from 2.87 to 3.41 kB; saves $223 a month.\n"
    assert _texts(_listed(c, kept), "measurement") == ["BenchmarkSubmit-8   1843021   651.2 ns/op"]


def test_a_failure_is_told_when_the_summary_names_what_its_error_line_is_about():
    c = Conversation("/p", "named")
    c.bash("adb devices", "Exit code 127\nbash: adb: command not found", error=True)
    c.bash("python -m pytest tests/test_reports.py -q", "E   NameError: name 'ZoneInfo' is not defined", error=True)
    c.bash("python train.py --detect-anomaly", "train.py: error: unrecognized arguments: --detect-anomaly", error=True)
    c.bash("go test ./internal/pool/ -run TestPoolDrain", "pool_test.go:88: drained 499 jobs, want 500", error=True)
    c.bash("./sync --all", "SyncError: quota exceeded after 96401 retries", error=True)
    assert len(_texts(_listed(c, NOTHING), "failed command")) == 5
    told = (
        "4. Errors and fixes:\n   - adb not on PATH: used the SDK's platform-tools path.\n"
        "   - NameError for ZoneInfo: added the imports.\n   - --detect-anomaly is not an option; used --debug-nan.\n"
        "   - pool_test.go is the flaky test's file.\n   - A SyncError after 94932 retries.\n"
    )
    assert _texts(_listed(c, told), "failed command") == [
        "go test ./internal/pool/ -run TestPoolDrain",
        "./sync --all",
    ], "a file where the error was said is not what it is about; another number is another failure"


def test_an_error_line_ending_in_a_colon_says_why_with_the_line_that_goes_on_with_it():
    c = Conversation("/p", "colon")
    c.bash(
        "npx playwright test tests/visual --project=tablet",
        "  1) [tablet] › list.spec.ts:20:3 › grid with filters open\n\n    Error: Screenshot comparison failed:\n\n"
        "      48213 pixels (ratio 0.04 of all image pixels) are different.\n\n  1 failed\n  5 passed (14.8s)",
        error=True,
    )
    c.bash("make check", "Error: the build needs:\n" + "x" * 500, error=True)  # a blob goes on: no reason
    c.bash("make lint", "Error: lint failed:\n\n", error=True)  # nothing goes on
    listed = _listed(c, NOTHING)
    assert [f.detail for f in listed if f.kind == "failed command"] == [
        "Error: Screenshot comparison failed: 48213 pixels (ratio 0.04 of all image pixels) are different.",
        "Error: the build needs:",
        "Error: lint failed:",
    ]
    without_figure = "4. Errors and fixes:\n   - The tablet screenshot comparison failed; fixed the grid.\n"
    assert "npx playwright test tests/visual --project=tablet" in _texts(
        _listed(c, without_figure), "failed command"
    ), "a summary that tells the failure without how much differed has lost the figure"
    with_figure = (
        "4. Errors and fixes:\n   - npx playwright test, tablet project: the screenshot comparison failed, "
        "48213 pixels (ratio 0.04 of the image) were different.\n"
    )
    assert "npx playwright test tests/visual --project=tablet" not in _texts(_listed(c, with_figure), "failed command")


def test_a_dependency_a_diff_shows_moved_is_an_identifier_old_to_new():
    c = Conversation("/p", "diffed")
    c.bash(
        "git diff HEAD~1 -- package.json",
        'diff --git a/package.json b/package.json\n@@ -18,7 +18,7 @@\n-    "@acme/ui": "5.1.4",\n+    "@acme/ui": "5.2.0",\n'
        '     "vue": "3.5.13",',
    )
    c.bash("git show -- Cargo.toml", '-serde = "1.0.210"\n+serde = "1.0.215"\n-tokio = "1.41.0"\n+tokio = "1.41.0"')
    c.bash(  # a lockfile refreshed: four moved, none of them the one the session upgraded
        "git diff -- requirements.txt",
        "\n".join(f"-pkg{i}==1.{i}.0\n+pkg{i}==1.{i}.1" for i in range(4)),
    )
    c.bash("git diff -- pyproject.toml", '-ruff = "0.8.0"\n+black = "24.10.0"')  # one taken out, another put in
    # a version followed by a run of letters and more: no pin, and read in linear time (a `$` right
    # after the version's repeated parts backtracked exponentially: 24 letters took 11 s)
    c.bash("git diff -- notes.txt", "-x = 1.0\n+x = 1.0" + "z" * 25 + "!")
    started = time.perf_counter()
    listed = _listed(c, NOTHING)
    assert time.perf_counter() - started < 1.0
    assert _texts(listed, "identifier") == ["@acme/ui 5.1.4 -> 5.2.0", "serde 1.0.210 -> 1.0.215"]
    kept = "3. Files and Code Sections:\n   - package.json: @acme/ui 5.1.4 -> 5.2.0; serde 1.0.215.\n"
    assert _texts(_listed(c, kept), "identifier") == [], "kept by the package and its new version"


def test_the_addresses_and_hosts_an_output_names_two_or_fewer_are_identifiers_possibly_dropped():
    c = Conversation("/p", "addresses")
    c.bash(
        "npx prisma migrate status",
        'Datasource "db": PostgreSQL database "crm" at "crm-prod.c9x2.eu-west-1.rds.amazonaws.com:5432"\n'
        "Following migration have failed:\n20261203101500_split_contact_name",
        error=True,
    )
    c.bash(
        "psql \"$PROD_RO\" -c 'select logs from _prisma_migrations'",
        "ERROR: could not create unique index\nDETAIL: Key (lower(email))=(m.osei@harbourfreight.example) is duplicated.",
    )
    c.bash("psql -c 'select email from users limit 3'", "a@x.example\nb@x.example\nc@x.example")  # a listing
    c.bash("git log -1", "commit 9f8e7d6\nAuthor: Mia Koch <mia@shop.example>\n\n    cart: lazy-load")  # git's
    c.bash("ping -c1 db.internal.example", "PING db.internal.example: 56 data bytes")  # the command's own
    c.bash("curl -sI https://status.acme.example/health", "see https://docs.acme.example/status")  # a URL's
    c.bash("python train.py", "first non-finite output in model.cross.proj; Data.Map.Lazy")  # code names
    c.bash("fly deploy -a digest-prod", "image: registry.fly.io/digest-prod:deployment-01JEB7K2")  # an image's
    listed = _listed(c, NOTHING)
    addresses = [
        (f.text, f.confidence) for f in listed if f.kind == "identifier" and ("@" in f.text or ".com" in f.text)
    ]
    assert addresses == [
        ("crm-prod.c9x2.eu-west-1.rds.amazonaws.com", dropped.POSSIBLY_DROPPED),
        ("m.osei@harbourfreight.example", dropped.POSSIBLY_DROPPED),
    ]
    assert not any("cross.proj" in f.text or "Map.Lazy" in f.text for f in listed)
    kept = "5. Problem Solving:\n   The duplicate m.osei@harbourfreight.example on crm-prod.c9x2.eu-west-1.rds.amazonaws.com.\n"
    assert not any("@" in f.text or ".com" in f.text for f in _listed(c, kept) if f.kind == "identifier")


def test_a_command_that_printed_one_short_line_with_a_figure_answered_with_it():
    c = Conversation("/p", "answer")
    c.bash("grep -c 'InvoiceMailed' storage/logs/laravel.log", "1207\n")
    c.bash("php artisan --version", "Laravel Framework 11.31.0")
    c.bash("go test -race ./internal/pool/ -count=200", "ok  \tgithub.com/acme/ingest/internal/pool\t38.402s")
    c.bash("python manage.py migrate customers", "Applying customers.0042_customer_region... OK")
    c.bash("grep -n 'jvmargs' gradle.properties", "gradle.properties:2:org.gradle.jvmargs=-Xmx2g")
    c.bash("vault kv get -field=last_rotated secret/stripe/live", "2026-03-14")
    c.bash("cargo test 2>&1 | tail -1", "error: could not compile `tiles` due to 1 previous error")
    c.bash("git stash pop && git log --oneline -1", "Dropped refs/stash@{0}\n4f5e6d7 Fix totals 2")
    assert _texts(_listed(c, NOTHING), "measurement") == ["1207", "Laravel Framework 11.31.0"], (
        "not a run's own time, a migration's name, a file's line, a date, an error line, nor one of two lines"
    )
    kept = "5. Problem Solving:\n   The log shows 1,207 mails; the app runs Laravel 11.31.0.\n"
    assert _texts(_listed(c, kept), "measurement") == []


def test_a_figure_said_round_matches_loosely_and_a_bound_does_not():
    c = Conversation("/p", "round")
    c.bash("grep -rln 'ledgerly.utils' . | wc -l", "64")
    c.bash("python -m pytest -q 2>&1 | tail -1", "187 passed in 4.20s")
    c.bash("psql -Atc 'select count(*) from skus'", "181234")
    summary = "5. Problem Solving:\n   Imported in around 60 places; no failures over 200 runs; about 180k SKUs.\n"
    assert _texts(_listed(c, summary), "measurement") == ["187 passed in 4.20s"], (
        "around 60 is 64, 180k is 181,234; over 200 is no 187"
    )
    assert "64" in _texts(_listed(c, "5. Problem Solving:\n   Imported in about 80 places.\n"), "measurement")


def test_a_row_of_a_table_and_a_tally_of_test_files_are_no_result_and_a_rule_line_no_error():
    c = Conversation("/p", "rows")
    c.bash(
        "gh run list --limit 2",
        "X  bench: add 4 KiB block case   ci  main  push  11913377120  4m02s  3d\n"
        "✓  huffman: fix   ci  main  push  11913377000  3m58s  3d",
    )
    c.bash(
        "pnpm vitest run 2>&1 | tail -4",
        " Test Files  23 passed (23)\n      Tests  187 passed (187)\n   Duration  9.83s",
    )
    c.bash(
        "ctest --test-dir build-asan -R parse_string_error --output-on-failure",
        "=================================================================\n"
        "==41877==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020000001b0",
        error=True,
    )
    listed = _listed(c, NOTHING)
    assert _texts(listed, "measurement") == ["Tests  187 passed (187)"]
    assert [f.detail for f in listed if f.kind == "failed command"] == [
        "==41877==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020000001b0"
    ]


def test_a_small_figure_the_summary_says_in_words_is_kept_and_a_decimal_is_not_rounded_to_it():
    c = Conversation("/p", "words")
    c.bash("ls /srv/backups | grep -c weekly", "12")
    c.bash("git count-objects -vH | grep size-pack", "size-pack: 12.31 MiB")
    c.bash("ls /srv/backups | grep -c daily", "17")
    listed = _listed(c, "5. Problem Solving:\n   Only twelve weeklies remained; the pack is small.\n")
    assert _texts(listed, "measurement") == ["size-pack: 12.31 MiB", "17"], "each bare figure is its own"


def test_a_setting_read_in_a_file_is_a_fact_when_the_model_goes_on_with_its_value():
    c = Conversation("/p", "settings")
    c.tool(
        "Read",
        {"file_path": "/p/src/retry.ts"},
        "     1\texport interface RetryOptions {\n     2\t  maxAttempts?: number; // default 5\n"
        "     3\t  baseDelayMs?: number; // default 200\n     4\t}\n",
    )
    c.bash("cat gunicorn.conf.py", 'bind = "0.0.0.0:8000"\nworkers = 4\ntimeout = 30\n')
    c.bash("grep -n 'free(' src/doc.c", "src/doc.c:58:    free(doc);")
    c.bash("python -m reports.monthly --debug-counts", "orders rows: 48,902\nafter merge: 49,377")
    c.say(
        "With the default base delay of 200 ms the waits add up, and with workers = 4 the limit is per"
        " process. The free is at src/doc.c:58. The merge turns 48,902 orders into 49,377 rows."
    )
    listed = _listed(c, NOTHING)
    settings = {f.text: (f.detail, f.confidence) for f in listed if f.kind == "setting"}
    assert settings == {
        "baseDelayMs?: number; // default 200": ("/p/src/retry.ts", dropped.POSSIBLY_DROPPED),
        "workers = 4": ("cat gunicorn.conf.py", dropped.POSSIBLY_DROPPED),
    }, (
        "maxAttempts and timeout were read in passing, `src/doc.c:58` is where a search found a line, and 48,902 is a count, not a setting of 48"
    )


def test_a_setting_is_kept_by_a_sentence_that_gives_its_value_with_its_name_not_by_the_figure_alone():
    c = Conversation("/p", "settings kept")
    c.tool("Read", {"file_path": "/p/gunicorn.conf.py"}, "workers = 4\n")
    c.tool("Read", {"file_path": "/p/src/retry.ts"}, "  baseDelayMs?: number; // default 200\n")
    c.say("So 4 workers each keep a bucket; the default delay is 200 ms.")
    elsewhere = "5. Problem Solving:\n   No failures in 200 runs; the limit is now 4 times lower.\n"
    assert set(_texts(_listed(c, elsewhere), "setting")) == {"workers = 4", "baseDelayMs?: number; // default 200"}
    kept = "5. Problem Solving:\n   Gunicorn runs 4 workers. The retry's default base delay (200 ms) was kept.\n"
    assert not _texts(_listed(c, kept), "setting")


def test_who_wrote_the_commit_git_shows_is_a_fact_but_not_the_authors_of_a_surveyed_history():
    c = Conversation("/p", "authors")
    c.bash(
        "git log -1 b93e4f7",
        "commit b93e4f7\nAuthor: Mia Koch <mia@shop.example>\nDate:   Tue Nov 17 14:02:11 2026 +0100\n\n    cart: 204",
    )
    c.bash("git show -s --format='%ad %an' --date=short c81f0a2", "2026-10-27 Mara Lind")
    c.bash(
        "git log -3",
        "".join(
            f"commit {n}aaaaaa\nAuthor: {who} <x@y>\n\n    fix\n" for n, who in enumerate(("Ann Li", "Bo Ek", "Cy Ma"))
        ),
    )
    listed = _listed(c, NOTHING)
    authors = {f.text: f.detail for f in listed if f.kind == "identifier" and " " in f.text}
    assert authors == {"Mia Koch": "Author: Mia Koch <mia@shop.example>", "Mara Lind": "2026-10-27 Mara Lind"}
    named = _listed(c, "The breaking change came from Mia Koch; Mara Lind wrote the schedule.")
    assert not {"Mia Koch", "Mara Lind"} & set(_texts(named, "identifier"))


def test_a_progress_line_is_no_result():
    c = Conversation("/p", "progress")
    c.bash(
        "kubectl rollout status deploy/api",
        'Waiting for deployment "api" rollout to finish: 2 of 4 updated replicas are available...\n'
        'deployment "api" successfully rolled out',
    )
    assert not _texts(_listed(c, NOTHING), "measurement")


def test_a_diagnostics_place_and_a_paths_digits_are_no_figures_a_told_failure_must_give():
    c = Conversation("/p", "places")
    c.bash(
        "npx tsc --noEmit",
        "app/members/page.tsx(14,8): error TS2304: Cannot find name 'CopyInviteLink'.",
        error=True,
    )
    c.bash(
        "npx playwright test e2e/invite.spec.ts",
        "Error: browserType.launch: Executable doesn't exist at /home/u/.cache/ms-playwright/chromium-1140/chrome",
        error=True,
    )
    told = (
        "4. Errors and fixes:\n   - tsc could not find CopyInviteLink on the members page; the import was added.\n"
        "   - The Playwright invite test could not launch: browserType.launch found no executable; browsers installed.\n"
    )
    assert not _texts(_listed(c, told), "failed command")
    assert len(_texts(_listed(c, NOTHING), "failed command")) == 2


def test_a_clause_putting_together_figures_several_outputs_gave_restates_them():
    c = Conversation("/p", "restated")
    c.bash("kubectl logs deploy/api | jq -r .msg | sort | uniq -c | grep failed", "389 request failed")
    c.bash("kubectl logs deploy/api | jq -r .msg | sort | uniq -c | grep slow", "171 slow request")
    c.say("Errors (request failed) are 389, slow requests 171; the rest is chatter.")
    c.say("Errors are 389 and timeouts 52.")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert "389 request failed" in measured and "171 slow request" in measured
    assert "Errors (request failed) are 389, slow requests 171" not in measured
    assert "Errors are 389 and timeouts 52" in measured, "52 is no output's: the model measured it"


def test_a_failed_runs_seed_and_lock_and_the_issue_a_change_closes_are_identifiers_from_the_output():
    c = Conversation("/p", "output ids")
    c.bash("gh pr view 231", "Add rate limiting #231\n\nLimits each key.\n\nCloses #198")
    c.bash(
        "python -m pytest tests/test_ratelimit.py -q -p randomly",
        "FAILED tests/test_ratelimit.py::test_under - assert 429 == 200\n1 failed, 3 passed in 0.58s\n"
        "Using --randomly-seed=2218634011",
        error=True,
    )
    c.bash(
        "terraform plan",
        "│ Error: Error acquiring the state lock\n│   ID:        5b1e7c2a-93f4-4d0e-8c1a-2f6b9d4e7a31\n",
        error=True,
    )
    c.bash("gh pr view 232", "Refs #7 and #8; fixes #9, closes #10")
    ids = set(_texts(_listed(c, NOTHING), "identifier"))
    assert {"Closes #198", "--randomly-seed=2218634011", "5b1e7c2a-93f4-4d0e-8c1a-2f6b9d4e7a31"} <= ids
    assert not {"fixes #9", "closes #10"} & ids, "a change that closes two issues names none in particular"
    kept = "Lena's PR closes issue #198; the failure reproduces with --randomly-seed=2218634011."
    assert not {"Closes #198", "--randomly-seed=2218634011"} & set(_texts(_listed(c, kept), "identifier"))
    in_words = "The failure reproduces with seed 2218634011."
    assert "--randomly-seed=2218634011" not in _texts(_listed(c, in_words), "identifier"), "kept by its number"
    another = "The failure reproduces with seed 2218634012."
    assert "--randomly-seed=2218634011" in _texts(_listed(c, another), "identifier")


def test_a_tool_call_whose_name_is_not_a_string_is_no_edit_and_no_crash():
    c = Conversation("/p", "odd name")
    for name in ({"Edit": 1}, ["Edit"], 7, None):
        c.tool(name, {"file_path": "/p/a.py", "old_string": "x = 1", "new_string": "x = 2"}, "ok")  # type: ignore[arg-type]
    assert not _texts(_listed(c, NOTHING), "edit")


@pytest.mark.parametrize(
    "name, arguments, output",
    [
        # an inserted line with a quote never closed and no figure: the quoted string searched for a letter
        ("Edit", {"file_path": "/p/a.py", "old_string": "x", "new_string": 'x\ny = "' + "ab " * 350_000}, "ok"),
        ("Edit", {"file_path": "/p/a.py", "old_string": "x", "new_string": "x\ny = '" + "ab " * 350_000}, "ok"),
        # a commit's author line of a million spaces in what `git show` printed
        ("Bash", {"command": "git show HEAD"}, "commit 3c1d2e9\nAuthor: a" + " " * 1_000_000 + "b\n"),
        # a call with nothing hostile (the model's sentence below is), an edit's line of a million brackets
        ("Bash", {"command": "true"}, "ok"),
        ("Edit", {"file_path": "/p/a.py", "old_string": "x", "new_string": "x\ny = 1\nz = 2\n" + "[a" * 500_000}, "ok"),
        # a command of a million characters naming no field it selects, its output short enough to be an answer
        ("Bash", {"command": "jq '" * 250_000}, "a: 1"),
        ("Bash", {"command": "awk " * 250_000}, "a: 1"),
    ],
    ids=[
        "unclosed double quote",
        "unclosed single quote",
        "author line of spaces",
        "prose",
        "edit of brackets",
        "jq of no field",
        "awk of no print",
    ],
)
def test_a_line_of_a_million_characters_costs_the_rule_linear_time(name, arguments, output):
    """A bound a quadratic pattern misses by hours (the rule runs in the worker, under its lock),
    a linear one meets with room to spare on a loaded machine."""
    c = Conversation("/p", "hostile line")
    c.tool(name, arguments, output)
    # and the model's sentence of a million characters giving settings their values, before its choice
    c.say("I'll " + "MaxRetries 5, " * 70_000 + "so. The vendor app never sends it. I'll key on it.")
    began = time.process_time()  # CPU, not wall: a shared machine's load stretches wall time, not this
    _listed(c, NOTHING)
    assert time.process_time() - began < 10.0


def test_a_line_of_code_inserted_with_a_value_is_an_edit_kept_only_with_its_figures_and_strings():
    c = Conversation("/p", "inserted")
    route = '        .route("/tiles/:z/:x/:y", put(upload_tile))'
    c.tool(
        "Edit",
        {
            "file_path": "/p/src/routes.rs",
            "old_string": route,
            "new_string": route + "\n        .layer(DefaultBodyLimit::max(8 * 1024 * 1024))",
        },
        "The file /p/src/routes.rs has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/p/src/main.rs",
            "old_string": "use axum::Router;",
            "new_string": "use axum::Router;\nuse axum::extract::DefaultBodyLimit;",
        },
        "The file /p/src/main.rs has been updated successfully.",
    )
    named = "6. All user messages:\n   - Tiles up to 8 MB: the route got an explicit DefaultBodyLimit.\n"
    edits = _texts(_listed(c, named), "edit")
    assert edits == ["src/routes.rs:  → .layer(DefaultBodyLimit::max(8 * 1024 * 1024))"], "an import sets no value"
    kept = named.replace("explicit DefaultBodyLimit", "explicit DefaultBodyLimit::max(8 * 1024 * 1024)")
    assert not _texts(_listed(c, kept), "edit")


def test_the_time_a_command_the_session_timed_took_is_its_result():
    c = Conversation("/p", "timed")
    c.bash("time mysql sandbox < /tmp/q.sql | tail -1", "18244\n\nreal\t0m3.911s\nuser\t0m0.010s\nsys\t0m0.004s")
    c.bash("mysql sandbox < /tmp/q.sql", "18244\n\nreal\t0m9.000s")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert "real\t0m3.911s" in measured
    assert "real\t0m9.000s" not in measured, "a command nobody timed: its `real` line is output, not a timing"
    assert "real\t0m3.911s" not in _texts(_listed(c, "The query took 3.9 s on the sample."), "measurement")
    assert "real\t0m3.911s" in _texts(_listed(c, "The query took 4.6 s on the sample."), "measurement")


def test_a_folder_named_with_its_files_stems_as_alternatives_keeps_each_of_them():
    c = Conversation("/home/y/app", "alternatives")
    for lang in ("en", "de", "ja"):
        c.tool(
            "Edit",
            {"file_path": f"/home/y/app/locales/{lang}.json", "old_string": "{", "new_string": "{\n"},
            "The file has been updated successfully.",
        )
    kept = "3. Files and Code Sections:\n   - locales (en/de/ja): strings for the button.\n"
    assert not _texts(_listed(c, kept), "file edited")
    assert _texts(_listed(c, kept.replace("en/de/ja", "en/ja")), "file edited") == ["/home/y/app/locales/de.json"]
    assert len(_texts(_listed(c, kept.replace("locales (", "strings (")), "file edited")) == 3, "no folder, no path"


# --- tool output and commands the session went on with (rule 6) -----------------------------------


def test_a_token_of_an_output_the_model_repeats_is_a_fact_with_its_line_and_one_it_does_not_is_none():
    c = Conversation("/p", "echoed")
    c.bash(
        "kubectl get pods -n api",
        "NAME                       READY   STATUS    RESTARTS   AGE\n"
        "worker-6c9d7f8b5-q4zrx     0/1     OOMKilled 7          3d\n"
        "worker-6c9d7f8b5-h2k9p     1/1     Running   0          3d",
    )
    c.bash("go list -m github.com/foo/bar", "github.com/foo/bar v1.8.2")
    c.bash("du -sh /var/lib/docker | tail -1", "88.3MB\t/var/lib/docker")
    c.say(
        "worker-6c9d7f8b5-q4zrx is the pod that keeps dying; bar is on v1.8.2 and the cache holds 88.3MB. "
        "It last restarted on 2026-12-01 at 10:14, restarts 7."
    )
    listed = _listed(c, NOTHING)
    identifiers = {f.text: f.detail for f in listed if f.kind == "identifier"}
    assert identifiers["worker-6c9d7f8b5-q4zrx"].startswith("worker-6c9d7f8b5-q4zrx     0/1")
    assert identifiers["v1.8.2"] == "github.com/foo/bar v1.8.2"
    assert "worker-6c9d7f8b5-h2k9p" not in identifiers, "a pod the model did not go on with"
    assert _texts(listed, "measurement") == ["88.3MB\t/var/lib/docker"], (
        "the figure said again is its line's, listed once"
    )
    # not a date, a time, nor a figure of a table's row (the restarts), nor its own command's argument
    assert not {"2026-12-01", "10:14", "7"} & {f.text for f in listed}
    kept = "5. Problem Solving:\n   Pod worker-6c9d7f8b5-q4zrx is OOMKilled; bar v1.8.2; 88.3MB cached.\n"
    assert not [f for f in _listed(c, kept) if f.kind in ("identifier", "measurement")]


def test_a_token_a_later_command_uses_is_a_fact_but_one_its_own_command_gave_is_not():
    c = Conversation("/p", "used")
    c.bash("emulator -list-avds", "Pixel_4a_API_30\nPixel_7_API_34")
    c.bash("emulator -avd Pixel_4a_API_30 -no-window &", "")
    c.bash("gh run view 11920446013 --log | grep -c retry", "412")
    c.bash("gh run view 11920446013 --json conclusion", '{"conclusion": "failure"}')
    listed = _listed(c, NOTHING)
    assert ("Pixel_4a_API_30", "Pixel_4a_API_30") in [(f.text, f.detail) for f in listed]
    assert "Pixel_7_API_34" not in [f.text for f in listed], "the emulator the session did not start"
    assert [f.detail for f in listed if f.text == "11920446013"] == ["gh run view 11920446013 --log | grep -c retry"], (
        "the id is the command's argument, listed once with it, not again as an answer of its output"
    )


def test_a_package_a_command_pins_is_an_identifier_kept_by_its_name_and_version():
    c = Conversation("/p", "pinned")
    c.bash("pip install -q libcst==1.5.0 && python -m libcst.tool --help | head -1", "usage: LibCST")
    c.bash("go get github.com/foo/bar@v1.8.2", "go: upgraded github.com/foo/bar v1.8.1 => v1.8.2")
    c.bash("pip install -r requirements.txt && npm ci", "ok")
    listed = _listed(c, NOTHING)
    assert set(_texts(listed, "identifier")) == {"libcst==1.5.0", "github.com/foo/bar@v1.8.2"}
    kept = "5. Problem Solving:\n   Installed libcst 1.5.0 for the codemod; upgraded bar to v1.8.2.\n"
    assert _texts(_listed(c, kept), "identifier") == []
    other = "5. Problem Solving:\n   Installed libcst 1.4.0 for the codemod; upgraded bar.\n"
    assert set(_texts(_listed(c, other), "identifier")) == {"libcst==1.5.0", "github.com/foo/bar@v1.8.2"}


def test_a_builds_or_a_starts_time_of_ten_seconds_or_more_is_a_measurement_a_test_runs_is_not():
    c = Conversation("/p", "built")
    c.bash("./gradlew clean build --offline 2>&1 | tail -2", "BUILD SUCCESSFUL in 17m 52s\n214 actionable tasks")
    c.bash("cargo build 2>&1 | tail -1", "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 48.71s")
    c.bash(
        "tail -1 /tmp/boot.log",
        "2026-12-01 10:14:02.349  INFO 48211 --- [main] c.a.o.OrdersApplicationKt : Started OrdersApplicationKt in 21.604 seconds",
    )
    c.bash("cargo check 2>&1 | tail -1", "    Finished dev [unoptimized + debuginfo] target(s) in 4.21s")
    c.bash("./gradlew test 2>&1 | tail -2", "BUILD SUCCESSFUL in 1m 12s\n9 actionable tasks: 3 executed")
    c.bash("./gradlew build --configuration-cache 2>&1 | tail -1", "BUILD SUCCESSFUL in 5m 02s")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert {"BUILD SUCCESSFUL in 17m 52s", "BUILD SUCCESSFUL in 5m 02s"} <= set(measured), "each build's time, compared"
    assert "Finished `dev` profile [unoptimized + debuginfo] target(s) in 48.71s" in measured
    assert any(m.endswith("Started OrdersApplicationKt in 21.604 seconds") for m in measured)
    assert not [m for m in measured if "4.21s" in m or "1m 12s" in m], "a routine check, a test run's time"
    kept = (
        "5. Problem Solving:\n   The clean build took 17m 52s, 5m 02s with the configuration cache; cargo build "
        "48.71s; the app starts in 21.6 s.\n"
    )
    assert not [m for m in _texts(_listed(c, kept), "measurement") if " in " in m]


def test_a_chained_commands_last_bare_value_and_a_querys_one_value_are_its_answer():
    c = Conversation("/p", "answers")
    c.bash(
        "docker build -t api:slim . 2>&1 | tail -1 && docker images api:slim --format '{{.Size}}'", " => done\n311MB"
    )
    c.bash("psql \"$DB\" -c 'select count(*) from events'", " count  \n--------\n 503221\n(1 row)\n")
    c.bash("ls /srv/backups | grep -c weekly", "2\n")
    c.bash("docker images --format '{{.Size}}'", "311MB\n120MB")
    c.bash("psql \"$DB\" -c 'select id from events limit 2'", " id \n----\n 17\n 18\n(2 rows)\n")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert measured[:2] == ["311MB", "count: 503221"], measured
    assert not {"120MB", "id: 17", "17", "18"} & set(measured), "an unchained list, a query of several rows"


def test_a_name_repeated_from_output_is_long_enough_to_be_no_code_name_and_a_blob_is_no_name():
    c = Conversation("/p", "names")
    c.bash("pytest -q 2>&1 | tail -3", "FAILED tests/test_refunds.py::test_refund_rounding\n1 failed, 41 passed")
    c.bash("aws s3 ls", "2026-01-02 10:00:00 acme-prod-logs\n2026-01-02 10:00:00 acme-staging-logs")
    c.bash("python -c 'import app; print(app.run_all.__doc__)'", "run_all: runs every job")
    c.say("test_refund_rounding fails; the logs go to acme-prod-logs; run_all is unrelated. " + "x1" * 500_000)
    began = time.perf_counter()
    listed = _listed(c, NOTHING)
    assert time.perf_counter() - began < 10.0
    identifiers = _texts(listed, "identifier")
    assert {"test_refund_rounding", "acme-prod-logs"} <= set(identifiers)
    assert "run_all" not in identifiers and "acme-staging-logs" not in identifiers


def test_who_wrote_the_commit_a_bisect_found_and_a_name_a_failed_commands_output_gives_are_identifiers():
    c = Conversation("/p", "bisected")
    c.bash(
        "git bisect start v2.14.0 v2.13.0 && git bisect run go test ./internal/handlers/",
        "Bisecting: 18 revisions left to test after this (roughly 4 steps)\n"
        "a71f3c9e2b is the first bad commit\ncommit a71f3c9e2b\nAuthor: Mia Koch <mia@shop.example>\n\n"
        "    cart: drop legacy session fallback",
    )
    c.bash("git bisect start HEAD v1.0 && git bisect run make test", "Bisecting: 3 revisions left to test after this")
    c.bash(
        "terraform plan -out=lifecycle.plan",
        "Error: Error acquiring the state lock\n  Lock Info:\n    Who:       jenkins@ci-runner-04\n    Operation: OperationTypePlan",
        error=True,
    )
    c.say("The state is locked by jenkins@ci-runner-04; the plan cannot run until the job ends.")
    identifiers = _texts(_listed(c, NOTHING), "identifier")
    assert {"a71f3c9e2b", "Mia Koch", "jenkins@ci-runner-04"} <= set(identifiers)
    assert "OperationTypePlan" not in identifiers, "what the model did not repeat"


def test_a_long_run_of_commands_with_no_word_between_costs_the_rule_linear_time():
    """Each command's tokens are looked for in the outputs before it since the model last spoke:
    in the last few of them (in all of them, 5,000 commands of 4 kB outputs took 22 s of CPU
    where the rule takes 3, measured on 2026-12-04). CPU time: the machine may be loaded."""
    c = Conversation("/p", "no words")
    filler = "ok, nothing matched " * 200 + "\n"
    for n in range(5_000):
        c.bash(f"./deploy --build build-{n:05d}", filler + f"deployed build-{n + 1:05d}")
    began = time.process_time()
    listed = _listed(c, NOTHING)
    assert time.process_time() - began < 10.0
    assert "build-04999" in _texts(listed, "identifier"), "the next command used what the last output named"


# --- round 6: facts in prose, edits and files that no marker word gives ------------------------


def test_what_always_or_never_holds_said_before_the_models_choice_is_a_decision():
    c = Conversation("/p", "ground")
    c.say("The vendor app never sends a batch id with its uploads. I'll key the dedupe on the order number instead.")
    c.say("The test output looks fine now and the build passes. I'll commit it next.")  # no rule stated
    c.say("Every retry is logged with its attempt number. Is that enough for the alert?")  # no choice follows
    decisions = _texts(_listed(c, NOTHING), "decision")
    assert decisions == ["The vendor app never sends a batch id with its uploads."]
    assert all(f.confidence == dropped.POSSIBLY_DROPPED for f in _listed(c, NOTHING) if f.kind == "decision")


def test_a_sentence_giving_several_settings_their_values_is_a_decision():
    c = Conversation("/p", "trio")
    c.say("For the client I'll go with MaxRetries 5, Backoff 2s, Jitter 0.5 on every call.")
    c.say("The old client had MaxRetries 3 and that was it.")  # one setting: a value read, not a choice
    assert _texts(_listed(c, NOTHING), "decision") == [
        "For the client I'll go with MaxRetries 5, Backoff 2s, Jitter 0.5 on every call."
    ]


def test_a_larger_edit_of_code_lists_the_values_it_brought_in_and_not_its_other_lines():
    c = Conversation("/p", "values")
    c.tool(
        "Edit",
        {
            "file_path": "/p/app/users.py",
            "old_string": "def check(name):\n    return True\n",
            "new_string": 'USERNAME = re.compile(r"[a-z0-9_]{1,32}")\n\n\ndef check(name):\n'
            "    if not USERNAME.fullmatch(name):\n        raise ValueError(name)\n    return True\n",
        },
        "The file has been updated.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/p/scripts/fetch.sh",
            "old_string": 'curl "$URL"\n',
            "new_string": 'LIMIT=${LIMIT:-4096}\nfor page in $(seq 1 3); do\n  curl "$URL?page=$page"\ndone\n',
        },
        "The file has been updated.",
    )
    c.tool(  # code rewritten with no value in it: its file tells it
        "Edit",
        {
            "file_path": "/p/app/orders.py",
            "old_string": "def total(o):\n    return o.sum\n",
            "new_string": "def total(order):\n    lines = order.lines\n    return sum(line.amount for line in lines)\n",
        },
        "The file has been updated.",
    )
    edits = _texts(_listed(c, NOTHING), "edit")
    assert edits == [
        'app/users.py:  → USERNAME = re.compile(r"[a-z0-9_]{1,32}")',
        "scripts/fetch.sh:  → LIMIT=${LIMIT:-4096}",
    ]
    kept = _listed(c, "Added a username check `[a-z0-9_]{1,32}` and LIMIT=${LIMIT:-4096} to fetch.sh.\n")
    assert not _texts(kept, "edit"), "a summary that gives the values keeps the edits"


def test_a_pattern_a_tests_string_and_a_route_an_edit_brought_in_are_facts_kept_only_as_they_are():
    c = Conversation("/p", "patterns")
    c.tool(
        "Edit",
        {
            "file_path": "/p/lib/worker.ex",
            "old_string": "  use Oban.Worker, queue: :mailers\n",
            "new_string": "  use Oban.Worker,\n    queue: :mailers\n\n  @qa_address ~r/@acme-qa\\.test$/i\n",
        },
        "The file has been updated.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/p/test/auth/email_test.dart",
            "old_string": "}\n",
            "new_string": "  test('rejects a double at sign', () {\n"
            "    expect(() => normalizeEmail('anna+work@@gmail.com'), throwsFormatException);\n  });\n}\n",
        },
        "The file has been updated.",
    )
    c.tool(
        "Write",
        {
            "file_path": "/p/app/refunds.py",
            "content": '@router.post("/refunds/{order_id}")\ndef refund(order_id: int):\n    return issue(order_id)\n',
        },
        "File created successfully.",
    )
    c.tool(  # a test's client calls no route of its own
        "Write",
        {
            "file_path": "/p/tests/test_refunds.py",
            "content": 'def test_refund(client):\n    client.post("/refunds/7")\n',
        },
        "File created successfully.",
    )
    edits = _texts(_listed(c, NOTHING), "edit")
    assert edits == [
        "lib/worker.ex:  → @qa_address ~r/@acme-qa\\.test$/i",
        "test/auth/email_test.dart:  → expect(() => normalizeEmail('anna+work@@gmail.com'), throwsFormatException);",
        'app/refunds.py:  → @router.post("/refunds/{order_id}")',
    ]
    told = _listed(
        c,
        "The worker skips QA addresses at acme-qa.test; a test rejects anna+work@gmail.com with a double at sign; "
        "a refunds route was added.\n",
    )
    assert len(_texts(told, "edit")) == 3, "words for a pattern, a test's input and a route keep none of them"
    given = _listed(
        c,
        "The worker skips `~r/@acme-qa\\.test$/i`; the test expects a FormatException for anna+work@@gmail.com; "
        "added POST /refunds/{order_id}.\n",
    )
    assert not _texts(given, "edit"), "a summary that gives them as they are keeps them"


def test_a_tools_version_an_image_a_cluster_an_app_and_a_bucket_are_identifiers_where_tools_print_them():
    c = Conversation("/p", "cloud")
    c.bash(
        "flutter --version",
        "Flutter 3.24.5 • channel stable • https://github.com/flutter/flutter.git\n"
        "Framework • revision dec2ee5c1f (3 weeks ago) • 2024-11-13 11:13:06 -0800\nTools • Dart 3.5.4 • DevTools 2.37.3",
    )
    c.bash(
        "gcloud container clusters get-credentials ingest-prod --region europe-west1",
        "kubeconfig entry generated for ingest-prod.",
    )
    c.bash("aws s3 ls s3://acme-raw-events/2026/12/04/ | wc -l", "24")
    c.bash("gcloud builds submit --tag europe-west1-docker.pkg.dev/acme-data/ingest/ingest:1.15.1 .", "DONE")
    c.bash(
        "fly deploy -a digest-prod | grep image",
        "image: registry.fly.io/digest-prod:deployment-01JEB7K2Q9W4X8M3T6R5N1P0ZD\nimage size: 88 MB",
    )
    c.bash(  # the local name a build gives the tag its command set is the command's, no image of its own
        "docker build -t pricing-api:slim . 2>&1 | tail -1",
        "#12 naming to docker.io/library/pricing-api:slim done",
    )
    listed = _listed(c, NOTHING)
    assert _texts(listed, "identifier") == [
        "europe-west1-docker.pkg.dev/acme-data/ingest/ingest:1.15.1",
        "registry.fly.io/digest-prod:deployment-01JEB7K2Q9W4X8M3T6R5N1P0ZD",
        "Flutter 3.24.5",
        "ingest-prod",
        "digest-prod",
    ]
    assert _texts(listed, "url") == ["s3://acme-raw-events"], "not the tool's own repository its banner prints"
    kept = _listed(
        c,
        "Flutter 3.24.5; cluster ingest-prod; bucket s3://acme-raw-events; pushed "
        "europe-west1-docker.pkg.dev/acme-data/ingest/ingest:1.15.1 and deployed digest-prod "
        "(registry.fly.io/digest-prod:deployment-01JEB7K2Q9W4X8M3T6R5N1P0ZD).\n",
    )
    assert not _texts(kept, "identifier") and not _texts(kept, "url")


def test_a_timed_runs_peak_memory_and_a_focused_runs_tally_the_model_counts_again_are_measurements():
    c = Conversation("/p", "tallies")
    c.bash(
        "/usr/bin/time -v ./ingest --dry-run 2>&1 | grep -E 'Maximum resident|Elapsed'",
        "\tElapsed (wall clock) time (h:mm:ss or m:ss): 6:41.22\n\tMaximum resident set size (kbytes): 1389212",
    )
    c.say("Peak memory is well under the limit now.")
    c.bash("flutter test test/auth 2>&1 | tail -1", "00:02 +5: All tests passed!")
    c.say("Now the two new cases.")
    c.bash("flutter test test/auth 2>&1 | tail -1", "00:03 +7: All tests passed!")
    c.say("7 passing now: the 5 that were there plus the two new cases.")
    c.bash("pytest tests/reports -q 2>&1 | tail -1", "4 passed in 0.31s")
    c.say("The report tests pass.")  # a focused run's tally no words count again: the tests just written
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert "Maximum resident set size (kbytes): 1389212" in measured
    assert "00:03 +7: All tests passed!" in measured
    assert not any("+5" in m or "4 passed" in m for m in measured), measured
    kept = _listed(c, "Peak RSS 1389212 kB. 7 tests pass (+7: All tests passed).\n")
    assert not _texts(kept, "measurement")


def test_the_version_a_package_manager_added_of_a_package_its_command_names_is_an_identifier():
    c = Conversation("/p", "added")
    c.bash(
        "go get golang.org/x/sync",
        "go: downloading golang.org/x/sync v0.8.0\ngo: added golang.org/x/sync v0.8.0\ngo: added golang.org/x/text v0.18.0",
    )
    c.bash("pnpm add zod", "Packages: +1\n+\ndependencies:\n+ zod 3.23.8\n\nDone in 1.2s")
    c.bash(
        "cargo add serde_json@1.0.128", "    Updating crates.io index\n      Adding serde_json v1.0.128 to dependencies"
    )
    identifiers = _texts(_listed(c, NOTHING), "identifier")
    # not a package the command pulled in (golang.org/x/text), nor one whose version the command gave
    assert identifiers == ["golang.org/x/sync@v0.8.0", "zod@3.23.8", "serde_json@1.0.128"]
    kept = _listed(c, "Added golang.org/x/sync v0.8.0, zod 3.23.8 and serde_json 1.0.128.\n")
    assert not _texts(kept, "identifier")


def test_a_number_a_line_keys_as_an_id_and_a_runs_total_time_are_no_measurements():
    c = Conversation("/p", "ids")
    c.bash(
        "fly logs -a digest-prod --no-tail | grep DigestWorker",
        "02:00:00 app[e2865d1f] [Oban] DigestWorker job=88121 state=executing\n"
        "02:00:00 app[5683e4a2] [Oban] DigestWorker job=88122 state=executing",
    )
    c.say("Two machines each ran a digest job (jobs 88121 and 88122).")
    c.bash("sbt -batch test 2>&1 | tail -1", "[success] Total time: 97 s (01:37), completed Dec 5, 2026, 3:14:07 PM")
    c.bash("wc -l < export.csv", "48211")
    c.say("The export has 48211 lines, paid 1500 of them.")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert not any("88121" in m or "88122" in m or "Total time" in m for m in measured), measured
    assert any("48211" in m for m in measured), "a bare figure said again is still one"


def test_a_configuration_key_set_to_a_path_under_home_is_kept_by_the_summarys_tilde_path():
    c = Conversation("/Users/noor/app", "home")
    c.tool(
        "Edit",
        {
            "file_path": "/Users/noor/app/android/key.properties",
            "old_string": "storeFile=/Users/noor/keys/upload-keystore.jks\n",
            "new_string": "storeFile=/Users/noor/keystores/upload-keystore.jks\n",
        },
        "The file has been updated.",
    )
    told = "android/key.properties: storeFile now points at {}.\n"
    assert not _texts(_listed(c, told.format("~/keystores/upload-keystore.jks")), "edit")
    assert _texts(_listed(c, told.format("~/keys/upload-keystore.jks")), "edit"), "the old path is not the new one"


def test_a_larger_edit_of_a_config_file_lists_the_keys_it_set_to_values():
    c = Conversation("/p", "config")
    c.tool(
        "Edit",
        {
            "file_path": "/p/config/prod.yaml",
            "old_string": "requests:\n  log: all\n",
            "new_string": "requests:\n  slow_after: 1s\n  sample_rate: 0.01\n  # sampled, not all\n  fields:\n    - path\n",
        },
        "The file has been updated.",
    )
    c.tool(  # the same lines in code: told by its file
        "Edit",
        {
            "file_path": "/p/app/log.py",
            "old_string": "def log(r):\n    emit(r)\n",
            "new_string": "def log(r):\n    slow_after = 1\n    sample_rate = 0.01\n    if keep(r, slow_after, sample_rate):\n        emit(r)\n",
        },
        "The file has been updated.",
    )
    assert _texts(_listed(c, NOTHING), "edit") == [
        "config/prod.yaml:  → slow_after: 1s",
        "config/prod.yaml:  → sample_rate: 0.01",
    ]
    kept = _listed(c, "Requests are logged when slower than slow_after 1s, sampled at sample_rate 0.01.\n")
    assert not _texts(kept, "edit")


def test_a_file_a_shell_command_writes_is_a_file_edited_but_not_a_scratch_file():
    c = Conversation("/p", "written")
    c.bash("sed -i 's/8080/9090/' conf/app.ini", "")
    c.bash("nohup ./migrate --execute > /var/log/ghost-orders.log 2>&1 &", "")
    c.bash("python gen.py | tee out/report.csv", "ok")
    c.bash("psql -f q.sql > /tmp/rows.txt 2>/dev/null", "")  # scratch, and the error stream thrown away
    assert _texts(_listed(c, NOTHING), "file edited") == ["conf/app.ini", "/var/log/ghost-orders.log", "out/report.csv"]


def test_a_file_the_model_names_among_those_a_tool_showed_is_a_path_possibly_dropped():
    c = Conversation("/p", "named")
    c.bash("grep -rln 'from ledger.utils import' .", "./a.py\n./b.py\n./c.py\n./d.py\n./notebooks/helpers.py\n")
    c.say(
        "Note notebooks/helpers.py imports it too, and app/settings.py sets the cache; "
        "origin/main.py is ahead and the quota is 35/month."  # app/settings.py: no tool showed it
    )
    c.bash("cat roles/site.yml", "dest: /etc/nginx/conf.d/headers.conf\n")
    c.say("So it lands in /etc/nginx/conf.d/headers.conf on the host.")  # an output that showed it alone
    paths = [f for f in _listed(c, NOTHING) if f.kind == "path"]
    assert [(f.text, f.confidence) for f in paths] == [("notebooks/helpers.py", dropped.POSSIBLY_DROPPED)]
    assert not [f for f in _listed(c, "Also imported by notebooks/helpers.py.\n") if f.kind == "path"]


def test_a_command_with_a_long_run_of_spaces_is_split_in_linear_time():
    """`\\s*(?:&&|;)\\s*` tried at every space of a run reads the run again each time: 20,000
    spaces cost 7.9 s; a transcript can hold a million."""
    started = time.process_time()
    assert dropped.command_core("cd x && " + " " * 1_000_000 + "pytest -q") == "pytest -q"
    assert time.process_time() - started < 5


# --- rule 7 (candidate): what the command was run to learn, where the session does not repeat it ---


def test_the_short_output_of_a_command_that_names_its_fields_is_one_fact_dates_and_names_included():
    c = Conversation("/p", "fields")
    c.bash("vault kv get -field=last_rotated secret/stripe/live", "2026-03-14\n")
    c.bash("curl -s https://scan.example/api | jq '{grade, score}'", '{\n  "grade": "D",\n  "score": 35\n}\n')
    c.bash(
        "kubectl get deploy api -o jsonpath='{.spec.template.spec.containers[0].image}'", "registry.example/api:3.14.1"
    )
    listed = _listed(c, NOTHING)
    assert [(f.kind, f.text, f.detail) for f in listed if f.entry == 2] == [
        ("identifier", "2026-03-14", "vault kv get -field=last_rotated secret/stripe/live")
    ], "a date is no figure, but it is what the command asked for"
    assert '"grade": "D"; "score": 35' in _texts(listed, "measurement"), "its lines together, one fact"
    assert "registry.example/api:3.14.1" in _texts(listed, "identifier")
    kept = _listed(
        c, "4. Errors and fixes:\n   - The scan gave grade D, score 35; the key was last rotated 2026-03-14.\n"
    )
    assert not [f for f in kept if f.entry in (2, 4)]


def test_a_command_that_selects_no_field_or_prints_a_listing_or_chains_several_answers_gives_no_selected_answer():
    c = Conversation("/p", "not fields")
    c.bash("curl -s https://scan.example/api | jq .", '{\n  "grade": "D",\n  "state": "FINISHED"\n}\n')
    c.bash("kubectl get pods -o custom-columns=NAME:.metadata.name", "\n".join(f"api-{i}" for i in range(9)))
    c.bash("vault kv get -field=owner secret/a && vault kv get -field=owner secret/b", "team-a\nteam-b\n")
    c.bash("git log -1 --format='%ad %an' --date=short", "2026-10-27 Mara Lind")
    listed = _listed(c, NOTHING)
    texts = [f.text for f in listed]
    assert not [t for t in texts if '"grade"' in t or "api-" in t or "team-" in t], texts
    assert "2026-10-27 Mara Lind" not in texts, "git's --format is read for its commits and authors"


def test_a_crontab_line_an_output_shows_is_a_setting_but_a_row_of_figures_is_none():
    c = Conversation("/p", "cron")
    c.bash(
        "ssh db-backup-01 'grep -h prune /etc/cron.d/*'",
        "15 3 * * * backup /opt/ops/prune-backups.sh 2>&1 | logger -t prune\n30 2 * * SUN backup /opt/ops/weekly.sh\n",
    )
    c.bash("./bench --sizes", "10 20 30 40 50 samples\n1 2 3 4 5 runs\n")
    settings = _texts(_listed(c, NOTHING), "setting")
    assert settings == [
        "15 3 * * * backup /opt/ops/prune-backups.sh 2>&1 | logger -t prune",
        "30 2 * * SUN backup /opt/ops/weekly.sh",
    ], settings
    kept = _listed(c, "5. Problem Solving:\n   Prune runs at 15 3 * * *, the weekly at 30 2 * * SUN.\n")
    assert not _texts(kept, "setting")


def test_a_failures_detail_line_goes_with_its_error_line_and_a_detail_elsewhere_does_not():
    c = Conversation("/p", "detail")
    c.bash(
        'psql "$DB" -f backfill.sql',
        'ERROR:  duplicate key value violates unique constraint "users_email_key"\n'
        "DETAIL:  Key (email)=(anna@mail.example) already exists.\n",
        error=True,
    )
    c.bash(
        'psql "$DB" -f other.sql',
        'ERROR:  relation "orders_v2" does not exist\nLINE 1: select * from orders_v2\nDETAIL:  unrelated notice\n',
        error=True,
    )
    failed = {f.text: f.detail for f in _listed(c, NOTHING) if f.kind == "failed command"}
    assert failed['psql "$DB" -f backfill.sql'] == (
        'ERROR:  duplicate key value violates unique constraint "users_email_key" '
        "DETAIL:  Key (email)=(anna@mail.example) already exists."
    )
    assert failed['psql "$DB" -f other.sql'] == 'ERROR:  relation "orders_v2" does not exist'


def test_a_search_ending_a_chain_finds_its_file_and_a_file_found_then_edited_keeps_the_line_it_was_found_by():
    c = Conversation("/home/felix/app", "chained search")
    c.bash(
        "free -g | head -2 && grep -n 'jvmargs' gradle.properties",
        "Mem:  15  6  7\ngradle.properties:2:org.gradle.jvmargs=-Xmx2g -XX:MaxMetaspaceSize=512m\n",
    )
    c.bash("grep -n 'expires' app/join/\\[token\\]/page.tsx", "app/join/[token]/page.tsx:13:  if (expired) return;\n")
    c.tool(
        "Edit",
        {
            "file_path": "/home/felix/app/app/join/[token]/page.tsx",
            "old_string": "return;",
            "new_string": "return <Expired />;",
        },
        "ok",
    )
    c.bash("grep -rn TODO .", "\n".join(f"src/m{i}.properties:1: # TODO" for i in range(5)))
    listed = _listed(c, NOTHING)
    read = {f.text: f.detail for f in listed if f.kind == "file read"}
    assert read == {"gradle.properties": "gradle.properties:2:org.gradle.jvmargs=-Xmx2g -XX:MaxMetaspaceSize=512m"}
    edited = {f.text: f.detail for f in listed if f.kind == "file edited"}
    assert edited == {
        "/home/felix/app/app/join/[token]/page.tsx": "app/join/[token]/page.tsx:13:  if (expired) return;"
    }


def test_a_figure_the_model_says_alone_is_told_with_its_clause_and_a_thousands_count_of_an_acronym_is_measured():
    c = Conversation("/p", "prose figures")
    c.say("The two-column index barely helps. The covering version on the same sample: 0.31 s.")
    c.say("With ~180k SKUs times regions the cache grows until the heap limit.")
    c.bash("du -sh * | sort -h | tail -2", "11M\tnotebooks\n6.2M\ttests\n")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert "The covering version on the same sample: 0.31 s" in measured, measured
    assert "With ~180k SKUs times regions the cache grows until the heap limit" in measured, measured
    assert not [m for m in measured if "notebooks" in m or "tests" in m], (
        "a size beside a folder's name counts no folders"
    )


def test_a_figure_the_model_reports_changed_is_a_measurement_whatever_it_counts_but_a_range_of_dates_is_none():
    c = Conversation("/p", "changed")
    c.say("Duplicate crates in the tree went from 14 before the upgrade to 9.")
    c.say("The outage ran from 14 November to 2 December, per the status page.")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert measured == ["Duplicate crates in the tree went from 14 before the upgrade to 9"], measured


def test_a_run_that_exits_0_on_a_warning_line_stopped_itself_but_a_log_read_or_an_earlier_warning_is_no_result():
    c = Conversation("/p", "stopped")
    c.bash(
        "python train.py --max-steps 2000 2>&1 | tail -3",
        "step 1700 loss 0.99\nWARNING: loss is NaN at step 1774, stopping\n",
    )
    c.bash("tail -2 /var/log/app.log", "INFO started\nWARNING: disk almost full\n")
    c.bash("npm install", "WARNING: deprecated left-pad@1.0.0\nadded 12 packages\n")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert "WARNING: loss is NaN at step 1774, stopping" in measured, measured
    assert not [m for m in measured if "disk" in m or "left-pad" in m], measured


def test_a_test_run_that_failed_and_then_passed_run_again_the_same_way_is_a_failure_fixed_not_listed():
    c = Conversation("/p", "red green")
    c.bash("python -m pytest -q -x 2>&1 | tail -15", "E   ImportError: cannot import name 'slugify'", error=True)
    c.bash("python -m pytest -q 2>&1 | tail -2 && ruff check .", "612 passed in 38.42s\nAll checks passed!")
    c.bash("go test ./internal/pool/ -run TestPoolDrain -count=50", "pool_test.go:88: drained 499 jobs, want 500", True)
    c.bash("go test ./internal/pool/ -count=200", "ok  \tgithub.com/acme/ingest/internal/pool\t38.402s")
    c.bash("npx jest src/lib", "Expected: 7\nReceived: 30", error=True)
    c.bash("npx jest src/lib", "Tests: 12 passed, 12 total")
    c.bash("npx jest src/lib", "Expected: 7\nReceived: 8", error=True)
    failed = _texts(_listed(c, NOTHING), "failed command")
    assert "python -m pytest -q -x 2>&1 | tail -15" not in failed, "the same tests, passing after: told as fixed"
    assert "go test ./internal/pool/ -run TestPoolDrain -count=50" in failed, "a green run of other tests fixes nothing"
    assert "npx jest src/lib" in failed, "failing again after it passed: the failure stands"


def test_a_figure_alone_the_model_repeats_is_told_by_its_listed_clause_but_not_by_a_clause_merged_away():
    c = Conversation("/p", "bare")
    c.bash("cut -d' ' -f9 access.log | sort | uniq -c | sort -rn", "312 200\n 88 429")
    c.say("312 of 400 requests were accepted with a limit of 100/min.")
    c.bash("python -m reports.monthly --debug-counts", "orders rows: 48,902\nafter fx merge: 49,377")
    c.say("The merge adds 475 extra rows: 48,902 orders became 49,377.")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert "312 of 400 requests were accepted with a limit of 100/min" in measured
    assert "312" not in measured, "the clause says it, with what it counts"
    assert {"orders rows: 48,902", "49,377"} <= set(measured), "their clause restates the outputs and goes: they stay"
    assert "48,902" not in measured, "its output's line is listed: the figure is shown there"


def test_a_figure_the_model_asks_about_is_no_measurement_but_the_same_figure_stated_is():
    c = Conversation("/p", "asked")
    c.say("The repo config allows 100 columns, but npx ran from the parent without picking it up?")
    c.say("The docs config allows 120 columns, and npx ran from the docs folder.")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert not any("100 columns" in m for m in measured), "a question finds nothing"
    assert any("120 columns" in m for m in measured)


def test_an_outputs_two_results_of_the_same_figures_are_one_and_of_other_figures_two():
    c = Conversation("/p", "said twice")
    c.bash(
        "./gradlew build --configuration-cache 2>&1 | grep -E 'problem|Configuration'",
        "3 problems were found storing the configuration cache.\nConfiguration cache entry stored with 3 problems.",
    )
    c.bash("node load.js", "before: heap 31 MB -> 611 MB\nafter: heap 31 MB -> 74 MB")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert [m for m in measured if "problems" in m] == ["Configuration cache entry stored with 3 problems."]
    assert {"before: heap 31 MB -> 611 MB", "after: heap 31 MB -> 74 MB"} <= set(measured), "other figures: two results"


def test_the_ids_git_prints_of_the_stash_it_saved_or_dropped_are_no_commits_but_the_log_after_them_is():
    c = Conversation("/p", "stashed")
    c.bash(
        "git stash && git switch release/5.12 && git stash pop && git commit -qam 'fix' && git log --oneline -1",
        "Saved working directory and index state WIP on main: a3e5c71 editor: save\n"
        "Switched to branch 'release/5.12'\nDropped refs/stash@{0} (7f1d3e2a)\n6d0c9b4 editor: no toast after detach",
    )
    listed = [(f.text, f.confidence) for f in _listed(c, NOTHING) if f.kind == "identifier"]
    assert listed == [("6d0c9b4", dropped.DROPPED)], (
        "the one commit the chain's log shows, sure: the stash's ids are none"
    )


def test_what_a_command_asked_the_version_of_prints_is_no_commit_but_a_log_ones_id_is():
    c = Conversation("/p", "version")
    c.bash("pip install --user git-filter-repo==2.45.0 && git filter-repo --version", "a40bc1c42c2b")
    c.bash("git fetch -q && git log --oneline -1 origin/main", "e5d2c90 config: ignore *.env")
    c.bash("node --version && git log --oneline -1", "v20.11.1\n7b3e9a1 api: cache quotes per region")
    ids = _texts(_listed(c, NOTHING), "identifier")
    assert "a40bc1c42c2b" not in ids and "e5d2c90" in ids
    assert "7b3e9a1" in ids, "a chain that also shows history prints its commits"


def test_a_message_the_summary_quotes_sentence_by_sentence_is_kept_and_one_it_quotes_in_part_is_listed():
    c = Conversation("/p", "quoted")
    c.user(
        "Our access-log bucket keeps growing. Add a lifecycle rule: move objects to Glacier after 90 days. "
        "400, not 365, because the auditors look back 13 months. Everything stays in eu-west-1."
    )
    c.user(
        "The export job is slow on Mondays. Make it stream rows from the replica instead of loading "
        "every invoice into memory, and log how long each batch takes."
    )
    summary = (
        "6. All user messages:\n"
        '   - "Our access-log bucket keeps growing. Add a lifecycle rule: move objects to Glacier after 90 days. '
        '400, not 365, because the auditors look back 13 months. Everything stays in eu-west-1."\n'
        '   - "The export job is slow on Mondays."\n'
    )
    listed = [f.text for f in _listed(c, summary)]
    assert not [t for t in listed if "access-log" in t], "each of its sentences quoted word for word: kept"
    assert [t for t in listed if "stream rows" in t], "its second sentence is quoted nowhere: listed"


def test_an_age_a_status_listing_gives_is_no_measurement_but_a_count_beside_it_is():
    c = Conversation("/p", "ages")
    c.bash("docker compose ps", "NAME   IMAGE   STATUS\nweb    portal  Up 2 hours")
    c.bash("docker ps -a", "NAMES    STATUS\nworker   Exited (0) 3 minutes ago")
    c.bash("python manage.py backfill_region", "updated 1,204,331 rows, started about an hour ago")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert measured == ["updated 1,204,331 rows, started about an hour ago"], measured


def test_how_much_a_tool_went_through_is_no_measurement_but_what_it_found_or_changed_is():
    c = Conversation("/p", "gone through")
    c.bash(
        "python scripts/recheck_invoices.py --month 2026-03",
        "flagged 1284 rows with a one-cent difference\nchecked 12000 lines",
    )
    c.bash(
        "python -m libcst.tool codemod rename.Imports src", "- Transformed 12 files successfully.\n- Skipped 49 files."
    )
    c.bash("git filter-repo --replace-text ../secrets.txt", "Parsed 214 commits\nNew history written in 0.12 seconds")
    c.bash("mypy src && ruff check .", "Found 2 errors in 1 file (checked 48 source files)\nAll checks passed!")
    c.bash("mypy src && ruff check .", "Success: no issues found in 41 source files\nAll checks passed!")
    c.bash("terraform plan", '  ~ resource "aws_s3_bucket" "logs" {\n      # (2 unchanged elements hidden)\n    }')
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert "flagged 1284 rows with a one-cent difference" in measured
    assert "- Transformed 12 files successfully." in measured
    assert "Found 2 errors in 1 file (checked 48 source files)" in measured, "what it found, with what it checked"
    gone_through = ("checked 12000", "Skipped", "Parsed", "no issues", "hidden")
    assert not [m for m in measured if any(said in m for said in gone_through)], measured


def test_an_android_instrumentation_run_of_one_test_class_is_focused_and_its_junit_tally_too():
    c = Conversation("/p", "instrumented")
    runner = "com.acme.notes.test/androidx.test.runner.AndroidJUnitRunner"
    c.bash(
        f"adb shell am instrument -w -e class com.acme.notes.SaveTest {runner}",
        "com.acme.notes.SaveTest:\nError in saveAndLeave:\njava.lang.IllegalStateException\n\nTests run: 1,  Failures: 1",
    )
    c.bash(f"adb shell am instrument -w -e class com.acme.notes.SaveTest {runner}", "OK (1 test)\n\nTime: 2.1")
    c.bash(f"adb shell am instrument -w {runner}", "Time: 48.2\n\nOK (212 tests)")
    c.bash("mvn -q test", "Tests run: 412, Failures: 0, Errors: 0, Skipped: 3")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert not [m for m in measured if m.startswith("Tests run: 1,") or "(1 test)" in m], "one class's run: focused"
    assert "OK (212 tests)" in measured, "the whole suite's tally is a result"
    assert "Tests run: 412, Failures: 0, Errors: 0, Skipped: 3" in measured, "unfocused, JUnit's tally is a result"


def test_a_number_in_a_tests_name_the_model_says_again_is_no_measurement_but_one_of_a_result_line_is():
    said = (
        "With the defaults the four waits are 200, 400, 800 and 1600 ms times (1 + random * 0.5), so between "
        "3000 and 4500 ms of real sleeping, plus the worker's overhead on a slow runner."
    )
    named = Conversation("/p", "test names")
    named.bash("pnpm vitest run src/retry.test.ts", "   ✓ retry > retries on 503\n   ✓ retry > does not retry on 400\n")
    named.say(said)
    assert "400" not in _texts(_listed(named, NOTHING), "measurement"), "the test's name, not a figure it found"
    read = Conversation("/p", "a result")
    read.bash("node scripts/backoff.js --attempt 2", "attempt 2 waits 400 ms\nattempt 3 waits 800 ms\n")
    read.say(said)
    assert "400" in _texts(_listed(read, NOTHING), "measurement"), "a figure of an output's line the model repeats"


def test_a_figure_alone_stays_listed_where_the_summary_keeps_its_clause_by_the_clauses_other_figures():
    c = Conversation("/p", "bare, clause kept")
    c.bash("cut -d' ' -f9 access.log | sort | uniq -c | sort -rn", "312 200\n 88 429")
    c.say("312 of 400 requests were accepted with a limit of 100/min.")
    summary = "5. Problem Solving:\n   Sent 400 requests against the limit of 100/min; most were accepted.\n"
    listed = _listed(c, summary)
    measured = _texts(listed, "measurement")
    assert not any("of 400 requests" in m for m in measured), "two of its three figures: the clause is kept"
    assert "312" in measured, "the figure the summary lost, alone: listed"


def test_the_advisories_an_audit_names_are_identifiers_each_with_its_line_but_not_a_trees_whole_debt():
    c = Conversation("/p", "audit")
    c.bash(
        "pip-audit -r requirements.txt",
        "Found 2 known vulnerabilities in 2 packages\nName    Version ID                  Fix Versions\n"
        "jinja2  3.1.3   GHSA-h75v-3vvj-5mfj 3.1.4\nurllib3 1.26.18 PYSEC-2024-60       1.26.19",
        error=True,
    )
    c.bash("cargo audit", "ID:        RUSTSEC-2024-0332\nSolution:  Upgrade to >=0.4.4\nerror: 1 vulnerability found!")
    listed = _listed(c, NOTHING)
    ids = {f.text: f.detail for f in listed if f.kind == "identifier"}
    assert ids.get("GHSA-h75v-3vvj-5mfj") == "jinja2  3.1.3   GHSA-h75v-3vvj-5mfj 3.1.4", "with the package it is of"
    assert "PYSEC-2024-60" in ids and "RUSTSEC-2024-0332" in ids
    kept = "4. Errors and fixes:\n   - pip-audit flagged GHSA-h75v-3vvj-5mfj and PYSEC-2024-60; cargo audit RUSTSEC-2024-0332.\n"
    assert not [f for f in _listed(c, kept) if f.kind == "identifier"]
    surveyed = Conversation("/p", "debt")
    surveyed.bash("npm audit", "\n".join(f"pkg{i}  GHSA-aaaa-bbbb-cc{i:02d}" for i in range(8)))
    assert not [f for f in _listed(surveyed, NOTHING) if f.kind == "identifier"], "eight advisories: a survey"


def test_the_ids_git_and_docker_print_of_blobs_trees_and_images_are_no_commits_but_a_logs_are():
    c = Conversation("/p", "objects")
    c.bash("git diff src/app.py", "diff --git a/src/app.py b/src/app.py\nindex 3f2a1b9..8c7d6e5 100644\n-x = 1\n+x = 2")
    c.bash("git ls-files -s src/app.py", "100644 3f2a1b9c4d5e6f708192a3b4c5d6e7f809102a3b 0\tsrc/app.py")
    c.bash(
        "docker build -t api . && git log -1 --format=%h",
        "Step 1/5 : FROM python\n ---> 3e1f2a9b8c7d\nSuccessfully built 9a8b7c6d5e4f\nwriting image sha256:4b825dc642cb\n5d6e7f8",
    )
    ids = _texts(_listed(c, NOTHING), "identifier")
    assert ids == ["5d6e7f8"], ids


def test_a_load_tests_rate_and_tail_latency_are_its_results_not_what_it_was_given_or_sent():
    c = Conversation("/p", "load")
    c.bash(
        "wrk -t4 -c64 -d30s --latency http://localhost:8080/v1/search",
        "  4 threads and 64 connections\n  Latency Distribution\n     50%   22.10ms\n     75%   29.84ms\n"
        "     99%   71.66ms\n  77512 requests in 30.04s, 181.22MB read\nRequests/sec:   2580.29\nTransfer/sec:      6.03MB",
    )
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert "Requests/sec:   2580.29" in measured and "99%   71.66ms" in measured
    assert not [m for m in measured if "threads" in m or "Transfer" in m or "requests in" in m or "50%" in m]


def test_a_benchmarks_result_before_a_change_stays_beside_the_one_after_but_a_reruns_count_does_not():
    c = Conversation("/p", "compared")
    for rate, p99 in (("2580.29", "71.66"), ("4705.52", "34.12")):
        c.bash("wrk -t4 -c64 -d30s http://localhost:8080/", f"  50%   9.1ms\n  99%   {p99}ms\nRequests/sec:   {rate}\n")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert "Requests/sec:   2580.29" in measured and "Requests/sec:   4705.52" in measured
    assert "99%   71.66ms" in measured and "99%   34.12ms" in measured
    trained = Conversation("/p", "throughput")
    trained.bash("python train.py --amp bf16 | tail -1", "throughput 4412 samples/s")
    trained.bash("python train.py --amp fp16 | tail -1", "throughput 4480 samples/s")
    trained.bash("python train.py --epochs 1 | tail -1", "processed 9100 samples")
    trained.bash("python train.py --epochs 2 | tail -1", "processed 18200 samples")
    measured = _texts(_listed(trained, NOTHING), "measurement")
    assert {"throughput 4412 samples/s", "throughput 4480 samples/s"} <= set(measured), "a rate: compared"
    assert "processed 9100 samples" not in measured, "a count of a rerun: the newest"


def test_a_profiles_first_row_is_its_finding_and_a_plans_nodes_are_no_result():
    c = Conversation("/p", "profile")
    c.bash(
        "go tool pprof -top -nodecount=3 cpu.pprof",
        "Duration: 20.13s, Total samples = 31.42s (156.09%)\n      flat  flat%   sum%        cum   cum%\n"
        "     6.12s 19.48% 19.48%     11.87s 37.78%  encoding/json.(*encodeState).reflectValue\n"
        "     4.40s 14.00% 33.48%      4.40s 14.00%  runtime.mallocgc\n     3.02s  9.61% 43.09%      3.02s  9.61%  syscall.Syscall",
    )
    c.bash(
        "psql -c 'EXPLAIN ANALYZE SELECT 1'",
        "->  Bitmap Index Scan on idx  (cost=0.00..23.97 rows=505 width=0) (actual time=0.301..0.301 rows=1187 loops=1)\n"
        " Planning Time: 0.188 ms\n Execution Time: 1.961 ms",
    )
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert "6.12s 19.48% 19.48%     11.87s 37.78%  encoding/json.(*encodeState).reflectValue" in measured
    assert not [m for m in measured if "mallocgc" in m or "Syscall" in m or "Index Scan" in m]
    assert "Execution Time: 1.961 ms" in measured


def test_a_measurement_the_summary_gives_in_another_unit_is_kept_as_precisely_as_it_says():
    c = Conversation("/p", "units")
    c.bash("psql -c 'EXPLAIN ANALYZE SELECT 1'", "Execution Time: 2874.552 ms")
    c.bash("du -sh /backups/pre.dump", "1.8G\t/backups/pre.dump")
    kept = "5. Problem Solving:\n   The query took about 2.9 s; the dump is 1.8 GB.\n"
    assert not _texts(_listed(c, kept), "measurement")
    other = "5. Problem Solving:\n   The query took about 3.4 s; the dump is 1.4 GB.\n"
    assert len(_texts(_listed(c, other), "measurement")) == 2, "other figures: not the same"


def test_a_querys_short_result_of_columns_is_one_fact_but_a_long_one_or_a_history_is_a_listing():
    c = Conversation("/p", "rows")
    c.bash(
        "psql payments -c 'SELECT id, amount_cents FROM payments WHERE refunded_cents > amount_cents'",
        "   id    | amount_cents \n---------+--------------\n 1009312 |         4999\n 1011870 |        12000\n(2 rows)",
    )
    c.bash(
        "psql -c 'select version, installed_on from flyway_schema_history'",
        " version | installed_on \n---------+---------------------\n 41      | 2026-11-24 16:02:51\n(1 row)",
    )
    listed = _listed(c, NOTHING)
    assert [f.text for f in listed if "1009312" in f.text] == ["id | amount_cents: 1009312 | 4999; 1011870 | 12000"]
    assert not [f for f in listed if "installed_on" in f.text], "when each row was made: a history"
    long = Conversation("/p", "listing")
    rows = "\n".join(f" {i} | {i * 7}" for i in range(1000, 1020))
    long.bash("psql -c 'select id, n from t'", f" id | n \n----+---\n{rows}\n(20 rows)")
    assert not [f for f in _listed(long, NOTHING) if "1000" in f.text]


def test_the_revision_a_migration_tool_generated_is_an_identifier_kept_by_its_file_name():
    c = Conversation("/srv/pay", "revision")
    c.bash(
        "flask db revision -m 'refunds table'",
        "  Generating /srv/pay/migrations/versions/4c2d9e7a1b3f_refunds_table.py ...  done",
    )
    c.bash("flask db heads", "9b1e5f3c2a7d (head)")
    assert _texts(_listed(c, NOTHING), "identifier") == ["4c2d9e7a1b3f", "9b1e5f3c2a7d"]
    kept = "3. Files and Code Sections:\n   - migrations/versions/4c2d9e7a1b3f_refunds_table.py: creates refunds.\n"
    assert _texts(_listed(c, kept), "identifier") == ["9b1e5f3c2a7d"]


def test_what_a_package_manager_moved_is_an_identifier_kept_by_the_package_and_its_new_version():
    c = Conversation("/p", "upgrade")
    c.bash(
        "pip install -U 'jinja2==3.1.6'",
        "Collecting jinja2==3.1.6\n    Found existing installation: Jinja2 3.1.3\n    Found existing installation: MarkupSafe 2.1.3\n"
        "Successfully installed jinja2-3.1.6 MarkupSafe-2.1.5",
    )
    c.bash("poetry update urllib3", "  - Updating urllib3 (1.26.18 -> 1.26.20)")
    c.bash("bundle update rails", "Installing rails 7.1.3 (was 7.0.8)")
    c.bash("pip install -U requests", "Successfully installed requests-2.32.3 urllib3-2.2.3")
    refreshed = "\n".join(f"    Updating crate{i} v0.{i}.0 -> v0.{i}.1" for i in range(6))
    c.bash("cargo update", refreshed)
    ids = _texts(_listed(c, NOTHING), "identifier")
    assert "Jinja2 3.1.3" in ids, "the version replaced"
    assert "jinja2==3.1.6" in ids and "jinja2-3.1.6" not in ids, "the one installed: the command's pin, one fact"
    assert "requests-2.32.3" in ids, "what an unpinned install installed"
    assert not [i for i in ids if "MarkupSafe" in i or "urllib3-" in i], "a dependency the command did not name"
    assert "urllib3 1.26.18 -> 1.26.20" in ids and "rails 7.0.8 -> 7.1.3" in ids
    assert not [i for i in ids if "crate" in i], "six versions moved: a lockfile refreshed"
    kept = (
        "3. Files and Code Sections:\n   - jinja2 is now 3.1.6, urllib3 1.26.20, rails 7.1.3, requests 2.32.3;"
        " Jinja2 3.1.3 was flagged.\n"
    )
    assert _texts(_listed(c, kept), "identifier") == []


def test_the_version_a_short_output_gives_of_the_package_its_command_names_is_an_identifier():
    c = Conversation("/p", "asked")
    c.bash("pip freeze | grep -i django", "Django==4.2.16\ndjango-environ==0.11.2")
    c.bash("npm ls lodash", "app@1.0.0 /home/a/app\n└─┬ webpack@5.94.0\n  └── lodash@4.17.21")
    c.bash("pip show urllib3", "Name: urllib3\nVersion: 1.26.20\nSummary: HTTP library")
    c.bash("grep -rn pandas requirements*.txt", "requirements.txt:31:pandas==2.2.3")
    c.bash("cargo tree -i h2", "h2 v0.3.24\n└── hyper v0.14.28")
    ids = _texts(_listed(c, NOTHING), "identifier")
    assert {"Django==4.2.16", "lodash@4.17.21", "urllib3 1.26.20"} <= set(ids)
    assert not [i for i in ids if "webpack" in i or "environ" in i or "pandas" in i or "h2" in i], ids


def test_a_benchmarks_statistics_of_its_samples_and_a_progress_bar_are_no_result_but_its_rate_is():
    c = Conversation("/p", "bench stats")
    c.bash(
        "cargo bench --bench parse",
        "parse/small            time:   [1.2345 ms 1.2400 ms 1.2456 ms]\n"
        "Found 3 outliers among 100 measurements (3.00%)\n  2 (2.00%) high mild\n  1 (1.00%) high severe",
    )
    c.bash("pgbench -c 10 -T 60 shop", "number of clients: 10\ntps = 1233.531221 (without initial connection time)")
    c.bash("python eval.py --split test", "Evaluating: 100%|██████████| 50/50 [00:12<00:00,  4.1it/s]")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert "parse/small            time:   [1.2345 ms 1.2400 ms 1.2456 ms]" in measured
    assert "tps = 1233.531221 (without initial connection time)" in measured
    assert not [m for m in measured if "outliers" in m or "high" in m or "it/s" in m or "clients" in m], measured


def test_mysqls_framed_result_of_a_few_rows_is_one_fact_as_psqls_is():
    c = Conversation("/p", "mysql rows")
    c.bash(
        "mysql -e 'select id, status from orders where id in (9911, 9912)' shop",
        "+------+---------+\n| id   | status  |\n+------+---------+\n| 9911 | stuck   |\n| 9912 | shipped |\n"
        "+------+---------+\n2 rows in set (0.00 sec)",
    )
    c.bash("mysql -e 'select id from orders limit 3' shop", "| id |\n| 1 |\n| 2 |\n3 rows in set (0.00 sec)")
    listed = _listed(c, NOTHING)
    assert [f.text for f in listed if "9911" in f.text] == ["id | status: 9911 | stuck; 9912 | shipped"]
    assert not [f for f in listed if "limit" in (f.detail or "")], "three rows said, two shown: not a result read whole"


def test_a_hash_the_model_says_is_of_an_image_a_digest_or_a_build_is_no_commit_but_a_commits_hash_is():
    c = Conversation("/p", "hashes")
    c.say("Built api:dev (image 9a8b7c6d5e4f); the layer digest sha256:4b825dc642cb differs, checksum 3f2a1b9c4d5e.")
    c.say("Commit hash 9c41e7a and 51d0b2f touch money.py.")
    assert _texts(_listed(c, NOTHING), "identifier") == ["9c41e7a", "51d0b2f"]


def test_an_advisory_the_model_names_is_one_identifier_whole_not_cut_at_its_year():
    c = Conversation("/p", "advisory prose")
    c.say("h2 0.3.26 clears RUSTSEC-2024-0332 and CVE-2024-27316; the ticket is SEC-88.")
    assert _texts(_listed(c, NOTHING), "identifier") == ["RUSTSEC-2024-0332", "CVE-2024-27316", "SEC-88"]


def test_what_an_audit_loaded_and_scanned_is_its_input_not_what_it_found():
    c = Conversation("/p", "audit input")
    c.bash(
        "cargo audit",
        "      Loaded 682 security advisories (from /home/l/.cargo/advisory-db)\n"
        "    Scanning Cargo.lock for vulnerabilities (311 crate dependencies)\nerror: 1 vulnerability found!",
    )
    c.bash("cargo audit 2>&1 | tail -1", "    Scanning Cargo.lock for vulnerabilities (311 crate dependencies)")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert not [m for m in measured if "682" in m or "311" in m], measured


def test_a_test_run_naming_its_runners_script_is_no_focused_run_and_djangos_migration_applied_is_an_id():
    c = Conversation("/p", "django")
    c.bash("python manage.py test orders -v 1 2>&1 | tail -3", "Ran 88 tests in 6.412s\n\nOK")
    c.bash("pytest tests/test_tasks.py", "...\n3 passed in 0.2s")
    c.bash(
        "python manage.py migrate orders",
        "Running migrations:\n  Applying orders.0031_order_retry_count... OK",
    )
    listed = _listed(c, NOTHING)
    assert "Ran 88 tests" in " ".join(_texts(listed, "measurement")), "the app's suite, by its label: no test file"
    assert not [m for m in _texts(listed, "measurement") if m.startswith("3 passed")], "a test file: focused"
    assert "0031_order_retry_count" in _texts(listed, "identifier")


def test_the_one_uuid_a_log_read_names_is_not_what_its_command_made():
    c = Conversation("/p", "log uuid")
    c.bash(
        "tail -n 2 /var/log/celery/worker.log",
        "[09:14:07: ERROR] Chord 'a3f0c9e1-5b7d-4e2a-9c18-6d0b2e4f7a31' raised: TimeoutError\n[09:14:09: INFO] ok",
    )
    c.bash("kubectl logs deploy/api | tail -1", "request 7d1e2f3a-0b4c-4d5e-8f9a-0b1c2d3e4f5a done")
    c.bash("terraform plan", "Lock Info:\n  ID:        9b8c7d6e-5f4a-4b3c-8d2e-1f0a9b8c7d6e\n", error=True)
    assert _texts(_listed(c, NOTHING), "identifier") == ["9b8c7d6e-5f4a-4b3c-8d2e-1f0a9b8c7d6e"]


def test_a_profiles_hottest_row_is_not_the_programs_entry_and_a_runs_tally_after_the_table_stays():
    c = Conversation("/p", "profiles")
    c.bash(
        "python -m cProfile -s cumtime report.py | head -9",
        "   ncalls  tottime  percall  cumtime  percall filename:lineno(function)\n"
        "        1    0.001    0.001    9.812    9.812 report.py:1(<module>)\n"
        "      1/1    0.000    0.000    9.812    9.812 {built-in method builtins.exec}\n"
        "   120000    6.210    0.000    7.950    0.000 report.py:44(format_row)\n"
        "   120000    1.002    0.000    1.101    0.000 {method 'strftime' of 'datetime.date' objects}",
    )
    c.bash(
        "perf report --stdio | head",
        "# Overhead  Command  Shared Object  Symbol\n# ........  .......  .............  ......\n#\n"
        "    45.23%  app      libc.so.6      [.] __memmove_avx_unaligned\n    12.10%  app      app            [.] parse_row",
    )
    c.bash(
        "pytest --durations=2 -q",
        "....\n======= slowest 2 durations =======\n12.41s call     tests/test_export.py::test_big_export\n"
        "3.02s call     tests/test_api.py::test_list\n\n======= 412 passed in 31.22s =======",
    )
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert "120000    6.210    0.000    7.950    0.000 report.py:44(format_row)" in measured
    assert "45.23%  app      libc.so.6      [.] __memmove_avx_unaligned" in measured
    assert "12.41s call     tests/test_export.py::test_big_export" in measured
    assert "======= 412 passed in 31.22s =======" in measured
    assert not [m for m in measured if "<module>" in m or "strftime" in m or "parse_row" in m or "test_list" in m]


def test_ctests_total_test_time_is_how_long_the_command_took_but_its_tally_is_its_result():
    c = Conversation("/p", "ctest")
    c.bash(
        "ctest --test-dir build --output-on-failure",
        "100% tests passed, 0 tests failed out of 143\n\nTotal Test time (real) =  18.27 sec",
    )
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert "100% tests passed, 0 tests failed out of 143" in measured
    assert not [m for m in measured if "Total Test time" in m]


def test_a_failing_runs_tally_is_kept_by_the_summary_saying_how_many_failed_in_words_or_figures():
    c = Conversation("/p", "failed tally")
    c.bash("pytest -q", "F.F\n2 failed, 611 passed, 4 skipped in 38.71s", error=True)
    c.bash("ruff check .", "All checks passed!")  # not run again: the failing run's tally is the newest
    told = "4. Errors and fixes:\n   - Two statement tests failed after the upgrade: fixed.\n"
    measured = _texts(_listed(c, told), "measurement")
    assert "2 failed, 611 passed, 4 skipped in 38.71s" not in measured
    for other in ("Three statement tests failed after the upgrade", "Two tests were renamed. One failed"):
        said = f"4. Errors and fixes:\n   - {other}.\n"
        assert "2 failed, 611 passed, 4 skipped in 38.71s" in _texts(_listed(c, said), "measurement"), other


def test_the_tickets_a_historys_commits_name_are_identifiers_but_a_releases_worth_is_a_survey():
    c = Conversation("/p", "tickets")
    c.bash(
        "git log --oneline v3.8.1..v3.8.2",
        "d41e5b2 release 3.8.2\n6aa0c1f tax: apply reduced VAT to e-books (LEGAL-88)\n"
        "b93e4f7 pricing: memoise quotes\n0c7d2a8 deps: bump undici (SHA-256 pins)",
    )
    c.bash("git log --oneline v3.0..v3.8", "\n".join(f"{i:07x} fix (OPS-{100 + i})" for i in range(1, 9)))
    ids = {f.text: f.detail for f in _listed(c, NOTHING) if f.kind == "identifier"}
    assert ids == {"LEGAL-88": "6aa0c1f tax: apply reduced VAT to e-books (LEGAL-88)"}, ids


def test_a_test_runs_tallies_of_one_shape_are_its_suites_one_result_but_many_are_progress():
    c = Conversation("/p", "suites")
    c.bash(
        "cargo test --release 2>&1 | grep 'test result'",
        "test result: ok. 143 passed; 0 failed; 2 ignored; finished in 4.87s\n"
        "test result: ok. 12 passed; 0 failed; 0 ignored; finished in 0.61s",
    )
    c.bash("python run_shards.py", "\n".join(f"shard {i}: 40 tests passed" for i in range(8)))
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert (
        "test result: ok. 143 passed; 0 failed; 2 ignored; finished in 4.87s; "
        "test result: ok. 12 passed; 0 failed; 0 ignored; finished in 0.61s"
    ) in measured
    assert not [m for m in measured if "shard" in m], "eight of one shape: a progress report"


def test_a_listed_commit_the_model_tells_by_its_subjects_own_words_is_the_one_the_session_turned_on():
    c = Conversation("/p", "history")
    c.bash(
        "git log --oneline v2.13.0..v2.14.0",
        "c0ffee1 Bump golang.org/x/net\n8d2e4b7 cart: return typed errors from Load\n"
        "a71f3c9 cart: drop legacy session fallback\n9f8e7d6 cart: lazy-load line items\n3a2b1c0 docs: checkout diagram",
    )
    c.say("The 500 comes from Mia's lazy-load change: Items() now errors on an empty cart.")
    c.say("Every cart change touches the handler, so I read them all.")
    listed = [(f.text, f.confidence) for f in _listed(c, NOTHING) if f.kind == "identifier"]
    assert listed == [("9f8e7d6", dropped.POSSIBLY_DROPPED)], "'cart' is every subject's word: it tells none"
    kept = "5. Problem Solving:\n   Bisect found 9f8e7d6 (lazy-load line items).\n"
    assert not [f for f in _listed(c, kept) if f.kind == "identifier"]


# --- "dropped" a reader can rely on (rule 10) ----------------------------------------------------


def _confidence(listed: list[dropped.Fact]) -> dict[str, str]:
    return {f.text: f.confidence for f in listed}


def test_a_lookups_answer_and_a_printed_file_are_possibly_dropped_and_a_read_or_a_commit_made_dropped():
    c = Conversation("/p", "lookups")
    c.bash("pnpm --version", "9.12.3")
    c.bash("grep -c 'InvoiceMailed' storage/logs/laravel.log", "1207")
    c.bash("docker images api --format '{{.Tag}} {{.Size}}'", "latest 1.42GB\n2026.11.30 1.39GB")
    c.bash("head -n 3 config/celery.toml", "[beat]\ntimezone = 'UTC'")
    c.tool("Read", {"file_path": "/p/app/models/account.rb"}, "class Account\nend")
    c.bash("git commit -qam 'fix' && git log -1 --oneline", "[main 2b7c4e1] fix\n 1 file changed")
    confidence = _confidence(_listed(c, NOTHING))
    assert confidence["9.12.3"] == confidence["1207"] == dropped.POSSIBLY_DROPPED, "a lookup's answer: a step or a fact"
    assert confidence["latest 1.42GB; 2026.11.30 1.39GB"] == dropped.POSSIBLY_DROPPED, "the fields a command selected"
    assert confidence["config/celery.toml"] == dropped.POSSIBLY_DROPPED, "a file printed for a line of it"
    assert confidence["/p/app/models/account.rb"] == dropped.DROPPED, "a file the model read whole"
    assert confidence["2b7c4e1"] == dropped.DROPPED, "the commit made"


def test_a_name_said_again_is_possibly_dropped_but_a_commit_said_again_is_dropped():
    c = Conversation("/p", "names")
    c.bash(
        "kubectl get pods",
        "NAME                           READY   STATUS\ncheckout-api-7f9c6d5b8-2xkqp   0/1     CrashLoopBackOff",
    )
    c.bash("./scripts/current-release.sh checkout-api", "checkout-api running b93e4f7 since yesterday")
    c.say("checkout-api-7f9c6d5b8-2xkqp is the one crashing; it runs b93e4f7, where the cache came in.")
    confidence = _confidence(_listed(c, NOTHING))
    assert confidence["checkout-api-7f9c6d5b8-2xkqp"] == dropped.POSSIBLY_DROPPED, "the pod it looked at: a step"
    assert confidence["b93e4f7"] == dropped.DROPPED, "the commit the session turned on"


def test_a_failed_runs_tally_a_baseline_runs_figures_and_a_line_grep_picked_are_possibly_dropped():
    c = Conversation("/p", "restated")
    c.bash(
        "python -m pytest -q 2>&1 | tail -3",
        "E   assert 3 == 4\nFAILED tests/test_tax.py::test_round - assert 3 == 4\n"
        "=================== 1 failed, 611 passed, 3 warnings in 38.42s ===================",
        error=True,
    )
    c.bash(
        "git stash -q && go test -run XXX -bench Encode ./search; git stash pop -q",
        "BenchmarkEncode-8   \t   27451\t     61240 ns/op\nPASS",
    )
    c.bash(
        "go test -run XXX -bench Encode ./search && git stash",  # stashed after: it measured the change
        "BenchmarkEncode-8   \t   31877\t     43710 ns/op\nPASS\nSaved working directory and index state WIP on main",
    )
    c.bash(
        "./gradlew build --configuration-cache 2>&1 | grep -E 'problems|BUILD'",
        "3 problems were found storing the configuration cache.\nBUILD SUCCESSFUL in 5m 02s",
    )
    c.bash(
        "git stash && git switch release && git stash pop && git log -1 --oneline",
        "Saved working directory and index state WIP on main: 1f2e3d4 wip\n6d0c9b4 editor: no toast after detach",
    )
    confidence = _confidence(_listed(c, NOTHING))
    assert confidence["python -m pytest -q 2>&1 | tail -3"] == dropped.DROPPED, "the failure itself"
    assert (
        confidence["=================== 1 failed, 611 passed, 3 warnings in 38.42s ==================="]
        == dropped.POSSIBLY_DROPPED
    ), "its tally says again that it failed"
    assert confidence["BenchmarkEncode-8   \t   27451\t     61240 ns/op"] == dropped.POSSIBLY_DROPPED, "the baseline"
    assert confidence["BenchmarkEncode-8   \t   31877\t     43710 ns/op"] == dropped.DROPPED, "the run after the change"
    assert confidence["6d0c9b4"] == dropped.DROPPED, "a stash before a switch measures nothing: the commit is sure"
    assert confidence["3 problems were found storing the configuration cache."] == dropped.POSSIBLY_DROPPED, (
        "a line a search picked out of an output: a lookup's answer"
    )


def test_an_id_or_a_figure_taken_from_a_longer_listed_fact_is_shown_there_once():
    c = Conversation("/p", "longest")
    c.bash(
        "npx --yes lychee@0.15.1 --offline README.md 2>&1 | tail -2",
        "✗ [ERR] file:///p/docs/FAQ.md | Cannot find file\n🔍 30 Total ✅ 29 OK 🚫 1 Errors",
        error=True,
    )
    c.bash("python manage.py shell -c 'requeue()'", "requeued 617 orders, 0 failed")
    c.say("617 orders are back in the queue.")
    c.bash(
        "git commit -qam 'pricing: bound the cache; fixes OOM from b93e4f7'",
        "[hotfix 91f0c3e] pricing: bound the cache; fixes OOM from b93e4f7\n 1 file changed",
    )
    c.bash("pip install -U requests", "Successfully installed requests-2.32.3 urllib3-2.2.3")
    listed = _listed(c, NOTHING)
    texts = {f.text for f in listed}
    assert "lychee@0.15.1" not in texts, "the pin is shown in the failed command that holds it"
    assert "617" not in texts and "requeued 617 orders, 0 failed" in texts, "the figure is shown in its line"
    assert "91f0c3e" in texts, "the commit made"
    assert "b93e4f7" not in texts or "b93e4f7" in {f.text for f in listed if f.kind == "identifier"}
    assert "requests-2.32.3" in texts, "a sure id in a line listed as possibly dropped stays: the surer is read"


def test_a_builds_task_count_and_a_test_folders_tally_are_no_result():
    c = Conversation("/p", "counts")
    c.bash(
        "./gradlew clean build --offline 2>&1 | tail -2",
        "BUILD SUCCESSFUL in 17m 52s\n214 actionable tasks: 214 executed",
    )
    c.bash("./gradlew test 2>&1 | tail -1", "9 actionable tasks: 3 executed, 6 up-to-date")
    c.bash("python -m pytest tests/reports -q 2>&1 | tail -1", "8 passed in 1.98s")
    c.bash("python -m pytest -q 2>&1 | tail -1", "613 passed, 4 skipped in 37.95s")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert "BUILD SUCCESSFUL in 17m 52s" in measured, "the build's time"
    assert not [m for m in measured if "actionable" in m], "how many tasks a build went through: its size, no result"
    assert "8 passed in 1.98s" not in measured, "a folder of the test tree is a part of the suite: a focused run"
    assert "613 passed, 4 skipped in 37.95s" in measured, "the whole suite's tally"


def test_a_failing_runs_tally_goes_when_the_run_passes_with_a_tally_of_its_own():
    c = Conversation("/p", "superseded")
    c.bash(
        "npm test 2>&1 | tail -5",
        "    Expected: true\n    Received: false\n\nTests:       1 failed, 63 passed, 64 total\nTime:        6.114 s",
        error=True,
    )
    c.bash("npm test 2>&1 | tail -2", "Tests:       64 passed, 64 total\nTime:        5.871 s")
    c.bash(
        "./gradlew test 2>&1 | tail -3",
        "    org.opentest4j.AssertionFailedError: expected: <[O-3]> but was: <[O-3, O-3]>\n"
        "47 tests completed, 1 failed\n\nFAILURE: Build failed with an exception.",
        error=True,
    )
    c.bash("./gradlew test 2>&1 | tail -1", "BUILD SUCCESSFUL in 1m 12s")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert "Tests:       64 passed, 64 total" in measured
    assert "Tests:       1 failed, 63 passed, 64 total" not in measured, "the run that passed gave the newest tally"
    assert "47 tests completed, 1 failed" in measured, "the run that passed printed none: this is the suite's size"


def test_a_failed_runs_error_count_is_no_measurement_and_a_build_time_is_possibly_dropped():
    c = Conversation("/p", "counts2")
    c.bash(
        "npx tsc --noEmit",
        "src/cors.ts:10:27 - error TS2345: Argument of type 'string | undefined' is not assignable.\n\n"
        "Found 1 error in src/cors.ts:10\n",
        error=True,
    )
    c.bash("cargo build --release 2>&1 | tail -1", "    Finished `release` profile [optimized] target(s) in 2m 41s")
    c.bash("cargo clippy --release 2>&1 | tail -1", "    Finished `release` profile [optimized] target(s) in 14.02s")
    listed = _listed(c, NOTHING)
    assert not [f for f in listed if f.text.startswith("Found 1 error")], "it says again that tsc failed"
    assert [(f.text, f.confidence) for f in listed if f.kind == "measurement"] == [
        ("Finished `release` profile [optimized] target(s) in 2m 41s", dropped.POSSIBLY_DROPPED)
    ], "a build's time matters to a session about build time only; a check builds nothing"


def test_apts_progress_and_download_counts_are_no_facts_but_the_version_it_set_up_is():
    c = Conversation("/p", "apt")
    c.bash(
        "sudo apt-get install -y libssl-dev",
        "Reading package lists... Done\n0 upgraded, 1 newly installed, 0 to remove and 14 not upgraded.\n"
        "Need to get 2,439 kB of archives.\nAfter this operation, 13.9 MB of additional disk space will be used.\n"
        "Get:1 http://deb.debian.org/debian bookworm/main amd64 libssl-dev amd64 3.0.15-1~deb12u1 [2,439 kB]\n"
        "Fetched 2,439 kB in 0s (18.2 MB/s)\nSetting up libssl-dev:amd64 (3.0.15-1~deb12u1) ...",
    )
    c.bash(
        "rustup target add x86_64-unknown-linux-musl",
        "info: downloading component 'rust-std'\n 24.9 MiB /  24.9 MiB (100 %)  12.1 MiB/s in  2s ETA:  0s\ninfo: installing",
    )
    listed = _listed(c, NOTHING)
    assert [(f.kind, f.text) for f in listed] == [("identifier", "libssl-dev 3.0.15-1~deb12u1")], (
        "no download size, rate or mirror: what apt went through; the version it set up of the package asked for"
    )
    assert (
        _texts(_listed(c, "3. Files and Code Sections:\n   - installed libssl-dev 3.0.15-1~deb12u1\n"), "identifier")
        == []
    )


def test_a_list_of_addresses_is_no_one_address_made_and_a_bound_keeps_no_measure():
    c = Conversation("/p", "lists")
    c.bash(
        "kubectl get deploy api -o json | jq -r '.spec.template.spec.containers[0].env[0].value'",
        "https://app.acme.io,https://partners.acme.io",
    )
    c.bash(
        "ls -l target/release/tilesrv && echo done",
        "-rwxr-xr-x 2 ana ana 19921408 Dec  4 16:09 target/release/tilesrv\ndone",
    )
    c.say("19921408 bytes, just under the limit.")
    assert not _texts(_listed(c, NOTHING), "url"), "two addresses of a list the command read: none it made"
    for bound in ("Keep the binary under 20 MB.", "The binary has a 20 MB limit."):
        said = f"1. Primary Request and Intent:\n   {bound}\n"
        assert [f for f in _listed(c, said) if "19921408" in f.text], f"a limit set is no measure taken: {bound}"
    measured = "5. Problem Solving:\n   The binary is 19.9 MB.\n"
    assert not [f for f in _listed(c, measured) if "19921408" in f.text]


def test_a_search_hit_and_a_bundlers_module_count_are_no_result_of_a_command():
    c = Conversation("/p", "hits")
    c.bash(
        "grep -rn 'timeout' config/ src/",
        "config/app.yaml:12:  timeout: 30s\nsrc/worker.py:41:  # retry 3 times with 500 ms backoff",
    )
    c.bash(
        "npm run build 2>&1 | tail -3",
        "✓ 412 modules transformed.\ndist/assets/index-4f2a91.js   412.71 kB │ gzip: 131.02 kB",
    )
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert measured == ["dist/assets/index-4f2a91.js   412.71 kB │ gzip: 131.02 kB"], (
        "a line a search found is a file's (its file is listed), a bundler's module count is its input"
    )


def test_a_result_line_measuring_several_things_is_kept_only_with_a_figure_of_each_and_batch_388_ms_is_no_index():
    c = Conversation("/p", "batches")
    c.bash(
        "mix run priv/repo/backfills/currency.exs",
        "batch 1/52: 1000 rows (143 ms)\nbatch 51/52: 1000 rows (388 ms)\n"
        "updated 51877 rows in 52 batches, longest batch 388 ms\ndone in 47.2s",
    )
    c.say("Done: the longest batch took 388 ms, well inside the lock limit; batch 51 was the slow one.")
    line = "updated 51877 rows in 52 batches, longest batch 388 ms"
    said = "5. Problem Solving:\n   Updated about 52k rows in 52 batches.\n"
    measured = {f.text: f.confidence for f in _listed(c, said) if f.kind == "measurement"}
    assert measured == {line: dropped.POSSIBLY_DROPPED}, (
        "the longest batch's time is a clause no figure of the summary tells"
    )
    assert "388" in {token for token, _ in dropped._echo_tokens("the longest batch 388 ms; batch 51 was slow")}
    assert "51" not in {token for token, _ in dropped._echo_tokens("batch 51 was slow")}, "`batch 51` is an index"
    kept = "5. Problem Solving:\n   Updated about 52k rows in 52 batches; the longest batch took 388 ms.\n"
    assert not [f for f in _listed(c, kept) if "388" in f.text]
    for line in (
        "updated 47901 rows in 48 batches, done in 41.7s",
        "updated 47901 rows in 48 batches; checked 12000 lines",
    ):
        summary = dropped.Summary("5. Problem Solving:\n   Updated 47901 rows in 48 batches.\n")
        assert summary.judge(dropped.Fact("measurement", line, 1, "mix run x.exs")) == "kept", (
            "how long the run took and how much it went through are no clause of their own"
        )
    tally = Conversation("/p", "tally")
    tally.bash("pytest -q", "2 failed, 611 passed, 4 skipped in 12.31s")
    told = "4. Errors and fixes:\n   Two tests failed (of 611 passing).\n"
    assert not _texts(_listed(tally, told), "measurement"), "a test run's tally is one count, told as a whole"


def test_a_hosts_address_a_tool_printed_and_the_model_says_again_is_an_identifier():
    c = Conversation("/p", "address")
    c.bash(
        "kubectl exec redis-0 -c sentinel -- redis-cli -p 26379 sentinel get-master-addr-by-name mymaster",
        '1) "10.12.9.12"\n2) "6379"',
    )
    c.bash("dig +short db.internal", "10.12.3.8")
    c.say("Sentinel still has 10.12.9.12 as master, the pod on the troubled node.")
    listed = {f.text: f for f in _listed(c, NOTHING) if f.kind == "identifier"}
    assert listed["10.12.9.12"].detail == '1) "10.12.9.12"'
    assert listed["10.12.9.12"].confidence == dropped.POSSIBLY_DROPPED, "a name said again is as often a step"
    assert "10.12.3.8" not in listed, "an address the model did not go on with"
    assert "1.26.18" not in {token for token, _ in dropped._echo_tokens("urllib3 stays on 1.26.18")}
    kept = "5. Problem Solving:\n   The Sentinel master was 10.12.9.12.\n"
    assert not [f for f in _listed(c, kept) if f.kind == "identifier"]


def test_a_header_an_edit_sets_is_a_value_it_brought_in_kept_only_with_the_value():
    c = Conversation("/p", "header")
    c.tool(
        "Edit",
        {
            "file_path": "/p/app/views.py",
            "old_string": '    return render_template("login.html", form=form)\n',
            "new_string": '    response = make_response(render_template("login.html", form=form))\n'
            '    response.headers["Referrer-Policy"] = "strict-origin-when-cross-origin"\n'
            "    return response\n",
        },
        "The file /p/app/views.py has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/p/server.js",
            "old_string": "  res.json(body);\n",
            "new_string": "  res.setHeader('Cache-Control', 'no-store');\n  res.json(body);\n",
        },
        "The file /p/server.js has been updated successfully.",
    )
    said = "3. Files and Code Sections:\n   - app/views.py: the login page sends a Referrer-Policy header.\n"
    edits = _texts(_listed(c, said), "edit")
    assert 'app/views.py:  → response.headers["Referrer-Policy"] = "strict-origin-when-cross-origin"' in edits
    assert "server.js:  → res.setHeader('Cache-Control', 'no-store');" in edits
    kept = (
        "3. Files and Code Sections:\n   - app/views.py: Referrer-Policy strict-origin-when-cross-origin on the login page.\n"
        "   - server.js: Cache-Control no-store.\n"
    )
    assert _texts(_listed(c, kept), "edit") == []


def test_a_check_the_user_named_and_a_name_the_summary_gives_in_passing_do_not_tell_its_failure():
    c = Conversation("/p", "lint")
    c.user("Fix the open redirect. CI runs `make lint` (ruff + bandit), it has to stay green.")
    c.bash(
        "make lint",
        "ruff check app tests\napp/auth/views.py:27:13: F821 Undefined name `urlsplit`\nFound 1 error.\n"
        "make: *** [Makefile:14: lint] Error 1",
        error=True,
    )
    request = (
        "1. Primary Request and Intent:\n   Fix the open redirect; keep CI's `make lint` (ruff and bandit) passing.\n"
        "2. Key Technical Concepts:\n   - urlsplit scheme/netloc checks\n"
    )
    failed = [f for f in _listed(c, request) if f.kind == "failed command"]
    assert [(f.text, f.detail, f.confidence) for f in failed] == [
        ("make lint", "F821 Undefined name `urlsplit`", dropped.POSSIBLY_DROPPED)
    ], "the request names the check, the concepts the function: neither tells the failure"
    for told in (
        "4. Errors and fixes:\n   - make lint failed: F821 Undefined name `urlsplit`; added the import.\n",
        "4. Errors and fixes:\n   - ruff flagged urlsplit as undefined; added the import.\n",
    ):
        assert not [f for f in _listed(c, request + told) if f.kind == "failed command"], told
    not_named = Conversation("/p", "lint-unnamed")
    not_named.user("Fix the open redirect please.")
    not_named.bash("make lint", "app/auth/views.py:27:13: F821 Undefined name `urlsplit`", error=True)
    assert not [f for f in _listed(not_named, request) if f.kind == "failed command"], (
        "a command only the session chose to run is kept when the summary names it"
    )


def test_a_kubernetes_quantity_is_a_size_a_measure_and_no_name():
    c = Conversation("/p", "quantities")
    c.bash(
        "kubectl top pod report-export-28891530-zt6kp -n batch --no-headers",
        "report-export-28891530-zt6kp   912m   9214Mi",
    )
    c.say("The export job holds 9214Mi on a 16 GiB node.")
    listed = _listed(c, NOTHING)
    assert "9214Mi" not in _texts(listed, "identifier"), "a quantity is no name"
    assert [f for f in listed if f.kind == "measurement" and "9214Mi" in f.text]
    assert ("9214Mi", True) in list(dropped._echo_tokens("holds 9214Mi"))
    kept = "5. Problem Solving:\n   The export job used about 9 GiB on a 16 GiB node.\n"
    assert not [f for f in _listed(c, kept) if "9214Mi" in f.text and f.kind == "measurement"]


def test_a_prohibition_said_as_no_x_on_y_is_a_constraint_and_its_clause_alone_is_the_fact():
    c = Conversation("/p", "prohibition")
    c.user(
        "Ok that matches. You can cordon the node and fail Redis over, nothing else: no helm upgrades on the "
        "prod cluster while the change freeze is on. Put the values fix in a PR."
    )
    c.user("No problem on my side, go ahead and read the logs.")
    listed = _listed(c, NOTHING)
    assert _texts(listed, "constraint") == [
        "You can cordon the node and fail Redis over, nothing else",
        "no helm upgrades on the prod cluster while the change freeze is on.",
    ]
    assert "No problem on my side, go ahead and read the logs." in _texts(listed, "request"), "no prohibition"
    summary = (
        '6. All user messages:\n   - "Ok that matches. You can cordon the node and fail Redis over, nothing else. '
        'Put the values fix in a PR."\n   - "No problem on my side, go ahead and read the logs."\n'
    )
    assert _texts(_listed(c, summary), "constraint") == [
        "no helm upgrades on the prod cluster while the change freeze is on."
    ], "the summary's quote kept the scope and lost the prohibition"
    assert not dropped.CONSTRAINT_WORDS.search("at androidx.fragment.app.Fragment.requireContext(Fragment.java:972)")


def test_a_tool_run_on_staging_and_then_on_prod_gives_two_results_and_a_rerun_one():
    c = Conversation("/p", "where")
    for env, updated, longest in (("staging", 47901, 212), ("prod", 51877, 388)):
        c.bash(
            f"MIX_ENV={env} mix run priv/repo/backfills/payout_currency.exs",
            f"updated {updated} rows in 52 batches, longest batch {longest} ms\ndone in 41.7s",
        )
    c.bash("pytest -q tests", "2 failed, 40 passed in 3.1s", error=True)
    c.bash("pytest -q tests", "42 passed in 3.0s")
    measured = _texts(_listed(c, NOTHING), "measurement")
    assert "updated 47901 rows in 52 batches, longest batch 212 ms" in measured, "staging's result"
    assert "updated 51877 rows in 52 batches, longest batch 388 ms" in measured, "prod's result"
    assert [m for m in measured if "passed" in m] == ["42 passed in 3.0s"], "a rerun's result is the newest"
    assert dropped._where_run('psql "$STAGING_DATABASE_URL" -Atc "SELECT 1"') == "STAGING_DATABASE_URL"
    assert dropped._where_run("pip install -q -e . && CUDA_VISIBLE_DEVICES=0 python train.py") == ""


def test_of_a_short_history_the_newest_commit_is_a_fact_and_an_older_one_where_the_session_tells_it():
    c = Conversation("/p", "short-history")
    c.bash(
        "git log --oneline -3 -- app/editor.kt",
        "a3e5c71 editor: save on back press\n5b2f0d9 editor: toast after save\n9e1d3c8 editor: move save off the main thread",
    )
    c.say("The newest change saves on back press; let me reproduce that.")
    listed = {f.text: f.confidence for f in _listed(c, NOTHING) if f.kind == "identifier"}
    assert listed == {"a3e5c71": dropped.POSSIBLY_DROPPED}, "the older two are a history read, not facts"
    c.say("So the race came when the save moved off the main thread, into a coroutine that outlives the screen.")
    listed = {f.text for f in _listed(c, NOTHING) if f.kind == "identifier"}
    assert listed == {"a3e5c71", "9e1d3c8"}, "an older commit the model tells by its subject's words"
    made = Conversation("/p", "made")
    made.bash("git commit -qam 'fix' && git log -1 --format=%h", "b4f1e0a")
    assert {f.text: f.confidence for f in _listed(made, NOTHING) if f.kind == "identifier"} == {
        "b4f1e0a": dropped.DROPPED
    }


def test_a_constraints_bound_said_in_words_is_kept_only_with_the_bound():
    c = Conversation("/p", "bound")
    c.user(
        "Backfill payouts.currency from the merchant's settlement currency. Never hold a lock on payouts for "
        "more than a second or two, finance's reconciliation times out on locks."
    )
    lost = "1. Primary Request and Intent:\n   Backfill payouts.currency; never hold a lock on payouts for long.\n"
    assert [(f.text, f.confidence) for f in _listed(c, lost) if f.kind == "constraint"] == [
        (
            "Never hold a lock on payouts for more than a second or two, finance's reconciliation times out on locks.",
            dropped.POSSIBLY_DROPPED,
        )
    ]
    for kept in (
        "1. Primary Request and Intent:\n   Never hold a lock on payouts for more than a second or two (finance's reconciliation times out on locks).\n",
        "1. Primary Request and Intent:\n   Never hold a lock on payouts for more than 2 seconds: finance's reconciliation times out on locks.\n",
    ):
        assert not _texts(_listed(c, kept), "constraint"), kept


def test_a_processs_memory_measured_before_and_after_a_fix_is_two_results():
    c = Conversation("/p", "memory")
    soak = "npm run soak -- --connections 2000 2>&1 | tail -1"
    c.bash(soak, "rss start 182.4 MB, end 611.9 MB; heapUsed start 96.1 MB, end 503.7 MB")
    c.bash(soak, "rss start 181.9 MB, end 204.7 MB; heapUsed start 95.8 MB, end 101.2 MB")
    c.bash("/usr/bin/time -v ./parse big.ini 2>&1 | grep Maximum", "Maximum resident set size (kbytes): 812344")
    c.bash("/usr/bin/time -v ./parse big.ini 2>&1 | grep Maximum", "Maximum resident set size (kbytes): 90112")
    measured = _texts(_listed(c, NOTHING), "measurement")
    for line in (
        "rss start 182.4 MB, end 611.9 MB; heapUsed start 96.1 MB, end 503.7 MB",
        "rss start 181.9 MB, end 204.7 MB; heapUsed start 95.8 MB, end 101.2 MB",
        "Maximum resident set size (kbytes): 812344",
        "Maximum resident set size (kbytes): 90112",
    ):
        assert line in measured, (line, measured)
    said = "5. Problem Solving:\n   RSS went from about 180 MB to about 610 MB before the fix.\n"
    assert "rss start 182.4 MB, end 611.9 MB; heapUsed start 96.1 MB, end 503.7 MB" in _texts(
        _listed(c, said), "measurement"
    ), "the heap's clause is one the summary does not tell"


def test_a_checks_clean_result_and_a_tests_own_time_are_no_measurements_and_what_a_check_found_is():
    """A linter or licence check that found nothing says so with a 0 beside what it went through
    (`Found 0 violations, 0 serious in 87 files`, `3 dependencies, 0 violations`, `42 files
    inspected, no offenses detected`, warnings all baselined); a test's own time (`[12 ms]`,
    `(0.004 seconds)`) measures no work. What a check did find stays a result."""
    c = Conversation("/p", "clean-checks")
    c.bash("swiftlint lint Sources/ 2>&1 | tail -1", "Done linting! Found 0 violations, 0 serious in 87 files.")
    c.bash("./scripts/check-licenses.sh", "swift-log 1.6.1   Apache-2.0  ok\n3 dependencies, 0 violations")
    c.bash("bundle exec rubocop", "Inspecting 42 files\n..........\n\n42 files inspected, no offenses detected")
    c.bash("./gradlew lintDebug | tail -1", "Lint found 0 errors, 41 warnings (41 baselined)")
    c.bash(
        "dotnet test --filter CsvImportTests",
        "  Passed Acme.Tests.CsvImportTests.Skips_header_row [3 ms]\n"
        "Test Case '-[AcmeTests.OrderTests testDecodes]' passed (0.004 seconds).",
    )
    assert _texts(_listed(c, NOTHING), "measurement") == []
    c.bash("bundle exec rubocop app/", "Inspecting 42 files\n..C.\n\n42 files inspected, 3 offenses detected")
    c.bash("./gradlew lintRelease | tail -1", "Lint found 0 errors, 44 warnings (41 baselined)")
    assert _texts(_listed(c, NOTHING), "measurement") == [
        "42 files inspected, 3 offenses detected",
        "Lint found 0 errors, 44 warnings (41 baselined)",
    ]


def test_a_figure_the_model_says_with_its_thousands_marked_or_takes_from_a_tables_row_is_the_outputs():
    """The model writes `2,318` of a tool's `2318`, and singles out one row's figure of a table it
    read ("partition 3 alone has 97,120"): each is the output's figure the session went on with.
    A later command that repeats a row's figure looks the row up (`gh run view` of a listed run):
    no measurement."""
    c = Conversation("/p", "echo-commas")
    c.bash("jq '[.[] | select(.frac)] | length' eu_orders.json && jq 'length' eu_orders.json", "2318\n2400")
    c.say("2,318 of the 2,400 sampled orders carry fractional seconds.")
    c.bash(
        "kafka-consumer-groups.sh --describe --group billing",
        "GROUP    TOPIC     PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG\n"
        "billing  invoices  0          8812044         8826190         14146\n"
        "billing  invoices  3          8702455         8799575         97120",
    )
    c.say("Partition 3 alone has 97,120 of the lag.")
    c.bash(
        "gh run list -L 2",
        "STATUS  TITLE   WORKFLOW  BRANCH  EVENT  ID           ELAPSED\n"
        "X       Build   ci.yml    main    push   11920446013  21m28s\n"
        "✓       Build   ci.yml    main    push   11920440001  9m18s",
    )
    c.bash("gh run view 11920446013 --log-failed | tail -3", "BUILD FAILED")
    measured = {f.text: f.detail for f in _listed(c, NOTHING) if f.kind == "measurement"}
    assert measured.get("2318") == "2318", measured
    assert measured.get("97120") == "billing  invoices  3          8702455         8799575         97120", measured
    assert "11920446013" not in measured


def test_a_configurations_key_an_edit_set_is_kept_only_by_a_summary_naming_the_key_with_its_value():
    """An edit that sets keys in a configuration file to bare values (`LC_ALL: de_DE.UTF-8`) brought
    in those values; a summary that says the value of something else ("the agents have
    LANG=de_DE.UTF-8") does not keep the key set, nor does one that names the file alone. A path
    set (`src: headers.conf.j2`) is no value of its own: the file the edit names tells it."""
    c = Conversation("/p", "config-key")
    c.tool(
        "Edit",
        {
            "file_path": "/p/azure-pipelines.yml",
            "old_string": "  - script: dotnet test\n",
            "new_string": "  - script: dotnet test\n    env:\n      LC_ALL: de_DE.UTF-8\n      TZ: Europe/Berlin\n",
        },
        "The file /p/azure-pipelines.yml has been updated successfully.",
    )
    c.tool(
        "Edit",
        {
            "file_path": "/p/roles/nginx/tasks/main.yml",
            "old_string": "- name: reload\n",
            "new_string": "- name: reload\n  template:\n    src: headers.conf.j2\n",
        },
        "The file /p/roles/nginx/tasks/main.yml has been updated successfully.",
    )
    elsewhere = (
        "3. Files and Code Sections:\n   - azure-pipelines.yml: the test step sets a German locale.\n"
        "5. Problem Solving:\n   The new agents have LANG=de_DE.UTF-8.\n"
    )
    assert _texts(_listed(c, elsewhere), "edit") == ["azure-pipelines.yml:  → LC_ALL: de_DE.UTF-8"]
    named = "3. Files and Code Sections:\n   - azure-pipelines.yml: the test step sets LC_ALL to de_DE.UTF-8.\n"
    assert _texts(_listed(c, named), "edit") == []


def test_the_members_of_a_list_an_output_printed_said_again_together_or_the_files_a_selection_picked_are_no_facts():
    """The model going over a list a command printed (the licences allowed, each on its line) singles
    none of them out; one or two names it takes from an output's lines still are facts. The files a
    field selection picked (`cut -d: -f1 | sort -u` of a search) are a survey, no identifier."""
    c = Conversation("/p", "listed")
    c.bash("cat build/allowed-licenses.json", '[\n  "MIT",\n  "Apache-2.0",\n  "BSD-2-Clause",\n  "BSD-3-Clause"\n]')
    c.say("Every package is under Apache-2.0, BSD-2-Clause or BSD-3-Clause, all allowed.")
    c.bash(
        "grep -rn 'Parse(' src/ | cut -d: -f1 | sort -u",
        "src/Import/CsvInvoiceReader.cs\nsrc/Import/BankStatementReader.cs",
    )
    assert _texts(_listed(c, NOTHING), "identifier") == []
    c.bash(
        "kubectl get pods -o wide",
        "NAME                 READY   STATUS    RESTARTS      NODE\n"
        "api-7c9f8d6b5-lw4rj  1/1     Running   4 (38m ago)   pool-b-4f2a9c1e-x7vb\n"
        "api-7c9f8d6b5-2xkqp  1/1     Running   0             pool-b-4f2a9c1e-k8zd",
    )
    c.say("api-7c9f8d6b5-lw4rj restarted 4 times; it runs on pool-b-4f2a9c1e-x7vb.")
    assert _texts(_listed(c, NOTHING), "identifier") == ["api-7c9f8d6b5-lw4rj", "pool-b-4f2a9c1e-x7vb"]


def test_a_code_blocks_marker_is_no_part_of_a_request():
    """A user's message that pastes a block (```` ``` ````, ```` ```python ````) and says a constraint:
    the rest of the request is its sentences, not the block's markers."""
    c = Conversation("/p", "fence")
    c.user(
        "Here is the traceback:\n```python\nKeyError: 'user_id'\n```\n"
        "Fix it please, and never change the public API of app/main.py."
    )
    requests = _texts(_listed(c, NOTHING), "request")
    assert requests == ["Here is the traceback: … KeyError: 'user_id'"], requests


def test_a_log_a_command_printed_is_no_file_read_and_a_file_it_printed_is():
    """`tail /var/log/celery/worker.log` reads a log for its lines (what they say is the fact, as
    a measurement or an error); the log is no file the session worked on. `cat config/app.ini` is."""
    c = Conversation("/p", "log-read")
    c.bash("tail -20 /var/log/celery/worker.log", "[2026-11-30 08:00:49] Task sent")
    c.bash("cat logs/app.log.1", "started")
    c.bash("cat config/app.ini", "[server]\nworkers = 4")
    assert _texts(_listed(c, NOTHING), "file read") == ["config/app.ini"]


def test_a_uuid_a_command_printed_is_a_fact_where_the_session_refers_back_to_it_or_its_step_failed():
    """The one UUID a command that succeeded printed (an export's id in a response, a message's id)
    is a step on the way unless the session refers back to it (the model says it again);
    the UUID a failed command names (the lock a `terraform plan` could not take) is what held it."""
    c = Conversation("/p", "uuid-made")
    c.bash("curl -s -X POST https://api.acme.test/v1/exports", '{"id": "5f1c2a9e-8b1d-4c7e-9a52-0d4e6f1b7c33"}')
    c.bash(
        "aws sqs send-message --queue-url q --message-body hi", '{"MessageId": "77b0d4e1-2c9a-4f3e-8d61-5a2b9c0e4f18"}'
    )
    assert _texts(_listed(c, NOTHING), "identifier") == []
    c.say("The export 5f1c2a9e-8b1d-4c7e-9a52-0d4e6f1b7c33 is queued; I'll poll it.")
    c.bash("terraform plan", "Lock Info:\n  ID:        9b8c7d6e-5f4a-4b3c-8d2e-1f0a9b8c7d6e\n", error=True)
    assert _texts(_listed(c, NOTHING), "identifier") == [
        "9b8c7d6e-5f4a-4b3c-8d2e-1f0a9b8c7d6e",
        "5f1c2a9e-8b1d-4c7e-9a52-0d4e6f1b7c33",
    ]


def test_a_clause_of_the_model_that_tells_a_figure_of_an_output_is_shown_with_that_outputs_line():
    """The model's "partition 3 alone has 97,120 messages of lag" restates one row's `97120`: one fact,
    the clause, shown with the line it restates, so a reader (and a search for `97120`) finds both."""
    c = Conversation("/p", "clause-line")
    c.bash(
        "kafka-consumer-groups.sh --describe --group billing",
        "GROUP    TOPIC     PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG\n"
        "billing  invoices  0          8812044         8826190         14146\n"
        "billing  invoices  3          8702455         8799575         97120",
    )
    c.say("Partition 3 alone has 97,120 messages of lag.")
    measured = [(f.text, f.detail) for f in _listed(c, NOTHING) if f.kind == "measurement"]
    row = "billing  invoices  3          8702455         8799575         97120"
    assert measured == [("Partition 3 alone has 97,120 messages of lag", row)], measured


# --- rule 15 (#41's round 15) -------------------------------------------------------------------


def test_a_constraints_reason_after_its_colon_stays_with_it_and_is_kept_only_with_it():
    c = Conversation("/p", "colon")
    c.user(
        "Migrate the state. Nothing may be recreated: the NAT gateways take ten minutes to come back "
        "and every egress call goes through them."
    )
    said = "Nothing may be recreated: the NAT gateways take ten minutes to come back and every egress call goes through them."
    assert said in _texts(_listed(c, NOTHING), "constraint"), "a prohibition said of nothing, with its reason"
    lost = "1. Primary Request and Intent:\n   Migrate the state; nothing may be recreated.\n"
    assert _texts(_listed(c, lost), "constraint") == [said], "the summary kept the prohibition, not why"
    kept = (
        "1. Primary Request and Intent:\n   Migrate the state; nothing may be recreated, since the NAT gateways "
        "take ten minutes to come back and every egress call goes through them.\n"
    )
    assert not [f for f in _listed(c, kept) if f.kind == "constraint"]


def test_a_program_not_found_is_told_only_by_a_sentence_that_says_it_was_missing():
    c = Conversation("/p", "absent")
    c.bash("tflint --recursive", "Exit code 127\nbash: tflint: command not found", error=True)
    reported = "5. Problem Solving:\n   tflint (run through its Docker image) reported one warning.\n"
    assert _texts(_listed(c, reported), "failed command") == ["tflint --recursive"]
    missing = "4. Errors and fixes:\n   - tflint was not installed: ran it through its Docker image; it reported one warning.\n"
    assert not _texts(_listed(c, missing), "failed command")


def test_a_plans_changes_and_a_runtimes_memory_are_each_runs_result():
    c = Conversation("/p", "plans")
    c.bash("terraform plan -no-color | grep Plan:", "Plan: 17 to add, 0 to change, 17 to destroy.")
    c.bash("terraform plan -no-color | grep Plan:", "Plan: 0 to add, 3 to change, 0 to destroy.")
    c.bash(
        "cabal run app -- +RTS -s -RTS 2>&1 | grep -E 'residency|in use'",
        "   1,912,604,160 bytes maximum residency (31 sample(s))\n 3731 MiB total memory in use (0 MB lost)",
    )
    c.bash(
        "cabal run app -- +RTS -s -RTS 2>&1 | grep -E 'residency|in use'",
        "      61,402,112 bytes maximum residency (9 sample(s))\n  148 MiB total memory in use (0 MB lost)",
    )
    measured = _texts(_listed(c, NOTHING), "measurement")
    for line in (
        "Plan: 17 to add, 0 to change, 17 to destroy.",
        "Plan: 0 to add, 3 to change, 0 to destroy.",
        "3731 MiB total memory in use (0 MB lost)",
        "148 MiB total memory in use (0 MB lost)",
    ):
        assert line in measured, "the run before the change is compared with the one after it"


def test_a_count_said_in_its_magnitudes_word_and_a_choice_reported_made_are_facts_of_the_prose():
    c = Conversation("/p", "prose")
    c.say("The map is never pruned: it holds every event id since start, about 1.2 million after a day.")
    c.say("lintr isn't in the project library, and installing it would change renv.lock, so I've left linting out.")
    listed = _listed(c, NOTHING)
    assert any("about 1.2 million" in text for text in _texts(listed, "measurement"))
    assert any("so I've left linting out" in text for text in _texts(listed, "decision"))
