"""What the hook does at each event of an agent's session (edges/hook.py has when each agent sends
which): before a compaction, Layer 1 of a savepoint, or of a long one its queue entry (the
worker does the rest), and the note for the summariser; after it, the savepoint of what it dropped if none holds it yet, and the
compaction summary kept; at a session start (Gemini: before the prompt after a compression), the
savepoint whose restore brief the session gets, once; at its end, what it said since its last
savepoint. `payload` is the event as the agent sent it (its JSON object, with a "cwd").

The hook runs on every compaction and session start: this module imports the rest of the library
only inside the functions that use it."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from precompact.boundary import quoting, session_file
from precompact.config import hook_timeouts
from precompact.config import settings as configuration
from precompact.errors import PrecompactError
from precompact.local import savepoint_log
from precompact.records import Record
from precompact.transcript import agent_names

if TYPE_CHECKING:
    from precompact.local import snapshot
    from precompact.ops import addendum
    from precompact.ops.layers import FlushOutcome
    from precompact.transcript import agents

ERRORS_LOG = "precompact-errors.log"
# An unexpected error's traceback, for a bug report: kept apart so that the errors log stays one
# line per error.
DEBUG_LOG = "precompact-debug.log"
# Where a failure is kept when logs/ cannot take it (read-only, full): one file per project in
# precompact's state directory, read with the errors log (`standing_failures`), so that the
# failure is still said once logs/ takes writes again.
UNLOGGED_PREFIX = "unlogged-"
UNLOGGED_KEPT = 100  # lines kept per project: the newest is what is shown, the count grows no further
# The tail of the errors log read back: its newest lines are the ones said.
ERRORS_TAIL_BYTES = 1 << 20
# An errors-log line: the UTC stamp log_failure writes, where the failure stands in the index's
# order (`_placed`: after which savepoint written, by its hash; lines of older versions have
# none), then the event and the reason.
_LOGGED_LINE = re.compile(
    r"(?P<stamp>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z) "
    r"(?:\[(?:after savepoint [-\w]+, sha256:(?P<after>[0-9a-f]{12})|(?P<first>before any savepoint))\] )?(?P<text>.+)"
)
_SNAPSHOT_HASH = re.compile(r"[0-9a-f]{64}")
# How a worker that could not start after its savepoint was written is logged: still standing
# (standing_failures; a line of an older version, stamped in that savepoint's second, is told by it).
WORKER_NOT_STARTED = "the background worker could not start: what this event saved is kept"
# Where log_failure kept a line logs/ refused (`status` and `doctor` read it there).
KEPT_IN_STATE = "precompact's state directory (logs/ could not take it)"
# How a notice is told apart in the errors log: "<time> <event> (notice): …" (log_failure).
NOTICE_MARK = " (notice)"
_NOTICE_LINE = re.compile(r"\S+ \(notice\): ")
# The agents whose compacted session gets the brief in two parts: SessionStart(`compact`), then
# what the summary left out at the next UserPromptSubmit or PostToolUse (both carry
# additionalContext to the model there; OpenCode's plugin asks with those names and adds both
# parts to every request until the next compaction). Gemini has neither: its BeforeAgent gives
# the first part at the prompt after a compression and the second at a later prompt
# (docs/agents.md).
TWO_PARTS = (agent_names.CLAUDE, agent_names.CODEX, agent_names.OPENCODE, agent_names.GEMINI)
# The agents that keep none of what precompact adds to a request (OpenCode's plugin adds it to
# each one): what the summary left out stays pending until the next compaction, not given once.
GIVEN_EACH_REQUEST = (agent_names.OPENCODE,)
# The agents whose session, told at SessionStart(`compact`) that its compaction's savepoint is
# still queued, is given that savepoint's brief at the first UserPromptSubmit or PostToolUse after
# the worker writes it (ops/addendum.owe_brief). Gemini's BeforeAgent asks again at each prompt
# by itself; OpenCode's plugin asks SessionStart again in each new OpenCode process.
OWED_LATER = (agent_names.CLAUDE, agent_names.CODEX)
QUEUED_NOTE = (
    "precompact is saving the pre-compaction transcript in the background (other saves "
    "held its index); the savepoint's number is in `precompact status` once written."
)
# PreCompact's note when what the session said since its last savepoint is more than the hook
# writes within issue 42's cost (config/hook_timeouts.pre_compact_writes): the worker writes the
# savepoint, so the hook knows neither its number nor its hash.
BACKGROUND_NOTE = (
    "precompact is saving the pre-compaction transcript in the background (more than the hook "
    "saves itself); the savepoint's number is in `precompact status` once written."
)
# What the user's own note's {savepoint} says while the savepoint waits to be written.
QUEUED_SAVEPOINT = "savepoint (being written in the background)"
# Added to the summariser's note when the worker could not start: what the hook saved is saved.
WORKER_WAITS = (
    " precompact's background worker could not start, so the rest of this save (its copies beyond this "
    "machine) waits for the worker's next run; logs/precompact-errors.log says why."
)
# The same, when the hook saved nothing itself: the savepoint waits in the queue.
QUEUE_WAITS = (
    " precompact's background worker could not start, so this save waits in logs/precompact-queue/ for "
    "the compaction's next hook, the worker's next run or `precompact flush`; logs/precompact-errors.log says why."
)


class NoTranscript(PrecompactError):
    """The event names no transcript that can be read: a savepoint of it would hold nothing."""


class Briefing(Record):
    """The savepoint whose restore brief a session is to be given, at which start (`source`), by
    which agent (whose MCP configuration says whether the brief names the MCP tools), with the
    configured instance's savepoints as the event read them from the index (read once)."""

    savepoint: savepoint_log.Savepoint
    session_id: str | None
    source: str | None
    agent: str
    saved: list[savepoint_log.Savepoint]
    # Until when (time.monotonic) the event may wait for the index lock: `lock_deadline`.
    lock_until: float


class QueuedBriefing(Record):
    """A session just compacted whose compaction's savepoint is queued, not written yet (the index
    busy at its hooks): it is told so in fixed words, naming the session's `previous` savepoint
    (None: it has none) without claiming it holds this compaction, and nothing is recorded as given.
    The agents of OWED_LATER are then owed the brief (ops/addendum.owe_brief); `newest` is the
    index's newest sequence at this start (0: none)."""

    previous: savepoint_log.Savepoint | None
    session_id: str | None
    source: str
    agent: str
    newest: int


def pre_compact(loaded: configuration.Config, payload: dict, agent: str) -> str:
    """A savepoint before the compaction (none when nothing was said since the session's last),
    the worker started for Layers 2 and 3; returns the note for Claude Code's summariser ("" for
    none, and for the agents that do not read it), which says so when the worker could not start.
    Layer 1 is written here only when what the session said since its last savepoint fits the
    cost issue 42 allows the hook (config/hook_timeouts.pre_compact_writes), or else queued for
    the worker (the note then says it is being saved, naming neither number nor hash)."""
    _check_transcript(payload)
    with _reading_session(payload, loaded, _trigger(payload), agent) as (session, _):
        return _pre_compact(loaded, payload, agent, session)


