"""boundary/small_file: the one way precompact opens a file it was told to read (a keypair, an age
identity, this machine's key, a `.precompact.toml`, an approval record; through agent_settings
an agent's settings, through session_file an agent's session file). Each name is
outside input: a FIFO there blocked an open until a writer came (the hook until the agent's
timeout, the worker for good, holding its locks), `/dev/zero` never ends. Each reader refuses
such a name at once, in one line naming the fix."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from precompact.boundary import session_file, small_file
from precompact.chain import wire as chain
from precompact.config import agent_settings, approval
from precompact.edges import plugin_runtime
from precompact.local import provenance
from precompact.remote import encryption as remote_crypto
from precompact.verifier import signed

# Far longer than a refusal takes; a reader that blocks on the FIFO never returns.
PATIENCE_SECONDS = 10


def promptly(read: Callable[[], object]) -> BaseException | object:
    """What `read()` returned or raised, or fails the test when it is still waiting."""
    outcome: list[BaseException | object] = []

    def run() -> None:
        try:
            outcome.append(read())
        except BaseException as e:  # noqa: BLE001 - handed to the test to judge
            outcome.append(e)

    reader = threading.Thread(target=run, daemon=True)
    reader.start()
    reader.join(PATIENCE_SECONDS)
    assert outcome, "the read is still waiting: it blocked on the name"
    return outcome[0]


@pytest.fixture
def fifo(tmp_path: Path):
    path = tmp_path / "told"
    os.mkfifo(path, 0o600)
    yield path
    free(path)


def free(fifo: Path) -> None:
    """Frees a reader a failing test left blocked in open() on `fifo` (none there: ENXIO)."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def test_the_owner_refuses_what_is_not_a_regular_file_at_once(fifo, tmp_path):
    refused = promptly(lambda: small_file.read(fifo, 64, follow_links=True))
    assert isinstance(refused, small_file.Refused) and str(refused) == f"{fifo} is not a regular file (it is a FIFO)"
    device = promptly(lambda: small_file.read("/dev/zero", 64, follow_links=True))
    assert isinstance(device, small_file.Refused) and "(it is a device)" in str(device)
    assert "(it is a directory)" in str(promptly(lambda: small_file.read(tmp_path, 64, follow_links=True)))
    with pytest.raises(FileNotFoundError):
        small_file.read(tmp_path / "absent", 64, follow_links=True)


def test_the_owner_reads_a_regular_file_within_its_limit_and_refuses_a_link_where_asked(tmp_path):
    real = tmp_path / "real"
    real.write_bytes(b"x" * 64)
    data, info = small_file.read(real, 64, follow_links=False)
    assert (data, info.st_size) == (b"x" * 64, 64)
    with pytest.raises(small_file.Refused, match="is larger than 63 bytes"):
        small_file.read(real, 63, follow_links=False)
    link = tmp_path / "link"
    link.symlink_to(real)
    assert small_file.read(link, 64, follow_links=True)[0] == b"x" * 64
    with pytest.raises(small_file.Refused, match=f"^.*{link} is a symbolic link$"):
        small_file.read(link, 64, follow_links=False)
    (tmp_path / "to_fifo").symlink_to(tmp_path / "absent")
    os.mkfifo(tmp_path / "absent")
    with pytest.raises(small_file.Refused, match="it is a FIFO"):  # followed, then checked
        small_file.read(tmp_path / "to_fifo", 64, follow_links=True)


def test_the_owner_refuses_a_file_the_kernel_makes_up_for_every_reader_it_serves(tmp_path):
    """A link to /proc/self/environ (size 0, yet this process's environment comes out) is not
    a keypair, an agent's settings nor a session's file: the owner refuses it before reading, and
    each reader it serves says so in its own words; an empty regular file is read as empty."""
    environ = tmp_path / "environ.json"
    environ.symlink_to("/proc/self/environ")
    with pytest.raises(small_file.MadeUp, match=f"^{environ} is a file the system makes up as it is read"):
        small_file.read(environ, 1 << 20, follow_links=True)
    with pytest.raises(agent_settings.Unreadable, match=f"^{environ} is a file the system makes up as it is read"):
        agent_settings.read(environ)
    assert agent_settings.outside_object(environ) == {}
    with pytest.raises(session_file.NotASessionFile) as refused:
        session_file.open_read(environ)
    assert refused.value.strerror == session_file.MADE_UP
    (tmp_path / "empty").write_bytes(b"")
    assert small_file.read(tmp_path / "empty", 64, follow_links=False)[0] == b""


