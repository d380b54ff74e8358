"""`precompact`: a thin click layer over the library (config, layers)."""

from __future__ import annotations

import json
import sys
from datetime import UTC
from pathlib import Path

import click

from precompact import config as configuration
from precompact import config_trust
from precompact.config import ConfigError
from precompact.savepoint_log import Layer2, Layer3

# Commands import the rest of the library when they run: `precompact hook` is on Claude Code's
# critical path and must not pay for GitPython or the Solana stack it does not use.


def _load() -> configuration.Config:
    try:
        loaded = configuration.load(Path.cwd())
    except ConfigError as e:
        raise click.ClickException(str(e)) from None
    warning = configuration.insecure_cluster_warning(loaded)
    if warning:
        click.echo(warning, err=True)
    return loaded


class _Commands(click.Group):
    def invoke(self, ctx):
        # A logs/ that precompact refuses (a link, tracked by git, a link inside it) is one
        # line naming what to remove, whichever command met it.
        from precompact.logs_dir import ConfinementError

        try:
            return super().invoke(ctx)
        except ConfinementError as e:
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
@click.option("--cluster", default=configuration.DEFAULT_CLUSTER, show_default=True, help="Solana JSON-RPC URL.")
@click.option(
    "--keypair",
    default=configuration.DEFAULT_KEYPAIR,
    show_default=True,
    help="Solana CLI keypair file (created if absent).",
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
    instance, repo, remote, branch, cluster, keypair, program_id, yes, force, identity, recipients, no_encrypt, airdrop
) -> None:
    """Write .precompact.toml here, create the keypair and the age identity if absent, keep logs
    out of git status."""
    from precompact import gitstore, project_init

    root = Path.cwd()
    try:
        path = project_init.config_path(root, force)
    except project_init.InitError as e:
        raise click.ClickException(str(e)) from None
    if instance is None:
        default = f"{root.name} #1"
        instance = default if yes else click.prompt("Instance name", default=default)
    values = {
        "instance": instance,
        "repository": repo,
        "remote": remote,
        "branch": branch,
        "cluster": cluster,
        "keypair": keypair,
    }
    if program_id:
        values["program_id"] = program_id
    if no_encrypt and (identity or recipients):
        raise click.UsageError("--no-encrypt takes no --identity or --recipient")
    try:
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
    except project_init.InitError as e:
        raise click.ClickException(str(e)) from None
    try:
        if project_init.exclude_logs(loaded):
            click.echo("added logs/precompact-* to .git/info/exclude")
    except gitstore.GitStoreError as e:
        click.echo(f"warning: {e}; Layer 2 stays queued until it is fixed", err=True)


@main.command()
@click.option(
    "--repo",
    type=click.Path(file_okay=False, path_type=Path),
    help="Allow git.repository to be this repository, which is not the project's own.",
)
def trust(repo) -> None:
    """Approve this project's .precompact.toml as it is now; read it first. Until then, and after
    any change to it, precompact does nothing in this project."""
    try:
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
    except ConfigError as e:
        raise click.ClickException(str(e)) from None
    config_trust.approve(path, content, Path(allowed) if allowed else None)
    layers = f"git {loaded.repository} → {loaded.remote}/{loaded.branch}" if loaded.git_layer else "git off"
    chain = f"chain {loaded.cluster}" if loaded.chain_layer else "chain off"
    click.echo(
        f"trusted {path} (sha256:{config_trust.digest(content)[:12]}): instance {loaded.instance!r}, {layers}, {chain}"
    )


