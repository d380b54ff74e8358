"""The brief in two parts under the real Claude Code CLI (claude_code.py) and a mock Messages API
(issue 46): after a real `/compact` whose summary leaves a failure out, the request that follows
the next prompt carries that failure, quoted with its reference, and it is not added again."""

from __future__ import annotations

import pytest

from support import claude_code
from support.claude_code import compaction_requests, messages_text, wait_for_worker
from support.projects import new_project

FAILURE = "boom: header line 3 has no colon"
ADDENDUM_START = "[precompact] What the compaction summary left out of savepoint"


@pytest.fixture
def setup(tmp_path, claude_binary):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    script = claude_code.Script(summary="The user is building a header parser; the parser module exists.")
    script.plans["work"] = [
        [("Write", {"file_path": str(project.path / "parser.py"), "content": "def parse(t):\n    return t\n"})],
        [("Bash", {"command": f"python3 -c 'import sys; sys.exit(\"{FAILURE}\")'", "description": "Run it"})],
    ]
    with claude_code.session_in(project, tmp_path / "home", claude_binary, script=script) as started:
        yield started


def test_after_a_real_compact_the_next_prompt_carries_what_the_summary_left_out_once(setup):
    session, mock = setup.session, setup.session.mock
    session_id = session.run("Please build the header parser. [[plan:work]]")["session_id"]
    session.run("/compact", resume=session_id)
    assert len(compaction_requests(mock)) == 1
    assert FAILURE not in setup.script.summary
    wait_for_worker(setup.project)  # the worker PostCompact started has computed the addendum
    pending = setup.project.logs / "precompact-pending" / f"{session_id}.json"
    assert pending.exists(), (setup.project.logs / "precompact-worker.log").read_text()

    asked = len(mock.requests)
    session.run("What next?", resume=session_id)
    after = mock.requests[asked:]
    first = messages_text(after[0])
    assert first.count(ADDENDUM_START) == 1, first[-3000:]
    assert FAILURE in first.split(ADDENDUM_START, 1)[1] and "- failed command [" in first
    assert not pending.exists(), "claimed and removed: given once"
    session.run("And after that?", resume=session_id)
    # Claude Code keeps hook context in the conversation: the later request carries that one copy,
    # and no second.
    assert messages_text(mock.requests[-1]).count(ADDENDUM_START) == 1
    index = setup.index()
    assert [e["event"] for e in index].count("COMPACT_SUMMARY") == 1


def test_a_compaction_whose_savepoint_stays_queued_through_its_hooks_is_briefed_with_the_next_prompt(setup):
    """The index lock held by another process through the session's first turn and its whole
    `/compact` (fix12c): the savepoint is queued (SessionEnd's, then PreCompact's of the same
    history), SessionStart(`compact`) gives the fixed words and owes the brief, PostCompact
    queues the summary; once the lock is free the worker writes them, and the request after the
    next prompt carries the savepoint's brief (with what the summary left out), once."""
    from test_hook_lock_wait import index_lock

    session, mock = setup.session, setup.session.mock
    holder = index_lock(setup.project)
    try:
        session_id = session.run("Please build the header parser. [[plan:work]]")["session_id"]
        session.run("/compact", resume=session_id)
        owed = setup.project.logs / "precompact-pending" / f"{session_id}.brief"
        assert owed.exists(), "SessionStart(compact) gave the fixed words and owes the brief"
        assert not (setup.project.logs / "precompact-savepoint.jsonl").exists(), "queued, nothing written"
    finally:
        holder.stop()
    wait_for_worker(setup.project)  # writes the savepoint and the summary, computes the addendum
    asked = len(mock.requests)
    session.run("What next?", resume=session_id)
    first = messages_text(mock.requests[asked])
    assert "This compaction's savepoint is not written yet" in first, "the words SessionStart gave"
    assert first.count("[precompact] Restored from savepoint 1 of") == 1, first[-3000:]
    assert first.count(ADDENDUM_START) == 1 and FAILURE in first.split(ADDENDUM_START, 1)[1]
    assert not owed.exists()
    session.run("And after that?", resume=session_id)
    assert messages_text(mock.requests[-1]).count("[precompact] Restored from savepoint 1 of") == 1
    delivered = [e for e in setup.index() if e["event"] == "BRIEF_DELIVERED"]
    assert [(e["sequence"], e["session_id"], e["source"]) for e in delivered] == [(1, session_id, "compact")]


def test_a_session_resumed_while_its_compaction_s_savepoint_is_queued_is_never_briefed_another_s_as_the_newest(
    setup,
):
    """review12d F3 under the real CLI: another session's compaction made savepoint 1; this
    session's `/compact` is queued (the index held by another process), and each `claude -p
    --resume` fires SessionStart(`resume`). While the savepoint is queued, the resume is told so
    and given no brief of savepoint 1 as the newest state; once the worker wrote it, the next resume
    is given savepoint 2's brief, once, and recorded as given only that."""
    from support.projects import trust
    from test_hook_lock_wait import index_lock

    session, mock = setup.session, setup.session.mock
    config = setup.project.path / ".precompact.toml"  # no SessionEnd savepoint: only compactions make them
    config.write_text(config.read_text().replace("session_end = true", "session_end = false"))
    trust(setup.project.path)
    other = session.run("Please build the header parser. [[plan:work]]")["session_id"]
    session.run("/compact", resume=other)
    wait_for_worker(setup.project)
    assert [(e["event"], e["sequence"]) for e in setup.index() if e["event"] == "SAVEPOINT_CREATED"] == [
        ("SAVEPOINT_CREATED", 1)
    ]
    mine = session.run("Now make the parser strict about colons.")["session_id"]
    holder = index_lock(setup.project)
    try:
        session.run("/compact", resume=mine)
        asked = len(mock.requests)
        session.run("What next?", resume=mine)
        resumed = messages_text(mock.requests[asked])
        assert "The newest savepoint is not written yet" in resumed, resumed[-3000:]
        assert "Restored from savepoint" not in resumed, "no older savepoint briefed as the newest"
    finally:
        holder.stop()
    wait_for_worker(setup.project)
    asked = len(mock.requests)
    session.run("And now?", resume=mine)
    after = messages_text(mock.requests[asked])
    assert after.count("[precompact] Restored from savepoint 2 of") == 1, after[-3000:]
    assert "Restored from savepoint 1 of" not in after
    delivered = [
        (e["sequence"], e["source"])
        for e in setup.index()
        if e["event"] == "BRIEF_DELIVERED" and e["session_id"] == mine
    ]
    assert delivered == [(2, "resume")]
