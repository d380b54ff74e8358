"""No session start briefs an older savepoint as the newest state while the newer one is queued
(review12d F3), and no compaction is given what an earlier compaction's summary left out (review12d
F5). The hooks run in this process; the worker is never started: the test runs its steps itself
(`compaction.write_queued`, `addendum.prepare`). The index lock is held by the test where a hook is
to find it busy."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from precompact import api
from precompact.config import hook_timeouts
from precompact.config import settings as configuration
from precompact.local import capture, provenance, savepoint_log, snapshot
from precompact.ops import addendum, background, compaction
from support.planted import session as planted_session
from support.planted import write_transcript
from support.projects import new_project, queue_entries, trust
from support.transcript_gen import payload

SESSION, OTHER = "r12d-session", "r12d-other-session"
PENDING = Path("logs") / "precompact-pending"
NEWEST_QUEUED = "[precompact] The newest savepoint is not written yet"
COMPACTION_QUEUED = "[precompact] This compaction's savepoint is not written yet"
PROMISE = "it comes with your first prompt or tool call after the savepoint is written."
ADDENDUM_START = "[precompact] What the compaction summary left out of savepoint"


class Project:
    """A project whose session (`SESSION`) has a planted transcript; hooks run in this process."""

    def __init__(self, tmp_path: Path, monkeypatch) -> None:
        self.project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
        self.planted = planted_session(5, cwd=str(self.project.path))
        self.transcript = write_transcript(self.planted, tmp_path / "session.jsonl")
        self.tmp = tmp_path
        self.loaded = configuration.load(self.project.path)
        self.settings = compaction.layer_1(self.loaded)
        monkeypatch.setattr(background, "spawn", lambda _root: None)  # the test is the worker
        monkeypatch.setattr(hook_timeouts, "lock_wait", lambda _agent, _event: 0.2)  # the hooks' waits, shortened

    def session(self, trigger: str, session_id: str = SESSION, transcript: Path | None = None, agent: str = "claude"):
        return snapshot.Session(
            session_id=session_id,
            transcript_path=str(transcript or self.transcript),
            cwd=str(self.project.path),
            trigger=trigger,
            agent=agent,
        )

    def says(self, *requests: str, transcript: Path | None = None) -> None:
        """The session goes on: each request, and an answer."""
        with (transcript or self.transcript).open("a") as f:
            for n, request in enumerate(requests):
                for role, text in (("user", request), ("assistant", "On it.")):
                    entry = {
                        "type": role,
                        "uuid": f"{role}-{time.time_ns()}-{n}",
                        "sessionId": SESSION,
                        "cwd": str(self.project.path),
                        "timestamp": "2026-12-05T15:00:00.000Z",
                        "message": {"role": role, "content": text},
                    }
                    f.write(json.dumps(entry) + "\n")

    def event(self, name: str, agent: str = "claude", session_id: str = SESSION, **extra) -> str | None:
        sent = payload(name, self.project.path, self.transcript, session_id=session_id, **extra)
        if name == "SessionStart":
            return api.on_session_start(self.loaded, sent, agent)
        if name == "PostCompact":
            api.on_post_compact(self.loaded, sent, agent)
            return None
        if name == "PreCompact":
            return compaction.pre_compact(self.loaded, sent, agent)
        return api.on_prompt_or_tool(self.loaded, sent, agent)

    def deliveries(self, session_id: str = SESSION) -> list[tuple[int, str | None]]:
        delivered = savepoint_log.read(self.project.logs).deliveries(self.loaded.instance, session_id)
        return [(d.sequence, d.source) for d in delivered]

    def owed(self, session_id: str = SESSION) -> bool:
        return (self.project.path / PENDING / f"{session_id}.brief").exists()

    def pending(self) -> list[str]:
        folder = self.project.path / PENDING
        return sorted(p.name for p in folder.iterdir()) if folder.exists() else []

    def worker(self) -> None:
        compaction.write_queued(self.loaded)
        addendum.prepare(self.loaded)


@pytest.fixture
def project(tmp_path, monkeypatch) -> Project:
    return Project(tmp_path, monkeypatch)


def assert_no_brief(told: str | None, words: str) -> None:
    assert told is not None and told.startswith(words), told
    assert PROMISE in told and "Restored from" not in told and "✓" not in told, told


# F3: a session start while the savepoint it is to be briefed with is queued.


def test_a_session_resumed_while_its_compaction_s_savepoint_is_queued_is_told_so_then_given_the_newest_brief_once(
    project,
):
    """An earlier savepoint of the session (1, never briefed to it); the session goes on and
    compacts, its savepoint queued (the index busy through SessionStart(`compact`)); the user
    resumes before the worker wrote it: the resume names no savepoint 1 as the newest state with
    a ✓ and records nothing; once written, the next prompt gives savepoint 2's brief, once."""
    snapshot.create_savepoint(project.settings, project.session("manual"))
    project.says(*(f"NEW REQUEST {n}: move the invoices to the ledger service" for n in range(3)))
    snapshot.queue(project.settings, project.session("auto"), reason=None)  # PreCompact: queued
    with savepoint_log.locked(project.project.logs, 0):
        assert_no_brief(project.event("SessionStart", source="compact"), COMPACTION_QUEUED)

    resumed = project.event("SessionStart", source="resume")

    assert_no_brief(resumed, NEWEST_QUEUED)
    assert "The newest savepoint written, 1 (sha256:" in resumed and "was saved before the one queued" in resumed
    assert project.deliveries() == [] and project.owed()
    assert project.event("UserPromptSubmit", prompt="go on") is None, "still queued: nothing yet"
    assert compaction.write_queued(project.loaded).savepoints == 1
    given = project.event("UserPromptSubmit", prompt="and now?")
    assert given is not None and given.startswith("[precompact] Restored from savepoint 2 of"), given
    assert "> NEW REQUEST 2: move the invoices to the ledger service" in given
    assert project.deliveries() == [(2, "resume")] and not project.owed()
    assert project.event("PostToolUse", tool_name="Bash") is None
    assert project.event("SessionStart", source="resume") is None, "given once"


