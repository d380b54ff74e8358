"""What compaction dropped: the facts of a savepoint's history before the compaction that Claude
Code's compaction summary does not contain, each with the entry it comes from.

The facts are the user's requests and the constraints among them (verbatim), the files read and
edited, the commands run and the failed ones, the error messages the tools returned, and the
identifiers said in the conversation: paths, URLs, code names (`snake_case`, `camelCase`,
`PascalCase`, `name(`, a `backticked` span) and numbers of three digits or more.

"Contains" is decided by matching alone, never by a model (docs/viewer.md): the summary contains
a fact when it holds the fact's text exactly (not as part of a longer word), or when the fact's words, normalised (Unicode NFKC,
case-folded, curly quotes and dashes made plain, every run of characters that are not letters,
digits or `_` made one space), appear as a run of whole words in the summary normalised the same
way. A path also counts as contained when the summary names it relative to the session's working
directory, or by its file name. A fact the summary says in other words is listed: the list errs
towards showing too much.

The entries are the savepoint's as its snapshot holds them, redacted when they were saved (for a
savepoint made after its compaction, local/capture.py, those before its last boundary); the
summary is the one PostCompact recorded (redacted too), or, when none was recorded, the summary
entry Claude Code wrote after the compaction: after that boundary, or in the history a later
savepoint of the same session holds.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import PurePosixPath

from precompact.boundary import quoting
from precompact.config.settings import Config
from precompact.local import capture, savepoint_log
from precompact.restore import resurrect as resurrection
from precompact.transcript import conversation

# What a fact is, in the order a reader wants them.
KINDS = (
    "request",
    "constraint",
    "file edited",
    "file read",
    "failed command",
    "command",
    "error",
    "path",
    "url",
    "name",
    "number",
)
READ_TOOLS = {"Read": "file_path", "NotebookRead": "notebook_path"}
# A request this short ("yes", "go on") carries no fact of its own.
MIN_REQUEST_WORDS = 4
FACT_CHARS = 2_000  # a fact's text beyond this is cut: a request pasted with a whole log is still one fact
CONSTRAINT_WORDS = re.compile(
    r"\b(must|never|always|only|do not|don't|dont|should not|shouldn't|must not|mustn't|without|avoid|keep|"
    r"make sure|no more than|at most|at least|instead of|not allowed|forbidden|required?)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
# One scan finds every identifier, left to right, so what one kind takes (a URL, a path) is not
# read again as another (the names and numbers inside it).
_IDENTIFIER = re.compile(
    r"(?P<url>\bhttps?://[^\s<>\"'`)\]]+)"
    r"|(?P<path>(?<![\w/.:-])(?:~|\.{1,2})?/?[\w.@+-]+(?:/[\w.@+-]+)+|(?<![\w/.-])[\w-]+\.[A-Za-z]\w{0,7}\b)"
    r"|`(?P<ticked>[^`\n]{2,80})`"
    r"|(?P<function>\b[A-Za-z_][\w.]*(?=\())"
    r"|(?P<name>\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\b[a-z]+[0-9]*(?:[A-Z][a-z0-9]+)+\b|\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b)"
    r"|(?P<number>(?<![\w.])\d+(?:[.,]\d+)*(?!\w))"
)
_ERROR_LINE = re.compile(
    r"^\s*((?:[\w.]*(?:Error|Exception|Failure)|error(?:\[\w+\])?|fatal|FAILED|panicked at)\b[:\s].*)$",
    re.MULTILINE,
)
_PLAIN = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "‐": "-"})
_WORDS = re.compile(r"\w+")
# Word-like file extensions a sentence ends with are not paths ("e.g", "i.e").
_NOT_FILES = {"e.g", "i.e", "etc.", "vs."}


@dataclass(frozen=True)
class Fact:
    kind: str
    text: str  # verbatim, as the entry holds it (cut to FACT_CHARS)
    entry: int  # the entry's place in the savepoint's history, from 1 (recall's and show's numbering)
    detail: str | None = None  # a failed command's first error line


@dataclass
class Dropped:
    instance: str
    sequence: int
    summary: str | None  # the compaction summary compared against; None when there is none
    summary_source: str  # where it came from
    facts: list[Fact] = field(default_factory=list)  # the facts the summary does not contain
    kept: int = 0  # facts the summary contains
    entries: int = 0
    copy_note: str | None = None  # resurrect.copy_note: git's copy read in place of an altered local one

    def ref(self, fact: Fact) -> str:
        """The fact's entry as `precompact show` takes it."""
        return f"{self.sequence}:{fact.entry}"

    def by_kind(self) -> list[tuple[str, list[Fact]]]:
        """The facts grouped by kind, in the order of KINDS."""
        return [(kind, mine) for kind in KINDS if (mine := [f for f in self.facts if f.kind == kind])]

    def to_json(self) -> dict:
        return {
            "instance": self.instance,
            "sequence": self.sequence,
            "summary_source": self.summary_source,
            "summary": self.summary,
            "entries": self.entries,
            "kept": self.kept,
            "dropped": [{**asdict(f), "ref": self.ref(f)} for f in self.facts],
        }


