"""Starting the detached background worker (`precompact.edges.worker`) for a project: the hook,
the import and the CLI start it here, by module name, isolated from the project."""

from __future__ import annotations

import os
from pathlib import Path

from precompact.boundary import logs_dir, processes

LOG_NAME = "precompact-worker.log"


def spawn(root: Path) -> int:
    """Starts a detached worker for the project at `root`, isolated from it (nothing the
    project holds is importable there); returns its pid."""
    fd = logs_dir.open_file(root / "logs", LOG_NAME, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        return processes.spawn_python(
            processes.precompact_module("precompact.edges.worker", str(root.resolve())), log=fd
        )
    finally:
        os.close(fd)


def cannot_start(root: Path) -> OSError | None:
    """Why `spawn` would fail to give the worker its log (a link in its place, logs/ read-only),
    or None: the log opened as `spawn` opens it, and closed."""
    try:
        os.close(logs_dir.open_file(root / "logs", LOG_NAME, os.O_WRONLY | os.O_APPEND | os.O_CREAT))
    except OSError as e:
        return e
    return None
