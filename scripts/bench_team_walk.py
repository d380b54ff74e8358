"""What a remote's cheap commits cost the rollback walk (review15a F1: `verifier/team.py`
`rollback`, run by `status --remote`, `restore` and `resurrect` of your own instance): a bare
repository whose branch holds one index copy of `--index-kib` KiB, then `--commits` commits that
each add an empty file under logs/precompact-saves/ (as cheap to push as anything), none of
them named by the index. Timed in process on its tip, `--rounds` times: the listing of the
commits that added snapshot files (`gitstore.commits_adding_snapshots`, read once a run and
handed to the rollback check) and `team.rollback` given it.
Usage: .venv/bin/python scripts/bench_team_walk.py [--commits 2000] [--index-kib 512] [--rounds 3] [--json]"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import throwaway_home
from precompact.remote import gitstore
from precompact.verifier import team

INDEX = "logs/precompact-savepoint.jsonl"


def _remote(root: Path, commits: int, index_kib: int) -> Path:
    """The bare repository, made with one `git fast-import`."""
    remote = root / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    line = b'{"event":"SAVEPOINT_CREATED","instance":"x","sequence":1,"pad":"' + b"a" * 200 + b'"}\n'
    index = line * (index_kib * 1024 // len(line))
    stream = [b"blob\nmark :1\ndata %d\n" % len(index), index, b"\nblob\nmark :2\ndata 0\n\n"]
    stream.append(b"commit refs/heads/b\ncommitter a <a@b> 1 +0000\ndata 1\nx\nM 100644 :1 %s\n\n" % INDEX.encode())
    for n in range(commits):
        stream.append(
            b"commit refs/heads/b\ncommitter a <a@b> %d +0000\ndata 1\nx\nM 100644 :2 logs/precompact-saves/junk-%d.json\n\n"
            % (n + 2, n)
        )
    subprocess.run(["git", "-C", str(remote), "fast-import", "--quiet"], input=b"".join(stream), check=True)
    return remote


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--index-kib", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="precompact-bench-walk-") as scratch:
        remote = _remote(Path(scratch), args.commits, args.index_kib)
        repo = gitstore.git.Repo(str(remote))
        tip = repo.git.rev_parse("refs/heads/b")
        target = gitstore.Target(repository=remote, remote="origin", branch="b", keys=gitstore.CLEAR)
        listings, times, found = [], [], None
        for _ in range(args.rounds):
            start = time.perf_counter()
            added = gitstore.commits_adding_snapshots(repo, tip)
            listings.append(time.perf_counter() - start)
            found = team.rollback(repo, target, tip, "x", {}, [], added)
            times.append(time.perf_counter() - start)
    result = {
        "commits": args.commits,
        "index_kib": args.index_kib,
        "median_seconds": round(statistics.median(times), 3),
        "rounds": [round(t, 3) for t in times],
        "listing_median_seconds": round(statistics.median(listings), 3),
        "listed": len(added.commits),
        "unread": added.unread,
        "verdict": None if found is None else [found[1], found[2]],
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(
            f"{args.commits} commits adding a file, index copy {args.index_kib} KiB: listing and team.rollback "
            f"median {result['median_seconds']} s over {args.rounds} round(s), the listing alone "
            f"{result['listing_median_seconds']} s ({result['listed']} files listed, first commit not read: "
            f"{result['unread']}); verdict: {result['verdict']}"
        )


if __name__ == "__main__":
    throwaway_home.use()
    main()
