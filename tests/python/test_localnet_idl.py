"""The program's IDL as precompact-localnet publishes it, read back from a running localnet and
decoded here from the layouts alone (addresses derived by solders, zlib, struct): both accounts
hold the committed IDL, where `anchor idl fetch` (Program Metadata) and `anchor legacy-idl fetch`
(Anchor's IdlAccount) look for it."""

import hashlib
import json
import struct
import zlib

from solders.pubkey import Pubkey

from precompact.chain import rpc
from precompact.chain import wire as chain
from precompact.config import settings as configuration

PROGRAM_METADATA = Pubkey.from_string("ProgM6JCCvbYkfKqJYHePx4xxSUSqJp7rh8Lyv7nk7S")


def committed_idl() -> dict:
    return json.loads(configuration.IDL_FILE.read_bytes())


def test_the_program_metadata_account_holds_the_committed_idl(localnet):
    seed = b"idl".ljust(16, b"\0")
    # Canonical: no authority among the seeds.
    address, _ = Pubkey.find_program_address([bytes(chain.PROGRAM_ID), seed], PROGRAM_METADATA)
    found = rpc.Cluster(localnet.url, timeout=10).account(str(address))
    assert found is not None, "no metadata account where `anchor idl fetch` reads"
    owner, data = found
    assert owner == str(PROGRAM_METADATA)
    assert data[0] == 2, "a Metadata account"
    assert data[1:33] == bytes(chain.PROGRAM_ID)
    assert data[33:65] == bytes(32), "no authority: the built-in program's IDL cannot change"
    assert (data[65], data[66]) == (0, 1), "immutable, canonical"
    assert data[67:83] == seed
    assert tuple(data[83:87]) == (1, 2, 1, 0), "UTF-8, zlib, JSON, stored in the account"
    (length,) = struct.unpack_from("<I", data, 87)
    assert len(data) == 96 + length
    assert json.loads(zlib.decompress(data[96:])) == committed_idl()


def test_the_legacy_idl_account_holds_the_committed_idl(localnet):
    signer, _ = Pubkey.find_program_address([], chain.PROGRAM_ID)
    address = Pubkey.create_with_seed(signer, "anchor:idl", chain.PROGRAM_ID)
    found = rpc.Cluster(localnet.url, timeout=10).account(str(address))
    assert found is not None, "no IdlAccount where `anchor legacy-idl fetch` reads"
    owner, data = found
    assert owner == str(chain.PROGRAM_ID)
    assert data[:8] == hashlib.sha256(b"internal:IdlAccount").digest()[:8]
    assert data[8:40] == bytes(32), "the erased authority"
    (length,) = struct.unpack_from("<I", data, 40)
    assert json.loads(zlib.decompress(data[44 : 44 + length])) == committed_idl()
