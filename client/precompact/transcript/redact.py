"""Secret redaction, applied to every string before anything is written.

Each match becomes `[REDACTED:<kind>]` and is counted per kind. The patterns are our own rather
than a detector library's: they must run over transcripts of hundreds of MB inside the hook's
time budget, and substitute in place with a named kind (detect-secrets and friends scan and
report, line by line, far slower).
"""

from __future__ import annotations

import base64
import bisect
import functools
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass, field

from ahocorasick_rs import MATCHKIND_LEFTMOST_FIRST, MATCHKIND_LEFTMOST_LONGEST, BytesAhoCorasick

from precompact.transcript import claude_code as transcript


@dataclass(frozen=True)
class _Gate:
    """True of any text the pattern matches: one of `literals` occurs, or one of `words` in the
    lower-cased text, or (keypairs) enough commas. A substring test is far cheaper than a regex
    scan, and most text passes no gate.

    `at`: every match begins this many characters after an occurrence of a literal or word
    (before it, if negative: an Azure secret's `Q~` comes 4 characters in), so the pattern is
    tried only there (`regex.match`); None: anywhere (`regex.search`). `base58_run`: a run of
    that many base58 characters (found by a byte translation and a substring search, not a
    regex: a wallet's secret key has no literal to look for). Python's
    regex engine cannot skip ahead to a pattern that starts with `\\b` or a lookbehind: it tries
    every position, 10 to 50 MB/s, which on real code (where words such as "token" and literals
    such as "://" open gates on most lines) was most of the hook's time."""

    literals: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    min_commas: int = 0
    base58_run: int = 0
    at: int | None = 0

    def open(self, text: str, lowered: str) -> bool:
        if self.min_commas:
            return "[" in text and text.count(",") >= self.min_commas
        if self.base58_run:
            return base58_runs(text.encode("utf-8", "surrogatepass"), self.base58_run, first_only=True) != []
        return any(literal in text for literal in self.literals) or any(word in lowered for word in self.words)


# Every base58 character as `a`, every other byte as a space: a run of base58 is a run of `a`.
_BASE58_RUN_TABLE = bytes(
    0x61 if chr(b) in "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz" else 0x20 for b in range(256)
)


def base58_runs(data: bytes, length: int, first_only: bool = False) -> list[int]:
    """Where runs of at least `length` base58 characters start in `data` (each run once)."""
    translated, needle, found, at = data.translate(_BASE58_RUN_TABLE), b"a" * length, [], 0
    while (at := translated.find(needle, at)) != -1:
        found.append(at)
        if first_only:
            break
        at = translated.find(b" ", at)
        if at == -1:
            break
    return found


_ALWAYS = _Gate(literals=("",), at=None)
_USAGE_KEY_TAIL = b'_tokens":'
_LITERALS_PER_AUTOMATON = 64
# How many of a pattern's gate occurrences `_matching` tries before it applies the pattern.
_TRIES_PER_PATTERN = 64
# A string longer than this is not parsed as a JSON document (its text patterns still apply).
_DOCUMENT_LIMIT = 4 << 20

# A line of a file as the Read tool shows it starts with its number and an arrow: multi-line
# formats must match across those too, and across a line break escaped in a JSON string.
_NEXT_LINE = r"(?:\r?\n|\\r?\\n)(?:[ \t]*\d{1,6}\u2192)?"
_GAP = rf"(?:[ \t]*{_NEXT_LINE}[ \t]*|[ \t]+)"
_BASE58 = "1-9A-HJ-NP-Za-km-z"
# Characters a password may hold that code identifiers, paths and URLs do not.
_SPECIAL = frozenset("!#$%&()*+<=>?@[]^{|}~")
_CLOSING = {")": "(", "]": "[", "}": "{"}


def _entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _placeholder(value: str) -> bool:
    """A reference, a template or a stand-in, not a value: $VAR, ${VAR}, $(cmd), {{ template }},
    '{0}:{1}', '%(user)s', <your-key>, ******, xxxxxxxx."""
    if value.startswith(("$", "%", "{{")) or "${" in value or re.fullmatch(r"<[^<>]*>|(.)\1+", value):
        return True
    fields = r"\{[\w.]*\}|%(?:\(\w+\))?[sdr]"
    return re.search(r"\{[A-Za-z_][\w.]+\}|%\(\w+\)[sdr]", value) is not None or not re.sub(fields, "", value).strip(
        ":/@._-"
    )


def _random_enough(value: str) -> bool:
    """Six characters with a digit or a password-only character, or sixteen of anything: what
    separates a value from a word (`token: bearer`, `password: required`)."""
    return len(value) >= 16 or (len(value) >= 6 and any(c.isdigit() or c in _SPECIAL for c in value))


# Regular expressions as strings: the re module compiles (and caches) them when first used, not
# in every hook's start-up.
_CODE_VALUE = (
    # A call, subscript, generic type, path or arrow: getpass(), os.environ["X"], Option<String>, String::new, a->b.
    r"[A-Za-z_][\w.]*(?:[(\[<]|::|->)"
    # A reference, dereference or negation (&tokens[0], *p, !x), a tuple, list or block.
    r"|[&*!(\[{]"
    # A dotted name: token.ERRORTOKEN, self.passwd.
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$"
)
_STATEMENT_END = r"[)\]},;:.]*[ \t]*(?:$|\n|#|//|\\n)"


def _trim_closers(value: str) -> str:
    """`value` without the punctuation and the closing brackets at its end that it never opened:
    in `connect(password=hunter22):` the `):` ends the call."""
    while value and (
        value[-1] in ".,;:" or (value[-1] in _CLOSING and value.count(value[-1]) > value.count(_CLOSING[value[-1]]))
    ):
        value = value[:-1]
    return value


def _value(m: re.Match) -> tuple[str, str, bool]:
    """An assignment's value group, the value (without an escaping backslash before its closing
    quote, or a bare value's trailing punctuation and unopened brackets), and whether it was
    quoted."""
    for group in ("dq", "sq", "bq"):
        if m.group(group) is not None:
            return group, m.group(group).rstrip("\\"), True
    return "bare", _trim_closers(m.group("bare")), False


# What the name of a URL query's or a form's field follows: `?`, `&`, or the quote of a shell
# word (`-d 'password=…'`); code never begins a name so.
_FORM_FIELD = re.compile(r"[?&'\"][\w.-]{0,64}$")


def _assigned(m: re.Match) -> int | None:
    """For a `name = value` match: where the secret value ends, or None if the value is code, a
    reference or a word. A quoted value runs to its closing quote (which stays), a bare one to
    the next space, whatever characters either holds. `NAME=value` with an upper-case name is a
    shell or .env line, whose value is never code."""
    text = m.string
    shell = (
        m.group("name").isupper()
        and text.startswith("=", m.end("name"))
        and m.group("sep") == "="
        and m.start("sep") + 1 < len(text)
        and not text[m.end("sep")].isspace()
    )
    group, value, quoted = _value(m)
    # A field of a URL's query or of a form's body (`?password=…&`, `-d 'password=…'`): its value
    # ends at the next `&`, and its `%21` is an escape, not code's operator.
    form = not quoted and _FORM_FIELD.search(text, max(0, m.start() - 65), m.start()) is not None
    if form:
        value = value.split("&", 1)[0]
    end = m.start(group) + len(value)
    if not value or _placeholder(value):
        return None
    holds = _HOLDS_A_SECRET.fullmatch(m.group("name")) is not None
    # A name that ends in the secret's word holds one whatever its value's shape: in a shell or
    # .env line any value of six characters or more (MYSQL_ROOT_PASSWORD=rootpassxyz), and a
    # quoted passphrase of words (password = "correct horse battery staple"; as a JSON key's
    # value, `"password": ...`, it is SECRET_FIELD's).
    key = text[m.end("name") : m.end("name") + 1] in ('"', "'", "\\")
    if holds and ((shell and len(value) >= 6) or (quoted and not key and _passphrase(value))):
        return end
    if not _random_enough(value):
        return None
    if shell:
        return end
    if quoted:
        return None if any(c.isspace() for c in value) else end
    # In code, a bare value is an expression unless it is a literal; one holding operators is a
    # literal only if nothing but a comment or the end of its statement follows it.
    if re.match(_CODE_VALUE, value) or (
        not form and any(c in _SPECIAL for c in value) and not re.compile(_STATEMENT_END).match(text, end)
    ):
        return None
    return end


# An assignment's name, from its keyword on, that ends in that keyword: PASSWORD in
# MYSQL_ROOT_PASSWORD, not PASSWORD_MIN_LENGTH.
_HOLDS_A_SECRET = re.compile(
    r"(?i)pass(?:word|wd|phrase)?|pwd|pw|secret|token|api[_-]?key|private[_-]?key|access[_-]?key|credentials?"
)
# Words of a message rather than a passphrase: `password = "must be at least eight characters"`.
_MESSAGE_WORDS = frozenset((
    "the", "and", "for", "your", "you", "not", "must", "with", "are", "was", "this", "that", "please", "enter", "least", "from", "into", "will",
    "can", "has", "have", "should", "here", "then", "when", "what", "which", "only", "more", "than", "does", "set", "see", "use", "new", "old",
))  # fmt: skip


def _passphrase(value: str) -> bool:
    """Three to eight lower-case words of three letters or more, none a message's word nor one
    that names a secret: `correct horse battery staple`."""
    words = value.split(" ")
    return (
        3 <= len(words) <= 8
        and all(len(word) >= 3 and word.isascii() and word.isalpha() and word.islower() for word in words)
        and not any(word in _MESSAGE_WORDS or _HOLDS_A_SECRET.search(word) for word in words)
    )


def _high_entropy(m: re.Match) -> int | None:
    """For a value after an ambiguous name such as SIGNING_KEY or cache_key: only what looks
    random (letters and digits, 3.2+ bits per character over 16+ characters) is a secret; not a
    path (SSH_AUTH_SOCK=/tmp/ssh-…/agent.1234), nor words joined into a name
    (sort_key = "created_at_desc_2024")."""
    group, value, _ = _value(m)
    if (
        len(value) < 16
        or re.match(_CODE_VALUE, value)
        or _placeholder(value)
        or any(c.isspace() for c in value)
        or value.startswith(("/", "~", "."))
    ):
        return None
    if sum(1 for part in re.split(r"[_.-]", value) if len(part) >= 3 and part.isalpha()) >= 2:
        return None
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)) or _entropy(value) < 3.2:
        return None
    return m.start(group) + len(value)


