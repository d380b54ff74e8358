"""What starting precompact isolated costs a hook (docs/security.md, the agent's environment):
each installed command line in its older form and in the form `install` now writes, run in turn
through `/bin/sh -c` as the agent runs them, on the hooks that fire most (UserPromptSubmit with
nothing pending, in a precompact project; SessionStart outside one), and the plugin's launcher
outside a project (older: `#!/usr/bin/env python3` on the launcher; now: `/bin/sh` finding a
python3 outside the project, then `python3 -I`). The difference is taken pair by pair, so it
holds while a shared machine's speed drifts. CPU is user + system as the kernel accounts the
finished process and its children (`os.wait4`), wall is start to exit.

Usage: .venv/bin/python scripts/bench_isolated.py [--runs 30] [--json]"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from support.commands import PRECOMPACT, installed_command
from support.process_cost import Cost, run
from support.projects import new_project
from support.transcript_gen import payload

LAUNCHER = REPO / "bin" / "precompact"


def pairs(older: str, now: str, stdin: bytes, cwd: Path, runs: int) -> dict:
    """`older` and `now` (shell command lines) run in turn `runs` times, after a warm-up of each."""
    shell = ["/bin/sh", "-c"]
    run([*shell, older], stdin, cwd)
    run([*shell, now], stdin, cwd)
    before: list[Cost] = []
    after: list[Cost] = []
    for _ in range(runs):
        before.append(run([*shell, older], stdin, cwd))
        after.append(run([*shell, now], stdin, cwd))

    def ms(values) -> float:
        return round(statistics.median(values) * 1000, 1)

    return {
        "older_cpu_ms": ms(c.cpu for c in before),
        "now_cpu_ms": ms(c.cpu for c in after),
        "cpu_difference_ms": ms(a.cpu - b.cpu for a, b in zip(after, before, strict=True)),
        "older_wall_ms": ms(c.wall for c in before),
        "now_wall_ms": ms(c.wall for c in after),
        "wall_difference_ms": ms(a.wall - b.wall for a, b in zip(after, before, strict=True)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="the cost of starting precompact isolated")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    older = shlex.quote(str(Path(PRECOMPACT).resolve()))
    now = shlex.join(installed_command())
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        os.environ["XDG_CONFIG_HOME"] = str(root / "config")  # this run's approvals, not the user's
        os.environ["XDG_STATE_HOME"] = str(root / "state")
        os.environ["HOME"] = str(root)
        os.environ["PATH"] = "/usr/bin:/bin"  # as an agent started outside precompact's environment has it
        project = new_project(root, "project", git_layer=False, chain_layer=False)
        outside = root / "plain"
        outside.mkdir()
        prompt = json.dumps({**payload("SessionStart", project.path), "hook_event_name": "UserPromptSubmit"}).encode()
        start = json.dumps(payload("SessionStart", outside, source="startup")).encode()
        results["UserPromptSubmit, nothing pending, precompact project"] = pairs(
            f"{older} hook", f"{now} hook", prompt, project.path, options.runs
        )
        results["SessionStart startup, outside a project"] = pairs(
            f"{older} hook", f"{now} hook", start, outside, options.runs
        )
        launcher = shlex.quote(str(LAUNCHER))
        results["plugin launcher, SessionStart outside a project"] = pairs(
            f"/usr/bin/env python3 {launcher} plugin-hook", f"{launcher} plugin-hook", start, outside, options.runs
        )
    if options.json:
        print(json.dumps(results, indent=2))
        return
    print("| hook | older CPU / wall ms | now CPU / wall ms | now − older, pair by pair: CPU / wall ms |")
    print("|---|---:|---:|---:|")
    for name, r in results.items():
        print(
            f"| {name} | {r['older_cpu_ms']} / {r['older_wall_ms']} | {r['now_cpu_ms']} / {r['now_wall_ms']} "
            f"| {r['cpu_difference_ms']:+} / {r['wall_difference_ms']:+} |"
        )


if __name__ == "__main__":
    throwaway_home.use()
    main()