def _pre_compact(loaded: configuration.Config, payload: dict, agent: str, session: snapshot.Session) -> str:
    """`pre_compact` of `session`, its document open."""
    from precompact.local import snapshot

    kept = _unchanged_savepoint(loaded, session)
    # Only Claude Code and OpenCode (precompact's plugin adds it to the compaction prompt's
    # context) give PreCompact's stdout to the summariser.
    speaks = agent in (agent_names.CLAUDE, agent_names.OPENCODE)
    if kept is not None:
        note = f"Nothing was said since precompact savepoint {kept.sequence}, so no new savepoint was made. "
        return (
            note + _compact_note(loaded, kept.sequence, kept.snapshot_hash, kept.lines_in_part)
            if loaded.compact_note and speaks
            else ""
        )
    settings = layer_1(loaded)
    if not hook_timeouts.pre_compact_writes(_unsaved_bytes(loaded, session)):
        # Writing it here would cost more than issue 42 allows PreCompact: queued first (a small
        # stamped entry holding the transcript's end and this moment, the savepoint's time), then
        # the worker writes it, or the compaction's SessionStart or PostCompact, within its wait.
        snapshot.queue(settings, session, reason=None)
        return _queued_note(loaded, payload, speaks, BACKGROUND_NOTE)
    try:
        written = snapshot.create_savepoint(settings, session, lock_timeout=_lock_wait(payload, agent))
    except savepoint_log.LockTimeout:
        # Other saves (large transcripts) held the index past what this event may wait: the
        # worker writes this one, from the transcript as it stands now.
        snapshot.queue(settings, session)
        return _queued_note(loaded, payload, speaks, QUEUED_NOTE)
    note = _compact_note(loaded, written.sequence, written.sha256, written.lines_in_part) if speaks else ""
    # The worker runs even with Layers 2 and 3 off: it indexes the savepoint for recall.
    started = _start_worker(loaded, payload)
    return note + WORKER_WAITS if note and not started else note


def _queued_note(loaded: configuration.Config, payload: dict, speaks: bool, note: str) -> str:
    """Starts the worker for the savepoint PreCompact queued; the note for the summariser ("" for
    an agent that does not read it, or when the configured note is ""): `note`'s fixed words on why
    it waits, then the advice for the summary a saved savepoint's note gives: the default note's
    advice, or the user's own note, its placeholders filled with fixed words (neither the
    savepoint's number nor its hash is known yet)."""
    started = _start_worker(loaded, payload)
    if not speaks or not loaded.compact_note:
        return ""
    advice = (
        configuration.DEFAULT_COMPACT_ADVICE
        if loaded.compact_note == configuration.DEFAULT_COMPACT_NOTE
        else _configured_note(loaded, QUEUED_SAVEPOINT, "pre-compaction transcript")
    )
    return f"{note} {advice}" if started else f"{note} {advice}{QUEUE_WAITS}"


def layer_1(loaded: configuration.Config) -> snapshot.Settings:
    """Layer 1's settings for `loaded`, with the rule for which savepoint a new one may follow
    (verifier.signed.vouching), whose module a hook imports only when the savepoint before is
    not this machine's own."""
    from precompact.local import snapshot

    def vouched(savepoint: savepoint_log.Savepoint) -> bool:
        if savepoint.written_here:
            return True
        from precompact.verifier import signed

        return signed.vouching(loaded)(savepoint)

    return snapshot.Settings.of(loaded, vouched)


def write_queued(loaded: configuration.Config) -> snapshot.QueuedWritten:
    """The savepoints and compaction summaries hooks left queued (the index lock busy), written
    (each summary's addendum then asked for, as PostCompact asks), but for a savepoint one of the
    session's already holds (capture.holder: the three events of one compaction each found it
    missing, or a later save of the session was written first); what was done, with a line for
    each entry not written. The worker and `precompact flush` both write the queue through here."""
    from precompact.local import capture, snapshot

    def recorded(summary: snapshot.QueuedSummary) -> None:
        # In the instance its hook was loaded as (the summary's savepoint is that instance's).
        summary_recorded(loaded.replace(instance=summary.instance) if summary.instance else loaded, summary)

    return snapshot.write_queued(layer_1(loaded), capture.holder, recorded)


def _check_transcript(payload: dict) -> None:
    """NoTranscript unless the event names a transcript that is there (what it may be is
    `_refuse_non_file`'s, on every event): a savepoint made without one would be empty, and the
    summariser would be told the transcript is saved."""
    given = _text(payload, "transcript_path")
    if not given:
        raise NoTranscript("the event names no transcript_path")
    try:
        os.stat(given)
    except OSError as e:
        raise NoTranscript(f"the transcript {quoting.inline(given)} cannot be read ({quoting.os_error(e)})") from None


def subagent_session(payload: dict, agent: str) -> str | None:
    """Why the session the event names is a subagent's (agents.subagent_session), or None: such a
    session is no savepoint's, is given no brief, and its events do nothing."""
    from precompact.transcript import agents

    given, session_id = _text(payload, "transcript_path"), _text(payload, "session_id")
    if not given:
        return None
    try:
        _refuse_non_file(given)
    except NoTranscript:
        return None  # the event's handler says so
    return agents.subagent_session(agent, given, session_id)


def _refuse_non_file(given: str) -> None:
    """NoTranscript when the session file an event names is not one any reader may open
    (boundary/session_file.py: a FIFO, a device, a directory, a file the kernel makes up as it is
    read such as /proc/self/environ), so that the event says so in one line. Deciding it here
    is for that line only: every reader opens the file through session_file itself and checks
    what it opened, so a FIFO renamed onto the path after this check is refused there too, never
    waited on or read. One that is not there passes: the readers find nothing in it, as in a
    session that never said anything."""
    try:
        session_file.open_read(given).close()
    except session_file.NotASessionFile as e:
        raise NoTranscript(f"the transcript {quoting.inline(given)} {e.strerror}; nothing was read from it") from None
    except OSError:
        return


def on_request(
    loaded: configuration.Config, session: snapshot.Session, skip_unchanged: bool
) -> tuple[snapshot.WrittenSnapshot, FlushOutcome] | savepoint_log.Savepoint:
    """`precompact savepoint`: Layer 1 of a savepoint of `session`, then whatever Layers 2 and 3
    can do; or, with `skip_unchanged`, no savepoint when a savepoint archives the session as it
    is (capture.archived, `import`'s rule: its own latest, or the one an `uncompact` copy came
    from), which is returned instead (with no flush)."""
    from precompact.local import snapshot
    from precompact.ops import instance_collision, layers

    instance_collision.refuse_chosen(loaded, "savepoint")
    kept = _archived_savepoint(loaded, session) if skip_unchanged else None
    if kept is not None:
        return kept
    written = snapshot.create_savepoint(layer_1(loaded), session)
    return written, layers.flush(loaded)


def pre_compress(loaded: configuration.Config, payload: dict, agent: str) -> str | None:
    """Gemini's PreCompress: a savepoint as PreCompact makes, when a compression comes (its note,
    "" for Gemini); None when none comes (most rounds: PreCompress fires before each)."""
    trigger = _trigger(payload)
    transcript = _text(payload, "transcript_path")
    if trigger != "manual":
        from precompact.config import gemini_compression

        cwd = _text(payload, "cwd") or str(loaded.root)
        if not transcript or not gemini_compression.compression_coming(transcript, cwd, Path.home()):
            return None
    return pre_compact(loaded, payload, agent)


