"""`precompact mcp`: recall, show and savepoints as MCP tools over stdio, for Claude Code.

The MCP SDK takes about a second to import, so only this module imports it, and only the `mcp`
command imports this module. The tools are read-only views of `recall`; a request recall cannot
answer comes back as a tool error the model can read. They serve the session's own project only
(the one the server resolves from its working directory, its configuration approved):
`install --mcp` puts them in `permissions.allow`, so the model calls them without the user being
asked, and any text the model reads could ask it to. Crossing projects (`recall --everywhere`,
`show --project`) stays a command the user runs in their own shell; outside every project (a
user-scope server started in a directory without `.precompact.toml`) `recall` answers only that.
"""

from __future__ import annotations

import re
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from precompact import api
from precompact.boundary import quoting
from precompact.config.settings import Config
from precompact.errors import PrecompactError
from precompact.recall import fulltext as recall
from precompact.transcript import agents

SERVER_NAME = "precompact"
INSTRUCTIONS = (
    "Search the full conversation saved before each compaction of this project (precompact savepoints): "
    "`recall` finds entries by words and prints references, `show` prints entries by reference (a long one in parts, "
    "each naming the reference that continues it), `savepoints` lists them."
)
# What a tool answers outside every project, and to an argument naming another project.
ACROSS_PROJECTS = (
    "precompact's tools search only the project this session is in; to search every project this machine archived, "
    "the user runs `precompact recall QUERY --everywhere` in their own shell (then `precompact show REF --project PATH`)"
)
OUTSIDE_A_PROJECT = f"this session is not in a precompact project: nothing searched. {ACROSS_PROJECTS}"
INSTRUCTIONS_OUTSIDE_A_PROJECT = (
    "This session is not in a precompact project, so precompact searches nothing here: `recall` only says how the user "
    "searches the conversations saved in every project themselves."
)
# Arguments that would name another project (`recall --everywhere`'s, `show --project`'s): refused
# with the line that says how the user crosses projects, not as a mere unknown argument.
CROSSING_ARGUMENTS = ("everywhere", "project")
_READ_ONLY = types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
# How long `recall`'s and `savepoints`' answers may be, in characters (`show` has its own bounds).
_ANSWER_BUDGET = {
    "type": "integer",
    "minimum": 200,
    "maximum": 50_000,
    "default": recall.DEFAULT_BUDGET,
    "description": "At most this many characters.",
}
TOOLS = [
    types.Tool(
        name="recall",
        description=(
            "Full-text search (BM25) over the conversation saved in this project's precompact savepoints, including what "
            "compaction dropped: earlier requests, tool output, error messages, file contents read. This project only, "
            "never another one. Returns excerpts, best first, each headed by a reference [SAVEPOINT:ENTRY] for `show`. "
            "Quote a phrase to match it exactly."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": 'Words to find; "a quoted phrase" matches as a phrase.'},
                "budget": _ANSWER_BUDGET,
                "savepoint": {"type": "integer", "minimum": 1, "description": "Only entries this savepoint holds."},
                "since": {"type": "string", "description": "Only entries from this ISO 8601 time on."},
                "role": {
                    "type": "string",
                    "enum": list(recall.ROLES),
                    "description": "Only entries of this role (tool: tool results).",
                },
                "tool": {"type": "string", "description": "Only calls to, and results of, this tool (e.g. Bash)."},
                "agent": {
                    "type": "string",
                    "enum": list(agents.NAMES),
                    "description": "Only the sessions of this agent (Claude Code, Codex CLI, Gemini CLI).",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        annotations=_READ_ONLY,
    ),
    types.Tool(
        name="show",
        description=(
            "Prints this project's saved conversation entries by the reference recall gave: SAVEPOINT:ENTRY, or "
            "SAVEPOINT:FIRST-LAST for a range, at most `budget` characters. An entry that does not fit is cut, and the "
            "line under its header names the reference that continues it (SAVEPOINT:ENTRY@OFFSET: from that character)."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "ref": {
                    "type": "string",
                    "pattern": f"^{recall.REF_PATTERN}$",
                    "description": "e.g. 3:142, 3:140-145, or 3:142@6000 to continue a cut entry",
                },
                "budget": {
                    "type": "integer",
                    "minimum": recall.SHOW_BUDGET_BOUNDS[0],
                    "maximum": recall.SHOW_BUDGET_BOUNDS[1],
                    "default": recall.DEFAULT_BUDGET,
                    "description": "At most this many characters.",
                },
                "instance": {
                    "type": "string",
                    "description": "Whose savepoint, when recall named another instance of this project.",
                },
            },
            "required": ["ref"],
            "additionalProperties": False,
        },
        annotations=_READ_ONLY,
    ),
    types.Tool(
        name="savepoints",
        description=(
            "Lists this project's precompact savepoints, newest first (time, trigger, hash, git and chain state, "
            "compaction summary)."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "budget": _ANSWER_BUDGET,
            },
            "additionalProperties": False,
        },
        annotations=_READ_ONLY,
    ),
]


# Outside every project: one tool, so the model that looks for precompact finds the line saying
# how the user searches every project; it takes a query and searches nothing.
TOOLS_OUTSIDE_A_PROJECT = [
    types.Tool(
        name="recall",
        description=(
            "This session is not in a precompact project: searches nothing here, and says how the user searches the "
            "conversations saved in every project (precompact savepoints) themselves."
        ),
        input_schema={
            "type": "object",
            "properties": {"query": {"type": "string", "description": "Words to find."}},
            "required": ["query"],
        },
        annotations=_READ_ONLY,
    )
]


