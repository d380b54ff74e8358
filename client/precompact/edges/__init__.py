"""The thin edges: the command line (command, cli), the hook entry (hook, and untrusted_reply, its
answer to an unapproved configuration), the MCP server (mcp_server, mcp_idle), the plugin launcher
(launcher, plugin_runtime, plugin_wheel) and the background worker's entry (worker). They parse,
call the library and print; nothing imports them but each other."""
