"""What showing saved entries costs on a session that read N build logs of M MB each (review9a F3):
`precompact show 1:1-N` of every entry (whole: the CLI's default), the MCP tool `show` on the same range (its
default budget) and the viewer's first conversation page, each in a fresh process: the size of
what it gives, its wall time and its peak memory (ru_maxrss), and the load average. `--client DIR`
runs another commit's `client/` tree instead (`git archive COMMIT client | tar -x -C DIR/..`), so
before and after can be run in turn on the same savepoint. Not a timed test:
`nice -n 10 .venv/bin/python scripts/bench_show.py [--logs 4] [--mb 10] [--client DIR] [--pairs 2]`."""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import throwaway_home

PRECOMPACT = str(Path(sys.executable).with_name("precompact"))
WORDS = ["compile", "module", "warning", "linking", "target", "object", "done", "step", "cache", "hit"]


def transcript(path: Path, cwd: Path, logs: int, megabytes: float) -> None:
    """A Claude Code transcript: a request, then `logs` Bash results of `megabytes` MB of log lines each."""
    rng = random.Random(1)
    turns: list[tuple[str, object]] = [("user", "Run the full build and show me the log.")]
    for i in range(logs):
        line = " ".join(rng.choice(WORDS) for _ in range(12))
        body = "\n".join(f"{k:07d} {line}" for k in range(int(megabytes * 1_000_000 / (len(line) + 9))))
        call = {"type": "tool_use", "id": f"tu{i}", "name": "Bash", "input": {"command": f"cat build{i}.log"}}
        turns += [("assistant", [call]), ("user", [{"type": "tool_result", "tool_use_id": f"tu{i}", "content": body}])]
    turns.append(("assistant", [{"type": "text", "text": "The build log is long."}]))
    with path.open("w") as f:
        parent = None
        for i, (role, content) in enumerate(turns):
            uuid = f"00000000-0000-4000-8000-{i:012d}"
            line = {"type": role, "uuid": uuid, "parentUuid": parent, "sessionId": "s1", "cwd": str(cwd)}
            line.update({"timestamp": f"2026-12-05T00:00:{i:02d}.000Z", "message": {"role": role, "content": content}})
            f.write(json.dumps(line) + "\n")
            parent = uuid


def project(root: Path, logs: int, megabytes: float) -> tuple[Path, dict]:
    """A project with git and chain off, one savepoint of the transcript, its worker done."""
    home = root / "home"
    (home / ".config" / "solana").mkdir(parents=True)
    from solders.keypair import Keypair

    (home / ".config" / "solana" / "id.json").write_text(json.dumps(list(bytes(Keypair()))))
    environment = {k: v for k, v in os.environ.items() if not k.startswith("XDG_") and k != "CODEX_HOME"}
    environment["HOME"] = str(home)
    made = root / "proj"
    made.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=made, check=True)
    (made / ".precompact.toml").write_text('instance = "Bench"\n[layers]\ngit = false\nchain = false\n')
    for args in (["trust", "--yes"], ["savepoint", "--transcript", str(root / "t.jsonl"), "--session-id", "s1"]):
        if args[0] == "savepoint":
            transcript(root / "t.jsonl", made, logs, megabytes)
        done = subprocess.run(
            [PRECOMPACT, *args], check=False, cwd=made, env=environment, capture_output=True, text=True
        )
        assert done.returncode in (0, 3), done.stderr
    subprocess.run(["flock", str(made / "logs" / "precompact-worker.lock"), "true"], check=True)
    return made, environment


MEASURE = """
import json, resource, sys, time
client, what, ref = sys.argv[1], sys.argv[2], sys.argv[3]
if client:
    sys.path.insert(0, client)
from pathlib import Path
import precompact
from precompact.config import settings
start = time.perf_counter()
config = settings.load(Path.cwd())
if what == "cli":
    from precompact.edges.cli import main
    sys.argv = ["precompact", "show", ref]
    import contextlib, io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main()
        except SystemExit:
            pass
    size = len(out.getvalue())
elif what == "mcp":
    from precompact.edges import mcp_server
    size = len(mcp_server.answer(config, "show", {"ref": ref}))
else:
    from starlette.testclient import TestClient
    from precompact.viewer import app
    client_ = TestClient(app.create(config, "t", 8000), base_url="http://127.0.0.1:8000")
    size = len(client_.get("/t/conversation?sequence=1").content)
print(json.dumps({"tree": precompact.__file__.rsplit("/precompact/", 1)[0], "what": what, "characters": size,
                  "seconds": round(time.perf_counter() - start, 2),
                  "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=4)
    parser.add_argument("--mb", type=float, default=10)
    parser.add_argument("--client", default="", help="another commit's client/ tree, run in turn with this one")
    parser.add_argument("--pairs", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-show-") as root:
        made, environment = project(Path(root), args.logs, args.mb)
        trees = [args.client, ""] if args.client else [""]
        for _ in range(args.pairs):
            for what in ("cli", "mcp", "viewer"):
                for tree in trees:
                    done = subprocess.run(
                        [sys.executable, "-c", MEASURE, tree, what, f"1:1-{2 * args.logs + 2}"],
                        check=False,
                        cwd=made,
                        env=environment,
                        capture_output=True,
                        text=True,
                    )
                    if done.returncode != 0:
                        sys.exit(done.stderr[-2000:])
                    print(json.dumps({**json.loads(done.stdout), "load": os.getloadavg()[0]}), flush=True)
                    time.sleep(0.1)


if __name__ == "__main__":
    throwaway_home.use()
    main()
