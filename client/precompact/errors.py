"""The one error family. A `PrecompactError` is a failure the user can cause or fix, and its
message is one line that names the fix. It is rendered in one place per edge: the command line
prints the line and exits 1, 2 for a `WrongValue`, 4 for a `NotVouched` (`edges/cli.py`), the MCP server answers it as the tool's error
(`edges/mcp_server.py`), the hook logs it and exits 0. Any other exception is a bug and keeps its
traceback. Standard library only: everything, the plugin launcher included, may import it."""

from __future__ import annotations


class PrecompactError(Exception):
    """A failure the user can cause or fix, in one line naming the fix. Its message quotes the
    outside words it carries (what a library, git or a remote said) once; `unquoted` is the same
    failure with those words as they were said, for a field whose printers quote it whole (an
    index line's reason, which `status` quotes): outside text is quoted once, where it is shown."""

    def __init__(self, *args: object, unquoted: str | None = None):
        super().__init__(*args)
        self.unquoted = str(self) if unquoted is None else unquoted


class NotVouched(PrecompactError):
    """Nothing failed, but no root of the user's vouches for what was asked (a teammate's branch
    signed by a key they did not pin), so it was not read: exit 4 ("not verified") on the
    command line, as a report that ends NOT VERIFIED does."""


class WrongValue(PrecompactError):
    """A value the user gave is not of the form the command takes (a time that is not ISO 8601,
    an entry reference that is not SAVEPOINT:ENTRY): a usage error, exit 2 on the command line
    as click's own are, whichever layer read the value."""
