"""Properties over generated inputs (hypothesis): transcript parsing, canonical JSON and its
hash, on-chain record decoding, and folding the savepoint index."""

from __future__ import annotations

import hashlib
import json
import random
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from precompact.chain import record
from precompact.local import savepoint_log, snapshot
from precompact.local.canonical import canonical
from precompact.transcript import claude_code as transcript

settings.register_profile(
    "precompact",
    deadline=None,
    max_examples=150,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile("precompact")


def json_of(integers):
    scalars = st.none() | st.booleans() | integers | st.floats(allow_nan=False, allow_infinity=False) | st.text()
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
        max_leaves=30,
    )


json_values = json_of(st.integers())
json_objects = st.dictionaries(st.text(), json_values, max_size=6)
# What Claude Code (JavaScript) can write: its numbers are doubles, so an integer beyond 64 bits
# never appears in a transcript (orjson reads one as a float, as JavaScript itself would).
transcript_objects = st.dictionaries(st.text(), json_of(st.integers(-(2**63), 2**64 - 1)), max_size=6)


@given(json_values)
def test_canonical_bytes_parse_back_to_the_value_and_are_a_fixed_point(value):
    data = canonical(value)
    parsed = json.loads(data)
    assert parsed == value
    assert canonical(parsed) == data, "re-serialising what was read must give the same bytes, so the same hash"


@pytest.mark.slow
@given(json_objects, st.randoms(use_true_random=False))
def test_canonical_bytes_ignore_key_order(value, rng):
    shuffled = dict(rng.sample(list(value.items()), len(value)))
    assert hashlib.sha256(canonical(shuffled)).digest() == hashlib.sha256(canonical(value)).digest()


def read_transcript(path, scan):
    return [
        entry for block in transcript.blocks(path, scan) for _, entry in transcript.entries(block.split(b"\n"), scan)
    ]


@pytest.mark.slow
@given(
    st.lists(transcript_objects, max_size=8),
    st.booleans(),
    st.sampled_from(["compact", "spaced"]),
    st.sampled_from([1, 7, 100, 1 << 17]),
)
def test_transcript_lines_come_back_as_written(tmp_path_factory, monkeypatch, entries, torn_tail, style, block_bytes):
    monkeypatch.setattr(transcript, "BLOCK_BYTES", block_bytes)  # lines longer and shorter than a block
    path = tmp_path_factory.mktemp("t") / "t.jsonl"
    separators = (",", ":") if style == "compact" else (", ", ": ")
    lines = [json.dumps(entry, separators=separators, ensure_ascii=style == "spaced") + "\n" for entry in entries]
    tail = '{"type":"assistant","message":{"content":"half' if torn_tail else ""
    path.write_text("".join(lines) + tail, encoding="utf-8")
    scan = transcript.TranscriptScan(str(path))
    blocks = list(transcript.blocks(path, scan))
    assert b"".join(blocks) == "".join(lines).encode() and all(block.endswith(b"\n") for block in blocks)
    assert [entry for block in blocks for _, entry in transcript.entries(block.split(b"\n"), scan)] == entries
    assert (scan.entries, scan.malformed_lines, scan.partial_last_line) == (len(entries), 0, torn_tail)


def without_lone_surrogates(value):
    if isinstance(value, str):
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in value)
    if isinstance(value, list):
        return [without_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {without_lone_surrogates(k): without_lone_surrogates(v) for k, v in value.items()}
    return value


any_text = st.text(st.characters(codec=None, categories=None))


@given(st.lists(st.dictionaries(any_text, any_text | st.lists(any_text, max_size=3), max_size=4), max_size=5))
def test_lone_surrogates_in_a_transcript_become_replacement_characters(tmp_path_factory, entries):
    # JavaScript writes a string cut mid-emoji as a lone "\ud83d" escape; it must not sink the savepoint.
    path = tmp_path_factory.mktemp("t") / "t.jsonl"
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries), encoding="ascii")
    read = read_transcript(path, transcript.TranscriptScan(str(path)))
    # (json.loads first: an escaped high + low surrogate pair is one character, not two lone ones)
    assert read == [without_lone_surrogates(json.loads(json.dumps(entry))) for entry in entries]
    json.loads(canonical(read))


