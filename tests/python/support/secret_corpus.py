"""Planted secrets (fake, but in each format's real shape) and a clean corpus of real code and
prose, for measuring redaction: every secret must go, and as little else as possible."""

from __future__ import annotations

import base64
import json
import random
import string
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from support.localnet import REPO

_rng = random.Random(20261130)


def _pick(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
# Characters passwords hold that code and a naive value pattern stop at.
PUNCTUATION = "&(){}[]<>!#%^*+?~|@"
# The first words of the BIP-39 English list: seed phrases made of them have the real shape.
BIP39_WORDS = [
    "abandon",
    "ability",
    "able",
    "about",
    "above",
    "absent",
    "absorb",
    "abstract",
    "absurd",
    "abuse",
    "access",
    "accident",
    "account",
    "accuse",
    "achieve",
    "acid",
    "acoustic",
    "acquire",
    "across",
    "act",
    "action",
    "actor",
    "actress",
    "actual",
    "adapt",
    "add",
    "addict",
    "address",
    "adjust",
    "admit",
    "adult",
    "advance",
    "advice",
    "aerobic",
    "affair",
    "afford",
    "afraid",
    "again",
    "age",
    "agent",
    "agree",
    "ahead",
    "aim",
    "air",
    "airport",
    "aisle",
    "alarm",
    "album",
]


def _bytes(n: int) -> bytes:
    return bytes(_rng.randrange(256) for _ in range(n))


def _base58(data: bytes) -> str:
    number, out = int.from_bytes(data, "big"), ""
    while number:
        number, digit = divmod(number, 58)
        out = BASE58[digit] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def _b64json(fields: dict, urlsafe: bool = False) -> str:
    raw = json.dumps(fields, separators=(",", ":")).encode()
    return (base64.urlsafe_b64encode(raw) if urlsafe else base64.b64encode(raw)).decode().rstrip("=")


def _password() -> str:
    """A password with the punctuation an assignment's value must run through."""
    return (
        _pick(ALNUM, 5)
        + _pick(string.digits, 1)
        + "&"
        + _pick(ALNUM, 3)
        + "("
        + _pick(PUNCTUATION, 4)
        + _pick(ALNUM, 3)
    )


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


def _seed_phrase(words: int) -> str:
    return " ".join(_rng.choice(BIP39_WORDS) for _ in range(words))


def _putty() -> Planted:
    public, private = [_pick(B64, 64) for _ in range(2)], [_pick(B64, 64) for _ in range(2)]
    text = "\n".join(
        [
            "PuTTY-User-Key-File-3: ssh-ed25519",
            "Encryption: none",
            "Comment: ed25519-key-20260101",
            "Public-Lines: 2",
            *public,
            "Private-Lines: 2",
            *private,
            "Private-MAC: " + _pick(HEX, 64),
        ]
    )
    return Planted("PuTTY private key file", text, tuple(private))


def _ssh2() -> Planted:
    body = [_pick(B64, 64) for _ in range(3)]
    text = "\n".join(
        [
            "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----",
            'Comment: "rsa-key-20260101"',
            *body,
            "---- END SSH2 ENCRYPTED PRIVATE KEY ----",
        ]
    )
    return Planted("SSH2 encrypted private key", text, tuple(body))


def _base64_pem() -> Planted:
    pem = "-----BEGIN EC PRIVATE KEY-----\n" + _pick(B64, 64) + "\n-----END EC PRIVATE KEY-----\n"
    value = base64.b64encode(pem.encode()).decode()
    return _plant("Base64 PEM key in a Kubernetes secret", value, "data:\n  tls.key: ")


def _netrc_multiline() -> Planted:
    password = _password()
    return Planted(
        ".netrc entry over several lines",
        f"machine api.example.com\n  login deploy\n  password {password}\n",
        (password,),
    )


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
    _plant(
        "Slack bot token", "xoxb-" + _pick(string.digits, 12) + "-" + _pick(string.digits, 13) + "-" + _pick(ALNUM, 24)
    ),
    _plant(
        "Slack webhook",
        "https://hooks.slack.com/services/T"
        + _pick(UPPER_DIGITS, 8)
        + "/B"
        + _pick(UPPER_DIGITS, 8)
        + "/"
        + _pick(ALNUM, 24),
    ),
    _plant("Anthropic API key", "sk-ant-api03-" + _pick(URLSAFE, 93) + "AA"),
    _plant("OpenAI project key", "sk-proj-" + _pick(URLSAFE, 48)),
    _plant("Stripe secret key", "sk_live_" + _pick(ALNUM, 24)),
    _plant("Stripe restricted key", "rk_live_" + _pick(ALNUM, 24)),
    _plant("Google API key", "AIza" + _pick(URLSAFE, 35)),
    _plant("npm token", "npm_" + _pick(ALNUM, 36)),
    _plant("PyPI token", "pypi-AgEIcHlwaS5vcmc" + _pick(URLSAFE, 70)),
    _plant(
        "JSON Web Token",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI" + _pick(URLSAFE, 30) + "." + _pick(URLSAFE, 43),
    ),
    _plant("PostgreSQL URL with password", _pick(ALNUM, 18), "postgresql://app_user:", "@db.internal:5432/app"),
    _plant(
        "MongoDB SRV URL with password", _pick(ALNUM, 16), "mongodb+srv://admin:", "@cluster0.example.mongodb.net/prod"
    ),
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
    _plant(
        "Azure storage connection string",
        _pick(B64, 86) + "==",
        "DefaultEndpointsProtocol=https;AccountName=prodstore;AccountKey=",
        ";EndpointSuffix=core.windows.net",
    ),
    _plant("HashiCorp Vault token", "hvs." + _pick(URLSAFE, 90)),
    _plant("age secret key", "AGE-SECRET-KEY-1" + _pick("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L".upper(), 58)),
    _plant("Square access token", "sq0atp-" + _pick(URLSAFE, 22)),
    # Assignment values hold any character.
    _plant(".env password with punctuation", _password(), "DB_PASSWORD="),
    _plant("YAML quoted password with brackets", _password() + "{}[]<>", 'password: "', '"'),
    _plant("JSON password with punctuation", _password(), '{"username": "svc", "password": "', '"}'),
    _plant(".env short password name", _password(), "SMTP_PASS="),
    _plant("high-entropy signing key", _pick(HEX, 64), "WEBHOOK_SIGNING_KEY="),
    _plant(
        ".npmrc auth token",
        _pick(HEX, 8) + "-" + _pick(HEX, 4) + "-" + _pick(HEX, 4) + "-" + _pick(HEX, 4) + "-" + _pick(HEX, 12),
        "//registry.npmjs.org/:_authToken=",
    ),
    # Wallets.
    _plant(
        "BIP-39 seed phrase (solana-keygen new)",
        _seed_phrase(12),
        "Wrote new keypair to /home/dev/.config/solana/id.json\n"
        + "=" * 80
        + "\npubkey: "
        + _base58(_bytes(32))
        + "\n"
        + "=" * 80
        + "\nSave this seed phrase and your BIP39 passphrase to recover your new keypair:\n",
        "\n" + "=" * 80,
    ),
    _plant("BIP-39 seed phrase (24 words, .env)", _seed_phrase(24), 'MNEMONIC="', '"'),
    _plant(
        "Solana base58 secret key (wallet export)",
        _base58(_bytes(64)),
        '{"publicKey": "' + _base58(_bytes(32)) + '", "secretKey": "',
        '"}',
    ),
    _plant(
        "0x private key (hardhat node)",
        "0x" + _pick(HEX, 64),
        "Account #0: 0x" + _pick(HEX, 40) + " (10000 ETH)\nPrivate Key: ",
    ),
    _plant("0x private key (.env)", "0x" + _pick(HEX, 64), "PRIVATE_KEY="),
    _plant("BIP-32 extended private key", "xprv9s21ZrQH143K" + _pick(BASE58, 95)),
    # Credential files.
    _plant(
        "kubeconfig client-key-data",
        base64.b64encode(
            ("-----BEGIN RSA PRIVATE KEY-----\n" + _pick(B64, 64) + "\n-----END RSA PRIVATE KEY-----\n").encode()
        ).decode(),
        "users:\n- name: admin\n  user:\n    client-key-data: ",
    ),
    _plant(
        "kubeconfig token",
        _pick(LOWER_DIGITS, 6) + "." + _pick(LOWER_DIGITS, 16),
        "users:\n- name: bootstrap\n  user:\n    token: ",
    ),
    _base64_pem(),
    _plant(".netrc line", _password(), "machine github.com login octocat password "),
    _netrc_multiline(),
    _plant(".pgpass line", _password(), "db.internal:5432:app:app_user:"),
    _plant(
        "Docker config auth",
        base64.b64encode(b"deploy:" + _pick(ALNUM, 20).encode()).decode(),
        '{"auths": {"https://index.docker.io/v1/": {"auth": "',
        '"}}}',
    ),
    _putty(),
    _ssh2(),
    # Command lines.
    _plant("mysql -p password", _password(), "mysql -h db.internal -u root -p", " app < dump.sql"),
    _plant("--password=value", _password(), "pg_dump --username app --password=", " app"),
    _plant(
        "--password value",
        _pick(ALNUM, 12) + "7",
        "mongo --username admin --password ",
        " --authenticationDatabase admin",
    ),
    _plant("curl -u user:password", _password(), "curl -sS -u deploy:", " https://api.example.com/v1/deploy"),
    _plant("sshpass -p", _pick(ALNUM, 14), "sshpass -p '", "' ssh deploy@host"),
    _plant("redis-cli -a", _pick(ALNUM, 24), "redis-cli -h cache.internal -a ", " ping"),
    _plant("openssl pass:", _pick(ALNUM, 18), "openssl pkcs12 -export -in cert.pem -passout pass:", " -out cert.p12"),
    # Headers.
    _plant("X-API-Key header", _pick(ALNUM, 32), 'curl -H "X-API-Key: ', '" https://api.example.com'),
    _plant("api-key header (Azure OpenAI)", _pick(HEX, 32), "api-key: "),
    _plant("Cookie header", _pick(HEX, 32), "Cookie: theme=dark; sessionid="),
    _plant(
        "Set-Cookie header",
        _pick(URLSAFE, 40),
        "Set-Cookie: __Host-session=",
        "; Path=/; Secure; HttpOnly; SameSite=Lax",
    ),
    # Vendor token formats.
    _plant(
        "Slack app token", "xapp-1-A" + _pick(UPPER_DIGITS, 10) + "-" + _pick(string.digits, 13) + "-" + _pick(HEX, 64)
    ),
    _plant("GitLab runner token", "glrt-" + _pick(URLSAFE, 20)),
    _plant("GitLab deploy token", "gldt-" + _pick(URLSAFE, 20)),
    _plant("GitLab pipeline trigger token", "glptt-" + _pick(HEX, 40)),
    _plant("GitLab SCIM token", "glsoat-" + _pick(URLSAFE, 20)),
    _plant("GitLab runner registration token", "GR1348941" + _pick(URLSAFE, 20)),
    _plant("gcloud access token", "ya29.a0" + _pick(URLSAFE, 120)),
    _plant("Google OAuth client secret", "GOCSPX-" + _pick(URLSAFE, 28)),
    _plant("Docker Hub access token", "dckr_pat_" + _pick(URLSAFE, 27)),
    _plant(
        "Sentry org token",
        "sntrys_"
        + _b64json(
            {"iat": 1767225600.0, "url": "https://sentry.io", "region_url": "https://us.sentry.io", "org": "acme"}
        )
        + "_"
        + _pick(B64, 43),
    ),
    _plant("Sentry user token", "sntryu_" + _pick(HEX, 64)),
    _plant("Linear API key", "lin_api_" + _pick(ALNUM, 40)),
    _plant("Postman API key", "PMAK-" + _pick(HEX, 24) + "-" + _pick(HEX, 34)),
    _plant("Grafana service account token", "glsa_" + _pick(ALNUM, 32) + "_" + _pick(HEX, 8)),
    _plant(
        "Grafana Cloud token",
        "glc_" + _b64json({"o": "123456", "n": "stack-1-deploy", "k": _pick(ALNUM, 24), "m": {"r": "us"}}),
    ),
    _plant("Pulumi access token", "pul-" + _pick(HEX, 40)),
    _plant("Tailscale auth key", "tskey-auth-k" + _pick(ALNUM, 10) + "CNTRL-" + _pick(ALNUM, 33)),
    _plant("Databricks token", "dapi" + _pick(HEX, 32)),
    _plant("Webhook signing secret", "whsec_" + _pick(B64, 32)),
    _plant(
        "1Password service account token",
        "ops_"
        + _b64json(
            {
                "signInAddress": "my.1password.com",
                "userAuth": {
                    "method": "SRPg-4096",
                    "alg": "PBES2g-HS256",
                    "iterations": 650000,
                    "salt": _pick(URLSAFE, 22),
                },
                "email": _pick(LOWER_DIGITS, 12) + "@1passwordserviceaccounts.com",
                "srpX": _pick(HEX, 64),
                "muk": {
                    "alg": "A256GCM",
                    "ext": True,
                    "k": _pick(URLSAFE, 43),
                    "key_ops": ["encrypt", "decrypt"],
                    "kty": "oct",
                    "kid": "mp",
                },
                "secretKey": "A3-" + _pick(UPPER_DIGITS, 6),
                "deviceUuid": _pick(LOWER_DIGITS, 26),
            }
        ),
    ),
    _plant(
        "1Password Connect token",
        "eyJhbGciOiJFUzI1NiIsImtpZCI6I"
        + _pick(URLSAFE, 30)
        + ".eyJhdWQiOlsi"
        + _pick(URLSAFE, 60)
        + "."
        + _pick(URLSAFE, 86),
        "OP_CONNECT_TOKEN=",
    ),
    _plant(
        "1Password secret key",
        "A3-"
        + _pick(UPPER_DIGITS, 6)
        + "-"
        + _pick(UPPER_DIGITS, 6)
        + "-"
        + _pick(UPPER_DIGITS, 5)
        + "-"
        + _pick(UPPER_DIGITS, 5)
        + "-"
        + _pick(UPPER_DIGITS, 5)
        + "-"
        + _pick(UPPER_DIGITS, 5),
    ),
    _plant(
        "Mapbox secret token",
        "sk." + _b64json({"u": "acme", "a": _pick(LOWER_DIGITS, 25)}, urlsafe=True) + "." + _pick(URLSAFE, 22),
    ),
    _plant("Anthropic admin key", "sk-ant-admin01-" + _pick(URLSAFE, 93) + "AA"),
    _plant("Atlassian API token", "ATATT3xFfGF0" + _pick(URLSAFE, 170) + "=" + _pick(UPPER_DIGITS, 8)),
    _plant("Doppler token", "dp.pt." + _pick(ALNUM, 43)),
    _plant("Dynatrace token", "dt0c01." + _pick(UPPER_DIGITS, 24) + "." + _pick(ALNUM, 64)),
    _plant("New Relic user key", "NRAK-" + _pick(UPPER_DIGITS, 27)),
    _plant("Notion token", "ntn_" + _pick(string.digits, 11) + _pick(ALNUM, 35)),
    _plant("Groq API key", "gsk_" + _pick(ALNUM, 52)),
    _plant("Supabase access token", "sbp_" + _pick(HEX, 40)),
    _plant("Terraform Cloud token", _pick(ALNUM, 14) + ".atlasv1." + _pick(URLSAFE, 67)),
    _plant("Heroku API key", "HRKU-AA" + _pick(URLSAFE, 58)),
    _plant("Azure AD client secret", _pick(ALNUM, 3) + "8Q~" + _pick(URLSAFE + "~.", 34)),
    _plant(
        "Azure SAS signature",
        _pick(ALNUM + "%", 43) + "%3D",
        "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&se=2026-12-01&sr=b&sp=r&sig=",
    ),
    _plant("Mailchimp API key", _pick(HEX, 32) + "-us21"),
    _plant("Fly.io token", "fm2_" + _pick(B64, 140)),
    _plant("Perplexity API key", "pplx-" + _pick(ALNUM, 48)),
    _plant("RubyGems API key", "rubygems_" + _pick(HEX, 48)),
    _plant(
        "Discord webhook", "https://discord.com/api/webhooks/" + _pick(string.digits, 18) + "/" + _pick(URLSAFE, 68)
    ),
    # Structured keys: a secret key's value in JSON text, whatever it holds (words and spaces,
    # a number), where no value pattern would know it for a secret.
    _plant("JSON password of words", "correct horse battery staple", '{"password": "', '", "user": "app"}'),
    _plant("JSON client secret of words", "blue lemonade sunrise", '  "client_secret": "', '",'),
    _plant("JSON passphrase of words", "my dog has fleas today", '{"passphrase": "', '"}'),
    _plant("JSON cookie header", "sid=" + _pick(ALNUM, 6) + " lang=en", '{"Cookie": "', '"}'),
    _plant("JSON numeric API key", _pick(string.digits, 12), '{"X-Api-Key": ', "}"),
    # URL credentials whose password holds `/`, `@`, `:` and %-escapes.
    _plant(
        "URL password with / @ :",
        "pa/" + _pick(ALNUM, 6) + "@w:" + _pick(ALNUM, 4) + "%40z",
        "postgres://app:",
        "@db.internal:5432/app",
    ),
    _plant("URL password ending in @", _pick(ALNUM, 8) + "@", "https://deploy:", "@git.example.com/repo.git"),
]


