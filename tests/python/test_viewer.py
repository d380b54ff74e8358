"""`precompact view` over plain HTTP: it listens on loopback only, serves the pages to a GET that
carries its token and names it by its loopback address, and refuses everything else (no token,
a wrong one, a foreign Host or Origin as a DNS-rebinding page sends, any method but GET), every
answer under a Content-Security-Policy that allows no script; and the hook never imports it."""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import markupsafe
import pytest
from starlette.testclient import TestClient

from precompact.config import settings as configuration
from precompact.local import savepoint_log, snapshot
from precompact.recall import fulltext as recall
from precompact.restore import dropped as dropping
from precompact.viewer import app, pages
from support.browser import HOSTILE, planted_project, viewer
from support.commands import PRECOMPACT, precompact, wait_until
from support.projects import funded_project, new_project, trust
from support.transcript_gen import generate
from test_layout import SOURCE, graph

THIRD_PARTY = {"jinja2", "markupsafe", "starlette", "uvicorn", "playwright"}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("viewer")
    planted = planted_project(root)
    with viewer(planted.project.path, root / "view.log") as url:
        yield planted, url


def _get(url: str, **kwargs) -> httpx.Response:
    return httpx.get(url, timeout=30, **kwargs)


def test_it_listens_on_loopback_only_with_a_long_random_token(served):
    _, url = served
    parts = urlsplit(url)
    assert parts.hostname == "127.0.0.1"
    token = parts.path.strip("/")
    assert len(token) >= 40
    other = socket.socket()
    try:
        other.settimeout(2)
        try:
            named = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
        except socket.gaierror:  # a host without a resolvable name has only loopback to try
            named = []
        addresses = {a[4][0] for a in named} - {"127.0.0.1"}
        for address in addresses:
            assert other.connect_ex((address, parts.port)) != 0, f"reachable on {address}"
    finally:
        other.close()


def test_every_page_answers_a_get_with_the_token(served):
    _, url = served
    instance = "Shop #1"
    for path, params in [
        ("", {}),
        ("savepoint", {"instance": instance, "sequence": 1}),
        ("conversation", {"instance": instance, "sequence": 2, "page": 1}),
        ("search", {"q": "migration"}),
        ("diff", {"instance": instance, "a": 1, "b": 2}),
        ("static/style.css", {}),
    ]:
        answer = _get(url + path, params=params)
        assert answer.status_code == 200, (path, answer.text[:300])
        assert "script-src" not in answer.headers["content-security-policy"]
        assert "default-src 'none'" in answer.headers["content-security-policy"]
    page = _get(url + "conversation", params={"instance": instance, "sequence": 2}).text
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert HOSTILE not in page


def test_export_is_the_savepoint_document_precompact_export_writes(tmp_path):
    planted = planted_project(tmp_path, seeds=(5,))  # made by this test's machine key, so vouched for here
    _, client = _in_process(planted)
    answer = client.get("/token/export", params={"instance": "Shop #1", "sequence": 1})
    assert answer.status_code == 200
    assert answer.headers["content-disposition"].startswith("attachment;")
    exported = precompact(planted.project.path, "export", "--sequence", "1", text=False)
    assert exported.returncode == 0
    assert answer.content == exported.stdout
    assert json.loads(answer.content)["conversation_history"]


