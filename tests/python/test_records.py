"""Records (precompact/records.py) stand for dataclasses on a session start's path: each class
written both ways must behave the same where the library relies on it (construction, defaults,
equality, hashing, immutability, repr, replace, as_dict)."""

from __future__ import annotations

import dataclasses

import pytest

from precompact.records import FrozenRecordError, Record, field


class Line(Record, frozen=True):
    sequence: int
    name: str
    tags: list[str] = field(default_factory=list)
    note: str | None = None


@dataclasses.dataclass(frozen=True)
class LineAsDataclass:
    sequence: int
    name: str
    tags: list[str] = dataclasses.field(default_factory=list)
    note: str | None = None


class Reading(Record):
    events: list[dict] = field(default_factory=list)
    bad: int = 0


def test_a_record_is_made_and_shown_as_the_same_dataclass_is():
    for args, kwargs in (((1, "a"), {}), ((2,), {"name": "b", "note": "n"}), ((), {"sequence": 3, "name": "c"})):
        record, reference = Line(*args, **kwargs), LineAsDataclass(*args, **kwargs)
        assert dataclasses.astuple(reference) == tuple(record.as_dict().values())
        assert repr(record) == repr(reference).replace("LineAsDataclass", "Line")
    assert list(Line(1, "a").as_dict()) == [f.name for f in dataclasses.fields(LineAsDataclass)]


def test_a_record_is_refused_as_the_dataclass_is_without_its_required_fields_or_with_unknown_ones():
    for make in (Line, LineAsDataclass):
        with pytest.raises(TypeError):
            make(1)  # type: ignore[call-arg]
        with pytest.raises(TypeError):
            make(1, "a", colour="red")  # type: ignore[call-arg]
        with pytest.raises(TypeError):
            make(1, "a", [], None, "one too many")  # type: ignore[call-arg]
        with pytest.raises(TypeError):
            make(1, "a", sequence=2)  # type: ignore[misc]


def test_each_record_gets_its_own_default_from_a_factory():
    first, second = Line(1, "a"), Line(1, "a")
    first.tags.append("x")
    assert second.tags == [] and Reading().events is not Reading().events
    assert "tags" not in vars(Line), "the factory is no class attribute, as with dataclasses"


def test_a_frozen_record_is_immutable_equal_and_hashed_by_its_fields():
    record = Line(1, "a", note="n")
    with pytest.raises(FrozenRecordError):
        record.name = "b"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del record.note  # type: ignore[misc]
    assert record.name == "a" and record == Line(1, "a", note="n")
    assert record != Line(1, "a", note="other") and record != LineAsDataclass(1, "a", note="n")
    assert hash(Line(1, "a", ("t",), "n")) == hash(Line(1, "a", ("t",), "n"))  # type: ignore[arg-type]
    assert len({Line(1, "a", ("t",)), Line(1, "a", ("t",))}) == 1  # type: ignore[arg-type]


def test_a_mutable_record_can_change_and_is_not_hashable_as_a_dataclass_is_not():
    reading = Reading()
    reading.bad = 2
    assert reading == Reading([], 2) and reading != Reading([], 3)
    with pytest.raises(TypeError):
        hash(reading)


def test_replace_changes_the_fields_named_and_refuses_a_field_the_record_does_not_have():
    record = Line(1, "a", ["t"])
    changed = record.replace(name="b")
    assert changed == Line(1, "b", ["t"]) and record == Line(1, "a", ["t"])
    with pytest.raises(TypeError, match="has no field colour"):
        record.replace(colour="red")


def test_a_record_cannot_extend_another_records_fields():
    with pytest.raises(TypeError, match="a record's fields are its own"):

        class Longer(Line):  # type: ignore[misc]
            extra: int = 0
