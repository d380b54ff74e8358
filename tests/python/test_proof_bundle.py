"""Proof bundles (`precompact prove`, `verify-bundle`, tools/verify_bundle.py) and the ledger walk
(`precompact verify --ledger`), on precompact-localnet: honest lineages verify, every single
changed field is rejected by both verifiers, and each way a record's history can go wrong is
named."""

from __future__ import annotations

import base64
import copy
import hashlib
import importlib.util
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from solders.hash import Hash
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.transaction import Transaction

from precompact.chain import rpc
from precompact.chain import wire as chain
from precompact.local import savepoint_log
from precompact.proof import bundle, history, ledger, transaction
from precompact.verifier import signed, verdicts
from support.commands import INSTANCE, invoke, statuses
from support.json_rpc import JsonRpcServer
from support.localnet import REPO, LocalnetProcess
from support.projects import fund

REFERENCE = REPO / "tools" / "verify_bundle.py"
_spec = importlib.util.spec_from_file_location("verify_bundle", REFERENCE)
assert _spec is not None and _spec.loader is not None
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)
SAVEPOINTS = 3


LEDGER_UNCHECKED = "ledger inclusion: no cluster was asked, so no transaction was seen finalized (give --cluster URL)"


def start_project(
    root: Path, monkeypatch, url: str, count: int = SAVEPOINTS, encrypted: bool = False
) -> tuple[Path, Keypair]:
    """A project (in clear text unless `encrypted`, so a bundle's embedded snapshot is
    checkable) with `count` savepoints landed on the localnet."""
    project, remote = root / "project", root / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    project.mkdir()
    for args in (["init", "-q", "-b", "main"], ["remote", "add", "origin", str(remote)], ["config", "user.name", "Dev"], ["config", "user.email", "dev@example.invalid"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=project, check=True)
    monkeypatch.chdir(project)
    keypair = root / "id.json"
    clear = [] if encrypted else ["--no-encrypt"]
    result = invoke("init", "--yes", *clear, "--instance", INSTANCE, "--cluster", url, "--keypair", str(keypair))
    assert result.exit_code == 0, result.output
    authority = Keypair.from_bytes(bytes(json.loads(keypair.read_text())))
    fund(url, authority)
    for _ in range(count):
        assert invoke("savepoint", "--no-transcript").exit_code == 0
    return project, authority


def prove(*args: str) -> dict:
    result = invoke("prove", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture(scope="module")
def lineage(tmp_path_factory):
    """One lineage of three savepoints on a localnet, and its bundle for savepoint 3 with the
    snapshot embedded, shared by the tests that only read them."""
    root = tmp_path_factory.mktemp("lineage")
    node = LocalnetProcess(root)
    node.start()
    try:
        with pytest.MonkeyPatch.context() as monkeypatch:
            monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "xdg"))
            project, authority = start_project(root, monkeypatch, node.url)
            written = prove(str(SAVEPOINTS), "--with-snapshot")
            yield node, project, root / "xdg", written, str(authority.pubkey())
    finally:
        node.stop()


def enter(lineage, monkeypatch) -> Path:
    """Works in the lineage's project, with the trust store that approved its configuration."""
    _, project, xdg, _, _ = lineage
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    monkeypatch.chdir(project)
    return project


def verify_bundle(path: Path, *args: str):
    return invoke("verify-bundle", str(path), *args)


def run_reference(path: Path, *args: str, pinned: bool = True) -> subprocess.CompletedProcess:
    """tools/verify_bundle.py on `path`, pinning the key and program that signed it (read from
    the file: the tests that pin nothing, or another key, say so)."""
    pins = []
    if pinned:
        written = json.loads(path.read_text())
        pins = ["--authority", written["authorities"][-1]["authority"], "--program-id", written["program_id"]]
    return subprocess.run(
        [sys.executable, str(REFERENCE), str(path), *args, *pins], capture_output=True, text=True, check=False
    )


def test_bundles_of_each_savepoint_verify_in_the_client_and_the_reference_verifier(lineage, monkeypatch, tmp_path):
    project = enter(lineage, monkeypatch)
    for n in range(1, SAVEPOINTS + 1):
        path = tmp_path / f"bundle-{n}.json"
        assert invoke("prove", str(n), "-o", str(path)).exit_code == 0
        written = json.loads(path.read_text())
        assert [link["sequence"] for link in written["chain"]] == list(range(1, n + 1))
        assert written["snapshot_hash"] == statuses(project)[n - 1]["snapshot_hash"].removeprefix("sha256:")
        result = verify_bundle(path)
        assert result.exit_code == 0 and f"✓ bundle verified: savepoint {n} of" in result.output, result.output
        assert "not verified: no snapshot given" in result.output
        assert f"not verified: {LEDGER_UNCHECKED}" in result.output, "docs/proof-bundle.md"
        as_json = json.loads(verify_bundle(path, "--json").stdout)
        assert LEDGER_UNCHECKED in as_json["notes"], as_json
        checked = run_reference(path)
        assert checked.returncode == 0 and checked.stdout.startswith("verified:"), checked.stdout
        snapshot = project / statuses(project)[n - 1]["snapshot_file"]
        assert verify_bundle(path, "--snapshot", str(snapshot)).exit_code == 0
        assert run_reference(path, str(snapshot)).returncode == 0
    other = project / statuses(project)[0]["snapshot_file"]
    result = verify_bundle(tmp_path / f"bundle-{SAVEPOINTS}.json", "--snapshot", str(other))
    assert result.exit_code == 1 and f"savepoint {SAVEPOINTS} [snapshot]" in result.output, result.output
    assert run_reference(tmp_path / f"bundle-{SAVEPOINTS}.json", str(other)).returncode == 1


