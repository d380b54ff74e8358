"""Encrypted Layer 2 through the real CLI against a bare remote: nothing planted reaches any git
object on the remote, verify and resurrect say what they proved with and without the identity,
a broken ciphertext is a failure naming its savepoint, recipients change and `rekey` re-encrypts
without rewriting history."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import zlib
from functools import partial
from pathlib import Path

import pytest

from precompact.config import settings as configuration
from precompact.edges.cli import EXIT_NOT_VERIFIED
from precompact.local import chunks, savepoint_log
from precompact.remote import encryption as remote_crypto
from precompact.remote import gitstore
from precompact.verifier import verdicts
from support import commands, fault_trials
from support.commands import run_git
from support.projects import Project, new_project, savepoint_branch, store, trust
from support.transcript_gen import generate, payload

IN_TRANSCRIPT = "quokka-marker-7781"
IN_INSTANCE = "okapi-marker-5512"
IN_SUMMARY = "narwhal-marker-4410"
IN_CHUNK = "axolotl-marker-9903"
BRANCH = savepoint_branch()


# These tests read what precompact printed as bytes, as they read the files it wrote.
precompact = partial(commands.precompact, text=False)


def out(result: subprocess.CompletedProcess) -> str:
    return (result.stdout + result.stderr).decode()


def saved(project: Project, tmp_path: Path, planted: str = IN_TRANSCRIPT) -> None:
    """One savepoint through `precompact savepoint`, committed and pushed before it returns."""
    transcript = generate(
        tmp_path / f"session-{random.random()}.jsonl", 20_000, project=project.path, planted=[planted]
    )
    # --force: the generated conversations say the same last words, which alone is "nothing new".
    result = precompact(
        project.path, "savepoint", "--transcript", str(transcript.path), "--session-id", "s", "--force", "--json"
    )
    assert json.loads(result.stdout)["layer_2"]["state"] == "done", out(result)


def remote_objects(remote: Path) -> bytes:
    """Every object on the remote, loose or packed (blobs, trees, commit messages), and its refs."""
    objects = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=remote, capture_output=True, check=True
    ).stdout
    refs = run_git(remote, "for-each-ref", "--format=%(refname) %(objectname)").encode()
    packed = (remote / "packed-refs").read_bytes() if (remote / "packed-refs").exists() else b""
    return objects + refs + packed


def git_dir(repository: Path) -> Path:
    """Where the savepoint branch is in `repository`: a bare remote itself; for a project,
    precompact's own git directory."""
    return store(repository) if (repository / ".git").exists() else repository


def git(repository: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "--git-dir", str(git_dir(repository)), *args], check=True, **kwargs)


def tree(repository: Path, rev: str = BRANCH) -> list[str]:
    return git(repository, "ls-tree", "-r", "--name-only", rev, capture_output=True, text=True).stdout.split()


def identity_of(project: Project) -> Path:
    return configuration.load(project.path).identity


def encrypted_project(tmp_path: Path, name: str = "p", instance: str = "Trial #1") -> Project:
    return new_project(tmp_path, name, git_layer=True, chain_layer=False, instance=instance)


def blob_of(repository: Path, data: bytes) -> str:
    return git(repository, "hash-object", "-w", "--stdin", input=data, capture_output=True).stdout.decode().strip()


