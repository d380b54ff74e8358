"""What each page of the viewer shows, gathered from the library through its facade (`api`) and
nothing else: the index, the verifier's report (verify), a savepoint loaded and checked as
`resurrect` loads it, its entries as `show` prints them and search as `recall` runs it, and what
compaction dropped. No web library is imported here; `app` renders these values, and every text
in them is rendered escaped."""

from __future__ import annotations

import hashlib
import re
import threading
import time
import traceback
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from datetime import UTC, datetime

from precompact import api
from precompact.boundary import quoting
from precompact.config.settings import Config
from precompact.errors import PrecompactError
from precompact.local.savepoint_log import Savepoint
from precompact.local.snapshot import LoadedFile
from precompact.recall import fulltext as recall
from precompact.restore import dropped as dropping
from precompact.restore import resurrect as resurrection
from precompact.verifier import verdicts
from precompact.verifier import verify as verification

PAGE_ENTRIES = 50
LAST_PAGE = 1 << 62  # asks for a conversation's last page, however many it has
# When a savepoint's page shows itself without its list of what compaction dropped, if the list
# is not made by then (from the request's start): a few MB's list is, a 100 MB one's is not.
DROPPED_DEADLINE_SECONDS = 0.8
# How long the verifier's report stands at most before a page asks for a new one (its run reads
# git and the chain: a second for a thousand savepoints, in the background).
VERDICTS_STAND_SECONDS = 30.0
DIFF_SHOWN = 200
EXCERPT_CHARS = 240
_REDACTION = re.compile(r"\[REDACTED:[\w.-]+\]")
# An entry's text on a conversation page stops after this many characters (what the MCP tool
# `show` gives at most by default), with a link to the entry's own page, which shows it whole.
ENTRY_CHARS = recall.DEFAULT_BUDGET
# How far from the cut a redaction mark that straddles it is looked for (longer marks are cut).
_MARK_CHARS = 64
# The layers as the page names them, and as the verifier does.
LAYERS = {"local": verdicts.SNAPSHOT, "git": verdicts.GIT, "chain": verdicts.CHAIN}


class ViewerError(PrecompactError):
    """A page asked for something the project does not hold; the message says what."""


# --- verdicts ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Checked:
    """One run of the verifier: its report (or why there is none), when it started, and what of
    logs/ it read as it stood then."""

    report: verification.Report | None
    error: str | None
    at: datetime
    started: float  # time.monotonic() at its start
    read: tuple[str, ...] | None  # None: logs/ could not be looked at

    @property
    def as_of(self) -> str:
        return _as_of(self.at)

    def of(self, s: Savepoint) -> dict[str, verdicts.Check]:
        """The verifier's verdict on each layer of the savepoint, by the name the page gives the
        layer."""
        found = (
            self.report.verdicts_of(s.instance, s.sequence)
            if self.report is not None
            else api.verdicts_not_run(self.error or "the verifier gave no report")
        )
        return {name: found[layer] for name, layer in LAYERS.items()}


class Verdicts:
    """The verifier's report on every savepoint (`precompact verify`), made in the background:
    reading git and the chain takes longer than a page may. A report stands while what it read of
    logs/ (the index, the snapshots, the chunks) is unchanged and no page's own check of a
    savepoint contradicts it; a page asks for a new one once it no longer stands, or once it is
    VERDICTS_STAND_SECONDS old (the remote's branch and the chain change without a trace here),
    and shows a report's verdicts only while it stands, with the time it was made."""

    def __init__(self, config: Config):
        self._config = config
        self._lock = threading.Lock()
        self._finished = threading.Event()
        self._latest: Checked | None = None
        self._contradicted: Checked | None = None
        self._running = False
        with self._lock:
            self._start()

    def _start(self) -> None:
        self._running = True
        self._finished.clear()
        threading.Thread(target=self._run, name="precompact-view-verify", daemon=True).start()

    def _run(self) -> None:
        at, started = datetime.now(UTC), time.monotonic()
        read, report, error = _read_here(self._config), None, None
        try:
            report = api.verify(self._config)
        except PrecompactError as e:
            error = str(e)
        except Exception as e:  # noqa: BLE001 -- a bug: its traceback goes to the terminal, the page says so
            traceback.print_exc()
            error = f"the verifier stopped: {type(e).__name__}: {quoting.inline(str(e))}"
        with self._lock:
            self._latest = Checked(report, error, at, started, read)
            self._running = False
        self._finished.set()

    def wait(self, seconds: float) -> bool:
        """Whether the run under way (or the last) finished within `seconds`."""
        return self._finished.wait(seconds)

    def current(self) -> Checked | None:
        """The newest report while it stands, else None ("checking…"); asks for a new one when it
        no longer stands or is old."""
        read = _read_here(self._config)
        with self._lock:
            latest = self._latest
            stands = latest is not None and latest.read == read and latest is not self._contradicted
            old = latest is not None and time.monotonic() - latest.started > VERDICTS_STAND_SECONDS
            if not self._running and (not stands or old):
                self._start()
            return latest if stands else None

    def contradicted(self, checked: Checked) -> None:
        """A page's own check of a savepoint contradicts `checked`: it no longer stands, and a new
        report is asked for."""
        with self._lock:
            if self._latest is checked:
                self._contradicted = checked
                if not self._running:
                    self._start()


