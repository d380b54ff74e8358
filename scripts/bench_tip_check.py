"""What holding the tip of your own branch to what logs/ records as pushed costs (review12b F1,
F4: `verifier.team.tip_problem`, run by `flush`, the worker after each savepoint, `verify` and
`status --remote`), and what `restore`'s test for a rollback costs (one `git log` of the commits
adding snapshots, `team._rolled_back`'s trigger, and `team.rollback` whole on an intact tip: that
log and the tip's chain checked, each line's signature), over `--savepoints` savepoints, each committed
encrypted and pushed in a commit of its own. `own_branch_problem` is timed in turn without the
savepoints (the check skipped: what it cost before) and with them, `--rounds` times each, in
process, after one warm-up of each.
Usage: .venv/bin/python scripts/bench_tip_check.py [--savepoints 200] [--rounds 7] [--json]"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from precompact import api
from precompact.config import settings as configuration
from precompact.local import savepoint_log, snapshot
from precompact.remote import gitstore
from precompact.verifier import signed, team
from support.projects import new_project
from support.transcript_gen import generate


def progress(text: str) -> None:
    print(f"bench: {text}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--savepoints", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="precompact-bench-tip-") as scratch:
        root = Path(scratch)
        os.environ["XDG_CONFIG_HOME"] = str(root / "config")
        os.environ["XDG_STATE_HOME"] = str(root / "state")
        project = new_project(root, "project", git_layer=True, chain_layer=False, instance="Bench #1")
        lines = generate(root / "whole.jsonl", 2_000_000, project=project.path).path.read_bytes().splitlines(True)
        transcript = root / "session.jsonl"
        loaded = configuration.load(project.path)
        for step in range(1, args.savepoints + 1):
            if step % 25 == 0:
                progress(f"savepoint {step}/{args.savepoints}, each committed and pushed")
            transcript.write_bytes(b"".join(lines[: len(lines) * step // args.savepoints]))
            snapshot.create_savepoint(
                snapshot.Settings.of(loaded), snapshot.Session("bench", str(transcript), str(project.path), "auto")
            )
            outcome = api.flush(loaded)
            assert not outcome.layer_2_problems, outcome.layer_2_problems
        target = gitstore.Target.of(loaded)
        repo = gitstore.open_repository(target)
        gitstore.fetch(repo, target)
        keys = team.your_keys(loaded, signed.configured_key(loaded))
        pushed = savepoint_log.savepoints(loaded.logs, loaded.instance)
        tip = gitstore.remote_tip(repo, target)
        assert tip is not None

        def once(with_pushed: bool) -> float:
            began = time.perf_counter()
            found = team.own_branch_problem(
                repo,
                target,
                loaded.instance,
                keys,
                pushed if with_pushed else [],
                gitstore.index_copy_at_tip(repo, target),
            )
            elapsed = time.perf_counter() - began
            assert found is None, found
            return elapsed

        def trigger() -> float:
            began = time.perf_counter()
            gitstore.commits_adding_snapshots(repo, tip)
            return time.perf_counter() - began

        read = team.index_at(repo, target, tip)

        def rollback() -> float:
            began = time.perf_counter()
            found = team.rollback(
                repo, target, tip, loaded.instance, keys, read, gitstore.commits_adding_snapshots(repo, tip)
            )
            elapsed = time.perf_counter() - began
            assert found is None, found
            return elapsed

        once(False), once(True), trigger(), rollback()
        without, with_, log, whole = [], [], [], []
        for _ in range(args.rounds):
            without.append(once(False))
            with_.append(once(True))
            log.append(trigger())
            whole.append(rollback())
    results = {
        "savepoints": args.savepoints,
        "rounds": args.rounds,
        "own_branch_problem_without_ms": round(statistics.median(without) * 1000, 1),
        "own_branch_problem_with_ms": round(statistics.median(with_) * 1000, 1),
        "commits_adding_snapshots_ms": round(statistics.median(log) * 1000, 1),
        "rollback_ms": round(statistics.median(whole) * 1000, 1),
        "load": os.getloadavg(),
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(
        f"- {args.savepoints} savepoints, median of {args.rounds} alternating rounds: own_branch_problem "
        f"{results['own_branch_problem_without_ms']} ms without the tip check, {results['own_branch_problem_with_ms']} ms with it; "
        f"restore's rollback test (commits adding snapshots) {results['commits_adding_snapshots_ms']} ms, "
        f"team.rollback whole {results['rollback_ms']} ms; load {results['load']}"
    )


if __name__ == "__main__":
    throwaway_home.use()
    main()
