"""The measuring half of scripts/bench-localnet (see there)."""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from solana.rpc.async_api import AsyncClient
from solana.rpc.commitment import Confirmed
from solana.rpc.types import TxOpts
from solders.keypair import Keypair
from solders.transaction import Transaction

import throwaway_home
from precompact.chain import wire as chain

SOL = 1_000_000_000
BINARY = Path(os.environ["CARGO_TARGET_DIR"]) / "debug" / "precompact-localnet"


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def start(workdir: Path) -> tuple[subprocess.Popen, str, float]:
    log = workdir / "localnet.log"
    began = time.perf_counter()
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [str(BINARY), "--port", "0", "--state", str(workdir / "state.json")], stdout=sink, stderr=subprocess.STDOUT
        )
    while True:
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith("ready "):
                return process, line.split(" ", 1)[1], time.perf_counter() - began
        if process.poll() is not None:
            sys.exit(f"precompact-localnet exited: {log.read_text()}")
        time.sleep(0.001)


async def send(client: AsyncClient, instructions, payer: Keypair) -> None:
    blockhash = (await client.get_latest_blockhash()).value.blockhash
    tx = Transaction.new_signed_with_payer(instructions, payer.pubkey(), [payer], blockhash)
    signature = (await client.send_raw_transaction(bytes(tx), opts=TxOpts(preflight_commitment=Confirmed))).value
    await client.confirm_transaction(signature, commitment=Confirmed, sleep_seconds=0.01)


async def run(count: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        process, url, cold_start = start(Path(tmp))
        try:
            print(f"cold start to ready: {cold_start * 1000:.0f} ms", flush=True)
            authority = Keypair()
            instance = chain.instance_id("bench #1")
            async with AsyncClient(url, commitment=Confirmed) as client:
                await client.confirm_transaction(
                    (await client.request_airdrop(authority.pubkey(), 100 * SOL)).value, sleep_seconds=0.01
                )
                await send(
                    client, [chain.initialize_instruction(authority.pubkey(), authority.pubkey(), instance)], authority
                )
                rss = [(0, rss_mb(process.pid))]
                timings = []
                prev = bytes(32)
                for sequence in range(1, count + 1):
                    snapshot_hash = sequence.to_bytes(32, "little")
                    fields = chain.SavepointFields(
                        sequence, int(time.time()), instance, snapshot_hash, prev, f"{sequence:040x}"
                    )
                    instructions = chain.savepoint_instructions(authority, fields, b'{"trigger":"auto"}')
                    began = time.perf_counter()
                    await send(client, instructions, authority)
                    timings.append(time.perf_counter() - began)
                    prev = snapshot_hash
                    if sequence % max(1, count // 4) == 0:
                        rss.append((sequence, rss_mb(process.pid)))
                        print(f"  {sequence}/{count} savepoints", flush=True)
            timings.sort()
            p = lambda q: timings[min(len(timings) - 1, int(q * len(timings)))] * 1000
            print(
                f"savepoint round trip (send + confirm), {count} savepoints: p50 {p(0.50):.1f} ms, p99 {p(0.99):.1f} ms, mean {statistics.mean(timings) * 1000:.1f} ms"
            )
            print("RSS by savepoints: " + ", ".join(f"{n}: {mb:.0f} MB" for n, mb in rss))
        finally:
            process.terminate()
            process.wait(timeout=10)


if __name__ == "__main__":
    throwaway_home.use()
    asyncio.run(run(int(sys.argv[1])))