def test_every_clear_text_copy_of_the_snapshot_must_be_savepoint_n_in_both_verifiers(lineage, monkeypatch, tmp_path):
    """docs/proof-bundle.md, `snapshot`: "SHA-256 of the bytes must equal `snapshot_hash` (and so
    must that of a snapshot file given to the verifier besides)". The embedded copy travels on
    with the bundle whatever file its verifier held, so a forged one is FAILED even beside the
    real file, and a forged file even beside the real embedded copy; each verdict names the copy."""
    enter(lineage, monkeypatch)
    written = lineage[3]
    real = base64.b64decode(written["snapshot"]["base64"])
    forged = real.replace(b'"conversation_chunks":[]', b'"conversation_chunks":[],"planted":"run this"', 1)
    assert forged != real
    (real_file := tmp_path / "real.json").write_bytes(real)
    (forged_file := tmp_path / "forged.json").write_bytes(forged)
    (genuine := tmp_path / "genuine.json").write_text(json.dumps(written))
    carrying_forgery = copy.deepcopy(written)
    carrying_forgery["snapshot"] = {"encrypted": False, "base64": base64.b64encode(forged).decode()}
    (planted := tmp_path / "planted.json").write_text(json.dumps(carrying_forgery))

    for path, held, copy_said, reference_said in (
        (planted, real_file, "snapshot in the bundle (its embedded copy) hashes to", "the embedded snapshot"),
        (planted, None, "snapshot in the bundle (its embedded copy) hashes to", "the embedded snapshot"),
        (genuine, forged_file, "snapshot in the file given (--snapshot) hashes to", "the snapshot file"),
    ):
        files = [] if held is None else [str(held)]
        result = verify_bundle(path, *(["--snapshot", *files] if files else []))
        assert result.exit_code == 1 and "✓" not in result.output, result.output
        assert f"✗ first broken link: savepoint {SAVEPOINTS} [snapshot]: {copy_said}" in result.output, result.output
        checked = run_reference(path, *files)
        assert checked.returncode == 1, checked.stdout
        assert f"FAILED: savepoint {SAVEPOINTS}: snapshot mismatch: {reference_said}" in checked.stdout, checked.stdout
    both = verify_bundle(genuine, "--snapshot", str(real_file))
    assert both.exit_code == 0 and "not verified" in both.output and "snapshot" not in both.output.split("\n", 1)[1]
    assert run_reference(genuine, str(real_file)).stdout.count("snapshot: matches") == 1


def test_prove_refuses_a_savepoint_the_index_does_not_hold(lineage, monkeypatch):
    enter(lineage, monkeypatch)
    result = invoke("prove", "9")
    assert result.exit_code == 1 and "savepoint 9 of 'Gabriel #215' is not in the index" in result.output


def test_an_encrypted_snapshot_is_embedded_as_the_remote_holds_it_and_not_vouched_for(localnet, monkeypatch, tmp_path):
    project, _ = start_project(tmp_path, monkeypatch, localnet.url, count=1, encrypted=True)
    path = tmp_path / "bundle.json"
    assert invoke("prove", "1", "--with-snapshot", "-o", str(path)).exit_code == 0
    written = json.loads(path.read_text())
    assert written["snapshot"]["encrypted"] is True
    assert base64.b64decode(written["snapshot"]["base64"]).startswith(b"age-encryption.org/v1")
    result = verify_bundle(path)
    assert result.exit_code == 0 and "not verified: the embedded snapshot is encrypted" in result.output, result.output
    plaintext = project / statuses(project)[0]["snapshot_file"]
    result = verify_bundle(path, "--snapshot", str(plaintext))
    unchecked = [line.strip() for line in result.output.splitlines() if "not verified" in line]
    assert result.exit_code == 0, result.output
    assert unchecked == [
        "not verified: the embedded snapshot is encrypted: its content was not checked (the file given was)",
        f"not verified: {LEDGER_UNCHECKED}",
    ], result.output


# --- every field, one change at a time ---------------------------------------------------------

HEX = "0123456789abcdef"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
# Offline, nothing signs when the cluster placed a transaction: these two are checked against a
# cluster (test_the_cluster_confirms_each_transaction_and_its_slot_and_time).
UNSIGNED = {("transaction", "slot"), ("transaction", "block_time")}


