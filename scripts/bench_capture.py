"""SessionStart, PreCompact, PostCompact and SessionEnd hook times, from Claude Code's own debug
log (runs on its own): sessions of the pinned Claude Code CLI against the mock Messages API of the
end-to-end tests, Layers 2 and 3 off (they run in the worker). Each run: two prompts, `/compact`,
two more, every one a `claude -p` that ends (so SessionEnd fires each time; the first prompt's is
a session that never compacted). `--recover` removes PreCompact and SessionEnd from the installed
hooks, so SessionStart(compact) recovers the savepoint from the transcript.

Claude Code 2.1.332 logs a duration only for SessionStart ("Hooks: SessionStart:compact [...]
finished with status 0 (N ms)"). For the others it logs the completion ("SessionEnd:other [...]
completed with status 0"); with CLAUDE_CODE_DEBUG_LOG_LEVEL=verbose it also logs when it starts
looking up an event's hooks ("Getting matching hook commands for SessionEnd with query: other"),
and the time between the two is the hook's (its lookup, a few ms, included).

    .venv/bin/python scripts/bench_capture.py [--runs N] [--recover]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
from datetime import datetime
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from support import claude_code
from support.projects import new_project

_STARTED = re.compile(r"^(\S+) \[VERBOSE\] Getting matching hook commands for (\w+) with query: (\w+)$", re.MULTILINE)
_DONE = re.compile(
    r"^(\S+) \[DEBUG\] (?:Hooks: )?(\w+):(\w+) \[precompact hook\] \w+ with status \d+(?: \((\d+)ms\))?", re.MULTILINE
)
PROMPTS = ("Build the parser.", "Keep the API.", "/compact", "Next?", "Then?")


def _at(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)


def hook_times(debug_log: str) -> list[tuple[str, float]]:
    """("Event:query", seconds) of each precompact hook run the debug log records: Claude Code's
    own duration when it gives one, else from its lookup of the event's hooks to their end."""
    started = {(m.group(2), m.group(3)): _at(m.group(1)) for m in _STARTED.finditer(debug_log)}
    found = []
    for stamp, event, query, ms in (m.groups() for m in _DONE.finditer(debug_log)):
        if ms is not None:
            found.append((f"{event}:{query}", int(ms) / 1000))
        elif (event, query) in started:
            found.append((f"{event}:{query}", (_at(stamp) - started[(event, query)]).total_seconds()))
    return found


def run(root: Path, recover: bool) -> list[tuple[str, str, float]]:
    """(prompt, hook, seconds) of one session."""
    project = new_project(root, "project", git_layer=False, chain_layer=False)
    times = []
    with claude_code.session_in(project, root / "home", claude_code.claude_binary()) as setup:
        setup.session.env["CLAUDE_CODE_DEBUG_LOG_LEVEL"] = "verbose"
        if recover:
            settings = project.path / ".claude" / "settings.json"
            installed = json.loads(settings.read_text())
            for event in ("PreCompact", "SessionEnd"):
                del installed["hooks"][event]
            settings.write_text(json.dumps(installed))
        session_id = None
        for number, prompt in enumerate(PROMPTS):
            log = root / f"debug-{number}.log"
            if session_id is None:
                session_id = setup.session.run(prompt, debug_file=log)["session_id"]
            else:
                setup.session.run(prompt, resume=session_id, debug_file=log)
            times += [(prompt, hook, seconds) for hook, seconds in hook_times(log.read_text(errors="replace"))]
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description="precompact's hook times in Claude Code's own debug log")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--recover", action="store_true", help="without PreCompact and SessionEnd hooks")
    args = parser.parse_args()
    top = Path(tempfile.mkdtemp(prefix="bench-capture-"))
    os.environ.setdefault("XDG_CONFIG_HOME", str(top / "config"))
    os.environ.setdefault("XDG_STATE_HOME", str(top / "state"))
    samples: dict[tuple[str, str], list[float]] = {}
    try:
        for number in range(args.runs):
            print(f"bench: run {number + 1}/{args.runs}", file=sys.stderr, flush=True)
            root = top / f"run{number}"
            root.mkdir()
            for prompt, hook, seconds in run(root, args.recover):
                samples.setdefault((prompt, hook), []).append(seconds)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    print(f"{'prompt':18} {'hook':22} {'median':>8} {'max':>8}  runs")
    for (prompt, hook), values in samples.items():
        print(f"{prompt:18} {hook:22} {statistics.median(values):7.3f}s {max(values):7.3f}s  {len(values)}")


if __name__ == "__main__":
    throwaway_home.use()
    main()
