"""This machine's registry of the projects precompact archives: the one owner of
`$XDG_DATA_HOME/precompact/registry.json` (default `~/.local/share/precompact/`).

A project is registered when precompact writes a savepoint in it (Layer 1, the hook's and
`savepoint`'s and `import`'s), and on `init`. `projects --forget` leaves a mark of the project (the
SHA-256 of its path, so that the file no longer names it), so that its next savepoint does not
register it again behind the user's back: only a command the user runs for that project
(`init`, `projects --add`) does, and meanwhile its savepoints keep nothing outside it (`forgotten`:
Layer 2 waits). The file names only where each project is and its instance
names: no conversation text, and nothing a search trusts (each project's savepoints are
still checked against this machine's record before a word of them is quoted). It is written whole
or not at all, 0600, through `boundary/private_file`; a new project is added under a short lock
on the registry alone, never on any project. Read back, it is outside input: a file that is not
the registry's shape is refused in one line naming how to rebuild it (`precompact projects
--rescan DIR`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson

from precompact.boundary import outside_json, private_file, quoting, small_file, user_roots
from precompact.config import settings as configuration
from precompact.errors import PrecompactError
from precompact.local import savepoint_log

REGISTRY_NAME = "registry.json"
LOCK_NAME = "registry.lock"
FORMAT = "precompact-projects/1"
MAX_BYTES = 16 << 20  # a registry of many thousand projects is far below this
_MARK = re.compile(r"[0-9a-f]{64}")
RESCAN_SKIPPED = frozenset({".git", "node_modules", ".venv", "__pycache__", "logs"})


class RegistryError(PrecompactError):
    """The registry cannot be read as precompact writes it; the message names the rebuild."""


@dataclass(frozen=True)
class Registered:
    path: Path  # the project's root, where its .precompact.toml is
    instances: tuple[str, ...]
    registered: str  # when this machine first registered it (UTC, ISO 8601)

    @property
    def logs(self) -> Path:
        return self.path / "logs"

    def present(self) -> bool:
        """Whether the project is still where it was registered (its configuration there)."""
        return os.path.lexists(self.path / configuration.CONFIG_NAME)


def data_directory() -> Path:
    """precompact's user-level data: <the data home>/precompact ($XDG_DATA_HOME, else
    ~/.local/share, as boundary/user_roots decides)."""
    return Path(user_roots.data_home()) / "precompact"


def registry_path() -> Path:
    return data_directory() / REGISTRY_NAME


def _rebuild_hint() -> str:
    return (
        "rebuild it with `precompact projects --rescan DIR` (DIR: the directory your projects are under, e.g. ~): "
        "it registers again every project there this machine archived"
    )


@dataclass(frozen=True)
class _Contents:
    projects: list[Registered]
    forgotten: list[str]  # marks of the projects `--forget` removed, that a savepoint does not register again


def projects() -> list[Registered]:
    """Every registered project, in the order registered (none when there is no registry yet).
    RegistryError when the file is not the registry's shape."""
    return _read().projects


def _read() -> _Contents:
    path = registry_path()
    try:
        data, _ = small_file.read(path, MAX_BYTES, follow_links=False)
    except FileNotFoundError:
        return _Contents([], [])
    except small_file.TooLarge:
        raise RegistryError(
            f"the project registry {path} is damaged (over {MAX_BYTES} bytes); {_rebuild_hint()}"
        ) from None
    except small_file.Refused as e:
        raise RegistryError(f"the project registry {path} {e.reason}; {_rebuild_hint()}") from None
    except OSError as e:
        raise RegistryError(
            f"the project registry {path} cannot be read ({quoting.os_error(e)}); {_rebuild_hint()}"
        ) from None
    try:
        return _parsed(outside_json.loads(data))
    except (ValueError, TypeError, KeyError) as e:
        raise RegistryError(
            f"the project registry {path} is damaged ({quoting.inline(str(e))}); {_rebuild_hint()}"
        ) from None


