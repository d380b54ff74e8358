"""An HTTP server on 127.0.0.1 (a free port) that answers JSON-RPC badly: each POST gets
`answer(path)`, an HTTP status and body; with no `answer` it never answers (a stalled cluster)
until `stop`, which releases what it holds and waits for its thread."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable


class MisbehavingRpc:
    def __init__(self, answer: Callable[[str], tuple[int, bytes]] | None, stall_seconds: float = 60) -> None:
        released = threading.Event()
        self.released = released

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if answer is None:
                    released.wait(stall_seconds)
                    return
                status, body = answer(self.path)
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever)
        self.thread.start()
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        self.url = f"http://{self.host}"

    def stop(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()
