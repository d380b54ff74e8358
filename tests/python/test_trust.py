"""The verifier against an attacker: a git remote someone else can write, an RPC endpoint that
lies, a cluster URL anyone on the path can answer for. Each attack goes through the real
`precompact` binary, a real git remote and a running precompact-localnet (behind a proxy that
rewrites what it answers where the attack needs it), and must end in "failed", exit 1 and a
one-line reason naming the field. A property test then changes single bytes of random
histories and expects `verify --all` to name the savepoint."""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from solders.keypair import Keypair
from solders.pubkey import Pubkey

from precompact.chain import record
from precompact.chain import wire as chain
from precompact.config import settings as configuration
from precompact.local import savepoint_log
from precompact.remote import encryption as remote_crypto
from precompact.verifier import verdicts
from precompact.verifier import verify as verification
from support.commands import key_beside, precompact, run_git
from support.json_rpc import JsonRpcServer
from support.projects import fund, savepoint_branch
from support.projects import trust as approve

INSTANCE = "Gabriel #215"
Rewrite = Callable[[str, bytes], tuple[str, bytes]]


class LyingCluster:
    """A JSON-RPC proxy in front of the real localnet: every call goes through, except that
    getAccountInfo for `address` is answered with what `rewrite(owner, data)` returns."""

    def __init__(self, upstream: str):
        self.upstream = upstream
        self.address: str | None = None
        self.rewrite: Rewrite | None = None
        self.endpoint = JsonRpcServer(self.respond)
        self.url = self.endpoint.url

    def respond(self, body: bytes) -> dict:
        answer = httpx.post(
            self.upstream, content=body, headers={"Content-Type": "application/json"}, timeout=10
        ).json()
        request = json.loads(body)
        if (
            request.get("method") == "getAccountInfo"
            and request["params"][0] == self.address
            and self.rewrite is not None
        ):
            value = answer["result"]["value"]
            owner, data = (value["owner"], record_bytes(value)) if value else (str(chain.PROGRAM_ID), b"")
            owner, data = self.rewrite(owner, data)
            answer["result"]["value"] = {
                "owner": owner,
                "data": [base64.b64encode(data).decode(), "base64"],
                "lamports": 1,
                "executable": False,
                "rentEpoch": 0,
                "space": len(data),
            }
        return answer

    def lie(self, address: Pubkey, rewrite: Rewrite) -> None:
        self.address, self.rewrite = str(address), rewrite

    def stop(self) -> None:
        self.endpoint.stop()


def record_bytes(value: dict) -> bytes:
    return base64.b64decode(value["data"][0])


@pytest.fixture
def lying(localnet):
    proxy = LyingCluster(localnet.url)
    yield proxy
    proxy.stop()


def saved_project(workspace, localnet, count: int) -> tuple[Path, Path, Keypair]:
    """A project with `count` savepoints on all three layers."""
    project, remote = workspace
    keypair_file = project.parent / "id.json"
    done = precompact(
        project, "init", "--yes", "--instance", INSTANCE, "--cluster", localnet.url, "--keypair", str(keypair_file)
    )
    assert done.returncode == 0, done.stderr
    authority = Keypair.from_bytes(bytes(json.loads(keypair_file.read_text())))
    fund(localnet.url, authority)
    for _ in range(count):
        done = precompact(project, "savepoint", "--no-transcript")
        assert done.returncode == 0, done.stdout + done.stderr
    return project, remote, authority


def our_record(authority: Keypair, instance: str = INSTANCE) -> Pubkey:
    return chain.record_address(authority.pubkey(), chain.instance_id(instance))[0]


