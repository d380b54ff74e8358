"""A session saved through the library rather than through a hook: a project with the git and
chain layers off, its configuration loaded once, and the session a hook would be told about, so
a test can write savepoints at the times it chooses (a clock set back, a second shared)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from precompact.config import settings as configuration
from precompact.local import snapshot
from precompact.ops import compaction
from support.projects import Project, new_project


class LibrarySession:
    def __init__(self, tmp_path: Path, session_id: str, write_transcript: Callable[[Path, Path], object]):
        """`write_transcript(path, project_folder)` writes the session's transcript at `path`."""
        self.project: Project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
        self.transcript = tmp_path / "transcript.jsonl"
        write_transcript(self.transcript, self.project.path)
        self.loaded = configuration.load(self.project.path)
        self.session = snapshot.Session(session_id, str(self.transcript), str(self.project.path))

    def save(self, at: datetime) -> None:
        """A savepoint written as PreCompact's Layer 1 writes it, by a clock that reads `at`."""
        snapshot.create_savepoint(compaction.layer_1(self.loaded), self.session, now=at)
