"""Fixtures (what they use lives in `support`): a running precompact-localnet stopped by the
test, a git project with a bare remote, a trust store of the test's own; and the markers
(`localnet`, `e2e`, `network`) set from the fixtures a test uses, so they cannot drift."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from support import claude_code, codex_cli, gemini_cli, npm_package, opencode_cli
from support.commands import run_git, stop_processes_under
from support.localnet import LocalnetProcess

# A test that uses one of these fixtures gets the marker: the fixture is the only way to it.
MARKER_OF_FIXTURE = {
    "localnet": "localnet",
    "lineage": "localnet",  # test_proof_bundle's module-wide chain
    "history_root": "localnet",  # test_trust's module-wide chain
    "claude_binary": "e2e",
    "codex_binary": "e2e",
    "gemini_binary": "e2e",
    "opencode_binary": "e2e",
    "pypi": "network",
}
_test_being_run: list[pytest.Item] = []


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture in item.fixturenames:  # type: ignore[attr-defined]
            if fixture in MARKER_OF_FIXTURE:
                item.add_marker(MARKER_OF_FIXTURE[fixture])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    _test_being_run.append(item)
    try:
        return (yield)
    finally:
        _test_being_run.pop()


def pytest_configure(config: pytest.Config) -> None:
    """A localnet started by a test (or a fixture it uses) without the `localnet` marker fails
    that test: `-m "not localnet"` must select only tests that run without the binary."""
    start = LocalnetProcess.start

    def marked_start(self: LocalnetProcess, *args, **kwargs) -> str:
        test = _test_being_run[-1] if _test_being_run else None
        if test is not None and test.get_closest_marker("localnet") is None:
            pytest.fail(
                f"{test.nodeid} starts a precompact-localnet: mark it @pytest.mark.localnet "
                "(or add the fixture that starts it to conftest.MARKER_OF_FIXTURE)",
                pytrace=False,
            )
        return start(self, *args, **kwargs)

    LocalnetProcess.start = marked_start  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def own_trust_store(tmp_path_factory, monkeypatch):
    """Each test approves configurations in a store of its own, never in the real user's
    ~/.config (every precompact process a test starts inherits this)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))
    # This machine's record of the savepoints it wrote (local.provenance), the test's own too.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("xdg-state")))
    # This machine's registry of the projects it archived (local.registry), the test's own too.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))


@pytest.fixture(autouse=True)
def outside_any_agent_session(monkeypatch):
    """The suite run from inside an agent's session (a Bash tool's CLAUDECODE=1) would have every
    command it starts keep only the PRECOMPACT_* variables a hook keeps: each test runs as a user's
    own shell does, unless it sets a marker itself. Nor does Claude Code's folder of the session
    that runs the suite (CLAUDE_CONFIG_DIR) stand in for the test's HOME."""
    from precompact.config.settings import AGENT_SESSION_MARKERS

    for marker in (*AGENT_SESSION_MARKERS, "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(marker, raising=False)


@pytest.fixture(autouse=True)
def no_process_outlives_its_test(request):
    """Every process a test starts, it stops: the background worker a hook spawned for a project
    in the test's tmp_path was often still running when the test ended (one test in eight or so
    of the hook tests), working on, loading the next tests on CI's two cores. Stopped here, by
    pid, whatever the test forgot."""
    yield
    folder = request.node.funcargs.get("tmp_path")
    if isinstance(folder, Path):
        stop_processes_under(folder)


@pytest.fixture
def localnet(tmp_path):
    node = LocalnetProcess(tmp_path, state_file=tmp_path / "chain-state.json")
    node.start()
    yield node
    node.stop()


@pytest.fixture
def workspace(tmp_path: Path):
    """A project repository with uncommitted and staged work, and a bare `origin`."""
    remote = tmp_path / "remote.git"
    run_git(tmp_path, "init", "-q", "--bare", str(remote))
    project = tmp_path / "project"
    project.mkdir()
    run_git(project, "init", "-q", "-b", "main")
    run_git(project, "config", "user.name", "Dev")
    run_git(project, "config", "user.email", "dev@example.invalid")
    (project / "app.py").write_text("v1\n")
    run_git(project, "add", "app.py")
    run_git(project, "commit", "-q", "-m", "initial")
    run_git(project, "remote", "add", "origin", str(remote))
    (project / "app.py").write_text("v2 unstaged\n")
    (project / "staged.py").write_text("staged\n")
    run_git(project, "add", "staged.py")
    return project, remote


@pytest.fixture(scope="session")
def pypi() -> None:
    """Skips a test that installs packages when PyPI cannot be reached (tests need no internet)."""
    import socket

    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError:
        pytest.skip("PyPI is unreachable: this test installs precompact's dependencies from it")


def installed_or_skip(agent: str, install: Callable[[], Path]) -> Path:
    """The agent's CLI from `install`; where it cannot be installed, the test skips saying why."""
    try:
        return install()
    except npm_package.Unavailable as e:
        pytest.skip(f"{agent} end-to-end tests skipped: {e}")


@pytest.fixture(scope="module")
def claude_binary() -> Path:
    return installed_or_skip("Claude Code", claude_code.claude_binary)


@pytest.fixture(scope="module")
def codex_binary() -> Path:
    return installed_or_skip("Codex CLI", codex_cli.codex_binary)


@pytest.fixture(scope="module")
def gemini_binary() -> Path:
    return installed_or_skip("Gemini CLI", gemini_cli.gemini_binary)


@pytest.fixture(scope="module")
def opencode_binary() -> Path:
    return installed_or_skip("OpenCode", opencode_cli.opencode_binary)
