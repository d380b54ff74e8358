"""A JSON-RPC endpoint on 127.0.0.1 (a free port) for tests that stand in front of, or instead
of, a cluster: each POST's body is handed to `respond`, whose JSON object is the answer. `stop`
shuts it down and waits for its thread."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class JsonRpcServer:
    def __init__(self, respond: Callable[[bytes], dict]) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                out = json.dumps(respond(self.rfile.read(int(self.headers["Content-Length"])))).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()
