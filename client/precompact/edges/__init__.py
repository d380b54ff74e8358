"""The thin edges: the command line (command, cli), the hook entry (hook), the MCP server
(mcp_server, mcp_idle), the plugin launcher (launcher, plugin_runtime) and the background worker's
entry (worker). They parse, call the library and print; nothing imports them but each other."""