# --- the rule ---------------------------------------------------------------------------------


def normalised(text: str) -> str:
    """`text` as the rule compares it: NFKC, case-folded, plain quotes and dashes, its words
    joined by single spaces."""
    return " ".join(_WORDS.findall(unicodedata.normalize("NFKC", text).translate(_PLAIN).casefold()))


class Summary:
    """A compaction summary, ready to be asked whether it contains a fact."""

    def __init__(self, text: str, cwd: str | None = None):
        self.text = text
        self._words = f" {normalised(text)} "
        self._cwd = cwd.rstrip("/") + "/" if cwd else None

    def contains(self, fact: Fact) -> bool:
        forms = [fact.text]
        if fact.kind in ("file read", "file edited", "path"):
            if self._cwd and fact.text.startswith(self._cwd):
                forms.append(fact.text[len(self._cwd) :])
            forms.append(PurePosixPath(fact.text).name)
        return any(self._holds(form) for form in forms if form)

    def _holds(self, form: str) -> bool:
        if re.search(rf"(?<!\w){re.escape(form)}(?!\w)", self.text):
            return True
        words = normalised(form)
        return bool(words) and f" {words} " in self._words


# --- the facts --------------------------------------------------------------------------------


def facts(entries: Iterable[object]) -> list[Fact]:
    """Every fact of a history (oldest first), each once, at the entry that first says it."""
    found: dict[tuple[str, str], Fact] = {}
    commands: dict[str, tuple[str, int]] = {}  # tool_use id -> (command, entry)

    def add(kind: str, text: str, entry: int, detail: str | None = None) -> None:
        text = text.strip()
        if not text or len(text) < 2:
            return
        key = (kind, normalised(text) or text)
        if key not in found:
            found[key] = Fact(kind, text[:FACT_CHARS], entry, detail)

    scanned: set[tuple[str, bool]] = set()

    def identifiers(text: str, position: int, numbers: bool) -> None:
        # A text said again holds the same identifiers, each already kept at its first entry.
        if (text, numbers) not in scanned:
            scanned.add((text, numbers))
            _identifiers(text, position, add, numbers)

    for position, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or _flagged(entry):
            continue
        request = conversation.user_text(entry)
        if request:
            if len(_WORDS.findall(request)) >= MIN_REQUEST_WORDS:
                add("request", request, position)
            for sentence in _SENTENCE.findall(request):
                if CONSTRAINT_WORDS.search(sentence) and len(_WORDS.findall(sentence)) >= 3:
                    add("constraint", sentence, position)
            identifiers(request, position, numbers=True)
        content = _content(entry)
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and entry.get("type") == "assistant" and isinstance(block.get("text"), str):
                identifiers(block["text"], position, numbers=True)
            elif kind == "tool_use":
                _tool_use(block, position, add, identifiers, commands)
            elif kind == "tool_result":
                _tool_result(block, position, add, commands, found)
    ordered = sorted(found.values(), key=lambda f: (KINDS.index(f.kind), f.entry))
    # A path named as a file read or edited is not listed again as a path.
    files = {f.text for f in ordered if f.kind in ("file read", "file edited")}
    return [f for f in ordered if not (f.kind == "path" and f.text in files)]


