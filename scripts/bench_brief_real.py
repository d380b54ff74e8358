"""What the model is given after a compaction (#46), scored on the held-out set of realistic
sessions of #41 (tests/dropped_eval/): of the facts the summary dropped, how many it brings back;
of the facts the summary kept, how many it repeats; and how long it is.

Each session is replayed the way Claude Code 2.1.332 runs an automatic compaction
(tests/python/support/claude_code.py has what was observed), through the real `precompact` as
the hook processes Claude Code starts, in a throwaway HOME and project (`precompact init`, both
layers off: the worker still indexes each savepoint for recall), with the hooks `precompact
install` registers in the project's .claude/settings.json, each run as Claude Code runs it
(`/bin/sh -c COMMAND`, the event's JSON on stdin) and only when a registered matcher takes it:

  1. the transcript (scripts/bench_dropped_real.py builds it from session.txt, in the project's
     directory) written where Claude Code keeps it, ~/.claude/projects/<folder>/<session>.jsonl;
  2. PreCompact (trigger `auto`); then the detached jobs it started are waited for (the
     summariser's request, which comes next, takes longer than they do on these sessions);
  3. SessionStart (source `compact`): its additionalContext is the first part of what the
     model is given;
  4. PostCompact with `compact_summary` = the session's summary.md, then the compact_boundary
     and the summary entry appended to the transcript (Claude Code writes them only after
     PostCompact), then the jobs it started waited for;
  5. UserPromptSubmit with a plain prompt: its additionalContext is the second part;
  6. PostToolUse of a Read the model makes next: its additionalContext, if any, is reported
     apart (`after`), to see that nothing is delivered twice; it is not scored.

Scoring, with scripts/bench_dropped_real.py's anchor matching: a labelled fact is in what the
model is given when one of its anchors occurs in the SessionStart and UserPromptSubmit texts
together (casefolded, whitespace collapsed).

    back      = dropped facts given / dropped facts           (target >= 0.80)
    repeated  = kept facts given / kept facts                 (target <= 0.30)
    length    = characters given per session, median and max  (target <= 4,000)

An anchor is a substring, so a fact counts as given even when it occurs only inside a longer
quote (a request quoted verbatim names the ticket): "back" is an upper bound of what a reader
would find, and "repeated" counts what the model is shown again, in whatever part.

    .venv/bin/python scripts/bench_brief_real.py [--session NAME] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
sys.path.insert(0, str(REPO / "scripts"))

import bench_dropped_real as labelled
from precompact.transcript.claude_code import project_folder
from support.commands import precompact
from support.projects import new_project

TARGET_BACK = 0.80
TARGET_REPEATED = 0.30
TARGET_CHARACTERS = 4_000
# Sessions replayed at once: each is a few processes in a row, and the machines this runs on
# (CI, a laptop) have two cores to spare.
PARALLEL = 2
MODEL = "claude-opus-5-5"
PROMPT = "Thanks. Carry on from where you were."
# The events of the replay, in order: a session's replay fires each where an installed hook takes it.
EVENTS = ("PreCompact", "SessionStart", "PostCompact", "UserPromptSubmit", "PostToolUse")
# A hook or a detached job that outlives this is stuck, not slow.
WAIT_SECONDS = 120


@dataclass
class Replay:
    """One session replayed: what each hook gave the model, and what went wrong."""

    session: str
    session_start: str = ""
    prompt: str = ""
    after: str = ""
    events: list[str] = field(default_factory=list)  # the events the installed hooks took, in order
    problems: list[str] = field(default_factory=list)


def replay(folder: Path, root: Path) -> Replay:
    """`folder`'s session compacted as Claude Code compacts it, in a new project under `root`."""
    done = Replay(folder.name)
    # A folder of its own: `init` makes the age identity beside the keypair, and two inits
    # making one there at once fail.
    (root / folder.name).mkdir()
    try:
        project = new_project(root / folder.name, "project", git_layer=False, chain_layer=False)
    except subprocess.CalledProcessError as e:
        said = (e.stderr or b"").decode(errors="replace").strip()
        done.problems.append(f"the project could not be made: {e.cmd[:2]} exited {e.returncode}: {said[-300:]}")
        return done
    installed = precompact(project.path, "install")
    if installed.returncode != 0:
        done.problems.append(f"precompact install exited {installed.returncode}: {installed.stderr.strip()}")
        return done
    hooks = _installed_hooks(project.path)

    session = labelled.parse(folder / "session.txt")
    session.cwd = str(project.path)
    entries = labelled.build(session)
    session_id = entries[0]["sessionId"]
    transcript = Path(os.environ["HOME"]) / ".claude" / "projects" / project_folder(session.cwd) / f"{session_id}.jsonl"
    transcript.parent.mkdir(parents=True, exist_ok=True)
    transcript.write_text(labelled.jsonl(entries), encoding="utf-8")
    common = {"session_id": session_id, "transcript_path": str(transcript), "cwd": session.cwd}

    def fire(event: str, subject: str | None, **fields) -> str:
        """`event` run through every installed hook that takes it; the additionalContext they give."""
        payload = {**common, "hook_event_name": event, **fields}
        given = []
        for command in _commands(hooks, event, subject):
            done.events.append(event)
            ran = subprocess.run(
                ["/bin/sh", "-c", command],
                input=json.dumps(payload).encode(),
                cwd=project.path,
                capture_output=True,
                timeout=WAIT_SECONDS,
                check=False,
            )
            answer, problems = _context(event, ran)
            given += [answer] if answer else []
            done.problems += problems
        return "\n".join(given)

    fire("PreCompact", "auto", trigger="auto", custom_instructions=None)
    done.problems += _wait_for_jobs(project.path)
    done.session_start = fire("SessionStart", "compact", source="compact", model=MODEL)
    summary = (folder / "summary.md").read_text(encoding="utf-8")
    fire("PostCompact", "auto", trigger="auto", compact_summary=summary)
    with transcript.open("a", encoding="utf-8") as f:
        f.write(labelled.jsonl(_compaction_entries(entries[-1], summary)))
    done.problems += _wait_for_jobs(project.path)
    done.prompt = fire("UserPromptSubmit", None, prompt=PROMPT, permission_mode="default")
    read = {"file_path": f"{session.cwd}/README.md"}
    done.after = fire(
        "PostToolUse",
        "Read",
        tool_name="Read",
        tool_input=read,
        tool_response={"type": "text", "file": {**read, "content": "# readme\n"}},
        tool_use_id="toolu_after_compaction",
        permission_mode="default",
    )
    return done


