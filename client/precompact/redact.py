"""Secret redaction, applied to every string before anything is written.

Each match becomes `[REDACTED:<kind>]` and is counted per kind. The patterns are our own rather
than a detector library's: they must run over transcripts of hundreds of MB inside the hook's
time budget, and substitute in place with a named kind (detect-secrets and friends scan and
report, line by line, far slower).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Container
from dataclasses import dataclass, field

from ahocorasick_rs import MATCHKIND_LEFTMOST_FIRST, MATCHKIND_LEFTMOST_LONGEST, AhoCorasick, BytesAhoCorasick


@dataclass(frozen=True)
class _Gate:
    """True of any text the pattern matches: one of `literals` occurs, or one of `words` in the
    lower-cased text, or (keypairs) enough commas. A substring test is far cheaper than a regex
    scan, and most text passes no gate.

    `at`: every match begins this many characters after an occurrence of a literal or word, so
    the pattern is tried only there (`regex.match`); None: anywhere (`regex.search`). Python's
    regex engine cannot skip ahead to a pattern that starts with `\\b` or a lookbehind: it tries
    every position, 10 to 50 MB/s, which on real code (where words such as "token" and literals
    such as "://" open gates on most lines) was most of the hook's time."""

    literals: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    min_commas: int = 0
    at: int | None = 0

    def open(self, text: str, lowered: str) -> bool:
        if self.min_commas:
            return "[" in text and text.count(",") >= self.min_commas
        return any(literal in text for literal in self.literals) or any(word in lowered for word in self.words)


_ALWAYS = _Gate(literals=("",), at=None)
_USAGE_KEY_TAIL = b'_tokens":'


# Order matters: specific token formats first, generic assignments last, so a GitHub token in
# `token=ghp_...` is counted as github.
_SECRET_WORDS = ("password", "passwd", "secret", "token", "apikey", "api_key", "privatekey", "private_key", "accesskey", "access_key", "credential")
_BUILTIN_PATTERNS: list[tuple[str, str, _Gate]] = [
    ("private_key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----", _Gate(literals=("-----BEGIN ",))),
    ("aws_access_key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b", _Gate(literals=("AKIA", "ASIA", "ABIA", "ACCA"))),
    ("aws_secret_key", r"(?i)\baws_?secret_?access_?key\b[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{40}\b", _Gate(words=("aws",))),
    ("github_token", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b|\bgithub_pat_[A-Za-z0-9_]{22,255}\b", _Gate(literals=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"))),
    ("gitlab_token", r"\bglpat-[A-Za-z0-9_\-]{20,}\b", _Gate(literals=("glpat-",))),
    ("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b", _Gate(literals=("xox",))),
    ("slack_webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}", _Gate(literals=("https://hooks.slack.com/services/",))),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", _Gate(literals=("sk-ant-",))),
    ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", _Gate(literals=("sk-",))),
    ("stripe_key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}\b", _Gate(literals=("sk_live_", "sk_test_", "rk_live_", "rk_test_"))),
    ("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}\b", _Gate(literals=("AIza",))),
    ("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b", _Gate(literals=("npm_",))),
    ("pypi_token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}", _Gate(literals=("pypi-",))),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", _Gate(literals=("eyJ",))),
    ("twilio_key", r"\bSK[0-9a-f]{32}\b", _Gate(literals=("SK",))),
    ("sendgrid_key", r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b", _Gate(literals=("SG.",))),
    ("huggingface_token", r"\bhf_[A-Za-z0-9]{34,}\b", _Gate(literals=("hf_",))),
    ("shopify_token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", _Gate(literals=("shp",))),
    ("digitalocean_token", r"\bdo[por]_v1_[a-f0-9]{64}\b", _Gate(literals=("dop_v1_", "doo_v1_", "dor_v1_"))),
    ("telegram_bot_token", r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}\b", _Gate(literals=(":AA",), at=None)),
    ("azure_storage_key", r"(?i)\bAccountKey=[A-Za-z0-9+/]{40,}={0,2}", _Gate(words=("accountkey=",))),
    ("vault_token", r"\bhv[sb]\.[A-Za-z0-9_\-]{24,}", _Gate(literals=("hvs.", "hvb."))),
    ("age_secret_key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b", _Gate(literals=("AGE-SECRET-KEY-",))),
    ("square_token", r"\bsq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}", _Gate(literals=("sq0",))),
    ("auth_header", r"(?i)\bauthorization\b[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest)\s+[A-Za-z0-9._~+/\-]{8,}=*", _Gate(words=("authorization",))),
    # user:password@ in a URL; the user may be empty (redis://:password@host).
    ("url_credentials", r"(?<=://)[^/\s:@\"']{0,128}:[^/\s@\"']{1,256}(?=@)", _Gate(literals=("://",), at=3)),
    # A Solana CLI keypair file: a JSON array of exactly 64 byte values.
    ("solana_keypair", r"\[\s*(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\s*,\s*){63}(?:25[0-5]|2[0-4]\d|1?\d?\d)\s*\]", _Gate(min_commas=63, at=None)),
    # `.env`-style lines and assignments whose name says it holds a secret. The match starts at
    # the keyword, not at the name's start, so that it can be tried where the keyword occurs:
    # DATABASE_PASSWORD=... becomes DATABASE_[REDACTED:secret_assignment].
    (
        "secret_assignment",
        r"(?i)(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY|CREDENTIALS?)[A-Z0-9_]*"
        # Names that describe a secret rather than hold one: TOKEN_TYPE, PASSWORD_FILE, ...
        r"(?<!_type)(?<!_kind)(?<!_name)(?<!_file)(?<!_path)(?<!_url)"
        r"[\"']?\s*[:=]\s*(?!\[REDACTED)[\"']?"
        # Not code: a dotted name (token.ERRORTOKEN, self.passwd.add_password) is a reference.
        r"(?![A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?=[\s\"',;]|$))"
        # A value, not code: no call or expression characters, and either a digit or 16+ chars.
        r"(?:(?=[^\s\"',;(){}\[\]<>&]*\d)[^\s\"',;(){}\[\]<>&]{6,}|[^\s\"',;(){}\[\]<>&]{16,})(?=[\s\"',;]|$)",
        _Gate(words=_SECRET_WORDS),
    ),
]


