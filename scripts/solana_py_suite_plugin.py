"""pytest plugin that stands precompact-localnet in for the docker-compose validator of
solana-py's integration suite: a fresh precompact-localnet per test module (as the suite's
--container-scope=module restarts its container), JSON-RPC on one port and PubSub on the next,
behind the `docker_ip` and `docker_services` fixtures the suite asks pytest-docker for."""

import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator

import pytest

VALIDATOR_RPC_PORT = 8899
VALIDATOR_PUBSUB_PORT = 8900


class LocalnetServices:
    def __init__(self, rpc_port: int) -> None:
        self.ports = {VALIDATOR_RPC_PORT: rpc_port, VALIDATOR_PUBSUB_PORT: rpc_port + 1}

    def port_for(self, service: str, container_port: int) -> int:
        return self.ports[container_port]

    def wait_until_responsive(self, timeout: float, pause: float, check: Callable[[], bool]) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                raise TimeoutError("precompact-localnet did not answer")
            time.sleep(pause)


def free_port_pair() -> int:
    """A port whose successor is free too (PubSub listens on port + 1)."""
    while True:
        with socket.socket() as rpc:
            rpc.bind(("127.0.0.1", 0))
            port: int = rpc.getsockname()[1]
            with socket.socket() as pubsub:
                try:
                    pubsub.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
                return port


@pytest.fixture(scope="session")
def docker_ip() -> str:
    return "127.0.0.1"


def wait_for_first_root(port: int) -> None:
    """Waits until slot 2 is finalized (about 14 s: 31 votes after it ends). The suite asks for
    block 2 at the default, finalized, level after sleeping 10 s, which a validator container
    that took its own seconds to boot has rooted by then; precompact-localnet is up at once."""
    url = f"http://127.0.0.1:{port}"
    request = {"jsonrpc": "2.0", "id": 1, "method": "getSlot", "params": [{"commitment": "finalized"}]}
    deadline = time.monotonic() + 30
    while (
        json.loads(
            urllib.request.urlopen(
                urllib.request.Request(url, json.dumps(request).encode(), {"Content-Type": "application/json"})
            ).read()
        )["result"]
        < 2
    ):
        if time.monotonic() > deadline:
            raise TimeoutError("precompact-localnet rooted no slot within 30 s")
        time.sleep(0.2)


@pytest.fixture(scope="module")
def docker_services() -> Iterator[LocalnetServices]:
    port = free_port_pair()
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [os.environ["PRECOMPACT_LOCALNET_BINARY"], "--port", str(port)], stdout=log, stderr=log
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                log.seek(0)
                if b"\nready " in b"\n" + log.read():
                    break
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(f"precompact-localnet did not start: {log.read()!r}")
                time.sleep(0.05)
            wait_for_first_root(port)
            yield LocalnetServices(port)
        finally:
            process.terminate()
            process.wait(timeout=10)