@pytest.mark.slow  # 53 s here
@given(st.lists(transcript_objects, min_size=1, max_size=6), st.data())
def test_a_malformed_line_costs_only_itself(tmp_path_factory, entries, data):
    position = data.draw(st.integers(0, len(entries)))
    garbage = data.draw(st.sampled_from(["{not json", "[1, 2]", '"a string"', "{'single': 1}", "\x00\x01"]))
    path = tmp_path_factory.mktemp("t") / "t.jsonl"
    lines = [json.dumps(entry) for entry in entries]
    lines.insert(position, garbage)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    scan = transcript.TranscriptScan(str(path))
    read = read_transcript(path, scan)
    kept_raw = [i for i, entry in enumerate(read) if "precompact_unparsed_line" in entry]
    assert kept_raw == [position], "the bad line is kept, as raw text, where it was"
    assert read[:position] + read[position + 1 :] == entries, "and costs no other entry"
    assert scan.malformed_lines == 1


tricky_text = st.sampled_from(['},{"', '],"format_version":', "]}", "{[", '"', "\\"]) | st.text(max_size=20)
history_entries = st.dictionaries(
    st.sampled_from(["type", "message", "content", "format_version", "uuid"]),
    st.recursive(
        st.none() | st.integers(-(2**63), 2**63 - 1) | tricky_text,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(tricky_text, inner, max_size=3),
        max_leaves=12,
    ),
    max_size=4,
)


@given(st.lists(history_entries, max_size=30), transcript_objects, st.sampled_from([32, 256, 1 << 18]), st.booleans())
def test_a_snapshot_reads_back_its_fields_and_its_history_newest_first(monkeypatch, history, rest, window, as_written):
    monkeypatch.setattr(snapshot, "_TAIL_WINDOW_BYTES", window)
    rest = {**{k: v for k, v in rest.items() if k > "format_version"}, "format_version": 1}
    if as_written:  # the layout create_savepoint streams
        data = b'{"conversation_history":[' + b",".join(canonical(e) for e in history) + b"]," + canonical(rest)[1:]
    else:  # anything else is parsed whole
        data = json.dumps({**rest, "conversation_history": history}, indent=1).encode()
    reader = snapshot.SnapshotReader(data)
    assert reader.fields == rest
    assert list(reader.newest_entries()) == history[::-1]


# The record's layout, written out independently of record.py (DESIGN.md: header, then body).
LAYOUT = struct.Struct("<3sB28sBq32s32s40s64s32sQ32sQqBH256s")
assert LAYOUT.size == record.SIZE == 556

record_fields = st.fixed_dictionaries(
    {
        "entry_type": st.integers(0, 255),
        "timestamp": st.integers(-(2**63), 2**63 - 1),
        "instance_id": st.binary(min_size=32, max_size=32),
        "snapshot_hash": st.binary(min_size=32, max_size=32),
        "git_commit": st.binary(min_size=40, max_size=40),
        "signature": st.binary(min_size=64, max_size=64),
        "authority": st.binary(min_size=32, max_size=32),
        "sequence": st.integers(0, 2**64 - 1),
        "prev_snapshot_hash": st.binary(min_size=32, max_size=32),
        "slot": st.integers(0, 2**64 - 1),
        "chain_timestamp": st.integers(-(2**63), 2**63 - 1),
        "bump": st.integers(0, 255),
        "metadata_len": st.integers(0, 256),
        "metadata": st.binary(min_size=256, max_size=256),
    }
)


def encode(fields: dict, magic: bytes = record.MAGIC, version: int = 1, reserved: bytes = bytes(28)) -> bytes:
    order = [
        "entry_type",
        "timestamp",
        "instance_id",
        "snapshot_hash",
        "git_commit",
        "signature",
        "authority",
        "sequence",
        "prev_snapshot_hash",
        "slot",
        "chain_timestamp",
        "bump",
        "metadata_len",
        "metadata",
    ]
    return LAYOUT.pack(magic, version, reserved, *(fields[name] for name in order))


@given(record_fields)
def test_record_decoding_returns_every_field_as_laid_out(fields):
    decoded = record.decode(encode(fields))
    assert {k: getattr(decoded, k) for k in fields} == fields
    assert (decoded.magic, decoded.version) == (record.MAGIC, 1)


@given(record_fields, st.data())
def test_record_decoding_refuses_what_is_not_a_version_1_record(fields, data):
    flaw = data.draw(st.sampled_from(["length", "magic", "version", "metadata_len"]))
    if flaw == "length":
        good = encode(fields)
        size = data.draw(st.integers(0, 700).filter(lambda n: n != record.SIZE))
        bad = (good * 2)[:size]
    elif flaw == "magic":
        bad = encode(fields, magic=data.draw(st.binary(min_size=3, max_size=3).filter(lambda m: m != record.MAGIC)))
    elif flaw == "version":
        bad = encode(fields, version=data.draw(st.integers(0, 255).filter(lambda v: v != 1)))
    else:
        bad = encode({**fields, "metadata_len": data.draw(st.integers(257, 65535))})
    with pytest.raises(record.RecordError):
        record.decode(bad)


