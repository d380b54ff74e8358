"""The project's settings (.precompact.toml, settings), the user's approval of them (approval:
direnv-style trust) and what the user reviews before approving (review: every setting, as a diff
against the last approval), the installation of hooks into Claude Code's settings (install),
with the timeout each agent gives each event and the index lock wait derived from it
(hook_timeouts), Gemini CLI's own compression threshold (gemini_compression), which the hook
reads before anything else, and how the RPC endpoint is shown anywhere (endpoint: scheme, host
and port; a hosted endpoint's URL holds the user's API key). Imports only boundary."""
