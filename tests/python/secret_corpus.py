"""Planted secrets (fake, but in each format's real shape) and a clean corpus of real code and
prose, for measuring redaction: every secret must go, and as little else as possible."""

from __future__ import annotations

import json
import random
import string
import sysconfig
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_rng = random.Random(20261130)


def _pick(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


@dataclass(frozen=True)
class Planted:
    format: str
    text: str  # as it appears in a file or a message
    sensitive: tuple[str, ...]  # what must not survive (`DB_PASSWORD=` may stay, its value may not)


def _plant(format: str, value: str, before: str = "", after: str = "") -> Planted:
    return Planted(format, before + value + after, (value,))


def _pem(format: str, label: str) -> Planted:
    body = [_pick(B64, 64) for _ in range(4)]
    return Planted(format, "\n".join([f"-----BEGIN {label}-----", *body, f"-----END {label}-----"]), tuple(body))


SECRETS: list[Planted] = [
    _pem("RSA private key (PEM)", "RSA PRIVATE KEY"),
    _pem("PKCS#8 private key (PEM)", "PRIVATE KEY"),
    _pem("EC private key (PEM)", "EC PRIVATE KEY"),
    _pem("OpenSSH private key", "OPENSSH PRIVATE KEY"),
    _pem("PGP private key block", "PGP PRIVATE KEY BLOCK"),
    _plant("AWS access key id", "AKIA" + _pick(UPPER_DIGITS, 16)),
    _plant("AWS secret access key", _pick(ALNUM + "/+", 40), "aws_secret_access_key = "),
    _plant("AWS session token (env)", _pick(B64, 120), "AWS_SESSION_TOKEN="),
    _plant("GitHub classic token", "ghp_" + _pick(ALNUM, 36)),
    _plant("GitHub OAuth token", "gho_" + _pick(ALNUM, 36)),
    _plant("GitHub fine-grained token", "github_pat_11" + _pick(UPPER_DIGITS, 20) + "_" + _pick(ALNUM, 59)),
    _plant("GitLab personal token", "glpat-" + _pick(URLSAFE, 20)),
    _plant("Slack bot token", "xoxb-" + _pick(string.digits, 12) + "-" + _pick(string.digits, 13) + "-" + _pick(ALNUM, 24)),
    _plant("Slack webhook", "https://hooks.slack.com/services/T" + _pick(UPPER_DIGITS, 8) + "/B" + _pick(UPPER_DIGITS, 8) + "/" + _pick(ALNUM, 24)),
    _plant("Anthropic API key", "sk-ant-api03-" + _pick(URLSAFE, 93) + "AA"),
    _plant("OpenAI project key", "sk-proj-" + _pick(URLSAFE, 48)),
    _plant("Stripe secret key", "sk_live_" + _pick(ALNUM, 24)),
    _plant("Stripe restricted key", "rk_live_" + _pick(ALNUM, 24)),
    _plant("Google API key", "AIza" + _pick(URLSAFE, 35)),
    _plant("npm token", "npm_" + _pick(ALNUM, 36)),
    _plant("PyPI token", "pypi-AgEIcHlwaS5vcmc" + _pick(URLSAFE, 70)),
    _plant("JSON Web Token", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI" + _pick(URLSAFE, 30) + "." + _pick(URLSAFE, 43)),
    _plant("PostgreSQL URL with password", _pick(ALNUM, 18), "postgresql://app_user:", "@db.internal:5432/app"),
    _plant("MongoDB SRV URL with password", _pick(ALNUM, 16), "mongodb+srv://admin:", "@cluster0.example.mongodb.net/prod"),
    _plant("Redis URL with password only", _pick(ALNUM, 20), "redis://:", "@cache.internal:6379/0"),
    _plant("Solana CLI keypair", json.dumps([_rng.randrange(256) for _ in range(64)])),
    _plant(".env password", _pick(ALNUM, 14), "DB_PASSWORD="),
    _plant("YAML api_key", _pick(ALNUM, 32), "api_key: "),
    _plant("JSON client secret", _pick(ALNUM, 40), '"client_secret": "', '"'),
    _plant("Authorization: Bearer header", _pick(URLSAFE, 48), "Authorization: Bearer "),
    _plant("Authorization: Basic header", _pick(B64, 40) + "==", "Authorization: Basic "),
    _plant("Twilio API key", "SK" + _pick(HEX, 32)),
    _plant("SendGrid API key", "SG." + _pick(URLSAFE, 22) + "." + _pick(URLSAFE, 43)),
    _plant("Hugging Face token", "hf_" + _pick(ALNUM, 34)),
    _plant("Shopify access token", "shpat_" + _pick(HEX, 32)),
    _plant("DigitalOcean token", "dop_v1_" + _pick(HEX, 64)),
    _plant("Telegram bot token", _pick(string.digits, 10) + ":AA" + _pick(URLSAFE, 33)),
    _plant("Azure storage connection string", _pick(B64, 86) + "==", "DefaultEndpointsProtocol=https;AccountName=prodstore;AccountKey=", ";EndpointSuffix=core.windows.net"),
    _plant("HashiCorp Vault token", "hvs." + _pick(URLSAFE, 90)),
    _plant("age secret key", "AGE-SECRET-KEY-1" + _pick("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L".upper(), 58)),
    _plant("Square access token", "sq0atp-" + _pick(URLSAFE, 22)),
]


def stdlib_sources() -> list[Path]:
    """Real code with no secrets that talks about passwords, tokens and keys all the time: the
    Python standard library's own sources."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in stdlib.glob("*.py") if p.stat().st_size < 400_000)
    return files + sorted(stdlib.glob("email/*.py")) + sorted(stdlib.glob("http/*.py")) + sorted(stdlib.glob("urllib/*.py"))


def clean_corpus() -> list[tuple[str, str]]:
    """Real code and prose with no secrets: the standard library's sources and this project's
    documents."""
    files = stdlib_sources() + [REPO / "README.md", REPO / "docs" / "performance.md"]
    return [(str(p), p.read_text(encoding="utf-8", errors="replace")) for p in files if p.is_file()]


@dataclass(frozen=True)
class FalsePositives:
    lines: int
    bytes: int
    changed: list[str]

    @property
    def rate(self) -> float:
        return len(self.changed) / self.lines


def false_positives() -> FalsePositives:
    """Lines of the clean corpus that redaction changes (each one is a false positive)."""
    from precompact.redact import Redactor

    redactor = Redactor()
    lines = size = 0
    changed = []
    for name, text in clean_corpus():
        for line in text.splitlines():
            lines += 1
            size += len(line)
            if redactor.value(line) != line:
                changed.append(f"{Path(name).name}: {line.strip()}")
    return FalsePositives(lines, size, changed)
