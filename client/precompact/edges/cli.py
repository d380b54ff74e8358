"""`precompact`: a thin click layer over the library (config, layers)."""

from __future__ import annotations

import json
import sys
from datetime import UTC
from pathlib import Path

import click

from precompact.config import approval as config_trust
from precompact.config import review
from precompact.config import settings as configuration
from precompact.config.settings import ConfigError
from precompact.errors import PrecompactError
from precompact.local.savepoint_log import Layer2, Layer3

TURN_CHAIN_ON = "`precompact init --force --chain devnet` (or a cluster URL) turns it on"

# Commands import the rest of the library when they run: `precompact hook` is on Claude Code's
# critical path and must not pay for GitPython or the Solana stack it does not use.


def _load() -> configuration.Config:
    loaded = configuration.load(Path.cwd())
    warning = configuration.insecure_cluster_warning(loaded)
    if warning:
        click.echo(warning, err=True)
    return loaded


class _Commands(click.Group):
    def invoke(self, ctx):
        # Every failure the user can cause or fix is a PrecompactError: one line, exit 1, here
        # alone, whichever command met it.
        try:
            return super().invoke(ctx)
        except PrecompactError as e:
            raise click.ClickException(str(e)) from None


@click.group(cls=_Commands)
@click.version_option(package_name="precompact")
def main() -> None:
    """Save a Claude Code session before compaction, back it up in git, prove it on Solana."""


@main.command()
@click.option("--instance", help='Instance name, e.g. "Gabriel #215".')
@click.option("--repo", default=".", show_default=True, help="Git repository that receives the savepoint branch.")
@click.option("--remote", default=configuration.DEFAULT_REMOTE, show_default=True)
@click.option("--branch", default=configuration.DEFAULT_BRANCH, show_default=True)
@click.option(
    "--chain",
    metavar="off|devnet|local|URL",
    help="Layer 3's cluster, or off (git only). Default: asked at a terminal; else the local cluster if it answers, else off.",
)
@click.option("--cluster", help="Solana JSON-RPC URL (the same as --chain URL).")
@click.option(
    "--keypair",
    help="Signing keypair file to use instead of precompact's own (created if absent); a Solana CLI wallet may hold funds.",
)
@click.option("--program-id", help="Address of the deployed precompact program (default: this client's).")
@click.option("--yes", is_flag=True, help="Do not prompt; use the options and defaults.")
@click.option("--force", is_flag=True, help="Overwrite an existing .precompact.toml.")
@click.option(
    "--identity",
    help="age identity file that reads the savepoints (default: created beside the keypair if absent).",
)
@click.option(
    "--recipient",
    "recipients",
    multiple=True,
    help="Another public key to encrypt savepoints to (age1… or 'ssh-ed25519 …'); repeatable.",
)
@click.option("--no-encrypt", is_flag=True, help="Push savepoints in clear text (use only with a private remote).")
@click.option(
    "--airdrop",
    is_flag=True,
    help="Fund the keypair from the cluster's faucet (local and test clusters): 1 SOL for rent and fees.",
)
def init(
    instance,
    repo,
    remote,
    branch,
    chain,
    cluster,
    keypair,
    program_id,
    yes,
    force,
    identity,
    recipients,
    no_encrypt,
    airdrop,
) -> None:
    """Write .precompact.toml here, choose Layer 3's cluster (or off), create the signing key
    and the age identity if absent, keep logs out of git status."""
    from precompact.ops import project_init
    from precompact.remote import gitstore

    root = Path.cwd()
    if chain and cluster:
        raise click.UsageError("give --chain or --cluster, not both")
    path = project_init.config_path(root, force)
    if instance is None:
        default = f"{root.name} #1"
        instance = default if yes else click.prompt("Instance name", default=default)
    interactive = not yes and sys.stdin.isatty()
    cluster = cluster or _chain_choice(chain, interactive)
    if airdrop and cluster is None:
        raise click.UsageError("--airdrop needs a cluster: give --chain devnet, local or a URL")
    if keypair is None:
        keypair = project_init.own_keypair_path(instance)
    else:
        click.echo(
            f"warning: signing with {keypair}; if it is a wallet that holds funds, precompact spends from it (rent and fees)",
            err=True,
        )
    values = {
        "instance": instance,
        "repository": repo,
        "remote": remote,
        "branch": branch,
        "cluster": cluster or configuration.DEFAULT_CLUSTER,
        "chain": cluster is not None,
        "keypair": keypair,
    }
    if program_id:
        values["program_id"] = program_id
    if no_encrypt and (identity or recipients):
        raise click.UsageError("--no-encrypt takes no --identity or --recipient")
    if not no_encrypt:
        # As given, or beside the keypair as given ("~/..." stays portable in the file).
        values["identity"] = identity or str(Path(keypair).parent / configuration.IDENTITY_NAME)
        found = project_init.encryption_identity(Path(values["identity"]), recipients)
        values["recipients"] = found.recipients
        if found.created:
            click.echo(
                f"created age identity {found.path} (public key {found.recipients[0]}); back it up, only it (or another recipient's) reads your savepoints on the remote"
            )
        else:
            click.echo(f"using age identity {found.path}")
    loaded = project_init.write_config(root, values, force)
    click.echo(f"wrote {path}")
    key = project_init.ensure_keypair(loaded.keypair)
    if key.created:
        click.echo(f"created keypair {key.path} (public key {key.pubkey}); back it up, it signs your savepoints")
    else:
        click.echo(f"using keypair {key.path}")
    if airdrop:
        project_init.airdrop(loaded, key.pubkey)
        click.echo(f"airdropped {project_init.AIRDROP_LAMPORTS / 1e9:g} SOL to {key.pubkey} on {loaded.cluster}")
    if not loaded.chain_layer and (chain or interactive):
        click.echo(f"Layer 3 (the chain) is off: savepoints are kept locally and in git; {TURN_CHAIN_ON}")
    try:
        if project_init.exclude_logs(loaded):
            click.echo("added logs/precompact-* to .git/info/exclude")
    except gitstore.GitStoreError as e:
        click.echo(f"warning: {e}; Layer 2 stays queued until it is fixed", err=True)