@pytest.mark.parametrize(
    ("how", "status"),
    [
        ("no token", 404),
        ("wrong token", 404),
        ("token prefix", 404),
        ("POST", 405),
        ("PUT", 405),
        ("DELETE", 405),
        ("HEAD", 405),
        ("foreign Host", 403),
        ("no Host", 403),
        ("foreign Origin", 403),
        ("null Origin", 403),
    ],
)
def test_requests_it_must_refuse_are_refused(served, how, status):
    _, url = served
    parts = urlsplit(url)
    token = parts.path.strip("/")
    root = f"{parts.scheme}://{parts.netloc}"
    with httpx.Client(timeout=30) as client:
        if how == "no token":
            answer = client.get(root + "/")
        elif how == "wrong token":
            answer = client.get(f"{root}/{token[:-1]}{'A' if token[-1] != 'A' else 'B'}/")
        elif how == "token prefix":
            answer = client.get(f"{root}/{token[:20]}/")
        elif how in ("POST", "PUT", "DELETE", "HEAD"):
            answer = client.request(how, url + "search", params={"q": "migration"})
        elif how == "foreign Host":
            answer = client.get(url, headers={"Host": f"attacker.example:{parts.port}"})
        elif how == "no Host":
            answer = _raw(parts.port, f"GET /{token}/ HTTP/1.0\r\n\r\n")
        elif how == "foreign Origin":
            answer = client.get(url, headers={"Origin": "http://attacker.example"})
        else:
            answer = client.get(url, headers={"Origin": "null"})
    assert answer.status_code == status, answer.text
    assert "default-src 'none'" in answer.headers["content-security-policy"]
    assert "Shop #1" not in answer.text


def _raw(port: int, request: str) -> httpx.Response:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(request.encode())
        data = b""
        while chunk := connection.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return httpx.Response(int(lines[0].split()[1]), headers={k.lower(): v for k, v in headers.items()}, content=body)


def test_its_own_origin_and_localhost_are_let_through(served):
    _, url = served
    parts = urlsplit(url)
    assert _get(url, headers={"Origin": f"http://127.0.0.1:{parts.port}"}).status_code == 200
    assert _get(url, headers={"Host": f"localhost:{parts.port}"}).status_code == 200


def test_a_savepoint_it_does_not_hold_is_a_page_saying_so(served):
    _, url = served
    answer = _get(url + "savepoint", params={"instance": "Shop #1", "sequence": 9})
    assert answer.status_code == 404 and "no savepoint 9" in answer.text
    assert _get(url + "savepoint", params={"sequence": "x"}).status_code == 404


def test_the_hooks_imports_never_reach_the_viewer_or_its_libraries():
    """Every import the hook can make, late ones included (the import graph of test_layout),
    stays clear of the viewer package and of the web libraries only it uses."""
    edges = graph()
    seen, todo = set(), ["precompact.edges.hook", "precompact.edges.command"]
    while todo:
        module = todo.pop()
        if module in seen or module not in edges:
            continue
        seen.add(module)
        todo.extend(edges[module] - ({"precompact.edges.cli"} if module == "precompact.edges.command" else set()))
    assert not {m for m in seen if m.startswith("precompact.viewer")}
    for module in seen:
        path = SOURCE.parent.joinpath(*module.split(".")).with_suffix(".py")
        if not path.exists():
            path = path.with_suffix("") / "__init__.py"
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not {n.split(".")[0] for n in names} & THIRD_PARTY, f"{module} imports {names}"


def test_only_the_command_line_imports_the_viewer():
    importers = {
        module
        for module, imports in graph().items()
        if not module.startswith("precompact.viewer") and any(i.startswith("precompact.viewer") for i in imports)
    }
    assert importers == {"precompact.edges.cli"}


def test_a_page_number_that_is_not_one_is_refused_with_a_page(served):
    _, url = served
    # review11b F3: `²` passed str.isdigit and 5,000 digits reached int(): both were a 500.
    for params in (
        {"page": "x"},
        {"page": "-1"},
        {"page": "lastly"},
        {"at": "0"},
        {"page": "²"},
        {"at": "9" * 5_000},
        {"sequence": "²"},
    ):
        answer = _get(url + "conversation", params={"instance": "Shop #1", "sequence": 1, **params})
        assert answer.status_code == 404 and "must be a savepoint or entry number" in answer.text
    for beyond in (999, "last"):
        last = _get(url + "conversation", params={"instance": "Shop #1", "sequence": 1, "page": beyond})
        assert last.status_code == 200 and "page 2 of 2" in last.text


