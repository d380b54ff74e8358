"""Codex CLI without the CLI: its rollout read into the conversation document, `install --agent
codex` in its hooks.json, and the hook fed Codex's payloads (recorded from 0.171.0)."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
from pathlib import Path

import pytest

from precompact.config import install as installer
from precompact.config import settings as configuration
from precompact.recall import fulltext
from precompact.transcript import agents, codex, conversation
from support.commands import INSTALLED_PYTHON, PRECOMPACT, installed_command, invoke, precompact, wait_until
from support.projects import new_project

SESSION = "01a2355d-d3df-7661-851d-76b764947144"


def record(ordinal: int, kind: str, payload: dict, **extra) -> dict:
    return {
        "timestamp": f"2026-12-02T06:07:{ordinal:02d}.000Z",
        "ordinal": ordinal,
        "type": kind,
        "payload": payload,
        **extra,
    }


def item(ordinal: int, payload: dict, **metadata) -> dict:
    return record(ordinal, "response_item", payload, metadata=metadata)


def text_message(role: str, text: str, kinds: list[str] | None = None) -> dict:
    kind = "output_text" if role == "assistant" else "input_text"
    message = {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
    if kinds is not None:
        message["internal_chat_message_metadata_passthrough"] = {"content_item_kinds": kinds}
    return message


ROLLOUT = [
    record(0, "session_meta", {"id": SESSION, "cwd": "/work/p", "cli_version": "0.171.0"}),
    item(1, text_message("developer", "<permissions instructions>be careful</permissions instructions>")),
    item(2, text_message("user", "<environment_context>\n  <cwd>/work/p</cwd>\n</environment_context>")),
    item(3, text_message("user", "Build the parser.", ["user.text"])),
    item(
        4, {"type": "function_call", "name": "exec_command", "arguments": '{"cmd": "cat nofile.txt"}', "call_id": "c1"}
    ),
    record(5, "token_usage_record", {"usage": {"input_tokens": 450}}),
    item(
        6,
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": "Chunk ID: f40e6f\nProcess exited with code 1\nOutput:\ncat: nofile.txt: No such file or directory\n",
        },
    ),
    item(
        7,
        {
            "type": "function_call",
            "name": "update_plan",
            "arguments": '{"plan": [{"step": "Parse headers", "status": "in_progress"}]}',
            "call_id": "c2",
        },
    ),
    item(8, {"type": "function_call_output", "call_id": "c2", "output": "Plan updated"}),
    item(9, text_message("user", "Extra context from a hook.", ["hooks.additional_context"])),
    item(10, text_message("assistant", "Done.")),
    item(11, text_message("assistant", "The user is building a parser."), compaction_output=True),
    record(
        12,
        "compacted",
        {
            "message": "Another language model started to solve this problem and produced a summary of its thinking "
            "process. ... use the information in this summary to assist with your own analysis:\nThe user is building a parser.",
            "replacement_history": [],
        },
    ),
]


def write(path: Path, records: list, tail: bytes = b"") -> Path:
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records) + tail)
    return path


def test_each_rollout_record_becomes_one_entry_shaped_as_the_conversation(tmp_path):
    rollout = write(tmp_path / "rollout.jsonl", ROLLOUT[:3], b"{not json\n")
    with rollout.open("ab") as f:
        f.write(b"".join(json.dumps(r).encode() + b"\n" for r in ROLLOUT[3:]) + b'{"timestamp": "still being wri')
    document = codex.read(rollout)
    assert (document.version, document.session_id) == ("0.171.0", SESSION)
    assert document.summary == "The user is building a parser.", "Codex's words for the next model are cut off"
    assert document.lines[3] == b"{not json\n", "a malformed line stays as it is (stored as an unparsed line)"
    entries = [json.loads(line) for n, line in enumerate(document.lines) if n != 3]
    assert len(entries) == len(ROLLOUT), "one entry per whole record; the partial last line waits"
    assert [e["agent_record"] for e in entries] == ROLLOUT, "every record kept whole"
    by_ordinal = {e["agent_record"]["ordinal"]: e for e in entries}
    assert by_ordinal[0]["type"] == "codex.session_meta" and not conversation.is_said(by_ordinal[0])
    assert by_ordinal[1]["type"] == "system"
    assert by_ordinal[2].get("isMeta") and by_ordinal[9].get("isMeta"), "Codex's own text is not a request"
    assert conversation.user_text(by_ordinal[3]) == "Build the parser."
    [call] = by_ordinal[4]["message"]["content"]
    assert call == {"type": "tool_use", "id": "c1", "name": "exec_command", "input": {"cmd": "cat nofile.txt"}}
    [result] = by_ordinal[6]["message"]["content"]
    assert result["tool_use_id"] == "c1" and result["is_error"] is True, "exit code 1 is a failure"
    assert by_ordinal[8]["message"]["content"][0]["is_error"] is False
    assert by_ordinal[11]["isCompactSummary"] is True and not conversation.is_said(by_ordinal[11])
    assert by_ordinal[12]["type"] == "system" and by_ordinal[12]["subtype"] == "compact_boundary"
    assert conversation.said_mark(by_ordinal[10]) == "codex:10"


def test_the_brief_reads_codexs_failing_command_plan_and_requests(tmp_path):
    document = codex.read(write(tmp_path / "rollout.jsonl", ROLLOUT))
    entries = [json.loads(line) for line in document.lines]
    found = conversation.recent(reversed(entries))
    assert found.requests == ["Build the parser."]
    assert found.failure == ("cat nofile.txt", ROLLOUT[6]["payload"]["output"])
    assert found.todos == [{"step": "Parse headers", "status": "in_progress", "content": "Parse headers"}]


def test_the_document_grows_as_the_rollout_does(tmp_path):
    rollout = write(tmp_path / "rollout.jsonl", ROLLOUT[:6])
    before = codex.read(rollout).data
    write(rollout, ROLLOUT)
    assert codex.read(rollout).data.startswith(before), "a resumed snapshot read relies on it"


def test_a_grown_rollout_is_appended_to_its_document_and_a_rewritten_one_read_again(tmp_path):
    logs = tmp_path / "logs"
    rollout = write(tmp_path / "rollout.jsonl", ROLLOUT[:5], b'{"timestamp": "half a li')
    first = agents.read(agents.CODEX, logs, str(rollout))
    document = Path(first.transcript_path)
    write(rollout, ROLLOUT)
    grown = agents.read(agents.CODEX, logs, str(rollout))
    assert document.read_bytes() == codex.read(rollout).data, "appended: the same as a whole read"
    assert (grown.version, grown.session_id) == ("0.171.0", SESSION), "kept from the first read"
    assert grown.summary == "The user is building a parser."
    changed = [ROLLOUT[0], item(1, text_message("user", "Something else.", ["user.text"])), *ROLLOUT[2:]]
    write(rollout, changed)
    agents.read(agents.CODEX, logs, str(rollout))
    assert document.read_bytes() == codex.read(rollout).data, "a rollout changed before the read point: read whole"
    with document.open("ab") as f:
        f.write(b"tampered\n")
    write(rollout, [*changed, item(13, text_message("assistant", "More."))])
    agents.read(agents.CODEX, logs, str(rollout))
    assert document.read_bytes() == codex.read(rollout).data, "a document not as recorded: written whole"


def test_agents_read_writes_the_document_outside_the_project_and_refuses_an_unknown_agent(tmp_path):
    logs = tmp_path / "logs"
    rollout = write(tmp_path / "rollout.jsonl", ROLLOUT)
    read = agents.read(agents.CODEX, logs, str(rollout))
    document = Path(read.transcript_path)
    assert document.parent == agents.documents_dir(logs) and not document.is_relative_to(tmp_path)
    assert stat.S_IMODE(document.stat().st_mode) == 0o600 and stat.S_IMODE(document.parent.stat().st_mode) == 0o700
    assert Path(read.transcript_path).read_bytes() == codex.read(rollout).data
    assert read.version == "0.171.0"
    with pytest.raises(ValueError, match="unknown agent"):
        agents.read("cursor", logs, str(rollout))
    with pytest.raises(OSError):
        agents.read(agents.CODEX, logs, str(tmp_path / "gone.jsonl"))


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "home" / ".codex"))
    return tmp_path / "home"


def ours(hooks_file: Path) -> dict:
    settings = json.loads(hooks_file.read_text())
    return {
        event: [h["command"] for g in groups for h in g["hooks"] if installer.is_ours(h)]
        for event, groups in settings["hooks"].items()
    }


def test_install_for_codex_writes_its_hooks_json_once_and_uninstall_leaves_no_litter(home):
    hooks_file = home / ".codex" / "hooks.json"
    result = invoke("install", "--agent", "codex", "--scope", "user")
    assert result.exit_code == 0 and str(hooks_file) in result.output
    assert "/hooks" in result.output, "Codex skips hooks nobody trusted: the user is told"
    command = shlex.join(installed_command("hook", "--agent", "codex"))
    written = ours(hooks_file)
    assert written == {
        event: [
            installer.hook_command(
                installer.Program(Path(INSTALLED_PYTHON), Path(PRECOMPACT).resolve()), "codex", event, "user"
            )
        ]
        for event in ("PreCompact", "PostCompact", "SessionStart", "SessionEnd", "UserPromptSubmit", "PostToolUse")
    }
    assert all(c.startswith(f"{command} || ") for [c] in written.values()), "never exit 2, Codex's block"
    assert "already installed" in invoke("install", "--agent", "codex", "--scope", "user").output
    assert not (home / ".claude").exists(), "Claude Code's settings are not touched"
    assert invoke("uninstall", "--agent", "codex", "--scope", "user").exit_code == 0
    assert not hooks_file.exists(), "a file holding only our hooks is removed, not left as {}"


def test_uninstall_for_codex_keeps_other_hooks_and_the_project_scope_is_dot_codex(home, tmp_path):
    other = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify.sh", "timeout": 5}]}]}}
    project_hooks = tmp_path / ".codex" / "hooks.json"
    project_hooks.parent.mkdir()
    project_hooks.write_text(json.dumps(other))
    assert invoke("install", "--agent", "codex").exit_code == 0
    assert set(ours(project_hooks)) == {
        *("PreCompact", "PostCompact", "SessionStart", "SessionEnd", "UserPromptSubmit", "PostToolUse"),
        "Stop",
    }
    assert invoke("uninstall", "--agent", "codex").exit_code == 0
    assert json.loads(project_hooks.read_text()) == other


def test_an_older_claude_hook_and_a_codex_one_are_both_ours_and_nothing_else_is():
    for command in (
        "precompact hook",
        "/usr/bin/precompact hook --agent codex",
        "precompact hook --agent claude",
        "'/opt/my venv/bin/precompact' hook || { s=$?; [ $s -lt 126 ] && exit $s; printf x; }",
        "/opt/venv/bin/python3 -I /opt/venv/bin/precompact hook",
        "'/opt/my venv/bin/python' -I '/opt/my venv/bin/precompact' hook --agent gemini || { s=$?; exit $s; }",
    ):
        assert installer.is_ours({"command": command})
    for command in (
        "precompact hook --agent vim",
        "precompact hook --agent",
        "precompact hooks",
        "notify.sh",
        "/usr/bin/python3 -I /opt/venv/bin/other hook",
        "/usr/bin/python3 -c /opt/venv/bin/precompact hook",
        "/usr/bin/python3 -I precompact hook",  # the working directory's script, the project's
    ):
        assert not installer.is_ours({"command": command})


def test_removing_the_mcp_server_leaves_no_empty_mcp_servers(tmp_path):
    path = installer.mcp_json_path(tmp_path)
    program = installer.Program(Path("/opt/precompact/bin/python3"), Path("/opt/precompact/bin/precompact"))
    installer.apply(installer.plan_mcp_server(path, program))
    installer.apply(installer.plan_mcp_server_removal(path))
    assert not path.exists()


def codex_hook(payload: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PRECOMPACT, "hook", "--agent", "codex"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=cwd,
        timeout=60,
        check=False,
    )


def test_codex_payloads_save_and_brief_and_a_missing_rollout_fails_open(tmp_path):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    rollout = write(tmp_path / "rollout.jsonl", ROLLOUT[:11])
    base = {"session_id": SESSION, "transcript_path": str(rollout), "cwd": str(project.path), "model": "gpt-mock"}
    saved = codex_hook({**base, "hook_event_name": "PreCompact", "trigger": "manual", "turn_id": "t1"}, project.path)
    assert saved.returncode == 0 and saved.stdout == b"", "Codex ignores PreCompact's output: none is given"
    index = [json.loads(line) for line in (project.logs / "precompact-savepoint.jsonl").read_text().splitlines()]
    [created] = [e for e in index if e["event"] == "SAVEPOINT_CREATED"]
    assert (created["agent"], created["agent_version"], created["trigger"]) == ("codex", "0.171.0", "manual")
    listed = fulltext.describe_savepoints(configuration.load(project.path), project.instance, 6_000)
    assert listed.startswith(f"savepoint 1 of {project.instance}: ") and ', codex "0.171.0", trigger manual' in listed
    write(rollout, ROLLOUT)
    assert codex_hook({**base, "hook_event_name": "PostCompact", "trigger": "manual"}, project.path).returncode == 0
    started = codex_hook({**base, "hook_event_name": "SessionStart", "source": "compact"}, project.path)
    context = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    # The first part: Codex ran PostCompact first, and its worker compares the summary with the savepoint.
    assert context.startswith("[precompact] Restored from savepoint 1") and "> Build the parser." in context
    index = [json.loads(line) for line in (project.logs / "precompact-savepoint.jsonl").read_text().splitlines()]
    assert [e["summary"] for e in index if e["event"] == "COMPACT_SUMMARY"] == ["The user is building a parser."]
    # The second, with the next prompt (a `developer` message in Codex), once: the failure the summary left out.
    assert wait_until(lambda: (project.logs / "precompact-pending" / f"{SESSION}.json").exists(), 60)
    prompt = codex_hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": "go on"}, project.path)
    left_out = json.loads(prompt.stdout)["hookSpecificOutput"]
    assert left_out["hookEventName"] == "UserPromptSubmit"
    assert (
        "- failed command [1:" in left_out["additionalContext"] and '"cat nofile.txt"' in left_out["additionalContext"]
    )
    assert (
        codex_hook({**base, "hook_event_name": "PostToolUse", "tool_name": "exec_command"}, project.path).stdout == b""
    )
    assert [e["event"] for e in index].count("SAVEPOINT_CREATED") == 1, "the compaction's own records say nothing"

    gone = codex_hook(
        {**base, "transcript_path": str(tmp_path / "gone.jsonl"), "hook_event_name": "PreCompact"}, project.path
    )
    assert gone.returncode == 0
    assert "PreCompact failed" in json.loads(gone.stdout)["systemMessage"], "shown to the user, never the model"


SECRET = "AKIA" + "Q7ZK3M9XW2PL5RTB"  # an AWS access key id, as a tool's output may show one


def test_a_sessions_copy_is_kept_outside_the_project_and_prune_removes_it(tmp_path):
    """Issue 39: the Codex session's document is not redacted, so it stays out of the project (an
    archive or sync of the project would carry it): in the state directory, 0600. A copy an
    earlier version left in logs/ goes at the next save, the state directory's at `prune`, and
    the next save rebuilds it from the rollout."""
    project = new_project(tmp_path, "p", git_layer=True, chain_layer=False)
    legacy = project.logs / "precompact-agents"
    legacy.mkdir(parents=True)
    (legacy / "codex-0123.jsonl").write_text(f'{{"said": "{SECRET}"}}\n')
    said = item(10, {"type": "function_call_output", "call_id": "c1", "output": f"export AWS_ACCESS_KEY_ID={SECRET}"})
    rollout = write(tmp_path / "rollout.jsonl", [*ROLLOUT[:10], said])
    base = {"session_id": SESSION, "transcript_path": str(rollout), "cwd": str(project.path), "model": "gpt-mock"}
    saved = codex_hook({**base, "hook_event_name": "PreCompact", "trigger": "manual", "turn_id": "t1"}, project.path)
    assert saved.returncode == 0 and saved.stdout == b"", saved.stderr

    holding = [
        p
        for p in project.path.rglob("*")
        if p.is_file() and ".git" not in p.parts and SECRET.encode() in p.read_bytes()
    ]
    assert holding == [], "nothing in the project holds the secret"
    assert not legacy.exists(), "the copy an earlier version kept in logs/ is removed at the save"
    [document] = agents.documents_dir(project.logs).glob("codex-*.jsonl")
    assert SECRET.encode() in document.read_bytes(), "the copy outside the project is the rollout's reading, whole"
    assert stat.S_IMODE(document.stat().st_mode) == 0o600

    pruned = precompact(project.path, "prune", "--keep", "1")
    assert pruned.returncode == 0, pruned.stderr
    assert not document.exists() and not list(agents.documents_dir(project.logs).glob("*.json*"))

    write(rollout, [*ROLLOUT[:10], said, item(11, text_message("user", "Now the lexer.", ["user.text"]))])
    again = codex_hook({**base, "hook_event_name": "PreCompact", "trigger": "manual", "turn_id": "t2"}, project.path)
    assert again.returncode == 0, again.stderr
    index = [json.loads(line) for line in (project.logs / "precompact-savepoint.jsonl").read_text().splitlines()]
    assert [e["event"] for e in index].count("SAVEPOINT_CREATED") == 2
    assert document.read_bytes() == codex.read(rollout).data, "rebuilt from the rollout"


def test_import_archives_the_projects_codex_threads_once(tmp_path):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    codex_home = tmp_path / "codex-home"
    day = codex_home / "sessions" / "2026" / "12" / "02"
    day.mkdir(parents=True)
    mine = [{**ROLLOUT[0], "payload": {**ROLLOUT[0]["payload"], "cwd": str(project.path / "src")}}, *ROLLOUT[1:]]
    write(day / f"rollout-2026-12-02T06-07-51-{SESSION}.jsonl", mine)
    other = [{**ROLLOUT[0], "payload": {"id": "other", "cwd": str(tmp_path / "elsewhere")}}, *ROLLOUT[1:]]
    write(day / "rollout-2026-12-02T06-08-00-other.jsonl", other)
    env = {"CODEX_HOME": str(codex_home)}

    def imported() -> dict:
        done = subprocess.run(
            [PRECOMPACT, "import", "--agent", "codex", "--json"],
            cwd=project.path,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    first = imported()
    assert [(s["session_id"], s["outcome"]) for s in first["sessions"]] == [(SESSION, "saved")], "only this project's"
    assert [(s["session_id"], s["outcome"]) for s in imported()["sessions"]] == [(SESSION, "unchanged")]
    index = [json.loads(line) for line in (project.logs / "precompact-savepoint.jsonl").read_text().splitlines()]
    [created] = [e for e in index if e["event"] == "SAVEPOINT_CREATED"]
    assert (created["trigger"], created["agent"], created["agent_version"]) == ("import", "codex", "0.171.0")


def test_import_saves_a_codex_thread_whose_last_record_ordinal_another_threads_savepoint_ends_at(tmp_path):
    """Codex marks an entry by its record's ordinal, which every thread counts from 0: a thread
    ending at the same ordinal as another's savepoint is not a copy of it (only Claude Code's
    entry ids hold across sessions, as `uncompact` copies them), so `import` saves it."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    codex_home = tmp_path / "codex-home"
    day = codex_home / "sessions" / "2026" / "12" / "02"
    day.mkdir(parents=True)
    for name, asked in ((SESSION, "Build the parser."), ("0f9e8d7c-0000-7000-8000-000000000002", "Fix the lexer.")):
        head = {**ROLLOUT[0], "payload": {**ROLLOUT[0]["payload"], "id": name, "cwd": str(project.path)}}
        asking = item(3, text_message("user", asked, ["user.text"]))
        write(day / f"rollout-2026-12-02T06-07-51-{name}.jsonl", [head, *ROLLOUT[1:3], asking, *ROLLOUT[4:]])
        done = precompact(project.path, "import", "--agent", "codex", "--json", env={"CODEX_HOME": str(codex_home)})
        assert done.returncode == 0, done.stderr
        outcomes = {s["session_id"]: s["outcome"] for s in json.loads(done.stdout)["sessions"]}
        assert outcomes[name] == "saved", outcomes


