"""Proof bundle sizes and verify times for lineages of 1, 100 and 1,000 savepoints on
precompact-localnet (run after scripts/setup):

    .venv/bin/python scripts/bench_proof.py [--rotated] [1 100 1000]

Savepoints are posted straight to the program (the transactions `precompact flush` sends, with
256-byte metadata; with `--rotated`, the key is rotated after half of them, so the bundle and the
ledger walk cross a rotation), then the bundle is built by the client (`prove`), checked by the client
offline (`verify-bundle`), by tools/verify_bundle.py, and by the client against the localnet
(`verify-bundle --cluster`, once every block is finalized); `verify --ledger`'s walk is timed too.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from solders.hash import Hash
from solders.keypair import Keypair
from solders.transaction import Transaction

import throwaway_home
from precompact.chain import rpc
from precompact.chain import wire as chain
from precompact.local import savepoint_log
from precompact.proof import bundle, ledger
from precompact.verifier import verdicts

REPO = Path(__file__).resolve().parents[1]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache" / "precompact" / "target"))
_spec = importlib.util.spec_from_file_location("verify_bundle", REPO / "tools" / "verify_bundle.py")
assert _spec is not None and _spec.loader is not None
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)


def start(workdir: Path) -> tuple[subprocess.Popen, str]:
    log = workdir / "localnet.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [str(TARGET / "debug" / "precompact-localnet"), "--port", "0"], stdout=sink, stderr=subprocess.STDOUT
        )
    while True:
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith("ready "):
                return process, line.split(" ", 1)[1]
        if process.poll() is not None:
            sys.exit(f"precompact-localnet exited: {log.read_text()}")
        time.sleep(0.01)


def send(client: rpc.Cluster, signer: Keypair, instructions, cosigners: tuple[Keypair, ...] = ()) -> str:
    tx = Transaction.new_signed_with_payer(
        instructions, signer.pubkey(), [signer, *cosigners], Hash.from_string(client.latest_blockhash())
    )
    signature = client.send_transaction(bytes(tx))
    while (status := client.signature_status(signature)) is None or status.get("confirmationStatus") == "processed":
        time.sleep(0.005)
    assert status["err"] is None, status
    return signature


def lineage(
    client: rpc.Cluster, count: int, rotated: bool
) -> tuple[verdicts.Roots, dict[int, savepoint_log.Savepoint], list[savepoint_log.Rotation]]:
    """A fresh instance with `count` savepoints posted (the key rotated after half of them when
    `rotated`), the index entries that name them, and the rotation."""
    signer = Keypair()
    client.call("requestAirdrop", [str(signer.pubkey()), 10**10])
    time.sleep(0.5)
    roots = verdicts.Roots(chain.PROGRAM_ID, signer.pubkey(), f"bench {count} {time.time_ns()}")
    send(client, signer, [chain.initialize_instruction(signer.pubkey(), signer.pubkey(), roots.instance_id)])
    mine, previous, rotations = {}, bytes(32), []
    for k in range(1, count + 1):
        if rotated and count > 1 and k == count // 2 + 1:
            new = Keypair()
            rotate = chain.rotate_authority_instruction(
                signer.pubkey(), signer.pubkey(), new.pubkey(), roots.instance_id
            )
            signature = send(client, signer, [rotate], (new,))
            rotations.append(
                savepoint_log.Rotation(roots.instance, k - 1, str(signer.pubkey()), str(new.pubkey()), signature, False)
            )
            client.call("requestAirdrop", [str(new.pubkey()), 10**10])
            time.sleep(0.5)
            signer, roots = new, verdicts.Roots(chain.PROGRAM_ID, new.pubkey(), roots.instance)
        snapshot_hash = hashlib.sha256(f"{roots.instance} {k}".encode()).digest()
        fields = chain.SavepointFields(k, 1_800_000_000 + k, roots.instance_id, snapshot_hash, previous, "ab" * 20)
        signature = send(client, signer, chain.savepoint_instructions(signer, fields, b"x" * chain.METADATA_MAX_LEN))
        created = {
            "instance": roots.instance,
            "snapshot_hash": snapshot_hash.hex(),
            "prev_snapshot_hash": previous.hex(),
        }
        mine[k] = savepoint_log.Savepoint(
            k, created, layer_3=savepoint_log.Layer3.CONFIRMED, commit="ab" * 20, chain_signature=signature
        )
        previous = snapshot_hash
    return roots, mine, rotations


def timed(action) -> tuple[float, object]:
    began = time.perf_counter()
    result = action()
    return time.perf_counter() - began, result


def measure(client: rpc.Cluster, url: str, count: int, rotated: bool) -> tuple:
    roots, mine, rotations = lineage(client, count, rotated)
    built, written = timed(lambda: bundle.of_savepoints(roots, client, mine, count, rotations))
    size = len((json.dumps(written, indent=1) + "\n").encode())
    offline, verdict = timed(lambda: bundle.check(written))
    assert verdict.status == verdicts.VERIFIED, verdict
    by_reference, _ = timed(lambda: reference.verify(written))
    walked, found = timed(lambda: ledger.check(roots, client, list(mine.values())))
    assert found.status == verdicts.VERIFIED, found
    while bundle.check(written, cluster=url).status == verdicts.NOT_VERIFIED:
        time.sleep(1)  # until the last block is finalized
    online, verdict = timed(lambda: bundle.check(written, cluster=url))
    assert verdict.status == verdicts.VERIFIED, verdict
    return count, size, built, offline, by_reference, online, walked


def main(counts: list[int], rotated: bool) -> None:
    print(
        "| savepoints | bundle bytes | prove | verify-bundle offline | tools/verify_bundle.py | verify-bundle --cluster | verify --ledger walk |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        process, url = start(Path(tmp))
        try:
            client = rpc.Cluster(url, timeout=30)
            for count in counts:
                _, size, *seconds = measure(client, url, count, rotated)
                print(
                    f"| {count} | {size:,} | " + " | ".join(f"{s * 1000:,.0f} ms" for s in seconds) + " |", flush=True
                )
        finally:
            process.terminate()
            process.wait()


if __name__ == "__main__":
    throwaway_home.use()
    arguments = sys.argv[1:]
    main([int(a) for a in arguments if a != "--rotated"] or [1, 100, 1000], "--rotated" in arguments)
