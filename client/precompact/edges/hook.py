"""`precompact hook [--agent codex|gemini]`: the hook handler of Claude Code, Codex CLI and Gemini
CLI. It must never slow or block the session:
it always exits 0, never emits a block decision, and reports failures in its message and in
`logs/precompact-errors.log` instead. PreCompact runs only Layer 1 here (the detached worker does
the rest) and tells the summariser, in plain words, what is saved; PostCompact keeps the
summary; SessionStart hands the session the restore brief of the latest savepoint, once.

Claude Code 2.1.332 runs them in the order PreCompact, SessionStart (source `compact`),
PostCompact; it appends PreCompact's stdout to the summariser's prompt as "Additional
Instructions", and keeps SessionStart's `additionalContext` in the conversation.

Codex CLI 0.171.0 sends the same events with the same fields (its `transcript_path` is the
rollout file) in the order PreCompact, PostCompact, SessionStart (`resume`, then `compact`); it
ignores PreCompact's output and gives the model SessionStart's `additionalContext`. Its
PostCompact carries no summary: the rollout's `compacted` record holds it. docs/agents.md has
what each agent sends and honours.

Gemini CLI 0.61.0 has PreCompress (fired before every model round, compressing or not: the hook
saves only when Gemini's own threshold says a compression comes, or on /compress), BeforeAgent
(before each prompt; its `additionalContext` reaches the model after the prompt, so the brief
goes there after a compression) and SessionEnd. Its SessionStart is left alone: its context is
put before the prompt, and a resumed session then drops that prompt from its history.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from precompact import api
from precompact.config import settings as configuration
from precompact.local import savepoint_log
from precompact.transcript import agents

if TYPE_CHECKING:
    from precompact.local import snapshot

ERRORS_LOG = "precompact-errors.log"


@dataclass
class HookResult:
    stdout: str = ""
    stderr: str = ""


def run(agent: str = agents.CLAUDE) -> None:
    """`precompact hook`: answers the invocation on stdin, on stdout and stderr. Never fails."""
    result = handle(sys.stdin.buffer.read(), agent)
    if result.stdout:
        print(result.stdout, flush=True)
    if result.stderr:
        print(result.stderr, file=sys.stderr, flush=True)


def handle(raw: bytes, agent: str = agents.CLAUDE) -> HookResult:
    """Answers one hook invocation of `agent` given its stdin bytes."""
    try:
        payload = json.loads(raw)
    except ValueError as e:
        return HookResult(stderr=f"precompact hook: stdin is not JSON ({e}); nothing saved")
    if not isinstance(payload, dict):
        return HookResult(stderr="precompact hook: stdin must be a JSON object; nothing saved")
    event = payload.get("hook_event_name")
    if not isinstance(event, str):
        return HookResult(stderr='precompact hook: input has no "hook_event_name" string; nothing done')
    cwd = payload.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        return HookResult(stderr='precompact hook: input has no "cwd" string; nothing saved')
    handlers = (
        {"PreCompress": _pre_compress, "BeforeAgent": _before_agent, "SessionEnd": _session_end}
        if agent == agents.GEMINI
        else {
            "PreCompact": _pre_compact,
            "PostCompact": _post_compact,
            "SessionStart": _session_start,
            "SessionEnd": _session_end,
        }
    )
    if event not in handlers:
        return HookResult(
            stderr=f"precompact hook: event {event!r} is not handled ({', '.join(handlers)}); nothing done"
        )
    # Installed for every directory (user scope), the hook fires in projects without precompact:
    # there it has nothing to do and says so only on stderr, which Claude Code does not show.
    try:
        root = configuration.find_root(Path(cwd))
    except (configuration.ConfigError, OSError) as e:
        return HookResult(stderr=f"precompact hook: {e}")
    try:
        return handlers[event](payload, configuration.load(root), agent)
    except configuration.UntrustedConfig as e:
        return _untrusted(event, f"precompact did nothing: {e}", agent)
    except Exception as e:  # noqa: BLE001 -- the session must go on whatever happens here
        from precompact.transcript.redact import Redactor

        reason = Redactor().redact(
            str(e) if isinstance(e, (configuration.ConfigError, OSError, savepoint_log.LockTimeout)) else repr(e)
        )
        details = f" (details in logs/{ERRORS_LOG})" if _log_error(root, event, reason) else ""
        if event == "PreCompact" and agent == agents.CLAUDE:
            # PreCompact's stdout goes to the summariser as instructions: plain words, no JSON.
            return HookResult(
                stdout=f"precompact could not save the transcript before this compaction ({reason}); the summary is the only record of what compaction drops."
            )
        return HookResult(stdout=_message(f"precompact: {event} failed: {reason}{details}"))


def _untrusted(event: str, line: str, agent: str) -> HookResult:
    """One line for the user, never the model (which could run `precompact trust` itself):
    Claude Code's PreCompact stdout goes to the summariser, so there plain words that leave the
    summary as it would be; elsewhere `systemMessage`, which Claude Code and Codex show the user
    and keep out of the conversation."""
    if event == "PreCompact" and agent == agents.CLAUDE:
        return HookResult(stdout=line)
    return HookResult(stdout=_message(line))


def _session(payload: dict, loaded: configuration.Config, trigger: str, agent: str) -> snapshot.Session:
    return _read_session(payload, loaded, trigger, agent)[0]


def _read_session(
    payload: dict, loaded: configuration.Config, trigger: str, agent: str
) -> tuple[snapshot.Session, agents.Read | None]:
    """The session the payload names, its session file read into the document the snapshot
    reads (agents.read; OSError when that file cannot be read)."""
    from precompact.local import snapshot

    given = _text(payload, "transcript_path")
    read = agents.read(agent, loaded.logs, given) if given else None
    return snapshot.Session(
        session_id=_text(payload, "session_id"),
        transcript_path=read.transcript_path if read else None,
        cwd=_text(payload, "cwd") or str(loaded.root),
        trigger=trigger,
        custom_instructions=_text(payload, "custom_instructions"),
        agent=agent,
        agent_version=read.version if read else None,
        agent_transcript=given if agent != agents.CLAUDE else None,
    ), read


def _pre_compact(payload: dict, loaded: configuration.Config, agent: str) -> HookResult:
    from precompact.local import snapshot

    session = _session(payload, loaded, _text(payload, "trigger") or "auto", agent)
    kept = _unchanged_savepoint(loaded, session)
    # Only Claude Code reads PreCompact's stdout (as the summariser's instructions).
    speaks = agent == agents.CLAUDE
    if kept is not None:
        note = f"Nothing was said since precompact savepoint {kept.sequence}, so no new savepoint was made. "
        return HookResult(
            stdout=note + _compact_note(loaded, kept.sequence, kept.snapshot_hash)
            if loaded.compact_note and speaks
            else ""
        )
    written = snapshot.create_savepoint(snapshot.Settings.of(loaded), session)
    # Imported late: spawning needs only the module, not the layers it will run. The worker
    # runs even with Layers 2 and 3 off: it indexes the savepoint for recall.
    from precompact.ops import background

    background.spawn(loaded.root)
    return HookResult(stdout=_compact_note(loaded, written.sequence, written.sha256) if speaks else "")


def _unchanged_savepoint(loaded: configuration.Config, session: snapshot.Session) -> savepoint_log.Savepoint | None:
    """The session's latest savepoint, if the transcript has said nothing since it was made."""
    if not session.session_id or not session.transcript_path:
        return None
    mine = [s for s in savepoint_log.savepoints(loaded.logs, loaded.instance) if s.session_id == session.session_id]
    if not mine or not mine[-1].last_said:
        return None
    from precompact.transcript import conversation

    return mine[-1] if conversation.last_said(Path(session.transcript_path)) == mine[-1].last_said else None