@main.command()
@click.option("--transcript", type=click.Path(dir_okay=False), help="Claude Code transcript (JSONL) to include.")
@click.option("--session-id", help="Session id to record.")
@click.option("--trigger", type=click.Choice(["manual", "auto"]), default="manual", show_default=True)
def savepoint(transcript, session_id, trigger) -> None:
    """Make a savepoint now: Layer 1, then Layers 2 and 3 as far as they can go.

    Exit 0: all layers done; 1: saved, with Layer 2 or 3 queued for `precompact flush`; 2: error.
    """
    from precompact import api, savepoint_log, snapshot

    try:
        loaded = configuration.load(Path.cwd())
    except ConfigError as e:
        click.echo(f"Error: {e}", err=True)
        sys.exit(api.EXIT_ERROR)
    warning = configuration.insecure_cluster_warning(loaded)
    if warning:
        click.echo(warning, err=True)
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
    from precompact import api, worker

    loaded = _load()
    savepoints, bad_lines = api.status(loaded)
    retry = worker.next_retry(loaded.logs)
    retrying = f"retrying (next in {retry:.0f}s)" if retry is not None else None

    def shown(state: str) -> str:  # a failed layer the worker is about to retry is not FAILED yet
        return retrying if state in (Layer2.FAILED, Layer3.FAILED) and retrying else state

    clear = api.in_clear(loaded, savepoints)
    if as_json:
        rows = [
            {
                "instance": s.instance,
                "sequence": s.sequence,
                "timestamp": s.created.get("timestamp"),
                "snapshot_hash": s.snapshot_hash,
                "snapshot_file": s.created.get("snapshot_file"),
                "layer_1": s.created.get("layer_1_status"),
                "layer_2": shown(s.layer_2),
                "commit": s.commit,
                "layer_3": shown(s.layer_3),
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
                f"  #{s.sequence:<4} {s.created.get('timestamp', '?')}  {s.snapshot_hash[:12]}  git {shown(s.layer_2):<9} {commit:<10}  chain {shown(s.layer_3)}"
            )
            if (s.layer_2 == Layer2.FAILED or s.layer_3 == Layer3.FAILED) and s.failures:
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


@main.command()
@click.option("--instance", help="Instance name (default: the configured one).")
@click.option("--address", help="Record address to read instead of deriving it.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output; bytes as lowercase hex.")
def inspect(instance, address, as_json) -> None:
    """Decode the on-chain record, verify it against the configured authority, instance and
    program (exit 1 if it fails) and compare it with the local index."""
    from precompact import api, trust
    from precompact.chain import record

    if instance and address:
        raise click.UsageError("give --instance or --address, not both")
    loaded = _load()
    try:
        found = api.inspect(loaded, instance, address)
    except api.InspectError as e:
        raise click.ClickException(str(e)) from None
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
                found.verdict.status if found.verdict.status != trust.FAILED else f"failed: {found.verdict.detail}",
            ),
            ("local index", found.local_index),
        ]
        for name, value in rows:
            click.echo(f"{name:>19}: {value}")
    if found.verdict.status == trust.FAILED:
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
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
def verify(check_all, sequence, file) -> None:
    """Check savepoints across the three layers; exit 1 naming the first broken link."""
    from precompact import verify as verification
    from precompact.gitstore import GitStoreError

    if sum(bool(x) for x in (check_all, sequence is not None, file)) > 1:
        raise click.UsageError("give one of --all, --sequence N or FILE")
    loaded = _load()
    try:
        report = verification.verify_file(loaded, file) if file else verification.verify(loaded, sequence)
    except GitStoreError as e:
        raise click.ClickException(_damaged(e)) from None
    if report.ok:
        unchecked = sorted({f.sequence for f in report.unchecked if f.sequence is not None})
        git = (
            f"git (content of encrypted savepoint(s) {', '.join(map(str, unchecked))} not checked: only that the remote holds the committed ciphertext)"
            if unchecked
            else "git"
        )
        click.echo(
            f"✓ {len(report.checked)} savepoint(s) verified: snapshots, index, hash chain, {git}; chain: {report.chain}"
        )
        for finding in report.unchecked:
            click.echo(f"  not verified: {finding}")
        return
    click.echo(f"✗ first broken link: {report.findings[0]}")
    for finding in report.findings[1:]:
        click.echo(f"  also: {finding}")
    sys.exit(1)


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
    from precompact import restore_brief
    from precompact import resurrect as resurrection
    from precompact.gitstore import GitStoreError

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
        if uncompact:
            from precompact import uncompact as uncompaction

            written = uncompaction.uncompact(found)
            click.echo(
                f"wrote savepoint {found.savepoint.sequence}'s {written.entries} entries as a new session: {written.path}"
            )
            click.echo(f"resume it from {written.cwd} with:")
            click.echo(written.command)
            return
    except resurrection.ResurrectError as e:
        raise click.ClickException(str(e)) from None
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
    from precompact import atomic_file
    from precompact import resurrect as resurrection
    from precompact.gitstore import GitStoreError

    try:
        data = resurrection.export(_load(), instance, sequence)
    except resurrection.ResurrectError as e:
        raise click.ClickException(str(e)) from None
    except GitStoreError as e:
        raise click.ClickException(_damaged(e)) from None
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        atomic_file.write(output, data, 0o600)


@main.command()
@click.option("--keep", type=int, required=True, help="Keep the local copies of each instance's newest N savepoints.")
def prune(keep) -> None:
    """Remove the local copies of older savepoints that git holds, pushed and verified."""
    from precompact import prune as pruning

    try:
        outcome = pruning.prune(_load(), keep)
    except pruning.PruneError as e:
        raise click.ClickException(str(e)) from None
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
    from precompact import recall as recollection

    if query is None and not rebuild:
        raise click.UsageError("give a QUERY (or --rebuild)")
    loaded = _load()
    try:
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
    except recollection.RecallError as e:
        raise click.ClickException(str(e)) from None
    click.echo(found.text(budget))


