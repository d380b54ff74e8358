"""Fault trials shared by the reliability tests (a few trials each, in CI) and
`scripts/reliability` (the large runs). Each scenario drives real precompact processes against
real git and, where the chain takes part, a running precompact-localnet, then checks that
nothing a savepoint was promised is lost or corrupted. Every scenario returns a `Tally`.

"Lost" counts savepoints that were once intact (named by the index with a matching snapshot,
or landed in git / on chain) and are not any more, or that never land once every service is back.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import itertools
import json
import os
import random
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import git

from precompact.config import settings as configuration
from precompact.edges import worker
from precompact.local import chunks, savepoint_log, snapshot
from precompact.remote import encryption, gitstore
from precompact.verifier import verify as verification
from support.commands import PRECOMPACT, hook, precompact
from support.localnet import LocalnetProcess, free_port
from support.projects import Project, fund, new_project, store
from support.transcript_gen import generate, payload, saved_sequence


@dataclass
class Tally:
    scenario: str
    trials: int = 0
    failures: list[str] = field(default_factory=list)
    lost: int = 0

    def fail(self, trial: int, problems: list[str]) -> None:
        self.failures += [f"trial {trial}: {p}" for p in problems]

    @property
    def failed_trials(self) -> int:
        return len({f.split(":", 1)[0] for f in self.failures})


def killed_at(args: list[str], cwd: Path, delay: float, stdin: bytes = b"") -> None:
    """Starts `args` in its own process group and SIGKILLs the whole group after `delay` s (git
    children included), as a crash or a closed terminal would."""
    process = subprocess.Popen(
        args,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    with contextlib.suppress(BrokenPipeError):
        process.stdin.write(stdin)
        process.stdin.close()
    time.sleep(delay)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def sha256_file(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def check_layer_1(project: Project, intact_before: dict[int, str]) -> tuple[list[str], int]:
    """The index parses, names consecutive, hash-linked savepoints whose snapshots are intact, and
    no partial file sits under a final name. Returns the problems and how many savepoints in
    `intact_before` (sequence -> hash) are no longer intact; adds the intact ones to it."""
    problems = []
    index = savepoint_log.read(project.logs)
    if index.bad_lines:
        problems.append(f"{len(index.bad_lines)} unparsable index line(s)")
    states = savepoint_log.savepoints(project.logs, project.instance)
    if [s.sequence for s in states] != list(range(1, len(states) + 1)):
        problems.append(f"sequences are not consecutive: {[s.sequence for s in states]}")
    for before, after in itertools.pairwise(states):
        if after.prev_snapshot_hash != before.snapshot_hash:
            problems.append(f"savepoint {after.sequence} does not link to {before.sequence}")
    intact = {}
    for state in states:
        file = project.path / state.created["snapshot_file"]
        if file.is_file() and sha256_file(file) == state.snapshot_hash:
            intact[state.sequence] = state.snapshot_hash
            try:
                chunks.document(file.read_bytes(), chunks.local_fetch(project.logs))
            except chunks.ChunkError as e:
                problems.append(f"savepoint {state.sequence}: {e}")
        else:
            problems.append(f"savepoint {state.sequence}: snapshot {file.name} missing or altered")
    for file in (project.logs / snapshot.SAVES_DIR).iterdir():
        if not file.name.startswith("."):
            try:
                json.loads(file.read_bytes())
            except ValueError:
                problems.append(f"partial file under a final name: {file.name}")
    lost = sum(1 for sequence, digest in intact_before.items() if intact.get(sequence) != digest)
    intact_before.update(intact)
    return problems, lost


def _full_run_seconds(args: list[str], cwd: Path, stdin: bytes = b"") -> float:
    began = time.monotonic()
    subprocess.run(args, cwd=cwd, input=stdin, capture_output=True, check=True, timeout=120)
    return time.monotonic() - began


def crash_layer_1(root: Path, trials: int, rng: random.Random, transcript_bytes: int = 3_000_000) -> Tally:
    """kill -9 of the PreCompact hook at a random moment of its run (start-up included), in turn
    over a session short enough for the hook to write its savepoint itself and one of
    `transcript_bytes`, which it queues for the worker (config/hook_timeouts.pre_compact_writes):
    the worker a hook started before it was killed writes that one meanwhile."""
    tally = Tally("kill -9 during Layer 1 (hook)")
    project = new_project(root, "crash-layer-1", git_layer=False, chain_layer=False)
    short = generate(root / "crash-layer-1-short.jsonl", 40_000, project=project.path).path
    long = generate(root / "crash-layer-1.jsonl", transcript_bytes, project=project.path, seed=8).path

    def stdin(transcript: Path) -> bytes:  # each hook a session of its own, so each one saves
        return json.dumps(payload("PreCompact", project.path, transcript)).encode()

    durations = {t: _full_run_seconds([PRECOMPACT, "hook"], project.path, stdin(t)) for t in (short, long)}
    intact: dict[int, str] = {}
    check_layer_1(project, intact)
    for trial in range(1, trials + 1):
        transcript = (short, long)[trial % 2]
        killed_at([PRECOMPACT, "hook"], project.path, rng.uniform(0, durations[transcript] * 1.1), stdin(transcript))
        problems, lost = check_layer_1(project, intact)
        tally.trials, tally.lost = trial, tally.lost + lost
        tally.fail(trial, problems)
    # The chain continues after all those crashes: what the killed hooks queued is written first.
    flushed = precompact(project.path, "flush")
    result = hook(stdin(short), cwd=project.path)
    problems, lost = check_layer_1(project, intact)
    tally.lost += lost
    last = savepoint_log.latest(project.logs, project.instance)
    if flushed.returncode != 0:
        problems.append(f"flush after the crashes failed: {flushed.stdout + flushed.stderr!r}")
    if result.returncode != 0 or last is None or saved_sequence(result.stdout) != last.sequence:
        problems.append(f"the savepoint after the crashes did not continue the chain: {result.stdout!r}")
    leftovers = list((project.logs / snapshot.SAVES_DIR).glob(".*.tmp"))
    if leftovers:
        problems.append(f"temporary files of killed writers were not cleaned up: {[f.name for f in leftovers]}")
    tally.fail(trials + 1, problems)
    return tally


def check_layer_2(project: Project) -> list[str]:
    """Every savepoint the index says is committed is on the branch with the snapshot's bytes."""
    report = verification.verify(configuration.load(project.path), check_chain=False)
    return [str(f) for f in report.findings]