def test_a_resume_whose_savepoint_was_written_meanwhile_is_briefed_at_once_and_owes_nothing_more(project):
    """The session start that owed the brief is followed by one that gives it (the worker wrote the
    savepoint between them): the owed brief is settled, never a second brief at the next prompt."""
    snapshot.create_savepoint(project.settings, project.session("manual", session_id=OTHER))
    project.says("NEW REQUEST: the ledger")
    snapshot.queue(project.settings, project.session("auto"), reason=None)
    with savepoint_log.locked(project.project.logs, 0):
        assert_no_brief(project.event("SessionStart", source="compact"), COMPACTION_QUEUED)
    compaction.write_queued(project.loaded)

    resumed = project.event("SessionStart", source="resume")

    assert resumed is not None and resumed.startswith("[precompact] Restored from savepoint 2 of"), resumed
    assert not project.owed() and project.deliveries() == [(2, "resume")]
    assert project.event("UserPromptSubmit", prompt="go on") is None


def test_codex_s_resume_start_right_after_post_compact_briefs_no_other_session_s_savepoint(project):
    """Codex's order at a compaction at the start of a turn: PreCompact, PostCompact, SessionStart
    `resume`, SessionStart `compact`. The thread's first savepoint still queued, the `resume` start
    gave another session's savepoint, recorded as given; now both starts say it is queued, and the
    thread's own brief comes once, with a prompt or tool call, once written."""
    other = write_transcript(planted_session(9, cwd=str(project.project.path)), project.tmp / "other.jsonl")
    snapshot.create_savepoint(project.settings, project.session("auto", session_id=OTHER, transcript=other))
    # PreCompact queued the thread's savepoint; PostCompact's recovery could not write it in its wait.
    snapshot.queue(project.settings, project.session("auto", agent="codex"), reason=None)
    with savepoint_log.locked(project.project.logs, 0):  # the index busy through the session starts
        assert_no_brief(project.event("SessionStart", agent="codex", source="resume"), NEWEST_QUEUED)
        assert_no_brief(project.event("SessionStart", agent="codex", source="compact"), COMPACTION_QUEUED)
    assert project.deliveries() == [] and project.owed()

    compaction.write_queued(project.loaded)
    given = project.event("PostToolUse", agent="codex", tool_name="shell")

    assert given is not None and given.startswith("[precompact] Restored from savepoint 2 of"), given
    assert "another session's" not in given
    assert project.deliveries() == [(2, "compact")]
    assert project.event("UserPromptSubmit", agent="codex", prompt="x") is None


