"""`precompact view` in a real browser: Debian's headless Chromium, driven by Playwright. A user
loads the timeline, opens a savepoint and sees beside its summary a planted fact the summary
dropped, searches, and follows a hit into the conversation; a screenshot of each page is kept
(the folder is printed). A transcript holding markup and script of every kind runs none of it:
the page's title and globals stay untouched, no dialog opens, the console stays clean, and the
DOM holds no element or attribute from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.browser import CHROMIUM, artefacts, planted_project, viewer
from support.commands import precompact
from support.projects import new_project

if not Path(CHROMIUM).exists():
    pytest.skip("Debian's chromium is not installed (scripts/setup installs it)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.slow  # a real browser each time


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("viewer-browser")
    planted = planted_project(root)
    with viewer(planted.project.path, root / "view.log") as url:
        yield planted, url


@pytest.fixture
def page():
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            yield context.new_page()
        finally:
            browser.close()


def _watch(page) -> dict[str, list]:
    seen: dict[str, list] = {"console": [], "errors": [], "dialogs": []}
    page.on("console", lambda message: seen["console"].append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: seen["errors"].append(str(error)))

    def dialog(d) -> None:
        seen["dialogs"].append(d.message)
        d.dismiss()

    page.on("dialog", dialog)
    return seen


def test_timeline_savepoint_search_and_conversation(served, page):
    planted, url = served
    shots = artefacts("viewer")
    seen = _watch(page)
    page.goto(url)
    assert page.locator("h1").inner_text() == "Sessions and savepoints"
    assert page.locator("a.savepoint-link").count() == 2
    # The verifier's verdicts replace "checking…" once it has run; the page is reloaded for them.
    for _ in range(50):
        if page.locator(".verdict.checking").count() == 0:
            break
        page.wait_for_timeout(200)
        page.reload()
    assert page.locator(".verdict.verified", has_text="local").count() == 2
    page.screenshot(path=shots / "timeline.png", full_page=True)

    page.locator("a.savepoint-link", has_text="1").first.click()
    page.wait_for_load_state()
    first = planted.sessions[0]
    gone = next(p for p in first.planted if not p.kept and p.kind == "constraint")
    kept = next(p for p in first.planted if p.kept and not p.paraphrased and p.kind == "number")
    dropped = page.locator("#dropped")
    # A list still being made is in once the page has reloaded itself (no script: a meta refresh).
    dropped.locator(".fact").first.wait_for(timeout=30_000)
    assert gone.text in dropped.inner_text()
    assert kept.text not in dropped.locator(".fact").all_inner_texts()
    assert "Claude Code's compaction summary" in page.content()
    page.screenshot(path=shots / "savepoint.png", full_page=True)
    page.locator("#dropped").screenshot(path=shots / "dropped.png")

    # The fact's reference opens the conversation at its entry.
    page.locator("#dropped li", has_text=gone.text).locator("a.ref").first.click()
    page.wait_for_load_state()
    assert gone.text in page.locator("article.entry:target").inner_text()
    page.screenshot(path=shots / "conversation.png")

    page.locator("header input[name=q]").fill(f'"{gone.text.rstrip(".")}"')
    page.locator("header button").click()
    page.wait_for_load_state()
    hits = page.locator("ol.hits li")
    assert hits.count() >= 1 and gone.text.rstrip(".") in hits.first.inner_text()
    page.screenshot(path=shots / "search.png", full_page=True)
    hits.first.locator("a.ref").click()
    page.wait_for_load_state()
    assert gone.text in page.locator("article.entry:target").inner_text()
    assert not seen["errors"] and not seen["dialogs"], seen
    assert not [c for c in seen["console"] if c.startswith("error")], seen


def test_hostile_transcript_text_runs_nothing(served, page):
    _, url = served
    shots = artefacts("viewer-xss")
    seen = _watch(page)
    for where in (
        f"{url}conversation?instance=Shop+%231&sequence=2&page=1",
        f"{url}search?q=hostile+marker+phrase",
        f"{url}savepoint?instance=Shop+%231&sequence=2",
    ):
        page.goto(where)
        page.wait_for_load_state("load")
        assert "the hostile marker phrase" in page.locator("main").inner_text(), where
        page.mouse.move(300, 400)
        for link in page.get_by_text("open the report").all():
            link.hover()
        page.wait_for_timeout(300)
        assert page.title().endswith("precompact view") and "pwned" not in page.title(), where
        assert page.evaluate("typeof window.pwned") == "undefined"
        # Nothing from the transcript became markup: no script, handler, link, image or svg.
        assert page.locator("script").count() == 0
        assert page.locator("#hostile-link, img, svg, textarea, [onerror], [onload], [onmouseover]").count() == 0
        assert page.locator("a[href^='javascript:']").count() == 0
        page.screenshot(path=shots / f"{where.split('?')[0].rsplit('/', 1)[-1] or 'timeline'}.png", full_page=True)
    assert not seen["dialogs"] and not seen["errors"], seen
    assert not [c for c in seen["console"] if c.startswith("error")], seen


def test_the_conversation_shows_its_first_entries_and_the_next_page_shows_the_rest(served, page):
    _, url = served
    page.goto(f"{url}conversation?instance=Shop+%231&sequence=1")
    assert page.locator("article.entry").count() == 50
    # "of 2" once a page of the server's has read the history to its end, "more follow" before
    assert page.locator("nav.pager span").first.inner_text() in ("page 1, more follow", "page 1 of 2")
    page.locator("a[rel=next]").first.click()
    page.wait_for_load_state()
    assert page.locator("nav.pager span").first.inner_text() == "page 2 of 2"
    assert 0 < page.locator("article.entry").count() <= 50
    assert page.locator("article.entry").first.get_attribute("id") == "e51"
    assert page.locator("a[rel=next]").count() == 0
    page.go_back()
    page.locator("nav.pager a", has_text="last").first.click()
    page.wait_for_load_state()
    assert page.locator("nav.pager span").first.inner_text() == "page 2 of 2"


def test_the_conversation_folds_the_agents_bookkeeping_so_the_second_turn_is_near_the_top(tmp_path, page):
    """#40.10: the conversation page opened with kilobytes of escaped JSON of Claude Code's
    bookkeeping records (attachments, tool listings) before the second user turn."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    tools = [{"name": f"mcp__server__tool_{n}", "description": "does one thing " * 12} for n in range(60)]
    entries = [
        {"type": "user", "message": {"role": "user", "content": "First, read the parser."}},
        {"type": "attachment", "attachment": {"type": "deferred_tools_delta", "addedTools": tools}},
        {"type": "attachment", "attachment": {"type": "skill_listing", "content": "skill " * 1500}},
        {"type": "system", "subtype": "informational", "content": "hook output " * 600},
        {"type": "file-history-snapshot", "snapshot": {"trackedFileBackups": {"a.py": "x" * 3000}}},
        {
            "type": "assistant",
            "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "Read it."}]},
        },
        {"type": "user", "message": {"role": "user", "content": "Second turn: now fix the tokenizer."}},
    ]
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(
        "".join(
            json.dumps({"sessionId": "s-book", "uuid": f"u{n}", "timestamp": f"2026-12-01T10:00:{n:02d}Z", **e}) + "\n"
            for n, e in enumerate(entries)
        )
    )
    saved = precompact(project.path, "savepoint", "--transcript", str(transcript), "--session-id", "s-book")
    assert saved.returncode == 3, saved.stderr
    shots = artefacts("viewer-bookkeeping")
    with viewer(project.path, tmp_path / "view.log") as url:
        page.goto(f"{url}conversation?instance=Trial+%231&sequence=1")
        second = page.locator("article.entry", has_text="Second turn: now fix the tokenizer.")
        box = second.bounding_box()
        assert box is not None and box["y"] < 600, f"the second user turn starts at {box}"
        folded = page.locator("details.bookkeeping")
        assert folded.count() == 1
        summary = folded.locator("summary").inner_text()
        assert summary.startswith(
            "4 bookkeeping records of the agent's (attachment, system, file-history-snapshot), entries 2–5"
        )
        # The tool listing is over the 6,000 characters a page shows of an entry: its start, then
        # the link to the whole record (review9a F3).
        listing = page.locator("article.entry", has_text="mcp__server__tool_0")
        assert not listing.is_visible()
        page.screenshot(path=shots / "folded.png", full_page=True)
        folded.locator("summary").click()
        assert listing.is_visible() and listing.locator("p.cut a", has_text="the whole entry").is_visible()
        assert page.locator("article.entry").count() == 7
        page.screenshot(path=shots / "unfolded.png", full_page=True)
