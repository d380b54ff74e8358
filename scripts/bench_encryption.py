"""What encryption costs (part of scripts/bench; also runs on its own): zlib level 1 then age over
a real snapshot of a generated session reading the standard library's sources (100 MB by
default; code compresses as real sessions do, unlike made-up repetitive text), decryption back, and one Layer-2
commit of that snapshot in clear text and encrypted. Usage: bench_encryption.py [--mb 100]
[--runs 3] [--json]."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from precompact.config import settings as configuration
from precompact.local import savepoint_log, snapshot
from precompact.remote import encryption as remote_crypto
from precompact.remote import gitstore
from support.projects import new_project
from support.secret_corpus import stdlib_sources
from support.transcript_gen import generate

MB = 1_000_000


def measure(root: Path, size_mb: int, runs: int) -> dict:
    path = new_project(root, f"enc{size_mb}", git_layer=True, chain_layer=False, instance="Bench #1").path
    loaded = configuration.load(path)
    transcript = generate(root / f"enc{size_mb}.jsonl", size_mb * MB, project=path, sources=stdlib_sources())
    written = snapshot.create_savepoint(
        snapshot.Settings.of(loaded), snapshot.Session("bench", str(transcript.path), str(path), "auto")
    )
    data = written.path.read_bytes()
    saved = next(s for s in savepoint_log.savepoints(loaded.logs, loaded.instance) if s.sequence == written.sequence)
    identities = remote_crypto.load_identities(remote_crypto.Keys.of(loaded))
    repo = gitstore.open_repository(gitstore.Target.of(loaded))
    seal, unseal, clear_commit, sealed_commit = [], [], [], []
    for run in range(runs):
        began = time.perf_counter()
        ciphertext = remote_crypto.seal(data, remote_crypto.Keys.of(loaded))
        seal.append(time.perf_counter() - began)
        began = time.perf_counter()
        assert remote_crypto.open_sealed(ciphertext, identities) == data
        unseal.append(time.perf_counter() - began)
        for keys, times in ((remote_crypto.CLEAR, clear_commit), (remote_crypto.Keys.of(loaded), sealed_commit)):
            # A branch of its own per run, and no ciphertext cache: each commit does the whole work.
            shutil.rmtree(Path(repo.common_dir) / gitstore.CIPHERTEXT_CACHE, ignore_errors=True)
            target = gitstore.Target(path, "origin", f"bench/{len(times)}-{keys.encrypting}-{run}", keys)
            began = time.perf_counter()
            gitstore.commit_savepoint(repo, target, loaded.logs, saved)
            times.append(time.perf_counter() - began)
    return {
        "snapshot_bytes": len(data),
        "ciphertext_bytes": len(ciphertext),
        "seal_s": statistics.median(seal),
        "open_s": statistics.median(unseal),
        "layer_2_commit_clear_s": statistics.median(clear_commit),
        "layer_2_commit_encrypted_s": statistics.median(sealed_commit),
        "runs": runs,
    }


def markdown(found: dict) -> str:
    mb = found["snapshot_bytes"] / MB
    seal = (
        f"- encryption of a {mb:.0f} MB snapshot (zlib level 1 + age, median of {found['runs']}): "
        f"{found['seal_s'] * 1000:.0f} ms ({mb / found['seal_s']:.0f} MB/s), ciphertext "
        f"{found['ciphertext_bytes'] / found['snapshot_bytes']:.0%} of the plaintext; decryption "
        f"{found['open_s'] * 1000:.0f} ms"
    )
    commit = (
        f"- Layer 2 commit of that snapshot: clear {found['layer_2_commit_clear_s'] * 1000:.0f} ms, "
        f"encrypted {found['layer_2_commit_encrypted_s'] * 1000:.0f} ms"
    )
    return f"{seal}\n{commit}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100, help="transcript size in MB")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="precompact-bench-encryption-"))
    os.environ["XDG_CONFIG_HOME"] = str(root / "config")
    try:
        found = measure(root, args.mb, args.runs)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(found, indent=2) if args.json else markdown(found))


if __name__ == "__main__":
    throwaway_home.use()
    main()
