"""Runs one fuzz target under atheris (libFuzzer): `python tests/fuzz/run.py TARGET [libFuzzer
arguments and corpus directories]`. scripts/fuzz is the way in; tests/python/test_fuzz.py runs
each target briefly."""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
from pathlib import Path

import atheris
from targets import TARGETS  # tests/fuzz is the script's own directory: first on sys.path


def again(target: str) -> str:
    """A program that runs this target again with the arguments it is given: libFuzzer's
    `-merge=1` runs its argv[0] as a program, which a Python script given to an interpreter is not."""
    folder = Path(tempfile.gettempdir()) / f"precompact-fuzz-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    program = folder / target
    program.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(__file__)} {target} "$@"\n')
    program.chmod(0o700)
    return str(program)


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: run.py TARGET [libFuzzer arguments]; TARGET is one of {', '.join(TARGETS)}")
    name = sys.argv[1]
    atheris.Setup([again(name), *sys.argv[2:]], TARGETS[name])
    atheris.Fuzz()


if __name__ == "__main__":
    main()
