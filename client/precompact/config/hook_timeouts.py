"""How long each agent lets each hook event run before it cancels it (the timeouts `install`
registers, and those hooks/hooks.json and OpenCode's plugin give: tests keep them equal to this
table), and, derived from it, how long an event may wait for the index lock (a hook cancelled
while it waits has saved nothing and queued nothing, and says nothing) and how large a savepoint
it may write itself (a larger one is the worker's: `writes_in_time`, and PreCompact's
`pre_compact_writes`, derived from the cost issue 42 allows it).

Standard library only: the hook reads it at every event that takes the index lock."""

from __future__ import annotations

# Agent -> event -> seconds. Claude Code's docs give SessionEnd hooks 1.5 s together, but 2.1.332
# cancels one at its timeout (a 3 s hook completed, a 7 s one was cancelled at 5 s): 5 s is
# SessionEnd's bound there and 1.5 s its aim. Codex CLI 0.171.0 caps SessionEnd at 3 s whatever
# the timeout says. Gemini CLI 0.61.0 takes milliseconds (install multiplies). OpenCode 1.18.33
# runs no command hooks: precompact's plugin gives each event its budget (BUDGET_MS) and has no
# SessionEnd.
INSTALLED_SECONDS = {
    "claude": {
        "PreCompact": 60,
        "PostCompact": 15,
        "SessionStart": 30,
        "SessionEnd": 5,
        "UserPromptSubmit": 10,
        "PostToolUse": 10,
    },
    "codex": {
        "PreCompact": 60,
        "PostCompact": 15,
        "SessionStart": 30,
        "SessionEnd": 3,
        "UserPromptSubmit": 10,
        "PostToolUse": 10,
    },
    "gemini": {"PreCompress": 60, "BeforeAgent": 30, "SessionEnd": 5},
    "opencode": {"PreCompact": 60, "PostCompact": 15, "SessionStart": 30, "UserPromptSubmit": 15},
}
# The share of its timeout an event may spend waiting for the index lock, all its waits together
# (PreCompact: 10 s of 60): the rest is for starting Python, reading the transcript and writing
# the snapshot under the lock (docs/performance.md: seconds for one of tens of MB), and answering.
# Past it the event leaves its save to the background worker (a stamped queue entry), which waits
# as long as it must.
LOCK_SHARE = 1 / 6
# Events whose answer carries nothing the lock gives: they queue at once when the lock is held.
# SessionEnd's session is over (nobody reads its answer), and its budget is the tightest.
QUEUE_AT_ONCE = ("SessionEnd",)
# How fast a hook writes a savepoint of transcript never saved before, at the least: Python's
# start, the read, redaction and the chunks' writes together, on the loaded 2-core machine of
# docs/performance.md ("SessionEnd on a long session": 50 and 100 MB took 3.0 to 8.2 s at load 4
# to 8.5, 12 to 16 MB/s; 10 here leaves room for a slower disk).
SAVED_BYTES_PER_SECOND = 10_000_000
# What a byte of a Codex rollout or a Gemini chat file costs a savepoint, in bytes of transcript
# at SAVED_BYTES_PER_SECOND: it is read into a conversation document about twice its size
# (scripts/bench_session_end.py --agent: 20 MB made 40), which is then saved; one more for the
# reading itself.
SESSION_FILE_BYTE_COST = 3
# The share of its timeout an event that is cut when it runs out (SessionEnd) may plan to spend
# writing a savepoint itself: Codex's 3 s give 15 MB, Claude Code's 5 s 25 MB; a longer session's
# savepoint is the worker's, which no agent cuts.
WRITE_SHARE = 1 / 2
# Issue 42's target for PreCompact: at most this much CPU over the I/O floor (`cp` + `sha256sum`
# of its transcript), as scripts/bench_hooks.py --only precompact measures it. What PreCompact
# writes itself is bounded by it, not by its timeout (60 s, which a savepoint never nears).
PRE_COMPACT_OVER_FLOOR_SECONDS = 0.100
# What PreCompact writing a savepoint itself costs over that floor before any transcript is read
# (Python's start, Layer 1's imports, git's state of the project, the fsynced index line), and how
# fast it saves transcript no savepoint of its session has read, over the floor's own cost per
# byte: the dearer workload, real code, whose redaction checks more lines (docs/performance.md,
# "PreCompact writes what fits its budget", load 4 to 8: 10 KB cost the floor + 87 to 96 ms, each
# MB of real code 50 to 67 ms more, of generated text 20 to 25). So about 105 KB: the fixed cost
# leaves the target little room. SAVED_BYTES_PER_SECOND is wall time with Python's start, for a
# timeout; this is CPU, for a cost.
PRE_COMPACT_WRITE_SECONDS = 0.093
LAYER_1_BYTES_PER_SECOND = 15_000_000


def installed(agent: str, event: str) -> float:
    """The seconds `agent` gives `event` before it cancels the hook; KeyError for an event the
    agent is not installed for."""
    return float(INSTALLED_SECONDS[agent][event])


def lock_wait(agent: str, event: str) -> float:
    """How long `event` of `agent` may wait for the index lock, all its waits together (0: it
    tries once)."""
    if event in QUEUE_AT_ONCE:
        return 0.0
    return _given(agent, event) * LOCK_SHARE


def writes_in_time(agent: str, event: str, unsaved_bytes: int) -> bool:
    """Whether `event` of `agent` may write a savepoint of `unsaved_bytes` of transcript itself:
    at SAVED_BYTES_PER_SECOND it takes at most WRITE_SHARE of the event's timeout. Past that the
    worker writes it (the event queued it first, so a cut at any point loses nothing)."""
    return unsaved_bytes <= _given(agent, event) * WRITE_SHARE * SAVED_BYTES_PER_SECOND


def pre_compact_writes(unsaved_bytes: int) -> bool:
    """Whether PreCompact may write the savepoint of `unsaved_bytes` of transcript itself and cost
    no more than PRE_COMPACT_OVER_FLOOR_SECONDS over the I/O floor. Past that it queues the
    savepoint and the worker writes it (ops/compaction.py): the hook then costs what queuing costs."""
    room = PRE_COMPACT_OVER_FLOOR_SECONDS - PRE_COMPACT_WRITE_SECONDS
    return unsaved_bytes <= room * LAYER_1_BYTES_PER_SECOND


def _given(agent: str, event: str) -> float:
    """The seconds `agent` gives `event`. An event or agent not in the table (the hook is run by
    hand, or an agent sends an event it was not installed for) gets the least any agent gives
    that event, else none."""
    given = INSTALLED_SECONDS.get(agent, {}).get(event)
    if given is None:
        given = min((events[event] for events in INSTALLED_SECONDS.values() if event in events), default=0)
    return float(given)