def _chain_choice(given: str | None, interactive: bool) -> str | None:
    """The cluster for Layer 3 (None: off): as given, asked at a terminal, else the local cluster
    when it answers."""
    from precompact.ops import project_init

    if given is not None:
        return project_init.chain_cluster(given)
    if not interactive:
        if project_init.answers(configuration.DEFAULT_CLUSTER):
            return configuration.DEFAULT_CLUSTER
        click.echo(
            f"Layer 3 (the chain) is off: no cluster answers at {configuration.DEFAULT_CLUSTER}; {TURN_CHAIN_ON}"
        )
        return None
    click.echo(project_init.CHAIN_QUESTION)
    while True:
        answer = click.prompt("Chain", default="off").strip()
        try:
            return project_init.chain_cluster(answer)
        except project_init.InitError as e:
            click.echo(str(e))


@main.command()
@click.option(
    "--repo",
    type=click.Path(file_okay=False, path_type=Path),
    help="Allow git.repository to be this repository, which is not the project's own.",
)
@click.option("--yes", is_flag=True, help="Approve without asking (for scripts): read the settings shown first.")
def trust(repo, yes) -> None:
    """Approve this project's .precompact.toml as it is now, after reading every setting it makes
    (or what changed since your last approval). Until then, and after any change to it,
    precompact does nothing in this project."""
    root, worktree = configuration.discover(Path.cwd())
    path = root / configuration.CONFIG_NAME
    content = configuration.read_own(path)
    loaded = configuration.parse(root, content, environ={})
    allowed = str(repo.resolve()) if repo else None
    if allowed and allowed != str(loaded.repository.resolve()):
        raise ConfigError(
            f"git.repository in {path} is {loaded.repository}, not {repo}; pass --repo only for the repository the file names"
        )
    configuration.check_repository(loaded, worktree, allowed)
    settings = review.settings(loaded)
    before = config_trust.approval(path)
    previous = before.settings if before else {}
    shown = review.changes(previous, settings)
    sha = config_trust.digest(content)[:12]
    if before and previous and not shown and before.sha256 == config_trust.digest(content):
        click.echo(f"{path} (sha256:{sha}) is trusted as it is; nothing changed since you approved it")
        return
    if previous:
        click.echo(f"{path} (sha256:{sha}) changed since you approved it:" if shown else f"{path} (sha256:{sha}):")
    else:
        click.echo(f"{path} (sha256:{sha}) sets:")
    for line in shown or ["  (the same settings as you approved; the file's bytes differ)"]:
        click.echo(line)
    if not yes:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise click.ClickException(
                "not at a terminal: read the settings above, then run `precompact trust --yes` to approve them"
            )
        if not click.confirm("Approve these settings?", default=False):
            raise click.ClickException(f"not approved; precompact still does nothing in {root}")
    config_trust.approve(path, content, Path(allowed) if allowed else None, settings)
    click.echo(f"trusted {path} (sha256:{sha})")


