"""The repository as a Claude Code plugin and one-plugin marketplace: the real Claude Code CLI
(pinned in claude_code.py, offline, against a mock Messages API, in a fresh HOME) validates it,
adds the marketplace, installs the plugin and runs sessions through its hooks; and the plugin's
launcher (bin/precompact) on its own: silent where precompact is not set up, one line for an
untrusted configuration, standing down where settings.json runs precompact, and, on first use,
preparing its environment without losing the first compaction.

What Claude Code 2.1.332 does with a plugin, observed with this harness:
- `claude plugin marketplace add <folder>` declares a "directory" marketplace in user settings;
  `claude plugin install precompact@precompact` copies the whole folder (ignored files and all)
  to ~/.claude/plugins/cache/<marketplace>/<plugin>/<version>, yet hooks and MCP servers run from
  the folder itself: ${CLAUDE_PLUGIN_ROOT} is the marketplace's folder. Once that folder is
  moved or deleted Claude Code loads none of the plugin (its debug log: "Marketplace precompact
  failed to load: cache-miss"; `plugin list` shows that error), silently in the session; a
  plugin cannot outlive it, since its hooks.json is read from there. A git URL must be https
  (or user@host:path) or owner/repo; a local path is taken as a folder.
- ${CLAUDE_PLUGIN_DATA} is ~/.claude/plugins/data/<plugin>-<marketplace>, made at install.
- Hooks get CLAUDE_PLUGIN_ROOT, CLAUDE_PLUGIN_DATA and each set option as
  CLAUDE_PLUGIN_OPTION_<KEY> (sensitive ones too); the MCP server gets the first two only; the
  Bash tool none of them, but the plugin's bin/ at the end of its PATH (not the hooks' PATH).
- `claude plugin configure --values-stdin` keeps options in settings.json's pluginConfigs, and a
  `sensitive` one in ~/.claude/.credentials.json (no keychain here), never in settings.json.
- The MCP server is started at every session start, in every project."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import precompact
from support import claude_code, commands, transcript_gen
from support.commands import INSTALLED_PYTHON, PRECOMPACT, another_python
from support.localnet import REPO
from support.projects import full_document, new_project, repository_copy, tree_digest

VENV_BIN = str(Path(sys.executable).parent)
# PATH without any precompact (nor cargo): what a machine with only the plugin has.
BARE_PATH = "/usr/bin:/bin"
WHEEL_CACHE = Path.home() / ".cache" / "precompact" / "wheels"
# pip with no package index at all, and any network it tried going to a closed port.
OFFLINE = {
    "PIP_NO_INDEX": "1",
    "https_proxy": "http://127.0.0.1:9",
    "http_proxy": "http://127.0.0.1:9",
    "no_proxy": "127.0.0.1",  # the mock Anthropic API
}


def preparing(data: Path, mirror: Path) -> str:
    """What the first use says it does, offline with `mirror` as PIP_FIND_LINKS."""
    lock = (REPO / "requirements.hashes.lock").read_text().splitlines()
    pins = sum(1 for line in lock if "==" in line and not line.startswith((" ", "#")))
    return (
        f"preparing its Python environment in {data / 'venv' / precompact.__version__} (first use, about a minute:"
        f" {pins} wheels pinned by hash in requirements.hashes.lock, fetched by pip from no package index"
        f" (PIP_NO_INDEX) and {mirror})"
    )


def claude(session: claude_code.Session, *args: str) -> str:
    done = subprocess.run(
        [str(session.binary), *args],
        env=session.environment(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"claude {' '.join(args)}: {done.stdout} {done.stderr}"
    return done.stdout


def summariser_instructions(mock: claude_code.MockAnthropic) -> list[str]:
    """What each compaction request handed the summariser after "Additional Instructions:"
    (PreCompact's stdout), "" where there was none."""
    prompts = [
        claude_code.texts(r["body"]["messages"][-1])
        for r in mock.requests
        if r["body"] and claude_code.COMPACTION_MARK in claude_code.texts(r["body"]["messages"][-1])
    ]
    return [
        p.split("Additional Instructions:\n", 1)[1].split("\n\nREMINDER:", 1)[0]
        if "Additional Instructions:" in p
        else ""
        for p in prompts
    ]


def index(project: Path) -> list[dict]:
    path = project / "logs" / "precompact-savepoint.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def wait_until(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout} s")
        time.sleep(0.2)


def test_precompact_the_package_and_the_plugin_have_one_version():
    plugin = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    [listed] = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())["plugins"]
    cli = subprocess.run([PRECOMPACT, "--version"], capture_output=True, text=True, check=True).stdout
    assert plugin["version"] == listed["version"] == precompact.__version__ == importlib.metadata.version("precompact")
    assert cli.strip() == f"precompact, version {precompact.__version__}"
    changelog = (REPO / "CHANGELOG.md").read_text()
    assert f"## {precompact.__version__} " in changelog, "the CHANGELOG has an entry for this version"
    assert "Copyright (c) 2026 precompact contributors" in (REPO / "LICENSE").read_text() and plugin["license"] == "MIT"


