"""The second part of what a compacted session is given: what the compaction summary left out,
computed by the worker once the summary is known, kept pending for the session, and given once,
at its next prompt or tool call (docs/sessions.md).

Claude Code writes the summary only after SessionStart(`compact`), so the brief given there
cannot know it; PostCompact has it but cannot add context, and comparing a large savepoint with
it takes the worker tens of seconds. So each compaction leaves files in
`logs/precompact-pending/`, named by the session (config/discovery.py names them; the hook's
entry looks for the three it acts on with three stats, before importing anything):

- `<session>.awaiting`: SessionStart(`compact`) saw a compaction whose summary is not recorded
  yet, and gave the first part after a standing failure's line or not. PostCompact replaces it;
  where PostCompact did not run, the next prompt or tool call reads the summary from the session
  file and replaces it (ops/compaction.py).
- `<session>.request`: the summary is recorded (with what the awaiting file said of the failure's
  line: the second part leaves it room unless the first part went without it); the worker is to
  compute the addendum (it claims
  the file first, renamed `.computing`). The addendum computed replaces the claim's request
  (written whole), then the claim is renamed `.json`: the addendum exists in one file at a time,
  so no kill makes it given twice. A `.computing` the worker finds when it starts is a killed
  worker's (it holds the project's worker lock): holding the addendum, it is renamed `.json` (its
  session was given nothing of it); holding the request, it is asked again once, dropped with a
  logged line the second time, so a request that always kills its worker cannot loop.
- `<session>.json`: the addendum, rendered and within the budget, stamped with this machine's key
  (local/provenance.py: a file that came with the project is never given to the model); the
  first prompt or tool call takes it (logs_dir.take_once: locked, renamed `.delivering`, read,
  removed, then given), so two events racing give it once.
- `<session>.delivering`: an addendum being given, or left by a process killed before it gave it
  (the kernel dropped its lock): the next prompt or tool call gives it, once. OpenCode keeps none of what precompact's plugin adds to a request, so its
  addendum is read, not claimed, each time the plugin asks, until the next compaction's
  SessionStart removes it.
- `<session>.brief`: SessionStart(`compact`) could not give the compaction's brief, its
  savepoint still queued (the index busy past its wait): the session was told so in fixed words,
  and owes it the brief. The first prompt or tool call after the savepoint is written takes the
  file (logs_dir.take_once, so two events racing give it once) and gives the brief's first part,
  with the addendum when that is ready too (ops/compaction.py). Stamped like the addendum; kept
  at most OWED_SECONDS, then dropped with a logged line: by the session's next prompt or tool
  call, or, where none comes (the session ended, or was resumed under another session id), by
  the worker (`_sweep_owed`), so the directory never grows with them.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

from precompact.boundary import logs_dir, quoting
from precompact.config import discovery
from precompact.config import settings as configuration
from precompact.local import provenance
from precompact.records import Record
from precompact.transcript import agent_names

if TYPE_CHECKING:
    from precompact.restore.resurrect import Resurrection

REQUEST_SUFFIX = ".request"
COMPUTING_SUFFIX = ".computing"
# Set in a request a killed worker left claimed and the next worker asked again: killed again,
# it is dropped.
ASKED_AGAIN = "asked_again"
STAMP_PURPOSE = "precompact/addendum/v1"
# In an awaiting file and a request: whether SessionStart gave the first part after a standing
# failure's line (null in a request: not known, the summary came first).
AFTER_FAILURE = "after_failure"
SESSION_FILE = "the summary entry in the session file, read after the compaction (PostCompact did not run)"
# An addendum is at most the budget (under 10,000 characters, each at most 6 bytes in its JSON).
MAX_READY_BYTES = 64 << 10
# The summary a request carries (read from the session file where PostCompact did not record
# one) is cut to this many characters; Claude Code's run to tens of KB. A request's JSON holds
# each at most 12 bytes (an escaped surrogate pair), beside its few short fields.
MAX_SUMMARY_CHARS = 256 << 10
MAX_REQUEST_BYTES = 12 * MAX_SUMMARY_CHARS + (4 << 10)
OWED_PURPOSE = "precompact/owed-brief/v1"
OWED_TAKING_SUFFIX = ".brief-taking"
MAX_OWED_BYTES = 4 << 10
# How long a brief stays owed: twice the longest the worker waits for the index lock at one
# queue entry (local/snapshot.QUEUED_LOCK_TIMEOUT_SECONDS). A savepoint still queued by then is
# one whose entry fails (`precompact status` names it), not one waiting its turn, and each prompt
# or tool call until then reads the index and the queue to know.
OWED_SECONDS = 1200.0


def _name(stem: str, suffix: str) -> str:
    return f"{discovery.PENDING_DIR}/{stem}{suffix}"


def _read(logs: Path, name: str) -> dict | None:
    """A pending file's JSON object (a request, or the compaction a session awaits); None when
    it is absent, refused or not of that shape."""
    try:
        found = json.loads(logs_dir.read_bytes(logs, name, limit=MAX_REQUEST_BYTES))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _sequence(logs: Path, name: str) -> int | None:
    found = _read(logs, name)
    sequence = found.get("sequence") if found else None
    return sequence if isinstance(sequence, int) else None


def await_summary(loaded: configuration.Config, session_id: str | None, sequence: int, after_failure: bool) -> None:
    """SessionStart(`compact`) of savepoint `sequence`: unless its summary is already recorded
    (Codex runs PostCompact first), the session waits for it, noting whether the first part went
    after a standing failure's line (`after_failure`: the request carries it to the worker, whose
    second part leaves that line room only then); an addendum of an earlier compaction not yet
    given is dropped (ready, or left by a killed worker or delivering event)."""
    stem = discovery.pending_name(session_id)
    if stem is None:
        return
    logs = loaded.logs
    computing = _name(stem, COMPUTING_SUFFIX)
    made = _drop_made_before(logs, stem, sequence)
    if sequence in (*made, _sequence(logs, _name(stem, REQUEST_SUFFIX)), _sequence(logs, computing)):
        return
    awaiting = {"sequence": sequence, AFTER_FAILURE: after_failure}
    logs_dir.write_atomic(logs, _name(stem, discovery.AWAITING_SUFFIX), json.dumps(awaiting).encode())


def _drop_made_before(logs: Path, stem: str, sequence: int) -> list[int | None]:
    """Removes the session's addenda of savepoints before `sequence` (an earlier compaction's:
    ready, or left by a killed worker or delivering event); the sequences of those it found."""
    made = []
    for holder in (
        _name(stem, discovery.READY_SUFFIX),
        _name(stem, discovery.DELIVERING_SUFFIX),
        _name(stem, COMPUTING_SUFFIX),
    ):
        held = _stamped_sequence(logs, holder)
        if held is not None and held < sequence:
            logs_dir.remove(logs, holder)
        made.append(held)
    return made


def drop_earlier(loaded: configuration.Config, session_id: str | None, sequence: int) -> None:
    """Removes the session's addenda of savepoints before `sequence` not given yet: an earlier
    compaction's, made while the brief of `sequence` was owed."""
    stem = discovery.pending_name(session_id)
    if stem is not None:
        _drop_made_before(loaded.logs, stem, sequence)