def _compact_note(loaded: configuration.Config, sequence: int, sha256: str) -> str:
    return loaded.compact_note.replace("{savepoint}", f"savepoint {sequence} (sha256:{sha256[:12]})")


def _pre_compress(payload: dict, loaded: configuration.Config, agent: str) -> HookResult:
    """Gemini's PreCompress: a savepoint as PreCompact makes, when a compression comes."""
    trigger = _text(payload, "trigger") or "auto"
    transcript = _text(payload, "transcript_path")
    if trigger != "manual":
        from precompact.transcript import gemini

        cwd = Path(_text(payload, "cwd") or loaded.root)
        if not transcript or not gemini.compression_coming(Path(transcript), cwd, Path.home()):
            return HookResult()
    return _pre_compact(payload, loaded, agent)


def _before_agent(payload: dict, loaded: configuration.Config, agent: str) -> HookResult:
    """Gemini's BeforeAgent: after a compression, the session's brief, once per compression
    (Gemini keeps BeforeAgent's context with the prompt it came with)."""
    transcript, session_id = _text(payload, "transcript_path"), _text(payload, "session_id")
    from precompact.transcript import gemini

    if not transcript or not session_id or not gemini.compressed(Path(transcript)):
        return HookResult()
    compressions = gemini.read(Path(transcript)).compressions
    deliveries = savepoint_log.read(loaded.logs).deliveries(loaded.instance, session_id)
    briefed = sum(1 for delivery in deliveries if delivery.source == "compact")
    if briefed >= compressions:
        return HookResult()
    from precompact.local import capture

    latest = capture.to_brief(savepoint_log.savepoints(loaded.logs, loaded.instance), session_id, "compact")
    if latest is None:
        return HookResult()
    return _brief(loaded, latest, session_id, "compact", "BeforeAgent")


def _recover(payload: dict, loaded: configuration.Config, agent: str) -> agents.Read | None:
    """After a compaction: the savepoint of what it dropped, if no savepoint holds it yet
    (PreCompact did not fire, or read a transcript that lagged). Layer 1 here, the rest in the
    worker. Returns the session file as read."""
    from precompact.local import capture, snapshot

    session, read = _read_session(payload, loaded, capture.RECOVERED_TRIGGER, agent)
    if capture.recover(snapshot.Settings.of(loaded), session) is not None:
        from precompact.ops import background

        background.spawn(loaded.root)
    return read