@main.command()
@click.option(
    "--transcript",
    type=click.Path(dir_okay=False),
    help="Claude Code transcript (JSONL) to include (default: the newest of this directory's sessions).",
)
@click.option("--session-id", help="Session id to record.")
@click.option(
    "--no-transcript", is_flag=True, help="Save files and git state only (such a savepoint is never briefed)."
)
@click.option("--trigger", type=click.Choice(["manual", "auto"]), default="manual", show_default=True)
def savepoint(transcript, session_id, no_transcript, trigger) -> None:
    """Make a savepoint now: Layer 1, then Layers 2 and 3 as far as they can go.

    Exit 0: all layers done; 1: saved, with Layer 2 or 3 queued for `precompact flush`; 2: error.
    """
    from precompact import api
    from precompact.local import savepoint_log, snapshot

    try:
        loaded = configuration.load(Path.cwd())
    except ConfigError as e:
        click.echo(f"Error: {e}", err=True)
        sys.exit(api.EXIT_ERROR)
    warning = configuration.insecure_cluster_warning(loaded)
    if warning:
        click.echo(warning, err=True)
    if transcript is not None and no_transcript:
        raise click.UsageError("give --transcript or --no-transcript, not both")
    if transcript is None and not no_transcript:
        transcript, session_id = _session_transcript(session_id)
    session = snapshot.Session(session_id=session_id, transcript_path=transcript, cwd=str(Path.cwd()), trigger=trigger)
    try:
        written, outcome = api.save(loaded, session)
    except (OSError, savepoint_log.LockTimeout) as e:
        click.echo(f"Error: savepoint not written: {e}", err=True)
        sys.exit(api.EXIT_ERROR)
    click.echo(f"✓ Layer 1: savepoint {written.sequence} saved locally")
    click.echo(f"  Hash: sha256:{written.sha256}")
    click.echo(f"  Size: {written.size} bytes")
    click.echo(f"  Location: {written.path}")
    _report(loaded, outcome)
    sys.exit(outcome.exit_code)


def _session_transcript(session_id: str | None) -> tuple[str, str]:
    """The transcript of the session run here: `session_id`'s, else the newest Claude Code kept
    for this directory. Exits with one line when there is none: a savepoint without a
    conversation restores nothing."""
    from precompact import api
    from precompact.local import capture

    found = capture.transcripts(Path.cwd())
    if session_id is not None:
        found = [p for p in found if p.stem == session_id]
    if not found:
        whose = f"session {session_id}" if session_id else "any session"
        click.echo(
            f"Error: no Claude Code transcript of {whose} run in {Path.cwd()}; give it with --transcript PATH (or --no-transcript)",
            err=True,
        )
        sys.exit(api.EXIT_ERROR)
    return str(found[-1]), session_id or found[-1].stem


@main.command(name="import")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per session, then the summary, on stdout.")
def import_sessions(as_json) -> None:
    """Archive this project's existing Claude Code sessions, oldest first (one savepoint each;
    again, only what is new)."""
    from precompact.ops import importer

    loaded = _load()

    def progress(number: int, total: int, result: importer.Imported) -> None:
        saved = f" as savepoint {result.sequence}" if result.outcome == importer.SAVED else ""
        why = f" ({result.reason})" if result.reason else ""
        click.echo(f"[{number}/{total}] {result.session_id}: {result.outcome}{saved}{why}", err=True)

    done = importer.run(loaded, progress=progress)
    counts = {kind: sum(r.outcome == kind for r in done) for kind in importer.OUTCOMES}
    summary = (
        f"{len(done)} session(s) found: {counts[importer.SAVED]} saved, {counts[importer.UNCHANGED]} already archived, "
        f"{counts[importer.EMPTY]} without conversation, {counts[importer.FAILED]} failed"
    )
    if as_json:
        click.echo(json.dumps({"sessions": [r.to_json() for r in done], "counts": counts}, ensure_ascii=False))
    click.echo(summary, err=as_json)
    if counts[importer.FAILED]:
        sys.exit(1)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="The checks as JSON.")
def doctor(as_json) -> None:
    """Check what keeps sessions from being archived: one line per check with the fix; exit 1
    if any fails."""
    from precompact.ops import doctor as checkup

    checks = checkup.run(Path.cwd())
    if as_json:
        click.echo(json.dumps([c.to_json() for c in checks], ensure_ascii=False, indent=2))
    else:
        for check in checks:
            click.echo(check.line())
    if not all(c.ok for c in checks):
        sys.exit(1)


@main.command()
def flush() -> None:
    """Retry everything queued: commits, pushes and on-chain posts, in order."""
    from precompact import api

    loaded = _load()
    outcome = api.flush(loaded)
    _report(loaded, outcome)
    sys.exit(outcome.exit_code)


