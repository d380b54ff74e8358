"""`precompact mcp`: recall, show and savepoints as MCP tools over stdio, for Claude Code.

The MCP SDK takes about a second to import, so only this module imports it, and only the `mcp`
command imports this module. The tools are read-only views of `recall`; a request recall cannot
answer comes back as a tool error the model can read. Outside every project (a user-scope server
started in the home directory, say) there is no project to default to: `recall` searches every
project this machine archived and `show` takes the project a hit named, as the CLI does there.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from precompact import api
from precompact.config import settings as configuration
from precompact.config.settings import Config
from precompact.errors import PrecompactError
from precompact.recall import fulltext as recall
from precompact.transcript import agents

SERVER_NAME = "precompact"
INSTRUCTIONS = (
    "Search the full conversation saved before each compaction of this project (precompact savepoints): "
    "`recall` finds entries by words and prints references, `show` prints an entry whole, `savepoints` lists them."
)
INSTRUCTIONS_EVERYWHERE = (
    "Search the full conversations saved before each compaction in every project this machine archived (precompact "
    "savepoints): `recall` finds entries by words, each hit naming its project; `show` prints an entry of that project whole."
)
_READ_ONLY = types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
TOOLS = [
    types.Tool(
        name="recall",
        description=(
            "Full-text search (BM25) over the conversation saved in this project's precompact savepoints, including what "
            "compaction dropped: earlier requests, tool output, error messages, file contents read. Returns excerpts, best "
            "first, each headed by a reference [SAVEPOINT:ENTRY] for `show`. Quote a phrase to match it exactly."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": 'Words to find; "a quoted phrase" matches as a phrase.'},
                "budget": {
                    "type": "integer",
                    "minimum": 200,
                    "maximum": 50_000,
                    "default": recall.DEFAULT_BUDGET,
                    "description": "At most this many characters.",
                },
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
                "everywhere": {
                    "type": "boolean",
                    "default": False,
                    "description": "Search every project this machine archived, not only this one; each hit names its project.",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        annotations=_READ_ONLY,
    ),
    types.Tool(
        name="show",
        description="Prints saved conversation entries whole, by the reference recall gave: SAVEPOINT:ENTRY, or SAVEPOINT:FIRST-LAST for a range.",
        input_schema={
            "type": "object",
            "properties": {
                "ref": {"type": "string", "pattern": r"^\d+:\d+(-\d+)?$", "description": "e.g. 3:142 or 3:140-145"},
                "instance": {"type": "string", "description": "Whose savepoint, when recall named another instance."},
                "project": {
                    "type": "string",
                    "description": "The project's path, when an `everywhere` recall named another project.",
                },
            },
            "required": ["ref"],
            "additionalProperties": False,
        },
        annotations=_READ_ONLY,
    ),
    types.Tool(
        name="savepoints",
        description="Lists this project's precompact savepoints (time, trigger, hash, git and chain state, compaction summary).",
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        annotations=_READ_ONLY,
    ),
]


def _outside_a_project(tool: types.Tool) -> types.Tool:
    """`tool` as served outside every project: recall always searches everywhere (no
    `savepoint`, which names one project's, and no `everywhere` switch), show needs `project`."""
    schema = dict(tool.input_schema)
    properties = dict(schema["properties"])
    if tool.name == "recall":
        del properties["savepoint"], properties["everywhere"]
        description = (
            "Full-text search (BM25) over the conversations saved in every project this machine archived (precompact "
            "savepoints), including what compaction dropped. Returns excerpts, best first, each headed by a reference "
            "[SAVEPOINT:ENTRY] and the project it is from, for `show`. Quote a phrase to match it exactly."
        )
    else:
        schema["required"] = [*schema["required"], "project"]
        description = "Prints saved conversation entries whole, by the reference and the project a recall hit named."
    return tool.model_copy(update={"description": description, "input_schema": {**schema, "properties": properties}})


TOOLS_OUTSIDE_A_PROJECT = [_outside_a_project(tool) for tool in TOOLS if tool.name in ("recall", "show")]


class ToolError(PrecompactError):
    """A tool call with arguments the tool does not take; the message says which."""


def answer(config: Config | None, name: str, arguments: dict[str, Any]) -> str:
    """A tool's text answer (`config` None: outside every project); raises PrecompactError for a
    request it cannot answer."""
    if config is None and name not in ("recall", "show"):
        raise ToolError(f"no tool {name!r} outside a project; the tools are recall and show")
    if name == "recall":
        query = arguments.get("query")
        if not isinstance(query, str):
            raise ToolError("recall needs a `query` string")
        if config is None or _flag(arguments, "everywhere"):
            if arguments.get("savepoint") is not None:
                raise ToolError("`savepoint` names one project's savepoint; leave it out with `everywhere`")
            searched = api.recall_everywhere(
                query,
                _text(arguments, "since"),
                _text(arguments, "role"),
                _text(arguments, "tool"),
                _text(arguments, "agent"),
            )
            return searched.results.text(_int(arguments, "budget") or recall.DEFAULT_BUDGET)
        found = api.recall(
            config,
            query,
            _int(arguments, "savepoint"),
            _text(arguments, "since"),
            _text(arguments, "role"),
            _text(arguments, "tool"),
            agent=_text(arguments, "agent"),
        )
        return found.text(_int(arguments, "budget") or recall.DEFAULT_BUDGET)
    if name == "show":
        ref = arguments.get("ref")
        if not isinstance(ref, str):
            raise ToolError("show needs a `ref` string such as 3:142")
        project = _text(arguments, "project")
        if project is not None:
            where = _load_another(Path(project))
        elif config is not None:
            where = config
        else:
            raise ToolError("outside a project, `show` needs the `project` its recall hit named")
        return api.render(api.show(where, ref, _text(arguments, "instance")))
    if name == "savepoints" and config is not None:
        return api.describe_savepoints(config)
    raise ToolError(f"no tool {name!r}; the tools are recall, show and savepoints")


def _load_another(project: Path) -> Config:
    """The configuration of the project an `everywhere` recall hit named, the keypair override
    kept only if that project's approved configuration names chain.authority (`precompact mcp`
    asked this one's)."""
    environ = dict(os.environ)
    configuration.drop_agent_overrides(environ, configuration.find_root(project))
    return configuration.load(project, environ)


def _int(arguments: dict[str, Any], key: str) -> int | None:
    value = arguments.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise ToolError(f"`{key}` must be an integer")
    return value


def _flag(arguments: dict[str, Any], key: str) -> bool:
    value = arguments.get(key, False)
    if not isinstance(value, bool):
        raise ToolError(f"`{key}` must be true or false")
    return value


def _text(arguments: dict[str, Any], key: str) -> str | None:
    value = arguments.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolError(f"`{key}` must be a string")
    return value


def server(config: Config | None) -> Server[Any]:
    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS if config is not None else TOOLS_OUTSIDE_A_PROJECT)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            text = answer(config, params.name, params.arguments or {})
        except (PrecompactError, OSError) as e:  # the one place a tool's failure is rendered
            return types.CallToolResult(content=[types.TextContent(text=str(e))], is_error=True)
        return types.CallToolResult(content=[types.TextContent(text=text)])

    from importlib.metadata import version

    return Server(
        SERVER_NAME,
        version=version("precompact"),
        instructions=INSTRUCTIONS if config is not None else INSTRUCTIONS_EVERYWHERE,
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