def leaves(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from leaves(item, (*path, i))
    else:
        yield path


def changed(value, position: int, shift: int):
    """`value` with one character (or the number, or the flag) changed, in its own alphabet."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + shift
    if value is None:
        return shift
    text = str(value)
    alphabet = next((a for a in (HEX, BASE58, BASE64) if set(text) <= set(a + "=")), None)
    i = position % len(text)
    if alphabet is None or text[i] not in alphabet:
        return text[:i] + chr((ord(text[i]) - 32 + shift) % 95 + 32) + text[i + 1 :]
    return text[:i] + alphabet[(alphabet.index(text[i]) + shift) % len(alphabet)] + text[i + 1 :]


def at(document, path):
    for key in path[:-1]:
        document = document[key]
    return document, path[-1]


def rejected_by_reference(document, authority: str) -> bool:
    try:
        reference.verify(document, authority=authority, program_id=str(chain.PROGRAM_ID))
    except (reference.Invalid, ValueError, KeyError, TypeError):
        return True
    return False


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 10_000), st.integers(1, 2**16))
def test_every_single_changed_field_is_rejected_by_both_verifiers(lineage, position, shift):
    written, authority = lineage[3], lineage[4]
    assert bundle.check(written, authority=authority).status == verdicts.VERIFIED and not rejected_by_reference(
        written, authority
    )
    for path in leaves(written):
        if tuple(p for p in path if isinstance(p, str))[-2:] in UNSIGNED:
            continue
        document = copy.deepcopy(written)
        holder, key = at(document, path)
        holder[key] = changed(holder[key], position, shift)
        if holder[key] == at(written, path)[0][key]:
            continue  # a shift that went round its alphabet
        if path == ("snapshot", "encrypted"):
            # Marked encrypted, the snapshot can no longer be checked: neither verifier vouches for it.
            assert bundle.check(document, authority=authority).notes and "snapshot: not checked" in reference.verify(
                document, authority=authority, program_id=str(chain.PROGRAM_ID)
            )
            continue
        assert bundle.check(document).status == verdicts.FAILED, path
        assert rejected_by_reference(document, authority), path
    for path in leaves(written):
        named = [i for i, p in enumerate(path) if isinstance(p, str)][-1]
        document = copy.deepcopy(written)
        holder, key = at(document, path[: named + 1])
        renamed = changed(key, position, shift)
        if renamed == key:
            continue
        holder[renamed] = holder.pop(key)
        assert bundle.check(document).status == verdicts.FAILED, path
        assert rejected_by_reference(document, authority), path


def test_a_transaction_that_is_not_the_savepoints_own_is_rejected(lineage):
    """A valid transaction of another savepoint, re-labelled: every signature in it verifies,
    but it does not hold this savepoint's signed message."""
    written = copy.deepcopy(lineage[3])
    written["chain"][1]["transaction"] = copy.deepcopy(written["chain"][0]["transaction"])
    verdict = bundle.check(written)
    assert verdict.status == verdicts.FAILED and (verdict.sequence, verdict.layer) == (2, "transaction"), verdict
    assert rejected_by_reference(written, lineage[4])


def test_the_cluster_confirms_each_transaction_and_its_slot_and_time(lineage, tmp_path):
    node, _, _, written, authority = lineage
    deadline = time.monotonic() + 90
    verdict = bundle.check(written, cluster=node.url, authority=authority)
    while verdict.status == verdicts.NOT_VERIFIED and time.monotonic() < deadline:
        time.sleep(1)  # a block is finalized 31 slots after it is confirmed
        verdict = bundle.check(written, cluster=node.url, authority=authority)
    assert verdict.status == verdicts.VERIFIED and f"finalized on {node.url}" in verdict.detail, verdict
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(written))
    confirmed = verify_bundle(
        path, "--cluster", node.url, "--authority", authority, "--program-id", str(chain.PROGRAM_ID)
    )
    assert confirmed.exit_code == 0, confirmed.output
    for field in UNSIGNED:
        document = copy.deepcopy(written)
        document["chain"][1]["transaction"][field[1]] += 1
        assert bundle.check(document, authority=authority).status == verdicts.VERIFIED, (
            "not signed: offline cannot tell"
        )
        verdict = bundle.check(document, cluster=node.url, authority=authority)
        assert verdict.status == verdicts.FAILED and (verdict.sequence, verdict.layer) == (2, "ledger"), verdict
    result = verify_bundle(path, "--cluster", "http://127.0.0.1:9")
    assert result.exit_code == 4 and "✗ not verified: ledger inclusion not checked" in result.output


