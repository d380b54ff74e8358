"""What bounding the Claude Code reader's lines costs (transcript/claude_code.read_blocks: a line
over MAX_LINE_BYTES read through a block at a time): a made-up transcript of about MB megabytes
(mostly turns of 1 to 4 KB, every 50th a tool output of 200 KB to 2 MB, so that lines span
blocks) read by `read_blocks` of this client and of another one (`--before`: a `client/` folder,
e.g. from `git archive`), in turn, each in a fresh process `--runs` times; the medians and ranges
in milliseconds.

Usage: nice -n 10 .venv/bin/python scripts/bench_read_blocks.py --before DIR [--megabytes 50] [--runs 9]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import throwaway_home

# Run in a fresh process with the client under test first on sys.path: the read's milliseconds.
TIMED = """
import sys, time
from precompact.transcript import claude_code
scan = claude_code.TranscriptScan(path=sys.argv[1])
start = time.perf_counter()
read = sum(len(block) if isinstance(block, bytes) else block.size for block in claude_code.blocks(sys.argv[1], scan))
print((time.perf_counter() - start) * 1000, read)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--megabytes", type=int, default=50)
    parser.add_argument("--runs", type=int, default=9)
    arguments = parser.parse_args()
    here = Path(__file__).resolve().parent.parent / "client"
    random.seed(7)
    with tempfile.TemporaryDirectory(prefix="precompact-bench-") as scratch:
        path = Path(scratch) / "session.jsonl"
        with path.open("w") as f:
            n = 0
            while f.tell() < arguments.megabytes << 20:
                n += 1
                size = random.randint(200_000, 2_000_000) if n % 50 == 0 else random.randint(1000, 4000)
                entry = {"type": "user", "uuid": f"u-{n}", "message": {"role": "user", "content": "y" * size}}
                f.write(json.dumps(entry) + "\n")
        timed: dict[str, list[float]] = {"before": [], "after": []}
        for _ in range(arguments.runs):
            for way, client in (("before", arguments.before), ("after", here)):
                environment = {**os.environ, "PYTHONPATH": str(client)}
                done = subprocess.run(
                    [sys.executable, "-c", TIMED, str(path)],
                    env=environment,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                milliseconds, read = done.stdout.split()
                assert int(read) == path.stat().st_size, done.stdout
                timed[way].append(float(milliseconds))
        print(f"{path.stat().st_size / (1 << 20):.1f} MB, {arguments.runs} runs each, in turn:")
        for way, times in timed.items():
            print(f"  {way:7} median {statistics.median(times):6.1f} ms  ({min(times):.1f} to {max(times):.1f})")


if __name__ == "__main__":
    throwaway_home.use()
    main()
