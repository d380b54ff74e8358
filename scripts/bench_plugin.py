"""What the Claude Code plugin's launcher (bin/precompact) costs a hook: in a project without
precompact (where it must cost nothing) and in one with it (against `precompact hook` run
directly), started as hooks.json starts it (the launcher's `/bin/sh` lines find python3 on PATH
and run it isolated). Runs on its own:
`.venv/bin/python scripts/bench_plugin.py [--runs 15]`; prints medians and maxima in ms."""

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

from support import transcript_gen
from support.projects import new_project

LAUNCHER = str(REPO / "bin" / "precompact")


def timed(args: list[str], payload: dict, env: dict, runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run(args, input=json.dumps(payload), capture_output=True, text=True, env=env, check=True)
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times), max(times)


def main() -> None:
    parser = argparse.ArgumentParser(description="the plugin launcher's cost per hook")
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    python3 = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else "python3"
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        os.environ["XDG_CONFIG_HOME"] = str(root / "config")  # this run's approvals, not the user's
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(root),
            "CLAUDE_PLUGIN_DATA": str(root / "data"),
            "XDG_CONFIG_HOME": str(root / "config"),
        }
        plain = root / "plain"
        plain.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=plain, check=True)
        rows = [("python3 -c pass (the floor)", timed([python3, "-c", "pass"], {}, env, runs))]
        for event in ("SessionStart", "PreCompact"):
            rows.append(
                (
                    f"{event}, project without precompact, launcher",
                    timed([LAUNCHER, "plugin-hook"], transcript_gen.payload(event, plain), env, runs),
                )
            )
        project = new_project(root, "project", git_layer=False, chain_layer=False)
        transcript = transcript_gen.generate(root / "session.jsonl", target_bytes=1_000_000).path
        installed = {**env, "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
        cases = {
            "SessionStart (startup), precompact project": transcript_gen.payload(
                "SessionStart", project.path, source="startup"
            ),
            "PreCompact 1 MB, precompact project": transcript_gen.payload("PreCompact", project.path, transcript),
        }
        for name, payload in cases.items():
            rows.append(
                (
                    f"{name}, precompact hook",
                    timed([str(Path(sys.executable).with_name("precompact")), "hook"], payload, installed, runs),
                )
            )
            rows.append((f"{name}, launcher", timed([LAUNCHER, "plugin-hook"], payload, installed, runs)))
        if (root / "data").exists():
            raise SystemExit("the launcher wrote its data folder where nothing was to be prepared")
    print("| hook | median ms | max ms |\n|---|---:|---:|")
    for name, (median, worst) in rows:
        print(f"| {name} | {median:.0f} | {worst:.0f} |")


if __name__ == "__main__":
    throwaway_home.use()
    main()
