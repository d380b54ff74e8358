"""A savepoint's compaction summary travels with it (review13b F5): recorded at PostCompact, after
its savepoint was pushed, it goes to the savepoint branch with the next push, inside the index
copy (encrypted as the snapshots are), signed by the user's key bound to its savepoint's line;
`precompact restore` brings it back only when that binding checks, names every summary it
refuses, and never writes over one logs/ holds. Everything through the installed binary."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from solders.keypair import Keypair

from precompact.restore import dropped
from support.claude_code import wait_for_worker, workers_of
from support.commands import hook, precompact, run_git, wait_until, worker_finished
from support.planted import session, write_transcript
from support.projects import Project, new_project, trust

SESSION = "planted-restore"
INDEX = "logs/precompact-savepoint.jsonl"


def _index(logs: Path) -> list[dict]:
    return [json.loads(line) for line in (logs / "precompact-savepoint.jsonl").read_text().splitlines() if line]


def _remote_tip(project: Project) -> str:
    return run_git(project.remote, "rev-parse", project.branch).strip()


def _compacted(project: Project, tmp_path: Path, seed: int = 5) -> str:
    """A session compacted as Claude Code runs its hooks: PreCompact saves it and its worker
    pushes the savepoint, then PostCompact brings the summary, which the next flush signs and
    pushes. Returns the summary."""
    planted = session(seed, cwd=str(project.path))
    transcript = write_transcript(planted, tmp_path / "session.jsonl")
    event = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(project.path), "trigger": "auto"}
    assert hook({**event, "hook_event_name": "PreCompact", "custom_instructions": ""}).returncode == 0
    assert wait_until(lambda: worker_finished(project.path), 60)
    pushed = _remote_tip(project)
    created = [e for e in _index(project.logs) if e["event"] == "SAVEPOINT_CREATED"]
    assert hook({**event, "hook_event_name": "PostCompact", "compact_summary": planted.summary}).returncode == 0
    # PostCompact's worker signs the summary: waited for until it has and let go of its lock (it
    # may not have started yet when the hook returns), so that no worker edits the index after.
    signed = lambda: any(e["event"] == "SUMMARY_SIGNED" for e in _index(project.logs))
    assert wait_until(lambda: signed() and worker_finished(project.path) and not workers_of(project), 60)
    assert precompact(project.path, "flush").returncode == 0
    assert wait_until(lambda: not workers_of(project), 60), "no worker left to sign over a test's edit"
    # Pushed later, on top: the commit that pushed the savepoint, and its signed line, unchanged.
    tip = _remote_tip(project)
    assert tip != pushed
    subprocess.run(["git", "merge-base", "--is-ancestor", pushed, tip], cwd=project.remote, check=True)
    assert [e for e in _index(project.logs) if e["event"] == "SAVEPOINT_CREATED"] == created
    return planted.summary


def _second_machine(project: Project, tmp_path: Path) -> tuple[Path, dict]:
    """A fresh clone and a HOME holding only the keypair and the age identity (copied)."""
    home = tmp_path / "home2"
    keys = home / ".config" / "solana"
    keys.mkdir(parents=True)
    shutil.copy(project.keypair_file, keys / "id.json")
    identity = project.keypair_file.parent / "precompact-age-identity.txt"
    if identity.exists():
        shutil.copy(identity, keys / "precompact-age-identity.txt")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(project.remote), str(clone)], check=True, capture_output=True)
    shutil.copy(project.path / ".precompact.toml", clone / ".precompact.toml")
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "PRECOMPACT_KEYPAIR": str(keys / "id.json"),
        "PRECOMPACT_IDENTITY": str(keys / "precompact-age-identity.txt"),
    }
    assert precompact(clone, "trust", "--yes", env=env).returncode == 0
    return clone, env


def test_a_summary_recorded_after_its_savepoint_was_pushed_is_restored_on_a_second_machine(tmp_path):
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    summary = _compacted(project, tmp_path)
    [signed] = [e for e in _index(project.logs) if e["event"] == "SUMMARY_SIGNED"]
    assert (signed["sequence"], signed["signer"]) == (1, str(project.authority().pubkey()))
    here = json.loads(precompact(project.path, "dropped", "1", "--json").stdout)

    clone, env = _second_machine(project, tmp_path)
    restored = precompact(clone, "restore", env=env)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    key = project.authority().pubkey()
    said = f"restored 1 compaction summary(ies), each bound to its savepoint by the signature of {key}"
    assert said in restored.stdout.splitlines(), restored.stdout
    # Its own line, without the first machine's seal, queue entry or hook time, and its signature.
    lines = [e for e in _index(clone / "logs") if e["event"] in ("COMPACT_SUMMARY", "SUMMARY_SIGNED")]
    assert [e["event"] for e in lines] == ["COMPACT_SUMMARY", "SUMMARY_SIGNED"]
    assert lines[0]["restored"] is True and not {"seal", "queue_entry", "queued_at"} & lines[0].keys()
    assert lines[1] == {**signed, "timestamp": lines[1]["timestamp"]}
    there = precompact(clone, "dropped", "1", "--json", env=env)
    assert there.returncode == 0, there.stderr
    report = json.loads(there.stdout)
    assert (report["summary"], report["summary_source"]) == (summary, dropped.RECORDED)
    assert report["dropped"] == here["dropped"], "the same list as on the machine that recorded it"
    # The brief gives what the summary left out, as it does where the summary was recorded.
    left_out = "[precompact] What the compaction summary left out of savepoint 1"
    briefs = [
        precompact(where, "resurrect", "--sequence", "1", "--format", "brief", env=home)
        for where, home in ((project.path, None), (clone, env))
    ]
    assert all(b.returncode == 0 for b in briefs), [b.stderr for b in briefs]
    first, second = (b.stdout[b.stdout.index(left_out) :] for b in briefs)
    assert first == second
    # Idempotent; and the restored summary is not signed again there (that machine did not record it).
    again = json.loads(precompact(clone, "restore", "--json", env=env).stdout)
    assert (again["summaries"], again["summaries_kept"], again["complete"]) == (0, [], True)
    assert precompact(clone, "flush", env=env).returncode == 0
    assert len([e for e in _index(clone / "logs") if e["event"] == "SUMMARY_SIGNED"]) == 1


@pytest.fixture
def clear(tmp_path) -> tuple[Project, str]:
    """A clear-text remote holding one compacted savepoint and its signed summary."""
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False, encrypted=False)
    return project, _compacted(project, tmp_path)


def _rewritten(project: Project, tmp_path: Path, edit) -> None:
    """A commit pushed on top of the remote's branch whose index copy is `edit`(its lines)."""
    work = tmp_path / "rewrite"
    subprocess.run(["git", "clone", "-q", "-b", project.branch, str(project.remote), str(work)], check=True)
    lines = [json.loads(line) for line in (work / INDEX).read_text().splitlines() if line]
    (work / INDEX).write_text("".join(json.dumps(line) + "\n" for line in edit(lines)))
    run_git(work, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qam", "rewritten")
    run_git(work, "push", "-q", "origin", project.branch)


def _each(kind: str, change):
    def edit(lines: list[dict]) -> list[dict]:
        return [change(line) if line["event"] == kind else line for line in lines]

    return edit


def _signed_by_another_key(lines: list[dict]) -> list[dict]:
    """Each summary signature replaced by one another key made over the same line and summary."""
    from solders.keypair import Keypair

    from precompact.local import savepoint_log
    from precompact.verifier import signed

    foreign = Keypair()
    signer = signed.Signer(bytes(foreign)[:32], str(foreign.pubkey()))
    [savepoint] = savepoint_log.fold(lines)
    made = signer.sign_summary(savepoint, savepoint.compact_summary)
    mine = {"signer": made.signer, "summary_sha256": made.summary_sha256, "summary_signature": made.signature}
    return [{**line, **mine} if line["event"] == "SUMMARY_SIGNED" else line for line in lines]


FORGERIES = {
    "altered": _each("COMPACT_SUMMARY", lambda line: {**line, "summary": line["summary"] + " The port is 9999."}),
    "signature flipped": _each(
        "SUMMARY_SIGNED",
        lambda line: {
            **line,
            "summary_signature": "01"[line["summary_signature"][0] == "0"] + line["summary_signature"][1:],
        },
    ),
    "another key": _signed_by_another_key,
    "summary line gone": lambda lines: [line for line in lines if line["event"] != "COMPACT_SUMMARY"],
}


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_a_forged_or_altered_summary_on_the_remote_is_refused_and_named(clear, tmp_path, forgery):
    project, _ = clear
    _rewritten(project, tmp_path, FORGERIES[forgery])
    clone, env = _second_machine(project, tmp_path)
    restored = precompact(clone, "restore", env=env)
    assert restored.returncode == 1, restored.stdout + restored.stderr
    assert restored.stdout.startswith("restored 1 savepoint(s)"), restored.stdout
    [line] = [line for line in restored.stdout.splitlines() if "compaction summary" in line]
    assert line.startswith("✗ FAILED 1 compaction summary(ies) on the remote, not restored: Trial #1 #1 ("), line
    assert "✓" not in restored.stdout
    assert not [e for e in _index(clone / "logs") if e["event"] in ("COMPACT_SUMMARY", "SUMMARY_SIGNED")]
    report = json.loads(precompact(clone, "dropped", "1", "--json", env=env).stdout)
    assert (report["summary"], report["summary_source"]) == (None, dropped.NOT_RESTORED)


def test_a_signature_moved_to_another_savepoint_does_not_bind_its_summary_there(tmp_path):
    """Savepoint 2's summary and signature moved onto savepoint 1 (which has none): mis-bound."""
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False, encrypted=False)
    _compacted(project, tmp_path, seed=1)
    planted = session(2, cwd=str(project.path))
    transcript = write_transcript(planted, tmp_path / "second.jsonl")
    event = {"session_id": "second", "transcript_path": str(transcript), "cwd": str(project.path), "trigger": "auto"}
    assert hook({**event, "hook_event_name": "PreCompact", "custom_instructions": ""}).returncode == 0
    assert hook({**event, "hook_event_name": "PostCompact", "compact_summary": planted.summary}).returncode == 0
    assert wait_until(lambda: worker_finished(project.path), 60)
    assert precompact(project.path, "flush").returncode == 0

    def moved(lines: list[dict]) -> list[dict]:
        kept = [line for line in lines if line["event"] not in ("COMPACT_SUMMARY", "SUMMARY_SIGNED")]
        second = [
            line for line in lines if line["event"] in ("COMPACT_SUMMARY", "SUMMARY_SIGNED") and line["sequence"] == 2
        ]
        return kept + [{**line, "sequence": 1} for line in second]

    _rewritten(project, tmp_path, moved)
    clone, env = _second_machine(project, tmp_path)
    document = json.loads(precompact(clone, "restore", "--json", env=env).stdout)
    assert [s["sequence"] for s in document["restored"]] == [1, 2]
    [failed] = document["summaries_failed"]
    assert failed.startswith("Trial #1 #1 (its signature by") and "signed for another savepoint" in failed
    assert not document["complete"]
    assert not [e for e in _index(clone / "logs") if e["event"] == "COMPACT_SUMMARY"]