def remote_savepoint_hashes(project: Project) -> set[str]:
    """The snapshot hashes named by the index as it stands on the remote's savepoint branch."""
    config = configuration.load(project.path)
    remote = git.Repo(project.remote)  # the remote itself, as its owner reads it
    try:  # encrypted (the default) or clear
        shown = gitstore.file_at(
            remote,
            f"refs/heads/{gitstore.instance_branch(config.branch, config.instance)}",
            f"logs/{savepoint_log.INDEX_NAME}",
            encryption.Keys.of(config),
        )
    except gitstore.GitStoreError:
        return set()
    folded = savepoint_log.of_instance(
        savepoint_log.fold(savepoint_log.parse(shown.splitlines()).events), project.instance
    )
    return {s.snapshot_hash for s in folded}


def crash_layer_2(root: Path, trials: int, rng: random.Random) -> Tally:
    """kill -9 of `precompact flush` (commit and push) at a random moment, one new savepoint each."""
    tally = Tally("kill -9 during Layer 2 (flush)")
    project = new_project(root, "crash-layer-2", git_layer=True, chain_layer=False)
    settings = snapshot.Settings.of(configuration.load(project.path))
    session = snapshot.Session("trial", None, str(project.path))
    snapshot.create_savepoint(settings, session)
    duration = _full_run_seconds([PRECOMPACT, "flush"], project.path)
    intact: dict[int, str] = {}
    for trial in range(1, trials + 1):
        snapshot.create_savepoint(settings, session)
        killed_at([PRECOMPACT, "flush"], project.path, rng.uniform(0, duration * 1.1))
        problems, lost = check_layer_1(project, intact)
        tally.trials, tally.lost = trial, tally.lost + lost
        tally.fail(trial, problems + check_layer_2(project))
    # Once a flush runs to the end, every savepoint is in the remote's history. A branch lock the
    # last kill left is its owner's until it is STALE_REF_LOCK_SECONDS old (a fresh one may be a
    # live git's: test_reliability.py::test_a_fresh_branch_lock_is_left_to_its_owner), so this
    # flush runs once such a lock is stale, as a user's next flush would.
    _wait_for_ref_locks_to_go_stale(project)
    flushed = precompact(project.path, "flush")
    problems = (
        []
        if flushed.returncode == 0
        else [f"flush after the crashes failed: {flushed.stdout.strip()} {flushed.stderr.strip()}"]
    )
    on_remote = remote_savepoint_hashes(project)
    states = savepoint_log.savepoints(project.logs, project.instance)
    tally.lost += sum(1 for s in states if s.snapshot_hash not in on_remote)
    for repository in (project.path, project.remote):
        fsck = subprocess.run(
            ["git", "fsck", "--no-progress", "--no-dangling"],
            cwd=repository,
            capture_output=True,
            text=True,
            check=False,
        )
        if fsck.returncode != 0:
            problems.append(f"git fsck in {repository.name}: {fsck.stdout.strip() or fsck.stderr.strip()}")
    # The private index files of killed flushes are cleared by the next one.
    problems += [f"left behind: {left}" for left in (project.path / ".git").glob(f"{gitstore.PRIVATE_INDEX_PREFIX}*")]
    tally.fail(trials + 1, problems + check_layer_2(project))
    return tally


