"""The MCP server where precompact has nothing to serve: outside every project on a machine that
has archived none (the plugin starts its server in every directory; where this machine has
archives, `precompact mcp` serves recall over all of them instead), a project whose
configuration is not trusted, or before the plugin has prepared its environment. It connects and offers no tools, so Claude Code
shows it connected instead of failed (and caching the failure), and the model is told nothing.

Standard library only: the plugin's launcher runs it before any dependency is installed. MCP
over stdio is JSON-RPC 2.0, one message per line.
"""

from __future__ import annotations

import json
import sys
from typing import IO

from precompact import __version__

SERVER_NAME = "precompact"
# The revision this answers with when the client asks for one it does not list.
PROTOCOL_VERSION = "2025-06-18"
KNOWN_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
METHOD_NOT_FOUND = -32601
PARSE_ERROR = -32700


def reply(message: object) -> dict | None:
    """The answer to one JSON-RPC message; None for a notification (or a response)."""
    if not isinstance(message, dict) or "method" not in message:
        return None
    if "id" not in message:
        return None
    method, request_id = message["method"], message["id"]
    if method == "initialize":
        params = message.get("params")
        asked = params.get("protocolVersion") if isinstance(params, dict) else None
        result: dict = {
            "protocolVersion": asked if asked in KNOWN_VERSIONS else PROTOCOL_VERSION,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": SERVER_NAME, "version": __version__},
        }
    elif method == "tools/list":
        result = {"tools": []}
    elif method == "ping":
        result = {}
    else:
        return {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": METHOD_NOT_FOUND, "message": f"{method}: precompact is not set up in this project"},
        }
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def serve(incoming: IO[str] | None = None, outgoing: IO[str] | None = None) -> None:
    """Answers on stdin and stdout until the client closes stdin."""
    incoming, outgoing = incoming or sys.stdin, outgoing or sys.stdout
    for line in incoming:
        if not line.strip():
            continue
        try:
            answer = reply(json.loads(line))
        except ValueError:
            answer = {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "not JSON"}}
        if answer is not None:
            outgoing.write(json.dumps(answer) + "\n")
            outgoing.flush()
