"""Which savepoints a session's transcript still needs, whatever hooks Claude Code ran.

PreCompact does not always fire (Claude Code #50467, #15096), and when it does the transcript may
lag the last turn. The transcript itself keeps what compaction dropped: the entries before its
`compact_boundary` line, which Claude Code 2.1.332 writes only after the compaction's hooks. So
in those hooks (SessionStart `compact`, PostCompact) the session's savepoints are compared with
the transcript: when something said lies beyond what they read, a savepoint is made of it,
marked with why (`MISSED`: no PreCompact savepoint of this compaction; `LAGGED`: there was one,
but its transcript had not caught up). Each savepoint's index line says how far into the
transcript it read (`transcript_end`), which is what "covers" means here.
"""

from __future__ import annotations

import mmap
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from precompact.boundary import session_file
from precompact.local import savepoint_log
from precompact.transcript import agent_names

if TYPE_CHECKING:  # a session start that makes no savepoint is spared snapshot's imports
    from precompact.local import snapshot

MISSED = "missed_precompact"
LAGGED = "lagging_transcript"
_BOUNDARY = b'"compact_boundary"'
# The triggers PreCompact records: a savepoint with one of them was made for a compaction.
COMPACTION_TRIGGERS = ("manual", "auto")
RECOVERED_TRIGGER = "recovered"
COMPACTED = (*COMPACTION_TRIGGERS, RECOVERED_TRIGGER)
SESSION_END_TRIGGER = "session_end"
IMPORT_TRIGGER = "import"
# What `recover` did with a missing savepoint.
WRITTEN, QUEUED = "written", "queued"
# Every trigger precompact records; a line shows any other value quoted (an index line from an
# older version, or one written by hand).
TRIGGERS = (*COMPACTED, SESSION_END_TRIGGER, IMPORT_TRIGGER)


def boundaries(path: Path) -> list[int]:
    """The byte offsets where the transcript's `compact_boundary` lines start, oldest first. Only
    a whole line that parses as a system entry of that subtype counts: a user quoting the word
    does not make a boundary."""
    import orjson  # here: a session start's brief reads no transcript

    try:
        with session_file.open_read(path) as f:
            if os.fstat(f.fileno()).st_size == 0:
                return []
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return []
    found = []
    with data:
        hit = data.find(_BOUNDARY)
        while hit != -1:
            start = data.rfind(b"\n", 0, hit) + 1
            end = data.find(b"\n", hit)
            if end == -1:
                break  # a line still being written
            try:
                entry = orjson.loads(data[start:end])
            except orjson.JSONDecodeError:
                entry = None
            if isinstance(entry, dict) and entry.get("type") == "system" and entry.get("subtype") == "compact_boundary":
                found.append(start)
            hit = data.find(_BOUNDARY, end)
    return found


def of_session(saved: list[savepoint_log.Savepoint], session_id: str | None) -> list[savepoint_log.Savepoint]:
    return [s for s in saved if session_id and s.session_id == session_id]


def holding(
    saved: list[savepoint_log.Savepoint], session_id: str | None, said: str | None
) -> savepoint_log.Savepoint | None:
    """The savepoint of session `session_id` that holds it as it is now, its last entry said
    being `said` (conversation.last_said): the session's latest, when it read up to that entry
    (not an older one: a second /compact appends the history again under the same ids,
    anthropics/claude-code #92089, so the transcript may end at an entry an older savepoint
    ended at with much said since). None when the session said nothing, or something since.
    A hook's rule (PreCompact, SessionEnd): a compaction's summary and brief go with a savepoint
    of the session's own, so a session's compaction is saved under its own id even where another
    session's savepoint holds the same history."""
    mine = of_session(saved, session_id)
    return mine[-1] if said is not None and mine and mine[-1].last_said == said else None


