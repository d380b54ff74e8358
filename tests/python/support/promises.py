"""The map of the docs' promises (tests/promises.toml) against the docs and the tests it names:
what tests/python/test_promises.py checks and scripts/promises.py counts. A promise is quoted,
not numbered, so the map survives edits around it and fails, naming the entry, when its words
change."""

from __future__ import annotations

import ast
import hashlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

MAP = Path("tests/promises.toml")
# The sentence a doc uses to say a promise cannot be checked here; each one is a marker the map
# must hold, as an entry's `untested`, so a doc cannot excuse a promise the map does not know.
UNTESTED_MARKER = "not tested here:"
ENTRY_KEYS = {"doc", "says", "tests", "untested"}
# A `[[prose]]` entry: a sentence that looks like a promise (see looks_like_a_promise) but is
# not one a command can check (intent, the code's layout, a how-to), with one line saying why.
PROSE_KEYS = {"doc", "says", "why"}


@dataclass(frozen=True)
class Promise:
    doc: str
    says: str
    tests: tuple[str, ...]
    untested: str


@dataclass(frozen=True)
class Prose:
    doc: str
    says: str
    why: str


@dataclass(frozen=True)
class PromiseMap:
    promises: tuple[Promise, ...]
    excluded: dict[str, str]
    prose: tuple[Prose, ...] = ()


def normalised(text: str) -> str:
    """`text` with every run of white space as one space: a doc's line wrapping is not its words."""
    return " ".join(text.split())


def documents(root: Path) -> list[str]:
    """README.md and every Markdown page in docs/, as paths relative to `root`."""
    return ["README.md", *sorted(str(p.relative_to(root)) for p in (root / "docs").glob("*.md"))]


def load(root: Path) -> tuple[PromiseMap, list[str]]:
    """The map at `root`, and what in it is malformed (one line each)."""
    data = tomllib.loads((root / MAP).read_text(encoding="utf-8"))
    problems: list[str] = []
    excluded = data.get("excluded", {})
    promises: list[Promise] = []
    for raw in data.get("promise", []):
        label = f"the entry ({raw.get('doc', '?')}: {raw.get('says', '?')!r})"
        unknown = sorted(set(raw) - ENTRY_KEYS)
        if unknown:
            problems.append(f"{MAP}: {label} has unknown keys {unknown}: use only {sorted(ENTRY_KEYS)}")
        if not isinstance(raw.get("doc"), str) or not isinstance(raw.get("says"), str) or not raw["says"].strip():
            problems.append(f"{MAP}: {label} needs `doc` and a non-empty `says` (the promise's exact words)")
            continue
        tests = raw.get("tests", [])
        untested = raw.get("untested", "")
        if not tests and not untested:
            problems.append(
                f"{MAP}: {label} has neither `tests` nor `untested`: name the test that checks it, "
                f'or add a "Not tested here: why" sentence to {raw["doc"]} and quote it as `untested`'
            )
        if tests and untested:
            problems.append(f"{MAP}: {label} has both `tests` and `untested`: keep the one that is true")
        promises.append(Promise(raw["doc"], normalised(raw["says"]), tuple(tests), normalised(untested)))
    prose: list[Prose] = []
    for raw in data.get("prose", []):
        label = f"the prose entry ({raw.get('doc', '?')}: {raw.get('says', '?')!r})"
        unknown = sorted(set(raw) - PROSE_KEYS)
        if unknown:
            problems.append(f"{MAP}: {label} has unknown keys {unknown}: use only {sorted(PROSE_KEYS)}")
        if not isinstance(raw.get("doc"), str) or not isinstance(raw.get("says"), str) or not raw["says"].strip():
            problems.append(f"{MAP}: {label} needs `doc` and a non-empty `says` (the sentence's exact words)")
            continue
        why = raw.get("why", "")
        if not isinstance(why, str) or not why.strip():
            problems.append(
                f"{MAP}: {label} has no `why`: say in one line why it is not a promise a command can "
                "check, or make it a [[promise]] with its tests"
            )
            why = ""
        prose.append(Prose(raw["doc"], normalised(raw["says"]), normalised(why)))
    return PromiseMap(tuple(promises), excluded, tuple(prose)), problems


def names_a_test(root: Path, node_id: str) -> bool:
    """Whether `node_id` (`path::test`, `path::Class::test`, a parametrised `[id]` allowed; Rust:
    `path.rs::name`) names a test function defined in that file."""
    path, _, name = node_id.partition("::")
    file = root / path
    if not name or not file.is_file():
        return False
    parts = re.sub(r"\[.*\]$", "", name).split("::")
    if path.endswith(".rs"):
        return len(parts) == 1 and re.search(rf"\bfn {re.escape(parts[0])}\s*\(", file.read_text()) is not None
    scope: list[ast.stmt] = ast.parse(file.read_text(encoding="utf-8")).body
    for part in parts[:-1]:
        classes = [node for node in scope if isinstance(node, ast.ClassDef) and node.name == part]
        if not classes:
            return False
        scope = classes[0].body
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    return any(isinstance(node, functions) and node.name == parts[-1] for node in scope)


