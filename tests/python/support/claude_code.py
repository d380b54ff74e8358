"""Drives the real Claude Code CLI against a local mock of the Anthropic Messages API.

`claude_binary()` installs the pinned `@anthropic-ai/claude-code` from npm once into
~/.cache/precompact/claude-code/<version> (outside the clone; override with
PRECOMPACT_CLAUDE_CODE_CACHE) and reuses it; the npm package's postinstall puts a native binary
in place, so a run needs no Node.js. `MockAnthropic` serves POST /v1/messages (streaming SSE or
JSON) from a `Script` and records every request; `Session` runs `claude -p` in a throwaway HOME.

What Claude Code 2.1.332 does, observed with this harness (the tests rely on these facts):
- Hook stdin: every event has session_id, transcript_path, cwd, hook_event_name. SessionStart
  adds source (startup|resume|compact); on `resume` also seconds_since_last_response,
  context_tokens (the context Claude Code counts), prompt_cache_likely_expired; on `compact`
  also model. PreCompact adds trigger (manual|auto) and custom_instructions (null for a bare
  `/compact`) and prompt_id; PostCompact adds trigger and compact_summary, the summariser's
  whole answer, `<analysis>` included.
- Order: `claude -p X --resume ID` fires SessionStart(resume); `/compact` (or auto-compaction
  before a prompt once the last turn's usage is near the window) then fires PreCompact,
  SessionStart(compact), PostCompact, in that order; SessionEnd at exit. `--resume` keeps the
  session id.
- `/compact` with nothing new since the last compaction answers "Not enough messages to
  compact.": PreCompact fires, no request reaches the model, no SessionStart or PostCompact.
- The compaction request is one more POST /v1/messages with the tools still listed; its last
  user message starts "CRITICAL: Respond with TEXT ONLY", asks for `<analysis>` then
  `<summary>`, and ends with PreCompact's raw stdout after "Additional Instructions:\n" (JSON
  included; `systemMessage` is not interpreted). The answer is retried when it holds no summary.
- SessionStart's `additionalContext` reaches the model as a `system`-role message "SessionStart
  hook additional context: ..." and is stored in the transcript as `attachment` entries
  (hook_success, hook_additional_context) that are replayed: after a compaction the `compact`
  context stays after the boundary, and each later resume adds another copy. Plain-text
  SessionStart stdout reaches the model only at `startup`.
- After compaction the transcript holds a `system` compact_boundary, the summary as a user entry
  with isCompactSummary, a caveat (isMeta), `<command-name>/compact</command-name>` and
  `<local-command-stdout>` user entries (PreCompact's and PostCompact's stdout quoted); files
  read before are re-attached as `<system-reminder>` texts.
- Project settings are read from `<cwd>/.claude/settings.json`: started in a subdirectory,
  Claude Code runs none of the project root's hooks; ~/.claude/settings.json applies anywhere.
- Tools offered by default: Agent, Bash, Edit, ListAgents, Read, ReportFindings, ScheduleWakeup,
  Skill, ToolSearch, Workflow, Write. TodoWrite is deferred (loaded with ToolSearch
  "select:TodoWrite") and enabled only with CLAUDE_CODE_ENABLE_TODO_TOOLS=1 and
  CLAUDE_CODE_ENABLE_TASKS=0 (otherwise the Task* tools replace it). As root,
  bypassPermissions is refused: tools are allowed with --allowedTools. The default Task* tools
  answer "Task #1 created successfully: <subject>", "Updated task #1 status" and, for TaskList,
  lines "#1 [in_progress] <subject>"; their list is kept in ~/.claude/tasks/<session id>/.
- modelUsage.contextWindow: 1,000,000 for claude-opus-5-5, -5, sonnet-5-5, -5, opus-4-8,
  fable-5 and any `[1m]` id; 200,000 for opus-4-6, sonnet-4-6, sonnet-4-5, haiku-4-5.
- A failed Bash call comes back as a tool_result with is_error true, "Exit code N\n<output>".
- MCP: a project's `.mcp.json` stdio server is started under `-p` without an approval prompt.
  Its tools are deferred: named in the system prompt's list of tools loaded through ToolSearch
  ("select:mcp__<server>__<tool>"), then called as `mcp__<server>__<tool>`. A project's
  `.claude/settings.json` `permissions.allow` entries are dropped until the workspace is trusted
  ("Dropped 3 project-scoped permissions.allow entries — workspace not yet trusted"); the same
  entries in ~/.claude/settings.json apply. An MCP tool not allowed answers "Claude requested
  permissions to use <tool>, but you haven't granted it yet."
- A hook's command runs under /bin/sh -c (whatever SHELL says), with Claude Code's own PATH. A
  `systemMessage` on a hook's stdout (exit 0) is stored in the transcript as an `attachment` of
  type `hook_system_message` (what the user is shown) and is not sent to the model.
- User-scope MCP servers are read from `mcpServers` in ~/.claude.json (where `claude mcp add
  --scope user` writes them; a local-scope one goes under `projects.<dir>.mcpServers` there), not
  from ~/.claude/settings.json; `claude mcp list` starts each and prints "<name>: <command> -
  ✔ Connected".
- Sessions live in ~/.claude/projects/<folder>/<session id>.jsonl, <folder> being the directory
  Claude Code started in with every character but letters and digits turned into `-`;
  `--resume <id>` reopens any session file there, and sends the model its entries after the
  last compact boundary.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from support import commands, npm_package
from support.mock_http import Exchange, MockServer, sse
from support.projects import Project

VERSION = "2.1.332"
CACHE = Path(os.environ.get("PRECOMPACT_CLAUDE_CODE_CACHE", Path.home() / ".cache" / "precompact" / "claude-code"))
PACKAGE = "@anthropic-ai/claude-code"
NPM_TIMEOUT_SECONDS = 600


def claude_binary(version: str = VERSION) -> Path:
    """The `claude` executable of `version`, installed from npm into the cache on first use
    (outside the clone, shared by every clone and CI run on this machine)."""
    prefix = CACHE / version
    return npm_package.installed(
        PACKAGE, version, prefix, prefix / "node_modules" / ".bin" / "claude", NPM_TIMEOUT_SECONDS
    )


@dataclass(frozen=True)
class ApiError:
    """What a responder returns to answer a request with an API error instead of a message."""

    status: int
    kind: str
    message: str

    def body(self) -> dict:
        return {"type": "error", "error": {"type": self.kind, "message": self.message}}


class MockAnthropic(MockServer):
    """A Messages API on 127.0.0.1 that records every request and answers with `responder`."""

    NOT_FOUND: ClassVar[dict] = {"type": "error", "error": {"type": "not_found_error", "message": "not here"}}

    def __init__(self, responder):
        super().__init__()
        self.responder = responder

    def answer(self, exchange: Exchange, body: dict) -> None:
        if exchange.route.endswith("/count_tokens"):
            exchange.send_json(200, {"input_tokens": 1000})
            return
        if not exchange.route.endswith("/v1/messages"):
            exchange.send_json(404, self.NOT_FOUND)
            return
        answer = self.responder(body)
        if isinstance(answer, ApiError):
            exchange.send_json(answer.status, answer.body())
            return
        content, usage = answer
        if body.get("stream"):
            exchange.stream_events(sse(event, event["type"]) for event in _stream_events(body, content, usage))
        else:
            exchange.send_json(200, _message(body, content, usage))


_counter = iter(range(1, 1 << 30))


def _message(body, content, usage):
    return {
        "id": f"msg_mock{next(_counter):06d}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude-mock"),
        "content": content,
        "stop_reason": "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }


def _stream_events(body, content, usage):
    message = _message(body, [], usage)
    stop_reason = message.pop("stop_reason")
    yield {"type": "message_start", "message": {**message, "stop_reason": None}}
    for index, block in enumerate(content):
        if block["type"] == "text":
            yield {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            yield {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": block["text"]},
            }
        else:
            yield {"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}}
            yield {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
            }
        yield {"type": "content_block_stop", "index": index}
    stop_reason = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": usage.get("output_tokens", 10)},
    }
    yield {"type": "message_stop"}


COMPACTION_MARK = "Your task is to create a detailed summary of the conversation so far"
PLAN = re.compile(r"\[\[plan:([\w-]+)\]\]")


@dataclass
class Script:
    """What the mock model answers. A prompt naming `[[plan:NAME]]` runs `plans[NAME]`: one
    assistant turn per step (each a list of `(tool name, input)` calls), then short text. The step is the
    number of assistant turns since that prompt in the request itself, so the script holds no
    state and survives resumes. A compaction request is answered with `<analysis>` and
    `<summary>` blocks; anything else with short text."""

    plans: dict[str, list[list[tuple[str, dict]]]] = field(default_factory=dict)
    summary: str = "The user is building a parser; work continues."
    analysis: str = "Thinking about what happened, in order."
    input_tokens: int = 20_000
    _ids: object = field(default_factory=lambda: iter(range(1, 1 << 30)), repr=False)

    def __call__(self, body: dict) -> tuple[list[dict], dict]:
        usage = {
            "input_tokens": self.input_tokens,
            "output_tokens": 50,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        messages = body.get("messages") or []
        if messages and COMPACTION_MARK in texts(messages[-1]):
            return [
                {
                    "type": "text",
                    "text": f"<analysis>\n{self.analysis}\n</analysis>\n\n<summary>\n{self.summary}\n</summary>",
                }
            ], usage
        for position in range(len(messages) - 1, -1, -1):
            message = messages[position]
            found = PLAN.search(texts(message)) if message.get("role") == "user" else None
            if found:
                steps = self.plans.get(found.group(1), [])
                step = sum(1 for m in messages[position + 1 :] if m.get("role") == "assistant")
                if step < len(steps):
                    calls = [
                        {"type": "tool_use", "id": f"toolu_mock{next(self._ids):06d}", "name": name, "input": arguments}
                        for name, arguments in steps[step]
                    ]
                    return calls, usage
                return [{"type": "text", "text": f"Done with {found.group(1)}."}], usage
        return [{"type": "text", "text": "Noted."}], usage


def texts(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


@dataclass
class Session:
    """A throwaway HOME and a project, and `claude -p` runs in them against `mock`."""

    binary: Path
    home: Path
    project: Path
    mock: MockAnthropic
    env: dict = field(default_factory=dict)
    timeout: float = 180

    def environment(self) -> dict:
        return {
            # The installed hooks run `precompact` from PATH, as on a machine where it is installed.
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(self.home),
            # The hooks read the test's approvals of its project's configuration.
            **({"XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"]} if "XDG_CONFIG_HOME" in os.environ else {}),
            # and the record of the savepoints this machine wrote (local.provenance).
            **({"XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]} if "XDG_STATE_HOME" in os.environ else {}),
            "LANG": "C.UTF-8",
            "ANTHROPIC_BASE_URL": self.mock.url,
            "ANTHROPIC_API_KEY": "fake",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
            # TodoWrite is offered (as a deferred tool, loaded through ToolSearch) only with
            # the todo tools on and the newer Task* tools off.
            "CLAUDE_CODE_ENABLE_TODO_TOOLS": "1",
            "CLAUDE_CODE_ENABLE_TASKS": "0",
            **self.env,
        }

    def run(
        self, prompt: str, resume: str | None = None, cwd: Path | None = None, debug_file: Path | None = None
    ) -> dict:
        """One `claude -p` run; its JSON result (`session_id`, `result`, ...)."""
        args = [
            str(self.binary),
            "-p",
            prompt,
            "--output-format",
            "json",
            "--allowedTools",
            "Read,Write,Edit,Bash,ToolSearch,TodoWrite,TaskCreate,TaskUpdate,TaskList",
        ]
        if resume:
            args += ["--resume", resume]
        if debug_file:
            args += ["--debug-file", str(debug_file)]
        done = subprocess.run(
            args,
            cwd=cwd or self.project,
            env=self.environment(),
            capture_output=True,
            text=True,
            timeout=self.timeout,
            check=False,
        )
        if done.returncode != 0 or not done.stdout.startswith("{"):
            raise AssertionError(
                f"claude -p {prompt!r} exited {done.returncode}: {done.stdout[-2000:]} {done.stderr[-2000:]}"
            )
        return json.loads(done.stdout)

    def run_in_one_process(self, prompts: list[str]) -> str:
        """The prompts (slash commands included) fed to one `claude -p --input-format
        stream-json` process, as one interactive session would take them; its session id."""
        args = [str(self.binary), "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
        lines = "".join(json.dumps({"type": "user", "message": {"role": "user", "content": p}}) + "\n" for p in prompts)
        done = subprocess.run(
            [*args, "--allowedTools", "Read"],
            input=lines,
            cwd=self.project,
            env=self.environment(),
            capture_output=True,
            text=True,
            timeout=self.timeout,
            check=False,
        )
        said = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        ids = {m["session_id"] for m in said if isinstance(m.get("session_id"), str)}
        if done.returncode != 0 or len(ids) != 1:
            raise AssertionError(f"claude -p (stream-json) exited {done.returncode}: {done.stderr[-2000:]}")
        return ids.pop()

    def transcript(self, session_id: str) -> list[dict]:
        [path] = (self.home / ".claude" / "projects").glob(f"*/{session_id}.jsonl")
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# A worker that retries (edges/worker.py backs off 15.5 s in all) and flushes both layers at nice 10
# on a loaded machine (CI shares two cores) needs far more than an idle one.
WORKER_DEADLINE_SECONDS = 240


def wait_for_worker(project: Project, timeout: float = WORKER_DEADLINE_SECONDS) -> None:
    """Waits until no background worker of the project is running. On the processes, not on the
    worker's lock: a worker takes its lock only once Python has started and imported, so right
    after the hook that spawned it returns the lock is still free (seen under load), while its
    process exists from the spawn on (Popen returns after exec). Probing the lock would also make
    a worker that tried it at that moment leave its work to the probe."""
    deadline = time.monotonic() + timeout
    while running := workers_of(project):
        if time.monotonic() > deadline:
            raise AssertionError(
                f"the background worker of {project.path} (pids {running}) did not finish in {timeout} s"
            )
        time.sleep(0.1)


def workers_of(project: Project) -> list[int]:
    """The pids of the live background workers of the project (support.commands.workers_of)."""
    return commands.workers_of(project.path)


class Setup:
    def __init__(self, project: Project, session: Session, script: Script):
        self.project, self.session, self.script = project, session, script

    def precompact(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        return commands.precompact(cwd or self.project.path, *args, home=self.session.home)

    def index(self) -> list[dict]:
        return [
            json.loads(line) for line in (self.project.logs / "precompact-savepoint.jsonl").read_text().splitlines()
        ]


def messages_text(request: dict) -> str:
    return json.dumps(request["body"], ensure_ascii=False)


def compaction_requests(mock: MockAnthropic) -> list[dict]:
    return [r for r in mock.requests if r["body"] and COMPACTION_MARK in texts(r["body"]["messages"][-1])]


@contextlib.contextmanager
def session_in(project: Project, home: Path, binary: Path, *install: str, script: Script | None = None):
    """A Claude Code session for `project` (its HOME at `home`) against a started mock, with
    `precompact install *install` done; waits for the worker, then stops the mock."""
    home.mkdir()
    script = script or Script()
    with MockAnthropic(script) as mock:
        result = Setup(project, Session(binary, home, project.path, mock), script)
        installed = result.precompact("install", *install)
        assert installed.returncode == 0, installed.stderr
        yield result
        wait_for_worker(project)
