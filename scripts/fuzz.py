"""The running half of scripts/fuzz (see there): each fuzz target of tests/fuzz/targets.py under
atheris for its share of the time, its corpus growing in tests/fuzz/corpus/TARGET (the seeds,
tests/fuzz/seeds/TARGET, are read, never written); a finding (crash, hang over --timeout, an
assertion such as a secret kept) is saved under --findings and the target goes on from where it
stopped, until its time is up. Prints a table per target: executions, coverage (libFuzzer's
`cov` edges and `ft` features), corpus size, findings; --json for scripts. --merge afterwards
keeps only the corpus inputs that add coverage."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
FUZZ = REPO / "tests" / "fuzz"
sys.path.insert(0, str(FUZZ))

# The names only: importing targets would instrument precompact in this process too.
TARGETS = re.findall(r'^    "(\w+)": \w+,$', (FUZZ / "targets.py").read_text(), re.MULTILINE)
# Inputs as large as the targets' real inputs need to be to reach their code: a bundle of two
# savepoints is about 4 KB, one with its snapshot embedded about 10 KB.
MAX_LEN = {"bundle_verifiers": 32768, "snapshot_reader": 32768}
DEFAULT_MAX_LEN = 8192
STATS = re.compile(r"#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)/")


def progress(text: str) -> None:
    print(f"fuzz: {text}", file=sys.stderr, flush=True)


def libfuzzer(target: str, args: list[str], log: Path) -> int:
    """One run of the target's driver; its output goes to `log`."""
    with log.open("ab") as out:
        return subprocess.run(
            [sys.executable, str(FUZZ / "run.py"), target, *args], stdout=out, stderr=out, cwd=FUZZ, check=False
        ).returncode


def fuzz(target: str, seconds: float, timeout: int, findings: Path, logs: Path) -> dict:
    corpus, seeds = FUZZ / "corpus" / target, FUZZ / "seeds" / target
    corpus.mkdir(parents=True, exist_ok=True)
    found = findings / target
    found.mkdir(parents=True, exist_ok=True)
    log = logs / f"{target}.log"
    log.write_bytes(b"")
    before = {p.name for p in found.iterdir()}
    deadline, runs, last = time.monotonic() + seconds, 0, None
    while (left := deadline - time.monotonic()) > 1:
        start = log.stat().st_size
        code = libfuzzer(
            target,
            [
                f"-max_total_time={int(left)}",
                f"-timeout={timeout}",
                "-rss_limit_mb=4096",
                f"-max_len={MAX_LEN.get(target, DEFAULT_MAX_LEN)}",
                f"-artifact_prefix={found}/",
                "-print_final_stats=1",
                str(corpus),
                *([str(seeds)] if seeds.is_dir() else []),
            ],
            log,
        )
        text = log.read_bytes()[start:].decode(errors="replace")
        stats = STATS.findall(text)
        if stats:
            last = stats[-1]
            runs += int(last[0])
        if code == 0:
            break
        progress(f"{target}: finding (exit {code}); see {log}")
        if not stats:
            break  # it fails before fuzzing: going on would only fail again
    new = sorted(p.name for p in found.iterdir() if p.name not in before)
    return {
        "target": target,
        "seconds": round(seconds),
        "executions": runs,
        "coverage_edges": int(last[1]) if last else 0,
        "features": int(last[2]) if last else 0,
        "corpus": sum(1 for _ in corpus.iterdir()),
        "findings": [str(found / name) for name in new],
    }


def merge(target: str, logs: Path) -> None:
    """Replaces the target's corpus by the inputs of it and the seeds that add coverage."""
    corpus, seeds = FUZZ / "corpus" / target, FUZZ / "seeds" / target
    with tempfile.TemporaryDirectory() as kept:
        code = libfuzzer(
            target,
            ["-merge=1", f"-max_len={MAX_LEN.get(target, DEFAULT_MAX_LEN)}", kept, str(corpus)],
            logs / f"{target}.merge.log",
        )
        if code != 0:
            raise SystemExit(f"fuzz: merging {target}'s corpus failed (exit {code}); see {logs}/{target}.merge.log")
        if any(corpus.iterdir()) and not any(Path(kept).iterdir()):
            raise SystemExit(f"fuzz: merging {target}'s corpus kept nothing; see {logs}/{target}.merge.log")
        seeded = {p.read_bytes() for p in seeds.iterdir()} if seeds.is_dir() else set()
        shutil.rmtree(corpus)
        corpus.mkdir()
        for path in Path(kept).iterdir():
            if path.read_bytes() not in seeded:
                shutil.copy(path, corpus / path.name)


def main() -> None:
    parser = argparse.ArgumentParser(prog="scripts/fuzz", description=__doc__)
    parser.add_argument("targets", nargs="*", metavar="TARGET", help=f"default: all ({', '.join(TARGETS)})")
    parser.add_argument("--seconds", type=float, default=60, help="per target (default 60)")
    parser.add_argument(
        "--timeout", type=int, default=20, help="seconds for one input before it is a hang (default 20)"
    )
    parser.add_argument("--findings", type=Path, default=Path.home() / ".cache" / "precompact" / "fuzz" / "findings")
    parser.add_argument(
        "--merge", action="store_true", help="afterwards, keep only the corpus inputs that add coverage"
    )
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    unknown = sorted(set(options.targets) - set(TARGETS))
    if unknown:
        parser.error(f"unknown target(s) {', '.join(unknown)}; the targets are {', '.join(TARGETS)}")
    logs = options.findings.parent / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    results = []
    for target in options.targets or TARGETS:
        progress(f"{target} for {options.seconds:.0f} s")
        results.append(fuzz(target, options.seconds, options.timeout, options.findings, logs))
        if options.merge:
            merge(target, logs)
            results[-1]["corpus_merged"] = sum(1 for _ in (FUZZ / "corpus" / target).iterdir())
    if options.json:
        print(json.dumps(results, indent=2))
    else:
        print("| target | seconds | executions | cov edges | features | corpus | findings |")
        print("|---|---|---|---|---|---|---|")
        for r in results:
            print(
                f"| {r['target']} | {r['seconds']} | {r['executions']:,} | {r['coverage_edges']} | {r['features']} "
                f"| {r.get('corpus_merged', r['corpus'])} | {len(r['findings'])} |"
            )
        for r in results:
            for path in r["findings"]:
                print(f"finding: {r['target']}: {path}")
    sys.exit(1 if any(r["findings"] for r in results) else 0)


if __name__ == "__main__":
    throwaway_home.use()
    main()