def signed_record(
    signer: Keypair,
    address: Pubkey,
    instance: str,
    sequence: int,
    snapshot_hash: bytes,
    prev: bytes,
    commit: str,
    program_id: Pubkey = chain.PROGRAM_ID,
) -> bytes:
    """Record bytes as the program would lay them out, signed by `signer` for `address`."""
    fields = chain.SavepointFields(sequence, 1_700_000_000, chain.instance_id(instance), snapshot_hash, prev, commit)
    signature = bytes(signer.sign_message(fields.signed_message(address, program_id)))
    metadata = b"{}".ljust(chain.METADATA_MAX_LEN, b"\0")
    body = struct.pack(
        "<Bq32s32s40s64s32sQ32sQqBH",
        1,
        fields.timestamp,
        fields.instance_id,
        snapshot_hash,
        commit.encode(),
        signature,
        bytes(signer.pubkey()),
        sequence,
        prev,
        7,
        1_700_000_001,
        255,
        2,
    )
    return record.MAGIC + bytes([record.VERSION]) + bytes(28) + body + metadata


def failed(result: subprocess.CompletedProcess, *names: str) -> None:
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    for name in names:
        assert name in output, (name, output)


# --- 1. A forged older savepoint on a machine that has only the git remote --------------------


def test_a_forged_older_savepoint_on_a_git_only_machine_fails(workspace, localnet):
    project, remote, authority = saved_project(workspace, localnet, count=2)
    first, second = savepoint_log.savepoints(project / "logs", INSTANCE)
    # The attacker rewrites savepoint 1 on the remote: its snapshot, its index hash and savepoint
    # 2's index link, all consistent with each other; savepoint 2's bytes stay as they were. The
    # savepoints are encrypted, but age does not authenticate senders: with the recipients'
    # public keys anyone encrypts a forgery (this one knows the plaintext, the worst case).
    keys = remote_crypto.Keys.of(configuration.load(project))

    def plaintext(path: Path) -> bytes:
        return remote_crypto.open_sealed(path.read_bytes(), remote_crypto.load_identities(keys))

    def forged_ciphertext(data: bytes) -> bytes:
        return remote_crypto.seal(data, remote_crypto.Keys(keys.recipients))

    forger = project.parent / "forger"
    run_git(project.parent, "clone", "-q", "-b", savepoint_branch(INSTANCE), str(remote), str(forger))
    for who in (["user.name", "Mallory"], ["user.email", "m@example.invalid"]):
        run_git(forger, "config", *who)
    snapshot_1 = forger / f"{first.created['snapshot_file']}.age"
    forged = plaintext(snapshot_1).replace(b'"sequence":1', b'"sequence":1 ', 1).replace(b'"nonce":"', b'"nonce":"f', 1)
    snapshot_1.write_bytes(forged_ciphertext(forged))
    run_git(forger, "commit", "-qam", "forged snapshot 1")
    forged_commit = run_git(forger, "rev-parse", "HEAD").strip()
    forged_hash = hashlib.sha256(forged).hexdigest()
    index = forger / "logs" / f"{savepoint_log.INDEX_NAME}.age"
    lines = []
    for line in plaintext(index).decode().splitlines():
        event = json.loads(line)
        if event.get("sequence") == 1 and event["event"] == "SAVEPOINT_CREATED":
            event["snapshot_hash"] = f"sha256:{forged_hash}"
        if event.get("sequence") == 1 and "commit" in event:
            event["commit"] = forged_commit
        if event.get("sequence") == 2 and event["event"] == "SAVEPOINT_CREATED":
            event["prev_snapshot_hash"] = f"sha256:{forged_hash}"
        lines.append(json.dumps(event, sort_keys=True, separators=(",", ":")))
    index.write_bytes(forged_ciphertext(("\n".join(lines) + "\n").encode()))
    run_git(forger, "commit", "-qam", "forged index")
    run_git(forger, "push", "-q", "--force", "origin", savepoint_branch(INSTANCE))

    elsewhere = project.parent / "elsewhere"
    run_git(project.parent, "clone", "-q", str(remote), str(elsewhere))
    (elsewhere / ".precompact.toml").write_text(
        f'instance = "{INSTANCE}"\n[chain]\ncluster = "{localnet.url}"\nkeypair = "{key_beside(elsewhere, "absent.json")}"\nauthority = "{authority.pubkey()}"\n[encryption]\nidentity = "{keys.identity}"\n'
    )
    # Another machine, with a project registry of its own (on this one, `trust` would refuse the
    # second project writing the same chain).
    machine = {"XDG_DATA_HOME": str(project.parent / "elsewhere-data")}
    approve(elsewhere, env=machine)
    result = precompact(elsewhere, "resurrect", "--sequence", "1", env=machine)
    # The forged index signs nothing of the user's key (its line 1 no longer verifies): the tip is
    # named a rollback and left out (exit 1), and savepoint 1 is the genuine one, from the copy in
    # the branch's history the key signed (review15a F8's rule), never the forgery.
    failed(
        result,
        "its index holds none of your savepoints",
        "so the tip's index was left out",
        f"sha256:{first.snapshot_hash[:16]}",
    )
    assert forged_hash[:16] not in result.stdout, "the forged savepoint is never the one shown"
    newest = precompact(elsewhere, "resurrect", "--format", "json", env=machine)
    assert newest.returncode == 1, newest.stdout
    assert second.snapshot_hash == json.loads(newest.stdout)["snapshot_hash"].removeprefix("sha256:")


