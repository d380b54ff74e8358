"""Sessions that grow: chunked snapshots re-use what earlier savepoints stored, the hook reads
only the new part of the transcript when the part before is unchanged, and a chunk missing or
altered, locally or in git, is named by verify and never passed off by resurrect or recall."""

from __future__ import annotations

import hashlib
import json
import zlib
from pathlib import Path

import pytest

from precompact.config import settings as configuration
from precompact.local import chunks, provenance, savepoint_log, snapshot
from precompact.local import read_position as resume
from precompact.local.canonical import canonical
from precompact.remote import encryption
from precompact.transcript import claude_code as transcript
from support.commands import precompact
from support.projects import Project, full_document, new_project, store, trust
from support.transcript_gen import generate

# Small chunks, so that a transcript of a few hundred KB spans many.
CHUNK_BYTES = 32 << 10
# What differs between two savepoints of the same transcript, whatever the way it was read.
PER_SAVEPOINT = ("nonce", "previous", "sequence", "timestamp_iso8601", "conversation_chunks", "format_version")


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    # A chunk ends after the transcript block that fills it: blocks smaller still.
    monkeypatch.setattr(chunks, "TARGET_BYTES", CHUNK_BYTES)
    monkeypatch.setattr(transcript, "BLOCK_BYTES", 4 << 10)


@pytest.fixture
def resumes(monkeypatch) -> list[bool]:
    """Whether each savepoint made in this test went on from a resume point."""
    seen: list[bool] = []
    load = resume.load

    def spy(*args, **kwargs):
        found = load(*args, **kwargs)
        seen.append(found is not None)
        return found

    monkeypatch.setattr(resume, "load", spy)
    return seen


@pytest.fixture
def source(tmp_path) -> list[bytes]:
    """The lines of a generated transcript, to be written to a session bit by bit."""
    return generate(tmp_path / "source.jsonl", 600_000).path.read_bytes().splitlines(keepends=True)


def save(project: Project, transcript_file: Path, session_id: str) -> snapshot.WrittenSnapshot:
    loaded = configuration.load(project.path)
    return snapshot.create_savepoint(
        snapshot.Settings.of(loaded), snapshot.Session(session_id, str(transcript_file), str(project.path))
    )


def listed(written: snapshot.WrittenSnapshot) -> list[chunks.Ref]:
    """Every chunk the snapshot lists: its history's, then its loaded files'."""
    return chunks.refs(json.loads(written.path.read_bytes()))


def history(written: snapshot.WrittenSnapshot) -> list[chunks.Ref]:
    return [chunks.parse_ref(item) for item in json.loads(written.path.read_bytes())["conversation_chunks"]]


def document(written: snapshot.WrittenSnapshot) -> dict:
    return json.loads(full_document(written.path))


def same_content(a: dict, b: dict) -> bool:
    return {k: v for k, v in a.items() if k not in PER_SAVEPOINT} == {
        k: v for k, v in b.items() if k not in PER_SAVEPOINT
    }


def chunk_file(project: Project, ref: chunks.Ref) -> Path:
    return project.logs / chunks.CHUNKS_DIR / ref.sha256