def owe_brief(loaded: configuration.Config, session_id: str | None, source: str, newest: int, now: float) -> bool:
    """SessionStart `source` told the session its compaction's savepoint is queued: the session
    is owed that savepoint's brief, from `now` (time.time()). `newest`, the index's newest
    sequence then: the savepoint to come is later, so an addendum of an earlier compaction not
    yet given is dropped, as a compaction's SessionStart drops it. False for a session id no
    pending file can be named by."""
    stem = discovery.pending_name(session_id)
    if stem is None:
        return False
    _drop_made_before(loaded.logs, stem, newest + 1)
    record = json.dumps({"session_id": stem, "source": source, "since": now}).encode()
    logs_dir.write_atomic(loaded.logs, _name(stem, discovery.OWED_SUFFIX), provenance.stamped(OWED_PURPOSE, record))
    return True


class OwedBrief(Record, frozen=True):
    """A brief a session start owes its session (`owe_brief`): at which start (`source`), since
    when (time.time())."""

    source: str
    since: float


def owed_brief(loaded: configuration.Config, session_id: object) -> OwedBrief | None:
    """The brief the session is owed, if this machine stamped the file for it (one that is not
    is removed: never acted on)."""
    stem = discovery.pending_name(session_id)
    if stem is None:
        return None
    name = _name(stem, discovery.OWED_SUFFIX)
    try:
        stored = logs_dir.read_bytes(loaded.logs, name, limit=MAX_OWED_BYTES)
    except FileNotFoundError:
        return None
    except OSError:  # a link, a FIFO, oversized: not a file precompact wrote
        logs_dir.remove(loaded.logs, name)
        return None
    owed = _owed_record(stored, stem)
    if owed is None:
        logs_dir.remove(loaded.logs, name)
    return owed


