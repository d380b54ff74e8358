"""The committed IDL (Anchor's current format) converted to the legacy format anchorpy 0.21
reads: `isMut`/`isSigner` instead of `writable`/`signer`, `publicKey` instead of `pubkey`,
`{"defined": "Name"}` instead of `{"defined": {"name": "Name"}}`, account layouts under
`accounts`, and the address under `metadata`. A pure function of the IDL.

anchorpy derives each instruction's discriminator from its name (`sha256("global:<name>")`),
which is what the program uses; `tests/python/test_idl_legacy.py` checks they agree with the
discriminators the IDL records, so a program with custom instruction discriminators would be
caught there rather than build wrong instructions.
"""

from __future__ import annotations


def convert(idl: dict) -> dict:
    types = {t["name"]: t for t in idl.get("types", [])}
    account_names = {a["name"] for a in idl.get("accounts", [])}
    return {
        "version": idl["metadata"]["version"],
        "name": idl["metadata"]["name"],
        "instructions": [_instruction(i) for i in idl["instructions"]],
        "accounts": [_type_definition(types[name]) for name in sorted(account_names) if name in types],
        "types": [_type_definition(t) for name, t in types.items() if name not in account_names],
        "events": [_event(e, types) for e in idl.get("events", []) if e["name"] in types],
        "errors": [
            {"code": e["code"], "name": e["name"], **({"msg": e["msg"]} if "msg" in e else {})}
            for e in idl.get("errors", [])
        ],
        "metadata": {"address": idl["address"]},
    }


def _instruction(instruction: dict) -> dict:
    return {
        "name": instruction["name"],
        "accounts": [_account(a) for a in instruction["accounts"]],
        "args": [{"name": a["name"], "type": _type(a["type"])} for a in instruction["args"]],
    }


def _account(account: dict) -> dict:
    if "accounts" in account:  # a nested accounts struct
        return {"name": account["name"], "accounts": [_account(a) for a in account["accounts"]]}
    return {"name": account["name"], "isMut": bool(account.get("writable")), "isSigner": bool(account.get("signer"))}


def _type_definition(definition: dict) -> dict:
    body = definition["type"]
    if body["kind"] == "struct":
        converted = {
            "kind": "struct",
            "fields": [{"name": f["name"], "type": _type(f["type"])} for f in body.get("fields", [])],
        }
    else:
        converted = {"kind": "enum", "variants": [_variant(v) for v in body.get("variants", [])]}
    return {"name": definition["name"], "type": converted}


def _variant(variant: dict) -> dict:
    fields = variant.get("fields")
    if not fields:
        return {"name": variant["name"]}
    if isinstance(fields[0], dict) and "name" in fields[0]:
        return {"name": variant["name"], "fields": [{"name": f["name"], "type": _type(f["type"])} for f in fields]}
    return {"name": variant["name"], "fields": [_type(f) for f in fields]}


def _event(event: dict, types: dict) -> dict:
    fields = types[event["name"]]["type"].get("fields", [])
    return {
        "name": event["name"],
        "fields": [{"name": f["name"], "type": _type(f["type"]), "index": False} for f in fields],
    }


def _type(kind):
    if kind == "pubkey":
        return "publicKey"
    if isinstance(kind, str):
        return kind
    if "defined" in kind:
        defined = kind["defined"]
        return {"defined": defined["name"] if isinstance(defined, dict) else defined}
    if "array" in kind:
        inner, length = kind["array"]
        return {"array": [_type(inner), length]}
    if "vec" in kind:
        return {"vec": _type(kind["vec"])}
    if "option" in kind:
        return {"option": _type(kind["option"])}
    raise ValueError(f"IDL type {kind!r} has no legacy form")
