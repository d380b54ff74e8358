"""Every session archived whether or not PreCompact fires (issue #28): a compaction PreCompact
missed is recovered from the transcript, a lagging PreCompact read is completed, a session that
ends is archived by SessionEnd, existing sessions are imported; and never another session's
brief after a compaction. The end-to-end tests run the real Claude Code CLI against the mock API."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from precompact.local import capture, savepoint_log
from precompact.transcript.claude_code import project_folder
from support import claude_code
from support.claude_code import compaction_requests, wait_for_worker
from support.commands import PRECOMPACT, hook, installed_command, precompact
from support.projects import full_document, new_project, trust
from support.transcript_gen import payload

BRIEF_START = "[precompact] Restored from savepoint"


@pytest.fixture
def plain(tmp_path, claude_binary):
    """Claude Code with precompact installed in a project whose Layers 2 and 3 are off."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    with claude_code.session_in(project, tmp_path / "home", claude_binary) as started:
        yield started


def without_hook(setup, event: str) -> None:
    """Removes precompact's `event` hook from the installed settings: a path where it does not fire."""
    settings = setup.project.path / ".claude" / "settings.json"
    installed = json.loads(settings.read_text())
    del installed["hooks"][event]
    settings.write_text(json.dumps(installed))


def created(setup) -> list[dict]:
    return [e for e in setup.index() if e["event"] == "SAVEPOINT_CREATED"]


def history(setup, event: dict) -> list[dict]:
    return json.loads(full_document(setup.project.path / event["snapshot_file"]))["conversation_history"]


def before_boundary(entries: list[dict], nth: int = -1, said_only: bool = False) -> list[str]:
    """The uuids of the transcript's entries (`said_only`: user and assistant ones) before its
    `nth` compact boundary."""
    marks = [i for i, e in enumerate(entries) if e.get("type") == "system" and e.get("subtype") == "compact_boundary"]
    return [
        e["uuid"]
        for e in entries[: marks[nth]]
        if "uuid" in e and (not said_only or e.get("type") in ("user", "assistant"))
    ]


def briefs_in(request: dict) -> list[str]:
    text = json.dumps(request["body"], ensure_ascii=False)
    return text.split(BRIEF_START)[1:]


def test_a_compaction_without_precompact_is_recovered_and_briefed_as_this_sessions(plain, tmp_path):
    without_hook(plain, "PreCompact")
    without_hook(plain, "SessionEnd")  # an interactive session: it has not ended before compacting
    session, mock = plain.session, plain.session.mock
    session_id = session.run("Please build the header parser.")["session_id"]
    session.run("Keep the public API stable.", resume=session_id)
    # Another session's savepoint, the project's newest when this one compacts: not its brief.
    theirs = write_lines(tmp_path / "theirs.jsonl", [said("t1", "Their work on the Pangolin module.")])
    saved = plain.precompact("savepoint", "--transcript", str(theirs), "--session-id", "theirs")
    assert "savepoint 1 saved" in saved.stdout, saved.stderr
    session.run("/compact", resume=session_id, debug_file=tmp_path / "debug.log")
    assert len(compaction_requests(mock)) == 1
    wait_for_worker(plain.project)
    [recovered] = [e for e in created(plain) if e.get("recovered")]
    assert recovered["recovered"] == "missed_precompact" and recovered["session_id"] == session_id
    held = {e.get("uuid") for e in history(plain, recovered)}
    entries = session.transcript(session_id)
    # Everything said; the resume brief's attachments (of the other session's savepoint) Claude
    # Code writes only with the compaction, after the hook that recovered.
    assert set(before_boundary(entries, said_only=True)) <= held
    document = json.loads(full_document(plain.project.path / recovered["snapshot_file"]))
    assert document["recovered"]["reason"] == "missed_precompact"
    # The compaction's brief: this session's recovered savepoint, not the project's newest.
    debug = (tmp_path / "debug.log").read_text()
    [compact_brief] = re.findall(r"Hook SessionStart:compact \(SessionStart\) success:.*", debug)
    assert recovered["sequence"] == 2 and "Restored from savepoint 2 of Trial #1" in compact_brief, compact_brief
    assert "Pangolin" not in compact_brief and "another session" not in compact_brief
    session.run("What next?", resume=session_id)
    *before, brief = briefs_in(mock.requests[-1])
    assert brief.startswith(" 2 of Trial #1: its snapshot holds the conversation before compaction, recovered"), brief
    # The resume that ran /compact was offered the project's newest, saying whose it is (a choice
    # README documents); Claude Code keeps that context across the compaction.
    assert [b.split(":")[0] for b in before] == [" 1 of Trial #1"] and "another session's savepoint" in before[0]