def archived(
    saved: list[savepoint_log.Savepoint], session_id: str | None, agent: str, said: str | None, transcript: Path
) -> savepoint_log.Savepoint | None:
    """The savepoint that archives `agent`'s session `session_id` (its file `transcript`) as it
    is now, so that a command (`savepoint`, `import`) makes no other of it: `holding`'s; or, for
    a session in Claude Code's sessions folder with no savepoint of its own whose last entry said
    is another session's savepoint's last, that savepoint (the first such): the session is a
    copy of what it holds under a new id, one `uncompact` wrote there (from it, or from a later
    one cut at the compaction it was made at), not resumed since. Only Claude Code marks an
    entry the same in every session (its `uuid`): other agents' marks (Codex's record ordinals)
    repeat from one session to the next."""
    if of_session(saved, session_id) or said is None or not _kept_by_claude_code(agent, transcript):
        return holding(saved, session_id, said)
    return next((s for s in saved if s.last_said == said), None)


def _kept_by_claude_code(agent: str, transcript: Path) -> bool:
    """Whether `transcript` is a session file in Claude Code's sessions folder (one folder per
    directory under it), where `uncompact` writes its copies."""
    if agent != agent_names.CLAUDE:
        return False
    from precompact.config import agent_settings
    from precompact.errors import PrecompactError

    try:
        return transcript.resolve().parent.parent == agent_settings.sessions_folder().resolve()
    except (OSError, RuntimeError, PrecompactError):  # no home, a link loop, a folder not followed
        return False


def reach(savepoint: savepoint_log.Savepoint) -> int:
    """How far into its transcript the savepoint read (0 when its index line does not say)."""
    end = savepoint.transcript_end
    return end if isinstance(end, int) and not isinstance(end, bool) and end > 0 else 0


def is_empty(savepoint: savepoint_log.Savepoint) -> bool:
    """True when the savepoint holds no message (a savepoint made without a transcript)."""
    return savepoint.messages == 0


def needed(
    saved: list[savepoint_log.Savepoint], session: snapshot.Session, queued: int = 0
) -> snapshot.Recovery | None:
    """In a compaction's hook, the savepoint the session still needs: every whole line of the
    transcript now is from before this compaction (Claude Code 2.1.332 writes its boundary after
    SessionStart and PostCompact), or, where the boundary is already written and nothing was said
    after it, the lines before it. None when nothing said lies beyond what the session's
    savepoints read, or what a savepoint queued for it will read (`queued`: the worker writes
    it); what Claude Code appends around a compaction is not conversation."""
    if not session.session_id or not session.transcript_path:
        return None
    path = Path(session.transcript_path)
    mine = of_session(saved, session.session_id)
    covered = max(_read_so_far(saved, session.session_id), queued)
    marks = boundaries(path)
    from precompact.transcript.claude_code import whole_lines_end

    end = whole_lines_end(path)
    if marks and marks[-1] > covered and not _says_anything(path, marks[-1], end):
        end = marks[-1]
    if not _says_anything(path, covered, end):
        return None
    since = max((b for b in marks if b <= covered), default=0)
    lagged = bool(mine) and reach(mine[-1]) > since and mine[-1].trigger in COMPACTION_TRIGGERS
    from precompact.local import snapshot

    return snapshot.Recovery(LAGGED if lagged else MISSED, end)


def _says_anything(path: Path, start: int, end: int) -> bool:
    """Whether an entry said (conversation.is_said) lies in the transcript's bytes [start, end)."""
    import orjson

    from precompact.transcript import conversation

    try:
        with session_file.open_read(path) as f:
            f.seek(start)
            while f.tell() < end:
                line = f.readline()
                if not line:
                    return False
                if f.tell() > end:
                    line = line[: len(line) - (f.tell() - end)]
                try:
                    entry = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if conversation.is_said(entry):
                    return True
    except OSError:
        return False
    return False


def recover(settings: snapshot.Settings, session: snapshot.Session, lock_timeout: float) -> str | None:
    """Makes the savepoint `needed` says is missing (Layer 1 only): WRITTEN; or, when the index
    lock stays busy past `lock_timeout` (the hook's event may wait no longer), leaves it to the
    worker: QUEUED. None when none is missing. A savepoint a hook left queued (PreCompact's, the
    index lock busy) is written first, within the same wait, so that the session is briefed
    with it (WRITTEN, when nothing else is missing); one still queued after that wait covers
    what it will read (QUEUED: a compaction summary is then queued after it, and the worker
    records it with that savepoint)."""
    from precompact.local import snapshot

    until = time.monotonic() + lock_timeout
    written = snapshot.write_queued_savepoints(settings, holder, lock_timeout).savepoints
    saved = savepoint_log.savepoints(settings.logs, settings.instance)
    queued = snapshot.queued_reach(settings.logs, session.session_id)
    recovery = needed(saved, session, queued)
    if recovery is None:
        return QUEUED if waiting(saved, session.session_id, queued) else WRITTEN if written else None
    try:
        snapshot.create_savepoint(settings, session, recovery=recovery, lock_timeout=max(until - time.monotonic(), 0.0))
    except savepoint_log.LockTimeout:
        snapshot.queue(settings, session, end=recovery.end)
        return QUEUED
    return WRITTEN


