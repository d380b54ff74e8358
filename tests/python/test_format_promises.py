"""What a reader of precompact's files, output and program relies on (#48, tests/promises.toml
names each doc line these check): the chunks, their canonical JSON, the signed index line and
each savepoint's trigger, checked against files the installed command really wrote, read the way
docs/snapshot-format.md tells a verifier written from it to read them, with no precompact code;
docs/sessions.md's recall examples against what recall prints; and the program's error codes
against the program's tests."""

from __future__ import annotations

import hashlib
import json
import re
import stat

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from support.commands import hook, precompact, wait_until, worker_finished
from support.localnet import REPO
from support.projects import new_project
from support.transcript_gen import generate, payload

BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def canonical(value: object) -> bytes:
    """docs/snapshot-format.md's canonical JSON, as a reader builds it: sorted keys, compact
    separators, UTF-8 (the test's data holds no float)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def b58encode(data: bytes) -> str:
    number, text = int.from_bytes(data, "big"), ""
    while number:
        number, digit = divmod(number, 58)
        text = BASE58[digit] + text
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + text


def test_chunks_hold_whole_entries_with_no_raw_newline_named_by_their_hash_and_private(tmp_path):
    """docs/snapshot-format.md: chunks are `logs/precompact-chunks/<sha256-hex>`, "each named by
    the SHA-256 of its bytes, mode 0600"; a history chunk holds whole transcript entries, each its
    canonical JSON followed by a comma: "Canonical JSON never holds a raw newline, and an entry
    is never split"."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    # Over 2 MiB of entries, many of them tool results whose text spans many lines, so the
    # history spans several 1 MiB chunks.
    made = generate(tmp_path / "session.jsonl", 2_600_000, project=project.path)
    lines = [line for line in made.path.read_bytes().splitlines() if line.strip()]
    entries = [json.loads(line) for line in lines]
    assert sum(b"\\n" in line for line in lines) > len(lines) // 10, "many entries hold a newline in a string"
    saved = hook(payload("PreCompact", project.path, made.path), cwd=project.path)
    assert saved.returncode == 0, saved.stderr
    # More than PreCompact writes itself: queued, then written by the worker or by `flush`.
    flushed = precompact(project.path, "flush")
    assert flushed.returncode == 0, flushed.stdout + flushed.stderr
    [snapshot_file] = (project.logs / "precompact-saves").iterdir()
    snapshot = json.loads(snapshot_file.read_bytes())
    history = snapshot["conversation_chunks"]
    assert len(history) >= 2, "the history spans several chunks"

    chunk_dir = project.logs / "precompact-chunks"
    for chunk in chunk_dir.iterdir():
        data = chunk.read_bytes()
        assert chunk.name == hashlib.sha256(data).hexdigest(), f"{chunk.name} is not the SHA-256 of its bytes"
        assert stat.S_IMODE(chunk.stat().st_mode) == 0o600, f"{chunk.name} is not mode 0600"

    read_back = []
    for listed in history:
        data = (chunk_dir / listed["sha256"]).read_bytes()
        assert len(data) == listed["size"]
        assert b"\n" not in data and b"\r" not in data, "a history chunk holds a raw newline"
        assert data.endswith(b","), "each entry is followed by a comma, the chunk's last one too"
        # Parsed alone, a chunk is a list of whole entries: none was cut at the chunk's edge.
        whole = json.loads(b"[" + data[:-1] + b"]")
        assert canonical(whole)[1:-1] == data[:-1], "each entry is its canonical JSON"
        read_back.extend(whole)
    assert len(read_back) == len(entries)
    assert [entry.get("uuid") for entry in read_back] == [entry.get("uuid") for entry in entries]