@dataclass(frozen=True)
class _Pattern:
    kind: str
    source: str
    gate: _Gate

    @functools.cached_property
    def regex(self) -> re.Pattern:
        # Compiled when a gate first opens: most hooks need few of the patterns, and compiling
        # them all is a few milliseconds of every hook's start-up.
        return re.compile(self.source)


@dataclass
class Redactor:
    """Applies the built-in patterns plus `extra` ones (name -> regex) to strings."""

    extra: dict[str, str] = field(default_factory=dict)
    counts: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._patterns = [_Pattern(kind, regex, gate) for kind, regex, gate in _BUILTIN_PATTERNS]
        self._patterns += [_Pattern(kind, regex, _ALWAYS) for kind, regex in self.extra.items()]
        self._always = any(p.gate is _ALWAYS for p in self._patterns)
        literals = sorted({lit for p in self._patterns for lit in p.gate.literals if lit})
        words = sorted({word for p in self._patterns for word in p.gate.words})
        # For a value's text: where each literal and word occurs (every occurrence, overlapping
        # ones too), so each pattern is tried only there.
        self._literals = AhoCorasick(literals)
        self._words = AhoCorasick(words)
        self._tried_at = [[i for i, p in enumerate(self._patterns) if text in p.gate.literals] for text in literals]
        self._tried_at_word = [[i for i, p in enumerate(self._patterns) if text in p.gate.words] for text in words]
        # For transcript blocks: every gate's literals (and the escapes that could hide one) in
        # one Aho-Corasick automaton, every word in another over the lower-cased block, so a
        # block costs two passes however many patterns there are. Only whether a line has a hit
        # matters, not every overlapping hit: leftmost matching lets the automaton skip ahead
        # with its prefilter (about 4x faster than reporting every match).
        self._line_literals = BytesAhoCorasick(sorted({lit.encode() for lit in literals} | {b"\\u", b"\\/"}), matchkind=MATCHKIND_LEFTMOST_FIRST)
        # Every assistant line has usage keys such as "input_tokens": a JSON key is never part
        # of a string (its quotes would be escaped), so those are not the word "token": matched
        # leftmost-longest, a usage key swallows the "token" inside it.
        self._line_words = BytesAhoCorasick([*(word.encode() for word in words), _USAGE_KEY_TAIL], matchkind=MATCHKIND_LEFTMOST_LONGEST)
        self._usage_key = len(words)
        self._min_commas = min((p.gate.min_commas for p in self._patterns if p.gate.min_commas), default=0)

    def suspect_lines(self, block: bytes, lines: list[bytes]) -> Container[int]:
        """The positions in `lines` (`block` split at its newlines: transcript lines, JSON as
        UTF-8) of the lines that might hold a string some pattern matches; every other line
        surely holds none. The automatons run over the whole block, not line by line: per-call
        overhead, not the scan, dominated when they ran per line. JSON escapes only quotes,
        backslashes and control characters, which no gate literal contains; `\\u` and `\\/`
        escapes could hide one, so they count as hits."""
        if self._always:
            return range(len(lines))
        # No literal or word contains a newline, so every hit lies inside one line.
        hits = [start for _, start, _ in self._line_literals.find_matches_as_indexes(block)]
        hits += [start for index, start, _ in self._line_words.find_matches_as_indexes(block.lower()) if index != self._usage_key]
        suspects = set()
        line, counted_to = 0, 0
        for start in sorted(hits):
            line += block.count(b"\n", counted_to, start)
            counted_to = start
            suspects.add(line)
        if self._min_commas:
            suspects.update(n for n, text in enumerate(lines) if text.count(b",") >= self._min_commas and b"[" in text)
        return suspects

    def value(self, value):
        """Redacts every string (and dict key) inside a JSON-like value. Patterns that match
        nowhere in it (one look over all its strings at once) are not tried string by string."""
        strings: list[str] = []
        _collect(value, strings)
        # Joined by newlines, every match inside one string is still a match: a superset.
        active = self._matching("\n".join(strings))
        return self._walk(value, active) if active else value

    def _matching(self, text: str) -> list[_Pattern]:
        """The patterns that match somewhere in `text`."""
        lowered = text.lower()
        starts: list[list[int]] = [[] for _ in self._patterns]
        for literal, start, _ in self._literals.find_matches_as_indexes(text, overlapping=True):
            for i in self._tried_at[literal]:
                starts[i].append(start)
        # Lower-casing keeps every position unless the text holds a character that lower-cases
        # to two ("İ"); then word-gated patterns are searched for everywhere.
        aligned = len(lowered) == len(text)
        if aligned:
            for word, start, _ in self._words.find_matches_as_indexes(lowered, overlapping=True):
                for i in self._tried_at_word[word]:
                    starts[i].append(start)
        matching = []
        for pattern, candidates in zip(self._patterns, starts):
            at = pattern.gate.at
            if at is None or (pattern.gate.words and not aligned):
                found = pattern.gate.open(text, lowered) and pattern.regex.search(text)
            else:
                found = any(pattern.regex.match(text, start + at) for start in candidates)
            if found:
                matching.append(pattern)
        return matching

    def _walk(self, value, patterns: list[_Pattern]):
        if isinstance(value, str):
            return self._text(value, patterns)
        if isinstance(value, list):
            return [self._walk(v, patterns) for v in value]
        if isinstance(value, dict):
            return {self._text(k, patterns): self._walk(v, patterns) for k, v in value.items()}
        return value

    def _text(self, value: str, patterns: list[_Pattern]) -> str:
        lowered = value.lower()
        for pattern in patterns:
            if pattern.gate.open(value, lowered):
                value, found = pattern.regex.subn(f"[REDACTED:{pattern.kind}]", value)
                if found:
                    self.counts[pattern.kind] += found
                    lowered = value.lower()
        return value

    def summary(self) -> dict:
        return {"enabled": True, "counts": dict(sorted(self.counts.items())), "total": sum(self.counts.values())}


def _collect(value, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for v in value:
            _collect(v, out)
    elif isinstance(value, dict):
        for k, v in value.items():
            out.append(k)
            _collect(v, out)
