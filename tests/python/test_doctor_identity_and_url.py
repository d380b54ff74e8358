"""`precompact doctor`'s encryption identity and git URL checks (review 5, F6 and F9).

The identity check exists to catch the one failure that loses every remote copy on a new machine:
an identity that cannot read what Layer 2 seals to `encryption.recipients`. It is ✓ only when the
identity opens one of them (read and tried as Layer 2 reads it), never for a file merely there.
The git URL checks show the repository's remote URL without its credentials (doctor's output is
pasted into issues), and their fix line is one `trust` accepts."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pyrage  # type: ignore[import-untyped]
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from precompact.boundary import git_env
from precompact.config import settings as configuration
from precompact.config.endpoint import git_url_shown
from precompact.remote import encryption
from support.commands import precompact
from support.projects import Project, new_project, trust

TOKEN = "ghp_SECRETTOKEN1234567890abcdef"
KEYED_URL = f"https://alice:{TOKEN}@127.0.0.1:9/alice/proj.git"
SHOWN_URL = "https://127.0.0.1:9/alice/proj.git"


def doctor(project: Project, *args: str) -> subprocess.CompletedProcess:
    home = project.path.parent / "home"
    home.mkdir(exist_ok=True)
    return precompact(project.path, "doctor", *args, home=home)


def check(project: Project, name: str) -> tuple[str, dict]:
    """The check's text line and its --json object."""
    [line] = [line for line in doctor(project).stdout.splitlines() if line[2:].startswith(f"{name}: ")]
    [found] = [c for c in json.loads(doctor(project, "--json").stdout) if c["check"] == name]
    return line, found


@pytest.fixture
def encrypted(tmp_path) -> Project:
    return new_project(tmp_path, "proj", git_layer=False, chain_layer=False)


def identity_file(project: Project) -> Path:
    identity = configuration.load(project.path).identity
    assert identity is not None
    return identity


def test_the_identity_that_opens_the_recipients_is_passed_and_named_with_them(encrypted):
    [recipient] = configuration.load(encrypted.path).recipients
    line, found = check(encrypted, "encryption identity")
    assert line.startswith("✓ ") and recipient in line, line
    assert found["ok"] and found["fix"] is None


def test_another_identity_at_the_path_fails_and_the_fix_it_names_restores_the_check(encrypted, tmp_path):
    identity = identity_file(encrypted)
    backup = tmp_path / "backup.txt"
    backup.write_bytes(identity.read_bytes())
    [recipient] = configuration.load(encrypted.path).recipients
    identity.write_text(f"{pyrage.x25519.Identity.generate()}\n")  # mode 0600 kept

    line, found = check(encrypted, "encryption identity")
    assert line == (
        f"✗ encryption identity: {identity} opens none of the recipients your savepoints are sealed to ({recipient}):"
        " the remote copies cannot be read here; fix: precompact key import FILE (the identity you backed up)"
    )
    assert not found["ok"] and found["fix"] == "precompact key import FILE (the identity you backed up)"
    assert doctor(encrypted).returncode == 1

    imported = precompact(encrypted.path, "key", "import", str(backup))
    assert imported.returncode == 0, imported.stderr
    line, _ = check(encrypted, "encryption identity")
    assert line.startswith("✓ ") and recipient in line, line


def test_a_file_that_is_no_identity_fails_with_the_reason(encrypted):
    identity_file(encrypted).write_text("not an age identity\n")
    line, found = check(encrypted, "encryption identity")
    assert line.startswith(
        f"✗ encryption identity: {identity_file(encrypted)} holds a line that is not an age identity"
    )
    assert found["fix"] == "precompact key import FILE (the identity you backed up)"


def test_an_identity_others_can_read_fails_with_the_chmod_that_fixes_it(encrypted):
    identity = identity_file(encrypted)
    identity.chmod(0o644)
    line, found = check(encrypted, "encryption identity")
    assert line.startswith("✗ ") and "must be a regular file of yours, mode 0600" in line, line
    assert found["fix"] == f"chmod 600 {identity}"
    identity.chmod(0o600)
    assert check(encrypted, "encryption identity")[0].startswith("✓ ")