def test_claude_plugin_validate_passes_strict(tmp_path, claude_binary):
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    for target in (REPO, REPO / ".claude-plugin" / "plugin.json"):
        done = subprocess.run(
            [str(claude_binary), "plugin", "validate", "--strict", "--json", str(target)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        report = json.loads(done.stdout)
        assert done.returncode == 0 and report["success"], done.stdout
        assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []
    hooks = {(h["event"], h["command"]) for h in report["provides"]["hooks"]}
    assert hooks == {
        (event, '"${CLAUDE_PLUGIN_ROOT}/bin/precompact" plugin-hook || exit 0')
        for event in ("PreCompact", "PostCompact", "SessionStart", "SessionEnd", "UserPromptSubmit", "PostToolUse")
    }
    assert [(s["name"], s["args"]) for s in report["provides"]["mcpServers"]] == [("precompact", ["mcp"])]


def test_installed_from_the_marketplace_the_plugin_saves_a_precompact_project_and_leaves_another_alone(
    tmp_path, claude_binary
):
    marketplace = repository_copy(tmp_path / "marketplace")
    plugin_files = tree_digest(marketplace)
    home = tmp_path / "home"
    home.mkdir()
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    other = tmp_path / "other"
    other.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=other, check=True)
    (other / "notes.md").write_text("no precompact here\n")
    mock = claude_code.MockAnthropic(claude_code.Script()).start()
    try:
        session = claude_code.Session(claude_binary, home, project.path, mock)
        claude(session, "plugin", "marketplace", "add", str(marketplace))
        claude(session, "plugin", "install", "precompact@precompact")
        installed = json.loads(claude(session, "plugin", "list", "--json"))
        assert [(p["id"], p["version"]) for p in installed if p["id"].startswith("precompact@")] == [
            ("precompact@precompact", precompact.__version__)
        ]

        session_id = session.run("Please build the header parser.")["session_id"]
        session.run("/compact", resume=session_id)
        [note] = summariser_instructions(mock)
        # The first run's SessionEnd saved the session; PreCompact finds nothing new since.
        assert "The full pre-compaction transcript is saved as precompact savepoint 1 (sha256:" in note
        [created] = [e for e in index(project.path) if e["event"] == "SAVEPOINT_CREATED"]
        assert created["session_id"] == session_id and created["sequence"] == 1
        wait_until(lambda: any(e["event"] == "LAYER_2_PUSHED" for e in index(project.path)), 60, "Layer 2's push")
        assert "hooks" not in json.loads((home / ".claude" / "settings.json").read_text()), (
            "the hooks came from the plugin"
        )
        assert not (project.path / ".claude").exists()

        other_files = tree_digest(other)
        elsewhere = claude_code.Session(claude_binary, home, other, mock)
        other_id = elsewhere.run("Tidy the notes.")["session_id"]
        elsewhere.run("/compact", resume=other_id)
        assert summariser_instructions(mock)[1:] == [""], "nothing said to the summariser there"
        assert tree_digest(other) == other_files, "nothing written in a project without precompact"
    finally:
        mock.stop()
    data = home / ".claude" / "plugins" / "data" / "precompact-precompact"
    assert not (data / "venv").exists() and not (data / "queue").exists(), (
        "the installed precompact ran; nothing prepared"
    )
    assert tree_digest(marketplace) == plugin_files, "nothing written into the plugin's folder"


def test_a_plugin_whose_launcher_cannot_start_never_blocks_the_session(tmp_path, claude_binary):
    """docs/setup.md: each of the plugin's hook commands exits 0 whatever its launcher does, as
    `install`'s commands do. Here the only `python3` on Claude Code's PATH fails with 2 (one that
    cannot run the launcher: Claude Code takes a hook's exit 2 as a block, of the prompt at
    UserPromptSubmit and of the compaction at PreCompact): every prompt still reaches the model and
    `/compact` compacts."""
    marketplace = repository_copy(tmp_path / "marketplace")
    home = tmp_path / "home"
    home.mkdir()
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    broken = tmp_path / "broken-bin"
    broken.mkdir()
    (broken / "python3").write_text("#!/bin/sh\necho 'python3: cannot run this' >&2\nexit 2\n")
    (broken / "python3").chmod(0o755)
    with claude_code.MockAnthropic(claude_code.Script()) as mock:
        session = claude_code.Session(claude_binary, home, project.path, mock)
        claude(session, "plugin", "marketplace", "add", str(marketplace))
        claude(session, "plugin", "install", "precompact@precompact")
        session.env["PATH"] = f"{broken}:{BARE_PATH}"
        session_id = session.run("Start the parser.")["session_id"]
        session.run("Keep going.", resume=session_id)
        session.run("/compact", resume=session_id)
        asked = [claude_code.messages_text(r) for r in mock.requests if r["body"]]
        for prompt in ("Start the parser.", "Keep going."):
            assert any(prompt in text for text in asked), f"{prompt!r} reached the model: no hook blocked it"
        assert len(claude_code.compaction_requests(mock)) == 1, "PreCompact did not block the compaction"
    assert not index(project.path), "nothing was saved: precompact did not start"


def test_a_moved_clone_turns_the_plugin_off_and_doctor_says_so_with_the_fix(tmp_path, claude_binary):
    """What Claude Code 2.1.332 does when the folder added as a marketplace moves: it loads
    nothing of the plugin (its cache copy is not used), so no hook runs and nothing is said in
    the session; `precompact doctor` names the folder and the fix, and the fix works."""
    clone = repository_copy(tmp_path / "clone")
    home = tmp_path / "home"
    home.mkdir()
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    mock = claude_code.MockAnthropic(claude_code.Script()).start()

    def savepoints() -> int:
        return [e["event"] for e in index(project.path)].count("SAVEPOINT_CREATED")

    def doctor_line() -> tuple[int, str]:
        done = commands.precompact(project.path, "doctor", home=home)
        [line] = [line for line in done.stdout.splitlines() if "plugin folder" in line]
        return done.returncode, line

    try:
        session = claude_code.Session(claude_binary, home, project.path, mock)
        claude(session, "plugin", "marketplace", "add", str(clone))
        claude(session, "plugin", "install", "precompact@precompact")
        session.run("Please build the header parser.")
        wait_until(lambda: savepoints() == 1, 30, "the plugin's SessionEnd saving the session")
        assert doctor_line()[1] == (
            f"✓ plugin folder: Claude Code runs precompact@precompact's hooks and MCP server from {clone}, which holds"
            " it (keep it there)"
        )

        moved = tmp_path / "moved"
        clone.rename(moved)
        session.run("Keep the public API stable.", debug_file=tmp_path / "debug.txt")
        assert (
            "Plugin loading errors: Marketplace precompact failed to load: cache-miss"
            in (tmp_path / "debug.txt").read_text()
        )
        assert savepoints() == 1, "no hook ran"
        [listed] = [
            p for p in json.loads(claude(session, "plugin", "list", "--json")) if p["id"] == "precompact@precompact"
        ]
        assert listed["errors"] == ["Marketplace precompact failed to load: cache-miss"], listed
        code, line = doctor_line()
        assert code == 1 and line == (
            f"✗ plugin folder: {clone}, the folder Claude Code runs precompact@precompact's hooks and MCP server from,"
            " no longer holds it (moved or deleted): Claude Code runs none of them, so nothing is saved; fix: put the"
            f" clone back at {clone}, or from where it is now: claude plugin marketplace remove precompact &&"
            ' claude plugin marketplace add "$PWD" && claude plugin install precompact@precompact'
        )

        fix = line.split(" or from where it is now: ", 1)[1]
        with_claude = {**session.environment(), "PATH": f"{claude_binary.parent}:{session.environment()['PATH']}"}
        done = subprocess.run(fix, shell=True, cwd=moved, env=with_claude, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        session.run("Add the footer parser.")
        wait_until(lambda: savepoints() == 2, 30, "the hooks running again, from the new place")
        assert doctor_line()[1] == (
            f"✓ plugin folder: Claude Code runs precompact@precompact's hooks and MCP server from {moved}, which holds"
            " it (keep it there)"
        )
    finally:
        mock.stop()


def test_from_nothing_with_only_the_plugin_init_in_claude_code_prepares_precompact_and_compact_saves(
    tmp_path, wheel_mirror, claude_binary
):
    """What a new user does: no precompact installed (PATH without it, nor Rust), the plugin from
    its marketplace, `precompact init` through Claude Code's Bash tool (the plugin's bin/ is on
    its PATH; the environment is prepared there and then, with no package index, from a folder
    of wheels), then `/compact`."""
    marketplace = repository_copy(tmp_path / "marketplace")
    plugin_files = tree_digest(marketplace)
    home = tmp_path / "home"
    home.mkdir()
    project, remote = tmp_path / "project", tmp_path / "project.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    project.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["remote", "add", "origin", str(remote)],
        ["config", "user.name", "Dev"],
        ["config", "user.email", "dev@example.invalid"],
    ):
        subprocess.run(["git", *args], cwd=project, check=True)
    init = f"precompact init --yes --instance 'CC #1' --keypair {tmp_path / 'id.json'}"
    script = claude_code.Script(
        plans={"setup": [[("Bash", {"command": init, "description": "Set up precompact", "timeout": 600000})]]}
    )
    mock = claude_code.MockAnthropic(script).start()
    try:
        offline = {"PATH": BARE_PATH, "PIP_FIND_LINKS": str(wheel_mirror), **OFFLINE}
        session = claude_code.Session(claude_binary, home, project, mock, env=offline, timeout=900)
        claude(session, "plugin", "marketplace", "add", str(marketplace))
        claude(session, "plugin", "install", "precompact@precompact")
        session_id = session.run("Set precompact up here. [[plan:setup]]")["session_id"]
        [result] = [
            e["toolUseResult"]
            for e in session.transcript(session_id)
            if e.get("type") == "user" and isinstance(e.get("toolUseResult"), dict)
        ]
        data = home / ".claude" / "plugins" / "data" / "precompact-precompact"
        assert f"precompact: {preparing(data, wheel_mirror)}\n" in result["stdout"]  # the Bash tool's, stderr too
        assert f"wrote {project / '.precompact.toml'}" in result["stdout"]
        assert (data / "venv" / precompact.__version__ / "ready").is_file()
        session.run("Keep the public API stable.", resume=session_id)
        session.run("/compact", resume=session_id)
        [note] = summariser_instructions(mock)
        # Each run's SessionEnd saved what it said (savepoints 1 and 2): PreCompact finds nothing new.
        assert note.startswith("Nothing was said since precompact savepoint 2, so no new savepoint was made.")
        assert "The full pre-compaction transcript is saved as precompact savepoint 2 (sha256:" in note
        events = [e["event"] for e in index(project)]
        assert events.count("SAVEPOINT_CREATED") == 2 and "BRIEF_DELIVERED" in events
        wait_until(lambda: any(e["event"] == "LAYER_2_PUSHED" for e in index(project)), 120, "Layer 2's push")
    finally:
        mock.stop()
    assert tree_digest(marketplace) == plugin_files, "nothing written into the plugin's folder"


@pytest.fixture
def wheel_mirror(pypi) -> Path:
    """A folder of every wheel requirements.hashes.lock pins (construct's from the plugin's
    wheels/), and construct's source beside it: what a user's local mirror holds. Downloaded
    once per lock into ~/.cache/precompact/wheels, outside the clone."""
    lock = REPO / "requirements.hashes.lock"
    mirror = WHEEL_CACHE / hashlib.sha256(lock.read_bytes()).hexdigest()[:16]
    if not mirror.is_dir():
        partial = Path(tempfile.mkdtemp(dir=WHEEL_CACHE.mkdir(parents=True, exist_ok=True) or WHEEL_CACHE))
        pip = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", str(partial)]
        for args in (
            ["--only-binary", ":all:", "--require-hashes", "--find-links", str(REPO / "wheels"), "-r", str(lock)],
            ["--no-binary", ":all:", "construct==2.10.68"],
        ):
            subprocess.run([*pip, *args], check=True, capture_output=True, timeout=900)
        partial.rename(mirror)
    return mirror


def launch_command(plugin: Path, data: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """`precompact ARGS` through the plugin's launcher, as Claude Code's Bash tool runs it."""
    environment = {"PATH": BARE_PATH, "HOME": os.environ["HOME"], "CLAUDE_PLUGIN_DATA": str(data), **env}
    return subprocess.run(
        [sys.executable, "-S", str(plugin / "bin" / "precompact"), *args],
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_first_use_with_no_package_index_installs_wheels_only_from_a_local_mirror(tmp_path, wheel_mirror):
    """No index (PIP_NO_INDEX, every connection to a closed port) and a folder of wheels
    (PIP_FIND_LINKS): the first use says what it fetches, installs, and the environment it made
    runs without the plugin's folder."""
    plugin = repository_copy(tmp_path / "plugin")
    data = tmp_path / "data"
    began = time.monotonic()
    first = launch_command(plugin, data, "--version", PIP_FIND_LINKS=str(wheel_mirror), **OFFLINE)
    first_use = time.monotonic() - began
    assert first.returncode == 0, first.stderr
    assert first.stdout == f"precompact, version {precompact.__version__}\n"
    assert first.stderr == f"precompact: {preparing(data, wheel_mirror)}\n"
    began = time.monotonic()
    later = launch_command(plugin, data, "--version", **OFFLINE)
    later_use = time.monotonic() - began
    assert (later.returncode, later.stderr) == (0, ""), later.stderr
    prepared = data / "venv" / precompact.__version__ / "bin" / "precompact"
    shutil.rmtree(plugin)
    alone = subprocess.run([str(prepared), "--version"], capture_output=True, text=True, check=False)
    assert alone.stdout == f"precompact, version {precompact.__version__}\n", "the environment outlives the folder"
    print(f"first use (prepare from the mirror, then --version): {first_use:.1f} s; later use: {later_use:.2f} s")


def test_a_dependency_the_mirror_has_only_as_source_is_refused_in_one_line(tmp_path, wheel_mirror):
    plugin = repository_copy(tmp_path / "plugin")
    (plugin / "wheels" / "construct-2.10.68-py3-none-any.whl").unlink()
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    for found in wheel_mirror.iterdir():  # construct's source, not its wheel
        if found.name != "construct-2.10.68-py3-none-any.whl":
            (mirror / found.name).symlink_to(found)
    data = tmp_path / "data"
    done = launch_command(plugin, data, "--version", PIP_FIND_LINKS=str(mirror), **OFFLINE)
    assert done.returncode == 1 and done.stdout == ""
    announced, refused = done.stderr.splitlines()
    assert announced.startswith("precompact: preparing its Python environment in ")
    assert refused == (
        f"precompact: no wheel of construct==2.10.68 where pip looked (no package index (PIP_NO_INDEX) and {mirror});"
        " precompact installs wheels only, never builds one from source: add that wheel to your mirror, or install"
        " precompact with pipx (see its README)"
    )
    assert "construct" in (data / "prepare.log").read_text(), "pip's own words are kept in prepare.log"
    assert not (data / "venv" / precompact.__version__ / "ready").exists()


@pytest.mark.slow
def test_an_index_that_cannot_be_reached_is_named_in_one_line_without_its_password(tmp_path):
    plugin = repository_copy(tmp_path / "plugin")
    data = tmp_path / "data"
    done = launch_command(
        plugin, data, "status", PIP_INDEX_URL="http://mirror:s3cret@127.0.0.1:9/simple", PIP_RETRIES="1"
    )
    assert done.returncode == 1 and done.stdout == ""
    announced, refused = done.stderr.splitlines()
    assert announced.endswith("fetched by pip from the package index http://mirror:***@127.0.0.1:9/simple)")
    assert re.fullmatch(
        r"precompact: pip could not reach the package index http://mirror:\*\*\*@127\.0\.0\.1:9/simple for \S+==\S+;"
        r" name a mirror \(PIP_INDEX_URL\) or a proxy \(PIP_PROXY\), or set them in pip\.conf"
        r' \(see the README\'s "Install"\)',
        refused,
    ), refused
    assert "s3cret" not in (data / "prepare.log").read_text()


def test_the_plugins_own_wheel_holds_what_hatchling_packages(tmp_path):
    """plugin_wheel's wheel: every tracked file of client/precompact, pyproject.toml's name,
    version, requirements and console script; pip installs it with no index."""
    import tomllib
    import zipfile

    from precompact.edges import plugin_wheel

    wheel = plugin_wheel.build(REPO, tmp_path)
    tracked = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "client/precompact"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    members = zipfile.ZipFile(wheel).namelist()
    dist_info = f"precompact-{precompact.__version__}.dist-info"
    assert sorted(m for m in members if not m.startswith(dist_info)) == sorted(
        t.removeprefix("client/") for t in tracked
    )
    target = tmp_path / "installed"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-index",
            "--no-deps",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
    )
    [found] = importlib.metadata.distributions(path=[str(target)])
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert found.version == precompact.__version__ and found.requires == project["dependencies"]
    assert [(e.name, e.value) for e in found.entry_points] == [("precompact", "precompact.edges.command:main")]


# -- the launcher on its own ----------------------------------------------------------------------


@pytest.fixture
def plugin(tmp_path) -> Path:
    return repository_copy(tmp_path / "plugin")


def launch(
    plugin: Path,
    payload: dict | str,
    data: Path,
    path: str = BARE_PATH,
    python: tuple[str, ...] = (sys.executable,),
    **env: str,
) -> subprocess.CompletedProcess:
    environment = {
        "PATH": path,
        "HOME": os.environ["HOME"],
        "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
        "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"],
        "CLAUDE_PLUGIN_DATA": str(data),
        **env,
    }
    return subprocess.run(
        [*python, str(plugin / "bin" / "precompact"), "plugin-hook"],
        input=payload if isinstance(payload, str) else json.dumps(payload),  # a str: stdin as it is
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_input_the_hook_cannot_read_is_said_with_exit_0(tmp_path, plugin):
    data = tmp_path / "data"
    done = launch(plugin, {"hook_event_name": "SessionStart", "cwd": "/tmp/a\u0000b", "source": "compact"}, data)
    assert done.returncode == 0 and "Traceback" not in done.stderr and "embedded null byte" in done.stderr
    deep = '{"hook_event_name": "PostToolUse", "cwd": "/tmp", "tool_response": ' + "[" * 5000 + "]" * 5000 + "}"
    done = launch(plugin, deep, data)
    assert done.returncode == 0 and "Traceback" not in done.stderr


def test_without_a_configuration_the_hooks_say_nothing_and_write_nothing(tmp_path, plugin):
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    files, plugin_files = tree_digest(project), tree_digest(plugin)
    data = tmp_path / "data"
    transcript = transcript_gen.generate(tmp_path / "t.jsonl").path
    for event in ("SessionStart", "PreCompact", "PostCompact"):
        done = launch(plugin, transcript_gen.payload(event, project, transcript), data)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert tree_digest(project) == files and not data.exists() and tree_digest(plugin) == plugin_files


def test_an_untrusted_configuration_gets_one_line_and_nothing_is_prepared(tmp_path, plugin):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    (project.path / ".precompact.toml").write_text((project.path / ".precompact.toml").read_text() + "\n# edited\n")
    data = tmp_path / "data"
    pre = launch(plugin, transcript_gen.payload("PreCompact", project.path), data)
    assert (
        pre.returncode == 0
        and pre.stderr.startswith("precompact did nothing: ")
        and "changed since you trusted it" in pre.stderr
    )
    assert len(pre.stderr.strip().splitlines()) == 1 and pre.stdout == "", "PreCompact's stdout is the summariser's"
    start = launch(plugin, transcript_gen.payload("SessionStart", project.path, source="startup"), data)
    assert (
        "run `precompact trust`" in json.loads(start.stdout)["systemMessage"]
        and "additionalContext" not in start.stdout
    )
    assert not data.exists() and index(project.path) == []


def test_a_clone_that_ships_a_configuration_gets_the_trust_line_from_a_bare_python(tmp_path, plugin):
    """Plugin only, nothing of precompact's dependencies installed (`python3 -S`: no site-packages),
    in a clone whose `.precompact.toml` came with it: every hook answers the one line naming
    `precompact trust`, exit 0, and nothing is prepared."""
    shipped = new_project(tmp_path, "upstream", git_layer=False, chain_layer=False)
    clone = tmp_path / "clone"
    clone.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=clone, check=True)
    (clone / ".precompact.toml").write_bytes((shipped.path / ".precompact.toml").read_bytes())
    data = tmp_path / "data"
    transcript = transcript_gen.generate(tmp_path / "t.jsonl").path
    for event in ("SessionStart", "PreCompact", "PostCompact", "SessionEnd"):
        done = launch(
            plugin,
            transcript_gen.payload(event, clone, transcript, source="startup"),
            data,
            python=(sys.executable, "-S"),
        )
        assert done.returncode == 0 and "Traceback" not in done.stderr, f"{event}: {done.stderr}"
        # One line, for the user: a systemMessage, or plain words where Claude Code reads stdout otherwise.
        line = json.loads(done.stdout)["systemMessage"] if done.stdout.startswith("{") else done.stdout + done.stderr
        assert line.startswith(f"precompact did nothing: {clone / '.precompact.toml'} is not trusted"), line
        assert f"run `precompact trust` in {clone}" in line and "\n" not in line.strip()
    assert not data.exists() and not (clone / "logs").exists()


# What bin/precompact runs before precompact's dependencies are installed: these modules and every
# module of precompact they import (at the top or in a function) use the standard library alone.
LAUNCHER_MODULES = ("precompact.edges.launcher", "precompact.edges.plugin_runtime")


def third_party_imports(sources: Callable[[str], str | None]) -> dict[str, str]:
    """Each import outside the standard library and precompact in the launcher's import closure,
    with the module that makes it; `sources` gives a precompact module's text (None: no such module)."""
    import ast

    found, seen, todo = {}, set(), list(LAUNCHER_MODULES)
    while todo:
        module = todo.pop()
        text = sources(module)
        if module in seen or text is None:
            continue
        seen.add(module)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top == "precompact":
                    todo.append(name)
                elif top not in sys.stdlib_module_names and top != "__future__":
                    found.setdefault(name, module)
    return found


def client_source(module: str) -> str | None:
    path = REPO / "client" / Path(*module.split("."))
    for candidate in (path / "__init__.py", path.with_suffix(".py")):
        if candidate.is_file():
            return candidate.read_text()
    return None


def test_the_launcher_imports_the_standard_library_alone():
    assert third_party_imports(client_source) == {}
    breaking = {
        "precompact.edges.launcher": "def main():\n    from precompact.edges import hook\n",
        "precompact.edges.hook": "from precompact.transcript import agents\n",
        "precompact.transcript.agents": "import orjson\n",
    }
    assert third_party_imports(breaking.get) == {"orjson": "precompact.transcript.agents"}


def test_the_plugin_stands_down_where_settings_json_runs_precompact(tmp_path, plugin):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    installed = commands.precompact(project.path, "install", "--scope", "user", home=home)
    assert installed.returncode == 0, installed.stderr
    transcript = transcript_gen.generate(tmp_path / "t.jsonl").path

    def pre_compact(home: Path, path: str = f"{VENV_BIN}:{BARE_PATH}") -> subprocess.CompletedProcess:
        return launch(
            plugin,
            transcript_gen.payload("PreCompact", project.path, transcript),
            tmp_path / "data",
            path=path,
            HOME=str(home),
        )

    stood_down = pre_compact(home)
    assert stood_down.returncode == 0 and stood_down.stdout == ""
    assert "precompact's hooks in settings.json run here; the plugin's stand down" in stood_down.stderr
    # settings.json names precompact by its absolute path: it runs whatever PATH Claude Code has.
    assert pre_compact(home, path=BARE_PATH).stdout == "", "stands down without precompact on PATH too"
    assert index(project.path) == []
    assert transcript_gen.saved_sequence(pre_compact(elsewhere).stdout) == 1, "with no such settings, the plugin saves"
    installed = commands.precompact(project.path, "install", home=elsewhere)
    assert installed.returncode == 0, installed.stderr
    assert pre_compact(elsewhere).stdout == "", "the project's own settings.json counts too"
    assert [e["event"] for e in index(project.path)].count("SAVEPOINT_CREATED") == 1


def test_under_claude_config_dir_the_plugin_stands_down_by_the_settings_claude_code_reads(tmp_path, plugin):
    """Claude Code 2.1.332 with CLAUDE_CONFIG_DIR set reads `$CLAUDE_CONFIG_DIR/settings.json`,
    not ~/.claude/settings.json, and hands its hooks the variable with CLAUDECODE=1 (seen). The
    plugin stands down by the file Claude Code runs: precompact's hooks left in ~/.claude, which
    Claude Code does not read then, would lose the compaction. A folder in the project (its
    own settings.json naming precompact) is not read."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    home, configured, planted = tmp_path / "home", tmp_path / "claude-config", project.path / ".claude-config"
    for folder in (configured, planted):
        env = {"CLAUDE_CONFIG_DIR": str(folder)}
        done = commands.precompact(tmp_path, "install", "--scope", "user", env=env, home=home)
        assert done.returncode == 0 and (folder / "settings.json").is_file(), done.stderr
    transcript = transcript_gen.generate(tmp_path / "t.jsonl").path

    def pre_compact(folder: Path) -> subprocess.CompletedProcess:
        return launch(
            plugin,
            transcript_gen.payload("PreCompact", project.path, transcript),
            tmp_path / "data",
            path=f"{VENV_BIN}:{BARE_PATH}",
            HOME=str(home),
            CLAUDECODE="1",
            CLAUDE_CONFIG_DIR=str(folder),
        )

    stood_down = pre_compact(configured)
    assert "the plugin's stand down" in stood_down.stderr and index(project.path) == [], stood_down.stderr
    assert transcript_gen.saved_sequence(pre_compact(planted).stdout) == 1, "the project's folder is not read"
    elsewhere = tmp_path / "empty-config"
    elsewhere.mkdir()
    done = commands.precompact(tmp_path, "install", "--scope", "user", home=home)
    assert done.returncode == 0 and (home / ".claude" / "settings.json").is_file(), done.stderr
    assert transcript_gen.saved_sequence(pre_compact(elsewhere).stdout) == 2, "~/.claude's hooks do not run there"


def test_in_claude_codes_hook_another_agents_marker_or_an_unfollowed_folder_decides_no_stand_down(tmp_path, plugin):
    """The plugin's hooks are run by Claude Code alone (its launcher is their entry), so a marker
    of another agent a project's `env` adds there (GEMINI_CLI) does not turn the user's
    CLAUDE_CONFIG_DIR off; and where that folder is not known (an empty value: Claude Code then
    reads the directory it starts in), precompact's hooks left in ~/.claude do not make the
    plugin stand down: a stand-down is no savepoint, decided only by a file Claude Code reads."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    home, configured = tmp_path / "home", tmp_path / "claude-config"
    configured.mkdir()
    done = commands.precompact(tmp_path, "install", "--scope", "user", home=home)  # left from before the move
    assert done.returncode == 0 and (home / ".claude" / "settings.json").is_file(), done.stderr
    transcript = transcript_gen.generate(tmp_path / "t.jsonl").path

    def pre_compact(**env: str) -> subprocess.CompletedProcess:
        return launch(
            plugin,
            transcript_gen.payload("PreCompact", project.path, transcript),
            tmp_path / "data",
            path=f"{VENV_BIN}:{BARE_PATH}",
            HOME=str(home),
            CLAUDECODE="1",
            **env,
        )

    saved = pre_compact(CLAUDE_CONFIG_DIR=str(configured), GEMINI_CLI="1")
    assert transcript_gen.saved_sequence(saved.stdout) == 1, f"~/.claude's hooks do not run: {saved.stderr}"
    saved = pre_compact(CLAUDE_CONFIG_DIR="")
    assert transcript_gen.saved_sequence(saved.stdout) == 2, f"not known: no stand-down: {saved.stderr}"
    done = commands.precompact(
        tmp_path, "install", "--scope", "user", env={"CLAUDE_CONFIG_DIR": str(configured)}, home=home
    )
    assert done.returncode == 0 and (configured / "settings.json").is_file(), done.stderr
    stood_down = pre_compact(CLAUDE_CONFIG_DIR=str(configured), CODEX_THREAD_ID="t", OPENCODE="1")
    assert "the plugin's stand down" in stood_down.stderr, "saved once, by the hooks Claude Code runs"
    assert [e["event"] for e in index(project.path)].count("SAVEPOINT_CREATED") == 2


def test_an_instance_in_the_plugins_environment_is_not_the_savepoints(tmp_path, plugin):
    """docs/security.md: a hook's environment is the project's to set, and an instance is a root:
    the plugin has no `instance` option, and the variable does not reach a savepoint."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    transcript = transcript_gen.generate(tmp_path / "t.jsonl").path
    done = launch(
        plugin,
        transcript_gen.payload("PreCompact", project.path, transcript),
        tmp_path / "data",
        path=f"{VENV_BIN}:{BARE_PATH}",
        CLAUDE_PLUGIN_OPTION_INSTANCE="Plugin #7",
        PRECOMPACT_INSTANCE="Plugin #7",
    )
    assert transcript_gen.saved_sequence(done.stdout) == 1
    [created] = [e for e in index(project.path) if e["event"] == "SAVEPOINT_CREATED"]
    assert created["instance"] == "Trial #1"
    assert "PreCompact (notice): PRECOMPACT_INSTANCE ignored" in (project.logs / "precompact-errors.log").read_text()


def test_the_keypair_option_signs_where_the_approved_configuration_names_its_key_as_authority(tmp_path, plugin):
    """docs/setup.md: the `keypair` option reaches the hook and the worker as PRECOMPACT_KEYPAIR,
    and counts where the project's approved configuration names its key as chain.authority (a
    hook cannot tell the option from a variable the project set)."""
    from solders.keypair import Keypair

    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    option, key = tmp_path / "option-id.json", Keypair()
    option.write_text(json.dumps(list(bytes(key))))
    config = project.path / ".precompact.toml"
    config.write_text(config.read_text().replace("# authority = ", f'authority = "{key.pubkey()}"  # ', 1))
    assert commands.precompact(project.path, "trust", "--yes").returncode == 0
    transcript = transcript_gen.generate(tmp_path / "t.jsonl").path
    done = launch(
        plugin,
        transcript_gen.payload("PreCompact", project.path, transcript),
        tmp_path / "data",
        path=f"{VENV_BIN}:{BARE_PATH}",
        CLAUDE_PLUGIN_OPTION_KEYPAIR=str(option),
    )
    assert transcript_gen.saved_sequence(done.stdout) == 1, done.stderr
    wait_until(lambda: any(e["event"] == "SAVEPOINT_SIGNED" for e in index(project.path)), 120, "the signature")
    assert [e["signer"] for e in index(project.path) if e["event"] == "SAVEPOINT_SIGNED"] == [str(key.pubkey())]
    assert not (project.logs / "precompact-errors.log").exists()


def test_on_first_use_the_environment_is_prepared_and_the_first_compaction_is_not_lost(tmp_path, wheel_mirror, plugin):
    plugin_files = tree_digest(plugin)
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    data = tmp_path / "data"
    offline = {"PIP_FIND_LINKS": str(wheel_mirror), **OFFLINE}
    transcript = transcript_gen.generate(tmp_path / "t.jsonl", planted=["the first compaction's words"]).path
    began = time.monotonic()
    start = launch(
        plugin, transcript_gen.payload("SessionStart", project.path, transcript, source="startup"), data, **offline
    )
    assert json.loads(start.stdout) == {"systemMessage": f"precompact is {preparing(data, wheel_mirror)}."}
    pre = launch(plugin, transcript_gen.payload("PreCompact", project.path, transcript), data, **offline)
    assert pre.stdout.rstrip().endswith(
        "; this compaction's transcript is kept and saved as a savepoint as soon as it is ready."
    )
    assert len(list((data / "queue").iterdir())) == 1 and index(project.path) == []
    wait_until(
        lambda: (data / "venv" / precompact.__version__ / "ready").is_file() and not any((data / "queue").iterdir()),
        900,
        "the preparation",
    )
    prepared_in = time.monotonic() - began
    [created] = [e for e in index(project.path) if e["event"] == "SAVEPOINT_CREATED"]
    snapshot = full_document(
        (project.path / created["snapshot_file"])
        if (project.path / created["snapshot_file"]).exists()
        else (project.path / "logs" / "precompact-saves" / Path(created["snapshot_file"]).name)
    ).decode()
    assert "the first compaction's words" in snapshot
    wait_until(lambda: any(e["event"] == "LAYER_2_PUSHED" for e in index(project.path)), 120, "Layer 2's push")
    again = launch(plugin, transcript_gen.payload("PreCompact", project.path, transcript), data, **offline)
    assert transcript_gen.saved_sequence(again.stdout) == 2, "once prepared, the hook saves at once"
    assert tree_digest(plugin) == plugin_files, "nothing written into the plugin's folder"
    print(f"first-use preparation and replay: {prepared_in:.1f} s")


def test_a_prepared_environment_whose_python_is_gone_is_said_and_prepared_again(tmp_path, wheel_mirror, plugin):
    """review14b F13: the system python3.X the environment was made from upgraded away (its
    `bin/python` a link to nothing) while `ready` stays: a hook says so and has it prepared again,
    and a command says so in one line, never a traceback, prepares it and runs."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    data = tmp_path / "data"
    offline = {"PIP_FIND_LINKS": str(wheel_mirror), **OFFLINE}
    assert launch_command(plugin, data, "--version", **offline).returncode == 0
    venv = data / "venv" / precompact.__version__
    python = Path((venv / "bin" / "precompact").read_text().splitlines()[0].removeprefix("#!"))

    def python_gone() -> str:
        for link in (venv / "bin").glob("python*"):
            link.unlink()
        (venv / "bin" / "python").symlink_to(tmp_path / "python3.gone")
        fetched = preparing(data, wheel_mirror).split("(first use, about a minute: ", 1)[1]
        return f"precompact's Python environment in {venv} cannot start (its Python {python} is gone): preparing it again (about a minute: {fetched}"

    said = python_gone()
    transcript = transcript_gen.generate(tmp_path / "t.jsonl").path
    start = launch(
        plugin, transcript_gen.payload("SessionStart", project.path, transcript, source="resume"), data, **offline
    )
    assert (start.returncode, json.loads(start.stdout)) == (0, {"systemMessage": f"{said}."}), start.stderr
    wait_until(lambda: (venv / "ready").is_file() and os.access(python, os.X_OK), 900, "the preparation again")
    said = python_gone()
    used = launch_command(plugin, data, "--version", **offline)
    assert (used.returncode, used.stdout) == (0, f"precompact, version {precompact.__version__}\n"), used.stderr
    assert used.stderr == f"precompact: {said}\n", "one line, no traceback"


