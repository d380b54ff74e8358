"""precompact under the real OpenAI Codex CLI (npm `@openai/codex`, pinned in codex_cli.py)
talking to a mock Responses API: a session with tool calls compacts mid-turn, its own hooks save
it through the three layers, and the model is handed the brief."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from support import codex_cli, commands
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


def test_a_session_end_codex_queued_unread_is_written_by_the_worker_and_verifies(setup):
    """fix15c: Codex's SessionEnd queues its rollout unread (the index busy, it cannot write it
    itself either) and the worker it started reads the rollout and writes the savepoint, which
    goes through the three layers and verifies."""
    from test_hook_lock_wait import index_lock

    holder = index_lock(setup.project)
    try:
        thread = setup.session.run(FIRST)
        [queued] = [json.loads(line) for line in _queued_lines(setup.project)]
        assert queued["unread_session_file"]["end"] > 0 and queued["session"]["transcript_path"] is None
    finally:
        holder.stop()
    wait_for_worker(setup.project)
    created = [e for e in setup.index() if e["event"] == "SAVEPOINT_CREATED"]
    assert [(e["trigger"], e["agent"], e["agent_version"], e["session_id"]) for e in created] == [
        ("session_end", "codex", codex_cli.VERSION, thread)
    ]
    assert created[0]["queue_entry"], "written from its queue entry"
    assert PHRASE in setup.precompact("recall", "flux capacitor").stdout
    verified = setup.precompact("verify", "--all")
    assert verified.returncode == 0, verified.stdout + verified.stderr


def _queued_lines(project) -> list[bytes]:
    from precompact.local import provenance, snapshot

    folder = project.logs / snapshot.QUEUE_DIR
    return [provenance.made_here(snapshot.QUEUE_PURPOSE, p.read_bytes()) or b"" for p in sorted(folder.iterdir())]


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


def _codex_hooks(binary, session) -> list[dict]:
    """The hooks the real Codex lists for the project, as its /hooks view does (app-server's
    hooks/list), each with its trustStatus and currentHash."""
    asked = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(session.project)]}},
    ]
    server = subprocess.Popen(
        [str(binary), "app-server"],
        cwd=session.project,
        env=session.environment(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        server.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in asked))
        server.stdin.flush()
        for line in server.stdout:
            message = json.loads(line)
            if message.get("id") == 2:
                return message["result"]["data"][0]["hooks"]
        raise AssertionError("Codex's app-server ended without listing its hooks")
    finally:
        server.kill()
        server.wait()


def test_doctor_asks_codex_whether_it_trusts_precompacts_hooks(tmp_path, codex_binary):
    """review13b F2: Codex skips a hook it does not trust, silently; doctor says so, naming the
    fix, and says ✓ only once Codex itself lists every precompact hook as trusted."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    with codex_cli.session_in(project, tmp_path / "home", codex_binary, "--scope", "user") as setup:
        path = {"PATH": f"{codex_binary.parent}{os.pathsep}{setup.session.environment()['PATH']}"}

        def doctor() -> tuple[int, dict]:
            done = commands.precompact(
                project.path, "doctor", "--json", home=setup.session.home,
                env={"CODEX_HOME": str(setup.session.codex_home), **path},
            )  # fmt: skip
            checks = {c["check"]: c for c in json.loads(done.stdout)}
            return done.returncode, checks["codex hooks trusted"]

        code, check = doctor()
        assert code != 0 and not check["ok"], check
        assert "skips precompact's hooks it does not trust" in check["detail"] and "untrusted" in check["detail"]
        assert check["fix"] == "open codex, run /hooks and trust precompact's hooks"

        hooks = _codex_hooks(codex_binary, setup.session)
        ours = [h for h in hooks if "precompact" in h["command"]]
        assert ours and all(h["trustStatus"] == "untrusted" for h in ours)
        trusted = "".join(f'\n[hooks.state."{h["key"]}"]\ntrusted_hash = "{h["currentHash"]}"\n' for h in ours)
        config = setup.session.codex_home / "config.toml"
        config.write_text(config.read_text() + trusted)  # what trusting them in /hooks writes
        _, check = doctor()
        assert check["ok"] and f"Codex trusts precompact's {len(ours)} hooks" in check["detail"], check

        config.write_text(config.read_text().replace(ours[0]["currentHash"], "sha256:" + "0" * 64))
        _, check = doctor()
        assert not check["ok"] and 'postToolUse ("modified")' in check["detail"], check

        # review14a F2: a hook of ours Codex does not list (an event this Codex lacks) is one it
        # never runs: no ✓ for the ones it does list.
        config.write_text(config.read_text().replace("sha256:" + "0" * 64, ours[0]["currentHash"]))
        hooks_file = setup.session.home / ".codex" / "hooks.json"
        installed = json.loads(hooks_file.read_text())
        installed["hooks"]["NoSuchEvent"] = installed["hooks"]["SessionStart"]
        hooks_file.write_text(json.dumps(installed))
        code, check = doctor()
        assert code != 0 and not check["ok"], check
        assert f"Codex does not load precompact's hooks for NoSuchEvent in {hooks_file}" in check["detail"], check


def test_a_precompact_whose_script_is_gone_never_blocks_codexs_prompt(tmp_path, codex_binary):
    """review14b F4: `install --agent codex`, then precompact's script removed with its Python kept
    (`pip uninstall`: Python exits 2, Codex's "block"): the prompt still reaches the model."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    home = tmp_path / "home"
    home.mkdir()
    moved = tmp_path / "old-venv" / "bin" / "precompact"
    moved.parent.mkdir(parents=True)
    moved.write_bytes(Path(commands.PRECOMPACT).read_bytes())
    moved.chmod(0o755)
    with codex_cli.MockResponses(codex_cli.Script()) as mock:
        session = codex_cli.Session(codex_binary, home, project.path, mock)
        session.configure()
        installed = subprocess.run(
            [str(moved), "install", "--agent", "codex", "--scope", "user"],
            cwd=project.path,
            capture_output=True,
            text=True,
            env={**os.environ, "HOME": str(home), "CODEX_HOME": str(session.codex_home)},
            check=False,
        )
        assert installed.returncode == 0, installed.stderr
        moved.unlink()
        session.run("Start the parser.")
        assert any("Start the parser." in json.dumps(r.get("body")) for r in mock.requests), (
            "the prompt reached the model: no hook blocked it"
        )
        assert not any("could not start" in json.dumps(r.get("body")) for r in mock.requests), "the user's line only"
