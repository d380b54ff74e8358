"""A new user's first hour: `init` makes Layer 3 a choice (asked at a terminal, `--chain` for
scripts, off with one line when no cluster answers), signs with precompact's own key unless
told otherwise, and a git-only project reads "off" everywhere, never FAILED or a raw enum."""

from __future__ import annotations

import json
import os
import pty
import select
import socket
import stat
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from precompact.config import settings as configuration
from support import transcript_gen
from support.commands import INSTANCE, PRECOMPACT, invoke, key_beside, run_git, statuses
from support.localnet import free_port
from support.projects import fund


def written_config(project: Path) -> dict:
    return tomllib.loads((project / configuration.CONFIG_NAME).read_text())


def own_keys() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "precompact" / "keys"


def test_init_without_a_cluster_that_answers_turns_the_chain_off_in_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(configuration, "DEFAULT_CLUSTER", f"http://127.0.0.1:{free_port()}")
    result = invoke("init", "--yes", "--instance", INSTANCE)
    assert result.exit_code == 0, result.output
    said = [line for line in result.output.splitlines() if "Layer 3" in line]
    off = f"Layer 3 (the chain) is off: no cluster answers at {configuration.DEFAULT_CLUSTER}; "
    assert said == [off + "`precompact init --force --chain devnet` (or a cluster URL) turns it on"]
    assert written_config(tmp_path)["layers"]["chain"] is False


@pytest.mark.parametrize(
    ("answer", "cluster", "on"),
    [
        ("off", configuration.DEFAULT_CLUSTER, False),
        ("devnet", "https://api.devnet.solana.com", True),
        ("local", configuration.DEFAULT_CLUSTER, True),
        ("https://rpc.example.invalid/key", "https://rpc.example.invalid/key", True),
    ],
)
def test_init_chain_option_sets_the_cluster_or_turns_it_off(tmp_path, monkeypatch, answer, cluster, on):
    monkeypatch.chdir(tmp_path)
    result = invoke("init", "--yes", "--instance", INSTANCE, "--chain", answer)
    assert result.exit_code == 0, result.output
    written = written_config(tmp_path)
    # Off, the file names no cluster: a live-looking URL there would read as in use (#40.7).
    assert (written["chain"].get("cluster"), written["layers"]["chain"]) == (cluster if on else None, on)
    assert ("Layer 3 (the chain) is off" in result.output) is not on


