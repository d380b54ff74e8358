"""What asking whether OpenCode's session is a subagent's child session costs the hook of
precompact's plugin: `precompact hook --agent opencode` for the user's own session, SessionStart
(`compact`, no savepoint to brief) and PreCompact (the session read whole; saved the first time,
then nothing new to save), this build against another client (`--before`: a `client/` tree,
e.g. `git archive <commit> client`, put on PYTHONPATH), run in turn, each in a fresh process. The database holds the user's session and the
child session of OpenCode 1.18.33's real rows (tests/python/test_opencode_child_session.py).

Usage: .venv/bin/python scripts/bench_opencode_child_check.py --before /tmp/old/client [--runs 25]"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

import test_opencode_child_session as rows
from support.projects import new_project

PRECOMPACT = str(Path(sys.executable).with_name("precompact"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the other build's client/ folder")
    parser.add_argument("--runs", type=int, default=25, help="runs of each build per event")
    arguments = parser.parse_args()
    os.environ["HOME"] = tempfile.mkdtemp(prefix="bench-child-home-")  # precompact's keys and trust stay here
    scratch = Path(tempfile.mkdtemp(prefix="bench-child-"))
    project = new_project(scratch, "proj", git_layer=False, chain_layer=False)
    database = rows.database(scratch / "opencode.db", str(project.path))
    for event in ("SessionStart", "PreCompact"):
        payload = {"hook_event_name": event, "source": "compact", "session_id": rows.PARENT}
        payload |= {"transcript_path": str(database), "cwd": str(project.path)}
        took: dict[str, list[float]] = {"before": [], "this build": []}
        for run in range(arguments.runs * 2):
            which = "before" if run % 2 == 0 else "this build"
            env = {**os.environ, **({"PYTHONPATH": arguments.before} if which == "before" else {})}
            start = time.perf_counter()
            done = subprocess.run(
                [PRECOMPACT, "hook", "--agent", "opencode"],
                input=json.dumps(payload),
                cwd=project.path,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            took[which].append((time.perf_counter() - start) * 1000)
            if done.returncode != 0:
                raise SystemExit(f"{which} {event} exited {done.returncode}: {done.stderr}")
        for which, times in took.items():
            print(
                f"{event:<12} {which:<10} median {statistics.median(times):6.0f} ms "
                f"(min {min(times):.0f}, max {max(times):.0f}, {len(times)} runs)"
            )
    return 0


if __name__ == "__main__":
    throwaway_home.use()
    sys.exit(main())