# --- 2. A lying RPC endpoint ----------------------------------------------------------------


def lie_cases(localnet, project: Path, authority: Keypair):
    """(name, rewrite, field the failure names) for each lie about our record."""
    stranger = Keypair()
    newest = savepoint_log.savepoints(project / "logs", INSTANCE)[-1]
    snapshot_hash = bytes.fromhex(newest.snapshot_hash)
    prev = bytes.fromhex(newest.prev_snapshot_hash or "0" * 64)
    ours = our_record(authority)
    elsewhere = chain.record_address(authority.pubkey(), chain.instance_id(INSTANCE), Pubkey.new_unique())[0]
    return [
        (
            "signed by another key",
            lambda o, d: (
                o,
                signed_record(stranger, ours, INSTANCE, newest.sequence, snapshot_hash, prev, newest.commit[:40]),
            ),
            "authority",
        ),
        (
            "another instance",
            lambda o, d: (
                o,
                signed_record(authority, ours, "Someone #1", newest.sequence, snapshot_hash, prev, newest.commit[:40]),
            ),
            "instance_id",
        ),
        (
            "signed for another address",
            lambda o, d: (
                o,
                signed_record(authority, elsewhere, INSTANCE, newest.sequence, snapshot_hash, prev, newest.commit[:40]),
            ),
            "signature",
        ),
        ("owned by another program", lambda o, d: (str(Pubkey.new_unique()), d), "owned by"),
        ("a tampered snapshot hash", lambda o, d: (o, d[:73] + bytes(32) + d[105:]), "signature"),
        (
            "fields that differ from the savepoint",
            lambda o, d: (
                o,
                signed_record(authority, ours, INSTANCE, newest.sequence, bytes(32), prev, newest.commit[:40]),
            ),
            "snapshot_hash",
        ),
    ]


@pytest.mark.slow  # 21 s here
def test_every_lie_about_the_record_fails_inspect_verify_and_resurrect(workspace, localnet, lying):
    project, _, authority = saved_project(workspace, localnet, count=2)
    assert precompact(project, "verify", "--all", cluster=lying.url).returncode == 0
    for name, rewrite, field in lie_cases(localnet, project, authority):
        lying.lie(our_record(authority), rewrite)
        inspected = precompact(project, "inspect", "--json", cluster=lying.url)
        assert inspected.returncode == 1, (name, inspected.stdout + inspected.stderr)
        shown = json.loads(inspected.stdout)
        assert shown["verdict"] == "FAILED" and field in shown["verdict_detail"], (name, shown)
        if field in ("authority", "signature"):
            assert shown["signature_valid"] is False, name
        failed(precompact(project, "verify", "--all", cluster=lying.url), "[layer 3]", field)
        resurrected = precompact(project, "resurrect", cluster=lying.url)
        failed(resurrected, "Blockchain proof: ✗ FAILED", field)


