"""`precompact hook [--agent codex|gemini|opencode]`: the hook handler of Claude Code, Codex CLI, Gemini
CLI and OpenCode (through precompact's plugin). It must never slow or block the session:
it always exits 0, never emits a block decision, and reports failures in its message and in
`logs/precompact-errors.log` instead. PreCompact runs only Layer 1 here (the detached worker does
the rest) and tells the summariser, in plain words, what is saved; PostCompact keeps the
summary and has the worker compute what it left out; SessionStart hands the session the restore
brief of the latest savepoint, once (after a compaction, its first part); the next
UserPromptSubmit or PostToolUse gives what the summary left out, once (ops/addendum.py). Those two
fire on every prompt and tool call: with nothing pending for the session they are answered after
three stats, before anything of precompact's library is imported.

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

from precompact.config import discovery
from precompact.transcript.agent_names import CLAUDE, GEMINI, OPENCODE

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a few ms)
if TYPE_CHECKING:
    from precompact.config import settings as configuration

# Every agent runs this on every event of every session (Gemini CLI before every model round),
# in every directory of a user-scope install: whether there is anything to do is decided with
# json, sys and os alone (and hashlib in a project), and the rest of precompact is imported only
# where there is.


def _no_brief_to_give(payload: dict, root: str) -> bool:
    """A session start, not after a compaction (which may recover a savepoint from the
    transcript), in a project where precompact never wrote anything (no logs/): no savepoint
    to brief."""
    return payload.get("source") != "compact" and not os.path.lexists(os.path.join(root, "logs"))


def _no_compression_coming(payload: dict, root: str) -> bool:
    """Gemini's PreCompress, fired before every model round: not /compress, and the chat file's
    latest prompt below Gemini's threshold (what ops/compaction.pre_compress checks first)."""
    from precompact.config import gemini_compression

    transcript, cwd = payload.get("transcript_path"), payload["cwd"]
    if payload.get("trigger") == "manual":
        return False
    return not (isinstance(transcript, str) and transcript) or not gemini_compression.compression_coming(
        transcript, cwd, os.path.expanduser("~")
    )


def _no_compression_to_brief(payload: dict, root: str) -> bool:
    """Gemini's BeforeAgent, fired before every prompt: a chat file that holds no compression
    has no brief to give (what ops/compaction.before_agent checks first)."""
    from precompact.config import gemini_compression

    transcript, session_id = payload.get("transcript_path"), payload.get("session_id")
    if not (isinstance(transcript, str) and transcript and isinstance(session_id, str) and session_id):
        return True
    return not gemini_compression.compressed(transcript)


# The events that can have nothing to do, each with the predicate (the event's JSON, the
# project's root) that says so from the event and cheap file facts: asked in a project whose
# configuration this user approved as it is, before anything else of precompact is imported.
# An event not here, or whose predicate is false, goes to its handler, which loads and checks
# the configuration in full (an untrusted one is said there, as on every event).
NOTHING_TO_DO = {
    "SessionStart": _no_brief_to_give,
    "PreCompress": _no_compression_coming,
    "BeforeAgent": _no_compression_to_brief,
}


# The agents that put PreCompact's stdout in the summariser's prompt (Claude Code; OpenCode through
# precompact's plugin): a line for the user goes on stderr there, never stdout.
COMPACTION_STDOUT_TO_MODEL = (CLAUDE, OPENCODE)

# The events that save from the session the event names (a savepoint, or one recovered).
SAVED_FROM_THE_SESSION = ("PreCompact", "PostCompact")

# The events that give a compacted session what its summary left out, and the brief its session
# start could not give while the compaction's savepoint was queued (ops/addendum.py).
AFTER_COMPACTION = ("UserPromptSubmit", "PostToolUse")


class HookResult:
    """The hook's answer: stdout for the agent, stderr for the user; and the project and event it
    answers, where there is one (a failure to give the answer is logged there)."""

    def __init__(self, stdout: str = "", stderr: str = "") -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.project: str | None = None
        self.event = ""


def run(agent: str = CLAUDE) -> None:
    """`precompact hook`: answers the invocation on stdin, on stdout and stderr. Never fails."""
    try:
        result = handle(sys.stdin.buffer.read(), agent)
    except Exception as e:  # noqa: BLE001  a hook never blocks the agent: said, exit 0
        from precompact.boundary import quoting

        result = HookResult(
            stderr=f"precompact hook: failed before reaching a project ({type(e).__name__}: {quoting.inline(str(e))})"
        )
    from precompact.boundary import terminal

    try:
        if result.stdout:
            terminal.answer(result.stdout)
        if result.stderr:
            terminal.echo(result.stderr, err=True)
    except OSError as e:  # the agent closed its end (a broken pipe): the answer reached nobody
        if result.project is not None:
            from pathlib import Path

            from precompact import api
            from precompact.boundary import quoting

            api.log_hook_failure(
                Path(result.project),
                result.event,
                f"the agent closed its end before precompact's answer reached it ({quoting.os_error(e)}); "
                "`precompact resurrect --format brief` shows the brief a session start or compaction was to give",
            )


