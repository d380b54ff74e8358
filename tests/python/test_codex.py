"""precompact under the real OpenAI Codex CLI (npm `@openai/codex`, pinned in codex_cli.py)
talking to a mock Responses API: a session with tool calls compacts mid-turn, its own hooks save
it through the three layers, and the model is handed the brief."""

from __future__ import annotations

import json

import pytest

from support import codex_cli
from support.claude_code import wait_for_worker
from support.codex_cli import is_compaction
from support.projects import new_project

PHRASE = "the flux capacitor misaligned at 88 mph"
BRIEF_START = "[precompact] Restored from savepoint"
FIRST = "Build the header parser. [[run:work]]"


@pytest.fixture
def setup(tmp_path, localnet, codex_binary):
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=True, cluster=localnet.url, airdrop=True)
    script = codex_cli.Script(
        commands={
            "work": [f"echo 'error: {PHRASE}'", "cat missing-header.txt"],
            "more": ["echo parsing line 3"],
        },
        heavy={"more": 50_000},
    )
    with codex_cli.session_in(
        project, tmp_path / "home", codex_binary, "--scope", "user", script=script, compact_limit=20_000
    ) as started:
        yield started


def developer_texts(request: dict) -> list[str]:
    return [
        codex_cli.input_texts(item)
        for item in request["body"].get("input") or []
        if item.get("type") == "message" and item.get("role") == "developer"
    ]


def test_a_mid_turn_compaction_is_saved_through_codexs_hooks_and_the_model_gets_the_brief(setup):
    session, mock = setup.session, setup.session.mock
    thread = session.run(FIRST)
    assert PHRASE in json.dumps(mock.requests[-1]["body"])
    session.run("Now parse the rest. [[run:more]]", resume=thread)

    [compaction] = [r for r in mock.requests if is_compaction(r)]
    after = mock.requests[mock.requests.index(compaction) + 1 :]
    assert after, "the turn went on after the compaction"
    assert PHRASE not in json.dumps(after[0]["body"]), "Codex dropped the tool output when it compacted"
    [brief] = [t for t in developer_texts(after[0]) if BRIEF_START in t]
    assert brief.startswith(f"{BRIEF_START} 2 of Trial #1")
    # The brief's first part (#46): the newest request verbatim; what the summary left out (the
    # failing command among it) comes with a later prompt or tool call.
    assert "> Now parse the rest. [[run:more]]" in brief
    assert "> Build the header parser. [[run:work]]" not in brief
    assert "Proof: savepoint 2, sha256:" in brief

    wait_for_worker(setup.project)
    index = setup.index()
    created = [e for e in index if e["event"] == "SAVEPOINT_CREATED"]
    assert [(e["trigger"], e["agent"], e["agent_version"]) for e in created] == [
        ("session_end", "codex", codex_cli.VERSION),
        ("auto", "codex", codex_cli.VERSION),
        ("session_end", "codex", codex_cli.VERSION),
    ]
    assert all(e["session_id"] == thread for e in created)
    [summary] = [e["summary"] for e in index if e["event"] == "COMPACT_SUMMARY"]
    assert summary == setup.script.summary, "taken from the rollout's compacted record"
    delivered = [(e["sequence"], e["source"]) for e in index if e["event"] == "BRIEF_DELIVERED"]
    assert delivered == [(2, "compact")]
    assert {"LAYER_2_PUSHED", "LAYER_3_CONFIRMED"} <= {e["event"] for e in index}

    found = setup.precompact("recall", "flux capacitor")
    assert found.returncode == 0 and PHRASE in found.stdout, found.stdout + found.stderr
    only_codex = setup.precompact("recall", "--agent", "codex", "flux capacitor")
    assert PHRASE in only_codex.stdout
    assert PHRASE not in setup.precompact("recall", "--agent", "claude", "flux capacitor").stdout
    verified = setup.precompact("verify", "--all")
    assert verified.returncode == 0, verified.stdout + verified.stderr

    snapshot = json.loads(setup.precompact("show", "2:1", "--json").stdout)
    assert snapshot, "show reads a Codex savepoint's entries"


def test_resurrect_uncompact_writes_a_rollout_codex_resumes_whole(setup):
    session, mock = setup.session, setup.session.mock
    thread = session.run(FIRST)
    session.run("Now parse the rest. [[run:more]]", resume=thread)
    assert any(is_compaction(r) for r in mock.requests)
    wait_for_worker(setup.project)
    original = session.rollout(thread)
    before = original.read_bytes()
    # The thread resumed is a second uncompact's: it shares no id with the first's (review9a F2
    # found OpenCode's did, and skipped them).
    first = setup.precompact("resurrect", "--uncompact")
    assert first.returncode == 0, first.stderr
    done = setup.precompact("resurrect", "--uncompact")
    assert done.returncode == 0, done.stderr
    command = done.stdout.splitlines()[-1]
    assert command.startswith("codex resume ")
    new_thread = command.split()[-1]
    assert (
        new_thread not in (thread, first.stdout.splitlines()[-1].split()[-1])
        and session.rollout(new_thread).parent.parent.parent.parent == original.parents[3]
    )

    asked = len(mock.requests)
    assert session.run("Carry on from before the compaction.", resume=new_thread) == new_thread
    [request] = mock.requests[asked:]
    text = json.dumps(request["body"])
    assert PHRASE in text and "cat missing-header.txt" in text, "the tool calls compaction dropped are sent again"
    assert setup.script.summary not in text, "not the compacted form"
    assert original.read_bytes() == before, "the original thread is untouched"