def _parsed(document: object) -> _Contents:
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} document")
    listed = document.get("projects")
    if not isinstance(listed, list):
        raise TypeError("no list of projects")
    found = []
    for item in listed:
        if not isinstance(item, dict):
            raise TypeError("a project that is not an object")
        path, instances, registered = item["path"], item["instances"], item["registered"]
        if not isinstance(path, str) or not os.path.isabs(path) or "\0" in path:
            raise ValueError("a project path that is not absolute")
        if not isinstance(instances, list) or not all(isinstance(i, str) and i.strip() for i in instances):
            raise ValueError("instances that are not names")
        if not isinstance(registered, str):
            raise TypeError("a registration time that is not text")
        found.append(Registered(Path(path), tuple(instances), registered))
    forgotten = document.get("forgotten", [])  # absent from a registry written before forgetting was kept
    if not isinstance(forgotten, list) or not all(isinstance(m, str) and _MARK.fullmatch(m) for m in forgotten):
        raise ValueError("forgotten projects that are not marks")
    return _Contents(found, forgotten)


def _mark(where: Path) -> str:
    """What the registry keeps of a forgotten project: the SHA-256 of its path, not the path."""
    return hashlib.sha256(os.fsencode(where)).hexdigest()


def _document(found: Iterable[Registered], forgotten: Iterable[str]) -> bytes:
    listed = [{"path": str(p.path), "instances": list(p.instances), "registered": p.registered} for p in found]
    document = {"format": FORMAT, "projects": listed, "forgotten": list(forgotten)}
    return orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """The registry's own lock, held only while a change is read, made and written."""
    with private_file.locked(data_directory() / LOCK_NAME):
        yield


def _where(root: Path) -> Path:
    """A project's path as the registry keeps it: absolute, its links resolved."""
    return Path(os.path.realpath(root))


def register(root: Path, instance: str) -> bool:
    """Adds the project at `root` with `instance` unless it is there already, or was forgotten
    (a savepoint's registration, and a rescan's); whether it added. Reading is all it costs once
    registered: the file is written only for a new project or instance."""
    return _register(_where(root), instance, asked=False)


def add(root: Path, instance: str) -> bool:
    """Adds the project at `root` with `instance`, a forgotten one too, and clears its forgotten
    mark: a command the user ran for that project (`init`, `projects --add`); whether it added."""
    return _register(_where(root), instance, asked=True)


def _register(where: Path, instance: str, asked: bool) -> bool:
    if not _changes(_read(), where, instance, asked):
        return False
    with _locked():
        contents = _read()
        if not _changes(contents, where, instance, asked):
            return False
        found = contents.projects
        added = not _holds(contents, where, instance)
        if added:
            now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            known = next((p for p in found if p.path == where), None)
            if known is None:
                found.append(Registered(where, (instance,), now))
            else:
                found = [Registered(p.path, (*p.instances, instance), p.registered) if p is known else p for p in found]
        forgotten = [m for m in contents.forgotten if m != _mark(where)]
        private_file.replace(registry_path(), _document(found, forgotten))
    return added


def _changes(contents: _Contents, where: Path, instance: str, asked: bool) -> bool:
    """Whether registering `instance` at `where` changes the registry: a forgotten project only
    when the user asked, any other when it is not listed with that instance yet."""
    if _mark(where) in contents.forgotten:
        return asked
    return not _holds(contents, where, instance)


def _holds(contents: _Contents, where: Path, instance: str) -> bool:
    return any(p.path == where and instance in p.instances for p in contents.projects)


def registered(root: Path) -> Registered | None:
    """The project registered at `root` (as given, or with its links resolved, so a project no
    longer there can be named), None when there is none."""
    return _named(projects(), root)


def _named(found: list[Registered], root: Path) -> Registered | None:
    return next((p for p in found if p.path in (Path(os.path.abspath(root)), _where(root))), None)


def forgotten(root: Path) -> Path | None:
    """The path of the project at `root` (as given, or with its links resolved) if `projects
    --forget` marked it forgotten and nothing registered it since; None otherwise. Its
    savepoints keep nothing outside it until `init` or `projects --add` there (Layer 2 waits).
    RegistryError when the registry cannot be read."""
    marks = set(_read().forgotten)
    return next((where for where in (Path(os.path.abspath(root)), _where(root)) if _mark(where) in marks), None)