CUT_SHORT = """
import json, subprocess, sys
payload = json.load(sys.stdin)
lines = open(payload["transcript_path"], "rb").read().splitlines(keepends=True)
said = [i for i, line in enumerate(lines) if json.loads(line).get("type") == "assistant"]
copy = payload["transcript_path"] + ".lagging"
open(copy, "wb").writelines(lines[: said[-1]])
payload["transcript_path"] = copy
sys.exit(subprocess.run([sys.argv[1], "hook"], input=json.dumps(payload).encode()).returncode)
"""


def test_a_precompact_that_read_a_lagging_transcript_is_completed(plain, tmp_path):
    """PreCompact reads a copy without the session's last answer, as a transcript Claude Code had
    not finished writing: the archive still ends up with every entry before the boundary."""
    without_hook(plain, "SessionEnd")
    script = tmp_path / "cut_short.py"
    script.write_text(CUT_SHORT)
    settings = plain.project.path / ".claude" / "settings.json"
    installed = json.loads(settings.read_text())
    [handler] = installed["hooks"]["PreCompact"][0]["hooks"]
    handler["command"] = f"{sys.executable} {script} {PRECOMPACT}"
    settings.write_text(json.dumps(installed))
    session = plain.session
    session_id = session.run("Please build the header parser.")["session_id"]
    session.run("Keep the public API stable.", resume=session_id)
    session.run("/compact", resume=session_id)
    wait_for_worker(plain.project)
    first, completion = created(plain)
    assert (first["trigger"], completion.get("recovered")) == ("manual", "lagging_transcript")
    last_answer = [e for e in session.transcript(session_id) if e.get("type") == "assistant"][-1]["uuid"]
    assert last_answer not in {e.get("uuid") for e in history(plain, first)}, "the PreCompact copy lagged"
    held = {e.get("uuid") for event in created(plain) for e in history(plain, event)}
    assert set(before_boundary(session.transcript(session_id))) <= held


def test_a_session_that_ends_without_compacting_is_archived_by_session_end(plain, tmp_path):
    session = plain.session
    debug = tmp_path / "debug.log"
    session_id = session.run("Explain the retry policy.", debug_file=debug)["session_id"]
    wait_for_worker(plain.project)
    [saved] = created(plain)
    assert (saved["session_id"], saved["trigger"]) == (session_id, "session_end")
    said = [e["uuid"] for e in session.transcript(session_id) if e.get("type") in ("user", "assistant")]
    assert set(said) <= {e.get("uuid") for e in history(plain, saved)}
    # Claude Code cancels a SessionEnd hook past its timeout (2.1.332; its docs say 1.5 s): this one completed.
    command = f"{shlex.join(installed_command('hook'))} || exit 0"
    assert f"SessionEnd:other [{command}] completed with status 0" in debug.read_text()
    session.run("And the backoff?", resume=session_id)
    wait_for_worker(plain.project)
    first, second = created(plain)
    assert second["trigger"] == "session_end" and second["messages"] > first["messages"]
    # The second run went on from the first's read position: its snapshot shares the chunks.
    assert (
        set(history_chunks(plain, first)) & set(history_chunks(plain, second)) or len(history_chunks(plain, first)) == 1
    )


def test_session_end_can_be_turned_off(plain):
    config = plain.project.path / ".precompact.toml"
    config.write_text(config.read_text().replace("session_end = true", "session_end = false"))
    trust(plain.project.path)
    plain.session.run("Explain the retry policy.")
    wait_for_worker(plain.project)
    assert not (plain.project.logs / "precompact-savepoint.jsonl").exists()


def history_chunks(setup, event: dict) -> list[str]:
    document = json.loads((setup.project.path / event["snapshot_file"]).read_text())
    return [str(ref) for ref in document["conversation_chunks"]]


