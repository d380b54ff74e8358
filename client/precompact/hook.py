"""`precompact hook`: the Claude Code hook handler. It must never slow or block the session:
it always exits 0, never emits a block decision, and reports failures in its message and in
`logs/precompact-errors.log` instead. PreCompact runs only Layer 1 here (the detached worker does
the rest); SessionStart hands the new session the restore brief of the latest savepoint.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

from precompact import config as configuration
from precompact import savepoint_log, snapshot

ERRORS_LOG = "precompact-errors.log"
# A session start waits for the chain read at most this long; past it the brief says
# "not verified" rather than hold the session up.
SESSION_START_RPC_TIMEOUT_SECONDS = 3


@dataclass
class HookResult:
    stdout: str = ""
    stderr: str = ""


def run() -> None:
    """`precompact hook`: answers the invocation on stdin, on stdout and stderr. Never fails."""
    result = handle(sys.stdin.buffer.read())
    if result.stdout:
        print(result.stdout, flush=True)
    if result.stderr:
        print(result.stderr, file=sys.stderr, flush=True)


def handle(raw: bytes) -> HookResult:
    """Answers one hook invocation given its stdin bytes."""
    try:
        payload = json.loads(raw)
    except ValueError as e:
        return HookResult(stderr=f"precompact hook: stdin is not JSON ({e}); nothing saved")
    if not isinstance(payload, dict):
        return HookResult(stderr="precompact hook: stdin must be a JSON object; nothing saved")
    event = payload.get("hook_event_name")
    if not isinstance(event, str):
        return HookResult(stderr="precompact hook: input has no \"hook_event_name\" string; nothing done")
    cwd = payload.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        return HookResult(stderr="precompact hook: input has no \"cwd\" string; nothing saved")
    handlers = {"PreCompact": _pre_compact, "PostCompact": _post_compact, "SessionStart": _session_start}
    if event not in handlers:
        return HookResult(stderr=f"precompact hook: event {event!r} is not handled ({', '.join(handlers)}); nothing done")
    try:
        return handlers[event](payload, Path(cwd))
    except configuration.UntrustedConfig as e:
        return _untrusted(event, f"precompact did nothing: {e}")
    except Exception as e:  # the session must go on whatever happens here
        from precompact.redact import Redactor

        reason = Redactor().value(str(e) if isinstance(e, (configuration.ConfigError, OSError, savepoint_log.LockTimeout)) else repr(e))
        details = f" (details in logs/{ERRORS_LOG})" if _log_error(Path(cwd), event, reason) else ""
        return HookResult(stdout=_message(f"precompact: {event} failed: {reason}{details}"))


def _untrusted(event: str, line: str) -> HookResult:
    """One line, in the form the event shows: PreCompact's stdout is read by the summariser as
    plain text; SessionStart's context reaches the session; PostCompact's message the user."""
    if event == "PreCompact":
        return HookResult(stdout=line)
    if event == "SessionStart":
        return HookResult(stdout=json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": line}}, ensure_ascii=False))
    return HookResult(stdout=_message(line))


def _pre_compact(payload: dict, cwd: Path) -> HookResult:
    loaded = configuration.load(cwd)
    session = snapshot.Session(
        session_id=_text(payload, "session_id"),
        transcript_path=_text(payload, "transcript_path"),
        cwd=str(cwd),
        trigger=_text(payload, "trigger") or "auto",
        custom_instructions=_text(payload, "custom_instructions"),
    )
    written = snapshot.create_savepoint(loaded.snapshot_settings(), session)
    queued = ""
    if loaded.git_layer or loaded.chain_layer:
        # Imported late: spawning needs only the module, not the layers it will run.
        from precompact import worker

        worker.spawn(loaded.root)
        queued = "; git and chain backup continue in the background"
    return HookResult(stdout=_message(f"precompact: savepoint {written.sequence} saved (sha256:{written.sha256[:12]}){queued}"))


def _post_compact(payload: dict, cwd: Path) -> HookResult:
    loaded = configuration.load(cwd)
    latest = savepoint_log.latest(loaded.logs, loaded.instance)
    if latest is None:
        return HookResult(stderr="precompact hook: no savepoint to attach the compaction summary to")
    summary = _text(payload, "compact_summary") or ""
    if loaded.redaction:
        from precompact.redact import Redactor

        summary = Redactor(extra=dict(loaded.redaction_patterns)).value(summary)
    savepoint_log.mark(loaded.logs, latest, "COMPACT_SUMMARY", trigger=_text(payload, "trigger"), summary=summary)
    return HookResult()


def _session_start(payload: dict, cwd: Path) -> HookResult:
    loaded = configuration.load(cwd)
    source = _text(payload, "source")
    if source not in loaded.session_start_sources:
        return HookResult()
    from precompact import restore_brief, resurrect

    try:
        found = resurrect.resurrect(loaded, rpc_timeout=SESSION_START_RPC_TIMEOUT_SECONDS)
        context = restore_brief.brief(found)
    except resurrect.ResurrectError as e:
        context = f"[precompact] No savepoint restored: {e}"
    return HookResult(stdout=json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}, ensure_ascii=False))


def _text(payload: dict, key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) else None


def _message(text: str) -> str:
    return json.dumps({"systemMessage": text})


def _log_error(cwd: Path, event, reason: str) -> bool:
    """Appends the failure to the project's error log; False when there is no project (no
    configuration) or its logs/ is refused."""
    from precompact import logs_dir
    from precompact.redact import Redactor

    try:
        fd = logs_dir.open_file(configuration.find_root(cwd) / "logs", ERRORS_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        with os.fdopen(fd, "a") as f:
            f.write(Redactor().value(f"{savepoint_log.utc_timestamp()} {event}: {reason}\n{traceback.format_exc()}\n"))
    except (OSError, configuration.ConfigError):
        return False
    return True