def test_a_remote_from_before_summaries_were_signed_restores_as_before_and_names_them(clear, tmp_path):
    project, _ = clear
    _rewritten(project, tmp_path, lambda lines: [line for line in lines if line["event"] != "SUMMARY_SIGNED"])
    clone, env = _second_machine(project, tmp_path)
    restored = precompact(clone, "restore", "--json", env=env)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    document = json.loads(restored.stdout)
    assert (document["summaries"], document["summaries_failed"]) == (0, [])
    assert (document["summaries_unsigned"], document["complete"]) == (["Trial #1 #1"], True)
    report = json.loads(precompact(clone, "dropped", "1", "--json", env=env).stdout)
    assert (report["summary"], report["summary_source"]) == (None, dropped.NOT_RESTORED)


def test_a_summary_logs_holds_is_kept_and_one_it_lacks_is_brought_back(clear):
    project, summary = clear
    index = project.logs / "precompact-savepoint.jsonl"
    original = index.read_text()
    other = original.replace(json.dumps(summary)[1:-1], "Another summary, edited here.")
    assert other != original
    index.write_text(other)
    kept = json.loads(precompact(project.path, "restore", "--json").stdout)
    assert (kept["summaries"], kept["complete"]) == (0, True)
    assert kept["summaries_kept"] == ["Trial #1 #1 (logs/ holds another summary of it: kept)"]
    assert index.read_text() == other

    index.write_text("".join(line + "\n" for line in original.splitlines() if '"COMPACT_SUMMARY"' not in line))
    back = json.loads(precompact(project.path, "restore", "--json").stdout)
    assert (back["summaries"], back["present"], back["complete"]) == (1, 1, True)
    report = json.loads(precompact(project.path, "dropped", "1", "--json").stdout)
    assert (report["summary"], report["summary_source"]) == (summary, dropped.RECORDED)