def test_a_missing_identity_fails(encrypted):
    identity_file(encrypted).unlink()
    line, found = check(encrypted, "encryption identity")
    assert line.startswith("✗ ") and "missing: the pushed copies cannot be read back" in line, line
    assert found["fix"] == "precompact key import FILE (the identity you backed up)"


def test_an_ssh_identity_opens_its_own_recipient_and_no_other():
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()
    other = str(pyrage.x25519.Identity.generate().to_public())
    identities = encryption.parse_identities(private, "id_ed25519")
    assert encryption.public_keys(private, "id_ed25519") == [], "no public half to compare: it must be tried"
    assert encryption.opened_recipients(identities, (other, public)) == [public]
    assert encryption.opened_recipients(identities, (other,)) == []


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (KEYED_URL, SHOWN_URL),
        (f"https://{TOKEN}@github.com/alice/proj.git", "https://github.com/alice/proj.git"),  # a token as the user
        ("https://:pass1234@host/x.git", "https://host/x.git"),
        ("ssh://git:pass1234@host:2222/x.git", "ssh://git@host:2222/x.git"),  # an ssh login is no secret
        ("ssh://git@host/x.git", "ssh://git@host/x.git"),
        ("git@github.com:alice/proj.git", "git@github.com:alice/proj.git"),
        ("/srv/git/proj.git", "/srv/git/proj.git"),
        ("https://host/team/@scope/x.git", "https://host/team/@scope/x.git"),  # an @ in the path
        ("https://host:8080/team/%40scope/x.git", "https://host:8080/team/%40scope/x.git"),  # a port, then an @
        # a password with a slash, which git would not take as one: hidden all the same
        ("https://alice:pa/ss1234@host/x.git", "https://…@host/x.git"),
        ("https://host/x.git?private_token=glpat-abc#f", "https://host/x.git?…"),  # a query may hold a token
        ("https://host/x.git#glpat-abc", "https://host/x.git#…"),
    ],
)
def test_a_remote_url_is_shown_without_its_credentials(url, shown):
    assert git_url_shown(url) == shown


# Tokens git hosts issue, in their real shapes (fake): each one a URL's path may carry.
PATH_TOKENS = {
    "github": "ghp_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7d",
    "github fine-grained": "github_pat_11ABCDEFG0123456789abc_" + "x" * 59,
    "gitlab": "glpat-" + "aB3-dE6_gH9jK2mN5pQ8",
    "gitlab deploy": "gldt-" + "Zy9Xw8Vu7Ts6Rq5Po4Nm",
    "hugging face": "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ",
}


@pytest.mark.parametrize("token", PATH_TOKENS.values(), ids=PATH_TOKENS.keys())
def test_a_token_in_a_remote_urls_path_is_hidden_and_refused_as_redaction_would_take_it(token):
    from precompact.transcript.redact import Redactor

    assert token not in Redactor().redact(f"see https://git.example.com/{token}/repo.git"), "a token to redaction too"
    for url, shown in [
        (f"https://git.example.com/{token}/repo.git", "https://git.example.com/…/repo.git"),
        (
            f"https://gitlab.example.com/oauth2/{token}/team/repo.git",
            "https://gitlab.example.com/oauth2/…/team/repo.git",
        ),
        (f"https://host:8443/oauth2:{token}/x.git?ref=main", "https://host:8443/…/x.git?…"),
        (f"ssh://git@host:2222/{token}/x.git", "ssh://git@host:2222/…/x.git"),
        (f"git@host:{token}/x.git", "git@host:…/x.git"),
        (f"/srv/git/{token}/x.git", "/srv/git/…/x.git"),
        (f"https://host/{token[:3]}%{ord(token[3]):02X}{token[4:]}/x.git", "https://host/…/x.git"),  # %-escaped
    ]:
        assert git_url_shown(url) == shown, url
        assert "token of a git host's shape" in (git_env.url_problem(url) or ""), url
    assert "token" in (git_env.url_problem(f"https://host/x.git#{token}") or "")


