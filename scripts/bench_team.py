"""One git remote for a team, under contention (issue #47): N clones (20 by default), each with a
HOME and an instance of its own, against one bare remote. Each round, every clone makes a
savepoint while the remote is away (so only Layer 1 runs and the commit is made), then the remote
comes back and every clone runs `precompact flush` (the push): first one clone after another
(alone), then all at once (contention). Reports, for the pushes at once, the extra time over the
same clone's push alone (median and worst), the retries (merge commits a lost race leaves; a push
gives up after 3, and its flush then fails the run), that every savepoint is on the remote, that
the remote's reflog holds no forced update, and the load average before and after.
Not a timed test: `.venv/bin/python scripts/bench_team.py [--clones 20]`."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from precompact.remote.gitstore import RACE_RETRIES
from support import transcript_gen
from support.commands import PRECOMPACT
from support.projects import savepoint_branch

MERGE_SUBJECT = "PRECOMPACT: savepoints put on top of the remote's branch"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


class Clone:
    def __init__(self, root: Path, n: int, remote: Path):
        self.name = f"dev{n:02d}"
        self.path, self.home = root / self.name, root / f"{self.name}-home"
        self.home.mkdir()
        self.saves = 0
        subprocess.run(["git", "init", "-q", "-b", "main", str(self.path)], check=True)
        git(self.path, "remote", "add", "origin", str(remote))
        git(self.path, "config", "user.name", self.name)
        git(self.path, "config", "user.email", "b@x")
        self.run("init", "--yes", "--instance", self.name, "--chain", "off", "--url", str(remote))

    def run(self, *args: str) -> subprocess.CompletedProcess:
        env = {
            **os.environ,
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
        }
        return subprocess.run([PRECOMPACT, *args], cwd=self.path, env=env, capture_output=True, text=True, check=False)

    def save(self) -> None:
        self.saves += 1
        transcript = transcript_gen.generate(
            self.path.parent / f"{self.name}.jsonl", target_bytes=20_000 * self.saves, project=self.path
        )
        self.run("savepoint", "--transcript", str(transcript.path))

    def flush(self) -> float:
        began = time.perf_counter()
        done = self.run("flush")
        if done.returncode != 0:
            raise SystemExit(f"{self.name}: flush exited {done.returncode}: {done.stdout}{done.stderr}")
        return time.perf_counter() - began


def saved_offline(clones: list[Clone], remote: Path) -> None:
    """A savepoint in each clone, committed but not pushed: the remote is away meanwhile."""
    away = remote.with_name("away.git")
    remote.rename(away)
    try:
        for clone in clones:
            clone.save()
    finally:
        away.rename(remote)


def at_once(clones: list[Clone]) -> dict[str, float]:
    times: dict[str, float] = {}
    start = threading.Barrier(len(clones))

    def one(clone: Clone) -> None:
        start.wait()
        times[clone.name] = clone.flush()

    threads = [threading.Thread(target=one, args=(c,)) for c in clones]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times


def forced_updates(remote: Path) -> int:
    forced = 0
    for log in (remote / "logs" / "refs").rglob("*"):
        for line in log.read_text().splitlines() if log.is_file() else []:
            old, new = line.split()[:2]
            if set(old) != {"0"} and set(new) != {"0"}:
                forced += (
                    subprocess.run(["git", "merge-base", "--is-ancestor", old, new], cwd=remote, check=False).returncode
                    != 0
                )
    return forced


def _load() -> str:
    """The 1-minute load average: the machine's other work shows in every figure."""
    return f"{os.getloadavg()[0]:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clones", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    load_before = _load()
    root = Path(tempfile.mkdtemp(prefix="precompact-team-"))
    try:
        remote = root / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
        git(remote, "config", "core.logAllRefUpdates", "always")
        clones = [Clone(root, n, remote) for n in range(args.clones)]
        for clone in clones:  # the first savepoint creates each branch
            clone.save()
        alone: dict[str, list[float]] = {c.name: [] for c in clones}
        together: dict[str, list[float]] = {c.name: [] for c in clones}
        for _ in range(args.rounds):
            saved_offline(clones, remote)
            for clone in clones:
                alone[clone.name].append(clone.flush())
            saved_offline(clones, remote)
            for name, seconds in at_once(clones).items():
                together[name].append(seconds)
        extra = [t - a for c in clones for t, a in zip(together[c.name], alone[c.name])]
        # A lost race leaves one merge commit on the branch it was pushed to: a branch's count is
        # the retries its pushes took, all rounds together (the worst push took at most that).
        retries = [
            git(remote, "log", "--format=%s", f"refs/heads/{savepoint_branch(c.name)}").count(MERGE_SUBJECT)
            for c in clones
        ]
        missing = 0
        for clone in clones:
            rows = clone.run("status", "--json").stdout
            for row in json.loads(rows)["savepoints"]:
                held = subprocess.run(
                    [
                        "git",
                        "merge-base",
                        "--is-ancestor",
                        row["commit"] or "0",
                        f"refs/heads/{savepoint_branch(clone.name)}",
                    ],
                    cwd=remote,
                    check=False,
                    capture_output=True,
                )
                missing += held.returncode != 0 or row["layer_2"] != "PUSHED"
        saved = sum(c.saves for c in clones)
        flat_alone = [t for ts in alone.values() for t in ts]
        flat_together = [t for ts in together.values() for t in ts]
        print(
            f"{args.clones} clones, {args.rounds} round(s), {saved} savepoints; on {os.cpu_count()} CPU(s), "
            f"load average {load_before} before, {_load()} after"
        )
        print(f"push (flush) alone:    median {statistics.median(flat_alone):.3f} s, worst {max(flat_alone):.3f} s")
        print(
            f"push (flush) at once:  median {statistics.median(flat_together):.3f} s, worst {max(flat_together):.3f} s"
        )
        print(
            f"extra time per push under contention: median {statistics.median(extra):.3f} s, worst {max(extra):.3f} s"
        )
        print(
            f"retries (merge commits after a lost race): {sum(retries)} in all, at most {max(retries)} on one branch "
            f"(the limit is {RACE_RETRIES} per push); savepoints not on the remote: {missing}"
        )
        print(f"forced updates in the remote's reflog: {forced_updates(remote)}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    throwaway_home.use()
    main()
