"""`precompact`: a thin click layer over the library (config, layers). Every command keeps one
contract (docs/cli.md): with `--json`, stdout is one JSON document (its schema is in
docs/schemas/) and what a person reads goes to stderr; errors are JSON too; the exit codes below
mean the same for every command."""

from __future__ import annotations

import dataclasses
import json
import shlex
import sys
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING

import click

from precompact.boundary import quoting, terminal
from precompact.config import approval as config_trust
from precompact.config import review
from precompact.config import settings as configuration
from precompact.config.init_choices import InitChoices
from precompact.config.settings import ConfigError
from precompact.errors import NotVouched, PrecompactError, WrongValue
from precompact.local.savepoint_log import Layer2, Layer3
from precompact.ops.project_init import TURN_CHAIN_ON
from precompact.transcript import agents

if TYPE_CHECKING:
    from precompact.config.install import Program

EXIT_DONE = 0
EXIT_FAILED = 1  # a check failed, or an error whose message names the fix
EXIT_USAGE = 2  # click's own code for a wrong option or argument
EXIT_LAYER_PENDING = 3  # saved, but Layer 2 or 3 is queued (flush retries it) or off
EXIT_NOT_VERIFIED = 4  # nothing contradicts a root, but a layer asked for does not hold every savepoint checked
EXIT_NOTHING_NEW = 5  # `savepoint`: the session said nothing since its latest savepoint, so none was made
EXIT_CODES = f"""\b
Exit codes (the same for every command):
  {EXIT_DONE}  done
  {EXIT_FAILED}  failed: a check failed, or an error (its one line names the fix)
  {EXIT_USAGE}  usage: a wrong option or argument
  {EXIT_LAYER_PENDING}  saved, but not on every layer: Layer 2 or 3 is queued for
     `precompact flush` (savepoint, flush) or off in .precompact.toml (savepoint);
     a hook's save is queued, not written yet (resurrect)
  {EXIT_NOT_VERIFIED}  not verified: nothing failed, but a layer the configuration asks for
     does not hold every savepoint, or it could not be checked (verify, verify-bundle)
  {EXIT_NOTHING_NEW}  nothing new: the session said nothing since its latest savepoint, so
     none was made (savepoint; --force makes one)
With --json, stdout is one JSON document, errors included (docs/cli.md)."""
_JSON_KEY = "precompact.json"

# Commands import the rest of the library when they run: `precompact hook` is on Claude Code's
# critical path and must not pay for GitPython or the Solana stack it does not use.


def _load(instance: str | None = None) -> configuration.Config:
    """This project's configuration, as `instance` when given (--instance)."""
    if instance is not None and not instance.strip():
        raise click.UsageError('--instance is empty; give an instance name, e.g. "Gabriel #215"')
    loaded = configuration.load(Path.cwd())
    warning = configuration.insecure_cluster_warning(loaded)
    if warning:
        terminal.echo(warning, err=True)
    return loaded.replace(instance=instance) if instance else loaded


def _load_project(project: Path, instance: str | None) -> configuration.Config:
    """The configuration of the project at `project` (`show --project`): one the registry lists
    (a path merely trusted once, or forgotten, is not), approved by this user as every
    project's must be; as `instance` when given."""
    from precompact import api

    root = api.registered_project(project)
    if not root.is_dir():
        raise ConfigError(f"{root} is not a directory; `precompact projects` lists where each project is")
    loaded = configuration.load(root)
    return loaded.replace(instance=instance) if instance else loaded


def _json_asked() -> bool:
    context = click.get_current_context(silent=True)
    return bool(context and context.meta.get(_JSON_KEY))


def _checked_time(_ctx, _param, value: str | None) -> str | None:
    """An --at checked before the command looks for any savepoint (a wrong one exits 2)."""
    from precompact import api

    return None if value is None else api.checked_time(value)


def _say(text: str) -> None:
    """A line for a person: stdout, or stderr when stdout holds the JSON document."""
    terminal.echo(text, err=_json_asked())


def _emit(document: object) -> None:
    terminal.echo_json(json.dumps(document, indent=2, ensure_ascii=False))


def _json_option(what: str):
    return click.option("--json", "as_json", is_flag=True, help=f"{what} as JSON on stdout (docs/cli.md).")


_instance_option = click.option("--instance", help="Whose savepoints (default: the configured instance).")


class _Command(click.Command):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("epilog", EXIT_CODES)
        super().__init__(*args, **kwargs)


class _Commands(click.Group):
    command_class = _Command
    group_class = type  # subgroups (`key`) are _Commands too

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("epilog", EXIT_CODES)
        super().__init__(*args, **kwargs)

    def parse_args(self, ctx, args):
        # Known before any option is parsed, so that a usage error is JSON too when asked.
        given = args[: args.index("--")] if "--" in args else args
        if "--json" in given:
            ctx.meta[_JSON_KEY] = True
        return super().parse_args(ctx, args)

    def invoke(self, ctx):
        # Every failure the user can cause or fix is a PrecompactError: one line, exit 1, here
        # alone, whichever command met it; with --json, as a JSON document on stdout.
        try:
            return super().invoke(ctx)
        except WrongValue as e:
            # A usage error in one line (click's UsageError adds the usage and a hint).
            failure = click.ClickException(str(e))
            failure.exit_code = EXIT_USAGE
        except NotVouched as e:
            failure = click.ClickException(str(e))
            failure.exit_code = EXIT_NOT_VERIFIED
        except PrecompactError as e:
            failure = click.ClickException(str(e))
        except click.ClickException as e:
            failure = e
        if not ctx.meta.get(_JSON_KEY):
            # click prints the message itself (`Error: ...`): it carries outside text too.
            failure.message = terminal.sanitise(failure.message)
            raise failure
        _emit({"error": failure.format_message(), "exit_code": failure.exit_code})
        raise click.exceptions.Exit(failure.exit_code)