def _tool_use(block: dict, position: int, add, identifiers, commands: dict[str, tuple[str, int]]) -> None:
    name = block.get("name")
    given = block.get("input")
    arguments: dict = given if isinstance(given, dict) else {}
    if name in conversation.EDIT_TOOLS and isinstance(arguments.get(conversation.EDIT_TOOLS[name]), str):
        add("file edited", arguments[conversation.EDIT_TOOLS[name]], position)
    elif name in READ_TOOLS and isinstance(arguments.get(READ_TOOLS[name]), str):
        add("file read", arguments[READ_TOOLS[name]], position)
    elif name == "Bash" and isinstance(arguments.get("command"), str):
        if isinstance(block.get("id"), str):
            commands[block["id"]] = (arguments["command"], position)
        else:
            add("command", arguments["command"], position)
    else:
        for value in _strings(arguments):
            identifiers(value, position, numbers=False)


def _tool_result(block: dict, position: int, add, commands: dict[str, tuple[str, int]], found: dict) -> None:
    text = _result_text(block.get("content"))
    errors = [m.group(1).strip() for m in _ERROR_LINE.finditer(text)]
    use = block.get("tool_use_id")
    called = commands.pop(use, None) if isinstance(use, str) else None
    failed = block.get("is_error") is True
    if called is not None:
        command, at = called
        first = errors[0] if errors else next((line.strip() for line in text.splitlines() if line.strip()), "")
        if failed:
            add("failed command", command, at, first[:300] or None)
            found.pop(("command", normalised(command) or command), None)
        elif ("failed command", normalised(command) or command) not in found:
            add("command", command, at)
    for error in errors if failed or called is not None else errors[:3]:
        add("error", error[:300], position)


def _identifiers(text: str, position: int, add, numbers: bool) -> None:
    for found in _IDENTIFIER.finditer(text):
        kind, value = found.lastgroup, found.group(found.lastgroup or 0)
        if kind == "url":
            add("url", value.rstrip(".,;:!?"), position)
        elif kind == "path":
            path = value.rstrip(".,;:")
            if path.casefold() not in _NOT_FILES and not path.replace(".", "").isdigit():
                add("path", path, position)
        elif kind == "ticked":
            if " " not in value.strip() and "/" not in value:
                add("name", value, position)
            _identifiers(value, position, add, numbers)
        elif kind in ("function", "name"):
            add("name", value, position)
        elif kind == "number" and numbers and sum(c.isdigit() for c in value) >= 3:
            add("number", value, position)


def _flagged(entry: dict) -> bool:
    """Claude Code's own entries (the summary, meta lines, subagents'): nothing said in the session."""
    return entry.get("type") not in ("user", "assistant") or any(
        entry.get(flag) for flag in ("isSidechain", "isMeta", "isCompactSummary", "isVisibleInTranscriptOnly")
    )


def _content(entry: dict) -> object:
    message = entry.get("message")
    return message.get("content") if isinstance(message, dict) else None


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    return (
        "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
        if isinstance(content, list)
        else ""
    )


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def dropped_facts(entries: Iterable[object], summary: Summary | None) -> tuple[list[Fact], int]:
    """The facts of `entries` that `summary` does not contain (all of them without a summary),
    and how many it contains."""
    every = facts(entries)
    if summary is None:
        return every, 0
    missing = [f for f in every if not summary.contains(f)]
    return missing, len(every) - len(missing)