def test_two_compactions_in_a_row_store_and_recall_each_entry_once(plain):
    session = plain.session
    session_id = session.run("Remember the Zanzibar ledger.")["session_id"]
    session.run("/compact", resume=session_id)
    session.run("Now the Quokka report.", resume=session_id)
    session.run("/compact", resume=session_id)
    wait_for_worker(plain.project)
    newest = created(plain)[-1]
    uuids = [e["uuid"] for e in history(plain, newest) if "uuid" in e]
    assert len(uuids) == len(set(uuids)), "no entry stored twice"
    entries = session.transcript(session_id)
    assert set(before_boundary(entries)) <= set(uuids)
    recalled_once(plain, "Zanzibar", "Quokka")


def recalled_once(setup, *words: str) -> None:
    """Each word is found in exactly one saved entry, the user's prompt (Claude Code's own
    bookkeeping lines repeat each prompt: they are not entries recall returns)."""
    for word in words:
        found = setup.precompact("recall", word)
        assert found.returncode == 0, found.stderr
        hits = re.findall(r"^\[\d+:\d+\] .*$", found.stdout, re.MULTILINE)
        assert len(hits) == 1 and hits[0].endswith("· user"), found.stdout


TOO_LONG = "[[too-long]]"


class RefusedOnce(claude_code.Script):
    """Refuses the prompt naming TOO_LONG as too long until the conversation is compacted:
    Claude Code then compacts on its own, keeping the latest turns (a `preservedSegment`)."""

    def __call__(self, body: dict):
        messages = body.get("messages") or []
        last = claude_code.texts(messages[-1]) if messages else ""
        if (
            TOO_LONG in last
            and claude_code.COMPACTION_MARK not in last
            and "being continued" not in json.dumps(messages)
        ):
            return claude_code.ApiError(
                400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"
            )
        return super().__call__(body)