def test_chunks_are_never_written_through_a_link(tmp_path):
    """docs/snapshot-format.md: chunks are "written through the confined `logs/` (no link
    followed)": a `logs/precompact-chunks` that is a link to a directory outside gets nothing."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    outside = tmp_path / "outside"
    outside.mkdir()
    project.logs.mkdir(exist_ok=True)
    (project.logs / "precompact-chunks").symlink_to(outside)
    made = generate(tmp_path / "session.jsonl", 40_000, project=project.path)
    assert hook(payload("PreCompact", project.path, made.path), cwd=project.path).returncode == 0
    assert list(outside.iterdir()) == [], "a chunk was written through the link"
    assert (project.logs / "precompact-chunks").is_symlink(), "the link is left as it was"


def test_the_signed_index_line_verifies_with_the_init_keypair_over_the_documented_bytes(tmp_path):
    """docs/snapshot-format.md: "`line_signature` is ed25519, by the keypair `chain.keypair` names
    (the one `init` creates ...), over `precompact/index-line/v1`, a zero byte, and the whole
    `SAVEPOINT_CREATED` line as canonical JSON (... exactly the line as the index writes it)";
    `signer` is the base58 public key and the signature 128 hex digits."""
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    for _ in range(2):
        made = generate(tmp_path / "session.jsonl", 40_000, project=project.path)
        assert hook(payload("PreCompact", project.path, made.path), cwd=project.path).returncode == 0
        assert wait_until(lambda: worker_finished(project.path), timeout=60)
    flushed = precompact(project.path, "flush")
    assert flushed.returncode == 0, flushed.stdout + flushed.stderr

    seed_and_key = bytes(json.loads(project.keypair_file.read_text()))
    public_key = seed_and_key[32:]
    lines = (project.logs / "precompact-savepoint.jsonl").read_bytes().splitlines()
    created = {}
    for line in lines:
        event = json.loads(line)
        if event["event"] == "SAVEPOINT_CREATED":
            assert canonical(event) == line, "the index writes the line as canonical JSON"
            created[(event["instance"], event["sequence"])] = line
    signed = [json.loads(line) for line in lines if json.loads(line)["event"] == "SAVEPOINT_SIGNED"]
    assert sorted((e["instance"], e["sequence"]) for e in signed) == sorted(created), "each savepoint is signed once"
    for event in signed:
        assert event["signer"] == b58encode(public_key)
        assert re.fullmatch(r"[0-9a-f]{128}", event["line_signature"]), event["line_signature"]
        line = created[(event["instance"], event["sequence"])]
        assert event["snapshot_hash"] == json.loads(line)["snapshot_hash"]
        key = Ed25519PublicKey.from_public_bytes(public_key)
        # Raises InvalidSignature when the signed bytes are not exactly these.
        key.verify(bytes.fromhex(event["line_signature"]), b"precompact/index-line/v1\0" + line)


def test_every_error_code_of_the_program_is_expected_by_a_program_test():
    """docs/program.md: "Every rejection has its own error code (`programs/precompact/src/error.rs`),
    and a test in `tests/harness/tests/` expects each"."""
    source = (REPO / "programs" / "precompact" / "src" / "error.rs").read_text()
    enum = re.search(r"pub enum PrecompactError \{(.*?)\n\}", source, re.DOTALL)
    assert enum is not None
    variants = re.findall(r"^\s*([A-Z][A-Za-z0-9]*),\s*$", enum.group(1), re.MULTILINE)
    messages = re.findall(r'#\[msg\("([^"]*)"\)\]', enum.group(1))
    assert len(variants) == len(set(variants)) == len(messages) == len(set(messages)) > 20
    tests = "\n".join(path.read_text() for path in sorted((REPO / "tests" / "harness" / "tests").glob("*.rs")))
    # An assertion that a transaction fails with it (program_error), or that the parser returns it.
    expected = set(re.findall(r"(?:program_error\(\d+, |expected\()PrecompactError::([A-Za-z0-9]+)\)", tests))
    assert sorted(set(variants) - expected) == [], "error codes no test expects"