def test_the_timeline_shows_the_verifiers_verdict_on_a_tampered_savepoint(tmp_path):
    planted = planted_project(tmp_path)
    first = min((planted.project.logs / "precompact-saves").glob("snapshot_*"))
    first.write_bytes(first.read_bytes().replace(b'"', b"'", 1))
    with viewer(planted.project.path, tmp_path / "view.log") as url:
        for _ in range(100):
            page = _get(url).text
            if "checking…" not in page:
                break
            time.sleep(0.1)
        rows = page.split('class="savepoint-link"')[1:]
        assert len(rows) == 2
        assert "local: FAILED" in rows[0] and "local: verified" in rows[1]
        shown = _get(url + "savepoint", params={"instance": "Shop #1", "sequence": 1})
        assert shown.status_code == 404 and "is altered" in shown.text and "precompact verify" in shown.text
        read = _get(url + "conversation", params={"instance": "Shop #1", "sequence": 1})
        assert read.status_code == 404 and "is altered" in read.text and "precompact verify" in read.text


def test_a_savepoint_page_shows_200_facts_of_a_kind_and_says_how_many_more(tmp_path):
    project = new_project(tmp_path, "many", git_layer=False, chain_layer=False, instance="Many #1")
    commits = " ".join(f"abc{n}" for n in range(10_000, 10_250))  # ids: numbers said in passing are no facts (#41)
    said = {"role": "assistant", "content": [{"type": "text", "text": f"The commits to check: {commits}."}]}
    entry = {"type": "assistant", "uuid": "a-1", "message": said}
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(json.dumps(entry) + "\n")
    loaded = configuration.load(project.path)
    snapshot.create_savepoint(
        snapshot.Settings.of(loaded), snapshot.Session("many", str(transcript), str(project.path), "auto")
    )
    with viewer(project.path, tmp_path / "view.log") as url:
        page = _get(url + "savepoint", params={"instance": "Many #1", "sequence": 1}).text
    identifiers = page.split("<h3>identifier", 1)[1].split("</ul>", 1)[0]
    assert identifiers.count('class="fact"') == 200
    assert "and 50 more: <code>precompact dropped 1 --json</code>" in page


# --- the first visit to a big savepoint: what it does not wait for, and what it still checks ----


def _in_process(planted) -> tuple[configuration.Config, TestClient]:
    """The viewer's application for the planted project, asked in this process (so a test can
    hold what it makes in the background), through the same guard."""
    trust(planted.project.path)
    loaded = configuration.load(planted.project.path)
    application = app.create(loaded, "token", 8000, pages.Verdicts(loaded))
    return loaded, TestClient(application, base_url="http://127.0.0.1:8000")


def _once_listed(client: TestClient, where: dict) -> str:
    """The savepoint's page once its dropped list is made, asked again as the page itself does."""
    for _ in range(100):
        page = client.get("/token/savepoint", params=where).text
        if 'class="listing"' not in page:
            return page
        time.sleep(0.1)
    raise AssertionError("the dropped list was not made in 10 s")


def _dropped_section(page: str) -> str:
    return page.split('id="dropped"', 1)[1].split("</section>", 1)[0]


def test_a_savepoint_page_answers_before_its_dropped_list_is_made_and_reloads_until_it_is(tmp_path, monkeypatch):
    planted = planted_project(tmp_path, seeds=(5,))  # made by this test's machine key, so vouched for here
    release = threading.Event()
    making = dropping.of_resurrection

    def held(config, found):
        release.wait(30)
        return making(config, found)

    monkeypatch.setattr(pages, "DROPPED_DEADLINE_SECONDS", 0)
    monkeypatch.setattr(dropping, "of_resurrection", held)
    loaded, client = _in_process(planted)
    where = {"instance": "Shop #1", "sequence": 1}
    gone = next(f.text for f in planted.sessions[0].planted if not f.kept and f.kind == "constraint")
    listing = client.get("/token/savepoint", params=where)
    assert listing.status_code == 200
    assert (
        'class="listing"' in listing.text
        and f'<meta http-equiv="refresh" content="{app.REFRESH_SECONDS}">' in listing.text
    )
    assert "reload now" in listing.text and gone not in _dropped_section(listing.text)
    assert (
        "Checks on loading it" in listing.text
        and str(markupsafe.escape(planted.sessions[0].summary[:40])) in listing.text
    )
    release.set()
    listed = _once_listed(client, where)
    assert gone in _dropped_section(listed) and "http-equiv" not in listed
    assert f"Conversation ({dropping.of_savepoint(loaded, 'Shop #1', 1).entries} entries)" in listed