def post_compact(loaded: configuration.Config, payload: dict, agent: str) -> bool:
    """The savepoint of what the compaction dropped, if none holds it yet, then the compaction
    summary kept with the session's latest savepoint; False when the session has none. Each is
    left to the worker (queued, in that order) when the index lock stays busy past what the
    event may wait: the summary exists nowhere but in this payload."""
    from precompact.local import capture, snapshot

    until = lock_deadline(payload, agent)
    kept_summary, recovered = _recover(payload, loaded, agent, until)
    session_id = _text(payload, "session_id")
    # This session's savepoint only: another session's compaction summary is not its own.
    saved = savepoint_log.savepoints(loaded.logs, loaded.instance)
    mine = capture.of_session(saved, session_id)
    latest = mine[-1] if mine else None
    # Its savepoint queued, by this event's recovery or an earlier event of the compaction.
    waiting = _compaction_queued(loaded, saved, session_id, recovered)
    if (latest is None and not waiting) or session_id is None:
        return False
    text = _text(payload, "compact_summary") or kept_summary or ""
    summary, trigger = _redacted_summary(loaded, text), _trigger(payload)
    # Queued after its savepoint's own entry when that was queued: the worker writes them in turn.
    queued = snapshot.QueuedSummary(
        session_id=session_id,
        sequence=None if latest is None or waiting else latest.sequence,
        trigger=trigger,
        summary=summary,
        agent=agent,
    )
    # Queued first, whatever comes next: the agent may cut this event anywhere after it, and the
    # worker then records the summary and asks for its addendum (snapshot.record_summary).
    name = snapshot.queue_summary(layer_1(loaded), queued)
    if queued.sequence is not None:
        with contextlib.suppress(savepoint_log.LockTimeout):  # the index stays busy: the worker records it
            snapshot.record_summary(
                layer_1(loaded), name, lock_wait_left(until), lambda recorded: summary_recorded(loaded, recorded)
            )
    # With its summary known, the worker computes what the summary left out for the session (the
    # addendum above) and lists what the compaction dropped and keeps the list
    # (restore/dropped_store.py), so `dropped` and the viewer need not read the whole history:
    # there, never here.
    _start_worker(loaded, payload)
    return True


def summary_recorded(loaded: configuration.Config, recorded: snapshot.QueuedSummary) -> None:
    """A compaction summary is recorded with the session's savepoint `recorded.sequence` (by
    PostCompact, or by the worker from the queue): the worker is asked for what it left out, for
    the agents that give it in a second part."""
    if recorded.summary and recorded.agent in TWO_PARTS and recorded.sequence is not None:
        from precompact.ops import addendum

        addendum.request(loaded, recorded.session_id, recorded.sequence, recorded.agent)


def lock_deadline(payload: dict, agent: str) -> float:
    """Until when (time.monotonic) the hook's event may wait for the index lock, all its waits
    together: its share of the timeout the agent gives it (config/hook_timeouts.py)."""
    return time.monotonic() + hook_timeouts.lock_wait(agent, _text(payload, "hook_event_name") or "")


def lock_wait_left(until: float) -> float:
    """What is left of an event's wait for the index lock (0: it tries once)."""
    return max(until - time.monotonic(), 0.0)


def _lock_wait(payload: dict, agent: str) -> float:
    """The whole of the event's wait for the index lock, for an event that waits once."""
    return hook_timeouts.lock_wait(agent, _text(payload, "hook_event_name") or "")


def _redacted_summary(loaded: configuration.Config, text: str) -> str:
    """The `<summary>` of a compaction summary, redacted as a snapshot is."""
    summary = summary_part(text)
    if loaded.redaction:
        from precompact.transcript.redact import Redactor

        summary = Redactor(extra=dict(loaded.redaction_patterns)).redact(summary)
    return summary


def summary_part(text: str) -> str:
    """The `<summary>` of a compaction summary; its `<analysis>` is the model's working, not the
    summary. Text without the tags is kept whole."""
    start, end = text.find("<summary>"), text.rfind("</summary>")
    if start != -1 and end > start:
        return text[start + len("<summary>") : end].strip()
    return text.strip()


def session_start(loaded: configuration.Config, payload: dict, agent: str) -> Briefing | QueuedBriefing | None:
    """The savepoint whose brief the session gets, once per session: none when there is none,
    when this session already has it (Claude Code keeps SessionStart context in the
    conversation, so a resume after a compaction would repeat it), or when `precompact uncompact`
    wrote this session and the savepoint is another session's. After a compaction the
    savepoint is recovered from the transcript first if PreCompact left none; `capture.to_brief`
    chooses which, and the brief says when it is another session's. While this compaction's
    savepoint is queued (the index busy), no savepoint's brief is given as if it were its: a
    QueuedBriefing says so. Uses no network: git and chain are taken as the worker recorded them,
    and the session never waits on them."""
    from precompact.local import capture

    until = lock_deadline(payload, agent)
    source = _text(payload, "source")
    session_id = _text(payload, "session_id")
    # OpenCode's plugin asks at the first request of each OpenCode process after a compaction,
    # when the session may have gone on for many turns: what it said since is no compaction's
    # (OpenCode's PostCompact, at `session.compacted`, recovers a missed savepoint).
    recovered = None
    if source == "compact" and agent != agent_names.OPENCODE:
        recovered = _recover(payload, loaded, agent, until)[1]
    if source not in loaded.session_start_sources:
        return None
    # The queue before the index (a worker writing the savepoint between the two reads is then
    # seen in the index); one read of the index answers all three questions (it grows with the
    # project).
    entries = _queue_entries(loaded)
    index = savepoint_log.read(loaded.logs)
    _sign_owed_summaries(loaded, payload, index.savepoints)
    saved = savepoint_log.of_instance(index.savepoints, loaded.instance)
    latest = capture.to_brief(saved, session_id, source)
    if (recovered == capture.QUEUED or capture.brief_waits(saved, loaded.instance, session_id, source, entries)) and (
        source == "compact" or not (session_id and index.written_by_uncompact(session_id))
    ):
        # The savepoint to brief is still queued: no older one is briefed as the newest state.
        return QueuedBriefing(latest, session_id, source, agent, saved[-1].sequence if saved else 0)
    # OpenCode keeps none of the text precompact's plugin adds: each OpenCode process asks once
    # per compaction, and is given the brief again.
    once = agent != agent_names.OPENCODE
    if latest is None or (
        once and session_id and _brief_delivered(index, loaded.instance, latest.sequence, session_id)
    ):
        return None
    if session_id and latest.session_id != session_id and index.written_by_uncompact(session_id):
        return None  # `uncompact` wrote this session: it holds the whole history, another brief is noise
    return Briefing(latest, session_id, source, agent, saved, until)


def _sign_owed_summaries(
    loaded: configuration.Config, payload: dict, savepoints: list[savepoint_log.Savepoint]
) -> None:
    """Starts the worker when a compaction summary this machine recorded was never signed (the
    worker its PostCompact started did not run: killed, the machine off), so it does not wait
    for the next compaction to become restorable: the worker's flush signs it. Not while the
    worker's flush could not sign (ops/layers.signing_key: no keypair that reads, or
    chain.authority naming another key than the keypair's): every session start would start a
    worker for nothing. `status` and `verify` say why, with the fix."""
    if not any(s.summary_never_signed for s in savepoints):
        return
    from precompact.ops import layers  # only then: a session start's brief imports nothing of the flush

    if layers.signing_key(layers.keypair_counted(loaded)[0]) is not None:
        _start_worker(loaded, payload)


