"""Whether Gemini CLI is about to compress its conversation (its threshold, from its own
settings.json, against the prompt tokens of the chat file's latest answer), and whether it ever
did. Gemini CLI fires PreCompress before every model round, compressing or not, and BeforeAgent
before every prompt; the hook asks these before importing anything else (edges/hook.py), so
they use `os`, `json`, boundary/session_file (the chat file, checked on its descriptor: a FIFO a
repository ships returns at once, /dev/zero is refused) and boundary/small_file (settings.json,
the same checks and a size cap) alone. The files are outside input: anything unreadable or not of their
shape counts as nothing said."""

from __future__ import annotations

import json
import os

from precompact.boundary import session_file, small_file

# Gemini CLI 0.61.0's DEFAULT_COMPRESSION_TOKEN_THRESHOLD, and the windows its tokenLimit(model)
# gives: 256,000 tokens to its two Gemma 4 models, 1,048,576 to every other model (its default).
DEFAULT_COMPRESSION_THRESHOLD = 0.5
TOKEN_LIMIT = 1_048_576
SMALLER_WINDOWS = {"gemma-4-31b-it": 256_000, "gemma-4-26b-a4b-it": 256_000}
# What opens the summary Gemini CLI writes at a compression (transcript/gemini.py reads it).
SNAPSHOT_OPEN = "<state_snapshot>"
# Past this a settings.json is not Gemini's (its own are a few KB): read as nothing said.
SETTINGS_LIMIT = 1 << 20


def window(model: object) -> int:
    """The window Gemini CLI 0.61.0's tokenLimit() gives `model` (a name from the chat file)."""
    return SMALLER_WINDOWS.get(model, TOKEN_LIMIT) if isinstance(model, str) else TOKEN_LIMIT


def latest_answer(path: str | os.PathLike, tail_bytes: int = 1 << 20) -> tuple[int, object] | None:
    """The prompt tokens of the latest model answer the chat file records (what Gemini CLI
    compares with its compression threshold) and the model it names (anything: it is outside
    input), read from the file's end; None if none is there."""
    try:
        with session_file.open_read(path) as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(size - tail_bytes, 0))
            tail = f.read()
    except (OSError, ValueError):
        return None
    for line in reversed(tail.split(b"\n")):
        if b'"tokens"' not in line:
            continue
        record = _json(line)
        if not isinstance(record, dict):
            continue
        tokens = record.get("tokens")
        if isinstance(tokens, dict) and isinstance(tokens.get("input"), int):
            return tokens["input"], record.get("model")
    return None


def compression_threshold(cwd: str | os.PathLike, home: str | os.PathLike) -> float:
    """The fraction of the model's window at which Gemini CLI compresses: `model.compressionThreshold`
    of the project's .gemini/settings.json, else the user's, else Gemini's default."""
    for directory in (cwd, home):
        try:
            data, _ = small_file.read(
                os.path.join(directory, ".gemini", "settings.json"), SETTINGS_LIMIT, follow_links=True
            )
        except (OSError, ValueError):  # ValueError: a NUL in the path
            continue
        settings = _json(data)
        model = settings.get("model") if isinstance(settings, dict) else None
        value = model.get("compressionThreshold") if isinstance(model, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 1:
            return float(value)
    return DEFAULT_COMPRESSION_THRESHOLD


def compression_coming(path: str | os.PathLike, cwd: str | os.PathLike, home: str | os.PathLike) -> bool:
    """Whether Gemini CLI, whose PreCompress fires before every model round, is about to compress:
    the latest answer's prompt tokens reach its threshold of the window of the model that
    answered (as Gemini 0.61.0 decides: `threshold * tokenLimit(model)`)."""
    latest = latest_answer(path)
    if latest is None:
        return False
    tokens, model = latest
    return tokens >= compression_threshold(cwd, home) * window(model)


def compressed(path: str | os.PathLike) -> bool:
    """Whether the chat file holds a compression's snapshot at all (cheap: no parsing)."""
    marker = SNAPSHOT_OPEN.encode()
    carry = b""
    try:
        with session_file.open_read(path) as f:
            while block := f.read(1 << 20):
                if marker in carry + block:
                    return True
                carry = block[-len(marker) :]
    except (OSError, ValueError):
        return False
    return False


def _json(data: bytes) -> object:
    """`data` decoded, None when it is not JSON (json recurses: a line nested thousands deep is
    not JSON here either)."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None
