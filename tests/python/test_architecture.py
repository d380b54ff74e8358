"""Owners of the boundary rules, kept by an AST walk over client/precompact: code that goes around
an owner fails here. One rule per function: a rule maps a module's syntax tree to the places
that break it; each rule is checked against the client and against a sample that breaks it (so
a rule that can no longer see anything fails too)."""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType

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


# Modules whose business is starting processes: `webbrowser` starts the user's browser.
PROCESS_MODULES = {"subprocess", "multiprocessing", "pty", "webbrowser"}


def imports_a_process_module(tree: ast.Module) -> list[str]:
    """Importing one of PROCESS_MODULES: only the process owner starts processes."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [
                f"line {node.lineno}: import {a.name}" for a in node.names if a.name.split(".")[0] in PROCESS_MODULES
            ]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in PROCESS_MODULES:
            found.append(f"line {node.lineno}: from {node.module} import ...")
    return found


OS_STARTERS = ("exec", "spawn", "posix_spawn", "fork", "system", "popen", "startfile")


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


# Process starters reached through a module that may be imported anywhere: asyncio's functions
# and event loop methods, and concurrent.futures' process pool.
STARTER_NAMES = {
    "create_subprocess_exec",
    "create_subprocess_shell",
    "subprocess_exec",
    "subprocess_shell",
    "ProcessPoolExecutor",
}


def starts_a_process_through_another_module(tree: ast.Module) -> list[str]:
    """One of STARTER_NAMES, as an attribute of anything or imported by name."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in STARTER_NAMES:
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom):
            found += [
                f"line {node.lineno}: from {node.module} import {a.name}" for a in node.names if a.name in STARTER_NAMES
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


# processes' starters other than run_git: each runs whatever program it is given.
OTHER_STARTERS = ("run_program", "replace_with", "spawn_python", "run_python", "Popen", "run")


def _names_git(node: ast.AST) -> bool:
    """A string that names the git program ("git", ".../git") or `which("git")`, anywhere in
    `node`."""
    return any(
        (isinstance(inner, ast.Constant) and isinstance(inner.value, str) and inner.value.rsplit("/", 1)[-1] == "git")
        for inner in ast.walk(node)
    )


def starts_git_another_way(tree: ast.Module) -> list[str]:
    """git started without git_env's guard (issue #48: doctor's ls-remote and dry-run push once
    ran git with the project's `receivepack`): a process starter given a command that names git,
    git_env's command line or environment (`argv`, `environment`) taken to run it elsewhere, or
    GitPython imported (its import runs `git version`, and every Repo it makes runs git with
    os.environ unless gitstore's isolated runner is its command wrapper; a type-only import,
    under `if TYPE_CHECKING:`, runs nothing)."""
    type_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and _dotted(node.test).endswith("TYPE_CHECKING")
        for inner in ast.walk(node)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and id(node) not in type_only:
            found += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name.split(".")[0] == "git"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").endswith("git_env"):
            found += [
                f"line {node.lineno}: from git_env import {a.name}"
                for a in node.names
                if a.name in ("argv", "environment")
            ]
        elif isinstance(node, ast.Call):
            called = _dotted(node.func)
            if called.endswith(("git_env.argv", "git_env.environment")):
                found.append(f"line {node.lineno}: {called}(...)")
            elif called.split(".")[-1] in OTHER_STARTERS and node.args and _names_git(node.args[0]):
                found.append(f"line {node.lineno}: {called}(<a command naming git>)")
    return found


# git commands that talk to a remote: the remote's URL, and the project's settings for it
# (`remote.<name>.receivepack`/`uploadpack`, `url.*.insteadOf`, `http.*`), are git_env.transport's.
REMOTE_COMMANDS = {"push", "fetch", "ls-remote", "ls_remote", "pull", "clone", "archive", "remote"}


def talks_to_a_remote_outside_transport(tree: ast.Module) -> list[str]:
    """A git command that reaches a remote run any way but `git_env.transport`: `git_env.run`
    with `ls-remote` or `push --dry-run` (how doctor once ran them, reading the project's
    `receivepack`), or GitPython's `repo.git.push(...)`, `repo.remote().fetch()`."""
    # The strings each name may hold, from its assignments (`args = ("push", ...) if ... else
    # ("ls-remote", ...)`, then `git_env.run(repository, *args)`).
    held: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            strings = {
                c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)
            }
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        held.setdefault(name.id, set()).update(strings)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        called = _dotted(node.func)
        if called.endswith("transport"):
            continue
        method = called.split(".")[-1]
        words = {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
        for argument in node.args:
            if isinstance(argument, ast.Starred) and isinstance(argument.value, ast.Name):
                words |= held.get(argument.value.id, set())
        if (method in ("run", "run_git", "execute") and words & REMOTE_COMMANDS) or (
            ".git." in f".{called}" and method in REMOTE_COMMANDS
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
    "line_signature",
}


def reads_the_index_by_key(tree: ast.Module) -> list[str]:
    """An index line read by string key (`x["snapshot_file"]`, `x.get("event")`, any key of
    `<savepoint>.created`), or the raw event list `<index>.events`."""
    found = [
        f"line {node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "events"
    ]
    for node, owner, key in _keyed_reads(tree):
        raw_line = isinstance(owner, ast.Attribute) and owner.attr == "created"
        if raw_line or (isinstance(key, ast.Constant) and key.value in INDEX_ONLY_KEYS):
            found.append(f"line {node.lineno}: {ast.unparse(node)[:80]}")
    return found


def _keyed_reads(tree: ast.AST) -> Iterator[tuple[ast.AST, ast.expr, ast.expr]]:
    """Each read by key in `tree`, `x[key]` or `x.get(key, ...)`: (the read, x, key)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            yield node, node.value, node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
        ):
            yield node, node.func.value, node.args[0]


# The owner of private files: only boundary/private_file makes a file only this user may read
# (0600 from its first instant, its new directories 0700, fsynced, never through a link, whole
# or not at all, kept unless replaced on purpose). logs_dir makes logs/ and its files the same
# way, atomic_file is what both write through. Elsewhere a file is not created by os.open, no
# mode is set by chmod, no private mode is handed to any call, and no file named for a key is
# opened for writing. An open relative to a directory descriptor is under logs/, whose owner
# is logs_dir (the logs rule holds those opens to it).
PRIVATE_OWNERS = ("boundary/private_file.py", "boundary/atomic_file.py", "boundary/logs_dir.py")
PRIVATE_MODES = {0o600, 0o700}
CHMODS = {"chmod", "fchmod", "lchmod"}
SECRET_MARKERS = ("key", "identity", "secret", "token", "credential")
WRITE_METHODS = {"write_text", "write_bytes"}


def _writes(call: ast.Call, mode_at: int) -> bool:
    """Whether the open's mode (positional `mode_at`, or `mode=`) writes."""
    modes = [k.value for k in call.keywords if k.arg == "mode"]
    if len(call.args) > mode_at:
        modes.append(call.args[mode_at])
    return any(isinstance(m, ast.Constant) and isinstance(m.value, str) and set(m.value) & set("wax+") for m in modes)


def _names_a_secret(node: ast.AST) -> bool:
    for part in ast.walk(node):
        text = part.id if isinstance(part, ast.Name) else part.attr if isinstance(part, ast.Attribute) else None
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            text = part.value
        if text and any(marker in text.lower() for marker in SECRET_MARKERS):
            return True
    return False


def makes_a_private_file_by_hand(tree: ast.Module) -> list[str]:
    """`os.open` with O_CREAT, a chmod of any kind, a private mode (0o600, 0o700) given to any
    call, or a path named for a key (key, identity, secret, token, credential) opened or written
    for writing; calls relative to a directory descriptor (`dir_fd=`) excepted."""
    found = []
    for call in [n for n in ast.walk(tree) if isinstance(n, ast.Call)]:
        if any(k.arg == "dir_fd" for k in call.keywords):
            continue
        called = _dotted(call.func)
        method = call.func.attr if isinstance(call.func, ast.Attribute) else called
        arguments = [*call.args, *(k.value for k in call.keywords)]
        creates = called == "os.open" and any(
            isinstance(n, ast.Attribute | ast.Name) and "O_CREAT" in (getattr(n, "attr", None), getattr(n, "id", None))
            for a in call.args[1:2]
            for n in ast.walk(a)
        )
        private_mode = any(isinstance(a, ast.Constant) and a.value in PRIVATE_MODES for a in arguments)
        if called == "open":
            secret_write = bool(call.args) and _writes(call, 1) and _names_a_secret(call.args[0])
        elif isinstance(call.func, ast.Attribute) and method == "open":
            secret_write = _writes(call, 0) and _names_a_secret(call.func.value)
        else:
            secret_write = method in WRITE_METHODS and _names_a_secret(call.func)
        if creates or private_mode or method in CHMODS or secret_write:
            found.append(f"line {call.lineno}: {ast.unparse(call)[:80]}")
    return found


# The snapshot document's reader: Layer 1 writes a snapshot and is the only code that reads one
# by key; elsewhere it is local/snapshot.py's typed Document (`SnapshotReader.document`, and a
# resurrection's `.document`), whose fields are checked for their type once. Keys only snapshot
# documents have (no index line, bundle, record, setting, hook payload or transcript entry uses
# them: `session_state` is a setting too, `tokens` a Gemini message's, `sequence` a bundle's),
# and any key of a reader's raw `<x>.fields` or of `<x>.document`, are what the rule looks for.
SNAPSHOT_READERS = tuple(f"local/{p.name}" for p in sorted((CLIENT / "local").glob("*.py")))
SNAPSHOT_ONLY_KEYS = {
    "conversation_history",
    "conversation_chunks",
    "loaded_files",
    "git_state",
    "lineage",
    "previous",
    "instance_id_sha256",
    "instance_number",
    "timestamp_iso8601",
    "format_version",
    "nonce",
    "redaction",
    "transcript",
    "session",
    "content_chunk",
    "hashed_bytes",
    "outside_project",
}


def reads_a_snapshot_by_key(tree: ast.Module) -> list[str]:
    """A snapshot document read by string key: a key only snapshot documents have
    (`x.get("loaded_files")`), or any key of `<x>.fields` or `<x>.document`."""
    found = []
    for node, owner, key in _keyed_reads(tree):
        raw = isinstance(owner, ast.Attribute) and owner.attr in ("fields", "document")
        if raw or (isinstance(key, ast.Constant) and key.value in SNAPSHOT_ONLY_KEYS):
            found.append(f"line {node.lineno}: {ast.unparse(node)[:80]}")
    return found


# --- Verdicts ----------------------------------------------------------------------------------
# A verdict (verified, not verified, pending, not on the remote, failed, off) is decided in
# verifier/ and only rendered elsewhere: outside it a verdict's status may be compared with, never
# given to anything, and no verdict type is constructed.
VERDICT_OWNERS = (
    "verifier/verdicts.py",
    "verifier/verify.py",
    "verifier/savepoint.py",
    "verifier/signed.py",
    "verifier/team.py",
)
VERDICT_MODULES = {"precompact.verifier.verdicts", "precompact.restore.resurrect"}
VERDICT_STATUSES = {"VERIFIED", "NOT_VERIFIED", "PENDING", "NOT_ON_REMOTE", "FAILED", "OFF"}
VERDICT_TYPES = {"Check", "ChainRead"}
VERDICT_WORDS = {"verified", "not verified", "pending", "not on the remote"}


def produces_a_verdict(tree: ast.Module) -> list[str]:
    """A verdict type constructed, a status constant of the verifier's used other than in a
    comparison, or a status word handed to a call, in a module that is not the verifier's."""
    modules, names = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name in VERDICT_MODULES}
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                if f"{node.module}.{a.name}" in VERDICT_MODULES:
                    modules.add(a.asname or a.name)
                elif node.module in VERDICT_MODULES and a.name in VERDICT_STATUSES | VERDICT_TYPES:
                    names.add(a.asname or a.name)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def compared(node: ast.AST) -> bool:
        while node in parents:
            node = parents[node]
            if isinstance(node, ast.Compare):
                return True
        return False

    def verdict_name(node: ast.AST, kinds: set[str]) -> bool:
        if isinstance(node, ast.Name):
            return node.id in names and node.id in kinds
        return (
            isinstance(node, ast.Attribute)
            and node.attr in kinds
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        )

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and verdict_name(node.func, VERDICT_TYPES):
            found.append(f"line {node.lineno}: {ast.unparse(node)[:80]}")
        elif isinstance(node, ast.Name | ast.Attribute) and verdict_name(node, VERDICT_STATUSES) and not compared(node):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Call):
            given = [*node.args, *(k.value for k in node.keywords)]
            found += [
                f"line {node.lineno}: {a.value!r}"
                for a in given
                if isinstance(a, ast.Constant) and a.value in VERDICT_WORDS
            ]
    return found