def test_init_refuses_a_chain_that_is_not_a_choice(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bad = invoke("init", "--yes", "--chain", "ftp://nope")
    assert bad.exit_code == 1
    assert bad.output.strip().startswith(
        "Error: --chain is not off, devnet, local or a cluster URL precompact accepts (chain.cluster ftp://nope is not an http(s) URL"
    ), bad.output
    # The value is not repeated past its host: a hosted endpoint's URL holds the user's API key.
    keyed = invoke("init", "--yes", "--chain", "http://rpc.example.com/v2/SECRETKEY")
    assert keyed.exit_code == 1 and "http://rpc.example.com/… is plain http" in keyed.output, keyed.output
    assert "SECRETKEY" not in keyed.output
    both = invoke("init", "--yes", "--chain", "devnet", "--cluster", "https://a.example.invalid")
    assert both.exit_code == 2 and "give --chain or --cluster, not both" in both.output
    airdrop = invoke("init", "--yes", "--chain", "off", "--airdrop")
    assert airdrop.exit_code == 2 and "--airdrop needs a cluster" in airdrop.output
    assert not (tmp_path / configuration.CONFIG_NAME).exists()


def test_init_reports_a_keyed_cluster_by_its_host_and_writes_it_whole(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    accepted = invoke("init", "--json", "--chain", "https://rpc.example.invalid/v2/SECRETKEY")
    assert accepted.exit_code == 0, accepted.output
    assert json.loads(accepted.stdout)["chain"] == "https://rpc.example.invalid/…"
    assert "SECRETKEY" not in accepted.output
    assert written_config(tmp_path)["chain"]["cluster"] == "https://rpc.example.invalid/v2/SECRETKEY"


def at_a_terminal(args: list[str], cwd: Path, answers: list[str]) -> str:
    """Runs `args` with a pseudo-terminal as stdin and stdout, typing each answer after the
    next prompt ("...: "); everything it printed."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(args, cwd=cwd, stdin=follower, stdout=follower, stderr=follower)
    os.close(follower)
    seen, pending = b"", list(answers)
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(leader, 4096)
                except OSError:  # the terminal closed: the process is done
                    break
                if not chunk:
                    break
                seen += chunk
                if pending and seen.rstrip(b" ").endswith((b":", b"]:")):
                    os.write(leader, pending.pop(0).encode() + b"\n")
            elif process.poll() is not None:
                break
        assert process.wait(timeout=30) == 0, seen.decode(errors="replace")
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()
            process.wait()
    return seen.decode(errors="replace").replace("\r\n", "\n")


def test_init_at_a_terminal_explains_the_choice_and_asks_again_after_a_wrong_answer(tmp_path):
    shown = at_a_terminal([PRECOMPACT, "init", "--instance", INSTANCE], tmp_path, ["mainnet?", "devnet"])
    assert "Layer 3, a signed proof of each savepoint on Solana, is a choice:" in shown
    for said in ("git only", "free test SOL", "0.0048 SOL of rent per instance", "for trying it out"):
        assert said in shown
    assert (
        "--chain is not off, devnet, local or a cluster URL precompact accepts (chain.cluster is not an http(s) URL"
        in shown
    )
    written = written_config(tmp_path)
    assert (written["chain"]["cluster"], written["layers"]["chain"]) == ("https://api.devnet.solana.com", True)


def test_init_signs_with_its_own_key_not_the_solana_cli_wallet(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    result = invoke("init", "--yes", "--instance", INSTANCE, "--chain", "off")
    assert result.exit_code == 0, result.output
    key = own_keys() / "gabriel-215.json"
    identity = own_keys() / configuration.IDENTITY_NAME
    assert f"created keypair {key}" in result.output
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(identity.stat().st_mode) == 0o600
    written = written_config(tmp_path)
    assert (written["chain"]["keypair"], written["encryption"]["identity"]) == (str(key), str(identity))
    assert not (tmp_path / "home" / ".config" / "solana").exists()
    assert "warning: signing with" not in result.output


def test_init_with_a_named_wallet_warns_that_it_may_hold_funds(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    wallet = key_beside(tmp_path)
    result = invoke("init", "--yes", "--chain", "off", "--keypair", str(wallet))
    assert result.exit_code == 0, result.output
    assert f"warning: signing with {wallet}; if it is a wallet that holds funds" in result.output
    assert written_config(tmp_path)["chain"]["keypair"] == str(wallet)
    assert not own_keys().exists()


def listening() -> tuple[socket.socket, str]:
    """A socket that records whether anyone dialled it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.setblocking(False)
    return server, f"http://127.0.0.1:{server.getsockname()[1]}"


def dialled(server: socket.socket) -> bool:
    try:
        server.accept()[0].close()
    except BlockingIOError:
        return False
    return True


def test_a_git_only_project_reads_off_everywhere(workspace, monkeypatch):
    project, _ = workspace
    monkeypatch.chdir(project)
    server, url = listening()
    with server:
        assert invoke("init", "--yes", "--instance", INSTANCE, "--chain", "off").exit_code == 0
        # Where the chain would be if it were on: nothing may dial it while it is off.
        monkeypatch.setenv("PRECOMPACT_CLUSTER", url)
        transcript = transcript_gen.generate(project.parent / "session.jsonl", project=project)
        saved = invoke("savepoint", "--transcript", str(transcript.path))
        # Saved, with a layer off: the exit code a script tells from "done" and "failed".
        assert saved.exit_code == 3, saved.output
        assert "- Layer 3: off in .precompact.toml" in saved.output

        [row] = statuses(project)
        assert (row["layer_2"], row["layer_3"]) == ("PUSHED", "OFF")
        shown = invoke("status")
        assert shown.exit_code == 0 and "chain off" in shown.output
        verified = invoke("verify", "--all")
        assert verified.exit_code == 0 and verified.output.rstrip().endswith("chain: off"), verified.output
        inspected = invoke("inspect")
        assert inspected.exit_code == 0
        assert inspected.output.startswith("Layer 3 (the chain) is off in .precompact.toml: no on-chain record")
        assert json.loads(invoke("inspect", "--json").output)["layer_3"] == "OFF"
        restored = invoke("resurrect")
        assert "Blockchain proof: – off" in restored.output, restored.output
        # What came back is the conversation rebuilt from its chunks, not the file listing them.
        exported = project.parent / "export.json"
        assert invoke("export", "--output", str(exported)).exit_code == 0
        document = exported.read_bytes()
        history = document.rfind(b'],"format_version":') - len(b'{"conversation_history":[')
        assert history > 10 * (project / row["snapshot_file"]).stat().st_size
        assert f"Context recovered: {history / 1024:.1f} KB (" in restored.output
        for output in (saved.output, shown.output, verified.output, inspected.output, restored.output):
            assert "FAILED" not in output and "QUEUED_FOR_BLOCKCHAIN" not in output
        assert not dialled(server)


def test_turning_the_chain_on_later_anchors_the_pending_savepoints_in_order(workspace, monkeypatch, localnet):
    project, _ = workspace
    monkeypatch.chdir(project)
    keypair = project.parent / "id.json"
    assert invoke("init", "--yes", "--instance", INSTANCE, "--chain", "off", "--keypair", str(keypair)).exit_code == 0
    for _ in range(2):
        assert invoke("savepoint", "--no-transcript").exit_code == 3
    assert [r["layer_3"] for r in statuses(project)] == ["OFF", "OFF"]

    on = invoke("init", "--yes", "--force", "--instance", INSTANCE, "--chain", localnet.url, "--keypair", str(keypair))
    assert on.exit_code == 0, on.output
    from solders.keypair import Keypair

    fund(localnet.url, Keypair.from_bytes(bytes(json.loads(keypair.read_text()))))
    flushed = invoke("flush")
    assert flushed.exit_code == 0, flushed.output
    rows = statuses(project)
    assert [r["layer_3"] for r in rows] == ["CONFIRMED", "CONFIRMED"]
    record = json.loads(invoke("inspect", "--json").output)
    assert (record["sequence"], record["snapshot_hash"]) == (2, rows[1]["snapshot_hash"])
    assert record["prev_snapshot_hash"] == rows[0]["snapshot_hash"]
    assert run_git(project, "status", "--porcelain", "--", "logs") == ""


def claude(binary: Path, home: Path, cwd: Path, *args: str) -> str:
    """The real Claude Code CLI in a throwaway HOME; its stdout."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
        "LANG": "C.UTF-8",
        "ANTHROPIC_API_KEY": "fake",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",  # never asked: `mcp` needs no model
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    done = subprocess.run(
        [str(binary), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_mcp_server_in_a_project_without_precompact_connects_under_claude_code(tmp_path, claude_binary):
    home, project, data = tmp_path / "home", tmp_path / "project", tmp_path / "plugin-data"
    for folder in (home, project, data):
        folder.mkdir()
    run_git(project, "init", "-q")
    launcher = Path(__file__).resolve().parents[2] / "bin" / "precompact"
    # As installed with pip (`precompact install --mcp`), and as the plugin runs it before it
    # has prepared its environment (the launcher alone, standard library only).
    claude(claude_binary, home, project, "mcp", "add", "--scope", "user", "installed", "--", PRECOMPACT, "mcp")
    claude(
        claude_binary,
        home,
        project,
        *("mcp", "add", "--scope", "user", "plugin", "-e", f"CLAUDE_PLUGIN_DATA={data}"),
        *("--", sys.executable, str(launcher), "mcp"),
    )
    listed = claude(claude_binary, home, project, "mcp", "list")
    assert f"installed: {PRECOMPACT} mcp - ✔ Connected" in listed, listed
    assert f"plugin: {sys.executable} {launcher} mcp - ✔ Connected" in listed, listed
    assert list(data.iterdir()) == [], "nothing prepared for a project without precompact"


def test_the_idle_mcp_server_offers_no_tools(tmp_path):
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "recall"}},
    ]
    done = subprocess.run(
        [PRECOMPACT, "mcp"],
        cwd=tmp_path,
        input="".join(json.dumps(r) + "\n" for r in requests),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2, 3]
    assert answers[0]["result"]["protocolVersion"] == "2025-06-18"
    assert answers[1]["result"] == {"tools": []}
    assert answers[2]["error"]["code"] == -32601


def test_an_untrusted_configuration_is_shown_to_the_user_not_the_model(tmp_path, claude_binary):
    from support import claude_code
    from support.projects import new_project

    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    with claude_code.session_in(project, tmp_path / "home", claude_binary) as setup:
        session_id = setup.session.run("hello")["session_id"]
        config = project.path / configuration.CONFIG_NAME
        config.write_text(config.read_text() + "\n# edited by someone else\n")
        setup.session.run("go on", resume=session_id)  # SessionStart (resume) runs the hook
        shown = [
            entry["attachment"]["content"]
            for entry in setup.session.transcript(session_id)
            if entry.get("type") == "attachment" and entry["attachment"].get("type") == "hook_system_message"
        ]
        assert len(shown) == 1 and "changed since you trusted it" in shown[0], shown
        assert "run `precompact trust`" in shown[0]
        for request in setup.session.mock.requests:
            assert "changed since you trusted it" not in claude_code.messages_text(request)