def _report(loaded: configuration.Config, outcome) -> None:
    for layer, enabled, problems in (
        (2, loaded.git_layer, outcome.layer_2_problems),
        (3, loaded.chain_layer, outcome.layer_3_problems),
    ):
        if not enabled:
            click.echo(f"- Layer {layer}: off in .precompact.toml")
        elif problems:
            click.echo(f"… Layer {layer}: queued: {problems[0]}")
        else:
            click.echo(f"✓ Layer {layer}: up to date")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status(as_json) -> None:
    """Savepoints with the state of each layer."""
    from precompact import api
    from precompact.edges import worker

    loaded = _load()
    savepoints, bad_lines = api.status(loaded)
    retry = worker.next_retry(loaded.logs)
    retrying = f"retrying (next in {retry:.0f}s)" if retry is not None else None

    def shown(state: str) -> str:  # a failed layer the worker is about to retry is not FAILED yet
        return retrying if state in (Layer2.FAILED, Layer3.FAILED) and retrying else state

    def chain_shown(s) -> str:
        return shown(api.layer_3_state(loaded, s))

    clear = api.in_clear(loaded, savepoints)
    if as_json:
        rows = [
            {
                "instance": s.instance,
                "sequence": s.sequence,
                "timestamp": s.timestamp,
                "snapshot_hash": s.snapshot_hash,
                "snapshot_file": s.snapshot_file,
                "layer_1": s.layer_1_status,
                "layer_2": shown(s.layer_2),
                "commit": s.commit,
                "layer_3": chain_shown(s),
                "chain_signature": s.chain_signature,
                "in_clear_on_branch": s in clear if s.commit else None,
                "failures": s.failures,
            }
            for s in savepoints
        ]
        click.echo(
            json.dumps(
                {"instance": loaded.instance, "savepoints": rows, "unparseable_index_lines": bad_lines}, indent=2
            )
        )
        return
    instances = list(dict.fromkeys([loaded.instance, *(s.instance for s in savepoints)]))
    for instance in instances:
        mine = [s for s in savepoints if s.instance == instance]
        current = " (this project's instance)" if instance == loaded.instance and len(instances) > 1 else ""
        click.echo(f"{instance}: {len(mine)} savepoint(s){current}")
        for s in mine:
            commit = (s.commit or "-")[:10]
            click.echo(
                f"  #{s.sequence:<4} {s.timestamp or '?'}  {s.snapshot_hash[:12]}  git {shown(s.layer_2):<9} {commit:<10}  chain {_words(chain_shown(s))}"
            )
            if (s.layer_2 == Layer2.FAILED or chain_shown(s) == Layer3.FAILED) and s.failures:
                click.echo(f"        last problem: {s.failures[-1]}")
    if clear:
        listed = ", ".join(f"{s.instance} #{s.sequence}" for s in clear)
        advice = (
            "`precompact rekey` encrypts the branch's copies; the clear ones stay in its history"
            if loaded.recipients
            else "set encryption.recipients (see `precompact init --help`) to encrypt new ones"
        )
        click.echo(f"in clear text on {loaded.branch} (and its remote once pushed): {listed}; {advice}")
    if bad_lines:
        click.echo(
            f"warning: index lines {', '.join(map(str, bad_lines))} do not parse (run `precompact verify`)", err=True
        )


def _words(state: str) -> str:
    """A layer's state as a person reads it: "queued", not QUEUED_FOR_BLOCKCHAIN."""
    from precompact import api

    return {Layer3.QUEUED: "queued", api.CHAIN_OFF: "off"}.get(state, state)


@main.command()
@click.option("--instance", help="Instance name (default: the configured one).")
@click.option("--address", help="Record address to read instead of deriving it.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output; bytes as lowercase hex.")
def inspect(instance, address, as_json) -> None:
    """Decode the on-chain record, verify it against the configured authority, instance and
    program (exit 1 if it fails) and compare it with the local index."""
    from precompact import api
    from precompact.chain import record
    from precompact.verifier import verdicts

    if instance and address:
        raise click.UsageError("give --instance or --address, not both")
    loaded = _load()
    if not loaded.chain_layer and address is None:
        off = f"Layer 3 (the chain) is off in .precompact.toml: no on-chain record to inspect; {TURN_CHAIN_ON}"
        click.echo(json.dumps({"layer_3": api.CHAIN_OFF, "detail": off}, indent=2) if as_json else off)
        return
    found = api.inspect(loaded, instance, address)
    held = found.record
    if as_json:
        out = record.to_json(held, _pubkey(found.address))
        out.update(
            {
                "signature_valid": found.signature_valid,
                "verdict": found.verdict.status,
                "verdict_detail": found.verdict.detail,
                "unsigned_fields": list(record.UNSIGNED_FIELDS),
                "local_index": found.local_index,
            }
        )
        click.echo(json.dumps(out, indent=2))
    else:
        rows = [
            ("address", found.address),
            ("header", f"magic {held.magic.hex()} version {held.version}"),
            ("authority", str(_pubkey(held.authority))),
            ("instance_id", held.instance_id.hex()),
            ("sequence", held.sequence),
            ("entry_type", held.entry_type),
            ("timestamp", f"{held.timestamp} ({_utc(held.timestamp)})"),
            ("snapshot_hash", f"sha256:{held.snapshot_hash.hex()}"),
            ("prev_snapshot_hash", f"sha256:{held.prev_snapshot_hash.hex()}"),
            ("git_commit", held.commit),
            ("slot", f"{held.slot} (unsigned: reported, not verified)"),
            ("chain_timestamp", f"{held.chain_timestamp} ({_utc(held.chain_timestamp)}) (unsigned)"),
            ("metadata", f"{held.metadata_text} (unsigned)"),
            (
                "signature",
                "valid (the configured authority's ed25519 over the savepoint)" if found.signature_valid else "INVALID",
            ),
            (
                "verdict",
                found.verdict.status if found.verdict.status != verdicts.FAILED else f"failed: {found.verdict.detail}",
            ),
            ("local index", found.local_index),
        ]
        for name, value in rows:
            click.echo(f"{name:>19}: {value}")
    if found.verdict.status == verdicts.FAILED:
        sys.exit(1)