# The user's signature over an index line (the root that travels) is made and checked in one
# place: a second signer or checker could sign another message or accept another key.
SIGNATURE_OWNER = "verifier/signed.py"
# Redaction derives a public key from 32 bytes to recognise a Solana secret key in tool output;
# it neither signs nor checks a signature.
# The owner of opening a file precompact was told to read (a keypair, an age identity, this
# machine's key, a `.precompact.toml`, an approval record; an agent's settings through
# config/agent_settings, a session file through boundary/session_file, each held to it below):
# boundary/small_file opens it without blocking (a FIFO there hung the hook and the worker,
# holding its locks), refuses a link where the caller's rule does, checks the open descriptor is
# a regular file the kernel does not make up, and caps the read.
# Elsewhere no path named for one, and no path at all in a function or class named for one, is
# opened or read (`open`, `os.open`, `Path.open`, `read_text`, `read_bytes`); an open relative to
# a directory descriptor, and logs_dir's own reads, are under logs/, whose owner is logs_dir.
SMALL_FILE_OWNER = "boundary/small_file.py"
TOLD_FILE_MARKERS = (*SECRET_MARKERS, "approv", "_record", "config_name", ".precompact.toml")
_PATH_READERS = {"read_text", "read_bytes", "open"}
# A function or class named for such a file reads it whatever its path is called (`path`).
TOLD_FILE_SCOPES = (*SECRET_MARKERS, "approv", "signer", "read_own", "trust")


def _names_a_told_file(node: ast.AST) -> bool:
    for part in ast.walk(node):
        text = part.id if isinstance(part, ast.Name) else part.attr if isinstance(part, ast.Attribute) else None
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            text = part.value
        if text and any(marker in text.lower() for marker in TOLD_FILE_MARKERS):
            return True
    return False


def reads_a_told_file_around_its_owner(tree: ast.Module) -> list[str]:
    """`open`, `os.open`, `io.open` of a path named for a key, identity, secret, token,
    credential, configuration or approval, or its `.open()`, `.read_text()`, `.read_bytes()`:
    each can block on a FIFO or read a device without end (boundary/small_file.py)."""
    found = []
    pending: list[tuple[ast.AST, bool]] = [(tree, False)]
    while pending:
        node, named = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            named = named or any(marker in node.name.lower() for marker in TOLD_FILE_SCOPES)
        pending.extend((child, named) for child in ast.iter_child_nodes(node))
        if not isinstance(node, ast.Call) or any(k.arg == "dir_fd" for k in node.keywords):
            continue
        called = _dotted(node.func)
        if called in ("open", "os.open", "io.open"):
            target = node.args[0] if node.args else None
        elif (
            isinstance(node.func, ast.Attribute) and node.func.attr in _PATH_READERS and called != "logs_dir.read_bytes"
        ):
            target = node.func.value
        else:
            continue
        if target is not None and (named or _names_a_told_file(target)):
            found.append(f"line {node.lineno}: {ast.unparse(node)[:80]}")
    return found


ED25519_USERS = (SIGNATURE_OWNER, "transcript/redact.py")
ED25519_MODULE = "cryptography.hazmat.primitives.asymmetric.ed25519"


def uses_ed25519_around_its_owner(tree: ast.Module) -> list[str]:
    """An import of cryptography's ed25519 (the index-line signature's primitive)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(ED25519_MODULE.rsplit(".", 1)[0]):
            if node.module == ED25519_MODULE or any(alias.name == "ed25519" for alias in node.names):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Import) and any(alias.name.startswith(ED25519_MODULE) for alias in node.names):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


TERMINAL_OWNER = "boundary/terminal.py"
# What writes to stdout or stderr other than through the terminal's owner.
_CLICK_WRITERS = {"echo", "secho", "get_text_stream", "get_binary_stream", "echo_via_pager"}
_STANDARD_STREAMS = {"sys.stdout", "sys.stderr", "sys.__stdout__", "sys.__stderr__"}
_STREAM_WRITES = {"write", "writelines", "buffer"}


def writes_to_the_terminal_around_its_owner(tree: ast.Module) -> list[str]:
    """`print`, click's echo, secho or streams, a write on `sys.stdout`/`sys.stderr` (or their
    buffers), `os.write` to descriptor 1 or 2, or the streams imported by name: outside text would
    reach the terminal unsanitised (boundary/terminal.py)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            fd = node.args[0] if node.args else None
            if name == "print" or (name.startswith("click.") and name.split(".", 1)[1] in _CLICK_WRITERS):
                found.append(f"line {node.lineno}: {name}(...)")
            elif name == "os.write" and isinstance(fd, ast.Constant) and fd.value in (1, 2):
                found.append(f"line {node.lineno}: os.write({fd.value}, ...)")
        elif isinstance(node, ast.Attribute) and node.attr in _STREAM_WRITES:
            if _dotted(node.value) in _STANDARD_STREAMS:
                found.append(f"line {node.lineno}: {_dotted(node)}")
        elif isinstance(node, ast.ImportFrom) and node.module in ("click", "sys"):
            taken = _CLICK_WRITERS if node.module == "click" else {"stdout", "stderr", "__stdout__", "__stderr__"}
            found += [f"line {node.lineno}: from {node.module} import {a.name}" for a in node.names if a.name in taken]
    return found


# `terminal.answer` writes as given: only for the hook's reply to the agent program that ran it.
AGENT_ANSWERERS = ("edges/hook.py", "edges/launcher.py")


def answers_an_agent_outside_the_hook(tree: ast.Module) -> list[str]:
    """`terminal.answer(...)` (the unsanitised write) outside the hook's reply."""
    return [
        f"line {node.lineno}: {ast.unparse(node)[:60]}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _dotted(node.func).endswith("terminal.answer")
    ]


# Talking to a remote (push, fetch, ls-remote) goes to the one URL Layer 2 was given: git.url,
# or gitstore.remote_url's fallback for a configuration without it. The project's own URL for the
# remote is read only there, by doctor (to name a difference), by trust (where git.url is not
# recorded) and by init (which records it).
TRANSPORT_CALLERS = ("boundary/git_env.py", "remote/gitstore.py", "ops/doctor.py")
PROJECT_URL_READERS = (*TRANSPORT_CALLERS, "config/review.py", "ops/project_init.py")


def _calls_git_env(tree: ast.Module, function: str) -> list[str]:
    found = [
        f"line {node.lineno}: {ast.unparse(node)[:60]}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _dotted(node.func).endswith(f"git_env.{function}")
    ]
    found += [
        f"line {node.lineno}: from {node.module} import {function}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and (node.module or "").endswith("git_env")
        and any(a.name == function for a in node.names)
    ]
    return found


# A push never overwrites or deletes a ref on the remote (#47: a teammate's branch, or one's own
# history that a savepoint's commit names): no module may pass git an option that forces or
# deletes, nor push a refspec that does (`+src:dst`, `:dst`). A lost race is merged on top.
FORCING_OPTIONS = {"--force", "--force-with-lease", "--force-if-includes", "--mirror", "--prune", "--delete"}


def forces_a_push(tree: ast.Module) -> list[str]:
    """In a call that pushes (a "push" among its arguments): a forcing or deleting option, or a
    `+`/`:` refspec."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        arguments = [*node.args, *(k.value for k in node.keywords)]
        if not any(isinstance(a, ast.Constant) and a.value == "push" for a in arguments):
            continue
        for a in arguments:
            found += [
                f"line {node.lineno}: {c.value}"
                for c in ast.walk(a)
                if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value.split("=")[0] in FORCING_OPTIONS
            ]
            first = a.values[0] if isinstance(a, ast.JoinedStr) and a.values else a
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value[:1] in ("+", ":"):
                found.append(f"line {node.lineno}: {ast.unparse(a)[:60]}")
    return found


# Which key is an instance's own (#47: a teammate's savepoints are held to their key, never
# yours) is decided in one place, verifier/team.py (`own_key`), from the signers of its index
# lines; local/savepoint_log.py reads and writes those lines, verifier/signed.py checks one
# signature against a key it is given. Elsewhere a signer may be compared with a key, never taken
# as one.
KEY_CHOOSERS = ("verifier/team.py", "verifier/signed.py", "local/savepoint_log.py")


def chooses_an_instances_key(tree: ast.Module) -> list[str]:
    """A signer taken from an index line's signatures as a key: `x.signatures[i].signer`, or a
    comprehension over `*.signatures` that yields `<element>.signer`."""
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "signer"
            and isinstance(node.value, ast.Subscript)
            and isinstance(node.value.value, ast.Attribute)
            and node.value.value.attr == "signatures"
        ):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
        if isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
            over = [g for g in node.generators if isinstance(g.iter, ast.Attribute) and g.iter.attr == "signatures"]
            if over and isinstance(node.elt, ast.Attribute) and node.elt.attr == "signer":
                found.append(f"line {node.lineno}: {ast.unparse(node)[:60]}")
    return found


def talks_to_a_remote_around_its_owner(tree: ast.Module) -> list[str]:
    """`git_env.transport(...)`: a push, fetch or ls-remote whose URL did not come from git.url."""
    return _calls_git_env(tree, "transport")


def reads_the_projects_remote_url(tree: ast.Module) -> list[str]:
    """`git_env.remote_url(...)`: the URL the project's .git/config gives, which nobody approved."""
    return _calls_git_env(tree, "remote_url")


# Which file git reads to ignore a project's files depends on where git keeps it (a linked
# worktree's main repository, a submodule's directory under .git/modules): only git_exclude asks
# git and writes it, then checks what git ignores.
EXCLUDE_OWNER = "boundary/git_exclude.py"


