"""Real-looking Claude Code sessions with planted facts, and a compaction summary that keeps some
of them and drops the others: the ground truth "what compaction dropped" is measured against
(tests/python/test_dropped.py, scripts/bench_dropped.py, the viewer's tests).

Each planted fact is one of `restore/dropped.py`'s kinds (or a number the user says, which the
list shows inside the request), with a made-up text unique to its session. A kept fact is written
into the summary in one of the forms a summariser uses: verbatim, reflowed or recased, with curly
quotes, a path relative to the project or by its file name; or, for `paraphrased` ones, in other words, which no matching rule can see.
A dropped fact is absent, with a near miss in the summary where one is natural (the next
number, a sibling file, a longer URL), so a rule that matches too loosely shows up as a miss."""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

_WORDS = [
    *("ledger", "quokka", "invoice", "tariff", "harbor", "orbit", "cobalt", "lantern", "meadow", "ferry"),
    *("cipher", "walnut", "prism", "tundra", "saddle", "beacon", "canyon", "marble", "otter", "pylon"),
    *("quill", "raven", "sable", "thistle", "umber", "vellum", "willow", "yarrow", "zephyr"),
]
_FILLER = [
    "The failing test comes from the cache being filled before the lock is taken.",
    "I checked the call sites: only the worker writes to this table, so the index is safe to add.",
    "Moving the retry into the client keeps the server stateless, which the design asks for.",
    "The benchmark regressed because the new parser allocates per line; reusing the buffer fixes it.",
]
KINDS = (
    "request",
    "constraint",
    "decision",
    "file edited",
    "file read",
    "failed command",
    "error",
    "measurement",
    "path",
    "url",
    "number",
)


@dataclass(frozen=True)
class Planted:
    kind: str
    text: str
    kept: bool
    paraphrased: bool = False  # kept, but in other words


@dataclass
class Session:
    entries: list[dict]
    summary: str
    cwd: str
    planted: list[Planted] = field(default_factory=list)