@pytest.mark.parametrize(
    "layout, start, found",
    [
        ({"repo/.git": "dir", "repo/.precompact.toml": "file", "repo/src/a": "dir"}, "repo/src/a", True),
        ({"repo/.git": "dir", "repo/src/.precompact.toml": "file", "repo/src/a": "dir"}, "repo/src/a", True),
        ({".precompact.toml": "file", "repo/.git": "dir", "repo/src": "dir"}, "repo/src", False),
        ({"repo/.git": "file", "repo/src": "dir"}, "repo/src", False),
        ({".precompact.toml": "file", "plain/deeper": "dir"}, "plain/deeper", True),
        ({"repo/.git": "dir", "repo/.precompact.toml": "link", "repo/src": "dir"}, "repo", True),
    ],
)
def test_the_launchers_quick_look_agrees_with_config_discover(tmp_path, layout, start, found):
    from precompact.config import settings as config
    from precompact.edges import launcher

    for name, kind in layout.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "dir":
            path.mkdir(parents=True, exist_ok=True)
        elif kind == "file":
            path.write_text("")
        else:
            path.symlink_to(tmp_path / "elsewhere.toml")
    try:
        config.discover(tmp_path / start)
        discovered = True
    except config.ConfigError:
        discovered = False
    assert launcher.configuration_above(str(tmp_path / start)) is discovered is found


