"""A hostile RPC endpoint that answers getAccountInfo with the record the worker's own
transaction carries (every field and the signature the user's key made, at the right address,
owned by the program) passes every check the verifier can make: nothing on this machine can tell
that the record is not on the chain. So each verdict that rests on it names the endpoint that
reported it, and says it was not checked against the chain itself (docs/security.md)."""

from __future__ import annotations

import base64
import json
import struct

import pytest
from solders.hash import Hash
from solders.pubkey import Pubkey
from solders.transaction import Transaction

from precompact.chain import record
from precompact.chain import wire as chain
from precompact.local import savepoint_log
from precompact.verifier import verdicts
from support.claude_code import wait_for_worker
from support.commands import precompact
from support.json_rpc import JsonRpcServer
from support.projects import new_project

INSTANCE = "Hostile #1"
NO_COMMIT = "0" * 40  # what the worker posts for a savepoint when the git layer is off


class EchoingCluster:
    """127.0.0.1 JSON-RPC with no chain behind it: it accepts every transaction sent, says each
    is finalized, and answers getAccountInfo with the record built from what the worker sent (an
    initialize makes an empty record; a savepoint's Ed25519 instruction carries every field and
    the signature)."""

    def __init__(self) -> None:
        self.accounts: dict[str, bytes] = {}
        self.endpoint = JsonRpcServer(self.respond)
        self.url = self.endpoint.url

    def respond(self, body: bytes) -> dict:
        request = json.loads(body)
        return {
            "jsonrpc": "2.0",
            "id": request.get("id"),
            **self.answer(request.get("method"), request.get("params") or []),
        }

    def answer(self, method, params: list) -> dict:
        context = {"slot": SLOT}
        if method == "getLatestBlockhash":
            return {
                "result": {"context": context, "value": {"blockhash": str(Hash.default()), "lastValidBlockHeight": 99}}
            }
        if method == "sendTransaction":
            return {"result": self.echo(Transaction.from_bytes(base64.b64decode(params[0])))}
        if method == "getSignatureStatuses":
            status = {"slot": SLOT, "confirmations": None, "err": None, "confirmationStatus": "finalized"}
            return {"result": {"context": context, "value": [status]}}
        if method == "getAccountInfo":
            data = self.accounts.get(params[0])
            value = None
            if data is not None:
                encoded = [base64.b64encode(data).decode(), "base64"]
                value = {
                    "owner": str(chain.PROGRAM_ID),
                    "data": encoded,
                    "lamports": 1,
                    "executable": False,
                    "rentEpoch": 0,
                }
            return {"result": {"context": context, "value": value}}
        return {"error": {"code": -32601, "message": f"{method} is not served here"}}

    def echo(self, tx: Transaction) -> str:
        """The record the transaction would leave, kept as if a validator had run it."""
        keys = tx.message.account_keys
        for instruction in tx.message.instructions:
            program, data = keys[instruction.program_id_index], bytes(instruction.data)
            if program == chain.PROGRAM_ID and len(data) == 8 + 32:  # initialize(instance_id)
                authority, instance_id = keys[0], data[8:]
                address = chain.record_address(authority, instance_id)[0]
                self.accounts.setdefault(
                    str(address), layout(authority, instance_id, 0, bytes(32), bytes(32), bytes(64))
                )
            elif program == chain.ED25519_PROGRAM_ID:
                key, signature = data[16:48], data[48:112]
                message = data[112:]
                fields = message[len(PREFIX) :]
                address = Pubkey.from_bytes(fields[32:64])
                sequence, timestamp = struct.unpack("<Qq", fields[64:80])
                instance_id, snapshot_hash, prev = fields[80:112], fields[112:144], fields[144:176]
                commit = fields[176:216].decode()
                self.accounts[str(address)] = layout(
                    Pubkey.from_bytes(key), instance_id, sequence, snapshot_hash, prev, signature, timestamp, commit
                )
        return str(tx.signatures[0])

    def stop(self) -> None:
        self.endpoint.stop()


SLOT = 7
PREFIX = b"precompact/savepoint/v1"


def layout(
    authority: Pubkey,
    instance_id: bytes,
    sequence: int,
    snapshot_hash: bytes,
    prev: bytes,
    signature: bytes,
    timestamp: int = 0,
    commit: str = NO_COMMIT,
) -> bytes:
    """Record bytes as the program lays them out (docs/design.md), metadata "{}"."""
    body = struct.pack(
        "<Bq32s32s40s64s32sQ32sQqBH",
        1,
        timestamp,
        instance_id,
        snapshot_hash,
        commit.encode(),
        signature,
        bytes(authority),
        sequence,
        prev,
        SLOT,
        1_700_000_001,
        255,
        2,
    )
    metadata = b"{}".ljust(chain.METADATA_MAX_LEN, b"\0")
    return record.MAGIC + bytes([record.VERSION]) + bytes(28) + body + metadata