def _compaction_queued(
    loaded: configuration.Config, saved: list[savepoint_log.Savepoint], session_id: str | None, recovered: str | None
) -> bool:
    """Whether the savepoint of the compaction `session_id` was just given is queued, not written
    yet: its recovery was queued just now, or a savepoint queued for the session reads further
    into its transcript than every one of its savepoints written."""
    from precompact.local import capture

    return recovered == capture.QUEUED or capture.brief_waits(
        saved, loaded.instance, session_id, "compact", _queue_entries(loaded)
    )


def _queue_entries(loaded: configuration.Config) -> list[snapshot.QueueEntry]:
    """The queue's entries as they read now; none when the queue cannot be read (its writer says
    why, not a hook)."""
    from precompact.local import snapshot

    try:
        return snapshot.queue_entries(loaded.logs)
    except OSError:  # ConfinementError: its folder is a link, say
        return []


def before_agent(loaded: configuration.Config, payload: dict) -> Briefing | QueuedBriefing | None:
    """Gemini's BeforeAgent: after a compression, the savepoint whose brief the session gets,
    once per compression (Gemini keeps BeforeAgent's context with the prompt it came with)."""
    until = lock_deadline(payload, agent_names.GEMINI)
    transcript, session_id = _text(payload, "transcript_path"), _text(payload, "session_id")
    from precompact.config import gemini_compression
    from precompact.transcript import gemini

    if not transcript or not session_id or not gemini_compression.compressed(transcript):
        return None
    compressions = gemini.read(Path(transcript)).compressions
    index = savepoint_log.read(loaded.logs)
    briefed = sum(1 for delivery in index.deliveries(loaded.instance, session_id) if delivery.source == "compact")
    if briefed >= compressions:
        return None
    from precompact.local import capture

    saved = savepoint_log.of_instance(index.savepoints, loaded.instance)
    latest = capture.to_brief(saved, session_id, "compact")
    if _compaction_queued(loaded, saved, session_id, None):
        # Nothing recorded: a later prompt is given the brief once it is written.
        return QueuedBriefing(latest, session_id, "compact", agent_names.GEMINI, saved[-1].sequence if saved else 0)
    if latest is None:
        return None
    return Briefing(latest, session_id, "compact", agent_names.GEMINI, saved, until)


def before_agent_context(loaded: configuration.Config, payload: dict) -> str | None:
    """Gemini's BeforeAgent: after a compression, the brief's first part, once per compression,
    and the addendum asked for at once (the chat file holds the compression's summary by then:
    Gemini has no PostCompact); at a later prompt, what the summary left out, once (Gemini keeps
    BeforeAgent's context with its prompt)."""
    briefing = before_agent(loaded, payload)
    if briefing is None:
        return after_compaction(loaded, payload, agent_names.GEMINI)
    if isinstance(briefing, QueuedBriefing):
        return deliver(loaded, briefing, "BeforeAgent")
    context = deliver(loaded, briefing, "BeforeAgent")
    from precompact.ops import addendum

    sequence = briefing.savepoint.sequence
    if addendum.awaiting(loaded, briefing.session_id) == sequence and _summary_arrived(
        loaded, payload, sequence, agent_names.GEMINI
    ):
        _start_worker(loaded, payload)
    return context


def record_delivery(loaded: configuration.Config, briefing: Briefing, event: str = "SessionStart") -> None:
    """Records in the index that the session was given the brief; when the index lock stays busy
    past what `event` may wait, says so in the errors log instead: the brief is given all the
    same (a later start of the session may be given it again)."""
    try:
        savepoint_log.mark(
            loaded.logs,
            briefing.savepoint,
            savepoint_log.Event.BRIEF_DELIVERED,
            lock_timeout=lock_wait_left(briefing.lock_until),
            session_id=briefing.session_id,
            source=briefing.source,
        )
    except savepoint_log.LockTimeout as e:
        log_failure(
            loaded.root, event, f"the brief of savepoint {briefing.savepoint.sequence} is given unrecorded: {e}"
        )


def deliver(
    loaded: configuration.Config,
    briefing: Briefing | QueuedBriefing | None,
    event: str = "SessionStart",
    after_failure: bool = False,
) -> str | None:
    """The restore brief `briefing` names (None: no brief), recorded in the index as given (by
    `event`); of a compaction whose savepoint is queued, the fixed words that say so, recorded
    nowhere. `after_failure`: it goes after a standing failure's line, which a compacted
    session's two parts leave room for (restore/brief.parts_budget; the second part's worker
    is told through the pending request, ops/addendum.py)."""
    if briefing is None:
        return None
    if isinstance(briefing, QueuedBriefing):
        from precompact.restore import brief as restore_brief

        # Gemini's BeforeAgent asks again at each prompt after a compression, not after another start.
        comes_with = "prompt" if briefing.agent == agent_names.GEMINI and briefing.source == "compact" else None
        if briefing.agent in OWED_LATER:
            from precompact.ops import addendum

            if addendum.owe_brief(loaded, briefing.session_id, briefing.source, briefing.newest, time.time()):
                comes_with = "prompt or tool call"
        return restore_brief.queued(briefing.previous, comes_with, compacted=briefing.source == "compact")
    from precompact.config import agent_settings

    mcp_tools = agent_settings.mcp_installed(briefing.agent, loaded.root)
    # The session that was just compacted: the first part now, the second once its summary is known.
    two_parts = (
        briefing.source == "compact"
        and briefing.agent in TWO_PARTS
        and briefing.session_id is not None
        and briefing.savepoint.session_id == briefing.session_id
    )
    context = session_start_brief(
        loaded, briefing.savepoint.sequence, briefing.session_id, mcp_tools, two_parts, briefing.saved, after_failure
    )
    from precompact.ops import addendum

    if two_parts:
        addendum.await_summary(loaded, briefing.session_id, briefing.savepoint.sequence, after_failure)
    if event == "SessionStart" and briefing.agent in OWED_LATER:
        # A brief an earlier start owed is settled by this one, of the newest savepoint it may be
        # given: never a second brief after it.
        addendum.forget_brief(loaded, briefing.session_id)
    record_delivery(loaded, briefing, event)
    return context


def after_compaction(loaded: configuration.Config, payload: dict, agent: str) -> str | None:
    """UserPromptSubmit or PostToolUse of a session with something pending (the hook's entry
    checked that): the brief its session start owed it, once its savepoint is written, with what
    the summary left out when that is ready too; else what the summary left out, once
    (ops/addendum.py); to OpenCode's plugin, each time it asks until the next compaction (it adds
    the text to every request itself)."""
    if agent not in TWO_PARTS:
        return None
    from precompact.ops import addendum

    session_id = _text(payload, "session_id")
    owed = addendum.owed_brief(loaded, session_id) if agent in OWED_LATER else None
    if owed is not None:
        from precompact.local import capture

        # The queue before the index: a worker that writes the savepoint between the two reads
        # is then seen in the index (read the other way round, in neither: the brief taken and
        # never given).
        entries = _queue_entries(loaded)
        index = savepoint_log.read(loaded.logs)
        saved = savepoint_log.of_instance(index.savepoints, loaded.instance)
        if capture.brief_waits(saved, loaded.instance, session_id, owed.source, entries):
            # A worker that died leaves the entry to the next one: this event starts it (it
            # stops at once when one runs), or the brief would wait out OWED_SECONDS for nothing.
            _start_worker(loaded, payload)
            _keep_owed(loaded, payload, owed)
            return None
        if not addendum.settle_brief(loaded, session_id):
            return None  # another event is giving it
        briefing = _owed_briefing(payload, agent, owed, index, saved)
        if briefing is not None:
            return _owed_brief_given(loaded, briefing, _text(payload, "hook_event_name") or "hook")
    given = addendum.kept(loaded, session_id) if agent in GIVEN_EACH_REQUEST else addendum.take(loaded, session_id)
    if given is not None:
        return given
    waiting = addendum.awaiting(loaded, session_id)
    if waiting is not None and _summary_arrived(loaded, payload, waiting, agent):
        _start_worker(loaded, payload)  # its addendum comes with a later prompt or tool call
    return None