# --- a savepoint --------------------------------------------------------------------------------

RECORDED = "recorded by the PostCompact hook"
LATER_SAVEPOINT = "the summary entry in savepoint {} of the same session"
AFTER_BOUNDARY = "the summary entry after the compaction boundary in savepoint {}"
NONE_RECORDED = "none recorded (PostCompact did not run, or this savepoint was not a compaction)"


def of_savepoint(config: Config, instance: str | None = None, sequence: int | None = None) -> Dropped:
    """What compaction dropped from savepoint `sequence` of `instance` (default: the newest of the
    configured instance), read from its snapshot on this machine after the verifier checked it."""
    return of_resurrection(
        config,
        resurrection.from_this_machine(
            config, instance, sequence, of_compaction=sequence is None, git_when_altered=True
        ),
    )


def of_resurrection(config: Config, found: resurrection.Resurrection) -> Dropped:
    """What compaction dropped from a savepoint already loaded and checked; refused if it failed a
    check, unless only this machine's copy did and git's stood in for it (its `copy_note` says so)."""
    if not found.intact and not found.replaced_from_git:
        failed = next(f"{name}: {c.detail}" for name, c in found.checks.items() if c.status == resurrection.FAILED)
        raise resurrection.ResurrectError(
            f"savepoint {found.savepoint.sequence} of {found.instance} failed a check ({failed}); run `precompact verify`"
        )
    history = [entry for _, entry in found.contents.located_entries()]
    entries = history[: capture.before_compaction(found.savepoint, history)]
    text, source = _summary(config, found, history, len(entries))
    summary = Summary(text, found.document.cwd) if text else None
    missing, kept = dropped_facts(entries, summary)
    return Dropped(
        found.instance,
        found.savepoint.sequence,
        text,
        source,
        missing,
        kept,
        len(entries),
        resurrection.copy_note(found),
    )


def _summary(config: Config, found: resurrection.Resurrection, history: list, entries: int) -> tuple[str | None, str]:
    s = found.savepoint
    if s.compact_summary:
        return s.compact_summary, RECORDED
    if entries < len(history):  # made after the compaction: its summary entry follows the boundary
        text = _summary_entry(history[entries:])
        if text:
            return text, AFTER_BOUNDARY.format(s.sequence)
    later = [
        other
        for other in savepoint_log.savepoints(config.logs, found.instance)
        if other.sequence > s.sequence and s.session_id and other.session_id == s.session_id
    ]
    if later:
        after = resurrection.from_this_machine(config, found.instance, later[0].sequence)
        if after.intact:
            text = _summary_entry([entry for _, entry in after.contents.located_entries()][entries:])
            if text:
                return text, LATER_SAVEPOINT.format(later[0].sequence)
    return None, NONE_RECORDED


def _summary_entry(entries: list) -> str | None:
    """The text of the first compaction summary entry among `entries`."""
    for entry in entries:
        if isinstance(entry, dict) and entry.get("isCompactSummary"):
            # Claude Code marks it both ways; read as a user entry, it is the summary's text.
            text = conversation.user_text({**entry, "isCompactSummary": False, "isVisibleInTranscriptOnly": False})
            if text:
                return text
    return None


def render(report: Dropped) -> str:
    """The list as text, by kind; every fact quoted on one line, with its entry reference."""
    lines = [
        (
            f"savepoint {report.sequence} of {report.instance}: {len(report.facts)} fact(s) of {report.entries} entries "
            f"not in the compaction summary ({report.kept} in it); summary: {report.summary_source}"
        )
    ]
    for kind, mine in report.by_kind():
        lines.append(f"{kind} ({len(mine)}):")
        for fact in mine:
            detail = f" -> {quoting.inline(fact.detail)}" if fact.detail else ""
            lines.append(f"  [{report.ref(fact)}] {quoting.inline(fact.text)}{detail}")
    lines.append("`precompact show REF` prints an entry whole.")
    return "\n".join(lines)
