"""The agents' names, alone in a module that imports nothing: the hook's entry tells the agents
apart by them before it imports anything else (agents.py, which reads their sessions, names the
same)."""

from __future__ import annotations

CLAUDE, CODEX, GEMINI, OPENCODE = "claude", "codex", "gemini", "opencode"
# config/install.py's AGENTS names the same (config cannot import this module).
NAMES = (CLAUDE, CODEX, GEMINI, OPENCODE)