def _damaged(error: Exception) -> str:
    """A git read that failed under the verifier (not a finding it could name): the object store."""
    return f"{error}; the repository's object store may be damaged (run `git fsck`), nothing was verified"


def _pubkey(value):
    from solders.pubkey import Pubkey

    return Pubkey.from_bytes(value) if isinstance(value, bytes) else Pubkey.from_string(value)


def _utc(seconds: int) -> str:
    from datetime import datetime

    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@main.command()
@click.option("--all", "check_all", is_flag=True, help="Every savepoint (the default).")
@click.option("--sequence", type=int, help="Only this savepoint.")
@click.option(
    "--ledger", is_flag=True, help="Also read the record's whole history: exactly savepoints 1..N, no other writer."
)
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
def verify(check_all, sequence, ledger, file) -> None:
    """Check savepoints across the three layers; exit 1 naming the first broken link."""
    from precompact.remote.gitstore import GitStoreError
    from precompact.verifier import verify as verification

    if sum(bool(x) for x in (check_all, sequence is not None, file)) > 1:
        raise click.UsageError("give one of --all, --sequence N or FILE")
    loaded = _load()
    try:
        report = verification.verify_file(loaded, file) if file else verification.verify(loaded, sequence)
    except GitStoreError as e:
        raise click.ClickException(_damaged(e)) from None
    if report.ok and report.unvouched:
        click.echo(f"✗ {len(report.unvouched)} savepoint(s) not verified: {report.unvouched[0]}")
        for finding in report.unvouched[1:]:
            click.echo(f"  also: {finding}")
        sys.exit(1)
    if report.ok:
        unchecked = sorted({f.sequence for f in report.unchecked if f.sequence is not None})
        git = (
            f"git (content of encrypted savepoint(s) {', '.join(map(str, unchecked))} not checked: only that the remote holds the committed ciphertext)"
            if unchecked
            else "git"
        )
        click.echo(
            f"✓ {len(report.checked)} savepoint(s) verified: snapshots, index, hash chain, {git}; chain: {report.chain if loaded.chain_layer else 'off'}"
        )
        for finding in report.unchecked:
            click.echo(f"  not verified: {finding}")
    else:
        click.echo(f"✗ first broken link: {report.findings[0]}")
        for finding in report.findings[1:]:
            click.echo(f"  also: {finding}")
    if not (_ledger_verified(loaded) if ledger else True) or not report.ok:
        sys.exit(1)


def _ledger_verified(loaded: configuration.Config) -> bool:
    """Prints each instance's ledger verdict (`precompact verify --ledger`)."""
    from precompact.chain import rpc
    from precompact.local import savepoint_log
    from precompact.proof import ledger
    from precompact.verifier import verdicts

    client = rpc.Cluster(loaded.cluster, timeout=rpc.DEFAULT_TIMEOUT_SECONDS)
    folded = savepoint_log.savepoints(loaded.logs)
    verified = True
    for instance in dict.fromkeys([loaded.instance, *(s.instance for s in folded)]):
        roots = verdicts.roots(loaded.program_id, loaded.authority, loaded.keypair, instance)
        verdict = ledger.check(roots, client, savepoint_log.of_instance(folded, instance))
        if verdict.status == verdicts.VERIFIED:
            click.echo(f"✓ ledger verified: {instance}: {verdict.detail}")
            continue
        verified = False
        if verdict.status == verdicts.NOT_VERIFIED:
            click.echo(f"✗ ledger not verified: {instance}: {verdict.detail}")
            continue
        click.echo(f"✗ ledger: first broken link: {instance} {verdict.findings[0]}")
        for finding in verdict.findings[1:]:
            click.echo(f"  also: {instance} {finding}")
    return verified


