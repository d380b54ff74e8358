"""`.precompact.toml`: a rendered file round-trips, env overrides, and each bad setting is one
line naming the key."""

from pathlib import Path

import pytest

from precompact.config import approval as config_trust
from precompact.config import settings as config
from precompact.config.settings import ConfigError
from precompact.local import snapshot

VALUES = {"instance": 'Gabriel "G" #215', "cluster": "http://127.0.0.1:9999", "branch": "precompact/mine"}


def write(root: Path, text: str) -> None:
    """Writes the configuration and approves it, as `precompact trust` would."""
    path = root.resolve() / config.CONFIG_NAME
    path.write_text(text)
    config_trust.approve(path, path.read_bytes())


def test_rendered_configuration_loads_with_defaults(tmp_path):
    write(tmp_path, config.render(VALUES))
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    loaded = config.load(nested, environ={})
    assert loaded.root == tmp_path.resolve()
    assert loaded.instance == 'Gabriel "G" #215'
    assert loaded.cluster == "http://127.0.0.1:9999"
    assert loaded.branch == "precompact/mine"
    assert loaded.remote == "origin"
    assert loaded.repository == tmp_path.resolve()
    assert loaded.keypair == Path("~/.config/solana/id.json").expanduser()
    assert loaded.session_state == tmp_path.resolve() / "session_current.json"
    assert loaded.git_layer and loaded.chain_layer and loaded.redaction
    assert ".env*" in loaded.exclude
    assert loaded.logs == tmp_path.resolve() / "logs"
    assert snapshot.Settings.of(loaded).instance == 'Gabriel "G" #215'


def test_environment_overrides_the_file(tmp_path):
    write(tmp_path, config.render(VALUES))
    env = {
        "PRECOMPACT_INSTANCE": "Other #2",
        "PRECOMPACT_CLUSTER": "https://api.devnet.solana.com",
        "PRECOMPACT_REMOTE": "backup",
    }
    loaded = config.load(tmp_path, environ=env)
    assert (loaded.instance, loaded.cluster, loaded.remote) == ("Other #2", "https://api.devnet.solana.com", "backup")


def test_missing_file_names_the_fix(tmp_path):
    with pytest.raises(ConfigError, match="run `precompact init`"):
        config.load(tmp_path, environ={})


@pytest.mark.parametrize(
    "text,message",
    [
        ("instance = ", "not valid TOML"),
        ("[git]\nremote = 'o'\n", "instance is missing"),
        ("instance = 3\n", "instance must be a string"),
        ("instance = '  '\n", "instance is empty"),
        ("instance = 'a'\n[chain]\ncluster = 'ftp://x'\n", "chain.cluster ftp://x is not an http(s) URL with a host"),
        ("instance = 'a'\n[chain]\nprogram_id = 'not-a-key'\n", "chain.program_id 'not-a-key' is not a base58"),
        ("instance = 'a'\n[layers]\ngit = 'yes'\n", "layers.git must be true or false"),
        (
            "instance = 'a'\n[snapshot]\ncontext_window = 0\n",
            "snapshot.context_window must be a whole number of tokens",
        ),
        ("instance = 'a'\n[hooks]\nbrief_budget = 'lots'\n", "hooks.brief_budget must be a whole number of characters"),
        ("instance = 'a'\n[hooks]\nsession_start_sources = ['boot']\n", "has unknown source(s) boot; list any of"),
        ("instance = 'a'\n[git]\nurl = 'ext::sh -c x'\n", 'git.url "ext::sh -c x" names a remote helper'),
        ("instance = 'a'\n[snapshot]\nexclude = [1]\n", "snapshot.exclude must be a list of strings"),
        (
            "instance = 'a'\n[redaction.patterns]\nbad = '('\n",
            "redaction.patterns.bad is not a valid regular expression",
        ),
        ("instance = 'a'\ngit = 5\n", "[git] must be a table"),
    ],
)
def test_each_invalid_setting_is_one_line_naming_the_key(tmp_path, text, message):
    """An approved file with a value precompact cannot use (as a newer version, or an edit
    approved by an older one, leaves it): one line naming the file, the key, the values it takes,
    and the fix, `precompact trust` after the edit; doctor's fix apart."""
    write(tmp_path, text)
    with pytest.raises(ConfigError) as error:
        config.load(tmp_path, environ={})
    assert message in str(error.value)
    assert "\n" not in str(error.value)
    if message != "not valid TOML":
        assert error.value.problem.startswith(f"{tmp_path.resolve() / config.CONFIG_NAME}: ")
        assert error.value.fix.endswith(f" in that file, then run `precompact trust` in {tmp_path.resolve()}")
        assert str(error.value) == f"{error.value.problem}; {error.value.fix}"


def test_an_invalid_value_a_variable_sets_names_the_variable_not_the_file(tmp_path):
    write(tmp_path, config.render(VALUES))
    with pytest.raises(ConfigError) as error:
        config.load(tmp_path, environ={"PRECOMPACT_CLUSTER": "ftp://x"})
    assert str(error.value).startswith("chain.cluster ftp://x is not an http(s) URL with a host and a valid port")
    assert "(set by PRECOMPACT_CLUSTER); correct or unset PRECOMPACT_CLUSTER: set e.g. " in str(error.value)
    assert str(tmp_path) not in str(error.value)


def test_pubkey_check_without_the_solana_stack():
    assert config.is_pubkey("11111111111111111111111111111111")
    assert config.is_pubkey("CQgNWSVqkwgUVHZ1aqdTv8YJnJqPVXHhZxxcCDABBZwa")
    assert not config.is_pubkey("CQgNWSVqkwgUVHZ1aqdTv8YJnJqPV")
    assert not config.is_pubkey("CQgNWSVqkwgUVHZ1aqdTv8YJnJqPVXHhZxxcCDABBZwazz")
    assert not config.is_pubkey("0OIl")
    assert not config.is_pubkey("")
