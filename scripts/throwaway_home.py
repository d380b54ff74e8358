"""The user roots a script of scripts/ runs precompact under (a benchmark, the demo, the fault
trials, the fuzzer), as the suite's conftest gives each test its own: XDG_CONFIG_HOME (keys, trust
records), XDG_STATE_HOME (this machine's record of what it wrote, precompact's git directories)
and XDG_DATA_HOME (the project registry, local/registry.py), in a temporary directory removed at
exit, never the user's. Every script calls `use()` first thing in its `__main__` block
(tests/python/test_scripts_home.py keeps it so)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

ROOTS = ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME")


def use() -> Path:
    """Points this process's (and its children's) precompact roots at a new temporary directory,
    removed when the process exits; returns that directory."""
    base = Path(tempfile.mkdtemp(prefix="precompact-script-home-"))
    atexit.register(shutil.rmtree, base, ignore_errors=True)
    for name in ROOTS:
        place = base / name.lower()
        place.mkdir()
        os.environ[name] = str(place)
    return base
