"""Recall across every project (#45): `--projects` projects of `--mb` MB of saved conversation each,
registered and indexed as the worker does; then `recall --everywhere` in process (cold, and warm:
the same process again) and as a CLI outside any project (once with none of git's answers on
logs/ kept, as after every project's index changed, then as usual), against a one-project `recall` as a
CLI; what registering costs a savepoint's Layer 1; and, for the design choice, the one index a
machine-wide design would keep: every project's sessions in one index, searched the same way.

Usage: .venv/bin/python scripts/bench_recall_everywhere.py [--projects 100] [--mb 10] [--runs 5] [--keep DIR]
    [--role ROLE] [--tool TOOL] [--json]

`--role`/`--tool` run every search with that filter (in process and as CLIs), which the
bookkeeping answers for every entry the words match (recall/fulltext.py, `_filtered`).

`--keep DIR` builds the archive in DIR and keeps it; run again with the same DIR (and the same
--projects/--mb), it searches what is there instead of spending minutes building it again (the
Layer 1 and index update figures it reports are then the build's, at that run's load).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from precompact.boundary import logs_dir, private_file
from precompact.config import approval
from precompact.config import settings as configuration
from precompact.local import registry, snapshot
from precompact.recall import everywhere
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


def archive(root: Path, count: int, size_mb: float) -> tuple[list[Path], list[dict]]:
    """`count` projects, each with one savepoint of its own `size_mb` MB session (the rare phrase
    planted in the last one), registered by Layer 1 and indexed as the worker does."""
    projects, rows = [], []
    template = new_project(root, "template", git_layer=False, chain_layer=False, instance="Bench #template").path
    for n in range(count):
        progress(f"project {n + 1}/{count}")
        project = copied(template, root / f"p{n:03d}", f"Bench #{n}")
        transcript = generate(
            root / f"s{n}.jsonl", int(size_mb * MB), project=project, seed=n, planted=[RARE] if n == count - 1 else []
        )
        loaded = configuration.load(project)
        began = time.perf_counter()
        snapshot.create_savepoint(
            snapshot.Settings.of(loaded), snapshot.Session(f"s{n}", str(transcript.path), str(project), "auto")
        )
        layer_1 = time.perf_counter() - began
        began = time.perf_counter()
        registry.register(project, loaded.instance)  # registered already: what every later savepoint pays
        registered = time.perf_counter() - began
        began = time.perf_counter()
        outcome = recall.update(loaded.logs, loaded.instance)
        update = time.perf_counter() - began
        assert outcome.indexed == [1] and not outcome.notes, outcome
        transcript.path.unlink()
        projects.append(project)
        rows.append({"layer_1_s": layer_1, "register_again_s": registered, "index_update_s": update})
    return projects, rows


def copied(template: Path, project: Path, instance: str) -> Path:
    """A new project made as `init` made the template (its git repository, its configuration,
    approved here), under its own instance name: a hundred `init`s would cost minutes of process
    starts and measure nothing the search does."""
    shutil.copytree(template, project, symlinks=True, ignore=shutil.ignore_patterns("logs"))
    config = project / configuration.CONFIG_NAME
    config.write_text(config.read_text().replace('"Bench #template"', json.dumps(instance)))
    approval.approve(config.resolve(), config.read_bytes())
    return project


def first_registration(root: Path, runs: int) -> dict:
    """A new project's first registration (the registry holding every bench project): read, lock,
    write whole and fsync, 0600."""
    times = []
    for n in range(runs):
        fresh = root / f"fresh{n}"
        fresh.mkdir(exist_ok=True)
        began = time.perf_counter()
        registry.register(fresh, "Fresh #1")
        times.append(time.perf_counter() - began)
        registry.forget(fresh)
    return summary(times)


def machine_wide(root: Path, count: int, size_mb: float) -> Path:
    """The one index a machine-wide design keeps: every project's session in one index (here, one
    project holding them all as sessions of its own), to search as one."""
    project = copied(root / "template", root / "all", "All #1")
    loaded = configuration.load(project)
    for n in range(count):
        progress(f"machine-wide index: session {n + 1}/{count}")
        transcript = generate(
            root / f"all{n}.jsonl", int(size_mb * MB), project=project, seed=n, planted=[RARE] if n == count - 1 else []
        )
        snapshot.create_savepoint(
            snapshot.Settings.of(loaded), snapshot.Session(f"all{n}", str(transcript.path), str(project), "auto")
        )
        transcript.path.unlink()
        recall.update(loaded.logs, loaded.instance)
    registry.forget(project)  # not one of the projects searched everywhere
    return project


def cli(cwd: Path, *args: str) -> float:
    began = time.perf_counter()
    subprocess.run([PRECOMPACT, *args], cwd=cwd, capture_output=True, text=True, check=True)
    return time.perf_counter() - began


def searches(
    root: Path, projects: list[Path], combined: Path | None, runs: int, role: str | None, tool: str | None
) -> dict:
    out = {}
    one = projects[-1]
    filters = {"role": role, "tool": tool}
    flags = [arg for name, value in filters.items() if value is not None for arg in (f"--{name}", value)]
    for name, query in QUERIES.items():
        began = time.perf_counter()
        found = everywhere.search(query, **filters)
        cold = time.perf_counter() - began
        warm = []
        for _ in range(runs):
            began = time.perf_counter()
            found = everywhere.search(query, **filters)
            found.results.text(recall.DEFAULT_BUDGET)
            warm.append(time.perf_counter() - began)
        if name == "rare phrase" and not flags:
            assert found.results.hits and found.results.hits[0].project == str(one), found.results.notes[:3]
        # A command that finds no answer of git's kept (logs_dir: the first after each project's
        # index changed) asks git once per project.
        (private_file.state_directory() / logs_dir.UNTRACKED_NAME).unlink(missing_ok=True)
        unkept = cli(root, "recall", query, *flags)
        row = {
            "matched": found.results.matched,
            "in_process_cold_s": cold,
            "in_process_warm_s": summary(warm),
            "cli_everywhere_unkept_s": unkept,
            "cli_everywhere_s": summary([cli(root, "recall", query, *flags) for _ in range(runs)]),
            "cli_one_project_s": summary([cli(one, "recall", query, *flags) for _ in range(runs)]),
        }
        if combined is not None:
            loaded = configuration.load(combined)
            times = []
            for _ in range(runs):
                began = time.perf_counter()
                recall.search(loaded.logs, loaded.instance, query, **filters).text(recall.DEFAULT_BUDGET)
                times.append(time.perf_counter() - began)
            row["machine_wide_in_process_warm_s"] = summary(times)
        out[name] = row
    out["precompact --version (the process floor)"] = {"cli_s": summary([cli(root, "--version") for _ in range(runs)])}
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=100)
    parser.add_argument("--mb", type=float, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-machine-wide", action="store_true", help="Skip building the one-index comparison.")
    parser.add_argument("--keep", type=Path, help="Build the archive in this directory and keep it; reuse it if built.")
    parser.add_argument("--role", choices=recall.ROLES, help="Every search only of entries of this role.")
    parser.add_argument("--tool", help="Every search only of calls to, and results of, this tool.")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        if args.keep is None:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="precompact-bench-everywhere-")))
        else:
            root = args.keep.resolve()
            root.mkdir(parents=True, exist_ok=True)
        for variable in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
            os.environ[variable] = str(root / variable.lower())  # the scratch machine's own files
        built = root / "built.json"
        if built.exists():
            kept = json.loads(built.read_text())
            if (kept["projects"], kept["mb"]) != (args.projects, args.mb):
                raise SystemExit(
                    f"bench: {root} holds {kept['projects']} projects of {kept['mb']} MB; give those or another --keep"
                )
            projects, rows = [Path(p) for p in kept["paths"]], kept["rows"]
        else:
            projects, rows = archive(root, args.projects, args.mb)
            if args.keep is not None:
                built.write_text(
                    json.dumps(
                        {"projects": args.projects, "mb": args.mb, "paths": [str(p) for p in projects], "rows": rows}
                    )
                )
        registering = first_registration(root, args.runs)
        kept = json.loads(built.read_text()) if built.exists() else {}
        if args.no_machine_wide:
            combined = None
        elif kept.get("machine_wide"):  # built whole by a run before (a run stopped midway left none)
            combined = Path(kept["machine_wide"])
        else:
            shutil.rmtree(root / "all", ignore_errors=True)
            combined = machine_wide(root, args.projects, args.mb)
            if args.keep is not None:
                built.write_text(json.dumps(kept | {"machine_wide": str(combined)}))
        progress("searching")
        found = searches(root, projects, combined, args.runs, args.role, args.tool)
        index_bytes = sum(recall.index_path(p / "logs").stat().st_size for p in projects)
    layer_1 = statistics.median(r["layer_1_s"] for r in rows)
    result = {
        "projects": args.projects,
        "mb_each": args.mb,
        "index_bytes": index_bytes,
        "layer_1_s": summary([r["layer_1_s"] for r in rows]),
        "register_again_s": summary([r["register_again_s"] for r in rows]),
        "register_first_s": registering,
        "index_update_s": summary([r["index_update_s"] for r in rows]),
        "filters": {"role": args.role, "tool": args.tool},
        "searches": found,
        "load": os.getloadavg()[0],
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"{args.projects} projects × {args.mb:g} MB of saved conversation (indexes {index_bytes / MB:.0f} MB); load {result['load']:.2f}\n"
    )
    print(
        f"Layer 1 of a project's savepoint: median {layer_1 * 1000:.0f} ms; registering it again (every later savepoint): "
        f"{result['register_again_s']['median'] * 1000:.2f} ms ({result['register_again_s']['median'] / layer_1:.1%}); "
        f"a first registration: {registering['median'] * 1000:.2f} ms ({registering['median'] / layer_1:.1%}); "
        f"the project's own index update (the worker's): {result['index_update_s']['median'] * 1000:.0f} ms\n"
    )
    print(
        "| query | matches | everywhere, in process cold | warm (median / max) | `recall` everywhere, CLI | its first run, git's answers not kept | one-project `recall`, CLI | CLI ratio | one machine-wide index, warm |\n|---|---|---|---|---|---|---|---|---|"
    )
    for name, row in found.items():
        if "matched" not in row:
            continue
        wide = row.get("machine_wide_in_process_warm_s")
        one_index = f"{wide['median'] * 1000:.0f} ms" if wide else "-"
        print(
            f"| {name} | {row['matched']} | {row['in_process_cold_s'] * 1000:.0f} ms | "
            f"{row['in_process_warm_s']['median'] * 1000:.0f} / {row['in_process_warm_s']['max'] * 1000:.0f} ms | "
            f"{row['cli_everywhere_s']['median'] * 1000:.0f} ms | {row['cli_everywhere_unkept_s'] * 1000:.0f} ms | "
            f"{row['cli_one_project_s']['median'] * 1000:.0f} ms | "
            f"{row['cli_everywhere_s']['median'] / row['cli_one_project_s']['median']:.2f} | "
            f"{one_index} |"
        )
    floor = found["precompact --version (the process floor)"]["cli_s"]["median"]
    print(f"\n`precompact --version` (the process floor): {floor * 1000:.0f} ms")


if __name__ == "__main__":
    throwaway_home.use()
    main()
