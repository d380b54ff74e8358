"""Proof-bundle verifier from docs/proof-bundle.md alone: every offline MUST check; skips the SHOULD off-curve check."""

import base64
import functools
import hashlib
import io
import json
import math
import struct
import sys
from itertools import accumulate
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
ED25519 = "Ed25519SigVerify111111111111111111111111111"
TOP = "format version instance instance_id program_id authorities savepoint snapshot_hash chain"
LINK = "sequence timestamp snapshot_hash prev_snapshot_hash git_commit signature transaction"
TAG = {n: hashlib.sha256(b"global:" + n).digest()[:8] for n in (b"savepoint", b"rotate_authority", b"recover_lineage")}
TYPES = dict.fromkeys(["version", "savepoint", "bump", "first", "sequence", "timestamp", "slot"], (int,))
TYPES |= {"block_time": (int, type(None)), "encrypted": (bool,)}  # the JSON type of each value that is not a string
MAX_BYTES, MAX_DEPTH = 1 << 30, 128  # checked before decoding ("Encoding")
STEP = tuple(1 if byte in b"[{" else -1 for byte in range(256))
NOT_A_BRACKET = bytes(byte for byte in range(256) if byte not in b"[]{}")
USAGE = "usage: python tools/verify_bundle.py BUNDLE [SNAPSHOT_FILE] --authority KEY --program-id ID"


class Invalid(Exception):
    """The bundle breaks a rule of docs/proof-bundle.md."""


def need(holds: object, reason: str) -> None:
    if not holds:
        raise Invalid(reason)


def fields(value, names: str) -> list:
    need(isinstance(value, dict) and set(value) == set(names.split()), f"keys are not exactly: {names}")
    need(all(type(value[key]) in TYPES[key] for key in TYPES.keys() & value.keys()), "a value of the wrong type")
    return [value[name] for name in names.split()]


def unique(pairs: list) -> dict:
    keys = [key for key, _ in pairs]
    need(len(set(keys)) == len(keys), f"an object names the key {json.dumps(max(keys, key=keys.count))[:80]} twice")
    return dict(pairs)


def load(data: bytes) -> dict:
    """The bundle's JSON, once its size and depth are within the limits (the depth is read on the
    text, strings skipped: json decodes recursively), each object naming each key once."""
    need(len(data) <= MAX_BYTES, f"larger than {MAX_BYTES} bytes")
    outside = b"".join(data.replace(b"\\\\", b"").replace(b'\\"', b"").split(b'"')[::2])
    depth = max(accumulate(map(STEP.__getitem__, outside.translate(None, NOT_A_BRACKET))), default=0)
    need(depth <= MAX_DEPTH, f"nested deeper than {MAX_DEPTH}")
    return json.loads(data, object_pairs_hook=unique)


def decode(text: str, base: int, size: int | None = 32) -> bytes:
    if base == 58:
        need(len(text) <= math.ceil(size * 8 / math.log2(58)), f"longer than base58 of {size} bytes")  # before the quadratic decoding
        raw = functools.reduce(lambda number, char: number * 58 + B58.index(char), text, 0).to_bytes(size, "big")
        again = "1" * (size - len(raw.lstrip(b"\0"))) + str.lstrip(text, "1")
    else:
        raw = bytes.fromhex(text) if base == 16 else base64.b64decode(text)
        again = raw.hex() if base == 16 else base64.b64encode(raw).decode()
    need(again == text and size in (None, len(raw)), f"{text!r} is not {size or 'some'} bytes of canonical base{base}")
    return raw


