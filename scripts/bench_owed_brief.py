"""What a prompt or tool call costs while the session is owed a brief whose savepoint is still
queued (fix12c: it reads the index and the queue, and gives nothing), against one with nothing
pending, each a whole `precompact hook` process, in turn (CPU: user + system of the process).

Usage: nice -n 10 .venv/bin/python scripts/bench_owed_brief.py [RUNS]"""

import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
from precompact.config import settings as configuration
from precompact.local import snapshot
from precompact.ops import addendum, compaction
from support.commands import PRECOMPACT, wait_until, workers_of
from support.process_cost import run
from support.projects import new_project
from support.transcript_gen import generate, payload


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="fix12c-cost-"))
    try:
        project = new_project(root, "p", git_layer=False, chain_layer=False)
        transcript = generate(root / "t.jsonl", 4_000, project=project.path).path
        loaded = configuration.load(project.path)
        sid = "s-owedcost0001"
        snapshot.queue(
            compaction.layer_1(loaded),
            snapshot.Session(session_id=sid, transcript_path=str(transcript), cwd=str(project.path), trigger="auto"),
        )
        addendum.owe_brief(loaded, sid, "compact", 0, time.time())
        owed = json.dumps(payload("UserPromptSubmit", project.path, transcript, session_id=sid, prompt="x")).encode()
        none = json.dumps(
            payload("UserPromptSubmit", project.path, transcript, session_id="s-nothing0001", prompt="x")
        ).encode()
        costs = {"owed": [], "none": []}
        for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 10):
            for name, stdin in (("owed", owed), ("none", none)):
                costs[name].append(run([PRECOMPACT, "hook"], stdin, project.path))
        assert (project.logs / "precompact-pending" / f"{sid}.brief").exists()
        for name, cs in costs.items():
            print(
                name,
                "cpu ms median",
                round(statistics.median(c.cpu for c in cs) * 1000, 1),
                "wall ms median",
                round(statistics.median(c.wall for c in cs) * 1000, 1),
            )
        # A hook may have started the project's worker for the queued savepoint: it writes under
        # logs/ until it ends, so the folder is removed after it.
        assert wait_until(lambda: not workers_of(project.path), 60), "the project's worker is still running"
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    throwaway_home.use()
    main()
