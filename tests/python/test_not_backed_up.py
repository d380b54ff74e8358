"""A savepoint the git remote does not hold is said to be "not backed up to git" in the restore
brief (only when its push failed) and in the viewer, as `status` and `verify` say it (#47)."""

from __future__ import annotations

import json

import httpx

from precompact.restore import brief as restore_brief
from support.browser import viewer
from support.commands import precompact
from support.projects import new_project
from support.transcript_gen import generate, payload


def test_the_brief_and_the_viewer_say_a_savepoint_whose_push_failed_is_not_backed_up(tmp_path):
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False, encrypted=False)
    transcript = generate(tmp_path / "session.jsonl", 30_000, project=project.path)
    assert precompact(project.path, "savepoint", "--transcript", str(transcript.path)).returncode == 3
    pushed = precompact(project.path, "resurrect", "--format", "brief")
    assert pushed.returncode == 0 and restore_brief.NOT_BACKED_UP not in pushed.stdout, "said only when true"

    project.remote.rename(tmp_path / "moved.git")  # the remote is gone: every push fails
    more = generate(tmp_path / "session-2.jsonl", 30_000, project=project.path)
    assert precompact(project.path, "savepoint", "--transcript", str(more.path)).returncode == 3
    status = precompact(project.path, "status", "--json")
    assert [s["layer_2"] for s in json.loads(status.stdout)["savepoints"]] == ["PUSHED", "FAILED"]

    brief = precompact(project.path, "resurrect", "--sequence", "2", "--format", "brief")
    assert restore_brief.NOT_BACKED_UP in brief.stdout.splitlines()
    started = precompact(
        project.path, "hook", stdin=payload("SessionStart", project.path, more.path, source="resume", session_id="next")
    )
    context = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Restored from savepoint 2" in context and restore_brief.NOT_BACKED_UP in context.splitlines()

    with viewer(project.path, tmp_path / "view.log") as url:
        for _ in range(300):
            page = httpx.get(url, timeout=60).text
            if "checking…" not in page:
                break
        rows = page.split('class="savepoint-link"')[1:]
        second = httpx.get(url + "savepoint", params={"instance": "Trial #1", "sequence": 2}, timeout=60).text
    assert len(rows) == 2
    assert "not backed up to git" not in rows[0] and "not backed up to git" in rows[1]
    assert "not backed up to git" in second
