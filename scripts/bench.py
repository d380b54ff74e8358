"""The measuring half of scripts/bench (see there): the hook's costs at 1, 10 and 100 MB against
the machine's I/O floor, resurrection, verify over 1,000 savepoints, the Layer 3 round trip on
precompact-localnet and the hook path's import time. Markdown table, or JSON with --json."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

import bench_encryption
from precompact.config import settings as configuration
from precompact.local import savepoint_log, snapshot
from precompact.remote import encryption, gitstore
from precompact.verifier import signed
from support.commands import PRECOMPACT
from support.localnet import LocalnetProcess
from support.projects import fund, new_project, store
from support.secret_corpus import stdlib_sources
from support.transcript_gen import generate, payload

MB = 1_000_000


def progress(text: str) -> None:
    print(f"bench: {text}", file=sys.stderr, flush=True)


def timed_process(args: list[str], stdin: bytes = b"", cwd: Path | None = None) -> tuple[float, float]:
    """Wall seconds from start to exit, and peak RSS in MB, of one process."""
    began = time.perf_counter()
    process = subprocess.Popen(
        args, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd
    )
    process.stdin.write(stdin)
    process.stdin.close()
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - began
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"bench: {' '.join(args)} exited {process.returncode}")
    return elapsed, usage.ru_maxrss / 1024


def summary(values: list[float]) -> dict:
    return {"median": statistics.median(values), "max": max(values)}


def wait_for_worker(path: Path) -> None:
    """The hook's background worker must not run into the next measurement: it has written what
    PreCompact queued (a transcript longer than the hook writes itself) and pushed every savepoint."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        saved = savepoint_log.savepoints(path / "logs")
        if saved and not snapshot.queued(path / "logs") and all(s.layer_2 == "PUSHED" for s in saved):
            return
        time.sleep(0.05)
    raise SystemExit(f"bench: the worker did not finish; see {path / 'logs' / 'precompact-worker.log'}")


def by_size(root: Path, size_mb: int, runs: int, real_code: bool = False) -> dict:
    """The hook's costs on a transcript of `size_mb`: made-up code, or (`real_code`) a session
    reading the standard library's sources, where most lines open some redaction gate. Every run
    is a first savepoint: a new project each time (a second PreCompact of the same session would
    find nothing new and save nothing; a second savepoint of the same bytes in one project reuses
    their chunks), so no median is made of repeats."""
    name = f"{size_mb}{'-real' if real_code else ''}"
    progress(f"{name} MB: generating the transcript")
    sources = stdlib_sources() if real_code else ()
    transcript = None
    floor, hook, rss, layer_1, layer_2, brief, start = [], [], [], [], [], [], []
    for run in range(runs):
        progress(f"{name} MB: run {run + 1}/{runs}")
        path = new_project(root, f"p{name}-{run}", git_layer=True, chain_layer=False, instance="Bench #1").path
        # The session reads files of its project: each project gets them (the same bytes).
        made = generate(root / f"t{name}-{run}.jsonl", size_mb * MB, project=path, sources=sources)
        transcript = transcript or made
        copy = root / "floor-copy"
        began = time.perf_counter()
        subprocess.run(f"cp {made.path} {copy} && sha256sum {copy} >/dev/null", shell=True, check=True)
        floor.append(time.perf_counter() - began)
        copy.unlink()
        wall, peak = timed_process(
            [PRECOMPACT, "hook"], json.dumps(payload("PreCompact", path, made.path)).encode(), cwd=path
        )
        hook.append(wall)
        rss.append(peak)
        wait_for_worker(path)
        brief.append(timed_process([PRECOMPACT, "resurrect", "--format", "brief"], cwd=path)[0])
        start.append(
            timed_process(
                [PRECOMPACT, "hook"], json.dumps(payload("SessionStart", path, source="compact")).encode(), cwd=path
            )[0]
        )
        # Layers 1 and 2 in process, in a project of their own: a first savepoint too.
        alone = new_project(root, f"l{name}-{run}", git_layer=True, chain_layer=False, instance="Bench #1").path
        alone_transcript = generate(root / f"l{name}-{run}.jsonl", size_mb * MB, project=alone, sources=sources)
        loaded = configuration.load(alone)
        began = time.perf_counter()
        written = snapshot.create_savepoint(
            snapshot.Settings.of(loaded), snapshot.Session("bench", str(alone_transcript.path), str(alone), "auto")
        )
        layer_1.append(time.perf_counter() - began)
        saved = next(
            s for s in savepoint_log.savepoints(loaded.logs, loaded.instance) if s.sequence == written.sequence
        )
        scratch = gitstore.Target(
            alone, "origin", "bench/scratch", encryption.Keys.of(loaded)
        )  # encrypted, init's default
        repo = gitstore.open_repository(scratch)
        began = time.perf_counter()
        gitstore.commit_savepoint(repo, scratch, loaded.logs, saved)
        layer_2.append(time.perf_counter() - began)
        for finished in (path, alone):
            shutil.rmtree(finished / "logs", ignore_errors=True)  # 100 MB runs fill the disk otherwise
    floor_median = statistics.median(floor)
    assert transcript is not None
    return {
        "transcript_bytes": transcript.bytes,
        "loaded_files": len(transcript.files),
        "io_floor_s": summary(floor),
        "pre_compact_hook_s": summary(hook),
        "hook_over_floor_ratio": statistics.median(hook) / floor_median,
        "hook_peak_rss_mb": summary(rss),
        "layer_1_s": summary(layer_1),
        "layer_2_commit_s": summary(layer_2),
        "resurrect_brief_s": summary(brief),
        "session_start_hook_s": summary(start),
    }