@click.group(cls=_Commands)
@click.version_option(package_name="precompact")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Save a Claude Code session before compaction, back it up in git, prove it on Solana."""
    if ctx.invoked_subcommand not in SELF_CONFINED:
        _confine_environment()


# They confine their environment themselves, by the same rules, and log what they refused in the
# project's logs/precompact-errors.log.
SELF_CONFINED = ("hook", "mcp")


def _confine_environment() -> None:
    """The environment a command runs in may be the agent's (the model runs the commands the
    brief names: `verify`, `recall`, `show`, `resurrect`...), which the project's files can set.
    So every command, as a hook does, drops PATH's entries that are relative or in the project
    (git is then looked up outside it) and refuses HOME and XDG_* values there (precompact's
    roots; a hook would not read them either); run inside an agent's session it also drops the
    variables no mode the agent starts honours (SSLKEYLOGFILE) and keeps only the PRECOMPACT_*
    variables a hook keeps. The project: the one the working directory is in
    (its configuration's directory and git work tree); outside every project, as for the MCP
    server there, none (relative values are still refused). What was refused is said in one line
    on stderr."""
    import os

    from precompact.boundary import user_roots
    from precompact.config import discovery

    try:
        found = discovery.discover(os.getcwd())
    except (OSError, ValueError):  # no working directory any more: no project to confine to
        found = None
    agent_started = configuration.in_agent_session(os.environ)
    refused = user_roots.confine(
        os.environ, [place for place in found or () if place is not None], agent_started=agent_started
    )
    if refused:
        terminal.echo(user_roots.refused_notice(refused), err=True)
    if agent_started:
        ignored = configuration.drop_agent_overrides(os.environ, Path(found[0]) if found else None)
        if ignored:
            terminal.echo(configuration.ignored_overrides_notice(ignored), err=True)


@main.command()
@click.option("--instance", help='Instance name, e.g. "Gabriel #215".')
@click.option("--repo", default=".", show_default=True, help="Git repository that receives the savepoint branch.")
@click.option("--remote", default=configuration.DEFAULT_REMOTE, show_default=True)
@click.option("--url", help="The one URL savepoints are pushed to (default: the remote's URL now).")
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
@click.option(
    "--force",
    is_flag=True,
    help="Change an existing .precompact.toml: only the settings named here change (all, if you have not approved it as it is).",
)
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
@_json_option("What was written and created (implies --yes)")
def init(
    instance,
    repo,
    remote,
    url,
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
    as_json,
) -> None:
    """Write .precompact.toml here, choose Layer 3's cluster (or off), create the signing key
    and the age identity if absent, keep logs out of git status."""
    from precompact import api

    root = Path.cwd()
    if chain and cluster:
        raise click.UsageError("give --chain or --cluster, not both")
    config = api.init_config_path(root, force)  # refused before any question when one exists
    if url is not None:
        configuration.check_git_url(url, "--url")
    yes = yes or as_json  # a prompt would land in the JSON document
    interactive = not yes and sys.stdin.isatty()
    # --force over an approved configuration changes only what the command line names.
    kept = configuration.approved_tables(root) if force else None
    if force and kept is None and config.exists():
        terminal.echo(
            f"warning: {config} is not approved as it is (or is not TOML), so none of its settings are kept; run `precompact trust` first to keep them",
            err=True,
        )
    context = click.get_current_context()
    named = frozenset(
        name for name in context.params if context.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE
    )
    kept_instance = kept.get("instance") if kept else None
    if instance is None:
        default = kept_instance if isinstance(kept_instance, str) else f"{root.name} #1"
        # Off a terminal a kept configuration keeps its instance; a new one is asked for.
        asked = not yes and (interactive or not isinstance(kept_instance, str))
        if asked and not interactive:
            # click's prompt would read the end of stdin and end in a bare "Aborted!".
            raise WrongValue(
                f"not at a terminal, so init cannot ask for the instance name: give --instance NAME (e.g. --instance {quoting.inline(default)}), or --yes for that one"
            )
        instance = click.prompt("Instance name", default=default) if asked else default
    cluster = cluster or (
        None if kept is not None and not named & {"chain", "cluster"} else _chain_choice(chain, interactive)
    )
    if airdrop and cluster is None:
        raise click.UsageError("--airdrop needs a cluster: give --chain devnet, local or a URL")
    if keypair is not None:
        terminal.echo(
            f"warning: signing with {keypair}; if it is a wallet that holds funds, precompact spends from it (rent and fees)",
            err=True,
        )
    if no_encrypt and (identity or recipients):
        raise click.UsageError("--no-encrypt takes no --identity or --recipient")
    choices = InitChoices(
        instance=instance,
        repository=repo,
        remote=remote,
        url=url,
        branch=branch,
        cluster=cluster,
        keypair=keypair,
        program_id=program_id,
        identity=identity,
        recipients=recipients,
        encrypt=not no_encrypt,
        airdrop=airdrop,
        force=force,
        say_chain_off=bool(chain) or (interactive and kept is None),
        kept=kept,
        named=named,
    )
    done = api.init_project(root, choices, _say, warn=lambda line: terminal.echo(line, err=True))
    if as_json:
        _emit(done)


def _chain_choice(given: str | None, interactive: bool) -> str | None:
    """The cluster for Layer 3 (None: off): as given, asked at a terminal, else the local cluster
    when it answers."""
    from precompact import api
    from precompact.ops import project_init

    if given is not None:
        chosen = api.chain_cluster(given)
        if given == "local" and not api.cluster_answers(configuration.DEFAULT_CLUSTER):
            terminal.echo(
                f"warning: no cluster answers at {configuration.DEFAULT_CLUSTER} yet: savepoints stay queued for Layer 3 until one does (`scripts/localnet` from a clone serves it), or `precompact init --force --chain off` turns the chain off",
                err=True,
            )
        return chosen
    if not interactive:
        if api.cluster_answers(configuration.DEFAULT_CLUSTER):
            _say(
                f"Layer 3 (the chain) is on: a Solana cluster answers at {configuration.DEFAULT_CLUSTER}, so savepoints are anchored there; `precompact init --force --chain off` turns it off"
            )
            return configuration.DEFAULT_CLUSTER
        _say(f"Layer 3 (the chain) is off: no cluster answers at {configuration.DEFAULT_CLUSTER}; {TURN_CHAIN_ON}")
        return None
    terminal.echo(project_init.CHAIN_QUESTION)
    while True:
        answer = click.prompt("Chain", default="off").strip()
        try:
            return api.chain_cluster(answer)
        except project_init.InitError as e:
            terminal.echo(str(e))


@main.command()
@click.option(
    "--repo",
    type=click.Path(file_okay=False, path_type=Path),
    help="Allow git.repository to be this repository, which is not the project's own.",
)
@click.option("--yes", is_flag=True, help="Approve without asking (for scripts): read the settings shown first.")
@_json_option("The settings approved (needs --yes)")
def trust(repo, yes, as_json) -> None:
    """Approve this project's .precompact.toml as it is now, after reading every setting it makes
    (or what changed since your last approval). Until then, and after any change to it,
    precompact does nothing in this project."""
    if as_json and not yes:
        raise click.UsageError("--json needs --yes: a prompt would land in the JSON document")
    root, worktree = configuration.discover(Path.cwd())
    path = root / configuration.CONFIG_NAME
    content = configuration.read_own(path)
    loaded = configuration.read_settings(root, content, environ={})
    allowed = str(repo.resolve()) if repo else None
    if allowed and allowed != str(loaded.repository.resolve()):
        raise ConfigError(
            f"git.repository in {path} is {loaded.repository}, not {repo}; pass --repo only for the repository the file names"
        )
    configuration.check_repository(loaded, worktree, allowed)
    from precompact import api

    api.refuse_shared_chain(loaded)
    settings = review.settings(loaded)
    before = config_trust.approval(path)
    previous = before.settings if before else {}
    shown = review.changes(previous, settings)
    sha = config_trust.digest(content)[:12]
    result = {"config": str(path), "sha256": config_trust.digest(content), "settings": shown, "approved": True}
    if before and previous and not shown and before.sha256 == config_trust.digest(content):
        _say(f"{path} (sha256:{sha}) is trusted as it is; nothing changed since you approved it")
        if as_json:
            _emit({**result, "approved": False})
        return
    if previous:
        _say(f"{path} (sha256:{sha}) changed since you approved it:" if shown else f"{path} (sha256:{sha}):")
    else:
        _say(f"{path} (sha256:{sha}) sets:")
    for line in shown or ["  (the same settings as you approved; the file's bytes differ)"]:
        _say(line)
    # After the settings, so that the user reads which key file is refused and where it resolves.
    configuration.check_keys(loaded, worktree)
    # What approving the file would make the user's (a new authority, a logs/ that came with it):
    # said first, counted against the keys the user already holds, never against the
    # chain.authority this file sets (a file naming the key its own logs/ is signed with would
    # vouch for itself).
    approved_authority = loaded.authority if previous.get("chain.authority") == settings["chain.authority"] else None
    said = {
        "authority": api.new_authority(loaded, approved_authority),
        "shipped": api.shipped_savepoints(loaded, approved_authority),
    }
    result.update(said)
    for note in said.values():
        if note:
            _say(note)
    if not yes:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise click.ClickException(
                "not at a terminal: read the settings above, then run `precompact trust --yes` to approve them"
            )
        if not click.confirm("Approve these settings?", default=False):
            raise click.ClickException(f"not approved; precompact still does nothing in {root}")
    config_trust.approve(path, content, Path(allowed) if allowed else None, settings)
    _say(f"trusted {path} (sha256:{sha})")
    # After approval: a new keypair leaves this machine's lines on the remote signed by the old one.
    resign = result["resign"] = api.resign_notice(loaded)
    if resign:
        _say(resign)
    if as_json:
        _emit(result)


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
@click.option("--force", is_flag=True, help="Make a savepoint even when the session said nothing since its last.")
@_instance_option
@_json_option("The savepoint and each layer's state")
def savepoint(transcript, session_id, no_transcript, trigger, force, instance, as_json) -> None:
    """Make a savepoint now: Layer 1, then Layers 2 and 3 as far as they can go (exit 3 when
    one of them is queued or off; 5, and no savepoint, when the session said nothing since its
    last)."""
    from precompact import api
    from precompact.local import savepoint_log

    if transcript is not None and no_transcript:
        raise click.UsageError("give --transcript or --no-transcript, not both")
    loaded = _load(instance)
    if transcript is None and not no_transcript:
        transcript, session_id = _session_transcript(session_id)
    try:
        made = api.save(
            loaded,
            session_id=session_id,
            transcript_path=transcript,
            cwd=str(Path.cwd()),
            trigger=trigger,
            skip_unchanged=not force,
        )
    except savepoint_log.LockTimeout as e:
        raise click.ClickException(f"savepoint not written: {e}") from None
    except OSError as e:
        raise click.ClickException(f"savepoint not written: {quoting.inline(str(e))}") from None
    if isinstance(made, savepoint_log.Savepoint):
        _say(
            f"nothing new since savepoint {made.sequence}: the session has said nothing since it, so no savepoint was made (`precompact savepoint --force` makes one anyway)"
        )
        if as_json:
            _emit({"instance": loaded.instance, "savepoint": None, "unchanged_since": made.sequence})
        sys.exit(EXIT_NOTHING_NEW)
    written, outcome = made
    _say(f"✓ Layer 1: savepoint {written.sequence} saved locally")
    _say(f"  Hash: sha256:{written.sha256}")
    _say(f"  Size: {written.size} bytes")
    _say(f"  Location: {quoting.path(written.path)}")
    layers = _report(loaded, outcome)
    if as_json:
        saved = {
            "sequence": written.sequence,
            "sha256": written.sha256,
            "size": written.size,
            "path": str(written.path),
        }
        _emit({"instance": loaded.instance, "savepoint": saved, **layers})
    # The savepoint is on every layer, or not: one that is off counts as not.
    sys.exit(EXIT_DONE if all(v["state"] == LAYER_DONE for v in layers.values()) else EXIT_LAYER_PENDING)


def _session_transcript(session_id: str | None) -> tuple[str, str]:
    """The transcript of the session run here: `session_id`'s, else the newest Claude Code kept
    for this directory. Fails with one line when there is none: a savepoint without a
    conversation restores nothing."""
    from precompact import api

    found = api.claude_code_transcripts(Path.cwd())
    if session_id is not None:
        found = [p for p in found if p.stem == session_id]
    if not found:
        whose = f"session {session_id}" if session_id else "any session"
        raise click.ClickException(
            f"no Claude Code transcript of {whose} run in {Path.cwd()}; give it with --transcript PATH (or --no-transcript)"
        )
    return str(found[-1]), session_id or found[-1].stem


@main.command(name="import")
@_instance_option
@_json_option("Each session's outcome and the counts")
@click.option("--agent", type=click.Choice(agents.NAMES), default="claude", show_default=True, help="Whose sessions.")
def import_sessions(instance, as_json, agent) -> None:
    """Archive this project's existing Claude Code (or Codex CLI, Gemini CLI) sessions, oldest
    first (one savepoint each; again, only what is new)."""
    from precompact import api
    from precompact.ops import importer

    loaded = _load(instance)

    def progress(number: int, total: int, result: importer.Imported) -> None:
        saved = f" as savepoint {result.sequence}" if result.outcome == importer.SAVED else ""
        why = f" ({quoting.inline(result.reason)})" if result.reason else ""
        terminal.echo(f"[{number}/{total}] {result.session_id}: {result.outcome}{saved}{why}", err=True)

    done = api.import_sessions(loaded, progress=progress, agent=agent)
    counts = {kind: sum(r.outcome == kind for r in done) for kind in importer.OUTCOMES}
    summary = (
        f"{len(done)} session(s) found: {counts[importer.SAVED]} saved, {counts[importer.UNCHANGED]} already archived, "
        f"{counts[importer.EMPTY]} without conversation, {counts[importer.FAILED]} failed"
    )
    if as_json:
        _emit({"sessions": [r.to_json() for r in done], "counts": counts})
    _say(summary)
    if counts[importer.FAILED]:
        sys.exit(EXIT_FAILED)


@main.command()
@_json_option("The checks")
def doctor(as_json) -> None:
    """Check what keeps sessions from being archived: one line per check with the fix; exit 1
    if any fails."""
    from precompact import api

    checks = api.doctor(Path.cwd())
    if as_json:
        _emit([c.to_json() for c in checks])
    else:
        for check in checks:
            terminal.echo(check.line())
    if not all(c.ok for c in checks):
        sys.exit(EXIT_FAILED)


@main.command()
@_instance_option
@click.option(
    "--drop-queued",
    "drop",
    metavar="ENTRY",
    multiple=True,
    help="First give up this entry of logs/precompact-queue/ that no writer will write (`precompact status` names each: a transcript changed since its hook, another version's), with the summaries bound to it (repeatable). One a writer can still write is refused (exit 1).",
)
@_json_option("Each layer's state")
def flush(instance, drop, as_json) -> None:
    """Retry everything queued: the savepoints hooks queued (the index busy), then commits,
    pushes and on-chain posts, in order (exit 3 while something is still queued)."""
    from precompact import api

    loaded = _load(instance)
    dropped = []
    for entry in drop:  # the user's, knowingly: before the queue is written, so none is taken twice
        for name in api.drop_queued(loaded, entry):
            _say(f"Layer 1: gave up queue entry logs/precompact-queue/{name}: no savepoint or summary is made of it")
            dropped.append(name)
    # First, as the worker does: the savepoints to flush include those only a queue entry holds.
    queue = api.write_queued(loaded)
    for note in queue.notes:
        terminal.echo(f"warning: {note}", err=True)
    outcome = api.flush(loaded)
    for notice in outcome.notices:
        terminal.echo(f"warning: {notice}", err=True)
    if queue.savepoints:
        _say(f"Layer 1: wrote {queue.savepoints} savepoint(s) hooks had queued for the background worker")
    still_queued = api.queued_notice(loaded)
    if still_queued:
        _say(f"… Layer 1: {still_queued}")
    layers = _report(loaded, outcome)
    if as_json:
        _emit(
            {
                "instance": loaded.instance,
                "queue": {"written": queue.savepoints, "left": queue.left, "problems": queue.notes, "dropped": dropped},
                **layers,
                "foreign_branch": outcome.foreign_branch,
                "unvouched": outcome.unvouched,
            }
        )
    # An entry that failed fails again until the user fixes what its line names; one the index
    # lock kept waiting is queued, as a push is.
    if outcome.foreign_branch or outcome.unvouched or queue.failed or layers["layer_3"]["state"] == LAYER_FAILED:
        sys.exit(EXIT_FAILED)
    if still_queued:
        sys.exit(EXIT_LAYER_PENDING)
    # Nothing left to retry, or not: a layer that is off has nothing to retry.
    pending = any(v["state"] in (LAYER_QUEUED, LAYER_WAITING) for v in layers.values())
    sys.exit(EXIT_LAYER_PENDING if pending else EXIT_DONE)


LAYER_DONE, LAYER_QUEUED, LAYER_OFF, LAYER_WAITING, LAYER_FAILED = "done", "queued", "off", "waiting", "failed"
# What a push that left no problem did, said beside a failed Layer 2 verdict (not a ✓).
PUSH_LEFT_NOTHING = "nothing left queued to push"


def _report(loaded: configuration.Config, outcome) -> dict:
    """Says where Layers 2 and 3 stand after a flush; the same as JSON."""
    from precompact.verifier import verdicts

    layers = {}
    for layer, enabled, problems in (
        (2, loaded.git_layer, outcome.layer_2_problems),
        (3, loaded.chain_layer, outcome.layer_3_problems),
    ):
        if not enabled:
            _say(f"- Layer {layer}: off in .precompact.toml")
            state, problem = LAYER_OFF, None
        elif outcome.waiting:
            _say(f"… Layer {layer}: {outcome.waiting}")
            state, problem = LAYER_WAITING, outcome.waiting
        elif problems:
            _say(f"… Layer {layer}: queued: {problems[0]}")
            state, problem = LAYER_QUEUED, problems[0]
        elif layer == 2 and (outcome.unvouched or outcome.foreign_branch):
            # Savepoints in logs/ that are not the user's, left unpushed, or pushed onto a branch
            # whose index is not this project's own: the layer's verdict is failed (exit 1), so
            # what the push did is said after it, never as a ✓ of its own.
            said = outcome.unvouched or outcome.foreign_branch
            _say(f"✗ Layer {layer}: {said}")
            _say(f"  (the push itself: {PUSH_LEFT_NOTHING})")
            state, problem = LAYER_FAILED, said
        elif layer == 3 and outcome.layer_3_read is not None and outcome.layer_3_read.status != verdicts.VERIFIED:
            # Nothing to post, and the record read now does not hold what the index says: the
            # verifier's verdict, as `verify` gives it.
            read = outcome.layer_3_read
            if read.status == verdicts.FAILED:
                _say(f"✗ Layer 3: {read.detail}")
                state = LAYER_FAILED
            else:
                _say(f"… Layer 3: {read.status}: {read.detail}")
                state = LAYER_QUEUED
            problem = read.detail
        else:
            read_now = f": {outcome.layer_3_read.detail}" if layer == 3 and outcome.layer_3_read is not None else ""
            _say(f"✓ Layer {layer}: up to date{read_now}")
            state, problem = LAYER_DONE, None
        layers[f"layer_{layer}"] = {"state": state, "problem": problem}
    return layers


@main.command()
@click.option("--instance", "only", help="Only this instance's savepoints (default: every instance in the index).")
@click.option(
    "--remote",
    "remote",
    is_flag=True,
    help="Every instance the git remote holds (teammates' too): its last savepoint and whether it verifies against its own key, which vouches only when it is yours or pinned with --signer. Read-only.",
)
@click.option(
    "--signer",
    "signers",
    metavar="PUBKEY",
    multiple=True,
    callback=lambda _ctx, _param, values: tuple(_pubkey_option(v, "--signer") for v in values),
    help="With --remote: a key you trust to have signed a teammate's savepoints (repeatable; default: yours only).",
)
@_json_option("The savepoints")
def status(only, remote, signers, as_json) -> None:
    """Savepoints with the state of each layer."""
    from precompact import api
    from precompact.edges import worker
    from precompact.verifier import verdicts

    if signers and not remote:
        raise click.UsageError(
            "--signer pins the key of a teammate's branch `status --remote` lists: give it with --remote"
        )
    loaded = _load(only)
    if remote:
        _remote_status(loaded, signers, as_json)
        return
    unrecorded = configuration.url_unrecorded_warning(loaded)
    if unrecorded:
        terminal.echo(unrecorded, err=True)
    savepoints, bad_lines = api.status(loaded)
    if only:
        savepoints = [s for s in savepoints if s.instance == only]
    retry = worker.next_retry(loaded.logs)
    retrying = f"retrying (next in {retry:.0f}s)" if retry is not None else None

    def shown(state: str) -> str:  # a failed layer the worker is about to retry is not FAILED yet
        return retrying if state in (Layer2.FAILED, Layer3.FAILED) and retrying else state

    # Pushed once, but the remote's branch as last read here no longer holds them (rewound).
    rewound = {(s.instance, s.sequence) for s in api.no_longer_on_remote(loaded, savepoints)}
    # Committed without the signature that lets the remote's copy verify on another machine.
    unsigned = api.not_signed(loaded, savepoints) if loaded.git_layer else {}
    # Compaction summaries recorded here that no flush has signed yet (its worker never ran).
    summaries_unsigned = api.summaries_not_signed(loaded, savepoints)

    # Savepoints no root vouches for: what logs/ says of their layers is not this machine's word.
    foreign, foreign_note = api.unvouched(loaded)

    def git_shown(s) -> str:
        if (s.instance, s.sequence) in foreign:
            return api.UNVOUCHED
        return shown(Layer2.FAILED if (s.instance, s.sequence) in rewound else api.layer_2_state(loaded, s))

    def chain_shown(s) -> str:
        return api.UNVOUCHED if (s.instance, s.sequence) in foreign else shown(api.layer_3_state(loaded, s))

    clear = api.in_clear(loaded, savepoints)
    waiting = api.layers_wait(loaded)
    queued = api.queued_notice(loaded)
    unreadable = api.unreadable_here_notice(loaded)
    # Said again at every status until fixed: a hook that failed said so only where the user
    # may not look (stderr of an exit-0 hook, the session's end).
    standing = api.standing_failures(loaded)
    open_logs = api.logs_open_notice(loaded)
    clock = api.clock_behind_notice(loaded)
    if as_json:
        rows = [
            {
                "instance": s.instance,
                "sequence": s.sequence,
                "timestamp": s.timestamp,
                # When its hook saw the conversation: `timestamp` is when it was written, later
                # for one written from its hook's queue entry (the chain's time, never going back).
                "saved_at": s.made_timestamp,
                "snapshot_hash": s.snapshot_hash,
                "snapshot_file": s.snapshot_file,
                "layer_1": s.layer_1_status,
                "layer_2": git_shown(s),
                "commit": s.commit,
                "layer_3": chain_shown(s),
                "chain_signature": s.chain_signature,
                "chain_endpoint": s.chain_endpoint,  # the RPC endpoint the confirmation rests on
                "in_clear_on_branch": s in clear if s.commit else None,
                "not_signed": unsigned.get((s.instance, s.sequence)),
                "summary_not_signed": summaries_unsigned.get((s.instance, s.sequence)),
                "compaction": api.compaction_mark(s),
                # Each retry of the same problem adds a line to the index: one is enough here.
                "failures": list(dict.fromkeys(str(f) for f in s.failures)),
            }
            for s in savepoints
        ]
        _emit(
            {
                "instance": loaded.instance,
                "savepoints": rows,
                "unparseable_index_lines": bad_lines,
                "lacking_from_logs": len(api.lacking(loaded).names),
                "unvouched": foreign_note,
                "layers_wait": waiting,
                "queued": queued,
                "unreadable_here": unreadable,
                "failures_logged": None
                if standing is None
                else {"count": standing.count, "newest": standing.newest, "fix": standing.fix()},
                "logs_open_to_others": open_logs,
                "clock_behind": clock,
            }
        )
        return
    if standing is not None:
        terminal.echo(f"{standing.said()}; fix: {standing.fix()}")
    for notice in (open_logs, clock):
        if notice:
            terminal.echo(notice)
    lacking = api.lacking_notice(loaded)
    if lacking:
        terminal.echo(lacking)
    if unreadable:
        terminal.echo(f"✗ {unreadable}")
    if queued:
        terminal.echo(queued)
    if waiting:
        terminal.echo(f"Layer 2 {waiting}")
    instances = list(dict.fromkeys([loaded.instance, *(s.instance for s in savepoints)]))
    for instance in instances:
        mine = [s for s in savepoints if s.instance == instance]
        current = " (this project's instance)" if instance == loaded.instance and len(instances) > 1 else ""
        terminal.echo(f"{quoting.name(instance)}: {len(mine)} savepoint(s){current}")
        for s in mine:
            commit = (s.commit or "-")[:10]
            compaction = f"  {made} compaction" if (made := api.compaction_mark(s)) else ""
            terminal.echo(
                f"  #{s.sequence:<4} {quoting.timestamp(s.made_timestamp)}  {s.snapshot_hash[:12]}  git {_words(git_shown(s)):<9} {commit:<10}  chain {_words(chain_shown(s))}{compaction}"
            )
            if s.written_later:
                terminal.echo(
                    f"        saved at its hook {quoting.timestamp(s.made_timestamp)}, written from its queue entry {quoting.timestamp(s.timestamp)}"
                )
            git = api.recorded_verdicts(loaded, s)[verdicts.GIT]
            if (s.instance, s.sequence) in rewound:
                terminal.echo(
                    f"        git: pushed to {loaded.remote} as commit {commit}, but its branch there, as last read, no longer holds it (rewound or deleted); `precompact flush` pushes it again"
                )
            elif git.status == verdicts.NOT_ON_REMOTE:  # not "git ✓": the commit exists here only
                terminal.echo(f"        git: {git.detail}")
            elif (s.layer_2 == Layer2.FAILED or chain_shown(s) == Layer3.FAILED) and s.failures:
                last = s.failures[-1]  # precompact's word for the layer, then what was said, quoted
                terminal.echo(f"        last problem ({last.layer}): {quoting.inline(last.reason)}")
            if (s.instance, s.sequence) in unsigned:
                terminal.echo(f"        signature: {unsigned[(s.instance, s.sequence)]}")
            if (s.instance, s.sequence) in summaries_unsigned:
                terminal.echo(f"        summary: {summaries_unsigned[(s.instance, s.sequence)]}")
        confirmed = api.chain_confirmations([s for s in mine if (s.instance, s.sequence) not in foreign])
        if confirmed:
            terminal.echo(f"  chain: {confirmed}")
    if foreign_note:
        terminal.echo(foreign_note)
    if clear:
        listed = ", ".join(f"{quoting.name(s.instance)} #{s.sequence}" for s in clear)
        advice = (
            "`precompact key rekey` encrypts the branch's copies; the clear ones stay in its history"
            if loaded.recipients
            else "set encryption.recipients (see `precompact init --help`) to encrypt new ones"
        )
        terminal.echo(
            f"in clear text on {api.savepoint_branch(loaded)} (and its remote once pushed): {listed}; {advice}"
        )
    if bad_lines:
        terminal.echo(
            f"warning: index lines {', '.join(map(str, bad_lines))} do not parse (run `precompact verify`)", err=True
        )
    for recreated in (s for s in savepoints if s.recreated):
        terminal.echo(f"warning: {api.recreated_notice(recreated)}", err=True)


def _remote_status(loaded: configuration.Config, signers: tuple[str, ...], as_json: bool) -> None:
    """`status --remote`: each instance the remote holds, as verifier/team.py judged it (a
    teammate's under your key or one of `signers`); exit EXIT_FAILED when one contradicts its own
    key or index, EXIT_NOT_VERIFIED when one is not verified (signed by a key you did not pin,
    encrypted to identities not here, unsigned), 0 only when every one is ✓."""
    from precompact import api
    from precompact.verifier import verdicts

    found = api.remote_instances(loaded, signers)
    if as_json:
        _emit(
            {
                "remote": loaded.remote,
                "instances": [
                    {
                        "branch": r.branch,
                        "commit": r.commit,
                        "instance": r.instance,
                        "this_project": r.yours,
                        "last_sequence": r.last.sequence if r.last else None,
                        "last_timestamp": r.last.timestamp if r.last else None,
                        "signer": r.signer,
                        "status": r.check.status,
                        "detail": r.check.detail,
                    }
                    for r in found
                ],
            }
        )
    else:
        if not found:
            terminal.echo(f"{loaded.remote} holds no savepoint branch")
        for r in found:
            mark = "✓" if r.check.status == verdicts.VERIFIED else "✗" if r.check.status == verdicts.FAILED else "–"
            name = (
                quoting.name(r.instance) if r.instance is not None else "(an instance whose index cannot be read here)"
            )
            last = f"#{r.last.sequence} {quoting.timestamp(r.last.timestamp)}" if r.last else "-"
            this = " (this project's instance)" if r.yours else ""
            terminal.echo(f"{mark} {name}{this}: branch {r.branch}, last savepoint {last}, commit {r.commit[:10]}")
            terminal.echo(f"    {r.check.status}: {r.check.detail}")
    if any(r.check.status == verdicts.FAILED for r in found):
        raise SystemExit(EXIT_FAILED)
    if any(r.check.status != verdicts.VERIFIED for r in found):
        raise SystemExit(EXIT_NOT_VERIFIED)


def _words(state: str) -> str:
    """A layer's state as a person reads it: "queued", not QUEUED_FOR_BLOCKCHAIN."""
    from precompact import api

    return {Layer3.QUEUED: "queued", api.CHAIN_OFF: "off", api.GIT_OFF: "off"}.get(state, state)


@main.command()
@click.option("--instance", help="Instance name (default: the configured one).")
@click.option("--address", help="Record address to read instead of deriving it.")
@_json_option("The record (bytes as lowercase hex) and its verdict")
def inspect(instance, address, as_json) -> None:
    """Decode the on-chain record, verify it against the configured authority, instance and
    program (exit 1 if it fails) and compare it with the local index."""
    from precompact import api
    from precompact.verifier import verdicts

    if instance and address:
        raise click.UsageError("give --instance or --address, not both")
    loaded = _load()
    if not loaded.chain_layer and address is None:
        off = f"Layer 3 (the chain) is off in .precompact.toml: no on-chain record to inspect; {TURN_CHAIN_ON}"
        if as_json:
            _emit({"layer_3": api.CHAIN_OFF, "detail": off})
        else:
            terminal.echo(off)
        return
    found = api.inspect(loaded, instance, address)
    held = found.record
    if as_json:
        _emit(api.record_json(found))
    else:
        rows = [
            ("address", found.address),
            ("header", f"magic {held.magic.hex()} version {held.version}"),
            ("authority", str(_pubkey(held.authority))),
            ("instance_id", held.instance_id.hex()),
            ("sequence", held.sequence),
            ("entry_type", f"{held.entry_type}: {held.lineage()}"),
            ("timestamp", f"{held.timestamp:d} ({_utc(held.timestamp)})"),
            ("snapshot_hash", f"sha256:{held.snapshot_hash.hex()}"),
            ("prev_snapshot_hash", f"sha256:{held.prev_snapshot_hash.hex()}"),
            ("git_commit", _word_or_quoted(held.commit)),
            ("slot", f"{held.slot} (unsigned: reported, not verified)"),
            ("chain_timestamp", f"{held.chain_timestamp} ({_utc(held.chain_timestamp)}) (unsigned)"),
            # Anyone who can answer for the RPC endpoint writes these: quoted, so no line of theirs
            # can pass for one of the verdict's below.
            ("metadata", f"{quoting.inline(held.metadata_text)} (unsigned)"),
            (
                "signature",
                "valid (the configured authority's ed25519 over the savepoint)" if found.signature_valid else "INVALID",
            ),
            (
                "verdict",
                # its detail names the RPC endpoint a verified record rests on
                f"{found.verdict.status if found.verdict.status != verdicts.FAILED else 'failed'}: "
                + quoting.single_line(found.verdict.detail),
            ),
            ("local index", found.local_index),
        ]
        for name, value in rows:
            terminal.echo(f"{name:>19}: {value}")
    if found.verdict.status == verdicts.FAILED:
        sys.exit(EXIT_FAILED)


def _word_or_quoted(text: str) -> str:
    """A record's text field as it is when it is one word of letters and digits (a commit's hex),
    else quoted on one line: the record is the RPC endpoint's word until verified."""
    return text if text.isascii() and text.isalnum() else quoting.inline(text)


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
# `--all` is the default spelled out (every savepoint of every instance), kept out of --help.
@click.option("--all", "check_all", is_flag=True, hidden=True)
@click.option("--sequence", type=click.IntRange(min=1), help="Only this savepoint (of --instance).")
@_instance_option
@click.option(
    "--ledger", is_flag=True, help="Also read the record's whole history: exactly savepoints 1..N, no other writer."
)
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_json_option("The verdict and every finding")
def verify(check_all, sequence, instance, ledger, file, as_json) -> None:
    """Check every savepoint (or one) across the three layers: ✓ and exit 0 only when every layer
    the configuration asks for holds every savepoint (git: the remote holds the commit); exit 1
    naming the first broken link; exit 4 naming what is not held or not checked."""
    from precompact import api
    from precompact.remote.gitstore import GitStoreError
    from precompact.verifier import verdicts

    if sum(bool(x) for x in (check_all, sequence is not None, file)) > 1:
        raise click.UsageError("give one of --all, --sequence N or FILE")
    if instance and sequence is None:
        raise click.UsageError("--instance picks whose --sequence N to check; without it every savepoint is checked")
    loaded = _load(instance)
    try:
        report = api.verify_file(loaded, file) if file else api.verify(loaded, sequence)
    except GitStoreError as e:
        raise click.ClickException(_damaged(e)) from None
    chain = report.chain if loaded.chain_layer else "off"
    verdict = report.verdict
    if verdict.status == verdicts.VERIFIED and report.nothing_held is not None:
        _say(f"✓ {verdict.detail}")
    elif verdict.status == verdicts.VERIFIED:
        git = f"git (held by {loaded.remote})" if loaded.git_layer else "git off"
        summaries = sum(verdicts.SUMMARY in layers for layers in report.layers.values())
        signed = f", {summaries} compaction summary(ies) signed by your key" if summaries else ""
        _say(
            f"✓ {len(report.checked)} savepoint(s) verified: snapshots, index, hash chain{signed}, {git}; chain: {chain}"
        )
    elif verdict.status == verdicts.FAILED:
        _say(f"✗ first broken link: {report.findings[0]}")
        for finding in report.findings[1:]:
            _say(f"  also: {finding}")
    else:
        short = [
            (instance, n, layer, check)
            for (instance, n), layers in report.layers.items()
            for layer, check in layers.items()
            if check.status not in (verdicts.VERIFIED, verdicts.OFF)
        ]
        savepoints = len({(instance, n) for instance, n, _, _ in short})
        said = [
            f"{quoting.name(instance)} savepoint {n} [{layer}]: {check.status} ({check.detail})"
            for instance, n, layer, check in short
        ]
        if report.lacking_said is not None:
            _say(f"✗ {report.lacking_said}")
            for finding in report.unvouched:
                if finding.sequence is None:
                    _say(f"  also: {finding}")
        if said:
            _say(f"✗ {savepoints} of {len(report.checked)} savepoint(s) not verified: {said[0]}")
        elif report.lacking_said is None:  # no savepoint checked, and not all the layers could be read
            _say(f"✗ not verified: {verdict.detail}")
        for line in said[1:]:
            _say(f"  also: {line}")
    # A savepoint no root vouches for (a logs/ that came with the project) is no history to hold the ledger to.
    ledgers = _ledger_verdicts(loaded, report.records) if ledger and not (report.ok and report.unvouched) else []
    verified = verdict.status == verdicts.VERIFIED and all(v["status"] == verdicts.VERIFIED for v in ledgers)
    if as_json:
        findings = {
            name: [dataclasses.asdict(f) for f in found]
            for name, found in (
                ("findings", report.findings),
                ("unvouched", report.unvouched),
                ("unchecked", report.unchecked),
            )
        }
        layers = [
            {
                "instance": instance,
                "sequence": n,
                "layers": {layer: {"status": c.status, "detail": c.detail} for layer, c in checks.items()},
            }
            for (instance, n), checks in report.layers.items()
        ]
        _emit(
            {
                "verified": verified,
                "verdict": {"status": verdict.status, "detail": verdict.detail},
                "checked": report.checked,
                "chain": chain,
                "savepoints": layers,
                **findings,
                "ledger": ledgers,
            }
        )
    if verdict.status == verdicts.FAILED or any(v["status"] == verdicts.FAILED for v in ledgers):
        sys.exit(EXIT_FAILED)
    if not verified:
        sys.exit(EXIT_NOT_VERIFIED)


def _ledger_verdicts(loaded: configuration.Config, records: dict[str, int]) -> list[dict]:
    """Each instance's ledger verdict (`precompact verify --ledger`), held to the records the
    same run read (`records`), said and returned."""
    from precompact import api
    from precompact.verifier import verdicts

    found = []
    for instance, verdict in api.ledgers(loaded, records):
        findings = [str(f) for f in verdict.findings]
        warnings = [str(w) for w in verdict.warnings]
        found.append(
            {
                "instance": instance,
                "status": verdict.status,
                "detail": verdict.detail,
                "findings": findings,
                "warnings": warnings,
            }
        )
        if verdict.status == verdicts.VERIFIED:
            _say(f"✓ ledger verified: {quoting.name(instance)}: {verdict.detail}")
        elif verdict.status == verdicts.OFF:
            _say(f"– ledger of {quoting.name(instance)} {verdict.detail}; {TURN_CHAIN_ON}")
        elif verdict.status == verdicts.NOT_VERIFIED:
            _say(f"✗ ledger not verified: {quoting.name(instance)}: {verdict.detail}")
        else:
            _say(f"✗ ledger: first broken link: {quoting.name(instance)} {findings[0]}")
            for finding in findings[1:]:
                _say(f"  also: {quoting.name(instance)} {finding}")
        for warning in warnings:
            _say(f"  warning: {quoting.name(instance)} {warning}")
    return found


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
    callback=_checked_time,
    help="The newest savepoint at or before this time (UTC unless a zone is given).",
)
@click.option(
    "--format",
    "output",
    type=click.Choice(["brief", "report", "json"]),
    default="report",
    show_default=True,
    help="The report, or the brief a compacted session is given, both parts (json: the same as --json).",
)
@click.option(
    "--restore-state", is_flag=True, help="Write the saved session-state file back (only if every check passes)."
)
@click.option("--uncompact", is_flag=True, help="The same as `precompact uncompact`.")
@click.option(
    "--signer",
    metavar="PUBKEY",
    callback=lambda _ctx, _param, value: _pubkey_option(value, "--signer"),
    help="With --from/--instance: the key you trust to have signed that instance's savepoints (default: yours only).",
)
@_json_option("The savepoint, its checks and what it holds")
def resurrect(instance, from_instance, sequence, at_time, output, restore_state, uncompact, signer, as_json) -> None:
    """Bring a savepoint back: read the chain, fetch from git, verify, and report (exit 1 if a check
    fails, 4 if no root vouches for it, 3 while a hook's save is queued, not written yet)."""
    from precompact import api

    if instance and from_instance:
        raise click.UsageError("give --instance or --from, not both")
    if signer and not (from_instance or instance):
        raise click.UsageError(
            "--signer pins the key of the instance --from NAME or --instance NAME reads: give it with one"
        )
    if uncompact and (from_instance or restore_state):
        raise click.UsageError("--uncompact writes a session only: give it without --from and --restore-state")
    if uncompact:
        _uncompact(instance, sequence, at_time, as_json)
        return
    found = _resurrected(
        _load(),
        instance or from_instance,
        sequence,
        at_time,
        restore_state,
        bool(from_instance),
        not as_json and output != "json",
        signer,
    )
    if as_json or output == "json":
        terminal.echo_json(api.render_resurrection(found, "json"))
    elif output == "brief":
        terminal.echo(api.compacted_brief(_load(), found))
    else:
        terminal.echo(api.render_resurrection(found, output))
    if not found.intact or found.left_out:  # left out: as `restore` exits when it walks past your tip's index
        sys.exit(EXIT_FAILED)
    if not found.verified:  # served because it was asked for by name, and saying so (NOT VERIFIED, `verified: false`)
        sys.exit(EXIT_NOT_VERIFIED)
    if found.queued:  # a later savepoint may be only a queue entry: `flush` writes it (NOT THE LATEST, `queued`)
        sys.exit(EXIT_LAYER_PENDING)


def _resurrected(
    loaded, instance, sequence, at_time, restore_state=False, record_lineage=False, say_lacking=True, signer=None
):
    """The savepoint chosen, fetched and checked; says when newer ones were passed over and
    (`say_lacking`: not for JSON, whose readers ask `status --json`) when logs/ lacks savepoints
    the remote holds."""
    from precompact import api
    from precompact.remote.gitstore import GitStoreError

    if sequence is not None and at_time:
        raise click.UsageError("give --sequence or --at, not both")
    try:
        found = api.resurrect(loaded, instance, sequence, at_time, restore_state, record_lineage, signer)
    except GitStoreError as e:
        raise click.ClickException(_damaged(e)) from None
    # After it, so that a failure stays one line.
    if found.left_out and say_lacking:
        terminal.echo(f"✗ {found.left_out}", err=True)
    lacking = api.lacking_notice(loaded) if say_lacking else None
    if lacking:
        terminal.echo(lacking, err=True)
    if sequence is None and at_time is None and found.later:
        terminal.echo(
            f"skipped the {found.later} newer savepoint(s) after {found.savepoint.sequence}: they hold no conversation",
            err=True,
        )
    return found


@main.command()
@_instance_option
@click.option("--sequence", type=click.IntRange(min=1), help="That savepoint instead of the newest.")
@click.option(
    "--at",
    "at_time",
    metavar="ISO-TIME",
    callback=_checked_time,
    help="The newest savepoint at or before this time (UTC unless a zone is given).",
)
@_json_option("The session written and the command that resumes it")
def uncompact(instance, sequence, at_time, as_json) -> None:
    """Write a verified savepoint's whole pre-compaction conversation as a new Claude Code
    session, and print the command that resumes it."""
    _uncompact(instance, sequence, at_time, as_json)


def _uncompact(instance, sequence, at_time, as_json) -> None:
    from precompact import api
    from precompact.remote.gitstore import GitStoreError

    if sequence is not None and at_time:
        raise click.UsageError("give --sequence or --at, not both")
    loaded = _load()
    try:
        found = api.to_uncompact(loaded, instance, sequence, at_time)
        written = api.uncompact(loaded, found)
    except GitStoreError as e:
        raise click.ClickException(_damaged(e)) from None
    # After it, so that a failure stays one line.
    lacking = None if as_json else api.lacking_notice(loaded)
    if lacking:
        terminal.echo(lacking, err=True)
    # "messages" counts as the resurrect report counts (user and assistant turns); the
    # session also holds the tool results and the rest of the transcript's entries.
    messages = written.messages
    if as_json:
        _emit(
            {
                "instance": found.instance,
                "sequence": found.savepoint.sequence,
                "messages": messages,
                "entries": written.entries,
                "session_id": written.session_id,
                "path": str(written.path),
                "cwd": written.cwd,
                "command": written.command,
            }
        )
        return
    terminal.echo(
        f"wrote savepoint {found.savepoint.sequence}'s conversation ({messages} messages, {written.entries} transcript entries) as a new session: {quoting.path(written.path)}"
    )
    terminal.echo(f"resume it from {quoting.path(written.cwd)} with:")
    terminal.echo(written.command)


@main.command()
@click.option("--instance", help="Whose savepoint (default: the configured instance).")
@click.option("--sequence", type=click.IntRange(min=1), help="That savepoint instead of the newest.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), help="Write it to this file, not stdout.")
@_json_option("With --output, the file written (without it, stdout is the document itself)")
def export(instance, sequence, output, as_json) -> None:
    """Write a savepoint's full snapshot document (JSON), rebuilt from its chunks and checked."""
    from precompact import api
    from precompact.remote.gitstore import GitStoreError

    try:
        data = api.export(_load(), instance, sequence)
    except GitStoreError as e:
        raise click.ClickException(_damaged(e)) from None
    _write(data, output, as_json, private=True)


def _write(data: bytes, output: Path | None, as_json: bool, private: bool) -> None:
    """A JSON document to stdout, or to `output` (then, with --json, what was written): only this
    user may read it when it is `private` (a snapshot's content), anyone may otherwise."""
    from precompact.boundary import atomic_file, private_file

    if output is None:
        terminal.echo_document(data)
        return
    if private:
        private_file.replace(output, data)
    else:
        atomic_file.write(output, data, 0o644)
    if as_json:
        _emit({"path": str(output), "bytes": len(data)})


@main.command()
@click.argument("sequence", type=click.IntRange(min=1))
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write it to this file, not stdout."
)
@click.option("--with-snapshot", is_flag=True, help="Embed the snapshot file, encrypted or not as the remote holds it.")
@_instance_option
@_json_option("With --output, the file written (without it, stdout is the bundle itself)")
def prove(sequence, output, with_snapshot, instance, as_json) -> None:
    """Write a proof bundle for savepoint N (docs/proof-bundle.md): JSON anyone can verify offline."""
    from precompact import api

    written = api.prove(_load(instance), sequence, with_snapshot)
    _write((json.dumps(written, indent=1) + "\n").encode(), output, as_json, private=False)


@main.command("verify-bundle")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--snapshot",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Check this snapshot file is savepoint N.",
)
@click.option("--cluster", metavar="URL", help="Also confirm each transaction is finalized in this cluster's ledger.")
@click.option(
    "--authority",
    metavar="PUBKEY",
    callback=lambda _ctx, _param, value: _pubkey_option(value, "--authority"),
    help="The key you trust to have signed it (in a project: its configured key, and the keys `key rotate` moved its lineage from, for the savepoints each signed).",
)
@click.option(
    "--program-id",
    metavar="ID",
    callback=lambda _ctx, _param, value: _pubkey_option(value, "--program-id"),
    help="The program you trust (in a project: its configured one; else the one this client was built for).",
)
@_json_option("The verdict")
def verify_bundle(file, snapshot, cluster, authority, program_id, as_json) -> None:
    """Check a proof bundle offline against the authority you pin; exit 1 naming the first broken
    link, 4 when it could not be checked (no authority pinned, the cluster unreachable, a
    transaction not finalized yet)."""
    from precompact import api
    from precompact.verifier import verdicts

    verdict = api.check_bundle(file, snapshot, cluster, authority, program_id, _project_roots(authority, program_id))
    if verdict.status == verdicts.VERIFIED:
        _say(f"✓ bundle verified: {verdict.detail}")
        for note in verdict.notes:
            _say(f"  not verified: {note}")
    elif verdict.status == verdicts.FAILED:
        where = f"savepoint {verdict.sequence}" if verdict.sequence is not None else "bundle"
        _say(f"✗ first broken link: {where} [{verdict.layer}]: {verdict.detail}")
    else:
        _say(f"✗ not verified: {verdict.detail}")
    if as_json:
        _emit(dataclasses.asdict(verdict))
    if verdict.status == verdicts.FAILED:
        sys.exit(EXIT_FAILED)
    if verdict.status != verdicts.VERIFIED:
        sys.exit(EXIT_NOT_VERIFIED)