def waiting(saved: list[savepoint_log.Savepoint], session_id: str | None, queued: int) -> bool:
    """Whether the savepoint queued for `session_id` that reads `queued` bytes into its transcript
    (snapshot.queued_reach) is still to come: it reads further than every one of the session's
    savepoints written (one a savepoint already holds is dropped by its writer, unwritten)."""
    return queued > _read_so_far(saved, session_id)


def _read_so_far(saved: list[savepoint_log.Savepoint], session_id: str | None) -> int:
    """How far into its transcript the session's savepoints written read."""
    return max((reach(s) for s in of_session(saved, session_id)), default=0)


def holder(
    saved: list[savepoint_log.Savepoint], session: snapshot.Session, end: int | None
) -> savepoint_log.Savepoint | None:
    """The session's savepoint that already holds what a savepoint of `session` read up to byte
    `end` would hold (a queued one, written later: local/snapshot.write_queued): one that read
    that far, or else the furthest, when nothing said lies between where it stopped and `end`.
    None when none does, or it cannot be told (no end given, a transcript that cannot be read)."""
    mine = [s for s in of_session(saved, session.session_id) if not is_empty(s)]
    if not mine or end is None or not session.transcript_path:
        return None
    from precompact.transcript.claude_code import whole_lines_end

    furthest = max(mine, key=reach)
    covered = reach(furthest)
    if covered >= end:
        return furthest
    path = Path(session.transcript_path)
    if covered == 0 or whole_lines_end(path) < covered or _says_anything(path, covered, end):
        return None
    return furthest


def to_brief(
    saved: list[savepoint_log.Savepoint], session_id: str | None, source: str | None
) -> savepoint_log.Savepoint | None:
    """The savepoint a session starting from `source` is briefed with. After a compaction, the
    session's own newest, never another session's. Otherwise the project's newest, except the
    session's own savepoints that no compaction made: a resumed session already has what they
    hold (Claude Code replays its entries since the last compaction). Never one without a
    conversation."""
    if source == "compact":
        return latest_of_session(saved, session_id)
    held = [
        s
        for s in saved
        if not is_empty(s) and not (session_id and s.session_id == session_id and s.trigger not in COMPACTED)
    ]
    # The newest by when its hook saved it, not by when it was written: a savepoint a hook queued
    # is written later, perhaps after a newer session's (review12a F5). Of equals, the last written.
    return max(reversed(held), key=lambda s: s.made_at) if held else None


def brief_waits(
    saved: list[savepoint_log.Savepoint],
    instance: str,
    session_id: str | None,
    source: str | None,
    entries: list[snapshot.QueueEntry],
) -> bool:
    """Whether the savepoint a session starting from `source` is to be briefed with is queued,
    not written yet (`entries`: snapshot.queue_entries, read before `saved`), so that `to_brief`'s
    pick now is an older one. After a compaction: one queued for the session that reads further
    than its savepoints written (`waiting`). From any other source: one `to_brief` would pick
    once written, of `instance`, not the session's own that no compaction made, reading further
    than its own session's savepoints written (one they hold is dropped unwritten), saved by its
    hook no earlier than the pick now (an entry of the format that names no time counts as later:
    it was queued, and so saved, after nothing that can be told)."""
    if source == "compact":
        mine = [e.end for e in entries if e.session is not None and e.session.session_id == session_id and e.end]
        return bool(session_id) and waiting(saved, session_id, max(mine, default=0))
    pick = to_brief(saved, session_id, source)
    for entry in entries:
        queued = entry.session
        if queued is None or entry.end is None or entry.instance not in (None, instance):
            continue
        if session_id and queued.session_id == session_id and queued.trigger not in COMPACTED:
            continue  # a resumed session has what it holds (to_brief leaves such savepoints out)
        newer = pick is None or entry.queued_at is None or entry.queued_at >= pick.made_at
        if newer and waiting(saved, queued.session_id, entry.end):
            return True
    return False


