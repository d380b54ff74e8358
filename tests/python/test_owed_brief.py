"""The brief a compaction's SessionStart could not give (fix12c): PreCompact left the savepoint
queued and the index stayed busy through SessionStart(`compact`)'s wait, so the session was told
so in fixed words. It is owed that savepoint's brief: the first UserPromptSubmit or PostToolUse
after the worker writes the savepoint gives it once (with what the summary left out when that is
ready too, both within `[hooks] brief_budget`), recorded as given; while the savepoint is still
queued, such an event gives nothing and the brief stays owed, for a bounded time. The index lock
is held by the test (its own descriptor, in this process); the worker is not started, the test
runs its steps itself."""

from __future__ import annotations

import fcntl
import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from precompact import api
from precompact.config import hook_timeouts
from precompact.config import settings as configuration
from precompact.local import provenance, savepoint_log, snapshot
from precompact.ops import addendum, background, compaction
from precompact.restore import resurrect as resurrection
from support.commands import PRECOMPACT, precompact
from support.planted import session as planted_session
from support.planted import write_transcript
from support.projects import new_project
from support.transcript_gen import payload

SESSION = "fix12c-session"
PENDING = Path("logs") / "precompact-pending"
QUEUED_WORDS = "[precompact] This compaction's savepoint is not written yet"
PROMISE = "it comes with your first prompt or tool call after the savepoint is written."
BRIEF_START = "[precompact] Restored from savepoint 1 of"
ADDENDUM_START = "[precompact] What the compaction summary left out of savepoint 1"


class Compacted:
    """A project whose session's compaction left its savepoint queued (PreCompact, the index
    busy), its SessionStart(`compact`) run while the index stayed busy: its answer in `told`."""

    def __init__(self, tmp_path: Path, monkeypatch) -> None:
        self.project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
        self.planted = planted_session(5, cwd=str(self.project.path))
        self.transcript = write_transcript(self.planted, tmp_path / "session.jsonl")
        self.loaded = configuration.load(self.project.path)
        monkeypatch.setattr(background, "spawn", lambda _root: None)  # the test is the worker
        monkeypatch.setattr(hook_timeouts, "lock_wait", lambda _agent, _event: 0.2)  # the hooks' waits, shortened
        queued = snapshot.Session(
            session_id=SESSION, transcript_path=str(self.transcript), cwd=str(self.project.path), trigger="auto"
        )
        snapshot.queue(compaction.layer_1(self.loaded), queued)  # PreCompact, the lock busy

    def event(self, name: str, agent: str = "claude", **extra) -> str | None:
        """The answer to event `name` of the session, in this process."""
        sent = payload(name, self.project.path, self.transcript, session_id=SESSION, **extra)
        if name == "SessionStart":
            return api.on_session_start(self.loaded, sent, agent)
        if name == "PostCompact":
            assert api.on_post_compact(self.loaded, sent, agent)
            return None
        return api.on_prompt_or_tool(self.loaded, sent, agent)

    def hook(self, name: str, **extra) -> str | None:
        """The installed hook's additionalContext for event `name` (None: an empty answer)."""
        sent = payload(name, self.project.path, self.transcript, session_id=SESSION, **extra)
        done = precompact(self.project.path, "hook", stdin=sent)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"] if done.stdout else None

    def owed(self) -> bool:
        return (self.project.path / PENDING / f"{SESSION}.brief").exists()

    def deliveries(self) -> list[tuple[int, str | None]]:
        delivered = savepoint_log.read(self.project.logs).deliveries(self.loaded.instance, SESSION)
        return [(d.sequence, d.source) for d in delivered]


@pytest.fixture
def compacted(tmp_path, monkeypatch) -> Compacted:
    return Compacted(tmp_path, monkeypatch)


def start_while_the_index_is_busy(compacted: Compacted) -> str:
    with savepoint_log.locked(compacted.project.logs, 0):  # another save holds the index
        told = compacted.event("SessionStart", source="compact")
    assert told is not None and told.startswith(QUEUED_WORDS), told
    return told


