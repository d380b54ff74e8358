"""Drives the real OpenAI Codex CLI against a local mock of the OpenAI Responses API.

`codex_binary()` installs the pinned `@openai/codex` from npm once into
~/.cache/precompact/codex-cli/<version> (override with PRECOMPACT_CODEX_CACHE) and runs the
native binary its platform package holds, so a run needs no Node.js. `MockResponses` serves
POST /v1/responses (SSE) from a `Script` and records every request; `Session` runs
`codex exec` in a throwaway CODEX_HOME whose config.toml points a custom provider at the mock.

What Codex 0.171.0 does, observed with this harness (docs/agents.md keeps the full record):
- It sends only POST /v1/responses, streamed; the first `developer` message of `input` is the
  system prompt. Tool calls are `exec_command` function calls (arguments `{"cmd": ...}`).
- `model_auto_compact_token_limit` with a `usage.total_tokens` above it makes the next turn
  start with a compaction: one more request, without tools, whose last user message begins
  "You are performing a CONTEXT CHECKPOINT COMPACTION".
- Hooks run as `/bin/bash -c <command>` in the session's directory; without
  `--dangerously-bypass-hook-trust` (or a trusted hash in config.toml) they are skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from support import commands, npm_package
from support.claude_code import wait_for_worker
from support.mock_http import Exchange, MockServer, sse
from support.npm_package import Unavailable
from support.projects import Project

VERSION = "0.171.0"
PACKAGE = "@openai/codex"
CACHE = Path(os.environ.get("PRECOMPACT_CODEX_CACHE", Path.home() / ".cache" / "precompact" / "codex-cli"))
NPM_TIMEOUT_SECONDS = 600
COMPACTION_MARK = "You are performing a CONTEXT CHECKPOINT COMPACTION"
# What the mock's model is called in config.toml (Codex has no window for an unknown model).
MODEL = "gpt-mock"
_TARGETS = {("x86_64", "Linux"): ("linux-x64", "x86_64-unknown-linux-musl")}


def codex_binary(version: str = VERSION) -> Path:
    """The native `codex` of `version`, installed from npm into the cache on first use."""
    machine = _TARGETS.get((platform.machine(), platform.system()))
    if machine is None:
        raise Unavailable(f"no Codex platform package is known here for {platform.machine()} {platform.system()}")
    prefix = CACHE / version
    binary = prefix / "node_modules" / "@openai" / f"codex-{machine[0]}" / "vendor" / machine[1] / "bin" / "codex"
    return npm_package.installed(PACKAGE, version, prefix, binary, NPM_TIMEOUT_SECONDS)


class MockResponses(MockServer):
    """The Responses API on 127.0.0.1: records every request, answers with `responder`
    (request body -> (output items, usage))."""

    def __init__(self, responder):
        super().__init__()
        self.responder = responder
        self._ids = iter(range(1, 1 << 30))

    def answer(self, exchange: Exchange, body: dict) -> None:
        if not exchange.route.endswith("/responses"):
            exchange.send_json(404, self.NOT_FOUND)
            return
        items, usage = self.responder(body)
        exchange.send_events(sse(event, event["type"]) for event in self._events(items, usage))

    def _events(self, items: list[dict], usage: dict):
        response_id = f"resp_mock{next(self._ids):06d}"
        shell = {"id": response_id, "object": "response", "status": "in_progress", "output": []}
        yield {"type": "response.created", "response": shell}
        for index, item in enumerate(items):
            item = {"id": f"item_mock{next(self._ids):06d}", **item}
            yield {"type": "response.output_item.added", "output_index": index, "item": item}
            if item["type"] == "message":
                text = item["content"][0]["text"]
                yield {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": text,
                }
            yield {"type": "response.output_item.done", "output_index": index, "item": item}
        yield {"type": "response.completed", "response": {**shell, "status": "completed", "usage": usage}}


def message(text: str) -> dict:
    return {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def shell_call(command: str, call_id: str) -> dict:
    return {
        "type": "function_call",
        "status": "completed",
        "name": "exec_command",
        "call_id": call_id,
        "arguments": json.dumps({"cmd": command}),
    }


def input_texts(item: dict) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(c.get("text", "") for c in content or [] if isinstance(c, dict))


def is_compaction(request: dict) -> bool:
    return bool(request["body"]) and last_user_text(request["body"]).startswith(COMPACTION_MARK)


@dataclass
class Script:
    """What the mock model answers. A turn whose latest user message names `[[run:NAME]]` runs
    `commands[NAME]` as exec_command calls, one per model round, then says "Done." (the script
    counts the calls it made: after a compaction the request no longer shows them); a
    compaction request is answered with `summary`; anything else with "Noted.". Each answer
    reports `total_tokens` of usage, or `heavy[NAME]` for a command of plan NAME: above
    config.toml's model_auto_compact_token_limit, that makes Codex compact before its next
    request."""

    commands: dict[str, list[str]] = field(default_factory=dict)
    heavy: dict[str, int] = field(default_factory=dict)
    summary: str = "The user is building a parser; work continues."
    total_tokens: int = 500
    _made: dict[str, int] = field(default_factory=dict, repr=False)
    _ids: object = field(default_factory=lambda: iter(range(1, 1 << 30)), repr=False)

    def __call__(self, body: dict) -> tuple[list[dict], dict]:
        if last_user_text(body).startswith(COMPACTION_MARK):
            return [message(self.summary)], usage(self.total_tokens)
        latest = last_user_text(body)
        for name, planned in self.commands.items():
            if f"[[run:{name}]]" in latest:
                step = self._made.get(name, 0)
                if step < len(planned):
                    self._made[name] = step + 1
                    call = shell_call(planned[step], f"call_mock{next(self._ids):06d}")
                    return [call], usage(self.heavy.get(name, self.total_tokens))
                return [message("Done.")], usage(self.total_tokens)
        return [message("Noted.")], usage(self.total_tokens)


def usage(total: int) -> dict:
    return {
        "input_tokens": total - 50,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 50,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": total,
    }


def last_user_text(body: dict) -> str:
    """The text of the request's last user message that Codex did not write itself."""
    for item in reversed(body.get("input") or []):
        if item.get("type") == "message" and item.get("role") == "user":
            text = input_texts(item)
            if not text.lstrip().startswith("<"):
                return text
    return ""