def _solana_secret_key() -> str:
    """A Solana keypair's secret key as wallets export it: base58 of the seed and its public key."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    seed = _bytes(32)
    public = Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return _base58(seed + public)


def _jwt_spaced_payload() -> str:
    """A JWT whose payload JSON starts with a space or a newline, so its base64 is not `eyJ`."""
    header = _b64json({"alg": "HS256", "typ": "JWT"}, urlsafe=True)
    body = '{\n  "sub": "' + _pick(string.digits, 10) + '",\n  "role": "admin",\n  "iat": 1764547200\n}'
    payload = base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")
    return f"{header}.{payload}.{_pick(URLSAFE, 43)}"


# Nine shapes that once went through in clear (issue #39), each in a realistic setting.
_WRAPPED_KEY = base64.b64encode(("sk-proj-" + _pick(ALNUM, 40)).encode()).decode()
SECRETS += [
    _plant(
        "Key wrapped in base64, decoded in the command",
        _WRAPPED_KEY,
        'export OPENAI_API_KEY="$(echo ',
        ' | base64 -d)"',
    ),
    _plant(
        "PowerShell ConvertTo-SecureString -AsPlainText",
        _password(),
        '$cred = New-Object PSCredential("svc", (ConvertTo-SecureString "',
        '" -AsPlainText -Force))',
    ),
    _plant("0x hex private key in a variable", "0x" + _pick(HEX, 64), 'const deployerKey = "', '";'),
    _plant("Bare base58 Solana secret key", _solana_secret_key(), "Exported: "),
    _plant(
        "docker login -p", _pick(ALNUM, 10) + "#" + _pick(ALNUM, 5), "docker login -u ci -p ", " registry.example.com"
    ),
    _plant("htpasswd -b", _pick(ALNUM, 8) + "!" + _pick(string.digits, 2), "htpasswd -bc /etc/nginx/.htpasswd admin "),
    _plant("Legacy Vault s. token", "s." + _pick(ALNUM, 21) + "Q7x", "vault login "),
    _plant(".env password with a short name", _pick(ALNUM, 9) + "!" + _pick(string.digits, 3), "ADMIN_PW="),
    _plant("JWT whose payload is not eyJ", _jwt_spaced_payload(), "Authorization header was "),
    # Issue #48: letters only, under 16 characters, in a .env line; a passphrase of words.
    _plant(".env password of letters only", _pick(string.ascii_lowercase, 11), "MYSQL_ROOT_PASSWORD="),
    _plant(
        "Quoted passphrase of words",
        " ".join(_pick(string.ascii_lowercase, 5) for _ in range(4)),
        'password = "',
        '"',
    ),
]
# A private key cut off before its END line (a Read with a limit, `head`): at an even place, so
# that it is planted in the transcript (in one tool result, whose rest it takes with it), not in
# a file that other planted secrets follow.
_TRUNCATED = Planted(
    "Private key cut before its END line",
    "-----BEGIN PRIVATE KEY-----\n" + "\n".join(body := [_pick(B64, 64) for _ in range(3)]),
    tuple(body),
)
SECRETS.insert(0, _TRUNCATED)


def stdlib_sources() -> list[Path]:
    """Real code with no secrets that talks about passwords, tokens and keys all the time: the
    Python standard library's own sources."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in stdlib.glob("*.py") if p.stat().st_size < 400_000)
    return (
        files
        + sorted(stdlib.glob("email/*.py"))
        + sorted(stdlib.glob("http/*.py"))
        + sorted(stdlib.glob("urllib/*.py"))
    )


