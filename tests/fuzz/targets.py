"""The fuzz targets: each takes bytes an attacker controls (a transcript of one of the three
agents, a snapshot, an index, a proof bundle, text around a planted secret) through the code that
reads them, and fails (an exception escapes) on anything the reader's contract does not allow: a
crash, an output that is not what the reader promises, or a secret kept. `run.py` drives them
under atheris (coverage-guided); tests/python/test_fuzz.py replays the seeds and the corpus.

A reader's contract names the one exception it may raise for bad input (a snapshot that is no
JSON object: ValueError); any other exception, and any assertion here, is a finding."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
for path in (REPO / "tests" / "python", REPO / "tools"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import atheris

# Everything the targets reach in precompact and the reference verifier is instrumented for
# coverage; the libraries underneath (orjson, solders: compiled) are not.
with atheris.instrument_imports(include=["precompact", "verify_bundle"]):
    import verify_bundle

    from precompact.boundary import outside_json
    from precompact.local import savepoint_log, snapshot
    from precompact.proof import bundle
    from precompact.restore import dropped
    from precompact.transcript import claude_code, codex, conversation, gemini
    from precompact.transcript.redact import Redactor
    from precompact.verifier import signed, verdicts

from support.secret_corpus import SECRETS

# One redactor for every input, as one serves a whole savepoint (it keeps only counts): making
# one costs more than most inputs.
REDACTOR = Redactor()
# A key whose signatures no fuzzed line can hold: signed_by must say no, and never crash.
SIGNER = "4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM"


def _history(block: bytes) -> list:
    """The block through the hook's path into the history (redacted), read back: it must be the
    canonical JSON of a list of objects."""
    scan = claude_code.TranscriptScan(path="fuzzed")
    written = snapshot.history_part(block, scan, REDACTOR)
    history = json.loads(b"[" + written[:-1] + b"]")
    assert all(isinstance(entry, dict) for entry in history), "a history entry that is not an object"
    return history


def _read_back(history: list) -> None:
    """What restore, recall and dropped do with a history: none of it may fail on what the reader
    let through."""
    conversation.recent(reversed(history))
    dropped.facts(history)


def claude_transcript(data: bytes) -> None:
    scan = claude_code.TranscriptScan(path="fuzzed")
    blocks = list(claude_code.read_blocks(io.BytesIO(data), scan))
    assert b"".join(blocks) == data[: data.rfind(b"\n") + 1], "whole lines lost or added"
    for block in blocks:
        _read_back(_history(block))


def codex_rollout(data: bytes) -> None:
    document = codex.read_from(data, 0)
    assert document.consumed == data.rfind(b"\n") + 1
    _read_back(_history(document.data))


def gemini_chat(data: bytes) -> None:
    document = gemini.parse(data)
    _read_back(_history(document.data))


def redaction(data: bytes) -> None:
    """A planted secret (from the secret corpus) between two fuzzed texts, each on lines of its
    own: redacted as a file's text, and as a message of a transcript line through the line gate
    (escaped as JSON with and without ASCII escapes), nothing of it may be kept."""
    given = atheris.FuzzedDataProvider(data)
    planted = SECRETS[given.ConsumeIntInRange(0, len(SECRETS) - 1)]
    ascii_only = given.ConsumeBool()
    before = given.ConsumeUnicodeNoSurrogates(given.ConsumeIntInRange(0, 400))
    after = given.ConsumeUnicodeNoSurrogates(given.remaining_bytes())
    text = f"{before}\n{planted.text}\n{after}"
    as_file = REDACTOR.redact(text)
    kept = [part for part in planted.sensitive if part in as_file]
    assert not kept, f"{planted.format}: kept in a file's text: {kept}"
    line = {"type": "user", "uuid": "u-1", "message": {"role": "user", "content": text}}
    history = _history(json.dumps(line, ensure_ascii=ascii_only).encode() + b"\n")
    said = json.dumps(history, ensure_ascii=False)
    strings = "\n".join(_strings(history))
    kept = [part for part in planted.sensitive if part in strings or part in said]
    assert not kept, f"{planted.format}: kept in a transcript line: {kept}"


def snapshot_reader(data: bytes) -> None:
    try:
        reader = snapshot.SnapshotReader(data)
        newest = list(reader.newest_entries())
        located = list(reader.located_entries())
    except ValueError:
        return  # the reader's contract: a snapshot it cannot read, in one line
    assert isinstance(reader.fields, dict)
    assert [entry for _, entry in located] == newest[::-1], "the two readings of the history differ"
    for place, entry in located:
        assert reader.entry_at(place) == entry
        reader.entry_bytes(place)
    reader.document  # noqa: B018 -- the typed view of the fields must take any fields
    conversation.recent(newest)


def index_reader(data: bytes) -> None:
    index = savepoint_log.parse(data.splitlines(keepends=True))
    for savepoint in index.savepoints:
        for name in dir(savepoint_log.Savepoint):
            if isinstance(getattr(savepoint_log.Savepoint, name, None), property):
                getattr(savepoint, name)
        assert not signed.signed_by(savepoint, SIGNER), "a fuzzed line verified as signed"
        index.lineage(savepoint.instance)
        index.rotations(savepoint.instance)
        index.unsealed_rotations(savepoint.instance)
        if savepoint.session_id is not None:
            index.deliveries(savepoint.instance, savepoint.session_id)


def _seed_snapshots() -> tuple[bytes, bytes]:
    """The snapshot the seed `bundle-one-with-snapshot` proves, and a forgery of it: the files a
    verifier is given beside a (fuzzed) bundle, so that a forged embedded copy meets the real
    file and a real embedded copy meets a forged file."""
    seed = json.loads((HERE / "seeds" / "bundle_verifiers" / "bundle-one-with-snapshot").read_bytes())
    real = base64.b64decode(seed["snapshot"]["base64"])
    return real, real.replace(b'"conversation_chunks":[]', b'"conversation_chunks":[],"planted":"forged"', 1)


SNAPSHOT_FILES = (None, *_seed_snapshots())


def bundle_verifiers(data: bytes) -> None:
    """Both verifiers on the same bytes, without a snapshot file and with the real or a forged
    one: the client's (one verdict, never an exception) and the reference one (its one error,
    Invalid) agree, in both directions: what one accepts, the other accepts."""
    try:
        document = outside_json.loads_unique(data)  # as `precompact verify-bundle` reads a bundle
    except ValueError:
        document = None
    # Both pin the key and program the document names: the fuzz compares every other rule.
    try:
        authority, program_id = document["authorities"][-1]["authority"], document["program_id"]
    except (TypeError, KeyError, IndexError):
        authority, program_id = None, None
    pins = (authority, program_id) if isinstance(authority, str) and isinstance(program_id, str) else (None, None)
    for given in SNAPSHOT_FILES:
        client = (
            bundle.check(document, given, authority=pins[0], program_id=pins[1] or "") if document is not None else None
        )
        try:
            verify_bundle.verify(verify_bundle.load(data), given, authority=pins[0], program_id=pins[1])
            accepted = True
        except (verify_bundle.Invalid, ValueError):
            accepted = False  # the reference's one-line FAILED (ValueError: bytes that are no JSON)
        verified = client is not None and client.status == verdicts.VERIFIED
        shown = (
            "no snapshot file" if given is None else f"a snapshot file of sha256:{hashlib.sha256(given).hexdigest()}"
        )
        assert verified == accepted, (
            f"with {shown}, the reference {'accepted' if accepted else 'refused'} and the client said {client}"
        )


TARGETS: dict[str, Callable[[bytes], None]] = {
    "claude_transcript": claude_transcript,
    "codex_rollout": codex_rollout,
    "gemini_chat": gemini_chat,
    "redaction": redaction,
    "snapshot_reader": snapshot_reader,
    "index_reader": index_reader,
    "bundle_verifiers": bundle_verifiers,
}


def _strings(value) -> list[str]:
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found
