"""How well "what compaction dropped" (restore/dropped.py) does on the held-out set of realistic
coding sessions in tests/dropped_eval/, each labelled by hand before the rule ran on it.

Each session is a folder: `session.txt` (the conversation, written compactly; `build` turns it
into the JSONL Claude Code writes), `summary.md` (the nine-section summary Claude Code's
compaction prompt makes a model write) and `facts.json` (every fact a user would want back
after compaction, with whether the summary keeps it in any words).

Scoring. Each item the rule lists refers to every labelled fact one of whose anchors occurs in
the item's text or detail (both casefolded, whitespace collapsed). An item is RIGHT when it
refers to a dropped fact, WRONG-KEPT when it refers only to kept facts, NOISE when it refers to
no labelled fact.

    precision = right items / listed items
    recall    = dropped facts referred to by at least one item / dropped facts

How the anchors may over-match, honestly: an anchor is a substring, so a listed item that merely
contains a fact's anchor (a request that quotes a commit id, a failed command whose error names
the file a kept fact is about) counts as referring to that fact even when a reader would say it
is about something else; an item that contains the anchors of a dropped and a kept fact counts as
RIGHT. Anchors are chosen to be specific (a whole commit id, a distinctive phrase, a number with
its unit), never a bare common word, and tests/python/test_dropped_eval.py checks that each
occurs in its session; still, the figures are an upper bound for precision on items that quote
long stretches of the session, and recall counts a fact found even if the item that finds it
is a long paste a user would not read.

    .venv/bin/python scripts/bench_dropped_real.py [--session NAME] [--json]
    .venv/bin/python scripts/bench_dropped_real.py --list NAME   # its entries, numbered as facts.json counts them
    .venv/bin/python scripts/bench_dropped_real.py --ceiling     # against a summary that says nothing

With `--ceiling`, each session is scored against a summary that says nothing, so every fact the
rule extracts is listed: the recall printed is the most its matching could reach.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
SESSIONS = REPO / "tests" / "dropped_eval"
sys.path.insert(0, str(REPO / "tests" / "python"))

from support.dropped_dev import SAYS_NOTHING

CLASSES = ("request", "constraint", "decision", "failure", "identifier", "measurement", "edit", "file")
VERSION = "2.1.332"
MARK = "%% "
EDIT_ARROW = "->"

# --- the builder: session.txt -> Claude Code's transcript -----------------------------------------
#
# session.txt: a header of `key: value` lines (cwd, start, branch), then blocks, each opened by a
# line starting with "%% ":
#   %% user                  the user's message (the lines that follow)
#   %% assistant             the model's prose
#   %% Bash: COMMAND         a shell command; the lines that follow are its output
#   %% Bash!: COMMAND        a command that failed (is_error): its output starts "Exit code N", as
#                            Claude Code writes it (a pipeline ending in `| tail` exits with tail's
#                            status: that is a plain `%% Bash:`, whatever it printed)
#   %% Read: PATH            a file read; the lines that follow are the file (numbered as Read does)
#   %% Edit: PATH            the old text, a line "%% ->", then the new text
#   %% Write: PATH           the file's whole content
#   %% Grep: PATTERN | PATH  its output
#   %% Glob: PATTERN         its output
# Each user or assistant block is one entry; each tool call two (the model's tool_use, then the
# tool_result Claude Code sends back), as Claude Code writes them.


@dataclass
class Block:
    kind: str  # user, assistant, or a tool's name
    arg: str
    body: str
    failed: bool = False


@dataclass
class Session:
    name: str
    cwd: str
    start: datetime
    branch: str
    blocks: list[Block] = field(default_factory=list)


def parse(path: Path) -> Session:
    head, *chunks = re.split(rf"^{MARK}(?!{EDIT_ARROW}$)", path.read_text(encoding="utf-8"), flags=re.MULTILINE)
    meta = dict(line.split(": ", 1) for line in head.splitlines() if line.strip())
    session = Session(
        path.parent.name,
        meta["cwd"],
        datetime.fromisoformat(meta["start"]),
        meta.get("branch", "main"),
    )
    for chunk in chunks:
        opener, _, body = chunk.partition("\n")
        kind, _, arg = opener.partition(": ")
        failed = kind.endswith("!")
        session.blocks.append(Block(kind.rstrip("!:").strip(), arg.strip(), body.rstrip("\n"), failed))
    return session


def _tool_input(block: Block, cwd: str) -> dict:
    path = block.arg if block.arg.startswith("/") else f"{cwd}/{block.arg}"
    if block.kind == "Bash":
        return {"command": block.arg, "description": block.arg[:60]}
    if block.kind == "Read":
        return {"file_path": path}
    if block.kind == "Edit":
        old, _, new = block.body.partition(f"\n{MARK}{EDIT_ARROW}\n")
        return {"file_path": path, "old_string": old, "new_string": new}
    if block.kind == "Write":
        return {"file_path": path, "content": block.body + "\n"}
    if block.kind == "Grep":
        pattern, _, where = block.arg.partition(" | ")
        return {"pattern": pattern, "path": where or cwd, "output_mode": "content", "-n": True}
    if block.kind == "Glob":
        return {"pattern": block.arg}
    raise ValueError(f"unknown block kind {block.kind!r}")


def _tool_output(block: Block, tool_input: dict) -> tuple[str, dict]:
    """The tool_result's text and the toolUseResult Claude Code records beside it."""
    if block.kind == "Bash":
        if block.failed and not re.match(r"Exit code \d+\n", block.body):
            raise ValueError(f"a failed command's output starts with its exit code: {block.arg!r}")
        return block.body or "(Bash completed with no output)", {
            "stdout": "" if block.failed else block.body,
            "stderr": block.body if block.failed else "",
            "interrupted": False,
            "isImage": False,
        }
    if block.kind == "Read":
        lines = block.body.split("\n")
        numbered = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, 1))
        return numbered, {
            "type": "text",
            "file": {
                "filePath": tool_input["file_path"],
                "content": block.body,
                "numLines": len(lines),
                "startLine": 1,
                "totalLines": len(lines),
            },
        }
    if block.kind == "Edit":
        return f"The file {tool_input['file_path']} has been updated successfully.", {
            "filePath": tool_input["file_path"],
            "oldString": tool_input["old_string"],
            "newString": tool_input["new_string"],
            "replaceAll": False,
            "userModified": False,
        }
    if block.kind == "Write":
        return f"File created successfully at: {tool_input['file_path']}", {
            "type": "create",
            "filePath": tool_input["file_path"],
            "content": tool_input["content"],
        }
    return block.body or "No matches found", {"mode": "content", "numLines": block.body.count("\n") + 1}