def _post_compact(payload: dict, loaded: configuration.Config, agent: str) -> HookResult:
    from precompact.local import capture

    read = _recover(payload, loaded, agent)
    # This session's savepoint only: another session's compaction summary is not its own.
    mine = capture.of_session(savepoint_log.savepoints(loaded.logs, loaded.instance), _text(payload, "session_id"))
    latest = mine[-1] if mine else None
    if latest is None:
        return HookResult(stderr="precompact hook: this session has no savepoint to attach the compaction summary to")
    summary = summary_part(_text(payload, "compact_summary") or (read.summary if read else None) or "")
    if loaded.redaction:
        from precompact.transcript.redact import Redactor

        summary = Redactor(extra=dict(loaded.redaction_patterns)).redact(summary)
    savepoint_log.mark(
        loaded.logs, latest, savepoint_log.Event.COMPACT_SUMMARY, trigger=_text(payload, "trigger"), summary=summary
    )
    return HookResult()


def summary_part(text: str) -> str:
    """The `<summary>` of a compaction summary; its `<analysis>` is the model's working, not the
    summary. Text without the tags is kept whole."""
    start, end = text.find("<summary>"), text.rfind("</summary>")
    if start != -1 and end > start:
        return text[start + len("<summary>") : end].strip()
    return text.strip()


def _session_start(payload: dict, loaded: configuration.Config, agent: str) -> HookResult:
    """The brief of a savepoint, once per session: silent when there is none, or when this
    session already has it (Claude Code keeps SessionStart context in the conversation, so a
    resume after a compaction would repeat it). After a compaction the savepoint is recovered
    from the transcript first if PreCompact left none; `capture.to_brief` chooses which, and the
    brief says when it is another session's. Uses no network: git and chain are taken as the
    worker recorded them, and the session never waits on them."""
    from precompact.local import capture

    source = _text(payload, "source")
    session_id = _text(payload, "session_id")
    if source == "compact":
        _recover(payload, loaded, agent)
    if source not in loaded.session_start_sources:
        return HookResult()
    latest = capture.to_brief(savepoint_log.savepoints(loaded.logs, loaded.instance), session_id, source)
    if latest is None or (session_id and api.brief_delivered(loaded, latest.sequence, session_id)):
        return HookResult()
    return _brief(loaded, latest, session_id, source, "SessionStart")


def _brief(
    loaded: configuration.Config,
    latest: savepoint_log.Savepoint,
    session_id: str | None,
    source: str | None,
    event: str,
) -> HookResult:
    """The restore brief of `latest` as `event`'s additionalContext, recorded as delivered."""
    context = api.session_start_brief(loaded, latest.sequence, session_id)
    savepoint_log.mark(loaded.logs, latest, savepoint_log.Event.BRIEF_DELIVERED, session_id=session_id, source=source)
    return HookResult(
        stdout=json.dumps(
            {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}, ensure_ascii=False
        )
    )


def _session_end(payload: dict, loaded: configuration.Config, agent: str) -> HookResult:
    """Archives what the session said since its last savepoint, so a session that never
    compacts is kept too: Layer 1 here (going on from the session's read position, well inside
    Claude Code's 1.5 s SessionEnd budget), Layers 2 and 3 in the worker."""
    if not loaded.session_end:
        return HookResult()
    from precompact.local import snapshot
    from precompact.transcript import conversation

    session = _session(payload, loaded, "session_end", agent)
    if not session.transcript_path or conversation.last_said(Path(session.transcript_path)) is None:
        return HookResult()  # nothing said: nothing to archive
    if _unchanged_savepoint(loaded, session) is not None:
        return HookResult()
    snapshot.create_savepoint(snapshot.Settings.of(loaded), session)
    from precompact.ops import background

    background.spawn(loaded.root)
    return HookResult()


def _text(payload: dict, key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) else None


def _message(text: str) -> str:
    """A hook output Claude Code shows the user, not the model."""
    return json.dumps({"systemMessage": text})


def _log_error(root: Path, event, reason: str) -> bool:
    """Appends the failure to the project's error log; False when the user never approved that
    project's configuration (a file in a shared directory, someone else's: nothing is written
    there) or its logs/ is refused."""
    from precompact.boundary import logs_dir
    from precompact.config import approval as config_trust
    from precompact.transcript.redact import Redactor

    try:
        if config_trust.approval(root / configuration.CONFIG_NAME) is None:
            return False
        fd = logs_dir.open_file(root / "logs", ERRORS_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        with os.fdopen(fd, "a") as f:
            f.write(Redactor().redact(f"{savepoint_log.utc_timestamp()} {event}: {reason}\n{traceback.format_exc()}\n"))
    except (OSError, configuration.ConfigError):
        return False
    return True
