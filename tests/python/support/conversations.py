"""Conversations written turn by turn as Claude Code transcripts, and saved as savepoints through
the installed command: the histories recall, show and uncompact are tested against."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from support.commands import precompact
from support.projects import Project

START = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


class Conversation:
    """A Claude Code transcript written turn by turn: the user asks, the model runs a Bash
    command, the result comes back, the model concludes; one minute per entry."""

    def __init__(self, path: Path, session_id: str, start: datetime):
        self.path, self.session_id, self.clock, self.turn = path, session_id, start, 0

    def _write(self, entry: dict) -> None:
        self.clock += timedelta(minutes=1)
        entry.update(
            {
                "sessionId": self.session_id,
                "uuid": f"{self.session_id}-{self.turn}-{entry['type']}-{self.clock.minute}",
                "timestamp": self.clock.isoformat().replace("+00:00", "Z"),
            }
        )
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def turn_with(self, request: str, command: str, output: str, conclusion: str) -> None:
        self.turn += 1
        tool_id = f"toolu_{self.session_id}_{self.turn}"
        self._write({"type": "user", "message": {"role": "user", "content": request}})
        self._write(
            {
                "type": "assistant",
                "message": {
                    "id": f"msg_{self.session_id}_{self.turn}",
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}}],
                },
            }
        )
        self._write(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": output}],
                },
            }
        )
        self._write(
            {
                "type": "assistant",
                "message": {
                    "id": f"msg_{self.session_id}_{self.turn}b",
                    "role": "assistant",
                    "content": [{"type": "text", "text": conclusion}],
                },
            }
        )


def save(project: Project, conversation: Conversation) -> None:
    done = precompact(
        project.path, "savepoint", "--transcript", str(conversation.path), "--session-id", conversation.session_id
    )
    assert done.returncode in (0, 3), done.stderr  # 3: saved, with Layer 2 or 3 off or queued