@main.command()
@click.option("--keep", type=int, required=True, help="Keep the local copies of each instance's newest N savepoints.")
@_json_option("What was removed and what was kept")
def prune(keep, as_json) -> None:
    """Remove the local copies of older savepoints that git holds, pushed and verified."""
    from precompact import api

    outcome = api.prune(_load(), keep)
    _say(
        f"pruned {len(outcome.savepoints)} savepoint(s) and {outcome.chunks} chunk(s): {outcome.freed_bytes} bytes freed; `precompact resurrect --sequence N` restores one from git"
    )
    for why in outcome.kept:
        _say(f"  kept {why}")
    if as_json:
        pruned = [{"instance": instance, "sequence": sequence} for instance, sequence in outcome.savepoints]
        _emit({"pruned": pruned, "chunks": outcome.chunks, "freed_bytes": outcome.freed_bytes, "kept": outcome.kept})


@main.command()
@click.option(
    "--at",
    "at_commit",
    metavar="COMMIT",
    help="Read the savepoint branch's index at this commit of its history (one `restore` named), not at its tip.",
)
@_json_option("What was restored, what logs/ already held, and what was kept or left out")
def restore(at_commit, as_json) -> None:
    """Rebuild logs/ from the git remote: every savepoint on the savepoint branch is checked (its
    index line's signature by your signing key, its snapshot's hash, its chunks, the links
    between savepoints) before anything is written; any mismatch refuses the whole restore."""
    from precompact import api
    from precompact.local import savepoint_log

    loaded = _load()
    step = 0

    def progress(done: int, total: int) -> None:
        nonlocal step
        if done == total or done * 10 // total > step:
            step = done * 10 // total
            terminal.echo(f"checked {done}/{total} savepoint(s)", err=True)

    found = api.restore(loaded, progress, at_commit)
    if as_json:
        _emit(
            {
                "restored": [{"instance": s.instance, "sequence": s.sequence} for s in found.restored],
                "present": found.present,
                "differing": found.differing,
                "unvouched": found.unvouched,
                "unlinked": found.unlinked,
                "altered": found.altered,
                "foreign": found.foreign,
                "walked": found.walked,
                "chunks": found.chunks,
                "summaries": found.summaries,
                "summaries_failed": found.summaries_failed,
                "summaries_unsigned": found.summaries_unsigned,
                "summaries_kept": found.summaries_kept,
                "signer": found.signer,
                "commit": found.commit,
                "complete": found.complete,
            }
        )
    else:
        terminal.echo(
            f"restored {len(found.restored)} savepoint(s) and {found.chunks} chunk(s) from {loaded.remote}/{found.branch} at {found.commit[:12]}, each checked against the signature of {found.signer} (or this machine's record); {found.present} were in logs/ already"
        )
        if found.differing:
            terminal.echo(
                f"✗ kept {len(found.differing)} savepoint(s) logs/ holds with other content than the remote's (not overwritten): {', '.join(found.differing)}; {savepoint_log.TWO_CHAINS_FIX}"
            )
        if found.unvouched:
            terminal.echo(
                f"✗ left out {len(found.unvouched)} savepoint(s) no root vouches for (not signed by {found.signer}): {', '.join(found.unvouched)}"
            )
        if found.unlinked:
            terminal.echo(
                f"✗ left out {len(found.unlinked)} savepoint(s) after a gap in the index at {found.commit[:12]}, whose link back was never checked: {', '.join(found.unlinked)}; a line was deleted from its middle: `precompact restore --at COMMIT` reads the index at a commit of its history from before"
            )
        if found.altered:
            terminal.echo(
                f"✗ the branch holds {len(found.altered)} snapshot(s) altered after they were pushed: {', '.join(found.altered)}"
            )
        if found.foreign:
            terminal.echo(f"✗ {found.foreign}; {found.walked}")
        if found.summaries:
            terminal.echo(
                f"restored {found.summaries} compaction summary(ies), each bound to its savepoint by the signature of {found.signer}"
            )
        if found.summaries_failed:
            terminal.echo(
                f"✗ FAILED {len(found.summaries_failed)} compaction summary(ies) on the remote, not restored: {', '.join(found.summaries_failed)}"
            )
        if found.summaries_unsigned:
            terminal.echo(
                f"not restored: {len(found.summaries_unsigned)} compaction summary(ies) on the remote carry no signature (recorded by a version before summaries were signed): {', '.join(found.summaries_unsigned)}"
            )
        if found.summaries_kept:
            terminal.echo(
                f"kept {len(found.summaries_kept)} compaction summary(ies) logs/ holds that differ from the remote's signed one: {', '.join(found.summaries_kept)}"
            )
    if not found.complete:
        sys.exit(EXIT_FAILED)


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
@click.option("--agent", type=click.Choice(agents.NAMES), help="Only the sessions of this agent.")
@click.option("--rebuild", is_flag=True, help="Rebuild the index from the snapshots first.")
@click.option(
    "--everywhere",
    is_flag=True,
    help="Search every project this machine archived (`precompact projects`), one ranking; the default outside a project.",
)
@click.option(
    "--from",
    "from_instance",
    metavar="NAME",
    help="Search a teammate's savepoints on the git remote (their instance NAME), checked against their own key, which must be yours or pinned with --signer; they must be encrypted to you.",
)
@click.option(
    "--signer",
    metavar="PUBKEY",
    callback=lambda _ctx, _param, value: _pubkey_option(value, "--signer"),
    help="With --from: the key you trust to have signed that instance's savepoints (default: yours only).",
)
@_instance_option
@_json_option("Every hit (the budget bounds the text form only)")
def recall(
    query, budget, sequence, since, role, tool, agent, rebuild, everywhere, from_instance, signer, instance, as_json
) -> None:
    """Search the conversation the savepoints hold (BM25), printing excerpts with references
    that `precompact show` prints whole. Outside a project, or with --everywhere, every project
    this machine archived; with --from, a teammate's savepoints on the remote."""
    from precompact import api

    if query is None and not rebuild:
        raise click.UsageError("give a QUERY (or --rebuild)")
    if signer and from_instance is None:
        raise click.UsageError("--signer pins the key of the instance --from NAME reads: give it with --from")
    if from_instance is not None:
        for given, option in (
            (everywhere or None, "--everywhere"),
            (rebuild or None, "--rebuild"),
            (instance, "--instance"),
        ):
            if given is not None:
                raise click.UsageError(
                    f"give {option} or --from, not both: --from searches a teammate's savepoints alone"
                )
        pins = () if signer is None else (signer,)
        found = api.recall_from(_load(), from_instance, query, sequence, since, role, tool, agent=agent, signers=pins)
        _recalled(query, found, None, budget, as_json)
        return
    if everywhere or not _in_a_project():
        for given, option in ((sequence, "--savepoint"), (rebuild or None, "--rebuild"), (instance, "--instance")):
            if given is not None:
                raise click.UsageError(
                    f"{option} names one project's savepoints; run it in that project without --everywhere"
                )
        _recall_everywhere(query, budget, since, role, tool, agent, as_json)
        return
    loaded = _load(instance)
    rebuilt = None
    if rebuild:
        outcome = api.update_recall(loaded, rebuild=True)
        for note in outcome.notes:
            terminal.echo(note, err=True)
        bookkeeping, words = api.recall_index_paths(loaded)
        terminal.echo(f"rebuilt {bookkeeping} and {words}: {len(outcome.indexed)} savepoint(s) indexed", err=True)
        rebuilt = {"indexed": outcome.indexed, "notes": outcome.notes}
    if query is None:
        if as_json:
            _emit({"query": None, "matched": 0, "hits": [], "notes": [], "rebuilt": rebuilt})
        return
    found = api.recall(loaded, query, sequence, since, role, tool, agent=agent)
    lacking = api.lacking_notice(loaded)
    if lacking:
        found.notes.append(lacking)
    _recalled(query, found, rebuilt, budget, as_json)


