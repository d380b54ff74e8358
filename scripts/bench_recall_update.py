"""The recall index update after one savepoint, replayed: a generated session grows to `--mb` MB
over `--steps` savepoints as in scripts/bench_recall.py, each indexed as the worker indexes it;
the index is copied before the last savepoint's update, which is then replayed `--replays`
times from that copy (the SQLite bookkeeping and tantivy's directory). Prints the last savepoint's Layer 1 CPU and each replay's update CPU (this
process's `time.process_time`: on a loaded machine the steadier figure), and the median CPU of
the calling thread alone (`time.thread_time`: the Python side; the rest is tantivy's indexing and
merging threads). Replaying the same
update from the same index lets two builds be compared on identical work: run this script with
each build's interpreter (`/work/main/.venv/bin/python scripts/bench_recall_update.py ...`), one
after the other.
Usage: .venv/bin/python scripts/bench_recall_update.py [--mb 100] [--steps 10] [--replays 5] [--json]"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from precompact.config import settings as configuration
from precompact.local import snapshot
from precompact.recall import fulltext as recall
from support.projects import new_project
from support.transcript_gen import generate

MB = 1_000_000


def replayed(size_mb: int, steps: int, replays: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="precompact-bench-recall-update-") as scratch:
        root = Path(scratch)
        os.environ["XDG_CONFIG_HOME"] = str(root / "xdg")  # approvals of the scratch project only
        project = new_project(root, "project", git_layer=False, chain_layer=False, instance="Bench #1").path
        whole = generate(root / "whole.jsonl", size_mb * MB, project=project, planted=[])
        lines = whole.path.read_bytes().splitlines(keepends=True)
        transcript = root / "session.jsonl"
        loaded = configuration.load(project)
        index, kept = recall.index_path(loaded.logs), root / "index-before"
        words, kept_words = loaded.logs / recall.TEXT_DIR, root / "words-before"  # tantivy's part of the index
        layer_1_cpu = 0.0
        for step in range(1, steps + 1):
            transcript.write_bytes(b"".join(lines[: len(lines) * step // steps]))
            began = time.process_time()
            snapshot.create_savepoint(
                snapshot.Settings.of(loaded), snapshot.Session("bench", str(transcript), str(project), "auto")
            )
            layer_1_cpu = time.process_time() - began
            if step < steps:
                recall.update(loaded.logs, loaded.instance)
        if steps > 1:
            shutil.copyfile(index, kept)
            shutil.copytree(words, kept_words)
        updates, updates_here = [], []  # the process's CPU; this thread's (the rest is tantivy's threads)
        for _ in range(replays):
            index.unlink(missing_ok=True)
            shutil.rmtree(words, ignore_errors=True)
            if steps > 1:
                shutil.copyfile(kept, index)
                shutil.copytree(kept_words, words)
                words.chmod(0o700)
            began, began_here = time.process_time(), time.thread_time()
            outcome = recall.update(loaded.logs, loaded.instance)
            updates.append(time.process_time() - began)
            updates_here.append(time.thread_time() - began_here)
            assert outcome.indexed == [steps] and not outcome.notes, outcome
    return {
        "history_mb": size_mb,
        "savepoints": steps,
        "layer_1_cpu_s": layer_1_cpu,
        "update_cpu_s": updates,
        "update_cpu_median_s": statistics.median(updates),
        "update_main_thread_cpu_median_s": statistics.median(updates_here),
        "load": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--replays", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = replayed(args.mb, args.steps, args.replays)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    median, layer_1 = result["update_cpu_median_s"], result["layer_1_cpu_s"]
    here = result["update_main_thread_cpu_median_s"]
    print(
        f"savepoint {args.steps} of {args.steps} ({args.mb} MB): Layer 1 {layer_1 * 1000:.0f} ms CPU; "
        f"update {median * 1000:.0f} ms CPU, median of {args.replays} "
        f"({', '.join(f'{u * 1000:.0f}' for u in result['update_cpu_s'])}; this thread "
        f"{here * 1000:.0f} ms, median), {median / layer_1:.2f}× Layer 1; "
        f"load {result['load']:.2f}"
    )


if __name__ == "__main__":
    main()