def commit_on_branch(repository: Path, entries: dict[str, str]) -> str:
    """A new commit on the savepoint branch with these (path: blob) entries changed (as an
    attacker with push access, or a broken disk, would leave it); returns its id."""
    index = git_dir(repository) / "test-index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    git(repository, "read-tree", BRANCH, env=env)
    for path, blob in entries.items():
        git(repository, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
    tree_id = git(repository, "write-tree", env=env, capture_output=True)
    made = git(repository, "commit-tree", tree_id.stdout.decode().strip(), "-p", BRANCH, "-m", "x", capture_output=True)
    commit = made.stdout.decode().strip()
    git(repository, "update-ref", f"refs/heads/{BRANCH}", commit)
    index.unlink()
    return commit


def test_init_creates_a_private_identity_and_encrypts_by_default(tmp_path):
    project = encrypted_project(tmp_path)
    loaded = configuration.load(project.path)
    identity = loaded.identity
    assert identity == project.keypair_file.parent / configuration.IDENTITY_NAME, "beside the keypair"
    assert identity.stat().st_mode & 0o777 == 0o600
    assert loaded.recipients == tuple(remote_crypto.public_keys(identity.read_bytes(), "id"))
    saved(project, tmp_path)
    files = tree(project.remote)
    chunk_names = [f for f in files if f.startswith(gitstore.CHUNKS_DIR)]
    assert [f for f in files if f not in chunk_names] == [
        "logs/precompact-chunk-names.key.age",
        "logs/precompact-savepoint.jsonl.age",
        savepoint_log.savepoints(project.logs)[0].created["snapshot_file"] + ".age",
    ]
    local_chunks = {p.name for p in (project.logs / "precompact-chunks").iterdir()}
    assert len(chunk_names) == len(local_chunks) > 0 and all(f.endswith(".age") for f in chunk_names)
    assert not any(name in f for name in local_chunks for f in chunk_names), "named by a keyed hash"
    # A second project of the same user (the same keypair folder) reuses the identity.
    again = new_project(tmp_path, "q", git_layer=True, chain_layer=False)
    assert configuration.load(again.path).recipients == loaded.recipients


def test_no_planted_marker_reaches_any_object_or_ref_on_the_remote(tmp_path):
    project = encrypted_project(tmp_path, instance=f"{IN_INSTANCE} #1")
    saved(project, tmp_path)
    summary = payload("PostCompact", project.path, session_id="s", compact_summary=f"Summary: {IN_SUMMARY} fixed.")
    assert precompact(project.path, "hook", stdin=json.dumps(summary).encode()).returncode == 0
    saved(project, tmp_path)
    local = b"".join(p.read_bytes() for p in project.logs.rglob("*") if p.is_file())
    assert all(marker.encode() in local for marker in (IN_TRANSCRIPT, IN_INSTANCE, IN_SUMMARY)), "planted"
    run_git(project.remote, "gc", "--quiet")  # packed objects and refs too
    on_remote = remote_objects(project.remote)
    files = tree(project.remote, project.branch)
    assert all(f.endswith(".age") for f in files) and any(f.startswith(gitstore.CHUNKS_DIR) for f in files)
    for chunk in (project.logs / "precompact-chunks").iterdir():
        assert chunk.name.encode() not in on_remote, "no chunk is named by its plaintext's hash"
    for marker in (IN_TRANSCRIPT, IN_INSTANCE, IN_SUMMARY):
        assert marker.encode() not in on_remote
    messages = run_git(project.remote, "log", "--format=%B", project.branch)
    assert "Sequence: 2" in messages and "Snapshot hash" not in messages
    for savepoint in savepoint_log.savepoints(project.logs):
        assert savepoint.snapshot_hash.encode() not in on_remote, "nothing names the plaintext's hash"


def test_verify_says_what_it_proved_with_and_without_the_identity(tmp_path):
    project = encrypted_project(tmp_path)
    saved(project, tmp_path)
    saved(project, tmp_path)
    with_identity = precompact(project.path, "verify")
    assert with_identity.returncode == 0, out(with_identity)
    assert "✓ 2 savepoint(s) verified: snapshots, index, hash chain, git (held by origin);" in out(with_identity)
    assert "content was not checked" not in out(with_identity)

    # Without the identity the copies cannot be read: no ✓ over savepoints whose git layer is
    # not checked, and the exit code says so (issue #38, case 3).
    identity = identity_of(project)
    identity.rename(tmp_path / "away.txt")
    without = precompact(project.path, "verify")
    assert without.returncode == EXIT_NOT_VERIFIED, out(without)
    assert "✓" not in out(without)
    assert out(without).startswith(
        "✗ 2 of 2 savepoint(s) not verified: Trial #1 savepoint 1 [git]: not verified (commit"
    )
    assert "also: Trial #1 savepoint 2 [git]: not verified (commit" in out(without)
    assert "its content was not checked" in out(without) and f"no age identity at {identity}" in out(without)
    as_json = json.loads(precompact(project.path, "verify", "--json").stdout)
    assert as_json["verified"] is False and as_json["verdict"]["status"] == "not verified"
    assert [s["layers"]["git"]["status"] for s in as_json["savepoints"]] == ["not verified", "not verified"]
    assert [s["layers"]["snapshot"]["status"] for s in as_json["savepoints"]] == ["verified", "verified"]

    # Without the identity, a ciphertext the object store altered is still caught: it no longer
    # hashes to the blob id the commit names.
    [savepoint, _] = savepoint_log.savepoints(project.logs)
    blob = project.git("rev-parse", f"{savepoint.commit}:{savepoint.created['snapshot_file']}.age").strip()
    loose = store(project.path) / "objects" / blob[:2] / blob[2:]
    data = zlib.decompress(loose.read_bytes())
    loose.chmod(0o644)
    loose.write_bytes(zlib.compress(data[:-1] + bytes([data[-1] ^ 1])))
    altered = precompact(project.path, "verify")
    assert altered.returncode == 1
    assert "savepoint 1 [layer 2]: savepoint 1: the object store's copy of" in out(altered)
    assert "does not hash to the blob the commit names" in out(altered)


def test_an_identity_that_opens_none_of_the_recipients_is_this_machines_setup_never_the_branchs_fault(tmp_path):
    """review12b F2: an identity here that is not the user's (a fresh `init`, a replaced file)
    opens none of the configured encryption.recipients. That is this machine's setup, as a
    missing identity is: `verify` and `status --remote` say "not verified" (exit 4) naming
    `precompact key import FILE`, never a broken link of the branch whose fix is a push; the
    push made meanwhile changes nothing of that, and `flush` has nothing to fail."""
    project = encrypted_project(tmp_path)
    saved(project, tmp_path)
    saved(project, tmp_path)
    other = tmp_path / "other.txt"
    remote_crypto.generate_identity(other)
    wrong = {"PRECOMPACT_IDENTITY": str(other)}
    setup = f"{other} opens none of the recipients your savepoints are sealed to (encryption.recipients): copy yours there with `precompact key import FILE`"
    for _ in range(2):  # before and after the next savepoint's push
        verify = precompact(project.path, "verify", env=wrong)
        assert verify.returncode == EXIT_NOT_VERIFIED and setup in out(verify), out(verify)
        assert "broken link" not in out(verify) and "next savepoint's push" not in out(verify), out(verify)
        listed = precompact(project.path, "status", "--remote", env=wrong)
        assert listed.returncode == EXIT_NOT_VERIFIED and setup in out(listed), out(listed)
        flushed = precompact(project.path, "flush", env=wrong)
        assert flushed.returncode == 0 and "✗" not in out(flushed), out(flushed)
        saved(project, tmp_path)
    assert precompact(project.path, "verify").returncode == 0, "the right identity reads every copy"


@pytest.mark.parametrize("damage", ["truncated", "altered"])
def test_a_ciphertext_that_does_not_decrypt_fails_naming_the_savepoint(tmp_path, damage):
    project = encrypted_project(tmp_path)
    saved(project, tmp_path)
    saved(project, tmp_path)
    [first, _] = savepoint_log.savepoints(project.logs)
    name = first.created["snapshot_file"] + ".age"
    ciphertext = git(project.path, "show", f"{first.commit}:{name}", capture_output=True).stdout
    broken = (
        ciphertext[:-40]
        if damage == "truncated"
        else ciphertext[:-20] + bytes([ciphertext[-20] ^ 1]) + ciphertext[-19:]
    )
    # The branch moves to a commit holding the broken ciphertext, and the index is made to name it.
    commit = commit_on_branch(project.path, {name: blob_of(project.path, broken)})
    savepoint_log.mark(project.logs, first, savepoint_log.Event.LAYER_2_COMMITTED, commit=commit, branch=BRANCH)

    checked = precompact(project.path, "verify")
    assert checked.returncode == 1
    assert "first broken link: Trial #1 savepoint 1 [layer 2]: savepoint 1: the encrypted snapshot" in out(checked)
    assert "does not decrypt or authenticate" in out(checked)

    (project.path / first.created["snapshot_file"]).unlink()
    resurrected = precompact(project.path, "resurrect", "--sequence", "1")
    assert resurrected.returncode == 1
    assert "git has no usable copy (savepoint 1: the encrypted snapshot" in out(resurrected)


def second_machine(tmp_path: Path, project: Project) -> Path:
    """Another machine: only the remote (cloned) and a configuration for the same instance;
    `init` there makes an identity of its own, which reads nothing yet."""
    machine = tmp_path / "machine-2"
    machine.mkdir()
    path = machine / "project"
    subprocess.run(["git", "clone", "-q", str(project.remote), str(path)], check=True, capture_output=True)
    # Its own project registry, as a machine has: on this one, init and trust would refuse an
    # instance the first project pushes to the same remote.
    elsewhere = {"XDG_DATA_HOME": str(machine / "data")}
    args = ("init", "--yes", "--instance", project.instance, "--keypair", str(machine / "id.json"))
    result = precompact(path, *args, env=elsewhere)
    assert result.returncode == 0, out(result)
    config = path / ".precompact.toml"
    config.write_text(config.read_text().replace("chain = true", "chain = false"))
    trust(path, env=elsewhere)
    return path


@pytest.mark.slow
def test_resurrect_on_a_second_machine_needs_the_identity(tmp_path):
    project = encrypted_project(tmp_path)
    saved(project, tmp_path)
    saved(project, tmp_path)
    there = second_machine(tmp_path, project)
    identity_there = configuration.load(there).identity

    wrong = precompact(there, "resurrect")
    assert wrong.returncode == 1
    lines = out(wrong).strip().splitlines()
    assert len(lines) == 1, lines
    assert f"cannot be read with {identity_there}: it is encrypted to other recipients" in lines[0]

    identity_there.unlink()
    missing = precompact(there, "resurrect")
    assert missing.returncode == 1
    [line] = out(missing).strip().splitlines()
    assert f"no age identity at {identity_there}: copy yours there with `precompact key import FILE`" in line

    exported = precompact(project.path, "key", "export")
    assert exported.returncode == 0 and b"AGE-SECRET-KEY-1" in exported.stdout
    imported = precompact(there, "key", "import", "-", stdin=exported.stdout)
    assert imported.returncode == 0, out(imported)
    assert identity_there.stat().st_mode & 0o777 == 0o600
    back = precompact(there, "resurrect", "--format", "json")
    assert back.returncode == EXIT_NOT_VERIFIED, out(back)  # read and shown as asked; no root here vouches for it
    newest = savepoint_log.savepoints(project.logs)[-1]
    # Kept beside the branch in precompact's git directory, not in logs/, whose index has no line
    # for it here (`precompact restore` brings the index and its files together).
    restored = Path(json.loads(back.stdout)["snapshot_path"])
    assert not (there / newest.created["snapshot_file"]).exists() and not restored.is_relative_to(there)
    assert hashlib.sha256(restored.read_bytes()).hexdigest() == newest.snapshot_hash
    checks = json.loads(back.stdout)["checks"]
    assert checks["git"]["status"] == "not verified", "no root on this machine vouches for the hash yet"
    assert checks["integrity"]["status"] == "not verified"

    # Importing over another identity keeps it beside (no savepoint here is encrypted to it; where
    # one is, the import is refused: test_user_settings.py).
    other = tmp_path / "other.txt"
    remote_crypto.generate_identity(other)
    replaced = precompact(there, "key", "import", str(other))
    assert replaced.returncode == 0 and "is kept at" in out(replaced)
    [aside] = identity_there.parent.glob(f"{identity_there.name}.replaced-*")
    assert aside.read_bytes() == exported.stdout


@pytest.mark.slow
def test_recipient_change_applies_to_new_savepoints_and_rekey_makes_history_readable(tmp_path):
    project = encrypted_project(tmp_path)
    saved(project, tmp_path)
    teammate = tmp_path / "teammate.txt"
    [teammates_key] = [remote_crypto.generate_identity(teammate)]
    config = project.path / ".precompact.toml"
    mine = configuration.load(project.path).recipients[0]
    shown = out(precompact(project.path, "key", "show", env={"PRECOMPACT_IDENTITY": str(teammate)}))
    assert f"{teammates_key} (NOT a recipient: add it to encryption.recipients)" in shown
    assert f"recipients: {mine}" in shown
    config.write_text(
        config.read_text().replace(f'recipients = ["{mine}"]', f'recipients = ["{mine}", "{teammates_key}"]')
    )
    trust(project.path)
    saved(project, tmp_path)
    as_teammate = {"PRECOMPACT_IDENTITY": str(teammate)}
    assert f"{teammates_key} (a recipient)" in out(precompact(project.path, "key", "show", env=as_teammate))

    before = precompact(project.path, "verify", env=as_teammate)
    assert before.returncode == EXIT_NOT_VERIFIED, out(
        before
    )  # savepoint 1 was encrypted before the teammate was added
    assert out(before).startswith("✗ 1 of 2 savepoint(s) not verified: Trial #1 savepoint 1 [git]: not verified (")
    assert "it is encrypted to other recipients than this identity" in out(before)
    assert precompact(project.path, "verify").returncode == 0

    old_tip = run_git(project.remote, "rev-parse", BRANCH).strip()
    rekeyed = precompact(project.path, "key", "rekey")
    assert rekeyed.returncode == 0, out(rekeyed)
    assert "re-encrypted 1 file(s)" in out(rekeyed), "savepoint 1; savepoint 2 and the index already were"
    new_tip = run_git(project.remote, "rev-parse", BRANCH).strip()
    assert run_git(project.remote, "rev-parse", f"{new_tip}^").strip() == old_tip, "a new commit, history kept"
    assert "nothing to do" in out(precompact(project.path, "key", "rekey")), (
        "each file is encrypted once per recipient set"
    )

    after = precompact(project.path, "verify", env=as_teammate)
    assert after.returncode == 0, out(after)  # the teammate now reads savepoint 1 from the rekeyed copy
    assert precompact(project.path, "verify").returncode == 0
    saved(project, tmp_path)
    assert precompact(project.path, "verify", env=as_teammate).returncode == 0, "later savepoints build on it"


@pytest.mark.slow
def test_a_clear_text_project_keeps_working_and_status_names_its_clear_savepoints(tmp_path):
    project = encrypted_project(tmp_path)
    config = project.path / ".precompact.toml"
    mine = configuration.load(project.path).recipients[0]
    config.write_text(config.read_text().replace(f'recipients = ["{mine}"]', "recipients = []"))
    trust(project.path)
    saved(project, tmp_path)
    first = savepoint_log.savepoints(project.logs)[0].created["snapshot_file"]
    assert first in tree(project.remote), "clear text, as before encryption existed"
    status = precompact(project.path, "status")
    assert f"in clear text on {BRANCH} (and its remote once pushed): Trial #1 #1" in out(status)

    config.write_text(config.read_text().replace("recipients = []", f'recipients = ["{mine}"]'))
    trust(project.path)
    saved(project, tmp_path)
    assert first in tree(project.remote) and f"{first}.age" not in tree(project.remote)
    assert "logs/precompact-savepoint.jsonl" not in tree(project.remote), "the clear index left the tip"
    rows = json.loads(precompact(project.path, "status", "--json").stdout)["savepoints"]
    assert [r["in_clear_on_branch"] for r in rows] == [True, False]
    verified = precompact(project.path, "verify")
    assert verified.returncode == 0 and "content of encrypted" not in out(verified), out(verified)

    assert precompact(project.path, "key", "rekey").returncode == 0
    assert f"{first}.age" in tree(project.remote) and first not in tree(project.remote)
    assert "Trial #1 #1; `precompact key rekey`" in out(precompact(project.path, "status")), (
        "its history still holds it"
    )
    assert precompact(project.path, "verify").returncode == 0


def test_chunks_are_named_on_the_remote_by_a_keyed_hash(tmp_path):
    """A content-addressed file under logs/precompact-chunks/ is committed under HMAC-SHA256 of
    its name with the project's naming key, which travels encrypted beside it."""
    project = encrypted_project(tmp_path)
    saved(project, tmp_path)
    loaded = configuration.load(project.path)
    content = f"a chunk holding {IN_CHUNK}".encode()
    digest = hashlib.sha256(content).hexdigest()
    name = f"{gitstore.CHUNKS_DIR}{digest}"
    (project.logs / "precompact-chunks").mkdir(exist_ok=True)
    (project.logs / "precompact-chunks" / digest).write_bytes(content)
    target = gitstore.Target(project.path, "origin", BRANCH, remote_crypto.Keys.of(loaded))
    repo = gitstore.open_repository(target)

    entries = gitstore.tree_entries(repo, target, project.logs, {name: digest})
    [chunk_path] = [p for p, blob in entries.items() if blob and p.startswith(gitstore.CHUNKS_DIR)]
    naming_key = (project.logs / "precompact-chunk-names.key").read_bytes()[:32]  # then this machine's stamp
    assert chunk_path == f"{gitstore.CHUNKS_DIR}{remote_crypto.keyed_name(naming_key, digest)}.age"
    assert entries[f"{gitstore.NAMING_KEY_NAME}.age"] is not None
    commit = commit_on_branch(project.path, {p: blob for p, blob in entries.items() if blob})
    assert gitstore.file_at(repo, commit, name, remote_crypto.Keys.of(loaded)) == content
    assert digest not in "".join(tree(project.path, commit)), "the plaintext hash names nothing on the branch"
    with pytest.raises(gitstore.Sealed, match="no age identity"):
        gitstore.file_at(repo, commit, name, remote_crypto.Keys(loaded.recipients, tmp_path / "none"))
    # A naming key over what precompact writes of one is not read: the chunk it would name says so.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gitstore, "NAMING_KEY_BLOB_LIMIT", 1)
        with pytest.raises(
            gitstore.Oversized,
            match=r"precompact-chunk-names\.key\.age at commit \w+ is .* MB, over the .* MB precompact writes: not read",
        ):
            gitstore.file_at(repo, commit, name, remote_crypto.Keys.of(loaded))
    # A chunk over what precompact writes of one is not read: verify fails it, saying its size.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gitstore, "CHUNK_LIMIT", 1)
        over = gitstore.chunk_at(
            repo, commit, chunks.Ref(sha256=digest, size=len(content)), remote_crypto.Keys.of(loaded)
        )
        assert isinstance(over, gitstore.Oversized) and str(over).startswith(
            f"chunk {digest} at commit {commit[:12]} is "
        )
        verdict = verdicts.chunk_in_git(chunks.Ref(sha256=digest, size=len(content)), commit, over)
        assert verdict is not None and (verdict.status, verdict.detail) == (verdicts.FAILED, str(over))

    # Another machine (no naming key in its logs/) makes a key of its own, never the one the
    # branch carries (#48: anyone can encrypt a key to the user's recipient): the chunk gets a
    # new name, its ciphertext still made once.
    (project.logs / "precompact-chunk-names.key").unlink()
    again = gitstore.tree_entries(repo, target, project.logs, {name: digest})
    new_key = (project.logs / "precompact-chunk-names.key").read_bytes()[:32]
    assert new_key != naming_key and chunk_path not in again
    renamed = f"{gitstore.CHUNKS_DIR}{remote_crypto.keyed_name(new_key, digest)}.age"
    assert again[renamed] == entries[chunk_path], "the ciphertext cache: encrypted once"

    # A chunk whose bytes are not the ones its name promises is not committed.
    (project.logs / "precompact-chunks" / digest).write_bytes(b"other bytes")
    with pytest.raises(gitstore.GitStoreError, match="does not hash to the sha256"):
        gitstore.tree_entries(repo, target, project.logs, {name: digest})

    gitstore.push(repo, target)
    on_remote = remote_objects(project.remote)
    assert IN_CHUNK.encode() not in on_remote and digest.encode() not in on_remote and naming_key not in on_remote


def test_hostile_encryption_settings_are_refused(tmp_path):
    def parsed(encryption: str):
        return configuration.parse(tmp_path, f'instance = "x"\n[encryption]\n{encryption}\n'.encode(), environ={})

    for bad, message in (
        ('recipients = ["age1notakey"]', "is not an age public key"),
        ('recipients = ["ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ"]', "or an ssh-ed25519 public key"),
        ('recipients = "age1"', "encryption.recipients must be a list of strings"),
        ("identity = 7", "encryption.identity must be a string"),
    ):
        with pytest.raises(configuration.ConfigError, match=message):
            parsed(bad)
    key = remote_crypto.generate_identity(tmp_path / "id.txt")
    with pytest.raises(configuration.ConfigError, match="lists a key twice"):
        parsed(f'recipients = ["{key}", "{key}"]')
    ssh = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGQ0yDfDgLmZ0kW5Pk7jvXd4c0b2Q8Hn7r5x0q8n1c2Z teammate@laptop"
    assert parsed(f'recipients = ["{key}", "{ssh}"]').recipients == (key, ssh)
    assert parsed("").recipients == (), "no [encryption]: clear text, as before"

    # An identity file others can read, or a link, is refused like an ssh key would be.
    loose = tmp_path / "loose.txt"
    shutil.copy(tmp_path / "id.txt", loose)
    loose.chmod(0o644)
    with pytest.raises(remote_crypto.CryptoError, match="mode 0600"):
        remote_crypto.read_identity_file(loose)
    (tmp_path / "link.txt").symlink_to(tmp_path / "id.txt")
    with pytest.raises(remote_crypto.CryptoError, match="must be a regular file"):
        remote_crypto.read_identity_file(tmp_path / "link.txt")


def test_hostile_ciphertext_is_refused_not_inflated(tmp_path, monkeypatch):
    remote_crypto.generate_identity(tmp_path / "id.txt")
    keys = remote_crypto.Keys(
        tuple(remote_crypto.public_keys((tmp_path / "id.txt").read_bytes(), "id")), tmp_path / "id.txt"
    )
    identities = remote_crypto.load_identities(keys)
    assert remote_crypto.open_sealed(remote_crypto.seal(b"snapshot", keys), identities) == b"snapshot"
    # Anyone with the public key can encrypt: a zlib bomb, or no zlib at all, is refused.
    import pyrage

    recipient = pyrage.x25519.Recipient.from_str(keys.recipients[0])
    with pytest.raises(remote_crypto.Undecryptable, match="not zlib"):
        remote_crypto.open_sealed(pyrage.encrypt(b"plain", [recipient]), identities)
    with pytest.raises(remote_crypto.Undecryptable, match="not one whole zlib stream"):
        remote_crypto.open_sealed(pyrage.encrypt(zlib.compress(b"x" * 100)[:-3], [recipient]), identities)
    with pytest.raises(remote_crypto.Undecryptable, match="does not decrypt"):
        remote_crypto.open_sealed(b"age-encryption.org/v1\n", identities)
    # Inflation stops at the bound, step by step, never holding the whole bomb.
    monkeypatch.setattr(remote_crypto, "MAX_PLAINTEXT_BYTES", 10_000)
    monkeypatch.setattr(remote_crypto, "DECOMPRESS_STEP", 4_096)
    with pytest.raises(remote_crypto.Undecryptable, match="inflates past"):
        remote_crypto.open_sealed(pyrage.encrypt(zlib.compress(bytes(1_000_000)), [recipient]), identities)
    assert len(remote_crypto.open_sealed(remote_crypto.seal(bytes(10_000), keys), identities)) == 10_000


@pytest.mark.slow
def test_a_flush_killed_at_any_moment_loses_nothing_when_encrypted(tmp_path):
    tally = fault_trials.crash_layer_2(tmp_path, trials=6, rng=random.Random(22))
    assert tally.failures == [] and tally.lost == 0, (tally.lost, tally.failures)
    files = tree(tmp_path / "crash-layer-2.git")
    assert len(files) == 8 and all(f.endswith(".age") for f in files), files


def test_with_the_chain_verify_without_the_identity_ties_the_ciphertext_to_the_signed_commit(tmp_path, localnet):
    project = new_project(tmp_path, "p", git_layer=True, chain_layer=True, cluster=localnet.url, airdrop=True)
    saved(project, tmp_path)
    saved(project, tmp_path)
    [_, second] = savepoint_log.savepoints(project.logs)
    assert second.layer_3 == "CONFIRMED"
    identity_of(project).rename(tmp_path / "away.txt")
    checked = precompact(project.path, "verify", "--json")
    assert checked.returncode == EXIT_NOT_VERIFIED, out(checked)  # the git copies' content is not checked
    found = json.loads(checked.stdout)
    assert found["chain"].startswith(
        "record at sequence 2 verified (authority, instance, address, signature), as reported by RPC "
    )
    assert "2 savepoint(s) linked" in found["chain"]
    layers = [{name: check["status"] for name, check in s["layers"].items()} for s in found["savepoints"]]
    assert layers == [{"snapshot": "verified", "git": "not verified", "chain": "verified"}] * 2
    report = json.loads(precompact(project.path, "resurrect", "--format", "json").stdout)
    checks = {name: check["status"] for name, check in report["checks"].items()}
    assert checks == {"chain": "verified", "git": "not verified", "integrity": "verified"}, report["checks"]
    assert (
        "holds the ciphertext it committed for savepoint 2; its content was not checked"
        in report["checks"]["git"]["detail"]
    )
    # The signed record names the commit; a branch moved to another commit (another ciphertext
    # of the same savepoint) no longer matches it.
    commit = commit_on_branch(
        project.path,
        {
            f"{second.created['snapshot_file']}.age": blob_of(
                project.path, (project.path / second.created["snapshot_file"]).read_bytes()
            )
        },
    )
    savepoint_log.mark(project.logs, second, savepoint_log.Event.LAYER_2_COMMITTED, commit=commit, branch=BRANCH)
    moved = precompact(project.path, "verify")
    assert moved.returncode == 1
    assert "git_commit on chain" in out(moved)


@pytest.mark.slow
def test_init_options_for_encryption(tmp_path):
    def init(name: str, *args: str) -> tuple[subprocess.CompletedProcess, Path]:
        path = tmp_path / name
        path.mkdir()
        run_git(path, "init", "-q")
        keypair = tmp_path / f"{name}-keys" / "id.json"
        return precompact(path, "init", "--yes", "--keypair", str(keypair), *args), path

    clear, path = init("clear", "--no-encrypt")
    assert clear.returncode == 0, out(clear)
    assert configuration.load(path).recipients == ()
    assert not (tmp_path / "clear-keys" / configuration.IDENTITY_NAME).exists(), "no identity made for nothing"

    ssh = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGQ0yDfDgLmZ0kW5Pk7jvXd4c0b2Q8Hn7r5x0q8n1c2Z teammate@laptop"
    team, path = init("team", "--recipient", ssh)
    assert team.returncode == 0, out(team)
    own = configuration.load(path).recipients
    assert len(own) == 2 and own[1] == ssh and own[0].startswith("age1")
    assert "back it up" in out(team)

    both, _ = init("both", "--no-encrypt", "--recipient", ssh)
    assert both.returncode == 2 and "--no-encrypt takes no --identity or --recipient" in out(both)
    loose = tmp_path / "loose.txt"
    remote_crypto.generate_identity(loose)
    loose.chmod(0o644)
    refused, path = init("loose", "--identity", str(loose))
    assert refused.returncode == 1 and f"chmod 600 {loose}" in out(refused)
    assert not (path / ".precompact.toml").exists()
    loose.chmod(0o600)
    given, path = init("given", "--identity", str(loose))
    assert given.returncode == 0 and f"using age identity {loose}" in out(given)
    assert configuration.load(path).identity == loose


def test_an_identity_made_at_the_same_moment_by_another_init_is_used_not_a_traceback(tmp_path, monkeypatch):
    """Two `precompact init`s whose keypairs share a folder both find no identity there and both
    make one: the second finds the first's file in place (FileExistsError, which was a traceback
    out of `init`) and uses it."""
    path = tmp_path / "identity.txt"
    [theirs], made = remote_crypto.ensure_identity(path)
    assert made
    monkeypatch.setattr(os.path, "lexists", lambda _: False)  # it looked before the other one wrote
    assert remote_crypto.ensure_identity(path) == ([theirs], False)
