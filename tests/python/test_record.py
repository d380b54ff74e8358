"""Account decoding and the verifier's offline record check, against the shared vectors."""

import json

import pytest
from solders.pubkey import Pubkey

from precompact.chain import record
from precompact.verifier import verdicts
from support.localnet import VECTORS

V = json.loads(VECTORS.read_text())
DATA = bytes.fromhex(V["account"]["data_hex"])
ADDRESS = Pubkey.from_string(V["record_address"])


def test_layout_size_matches_the_program():
    assert record.SIZE == V["account"]["size"] == 556


def test_decodes_every_field_of_the_vector():
    found = record.decode(DATA)
    s = V["savepoint"]
    assert found.magic == bytes([0xEF, 0xBB, 0xBF]) and found.version == 1
    assert found.reserved == bytes(28)
    assert found.entry_type == s["entry_type"]
    assert found.timestamp == s["timestamp"]
    assert found.instance_id.hex() == V["instance_id_hex"]
    assert found.snapshot_hash.hex() == s["snapshot_hash_hex"]
    assert found.commit == s["git_commit"]
    assert found.signature.hex() == V["signature_hex"]
    assert str(Pubkey.from_bytes(found.authority)) == V["authority"]
    assert found.sequence == s["sequence"]
    assert found.prev_snapshot_hash.hex() == s["prev_snapshot_hash_hex"]
    assert (found.slot, found.chain_timestamp) == (V["clock"]["slot"], V["clock"]["unix_timestamp"])
    assert found.bump == V["record_bump"]
    assert found.metadata_text == s["metadata"]
    as_json = record.to_json(found, ADDRESS)
    assert as_json["address"] == V["record_address"]
    assert as_json["snapshot_hash"] == s["snapshot_hash_hex"]
    assert as_json["metadata"] == s["metadata"]
    assert as_json["git_commit"] == s["git_commit"]
    for offset_field in V["account"]["fields"]:
        name = offset_field["name"]
        if name not in ("discriminator", "metadata"):
            assert name in as_json, name


ROOTS = verdicts.Roots(Pubkey.from_string(V["program_id"]), Pubkey.from_string(V["authority"]), V["instance_name"])


def test_the_vector_passes_the_chain_check_from_its_roots():
    assert ROOTS.address == ADDRESS
    found = verdicts.check_record(ROOTS, V["program_id"], DATA)
    assert verdicts.signature_valid(found, ROOTS) and found.sequence == V["savepoint"]["sequence"]


@pytest.mark.parametrize(
    "roots,data,owner,names",
    [
        (ROOTS, DATA[:73] + bytes([DATA[73] ^ 1]) + DATA[74:], None, "signature"),
        (verdicts.Roots(ROOTS.program_id, Pubkey.new_unique(), ROOTS.instance), DATA, None, "authority"),
        (verdicts.Roots(ROOTS.program_id, ROOTS.authority, ROOTS.instance + "x"), DATA, None, "instance_id"),
        (verdicts.Roots(Pubkey.new_unique(), ROOTS.authority, ROOTS.instance), DATA, "program", "signature"),
        (ROOTS, DATA, "11111111111111111111111111111111", "owned by"),
    ],
    ids=["snapshot hash bit", "another authority", "another instance", "another program", "foreign owner"],
)
def test_the_chain_check_names_what_fails(roots, data, owner, names):
    owner = str(roots.program_id) if owner in (None, "program") else owner
    with pytest.raises(verdicts.Broken, match=names):
        verdicts.check_record(roots, owner, data)


def test_an_owner_the_rpc_endpoint_made_up_is_quoted_on_one_line():
    forged = "11111111111111111111111111111111\nlayer 3: verified"
    with pytest.raises(verdicts.Broken) as raised:
        verdicts.check_record(ROOTS, forged, DATA)
    detail = str(raised.value)
    assert "\n" not in detail and '"11111111111111111111111111111111\\nlayer 3: verified"' in detail, detail


@pytest.mark.parametrize(
    "data,message",
    [
        (DATA[:-1], "holds 555 bytes"),
        (b"\x00" + DATA[1:], "magic is 00bbbf"),
        (DATA[:3] + b"\x02" + DATA[4:], "record version 2 is not supported"),
    ],
)
def test_rejects_what_is_not_a_record(data, message):
    with pytest.raises(record.RecordError, match=message):
        record.decode(data)
