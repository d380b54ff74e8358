"""The docs' promises (tests/promises.toml): how many each doc makes, how many a test checks,
and those left untested with why; exit 1, listing them, when the map and the docs or tests
disagree (tests/python/test_promises.py fails then too).
Usage: .venv/bin/python scripts/promises.py [--json]"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from support import promises


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    arguments = parser.parse_args()
    problems = promises.problems(REPO)
    counts = promises.summary(REPO)
    if arguments.json:
        print(json.dumps({**counts, "problems": problems}, indent=2))
        return 1 if problems else 0
    print(f"{'doc':<28} {'promises':>8} {'tested':>7} {'untested':>9}")
    for doc, entry in counts["docs"].items():
        note = f"  (excluded: {entry['excluded']})" if "excluded" in entry else ""
        print(f"{doc:<28} {entry['promises']:>8} {entry['tested']:>7} {len(entry['untested']):>9}{note}")
    print(f"{'total':<28} {counts['promises']:>8} {counts['tested']:>7} {counts['untested']:>9}")
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
    sys.exit(main())