@main.command()
@click.option("--instance", help="Whose savepoint to show (default: the configured instance).")
@click.option(
    "--from",
    "from_instance",
    help='Restore a predecessor\'s savepoint into this instance and record the lineage, e.g. "Gabriel #215".',
)
@click.option("--sequence", type=click.IntRange(min=1), help="That savepoint instead of the newest.")
@click.option(
    "--at",
    "at_time",
    metavar="ISO-TIME",
    help="The newest savepoint at or before this time (UTC unless a zone is given).",
)
@click.option("--format", "output", type=click.Choice(["brief", "report", "json"]), default="report", show_default=True)
@click.option(
    "--restore-state", is_flag=True, help="Write the saved session-state file back (only if every check passes)."
)
@click.option(
    "--uncompact",
    is_flag=True,
    help="Write the savepoint's whole pre-compaction conversation as a new Claude Code session, and print the command that resumes it.",
)
def resurrect(instance, from_instance, sequence, at_time, output, restore_state, uncompact) -> None:
    """Bring a savepoint back: read the chain, fetch from git, verify, and report (exit 1 if a check fails)."""
    from precompact.remote.gitstore import GitStoreError
    from precompact.restore import brief as restore_brief
    from precompact.restore import resurrect as resurrection

    if instance and from_instance:
        raise click.UsageError("give --instance or --from, not both")
    if sequence is not None and at_time:
        raise click.UsageError("give --sequence or --at, not both")
    if uncompact and (from_instance or restore_state):
        raise click.UsageError("--uncompact writes a session only: give it without --from and --restore-state")
    loaded = _load()
    try:
        found = resurrection.resurrect(
            loaded, instance or from_instance, sequence, at_time, restore_state, record_lineage=bool(from_instance)
        )
        if sequence is None and at_time is None and found.later:
            click.echo(
                f"skipped the {found.later} newer savepoint(s) after {found.savepoint.sequence}: they hold no conversation",
                err=True,
            )
        if uncompact:
            from precompact.restore import uncompact as uncompaction

            written = uncompaction.uncompact(found)
            click.echo(
                f"wrote savepoint {found.savepoint.sequence}'s {written.entries} entries as a new session: {written.path}"
            )
            click.echo(f"resume it from {written.cwd} with:")
            click.echo(written.command)
            return
    except GitStoreError as e:
        raise click.ClickException(_damaged(e)) from None
    if output == "json":
        click.echo(json.dumps(restore_brief.to_json(found), indent=2, ensure_ascii=False))
    else:
        click.echo(restore_brief.brief(found) if output == "brief" else restore_brief.report(found))
    if not found.intact:
        sys.exit(1)


@main.command()
@click.option("--instance", help="Whose savepoint (default: the configured instance).")
@click.option("--sequence", type=click.IntRange(min=1), help="That savepoint instead of the newest.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), help="Write it to this file, not stdout.")
def export(instance, sequence, output) -> None:
    """Write a savepoint's full snapshot document (JSON), rebuilt from its chunks and checked."""
    from precompact.boundary import atomic_file
    from precompact.remote.gitstore import GitStoreError
    from precompact.restore import resurrect as resurrection

    try:
        data = resurrection.export(_load(), instance, sequence)
    except GitStoreError as e:
        raise click.ClickException(_damaged(e)) from None
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        atomic_file.write(output, data, 0o600)


@main.command()
@click.argument("sequence", type=click.IntRange(min=1))
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write it to this file, not stdout."
)
@click.option("--with-snapshot", is_flag=True, help="Embed the snapshot file, encrypted or not as the remote holds it.")
def prove(sequence, output, with_snapshot) -> None:
    """Write a proof bundle for savepoint N (docs/proof-bundle.md): JSON anyone can verify offline."""
    from precompact.boundary import atomic_file
    from precompact.proof import bundle

    written = bundle.build(_load(), sequence, with_snapshot)
    data = (json.dumps(written, indent=1) + "\n").encode()
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        atomic_file.write(output, data, 0o644)


@main.command("verify-bundle")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--snapshot",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Check this snapshot file is savepoint N.",
)
@click.option("--cluster", metavar="URL", help="Also confirm each transaction is finalized in this cluster's ledger.")
def verify_bundle(file, snapshot, cluster) -> None:
    """Check a proof bundle offline (no configuration needed); exit 1 naming the first broken link."""
    from precompact.proof import bundle
    from precompact.verifier import verdicts

    verdict = bundle.check(bundle.read(file), snapshot.read_bytes() if snapshot else None, cluster)
    if verdict.status == verdicts.VERIFIED:
        click.echo(f"✓ bundle verified: {verdict.detail}")
        for note in verdict.notes:
            click.echo(f"  not verified: {note}")
        return
    if verdict.status == verdicts.FAILED:
        where = f"savepoint {verdict.sequence}" if verdict.sequence is not None else "bundle"
        click.echo(f"✗ first broken link: {where} [{verdict.layer}]: {verdict.detail}")
    else:
        click.echo(f"✗ not verified: {verdict.detail}")
    sys.exit(1)


@main.command()
@click.option("--keep", type=int, required=True, help="Keep the local copies of each instance's newest N savepoints.")
def prune(keep) -> None:
    """Remove the local copies of older savepoints that git holds, pushed and verified."""
    from precompact.ops import prune as pruning

    outcome = pruning.prune(_load(), keep)
    click.echo(
        f"pruned {len(outcome.savepoints)} savepoint(s) and {outcome.chunks} chunk(s): {outcome.freed_bytes} bytes freed; `precompact resurrect --sequence N` restores one from git"
    )
    for why in outcome.kept:
        click.echo(f"  kept {why}")