def _read_here(config: Config) -> tuple[str, ...] | None:
    try:
        return api.verified_here(config)
    except (PrecompactError, OSError):
        return None


def _as_of(at: datetime) -> str:
    return at.strftime("%H:%M:%S UTC")


@dataclass(frozen=True)
class Shown:
    """The verdicts a page shows of one savepoint: each layer's (None: "checking…"), and when each
    was checked."""

    layers: dict[str, verdicts.Check | None]
    when: dict[str, str]
    not_backed_up: bool

    @property
    def as_of(self) -> list[str]:
        """When they were checked, the layers checked together named together: ["as of 18:50:02
        UTC"], or ["local as of 18:52:10 UTC", "git, chain as of 18:50:02 UTC"]."""
        together: dict[str, list[str]] = {}
        for name, when in self.when.items():
            together.setdefault(when, []).append(name)
        if len(together) == 1:
            return [f"as of {when}" for when in together]
        return [f"{', '.join(names)} as of {when}" for when, names in together.items()]


def reported(checked: Checked | None, s: Savepoint) -> Shown | None:
    """The verifier's verdicts on the savepoint, as the timeline shows them; None while no report
    stands."""
    if checked is None:
        return None
    layers = checked.of(s)
    return Shown(dict(layers), dict.fromkeys(LAYERS, checked.as_of), api.not_backed_up(layers["git"], s))


def on_its_page(found: Verdicts, checked: Checked | None, page: SavepointPage) -> Shown:
    """The verdicts a savepoint's page shows. The page's own checks are as new as the page: they
    hashed the bytes it shows (local), and read the remote and the chain where this machine's copy
    was altered (git's copy is shown); the index's record of git and the chain is no check of
    them. Per layer, a check that contradicts (FAILED, not on the remote) is shown over one that
    does not, whichever is newer; else the verifier's, else the page's. A page's check that
    contradicts the verifier's report takes its standing: a new report is asked for."""
    copies = [page.checks[name] for name in verdicts.LOCAL_COPIES if name in page.checks]
    local = next((c for c in copies if c.status == verdicts.FAILED), page.checks.get("integrity"))
    read_now = {"local": local} | (
        {name: page.checks.get(LAYERS[name]) for name in ("git", "chain")} if page.copy_note is not None else {}
    )
    now = _as_of(page.checked_at)
    reported = checked.of(page.savepoint) if checked is not None else {}
    layers: dict[str, verdicts.Check | None] = {}
    when: dict[str, str] = {}
    for name in LAYERS:
        theirs = (reported[name], checked.as_of) if checked is not None else None
        mine = read_now.get(name)
        ours = (mine, now) if mine is not None else None
        candidates = [c for c in (theirs, ours) if c is not None]
        # What says against a "verified" (FAILED, not on the remote) is shown over it, whichever
        # is newer; the page's own only where the report does not (then the report is stale).
        chosen = next(
            (c for c in candidates if c[0].status in (verdicts.FAILED, verdicts.NOT_ON_REMOTE)), theirs or ours
        )
        if checked is not None and ours is not None and chosen is ours:
            found.contradicted(checked)
        if chosen is not None:
            layers[name], when[name] = chosen
        else:
            layers[name] = None
    git = layers["git"]
    return Shown(layers, when, git is not None and api.not_backed_up(git, page.savepoint))


