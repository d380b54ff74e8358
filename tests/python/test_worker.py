"""The detached worker: spawned after Layer 1 only, it lands git and chain in order, once."""

from __future__ import annotations

from datetime import UTC, datetime

from precompact.config import settings as configuration
from precompact.edges import worker
from precompact.local import savepoint_log, snapshot
from precompact.ops import background
from support.commands import INSTANCE, initialized_and_funded, landed, precompact, wait_until


def test_spawned_workers_land_every_savepoint_in_order_exactly_once(workspace, localnet, monkeypatch):
    project, _ = workspace
    initialized_and_funded(project, monkeypatch, localnet.url)
    settings = snapshot.Settings.of(configuration.load(project))
    session = snapshot.Session("s", None, str(project))
    for _ in range(3):
        snapshot.create_savepoint(settings, session, datetime.now(UTC))
    pids = [background.spawn(project) for _ in range(3)]  # racing workers: one does the work

    assert wait_until(lambda: landed(project / "logs", INSTANCE, 3)), (
        project / "logs" / background.LOG_NAME
    ).read_text()
    events = savepoint_log.read(project / "logs").events
    confirmed = [e["sequence"] for e in events if e["event"] == "LAYER_3_CONFIRMED"]
    assert confirmed == [1, 2, 3], "posted in order, each once"
    assert sum(e["event"] == "LAYER_2_COMMITTED" for e in events) == 3
    for pid in pids:
        assert wait_until(lambda pid=pid: not _alive(pid), 15), f"worker {pid} exits when done"


def _alive(pid: int) -> bool:
    import os

    try:
        os.waitpid(pid, os.WNOHANG)
        os.kill(pid, 0)
        return True
    except (ChildProcessError, ProcessLookupError):
        return False


def test_status_says_retrying_while_the_worker_will_retry_and_failed_once_it_is_gone(tmp_path):
    import os
    import signal

    from support.projects import new_project

    project = new_project(tmp_path, "p", git_layer=False, chain_layer=True)  # the cluster is a closed port
    snapshot.create_savepoint(
        snapshot.Settings.of(configuration.load(project.path)), snapshot.Session("s", None, str(project.path))
    )
    pid = background.spawn(project.path)

    def status() -> str:
        shown = precompact(project.path, "status")
        assert shown.returncode == 0, shown.stderr
        return shown.stdout

    try:
        assert wait_until(lambda: (project.logs / worker.RETRY_NAME).exists())
        assert "chain retrying (next in " in status()
    finally:
        os.kill(pid, signal.SIGKILL)
        assert wait_until(lambda pid=pid: not _alive(pid), 15)
    assert "chain FAILED" in status(), "a retry file left by a killed worker is not believed"


def test_a_request_the_worker_cannot_take_does_not_keep_it_running(tmp_path, capfd):
    """review9b F4: a logs/ that came with the project holding a request and a directory where the
    worker's claim goes made every round fail and the worker go round for ever (137 rounds in 30 s)."""
    import threading

    from support.projects import new_project

    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    pending = project.logs / "precompact-pending"
    (pending / "S1.computing").mkdir(parents=True)
    (pending / "S1.request").write_text("{}")

    done = threading.Event()
    runner = threading.Thread(target=lambda: (worker.run(project.path), done.set()), daemon=True)
    runner.start()
    assert done.wait(60), "the worker returns when a round took nothing"
    log = capfd.readouterr().out  # the spawned worker's output is its log file
    assert log.count("addenda not computed") == 1, log