def test_compactions_in_one_process_after_a_kept_segment_store_and_recall_each_entry_once(tmp_path, claude_binary):
    """#92089's setting: a compaction that keeps a segment, then two /compact in one process."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    with claude_code.session_in(project, tmp_path / "home", claude_binary, script=RefusedOnce()) as setup:
        prompts = ["Remember the Zanzibar ledger.", "Check the Okapi count.", f"Go on. {TOO_LONG}", "/compact"]
        session_id = setup.session.run_in_one_process([*prompts, "Now the Quokka report.", "/compact"])
        entries = setup.session.transcript(session_id)
        kept = [e["compactMetadata"] for e in entries if e.get("subtype") == "compact_boundary"]
        assert len(kept) == 3, "the automatic compaction, then both /compact"
        assert "preservedSegment" in kept[0], "the automatic compaction kept the latest turns"
        wait_for_worker(setup.project)
        events = created(setup)
        held = [uuid for event in events for uuid in (e.get("uuid") for e in history(setup, event)) if uuid]
        newest = [e["uuid"] for e in history(setup, events[-1]) if "uuid" in e]
        assert len(newest) == len(set(newest)), "no entry stored twice"
        assert set(before_boundary(entries)) <= set(held)
        recalled_once(setup, "Zanzibar", "Okapi", "Quokka")


def test_import_archives_existing_sessions_oldest_first_and_again_only_what_is_new(plain):
    assert plain.precompact("uninstall").returncode == 0, "sessions run before precompact was installed"
    session = plain.session
    first, second, third = (session.run(f"Session {n} work.")["session_id"] for n in ("one", "two", "three"))
    folder = next((session.home / ".claude" / "projects").iterdir())
    subagents = folder / first / "subagents"
    subagents.mkdir(parents=True)
    sidechain = {
        "type": "user",
        "uuid": "side-1",
        "isSidechain": True,
        "message": {"role": "user", "content": "Sub-task Okapi."},
    }
    (subagents / "agent-a1.jsonl").write_text(json.dumps(sidechain) + "\n")
    done = plain.precompact("import", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [(s["session_id"], s["outcome"], s["sequence"]) for s in result["sessions"]] == [
        (first, "saved", 1),
        (second, "saved", 2),
        (third, "saved", 3),
    ]
    assert "3 session(s) found: 3 saved" in done.stderr and "[1/3]" in done.stderr
    one = created(plain)[0]
    assert (one["session_id"], one["trigger"]) == (first, "import")
    assert "side-1" in {e.get("uuid") for e in history(plain, one)}, "the sidechain is kept with its session"
    session.run("More on two.", resume=second)
    again = plain.precompact("import")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "3 session(s) found: 1 saved, 2 already archived, 0 without conversation, 0 failed"
    assert [(e["session_id"], e["sequence"]) for e in created(plain)][3:] == [(second, 4)]
    wait_for_worker(plain.project)


# -- the hook and the CLI alone (no Claude Code) ----------------------------------------------


def said(uuid: str, text: str, kind: str = "user") -> dict:
    return {"type": kind, "uuid": uuid, "message": {"role": kind, "content": text}}


def ran_in(directory: Path, entry: dict) -> dict:
    """`entry` as Claude Code writes it in a session run in `directory`."""
    return {**entry, "cwd": str(directory)}


def boundary(uuid: str) -> dict:
    return {"type": "system", "subtype": "compact_boundary", "uuid": uuid, "content": "Conversation compacted"}


def write_lines(path: Path, entries: list[dict]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def context_of(done) -> str:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"] if done.stdout.strip() else ""


@pytest.fixture
def project(tmp_path):
    return new_project(tmp_path, "project", git_layer=False, chain_layer=False)


def test_after_a_compaction_the_brief_is_never_another_sessions(project, tmp_path):
    theirs = write_lines(tmp_path / "theirs.jsonl", [said("t1", "Their work on the Pangolin module.")])
    assert hook(payload("PreCompact", project.path, theirs, session_id="theirs"), cwd=project.path).returncode == 0
    mine = write_lines(tmp_path / "mine.jsonl", [])
    compacted = hook(payload("SessionStart", project.path, mine, session_id="mine", source="compact"), cwd=project.path)
    assert context_of(compacted) == "", "another session's savepoint is not this one's"
    resumed = hook(payload("SessionStart", project.path, mine, session_id="mine", source="resume"), cwd=project.path)
    brief = context_of(resumed)
    first_line = brief.splitlines()[0]
    assert re.fullmatch(
        rf'{re.escape(BRIEF_START)} 1 of Trial #1: this is another session\'s savepoint \(session "theirs", '
        r"saved \d+ seconds? ago\), not this session's; its snapshot holds the full conversation before compaction\.",
        first_line,
    ), first_line
    assert "> Their work on the Pangolin module." in brief


def test_a_savepoint_without_a_conversation_is_never_briefed_and_resurrect_skips_it(project, tmp_path):
    theirs = write_lines(tmp_path / "theirs.jsonl", [said("t1", "Keep the Pangolin module.")])
    assert hook(payload("PreCompact", project.path, theirs, session_id="theirs"), cwd=project.path).returncode == 0
    empty = precompact(project.path, "savepoint", "--no-transcript")
    assert "savepoint 2 saved" in empty.stdout, empty.stderr
    brief = context_of(hook(payload("SessionStart", project.path, source="resume"), cwd=project.path))
    assert brief.startswith(f"{BRIEF_START} 1 of Trial #1"), "the one with a conversation"
    found = precompact(project.path, "resurrect", "--format", "json")
    assert json.loads(found.stdout)["sequence"] == 1
    assert found.stderr.strip() == "skipped the 1 newer savepoint(s) after 1: they hold no conversation"


def test_savepoint_without_a_transcript_finds_the_sessions_or_refuses(project, tmp_path):
    home = tmp_path / "home"

    def savepoint(*args: str) -> subprocess.CompletedProcess:
        return precompact(project.path, "savepoint", *args, home=home)

    refused = savepoint()
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1
    assert "no Claude Code transcript of any session run in" in refused.stderr and "--transcript PATH" in refused.stderr
    folder = home / ".claude" / "projects" / project_folder(str(project.path))
    folder.mkdir(parents=True)
    write_lines(folder / "older.jsonl", [ran_in(project.path, said("o1", "Older session."))])
    os.utime(folder / "older.jsonl", (1, 1))
    write_lines(folder / "newer.jsonl", [ran_in(project.path, said("n1", "Newer session."))])
    saved = savepoint()
    assert "savepoint 1 saved" in saved.stdout, saved.stderr
    [event] = [e for e in savepoint_log.read(project.logs).events if e["event"] == "SAVEPOINT_CREATED"]
    assert (event["session_id"], event["messages"]) == ("newer", 1)
    assert "no Claude Code transcript of session gone" in savepoint("--session-id", "gone").stderr


def test_only_the_sessions_run_in_the_project_are_imported_or_saved_from_claude_codes_shared_folder(tmp_path):
    """Claude Code keeps the sessions of my.app, my-app and my/app in one folder: each session's
    own `cwd` says whose it is, and only this project's (run in it or below it) are read."""
    home = tmp_path / "home"
    project = new_project(tmp_path, "my.app", git_layer=False, chain_layer=False)
    folder = home / ".claude" / "projects" / project_folder(str(project.path))
    folder.mkdir(parents=True)
    assert folder.name.endswith("-my-app")
    preamble = {"type": "summary", "summary": "A title line, written before any cwd"}
    mine = write_lines(folder / "mine.jsonl", [preamble, ran_in(project.path, said("m1", "Our Okapi plan."))])
    os.utime(mine, (1, 1))
    below = write_lines(folder / "below.jsonl", [ran_in(project.path / "src", said("b1", "Below the root."))])
    os.utime(below, (2, 2))
    for name, directory in (
        ("sibling", tmp_path / "my-app"),
        ("nested", tmp_path / "my" / "app"),
        ("climbing", project.path / ".." / "my-app"),
        ("relative", Path("my.app")),
    ):
        write_lines(folder / f"{name}.jsonl", [ran_in(directory, said(f"{name}1", "Client Zebra secret plan."))])
    write_lines(folder / "nameless.jsonl", [said("x1", "Client Zebra secret plan, no cwd.")])

    assert capture.transcripts(project.path, home) == [mine, below]
    imported = precompact(project.path, "import", "--json", home=home)
    assert imported.returncode == 0, imported.stderr
    assert [s["session_id"] for s in json.loads(imported.stdout)["sessions"]] == ["mine", "below"]
    assert "Zebra" not in precompact(project.path, "recall", "Zebra", home=home).stdout
    saved = precompact(project.path, "savepoint", "--force", home=home)
    assert "savepoint 3 saved" in saved.stdout, saved.stderr
    made = [e for e in savepoint_log.read(project.logs).events if e["event"] == "SAVEPOINT_CREATED"]
    assert [e["session_id"] for e in made] == ["mine", "below", "below"], "the newest of its own sessions"
    os.utime(folder / "sibling.jsonl", (time.time() - 25 * 86_400,) * 2)  # Claude Code deletes it soon
    checks = json.loads(precompact(project.path, "doctor", "--json", home=home).stdout)
    assert [c["ok"] for c in checks if c["check"] == "sessions"] == [True], "another project's session is not ours"