def _base64_credentials(m: re.Match) -> int | None:
    """Docker's `auth`: base64 of user:password."""
    try:
        decoded = base64.b64decode(m.group("secret"), validate=True)
    except ValueError:
        return None
    return m.end("secret") if b":" in decoded else None


def _base64_private_key(m: re.Match) -> int | None:
    """A PEM block, base64-encoded (Kubernetes secrets, kubeconfig): only a private key's."""
    head = m.group(0)[:64]
    return m.end() if b"PRIVATE KEY" in base64.b64decode(head[: len(head) // 4 * 4]) else None


def _mnemonic(m: re.Match) -> int | None:
    """BIP-39 phrases have 12, 15, 18, 21 or 24 words."""
    return m.end("secret") if len(m.group("secret").split()) in (12, 15, 18, 21, 24) else None


def _wallet_secret(m: re.Match) -> int | None:
    """32 bytes in base58 after "keypair" or "seed" are as likely a public key."""
    short = len(m.group("secret")) <= 44 and not m.group("secret").startswith("0x")
    return None if short and m.group("name").lower() in ("keypair", "seed") else m.end("secret")


def _cli_value(m: re.Match) -> int | None:
    """A flag's value: `--password=x` is a password whatever x is; after a space (`--token x`) it
    must look like one, since prose says `use --token instead` (and `mysql -p app` names a
    database, while a model's `["mysql", "-p", "Zq8v…"]` gives the password)."""
    value = m.group("secret").strip("\\\"'")
    if not value or _placeholder(value) or value.startswith("-"):
        return None
    if (m.group("flag_sep") or "").isspace() and not _random_enough(value):
        return None
    return m.end("secret")


_COOKIE_ATTRIBUTES = frozenset(
    {
        "expires",
        "max-age",
        "domain",
        "path",
        "samesite",
        "secure",
        "httponly",
        "priority",
        "partitioned",
        "version",
        "comment",
    }
)


def _cookie(m: re.Match) -> int | None:
    """A Cookie or Set-Cookie header with a cookie that looks like a session id (not counting
    Set-Cookie's attributes: Expires=Thu, 21 Oct 2021 07:28:00 GMT is no secret)."""
    pairs = [part.strip().partition("=") for part in m.group("secret").split(";")]
    values = [value.strip() for name, _, value in pairs if value and name.lower() not in _COOKIE_ATTRIBUTES]
    return (
        m.end("secret") if any(len(v) >= 16 or (len(v) >= 8 and any(c.isdigit() for c in v)) for v in values) else None
    )


def _through(end: str) -> Callable[[re.Match], int | None]:
    """For a block's header: where the block ends, at the end of the first `end` after the
    header, or at the end of the text when it was cut off before one (a Read with a limit,
    `head`). One search per header; `_Pattern.redact` skips headers inside a block already
    redacted, so the text is scanned once however many headers it holds."""
    closing = re.compile(end)

    def check(m: re.Match) -> int:
        found = closing.search(m.string, m.end())
        return found.end() if found else len(m.string)

    return check


_URL_PASSWORD_WINDOW = 256
_URL_PASSWORD_STOP = re.compile(r"[\s\"'<>]")
_PORT_AND_PATH = re.compile(r"\d{1,5}(?:[/?#]|$)")


def _url_password(m: re.Match) -> int | None:
    """For `scheme://user:` in a URL: where the password ends, at the last `@` before a space
    or a quote (within 256 characters), so a password holding `/`, `@`, `:` or %-escapes goes
    whole. `host:8080/path/@name` is a port and a path, not a password."""
    text, start = m.string, m.end()
    if text.find("@", start, start + _URL_PASSWORD_WINDOW) == -1:
        return None
    window = text[start : start + _URL_PASSWORD_WINDOW]
    stop = _URL_PASSWORD_STOP.search(window)
    window = window[: stop.start()] if stop else window
    at = window.rfind("@")
    if at < 1 or _PORT_AND_PATH.match(window, 0, at):
        return None
    return start + at


def _json_value(m: re.Match) -> int | None:
    """A secret key's value in JSON text: any string but a placeholder, or a number."""
    value = m.group("secret")
    return None if _placeholder(value) else m.end("secret")


_MIN_DECODED_SECRET = 12


def _decoded_secret(m: re.Match) -> int | None:
    """Base64 a command decodes (`echo … | base64 -d`, `b64decode("…")`): a secret when what
    it decodes to is key material (bytes that are no text) or one random-looking word, not
    prose, a path or a placeholder."""
    encoded = m.group("secret")
    try:
        decoded = base64.b64decode(
            encoded + "=" * (-len(encoded) % 4),
            altchars=b"-_" if "-" in encoded or "_" in encoded else None,
            validate=True,
        )
    except ValueError:
        return None
    try:
        text = decoded.decode("utf-8").strip()
    except UnicodeDecodeError:
        return m.end("secret") if len(decoded) >= 16 else None
    if len(text) < _MIN_DECODED_SECRET or any(c.isspace() for c in text) or _placeholder(text):
        return None
    if text.startswith(("/", "~", "http://", "https://")) or not _random_enough(text):
        return None
    return m.end("secret")


_SECURE_STRING_WINDOW = 256  # how far after the value -AsPlainText is looked for, on its line


def _secure_string(m: re.Match) -> int | None:
    """PowerShell's `ConvertTo-SecureString <value> -AsPlainText`: the value is a password in
    clear, unless it is a variable or a command's output."""
    line = m.string[m.start() : m.end() + _SECURE_STRING_WINDOW].split("\n", 1)[0]
    value = m.group("secret").strip("\\\"'")
    if "-asplaintext" not in line.lower() or not value or value.startswith(("$", "(")) or _placeholder(value):
        return None
    return m.end("secret")


# A 0x-hex 32-byte value is a private key only in a name that says so: not a hash, an address, a
# public key, a storage slot or topic.
_HEX_KEY_NAME = re.compile(
    r"(?i)(?:\b(?P<name>[A-Za-z_$][\w$]{0,63})\\?[\"']?[ \t]*(?::=|=>|[:=])|(?P<call>Wallet|privateKeyToAccount|fromPrivateKey|SigningKey|PrivateKey)[ \t]*\()[ \t]*\\?[\"'`]?$"
)
_KEY_NAME_ENDINGS = ("key", "pk", "priv", "privkey", "secret", "signer", "deployer", "wallet")
_NOT_KEY_NAMES = ("pub", "hash", "addr", "slot", "topic", "salt", "nonce", "storage")


def _hex_private_key(m: re.Match) -> int | None:
    before = _HEX_KEY_NAME.search(m.string, max(0, m.start() - 96), m.start())
    if before is None:
        return None
    if before.group("call"):
        return m.end()
    name = before.group("name").lower().replace("_", "").replace("-", "")
    return m.end() if name.endswith(_KEY_NAME_ENDINGS) and not any(word in name for word in _NOT_KEY_NAMES) else None


_BASE58_DIGITS = {c: i for i, c in enumerate("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz")}
_KEYPAIR_BYTES = 64


def _solana_secret_key(m: re.Match) -> int | None:
    """64 bytes in base58 are a Solana keypair's secret key when the last 32 are the public key
    of the first 32: never true of a transaction signature, whose shape it shares."""
    number = 0
    for c in m.group():
        number = number * 58 + _BASE58_DIGITS[c]
    if number.bit_length() > 8 * _KEYPAIR_BYTES:
        return None
    raw = number.to_bytes(_KEYPAIR_BYTES, "big")
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    public = Ed25519PrivateKey.from_private_bytes(raw[:32]).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return m.end() if public == raw[32:] else None


def _htpasswd(without_file: bool) -> Callable[[re.Match], int | None]:
    """`htpasswd -b [file] user password`: the password is given in clear in batch mode (`b`);
    with `n` there is no file argument."""

    def check(m: re.Match) -> int | None:
        letters = "".join(flag.lstrip("-") for flag in m.group("flags").split() if flag.startswith("-"))
        if "b" not in letters or ("n" in letters) != without_file:
            return None
        return _cli_value(m)

    return check


def _jwt_payload(m: re.Match) -> int | None:
    """A JWT whose payload is not `{"` in base64 (`eyJ`): `{ "sub"`, a pretty-printed payload.
    Its header must name an `alg` and its payload decode to a JSON object's text."""

    def decoded(part: str) -> bytes:
        try:
            return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
        except ValueError:
            return b""

    header, payload = decoded(m.group("header")), decoded(m.group("payload"))
    return m.end() if b'"alg"' in header and payload.lstrip().startswith(b"{") else None


def _assignment(names: str) -> str:
    """`name = value` (or `:`, `:=`, `=>`) where `names` match from the keyword on: the match
    starts at the keyword so that it can be tried where the keyword occurs, and
    DATABASE_PASSWORD=... becomes DATABASE_[REDACTED:secret_assignment]."""
    return (
        # The rest of the name possessive and bounded: a long run of name characters is tried
        # once from each start, not again at every shorter length (that was quadratic).
        rf"(?i)(?P<name>(?:{names})[A-Z0-9_]{{0,64}}+)"
        # Names that describe a secret rather than hold one: TOKEN_TYPE, PASSWORD_FILE, ...
        r"(?<!_type)(?<!_kind)(?<!_name)(?<!_file)(?<!_path)(?<!_url)(?<!_env)(?<!_prompt)(?<!_field)(?<!_pattern)(?<!_re)(?<!_regex)(?<!_format)(?<!_fmt)"
        r"\\?[\"']?[^\S\n]*(?P<sep>:=|=>|[:=](?![=>]))[^\S\n]*(?!\\?[\"'`]?\[REDACTED)"
        # A quote may be escaped: the text may be JSON inside a JSON string.
        r"(?:\\?\"(?P<dq>[^\"\n]{1,512})\"|\\?'(?P<sq>[^'\n]{1,512})'|`(?P<bq>[^`\n]{1,512})`|(?P<bare>[^\s\"'`\\]{0,511}[^\s\"'`,;\\]))"
    )


def _prefixed(*prefixes: str) -> _Gate:
    return _Gate(literals=prefixes)


# Order matters: specific token formats first, generic assignments last, so a GitHub token in
# `token=ghp_...` is counted as github. A pattern with a `secret` group redacts only that group.
# Prefixes and shapes of vendor tokens follow gitleaks' rule set (config/gitleaks.toml) and the
# vendors' documentation.
_SECRET_WORDS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "privatekey",
    "private_key",
    "private-key",
    "accesskey",
    "access_key",
    "access-key",
    "credential",
)
# A JSON object key names a secret when its lower-cased name holds one of these words and,
# without `_` and `-`, ends with one of the endings: `client_secret`, `apiKey`,
# `aws_secret_access_key`, `Authorization`, `x-auth-token` (not `max_tokens`, `token_type`).
# The words are gate words too, so a transcript line holding such a key is always redacted.
_SECRET_KEY_WORDS = (*_SECRET_WORDS, "authorization", "cookie")
_SECRET_KEY_ENDINGS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "secretkey",
    "token",
    "apikey",
    "privatekey",
    "accesskey",
    "credential",
    "credentials",
    "authorization",
    "cookie",
)
# The endings as they are written in text, for keys in JSON that does not parse as a whole.
_SECRET_KEY_ENDINGS_TEXT = (
    "password",
    "passwd",
    "passphrase",
    r"secret(?:[_-]?key)?",
    "token",
    r"api[_-]?key",
    r"private[_-]?key",
    r"access[_-]?key",
    "credentials?",
    "authorization",
    "cookie",
)
SECRET_FIELD = "secret_field"