def _recalled(query, found, rebuilt, budget, as_json) -> None:
    if as_json:
        hits = [{"ref": hit.ref, **dataclasses.asdict(hit)} for hit in found.hits]
        _emit({"query": query, "matched": found.matched, "hits": hits, "notes": found.notes, "rebuilt": rebuilt})
    else:
        terminal.echo(found.text(budget))


def _project_roots(authority: str | None, program_id: str | None) -> configuration.Config | None:
    """The project's configuration, whose key and program pin what the options left open; None
    outside a project or in one not approved here (a configuration nobody approved pins nothing:
    the verdict then names the key to pass)."""
    if authority is not None and program_id is not None:
        return None
    try:
        return configuration.load(Path.cwd())
    except ConfigError:
        return None


def _pubkey_option(value: str | None, name: str) -> str | None:
    if value is not None and not configuration.is_pubkey(value):
        raise click.BadParameter(f"{value!r} is not a base58 public key", param_hint=name)
    return value


def _in_a_project() -> bool:
    """Whether the current directory is in a project (a .precompact.toml at or above it, within
    its git work tree), trusted or not: only outside every project does recall search them all."""
    try:
        configuration.find_root(Path.cwd())
    except ConfigError:
        return False
    return True


def _recall_everywhere(query, budget, since, role, tool, agent, as_json) -> None:
    from precompact import api

    searched = api.recall_everywhere(query, since, role, tool, agent)
    found = searched.results
    if as_json:
        hits = [{"ref": hit.ref, **dataclasses.asdict(hit)} for hit in found.hits]
        _emit(
            {
                "query": query,
                "matched": found.matched,
                "hits": hits,
                "notes": found.notes,
                "rebuilt": None,
                "projects": searched.projects,
                "bound": searched.bound,
            }
        )
    else:
        terminal.echo(found.text(budget))


