"""What the mock model APIs (claude_code, codex_cli, gemini_cli) share: an HTTP/1.1 server on
127.0.0.1 at a port the system picks, one thread per request, that records every request and
leaves the answer to a POST to the API's own `answer`. Started and stopped by `start`/`stop`, or
by `with`."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar, Self

LOOPBACK = "127.0.0.1"


class Exchange(BaseHTTPRequestHandler):
    """One request to a `MockServer` and the ways to answer it."""

    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        mock = self.server.mock
        mock.record(self, None)
        self.send_json(404, mock.NOT_FOUND)

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self.server.mock.record(self, body)
        self.server.mock.answer(self, body)

    @property
    def route(self) -> str:
        """The path without its query."""
        return self.path.split("?")[0]

    def send(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_json(self, status: int, value: object) -> None:
        self.send(status, json.dumps(value).encode(), "application/json")

    def send_events(self, events: Iterable[bytes]) -> None:
        """A 200 event stream whose length is known: the events joined, then sent at once."""
        self.send(200, b"".join(events), "text/event-stream")

    def stream_events(self, events: Iterable[bytes]) -> None:
        """A 200 event stream written event by event, its end marked by closing the connection."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for event in events:
            self.wfile.write(event)
        self.wfile.flush()
        self.close_connection = True


def sse(value: dict, event: str | None = None) -> bytes:
    """One server-sent event carrying `value` as JSON, named `event` where the API names them."""
    named = f"event: {event}\n" if event else ""
    return f"{named}data: {json.dumps(value)}\n\n".encode()


class _Server(ThreadingHTTPServer):
    def __init__(self, mock: MockServer):
        self.mock = mock
        super().__init__((LOOPBACK, 0), Exchange)


class MockServer:
    """An API on 127.0.0.1 (`url`) that records each request in `requests` as method, path,
    headers and JSON body (None for a GET) and answers it: a GET with 404 and `NOT_FOUND`, a
    POST with `answer`."""

    NOT_FOUND: ClassVar[dict] = {"error": {"message": "not here"}}

    def __init__(self):
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self.server = _Server(self)
        self.url = f"http://{LOOPBACK}:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer(self, exchange: Exchange, body: dict) -> None:
        raise NotImplementedError

    def record(self, exchange: Exchange, body: dict | None) -> None:
        with self._lock:
            self.requests.append(
                {"method": exchange.command, "path": exchange.path, "headers": dict(exchange.headers), "body": body}
            )

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()