def problems(root: Path) -> list[str]:
    """Every way the map at `root` and its docs and tests disagree, one line each naming the
    entry and what to do."""
    promise_map, found = load(root)
    docs = documents(root)
    texts = {doc: normalised((root / doc).read_text(encoding="utf-8")) for doc in docs}
    for doc in promise_map.excluded:
        if doc not in texts:
            found.append(f"{MAP}: [excluded] names {doc}, which is not a doc here: remove it")
    seen: set[tuple[str, str]] = set()
    for promise in promise_map.promises:
        label = f"{MAP}: the entry ({promise.doc}: {promise.says!r})"
        if promise.doc not in texts:
            found.append(f"{label} names a doc that does not exist: fix `doc` or remove the entry")
            continue
        if promise.doc in promise_map.excluded:
            found.append(f"{label} is in a doc the map excludes: remove the entry or the exclusion")
        if (promise.doc, promise.says) in seen:
            found.append(f"{label} is in the map twice: merge the two entries' tests")
        seen.add((promise.doc, promise.says))
        text = texts[promise.doc]
        count = text.count(promise.says)
        if count == 0:
            found.append(
                f"{label}: these words are no longer in {promise.doc}: the doc changed; quote the "
                "promise's new words in `says` (check its tests still check it), or remove the entry "
                "if the doc no longer promises it"
            )
        elif count > 1:
            found.append(f"{label}: these words are in {promise.doc} {count} times: quote more of the sentence")
        for node_id in promise.tests:
            if not names_a_test(root, node_id):
                found.append(
                    f"{label} names the test {node_id}, which does not exist: the test was renamed or "
                    "removed; name the test that now checks this promise, or mark the entry `untested`"
                )
        if promise.untested:
            if UNTESTED_MARKER not in promise.untested.lower():
                found.append(f'{label}: `untested` must quote the doc\'s own "Not tested here: why" sentence')
            elif promise.untested not in text:
                found.append(
                    f"{label}: its `untested` sentence is not in {promise.doc}: the doc must say, in these "
                    "words, that the promise is not tested here (add the sentence, or fix `untested`)"
                )
    for prose in promise_map.prose:
        label = f"{MAP}: the prose entry ({prose.doc}: {prose.says!r})"
        if prose.doc not in texts:
            found.append(f"{label} names a doc that does not exist: fix `doc` or remove the entry")
            continue
        if (prose.doc, prose.says) in seen:
            found.append(f"{label} is in the map twice, or as a promise too: keep one entry")
        seen.add((prose.doc, prose.says))
        count = texts[prose.doc].count(prose.says)
        if count == 0:
            found.append(
                f"{label}: these words are no longer in {prose.doc}: the doc changed; quote its new "
                "words (check they are still not a promise), or remove the entry"
            )
        elif count > 1:
            found.append(f"{label}: these words are in {prose.doc} {count} times: quote more of the sentence")
    for doc, text in texts.items():
        covered = [promise.untested for promise in promise_map.promises if promise.doc == doc and promise.untested]
        for marker in re.finditer(re.escape(UNTESTED_MARKER), text, flags=re.IGNORECASE):
            if not any(_covers(text, sentence, marker.start()) for sentence in covered):
                excerpt = text[marker.start() : marker.start() + 80]
                found.append(
                    f"{doc} says {excerpt!r}... but no entry of {MAP} quotes that sentence as `untested`: "
                    "add an entry for the promise it excuses"
                )
    return found


def _covers(text: str, sentence: str, position: int) -> bool:
    """Whether an occurrence of `sentence` in `text` spans `position`."""
    start = text.find(sentence)
    while start != -1:
        if start <= position < start + len(sentence):
            return True
        start = text.find(sentence, start + 1)
    return False


def summary(root: Path) -> dict:
    """Per doc: its promises, how many have a test, and those left untested with why."""
    promise_map, _ = load(root)
    per_doc = {}
    for doc in documents(root):
        mine = [promise for promise in promise_map.promises if promise.doc == doc]
        per_doc[doc] = {
            "promises": len(mine),
            "tested": sum(1 for promise in mine if promise.tests),
            "untested": [{"says": promise.says, "why": promise.untested} for promise in mine if not promise.tests],
            "prose": sum(1 for prose in promise_map.prose if prose.doc == doc),
            **({"excluded": promise_map.excluded[doc]} if doc in promise_map.excluded else {}),
        }
    return {
        "promises": sum(entry["promises"] for entry in per_doc.values()),
        "tested": sum(entry["tested"] for entry in per_doc.values()),
        "untested": sum(len(entry["untested"]) for entry in per_doc.values()),
        "prose": len(promise_map.prose),
        "docs": per_doc,
    }


