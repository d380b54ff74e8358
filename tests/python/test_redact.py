"""Redaction: each secret kind is replaced and counted; ordinary code and prose are left alone."""

import json

import pytest

from precompact.redact import Redactor

PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234567890abcdef\n-----END RSA PRIVATE KEY-----"
KEYPAIR = json.dumps(list(range(64)))
SECRETS = [
    ("private_key", PEM),
    ("private_key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----"),
    ("aws_access_key", "AKIAIOSFODNN7EXAMPLE"),
    ("aws_secret_key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("github_token", "ghp_" + "a1B2c3D4e5" * 4),
    ("github_token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"),
    ("gitlab_token", "glpat-AbCdEfGhIjKlMnOpQrSt"),
    ("slack_token", "xoxb-1234567890-0987654321-AbCdEfGhIjKl"),
    ("slack_webhook", "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"),
    ("anthropic_key", "sk-ant-api03-" + "Zx9" * 10),
    ("openai_key", "sk-proj-" + "Ab1" * 10),
    ("stripe_key", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"),
    ("google_api_key", "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    ("npm_token", "npm_" + "a" * 36),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("url_credentials", "postgres://admin:Sup3rS3cret@db.internal:5432/app"),
    ("solana_keypair", KEYPAIR),
    ("secret_assignment", "password=correct-horse-battery"),
    ("secret_assignment", "DATABASE_PASSWORD=hunter22hunter"),
    ("secret_assignment", 'api_key: "abcd1234efgh5678"'),
    ("secret_assignment", "export GITHUB_TOKEN=notaghptokenbutsecret"),
]


@pytest.mark.parametrize("kind,secret", SECRETS)
def test_each_kind_is_redacted_and_counted(kind, secret):
    redactor = Redactor()
    out = redactor.value(f"before {secret} after")
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out
    assert out.startswith("before ")
    assert redactor.counts[kind] == 1


def test_nested_values_and_keys_are_redacted():
    redactor = Redactor()
    value = {"tool_result": [{"text": "token=abcdef123456"}], "AKIAIOSFODNN7EXAMPLE": 1}
    out = redactor.value(value)
    assert "abcdef123456" not in json.dumps(out)
    assert "AKIAIOSFODNN7EXAMPLE" not in json.dumps(out)
    assert redactor.summary()["total"] == 2


def test_extra_patterns_from_configuration():
    redactor = Redactor(extra={"internal_id": r"ACME-[0-9]{6}"})
    assert redactor.value("ticket ACME-123456") == "ticket [REDACTED:internal_id]"


CLEAN = [
    "def tokenize(text): return text.split()",
    "for i in range(64): print(i)",
    "The password field must be at least 12 characters.",
    "https://github.com/anza-xyz/agave/blob/master/README.md",
    "git commit -m 'Fix secret handling docs'",
    "x = [1, 2, 3]",
    "sha256: 886ea5938187c05455f48ed601e6492157d692452841572f65366920fca32af1",
    "let token = next_token(&mut lexer);",
    "Skill-based routing: sk-learn is not a key",
]


@pytest.mark.parametrize("text", CLEAN)
def test_ordinary_code_and_prose_are_untouched(text):
    redactor = Redactor()
    assert redactor.value(text) == text
    assert redactor.summary()["total"] == 0


def test_code_that_merely_names_a_secret_is_untouched():
    for text in ["token = self.token", "password = getpass()", "secret: Option<String>,"]:
        assert Redactor().value(text) == text


USAGE = {"input_tokens": 12, "cache_read_input_tokens": 150000, "cache_creation_input_tokens": 900, "output_tokens": 9}
ORDINARY = [
    json.dumps({"type": "assistant", "message": {"id": "m1", "usage": USAGE, "content": [{"type": "text", "text": "The test is fixed."}]}}).encode(),
    json.dumps({"type": "user", "message": {"content": [{"type": "tool_result", "content": "1\tdef add(a, b):\n2\t    return a + b"}]}}).encode(),
]


def suspects(redactor: Redactor, lines: list[bytes]) -> list[int]:
    block = b"\n".join(lines) + b"\n"
    found = redactor.suspect_lines(block, block.split(b"\n"))
    return [n for n in range(len(lines)) if n in found]


@pytest.mark.parametrize("kind,secret", SECRETS)
def test_the_line_gate_lets_every_secret_through_however_it_is_embedded(kind, secret):
    redactor = Redactor()
    shapes = [
        {"type": "user", "message": {"content": f"see {secret}"}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "content": json.dumps({"config": secret}, indent=2)}]}},
        {"type": "assistant", "message": {"usage": USAGE, "content": [{"type": "tool_use", "input": {"command": f"echo '{secret}'"}}]}},
    ]
    for entry in shapes:
        line = json.dumps(entry, ensure_ascii=False).encode()
        # Among ordinary lines in one block: exactly the line that holds the secret is flagged.
        assert suspects(redactor, [*ORDINARY, line, *ORDINARY]) == [len(ORDINARY)], line
        assert secret not in json.dumps(redactor.value(entry), ensure_ascii=False)


def test_the_line_gate_skips_ordinary_lines():
    redactor = Redactor()
    assert suspects(redactor, ORDINARY * 3) == []
    escaped = ORDINARY[0].replace(b"fixed.", b"fixed \\u00e9")  # an escape could hide a literal
    named = ORDINARY[0].replace(b"fixed.", b"a token")  # the word, not a usage key
    assert suspects(redactor, [*ORDINARY, escaped, *ORDINARY, named]) == [2, 5]
    assert suspects(Redactor(extra={"ticket": "TICKET-[0-9]+"}), ORDINARY) == [0, 1]  # configured patterns have no gate


def test_an_assignment_is_redacted_from_its_keyword_on():
    assert Redactor().value("export DB_PASSWORD=hunter22hunter") == "export DB_[REDACTED:secret_assignment]"


def test_text_whose_lower_case_is_longer_is_still_redacted():
    # "İ" lower-cases to two characters, so positions found in the lower-cased text do not carry
    # over: the word-gated patterns are searched for everywhere instead.
    redactor = Redactor()
    out = redactor.value({"city": "İstanbul", "env": "DB_PASSWORD=hunter22hunter", "auth": "Authorization: Bearer abcdefghijklmnop"})
    assert "hunter22hunter" not in json.dumps(out) and "abcdefghijklmnop" not in json.dumps(out)
    assert redactor.counts == {"secret_assignment": 1, "auth_header": 1}
