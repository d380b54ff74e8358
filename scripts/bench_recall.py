"""The measuring half of scripts/bench-recall (see there): a session that grows to `--mb` MB of
saved conversation over `--steps` savepoints; each savepoint's Layer 1 time against the index
update the worker then does (wall and this process's CPU time: on a loaded machine the CPU ratio
is the steadier one); `precompact recall` over the whole history (a process, as a user
or a Bash tool call runs it, and in process); and a running `precompact mcp` server: its start-up
and its answer to a recall, through the MCP SDK's client over stdio."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from precompact.config import settings as configuration
from precompact.local import snapshot
from precompact.recall import fulltext as recall
from support.commands import PRECOMPACT
from support.projects import new_project
from support.transcript_gen import generate

MB = 1_000_000
RARE = "the quokka ledger overflowed at row 4096"
QUERIES = {"rare phrase": f'"{RARE}"', "two common words": "flaky test", "one common word": "handler"}


def progress(text: str) -> None:
    print(f"bench: {text}", file=sys.stderr, flush=True)


def summary(values: list[float]) -> dict:
    return {"median": statistics.median(values), "max": max(values)}


def grow_and_index(root: Path, size_mb: int, steps: int) -> tuple[Path, list[dict]]:
    """Savepoints of one session at `steps` even points of its growth to `size_mb` MB; each
    savepoint's Layer 1 time and the index update after it (what the worker runs)."""
    project = new_project(root, "project", git_layer=False, chain_layer=False, instance="Bench #1").path
    progress(f"generating a {size_mb} MB transcript")
    whole = generate(root / "whole.jsonl", size_mb * MB, project=project, planted=[RARE])
    lines = whole.path.read_bytes().splitlines(keepends=True)
    transcript = root / "session.jsonl"
    loaded = configuration.load(project)
    rows = []
    for step in range(1, steps + 1):
        progress(f"savepoint {step}/{steps}")
        transcript.write_bytes(b"".join(lines[: len(lines) * step // steps]))
        began, began_cpu = time.perf_counter(), time.process_time()
        written = snapshot.create_savepoint(
            snapshot.Settings.of(loaded), snapshot.Session("bench", str(transcript), str(project), "auto")
        )
        layer_1, layer_1_cpu = time.perf_counter() - began, time.process_time() - began_cpu
        began, began_cpu = time.perf_counter(), time.process_time()
        outcome = recall.update(loaded.logs, loaded.instance)
        update, update_cpu = time.perf_counter() - began, time.process_time() - began_cpu
        assert outcome.indexed == [written.sequence] and not outcome.notes, outcome
        rows.append(
            {
                "savepoint": step,
                "transcript_bytes": transcript.stat().st_size,
                "snapshot_bytes": written.size,
                "layer_1_s": layer_1,
                "index_update_s": update,
                "layer_1_cpu_s": layer_1_cpu,
                "index_update_cpu_s": update_cpu,
            }
        )
    return project, rows


def recall_times(project: Path, runs: int) -> dict:
    loaded = configuration.load(project)
    out = {}
    for name, query in QUERIES.items():
        process, in_process = [], []
        for _ in range(runs):
            began = time.perf_counter()
            done = subprocess.run(
                [PRECOMPACT, "recall", query], cwd=project, capture_output=True, text=True, check=True
            )
            process.append(time.perf_counter() - began)
            began = time.perf_counter()
            found = recall.search(loaded.logs, loaded.instance, query)
            found.text(recall.DEFAULT_BUDGET)
            in_process.append(time.perf_counter() - began)
        if name == "rare phrase":
            assert RARE in done.stdout.splitlines()[1], done.stdout[:500]
        out[name] = {"process_s": summary(process), "in_process_s": summary(in_process), "matched": found.matched}
    began = time.perf_counter()
    subprocess.run([PRECOMPACT, "--version"], cwd=project, capture_output=True, check=True)
    out["precompact --version (the process floor)"] = {"process_s": summary([time.perf_counter() - began])}
    return out


async def mcp_times(project: Path, runs: int) -> dict:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    server = StdioServerParameters(
        command=PRECOMPACT,
        args=["mcp"],
        cwd=str(project),
        env={k: v for k, v in os.environ.items() if k == "XDG_CONFIG_HOME"},
    )
    began = time.perf_counter()
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        start_up = time.perf_counter() - began
        calls = {}
        for name, query in QUERIES.items():
            times = []
            for _ in range(runs):
                began = time.perf_counter()
                answer = await session.call_tool("recall", {"query": query})
                times.append(time.perf_counter() - began)
                assert not answer.is_error, answer
            calls[name] = summary(times)
    return {"start_up_s": start_up, "recall_call_s": calls}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="precompact-bench-recall-") as scratch:
        root = Path(scratch)
        os.environ["XDG_CONFIG_HOME"] = str(root / "xdg")  # approvals of the scratch projects only
        project, rows = grow_and_index(root, args.mb, args.steps)
        index_bytes = recall.index_path(project / "logs").stat().st_size
        progress("recall")
        recalls = recall_times(project, args.runs)
        progress("MCP server")
        mcp = anyio.run(mcp_times, project, args.runs)
    result = {
        "history_mb": args.mb,
        "savepoints": rows,
        "index_bytes": index_bytes,
        "recall": recalls,
        "mcp": mcp,
        "load": os.getloadavg()[0],
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"Saved history: {args.mb} MB of conversation in {args.steps} savepoints of one growing session; index {index_bytes / MB:.1f} MB; load {result['load']:.2f}\n"
    )
    print(
        "| savepoint | transcript | Layer 1 wall / CPU | index update wall / CPU | update / Layer 1, wall / CPU |\n|---|---|---|---|---|"
    )
    for row in rows:
        print(
            f"| {row['savepoint']} | {row['transcript_bytes'] / MB:.0f} MB | {row['layer_1_s'] * 1000:.0f} / {row['layer_1_cpu_s'] * 1000:.0f} ms"
            f" | {row['index_update_s'] * 1000:.0f} / {row['index_update_cpu_s'] * 1000:.0f} ms"
            f" | {row['index_update_s'] / row['layer_1_s']:.2f} / {row['index_update_cpu_s'] / row['layer_1_cpu_s']:.2f} |"
        )
    print(
        f"\n| recall ({args.runs} runs, median / max) | `precompact recall` process | in process | matches |\n|---|---|---|---|"
    )
    for name, row in recalls.items():
        in_process = row.get("in_process_s")
        inner = f"{in_process['median'] * 1000:.0f} / {in_process['max'] * 1000:.0f} ms" if in_process else "-"
        print(
            f"| {name} | {row['process_s']['median'] * 1000:.0f} / {row['process_s']['max'] * 1000:.0f} ms | {inner} | {row.get('matched', '-')} |"
        )
    print(f"\nMCP server start-up (spawn to tools listed): {mcp['start_up_s'] * 1000:.0f} ms")
    for name, row in mcp["recall_call_s"].items():
        print(f"MCP recall call, {name}: {row['median'] * 1000:.0f} / {row['max'] * 1000:.0f} ms")


if __name__ == "__main__":
    throwaway_home.use()
    main()