def latest_of_session(saved: list[savepoint_log.Savepoint], session_id: str | None) -> savepoint_log.Savepoint | None:
    """The session's newest savepoint that holds a conversation."""
    mine = [s for s in of_session(saved, session_id) if not is_empty(s)]
    return mine[-1] if mine else None


# How a savepoint is a compaction's (`compaction`): AT holds the history up to the compaction
# (made by PreCompact, recovered after it, or the session's savepoint PreCompact kept, whose
# summary PostCompact recorded); AFTER was made later in the compacted session (SessionEnd): the
# history before its last compaction boundary is that compaction's.
AT = "at"
AFTER = "after"


def compaction(savepoint: savepoint_log.Savepoint) -> str | None:
    """AT or AFTER a compaction, or None for a savepoint of no compaction."""
    if savepoint.trigger in COMPACTED or savepoint.compact_summary is not None:
        return AT
    return AFTER if savepoint.compact_boundaries else None


def latest_compaction(saved: list[savepoint_log.Savepoint]) -> savepoint_log.Savepoint | None:
    """The latest savepoint made at or for a compaction of the newest session (the session of the
    newest savepoint holding a conversation); None when that session has none."""
    newest = latest_with_conversation(saved)
    if newest is None:
        return None
    mine = [s for s in of_session(saved, newest.session_id) if not is_empty(s) and compaction(s)]
    return mine[-1] if mine else None


def before_compaction(savepoint: savepoint_log.Savepoint, entries: list) -> int:
    """How many of the savepoint's history `entries` come before its compaction: all of them,
    except for a savepoint made AFTER one, whose history is cut at its last boundary."""
    from precompact.transcript.claude_code import is_compact_boundary

    if compaction(savepoint) != AFTER:
        return len(entries)
    return max((i for i, entry in enumerate(entries) if is_compact_boundary(entry)), default=len(entries))


def latest_with_conversation(saved: list[savepoint_log.Savepoint]) -> savepoint_log.Savepoint | None:
    """The newest savepoint holding a conversation by when its hook saved it (`made_at`), not by
    when it was written: two queued savepoints may be written in the reverse order (a SessionEnd
    writes its own entry while an earlier one waits for the worker). Of equals, the last written."""
    held = [s for s in saved if not is_empty(s)]
    return max(reversed(held), key=lambda s: s.made_at) if held else None


def newer(saved: list[savepoint_log.Savepoint], than: savepoint_log.Savepoint) -> int:
    """How many of `saved` are newer than `than` as `latest_with_conversation` orders them: saved
    later by their hook, or at the same second and written after it."""
    return sum((s.made_at, s.sequence) > (than.made_at, than.sequence) for s in saved)


def transcripts(cwd: Path, home: Path | None = None) -> list[Path]:
    """The session transcripts Claude Code keeps for sessions run in `cwd` (in its sessions
    folder: `$CLAUDE_CONFIG_DIR/projects/` or `~/.claude/projects/`), oldest first (by
    modification time). Sidechains of subagents live in subfolders and are not listed. Claude
    Code's folder for `cwd` holds the sessions of every directory whose path differs from it only
    in characters other than letters and digits (`my.app` and `my-app`): a transcript is listed
    only when the directory its session ran in (claude_code.started_in) is `cwd` or below it. One
    that names none is not listed: nothing says it is this project's (Claude Code writes a `cwd`
    on every message, so a file without one holds no conversation)."""
    from precompact.config import agent_settings
    from precompact.transcript import conversation
    from precompact.transcript.claude_code import project_folder, started_in

    folder = agent_settings.sessions_folder(home) / project_folder(str(cwd))
    try:
        found = [p for p in folder.iterdir() if p.suffix == ".jsonl" and p.is_file() and not p.is_symlink()]
    except OSError:
        return []
    found = [p for p in found if conversation.ran_within(started_in(p), cwd)]
    return sorted(found, key=lambda p: (p.stat().st_mtime_ns, p.name))
