"""How text precompact did not write (the transcript, the repository, command output, file names,
summaries) is put in front of the model: as data that cannot speak in precompact's voice.

Everything precompact tells a model or prints (the restore brief, recall and show results, hook
messages, the report, `status`, `verify`, `projects`) quotes outside text only through this
module, in one of two forms:
- `block`: every line of the text, split at every line boundary Python and Unicode know
  (`str.splitlines`: CR, VT, FF, FS/GS/RS, NEL, LS, PS as well as LF), starts with `> `, so no
  quoted line can begin one of precompact's own (a heading, the proof line, a fence): the quote
  cannot be closed from inside;
- `inline`: a JSON string literal on one line, every line boundary and control character escaped
  (a reason: what git, a remote or an RPC endpoint said of a failure).

Three kinds of outside text are shown bare when of the plain shape precompact itself writes, and
`inline` otherwise, so that they cannot carry a sentence, a ✓ or a line of their own: an
instance's name (`name`; the index, a snapshot's lineage, a remote's branch may name any), a
timestamp (`timestamp`; an index line states any string) and a file's path (`path`; a snapshot
file the index names, a project's directory, which any name may have).

What an exception precompact did not raise says (a builtin's or a library's: its message is made
of what it was given, a path, a JSON fragment, git's stderr) is a reason: `inline(str(e))`, or
`os_error(e)` for what went wrong in an OSError, which shows the C library's words for its errno
bare, as it can check them.

`single_line` quotes nothing: it keeps precompact's own words (around parts already quoted) on
one line.
"""

from __future__ import annotations

import json
import os
import re

PREFIX = "> "
# What JSON leaves raw although a terminal acts on it or a reader breaks a line there: DEL and the
# C1 controls (U+0085 NEL breaks a line, U+009B is a CSI on its own), LS and PS. Escaped the JSON
# way, the literal stays the same value (a terminal's `\x9b` for it would not be JSON).
_LEFT_RAW_BY_JSON = re.compile("[\x7f-\x9f\u2028\u2029]")
CUT_MARK = "…"
# An instance's name as a repository's settings may set it: "<name> #<n>", at most two words then
# the number, so it cannot carry a sentence.
_INSTANCE_NAME = re.compile(r"[A-Za-z0-9_.@+-]{1,48}(?: [A-Za-z0-9_.@+-]{1,48})?(?: #[0-9]{1,9})?")
# The UTC stamp precompact writes into every index line (savepoint_log.utc_timestamp).
# A path of words, digits and the punctuation file names commonly hold: no space, no line boundary.
_PLAIN_PATH = re.compile(r"[\w./@+,=~:-]{1,4096}")
_UTC_STAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


def block(text: str, limit: int | None = None) -> str:
    """`text` as quoted lines, at most `limit` characters (quoted form); a cut ends with '…'."""
    lines: list[str] = []
    used = 0
    for line in text.splitlines() or [""]:
        quoted = (PREFIX + line).rstrip(" ") if line else PREFIX.rstrip()
        cost = len(quoted) + (1 if lines else 0)
        if limit is not None and used + cost > limit:
            room = limit - used - (1 if lines else 0) - len(CUT_MARK)
            if room > len(PREFIX):
                lines.append(quoted[:room] + CUT_MARK)
            elif lines:
                lines[-1] = lines[-1][: max(len(PREFIX), len(lines[-1]) - len(CUT_MARK))] + CUT_MARK
            break
        lines.append(quoted)
        used += cost
    return "\n".join(lines)


def block_from(text: str, start: int, limit: int) -> tuple[str, int]:
    """`text` from character `start` as quoted lines (`block`'s form), as much as fits `limit`
    characters, and where in `text` what is quoted ends (`len(text)`: its end). Reads at most
    `limit` characters of `text` (a quoted line is as long as what it quotes, spaces it strips at
    a line's end aside), so a text of any size is never copied whole. A line that does not fit is
    cut where the room ends."""
    piece = text[start : start + limit]
    lines: list[str] = []
    used = 0
    end = start
    for line in piece.splitlines(keepends=True) or [""]:
        content = (line.splitlines() or [""])[0]
        quoted = (PREFIX + content).rstrip(" ") if content else PREFIX.rstrip()
        cost = len(quoted) + (1 if lines else 0)
        if used + cost > limit:
            room = limit - used - (1 if lines else 0) - len(PREFIX)
            if room > 0:
                lines.append((PREFIX + content[:room]).rstrip(" "))
                end += room
            break
        lines.append(quoted)
        used += cost
        end += len(line)
    return "\n".join(lines), end


def inline(text: str) -> str:
    """`text` as a one-line JSON string literal: quoted, with every line boundary and every
    control character escaped."""
    return _LEFT_RAW_BY_JSON.sub(_json_escape, json.dumps(text, ensure_ascii=False))


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def os_error(error: BaseException) -> str:
    """What went wrong in an OSError, as precompact's lines show it: the C library's words for its
    errno bare (`os.strerror`: fixed words of a table, one line, made of no input) when the error
    carries exactly those, else its whole text quoted (`inline`). `strerror` alone is not trusted:
    it is whatever the raiser passed (ssl puts its verify message there, a library may put any)."""
    if isinstance(error, OSError) and type(error.errno) is int and error.strerror:
        try:
            said = os.strerror(error.errno)
        except (ValueError, OverflowError):  # a number past a C int's range, which any raiser may give
            said = None
        if error.strerror == said:
            return said
    return inline(str(error))


def single_line(text: str) -> str:
    """`text` (precompact's own words around outside parts, e.g. a check's detail or an error)
    kept on one line: every line boundary becomes a space."""
    return " ".join(text.splitlines())


def name(instance: str) -> str:
    """An instance's name as precompact's lines show it: bare if of an instance name's shape,
    else quoted (`inline`)."""
    return instance if _INSTANCE_NAME.fullmatch(instance) else inline(instance)


def timestamp(stamp: str | None) -> str:
    """A timestamp read from outside (an index line, a remote's copy of it): bare if of the UTC
    stamp's shape precompact writes, "?" if there is none, else quoted (`inline`)."""
    if stamp is None:
        return "?"
    return stamp if _UTC_STAMP.fullmatch(stamp) else inline(stamp)


def path(place: object) -> str:
    """A file's path (or the name the index gives one) as precompact's lines show it: bare if
    plain (`_PLAIN_PATH`), else quoted (`inline`)."""
    shown = str(place)
    return shown if _PLAIN_PATH.fullmatch(shown) else inline(shown)
