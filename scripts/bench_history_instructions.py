"""Instructions (valgrind's count, not time) that Layer 1's history path executes on the 10 MB
transcripts of `bench_hooks.py --only precompact` (generated text, and a session reading the
standard library's sources): `snapshot.history_part` over every block, redaction's line gate
included, less a run that only reads the blocks. On a shared machine whose load swings from 1 to
15, CPU times of the same code differ by 20 to 40 ms from run to run; an instruction count does
not move (hash seeds fixed), so a change of a few per cent in this path can be told from noise.
It does not see what memory costs (page faults, cache misses): a change that passes here is
then timed as a whole process with `bench_hooks.py --precompact`.

Usage: .venv/bin/python scripts/bench_history_instructions.py [--mb 10] [--against CLIENT_DIR] [--json]
`--against` counts another build's `client` directory too (say `git archive <commit> client | tar
-x -C /tmp/base`, then `--against /tmp/base/client`), with this interpreter and the same transcripts."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from support.secret_corpus import stdlib_sources
from support.transcript_gen import generate

MB = 1_000_000
# Run in the child: read the transcript's blocks, then (with "1") store them as the history does.
CHILD = """
import gc, sys
gc.disable()
from pathlib import Path
from precompact.local import snapshot
from precompact.transcript import claude_code
from precompact.transcript.redact import Redactor
path = Path(sys.argv[1])
redactor = Redactor()
blocks = list(claude_code.blocks(path, claude_code.TranscriptScan(path=str(path))))
if sys.argv[2] == "1":
    scan = claude_code.TranscriptScan(path=str(path))
    for block in blocks:
        snapshot.history_part(block, scan, redactor)
"""


def instructions(client: Path, transcript: Path, store: bool) -> int:
    """The instructions valgrind counts in one child process."""
    found = subprocess.run(
        [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
            sys.executable,
            "-c",
            CHILD,
            str(transcript),
            "1" if store else "0",
        ],
        env={**os.environ, "PYTHONPATH": str(client), "PYTHONHASHSEED": "0"},
        capture_output=True,
        text=True,
        check=True,
    )
    line = next(line for line in found.stderr.splitlines() if "I   refs:" in line or "I refs:" in line)
    return int(line.split(":")[1].replace(",", "").strip())


def history(client: Path, transcript: Path) -> int:
    """Millions of instructions the history path takes on `transcript` with `client`'s code."""
    instructions(client, transcript, True)  # writes the build's bytecode caches before counting
    return round((instructions(client, transcript, True) - instructions(client, transcript, False)) / 1e6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=10, help="transcript size")
    parser.add_argument("--against", type=Path, help="another build's client directory, counted too")
    parser.add_argument("--json", action="store_true", help="JSON instead of lines of text")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("bench_history_instructions: valgrind is not installed (apt-get install valgrind)")
    builds = {"this build": REPO / "client"}
    if args.against:
        builds["against"] = args.against.resolve()
    root = Path(tempfile.mkdtemp(prefix="precompact-bench-history-"))
    try:
        transcripts = {
            "generated": generate(root / "generated.jsonl", args.mb * MB, project=root).path,
            "real code": generate(
                root / "real.jsonl", args.mb * MB, project=root / "real", sources=stdlib_sources()
            ).path,
        }
        results = {
            name: {build: history(client, path) for build, client in builds.items()}
            for name, path in transcripts.items()
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for name, counts in results.items():
            print(f"{name}: " + ", ".join(f"{build} {count} M instructions" for build, count in counts.items()))


if __name__ == "__main__":
    throwaway_home.use()
    main()
