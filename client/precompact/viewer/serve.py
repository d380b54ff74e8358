"""Serving the viewer: 127.0.0.1 on a port the system picks, behind a token of 256 random bits
that only the printed address carries; the browser is opened where one exists.

The browser is never given the address on its command line, which every local user can read
(/proc/<pid>/cmdline) and then use from 127.0.0.1: it opens a page only this user may read
(0600, in the user's runtime directory) that sends it on to the address, removed as soon as the
server admits a request (the browser got there) and in any case when the server stops."""

from __future__ import annotations

import html
import secrets
import signal
import socket
import sys
from collections.abc import Callable
from pathlib import Path

import uvicorn

from precompact.boundary import private_file, processes, quoting
from precompact.config.settings import Config
from precompact.viewer import app, pages

LOOPBACK = "127.0.0.1"
# While a savepoint's dropped list is made in a background thread, a page's every file read hands
# the interpreter over and waits this long to get it back: at Python's default (5 ms) the
# hundreds of chunk reads that check a 100 MB snapshot cost seconds.
SWITCH_SECONDS = 0.0005


def serve(config: Config | None, open_browser: bool, announce: Callable[[str], None]) -> None:
    """Serves until interrupted; `announce` is given the address (which holds the token). Without
    a project's `config`, the machine's home page: every project and one search over them."""
    sys.setswitchinterval(SWITCH_SECONDS)
    token = secrets.token_urlsafe(32)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((LOOPBACK, 0))
    listener.listen()  # from now on a browser's connection waits in the backlog until uvicorn accepts it
    port = listener.getsockname()[1]
    url = f"http://{LOOPBACK}:{port}/{token}/"
    page = None
    if open_browser:
        try:
            page = _redirect_page(url)
        except OSError as e:
            announce(
                f"no browser opened (its page could not be written: {quoting.inline(str(e))}); open the address below"
            )

    def admitted() -> None:
        if page is not None:
            page.unlink(missing_ok=True)

    application = (
        app.create_home(token, port, admitted)
        if config is None
        else app.create(config, token, port, pages.Verdicts(config), admitted)
    )
    server = uvicorn.Server(uvicorn.Config(application, log_level="warning", access_log=False, lifespan="off"))
    announce(f"precompact view: {url}")
    announce("read-only; the address is the key (keep it to yourself); Ctrl-C stops it")
    # A terminal closed or a `kill` ends the command as Ctrl-C does, through `finally` (uvicorn
    # stops on either, then raises it again to this handler).
    for stop in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(stop, _exit)
    try:
        if page is not None:
            processes.open_in_browser(page)
        server.run(sockets=[listener])
    finally:
        admitted()


def _exit(number: int, _frame: object) -> None:
    raise SystemExit(128 + number)


def _redirect_page(url: str) -> Path:
    """A new page only this user may read that sends the browser on to `url` (no script: the
    viewer's pages allow none either)."""
    page = private_file.runtime_directory() / f"view-{secrets.token_hex(16)}.html"
    target = html.escape(url, quote=True)
    private_file.create(
        page,
        (
            '<!doctype html>\n<meta charset="utf-8">\n<meta name="referrer" content="no-referrer">\n'
            f'<meta http-equiv="refresh" content="0; url={target}">\n<title>precompact view</title>\n'
            f'<p><a href="{target}">precompact view</a></p>\n'
        ).encode(),
    )
    return page