@main.command()
@click.argument("ref")
@click.option("--instance", help="Whose savepoint (default: the configured instance).")
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    help="The project the savepoint is in, when recall --everywhere named another one (one `precompact projects` lists).",
)
@click.option(
    "--budget",
    type=click.IntRange(1_000, 50_000),  # recall.fulltext.SHOW_BUDGET_BOUNDS (the CLI loads no recall to start)
    help="At most this many characters (the MCP tool's way); a cut entry names the REF@OFFSET that continues. Default: whole.",
)
@_json_option("The entries as the snapshot holds them")
def show(ref, instance, project, budget, as_json) -> None:
    """Print saved entries whole: REF is SAVEPOINT:ENTRY or SAVEPOINT:FIRST-LAST (from recall),
    either with @OFFSET to start at that character of the first entry."""
    from precompact import api

    if as_json and (budget is not None or "@" in ref):
        raise click.UsageError("--json prints the entries whole, as saved: give it without --budget or @OFFSET")
    loaded = _load(instance) if project is None else _load_project(project, instance)
    shown = api.show(loaded, ref)
    if as_json:
        _emit([e.raw for e in shown])
        return
    # A block at a time: a range of big entries is never held whole.
    for number, block in enumerate(api.render(shown, budget)):
        if number:
            terminal.echo("")
        terminal.echo(block)


