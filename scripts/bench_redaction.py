"""Redaction against adversarial input: 1 MiB per pattern family, each built to make a pattern
rescan what follows every start (a private key's header with no END line was quadratic), then
text as sessions hold it (this project's code as a tool's output, as the Read tool shows it, as an
MCP tool's JSON answer, in Codex tool calls' arguments and command arrays; a JSON file as the Read
tool shows it). Prints the best of `--runs` per case; tests/python/test_redact.py
bounds how each family grows with its input. `--against PATH` times the redact.py of another
build (`git show <commit>:client/precompact/transcript/redact.py > PATH`) in turn with this one's.
Usage: .venv/bin/python scripts/bench_redaction.py [--runs 3] [--json] [--against PATH]"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

import throwaway_home
from precompact.transcript import redact

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
    "secret_field, escaped (unterminated value)": 'password\\": \\"' + "a" * MiB,
    "JSON text (a string per line)": "[" + _repeated('"token \\n",') + "]",
    "JSON text (cut inside a string)": '{"a":"' + _repeated("token\\n"),
    "JSON text (strings nested in strings)": "[" + _repeated('"[\\"a\\\\n\\"]",') + "]",
    "JSON strings after a prefix (a log line each)": _repeated('INFO got "token\\n" x\n'),
    "arrays of strings (a command line each)": _repeated('["token", "-p", "x"], '),
}


_CODE = (Path(__file__).resolve().parents[1] / "client" / "precompact" / "local" / "snapshot.py").read_text()


def _numbered(text: str) -> str:
    """`text` as Claude Code's Read tool shows a file: each line after its number and an arrow."""
    return "".join(f"{n:>6}\u2192{line}\n" for n, line in enumerate(text.splitlines(), 1))


_RECORDS = [{"id": n, "path": f"src/f{n}.py", "summary": _CODE[n * 80 : (n + 1) * 80]} for n in range(3000)]
_SESSIONS = {
    "code as a tool's output (1 MiB)": [{"text": (_CODE * (MiB // len(_CODE) + 1))[:MiB]}],
    "code as the Read tool shows it (1 MiB)": [{"text": _numbered(_CODE * 20)[:MiB]}],
    "a JSON file as the Read tool shows it (0.6 MiB)": [{"text": _numbered(json.dumps(_RECORDS, indent=2))}],
    "code in an MCP tool's JSON answer (1 MiB)": [
        {"text": json.dumps({"path": "a.py", "content": (_CODE * 20)[:MiB]})}
    ],
    "code written by 2,000 Codex heredocs (0.8 MiB)": [
        {
            "text": json.dumps(
                {"cmd": f"cat > f{n}.py <<'EOF'\n{_CODE[n * 400 : (n + 1) * 400]}\nEOF"}, separators=(",", ":")
            )
        }
        for n in range(2000)
    ],
    "2,000 Codex command arrays (0.5 MiB)": [
        {"command": ["rg", "-n", "--glob", "*.py", "-e", *_CODE[n * 250 : (n + 1) * 250].split()]} for n in range(2000)
    ],
    "2,000 Codex command arrays as JSON text (0.5 MiB)": [
        {"arguments": json.dumps({"command": ["rg", "-n", "-e", *_CODE[n * 250 : (n + 1) * 250].split()]})}
        for n in range(2000)
    ],
}


def _module(path: str):
    spec = importlib.util.spec_from_file_location("redact_against", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["redact_against"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--against", help="another build's redact.py, timed in turn with this one's")
    args = parser.parse_args()
    builds = {"this": redact, **({"against": _module(args.against)} if args.against else {})}
    results: dict[str, dict[str, float]] = {}
    for case, values in [*((family, [{"text": text}]) for family, text in CASES.items()), *_SESSIONS.items()]:
        results[case] = {}
        for _ in range(args.runs):
            for build, module in builds.items():
                redactor = module.Redactor()
                began = time.perf_counter()
                for value in values:
                    redactor.redact(value)
                spent = time.perf_counter() - began
                results[case][build] = min(results[case].get(build, spent), spent)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for case, seconds in results.items():
        print("  ".join(f"{seconds[build]:7.3f} s" for build in builds) + f"  {case}")


if __name__ == "__main__":
    throwaway_home.use()
    main()