def names_git_exclude_file(tree: ast.Module) -> list[str]:
    """A path to git's exclude file built by hand, which is wrong in a linked worktree and writes
    what nobody checks: the string "info/exclude" (or one ending in it), `... / "info" /
    "exclude"`, or "info", "exclude" among a call's arguments (os.path.join)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith("info/exclude"):
            found.append(f"line {node.lineno}: {node.value!r}")
        elif (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Div)
            and isinstance(node.right, ast.Constant)
            and node.right.value == "exclude"
            and isinstance(node.left, ast.BinOp)
            and isinstance(node.left.right, ast.Constant)
            and node.left.right.value == "info"
        ):
            found.append(f"line {node.lineno}: {ast.unparse(node)[:60]}")
        elif isinstance(node, ast.Call):
            words = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if any(words[i : i + 2] == ["info", "exclude"] for i in range(len(words))):
                found.append(f"line {node.lineno}: {ast.unparse(node)[:60]}")
    return found


# This machine's registry of the projects it archived (`precompact projects`, recall --everywhere)
# is read and written by one module: it alone knows the file's shape, its lock and that it is
# outside input, and `projects --forget` removes a project from the one place that names it.
REGISTRY_OWNER = "local/registry.py"
REGISTRY_FILES = ("registry.json", "registry.lock")


def names_the_project_registry(tree: ast.Module) -> list[str]:
    """The registry's file (its name, its lock's) or the user's data directory it is in (`.local
    / share`, XDG_DATA_HOME read from the environment) named outside its owner."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value.endswith(REGISTRY_FILES):
                found.append(f"line {node.lineno}: {node.value[:60]!r}")
        elif isinstance(node, ast.Call | ast.Subscript):
            given = [*node.args] if isinstance(node, ast.Call) else [node.slice]
            if any(isinstance(a, ast.Constant) and a.value == "XDG_DATA_HOME" for a in given):
                found.append(f"line {node.lineno}: {ast.unparse(node)[:60]}")
        elif (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Div)
            and isinstance(node.right, ast.Constant)
            and node.right.value == "share"
            and isinstance(node.left, ast.BinOp)
            and isinstance(node.left.right, ast.Constant)
            and node.left.right.value == ".local"
        ):
            found.append(f"line {node.lineno}: {ast.unparse(node)[:60]}")
    return found


# One chain per instance on this machine (ops/instance_collision owns the rule): each command that
# puts an instance to work on the user's word refuses first when another project here writes it to
# the same chain, before the step that does it: `init` before its configuration is written, `trust`
# before the approval, `projects --add` before the registration, `savepoint` and `import` (an
# instance --instance or PRECOMPACT_INSTANCE chose) before Layer 1 writes. Registering a project on
# the user's word (which clears a forgotten mark: its Layer 2 pushes again) is ops/project_init's
# alone, whose every way to it refuses first.
COLLISION_REFUSALS = ("instance_collision.refuse", "instance_collision.refuse_chosen", "api.refuse_shared_chain")
COLLISION_CHECKED = {
    ("ops/project_init.py", "init"): "write_config",
    ("ops/project_init.py", "add"): "registry.add",
    ("edges/cli.py", "trust"): "config_trust.approve",
    ("ops/compaction.py", "on_request"): "snapshot.create_savepoint",
    ("ops/importer.py", "run"): "_one",
}
REGISTERING_OWNER = "ops/project_init.py"


def registers_a_project_on_the_users_word(tree: ast.Module) -> list[str]:
    """`registry.add(...)` (or `add` imported from the registry): a project registered, its
    forgotten mark cleared, with no one to refuse another project's instance."""
    found = [
        f"line {node.lineno}: {ast.unparse(node)[:60]}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _dotted(node.func).endswith("registry.add")
    ]
    found += [
        f"line {node.lineno}: from {node.module} import add"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and (node.module or "").endswith("registry")
        and any(a.name == "add" for a in node.names)
    ]
    return found


def unrefused_steps(function: ast.FunctionDef, step: str) -> list[str]:
    """The calls of `step` in `function` that no call of a collision refusal (COLLISION_REFUSALS)
    comes before; all of them when `function` makes none, or makes no such step at all (the
    table names a step it no longer takes: the rule would check nothing)."""
    calls = sorted((n for n in ast.walk(function) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
    steps = [n for n in calls if _dotted(n.func) == step]
    if not steps:
        return [f"{function.name} calls no {step}"]
    refused = [n.lineno for n in calls if _dotted(n.func) in COLLISION_REFUSALS]
    return [
        f"line {n.lineno}: {ast.unparse(n)[:60]} with no refusal before it"
        for n in steps
        if not refused or min(refused) >= n.lineno
    ]


def test_each_command_putting_an_instance_to_work_refuses_a_shared_chain_first():
    trees = modules()
    broken = {}
    for (module, name), step in COLLISION_CHECKED.items():
        [function] = [n for n in trees[module].body if isinstance(n, ast.FunctionDef) and n.name == name]
        found = unrefused_steps(function, step)
        if found:
            broken[f"{module}:{name}"] = found
    assert not broken, broken


def test_the_shared_chain_rule_sees_a_step_before_its_refusal_and_one_with_none():
    sample = ast.parse(
        "def add(path):\n"
        "    loaded = configuration.load(path)\n"
        "    registry.add(loaded.root, loaded.instance)\n"
        "    instance_collision.refuse(loaded, 'projects --add')\n"
        "def run(loaded):\n"
        "    return [snapshot.create_savepoint(loaded, s) for s in enumerate(loaded)]\n"
        "def init(root, choices):\n"
        "    instance_collision.refuse(parsed(root), 'init')\n"
        "    return write_config(root)\n"
    )
    add, run, init = (n for n in sample.body if isinstance(n, ast.FunctionDef))
    assert unrefused_steps(add, "registry.add") == [
        "line 3: registry.add(loaded.root, loaded.instance) with no refusal before it"
    ]
    assert unrefused_steps(run, "enumerate") == ["line 6: enumerate(loaded) with no refusal before it"]
    assert unrefused_steps(init, "write_config") == []
    assert unrefused_steps(init, "registry.add") == ["init calls no registry.add"]


# precompact's user-level roots (the approvals' configuration home, its state, its data, and the
# HOME and XDG directories given to git and the worker) have one owner, which ignores a relative
# value and, in the modes the agent starts, one in the project (docs/security.md, "The agent's
# environment"): elsewhere no XDG base directory is read from an environment.
USER_ROOTS_OWNER = "boundary/user_roots.py"
XDG_BASES = ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR")


def reads_a_user_root(tree: ast.Module) -> list[str]:
    """An XDG base directory read from an environment (a call or a subscript given its name)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call | ast.Subscript):
            given = [*node.args] if isinstance(node, ast.Call) else [node.slice]
            if any(isinstance(a, ast.Constant) and a.value in XDG_BASES for a in given):
                found.append(f"line {node.lineno}: {ast.unparse(node)[:60]}")
    return found


# Claude Code's folder (its user folder: `~/.claude` or `$CLAUDE_CONFIG_DIR`; a project's
# `.claude/`) is named by one module, which alone decides where the user's is: a reader that
# joined `.claude` to the home itself would miss the folder Claude Code uses under
# CLAUDE_CONFIG_DIR (its settings, sessions and plugins), or follow a value no one checked.
CLAUDE_FOLDER_OWNER = "boundary/user_roots.py"


def _docstrings(tree: ast.Module) -> set[int]:
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def names_claudes_folder(tree: ast.Module) -> list[str]:
    """A string naming `.claude` as a path component (`".claude"`, `"~/.claude/projects"`, an
    f-string's `/.claude/` part); text with spaces (a docstring, a help line) names no path."""
    documentation = _docstrings(tree)
    return [
        f"line {node.lineno}: {node.value[:60]!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in documentation
        and not any(c.isspace() for c in node.value)
        and ".claude" in node.value.split("/")
    ]


# The lists of what compaction dropped the worker keeps (#41) are read and written by one module:
# it alone checks a kept list's stamp, its key against the savepoint now and its shape before
# anything shows it.
KEPT_DROPPED_OWNER = "restore/dropped_store.py"
KEPT_DROPPED_NAMES = ("precompact-dropped", "dropped-list")  # their folder in logs/, their stamp's purpose


def names_the_kept_dropped_lists(tree: ast.Module) -> list[str]:
    """The kept lists' folder or their stamp's purpose named outside their owner."""
    return [
        f"line {node.lineno}: {node.value[:60]!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and any(name in node.value for name in KEPT_DROPPED_NAMES)
    ]


# What a compacted session is still to be given (logs/precompact-pending/) is written, claimed and
# removed by one module, so an addendum is given once and only when this machine stamped it; the
# hook's entry only asks `discovery.something_pending`, with three stats.
PENDING_OWNERS = ("ops/addendum.py", "config/discovery.py")
PENDING_NAMES = ("PENDING_DIR", "READY_SUFFIX", "DELIVERING_SUFFIX", "AWAITING_SUFFIX")


def names_the_pending_addenda(tree: ast.Module) -> list[str]:
    """The pending files' folder or suffixes named outside their owners."""
    return [
        f"line {node.lineno}: {ast.unparse(node)[:60]}"
        for node in ast.walk(tree)
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and "precompact-pending" in node.value)
        or (isinstance(node, ast.Attribute) and node.attr in PENDING_NAMES)
        or (isinstance(node, ast.Name) and node.id in PENDING_NAMES)
    ]


# Git's answer that a project's logs/ is untracked is kept across processes by one module, under
# the identity of every file git answers from, which one function of git's owner computes: a
# second place keeping or trusting such an answer could skip the check on a changed repository.
UNTRACKED_OWNERS = ("boundary/logs_dir.py", "boundary/git_env.py")
UNTRACKED_NAMES = ("UNTRACKED_NAME", "index_identity", "_check_untracked")


def keeps_gits_answer_on_logs(tree: ast.Module) -> list[str]:
    """The kept answers' file, or the identity they are kept under, named outside their owners."""
    return [
        f"line {node.lineno}: {ast.unparse(node)[:60]}"
        for node in ast.walk(tree)
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and "untracked-logs" in node.value)
        or (isinstance(node, ast.Attribute) and node.attr in UNTRACKED_NAMES)
        or (isinstance(node, ast.Name) and node.id in UNTRACKED_NAMES)
    ]


# What a savepoint holds is read only once a root vouches for it (F7: `dropped`, `export`, the
# MCP `savepoints` tool and the viewer's savepoint page once served a logs/ that came with the
# project). A snapshot's bytes become a reader in the verifier, in `Resurrection` (whose
# `contents` makes the check every reader meets) and in recall (after `signed.local_document`);
# the reader a Resurrection holds is named only by its owner, and served unchecked only by
# `resurrect`'s report and JSON, which say NOT VERIFIED and exit non-zero.
SNAPSHOT_READER_MAKERS = ("local/snapshot.py", "verifier/verdicts.py", "restore/resurrect.py", "recall/fulltext.py")
READER_TYPES = ("SnapshotReader", "MappedHistory")
RESURRECTION_OWNER = "restore/resurrect.py"
AS_ASKED_READERS = ("restore/brief.py",)


def makes_a_snapshot_reader(tree: ast.Module) -> list[str]:
    """A snapshot's bytes made a reader (`SnapshotReader(...)`, `MappedHistory(...)`) outside
    the modules that check them against a root first."""
    return [
        f"line {node.lineno}: {ast.unparse(node)[:60]}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _dotted(node.func).rsplit(".", 1)[-1] in READER_TYPES
    ]


def reads_a_resurrection_around_its_check(tree: ast.Module) -> list[str]:
    """The reader a Resurrection holds named as `_contents`, past `contents` and its check."""
    return [
        f"line {node.lineno}: {ast.unparse(node)[:60]}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "_contents"
    ]


def serves_a_savepoint_unchecked(tree: ast.Module) -> list[str]:
    """`contents_as_asked()`: what a savepoint holds, whether or not a root vouches for it."""
    return [
        f"line {node.lineno}: {ast.unparse(node)[:60]}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "contents_as_asked"
    ]


# The RPC endpoint's URL holds a hosted endpoint's API key (`?api-key=...`, `/v2/<key>`): it is
# shown, logged or kept only in its shown form (config/endpoint.shown; a Cluster's `shown`), and
# the whole URL is read only by chain/rpc.Cluster, which connects with it.
ENDPOINT_OWNERS = ("config/endpoint.py", "chain/rpc.py")
ENDPOINT_VALUES = {"cluster", "_url"}


def _endpoint_value(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id in ENDPOINT_VALUES) or (
        isinstance(node, ast.Attribute) and node.attr in ENDPOINT_VALUES
    )


def shows_an_endpoint_whole(tree: ast.Module) -> list[str]:
    """A configured cluster URL (`cluster`, `<config>.cluster`) put into an f-string, a `%` or
    `.format` text, or a `+` of strings, and a Cluster's whole URL (`._url`) read at all."""
    found = []
    for node in ast.walk(tree):
        shown: list[ast.AST] = []
        if isinstance(node, ast.FormattedValue):
            shown = [node.value]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod | ast.Add):
            shown = [node.left, node.right, *(node.right.elts if isinstance(node.right, ast.Tuple) else [])]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
            shown = [*node.args, *(k.value for k in node.keywords)]
        elif isinstance(node, ast.Attribute) and node.attr == "_url":
            shown = [node]
        found += [f"line {node.lineno}: {ast.unparse(node)[:60]}" for value in shown if _endpoint_value(value)]
    return found


RULES: dict[str, tuple[Rule, tuple[str, ...], str]] = {
    # rule: (check, the modules allowed to do it, a sample that breaks it)
    "shows_an_endpoint_whole": (
        shows_an_endpoint_whole,
        ENDPOINT_OWNERS,
        (
            "from precompact.chain import rpc\ndef unreachable(config):\n"
            "    return f'no record on {config.cluster}', 'at ' + config.cluster, rpc.Cluster(config.cluster, 1)._url\n"
        ),
    ),
    "makes_a_snapshot_reader": (
        makes_a_snapshot_reader,
        SNAPSHOT_READER_MAKERS,
        (
            "from precompact.local import snapshot\nfrom precompact.boundary import logs_dir\n"
            "def requests(logs, name):\n    return snapshot.SnapshotReader(logs_dir.read_bytes(logs, name)).newest_entries()\n"
        ),
    ),
    "reads_a_resurrection_around_its_check": (
        reads_a_resurrection_around_its_check,
        (RESURRECTION_OWNER,),
        "def listed(found):\n    return [entry for _, entry in found._contents.located_entries()]\n",
    ),
    "serves_a_savepoint_unchecked": (
        serves_a_savepoint_unchecked,
        AS_ASKED_READERS,
        "def export(found):\n    return found.contents_as_asked().data\n",
    ),
    "names_the_kept_dropped_lists": (
        names_the_kept_dropped_lists,
        (KEPT_DROPPED_OWNER,),
        (
            "import json\nfrom precompact.boundary import logs_dir\n"
            "def listed(logs):\n    return json.loads(logs_dir.read_bytes(logs, 'precompact-dropped/1.json'))\n"
        ),
    ),
    "names_the_pending_addenda": (
        names_the_pending_addenda,
        PENDING_OWNERS,
        "from pathlib import Path\ndef forget(root, sid):\n    (Path(root) / 'logs/precompact-pending' / f'{sid}.json').unlink()\n",
    ),
    "names_the_project_registry": (
        names_the_project_registry,
        # transcript/opencode.py names the data directory for OpenCode's own database, not ours;
        # boundary/user_roots.py decides where the data directory is, and names no file in it.
        (REGISTRY_OWNER, USER_ROOTS_OWNER, "transcript/opencode.py"),
        "import json, os\ndef listed():\n    return json.load(open(os.environ['XDG_DATA_HOME'] + '/precompact/registry.json'))\n",
    ),
    "registers_a_project_on_the_users_word": (
        registers_a_project_on_the_users_word,
        (REGISTERING_OWNER,),
        "from precompact.local import registry\ndef add_again(loaded):\n    registry.add(loaded.root, loaded.instance)\n",
    ),
    "reads_a_user_root": (
        reads_a_user_root,
        # OpenCode's own database (transcript/opencode.py) and plugin folder (config/install.py,
        # which `precompact install` writes): the user's files for OpenCode, not precompact's roots.
        (USER_ROOTS_OWNER, "transcript/opencode.py", "config/install.py"),
        "import os\ndef store():\n    return os.environ.get('XDG_CONFIG_HOME', '') + '/precompact/trusted'\n",
    ),
    "names_git_exclude_file": (
        names_git_exclude_file,
        (EXCLUDE_OWNER,),
        "from pathlib import Path\ndef exclude(repo):\n    (Path(repo.git_dir) / 'info' / 'exclude').open('a').write('logs/')\n",
    ),
    "imports_a_process_module": (imports_a_process_module, (PROCESS_OWNER,), "import subprocess\n"),
    "starts_a_process_through_os": (
        starts_a_process_through_os,
        (PROCESS_OWNER,),
        "import os\nos.execve('/bin/sh', ['sh'], {})\n",
    ),
    "starts_a_process_through_another_module": (
        starts_a_process_through_another_module,
        (PROCESS_OWNER,),
        "import asyncio\nasyncio.run(asyncio.create_subprocess_exec('/bin/sh'))\n",
    ),
    "runs_git_around_its_owner": (
        runs_git_around_its_owner,
        (*GIT_OWNERS, PROCESS_OWNER),
        "import git\ngit.Repo('.').git.status()\n",
    ),
    "starts_git_another_way": (
        starts_git_another_way,
        GIT_OWNERS,
        (
            "from precompact.boundary import processes\n"
            "def remote_heads(url, env):\n"
            "    return processes.run_program(['/usr/bin/git', 'ls-remote', url], cwd=None, env=env)\n"
        ),
    ),
    "talks_to_a_remote_outside_transport": (
        talks_to_a_remote_outside_transport,
        ("boundary/git_env.py",),
        (
            "from precompact.boundary import git_env\n"
            "def remote(loaded):\n"
            "    return git_env.run(loaded.repository, 'ls-remote', '--heads', loaded.remote, timeout=10)\n"
        ),
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
    "reads_a_snapshot_by_key": (
        reads_a_snapshot_by_key,
        SNAPSHOT_READERS,
        "def files(found):\n    return found.document.get('loaded_files') or {}\n",
    ),
    "writes_to_the_terminal_around_its_owner": (
        writes_to_the_terminal_around_its_owner,
        (TERMINAL_OWNER,),
        "import click\ndef show(found):\n    click.echo(found.text())\n",
    ),
    "answers_an_agent_outside_the_hook": (
        answers_an_agent_outside_the_hook,
        AGENT_ANSWERERS,
        "from precompact.boundary import terminal\ndef show(found):\n    terminal.answer(found.text())\n",
    ),
    "makes_a_private_file_by_hand": (
        makes_a_private_file_by_hand,
        PRIVATE_OWNERS,
        "import os\ndef store(path, key):\n    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)\n",
    ),
    "produces_a_verdict": (
        produces_a_verdict,
        VERDICT_OWNERS,
        "from precompact.verifier import verdicts\ndef git(s):\n    return verdicts.Check(verdicts.VERIFIED, 'commit made here')\n",
    ),
    "talks_to_a_remote_around_its_owner": (
        talks_to_a_remote_around_its_owner,
        TRANSPORT_CALLERS,
        "from precompact.boundary import git_env\ndef push(objects, url):\n    git_env.transport(objects, 'sha1', 'push', url, timeout=5)\n",
    ),
    "forces_a_push": (
        forces_a_push,
        (),
        (
            "from precompact.boundary import git_env\ndef push(objects, url, commit, ref):\n"
            "    git_env.transport(objects, 'sha1', 'push', url, f'+{commit}:{ref}', timeout=5)\n"
            "    git_env.transport(objects, 'sha1', 'push', url, f'{commit}:{ref}', options=('--force',), timeout=5)\n"
        ),
    ),
    "chooses_an_instances_key": (
        chooses_an_instances_key,
        KEY_CHOOSERS,
        (
            "def key_of(savepoints):\n"
            "    first = savepoints[0].signatures[0].signer\n"
            "    return next(s.signer for s in savepoints[-1].signatures) or first\n"
        ),
    ),
    "reads_the_projects_remote_url": (
        reads_the_projects_remote_url,
        PROJECT_URL_READERS,
        "from precompact.boundary.git_env import remote_url\ndef where(config):\n    return remote_url(config.repository, config.remote)\n",
    ),
    "keeps_gits_answer_on_logs": (
        keeps_gits_answer_on_logs,
        UNTRACKED_OWNERS,
        (
            "from precompact.boundary import git_env\nKEPT = set()\ndef untracked(project):\n"
            "    return git_env.index_identity(project) in KEPT\n"
        ),
    ),
    "reads_a_told_file_around_its_owner": (
        reads_a_told_file_around_its_owner,
        (SMALL_FILE_OWNER,),
        "import json\ndef load_keypair(keypair_path):\n    return json.loads(keypair_path.read_text())\n",
    ),
    "names_claudes_folder": (
        names_claudes_folder,
        (CLAUDE_FOLDER_OWNER,),
        (
            "from pathlib import Path\n"
            "def transcripts(home):\n"
            '    """Under ~/.claude/projects, named in prose."""\n'
            "    return [Path(home) / '.claude' / 'projects', Path(f'{home}/.claude/projects')]\n"
        ),
    ),
    "uses_ed25519_around_its_owner": (
        uses_ed25519_around_its_owner,
        ED25519_USERS,
        (
            "def check(key, signature, data):\n"
            "    from cryptography.hazmat.primitives.asymmetric import ed25519\n"
            "    ed25519.Ed25519PublicKey.from_public_bytes(key).verify(signature, data)\n"
        ),
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


def test_the_terminal_rule_sees_each_way_around_its_owner():
    """Each way of writing to stdout or stderr by hand is reported; sanitised writes are not."""
    sample = ast.parse(
        "import sys, os, click\n"
        "from click import secho\n"
        "from sys import stderr\n"
        "print(text)\n"
        "click.echo(text, err=True)\n"
        "click.secho(text)\n"
        "click.get_text_stream('stdout').write(text)\n"
        "sys.stdout.write(text)\n"
        "sys.stderr.buffer.write(data)\n"
        "sys.__stdout__.writelines([text])\n"
        "os.write(1, data)\n"
        "terminal.echo(text)\n"
        "terminal.echo_json(document)\n"
        "os.write(fd, data)\n"
        "sys.stdout.isatty()\n"
    )
    lines = {int(line.split(":")[0].removeprefix("line ")) for line in writes_to_the_terminal_around_its_owner(sample)}
    assert lines == set(range(2, 12))


def test_the_git_rule_sees_each_way_around_the_guard():
    """Each way of starting git that skips git_env's command line and environment is reported:
    the one doctor used (a plain git command line), through any starter, a `which`, git_env's
    pieces reused, GitPython imported; git_env.run and gitstore's repository are not."""
    sample = ast.parse(
        "import git\n"
        "from precompact.boundary.git_env import argv\n"
        "processes.run_program(['/usr/bin/git', 'push', '--dry-run', url], cwd=None, env=os.environ)\n"
        "processes.replace_with([shutil.which('git'), 'ls-remote', url], os.environ)\n"
        "processes.run_git(git_env.argv('ls-remote', url), cwd=root, env=git_env.environment(root), timeout=5)\n"
        "git_env.run(root, 'status', timeout=5)\n"
        "gitstore.open_repository(root)\n"
        "processes.run_program([str(command), 'hook'], cwd=None, env=env)\n"
    )
    lines = {int(line.split(":")[0].removeprefix("line ")) for line in starts_git_another_way(sample)}
    assert lines == {1, 2, 3, 4, 5}


def test_every_git_process_goes_through_git_env_and_the_rest_through_processes():
    """The owners themselves: git_env runs git only through processes.run_git, and gitstore's
    GitPython runner builds git_env's command line and environment for every command."""
    git_env = (CLIENT / "boundary" / "git_env.py").read_text()
    assert "processes.run_git(" in git_env and "subprocess" not in git_env
    gitstore = modules()["remote/gitstore.py"]
    runner = next(n for n in ast.walk(gitstore) if isinstance(n, ast.ClassDef) and n.name == "_IsolatedGit")
    calls = {_dotted(n.func) for n in ast.walk(runner) if isinstance(n, ast.Call)}
    assert {"git_env.environment", "git_env.argv"} <= calls


# git in the project's own work tree (`git_env.run`: the snapshot's git state, the brief's
# `git status`, logs/ tracked or ignored), read-only and with the project's program keys
# neutralised; Layer 2 never: its git processes run on precompact's own git directory alone.
PROJECT_STATE_READERS = (
    "boundary/git_env.py",
    "boundary/logs_dir.py",
    "boundary/git_exclude.py",
    "local/snapshot.py",
    "restore/brief.py",
)
# Where gitstore opens a store: a path git_env.store made (open_repository), or one of the
# existing stores git_env.stores_of found (unpushed and not_held_by, for `projects --forget`).
STORE_OPENERS = {
    ("remote/gitstore.py", "open_repository"),
    ("remote/gitstore.py", "unpushed"),
    ("remote/gitstore.py", "not_held_by"),
}


def runs_git_on_the_project_repository(tree: ast.Module, module: str) -> list[str]:
    """A git process whose repository may be the project's: `git_env.run` outside the project
    state readers; a GitPython repository (`git.Repo`, `_IsolatedRepo`, `Repo.init`...) made
    anywhere but in gitstore.open_repository, or there from anything but what `git_env.store`
    returned; `git_env.transport` given anything but a repository's own git directory
    (`repo.git_dir`: precompact's store)."""
    found = []
    for function in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))] + [tree]:
        stored = {
            name.id
            for node in ast.walk(function)
            if isinstance(node, ast.Assign)
            and _dotted(getattr(node.value, "func", None) or node.value).endswith("git_env.store")
            for target in node.targets
            for name in ast.walk(target)
            if isinstance(name, ast.Name)
        } | {
            name.id
            for node in ast.walk(function)
            if isinstance(node, ast.For)
            and _dotted(getattr(node.iter, "func", None) or node.iter).endswith("git_env.stores_of")
            for name in ast.walk(node.target)
            if isinstance(name, ast.Name)
        }
        body = function.body if isinstance(function, ast.Module) else [function]
        calls = [n for part in body for n in ast.walk(part) if isinstance(n, ast.Call)]
        if isinstance(function, ast.Module):
            # Module level only: calls inside functions are each function's.
            inner = {
                id(n)
                for f in ast.walk(tree)
                if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                for n in ast.walk(f)
            }
            calls = [c for c in calls if id(c) not in inner]
        name = getattr(function, "name", "<module>")
        for call in calls:
            called = _dotted(call.func)
            first = call.args[0] if call.args else None
            if called.endswith("git_env.run") and module not in PROJECT_STATE_READERS:
                found.append(f"line {call.lineno}: {ast.unparse(call)[:60]}")
            elif called.split(".")[-1].endswith("Repo") or ".Repo." in f".{called}.":
                opener = (module, name) in STORE_OPENERS
                if not (opener and isinstance(first, ast.Name) and first.id in stored):
                    found.append(f"line {call.lineno}: {ast.unparse(call)[:60]}")
            elif called.endswith("git_env.transport") and not (
                first is not None and "git_dir" in {n.attr for n in ast.walk(first) if isinstance(n, ast.Attribute)}
            ):
                found.append(f"line {call.lineno}: {ast.unparse(call)[:60]}")
    return found


def test_layer_2_runs_git_on_precompacts_own_directory_only():
    """No git process of Layer 2 (gitstore, the verifier, ops, doctor) gets the project's
    repository as its own: only the project state readers run git there; gitstore opens
    precompact's store alone; every transport runs in it."""
    found = {
        module: problems
        for module, tree in modules().items()
        if (problems := runs_git_on_the_project_repository(tree, module))
    }
    assert found == {}


def test_the_project_repository_rule_sees_each_way_to_it():
    sample = ast.parse(
        "import git\n"
        "def open_repository(target):\n"
        "    made = git_env.store(common, 5)\n"
        "    good = _IsolatedRepo(made)\n"
        "    return _IsolatedRepo(target.repository)\n"
        "def status(config):\n"
        "    git_env.run(config.repository, 'rev-parse', 'refs/heads/x', timeout=5)\n"
        "    git.Repo(config.repository)\n"
        "    git_env.transport(config.repository, 'push', url, timeout=5)\n"
        "    git_env.transport(Path(repo.git_dir), 'push', url, timeout=5)\n"
        "def unpushed(project):\n"
        "    for store in git_env.stores_of(project):\n"
        "        _IsolatedRepo(store)\n"
        "    for other in project.parents:\n"
        "        _IsolatedRepo(other)\n"
    )
    lines = {
        int(line.split(":")[0].removeprefix("line "))
        for line in runs_git_on_the_project_repository(sample, "remote/gitstore.py")
    }
    assert lines == {5, 7, 8, 9, 15}
    in_snapshot = runs_git_on_the_project_repository(
        ast.parse("git_env.run(cwd, 'status', timeout=5)\n"), "local/snapshot.py"
    )
    assert in_snapshot == []


def test_the_process_rules_see_each_way_to_start_a_process():
    """Each way to start a process outside the owner is reported by one of the process rules; a
    module that starts none is not."""
    rules = (imports_a_process_module, starts_a_process_through_os, starts_a_process_through_another_module)
    starters = [
        "import subprocess",
        "from subprocess import run",
        "import multiprocessing.pool",
        "import pty",
        "import webbrowser",
        "from webbrowser import open as show",
        "import os\nos.system('ls')",
        "import os\nos.popen('ls')",
        "import os\nos.execv('/bin/ls', ['ls'])",
        "import os\nos.spawnlp(os.P_WAIT, 'ls', 'ls')",
        "import os\nos.posix_spawnp('ls', ['ls'], {})",
        "import os\nos.fork()",
        "from os import system",
        "import asyncio\nasyncio.create_subprocess_shell('ls')",
        "from asyncio import create_subprocess_exec",
        "import asyncio\nasyncio.get_event_loop().subprocess_exec(object, 'ls')",
        "from concurrent.futures import ProcessPoolExecutor",
        "import concurrent.futures\nconcurrent.futures.ProcessPoolExecutor()",
    ]
    missed = [sample for sample in starters if not any(rule(ast.parse(sample)) for rule in rules)]
    assert not missed
    harmless = ast.parse(
        "import os, asyncio, threading\nos.getpid()\nasyncio.sleep(0)\nthreading.Thread(target=print)\n"
    )
    assert not any(rule(harmless) for rule in rules)


def test_the_exclude_rule_sees_each_way_to_name_gits_exclude_file():
    for sample in (
        "def f(git_dir):\n    return git_dir + '/info/exclude'\n",
        "import os\ndef f(git_dir):\n    return os.path.join(git_dir, 'info', 'exclude')\n",
        "def f(repo):\n    return repo.common_dir / 'info' / 'exclude'\n",
    ):
        assert names_git_exclude_file(ast.parse(sample)), sample
    assert not names_git_exclude_file(ast.parse("note = 'or add it to .git/info/exclude to keep it yours'\n"))


def test_the_registry_rule_sees_each_way_to_name_the_registry():
    for sample in (
        "from pathlib import Path\ndef where():\n    return Path.home() / '.local' / 'share' / 'precompact'\n",
        "import os\ndef where():\n    return os.environ.get('XDG_DATA_HOME')\n",
        "import os\ndef where():\n    return os.getenv('XDG_DATA_HOME', '~/.local/share')\n",
        "def lock(directory):\n    return directory / 'registry.lock'\n",
    ):
        assert names_the_project_registry(ast.parse(sample)), sample
    # Passing the variable on to a child process names no file.
    assert not names_the_project_registry(ast.parse("KEPT = ('XDG_STATE_HOME', 'XDG_DATA_HOME')\n"))


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


def test_the_verdict_rule_sees_each_way_around_the_verifier():
    """A verdict made outside verifier/ is reported however it is spelled; comparing with one
    (rendering it) is not."""
    sample = ast.parse(
        "from precompact.verifier import verdicts\n"
        "from precompact.verifier.verdicts import FAILED, VERIFIED, Check\n"
        "from precompact.restore import resurrect as resurrection\n"
        "def a(s):\n    return Check(FAILED, 'no')\n"
        "def b(s):\n    return Verdict(verdicts.NOT_ON_REMOTE, 'x')\n"
        "def c(s):\n    return {'git': VERIFIED}\n"
        "def d(s):\n    return Verdict('verified', s)\n"
        "def e(s):\n    return dict(status=resurrection.PENDING)\n"
        "def f(check):\n    return 'ok' if check.status == verdicts.VERIFIED else check.status in (FAILED, verdicts.OFF)\n"
    )
    found = [int(line.split()[1].rstrip(":")) for line in produces_a_verdict(sample)]
    assert sorted(set(found)) == [5, 7, 9, 11, 13]


def test_the_verdict_rule_knows_every_status_of_the_verifier():
    from precompact.verifier import verdicts

    assert {getattr(verdicts, name) for name in VERDICT_STATUSES} == set(verdicts.STATUSES)
    assert VERDICT_WORDS <= set(verdicts.STATUSES)


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
    found = sorted(int(line.split()[1].rstrip(":")) for line in reads_the_index_by_key(sample))
    assert found == [2, 4, 6, 8, 10]


# --- The facade -----------------------------------------------------------------------------------
# What an edge (edges/: the CLI, the hook, the MCP server, the worker, the launcher) does with the
# library, it does through `api`. An edge may call the facade, the settings it loads (config),
# the boundary owners it prints and writes through (quoting, atomic_file, private_file, processes, logs_dir),
# the error family and the other edges. Anything else of the library it may name (a constant for
# a schema, a type, an exception to catch) but not call.
# The viewer is an edge too (a read-only web front over the library), kept in its own package so
# that its web libraries stay off the hook's import path (test_viewer checks that); the same rule
# holds it to the facade.
EDGES = ("edges/", "viewer/")
EDGE_MAY_CALL = (
    "precompact.api",
    "precompact.errors",
    "precompact.config",
    "precompact.boundary",
    "precompact.edges",
    "precompact.viewer",
)


def _library_imports(scope: ast.AST) -> dict[str, str]:
    """Local name -> the library module (or name in it) an import in `scope` binds it to."""
    bound = {}
    for node in ast.walk(scope):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("precompact"):
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            bound |= {a.asname or a.name: a.name for a in node.names if a.name.startswith("precompact")}
    return bound


def calls_around_the_facade(tree: ast.Module) -> dict[str, list[str]]:
    """The library modules an edge calls other than those it may (EDGE_MAY_CALL), each with
    the calls, a function handed to another call to run (a thread pool's `submit(f, ...)`)
    included. A name resolves to the imports of its module and of the function it is in (the
    CLI imports where a command runs); a function's parameter of the same name shadows them."""
    module_level = _library_imports(
        ast.Module(body=[n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)], type_ignores=[])
    )
    found: dict[str, list[str]] = {}
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    for function in functions:
        names = module_level | _library_imports(function)
        for argument in ast.walk(function.args):
            if isinstance(argument, ast.arg):
                names.pop(argument.arg, None)
        for node in ast.walk(function):
            if not isinstance(node, ast.Call):
                continue
            # A function is named in lower case: a type or a constant handed on is only named.
            handed = [a for a in node.args if _dotted(a).rsplit(".", 1)[-1][:1].islower()]
            for called in [_dotted(node.func), *map(_dotted, handed)]:
                source = names.get(called.split(".")[0])
                if source is None or source.startswith(EDGE_MAY_CALL):
                    continue
                module = source if called.count(".") else source.rsplit(".", 1)[0]
                found.setdefault(module, []).append(f"line {node.lineno}: {called}(...)")
    return found


def test_edges_call_the_library_through_the_facade():
    edges = {name: calls_around_the_facade(tree) for name, tree in modules().items() if name.startswith(EDGES)}
    around = {name: found for name, found in edges.items() if found}
    assert not around, f"edges calling the library around api (add an api function): {around}"


def test_the_facade_rule_sees_a_call_around_api():
    sample = ast.parse(
        "from precompact import api\n"
        "from precompact.boundary import quoting\n"
        "def a(config):\n    from precompact.verifier import verify\n    return verify.verify(config)\n"
        "def b(config):\n    from precompact.recall.fulltext import search\n    return search(config)\n"
        "def c(config, verify):\n    return verify.verify(config), api.verify(config), quoting.inline('x')\n"
        "def d(config):\n    from precompact.recall import fulltext\n    return fulltext.DEFAULT_BUDGET\n"
        "def e(pool, config, found):\n    from precompact.restore import dropped\n"
        "    return pool.submit(dropped.of_resurrection, config, found), isinstance(found, dropped.Dropped)\n"
    )
    assert calls_around_the_facade(sample) == {
        "precompact.verifier.verify": ["line 5: verify.verify(...)"],
        "precompact.recall.fulltext": ["line 8: search(...)"],
        "precompact.restore.dropped": ["line 16: dropped.of_resurrection(...)"],
    }


# --- The facade only delegates ------------------------------------------------------------------
# api.py is what the edges call; what it does belongs to the package that owns it (ops/ for what
# spans the layers). A facade function is a docstring, lazy imports and a call of the owner,
# with its arguments shaped in at most FACADE_STATEMENTS simple statements.
FACADE = "api.py"
FACADE_STATEMENTS = 3
SIMPLE_STATEMENTS = (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return)
# Expressions that loop or make a function: a conditional expression shapes an argument, these
# compute an answer.
LOGIC_EXPRESSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)


def facade_does_more_than_delegate(tree: ast.Module) -> list[str]:
    """A class the facade defines (a type belongs to its owner), or a function of it whose body
    after its docstring and imports holds a statement other than an assignment, an expression or
    a return (a branch, a loop, a try, a with, a raise...), more than FACADE_STATEMENTS of them,
    or a comprehension or a lambda."""
    found = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            found.append(f"line {node.lineno}: class {node.name}")
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        statements = [s for s in body if not isinstance(s, ast.Import | ast.ImportFrom)]
        if len(statements) > FACADE_STATEMENTS:
            found.append(f"line {node.lineno} in {node.name}: {len(statements)} statements")
        complex_statements = [s for s in statements if not isinstance(s, SIMPLE_STATEMENTS)]
        logic = [n for s in statements for n in ast.walk(s) if isinstance(n, LOGIC_EXPRESSIONS)]
        found += [f"line {s.lineno} in {node.name}: {type(s).__name__}" for s in complex_statements + logic]
    return found


def test_the_facade_only_delegates():
    assert not facade_does_more_than_delegate(modules()[FACADE]), "move the logic into the package that owns it"


def test_the_delegation_rule_sees_a_facade_that_computes():
    """The shapes api.py had before ops/layers, ops/inspection and ops/compaction owned them are
    each reported; a function like `save` (imports, two statements and a return, an argument
    shaped by a conditional expression) is not."""
    sample = ast.parse(
        "from dataclasses import dataclass\n"
        "@dataclass\nclass Outcome:\n    problems: list\n"
        "def flush(config):\n    try:\n        return _flush(config)\n    except OSError as e:\n"
        "        return Outcome([str(e)])\n"
        "def _deliver(config, briefing):\n    from precompact.ops import compaction\n\n"
        "    if briefing is None:\n        return None\n    return compaction.brief(config, briefing)\n"
        "def inspect(config):\n    local = {s.sequence: s for s in config.savepoints}\n    return local\n"
        "def rekey(config):\n    with config.lock():\n        return config.rekey()\n"
        "def many(config):\n    a = config.a\n    b = config.b\n    c = config.c\n    return a, b, c\n"
        "def later(config):\n    return lambda: config\n"
        "def save(config, found):\n"
        '    """A savepoint."""\n'
        "    from precompact.local import snapshot\n\n"
        "    written = snapshot.create(config, found.read() if found else None)\n"
        "    snapshot.mark(config, written)\n"
        "    return written\n"
    )
    assert [line.split(": ")[-1] for line in facade_does_more_than_delegate(sample)] == [
        "class Outcome",
        "Try",
        "If",
        "DictComp",
        "With",
        "4 statements",
        "Lambda",
    ]


# --- Outside text reaches the model and the user only quoted -----------------------------------
# The modules that write text for the model or the user from what a savepoint holds: the restore
# brief and report, recall's results, the SessionStart brief (ops/compaction), the MCP tools and the hook.
MODEL_TEXT = (
    "restore/brief.py",
    "recall/fulltext.py",
    "recall/everywhere.py",
    "api.py",
    "edges/hook.py",
    "edges/mcp_server.py",
    "ops/compaction.py",
)
# The modules that print what the model reads when it runs a command (the brief names `status`,
# `verify`, `resurrect --format report`), the verifier's, which compose the verdicts printed, and
# resurrect's, whose refusals (a savepoint not found, not vouched for) `resurrect` prints.
PRINTED_TEXT = (
    "edges/cli.py",
    "verifier/verify.py",
    "verifier/team.py",
    "verifier/verdicts.py",
    "verifier/savepoint.py",
    "restore/resurrect.py",
)
# Names, times and reasons the index, a snapshot, a remote's copy, an RPC endpoint or an error
# state as they like: an instance's name, a lineage, an index line's timestamp, the snapshot file
# it names, a failure's reason (what git or the remote said, why a project's index is unreadable).
NAMES_TIMES_REASONS = {
    "lineage",
    "timestamp",
    "time",
    "last_savepoint",
    "instance",
    "snapshot_file",
    "reason",
    "failure",
    "failures",
}
# The paths the CLI prints (a file `install`/`uninstall` changes, a savepoint or session written, a
# project forgotten): any directory's name may hold a line of its own.
PRINTED_PATHS = {"path", "cwd"}
# Fields that carry text precompact did not write (a transcript's entries and tool output, a
# compaction summary, a session id, file names). A check's `detail` is not one: it is the
# verifier's own sentence, whose outside parts are quoted where it is composed (PRINTED_TEXT).
OUTSIDE_TEXT = {
    "compact_summary",
    "summary",
    "excerpt",
    "text",
    "raw",
    "content",
    "cwd",
    "session_id",
    "todos",
    "edited",
    "requests",
    "path",
} | NAMES_TIMES_REASONS
# Variables that hold such a field under its own name (a `reason` variable is most often
# precompact's own sentence, `compaction.failure_reason`; the `reason` field is outside text).
OUTSIDE_VARIABLES = {"instance", "lineage", "timestamp", "failure", "snapshot_file"}
# A field of outside data that holds precompact's own word, not the outside text (a failure's layer).
OWN_WORDS = {"layer"}
# The forms that quote (boundary/quoting); `single_line` only folds line breaks and quotes nothing.
QUOTING_FORMS = {
    "quoting.block",
    "quoting.inline",
    "quoting.name",
    "quoting.timestamp",
    "quoting.path",
    "quoting.os_error",
}
# Calls whose text (or items) are made of their arguments'; any other call's text is its own (a
# helper's f-strings are checked where they are).
TEXT_OF_ARGUMENTS = {
    "join",
    "str",
    "format",
    "strip",
    "rstrip",
    "lstrip",
    "replace",
    "lower",
    "upper",
    "sorted",
    "list",
}
# What each name of a scope is assigned.
Values = Mapping[str, list[ast.AST]]
NO_VALUES: Values = MappingProxyType({})
# Where text is printed without an f-string.
PRINTERS = {"terminal.echo", "_say", "click.echo", "print"}


def _outside_reads(
    node: ast.AST, fields: set[str], variables: set[str], values: Values = NO_VALUES
) -> Iterator[ast.AST]:
    """The reads of outside text in `node` that reach the text it makes: not inside a quoting
    form, nor in a condition, an index, a number's format or a call that makes its own text.
    `values`: what each name of the scope is assigned, to follow a loop over it item by item."""
    if isinstance(node, ast.Call):
        if _dotted(node.func) in QUOTING_FORMS:
            return
        key = node.args[0] if isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args else None
        if isinstance(key, ast.Constant) and key.value in fields:
            yield node
            return
        callee = node.func.attr if isinstance(node.func, ast.Attribute) else _dotted(node.func)
        if callee in TEXT_OF_ARGUMENTS:
            for part in [*node.args, node.func]:
                yield from _outside_reads(part, fields, variables, values)
        return
    if isinstance(node, ast.Attribute) and node.attr in OWN_WORDS:
        return
    if isinstance(node, ast.Attribute) and node.attr in fields or isinstance(node, ast.Name) and node.id in variables:
        yield node
    elif isinstance(node, ast.Subscript):
        if isinstance(node.slice, ast.Constant) and node.slice.value in fields:
            yield node
        else:
            yield from _outside_reads(node.value, fields, variables, values)
    elif isinstance(node, ast.IfExp):
        yield from _outside_reads(node.body, fields, variables, values)
        yield from _outside_reads(node.orelse, fields, variables, values)
    elif isinstance(node, ast.GeneratorExp | ast.ListComp | ast.SetComp):
        # A name bound to outside text holds it in the element made of it.
        yield from _outside_reads(node.elt, fields, _bound_by_generators(node, fields, variables, values), values)
    elif not isinstance(node, ast.Compare | ast.Lambda) and not (
        isinstance(node, ast.FormattedValue) and _formats_a_number(node)
    ):
        for child in ast.iter_child_nodes(node):
            yield from _outside_reads(child, fields, variables, values)


def _made_text(tree: ast.AST) -> Iterator[ast.AST]:
    """Each part of an f-string and each argument printed, outside any quoting form."""
    if isinstance(tree, ast.Call) and _dotted(tree.func) in QUOTING_FORMS:
        return
    if isinstance(tree, ast.FormattedValue) and not _formats_a_number(tree):
        yield tree.value
    elif isinstance(tree, ast.Call) and _dotted(tree.func) in PRINTERS:
        yield from tree.args
    for child in ast.iter_child_nodes(tree):
        yield from _made_text(child)


def _formats_a_number(part: ast.FormattedValue) -> bool:
    """`{held.timestamp:d}`: a format only a number takes (a text there raises)."""
    spec = part.format_spec
    return (
        isinstance(spec, ast.JoinedStr)
        and len(spec.values) == 1
        and isinstance(spec.values[0], ast.Constant)
        and str(spec.values[0].value)[-1:] in tuple("bdoxXn")
    )


def renders_outside_text_unquoted(tree: ast.Module, fields: set[str] = OUTSIDE_TEXT) -> list[str]:
    """Each place that puts one of `fields` (or a variable named for one) into an f-string or a
    printed line other than through a quoting form of boundary/quoting."""
    found: dict[ast.AST, str] = {}  # a printed f-string's parts are also parts of an f-string
    scopes = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    for scope in [tree, *scopes]:
        variables, values = (
            _holding_outside_text(scope, fields, OUTSIDE_VARIABLES & fields)
            if scope in scopes
            else (OUTSIDE_VARIABLES & fields, {})
        )
        for part in _made_text(scope):
            read = next(_outside_reads(part, fields, variables, values), None)
            if read is not None:
                found.setdefault(read, f"line {read.lineno}: {ast.unparse(read)[:60]}")
    return list(found.values())


def _holding_outside_text(scope: ast.AST, fields: set[str], variables: set[str]) -> tuple[set[str], Values]:
    """`variables` and the names `scope` binds to outside text, assigned (`name = r.instance if
    ...`, `name, when = row`, `name := r.instance`) or looped over (`for name, when in rows`,
    item by item when `rows` is a list the scope makes); and what each name is assigned."""
    values: dict[str, list[ast.AST]] = {}
    for n in ast.walk(scope):
        if isinstance(n, ast.Assign):
            for target in n.targets:
                if isinstance(target, ast.Name):
                    values.setdefault(target.id, []).append(n.value)
    held = set(variables)
    while True:  # until no name is bound from another newly held
        more = set(held)
        for n in ast.walk(scope):
            if isinstance(n, ast.Assign):
                for target in n.targets:
                    more |= _bound(target, n.value, fields, held, values)
            elif isinstance(n, ast.AnnAssign | ast.NamedExpr) and n.value is not None:
                more |= _bound(n.target, n.value, fields, held, values)
            elif isinstance(n, ast.For | ast.AsyncFor | ast.comprehension):
                more |= _bound_by_loop(n.target, n.iter, fields, held, values)
        if more == held:
            return held, values
        held = more


def _bound(target: ast.AST, value: ast.AST, fields: set[str], held: set[str], values: Values) -> set[str]:
    """The names `target` binds to outside text when it takes `value`: a tuple's names pair with
    a tuple's items (`name, n = r.instance, 1`), and all take a value that is no tuple of as many
    but reads outside text (`name, when = row`: which item is which is not known here)."""
    if isinstance(target, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List):
        starred = any(isinstance(t, ast.Starred) for t in [*target.elts, *value.elts])
        if not starred and len(target.elts) == len(value.elts):
            return {name for t, v in zip(target.elts, value.elts) for name in _bound(t, v, fields, held, values)}
    if not any(_outside_reads(value, fields, held, values)):
        return set()
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _bound_by_loop(target: ast.AST, iterable: ast.AST, fields: set[str], held: set[str], values: Values) -> set[str]:
    """The names `target` binds to outside text as it takes each item of `iterable` (an item is
    read without following names again: a name's value is followed once, by `_items`)."""
    bound: set[str] = set()
    for item, within in _items(iterable, fields, held, values):
        bound |= _bound(target, item, fields, within, NO_VALUES)
    return bound


def _bound_by_generators(
    node: ast.GeneratorExp | ast.ListComp | ast.SetComp, fields: set[str], held: set[str], values: Values
) -> set[str]:
    """`held` and the names a comprehension's loops bind to outside text."""
    bound = held
    for generator in node.generators:
        bound = bound | _bound_by_loop(generator.target, generator.iter, fields, bound, values)
    return bound


def _items(iterable: ast.AST, fields: set[str], held: set[str], values: Values) -> list[tuple[ast.AST, set[str]]]:
    """What each item of `iterable` may be, with the names that hold outside text where it is
    made: a literal's elements, a comprehension's element, `enumerate(x)`'s a number and an item
    of x, `zip(a, b)`'s an item of each, `sorted(x)`'s x's, a name's the items of what the scope
    assigns it; else, an item of what cannot be followed is taken to be all of it."""
    if isinstance(iterable, ast.Tuple | ast.List | ast.Set):
        return [(e.value if isinstance(e, ast.Starred) else e, held) for e in iterable.elts]
    if isinstance(iterable, ast.GeneratorExp | ast.ListComp | ast.SetComp):
        return [(iterable.elt, _bound_by_generators(iterable, fields, held, values))]
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.args:
        first = iterable.args[0]
        if iterable.func.id == "enumerate":
            return [
                (ast.Tuple([ast.Constant(0), item]), within) for item, within in _items(first, fields, held, values)
            ]
        if iterable.func.id == "zip":
            return [(ast.Tuple(list(iterable.args)), held)]
        if iterable.func.id in {"sorted", "reversed", "list", "tuple", "set"}:
            return _items(first, fields, held, values)
    if isinstance(iterable, ast.Name) and iterable.id in values:
        return [pair for value in values[iterable.id] for pair in _items(value, fields, held, NO_VALUES)]
    return [(iterable, held)]


@pytest.mark.parametrize("name", MODEL_TEXT)
def test_outside_text_reaches_the_model_only_quoted(name):
    assert not renders_outside_text_unquoted(modules()[name]), name


@pytest.mark.parametrize("name", PRINTED_TEXT)
def test_outside_names_times_and_reasons_are_printed_only_quoted(name):
    assert not renders_outside_text_unquoted(modules()[name], NAMES_TIMES_REASONS), name


def test_the_paths_the_cli_prints_are_quoted():
    assert not renders_outside_text_unquoted(modules()["edges/cli.py"], NAMES_TIMES_REASONS | PRINTED_PATHS)


# --- An exception Python or a library raised is outside text wherever it is said -----------------
# A verdict, an error, a warning or a log line made of an exception's text must quote it when the
# exception is not precompact's own (a ValueError a chunk's read raises names the bytes it could
# not take; an OSError, a file's name; git's stderr; a line break in any of them forges a second
# line, an ANSI escape rewrites the screen). precompact's own exceptions carry words their raiser
# composed, outside parts quoted there. An OSError's `strerror` alone is no quote: it is whatever
# the raiser passed (ssl's verify message, any library's text); `quoting.os_error` shows it bare
# only once it checked that it is the C library's words for the errno. Every module.
# Libraries whose exceptions' text is made of what they were given.
FOREIGN_EXCEPTION_MODULES = {"sqlite3", "orjson", "json", "tomllib", "zlib", "binascii", "tantivy", "git"}


def _foreign_exception(caught: ast.AST) -> bool:
    """Whether an `except` clause catches an exception precompact did not define (a builtin's or a
    library's), alone or in a tuple."""
    for kind in caught.elts if isinstance(caught, ast.Tuple) else [caught]:
        name = _dotted(kind)
        if isinstance(getattr(builtins, name, None), type) or name.split(".")[0] in FOREIGN_EXCEPTION_MODULES:
            return True
    return False


def _unquoted_reads_of(node: ast.AST, name: str) -> Iterator[ast.AST]:
    """The reads of `name` in `node` outside a quoting form (`type(e)`, a class's name, is Python's word)."""
    if isinstance(node, ast.Call) and (_dotted(node.func) in QUOTING_FORMS or _dotted(node.func) == "type"):
        return
    if isinstance(node, ast.Name) and node.id == name:
        yield node
        return
    for child in ast.iter_child_nodes(node):
        yield from _unquoted_reads_of(child, name)


# A format spec whose presentation type only a number takes (`{e.timeout:g}`): a str there raises,
# so what it shows is digits. `c` (a character from an int) is not one.
_NUMERIC_SPEC = re.compile(r".*[bdeEfFgGnoxX%]")


def _as_number(part: ast.FormattedValue) -> bool:
    spec = part.format_spec
    return (
        isinstance(spec, ast.JoinedStr)
        and len(spec.values) == 1
        and isinstance(spec.values[0], ast.Constant)
        and _NUMERIC_SPEC.fullmatch(str(spec.values[0].value)) is not None
    )


def _text_made(node: ast.AST) -> Iterator[ast.AST]:
    """Each f-string part and each `str(…)` in `node` outside a quoting form, but a `str(…)` kept
    as a field its printers quote (`reason=str(e)`, `{"reason": str(e)}`: NAMES_TIMES_REASONS)
    and a part formatted as a number (`{e.timeout:g}`)."""
    if isinstance(node, ast.Call) and _dotted(node.func) in QUOTING_FORMS:
        return
    if isinstance(node, ast.keyword) and node.arg in NAMES_TIMES_REASONS:
        return
    if isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values, strict=True):
            if not (isinstance(key, ast.Constant) and key.value in NAMES_TIMES_REASONS):
                yield from _text_made(value)
            if key is not None:
                yield from _text_made(key)
        return
    if isinstance(node, ast.FormattedValue) and not _as_number(node):
        yield node.value
    elif isinstance(node, ast.Call) and _dotted(node.func) == "str":
        yield node
    for child in ast.iter_child_nodes(node):
        yield from _text_made(child)


def foreign_exception_text_unquoted(tree: ast.Module) -> list[str]:
    """Each place a caught exception precompact did not define becomes text unquoted."""
    found: dict[ast.AST, str] = {}  # `str(e)` in an f-string's part is a part of both
    for handler in ast.walk(tree):
        if not (isinstance(handler, ast.ExceptHandler) and handler.name and handler.type is not None):
            continue
        if not _foreign_exception(handler.type):
            continue
        for statement in handler.body:
            for part in _text_made(statement):
                read = next(_unquoted_reads_of(part, handler.name), None)
                if read is not None:
                    found.setdefault(read, f"line {read.lineno}: {ast.unparse(part)[:60]}")
    return list(found.values())


@pytest.mark.parametrize("name", sorted(modules()))
def test_an_exception_precompact_did_not_raise_is_said_only_quoted(name):
    assert not foreign_exception_text_unquoted(modules()[name]), name


def test_the_exception_rule_sees_a_foreign_exceptions_text_unquoted():
    sample = ast.parse(
        "from precompact.boundary import quoting\n"
        "def a(x):\n    try:\n        f()\n    except ValueError as e:\n        raise Broken(f'no chunks: {e}')\n"
        "def b(x):\n    try:\n        f()\n    except (PrecompactError, OSError) as e:\n        return Check(FAILED, str(e))\n"
        "def c(x):\n    try:\n        f()\n    except sqlite3.DatabaseError as e:\n"
        "        raise E(f'damaged ({quoting.single_line(str(e))})')\n"
        "def quoted(x):\n    try:\n        f()\n    except ValueError as e:\n"
        "        raise Broken(f'no chunks: {quoting.inline(str(e))}')\n"
        "def kept_as_a_reason(x):\n    try:\n        f()\n    except OSError as e:\n"
        "        return Project(reason=str(e))\n"
        "def own(x):\n    try:\n        f()\n    except chunks.ChunkError as e:\n        raise Broken(f'{e} in {x}')\n"
    )
    assert [line.split(":")[0] for line in foreign_exception_text_unquoted(sample)] == ["line 6", "line 11", "line 16"]


def test_the_exception_rule_takes_the_c_librarys_words_only_checked_and_a_number_as_digits():
    """`e.strerror` is whatever the raiser passed: refused alone, or with the text as fallback;
    `quoting.os_error` checks it. A part only a number can fill (`:g`) is digits; one a str can
    (`:>8`, `!r`, `:c`) is not. A reason kept in a dict its printers quote is kept as one."""
    cases = {
        "strerror_alone": ("raise E(f'cannot read: {e.strerror}')", True),
        "strerror_or_text": ("raise E(f'cannot read: {e.strerror or e}')", True),
        "checked": ("raise E(f'cannot read: {quoting.os_error(e)}')", False),
        "as_a_number": ("raise E(f'no answer within {e.timeout:g} s')", False),
        "as_a_percentage": ("raise E(f'{e.share:.1%} done')", False),
        "padded_text": ("raise E(f'no answer within {e.timeout:>8} s')", True),
        "as_a_character": ("raise E(f'{e.code:c}')", True),
        "its_repr": ("log(f'not updated: {e!r}')", True),
        "reason_kept": ("yield Outcome(s, FAILED, {'reason': str(e)})", False),
        "other_field": ("yield Outcome(s, FAILED, {'note': str(e)})", True),
        "field_not_named": ("yield Outcome(s, FAILED, {kind: str(e)})", True),
    }
    for name, (statement, refused) in cases.items():
        sample = ast.parse(f"def {name}():\n    try:\n        f()\n    except OSError as e:\n        {statement}\n")
        assert bool(foreign_exception_text_unquoted(sample)) is refused, name


def test_the_quoting_rule_sees_outside_text_that_is_not_quoted():
    """Folding lines (`single_line`) or quoting something else in the same function is no quote;
    a field in a condition, an index or a call that makes its own text is no text made of it."""
    sample = ast.parse(
        "from precompact.boundary import quoting\n"
        "def brief(s):\n    return f'Summary: {s.compact_summary}'\n"
        "def quoted(s):\n    return f'Summary: {quoting.block(s.compact_summary)}'\n"
        "def _line(entry):\n    return f'- {entry.text}'\n"
        "def lines(entries):\n    return quoting.single_line('; '.join(_line(e) for e in entries))\n"
        "def own(s):\n    return f'savepoint {s.sequence}'\n"
        "def report(found, s):\n"
        "    return quoting.single_line(f'Lineage: {\" → \".join(found.lineage)} at {s.timestamp}')\n"
        "def row(s, instance):\n"
        "    terminal.echo(f'{quoting.name(s.instance)} {instance}: {s.failures[-1]} {s.timestamp or \"?\"}')\n"
        "def names(found):\n    return ', '.join(quoting.name(n) for n in found.lineage)\n"
        "def bare(found):\n    return f'{\", \".join(n for n in found.lineage)}'\n"
        "def said(failure):\n    _say(failure)\n"
        "def remote(r, found):\n    name = r.instance if r.instance else '?'\n    names = sorted(found.lineage)\n"
        "    _say(f'{name}: {\", \".join(names)}')\n"
        "def kept(s, counts):\n"
        "    return f'{counts[s.instance]} {quoting.timestamp(s.timestamp) if s.timestamp else \"never\"}'\n"
        "def unread(remote, copy, p, last):\n"
        "    return f'{remote.reason} {copy.snapshot_file} {quoting.inline(p.reason)} ({last.layer})'\n"
        "def local(savepoint):\n    name = savepoint.snapshot_file\n    return f'local file {name}'\n"
    )
    assert [line.split(": ")[1] for line in renders_outside_text_unquoted(sample)] == [
        "s.compact_summary",
        "entry.text",
        "found.lineage",
        "s.timestamp",
        "instance",
        "s.failures",
        "s.timestamp",
        "n",
        "failure",
        "remote.reason",
        "copy.snapshot_file",
        "name",
        "names",
        "name",
    ]


def test_the_quoting_rule_follows_outside_text_through_unpacking_and_loops():
    """A name that takes outside text from a tuple (its own item, or any item of a tuple it
    cannot follow), a loop, `enumerate`, `zip`, a comprehension or `:=` holds it; a number beside
    it, an option's own word and a number's format do not."""
    sample = ast.parse(
        "def paired(r):\n    who, n = r.instance, r.sequence\n    _say(f'{who} #{n}')\n"
        "def row(r):\n    kept = (r.instance, r.timestamp)\n    who, when = kept\n    _say(f'{who} at {when}')\n"
        "def listed(found):\n    pairs = [(s.instance, s.sequence) for s in found]\n"
        "    for who, n in pairs:\n        _say(f'{who} #{n}')\n"
        "def counted(found):\n    for i, who in enumerate(found.lineage):\n        _say(f'{i}: {who}')\n"
        "def zipped(found, numbers):\n    for who, n in zip(found.lineage, numbers):\n        _say(f'{who} {n}')\n"
        "def each(found):\n    return [f'- {who}' for who in found.lineage]\n"
        "def walrus(r):\n    if (who := r.instance):\n        _say(f'{who}')\n"
        "def options(instance, n):\n"
        "    for given, option in ((instance, '--instance'), (n, '--sequence')):\n        _say(f'{option}')\n"
        "def numbered(held):\n    rows = [('timestamp', f'{held.timestamp:d}')]\n"
        "    for label, value in rows:\n        _say(f'{label}: {value}')\n"
        "def quoted(found):\n    for i, who in enumerate(found.lineage):\n        _say(f'{i}: {quoting.name(who)}')\n"
    )
    assert renders_outside_text_unquoted(sample) == [
        "line 3: who",
        "line 7: who",
        "line 7: when",
        "line 11: who",
        "line 14: who",
        "line 17: who",
        "line 19: who",
        "line 22: who",
    ]


def test_the_private_file_rule_sees_each_way_around_its_owner():
    """Each way of making a private file by hand is reported; reading a key, a descriptor-relative
    open under logs/ and a file anyone may read are not."""
    sample = ast.parse(
        "import os\nfrom pathlib import Path\n"
        "def a(path):\n    return os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)\n"
        "def b(path):\n    os.chmod(path, 0o600)\n"
        "def c(fd):\n    os.fchmod(fd, 0o644)\n"
        "def d(path):\n    path.chmod(0o600)\n"
        "def e(path):\n    path.mkdir(mode=0o700, parents=True)\n"
        "def f(path, data):\n    atomic_file.write(path, data, 0o600)\n"
        "def g(keypair_path):\n    open(keypair_path, 'w').write('[]')\n"
        "def h(identity):\n    identity.write_text('AGE-SECRET-KEY-1')\n"
        "def i(config):\n    config.token_file.open(mode='x')\n"
        "def j(key_path, fd, path, data):\n"
        "    open(key_path).read(), os.open(key_path, os.O_RDONLY | os.O_NOFOLLOW)\n"
        "    os.open('chunk', os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd)\n"
        "    atomic_file.write(path, data, 0o644), open(path, 'w')\n"
    )
    found = sorted(int(line.split()[1].rstrip(":")) for line in makes_a_private_file_by_hand(sample))
    assert found == [4, 6, 8, 10, 12, 14, 16, 18, 20]


def test_the_small_file_rule_sees_each_way_around_its_owner():
    """Each way of reading a key, identity, configuration or approval by its name is reported (as
    a FIFO there would block each); reading through the owner and a descriptor-relative open
    under logs/ are not."""
    sample = ast.parse(
        "import io, os\n"
        "def a(keypair):\n    return keypair.read_text()\n"
        "def b(config):\n    return config.identity.read_bytes()\n"
        "def c(root):\n    return open(root / CONFIG_NAME, 'rb')\n"
        "def d(path):\n    return os.open(_record(path), os.O_RDONLY | os.O_NOFOLLOW)\n"
        "def e(home):\n    return (home / '.precompact.toml').open()\n"
        "def f(token_file):\n    return io.open(token_file)\n"
        "def load_keypair(path):\n    return path.read_text()\n"
        "class Signer:\n    def load(cls, path):\n        return open(path)\n"
        "def g(key_path, fd, logs, path):\n"
        "    small_file.read(key_path, 64, follow_links=False)\n"
        "    os.open('precompact-chunk-names.key', os.O_RDONLY, dir_fd=fd)\n"
        "    logs_dir.read_bytes(logs, 'precompact-chunk-names.key')\n"
        "    return path.read_text()\n"
    )
    found = sorted(int(line.split()[1].rstrip(":")) for line in reads_a_told_file_around_its_owner(sample))
    assert found == [3, 5, 7, 9, 11, 13, 15, 18]


def test_the_snapshot_rule_sees_each_way_around_its_owner():
    """Each form of a raw snapshot read is reported; the typed view and another document's key
    are not."""
    sample = ast.parse(
        "def a(found):\n    return found.document['session']\n"
        "def b(reader):\n    return reader.fields.get('sequence')\n"
        "def c(fields):\n    return fields.get('previous')\n"
        "def d(document):\n    return document['loaded_files']\n"
        "def e(fields):\n    return fields['conversation_chunks']\n"
        "def f(found, bundle, config):\n"
        "    return found.document.cwd, bundle['sequence'], config.get('session_state'), found.fields.sequence\n"
    )
    found = [int(line.split()[1].rstrip(":")) for line in reads_a_snapshot_by_key(sample)]
    assert sorted(found) == [2, 4, 6, 8, 10]


# --- The hook's quiet answer in a project ---------------------------------------------------------
# Inside a precompact project the hook answers without loading the configuration only where
# edges/hook.py's NOTHING_TO_DO says the event has nothing to do, and only once
# config/approval.approved_as_is vouches for the configuration's bytes: an untrusted or changed
# configuration is said by the handler (`_in_project`), on every event but the two that fire on
# every prompt and tool call (UserPromptSubmit, PostToolUse), which have nothing to do or say
# until a compaction left an addendum pending. So every answer `handle` returns after finding the
# project is `_in_project`'s, the one for no project found, or one under the approval's check or
# the pending check.
def answers_a_project_around_the_approval(tree: ast.Module) -> list[str]:
    """The returns of the hook's `handle` after `discovery.discover` that are neither
    `_in_project(...)`, nor under a test that no project was found, nor under
    `approved_as_is(...)`."""
    [handle] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "handle"]
    found = []
    discovered = False

    def allowed(test: ast.AST) -> bool:
        calls = {_dotted(n.func).rsplit(".", 1)[-1] for n in ast.walk(test) if isinstance(n, ast.Call)}
        no_project = any(
            isinstance(n, ast.Compare) and any(isinstance(c, ast.Constant) and c.value is None for c in n.comparators)
            for n in ast.walk(test)
        )
        # UserPromptSubmit and PostToolUse with no pending addendum: nothing to do or say on
        # every prompt and tool call (ops/addendum.py; the configuration is said elsewhere).
        return "approved_as_is" in calls or "something_pending" in calls or no_project

    def visit(statements: list[ast.stmt], guarded: bool) -> None:
        nonlocal discovered
        for statement in statements:
            if any(isinstance(n, ast.Call) and _dotted(n.func).endswith("discover") for n in ast.walk(statement)):
                discovered = True
                continue  # its own except clause answers a cwd that cannot be resolved
            if not discovered:
                continue
            if isinstance(statement, ast.Return):
                value = statement.value
                if not guarded and not (isinstance(value, ast.Call) and _dotted(value.func) == "_in_project"):
                    found.append(f"line {statement.lineno}: return {ast.unparse(value) if value else ''}")
            elif isinstance(statement, ast.If):
                visit(statement.body, guarded or allowed(statement.test))
                visit(statement.orelse, guarded)
            elif isinstance(statement, (ast.With, ast.For, ast.While, ast.Try)):
                visit(statement.body, guarded)

    visit(handle.body, False)
    return found


def test_the_hook_answers_a_project_quietly_only_once_the_approval_vouches():
    hook = modules()["edges/hook.py"]
    assert not answers_a_project_around_the_approval(hook)


def test_the_quiet_answer_rule_sees_an_answer_around_the_approval():
    sample = ast.parse(
        "def handle(raw, agent):\n"
        "    try:\n"
        "        found = discovery.discover(cwd)\n"
        "    except OSError as e:\n"
        "        return HookResult(stderr=str(e))\n"
        "    if found is None:\n"
        "        return HookResult(stderr='none')\n"
        "    if event == 'SessionStart' and payload.get('source') == 'startup':\n"
        "        return HookResult()\n"
        "    if event in NOTHING_TO_DO and NOTHING_TO_DO[event](payload, found[0]):\n"
        "        if approval.approved_as_is(path):\n"
        "            return HookResult()\n"
        "        return HookResult(stderr='not approved')\n"
        "    return _in_project(found[0], event, payload, agent)\n"
    )
    found = [int(line.split()[1].rstrip(":")) for line in answers_a_project_around_the_approval(sample)]
    assert found == [9, 13]


# The modules that read an agent's session files (transcripts, rollouts, chat files and the
# files Gemini CLI keeps beside them): each opens one only through boundary/session_file, which
# opens it through boundary/small_file (the owner of the open and its checks on the descriptor:
# a path checked, then opened again, can be swapped for a FIFO) and opens nothing itself.
SESSION_FILE_OWNER = "boundary/session_file.py"
# transcript/redact.py reads no file ("gate.open" is a regular expression's).
SESSION_READERS = ("local/capture.py", "config/gemini_compression.py", "ops/importer.py", "restore/uncompact.py")


def opens_a_path_for_reading(tree: ast.Module) -> list[str]:
    """`open(x)`, `x.open()` or `x.open("rb")` (a write names its mode), `x.read_bytes()`,
    `x.read_text()`, `os.open(x, os.O_RDONLY...)`: a path opened for reading by its name. An
    os.open with O_NOFOLLOW is precompact's own file beside a session's document (agents.py's read
    state, in logs/), which refuses a link outright; a session file may be a link to a file."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else _dotted(node.func)
        if _dotted(node.func) == "os.open":
            flags = ast.unparse(node.args[1]) if len(node.args) > 1 else ""
            if "O_RDONLY" in flags and "O_NOFOLLOW" not in flags:
                found.append(f"line {node.lineno}: os.open({flags})")
            continue
        # The mode is open()'s second argument, Path.open()'s first.
        modes = node.args[:1] if isinstance(node.func, ast.Attribute) else node.args[1:2]
        mode = next((a.value for a in modes if isinstance(a, ast.Constant)), "r")
        if (name == "open" and "r" in str(mode)) or name in ("read_bytes", "read_text"):
            found.append(f"line {node.lineno}: {ast.unparse(node.func)}(...)")
    return sorted(found, key=lambda line: int(line.split()[1].rstrip(":")))


def test_session_files_are_opened_only_through_their_owner():
    readers = {
        name: tree
        for name, tree in modules().items()
        if (name.startswith("transcript/") and name != "transcript/redact.py") or name in SESSION_READERS
    }
    broken = {name: found for name, tree in readers.items() if (found := opens_a_path_for_reading(tree))}
    owner = modules()[SESSION_FILE_OWNER]
    assert not opens_a_path_for_reading(owner), f"{SESSION_FILE_OWNER} opens through {SMALL_FILE_OWNER}"
    source = ast.unparse(owner)
    assert "small_file.open_regular" in source and "os.open(" not in source, "its one open is the owner's"
    assert not broken, f"a session file opened around {SESSION_FILE_OWNER}: {broken}"


def test_the_session_file_rule_sees_each_way_to_open_a_path_for_reading():
    sample = ast.parse(
        "import os\n"
        "def a(path):\n    return path.open('rb')\n"
        "def b(path):\n    return open(path).read()\n"
        "def c(path):\n    return path.read_bytes()\n"
        "def d(path):\n    return os.open(path, os.O_RDONLY | os.O_NONBLOCK)\n"
        "def e(home):\n    return (home / 'projects.json').read_text()\n"
        "def f(path):\n    return path.open()\n"
        "def g(scratch):\n    return scratch.open('wb')\n"
        "def h(path):\n    return os.open(path, os.O_WRONLY | os.O_APPEND)\n"
        "def j(path):\n    return os.open(path, os.O_RDONLY | os.O_NOFOLLOW)\n"
        "def i(path):\n    return session_file.open_read(path)\n"
    )
    found = [int(line.split()[1].rstrip(":")) for line in opens_a_path_for_reading(sample)]
    assert found == [3, 5, 7, 9, 11, 13]


# The agents' settings, hook, MCP and plugin files (.claude/settings.json, .mcp.json,
# ~/.claude.json, .codex/, .gemini/, OpenCode's plugin file, Claude Code's marketplace files)
# are read only through config/agent_settings.read (their caps), which reads through
# boundary/small_file (opened without blocking, a regular file only, read up to the cap) and
# opens nothing itself. A committed `.mcp.json -> /proc/self/fd/1` hung the SessionStart hook,
# a FIFO hung install, doctor and the plugin's launcher, `-> /dev/zero` filled the memory. The
# modules that handle those files name each other read they make; every other module is held
# to no read that names such a file.
AGENT_FILE_OWNER = "config/agent_settings.py"
AGENT_FILE_HANDLERS = {
    # precompact's own template, and the `#!` line of precompact's own installed script.
    "config/install.py": ("_OPENCODE_TEMPLATE.read_text", "script.open"),
    "ops/doctor.py": ("(folder / 'package.json').read_text",),  # Claude Code's installation
    # The plugin's data folder, precompact's own.
    "edges/plugin_runtime.py": ("failed.read_text", "self.lock().read_text", "(entry / 'payload.json').read_text"),
}
AGENT_FILE_NAMES = re.compile(
    r"settings_path|mcp_json_path|user_mcp_path|hooks_path|opencode_plugin_path|\.claude|\.mcp\.json|"
    r"settings\.json|hooks\.json|\.codex|\.gemini|\.opencode|marketplace"
)