# --- the timeline -----------------------------------------------------------------------------


@dataclass
class Session:
    instance: str
    session_id: str | None
    savepoints: list[Savepoint] = field(default_factory=list)


def timeline(config: Config) -> tuple[list[Session], list[int]]:
    """The project's savepoints, by instance and session, in the order they were made; and the
    index lines that do not parse."""
    savepoints, bad_lines = api.status(config)
    sessions: dict[tuple[str, str | None], Session] = {}
    for s in savepoints:
        key = (s.instance, s.session_id)
        sessions.setdefault(key, Session(s.instance, s.session_id)).savepoints.append(s)
    return list(sessions.values()), bad_lines


def savepoint(config: Config, instance: str, sequence: int) -> Savepoint:
    found = next((s for s in api.savepoints(config, instance) if s.sequence == sequence), None)
    if found is None:
        raise ViewerError(f"{instance} has no savepoint {sequence}")
    return found


# --- a savepoint --------------------------------------------------------------------------------


@dataclass
class SavepointPage:
    savepoint: Savepoint
    checks: dict[str, verdicts.Check]
    brief: str
    summary: str | None
    dropped: dropping.Dropped | None
    refused: str | None  # why "dropped" is not shown
    listing: bool  # "dropped" is still being listed
    files: list[tuple[str, str]]  # files in play: name, what the snapshot holds of it
    edited: list[str]
    entries: int | None  # known once "dropped" is listed
    copy_note: str | None  # git's copy is shown in place of an altered local one
    checked_at: datetime  # when its checks were made


class DroppedLists:
    """What compaction dropped, per savepoint, the first time its page asks: the list the worker
    kept for it, read at once when its key holds (restore.dropped_store), else listed in the
    background (it reads the whole history: seconds for 100 MB, which the page does not wait
    for); remembered. A savepoint's bytes never change once checked, so its list changes only
    with its summary."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="precompact-view-dropped")
        self._known: dict[tuple[str, int, str, str | None], Future[dropping.Dropped]] = {}

    def of(self, config: Config, found: resurrection.Resurrection, wait: float) -> dropping.Dropped | None:
        """The list, once made; None if it takes longer than `wait` seconds. A refusal (the
        savepoint failed a check) is raised and not remembered: the next visit checks again."""
        s = found.savepoint
        key = (s.instance, s.sequence, s.snapshot_hash, s.compact_summary)
        with self._lock:
            listed = self._known.get(key)
        if listed is None:
            kept = api.kept_dropped(config, found)
            with self._lock:
                if key not in self._known:
                    if kept is not None:
                        self._known[key] = Future()
                        self._known[key].set_result(kept)
                    else:
                        self._known[key] = self._listing.submit(api.dropped_from, config, found)
                listed = self._known[key]
        try:
            return listed.result(timeout=wait)
        except FutureTimeout:
            return None
        except PrecompactError:
            with self._lock:
                if self._known.get(key) is listed:
                    del self._known[key]
            raise


def savepoint_page(config: Config, instance: str, sequence: int, lists: DroppedLists) -> SavepointPage:
    """A savepoint loaded and checked as `precompact resurrect` does it, from this machine only;
    what compaction dropped, if its list is made in time. Refused (NotVouched) unless a root
    vouches for it: its brief, files and list are what it holds."""
    started, checked_at = time.monotonic(), datetime.now(UTC)
    found = api.from_this_machine(config, instance, sequence)
    files = sorted((name, _file_note(info)) for name, info in found.document.loaded_files.items())
    recent = api.recent(found)
    brief = api.render_resurrection(found, "brief")
    try:
        dropped = lists.of(config, found, max(0.0, started + DROPPED_DEADLINE_SECONDS - time.monotonic()))
        refused = None
    except PrecompactError as e:
        dropped, refused = None, str(e)
    return SavepointPage(
        found.savepoint,
        found.checks,
        brief,
        dropped.summary if dropped else found.savepoint.compact_summary,
        dropped,
        refused,
        dropped is None and refused is None,
        files,
        recent.edited,
        dropped.entries if dropped else None,
        api.copy_note(found),
        checked_at,
    )


def _file_note(info: LoadedFile) -> str:
    if info.excluded:
        return "excluded"
    if info.outside_project:
        return "outside the project"
    if info.problem is not None:
        return info.problem
    return "?" if info.size is None else f"{info.size} bytes, {info.source or '?'}"


# --- the conversation, paged ----------------------------------------------------------------


@dataclass(frozen=True)
class Piece:
    text: str
    redacted: bool  # a `[REDACTED:kind]` mark, shown as such


@dataclass
class ShownEntry:
    position: int
    role: str
    tool: str | None
    time: str | None
    pieces: list[Piece]
    bookkeeping: str | None = None  # the kind of the agent's own record it is; None: conversation
    more: int = 0  # characters of its text after the cut (ENTRY_CHARS); 0: shown whole


@dataclass(frozen=True)
class Run:
    """Entries next to each other that are all bookkeeping (folded behind a toggle), or none."""

    bookkeeping: bool
    entries: list[ShownEntry]

    @property
    def kinds(self) -> str:
        return ", ".join(dict.fromkeys(e.bookkeeping for e in self.entries if e.bookkeeping))


@dataclass
class ConversationPage:
    instance: str
    sequence: int
    page: int
    pages: int | None  # None: more pages follow, how many is not counted yet
    entries: list[ShownEntry]
    copy_note: str | None = None  # git's copy is shown in place of an altered local one

    @property
    def runs(self) -> list[Run]:
        """The entries in runs, so the page folds the agent's record-keeping (kilobytes of
        attachments and tool listings) and the conversation's turns stay near each other."""
        runs: list[Run] = []
        for entry in self.entries:
            folded = entry.bookkeeping is not None
            if runs and runs[-1].bookkeeping == folded:
                runs[-1].entries.append(entry)
            else:
                runs.append(Run(folded, [entry]))
        return runs


