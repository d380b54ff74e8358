"""What a planted index copy costs the reader (docs/security.md, "What is read from a remote is
bounded"): a branch whose index copy is one byte over INDEX_COPY_LIMIT, made of a real index line
repeated, read the way `status --remote`, `restore` and `recall --from` read it (`files_at`, then
`savepoint_log.parse` of what came back), once with the bound (the blob's size asked of git, the
blob never read) and once with it lifted (every byte read and parsed, as before the bound), each
in a fresh process, in turn. Reports each run's wall time and peak memory (ru_maxrss, before the read and after), and the
load average. Not a timed test: `nice -n 10 .venv/bin/python scripts/bench_oversized.py [--pairs 3]`."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import throwaway_home

NAME = "logs/precompact-savepoint.jsonl"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def planted_branch(root: Path) -> tuple[Path, str]:
    """A repository whose one commit holds an index copy one byte over the bound, made of a
    SAVEPOINT_CREATED line as Layer 1 writes it, repeated."""
    from datetime import UTC, datetime

    from precompact.local import snapshot
    from precompact.local.snapshot import Session, Settings
    from precompact.remote import gitstore

    made = root / "made"
    git(root, "init", "-q", str(made))
    snapshot.create_savepoint(
        Settings(instance="Bench #1", logs=made / "logs"), Session("s", None, str(made)), datetime.now(UTC)
    )
    line = (made / NAME).read_bytes().splitlines(keepends=True)[0]
    size = gitstore.INDEX_COPY_LIMIT + 1
    data = line * (size // len(line))
    data += b"\n" * (size - len(data))
    work = root / "work"
    git(root, "init", "-q", str(work))
    (work / "logs").mkdir()
    (work / NAME).write_bytes(data)
    git(work, "add", NAME)
    git(work, "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-qm", "planted")
    return work, git(work, "rev-parse", "HEAD").strip()


def read_once(repository: str, commit: str, bounded: bool) -> dict:
    """One read as the commands do it, in this (fresh) process: its time and peak memory."""
    import resource

    import git as gitpython

    from precompact.local import savepoint_log
    from precompact.remote import gitstore

    if not bounded:
        gitstore.INDEX_COPY_LIMIT = 1 << 40
    repo = gitpython.Repo(repository)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    [copy] = gitstore.files_at(repo, [(commit, NAME)])
    lines = len(savepoint_log.parse(copy.splitlines(keepends=True)).savepoints) if isinstance(copy, bytes) else 0
    elapsed = time.perf_counter() - start
    return {
        "bounded": bounded,
        "seconds": round(elapsed, 3),
        "peak_mb_before": round(before, 1),
        "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "read": type(copy).__name__ if not isinstance(copy, bytes) else f"{len(copy)} bytes, {lines} savepoint(s)",
        "said": str(copy) if not isinstance(copy, bytes) else None,
    }


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--one":
        print(json.dumps(read_once(sys.argv[2], sys.argv[3], sys.argv[4] == "bounded")))
        return
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as temporary:
        work, commit = planted_branch(Path(temporary))
        for _ in range(args.pairs):
            for mode in ("bounded", "unbounded"):
                done = subprocess.run(
                    [sys.executable, __file__, "--one", str(work), commit, mode],
                    check=True,
                    capture_output=True,
                    text=True,
                )
                print(done.stdout.strip())
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    throwaway_home.use()
    main()