def test_verify_bundle_exits_4_for_what_it_could_not_check_and_1_for_what_failed(lineage, tmp_path):
    """review12b (lesser): `verify-bundle` exited 1 for "not verified" (a cluster that does not
    answer, a transaction not finalized yet), the code of a forged bundle, so a script could not
    tell a network blip from a forgery; `--help` says 4 is "not verified", as `verify` exits."""
    node, _, _, written, authority = lineage
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(written))
    pins = ("--authority", authority, "--program-id", str(chain.PROGRAM_ID))

    def statuses_as(status: str | None):
        def rewrite(result: dict) -> dict:
            result["value"] = [None if status is None else {**v, "confirmationStatus": status} for v in result["value"]]
            return result

        return rewrite

    with Rewriting(node.url, "getSignatureStatuses", statuses_as("confirmed")) as proxy:
        pending = verify_bundle(path, "--cluster", proxy.url, *pins, "--json")
    assert pending.exit_code == 4, pending.output
    assert json.loads(pending.stdout)["status"] == verdicts.NOT_VERIFIED
    assert "is 'confirmed', not yet finalized" in json.loads(pending.stdout)["detail"]
    assert verify_bundle(path, "--cluster", "http://127.0.0.1:9", *pins).exit_code == 4
    with Rewriting(node.url, "getSignatureStatuses", statuses_as(None)) as proxy:
        missing = verify_bundle(path, "--cluster", proxy.url, *pins)
    assert (
        missing.exit_code == 1
        and "[ledger]: transaction" in missing.output
        and "is not in the ledger of" in missing.output
    )
    forged = copy.deepcopy(written)
    forged["chain"][0]["snapshot_hash"] = "00" * 32
    path.write_text(json.dumps(forged))
    failed = verify_bundle(path, *pins)
    assert failed.exit_code == 1 and "✗ first broken link: savepoint" in failed.output, failed.output


# --- the ledger's whole history ----------------------------------------------------------------


def send(url: str, signer: Keypair, instructions) -> str:
    client = rpc.Cluster(url, timeout=rpc.DEFAULT_TIMEOUT_SECONDS)
    tx = Transaction.new_signed_with_payer(
        instructions, signer.pubkey(), [signer], Hash.from_string(client.latest_blockhash())
    )
    signature = client.send_transaction(bytes(tx))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        status = client.signature_status(signature)
        if status is not None and status.get("confirmationStatus") in ("confirmed", "finalized"):
            assert status["err"] is None, status
            return signature
        time.sleep(0.05)
    raise AssertionError(f"{signature} not confirmed")


HISTORY = "getSignaturesForAddress"


def verify_ledger() -> Result:
    return invoke("verify", "--ledger")


def test_an_honest_history_verifies(localnet, monkeypatch, tmp_path):
    start_project(tmp_path, monkeypatch, localnet.url)
    result = verify_ledger()
    assert result.exit_code == 0, result.output
    assert f"✓ ledger verified: {INSTANCE}: 4 transaction(s) touched" in result.output
    assert f"savepoints 1..{SAVEPOINTS} in order" in result.output
    assert f"✓ {SAVEPOINTS} savepoint(s) verified" in result.output, "the three layers are checked too"


def test_a_savepoint_posted_elsewhere_with_the_key_is_an_unknown_writer(localnet, monkeypatch, tmp_path):
    _project, authority = start_project(tmp_path, monkeypatch, localnet.url)
    roots = verdicts.Roots(chain.PROGRAM_ID, authority.pubkey(), INSTANCE)
    held = verdicts.record_at(roots, rpc.Cluster(localnet.url, timeout=10))
    assert held is not None
    fields = chain.SavepointFields(
        SAVEPOINTS + 1, held.timestamp, roots.instance_id, b"\x07" * 32, held.snapshot_hash, "ab" * 20
    )
    signature = send(localnet.url, authority, chain.savepoint_instructions(authority, fields, b"{}"))
    result = verify_ledger()
    assert result.exit_code == 1
    assert f"✗ ledger: first broken link: {INSTANCE} savepoint {SAVEPOINTS + 1}, slot" in result.output
    assert f"transaction {signature}: unknown writer: sha256:{'07' * 32} is no savepoint" in result.output


def test_a_close_and_re_initialise_is_named_even_when_the_record_looks_the_same_again(localnet, monkeypatch, tmp_path):
    """Closed, re-initialised, and savepoints 1..2 posted again with the key: the record ends as
    it was, so `verify` (which reads its current state) passes; its history does not."""
    project, authority = start_project(tmp_path, monkeypatch, localnet.url, count=2)
    roots = verdicts.Roots(chain.PROGRAM_ID, authority.pubkey(), INSTANCE)
    client = rpc.Cluster(localnet.url, timeout=10)
    replayed = []
    for savepoint in savepoint_log.savepoints(project / "logs", INSTANCE):
        fetched = history.transaction(client, str(savepoint.chain_signature))
        assert fetched is not None
        [write] = transaction.parse(fetched.data, roots.program_id, roots.address).writes
        replayed.append(write.fields)
    closed = send(localnet.url, authority, [chain.close_instruction(authority.pubkey(), roots.address)])
    again = send(
        localnet.url,
        authority,
        [chain.initialize_instruction(authority.pubkey(), authority.pubkey(), roots.instance_id)],
    )
    for fields in replayed:
        send(localnet.url, authority, chain.savepoint_instructions(authority, fields, b"{}"))
    assert invoke("verify").exit_code == 0, "the record's current state is the one this machine confirmed"
    result = verify_ledger()
    assert result.exit_code == 1
    assert (
        f"✗ ledger: first broken link: {INSTANCE} savepoint 2, slot" in result.output
        and f"transaction {closed}: the record was closed after savepoint 2" in result.output
    ), result.output
    assert f"transaction {again}: re-initialized after a close" in result.output
    assert "(gap)" not in result.output


