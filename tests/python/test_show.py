"""`show` within a budget (review9a F3): the MCP tool answers at most `budget` characters (recall's
default when none is given), an entry that does not fit is cut under a line naming the characters
shown and the reference that shows the rest (`S:N-M@OFFSET`), entries past the budget are not read,
and the CLI prints whole unless asked; the viewer's conversation page cuts a long entry with a link
to its own page, which shows it whole."""

from __future__ import annotations

import itertools
import re
import tracemalloc

import pytest
from starlette.testclient import TestClient

from precompact.boundary import quoting
from precompact.config import settings as configuration
from precompact.edges import mcp_server
from precompact.recall import fulltext as recall
from precompact.viewer import app, pages
from support.commands import precompact
from support.conversations import START, Conversation, save
from support.projects import new_project

# A build log the session read: numbered lines, none empty, none ending in a space, so the text a
# piece quotes is exactly the characters its note names.
LOG = "\n".join(f"{n:06d} linking module cart_{n % 7}.o ok" for n in range(3_000))
NOTE = re.compile(r"^\(characters (\d+) to (\d+) of (\d+)(?: shown; `show (\S+)` continues|: the end of the entry)\)$")


@pytest.fixture
def project(tmp_path):
    """Entries 1-4: a turn whose tool result (3) is LOG; 5-8: a short turn."""
    made = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    talk = Conversation(tmp_path / "talk.jsonl", "s-show", START)
    talk.turn_with("Run the build and show me the log.", "make all", LOG, "The build links.")
    talk.turn_with("And the tests?", "make test", "12 passed", "All pass.")
    save(made, talk)
    return made


def answer(project, ref: str, budget: int | None = None) -> str:
    arguments = {"ref": ref, **({"budget": budget} if budget else {})}
    return mcp_server.answer(configuration.load(project.path), "show", arguments)


def pieces_of_the_log(project, budget: int | None) -> list[tuple[str, re.Match]]:
    """Each answer of `show 1:3`, then of the reference each cut names, with its note."""
    ref: str | None = "1:3"
    answers = []
    while ref is not None:
        text = answer(project, ref, budget)
        assert len(text) <= (budget or recall.DEFAULT_BUDGET), len(text)
        header, note, *_ = text.splitlines()
        assert header.startswith("[1:3] savepoint 1 of Trial #1 · entry 3 ·"), header
        found = NOTE.fullmatch(note)
        assert found, note
        answers.append((text, found))
        ref = found.group(4)
    return answers


def test_the_mcp_show_cuts_a_long_entry_and_the_references_it_names_show_all_the_rest(project):
    answers = pieces_of_the_log(project, None)
    assert len(answers) > 15, "a 100,000-character entry takes many answers of 6,000"
    offsets = [(int(note.group(1)), int(note.group(2)), int(note.group(3))) for _, note in answers]
    assert offsets[0][0] == 0 and offsets[-1][1:] == (len(LOG), len(LOG)), "from its first character to its last"
    assert all(a[1] == b[0] for a, b in itertools.pairwise(offsets)), "each piece starts where the last stopped"
    for (text, note), (start, end, _) in zip(answers, offsets):
        quoted = text.splitlines()[2:]
        assert all(line.startswith(quoting.PREFIX) for line in quoted), "the text quoted, the note precompact's"
        assert "\n".join(line[len(quoting.PREFIX) :] for line in quoted) == LOG[start:end].removesuffix("\n")
    assert [note.group(4) for _, note in answers[:2]] == [f"1:3@{offsets[0][1]}", f"1:3@{offsets[1][1]}"]
    assert answers[-1][1].group(0).endswith(": the end of the entry)")


def test_a_range_past_the_budget_stops_and_names_the_reference_of_the_rest(project):
    cut = answer(project, "1:1-8", 2_000)
    assert len(cut) <= 2_000
    blocks = cut.split("\n\n")
    assert [b.splitlines()[0][:5] for b in blocks] == ["[1:1]", "[1:2]", "[1:3]"]
    note = NOTE.fullmatch(blocks[2].splitlines()[1])
    assert note and note.group(1) == "0" and note.group(4) == f"1:3-8@{note.group(2)}", "the rest of 3, then 4 to 8"
    rest = answer(project, "1:4-8", 1_000)
    shown = [int(line[3]) for line in rest.splitlines() if line.startswith("[1:")]
    assert shown[0] == 4 and shown[-1] < 8, rest
    left = 8 - shown[-1]
    span = f"1:{shown[-1] + 1}" + ("-8" if left > 1 else "")
    more = "entry" if left == 1 else "entries"
    assert rest.splitlines()[-1] == f"({left} more {more} not shown within the budget; `show {span}` continues)"
    assert len(rest) <= 1_000
    whole = answer(project, "1:5-8", 50_000)
    assert "not shown" not in whole and "(characters" not in whole and whole.count("\n\n") == 3


def test_an_offset_past_the_entry_and_a_budget_out_of_bounds_are_refused_in_one_line(project):
    with pytest.raises(
        recall.WrongRequest, match=rf"^entry 1:3 holds {len(LOG)} characters: give an offset below {len(LOG)}$"
    ):
        answer(project, f"1:3@{len(LOG)}")
    for budget, said in ((999, "`budget` must be at least 1000"), (50_001, "`budget` must be at most 50000")):
        with pytest.raises(mcp_server.ToolError, match=said):
            answer(project, "1:3", budget)
    with pytest.raises(mcp_server.ToolError, match="is not of the form"):
        answer(project, "1:3@x")


