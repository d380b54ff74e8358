"""Owners of the boundary rules, kept by an AST walk over client/precompact: code that goes around
an owner fails here. One rule per function: a rule maps a module's syntax tree to the places
that break it; each rule is checked against the client and against a sample that breaks it (so
a rule that can no longer see anything fails too)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

CLIENT = Path(__file__).resolve().parents[2] / "client" / "precompact"
PROCESS_OWNER = "boundary/processes.py"
GIT_OWNERS = ("boundary/git_env.py", "remote/gitstore.py")

Rule = Callable[[ast.Module], list[str]]


def _dotted(node: ast.AST) -> str:
    """`a.b.c` for a name or an attribute chain, "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def imports_subprocess(tree: ast.Module) -> list[str]:
    """Importing `subprocess` (or `multiprocessing`, `pty`): only the process owner starts processes."""
    starters = {"subprocess", "multiprocessing", "pty"}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name.split(".")[0] in starters]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in starters:
            found.append(f"line {node.lineno}: from {node.module} import ...")
    return found


OS_STARTERS = ("exec", "spawn", "posix_spawn", "fork", "system", "popen")


def starts_a_process_through_os(tree: ast.Module) -> list[str]:
    """`os.exec*`, `os.spawn*`, `os.posix_spawn*`, `os.fork*`, `os.system`, `os.popen`, or one of
    them imported by name from os."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _dotted(node.value) == "os" and node.attr.startswith(OS_STARTERS):
            found.append(f"line {node.lineno}: os.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [
                f"line {node.lineno}: from os import {a.name}" for a in node.names if a.name.startswith(OS_STARTERS)
            ]
    return found


def runs_git_around_its_owner(tree: ast.Module) -> list[str]:
    """GitPython's command execution (`git.Repo(...)`, `git.Git(...)`, `Repo.init`/`clone_from`,
    `<repo>.git.<command>(...)`) or processes.run_git: git runs only through gitstore's isolated
    runner and git_env."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "git":
            found.append(f"line {node.lineno}: from {node.module} import ...")
        if not isinstance(node, ast.Call):
            continue
        called = _dotted(node.func)
        parts = called.split(".")
        if (
            called.startswith(("git.Repo", "git.Git", "git.cmd"))
            or (len(parts) >= 3 and parts[-2] == "git")
            or parts[-1] == "run_git"
        ):
            found.append(f"line {node.lineno}: {called}(...)")
    return found


# Calls that open a file by path: builtin open, os.open, and Path's open/read/write methods.
PATH_METHODS = {"open", "read_text", "read_bytes", "write_text", "write_bytes"}
# Names that stand for a place under logs/: the directory itself, the index's name for a
# snapshot, and the constants naming its files and subdirectories.
LOGS_MARKERS = ("logs", "snapshot_file", "saves_dir", "chunks_dir", "index_name", "lock_name")
LOGS_OWNERS = ("boundary/logs_dir.py", "boundary/atomic_file.py")
# chunks.py's writer opens, relative to a logs/ descriptor logs_dir handed out, only files it
# has just created itself (O_EXCL) or renamed into place: nothing the repository put there.
LOGS_OPENS_ALLOWED_IN = {"_write_unsynced", "_sync"}


def _mentions_logs(node: ast.AST) -> bool:
    """Whether the expression names a place under logs/ (a variable, attribute or string
    holding one of LOGS_MARKERS)."""
    for part in ast.walk(node):
        if isinstance(part, ast.Name):
            text = part.id
        elif isinstance(part, ast.Attribute):
            text = part.attr
        elif isinstance(part, ast.Constant) and isinstance(part.value, str):
            text = part.value
        else:
            continue
        if any(marker in text.lower() for marker in LOGS_MARKERS):
            return True
    return False


def opens_a_file_under_logs(tree: ast.Module) -> list[str]:
    """`open`, `os.open` or a Path's open/read/write of a path under logs/ (named so, or relative
    to a directory descriptor, which only logs_dir hands out): only logs_dir opens files there,
    refusing links, FIFOs, sockets, devices and files over its size cap without blocking."""
    found = []
    for function in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        if function.name in LOGS_OPENS_ALLOWED_IN:
            continue
        for call in [n for n in ast.walk(function) if isinstance(n, ast.Call)]:
            called = _dotted(call.func)
            if called in ("open", "os.open"):
                path = call.args[0] if call.args else None
            elif (
                isinstance(call.func, ast.Attribute)
                and call.func.attr in PATH_METHODS
                and called.split(".")[0] != "logs_dir"
            ):
                path = call.func.value
            else:
                continue
            relative = any(keyword.arg == "dir_fd" for keyword in call.keywords)
            if relative or (path is not None and _mentions_logs(path)):
                found.append(f"line {call.lineno} in {function.name}: {ast.unparse(call)[:80]}")
    return found


# The index's owner: only it reads an index line by key. Its record is typed (Savepoint,
# IndexRead); elsewhere a line is never a dict. Keys that only index lines have (no snapshot,
# bundle, record or hook payload uses them), the raw line (`<savepoint>.created`) and the raw
# event list (`<index>.events`) are what the rule looks for, so a read by any of these names
# anywhere else is caught however the dict reached it.
INDEX_OWNERS = ("local/savepoint_log.py",)
INDEX_ONLY_KEYS = {
    "event",
    "snapshot_file",
    "unix_timestamp",
    "snapshot_size_bytes",
    "tokens_used_this_session",
    "tokens_remaining",
    "context_utilization_percent",
    "layer_1_status",
    "layer_2_status",
    "layer_3_status",
    "from_instance",
    "from_sequence",
    "machine_tag",
}


