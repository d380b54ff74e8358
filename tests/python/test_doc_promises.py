"""Promises README.md and docs/ make that no other test checked (#48, tests/promises.toml names
each doc line these check), through the installed command as a user runs it."""

from __future__ import annotations

import json
import re
import shlex
import shutil

from solders.keypair import Keypair

from precompact.config import approval
from precompact.local import savepoint_log
from support.commands import hook, installed_command, precompact
from support.conversations import START, Conversation, save
from support.localnet import REPO
from support.projects import new_project, trust
from support.secret_corpus import SECRETS


def test_a_configuration_or_an_approval_other_users_can_change_counts_for_nothing(tmp_path):
    """docs/security.md, "Another user on the machine": a `.precompact.toml` "writable by group
    or others, is refused (one line naming the fix), and so is an approval record that is not
    yours or is writable by others"."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    config = project.path / ".precompact.toml"
    for mode in (0o620, 0o602):
        config.chmod(mode)
        result = precompact(project.path, "status")
        assert result.returncode == 1, result.stdout + result.stderr
        assert result.stderr.count("\n") == 1 and "can be changed by other users" in result.stderr, result.stderr
        assert f"`chmod 600 {config}`, then `precompact trust`" in result.stderr, result.stderr
    config.chmod(0o600)
    assert precompact(project.path, "status").returncode == 0
    [record] = approval.store().iterdir()
    record.chmod(0o606)
    untrusted = precompact(project.path, "status")
    assert untrusted.returncode == 1 and untrusted.stderr.count("\n") == 1, untrusted.stderr
    assert "precompact trust" in untrusted.stderr, untrusted.stderr
    record.chmod(0o600)
    assert precompact(project.path, "status").returncode == 0


def test_the_secret_corpus_holds_as_many_formats_as_security_md_says():
    """docs/security.md: test_secrets.py "plants N secret formats" and "N of N formats
    redacted": the figure is the corpus's size, so it cannot go stale."""
    stated = re.findall(
        r"plants (\d+) secret formats|(\d+) of (\d+) formats", (REPO / "docs" / "security.md").read_text()
    )
    figures = {int(number) for match in stated for number in match if number}
    assert figures == {len(SECRETS)}, (figures, len(SECRETS))


def test_install_mcp_for_codex_or_gemini_prints_the_agents_own_command_by_absolute_path(tmp_path):
    """docs/agents.md: "`--mcp` with these agents prints the agent's own command that registers
    `precompact mcp`" (`codex mcp add precompact -- <python> -I <abs>/precompact mcp`, `gemini mcp
    add precompact <python> -I <abs>/precompact mcp`)."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    absolute = shlex.join(installed_command())
    for agent, command in [
        ("codex", f"codex mcp add precompact -- {absolute} mcp"),
        ("gemini", f"gemini mcp add precompact {absolute} mcp"),
    ]:
        done = precompact(project.path, "install", "--agent", agent, "--mcp", home=tmp_path / "home")
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"to give {agent} precompact's recall, show and savepoints tools, run: {command}" in done.stdout


def test_the_rent_the_docs_state_is_the_records_pinned_rent():
    """README.md and docs/setup.md: "about 0.0048 SOL of rent per instance", docs/program.md "about
    0.005 SOL per instance". The record's rent
    is pinned in tests/vectors/savepoint-v1.json, which test_vectors checks against what the
    runtime charges; the figure the docs give is that, rounded."""
    vector = json.loads((REPO / "tests" / "vectors" / "savepoint-v1.json").read_text())
    rent_in_sol = vector["account"]["rent_exempt_lamports"] / 1_000_000_000
    for doc in ("README.md", "docs/setup.md", "docs/program.md"):
        text = " ".join((REPO / doc).read_text().split())
        [stated] = re.findall(r"about ([0-9.]+) SOL (?:of rent )?per instance", text)
        assert float(stated) == round(rent_in_sol, len(stated.split(".")[1])), (doc, stated, rent_in_sol)


def test_the_recall_budget_bounds_the_text_form_only(tmp_path):
    """docs/cli.md, `recall`'s JSON: "`--budget` bounds the text form only": with `--json` every
    hit is there, whatever the budget."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    session = Conversation(tmp_path / "session.jsonl", "s-budget", START)
    for n in range(20):
        session.turn_with(
            f"Check the ledger, batch {n}.", f"ledger --batch {n}", f"ledger {n} agrees", f"Ledger {n} is fine."
        )
    save(project, session)
    text = precompact(project.path, "recall", "ledger", "--budget", "300")
    assert text.returncode == 0 and len(text.stdout.rstrip("\n")) <= 300, text.stdout
    whole = json.loads(precompact(project.path, "recall", "ledger", "--json").stdout)
    bounded = json.loads(precompact(project.path, "recall", "ledger", "--budget", "300", "--json").stdout)
    assert len(whole["hits"]) > 20 and bounded["hits"] == whole["hits"]
    assert len(json.dumps([hit["excerpt"] for hit in bounded["hits"]])) > 300


