"""The recall index update after one savepoint, replayed with that savepoint's Layer 1: a
generated session grows to `--mb` MB over `--steps` savepoints as in scripts/bench_recall.py, each
indexed as the worker indexes it; logs/ is copied before the last savepoint, and each of
`--replays` replays puts that copy back, writes the last savepoint (Layer 1) and indexes it (the
update), so both are measured on the same state every time. Prints the median CPU of each (this
process's `time.process_time`: on a loaded machine the steadier figure; a single Layer 1 carried
that one run's noise into the ratio before #42's seventh round), each replay's update CPU, the
median of the replays' update / Layer 1 ratios, and the median CPU of the calling thread alone
during the update (`time.thread_time`: the Python side; the rest is tantivy's indexing and
merging threads). Replaying the same work lets two builds be compared: run this script with each
build's interpreter (`/work/main/.venv/bin/python scripts/bench_recall_update.py ...`), one after
the other.
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

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from precompact.config import settings as configuration
from precompact.local import chunks, snapshot
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
        settings, session = (
            snapshot.Settings.of(loaded),
            snapshot.Session("bench", str(transcript), str(project), "auto"),
        )
        for step in range(1, steps):
            transcript.write_bytes(b"".join(lines[: len(lines) * step // steps]))
            snapshot.create_savepoint(settings, session)
            recall.update(loaded.logs, loaded.instance)
        transcript.write_bytes(b"".join(lines))
        before, others = _listing(loaded.logs)
        kept = root / "logs-before"  # the files of logs/ before the last savepoint, but the chunks
        for name in before:
            (kept / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(loaded.logs / name, kept / name)
        layer_1, updates, updates_here = [], [], []  # the process's CPU; this thread's (the rest is tantivy's)
        for _ in range(replays):
            _put_back(loaded.logs, kept, before, others)
            began = time.process_time()
            snapshot.create_savepoint(settings, session)
            layer_1.append(time.process_time() - began)
            began, began_here = time.process_time(), time.thread_time()
            outcome = recall.update(loaded.logs, loaded.instance)
            updates.append(time.process_time() - began)
            updates_here.append(time.thread_time() - began_here)
            assert outcome.indexed == [steps] and not outcome.notes, outcome
    return {
        "history_mb": size_mb,
        "savepoints": steps,
        "layer_1_cpu_s": layer_1,
        "layer_1_cpu_median_s": statistics.median(layer_1),
        "update_cpu_s": updates,
        "update_cpu_median_s": statistics.median(updates),
        "update_over_layer_1_median": statistics.median(u / one for u, one in zip(updates, layer_1, strict=True)),
        "update_main_thread_cpu_median_s": statistics.median(updates_here),
        "load": os.getloadavg()[0],
    }


def _listing(logs: Path) -> tuple[dict[str, tuple[int, int]], set[str]]:
    """Every file under logs/ but the chunks, with its size and modification time; the chunks'
    names (each written once, under its hash) and the directories'."""
    files, others = {}, set()
    for path in logs.rglob("*"):
        name = path.relative_to(logs).as_posix()
        if path.is_dir() or name.startswith(chunks.CHUNKS_DIR + "/"):
            others.add(name)
        else:
            info = path.stat()
            files[name] = (info.st_size, info.st_mtime_ns)
    return files, others


def _put_back(logs: Path, kept: Path, files: dict[str, tuple[int, int]], others: set[str]) -> None:
    """logs/ as it was before the last savepoint: what it added removed (chunks included), the
    files it changed written back in place, the recall index copied back whole. The others keep
    their identity: a grown savepoint is read from its new chunks only while the previous
    snapshot and its chunks are the files the index checked then (`_Snapshots.grown`)."""
    text = recall.TEXT_DIR
    for path in sorted(logs.rglob("*"), reverse=True):  # a directory's files before it
        name = path.relative_to(logs).as_posix()
        if name == text or name.startswith(text + "/") or name == recall.INDEX_NAME:
            continue
        if name not in files and name not in others:
            path.rmdir() if path.is_dir() else path.unlink()
        elif name in files and (path.stat().st_size, path.stat().st_mtime_ns) != files[name]:
            path.write_bytes((kept / name).read_bytes())
    shutil.rmtree(logs / text)
    (logs / recall.INDEX_NAME).unlink()
    shutil.copytree(kept / text, logs / text)
    (logs / text).chmod(0o700)
    shutil.copyfile(kept / recall.INDEX_NAME, logs / recall.INDEX_NAME)


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
    median, layer_1 = result["update_cpu_median_s"], result["layer_1_cpu_median_s"]
    here = result["update_main_thread_cpu_median_s"]
    print(
        f"savepoint {args.steps} of {args.steps} ({args.mb} MB), medians of {args.replays}: "
        f"Layer 1 {layer_1 * 1000:.1f} ms CPU; update {median * 1000:.1f} ms CPU "
        f"({', '.join(f'{u * 1000:.0f}' for u in result['update_cpu_s'])}; this thread "
        f"{here * 1000:.1f} ms), {result['update_over_layer_1_median']:.2f}× Layer 1; "
        f"load {result['load']:.2f}"
    )


if __name__ == "__main__":
    throwaway_home.use()
    main()