class Histories:
    """Where each entry of a savepoint's history lies in its snapshot, found as far as a page
    needs and remembered per snapshot hash: every page checks the bytes against that hash before
    reading them, and the same bytes hold their entries at the same places. Numbered from 1, as
    `recall`, `show` and restore.dropped number them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[str, tuple[list[tuple[int, int]], bool]] = {}

    def places(self, found: resurrection.Resurrection, wanted: int) -> tuple[list[tuple[int, int]], bool]:
        """The places of the first `wanted` entries at least (all of them if fewer), and whether
        they are all the history holds."""
        digest = found.savepoint.snapshot_hash
        with self._lock:
            located, complete = self._known.get(digest, ([], False))
            if not complete and len(located) < wanted:
                after = located[-1][1] if located else None
                try:
                    for place, _ in found.contents.located_entries(after):
                        located.append(place)
                        if len(located) >= wanted:
                            break
                    else:
                        complete = True
                except ValueError as e:
                    raise ViewerError(
                        f"savepoint {found.savepoint.sequence}'s history cannot be read: {quoting.inline(str(e))}"
                    ) from None
                self._known[digest] = (located, complete)
            return located, complete


def conversation_page(
    config: Config, histories: Histories, instance: str, sequence: int, page: int
) -> ConversationPage:
    """Page `page` (from 1; LAST_PAGE or beyond: the last) of a savepoint's entries, as
    `precompact show` prints them, read from its snapshot once the verifier has checked it (as
    `resurrect` loads it) and vouched for it, on every page: a snapshot that fails a check or
    that no root vouches for is refused (`Resurrection.check_vouched`). The history is read only
    as far as the page (and one entry more, to know whether another page follows)."""
    found = api.from_this_machine(config, instance, sequence)
    found.check_vouched()  # refused also where the page reads no entry (past the end)
    page = max(page, 1)
    places, complete = histories.places(found, page * PAGE_ENTRIES + 1)
    pages = max(1, -(-len(places) // PAGE_ENTRIES)) if complete else None
    page = min(page, pages or page)
    first = (page - 1) * PAGE_ENTRIES + 1
    last = min(len(places), first + PAGE_ENTRIES - 1)
    entries = _shown(found, places, first, last, ENTRY_CHARS)
    return ConversationPage(instance, sequence, page, pages, entries, api.copy_note(found))


@dataclass
class EntryPage:
    instance: str
    sequence: int
    entry: ShownEntry
    copy_note: str | None = None


def entry_page(config: Config, histories: Histories, instance: str, sequence: int, position: int) -> EntryPage:
    """One entry of a savepoint whole (a conversation page cuts a long one), checked and read
    as a conversation page is."""
    found = api.from_this_machine(config, instance, sequence)
    found.check_vouched()
    places, _ = histories.places(found, position)
    if position > len(places):
        raise ViewerError(f"savepoint {sequence} holds entries 1 to {len(places)}")
    [entry] = _shown(found, places, position, position, None)
    return EntryPage(instance, sequence, entry, api.copy_note(found))


def _shown(
    found: resurrection.Resurrection, places: list[tuple[int, int]], first: int, last: int, cut: int | None
) -> list[ShownEntry]:
    """Entries `first` to `last`, each with its role, tool and text as recall indexed them (a
    text longer than `cut` cut there). A tool result is named by its call, in the entries just
    before it: the page before is read for them."""
    tool_names: dict[str, str] = {}
    shown = []
    for position in range(max(1, first - PAGE_ENTRIES), last + 1):
        raw = found.contents.entry_at(places[position - 1])
        role, tool, time, text = api.shown_entry(raw, tool_names)
        if position >= first:
            kept = text if cut is None else _cut(text, cut)
            more = len(text) - len(kept)
            shown.append(ShownEntry(position, role, tool, _iso(time), pieces(kept), api.bookkeeping_kind(raw), more))
    return shown


def _cut(text: str, limit: int) -> str:
    """`text`'s first `limit` characters, or fewer so that no redaction mark is cut in two."""
    if len(text) <= limit:
        return text
    end = limit
    for mark in _REDACTION.finditer(text, max(0, limit - _MARK_CHARS), limit + _MARK_CHARS):
        if mark.start() < limit < mark.end():
            end = mark.start()
    return text[:end]


