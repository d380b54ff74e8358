"""The second part's ranking (restore/brief.py's `addendum_rank`, #46): within its budget, what the
rule is surest the summary dropped comes first, each confidence by kind, requests last; what does
not fit is counted, never cut mid-line."""

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
    small = brief.addendum(report, len(whole) - 1)
    assert small is not None
    given = [line for line in small.splitlines() if line.startswith("- ")]
    assert given == lines[: len(given)], "a prefix of the ranking, each line whole"
    assert "5c1e9a7" in small
    assert f"{len(lines) - len(given)} more fact(s) not shown: `precompact dropped 4` lists them all" in small
