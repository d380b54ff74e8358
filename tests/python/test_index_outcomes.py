"""docs/ARCHITECTURE.md, "The three layers": "Every outcome is a new index line; `status` folds
them." Checked through the installed `precompact`: each layer's outcome, a failure included,
is appended to the index (the earlier bytes stay as they were), and `status --json` is the fold
of those lines."""

from __future__ import annotations

import json

from support.commands import precompact
from support.projects import new_project
from support.transcript_gen import generate


def events(lines: bytes) -> list[str]:
    return [json.loads(line)["event"] for line in lines.splitlines()]


def test_every_layer_outcome_is_appended_to_the_index_and_status_folds_the_lines(tmp_path):
    project = new_project(tmp_path, "p", git_layer=True, chain_layer=False)
    index = project.logs / "precompact-savepoint.jsonl"
    away = project.remote.with_name("remote-away")
    project.remote.rename(away)
    transcript = generate(tmp_path / "session.jsonl", 20_000, project=project.path)

    offline = precompact(project.path, "savepoint", "--transcript", str(transcript.path))
    assert offline.returncode == 3, offline.stdout + offline.stderr
    before = index.read_bytes()
    assert "SAVEPOINT_CREATED" in events(before) and "LAYER_2_FAILED" in events(before), events(before)
    [queued] = json.loads(precompact(project.path, "status", "--json").stdout)["savepoints"]
    assert queued["layer_2"] != "PUSHED", queued

    away.rename(project.remote)
    flushed = precompact(project.path, "flush")
    assert flushed.returncode == 0, flushed.stdout + flushed.stderr
    after = index.read_bytes()
    assert after.startswith(before), "an outcome never rewrites a line: it is a new one"
    assert "LAYER_2_PUSHED" in events(after[len(before) :]), events(after[len(before) :])
    [pushed] = json.loads(precompact(project.path, "status", "--json").stdout)["savepoints"]
    assert pushed["layer_2"] == "PUSHED" and pushed["commit"], pushed