def transaction(value, program: bytes, record: bytes) -> tuple:  # checks 1, 2; the record's call, the one before
    text, slot, block_time, wire = fields(value, "signature slot block_time base64")
    need(0 <= slot < 2**64 and (block_time is None or -(2**63) <= block_time < 2**63), "a slot or block time beyond 64 bits")
    stream = io.BytesIO(raw := decode(wire, 64, None))

    def take(size: int) -> bytes:
        need(len(chunk := stream.read(size)) == size, "the transaction ends early")
        return chunk

    def compact(shift: int = 0) -> int:
        need(((byte := take(1)[0]) or not shift) and (shift < 14 or byte < 4), "a compact-u16 is not shortest")
        return (byte & 0x7F) << shift | (compact(shift + 7) if byte & 0x80 else 0)

    signatures, message, (required, _, _) = [take(64) for _ in range(compact())], stream.tell(), take(3)
    keys, _ = [take(32) for _ in range(compact())], take(32)
    instructions = [(keys[take(1)[0]], [keys[i] for i in take(compact())], take(compact())) for _ in range(compact())]
    need(not stream.read() and len(signatures) == required and 1 <= required < 0x80, "not a legacy transaction's bytes")
    for signature, key in zip(signatures, keys[:required], strict=True):
        Ed25519PublicKey.from_public_bytes(key).verify(signature, raw[message:])
    found = [i for i, (called, accounts, _) in enumerate(instructions) if called == program and record in accounts]
    need(decode(text, 58, 64) == signatures[0] and len(found) == 1, f"not its first signature, or {len(found)} calls")
    return slot, set(keys[:required]), instructions[found[0]], instructions[found[0] - 1][::2] if found[0] else None


def verify(document: dict, snapshot: bytes | None = None, *, authority: str | None, program_id: str | None) -> str:
    """Raises Invalid unless the bundle proves its savepoint for the pinned `authority` and
    `program_id` (None: not pinned, never verified); returns a one-line summary."""
    i, k, signers, notes, previous, last_time, last_slot = 0, 0, [], [], bytes(32), -(2**63), 0
    try:
        values = fields(document, TOP + " snapshot" * ("snapshot" in document))
        form, version, name, instance_id, program, authorities, n, last, chain, *embedded = values
        name_id, program, last = hashlib.sha256(str.encode(name)).digest(), decode(program, 58), decode(last, 16)
        need((form, version, decode(instance_id, 16)) == ("precompact-proof-bundle", 2, name_id), "not version 2")
        need(isinstance(chain, list) and len(chain) == n >= 1 and authorities, "chain does not hold savepoints 1..N")
        for i, entry in enumerate(authorities, 1):
            key, record, first, how = fields(entry, "authority record first continued")
            key, (address, seeds, bump) = decode(key, 58), fields(record, "address seeds bump")
            need(seeds == [b"savepoint".hex(), key.hex(), name_id.hex()], "record.seeds are not the three seeds")
            pda = b"savepoint" + key + name_id + bytes([bump]) + program + b"ProgramDerivedAddress"
            need(hashlib.sha256(pda).digest() == (address := decode(address, 58)), "record.address is not the PDA")
            need(max(2, signers[-1][0]) <= first <= n if signers else first == 1 and how is None, "first or continued")
            if signers:
                (kind, tx), (_, old, old_address, _) = fields(how, "kind transaction"), signers[-1]
                slot, signing, (_, accounts, data), _ = transaction(tx, program, address)
                recovered = ["rotation", "recovery"].index(kind)
                tag = [TAG[b"rotate_authority"], TAG[b"recover_lineage"] + name_id][recovered]
                named = [[old, old_address, key, address], [key, address, old_address]][recovered]
                need(data == tag and accounts[: len(named)] == named and {key, (old, key)[recovered]} <= signing, kind)
                notes += [f"savepoints {first}..{n} continue without the old key's signature (recovery)"] * recovered
            signers.append((first, key, address, slot if signers else None))  # slot: the continued transaction's
        for k, link in enumerate(chain, 1):
            sequence, time, hashed, prev, commit, signature, tx = fields(link, LINK)
            _, key, record, _ = [signer for signer in signers if signer[0] <= k][-1]
            need(sequence == k and decode(prev, 16) == previous, "sequence or prev_snapshot_hash")
            message = b"precompact/savepoint/v1" + program + record + struct.pack("<Qq", k, time) + name_id
            message += (hashed := decode(hashed, 16)) + previous + decode(commit, 16, 20).hex().encode()
            Ed25519PublicKey.from_public_bytes(key).verify(signature := decode(signature, 16, 64), message)
            slot, signing, (_, accounts, data), before = transaction(tx, program, record)
            need(data[:8] == TAG[b"savepoint"] and accounts[:2] == [key, record] and key in signing, "not a savepoint")
            offsets = struct.pack("<2B7H", 1, 0, 48, 0xFFFF, 16, 0xFFFF, 112, len(message), 0xFFFF)
            need(before == (decode(ED25519, 58), offsets + key + signature + message), "no Ed25519 instruction")
            order = [last_slot, *[signer[3] for signer in signers[1:] if signer[0] == k], slot]
            need(order == sorted(order) and last_time <= time, "a transaction's slot or the timestamp goes back")
            previous, last_time, last_slot = hashed, time, slot
        need(last == previous, "snapshot_hash is not the last savepoint's")
        checked = [] if snapshot is None else [("the snapshot file", snapshot)]
        for encrypted, data in (fields(held, "encrypted base64") for held in embedded):
            checked += [("the embedded snapshot", decode(data, 64, None))][encrypted:]  # encrypted: cannot be checked
        for copy, raw in checked:  # each clear-text copy: the embedded one travels on with the bundle
            need(hashlib.sha256(raw).digest() == last, f"snapshot mismatch: {copy} does not hash to snapshot_hash")
    except (Invalid, InvalidSignature, ValueError, LookupError, TypeError, OverflowError, struct.error) as error:
        where = f"savepoint {k}" if k else f"authorities[{i - 1}]" if i else "top level"
        raise Invalid(f"{where}: {str(error) or 'an ed25519 signature does not verify'}") from None
    signed = pinned(document, authority, program_id)
    notes.append("snapshot: matches" if checked else "snapshot: not checked")
    notes.append("ledger inclusion: not checked (offline)")
    return "; ".join([f"savepoint {n} of {name!r}, {signed}, {len(signers) - 1} key rotation(s)", *notes])


