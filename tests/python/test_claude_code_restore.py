"""The real Claude Code (pinned in support/claude_code.py) compacts a session of a project whose
git layer is on, against a mock Messages API whose summary leaves a fact out: PostCompact's
summary goes to the remote signed with its savepoint, and `precompact restore` on a second
machine gives `dropped` that summary, so it lists the fact the summary left out there too."""

from __future__ import annotations

import json

from precompact.restore import dropped
from support import claude_code
from support.claude_code import Script
from support.commands import precompact
from support.projects import new_project
from test_restore_summary import _second_machine

DROPPED_FACT = "port 8417"
SUMMARY = "The user is building a parser service; the header format is settled and work continues."


def test_claude_codes_compaction_summary_comes_back_with_its_savepoint_on_a_second_machine(tmp_path, claude_binary):
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    with claude_code.session_in(project, tmp_path / "home", claude_binary, script=Script(summary=SUMMARY)) as setup:
        session_id = setup.session.run(
            f"Run the parser service on {DROPPED_FACT}, because the ops firewall only opens that one."
        )["session_id"]
        setup.session.run("/compact", resume=session_id)
    assert setup.precompact("flush").returncode == 0
    index = setup.index()
    [recorded] = [e for e in index if e["event"] == "COMPACT_SUMMARY"]
    assert SUMMARY in recorded["summary"]
    assert [e["sequence"] for e in index if e["event"] == "SUMMARY_SIGNED"] == [recorded["sequence"]]

    clone, env = _second_machine(project, tmp_path)
    restored = precompact(clone, "restore", "--json", env=env)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert json.loads(restored.stdout)["summaries"] == 1
    there = precompact(clone, "dropped", str(recorded["sequence"]), "--json", env=env)
    assert there.returncode == 0, there.stderr
    report = json.loads(there.stdout)
    assert (report["summary"], report["summary_source"]) == (recorded["summary"], dropped.RECORDED)
    assert any(DROPPED_FACT in item["text"] for item in report["dropped"]), report["dropped"]