def test_a_replayed_older_record_is_a_history_reset(workspace, localnet, lying):
    project, _, authority = saved_project(workspace, localnet, count=1)
    first_state = bytes.fromhex(_account_hex(localnet.url, our_record(authority)))
    assert precompact(project, "savepoint", "--no-transcript").returncode == 0
    lying.lie(our_record(authority), lambda o, d: (o, first_state))
    failed(precompact(project, "verify", "--all", cluster=lying.url), "history reset")


def _account_hex(url: str, address: Pubkey) -> str:
    answer = httpx.post(
        url,
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "getAccountInfo",
            "params": [str(address), {"encoding": "base64", "commitment": "confirmed"}],
        },
    ).json()
    return record_bytes(answer["result"]["value"]).hex()


# --- 3. Plain http to another host ------------------------------------------------------------


def test_plain_http_to_another_host_is_refused_unless_allowed(workspace, localnet):
    project, _, _ = saved_project(workspace, localnet, count=1)
    for url in ("http://10.1.2.3:8899", "http://api.devnet.solana.com"):
        result = precompact(project, "status", cluster=url)
        assert result.returncode == 1 and "plain http to another host (set by PRECOMPACT_CLUSTER)" in result.stderr
        assert "correct or unset PRECOMPACT_CLUSTER: use https://" in result.stderr, result.stderr
    config = project / ".precompact.toml"
    config.write_text(config.read_text().replace("[chain]\n", "[chain]\nallow_insecure_http = true\n"))
    approve(project)
    result = precompact(project, "status", cluster="http://10.1.2.3:8899")
    assert result.returncode == 0 and "warning: chain.cluster http://10.1.2.3:8899 is plain http" in result.stderr
    for url in ("http://127.0.0.1:9", "http://localhost:9", "http://[::1]:9", "https://10.1.2.3"):
        assert precompact(project, "status", cluster=url).returncode == 0, url


# --- 4. Layer 3 confirmation from a lying RPC -------------------------------------------------


def test_the_recovery_path_does_not_confirm_what_a_lying_rpc_claims(workspace, localnet, lying):
    project, _ = workspace
    keypair_file = project.parent / "id.json"
    assert (
        precompact(
            project, "init", "--yes", "--instance", INSTANCE, "--cluster", lying.url, "--keypair", str(keypair_file)
        ).returncode
        == 0
    )
    authority = Keypair.from_bytes(bytes(json.loads(keypair_file.read_text())))
    fund(localnet.url, authority)
    stranger = Keypair()

    def claims_it_holds_ours(owner, data):
        [mine] = savepoint_log.savepoints(project / "logs", INSTANCE)
        return str(chain.PROGRAM_ID), signed_record(
            stranger,
            our_record(authority),
            INSTANCE,
            1,
            bytes.fromhex(mine.snapshot_hash),
            bytes(32),
            (mine.commit or "0" * 40)[:40],
        )

    lying.lie(our_record(authority), claims_it_holds_ours)
    result = precompact(project, "savepoint", "--no-transcript")
    assert result.returncode == 3 and "Layer 3: queued: the record read back is not trustworthy" in result.stdout, (
        result.stdout
    )
    [mine] = savepoint_log.savepoints(project / "logs", INSTANCE)
    assert mine.layer_3 == "FAILED" and "authority" in mine.failures[-1].reason


# --- A property: any single changed byte is named ---------------------------------------------