def is_secret_key(name: str) -> bool:
    """Whether a JSON object key names a secret, so that its value is one whatever its shape."""
    lowered = name.lower()
    return lowered.replace("_", "").replace("-", "").endswith(_SECRET_KEY_ENDINGS) and any(
        word in lowered for word in _SECRET_KEY_WORDS
    )


_BUILTIN_PATTERNS: list[tuple] = [
    (
        "kubeconfig_key",
        r"client-key-data[\"']?[ \t]*:[ \t]*[\"']?(?P<secret>[A-Za-z0-9+/]{16,}={0,2})",
        _prefixed("client-key-data"),
    ),
    # A private key runs from its header to its END line or, cut short (a Read with a limit,
    # `head`), to the end of the text. The end is looked for once per key (`_through`), never
    # by a lazy `[\s\S]*?` that rescans the rest of the text from every header.
    (
        "private_key",
        r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----",
        _prefixed("-----BEGIN "),
        _through(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"),
    ),
    (
        "private_key",
        r"---- BEGIN SSH2 (?:ENCRYPTED )?PRIVATE KEY ----",
        _prefixed("---- BEGIN SSH2 "),
        _through(r"---- END SSH2 (?:ENCRYPTED )?PRIVATE KEY ----"),
    ),
    # A PuTTY key file, from its header to its MAC.
    (
        "private_key",
        r"PuTTY-User-Key-File-\d{1,3}:",
        _prefixed("PuTTY-User-Key-File-"),
        _through(r"Private-(?:MAC|Hash):[ \t]*[0-9a-fA-F]+"),
    ),
    ("private_key", r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{40,}={0,2}", _prefixed("LS0tLS1CRUdJTi"), _base64_private_key),
    ("aws_access_key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b", _prefixed("AKIA", "ASIA", "ABIA", "ACCA")),
    (
        "aws_secret_key",
        r"(?i)\baws_?secret_?access_?key\b[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{40}\b",
        _Gate(words=("aws",)),
    ),
    ("aws_bedrock_key", r"\bABSK[A-Za-z0-9+/]{100,}={0,2}", _prefixed("ABSK")),
    (
        "github_token",
        r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b|\bgithub_pat_[A-Za-z0-9_]{22,255}\b",
        _prefixed("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    (
        "gitlab_token",
        r"\b(?:glpat|glptt|glrt|gldt|glsoat|glcbt|glffct|glft|glimt|glagent|gloas)-[\w-]{20,}|\bGR1348941[\w-]{20,}",
        _prefixed(
            "glpat-",
            "glptt-",
            "glrt-",
            "gldt-",
            "glsoat-",
            "glcbt-",
            "glffct-",
            "glft-",
            "glimt-",
            "glagent-",
            "gloas-",
            "GR1348941",
        ),
    ),
    ("slack_token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}\b", _prefixed("xox")),
    ("slack_app_token", r"\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+\b", _prefixed("xapp-")),
    (
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}",
        _prefixed("https://hooks.slack.com/"),
    ),
    (
        "discord_webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{60,}",
        _Gate(literals=("/api/webhooks/",), at=None),
    ),
    (
        "teams_webhook",
        r"https://[\w-]+\.webhook\.office\.com/webhookb2/[^\s\"'<>]{40,}",
        _Gate(literals=(".webhook.office.com/webhookb2/",), at=None),
    ),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", _prefixed("sk-ant-")),
    ("mapbox_secret_token", r"\bsk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}", _prefixed("sk.eyJ")),
    ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", _prefixed("sk-")),
    (
        "stripe_key",
        r"\b(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{20,}\b",
        _prefixed("sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"),
    ),
    ("webhook_secret", r"\bwhsec_[A-Za-z0-9+/=]{24,}", _prefixed("whsec_")),
    ("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}\b", _prefixed("AIza")),
    (
        "google_oauth_token",
        r"\bya29\.[\w-]{30,}|\bGOCSPX-[\w-]{28}|\b1//0[\w-]{40,}",
        _prefixed("ya29.", "GOCSPX-", "1//0"),
    ),
    ("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b", _prefixed("npm_")),
    ("pypi_token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}", _prefixed("pypi-")),
    (
        "grafana_token",
        r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|\bglc_[A-Za-z0-9+/]{32,400}={0,3}|\beyJrIjoi[A-Za-z0-9]{70,400}={0,3}",
        _prefixed("glsa_", "glc_", "eyJrIjoi"),
    ),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", _prefixed("eyJ")),
    (
        "jwt",
        r"\b(?P<header>eyJ[A-Za-z0-9_\-]{8,1024}+)\.(?P<payload>(?!eyJ)[A-Za-z0-9_\-]{8,}+)\.[A-Za-z0-9_\-]{8,}",
        _prefixed("eyJ"),
        _jwt_payload,
    ),
    # The literal first and the lookbehind after it: a pattern that opens with a lookbehind is
    # tried at every position (4 MB/s on real code, where "token" opens the gate on most texts);
    # one that opens with a literal is searched for it (20 times faster). Same matches.
    (
        "vault_token",
        r"s\.(?<![\w.$@/-]s\.)(?=[a-z0-9]{0,23}[A-Z])(?=[A-Za-z]{0,23}[0-9])[A-Za-z0-9]{24}(?![\w.(-])",
        _Gate(words=("vault", "token"), at=None),
    ),
    ("twilio_key", r"\bSK[0-9a-f]{32}\b", _prefixed("SK")),
    ("sendgrid_key", r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b", _prefixed("SG.")),
    ("huggingface_token", r"\bhf_[A-Za-z0-9]{34,}\b|\bapi_org_[A-Za-z]{34}\b", _prefixed("hf_", "api_org_")),
    ("shopify_token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", _prefixed("shp")),
    ("digitalocean_token", r"\bdo[por]_v1_[a-f0-9]{64}\b", _prefixed("dop_v1_", "doo_v1_", "dor_v1_")),
    ("telegram_bot_token", r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}\b", _Gate(literals=(":AA",), at=None)),
    (
        "azure_storage_key",
        r"(?i)\b(?:AccountKey|SharedAccessKey)=[A-Za-z0-9+/]{40,}={0,2}",
        _Gate(words=("accountkey=", "sharedaccesskey="), at=None),
    ),
    ("azure_sas_signature", r"(?<=[?&])sig=(?P<secret>[A-Za-z0-9%+/]{40,}(?:%3D|=){0,2})", _prefixed("sig=")),
    ("azure_ad_client_secret", r"(?<![\w~.-])[\w~.]{3}\dQ~[\w~.-]{31,34}(?![\w~.-])", _Gate(literals=("Q~",), at=-4)),
    ("vault_token", r"\bhv[sb]\.[A-Za-z0-9_\-]{24,}", _prefixed("hvs.", "hvb.")),
    ("age_secret_key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b", _prefixed("AGE-SECRET-KEY-")),
    ("square_token", r"\bsq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}", _prefixed("sq0")),
    ("docker_hub_token", r"\bdckr_(?:pat|oat)_[\w-]{20,}", _prefixed("dckr_")),
    ("sentry_token", r"\bsntrys_eyJ[A-Za-z0-9+/=_]{50,}|\bsntryu_[a-f0-9]{64}\b", _prefixed("sntrys_", "sntryu_")),
    ("linear_key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b", _prefixed("lin_api_", "lin_oauth_")),
    ("postman_key", r"\bPMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}\b", _prefixed("PMAK-")),
    ("pulumi_token", r"\bpul-[a-f0-9]{40}\b", _prefixed("pul-")),
    ("tailscale_key", r"\btskey-[A-Za-z0-9-]{20,}", _prefixed("tskey-")),
    ("databricks_token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", _prefixed("dapi")),
    (
        "onepassword_token",
        r"\bops_eyJ[A-Za-z0-9+/]{100,}={0,3}|\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b",
        _prefixed("ops_eyJ", "A3-"),
    ),
    ("artifactory_token", r"\bAKCp[A-Za-z0-9]{69}\b|\bcmVmd[A-Za-z0-9]{59}\b", _prefixed("AKCp", "cmVmd")),
    ("alibaba_access_key", r"\bLTAI[A-Za-z0-9]{20}\b", _prefixed("LTAI")),
    ("atlassian_token", r"\bATATT3[\w=-]{150,}", _prefixed("ATATT3")),
    (
        "doppler_token",
        r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}\b",
        _prefixed("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."),
    ),
    ("dynatrace_token", r"\bdt0c01\.[A-Z0-9]{24}\.[A-Za-z0-9]{64}\b", _prefixed("dt0c01.")),
    (
        "flyio_token",
        r"\bfo1_[\w-]{43}|\bfm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3}",
        _prefixed("fo1_", "fm1a_", "fm1r_", "fm2_"),
    ),
    ("terraform_token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[\w=-]{60,70}", _Gate(literals=(".atlasv1.",), at=-14)),
    ("heroku_key", r"\bHRKU-AA[\w-]{58}", _prefixed("HRKU-AA")),
    (
        "new_relic_key",
        r"\bNRAK-[A-Z0-9]{27}\b|\bNRII-[\w-]{32}\b|\bNRJS-[a-f0-9]{19}\b",
        _prefixed("NRAK-", "NRII-", "NRJS-"),
    ),
    ("notion_token", r"\bntn_\d{11}[A-Za-z0-9]{35}\b", _prefixed("ntn_")),
    ("openshift_token", r"\bsha256~[\w-]{43}", _prefixed("sha256~")),
    ("perplexity_key", r"\bpplx-[A-Za-z0-9]{48}\b", _prefixed("pplx-")),
    ("groq_key", r"\bgsk_[A-Za-z0-9]{52}\b", _prefixed("gsk_")),
    ("xai_key", r"\bxai-[A-Za-z0-9]{70,}", _prefixed("xai-")),
    ("replicate_token", r"\br8_[A-Za-z0-9]{37}\b", _prefixed("r8_")),
    ("planetscale_token", r"\bpscale_(?:tkn|oauth|pw)_[\w=.-]{32,64}", _prefixed("pscale_")),
    ("prefect_key", r"\bpnu_[A-Za-z0-9]{36}\b", _prefixed("pnu_")),
    ("readme_key", r"\brdme_[a-z0-9]{70}\b", _prefixed("rdme_")),
    ("rubygems_key", r"\brubygems_[a-f0-9]{48}\b", _prefixed("rubygems_")),
    ("scalingo_token", r"\btk-us-[\w-]{48}", _prefixed("tk-us-")),
    ("brevo_key", r"\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}\b", _prefixed("xkeysib-")),
    ("shippo_token", r"\bshippo_(?:live|test)_[a-f0-9]{40}\b", _prefixed("shippo_")),
    ("clojars_token", r"\bCLOJARS_[a-z0-9]{60}\b", _prefixed("CLOJARS_")),
    ("typeform_token", r"\btfp_[\w.=-]{59}", _prefixed("tfp_")),
    ("supabase_key", r"\bsbp_[a-f0-9]{40}\b|\bsb_secret_[\w-]{20,}", _prefixed("sbp_", "sb_secret_")),
    ("buildkite_token", r"\bbkua_[a-f0-9]{40}\b", _prefixed("bkua_")),
    ("circleci_token", r"\bCCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}\b", _prefixed("CCIPAT_")),
    ("figma_token", r"\bfigd_[\w-]{40,}", _prefixed("figd_")),
    ("netlify_token", r"\bnfp_[A-Za-z0-9]{36}\b", _prefixed("nfp_")),
    ("render_key", r"\brnd_[A-Za-z0-9]{32}\b", _prefixed("rnd_")),
    ("mailchimp_key", r"\b[a-f0-9]{32}-us\d{1,2}\b", _Gate(literals=("-us",), at=-32)),
    ("bip32_private_key", rf"\b[xt]prv[{_BASE58}]{{100,112}}", _prefixed("xprv", "tprv")),
    # A BIP-39 seed phrase (what `solana-keygen new` prints after "Save this seed phrase"): 12 to
    # 24 lower-case words of 3 to 8 letters, after such a name and a colon or equals sign.
    (
        "seed_phrase",
        (
            r"(?i:seed[ _-]?phrase|recovery[ _-]?phrase|secret[ _-]?phrase|mnemonic(?:[ _-]?phrase)?|seed[ _-]?words)[^\n]{0,120}?[:=]"
            rf"[ \t\\\"'`]*(?:{_NEXT_LINE}[ \t\\\"'`]*)?(?P<secret>[a-z]{{3,8}}(?:[ \t]+[a-z]{{3,8}}){{11,23}})(?![ \t]*[a-z])"
        ),
        _Gate(
            words=(
                "seed phrase",
                "seed_phrase",
                "seed-phrase",
                "seedphrase",
                "recovery phrase",
                "recovery_phrase",
                "secret phrase",
                "secret_phrase",
                "mnemonic",
                "seed words",
            )
        ),
        _mnemonic,
    ),
    # Wallet secrets are shaped like public data (a 64-byte base58 string is also a transaction
    # signature, 64 hex digits a SHA-256): only right after a name that says what they are.
    (
        "wallet_key",
        (
            r"(?P<name>(?i:private[ _-]?key|secret[ _-]?key|secret|priv[ _-]?key|seed|keypair))s?[\"']?[ \t]*(?::=|=>|[:=])[ \t]*[\"'`]?"
            rf"(?P<secret>(?:0x)?[0-9a-fA-F]{{64}}(?![0-9a-fA-F])|[{_BASE58}]{{85,88}}(?![{_BASE58}])|[{_BASE58}]{{43,44}}(?![{_BASE58}])|[5KL][{_BASE58}]{{50,51}}(?![{_BASE58}]))"
        ),
        _Gate(
            words=(
                "private key",
                "private_key",
                "privatekey",
                "private-key",
                "secret",
                "privkey",
                "priv_key",
                "seed",
                "keypair",
            )
        ),
        _wallet_secret,
    ),
    # A 0x-hex private key (Ethereum and the like) in a variable whose name says it is a key, or
    # given to a wallet's constructor: the same shape is every transaction hash.
    (
        "hex_private_key",
        r"0x[0-9a-fA-F]{64}(?![0-9a-fA-F])",
        _prefixed("0x"),
        _hex_private_key,
    ),
    # A Solana secret key alone in base58 (what wallets export): 64 bytes whose second half is
    # the public key of the first, so a transaction signature, of the same shape, is never one.
    (
        "solana_secret_key",
        rf"(?<![{_BASE58}])[{_BASE58}]{{86,88}}+(?![{_BASE58}])",
        _Gate(base58_run=86, at=None),
        _solana_secret_key,
    ),
    # A Solana CLI keypair file: a JSON array of exactly 64 byte values.
    (
        "solana_keypair",
        r"\[\s*(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\s*,\s*){63}(?:25[0-5]|2[0-4]\d|1?\d?\d)\s*\]",
        _Gate(min_commas=63, at=None),
    ),
    (
        "auth_header",
        r"(?i)\bauthorization\b[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest)\s+[A-Za-z0-9._~+/\-]{8,}=*",
        _Gate(words=("authorization",)),
    ),
    # user:password@ in a URL; the user may be empty (redis://:password@host), the password may
    # hold any character but a space or a quote (`/`, `@`, `:`, %-escapes): `_url_password`.
    (
        "url_credentials",
        r"(?<=://)(?P<secret>[^/\s:@\"'<>]{0,128}:)",
        _Gate(literals=("://",), at=3),
        _url_password,
    ),
    (
        "cookie_header",
        r"(?i)(?<![\w])cookie[ \t]*:[ \t]*(?P<secret>[^\r\n\"'\\]{8,})",
        _Gate(words=("cookie",)),
        _cookie,
    ),
    # Docker's config.json: "auths": {"registry": {"auth": "<base64 of user:password>"}}.
    (
        "docker_auth",
        r"\\?\"auth\\?\"\s*:\s*\\?\"(?P<secret>[A-Za-z0-9+/]{4,}={0,2})\\?\"",
        _Gate(words=("auths", "dockercfg"), at=None),
        _base64_credentials,
    ),
    # ~/.netrc: machine <host> login <user> password <password>, on one line or several.
    (
        "netrc_password",
        rf"\bmachine[ \t]+\S+(?:{_GAP}(?:login|account|port)[ \t]+\S+)*{_GAP}password[ \t]+(?P<secret>\\?\"[^\"\n]*\"|[^\s\"\\]+)",
        _Gate(words=("machine",)),
    ),
    # ~/.pgpass: host:port:database:user:password, on PostgreSQL's usual ports or any (*).
    (
        "pgpass_password",
        r"(?<=[\w.*\]-]):(?:5432|5433|6432|\*):[^:\s]+:[^:\s]+:(?P<secret>\S+)",
        _prefixed(":5432:", ":5433:", ":6432:", ":*:"),
    ),
    # Passwords on command lines: mysql -pSECRET, sshpass -p SECRET, redis-cli -a SECRET,
    # curl -u user:SECRET, --password SECRET, --token=SECRET, openssl's pass:SECRET.
    (
        "cli_password",
        (
            r"\b(?:(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mariadb|mariadb-dump)\b[^\n|;]{0,200}?[ \t]-p(?P<flag_sep>[ \t]*)|sshpass\b[^\n|;]{0,200}?[ \t]-p[ \t]*|redis-cli\b[^\n|;]{0,200}?[ \t]-a[ \t]+)"
            r"(?!\[REDACTED)(?P<secret>\\?\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'`]+)"
        ),
        _Gate(words=("mysql", "mariadb", "sshpass", "redis-cli")),
        _cli_value,
    ),
    # docker login -p SECRET (and the other registries' clients).
    (
        "cli_password",
        r"\b(?:docker|podman|nerdctl|buildah|skopeo|helm[ \t]+registry)\b[^\n|;]{0,200}?\blogin\b[^\n|;]{0,200}?[ \t]-p(?:=|[ \t]+)(?P<flag_sep>)(?!\[REDACTED)(?P<secret>\\?\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'`]+)",
        _Gate(words=("docker", "podman", "nerdctl", "buildah", "skopeo", "helm")),
        _cli_value,
    ),
    # htpasswd -b[c] FILE USER PASSWORD, htpasswd -nb USER PASSWORD.
    (
        "cli_password",
        r"\bhtpasswd(?P<flags>(?:[ \t]+-[A-Za-z]+(?:[ \t]+\d+)?)+)[ \t]+(?:\\?\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'`]+)[ \t]+(?:\\?\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'`]+)[ \t]+(?P<flag_sep>)(?!\[REDACTED)(?P<secret>\\?\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'`|;&>]+)",
        _Gate(words=("htpasswd",)),
        _htpasswd(without_file=False),
    ),
    (
        "cli_password",
        r"\bhtpasswd(?P<flags>(?:[ \t]+-[A-Za-z]+(?:[ \t]+\d+)?)+)[ \t]+(?:\\?\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'`]+)[ \t]+(?P<flag_sep>)(?!\[REDACTED)(?P<secret>\\?\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'`|;&>]+)",
        _Gate(words=("htpasswd",)),
        _htpasswd(without_file=True),
    ),
    # PowerShell: ConvertTo-SecureString "SECRET" -AsPlainText -Force (flags in any order).
    (
        "powershell_secure_string",
        r"(?i)ConvertTo-SecureString(?:[ \t]+-(?:AsPlainText|Force))*[ \t]+(?:-String[ \t]+)?(?!-)(?P<secret>\\?\"[^\"\n]{1,512}\"|'[^'\n]{1,512}'|[^\s\"'`|;)]{1,512})",
        _Gate(words=("convertto-securestring",)),
        _secure_string,
    ),
    # A key wrapped in base64 and decoded in the command: `echo … | base64 -d`, `base64 -d <<< …`,
    # b64decode("…"), atob("…"), Buffer.from("…", "base64").
    (
        "base64_decoded_secret",
        r"(?<![A-Za-z0-9+/=_-])(?P<secret>[A-Za-z0-9+/_-]{16,4096}+={0,2})[\"']?[ \t]*\|[ \t]*base64[ \t]+(?:-d|--decode|-D)\b",
        _Gate(words=("base64 -d", "base64 --decode"), at=None),
        _decoded_secret,
    ),
    (
        "base64_decoded_secret",
        r"(?i:base64[ \t]+(?:-d|--decode|-D)[ \t]*<<<[ \t]*|b64decode\([ \t]*b?|atob\([ \t]*|base64_decode\([ \t]*|Buffer\.from\([ \t]*)[\"'`](?P<secret>[A-Za-z0-9+/_-]{16,4096}+={0,2})[\"'`]",
        _Gate(words=("base64 -d", "base64 --decode", "b64decode(", "atob(", "base64_decode(", "buffer.from("), at=0),
        _decoded_secret,
    ),
    (
        "cli_password",
        r"\bcurl\b[^\n]{0,300}?[ \t](?:-u|--user)(?:=|[ \t]+)[\"']?[^\s:\"']*:(?P<flag_sep>)(?!\[REDACTED)(?P<secret>[^\s\"']+)",
        _Gate(words=("curl",)),
        _cli_value,
    ),
    (
        "cli_password",
        r"(?<=-)(?i:pass(?:word|wd|phrase)?|token|secret(?:-access)?(?:-key)?|api-?key|auth)(?P<flag_sep>=|[ \t]+)(?!\[REDACTED)(?P<secret>\\?\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'`]+)",
        _Gate(words=("-pass", "-token", "-secret", "-api-key", "-apikey", "-auth"), at=1),
        _cli_value,
    ),
    ("cli_password", r"(?<![\w-])pass:(?P<flag_sep>=?)(?P<secret>[^\s\"'`]+)", _prefixed("pass:"), _cli_value),
    # `.env`-style lines and assignments whose name says it holds a secret.
    (
        "secret_assignment",
        _assignment(r"PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|API[_-]?KEY|PRIVATE[_-]?KEY|ACCESS[_-]?KEY|CREDENTIALS?"),
        _Gate(words=_SECRET_WORDS),
        _assigned,
    ),
    # DB_PASS=..., SMTP_PWD=..., ADMIN_PW=...: short names after an underscore.
    (
        "secret_assignment",
        _assignment(r"(?<=_)(?:PASS|PWD|PW)(?![A-Za-z])"),
        _Gate(words=("_pass", "_pwd", "_pw"), at=1),
        _assigned,
    ),
    # SIGNING_KEY=..., NPM_AUTH=..., "cache_key": ...: such a name says little (SERVER_AUTH is an
    # OID, SORT_KEY a column), so the value must look random.
    (
        "secret_assignment",
        _assignment(r"(?<=[_-])(?:KEY|AUTH)(?![A-Za-z])"),
        _Gate(words=("_key", "-key", "_auth"), at=1),
        _high_entropy,
    ),
    # `"password": "correct horse battery staple"` in JSON text that does not parse as a whole
    # (a file as the Read tool shows it, a log line): a secret key's string or number value,
    # whatever it holds. A JSON document that parses is walked instead (`Redactor.redact`).
    (
        SECRET_FIELD,
        (
            rf"(?i)(?:{'|'.join(_SECRET_KEY_ENDINGS_TEXT)})\"[ \t]*:[ \t]*\"?(?!\[REDACTED)"
            r"(?P<secret>(?<=\")(?:[^\"\\\n]|\\[^\n]){1,4096}(?=\")|(?<!\")-?\d{1,64}(?:\.\d{1,64})?(?![\w.\"]))"
        ),
        _Gate(words=_SECRET_KEY_WORDS, at=0),
        _json_value,
    ),
    # The same with its quotes escaped (`\"password\": \"…\"`): JSON that a shell command quotes
    # (`echo "{\"password\": …}"`). The value runs to the next `\"`; a quote it holds is `\\\"`.
    (
        SECRET_FIELD,
        (
            rf"(?i)(?:{'|'.join(_SECRET_KEY_ENDINGS_TEXT)})\\\"[ \t]*:[ \t]*(?:\\\")?(?!\[REDACTED)"
            r'(?P<secret>(?<=\\")(?:[^"\\\n]|\\\\\\"|\\\\|\\[^"\\\n]){1,4096}?(?=\\")|(?<!")-?\d{1,64}(?:\.\d{1,64})?(?![\w.\"]))'
        ),
        _Gate(words=_SECRET_KEY_WORDS, at=0),
        _json_value,
    ),
]


@dataclass(frozen=True)
class _Pattern:
    kind: str
    source: str
    gate: _Gate
    # Given a match, where its secret ends, or None if the match is no secret after all.
    check: Callable[[re.Match], int | None] | None = None

    @functools.cached_property
    def regex(self) -> re.Pattern:
        # Compiled when a gate first opens: most hooks need few of the patterns, and compiling
        # them all is a few milliseconds of every hook's start-up.
        return re.compile(self.source)

    def holds_secret(self, m: re.Match | None) -> bool:
        return m is not None and (self.check is None or self.check(m) is not None)

    @property
    def mark(self) -> str:
        return f"[REDACTED:{self.kind}]"

    def redact(self, text: str, lowered: str) -> tuple[str, list[tuple[int, int]]]:
        """`text` (`lowered`: it lower-cased) with every secret this pattern finds replaced, and
        where each was (start, end) in `text`."""
        starts = self._starts(text, lowered)
        pieces, spans, done = [], [], 0
        for m in self.regex.finditer(text) if starts is None else self._matches_at(text, starts):
            if m.start() < done:
                continue  # inside a secret already redacted (a private key's later headers)
            end = self.check(m) if self.check else m.end()
            if end is None:
                continue
            start = m.start("secret") if "secret" in self.regex.groupindex else m.start()
            pieces += [text[done:start], self.mark]
            spans.append((start, end))
            done = end
        if not pieces:
            return text, []
        pieces.append(text[done:])
        return "".join(pieces), spans

    def _starts(self, text: str, lowered: str) -> list[int] | None:
        """Where in `text` a match can begin (`_Gate.at` after an occurrence of a gate's literal or
        word), in order; None: anywhere, the pattern is to be searched for. Python's regex engine
        tries every position of a pattern that starts case-insensitively or with a lookbehind (5
        to 10 MB/s on real code): a `str.find` pass per needle and a match at each start cost a
        fraction of that, and never more than the search, which tries a match at each of these
        positions too (linear time: `_matches_at`)."""
        gate = self.gate
        if gate.at is None or gate.min_commas or gate.base58_run or (gate.words and len(lowered) != len(text)):
            return None
        starts: set[int] = set()
        for needle, haystack in [*((lit, text) for lit in gate.literals), *((word, lowered) for word in gate.words)]:
            found = haystack.find(needle)
            while found != -1:
                if found + gate.at >= 0:
                    starts.add(found + gate.at)
                found = haystack.find(needle, found + 1)
        return sorted(starts)

    def _matches_at(self, text: str, starts: list[int]) -> Iterator[re.Match]:
        """The matches `finditer` finds in `text` when every match begins at one of `starts`:
        tried in order, none inside the previous match (which `finditer` would have consumed,
        whether or not it holds a secret). The positions tried are a subset of those `finditer`
        tries, so the cost stays within the search's."""
        scanned = 0
        for start in starts:
            if start < scanned:
                continue
            m = self.regex.match(text, start)
            if m is not None:
                scanned = max(m.end(), start + 1)
                yield m


@dataclass
class Redactor:
    """Applies the built-in patterns plus `extra` ones (name -> regex) to strings."""

    extra: dict[str, str] = field(default_factory=dict)
    counts: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._patterns = [_Pattern(*pattern) for pattern in _BUILTIN_PATTERNS]
        self._patterns += [_Pattern(kind, regex, _ALWAYS) for kind, regex in self.extra.items()]
        self._always = any(p.gate is _ALWAYS for p in self._patterns)
        literals = sorted({lit for p in self._patterns for lit in p.gate.literals if lit})
        words = sorted({word for p in self._patterns for word in p.gate.words})
        # For a value's text: where each literal and word occurs, so each pattern is tried only there.
        self._literals = _Occurrences(literals)
        self._words = _Occurrences(words)
        self._tried_at: list[list[int]] = [[] for _ in literals]
        self._tried_at_word: list[list[int]] = [[] for _ in words]
        literal_index, word_index = (
            {text: n for n, text in enumerate(literals)},
            {text: n for n, text in enumerate(words)},
        )
        for i, pattern in enumerate(self._patterns):
            for literal in filter(None, pattern.gate.literals):
                self._tried_at[literal_index[literal]].append(i)
            for word in pattern.gate.words:
                self._tried_at_word[word_index[word]].append(i)
        self._word_gated = [i for i, p in enumerate(self._patterns) if p.gate.words]
        self._comma_gated = [i for i, p in enumerate(self._patterns) if p.gate.min_commas]
        self._run_gated = [i for i, p in enumerate(self._patterns) if p.gate.base58_run]
        self._ungated = [i for i, p in enumerate(self._patterns) if p.gate is _ALWAYS]
        # For transcript blocks: every gate's literals (and the escapes that could hide one) in
        # a few Aho-Corasick automatons, every word in another over the lower-cased block, so a
        # block costs a few passes however many patterns there are. Only whether a line has a
        # hit matters, not every overlapping hit: leftmost matching lets the automaton skip
        # ahead with its prefilter (about 4x faster than reporting every match).
        self._line_literals = [
            BytesAhoCorasick(group, matchkind=MATCHKIND_LEFTMOST_FIRST)
            for group in _groups(_shortest([lit.encode() for lit in literals] + [b"\\u", b"\\/"]))
        ]
        # Every assistant line has usage keys such as "input_tokens": a JSON key is never part
        # of a string (its quotes would be escaped), so those are not the word "token": matched
        # leftmost-longest, a usage key swallows the "token" inside it.
        line_words = _shortest([word.encode() for word in words])
        self._line_words = BytesAhoCorasick([*line_words, _USAGE_KEY_TAIL], matchkind=MATCHKIND_LEFTMOST_LONGEST)
        self._usage_key = len(line_words)
        self._min_commas = min((p.gate.min_commas for p in self._patterns if p.gate.min_commas), default=0)
        self._min_base58_run = min((p.gate.base58_run for p in self._patterns if p.gate.base58_run), default=0)
        # During `redact`: each string's JSON strings as `_strings` read them (by the string's id:
        # every one of them is alive until `redact` returns), so the walk does not read them again.
        self._read: dict[int, _Strings] = {}

    def suspect_lines(self, block: bytes, lines: list[bytes]) -> Container[int]:
        """The positions in `lines` (`block` split at its newlines: transcript lines, JSON as
        UTF-8) of the lines that might hold a string some pattern matches; every other line
        surely holds none. The automatons run over the whole block, not line by line: per-call
        overhead, not the scan, dominated when they ran per line. JSON escapes only quotes,
        backslashes and control characters, which no gate literal contains; `\\u` and `\\/`
        escapes could hide one, so they count as hits."""
        if self._always:
            return range(len(lines))
        # No literal, word or base58 run contains a newline, so every hit lies inside one line.
        hits = [start for automaton in self._line_literals for _, start, _ in automaton.find_matches_as_indexes(block)]
        if self._min_base58_run:
            hits += base58_runs(block, self._min_base58_run)
        hits += [
            start
            for index, start, _ in self._line_words.find_matches_as_indexes(block.lower())
            if index != self._usage_key
        ]
        suspects = set()
        line, counted_to = 0, 0
        for start in sorted(hits):
            line += block.count(b"\n", counted_to, start)
            counted_to = start
            suspects.add(line)
        if self._min_commas:
            suspects.update(n for n, text in enumerate(lines) if text.count(b",") >= self._min_commas and b"[" in text)
        return suspects

    def redact(self, value):
        """Redacts a JSON-like value: the value of every secret key (`is_secret_key`) whatever
        its shape, a string that is a JSON document as a document, and every string (and dict
        key) by the patterns. Patterns that match nowhere in it (one look over all its strings
        at once) are not tried string by string. The walk is iterative: a value nested
        hundreds deep costs no recursion."""
        strings, structured, self._read = _strings(value)
        try:
            # Joined by newlines, every match inside one string is still a match: a superset.
            active = self._matching("\n".join(strings))
            return self._walk(value, active) if active or structured else value
        finally:
            self._read = {}

    def _walk(self, value, patterns: list[_Pattern]):
        holder = [value]
        pending: list[tuple[list | dict, int | str]] = [(holder, 0)]
        while pending:
            container, place = pending.pop()
            item = container[place]  # type: ignore[index]
            if isinstance(item, str):
                container[place] = self._string(item, patterns)  # type: ignore[index]
            elif isinstance(item, list):
                copied = list(item)
                places = _words(item)
                if places:
                    for n, word in zip(places, self._argvs([[item[n] for n in places]], patterns)[0], strict=True):
                        copied[n] = word
                container[place] = copied  # type: ignore[index]
                pending.extend((copied, i) for i in range(len(copied)))
            elif isinstance(item, dict):
                copied_dict: dict = {}
                for key, inner in item.items():
                    name = self._text(key, patterns) if isinstance(key, str) else key
                    if isinstance(key, str) and is_secret_key(key) and _holds_value(inner):
                        self.counts[SECRET_FIELD] += 1
                        copied_dict[name] = f"[REDACTED:{SECRET_FIELD}]"
                    else:
                        copied_dict[name] = inner
                        pending.append((copied_dict, name))
                container[place] = copied_dict  # type: ignore[index]
        return holder[0]

    def _string(self, text: str, patterns: list[_Pattern]) -> str:
        return self._strings_redacted([text], patterns)[0]

    def _strings_redacted(self, texts: list[str], patterns: list[_Pattern]) -> list[str]:
        """Each of `texts` redacted: first each JSON string it holds with an escape as what the
        string decodes to, wherever the string is (a Codex tool call's arguments, an MCP tool's
        answer, a JSON file as the Read tool shows it, `curl -i` output, a log line, a string
        literal), then each array of strings in it as a command line too (`_argvs`), then a JSON
        document naming a secret key by its keys, then the text as written. Escaped, a quote is
        `\\"`, a line break the letter `n` after a backslash and `/` may be `\\/`, where no pattern
        sees a quote, a line's start or a URL. The decoded strings of all `texts` are redacted
        together, the same way (a string inside a string is decoded in its turn). A string that
        changed is written again from its first changed character to its last, as JSON escapes
        it; every other byte stays."""
        found = [self._read.get(id(text)) or _json_strings(text) for text in texts]
        inner = [decoded for strings in found for n, decoded in enumerate(strings.decoded) if strings.escaped(n)]
        redacted_inner = iter(self._strings_redacted(inner, patterns) if inner else [])
        after = [
            [next(redacted_inner) if strings.escaped(n) else d for n, d in enumerate(strings.decoded)]
            for strings in found
        ]
        arrays = [(k, array) for k, strings in enumerate(found) for array in strings.arrays]
        commands = self._argvs([[after[k][n] for n in array] for k, array in arrays], patterns) if arrays else []
        for (k, array), words in zip(arrays, commands):
            for n, word in zip(array, words):
                after[k][n] = word
        rewritten = [_rewritten(text, strings, now) for text, strings, now in zip(texts, found, after)]
        return self._texts(self._lists_redacted([self._document(text) for text in rewritten], patterns), patterns)

    def _lists_redacted(self, texts: list[str], patterns: list[_Pattern]) -> list[str]:
        """Each of `texts` with the words of each list it shows that is not JSON (`_listed_words`:
        a Python, Node or TOML list, a YAML block list) redacted as the command line they make
        (`_argvs`), in the word that held each secret. A word is written as it was, so only the
        secret's characters change."""
        if not _may_list("\0".join(texts)):
            return texts
        found = [(k, words) for k, text in enumerate(texts) for words in _listed_words(text)]
        if not found:
            return texts
        commands = self._argvs([[texts[k][a:b] for a, b in words] for k, words in found], patterns)
        edits: dict[int, list[tuple[int, int, str]]] = {}
        for (k, words), redacted in zip(found, commands):
            edits.setdefault(k, []).extend(
                (a, b, word) for (a, b), word in zip(words, redacted) if word != texts[k][a:b]
            )
        out = list(texts)
        for k, replaced in edits.items():
            pieces, done = [], 0
            for a, b, word in sorted(replaced):
                if a >= done:  # a YAML item holding a whole list: its words are read once
                    pieces += [out[k][done:a], word]
                    done = b
            out[k] = "".join(pieces) + out[k][done:]
        return out

    def _argvs(self, commands: list[list[str]], patterns: list[_Pattern]) -> list[list[str]]:
        """Each of `commands` (a Codex `command` array, an MCP tool's `args`: lists of words)
        redacted as the command line it makes (`_command_line`): a flag and its value (`-p`,
        `PW`) are words of their own, which no pattern reads one at a time. Each secret found is
        replaced in the word (or words) that held it. The command lines are read in one pass,
        joined as `_texts` joins texts (each alone should a match take in a separator)."""
        lines = [_command_line(words) for words in commands]
        joined = _SEPARATOR.join(line for line, _ in lines)
        if len(commands) > 1 and joined.count(_SEPARATOR) != len(commands) - 1:
            return [self._argvs([words], patterns)[0] for words in commands]
        counted = self.counts.copy()
        _, edits = self._redacted(joined, patterns)
        starts, places, owners, at = [], [], [], 0
        for c, (line, words_at) in enumerate(lines):
            starts.append(at)
            places += [(at + first, at + last) for first, last in words_at]
            owners += [(c, w) for w in range(len(words_at))]
            at += len(line) + len(_SEPARATOR)
        if len(commands) > 1 and any(
            end > starts[c] + len(lines[c][0])
            for start, end, _ in edits
            for c in [bisect.bisect_right(starts, start) - 1]
        ):
            self.counts.clear()
            self.counts.update(counted)
            return [self._argvs([words], patterns)[0] for words in commands]
        redacted, ends = [list(words) for words in commands], [last for _, last in places]
        # From the last edit back, so that an edit's offsets in a word are still its own.
        for start, end, mark in reversed(edits):
            n = bisect.bisect_right(ends, start)  # the first word ending after the edit starts
            while n < len(places) and places[n][0] < end:
                (first, last), (c, w) = places[n], owners[n]
                redacted[c][w] = (
                    redacted[c][w][: max(start, first) - first] + mark + redacted[c][w][min(end, last) - first :]
                )
                n += 1
        return redacted

    def _texts(self, texts: list[str], patterns: list[_Pattern]) -> list[str]:
        """`_text` of each of `texts`, in one pass over them all, joined by a separator that no
        built-in pattern reads across (a line break, a NUL, a line break: a pattern crosses line
        breaks only through `\\s`, which a NUL stops). A JSON document may hold a hundred
        thousand short strings, and a pass per string costs a hundred times the text's. Should
        a match take in a separator after all (a private key's block runs to its END line, a
        custom pattern reads anything), each text is redacted alone."""
        if len(texts) < 2:
            return [self._text(text, patterns) for text in texts]
        joined = _SEPARATOR.join(texts)
        if joined.count(_SEPARATOR) == len(texts) - 1:
            counted = self.counts.copy()
            parts = self._text(joined, patterns).split(_SEPARATOR)
            if len(parts) == len(texts):
                return parts
            self.counts.clear()
            self.counts.update(counted)
        return [self._text(text, patterns) for text in texts]

    def _document(self, text: str) -> str:
        """`text` with its secret keys' values redacted when it is a JSON document (a tool
        result, an MCP response) that names one; else `text` as it is."""
        start = text.lstrip()[:1]
        if start not in ("{", "[") or len(text) > _DOCUMENT_LIMIT or not _names_secret_key(text):
            return text
        try:
            document = transcript.parse_json(text)
        except ValueError:
            return text
        if not isinstance(document, (dict, list)):
            return text
        before = self.counts[SECRET_FIELD]
        redacted = self._walk(document, [])
        if self.counts[SECRET_FIELD] == before:
            return text
        return json.dumps(redacted, ensure_ascii=False, indent=2 if "\n" in text.strip() else None)

    def _matching(self, text: str) -> list[_Pattern]:
        """The patterns that match somewhere in `text`, in order. Only the patterns whose gates
        open are looked at: with a hundred patterns, even a loop over them all is most of the
        cost of a short text."""
        lowered = text.lower()
        # Pattern index -> where its literals or words occur.
        starts: dict[int, list[int]] = {}
        for literal, start in self._literals.find(text):
            for i in self._tried_at[literal]:
                starts.setdefault(i, []).append(start)
        # Lower-casing keeps every position unless the text holds a character that lower-cases
        # to two ("İ"); then word-gated patterns are searched for everywhere.
        aligned = len(lowered) == len(text)
        if aligned:
            for word, start in self._words.find(lowered):
                for i in self._tried_at_word[word]:
                    starts.setdefault(i, []).append(start)
        else:
            starts.update((i, []) for i in self._word_gated if self._patterns[i].gate.open(text, lowered))
        starts.update((i, []) for i in self._comma_gated if self._patterns[i].gate.open(text, lowered))
        starts.update((i, []) for i in self._run_gated if self._patterns[i].gate.open(text, lowered))
        starts.update((i, []) for i in self._ungated)
        matching = []
        for i in sorted(starts):
            pattern = self._patterns[i]
            at = pattern.gate.at
            if at is None or (pattern.gate.words and not aligned):
                found = any(pattern.holds_secret(m) for m in pattern.regex.finditer(text))
            elif len(starts[i]) > _TRIES_PER_PATTERN:
                # Trying every occurrence costs occurrences times the pattern's window (a value
                # of up to 512 characters after each of 80,000 `private_key:`s took 14 s per
                # MiB): past a few, the pattern is simply applied, in one pass (`redact`).
                found = True
            else:
                found = any(
                    pattern.holds_secret(pattern.regex.match(text, start + at))
                    for start in starts[i]
                    if start + at >= 0
                )
            if found:
                matching.append(pattern)
        return matching

    def _text(self, value: str, patterns: list[_Pattern]) -> str:
        return self._redacted(value, patterns)[0]

    def _redacted(self, value: str, patterns: list[_Pattern]) -> tuple[str, list[tuple[int, int, str]]]:
        """`value` redacted, and what was replaced: (start, end, mark) in `value`, in order."""
        if not patterns:  # a walk for secret keys only: no text to lower-case
            return value, []
        lowered = value.lower()
        edits: list[tuple[int, int, str]] = []
        for pattern in patterns:
            if pattern.gate.open(value, lowered):
                value, spans = pattern.redact(value, lowered)
                if spans:
                    self.counts[pattern.kind] += len(spans)
                    edits = _composed(edits, spans, pattern.mark)
                    lowered = value.lower()
        return value, edits

    def summary(self) -> dict:
        return {"enabled": True, "counts": dict(sorted(self.counts.items())), "total": sum(self.counts.values())}


def _groups(needles: list[bytes]) -> list[list[bytes]]:
    """`needles` in groups for automatons of their own. An automaton's prefilter (Teddy, SIMD) is
    fast only over a few dozen needles that are not too short: the 125 gate literals in one
    automaton scanned at 200 MB/s; the short ones apart and the rest in groups of 64, over
    1 GB/s."""
    short, long = [n for n in needles if len(n) <= 3], [n for n in needles if len(n) > 3]
    return [
        group
        for group in [
            short,
            *(long[i : i + _LITERALS_PER_AUTOMATON] for i in range(0, len(long), _LITERALS_PER_AUTOMATON)),
        ]
        if group
    ]


class _Occurrences:
    """Every occurrence of every one of `needles` (ASCII strings) in a text, overlapping ones too.
    Reporting every overlapping match keeps an automaton from skipping ahead with its prefilter
    (and the str automaton maps every offset back from UTF-8): a leftmost search over the bytes,
    completed by checking, where a needle was found, the needles that could begin inside it, is
    several times faster."""

    def __init__(self, needles: list[str]) -> None:
        encoded = [needle.encode("ascii") for needle in needles]
        self._needles = encoded
        self._index = {needle: i for i, needle in enumerate(encoded)}
        self._automatons = [BytesAhoCorasick(group, matchkind=MATCHKIND_LEFTMOST_FIRST) for group in _groups(encoded)]
        self._groups = [[self._index[needle] for needle in group] for group in _groups(encoded)]
        self._ordered = sorted(encoded)
        self._inside: dict[int, list[tuple[int, int]]] = {}

    def _begin_inside(self, i: int) -> list[tuple[int, int]]:
        """(other needle, offset) for every needle that can begin `offset` bytes into an
        occurrence of needle `i`: a prefix of the rest of it, or one that starts with the rest.
        Worked out the first time needle `i` is found (most never are)."""
        if i not in self._inside:
            needle, inside = self._needles[i], set[tuple[int, int]]()
            for offset in range(len(needle)):
                rest = needle[offset:]
                inside.update(
                    (self._index[rest[:n]], offset) for n in range(1, len(rest) + 1) if rest[:n] in self._index
                )
                following = self._ordered[bisect.bisect_left(self._ordered, rest) :]
                for other in following:
                    if not other.startswith(rest):
                        break
                    inside.add((self._index[other], offset))
            inside.discard((i, 0))
            self._inside[i] = sorted(inside)
        return self._inside[i]

    def find(self, text: str) -> set[tuple[int, int]]:
        """(needle, character offset) of every occurrence in `text`."""
        # A lone surrogate (from a JSON escape) is encoded and counted as one character.
        data = text.encode("utf-8", "surrogatepass")
        found = set()
        for automaton, group in zip(self._automatons, self._groups):
            for k, start, _ in automaton.find_matches_as_indexes(data):
                i = group[k]
                found.add((i, start))
                found.update(
                    (j, start + offset)
                    for j, offset in self._begin_inside(i)
                    if data.startswith(self._needles[j], start + offset)
                )
        if len(data) == len(text) or not found:
            return found
        # Every needle begins with an ASCII byte, which is a whole character: count the
        # characters up to each occurrence.
        chars, previous, offsets = 0, 0, {}
        for start in sorted({start for _, start in found}):
            chars += len(data[previous:start].decode("utf-8", "surrogatepass"))
            previous, offsets[start] = start, chars
        return {(i, offsets[start]) for i, start in found}


def _shortest(strings: list[bytes]) -> list[bytes]:
    """The strings that contain none of the others: a line holds one of `strings` if and only if
    it holds one of these, and the fewer an automaton has, the faster its prefilter skips."""
    unique = sorted(set(strings))
    automaton = BytesAhoCorasick(unique)
    return [
        s
        for i, s in enumerate(unique)
        if all(j == i for j, _, _ in automaton.find_matches_as_indexes(s, overlapping=True))
    ]


def _strings(value) -> tuple[list[str], bool, dict[int, _Strings]]:
    """Every string (and dict key) inside a JSON-like value, what the JSON strings inside them
    decode to, and each list or array of strings as a command line; and whether the value needs
    a walk whatever the patterns find: a secret key holds a value, or a string is a JSON
    document naming one; and each string's JSON strings (`_json_strings`), by its id."""
    out: list[str] = []
    structured = False
    read: dict[int, _Strings] = {}
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            out.append(item)
            structured = structured or (item.lstrip()[:1] in ("{", "[") and _names_secret_key(item))
            strings = read[id(item)] = _json_strings(item)
            pending.extend(decoded for n, decoded in enumerate(strings.decoded) if strings.escaped(n))
            out.extend(_command_line([strings.decoded[n] for n in array])[0] for array in strings.arrays)
            out.extend(_command_line([item[a:b] for a, b in words])[0] for words in _listed_words(item))
        elif isinstance(item, list):
            pending.extend(item)
            places = _words(item)
            if places:
                out.append(_command_line([item[n] for n in places])[0])
        elif isinstance(item, dict):
            for key, inner in item.items():
                if isinstance(key, str):
                    out.append(key)
                    structured = structured or (is_secret_key(key) and _holds_value(inner))
                pending.append(inner)
    return out, structured, read


# A string in JSON text and its body. A JSON string never holds a line break, so each line starts
# outside one: a quote that text before a JSON value leaves open misleads the reading of its own
# line only. A string cut off (a line kept as its head, a Read tool's line cut at its width) may
# have no closing quote, or end inside an escape.
_JSON_STRING = re.compile(r'"(?P<body>[^"\\\n]*+(?:\\[^\n][^"\\\n]*+)*+)(?:"|\\?(?=\n)|\\?\Z)')
# An escape as json.loads reads it (a surrogate pair's two escapes are one character); one it
# does not know is read as it is written.
_JSON_ESCAPE = re.compile(
    r"\\(?:u(?P<high>[dD][89abAB][0-9a-fA-F]{2})\\u(?P<low>[dD][c-fC-F][0-9a-fA-F]{2})|u(?P<code>[0-9a-fA-F]{4})|(?P<char>.))",
    re.DOTALL,
)
_JSON_ESCAPED = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", '"': '"', "\\": "\\", "/": "/"}
_SURROGATE = re.compile("[\ud800-\udfff]")
# Between an array's items: white space, and the Read tool's line numbers (`    12→`) when the
# array is a file's over several lines.
_ARRAY_SPACE = r"(?:[ \t\r]|\n(?:[ \t]*\d{1,6}\u2192)?)*+"
_ARRAY_START = re.compile(r"\[" + _ARRAY_SPACE + '"')
_ARRAY_END = re.compile(_ARRAY_SPACE + r"\]")
_ARRAY_COMMA = re.compile(_ARRAY_SPACE + "," + _ARRAY_SPACE)
_SEPARATOR = "\n\0\n"


@dataclass(frozen=True)
class _Strings:
    """The JSON strings of a text that are read decoded: each holding an escape, and each of an
    array of two strings or more (`arrays`: their places in `matches`)."""

    matches: list[re.Match]
    decoded: list[str]
    arrays: list[list[int]]

    def escaped(self, n: int) -> bool:
        return "\\" in self.matches[n].group("body")


_NO_STRINGS = _Strings([], [], [])


def _json_strings(text: str) -> _Strings:
    """The strings of `text` that redaction reads decoded, wherever they are in it (linear:
    `_JSON_STRING` is possessive, and each gap between two strings is looked at once)."""
    if '"' not in text or ("\\" not in text and "[" not in text):
        return _NO_STRINGS
    every = _string_matches(text)
    arrays: list[list[int]] = []
    if "[" in text and "," in text:
        # An array's first string follows its `[`; the run goes on while a comma alone separates two.
        first_string = {m.start(): n for n, m in enumerate(every)}
        for opening in _ARRAY_START.finditer(text):
            n = first_string.get(opening.end() - 1)
            if n is None:
                continue
            run = [n]
            while n + 1 < len(every) and _ARRAY_COMMA.fullmatch(text, every[n].end(), every[n + 1].start()):
                n += 1
                run.append(n)
            if len(run) >= 2 and _ARRAY_END.match(text, every[n].end()):
                arrays.append(run)
    in_arrays = {n for array in arrays for n in array}
    kept = [n for n, m in enumerate(every) if n in in_arrays or "\\" in m.group("body")]
    if not kept:
        return _NO_STRINGS
    place = {n: k for k, n in enumerate(kept)}
    matches = [every[n] for n in kept]
    return _Strings(matches, _decoded([m.group("body") for m in matches]), [[place[n] for n in a] for a in arrays])


def _string_matches(text: str) -> list[re.Match]:
    """`_JSON_STRING`'s strings of `text`, read again from a quote the pairing took for a closing
    one where it must open a string: a quote that text before a JSON value leaves open (an inch
    mark, `5"`) pairs every later quote of its line the other way round, so the value's strings
    would be read as the gaps between strings, never decoded. The sign: a "string" ending in `{`
    or `[` whose closing quote a key's or word's character follows, which valid JSON never has
    (a string is followed by `,`, `:`, `}`, `]` or white space). Each reading again starts past
    the last, so the whole stays linear."""
    found: list[re.Match] = []
    at = 0
    while True:
        for m in _JSON_STRING.finditer(text, at):
            end = m.end()
            if end < len(text) and text[end - 1] == '"' and m.group("body")[-1:] in ("{", "[") and _opens(text[end]):
                at = end - 1
                break
            found.append(m)
        else:
            return found


def _opens(character: str) -> bool:
    """Whether `character` may begin a JSON key's or string's words (after an opening quote)."""
    return character.isalnum() or character in "_$@-./\\"


def _decoded(bodies: list[str]) -> list[str]:
    """What each JSON string body decodes to (in one call of the decoder when all are well
    formed)."""
    escaped = [body for body in bodies if "\\" in body]
    if not escaped:
        return bodies
    try:
        decoded = iter(json.loads("[" + ",".join(f'"{body}"' for body in escaped) + "]", strict=False))
    except ValueError:
        decoded = iter([_json_string_body(body) for body in escaped])
    return [next(decoded) if "\\" in body else body for body in bodies]


def _json_string_body(body: str) -> str:
    """What the body of a JSON string decodes to; an escape JSON does not know, or one cut off
    at the end (`\\u12`), is read as it is written."""
    try:
        return json.loads(f'"{body}"', strict=False)
    except ValueError:
        return _JSON_ESCAPE.sub(_unescaped, body)


def _unescaped(m: re.Match) -> str:
    if m["high"]:
        return chr(0x10000 + ((int(m["high"], 16) - 0xD800) << 10) + int(m["low"], 16) - 0xDC00)
    return chr(int(m["code"], 16)) if m["code"] else _JSON_ESCAPED.get(m["char"], m[0])


def _rewritten(text: str, strings: _Strings, after: list[str]) -> str:
    """`text` with each of `strings` whose redacted value (`after`) differs from what it decoded
    to written again: from its first changed character to its last, escaped as JSON escapes
    (`\\u` for every character beyond ASCII if the body had none; a lone surrogate as its escape,
    so the text still encodes as UTF-8); the rest of the body as it was written."""
    pieces, done = [], 0
    for m, before, now in zip(strings.matches, strings.decoded, after):
        if now == before:
            continue
        body, at = m.group("body"), m.start("body")
        # The changed characters: from the first that differs to the last, counted from each end.
        head = _common_prefix(before, now)
        tail = _common_prefix(before[head:][::-1], now[head:][::-1])
        first, head = _body_offset(body, head, up=False)
        last, changed_end = _body_offset(body, len(before) - tail, up=True)
        tail = len(before) - changed_end
        pieces += [text[done : at + first], _escaped(now[head : len(now) - tail], body.isascii())]
        done = at + last
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


def _common_prefix(a: str, b: str) -> int:
    """How many characters `a` and `b` begin with in common (a binary search of slices compared
    in C: a string of megabytes is compared in a few dozen steps)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _body_offset(body: str, n: int, up: bool) -> tuple[int, int]:
    """Where in `body` (a JSON string's, as written) character `n` of what it decodes to is
    written, and that character's place: inside an escape that decodes to two characters (one
    JSON does not know), the escape's start (`up`: its end) and the place of its first (after its
    last) character."""
    written = read = 0
    for m in _JSON_ESCAPE.finditer(body):
        literal = m.start() - written
        if n < read + literal:
            break
        read, written = read + literal, m.start()
        width = len(_unescaped(m))
        if n < read + width:
            return (m.end(), read + width) if up and n > read else (written, read)
        read, written = read + width, m.end()
    return written + (n - read), n


def _escaped(value: str, ascii_only: bool) -> str:
    """`value` as a JSON string's body, every lone surrogate as its escape."""
    body = json.dumps(value, ensure_ascii=ascii_only)[1:-1]
    return body if ascii_only else _SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", body)


def _words(value: list) -> list[int]:
    """The places of a list's strings when it may hold a command's words: two strings or more
    (an MCP server's `args` may hold a port's number, a null: the strings are still the words)."""
    places = [n for n, word in enumerate(value) if isinstance(word, str)]
    return places if len(places) >= 2 else []


# A list as Python and Node print one, or TOML writes one: `['mysql', '--password', '…']` (every
# `subprocess.CalledProcessError`'s message), `[ 'sshpass', '-p', '…' ]`. Its first item is
# single-quoted (a list of double-quoted strings is JSON's: `_json_strings`). A word is read as
# it is written, escapes too (`'C:\\tools\\mysql.exe'`): a pattern reads a backslash as any other
# character, and the word's secret is redacted where it is written.
_QUOTED_LIST_START = re.compile(r"\[" + _ARRAY_SPACE + "'")
_QUOTED_WORD = re.compile(r"'(?P<sq>[^'\\\n]*+(?:\\.[^'\\\n]*+)*+)'|\"(?P<dq>[^\"\\\n]*+(?:\\.[^\"\\\n]*+)*+)\"")
_QUOTED_LIST_END = re.compile(_ARRAY_SPACE + "(?:," + _ARRAY_SPACE + r")?\]")
# A YAML block list's item (a Kubernetes container's `args:`, Compose's `command:`), after the
# Read tool's line number when it shows a file; consecutive items at one indentation are a list.
_YAML_ITEM = re.compile(r"^(?:[ \t]*\d{1,6}\u2192)?(?P<indent>[ \t]*)- (?P<item>[^\n]*)", re.MULTILINE)


def _may_list(text: str) -> bool:
    """Whether `text` may show a list `_listed_words` reads: a flag's dash after a quote (a quoted
    list's, a quoted YAML item's) or after a YAML item's dash."""
    return "'-" in text or '"-' in text or "- -" in text


def _listed_words(text: str) -> list[list[tuple[int, int]]]:
    """Where the words of each list `text` shows that is not JSON are (each word's span): a
    quoted list (`_QUOTED_LIST_START`) or a YAML block list, of two words or more, one of which,
    before the last, is a flag (`-p`, `--password`): a command line's secret follows a flag or
    is caught in its word alone, and a Markdown list is no command. Linear: each list is read
    once, and an opening inside a list already read is not read again."""
    lists: list[list[tuple[int, int]]] = []
    if not _may_list(text):
        return lists
    if "'-" in text or '"-' in text:
        scanned = 0
        for opening in _QUOTED_LIST_START.finditer(text):
            at = opening.end() - 1
            if at < scanned:
                continue
            words = []
            while (word := _QUOTED_WORD.match(text, at)) is not None:
                words.append(word.span("sq" if word.group("sq") is not None else "dq"))
                comma = _ARRAY_COMMA.match(text, word.end())
                at = word.end() if comma is None else comma.end()
                if comma is None:
                    break
            scanned = at
            if _QUOTED_LIST_END.match(text, at):
                lists.append(words)
    if "- " in text:
        run: list[tuple[int, int]] = []
        indent, run_end = None, -1
        for item in _YAML_ITEM.finditer(text):
            if item.start() != run_end + 1 or item.group("indent") != indent:
                lists.append(run)
                run, indent = [], item.group("indent")
            run_end = item.end()
            run.append(_yaml_word(item))
        lists.append(run)
    return [words for words in lists if len(words) >= 2 and any(text.startswith("-", a) for a, _ in words[:-1])]


def _yaml_word(item: re.Match) -> tuple[int, int]:
    """Where a YAML list item's word is: inside its quotes, or a plain one up to a comment."""
    start, value = item.start("item"), item.group("item")
    if value[:1] in ("'", '"') and (closing := value.find(value[0], 1)) != -1:
        return start + 1, start + closing
    comment = min((at for at in (value.find(" #"), value.find("\t#")) if at != -1), default=len(value))
    return start, start + len(value[:comment].rstrip(" \t\r"))


def _command_line(words: list[str]) -> tuple[str, list[tuple[int, int]]]:
    """`words` as a shell shows the command they make (joined by spaces; a word holding a space or
    a tab in quotes, `'…'`, or `"…"` when it holds a `'`), and where each word's own characters
    are in it."""
    pieces, places, at = [], [], 0
    for word in words:
        quote = "" if " " not in word and "\t" not in word else ("'" if "'" not in word else '"')
        places.append((at + len(quote), at + len(quote) + len(word)))
        pieces.append(f"{quote}{word}{quote}")
        at += len(pieces[-1]) + 1
    return " ".join(pieces), places


def _composed(edits: list[tuple[int, int, str]], spans: list[tuple[int, int]], mark: str) -> list[tuple[int, int, str]]:
    """`edits` (start, end, mark: a text's replaced parts, in order), then `spans` (in order) of
    the text they made replaced by `mark`, as replaced parts of the first text. A span that takes
    in part of an earlier mark takes in all that mark replaced. One walk over both lists."""
    composed: list[tuple[int, int, str]] = []
    n, shift = 0, 0  # edits[:n] are passed; shift: the first text's length minus the made text's, up to there
    for start, end in spans:
        while n < len(edits) and edits[n][0] - shift + len(edits[n][2]) <= start:
            composed.append(edits[n])
            shift += edits[n][1] - edits[n][0] - len(edits[n][2])
            n += 1
        first = edits[n][0] if n < len(edits) and edits[n][0] - shift <= start else start + shift
        last = None
        while n < len(edits) and edits[n][0] - shift < end:  # an earlier mark the span takes in
            begins = edits[n][0] - shift
            shift += edits[n][1] - edits[n][0] - len(edits[n][2])
            n += 1
            if end <= begins + len(edits[n - 1][2]):
                last = edits[n - 1][1]
                break
        composed.append((first, end + shift if last is None else last, mark))
    return composed + edits[n:]


def _holds_value(value) -> bool:
    """Whether a secret key's value could hold a secret: not null, a flag, empty or a
    placeholder (`"password": "${DB_PASSWORD}"`)."""
    if value is None or isinstance(value, bool):
        return False
    if isinstance(value, str):
        return bool(value) and not _placeholder(value)
    return not isinstance(value, (list, dict)) or bool(value)


def _names_secret_key(text: str) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in _SECRET_KEY_WORDS)
