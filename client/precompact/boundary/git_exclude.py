"""Keeping a project's per-user files (logs/precompact-*, .precompact.toml, .mcp.json) out of
`git status`, in the exclude file git itself reads there, and saying only what git confirms.

Which file: `git rev-parse --git-path info/exclude` run in the project's directory, so a linked
worktree's goes to its main repository's info/exclude (git reads no other), a submodule's to its
own git directory under the superproject's .git/modules. Which pattern: anchored at the
directory's place in its work tree (`--show-prefix`), so a project in a subfolder of its
repository (`init --repo ..`) excludes `/sub/logs/precompact-*`, not a `logs/` of the root.
Whether it worked: `git check-ignore` on a path each pattern is meant to cover, after writing,
so a `!` pattern in a .gitignore, a tracked file or a directory git does not reach is reported,
never covered by a line that says it is excluded. Every git process goes through git_env; the
exclude file is never written through a symbolic link."""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from precompact.boundary import git_env, processes, quoting

GIT_SECONDS = 10.0
# An exclude file larger than this is not read (nor appended to): nobody writes one by hand.
MAX_EXCLUDE_BYTES = 1 << 20
# Characters git's ignore patterns read as globs or escapes; a directory name holding them is
# matched literally once escaped.
_GLOB = re.compile(r"([\\*?\[])")


@dataclass(frozen=True)
class Kept:
    """One thing to keep out of git status: `pattern` relative to the project's directory (a
    glob of ours, e.g. "logs/precompact-*"), and `probe`, a path it covers that git is asked about."""

    pattern: str
    probe: str


@dataclass(frozen=True)
class Outcome:
    exclude_file: Path | None  # the file git reads for this directory; None outside a work tree
    added: tuple[str, ...]  # the patterns this call wrote (anchored, as they stand in the file)
    ignored: tuple[Kept, ...]  # what git ignores now, checked after writing
    shown: tuple[Kept, ...]  # what git status would still show, whatever was written
    problem: str | None  # why nothing could be written or checked; None when it could


def keep_out(directory: Path, wanted: tuple[Kept, ...]) -> Outcome:
    """Adds each pattern of `wanted` (anchored at `directory`) to the exclude file git reads for
    `directory` unless it is already there, then asks git which of them it now ignores. Outside a
    git work tree there is nothing to keep out: no file, nothing shown."""
    where = _exclude_file(directory)
    if where is None:
        return Outcome(None, (), (), (), None)
    if isinstance(where, str):
        return Outcome(None, (), (), wanted, where)
    exclude_file, prefix = where
    anchored = [_anchored(prefix, kept.pattern) for kept in wanted]
    if any(line is None for line in anchored):
        return Outcome(
            exclude_file,
            (),
            (),
            wanted,
            f"{directory} has a line break in its path, which git's exclude file cannot hold",
        )
    try:
        added = _append(exclude_file, [line for line in anchored if line is not None])
    except NotAppendable as e:
        return Outcome(exclude_file, (), (), wanted, f"{exclude_file} cannot be written ({e.strerror})")
    except OSError as e:
        return Outcome(exclude_file, (), (), wanted, f"{exclude_file} cannot be written ({quoting.os_error(e)})")
    ignored = _ignored(directory, wanted)
    if isinstance(ignored, str):
        return Outcome(exclude_file, added, (), wanted, ignored)
    return Outcome(
        exclude_file,
        added,
        tuple(kept for kept in wanted if kept.probe in ignored),
        tuple(kept for kept in wanted if kept.probe not in ignored),
        None,
    )


def untracked(directory: Path, paths: tuple[str, ...]) -> tuple[str, ...]:
    """Those of `paths` (relative to `directory`) that `git status` shows as untracked (`??`):
    files a user has to decide about, commit or exclude."""
    try:
        done = git_env.run(
            directory,
            "status",
            "--porcelain=v1",
            "-z",
            "--ignore-submodules=dirty",
            "--untracked-files=all",
            "--",
            *paths,
            timeout=GIT_SECONDS,
        )
    except (OSError, processes.TimeoutExpired):
        return ()
    if done.returncode != 0:
        return ()
    listed = {entry[3:] for entry in done.stdout.split("\0") if entry.startswith("?? ")}
    prefix = _prefix(directory)
    return tuple(path for path in paths if (prefix or "") + path in listed)


