"""Bad input, through the real `precompact` binary: every case gets a one-line message naming
the problem, never a traceback; hook mode exits 0 (and never blocks Claude Code); and the
savepoints made before stay intact and in the chain (nothing lost)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import time

import pytest

from precompact.chain import wire as chain
from precompact.config.settings import DEFAULT_COMPACT_ADVICE
from precompact.local import savepoint_log, snapshot
from precompact.ops import compaction
from support.commands import hook, precompact
from support.fault_trials import check_layer_1
from support.localnet import LocalnetProcess
from support.misbehaving_rpc import MisbehavingRpc
from support.projects import Project, approve_as_is, fund, new_project, trust
from support.transcript_gen import generate, payload, saved_sequence


@pytest.fixture
def established(tmp_path):
    """A project (git and chain off) with two intact savepoints; `intact` maps their hashes."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 20_000, project=project.path)
    for _ in range(2):
        assert hook(cwd=project.path, stdin=payload("PreCompact", project.path, transcript.path)).returncode == 0
    intact: dict[int, str] = {}
    assert check_layer_1(project, intact) == ([], 0) and len(intact) == 2
    return project, intact


def one_line(text: str | bytes) -> str:
    text = text.decode() if isinstance(text, bytes) else text
    assert "Traceback" not in text
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


def assert_nothing_lost(project: Project, intact: dict[int, str]) -> None:
    problems, lost = check_layer_1(project, intact)
    assert (problems, lost) == ([], 0)


def saved_message(result: subprocess.CompletedProcess) -> str:
    """PreCompact's answer: plain text, which Claude Code hands the summariser; a failure also
    has one line for the user on stderr."""
    assert result.returncode == 0
    assert result.stderr == b"" or result.stderr.startswith(b"precompact: nothing saved before this compaction: ")
    return result.stdout.decode()


@pytest.mark.parametrize(
    "stdin, expected",
    [
        (b"", "stdin is not JSON"),
        (b"{not json", "stdin is not JSON"),
        (b"\xff\xfe\x00", "stdin is not JSON"),
        (b"[1, 2]", "must be a JSON object"),
        ({"cwd": "."}, "hook_event_name"),
        ({"hook_event_name": 5, "cwd": "."}, "hook_event_name"),
        ({"hook_event_name": "PreCompact"}, 'no "cwd" string'),
        ({"hook_event_name": "PreCompact", "cwd": 7}, 'no "cwd" string'),
        ({"hook_event_name": "Stop", "cwd": "."}, "event 'Stop' is not handled"),
    ],
)
def test_malformed_hook_input_is_one_line_on_stderr_and_exit_0(established, stdin, expected):
    project, intact = established
    result = hook(cwd=project.path, stdin=stdin)
    assert result.returncode == 0 and result.stdout == b""
    assert expected in one_line(result.stderr)
    assert_nothing_lost(project, intact)


@pytest.mark.parametrize(
    "field, value",
    [("transcript_path", 5), ("trigger", ["auto"]), ("session_id", {"id": 1}), ("custom_instructions", 3.5)],
)
def test_wrong_typed_optional_fields_still_save(established, field, value):
    project, intact = established
    result = hook(cwd=project.path, stdin={**payload("PreCompact", project.path, None), field: value})
    # A transcript_path that is not a string names no transcript: nothing to save (docs/cli.md).
    assert saved_sequence(saved_message(result)) == (None if field == "transcript_path" else 3)
    assert_nothing_lost(project, intact)


def written_by_flush(project: Project) -> int:
    """`precompact flush` writes what PreCompact queued (or finds the worker wrote it): the
    sequence of the newest savepoint then, with nothing left queued."""
    flushed = precompact(project.path, "flush")
    assert flushed.returncode == 0, flushed.stdout + flushed.stderr
    assert not list((project.logs / snapshot.QUEUE_DIR).iterdir())
    return savepoint_log.savepoints(project.logs)[-1].sequence


def latest_snapshot(project: Project) -> dict:
    newest = max((project.logs / snapshot.SAVES_DIR).glob("snapshot_*.json"))
    return json.loads(newest.read_bytes())


