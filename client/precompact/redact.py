"""Secret redaction, applied to every string before anything is written.

Each match becomes `[REDACTED:<kind>]` and is counted per kind. The patterns are our own rather
than a detector library's: they must run over transcripts of hundreds of MB inside the hook's
time budget, and substitute in place with a named kind (detect-secrets and friends scan and
report, line by line, far slower).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

# Order matters: specific token formats first, generic assignments last, so a GitHub token in
# `token=ghp_...` is counted as github.
_BUILTIN_PATTERNS: list[tuple[str, str]] = [
    ("private_key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"),
    ("aws_access_key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    ("aws_secret_key", r"(?i)\baws_?secret_?access_?key\b[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{40}\b"),
    ("github_token", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b|\bgithub_pat_[A-Za-z0-9_]{22,255}\b"),
    ("gitlab_token", r"\bglpat-[A-Za-z0-9_\-]{20,}\b"),
    ("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"),
    ("slack_webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}"),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ("stripe_key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}\b"),
    ("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    ("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("pypi_token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ("url_credentials", r"(?<=://)[^/\s:@\"']{1,128}:[^/\s@\"']{1,256}(?=@)"),
    # A Solana CLI keypair file: a JSON array of exactly 64 byte values.
    ("solana_keypair", r"\[\s*(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\s*,\s*){63}(?:25[0-5]|2[0-4]\d|1?\d?\d)\s*\]"),
    # `.env`-style lines and assignments whose name says it holds a secret.
    (
        "secret_assignment",
        r"(?i)(?<![A-Za-z0-9])(?:[A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY|CREDENTIALS?)[A-Z0-9_]*)"
        r"[\"']?\s*[:=]\s*(?!\[REDACTED)[\"']?"
        # A value, not code: no call or expression characters, and either a digit or 16+ chars.
        r"(?:(?=[^\s\"',;(){}\[\]<>&]*\d)[^\s\"',;(){}\[\]<>&]{6,}|[^\s\"',;(){}\[\]<>&]{16,})(?=[\s\"',;]|$)",
    ),
]


@dataclass
class Redactor:
    """Applies the built-in patterns plus `extra` ones (name -> regex) to strings."""

    extra: dict[str, str] = field(default_factory=dict)
    counts: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        patterns = _BUILTIN_PATTERNS + list(self.extra.items())
        self._patterns = [(kind, re.compile(regex)) for kind, regex in patterns]
        # One cheap pre-check rejects most strings (no digit-letter token, no `=`/`:`) quickly.
        self._quick = re.compile(r"[=:\[\-_]|AKIA|ASIA|eyJ|sk-|xox|gh[pousr]_|glpat|AIza|npm_|pypi-")

    def text(self, value: str) -> str:
        if not self._quick.search(value):
            return value
        for kind, pattern in self._patterns:
            value, found = pattern.subn(f"[REDACTED:{kind}]", value)
            if found:
                self.counts[kind] += found
        return value

    def value(self, value):
        """Redacts every string (and dict key) inside a JSON-like value."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {self.text(k): self.value(v) for k, v in value.items()}
        return value

    def summary(self) -> dict:
        return {"enabled": True, "counts": dict(sorted(self.counts.items())), "total": sum(self.counts.values())}
