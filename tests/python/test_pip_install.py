"""`pip install` of the repository into a fresh virtual environment, with no Rust toolchain on
PATH, gives a working `precompact`: init, a savepoint through Layers 1, 2 and 3 (against
precompact-localnet, as against any JSON-RPC cluster), verify, resurrect. The same with
`pipx install` and `uv tool install`. Needs PyPI (skipped with one line where it is unreachable)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import precompact
from support import transcript_gen
from support.localnet import REPO
from support.projects import repository_copy

INSTALL_TIMEOUT_SECONDS = 900


def rust_free_path(*first: Path) -> str:
    path = os.pathsep.join([*map(str, first), "/usr/bin", "/bin"])
    assert shutil.which("cargo", path=path) is None and shutil.which("rustc", path=path) is None
    return path


def run(args: list, cwd: Path, path: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {
        "PATH": path,
        "HOME": os.environ["HOME"],
        "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
        "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"],
        "LANG": "C.UTF-8",
    }
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def check_precompact_works(precompact_bin: Path, path: str, root: Path, cluster: str) -> None:
    """init, a savepoint with every layer, verify and resurrect, with this `precompact`."""
    remote, project = root / "remote.git", root / "project"
    git(root, "init", "-q", "--bare", str(remote))
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    git(project, "remote", "add", "origin", str(remote))
    git(project, "config", "user.name", "Dev")
    git(project, "config", "user.email", "dev@example.invalid")
    (project / "app.py").write_text("print('hello')\n")
    init = run(
        [
            precompact_bin,
            "init",
            "--yes",
            "--instance",
            "Pip #1",
            "--cluster",
            cluster,
            "--keypair",
            root / "id.json",
            "--airdrop",
        ],
        project,
        path,
    )
    assert init.returncode == 0, init.stderr
    transcript = transcript_gen.generate(root / "session.jsonl", project=project)
    saved = run([precompact_bin, "savepoint", "--transcript", transcript.path, "--session-id", "s-pip"], project, path)
    assert saved.returncode == 0, saved.stdout + saved.stderr
    assert "✓ Layer 2: up to date" in saved.stdout and "✓ Layer 3: up to date" in saved.stdout
    verified = run([precompact_bin, "verify", "--all"], project, path)
    assert verified.returncode == 0 and verified.stdout.startswith("✓ 1 savepoint(s) verified"), (
        verified.stdout + verified.stderr
    )
    restored = run([precompact_bin, "resurrect", "--format", "json"], project, path)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    report = json.loads(restored.stdout)
    assert report["sequence"] == 1 and report["intact"] is True


# The installers users run, at exact versions, installed by this test into a throwaway venv.
PIPX = "pipx==1.18.4"
UV = "uv==0.13.9"


@pytest.fixture(scope="module")
def installers(tmp_path_factory, pypi) -> dict[str, Path]:
    """pipx and uv, each in a venv of its own (pipx would use a uv it finds beside it); uv's wheel
    carries its binary: nothing to compile."""
    found = {}
    for name, requirement in (("pipx", PIPX), ("uv", UV)):
        venv = tmp_path_factory.mktemp(name) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        done = subprocess.run(
            [str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", requirement],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_SECONDS,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        found[name] = venv / "bin" / name
    return found


def install(installer: str, source: Path, root: Path, installers: dict[str, Path]) -> tuple[Path, str]:
    """Installs `source` the way a user would with `installer`; the `precompact` it gives and a
    PATH without Rust on which it is found."""
    lock = str(REPO / "requirements.lock")
    if installer == "pip":
        venv = root / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        path = rust_free_path(venv / "bin")
        args = [venv / "bin" / "pip", "install", "--quiet", "--disable-pip-version-check", "--constraint", lock, source]
        bin_dir, extra = venv / "bin", {}
    elif installer == "pipx":
        bin_dir = root / "pipx-bin"
        path = rust_free_path(bin_dir, installers["pipx"].parent)
        args = [installers["pipx"], "install", "--pip-args", f"--constraint {lock}", source]
        extra = {
            "PIPX_HOME": str(root / "pipx-home"),
            "PIPX_BIN_DIR": str(bin_dir),
            "PIPX_MAN_DIR": str(root / "pipx-man"),
            "PIPX_DEFAULT_PYTHON": sys.executable,
        }
    else:
        bin_dir = root / "uv-bin"
        path = rust_free_path(bin_dir, installers["uv"].parent)
        args = [installers["uv"], "tool", "install", "--constraint", lock, "--python", sys.executable, source]
        extra = {
            "UV_TOOL_DIR": str(root / "uv-tools"),
            "UV_TOOL_BIN_DIR": str(bin_dir),
            "UV_CACHE_DIR": str(root / "uv-cache"),
        }
    # The machine's own settings (proxies, certificates) as a user's shell has them; PATH without Rust.
    env = {**os.environ, "PATH": path, **extra}
    done = subprocess.run(
        [str(a) for a in args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return bin_dir / "precompact", path


@pytest.mark.parametrize("installer", ["pip", "pipx", "uv"])
def test_installed_without_rust_precompact_runs_every_layer(tmp_path, installers, localnet, installer):
    precompact_bin, path = install(installer, repository_copy(tmp_path / "source"), tmp_path, installers)
    version = run([precompact_bin, "--version"], tmp_path, path)
    assert version.stdout.strip() == f"precompact, version {precompact.__version__}"
    check_precompact_works(precompact_bin, path, tmp_path, localnet.url)