def test_unusable_transcripts_save_what_they_hold_and_missing_ones_nothing(established, tmp_path):
    project, intact = established
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(os.urandom(1_000_000))
    for transcript, problem in [(tmp_path / "missing.jsonl", "cannot be read"), (tmp_path, "is not a file")]:
        said = saved_message(hook(cwd=project.path, stdin=payload("PreCompact", project.path, transcript)))
        assert saved_sequence(said) is None and problem in said, "no empty savepoint (test_hook_audience.py)"
    # 1 MB is more than PreCompact writes itself (config/hook_timeouts.pre_compact_writes): queued.
    said = saved_message(hook(cwd=project.path, stdin=payload("PreCompact", project.path, binary)))
    assert said.rstrip("\n") == compaction.BACKGROUND_NOTE + " " + DEFAULT_COMPACT_ADVICE, said
    assert written_by_flush(project) == 3
    scan = latest_snapshot(project)["transcript"]
    assert scan["entries"] == 0 and scan["malformed_lines"] + scan["invalid_utf8_lines"] > 0
    assert_nothing_lost(project, intact)


@pytest.mark.parametrize("valid_json", [False, True])
def test_a_single_200_mb_line_is_answered_in_time_and_saved(established, tmp_path, valid_json):
    project, intact = established
    transcript = tmp_path / "huge.jsonl"
    with transcript.open("wb") as f:
        f.write(b'{"type":"user","message":{"content":"' if valid_json else b"x")
        chunk = b"a" * 10_000_000
        for _ in range(20):
            f.write(chunk)
        f.write(b'"}}\n' if valid_json else b"\n")
    # Claude Code kills a hook after 60 s: `hook` raises TimeoutExpired past that.
    result = hook(cwd=project.path, stdin=payload("PreCompact", project.path, transcript), timeout=60)
    # Queued (far more than PreCompact writes itself), and written by the worker or `flush`.
    assert saved_message(result).rstrip("\n") == compaction.BACKGROUND_NOTE + " " + DEFAULT_COMPACT_ADVICE
    assert written_by_flush(project) == 3
    assert_nothing_lost(project, intact)


@pytest.mark.parametrize(
    "mangle, expected",
    [
        (lambda text: text + "\n[[[bad", "is not valid TOML"),
        (lambda text: text.replace("git = false", 'git = "yes"'), "layers.git must be true or false, got 'yes'"),
        (lambda text: text.replace('instance = "Trial #1"', "instance = 42"), "instance must be a string, got 42"),
        (
            lambda text: text.replace("brief_budget = 4000", 'brief_budget = "lots"'),
            "hooks.brief_budget must be a whole number of characters, between 1500 and 9500, got 'lots'",
        ),
    ],
)
def test_an_invalid_configuration_is_named_in_hook_and_cli(established, mangle, expected):
    project, intact = established
    config = project.path / ".precompact.toml"
    config.write_text(mangle(config.read_text()))
    refused = precompact(project.path, "trust", "--yes")
    assert refused.returncode != 0 and expected in one_line(refused.stderr)
    approve_as_is(project.path)
    message = saved_message(hook(cwd=project.path, stdin=payload("PreCompact", project.path, None)))
    assert message.startswith("precompact could not save the transcript before this compaction") and expected in message
    assert expected in (project.logs / "precompact-errors.log").read_text()
    for command in ("savepoint", "flush", "status", "verify"):
        result = precompact(project.path, command)
        assert result.returncode != 0
        assert expected in one_line(result.stderr + result.stdout)
    doctor = precompact(project.path, "doctor", "--json")
    [check] = [c for c in json.loads(doctor.stdout) if c["check"] == "configuration"]
    assert doctor.returncode == 1 and not check["ok"] and expected in check["detail"]
    if expected == "is not valid TOML":
        assert check["fix"] == "fix the file or re-run `precompact init --force`"
    else:  # a value precompact cannot use: the file, the key, the fix
        path = project.path.resolve() / ".precompact.toml"
        fix = f" in that file, then run `precompact trust` in {project.path.resolve()}"
        status = precompact(project.path, "status", "--json")
        assert json.loads(status.stdout)["error"].startswith(f"{path}: {expected}")
        assert json.loads(status.stdout)["error"].endswith(fix)
        assert check["detail"].startswith(f"{path}: {expected}") and check["fix"].endswith(fix)
    assert_nothing_lost(project, intact)


