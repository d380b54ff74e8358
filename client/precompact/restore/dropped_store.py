"""What compaction dropped from a savepoint, listed once and kept: the detached worker lists it as
soon as the savepoint's summary is known (PostCompact recorded it; or the savepoint was made after
its compaction, or a later savepoint of its session may hold the summary entry), so `precompact
dropped` and the viewer's savepoint page read the list instead of running the rule over the
whole history again (seconds for 100 MB; docs/performance.md).

A list is kept in `logs/precompact-dropped/`, one file per savepoint, next to the recall index and
for the same reasons: it is derived from the snapshots beside it and lives and goes with them (git
does not track `logs/`; `precompact verify` never reads it). It is written whole through the
`logs/` owner (boundary/logs_dir, atomic_file), stamped with this machine's key
(local/provenance: a list that came with a copied `logs/`, or was edited, is not this machine's)
and keyed by everything the list was made from: the savepoint (instance, sequence, the snapshot
hash its bytes were checked against), how it is a compaction's (which entries come before it),
its summary (the hash of the one PostCompact recorded; without one, the later savepoints of its
session, one of which may hold the summary entry) and the rule's version
(`dropped.RULE_VERSION`). A list whose stamp does not check, whose key is not the savepoint's
key now, or whose shape is not the one written, is never shown: the list is made again, as if
none were kept. Read back, it is outside input: each field of its type, each kind and confidence
one the rule gives, each entry within the history, and its texts are data, quoted where they are
shown as the rule's own are.
"""

from __future__ import annotations

import hashlib
import time
import types
import typing
from collections.abc import Callable

import orjson

from precompact.boundary import logs_dir, quoting
from precompact.config.settings import Config
from precompact.errors import PrecompactError
from precompact.local import capture, provenance, savepoint_log
from precompact.restore import dropped as dropping
from precompact.restore import resurrect as resurrection

STORE_DIR = "precompact-dropped"
FORMAT = 1
PURPOSE = "dropped-list"  # the provenance stamp's purpose: a stamp made for another file does not check here
# A list beyond this is not kept (it is made each time): the rule cuts each fact to
# dropping.FACT_CHARS, so only a history of gigabytes lists this much.
MAX_BYTES = 1 << 28


def _exact_types(hint: object) -> tuple[type, ...]:
    """The types a field annotated `hint` may hold, exactly (a bool is not an int); none for an
    annotation this check cannot test (`list[str]`): such a field refuses every list kept."""
    members = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    plain = all(isinstance(m, type) and typing.get_origin(m) is None for m in members)
    return tuple(m for m in members if isinstance(m, type)) if plain else ()


_FACT_TYPES = {name: _exact_types(hint) for name, hint in typing.get_type_hints(dropping.Fact).items()}
_FACT_FIELDS = frozenset(_FACT_TYPES) | {"ref"}


def of_savepoint(config: Config, instance: str | None = None, sequence: int | None = None) -> dropping.Dropped:
    """What compaction dropped from savepoint `sequence` of `instance` (default: the newest
    compaction of the configured instance), as `dropping.of_savepoint` lists it: the list kept
    for it when its key holds, else made now."""
    return of_resurrection(
        config,
        resurrection.from_this_machine(
            config, instance, sequence, of_compaction=sequence is None, git_when_altered=True
        ),
    )


def of_resurrection(config: Config, found: resurrection.Resurrection) -> dropping.Dropped:
    """What compaction dropped from a savepoint already loaded and checked: the list kept for it
    when its key holds, else made now (refused, NotVouched, unless a root vouches for it)."""
    return kept(config, found) or dropping.of_resurrection(config, found)


def kept(config: Config, found: resurrection.Resurrection) -> dropping.Dropped | None:
    """The list kept for the savepoint `found` holds, if one is kept under its key now and reads
    back as written; None otherwise. A list is what the savepoint holds: refused (NotVouched)
    as its contents are, unless a root vouches for it (`Resurrection.check_vouched`)."""
    found.check_vouched()
    s = found.savepoint
    saved = savepoint_log.savepoints(config.logs, s.instance)
    document = _read(config, saved, s)
    listed = _report(document.get("dropped"), s, _sources(saved, s)) if document is not None else None
    if listed is None:
        return None
    listed.copy_note = resurrection.copy_note(found)
    return listed


# --- the worker's job ---------------------------------------------------------------------------


def due(config: Config) -> list[savepoint_log.Savepoint]:
    """The configured instance's savepoints whose summary is known (or may be, in a later
    savepoint of the session) and for which no list is kept under their key now, newest first."""
    saved = savepoint_log.savepoints(config.logs, config.instance)
    return [s for s in reversed(saved) if _summary_known(saved, s) and _read(config, saved, s) is None]


def keep_due(config: Config, interrupted: Callable[[], bool]) -> list[str]:
    """Lists and keeps what compaction dropped from each savepoint `due` names, newest first,
    until `interrupted()` says other work came first (it is asked before each); a line for the
    log per savepoint."""
    notes = []
    for s in due(config):
        if interrupted():
            break
        # The key as the index says it before the list is made: an index line added meanwhile
        # (a summary recorded, a later savepoint) makes the key stale, never the list wrong.
        key = _key(savepoint_log.savepoints(config.logs, s.instance), s)
        started = time.monotonic()
        try:
            listed = dropping.of_resurrection(config, resurrection.from_this_machine(config, s.instance, s.sequence))
        except (PrecompactError, ValueError) as e:  # refused, or a history that does not parse: `dropped` says so
            notes.append(f"what compaction dropped from savepoint {s.sequence} not listed: {quoting.inline(str(e))}")
            continue
        took = time.monotonic() - started
        body = orjson.dumps({"key": key, "dropped": listed.to_json()}, option=orjson.OPT_SORT_KEYS)
        if len(body) > MAX_BYTES:
            notes.append(f"what compaction dropped from savepoint {s.sequence} is over {MAX_BYTES} bytes: not kept")
            continue
        logs_dir.write_atomic(config.logs, _name(s), provenance.stamped(PURPOSE, body))
        notes.append(
            f"what compaction dropped from savepoint {s.sequence} listed ({len(listed.facts)} facts, {took:.1f} s) and kept"
        )
    return notes