def _iso(unix: float | None) -> str | None:
    return None if unix is None else datetime.fromtimestamp(unix, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def page_of(position: int) -> int:
    return (max(position, 1) - 1) // PAGE_ENTRIES + 1


def pieces(text: str) -> list[Piece]:
    """`text` cut at its redaction marks, so the page can show each as a redaction."""
    found, at = [], 0
    for mark in _REDACTION.finditer(text):
        if mark.start() > at:
            found.append(Piece(text[at : mark.start()], False))
        found.append(Piece(mark.group(), True))
        at = mark.end()
    if at < len(text) or not found:
        found.append(Piece(text[at:], False))
    return found


# --- search, diff, export ---------------------------------------------------------------------


def search(config: Config, query: str) -> recall.Results:
    return api.recall(config, query)


@dataclass
class Diff:
    instance: str
    first: Savepoint
    second: Savepoint
    only_first: list[tuple[int, str]]  # entries (position, excerpt) the first holds and the second does not
    only_second: list[tuple[int, str]]
    counts: tuple[int, int]  # how many of each, all told
    files_added: list[str]
    files_gone: list[str]


def diff(config: Config, instance: str, first: int, second: int) -> Diff:
    """What two savepoints of an instance hold differently: entries (compared by their bytes)
    and files in play."""
    a = api.from_this_machine(config, instance, first)
    b = api.from_this_machine(config, instance, second)

    def digests(found: resurrection.Resurrection) -> list[tuple[bytes, int, object]]:
        return [
            (hashlib.blake2b(found.contents.entry_bytes(place), digest_size=16).digest(), position, entry)
            for position, (place, entry) in enumerate(found.contents.located_entries(), start=1)
        ]

    left, right = digests(a), digests(b)
    left_set, right_set = {d for d, _, _ in left}, {d for d, _, _ in right}
    only_a = [(p, _excerpt(e)) for d, p, e in left if d not in right_set]
    only_b = [(p, _excerpt(e)) for d, p, e in right if d not in left_set]
    files_a, files_b = set(a.document.loaded_files), set(b.document.loaded_files)
    return Diff(
        instance,
        a.savepoint,
        b.savepoint,
        only_a[:DIFF_SHOWN],
        only_b[:DIFF_SHOWN],
        (len(only_a), len(only_b)),
        sorted(files_b - files_a),
        sorted(files_a - files_b),
    )


def _excerpt(entry: object) -> str:
    role, tool, text = api.entry_facts(entry, {})
    flat = " ".join(text.split())
    head = f"{role}{' · ' + tool if tool else ''}: "
    return head + (flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1] + "…")


def export(config: Config, instance: str, sequence: int) -> bytes:
    """The savepoint's full document, as `precompact export` writes it."""
    return api.export(config, instance, sequence)
