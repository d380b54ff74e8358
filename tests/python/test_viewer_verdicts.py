"""The viewer's verdicts are never older than they say, nor contradicted by a newer check
(docs/viewer.md, **Timeline**): each says when it was checked; the verifier's report stands only
while what it read of logs/ is unchanged (and for a short age: the remote changes without a
trace here), and a savepoint's header shows a check that contradicts over one that does not."""

from __future__ import annotations

import re

import pytest
from starlette.testclient import TestClient

from precompact.boundary import logs_dir
from precompact.config import settings as configuration
from precompact.viewer import app, pages
from support.commands import precompact, run_git
from support.projects import Project, new_project, trust
from support.transcript_gen import generate

INSTANCE = "Trial #1"
AS_OF = re.compile(r"as of \d\d:\d\d:\d\d UTC")


@pytest.fixture
def served(tmp_path):
    """Two savepoints pushed to a git remote, and the viewer's application over them once its
    first report is in."""
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False, encrypted=False)
    for n in (1, 2):
        transcript = generate(tmp_path / f"session-{n}.jsonl", 20_000, project=project.path)
        saved = precompact(project.path, "savepoint", "--transcript", str(transcript.path))
        assert saved.returncode in (0, 3), saved.stdout + saved.stderr
    trust(project.path)
    loaded = configuration.load(project.path)
    checked = pages.Verdicts(loaded)
    assert checked.wait(120)
    client = TestClient(app.create(loaded, "token", 8000, checked), base_url="http://127.0.0.1:8000")
    return project, checked, client


def _rows(client: TestClient) -> list[str]:
    return client.get("/token/").text.split('class="savepoint-link"')[1:]


def _header(client: TestClient, sequence: int) -> str:
    """The savepoint page's verdicts, above the checks it made on loading it."""
    page = client.get("/token/savepoint", params={"instance": INSTANCE, "sequence": sequence})
    assert page.status_code == 200, page.text[:500]
    return page.text.split('<p class="meta">', 1)[1].split("Checks on loading it", 1)[0]


def _lose_the_branch(project: Project) -> None:
    run_git(project.remote, "update-ref", "-d", f"refs/heads/{project.branch}")


def _alter_first_snapshot(project: Project) -> None:
    first = min((project.logs / "precompact-saves").glob("snapshot_*_000001.json"))
    first.write_bytes(first.read_bytes().replace(b'"', b"'", 1))  # in place: same file, new bytes


def test_each_verdict_says_when_it_was_checked(served):
    _, _, client = served
    rows = _rows(client)
    assert len(rows) == 2
    for row in rows:
        assert "local: verified" in row and "git: verified" in row and AS_OF.search(row), row
    assert "Verifier, as of" in client.get("/token/").text
    header = _header(client, 2)
    assert "local: verified" in header and len(AS_OF.findall(header)) == 1, header


def test_once_logs_changes_no_page_shows_the_old_report_and_the_new_one_says_failed(served):
    project, checked, client = served
    _lose_the_branch(project)
    _alter_first_snapshot(project)
    verified = precompact(project.path, "verify")
    assert verified.returncode != 0
    rows = _rows(client)  # the report read the snapshot as it was: it no longer stands
    assert all("verified" not in row and "checking…" in row for row in rows), rows
    assert checked.wait(120)
    rows = _rows(client)
    assert "local: FAILED" in rows[0] and "git: not on the remote" in rows[0], rows[0]
    assert "git: verified" not in "".join(rows) and all(AS_OF.search(row) for row in rows)
    header = _header(client, 1)
    assert "local: FAILED" in header and "git: not on the remote" in header, header
    assert "local: verified" not in header and "git: verified" not in header


def test_a_report_older_than_its_age_is_checked_again_and_a_lost_branch_then_shown(served, monkeypatch):
    project, checked, client = served
    _lose_the_branch(project)  # nothing in logs/ changes
    stale = _rows(client)
    assert all("git: verified" in row for row in stale), "within its age the report stands, saying when it was made"
    monkeypatch.setattr(pages, "VERDICTS_STAND_SECONDS", 0.0)
    _rows(client)  # asks for a new report
    assert checked.wait(120)
    rows = _rows(client)
    assert all("git: not on the remote" in row and "not backed up to git" in row for row in rows), rows
    assert "git: verified" not in _header(client, 2)


def test_a_savepoints_own_check_that_contradicts_the_report_is_shown_and_asks_for_a_new_one(served):
    project, checked, client = served
    _lose_the_branch(project)
    _alter_first_snapshot(project)
    header = _header(client, 1)  # this machine's copy is altered: the page reads git and the remote
    assert "local: FAILED" in header and "git: not on the remote" in header, header
    assert "local: verified" not in header and "git: verified" not in header
    assert checked.wait(120)
    assert "git: not on the remote" in _rows(client)[1]


def test_identities_change_with_every_change_of_a_file_and_follow_no_link(tmp_path):
    logs = tmp_path / "logs"
    saves = logs / logs_dir.SAVES_DIR
    saves.mkdir(parents=True)
    (logs / "index.jsonl").write_text("one\n")
    (saves / "a.json").write_text("{}")

    def now() -> tuple[str, ...]:
        return logs_dir.identities(logs, ("index.jsonl", "absent"), (logs_dir.SAVES_DIR, "precompact-none-yet"))

    seen = [now()]
    assert seen[0] == now(), "unchanged: the same"
    assert any(line.startswith("absent missing") for line in seen[0]) and "precompact-none-yet missing" in seen[0]
    with (logs / "index.jsonl").open("a") as index:
        index.write("two\n")
    seen.append(now())
    (saves / "a.json").write_text("{ }")  # the same size, written in place
    seen.append(now())
    (saves / "b.json").write_text("{}")
    seen.append(now())
    (saves / "b.json").unlink()
    (saves / "b.json").symlink_to(logs / "index.jsonl")
    seen.append(now())
    (logs / "index.jsonl").write_text("three\n")  # through the link: its identity is the link's
    assert now() != seen[-1], "the index itself changed"
    assert len(set(seen)) == len(seen), "each change is seen"
    assert logs_dir.identities(tmp_path / "nothing", ("index.jsonl",), ()) == ("logs/ missing",)