def reads_the_index_by_key(tree: ast.Module) -> list[str]:
    """An index line read by string key (`x["snapshot_file"]`, `x.get("event")`, any key of
    `<savepoint>.created`), or the raw event list `<index>.events`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "events":
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
            continue
        if isinstance(node, ast.Subscript):
            owner, key = node.value, node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
        ):
            owner, key = node.func.value, node.args[0]
        else:
            continue
        raw_line = isinstance(owner, ast.Attribute) and owner.attr == "created"
        if raw_line or (isinstance(key, ast.Constant) and key.value in INDEX_ONLY_KEYS):
            found.append(f"line {node.lineno}: {ast.unparse(node)[:80]}")
    return found


RULES: dict[str, tuple[Rule, tuple[str, ...], str]] = {
    # rule: (check, the modules allowed to do it, a sample that breaks it)
    "imports_subprocess": (imports_subprocess, (PROCESS_OWNER,), "import subprocess\n"),
    "starts_a_process_through_os": (
        starts_a_process_through_os,
        (PROCESS_OWNER,),
        "import os\nos.execve('/bin/sh', ['sh'], {})\n",
    ),
    "runs_git_around_its_owner": (
        runs_git_around_its_owner,
        (*GIT_OWNERS, PROCESS_OWNER),
        "import git\ngit.Repo('.').git.status()\n",
    ),
    "opens_a_file_under_logs": (
        opens_a_file_under_logs,
        LOGS_OWNERS,
        "import os\ndef read(config):\n    return open(config.logs / 'precompact-savepoint.jsonl').read()\n",
    ),
    # provenance computes a line's tag over the line itself (by the names it lists, no literal key).
    "reads_the_index_by_key": (
        reads_the_index_by_key,
        (*INDEX_OWNERS, "local/provenance.py"),
        "def name(savepoint):\n    return savepoint.created.get('snapshot_file')\n",
    ),
}


def modules() -> dict[str, ast.Module]:
    return {
        str(path.relative_to(CLIENT)): ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for path in sorted(CLIENT.rglob("*.py"))
    }


@pytest.mark.parametrize("name", RULES)
def test_no_module_goes_around_an_owner(name):
    check, owners, _ = RULES[name]
    broken = {module: found for module, tree in modules().items() if module not in owners and (found := check(tree))}
    assert not broken, f"{name}: {broken}"


@pytest.mark.parametrize("name", RULES)
def test_each_rule_sees_a_module_that_breaks_it(name):
    check, _, sample = RULES[name]
    assert check(ast.parse(sample))


def test_the_owners_exist():
    """A rule whose owner moved without it would allow nothing and everything at once."""
    for _, owners, _ in RULES.values():
        for owner in owners:
            assert (CLIENT / owner).is_file(), owner


def test_every_git_process_goes_through_git_env_and_the_rest_through_processes():
    """The owners themselves: git_env runs git only through processes.run_git, and gitstore's
    GitPython runner builds git_env's command line and environment for every command."""
    git_env = (CLIENT / "boundary" / "git_env.py").read_text()
    assert "processes.run_git(" in git_env and "subprocess" not in git_env
    gitstore = modules()["remote/gitstore.py"]
    runner = next(n for n in ast.walk(gitstore) if isinstance(n, ast.ClassDef) and n.name == "_IsolatedGit")
    calls = {_dotted(n.func) for n in ast.walk(runner) if isinstance(n, ast.Call)}
    assert {"git_env.environment", "git_env.argv"} <= calls


def test_the_logs_rule_sees_each_way_around_its_owner():
    """Each kind of open the logs rule forbids is reported, and an open of another path is not."""
    sample = ast.parse(
        "import os\n"
        "def a(config):\n    return open(config.logs / 'precompact-savepoint.jsonl').read()\n"
        "def b(root):\n    return (root / 'logs' / 'x').read_bytes()\n"
        "def c(dir_fd):\n    return os.open('snapshot.json', os.O_RDONLY, dir_fd=dir_fd)\n"
        "def d(logs):\n    return os.open(logs / 'index', os.O_RDONLY)\n"
        "def e(config, savepoint):\n    return (config.root / savepoint.created['snapshot_file']).read_bytes()\n"
        "def f(path):\n    return open(path).read()\n"
    )
    found = opens_a_file_under_logs(sample)
    assert [line.split(" in ")[1].split(":")[0] for line in found] == ["a", "b", "c", "d", "e"]


def test_the_index_rule_sees_each_way_around_its_owner():
    """Each form of a raw index read is reported; a typed property and another document's key
    are not."""
    sample = ast.parse(
        "def a(s):\n    return s.created['trigger']\n"
        "def b(s):\n    return s.created.get('anything')\n"
        "def c(event):\n    return event.get('snapshot_file')\n"
        "def d(e):\n    return e['event']\n"
        "def e(index):\n    return [x for x in index.events]\n"
        "def f(s, document, link):\n    return s.snapshot_file, document.get('lineage'), link['snapshot_hash']\n"
    )
    found = [int(line.split()[1].rstrip(":")) for line in reads_the_index_by_key(sample)]
    assert found == [2, 4, 6, 8, 10]