def _owed_record(stored: bytes, stem: str) -> OwedBrief | None:
    """The owed brief in a `.brief` file's bytes, if this machine stamped it for session `stem`."""
    record = provenance.made_here(OWED_PURPOSE, stored)
    found = None
    with contextlib.suppress(ValueError):
        found = json.loads(record) if record is not None else None
    if (
        not isinstance(found, dict)
        or found.get("session_id") != stem
        or not isinstance(found.get("source"), str)
        or not isinstance(found.get("since"), int | float)
    ):
        return None
    return OwedBrief(source=found["source"], since=float(found["since"]))


def _sweep_owed(loaded: configuration.Config, now: float) -> list[str]:
    """Removes the owed briefs no event will give (the worker, which owns this directory's
    upkeep): each owed OWED_SECONDS ago or longer (its session sent no prompt or tool call since,
    or was resumed under another session id, whose start owes the brief under that id), and each
    this machine did not stamp. Each under the lock its takers take (logs_dir.take_once): one an
    event is giving now is left to it. A line for each owed one removed."""
    notes = []
    for leaf in sorted(logs_dir.names_in(loaded.logs, discovery.PENDING_DIR)):
        stem = leaf.removesuffix(discovery.OWED_SUFFIX).removesuffix(OWED_TAKING_SUFFIX)
        if stem == leaf or discovery.pending_name(stem) is None:
            continue
        name = _name(stem, leaf[len(stem) :])
        try:
            stored = logs_dir.read_bytes(loaded.logs, name, limit=MAX_OWED_BYTES)
        except FileNotFoundError:
            continue  # given meanwhile
        except OSError:  # a link, a FIFO, oversized: not a file precompact wrote
            logs_dir.remove(loaded.logs, name)
            continue
        owed = _owed_record(stored, stem)
        if owed is not None and now - owed.since < OWED_SECONDS:
            continue
        try:
            taken = logs_dir.take_once(loaded.logs, name, name, limit=MAX_OWED_BYTES)
        except logs_dir.ConfinementError:
            logs_dir.remove(loaded.logs, name)
            continue
        if taken is not None and taken != stored:
            # A session start owed the brief anew between the read and the take: it stays owed.
            logs_dir.write_atomic(loaded.logs, _name(stem, discovery.OWED_SUFFIX), taken)
        elif taken is not None and owed is not None:
            notes.append(
                f"the brief owed to session {stem} since its {quoting.inline(owed.source)} start was never given: "
                f"no prompt or tool call of that session came within {OWED_SECONDS / 60:.0f} minutes of it; removed"
            )
    return notes


def settle_brief(loaded: configuration.Config, session_id: object) -> bool:
    """Takes the session's owed brief, to be given now: True for exactly one of the events
    racing for it (False: none owed, or another event is taking it)."""
    stem = discovery.pending_name(session_id)
    if stem is None:
        return False
    try:
        taken = logs_dir.take_once(
            loaded.logs, _name(stem, discovery.OWED_SUFFIX), _name(stem, OWED_TAKING_SUFFIX), limit=MAX_OWED_BYTES
        )
    except logs_dir.ConfinementError:
        return False
    return taken is not None


def forget_brief(loaded: configuration.Config, session_id: object) -> None:
    """The session is owed its brief no more (it waited past OWED_SECONDS)."""
    stem = discovery.pending_name(session_id)
    if stem is not None:
        logs_dir.remove(loaded.logs, _name(stem, discovery.OWED_SUFFIX))


