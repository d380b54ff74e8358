"""What a hook answers where the project's `.precompact.toml` is not approved: one line for the
user, never the model (which could run `precompact trust` itself). Claude Code's PreCompact
stdout goes to the summariser, so there plain words that leave the summary as it would be;
elsewhere `systemMessage`, which Claude Code and Codex show the user and keep out of the
conversation.

Standard library only: the plugin's launcher answers with it before any of precompact's
dependencies is installed (a clone that ships a `.precompact.toml`)."""

from __future__ import annotations

import json


def reply(event: str, why: str, summariser_reads_stdout: bool) -> tuple[str, str]:
    """The hook's stdout and stderr for `event`, `why` being config's reason (naming `precompact
    trust`); `summariser_reads_stdout`: the agent is Claude Code."""
    line = f"precompact did nothing: {why}"
    if event == "PreCompact" and summariser_reads_stdout:
        return line, ""
    return json.dumps({"systemMessage": line}), ""