def test_a_resume_under_a_new_session_id_is_owed_the_brief_under_its_own(project):
    """Claude Code may resume a conversation under a new session id: the brief the compaction's
    start owed is keyed by the old one, which no event of the new session reads. The resume's own
    start owes it under the new id, and the new session is given the newest savepoint's brief,
    which says whose it is."""
    snapshot.create_savepoint(project.settings, project.session("auto", session_id=OTHER))
    project.says("NEW REQUEST: the ledger")
    snapshot.queue(project.settings, project.session("auto"), reason=None)
    with savepoint_log.locked(project.project.logs, 0):
        assert_no_brief(project.event("SessionStart", source="compact"), COMPACTION_QUEUED)

    resumed = project.event("SessionStart", source="resume", session_id="r12d-new-id")

    assert_no_brief(resumed, NEWEST_QUEUED)
    assert project.owed("r12d-new-id")
    compaction.write_queued(project.loaded)
    given = project.event("UserPromptSubmit", session_id="r12d-new-id", prompt="go on")
    assert given is not None and given.startswith("[precompact] Restored from savepoint 2 of"), given
    assert f'another session\'s savepoint (session "{SESSION}"' in given
    assert project.deliveries("r12d-new-id") == [(2, "resume")]


def test_a_resume_is_briefed_as_before_when_nothing_queued_would_be_its_brief(project):
    """Allowed: a savepoint queued that the resume would not be briefed with does not hold its brief
    back. The session's own SessionEnd savepoint (a resumed session has what it holds), and one its
    written savepoints already hold (dropped unwritten)."""
    snapshot.create_savepoint(project.settings, project.session("auto", session_id=OTHER))
    other_again = project.session("auto", session_id=OTHER)
    snapshot.queue(project.settings, other_again, reason=None)  # reads no further than savepoint 1
    project.says("NEW REQUEST: the ledger")
    snapshot.queue(project.settings, project.session(capture.SESSION_END_TRIGGER), reason=None)
    assert len(queue_entries(project.project)) == 2

    resumed = project.event("SessionStart", source="resume")

    assert resumed is not None and resumed.startswith("[precompact] Restored from savepoint 1 of"), resumed
    assert project.deliveries() == [(1, "resume")] and not project.owed()


def test_another_session_s_newer_savepoint_queued_holds_a_startup_brief_back(project):
    """`startup` listed in the sources: a newer savepoint of another session queued (its SessionEnd,
    say) is the newest state, so the older written one is not briefed as if it were."""
    config = project.project.path / ".precompact.toml"
    config.write_text(
        config.read_text().replace(
            'session_start_sources = ["compact", "resume"]', 'session_start_sources = ["compact", "resume", "startup"]'
        )
    )
    trust(project.project.path)
    project.loaded = configuration.load(project.project.path)
    snapshot.create_savepoint(project.settings, project.session("auto", session_id=OTHER))
    time.sleep(1.1)  # the hooks' times are in seconds
    other = write_transcript(planted_session(7, cwd=str(project.project.path)), project.tmp / "third.jsonl")
    snapshot.queue(project.settings, project.session("session_end", "r12d-third", other), reason=None)

    started = project.event("SessionStart", source="startup", session_id="r12d-fresh")

    assert started is not None and started.startswith(NEWEST_QUEUED), started
    assert project.deliveries("r12d-fresh") == []


# F5: a second compaction while the first's savepoint is queued.

SUMMARY_1 = "<summary>The user asked about the staging proxy.</summary>"  # says little: much left out


