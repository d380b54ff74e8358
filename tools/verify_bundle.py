#!/usr/bin/env python3
"""Reference verifier for precompact proof bundles, version 2, written from docs/proof-bundle.md
alone: standard library plus `cryptography` for ed25519. Offline checks only (no ledger, no
snapshot document parsing). Usage: verify_bundle.py BUNDLE [SNAPSHOT]; exit 0 verified, 1 not."""

import base64
import hashlib
import json
import struct
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
ED25519_PROGRAM = "Ed25519SigVerify111111111111111111111111111"
SAVEPOINT_IX = bytes.fromhex("9e1470282d3eca3b")
ROTATE_IX = hashlib.sha256(b"global:rotate_authority").digest()[:8]
RECOVER_IX = hashlib.sha256(b"global:recover_lineage").digest()[:8]


class Invalid(Exception):
    pass


def need(condition, why):
    if not condition:
        raise Invalid(why)


def b58decode(text):
    need(isinstance(text, str) and text and all(c in B58 for c in text), "not base58")
    n = 0
    for c in text:
        n = n * 58 + B58.index(c)
    pad = len(text) - len(text.lstrip("1"))
    return b"\0" * pad + (n.to_bytes((n.bit_length() + 7) // 8, "big") if n else b"")


def key(text):
    value = b58decode(text)
    need(len(value) == 32, "not a 32-byte base58 key")
    return value


def hexbytes(text, size):
    need(isinstance(text, str) and len(text) == 2 * size and set(text) <= set("0123456789abcdef"), f"not {size} bytes of hex")
    return bytes.fromhex(text)


def b64(text):
    data = base64.b64decode(text, validate=True)
    need(base64.b64encode(data).decode() == text, "not canonical base64")
    return data


def ed25519_ok(public, signature, message):
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, message)
        return True
    except (InvalidSignature, ValueError):
        return False


def keys_exactly(obj, names, optional=()):
    need(isinstance(obj, dict) and set(names) <= obj.keys() <= set(names) | set(optional), f"keys of {sorted(names)}")


class Reader:
    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, n):
        need(self.at + n <= len(self.data), "transaction truncated")
        self.at += n
        return self.data[self.at - n : self.at]

    def compact(self):
        value = 0
        for i in range(3):
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << (7 * i)
            if not byte & 0x80:
                return value
        raise Invalid("bad compact-u16")


def read_transaction(tx):
    """(account keys, required signatures, instructions), once every signature verifies."""
    keys_exactly(tx, ["signature", "slot", "block_time", "base64"])
    need(type(tx["slot"]) is int and tx["slot"] >= 0 and (tx["block_time"] is None or type(tx["block_time"]) is int), "slot")
    data = b64(tx["base64"])
    r = Reader(data)
    sigs = [r.take(64) for _ in range(r.compact())]
    body = data[r.at :]
    need(body[:1] and not body[0] & 0x80, "not a legacy transaction")
    required = r.take(3)[0]
    keys = [r.take(32) for _ in range(r.compact())]
    r.take(32)
    ixs = []
    for _ in range(r.compact()):
        index = r.take(1)[0]
        accounts = list(r.take(r.compact()))
        ixs.append((index, accounts, r.take(r.compact())))
    need(r.at == len(data), "trailing bytes after the transaction")
    need(len(sigs) == required >= 1 and len(keys) >= required, "signature count")
    need(all(ed25519_ok(keys[i], sigs[i], body) for i in range(required)), "a transaction signature does not verify")
    need(b58decode(tx["signature"]) == sigs[0], "transaction.signature is not its id")
    need(all(i < len(keys) and all(a < len(keys) for a in acc) for i, acc, _ in ixs), "account index out of range")
    return keys, required, ixs


def the_instruction(keys, ixs, program, record):
    ours = [n for n, (i, acc, _) in enumerate(ixs) if keys[i] == program and any(keys[a] == record for a in acc)]
    need(len(ours) == 1, "not exactly one instruction of the program on the record")
    return ours[0]