def test_each_reader_of_a_told_file_refuses_a_fifo_at_once_naming_the_fix(fifo, tmp_path, monkeypatch):
    """The signing keypair and the chain's (PRECOMPACT_KEYPAIR), the age identity
    (PRECOMPACT_IDENTITY), the configuration, its approval record, this machine's key."""
    cases: list[tuple[Callable[[], object], type[BaseException], str]] = [
        (lambda: signed.Signer.load(fifo), signed.SigningKeyError, "point chain.keypair (or PRECOMPACT_KEYPAIR) at"),
        (lambda: chain.load_keypair(fifo), chain.KeypairError, "point chain.keypair (or PRECOMPACT_KEYPAIR) at"),
        (
            lambda: remote_crypto.read_identity_file(fifo),
            remote_crypto.CryptoError,
            "point encryption.identity (or PRECOMPACT_IDENTITY) at the file itself",
        ),
        (lambda: approval.read_own(fifo), approval.NotOwn, "precompact ignores it: remove it"),
    ]
    for read, error, fix in cases:
        refused = promptly(read)
        assert isinstance(refused, error), (read, refused)
        assert f"{fifo} is not a regular file (it is a FIFO)" in str(refused) and fix in str(refused)
        assert "\n" not in str(refused)
    for read in (
        lambda: signed.Signer.load(Path("/dev/zero")),
        lambda: remote_crypto.read_identity_file(Path("/dev/zero")),
    ):
        assert "(it is a device)" in str(promptly(read))

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    config = tmp_path / ".precompact.toml"
    config.write_bytes(b'instance = "x"\n')
    approval.approve(config, config.read_bytes())
    assert approval.approval(config) is not None
    record = Path(approval._record(config))
    record.unlink()
    os.mkfifo(record, 0o600)
    assert promptly(lambda: approval.approval(config)) is None
    free(record)

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    key = provenance.key_path()
    key.parent.mkdir(parents=True)
    os.mkfifo(key, 0o600)
    provenance._cached.clear()
    refused = promptly(lambda: provenance._key(create=True))
    free(key)
    assert isinstance(refused, provenance.ProvenanceError) and "remove it (precompact makes a new key)" in str(refused)


def test_an_agents_settings_a_project_ships_as_a_fifo_name_nothing_at_once(tmp_path):
    """A session's start asks whether the project's `.mcp.json` and `.gemini/settings.json` name
    precompact's MCP server, and the plugin's hook whether `.claude/settings.json` runs precompact:
    a FIFO at each is read as naming nothing, without waiting for a writer."""
    project, home = tmp_path / "project", tmp_path / "home"
    for name in (".mcp.json", ".claude/settings.json", ".gemini/settings.json"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(project / name)
    home.mkdir()
    try:
        assert promptly(lambda: agent_settings.outside_object(project / ".mcp.json")) == {}
        for agent in ("claude", "gemini"):
            assert promptly(functools.partial(agent_settings.mcp_installed, agent, project, home)) is False
        assert (
            promptly(lambda: plugin_runtime.settings_run_precompact(project, "PreCompact", {"HOME": str(home)}))
            is False
        )
    finally:
        for name in (".mcp.json", ".claude/settings.json", ".gemini/settings.json"):
            free(project / name)


def test_a_keypair_too_large_to_be_one_is_not_read_whole(tmp_path):
    huge = tmp_path / "keypair.json"
    huge.write_text(json.dumps(list(range(64))) + " " * (1 << 17))
    with pytest.raises(signed.SigningKeyError, match="is larger than"):
        signed.Signer.load(huge)