class Rewriting:
    """A JSON-RPC endpoint on 127.0.0.1 in front of the localnet whose answers to `method` pass
    through `rewrite`: what an endpoint that lost, hides or keeps no long history answers."""

    def __init__(self, upstream: str, method: str, rewrite: Callable[[Any], Any]):
        def respond(body: bytes) -> dict:
            answer = httpx.post(upstream, content=body, headers={"Content-Type": "application/json"}, timeout=10).json()
            if json.loads(body).get("method") == method and "result" in answer:
                answer["result"] = rewrite(answer["result"])
            return answer

        self.endpoint = JsonRpcServer(respond)
        self.url = self.endpoint.url

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.endpoint.stop()


def without(signature: str) -> Callable[[list], list]:
    """The history as an endpoint that lost (or hides) one transaction gives it."""
    return lambda history: [e for e in history if e["signature"] != signature]


def test_a_gap_in_the_history_is_named(localnet, monkeypatch, tmp_path):
    project, authority = start_project(tmp_path, monkeypatch, localnet.url)
    mine = savepoint_log.savepoints(project / "logs", INSTANCE)
    roots = verdicts.Roots(chain.PROGRAM_ID, authority.pubkey(), INSTANCE)
    with Rewriting(localnet.url, HISTORY, without(str(mine[1].chain_signature))) as proxy:
        verdict = ledger.check(roots, rpc.Cluster(proxy.url, timeout=10), mine)
    assert verdict.status == verdicts.FAILED
    assert str(verdict.findings[0]).startswith("savepoint 3, slot")
    assert "follows savepoint 1: savepoint(s) 2..2 have no transaction in this history (gap)" in verdict.detail
    # The last one missing: the history ends short of what was confirmed, which the endpoint's
    # history being incomplete explains as well as a hidden write (review12b F5): not verified.
    with Rewriting(localnet.url, HISTORY, without(str(mine[2].chain_signature))) as proxy:
        verdict = ledger.check(roots, rpc.Cluster(proxy.url, timeout=10), mine)
    assert verdict.status == verdicts.NOT_VERIFIED, verdict
    assert (
        "this machine's index records savepoint 3 confirmed there, but its history" in verdict.detail
        and "which wrote savepoints up to 2 only: savepoint(s) 3..3 have no transaction in it" in verdict.detail
    ), verdict


def test_a_history_short_of_the_record_is_never_verified_on_either_machine(localnet, monkeypatch, tmp_path):
    """review12b F5: on a machine whose index records no confirmation (a second machine after
    `restore`, which brings none back), an endpoint that returns no history passed the ledger:
    "✓ ledger verified: 0 transaction(s) … one initialize, then savepoints 1..0", exit 0, while the
    same run read the record at savepoint 3. The walk is held to the record read in the run: a
    history empty, cut at its start or at its end is not verified (exit 4) on either machine."""
    project, authority = start_project(tmp_path, monkeypatch, localnet.url)
    address = chain.record_address(authority.pubkey(), chain.instance_id(INSTANCE))[0]
    held = f"the record at {address} holds savepoint {SAVEPOINTS} (read and its signature checked in this run)"
    cuts = {
        "empty": (lambda history: [], "holds 0 transaction(s), which wrote no savepoint: savepoint(s) 1..3"),
        "its start": (lambda history: history[:1], "beginning at savepoint 3 with no initialize before it"),
        "its end": (lambda history: history[1:], "which wrote savepoints up to 2 only: savepoint(s) 3..3"),
    }

    def ledger_through(rewrite) -> Result:
        with Rewriting(localnet.url, HISTORY, rewrite) as proxy:
            monkeypatch.setenv("PRECOMPACT_CLUSTER", proxy.url)
            try:
                return verify_ledger()
            finally:
                monkeypatch.delenv("PRECOMPACT_CLUSTER")

    for cut, (rewrite, said) in cuts.items():
        result = ledger_through(rewrite)
        assert result.exit_code == 4 and "✓ ledger" not in result.output, (cut, result.output)
        assert f"✗ ledger not verified: {INSTANCE}: " in result.output and said in result.output, (cut, result.output)
        assert "the endpoint's history of the record is incomplete" in result.output, (cut, result.output)
    assert held in ledger_through(cuts["its end"][0]).output
    # The second machine: its index records no confirmation; the record read is the floor.
    index = project / "logs" / "precompact-savepoint.jsonl"
    lines = index.read_text().splitlines(keepends=True)
    index.write_text("".join(line for line in lines if json.loads(line)["event"] != "LAYER_3_CONFIRMED"))
    assert savepoint_log.highest_confirmed(savepoint_log.savepoints(project / "logs")) == 0
    empty = ledger_through(cuts["empty"][0])
    assert empty.exit_code == 4 and held in empty.output and "✓ ledger" not in empty.output, empty.output
    honest = verify_ledger()
    assert honest.exit_code == 0 and f"savepoints 1..{SAVEPOINTS} in order" in honest.output, honest.output