def request(
    loaded: configuration.Config, session_id: str | None, sequence: int, agent: str, summary: str | None = None
) -> bool:
    """The summary of savepoint `sequence` is known: the worker is asked for the addendum (the
    caller starts it). `summary` is the one read from the session file where PostCompact did not
    record one (None: the recorded one), compared in its first MAX_SUMMARY_CHARS characters. It
    is the session's newest compaction's: an addendum of this savepoint or an earlier one not
    given yet (an earlier summary's) is dropped, and the request replaces one not computed yet.
    False, nothing asked, for a session id no pending file can be named by, and for an earlier
    compaction's summary recorded late (a later savepoint's summary is awaited, asked for or
    made already): what it left out is not the session's state any more."""
    stem = discovery.pending_name(session_id)
    if stem is None or _later_pending(loaded.logs, stem, sequence):
        return False
    _drop_made_before(loaded.logs, stem, sequence + 1)
    if summary is not None:
        summary = summary[:MAX_SUMMARY_CHARS]
    awaited = _read(loaded.logs, _name(stem, discovery.AWAITING_SUFFIX)) or {}
    # Unknown (None) where the session start has not given the first part yet (Codex runs
    # PostCompact first): the worker then leaves the line room, as if it had gone before it.
    after_failure = awaited.get(AFTER_FAILURE) if awaited.get("sequence") == sequence else None
    record = {
        "session_id": session_id,
        "sequence": sequence,
        "agent": agent,
        "summary": summary,
        AFTER_FAILURE: after_failure if isinstance(after_failure, bool) else None,
    }
    logs_dir.write_atomic(loaded.logs, _name(stem, REQUEST_SUFFIX), json.dumps(record).encode())
    logs_dir.remove(loaded.logs, _name(stem, discovery.AWAITING_SUFFIX))
    return True


def _later_pending(logs: Path, stem: str, sequence: int) -> bool:
    """Whether the session awaits, has asked for or has made the addendum of a savepoint after
    `sequence`."""
    pending = [
        _sequence(logs, _name(stem, discovery.AWAITING_SUFFIX)),
        _sequence(logs, _name(stem, REQUEST_SUFFIX)),
        _sequence(logs, _name(stem, COMPUTING_SUFFIX)),
        *(
            _stamped_sequence(logs, _name(stem, suffix))
            for suffix in (discovery.READY_SUFFIX, discovery.DELIVERING_SUFFIX, COMPUTING_SUFFIX)
        ),
    ]
    return any(held is not None and held > sequence for held in pending)


def requested(loaded: configuration.Config) -> bool:
    """Whether an addendum is asked for and not being computed (the worker goes round again)."""
    return bool(_requests(loaded))


def _requests(loaded: configuration.Config) -> list[str]:
    """The sessions an addendum is asked for; a file of another name there is not a request."""
    names = logs_dir.names_in(loaded.logs, discovery.PENDING_DIR)
    stems = [name.removesuffix(REQUEST_SUFFIX) for name in sorted(names) if name.endswith(REQUEST_SUFFIX)]
    return [stem for stem in stems if discovery.pending_name(stem) is not None]


def _take_back_killed_claims(loaded: configuration.Config) -> list[str]:
    """Each `.computing` a killed worker left (the caller holds the project's worker lock, so no
    live worker has one): one holding its addendum made ready; one holding its request asked for
    again once, or dropped: the request was asked again already, or a request made since
    replaces it. One line each of what was done."""
    names = set(logs_dir.names_in(loaded.logs, discovery.PENDING_DIR))
    notes = []
    for name in sorted(names):
        stem = name.removesuffix(COMPUTING_SUFFIX)
        if stem == name or discovery.pending_name(stem) is None:
            continue
        computing = _name(stem, COMPUTING_SUFFIX)
        asked = _read(loaded.logs, computing)
        if stem + REQUEST_SUFFIX in names:
            notes.append(
                f"addendum for session {stem}: a worker stopped while computing it; the newer request replaces it"
            )
        elif asked is None and _stamped_sequence(loaded.logs, computing) is not None:
            if logs_dir.claim(loaded.logs, computing, _name(stem, discovery.READY_SUFFIX)):
                notes.append(
                    f"addendum for session {stem}: a worker stopped after computing it, before making it ready; "
                    "ready now, for the session's next prompt or tool call"
                )
            continue
        elif asked is None:
            notes.append(f"addendum request {stem} is not one precompact wrote; removed")
        elif asked.get(ASKED_AGAIN) is True:
            sequence = asked.get("sequence")
            shows = f"`precompact dropped {sequence}`" if isinstance(sequence, int) else "`precompact dropped`"
            notes.append(
                f"addendum for session {stem} dropped: a worker stopped while computing it, twice; "
                f"{shows} lists what the summary left out"
            )
        else:
            record = json.dumps({**asked, ASKED_AGAIN: True}).encode()
            logs_dir.write_atomic(loaded.logs, _name(stem, REQUEST_SUFFIX), record)
            notes.append(f"addendum for session {stem}: a worker stopped while computing it; asked again")
        logs_dir.remove(loaded.logs, computing)
    return notes


