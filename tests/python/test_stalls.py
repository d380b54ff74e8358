"""Loss and stalls (issue #48): a network read that never ends, a hook that waits for the index
lock, a save killed between its snapshot and its index line. Each through the installed binary."""

from __future__ import annotations

import threading
import time

import pytest
from support.commands import precompact, wait_until
from support.mock_http import Exchange, MockServer
from support.projects import new_project
from support.transcript_gen import generate, payload

TRICKLE_SECONDS = 5
# rpc.DEFAULT_TIMEOUT_SECONDS, the whole of one call, and room for the process around it.
CALL_DEADLINE_SECONDS = 10
MARGIN_SECONDS = 8


class Trickle(MockServer):
    """A JSON-RPC endpoint that answers every call with a valid answer, one byte every five
    seconds: each read gets a byte long before any per-read timeout."""

    def __init__(self):
        super().__init__()
        self.stopped = threading.Event()

    def answer(self, exchange: Exchange, body: dict) -> None:
        reply = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"jsonrpc":"2.0","id":1,"result":"ok"} '
        for byte in reply:
            if self.stopped.wait(TRICKLE_SECONDS):
                return
            try:
                exchange.wfile.write(bytes([byte]))
                exchange.wfile.flush()
            except OSError:
                return

    def stop(self) -> None:
        self.stopped.set()
        super().stop()


@pytest.mark.slow
def test_a_trickling_cluster_ends_flush_verify_and_the_worker_within_the_deadline(tmp_path):
    worked = new_project(tmp_path, "worked", git_layer=False, chain_layer=True)
    # Saved with the cluster unreachable at once (a closed port): its worker is done in seconds
    # and holds no flush lock while `flush` and `verify` below meet the trickling cluster.
    asked = new_project(tmp_path, "asked", git_layer=False, chain_layer=True)
    transcript = generate(tmp_path / "t.jsonl", 2_000, project=asked.path)
    saved = precompact(asked.path, "hook", stdin=payload("PreCompact", asked.path, transcript.path))
    assert saved.returncode == 0, saved.stderr
    with Trickle() as cluster:
        env = {"PRECOMPACT_CLUSTER": cluster.url}
        saved = precompact(worked.path, "hook", stdin=payload("PreCompact", worked.path, transcript.path), env=env)
        assert saved.returncode == 0, saved.stderr
        # The worker the hook started gives up its first flush at the deadline, with the reason.
        worker_log = worked.logs / "precompact-worker.log"
        assert wait_until(
            lambda: worker_log.exists() and "unreachable" in worker_log.read_text(),
            CALL_DEADLINE_SECONDS + MARGIN_SECONDS,
        ), worker_log.read_text() if worker_log.exists() else "no worker log"
        said = [line for line in worker_log.read_text().splitlines() if "unreachable" in line][0]
        assert "no whole answer to" in said and f"within {CALL_DEADLINE_SECONDS} s" in said, said
        for command in ("flush", "verify"):
            began = time.monotonic()
            done = precompact(asked.path, command, env=env, timeout=4 * CALL_DEADLINE_SECONDS)
            took = time.monotonic() - began
            assert done.returncode != 0 and "Traceback" not in done.stderr, (command, done.stdout, done.stderr)
            assert took < CALL_DEADLINE_SECONDS + MARGIN_SECONDS, (command, took, done.stdout, done.stderr)
            reasons = [line for line in (done.stdout + done.stderr).splitlines() if "no whole answer to" in line]
            assert reasons and f"cluster {cluster.url} unreachable" in reasons[0], (command, done.stdout, done.stderr)