def build(session: Session) -> list[dict]:
    """The session as the entries of Claude Code's transcript JSONL, oldest first."""
    ids = uuid.uuid5(uuid.NAMESPACE_URL, f"precompact-dropped-eval/{session.name}")
    session_id = str(ids)
    counter = 0
    clock = session.start
    entries: list[dict] = []
    message_id: str | None = None

    def add(kind: str, message: dict, seconds: int, **extra) -> dict:
        nonlocal counter, clock
        counter += 1
        clock += timedelta(seconds=seconds)
        entry = {
            "parentUuid": entries[-1]["uuid"] if entries else None,
            "isSidechain": False,
            "userType": "external",
            "cwd": session.cwd,
            "sessionId": session_id,
            "version": VERSION,
            "gitBranch": session.branch,
            "type": kind,
            "message": message,
            "uuid": str(uuid.uuid5(ids, str(counter))),
            "timestamp": clock.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            **extra,
        }
        entries.append(entry)
        return entry

    def assistant(content: dict, stop: str) -> dict:
        nonlocal message_id
        if message_id is None:
            message_id = f"msg_{uuid.uuid5(ids, f'msg{counter}').hex[:24]}"
        return add(
            "assistant",
            {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-5-5",
                "content": [content],
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {"input_tokens": 4, "output_tokens": 120},
            },
            4,
            requestId=f"req_{uuid.uuid5(ids, f'req{counter}').hex[:24]}",
        )

    for block in session.blocks:
        if block.kind == "user":
            message_id = None
            add("user", {"role": "user", "content": block.body}, 40)
        elif block.kind == "assistant":
            assistant({"type": "text", "text": block.body}, "end_turn")
        else:
            tool_input = _tool_input(block, session.cwd)
            tool_id = f"toolu_{uuid.uuid5(ids, f'tool{counter}').hex[:24]}"
            call = assistant({"type": "tool_use", "id": tool_id, "name": block.kind, "input": tool_input}, "tool_use")
            text, recorded = _tool_output(block, tool_input)
            result: dict = {"type": "tool_result", "tool_use_id": tool_id, "content": text}
            if block.failed:
                result["is_error"] = True
            add(
                "user",
                {"role": "user", "content": [result]},
                3,
                toolUseResult=f"Error: {text}" if block.failed else recorded,
                sourceToolAssistantUUID=call["uuid"],
            )
            message_id = None
    return entries


