"""The docs' promises (tests/promises.toml): how many each doc makes, how many a test checks,
and those left untested with why; how many doc sentences look like promises and how many of
them the map holds; exit 1, listing them, when the map and the docs or tests disagree, or a
sentence that looks like a promise is new and unmapped (tests/python/test_promises.py fails
then too). `--candidates` lists every unmapped one, the baseline's included.
Usage: .venv/bin/python scripts/promises.py [--json] [--candidates]"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from support import promises


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    parser.add_argument(
        "--candidates", action="store_true", help="list every unmapped sentence that looks like a promise"
    )
    arguments = parser.parse_args()
    unmapped, sentences = promises.unmapped(REPO)
    known = promises.baseline(REPO)
    new = [c for c in unmapped if c.fingerprint not in known]
    problems = promises.problems(REPO) + [
        f"{c.doc}: {c.sentence[:160]!r} looks like a promise and no entry of tests/promises.toml holds it" for c in new
    ]
    counts = promises.summary(REPO)
    sentences = {**sentences, "in_baseline": len(unmapped) - len(new), "new": len(new)}
    if arguments.json:
        print(json.dumps({**counts, "sentences": sentences, "problems": problems}, indent=2))
        return 1 if problems else 0
    if arguments.candidates:
        for c in unmapped:
            print(f"{c.fingerprint}  {c.doc}: {c.sentence}")
        return 1 if new else 0
    print(f"{'doc':<28} {'promises':>8} {'tested':>7} {'untested':>9} {'prose':>6}")
    for doc, entry in counts["docs"].items():
        note = f"  (excluded: {entry['excluded']})" if "excluded" in entry else ""
        print(
            f"{doc:<28} {entry['promises']:>8} {entry['tested']:>7} {len(entry['untested']):>9} "
            f"{entry['prose']:>6}{note}"
        )
    print(f"{'total':<28} {counts['promises']:>8} {counts['tested']:>7} {counts['untested']:>9} {counts['prose']:>6}")
    print(
        f"\nSentences that look like promises: {sentences['flagged']}; held by an entry {sentences['mapped']}, "
        f"held by a [[prose]] entry (not a promise) {sentences['prose']}, "
        f"in a section said untested or history {sentences['excused']}, unmapped {sentences['unmapped']} "
        f"({sentences['in_baseline']} in {promises.CANDIDATES_BASELINE}, {sentences['new']} new)"
    )
    untested = [(doc, item) for doc, entry in counts["docs"].items() for item in entry["untested"]]
    if untested:
        print("\nPromises without a test:")
        for doc, item in untested:
            print(f"- {doc}: {item['says']!r}\n    {item['why']}")
    if problems:
        print(f"\nThe map disagrees with the docs or tests ({len(problems)}):", file=sys.stderr)
        for problem in problems:
            print(f"- {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    throwaway_home.use()
    sys.exit(main())