def test_a_dropped_list_refused_says_why_and_the_next_visit_lists_it_again(tmp_path, monkeypatch):
    planted = planted_project(tmp_path, seeds=(5,))  # made by this test's machine key, so vouched for here
    making = dropping.of_resurrection

    def refused(config, found):
        raise pages.ViewerError("the history cannot be read")

    monkeypatch.setattr(dropping, "of_resurrection", refused)
    _, client = _in_process(planted)
    where = {"instance": "Shop #1", "sequence": 1}
    page = client.get("/token/savepoint", params=where).text
    assert "the history cannot be read" in page and 'class="listing"' not in page and "http-equiv" not in page
    monkeypatch.setattr(dropping, "of_resurrection", making)
    gone = next(f.text for f in planted.sessions[0].planted if not f.kept and f.kind == "constraint")
    again = _once_listed(client, where)
    assert "the history cannot be read" not in again and gone in _dropped_section(again)


def test_an_entry_whose_time_no_date_can_show_is_shown_without_one(tmp_path):
    # "9999-12-31T23:59:59-14:00" is in year 10000 once in UTC: the conversation page and a
    # search that finds the entry are pages like any other, the entry without a time.
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    transcript = tmp_path / "late.jsonl"
    times = ["2026-12-05T00:00:00.000Z", "9999-12-31T23:59:59-14:00"]
    said = [("user", "Deploy the zebraquokka service."), ("assistant", [{"type": "text", "text": "Staging first."}])]
    transcript.write_text(
        "".join(
            json.dumps(
                {
                    "type": role,
                    "uuid": f"u{n}",
                    "sessionId": "s",
                    "timestamp": times[n],
                    "message": {"role": role, "content": content},
                }
            )
            + "\n"
            for n, (role, content) in enumerate(said)
        )
    )
    assert precompact(project.path, "savepoint", "--transcript", str(transcript)).returncode in (0, 3)
    loaded = configuration.load(project.path)
    client = TestClient(app.create(loaded, "token", 8000, pages.Verdicts(loaded)), base_url="http://127.0.0.1:8000")
    page = client.get("/token/conversation", params={"instance": "Trial #1", "sequence": 1})
    assert page.status_code == 200 and "Staging first." in page.text and "2026-12-05T00:00:00Z" in page.text
    assert "10000" not in page.text
    found = client.get("/token/search", params={"q": "staging"})
    assert found.status_code == 200 and "Staging first." in found.text