def _look_alike_lines(rng: random.Random) -> list[str]:
    """One of each kind of line that is shaped like a secret and is none: what the wallet, hash
    and assignment patterns must leave alone."""

    def pick(alphabet: str, n: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    def b58(n: int) -> str:
        number, out = int.from_bytes(bytes(rng.randrange(256) for _ in range(n)), "big"), ""
        while number:
            number, digit = divmod(number, 58)
            out = BASE58[digit] + out
        return out

    signature, pubkey, sha, commit = b58(64), b58(32), pick(HEX, 64), pick(HEX, 40)
    prose = " ".join(rng.choice(BIP39_WORDS) for _ in range(12))
    encoded = base64.b64encode(f"The {prose} report for build {rng.randrange(10_000)} is ready.".encode()).decode()
    return [
        f"Signature: {signature}",
        f"solana confirm -v {signature}",
        f"https://explorer.solana.com/tx/{signature}?cluster=devnet",
        f'{{"signature": "{signature}", "slot": {rng.randrange(10**9)}, "err": null}}',
        f"Transaction signature: {signature}",
        f'txid = "{signature}"',
        f"pubkey: {pubkey}",
        f"Program Id: {pubkey}",
        f'"owner": "{pubkey}", "lamports": {rng.randrange(10**9)}',
        f'keypair = "{pubkey}"',
        f"{sha}  logs/precompact-saves/snapshot_{rng.randrange(10**6)}.json",
        f"sha256: {sha}",
        f'"snapshot_sha256": "{sha}",',
        f"Digest: sha256:{sha}",
        f'ETag: "{sha}"',
        f"Transaction hash: 0x{sha}",
        f'"blockHash": "0x{pick(HEX, 64)}",',
        f"topics[0] = 0x{pick(HEX, 64)}",
        f"seed_hash: 0x{pick(HEX, 64)}",
        f"commit {commit}",
        f"Merge: {commit[:7]} {pick(HEX, 7)}",
        f"{commit[:7]} fix the flaky test in the worker",
        f"git checkout {commit}",
        f'"content": "{encoded}"',
        f"data:image/png;base64,{base64.b64encode(bytes(rng.randrange(256) for _ in range(48))).decode()}",
        f"request_id: {pick(HEX, 8)}-{pick(HEX, 4)}-{pick(HEX, 4)}-{pick(HEX, 4)}-{pick(HEX, 12)}",
        f"The mnemonic is {prose}, or so the tutorial says, but never type it into a terminal.",
        "token_count = len(tokens)",
        "secret_name = args.secret_name",
        "password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=12))",
        'api_key_header = APIKeyHeader(name="X-API-Key", auto_error=False)',
        'private_key_path = Path("~/.ssh/id_ed25519").expanduser()',
        f"random.seed({rng.randrange(10**6)})",
        "mnemonic = generate_mnemonic(strength=256)",
        "cookie_jar = http.cookiejar.CookieJar()",
        'auth_token = request.headers.get("Authorization", "")',
        'TOKEN_URL = "https://oauth2.googleapis.com/token"',
        "echo $REGISTRY_TOKEN | docker login --username deploy --password-stdin registry.example.com",
        "mysql -h db.internal -u root -p app",
        "curl -u deploy https://api.example.com/v1/status",
        "Cookie: theme=dark; lang=en",
        "Set-Cookie: theme=dark; Expires=Thu, 21 Oct 2027 07:28:00 GMT; Path=/",
        "let secret = load_secret(&config.secret_path)?;",
        'const token = await getToken({ audience: "api" });',
        "export DATABASE_PASSWORD=$(cat /run/secrets/db_password)",
        'PASSWORD="${DB_PASSWORD:-}"',
        "password: ${{ secrets.DB_PASSWORD }}",
        'password = "<your password here>"',
        "machine learning models need a login page and a password reset flow",
        f"SSH_AUTH_SOCK=/tmp/ssh-{pick(ALNUM, 10)}/agent.{rng.randrange(10**5)}",
        f'"sort_key": "created_at_desc_{rng.randrange(2000, 2030)}_index"',
        "const [token, setToken] = useState(null);",
        # Near misses of the nine shapes above (issue #39): the same words, no secret.
        f'echo "{base64.b64encode(f"build {rng.randrange(10**4)} passed on main".encode()).decode()}" | base64 -d',
        f"echo {base64.b64encode(f'/etc/nginx/sites-{rng.randrange(99)}.conf'.encode()).decode()} | base64 --decode",
        "$cred = ConvertTo-SecureString $env:DEPLOY_PASSWORD -AsPlainText -Force",
        "$secure = ConvertTo-SecureString $encrypted -Key $aesKey",
        f'const txHash = "0x{pick(HEX, 64)}";',
        f'publicKey = "0x{pick(HEX, 64)}"',
        f"storageSlotKey = 0x{pick(HEX, 64)}",
        signature,
        f"{signature}  finalized  slot {rng.randrange(10**9)}",
        "docker run -p 8080:80 -p 8443:443 nginx:1.27",
        'docker login -u ci -p "$CI_REGISTRY_PASSWORD" "$CI_REGISTRY"',
        "htpasswd -c /etc/nginx/.htpasswd admin",
        "htpasswd -v .htpasswd admin",
        f"for s in sessions: s.{pick(string.ascii_lowercase, 10)}()",
        "vault token lookup -format=json",
        "ADMIN_PW_FILE=/run/secrets/admin_pw",
        "DB_PW=${DB_PW:?set it}",
        # Near misses of the two shapes of issue #48.
        f"PASSWORD_MIN_LENGTH={rng.randrange(8, 64)}",
        'password = "must be at least eight characters"',
        'token: "open the door"',
        f"cursor: {_b64json({'page': rng.randrange(99)}, urlsafe=True)}.{pick(ALNUM, 12)}.{pick(ALNUM, 12)}",
    ]


def shell_quoted(text: str) -> str:
    """`text` inside a shell's double quotes, as a model writes it: `echo "KEY=\\"value\\""`."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$").replace("`", "\\`")


# The ways the agents write a planted text down: `scripts/reliability.py --redaction-only` counts
# the formats redacted in each (docs/security.md).
SHAPES = {
    "as text": lambda text: f"see {text} here",
    "in a shell's escaped double quotes": lambda text: f'echo "{shell_quoted(text)}" >> .env',
    "in a Codex tool call's arguments (heredoc)": lambda text: json.dumps(
        {"cmd": f"cat >> .env <<'EOF'\n{text}\nEOF"}, separators=(",", ":")
    ),
    "in a Codex tool call's arguments (printf)": lambda text: json.dumps(
        {"cmd": f"printf '%s\\n' '{text}' > settings.cfg"}, separators=(",", ":")
    ),
    "in an MCP tool's JSON answer": lambda text: json.dumps(
        {"path": "config/deploy.env", "content": f"# deploy settings\n{text}\n"}
    ),
    "in a transcript line kept unparsed (malformed)": lambda text: (
        json.dumps({"type": "user", "message": {"content": f"loaded:\n{text}\ndone"}})[:-1] + ",}"
    ),
    # JSON that does not start the text: its strings' escapes hide a line's start everywhere.
    "in a JSON file as the Read tool shows it": lambda text: _numbered(
        json.dumps({"path": "deploy.env", "content": f"# deploy settings\n{text}\n"}, indent=2)
    ),
    "in `curl -i` output of a JSON answer": lambda text: (
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + json.dumps({"content": f"# settings\n{text}\n"})
    ),
    "in a log line holding JSON": lambda text: (
        "2026-12-05T10:00:00Z INFO loaded " + json.dumps({"content": f"# deploy settings\n{text}\n"})
    ),
    "in a server-sent event's data": lambda text: "event: delta\ndata: " + json.dumps({"delta": f"ok\n{text}\n"}),
    "in a JSON string literal": lambda text: json.dumps(f"# settings\n{text}\n"),
    "in JSON with `/` escaped (PHP, Slack), after a prefix": lambda text: (
        "response: " + json.dumps({"content": f"# deploy settings\n{text}\n"}).replace("/", "\\/")
    ),
    "in JSON with punctuation `\\u`-escaped, after a prefix": lambda text: (
        'response: {"content": "' + "".join(c if c.isalnum() else f"\\u{ord(c):04x}" for c in text) + '"}'
    ),
    # A quote the text before the JSON leaves open (an inch mark) pairs the line's quotes the
    # other way round (review15a F7).
    "in a log line holding JSON after a stray quote": lambda text: (
        '2026-12-05T10:00:00Z INFO 27" screen loaded ' + json.dumps({"content": f"# deploy settings\n{text}\n"})
    ),
    "in JSON with `/` escaped after a stray quote": lambda text: (
        'response to "ok: ' + json.dumps({"content": f"# deploy settings\n{text}\n"}).replace("/", "\\/")
    ),
}


def _numbered(text: str) -> str:
    """`text` as Claude Code's Read tool returns a file: each line after its number and an arrow."""
    return "".join(f"{n:>6}\u2192{line}\n" for n, line in enumerate(text.splitlines(), 1))


# The planted formats that are command lines: each is also given as its words (`shlex.split`),
# as Codex's `command` array and an MCP tool's `args` hold a command.
COMMAND_LINE_FORMATS = (
    "mysql -p password",
    "--password=value",
    "--password value",
    "curl -u user:password",
    "sshpass -p",
    "redis-cli -a",
    "openssl pass:",
    "X-API-Key header",
    "docker login -p",
    "htpasswd -b",
)


def leaked(planted: Planted, text: str) -> bool:
    """Whether a sensitive value of `planted` is in `text`: as it is, as a shell's double quotes
    escape it, or either escaped inside one or two JSON strings."""
    forms = set()
    for value in planted.sensitive:
        for quoted in (value, shell_quoted(value)):
            once = json.dumps(quoted)[1:-1]
            forms |= {quoted, once, json.dumps(once)[1:-1]}
    return any(form in text for form in forms)


def look_alikes(count: int = 40) -> str:
    """`count` of each look-alike line, each with its own random values."""
    rng = random.Random(20261201)
    return "\n".join(line for _ in range(count) for line in _look_alike_lines(rng))


def clean_corpus() -> list[tuple[str, str]]:
    """Real code and prose with no secrets (the standard library's sources and this project's
    documents) and generated look-alikes: transaction signatures, public keys, hashes, commit
    ids, base64 data and code that names secrets."""
    files = stdlib_sources() + [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    return [(str(p), p.read_text(encoding="utf-8", errors="replace")) for p in files if p.is_file()] + [
        ("look-alikes", look_alikes())
    ]


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
    from precompact.transcript.redact import Redactor

    redactor = Redactor()
    lines = size = 0
    changed = []
    for name, text in clean_corpus():
        for line in text.splitlines():
            lines += 1
            size += len(line)
            if redactor.redact(line) != line:
                changed.append(f"{Path(name).name}: {line.strip()}")
    return FalsePositives(lines, size, changed)