def reads_an_agent_file_around_its_reader(tree: ast.Module, handler: tuple[str, ...] | None) -> list[str]:
    """The reads of a module (`handler`: the other reads it is known to make, None for a module
    that does not handle agent files) that could read an agent file around agent_settings.read."""
    calls: dict[int, str] = {}  # each line's calls, arguments included: `open(root / '.mcp.json')`
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            calls[node.lineno] = calls.get(node.lineno, "") + " " + ast.unparse(node)
    found = []
    for line in opens_a_path_for_reading(tree):
        call = line.split(": ", 1)[1]
        if call.startswith("agent_settings.read"):
            continue
        if handler is None and not AGENT_FILE_NAMES.search(calls[int(line.split()[1].rstrip(":"))]):
            continue
        if handler is not None and any(call == f"{known}(...)" for known in handler):
            continue
        found.append(line)
    return found


def test_agent_files_are_read_only_through_their_reader():
    trees = modules()
    owner = opens_a_path_for_reading(trees[AGENT_FILE_OWNER])
    assert all(line.endswith(": read_text(...)") for line in owner), (
        f"{AGENT_FILE_OWNER} opens nothing itself: its reads are {SMALL_FILE_OWNER}'s ({owner})"
    )
    source = ast.unparse(trees[AGENT_FILE_OWNER])
    assert "small_file.read" in source and "os.open(" not in source and "os.fdopen(" not in source
    broken = {
        name: found
        for name, tree in trees.items()
        if name != AGENT_FILE_OWNER
        and (found := reads_an_agent_file_around_its_reader(tree, AGENT_FILE_HANDLERS.get(name)))
    }
    assert not broken, f"an agent's file read around {AGENT_FILE_OWNER}: {broken}"


