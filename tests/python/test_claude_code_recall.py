"""Recall and un-compaction under the real Claude Code CLI (claude_code.py) and a mock Messages
API: after /compact the model finds, through the MCP tool, what only the compacted part held;
after `resurrect --uncompact`, `claude --resume <new id>` sends the model the whole conversation
from before the compaction."""

from __future__ import annotations

import json

import pytest

from support import claude_code
from support.claude_code import Setup, compaction_requests, messages_text, wait_for_worker
from support.projects import new_project

PHRASE = "the flux capacitor misaligned at 88 mph"
REQUEST = "Run the migration. [[plan:migrate]]"
LEFT_OUT = "[precompact] What the compaction summary left out of savepoint"


@pytest.fixture
def setup(tmp_path, claude_binary):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    script = claude_code.Script()
    script.plans["migrate"] = [
        [("Bash", {"command": f"echo 'error: {PHRASE}'; exit 3", "description": "Run the migration"})]
    ]
    # User scope: Claude Code drops a project's permissions.allow entries until the workspace is trusted.
    with claude_code.session_in(
        project, tmp_path / "home", claude_binary, "--scope", "user", "--mcp", script=script
    ) as started:
        yield started


def compacted_session(setup: Setup) -> str:
    session = setup.session
    session_id = session.run(REQUEST)["session_id"]
    session.run("Keep going.", resume=session_id)
    session.run("/compact", resume=session_id)
    assert len(compaction_requests(session.mock)) == 1
    wait_for_worker(setup.project)
    return session_id


def tool_results(request: dict) -> dict[str, str]:
    """tool_use id -> the text of its result, in the request's messages."""
    found = {}
    for message in request["body"].get("messages", []):
        content = message["content"]
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result":
                inner = block.get("content")
                found[block["tool_use_id"]] = (
                    inner if isinstance(inner, str) else "\n".join(b.get("text", "") for b in inner or [])
                )
    return found


def test_after_compaction_the_model_recalls_through_the_mcp_tool_what_only_the_compacted_part_held(setup):
    session, mock = setup.session, setup.session.mock
    user_scope = json.loads((session.home / ".claude.json").read_text())
    assert user_scope["mcpServers"]["precompact"]["args"][-1] == "mcp", "where Claude Code reads user-scope servers"
    session_id = compacted_session(setup)
    setup.script.plans["recall"] = [
        [("ToolSearch", {"query": "select:mcp__precompact__recall"})],
        [("mcp__precompact__recall", {"query": "flux capacitor"})],
    ]
    asked = len(mock.requests)
    session.run("What did the migration say? [[plan:recall]]", resume=session_id)
    after = [r for r in mock.requests[asked:] if r["body"] and r["body"].get("messages")]
    # After compaction the conversation holds it only where precompact quotes what the summary left
    # out (given with this prompt, once), not the tool output itself.
    first = messages_text(after[0])
    assert PHRASE in first.split(LEFT_OUT, 1)[1] and PHRASE not in first.split(LEFT_OUT, 1)[0]
    calls = [
        block
        for r in after
        for m in r["body"]["messages"]
        if m["role"] == "assistant" and isinstance(m["content"], list)
        for block in m["content"]
        if block.get("name") == "mcp__precompact__recall"
    ]
    assert calls, "the mock's recall call went out"
    answers = [tool_results(r).get(calls[0]["id"]) for r in after]
    answer = next(a for a in answers if a is not None)
    assert PHRASE in answer and answer.startswith("[1:"), answer
    assert "savepoint 1 of Trial #1" in answer


def test_resurrect_uncompact_reopens_the_whole_conversation(setup):
    session, mock = setup.session, setup.session.mock
    session_id = compacted_session(setup)
    done = setup.precompact("resurrect", "--uncompact")
    assert done.returncode == 0, done.stderr
    command = done.stdout.splitlines()[-1]
    assert command.startswith("claude --resume ")
    new_id = command.split()[-1]
    assert new_id != session_id
    [original] = (session.home / ".claude" / "projects").glob(f"*/{session_id}.jsonl")
    assert (original.parent / f"{new_id}.jsonl").is_file(), "written where Claude Code keeps this project's sessions"
    session.run("Status?", resume=session_id)
    assert "This session is being continued" in messages_text(mock.requests[-1]), (
        "the original session goes on compacted"
    )
    before = original.read_bytes()
    asked = len(mock.requests)
    session.run("Carry on from before the compaction.", resume=new_id)
    [request] = [r for r in mock.requests[asked:] if r["body"] and r["body"].get("messages")][-1:]
    text = messages_text(request)
    assert REQUEST in text and PHRASE in text and "Keep going." in text, "the pre-compaction messages are sent"
    assert "This session is being continued" not in text, (
        "not the compacted form (the summary may come only in the brief)"
    )
    assert original.read_bytes() == before, "the original session is untouched"


def test_uncompact_after_the_session_went_on_takes_the_compaction_and_the_resume_gets_no_brief(setup):
    session, mock = setup.session, setup.session.mock
    session_id = compacted_session(setup)
    session.run("What next after the compaction?", resume=session_id)
    wait_for_worker(setup.project)
    created = [e for e in setup.index() if e["event"] == "SAVEPOINT_CREATED"]
    assert created[-1]["trigger"] == "session_end" and created[-1]["compact_boundaries"] == 1, (
        "SessionEnd after the compaction saved a newer savepoint that holds the boundary"
    )
    done = setup.precompact("uncompact")
    assert done.returncode == 0, done.stderr
    assert f"savepoint {created[-1]['sequence']}'s conversation" in done.stdout
    new_id = done.stdout.splitlines()[-1].split()[-1]
    asked = len(mock.requests)
    session.run("Carry on from before the compaction.", resume=new_id)
    request = next(r for r in mock.requests[asked:] if r["body"] and r["body"].get("messages"))
    text = messages_text(request)
    assert REQUEST in text and PHRASE in text and "Keep going." in text, "the whole pre-compaction history"
    assert setup.script.summary not in text and "This session is being continued" not in text, "no compaction summary"
    assert "What next after the compaction?" not in text, "only the history before the boundary"
    assert "[precompact]" not in text, "no brief of another savepoint beside the full history"


def test_uncompact_of_a_session_compacted_twice_sends_the_whole_history_and_no_summary(setup):
    session, mock = setup.session, setup.session.mock
    session_id = compacted_session(setup)
    session.run("Now the second part of the work.", resume=session_id)
    session.run("/compact", resume=session_id)
    assert len(compaction_requests(mock)) == 2
    wait_for_worker(setup.project)
    done = setup.precompact("uncompact")
    assert done.returncode == 0, done.stderr
    new_id = done.stdout.splitlines()[-1].split()[-1]
    [written] = (session.home / ".claude" / "projects").glob(f"*/{new_id}.jsonl")
    entries = [json.loads(line) for line in written.read_text().splitlines()]
    assert not [e for e in entries if e.get("subtype") == "compact_boundary" or e.get("isCompactSummary")], (
        "no boundary or summary of either compaction is written into the new session"
    )
    asked = len(mock.requests)
    session.run("Carry on from before the compactions.", resume=new_id)
    request = next(r for r in mock.requests[asked:] if r["body"] and r["body"].get("messages"))
    text = messages_text(request)
    assert REQUEST in text and PHRASE in text and "Keep going." in text, "the history before the first compaction"
    assert "Now the second part of the work." in text, "and between the two"
    assert setup.script.summary not in text and "This session is being continued" not in text, "no compaction summary"