def chain_project(established, cluster: str) -> Project:
    project, _ = established
    config = project.path / ".precompact.toml"
    config.write_text(config.read_text().replace("chain = false", "chain = true"))
    project.set_cluster(cluster)
    return project


def layer_3_line(result: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in result.stdout + result.stderr
    [line] = [line for line in result.stdout.splitlines() if "Layer 3" in line]
    return line


@pytest.mark.parametrize(
    "setup, expected",
    [
        (lambda p: p.keypair_file.unlink(), "does not exist; run `precompact init` or set chain.keypair"),
        (lambda p: p.keypair_file.write_text("not json"), "unreadable or not JSON"),
        (lambda p: p.keypair_file.write_text("[1, 2, 3]"), "not a Solana CLI keypair"),
        (lambda p: p.keypair_file.write_text(json.dumps([0] * 64)), "not a valid ed25519 keypair"),
    ],
)
def test_a_missing_or_malformed_keypair_queues_with_one_line(established, setup, expected):
    _, intact = established
    project = chain_project(established, "http://127.0.0.1:9")
    setup(project)
    result = precompact(project.path, "flush")
    assert result.returncode == 3  # queued
    assert expected in layer_3_line(result)
    assert (
        saved_sequence(saved_message(hook(cwd=project.path, stdin=payload("PreCompact", project.path, None))))
        is not None
    )
    assert_nothing_lost(project, intact)


def test_a_wrong_program_id_is_refused_before_any_rpc(established):
    _, intact = established
    project = chain_project(established, "http://127.0.0.1:9")
    result = precompact(project.path, "flush", env={"PRECOMPACT_PROGRAM_ID": "11111111111111111111111111111111"})
    assert result.returncode == 3  # queued
    assert "is not the program this client was built for" in layer_3_line(result)
    assert_nothing_lost(project, intact)


# How the endpoint answers in each mode; "silent" never answers.
BAD_ANSWERS = {
    "http_500": (500, b"internal error"),
    "garbage": (200, b"<html>not json</html>"),
    "rpc_error": (200, b'{"jsonrpc":"2.0","id":0,"error":{"code":-32005,"message":"Node is unhealthy"}}'),
}


@pytest.mark.parametrize(
    "mode, expected",
    [
        ("http_500", "500"),
        ("garbage", "cluster"),
        ("rpc_error", "Node is unhealthy"),
        pytest.param("silent", "no whole answer", marks=pytest.mark.slow),
    ],
)
def test_rpc_errors_and_timeouts_queue_with_one_line_and_never_block_session_start(established, mode, expected):
    _, intact = established
    server = MisbehavingRpc(None if mode == "silent" else lambda _path: BAD_ANSWERS[mode])
    try:
        project = chain_project(established, server.url)
        result = precompact(project.path, "flush")
        assert result.returncode == 3  # queued
        line = layer_3_line(result)
        assert "queued" in line and expected in line
        began = time.monotonic()
        started = hook(cwd=project.path, stdin=payload("SessionStart", project.path, source="resume"))
        assert time.monotonic() - began < 15
        assert started.returncode == 0 and started.stderr == b""
        context = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "chain – pending (Layer 3 queued" in context and "Traceback" not in context
    finally:
        server.stop()
    assert_nothing_lost(project, intact)


def localnet_holding(tmp_path, project: Project, data: bytes) -> LocalnetProcess:
    """A localnet whose state already has a system-owned account at the project's record address
    (lamports sent there by someone else; data only if the address were not a PDA)."""
    record, _ = chain.record_address(project.authority().pubkey(), chain.instance_id(project.instance))
    state = tmp_path / "foreign-state.json"
    foreign = {
        "lamports": 10_000_000,
        "owner": SYSTEM_PROGRAM,
        "executable": False,
        "rent_epoch": 0,
        "data_base64": base64.b64encode(data).decode(),
    }
    state.write_text(json.dumps({"accounts": {str(record): foreign}}))
    node = LocalnetProcess(tmp_path, state_file=state)
    node.start()
    return node


SYSTEM_PROGRAM = "11111111111111111111111111111111"


@pytest.mark.localnet
def test_a_record_address_owned_by_another_program_is_refused(established, tmp_path):
    project, intact = established
    node = localnet_holding(tmp_path, project, bytes(556))
    try:
        chain_project(established, node.url)
        result = precompact(project.path, "flush")
        assert result.returncode == 3  # queued
        assert f"is owned by {SYSTEM_PROGRAM}, not the precompact program" in layer_3_line(result)
        inspected = precompact(project.path, "inspect")
        assert inspected.returncode == 1 and "not the precompact program" in one_line(
            inspected.stderr + inspected.stdout
        )
    finally:
        node.stop()
    assert_nothing_lost(project, intact)


@pytest.mark.localnet
def test_lamports_sent_to_the_record_address_before_initialize_do_not_block_it(established, tmp_path):
    # Anyone can send lamports to the future record address; initialize tops them up to rent
    # exemption and takes the address over, so both savepoints still land and verify.
    project, intact = established
    node = localnet_holding(tmp_path, project, b"")
    try:
        chain_project(established, node.url)
        fund(node.url, project.authority())
        result = precompact(project.path, "flush")
        assert result.returncode == 0, result.stdout + result.stderr
        assert layer_3_line(result) == "✓ Layer 3: up to date"
        inspected = precompact(project.path, "inspect", "--json")
        assert inspected.returncode == 0, inspected.stderr
        record = json.loads(inspected.stdout)
        assert (record["sequence"], record["signature_valid"]) == (2, True)
        assert record["snapshot_hash"] == intact[2]
    finally:
        node.stop()
    assert_nothing_lost(project, intact)


def git_project(established, prepare) -> Project:
    project, _ = established
    config = project.path / ".precompact.toml"
    config.write_text(config.read_text().replace("git = false", "git = true"))
    trust(project.path)
    prepare(project)
    return project


def test_git_layer_in_a_directory_that_is_not_a_repository(established):
    _, intact = established
    project = git_project(
        established,
        lambda p: subprocess.run(["mv", str(p.path / ".git"), str(p.path.parent / "moved.git")], check=True),
    )
    result = precompact(project.path, "flush")
    assert result.returncode == 3  # queued
    [line] = [line for line in result.stdout.splitlines() if "Layer 2" in line]
    assert "not a git repository" in line
    assert (
        saved_sequence(saved_message(hook(cwd=project.path, stdin=payload("PreCompact", project.path, None))))
        is not None
    )
    assert_nothing_lost(project, intact)


def test_detached_head_still_backs_up(established):
    _, intact = established
    project = git_project(
        established,
        lambda p: [
            subprocess.run(["git", *args], cwd=p.path, check=True, capture_output=True)
            for args in (["commit", "-q", "--allow-empty", "-m", "x"], ["checkout", "-q", "--detach"])
        ],
    )
    result = precompact(project.path, "flush")
    assert result.returncode == 0, result.stdout
    assert precompact(project.path, "verify", "--all").returncode == 0
    assert_nothing_lost(project, intact)


def test_a_sha256_repository_backs_up(tmp_path):
    project = new_project(tmp_path, "p", git_layer=True, chain_layer=False)
    for path in (project.path, project.remote):
        subprocess.run(["rm", "-rf", str(path / ".git") if path == project.path else str(path)], check=True)
    subprocess.run(["git", "init", "-q", "--bare", "--object-format=sha256", str(project.remote)], check=True)
    for args in (
        ["init", "-q", "--object-format=sha256", "-b", "main"],
        ["remote", "add", "origin", str(project.remote)],
    ):
        subprocess.run(["git", *args], cwd=project.path, check=True)
    assert (
        saved_sequence(saved_message(hook(cwd=project.path, stdin=payload("PreCompact", project.path, None))))
        is not None
    )
    result = precompact(project.path, "flush")
    assert result.returncode == 0, result.stdout
    assert precompact(project.path, "verify", "--all").returncode == 0
    assert check_layer_1(project, {}) == ([], 0)