def session(seed: int, facts: int = 22, paraphrase: float = 0.0, cwd: str = "/home/dev/shop") -> Session:
    """A session of about `facts` planted facts (two of each kind), half of them kept by the
    summary; with `paraphrase`, that share of the kept ones is kept in other words."""
    rng = random.Random(seed)
    words = rng.sample(_WORDS, len(_WORDS))
    pick = iter(words * 4)

    def w() -> str:
        return next(pick)

    out = Session([], "", cwd)
    summary = [
        "This session is being continued from a previous conversation that ran out of context.",
        "Primary request and intent: the user is improving the shop's export pipeline.",
    ]
    near: list[str] = []
    turn = 0

    def entry(kind: str, message: dict, **extra) -> dict:
        nonlocal turn
        turn += 1
        line = {
            "type": kind,
            "uuid": f"{seed}-{turn}",
            "sessionId": f"planted-{seed}",
            "timestamp": f"2026-11-30T10:{turn // 60 % 60:02d}:{turn % 60:02d}Z",
            "cwd": cwd,
            "message": message,
            **extra,
        }
        out.entries.append(line)
        return line

    def user(text: str) -> None:
        entry("user", {"role": "user", "content": text})

    def say(text: str) -> None:
        entry(
            "assistant", {"id": f"msg_{seed}_{turn}", "role": "assistant", "content": [{"type": "text", "text": text}]}
        )

    def tool(name: str, arguments: dict, result: str, error: bool = False) -> None:
        call = f"toolu_{seed}_{turn}"
        entry(
            "assistant",
            {
                "id": f"msg_{seed}_{turn}",
                "role": "assistant",
                "content": [{"type": "tool_use", "id": call, "name": name, "input": arguments}],
            },
        )
        block = {"type": "tool_result", "tool_use_id": call, "content": result}
        if error:
            block["is_error"] = True
        entry("user", {"role": "user", "content": [block]})

    kinds = [k for k in KINDS for _ in range(max(1, facts // len(KINDS)))]
    rng.shuffle(kinds)
    for number, kind in enumerate(kinds):
        kept = number % 2 == 0
        paraphrased = kept and rng.random() < paraphrase
        n = rng.randint(1000, 99999)
        if kind == "request":
            text = f"Please make the {w()} exporter write {w()} files in batches of {n} rows and report each batch."
            user(text)
            keep = text.replace("Please make", "please   make").upper() if rng.random() < 0.3 else text
            para = f"The user wants the exporter to work in batches and report progress ({w()})."
        elif kind == "constraint":
            text = f"Never touch the {w()} {w()} table while the migration runs."
            user(f"Go ahead with the cleanup. {text} Tell me when it is done.")
            keep = text.replace("Never", "never").replace("'", "’")
            para = "The user forbade changes to one table during the migration."
        elif kind == "decision":
            text = f"I'll keep the {w()} cache in memory rather than on disk, because the {w()} job reads it {n} times a second."
            say(text)
            keep = text.replace("I'll keep", "Kept")
            para = "The cache stays in memory for speed."
        elif kind in ("file edited", "file read", "path"):
            relative = f"src/{w()}/{w()}_{w()}{number}.py"
            text = f"{cwd}/{relative}" if kind != "path" else relative
            if kind == "file edited":
                tool("Edit", {"file_path": text, "old_string": "x = 1", "new_string": "x = 2"}, "The file was updated.")
            elif kind == "file read":
                tool("Read", {"file_path": text}, "     1\u2192import os\n     2\u2192print(os.getcwd())\n")
            else:
                user(f"The settings live in {text}, which the loader reads at start.")
            keep = rng.choice([text, relative, f"`{Path(text).name}`"])
            if kind == "path":  # the user's sentence that names it, kept with it
                keep = f"The settings live in {keep}, which the loader reads at start."
            para = "Changed the module that holds the settings."
            near.append(text.replace(".py", "_test.py"))
        elif kind == "failed command":
            text = f"pytest tests/test_{w()}.py -k {w()} --randomly-seed={n}"
            tool("Bash", {"command": text}, "E   AssertionError: 3 != 4\nFAILED", error=True)
            keep = f"Ran `{text}`"
            para = "Ran the focused tests."
        elif kind == "measurement":
            text = f"flagged {n} rows in the {w()} table"
            tool("Bash", {"command": f"python scripts/recheck_{w()}.py"}, f"checked every row\n{text}")
            keep = f"The recheck flagged {n:,} rows."
            para = "The recheck flagged some rows."
            near.append(str(n + 1))
        elif kind == "error":
            text = f"{w().capitalize()}Error: {w()} quota exceeded after {n} retries"
            tool(
                "Bash",
                {"command": f"python -m shop.sync --once --tag {n}"},
                f'Traceback (most recent call last):\n  File "sync.py", line 9\n{text}\n',
                error=True,
            )
            keep = f"It failed with {text.lower()}."
            para = "The sync job hit its retry quota."
        elif kind == "url":
            text = f"https://{w()}.example.com/api/v{n % 5 + 1}/{w()}"
            user(f"The vendor documents the endpoint at {text} and we should follow it.")
            keep = f"Endpoint: {text}."
            para = "The vendor's documented endpoint is to be followed."
            near.append(text + "s")
        else:  # number
            text = str(n)
            user(f"Use port {text} for the staging proxy; the old one is taken.")
            keep = f"Staging proxy port: {text}."
            para = "The staging proxy moved to a new port."
            near.append(str(n + 1))
        if paraphrased:
            summary.append(para)
        elif kept:
            summary.append(keep)
        out.planted.append(Planted(kind, text, kept, paraphrased))
        say(rng.choice(_FILLER))
    summary.append("Nearby work also touched: " + ", ".join(n for n in near if all(n != p.text for p in out.planted)))
    out.summary = "\n".join(summary)
    return out


def write_transcript(planted: Session, path: Path) -> Path:
    """The session as a Claude Code transcript (JSONL) at `path`."""
    with path.open("w", encoding="utf-8") as f:
        for line in planted.entries:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    return path


def shown(listed) -> set[tuple[str, str]]:
    """The (kind, text) pairs a list of `restore.dropped` facts shows: a failed command is one
    fact with its error line, so that line is shown as the error it is; an identifier said in a
    listed sentence (a request, a constraint) is shown in it, not again on its own."""
    listed = list(listed)
    pairs = {(f.kind, f.text) for f in listed}
    pairs |= {("error", f.detail) for f in listed if f.kind == "failed command" and f.detail}
    said = [f.text for f in listed if f.kind in ("request", "constraint", "decision")]
    for text in said:
        for kind, pattern in _INSIDE:
            pairs |= {(kind, m) for m in re.findall(pattern, text)}
    return pairs


# The planted identifiers as they appear inside a sentence (planted texts only: made-up words).
_INSIDE = (
    ("url", r"https://[\w./-]+\w"),
    ("number", r"(?<![\w.])\d{3,}(?![\w.])"),
    ("path", r"\bsrc/[\w/]+\.py\b"),
)