def test_the_agent_file_rule_sees_each_way_around_its_reader():
    sample = ast.parse(
        "import json\n"
        "def a(path):\n    return json.loads(path.read_text())\n"
        "def b(cwd, home):\n    return agent_settings.settings_path('user', cwd, home).read_text()\n"
        "def c(root):\n    return open(root / '.mcp.json').read()\n"
        "def d(path):\n    return agent_settings.read_text(path)\n"
        "def e(folder):\n    return (folder / 'package.json').read_text()\n"
    )
    handler = reads_an_agent_file_around_its_reader(sample, AGENT_FILE_HANDLERS["ops/doctor.py"])
    assert [int(line.split()[1].rstrip(":")) for line in handler] == [3, 5, 7]
    elsewhere = reads_an_agent_file_around_its_reader(sample, None)
    assert [int(line.split()[1].rstrip(":")) for line in elsewhere] == [5, 7]


# --- The paths and names a Layer 2 error says are quoted -----------------------------------------
# git.repository and git.remote (the configuration's), the identity's file, the object store's
# directories and the names the index gives snapshot files are outside text: any of them may hold
# a line break or a sentence. A GitStoreError (or one of its kinds) says them through quoting.path
# (bare when plain), as every other line precompact prints does.
GIT_ERRORS = {"GitStoreError", "Unopened", "Sealed", "NoIdentity", "Undecryptable", "Oversized"}
GIT_ERROR_FIELDS = {"repository", "common_dir", "git_dir", "identity", "remote"}
GIT_ERROR_VARIABLES = {"path", "name", "lock", "logs"}