@main.command()
@click.argument("query", required=False)
@click.option(
    "--budget",
    type=click.IntRange(min=200),
    default=6_000,
    show_default=True,
    help="At most this many characters of output.",
)
@click.option("--savepoint", "sequence", type=click.IntRange(min=1), help="Only entries savepoint N holds.")
@click.option("--since", metavar="ISO-TIME", help="Only entries from this time on (UTC unless a zone is given).")
@click.option(
    "--role",
    type=click.Choice(["user", "assistant", "tool", "meta"]),
    help="Only entries of this role (tool: tool results).",
)
@click.option("--tool", help="Only calls to, and results of, this tool (e.g. Bash).")
@click.option("--rebuild", is_flag=True, help="Rebuild the index from the snapshots first.")
def recall(query, budget, sequence, since, role, tool, rebuild) -> None:
    """Search the conversation the savepoints hold (BM25), printing excerpts with references
    that `precompact show` prints whole."""
    from precompact.recall import fulltext as recollection

    if query is None and not rebuild:
        raise click.UsageError("give a QUERY (or --rebuild)")
    loaded = _load()
    if rebuild:
        outcome = recollection.update(loaded.logs, loaded.instance, rebuild=True)
        for note in outcome.notes:
            click.echo(note, err=True)
        click.echo(
            f"rebuilt {recollection.index_path(loaded.logs)}: {len(outcome.indexed)} savepoint(s) indexed", err=True
        )
        if query is None:
            return
    found = recollection.search(loaded.logs, loaded.instance, query, sequence, since, role, tool)
    click.echo(found.text(budget))


@main.command()
@click.argument("ref")
@click.option("--instance", help="Whose savepoint (default: the configured instance).")
@click.option("--json", "as_json", is_flag=True, help="The entries as the snapshot holds them.")
def show(ref, instance, as_json) -> None:
    """Print saved entries whole: REF is SAVEPOINT:ENTRY or SAVEPOINT:FIRST-LAST (from recall)."""
    from precompact.recall import fulltext as recollection

    loaded = _load()
    entries = recollection.show(loaded.logs, instance or loaded.instance, ref)
    click.echo(
        json.dumps([e.raw for e in entries], indent=2, ensure_ascii=False) if as_json else recollection.render(entries)
    )


@main.command()
def mcp() -> None:
    """Serve recall, show and savepoints to Claude Code as MCP tools (stdio); no tools where
    precompact is not set up (or not trusted), but never a failed server."""
    try:
        loaded = configuration.load(Path.cwd())
    except ConfigError:
        from precompact.edges import mcp_idle

        mcp_idle.serve()
        return
    from precompact.edges import mcp_server

    mcp_server.serve(loaded)


@main.command()
@click.option(
    "--scope",
    type=click.Choice(["project", "user"]),
    default="project",
    show_default=True,
    help="project: <project>/.claude/settings.json; user: ~/.claude/settings.json (works in subdirectories too).",
)
@click.option("--dry-run", is_flag=True, help="Print the resulting settings.json instead of writing it.")
@click.option(
    "--mcp",
    "with_mcp",
    is_flag=True,
    help="Also register `precompact mcp` (recall, show, savepoints) in the project's .mcp.json and approve it in settings.json.",
)
def install(scope, dry_run, with_mcp) -> None:
    """Add the PreCompact, PostCompact, SessionStart and SessionEnd hooks to Claude Code's settings.json."""
    from precompact.config import install as installer

    try:
        loaded = configuration.load(Path.cwd())
        root, sources = loaded.root, loaded.session_start_sources
    except configuration.UntrustedConfig:
        raise  # installing hooks for a configuration not approved would make them run it
    except ConfigError:
        root, sources = Path.cwd(), tuple(configuration.DEFAULT_SESSION_START_SOURCES)
    plugin = installer.enabled_plugin()
    if scope == "user" and plugin:
        raise click.ClickException(
            f"the {plugin} plugin is enabled in Claude Code and already runs these hooks in every project; nothing installed (to use settings.json instead, `claude plugin uninstall {plugin}` first)"
        )
    change = installer.plan_install(installer.settings_path(scope, root), installer.COMMAND, sources)
    server = installer.plan_mcp_server(installer.mcp_json_path(root), installer.COMMAND) if with_mcp else None
    if server is not None:
        change = installer.with_mcp_approval(change)
    if server is not None:
        _apply(
            server,
            dry_run,
            f"registered the MCP server `precompact mcp` in {server.path}",
            f"MCP server already registered in {server.path}",
        )
    _apply(
        change,
        dry_run,
        f"installed the PreCompact, PostCompact, SessionStart and SessionEnd hooks in {change.path}",
        f"already installed in {change.path}; nothing changed",
    )
    warning = installer.not_on_path_warning()
    if warning:
        click.echo(warning, err=True)
    if scope == "project" and not dry_run:
        click.echo(installer.PROJECT_SCOPE_ADVICE.format(root=root))
        if plugin:
            click.echo(f"note: the {plugin} plugin's hooks stand down where these run, so a compaction is saved once")


