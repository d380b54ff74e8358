"""The hooks' time under the real Codex CLI and Gemini CLI (docs/agents.md): sessions of the pinned
CLIs against the mock model APIs of the end-to-end tests (tests/python/support/codex_cli.py,
gemini_cli.py), with the hooks `precompact install --agent` writes, each session doing work with
tool calls, compacting mid-turn and resuming after it. Each installed hook command is wrapped to
time `precompact hook` itself (the wall time the agent waits for, process start included);
Layers 2 and 3 run in the worker, after the hook has answered.

With --reading MB, instead: the time transcript/agents.py takes to read a made-up Codex rollout
and Gemini chat file of about MB megabytes (tool calls with 4 KB outputs; user messages of 4 KB)
into the document (a Gemini one is read whole at every saving hook; a Codex one only the first
time, then what the rollout appended, which is timed too).

Usage: .venv/bin/python scripts/bench_agents.py [--runs 3] [--agents codex,gemini] [--reading MB]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from support import codex_cli, gemini_cli
from support.claude_code import wait_for_worker
from support.projects import new_project

WRAPPER = (
    'f=$(mktemp); cat > "$f"; s=$(date +%s%N); {command} < "$f"; e=$(date +%s%N); '
    'printf "%s\\t%s\\n" "$(( (e - s) / 1000000 ))" "$(tr -d "\\n" < "$f")" >> {log}; rm -f "$f"'
)


def wrap(hooks_file: Path, log: Path) -> None:
    """Times every precompact hook command in `hooks_file` into `log`."""
    settings = json.loads(hooks_file.read_text())
    for groups in settings["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                if "precompact hook" in handler["command"]:
                    handler["command"] = WRAPPER.format(command=handler["command"], log=shlex.quote(str(log)))
    hooks_file.write_text(json.dumps(settings))


def moments(log: Path) -> dict[str, list[int]]:
    """Milliseconds by event (with its source or trigger)."""
    found: dict[str, list[int]] = {}
    for line in log.read_text().splitlines():
        millis, payload = line.split("\t", 1)
        event = json.loads(payload)
        name = event["hook_event_name"] + (
            f":{event.get('source') or event.get('trigger')}" if event.get("source") or event.get("trigger") else ""
        )
        found.setdefault(name, []).append(int(millis))
    return found


def codex_run(root: Path, log: Path) -> None:
    project = new_project(root, "codex", git_layer=True, chain_layer=False)
    script = codex_cli.Script(
        commands={"work": ["echo one", "cat missing.txt"], "more": ["echo two"]}, heavy={"more": 50_000}
    )
    with codex_cli.session_in(
        project, root / "codex-home", codex_cli.codex_binary(), "--scope", "user", script=script, compact_limit=20_000
    ) as setup:
        wrap(setup.session.codex_home / "hooks.json", log)
        thread = setup.session.run("Build the parser. [[run:work]]")
        setup.session.run("Go on. [[run:more]]", resume=thread)
        setup.session.run("And now?", resume=thread)
        wait_for_worker(project)


def gemini_run(root: Path, log: Path) -> None:
    project = new_project(root, "gemini", git_layer=True, chain_layer=False)
    script = gemini_cli.Script(
        commands={"work": ["echo one", "cat missing.txt"], "more": ["echo two", "echo three"]}, heavy={"more": 900_000}
    )
    with gemini_cli.session_in(
        project, root / "gemini-home", gemini_cli.gemini_binary(), "--scope", "user", script=script
    ) as setup:
        wrap(setup.session.home / ".gemini" / "settings.json", log)
        setup.session.run("Build the parser. [[run:work]]")
        setup.session.run("Go on. [[run:more]]", resume=True)
        setup.session.run("And now?", resume=True)
        wait_for_worker(project)


def reading(megabytes: int, scratch: Path) -> dict:
    """Milliseconds agents.read takes on a made-up session file of each agent."""
    import time

    from precompact.transcript import agents

    output = "Process exited with code 0\nOutput:\n" + "x" * 4000
    rollout = scratch / "rollout.jsonl"
    with rollout.open("w") as f:
        f.write(
            json.dumps({"ordinal": 0, "type": "session_meta", "payload": {"id": "t", "cli_version": "0.171.0"}}) + "\n"
        )
        n = 0
        while f.tell() < megabytes << 20:
            n += 1
            call = {
                "type": "function_call",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": f"cat {n}"}),
                "call_id": f"c{n}",
            }
            result = {"type": "function_call_output", "call_id": f"c{n}", "output": output}
            for item in (call, result):
                f.write(json.dumps({"ordinal": n, "type": "response_item", "payload": item}) + "\n")
    chat = scratch / "chat.jsonl"
    with chat.open("w") as f:
        f.write(json.dumps({"sessionId": "s", "startTime": "t", "kind": "main"}) + "\n")
        n = 0
        while f.tell() < megabytes << 20:
            n += 1
            f.write(
                json.dumps({"id": f"u{n}", "timestamp": "t", "type": "user", "content": [{"text": "y" * 4000}]}) + "\n"
            )
    timed = {}
    for agent, path in (("codex", rollout), ("gemini", chat)):
        start = time.perf_counter()
        agents.read(agent, scratch / "logs", str(path))
        timed[agent] = {
            "megabytes": round(path.stat().st_size / (1 << 20), 1),
            "ms": round((time.perf_counter() - start) * 1000),
        }
    # A Codex document is appended to: the next read after 1 MB more hashes the rest.
    with rollout.open("a") as f:
        end = f.tell() + (1 << 20)
        while f.tell() < end:
            n += 1
            item = {"type": "function_call_output", "call_id": f"c{n}", "output": output}
            f.write(json.dumps({"ordinal": n, "type": "response_item", "payload": item}) + "\n")
    start = time.perf_counter()
    agents.read("codex", scratch / "logs", str(rollout))
    timed["codex, again after 1 MB more"] = {"ms": round((time.perf_counter() - start) * 1000)}
    return timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--agents", default="codex,gemini")
    parser.add_argument("--reading", type=int, metavar="MB")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="precompact-bench-agents-") as scratch:
        if args.reading:
            print(json.dumps(reading(args.reading, Path(scratch)), indent=2))
            return
        os.environ.setdefault("XDG_CONFIG_HOME", str(Path(scratch) / "xdg-config"))
        os.environ.setdefault("XDG_STATE_HOME", str(Path(scratch) / "xdg-state"))
        for agent in args.agents.split(","):
            log = Path(scratch) / f"{agent}.log"
            for run in range(args.runs):
                print(f"bench: {agent} run {run + 1}/{args.runs}", file=sys.stderr, flush=True)
                root = Path(scratch) / f"{agent}{run}"
                root.mkdir()
                (codex_run if agent == "codex" else gemini_run)(root, log)
            results[agent] = {
                name: {"runs": len(times), "median_ms": statistics.median(times), "max_ms": max(times)}
                for name, times in sorted(moments(log).items())
            }
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    throwaway_home.use()
    main()
