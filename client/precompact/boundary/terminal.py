"""What precompact writes to a terminal: the only code that does (an architecture test keeps it so).

Outside text (a transcript's tool output, a summary, a file name, git's or the cluster's words)
can hold what a terminal acts on rather than shows: an ESC that starts a CSI, OSC (set the
clipboard with OSC 52, hide a link with OSC 8, retitle the window with OSC 0) or DCS sequence,
the other C0 controls (a CR that overwrites a line, a BEL), DEL, the C1 controls (U+009B is a
CSI on its own), bidi overrides and isolates that reorder what is shown, and characters that show
nothing at all. `sanitise` makes each of them visible text: a control as its Python escape
(`\\x1b`), the others as `<U+202E>`; once the ESC is text, what it would have started is
printable text too. `\\n` and `\\t` stay. One pass over the text, linear in its length.

`echo` writes text for a person through `sanitise`. `echo_json` writes a JSON document (`--json`)
with the same characters as JSON escapes (`\\u001b`): they occur only inside strings, where the
escape is the same value, so the document stays exact. `echo_document` writes a document's bytes
as they are when stdout is a file or a pipe (a snapshot must still hash to its roots), and as
`echo_json` would on a terminal. `answer` is the hook's reply to the agent that ran it (Claude
Code, Codex, Gemini CLI read it, no terminal does), written as given.
"""

from __future__ import annotations

import functools
import re
import sys

# Kept: \t and \n. Everything else a terminal acts on or does not show: C0 (with CR, ESC, BEL),
# DEL, C1, the Arabic letter mark, zero-width space, LRM/RLM, the line and paragraph separators,
# bidi embeddings, overrides and isolates, the invisible operators and deprecated format
# controls, the byte-order mark, interlinear annotation, the tag characters, and lone
# surrogates (which a UTF-8 terminal cannot even be sent). ZWNJ and ZWJ stay: scripts and emoji
# need them and they move nothing.
UNSAFE = (
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u2028-\u202e\u2060-\u206f"
    "\ufeff\ufff9-\ufffb\U000e0000-\U000e007f\ud800-\udfff]"
)


@functools.cache
def _unsafe() -> re.Pattern[str]:
    """UNSAFE, compiled once a text needs it (0.9 ms): a hook's answer (`answer`) never does, and
    text `str.isprintable` passes has none of its characters (each is a control, a format
    character, a separator, a surrogate or unassigned: test_terminal.py checks every one)."""
    return re.compile(UNSAFE)


_CONTROL_LIMIT = 0xA0  # below it, a control shown as its \x escape


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < _CONTROL_LIMIT else f"<U+{code:04X}>"


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:  # JSON names a character beyond the first plane by its surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def sanitise(text: str) -> str:
    """`text` with every character a terminal would act on, or not show, made visible."""
    return text if text.isprintable() else _unsafe().sub(_visible, text)


def json_for_terminal(serialized: str) -> str:
    """A serialized JSON document with the same characters escaped the JSON way: the same value."""
    return serialized if serialized.isprintable() else _unsafe().sub(_json_escape, serialized)


def echo(text: str = "", *, err: bool = False, nl: bool = True) -> None:
    """`text` for a person, on stdout or (`err`) stderr, sanitised."""
    _write(sanitise(text) + ("\n" if nl else ""), err)


def echo_json(serialized: str, *, err: bool = False) -> None:
    """A JSON document (`--json`), exact in value, inert on a terminal."""
    _write(json_for_terminal(serialized) + "\n", err)


def echo_document(data: bytes) -> None:
    """A document's bytes on stdout: as they are into a file or a pipe, inert on a terminal."""
    if sys.stdout.isatty():
        _write(json_for_terminal(data.decode("utf-8", "replace")), err=False)
        return
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def answer(text: str, *, err: bool = False) -> None:
    """The hook's reply to the agent that ran it (a program, not a terminal), as given."""
    _write(text + "\n", err)


def _write(text: str, err: bool) -> None:
    stream = sys.stderr if err else sys.stdout
    stream.write(text)
    stream.flush()