def stored_bytes(*roots: Path) -> int:
    """The bytes of every file under `roots`."""
    return sum(
        (Path(folder) / name).stat().st_size for root in roots for folder, _, names in os.walk(root) for name in names
    )


def remote_tip(project) -> str | None:
    found = subprocess.run(
        ["git", "-C", str(project.remote), "rev-parse", "--verify", "-q", f"refs/heads/{project.branch}"],
        check=False,
        capture_output=True,
        text=True,
    )
    return found.stdout.strip() or None


def pushed_bytes(path: Path, before: str | None, after: str | None) -> int:
    """The size of the pack a push from `before` to `after` sends: what `git push` runs
    (pack-objects, thin, deltas against what the remote has), without the network, in
    precompact's own git directory for the project at `path`, where the commits are."""
    wanted = f"{after}\n" + (f"^{before}\n" if before else "")
    pack = subprocess.run(
        ["git", "--git-dir", str(store(path)), "pack-objects", "--stdout", "--thin", "--revs", "-q"],
        input=wanted.encode(),
        capture_output=True,
        check=True,
    )
    return len(pack.stdout)


def growth(root: Path, total_mb: int, step_mb: int) -> dict:
    """One session growing to `total_mb`, a PreCompact hook every `step_mb` (git on, chain off):
    per savepoint the hook's time and the size of the pack its push sent against the new
    content compressed (zlib level 6); at the end what logs/ and the (repacked) remote hold against the
    transcript, and verify --all and resurrect."""
    progress(f"growth: generating a {total_mb} MB transcript")
    project = new_project(root, "pgrowth", git_layer=True, chain_layer=False, instance="Bench #1")
    path = project.path
    # Real code, as a session reading files has: it compresses as real sessions do.
    source = generate(root / "growth-source.jsonl", total_mb * MB, project=path, sources=stdlib_sources()).path
    session = root / "growth.jsonl"
    session.write_bytes(b"")
    sample = root / "floor-10mb"
    sample.write_bytes(source.read_bytes()[: 10 * MB])
    floor = []
    for _ in range(3):
        began = time.perf_counter()
        subprocess.run(f"cp {sample} {sample}.copy && sha256sum {sample}.copy >/dev/null", shell=True, check=True)
        floor.append(time.perf_counter() - began)
    savepoints = []
    with source.open("rb") as lines:
        while new := lines.read(step_mb * MB) + lines.readline():
            with session.open("ab") as f:
                f.write(new)
            progress(f"growth: savepoint at {session.stat().st_size / MB:.0f} MB")
            before = remote_tip(project)
            hook, _ = timed_process(
                [PRECOMPACT, "hook"],
                json.dumps(payload("PreCompact", path, session, session_id="growth")).encode(),
                cwd=path,
            )
            wait_for_worker(path)
            savepoints.append(
                {
                    "transcript_bytes": session.stat().st_size,
                    "hook_s": hook,
                    "pushed_bytes": pushed_bytes(path, before, remote_tip(project)),
                    "new_compressed_bytes": len(zlib.compress(new, 6)),
                }
            )
    transcript_bytes = session.stat().st_size
    compressed = len(zlib.compress(session.read_bytes(), 6))
    logs = path / "logs"
    # Derived data (the recall index) and the worker's own files are not counted.
    local = stored_bytes(*[logs / d for d in ("precompact-saves", "precompact-chunks", "precompact-resume")])
    local += (logs / savepoint_log.INDEX_NAME).stat().st_size
    subprocess.run(["git", "-C", str(project.remote), "repack", "-a", "-d", "-q"], check=True)
    packed = stored_bytes(project.remote / "objects")
    progress("growth: verify --all and resurrect")
    verify_all = timed_process([PRECOMPACT, "verify", "--all"], cwd=path)[0]
    resurrect = timed_process([PRECOMPACT, "resurrect", "--format", "report"], cwd=path)[0]
    return {
        "transcript_bytes": transcript_bytes,
        "compressed_bytes": compressed,
        "io_floor_10mb_s": summary(floor),
        "savepoints": savepoints,
        "local_bytes": local,
        "local_ratio": local / transcript_bytes,
        "remote_packed_bytes": packed,
        "remote_packed_ratio": packed / compressed,
        "pushed_ratio_max": max(s["pushed_bytes"] / s["new_compressed_bytes"] for s in savepoints),
        "verify_all_s": verify_all,
        "resurrect_s": resurrect,
    }