def test_the_conversation_is_paged_and_every_page_holds_what_show_prints(tmp_path):
    planted = planted_project(tmp_path, seeds=(5,))  # made by this test's machine key, so vouched for here
    loaded, client = _in_process(planted)
    where = {"instance": "Shop #1", "sequence": 1}
    first = client.get("/token/conversation", params=where).text
    # The first page reads the history no further than itself and one entry more.
    assert first.count('<article class="entry') == pages.PAGE_ENTRIES and "page 1, more follow" in first
    following = first.split('rel="next" href="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
    second = client.get(following).text
    assert "page 2 of 2" in second and 'rel="next"' not in second
    last = first.split('">last</a>', 1)[0].rsplit('href="', 1)[1].replace("&amp;", "&")
    assert last.endswith("page=last") and client.get(last).text == second
    shown = [*pages.conversation_page(loaded, pages.Histories(), "Shop #1", 1, 1).entries]
    shown += pages.conversation_page(loaded, pages.Histories(), "Shop #1", 1, 2).entries
    printed = list(recall.show(loaded.logs, "Shop #1", f"1:1-{len(shown)}"))
    assert [(e.position, e.role, e.tool, "".join(p.text for p in e.pieces)) for e in shown] == [
        (e.position, e.role, e.tool, e.text) for e in printed
    ]
    assert second.count('<article class="entry') == len(printed) - pages.PAGE_ENTRIES
    assert f'id="e{len(printed)}"' in second


@pytest.mark.parametrize(
    ("page", "where"),
    [
        ("savepoint", {"sequence": 2}),
        ("conversation", {"sequence": 2}),
        ("diff", {"a": 1, "b": 2}),
        ("export", {"sequence": 2}),
    ],
)
def test_a_savepoint_no_root_vouches_for_is_refused_on_each_page_of_it(served, page, where):
    """Its brief, dropped list, summary and entries are what someone else's logs/ says (F7): each
    page that shows any of it is a refusal page, as the conversation's was."""
    planted, _ = served  # written under the module's machine key: this test's key never tagged it
    _, client = _in_process(planted)
    answer = client.get(f"/token/{page}", params={"instance": "Shop #1", **where})
    assert answer.status_code == 404 and "is not verified" in answer.text and "no root vouches for" in answer.text
    text = markupsafe.Markup(answer.text).unescape()
    assert HOSTILE not in text and planted.sessions[-1].summary not in text


# --- The browser is given a private page, never the address (issue 39) ------------------------

FAKE_BROWSER = """#!/bin/sh
# A browser as `webbrowser` starts one from BROWSER: what it was given, then alive until released.
printf '%s' "$1" > "$SEEN.tmp" && mv "$SEEN.tmp" "$SEEN"
while [ ! -e "$RELEASE" ]; do sleep 0.05; done
"""


@contextmanager
def _viewed_with_a_browser(
    tmp_path: Path, runtime_blocked: bool = False
) -> Iterator[tuple[subprocess.Popen, str, Path, Path]]:
    """`precompact view` as a user starts it, opening the browser BROWSER names (FAKE_BROWSER,
    a child of view's); yields the process, the address it prints, what the browser was given,
    and the user's runtime directory (with `runtime_blocked`, a file holds the name of
    precompact's folder there). The browser is released and view stopped at the end."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    runtime, browser, seen, release, log = (tmp_path / name for name in ("run", "browser", "seen", "release", "log"))
    runtime.mkdir(mode=0o700)
    if runtime_blocked:
        (runtime / "precompact").write_text("")
    browser.write_text(FAKE_BROWSER)
    browser.chmod(0o755)
    env = {
        **os.environ,
        "BROWSER": str(browser),
        "SEEN": str(seen),
        "RELEASE": str(release),
        "XDG_RUNTIME_DIR": str(runtime),
    }
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    with log.open("wb") as out:
        process = subprocess.Popen(
            [PRECOMPACT, "view"],
            cwd=project.path,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        opened = (lambda: True) if runtime_blocked else seen.exists
        assert wait_until(lambda: opened() and b"precompact view: " in log.read_bytes()), log.read_text()
        url = re.search(rb"precompact view: (http://\S+)", log.read_bytes()).group(1).decode()
        yield process, url, seen, runtime
    finally:
        release.touch()
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)


def _command_lines() -> dict[int, tuple[int, bytes]]:
    """Every process this user can see: its parent and its command line."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                found[int(entry.name)] = (parent, (entry / "cmdline").read_bytes())
            except (OSError, IndexError, ValueError):
                continue  # gone meanwhile
    return found


def test_the_browser_gets_a_private_page_and_no_command_line_holds_the_address(tmp_path):
    with _viewed_with_a_browser(tmp_path) as (process, url, seen, runtime):
        token = urlsplit(url).path.strip("/")
        lines = _command_lines()
        children = {pid: line for pid, (parent, line) in lines.items() if parent == process.pid}
        assert any(b"browser" in line for line in children.values()), children  # the browser, alive
        assert not [line for _, line in lines.values() if token.encode() in line]
        given = seen.read_text()
        assert given.startswith("file://") and token not in given
        page = Path(urlsplit(given).path)
        assert page.parent == runtime / "precompact"
        assert stat.S_IMODE(page.stat().st_mode) == 0o600 and stat.S_IMODE(page.parent.stat().st_mode) == 0o700
        assert f'<meta http-equiv="refresh" content="0; url={url}">' in page.read_text()
        assert _get(url).status_code == 200  # where the page sends the browser
        assert not page.exists(), "the page is removed once the browser reached the viewer"


def test_the_page_for_the_browser_is_removed_when_view_stops(tmp_path):
    with _viewed_with_a_browser(tmp_path) as (process, _, seen, runtime):
        page = Path(urlsplit(seen.read_text()).path)
        assert page.exists()
    assert process.returncode == 128 + signal.SIGTERM and not page.exists()
    assert list((runtime / "precompact").iterdir()) == []


def test_a_page_that_cannot_be_written_opens_no_browser_and_view_still_serves(tmp_path):
    with _viewed_with_a_browser(tmp_path, runtime_blocked=True) as (_, url, seen, runtime):
        assert _get(url).status_code == 200
        log = (tmp_path / "log").read_text()
        [said] = [line for line in log.splitlines() if line.startswith("no browser opened")]
        assert "open the address below" in said and str(runtime / "precompact") in said
        assert not seen.exists(), "no browser was started"


def test_the_timeline_shows_each_savepoints_time_trigger_size_verdicts_commit_and_transaction(localnet, tmp_path):
    """docs/viewer.md, **Timeline**: every session of the project (by instance and session id)
    and its savepoints: time, trigger, the context size in tokens, message count, the snapshot
    file's size, the verdict per layer (local, git, chain), the git commit and the chain
    transaction and slot."""
    project = funded_project(tmp_path, localnet.url, "Shop #2")
    for session_id in ("first-session", "second-session"):
        transcript = generate(tmp_path / f"{session_id}.jsonl", 20_000, project=project.path)
        saved = precompact(project.path, "savepoint", "--transcript", str(transcript.path), "--session-id", session_id)
        assert saved.returncode == 0, saved.stdout + saved.stderr
    index = savepoint_log.read(project.logs)
    created = {e["sequence"]: e for e in index.events if e["event"] == "SAVEPOINT_CREATED"}
    landed = {s.sequence: s for s in savepoint_log.savepoints(project.logs, "Shop #2")}
    assert all(s.commit and s.chain_signature and s.chain_slot for s in landed.values()), landed
    with viewer(project.path, tmp_path / "view.log") as url:
        for _ in range(300):
            page = _get(url).text
            if "checking…" not in page and "still checking" not in page:
                break
            time.sleep(0.1)
    sections = page.split('<section class="session">')[1:]
    assert len(sections) == 2
    for section, (sequence, session_id) in zip(sections, [(1, "first-session"), (2, "second-session")], strict=True):
        assert f'Shop #2 <span class="muted">session {session_id}</span>' in section, section[:300]
        [row] = section.split('class="savepoint-link"')[1:]
        event, held = created[sequence], landed[sequence]
        size = (project.path / event["snapshot_file"]).stat().st_size
        for shown in (
            event["timestamp"],
            "<td>manual</td>",
            f"{event['tokens_used_this_session']:,} tokens",
            f"<td>{event['messages']}</td>",
            f"{size:,} B",
            "local: verified",
            "git: verified",
            "chain: verified",
            held.commit[:10],
            held.chain_signature[:12],
            f"slot {held.chain_slot}",
        ):
            assert shown in row, (shown, row)