def git_error_paths_unquoted(tree: ast.Module) -> list[str]:
    """Each path or name of GIT_ERROR_FIELDS / GIT_ERROR_VARIABLES a git store error's message
    puts in an f-string outside quoting (`reason=`, quoted by the error itself, and `bare=`, the
    form its `unquoted` keeps for printers that quote it whole, aside)."""
    return error_words_unquoted(tree, GIT_ERRORS, GIT_ERROR_FIELDS, GIT_ERROR_VARIABLES, {"reason", "bare"})


def error_words_unquoted(
    tree: ast.Module, errors: set[str], fields: set[str], variables: set[str], bare_keywords: set[str]
) -> list[str]:
    """Each of `fields` / `variables` the message of an error of `errors` puts in an f-string
    outside quoting (the keywords `bare_keywords` aside: words the error quotes itself, or the
    `unquoted` form its printers quote whole)."""
    found: dict[ast.AST, str] = {}
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and _dotted(call.func).split(".")[-1] in errors):
            continue
        for argument in [*call.args, *(k.value for k in call.keywords if k.arg not in bare_keywords)]:
            for part in _made_text(argument):
                read = next(_outside_reads(part, fields, variables), None)
                if read is not None:
                    found.setdefault(read, f"line {read.lineno}: {ast.unparse(read)[:60]}")
    return list(found.values())


