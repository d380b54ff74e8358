"""Reading an agent's session: the Claude Code transcript reader (claude_code), the conversation
facts drawn from it (conversation), and redaction of secrets (redact). Imports boundary and
config."""