@main.command()
@click.argument("ref")
@click.option("--instance", help="Whose savepoint (default: the configured instance).")
@click.option("--json", "as_json", is_flag=True, help="The entries as the snapshot holds them.")
def show(ref, instance, as_json) -> None:
    """Print saved entries whole: REF is SAVEPOINT:ENTRY or SAVEPOINT:FIRST-LAST (from recall)."""
    from precompact import recall as recollection

    loaded = _load()
    try:
        entries = recollection.show(loaded.logs, instance or loaded.instance, ref)
    except recollection.RecallError as e:
        raise click.ClickException(str(e)) from None
    click.echo(
        json.dumps([e.raw for e in entries], indent=2, ensure_ascii=False) if as_json else recollection.render(entries)
    )


@main.command()
def mcp() -> None:
    """Serve recall, show and savepoints to Claude Code as MCP tools (stdio)."""
    from precompact import mcp_server

    mcp_server.serve(_load())


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
    """Add the PreCompact, PostCompact and SessionStart hooks to Claude Code's settings.json."""
    from precompact import install as installer

    try:
        loaded = configuration.load(Path.cwd())
        root, sources = loaded.root, loaded.session_start_sources
    except configuration.UntrustedConfig as e:
        raise click.ClickException(str(e)) from None
    except ConfigError:
        root, sources = Path.cwd(), tuple(configuration.DEFAULT_SESSION_START_SOURCES)
    plugin = installer.enabled_plugin()
    if scope == "user" and plugin:
        raise click.ClickException(
            f"the {plugin} plugin is enabled in Claude Code and already runs these hooks in every project; nothing installed (to use settings.json instead, `claude plugin uninstall {plugin}` first)"
        )
    try:
        change = installer.plan_install(installer.settings_path(scope, root), installer.COMMAND, sources)
        server = installer.plan_mcp_server(installer.mcp_json_path(root), installer.COMMAND) if with_mcp else None
        if server is not None:
            change = installer.with_mcp_approval(change)
    except installer.InstallError as e:
        raise click.ClickException(str(e)) from None
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
        f"installed the PreCompact, PostCompact and SessionStart hooks in {change.path}",
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
    from precompact import install as installer

    try:
        change = installer.without_mcp(installer.plan_uninstall(installer.settings_path(scope, Path.cwd())))
        server = installer.plan_mcp_server_removal(installer.mcp_json_path(Path.cwd()))
    except installer.InstallError as e:
        raise click.ClickException(str(e)) from None
    if server.changed:
        _apply(server, dry_run, f"removed the MCP server `precompact mcp` from {server.path}", "")
    _apply(
        change,
        dry_run,
        f"removed precompact's hooks from {change.path}",
        f"no precompact hooks in {change.path}; nothing changed",
    )


def _apply(change, dry_run: bool, done: str, unchanged: str) -> None:
    from precompact import install as installer

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
    try:
        commit, files = api.rekey(loaded)
    except api.RekeyError as e:
        raise click.ClickException(str(e)) from None
    if commit is None:
        click.echo(f"{loaded.branch} is already encrypted to the {len(loaded.recipients)} recipient(s); nothing to do")
        return
    click.echo(
        f"re-encrypted {files} file(s) on {loaded.branch} to {len(loaded.recipients)} recipient(s) in commit {commit[:12]}, pushed to {loaded.remote}; earlier commits still hold the old copies"
    )


@main.group()
def key() -> None:
    """The age identity that reads encrypted savepoints: show, export, import."""


@key.command("show")
def key_show() -> None:
    """Print the identity's public key and the recipients savepoints are encrypted to."""
    from precompact import remote_crypto

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
    from precompact import remote_crypto

    loaded = _load()
    try:
        data = remote_crypto.read_identity_file(loaded.identity) if loaded.identity else b""
        remote_crypto.parse_identities(data, str(loaded.identity))
    except remote_crypto.CryptoError as e:
        raise click.ClickException(str(e)) from None
    click.echo(
        "warning: this is your secret key; move it only over a channel you trust, then delete the copy", err=True
    )
    click.echo(data.decode(), nl=False)


@key.command("import")
@click.argument("source", type=click.File("rb"))
def key_import(source) -> None:
    """Install the identity in SOURCE ('-': stdin) as this project's encryption.identity (0600)."""
    from precompact import remote_crypto

    loaded = _load()
    if loaded.identity is None:
        raise click.ClickException("encryption.identity is not set; set it to where the identity should go")
    try:
        own = remote_crypto.import_identity(source.read(), source.name, loaded.identity)
    except remote_crypto.CryptoError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"installed the age identity at {loaded.identity} ({', '.join(own) or 'an SSH key'}); back it up")


@main.command()
def hook() -> None:
    """Claude Code hook handler: reads the hook JSON on stdin. Always exits 0."""
    from precompact import hook as hook_handler

    hook_handler.run()
