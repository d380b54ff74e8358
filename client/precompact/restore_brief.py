"""What a resurrection tells people and sessions: the report, the restore brief a new session
starts from, and the JSON form. Pure functions of a `Resurrection`.

Claude Code cuts SessionStart context above 10,000 characters to a preview, so the brief is
built to a budget: the report, the compaction summary, the files in play and the session-state
priorities first, then as many of the latest user requests and assistant conclusions, verbatim,
as still fit; it ends with where the full snapshot is and how to see more.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone

from precompact.resurrect import FAILED, VERIFIED, Resurrection

BRIEF_LIMIT = 9_500
SUMMARY_LIMIT = 3_000
STATE_LIMIT = 1_200
FILES_LIMIT = 1_000
MESSAGE_LIMIT = 1_500
_MARKS = {VERIFIED: "✓", FAILED: "✗"}


def report(found: Resurrection, now: datetime | None = None) -> str:
    """The "Instance Resurrection Report"."""
    s = found.savepoint
    document = found.document
    transcript = document.get("transcript") or {}
    files = document.get("loaded_files") or {}
    previous = f"{found.instance}" if found.instance != found.into else f"{found.instance} (same instance)"
    gap = "0 later savepoints (continuous)" if found.later == 0 else f"{found.later} later savepoint(s) not restored"
    lines = [
        f"{found.into} - Instance Resurrection Report",
        f"Previous instance: {previous}",
        f"Lineage: {' → '.join(found.lineage)}",
        f"Last savepoint: #{s.sequence} at {s.created.get('timestamp')} ({_age(s.created.get('unix_timestamp'), now)} ago), sha256:{s.snapshot_hash[:16]}…",
        f"Context recovered: {_size(found.size)} ({transcript.get('messages', 0)} messages, {len(files)} files)",
        f"Gap: {gap}",
        f"Blockchain proof: {_verdict(found.checks['chain'])}",
        f"Git backup: {_verdict(found.checks['git'])}",
        f"Integrity: {_verdict(found.checks['integrity'])}",
    ]
    if "snapshot" in found.checks:
        lines.append(f"Local copy: {_verdict(found.checks['snapshot'])}")
    if found.restored_state is not None:
        lines.append(f"Session state restored to {found.restored_state}")
    lines.append(f"Snapshot: {found.path} (from the {found.source})")
    if found.verified:
        lines.append("Ready to resume work.")
    elif found.intact:
        lines.append("NOT VERIFIED: no root (this machine's recorded hash, or the on-chain record) vouches for this savepoint yet; use it with care.")
    else:
        lines.append("NOT INTACT: do not trust this savepoint; run `precompact verify`.")
    return "\n".join(lines)


def brief(found: Resurrection, now: datetime | None = None) -> str:
    """The restore brief, under BRIEF_LIMIT characters."""
    document = found.document
    head = ["[precompact] This session continues from a savepoint.", report(found, now)]
    summary = found.savepoint.compact_summary
    if summary:
        head.append("## Compaction summary\n" + _cut(summary, SUMMARY_LIMIT))
    state = (document.get("session_state") or {}).get("content")
    if state:
        text = state if isinstance(state, str) else json.dumps(state, ensure_ascii=False)
        head.append("## Session-state priorities\n" + _cut(text, STATE_LIMIT))
    files = document.get("loaded_files") or {}
    if files:
        head.append("## Files in play\n" + _cut("\n".join(f"- {name} ({_file_note(info)})" for name, info in files.items()), FILES_LIMIT))
    tail = (
        f"## More\nFull snapshot: {found.path}. "
        f"`precompact resurrect --format report` shows the checks, `--format json` the fields; "
        f"`jq '.conversation_history[-20:]' {found.path}` shows the last entries."
    )
    budget = BRIEF_LIMIT - sum(len(part) + 2 for part in head) - len(tail) - 2 - len("## Latest exchanges (verbatim, oldest first)\n")
    recent = _recent(newest_exchanges(found.contents.newest_entries()), budget)
    parts = head + (["## Latest exchanges (verbatim, oldest first)\n" + recent] if recent else []) + [tail]
    text = "\n\n".join(parts)
    return text if len(text) <= BRIEF_LIMIT else text[: BRIEF_LIMIT - 1] + "…"


def to_json(found: Resurrection) -> dict:
    s = found.savepoint
    document = found.document
    return {
        "instance": found.instance,
        "into": found.into,
        "lineage": found.lineage,
        "sequence": s.sequence,
        "timestamp": s.created.get("timestamp"),
        "snapshot_hash": f"sha256:{s.snapshot_hash}",
        "snapshot_path": str(found.path),
        "snapshot_size_bytes": found.size,
        "messages": (document.get("transcript") or {}).get("messages", 0),
        "files": sorted(document.get("loaded_files") or {}),
        "later_savepoints": found.later,
        "source": found.source,
        "checks": {name: {"status": c.status, "detail": c.detail} for name, c in found.checks.items()},
        "intact": found.intact,
        "verified": found.verified,
        "compact_summary": s.compact_summary,
        "restored_state": str(found.restored_state) if found.restored_state else None,
    }


def newest_exchanges(newest_first: Iterable) -> Iterator[tuple[str, str]]:
    """The conversation's user requests and assistant text, newest first, one item per message
    (assistant lines repeat per content block; tool calls and results are left out). Lazy, so
    the brief reads a long history only as far back as its budget goes."""
    pending: tuple[str, str | None, list[str]] | None = None
    for entry in newest_first:
        if not isinstance(entry, dict) or entry.get("isSidechain") or entry.get("isMeta"):
            continue
        role = entry.get("type")
        message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        if role not in ("user", "assistant"):
            continue
        text = _text(message.get("content"))
        if not text:
            continue
        message_id = message.get("id") if role == "assistant" else None
        if pending is not None and message_id is not None and pending[:2] == ("assistant", message_id):
            pending[2].append(text)
            continue
        if pending is not None:
            yield pending[0], "\n".join(reversed(pending[2]))
        pending = (role, message_id, [text])
    if pending is not None:
        yield pending[0], "\n".join(reversed(pending[2]))


def _text(content) -> str:
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        return "\n".join(b["text"].strip() for b in content if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)).strip()
    return ""


def _recent(newest_first: Iterable[tuple[str, str]], budget: int) -> str:
    chosen: list[str] = []
    used = 0
    for role, text in newest_first:
        block = f"[{role}] {_cut(text, MESSAGE_LIMIT)}"
        if used + len(block) + 1 > budget:
            break
        chosen.append(block)
        used += len(block) + 1
    return "\n".join(reversed(chosen))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _verdict(check) -> str:
    return f"{_MARKS.get(check.status, '–')} {check.status} ({check.detail})" if check.detail else f"{_MARKS.get(check.status, '–')} {check.status}"


def _file_note(info: dict) -> str:
    if info.get("excluded"):
        return "excluded"
    if "problem" in info:
        return info["problem"]
    return f"{_size(info.get('size', 0))}, {info.get('source', '?')}"


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    for unit in ("KB", "MB"):
        n /= 1024
        if n < 1024:
            return f"{n:.1f} {unit}"
    return f"{n / 1024:.1f} GB"


def _age(unix: int | None, now: datetime | None) -> str:
    if not isinstance(unix, int):
        return "unknown time"
    seconds = max(int((now or datetime.now(timezone.utc)).timestamp()) - unix, 0)
    for unit, length in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= length:
            count = seconds // length
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"