def prepare(loaded: configuration.Config) -> list[str]:
    """The worker, holding the project's worker lock: every addendum asked for, computed and kept
    pending; what it has to say of those it could not make (one line each). Owed briefs no
    event will give are removed (`_sweep_owed`)."""
    notes = [*_sweep_owed(loaded, time.time()), *_take_back_killed_claims(loaded)]
    for stem in _requests(loaded):
        computing = _name(stem, COMPUTING_SUFFIX)
        if not logs_dir.claim(loaded.logs, _name(stem, REQUEST_SUFFIX), computing):
            continue
        try:
            asked = _read(loaded.logs, computing) or {}
            sequence, agent, summary = asked.get("sequence"), asked.get("agent"), asked.get("summary")
            after_failure = asked.get(AFTER_FAILURE)  # absent from an older version's request: unknown
            if (
                not isinstance(sequence, int)
                or asked.get("session_id") != stem
                or agent not in agent_names.NAMES
                or not isinstance(summary, str | None)
                or not isinstance(after_failure, bool | None)
            ):
                notes.append(f"addendum request {stem} is not one precompact wrote; removed")
                continue
            text = _compute(loaded, stem, sequence, agent, summary, after_failure is not False)
            if text is None or stem in _requests(loaded):
                continue  # nothing to add; or a newer summary was recorded meanwhile, whose request replaces this
            record = json.dumps({"session_id": stem, "sequence": sequence, "text": text}, ensure_ascii=False)
            # The claim becomes the ready file: killed between these two, the next worker finds
            # the addendum in the claim and makes it ready (never given twice, never lost).
            logs_dir.write_atomic(loaded.logs, computing, provenance.stamped(STAMP_PURPOSE, record.encode()))
            logs_dir.claim(loaded.logs, computing, _name(stem, discovery.READY_SUFFIX))
        except Exception as e:  # noqa: BLE001 -- one session's addendum never stops the others or the layers
            notes.append(f"addendum for session {stem} not computed: {quoting.inline(repr(e))}")
        finally:
            logs_dir.remove(loaded.logs, computing)
    return notes


def _compute(
    loaded: configuration.Config, session_id: str, sequence: int, agent: str, summary: str | None, after_failure: bool
) -> str | None:
    """The addendum of savepoint `sequence` for `session_id`, compared with `summary` (None: the
    one recorded), leaving a standing failure's line room where the first part went (or may
    have gone) after it (`after_failure`); None when there is nothing to add, no root vouches
    for the savepoint, or it is another session's."""
    from precompact.config import agent_settings
    from precompact.restore import resurrect as resurrection

    found = resurrection.from_this_machine(loaded, sequence=sequence)
    if not found.verified or found.savepoint.session_id != session_id:
        return None
    mcp_tools = agent_settings.mcp_installed(agent, loaded.root)
    return parts(loaded, found, session_id, mcp_tools, summary, after_failure)[1]


def parts(
    loaded: configuration.Config,
    found: Resurrection,
    session_id: str | None,
    mcp_tools: bool,
    summary: str | None = None,
    after_failure: bool = False,
) -> tuple[str, str | None]:
    """Both parts a compacted session of the savepoint `found` (checked, vouched for) is given:
    the SessionStart brief, and what the summary (`summary`, else the one `precompact dropped`
    finds) left out, within what the budget leaves after the first (None: nothing to add), and
    after a standing failure's line with `after_failure` (restore/brief.parts_budget)."""
    from precompact.local import capture
    from precompact.restore import brief as restore_brief
    from precompact.restore import dropped as dropping
    from precompact.restore import dropped_store
    from precompact.transcript import conversation

    budget = restore_brief.parts_budget(loaded.brief_budget, after_failure)
    first = restore_brief.compact_brief(found, budget, session_id=session_id, mcp_tools=mcp_tools)
    newest = conversation.recent(found.contents.newest_entries(), max_requests=1).requests
    if summary is not None:  # read from the session file: compared with the same history
        history = [entry for _, entry in found.contents.located_entries()]
        entries = history[: capture.before_compaction(found.savepoint, history)]
        facts, kept = dropping.dropped_facts(entries, dropping.Summary(summary, found.document.cwd))
        report = dropping.Dropped(
            found.instance, found.savepoint.sequence, summary, SESSION_FILE, facts, kept, len(entries)
        )
    else:  # the list the worker kept for this savepoint when its key holds, else made now
        report = dropped_store.of_resurrection(loaded, found)
    second = restore_brief.addendum(
        report,
        budget - len(first) - restore_brief.AGE_SLACK,
        newest[-1] if newest else None,
        mcp_tools,
    )
    return first, second