def check_transaction(tx, authority, program, record, signature, message):
    keys, required, ixs = read_transaction(tx)
    n = the_instruction(keys, ixs, program, record)
    _, acc, ix_data = ixs[n]
    need(ix_data[:8] == SAVEPOINT_IX and len(acc) >= 2, "not the savepoint instruction")
    need(keys[acc[0]] == authority and acc[0] < required and keys[acc[1]] == record, "savepoint accounts")
    need(n > 0 and keys[ixs[n - 1][0]] == key(ED25519_PROGRAM), "no Ed25519 instruction before savepoint")
    offsets = struct.pack("<7H", 48, 0xFFFF, 16, 0xFFFF, 112, len(message), 0xFFFF)
    need(ixs[n - 1][2] == b"\x01\x00" + offsets + authority + signature + message, "Ed25519 instruction data")


def check_continued(continued, program, instance_id, before, after):
    """The rotation or recovery that created `after`'s record from `before`'s; its kind and slot."""
    keys_exactly(continued, ["kind", "transaction"])
    keys, required, ixs = read_transaction(continued["transaction"])
    (old, old_record), (new, new_record) = before, after
    _, acc, ix_data = ixs[the_instruction(keys, ixs, program, new_record)]
    named = [keys[a] for a in acc]
    signed = set(keys[:required]).__contains__
    if continued["kind"] == "rotation":
        need(ix_data == ROTATE_IX and named[:4] == [old, old_record, new, new_record], "not the rotation")
        need(signed(old) and signed(new), "the rotation is not signed by both keys")
    else:
        need(continued["kind"] == "recovery", "continued.kind")
        need(ix_data == RECOVER_IX + instance_id and named[:3] == [new, new_record, old_record], "not the recovery")
        need(signed(new), "the recovery is not signed by the new key")
    return continued["kind"], continued["transaction"]["slot"]


def check_record(rec, authority, instance_id, program):
    keys_exactly(rec, ["address", "seeds", "bump"])
    record = key(rec["address"])
    need(rec["seeds"] == [b"savepoint".hex(), authority.hex(), instance_id.hex()], "record.seeds")
    need(type(rec["bump"]) is int and 0 <= rec["bump"] <= 255, "record.bump")
    pda = hashlib.sha256(b"savepoint" + authority + instance_id + bytes([rec["bump"]]) + program + b"ProgramDerivedAddress")
    need(pda.digest() == record, "record.address is not derived from its seeds")
    return record