@main.command()
@click.option(
    "--forget",
    type=click.Path(path_type=Path),
    metavar="PATH",
    help="Remove this project from the registry, and with it every copy of its words precompact keeps outside it.",
)
@click.option(
    "--rescan",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    metavar="DIR",
    help="Register every project under DIR whose logs/ holds a savepoint this machine wrote (rebuilds a damaged registry).",
)
@click.option(
    "--url",
    metavar="URL",
    help="With --forget: the remote to ask whether it holds the project's savepoints (default: its approved git.url).",
)
@click.option(
    "--add",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    metavar="PATH",
    help="Register the project at PATH again, one you forgot too (its savepoints no longer register a forgotten project).",
)
@_json_option("The projects")
def projects(forget, rescan, url, add, as_json) -> None:
    """List the projects this machine archived (registered on `init` and on each savepoint): path,
    instances, savepoints, the last one's time, and whether the project is still there. A
    forgotten project stays out until `init` or `--add` there."""
    from precompact import api

    forgotten = rescanned = removed = kept = added = None
    if url is not None and forget is None:
        raise WrongValue("--url goes with --forget PATH: it names the remote asked before the project is forgotten")
    if forget is not None:
        gone = api.forget_project(forget, url)
        forgotten = str(gone.project.path)
        removed = [str(store) for store in gone.removed]
        kept = [{"git_directory": str(store), "used_by": str(other)} for store, other in gone.kept]
        _say(
            f"forgot {quoting.path(forgotten)}{' again' if gone.again else ''}: it is no longer listed or searched by recall "
            "--everywhere, and its savepoints do not register it again; its hooks keep saving in its logs/, and "
            "Layer 2 (its git directory here, its pushes) waits until `precompact projects --add PATH`; meanwhile "
            "its savepoints keep nothing here (a Codex, Gemini or OpenCode session's document lasts its savepoint only)"
        )
        for store in gone.removed:
            _say(f"removed its git directory {store}")
        for store, other in gone.kept:
            _say(f"kept its git directory {store}: {other} uses it too")
    if add is not None:
        added = str(api.add_project(add))
        _say(f"registered {added}: listed and searched by recall --everywhere")
    if rescan is not None:
        rescanned = [str(p.path) for p in api.rescan_projects(rescan)]
        _say(f"registered {len(rescanned)} project(s) under {rescan}")
    listed = api.projects()
    if as_json:
        _emit(
            {
                "registry": str(api.registry_path()),
                "projects": [
                    {
                        "path": str(p.path),
                        "instances": list(p.instances),
                        "registered": p.registered,
                        "present": p.present,
                        "savepoints": p.savepoints,
                        "last_savepoint": p.last_savepoint,
                        "problem": p.reason,
                    }
                    for p in listed
                ],
                "forgotten": forgotten,
                "removed_git_directories": removed,
                "kept_git_directories": kept,
                "rescanned": rescanned,
                "added": added,
            }
        )
        return
    if not listed:
        terminal.echo(f"no project registered yet: {api.none_registered_fix()}")
    for p in listed:
        names = ", ".join(quoting.inline(i) for i in p.instances)
        if not p.present:
            state = f"✗ not there any more (moved or deleted); `precompact projects --forget {shlex.quote(str(p.path))}` removes it"
        elif p.reason is not None:
            state = f"✗ its index cannot be read: {quoting.inline(p.reason)}"
        else:
            state = f"{p.savepoints} savepoint(s), last {quoting.timestamp(p.last_savepoint) if p.last_savepoint else 'never'}"
        terminal.echo(f"{quoting.path(p.path)}  {names}  {state}")


