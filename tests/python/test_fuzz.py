"""The fuzz targets (tests/fuzz/targets.py): every seed and every corpus input replayed (what the
long runs found stays found), each target fuzzed briefly under atheris (slow tier; scripts/fuzz
runs them for hours), and what the fuzzer found, through the real binary."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from precompact.local import savepoint_log
from support.commands import precompact
from support.localnet import REPO
from support.projects import new_project

FUZZ = REPO / "tests" / "fuzz"
TARGETS = ["claude_transcript", "codex_rollout", "gemini_chat", "redaction", "snapshot_reader", "index_reader", "bundle_verifiers"]  # fmt: skip


def replay(target: str, inputs: list[Path]) -> subprocess.CompletedProcess:
    """The target run once on each input, under atheris (libFuzzer runs the files given and
    fuzzes nothing), in a process of its own: the targets instrument precompact as they import it."""
    return subprocess.run(
        [sys.executable, str(FUZZ / "run.py"), target, *map(str, inputs)],
        cwd=FUZZ,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_target_list_is_the_one_the_targets_module_has():
    listed = (FUZZ / "targets.py").read_text().split("TARGETS: dict[str, Callable[[bytes], None]] = {")[1]
    assert [line.split('"')[1] for line in listed.split("}")[0].strip().splitlines()] == TARGETS


@pytest.mark.parametrize("target", TARGETS)
def test_every_seed_and_corpus_input_passes_its_target(target):
    """The seeds include each finding of the fuzzer (`finding-*`), so what it found stays fixed."""
    inputs = sorted(p for kind in ("seeds", "corpus") for p in (FUZZ / kind / target).glob("*"))
    assert any(p.parent.name == target and p.parent.parent.name == "seeds" for p in inputs), f"{target} has no seed"
    result = replay(target, inputs)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"Executed {inputs[-1]}" in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_a_short_fuzzing_run_finds_nothing(target, tmp_path):
    """Each target fuzzed for 20 s from its seeds and corpus (the long run: scripts/fuzz)."""
    work = tmp_path / "corpus"
    work.mkdir()
    inputs = [str(FUZZ / kind / target) for kind in ("seeds", "corpus") if (FUZZ / kind / target).is_dir()]
    result = subprocess.run(
        [sys.executable, str(FUZZ / "run.py"), target, "-max_total_time=20", "-timeout=20", "-rss_limit_mb=4096",
         "-max_len=32768", f"-artifact_prefix={tmp_path}/", str(work), *inputs],
        cwd=FUZZ, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-4000:]
    assert "Done" in result.stderr and not list(tmp_path.glob("crash-*")) and not list(tmp_path.glob("timeout-*"))


# --- what the fuzzer found, through the binary -------------------------------------------------


def _savepoint_line(project) -> dict:
    [line] = [json.loads(raw) for raw in savepoint_log.index_path(project.logs).read_bytes().splitlines()
              if json.loads(raw).get("event") == "SAVEPOINT_CREATED"]  # fmt: skip
    return line


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"machine_tag": "tag-ünïcode"}, id="non-ascii-machine-tag"),
        pytest.param({"snapshot_hash": None}, id="no-snapshot-hash"),
        pytest.param({"snapshot_hash": 7, "prev_snapshot_hash": ["x"]}, id="hashes-of-the-wrong-type"),
    ],
)
def test_an_index_line_the_fuzzer_wrote_gets_verdicts_not_a_traceback(tmp_path, change):
    """Found by index_reader: a SAVEPOINT_CREATED line whose machine tag holds a non-ASCII
    character (TypeError in compare_digest) or whose hashes are absent or not strings (KeyError,
    AttributeError) crashed every command that reads the index."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    saved = precompact(project.path, "savepoint", "--no-transcript")
    assert "savepoint 1 saved" in saved.stdout, saved.stderr  # exit 3: layers 2 and 3 are off
    line = {**_savepoint_line(project), **change}
    line = {key: value for key, value in line.items() if value is not None}
    index = savepoint_log.index_path(project.logs)
    index.write_bytes(
        b"".join(
            (json.dumps(line).encode() + b"\n") if json.loads(raw).get("event") == "SAVEPOINT_CREATED" else raw + b"\n"
            for raw in index.read_bytes().splitlines()
        )
    )
    for args in (["status"], ["verify"], ["status", "--json"]):
        result = precompact(project.path, *args)
        assert "Traceback" not in result.stderr + result.stdout, result.stderr
        assert result.returncode in (0, 1, 4), (args, result.returncode, result.stderr)
    verified = precompact(project.path, "verify")
    assert verified.returncode != 0 and "✓" not in verified.stdout.splitlines()[0], verified.stdout