def verify(bundle, snapshot=None):
    keys_exactly(bundle, ["format", "version", "instance", "instance_id", "program_id", "authorities",
                          "savepoint", "snapshot_hash", "chain"], ["snapshot"])  # fmt: skip
    need(bundle["format"] == "precompact-proof-bundle" and bundle["version"] == 2, "format or version")
    need(type(bundle["version"]) is int and isinstance(bundle["instance"], str), "version or instance type")
    program = key(bundle["program_id"])
    instance_id = hexbytes(bundle["instance_id"], 32)
    need(instance_id == hashlib.sha256(bundle["instance"].encode()).digest(), "instance_id")
    chain = bundle["chain"]
    need(type(bundle["savepoint"]) is int and isinstance(chain, list) and len(chain) == bundle["savepoint"] >= 1, "chain length")
    entries, signers, notes = bundle["authorities"], [], []
    need(isinstance(entries, list) and entries, "authorities")
    for i, entry in enumerate(entries):
        keys_exactly(entry, ["authority", "record", "first", "continued"])
        authority = key(entry["authority"])
        record = check_record(entry["record"], authority, instance_id, program)
        first = entry["first"]
        need(type(first) is int and 1 <= first <= len(chain), f"authorities[{i}].first")
        if i == 0:
            need(first == 1 and entry["continued"] is None, "the first authority starts at savepoint 1")
            signers.append((authority, record, first, None))
            continue
        need(first >= max(2, signers[-1][2]), f"authorities[{i}].first")
        try:
            kind, slot = check_continued(entry["continued"], program, instance_id, signers[-1][:2], (authority, record))
        except Invalid as e:
            raise Invalid(f"authorities[{i}]: {e}") from None
        if kind == "recovery":
            notes.append(f"savepoints from {first} continue without the old key's signature (recovery)")
        signers.append((authority, record, first, slot))
    previous, last_time, last_slot = bytes(32), -(2**63), -1
    for k, link in enumerate(chain, start=1):
        for _, _, first, slot in signers:
            if first == k and slot is not None:
                need(slot >= last_slot, f"savepoint {k}: the rotation before it goes back in slots")
                last_slot = slot
        authority, record = [s for s in signers if s[2] <= k][-1][:2]
        keys_exactly(link, ["sequence", "timestamp", "snapshot_hash", "prev_snapshot_hash", "git_commit", "signature", "transaction"])  # fmt: skip
        tx = link["transaction"]
        keys_exactly(tx, ["signature", "slot", "block_time", "base64"])
        need(type(link["sequence"]) is int and link["sequence"] == k, f"savepoint {k}: sequence")
        need(type(link["timestamp"]) is int and -(2**63) <= link["timestamp"] < 2**63, f"savepoint {k}: timestamp")
        need(type(tx["slot"]) is int and tx["slot"] >= 0 and (tx["block_time"] is None or type(tx["block_time"]) is int), f"savepoint {k}: slot")
        commit = link["git_commit"]
        need(isinstance(commit, str) and len(commit) == 40 and all(c in "0123456789abcdef" for c in commit), f"savepoint {k}: git_commit")
        snap, prev = hexbytes(link["snapshot_hash"], 32), hexbytes(link["prev_snapshot_hash"], 32)
        need(prev == previous, f"savepoint {k}: prev_snapshot_hash does not link to savepoint {k - 1}")
        need(link["timestamp"] >= last_time and tx["slot"] >= last_slot, f"savepoint {k}: time or slot goes back")
        message = (b"precompact/savepoint/v1" + program + record + struct.pack("<Qq", k, link["timestamp"])
                   + instance_id + snap + prev + commit.encode())  # fmt: skip
        signature = hexbytes(link["signature"], 64)
        need(ed25519_ok(authority, signature, message), f"savepoint {k}: signature does not verify")
        try:
            check_transaction(tx, authority, program, record, signature, message)
        except Invalid as e:
            raise Invalid(f"savepoint {k}: transaction: {e}") from None
        previous, last_time, last_slot = snap, link["timestamp"], tx["slot"]
    need(bundle["snapshot_hash"] == previous.hex(), "snapshot_hash is not savepoint N's")
    if "snapshot" in bundle:
        keys_exactly(bundle["snapshot"], ["encrypted", "base64"])
        need(isinstance(bundle["snapshot"]["encrypted"], bool), "snapshot.encrypted")
        data = b64(bundle["snapshot"]["base64"])
        snapshot = snapshot if snapshot is not None or bundle["snapshot"]["encrypted"] else data
    if snapshot is not None:
        need(hashlib.sha256(snapshot).digest() == previous, "the snapshot does not hash to snapshot_hash")
    checked = "verified" if snapshot is not None else "not checked"
    said = "".join(f"; {note}" for note in notes)
    return f"savepoint {len(chain)} of {bundle['instance']!r}, {len(chain)} signature(s) and transaction(s), {len(signers) - 1} key rotation(s); snapshot: {checked}{said}"


if __name__ == "__main__":
    try:
        with open(sys.argv[1], "rb") as f:
            document = json.load(f)
        given = open(sys.argv[2], "rb").read() if len(sys.argv) > 2 else None
        print("verified:", verify(document, given))
    except (Invalid, ValueError, KeyError, TypeError) as e:
        print(f"FAILED: {e}")
        sys.exit(1)