def _not_json(error: ValueError) -> HookResult:
    """What the hook says of stdin json could not read: the parser's words quoted (a decoding
    error repeats the bytes it could not take)."""
    from precompact.boundary import quoting

    return HookResult(stderr=f"precompact hook: stdin is not JSON ({quoting.inline(str(error))}); nothing saved")


def handle(raw: bytes, agent: str = CLAUDE) -> HookResult:
    """Answers one hook invocation of `agent` given its stdin bytes."""
    try:
        payload = json.loads(raw)
    except RecursionError:
        # Nested deeper than json recurses (a tool's input the model wrote): the event's own
        # fields are shallow, so they are read and the deep part left out, never built.
        from precompact.boundary import outside_json

        try:
            payload = outside_json.shallow_object(raw.decode("utf-8"))
        except ValueError as e:
            return _not_json(e)
    except ValueError as e:
        return _not_json(e)
    if not isinstance(payload, dict):
        return HookResult(stderr="precompact hook: stdin must be a JSON object; nothing saved")
    event = payload.get("hook_event_name")
    if not isinstance(event, str):
        return HookResult(stderr='precompact hook: input has no "hook_event_name" string; nothing done')
    cwd = payload.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        return HookResult(stderr='precompact hook: input has no "cwd" string; nothing saved')
    events = _handlers(agent)
    if event not in events:
        return HookResult(stderr=f"precompact hook: event {event!r} is not handled ({', '.join(events)}); nothing done")
    # Installed for every directory (user scope), the hook fires in projects without precompact:
    # there it has nothing to do and says so only on stderr, which Claude Code does not show.
    try:
        found = discovery.discover(cwd)
    except (OSError, ValueError) as e:  # a cwd the system cannot resolve (a NUL in it)
        from precompact.boundary import quoting

        return HookResult(
            stderr=f"precompact hook: the working directory cannot be resolved ({quoting.inline(str(e))})"
        )
    if found is None:
        return HookResult(stderr=f"precompact hook: {discovery.missing(cwd)}")
    # The agent's environment is the project's to set: no root of precompact's (the approvals
    # read next, its state, git's global configuration) may lie in the project.
    from precompact.boundary import user_roots

    try:
        refused = user_roots.confine(os.environ, [place for place in found if place is not None])
    except user_roots.NoHome as e:
        return HookResult(stderr=f"precompact hook: {e}; nothing done")
    # These two fire on every prompt and tool call: only a compaction's pending addendum is work,
    # and with none there is nothing to do and nothing to say (a configuration not approved as it
    # is, is said at session start and compaction, not on every tool call).
    try:
        if event in AFTER_COMPACTION and not discovery.something_pending(found[0], payload.get("session_id")):
            return HookResult()
        if event in NOTHING_TO_DO and NOTHING_TO_DO[event](payload, found[0]):
            from precompact.config import approval

            if approval.approved_as_is(os.path.join(found[0], discovery.CONFIG_NAME)):
                return HookResult()
    except Exception:  # noqa: BLE001, S110  the quick answer failed on outside input: the handler decides, and logs
        pass
    return _in_project(found[0], event, payload, agent, refused)


def _in_project(root_found: str, event: str, payload: dict, agent: str, refused: list[str]) -> HookResult:
    """The event in a directory of a precompact project: its configuration loaded and checked,
    the handler of `event` run, any failure logged and said, never raised."""
    from pathlib import Path

    from precompact import api
    from precompact.boundary import outside_json
    from precompact.config import settings as configuration

    root = Path(root_found)
    ignored = configuration.drop_agent_overrides(os.environ, root)
    # Said where a savepoint is made, not at every tool call.
    if event in ("PreCompact", "PreCompress", "SessionEnd"):
        if refused:
            from precompact.boundary import user_roots

            api.log_hook_notice(root, event, user_roots.refused_notice(refused))
        if ignored:
            api.log_hook_notice(root, event, configuration.ignored_overrides_notice(ignored))
    try:
        # The agent's text may hold a lone surrogate escape (JavaScript's JSON.stringify writes
        # one for a string cut inside an emoji), which no snapshot or index line can hold: it is
        # repaired here, as the transcript readers repair theirs, before any handler sees it; a
        # member nested too deep for the handlers to walk (a tool's input) is left out.
        repaired = outside_json.event_members(payload)
        loaded = configuration.load(root)
        # A subagent's session (OpenCode's child session) is not the user's: what it says is the
        # task another model wrote, and the user's own session holds its outcome. Asked where a
        # savepoint would be made from it; with none made, no brief is ever its to be given (a
        # session is briefed after a compaction with its own savepoint only), and the brief's
        # events are spared the reader's imports (docs/performance.md).
        subagent = api.subagent_session(repaired, agent) if event in SAVED_FROM_THE_SESSION else None
        if subagent:
            result = HookResult(stderr=f"precompact hook: {subagent}; nothing done")
        else:
            result = _handlers(agent)[event](repaired, loaded, agent)
    except configuration.UntrustedConfig as e:
        return _untrusted(event, str(e), agent)
    except Exception as e:  # noqa: BLE001 -- the session must go on whatever happens here
        reason = api.hook_failure_reason(e, root)
        kept = api.log_hook_failure(root, event, reason)
        details = f" (details in {kept})" if kept else ""
        if event == "PreCompact" and agent in COMPACTION_STDOUT_TO_MODEL:
            # PreCompact's stdout goes to the summariser as instructions: plain words, no JSON;
            # the user's line goes to stderr.
            result = HookResult(
                stdout=f"precompact could not save the transcript before this compaction ({reason}); the summary is the only record of what compaction drops.",
                stderr=f"precompact: nothing saved before this compaction: {reason}{details}",
            )
        else:
            result = HookResult(stdout=_message(f"precompact: {event} failed: {reason}{details}"))
    result.project, result.event = root_found, event
    return result


