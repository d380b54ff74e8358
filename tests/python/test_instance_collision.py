"""Two projects on one machine that would write one chain of savepoints (review13b F4, setup half):
`init` and `trust` refuse the second, naming the first and the fix; `doctor` names a pair set up
before they did; `projects --add` refuses to bring the pair back, and `savepoint` and `import`
refuse to write another project's instance named on the command line or in the environment.
Colliding is writing the same instance to the same remote's branch, or to the same
on-chain record (the same authority, chain on): projects with their own remote and key share an
instance name freely, and so do the work trees of one repository."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from precompact.config import settings as configuration
from precompact.local import registry
from support.commands import INSTANCE, precompact, run_git
from support.projects import CLOSED_PORT_URL, approve_as_is, new_project

RENAMED = f"{INSTANCE} (2)"


def repository(path: Path) -> Path:
    """A git repository at `path` with one commit."""
    path.mkdir(parents=True)
    run_git(path, "init", "-q", "-b", "main")
    run_git(
        path,
        "-c",
        "user.name=Dev",
        "-c",
        "user.email=dev@example.invalid",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "initial",
    )
    return path


def init(project: Path, *args: str) -> subprocess.CompletedProcess:
    """`init --json` of INSTANCE, chain off, in clear: only the git remote can be shared."""
    return precompact(project, "init", "--json", "--instance", INSTANCE, "--chain", "off", "--no-encrypt", *args)


def two_clones(tmp_path: Path) -> tuple[Path, Path]:
    """Two clones of one repository (one remote) on this machine, the first set up with INSTANCE."""
    origin = repository(tmp_path / "origin")
    for name in ("a", "b"):
        subprocess.run(["git", "clone", "-q", str(origin), str(tmp_path / name)], check=True)
    first = init(tmp_path / "a")
    assert first.returncode == 0, first.stderr
    return tmp_path / "a", tmp_path / "b"


def refusal(done: subprocess.CompletedProcess) -> str:
    """The one line a refused `--json` command gives in the error schema, exit 1."""
    assert done.returncode == 1, done.stdout + done.stderr
    failure = json.loads(done.stdout)
    assert failure["exit_code"] == 1
    [line] = failure["error"].splitlines()
    return line


def test_init_refuses_an_instance_another_clone_pushes_to_the_same_branch(tmp_path):
    """review13b F4: `init` of NAME in a second clone, NAME already the first clone's, said
    nothing; each clone's push then hid the other's savepoints."""
    a, b = two_clones(tmp_path)
    line = refusal(init(b, "--keypair", str(tmp_path / "b-id.json")))
    assert line.startswith(
        f'the instance "{INSTANCE}" is already this machine\'s project {a}, which writes it to the same git branch (precompact/savepoints-'
    ), line
    assert f'at "{tmp_path / "origin" / ".git"}")' in line, "the remote named as compared: the repository git opens"
    assert (
        f'two projects writing one chain hide each other\'s savepoints; pass another --instance (e.g. "{RENAMED}"), or work in {a}'
        in line
    )
    assert not (b / configuration.CONFIG_NAME).exists() and not (tmp_path / "b-id.json").exists(), (
        "refused before anything is written or made"
    )
    plain = precompact(b, "init", "--yes", "--instance", INSTANCE, "--chain", "off", "--no-encrypt")
    assert plain.returncode == 1 and len(plain.stderr.strip().splitlines()) == 1, plain.stderr
    assert "is already this machine's project" in plain.stderr
    other = precompact(b, "init", "--json", "--instance", RENAMED, "--chain", "off", "--no-encrypt")
    assert other.returncode == 0, other.stderr
    again = init(a, "--force")
    assert again.returncode == 0, "the project that holds the instance sets itself up again"


def test_the_same_remote_spelled_another_way_is_the_same_branch(tmp_path):
    """The remote's URL compared as precompact reads it: a file:// URL, or a link, to the same
    bare repository is the same remote."""
    origin = repository(tmp_path / "origin")
    (tmp_path / "link").symlink_to(origin)
    a = repository(tmp_path / "a")
    b = repository(tmp_path / "b")
    run_git(a, "remote", "add", "origin", f"file://{origin}")
    run_git(b, "remote", "add", "origin", str(tmp_path / "link"))
    assert init(a).returncode == 0
    assert "which writes it to the same git branch" in refusal(init(b))


def test_init_refuses_an_instance_another_project_records_with_the_same_key(tmp_path):
    """Chain on in both with one signing key: the same on-chain record, whatever the remotes."""
    first = new_project(tmp_path, "a", git_layer=True, chain_layer=True, instance=INSTANCE)
    second = repository(tmp_path / "b")
    run_git(second, "remote", "add", "origin", str(repository(tmp_path / "b-origin")))
    on = ("init", "--json", "--instance", INSTANCE, "--cluster", CLOSED_PORT_URL, "--no-encrypt")
    line = refusal(precompact(second, *on, "--keypair", str(first.keypair_file)))
    authority = str(first.authority().pubkey())
    assert f"project {first.path}, which writes it to the same on-chain record (authority {authority})" in line
    assert "git branch" not in line, "the remotes differ"
    chain_off = precompact(
        second,
        "init",
        "--json",
        "--instance",
        INSTANCE,
        "--chain",
        "off",
        "--no-encrypt",
        "--keypair",
        str(first.keypair_file),
    )
    assert chain_off.returncode == 0, (
        f"the same key with the chain off in one of them, other remotes: {chain_off.stderr}"
    )


def test_projects_with_their_own_remote_and_key_share_an_instance_name(tmp_path):
    """What the suite's many projects of one name are, and two people's clones of a template."""
    (tmp_path / "home").mkdir()
    first = new_project(tmp_path, "a", git_layer=True, chain_layer=True, instance=INSTANCE)
    second = new_project(tmp_path, "b", git_layer=True, chain_layer=True, instance=INSTANCE)
    assert {p.path for p in registry.projects()} == {first.path, second.path}
    for project in (first, second):
        checks = json.loads(precompact(project.path, "doctor", "--json", home=tmp_path / "home").stdout)
        assert "instance" not in {c["check"] for c in checks}


def test_trust_refuses_a_configuration_naming_another_clones_instance(tmp_path):
    """The same in `trust`: a .precompact.toml copied from the first clone into the second."""
    a, b = two_clones(tmp_path)
    (b / configuration.CONFIG_NAME).write_bytes((a / configuration.CONFIG_NAME).read_bytes())
    line = refusal(precompact(b, "trust", "--yes", "--json"))
    assert f"is already this machine's project {a}, which writes it to the same git branch" in line
    assert f'set another instance in {b / configuration.CONFIG_NAME} and trust it again (e.g. "{RENAMED}")' in line
    assert precompact(b, "status").returncode != 0, "not approved: nothing runs there"


def test_an_instance_is_free_again_once_its_project_names_another_is_gone_or_not_approved(tmp_path):
    """The registry keeps every name a project had: what counts is its approved configuration now."""
    a, b = two_clones(tmp_path)
    renamed = precompact(a, "init", "--force", "--json", "--instance", RENAMED, "--chain", "off", "--no-encrypt")
    assert renamed.returncode == 0, renamed.stderr
    assert INSTANCE in registry.registered(a).instances
    assert init(b).returncode == 0, "the registry still lists the old name at a, but a's file names another"
    c = tmp_path / "c"
    subprocess.run(["git", "clone", "-q", str(tmp_path / "origin"), str(c)], check=True)
    (b / configuration.CONFIG_NAME).unlink()
    assert init(c).returncode == 0, "b no longer set up: nothing there writes the instance"
    d = tmp_path / "d"
    subprocess.run(["git", "clone", "-q", str(tmp_path / "origin"), str(d)], check=True)
    config = c / configuration.CONFIG_NAME
    config.write_text(config.read_text() + "\n# changed since it was approved\n")
    assert init(d).returncode == 0, "c's file changed since approved: its hooks write nothing"


def test_a_linked_worktree_may_share_its_repositorys_instance(tmp_path):
    """Work trees of one repository share its git store, which keeps two chains apart (docs/cli.md)."""
    main = repository(tmp_path / "main")
    run_git(main, "remote", "add", "origin", str(repository(tmp_path / "origin")))
    run_git(main, "worktree", "add", "-q", str(tmp_path / "feature"), "-b", "feature")
    assert init(main).returncode == 0
    done = init(tmp_path / "feature")
    assert done.returncode == 0, done.stderr


def test_a_registry_that_cannot_be_read_refuses_nothing(tmp_path):
    _, b = two_clones(tmp_path)
    registry.registry_path().write_text("not the registry\n")
    done = init(b)
    assert done.returncode == 0, done.stderr
    assert "warning: this project is not in the machine's registry" in done.stderr, "said as before"


def test_doctor_names_two_projects_set_up_before_init_refused_it(tmp_path):
    """A pair that predates the refusal: b approved with a's instance and remote, then registered."""
    a, b = two_clones(tmp_path)
    (tmp_path / "home").mkdir()
    (b / configuration.CONFIG_NAME).write_bytes((a / configuration.CONFIG_NAME).read_bytes())
    approve_as_is(b)
    registry.register(b, INSTANCE)  # as its first savepoint registers it (`projects --add` refuses it now)
    for here, there in ((a, b), (b, a)):
        done = precompact(here, "doctor", home=tmp_path / "home")
        assert done.returncode == 1, done.stdout
        [line] = [line for line in done.stdout.splitlines() if line.startswith("✗ instance: ")]
        assert line.startswith(
            f'✗ instance: "{INSTANCE}" is also another project\'s on this machine ({there} writes it to the same git branch (precompact/savepoints-'
        ), line
        assert line.endswith(
            f"two projects writing one chain hide each other's savepoints; fix: give one of them another instance: `precompact init --force --instance '{RENAMED}'` there"
        ), line
        [found] = [
            c
            for c in json.loads(precompact(here, "doctor", "--json", home=tmp_path / "home").stdout)
            if c["check"] == "instance"
        ]
        assert not found["ok"] and str(there) in found["detail"]
    saved = precompact(b, "savepoint", "--no-transcript", "--json")
    assert saved.returncode in (0, 3), "its approved instance: never refused for the pair doctor names"


