"""`precompact import`: the project's existing Claude Code sessions archived, one savepoint per
session, oldest first.

Claude Code keeps the sessions started in a directory as `~/.claude/projects/<folder>/<session
id>.jsonl` (uncompact.project_folder), and a session's subagents' sidechains as
`<folder>/<session id>/subagents/agent-*.jsonl`; it deletes both after `cleanupPeriodDays`. A
session with sidechains is saved from one file that holds its own entries, then each sidechain's
(sorted by name), so the savepoint keeps them together. Running it again adds only what is new: a
session whose last said entry its newest savepoint already has is left as it is.

With `agent` codex, gemini or opencode, the sessions are that agent's that ran in the project (or
below it), found and read by transcript/agents.py, one savepoint each in the same way (OpenCode's
from its database, opened read-only).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from precompact.boundary import session_file
from precompact.config import settings as configuration
from precompact.local import capture, savepoint_log, snapshot
from precompact.ops import compaction
from precompact.transcript import agents, codex, conversation

SAVED, UNCHANGED, EMPTY, FAILED = "saved", "unchanged", "empty", "failed"
OUTCOMES = (SAVED, UNCHANGED, EMPTY, FAILED)


@dataclass(frozen=True)
class Imported:
    session_id: str
    transcript: Path
    sidechains: int
    outcome: str
    sequence: int | None = None
    reason: str | None = None

    def to_json(self) -> dict:
        return {
            "session_id": self.session_id,
            "transcript": str(self.transcript),
            "sidechains": self.sidechains,
            "outcome": self.outcome,
            "sequence": self.sequence,
            "reason": self.reason,
        }


def sidechains(transcript: Path) -> list[Path]:
    folder = transcript.with_suffix("") / "subagents"
    try:
        return sorted(
            p for p in folder.iterdir() if p.name.startswith("agent-") and p.suffix == ".jsonl" and p.is_file()
        )
    except OSError:
        return []


def run(
    loaded: configuration.Config,
    home: Path | None = None,
    progress: Callable[[int, int, Imported], None] | None = None,
    agent: str = agents.CLAUDE,
) -> list[Imported]:
    """Archives each session of `agent` run in the project's root that is not archived as it is now
    (an instance the command line or environment chose, once no other project writes it to the
    same chain: ops.instance_collision)."""
    from precompact.ops import instance_collision

    instance_collision.refuse_chosen(loaded, "import")
    claude = agent == agents.CLAUDE
    if agent == agents.OPENCODE:
        database, ids = agents.opencode_sessions(loaded.root, home)
        found: list = [(database, session_id) for session_id in ids]
    else:
        found = capture.transcripts(loaded.root, home) if claude else agents.session_files(agent, loaded.root, home)
    done = []
    for number, transcript in enumerate(found, 1):
        if isinstance(transcript, codex.Unlisted):
            result = Imported(transcript.rollout.stem, transcript.rollout, 0, FAILED, reason=transcript.reason)
        elif claude:
            result = _one(loaded, transcript)
        elif agent == agents.OPENCODE:
            result = _one_of(loaded, agent, *transcript)
        else:
            result = _one_of(loaded, agent, transcript)
        done.append(result)
        if progress is not None:
            progress(number, len(found), result)
    if any(r.outcome == SAVED for r in done):
        from precompact.ops import background

        background.spawn(loaded.root)
    return done


def _one(loaded: configuration.Config, transcript: Path) -> Imported:
    session_id = transcript.stem
    extra = sidechains(transcript)
    with tempfile.TemporaryDirectory(prefix="precompact-import-") as scratch:
        try:
            source = _with_sidechains(transcript, extra, Path(scratch)) if extra else transcript
        except OSError as e:
            return Imported(session_id, transcript, len(extra), FAILED, reason=f"cannot read it: {e.strerror or e}")
        said = conversation.last_said(source)
        if said is None:
            return Imported(session_id, transcript, len(extra), EMPTY)
        saved = savepoint_log.savepoints(loaded.logs, loaded.instance)
        held = capture.archived(saved, session_id, agents.CLAUDE, said, transcript)
        if held is not None:
            return Imported(session_id, transcript, len(extra), UNCHANGED, held.sequence)
        session = snapshot.Session(
            session_id=session_id, transcript_path=str(source), cwd=str(loaded.root), trigger=capture.IMPORT_TRIGGER
        )
        try:
            written = snapshot.create_savepoint(compaction.layer_1(loaded), session)
        except (OSError, savepoint_log.LockTimeout) as e:
            return Imported(session_id, transcript, len(extra), FAILED, reason=str(e))
    return Imported(session_id, transcript, len(extra), SAVED, written.sequence)


def _one_of(loaded: configuration.Config, agent: str, session_file: Path, named: str | None = None) -> Imported:
    """`_one` for a Codex CLI or Gemini CLI session file, or session `named` of OpenCode's
    database `session_file`."""
    from precompact.local import registry

    kept = registry.keeps_outside(loaded.root)  # a forgotten project's document lasts the savepoint only
    with contextlib.ExitStack() as reading:
        try:
            read = reading.enter_context(agents.reading(agent, loaded.logs, str(session_file), named, kept=kept))
        except OSError as e:  # the reason is quoted where it is shown
            return Imported(
                named or session_file.stem, session_file, 0, FAILED, reason=f"cannot read it: {e.strerror or e}"
            )
        return _save_document(loaded, agent, session_file, named, read)


def _save_document(
    loaded: configuration.Config, agent: str, session_file: Path, named: str | None, read: agents.Read
) -> Imported:
    """`_one_of`'s savepoint of the document `read`, while it is open."""
    session_id = read.session_id or named or session_file.stem
    said = conversation.last_said(Path(read.transcript_path))
    if said is None:
        return Imported(session_id, session_file, 0, EMPTY)
    saved = savepoint_log.savepoints(loaded.logs, loaded.instance)
    held = capture.archived(saved, session_id, agent, said, session_file)
    if held is not None:
        return Imported(session_id, session_file, 0, UNCHANGED, held.sequence)
    session = snapshot.Session(
        session_id=session_id,
        transcript_path=read.transcript_path,
        cwd=str(loaded.root),
        trigger=capture.IMPORT_TRIGGER,
        agent=agent,
        agent_version=read.version,
        agent_transcript=str(session_file),
    )
    try:
        written = snapshot.create_savepoint(compaction.layer_1(loaded), session)
    except (OSError, savepoint_log.LockTimeout) as e:
        return Imported(session_id, session_file, 0, FAILED, reason=str(e))
    return Imported(session_id, session_file, 0, SAVED, written.sequence)


def _with_sidechains(transcript: Path, extra: list[Path], scratch: Path) -> Path:
    """One file: the session's lines, then each sidechain's, each part ending with a newline."""
    combined = scratch / transcript.name
    with combined.open("wb") as out:
        for part in (transcript, *extra):
            with session_file.open_read(part) as f:
                shutil.copyfileobj(f, out)
                if f.tell() and (f.seek(-1, 2), f.read(1))[1] != b"\n":
                    out.write(b"\n")
    return combined