def test_a_rollout_whose_directory_climbs_out_of_the_project_through_dotdot_is_another_projects(tmp_path):
    root = tmp_path / "proj"
    day = tmp_path / "codex-home" / "sessions" / "2026" / "12" / "02"
    day.mkdir(parents=True)
    for name, cwd in (("mine", root / "src"), ("climbing", root / ".." / "other"), ("relative", Path("proj"))):
        head = {**ROLLOUT[0], "payload": {**ROLLOUT[0]["payload"], "cwd": str(cwd)}}
        write(day / f"rollout-2026-12-02T06-07-51-{name}.jsonl", [head, *ROLLOUT[1:]])
    assert [p.name for p in codex.sessions_in(root, tmp_path / "codex-home")] == [
        "rollout-2026-12-02T06-07-51-mine.jsonl"
    ]


def test_a_rollout_with_an_over_long_or_unparsable_first_line_fails_alone_and_the_others_are_imported(tmp_path):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    codex_home = tmp_path / "codex-home"
    day = codex_home / "sessions" / "2026" / "12" / "02"
    day.mkdir(parents=True)
    mine = [{**ROLLOUT[0], "payload": {**ROLLOUT[0]["payload"], "cwd": str(project.path)}}, *ROLLOUT[1:]]
    write(day / f"rollout-2026-12-02T06-07-51-{SESSION}.jsonl", mine)
    huge = day / "rollout-2026-12-02T06-08-00-huge.jsonl"
    with huge.open("wb") as f:  # sparse: past the cap in size, next to nothing on disk
        f.truncate(codex.SESSION_META_MAX_BYTES + (1 << 20))
    assert huge.stat().st_blocks * 512 < 1 << 20
    (day / "rollout-2026-12-02T06-09-00-cut.jsonl").write_bytes(b'{"type": "session_meta", "payl')
    (day / "rollout-2026-12-02T06-10-00-empty.jsonl").write_bytes(b"")

    done = subprocess.run(
        [PRECOMPACT, "import", "--agent", "codex", "--json"],
        cwd=project.path,
        env={**os.environ, "CODEX_HOME": str(codex_home)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    sessions = json.loads(done.stdout)["sessions"]
    assert [(s["session_id"], s["outcome"]) for s in sessions] == [
        (SESSION, "saved"),
        (huge.stem, "failed"),
        ("rollout-2026-12-02T06-09-00-cut", "failed"),
    ], "the empty rollout holds nothing yet"
    assert "over 4 MiB" in sessions[1]["reason"] and str(huge) in sessions[1]["reason"]
    assert "not JSON" in sessions[2]["reason"] and "cut.jsonl" in sessions[2]["reason"]
    assert all("\n" not in s["reason"] for s in sessions[1:])


def test_a_rollout_line_over_the_cap_fails_its_session_alone_and_is_not_read_whole(tmp_path):
    """A line longer than a transcript line may be (claude_code.MAX_LINE_BYTES) is refused once
    that much of it is read, never read whole into memory: its session fails in one line naming
    where the line starts, and the project's other threads are imported."""
    import tracemalloc

    from precompact.boundary import session_file
    from precompact.transcript import claude_code

    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    codex_home = tmp_path / "codex-home"
    day = codex_home / "sessions" / "2026" / "12" / "02"
    day.mkdir(parents=True)
    head = {**ROLLOUT[0], "payload": {**ROLLOUT[0]["payload"], "cwd": str(project.path)}}
    write(day / f"rollout-2026-12-02T06-07-51-{SESSION}.jsonl", [head, *ROLLOUT[1:]])
    huge = write(
        day / "rollout-2026-12-02T06-08-00-huge.jsonl", [{**head, "payload": {**head["payload"], "id": "huge"}}]
    )
    start = huge.stat().st_size
    with huge.open("r+b") as f:  # sparse: four times the cap in one line, next to nothing on disk
        f.truncate(start + 4 * claude_code.MAX_LINE_BYTES)
        f.seek(0, os.SEEK_END)
        f.write(b"\n")

    tracemalloc.start()
    try:
        with pytest.raises(session_file.LineTooLong) as refused:
            codex.read(huge)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * claude_code.MAX_LINE_BYTES, f"{peak} bytes held to refuse it"
    said = f"its line at byte {start} is longer than 16 MiB, the most read of one line"
    assert refused.value.strerror == said

    done = subprocess.run(
        [PRECOMPACT, "import", "--agent", "codex", "--json"],
        cwd=project.path,
        env={**os.environ, "CODEX_HOME": str(codex_home)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    sessions = json.loads(done.stdout)["sessions"]
    assert [(s["session_id"], s["outcome"], s["reason"]) for s in sessions] == [
        (SESSION, "saved", None),
        (huge.stem, "failed", f"cannot read it: {said}"),
    ]


def test_a_codex_sessions_folder_that_cannot_be_listed_is_one_line_naming_it_and_exit_1(tmp_path, monkeypatch):
    """No sessions folder is nothing to import; one that is a file, or that this user may not
    list, is one line naming it, nothing imported, exit 1 (which threads are the project's is
    not known); a day's folder that cannot be listed is one failed entry naming it, and the
    other days' threads are imported. A stray file beside the days is no folder to list."""
    import errno

    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    codex_home = tmp_path / "codex-home"
    sessions = codex_home / "sessions"
    codex_home.mkdir()

    def imported(*json_asked: str) -> subprocess.CompletedProcess:
        return precompact(project.path, "import", "--agent", "codex", *json_asked, env={"CODEX_HOME": str(codex_home)})

    none = imported()
    assert none.returncode == 0 and "0 session(s) found" in none.stdout, "no sessions folder: nothing to import"
    sessions.write_text("not a folder")
    done = imported()
    assert done.returncode == 1 and done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert f"Codex CLI's sessions folder {sessions} cannot be listed (Not a directory)" in line
    assert "nothing was imported" in line and "precompact import --agent codex" in line
    assert json.loads(imported("--json").stdout)["exit_code"] == 1

    sessions.unlink()
    head = {**ROLLOUT[0], "payload": {**ROLLOUT[0]["payload"], "cwd": str(project.path)}}
    for day in ("01", "02"):
        (sessions / "2026" / "12" / day).mkdir(parents=True)
        write(sessions / "2026" / "12" / day / f"rollout-2026-12-{day}T06-07-51-{day}.jsonl", [head, *ROLLOUT[1:]])
    (sessions / "2026" / "notes.txt").write_text("a stray file")
    scandir = os.scandir
    denied = {sessions / "2026" / "12" / "02"}

    def listing(path):
        if Path(path) in denied:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(codex.os, "scandir", listing)
    listed = codex.sessions_in(project.path, codex_home)
    assert [getattr(p, "name", None) for p in listed if isinstance(p, Path)] == ["rollout-2026-12-01T06-07-51-01.jsonl"]
    [unlisted] = [p for p in listed if isinstance(p, codex.Unlisted)]
    assert unlisted.rollout == sessions / "2026" / "12" / "02" and "\n" not in unlisted.reason
    assert unlisted.reason.startswith(f"{sessions / '2026' / '12' / '02'} cannot be listed (Permission denied)")

    denied.add(sessions)
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.chdir(project.path)
    refused = invoke("import", "--agent", "codex")
    assert refused.exit_code == 1
    assert f"Codex CLI's sessions folder {sessions} cannot be listed (Permission denied)" in refused.output