def test_the_paths_and_names_a_git_store_error_says_are_quoted():
    assert not git_error_paths_unquoted(modules()["remote/gitstore.py"])


def test_the_git_store_error_rule_sees_a_bare_path():
    sample = ast.parse(
        "def a(target, path):\n    raise GitStoreError(f'{path} is not a git repository')\n"
        "def b(target):\n    raise GitStoreError(f'remote {target.remote} does not exist')\n"
        "def quoted(target, path):\n"
        "    raise GitStoreError(f'{quoting.path(path)} in {quoting.path(target.repository)}', reason=f'{path}')\n"
    )
    assert [line.split(":")[0] for line in git_error_paths_unquoted(sample)] == ["line 2", "line 4"]


# --- The words a Layer 3 error says are quoted ----------------------------------------------------
# What httpx says of a failed exchange (a host, the URL it was given), what the RPC endpoint says
# of a refused call, and the keypair's path (chain.keypair, PRECOMPACT_KEYPAIR) are outside text.
# An RpcError or a KeypairError says them through quoting (`quoting.inline`, `quoting.path`) and
# keeps them as said only in `unquoted`, the form an index line's reason keeps (its printers quote
# it whole): quoted once wherever they are shown.
CHAIN_ERRORS = {"RpcError", "Unreachable", "KeypairError"}
CHAIN_ERROR_VARIABLES = {"path", "said", "message", "error"}


@pytest.mark.parametrize("name", ["chain/rpc.py", "chain/wire.py"])
def test_the_words_a_chain_error_says_are_quoted(name):
    assert not error_words_unquoted(modules()[name], CHAIN_ERRORS, set(), CHAIN_ERROR_VARIABLES, {"unquoted"})


def test_the_chain_error_rule_sees_bare_words():
    sample = ast.parse(
        "def a(path):\n    raise KeypairError(f'keypair {path} does not exist')\n"
        "def b(self, said):\n    raise RpcError(f'cluster {self.shown} refused it: {said}')\n"
        "def quoted(path, said):\n"
        "    raise Unreachable(f'{quoting.path(path)}: {quoting.inline(said)}', unquoted=f'{path}: {said}')\n"
    )
    found = error_words_unquoted(sample, CHAIN_ERRORS, set(), CHAIN_ERROR_VARIABLES, {"unquoted"})
    assert [line.split(":")[0] for line in found] == ["line 2", "line 4"]