@main.command()
@click.option("--scope", type=click.Choice(["project", "user"]), default="project", show_default=True)
@click.option("--dry-run", is_flag=True, help="Print the resulting settings.json instead of writing it.")
def uninstall(scope, dry_run) -> None:
    """Remove precompact's hooks and MCP server (and only those) from Claude Code's settings.json
    and the project's .mcp.json."""
    from precompact.config import install as installer

    change = installer.without_mcp(installer.plan_uninstall(installer.settings_path(scope, Path.cwd())))
    server = installer.plan_mcp_server_removal(installer.mcp_json_path(Path.cwd()))
    if server.changed:
        _apply(server, dry_run, f"removed the MCP server `precompact mcp` from {server.path}", "")
    _apply(
        change,
        dry_run,
        f"removed precompact's hooks from {change.path}",
        f"no precompact hooks in {change.path}; nothing changed",
    )


def _apply(change, dry_run: bool, done: str, unchanged: str) -> None:
    from precompact.config import install as installer

    if dry_run:
        click.echo(change.text(), nl=False)
        return
    if not change.changed:
        click.echo(unchanged)
        return
    installer.apply(change)
    click.echo(done)


@main.command()
def rekey() -> None:
    """Re-encrypt the savepoint branch to the current encryption.recipients, as a new commit
    (pushed history is never rewritten), then push."""
    from precompact import api

    loaded = _load()
    commit, files = api.rekey(loaded)
    if commit is None:
        click.echo(f"{loaded.branch} is already encrypted to the {len(loaded.recipients)} recipient(s); nothing to do")
        return
    click.echo(
        f"re-encrypted {files} file(s) on {loaded.branch} to {len(loaded.recipients)} recipient(s) in commit {commit[:12]}, pushed to {loaded.remote}; earlier commits still hold the old copies"
    )


@main.group()
def key() -> None:
    """The age identity that reads encrypted savepoints (show, export, import), and the signing key's rotation."""


@key.command("show")
def key_show() -> None:
    """Print the identity's public key and the recipients savepoints are encrypted to."""
    from precompact.remote import encryption as remote_crypto

    loaded = _load()
    try:
        data = remote_crypto.read_identity_file(loaded.identity) if loaded.identity else b""
        own = remote_crypto.public_keys(data, str(loaded.identity))
    except remote_crypto.CryptoError as e:
        click.echo(f"identity: {e}")
        own = []
    for public in own:
        listed = "a recipient" if public in loaded.recipients else "NOT a recipient: add it to encryption.recipients"
        click.echo(f"identity {loaded.identity}: {public} ({listed})")
    click.echo(f"recipients: {', '.join(loaded.recipients) or 'none (savepoints go in clear text)'}")


@key.command("export")
def key_export() -> None:
    """Print the identity (a secret: it reads every savepoint) for `key import` on another machine."""
    from precompact.remote import encryption as remote_crypto

    loaded = _load()
    data = remote_crypto.read_identity_file(loaded.identity) if loaded.identity else b""
    remote_crypto.parse_identities(data, str(loaded.identity))
    click.echo(
        "warning: this is your secret key; move it only over a channel you trust, then delete the copy", err=True
    )
    click.echo(data.decode(), nl=False)


@key.command("import")
@click.argument("source", type=click.File("rb"))
def key_import(source) -> None:
    """Install the identity in SOURCE ('-': stdin) as this project's encryption.identity (0600)."""
    from precompact.remote import encryption as remote_crypto

    loaded = _load()
    if loaded.identity is None:
        raise click.ClickException("encryption.identity is not set; set it to where the identity should go")
    own = remote_crypto.import_identity(source.read(), source.name, loaded.identity)
    click.echo(f"installed the age identity at {loaded.identity} ({', '.join(own) or 'an SSH key'}); back it up")


@key.command("rotate")
@click.option(
    "--recover",
    is_flag=True,
    help="The signing key is lost: the new key alone continues the lineage, marked as not signed by the old key.",
)
@click.option("--airdrop", is_flag=True, help="Fund the new key from the cluster's faucet (local and test clusters).")
def key_rotate(recover: bool, airdrop: bool) -> None:
    """Move the instance's on-chain lineage to a new signing key (both keys sign; the old record
    freezes), switch chain.keypair to it, and record the rotation in the index."""
    from precompact.ops import key_rotation

    done = key_rotation.rotate(_load(), recover=recover, airdrop=airdrop)
    rotation = done.rotation
    how = "recovered without the old key's signature" if rotation.recovered else "rotated"
    click.echo(
        f"{how}: savepoint {rotation.sequence} of {rotation.instance!r} now continues under {rotation.new_authority} (was {rotation.old_authority}), transaction {rotation.signature}"
    )
    click.echo(
        f"created keypair {done.keypair}; {done.config} now signs with it: back it up, and fund it, it pays for the next savepoints"
    )


@main.command()
def hook() -> None:
    """Claude Code hook handler: reads the hook JSON on stdin. Always exits 0."""
    from precompact.edges import hook as hook_handler

    hook_handler.run()