CONFIG = """model = "{model}"
model_provider = "mock"
model_auto_compact_token_limit = {limit}
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"

[features]
plugins = false
remote_plugin = false
apps = false

[analytics]
enabled = false

[feedback]
enabled = false
"""


@dataclass
class Session:
    """A throwaway HOME (CODEX_HOME is HOME/.codex) and `codex exec` runs against `mock`."""

    binary: Path
    home: Path
    project: Path
    mock: MockResponses
    compact_limit: int = 100_000
    timeout: float = 180

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"

    def configure(self) -> None:
        self.codex_home.mkdir(parents=True, exist_ok=True)
        (self.codex_home / "config.toml").write_text(
            CONFIG.format(model=MODEL, url=self.mock.url, limit=self.compact_limit)
        )

    def environment(self) -> dict:
        return {
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(self.home),
            "CODEX_HOME": str(self.codex_home),
            **({"XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"]} if "XDG_CONFIG_HOME" in os.environ else {}),
            **({"XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]} if "XDG_STATE_HOME" in os.environ else {}),
            "LANG": "C.UTF-8",
            "MOCK_API_KEY": "fake",
        }

    def run(self, prompt: str, resume: str | None = None) -> str:
        """One `codex exec` turn (resuming thread `resume`); the thread id."""
        args = [str(self.binary), "exec"]
        if resume:
            args += ["resume", resume]
        args += ["--json", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", prompt]
        done = subprocess.run(
            args,
            cwd=self.project,
            env=self.environment(),
            capture_output=True,
            text=True,
            timeout=self.timeout,
            check=False,
        )
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        started = [e for e in events if e.get("type") == "thread.started"]
        if done.returncode != 0 or not started:
            raise AssertionError(
                f"codex exec {prompt!r} exited {done.returncode}: {done.stdout[-3000:]} {done.stderr[-3000:]}"
            )
        return started[0]["thread_id"]

    def rollout(self, thread_id: str) -> Path:
        [path] = (self.codex_home / "sessions").glob(f"*/*/*/rollout-*-{thread_id}.jsonl")
        return path


class Setup:
    def __init__(self, project: Project, session: Session, script: Script):
        self.project, self.session, self.script = project, session, script

    def precompact(self, *args: str) -> subprocess.CompletedProcess:
        return commands.precompact(
            self.project.path, *args, home=self.session.home, env={"CODEX_HOME": str(self.session.codex_home)}
        )

    def index(self) -> list[dict]:
        return [
            json.loads(line) for line in (self.project.logs / "precompact-savepoint.jsonl").read_text().splitlines()
        ]


@contextlib.contextmanager
def session_in(
    project: Project,
    home: Path,
    binary: Path,
    *install: str,
    script: Script | None = None,
    compact_limit: int = 100_000,
):
    """A Codex session for `project` (HOME at `home`) against a started mock, with
    `precompact install --agent codex *install` done; waits for the worker, then stops the mock."""
    home.mkdir()
    script = script or Script()
    with MockResponses(script) as mock:
        session = Session(binary, home, project.path, mock, compact_limit)
        session.configure()
        result = Setup(project, session, script)
        installed = result.precompact("install", "--agent", "codex", *install)
        assert installed.returncode == 0, installed.stderr
        yield result
        wait_for_worker(project)
