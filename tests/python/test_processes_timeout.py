"""A child precompact gives up on is ended with everything it started (review9b F5): git's timeout
killed `git` alone, and its ssh (and a push's pack-objects) lived on, one more each pass against a
remote that never answers. Each process is checked by the PID it wrote, never by its name."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from precompact.boundary import git_env, processes
from support.commands import wait_until


def ended(pid: int) -> bool:
    """Whether process `pid` has exited (gone, or a zombie its new parent has yet to reap)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def recorded_pids(record: Path) -> list[int]:
    return [int(line) for line in record.read_text().split()] if record.exists() else []


@pytest.fixture
def hanging_ssh(tmp_path, monkeypatch) -> Path:
    """A fake `ssh` first on PATH, for a host that accepts the connection and never answers: it
    writes its PID (the `sleep` it becomes) to the file returned."""
    bin_dir, record = tmp_path / "bin", tmp_path / "ssh.pids"
    bin_dir.mkdir()
    (bin_dir / "ssh").write_text(f"#!/bin/sh\necho $$ >> {record}\nexec sleep 600\n")
    (bin_dir / "ssh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    yield record
    for pid in recorded_pids(record):  # the test's own, if the code under test left one
        if not ended(pid):
            os.kill(pid, 9)


@pytest.mark.parametrize("command", ["ls-remote", "push"])
def test_a_git_that_times_out_against_a_remote_that_never_answers_leaves_no_ssh_running(tmp_path, hanging_ssh, command):
    made = git_env.store(tmp_path / "project.git", timeout=30)
    assert isinstance(made, Path), made
    args: tuple[str, ...] = ()
    if command == "push":  # a commit to push: git connects only once it has one

        def git(*words: str, given: str | None = None) -> str:
            argv = ["git", "--git-dir", str(made), *words]
            return subprocess.run(argv, input=given, capture_output=True, text=True, check=True).stdout.strip()

        commit = git("commit-tree", git("mktree", given=""), "-m", "savepoint")
        git("update-ref", "refs/heads/main", commit)
        args = ("refs/heads/main:refs/heads/main",)
    began = time.monotonic()
    with pytest.raises(processes.TimeoutExpired):
        git_env.transport(made, command, "ssh://fakehost/remote.git", *args, timeout=2)
    assert time.monotonic() - began < 10
    assert wait_until(lambda: recorded_pids(hanging_ssh) != [], 5), "the fake ssh never ran"
    [pid] = recorded_pids(hanging_ssh)
    assert wait_until(lambda: ended(pid), 5), f"ssh {pid} still running after git's timeout"


def test_a_program_that_times_out_is_ended_with_the_processes_it_started(tmp_path):
    record = tmp_path / "pids"
    script = tmp_path / "parent.sh"
    script.write_text(f"#!/bin/sh\nsleep 600 &\necho $! >> {record}\necho $$ >> {record}\nwait\n")
    script.chmod(0o755)
    try:
        with pytest.raises(processes.TimeoutExpired):
            processes.run_program([str(script)], cwd=None, env={"PATH": "/usr/bin:/bin"}, timeout=2)
        child, parent = recorded_pids(record)
        assert ended(parent)
        assert wait_until(lambda: ended(child), 5), f"its child {child} still running"
    finally:
        for pid in recorded_pids(record):
            if not ended(pid):
                os.kill(pid, 9)


def test_a_git_that_answers_in_time_is_unchanged(tmp_path):
    """Output, exit code and text mode as subprocess.run gave them."""
    done = git_env.run(tmp_path, "version", timeout=30)
    assert done.returncode == 0 and done.stdout.startswith("git version "), done
    failed = git_env.run(tmp_path, "rev-parse", "--git-dir", timeout=30)
    assert failed.returncode != 0 and "not a git repository" in failed.stderr
    raw = git_env.run(tmp_path, "version", timeout=30, binary=True)
    assert raw.stdout.startswith(b"git version ")


def test_a_push_still_sending_goes_on_past_the_silence_that_ends_a_silent_one(tmp_path, monkeypatch):
    """A fake `ssh` runs the remote's receive-pack here with the upload throttled: the push takes
    several times the silence bound, git shows its progress all along, and it lands."""
    bin_dir, remote = tmp_path / "bin", tmp_path / "remote.git"
    bin_dir.mkdir()
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    relay = bin_dir / "relay.py"
    relay.write_text(
        "import subprocess, sys, time\n"
        "child = subprocess.Popen(['sh', '-c', sys.argv[-1]], stdin=subprocess.PIPE)\n"
        "while chunk := sys.stdin.buffer.raw.read(8192):\n"
        "    child.stdin.write(chunk); child.stdin.flush(); time.sleep(len(chunk) / 100_000)\n"
        "child.stdin.close(); sys.exit(child.wait())\n"
    )
    (bin_dir / "ssh").write_text(f'#!/bin/sh\nexec {sys.executable} {relay} "$@"\n')
    (bin_dir / "ssh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    made = git_env.store(tmp_path / "project.git", timeout=30)
    assert isinstance(made, Path), made

    def git(*words: str, given: bytes | None = None) -> str:
        argv = ["git", "--git-dir", str(made), *words]
        return subprocess.run(argv, input=given, capture_output=True, check=True).stdout.decode().strip()

    blob = git("hash-object", "-w", "--stdin", given=os.urandom(600_000))  # incompressible: 6 s at 100 KB/s
    tree = git("mktree", given=f"100644 blob {blob}\tsnapshot\n".encode())
    git("update-ref", "refs/heads/main", git("commit-tree", tree, "-m", "savepoint"))
    began = time.monotonic()
    done = git_env.transport(
        made,
        "push",
        f"ssh://fakehost{remote}",
        "refs/heads/main:refs/heads/main",
        options=("--progress",),
        timeout=120,
        silence=3,
    )
    took = time.monotonic() - began
    assert done.returncode == 0, done.stderr
    assert took > 3, f"the push took {took:.1f} s: not past the silence bound, so this tests nothing"
    assert "Writing objects: 100%" in done.stderr
    listed = subprocess.run(
        ["git", "--git-dir", str(remote), "rev-parse", "main"], capture_output=True, text=True, check=True
    )
    assert listed.stdout.strip() == git("rev-parse", "refs/heads/main")
