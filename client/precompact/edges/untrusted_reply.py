"""What a hook answers where the project's `.precompact.toml` is not approved: one line for the
user, never the model (which could run `precompact trust` itself). Claude Code hands
PreCompact's stdout to the summariser and quotes PreCompact's and PostCompact's stdout in the
`<local-command-stdout>` entry the model reads after the compaction, and precompact's OpenCode
plugin puts PreCompact's stdout in the summariser's prompt, so for those two agents those two
events say it on stderr only; SessionStart, which fires in the same compaction, and every other event say it as
a `systemMessage`, which Claude Code and Codex show the user and keep out of the conversation.

Standard library only: the plugin's launcher answers with it before any of precompact's
dependencies is installed (a clone that ships a `.precompact.toml`)."""

from __future__ import annotations

import json


def reply(event: str, why: str, compaction_stdout_to_model: bool) -> tuple[str, str]:
    """The hook's stdout and stderr for `event`, `why` being config's reason (naming `precompact
    trust`); `compaction_stdout_to_model`: the agent gives PreCompact's stdout to the model
    (Claude Code, OpenCode through precompact's plugin)."""
    line = f"precompact did nothing: {why}"
    if event in ("PreCompact", "PostCompact") and compaction_stdout_to_model:
        return "", line
    return json.dumps({"systemMessage": line}), ""
