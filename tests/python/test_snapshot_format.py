"""docs/snapshot-format.md is enough to verify a savepoint (#48): a reader written here from the
doc's words alone (not the client's code) checks a real savepoint of several files and rebuilds
exactly what `precompact export` gives; canonical JSON spells each number one way, keeps an
integer beyond 64 bits exact, and a savepoint written before that rule still verifies."""

from __future__ import annotations

import hashlib
import json
import math
from decimal import Decimal
from pathlib import Path

import orjson
import pytest

from precompact.config import settings as configuration
from precompact.local import canonical as canonical_json
from precompact.local import snapshot
from support.commands import precompact
from support.projects import new_project
from support.transcript_gen import generate

# --- a reader written from docs/snapshot-format.md alone ----------------------------------------


def doc_canonical(value) -> bytes:
    """ "Canonical JSON" as the doc states it."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return b"null"
    if value is True or value is False:
        return b"true" if value else b"false"
    if isinstance(value, int):
        return str(value).encode()
    if isinstance(value, float):
        return doc_float(value).encode()
    if isinstance(value, str):
        return doc_string(value).encode("utf-8")
    if isinstance(value, list):
        return b"[" + b",".join(doc_canonical(v) for v in value) + b"]"
    return b"{" + b",".join(doc_canonical(k) + b":" + doc_canonical(value[k]) for k in sorted(value)) + b"}"


def doc_string(text: str) -> str:
    named = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return '"' + "".join(named.get(c) or (f"\\u{ord(c):04x}" if ord(c) < 0x20 else c) for c in text) + '"'


def doc_float(x: float) -> str:
    """The shortest digits that read back as `x` (repr's), plain when -5 <= e <= 15, else d.ddde±X."""
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    shortest = Decimal(repr(x)).normalize()
    sign = "-" if shortest.is_signed() else ""
    digits = "".join(map(str, shortest.as_tuple().digits))
    e = shortest.adjusted()
    if -5 <= e <= 15:
        if e >= 0:
            whole, fraction = (digits + "0" * (e + 1))[: e + 1], digits[e + 1 :] or "0"
        else:
            whole, fraction = "0", "0" * (-e - 1) + digits
        return f"{sign}{whole}.{fraction}"
    rest = f".{digits[1:]}" if len(digits) > 1 else ""
    return f"{sign}{digits[0]}{rest}e{'-' if e < 0 else '+'}{abs(e)}"


def doc_verify(logs: Path, snapshot_file: Path, recorded_sha256: str) -> bytes:
    """The doc's checks on a format-2 snapshot: its bytes hash to the recorded value, every
    chunk it lists is the bytes its name says, each file's range lies in its chunk; returns the
    full document rebuilt as the doc says."""
    data = snapshot_file.read_bytes()
    assert hashlib.sha256(data).hexdigest() == recorded_sha256
    fields = json.loads(data)
    assert data == doc_canonical(fields), "the snapshot is canonical JSON as the doc states it"

    def chunk(ref: dict) -> bytes:
        held = (logs / "precompact-chunks" / ref["sha256"]).read_bytes()
        assert len(held) == ref["size"] and hashlib.sha256(held).hexdigest() == ref["sha256"]
        return held

    history = b"".join(chunk(ref) for ref in fields.pop("conversation_chunks"))
    for record in fields["loaded_files"].values():
        place = record.pop("content_chunk", None)
        if place is not None:
            assert 0 <= place["start"] < place["end"] <= place["size"]
            record["content"] = json.loads(chunk(place)[place["start"] : place["end"]])
    return b'{"conversation_history":[' + history[:-1] + b"]," + doc_canonical(fields)[1:]


def saved_with_files(tmp_path: Path, count: int) -> tuple[Path, Path, str]:
    """A real savepoint through the installed command, its session having read `count` files."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    files = []
    for n in range(count):
        source = project.path / f"module_{n}.py"
        source.write_text(f'def f{n}():\n    return {n} * 1e-7  # \u00e9\t"quoted"\n')
        files.append(source)
    transcript = generate(tmp_path / "session.jsonl", 40_000, project=project.path, sources=files)
    done = precompact(project.path, "savepoint", "--transcript", str(transcript.path))
    assert done.returncode == 3, done.stdout + done.stderr
    [snapshot_file] = (project.logs / "precompact-saves").glob("snapshot_*")
    line = next(
        json.loads(text)
        for text in (project.logs / "precompact-savepoint.jsonl").read_text().splitlines()
        if '"SAVEPOINT_CREATED"' in text
    )
    return project.path, snapshot_file, line["snapshot_hash"].removeprefix("sha256:")


def test_a_verifier_written_from_the_doc_checks_a_savepoint_of_several_files(tmp_path):
    project, snapshot_file, recorded = saved_with_files(tmp_path, 3)
    records = json.loads(snapshot_file.read_bytes())["loaded_files"]
    places = [r["content_chunk"] for r in records.values() if "content_chunk" in r]
    assert len(places) >= 3 and len({p["sha256"] for p in places}) == 1, "the files share one chunk"
    rebuilt = doc_verify(project / "logs", snapshot_file, recorded)
    exported = precompact(project, "export")
    assert exported.returncode == 0
    assert rebuilt == exported.stdout.encode(), "the doc's reader rebuilds exactly what export gives"
    contents = [r.get("content", "") for r in json.loads(rebuilt)["loaded_files"].values()]
    assert 'def f1():\n    return 1 * 1e-7  # \u00e9\t"quoted"\n' in contents


def test_the_docs_number_spelling_is_the_one_written():
    values = [1e-7, 1.5e-6, 1e-5, 2.5e-5, 0.0001, 0.1, 1.0, -0.0, 123.0, 12345.678, 1e15, 1e16, 1.2345678901234568e17]
    values += [5e-324, 1.7976931348623157e308, 2**64 - 1, -(2**63), 2**70, -(2**64), float("nan"), float("inf")]
    for value in values:
        assert canonical_json.canonical(value) == doc_canonical(value), value
        assert canonical_json.canonical({"n": [value, 2**70]}) == doc_canonical({"n": [value, 2**70]}), value


def test_an_integer_beyond_64_bits_keeps_its_value_and_floats_keep_their_spelling(tmp_path):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    transcript = tmp_path / "session.jsonl"
    numbers = '{"big": 123456789012345678901234567890, "low": -18446744073709551616, "small": 1e-7, "u64": 18446744073709551615}'
    lines = [
        '{"type":"user","uuid":"u-1","message":{"role":"user","content":"Keep these numbers."}}',
        f'{{"type":"assistant","uuid":"a-1","message":{{"id":"m-1","role":"assistant","content":[{{"type":"tool_use","id":"t-1","name":"Calc","input":{numbers}}}]}}}}',
    ]
    transcript.write_text("\n".join(lines) + "\n")
    assert precompact(project.path, "savepoint", "--transcript", str(transcript)).returncode == 3
    exported = precompact(project.path, "export").stdout
    assert (
        '"input":{"big":123456789012345678901234567890,"low":-18446744073709551616,"small":1e-7,"u64":18446744073709551615}'
        in exported
    )
    [entry] = [e for e in json.loads(exported)["conversation_history"] if e.get("uuid") == "a-1"]
    assert entry["message"]["content"][0]["input"]["big"] == 123456789012345678901234567890
    assert precompact(project.path, "verify").returncode == 0


def _canonical_before_48(value) -> bytes:
    """local/canonical.py as savepoints were written before #48: orjson, else the standard
    library (which spells 1e-7 as 1e-07) when an integer beyond 64 bits is in the document."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return json.dumps(_nan_as_null(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _nan_as_null(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_nan_as_null(v) for v in value]
    if isinstance(value, dict):
        return {k: _nan_as_null(v) for k, v in value.items()}
    return value


def test_a_savepoint_written_before_the_rule_still_verifies(tmp_path):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    # NaN makes the reader fall back to the standard library, which keeps the big integer: the
    # code before #48 then wrote the whole snapshot with the standard library's spelling.
    state = '{"ratio": 1e-7, "id": 123456789012345678901234567890, "missing": NaN}'
    (project.path / "session_current.json").write_text(state)
    assert 'session_state = "session_current.json"' in (project.path / ".precompact.toml").read_text()
    transcript = generate(tmp_path / "session.jsonl", 20_000, project=project.path)
    with pytest.MonkeyPatch.context() as before_48:
        before_48.setattr(canonical_json, "canonical", _canonical_before_48)
        loaded = configuration.load(project.path)
        written = snapshot.create_savepoint(
            snapshot.Settings.of(loaded), snapshot.Session("s-1", str(transcript.path), str(project.path), "manual")
        )
    old = written.path.read_bytes()
    assert b'"ratio":1e-07' in old and b'"id":123456789012345678901234567890' in old, "the old spelling"
    checked = precompact(project.path, "verify")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    exported = precompact(project.path, "export")
    assert exported.returncode == 0
    state_saved = json.loads(exported.stdout)["session_state"]["content"]
    assert state_saved == {"ratio": 1e-7, "id": 123456789012345678901234567890, "missing": None}