def kept_facts_in(project: Project, text: str | None) -> int:
    """How many facts the planted summary (compaction 2's) keeps appear in `text`."""
    return sum(1 for fact in project.planted.planted if fact.kept and fact.text in (text or ""))


def test_a_second_compaction_is_never_given_what_the_first_compaction_s_summary_left_out(project):
    """Compaction 1 with the index busy (savepoint and summary queued, the worker held up); the
    session goes on; compaction 2's PreCompact writes savepoint 1 itself, and the worker runs during
    compaction 2's summariser: summary 1, its own entry dropped as held by savepoint 1 (made after
    summary 1's hook), is an earlier compaction's, no addendum asked for it; the prompts after
    compaction 2 are given one addendum, of summary 2."""
    with savepoint_log.locked(project.project.logs, 0):  # compaction 1
        project.event("PreCompact")
        project.event("SessionStart", source="compact")
        project.event("PostCompact", compact_summary=SUMMARY_1)
    assert len(queue_entries(project.project)) == 2
    time.sleep(1.1)  # compaction 2 comes later (the hooks' times are in seconds)
    project.says("ok, carry on")
    assert "savepoint 1" in project.event("PreCompact", trigger="manual")
    project.worker()  # the worker PreCompact 2 started, during compaction 2's summariser

    index = [
        json.loads(line) for line in (project.project.logs / "precompact-savepoint.jsonl").read_text().splitlines()
    ]
    summaries = [(e["event"], e["sequence"], e["summary"]) for e in index if "SUMMARY" in e["event"]]
    assert summaries == [("EARLIER_COMPACT_SUMMARY", 1, "The user asked about the staging proxy.")]
    assert not any(name.endswith((".json", ".request")) for name in project.pending()), project.pending()

    brief = project.event("SessionStart", source="compact")
    assert brief is not None and brief.startswith("[precompact] Restored from savepoint 1 of"), brief
    assert not project.owed(), "compaction 1's owed brief is settled by compaction 2's"
    project.event("PostCompact", compact_summary=f"<summary>{project.planted.summary}</summary>")
    assert project.event("UserPromptSubmit", prompt="go on") is None, "summary 2's addendum is not computed yet"
    addendum.prepare(project.loaded)
    given = project.event("PostToolUse", tool_name="Bash")
    assert given is not None and given.startswith(f"{ADDENDUM_START} 1 of"), given
    assert kept_facts_in(project, given) == 0, "compared with summary 2"
    assert project.event("PostToolUse", tool_name="Read") is None
    [saved] = savepoint_log.savepoints(project.project.logs)
    assert saved.compact_summary == project.planted.summary


def test_a_second_compaction_of_the_same_savepoint_drops_the_first_summary_s_addendum_not_given(project):
    """Nothing said between two compactions (the second keeps savepoint 1, #92089's second
    `/compact`): the first summary's addendum, ready and not given yet, is dropped when the second
    summary is recorded; the next events give the second's, once."""
    project.event("PreCompact")
    project.event("SessionStart", source="compact")
    project.event("PostCompact", compact_summary=SUMMARY_1)
    addendum.prepare(project.loaded)
    assert f"{SESSION}.json" in project.pending()
    assert "Nothing was said since precompact savepoint 1" in project.event("PreCompact", trigger="manual")
    assert project.event("SessionStart", source="compact") is None, "savepoint 1's brief was given"

    project.event("PostCompact", compact_summary=f"<summary>{project.planted.summary}</summary>")

    assert f"{SESSION}.json" not in project.pending()
    assert project.event("UserPromptSubmit", prompt="go on") is None
    addendum.prepare(project.loaded)
    given = project.event("PostToolUse", tool_name="Bash")
    assert given is not None and given.startswith(f"{ADDENDUM_START} 1 of"), given
    assert kept_facts_in(project, given) == 0, "compared with summary 2"
    assert project.event("PostToolUse", tool_name="Read") is None


def ready(project: Project, sequence: int) -> None:
    """An addendum of savepoint `sequence` made for the session, not given yet."""
    folder = project.project.path / PENDING
    folder.mkdir(parents=True, exist_ok=True)
    record = json.dumps({"session_id": SESSION, "sequence": sequence, "text": f"ADDENDUM-{sequence}"}).encode()
    (folder / f"{SESSION}.json").write_bytes(provenance.stamped(addendum.STAMP_PURPOSE, record))


