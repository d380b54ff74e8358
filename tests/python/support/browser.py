"""The viewer under test: a project holding planted sessions (one of them hostile), `precompact
view` started as a user starts it, and Debian's Chromium driven through Playwright (whose own
browser download is not reachable here)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from precompact.config import settings as configuration
from precompact.local import savepoint_log, snapshot
from support.commands import PRECOMPACT
from support.planted import Session, session, write_transcript
from support.projects import Project, new_project

CHROMIUM = "/usr/bin/chromium"
ARTEFACTS = Path(os.environ.get("PRECOMPACT_ARTEFACTS", Path(tempfile.gettempdir()) / "precompact-artefacts"))
START_SECONDS = 30
# Transcript text that would run if any of it reached the page as markup.
HOSTILE = (
    '<script>document.title="pwned-script";window.pwned=1</script>'
    "<img src=x onerror=\"document.title='pwned-img'\">"
    "</textarea></pre><svg onload=\"document.title='pwned-svg'\"></svg>"
    '<a id="hostile-link" href="javascript:document.title=\'pwned-link\'">open the report</a>'
    "<div onmouseover=\"document.title='pwned-hover'\">hover</div>"
    " the hostile marker phrase"
)


@dataclass
class Planted:
    project: Project
    sessions: list[Session]


def planted_project(root: Path, seeds: tuple[int, ...] = (5, 6)) -> Planted:
    """One savepoint per seed, each with its compaction summary recorded as PostCompact records
    it; the last session also holds HOSTILE as a user's words."""
    project = new_project(root, "shop", git_layer=False, chain_layer=False, instance="Shop #1")
    loaded = configuration.load(project.path)
    made = []
    for seed in seeds:
        planted = session(seed, cwd=str(project.path))
        if seed == seeds[-1]:
            planted.entries.insert(
                2, {"type": "user", "uuid": f"hostile-{seed}", "message": {"role": "user", "content": HOSTILE}}
            )
        transcript = write_transcript(planted, root / f"session-{seed}.jsonl")
        snapshot.create_savepoint(
            snapshot.Settings.of(loaded),
            snapshot.Session(f"planted-{seed}", str(transcript), str(project.path), "auto"),
        )
        latest = savepoint_log.latest(loaded.logs, loaded.instance)
        assert latest is not None
        savepoint_log.mark(
            loaded.logs, latest, savepoint_log.Event.COMPACT_SUMMARY, trigger="auto", summary=planted.summary
        )
        made.append(planted)
    return Planted(project, made)


@contextmanager
def viewer(project: Path, log: Path) -> Iterator[str]:
    """`precompact view --no-open` in `project`, until the block ends; yields the address it prints."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            [PRECOMPACT, "view", "--no-open"], cwd=project, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            found = re.search(rb"precompact view: (http://\S+)", log.read_bytes())
            if found:
                yield found.group(1).decode()
                return
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"precompact view did not start: {log.read_text(errors='replace')}")
            time.sleep(0.05)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def artefacts(name: str) -> Path:
    """A fresh folder for one test's screenshots, named on stdout so a run can find them."""
    folder = ARTEFACTS / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    print(f"artefacts: {folder}")
    return folder