def test_sessions_are_read_where_claude_config_dir_puts_them_and_never_from_the_project(tmp_path):
    """Claude Code 2.1.332 with CLAUDE_CONFIG_DIR set keeps its sessions in
    `$CLAUDE_CONFIG_DIR/projects/` (seen with the real CLI), and hands the variable to its Bash
    tool, whose commands (import, doctor, savepoint) read them there. An empty or relative value
    is a folder in the directory Claude Code starts in (seen: `<cwd>/projects/`), the project's
    to write, as is one in the project: refused in one line naming the fix, never read, and never
    replaced by ~/.claude (a folder that Claude Code does not read then); so is any value in another
    agent's session, whose environment the project can set."""
    home = tmp_path / "home"
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    folder = project_folder(str(project.path))
    configured = tmp_path / "claude-config"
    for root, name in (
        (configured, "configured"),
        (home / ".claude", "default"),
        (project.path / ".claude-config", "planted"),
        (project.path / "claude-config", "relative"),
        (project.path, "empty"),
    ):
        (root / "projects" / folder).mkdir(parents=True)
        write_lines(root / "projects" / folder / f"{name}.jsonl", [ran_in(project.path, said(name, f"Said {name}."))])

    def found(value: str, **marker: str) -> list[str]:
        done = precompact(project.path, "import", "--json", env={"CLAUDE_CONFIG_DIR": value, **marker}, home=home)
        assert done.returncode == 0, done.stderr
        return [s["session_id"] for s in json.loads(done.stdout)["sessions"]]

    assert capture.transcripts(project.path, home) == [home / ".claude" / "projects" / folder / "default.jsonl"]
    assert found(str(configured)) == ["configured"]
    assert found(str(configured), CLAUDECODE="1") == ["configured"], "Claude Code's Bash tool"
    before = [s.session_id for s in savepoint_log.savepoints(project.path / "logs")]
    for value, marker in (
        (str(configured), {"GEMINI_CLI": "1"}),
        (str(project.path / ".claude-config"), {}),
        ("claude-config", {}),
        ("", {}),
    ):
        env = {"CLAUDE_CONFIG_DIR": value, **marker}
        done = precompact(project.path, "import", "--json", env=env, home=home)
        assert done.returncode == 1 and "CLAUDE_CONFIG_DIR" in json.loads(done.stdout)["error"], (value, done.stdout)
        assert [s.session_id for s in savepoint_log.savepoints(project.path / "logs")] == before, (
            f"nothing read, from ~/.claude either: {value}"
        )