class ToolError(PrecompactError):
    """A tool call with arguments the tool does not take; the message says which."""


# What a tool answers to a failure that is not precompact's own (an OSError reading logs/, a
# damaged file a reader did not expect, a bug): the error's own text may hold paths or words of the
# transcript, so it goes to the project's error log (`unexplained`) and the model reads these
# fixed words, which name what the user runs in their own shell, where precompact says what is
# wrong and its fix.
USERS_COMMAND = {"recall": "precompact recall QUERY", "show": "precompact show REF", "savepoints": "precompact status"}
UNEXPLAINED = (
    "{tool} could not answer: precompact met an error it does not show here ({kept}); the user runs "
    "`{command}` and then `precompact verify` in their own shell, which say what is wrong in logs/ and the fix"
)
NOT_KEPT = "not kept either: logs/ could not be written"


def unexplained(config: Config | None, name: str, error: Exception) -> str:
    """The tool's one line for `error`, a failure that is not precompact's own, logged first
    (redacted, its traceback in the debug log) in the project's error log; the line holds none of
    its text."""
    kept = config is not None and api.log_hook_failure(config.root, "mcp", f"{name}: {api.hook_failure_reason(error)}")
    tool = name if name in USERS_COMMAND else "the tool"
    command = USERS_COMMAND.get(name, "precompact status")
    return UNEXPLAINED.format(tool=tool, kept=f"kept in {kept}" if kept else NOT_KEPT, command=command)


def answer(config: Config | None, name: str, arguments: dict[str, Any]) -> str:
    """A tool's text answer (`config` None: outside every project); raises PrecompactError for a
    request it cannot answer."""
    if config is None:
        raise ToolError(OUTSIDE_A_PROJECT)
    served = {tool.name: tool for tool in TOOLS}
    if name not in served:
        raise ToolError(f"no tool {quoting.inline(name)}; the tools are {', '.join(served)}")
    if any(key in arguments for key in CROSSING_ARGUMENTS):
        raise ToolError(ACROSS_PROJECTS)
    _check(served[name], arguments)
    if name == "recall":
        found = api.recall(
            config,
            arguments["query"],
            arguments.get("savepoint"),
            arguments.get("since"),
            arguments.get("role"),
            arguments.get("tool"),
            agent=arguments.get("agent"),
        )
        return found.text(arguments.get("budget") or recall.DEFAULT_BUDGET)
    if name == "show":
        shown = api.show(config, arguments["ref"], arguments.get("instance"))
        return "\n\n".join(api.render(shown, arguments.get("budget") or recall.DEFAULT_BUDGET))
    return api.describe_savepoints(config, arguments.get("budget") or recall.DEFAULT_BUDGET)


# JSON Schema's names of the types the tools' arguments take, and the Python types they are.
_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "boolean": (bool,)}


def _check(tool: types.Tool, arguments: dict[str, Any]) -> None:
    """ToolError unless `arguments` are what `tool`'s input schema allows: only its arguments,
    the required ones present, each of its type, within its bounds, one of its values, of its
    pattern. The client is not trusted to have checked."""
    schema = tool.input_schema
    properties: dict[str, dict[str, Any]] = schema["properties"]
    unknown = [key for key in arguments if key not in properties]
    if unknown:
        taken = ", ".join(properties) or "no arguments"
        raise ToolError(f"{tool.name} takes no {quoting.inline(unknown[0])}; it takes {taken}")
    for key in schema.get("required", []):
        if arguments.get(key) is None:
            raise ToolError(f"{tool.name} needs `{key}`")
    for key, value in arguments.items():
        if value is None:
            continue
        rule = properties[key]
        kind = rule["type"]
        if not isinstance(value, _TYPES[kind]) or (kind == "integer" and isinstance(value, bool)):
            raise ToolError(f"`{key}` must be {'an' if kind == 'integer' else 'a'} {kind}")
        if "minimum" in rule and value < rule["minimum"]:
            raise ToolError(f"`{key}` must be at least {rule['minimum']}")
        if "maximum" in rule and value > rule["maximum"]:
            raise ToolError(f"`{key}` must be at most {rule['maximum']}")
        if "enum" in rule and value not in rule["enum"]:
            raise ToolError(f"`{key}` must be one of {', '.join(rule['enum'])}")
        if "pattern" in rule and not (isinstance(value, str) and re.fullmatch(rule["pattern"], value, re.ASCII)):
            raise ToolError(
                f"`{key}` {quoting.inline(_cut(str(value)))} is not of the form the schema says ({rule['description']})"
            )


def _cut(value: str) -> str:
    """An argument as an error quotes it: its start, so the error stays one short line."""
    return value if len(value) <= 60 else f"{value[:60]}…"


def server(config: Config | None) -> Server[Any]:
    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS if config is not None else TOOLS_OUTSIDE_A_PROJECT)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            text = answer(config, params.name, params.arguments or {})
        except PrecompactError as e:  # the one place a tool's failure is rendered
            text, failed = quoting.single_line(str(e)), True
        except Exception as e:  # noqa: BLE001 - not precompact's own: its text stays in the log, never the model's
            text, failed = unexplained(config, params.name, e), True
        else:
            failed = False
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=failed)

    from importlib.metadata import version

    return Server(
        SERVER_NAME,
        version=version("precompact"),
        instructions=INSTRUCTIONS if config is not None else INSTRUCTIONS_OUTSIDE_A_PROJECT,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve(config: Config | None) -> None:
    """Answers on stdin and stdout until the client closes stdin (`config` None: outside every
    project)."""
    app = server(config)

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await app.run(read_stream, write_stream, app.create_initialization_options())

    anyio.run(run)