def test_each_way_a_savepoint_is_made_is_its_index_lines_trigger(tmp_path):
    """docs/snapshot-format.md: "`trigger` is `manual` or `auto` (PreCompact, or `precompact
    savepoint`), `recovered`, `session_end` (the SessionEnd hook) or `import`" (the import is
    test_capture.py's, through the real Claude Code's sessions)."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)

    def transcript(name: str, *entries: dict) -> str:
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
        return str(path)

    def said(uuid: str, text: str) -> dict:
        return {"type": "user", "uuid": uuid, "message": {"role": "user", "content": text}}

    made = {
        "pre-auto": hook(
            payload("PreCompact", project.path, session_id="pre-auto", trigger="auto")
            | {"transcript_path": transcript("a", said("a1", "Automatic."))},
            cwd=project.path,
        ),
        "pre-manual": hook(
            payload("PreCompact", project.path, session_id="pre-manual", trigger="manual")
            | {"transcript_path": transcript("m", said("m1", "By hand."))},
            cwd=project.path,
        ),
        "cli": precompact(
            project.path,
            "savepoint",
            "--transcript",
            transcript("c", said("c1", "From the CLI.")),
            "--session-id",
            "cli",
        ),
        "cli-auto": precompact(
            project.path,
            "savepoint",
            *("--transcript", transcript("ca", said("ca1", "From the CLI, auto.")), "--session-id", "cli-auto"),
            *("--trigger", "auto"),
        ),
        "ended": hook(
            payload("SessionEnd", project.path, session_id="ended", reason="other")
            | {"transcript_path": transcript("e", said("e1", "Goodbye."))},
            cwd=project.path,
        ),
        "recovered": hook(
            payload("PostCompact", project.path, session_id="recovered")
            | {
                "transcript_path": transcript(
                    "r",
                    said("r1", "Before the compaction."),
                    {
                        "type": "system",
                        "subtype": "compact_boundary",
                        "uuid": "b1",
                        "content": "Conversation compacted",
                    },
                )
            },
            cwd=project.path,
        ),
    }
    for name, done in made.items():
        assert done.returncode in (0, 3), (name, done.stdout, done.stderr)
    index = [json.loads(line) for line in (project.logs / "precompact-savepoint.jsonl").read_bytes().splitlines()]
    triggers = {e["session_id"]: e["trigger"] for e in index if e["event"] == "SAVEPOINT_CREATED"}
    assert triggers == {
        "pre-auto": "auto",
        "pre-manual": "manual",
        "cli": "manual",
        "cli-auto": "auto",
        "ended": "session_end",
        "recovered": "recovered",
    }


def test_the_recall_examples_of_sessions_md_are_what_recall_prints(tmp_path):
    """docs/sessions.md's two `precompact recall` examples, run on the session they quote: the
    command prints exactly the lines the doc shows (read from the doc, so either may not drift)."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False, instance="Gabriel #215")

    def entry(n: int, role: str, content: object) -> dict:
        kind = "assistant" if role == "assistant" else "user"
        return {
            "type": kind,
            "uuid": f"e{n}",
            "sessionId": "s-staging",
            "timestamp": f"2026-11-30T09:0{n}:00.000Z",
            "message": {"role": kind, "content": content},
        }

    def bash(n: int, command: str) -> dict:
        return entry(
            n, "assistant", [{"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": command}}]
        )

    entries = [
        entry(1, "user", "Run the migrations against staging."),
        bash(2, "python manage.py migrate"),
        entry(
            3,
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t2",
                    "content": 'ERROR: relation "orders_archive" already exists (migration 0042_split_orders)',
                }
            ],
        ),
        entry(4, "assistant", "Migration 0042 fails: orders_archive exists already on staging."),
        entry(5, "user", "Never drop tables on staging; rename them instead."),
        bash(6, "psql -c 'ALTER TABLE orders_archive RENAME TO orders_archive_old'"),
    ]
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("".join(json.dumps(e) + "\n" for e in entries))
    saved = precompact(project.path, "savepoint", "--transcript", str(transcript), "--session-id", "s-staging")
    assert saved.returncode == 3, saved.stdout + saved.stderr  # chain and git off: saved, layers off
    doc = (REPO / "docs" / "sessions.md").read_text()
    # Each example: the command after "$ ", then its output up to the next one or the block's end.
    shown = dict(re.findall(r"^\$ (precompact recall [^\n]*)\n((?:(?!\$ |```).*\n)*)", doc, re.MULTILINE))
    assert set(shown) == {"precompact recall orders_archive", "precompact recall staging --role user"}, shown
    for command, output in shown.items():
        printed = precompact(project.path, *command.split()[1:])
        assert printed.returncode == 0, printed.stderr
        assert printed.stdout == output.rstrip("\n") + "\n", (command, printed.stdout, output)