def test_projects_add_refuses_a_forgotten_project_whose_instance_another_took_meanwhile(tmp_path):
    """a forgotten, b set up with a's instance and remote (nothing registered wrote it), then
    `projects --add a`: the pair `init` refuses, walked around. Refused the same way, naming b
    and the fix; a stays forgotten (its Layer 2 waits, pushing nothing over b's branch)."""
    a, b = two_clones(tmp_path)
    assert precompact(a, "projects", "--forget", str(a)).returncode == 0
    assert init(b).returncode == 0, "a is forgotten: nothing registered writes the instance"
    shell = {"PRECOMPACT_INSTANCE": "Someone else #1", "PRECOMPACT_BRANCH": "elsewhere"}
    line = refusal(precompact(b, "projects", "--add", str(a), "--json", env=shell))
    assert line.startswith(f'the instance "{INSTANCE}" is already this machine\'s project {b}'), (
        f"fix16d: a's hooks write its approved instance and branch, whatever the shell that adds it says: {line}"
    )
    line = refusal(precompact(b, "projects", "--add", str(a), "--json"))
    assert line.startswith(
        f'the instance "{INSTANCE}" is already this machine\'s project {b}, which writes it to the same git branch'
    ), line
    assert (
        f'set another instance in {a / configuration.CONFIG_NAME} and trust it again (e.g. "{RENAMED}"), or work in {b}'
        in line
    )
    assert registry.registered(a) is None and registry.forgotten(a) == a
    renamed = precompact(a, "init", "--force", "--json", "--instance", RENAMED, "--chain", "off", "--no-encrypt")
    assert renamed.returncode == 0, renamed.stderr
    assert precompact(b, "projects", "--add", str(a)).returncode == 0, "its own instance now"