def test_outside_a_hook_the_data_folder_is_the_one_claude_code_made(tmp_path):
    from precompact.edges.plugin_runtime import Launcher, LauncherError

    home = tmp_path / "home"
    data = home / ".claude" / "plugins" / "data"
    without = Launcher(REPO, {"HOME": str(home)})
    with pytest.raises(
        LauncherError,
        match=r"cannot tell which plugin data folder to use \(CLAUDE_PLUGIN_DATA is not set\); run this inside a Claude Code session",
    ):
        without.data()
    (data / "precompact-precompact").mkdir(parents=True)
    (data / "other-plugin-x").mkdir()
    assert without.data() == data / "precompact-precompact"
    assert (
        Launcher(REPO, {"HOME": str(home), "CLAUDE_PLUGIN_DATA": str(tmp_path / "given")}).data() == tmp_path / "given"
    )
    (data / "precompact-fork").mkdir()
    with pytest.raises(LauncherError):
        without.data()


def test_a_failed_preparation_is_recorded_whole_never_written_where_a_hook_reads_it(tmp_path, monkeypatch):
    """A hook reads prepare-failed's reason as soon as the file exists: one written in place was
    read empty in between (the slow tier's first-use test under -n 2, a message saying `()`)."""
    from precompact.edges.plugin_runtime import Launcher, LauncherError

    data = tmp_path / "data"
    data.mkdir()
    launcher = Launcher(REPO, {"HOME": str(tmp_path / "home"), "CLAUDE_PLUGIN_DATA": str(data)})
    (data / "prepare-failed").write_text("an earlier failure\n")
    os.link(data / "prepare-failed", tmp_path / "earlier")  # the earlier file's inode, as a reader holds it

    def fails() -> None:
        raise LauncherError("pip install failed: no wheel of x")

    monkeypatch.setattr(launcher, "prepare", fails)
    with pytest.raises(LauncherError):
        launcher.prepare_and_replay()
    assert (data / "prepare-failed").read_text() == "pip install failed: no wheel of x\n"
    assert (tmp_path / "earlier").read_text() == "an earlier failure\n", "renamed over, never truncated in place"