def test_the_brief_a_session_start_could_not_give_comes_once_with_the_first_prompt_after_its_savepoint_is_written(
    compacted,
):
    told = start_while_the_index_is_busy(compacted)
    assert PROMISE in told and "Restored from" not in told and "✓" not in told, told
    assert compacted.owed() and compacted.deliveries() == []

    # Still queued (the index still busy): nothing, and the brief stays owed.
    with savepoint_log.locked(compacted.project.logs, 0):
        assert compacted.event("UserPromptSubmit", prompt="go on") is None
        assert compacted.hook("PostToolUse", tool_name="Bash") is None
    assert compacted.owed() and compacted.deliveries() == []

    assert compaction.write_queued(compacted.loaded).savepoints == 1  # the worker writes it
    given = compacted.hook("UserPromptSubmit", prompt="and now?")
    assert given is not None and given.startswith(BRIEF_START), given
    assert "Proof: savepoint 1, sha256:" in given and "integrity ✓ verified" in given, given
    newest = "Go ahead with the cleanup. Never touch the cobalt yarrow table while the migration runs."
    assert f"## Newest user request (verbatim)\n> {newest}" in given, "fenced as data, as at a session start"
    assert len(given) <= compacted.loaded.brief_budget // 2
    assert compacted.deliveries() == [(1, "compact")]
    assert not compacted.owed()
    # Given once: neither the next prompt nor a tool call repeats it.
    assert compacted.hook("UserPromptSubmit", prompt="and then?") is None
    assert compacted.hook("PostToolUse", tool_name="Read") is None


def test_the_owed_brief_comes_with_what_the_summary_left_out_within_the_budget_as_resurrect_shows_it(compacted):
    start_while_the_index_is_busy(compacted)
    with savepoint_log.locked(compacted.project.logs, 0):  # PostCompact: its summary queued after the savepoint
        compacted.event("PostCompact", compact_summary=compacted.planted.summary)
    assert compaction.write_queued(compacted.loaded).savepoints == 1  # records the summary, asks for the addendum
    assert addendum.prepare(compacted.loaded) == []
    assert (compacted.project.path / PENDING / f"{SESSION}.json").exists()

    given = compacted.hook("PostToolUse", tool_name="Bash")
    assert given is not None and given.startswith(BRIEF_START), given
    first, second = given.split("\n\n" + ADDENDUM_START)
    assert f"\n{ADDENDUM_START}" not in first and second.endswith("End of what the summary left out of savepoint 1.")
    assert len(given) <= compacted.loaded.brief_budget
    assert compacted.deliveries() == [(1, "compact")]
    assert list((compacted.project.path / PENDING).iterdir()) == []
    assert compacted.hook("UserPromptSubmit", prompt="and then?") is None
    # `resurrect --format brief` shows what the session was given (but for the savepoint's age).
    found = resurrection.from_this_machine(compacted.loaded, sequence=1)
    shown = api.compacted_brief(compacted.loaded, found)

    def ageless(text: str) -> str:
        return re.sub(r"saved [^,;]+ ago", "saved … ago", text)

    assert ageless(shown) == ageless(given)