def test_savepoint_and_import_refuse_another_projects_instance_named_on_the_command_line_or_environment(tmp_path):
    """b set up as another instance, then saving into a's instance by --instance or
    PRECOMPACT_INSTANCE (a user's shell keeps it): what `init` refused, walked around. Refused,
    naming a and the fix, and nothing written; b's own instance, and a free one, save."""
    a, b = two_clones(tmp_path)
    other = precompact(b, "init", "--json", "--instance", RENAMED, "--chain", "off", "--no-encrypt")
    assert other.returncode == 0, other.stderr
    fix = "name another instance with --instance or PRECOMPACT_INSTANCE, or none to save as the configured one"
    for args, env in (
        (("savepoint", "--no-transcript", "--instance", INSTANCE), None),
        (("savepoint", "--no-transcript"), {"PRECOMPACT_INSTANCE": INSTANCE}),
        (("import", "--instance", INSTANCE), None),
    ):
        line = refusal(precompact(b, *args, "--json", env=env))
        assert line.startswith(f'the instance "{INSTANCE}" is already this machine\'s project {a}, which writes it'), (
            line
        )
        assert f'{fix} (e.g. "{RENAMED}"), or work in {a}' in line, line
    assert not (b / "logs" / "precompact-savepoint.jsonl").exists(), "refused before anything is written"
    for args in (("--instance", "Someone else #1"), ()):
        done = precompact(b, "savepoint", "--no-transcript", "--json", *args)
        assert done.returncode in (0, 3), done.stdout + done.stderr