def test_an_appending_session_stores_and_reads_only_what_is_new(tmp_path, resumes):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    # Files in play, read again and again; one holds a secret.
    secret = tmp_path / "settings.py"
    secret.write_text('DATABASE_URL = "postgres://admin:Zq8rT2vLp9xWm4Kd@db.internal:5432/app"\n')
    files = [secret, *sorted((Path(chunks.__file__).parent).glob("*.py"))[:4]]
    made = generate(tmp_path / "source.jsonl", 600_000, project=project.path, sources=files)
    source = made.path.read_bytes().splitlines(keepends=True)
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes(b"".join(source[: len(source) // 2]))
    first = save(project, transcript, "s-1")
    with transcript.open("ab") as f:
        f.writelines(source[len(source) // 2 :])
    second = save(project, transcript, "s-1")
    assert resumes == [False, True], "the second savepoint goes on from the first's last full chunk"

    before, after = history(first), history(second)
    assert len(before) > 3
    assert after[: len(before) - 1] == before[:-1], "every full chunk is re-used; only the last one changed"
    stored = sum(p.stat().st_size for p in (project.logs / chunks.CHUNKS_DIR).iterdir())
    assert stored <= transcript.stat().st_size + 2 * CHUNK_BYTES, "the history is stored about once"

    # Read from the start, the same transcript gives the same snapshot content.
    (project.logs / resume.RESUME_DIR / f"{resume.key('Trial #1', 's-1', str(transcript))}.json").unlink()
    third = save(project, transcript, "s-1")
    assert resumes[-1] is False
    assert same_content(document(second), document(third))
    files_in_play = document(third)["loaded_files"]
    assert len(files_in_play) == len(files) and all("content" in f for f in files_in_play.values())
    assert document(third)["redaction"]["total"] > 0 and "Zq8rT2vLp9xWm4Kd" not in json.dumps(files_in_play)
    assert len(document(third)["conversation_history"]) == sum(1 for line in source if line.strip())

    assert precompact(project.path, "verify").returncode == 0
    resurrected = precompact(project.path, "resurrect", "--sequence", "2", "--format", "json")
    assert resurrected.returncode == 0 and json.loads(resurrected.stdout)["intact"]
    exported = [precompact(project.path, "export", "--sequence", "2").stdout for _ in range(2)]
    assert exported[0] == exported[1] == full_document(second.path).decode()
    assert json.loads(exported[0])["conversation_history"] == document(third)["conversation_history"]
    turns = sum(1 for line in source if b'"content": "Request ' in line)
    found = precompact(project.path, "recall", f'"Request {turns}"', "--savepoint", "2")
    assert found.returncode == 0 and f"Request {turns}:" in found.stdout, found.stdout


def test_a_transcript_rewritten_before_the_resume_point_is_read_whole(tmp_path, source, resumes):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes(b"".join(source[: len(source) // 2]))
    save(project, transcript, "s-1")
    # The same length, one word changed near the start: only the prefix hash can tell.
    lines = source[: len(source) // 2]
    assert b"Request 1:" in lines[0]
    lines[0] = lines[0].replace(b"Request 1:", b"Rewrite 1:")
    transcript.write_bytes(b"".join(lines) + b"".join(source[len(source) // 2 :]))
    second = save(project, transcript, "s-1")
    assert resumes == [False, False], "a changed prefix means a full read"
    history = document(second)["conversation_history"]
    assert history[0]["message"]["content"].startswith("Rewrite 1:")
    assert len(history) == sum(1 for line in source if line.strip())
    assert precompact(project.path, "verify").returncode == 0
    found = precompact(project.path, "recall", '"Rewrite 1"', "--savepoint", "2")
    assert "Rewrite 1" in found.stdout
    assert precompact(project.path, "resurrect", "--format", "json").returncode == 0


def test_two_sessions_in_one_project_each_go_on_from_their_own_point(tmp_path, source, resumes):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    half = len(source) // 2
    a.write_bytes(b"".join(source[:half]))
    other = [line.replace(b"Request", b"Question") for line in source]
    b.write_bytes(b"".join(other[:half]))
    save(project, a, "s-a")
    save(project, b, "s-b")
    with a.open("ab") as f:
        f.writelines(source[half:])
    with b.open("ab") as f:
        f.writelines(other[half:])
    third, fourth = save(project, a, "s-a"), save(project, b, "s-b")
    assert resumes == [False, False, True, True]
    assert all("Question" not in json.dumps(e) for e in document(third)["conversation_history"])
    assert all("Request" not in json.dumps(e) for e in document(fourth)["conversation_history"])
    assert len(document(fourth)["conversation_history"]) == sum(1 for line in other if line.strip())
    assert precompact(project.path, "verify").returncode == 0
    assert "Question 3" in precompact(project.path, "recall", '"Question 3"').stdout


def git_object(project: Project, blob: str) -> Path:
    return store(project.path) / "objects" / blob[:2] / blob[2:]


def committed(project: Project) -> list[chunks.Ref]:
    """One savepoint of several chunks, committed and pushed."""
    transcript = project.path.parent / "session.jsonl"
    generate(transcript, 300_000)
    written = save(project, transcript, "s-1")
    done = precompact(project.path, "flush")
    assert done.returncode == 0, done.stdout + done.stderr
    return listed(written)


@pytest.mark.slow
def test_a_chunk_missing_or_altered_locally_is_named_and_git_supplies_it(tmp_path):
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False, encrypted=False)
    refs = committed(project)
    victim = refs[1]
    chunk_file(project, victim).unlink()
    verified = precompact(project.path, "verify")
    assert verified.returncode == 1
    assert f"savepoint 1 [layer 1]: chunk {victim.sha256} ({victim.size} bytes) is missing" in verified.stdout
    # The worker indexed nothing (no worker ran): recall must refuse, not quote.
    assert "fails verification: chunk" in precompact(project.path, "recall", "Conclusion").stdout
    restored = precompact(project.path, "resurrect", "--format", "json")
    assert restored.returncode == 0 and json.loads(restored.stdout)["intact"]
    assert (
        chunk_file(project, victim).read_bytes()
        == zlib.decompress(git_object(project, blob_of(project, victim)).read_bytes()).split(b"\0", 1)[1]
    ), "the copy from git is put back"
    assert precompact(project.path, "verify").returncode == 0

    data = chunk_file(project, victim).read_bytes()
    chunk_file(project, victim).write_bytes(data.replace(b"Conclusion", b"Confusion", 1))
    verified = precompact(project.path, "verify")
    assert verified.returncode == 1 and f"chunk {victim.sha256} ({victim.size} bytes) is altered" in verified.stdout
    resurrected = precompact(project.path, "resurrect", "--format", "json")
    assert resurrected.returncode == 1, "an altered local chunk fails the resurrection's checks"
    assert json.loads(resurrected.stdout)["checks"]["chunks"]["status"] == "FAILED"
    exported = precompact(project.path, "export")
    assert exported.returncode != 0 and "chunks" in exported.stderr


def blob_of(project: Project, ref: chunks.Ref) -> str:
    from precompact.remote import gitstore

    repo = gitstore.open_repository(gitstore.Target.of(configuration.load(project.path)))
    [savepoint] = savepoint_log.savepoints(project.logs)
    [blob] = gitstore.chunk_blob_ids(
        repo, [(savepoint.commit, ref)], encryption.Keys.of(configuration.load(project.path))
    )
    assert isinstance(blob, str)
    return blob


def test_a_chunk_missing_or_altered_in_git_is_named(tmp_path):
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False, encrypted=False)
    refs = committed(project)
    altered, missing = refs[0], refs[1]
    obj = git_object(project, blob_of(project, altered))
    data = chunk_file(project, altered).read_bytes().replace(b"Conclusion", b"Confusion", 1)
    obj.chmod(0o600)
    obj.write_bytes(zlib.compress(b"blob %d\0" % len(data) + data))
    git_object(project, blob_of(project, missing)).unlink()
    # Git's copies are checked against their names where logs/ cannot vouch for the blob.
    chunk_file(project, altered).unlink()
    verified = precompact(project.path, "verify")
    assert verified.returncode == 1
    assert f"[layer 2]: chunk {altered.sha256} ({altered.size} bytes) is altered in commit" in verified.stdout
    assert f"[layer 2]: chunk {missing.sha256} ({missing.size} bytes) is missing from commit" in verified.stdout
    resurrected = precompact(project.path, "resurrect")
    assert resurrected.returncode != 0 and f"chunk {altered.sha256}" in resurrected.stderr
    assert "fails verification: chunk" in precompact(project.path, "recall", "Conclusion").stdout


@pytest.mark.slow
def test_prune_removes_only_old_local_copies_that_git_holds(tmp_path, source):
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    transcript_file = tmp_path / "session.jsonl"
    written = []
    for part in range(3):
        with transcript_file.open("ab") as f:
            f.writelines(source[part * len(source) // 3 : (part + 1) * len(source) // 3])
        written.append(save(project, transcript_file, "s-1"))
    assert precompact(project.path, "prune", "--keep", "0").returncode != 0
    unpushed = precompact(project.path, "prune", "--keep", "1")
    assert unpushed.returncode == 0 and "pruned 0 savepoint(s)" in unpushed.stdout
    assert "kept savepoint 1 of Trial #1: not pushed yet" in unpushed.stdout
    assert all(w.path.exists() for w in written)

    assert precompact(project.path, "flush").returncode == 0
    pruned = precompact(project.path, "prune", "--keep", "1")
    assert pruned.returncode == 0 and "pruned 2 savepoint(s)" in pruned.stdout, pruned.stdout
    assert [w.path.exists() for w in written] == [False, False, True], "never the latest"
    left = {p.name for p in (project.logs / chunks.CHUNKS_DIR).iterdir()}
    assert left == {ref.sha256 for ref in listed(written[2])}, "only the kept savepoint's chunks stay"
    assert precompact(project.path, "verify").returncode == 0, "a pruned savepoint is checked in git"
    found = precompact(project.path, "recall", '"Request 1"')
    assert "savepoint 3 of Trial #1" in found.stdout and "Request 1:" in found.stdout, "recall reads the kept one"
    back = precompact(project.path, "resurrect", "--sequence", "1", "--format", "json")
    assert back.returncode == 0 and json.loads(back.stdout)["intact"], back.stderr
    assert written[0].path.exists(), "resurrect puts the copy from git back"
    assert precompact(project.path, "verify").returncode == 0


@pytest.mark.slow
def test_a_single_file_snapshot_of_format_1_stays_readable_and_verifiable(tmp_path, source):
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    transcript_file = tmp_path / "session.jsonl"
    transcript_file.write_bytes(b"".join(source))
    written = save(project, transcript_file, "s-1")
    # What precompact wrote before chunks: the whole document in the snapshot file, which the
    # index (this machine's record) names by its hash.
    whole = json.loads(full_document(written.path))
    legacy = canonical({**whole, "format_version": 1})
    assert legacy.startswith(b'{"conversation_history":[')
    written.path.write_bytes(legacy)
    index = savepoint_log.index_path(project.logs)
    events = [json.loads(line) for line in index.read_text().splitlines()]
    for event in events:
        if event["event"] == "SAVEPOINT_CREATED":  # as this machine wrote it then: tagged with its key
            event["snapshot_hash"] = "sha256:" + hashlib.sha256(legacy).hexdigest()
            event[provenance.TAG_FIELD] = provenance.tag(event)
    index.write_text("".join(json.dumps(event) + "\n" for event in events))
    for chunk in (project.logs / chunks.CHUNKS_DIR).iterdir():
        chunk.unlink()

    assert precompact(project.path, "flush").returncode == 0
    verified = precompact(project.path, "verify")
    assert verified.returncode == 0, verified.stdout
    resurrected = precompact(project.path, "resurrect", "--format", "json")
    assert resurrected.returncode == 0 and json.loads(resurrected.stdout)["intact"]
    assert precompact(project.path, "export").stdout.encode() == legacy
    assert "Request 3:" in precompact(project.path, "recall", '"Request 3"').stdout
    # An altered byte is named, as before.
    written.path.write_bytes(legacy.replace(b"Request 3:", b"Request 4:", 1))
    altered = precompact(project.path, "verify")
    assert altered.returncode == 1 and "savepoint 1 [layer 1]: snapshot in local file" in altered.stdout


def test_a_resume_point_no_savepoint_vouches_for_is_not_used(tmp_path, source, resumes):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    transcript_file = tmp_path / "session.jsonl"
    transcript_file.write_bytes(b"".join(source[: len(source) // 2]))
    save(project, transcript_file, "s-1")
    point = project.logs / resume.RESUME_DIR / f"{resume.key('Trial #1', 's-1', str(transcript_file))}.json"
    record = json.loads(point.read_bytes())
    # A chunk of made-up entries, rightly named, in place of the first one the point lists.
    fake = b'{"message":{"content":"planted"},"type":"user"},'
    (project.logs / chunks.CHUNKS_DIR / hashlib.sha256(fake).hexdigest()).write_bytes(fake)
    record["chunks"][0] = {"sha256": hashlib.sha256(fake).hexdigest(), "size": len(fake)}
    point.write_bytes(json.dumps(record).encode())
    with transcript_file.open("ab") as f:
        f.writelines(source[len(source) // 2 :])
    second = save(project, transcript_file, "s-1")
    assert resumes == [False, False], "the savepoint it names does not list that chunk: a full read"
    history = document(second)["conversation_history"]
    assert "planted" not in json.dumps(history) and len(history) == sum(1 for line in source if line.strip())

    # Named after a savepoint that is not in the index: not used either.
    record = json.loads(point.read_bytes())
    record["snapshot"] = "0" * 64
    point.write_bytes(json.dumps(record).encode())
    save(project, transcript_file, "s-1")
    assert resumes[-1] is False
    save(project, transcript_file, "s-1")
    assert resumes[-1] is True, "the point the last savepoint recorded is used"


@pytest.mark.slow
def test_an_encrypted_chunk_altered_or_missing_in_git_is_named_and_without_the_identity_not_checked(tmp_path):
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    refs = committed(project)
    [savepoint] = savepoint_log.savepoints(project.logs)
    tree = project.git("ls-tree", "-r", "--name-only", savepoint.commit)
    assert tree.count(".age") > len(refs) and not any(ref.sha256 in tree for ref in refs), "keyed names"
    altered, missing = refs[0], refs[1]
    for ref in (altered, missing):
        chunk_file(project, ref).unlink()  # logs/ cannot vouch: git's copies are read and decrypted
    obj = git_object(project, blob_of(project, altered))
    ciphertext = zlib.decompress(obj.read_bytes()).split(b"\0", 1)[1]
    flipped = ciphertext[:-20] + bytes([ciphertext[-20] ^ 1]) + ciphertext[-19:]
    obj.chmod(0o600)
    obj.write_bytes(zlib.compress(b"blob %d\0" % len(flipped) + flipped))
    git_object(project, blob_of(project, missing)).unlink()
    verified = precompact(project.path, "verify")
    assert verified.returncode == 1
    assert f"[layer 2]: chunk {missing.sha256} ({missing.size} bytes) is missing from commit" in verified.stdout
    assert (
        f"[layer 2]: chunk {altered.sha256}: logs/precompact-chunks/" in verified.stdout
        and "it does not decrypt or authenticate" in verified.stdout
    )
    resurrected = precompact(project.path, "resurrect")
    assert resurrected.returncode != 0 and f"chunk {altered.sha256}" in resurrected.stderr

    identity = configuration.load(project.path).identity
    identity.rename(tmp_path / "away.txt")
    blind = precompact(project.path, "verify")
    assert f"[layer 2]: chunk {altered.sha256}" not in blind.stdout, "without the identity, git's chunks are not read"


def test_a_chunk_committed_as_another_chunks_ciphertext_is_named_not_vouched_for_by_it(tmp_path):
    """A hostile repository rewrites the ciphertext cache so chunk B is committed as the blob of
    chunk A's ciphertext: the blob reads fine as A, and must not pass as B."""
    from precompact.remote import gitstore

    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    transcript = tmp_path / "session.jsonl"
    generate(transcript, 300_000)
    refs = listed(save(project, transcript, "s-1"))
    a, b = refs[0], refs[1]
    loaded = configuration.load(project.path)
    repo = gitstore.open_repository(gitstore.Target.of(loaded))
    sealed_a = gitstore._sealed_blob(repo, chunk_file(project, a).read_bytes(), a.sha256, encryption.Keys.of(loaded))
    gitstore._ciphertext_cache(repo, b.sha256, encryption.Keys.of(loaded)).write_text(sealed_a)
    assert precompact(project.path, "flush").returncode == 0
    for ref in (a, b):
        chunk_file(project, ref).unlink()  # logs/ cannot vouch: git's copies are read
    verified = precompact(project.path, "verify")
    assert verified.returncode == 1
    assert f"[layer 2]: chunk {b.sha256} ({b.size} bytes) is altered in commit" in verified.stdout
    assert f"[layer 2]: chunk {a.sha256}" not in verified.stdout
    pruned = precompact(project.path, "prune", "--keep", "1")
    assert "pruned 0 savepoint(s)" in pruned.stdout


def test_a_resume_point_is_not_used_when_a_chunk_it_lists_is_gone_or_what_makes_chunks_changed(
    tmp_path, source, resumes, monkeypatch
):
    """docs/snapshot-format.md: the next savepoint reads and redacts only what follows the
    resume point when every listed chunk is present, the precompact version, chunk size and
    redaction settings are the same; anything else means a full read."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    transcript_file = tmp_path / "session.jsonl"
    parts = [source[i * len(source) // 6 : (i + 1) * len(source) // 6] for i in range(6)]

    def grown_and_saved(part: list[bytes]) -> snapshot.WrittenSnapshot:
        with transcript_file.open("ab") as f:
            f.writelines(part)
        return save(project, transcript_file, "s-1")

    first = grown_and_saved(parts[0])
    (project.logs / chunks.CHUNKS_DIR / history(first)[0].sha256).unlink()
    grown_and_saved(parts[1])
    assert resumes == [False, False], "a chunk the point lists is gone: a full read"
    grown_and_saved(parts[2])
    assert resumes[-1] is True, "everything holds: the point is used"

    config = project.path / ".precompact.toml"
    settings = config.read_text()
    config.write_text(
        settings.replace("[redaction.patterns]\n", '[redaction.patterns]\nticket = "TICKET-[0-9]{6}"\n', 1)
    )
    assert config.read_text() != settings
    trust(project.path)
    grown_and_saved(parts[3])
    assert resumes[-1] is False, "the redaction settings changed: a full read"

    monkeypatch.setattr(resume, "__version__", "0.0.0+another")
    grown_and_saved(parts[4])
    assert resumes[-1] is False, "another precompact version: a full read"

    monkeypatch.setattr(chunks, "TARGET_BYTES", CHUNK_BYTES * 2)
    last = grown_and_saved(parts[5])
    assert resumes[-1] is False, "another chunk size: a full read"
    assert len(document(last)["conversation_history"]) == sum(1 for line in source if line.strip())


def test_files_in_play_are_redacted_and_stored_once_across_resumed_savepoints(tmp_path, resumes, monkeypatch):
    from precompact.transcript import redact

    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    files = sorted((Path(chunks.__file__).parent).glob("*.py"))[:3]
    source = generate(tmp_path / "source.jsonl", 300_000, project=project.path, sources=files).path.read_bytes()
    lines = source.splitlines(keepends=True)
    redacted: list[str] = []
    original = redact.Redactor.redact

    def spy(self, value):
        redacted.append(value if isinstance(value, str) else "")
        return original(self, value)

    monkeypatch.setattr(redact.Redactor, "redact", spy)
    transcript = tmp_path / "session.jsonl"
    for part in range(3):
        with transcript.open("ab") as f:
            f.writelines(lines[part * len(lines) // 3 : (part + 1) * len(lines) // 3])
        redacted.clear()
        written = save(project, transcript, "s-1")
        contents = {f.read_text() for f in files}
        again = [text for text in redacted if text in contents]
        assert len(again) == (len(files) if part == 0 else 0), f"savepoint {part + 1} redacted files it had stored"
    assert resumes == [False, True, True]
    in_play = document(written)["loaded_files"]
    assert len(in_play) == len(files) and all("content" in f for f in in_play.values())


def test_a_chunk_that_continues_another_is_checked_against_both_names():
    """recall's check of a grown history's first new chunk: its bytes hash to its name and
    start with the bytes of the previous last chunk, hashed in one pass; anything else is a
    ChunkError naming the chunk."""
    before_bytes, grown_bytes = b'{"a":1},', b'{"a":1},{"b":2},'

    def ref(data: bytes) -> chunks.Ref:
        return chunks.Ref(hashlib.sha256(data).hexdigest(), len(data))

    before, grown = ref(before_bytes), ref(grown_bytes)
    assert chunks.checked_continuing(grown, grown_bytes, before) == grown_bytes
    assert chunks.checked_continuing(before, before_bytes, before) == before_bytes, "a history that did not grow"
    other = b'{"z":9},{"b":2},'
    rejected = {
        "is missing": (grown, None, before),
        "does not start with the bytes of chunk": (ref(other), other, before),
        "do not hash to its name": (grown, grown_bytes.replace(b"2", b"3"), before),
        "its bytes do not hash": (grown, grown_bytes + b" ", before),
    }
    for said, (named, data, previous) in rejected.items():
        with pytest.raises(chunks.ChunkError, match=said) as caught:
            chunks.checked_continuing(named, data, previous)
        assert named.sha256 in str(caught.value)
    longer = ref(grown_bytes + b"{}")
    with pytest.raises(chunks.ChunkError, match="do not hash"):
        chunks.checked_continuing(before, before_bytes, longer)


def test_a_session_with_a_line_over_the_cap_goes_on_from_past_it(tmp_path, source, resumes):
    """A line longer than MAX_LINE_BYTES (read in blocks, never whole) counts in the resume
    point's offset and hash as its bytes do: the next savepoint goes on from there, and gives
    what a read from the start gives."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    transcript_file = tmp_path / "session.jsonl"
    half = len(source) // 2
    with transcript_file.open("wb") as f:
        f.writelines(source[:half])
        start = f.tell()
        f.write(b'{"type":"user","message":{"content":"')
        f.truncate(start + 2 * transcript.MAX_LINE_BYTES)  # sparse
        f.seek(0, 2)
        f.write(b"\n")
        f.writelines(source[half : half + 10])
    first = save(project, transcript_file, "s-1")
    with transcript_file.open("ab") as f:
        f.writelines(source[half + 10 :])
    second = save(project, transcript_file, "s-1")
    assert resumes == [False, True]
    (project.logs / resume.RESUME_DIR / f"{resume.key('Trial #1', 's-1', str(transcript_file))}.json").unlink()
    third = save(project, transcript_file, "s-1")
    assert resumes[-1] is False and same_content(document(second), document(third))
    history_entries = document(third)["conversation_history"]
    [kept] = [e[transcript.UNPARSED] for e in history_entries if transcript.UNPARSED in e]
    assert kept["bytes"] == 2 * transcript.MAX_LINE_BYTES
    assert len(history_entries) == sum(1 for line in source if line.strip()) + 1
    assert document(first)["transcript"]["malformed_lines"] == 1
