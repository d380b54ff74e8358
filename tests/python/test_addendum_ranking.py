"""The second part's ranking (restore/brief.py's `addendum_rank`, #46): within its budget, what the
rule is surest the summary dropped comes first, each confidence by kind, requests last; what does
not fit is counted, never cut mid-line, and leaves its room to the shorter ones ranked after it."""

from __future__ import annotations

from precompact.restore import brief, dropped
from support.dropped_dev import Conversation


def _report(c: Conversation, summary: str) -> dropped.Dropped:
    facts, kept = dropped.dropped_facts(c.entries, dropped.Summary(summary, c.cwd))
    return dropped.Dropped("i", 4, summary, "recorded", facts, kept, len(c.entries))


def _session() -> Conversation:
    c = Conversation("/p", "ranking")
    c.user("Find why the billing consumer lags in prod and fix it, please, today if you can.")
    c.user("Never change the topic's partition count, three other teams read it.")
    c.bash(
        "git commit -am 'consumer: 50 records per poll'",
        "[fix/lag 5c1e9a7] consumer: 50 records per poll\n 1 file changed, 1 insertion(+), 1 deletion(-)",
    )
    c.bash("kubectl logs deploy/consumer --since=1h | grep -c Revoke", "41")
    c.say("41 rebalances in the last hour.")
    return c


# The summary keeps the request in its words and the constraint only in part (not its "three").
SUMMARY = (
    "1. Primary Request and Intent:\n   Find why the billing consumer lags in prod and fix it today.\n"
    "   Never change the partition count.\n"
)


def test_a_fact_listed_dropped_comes_before_a_possibly_dropped_one_of_a_more_important_kind_and_requests_come_last():
    report = _report(_session(), SUMMARY)
    listed = {f.text: f.confidence for f in report.facts}
    constraint = "Never change the topic's partition count, three other teams read it."
    assert listed.get(constraint) == dropped.POSSIBLY_DROPPED, listed
    assert listed.get("5c1e9a7") == dropped.DROPPED, listed
    text = brief.addendum(report, 10_000)
    assert text is not None
    said = [line for line in text.splitlines() if line.startswith("- ")]
    at = {fact: next(i for i, line in enumerate(said) if fact in line) for fact in ("5c1e9a7", "partition count")}
    assert at["5c1e9a7"] < at["partition count"], said
    ranks = [brief.addendum_rank(f) for f in report.facts]
    assert sorted(ranks) == [brief.addendum_rank(f) for f in sorted(report.facts, key=brief.addendum_rank)]
    kinds = [line.split(" [", 1)[0].removeprefix("- ") for line in said]
    assert "request" not in kinds or kinds.index("request") == len(kinds) - kinds[::-1].count("request"), kinds


def test_under_a_small_budget_the_surer_facts_are_the_ones_given_and_the_rest_is_counted():
    report = _report(_session(), SUMMARY)
    whole = brief.addendum(report, 10_000)
    assert whole is not None
    lines = [line for line in whole.splitlines() if line.startswith("- ")]
    assert len(lines) >= 2
    # Each fact given is its line whole or, where that did not fit, its line without the detail.
    forms = [(line, line.split(" -> ", 1)[0]) for line in lines]
    fewer = []
    for budget in range(len(whole) - 1, 0, -3):
        small = brief.addendum(report, budget)
        if small is None:
            break
        assert len(small) <= budget
        given = [line for line in small.splitlines() if line.startswith("- ")]
        ranked = [next((form for form in pair if form in given), None) for pair in forms]
        assert given == [form for form in ranked if form is not None], "each once, in the ranking's order"
        if len(given) < len(lines):
            fewer.append(small)
            assert f"{len(lines) - len(given)} more fact(s) not shown: `precompact dropped 4` lists them all." in small
    assert fewer and all("5c1e9a7" in small for small in fewer), "the surest fact is the last one left"


def test_a_fact_whose_whole_line_does_not_fit_what_is_left_is_given_without_its_detail():
    """Its detail (the command a figure came from, an error line) is one `show` away, behind the
    reference the line keeps."""
    report = _report(_session(), SUMMARY)
    whole = brief.addendum(report, 10_000)
    assert whole is not None
    lines = [line for line in whole.splitlines() if line.startswith("- ")]
    cut = lines[-1]
    assert " -> " in cut, lines
    bare = cut.split(" -> ", 1)[0]
    small = brief.addendum(report, len(whole) - 1)
    assert small is not None and len(small) <= len(whole) - 1
    given = [line for line in small.splitlines() if line.startswith("- ")]
    assert given == [*lines[:-1], bare], given
    assert small.splitlines()[-2] == "`precompact recall QUERY` searches everything said before compaction."


def test_a_line_too_long_for_what_is_left_leaves_it_to_the_shorter_ones_after_it():
    """The budget is spent down the ranking: a long fact that does not fit is counted, and the
    shorter facts ranked after it that do fit are given (not cut off with it)."""
    c = Conversation("/p", "long-first")
    c.user("Find why the nightly export is slow and fix it.")
    c.bash(
        "git commit -am 'export: stream rows'",
        "[main 7d3e2f1] export: stream rows\n 1 file changed, 3 insertions(+), 9 deletions(-)",
    )
    c.say(
        "I will stream the rows rather than load the table because the export machine has "
        + "only two gigabytes of memory and the table has grown well past that since the spring, " * 3
        + "which is why the job was killed."
    )
    c.bash("ls exports | wc -l", "4412")
    report = _report(c, "1. Primary Request and Intent:\n   Speed up the nightly export.\n")
    whole = brief.addendum(report, 10_000)
    assert whole is not None
    said = [line for line in whole.splitlines() if line.startswith("- ")]
    longest = max(said, key=len)
    after = said[said.index(longest) + 1 :]
    assert after, said
    small = brief.addendum(report, len(whole) - len(longest) + 40)
    assert small is not None and longest not in small
    assert all(line in small for line in after), small
    assert "1 more fact(s) not shown: `precompact dropped 4` lists them all." in small


def test_the_head_names_where_a_reference_is_shown_and_the_last_line_how_to_search_when_all_fit():
    report = _report(_session(), SUMMARY)
    plain, with_tools = brief.addendum(report, 10_000), brief.addendum(report, 10_000, mcp_tools=True)
    assert plain is not None and with_tools is not None
    assert "[N:E] is the entry's reference for `precompact show REF`):" in plain.splitlines()[0]
    assert "for the MCP tool `show` or `precompact show REF`):" in with_tools.splitlines()[0]
    assert plain.splitlines()[-2] == "`precompact recall QUERY` searches everything said before compaction."