def test_the_worker_signs_only_a_summary_this_machine_recorded(clear):
    """A COMPACT_SUMMARY line written into logs/ by anything but precompact (no seal of this
    machine's) is never signed to travel as the user's."""
    project, _ = clear
    planted = {"event": "COMPACT_SUMMARY", "instance": "Trial #1", "sequence": 1, "summary": "planted words"}
    with (project.logs / "precompact-savepoint.jsonl").open("a") as f:
        f.write(json.dumps(planted) + "\n")
    assert precompact(project.path, "flush").returncode == 0
    signed = [e for e in _index(project.logs) if e["event"] == "SUMMARY_SIGNED"]
    assert len(signed) == 1, "only the summary PostCompact recorded here"


def test_a_summary_signature_covers_the_domain_the_savepoints_line_and_the_summarys_hash(clear):
    """snapshot-format.md's message, rebuilt here from its words and checked with the public key."""
    import hashlib

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    project, summary = clear
    index = _index(project.logs)
    [created] = [e for e in index if e["event"] == "SAVEPOINT_CREATED"]
    [line] = [e for e in index if e["event"] == "SUMMARY_SIGNED"]
    digest = hashlib.sha256(summary.encode()).hexdigest()
    assert line["summary_sha256"] == digest
    canonical = json.dumps(created, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    message = b"precompact/compact-summary/v1\0" + canonical + b"\0" + digest.encode()
    public = Ed25519PublicKey.from_public_bytes(bytes(project.authority().pubkey()))
    public.verify(bytes.fromhex(line["summary_signature"]), message)  # raises when it does not check


def test_a_key_rotation_hands_on_the_summaries_the_old_key_bound_and_no_other():
    """`key rotate` signs with the new key the summaries the old key bound to savepoints 1..N
    (those `restore` took on this machine included), so they come back under the new key; a
    summary only another key signed, or of a savepoint past the rotation, is not handed on."""
    from solders.keypair import Keypair

    from precompact.local import savepoint_log
    from precompact.verifier import signed

    old, new, other = (signed.Signer(bytes(k)[:32], str(k.pubkey())) for k in (Keypair(), Keypair(), Keypair()))
    lines: list[dict] = []
    for sequence, summary_signer in ((1, old), (2, other), (3, old)):
        created = {"event": "SAVEPOINT_CREATED", "instance": "Trial #1", "sequence": sequence, "snapshot_hash": "ab"}
        about = {"instance": "Trial #1", "sequence": sequence}
        summary = f"summary of savepoint {sequence}"
        line_signature = old.sign(savepoint_log.Savepoint(sequence=sequence, created=created))
        made = summary_signer.sign_summary(savepoint_log.Savepoint(sequence=sequence, created=created), summary)
        lines += [
            created,
            {
                "event": "SAVEPOINT_SIGNED",
                **about,
                "signer": old.public_key,
                "line_signature": line_signature.signature,
            },
            {"event": "COMPACT_SUMMARY", **about, "summary": summary},
            {
                "event": "SUMMARY_SIGNED",
                **about,
                "signer": made.signer,
                "summary_sha256": made.summary_sha256,
                "summary_signature": made.signature,
            },
        ]
    folded = savepoint_log.fold(lines)
    handed = signed.carried_over_summaries(folded, old.public_key, 2, new)
    assert [(s.sequence, text) for s, text in handed] == [(1, "summary of savepoint 1")]
    [(first, text)] = handed
    first.summary_signatures.append(new.sign_summary(first, text))
    assert signed.offered_summary(first, new.public_key).text == text
    assert signed.offered_summary(folded[1], new.public_key).refused is not None


def _verify(where: Path, env: dict | None = None) -> tuple[int, dict]:
    done = precompact(where, "verify", "--json", env=env)
    return done.returncode, json.loads(done.stdout)


def _summary_verdict(document: dict, sequence: int = 1) -> dict:
    [found] = [s for s in document["savepoints"] if s["sequence"] == sequence]
    return found["layers"]["summary"]


def test_verify_checks_each_summary_in_logs_and_on_the_remote_against_your_key(clear, tmp_path):
    project, _ = clear
    key = str(project.authority().pubkey())
    code, document = _verify(project.path)
    assert code == 0, document
    verdict = _summary_verdict(document)
    assert verdict["status"] == "verified"
    assert verdict["detail"].startswith(
        f"compaction summary signed by {key}, bound to this savepoint's index line, in logs/ and in the index copy on origin's "
    ), verdict
    said = precompact(project.path, "verify").stdout
    assert said.startswith(
        "✓ 1 savepoint(s) verified: snapshots, index, hash chain, 1 compaction summary(ies) signed"
    ), said
    # A second machine checks the one `restore` brought back the same way.
    clone, env = _second_machine(project, tmp_path)
    assert precompact(clone, "restore", env=env).returncode == 0
    code, there = _verify(clone, env)
    assert (code, _summary_verdict(there)["status"]) == (0, "verified"), there


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_verify_fails_a_forged_or_altered_summary_on_the_remote(clear, tmp_path, forgery):
    """What `restore` refuses, `verify` fails (exit 1), naming the remote's index copy; before,
    it said ✓."""
    project, _ = clear
    _rewritten(project, tmp_path, FORGERIES[forgery])
    code, document = _verify(project.path)
    assert code == 1, document
    assert document["verdict"]["status"] == "FAILED"
    [finding] = [f for f in document["findings"] if f["layer"] == "summary"]
    assert finding["sequence"] == 1
    assert finding["problem"].startswith("the index copy on origin's "), finding
    assert ": compaction summary: " in finding["problem"], finding
    assert _summary_verdict(document)["status"] == "FAILED"
    said = precompact(project.path, "verify").stdout
    assert said.startswith("✗ first broken link: Trial #1 savepoint 1 [summary]: the index copy on origin's "), said


# Each edit of logs/ and the verdict on it: what this machine recorded and sealed, signed only by
# another key, is owed its signature by yours (the next flush signs it), not a forgery.
IN_LOGS = {
    "altered": "FAILED",
    "signature flipped": "FAILED",
    "another key": "not verified",
    "summary line gone": "FAILED",
}


@pytest.mark.parametrize("forgery", sorted(IN_LOGS))
def test_verify_judges_a_summary_edited_in_logs(clear, forgery):
    project, _ = clear
    index = project.logs / "precompact-savepoint.jsonl"
    lines = [json.loads(line) for line in index.read_text().splitlines() if line]
    index.write_text("".join(json.dumps(line) + "\n" for line in FORGERIES[forgery](lines)))
    code, document = _verify(project.path)
    verdict = _summary_verdict(document)
    assert verdict["status"] == IN_LOGS[forgery], verdict
    assert verdict["detail"].startswith("in logs/: compaction summary"), verdict
    if IN_LOGS[forgery] == "FAILED":
        assert code == 1
        assert [f["layer"] for f in document["findings"]] == ["summary"], document["findings"]
    else:
        assert code == 4 and "not signed yet by" in verdict["detail"], verdict


def test_a_summary_moved_to_another_savepoint_in_logs_fails_verify(tmp_path):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    for seed, name in ((1, "first"), (2, "second")):
        planted = session(seed, cwd=str(project.path))
        transcript = write_transcript(planted, tmp_path / f"{name}.jsonl")
        event = {"session_id": name, "transcript_path": str(transcript), "cwd": str(project.path), "trigger": "auto"}
        assert hook({**event, "hook_event_name": "PreCompact", "custom_instructions": ""}).returncode == 0
        assert hook({**event, "hook_event_name": "PostCompact", "compact_summary": planted.summary}).returncode == 0
        assert wait_until(lambda: worker_finished(project.path), 60)
    assert precompact(project.path, "flush").returncode == 0
    index = project.logs / "precompact-savepoint.jsonl"
    lines = [json.loads(line) for line in index.read_text().splitlines() if line]
    assert [e["sequence"] for e in lines if e["event"] == "SUMMARY_SIGNED"] == [1, 2]
    kept = [e for e in lines if e["event"] not in ("COMPACT_SUMMARY", "SUMMARY_SIGNED")]
    second = [e for e in lines if e["event"] in ("COMPACT_SUMMARY", "SUMMARY_SIGNED") and e["sequence"] == 2]
    index.write_text("".join(json.dumps(e) + "\n" for e in kept + [{**e, "sequence": 1} for e in second]))
    code, document = _verify(project.path)
    assert code == 1, document
    verdict = _summary_verdict(document)
    assert verdict["status"] == "FAILED" and "signed for another savepoint" in verdict["detail"], verdict
    assert "summary" not in next(s for s in document["savepoints"] if s["sequence"] == 2)["layers"]


def _post_compact_killed_before_its_worker(project: Project, tmp_path: Path) -> str:
    """PreCompact saves and its worker pushes; PostCompact records the summary and is killed
    (SIGKILL) where it starts its worker: no worker signs the summary. Returns the summary."""
    import signal
    import sys

    planted = session(5, cwd=str(project.path))
    transcript = write_transcript(planted, tmp_path / "session.jsonl")
    event = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(project.path), "trigger": "auto"}
    assert hook({**event, "hook_event_name": "PreCompact", "custom_instructions": ""}).returncode == 0
    assert wait_until(lambda: worker_finished(project.path), 60)
    code = (
        "import os, signal\n"
        "from precompact.ops import background\n"
        "background.spawn = lambda *_: os.kill(os.getpid(), signal.SIGKILL)\n"
        "from precompact.edges.hook import run\n"
        "run()\n"
    )
    given = json.dumps({**event, "hook_event_name": "PostCompact", "compact_summary": planted.summary}).encode()
    killed = subprocess.run(
        [sys.executable, "-c", code], input=given, cwd=project.path, capture_output=True, check=False
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert [e["event"] for e in _index(project.logs) if "SUMMARY" in e["event"]] == ["COMPACT_SUMMARY"]
    return planted.summary


def test_a_summary_whose_worker_never_ran_is_said_unsigned_and_the_next_session_start_signs_it(tmp_path):
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False, encrypted=False)
    _post_compact_killed_before_its_worker(project, tmp_path)
    key = str(project.authority().pubkey())

    [row] = json.loads(precompact(project.path, "status", "--json").stdout)["savepoints"]
    assert row["summary_not_signed"].startswith(f"compaction summary not signed yet by {key}"), row
    assert "`precompact flush` signs it" in row["summary_not_signed"]
    shown = precompact(project.path, "status").stdout
    assert f"        summary: compaction summary not signed yet by {key}" in shown, shown
    code, document = _verify(project.path)
    assert code == 4, document
    verdict = _summary_verdict(document)
    assert verdict["status"] == "not verified" and verdict["detail"].startswith(
        f"in logs/: compaction summary not signed yet by {key}"
    ), verdict
    said = precompact(project.path, "verify").stdout
    assert "✓" not in said and "[summary]: not verified (in logs/: compaction summary not signed yet" in said, said

    # The next session start (a resume, hours later) starts the worker, which signs and pushes it.
    resumed = {"session_id": "later", "cwd": str(project.path), "hook_event_name": "SessionStart", "source": "resume"}
    assert hook(resumed).returncode == 0
    assert wait_until(lambda: any(e["event"] == "SUMMARY_SIGNED" for e in _index(project.logs)), 60)
    wait_for_worker(project)  # its push of the signed summary done
    assert (
        json.loads(precompact(project.path, "status", "--json").stdout)["savepoints"][0]["summary_not_signed"] is None
    )
    code, document = _verify(project.path)
    assert (code, _summary_verdict(document)["status"]) == (0, "verified"), document


