"""`precompact restore` over `--savepoints` savepoints of one session that grows to `--mb` MB
(issue 38): each savepoint made at an even point of the session's growth, signed, committed
encrypted and pushed by one flush; then logs/ is removed and `precompact restore` timed as a
process, as a user runs it (fetch, decrypt, every signature, snapshot, chunk and link checked,
logs/ written), and again in a fresh clone with a HOME of its own that holds only the keypair
and the age identity. Usage: .venv/bin/python scripts/bench_restore.py [--savepoints 100] [--mb 20] [--json]"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from precompact import api
from precompact.config import settings as configuration
from precompact.local import snapshot
from support.commands import PRECOMPACT
from support.projects import new_project
from support.transcript_gen import generate

MB = 1_000_000


def progress(text: str) -> None:
    print(f"bench: {text}", file=sys.stderr, flush=True)


def timed(args: list[str], cwd: Path, env: dict | None = None) -> tuple[float, dict]:
    """Wall seconds of one run of `args`, and the JSON document it printed."""
    began = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})}, check=False)
    elapsed = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"bench: {' '.join(args)} exited {done.returncode}: {done.stdout}{done.stderr}")
    return elapsed, json.loads(done.stdout)


def savepoints_of_a_growing_session(root: Path, count: int, size_mb: int):
    project = new_project(root, "project", git_layer=True, chain_layer=False, instance="Bench #1")
    progress(f"generating a {size_mb} MB transcript")
    lines = generate(root / "whole.jsonl", size_mb * MB, project=project.path).path.read_bytes().splitlines(True)
    transcript = root / "session.jsonl"
    loaded = configuration.load(project.path)
    for step in range(1, count + 1):
        if step % 10 == 0:
            progress(f"savepoint {step}/{count}")
        transcript.write_bytes(b"".join(lines[: len(lines) * step // count]))
        snapshot.create_savepoint(
            snapshot.Settings.of(loaded), snapshot.Session("bench", str(transcript), str(project.path), "auto")
        )
    progress("signing, committing (encrypted) and pushing them")
    outcome = api.flush(loaded)
    assert not outcome.layer_2_problems, outcome.layer_2_problems
    return project


def stored(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--savepoints", type=int, default=100)
    parser.add_argument("--mb", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="precompact-bench-restore-") as scratch:
        root = Path(scratch)
        # The trust store and this machine's key of a throwaway user, not yours.
        os.environ["XDG_CONFIG_HOME"] = str(root / "config")
        os.environ["XDG_STATE_HOME"] = str(root / "state")
        project = savepoints_of_a_growing_session(root, args.savepoints, args.mb)
        logs_bytes = stored(project.logs)
        shutil.rmtree(project.logs)
        progress("precompact restore (logs/ removed)")
        lost, document = timed([PRECOMPACT, "restore", "--json"], project.path)
        assert document["complete"] and len(document["restored"]) == args.savepoints, document

        progress("precompact restore (a fresh clone, a HOME with only the keypair and the identity)")
        home = root / "home2"
        keys = home / "keys"
        keys.mkdir(parents=True)
        shutil.copy(project.keypair_file, keys / "id.json")
        shutil.copy(project.keypair_file.parent / configuration.IDENTITY_NAME, keys / configuration.IDENTITY_NAME)
        clone = root / "clone"
        subprocess.run(["git", "clone", "-q", str(project.remote), str(clone)], check=True, capture_output=True)
        shutil.copy(project.path / configuration.CONFIG_NAME, clone / configuration.CONFIG_NAME)
        env = {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_STATE_HOME": str(home / "state"),
            "PRECOMPACT_KEYPAIR": str(keys / "id.json"),
            "PRECOMPACT_IDENTITY": str(keys / configuration.IDENTITY_NAME),
        }
        subprocess.run(
            [PRECOMPACT, "trust", "--yes"], cwd=clone, check=True, capture_output=True, env={**os.environ, **env}
        )
        fresh, document = timed([PRECOMPACT, "restore", "--json"], clone, env)
        assert document["complete"] and len(document["restored"]) == args.savepoints, document
        results = {
            "savepoints": args.savepoints,
            "session_mb": args.mb,
            "logs_bytes": logs_bytes,
            "chunks": document["chunks"],
            "restore_lost_logs_s": lost,
            "restore_fresh_clone_s": fresh,
        }
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(
        f"- `precompact restore`, {args.savepoints} savepoints of a {args.mb} MB session ({logs_bytes / MB:.1f} MB in logs/, {results['chunks']} chunks; encrypted remote, chain off): "
        f"{lost:.2f} s with logs/ removed, {fresh:.2f} s in a fresh clone with only the keypair and the identity"
    )


if __name__ == "__main__":
    throwaway_home.use()
    main()
