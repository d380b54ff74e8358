"""The limits on JSON precompact did not write (transcripts of the three agents, session state,
proof bundles), in one place, and the checks made before and after decoding it.

Python's `json` decodes recursively: a document nested a few thousand levels deep raises
RecursionError, which no reader expects, and whatever walks a decoded value recursively (the
redactor, canonical JSON) fails the same way on a value orjson's own limit (1024) lets through.
So: a size checked before the bytes are read, decoding by orjson (its depth limit is checked in
C as it decodes: nothing recurses), then the depth of the value (`within_depth`, iterative),
each refused as a ValueError whose message is one line. A proof bundle (`loads_unique`) must
also name each key of an object once: a decoder keeps one of two values for the same key (the
last, for orjson and json), so a second `"version"` would hide what a reader of the text sees
first. (tools/verify_bundle.py, standard library only, measures the depth on the text before
decoding and refuses a repeated key as it decodes; docs/proof-bundle.md states the same limits.)
"""

from __future__ import annotations

import json
import re

# Deeper than any agent's transcript line, session state or bundle nests (a bundle: 5 levels),
# shallow enough that every recursive walk after decoding has room under Python's limit.
MAX_DEPTH = 128
# A proof bundle: about 1.8 KB a savepoint (docs/proof-bundle.md), plus an embedded snapshot.
MAX_BUNDLE_BYTES = 1 << 30


class TooDeep(ValueError):
    MESSAGE = f"nested deeper than {MAX_DEPTH}"

    def __init__(self) -> None:
        super().__init__(self.MESSAGE)


def loads(data: bytes) -> object:
    """`data` decoded by orjson, whose own depth limit (1024) is checked as it decodes, in C, so
    nothing recurses in Python; then refused (TooDeep) when nested deeper than MAX_DEPTH.
    ValueError, one line, for anything that is not such a JSON document."""
    import orjson  # here: a session start's brief reads no outside JSON and imports it nowhere

    value = orjson.loads(data)
    if not within_depth(value):
        raise TooDeep
    return value


class RepeatedKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(f"an object names the key {json.dumps(key)[:80]} twice")


def loads_unique(data: bytes) -> object:
    """`loads(data)`, and refused (RepeatedKey) when an object names a key twice. orjson keeps
    no record of repeats, so the text is decoded a second time by json, whose recursion the
    depth `loads` checked first keeps within Python's limit."""
    value = loads(data)
    json.loads(data, object_pairs_hook=_unique_keys)
    return value


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise RepeatedKey(key)
        seen.add(key)
    return dict(pairs)