def as_given(loaded: configuration.Config, found: Resurrection) -> str:
    """`resurrect --format brief`: both parts as the savepoint's compacted session is given them,
    one after the other (the second computed here, as the worker computes it); of a savepoint
    no root vouches for, the one line a session is given instead, which quotes nothing of it."""
    from precompact.config import agent_settings
    from precompact.restore import brief as restore_brief

    if not found.copy_verified:
        return restore_brief.unvouched(found)
    first, second = parts(
        loaded, found, found.savepoint.session_id, agent_settings.mcp_installed("claude", loaded.root)
    )
    return first if second is None else f"{first}\n\n{second}"


def take(loaded: configuration.Config, session_id: object) -> str | None:
    """The session's addendum if one is ready, taken so that it is given once, or left by a
    delivering process killed before it gave it (None: none ready, one being given now, or one
    this machine did not write, which is removed)."""
    stem = discovery.pending_name(session_id)
    if stem is None:
        return None
    ready, delivering = _name(stem, discovery.READY_SUFFIX), _name(stem, discovery.DELIVERING_SUFFIX)
    try:
        stored = logs_dir.take_once(loaded.logs, ready, delivering, limit=MAX_READY_BYTES)
    except logs_dir.ConfinementError:  # not a file precompact wrote (a link, a FIFO, oversized)
        logs_dir.remove(loaded.logs, ready)
        logs_dir.remove(loaded.logs, delivering)
        return None
    return None if stored is None else _text_made_here(stored, stem)


def kept(loaded: configuration.Config, session_id: object) -> str | None:
    """The session's addendum if one is ready, left pending (OpenCode's plugin asks again in each
    new OpenCode process; the next compaction's SessionStart removes it). None: none ready, or
    one this machine did not write."""
    stem = discovery.pending_name(session_id)
    if stem is None:
        return None
    try:
        stored = logs_dir.read_bytes(loaded.logs, _name(stem, discovery.READY_SUFFIX), limit=MAX_READY_BYTES)
    except OSError:
        return None
    return _text_made_here(stored, stem)


def _text_made_here(stored: bytes, stem: str) -> str | None:
    """The addendum text of a ready file's bytes, if this machine stamped it for session `stem`."""
    record = provenance.made_here(STAMP_PURPOSE, stored)
    with contextlib.suppress(ValueError):
        found = json.loads(record) if record is not None else None
        if isinstance(found, dict) and found.get("session_id") == stem and isinstance(found.get("text"), str):
            return found["text"]
    return None


def awaiting(loaded: configuration.Config, session_id: object) -> int | None:
    """The savepoint of the session's compaction whose summary is not recorded yet, if any."""
    stem = discovery.pending_name(session_id)
    return None if stem is None else _sequence(loaded.logs, _name(stem, discovery.AWAITING_SUFFIX))


def _stamped_sequence(logs: Path, name: str) -> int | None:
    """The savepoint of the addendum in the pending file `name` (the ready file, or a claim a
    worker wrote it into), if this machine stamped it (its stamp is checked again when given)."""
    try:
        stored = logs_dir.read_bytes(logs, name, limit=MAX_READY_BYTES)
    except OSError:
        return None
    record = provenance.made_here(STAMP_PURPOSE, stored)
    with contextlib.suppress(ValueError):
        found = json.loads(record) if record is not None else None
        sequence = found.get("sequence") if isinstance(found, dict) else None
        return sequence if isinstance(sequence, int) else None
    return None
