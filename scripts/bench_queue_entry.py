"""What a queue entry's record of its transcript costs (review12a F6): `snapshot._seen_now`, the
read and SHA-256 of the last 64 KiB before the entry's end that a hook does when it queues a
savepoint and the writer does again before it writes one, on generated Claude Code transcripts of
0.1, 10 and 100 MB (its cost should not grow with the transcript).
Usage: nice -n 10 .venv/bin/python scripts/bench_queue_entry.py [--runs N]"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import throwaway_home

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python"))

from precompact.local import snapshot
from precompact.transcript.claude_code import whole_lines_end
from support.transcript_gen import generate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory(prefix="bench-queue-entry-") as folder:
        for size in (100_000, 10_000_000, 100_000_000):
            path = generate(Path(folder) / f"t{size}.jsonl", size, project=Path(folder)).path
            end = whole_lines_end(path)
            took = []
            for _ in range(runs):
                start = time.perf_counter()
                snapshot._seen_now(str(path), end)
                took.append(time.perf_counter() - start)
            took.sort()
            print(
                f"{path.stat().st_size:>11,} bytes: median {statistics.median(took) * 1e3:.3f} ms, "
                f"p95 {took[int(len(took) * 0.95) - 1] * 1e3:.3f} ms ({runs} runs)"
            )
            path.unlink()


if __name__ == "__main__":
    throwaway_home.use()
    main()
