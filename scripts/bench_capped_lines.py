"""What the cap on a Codex rollout's lines costs (boundary/session_file.capped_lines): the rest of a
made-up rollout of about MB megabytes (tool outputs of 4 KB, as scripts/bench_agents.py --reading
makes) read whole by `read()`, as transcript/codex.py read it before the cap, and by
`capped_lines`, in turn, each read `--runs` times; the medians and ranges in milliseconds.

Usage: nice -n 10 .venv/bin/python scripts/bench_capped_lines.py [--megabytes 50] [--runs 15]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import throwaway_home
from precompact.boundary import session_file
from precompact.transcript import claude_code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=50)
    parser.add_argument("--runs", type=int, default=15)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="precompact-bench-") as scratch:
        rollout = Path(scratch) / "rollout.jsonl"
        output = "Process exited with code 0\nOutput:\n" + "x" * 4000
        with rollout.open("w") as f:
            n = 0
            while f.tell() < arguments.megabytes << 20:
                n += 1
                item = {"type": "function_call_output", "call_id": f"c{n}", "output": output}
                f.write(json.dumps({"ordinal": n, "type": "response_item", "payload": item}) + "\n")
        size = rollout.stat().st_size
        timed: dict[str, list[float]] = {"read()": [], "capped_lines": []}
        for _ in range(arguments.runs):
            for way, times in timed.items():
                with session_file.open_read(rollout) as f:
                    start = time.perf_counter()
                    if way == "read()":
                        data = f.read()
                    else:
                        data = session_file.capped_lines(f, claude_code.MAX_LINE_BYTES, rollout)
                    times.append((time.perf_counter() - start) * 1000)
                assert len(data) == size
                del data
    print(f"{size / (1 << 20):.1f} MB, {arguments.runs} runs each, in turn:")
    for way, times in timed.items():
        print(f"  {way:13} median {statistics.median(times):6.1f} ms  ({min(times):.1f} to {max(times):.1f})")


if __name__ == "__main__":
    throwaway_home.use()
    main()