def growth_markdown(found: dict) -> str:
    floor = found["io_floor_10mb_s"]["median"]
    lines = [
        "| savepoint at | PreCompact hook | pushed | new content, compressed | pushed / new |",
        "|---|---|---|---|---|",
    ]
    for s in found["savepoints"]:
        lines.append(
            f"| {s['transcript_bytes'] / MB:.0f} MB | {s['hook_s'] * 1000:.0f} ms | {s['pushed_bytes'] / MB:.2f} MB"
            f" | {s['new_compressed_bytes'] / MB:.2f} MB | {s['pushed_bytes'] / s['new_compressed_bytes']:.2f}× |"
        )
    last = found["savepoints"][-1]["hook_s"]
    return "\n".join(
        [
            *lines,
            "",
            f"- I/O floor for 10 MB (cp + sha256sum): {floor * 1000:.0f} ms; last hook {last * 1000:.0f} ms = floor + {(last - floor) * 1000:.0f} ms",
            f"- local storage (snapshots, chunks, resume points, index): {found['local_bytes'] / MB:.1f} MB = {found['local_ratio']:.2f}× the final transcript ({found['transcript_bytes'] / MB:.1f} MB)",
            f"- remote, repacked: {found['remote_packed_bytes'] / MB:.1f} MB = {found['remote_packed_ratio']:.2f}× the compressed transcript ({found['compressed_bytes'] / MB:.1f} MB)",
            f"- pushed per savepoint / new content compressed: at most {found['pushed_ratio_max']:.2f}×",
            f"- verify --all: {found['verify_all_s'] * 1000:.0f} ms; resurrect --format report (latest): {found['resurrect_s'] * 1000:.0f} ms",
        ]
    )


