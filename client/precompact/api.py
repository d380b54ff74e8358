"""The library facade: what the edges (the CLI, the hook, the MCP server) and the tests call.
The three layers in order (save, flush), their state (status), the one verifier (verify,
inspect), bringing a savepoint back (resurrect, export, uncompact, the SessionStart brief),
prune and recall. Layer 1 is synchronous; Layers 2 and 3 catch up on everything still queued.

The hook imports this module on every compaction and session start, so it imports the rest of
the library only inside the functions that use it: GitPython and the Solana stack cost a hook
more than its whole budget."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from precompact.config.settings import Config
from precompact.local import savepoint_log

if TYPE_CHECKING:
    from precompact.config.init_choices import InitChoices
    from precompact.local import registry, snapshot
    from precompact.local.savepoint_log import Closing
    from precompact.ops.closing import Plan
    from precompact.ops.compaction import StandingFailures
    from precompact.ops.doctor import Check
    from precompact.ops.importer import Imported
    from precompact.ops.inspection import Inspection
    from precompact.ops.key_rotation import Rotated
    from precompact.ops.layers import FlushOutcome
    from precompact.ops.logs_restore import Restored
    from precompact.ops.project_init import IdentityImported
    from precompact.ops.prune import Pruned
    from precompact.proof.bundle import Verdict
    from precompact.proof.ledger import Ledger
    from precompact.recall import everywhere, fulltext
    from precompact.restore.dropped import Dropped
    from precompact.restore.resurrect import Resurrection
    from precompact.restore.uncompact import Uncompacted
    from precompact.transcript.conversation import Recent
    from precompact.verifier import team, verdicts
    from precompact.verifier.verify import Lacking, Report

# Layer 3 of a savepoint the chain did not anchor while it is off in .precompact.toml: not
# queued, not failed. Turned on again, the chain anchors such savepoints in order.
CHAIN_OFF = "OFF"
# Layer 2 of a savepoint while git is off in .precompact.toml: not pending (the verifier's
# recorded verdict says off, whatever the index recorded before).
GIT_OFF = "OFF"
# Layers 2 and 3 of a savepoint whose index line no root vouches for (it came with the project):
# whatever logs/ says of them, this machine never pushes, posts or saves after it.
UNVOUCHED = "UNVOUCHED"


def save(
    config: Config,
    session_id: str | None,
    transcript_path: str | None,
    cwd: str,
    trigger: str,
    skip_unchanged: bool = False,
) -> tuple[snapshot.WrittenSnapshot, FlushOutcome] | savepoint_log.Savepoint:
    """A savepoint of the session run in `cwd` (its transcript, when given): Layer 1 now, then
    whatever Layers 2 and 3 can do; with `skip_unchanged`, the session's latest savepoint and no
    flush when it has said nothing since (ops.compaction)."""
    from precompact.local import snapshot
    from precompact.ops import compaction

    session = snapshot.Session(session_id=session_id, transcript_path=transcript_path, cwd=cwd, trigger=trigger)
    return compaction.on_request(config, session, skip_unchanged)


def claude_code_transcripts(cwd: Path) -> list[Path]:
    """The transcripts Claude Code keeps for the sessions run in `cwd`, oldest first."""
    from precompact.local import capture

    return capture.transcripts(cwd)


def import_sessions(config: Config, progress: Callable[[int, int, Imported], None], agent: str) -> list[Imported]:
    """Archives each session of `agent` run in the project that is not archived as it is now,
    telling `progress` of each (ops.importer)."""
    from precompact.ops import importer

    return importer.run(config, progress=progress, agent=agent)


def flush(config: Config) -> FlushOutcome:
    """Commits and pushes what is not yet in git, then posts what is not yet on chain, in order,
    one pass at a time per project (ops.layers)."""
    from precompact.ops import layers

    return layers.flush(config)


def layers_wait(config: Config) -> str | None:
    """Why Layers 2 and 3 wait in this project (it is forgotten on this machine), naming the
    fix; None when they run (ops.layers)."""
    from precompact.ops import layers

    return layers.layers_wait(config)


def write_queued(config: Config) -> snapshot.QueuedWritten:
    """Writes the savepoints and summaries hooks left queued while the index lock was busy, each
    entry on its own (ops.compaction); what was done, and a line for each entry not written."""
    from precompact.ops import compaction

    return compaction.write_queued(config)


def queued_notice(config: Config) -> str | None:
    """What to say while savepoints or summaries a hook queued are not written yet, naming
    `precompact flush` (local.snapshot); None when none are."""
    from precompact.local import snapshot

    return snapshot.queued_notice(config.logs)


def savepoints_queued(config: Config) -> bool:
    """Whether a hook left a savepoint or summary queued that a writer will write (local.snapshot:
    never one no writer will write, which would keep the worker going round for good)."""
    from precompact.local import snapshot

    return snapshot.queued_work(config.logs)


def drop_queued(config: Config, entry: str) -> list[str]:
    """Gives up a queue entry no writer will write, and the summaries bound to it (local.snapshot,
    `precompact flush --drop-queued`); the names removed. CannotDrop for one a writer still writes."""
    from precompact.local import snapshot

    return snapshot.drop_queued(snapshot.Settings.of(config), entry)


def status(config: Config) -> tuple[list[savepoint_log.Savepoint], list[int]]:
    """Every savepoint with the state of its layers, and the index lines that do not parse."""
    index = savepoint_log.read(config.logs)
    return index.savepoints, index.bad_lines


def recreated_notice(savepoint: savepoint_log.Savepoint) -> str:
    """What `status` says of a savepoint the index creates again with other content (its
    `recreated`), and how to keep both."""
    return savepoint_log.recreated_notice(savepoint)


def compaction_mark(savepoint: savepoint_log.Savepoint) -> str | None:
    """How the savepoint is a compaction's, as `status` marks it: "at" one (it holds the history
    up to it), "after" one (made later in the compacted session), or None (capture.compaction)."""
    from precompact.local import capture

    return capture.compaction(savepoint)


def restore(config: Config, progress: Callable[[int, int], None], at: str | None = None) -> Restored:
    """logs/ rebuilt from the git remote: every savepoint on the savepoint branch (at its tip, or
    `at`, a commit of its history) that a root vouches for (the user's signature, or this
    machine's tag) checked, then written (ops.logs_restore); RestoreError, with nothing written,
    on any contradiction."""
    from precompact.ops import logs_restore

    return logs_restore.restore(config, progress, at)


def remote_instances(config: Config, signers: Collection[str] = ()) -> list[team.RemoteInstance]:
    """`status --remote`: every instance the git remote holds, its last savepoint and whether
    it verifies against its own key, which vouches only when it is yours or one of `signers`,
    read-only (verifier/team.py judges each branch)."""
    from precompact.verifier import team as team_verifier

    return team_verifier.instances(config, signers)


def savepoint_branch(config: Config) -> str:
    """The instance's own savepoint branch (here and on the remote)."""
    from precompact.remote import gitstore

    return gitstore.instance_branch(config.branch, config.instance)


def lacking(config: Config) -> Lacking:
    """The snapshots the savepoint branch holds (here, or as last fetched: no network) that
    logs/ lacks, and what logs/ holds that the branch lacks (`verifier.verify.Lacking`)."""
    from precompact.verifier import verify as verification

    return verification.lacking(config, savepoint_log.savepoints(config.logs))


def lacking_notice(config: Config) -> str | None:
    """What `status`, `recall`, `resurrect` and `uncompact` say when logs/ lacks savepoints the
    remote holds (None when it lacks none)."""
    return lacking(config).notice


def log_line(message: str) -> str:
    """A line of a log: the time, then `message` redacted (git's and the cluster's complaints can
    carry a URL with credentials)."""
    from precompact.transcript.redact import Redactor

    return f"{savepoint_log.utc_timestamp()} {Redactor().redact(message)}"


def recorded_verdicts(config: Config, savepoint: savepoint_log.Savepoint) -> dict[str, verdicts.Check]:
    """The verifier's verdicts on Layers 2 and 3 as the worker recorded them in the index (no
    git or chain read: `verify` reads them)."""
    from precompact.verifier import verdicts

    return {
        verdicts.GIT: verdicts.recorded_git(config.git_layer, savepoint, config.remote),
        verdicts.CHAIN: verdicts.recorded_chain(config.chain_layer, savepoint),
    }


def chain_confirmations(savepoints: list[savepoint_log.Savepoint]) -> str | None:
    """Whose word the index's Layer 3 confirmations of `savepoints` rest on, in one line (the
    verifier's words); None when none is confirmed."""
    from precompact.verifier import verdicts

    return verdicts.confirmations(savepoints)


def layer_2_state(config: Config, savepoint: savepoint_log.Savepoint) -> str:
    """Where a savepoint's git copy stands, as every report shows it: the verifier's verdict on
    Layer 2 as the index recorded it (off while the layer is off)."""
    from precompact.verifier import verdicts

    off = verdicts.recorded_git(config.git_layer, savepoint, config.remote).status == verdicts.OFF
    return GIT_OFF if off else savepoint.layer_2


def layer_3_state(config: Config, savepoint: savepoint_log.Savepoint) -> str:
    """Where a savepoint's on-chain record stands, as every report shows it: the verifier's
    verdict on Layer 3 as the index recorded it."""
    from precompact.verifier import verdicts

    return (
        CHAIN_OFF
        if verdicts.recorded_chain(config.chain_layer, savepoint).status == verdicts.OFF
        else savepoint.layer_3
    )


def in_clear(config: Config, savepoints: list[savepoint_log.Savepoint]) -> list[savepoint_log.Savepoint]:
    """The committed savepoints whose commit holds the snapshot in clear text (so the remote
    does, once pushed); none when git cannot be read (ops.layers)."""
    from precompact.ops import layers

    return layers.in_clear(config, savepoints)


def shipped_savepoints(config: Config, approved_authority: str | None) -> str | None:
    """What `trust` says before asking of the savepoints logs/ already holds that no root the
    user holds vouches for (a logs/ that came with the project), in one line; None when there
    are none (ops.layers)."""
    from precompact.ops import layers

    return layers.shipped(config, approved_authority)


def new_authority(config: Config, approved_authority: str | None) -> str | None:
    """What `trust` says before asking of a chain.authority the user holds no root for (ops.layers)."""
    from precompact.ops import layers

    return layers.new_authority(config, approved_authority)


def resign_notice(config: Config) -> str | None:
    """What `trust` says after approving a keypair that has not signed the lines this machine
    wrote: run `precompact flush` (ops.layers)."""
    from precompact.ops import layers

    return layers.resign_notice(config)


def unvouched(config: Config) -> tuple[set[tuple[str, int]], str | None]:
    """The savepoints in logs/ that no root vouches for, by (instance, sequence), and what to
    do about them in one line (None: a root vouches for every one) (ops.layers)."""
    from precompact.ops import layers

    return layers.unvouched(config)


def not_signed(config: Config, savepoints: list[savepoint_log.Savepoint]) -> dict[tuple[str, int], str]:
    """The committed savepoints of this machine the signing key has not signed, and why, with
    the keypair a flush signs with (verifier.signed, ops.layers)."""
    from precompact.ops import layers
    from precompact.verifier import signed

    return signed.not_signed(layers.keypair_counted(config)[0], savepoints)


def summaries_not_signed(config: Config, savepoints: list[savepoint_log.Savepoint]) -> dict[tuple[str, int], str]:
    """The compaction summaries this machine recorded that the signing key has not signed yet,
    by their savepoint, and why, with the keypair a flush signs with (verifier.signed, ops.layers)."""
    from precompact.ops import layers
    from precompact.verifier import signed

    return signed.summaries_not_signed(layers.keypair_counted(config)[0], savepoints)


def no_longer_on_remote(config: Config, savepoints: list[savepoint_log.Savepoint]) -> list[savepoint_log.Savepoint]:
    """The savepoints recorded as pushed whose commit the remote's branch, as last read here, no
    longer holds (rewound or deleted since); no network (ops.layers)."""
    from precompact.ops import layers

    return layers.no_longer_on_remote(config, savepoints)


def rekey(config: Config) -> tuple[str | None, int, int]:
    """Re-encrypts the savepoint branch to the current recipients as a new commit and pushes
    it, under the flush lock (ops.layers). Returns the commit (None: nothing to change), the
    number of files re-encrypted and the number left for want of their identity; RekeyError
    says why it could not."""
    from precompact.ops import layers

    return layers.rekey(config)


def identity_public_keys(config: Config) -> list[str]:
    """The public keys of the configured age identity (none for an SSH key); CryptoError when
    it cannot be read."""
    from precompact.remote import encryption

    return encryption.public_keys(_identity_file(config), str(config.identity))


def read_identity(config: Config) -> bytes:
    """The configured age identity's file, once it parses as one (a secret: it reads every
    savepoint)."""
    from precompact.remote import encryption

    data = _identity_file(config)
    encryption.parse_identities(data, str(config.identity))
    return data


def _identity_file(config: Config) -> bytes:
    from precompact.remote import encryption

    return encryption.read_identity_file(config.identity) if config.identity else b""


def import_identity(config: Config, data: bytes, source: str) -> IdentityImported:
    """Installs the identity `data` (read from `source`) at encryption.identity and makes it
    the one new savepoints are encrypted to (ops.project_init.import_identity)."""
    from precompact.ops import project_init

    return project_init.import_identity(config, data, source)


def rotate_key(config: Config, recover: bool = False, airdrop: bool = False) -> Rotated:
    """Moves the configured instance's on-chain lineage to a new signing key (ops.key_rotation):
    signed by the old key and the new, or (`recover`) by the new key alone."""
    from precompact.ops import key_rotation

    return key_rotation.rotate(config, recover=recover, airdrop=airdrop)


def closing_plan(config: Config) -> Plan:
    """What `precompact close` would close: the configured instance's record, checked, and the
    savepoints still queued for it (ops.closing)."""
    from precompact.ops import closing

    return closing.plan(config)


def close_record(config: Config, force: bool = False) -> Closing:
    """Closes the configured instance's on-chain record, its rent back to the authority, and
    records the closing (ops.closing); refuses while savepoints are queued unless `force`."""
    from precompact.ops import closing

    return closing.close(config, force)


def inspect(config: Config, instance: str | None = None, address: str | None = None) -> Inspection:
    """Fetches and decodes the on-chain record, puts it through the verifier's chain check and
    compares it with the local index (ops.inspection). Raises InspectError with a one-line
    reason."""
    from precompact.ops import inspection

    return inspection.inspect(config, instance, address)


def record_json(found: Inspection) -> dict:
    """The inspected record as JSON (bytes as lowercase hex), with the verifier's verdict."""
    from precompact.ops import inspection

    return inspection.record_json(found)


# --- The verifier and bringing savepoints back --------------------------------------------------


def verify(config: Config, sequence: int | None = None, check_chain: bool = True) -> Report:
    """Every savepoint (or the configured instance's savepoint `sequence`) across the three
    layers, in chain order; the report names the first broken link first, and its chain's words
    a recovery cut short (ops.key_rotation: only the keys `key rotate` stored name it)."""
    from precompact.ops import key_rotation

    return key_rotation.verify(config, sequence, check_chain)


def verified_here(config: Config) -> tuple[str, ...]:
    """What `verify` reads of this machine's logs/ (the index, the snapshot files, the chunks), as
    it stands: the same only while none of it changed (boundary.logs_dir)."""
    from precompact.boundary import logs_dir
    from precompact.local import chunks

    return logs_dir.identities(config.logs, (savepoint_log.INDEX_NAME,), (logs_dir.SAVES_DIR, chunks.CHUNKS_DIR))


def verify_file(config: Config, path: Path) -> Report:
    """One snapshot file, against the savepoint of the index that names its hash."""
    from precompact.verifier import verify as verification

    return verification.verify_file(config, path)


def ledgers(config: Config, records: dict[str, int]) -> list[tuple[str, Ledger]]:
    """Each instance's ledger verdict (the configured one first): the record's whole history is
    exactly savepoints 1..N, written by no one else, up to the savepoint each record holds as
    `verify` read it in the same run (`records`, by instance: Report.records) (ops.inspection)."""
    from precompact.ops import inspection

    return inspection.ledgers(config, records)


def prove(config: Config, sequence: int, with_snapshot: bool = False) -> dict:
    """The proof bundle of savepoint `sequence` (docs/proof-bundle.md), checked before it is
    returned."""
    from precompact.proof import bundle

    return bundle.build(config, sequence, with_snapshot)


def check_bundle(
    path: Path,
    snapshot: Path | None = None,
    cluster: str | None = None,
    authority: str | None = None,
    program_id: str | None = None,
    config: Config | None = None,
) -> Verdict:
    """The verdict on the proof bundle in `path` (offline; with `snapshot`, that it is
    savepoint N; with `cluster`, that each transaction is finalized there), for the pinned
    `authority` and `program_id`: when not given, `config`'s (the project's configured roots),
    else no authority (never verified) and the program this client was built for."""
    from precompact.proof import bundle

    return bundle.check(
        bundle.read(path),
        snapshot.read_bytes() if snapshot else None,
        cluster,
        *bundle.pins(authority, program_id, config),
    )


def checked_time(text: str) -> str:
    """`text` when it is an ISO 8601 time (`--at`), else restore.resurrect.WrongTime: checked
    before any savepoint is looked for, as a usage error."""
    from precompact.restore import resurrect as resurrection

    resurrection.parse_time(text)
    return text


def resurrect(
    config: Config,
    instance: str | None = None,
    sequence: int | None = None,
    at: str | None = None,
    restore_state: bool = False,
    record_lineage: bool = False,
    signer: str | None = None,
) -> Resurrection:
    """A savepoint chosen (`sequence`, the newest at or before `at`, or the newest with a
    conversation), put through the verifier and brought back (restore.resurrect); another
    instance's vouched for only by your key or `signer`, the one you pinned."""
    from precompact.restore import resurrect as resurrection

    return resurrection.resurrect(config, instance, sequence, at, restore_state, record_lineage, signer=signer)


def export(config: Config, instance: str | None = None, sequence: int | None = None) -> bytes:
    """A savepoint's full document, rebuilt from its chunks and checked; refused if it fails."""
    from precompact.restore import resurrect as resurrection

    return resurrection.export(config, instance, sequence)


def to_uncompact(
    config: Config, instance: str | None = None, sequence: int | None = None, at: str | None = None
) -> Resurrection:
    """The savepoint `uncompact` writes, checked: `sequence`, the newest at or before `at`, or the
    latest made at or for a compaction of the newest session (capture.latest_compaction)."""
    from precompact.restore import resurrect as resurrection

    return resurrection.resurrect(config, instance, sequence, at, of_compaction=True)


def uncompact(config: Config, found: Resurrection) -> Uncompacted:
    """A verified savepoint's conversation before its compaction written back as a new session,
    recorded in the index so that the session is given no brief of another savepoint."""
    from precompact.restore import uncompact as uncompaction

    written = uncompaction.uncompact(found)
    savepoint_log.mark(config.logs, found.savepoint, savepoint_log.Event.UNCOMPACTED, session_id=written.session_id)
    return written


def session_start_brief(config: Config, sequence: int, session_id: str | None) -> str:
    """The restore brief of savepoint `sequence` for a session that is starting (this machine's
    bytes only: no network, no GitPython), or one line saying why it could not be restored
    (ops.compaction)."""
    from precompact.ops import compaction

    return compaction.session_start_brief(config, sequence, session_id)


def render_resurrection(found: Resurrection, output: str) -> str:
    """A resurrection as the "brief" a session starts from, the "report" of every check, or
    "json"; every outside text in the first two quoted (restore.brief)."""
    from precompact.restore import brief as restore_brief

    return restore_brief.render(found, output)


def dropped(config: Config, instance: str | None = None, sequence: int | None = None) -> Dropped:
    """What compaction dropped from savepoint `sequence` (default: the newest) of `instance`:
    what its history holds and the compaction summary does not (restore.dropped), the list the
    worker kept for it when its key holds (restore.dropped_store)."""
    from precompact.restore import dropped_store

    return dropped_store.of_savepoint(config, instance, sequence)


def render_dropped(found: Dropped) -> str:
    """What compaction dropped, as text, every outside text quoted."""
    from precompact.restore import dropped as dropping

    return dropping.render(found)


# --- The hook's events (ops.compaction); `payload` is the event as the agent sent it ------------


def subagent_session(payload: dict, agent: str) -> str | None:
    """Why the session a hook event names is a subagent's and not one of the user's (None when
    it is the user's): its events do nothing."""
    from precompact.ops import compaction

    return compaction.subagent_session(payload, agent)


def on_pre_compact(config: Config, payload: dict, agent: str) -> str:
    """PreCompact: Layer 1 of a savepoint (the worker does the rest); returns the note for
    Claude Code's summariser ("" for none)."""
    from precompact.ops import compaction

    return compaction.pre_compact(config, payload, agent)


def on_pre_compress(config: Config, payload: dict, agent: str) -> str | None:
    """Gemini's PreCompress: PreCompact's savepoint, when a compression comes (None: none comes)."""
    from precompact.ops import compaction

    return compaction.pre_compress(config, payload, agent)


def on_post_compact(config: Config, payload: dict, agent: str) -> bool:
    """PostCompact: the savepoint of what the compaction dropped if none holds it, and the
    summary kept; False when the session has no savepoint to keep it with."""
    from precompact.ops import compaction

    return compaction.post_compact(config, payload, agent)


def on_session_start(config: Config, payload: dict, agent: str, after_failure: bool = False) -> str | None:
    """SessionStart: the restore brief the session gets, once (None: none), recorded as given;
    with `after_failure`, after a standing failure's line (`standing_failure_line`), within what
    `[hooks] brief_budget` leaves after it (ops.compaction)."""
    from precompact.ops import compaction

    return compaction.session_start_context(config, payload, agent, after_failure)


def on_before_agent(config: Config, payload: dict) -> str | None:
    """Gemini's BeforeAgent: after a compression, the brief's first part, once per compression;
    at a later prompt, what the summary left out, once."""
    from precompact.ops import compaction

    return compaction.before_agent_context(config, payload)


def on_prompt_or_tool(config: Config, payload: dict, agent: str) -> str | None:
    """UserPromptSubmit or PostToolUse of a session with something pending: what the compaction
    summary left out, once (None: nothing to give yet) (ops.addendum)."""
    from precompact.ops import compaction

    return compaction.after_compaction(config, payload, agent)


def prepare_addenda(config: Config) -> list[str]:
    """The worker: each addendum asked for, computed and kept pending; a line for each it could
    not make (ops.addendum)."""
    from precompact.ops import addendum

    return addendum.prepare(config)


def addenda_requested(config: Config) -> bool:
    """Whether an addendum is asked for that no worker is computing (ops.addendum)."""
    from precompact.ops import addendum

    return addendum.requested(config)


def compacted_brief(config: Config, found: Resurrection) -> str:
    """`resurrect --format brief`: both parts as a compacted session is given them (ops.addendum)."""
    from precompact.ops import addendum

    return addendum.as_given(config, found)


def on_session_end(config: Config, payload: dict, agent: str) -> None:
    """SessionEnd: Layer 1 of what the session said since its last savepoint."""
    from precompact.ops import compaction

    compaction.session_end(config, payload, agent)


def hook_failure_reason(error: Exception, root: Path | None = None) -> str:
    """A hook's failure in one line, redacted; logs/ of `root` refusing writes (read-only, full)
    is said naming logs/ and the fix."""
    from precompact.ops import compaction

    return compaction.failure_reason(error, root)


def logs_open_notice(config: Config) -> str | None:
    """`status`'s line while other users may change what is in logs/ (with the fix); None otherwise."""
    from precompact.ops import doctor

    return doctor.logs_open_notice(config)


def clock_behind_notice(config: Config) -> str | None:
    """`status`'s line while this clock is behind the newest savepoint's time; None otherwise."""
    from precompact.ops import doctor

    return doctor.clock_behind_notice(config)


def worker_cannot_start(config: Config) -> str | None:
    """Why the background worker cannot start in this project, with the fix, in one line; None
    when it can."""
    from precompact.ops import doctor

    return doctor.worker_cannot_start(config)


def standing_failure_line(config: Config) -> str | None:
    """While a failure stands (`standing_failures`), the fixed line a session start gives before
    its brief, to the model and to the user; None when none stands (ops.compaction)."""
    from precompact.ops import compaction

    return compaction.standing_failure_line(config)


def standing_failures(config: Config) -> StandingFailures | None:
    """The failures logged since the newest savepoint was written (ops.compaction owns the log)."""
    from precompact.ops import compaction

    return compaction.standing_failures(config)


def unreadable_here_notice(loaded: Config) -> str | None:
    """`status`'s line when the age identity here opens none of encryption.recipients (with the
    fix); None when it opens one, or nothing is sealed."""
    from precompact.ops import doctor

    return doctor.unreadable_here(loaded)


def log_hook_failure(root: Path, event: str, reason: str) -> str | None:
    """The failure being handled appended to the project's error log (ops.compaction.ERRORS_LOG),
    or to the state directory when logs/ refuses it: where it is kept; None when nowhere."""
    from precompact.ops import compaction

    return compaction.log_failure(root, event, reason)


def log_hook_notice(root: Path, event: str, reason: str) -> str | None:
    """A notice (something refused or ignored that stops no save) appended to the project's
    error log, marked so that it is never said as a failure: where it is kept; None when nowhere."""
    from precompact.ops import compaction

    return compaction.log_failure(root, event, reason, notice=True)


# --- Setting a project up ------------------------------------------------------------------------


def init_config_path(root: Path, force: bool) -> Path:
    """Where `init` writes root's configuration; InitError when one exists and not `force`."""
    from precompact.ops import project_init

    return project_init.config_path(root, force)


def chain_cluster(answer: str) -> str | None:
    """The cluster an answer to `init`'s chain question (or `--chain`) names; None for off."""
    from precompact.ops import project_init

    return project_init.chain_cluster(answer)


def cluster_answers(cluster: str) -> bool:
    """Whether a Solana JSON-RPC endpoint answers at `cluster`, within seconds."""
    from precompact.ops import project_init

    return project_init.answers(cluster)


def refuse_shared_chain(config: Config) -> None:
    """`trust`'s refusal of a configuration whose savepoints would share a chain with another
    project's on this machine (ops.instance_collision), as `init` refuses it."""
    from precompact.ops import instance_collision

    instance_collision.refuse(config, "trust")


def init_project(root: Path, choices: InitChoices, say: Callable[[str], None], warn: Callable[[str], None]) -> dict:
    """`init`: the configuration, the signing key, the age identity, the faucet and logs out of
    git status (ops.project_init.init); returns what was written and created."""
    from precompact.ops import project_init

    return project_init.init(root, choices, say, warn)


def doctor(cwd: Path) -> list[Check]:
    """Every check of what keeps the sessions run in `cwd` from being archived (ops.doctor)."""
    from precompact.ops import doctor as checkup

    return checkup.run(cwd)


# --- Local copies and recall --------------------------------------------------------------------


def prune(config: Config, keep: int) -> Pruned:
    """Removes the local copies of each instance's savepoints older than its newest `keep`,
    once git holds them pushed and verified."""
    from precompact.ops import prune as pruning

    return pruning.prune(config, keep)


def recall(
    config: Config,
    query: str,
    savepoint: int | None = None,
    since: str | None = None,
    role: str | None = None,
    tool: str | None = None,
    agent: str | None = None,
) -> fulltext.Results:
    """Full-text search over the conversation the configured instance's verified savepoints hold
    (`agent`: only that agent's sessions)."""
    from precompact.recall import fulltext as recollection
    from precompact.verifier import signed

    return recollection.search(
        config.logs,
        config.instance,
        query,
        savepoint,
        since,
        role,
        tool,
        agent=agent,
        signer=signed.configured_key(config),
    )


def update_recall(config: Config, rebuild: bool = False) -> fulltext.Update:
    """The recall index brought up to date with the savepoints (`rebuild`: from scratch)."""
    from precompact.recall import fulltext as recollection
    from precompact.verifier import signed

    return recollection.update(config.logs, config.instance, rebuild=rebuild, signer=signed.configured_key(config))


def show(config: Config, ref: str, instance: str | None = None) -> fulltext.Shown:
    """The saved entries a recall reference (SAVEPOINT:ENTRY or SAVEPOINT:FIRST-LAST, either with
    @OFFSET) names, read as they are iterated."""
    from precompact.recall import fulltext as recollection
    from precompact.verifier import signed

    return recollection.show(config.logs, instance or config.instance, ref, signer=signed.configured_key(config))


def render(shown: fulltext.Shown, budget: int | None = None) -> Iterator[str]:
    """Saved entries as text for the model or the user, a block each, every line of their text
    quoted; with `budget`, at most that many characters, a cut entry saying which reference
    shows the rest."""
    from precompact.recall import fulltext as recollection

    return recollection.rendered(shown, budget)


def recall_from(
    config: Config,
    instance: str,
    query: str,
    savepoint: int | None = None,
    since: str | None = None,
    role: str | None = None,
    tool: str | None = None,
    agent: str | None = None,
    signers: Collection[str] = (),
) -> fulltext.Results:
    """Full-text search over a teammate's savepoints (`recall --from`), read from their branch and
    checked against their own key, which vouches only when it is yours or one of `signers`
    (ops.logs_restore.recall_from)."""
    from precompact.ops import logs_restore

    return logs_restore.recall_from(config, instance, query, savepoint, since, role, tool, agent, signers)


def recall_everywhere(
    query: str,
    since: str | None = None,
    role: str | None = None,
    tool: str | None = None,
    agent: str | None = None,
) -> everywhere.Searched:
    """Full-text search over every project this machine archived, one BM25 ranking across them,
    each hit naming its project (recall.everywhere)."""
    from precompact.recall import everywhere as across

    return across.search(query, since, role, tool, agent)


def projects() -> list[everywhere.Project]:
    """The projects in this machine's registry, each with its savepoints, or why not (moved)."""
    from precompact.recall import everywhere as across

    return across.projects()


def none_registered_fix() -> str:
    """What registers a project, said where none is registered (recall.everywhere)."""
    from precompact.recall import everywhere as across

    return across.NONE_REGISTERED_FIX


def forget_project(path: Path, url: str | None = None) -> everywhere.Forgotten:
    """Removes a project from this machine's registry, with every copy of its text outside it,
    once the remote (at `url`, else its approved git.url) holds its savepoints
    (recall.everywhere.forget)."""
    from precompact.recall import everywhere as across

    return across.forget(path, url)


def registered_project(path: Path) -> Path:
    """The root of the project the registry lists at `path`; RegistryError when it lists none
    (recall.everywhere.registered)."""
    from precompact.recall import everywhere as across

    return across.registered(path).path


def add_project(path: Path) -> Path:
    """Registers the project at `path` again, a forgotten one too, unless another project on this
    machine writes its instance to the same chain (ops.project_init.add); its root."""
    from precompact.ops import project_init

    return project_init.add(path)


def rescan_projects(directory: Path) -> list[registry.Registered]:
    """Registers every project under `directory` whose logs/ holds a savepoint this machine
    wrote: the registry rebuilt (local.registry)."""
    from precompact.local import registry as machine_registry

    return machine_registry.rescan(directory)


def registry_path() -> Path:
    from precompact.local import registry as machine_registry

    return machine_registry.registry_path()


def recall_index_paths(config: Config) -> tuple[Path, Path]:
    """The recall index's two parts in logs/: its bookkeeping (SQLite) and its words (tantivy)."""
    from precompact.recall import fulltext as recollection

    return recollection.index_path(config.logs), config.logs / recollection.TEXT_DIR


def describe_savepoints(config: Config, budget: int) -> str:
    """The configured instance's savepoints, one line each, newest first, within `budget`
    characters, for the model."""
    from precompact.recall import fulltext as recollection

    return recollection.describe_savepoints(config, config.instance, budget)


# --- The viewer's reads (viewer/pages.py): what its pages show beyond the calls above -----------


def savepoints(config: Config, instance: str) -> list[savepoint_log.Savepoint]:
    """`instance`'s savepoints in this machine's index, in sequence order."""
    return savepoint_log.savepoints(config.logs, instance)


def from_this_machine(config: Config, instance: str, sequence: int) -> Resurrection:
    """Savepoint `sequence` of `instance` loaded and checked as `resurrect` does it, from this
    machine's index and bytes; when they cannot serve (altered, missing), from git's copy as
    `resurrect` takes it, keeping it beside the altered one (`copy_note` says so)."""
    from precompact.restore import resurrect as resurrection

    return resurrection.from_this_machine(config, instance, sequence, git_when_altered=True)


def not_backed_up(git: verdicts.Check, savepoint: savepoint_log.Savepoint) -> bool:
    """Whether git's verdict, or a push that failed since, says the remote does not hold the
    savepoint (verifier.verdicts)."""
    from precompact.verifier import verdicts

    return verdicts.not_backed_up(git, savepoint)


def copy_note(found: Resurrection) -> str | None:
    """What a reader is told when git's copy of a savepoint is read in place of an altered local
    one (restore.resurrect)."""
    from precompact.restore import resurrect as resurrection

    return resurrection.copy_note(found)


def dropped_from(config: Config, found: Resurrection) -> Dropped:
    """What compaction dropped from a savepoint already loaded and checked, the list kept for it
    when its key holds, else made now; refused if it failed a check (restore.dropped_store)."""
    from precompact.restore import dropped_store

    return dropped_store.of_resurrection(config, found)


def kept_dropped(config: Config, found: Resurrection) -> Dropped | None:
    """The list of what compaction dropped the worker kept for a loaded savepoint, if its key
    holds; None otherwise (restore.dropped_store)."""
    from precompact.restore import dropped_store

    return dropped_store.kept(config, found)


def keep_dropped_lists(config: Config, interrupted: Callable[[], bool]) -> list[str]:
    """The worker's job: what compaction dropped, listed and kept for each savepoint whose
    summary is known and whose list is not kept yet (restore.dropped_store); lines for its log."""
    from precompact.restore import dropped_store

    return dropped_store.keep_due(config, interrupted)


def recent(found: Resurrection) -> Recent:
    """The latest requests, the files edited and the task list of a loaded savepoint's
    conversation, as its brief tells them."""
    from precompact.transcript import conversation

    return conversation.recent(found.contents.newest_entries())


def entry_facts(entry: object, tool_names: dict[str, str]) -> tuple[str, str | None, str]:
    """An entry's role, the tool it calls or answers, and its text, as recall indexes them;
    `tool_names` maps tool_use ids to tool names, and the entries seen so far fill it."""
    from precompact.recall import fulltext as recollection

    return recollection.entry_facts(entry, tool_names)


def shown_entry(entry: object, tool_names: dict[str, str]) -> tuple[str, str | None, float | None, str]:
    """`entry_facts` as `show` prints an entry: its role, its tool, when it was written (Unix
    seconds, None when it does not say) and its text (the entry as stored when it has none)."""
    from precompact.recall import fulltext as recollection

    role, tool, text = recollection.entry_facts(entry, tool_names)
    return role, tool, recollection.entry_time(entry), recollection.as_shown(entry, text)


def bookkeeping_kind(entry: object) -> str | None:
    """The kind of the agent's own record-keeping a saved entry is, None for the conversation
    (recall.fulltext): the viewer folds those."""
    from precompact.recall import fulltext as recollection

    return recollection.bookkeeping_kind(entry)


def verdicts_not_run(why: str) -> dict[str, verdicts.Check]:
    """Each layer's verdict on a savepoint the verifier did not check: not verified, and why."""
    from precompact.verifier import verify as verification

    return verification.not_run(why)
