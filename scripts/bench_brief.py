"""What a compacted session is given, scored against hand-labelled facts (issue 46): each session of
the fresh (tests/python/support/dropped_fresh.py) or the development set (dropped_dev.py) is
replayed the way Claude Code 2.1.332 runs a compaction, and what SessionStart(`compact`) and the
next UserPromptSubmit gave together is scored against the session's labels.

The replay, per session: a throwaway HOME and project (Layers 2 and 3 off: they run in the worker
and give nothing to the session), `precompact install`, the transcript written where Claude Code
keeps it (`~/.claude/projects/<the project's directory, each character but letters and digits
turned into ->/<session>.jsonl`, the session's directory replaced by the project's throughout),
then the hook commands `install` wrote to the project's `.claude/settings.json`, run as Claude Code
runs them (through the shell, the event's JSON on stdin, in the project): PreCompact (manual) →
SessionStart(`compact`) → PostCompact with the summary → the `compact_boundary` and summary
entries appended to the transcript → the worker waited for → UserPromptSubmit → one PostToolUse.

A labelled fact is **back** when the text given names it as `scripts/bench_dropped.py`'s scorer
decides that a listed item names a fact (support/dropped_dev.names): the label's words, whole and
in order, in the given text, both normalised as the rule normalises (`restore.dropped.normalised`:
case folded, plain quotes, punctuation dropped). Labels of the noise kinds the summary "keeps" (a
routine command, a line number) are not facts and are not scored. `back` = dropped facts named /
dropped facts; `repeated` = kept facts named / kept facts; per class as `bench_dropped` counts
them. The PostToolUse after the UserPromptSubmit must give nothing (the addendum is given once):
what it gives is counted as `given_again` and not scored.

    .venv/bin/python scripts/bench_brief.py --fresh [--budget 4000] [--json] [--misses] [--show]
    .venv/bin/python scripts/bench_brief.py --dev
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from precompact.restore.dropped import normalised
from support import dropped_dev, dropped_fresh
from support.commands import PRECOMPACT
from support.projects import new_project, trust

SETS = {"fresh": dropped_fresh.SESSIONS, "dev": dropped_dev.SESSIONS}
# A worker that has not made the addendum by then is stuck, not slow.
WORKER_SECONDS = 180
HOOK_SECONDS = 120
PROMPT = "Thanks. Go on with the next step."
DEFAULT_BUDGET = 4000


@dataclass
class Given:
    """What one replayed session was given."""

    name: str
    first: str  # SessionStart(compact)'s additionalContext
    second: str  # the next UserPromptSubmit's ("" when it gave nothing)
    again: str  # the PostToolUse after it (must be "")
    labels: list[dropped_dev.Label]


@dataclass
class Score:
    back: dict[str, int] = field(default_factory=dict)  # class -> dropped facts the given text names
    dropped: dict[str, int] = field(default_factory=dict)
    repeated: dict[str, int] = field(default_factory=dict)  # class -> kept facts it names
    kept: dict[str, int] = field(default_factory=dict)
    lengths: list[tuple[int, int]] = field(default_factory=list)  # (first, second) per session
    given_again: int = 0
    misses: list[tuple[str, dropped_dev.Label]] = field(default_factory=list)
    repeats: list[tuple[str, dropped_dev.Label]] = field(default_factory=list)

    def add(self, given: Given) -> None:
        said = f" {normalised(given.first + chr(10) + given.second)} "
        self.lengths.append((len(given.first), len(given.second)))
        self.given_again += bool(given.again)
        for label in given.labels:
            kind = dropped_dev.label_class(label)
            if kind == "noise":
                continue
            named = f" {normalised(label.says)} " in said
            if label.dropped:
                self.dropped[kind] = self.dropped.get(kind, 0) + 1
                self.back[kind] = self.back.get(kind, 0) + named
                if not named:
                    self.misses.append((given.name, label))
            else:
                self.kept[kind] = self.kept.get(kind, 0) + 1
                self.repeated[kind] = self.repeated.get(kind, 0) + named
                if named:
                    self.repeats.append((given.name, label))

    def figures(self) -> dict:
        totals = [a + b for a, b in self.lengths]
        back, dropped = sum(self.back.values()), sum(self.dropped.values())
        repeated, kept = sum(self.repeated.values()), sum(self.kept.values())
        return {
            "sessions": len(self.lengths),
            "back": round(back / max(dropped, 1), 3),
            "back_facts": back,
            "dropped_facts": dropped,
            "repeated": round(repeated / max(kept, 1), 3),
            "repeated_facts": repeated,
            "kept_facts": kept,
            "by_class": {
                kind: {
                    "back": self.back.get(kind, 0),
                    "dropped": self.dropped.get(kind, 0),
                    "repeated": self.repeated.get(kind, 0),
                    "kept": self.kept.get(kind, 0),
                }
                for kind in sorted(set(self.dropped) | set(self.kept))
            },
            "characters": {
                "median": statistics.median(totals) if totals else 0,
                "max": max(totals, default=0),
                "session_start_median": statistics.median(a for a, _ in self.lengths) if totals else 0,
                "addendum_median": statistics.median(b for _, b in self.lengths) if totals else 0,
            },
            "given_again": self.given_again,
        }


def claude_projects_folder(home: Path, directory: Path) -> Path:
    """Where Claude Code keeps the sessions started in `directory`."""
    return home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(directory))


def replay(make, root: Path, budget: int) -> Given:
    """One labelled session compacted through the installed hooks, as Claude Code runs them, with
    `budget` as the project's `[hooks] brief_budget`."""
    made = make()
    conversation = made.conversation
    project = new_project(root, "project", git_layer=False, chain_layer=False).path
    if budget != DEFAULT_BUDGET:
        config = project / ".precompact.toml"
        config.write_text(config.read_text().replace(f"brief_budget = {DEFAULT_BUDGET}", f"brief_budget = {budget}"))
        trust(project)
    installed = subprocess.run(
        [PRECOMPACT, "install"], cwd=project, capture_output=True, text=True, timeout=HOOK_SECONDS, check=False
    )
    if installed.returncode != 0:
        raise SystemExit(f"precompact install failed: {installed.stderr.strip()}")
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    session_id = str(uuid.uuid4())
    old, new = conversation.cwd, str(project)
    transcript = claude_projects_folder(Path(os.environ["HOME"]), project) / f"{session_id}.jsonl"
    transcript.parent.mkdir(parents=True)
    with transcript.open("w", encoding="utf-8") as f:
        for entry in conversation.entries:
            line = json.dumps(entry, ensure_ascii=False).replace(old, new)
            f.write(json.dumps({**json.loads(line), "sessionId": session_id}, ensure_ascii=False) + "\n")
    summary = made.summary.replace(old, new)
    labels = [dropped_dev.Label(label.kind, label.says.replace(old, new), label.dropped) for label in made.labels]

    def run(event: str, query: str | None = None, **extra) -> str:
        """The additionalContext the installed commands of `event` give ("" for none)."""
        payload = {
            "session_id": session_id,
            "transcript_path": str(transcript),
            "cwd": str(project),
            "hook_event_name": event,
            **extra,
        }
        given = []
        for group in hooks.get(event, []):
            if not _matches(group.get("matcher"), query):
                continue
            for command in group["hooks"]:
                done = subprocess.run(
                    command["command"],
                    shell=True,
                    cwd=project,
                    input=json.dumps(payload),
                    capture_output=True,
                    text=True,
                    timeout=command.get("timeout", HOOK_SECONDS),
                    check=False,
                )
                if done.returncode != 0:
                    raise SystemExit(f"{event} exited {done.returncode}: {done.stderr.strip()}")
                if event != "PreCompact" and done.stdout.strip():
                    given.append(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])
        return "\n\n".join(given)

    run("PreCompact", "manual", trigger="manual", custom_instructions="")
    first = run("SessionStart", "compact", source="compact")
    run("PostCompact", "manual", trigger="manual", compact_summary=summary)
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    with transcript.open("a", encoding="utf-8") as f:
        boundary = {"type": "system", "subtype": "compact_boundary", "sessionId": session_id, "timestamp": now}
        f.write(json.dumps(boundary) + "\n")
        entry = {
            "type": "user",
            "isCompactSummary": True,
            "isVisibleInTranscriptOnly": True,
            "sessionId": session_id,
            "timestamp": now,
            "message": {"role": "user", "content": summary},
        }
        f.write(json.dumps(entry, ensure_ascii=False) + "\n")
    _wait_for_the_addendum(project, session_id)
    second = run("UserPromptSubmit", None, prompt=PROMPT)
    again = run(
        "PostToolUse",
        "Bash",
        tool_name="Bash",
        tool_input={"command": "git status"},
        tool_response={"stdout": "nothing to commit", "stderr": ""},
        tool_use_id="toolu_bench",
    )
    return Given(make.__name__, first, second, again, labels)