def test_plugin_options_are_overrides_a_variable_the_user_set_wins():
    from precompact.edges.plugin_runtime import Launcher

    env = Launcher(
        REPO,
        {
            "CLAUDE_PLUGIN_OPTION_CLUSTER": "https://rpc.example/?api-key=k",
            "CLAUDE_PLUGIN_OPTION_KEYPAIR": "/a/b.json",
            "PRECOMPACT_KEYPAIR": "/mine.json",
        },
    ).environment()
    assert env["PRECOMPACT_CLUSTER"] == "https://rpc.example/?api-key=k" and env["PRECOMPACT_KEYPAIR"] == "/mine.json"


def test_the_plugins_hooks_and_server_run_neither_a_python3_nor_a_pythonpath_the_project_names(tmp_path, plugin):
    """docs/security.md: the agent's environment is the project's to set. Its PATH names a
    `python3` the project ships (relative, and by absolute path), its PYTHONPATH the project's own
    `precompact` package and `sitecustomize`: the plugin's command lines, run as Claude Code runs
    them (`/bin/sh -c`), start none of them, and the hook and the server still work, through the
    precompact on PATH (started without the PYTHON* variables) and through the launcher alone."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    planted = "PWNED by the project"
    (project.path / "bin").mkdir()
    (project.path / "bin" / "python3").write_text(f"#!/bin/sh\necho '{planted}'\n")
    (project.path / "bin" / "python3").chmod(0o755)
    (project.path / "precompact" / "edges").mkdir(parents=True)
    for module in ("precompact/__init__.py", "precompact/edges/__init__.py"):
        (project.path / module).write_text("")
    for module in ("precompact/edges/command.py", "precompact/edges/launcher.py", "sitecustomize.py", "json.py"):
        (project.path / module).write_text(f"print({planted!r})\ndef main(*args):\n    print({planted!r})\n")
    hooks = json.loads((plugin / "hooks" / "hooks.json").read_text())["hooks"]
    [command] = {h["command"] for groups in hooks.values() for g in groups for h in g["hooks"]}
    server = json.loads((plugin / ".claude-plugin" / "plugin.json").read_text())["mcpServers"]["precompact"]
    transcript = transcript_gen.generate(tmp_path / "t.jsonl").path
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "agent", "version": "1"},
        },
    }

    def run(line: str, stdin: dict, path: str) -> subprocess.CompletedProcess:
        environment = {
            "PATH": path,
            "PYTHONPATH": ".",
            "HOME": os.environ["HOME"],
            "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
            "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"],
            "CLAUDE_PLUGIN_ROOT": str(plugin),
            "CLAUDE_PLUGIN_DATA": str(tmp_path / "data"),
        }
        done = subprocess.run(
            ["/bin/sh", "-c", line],
            input=json.dumps(stdin) + "\n",
            env=environment,
            cwd=project.path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert planted not in done.stdout + done.stderr, line
        assert done.returncode == 0, done.stderr
        return done

    planted_first = f"bin:{project.path / 'bin'}"
    saved = run(
        command,
        transcript_gen.payload("PreCompact", project.path, transcript),
        f"{planted_first}:{VENV_BIN}:{BARE_PATH}",
    )
    assert transcript_gen.saved_sequence(saved.stdout) == 1, "the precompact on PATH saved it"
    mcp = shlex.join(["sh", "-c", '"$CLAUDE_PLUGIN_ROOT/bin/precompact" "$@"', "-", *server["args"]])
    assert server["command"] == "${CLAUDE_PLUGIN_ROOT}/bin/precompact"
    answered = json.loads(run(mcp, initialize, f"{planted_first}:{VENV_BIN}:{BARE_PATH}").stdout)
    assert answered["result"]["serverInfo"]["name"] == "precompact", "the server answers"
    quiet = run(
        command, transcript_gen.payload("SessionStart", tmp_path, source="startup"), f"{planted_first}:{BARE_PATH}"
    )
    assert (quiet.stdout, quiet.stderr) == ("", ""), "the launcher alone, outside a precompact project: silent"
    assert not (tmp_path / "data").exists(), "nothing was prepared"


def test_the_launcher_outside_every_project_starts_a_python3_under_the_working_directory(tmp_path, plugin):
    """review6 F4: with no `.git` nor `.precompact.toml` above the working directory there is no
    project, so bin/precompact's shell part skips only relative PATH entries: a session started
    in the home, whose only python3 is pyenv's under it, runs precompact. In a git work tree a
    python3 under it is still skipped, with the one line."""
    home = tmp_path / "home"
    shims = home / ".pyenv" / "shims"
    shims.mkdir(parents=True)
    started = tmp_path / "started"
    (shims / "python3").write_text(
        f'#!/bin/sh\necho started >> {shlex.quote(str(started))}\nexec {shlex.quote(sys.executable)} "$@"\n'
    )
    (shims / "python3").chmod(0o755)
    (home / "relative").mkdir()
    (home / "relative" / "python3").write_text(f"#!/bin/sh\necho planted >> {shlex.quote(str(started))}\n")
    (home / "relative" / "python3").chmod(0o755)

    def launch_in(cwd: Path) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(plugin / "bin" / "precompact"), "status"],
            cwd=cwd,
            env={"PATH": f"relative:{shims}", "HOME": str(home)},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    for cwd in (home, shims):
        done = launch_in(cwd)
        assert done.returncode != 127 and "no python3 on PATH" not in done.stderr, done.stderr
    assert started.read_text() == "started\n" * 2, "the python3 under the working directory ran, a relative one never"
    (home / ".git").mkdir()
    done = launch_in(shims)
    assert done.returncode == 127, done.stderr
    assert f"precompact: no python3 on PATH outside the project ({home.resolve()}); install" in done.stderr
    assert started.read_text() == "started\n" * 2, "the python3 in the work tree did not run"


def as_user_with_home(home: Path, cwd: Path, command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """`command` run in `cwd` with `env` as this uid's login name with `home` as its home in the
    user database: in a user and mount namespace of the test's own (`unshare -Urm`), where a copy
    of /etc/passwd giving root that home is mounted over it (the name inside is root)."""
    passwd = cwd.parent / "passwd-for-the-test"
    passwd.write_text(f"root:x:0:0:root:{home}:/bin/sh\n")
    unshare, mount = shutil.which("unshare"), shutil.which("mount")
    assert unshare and mount
    script = 'mount --bind "$1" /etc/passwd && cd "$2" && shift 2 && exec env -i "$@"'
    given = [f"{name}={value}" for name, value in env.items()]
    return subprocess.run(
        [unshare, "-Urm", "/bin/sh", "-c", script, "sh", str(passwd), str(cwd), *given, *command],
        env={"PATH": str(Path(mount).parent)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_in_a_home_kept_in_git_the_launcher_starts_the_python3_under_it_and_never_one_of_a_project_there(
    tmp_path, plugin
):
    """A home kept in git (`~/.git`) is no project, as the Python side decides (user_roots):
    bin/precompact's shell part takes the python3 of the home's pyenv, asdf, mise, uv or conda
    (before, every hook there exited 127). The home is the user database's, not $HOME (here
    pointed at a folder of no concern). A project inside the home, with its own repository or
    only its .precompact.toml, still never has its python3 started."""
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-Urm", "true"], check=False).returncode != 0:
        pytest.skip("no user and mount namespace here (unshare -Urm) to give this uid another home")
    home = tmp_path / "home"
    started = tmp_path / "started"

    def python3_in(folder: Path, says: str) -> Path:
        folder.mkdir(parents=True)
        (folder / "python3").write_text(
            f'#!/bin/sh\necho {says} >> {shlex.quote(str(started))}\nexec {shlex.quote(sys.executable)} "$@"\n'
        )
        (folder / "python3").chmod(0o755)
        return folder

    shims = python3_in(home / ".pyenv" / "shims", "home")
    (home / ".git").mkdir()
    repository = home / "code" / "app"
    (repository / ".git").mkdir(parents=True)
    configured = home / "notes"
    configured.mkdir()
    (configured / ".precompact.toml").write_text('instance = "N #1"\n')
    elsewhere = tmp_path / "not-the-home"
    elsewhere.mkdir()

    def launch_in(cwd: Path, path: str) -> subprocess.CompletedProcess:
        command = [str(plugin / "bin" / "precompact"), "status"]
        return as_user_with_home(home, cwd, command, {"PATH": path, "HOME": str(elsewhere)})

    for cwd in (home, shims, home / "code"):
        done = launch_in(cwd, str(shims))
        assert done.returncode != 127 and "no python3 on PATH" not in done.stderr, (cwd, done.stderr)
    assert started.read_text() == "home\n" * 3, "the home's python3 ran each time"

    for project in (repository, configured):
        planted = python3_in(project / "bin", "planted")
        done = launch_in(project, f"{planted}:{shims}")
        assert done.returncode != 127, done.stderr
        assert started.read_text().endswith("home\n") and "planted" not in started.read_text(), project


def test_a_plugin_data_folder_or_claude_folder_in_the_project_is_refused_in_one_line(tmp_path, plugin):
    """The launcher runs the precompact prepared in its data folder: one the project's settings
    point into its own tree (relative, or inside it) is refused, and nothing is prepared there."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    planted = project.path / ".data"
    for name, value in (
        ("CLAUDE_PLUGIN_DATA", str(planted)),
        ("CLAUDE_PLUGIN_DATA", ".data"),
        ("CLAUDE_CONFIG_DIR", str(project.path / ".claude-config")),
    ):
        environment = {
            "PATH": BARE_PATH,
            "HOME": os.environ["HOME"],
            "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
            "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"],
            name: value,
        }
        done = subprocess.run(
            [str(plugin / "bin" / "precompact"), "plugin-hook"],
            input=json.dumps(transcript_gen.payload("SessionStart", project.path, source="startup")),
            env=environment,
            cwd=project.path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0 and done.stdout == "", done.stderr
        assert done.stderr.strip() == (
            f"precompact: {name} ({value}) is a relative path or a place in the project, whose settings can set it; "
            "set it to an absolute directory outside every project, or unset it"
        )
    assert not planted.exists() and not (project.path / ".claude-config").exists()
    outside = tmp_path / "data"
    kept = launch(plugin, transcript_gen.payload("PreCompact", project.path), outside, path=f"{VENV_BIN}:{BARE_PATH}")
    assert transcript_gen.saved_sequence(kept.stdout) == 1, "a data folder outside the project is the user's"


def test_the_preparation_runs_pip_in_the_agents_environment_confined_for_the_project(tmp_path):
    """pip (the plugin's preparation) gets no CA file, temporary directory or PATH entry the
    project's settings point into its own tree; the user's own places are kept."""
    from precompact.edges import plugin_runtime

    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    environ = {
        "HOME": str(tmp_path / "home"),
        "PATH": f"{project / 'bin'}:bin:/usr/bin",
        "REQUESTS_CA_BUNDLE": str(project / "ca.pem"),
        "SSL_CERT_FILE": "ca.pem",
        "TMPDIR": str(tmp_path / "tmp"),
        "PIP_INDEX_URL": "https://mirror.example/simple",
    }
    assert plugin_runtime.confined(environ, project / "sub") == {
        "HOME": str(tmp_path / "home"),
        "PATH": "/usr/bin",
        "TMPDIR": str(tmp_path / "tmp"),
        "PIP_INDEX_URL": "https://mirror.example/simple",
    }
    assert environ["SSL_CERT_FILE"] == "ca.pem", "a copy: the agent's environment, handed to precompact, is kept"


def test_a_home_the_projects_settings_point_into_it_does_not_choose_the_prepared_precompact(tmp_path, monkeypatch):
    """Claude Code's Bash tool sets no CLAUDE_PLUGIN_DATA: the launcher looks under HOME's
    `.claude`, with HOME confined as a hook's (relative, or in the project: the password
    database's home), so a precompact the project prepared under a home of its own never runs."""
    from precompact.boundary import user_roots
    from precompact.edges import plugin_runtime

    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    planted = project.path / "home" / ".claude" / "plugins" / "data" / "precompact-x"
    planted.mkdir(parents=True)
    real = tmp_path / "real-home"
    mine = real / ".claude" / "plugins" / "data" / "precompact-precompact"
    mine.mkdir(parents=True)
    monkeypatch.setattr(user_roots, "password_home", lambda: str(real))
    monkeypatch.chdir(project.path)
    for home in (str(project.path / "home"), "home"):
        launcher = plugin_runtime.Launcher(REPO, {"HOME": home, "PATH": BARE_PATH})
        assert launcher.data() == mine, home
    assert plugin_runtime.Launcher(REPO, {"HOME": str(real), "PATH": BARE_PATH}).data() == mine


def test_a_prepared_environment_whose_python_now_runs_another_version_is_prepared_again(tmp_path):
    """review15a F3: the plugin's environment's python3 link followed the system's to the next
    minor version, which starts and cannot import precompact: `broken` says so (it looked only
    for a Python gone), so the environment is prepared again instead of failing every hook."""
    from precompact.edges.plugin_runtime import Launcher

    other = another_python()
    if other is None:
        pytest.skip("no Python of another minor version on this machine")
    launcher = Launcher(REPO, {"HOME": str(tmp_path / "home"), "CLAUDE_PLUGIN_DATA": str(tmp_path / "data")})
    venv = launcher.venv()
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_bytes((Path(INSTALLED_PYTHON).parent.parent / "pyvenv.cfg").read_bytes())
    python = venv / "bin" / "python3"
    python.symlink_to(INSTALLED_PYTHON)
    (venv / "bin" / "precompact").write_text(f"#!{python}\nimport sys\n")
    (venv / "ready").write_text("")
    assert launcher.broken() is None and launcher.prepared() == venv / "bin" / "precompact"
    python.unlink()
    python.symlink_to(other)
    now = os.path.basename(os.path.realpath(other)).removeprefix("python")
    made_with = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert launcher.broken() == (
        f"precompact's Python environment in {venv} cannot start (its Python {python} now runs Python {now}, "
        f"not the {made_with} it was made with)"
    )
    assert launcher.prepared() is None, "prepared again"
