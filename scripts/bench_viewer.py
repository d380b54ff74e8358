"""How fast `precompact view` answers, over HTTP as a browser asks it (the server started as a
user starts it):
- the timeline of a project with `--savepoints` savepoints (in sessions of 20), while the
  verifier still runs in the background and once its verdicts are in, and how long the verifier
  took;
- a `--mb` MB session as a user first visits it: its savepoint's page (checks, brief, summary;
  what compaction dropped is listed in the background, the whole history read once) and right
  after, while that list is made, its conversation's first page (which reads the history only
  as far as itself); how long until the list is in, and the savepoint's page then; the
  conversation's last page (which locates every entry, once per snapshot), then the first,
  middle and last pages again; a search (the first brings the recall index up to date) and
  again. Pages' sizes in bytes.

    .venv/bin/python scripts/bench_viewer.py [--savepoints 1000] [--mb 100] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from precompact.config import settings as configuration
from precompact.local import snapshot
from support.browser import viewer
from support.projects import new_project
from support.transcript_gen import generate

MB = 1_000_000
SESSION_SAVEPOINTS = 20
LISTING = 'class="listing"'  # a savepoint's page while its dropped list is being made


def progress(text: str) -> None:
    print(f"bench: {text}", file=sys.stderr, flush=True)


def timed(client: httpx.Client, url: str, **params) -> tuple[float, httpx.Response]:
    started = time.perf_counter()
    answer = client.get(url, params=params)
    elapsed = time.perf_counter() - started
    assert answer.status_code == 200, (url, answer.status_code, answer.text[:300])
    return elapsed, answer


def median(client: httpx.Client, runs: int, url: str, **params) -> float:
    return statistics.median(timed(client, url, **params)[0] for _ in range(runs))


def timeline(root: Path, count: int, runs: int) -> None:
    path = new_project(root, "many", git_layer=False, chain_layer=False, instance="Bench #1").path
    loaded = configuration.load(path)
    transcript = generate(root / "small.jsonl", 20_000, project=path)
    for n in range(count):
        if n % 100 == 0:
            progress(f"timeline: making savepoint {n + 1}/{count}")
        session = snapshot.Session(f"session-{n // SESSION_SAVEPOINTS}", str(transcript.path), str(path), "auto")
        snapshot.create_savepoint(snapshot.Settings.of(loaded), session)
    with viewer(path, root / "many.log") as url, httpx.Client(timeout=600) as client:
        started = time.perf_counter()
        first, answer = timed(client, url)
        checking = "checking…" in answer.text
        while "checking…" in client.get(url).text:
            time.sleep(0.2)
        verified = time.perf_counter() - started
        rows = client.get(url).text.count('class="savepoint-link"')
        print(f"timeline of {rows} savepoints: first answer {first * 1000:.0f} ms (verifier still running: {checking})")
        print(f"  with every verdict in: median {median(client, runs, url) * 1000:.0f} ms over {runs}")
        print(f"  the verifier's report on all of them took about {verified:.1f} s (in the background)")


def big_session(root: Path, mb: int, runs: int) -> None:
    path = new_project(root, "big", git_layer=False, chain_layer=False, instance="Big #1").path
    loaded = configuration.load(path)
    progress(f"session: writing a {mb} MB transcript")
    transcript = generate(root / "big.jsonl", mb * MB, project=path, planted=["the quokka ledger overflowed"])
    progress("session: saving it")
    started = time.perf_counter()
    snapshot.create_savepoint(
        snapshot.Settings.of(loaded), snapshot.Session("big", str(transcript.path), str(path), "auto")
    )
    progress(f"session: saved in {time.perf_counter() - started:.1f} s")
    with viewer(path, root / "big.log") as url, httpx.Client(timeout=600) as client:
        where = {"instance": "Big #1", "sequence": 1}
        savepoint, page = url + "savepoint", url + "conversation"
        started = time.perf_counter()
        first, answer = timed(client, savepoint, **where)
        listing = LISTING in answer.text
        print(
            f"{transcript.bytes / MB:.0f} MB session ({transcript.messages} messages): its savepoint's page first "
            f"{first * 1000:.0f} ms, {len(answer.content):,} B (what compaction dropped still being listed: {listing})"
        )
        cold, answer = timed(client, page, **where, page=1)
        print(f"  then its conversation's first page: {cold * 1000:.0f} ms, {len(answer.content):,} B")
        answer = client.get(savepoint, params=where)
        while LISTING in answer.text:
            time.sleep(1)
            answer = client.get(savepoint, params=where)
        print(
            f"  the dropped list in after {time.perf_counter() - started:.1f} s (in the background); "
            f"the savepoint's page then {len(answer.content):,} B, "
            f"median {median(client, runs, savepoint, **where) * 1000:.0f} ms over {runs}"
        )
        to_the_end, answer = timed(client, page, **where, page="last")
        pages = int(answer.text.split("<span>page ", 1)[1].split(" of ", 1)[1].split("<", 1)[0])
        print(f"  the conversation's last page first: {to_the_end * 1000:.0f} ms (every entry located: {pages} pages)")
        for name, number in (("first", 1), ("middle", pages // 2), ("last", pages)):
            print(f"  {name} page: median {median(client, runs, page, **where, page=number) * 1000:.0f} ms over {runs}")
        first_search, _ = timed(client, url + "search", q="quokka ledger")
        print(f"  search: first {first_search * 1000:.0f} ms (recall index built)", end="")
        print(f", then median {median(client, runs, url + 'search', q='quokka ledger') * 1000:.0f} ms over {runs}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--savepoints", type=int, default=1000)
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="precompact-bench-viewer-") as folder:
        root = Path(folder)
        timeline(root, args.savepoints, args.runs)
        big_session(root, args.mb, args.runs)


if __name__ == "__main__":
    throwaway_home.use()
    main()