def test_recovery_reads_only_up_to_the_boundary_and_not_twice(project, tmp_path):
    transcript = write_lines(
        tmp_path / "s.jsonl",
        [
            said("u1", "Build the compact_boundary parser."),  # quoting the word makes no boundary
            said("a1", "Done.", "assistant"),
            boundary("b1"),
            {**said("u2", "Summary: the parser is built."), "isCompactSummary": True},
        ],
    )
    assert capture.boundaries(transcript) == [len(transcript.read_bytes().split(b'{"type": "system"')[0])]
    event = payload("PostCompact", project.path, transcript, session_id="s")
    assert hook(event, cwd=project.path).returncode == 0
    [made] = [e for e in savepoint_log.read(project.logs).events if e["event"] == "SAVEPOINT_CREATED"]
    assert (made["recovered"], made["messages"], made["transcript_end"]) == (
        "missed_precompact",
        2,
        capture.boundaries(transcript)[0],
    )
    assert hook(event, cwd=project.path).returncode == 0
    assert [e["event"] for e in savepoint_log.read(project.logs).events].count("SAVEPOINT_CREATED") == 1
    summaries = [e for e in savepoint_log.read(project.logs).events if e["event"] == "COMPACT_SUMMARY"]
    assert [e["sequence"] for e in summaries] == [1, 1], "the summary goes to this session's savepoint"
    other = hook(payload("PostCompact", project.path, None, session_id="other"), cwd=project.path)
    assert "this session has no savepoint" in other.stderr.decode()
    assert [e["event"] for e in savepoint_log.read(project.logs).events].count("COMPACT_SUMMARY") == 2


def test_session_end_saves_only_what_was_said_since_the_last_savepoint(project, tmp_path):
    transcript = write_lines(tmp_path / "s.jsonl", [said("u1", "Explain the retry policy.")])
    ended = payload("SessionEnd", project.path, transcript, session_id="s", reason="other")
    for _ in range(2):
        done = hook(ended, cwd=project.path)
        assert done.returncode == 0 and done.stdout == b"", done.stderr
    nothing = write_lines(tmp_path / "quiet.jsonl", [{"type": "queue-operation", "operation": "enqueue"}])
    assert hook(payload("SessionEnd", project.path, nothing, session_id="q"), cwd=project.path).returncode == 0
    [made] = [e for e in savepoint_log.read(project.logs).events if e["event"] == "SAVEPOINT_CREATED"]
    assert (made["session_id"], made["trigger"]) == ("s", "session_end")


def doctor(project: Path, home: Path, claude: Path, *args: str) -> subprocess.CompletedProcess:
    path = f"{Path(sys.executable).parent}{os.pathsep}{claude.parent}{os.pathsep}{os.environ['PATH']}"
    return precompact(project, "doctor", *args, env={"PATH": path}, home=home)


