"""A hostile RPC endpoint that answers getAccountInfo with the record the worker's own
transaction carries (every field and the signature the user's key made, at the right address,
owned by the program) passes every check the verifier can make: nothing on this machine can tell
that the record is not on the chain. So each verdict that rests on it names the endpoint that
reported it, and says it was not checked against the chain itself (docs/security.md)."""

from __future__ import annotations

import base64
import json
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from solders.keypair import Keypair

from precompact.chain import record
from precompact.chain import wire as chain
from precompact.local import savepoint_log
from precompact.verifier import verdicts
from support.commands import precompact
from support.projects import new_project

INSTANCE = "Hostile #1"
NO_COMMIT = "0" * 40  # what the worker posts for a savepoint when the git layer is off


class EchoingCluster:
    """127.0.0.1 JSON-RPC: getAccountInfo of `address` is answered with `data`, owned by the
    program; every other call is refused (so the worker posts nothing through it)."""

    def __init__(self) -> None:
        self.address: str | None = None
        self.data = b""
        cluster = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if request.get("method") == "getAccountInfo" and cluster.address is not None:
                    held = request["params"][0] == cluster.address
                    value = {
                        "owner": str(chain.PROGRAM_ID),
                        "data": [base64.b64encode(cluster.data).decode(), "base64"],
                        "lamports": 1,
                        "executable": False,
                        "rentEpoch": 0,
                        "space": len(cluster.data),
                    }
                    answer = {"result": {"context": {"slot": 9}, "value": value if held else None}}
                else:
                    answer = {"error": {"code": -32601, "message": "not served here"}}
                out = json.dumps({"jsonrpc": "2.0", "id": request.get("id"), **answer}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def echoing():
    cluster = EchoingCluster()
    yield cluster
    cluster.stop()


def worker_record(signer: Keypair, sequence: int, snapshot_hash: bytes, prev: bytes) -> tuple[str, bytes]:
    """The record address and the bytes the program would hold after the worker's savepoint
    transaction: all of it is in that transaction (fields, signature, authority), so an endpoint
    that saw it can serve it without any chain."""
    instance_id = chain.instance_id(INSTANCE)
    address = chain.record_address(signer.pubkey(), instance_id)[0]
    fields = chain.SavepointFields(sequence, 1_700_000_000, instance_id, snapshot_hash, prev, NO_COMMIT)
    signature = bytes(signer.sign_message(fields.signed_message(address, chain.PROGRAM_ID)))
    body = struct.pack(
        "<Bq32s32s40s64s32sQ32sQqBH",
        1,
        fields.timestamp,
        instance_id,
        snapshot_hash,
        NO_COMMIT.encode(),
        signature,
        bytes(signer.pubkey()),
        sequence,
        prev,
        7,
        1_700_000_001,
        255,
        2,
    )
    metadata = b"{}".ljust(chain.METADATA_MAX_LEN, b"\0")
    return str(address), record.MAGIC + bytes([record.VERSION]) + bytes(28) + body + metadata


def test_a_record_an_endpoint_echoes_back_is_verified_only_as_reported_by_that_endpoint(tmp_path, echoing):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=True, cluster=echoing.url, instance=INSTANCE)
    done = precompact(project.path, "savepoint", "--no-transcript")
    assert done.returncode in (0, 3), done.stdout + done.stderr  # Layer 3 queued: the endpoint refuses to post
    [saved] = savepoint_log.savepoints(project.logs)
    signer = project.authority()
    echoing.address, echoing.data = worker_record(signer, 1, bytes.fromhex(saved.snapshot_hash), bytes(32))
    said = f"as reported by RPC {echoing.url}, not checked against the chain itself"

    verified = precompact(project.path, "verify", "--json")
    report = json.loads(verified.stdout)
    chain_checks = [json.dumps(s) for s in report["savepoints"]]
    assert chain_checks and all(said in check for check in chain_checks), verified.stdout
    assert said in verified.stdout

    shown = precompact(project.path, "verify")
    assert said in shown.stdout, shown.stdout

    inspected = precompact(project.path, "inspect")
    assert inspected.returncode == 0, inspected.stdout + inspected.stderr
    assert said in inspected.stdout, inspected.stdout

    reported = precompact(project.path, "resurrect")
    assert f"Blockchain proof: ✓ verified (record {echoing.address}, savepoint 1" in reported.stdout, reported.stdout
    assert said in reported.stdout, reported.stdout
    # The brief keeps, in its one-line proof where a ✓ says only that, whose word the chain's ✓
    # rests on.
    resurrected = precompact(project.path, "resurrect", "--format", "brief")
    proof = next(line for line in resurrected.stdout.splitlines() if line.startswith("Proof:"))
    assert f"chain ✓ verified ({said})" in proof, proof


def test_the_endpoint_is_named_without_its_credentials():
    named = verdicts.endpoint_name("https://user:pw@rpc.example.com:8443/v1/?api-key=SECRET#x")
    assert named == "https://rpc.example.com:8443/v1/ (its credentials left out)"
    assert "SECRET" not in verdicts.reported_by("https://rpc.example.com/?api-key=SECRET")
    assert verdicts.endpoint_name("http://127.0.0.1:8899") == "http://127.0.0.1:8899"


def test_a_confirmation_an_endpoint_echoes_names_it_in_status_and_the_brief(tmp_path, echoing):
    """The worker confirms a savepoint the endpoint claims the record already states (a post
    whose confirmation was lost): the index keeps whose word that was, and `status` and the brief
    a session start gives (this machine's bytes only, no network) say it."""
    from precompact.config import settings as configuration
    from precompact.ops import compaction

    project = new_project(tmp_path, "p", git_layer=False, chain_layer=True, cluster=echoing.url, instance=INSTANCE)
    precompact(project.path, "savepoint", "--no-transcript")
    [saved] = savepoint_log.savepoints(project.logs)
    echoing.address, echoing.data = worker_record(project.authority(), 1, bytes.fromhex(saved.snapshot_hash), bytes(32))
    flushed = precompact(project.path, "flush")
    assert flushed.returncode == 0, flushed.stdout + flushed.stderr
    [confirmed] = savepoint_log.savepoints(project.logs)
    assert confirmed.layer_3 == savepoint_log.Layer3.CONFIRMED and confirmed.chain_endpoint == echoing.url

    status = precompact(project.path, "status")
    assert (
        f"  chain: CONFIRMED as the worker was told: 1 by RPC {echoing.url}; not checked against the chain itself"
        in status.stdout
    ), status.stdout
    listed = json.loads(precompact(project.path, "status", "--json").stdout)
    assert [row["chain_endpoint"] for row in listed["savepoints"]] == [echoing.url]

    brief = compaction.session_start_brief(configuration.load(project.path), 1, None)
    assert f"chain – not verified (confirmed at slot 7 by RPC {echoing.url} per the index, not re-read)" in brief, brief