def within_depth(value, limit: int = MAX_DEPTH) -> bool:
    """Whether no list or object in `value` lies deeper than `limit` (iteratively: the point
    is to refuse what recursion cannot take)."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return False
            pending.extend((inner, depth + 1) for inner in (item.values() if isinstance(item, dict) else item))
    return True


def parse_json(text: str | bytes):
    """orjson for speed; the standard library for what orjson refuses but Python's JSON reads
    (NaN, a lone surrogate escape such as JavaScript leaves when it cuts a string mid-emoji).
    ValueError (TooDeep) for a value nested deeper than MAX_DEPTH: everything after parsing
    may then walk it recursively."""
    import orjson

    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return parse_json_standard(text)
    brackets = text.count(b"[") + text.count(b"{") if isinstance(text, bytes) else text.count("[") + text.count("{")
    if brackets > MAX_DEPTH and not within_depth(value):
        raise TooDeep
    return value


def parse_json_standard(text: str | bytes):
    """`parse_json`'s value by the standard library's decoder alone, for a reader that would
    import orjson for nothing else (a session start's brief reads a snapshot file so): the same
    value, but an integer beyond 64 bits read exactly (orjson reads a float)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep from None
    return repaired(value)


def repaired(value):
    """`value`, decoded by the standard library's json, with each lone surrogate U+FFFD
    (`without_lone_surrogates`); TooDeep when nested deeper than MAX_DEPTH. For JSON decoded
    before it was known to need it: a hook's input, most of whose events are answered from two
    of its fields before anything of precompact is imported."""
    if not within_depth(value):
        raise TooDeep
    return without_lone_surrogates(value)


def event_members(value: dict) -> dict:
    """A hook's input (a JSON object) as its handler reads it: each member nested deeper than
    MAX_DEPTH below the object left out (an agent's own fields are strings; a deep one is a
    tool's input or output the model wrote, which no handler reads), each lone surrogate U+FFFD
    (`repaired`)."""
    return {key: repaired(member) for key, member in value.items() if within_depth(member, MAX_DEPTH - 1)}


# The tokens of a JSON value skipped over, never decoded: a string (its escapes passed whole), a
# run of opening or of closing brackets, and a run of anything else (numbers, literals, commas,
# colons, whitespace: left unchecked, since the value is dropped).
_SKIPPED = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[{]+|[\]}]+|[^"\[\]{}]+', re.DOTALL)
_CLOSING = str.maketrans("[{", "]}")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def shallow_object(text: str) -> dict:
    """The members of the JSON object `text` (a hook's input nested deeper than `json` recurses),
    each value decoded unless it nests deeper than MAX_DEPTH below the object: such a value is
    skipped, never built (its strings passed by a regular expression, its brackets matched on a
    stack of one byte a level), and left out, so that time and memory stay linear in the text.
    ValueError, one line, when `text` is not one JSON object or a skipped value's brackets do
    not match."""
    members: dict = {}
    at = _after_space(text, 0)
    if text[at : at + 1] != "{":
        raise ValueError("not a JSON object")
    at = _after_space(text, at + 1)
    closed = text[at : at + 1] == "}"
    at += closed
    while not closed:
        if text[at : at + 1] != '"':
            raise ValueError(f"an object key expected at character {at}")
        key, at = _DECODER.raw_decode(text, at)  # a string: it starts with a quote
        at = _after_space(text, at)
        if text[at : at + 1] != ":":
            raise ValueError(f"':' expected at character {at}")
        at = _after_space(text, at + 1)
        if text[at : at + 1] in ("[", "{"):
            end, depth = _container_end(text, at)
            if depth < MAX_DEPTH:
                members[key] = json.loads(text[at:end])
        else:
            members[key], end = _DECODER.raw_decode(text, at)
        at = _after_space(text, end)
        separator = text[at : at + 1]
        if separator not in (",", "}"):
            raise ValueError(f"',' or '}}' expected at character {at}")
        closed = separator == "}"
        at = _after_space(text, at + 1)
    if at != len(text):
        raise ValueError(f"extra data at character {at}")
    return members


def _after_space(text: str, at: int) -> int:
    """Where the JSON whitespace at `at` ends."""
    space = _WHITESPACE.match(text, at)
    return space.end() if space else at


def _container_end(text: str, start: int) -> tuple[int, int]:
    """Where the array or object starting at `start` ends, and how deep it nests."""
    opened = bytearray()
    deepest = 0
    at = start
    while True:
        token = _SKIPPED.match(text, at)
        if token is None:
            raise ValueError(f"an unterminated string at character {at}")
        run, at = token.group(), token.end()
        if run[0] in "[{":
            opened += run.encode()
            deepest = max(deepest, len(opened))
        elif run[0] in "]}":
            # The run may go on past this value's end, into its parents' brackets.
            run = run[: len(opened)]
            if opened[-len(run) :].decode()[::-1].translate(_CLOSING) != run:
                raise ValueError(f"a bracket that does not match at character {token.start()}")
            del opened[-len(run) :]
            at = token.start() + len(run)
        if not opened:
            return at, deepest


def without_lone_surrogates(value):
    """Lone surrogates become U+FFFD: no UTF-8 encoder (so no snapshot) accepts them. Only
    called on a value within MAX_DEPTH, so its recursion is bounded."""
    if isinstance(value, str):
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if isinstance(value, list):
        return [without_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {without_lone_surrogates(k): without_lone_surrogates(v) for k, v in value.items()}
    return value