def test_doctor_names_each_fault_with_its_fix_and_passes_a_sound_setup(tmp_path, claude_binary):
    from precompact.config import settings as configuration

    home = tmp_path / "home"
    home.mkdir()
    sound = new_project(tmp_path, "sound", git_layer=False, chain_layer=False)
    assert precompact(sound.path, "install", home=home).returncode == 0
    healthy = doctor(sound.path, home, claude_binary)
    assert healthy.returncode == 0 and "✗" not in healthy.stdout, healthy.stdout
    assert "✓ Claude Code: 2.1.332" in healthy.stdout

    faulty = new_project(tmp_path, "faulty", git_layer=True, chain_layer=True)  # its cluster: a closed port
    for scope in ("project", "user"):
        assert precompact(faulty.path, "install", "--scope", scope, home=home).returncode == 0
    configuration.load(faulty.path).identity.unlink()
    shutil.rmtree(faulty.remote)
    folder = home / ".claude" / "projects" / project_folder(str(faulty.path))
    folder.mkdir(parents=True)
    old = write_lines(
        folder / "old-session.jsonl", [ran_in(faulty.path, said("o1", "An old session nobody archived."))]
    )
    os.utime(old, (time.time() - 25 * 86_400,) * 2)
    recent = write_lines(tmp_path / "recent.jsonl", [said("r1", "A session saved while the remote was gone.")])
    saved = precompact(faulty.path, "savepoint", "--transcript", str(recent), home=home)
    assert "savepoint 1 saved" in saved.stdout and saved.returncode == 3, (
        "saved, its push failed: exit 3, saved but not on every layer"
    )
    # A Claude Code release whose PreCompact skips auto-compactions, installed as its native installer does.
    release = tmp_path / "claude-versions" / "2.1.110"
    release.parent.mkdir()
    release.write_text("#!/bin/sh\n")  # doctor reads the version from where it lies, never runs it
    release.chmod(0o755)
    (tmp_path / "old-claude").mkdir()
    (tmp_path / "old-claude" / "claude").symlink_to(release)
    found = doctor(faulty.path, home, tmp_path / "old-claude" / "claude")
    assert found.returncode == 1
    failed = {line.split(":", 1)[0][2:]: line for line in found.stdout.splitlines() if line.startswith("✗")}
    assert set(failed) == {
        "hooks",
        "Claude Code",
        "cluster and balance",
        "git remote",
        "encryption identity",
        "worker",
        "sessions",
    }, found.stdout
    settings = [faulty.path / ".claude" / "settings.json", home / ".claude" / "settings.json"]
    assert f"installed twice (project settings ({settings[0]}), user settings ({settings[1]}))" in failed["hooks"]
    assert "2.1.110: PreCompact does not fire on auto-compaction" in failed["Claude Code"]
    assert "1 savepoint(s) failed a layer (first: 1)" in failed["worker"]
    assert (
        "fix: precompact import" in failed["sessions"]
        and "fix: precompact key import FILE" in failed["encryption identity"]
    )
    as_json = json.loads(doctor(faulty.path, home, tmp_path / "old-claude" / "claude", "--json").stdout)
    assert {c["check"] for c in as_json if not c["ok"]} == set(failed) and all(c["fix"] for c in as_json if not c["ok"])


def test_a_second_missed_compaction_is_recovered_past_the_first_ones_boundary(project, tmp_path):
    """Claude Code writes a boundary after the hooks: the first recovery stops before it, and the
    next compaction's recovery takes everything said since, across that boundary."""
    transcript = write_lines(tmp_path / "s.jsonl", [said("u1", "First part."), said("a1", "Ok.", "assistant")])
    compacted = payload("SessionStart", project.path, transcript, session_id="s", source="compact")
    assert hook(compacted, cwd=project.path).returncode == 0
    with transcript.open("a") as f:
        for entry in (
            {"type": "mode", "mode": "default"},  # Claude Code's own line, between the hooks and the boundary
            boundary("b1"),
            {**said("c1", "Summary of the first part."), "isCompactSummary": True},
            said("u2", "Second part."),
            said("a2", "Done.", "assistant"),
        ):
            f.write(json.dumps(entry) + "\n")
    assert hook(compacted, cwd=project.path).returncode == 0
    first, second = [e for e in savepoint_log.read(project.logs).events if e["event"] == "SAVEPOINT_CREATED"]
    assert first["transcript_end"] < capture.boundaries(transcript)[0]
    assert (second["recovered"], second["transcript_end"]) == ("missed_precompact", transcript.stat().st_size)
    assert {"u2", "a2"} <= {
        e.get("uuid") for e in json.loads(full_document(project.path / second["snapshot_file"]))["conversation_history"]
    }