@main.command()
@click.argument("sequence", type=click.IntRange(min=1), required=False)
@click.option("--instance", help="Whose savepoint (default: the configured instance).")
@_json_option("The facts, each with its entry reference")
def dropped(sequence, instance, as_json) -> None:
    """List what compaction dropped from savepoint N (default: the newest): requests, constraints,
    files, commands, errors and identifiers its history holds and the compaction summary does
    not, each with the reference `precompact show` takes (docs/viewer.md says how it matches)."""
    from precompact import api

    report = api.dropped(_load(), instance, sequence)
    if report.copy_note:
        terminal.echo(f"note: {report.copy_note}", err=True)
    if as_json:
        _emit(report.to_json())
    else:
        terminal.echo(api.render_dropped(report))


@main.command()
@click.option("--no-open", is_flag=True, help="Print the address only; do not open a browser.")
@click.option(
    "--everywhere",
    is_flag=True,
    help="The home page of every project this machine archived, with one search over them all (the default outside a project).",
)
def view(no_open, everywhere) -> None:
    """Serve a read-only page of this project's sessions, savepoints, proofs and what compaction
    dropped, on 127.0.0.1 behind a secret address it prints; Ctrl-C stops it. Outside a project
    (or with --everywhere), this machine's projects and one search over all of them."""
    from precompact.viewer import serve

    loaded = None if everywhere or not _in_a_project() else _load()
    serve.serve(loaded, open_browser=not no_open, announce=lambda line: terminal.echo(line, err=True))


@main.command()
def mcp() -> None:
    """Serve recall, show and savepoints of this project to Claude Code as MCP tools (stdio),
    never another project's. Outside every project, a recall that says how you search every
    project in your own shell; in a project whose configuration is not trusted (or damaged), or
    outside every project on a machine that has archived none, no tools, but never a failed
    server."""
    import os

    from precompact import api
    from precompact.boundary import user_roots

    loaded, idle = None, False
    if _in_a_project():
        root, worktree = configuration.discover(Path.cwd())
        # The agent starts the server in its environment, with .mcp.json's `env`: the project's
        # to set, as a hook's is, so the same roots are confined and the same overrides ignored.
        refused = user_roots.confine(os.environ, [str(root), *([str(worktree)] if worktree else [])])
        ignored = configuration.drop_agent_overrides(os.environ, root)
        try:
            loaded = configuration.load(Path.cwd())
        except ConfigError:
            idle = True
        if loaded is not None:
            if refused:
                api.log_hook_notice(root, "mcp", user_roots.refused_notice(refused))
            if ignored:
                api.log_hook_notice(root, "mcp", configuration.ignored_overrides_notice(ignored))
    else:
        user_roots.confine(os.environ, [])
        configuration.drop_agent_overrides(os.environ, None)
        idle = not api.registry_path().exists()
    if idle:
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
    help="project: <project>/.claude/settings.json; user: ~/.claude/settings.json, or $CLAUDE_CONFIG_DIR/settings.json (works in subdirectories too).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print each file it would write (its path, then its new JSON) instead of writing it.",
)
@click.option(
    "--mcp",
    "with_mcp",
    is_flag=True,
    help="Also register `precompact mcp` (recall, show, savepoints): in the project's .mcp.json, or with --scope user in ~/.claude.json; its tools are allowed in the settings file.",
)
@click.option(
    "--agent",
    type=click.Choice(agents.NAMES),
    default="claude",
    show_default=True,
    help="Whose hooks: Claude Code (.claude/settings.json), Codex CLI (.codex/hooks.json), Gemini CLI (.gemini/settings.json), OpenCode (precompact's plugin in .opencode/plugin/).",
)
def install(scope, dry_run, with_mcp, agent) -> None:
    """Add precompact's hooks (PreCompact, PostCompact, SessionStart, SessionEnd, UserPromptSubmit, PostToolUse, or the agent's own) to the agent's hook file.
    They run this precompact by its absolute path, whatever PATH the agent has; run it again after moving precompact."""
    from precompact.boundary import user_roots
    from precompact.config import agent_settings
    from precompact.config import install as installer

    program = installer.program()
    entry = program.entry
    if agent != "claude":
        _install_agent(agent, scope, dry_run, with_mcp, program)
        return

    try:
        loaded = configuration.load(Path.cwd())
        root, sources = loaded.root, loaded.session_start_sources
    except configuration.UntrustedConfig:
        raise  # installing hooks for a configuration not approved would make them run it
    except ConfigError:
        root, sources = Path.cwd(), tuple(configuration.DEFAULT_SESSION_START_SOURCES)
    try:
        plugin = agent_settings.enabled_plugin()
    except user_roots.ClaudeFolderUnknown:
        if scope == "user":
            raise  # hooks written to ~/.claude would never run: one line naming the fix, exit 1
        plugin = None  # the project's file is known; which plugins the user's enables is not (no note)
    if scope == "user" and plugin:
        raise click.ClickException(
            f"the {plugin} plugin is enabled in Claude Code and already runs these hooks in every project; nothing installed (to use settings.json instead, `claude plugin uninstall {plugin}` first)"
        )
    change = installer.plan_install(agent_settings.settings_path(scope, root), program, sources, scope)
    server = installer.plan_mcp_server(installer.mcp_path(scope, root), program) if with_mcp else None
    if server is not None:
        change = installer.with_mcp_approval(change, project_server=scope == "project")
    # Both files or neither: each is checked before the first is written, and what was written
    # is settled with git even when the next write fails.
    for planned in (server, change):
        if planned is not None and not dry_run:
            installer.check_writable(planned)
    written: list[Path] = []
    try:
        if server is not None:
            _apply(
                server,
                dry_run,
                f"registered the MCP server `{program.shell('mcp')}` in {quoting.path(server.path)}",
                f"MCP server already registered in {quoting.path(server.path)}",
            )
            written.append(server.path)
        _apply(
            change,
            dry_run,
            f"installed the PreCompact, PostCompact, SessionStart, SessionEnd, UserPromptSubmit and PostToolUse hooks in {quoting.path(change.path)}, running {entry}",
            f"already installed in {quoting.path(change.path)}; nothing changed",
        )
        written.append(change.path)
    finally:
        if scope == "project" and not dry_run and written:
            _settle_in_git(root, written)
    if scope == "project" and not dry_run:
        terminal.echo(installer.PROJECT_SCOPE_ADVICE.format(root=quoting.path(root)))
        if plugin:
            terminal.echo(
                f"note: the {plugin} plugin's hooks stand down where these run, so a compaction is saved once"
            )


def _install_opencode(scope: str, dry_run: bool, with_mcp: bool, program: Program, root: Path) -> None:
    """`install --agent opencode`: precompact's plugin, one file OpenCode loads (docs/agents.md)."""
    from precompact.config import install as installer

    entry = program.entry
    change = installer.plan_opencode_install(installer.opencode_plugin_path(scope, root), program)
    _apply(
        change,
        dry_run,
        f"installed precompact's OpenCode plugin at {quoting.path(change.path)}, running {entry}",
        f"already installed at {quoting.path(change.path)}; nothing changed",
    )
    if dry_run:
        return
    if scope == "project":
        _settle_in_git(root, [change.path])
    if with_mcp:
        terminal.echo(
            "to give OpenCode precompact's recall, show and savepoints tools, add to its opencode.json: "
            + json.dumps({"mcp": {"precompact": {"type": "local", "command": program.argv("mcp")}}})
        )


def _install_agent(agent: str, scope: str, dry_run: bool, with_mcp: bool, program: Program) -> None:
    """`install --agent codex|gemini`: the hooks in that agent's own file (docs/agents.md)."""
    from precompact.config import install as installer

    try:
        loaded = configuration.load(Path.cwd())
        root, sources = loaded.root, loaded.session_start_sources
    except configuration.UntrustedConfig:
        raise
    except ConfigError:
        root, sources = Path.cwd(), tuple(configuration.DEFAULT_SESSION_START_SOURCES)
    if agent == "opencode":
        _install_opencode(scope, dry_run, with_mcp, program, root)
        return
    entry = program.entry
    change = installer.plan_install(installer.hooks_path(agent, scope, root), program, sources, scope, agent)
    _apply(
        change,
        dry_run,
        f"installed precompact's hooks in {quoting.path(change.path)}, running {entry}",
        f"already installed in {quoting.path(change.path)}; nothing changed",
    )
    if dry_run:
        return
    if scope == "project":
        _settle_in_git(root, [change.path])
    if agent == "codex":
        terminal.echo(
            "note: Codex runs hooks only once they are trusted: review them with /hooks in codex (or run codex exec --dangerously-bypass-hook-trust)"
        )
    if with_mcp:
        command = program.shell("mcp")
        add = f"codex mcp add precompact -- {command}" if agent == "codex" else f"gemini mcp add precompact {command}"
        terminal.echo(f"to give {agent} precompact's recall, show and savepoints tools, run: {add}")


