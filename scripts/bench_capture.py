"""SessionStart, PostCompact and SessionEnd hook times around a compaction, from Claude Code's own
--debug-file (runs on its own): one session of the pinned Claude Code CLI against the mock
Messages API of the end-to-end tests, Layers 2 and 3 off (they run in the worker), five runs:
two prompts, `/compact`, two more. `--recover` removes PreCompact and SessionEnd from the
installed hooks, so SessionStart(compact) recovers the savepoint from the transcript. Claude Code
2.1.332 logs no duration for SessionEnd: the time from its shutdown line to the hook's
completion is printed instead (an upper bound)."""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from support import claude_code
from support.projects import new_project

_HOOK = re.compile(
    r"^(\S+) \[DEBUG\] (?:Hooks: )?(\w+:\w+) \[precompact hook\] \w+ with status \d+(?: \((\d+)ms\))?", re.MULTILINE
)


def _at(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)


def main() -> None:
    recover = "--recover" in sys.argv[1:]
    root = Path(tempfile.mkdtemp(prefix="bench-capture-"))
    os.environ.setdefault("XDG_CONFIG_HOME", str(root / "config"))
    project = new_project(root, "project", git_layer=False, chain_layer=False)
    with claude_code.session_in(project, root / "home", claude_code.claude_binary()) as setup:
        if recover:
            settings = project.path / ".claude" / "settings.json"
            installed = json.loads(settings.read_text())
            for event in ("PreCompact", "SessionEnd"):
                del installed["hooks"][event]
            settings.write_text(json.dumps(installed))
        session_id = None
        for number, prompt in enumerate(["Build the parser.", "Keep the API.", "/compact", "Next?", "Then?"]):
            log = root / f"debug-{number}.log"
            session_id = session_id or setup.session.run(prompt, debug_file=log)["session_id"]
            if number:
                setup.session.run(prompt, resume=session_id, debug_file=log)
            text = log.read_text(errors="replace")
            shutdown = [line.split()[0] for line in text.splitlines() if "[uds-messaging] Shutting down" in line]
            for found in _HOOK.finditer(text):
                stamp, hook, ms = found.groups()
                if ms is None and hook.startswith("SessionEnd") and shutdown:
                    ms = f"<= {(_at(stamp) - _at(shutdown[-1])).total_seconds() * 1000:.0f}"
                print(f"{prompt:18} {hook:22} {ms or '?'} ms")


if __name__ == "__main__":
    main()