LAYER_KINDS = ["LAYER_2_COMMITTED", "LAYER_2_PUSHED", "LAYER_2_FAILED", "LAYER_3_CONFIRMED", "LAYER_3_FAILED"]


@st.composite
def index_events(draw):
    """Events for up to two instances: each savepoint created once (sometimes twice: the same
    line again, or a line of another snapshot with its sequence, as another machine's would be),
    layer events in any order, some about savepoints never created."""
    events = []
    for instance in draw(
        st.lists(st.sampled_from(["Gabriel #215", "Gabriel #216"]), min_size=1, max_size=2, unique=True)
    ):
        for sequence in range(1, draw(st.integers(1, 5)) + 1):
            created = {
                "event": savepoint_log.Event.SAVEPOINT_CREATED,
                "instance": instance,
                "sequence": sequence,
                "snapshot_hash": f"sha256:{instance}-{sequence}",
            }
            events.append(created)
            again = draw(st.sampled_from([None, created["snapshot_hash"], "sha256:another"]))
            if again is not None:
                events.append({**created, "snapshot_hash": again})
    layer_events = draw(
        st.lists(
            st.builds(
                lambda kind, instance, sequence, n: {
                    "event": kind,
                    "instance": instance,
                    "sequence": sequence,
                    "commit": f"c{n}",
                    "reason": f"r{n}",
                },
                st.sampled_from(LAYER_KINDS),
                st.sampled_from(["Gabriel #215", "Gabriel #216"]),
                st.integers(1, 6),
                st.integers(0, 10**6),
            ),
            max_size=25,
        )
    )
    # Layer events come after the creation they are about, as appends under the lock make them.
    rng = random.Random(draw(st.integers(0, 2**32)))
    for event in layer_events:
        created_at = next(
            (
                i
                for i, e in enumerate(events)
                if e["event"] == savepoint_log.Event.SAVEPOINT_CREATED
                and (e["instance"], e["sequence"]) == (event["instance"], event["sequence"])
            ),
            None,
        )
        position = rng.randint(created_at + 1, len(events)) if created_at is not None else rng.randint(0, len(events))
        events.insert(position, event)
    return events


def model(events: list[dict]) -> dict:
    """What the index means, computed the slow obvious way: per savepoint, its first creation and
    the last event of each layer after it, up to a second creation with other content (after
    which a line about it may be the other's)."""
    states = {}
    first: dict = {}
    recreated = set()
    for event in events:
        key = (event["instance"], event["sequence"])
        if event["event"] == savepoint_log.Event.SAVEPOINT_CREATED:
            if key not in states:
                first[key] = event
                states[key] = {
                    "hash": event["snapshot_hash"],
                    "layer_2": "PENDING",
                    "layer_3": "QUEUED_FOR_BLOCKCHAIN",
                    "commit": None,
                }
            elif event != first[key]:
                recreated.add(key)
        elif key in states and key not in recreated:
            layer, state = event["event"].lower()[:7], event["event"][8:]  # LAYER_2_PUSHED: layer_2, PUSHED
            states[key][layer] = state
            if event["event"] == "LAYER_2_COMMITTED":
                states[key]["commit"] = event["commit"]
    return states


@given(index_events())
def test_folding_the_index_agrees_with_the_obvious_model(events):
    folded = savepoint_log.fold(events)
    got = {
        (s.instance, s.sequence): {
            "hash": s.created["snapshot_hash"],
            "layer_2": s.layer_2,
            "layer_3": s.layer_3,
            "commit": s.commit,
        }
        for s in folded
    }
    assert got == model(events)


@given(index_events())
def test_each_instance_folds_the_same_whatever_else_is_interleaved(events):
    for instance in {e["instance"] for e in events}:
        alone = [e for e in events if e["instance"] == instance]
        assert [vars(s) for s in savepoint_log.of_instance(savepoint_log.fold(events), instance)] == [
            vars(s) for s in savepoint_log.of_instance(savepoint_log.fold(alone), instance)
        ]


@given(index_events(), st.integers(1, 60))
def test_index_lines_parse_back_and_a_torn_last_line_is_only_that_line(events, cut):
    lines = [(json.dumps(e, sort_keys=True, separators=(",", ":")) + "\n").encode() for e in events]
    assert savepoint_log.parse(lines).events == events
    torn = lines[-1][: min(cut, len(lines[-1]) - 2)]
    read = savepoint_log.parse([*lines[:-1], torn])
    assert read.events == events[:-1] and read.bad_lines == [len(lines)]