def verify_thousand(root: Path, count: int) -> dict:
    path = new_project(root, "verify", git_layer=True, chain_layer=False, instance="Bench #1").path
    loaded = configuration.load(path)
    transcript = generate(root / "small.jsonl", 20_000, project=path)
    session = snapshot.Session("bench", str(transcript.path), str(path), "auto")
    for n in range(count):
        if n % 100 == 0:
            progress(f"verify: making savepoint {n + 1}/{count}")
        snapshot.create_savepoint(snapshot.Settings.of(loaded), session)
    progress(f"verify: committing {count} savepoints")
    target = gitstore.Target.of(loaded)
    repo = gitstore.open_repository(target)
    problems = savepoint_log.record_outcomes(
        loaded.logs, gitstore.sync(repo, target, loaded.logs, signed.vouching(loaded))
    )
    if problems:
        raise SystemExit(f"bench: Layer 2 of {count} savepoints failed: {problems[0]}")
    progress("verify: verify --all")
    wall, _ = timed_process([PRECOMPACT, "verify", "--all"], cwd=path)
    return {"savepoints": count, "verify_all_s": wall}


def layer_3_round_trip(root: Path, count: int) -> dict:
    from precompact.ops import anchoring as chain_post

    node = LocalnetProcess(root)
    url = node.start()
    try:
        chain_project = new_project(root, "chain", git_layer=False, chain_layer=True, cluster=url, instance="Bench #1")
        path = chain_project.path
        loaded = configuration.load(path)
        fund(url, chain_project.authority(), lamports=10**9)
        session = snapshot.Session("bench", None, str(path), "auto")
        times = []
        for n in range(count):
            snapshot.create_savepoint(snapshot.Settings.of(loaded), session)
            began = time.perf_counter()
            posts = chain_post.post_pending(
                url, loaded.keypair, loaded.program_id, loaded.instance, loaded.logs, git_layer=False
            )
            problems = savepoint_log.record_outcomes(loaded.logs, posts)
            times.append(time.perf_counter() - began)
            if problems:
                raise SystemExit(f"bench: Layer 3 failed: {problems[0]}")
        progress(f"layer 3: {count} savepoints posted")
        return {"savepoints": count, "round_trip_s": {**summary(times[1:] or times), "p50_first_excluded": True}}
    finally:
        node.stop()


def import_time() -> dict:
    times, heavy = [], []
    for _ in range(5):
        result = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                "-c",
                "import precompact.edges.command, precompact.edges.hook, precompact.edges.worker, sys; print(sorted({m.split('.')[0] for m in sys.modules} & {'click','git','solana','solders','anchorpy','borsh_construct','httpx'}))",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        total = sum(int(m.group(1)) for m in re.finditer(r"import time:\s+\d+ \|\s+(\d+) \| \S", result.stderr))
        times.append(total / 1e6)
        heavy = json.loads(result.stdout.replace("'", '"'))
    return {"hook_path_import_s": summary(times), "heavy_modules_imported": heavy}


def markdown(results: dict) -> str:
    columns = list(results["by_size"])
    head = "| metric | " + " | ".join(columns) + " |"
    lines = [head, "|---" * (len(columns) + 1) + "|"]

    def row(name: str, key: str, scale: float = 1000, unit: str = "ms") -> None:
        cells = []
        for column in columns:
            value = results["by_size"][column][key]
            cells.append(
                f"{value['median'] * scale:.0f} / {value['max'] * scale:.0f} {unit}"
                if isinstance(value, dict)
                else f"{value:.1f}×"
            )
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    row("I/O floor (cp + sha256sum), median / max", "io_floor_s")
    row("PreCompact hook, process start to exit", "pre_compact_hook_s")
    row("hook / floor (medians)", "hook_over_floor_ratio")
    row("hook peak RSS", "hook_peak_rss_mb", scale=1, unit="MB")
    row("Layer 1 alone", "layer_1_s")
    row("Layer 2 commit alone (encrypted)", "layer_2_commit_s")
    row("resurrect --format brief", "resurrect_brief_s")
    row("SessionStart hook", "session_start_hook_s")
    other = [
        "",
        f"- `precompact verify --all` over {results['verify']['savepoints']} encrypted savepoints (git on, each decrypted): {results['verify']['verify_all_s'] * 1000:.0f} ms",
        *([bench_encryption.markdown(results["encryption"])] if "encryption" in results else []),
        f"- Layer 3 round trip per savepoint on precompact-localnet (send + confirm + index): median {results['layer_3']['round_trip_s']['median'] * 1000:.0f} ms, max {results['layer_3']['round_trip_s']['max'] * 1000:.0f} ms over {results['layer_3']['savepoints']}",
        *[
            f"- SessionStart hook in the real Claude Code flow ({results['claude_code']['version']}, from its --debug-file), {moment}: median {t['median'] * 1000:.0f} ms, max {t['max'] * 1000:.0f} ms over {t['runs']}"
            for moment, t in results.get("claude_code", {}).get("session_start", {}).items()
        ],
        f"- hook-path import time (precompact.edges.command, hook, worker): median {results['imports']['hook_path_import_s']['median'] * 1000:.0f} ms, max {results['imports']['hook_path_import_s']['max'] * 1000:.0f} ms; click/GitPython/Solana modules imported: {results['imports']['heavy_modules_imported'] or 'none'}",
    ]
    return "\n".join(lines + other + ["", "Growth:", "", growth_markdown(results["growth"])])