def keeps_outside(root: Path) -> bool:
    """Whether precompact may keep copies of the text of the project at `root` outside it (the
    documents of its Codex, Gemini and OpenCode sessions, its git directory): not while it is
    forgotten (`forgotten`). True when the registry cannot be read: it then forgets nothing, as
    `layers_wait` does (`precompact projects` names what is wrong with it)."""
    try:
        return forgotten(root) is None
    except RegistryError:
        return True


def layers_wait(root: Path) -> str | None:
    """Why Layer 2 (and Layer 3, whose record names its commit) waits in the project at `root`,
    naming the fix: it is forgotten, so its git directory is neither made nor used (nothing of it
    is kept outside it, nothing pushed) and its savepoints stay in its logs/ until `projects
    --add` or `init` there. None when it is not forgotten, or the registry cannot be read (it
    then forgets nothing: `precompact projects` names what is wrong with it)."""
    try:
        where = forgotten(root)
    except RegistryError:
        return None
    if where is None:
        return None
    return (
        f"waits: {where} is forgotten on this machine (`precompact projects --forget`), so precompact keeps "
        f"nothing of it outside it and pushes nothing; its savepoints stay in its logs/ until "
        f"`precompact projects --add {shlex.quote(str(where))}`"
    )


def forget(root: Path) -> Registered | None:
    """Removes the project registered at `root` (named as `registered` takes it) and marks it
    forgotten, so that its next savepoint does not register it again; the entry removed, None
    when none was."""
    with _locked():
        contents = _read()
        gone = _named(contents.projects, root)
        if gone is None:
            return None
        kept = (p for p in contents.projects if p is not gone)
        forgotten = [*(m for m in contents.forgotten if m != _mark(gone.path)), _mark(gone.path)]
        private_file.replace(registry_path(), _document(kept, forgotten))
    return gone


def rescan(directory: Path) -> list[Registered]:
    """Registers every project under `directory` whose logs/ holds a savepoint this machine
    wrote (its index line carries this machine's tag), but a forgotten one: the registry rebuilt
    after damage. A damaged registry is replaced, keeping the forgotten marks it still holds, so
    a forgotten project stays forgotten; one whose marks cannot be read is refused (RegistryError
    naming how to set it aside), never dropped unsaid. Returns the projects added."""
    with contextlib.suppress(RegistryError):
        projects()
        return _rescan(directory)
    with _locked():
        private_file.replace(registry_path(), _document([], _forgotten_of_damaged()))
    return _rescan(directory)


def _forgotten_of_damaged() -> list[str]:
    """The forgotten marks a damaged registry still holds: those of its "forgotten" list (an entry
    that is not a mark matches no project's, so leaving it out forgets nothing). RegistryError
    when there is no such list to read (the file is not a JSON object, or cannot be opened): the
    projects the user forgot would be registered again behind their back."""
    path = registry_path()
    try:
        data, _ = small_file.read(path, MAX_BYTES, follow_links=False)
        document = outside_json.loads(data)
    except (OSError, ValueError):
        document = None
    forgotten = document.get("forgotten", []) if isinstance(document, dict) else None
    if not isinstance(forgotten, list):
        raise RegistryError(
            f"the project registry {path} is damaged and which projects you forgot cannot be read from it, so a "
            f"rescan would register them again: set it aside (`mv {shlex.quote(str(path))} "
            f"{shlex.quote(str(path) + '.damaged')}`) and run `precompact projects --rescan DIR` again, then "
            "`precompact projects --forget PATH` for each project to forget again"
        )
    return [mark for mark in forgotten if isinstance(mark, str) and _MARK.fullmatch(mark)]


def _rescan(directory: Path) -> list[Registered]:
    added = []
    for top, directories, files in os.walk(directory):
        directories[:] = sorted(d for d in directories if d not in RESCAN_SKIPPED and not d.startswith("."))
        if configuration.CONFIG_NAME not in files:
            continue
        root = Path(top)
        try:
            mine = {s.instance for s in savepoint_log.read(root / "logs").savepoints if s.written_here}
        except (OSError, PrecompactError):  # a logs/ precompact may not read (a link out): not this machine's
            continue
        for instance in sorted(mine):
            if register(root, instance):
                added.append(Registered(_where(root), (instance,), ""))
    return added
