"""Realistic Claude Code transcripts and hook payloads, for the tests, the demo and the benchmarks.

A transcript has user requests, assistant turns whose content blocks each sit on their own line
under one message id (as Claude Code writes them), tool_use / tool_result pairs that read and
edit files, usage on every assistant line, a `compact_boundary` and `summary` line from an
earlier compaction, and optionally a partial last line (the file still being written).
"""

from __future__ import annotations

import json
import random
import re
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

_CODE = [
    "def handler(request):\n    user = authenticate(request.headers)\n    return render(user.profile)\n",
    "for (const item of items) {\n  if (!item.valid) continue;\n  total += item.price * item.quantity;\n}\n",
    "fn parse(input: &str) -> Result<Config, Error> {\n    toml::from_str(input).map_err(Error::from)\n}\n",
    "SELECT id, name, created_at FROM accounts WHERE archived = false ORDER BY created_at DESC;\n",
]
_PROSE = [
    "The failing test comes from the cache being filled before the lock is taken.",
    "I checked the call sites: only the worker writes to this table, so the index is safe to add.",
    "Moving the retry into the client keeps the server stateless, which the design asks for.",
    "The benchmark regressed because the new parser allocates per line; reusing the buffer fixes it.",
]


@dataclass
class Transcript:
    path: Path
    requests: list[str] = field(default_factory=list)
    conclusions: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    messages: int = 0
    bytes: int = 0


def generate(
    path: Path,
    target_bytes: int = 64_000,
    project: Path | None = None,
    seed: int = 7,
    partial_tail: bool = False,
    planted: list[str] = (),
    sources: list[Path] = (),
) -> Transcript:
    """Writes a transcript of about `target_bytes`; `planted` strings go into tool results. With
    `sources`, each turn reads the next of these real files instead of a few made-up lines: it is
    copied into the project (so the snapshot's loaded files hold it too) and comes back numbered
    the way Claude Code's Read tool shows a file."""
    rng = random.Random(seed)
    project = project or path.parent
    out = Transcript(path)
    planted = list(planted)
    turn = 0
    with path.open("w", encoding="utf-8") as f:

        def write(entry: dict) -> None:
            line = json.dumps(entry, ensure_ascii=False) + "\n"
            f.write(line)
            out.bytes += len(line.encode())

        while out.bytes < target_bytes or planted or turn < 4:
            turn += 1
            request = f"Request {turn}: please look at module_{turn % 7}.py and {rng.choice(['fix the flaky test', 'speed up the import', 'add the missing check', 'explain the failure'])}."
            write(_user(turn, request))
            out.requests.append(request)
            out.messages += 1
            if sources:
                index = (turn - 1) % len(sources)
                file = str(project / "src" / f"{index}_{sources[index].name}")
                text = sources[index].read_text(encoding="utf-8", errors="replace")
                if file not in out.files:  # the same file read again is copied once
                    Path(file).parent.mkdir(parents=True, exist_ok=True)
                    Path(file).write_text(text, encoding="utf-8")
                result = _numbered(text)
            else:
                file = str(project / f"src/module_{turn % 7}.py")
                result = "".join(rng.choice(_CODE) for _ in range(rng.randint(2, 30)))
            if file not in out.files:
                out.files.append(file)
            message_id = f"msg_{turn:06d}"
            usage = {
                "input_tokens": 40 + turn,
                "cache_creation_input_tokens": 900,
                "cache_read_input_tokens": min(1_000 * turn, 150_000),
                "output_tokens": 120,
            }
            write(_assistant(turn, message_id, usage, {"type": "text", "text": f"Reading {Path(file).name} first."}))
            tool = "Edit" if turn % 3 == 0 and not sources else "Read"
            write(
                _assistant(
                    turn,
                    message_id,
                    usage,
                    {"type": "tool_use", "id": f"toolu_{turn}", "name": tool, "input": {"file_path": file}},
                )
            )
            if planted:
                result += "\n" + planted.pop() + "\n"
            write(
                {
                    "type": "user",
                    "uuid": f"u-{turn}-r",
                    "sessionId": "s-demo",
                    "message": {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": f"toolu_{turn}", "content": result}],
                    },
                }
            )
            conclusion = f"Conclusion {turn}: {rng.choice(_PROSE)}"
            write(_assistant(turn, f"msg_{turn:06d}b", usage, {"type": "text", "text": conclusion}))
            out.conclusions.append(conclusion)
            out.messages += 2
            if turn == 2:
                write(
                    {
                        "type": "system",
                        "subtype": "compact_boundary",
                        "content": "Conversation compacted",
                        "compactMetadata": {"trigger": "auto", "preTokens": 150_000},
                    }
                )
                write(
                    {
                        "type": "summary",
                        "summary": "Earlier: set up the project and fixed the build.",
                        "leafUuid": "u-2",
                    }
                )
        if partial_tail:
            tail = '{"type":"assistant","message":{"id":"msg_partial","content":[{"type":"text","text":"still wri'
            f.write(tail)
            out.bytes += len(tail)
    return out


def _numbered(text: str) -> str:
    """A file as the Read tool returns it: its first 2,000 lines, each after its number."""
    return "\n".join(f"{number:6d}\u2192{line}" for number, line in enumerate(text.split("\n")[:2000], start=1))


def _user(turn: int, text: str) -> dict:
    return {"type": "user", "uuid": f"u-{turn}", "sessionId": "s-demo", "message": {"role": "user", "content": text}}


def _assistant(turn: int, message_id: str, usage: dict, block: dict) -> dict:
    return {
        "type": "assistant",
        "uuid": f"a-{turn}-{block['type']}",
        "requestId": f"req_{message_id}",
        "sessionId": "s-demo",
        "message": {"id": message_id, "role": "assistant", "content": [block], "usage": usage},
    }


_EMPTY_TRANSCRIPTS = tempfile.TemporaryDirectory(prefix="precompact-test-transcripts-")


def empty_transcript() -> Path:
    """A transcript file that holds nothing yet (a PreCompact naming no transcript saves nothing)."""
    path = Path(_EMPTY_TRANSCRIPTS.name) / f"{uuid.uuid4().hex}.jsonl"
    path.touch()
    return path


def payload(event: str, cwd: Path, transcript: Path | None = None, **extra) -> dict:
    """A hook's stdin for `event` (PreCompact, PostCompact, SessionStart), from a session of its
    own unless `session_id` is given: a session's PreCompact with nothing said since its last
    savepoint keeps that savepoint, and a session gets a savepoint's brief once. A PreCompact
    without `transcript` names an empty transcript file."""
    if transcript is None and event == "PreCompact":
        transcript = empty_transcript()
    base = {
        "session_id": f"s-{uuid.uuid4().hex[:12]}",
        "transcript_path": str(transcript) if transcript else "",
        "cwd": str(cwd),
        "hook_event_name": event,
    }
    defaults = {
        "PreCompact": {"trigger": "auto", "custom_instructions": ""},
        "PostCompact": {"trigger": "auto", "compact_summary": "Summary: fixed the flaky test."},
        "SessionStart": {"source": "resume"},
    }
    return {**base, **defaults.get(event, {}), **extra}


def saved_sequence(stdout: str | bytes) -> int | None:
    """The savepoint a PreCompact hook's plain-text answer names (None if it names none)."""
    text = stdout.decode() if isinstance(stdout, bytes) else stdout
    found = re.search(r"precompact savepoint (\d+) \(sha256:", text)
    return int(found.group(1)) if found else None