def _keep_owed(loaded: configuration.Config, payload: dict, owed: addendum.OwedBrief) -> None:
    """The owed brief's savepoint is still queued: it stays owed for OWED_SECONDS from the
    session start, then is dropped, with a line in the errors log naming the fix."""
    from precompact.ops import addendum

    waited = time.time() - owed.since
    if waited <= addendum.OWED_SECONDS:
        return
    session_id = _text(payload, "session_id")
    addendum.forget_brief(loaded, session_id)
    whose = f"of session {session_id}'s compaction" if owed.source == "compact" else f"owed to session {session_id}"
    log_failure(
        loaded.root,
        _text(payload, "hook_event_name") or "hook",
        f"the brief {whose} was not given: its savepoint was still queued "
        f"{waited / 60:.0f} minutes after the session start; `precompact status` says why, "
        "`precompact flush` writes it, and `precompact resurrect --format brief` then shows its brief",
    )


def _owed_briefing(
    payload: dict,
    agent: str,
    owed: addendum.OwedBrief,
    index: savepoint_log.IndexRead,
    saved: list[savepoint_log.Savepoint],
) -> Briefing | None:
    """The brief owed (taken already) once the savepoint its compaction queued is written: of
    the savepoint that session start would have briefed (`capture.to_brief`); None when the
    session was given it since (a later session start) or has no savepoint to brief."""
    from precompact.local import capture

    session_id = _text(payload, "session_id")
    latest = capture.to_brief(saved, session_id, owed.source)
    if latest is None or (session_id and _brief_delivered(index, latest.instance, latest.sequence, session_id)):
        return None
    return Briefing(latest, session_id, owed.source, agent, saved, lock_deadline(payload, agent))


def _owed_brief_given(loaded: configuration.Config, briefing: Briefing, event: str) -> str | None:
    """The owed brief's first part, recorded as given (`deliver`), followed by what the summary
    left out when the worker has that ready too. They share `[hooks] brief_budget` as at a
    compaction's two events: the first at most half of it, the second what the worker left it
    after the first part less restore/brief.AGE_SLACK, of which the blank line between them is.
    The whole brief a session start of another source owed takes the budget alone: what a
    summary left out then comes with a later event, as after that start."""
    from precompact.ops import addendum

    first = deliver(loaded, briefing, event)
    if briefing.source != "compact" or briefing.savepoint.session_id != briefing.session_id:
        return first
    # An earlier compaction's addendum made since the session start owed this brief is not this one's.
    addendum.drop_earlier(loaded, briefing.session_id, briefing.savepoint.sequence)
    second = addendum.take(loaded, briefing.session_id)
    if first is None or second is None:
        return first or second
    return f"{first}\n\n{second}"


def _summary_arrived(loaded: configuration.Config, payload: dict, sequence: int, agent: str) -> bool:
    """Whether the summary of the compaction after savepoint `sequence` is in the session file
    by now (PostCompact did not bring it): then the addendum is asked for with it, redacted. It
    is not recorded as COMPACT_SUMMARY, which says PostCompact brought it; `precompact dropped`
    finds it in the next savepoint of the session, as it does without this hook."""
    from precompact.ops import addendum

    session_id, given = _text(payload, "session_id"), _text(payload, "transcript_path")
    mine = [s for s in savepoint_log.savepoints(loaded.logs, loaded.instance) if s.sequence == sequence]
    if not mine or mine[0].session_id != session_id or not given:
        return False
    try:
        _refuse_non_file(given)
    except NoTranscript:
        return False  # no summary comes from it (said once in the errors log, at the compaction)
    if agent == agent_names.CLAUDE:
        from precompact.transcript import conversation

        summary = conversation.summary_since(Path(given), mine[0].unix_timestamp or 0)
    else:
        with _document(loaded, agent, given, session_id) as read:
            summary = read.summary
    if not summary:
        return False
    return addendum.request(loaded, session_id, sequence, agent, _redacted_summary(loaded, summary))


def session_start_brief(
    loaded: configuration.Config,
    sequence: int,
    session_id: str | None,
    mcp_tools: bool = False,
    first_part: bool = False,
    saved: list[savepoint_log.Savepoint] | None = None,
    after_failure: bool = False,
) -> str:
    """The restore brief of savepoint `sequence` for a session that is starting (this machine's
    bytes only: no network, no GitPython), or one line saying why it could not be restored; of a
    savepoint no root vouches for, one line that says so and quotes nothing of it. It names the
    MCP tools only with `mcp_tools` (the session's agent offers them). With `first_part`, the
    short brief of a session that was just compacted (the rest comes after, ops/addendum.py).
    `saved`: the configured instance's savepoints as the event read them (None: read here).
    `after_failure`: the first part goes after a standing failure's line (its budget leaves it room)."""
    from precompact.boundary import quoting
    from precompact.restore import brief as restore_brief
    from precompact.restore import resurrect as resurrection

    try:
        found = resurrection.from_this_machine(loaded, sequence=sequence, saved=saved)
    except resurrection.ResurrectError as e:
        # The session is told in one line; the user finds why in the errors log.
        log_failure(loaded.root, "SessionStart", f"savepoint {sequence} could not be restored: {e}")
        return quoting.single_line(f"[precompact] Savepoint {sequence} could not be restored: {e}")
    if not found.verified:
        return restore_brief.unvouched(found)
    if first_part:
        budget = restore_brief.parts_budget(loaded.brief_budget, after_failure)
        return restore_brief.compact_brief(found, budget, session_id=session_id, mcp_tools=mcp_tools)
    return restore_brief.brief(found, session_id=session_id, repository=loaded.repository, mcp_tools=mcp_tools)