# Credentials as git 2.47 takes them (seen with `git ls-remote`): curl sends `pa%2Fss` as the
# password `pa/ss`; ssh is run for `ssh://alice:pa/ss@host/…` (as the host `alice:pa`), and
# `a@b@host` logs in as `a@b`. Each is a secret written into the shared .precompact.toml.
CREDENTIALED_URLS = {
    "https://alice:pa/ss1234@host/x.git": "password",  # the userinfo runs to the last @
    "https://alice:pa%2Fss@host/x.git": "password",
    "https://alice:pa?ss@host/x.git": "password",
    "https://alice:pa#ss@host/x.git": "password",
    "https://alice:pa/ss@host/team/@scope/x.git": "password",
    "ssh://alice:pa/ss@host/x.git": "password",
    "ssh://git:secret@host:2222/x.git": "password",
    "https://us@er:pw@host/x.git": "password",
    "https://host:8080@host/x.git": "password",  # no port: a user `host`, a password `8080`
    "https://tok@en@host/x.git": "user name",
    "http://9f8e7d6c5b4a39281706f5e4d3c2b1a0@host/x.git": "user name",  # a bare token as the user
}


@pytest.mark.parametrize(("url", "held"), CREDENTIALED_URLS.items())
def test_a_remote_url_holding_credentials_is_refused_wherever_its_userinfo_ends(url, held):
    assert f"holds a {held}" in (git_env.url_problem(url) or ""), url
    shown = git_url_shown(url)
    assert not any(
        secret in shown for secret in ("pa/ss", "pa%2Fss", "pa?ss", "pa#ss", "secret", "pw", "tok", "9f8e")
    ), shown


# `name:digits` then `/`, `?` or `#`, and an `@` later: git 2.47.3 and curl 7.88.1 contact the host
# `alice` on port 2024 (seen: "Could not resolve host: alice"), but whoever wrote it may mean the
# password `2024/Secret`: a password or a port, which nothing tells apart.
PORT_OR_PASSWORD_URLS = [
    "https://alice:2024/Secret@host.example/team/repo.git",
    "https://alice:12345?tok@host.example/repo.git",
    "https://alice:7#secret@host.example/repo.git",
    "ssh://alice:2024/Secret@host.example/repo.git",
    "https://host:8080/team/@scope/x.git",  # a port, or the password `8080/team/`
]


@pytest.mark.parametrize("url", PORT_OR_PASSWORD_URLS)
def test_a_port_or_a_password_of_digits_before_a_later_at_is_refused_and_never_shown(url):
    problem = git_env.url_problem(url) or ""
    assert problem.startswith("holds `name:digits/…@`") and "write an `@` in the path as %40" in problem, url
    assert "credential helper" in problem
    shown = git_url_shown(url)
    assert shown == f"{url.partition('://')[0]}://…@{url.rpartition('@')[2]}", shown
    assert not any(secret in shown for secret in ("2024", "Secret", "12345", "tok", "secret", "8080")), shown


@pytest.mark.parametrize(
    "url",
    [
        "https://host/team/@scope/x.git",  # an @ in the path is no user
        "https://host:8080/team/%40scope/x.git",  # written as the ambiguous shape's refusal says
        "ssh://git@host:2222/x.git",  # an ssh login is no secret
        "ssh://git@host/team/@scope/x.git",
        "https://[::1]:8443/x@y.git",
    ],
)
def test_a_remote_url_whose_at_lies_in_its_path_or_names_an_ssh_login_is_accepted(url):
    assert git_env.url_problem(url) is None


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/alice/proj.git",
        "https://gitlab.com/group/sub-group/ghp_docs.git",  # a prefix alone is no token
        "https://huggingface.co/hf_internal_testing/tiny-random-bert",
        "https://git.overleaf.com/5f1a2b3c4d5e6f7a8b9c0d1e",  # an id, not of a token's shape
        "git@github.com:alice/glpat-notes.git",
        "/srv/git/proj.git",
    ],
)
def test_a_remote_url_whose_path_holds_no_token_is_shown_whole_and_accepted(url):
    assert git_url_shown(url) == url
    assert git_env.url_problem(url) is None


def test_trust_refuses_a_git_url_with_a_token_in_its_path_naming_it_without_the_token(tmp_path):
    project = new_project(tmp_path, "proj", git_layer=True, chain_layer=False)
    token = PATH_TOKENS["gitlab"]
    config = project.path / configuration.CONFIG_NAME
    config.write_text(
        config.read_text().replace(f'url = "{project.remote}"', f'url = "https://host/oauth2/{token}/proj.git"')
    )
    refused = precompact(project.path, "trust", "--yes")
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
    assert token not in refused.stdout + refused.stderr
    assert 'git.url "https://host/oauth2/…/proj.git" holds a token' in refused.stderr, refused.stderr
    assert "without the token and let a credential helper" in refused.stderr


