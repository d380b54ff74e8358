"""`precompact key rotate [--recover]` on precompact-localnet: the lineage continues under a new
key without breaking the hash chain (more savepoints, `verify`), the old record freezes, a
recovery says it was not signed by the old key, and each refusal names its fix."""

from __future__ import annotations

import base64
import copy
import hashlib
import importlib.util
import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from jsonschema import Draft202012Validator
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.transaction import Transaction

from precompact.chain import record, rpc
from precompact.chain import wire as chain
from precompact.config import settings as configuration
from precompact.local import savepoint_log
from precompact.proof import bundle
from precompact.verifier import team, verdicts
from support.commands import INSTANCE, invoke, statuses
from support.localnet import REPO
from support.projects import fund

REFERENCE = REPO / "tools" / "verify_bundle.py"
_spec = importlib.util.spec_from_file_location("verify_bundle", REFERENCE)
assert _spec is not None and _spec.loader is not None
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)


def start_project(root: Path, monkeypatch, url: str, count: int) -> Keypair:
    """A project with `count` savepoints landed on the localnet; returns its signing key."""
    project, remote = root / "project", root / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    project.mkdir()
    for args in (["init", "-q", "-b", "main"], ["remote", "add", "origin", str(remote)], ["config", "user.name", "Dev"], ["config", "user.email", "dev@example.invalid"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=project, check=True)
    monkeypatch.chdir(project)
    keypair = root / "id.json"
    result = invoke(
        "init", "--yes", "--no-encrypt", "--instance", INSTANCE, "--cluster", url, "--keypair", str(keypair)
    )
    assert result.exit_code == 0, result.output
    authority = Keypair.from_bytes(bytes(json.loads(keypair.read_text())))
    fund(url, authority)
    for _ in range(count):
        save()
    return authority


def save() -> None:
    result = invoke("savepoint", "--no-transcript")
    assert result.exit_code == 0, result.output


def record_of(url: str, authority: Pubkey) -> record.Record:
    address, _ = chain.record_address(authority, chain.instance_id(INSTANCE))
    found = rpc.Cluster(url, timeout=10).account(str(address))
    assert found is not None, f"no record at {address}"
    return record.decode(found[1])


def proved(tmp_path: Path, n: int) -> tuple[Path, dict]:
    path = tmp_path / f"bundle-{n}.json"
    result = invoke("prove", str(n), "-o", str(path))
    assert result.exit_code == 0, result.output
    return path, json.loads(path.read_text())


def run_reference(path: Path, authority: Pubkey) -> subprocess.CompletedProcess:
    pins = ["--authority", str(authority), "--program-id", str(chain.PROGRAM_ID)]
    return subprocess.run(
        [sys.executable, str(REFERENCE), str(path), *pins], capture_output=True, text=True, check=False
    )


def rejected_by_reference(document, authority: Pubkey) -> bool:
    try:
        reference.verify(document, authority=str(authority), program_id=str(chain.PROGRAM_ID))
    except (reference.Invalid, ValueError, KeyError, TypeError):
        return True
    return False


def configured_key() -> Pubkey:
    loaded = configuration.load(Path.cwd())
    return chain.load_keypair(loaded.keypair).pubkey()


def continuing_call(written: dict) -> tuple[bytes, list[Pubkey], list[Pubkey]]:
    """The program's instruction in the transaction that continued the lineage under
    `authorities[1]`, decoded as docs/proof-bundle.md tells a verifier to: its data, its accounts,
    and the transaction's signers."""
    message = Transaction.from_bytes(
        base64.b64decode(written["authorities"][1]["continued"]["transaction"]["base64"])
    ).message
    keys = list(message.account_keys)
    [call] = [i for i in message.instructions if str(keys[i.program_id_index]) == written["program_id"]]
    return bytes(call.data), [keys[a] for a in bytes(call.accounts)], keys[: message.header.num_required_signatures]


def record_address(authority: Pubkey) -> Pubkey:
    return chain.record_address(authority, chain.instance_id(INSTANCE))[0]


def test_rotation_continues_the_lineage_and_freezes_the_old_record(localnet, monkeypatch, tmp_path):
    old = start_project(tmp_path, monkeypatch, localnet.url, count=2)
    before_rotation = tmp_path / "proved-before-the-rotation.json"
    assert invoke("prove", "2", "-o", str(before_rotation)).exit_code == 0
    result = invoke("key", "rotate", "--airdrop")
    assert result.exit_code == 0, result.output
    new = configured_key()
    assert new != old.pubkey()
    assert f"rotated: savepoint 2 of {INSTANCE} now continues under {new} (was {old.pubkey()})" in result.output

    frozen = record_of(localnet.url, old.pubkey())
    assert frozen.frozen and frozen.rotated_to() == new and frozen.sequence == 2
    continued = record_of(localnet.url, new)
    assert (continued.entry_type, continued.sequence) == (chain.ENTRY_TYPE_ROTATED, 2)
    assert continued.continued_from() == old.pubkey() and not continued.recovered
    assert continued.snapshot_hash == frozen.snapshot_hash
    [rotation] = savepoint_log.read(Path("logs")).rotations(INSTANCE)
    assert (rotation.sequence, rotation.old_authority, rotation.new_authority) == (2, str(old.pubkey()), str(new))
    assert not rotation.recovered

    verified = invoke("verify", "--all")
    assert verified.exit_code == 0, verified.output
    assert "carried over from authority" in verified.output and "by a rotation both keys signed" in verified.output
    inspected = invoke("inspect")
    assert inspected.exit_code == 0, inspected.output
    assert f"entry_type: 2: continues {old.pubkey()}'s lineage (rotation, both keys signed)" in inspected.output
    old_record = chain.record_address(old.pubkey(), chain.instance_id(INSTANCE))[0]
    inspected = invoke("inspect", "--address", str(old_record), "--json")
    assert json.loads(inspected.stdout)["lineage"] == (
        f"frozen: the lineage continues under {new} (rotation); it takes no more savepoints"
    )

    save()
    save()
    assert [s["layer_3"] for s in statuses(Path.cwd())] == ["CONFIRMED"] * 4
    extended = record_of(localnet.url, new)
    assert (extended.sequence, extended.entry_type) == (4, chain.ENTRY_TYPE_SAVEPOINT)
    index = savepoint_log.savepoints(Path("logs"), INSTANCE)
    assert index[2].prev_snapshot_hash == index[1].snapshot_hash  # the chain runs on across the rotation

    verified = invoke("verify", "--all")
    assert verified.exit_code == 0, verified.output
    assert "✓ 4 savepoint(s) verified" in verified.output and "4 savepoint(s) linked to it" in verified.output
    assert (
        f"after savepoint 2 the lineage moved from {old.pubkey()} to {new}: rotated with both keys' signatures"
        in verified.output
    )

    ledger = invoke("verify", "--ledger")
    assert ledger.exit_code == 0, ledger.output
    assert "rotated to this key, both keys signing" in ledger.output and "savepoints 1..2 under" in ledger.output

    # Bundles carry each authority and the rotation; both verifiers follow the chain across it.
    for n in (2, 4):
        path, written = proved(tmp_path, n)
        assert [a["authority"] for a in written["authorities"]] == [str(old.pubkey()), str(new)][: 1 + (n > 2)]
        # Savepoint 2's bundle ends before the rotation: it carries the old key alone, which the
        # project pins beside its own for savepoints 1..2, as this machine's sealed line records.
        signer = old.pubkey() if n == 2 else new
        if n == 2:
            for bundle_of_2 in (path, before_rotation):
                mine = invoke("verify-bundle", str(bundle_of_2))
                assert mine.exit_code == 0, mine.output
                assert (
                    f"✓ bundle verified: savepoint 2 of {INSTANCE!r}, pinned authority {old.pubkey()} (the lineage moved from it to your key {new} after savepoint 2, as this machine recorded)"
                    in mine.output
                )
        result = invoke("verify-bundle", str(path), "--authority", str(signer))
        assert result.exit_code == 0 and f"✓ bundle verified: savepoint {n} of" in result.output, result.output
        assert f"pinned authority {signer}" in result.output
        checked = run_reference(path, signer)
        assert checked.returncode == 0 and checked.stdout.startswith("verified:"), checked.stdout
    assert written["authorities"][1]["continued"]["kind"] == "rotation" and "1 key rotation(s)" in checked.stdout
    # Where no sealed line says the lineage moved (another machine, another directory), the old
    # key's bundle is not the pinned key's: the refusal names the key to pin and where to read it.
    of_2 = tmp_path / "bundle-2.json"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    project = Path.cwd()
    monkeypatch.chdir(elsewhere)
    refused = invoke("verify-bundle", str(of_2), "--authority", str(new))
    assert refused.exit_code == 1 and "✓" not in refused.output, refused.output
    assert (
        f"signed by {old.pubkey()}, not the pinned authority {new}: if {old.pubkey()} is a key your lineage moved from (`precompact verify --ledger` names each"
        in refused.output
    ), refused.output
    assert f"pass --authority {old.pubkey()}" in refused.output
    assert run_reference(of_2, new).returncode == 1
    monkeypatch.chdir(project)
    # In the project, a key pinned by hand is that key alone; the old key vouches only for the
    # savepoints it signed before the lineage moved on (a bundle of 2 signed by it is refused
    # when the sealed line says it signed savepoint 1 only).
    stranger = str(Keypair().pubkey())
    assert f"not the pinned authority {stranger}" in invoke("verify-bundle", str(of_2), "--authority", stranger).output
    assert bundle.pins(None, None, configuration.load(project))[2] == {str(old.pubkey()): 2}
    of_2_document = json.loads(of_2.read_text())
    beyond = bundle.check(of_2_document, authority=str(new), moved_from={str(old.pubkey()): 1})
    assert beyond.status == verdicts.FAILED and "which signed savepoints up to 1 only" in beyond.detail, beyond
    assert bundle.check(of_2_document, authority=str(new)).status == verdicts.FAILED
    # docs/proof-bundle.md: a rotation's data is exactly the 8 bytes sha256("global:rotate_authority")[:8],
    # its first four accounts A, R_A, B, R_B, with A and B both signers.
    data, accounts, signers = continuing_call(written)
    assert data == hashlib.sha256(b"global:rotate_authority").digest()[:8]
    assert accounts[:4] == [old.pubkey(), record_address(old.pubkey()), new, record_address(new)]
    assert old.pubkey() in signers and new in signers
    for forged in ("recovery", "swap", "first", "signer"):
        document = copy.deepcopy(written)
        rotated = document["authorities"][1]
        if forged == "recovery":
            rotated["continued"]["kind"] = "recovery"
        elif forged == "swap":
            document["authorities"].reverse()
        elif forged == "first":
            rotated["first"] = 4
        else:
            rotated["authority"] = str(old.pubkey())
        assert bundle.check(document, authority=str(new)).status == verdicts.FAILED, forged
        assert rejected_by_reference(document, new), forged

    # The old key is refused: by the client, and by the program when posted around it.
    old_path = tmp_path / "id.json"
    refused = invoke("key", "rotate", env={"PRECOMPACT_KEYPAIR": str(old_path)})
    assert refused.exit_code == 1
    assert (
        f"was already rotated to {new}, recorded in the index, and .precompact.toml signs with that key: nothing to finish"
        in refused.output
    ), refused.output
    assert record_of(localnet.url, old.pubkey()).sequence == 2


def test_a_rotation_line_this_machine_did_not_seal_is_said_as_not_checked_and_adds_no_key(
    localnet, monkeypatch, tmp_path
):
    """A rotation line appended to logs/ (or one recorded before rotations were sealed) is not
    repeated by verify's ✓ line as a rotation, is said as not checked, and adds no key to the
    ones the own branch is held to; the line `key rotate` recorded, sealed, still counts."""
    old = start_project(tmp_path, monkeypatch, localnet.url, count=1)
    assert invoke("key", "rotate", "--airdrop").exit_code == 0
    new = configured_key()
    save()  # past the savepoint carried over: the record no longer says the rotation, the index does
    index = Path("logs") / savepoint_log.INDEX_NAME
    [sealed] = [json.loads(x) for x in index.read_text().splitlines() if '"event":"AUTHORITY_ROTATED"' in x]
    assert len(sealed["seal"]) == 64
    attacker = str(Keypair().pubkey())
    forged = {**sealed, "old_authority": attacker, "new_authority": str(new)}
    unsealed = {k: v for k, v in sealed.items() if k != "seal"}
    with index.open("a") as appended:
        for line in (forged, unsealed):
            appended.write(json.dumps(line) + "\n")

    verified = invoke("verify", "--all")
    assert verified.exit_code == 0, verified.output
    assert "2 rotation line(s) in logs/ not sealed by this machine: ignored, not checked" in verified.output
    assert attacker not in verified.output
    moved = f"after savepoint 1 the lineage moved from {old.pubkey()} to {new}: rotated with both keys' signatures"
    assert verified.output.count(moved) == 1, verified.output
    [rotation] = savepoint_log.read(Path("logs")).rotations(INSTANCE)
    assert rotation.old_authority == str(old.pubkey())
    loaded = configuration.load(Path.cwd())
    assert team.your_keys(loaded, str(new)) == {str(new): None, str(old.pubkey()): 1}
    assert bundle.pins(None, None, loaded)[2] == {str(old.pubkey()): 1}  # the key a bundle of 1 may carry


def test_rotations_in_a_row_before_a_savepoint_each_read_back_and_the_lineage_goes_on(localnet, monkeypatch, tmp_path):
    """Issue #48: a second (and third) rotation before any new savepoint used to leave the instance
    on a frozen key ("could not be read back: the record's signature does not verify")."""
    first = start_project(tmp_path, monkeypatch, localnet.url, count=2).pubkey()
    keys = [first]
    for _ in range(3):
        result = invoke("key", "rotate", "--airdrop")
        assert result.exit_code == 0, result.output
        keys.append(configured_key())
        assert f"now continues under {keys[-1]} (was {keys[-2]})" in result.output, result.output
        verified = invoke("verify", "--all")
        assert verified.exit_code == 0, verified.output
    assert len(set(keys)) == 4
    assert len(savepoint_log.read(Path("logs")).rotations(INSTANCE)) == 3
    # The key file's name, as docs/key-rotation.md gives it: `<name>-<key>.json` beside init's.
    own_keys = Path(os.environ["XDG_CONFIG_HOME"]) / "precompact" / "keys"
    assert configuration.load(Path.cwd()).keypair == own_keys / f"gabriel-215-{str(keys[-1])[:8]}.json"

    # Each record the lineage passed through without a savepoint of its own names the key that
    # signed savepoint 2; the verifier checks that key's signature at that key's address.
    for passed, successor in itertools.pairwise(keys[1:]):
        frozen = record_of(localnet.url, passed)
        assert frozen.frozen and frozen.rotated_to() == successor and frozen.signed_by() == first
    newest = record_of(localnet.url, keys[-1])
    assert (newest.entry_type, newest.sequence) == (chain.ENTRY_TYPE_ROTATED, 2)
    assert newest.continued_from() == keys[-2] and newest.signed_by() == first
    assert f"its signature is {first}'s, a key before {keys[-2]}" in verified.output, verified.output
    inspected = invoke("inspect")
    assert inspected.exit_code == 0, inspected.output
    assert f"the savepoint shown is {first}'s, a key before it" in inspected.output, inspected.output

    save()
    assert [s["layer_3"] for s in statuses(Path.cwd())] == ["CONFIRMED"] * 3
    extended = record_of(localnet.url, keys[-1])
    assert (extended.sequence, extended.entry_type) == (3, chain.ENTRY_TYPE_SAVEPOINT)
    verified = invoke("verify", "--all")
    assert verified.exit_code == 0 and "✓ 3 savepoint(s) verified" in verified.output, verified.output
    ledger = invoke("verify", "--ledger")
    assert ledger.exit_code == 0, ledger.output
    assert "savepoints 1..2 under" in ledger.output and "then savepoints 3..3 in order" in ledger.output, ledger.output

    for n in (2, 3):
        path, written = proved(tmp_path, n)
        assert [a["authority"] for a in written["authorities"]] == [str(k) for k in keys][: 1 if n == 2 else 4]
        signer = keys[0] if n == 2 else keys[-1]
        result = invoke("verify-bundle", str(path), "--authority", str(signer))
        assert result.exit_code == 0 and f"✓ bundle verified: savepoint {n} of" in result.output, result.output
        checked = run_reference(path, signer)
        assert checked.returncode == 0 and checked.stdout.startswith("verified:"), checked.stdout
    assert "3 key rotation(s)" in checked.stdout


def test_the_program_refuses_a_savepoint_under_the_rotated_key(localnet, monkeypatch, tmp_path):
    old = start_project(tmp_path, monkeypatch, localnet.url, count=1)
    assert invoke("key", "rotate", "--airdrop").exit_code == 0
    held = record_of(localnet.url, old.pubkey())
    fields = chain.SavepointFields(2, held.timestamp + 1, held.instance_id, b"\x07" * 32, held.snapshot_hash, "a" * 40)
    client = rpc.Cluster(localnet.url, timeout=10)
    from solders.hash import Hash
    from solders.transaction import Transaction

    blockhash = Hash.from_string(client.latest_blockhash())
    tx = Transaction.new_signed_with_payer(
        chain.savepoint_instructions(old, fields, b"{}"), old.pubkey(), [old], blockhash
    )
    try:
        client.send_transaction(bytes(tx))
    except rpc.RpcError as e:
        frozen_code = 6000 + [e["name"] for e in chain.IDL["errors"]].index("RecordFrozen")
        assert hex(frozen_code) in str(e) or str(frozen_code) in str(e), str(e)
    else:
        raise AssertionError("a savepoint under the rotated key was accepted")
    assert record_of(localnet.url, old.pubkey()).sequence == 1


def test_what_a_stolen_key_posts_after_a_recovery_is_a_warning_not_a_broken_ledger(localnet, monkeypatch, tmp_path):
    """Issue #48: the old key, still able to write to the record a recovery left (the program cannot
    change it without that key), used to keep the owner's `verify --ledger` red forever."""
    old = start_project(tmp_path, monkeypatch, localnet.url, count=2)
    (tmp_path / "id.json").unlink()  # "lost", but someone else holds it
    recovered = invoke("key", "rotate", "--recover", "--airdrop", env={"PRECOMPACT_AUTHORITY": str(old.pubkey())})
    assert recovered.exit_code == 0, recovered.output
    assert invoke("verify", "--ledger").exit_code == 0

    held = record_of(localnet.url, old.pubkey())
    fields = chain.SavepointFields(3, held.timestamp + 1, held.instance_id, b"\x07" * 32, held.snapshot_hash, "a" * 40)
    client = rpc.Cluster(localnet.url, timeout=10)
    from solders.hash import Hash
    from solders.transaction import Transaction

    def send_as_thief(instructions) -> None:
        blockhash = Hash.from_string(client.latest_blockhash())
        client.send_transaction(bytes(Transaction.new_signed_with_payer(instructions, old.pubkey(), [old], blockhash)))

    send_as_thief(chain.savepoint_instructions(old, fields, b"{}"))
    deadline = time.monotonic() + 10
    while record_of(localnet.url, old.pubkey()).sequence != 3:
        assert time.monotonic() < deadline, "the old record did not take the stolen key's savepoint"
        time.sleep(0.1)
    save()  # the owner's own savepoint 3, under the new key

    ledger = invoke("verify", "--ledger")
    assert ledger.exit_code == 0, ledger.output
    assert (
        "✓ ledger verified" in ledger.output and "continued without the old key's signature (recovery)" in ledger.output
    )
    assert "1 write(s) by a revoked key to a record a recovery left (warnings below)" in ledger.output, ledger.output
    old_address = chain.record_address(old.pubkey(), chain.instance_id(INSTANCE))[0]
    assert (
        f"warning: {INSTANCE} savepoint 3, slot" in ledger.output
        and f"savepoint 3 by {old.pubkey()}, the key revoked by the recovery in transaction" in ledger.output
        and f"on its abandoned record {old_address}: not part of this lineage" in ledger.output
    ), ledger.output

    # Closing the abandoned record (its key may) is one more warning, not a broken lineage.
    send_as_thief([chain.close_instruction(old.pubkey(), old_address)])
    deadline = time.monotonic() + 10
    while client.account(str(old_address)) is not None:
        assert time.monotonic() < deadline, "the stolen key could not close the abandoned record"
        time.sleep(0.1)
    ledger = invoke("verify", "--ledger", "--json")
    assert ledger.exit_code == 0, ledger.output
    said = json.loads(ledger.stdout)
    Draft202012Validator(json.loads((REPO / "docs" / "schemas" / "verify.schema.json").read_text())).validate(said)
    [verdict] = said["ledger"]
    assert verdict["status"] == verdicts.VERIFIED and verdict["findings"] == []
    assert len(verdict["warnings"]) == 2 and "a close by" in verdict["warnings"][1], verdict["warnings"]


def test_recovery_continues_without_the_lost_key_and_says_so(localnet, monkeypatch, tmp_path):
    old = start_project(tmp_path, monkeypatch, localnet.url, count=2)
    (tmp_path / "id.json").unlink()  # the key is lost

    refused = invoke("key", "rotate")
    assert refused.exit_code == 1
    assert (
        "does not exist" in refused.output
        and "`precompact key rotate --recover` continues without it" in refused.output
    )
    refused = invoke("key", "rotate", "--recover")
    assert (
        refused.exit_code == 1 and "--recover needs chain.authority set to the lost key's public key" in refused.output
    )

    result = invoke(
        "key", "rotate", "--recover", "--airdrop", "--json", env={"PRECOMPACT_AUTHORITY": str(old.pubkey())}
    )
    assert result.exit_code == 0, result.output
    assert "recovered without the old key's signature: savepoint 2" in result.output
    said = json.loads(result.stdout)
    Draft202012Validator(json.loads((REPO / "docs" / "schemas" / "key-rotate.schema.json").read_text())).validate(said)
    loaded = configuration.load(Path.cwd())
    new = chain.load_keypair(loaded.keypair).pubkey()
    assert (said["recovered"], said["sequence"], said["new_authority"]) == (True, 2, str(new))
    assert loaded.authority == str(new)  # chain.authority follows the key it named

    recovered = record_of(localnet.url, new)
    assert (recovered.entry_type, recovered.sequence) == (chain.ENTRY_TYPE_RECOVERED, 2)
    assert recovered.recovered and recovered.continued_from() == old.pubkey()
    assert not record_of(localnet.url, old.pubkey()).frozen  # nothing may change it without its key

    verified = invoke("verify", "--all")
    assert verified.exit_code == 0, verified.output
    assert "continued without the old key's signature" in verified.output
    inspected = invoke("inspect", "--json")
    assert json.loads(inspected.stdout)["lineage"].startswith(
        f"continues {old.pubkey()}'s lineage WITHOUT that key's signature (recovery)"
    )
    save()
    verified = invoke("verify", "--all")
    assert verified.exit_code == 0, verified.output
    assert "✓ 3 savepoint(s) verified" in verified.output
    assert "continued without the old key's signature (recovery)" in verified.output

    ledger = invoke("verify", "--ledger")
    assert ledger.exit_code == 0 and "continued without the old key's signature (recovery)" in ledger.output, (
        ledger.output
    )

    # A bundle of a savepoint before the recovery carries the lost key alone: the project, whose
    # sealed line records that the lineage moved from it, pins it for savepoints 1..2.
    before, _ = proved(tmp_path, 2)
    mine = invoke("verify-bundle", str(before))
    assert mine.exit_code == 0 and f"pinned authority {old.pubkey()} (the lineage moved from it" in mine.output, (
        mine.output
    )
    path, written = proved(tmp_path, 3)
    assert written["authorities"][1]["continued"]["kind"] == "recovery"
    # docs/proof-bundle.md: a recovery's data is sha256("global:recover_lineage")[:8] and the 32 bytes
    # of instance_id, its first three accounts B, R_B, R_A, and B a signer (A, the lost key, is not).
    data, accounts, signers = continuing_call(written)
    assert data == hashlib.sha256(b"global:recover_lineage").digest()[:8] + chain.instance_id(INSTANCE)
    assert accounts[:3] == [new, record_address(new), record_address(old.pubkey())]
    assert new in signers and old.pubkey() not in signers
    result = invoke("verify-bundle", str(path))
    assert result.exit_code == 0, result.output
    assert "not verified: savepoints 3..3 continue without the old key's signature" in result.output
    checked = run_reference(path, new)
    assert checked.returncode == 0 and "continue without the old key's signature (recovery)" in checked.stdout
    # The lost key vouches for nothing after the recovery, which it did not sign.
    assert (
        "without its signature (a recovery)"
        in invoke("verify-bundle", str(path), "--authority", str(old.pubkey())).output
    )
    assert run_reference(path, old.pubkey()).returncode == 1
    document = copy.deepcopy(written)
    document["authorities"][1]["continued"]["kind"] = "rotation"  # passing a recovery off as a rotation
    assert bundle.check(document, authority=str(new)).status == verdicts.FAILED and rejected_by_reference(document, new)


def test_refusals_name_their_fix(localnet, monkeypatch, tmp_path):
    start_project(tmp_path, monkeypatch, localnet.url, count=0)
    refused = invoke("key", "rotate")
    assert refused.exit_code == 1
    assert "holds no savepoint of 'Gabriel #215' yet: nothing to carry over" in refused.output
    path = Path(configuration.CONFIG_NAME)
    path.write_text(path.read_text().replace("chain = true", "chain = false"))
    assert invoke("trust", "--yes").exit_code == 0
    refused = invoke("key", "rotate")
    assert refused.exit_code == 1 and "the chain layer is off" in refused.output


class Cut(Exception):
    """The run stopped here, as a crash, a kill or a lost answer stops it."""


def rotation_sent(monkeypatch, cut_after: str) -> list[str]:
    """Records the signature `key rotate` sends; the run is then cut (`cut_after`): at the line
    that records the rotation in the index ("record"), or by the answer that never comes back
    although the transaction landed ("answer")."""
    from precompact.ops import anchoring, key_rotation

    sent: list[str] = []
    send = anchoring.send

    def sending(*args, **kwargs):
        sent.append(send(*args, **kwargs))
        if cut_after == "answer":
            raise rpc.RpcError("cluster http://127.0.0.1 did not answer sendTransaction (connection reset)")
        return sent[-1]

    def crashing(*args, **kwargs):
        raise Cut

    monkeypatch.setattr(key_rotation.anchoring, "send", sending)
    if cut_after == "record":
        monkeypatch.setattr(key_rotation.savepoint_log, "record_rotation", crashing)
    return sent


def test_a_rotation_cut_after_its_transaction_landed_is_finished_by_running_it_again(localnet, monkeypatch, tmp_path):
    """review7b F3: the transaction landed (the old record frozen), the run crashed before the
    index line: `verify` names the fix, and `key rotate` again finishes it from the chain, so
    `prove` goes on across the rotation, for the savepoints before it too."""
    old = start_project(tmp_path, monkeypatch, localnet.url, count=2)
    with monkeypatch.context() as cut:
        sent = rotation_sent(cut, "record")
        try:
            cut_run = invoke("key", "rotate", "--airdrop")
        except Cut:
            pass
        else:
            raise AssertionError(f"the rotation was not cut: {cut_run.output}")
    frozen = record_of(localnet.url, old.pubkey())
    new = frozen.rotated_to()
    assert frozen.frozen and new is not None and configured_key() == old.pubkey()
    assert savepoint_log.read(Path("logs")).rotations(INSTANCE) == []

    verified = invoke("verify")
    assert (
        f"the lineage was rotated on chain to {new} after savepoint 2, and this machine's index does not record it (a rotation cut short): `precompact key rotate` finishes it"
        in verified.output
    ), verified.output
    saved = invoke("savepoint", "--no-transcript")  # the frozen record takes no savepoint: it says how to go on
    assert saved.exit_code == 3 and "`precompact key rotate` finishes the rotation" in saved.output, saved.output
    [queued] = [s for s in statuses(Path.cwd()) if s["sequence"] == 3]
    assert any("`precompact key rotate` finishes the rotation" in f for f in queued["failures"]), queued
    proving = invoke("prove", "3")  # it cannot be confirmed until the rotation is finished: prove says how
    assert proving.exit_code == 1, proving.output
    assert (
        f"savepoint 3 is not confirmed on chain: the record of {old.pubkey()} was rotated on chain to {new} after savepoint 2, and this machine's index does not record it (a rotation cut short): `precompact key rotate` finishes it, then `precompact flush`"
        in proving.output
    ), proving.output

    finished = invoke("key", "rotate", "--airdrop", "--json")
    assert finished.exit_code == 0, finished.output
    said = json.loads(finished.stdout)
    Draft202012Validator(json.loads((REPO / "docs" / "schemas" / "key-rotate.schema.json").read_text())).validate(said)
    assert said["finished"] is True and "finished (its transaction had landed" in finished.output
    assert configured_key() == new  # the key the chain names, not another new one
    [rotation] = savepoint_log.read(Path("logs")).rotations(INSTANCE)
    assert (rotation.sequence, rotation.old_authority, rotation.new_authority) == (2, str(old.pubkey()), str(new))
    assert rotation.signature == sent[0] and not rotation.recovered  # the transaction that landed

    assert invoke("flush").exit_code == 0
    assert [s["layer_3"] for s in statuses(Path.cwd())] == ["CONFIRMED"] * 3
    verified = invoke("verify", "--all")
    assert verified.exit_code == 0, verified.output
    assert "rotated with both keys' signatures" in verified.output and "cut short" not in verified.output
    for n, signer in ((3, new), (2, old.pubkey())):
        path, _ = proved(tmp_path, n)
        checked = invoke("verify-bundle", str(path), "--authority", str(signer))
        assert checked.exit_code == 0 and f"✓ bundle verified: savepoint {n} of" in checked.output, checked.output


def test_a_rotation_whose_answer_was_lost_is_finished_and_a_recovery_is_not_sent_twice(localnet, monkeypatch, tmp_path):
    """review7b F3, a lost answer: the error says the transaction may have landed and names the
    rerun, which finishes it with the key the chain names; a recovery, which leaves the old
    record as it was, is found through the keys `key rotate` stored, never sent again."""
    old = start_project(tmp_path, monkeypatch, localnet.url, count=1)
    with monkeypatch.context() as cut:
        sent = rotation_sent(cut, "answer")
        lost = invoke("key", "rotate", "--airdrop")
    assert lost.exit_code == 1 and "the rotation was not confirmed" in lost.output
    assert "run `precompact key rotate` again: it finishes the rotation if the transaction landed" in lost.output
    finished = invoke("key", "rotate", "--airdrop")
    assert finished.exit_code == 0 and "finished" in finished.output, finished.output
    rotated = configured_key()
    assert record_of(localnet.url, old.pubkey()).rotated_to() == rotated
    assert [r.signature for r in savepoint_log.read(Path("logs")).rotations(INSTANCE)] == sent

    (tmp_path / "keys-lost").mkdir()
    lost_key = configuration.load(Path.cwd()).keypair
    lost_key.rename(tmp_path / "keys-lost" / lost_key.name)  # this key is lost now
    recover = ("key", "rotate", "--recover", "--airdrop")
    authority = {"PRECOMPACT_AUTHORITY": str(rotated)}
    with monkeypatch.context() as cut:
        sent = rotation_sent(cut, "answer")
        lost = invoke(*recover, env=authority)
    assert lost.exit_code == 1 and "run `precompact key rotate --recover` again" in lost.output, lost.output
    finished = invoke(*recover, env=authority)
    assert finished.exit_code == 0 and "finished" in finished.output, finished.output
    recovered_to = configured_key()
    found = record_of(localnet.url, recovered_to)
    assert found.recovered and found.continued_from() == rotated
    rotations = savepoint_log.read(Path("logs")).rotations(INSTANCE)
    assert (rotations[-1].signature, rotations[-1].new_authority, rotations[-1].recovered) == (
        sent[0],
        str(recovered_to),
        True,
    )
    assert len(sent) == 1 and len(rotations) == 2  # one recovery: the rerun sent nothing
    save()
    assert [s["layer_3"] for s in statuses(Path.cwd())] == ["CONFIRMED"] * 2
    verified = invoke("verify", "--all")
    assert verified.exit_code == 0 and "continued without the old key's signature (recovery)" in verified.output


def test_a_recovery_cut_after_its_transaction_landed_is_named_by_verify(localnet, monkeypatch, tmp_path):
    """A recovery leaves the old record as it was (not frozen), so only the key `key rotate
    --recover` stored names it: `verify` reads that key's record and names the command that
    finishes the recovery, and says it no more once that command has."""
    old = start_project(tmp_path, monkeypatch, localnet.url, count=2)
    (tmp_path / "keys-lost").mkdir()
    lost_key = configuration.load(Path.cwd()).keypair
    lost_key.rename(tmp_path / "keys-lost" / lost_key.name)
    authority = {"PRECOMPACT_AUTHORITY": str(old.pubkey())}
    assert "recovered" not in invoke("verify", env=authority).output  # no key stored: nothing to say
    with monkeypatch.context() as cut:
        sent = rotation_sent(cut, "record")
        try:
            cut_run = invoke("key", "rotate", "--recover", "--airdrop", env=authority)
        except Cut:
            pass
        else:
            raise AssertionError(f"the recovery was not cut: {cut_run.output}")
    assert not record_of(localnet.url, old.pubkey()).frozen
    assert savepoint_log.read(Path("logs")).rotations(INSTANCE) == []
    [stored] = [
        p for p in (Path(os.environ["XDG_CONFIG_HOME"]) / "precompact" / "keys").iterdir() if "-" in p.stem[-9:]
    ]
    new = chain.load_keypair(stored).pubkey()
    verified = invoke("verify", env=authority)
    assert (
        f"the lineage was recovered on chain to {new} after savepoint 2 (transaction {sent[0]}), and this machine's index does not record it (a recovery cut short): `precompact key rotate --recover` finishes it"
        in verified.output
    ), verified.output

    finished = invoke("key", "rotate", "--recover", "--airdrop", env=authority)
    assert finished.exit_code == 0 and "finished" in finished.output, finished.output
    assert configured_key() == new and len(sent) == 1
    verified = invoke("verify", "--all", env=authority)
    assert (
        "cut short" not in verified.output and "continued without the old key's signature (recovery)" in verified.output
    )


def test_recover_on_a_new_machine_after_restore(localnet, monkeypatch, tmp_path):
    """review7b F6, the case `--recover` exists for: the machine and its key are gone; on a new
    machine, after `restore`, the record's savepoint is checked against the chain (and the line
    the lost key signed), not against confirmations this machine never saw, and Layer 3 goes on
    under the new key."""
    lost = start_project(tmp_path / "laptop", monkeypatch, localnet.url, count=2)
    assert [s["layer_2"] for s in statuses(Path.cwd())] == ["PUSHED"] * 2
    (tmp_path / "laptop" / "id.json").unlink()

    for variable in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):  # another machine
        monkeypatch.setenv(variable, str(tmp_path / "desktop-home" / variable.lower()))
    desktop = tmp_path / "desktop"
    desktop.mkdir()
    for args in (["init", "-q", "-b", "main"], ["remote", "add", "origin", str(tmp_path / "laptop" / "remote.git")], ["config", "user.name", "Dev"], ["config", "user.email", "dev@example.invalid"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=desktop, check=True)
    monkeypatch.chdir(desktop)
    own = tmp_path / "desktop-id.json"
    result = invoke("init", "--yes", "--no-encrypt", "--instance", INSTANCE, "--cluster", localnet.url, "--keypair", str(own))  # fmt: skip
    assert result.exit_code == 0, result.output
    authority = {"PRECOMPACT_AUTHORITY": str(lost.pubkey())}

    refused = invoke("key", "rotate", "--recover", "--airdrop", env=authority)
    assert refused.exit_code == 1
    assert (
        "the record holds savepoint 2, which this machine's index does not have; run `precompact restore`, then `precompact key rotate` again"
        in refused.output
    ), refused.output
    # logs/ copied from the laptop without the lost key's signatures: nothing vouches for its lines.
    shutil.copytree(tmp_path / "laptop" / "project" / "logs", desktop / "logs")
    index = savepoint_log.index_path(desktop / "logs")
    kept = [line for line in index.read_text().splitlines() if '"SAVEPOINT_SIGNED"' not in line]
    index.write_text("\n".join(kept) + "\n")
    refused = invoke("key", "rotate", "--recover", "--airdrop", env=authority)
    assert refused.exit_code == 1
    assert (
        f"savepoint 2 in this machine's index is neither written here nor signed by {lost.pubkey()}; run `precompact restore`"
        in refused.output
    ), refused.output
    assert not record_of(localnet.url, lost.pubkey()).frozen
    shutil.rmtree(desktop / "logs")
    restored = invoke("restore", env=authority)
    assert restored.exit_code == 0, restored.output
    queued = invoke("flush", env=authority)
    assert "if that key is lost, `precompact key rotate --recover` continues the lineage" in queued.output, (
        queued.output
    )

    result = invoke("key", "rotate", "--recover", "--airdrop", env=authority)
    assert result.exit_code == 0, result.output
    assert "recovered without the old key's signature: savepoint 2" in result.output
    new = configured_key()
    assert record_of(localnet.url, new).continued_from() == lost.pubkey()
    assert [s["layer_3"] for s in statuses(Path.cwd())] == ["CONFIRMED"] * 2  # as the record confirms them
    save()
    assert [s["layer_3"] for s in statuses(Path.cwd())] == ["CONFIRMED"] * 3
    assert record_of(localnet.url, new).sequence == 3
    verified = invoke("verify", "--all")
    assert verified.exit_code == 0, verified.output
    assert "✓ 3 savepoint(s) verified" in verified.output
    assert "continued without the old key's signature (recovery)" in verified.output

    # A third machine with the new key alone: the lines the recovery carried over were signed
    # with it, and pushed, so `restore` checks every savepoint under it.
    new_key_file = configuration.load(Path.cwd()).keypair
    for variable in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(variable, str(tmp_path / "third-home" / variable.lower()))
    third = tmp_path / "third"
    third.mkdir()
    for args in (["init", "-q", "-b", "main"], ["remote", "add", "origin", str(tmp_path / "laptop" / "remote.git")], ["config", "user.name", "Dev"], ["config", "user.email", "dev@example.invalid"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=third, check=True)
    monkeypatch.chdir(third)
    result = invoke("init", "--yes", "--no-encrypt", "--instance", INSTANCE, "--cluster", localnet.url, "--keypair", str(new_key_file))  # fmt: skip
    assert result.exit_code == 0, result.output
    restored = invoke("restore")
    assert restored.exit_code == 0 and "restored 3 savepoint(s)" in restored.output, restored.output
    assert f"checked against the signature of {new}" in restored.output, restored.output


def test_a_rotation_cut_then_switched_to_by_hand_is_recorded_from_the_chain(localnet, monkeypatch, tmp_path):
    """review7b F3's state as it was reached: the rotation cut before its index line, then
    chain.keypair pointed at the new key by hand and a savepoint posted under it (the record no
    longer says where it came from). `key rotate` records the rotation from the record's first
    transaction, sends nothing, and `prove` goes on across it."""
    old = start_project(tmp_path, monkeypatch, localnet.url, count=2)
    with monkeypatch.context() as cut:
        sent = rotation_sent(cut, "record")
        try:
            invoke("key", "rotate", "--airdrop")
        except Cut:
            pass
    new = record_of(localnet.url, old.pubkey()).rotated_to()
    assert new is not None
    path = Path(configuration.CONFIG_NAME)
    key_file = Path(os.environ["XDG_CONFIG_HOME"]) / "precompact" / "keys" / f"gabriel-215-{str(new)[:8]}.json"
    text = path.read_text()
    [line] = [x for x in text.splitlines() if x.strip().startswith("keypair")]
    path.write_text(text.replace(line, f"keypair = {json.dumps(str(key_file))}"))
    assert invoke("trust", "--yes").exit_code == 0
    save()
    assert record_of(localnet.url, new).entry_type == chain.ENTRY_TYPE_SAVEPOINT
    proving = invoke("prove", "3")  # the index does not say the lineage moved: prove names the command that records it
    assert proving.exit_code == 1, proving.output
    assert (
        f"the record of {new} began as a rotation of another key's lineage, and this machine's index does not record it (a rotation cut short): `precompact key rotate` records it from the chain, then prove again"
        in proving.output
    ), proving.output

    keys = sorted(key_file.parent.iterdir())
    finished = invoke("key", "rotate")
    assert finished.exit_code == 0 and "finished" in finished.output, finished.output
    assert sorted(key_file.parent.iterdir()) == keys and configured_key() == new  # nothing new sent
    [rotation] = savepoint_log.read(Path("logs")).rotations(INSTANCE)
    assert (rotation.sequence, rotation.old_authority, rotation.new_authority, rotation.signature) == (
        2,
        str(old.pubkey()),
        str(new),
        sent[0],
    )
    for n, signer in ((3, new), (2, old.pubkey())):
        bundle_path, _ = proved(tmp_path, n)
        checked = invoke("verify-bundle", str(bundle_path), "--authority", str(signer))
        assert checked.exit_code == 0, checked.output


def test_a_rotation_hands_on_to_the_new_key_only_lines_the_old_key_vouched_for_up_to_the_carried_savepoint():
    """docs/security.md, "Rotation": `key rotate` signs with the new key the lines of savepoints
    1..N that the old key signed, and none after N (after a recovery the old key may be the
    thief's), nor a line the old key did not sign, nor one the new key signed already."""
    from precompact.verifier import signed

    def signer() -> signed.Signer:
        key = Keypair()
        return signed.Signer(bytes(key)[:32], str(key.pubkey()))

    old, new, other = signer(), signer(), signer()
    created = [
        {"event": "SAVEPOINT_CREATED", "instance": INSTANCE, "sequence": n, "snapshot_hash": f"{n:064x}"}
        for n in range(1, 6)
    ]
    folded = savepoint_log.fold(created)
    signers = {1: old, 2: other, 3: old, 4: old, 5: old}  # 2: another key's; 3: signed by the new key too
    events = created + [
        {
            "event": "SAVEPOINT_SIGNED",
            "instance": INSTANCE,
            "sequence": n,
            "signer": s.public_key,
            "line_signature": s.sign(folded[n - 1]).signature,
        }
        for n, s in [*signers.items(), (3, new)]
    ]
    savepoints = savepoint_log.fold(events)
    assert [s.sequence for s in signed.carried_over(savepoints, old.public_key, 4, new)] == [1, 4]
    assert [s.sequence for s in signed.carried_over(savepoints, old.public_key, 1, new)] == [1]