def pinned(document: dict, authority: str | None, program_id: str | None) -> str:
    """The bundle names its own keys: it proves something only to a reader who pinned the program
    and the authority that signed savepoint N, or one that rotated to it (a recovery, signed by the
    new key alone, passes nothing on)."""
    program, keys = document["program_id"], [entry["authority"] for entry in document["authorities"]]
    need(authority is not None, f"signed by {keys[-1]}, which you did not pin: pass --authority {keys[-1]} if you trust it")
    need(program == program_id, f"written for program {program}, not a pinned one: pass --program-id {program} if you trust it")
    need(authority in keys, f"signed by {keys[-1]}, not the pinned authority {authority}")
    after = document["authorities"][len(keys) - keys[::-1].index(authority) :]
    need(all(entry["continued"]["kind"] == "rotation" for entry in after), f"a recovery took the lineage from {authority}")
    return f"pinned authority {authority}" + (f" rotated to {keys[-1]}" if authority != keys[-1] else "") + f", program {program}"


def arguments(argv: list[str]) -> tuple[list[str], dict[str, str | None]]:
    """The files named, and the pins (--authority KEY, --program-id ID) given."""
    files, pins = [], {"--authority": None, "--program-id": None}
    while argv:
        flag = argv.pop(0)
        if flag in pins:
            need(argv, f"{flag} needs a value")
            pins[flag] = argv.pop(0)
        else:
            files.append(flag)
    need(len(files) in (1, 2), USAGE)
    return files, pins


if __name__ == "__main__":
    try:
        files, pins = arguments(sys.argv[1:])
        with open(files[0], "rb") as f:
            bundle = load(f.read(MAX_BYTES + 1))
        snapshots = (Path(path).read_bytes() for path in files[1:])
        print("verified:", verify(bundle, *snapshots, authority=pins["--authority"], program_id=pins["--program-id"]))
    except (Invalid, ValueError, OSError) as error:
        print(f"FAILED: {error}")
        sys.exit(1)