def test_export_without_output_writes_the_snapshots_bytes_unchanged_into_a_pipe(tmp_path):
    """docs/cli.md: "`export` without `--output` writes the snapshot's bytes unchanged into a file
    or a pipe": what a pipe gets is what `--output` writes, byte for byte, escape included."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    session = Conversation(tmp_path / "session.jsonl", "s-export", START)
    session.turn_with("Print the banner.", "cat banner", "\x1b[31mred\x1b[0m \u202eevil", "Printed.")
    save(project, session)
    written = tmp_path / "export.json"
    assert precompact(project.path, "export", "--output", str(written)).returncode == 0
    piped = precompact(project.path, "export", text=False)
    assert piped.returncode == 0 and piped.stdout == written.read_bytes()
    assert b"\\u001b[31mred" in piped.stdout and b"<U+202E>" not in piped.stdout


def test_the_compact_note_is_the_configured_text_with_the_savepoint_named(tmp_path):
    """docs/sessions.md: "`hooks.compact_note` changes the text (`{savepoint}` names it)": what the
    PreCompact hook prints to Claude Code's summariser is that text, the savepoint filled in."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    config = project.path / ".precompact.toml"
    config.write_text(config.read_text().replace("[hooks]\n", '[hooks]\ncompact_note = "Kept as {savepoint}."\n', 1))
    trust(project.path)
    session = Conversation(tmp_path / "session.jsonl", "s-note", START)
    session.turn_with("Build the parser.", "make parser", "built", "Built.")
    event = {
        "hook_event_name": "PreCompact",
        "session_id": "s-note",
        "cwd": str(project.path),
        "transcript_path": str(session.path),
        "trigger": "manual",
    }
    done = hook(event, cwd=project.path)
    assert done.returncode == 0, done.stderr
    [created] = savepoint_log.savepoints(project.logs)
    said = done.stdout.decode().rstrip("\n")
    assert said == f"Kept as savepoint 1 (sha256:{created.snapshot_hash.removeprefix('sha256:')[:12]}).", said


def test_the_summariser_is_told_full_only_when_every_transcript_line_was_saved_whole(tmp_path):
    """docs/sessions.md: "Full" only when every transcript line was saved whole; a malformed
    line is kept as at most its first MiB of text, and the text then says how many lines are
    saved only in part (review 3: a 17 MiB line kept as its head, the note still said "full").
    A note of the user's own without {transcript} is followed by the same words."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    session = Conversation(tmp_path / "session.jsonl", "s-cut", START)
    session.turn_with("Build the parser.", "make parser", "built", "Built.")
    event = {
        "hook_event_name": "PreCompact",
        "session_id": "s-cut",
        "cwd": str(project.path),
        "transcript_path": str(session.path),
        "trigger": "manual",
    }

    def note() -> str:
        done = hook(event, cwd=project.path)
        assert done.returncode == 0, done.stderr
        return done.stdout.decode()

    assert note().startswith("The full pre-compaction transcript is saved as precompact savepoint 1 (sha256:")
    with session.path.open("a") as f:
        f.write('{"type": "user", "message": {"content": "cut here\n')  # a line that is no entry
        f.write("\n")
    session.turn_with("Now test it.", "make test", "passed", "Tested.")
    said = note()
    in_part = (
        "1 transcript line saved only in part (a malformed or overlong line is kept as at most its first MiB "
        "of text, one still being written not at all): recall will not find the rest of them"
    )
    assert said.startswith(f"The pre-compaction transcript, but for {in_part}, is saved as precompact savepoint 2"), (
        said
    )
    assert "full" not in said.split(";")[0]
    assert savepoint_log.savepoints(project.logs)[-1].lines_in_part == 1
    started = hook({**event, "hook_event_name": "SessionStart", "source": "resume"}, cwd=project.path)
    brief = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert (
        "its snapshot holds the conversation before compaction. 1 transcript line(s) of it are saved only in part: recall will not find the rest of them."
        in brief
    ), brief

    config = project.path / ".precompact.toml"
    config.write_text(config.read_text().replace("[hooks]\n", '[hooks]\ncompact_note = "Kept as {savepoint}."\n', 1))
    trust(project.path)
    session.turn_with("Ship it.", "make dist", "done", "Shipped.")
    said = note().rstrip("\n")
    created = savepoint_log.savepoints(project.logs)[-1]
    digest = created.snapshot_hash.removeprefix("sha256:")[:12]
    assert said == f"Kept as savepoint 3 (sha256:{digest}). ({in_part}.)", said


def test_after_the_keypair_changes_the_worker_signs_this_machines_savepoints_again_with_the_new_key(tmp_path):
    """docs/security.md, "Rotation": with the chain off, point `chain.keypair` at a new keypair
    and run `precompact trust`; "The worker re-signs, with the new key, every savepoint whose line
    this machine wrote", so the remote verifies under the new public key."""
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    saved = precompact(project.path, "savepoint", "--no-transcript", "--force")
    assert saved.returncode == 3, saved.stderr  # the chain layer is off
    old = str(project.authority().pubkey())
    new = Keypair()
    new_file = tmp_path / "new-id.json"
    new_file.write_text(json.dumps(list(bytes(new))))
    new_file.chmod(0o600)
    config = project.path / ".precompact.toml"
    config.write_text(config.read_text().replace(str(project.keypair_file), str(new_file)))
    trust(project.path)
    assert precompact(project.path, "flush").returncode == 0
    lines = (project.logs / "precompact-savepoint.jsonl").read_text().splitlines()
    signed = [event for event in map(json.loads, lines) if event["event"] == "SAVEPOINT_SIGNED"]
    assert [(event["sequence"], event["signer"]) for event in signed] == [(1, old), (1, str(new.pubkey()))]
    # The index copy on the remote carries it: with logs/ gone, git's copy verifies under the new key.
    shutil.rmtree(project.logs)
    done = precompact(project.path, "resurrect", "--json")
    assert done.returncode == 0, done.stderr
    integrity = json.loads(done.stdout)["checks"]["integrity"]
    assert integrity["status"] == "verified" and f"signed by {new.pubkey()}" in integrity["detail"], integrity