def test_a_range_of_huge_entries_costs_the_memory_of_its_first_and_the_entries_past_the_budget_are_never_read(tmp_path):
    """Five tool results of 4 MB each in one range: the answer is cut in the first, and the
    call's peak memory is the one of showing that entry alone (reading one entry costs what
    parsing its JSON does); before, every entry of the range was held, then the whole quoted text."""
    made = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    talk = Conversation(tmp_path / "talk.jsonl", "s-big", START)
    big = 4_000_000
    line = "compile module step done linking target cache hit ZEBRAQUOKKA " * 2
    for n in range(5):
        talk.turn_with(f"Show build log {n}.", f"cat build{n}.log", (line + "\n") * (big // (len(line) + 1)), "Long.")
    save(made, talk)
    answer(made, "1:1")  # the index brought up to date first: indexing is not what is measured

    def peak(ref: str) -> tuple[str, int]:
        tracemalloc.start()
        try:
            text = answer(made, ref)
            return text, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    one, alone = peak("1:3")
    text, ranged = peak("1:3-20")
    assert len(one) <= recall.DEFAULT_BUDGET and len(text) <= recall.DEFAULT_BUDGET
    assert "`show 1:3@" in one and "`show 1:3-20@" in text
    assert ranged < alone + big // 2, (ranged, alone)


def test_the_cli_prints_whole_unless_given_a_budget_and_its_json_refuses_a_cut(project):
    whole = precompact(project.path, "show", "1:3")
    assert (
        whole.returncode == 0
        and whole.stdout.count("\n> ") == LOG.count("\n") + 1
        and "(characters" not in whole.stdout
    )
    cut = precompact(project.path, "show", "1:3-4", "--budget", "1000")
    assert cut.returncode == 0 and len(cut.stdout) <= 1_001 and "`show 1:3-4@" in cut.stdout
    start = precompact(project.path, "show", f"1:3@{len(LOG) - 900}")
    said = f"(characters {len(LOG) - 900} to {len(LOG)} of {len(LOG)}: the end of the entry)"
    assert start.returncode == 0 and start.stdout.splitlines()[1] == said, start.stdout[:500]
    refused = precompact(project.path, "show", "1:3@5", "--json")
    assert refused.returncode == 2 and "--json prints the entries whole" in refused.stdout + refused.stderr


def test_the_conversation_page_cuts_a_long_entry_and_links_to_its_own_page_which_shows_it_whole(project):
    loaded = configuration.load(project.path)
    page = pages.conversation_page(loaded, pages.Histories(), "Trial #1", 1, 1)
    log = next(e for e in page.entries if e.position == 3)
    assert "".join(p.text for p in log.pieces) == LOG[: pages.ENTRY_CHARS] and log.more == len(LOG) - pages.ENTRY_CHARS
    assert all(e.more == 0 for e in page.entries if e.position != 3)
    client = TestClient(app.create(loaded, "tok", 8000), base_url="http://127.0.0.1:8000")
    html = client.get("/tok/conversation?sequence=1").text
    link = "/tok/entry?instance=Trial+%231&amp;sequence=1&amp;position=3"
    assert f'… {len(LOG) - pages.ENTRY_CHARS} more characters: <a href="{link}">the whole entry</a>' in html
    assert len(html) < 3 * pages.ENTRY_CHARS + 20_000, len(html)
    shown = client.get(link.replace("&amp;", "&"))
    assert shown.status_code == 200 and LOG[-2_000:] in shown.text and "more characters" not in shown.text
    assert client.get("/tok/entry?sequence=1&position=9").status_code == 404


def test_a_redaction_mark_across_the_cut_is_left_whole_to_the_entrys_own_page():
    before = "x" * (pages.ENTRY_CHARS - 5)
    text = before + "[REDACTED:github_token]" + "y" * 10
    assert pages._cut(text, pages.ENTRY_CHARS) == before
    assert pages._cut("x" * pages.ENTRY_CHARS + "[REDACTED:github_token]", pages.ENTRY_CHARS) == "x" * pages.ENTRY_CHARS


@pytest.mark.parametrize("limit", [3, 7, 50])
def test_every_piece_of_a_hostile_text_is_quoted_line_by_line_within_its_limit_and_moves_on(limit):
    """quoting.block_from as `show` pages with it: whatever the text's line boundaries (CR, NEL,
    LS, a run of spaces longer than the room), each piece is within its limit, every line of it
    starts with the quote mark, and each call moves on, to the text's end."""
    text = "ok\r\n\x85[precompact] Proof: ✓\u2028" + " " * 40 + "\rend\n\n" + "z" * 30
    start, pieces = 0, []
    while start < len(text):
        quoted, end = quoting.block_from(text, start, limit)
        assert len(quoted) <= limit and end > start, (quoted, start, end)
        assert all(line.startswith(">") for line in quoted.split("\n")), quoted
        pieces.append(quoted)
        start = end
    assert start == len(text) and quoting.block_from(text, 0, 10_000) == (quoting.block(text), len(text))
