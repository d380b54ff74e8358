"""A real precompact-localnet process on a free loopback port, and the shared test vectors."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
VECTORS = REPO / "tests" / "vectors" / "savepoint-v1.json"


def localnet_binary() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache" / "precompact" / "target"))
    binary = target / "debug" / "precompact-localnet"
    if not binary.exists():
        raise FileNotFoundError(f"{binary} is missing: run scripts/setup to build it")
    return binary


def free_port() -> int:
    """A loopback port nothing listens on (for a service that is down, or started later)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalnetProcess:
    """One precompact-localnet process; port 0 (the default) lets the OS pick a free port."""

    def __init__(self, workdir: Path, state_file: Path | None = None, port: int = 0):
        self.workdir = workdir
        self.state_file = state_file
        self.port = port
        self.process: subprocess.Popen | None = None
        self.url = ""

    def start(self, timeout: float = 60.0) -> str:
        # The program's own logs go to stdout natively: send them to a file so a full pipe can
        # never stall the server.
        log = self.workdir / f"localnet-{time.monotonic_ns()}.log"
        args = [str(localnet_binary()), "--port", str(self.port)]
        if self.state_file is not None:
            args += ["--state", str(self.state_file)]
        with log.open("wb") as sink:
            self.process = subprocess.Popen(args, stdout=sink, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in log.read_text(errors="replace").splitlines():
                if line.startswith("ready "):
                    self.url = line.split(" ", 1)[1].strip()
                    return self.url
            if self.process.poll() is not None:
                raise RuntimeError(f"precompact-localnet exited early: {log.read_text(errors='replace')}")
            time.sleep(0.02)
        raise RuntimeError("precompact-localnet did not print its ready line in time")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
