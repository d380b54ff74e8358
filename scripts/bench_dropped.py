"""How well "what compaction dropped" (restore/dropped.py) finds the facts a compaction summary
left out, on generated sessions with planted facts (tests/python/support/planted.py): each
session plants two facts of every kind, half of them kept by its summary in a form a summariser
uses (verbatim, recased, reflowed, curly quotes, a relative path or a file name, backticks), the
other half dropped, with near misses (the next number, a sibling file, a longer name or URL) in
the summary. With `--paraphrase`, that share of the kept facts is kept in other words instead,
which matching cannot see: those are counted as listed wrongly.

With `--dev`, it scores the hand-labelled development sessions instead
(tests/python/support/dropped_dev.py): an item is right when it names a dropped fact, wrong when it
names only kept ones, noise when it names none; recall per class, precision per listed kind, then
every missed fact and every item that is not right. With `--fresh`, it scores the fresh
labelled sessions (tests/python/support/dropped_fresh.py), written without reading the rule, the
same way. With `--blind`, the blind labelled sessions (tests/python/support/dropped_blind.py),
written without reading the rule or any other labelled set, the same way. With `--ceiling` beside one
of those, against a summary that says nothing: every fact the rule extracts is listed, so the
recall printed is the most the rule's matching could reach (what extraction never finds, no
matching brings back).

recall = planted dropped facts listed / planted dropped facts
precision = planted dropped facts listed / planted facts listed (dropped and kept)

    .venv/bin/python scripts/bench_dropped.py [--sessions 200] [--paraphrase 0.25]
    .venv/bin/python scripts/bench_dropped.py --dev
    .venv/bin/python scripts/bench_dropped.py --fresh
    .venv/bin/python scripts/bench_dropped.py --blind
    .venv/bin/python scripts/bench_dropped.py --fresh --ceiling
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections import Counter
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from precompact.restore import dropped
from support import dropped_dev
from support.planted import session, shown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--paraphrase", type=float, default=0.25, help="share of kept facts said in other words")
    labelled = parser.add_mutually_exclusive_group()
    labelled.add_argument("--dev", action="store_true", help="score the hand-labelled development sessions")
    labelled.add_argument(
        "--fresh", action="store_true", help="score the fresh hand-labelled sessions the rule was not written for"
    )
    labelled.add_argument(
        "--blind", action="store_true", help="score the blind hand-labelled sessions, new to the rule and its sets"
    )
    parser.add_argument(
        "--ceiling",
        action="store_true",
        help="with --dev, --fresh or --blind: score against a summary that says nothing (extraction's recall)",
    )
    args = parser.parse_args()
    if args.ceiling and not (args.dev or args.fresh or args.blind):
        parser.error("--ceiling scores a hand-labelled set: add --dev, --fresh or --blind")
    chosen = "dropped_dev" if args.dev else "dropped_fresh" if args.fresh else "dropped_blind" if args.blind else ""
    if chosen:
        # only the chosen set is imported: the held-out blind set stays unread unless asked for
        hand_labelled(importlib.import_module(f"support.{chosen}").SESSIONS, args.ceiling)
        return
    found, wrong, missed = Counter(), Counter(), Counter()
    sure: dict[str, list[int]] = {}  # confidence -> [planted dropped facts, planted facts] among the items listed
    planted_dropped = planted_kept = paraphrased = wrong_paraphrased = 0
    started = time.perf_counter()
    for seed in range(args.sessions):
        made = session(seed, paraphrase=args.paraphrase)
        listed, _ = dropped.dropped_facts(made.entries, dropped.Summary(made.summary, made.cwd))
        listed_pairs = shown(listed)
        planted = {(fact.kind, fact.text): fact.kept for fact in made.planted}
        for item in listed:
            if (item.kind, item.text) in planted:
                tally = sure.setdefault(item.confidence, [0, 0])
                tally[0] += not planted[(item.kind, item.text)]
                tally[1] += 1
        for fact in made.planted:
            hit = (fact.kind, fact.text) in listed_pairs
            if fact.kept:
                planted_kept += 1
                paraphrased += fact.paraphrased
                wrong[fact.kind] += hit
                wrong_paraphrased += hit and fact.paraphrased
            else:
                planted_dropped += 1
                found[fact.kind] += hit
                missed[fact.kind] += not hit
    elapsed = time.perf_counter() - started
    listed_right, listed_wrong = sum(found.values()), sum(wrong.values())
    print(
        f"{args.sessions} sessions, {planted_dropped} planted facts dropped by the summary, {planted_kept} kept "
        f"({paraphrased} of them in other words); {elapsed:.2f} s"
    )
    print(f"recall    {listed_right / planted_dropped:.3f}  ({listed_right} of {planted_dropped} dropped facts listed)")
    print(
        f"precision {listed_right / max(listed_right + listed_wrong, 1):.3f}  "
        f"({listed_wrong} kept facts listed wrongly, {wrong_paraphrased} of them kept in other words)"
    )
    print("precision by confidence (items that are planted facts): " + ", ".join(by_confidence(sure)))
    print("by kind (dropped listed / dropped, kept listed wrongly):")
    for kind in dropped.KINDS:
        total = found[kind] + missed[kind]
        if total:
            print(f"  {kind:15} {found[kind]}/{total}, {wrong[kind]}")


def hand_labelled(sessions, ceiling: bool) -> None:
    started = time.perf_counter()
    scored = dropped_dev.score(sessions, ceiling=ceiling)
    elapsed = time.perf_counter() - started
    listed = scored.right + scored.wrong + scored.noise
    if ceiling:
        print("against a summary that says nothing: every fact the rule extracts is listed")
    print(
        f"{len(sessions)} sessions, {sum(scored.dropped.values())} dropped facts labelled; "
        f"rule and scoring took {elapsed:.2f} s"
    )
    print(
        f"precision {scored.precision:.3f}  ({scored.right} right of {listed} listed: "
        f"{scored.wrong} kept facts listed, {scored.noise} noise)"
    )
    print(
        f"recall    {scored.recall:.3f}  ({sum(scored.found.values())} of {sum(scored.dropped.values())} dropped facts listed)"
    )
    print(
        "recall by class: " + ", ".join(f"{c} {scored.found.get(c, 0)}/{n}" for c, n in sorted(scored.dropped.items()))
    )
    print("precision by listed kind: " + ", ".join(f"{k} {r}/{n}" for k, (r, n) in sorted(scored.by_kind.items())))
    print("precision by confidence: " + ", ".join(by_confidence(scored.by_confidence)))
    for name, label in scored.missed:
        print(f"  missed  {name}: {label.kind}: {label.says}")
    for name, fact in scored.unwanted:
        print(f"  not right  {name}: {fact.kind} [{fact.confidence}]: {fact.text[:110]!r}")


def by_confidence(tallies: dict[str, list[int]]) -> list[str]:
    """`dropped r/n, possibly dropped r/n`: the share of each confidence's items that are right."""
    return [
        f"{confidence} {tallies.get(confidence, [0, 0])[0]}/{tallies.get(confidence, [0, 0])[1]}"
        for confidence in (dropped.DROPPED, dropped.POSSIBLY_DROPPED)
    ]


if __name__ == "__main__":
    throwaway_home.use()
    main()
