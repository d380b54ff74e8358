"""The precompact demo: one compaction cycle through the real hook path, shown step by step.

Run through `scripts/demo`, which builds what this needs first. Everything happens in a
temporary folder (a git project with a bare remote) against a precompact-localnet started
here; both are removed on exit, Ctrl-C included, unless --keep is given.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from precompact.remote import gitstore
from support.transcript_gen import generate, payload

PRECOMPACT = str(Path(sys.executable).with_name("precompact"))
INSTANCE = "Gabriel #215"


def step(title: str) -> None:
    print(f"\n\033[1m== {title}\033[0m", flush=True)


def show(*args: str, cwd: Path, check: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess:
    print(f"$ {' '.join(shlex.quote(a) for a in args)}", flush=True)
    result = subprocess.run(args, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120, check=False)
    out = (result.stdout + result.stderr).rstrip()
    if out:
        print("  " + out.replace("\n", "\n  "), flush=True)
    if check and result.returncode != 0:
        raise SystemExit(f"demo: `{' '.join(args)}` exited {result.returncode}")
    return result


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def start_localnet(workdir: Path) -> tuple[subprocess.Popen, str]:
    target = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache" / "precompact" / "target"))
    log = workdir / "localnet.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [
                str(target / "debug" / "precompact-localnet"),
                "--port",
                "0",
                "--state",
                str(workdir / "chain-state.json"),
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith("ready "):
                return process, line.split(" ", 1)[1].strip()
        if process.poll() is not None:
            raise SystemExit(f"demo: precompact-localnet exited: {log.read_text(errors='replace')}")
        time.sleep(0.05)
    raise SystemExit("demo: precompact-localnet did not start within 60 s")


def fund(url: str, keypair_file: Path) -> None:
    from solana.rpc.api import Client
    from solana.rpc.commitment import Confirmed
    from solders.keypair import Keypair

    authority = Keypair.from_bytes(bytes(json.loads(keypair_file.read_text())))
    client = Client(url, commitment=Confirmed)
    client.confirm_transaction(client.request_airdrop(authority.pubkey(), 2_000_000_000).value, sleep_seconds=0.05)
    print(f"  airdropped 2 SOL to {authority.pubkey()} (pays rent and fees)")


def installed_hooks(project: Path) -> dict[str, str]:
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    return {event: groups[-1]["hooks"][0]["command"] for event, groups in settings["hooks"].items()}


def run_hook(command: str, event_payload: dict, project: Path) -> str:
    """What Claude Code does: the hook's command under `/bin/sh -c` (as 2.1.332 runs it), the
    event JSON on stdin."""
    print(f'$ echo \'{{"hook_event_name":"{event_payload["hook_event_name"]}",...}}\' | {command}', flush=True)
    began = time.monotonic()
    result = subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(event_payload),
        capture_output=True,
        text=True,
        cwd=project,
        timeout=120,
        check=False,
    )
    elapsed = time.monotonic() - began
    print(f"  exit {result.returncode} in {elapsed * 1000:.0f} ms")
    if result.stderr.strip():
        print("  stderr: " + result.stderr.strip())
    return result.stdout.strip()


def wait_for_layers(project: Path) -> dict:
    print("  waiting for the background worker (git push, then the chain) ", end="", flush=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        status = json.loads(
            subprocess.run(
                [PRECOMPACT, "status", "--json"], cwd=project, capture_output=True, text=True, check=False
            ).stdout
        )
        saved = status["savepoints"]  # none yet while the worker writes what PreCompact queued
        latest = saved[-1] if saved else None
        if latest is not None and latest["layer_2"] == "PUSHED" and latest["layer_3"] == "CONFIRMED":
            print(" done")
            return latest
        print(".", end="", flush=True)
        time.sleep(0.25)
    print()
    raise SystemExit(f"demo: the layers did not land; see {project / 'logs' / 'precompact-worker.log'}")


def demo(root: Path) -> None:
    step("1. A project with a git remote, and a local Solana cluster (precompact-localnet)")
    remote, project = root / "remote.git", root / "project"
    git(root, "init", "-q", "--bare", str(remote))
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    git(project, "config", "user.name", "Demo")
    git(project, "config", "user.email", "demo@example.invalid")
    (project / "src").mkdir()
    for n in range(7):
        (project / "src" / f"module_{n}.py").write_text(f"def step_{n}():\n    return {n}\n")
    (project / "session_current.json").write_text(
        json.dumps({"current_priorities": ["make the flaky test deterministic", "ship 1.2"]})
    )
    git(project, "add", ".")
    git(project, "commit", "-q", "-m", "initial")
    git(project, "remote", "add", "origin", str(remote))
    localnet, url = start_localnet(root)
    print(f"  project {project}, remote {remote}, cluster {url}")
    try:
        run_cycle(root, project, remote, url)
    finally:
        localnet.terminate()
        localnet.wait(timeout=10)


def run_cycle(root: Path, project: Path, remote: Path, url: str) -> None:
    step("2. precompact init and precompact install (once per project)")
    show(PRECOMPACT, "init", "--yes", "--instance", INSTANCE, "--chain", url, cwd=project)
    # precompact's own signing key, which init created under its config directory.
    fund(url, Path(os.environ["XDG_CONFIG_HOME"]) / "precompact" / "keys" / "gabriel-215.json")
    show(PRECOMPACT, "install", cwd=project)
    hooks = installed_hooks(project)

    step("3. A long session: a realistic 5 MB transcript with a secret in a tool result")
    planted = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    transcript = generate(root / "session.jsonl", 5_000_000, project=project, planted=[planted])
    print(
        f"  {transcript.path}: {transcript.bytes / 1e6:.1f} MB, {transcript.messages} messages, {len(transcript.files)} files touched"
    )

    step(
        "4. Claude Code compacts: the PreCompact hook queues the savepoint (5 MB: the worker writes it) and returns at once"
    )
    session = "demo-session"  # Claude Code names the same session in the three hooks of a compaction
    note = run_hook(hooks["PreCompact"], payload("PreCompact", project, transcript.path, session_id=session), project)
    print(f"  stdout, which Claude Code appends to the summariser's prompt: {note}")
    latest = wait_for_layers(project)
    print(f"  snapshot {latest['snapshot_file']}  sha256:{latest['snapshot_hash']}")
    snapshot = (project / latest["snapshot_file"]).read_text()
    print(
        f"  the planted secret is in the snapshot: {planted in snapshot}; redactions: {json.loads(snapshot)['redaction']['counts']}"
    )

    branch = gitstore.instance_branch("precompact/savepoints", INSTANCE)
    step(f"5. Layer 2: the savepoint commit, pushed to the remote's {branch} branch (the instance's own)")
    print("  " + git(remote, "log", "-1", "--format=%H%n%s%n%n%b", branch).strip().replace("\n", "\n  "))
    print(f"  the user's branch and index are untouched: {git(project, 'status', '--short', '--branch').strip()}")

    step("6. Layer 3: the on-chain transaction and the account, decoded")
    print(f"  transaction {latest['chain_signature']}")
    show(PRECOMPACT, "inspect", cwd=project)
    show(PRECOMPACT, "verify", "--all", cwd=project)

    step("7. PostCompact stores the compaction summary; SessionStart restores the session")
    run_hook(
        hooks["PostCompact"],
        payload(
            "PostCompact",
            project,
            transcript.path,
            compact_summary="We made the flaky test deterministic by seeding the clock.",
            session_id=session,
        ),
        project,
    )
    output = run_hook(
        hooks["SessionStart"],
        payload("SessionStart", project, transcript.path, source="compact", session_id=session),
        project,
    )
    context = json.loads(output)["hookSpecificOutput"]["additionalContext"]
    print(f"  additionalContext: {len(context)} characters (Claude Code's limit: 10,000). It begins:")
    print("  | " + "\n  | ".join(context.splitlines()[:24]))
    print("  | …")

    step("8. The resurrection report, as `precompact resurrect` prints it")
    show(PRECOMPACT, "resurrect", cwd=project)

    step("9. Someone alters what the savepoint holds: verify names each broken link")
    snapshot_path = project / latest["snapshot_file"]
    chunk_name = json.loads(snapshot)["conversation_chunks"][-1]["sha256"]
    chunk_path = project / "logs" / "precompact-chunks" / chunk_name
    print("  a chunk of the conversation (the snapshot file lists each chunk by its SHA-256):")
    tamper(chunk_path, b"Conclusion", project, names=chunk_name)
    print("  the snapshot file itself:")
    tamper(snapshot_path, b"make the flaky test deterministic", project, names=snapshot_path.name)


def tamper(path: Path, text: bytes, project: Path, names: str) -> None:
    """Alters `text` in `path`, shows `verify` naming what was altered, then puts it back."""
    original = path.read_bytes()
    altered = original.replace(text, text.upper(), 1)
    if altered == original:
        raise SystemExit(f"demo: {path.name} does not contain {text.decode()!r}; nothing to alter")
    path.write_bytes(altered)
    try:
        result = show(PRECOMPACT, "verify", "--all", cwd=project, check=False)
    finally:
        path.write_bytes(original)
    if result.returncode == 0:
        raise SystemExit(f"demo: verify did not catch the altered {path.name}")
    if names not in result.stdout + result.stderr:
        raise SystemExit(f"demo: verify caught the tampering but did not name {names}")
    print(f"  verify exited {result.returncode} and named {names}: tampering caught")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder for a look afterwards")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="precompact-demo-"))
    # precompact on PATH, as on a machine where it is installed: the hooks' command finds it.
    os.environ["PATH"] = f"{Path(PRECOMPACT).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    # The demo project's approval (`precompact init` records one) goes with the folder, not
    # into your ~/.config.
    os.environ["XDG_CONFIG_HOME"] = str(root / "config")
    # Ctrl-C and SIGTERM unwind through the finally blocks, which stop the localnet.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    try:
        demo(root)
        step("Done: saved, backed up, proven, restored, and tampering caught")
    except KeyboardInterrupt:
        print("\ndemo: interrupted; cleaning up")
        sys.exit(130)
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    throwaway_home.use()
    main()