def _wait_for_ref_locks_to_go_stale(project: Project) -> None:
    ages = [time.time() - lock.stat().st_mtime for lock in (store(project.path) / "refs").rglob("*.lock")]
    if ages:
        time.sleep(max(0.0, gitstore.STALE_REF_LOCK_SECONDS + 1 - min(ages)))


def chain_record(url: str, project: Project) -> bytes | None:
    """The raw data of the instance's on-chain record."""
    from precompact.chain import rpc
    from precompact.chain import wire as chain

    address, _ = chain.record_address(project.authority().pubkey(), chain.instance_id(project.instance))
    account = rpc.Cluster(url, timeout=10).account(str(address))
    return None if account is None else account[1]


def chain_sequence(url: str, project: Project) -> tuple[int, str] | None:
    """The (sequence, snapshot hash) the instance's on-chain record holds."""
    from precompact.chain import record

    data = chain_record(url, project)
    if data is None:
        return None
    held = record.decode(data)
    return held.sequence, held.snapshot_hash.hex()


def workers_idle(project: Project, timeout: float) -> bool:
    """Waits until no background worker holds the project's worker lock."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        fd = os.open(project.logs / worker.LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            time.sleep(0.1)
        finally:
            os.close(fd)
    return False


def landing_problems(project: Project, url: str, expected: int) -> list[str]:
    """Problems with `expected` savepoints being committed, pushed and posted in order, once each."""
    problems = []
    config = configuration.load(project.path)
    states = savepoint_log.savepoints(project.logs, project.instance)
    if [s.sequence for s in states] != list(range(1, expected + 1)):
        problems.append(f"expected savepoints 1..{expected}, the index has {[s.sequence for s in states]}")
    pending = [s.sequence for s in states if s.layer_3 != "CONFIRMED" or (config.git_layer and s.layer_2 != "PUSHED")]
    if pending:
        problems.append(f"savepoints not landed: {pending}")
    events = savepoint_log.read(project.logs).events
    posts = [e["sequence"] for e in events if e["event"] == "LAYER_3_CONFIRMED" and not e.get("recovered")]
    if len(posts) != len(set(posts)) or posts != sorted(posts):
        problems.append(f"posted out of order or twice: {posts}")
    held = chain_sequence(url, project)
    if states and held != (states[-1].sequence, states[-1].snapshot_hash):
        problems.append(f"the chain holds {held}, the index ends at {states[-1].sequence}")
    problems += [str(f) for f in verification.verify(config).findings]
    return problems


def concurrent_hooks(root: Path, url: str, hooks: int) -> Tally:
    """`hooks` PreCompact hooks for one instance started at once."""
    tally = Tally(f"{hooks} concurrent hooks, one instance", trials=1)
    project = new_project(root, "concurrent", git_layer=True, chain_layer=True, cluster=url)
    fund(url, project.authority())
    transcript = generate(root / "concurrent.jsonl", 100_000, project=project.path)
    processes = [
        subprocess.Popen(
            [PRECOMPACT, "hook"],
            cwd=project.path,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(hooks)
    ]
    for process in processes:
        process.stdin.write(json.dumps(payload("PreCompact", project.path, transcript.path)).encode())
        process.stdin.close()
    messages = [process.stdout.read().decode() for process in processes]
    codes = [process.wait(timeout=120) for process in processes]
    problems = [f"a hook exited {code}" for code in codes if code != 0]
    numbers = sorted(saved_sequence(m) or 0 for m in messages if m)
    if numbers != list(range(1, hooks + 1)):
        problems.append(f"hooks reported savepoints {numbers}")
    if not workers_idle(project, timeout=180):
        problems.append("background workers still running after 180 s")
    problems += landing_problems(project, url, hooks)
    remote_log = set(
        subprocess.run(
            [
                "git",
                "log",
                "--format=%H",
                gitstore.instance_branch(configuration.load(project.path).branch, project.instance),
            ],
            cwd=project.remote,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.split()
    )
    missing = [
        s.sequence for s in savepoint_log.savepoints(project.logs, project.instance) if s.commit not in remote_log
    ]
    if missing:
        problems.append(f"commits missing from the remote: {missing}")
    tally.lost = hooks - len(remote_savepoint_hashes(project))
    tally.fail(1, problems)
    return tally


def offline_then_flush(root: Path, savepoints: int) -> tuple[Tally, float]:
    """Remote unreachable and RPC down across `savepoints` hooks; then both come back and
    `precompact flush` lands everything. Returns the tally and the slowest hook's seconds."""
    tally = Tally(f"offline across {savepoints} savepoints, then flush", trials=1)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    project = new_project(root, "offline", git_layer=True, chain_layer=True, cluster=url)
    # The remote git.url names is unreachable until it is moved back.
    project.remote.rename(root / "unreachable.git")
    # Within what PreCompact writes itself (config/hook_timeouts.pre_compact_writes): each hook saves.
    transcript = generate(root / "offline.jsonl", 80_000, project=project.path)
    problems, slowest = [], 0.0
    for _ in range(savepoints):
        began = time.monotonic()
        result = hook(payload("PreCompact", project.path, transcript.path), cwd=project.path)
        seconds = time.monotonic() - began
        slowest = max(slowest, seconds)
        if result.returncode != 0 or saved_sequence(result.stdout) is None:
            problems.append(f"hook while offline: exit {result.returncode}, {result.stdout!r}")
    states = savepoint_log.savepoints(project.logs, project.instance)
    if any(s.layer_2 == "PUSHED" or s.layer_3 == "CONFIRMED" for s in states):
        problems.append("a savepoint claims to have landed while everything was down")
    (root / "unreachable.git").rename(project.remote)
    node = LocalnetProcess(root, port=port)
    node.start()
    try:
        fund(url, project.authority())
        flushed = precompact(project.path, "flush", timeout=300)
        if flushed.returncode != 0:
            problems.append(f"flush exited {flushed.returncode}: {flushed.stdout.strip()}")
        if not workers_idle(project, timeout=120):
            problems.append("background workers still running after 120 s")
        problems += landing_problems(project, url, savepoints)
        tally.lost = savepoints - len(remote_savepoint_hashes(project))
    finally:
        node.stop()
    tally.fail(1, problems)
    return tally, slowest


