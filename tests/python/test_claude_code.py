"""precompact under the real Claude Code CLI (npm `@anthropic-ai/claude-code`, pinned in
claude_code.py) talking to a mock Messages API: what Claude Code actually sends the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from precompact.config.settings import DEFAULT_COMPACT_ADVICE
from precompact.ops import compaction as hook_events
from support import claude_code
from support.claude_code import compaction_requests, messages_text, wait_for_worker
from support.commands import precompact
from support.projects import new_project, trust


@pytest.fixture
def setup(tmp_path, localnet, claude_binary):
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=True, cluster=localnet.url, airdrop=True)
    with claude_code.session_in(project, tmp_path / "home", claude_binary) as started:
        yield started


BRIEF_START = "[precompact] Restored from savepoint"
BRIEF_END = 'its proof is the one line starting "Proof:" at the top.'
ADDENDUM_START = "[precompact] What the compaction summary left out of savepoint"


def briefs(request: dict) -> list[str]:
    """The precompact briefs a request to the model carries. Claude Code sends SessionStart
    context inside a `system`-role text, after "SessionStart hook additional context: "."""
    found = []
    for message in request["body"].get("messages", []):
        content = message["content"]
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            text = block.get("text") or ""
            start = text.find(BRIEF_START)
            while start != -1:
                assert text[:start].endswith("SessionStart hook additional context: ")
                end = text.find(BRIEF_END, start) + len(BRIEF_END)
                found.append(text[start:end])
                start = text.find(BRIEF_START, end)
    return found


def additional_instructions(request: dict) -> str:
    prompt = claude_code.texts(request["body"]["messages"][-1])
    return (
        prompt.split("Additional Instructions:\n", 1)[1].split("\n\nREMINDER:", 1)[0]
        if "Additional Instructions:" in prompt
        else ""
    )


def work_plan(project: Path) -> list:
    return [
        [("Read", {"file_path": str(project / "app.py")})],
        [("ToolSearch", {"query": "select:TodoWrite"})],
        [
            (
                "TodoWrite",
                {
                    "todos": [
                        {"content": "Parse headers", "status": "in_progress", "activeForm": "Parsing headers"},
                        {"content": "Write the parser tests", "status": "pending", "activeForm": "Writing tests"},
                    ]
                },
            )
        ],
        [
            (
                "Write",
                {"file_path": str(project / "parser.py"), "content": "def parse(text):\n    return text.split(':')\n"},
            )
        ],
        [
            (
                "Bash",
                {
                    "command": "python3 -c 'import sys; sys.exit(\"boom: header line 3 has no colon\")'",
                    "description": "Run the parser on the sample",
                },
            )
        ],
    ]


def test_compaction_gives_the_summariser_plain_words_and_the_session_one_brief(setup):
    session, mock = setup.session, setup.session.mock
    setup.script.plans["work"] = work_plan(setup.project.path)
    (setup.project.path / "app.py").write_text("print('v1')\n")
    session_id = session.run("Please build the header parser. [[plan:work]]")["session_id"]
    session.run("Keep the public API stable and never touch app.py.", resume=session_id)
    assert not any("[precompact]" in messages_text(r) for r in mock.requests), (
        "nothing injected before the first savepoint"
    )

    session.run("/compact", resume=session_id)
    [compaction] = compaction_requests(mock)
    note = additional_instructions(compaction)
    # Each run's SessionEnd saved what it said (savepoints 1 and 2): PreCompact finds nothing new.
    assert note.startswith(
        "Nothing was said since precompact savepoint 2, so no new savepoint was made. "
        "The full pre-compaction transcript is saved as precompact savepoint 2 (sha256:"
    )
    assert "{" not in note and "systemMessage" not in note, "plain words for the summariser, no JSON"

    wait_for_worker(setup.project)  # PostCompact's worker: what the summary left out is pending
    asked = len(mock.requests)
    session.run("What next?", resume=session_id)
    [brief] = briefs(mock.requests[-1])
    # The first part, given before the summary exists: the proof, the newest request, the todo list.
    assert len(brief) < 4_000 and brief.startswith(f"{BRIEF_START} 2 of Trial #1")
    assert "## Newest user request (verbatim)\n> Keep the public API stable and never touch app.py." in brief
    assert "> - [in_progress] Parse headers\n> - [pending] Write the parser tests" in brief
    assert "Proof: savepoint 2, sha256:" in brief and "integrity ✓ verified" in brief
    # The second, with this prompt: what the summary ("building a parser") left out.
    [left_out] = [t for t in messages_text(mock.requests[-1]).split(ADDENDUM_START)[1:]]
    assert "boom: header line 3 has no colon" in left_out and "python3 -c" in left_out
    assert "parser.py" in left_out
    for own in ("<command-name>", "<local-command-stdout>", "This session is being continued", "<system-reminder>"):
        assert own not in brief, f"Claude Code's own {own} entries are not quoted as requests"
    assert all(len(briefs(r)) == 1 for r in mock.requests[asked:])

    session.run("And after that?", resume=session_id)
    assert len(briefs(mock.requests[-1])) == 1, "a resume does not add a second copy"
    wait_for_worker(setup.project)
    index = setup.index()
    assert {e["trigger"] for e in index if e["event"] == "SAVEPOINT_CREATED"} == {"session_end"}
    delivered = [e for e in index if e["event"] == "BRIEF_DELIVERED"]
    assert [(e["sequence"], e["session_id"], e["source"]) for e in delivered] == [(2, session_id, "compact")]
    [summary] = [e["summary"] for e in index if e["event"] == "COMPACT_SUMMARY"]
    assert summary == setup.script.summary, "the <summary> part only, without <analysis>"
    assert {"LAYER_2_PUSHED", "LAYER_3_CONFIRMED"} <= {e["event"] for e in index}


def test_a_compaction_with_nothing_new_keeps_the_savepoint(setup):
    session, mock = setup.session, setup.session.mock
    session_id = session.run("Summarise the design doc.")["session_id"]
    session.run("/compact", resume=session_id)
    again = session.run("/compact", resume=session_id)
    assert again["result"] == "Not enough messages to compact."
    assert len(compaction_requests(mock)) == 1
    assert [e["event"] for e in setup.index()].count("SAVEPOINT_CREATED") == 1
    transcript = next((setup.session.home / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))
    hook = precompact(
        setup.project.path,
        "hook",
        stdin={
            "hook_event_name": "PreCompact",
            "session_id": session_id,
            "transcript_path": str(transcript),
            "cwd": str(setup.project.path),
            "trigger": "manual",
        },
    )
    assert hook.stdout.startswith("Nothing was said since precompact savepoint 1, so no new savepoint was made.")
    assert [e["event"] for e in setup.index()].count("SAVEPOINT_CREATED") == 1
    unchanged = setup.precompact("savepoint", "--transcript", str(transcript), "--session-id", session_id)
    assert unchanged.returncode == 5 and "nothing new since savepoint 1" in unchanged.stdout, unchanged.stdout
    saved = setup.precompact("savepoint", "--force", "--transcript", str(transcript), "--session-id", session_id)
    assert saved.returncode in (0, 3) and "savepoint 2 saved" in saved.stdout, "--force saves by hand anyway"


def test_auto_compaction_saves_with_the_models_window_and_briefs_once(setup):
    # Without SessionEnd's savepoint of the first run. With it, PreCompact may rightly find
    # nothing new: Claude Code writes the second prompt to its session file after the hook has
    # read it at times (seen in CI), and then the compaction names savepoint 1, made at the end.
    config = setup.project.path / ".precompact.toml"
    config.write_text(config.read_text().replace("session_end = true", "session_end = false"))
    trust(setup.project.path)
    session, mock = setup.session, setup.session.mock
    setup.script.input_tokens = 990_000
    session_id = session.run("Load the whole log into context.")["session_id"]
    session.run("Now find the slow query.", resume=session_id)
    [compaction] = compaction_requests(mock)
    # The loaded log is more than PreCompact writes itself (config/hook_timeouts.pre_compact_writes):
    # it queues the savepoint and says so, naming no savepoint; SessionStart(compact) or the
    # worker writes it from the queue entry, and the session is briefed with it once.
    assert additional_instructions(compaction) == hook_events.BACKGROUND_NOTE + " " + DEFAULT_COMPACT_ADVICE
    wait_for_worker(setup.project)
    [created] = [e for e in setup.index() if e["event"] == "SAVEPOINT_CREATED" and e["trigger"] == "auto"]
    assert created.get("queue_entry"), created
    assert len(briefs(mock.requests[-1])) == 1
    assert created["tokens_remaining"] == 1_000_000 - created["tokens_used_this_session"], (
        "claude-opus-5-5 has a 1M window"
    )


def test_started_in_a_subdirectory_the_user_scope_install_saves_in_the_project(setup):
    advice = setup.precompact("install")
    assert "precompact install --scope user" in advice.stdout
    assert setup.precompact("uninstall").returncode == 0
    installed = setup.precompact("install", "--scope", "user", cwd=setup.project.path)
    assert installed.returncode == 0 and str(setup.session.home / ".claude" / "settings.json") in installed.stdout
    subdirectory = setup.project.path / "src" / "deep"
    subdirectory.mkdir(parents=True)
    session, mock = setup.session, setup.session.mock
    session_id = session.run("Work from here.", cwd=subdirectory)["session_id"]
    session.run("/compact", resume=session_id, cwd=subdirectory)
    assert "precompact savepoint 1" in additional_instructions(compaction_requests(mock)[0])
    session.run("Continue.", resume=session_id, cwd=subdirectory)
    assert len(briefs(mock.requests[-1])) == 1
    assert not (subdirectory / "logs").exists() and (setup.project.logs / "precompact-savepoint.jsonl").is_file()
    elsewhere = setup.session.home / "unrelated"
    elsewhere.mkdir()
    other = session.run("Hello.", cwd=elsewhere)["session_id"]
    session.run("/compact", resume=other, cwd=elsewhere)
    assert additional_instructions(compaction_requests(mock)[-1]) == "", (
        "outside a precompact project the hooks say nothing"
    )
    assert not (elsewhere / "logs").exists()


def test_with_claude_codes_default_task_tools_the_brief_has_their_list(setup):
    session, mock = setup.session, setup.session.mock
    session.env.update({"CLAUDE_CODE_ENABLE_TASKS": "1", "CLAUDE_CODE_ENABLE_TODO_TOOLS": "0"})  # 2.1.332's default
    setup.script.plans["tasks"] = [
        [("ToolSearch", {"query": "select:TaskCreate,TaskUpdate"})],
        [("TaskCreate", {"subject": "Migrate the schema", "description": "add the column"})],
        [("TaskCreate", {"subject": "Backfill the rows", "description": "in batches"})],
        [("TaskUpdate", {"taskId": "1", "status": "completed"})],
    ]
    session_id = session.run("Plan the migration. [[plan:tasks]]")["session_id"]
    session.run("/compact", resume=session_id)
    session.run("Go on.", resume=session_id)
    [brief] = briefs(mock.requests[-1])
    assert "> - [completed] Migrate the schema\n> - [pending] Backfill the rows" in brief