def _installed_hooks(project: Path) -> dict[str, list[dict]]:
    """The hook groups of each event in every settings file Claude Code reads for `project`, read
    once after `precompact install`, as a session started then finds them."""
    hooks: dict[str, list[dict]] = {}
    for settings in (
        Path(os.environ["HOME"]) / ".claude" / "settings.json",
        project / ".claude" / "settings.json",
        project / ".claude" / "settings.local.json",
    ):
        if settings.is_file():
            for event, groups in json.loads(settings.read_text(encoding="utf-8")).get("hooks", {}).items():
                hooks.setdefault(event, []).extend(groups)
    return hooks


def _commands(hooks: dict[str, list[dict]], event: str, subject: str | None) -> list[str]:
    """The precompact hook commands installed for `event` whose matcher takes `subject` (the
    trigger, the source, the tool's name; a group without a matcher takes every one)."""
    found = []
    for group in hooks.get(event, []):
        matcher = group.get("matcher") or "*"
        if subject is not None and matcher != "*" and not re.fullmatch(matcher, subject):
            continue
        found += [h["command"] for h in group["hooks"] if h.get("type") == "command" and "precompact" in h["command"]]
    return found


def _context(event: str, ran: subprocess.CompletedProcess) -> tuple[str, list[str]]:
    """A hook's additionalContext for the model ("" for none), and what went wrong: a hook that
    had its work to do says nothing on stderr (it says there what it could not do)."""
    said = ran.stderr.decode(errors="replace").strip()
    problems = [f"{event}: the hook said on stderr: {said[:300]}"] if said else []
    if ran.returncode != 0:
        return "", [*problems, f"{event}: the hook exited {ran.returncode}"]
    out = ran.stdout.decode(errors="replace")
    if event == "PreCompact" or not out.strip():  # PreCompact's words go to the summariser, never the model
        return "", problems
    try:
        answer = json.loads(out)
    except ValueError:
        answer = None
    if isinstance(answer, dict) and "systemMessage" in answer:
        return "", [*problems, f"{event}: {answer['systemMessage']}"]
    specific = answer.get("hookSpecificOutput") if isinstance(answer, dict) else None
    context = specific.get("additionalContext") if isinstance(specific, dict) else None
    if not isinstance(context, str):
        return "", [*problems, f"{event}: not a hook answer with an additionalContext string: {out[:300]!r}"]
    return context, problems


