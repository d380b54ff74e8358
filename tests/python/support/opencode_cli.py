"""Drives the real OpenCode (npm `opencode-ai`) against a local mock of the OpenAI Chat
Completions API.

`opencode_binary()` installs the pinned `opencode-ai` from npm once into
~/.cache/precompact/opencode/<version> (override with PRECOMPACT_OPENCODE_CACHE) and runs the
Bun-compiled binary its platform package holds. `MockChat` serves POST /v1/chat/completions
(streamed) from a `Script` and records every request; `Session` runs `opencode run` in the
project, whose opencode.json points a provider at the mock.

What OpenCode 1.18.33 does, observed with this harness (docs/agents.md keeps the record):
- A new session first sends a title request (system "You are a title generator"); the compaction
  request's system prompt starts "You are a context summarization agent".
- A finished step whose reported usage reaches the model's `limit.context - limit.output`
  compacts at once, in the same run, then (automatic only) adds a synthetic "Continue …" user
  message and sends one more request.
- At every start OpenCode runs an npm install of `@opencode-ai/plugin` in each config directory
  (its user config directory, the project's .opencode/) and waits for it when a plugin is
  there: offline that is about 70 s a run. `seed_plugin_dependency` leaves what makes it skip.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from support import commands, npm_package
from support.claude_code import wait_for_worker
from support.mock_http import Exchange, MockServer
from support.projects import Project

VERSION = "1.18.33"
PACKAGE = "opencode-ai"
CACHE = Path(os.environ.get("PRECOMPACT_OPENCODE_CACHE", Path.home() / ".cache" / "precompact" / "opencode"))
NPM_TIMEOUT_SECONDS = 600
SUMMARIZER_MARK = "You are a context summarization agent"
TITLE_MARK = "You are a title generator"
MODEL = "mock-model"
# The mock model's window, as opencode.json declares it: a step reporting more compacts.
CONTEXT_TOKENS, OUTPUT_TOKENS = 20_000, 4_000
PROVIDER_KEY = "sk-mockprovider-0123456789abcdef0123456789abcdef"


def opencode_binary(version: str = VERSION) -> Path:
    """The `opencode` binary of `version`, installed from npm into the cache on first use."""
    prefix = CACHE / version
    binary = prefix / "node_modules" / "opencode-linux-x64" / "bin" / "opencode"
    return npm_package.installed(PACKAGE, version, prefix, binary, NPM_TIMEOUT_SECONDS)


def system_text(body: dict) -> str:
    return "\n".join(_text(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "system")


def is_compaction(request: dict) -> bool:
    return bool(request["body"]) and SUMMARIZER_MARK in system_text(request["body"])


def is_title(request: dict) -> bool:
    return bool(request["body"]) and TITLE_MARK in system_text(request["body"])


def last_user_text(body: dict) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            return _text(message.get("content"))
    return ""


def message_texts(request: dict) -> list[str]:
    """Each text part of each message the request sent (a plugin's added part is one of them)."""
    texts = []
    for message in request["body"].get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))
    return texts


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c.get("text", "") for c in content if isinstance(c, dict))
    return ""


@dataclass
class Script:
    """What the mock model answers. A turn whose latest user message names `[[run:NAME]]` runs
    `commands[NAME]` as bash calls, one per model round, then says "Done."; a compaction request
    is answered with `summary`, a title request with a title, anything else with "Noted.". Each
    answer reports `prompt_tokens` of usage, or `heavy[NAME]` after a command of plan NAME: above
    the window, that makes OpenCode compact before its next request."""

    commands: dict[str, list[str]] = field(default_factory=dict)
    heavy: dict[str, int] = field(default_factory=dict)
    summary: str = "## Objective\n- The user is building a parser; work continues."
    prompt_tokens: int = 500
    _made: dict[str, int] = field(default_factory=dict, repr=False)
    _ids: object = field(default_factory=lambda: iter(range(1, 1 << 30)), repr=False)

    def __call__(self, body: dict) -> tuple[str | dict, int]:
        system = system_text(body)
        if SUMMARIZER_MARK in system:
            return self.summary, self.prompt_tokens
        if TITLE_MARK in system:
            return "Parser work", self.prompt_tokens
        latest = last_user_text(body)
        for name, planned in self.commands.items():
            if f"[[run:{name}]]" in latest:
                step = self._made.get(name, 0)
                if step < len(planned):
                    self._made[name] = step + 1
                    call = {"id": f"call_mock{next(self._ids):06d}", "command": planned[step]}  # type: ignore[call-overload]
                    return call, self.heavy.get(name, self.prompt_tokens)
                return "Done.", self.prompt_tokens
        return "Noted.", self.prompt_tokens


class MockChat(MockServer):
    """The Chat Completions API on 127.0.0.1: records every request, answers with `responder`
    (request body -> (text, or a bash call {"id", "command"}; prompt tokens to report))."""

    def __init__(self, responder):
        super().__init__()
        self.responder = responder

    def answer(self, exchange: Exchange, body: dict) -> None:
        if not exchange.route.endswith("/chat/completions"):
            exchange.send_json(404, self.NOT_FOUND)
            return
        said, prompt_tokens = self.responder(body)
        exchange.send_events(_chunks(said, prompt_tokens))


