"""Reliability under concurrency: many hooks at once for one instance lose nothing and keep one
chain, through real processes, real git and a running precompact-localnet."""

from __future__ import annotations

import json
import subprocess
import time

from precompact import config as configuration
from precompact import savepoint_log
from precompact import verify as verification
from test_cli_layers import INSTANCE, chain_record, fund, initialized
from test_hook import PRECOMPACT
from test_worker import wait_until
from transcript_gen import generate, payload

HOOKS = 20


def test_twenty_hooks_at_once_make_twenty_chained_savepoints_all_landed(workspace, localnet, monkeypatch):
    project, remote = workspace
    authority = initialized(project, monkeypatch, localnet.url)
    fund(localnet.url, authority)
    transcript = generate(project.parent / "session.jsonl", 100_000, project=project)
    stdin = json.dumps(payload("PreCompact", project, transcript.path)).encode()
    hooks = [subprocess.Popen([PRECOMPACT, "hook"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(HOOKS)]
    for process in hooks:
        process.stdin.write(stdin)
        process.stdin.close()
    outputs = [json.loads(process.stdout.read())["systemMessage"] for process in hooks]
    assert [process.wait(timeout=60) for process in hooks] == [0] * HOOKS
    assert sorted(int(text.split()[2]) for text in outputs) == list(range(1, HOOKS + 1))

    logs = project / "logs"

    def landed() -> bool:
        states = savepoint_log.savepoints(logs, INSTANCE)
        return len(states) == HOOKS and all((s.layer_2, s.layer_3) == ("PUSHED", "CONFIRMED") for s in states)

    assert wait_until(landed, timeout=120), (logs / "precompact-worker.log").read_text()
    index = savepoint_log.read(logs)
    assert index.bad_lines == []
    states = savepoint_log.savepoints(logs, INSTANCE)
    assert [s.sequence for s in states] == list(range(1, HOOKS + 1))
    for before, after in zip(states, states[1:]):
        assert after.created["prev_snapshot_hash"] == before.created["snapshot_hash"]
    # Posted in order, each exactly once: confirmations appear in sequence order, one per savepoint.
    confirmed = [e["sequence"] for e in index.events if e["event"] == "LAYER_3_CONFIRMED"]
    assert confirmed == list(range(1, HOOKS + 1))
    remote_log = subprocess.run(["git", "log", "--format=%H", "precompact/savepoints"], cwd=remote, capture_output=True, text=True, check=True).stdout.split()
    assert {s.commit for s in states} <= set(remote_log)
    assert int.from_bytes(chain_record(localnet.url, authority)[241:249], "little") == HOOKS
    report = verification.verify(configuration.load(project))
    assert report.ok, [str(f) for f in report.findings]
    time.sleep(0)  # nothing left running: every worker exits once the index is up to date


def test_a_hook_killed_at_any_moment_leaves_every_named_savepoint_intact(tmp_path, monkeypatch):
    import random
    import signal

    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    initialized(project, monkeypatch, "http://127.0.0.1:9")
    config_file = project / ".precompact.toml"
    config_file.write_text(config_file.read_text().replace("git = true", "git = false").replace("chain = true", "chain = false"))
    transcript = generate(tmp_path / "session.jsonl", 8_000_000, project=project)
    stdin = json.dumps(payload("PreCompact", project, transcript.path)).encode()
    began = time.monotonic()
    assert subprocess.run([PRECOMPACT, "hook"], input=stdin, capture_output=True, timeout=60).returncode == 0
    duration = time.monotonic() - began
    rng = random.Random(1)
    for _ in range(8):
        process = subprocess.Popen([PRECOMPACT, "hook"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        process.stdin.write(stdin)
        process.stdin.close()
        time.sleep(rng.uniform(0, duration))
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert subprocess.run([PRECOMPACT, "hook"], input=stdin, capture_output=True, timeout=60).returncode == 0
    logs = project / "logs"
    index = savepoint_log.read(logs)
    assert index.bad_lines == []
    states = savepoint_log.savepoints(logs, INSTANCE)
    assert [s.sequence for s in states] == list(range(1, len(states) + 1)) and len(states) >= 2
    report = verification.verify(configuration.load(project))
    assert report.ok, [str(f) for f in report.findings]
    assert not list((logs / "precompact-saves").glob(".*.tmp"))  # what killed writers left is cleaned up
    # Under a final name there is only ever a complete snapshot (a kill between the rename and
    # the index line can leave one the index does not name, never a partial one).
    for path in (logs / "precompact-saves").iterdir():
        if not path.name.startswith("."):
            assert json.loads(path.read_bytes())["type"] == "PRECOMPACT_SAVEPOINT"
