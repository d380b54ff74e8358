"""The canonical JSON bytes every hash of a snapshot and a chunk is taken over: sorted keys,
compact, UTF-8, one spelling per value (docs/snapshot-format.md, "Canonical JSON").

Numbers are spelled as orjson spells them: an integer in full, a float in the shortest form
that reads back to the same double (`0.1`, `1e-7`, `1e+16`, `123.0`), NaN and infinities as
`null`. orjson cannot write an integer beyond 64 bits; such a value is written here in full, and
everything around it spelled as orjson would, so the bytes do not depend on whether one is there."""

from __future__ import annotations

import orjson


def canonical(value) -> bytes:
    """The canonical JSON bytes of a value: sorted keys, compact, UTF-8."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # an integer beyond 64 bits
        return _spelled(value)


def _spelled(value) -> bytes:
    """`value` as orjson would write it, integers of any size in full."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value).encode()
    if isinstance(value, (list, tuple)):
        return b"[" + b",".join(_spelled(item) for item in value) + b"]"
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise TypeError("a JSON object's keys are strings")
        return b"{" + b",".join(orjson.dumps(key) + b":" + _spelled(value[key]) for key in sorted(value)) + b"}"
    return orjson.dumps(value)