def _chunks(said: str | dict, prompt_tokens: int):
    base = {"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1, "model": MODEL}
    if isinstance(said, str):
        delta: dict = {"role": "assistant", "content": said}
        finish = "stop"
    else:
        arguments = json.dumps({"command": said["command"], "description": "run it"})
        call = {"index": 0, "id": said["id"], "type": "function", "function": {"name": "bash", "arguments": arguments}}
        delta, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
    for value in (
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
        {
            **base,
            "choices": [],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 5, "total_tokens": prompt_tokens + 5},
        },
    ):
        yield b"data: " + json.dumps(value).encode() + b"\n\n"
    yield b"data: [DONE]\n\n"


def seed_plugin_dependency(directory: Path) -> None:
    """What makes OpenCode skip its npm install of @opencode-ai/plugin in `directory` (a config
    directory): node_modules/ holding it, and package.json and package-lock.json naming it."""
    module = directory / "node_modules" / "@opencode-ai" / "plugin"
    module.mkdir(parents=True, exist_ok=True)
    (module / "package.json").write_text(json.dumps({"name": "@opencode-ai/plugin", "version": VERSION}))
    dependency = {"@opencode-ai/plugin": VERSION}
    (directory / "package.json").write_text(json.dumps({"dependencies": dependency}))
    lock = {
        "name": "opencode-config",
        "lockfileVersion": 3,
        "requires": True,
        "packages": {"": {"dependencies": dependency}, "node_modules/@opencode-ai/plugin": {"version": VERSION}},
    }
    (directory / "package-lock.json").write_text(json.dumps(lock))


@dataclass
class Session:
    """A throwaway HOME (OpenCode's data under HOME/.local/share) and `opencode run` turns in
    `project` against `mock`."""

    binary: Path
    home: Path
    project: Path
    mock: MockChat
    timeout: float = 240

    @property
    def database(self) -> Path:
        return self.home / ".local" / "share" / "opencode" / "opencode.db"

    def configure(self) -> None:
        config = {
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": False,
            "share": "disabled",
            "enabled_providers": ["mock"],
            "model": f"mock/{MODEL}",
            "small_model": f"mock/{MODEL}",
            "permission": {"bash": "allow"},
            "provider": {
                "mock": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Mock",
                    "options": {"baseURL": f"{self.mock.url}/v1", "apiKey": PROVIDER_KEY},
                    "models": {
                        MODEL: {
                            "name": "Mock Model",
                            "tool_call": True,
                            "limit": {"context": CONTEXT_TOKENS, "output": OUTPUT_TOKENS},
                        }
                    },
                }
            },
        }
        (self.project / "opencode.json").write_text(json.dumps(config, indent=2))
        for directory in (self.config_home / "opencode", self.project / ".opencode"):
            seed_plugin_dependency(directory)

    @property
    def config_home(self) -> Path:
        return Path(os.environ.get("XDG_CONFIG_HOME") or self.home / ".config")

    def environment(self) -> dict:
        return {
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.config_home),
            **({"XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]} if "XDG_STATE_HOME" in os.environ else {}),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            "LANG": "C.UTF-8",
        }

    def run(self, prompt: str, session: str | None = None) -> str:
        """One `opencode run` turn (continuing session `session`); the session id."""
        done = self.opencode("run", "--format", "json", *(["--session", session] if session else []), prompt)
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        ids = [e["sessionID"] for e in events if isinstance(e.get("sessionID"), str)]
        if done.returncode != 0 or not ids:
            raise AssertionError(
                f"opencode run {prompt!r} exited {done.returncode}: {done.stdout[-3000:]} {done.stderr[-3000:]}"
            )
        return ids[0]

    def opencode(self, *args: str) -> subprocess.CompletedProcess:
        """`opencode *args` (run, export, import, session delete), run in the project."""
        return subprocess.run(
            [str(self.binary), *args],
            cwd=self.project,
            env=self.environment(),
            capture_output=True,
            text=True,
            timeout=self.timeout,
            check=False,
        )


class Setup:
    def __init__(self, project: Project, session: Session, script: Script):
        self.project, self.session, self.script = project, session, script

    def precompact(self, *args: str) -> subprocess.CompletedProcess:
        environment = self.session.environment()
        keep = ("XDG_DATA_HOME", "XDG_CONFIG_HOME")
        return commands.precompact(
            self.project.path, *args, home=self.session.home, env={k: environment[k] for k in keep}
        )

    def index(self) -> list[dict]:
        return [
            json.loads(line) for line in (self.project.logs / "precompact-savepoint.jsonl").read_text().splitlines()
        ]


@contextlib.contextmanager
def session_in(project: Project, home: Path, binary: Path, *install: str, script: Script | None = None):
    """An OpenCode session for `project` (HOME at `home`) against a started mock, with
    `precompact install --agent opencode *install` done; waits for the worker, then stops the mock."""
    home.mkdir()
    script = script or Script()
    with MockChat(script) as mock:
        session = Session(binary, home, project.path, mock)
        session.configure()
        result = Setup(project, session, script)
        installed = result.precompact("install", "--agent", "opencode", *install)
        assert installed.returncode == 0, installed.stderr
        yield result
        wait_for_worker(project)
