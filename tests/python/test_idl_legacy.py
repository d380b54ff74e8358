"""The committed IDL converted for anchorpy: nothing lost, and anchorpy's own discriminators agree
with the ones the program uses."""

from __future__ import annotations

import json

import pytest
from anchorpy import Idl
from anchorpy.coder.common import _sighash

from precompact.chain import idl_legacy
from precompact.chain import wire as chain

LEGACY = idl_legacy.convert(chain.IDL)


def test_anchorpy_reads_the_converted_idl():
    idl = Idl.from_json(json.dumps(LEGACY))
    assert [i.name for i in idl.instructions] == [i["name"] for i in chain.IDL["instructions"]]
    assert [a.name for a in idl.accounts] == ["SavepointRecord"]
    assert {e.code: e.name for e in idl.errors} == {e["code"]: e["name"] for e in chain.IDL["errors"]}
    assert len(idl.errors) == 26


@pytest.mark.parametrize("instruction", chain.IDL["instructions"], ids=lambda i: i["name"])
def test_each_instruction_keeps_its_discriminator_accounts_and_args(instruction):
    # anchorpy derives the discriminator from the name: it must be the one the IDL records.
    assert _sighash(instruction["name"]) == bytes(instruction["discriminator"])
    legacy = next(i for i in LEGACY["instructions"] if i["name"] == instruction["name"])
    assert [(a["name"], a["isMut"], a["isSigner"]) for a in legacy["accounts"]] == [
        (a["name"], bool(a.get("writable")), bool(a.get("signer"))) for a in instruction["accounts"]
    ]
    assert [a["name"] for a in legacy["args"]] == [a["name"] for a in instruction["args"]]


def test_types_take_their_legacy_spelling():
    record = next(a for a in LEGACY["accounts"] if a["name"] == "SavepointRecord")
    fields = {f["name"]: f["type"] for f in record["type"]["fields"]}
    assert fields["authority"] == "publicKey" and fields["instance_id"] == {"array": ["u8", 32]}
    savepoint = next(i for i in LEGACY["instructions"] if i["name"] == "savepoint")
    assert savepoint["args"] == [{"name": "args", "type": {"defined": "SavepointArgs"}}]
    assert LEGACY["metadata"] == {"address": chain.IDL["address"]}


def test_an_unknown_type_form_is_refused():
    with pytest.raises(ValueError, match="has no legacy form"):
        idl_legacy._type({"generic": "T"})
