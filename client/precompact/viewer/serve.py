"""Serving the viewer: 127.0.0.1 on a port the system picks, behind a token of 256 random bits
that only the printed address carries; the browser is opened where one exists."""

from __future__ import annotations

import secrets
import socket
import sys
from collections.abc import Callable

import uvicorn

from precompact.boundary import processes
from precompact.config.settings import Config
from precompact.viewer import app, pages

LOOPBACK = "127.0.0.1"
# While a savepoint's dropped list is made in a background thread, a page's every file read hands
# the interpreter over and waits this long to get it back: at Python's default (5 ms) the
# hundreds of chunk reads that check a 100 MB snapshot cost seconds.
SWITCH_SECONDS = 0.0005


def serve(config: Config, open_browser: bool, announce: Callable[[str], None]) -> None:
    """Serves until interrupted; `announce` is given the address (which holds the token)."""
    sys.setswitchinterval(SWITCH_SECONDS)
    token = secrets.token_urlsafe(32)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((LOOPBACK, 0))
    listener.listen()  # from now on a browser's connection waits in the backlog until uvicorn accepts it
    port = listener.getsockname()[1]
    url = f"http://{LOOPBACK}:{port}/{token}/"
    application = app.create(config, token, port, pages.Verdicts(config))
    server = uvicorn.Server(uvicorn.Config(application, log_level="warning", access_log=False, lifespan="off"))
    announce(f"precompact view: {url}")
    announce("read-only; the address is the key (keep it to yourself); Ctrl-C stops it")
    if open_browser:
        processes.open_in_browser(url)
    server.run(sockets=[listener])