def test_two_events_racing_for_the_owed_brief_give_it_once(compacted):
    start_while_the_index_is_busy(compacted)
    compaction.write_queued(compacted.loaded)
    racers = [
        subprocess.Popen(
            [PRECOMPACT, "hook"],
            cwd=compacted.project.path,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    for racer, name in zip(racers, ["UserPromptSubmit", "PostToolUse"] * 2, strict=True):
        assert racer.stdin is not None
        racer.stdin.write(json.dumps(payload(name, compacted.project.path, compacted.transcript, session_id=SESSION)))
        racer.stdin.close()
    answers = [racer.stdout.read() for racer in racers if racer.stdout is not None]
    assert [racer.wait() for racer in racers] == [0, 0, 0, 0]
    assert sum(BRIEF_START in answer for answer in answers) == 1, answers
    assert compacted.deliveries() == [(1, "compact")]


def test_a_brief_still_owed_when_its_time_is_up_is_dropped_with_a_line_naming_the_fix(compacted, monkeypatch):
    start_while_the_index_is_busy(compacted)
    monkeypatch.setattr(addendum, "OWED_SECONDS", 0.0)
    time.sleep(0.01)
    with savepoint_log.locked(compacted.project.logs, 0):
        assert compacted.event("UserPromptSubmit", prompt="go on") is None
    assert not compacted.owed()
    errors = (compacted.project.logs / "precompact-errors.log").read_text()
    assert (
        f"UserPromptSubmit: the brief of session {SESSION}'s compaction was not given: its savepoint was still queued"
        in errors
    )
    assert "`precompact flush` writes it" in errors, errors
    # Written later, it is briefed by no prompt: the session was told where it is.
    compaction.write_queued(compacted.loaded)
    assert compacted.hook("UserPromptSubmit", prompt="and now?") is None
    assert compacted.deliveries() == []


def test_an_owed_brief_no_event_comes_for_is_removed_by_the_worker_once_its_time_is_up(compacted, monkeypatch):
    """The session ends, or is resumed under another session id, before a prompt of it takes the
    brief: no event of that id ever reads the file, so the worker removes it once OWED_SECONDS
    are up, with a line; one still within its time stays, and so do the session's other files."""
    start_while_the_index_is_busy(compacted)
    compaction.write_queued(compacted.loaded)  # the worker writes the savepoint; no prompt of the session follows
    pending = compacted.project.path / PENDING
    # Left by a taker killed while giving another session's brief, as long ago.
    record = json.dumps({"session_id": "killed-taker", "source": "resume", "since": time.time()}).encode()
    (pending / "killed-taker.brief-taking").write_bytes(provenance.stamped(addendum.OWED_PURPOSE, record))
    (pending / "foreign.brief").write_text(json.dumps({"session_id": "foreign", "source": "compact", "since": 0}))
    assert addendum.prepare(compacted.loaded) == []
    assert compacted.owed() and (pending / "killed-taker.brief-taking").exists()
    assert not (pending / "foreign.brief").exists(), "not stamped here: never given, removed"

    monkeypatch.setattr(addendum, "OWED_SECONDS", 0.0)
    notes = addendum.prepare(compacted.loaded)

    assert not compacted.owed() and not (pending / "killed-taker.brief-taking").exists()
    late = "start was never given: no prompt or tool call of that session came within 0 minutes of it; removed"
    assert notes == [
        f'the brief owed to session {SESSION} since its "compact" {late}',
        f'the brief owed to session killed-taker since its "resume" {late}',
    ]
    assert compacted.hook("UserPromptSubmit", prompt="back at last") is None
    assert compacted.deliveries() == []


def test_the_worker_leaves_an_owed_brief_an_event_is_giving_to_it(compacted, monkeypatch):
    start_while_the_index_is_busy(compacted)
    monkeypatch.setattr(addendum, "OWED_SECONDS", 0.0)
    owed = compacted.project.path / PENDING / f"{SESSION}.brief"
    with owed.open("rb") as taking:
        fcntl.flock(taking.fileno(), fcntl.LOCK_EX)  # an event's take_once holds it
        assert addendum.prepare(compacted.loaded) == []
        assert owed.exists()


def test_an_owed_brief_this_machine_did_not_stamp_is_removed_and_gives_nothing(compacted):
    compaction.write_queued(compacted.loaded)  # savepoint 1 written; no session start briefed it
    pending = compacted.project.path / PENDING
    pending.mkdir(parents=True, exist_ok=True)
    (pending / f"{SESSION}.brief").write_text(
        json.dumps({"session_id": SESSION, "source": "compact", "since": time.time()})
    )
    assert compacted.hook("UserPromptSubmit", prompt="go on") is None
    assert not compacted.owed() and compacted.deliveries() == []
    # Stamped for another session, it is not this one's either.
    record = json.dumps({"session_id": "another-session", "source": "compact", "since": time.time()}).encode()
    (pending / f"{SESSION}.brief").write_bytes(provenance.stamped(addendum.OWED_PURPOSE, record))
    assert compacted.hook("UserPromptSubmit", prompt="go on") is None
    assert not compacted.owed() and compacted.deliveries() == []


def test_an_earlier_compaction_s_addendum_not_given_yet_is_dropped_when_the_next_one_s_brief_is_owed(compacted):
    stem = compacted.project.path / PENDING / SESSION
    stem.parent.mkdir(parents=True, exist_ok=True)
    earlier = json.dumps({"session_id": SESSION, "sequence": 0, "text": "EARLIER-ADDENDUM"}).encode()
    Path(f"{stem}.json").write_bytes(provenance.stamped(addendum.STAMP_PURPOSE, earlier))
    start_while_the_index_is_busy(compacted)
    assert not Path(f"{stem}.json").exists()
    with savepoint_log.locked(compacted.project.logs, 0):
        assert compacted.hook("UserPromptSubmit", prompt="go on") is None


def test_opencode_is_owed_nothing_its_plugin_asks_session_start_again_in_each_new_process(compacted):
    with savepoint_log.locked(compacted.project.logs, 0):
        told = compacted.event("SessionStart", agent="opencode", source="compact")
    assert told is not None and told.startswith(QUEUED_WORDS) and "it comes with" not in told, told
    assert not compacted.owed()
    compaction.write_queued(compacted.loaded)
    again = compacted.event("SessionStart", agent="opencode", source="compact")
    assert again is not None and again.startswith(BRIEF_START), again


def test_what_the_summary_left_out_not_ready_with_the_owed_brief_comes_with_a_later_event(compacted):
    start_while_the_index_is_busy(compacted)
    with savepoint_log.locked(compacted.project.logs, 0):
        compacted.event("PostCompact", compact_summary=compacted.planted.summary)
    compaction.write_queued(compacted.loaded)  # the addendum asked for, not computed yet
    first = compacted.hook("UserPromptSubmit", prompt="go on")
    assert first is not None and first.startswith(BRIEF_START) and ADDENDUM_START not in first, first
    assert compacted.hook("PostToolUse", tool_name="Bash") is None, "not computed yet"
    assert addendum.prepare(compacted.loaded) == []
    second = compacted.hook("PostToolUse", tool_name="Read")
    assert second is not None and second.startswith(ADDENDUM_START), second
    assert len(first) + len(second) <= compacted.loaded.brief_budget
    assert compacted.deliveries() == [(1, "compact")]


def test_a_brief_stays_owed_twice_as_long_as_the_worker_waits_for_the_index_at_one_entry():
    assert addendum.OWED_SECONDS == 2 * snapshot.QUEUED_LOCK_TIMEOUT_SECONDS == 20 * 60


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_claude_code_and_codex_are_owed_the_brief_at_their_prompt_or_tool_call(compacted, agent):
    """Both give UserPromptSubmit's and PostToolUse's additionalContext to the model (docs/agents.md):
    the same owed brief, through the same handler, whichever agent's event it is."""
    with savepoint_log.locked(compacted.project.logs, 0):
        told = compacted.event("SessionStart", agent=agent, source="compact")
        assert told is not None and PROMISE in told, told
        assert compacted.event("PostToolUse", agent=agent, tool_name="Bash") is None
    compaction.write_queued(compacted.loaded)
    given = compacted.event("PostToolUse", agent=agent, tool_name="Bash")
    assert given is not None and given.startswith(BRIEF_START), given
    assert compacted.event("UserPromptSubmit", agent=agent, prompt="x") is None
    assert compacted.deliveries() == [(1, "compact")]


def test_an_owed_brief_given_while_the_index_stays_busy_is_given_unrecorded_and_said_in_the_errors_log(compacted):
    start_while_the_index_is_busy(compacted)
    compaction.write_queued(compacted.loaded)
    with savepoint_log.locked(compacted.project.logs, 0):  # another save holds the index again
        given = compacted.event("UserPromptSubmit", prompt="go on")
    assert given is not None and given.startswith(BRIEF_START), given
    errors = (compacted.project.logs / "precompact-errors.log").read_text()
    assert "UserPromptSubmit: the brief of savepoint 1 is given unrecorded: " in errors, errors
    assert compacted.deliveries() == [] and not compacted.owed()


def test_the_owed_brief_benchmark_runs():
    """scripts/bench_owed_brief.py, one pair, so that the command docs/performance.md cites cannot rot."""
    import sys

    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(repo / "scripts" / "bench_owed_brief.py"), "1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert [line.split()[0] for line in done.stdout.splitlines()] == ["owed", "none"], done.stdout


def test_a_worker_finishing_between_the_events_two_reads_leaves_the_brief_given(compacted, monkeypatch):
    """review12d F4: the event read the index, then the queue; a worker that wrote the savepoint
    in between (its line appended after the index was read, its entry removed before the queue
    was) left the event seeing it in neither: the brief taken and nothing given, for good."""
    start_while_the_index_is_busy(compacted)
    entries = snapshot.queue_entries
    finished = []

    def worker_finishes_now(logs):
        if not finished:
            monkeypatch.setattr(snapshot, "queue_entries", entries)  # the worker reads the queue itself
            finished.append(compaction.write_queued(compacted.loaded).savepoints)
        return entries(logs)

    monkeypatch.setattr(snapshot, "queue_entries", worker_finishes_now)
    given = compacted.event("PostToolUse", tool_name="Bash")
    assert finished == [1]
    assert given is not None and given.startswith(BRIEF_START), given
    assert compacted.deliveries() == [(1, "compact")] and not compacted.owed()


def test_an_event_while_the_brief_waits_on_a_queued_savepoint_starts_the_worker(compacted, monkeypatch):
    """review12d F2: a worker that died left the entry, and no prompt or tool call started one:
    the brief waited out its 20 minutes for a write one worker run makes at once."""
    start_while_the_index_is_busy(compacted)
    started = []
    monkeypatch.setattr(background, "spawn", lambda root: started.append(root))
    with savepoint_log.locked(compacted.project.logs, 0):  # still queued: the worker waits for the index
        assert compacted.event("UserPromptSubmit", prompt="go on") is None
    assert started == [compacted.project.path] and compacted.owed()
