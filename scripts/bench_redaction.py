"""Redaction against adversarial input: 1 MiB per pattern family, each built to make a pattern
rescan what follows every start (a private key's header with no END line was quadratic). Prints
the best of `--runs` per family; tests/python/test_redact.py bounds how each grows with its input.
Usage: .venv/bin/python scripts/bench_redaction.py [--runs 3] [--json]"""

from __future__ import annotations

import argparse
import json
import time

import throwaway_home
from precompact.transcript.redact import Redactor

MiB = 1 << 20


def _repeated(unit: str) -> str:
    return (unit * (MiB // len(unit) + 1))[:MiB]


CASES = {
    "private_key (PEM headers, no END)": _repeated("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n"),
    "private_key (PuTTY headers, no MAC)": _repeated("PuTTY-User-Key-File-3: x\n"),
    "secret_assignment (a run of names)": _repeated("passwd"),
    "secret_assignment (_key names)": _repeated("_key1"),
    "url_credentials": _repeated("://a:b/"),
    "cli_password (curl without -u)": _repeated("curl "),
    "seed_phrase": _repeated("seed phrase:"),
    "netrc_password": _repeated("machine "),
    "secret_field (unterminated value)": 'password": "' + "a" * MiB,
    "wallet_key": _repeated("private_key:"),
    "solana_keypair": "[" + _repeated("1,"),
    "vendor token (a long run)": "AKIA" + "A" * MiB,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = {}
    for family, text in CASES.items():
        times = []
        for _ in range(args.runs):
            began = time.perf_counter()
            Redactor().redact(text)
            times.append(time.perf_counter() - began)
        results[family] = min(times)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for family, seconds in results.items():
        print(f"{seconds:7.3f} s  {family}")


if __name__ == "__main__":
    throwaway_home.use()
    main()
