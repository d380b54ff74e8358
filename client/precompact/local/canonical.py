"""The canonical JSON bytes every hash of a snapshot and a chunk is taken over: sorted keys,
compact, UTF-8, one spelling per value."""

from __future__ import annotations

import json
import math

import orjson


def canonical(value) -> bytes:
    """The canonical JSON bytes of a value: sorted keys, compact, UTF-8."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # an integer beyond 64 bits (orjson writes NaN as null; so do we)
        return json.dumps(_nan_as_null(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
            "utf-8"
        )


def _nan_as_null(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_nan_as_null(v) for v in value]
    if isinstance(value, dict):
        return {k: _nan_as_null(v) for k, v in value.items()}
    return value