# Byte ranges of the signed fields in the account (header 32, entry_type 1, then DESIGN.md's order).
SIGNED_RANGES = {
    "timestamp": (33, 41),
    "instance_id": (41, 73),
    "snapshot_hash": (73, 105),
    "git_commit": (105, 145),
    "signature": (145, 209),
    "authority": (209, 241),
    "sequence": (241, 249),
    "prev_snapshot_hash": (249, 281),
}
INDEX_FIELDS = ["snapshot_hash", "prev_snapshot_hash", "sequence", "snapshot_file", "instance", "commit"]
_histories: dict[int, tuple] = {}


@pytest.fixture(scope="module")
def history_root(tmp_path_factory):
    from support.localnet import LocalnetProcess

    root = tmp_path_factory.mktemp("histories")
    node = LocalnetProcess(root)
    node.start()
    proxy = LyingCluster(node.url)
    yield root, node, proxy
    proxy.stop()
    node.stop()
    _histories.clear()


def history(history_root, n: int):
    """A project with `n` savepoints on all layers, made once per n."""
    root, node, proxy = history_root
    if n not in _histories:
        from support.projects import new_project

        project = new_project(root, f"h{n}", git_layer=True, chain_layer=True, cluster=proxy.url, instance=INSTANCE)
        authority = project.authority()
        fund(node.url, authority)
        for _ in range(n):
            assert precompact(project.path, "savepoint", "--no-transcript").returncode == 0
        _histories[n] = (project, authority)
    return _histories[n]


@pytest.mark.slow  # 26 s here
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(st.integers(1, 3), st.sampled_from(["snapshot", "record", "index"]), st.data())
def test_any_single_changed_byte_is_named_by_verify(history_root, n, where, data):
    project, authority = history(history_root, n)
    _, _, proxy = history_root
    proxy.lie(our_record(authority), None)
    config = configuration.load(project.path)
    assert verification.verify(config).ok
    savepoints = savepoint_log.savepoints(project.logs, INSTANCE)
    target = data.draw(st.sampled_from(savepoints))
    if where == "record":
        name = data.draw(st.sampled_from(sorted(SIGNED_RANGES)))
        low, high = SIGNED_RANGES[name]
        offset = data.draw(st.integers(low, high - 1))
        flip = data.draw(st.integers(1, 255))
        proxy.lie(our_record(authority), lambda o, d: (o, d[:offset] + bytes([d[offset] ^ flip]) + d[offset + 1 :]))
        report = verification.verify(config)
        proxy.lie(our_record(authority), None)
        assert not report.ok and any(f.layer == "layer 3" for f in report.findings), (name, report.findings)
        return
    if where == "snapshot":
        path = project.path / target.created["snapshot_file"]
        original = path.read_bytes()
        offset = data.draw(st.integers(0, len(original) - 1))
        path.write_bytes(
            original[:offset] + bytes([original[offset] ^ data.draw(st.integers(1, 255))]) + original[offset + 1 :]
        )
    else:
        path = savepoint_log.index_path(project.logs)
        original = path.read_bytes()
        field = data.draw(st.sampled_from(INDEX_FIELDS))
        path.write_bytes(_change_index_field(original, target.sequence, field, data))
    try:
        report = verification.verify(config)
    finally:
        path.write_bytes(original)
    assert not report.ok, (where, target.sequence)
    assert target.sequence in {f.sequence for f in report.findings}, (where, target.sequence, report.findings)


