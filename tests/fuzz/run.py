"""Runs one fuzz target under atheris (libFuzzer): `python tests/fuzz/run.py TARGET [libFuzzer
arguments and corpus directories]`. scripts/fuzz is the way in; tests/python/test_fuzz.py runs
each target briefly."""

from __future__ import annotations

import sys

import atheris
from targets import TARGETS  # tests/fuzz is the script's own directory: first on sys.path


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: run.py TARGET [libFuzzer arguments]; TARGET is one of {', '.join(TARGETS)}")
    target = TARGETS[sys.argv.pop(1)]
    atheris.Setup(sys.argv, target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