# ---- Sentences that look like promises, and which of them the map does not hold
#
# A doc sentence looks like a checkable promise when it names a command in backticks, gives a
# number with a unit, or says "never", "always" or "every". Each such sentence of README.md and
# docs/ must be held by the map (an entry's `says` inside it, or it inside one), stand in a
# section whose own "Not tested here:" sentence the map quotes (that section's figures are said
# to be untested) or under a "## History:" heading (past measurements), or be in CANDIDATES_BASELINE: the sentences flagged when this check came in
# (#48), kept so that it fails on a NEW unmapped promise. The baseline only shrinks: map a
# sentence, or reword it, and remove its line (`scripts/promises.py --candidates` lists them).

CANDIDATES_BASELINE = Path("tests/promise_candidates.txt")
# A section headed so holds past measurements of older code: not promises about this one.
HISTORY = "## History:"
_UNIT = re.compile(
    r"\d[\d,.]*\s?(?:ms|s|MB|KB|GB|MiB|KiB|GiB|%|×|lamports|SOL|bytes|characters|seconds|minutes|hours|days)\b|\d×"
)
_ALWAYS = re.compile(r"\b(?:never|always|every)\b", re.IGNORECASE)
_COMMAND = re.compile(
    r"`(?:precompact [a-z-]+|init|verify|flush|status|savepoint|resurrect|recall|show|dropped|uncompact|restore"
    r"|prune|close|trust|install|doctor|key [a-z]+|projects|import|view|mcp|hook|rekey)\b[^`]*`"
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"(])")


@dataclass(frozen=True)
class Candidate:
    doc: str
    sentence: str
    section: str

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(f"{self.doc}\0{self.sentence}".encode()).hexdigest()[:16]


def looks_like_a_promise(sentence: str) -> bool:
    return bool(_UNIT.search(sentence) or _ALWAYS.search(sentence) or _COMMAND.search(sentence))


def sections(root: Path, doc: str) -> dict[str, tuple[str, list[Candidate]]]:
    """Per heading of `doc`: its text (normalised), and its sentences (a table row counts as
    one) that look like promises."""
    found: dict[str, tuple[str, list[Candidate]]] = {"": ("", [])}
    section = ""
    for paragraph in re.split(r"\n\s*\n", (root / doc).read_text(encoding="utf-8")):
        lines = paragraph.strip().splitlines()
        if lines and lines[0].startswith("#"):
            heading = normalised(lines[0])
            # A subsection of a history section (`## History: ...`) is history too.
            within_history = section.startswith(HISTORY) and heading.startswith("###")
            section = f"{section.split(' / ')[0]} / {heading}" if within_history else heading
            found.setdefault(section, ("", []))
            lines = lines[1:]
        if lines and all(line.lstrip().startswith("|") for line in lines):
            units = [normalised(line) for line in lines]
        else:
            units = _SENTENCE_END.split(normalised(" ".join(lines)))
        text, listed = found[section]
        listed.extend(Candidate(doc, unit, section) for unit in units if looks_like_a_promise(unit))
        found[section] = (f"{text} {normalised(' '.join(lines))}", listed)
    return found


def unmapped(root: Path) -> tuple[list[Candidate], dict[str, int]]:
    """The candidates the map does not hold and no section's "Not tested here:" excuses, and
    the counts: `flagged` (every candidate), `mapped`, `prose` (held by a [[prose]] entry: not a
    promise), `excused`, `unmapped`."""
    promise_map, _ = load(root)
    left, counts = [], {"flagged": 0, "mapped": 0, "prose": 0, "excused": 0, "unmapped": 0}
    for doc in documents(root):
        if doc in promise_map.excluded:
            continue
        said = [p.says for p in promise_map.promises if p.doc == doc]
        prose = [p.says for p in promise_map.prose if p.doc == doc]
        excuses = {p.untested for p in promise_map.promises if p.doc == doc and p.untested}
        for heading, (text, found) in sections(root, doc).items():
            excused = heading.startswith(HISTORY) or any(excuse in text for excuse in excuses)
            for candidate in found:
                counts["flagged"] += 1
                if any(s in candidate.sentence or candidate.sentence in s for s in said):
                    counts["mapped"] += 1
                elif any(s in candidate.sentence or candidate.sentence in s for s in prose):
                    counts["prose"] += 1
                elif excused:
                    counts["excused"] += 1
                else:
                    counts["unmapped"] += 1
                    left.append(candidate)
    return left, counts


def baseline(root: Path) -> set[str]:
    path = root / CANDIDATES_BASELINE
    if not path.is_file():
        return set()
    return {line.split("\t", 1)[0] for line in path.read_text(encoding="utf-8").splitlines() if line and line[0] != "#"}


def new_unmapped(root: Path) -> list[Candidate]:
    """Sentences that look like promises, held by no entry and not in the baseline."""
    known = baseline(root)
    return [c for c in unmapped(root)[0] if c.fingerprint not in known]
