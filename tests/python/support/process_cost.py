"""What a process costs, measured from outside as the kernel accounts it: CPU (user + system, of
the process and what it waited for, from `os.wait4`) and wall seconds, start to exit. The hook
benchmarks (scripts/bench_hooks.py) and their regression floors in the slow tier
(test_hook_cost.py) judge a hook by its ratio to a yardstick run in turn with it (a bare
interpreter, the I/O floor), which holds on a loaded machine where absolute times do not."""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Cost:
    cpu: float
    wall: float


def run(args: list[str], stdin: bytes = b"", cwd: Path | None = None) -> Cost:
    """One process's cost; it must exit 0."""
    with tempfile.TemporaryFile() as given:
        given.write(stdin)
        given.seek(0)
        began = time.perf_counter()
        process = subprocess.Popen(args, stdin=given, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - began
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{' '.join(args)} exited {code}")
    return Cost(usage.ru_utime + usage.ru_stime, wall)


def paired(
    command: list[str], stdin: bytes, cwd: Path, yardstick: list[str], runs: int
) -> tuple[list[Cost], list[Cost]]:
    """`command` and `yardstick` run in turn `runs` times each, after one warm-up of each."""
    run(command, stdin, cwd)
    run(yardstick)
    costs, yardsticks = [], []
    for _ in range(runs):
        costs.append(run(command, stdin, cwd))
        yardsticks.append(run(yardstick))
    return costs, yardsticks


def cpu_ratio(costs: list[Cost], yardsticks: list[Cost]) -> float:
    """The median of the pair-by-pair CPU ratio (a yardstick's CPU is counted as at least 1 ms)."""
    return statistics.median(c.cpu / max(y.cpu, 1e-3) for c, y in zip(costs, yardsticks, strict=True))


def io_floor(path: Path, scratch: Path) -> list[str]:
    """Copying `path` and hashing the copy: the least any saving of its bytes costs."""
    copy = scratch / "floor-copy"
    return ["sh", "-c", f"cp '{path}' '{copy}' && sha256sum '{copy}' >/dev/null && rm -f '{copy}'"]
