"""`precompact dropped` when Claude Code's PostCompact hook did not run (#41): the summary is the
entry the real Claude Code (pinned in support/claude_code.py) writes after its compaction
boundary, found in the savepoint its SessionEnd made afterwards. Run against a mock Messages API
whose compaction summary leaves a fact out."""

from __future__ import annotations

import json

from precompact.restore import dropped
from support import claude_code
from support.claude_code import Script
from support.commands import precompact
from support.projects import new_project

DROPPED_FACT = "port 8417"
SUMMARY = "The user is building a parser service; the header format is settled and work continues."


def test_without_postcompact_dropped_reads_the_summary_claude_code_wrote_into_a_later_savepoint(
    tmp_path, claude_binary
):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    with claude_code.session_in(project, tmp_path / "home", claude_binary, script=Script(summary=SUMMARY)) as setup:
        settings = project.path / ".claude" / "settings.json"
        installed = json.loads(settings.read_text())
        del installed["hooks"]["PostCompact"]  # as if the hook had failed to run
        settings.write_text(json.dumps(installed))
        session_id = setup.session.run(
            f"Run the parser service on {DROPPED_FACT}, because the ops firewall only opens that one."
        )["session_id"]
        setup.session.run("/compact", resume=session_id)
        setup.session.run("What next?", resume=session_id)
    index = setup.index()
    assert not [e for e in index if e["event"] == "COMPACT_SUMMARY"], "no summary recorded by a hook"

    latest = precompact(project.path, "dropped", "--json")
    assert latest.returncode == 0, latest.stderr
    report = json.loads(latest.stdout)
    assert report["summary_source"] == dropped.AFTER_BOUNDARY.format(report["sequence"])
    assert SUMMARY in report["summary"], "the summary Claude Code wrote, whatever it wraps it in"
    assert any(DROPPED_FACT in item["text"] for item in report["dropped"]), report["dropped"]

    compacted = next(e["sequence"] for e in index if e["event"] == "SAVEPOINT_CREATED")
    earlier = json.loads(precompact(project.path, "dropped", str(compacted), "--json").stdout)
    assert earlier["summary_source"].startswith("the summary entry"), earlier["summary_source"]
    assert SUMMARY in earlier["summary"]