@pytest.mark.parametrize("later", ["awaiting", "request", "ready"])
def test_an_earlier_compaction_s_summary_recorded_late_asks_for_nothing(project, later):
    """Summary 1 recorded after compaction 2's is awaited, asked for or made (its queue entry
    waited for a worker): no addendum of it is asked for, and compaction 2's is left as it was."""
    if later == "ready":
        ready(project, 2)
    else:
        suffix = ".awaiting" if later == "awaiting" else ".request"
        folder = project.project.path / PENDING
        folder.mkdir(parents=True, exist_ok=True)
        record = {"session_id": SESSION, "sequence": 2, "agent": "claude", "summary": None}
        (folder / f"{SESSION}{suffix}").write_text(json.dumps(record))
    before = {name: (project.project.path / PENDING / name).read_bytes() for name in project.pending()}

    assert addendum.request(project.loaded, SESSION, 1, "claude") is False

    after = {name: (project.project.path / PENDING / name).read_bytes() for name in project.pending()}
    assert after == before


def test_a_summary_recorded_while_its_savepoint_s_addendum_is_computed_replaces_it(project, monkeypatch):
    """The worker computes savepoint 1's addendum against summary 1 while summary 2 of the same
    savepoint is recorded: the addendum computed is dropped, never made ready, and summary 2's
    request waits for the next round."""
    snapshot.create_savepoint(project.settings, project.session("auto"))
    assert addendum.request(project.loaded, SESSION, 1, "claude", summary="summary 1")
    compute = addendum._compute

    def summary_2_arrives(*args):
        text = compute(*args)
        assert addendum.request(project.loaded, SESSION, 1, "claude", summary="summary 2")
        return text

    monkeypatch.setattr(addendum, "_compute", summary_2_arrives)
    assert addendum.prepare(project.loaded) == []

    assert project.pending() == [f"{SESSION}.request"]
    asked = json.loads((project.project.path / PENDING / f"{SESSION}.request").read_text())
    assert asked["summary"] == "summary 2"


def test_a_brief_a_resume_owed_still_queued_when_its_time_is_up_is_dropped_with_a_line_naming_the_fix(
    project, monkeypatch
):
    snapshot.create_savepoint(project.settings, project.session("auto", session_id=OTHER))
    project.says("NEW REQUEST: the ledger")
    snapshot.queue(project.settings, project.session("auto"), reason=None)
    assert_no_brief(project.event("SessionStart", source="resume"), NEWEST_QUEUED)
    monkeypatch.setattr(addendum, "OWED_SECONDS", 0.0)
    time.sleep(0.01)
    with savepoint_log.locked(project.project.logs, 0):
        assert project.event("UserPromptSubmit", prompt="go on") is None
    assert not project.owed()
    errors = (project.project.logs / "precompact-errors.log").read_text()
    assert (
        f"UserPromptSubmit: the brief owed to session {SESSION} was not given: its savepoint was still queued" in errors
    )
    assert "`precompact flush` writes it" in errors, errors


def test_a_session_uncompact_wrote_is_neither_briefed_nor_owed_another_session_s_queued_savepoint(project):
    """`uncompact` wrote the session (it holds the whole history): no other savepoint's brief is its,
    so a newer one of another session queued owes it nothing and says nothing."""
    snapshot.create_savepoint(project.settings, project.session("auto", session_id=OTHER))
    [saved] = savepoint_log.savepoints(project.project.logs)
    savepoint_log.mark(project.project.logs, saved, savepoint_log.Event.UNCOMPACTED, session_id="r12d-uncompacted")
    project.says("NEW REQUEST: the ledger")
    snapshot.queue(project.settings, project.session("auto", session_id=OTHER), reason=None)

    assert project.event("SessionStart", source="resume", session_id="r12d-uncompacted") is None
    assert not project.owed("r12d-uncompacted") and project.deliveries("r12d-uncompacted") == []