def git_project(tmp_path: Path) -> Project:
    project = new_project(tmp_path, "proj", git_layer=True, chain_layer=False)
    subprocess.run(["git", "remote", "set-url", "origin", KEYED_URL], cwd=project.path, check=True)
    return project


def test_doctor_shows_the_repositorys_url_without_its_token_and_the_fix_it_names_is_accepted(tmp_path):
    project = git_project(tmp_path)
    text, as_json = doctor(project).stdout, doctor(project, "--json").stdout
    assert TOKEN not in text and TOKEN not in as_json
    line, found = check(project, "git url")
    assert line.startswith(
        f'✗ git url: remote "origin" in the repository\'s git configuration is "{SHOWN_URL}", not git.url "{project.remote}"'
    ), line
    assert "credential helper" in found["fix"]

    project.set_git_url(SHOWN_URL)  # the fix: the URL as shown; trust accepts it
    line, found = check(project, "git url")
    assert line.startswith(f'✓ git url: savepoints go only to git.url "{SHOWN_URL}", as approved; ') and found["ok"]
    assert TOKEN not in doctor(project, "--json").stdout


def test_the_url_to_record_is_named_without_its_token_and_trust_takes_it(tmp_path):
    project = git_project(tmp_path)
    config = project.path / configuration.CONFIG_NAME
    config.write_text("".join(line for line in config.read_text().splitlines(True) if not line.startswith("url = ")))
    trust(project.path)
    text, as_json = doctor(project).stdout, doctor(project, "--json").stdout
    assert TOKEN not in text and TOKEN not in as_json, "neither the git url nor the git remote check names it"
    _, found = check(project, "git url")
    assert found["fix"].startswith(f'add url = "{SHOWN_URL}" under [git] in .precompact.toml (as shown: '), found

    config.write_text(config.read_text().replace("[git]\n", f'[git]\nurl = "{SHOWN_URL}"\n', 1))
    trust(project.path)
    assert check(project, "git url")[1]["ok"]


TOKEN_AS_USER_URL = f"https://{TOKEN}@127.0.0.1:9/alice/proj.git"


def without_git_url(project: Project) -> Path:
    """`project`'s configuration as one written before git.url existed."""
    config = project.path / configuration.CONFIG_NAME
    config.write_text("".join(line for line in config.read_text().splitlines(True) if not line.startswith("url = ")))
    return config


@pytest.mark.parametrize("url", [KEYED_URL, TOKEN_AS_USER_URL])
def test_trust_shows_the_remotes_url_without_its_credentials_and_a_change_to_them_still_shows(tmp_path, url):
    project = git_project(tmp_path)
    subprocess.run(["git", "remote", "set-url", "origin", url], cwd=project.path, check=True)
    without_git_url(project)
    approved = precompact(project.path, "trust", "--yes")
    assert approved.returncode == 0, approved.stderr
    assert TOKEN not in approved.stdout + approved.stderr
    assert f'git.remote URL = "{SHOWN_URL}" (its credentials, query or fragment not shown; sha256 ' in approved.stdout

    subprocess.run(
        ["git", "remote", "set-url", "origin", url.replace(TOKEN, "ghp_OTHERTOKEN0987654321")],
        cwd=project.path,
        check=True,
    )
    (project.path / configuration.CONFIG_NAME).write_text((project.path / configuration.CONFIG_NAME).read_text() + "\n")
    review = precompact(project.path, "trust", stdin="n\n")
    assert "ghp_OTHERTOKEN" not in review.stdout + review.stderr and TOKEN not in review.stdout + review.stderr
    changed = [line for line in review.stdout.splitlines() if "git.remote URL" in line]
    assert [line[0] for line in changed] == ["-", "+"], review.stdout