def _compaction_entries(last: dict, summary: str) -> list[dict]:
    """What Claude Code appends to the transcript once PostCompact has run: the boundary and the
    summary, as a user entry flagged isCompactSummary."""
    base = {k: last[k] for k in ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch")}
    boundary = {
        **base,
        "parentUuid": None,
        "logicalParentUuid": last["uuid"],
        "type": "system",
        "subtype": "compact_boundary",
        "content": "Conversation compacted",
        "isMeta": False,
        "level": "info",
        "compactMetadata": {"trigger": "auto", "preTokens": 160_000},
        "uuid": f"{last['uuid'][:-12]}b0a0da000001",
        "timestamp": last["timestamp"],
    }
    return [
        boundary,
        {
            **base,
            "parentUuid": boundary["uuid"],
            "type": "user",
            "message": {"role": "user", "content": summary},
            "isVisibleInTranscriptOnly": True,
            "isCompactSummary": True,
            "uuid": f"{last['uuid'][:-12]}b0a0da000002",
            "timestamp": last["timestamp"],
        },
    ]


def _wait_for_jobs(project: Path) -> list[str]:
    """Waits until no detached precompact job runs for `project` (a process whose command line
    names its directory: the worker is started with it). The worker's lock alone would not do:
    a job just spawned has not taken it yet."""
    root = str(project.resolve())
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if not _jobs_of(root):
            return []
        time.sleep(0.1)
    return [f"a detached job for {root} still runs after {WAIT_SECONDS} s"]


def _jobs_of(root: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:  # gone meanwhile
            continue
        if root.encode() in argv:
            found.append(int(proc.name))
    return found


# --- the scorer ---------------------------------------------------------------------------------


@dataclass
class Scored:
    """What one session's replay gave the model, against its labelled facts."""

    session: str
    characters: int
    session_start_characters: int
    prompt_characters: int
    after_characters: int
    dropped: Counter = field(default_factory=Counter)  # by fact class
    back: Counter = field(default_factory=Counter)
    kept: Counter = field(default_factory=Counter)
    repeated: Counter = field(default_factory=Counter)
    missed: list[str] = field(default_factory=list)
    repeated_ids: list[str] = field(default_factory=list)


def score(session: str, facts: list[dict], session_start: str, prompt: str, after: str = "") -> Scored:
    """The labelled `facts` against what the model was given: `session_start` and `prompt`
    together (`after` is only measured)."""
    given = labelled.folded(f"{session_start}\n{prompt}")
    result = Scored(session, len(session_start) + len(prompt), len(session_start), len(prompt), len(after))
    for fact in facts:
        given_here = labelled.refers_to(given, fact)
        if fact["dropped"]:
            result.dropped[fact["class"]] += 1
            result.back[fact["class"]] += given_here
            if not given_here:
                result.missed.append(fact["id"])
        else:
            result.kept[fact["class"]] += 1
            result.repeated[fact["class"]] += given_here
            if given_here:
                result.repeated_ids.append(fact["id"])
    return result


def ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def spread(values: list[int]) -> dict:
    return {"median": statistics.median(values), "max": max(values)} if values else {"median": 0, "max": 0}


def report(replays: list[Replay], scored: list[Scored], seconds: float) -> dict:
    total = {
        name: sum((getattr(s, name) for s in scored), Counter()) for name in ("dropped", "back", "kept", "repeated")
    }
    dropped, back = sum(total["dropped"].values()), sum(total["back"].values())
    kept, repeated = sum(total["kept"].values()), sum(total["repeated"].values())
    return {
        "sessions": len(scored),
        "seconds": round(seconds, 1),
        "targets": {"back": TARGET_BACK, "repeated": TARGET_REPEATED, "characters": TARGET_CHARACTERS},
        "back": ratio(back, dropped),
        "repeated": ratio(repeated, kept),
        "dropped_facts": dropped,
        "dropped_back": back,
        "kept_facts": kept,
        "kept_repeated": repeated,
        "characters": spread([s.characters for s in scored]),
        "session_start_characters": spread([s.session_start_characters for s in scored]),
        "prompt_characters": spread([s.prompt_characters for s in scored]),
        "after_characters": spread([s.after_characters for s in scored]),
        "by_class": {
            c: {
                "dropped": total["dropped"][c],
                "back": total["back"][c],
                "back_share": ratio(total["back"][c], total["dropped"][c]),
                "kept": total["kept"][c],
                "repeated": total["repeated"][c],
                "repeated_share": ratio(total["repeated"][c], total["kept"][c]),
            }
            for c in labelled.CLASSES
        },
        "per_session": [
            {
                "session": s.session,
                "events": r.events,
                "characters": s.characters,
                "session_start_characters": s.session_start_characters,
                "prompt_characters": s.prompt_characters,
                "after_characters": s.after_characters,
                "dropped": sum(s.dropped.values()),
                "back": sum(s.back.values()),
                "kept": sum(s.kept.values()),
                "repeated": sum(s.repeated.values()),
                "missed": s.missed,
                "repeated_ids": s.repeated_ids,
                "given": {"session_start": r.session_start, "prompt": r.prompt, "after": r.after},
            }
            for r, s in zip(replays, scored, strict=True)
        ],
        "events_run": [e for e in EVENTS if any(e in r.events for r in replays)],
        "problems": [f"{r.session}: {p}" for r in replays for p in r.problems],
    }


def _mark(met: bool) -> str:
    return "met" if met else "NOT met"


def render(result: dict) -> str:
    chars = result["characters"]
    back, repeated = result["back"] or 0.0, result["repeated"] or 0.0
    lines = [
        (
            f"{result['sessions']} sessions replayed in {result['seconds']:.0f} s; what the model is given at "
            f"SessionStart(compact) and the next UserPromptSubmit, together:"
        ),
        (
            f"back      {result['back']}  ({result['dropped_back']} of {result['dropped_facts']} dropped facts)   "
            f"target >= {TARGET_BACK:.2f}: {_mark(back >= TARGET_BACK)}"
        ),
        (
            f"repeated  {result['repeated']}  ({result['kept_repeated']} of {result['kept_facts']} kept facts)   "
            f"target <= {TARGET_REPEATED:.2f}: {_mark(repeated <= TARGET_REPEATED)}"
        ),
        (
            f"length    median {chars['median']:.0f}, max {chars['max']} characters   "
            f"target <= {TARGET_CHARACTERS:,}: {_mark(chars['max'] <= TARGET_CHARACTERS)}"
        ),
        (
            f"          of it SessionStart median {result['session_start_characters']['median']:.0f}, "
            f"UserPromptSubmit median {result['prompt_characters']['median']:.0f}; "
            f"a PostToolUse after them: max {result['after_characters']['max']} (not scored)"
        ),
        (
            f"hooks installed and run: {', '.join(result['events_run'])}; not installed: "
            f"{', '.join(e for e in EVENTS if e not in result['events_run']) or 'none'}"
        ),
        "by class          back (given / dropped)   repeated (given / kept)",
        *(
            f"  {c:12} {v['back']:5}/{v['dropped']:<3} {_share(v['back_share'])}     "
            f"{v['repeated']:5}/{v['kept']:<3} {_share(v['repeated_share'])}"
            for c, v in result["by_class"].items()
        ),
        "per session       chars (SessionStart + UserPromptSubmit)   back   repeated",
        *(
            f"  {s['session'][:30]:30} {s['characters']:5} ({s['session_start_characters']} + "
            f"{s['prompt_characters']})  {s['back']:3}/{s['dropped']:<3} {s['repeated']:3}/{s['kept']:<3}"
            for s in result["per_session"]
        ),
    ]
    if result["problems"]:
        lines.append("PROBLEMS (the figures above do not count what these hooks should have given):")
        lines += [f"  {p}" for p in result["problems"]]
    return "\n".join(lines)


def _share(value: float | None) -> str:
    return "  -  " if value is None else f"{value:.3f}"


def run(folders: list[Path]) -> dict:
    """Every session in `folders` replayed (PARALLEL at once) in a throwaway HOME, and scored."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="precompact-bench-brief-") as scratch:
        root = Path(scratch)
        # Every precompact process started from here (the hooks, init, install) reads and writes
        # this throwaway HOME and these stores, never the user's.
        for name, folder in (
            ("HOME", "home"),
            ("XDG_CONFIG_HOME", "config"),
            ("XDG_STATE_HOME", "state"),
            ("XDG_DATA_HOME", "data"),
        ):
            (root / folder).mkdir()
            os.environ[name] = str(root / folder)
        with ThreadPoolExecutor(PARALLEL) as pool:
            replays = list(pool.map(lambda folder: replay(folder, root), folders))
    scored = [
        score(r.session, labelled.labels(folder), r.session_start, r.prompt, r.after)
        for r, folder in zip(replays, folders, strict=True)
    ]
    return report(replays, scored, time.monotonic() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--session", help="replay only this session (a folder name under tests/dropped_eval/)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON, with what each hook gave")
    args = parser.parse_args()
    result = run(labelled.session_dirs(args.session))
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else render(result))
    return 1 if result["problems"] else 0


if __name__ == "__main__":
    throwaway_home.use()
    sys.exit(main())