def test_a_remote_and_its_git_directory_are_the_same_branch(tmp_path):
    """review15a F2: git reaches one repository as `DIR` and as `DIR/.git`: the second clone's
    remote spelled so is refused as the first's."""
    origin = repository(tmp_path / "origin")
    a = repository(tmp_path / "a")
    b = repository(tmp_path / "b")
    run_git(a, "remote", "add", "origin", str(origin))
    run_git(b, "remote", "add", "origin", f"{origin}/.git")
    assert init(a).returncode == 0
    assert "which writes it to the same git branch" in refusal(init(b))


SAME_REPOSITORY = [
    "https://github.com/acme/chain",
    "https://github.com/acme/chain.git",
    "https://github.com/acme/chain.git/",
    "https://GitHub.com/acme/chain",
    "https://github.com/Acme/Chain",
    "git@github.com:ACME/chain.git",
    "https://github.com:443/acme/chain",
    "https://ghp_0123456789abcdefghijABCDEFGHIJ012345@github.com/acme/chain",
    "git@github.com:acme/chain.git",
    "ssh://git@github.com/acme/chain.git",
    "ssh://git@github.com:22/acme/chain",
]
OTHER_REPOSITORIES = [
    "https://github.com/acme/chain-2",
    "https://github.com/acme2/chain",
    "https://gitlab.com/acme/chain",
    "ssh://git@github.com:2222/acme/chain",
]


def test_every_spelling_of_one_network_remote_is_one_and_others_stay_apart(tmp_path):
    """review15a F2: https and ssh, `.git` and a trailing `/`, the host's case, its default port and
    a user are spellings of one repository (two clones made one over ssh and one over https is an
    ordinary state), and so is the path's case (review16a F6: GitHub and GitLab take `Acme/Chain` to
    `acme/chain`); another owner, name, host or port is another."""
    from precompact.ops import instance_collision

    keys = {instance_collision._compared_url(url, tmp_path) for url in SAME_REPOSITORY}
    assert keys == {"github.com/acme/chain"}, keys
    others = [instance_collision._compared_url(url, tmp_path) for url in OTHER_REPOSITORIES]
    assert len(set(others)) == len(others) and not keys & set(others), others


def user_git_config(text: str) -> None:
    """`text` as the user's global git configuration ($XDG_CONFIG_HOME/git/config: the test's own
    XDG_CONFIG_HOME, conftest.own_trust_store), which git reads for every precompact it starts."""
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "git"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config").write_text(text)


def test_a_remote_named_through_the_users_url_alias_is_the_same_branch(tmp_path):
    """fix16d: the user's `url.<base>.insteadOf` (or `pushInsteadOf`) makes `<mirror>/origin` the
    first project's remote, which git then pushes to: refused as the same branch. The same alias in
    the second project's own repository configuration steers no push of precompact's (Layer 2
    pushes from its own git directory), so there it is another remote, and `init` goes ahead."""
    origin = repository(tmp_path / "origin")
    a = repository(tmp_path / "a")
    run_git(a, "remote", "add", "origin", str(origin))
    assert init(a).returncode == 0
    for key in ("insteadOf", "pushInsteadOf"):
        b = repository(tmp_path / f"b-{key}")
        alias = f"{tmp_path}/mirror-{key}/"  # a path, so that nothing is looked up on the network
        run_git(b, "remote", "add", "origin", f"{alias}origin")
        run_git(b, "config", f"url.{tmp_path}/.{key}", alias)
        done = init(b)
        assert done.returncode == 0, f"the project's own {key} is not the user's: {done.stdout}{done.stderr}"
        user_git_config(f'[url "{tmp_path}/"]\n\t{key} = {alias}\n')
        line = refusal(init(b, "--force"))
        assert line.startswith(
            f'the instance "{INSTANCE}" is already this machine\'s project {a}, which writes it to the same git branch'
        ), line
        assert f'at "{origin / ".git"}")' in line, "named as git pushes to it: the alias resolved"
        user_git_config("")


