"""The running half of scripts/reliability (see there): each fault scenario of
tests/python/support/fault_trials.py at scale, then a Markdown table, then redaction's rates on the
planted and the clean corpus. Exits 1 if any trial failed or lost a savepoint, or a planted
secret survived."""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from precompact.transcript.redact import Redactor
from support import (
    fault_trials,
    secret_corpus,
)
from support.localnet import LocalnetProcess


def progress(text: str) -> None:
    print(f"reliability: {text}", file=sys.stderr, flush=True)


def concurrent(root: Path, hooks: int) -> fault_trials.Tally:
    node = LocalnetProcess(root)
    try:
        return fault_trials.concurrent_hooks(root, node.start(), hooks)
    finally:
        node.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=200, help="kill -9 trials per crash scenario (default 200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--redaction-only", action="store_true", help="only redaction's rates on the planted and the clean corpus"
    )
    args = parser.parse_args()
    if args.trials < 1:
        parser.error("--trials must be at least 1")
    rng = random.Random(args.seed)
    restarts = max(1, args.trials // 10)
    scenarios = [
        ("kill -9 during Layer 1", lambda root: fault_trials.crash_layer_1(root, args.trials, rng)),
        ("kill -9 during Layer 2", lambda root: fault_trials.crash_layer_2(root, args.trials, rng)),
        ("20 concurrent hooks", lambda root: concurrent(root, 20)),
        ("offline across 10 savepoints", lambda root: fault_trials.offline_then_flush(root, 10)[0]),
        (f"localnet killed mid-post ×{restarts}", lambda root: fault_trials.localnet_restart(root, restarts, rng)),
    ]
    tallies = []
    with tempfile.TemporaryDirectory(prefix="precompact-reliability-") as scratch:
        os.environ["XDG_CONFIG_HOME"] = str(Path(scratch) / "config")  # the trials' approvals go with them
        for number, (name, run) in enumerate([] if args.redaction_only else scenarios):
            progress(f"{name} …")
            root = Path(scratch) / str(number)
            root.mkdir()
            began = time.monotonic()
            tally = run(root)
            progress(
                f"{name}: {tally.trials} trials, {tally.failed_trials} failed, {tally.lost} lost, {time.monotonic() - began:.0f} s"
            )
            for failure in tally.failures[:20]:
                progress(f"  {failure}")
            tallies.append(tally)
    if tallies:
        print("| scenario | trials | failures | savepoints lost |")
        print("|---|---:|---:|---:|")
        for tally in tallies:
            print(f"| {tally.scenario} | {tally.trials} | {tally.failed_trials} | {tally.lost} |")
        print()
    progress("redaction: planted corpus (in each shape the agents write it) and clean corpus …")
    missed = {
        shape: [
            p.format
            for p in secret_corpus.SECRETS
            if secret_corpus.leaked(p, Redactor().redact({"text": written(p.text)})["text"])
        ]
        for shape, written in secret_corpus.SHAPES.items()
    }
    total = len(secret_corpus.SECRETS)
    clean = secret_corpus.false_positives()
    for shape, names in missed.items():
        caught = total - len(names)
        print(f"Secrets redacted {shape}: {caught}/{total} formats ({caught / total:.1%}).")
        for name in names:
            print(f"  missed: {name}")
    print(
        f"False positives: {len(clean.changed)} of {clean.lines:,} lines ({clean.rate:.4%}) of real code and prose ({clean.bytes / 1e6:.1f} MB)."
    )
    for line in clean.changed:
        print(f"  {line[:120]}")
    return 1 if any(t.failures or t.lost for t in tallies) or any(missed.values()) else 0


if __name__ == "__main__":
    throwaway_home.use()
    sys.exit(main())