def localnet_restart(root: Path, trials: int, rng: random.Random, per_trial: int = 4) -> Tally:
    """The localnet is killed (SIGKILL) and restarted on its state file while `precompact flush`
    posts: afterwards no savepoint is posted twice or skipped."""
    tally = Tally("localnet killed mid-post, restarted")
    node = LocalnetProcess(root, state_file=root / "restart-chain.json")
    url = node.start()
    port = int(url.rsplit(":", 1)[1])
    try:
        project = new_project(root, "restart", git_layer=False, chain_layer=True, cluster=url)
        fund(url, project.authority())
        settings = snapshot.Settings.of(configuration.load(project.path))
        session = snapshot.Session("trial", None, str(project.path))
        snapshot.create_savepoint(settings, session)
        duration = _full_run_seconds([PRECOMPACT, "flush"], project.path)
        for trial in range(1, trials + 1):
            for _ in range(per_trial):
                snapshot.create_savepoint(settings, session)
            flush = subprocess.Popen(
                [PRECOMPACT, "flush"], cwd=project.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            time.sleep(rng.uniform(0, duration * per_trial))
            node.process.kill()
            node.process.wait()
            flush.wait(timeout=120)
            node = LocalnetProcess(root, state_file=root / "restart-chain.json", port=port)
            node.start()
            flushed = precompact(project.path, "flush")
            problems = (
                []
                if flushed.returncode == 0
                else [f"flush after the restart exited {flushed.returncode}: {flushed.stdout.strip()}"]
            )
            problems += landing_problems(project, url, 1 + trial * per_trial)
            tally.trials = trial
            tally.fail(trial, problems)
        posted = chain_sequence(url, project)
        tally.lost = 1 + trials * per_trial - (posted[0] if posted else 0)
    finally:
        node.stop()
    return tally
