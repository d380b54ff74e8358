"""How fast "what compaction dropped" is shown for a `--mb` MB session (generated as
scripts/bench_viewer.py makes its one, its compaction summary recorded as PostCompact records
it), each command a new process as a user runs it:
- `precompact dropped --json` with no list kept (the rule reads the whole history);
- the worker as PostCompact starts it (it lists and keeps what compaction dropped);
- `precompact dropped --json` and `precompact dropped` again, reading the kept list;
- `precompact view`: the savepoint's page on its first visit, over HTTP, and whether it came
  with the list or said it was still being made.
Wall time and the process's CPU time (user + system), and the load average before each.

    .venv/bin/python scripts/bench_dropped_speed.py [--mb 100] [--runs 2]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from precompact.config import settings as configuration
from precompact.local import savepoint_log, snapshot
from support.browser import viewer
from support.commands import PRECOMPACT
from support.projects import new_project
from support.transcript_gen import generate

MB = 1_000_000
LISTING = 'class="listing"'  # a savepoint's page while its dropped list is being made


def progress(text: str) -> None:
    print(f"bench: {text}", file=sys.stderr, flush=True)


def load() -> str:
    return "load " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def timed(argv: list[str], cwd: Path) -> tuple[float, float, subprocess.CompletedProcess]:
    """Wall and CPU seconds of one process, and what it did."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done


def session(root: Path, mb: int) -> Path:
    path = new_project(root, "big", git_layer=False, chain_layer=False, instance="Big #1").path
    loaded = configuration.load(path)
    progress(f"writing a {mb} MB transcript")
    transcript = generate(root / "big.jsonl", mb * MB, project=path)
    progress("saving it")
    snapshot.create_savepoint(
        snapshot.Settings.of(loaded), snapshot.Session("big", str(transcript.path), str(path), "auto")
    )
    saved = savepoint_log.latest(loaded.logs, loaded.instance)
    assert saved is not None
    summary = (
        "1. Primary Request and Intent: "
        + " ".join(transcript.requests[:20])
        + "\n2. Files and Code Sections: "
        + ", ".join(transcript.files[:30])
        + "\n3. Problem Solving: "
        + " ".join(transcript.conclusions[:20])
    )
    savepoint_log.mark(loaded.logs, saved, savepoint_log.Event.COMPACT_SUMMARY, trigger="auto", summary=summary)
    print(f"{transcript.bytes / MB:.0f} MB session, {transcript.messages} messages; {load()}")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="precompact-bench-dropped-") as folder:
        root = Path(folder)
        path = session(root, args.mb)
        for _ in range(args.runs):
            shown = load()
            wall, cpu, done = timed([PRECOMPACT, "dropped", "--json"], path)
            print(f"dropped --json, no list kept: {wall:.2f} s wall, {cpu:.2f} s CPU, {len(done.stdout):,} B ({shown})")
        shown = load()
        worker = [sys.executable, "-m", "precompact.edges.worker", str(path)]
        wall, cpu, _ = timed(worker, path)
        kept = list((path / "logs" / "precompact-dropped").glob("*.json"))
        print(
            f"the worker (recall index, layers off, the list kept: {bool(kept)}): {wall:.1f} s wall, {cpu:.1f} s CPU ({shown})"
        )
        for _ in range(args.runs):
            for command in (["dropped", "--json"], ["dropped"]):
                shown = load()
                wall, cpu, done = timed([PRECOMPACT, *command], path)
                print(
                    f"{' '.join(command)}, the list kept: {wall:.2f} s wall, {cpu:.2f} s CPU, {len(done.stdout):,} B ({shown})"
                )
        with viewer(path, root / "view.log") as url, httpx.Client(timeout=600) as client:
            shown = load()
            started = time.perf_counter()
            page = client.get(url + "savepoint", params={"instance": "Big #1", "sequence": 1})
            wall = time.perf_counter() - started
            assert page.status_code == 200, page.text[:300]
            print(
                f"view: the savepoint's page, first visit: {wall * 1000:.0f} ms, {len(page.content):,} B, "
                f"with the list: {LISTING not in page.text} ({shown})"
            )


if __name__ == "__main__":
    throwaway_home.use()
    main()