# --- the key and the file -----------------------------------------------------------------------


def _summary_known(saved: list[savepoint_log.Savepoint], s: savepoint_log.Savepoint) -> bool:
    """Whether `dropping._summary` may find the savepoint's summary: PostCompact recorded it, the
    savepoint was made after its compaction, or a later savepoint of the session may hold it."""
    compaction = capture.compaction(s)
    if capture.is_empty(s) or compaction is None:
        return False
    return bool(s.compact_summary) or compaction == capture.AFTER or bool(_later(saved, s))


def _later(saved: list[savepoint_log.Savepoint], s: savepoint_log.Savepoint) -> list[savepoint_log.Savepoint]:
    """The later savepoints of the session, where `dropping._summary` looks for the summary entry."""
    return [o for o in saved if o.sequence > s.sequence and s.session_id and o.session_id == s.session_id]


def _key(saved: list[savepoint_log.Savepoint], s: savepoint_log.Savepoint) -> dict:
    """Everything the savepoint's list is made from, as the index says it now."""
    recorded = s.compact_summary or None
    return {
        "format": FORMAT,
        "rule": dropping.RULE_VERSION,
        "instance": s.instance,
        "sequence": s.sequence,
        "snapshot_sha256": s.snapshot_hash,
        "compaction": capture.compaction(s),
        "summary_sha256": hashlib.sha256(recorded.encode()).hexdigest() if recorded else None,
        "later": [] if recorded else [[o.sequence, o.snapshot_hash] for o in _later(saved, s)],
    }


def _name(s: savepoint_log.Savepoint) -> str:
    instance = hashlib.sha256(s.instance.encode()).hexdigest()[:16]
    return f"{STORE_DIR}/{instance}-{s.sequence:06d}.json"


def _read(config: Config, saved: list[savepoint_log.Savepoint], s: savepoint_log.Savepoint) -> dict | None:
    """The document kept for `s`, if this machine stamped it and its key is `s`'s key now."""
    try:
        stored = logs_dir.read_bytes(config.logs, _name(s), limit=MAX_BYTES + 64)
    except OSError:  # none kept, or not a file precompact wrote (logs_dir refuses it)
        return None
    body = provenance.made_here(PURPOSE, stored)
    if body is None:
        return None
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(document, dict) or not isinstance(document.get("key"), dict):
        return None
    # Compared as bytes: `true` is not 1, nor 1.0 the format 1.
    same = orjson.dumps(document["key"], option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        _key(saved, s), option=orjson.OPT_SORT_KEYS
    )
    return document if same else None


def _sources(saved: list[savepoint_log.Savepoint], s: savepoint_log.Savepoint) -> set[str]:
    """Where the summary of `s` may have come from, as `dropping._summary` names it."""
    return {
        dropping.RECORDED,
        dropping.NONE_RECORDED,
        dropping.AFTER_BOUNDARY.format(s.sequence),
        *(dropping.LATER_SAVEPOINT.format(o.sequence) for o in _later(saved, s)),
    }


def _report(value: object, s: savepoint_log.Savepoint, sources: set[str]) -> dropping.Dropped | None:
    """The list `Dropped.to_json` wrote, if `value` is one of savepoint `s` in every field."""
    if not isinstance(value, dict) or set(value) != {
        "instance",
        "sequence",
        "summary_source",
        "summary",
        "entries",
        "kept",
        "dropped",
    }:
        return None
    summary, source = value["summary"], value["summary_source"]
    entries, kept_count, facts = value["entries"], value["kept"], value["dropped"]
    if (
        value["instance"] != s.instance
        or not _is_int(value["sequence"])
        or value["sequence"] != s.sequence
        or source not in sources
        or not (summary is None or isinstance(summary, str))
        or (s.compact_summary and summary != s.compact_summary)
        or not _is_int(entries)
        or not _is_int(kept_count)
        or entries < 0
        or kept_count < 0
        or not isinstance(facts, list)
    ):
        return None
    read = [_fact(item, s.sequence, entries) for item in facts]
    if any(fact is None for fact in read):
        return None
    return dropping.Dropped(
        s.instance, s.sequence, summary, source, [f for f in read if f is not None], kept_count, entries
    )


def _fact(item: object, sequence: int, entries: int) -> dropping.Fact | None:
    if (
        not isinstance(item, dict)
        or item.keys() != _FACT_FIELDS
        or not all(type(item[name]) in allowed for name, allowed in _FACT_TYPES.items())
        or item["kind"] not in dropping.KINDS
        or item["confidence"] not in (dropping.DROPPED, dropping.POSSIBLY_DROPPED)
        or not 1 <= item["entry"] <= entries
        or item["ref"] != f"{sequence}:{item['entry']}"
    ):
        return None
    return dropping.Fact(**{name: item[name] for name in _FACT_TYPES})


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
