"""The SessionStart hook's time in the real Claude Code flow (part of scripts/bench; also runs on
its own): sessions of the pinned Claude Code CLI against the mock Messages API of the end-to-end
tests, with the hooks of `precompact install` and a precompact-localnet, each session doing some
work, a resume, `/compact` and a resume after it. Claude Code's --debug-file names every hook's
run time ("Hooks: SessionStart:compact [...] finished with status 0 (N ms)"); those are the
numbers. `--precompact PATH` measures another build of precompact (e.g. an older checkout)."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from support import claude_code
from support.commands import PRECOMPACT
from support.localnet import LocalnetProcess
from support.projects import fund, new_project

_HOOK_TIME = re.compile(r"Hooks: SessionStart:(\w+) \[[^\]]*\] finished with status \d+ \((\d+)ms\)")


def hook_times(debug_file: Path) -> list[tuple[str, float]]:
    """(source, seconds) of each SessionStart hook run a --debug-file records."""
    return [(m.group(1), int(m.group(2)) / 1000) for m in _HOOK_TIME.finditer(debug_file.read_text(errors="replace"))]


def flow(root: Path, runs: int, precompact: str = PRECOMPACT) -> dict:
    """SessionStart seconds by moment: resume before any savepoint, at compaction, resume after."""
    binary = claude_code.claude_binary()
    node = LocalnetProcess(root)
    url = node.start()
    times: dict[str, list[float]] = {
        "resume before the first savepoint": [],
        "at compaction": [],
        "resume after compaction": [],
    }
    try:
        for run in range(runs):
            print(f"bench: Claude Code flow, run {run + 1}/{runs}", file=sys.stderr, flush=True)
            project = new_project(root, f"cc{run}", git_layer=True, chain_layer=True, cluster=url, instance="Bench #1")
            fund(url, project.authority())
            home = root / f"cc{run}-home"
            home.mkdir()
            subprocess.run(
                [precompact, "install"],
                cwd=project.path,
                env={"HOME": str(home), "PATH": "/usr/bin:/bin", "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"]},
                check=True,
                capture_output=True,
            )
            script = claude_code.Script(
                plans={
                    "work": [
                        [("Read", {"file_path": str(project.path / "README")})],
                        [("Write", {"file_path": str(project.path / "notes.md"), "content": "notes\n"})],
                    ]
                }
            )
            (project.path / "README").write_text("A project.\n")
            mock = claude_code.MockAnthropic(script).start()
            try:
                # The hooks run `precompact` from PATH: this one.
                session = claude_code.Session(
                    binary,
                    home,
                    project.path,
                    mock,
                    env={"PATH": f"{Path(precompact).parent}{os.pathsep}{os.environ['PATH']}"},
                )
                session_id = session.run("Take notes. [[plan:work]]")["session_id"]
                debug = [root / f"cc{run}-{step}.log" for step in ("resume", "compact", "after")]
                session.run("Add more detail.", resume=session_id, debug_file=debug[0])
                session.run("/compact", resume=session_id, debug_file=debug[1])
                session.run("Continue.", resume=session_id, debug_file=debug[2])
            finally:
                mock.stop()
            times["resume before the first savepoint"] += [
                t for source, t in hook_times(debug[0]) if source == "resume"
            ]
            times["at compaction"] += [t for source, t in hook_times(debug[1]) if source == "compact"]
            times["resume after compaction"] += [t for source, t in hook_times(debug[2]) if source == "resume"]
            _wait_for_worker(project.path)
    finally:
        node.stop()
    return {
        moment: {"median": statistics.median(values), "max": max(values), "runs": len(values)}
        for moment, values in times.items()
        if values
    }


def _wait_for_worker(path: Path) -> None:
    """Leaves no worker of this run behind (it would compete with the next run)."""
    subprocess.run(["flock", str(path / "logs" / "precompact-worker.lock"), "true"], check=True, timeout=300)


def main() -> None:
    parser = argparse.ArgumentParser(description="SessionStart in the real Claude Code flow")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--precompact", default=PRECOMPACT, help="the precompact executable whose hooks are installed")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="precompact-bench-cc-"))
    os.environ["XDG_CONFIG_HOME"] = str(root / "config")  # the projects' approvals go with them
    try:
        print(json.dumps(flow(root, args.runs, args.precompact), indent=2))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    throwaway_home.use()
    main()