def _exclude_file(directory: Path) -> tuple[Path, str] | str | None:
    """The exclude file git reads for `directory` and the directory's prefix in its work tree;
    None outside a work tree; a string saying why git could not tell."""
    try:
        done = git_env.run(
            directory,
            "rev-parse",
            "--is-inside-work-tree",
            "--show-prefix",
            "--git-path",
            "info/exclude",
            timeout=GIT_SECONDS,
        )
    except (OSError, processes.TimeoutExpired) as e:
        return f"git could not be asked where its exclude file is ({quoting.inline(str(e))})"
    lines = done.stdout.split("\n")
    if done.returncode != 0 or len(lines) < 3 or lines[0] != "true":
        return None
    prefix, path = "\n".join(lines[1:-2]), lines[-2]
    # Relative to `directory` as git gives it, never resolved: --path-format=absolute would give
    # the real path, past a link the file itself may be.
    return Path(os.path.normpath(directory / path)), prefix


def _prefix(directory: Path) -> str | None:
    where = _exclude_file(directory)
    return where[1] if isinstance(where, tuple) else None


def _anchored(prefix: str, pattern: str) -> str | None:
    """`pattern` as a line of the exclude file that matches it under `prefix` only."""
    if "\n" in prefix or "\r" in prefix:
        return None
    escaped = _GLOB.sub(r"\\\1", prefix)
    if escaped.endswith(" /"):
        escaped = escaped[:-2] + "\\ /"  # git strips an unescaped trailing space
    return "/" + escaped + pattern


class NotAppendable(OSError):
    """The exclude file is none precompact appends to (a link, not a regular file, too large); its
    strerror says which, in precompact's words."""


def _append(exclude_file: Path, lines: list[str]) -> tuple[str, ...]:
    """Appends the lines the file does not hold yet; never through a symbolic link, never to a
    file that is not a regular one (NotAppendable)."""
    exclude_file.parent.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(exclude_file, os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        with exclude_file.open("x", encoding="utf-8") as created:  # O_EXCL: never through a link
            created.write("".join(line + "\n" for line in lines))
        return tuple(lines)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise NotAppendable(errno.ELOOP, "it is a symbolic link") from None
        raise
    with os.fdopen(descriptor, "r+b") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise NotAppendable(errno.EINVAL, "it is not a regular file")
        held = file.read(MAX_EXCLUDE_BYTES + 1)
        if len(held) > MAX_EXCLUDE_BYTES:
            raise NotAppendable(errno.EFBIG, f"it is over {MAX_EXCLUDE_BYTES} bytes")
        present = set(held.decode("utf-8", "replace").splitlines())
        missing = [line for line in dict.fromkeys(lines) if line not in present]
        if missing:
            separator = b"\n" if held and not held.endswith(b"\n") else b""
            file.write(separator + "".join(line + "\n" for line in missing).encode("utf-8"))
        return tuple(missing)


def _ignored(directory: Path, wanted: tuple[Kept, ...]) -> set[str] | str:
    """The probes git ignores now, as git's own rules say (check-ignore reads the index too: a
    tracked file is not ignored, whatever the patterns)."""
    try:
        done = git_env.run(
            directory,
            "-c",
            "core.quotePath=false",
            "check-ignore",
            "--",
            *(k.probe for k in wanted),
            timeout=GIT_SECONDS,
        )
    except (OSError, processes.TimeoutExpired) as e:
        return f"git could not check what it ignores ({quoting.inline(str(e))})"
    if done.returncode not in (0, 1):
        return f"git could not check what it ignores: {done.stderr.strip().splitlines()[-1:] or done.returncode}"
    return set(done.stdout.splitlines())
