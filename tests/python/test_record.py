"""Account decoding and the offline signature check, against the shared vectors."""

import json

import pytest
from solders.pubkey import Pubkey

from conftest import VECTORS
from precompact import record

V = json.loads(VECTORS.read_text())
DATA = bytes.fromhex(V["account"]["data_hex"])
ADDRESS = Pubkey.from_string(V["record_address"])


def test_layout_size_matches_the_program():
    assert record.SIZE == V["account"]["size"] == 556


def test_decodes_every_field_of_the_vector():
    fields = record.decode(DATA)
    s = V["savepoint"]
    assert fields["magic"] == bytes([0xEF, 0xBB, 0xBF]) and fields["version"] == 1
    assert fields["reserved"] == bytes(28)
    assert fields["entry_type"] == s["entry_type"]
    assert fields["timestamp"] == s["timestamp"]
    assert fields["instance_id"].hex() == V["instance_id_hex"]
    assert fields["snapshot_hash"].hex() == s["snapshot_hash_hex"]
    assert fields["git_commit"].decode() == s["git_commit"]
    assert fields["signature"].hex() == V["signature_hex"]
    assert str(Pubkey.from_bytes(fields["authority"])) == V["authority"]
    assert fields["sequence"] == s["sequence"]
    assert fields["prev_snapshot_hash"].hex() == s["prev_snapshot_hash_hex"]
    assert (fields["slot"], fields["chain_timestamp"]) == (V["clock"]["slot"], V["clock"]["unix_timestamp"])
    assert fields["bump"] == V["record_bump"]
    assert fields["metadata"][: fields["metadata_len"]].decode() == s["metadata"]
    as_json = record.to_json(fields, ADDRESS)
    assert as_json["address"] == V["record_address"]
    assert as_json["snapshot_hash"] == s["snapshot_hash_hex"]
    assert as_json["metadata"] == s["metadata"]
    assert as_json["git_commit"] == s["git_commit"]
    for offset_field in V["account"]["fields"]:
        name = offset_field["name"]
        if name not in ("discriminator", "metadata"):
            assert name in as_json, name


def test_signature_checks_offline_and_catches_tampering():
    assert record.signature_valid(record.decode(DATA), ADDRESS)
    tampered = bytearray(DATA)
    tampered[73] ^= 1  # a bit of snapshot_hash
    assert not record.signature_valid(record.decode(bytes(tampered)), ADDRESS)
    assert not record.signature_valid(record.decode(DATA), Pubkey.new_unique()), "bound to its address"


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