@pytest.mark.parametrize("cannot_sign", ["chain.authority names another key", "the keypair is not one"])
def test_a_session_start_starts_no_worker_for_a_summary_no_flush_here_can_sign(tmp_path, cannot_sign):
    """fix16c: where no flush here can sign the summary a killed PostCompact left unsigned
    (chain.authority names another key than the keypair's, or the keypair file does not read), a
    session start starts no worker for it (each one did); `status` says why, with the fix. Once
    the keypair signs for the configured key, the next session start has it signed."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    _post_compact_killed_before_its_worker(project, tmp_path)
    own = project.authority()
    if cannot_sign == "the keypair is not one":
        signer, named = own, "your signing key"
        fix = f"keypair {project.keypair_file} is unreadable or not JSON"
        project.keypair_file.write_text("[1, 2,")
    else:
        signer = Keypair()
        named, fix = (
            str(signer.pubkey()),
            f"holds {own.pubkey()}: point chain.keypair at {signer.pubkey()}'s keypair file",
        )
        config = project.path / ".precompact.toml"
        config.write_text(config.read_text().replace("# authority = ", f'authority = "{signer.pubkey()}"  # ', 1))
        trust(project.path)

    lock = project.logs / "precompact-worker.lock"  # every worker opens it first (edges/worker.py)
    resumed = {"session_id": "later", "cwd": str(project.path), "hook_event_name": "SessionStart", "source": "resume"}
    for _ in range(2):
        lock.unlink(missing_ok=True)
        assert hook(resumed).returncode == 0
        # A worker spawned is alive from the spawn on (Popen returns after exec), or has made its lock.
        assert (workers_of(project), lock.exists()) == ([], False), "a worker that could sign nothing"
    [row] = json.loads(precompact(project.path, "status", "--json").stdout)["savepoints"]
    said = row["summary_not_signed"]
    assert said.startswith(f"compaction summary not signed yet by {named}"), row
    assert fix in said, said

    project.keypair_file.write_text(json.dumps(list(bytes(signer))))
    assert hook(resumed).returncode == 0
    signed = lambda: [e["signer"] for e in _index(project.logs) if e["event"] == "SUMMARY_SIGNED"]
    assert wait_until(lambda: signed() == [str(signer.pubkey())], 60)
    wait_for_worker(project)


def _without(*kinds: str):
    return lambda lines: [line for line in lines if line["event"] not in kinds]


SUMMARY_LINES = ("COMPACT_SUMMARY", "SUMMARY_SIGNED")
# Where the summary is not held alike in logs/ and on the remote, and what verify says (exit 4).
NOT_HELD_ALIKE = {
    "only the remote holds it": ("logs", _without(*SUMMARY_LINES), "logs/ lacks the compaction summary "),
    "the remote's copy lacks it": ("remote", _without(*SUMMARY_LINES), "holds its savepoint without it"),
    "the remote's copy is unsigned": ("remote", _without("SUMMARY_SIGNED"), "compaction summary carries no signature"),
}


@pytest.mark.parametrize("case", sorted(NOT_HELD_ALIKE))
def test_a_summary_not_held_signed_alike_in_logs_and_on_the_remote_is_not_verified(clear, tmp_path, case):
    project, _ = clear
    where, edit, said = NOT_HELD_ALIKE[case]
    if where == "remote":
        _rewritten(project, tmp_path, edit)
    else:
        index = project.logs / "precompact-savepoint.jsonl"
        lines = [json.loads(line) for line in index.read_text().splitlines() if line]
        index.write_text("".join(json.dumps(line) + "\n" for line in edit(lines)))
    code, document = _verify(project.path)
    verdict = _summary_verdict(document)
    assert (code, verdict["status"]) == (4, "not verified"), document
    assert said in verdict["detail"], verdict