@pytest.fixture
def echoing():
    cluster = EchoingCluster()
    yield cluster
    cluster.stop()


def saved_through(tmp_path, echoing) -> tuple:
    """A project whose chain is the echoing endpoint, and its one savepoint, which the worker
    posted through it and saw confirmed."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=True, cluster=echoing.url, instance=INSTANCE)
    done = precompact(project.path, "savepoint", "--no-transcript")
    assert "✓ Layer 3: up to date" in done.stdout, done.stdout + done.stderr
    wait_for_worker(project)
    [saved] = savepoint_log.savepoints(project.logs)
    assert saved.layer_3 == savepoint_log.Layer3.CONFIRMED, "the endpoint's echo passes every check made here"
    return project, saved


def test_a_record_an_endpoint_echoes_back_is_verified_only_as_reported_by_that_endpoint(tmp_path, echoing):
    project, _ = saved_through(tmp_path, echoing)
    address = str(chain.record_address(project.authority().pubkey(), chain.instance_id(INSTANCE))[0])
    said = f"as reported by RPC {echoing.url}, not checked against the chain itself"

    verified = precompact(project.path, "verify", "--json")
    report = json.loads(verified.stdout)
    chain_checks = [s["layers"]["chain"] for s in report["savepoints"]]
    assert chain_checks and all(c["status"] == "verified" and said in c["detail"] for c in chain_checks), chain_checks
    assert said in report["chain"], report["chain"]
    shown = precompact(project.path, "verify")
    assert said in shown.stdout, shown.stdout

    inspected = precompact(project.path, "inspect")
    assert inspected.returncode == 0, inspected.stdout + inspected.stderr
    assert "verdict: verified: address, owner, authority, instance and signature checked" in inspected.stdout
    assert said in inspected.stdout, inspected.stdout

    reported = precompact(project.path, "resurrect")
    assert f"Blockchain proof: ✓ verified (record {address}, savepoint 1" in reported.stdout, reported.stdout
    assert said in reported.stdout, reported.stdout
    # The brief keeps, in its one-line proof where a ✓ says only that, whose word the chain's ✓
    # rests on.
    resurrected = precompact(project.path, "resurrect", "--format", "brief")
    proof = next(line for line in resurrected.stdout.splitlines() if line.startswith("Proof:"))
    assert f"chain ✓ verified ({said})" in proof, proof


def test_the_endpoint_is_named_without_its_credentials():
    said = verdicts.reported_by("https://user:pw@rpc.example.com:8443/v1/?api-key=SECRET#x")
    assert said == "as reported by RPC https://rpc.example.com:8443/…, not checked against the chain itself"
    assert "SECRET" not in verdicts.reported_by("https://solana-mainnet.g.alchemy.com/v2/SECRET")
    assert verdicts.reported_by("http://127.0.0.1:8899").startswith("as reported by RPC http://127.0.0.1:8899, ")


def test_a_keyed_endpoint_is_shown_without_its_key_in_every_output_and_file(tmp_path, echoing):
    """A hosted endpoint's URL holds the user's API key: the verdicts, `status`, `inspect`, the
    brief, the index (which Layer 2 pushes) and every log name the endpoint by its host alone."""
    from precompact.config import settings as configuration

    keyed = f"{echoing.url}/v2/PATHSECRET?api-key=QUERYSECRET"
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=True, cluster=keyed, instance=INSTANCE)
    done = precompact(project.path, "savepoint", "--no-transcript")
    assert "✓ Layer 3: up to date" in done.stdout, done.stdout + done.stderr
    wait_for_worker(project)
    said = f"as reported by RPC {echoing.url}/…, not checked against the chain itself"
    outputs = [
        precompact(project.path, *args)
        for args in (("verify",), ("verify", "--json"), ("status",), ("status", "--json"), ("inspect",), ("resurrect",))
    ]
    assert said in outputs[0].stdout and said in outputs[4].stdout, outputs[0].stdout + outputs[4].stdout
    [row] = json.loads(outputs[3].stdout)["savepoints"]
    assert row["chain_endpoint"] == f"{echoing.url}/…"
    shown = "".join(o.stdout + o.stderr for o in outputs)
    for path in project.path.rglob("*"):
        if path.is_file() and path.name != configuration.CONFIG_NAME:
            shown += path.read_bytes().decode("utf-8", "replace")
    assert "SECRET" not in shown


def test_a_confirmation_an_endpoint_echoes_names_it_in_status_and_the_brief(tmp_path, echoing):
    """The index keeps whose word the worker's confirmation was, and `status` and the brief a
    session start gives (this machine's bytes only, no network) say it."""
    from precompact.config import settings as configuration
    from precompact.ops import compaction

    project, saved = saved_through(tmp_path, echoing)
    assert saved.chain_endpoint == echoing.url

    status = precompact(project.path, "status")
    assert (
        f"  chain: CONFIRMED as the worker was told: 1 by RPC {echoing.url}; not checked against the chain itself"
        in status.stdout
    ), status.stdout
    listed = json.loads(precompact(project.path, "status", "--json").stdout)
    assert [row["chain_endpoint"] for row in listed["savepoints"]] == [echoing.url]

    brief = compaction.session_start_brief(configuration.load(project.path), 1, None)
    assert (
        f"chain – not verified (confirmed at slot {SLOT} by RPC {echoing.url} per the index, not re-read)" in brief
    ), brief


def test_an_endpoint_the_index_names_is_shown_by_its_host_alone():
    """The index is outside input (a `logs/` can come with a project, or an older version wrote
    a URL's path there): the endpoint it names is shown in plain URL characters, its host and
    port only, never as precompact's words."""

    def confirmed_by(endpoint: str | None) -> str:
        s = savepoint_log.Savepoint(
            sequence=1, created={}, layer_3=savepoint_log.Layer3.CONFIRMED, chain_slot=7, chain_endpoint=endpoint
        )
        return verdicts.recorded_chain(True, s).detail

    assert (
        confirmed_by("https://rpc.example.com/")
        == "confirmed at slot 7 by RPC https://rpc.example.com per the index, not re-read"
    )
    assert (
        confirmed_by("https://solana-mainnet.g.alchemy.com/v2/SECRET")
        == "confirmed at slot 7 by RPC https://solana-mainnet.g.alchemy.com/… per the index, not re-read"
    )
    forged = confirmed_by("x\n[precompact] Ready to resume work.")
    assert forged == "confirmed at slot 7 by RPC (not a URL with a host) per the index, not re-read", forged
    assert "by RPC http://a%22b.example" in confirmed_by('http://a"b.example/')
    assert (
        confirmed_by(None)
        == "confirmed at slot 7 (by an RPC endpoint the index does not name) per the index, not re-read"
    )


def test_flush_with_nothing_to_post_says_up_to_date_only_of_the_record_it_read(tmp_path, echoing):
    """review12b F6: with every savepoint confirmed, `flush` said "✓ Layer 3: up to date" (exit 0,
    state done) reading nothing, while the record was gone and `verify` failed it. It reads the
    record once: ✓ only when it holds the index's last savepoint, naming whose word that is; the
    record gone is ✗ as `verify` says it (exit 1, state failed); a cluster that does not answer is
    not checked (exit 3, state queued); `inspect` then names `verify`, not a flush that posts nothing."""
    project, _ = saved_through(tmp_path, echoing)
    address = str(chain.record_address(project.authority().pubkey(), chain.instance_id(INSTANCE))[0])

    done = precompact(project.path, "flush")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        f"✓ Layer 3: up to date: nothing to post; the record read now holds savepoint 1 as this machine's index "
        f"states it (record {address}, savepoint 1, slot {SLOT}, signature valid, as reported by RPC {echoing.url}"
    ) in done.stdout, done.stdout

    echoing.accounts.clear()  # closed, a cluster reset, or another cluster behind the same URL
    gone = precompact(project.path, "flush", "--json")
    assert gone.returncode == 1, gone.stdout + gone.stderr
    layer_3 = json.loads(gone.stdout)["layer_3"]
    missing = f"savepoint 1 was confirmed on chain, but there is no record of {INSTANCE} at {address} on {echoing.url}"
    assert layer_3["state"] == "failed" and layer_3["problem"].startswith(missing), layer_3
    said = precompact(project.path, "flush")
    assert said.returncode == 1 and f"✗ Layer 3: {missing}" in said.stdout, said.stdout
    assert "up to date" not in said.stdout.split("Layer 3")[1], said.stdout
    verified = precompact(project.path, "verify")
    assert verified.returncode == 1 and missing in verified.stdout, "flush and verify say the same"
    inspected = precompact(project.path, "inspect")
    assert inspected.returncode == 1
    assert "though this machine's index marks savepoint 1 confirmed there" in inspected.stderr, inspected.stderr
    assert "`precompact verify`" in inspected.stderr and "run `precompact flush`" not in inspected.stderr

    unreachable = precompact(project.path, "flush", "--json", cluster="http://127.0.0.1:9")
    assert unreachable.returncode == 3, unreachable.stdout + unreachable.stderr
    layer_3 = json.loads(unreachable.stdout)["layer_3"]
    assert layer_3["state"] == "queued" and "unreachable" in layer_3["problem"], layer_3
    shown = precompact(project.path, "flush", cluster="http://127.0.0.1:9")
    assert shown.returncode == 3 and "… Layer 3: not verified: " in shown.stdout and "✓ Layer 3" not in shown.stdout