def test_the_users_url_aliases_resolve_as_git_resolves_them(tmp_path):
    """fix16d: the longest matching prefix wins, pushInsteadOf before insteadOf (git pushes to
    its rewrite), and the rewritten URL is then compared as any other: `gh:acme/chain` under
    `url."https://github.com/".insteadOf gh:` is `https://github.com/acme/chain`; each
    insteadOf rewrite agrees with git's own (`git ls-remote --get-url`)."""
    from precompact.boundary import git_env
    from precompact.ops import instance_collision

    user_git_config(
        '[url "https://github.com/"]\n\tinsteadOf = gh:\n'
        '[url "https://gitlab.com/"]\n\tinsteadOf = gh:other/\n'
        '[url "ssh://git@github.com/acme/"]\n\tpushInsteadOf = https://github.com/acme/\n'
        '[url "https://a b/"]\n\tinsteadOf = spaced:\n'
    )
    rewrites = git_env.user_url_rewrites()
    expected = {
        "gh:acme/chain": "https://github.com/acme/chain",
        "gh:other/chain": "https://gitlab.com/chain",
        "https://github.com/acme/chain": "ssh://git@github.com/acme/chain",
        "spaced:x": "https://a b/x",
        "git@github.com:acme/chain.git": "git@github.com:acme/chain.git",
    }
    assert {url: git_env.pushed_url(url, rewrites) for url in expected} == expected
    for url in ("gh:acme/chain", "gh:other/chain", "spaced:x"):
        assert git_env.pushed_url(url, ({}, rewrites[1])) == run_git(tmp_path, "ls-remote", "--get-url", url).strip()
    keys = {
        instance_collision._compared_url(git_env.pushed_url(url, rewrites), tmp_path)
        for url in ("gh:acme/chain", "git@github.com:acme/chain.git", "https://github.com/acme/chain")
    }
    assert keys == {"github.com/acme/chain"}, keys


def test_savepoint_refuses_a_branch_or_key_the_environment_chose_another_project_writes(tmp_path):
    """fix16d: b set up with INSTANCE on another branch (no collision), then `savepoint` with
    PRECOMPACT_BRANCH naming a's branch (a user's shell keeps it): a's chain, written from b.
    Refused, naming the variable; b's own configuration still saves."""
    a, b = two_clones(tmp_path)
    own = init(b, "--branch", "b/savepoints", "--keypair", str(tmp_path / "b-id.json"))
    assert own.returncode == 0, own.stdout + own.stderr
    for env in (
        {"PRECOMPACT_BRANCH": configuration.DEFAULT_BRANCH},
        {"PRECOMPACT_BRANCH": configuration.DEFAULT_BRANCH, "PRECOMPACT_INSTANCE": INSTANCE},
    ):
        line = refusal(precompact(b, "savepoint", "--no-transcript", "--json", env=env))
        assert line.startswith(
            f'the instance "{INSTANCE}" is already this machine\'s project {a}, which writes it to the same git branch'
        ), line
        assert "unset PRECOMPACT_BRANCH, which chose where these savepoints go, or name another instance" in line, line
    assert not (b / "logs" / "precompact-savepoint.jsonl").exists(), "refused before anything is written"
    for env in ({}, {"PRECOMPACT_BRANCH": "b/elsewhere"}):
        done = precompact(b, "savepoint", "--no-transcript", "--json", env=env)
        assert done.returncode in (0, 3), done.stdout + done.stderr


def test_savepoint_refuses_an_authority_the_environment_chose_another_project_records_with(tmp_path):
    """fix16d: chain on in both, each with its own key (no collision), then `savepoint` in b with
    PRECOMPACT_AUTHORITY naming a's key: a's on-chain record. Refused, naming the variable."""
    first = new_project(tmp_path, "a", git_layer=True, chain_layer=True, instance=INSTANCE)
    second = repository(tmp_path / "b")
    run_git(second, "remote", "add", "origin", str(repository(tmp_path / "b-origin")))
    on = ("init", "--json", "--instance", INSTANCE, "--cluster", CLOSED_PORT_URL, "--no-encrypt")
    own = precompact(second, *on, "--keypair", str(tmp_path / "b-id.json"))
    assert own.returncode == 0, own.stdout + own.stderr
    env = {"PRECOMPACT_AUTHORITY": str(first.authority().pubkey())}
    line = refusal(precompact(second, "savepoint", "--no-transcript", "--json", env=env))
    assert f"which writes it to the same on-chain record (authority {env['PRECOMPACT_AUTHORITY']})" in line, line
    assert "unset PRECOMPACT_AUTHORITY, which chose where these savepoints go" in line, line