def test_history_claude_code_appends_again_is_stored_once_and_recalled_once(project, tmp_path):
    """A second /compact in one process (anthropics/claude-code #92089) appends a copy of the
    history before the first compaction, each row with its own uuid, and parents what follows to
    the copy. The 2.1.332 CLI does not (test_two_compactions_in_a_row_...), so the transcript is
    written as that issue shows it."""

    def row(uuid: str, text: str, kind: str = "user", parent: str | None = None) -> dict:
        return {**said(uuid, text, kind), "parentUuid": parent, "timestamp": f"2026-12-02T06:00:0{len(uuid)}Z"}

    def queued(text: str) -> dict:  # Claude Code's bookkeeping line that repeats each prompt
        return {"type": "queue-operation", "operation": "enqueue", "content": text}

    first = [
        queued("Remember the Zanzibar ledger."),
        row("u1", "Remember the Zanzibar ledger."),
        row("a1", "Noted.", "assistant", "u1"),
    ]
    transcript = write_lines(tmp_path / "s.jsonl", first)
    compacting = payload("PreCompact", project.path, transcript, session_id="s", trigger="manual")
    assert hook(compacting, cwd=project.path).returncode == 0
    kept = {"headUuid": "a1", "anchorUuid": "c1", "tailUuid": "a1"}
    later = [
        {**boundary("b1"), "compactMetadata": {"trigger": "manual", "preservedSegment": kept}},
        {**row("c1", "Summary: a ledger.", parent="b1"), "isCompactSummary": True},
        queued("Now the Quokka report."),
        row("u2", "Now the Quokka report.", parent="a1"),
        row("a2", "Noted.", "assistant", "u2"),
        *(dict(e, parentUuid="replayed") for e in first[1:]),  # the copy
        queued("Then the Okapi plan."),
        row("u3", "Then the Okapi plan.", parent="a1"),
        row("a3", "Noted.", "assistant", "u3"),
    ]
    with transcript.open("a") as f:
        f.writelines(json.dumps(e) + "\n" for e in later)
    assert hook(compacting, cwd=project.path).returncode == 0
    events = [e for e in savepoint_log.read(project.logs).events if e["event"] == "SAVEPOINT_CREATED"]
    # The user's and the model's turns: the compaction summary (c1) and the copy are not messages.
    assert [e["messages"] for e in events] == [2, 6]
    document = json.loads(full_document(project.path / events[-1]["snapshot_file"]))
    uuids = [e.get("uuid") for e in document["conversation_history"] if "uuid" in e]
    assert uuids == ["u1", "a1", "b1", "c1", "u2", "a2", "u3", "a3"], "each entry once, the copy left out"
    assert document["transcript"]["reappended_lines"] == 2
    # The second savepoint went on from the first's read position: a read from the start agrees.
    shutil.rmtree(project.logs / "precompact-resume")
    with transcript.open("a") as f:
        f.write(json.dumps(row("u4", "One more.", parent="a3")) + "\n")
    assert hook(compacting, cwd=project.path).returncode == 0
    newest = [e for e in savepoint_log.read(project.logs).events if e["event"] == "SAVEPOINT_CREATED"][-1]
    again = json.loads(full_document(project.path / newest["snapshot_file"]))["conversation_history"]
    assert [e.get("uuid") for e in again if "uuid" in e] == [*uuids, "u4"]
    for word in ("Zanzibar", "Quokka", "Okapi"):
        found = precompact(project.path, "recall", word)
        assert found.returncode == 0, found.stderr
        hits = re.findall(r"^\[\d+:\d+\] .*$", found.stdout, re.MULTILINE)
        assert len(hits) == 1 and hits[0].endswith("· user"), found.stdout
    # A session whose transcript ends with copies: one savepoint at its end, not one at each end.
    with transcript.open("a") as f:
        f.writelines(json.dumps(dict(e, parentUuid="replayed")) + "\n" for e in first[1:])
    ended = payload("SessionEnd", project.path, transcript, session_id="s", reason="other")
    for _ in range(2):
        assert hook(ended, cwd=project.path).returncode == 0
    *_, before, last = [e for e in savepoint_log.read(project.logs).events if e["event"] == "SAVEPOINT_CREATED"]
    assert (before["trigger"], last["trigger"], last["messages"]) == ("manual", "session_end", before["messages"])
    shown = precompact(project.path, "show", "1:1")  # the bookkeeping line: kept, shown as stored
    assert (
        shown.returncode == 0 and '> {"content":"Remember the Zanzibar ledger.","operation":"enqueue"' in shown.stdout
    )
