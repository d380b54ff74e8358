"""The detached background worker: updates the recall index, computes what a compaction summary
left out for the session to be given (ops/addendum.py), and runs Layers 2 and 3 for a project, so
the hook never waits.

One worker per project at a time (a non-blocking lock); a worker that finds the lock held
leaves, since the holder will see the new savepoint: before exiting, the holder checks whether
a savepoint arrived while it was finishing, and goes round again if so. Failures are retried
with backoff, then left queued for the next savepoint or `precompact flush`.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from precompact.boundary import logs_dir, quoting, terminal, user_roots
from precompact.config import settings as configuration

LOCK_NAME = "precompact-worker.lock"
# While a worker waits to retry, this file holds the time of its next attempt.
RETRY_NAME = "precompact-worker.retry"
BACKOFF_SECONDS = (0.5, 1, 2, 4, 8)
WORKER_NICENESS = 10


@contextlib.contextmanager
def _exclusive(logs: Path):
    fd = logs_dir.open_file(logs, LOCK_NAME, os.O_RDWR | os.O_CREAT)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _index_state(loaded: configuration.Config) -> tuple[int, int]:
    """How many savepoints the index holds, and how many compaction summaries were recorded: a
    change is a savepoint to flush, or a list of what compaction dropped to make."""
    from precompact import api

    savepoints = api.status(loaded)[0]
    return len(savepoints), sum(s.compact_summary is not None for s in savepoints)


def run(root: Path) -> None:
    """Flushes the project until it is up to date or the retries run out."""
    # Here, not at the top: the hook imports this module only to spawn the worker.
    from precompact import api

    approved = configuration.load(root)  # nothing runs on a configuration the user has not approved
    logs = root / "logs"
    while True:
        with _exclusive(logs) as mine:
            if not mine:
                return
            stuck = not _write_queued(root)
            seen = _index_state(approved)
            _update_recall(configuration.load(root))
            addenda_stuck = not _prepare_addenda(configuration.load(root))
            said: set[str] = set()
            try:
                for pause in (*BACKOFF_SECONDS, None):
                    loaded = configuration.load(root)
                    warning = configuration.insecure_cluster_warning(loaded)
                    if warning:
                        _log(warning)
                    outcome = api.flush(loaded)
                    notices = [*outcome.notices, *([outcome.unvouched] if outcome.unvouched else [])]
                    for notice in set(notices) - said:  # once a run, not once a retry
                        _log(notice)
                    said.update(notices)
                    if outcome.all_done or pause is None:
                        break
                    _log(f"queued, retrying in {pause} s: {(outcome.layer_2_problems or outcome.layer_3_problems)[0]}")
                    logs_dir.write_atomic(logs, RETRY_NAME, f"{time.time() + pause:.3f}\n".encode())
                    time.sleep(pause)
            finally:
                (logs / RETRY_NAME).unlink(missing_ok=True)
            _keep_dropped_lists(configuration.load(root), _arrival(approved, seen[0]))
        if (
            _index_state(approved) == seen
            and (stuck or not api.savepoints_queued(approved))
            and (addenda_stuck or not api.addenda_requested(approved))
        ):
            return


def _write_queued(root: Path) -> bool:
    """Writes the savepoints hooks queued (the index lock busy), first: this worker may wait for
    the lock, which a hook may not. Whether it wrote every entry of this machine's; each entry not
    written is logged (one that fails stays queued for the next worker or `precompact flush`, and
    never keeps the others from being written)."""
    from precompact import api
    from precompact.errors import PrecompactError

    try:
        done = api.write_queued(configuration.load(root))
    except PrecompactError as e:  # the queue itself cannot be read (logs/ refused)
        _log(f"queued savepoints not written yet: {e}")
        return False
    except OSError as e:
        _log(f"queued savepoints not written yet: {quoting.inline(str(e))}")
        return False
    for note in done.notes:
        _log(note)
    return done.left == 0


def _update_recall(loaded: configuration.Config) -> None:
    """Indexes the new savepoints' entries for recall, before Layers 2 and 3 (which may wait on
    the network). The index is derived data: a failure is logged and never stops the layers."""
    from precompact import api

    try:
        outcome = api.update_recall(loaded)
    except Exception as e:  # noqa: BLE001 - derived data: recall rebuilds the index from the snapshots when it next runs
        _log(f"recall index not updated: {type(e).__name__}: {quoting.inline(str(e))}")
        return
    for note in outcome.notes:
        _log(note)


def _arrival(loaded: configuration.Config, count: int) -> Callable[[], bool]:
    """Whether a savepoint arrived since the index held `count`."""
    return lambda: _index_state(loaded)[0] != count


def _keep_dropped_lists(loaded: configuration.Config, arrived: Callable[[], bool]) -> None:
    """Lists and keeps what compaction dropped from each savepoint whose summary is now known,
    after Layers 2 and 3 (the backup first), stopping between two lists when a savepoint
    `arrived` (this worker goes round and flushes it first). Derived data: a failure is logged and
    `dropped` and the viewer make the list themselves."""
    from precompact import api

    try:
        notes = api.keep_dropped_lists(loaded, arrived)
    except Exception as e:  # noqa: BLE001 - derived data: made again where it is asked for
        _log(f"what compaction dropped not kept: {type(e).__name__}: {quoting.inline(str(e))}")
        return
    for note in notes:
        _log(note)


def _prepare_addenda(loaded: configuration.Config) -> bool:
    """Computes what each compaction summary asked for left out (ops/addendum.py), before Layers
    2 and 3: the session is waiting for it. Whether it could; a failure is logged, the session then
    has none, and this worker does not go round again for it (a request it cannot take would keep
    it running for ever)."""
    from precompact import api

    try:
        notes = api.prepare_addenda(loaded)
    except Exception as e:  # noqa: BLE001 - the addendum is a convenience: the layers go on without it
        _log(f"addenda not computed: {type(e).__name__}: {quoting.inline(str(e))}")
        return False
    for note in notes:
        _log(note)
    return True


def next_retry(logs: Path) -> float | None:
    """Seconds until the running worker's next attempt; None when no worker will retry."""
    try:
        due = float(logs_dir.read_bytes(logs, RETRY_NAME))
    except (OSError, ValueError):
        return None
    with _exclusive(logs) as free:
        if free:  # the worker that wrote it is gone
            return None
    return max(due - time.time(), 0.0)


def _log(message: str) -> None:
    """A line of the worker's log (its stdout), redacted: git's and the cluster's complaints can
    carry a URL with credentials."""
    from precompact import api

    terminal.echo(api.log_line(message))


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: precompact.edges.worker PROJECT_ROOT")
    # Spawned at compaction, the worker's imports (the Solana stack) would compete for the CPU
    # with the SessionStart hook Claude Code runs right after; the session comes first.
    os.nice(WORKER_NICENESS)
    try:
        # Started by a hook, its environment is the agent's (the project's to set): the hook
        # confined it already; checked again here, since the worker is where the pushes happen.
        root, worktree = configuration.discover(Path(sys.argv[1]))
        refused = user_roots.confine(os.environ, [str(root), *([str(worktree)] if worktree else [])])
        if refused:
            _log(user_roots.refused_notice(refused))
        run(Path(sys.argv[1]))
    except (configuration.ConfigError, user_roots.NoHome) as e:
        _log(f"stopped: {e}")
        sys.exit(1)
    except Exception:  # noqa: BLE001 -- the log is all anyone will see of it; Python's own report is not redacted
        _log(f"stopped: {traceback.format_exc()}")
        sys.exit(1)


if __name__ == "__main__":
    main()
