"""What SessionEnd costs on a long session, and whether its savepoint survives the agent's cut
(fix10b): a session that never compacted ends with tens of MB said, so its SessionEnd is a first
savepoint of all of it. Codex CLI gives SessionEnd 3 s, Claude Code 5 s
(config/hook_timeouts.py); a hook still running then is killed.

Each run: a new project (git and chain off: the hook does Layer 1 alone either way), a new
session whose transcript is `--mb` MB, its SessionEnd hook run as an agent runs it and timed
(wall, and CPU as the kernel accounts the finished process), then how long until its savepoint
is in the index (written by the hook, or by the worker from the queue) and who wrote it. With
`--cut S` the hook is killed (SIGKILL) S seconds after it starts, as an agent cuts it, and the
savepoint must still come (from the queue). `--code DIR` runs another build's client folder
(e.g. a `git archive` of main's `client/`) in turn with this one's, run by run. `--agent codex`
or `gemini`: that agent's SessionEnd (`hook --agent …`) on a made-up session file of `--mb` MB
(a Codex rollout, a Gemini chat file: user and assistant messages, tool calls with 4 KB outputs)
never read before. Since fix15c the hook queues it unread and the worker reads it into the
conversation document (transcript/agents.py); `--code` a build from before reads it in the hook.

Usage: nice -n 10 .venv/bin/python scripts/bench_session_end.py [--mb 50 100] [--runs 3]
                                                              [--real] [--cut 3] [--code DIR]
                                                              [--agent claude|codex|gemini] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
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
from support.projects import new_project
from support.secret_corpus import stdlib_sources
from support.transcript_gen import generate, payload

MB = 1_000_000
# Long enough for a worker on a loaded machine to save 100 MB.
SAVED_WITHIN_SECONDS = 300.0


def command(code: Path | None, agent: str) -> list[str]:
    """The hook's command line: the installed precompact, or the client folder `code`'s."""
    hook = ["hook"] if agent == "claude" else ["hook", "--agent", agent]
    if code is None:
        return [PRECOMPACT, *hook]
    started = f"import sys; sys.path.insert(0, {str(code)!r}); from precompact.edges.command import main; main()"
    return [sys.executable, "-I", "-c", started, *hook]


SESSION_ID = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"


def agent_session_file(path: Path, agent: str, size: int, cwd: Path) -> None:
    """A made-up Codex rollout or Gemini chat file of about `size` bytes: turns of a user
    message, a tool call with a 4 KB output and the assistant's answer."""
    output = "Process exited with code 0\nOutput:\n" + "x" * 4000
    with path.open("w") as f:
        if agent == "codex":
            meta = {"id": SESSION_ID, "cwd": str(cwd), "cli_version": "0.171.0"}
            f.write(json.dumps({"ordinal": 0, "type": "session_meta", "payload": meta}) + "\n")
        else:
            f.write(
                json.dumps({"sessionId": SESSION_ID, "startTime": "2026-12-05T10:00:00.000Z", "kind": "main"}) + "\n"
            )
        n = 0
        while f.tell() < size:
            n += 1
            if agent == "codex":
                items = [
                    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"step {n}"}]},
                    {
                        "type": "function_call",
                        "name": "exec_command",
                        "arguments": json.dumps({"cmd": f"cat {n}"}),
                        "call_id": f"c{n}",
                    },
                    {"type": "function_call_output", "call_id": f"c{n}", "output": output},
                    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"done {n}"}]},
                ]
                for item in items:
                    f.write(json.dumps({"ordinal": n, "type": "response_item", "payload": item}) + "\n")
            else:
                stamp = "2026-12-05T10:00:00.000Z"
                f.write(
                    json.dumps({"id": f"u{n}", "timestamp": stamp, "type": "user", "content": [{"text": f"step {n}"}]})
                    + "\n"
                )
                said = {"id": f"g{n}", "timestamp": stamp, "type": "gemini", "content": f"done {n}: {output}"}
                f.write(json.dumps(said) + "\n")


def one_run(scratch: Path, transcript: Path, code: Path | None, cut: float | None, name: str, agent: str) -> dict:
    project = new_project(scratch, f"{name}-{'other' if code else 'this'}", git_layer=False, chain_layer=False)
    extra = {} if agent == "claude" else {"session_id": SESSION_ID}
    event = json.dumps(payload("SessionEnd", project.path, transcript, reason="exit", **extra)).encode()
    with tempfile.TemporaryFile() as given:
        given.write(event)
        given.seek(0)
        began = time.perf_counter()
        hook = subprocess.Popen(
            command(code, agent), stdin=given, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=project.path
        )
        killed = False
        while True:  # polled, so that the kernel's account of the process (wait4) is ours to take
            done, status, usage = os.wait4(hook.pid, os.WNOHANG)
            if done:
                break
            if cut is not None and not killed and time.perf_counter() - began >= cut:
                os.kill(hook.pid, signal.SIGKILL)
                killed = True
            time.sleep(0.005)
        wall = time.perf_counter() - began
    in_index_at_exit = bool(savepoint_log.savepoints(project.logs))
    queue = project.logs / "precompact-queue"
    queued_at_exit = sorted(p.name for p in queue.iterdir()) if queue.is_dir() else []
    saved_after = None
    # Nothing saved and nothing queued: nothing will come (a worker could only find it later).
    while (in_index_at_exit or queued_at_exit) and time.perf_counter() - began < SAVED_WITHIN_SECONDS:
        if savepoint_log.savepoints(project.logs):
            saved_after = time.perf_counter() - began
            break
        time.sleep(0.05)
    saved = savepoint_log.savepoints(project.logs)
    while saved and not worker_finished(project.path):
        time.sleep(0.1)
    return {
        "build": "other" if code else "this",
        "wall_s": round(wall, 3),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "exit": os.waitstatus_to_exitcode(status),
        "killed": killed,
        "saved_by_hook": in_index_at_exit,
        "queued_at_exit": len(queued_at_exit),
        "saved_after_s": None if saved_after is None else round(saved_after, 3),
        "saved_transcript_mb": round((saved[0].transcript_end or 0) / MB, 1) if saved else None,
        "recovered": saved[0].recovered if saved else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, nargs="+", default=[50, 100])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--real", action="store_true", help="a session reading the standard library's sources")
    parser.add_argument("--cut", type=float, help="kill the hook this many seconds after it starts")
    parser.add_argument("--code", type=Path, help="another build's client folder, run in turn with this one")
    parser.add_argument("--agent", choices=["claude", "codex", "gemini"], default="claude")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict = {"load": os.getloadavg(), "sizes": {}}
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        for mb in args.mb:
            transcript = scratch / f"t{mb}.jsonl"
            if args.agent == "claude":
                generate(transcript, mb * MB, project=scratch, sources=stdlib_sources() if args.real else ())
            else:
                agent_session_file(transcript, args.agent, mb * MB, scratch)
            rows = []
            for run in range(args.runs):
                for code in (None, args.code) if args.code else (None,):
                    rows.append(one_run(scratch, transcript, code, args.cut, f"p{mb}-{run}", args.agent))
                    if not args.json:
                        print(mb, "MB", rows[-1], f"load {os.getloadavg()[0]:.1f}", flush=True)
            mine = [r for r in rows if r["build"] == "this"]
            results["sizes"][mb] = {
                "runs": rows,
                "this_wall_median_s": statistics.median(r["wall_s"] for r in mine),
                "this_saved_after_median_s": statistics.median(r["saved_after_s"] or float("inf") for r in mine),
            }
    results["load_after"] = os.getloadavg()
    if args.json:
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    throwaway_home.use()
    main()