def session_end(loaded: configuration.Config, payload: dict, agent: str) -> None:
    """Archives what the session said since its last savepoint, so a session that never
    compacts is kept too, whatever point the agent cuts the hook at (Codex CLI gives SessionEnd
    3 s, Claude Code 5 s, and a long session's first savepoint takes longer): the savepoint is
    queued first (a small, stamped entry), the worker started, and only then written here when
    it fits in the event's timeout (config/hook_timeouts.writes_in_time) and the index lock is
    free at once; else the worker writes it. Whoever takes the index lock first writes it, once
    (snapshot.write_entry). Layers 2 and 3 in the worker."""
    if not loaded.session_end:
        return
    from precompact.local import capture, snapshot
    from precompact.transcript import conversation

    if agent in (agent_names.CODEX, agent_names.GEMINI) and _text(payload, "transcript_path"):
        _session_end_unread(loaded, payload, agent)
        return
    with _reading_session(payload, loaded, capture.SESSION_END_TRIGGER, agent) as (session, _):
        if not session.transcript_path or conversation.last_said(Path(session.transcript_path)) is None:
            return  # nothing said: nothing to archive
        if _unchanged_savepoint(loaded, session) is not None:
            return
        settings = layer_1(loaded)
        name = snapshot.queue(settings, session, reason=None)
        started = _start_worker(loaded, payload)
        event = _text(payload, "hook_event_name") or "SessionEnd"
        if started and not hook_timeouts.writes_in_time(agent, event, _unsaved_bytes(loaded, session)):
            return  # the worker writes it: here, the agent would cut it short
        # SessionEnd tries the lock once (config/hook_timeouts.QUEUE_AT_ONCE): its timeout is the
        # tightest. Held (other saves, or the worker took the entry already), the worker writes it.
        with contextlib.suppress(savepoint_log.LockTimeout):
            snapshot.write_entry(settings, name, _lock_wait(payload, agent), capture.holder)


def _session_end_unread(loaded: configuration.Config, payload: dict, agent: str) -> None:
    """SessionEnd of Codex CLI or Gemini CLI: the session file is queued unread (its identity, size
    and last bytes: local/snapshot.queue_unread) and the worker started, which reads it into the
    document and writes the savepoint. Reading a long session before queueing took longer than
    Codex's 3 s under load, and a hook cut before it queued lost the session's end
    (docs/performance.md, "SessionEnd of Codex and Gemini"). As Claude Code's SessionEnd, the
    hook then writes it itself only when its reading and saving fit in the event's timeout
    (config/hook_timeouts.SESSION_FILE_BYTE_COST) or no worker could start: a cut there loses
    nothing, the entry being queued."""
    from precompact.local import capture, snapshot

    given = _text(payload, "transcript_path")
    assert given is not None
    _refuse_non_file(given)
    session = snapshot.Session(
        session_id=_text(payload, "session_id"),
        transcript_path=None,
        cwd=_text(payload, "cwd") or str(loaded.root),
        trigger=capture.SESSION_END_TRIGGER,
        agent=agent,
        agent_transcript=given,
    )
    settings = layer_1(loaded)
    try:
        name = snapshot.queue_unread(settings, session)
    except PrecompactError as e:  # the session file gone, or not one a reader opens
        raise NoTranscript(f"{e}; nothing of the session was queued") from None
    started = _start_worker(loaded, payload)
    event = _text(payload, "hook_event_name") or "SessionEnd"
    unread = hook_timeouts.SESSION_FILE_BYTE_COST * _size(given)
    if started and not hook_timeouts.writes_in_time(agent, event, unread):
        return  # the worker reads and writes it: here, the agent would cut it short
    with contextlib.suppress(savepoint_log.LockTimeout):
        snapshot.write_entry(settings, name, _lock_wait(payload, agent), capture.holder)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _unsaved_bytes(loaded: configuration.Config, session: snapshot.Session) -> int:
    """How much of the session's transcript its savepoints have not read: what a savepoint of it
    reads (the read position goes on from the latest's end; local/read_position.py)."""
    try:
        size = os.stat(str(session.transcript_path)).st_size
    except OSError:
        return 0
    mine = [s for s in savepoint_log.savepoints(loaded.logs, loaded.instance) if s.session_id == session.session_id]
    read = mine[-1].transcript_end if mine else None
    return size - read if read is not None and read <= size else size


def _start_worker(loaded: configuration.Config, payload: dict) -> bool:
    """Starts the background worker (Layers 2 and 3, recall, addenda); False when it could not
    start (a link as its log, no process to spare), the failure logged: what the hook saved
    stays saved, and waits for the worker's next run or `precompact flush`."""
    # Imported late: spawning needs only the module, not the layers it will run.
    from precompact.ops import background

    try:
        background.spawn(loaded.root)
    except OSError as e:
        log_failure(
            loaded.root,
            _text(payload, "hook_event_name") or "hook",
            f"{WORKER_NOT_STARTED}, and Layers 2 and 3 wait "
            f"for the worker's next run (`precompact flush` runs them now): {quoting.os_error(e)}",
        )
        return False
    return True


def failure_reason(error: Exception, root: Path | None = None) -> str:
    """A failure in one line, redacted: the message of an error that explains itself, else
    its repr. One line whatever a message holds (PreCompact's stdout, where it goes, is the
    summariser's prompt): its owner quotes each outside value in it (`quoting.inline`), and a
    line boundary one still let through cannot start a line of its own here."""
    from precompact.boundary import logs_dir
    from precompact.transcript.redact import Redactor

    if root is not None and _refused_by_logs(error) and not isinstance(error, logs_dir.ConfinementError):
        return _logs_refusal(root, error)  # type: ignore[arg-type]
    said = Redactor().redact(
        str(error) if isinstance(error, (PrecompactError, OSError, savepoint_log.LockTimeout)) else repr(error)
    )
    # A message of several lines keeps them told apart; single_line then catches what splitlines'
    # boundaries (U+2028 and the like) the strip left.
    return quoting.single_line(" | ".join(part.strip() for part in said.splitlines() if part.strip()))