def _handlers(agent: str) -> dict:
    """`agent`'s events, each with its handler."""
    if agent == GEMINI:
        return {"PreCompress": _pre_compress, "BeforeAgent": _before_agent, "SessionEnd": _session_end}
    return {
        "PreCompact": _pre_compact,
        "PostCompact": _post_compact,
        "SessionStart": _session_start,
        "SessionEnd": _session_end,
        "UserPromptSubmit": _after_compaction,
        "PostToolUse": _after_compaction,
    }


def _untrusted(event: str, why: str, agent: str) -> HookResult:
    from precompact.edges import untrusted_reply

    stdout, stderr = untrusted_reply.reply(event, why, compaction_stdout_to_model=agent in COMPACTION_STDOUT_TO_MODEL)
    return HookResult(stdout=stdout, stderr=stderr)


def _pre_compact(payload: dict, loaded: configuration.Config, agent: str) -> HookResult:
    from precompact import api

    note = api.on_pre_compact(loaded, payload, agent)
    # The note goes to the summariser; the user's line (stderr) says what keeps Layers 2 and 3 waiting.
    return HookResult(stdout=note, stderr=_worker_cannot_start(loaded) or "")


def _pre_compress(payload: dict, loaded: configuration.Config, agent: str) -> HookResult:
    from precompact import api

    note = api.on_pre_compress(loaded, payload, agent)
    if note is None:
        return HookResult()  # no compression comes: nothing was saved
    # Gemini gives PreCompress's output neither to the model nor to the compression; it shows a
    # `systemMessage` to the user (its interactive CLI adds it to the history as an info line).
    cannot = _worker_cannot_start(loaded)
    return HookResult(stdout=_message(cannot) if cannot else note)


def _worker_cannot_start(loaded: configuration.Config) -> str | None:
    """The user's line after a compaction's save when the background worker cannot start: what
    was kept, and why Layers 2 and 3 wait (with the fix); None when it can start."""
    from precompact import api

    cannot = api.worker_cannot_start(loaded)
    if not cannot:
        return None
    # Over the hook's budget the savepoint waits in the queue for that worker: not saved at all yet.
    kept = "queued, not saved yet (the background worker writes it)" if api.queued_notice(loaded) else "saved locally"
    return f"precompact: {kept}; {cannot}"


def _post_compact(payload: dict, loaded: configuration.Config, agent: str) -> HookResult:
    from precompact import api

    if api.on_post_compact(loaded, payload, agent):
        return HookResult()
    return HookResult(stderr="precompact hook: this session has no savepoint to attach the compaction summary to")


def _session_start(payload: dict, loaded: configuration.Config, agent: str) -> HookResult:
    from precompact import api

    # Said at every session start until fixed: to the user, and to the model before the brief,
    # which leaves it room in `[hooks] brief_budget` (so asked first).
    said = api.standing_failure_line(loaded)
    context = api.on_session_start(loaded, payload, agent, after_failure=said is not None)
    return _context("SessionStart", context, to_the_user=said)


def _after_compaction(payload: dict, loaded: configuration.Config, agent: str) -> HookResult:
    from precompact import api

    return _context(payload["hook_event_name"], api.on_prompt_or_tool(loaded, payload, agent))


def _before_agent(payload: dict, loaded: configuration.Config, agent: str) -> HookResult:
    from precompact import api

    return _context("BeforeAgent", api.on_before_agent(loaded, payload))


def _session_end(payload: dict, loaded: configuration.Config, agent: str) -> HookResult:
    from precompact import api

    api.on_session_end(loaded, payload, agent)
    return HookResult()


def _context(event: str, brief: str | None, to_the_user: str | None = None) -> HookResult:
    """The restore brief as `event`'s additionalContext, which the agent gives the model; with
    `to_the_user`, also a systemMessage the agent shows the user."""
    if brief is None:
        return HookResult()
    shown = {"systemMessage": to_the_user} if to_the_user else {}
    return HookResult(
        stdout=json.dumps(
            {**shown, "hookSpecificOutput": {"hookEventName": event, "additionalContext": brief}}, ensure_ascii=False
        )
    )


def _message(text: str) -> str:
    """A hook output Claude Code shows the user, not the model."""
    return json.dumps({"systemMessage": text})