@main.command()
@click.option("--scope", type=click.Choice(["project", "user"]), default="project", show_default=True)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print each file it would write (its path, then its new JSON) instead of writing it.",
)
@click.option("--agent", type=click.Choice(agents.NAMES), default="claude", show_default=True)
def uninstall(scope, dry_run, agent) -> None:
    """Remove precompact's hooks and MCP server (and only those) from the agent's hook file
    (and, for Claude Code, the MCP server from the project's .mcp.json, or with --scope user from ~/.claude.json)."""
    from precompact.config import agent_settings
    from precompact.config import install as installer

    if agent == "opencode":
        plugin = installer.plan_opencode_uninstall(installer.opencode_plugin_path(scope, Path.cwd()))
        _apply(
            plugin,
            dry_run,
            f"removed precompact's OpenCode plugin {quoting.path(plugin.path)}",
            f"no precompact plugin at {quoting.path(plugin.path)}; nothing changed",
        )
        return
    if agent != "claude":
        change = installer.plan_uninstall(installer.hooks_path(agent, scope, Path.cwd()))
        _apply(
            change,
            dry_run,
            f"removed precompact's hooks from {quoting.path(change.path)}",
            f"no precompact hooks in {quoting.path(change.path)}; nothing changed",
        )
        return

    change = installer.without_mcp(installer.plan_uninstall(agent_settings.settings_path(scope, Path.cwd())))
    server = installer.plan_mcp_server_removal(installer.mcp_path(scope, Path.cwd()))
    for planned in (server, change):
        if not dry_run:
            installer.check_writable(planned)
    if server.changed:
        _apply(server, dry_run, f"removed the MCP server `precompact mcp` from {quoting.path(server.path)}", "")
    _apply(
        change,
        dry_run,
        f"removed precompact's hooks from {quoting.path(change.path)}",
        f"no precompact hooks in {quoting.path(change.path)}; nothing changed",
    )


def _settle_in_git(root: Path, written: list[Path]) -> None:
    """What `install` wrote in the project, settled with git: this user's files kept out of git
    status (checked), a shared one that git does not know yet named once (commit or exclude)."""
    from precompact.boundary import git_exclude
    from precompact.config import install as installer

    relative = [str(path.relative_to(root)) for path in written]
    own = tuple(git_exclude.Kept(path, path) for path in relative if path in installer.PER_USER)
    kept = git_exclude.keep_out(root, own) if own else None
    if kept and kept.problem:
        terminal.echo(
            f"warning: {kept.problem}; keep {' and '.join(k.pattern for k in own)} out of your commits", err=True
        )
    elif kept and kept.added and not kept.shown:
        terminal.echo(
            f"added {' and '.join(kept.added)} to {quoting.path(kept.exclude_file)}: git status no longer shows it (checked)"
        )
    for shown in kept.shown if kept and not kept.problem else ():
        terminal.echo(
            f"warning: git status still shows {shown.pattern} (tracked, or un-ignored by a `!` pattern): it names this machine's precompact, keep it out of your commits",
            err=True,
        )
    for path in git_exclude.untracked(root, tuple(path for path in relative if path not in installer.PER_USER)):
        terminal.echo(installer.shared_file_note(path))


def _apply(change, dry_run: bool, done: str, unchanged: str) -> None:
    from precompact.config import install as installer

    if dry_run:
        terminal.echo(f"{quoting.path(change.path)}:")
        terminal.echo(change.text(), nl=False)
        return
    if not change.changed:
        terminal.echo(unchanged)
        return
    installer.apply(change)
    terminal.echo(done)


_REKEY_OPTION = _json_option("The commit made")


# The name before `key rekey`; it goes in the release after next.
@main.command("rekey", hidden=True)
@_REKEY_OPTION
def rekey_alias(as_json) -> None:
    """The same as `precompact key rekey`."""
    _rekey(as_json)


@main.group()
def key() -> None:
    """The age identity that reads encrypted savepoints (show, export, import, rekey), and the
    signing key's rotation."""


@key.command("rekey")
@_REKEY_OPTION
def key_rekey(as_json) -> None:
    """Re-encrypt the savepoint branch to the current encryption.recipients, as a new commit
    (pushed history is never rewritten), then push."""
    _rekey(as_json)


def _rekey(as_json: bool) -> None:
    from precompact import api

    loaded = _load()
    commit, files, left = api.rekey(loaded)
    if as_json:
        _emit(
            {"branch": loaded.branch, "commit": commit, "files": files, "left": left, "recipients": loaded.recipients}
        )
        raise click.exceptions.Exit(1 if left else 0)
    if commit is None and not left:
        _say(f"{loaded.branch} is already encrypted to the {len(loaded.recipients)} recipient(s); nothing to do")
        return
    if commit is not None:
        _say(
            f"re-encrypted {files} file(s) on {loaded.branch} to {len(loaded.recipients)} recipient(s) in commit {commit[:12]}, pushed to {loaded.remote}; earlier commits still hold the old copies"
        )
    if left:
        raise click.ClickException(
            f"{left} file(s) on {loaded.branch} are encrypted only to keys {loaded.identity} does not hold and were left as they are; to re-encrypt them too, run `PRECOMPACT_IDENTITY=<the identity they were encrypted to> precompact key rekey`"
        )


@key.command("show")
@_json_option("The identity's public keys and the recipients")
def key_show(as_json) -> None:
    """Print the identity's public key and the recipients savepoints are encrypted to."""
    from precompact import api
    from precompact.remote import encryption as remote_crypto

    loaded = _load()
    problem = None
    try:
        own = api.identity_public_keys(loaded)
    except remote_crypto.CryptoError as e:
        problem = str(e)
        _say(f"identity: {e}")
        own = []
    for public in own:
        listed = "a recipient" if public in loaded.recipients else "NOT a recipient: add it to encryption.recipients"
        _say(f"identity {loaded.identity}: {public} ({listed})")
    _say(f"recipients: {', '.join(loaded.recipients) or 'none (savepoints go in clear text)'}")
    if as_json:
        keys = [{"public_key": public, "recipient": public in loaded.recipients} for public in own]
        identity = str(loaded.identity) if loaded.identity else None
        _emit({"identity": identity, "public_keys": keys, "identity_problem": problem, "recipients": loaded.recipients})


@key.command("export")
def key_export() -> None:
    """Print the identity (a secret: it reads every savepoint) for `key import` on another machine."""
    from precompact import api

    data = api.read_identity(_load())
    terminal.echo(
        "warning: this is your secret key; move it only over a channel you trust, then delete the copy", err=True
    )
    terminal.echo(data.decode(), nl=False)


@key.command("import")
@click.argument("source", type=click.File("rb"))
@_json_option("Where the identity went and its public keys")
def key_import(source, as_json) -> None:
    """Install the identity in SOURCE ('-': stdin) as this project's encryption.identity (0600)."""
    from precompact import api

    loaded = _load()
    done = api.import_identity(loaded, source.read(), source.name)
    _say(f"installed the age identity at {loaded.identity} ({', '.join(done.public_keys) or 'an SSH key'}); back it up")
    if done.kept_aside is not None:
        _say(f"the identity that was there (no savepoint here was encrypted to it) is kept at {done.kept_aside}")
    if done.public_keys and done.recipients != list(loaded.recipients):
        _say(f"new savepoints are encrypted to {', '.join(done.recipients)} (encryption.recipients, approved)")
    if done.others:
        terminal.echo(
            f"note: encryption.recipients also lists {', '.join(done.others)}; if one is a key you moved away, remove it from .precompact.toml and run `precompact trust`",
            err=True,
        )
    if as_json:
        _emit({"identity": str(loaded.identity), "public_keys": done.public_keys})


@main.command()
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option(
    "--force", is_flag=True, help="Close even while savepoints are queued for the chain (they are never anchored)."
)
@_json_option("The record closed and the lamports returned (implies --yes)")
def close(yes: bool, force: bool, as_json: bool) -> None:
    """Close the instance's on-chain record and take its rent back: no savepoint of the instance
    is anchored on chain after it (git and this machine keep them); `verify` then says the chain
    can no longer vouch for them."""
    from precompact import api

    loaded = _load()
    plan = api.closing_plan(loaded)
    _say(
        f"the record of {quoting.name(plan.instance)} at {plan.address} holds savepoint {plan.sequence} and {plan.lamports} lamports; closing it returns them to {plan.authority}, and the chain can no longer vouch for any savepoint of {quoting.name(plan.instance)}"
    )
    if not (yes or as_json):
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise click.ClickException("not at a terminal: run `precompact close --yes` to close the record")
        if not click.confirm("Close it?", default=False):
            raise click.ClickException("not closed; nothing changed")
    closed = api.close_record(loaded, force=force)
    _say(
        f"closed the record of {quoting.name(closed.instance)} at {closed.address} (after savepoint {closed.sequence}): {closed.lamports} lamports returned to {closed.authority}, transaction {closed.signature}"
    )
    if as_json:
        _emit(closed.as_dict())


@key.command("rotate")
@click.option(
    "--recover",
    is_flag=True,
    help="The signing key is lost: the new key alone continues the lineage, marked as not signed by the old key.",
)
@click.option("--airdrop", is_flag=True, help="Fund the new key from the cluster's faucet (local and test clusters).")
@_json_option("The rotation and the new key's file")
def key_rotate(recover: bool, airdrop: bool, as_json: bool) -> None:
    """Move the instance's on-chain lineage to a new signing key (both keys sign; the old record
    freezes), switch chain.keypair to it, and record the rotation in the index. Run again, it
    finishes a rotation whose transaction landed in a run cut short."""
    from precompact import api

    done = api.rotate_key(_load(), recover=recover, airdrop=airdrop)
    rotation = done.rotation
    how = "recovered without the old key's signature" if rotation.recovered else "rotated"
    if done.finished:
        how = f"finished (its transaction had landed before the run that sent it was cut short): {how}"
    _say(
        f"{how}: savepoint {rotation.sequence} of {quoting.name(rotation.instance)} now continues under {rotation.new_authority} (was {rotation.old_authority}), transaction {rotation.signature}"
    )
    made = "the keypair the run cut short created," if done.finished else "created keypair"
    _say(
        f"{made} {done.keypair}; {done.config} now signs with it: back it up, and fund it, it pays for the next savepoints"
    )
    if as_json:
        _emit(
            {**rotation.as_dict(), "keypair": str(done.keypair), "config": str(done.config), "finished": done.finished}
        )


@main.command()
@click.option(
    "--agent",
    type=click.Choice(agents.NAMES),
    default="claude",
    show_default=True,
    help="Whose hook this is (`install --agent` writes it).",
)
def hook(agent) -> None:
    """Hook handler of Claude Code, Codex CLI or Gemini CLI: reads the hook JSON on stdin. Always exits 0."""
    from precompact.edges import hook as hook_handler

    hook_handler.run(agent)
