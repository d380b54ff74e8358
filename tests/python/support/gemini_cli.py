"""Drives the real Google Gemini CLI against a local mock of the Gemini API.

`gemini_binary()` installs the pinned `@google/gemini-cli` from npm once into
~/.cache/precompact/gemini-cli/<version> (override with PRECOMPACT_GEMINI_CACHE); it runs on
this machine's Node.js (>= 20). `MockGemini` answers generateContent and streamGenerateContent
(SSE) from a `Script` and records every request; `Session` runs `gemini -p` in a throwaway HOME
whose settings point it at the mock (GOOGLE_GEMINI_BASE_URL) and hold precompact's hooks.

What Gemini CLI 0.61.0 does, observed with this harness (docs/agents.md keeps the full record):
- Each turn first asks a router (`…flash-lite:generateContent`, a JSON schema with
  `complexity_score`), then streams the main request. Tool calls are `functionCall` parts
  (`run_shell_command` with `{"command"}`); results come back as `functionResponse` parts.
- PreCompress fires before every model round; the CLI compresses when the last answer's
  `promptTokenCount` reaches `model.compressionThreshold` x 1,048,576: two more generateContent
  requests, a summary ("…generate the updated <state_snapshot>") and a check ("Critically
  evaluate the <state_snapshot>…").
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from support import commands, npm_package
from support.claude_code import wait_for_worker
from support.mock_http import Exchange, MockServer, sse
from support.npm_package import Unavailable
from support.projects import Project

VERSION = "0.61.0"
PACKAGE = "@google/gemini-cli"
CACHE = Path(os.environ.get("PRECOMPACT_GEMINI_CACHE", Path.home() / ".cache" / "precompact" / "gemini-cli"))
NPM_TIMEOUT_SECONDS = 900
SUMMARY_MARK = "<state_snapshot>"


def gemini_binary(version: str = VERSION) -> Path:
    """The `gemini` launcher of `version`, installed from npm into the cache on first use."""
    if shutil.which("node") is None:
        raise Unavailable("Node.js is not installed (Gemini CLI needs Node.js 20 or later)")
    prefix = CACHE / version
    binary = prefix / "node_modules" / ".bin" / "gemini"
    return npm_package.installed(PACKAGE, version, prefix, binary, NPM_TIMEOUT_SECONDS, probe_timeout=120)


def texts(content: dict) -> str:
    return "\n".join(p.get("text", "") for p in content.get("parts") or [] if isinstance(p, dict))


class MockGemini(MockServer):
    """The Gemini API on 127.0.0.1: records every request, answers with `responder`
    (path, body -> (parts, prompt tokens))."""

    def __init__(self, responder):
        super().__init__()
        self.responder = responder

    def answer(self, exchange: Exchange, body: dict) -> None:
        parts, tokens = self.responder(exchange.path, body)
        answer = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {
                "promptTokenCount": tokens,
                "candidatesTokenCount": 10,
                "totalTokenCount": tokens + 10,
            },
            "modelVersion": "gemini-mock",
        }
        if "streamGenerateContent" in exchange.path:
            exchange.send_events([sse(answer)])
        else:
            exchange.send_json(200, answer)


def is_router(request: dict) -> bool:
    return "complexity_score" in json.dumps((request["body"] or {}).get("generationConfig") or {})


def is_compression(request: dict) -> bool:
    contents = (request["body"] or {}).get("contents") or []
    return bool(contents) and SUMMARY_MARK in texts(contents[-1]) and "generateContent" in request["path"]


def main_requests(mock: MockGemini) -> list[dict]:
    return [r for r in mock.requests if "streamGenerateContent" in r["path"]]


@dataclass
class Script:
    """What the mock model answers. A turn whose prompt names `[[run:NAME]]` runs
    `commands[NAME]` as run_shell_command calls, one per model round (the script counts the
    calls it made), then says "Done."; compression requests get `summary` inside
    <state_snapshot>; the router a low complexity score; anything else "Noted.". Each answer
    reports `prompt_tokens`, or `heavy[NAME]` for plan NAME's first call (above the compression
    threshold, it makes Gemini compress before its next round)."""

    commands: dict[str, list[str]] = field(default_factory=dict)
    heavy: dict[str, int] = field(default_factory=dict)
    summary: str = "The user is building a parser; work continues."
    prompt_tokens: int = 1_000
    _made: dict[str, int] = field(default_factory=dict, repr=False)

    def __call__(self, path: str, body: dict) -> tuple[list[dict], int]:
        request = {"path": path, "body": body}
        if is_router(request):
            return [{"text": json.dumps({"complexity_reasoning": "simple", "complexity_score": 1})}], self.prompt_tokens
        if is_compression(request):
            return [{"text": f"{SUMMARY_MARK}{self.summary}</state_snapshot>"}], self.prompt_tokens
        prompts = [texts(c) for c in body.get("contents") or [] if c.get("role") == "user" and texts(c)]
        latest = next((t for t in reversed(prompts) if "[[run:" in t or not t.startswith("<")), "")
        for name, planned in self.commands.items():
            if f"[[run:{name}]]" in latest:
                step = self._made.get(name, 0)
                if step < len(planned):
                    self._made[name] = step + 1
                    call = {
                        "functionCall": {
                            "name": "run_shell_command",
                            "args": {"command": planned[step], "description": "run"},
                        }
                    }
                    return [call], self.heavy.get(name, self.prompt_tokens) if step == 0 else self.prompt_tokens
                return [{"text": "Done."}], self.prompt_tokens
        return [{"text": "Noted."}], self.prompt_tokens


SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    # Session retention deletes a session file a resumed run left as a stub, with the real one.
    "general": {
        "enableAutoUpdate": False,
        "enableAutoUpdateNotification": False,
        "sessionRetention": {"enabled": False},
    },
}


@dataclass
class Session:
    """A throwaway HOME and `gemini -p` runs in it against `mock`."""

    binary: Path
    home: Path
    project: Path
    mock: MockGemini
    timeout: float = 240
    model: str | None = None  # `-m`: Gemini's default model when None

    def configure(self) -> None:
        (self.home / ".gemini").mkdir(parents=True, exist_ok=True)
        (self.home / ".gemini" / "settings.json").write_text(json.dumps(SETTINGS))

    def environment(self) -> dict:
        return {
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(self.home),
            **({"XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"]} if "XDG_CONFIG_HOME" in os.environ else {}),
            **({"XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]} if "XDG_STATE_HOME" in os.environ else {}),
            "LANG": "C.UTF-8",
            "GEMINI_API_KEY": "fake",
            "GOOGLE_GEMINI_BASE_URL": self.mock.url,
        }

    def run(self, prompt: str, resume: bool | str = False) -> dict:
        """One `gemini -p` turn (resuming the latest session, or the session of id `resume`);
        its JSON result."""
        resumed = ["--resume", resume if isinstance(resume, str) else "latest"] if resume else []
        chosen = ["-m", self.model] if self.model else []
        args = [str(self.binary), "-p", prompt, "-o", "json", "--yolo", *chosen, *resumed]
        done = subprocess.run(
            args,
            cwd=self.project,
            env=self.environment(),
            capture_output=True,
            text=True,
            timeout=self.timeout,
            check=False,
        )
        start = done.stdout.find("{")
        if done.returncode != 0 or start == -1:
            raise AssertionError(
                f"gemini -p {prompt!r} exited {done.returncode}: {done.stdout[-3000:]} {done.stderr[-3000:]}"
            )
        return json.loads(done.stdout[start:])

    def chat_files(self) -> list[Path]:
        return sorted((self.home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl"))


class Setup:
    def __init__(self, project: Project, session: Session, script: Script):
        self.project, self.session, self.script = project, session, script

    def precompact(self, *args: str) -> subprocess.CompletedProcess:
        return commands.precompact(self.project.path, *args, home=self.session.home)

    def index(self) -> list[dict]:
        return [
            json.loads(line) for line in (self.project.logs / "precompact-savepoint.jsonl").read_text().splitlines()
        ]


@contextlib.contextmanager
def session_in(project: Project, home: Path, binary: Path, *install: str, script: Script | None = None):
    """A Gemini CLI session for `project` (HOME at `home`) against a started mock, with
    `precompact install --agent gemini *install` done; waits for the worker, then stops the mock."""
    home.mkdir()
    script = script or Script()
    with MockGemini(script) as mock:
        session = Session(binary, home, project.path, mock)
        session.configure()
        result = Setup(project, session, script)
        installed = result.precompact("install", "--agent", "gemini", *install)
        assert installed.returncode == 0, installed.stderr
        yield result
        wait_for_worker(project)