def _matches(matcher: str | None, query: str | None) -> bool:
    """Claude Code's matcher: none, "" or "*" match every query; else one of its `|` names."""
    return not matcher or matcher == "*" or query is None or query in matcher.split("|")


def _wait_for_the_addendum(project: Path, session_id: str) -> None:
    """Until the session's addendum is ready, or the worker is done without one."""
    pending = project / "logs" / "precompact-pending"
    deadline = time.monotonic() + WORKER_SECONDS
    while time.monotonic() < deadline:
        if (pending / f"{session_id}.json").exists():
            return
        asked = [pending / f"{session_id}{suffix}" for suffix in (".request", ".computing", ".awaiting")]
        if not any(p.exists() for p in asked) and not _worker_running(project):
            return
        time.sleep(0.1)
    raise SystemExit(f"the worker made no addendum within {WORKER_SECONDS} s: see {project}/logs/precompact-worker.log")


def _worker_running(project: Path) -> bool:
    lock = project / "logs" / "precompact-worker.lock"
    if not lock.exists():
        return False
    with lock.open("a") as held:
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
    return False


def measure(sessions, budget: int = DEFAULT_BUDGET, show: bool = False) -> Score:
    """Every session of `sessions` replayed in a throwaway HOME with `budget` as its brief budget,
    scored; with `show`, what each was given goes to stderr."""
    scored = Score()
    with tempfile.TemporaryDirectory(prefix="bench-brief-") as scratch:
        top = Path(scratch)
        saved = {name: os.environ.get(name) for name in ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME")}
        try:
            for number, make in enumerate(sessions):
                root = top / f"{number}"
                home = root / "home"
                home.mkdir(parents=True)
                os.environ.update(
                    HOME=str(home),
                    XDG_CONFIG_HOME=str(home / ".config"),
                    XDG_STATE_HOME=str(home / ".local" / "state"),
                    XDG_DATA_HOME=str(home / ".local" / "share"),
                )
                given = replay(make, root, budget)
                if show:
                    print(f"===== {given.name}\n{given.first}\n\n{given.second}\n", file=sys.stderr)
                scored.add(given)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    return scored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--fresh", action="store_true", help="the fresh labelled sessions (support/dropped_fresh.py)")
    which.add_argument("--dev", action="store_true", help="the development sessions (support/dropped_dev.py)")
    parser.add_argument(
        "--budget",
        type=int,
        default=DEFAULT_BUDGET,
        help="the projects' [hooks] brief_budget (the default's; a smaller one shows the ranking under pressure)",
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--misses", action="store_true", help="list each dropped fact not back, each kept one repeated")
    parser.add_argument("--show", action="store_true", help="print what each session was given (stderr)")
    args = parser.parse_args()
    sessions = SETS["fresh" if args.fresh else "dev"]
    started = time.perf_counter()
    scored = measure(sessions, args.budget, args.show)
    figures = scored.figures()
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    chars = figures["characters"]
    print(f"{figures['sessions']} sessions replayed in {time.perf_counter() - started:.0f} s")
    print(f"back      {figures['back']:.3f}  ({figures['back_facts']} of {figures['dropped_facts']} dropped facts)")
    print(f"repeated  {figures['repeated']:.3f}  ({figures['repeated_facts']} of {figures['kept_facts']} kept facts)")
    print(
        f"characters: median {chars['median']}, max {chars['max']} "
        f"(SessionStart median {chars['session_start_median']}, addendum median {chars['addendum_median']})"
    )
    print(
        "by class (back/dropped, repeated/kept): "
        + ", ".join(
            f"{c} {v['back']}/{v['dropped']} ({v['repeated']}/{v['kept']})" for c, v in figures["by_class"].items()
        )
    )
    print(f"given again by the PostToolUse after: {figures['given_again']}")
    if args.misses:
        for name, label in scored.misses:
            print(f"  not back  {name}: {label.kind}: {label.says}")
        for name, label in scored.repeats:
            print(f"  repeated  {name}: {label.kind}: {label.says}")


if __name__ == "__main__":
    throwaway_home.use()
    main()