def _change_index_field(index: bytes, sequence: int, field: str, data) -> bytes:
    """The index with one byte of `field` changed in the line about savepoint `sequence` that
    carries it (SAVEPOINT_CREATED, or LAYER_2_COMMITTED for the commit)."""
    lines = index.split(b"\n")
    for i, line in enumerate(lines):
        if not line:
            continue
        event = json.loads(line)
        if event.get("sequence") != sequence or field not in event or event[field] is None:
            continue
        if field == "commit" and event["event"] != "LAYER_2_COMMITTED":
            continue
        if field == "prev_snapshot_hash" and event["event"] != "SAVEPOINT_CREATED":
            continue
        value = event[field]
        if isinstance(value, int):
            event[field] = value + data.draw(st.integers(1, 3))
        else:
            position = data.draw(st.integers(len(value) - 64 if value.startswith("sha256:") else 0, len(value) - 1))
            replacement = data.draw(st.sampled_from([c for c in "0123456789abcdefxZ#" if c != value[position]]))
            event[field] = value[:position] + replacement + value[position + 1 :]
        lines[i] = json.dumps(event, sort_keys=True, separators=(",", ":")).encode()
        return b"\n".join(lines)
    if field == "prev_snapshot_hash":  # savepoint 1 has none: give it one
        return _add_prev(lines, sequence)
    raise AssertionError(f"no {field} for savepoint {sequence}")


def _add_prev(lines: list[bytes], sequence: int) -> bytes:
    for i, line in enumerate(lines):
        if line and json.loads(line).get("sequence") == sequence and json.loads(line)["event"] == "SAVEPOINT_CREATED":
            event = json.loads(line)
            event["prev_snapshot_hash"] = "sha256:" + "ab" * 32
            lines[i] = json.dumps(event, sort_keys=True, separators=(",", ":")).encode()
    return b"\n".join(lines)


def test_a_closed_record_is_a_history_reset_for_flush_verify_and_status(workspace, localnet):
    from solders.hash import Hash
    from solders.transaction import Transaction

    from precompact.chain import rpc

    project, _, authority = saved_project(workspace, localnet, count=1)
    cluster = rpc.Cluster(localnet.url, timeout=10)
    close = Transaction.new_signed_with_payer(
        [chain.close_instruction(authority.pubkey(), our_record(authority))],
        authority.pubkey(),
        [authority],
        Hash.from_string(cluster.latest_blockhash()),
    )
    signature = cluster.send_transaction(bytes(close))
    assert _confirmed(cluster, signature) and cluster.account(str(our_record(authority))) is None

    saved = precompact(project, "savepoint", "--no-transcript")
    assert saved.returncode == 3 and "history reset" in saved.stdout, saved.stdout
    assert cluster.account(str(our_record(authority))) is None, "no new record is made over a reset"
    failed(
        precompact(project, "verify", "--all"),
        "savepoint 1 [layer 3]",
        "savepoint 1 was confirmed on chain, but there is no record",
    )
    status = precompact(project, "status")
    assert status.returncode == 0 and "history reset" in status.stdout, status.stdout


def _confirmed(cluster, signature: str) -> bool:
    import time

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        status = cluster.signature_status(signature)
        if status and status.get("confirmationStatus") in ("confirmed", "finalized"):
            return status.get("err") is None
        time.sleep(0.05)
    return False


def test_the_walk_back_gives_every_savepoint_below_a_break_a_verdict():
    """Pure: a verified snapshot 3 that names no predecessor ends the chain; 2 fails and 1 (the
    one asked about) is not verified, never missing."""
    from dataclasses import dataclass

    @dataclass
    class Held:
        sequence: int = 3
        snapshot_hash: bytes = bytes.fromhex("aa" * 32)
        prev_snapshot_hash: bytes = bytes(32)
        slot: int = 9

    roots = verdicts.Roots(chain.PROGRAM_ID, Keypair().pubkey(), INSTANCE)
    third = verdicts.Snapshot("aa" * 32, 3, INSTANCE, None, "test", b"")
    by_sequence = {n: object() for n in (1, 2, 3)}
    endpoint = "http://127.0.0.1:8899"
    walked = verdicts.walk_back(Held(), roots, by_sequence, 1, lambda savepoint, expected: third, endpoint)
    assert [walked[n].status for n in (3, 2, 1)] == [verdicts.VERIFIED, verdicts.FAILED, verdicts.NOT_VERIFIED]
    assert f"as reported by RPC {endpoint}" in walked[3].detail, "the verdict names the endpoint it rests on"