def log_failure(root: Path, event, reason: str, notice: bool = False) -> str | None:
    """Appends the failure being handled to the project's error log, and says where it is kept:
    `logs/precompact-errors.log`, or KEPT_IN_STATE when logs/ refused it; None when the user never
    approved that project's configuration (a file in a shared directory, someone else's:
    nothing is written there) or nothing could be written. A `notice` (something refused or
    ignored that stops no save) is marked as one, so it is never said as a save that did not
    complete."""
    import traceback

    from precompact.boundary import logs_dir, terminal
    from precompact.config import approval as config_trust
    from precompact.transcript.redact import Redactor

    error = sys.exc_info()[1]  # the error being handled (before _placed reads the index)
    # A notice never stands: it needs no place among the savepoints.
    placed = "" if notice else _placed(root / "logs")
    said = f"{savepoint_log.utc_timestamp()} {placed}{event}{NOTICE_MARK if notice else ''}: {_one_line(reason)}"
    line = said
    try:
        if config_trust.approval(root / configuration.CONFIG_NAME) is None:
            return None
        logs = root / "logs"
        # A PrecompactError's line says what to fix; anything else keeps its traceback, elsewhere.
        # Both logs are read in a terminal (`tail`, `cat`): what a terminal would act on in a
        # part its composer left bare (a path, the event's name) is shown, as `echo` shows it.
        if error is not None and not isinstance(error, PrecompactError):
            fd = logs_dir.open_file(logs, DEBUG_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            with os.fdopen(fd, "a") as f:
                f.write(terminal.sanitise(Redactor().redact(f"{line}\n{traceback.format_exc()}\n")))
            line += f" (traceback in logs/{DEBUG_LOG})"
        fd = logs_dir.open_file(logs, ERRORS_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        with os.fdopen(fd, "a") as f:
            f.write(terminal.sanitise(Redactor().redact(line)) + "\n")
    except configuration.ConfigError:
        return None
    except OSError as e:
        # logs/ refused it (read-only, full, not ours): kept in the state directory instead.
        return KEPT_IN_STATE if _keep_unlogged(root, said, e) else None
    return f"logs/{ERRORS_LOG}"


def _placed(logs: Path) -> str:
    """Where a failure logged now stands among the savepoints, in the index's order (what was
    written after what; no clock, which may be set back, or tell two writes of one second
    apart): after the newest one written, named by its hash; "" when the index cannot be read
    or states no hash (the line is then placed by its stamp, as an older version's)."""
    try:
        written = savepoint_log.savepoints(logs)
    except Exception:  # noqa: BLE001 - the failure being logged may be this very read's: it is logged, unplaced
        return ""
    if not written:
        return "[before any savepoint] "
    newest = written[-1]
    if not _SNAPSHOT_HASH.fullmatch(newest.snapshot_hash):
        return ""
    return f"[after savepoint {newest.sequence}, sha256:{newest.snapshot_hash[:12]}] "


def _unlogged_path(root: Path) -> Path:
    """The state directory's file of `root`'s failures logs/ could not take."""
    from precompact.boundary import private_file

    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:32]
    return private_file.state_directory() / f"{UNLOGGED_PREFIX}{digest}.log"


def _keep_unlogged(root: Path, line: str, refused: OSError) -> bool:
    """`line` kept in the state directory, with why logs/ refused it; False when that fails too."""
    from precompact.boundary import private_file, terminal
    from precompact.transcript.redact import Redactor

    path = _unlogged_path(root)
    said = terminal.sanitise(Redactor().redact(f"{line} (logs/ did not take it: {_logs_refusal(root, refused)})"))
    try:
        kept = _unlogged_lines(path)
        private_file.make_directory(path.parent)
        private_file.replace(path, "\n".join([*kept, said][-UNLOGGED_KEPT:]).encode() + b"\n")
    except OSError:
        return False
    return True


def _unlogged_lines(path: Path) -> list[str]:
    from precompact.boundary import small_file

    try:
        data, _ = small_file.read(path, ERRORS_TAIL_BYTES, follow_links=False)
    except FileNotFoundError:
        return []
    return data.decode("utf-8", "replace").splitlines()


def _refused_by_logs(error: Exception) -> bool:
    """Whether `error` is logs/'s filesystem refusing a write: out of space, or read-only or
    denied on a name opened relative to logs/ (no absolute path: a transcript's is one)."""
    if not isinstance(error, OSError):
        return False
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    relative = error.filename is None or not os.path.isabs(os.fsdecode(error.filename))
    return error.errno in (errno.EROFS, errno.EACCES, errno.EPERM) and relative


def _logs_refusal(root: Path, error: OSError) -> str:
    """Why logs/ cannot be written, naming it and the fix when the cause is the filesystem's."""
    logs = quoting.path(root / "logs")
    if error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"logs/ ({logs}) cannot be written: {quoting.os_error(error)}; make it writable, then run `precompact savepoint`"
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"logs/ ({logs}) cannot be written: {quoting.os_error(error)}; free space on its disk, then run `precompact savepoint`"
    return quoting.os_error(error)


class StandingFailures(Record, frozen=True):
    """The failures logged since the project's newest savepoint was written: a hook's save that
    failed, a worker that could not start (never a notice); `newest` is the newest line as logged
    (outside text: quoted wherever it is shown)."""

    count: int
    newest: str
    kept_in: tuple[str, ...]  # the files that hold them all

    def said(self) -> str:
        return f"{self.count} failure(s) logged since the newest savepoint was written; newest: {quoting.inline(self.newest)}"

    def fix(self) -> str:
        return (
            "do what it names, then run `precompact savepoint` (every line is in "
            + " and ".join(self.kept_in)
            + ": with nothing left to do, remove it)"
        )


def standing_failures(loaded: configuration.Config) -> StandingFailures | None:
    """The failures logged (in logs/ERRORS_LOG, or the state directory's file when logs/ could
    not take them) since this instance's newest savepoint was written, in the index's order
    (`_placed`); None when there are none."""
    from precompact.boundary import logs_dir

    logged: list[_Logged] = []
    kept_in: list[str] = []
    unreadable: _Logged | None = None
    try:
        fd = logs_dir.open_file(loaded.logs, ERRORS_LOG, os.O_RDONLY)
        with os.fdopen(fd, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            f.seek(max(0, size - ERRORS_TAIL_BYTES))
            tail = f.read(ERRORS_TAIL_BYTES)
        logged += _logged(tail.decode("utf-8", "replace"))
        kept_in.append(f"logs/{ERRORS_LOG}")
    except FileNotFoundError:
        pass
    except OSError as e:  # a link in its place, say: that it cannot be read is the failure said
        now, said = savepoint_log.utc_timestamp(), f"logs/{ERRORS_LOG} cannot be read: {quoting.os_error(e)}"
        unreadable = _Logged(now, None, False, said, f"{now} {said}")
    unlogged = _unlogged_path(loaded.root)
    unlogged_lines = _logged("\n".join(_unlogged_lines(unlogged)))
    if unlogged_lines:
        kept_in.append(quoting.path(unlogged))
    written = savepoint_log.savepoints(loaded.logs)  # every instance's, in the order written
    place = {s.snapshot_hash[:12]: i for i, s in enumerate(written)}
    mine = [i for i, s in enumerate(written) if s.instance == loaded.instance]
    newest = mine[-1] if mine else -1
    since = (written[newest].timestamp or "") if mine else ""

    def where(entry: _Logged) -> int | None:
        """The index position of the savepoint `entry` was logged after (-1: before any); None
        for a line placed by its stamp: an older version's, or of a savepoint this index lacks
        (a logs/ restored or copied)."""
        return -1 if entry.first else place.get(entry.after) if entry.after else None

    def stands(entry: _Logged) -> bool:
        if _NOTICE_LINE.match(entry.text):
            return False
        after = where(entry)
        if after is not None:
            return after >= newest
        # By its stamp, of whole seconds: a failure of the savepoint's own second is one that
        # savepoint put behind it, unless it is the worker that could not start after it.
        return entry.stamp > since or (entry.stamp == since and f": {WORKER_NOT_STARTED}" in entry.text)

    def order(entry: _Logged) -> int:
        after = where(entry)
        return newest if after is None else after

    # The newest last: by where each stands among the savepoints, then in the order written (the
    # state directory's before logs/'s: logs/ took writes again after refusing them).
    standing = sorted((entry for entry in unlogged_lines + logged if stands(entry)), key=order)
    if unreadable is not None:
        standing.append(unreadable)
    if not standing:
        return None
    return StandingFailures(count=len(standing), newest=standing[-1].line, kept_in=tuple(kept_in))


def standing_failure_line(loaded: configuration.Config) -> str | None:
    """While a failure stands, the line a session start gives before its brief, to the model and
    to the user (restore/brief's fixed words: the log's lines are outside text); None when none
    stands."""
    from precompact.restore import brief as restore_brief

    return None if standing_failures(loaded) is None else restore_brief.FAILURE_STANDS


def session_start_context(loaded: configuration.Config, payload: dict, agent: str, after_failure: bool) -> str | None:
    """SessionStart's context: the restore brief the session gets, once (None: none), recorded
    as given; with `after_failure` (a failure stands: `standing_failure_line`), that line first
    and the brief within what `[hooks] brief_budget` leaves after it."""
    from precompact.restore import brief as restore_brief

    brief = deliver(loaded, session_start(loaded, payload, agent), after_failure=after_failure)
    return restore_brief.after_failure_line(brief) if after_failure else brief


class _Logged(Record, frozen=True):
    """An errors-log line read back: its stamp, where it stands (`_placed`: the 12 hex digits of
    the savepoint's hash it was logged after, `first` before any; neither for an older
    version's line), its event and reason, and the line whole (outside text, as `text`)."""

    stamp: str
    after: str | None
    first: bool
    text: str
    line: str


def _logged(text: str) -> list[_Logged]:
    return [
        _Logged(m["stamp"], m["after"], m["first"] is not None, m["text"], line)
        for line in text.splitlines()
        if (m := _LOGGED_LINE.fullmatch(line))
    ]


def _one_line(text: str) -> str:
    """`text` on one line: its lines joined by " | " (an error's message may hold several)."""
    return " | ".join(part.strip() for part in text.splitlines() if part.strip())


@contextlib.contextmanager
def _reading_session(
    payload: dict, loaded: configuration.Config, trigger: str, agent: str
) -> Iterator[tuple[snapshot.Session, agents.Read | None]]:
    """The session the payload names, its session file read into the document the snapshot
    reads (`_document`; OSError when that file cannot be read), for the block's length (a
    forgotten project's document lasts no longer). Every event that saves from a session file
    comes here first (`_summary_arrived` checks the one it reads itself): NoTranscript when it
    is none (`_refuse_non_file`)."""
    from precompact.local import snapshot

    given = _text(payload, "transcript_path")
    if given:
        _refuse_non_file(given)
    with _document(loaded, agent, given, _text(payload, "session_id")) if given else contextlib.nullcontext() as read:
        yield (
            snapshot.Session(
                session_id=_text(payload, "session_id"),
                transcript_path=read.transcript_path if read else None,
                cwd=_text(payload, "cwd") or str(loaded.root),
                trigger=trigger,
                custom_instructions=_text(payload, "custom_instructions"),
                agent=agent,
                agent_version=read.version if read else None,
                agent_transcript=given if agent != agent_names.CLAUDE else None,
            ),
            read,
        )


def _document(
    loaded: configuration.Config, agent: str, given: str, session_id: str | None
) -> contextlib.AbstractContextManager[agents.Read]:
    """The document of the session file `given` (transcript/agents.reading): kept in
    precompact's state directory, except for a project forgotten on this machine, whose
    savepoints keep nothing outside it (local/registry.keeps_outside): there it lasts the block."""
    from precompact.transcript import agents

    if agent == agent_names.CLAUDE:  # its transcript is the document: nothing is written
        return agents.reading(agent, loaded.logs, given, session_id, kept=True)
    from precompact.local import registry

    return agents.reading(agent, loaded.logs, given, session_id, kept=registry.keeps_outside(loaded.root))


def _unchanged_savepoint(loaded: configuration.Config, session: snapshot.Session) -> savepoint_log.Savepoint | None:
    """The session's latest savepoint, if the transcript has said nothing since it was made
    (capture.holding: a hook's rule). A session with none is not read at all."""
    if not session.session_id or not session.transcript_path:
        return None
    from precompact.local import capture
    from precompact.transcript import conversation

    saved = savepoint_log.savepoints(loaded.logs, loaded.instance)
    if not capture.of_session(saved, session.session_id):
        return None
    return capture.holding(saved, session.session_id, conversation.last_said(Path(session.transcript_path)))


def _archived_savepoint(loaded: configuration.Config, session: snapshot.Session) -> savepoint_log.Savepoint | None:
    """The savepoint that archives the session as its transcript is now (capture.archived:
    `import`'s rule, which `precompact savepoint` follows)."""
    if not session.session_id or not session.transcript_path:
        return None
    from precompact.local import capture
    from precompact.transcript import conversation

    transcript = Path(session.transcript_path)
    saved = savepoint_log.savepoints(loaded.logs, loaded.instance)
    return capture.archived(saved, session.session_id, session.agent, conversation.last_said(transcript), transcript)


def _compact_note(loaded: configuration.Config, sequence: int, sha256: str, lines_in_part: int | None) -> str:
    """The configured note for the summariser, its placeholders filled with fixed words and
    numbers (no transcript text: it becomes part of the summariser's prompt). "Full" only when
    every transcript line was saved whole (none for a note of the user's own); a note without
    {transcript} is followed by what was not saved whole."""
    if not loaded.compact_note:
        return ""
    savepoint = f"savepoint {sequence} (sha256:{sha256[:12]})"
    if lines_in_part is None:  # an index line written before it was recorded: no claim either way
        return _configured_note(loaded, savepoint, "pre-compaction transcript")
    if lines_in_part == 0:
        return _configured_note(loaded, savepoint, "full pre-compaction transcript")
    note = loaded.compact_note.replace("{savepoint}", savepoint)
    in_part = (
        f"{lines_in_part} transcript line{'s' if lines_in_part > 1 else ''} saved only in part (a malformed "
        "or overlong line is kept as at most its first MiB of text, one still being written not at all): "
        "recall will not find the rest of them"
    )
    if "{transcript}" in note:
        return note.replace("{transcript}", f"pre-compaction transcript, but for {in_part},")
    return f"{note} ({in_part}.)"


def _configured_note(loaded: configuration.Config, savepoint: str, transcript: str) -> str:
    """The configured note with its placeholders filled with `savepoint` and `transcript`."""
    return loaded.compact_note.replace("{savepoint}", savepoint).replace("{transcript}", transcript)


def _recover(payload: dict, loaded: configuration.Config, agent: str, until: float) -> tuple[str | None, str | None]:
    """After a compaction: the savepoint of what it dropped, if no savepoint holds it yet
    (PreCompact did not fire, or read a transcript that lagged). Layer 1 here (or queued for the
    worker when the index lock stays busy past `until`), the rest in the worker. Returns the
    compaction summary the session file holds (None: none, or not read), and what
    `capture.recover` did (None: nothing was missing)."""
    from precompact.local import capture, snapshot

    with contextlib.ExitStack() as reading:
        try:
            session, read = reading.enter_context(_reading_session(payload, loaded, capture.RECOVERED_TRIGGER, agent))
        except NoTranscript as e:  # nothing to recover from: the summary is kept, the brief given
            log_failure(loaded.root, _text(payload, "hook_event_name") or "hook", str(e))
            return None, None
        summary = read.summary if read else None
        try:
            recovered = capture.recover(layer_1(loaded), session, lock_wait_left(until))
        except snapshot.Unvouched as e:  # said in the error log; the session start still gets its brief
            log_failure(loaded.root, _text(payload, "hook_event_name") or "hook", str(e))
            return summary, None
    if recovered is not None:
        _start_worker(loaded, payload)
    return summary, recovered


def _brief_delivered(index: savepoint_log.IndexRead, instance: str, sequence: int, session_id: str) -> bool:
    """Whether `session_id` was already given the brief of `instance`'s savepoint `sequence`."""
    return any(delivery.sequence == sequence for delivery in index.deliveries(instance, session_id))


def _trigger(payload: dict) -> str:
    """What asked for the compaction, of the words the agents send (`manual`: the user's /compact
    or /compress; `auto`: a full context window); any other value, or none, is kept as `auto`: the
    hook fired for a compaction the user did not ask for by name, and the agent's own text is never
    stored where precompact's lines print it."""
    from precompact.local import capture

    trigger = payload.get("trigger")
    return trigger if trigger in capture.COMPACTION_TRIGGERS else "auto"


def _text(payload: dict, key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) else None