def test_init_refuses_a_remote_whose_user_is_a_token_naming_the_url_without_it_and_a_credential_helper(tmp_path):
    project = git_project(tmp_path)
    without_git_url(project)
    trust(project.path)
    subprocess.run(["git", "remote", "set-url", "origin", TOKEN_AS_USER_URL], cwd=project.path, check=True)
    refused = precompact(project.path, "init", "--force", "--yes")
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
    assert TOKEN not in refused.stdout + refused.stderr
    assert "holds a user name (user@), which on https:// may be a token" in refused.stderr, refused.stderr
    assert f'give "{SHOWN_URL}" and let a credential helper' in refused.stderr and "--url" in refused.stderr
    assert "url = " not in (project.path / configuration.CONFIG_NAME).read_text(), "nothing recorded"


@pytest.mark.parametrize("url", ["ssh://git@127.0.0.1:9/alice/proj.git", "git@127.0.0.1:alice/proj.git"])
def test_an_ssh_login_stays_a_valid_git_url(tmp_path, url):
    project = git_project(tmp_path)
    project.set_git_url(url)
    line, _ = check(project, "git url")
    assert f'git.url "{url}"' in line, line


# --- the other machine's savepoints, which the identity here cannot read ---------------------------


def test_status_says_in_one_line_that_what_is_sealed_cannot_be_read_here_naming_key_import(encrypted, tmp_path):
    identity = identity_file(encrypted)
    backup = tmp_path / "backup.txt"
    backup.write_bytes(identity.read_bytes())
    assert "cannot be read or restored here" not in precompact(encrypted.path, "status").stdout
    identity.write_text(f"{pyrage.x25519.Identity.generate()}\n")  # another machine's `init`

    said = precompact(encrypted.path, "status")
    assert said.returncode == 0, said.stderr
    [line] = [line for line in said.stdout.splitlines() if "cannot be read or restored here" in line]
    assert line.startswith(f"✗ {identity} opens none of the recipients your savepoints are sealed to"), line
    assert "(another machine's, every copy on origin)" in line, line
    assert line.endswith("; fix: precompact key import FILE (the identity you backed up)"), line
    # --json gives the same line (the text form's after its ✗), as `unreadable_here`.
    as_json = precompact(encrypted.path, "status", "--json")
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["unreadable_here"] == line.removeprefix("✗ ")

    assert precompact(encrypted.path, "key", "import", str(backup)).returncode == 0
    assert "cannot be read or restored here" not in precompact(encrypted.path, "status").stdout
    assert json.loads(precompact(encrypted.path, "status", "--json").stdout)["unreadable_here"] is None


def test_init_whose_new_identity_cannot_read_the_branch_the_remote_holds_warns_naming_key_import(tmp_path):
    first = new_project(tmp_path, "first", git_layer=True, chain_layer=False)
    assert precompact(first.path, "savepoint", "--no-transcript").returncode == 3  # chain off
    second = tmp_path / "second"  # another machine: its own keys, the same remote
    subprocess.run(["git", "clone", "-q", str(first.remote), str(second)], check=True)
    elsewhere = {"XDG_CONFIG_HOME": str(tmp_path / "second-config")}
    (tmp_path / "keys").mkdir()  # its identity is made beside its keypair: not the first one's
    args = (
        "init",
        "--yes",
        "--instance",
        first.instance,
        "--chain",
        "off",
        "--keypair",
        str(tmp_path / "keys" / "second-id.json"),
    )
    made = precompact(second, *args, "--url", str(first.remote), env=elsewhere)
    assert made.returncode == 0, made.stderr
    [warning] = [line for line in made.stderr.splitlines() if "already holds savepoints" in line]
    assert warning.startswith(f"warning: origin already holds savepoints of {first.instance} (branch "), warning
    assert "the one made now cannot read or restore them; fix: precompact key import FILE" in warning, warning

    alone = tmp_path / "alone"  # a remote with no branch of the instance: nothing to warn of
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "alone.git")], check=True)
    subprocess.run(["git", "init", "-q", str(alone)], check=True)
    (tmp_path / "alone-keys").mkdir()  # an identity made there too
    made = precompact(
        alone,
        *args[:-1],
        str(tmp_path / "alone-keys" / "alone-id.json"),
        "--url",
        str(tmp_path / "alone.git"),
        env=elsewhere,
    )
    assert made.returncode == 0 and "created age identity" in made.stdout, made.stdout
    assert "already holds savepoints" not in made.stderr, made.stderr