def jsonl(entries: list[dict]) -> str:
    return "".join(json.dumps(entry, ensure_ascii=False) + "\n" for entry in entries)


def session_dirs(only: str | None = None) -> list[Path]:
    found = sorted(p for p in SESSIONS.iterdir() if (p / "session.txt").is_file())
    if only:
        found = [p for p in found if p.name == only]
        if not found:
            raise SystemExit(f"no session {only!r} in {SESSIONS}; the sessions: ls {SESSIONS}")
    return found


def labels(folder: Path) -> list[dict]:
    return json.loads((folder / "facts.json").read_text(encoding="utf-8"))


# --- the scorer ---------------------------------------------------------------------------------


def folded(text: str) -> str:
    return " ".join(text.casefold().split())


def refers_to(item_text: str, fact: dict) -> bool:
    return any(folded(anchor) in item_text for anchor in fact["anchors"])


@dataclass
class Score:
    listed: Counter = field(default_factory=Counter)  # by item kind
    right: Counter = field(default_factory=Counter)
    wrong_kept: Counter = field(default_factory=Counter)
    noise: Counter = field(default_factory=Counter)
    dropped: Counter = field(default_factory=Counter)  # by fact class
    found: Counter = field(default_factory=Counter)
    kept: Counter = field(default_factory=Counter)
    noise_items: list = field(default_factory=list)
    missed: list = field(default_factory=list)
    wrong_items: list = field(default_factory=list)
    seconds: float = 0.0
    sessions: int = 0


def score_session(folder: Path, score: Score, *, ceiling: bool = False) -> None:
    from precompact.restore import dropped

    session = parse(folder / "session.txt")
    entries = build(session)
    summary = SAYS_NOTHING if ceiling else (folder / "summary.md").read_text(encoding="utf-8")
    facts = labels(folder)
    started = time.perf_counter()
    listed, _ = dropped.dropped_facts(entries, dropped.Summary(summary, session.cwd))
    score.seconds += time.perf_counter() - started
    score.sessions += 1
    referred: set[str] = set()
    for item in listed:
        text = folded(f"{item.text}\n{item.detail or ''}")
        hits = [f for f in facts if refers_to(text, f)]
        referred |= {f["id"] for f in hits}
        score.listed[item.kind] += 1
        if any(f["dropped"] for f in hits):
            score.right[item.kind] += 1
        elif hits:
            score.wrong_kept[item.kind] += 1
            score.wrong_items.append((folder.name, item.kind, item.entry, item.text, [f["id"] for f in hits]))
        else:
            score.noise[item.kind] += 1
            score.noise_items.append((folder.name, item.kind, item.entry, item.text))
    for fact in facts:
        if fact["dropped"]:
            score.dropped[fact["class"]] += 1
            if fact["id"] in referred:
                score.found[fact["class"]] += 1
            else:
                score.missed.append((folder.name, fact["class"], fact["id"], fact["note"]))
        else:
            score.kept[fact["class"]] += 1


def ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def report(score: Score) -> dict:
    listed, right = sum(score.listed.values()), sum(score.right.values())
    dropped_facts, found = sum(score.dropped.values()), sum(score.found.values())
    return {
        "sessions": score.sessions,
        "seconds": round(score.seconds, 3),
        "precision": ratio(right, listed),
        "recall": ratio(found, dropped_facts),
        "listed": listed,
        "right": right,
        "wrong_kept": sum(score.wrong_kept.values()),
        "noise": sum(score.noise.values()),
        "dropped_facts": dropped_facts,
        "dropped_found": found,
        "kept_facts": sum(score.kept.values()),
        "recall_by_class": {
            c: {"found": score.found[c], "dropped": score.dropped[c], "recall": ratio(score.found[c], score.dropped[c])}
            for c in CLASSES
            if score.dropped[c]
        },
        "precision_by_kind": {
            k: {
                "listed": n,
                "right": score.right[k],
                "wrong_kept": score.wrong_kept[k],
                "noise": score.noise[k],
                "precision": ratio(score.right[k], n),
            }
            for k, n in sorted(score.listed.items())
        },
        "noise_items": [{"session": s, "kind": k, "entry": e, "text": t[:200]} for s, k, e, t in score.noise_items],
        "wrong_kept_items": [
            {"session": s, "kind": k, "entry": e, "text": t[:200], "facts": ids}
            for s, k, e, t, ids in score.wrong_items
        ],
        "missed": [{"session": s, "class": c, "id": i, "note": n} for s, c, i, n in score.missed],
    }


def render(result: dict) -> str:
    lines = [
        (
            f"{result['sessions']} sessions, {result['dropped_facts']} dropped facts and {result['kept_facts']} "
            f"kept facts labelled; the rule took {result['seconds']:.2f} s in all"
        ),
        (
            f"precision {result['precision']}  ({result['right']} right of {result['listed']} listed: "
            f"{result['wrong_kept']} kept facts listed, {result['noise']} noise)"
        ),
        f"recall    {result['recall']}  ({result['dropped_found']} of {result['dropped_facts']} dropped facts listed)",
        "recall by fact class (found / dropped):",
        *(f"  {c:12} {v['found']:3}/{v['dropped']:<3} {v['recall']}" for c, v in result["recall_by_class"].items()),
        "precision by listed item kind (right / listed; wrong-kept, noise):",
        *(
            f"  {k:15} {v['right']:3}/{v['listed']:<3} {v['precision']}  ({v['wrong_kept']}, {v['noise']})"
            for k, v in result["precision_by_kind"].items()
        ),
    ]
    lines.append("noise (listed, refers to no labelled fact):")
    lines += [f"  {n['session']}:{n['entry']} [{n['kind']}] {_one_line(n['text'])}" for n in result["noise_items"]]
    lines.append("wrong-kept (listed, refers only to facts the summary kept):")
    lines += [
        f"  {n['session']}:{n['entry']} [{n['kind']}] {_one_line(n['text'])} -> {', '.join(n['facts'])}"
        for n in result["wrong_kept_items"]
    ]
    lines.append("missed (dropped, not listed):")
    lines += [f"  {m['session']} [{m['class']}] {m['id']}: {m['note']}" for m in result["missed"]]
    return "\n".join(lines)


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 110 else text[:107] + "..."


def listing(folder: Path) -> str:
    out = []
    for number, entry in enumerate(build(parse(folder / "session.txt")), 1):
        content = entry["message"]["content"]
        if isinstance(content, str):
            shown = f"user: {content}"
        else:
            block = content[0]
            shown = {
                "text": lambda b: f"assistant: {b['text']}",
                "tool_use": lambda b: f"{b['name']}: {json.dumps(b['input'])[:160]}",
                "tool_result": lambda b: f"result{' (error)' if b.get('is_error') else ''}: {b['content']}",
            }[block["type"]](block)
        out.append(f"{number:3} {_one_line(shown)}")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--session", help="score only this session (a folder name under tests/dropped_eval/)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--list", metavar="NAME", help="print a session's entries, numbered from 1, and stop")
    parser.add_argument(
        "--ceiling", action="store_true", help="score against a summary that says nothing (extraction's recall)"
    )
    args = parser.parse_args()
    if args.list:
        print(listing(session_dirs(args.list)[0]))
        return
    score = Score()
    for folder in session_dirs(args.session):
        score_session(folder, score, ceiling=args.ceiling)
    result = report(score)
    print(json.dumps(result, indent=2) if args.json else render(result))


if __name__ == "__main__":
    throwaway_home.use()
    sys.exit(main())