def main() -> None:
    parser = argparse.ArgumentParser(description="precompact benchmarks")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a Markdown table")
    parser.add_argument("--sizes", default="1,10,100", help="transcript sizes in MB, comma-separated")
    parser.add_argument(
        "--real-code-sizes",
        default="10",
        help="sizes in MB of transcripts reading real code (the standard library), comma-separated; empty for none",
    )
    parser.add_argument("--runs", type=int, default=3, help="repetitions per size")
    parser.add_argument("--savepoints", type=int, default=1000, help="savepoints for verify --all")
    parser.add_argument(
        "--encryption-mb",
        type=int,
        default=100,
        help="snapshot size (MB of transcript) for the encryption cost (0: none)",
    )
    parser.add_argument("--chain-savepoints", type=int, default=50, help="savepoints posted for the Layer 3 round trip")
    parser.add_argument(
        "--claude-code-runs",
        type=int,
        default=3,
        help="sessions of the real Claude Code CLI timing the SessionStart hook (0: none)",
    )
    parser.add_argument(
        "--growth", default="100,10", help="the growth scenario's final size and step in MB: TOTAL,STEP"
    )
    parser.add_argument("--only-growth", action="store_true", help="run the growth scenario only")
    args = parser.parse_args()
    total_mb, step_mb = (int(n) for n in args.growth.split(","))
    sizes = [int(s) for s in args.sizes.split(",")]
    root = Path(tempfile.mkdtemp(prefix="precompact-bench-"))
    os.environ["XDG_CONFIG_HOME"] = str(root / "config")  # the projects' approvals go with them
    try:
        if args.only_growth:
            found = growth(root, total_mb, step_mb)
            print(json.dumps(found, indent=2) if args.json else growth_markdown(found))
            return
        results = {"runs": args.runs, "by_size": {}}
        for size in sizes:
            results["by_size"][f"{size} MB"] = by_size(root, size, args.runs)
        for size in [int(s) for s in args.real_code_sizes.split(",") if s]:
            results["by_size"][f"{size} MB, real code"] = by_size(root, size, args.runs, real_code=True)
        results["growth"] = growth(root, total_mb, step_mb)
        results["verify"] = verify_thousand(root, args.savepoints)
        if args.encryption_mb:
            results["encryption"] = bench_encryption.measure(root, args.encryption_mb, args.runs)
        results["layer_3"] = layer_3_round_trip(root, args.chain_savepoints)
        results["imports"] = import_time()
        if args.claude_code_runs:
            import bench_claude_code
            from support import claude_code

            results["claude_code"] = {
                "version": f"Claude Code {claude_code.VERSION}",
                "session_start": bench_claude_code.flow(root, args.claude_code_runs),
            }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(results, indent=2) if args.json else markdown(results))


if __name__ == "__main__":
    throwaway_home.use()
    main()