@pytest.mark.parametrize("chain_layer", [False, True])
def test_prove_names_the_savepoint_asked_for_and_the_fix_that_works(tmp_path, chain_layer):
    """Nothing confirmed on chain: `prove 4` names savepoint 4, and with the chain layer off says
    so and how to turn it on; with it on (the cluster unreachable), `precompact flush`."""
    from support.commands import precompact
    from support.projects import new_project

    project = new_project(tmp_path, "project", git_layer=False, chain_layer=chain_layer)
    for _ in range(4):
        assert precompact(project.path, "savepoint", "--no-transcript").returncode in (0, 3)
    done = precompact(project.path, "prove", "4")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    expected = (
        "savepoint 4 is not confirmed on chain; run `precompact flush` and prove 4 once `precompact status` shows it confirmed"
        if chain_layer
        else "savepoint 4 is not on chain: the chain layer is off in .precompact.toml; turn it on with "
        "`precompact init --force --chain devnet` (or a cluster URL), then run `precompact flush`"
    )
    assert done.stderr.strip() == f"Error: {expected}"
    if chain_layer:  # 4 recorded confirmed (the index says so), 1 not: the bundle of 4 needs 1 too
        with (project.logs / "precompact-savepoint.jsonl").open("a") as index:
            index.write(json.dumps({"event": "LAYER_3_CONFIRMED", "instance": "Trial #1", "sequence": 4}) + "\n")
        again = precompact(project.path, "prove", "4")
        assert again.returncode == 1 and again.stderr.strip() == (
            "Error: savepoint 1 (the bundle of 4 holds 1 to 4) is not confirmed on chain; "
            "run `precompact flush` and prove 4 once `precompact status` shows it confirmed"
        )


