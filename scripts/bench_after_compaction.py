"""What UserPromptSubmit and PostToolUse cost with nothing pending (issue 46): they fire on every
prompt and every tool call once installed, so each must cost what a no-op event costs (issue 42:
a bare interpreter's start + 15 ms CPU). Each event runs in a trusted precompact project, paired in
turn with `python -c pass` (scripts/bench_hooks.py's method: the ratio and the difference taken
pair by pair), beside the hook's existing no-op (SessionStart outside any project) for
comparison. CPU is user + system time of the finished process (`os.wait4`).

Usage: .venv/bin/python scripts/bench_after_compaction.py [--runs 11] [--json]"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from support.commands import PRECOMPACT
from support.process_cost import Cost, paired
from support.projects import new_project
from support.transcript_gen import payload


def figures(costs: list[Cost], bare: list[Cost]) -> dict:
    pairs = list(zip(costs, bare, strict=True))
    return {
        "cpu_ms": round(statistics.median(c.cpu for c in costs) * 1000, 1),
        "bare_cpu_ms": round(statistics.median(b.cpu for b in bare) * 1000, 1),
        "cpu_over_bare_ms": round(statistics.median(c.cpu - b.cpu for c, b in pairs) * 1000, 1),
        "cpu_ratio": round(statistics.median(c.cpu / max(b.cpu, 1e-3) for c, b in pairs), 2),
        "wall_over_bare_ms": round(statistics.median(c.wall - b.wall for c, b in pairs) * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    bare = [sys.executable, "-c", "pass"]
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        project = new_project(root, "project", git_layer=False, chain_layer=False)
        for event in ("UserPromptSubmit", "PostToolUse"):
            stdin = json.dumps(payload(event, project.path, root / "none.jsonl", session_id="bench")).encode()
            results[f"{event}, nothing pending"] = figures(
                *paired([PRECOMPACT, "hook"], stdin, project.path, bare, runs=args.runs)
            )
        outside = root / "elsewhere"
        outside.mkdir()
        stdin = json.dumps(payload("SessionStart", outside, source="startup")).encode()
        results["SessionStart outside a project (the existing no-op)"] = figures(
            *paired([PRECOMPACT, "hook"], stdin, outside, bare, runs=args.runs)
        )
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for name, f in results.items():
        print(
            f"{name}: {f['cpu_ms']} ms CPU against {f['bare_cpu_ms']} ms bare "
            f"(+{f['cpu_over_bare_ms']} ms, {f['cpu_ratio']}x); wall +{f['wall_over_bare_ms']} ms"
        )


if __name__ == "__main__":
    throwaway_home.use()
    main()
