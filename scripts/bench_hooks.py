"""What each hook event costs as a whole process, against the two yardsticks it is judged by (issue
42): a bare `python -c pass` of the same interpreter for an event with nothing to do, and the
I/O floor (`cp` + `sha256sum` of the same bytes) for PreCompact. Every pair runs in turn (hook,
yardstick, hook, yardstick, ...) and the ratio is taken pair by pair, so it holds while a shared
machine's speed drifts. CPU is user + system time as the kernel accounts the finished process
(`os.wait4`), wall is start to exit.

Every PreCompact run is a first run: a new project and a new session, so nothing a previous run
saved (chunks, the read position) is reused; the worker it starts is waited for before the next
pair. SessionStart is timed delivering a brief (a new session resuming after a savepoint);
SessionEnd archiving what a session said since its last savepoint (1 MB more, appended to its
transcript, which grows by 1 MB a run).

Usage: .venv/bin/python scripts/bench_hooks.py [--runs 10] [--mb 10] [--only noop|precompact|session]
                                               [--precompact PATH] [--against PATH] [--json]
`--precompact` times another build's command (its interpreter is the yardstick's). `--against`
runs another build's SessionStart in turn with this one's, each delivering the brief of the same
savepoint to a new session, and takes their ratio pair by pair: on a loaded machine, two runs of
the benchmark made one after the other differ by more than a change of a few per cent."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from precompact.local import savepoint_log
from support.commands import PRECOMPACT, worker_finished
from support.process_cost import Cost, io_floor, paired, run
from support.projects import new_project
from support.secret_corpus import stdlib_sources
from support.transcript_gen import generate, payload

MB = 1_000_000
PLUGIN_LAUNCHER = REPO / "bin" / "precompact"


def figures(costs: list[Cost], yardsticks: list[Cost]) -> dict:
    """Medians (and max) of each side, and the medians of the pair-by-pair ratio and difference."""

    def ms(values: list[float]) -> dict:
        return {"median": round(statistics.median(values) * 1000, 1), "max": round(max(values) * 1000, 1)}

    return {
        "cpu_ms": ms([c.cpu for c in costs]),
        "wall_ms": ms([c.wall for c in costs]),
        "yardstick_cpu_ms": ms([y.cpu for y in yardsticks]),
        "yardstick_wall_ms": ms([y.wall for y in yardsticks]),
        "cpu_over_yardstick_ms": round(statistics.median(c.cpu - y.cpu for c, y in zip(costs, yardsticks)) * 1000, 1),
        "wall_over_yardstick_ms": round(
            statistics.median(c.wall - y.wall for c, y in zip(costs, yardsticks)) * 1000, 1
        ),
        "cpu_ratio": round(statistics.median(c.cpu / max(y.cpu, 1e-3) for c, y in zip(costs, yardsticks)), 2),
        "wall_ratio": round(statistics.median(c.wall / y.wall for c, y in zip(costs, yardsticks)), 2),
    }


def bare_interpreter(command: str) -> list[str]:
    """`python -c pass` of the interpreter that runs `command` (its #! line)."""
    first = Path(command).read_text(errors="replace").splitlines()[0]
    interpreter = first.removeprefix("#!").split()
    if interpreter[0] == "/usr/bin/env":
        interpreter = [shutil.which(interpreter[1]) or interpreter[1]]
    return [*interpreter, "-c", "pass"]


def launcher_interpreter() -> list[str]:
    """The plugin launcher's `python3` resolved to the interpreter itself (a version manager's
    shim on PATH is a shell script that costs more than the interpreter)."""
    found = subprocess.run(
        ["python3", "-c", "import sys; print(sys.executable)"], capture_output=True, text=True, check=True
    )
    return [found.stdout.strip()]


def gemini_chat(path: Path, prompt_tokens: int) -> Path:
    """A Gemini CLI chat file whose latest answer used `prompt_tokens`: far below Gemini's
    compression threshold, PreCompress has nothing to do."""
    path.write_text(
        json.dumps({"type": "user", "content": "hello"})
        + "\n"
        + json.dumps({"type": "gemini", "content": "hi", "tokens": {"input": prompt_tokens}})
        + "\n"
    )
    return path


def no_op_events(root: Path, command: str, runs: int) -> dict:
    """Events with nothing to do, for each agent's entry: outside a precompact project, and in
    one (a start that is not resumed, a resume with no savepoint, a PreCompress with no
    compression coming, a prompt with nothing pending)."""
    outside = root / "outside"
    outside.mkdir()
    project = new_project(root, "noop", git_layer=False, chain_layer=False).path
    chat = gemini_chat(root / "chat.jsonl", 1200)
    bare = bare_interpreter(command)
    launcher = launcher_interpreter()
    cases = {}
    for where, cwd in (("outside a project", outside), ("in a project", project)):
        for entry, args, event in (
            ("precompact hook", [command, "hook"], payload("SessionStart", cwd, source="startup")),
            (
                "precompact hook --agent codex",
                [command, "hook", "--agent", "codex"],
                payload("SessionStart", cwd, source="startup"),
            ),
            (
                "precompact hook --agent gemini",
                [command, "hook", "--agent", "gemini"],
                {**payload("PreCompress", cwd, chat), "trigger": "auto"},
            ),
            (
                "plugin launcher (bin/precompact plugin-hook)",
                [*launcher, str(PLUGIN_LAUNCHER), "plugin-hook"],
                payload("SessionStart", cwd, source="startup"),
            ),
        ):
            if entry.startswith("plugin") and where == "in a project":
                continue  # in a project the launcher runs the installed `precompact hook`: the rows above
            yardstick = [*launcher, "-c", "pass"] if entry.startswith("plugin") else bare
            name = f"{entry}, {event['hook_event_name']}{':' + event['source'] if 'source' in event else ''}, {where}"
            cases[name] = figures(*paired(args, json.dumps(event).encode(), cwd, yardstick, runs))
        name = f"precompact hook, SessionStart:resume with no savepoint, {where}"
        event = payload("SessionStart", cwd, source="resume")
        cases[name] = figures(*paired([command, "hook"], json.dumps(event).encode(), cwd, bare, runs))
        # Every prompt and tool call: with nothing pending for the session (no addendum, no owed
        # brief), answered from the pending files' stats alone.
        name = f"precompact hook, UserPromptSubmit with nothing pending, {where}"
        event = payload("UserPromptSubmit", cwd, prompt="go on")
        cases[name] = figures(*paired([command, "hook"], json.dumps(event).encode(), cwd, bare, runs))
    return cases


def wait_for_worker(project: Path) -> None:
    deadline = time.monotonic() + 300
    while not worker_finished(project):
        if time.monotonic() > deadline:
            raise SystemExit(f"bench_hooks: the worker did not finish in {project}")
        time.sleep(0.05)


def pre_compact(root: Path, command: str, megabytes: float, runs: int, real_code: bool) -> dict:
    """PreCompact's first savepoint of a `megabytes` transcript (made-up code, or a session
    reading the standard library's sources), against the I/O floor of the same bytes."""
    name = f"pre-{megabytes:g}{'-real' if real_code else ''}"
    costs, floors = [], []
    transcript = None
    for number in range(runs + 1):  # the first pair warms the page cache and is not counted
        project = new_project(root, f"{name}-{number}", git_layer=True, chain_layer=False).path
        if transcript is None or real_code:
            # A session of real code read files of its own project, which the transcript names by
            # their absolute paths: each project gets its own (copying the first one's, every file
            # it names would be outside the project, and no file's contents would be saved).
            transcript = generate(
                root / f"{name}-{number}.jsonl",
                megabytes * MB,
                project=project,
                sources=stdlib_sources() if real_code else (),
            ).path
        event = json.dumps(payload("PreCompact", project, transcript)).encode()
        cost = run([command, "hook"], event, project)
        wait_for_worker(project)
        floor = run(io_floor(transcript, root))
        if number:
            costs.append(cost)
            floors.append(floor)
        shutil.rmtree(project / "logs", ignore_errors=True)
    return figures(costs, floors)


def session_events(root: Path, command: str, megabytes: float, runs: int, against: str | None = None) -> dict:
    """SessionStart delivering a brief of a `megabytes` savepoint, and SessionEnd archiving 1 MB
    said since the session's last savepoint, each against the bare interpreter; with `against`,
    that command's SessionStart too, run in turn with `command`'s."""
    project = new_project(root, "session", git_layer=True, chain_layer=False).path
    transcript = generate(root / "session.jsonl", megabytes * MB, project=project).path
    event = payload("PreCompact", project, transcript)
    run([command, "hook"], json.dumps(event).encode(), project)
    wait_for_worker(project)
    bare = bare_interpreter(command)
    starts, ends, yardsticks_start, yardsticks_end, others = [], [], [], [], []
    for number in range(runs + 1):
        start = payload("SessionStart", project, transcript, source="resume")
        cost = run([command, "hook"], json.dumps(start).encode(), project)
        yardstick = run(bare)
        if against:  # a session of its own: a session is given a savepoint's brief once
            other = payload("SessionStart", project, transcript, source="resume")
            other_cost = run([against, "hook"], json.dumps(other).encode(), project)
        if number:
            starts.append(cost)
            yardsticks_start.append(yardstick)
            if against:
                others.append(other_cost)
        # The session goes on in its own transcript, as a session does: its SessionEnd reads on
        # from where its last savepoint's reading ended (a copy at another path is read whole).
        generate(root / "said.jsonl", MB, project=project, seed=100 + number)
        with transcript.open("ab") as f:
            f.write((root / "said.jsonl").read_bytes())
        end = payload("SessionEnd", project, transcript, session_id=event["session_id"], reason="exit")
        cost = run([command, "hook"], json.dumps(end).encode(), project)
        yardstick = run(bare)
        wait_for_worker(project)
        if number:
            ends.append(cost)
            yardsticks_end.append(yardstick)
    # Each start timed is one that delivered its brief (one given none costs less): the index
    # records each brief given.
    events = savepoint_log.read(project / "logs").events
    delivered = sum(1 for event in events if event.get("event") == savepoint_log.Event.BRIEF_DELIVERED)
    starts_run = (runs + 1) * (2 if against else 1)
    if delivered != starts_run:
        raise RuntimeError(
            f"{delivered} briefs delivered for {starts_run} SessionStarts: the figures are not of a brief"
        )
    results = {
        f"SessionStart:resume with the brief of a {megabytes:g} MB savepoint": figures(starts, yardsticks_start),
        f"SessionEnd, 1 MB said since the session's last savepoint (a {megabytes:g} MB transcript before)": figures(
            ends, yardsticks_end
        ),
    }
    if against:
        results[f"SessionStart:resume, {against} run in turn with it, against the bare interpreter"] = figures(
            others, yardsticks_start
        )
        results[f"SessionStart:resume, this build against {against} (the yardstick), run in turn"] = figures(
            starts, others
        )
    return results


def markdown(results: dict) -> str:
    lines = [
        "| event | CPU median (max) | bare / floor CPU | CPU over it | wall median (max) | bare / floor wall | wall ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, f in results.items():
        lines.append(
            f"| {name} | {f['cpu_ms']['median']:.0f} ({f['cpu_ms']['max']:.0f}) ms "
            f"| {f['yardstick_cpu_ms']['median']:.0f} ms | +{f['cpu_over_yardstick_ms']:.0f} ms ({f['cpu_ratio']}×) "
            f"| {f['wall_ms']['median']:.0f} ({f['wall_ms']['max']:.0f}) ms | {f['yardstick_wall_ms']['median']:.0f} ms "
            f"| {f['wall_ratio']}× |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="counted pairs per event")
    parser.add_argument(
        "--mb", type=float, default=10, help="transcript size for PreCompact and the session events (0.1: 100 KB)"
    )
    parser.add_argument("--only", choices=("noop", "precompact", "session"), help="one group of events")
    parser.add_argument("--precompact", default=PRECOMPACT, help="the `precompact` command to time")
    parser.add_argument(
        "--against", help="another build's `precompact`, whose SessionStart runs in turn with this one's"
    )
    parser.add_argument("--json", action="store_true", help="JSON instead of a Markdown table")
    args = parser.parse_args()
    command = os.path.abspath(args.precompact)  # the hooks run in the projects' directories
    root = Path(tempfile.mkdtemp(prefix="precompact-bench-hooks-"))
    os.environ["XDG_CONFIG_HOME"] = str(root / "config")  # the projects' approvals go with them
    results: dict = {}
    try:
        if args.only in (None, "noop"):
            results |= no_op_events(root, command, args.runs)
        if args.only in (None, "precompact"):
            for real_code in (False, True):
                label = f"PreCompact, first savepoint of {args.mb:g} MB{' of real code' if real_code else ''} (vs I/O floor)"
                results[label] = pre_compact(root, command, args.mb, args.runs, real_code)
        if args.only in (None, "session"):
            against = os.path.abspath(args.against) if args.against else None
            results |= session_events(root, command, args.mb, args.runs, against)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(results, indent=2) if args.json else markdown(results))


if __name__ == "__main__":
    throwaway_home.use()
    main()