HUGE_BASE58 = "2" * 200_000  # quadratic to decode as a base58 number: minutes, before a length check
WELL_TYPED = {
    "format": "precompact-proof-bundle",
    "version": 2,
    "instance": INSTANCE,
    "instance_id": "00" * 32,
    "program_id": HUGE_BASE58,
    "authorities": [],
    "savepoint": 1,
    "snapshot_hash": "00" * 32,
    "chain": [],
}


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"[" * 100_000, "nested deeper than"),
        (b'{"a":' * 200 + b"1" + b"}" * 200, "nested deeper than 128"),
        (json.dumps(WELL_TYPED).encode(), "base58"),
    ],
    ids=["brackets", "objects", "huge-base58"],
)
def test_a_hostile_bundle_gets_one_line_from_both_verifiers(tmp_path, content, said):
    """Nested past what json's recursion takes, or a base58 field the reference verifier would
    decode in quadratic time: a one-line verdict, exit 1, no traceback, in seconds."""
    path = tmp_path / "bundle.json"
    path.write_bytes(content)
    began = time.monotonic()
    client = subprocess.run(
        [str(Path(sys.executable).with_name("precompact")), "verify-bundle", str(path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    reference = run_reference(path, pinned=False)
    assert time.monotonic() - began < 10
    assert client.returncode == 1 and "Traceback" not in client.stderr
    assert len((client.stdout + client.stderr).strip().splitlines()) == 1
    assert reference.returncode == 1 and reference.stderr == "", reference.stderr
    [reported] = reference.stdout.strip().splitlines()
    assert reported.startswith("FAILED:") and said in reported, reported


def test_a_repeated_key_is_refused_by_both_verifiers_in_one_line(lineage, tmp_path):
    """Every object has exactly the listed keys (docs/proof-bundle.md, "Encoding"): a key given
    twice, the last value the valid one, would show a reader of the text one value while the
    verifier checks the other."""
    written = lineage[3]
    text = json.dumps(written)
    assert text.startswith('{"format"')
    path = tmp_path / "repeated.json"
    path.write_text('{"version": 1, ' + text[1:])
    client = subprocess.run(
        [str(Path(sys.executable).with_name("precompact")), "verify-bundle", str(path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert client.returncode == 1 and "Traceback" not in client.stderr, client.stdout + client.stderr
    [said] = (client.stdout + client.stderr).strip().splitlines()
    assert 'names the key "version" twice' in said and "precompact prove" in said, said
    reference = run_reference(path)
    assert reference.returncode == 1 and reference.stderr == "", reference.stderr
    [reported] = reference.stdout.strip().splitlines()
    assert reported == 'FAILED: an object names the key "version" twice', reported
    # Nested as well: inside a savepoint of the chain.
    path.write_text(text.replace('"sequence": 2,', '"sequence": 2, "sequence": 2,', 1))
    assert run_reference(path).stdout.strip() == 'FAILED: an object names the key "sequence" twice'
    # The same bundle without the repeat verifies in both (the test changes only the repeat).
    path.write_text(text)
    assert run_reference(path).returncode == 0


def test_a_bundle_holds_the_fields_of_the_format_with_their_documented_types(lineage):
    """docs/proof-bundle.md's top-level table, on a bundle `precompact prove` wrote: `program_id`
    base58, 32 bytes, the precompact program; `savepoint` an integer ≥ 1, N; each `authority`
    base58, 32 bytes, an ed25519 public key that signed savepoints."""
    _, project, _, written, _ = lineage
    assert written["format"] == "precompact-proof-bundle" and written["version"] == 2
    assert written["instance"] == INSTANCE
    assert written["instance_id"] == hashlib.sha256(INSTANCE.encode()).hexdigest()
    assert len(signed.b58decode(written["program_id"])) == 32 and written["program_id"] == str(chain.PROGRAM_ID)
    assert type(written["savepoint"]) is int and written["savepoint"] == SAVEPOINTS >= 1
    [authority] = written["authorities"]
    signer = Keypair.from_bytes(bytes(json.loads((project.parent / "id.json").read_text()))).pubkey()
    assert len(signed.b58decode(authority["authority"])) == 32 and authority["authority"] == str(signer)
    assert len(written["chain"]) == SAVEPOINTS and written["snapshot_hash"] == written["chain"][-1]["snapshot_hash"]


def program_address(seeds: list[bytes], bump: int) -> Pubkey | None:
    """The program address of `seeds` and `bump`, None when that hash is on the ed25519 curve."""
    digest = hashlib.sha256(b"".join(seeds) + bytes([bump]) + bytes(chain.PROGRAM_ID) + b"ProgramDerivedAddress")
    found = Pubkey(digest.digest())
    return None if found.is_on_curve() else found


def test_a_record_address_derived_with_a_lower_bump_is_refused(lineage, tmp_path):
    """docs/proof-bundle.md: a verifier SHOULD check what `find_program_address` does: the
    address is not a valid ed25519 point and `bump` is the highest value from 255 down for which
    the hash is not one ("`precompact verify-bundle` does"). A lower bump that also gives a
    program address (off the curve) is refused."""
    written = lineage[3]
    record_ = written["authorities"][0]["record"]
    seeds = [bytes.fromhex(seed) for seed in record_["seeds"]]
    bump, address = next(
        (bump, found) for bump in range(record_["bump"] - 1, -1, -1) if (found := program_address(seeds, bump))
    )
    for forged in ({"bump": bump}, {"bump": bump, "address": str(address)}):
        document = copy.deepcopy(written)
        document["authorities"][0]["record"].update(forged)
        path = tmp_path / "forged.json"
        path.write_text(json.dumps(document))
        checked = subprocess.run(
            [str(Path(sys.executable).with_name("precompact")), "verify-bundle", str(path)],
            capture_output=True,
            text=True,
            check=False,
            cwd=tmp_path,
        )
        assert checked.returncode == 1, checked.stdout + checked.stderr
        assert "record.address is not the program address of those seeds" in checked.stdout + checked.stderr


def test_a_transaction_slot_that_goes_back_is_refused_by_both_verifiers(lineage):
    """docs/proof-bundle.md: "`timestamp` and `transaction.slot` never decrease from one entry to
    the next". The slot is signed by no one, so a bundle can state any; the timestamp is signed
    and the program refuses one that goes back (program.rs's rejects_timestamp_going_backwards)."""
    written = copy.deepcopy(lineage[3])
    first, second = (entry["transaction"]["slot"] for entry in written["chain"][:2])
    assert first <= second
    written["chain"][1]["transaction"]["slot"] = first - 1
    verdict = bundle.check(written)
    assert verdict.status == verdicts.FAILED and "its timestamp or slot is before savepoint 1's" in verdict.detail
    assert rejected_by_reference(written, lineage[4])


def test_the_snapshot_must_say_it_is_savepoint_n_of_the_instance_and_name_its_predecessor(lineage):
    """docs/proof-bundle.md: "`precompact verify-bundle` also reads the snapshot document and
    checks it says it is savepoint N of `instance` and names `prev_snapshot_hash` as its
    predecessor". Bytes that hash to the signed value pass the hash check; this rule is what
    stands when they do, so it is checked here on its own, with the signed values set to
    those of another savepoint's real snapshot."""
    _, project, _, written, _ = lineage
    files = {
        int(path.stem.rsplit("_", 1)[1]): path.read_bytes()
        for path in (project / "logs" / "precompact-saves").glob("snapshot_*.json")
    }
    written = {key: value for key, value in written.items() if key != "snapshot"}  # the file given alone
    second = copy.deepcopy(written)
    second["snapshot_hash"] = hashlib.sha256(files[2]).hexdigest()
    with pytest.raises(verdicts.Broken, match=f"says it is savepoint 2 of {INSTANCE}"):
        bundle._check_snapshot(second, files[2])
    unlinked = copy.deepcopy(written)
    unlinked["chain"][-1]["prev_snapshot_hash"] = "11" * 32
    with pytest.raises(verdicts.Broken, match="names predecessor"):
        bundle._check_snapshot(unlinked, files[3])
    assert bundle._check_snapshot(written, files[3]) == []


@pytest.mark.parametrize("alias", [b"\x81\x00", b"\x81\x80\x00"])
def test_a_compact_u16_alias_is_refused_by_both_verifiers(lineage, alias):
    """docs/proof-bundle.md: "an encoding of more than one byte whose last byte is 0 is not:
    Solana rejects such aliases". The signature count lies outside the signed message, so its
    alias changes the bundle's bytes and breaks no signature: only the shortest-form rule refuses it."""
    written = copy.deepcopy(lineage[3])
    transaction = written["chain"][1]["transaction"]
    wire = base64.b64decode(transaction["base64"])
    assert wire[0] == 1, "one signature, said in one byte"
    transaction["base64"] = base64.b64encode(alias + wire[1:]).decode()
    assert bundle.check(written).status == verdicts.FAILED
    assert rejected_by_reference(written, lineage[4])


def test_a_bundle_is_verified_only_for_the_authority_and_program_its_reader_pins(lineage, tmp_path, monkeypatch):
    """docs/proof-bundle.md: a bundle proves its savepoint "to someone who trusts only the
    authority's public key": it names its own keys, so anyone's key and instance name make a
    bundle whose every signature checks. Outside a project nothing is pinned: no ✓, exit 4 (not
    verified), the signer named; a wrong key or program is FAILED; the pinned ones are named in the ✓."""
    _, _, _, written, authority = lineage
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(written))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    monkeypatch.chdir(outside)
    stranger, program = str(Keypair().pubkey()), str(chain.PROGRAM_ID)
    unpinned = verify_bundle(path)
    assert unpinned.exit_code == 4 and "✓" not in unpinned.output, unpinned.output
    assert (
        f"signed by {authority}, which you did not pin: pass --authority {authority} if you trust it" in unpinned.output
    )
    wrong = verify_bundle(path, "--authority", stranger)
    assert wrong.exit_code == 1 and f"signed by {authority}, not the pinned authority {stranger}" in wrong.output
    other_program = verify_bundle(path, "--authority", authority, "--program-id", stranger)
    assert other_program.exit_code == 1 and f"pass --program-id {program} if you trust it" in other_program.output
    assert verify_bundle(path, "--authority", "not-a-key").exit_code == 2
    right = verify_bundle(path, "--authority", authority)
    assert right.exit_code == 0, right.output
    assert (
        f"✓ bundle verified: savepoint {SAVEPOINTS} of {INSTANCE!r}, pinned authority {authority}, pinned program {program}"
        in right.output
    )
    # The reference verifier alike: FAILED without both pins, or with another key.
    for pins, said in (
        ([], f"which you did not pin: pass --authority {authority}"),
        (["--authority", authority], f"pass --program-id {program}"),
        (["--authority", stranger, "--program-id", program], f"not the pinned authority {stranger}"),
        (["--authority", authority, "--program-id", stranger], f"pass --program-id {program}"),
    ):
        refused = run_reference(path, *pins, pinned=False)
        assert refused.returncode == 1 and refused.stdout.startswith("FAILED:") and said in refused.stdout, pins
    accepted = run_reference(path, "--authority", authority, "--program-id", program, pinned=False)
    assert accepted.returncode == 0 and f"pinned authority {authority}" in accepted.stdout, accepted.stdout


def test_inside_a_project_a_bundle_signed_by_another_key_is_refused(lineage, tmp_path, monkeypatch):
    """Inside a project the pins default to its configured key and program: a bundle of the same
    instance name signed by someone else's key, every signature of it valid, is FAILED there."""
    node, _, _, written, authority = lineage
    enter(lineage, monkeypatch)
    genuine = tmp_path / "genuine.json"
    genuine.write_text(json.dumps(written))
    assert verify_bundle(genuine).exit_code == 0
    forger_root = tmp_path / "forger"
    forger_root.mkdir()
    with pytest.MonkeyPatch.context() as forger:
        forger.setenv("XDG_CONFIG_HOME", str(forger_root / "xdg"))
        _, key = start_project(forger_root, forger, node.url, count=1)
        forged = tmp_path / "forged.json"
        forged.write_text(json.dumps(prove("1")))
    enter(lineage, monkeypatch)
    result = verify_bundle(forged)
    assert result.exit_code == 1 and "✓" not in result.output, result.output
    assert f"signed by {key.pubkey()}, not the pinned authority {authority}" in result.output
