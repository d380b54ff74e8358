"""How precompact runs git. Every git process it starts, through GitPython (Layer 2, see
gitstore.open_repository) or its own (the snapshot's git state, the brief's `git status`, the
logs/ check through `run`), gets the command line and the environment built here, so no program
a repository's own configuration names can run, while the user's global and system
configuration still applies (their credential helpers and `core.sshCommand` push as they do for
the user). (No GitPython here: the hook imports this module.)

Fixed overrides, on every command line (`-c` beats every configuration file):
- `core.hooksPath` is /dev/null: none of the repository's hooks can run;
- `core.fsmonitor` off: `git status` starts no monitor;
- `commit.gpgSign`, `push.gpgSign` off and `log.showSignature` off: no signing program runs;
- `safe.bareRepository=explicit`: a bare repository committed inside a project is never found
  by directory search (precompact names its own repository explicitly);
- `protocol.ext.allow=never`: no remote URL of the form `ext::<command>`;
- `core.sharedRepository=0600`: every file git writes is 0600 (0400 for what it makes read-only:
  objects and packs) and every directory it makes 0700, whatever the umask and whatever a
  configuration says; precompact's own git directory (`store`) is made so, and git records the
  setting in its config there (with `receive.denyNonFastforwards`, which only a repository
  served to a push reads: never this one). (`-c` passes no further than git's own processes on
  this repository: a remote on this machine is written by its receive-pack under its own
  configuration and the user's umask.)
- GIT_PROXY_COMMAND is empty: no `core.gitProxy` (git:// only, which nobody pushes over);
- GIT_NO_REPLACE_OBJECTS and GIT_NO_LAZY_FETCH: no refs/replace/ substitutes an object's bytes,
  and no missing object of a partial clone is fetched from the remote its configuration names.

Every key git knows is classified in CLASSIFIED for the commands precompact runs in a project's
repository (neutralised, harmless, or not read); tests/python/test_git_keys.py fails on a key
`git help --config` lists that it does not classify.

The repository's own values: `git config --list --show-scope` (once per repository and process)
says which settings come from the repository (`.git/config`, `config.worktree`, and every file
they include, wherever it is); each one that names a program (PROGRAM_KEYS: ssh command,
askpass, editor, pager, diff/merge/filter drivers and textconv, gpg programs, alternate refs
command, a disabled TLS check) is set again, after all files, to the user's global or system
value for the same key, or a neutral one. Credential helper lists are emptied and refilled with
the user's global and system helpers. These go through GIT_CONFIG_COUNT/KEY/VALUE, not `-c`, so that no subsection name can smuggle
an `=` into them. A driver named in `.gitattributes` whose commands are then empty does nothing.
Only the repository's own configuration is read, not a submodule's: so `git status` is run with
`--ignore-submodules=dirty` (git would start a `git status` inside each submodule).

The environment is fixed: the variables below, taken from precompact's own environment, plus
what precompact sets (GIT_DIR, a private index, an identity, no terminal prompts, no optional
locks so that `git status` never rewrites the user's index); no other GIT_* variable passes.
Kept on purpose, so pushing to a real remote works as it does for the user: PATH (git, ssh and
credential helpers), the ssh agent's socket, the desktop session bus (keyring credential
helpers), proxies and CA bundles; and HOME (~/.gitconfig and ~/.ssh) and the XDG directories
(`$XDG_CONFIG_HOME/git/config`, `attributes`, `ignore`), as `boundary/user_roots` gives them:
absolute, and outside the project (every entry point confines them first: a hook, the worker,
the MCP server, every command), so the only global configuration git reads is the user's. git
itself is named by its absolute path (`executable`), found once on that confined PATH.

Layer 2 reads no configuration from the project's repository at all: its savepoint branches and
their objects live in precompact's own git directory for the project (`store`: a bare repository
under the user's state directory, keyed by the project's common git directory, which
`common_directory` finds by reading files, its config written by `git init` alone), the
GIT_DIR of every Layer 2 process, plumbing and transport alike. Talking to a remote (push,
fetch, ls-remote, doctor's dry run: `transport`) goes to one URL given on the command line
(`git.url` in `.precompact.toml`, approved by `trust` and checked by `url_problem`; for a project
configured before `git.url` existed, `remote_url`: the remote's first `pushurl`, else its first
`url`, read as data from the project's config file, no include followed). So the project's
`pushurl` list, `url.*.insteadOf`, `http.*` (cookie files, proxies, TLS),
`remote.*.receivepack`/`uploadpack`, `credential.*`, hooks, filters, `gc.*` and every other key
can neither add a destination nor name a file or a program for it; the user's global and
system configuration (credentials, ssh, their own insteadOf) still applies.

Left to the remote: a remote reached over the network runs its own hooks on its side, as a
server does; a remote that is a path on this machine is run here by git's own receive-pack or
upload-pack with its hooks, alternate refs command and fsmonitor off and no work-tree update
(`TRANSFER_GUARD`): its configuration file is still read by git, and git has no switch to stop
that, so only keys that run a program or write outside the remote are overridden.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import urllib.parse
from pathlib import Path

from precompact.boundary import private_file, processes, user_roots
from precompact.errors import PrecompactError

# Taken from precompact's environment, each classified by boundary/user_roots (KEPT, or CONFINED:
# in the modes the agent starts, `confine` has already unset a CA file, ssh agent socket,
# temporary directory or session bus the project points into its own tree, and PATH has lost its
# entries there). HOME and the XDG directories (where git finds the user's global configuration,
# attributes and ignore files) are not taken: user_roots gives them (`_kept`), never a relative
# path nor, in those modes, a place in the project (a `git/config` there naming a filter would run it).
KEPT = (
    "PATH", "USER", "LOGNAME", "TMPDIR", "SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS",
    "http_proxy", "https_proxy", "no_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR",
)  # fmt: skip
OVERRIDES = (
    "core.hooksPath=" + os.devnull,
    "core.fsmonitor=false",
    "commit.gpgSign=false",
    "push.gpgSign=false",
    "log.showSignature=false",
    "safe.bareRepository=explicit",
    "protocol.ext.allow=never",
    "core.sharedRepository=0600",
)
FIXED = {
    "LC_ALL": "C",
    "LANGUAGE": "C",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_PROXY_COMMAND": "",
    # A partial clone's missing object is fetched from its promisor remote, which the
    # repository's configuration names: never.
    "GIT_NO_LAZY_FETCH": "1",
    # refs/replace/ (the project's) would make an object id read as other bytes.
    "GIT_NO_REPLACE_OBJECTS": "1",
}
# Settings (git's lower-case spelling; subsections kept) that name a program, or let one be
# impersonated, and the neutral value that replaces the repository's when the user has none.
PROGRAM_KEYS = (
    (re.compile(r"core\.sshcommand"), "ssh"),
    (re.compile(r"core\.askpass"), ""),
    (re.compile(r"core\.(editor|pager)|sequence\.editor"), "cat"),
    (re.compile(r"pager\..+"), "false"),
    (re.compile(r"core\.alternaterefscommand"), ""),
    (re.compile(r"diff\.external|diff\..+\.(command|textconv)|merge\..+\.driver"), ""),
    (re.compile(r"filter\..+\.(clean|smudge|process)"), ""),
    (re.compile(r"filter\..+\.required"), "false"),
    (re.compile(r"gpg\.program|gpg\..+\.program|gpg\.ssh\.defaultkeycommand"), ""),
    (re.compile(r"http\.(.+\.)?sslverify"), "true"),
)
HELPER_LISTS = re.compile(r"credential\.(.+\.)?helper")

NEUTRALISED, HARMLESS, NOT_READ = "neutralised", "harmless", "not read"
# Every key git knows (`git help --config`), as the project's repository configuration could set
# it, for the read-only commands precompact runs in that repository (`run`: status, rev-parse,
# ls-files, check-ignore, config; Layer 2 runs none there): NEUTRALISED (OVERRIDES, PROGRAM_KEYS, HELPER_LISTS or
# FIXED's variables set it, which `neutralises` checks), HARMLESS (why it can run no program and
# write no file outside the repository's git directory), or NOT_READ (a transport key: push,
# fetch and ls-remote run in precompact's own git directory). The first pattern that matches a
# key (lower case, `<name>` as git prints it) decides; tests/python/test_git_keys.py fails on a
# key git knows that none matches, so a new git's keys fail CI until they are classified here.
# Kept as text: only `classification` reads them, and compiling them all is a few ms of every
# hook process that imports this module (re caches what it compiles).
CLASSIFIED: tuple[tuple[str, str, str], ...] = (
    (r"core\.(hookspath|fsmonitor|sharedrepository)|commit\.gpgsign|push\.gpgsign|log\.showsignature", NEUTRALISED, "set on every command line"),
    (r"safe\.barerepository|protocol\.ext\.allow", NEUTRALISED, "set on every command line"),
    (r"core\.(sshcommand|askpass|editor|pager|alternaterefscommand)|sequence\.editor|pager\..+", NEUTRALISED, "a program: PROGRAM_KEYS"),
    (r"diff\.external|diff\..+\.(command|textconv)|merge\..+\.driver|filter\..+\.(clean|smudge|process|required)", NEUTRALISED, "a program: PROGRAM_KEYS"),
    (r"gpg\.program|gpg\..+\.program|gpg\.ssh\.defaultkeycommand|http\.(.+\.)?sslverify", NEUTRALISED, "a program: PROGRAM_KEYS"),
    (r"credential\.(.+\.)?helper", NEUTRALISED, "a program: HELPER_LISTS"),
    (r"core\.gitproxy", NEUTRALISED, "GIT_PROXY_COMMAND is empty"),
    (r"core\.usereplacerefs", NEUTRALISED, "GIT_NO_REPLACE_OBJECTS"),
    (r"remote\..+\.(promisor|partialclonefilter)|promisor\..+", NEUTRALISED, "GIT_NO_LAZY_FETCH: no object is fetched"),
    (r"(remote|remotes|url|http|ssh|protocol|transfer|fetch|push|credential|credentialcache|credentialstore|bundle)\..+", NOT_READ, "transport: run in precompact's own git directory"),
    (r"(receive|uploadpack|uploadpackfilter|uploadarchive|lsrefs)\..+", HARMLESS, "read when serving the repository to a client, which precompact never does"),
    (r"trace2\..+", HARMLESS, "git reads trace2 keys only from system and global configuration"),
    (r"safe\.directory", HARMLESS, "git reads it only from protected (system, global, command line) configuration"),
    (r"include\.path|includeif\..+\.path", HARMLESS, "brings in other keys, listed and classified under the including file's scope"),
    (r"alias\..+", HARMLESS, "an alias never replaces a built-in command, and precompact runs only built-ins"),
    (r"(fsck|sendemail|imap|instaweb|web|browser|man|help|gitweb|gui|guitool|gitcvs|mergetool|difftool|rerere|am|apply|mailinfo|mailmap|interactive|rebase|stash|notes|tag|clean|revert|add|checkout|branch|pull|worktree|submodule|format|tar|fastimport|maintenance|gc|repack|pack|commitgraph|bitmappseudomerge|sequence|completion)\..+", HARMLESS, "read only by commands precompact never runs"),
    (r"(merge|diff|blame|grep|log|pretty|column|color|advice|i18n|status|showbranch|versionsort|commit)\..+", HARMLESS, "output format or another command's behaviour: no program, no file outside"),
    (r"gpg\..+", HARMLESS, "read when signing or verifying, which is off (commit.gpgSign, log.showSignature)"),
    (r"(user|author|committer)\..+", HARMLESS, "the identity on a savepoint commit"),
    (r"(index|splitindex|sparse|reftable|extensions|feature|attr|fsmonitor)\..+", HARMLESS, "repository format and index layout"),
    (r"core\.(attributesfile|excludesfile)", HARMLESS, "read as attributes (drivers neutralised) or ignore patterns"),
    (r"core\.(worktree|bare)", HARMLESS, "which work tree `git status` lists: file names, redacted in the snapshot"),
    (r"core\..+", HARMLESS, "format, performance, locking and checks inside the repository's git directory"),
)  # fmt: skip
# What git's own receive-pack or upload-pack, serving a remote that is a path on this machine,
# is told over that repository's configuration: no hooks (pre-receive, proc-receive, ...), no
# alternate refs command, no fsmonitor, no work-tree update (whose filters the remote's
# configuration names), no automatic gc.
TRANSFER_GUARD = (
    "core.hooksPath=" + os.devnull,
    "core.alternateRefsCommand=true",
    "core.fsmonitor=false",
    "receive.denyCurrentBranch=refuse",
    "receive.autogc=false",
)
USER_SCOPES = ("system", "global")
LISTING_TIMEOUT_SECONDS = 10


def classification(key: str) -> tuple[str, str] | None:
    """(kind, why) of a git configuration key in the project's repository: CLASSIFIED's first match."""
    return next(((kind, why) for pattern, kind, why in CLASSIFIED if re.fullmatch(pattern, key.lower())), None)


def neutralises(key: str) -> bool:
    """Whether every value the project's configuration gives `key` is overridden or unused."""
    key = key.lower()
    fixed = {"core.gitproxy": "GIT_PROXY_COMMAND", "core.usereplacerefs": "GIT_NO_REPLACE_OBJECTS"}
    return (
        key in {pair.partition("=")[0].lower() for pair in OVERRIDES}
        or any(pattern.fullmatch(key) for pattern, _ in PROGRAM_KEYS)
        or bool(HELPER_LISTS.fullmatch(key))
        or (key in fixed and fixed[key] in FIXED)
        or (
            bool(re.fullmatch(r"remote\..+\.(promisor|partialclonefilter)|promisor\..+", key))
            and FIXED.get("GIT_NO_LAZY_FETCH") == "1"
        )
    )


def environment(location: Path, **ours: str) -> dict[str, str]:
    """The whole environment of a git process for the repository at `location` (the directory
    git runs in, or ours["GIT_DIR"]): the kept variables, the fixed ones, the repository's
    program settings replaced, `ours`. Extra settings in ours as GIT_CONFIG_COUNT/KEY_n/VALUE_n
    come after the replacements."""
    base = _kept()
    extra = _config_pairs(ours)
    plain = {k: v for k, v in ours.items() if not k.startswith("GIT_CONFIG_")}
    pairs = [*_replacements(str(location), plain.get("GIT_DIR")), *extra]
    return {**base, **plain, **_as_variables(pairs)}


class NoGit(PrecompactError, FileNotFoundError):
    """No git on PATH's absolute entries outside the project: as git missing (an OSError), and a
    failure the user can cause and mend (PATH), so one of precompact's own."""


@functools.cache
def executable() -> str:
    """git's absolute path, looked up once per process on PATH (`processes.program_on_path`: its
    absolute entries only; every entry point first drops the project's own with
    `user_roots.confine`), so that neither a relative entry nor a `bin/git` the project ships is
    ever run as precompact's git, whatever directory git is started in."""
    found = processes.program_on_path("git")
    if found is None:
        raise NoGit(
            "git is not on PATH (its absolute entries outside the project): install git, or put the folder that holds it on PATH"
        )
    return found


def argv(*args: str) -> list[str]:
    """A git command line with the fixed overrides, git named by its absolute path."""
    overrides = [option for pair in OVERRIDES for option in ("-c", pair)]
    return [executable(), *overrides, *args]


def common_directory(repository: Path) -> Path | None:
    """The common git directory of the repository at `repository` (a work tree, or a git
    directory), found by reading its files at that one place as git's discovery would, with no
    process and no configuration read: `.git` (a directory, or a file `gitdir: <path>` as a linked
    work tree or a submodule has), else `repository` itself when it holds HEAD; then a linked
    work tree's `commondir`. None when it is none of those."""
    dot_git = repository / ".git"
    if dot_git.is_dir():
        git_dir = dot_git
    elif dot_git.is_file():
        named = _small_text(dot_git)
        if named is None or not named.startswith("gitdir: "):
            return None
        git_dir = repository / named.removeprefix("gitdir: ").strip()
    elif (repository / "HEAD").is_file():
        git_dir = repository
    else:
        return None
    common = git_dir
    if (git_dir / "commondir").is_file():
        named = _small_text(git_dir / "commondir")
        if named is None:
            return None
        common = git_dir / named.strip()
    if not (git_dir / "HEAD").is_file() or not (common / "objects").is_dir():
        return None
    return common.resolve()


def _small_text(path: Path) -> str | None:
    """A pointer file's text (`.git` as a file, `commondir`): a line, not a file of any size."""
    try:
        with path.open("rb") as f:
            return f.read(4096).decode("utf-8", "surrogateescape")
    except OSError:
        return None


def project_setting(common: Path, key: str) -> list[str]:
    """Every value `key` has in the project's own configuration file (`config` in its common git
    directory `common`), read as data: `git config --file` follows no include and reads no other
    file, outside any repository (GIT_DIR names none)."""
    done = processes.run_git(
        argv("config", "--file", str(common / "config"), "--get-all", key),
        cwd=Path("/"),
        env={**_kept(), "GIT_DIR": os.devnull},
        timeout=LISTING_TIMEOUT_SECONDS,
    )
    return done.stdout.splitlines() if done.returncode == 0 else []


def store_directory(common: Path) -> tuple[Path, str]:
    """precompact's own git directory for the project whose common git directory is `common`,
    and the object format it has: $XDG_STATE_HOME/precompact/git/<digest>.git (default
    ~/.local/state), the digest that of the common directory's resolved path and the project's
    object format (`extensions.objectFormat`, sha1 or sha256), so every work tree of one
    repository shares it and a repository made again in the same place with the other format
    gets its own (the commits a store holds keep their ids)."""
    object_format = [*project_setting(common, "extensions.objectformat"), "sha1"][0].lower()
    return _store_named(common.resolve(), object_format), object_format


def _store_named(common: Path, object_format: str) -> Path:
    key = os.fsencode(common) + b"\0" + object_format.encode()
    name = hashlib.sha256(key).hexdigest()[:32]
    return private_file.state_directory() / "git" / f"{name}.git"


def stores_of(project: Path) -> list[Path]:
    """precompact's git directories that may hold the savepoint branches of the project at
    `project` and exist: the store of the repository it is in (its own, or one above it, as git
    finds it); for a project no longer there, the stores that a `.git` in it or above it would
    have had, in either object format. (A linked work tree that is gone cannot be traced back to
    its repository: none.)"""
    for place in (project, *project.parents):
        common = common_directory(place)
        if common is not None:
            found = [store_directory(common)[0]]
            break
    else:
        found = [
            _store_named((place / ".git").resolve(), object_format)
            for place in (project, *project.parents)
            for object_format in ("sha1", "sha256")
        ]
    return [store for store in found if (store / "HEAD").is_file()]


def store(common: Path, timeout: float) -> Path | processes.CompletedProcess:
    """The store of the project at `common` (`store_directory`), made when absent: a bare
    repository in a 0700 directory, `git init` with no template and the project's object format,
    its config holding nothing but what git writes there; or why git could not make it."""
    directory, object_format = store_directory(common)
    if (directory / "HEAD").is_file():
        return directory
    private_file.make_directory(directory.parent)
    made = processes.run_git(
        argv("init", "--quiet", "--bare", "--template=", f"--object-format={object_format}", str(directory)),
        cwd=Path("/"),
        env=_kept(),
        timeout=timeout,
    )
    return directory if made.returncode == 0 else made


def transport(
    store: Path,
    command: str,
    url: str,
    *args: str,
    options: tuple[str, ...] = (),
    timeout: float,
    silence: float | None = None,
) -> processes.CompletedProcess:
    """`git command options... url args...` (push, fetch or ls-remote) in precompact's own git
    directory `store`: no setting of the project's repository is read, and the only destination
    is `url`. A remote that is a path on this machine is served by git's own programs under
    TRANSFER_GUARD. (`--` before the URL: a URL the configuration gives as `--upload-pack=...` is
    never an option.) `silence`: processes.run_git's, for a transfer that shows its progress."""
    program = {"push": "receive-pack"}.get(command, "upload-pack")
    guarded = (
        (f"--{program}=git {' '.join(f'-c {pair}' for pair in TRANSFER_GUARD)} {program}",) if is_local_url(url) else ()
    )
    return processes.run_git(
        argv(command, *options, *guarded, "--", url, *args),
        cwd=store,
        env={**_kept(), "GIT_DIR": str(store)},
        timeout=timeout,
        silence=silence,
    )


def _kept() -> dict[str, str]:
    return {**{k: os.environ[k] for k in KEPT if k in os.environ}, **user_roots.for_children(), **FIXED}


def remote_url(repository: Path, remote: str) -> str | None:
    """The one URL precompact talks to for `remote` of `repository`: its first `pushurl`, else
    its first `url`, as written in the repository's own config file (no insteadOf of the
    project's applied, no include followed); None when it has none. Read as data
    (`project_setting`), never through git's remote machinery."""
    common = common_directory(repository)
    if common is None:
        return None
    for key in ("pushurl", "url"):
        values = project_setting(common, f"remote.{remote}.{key}")
        if values and values[0]:
            return values[0]
    return None


# base -> the prefixes that stand for it, each in the order git first reads it (remote.c's
# rewrites: `url.<base>.insteadOf` values, or `url.<base>.pushInsteadOf` values).
Rewrites = dict[str, list[str]]


def user_url_rewrites() -> tuple[Rewrites, Rewrites]:
    """The `url.<base>.pushInsteadOf` and `url.<base>.insteadOf` rewrites (in that order) of the
    configuration `transport` pushes under: the user's global (`~/.gitconfig`,
    `$XDG_CONFIG_HOME/git/config`, as user_roots gives HOME and XDG_CONFIG_HOME) and the system's
    (`/etc/gitconfig`), with what they include; read by git itself, outside any repository. Never
    the project's repository configuration: `transport` runs in precompact's own git directory,
    whose configuration holds no url.* key, so the project's aliases steer no push, and none steers
    what is compared. None to read, or git unable to read them (a configuration git cannot parse
    fails every push too): none."""
    try:
        done = processes.run_git(
            argv("config", "-z", "--includes", "--get-regexp", r"^url\..*\.(push)?insteadof$"),
            cwd=Path("/"),
            env={**_kept(), "GIT_DIR": os.devnull},
            timeout=LISTING_TIMEOUT_SECONDS,
        )
    except (processes.TimeoutExpired, OSError):
        return {}, {}
    push: Rewrites = {}
    fetch: Rewrites = {}
    for entry in done.stdout.split("\0") if done.returncode == 0 else ():
        key, newline, prefix = entry.partition("\n")
        if not newline:
            continue  # a key with no value: git refuses it when it reads the remote (config_error_nonbool)
        for name, rewrites in ((".pushinsteadof", push), (".insteadof", fetch)):
            if key.startswith("url.") and key.endswith(name):
                rewrites.setdefault(key[len("url.") : -len(name)], []).append(prefix)
                break
    return push, fetch


def pushed_url(url: str, rewrites: tuple[Rewrites, Rewrites]) -> str:
    """The URL git pushes to when given `url` under `rewrites` (`user_url_rewrites`): as git's
    remote.c (add_url_alias, alias_url) makes it, the pushInsteadOf rewrite when one matches, else
    the insteadOf one, else `url`; of the prefixes `url` starts with, the longest counts (of equal
    ones, the first base git read) and is replaced by its base."""
    for each in rewrites:
        longest: tuple[str, str] | None = None
        for base, prefixes in each.items():
            for prefix in prefixes:
                if url.startswith(prefix) and (longest is None or len(prefix) > len(longest[1])):
                    longest = (base, prefix)
        if longest is not None:
            return longest[0] + url[len(longest[1]) :]
    return url


URL_SCHEMES = ("https://", "http://", "ssh://", "git://", "file://")
# Schemes whose user name is a login, not a secret (`ssh://git@host`); in any other the user of
# `https://TOKEN@github.com/...` is a token.
LOGIN_SCHEMES = ("ssh", "git+ssh", "ssh+git")
# Tokens a git host issues, as a URL's path may carry them (`https://host/ghp_…/repo.git`,
# GitLab's `…/oauth2/glpat-…/…`): the shapes, minimum lengths included, of
# transcript/redact.py's github_token, gitlab_token, huggingface_token, atlassian_token and jwt
# patterns (the redaction owner, which boundary and config sit below;
# tests/python/test_doctor_identity_and_url.py holds each sample to both). Narrow on purpose: a
# repository's name is not of these shapes, and `url_problem` refuses a URL holding one.
_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"gh[pousr]_[A-Za-z0-9]{36}|github_pat_\w{22}"
    r"|gl(?:pat|ptt|rt|dt|soat|cbt|ffct|ft|imt|agent|oas)-[\w-]{20}|GR1348941[\w-]{20}"
    r"|hf_[A-Za-z0-9]{34}|api_org_[A-Za-z]{34}|ATATT3[\w=-]{150}"
    r"|eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8}"
    r")"
)


def holds_token(text: str) -> bool:
    """Whether `text` (a URL, or one segment of its path) holds a token of a shape `_TOKEN`
    knows, %-escapes decoded as the server would decode them."""
    return _TOKEN.search(urllib.parse.unquote(text)) is not None


# Where a URL's authority ends, as git reads it for credentials (credential_from_url) and curl
# for the host: the first `/`, `?` or `#` after `scheme://`.
AUTHORITY_END = re.compile(r"[/?#]")
# `name:` at the start of the authority whose colon starts no port (`host:8080/`): a password
# follows, up to an `@`, even where it holds a `/`, `?` or `#` (`https://alice:pa/ss@host/…`).
_PASSWORD_START = re.compile(r"[^/?#@:\[]*:(?!\d{1,5}(?:[/?#]|$))")
# `name:` and 1 to 5 digits, then a `/`, `?` or `#`, and an `@` further on, with no `@` before
# it: git and curl read a host, a port and an `@` in the path (`https://host:8080/team/@x.git`);
# whoever wrote it may mean a user and a password holding a `/` (`https://alice:2024/Secret@host/…`).
# Nothing tells which: never guessed.
_PORT_OR_PASSWORD = re.compile(r"[^/?#@:\[]*:\d{1,5}[/?#][^@]*@")


def userinfo_end(rest: str) -> int:
    """Where the user information of a URL ends: the index of its `@` in `rest` (the URL after
    `scheme://`), -1 when it has none. It is whatever is before the last `@` of the authority
    (`https://us@er:pw@host/…`), and, where `rest` starts `name:` with a colon that starts no
    port, before the URL's last `@`: a password holding a `/`, `?` or `#` (`https://alice:pa/ss@host/…`;
    git would take `alice:pa` for the host, curl refuses it, and it is a secret written down all the
    same). An `@` in the path is no user (`https://host/team/@scope/x.git`). Where it may be either
    (`port_or_password`), it is taken to run to the last `@`, so that no password is shown."""
    authority = AUTHORITY_END.search(rest)
    at = rest.rfind("@", 0, authority.start() if authority else len(rest))
    return rest.rfind("@") if at == -1 and (_PASSWORD_START.match(rest) or port_or_password(rest)) else at


def port_or_password(rest: str) -> bool:
    """Whether `rest` (a URL after `scheme://`) starts `name:digits` followed by a `/`, `?` or `#`
    with an `@` later and none before: a port and an `@` in the path to git and curl, or a password
    of digits holding a `/` to whoever wrote it (`_PORT_OR_PASSWORD`)."""
    return _PORT_OR_PASSWORD.match(rest) is not None


def tokens_hidden(path: str, hidden: str) -> str:
    """`path` (the path of a git URL, or a local path) with each `/`-separated segment that
    holds a token replaced by `hidden`: the rest still names the repository."""
    return "/".join(hidden if holds_token(segment) else segment for segment in path.split("/"))


def url_problem(url: str) -> str | None:
    """Why git must not be given `url` as the one remote precompact pushes to, None when it may:
    https, http, ssh, git and file URLs, scp-like `[user@]host:path`, and absolute paths. Never a
    remote helper (`ext::<command>`, `<name>::…`, which start programs), an option (`-…`), or a
    line break or control character (which could hide the rest of it from whoever reads it), nor
    credentials (`userinfo_end`: a password holding a `/` too, and `port_or_password`'s shape, which
    may be one): a password, on any scheme but ssh
    a user, which may be a token, or a token of a
    git host's shape anywhere in it (`holds_token`: `https://host/ghp_…/repo.git`)
    (`.precompact.toml` is shared; a credential helper keeps them)."""
    if not url:
        return "is empty"
    if any(c < " " or c == "\x7f" for c in url):
        return "holds a line break or control character"
    if url.startswith("-"):
        return "starts with '-', which git would read as an option"
    if "::" in url.split("/", 1)[0] and not url.startswith(URL_SCHEMES):
        return "names a remote helper (`ext::`, `<name>::`), which runs a program"
    if "://" in url:
        if not url.startswith(URL_SCHEMES):
            return f"uses a scheme other than {', '.join(s[:-3] for s in URL_SCHEMES)}"
        try:
            scheme = urllib.parse.urlsplit(url).scheme
        except ValueError:
            return "is not a URL git can parse"
        rest = url.partition("://")[2]
        if port_or_password(rest):
            return (
                "holds `name:digits/…@`, which git reads as a host and port with an `@` in the path, and which may be "
                "a user and a password (https://alice:2024/Secret@host/…): write an `@` in the path as %40, or keep "
                "the password in a credential helper"
            )
        end = userinfo_end(rest)
        if ":" in rest[: max(end, 0)]:
            return "holds a password (user:password@), which .precompact.toml must not keep"
        if end != -1 and scheme.lower() not in LOGIN_SCHEMES:
            return (
                f"holds a user name (user@), which on {scheme}:// may be a token, and .precompact.toml must not keep it"
            )
    elif is_local_url(url) and not url.startswith("/"):
        return "is a relative path; give the remote repository's absolute path"
    if holds_token(url):
        return "holds a token of a git host's shape (ghp_…, glpat-…), which .precompact.toml must not keep"
    return None


def is_local_url(url: str) -> bool:
    """Whether git reaches `url` as a path on this machine (git's own rule: no scheme, and no
    colon before the first slash, which would make it `host:path`)."""
    if url.startswith("file://"):
        return True
    colon, slash = url.find(":"), url.find("/")
    return "://" not in url and (colon == -1 or -1 < slash < colon)


MAX_CONFIG_BYTES = 1 << 20  # a configuration file read whole to see it includes no other


# The configuration files git reads besides the repository's own, with HOME and XDG_CONFIG_HOME
# as user_roots gives them (`_kept`): the user's global ones and the system one.
def _user_configs() -> list[Path]:
    home = Path(user_roots.home())
    return [Path(user_roots.config_home()) / "git" / "config", home / ".gitconfig", Path("/etc/gitconfig")]


def index_identity(cwd: Path) -> str | None:
    """The identity of everything `git ls-files --cached` run in `cwd` answers from, read from
    files with no process: where `cwd` resolves to; the `.git` of every directory from there up
    to the first that has one (so a repository made nearer changes it); that git directory's
    index, `commondir` and `config.worktree`; the common directory's `config`; the user's and the
    system's configuration files. Each file by its stamp (device, inode, size, modification and
    change times: git replaces its index by renaming a new file over it, and no tool sets a
    change time back). None when files cannot tell it: a `.git` that is a link or not of git's
    shape, or a configuration file that includes another (whose changes would not show here);
    then only git can answer."""
    where = os.path.realpath(cwd)
    found = _discovery(Path(where))
    if found is None:
        return None
    looked, git_dir = found
    parts = [where, *(_stamp(place / ".git") for place in looked)]
    configs = _user_configs()
    if git_dir is not None:
        common = git_dir
        if (named := _small_text(git_dir / "commondir")) is not None:
            common = git_dir / named.strip()
        parts += [str(git_dir), str(common), _stamp(git_dir / "index"), _stamp(git_dir / "commondir")]
        configs += [common / "config", git_dir / "config.worktree"]
    for config in configs:
        stamp = _stamp(config)
        parts.append(stamp)
        if stamp != "-" and not _includes_nothing(config):
            return None
    return "\n".join(parts)


def index_of(cwd: Path) -> tuple[Path, str] | None:
    """The index git's discovery from `cwd` would read, and `cwd`'s path from the top of that
    index's work tree, found from files alone (`_discovery`). None when no directory up holds a
    `.git`, or the first is a link or not of git's shape."""
    where = Path(os.path.realpath(cwd))
    found = _discovery(where)
    if found is None:
        return None
    looked, git_dir = found
    return None if git_dir is None else (git_dir / "index", where.relative_to(looked[-1]).as_posix())


def _discovery(where: Path) -> tuple[list[Path], Path | None] | None:
    """Git's discovery from `where`, read from files: the directories it looks in, from `where`
    up to the first that holds a `.git` (that one last), and the git directory found there (None
    when no directory up holds one): a `.git` directory, or the one a `.git` file names
    (`gitdir: <path>`, as a linked work tree or a submodule has). None when the first `.git` is a
    link or not of git's shape."""
    looked: list[Path] = []
    for place in (where, *where.parents):
        looked.append(place)
        dot_git = place / ".git"
        if not os.path.lexists(dot_git):
            continue
        if os.path.islink(dot_git):
            return None
        if os.path.isdir(dot_git):
            return looked, dot_git
        named = _small_text(dot_git)
        if named is None or not named.startswith("gitdir: "):
            return None
        return looked, place / named.removeprefix("gitdir: ").strip()
    return looked, None


def list_index(index: Path, pathspec: str, timeout: float) -> processes.CompletedProcess:
    """`git ls-files -z --cached -- pathspec` over the index file `index`, run from a git
    directory of our own made for it (empty: HEAD, objects, refs), so that nothing of the
    repository that holds the index is read: neither its configuration (which may not parse, or
    include what we never read) nor its hooks; only the index file itself."""
    import tempfile  # only here: it imports shutil, which a hook's quick paths do without

    with tempfile.TemporaryDirectory(prefix="precompact-index-") as empty:
        own = Path(empty)
        (own / "objects").mkdir()
        (own / "refs").mkdir()
        (own / "HEAD").write_text("ref: refs/heads/main\n")
        env = environment(own, GIT_DIR=str(own), GIT_INDEX_FILE=str(index))
        return processes.run_git(argv("ls-files", "-z", "--cached", "--", pathspec), cwd=own, env=env, timeout=timeout)


def _includes_nothing(config: Path) -> bool:
    """Whether a configuration file can be read and names no other file to include."""
    try:
        with config.open("rb") as f:
            text = f.read(MAX_CONFIG_BYTES + 1)
    except OSError:
        return False
    return len(text) <= MAX_CONFIG_BYTES and b"include" not in text.lower()


def _stamp(path: Path) -> str:
    """A file's identity as it is now (following a link), "-" when there is none."""
    try:
        info = os.stat(path)
    except OSError:
        return "-"
    return f"{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_mode}"


def run(cwd: Path, *args: str, timeout: float, binary: bool = False) -> processes.CompletedProcess:
    """`git args...` in `cwd` (found by git's own search from there), isolated."""
    return processes.run_git(argv(*args), cwd=cwd, env=environment(cwd), timeout=timeout, binary=binary)


def _replacements(location: str, git_dir: str | None) -> list[tuple[str, str]]:
    repository, user = _listing(location, git_dir)
    pairs: list[tuple[str, str]] = []
    for key in dict.fromkeys(repository):
        neutral = next((value for pattern, value in PROGRAM_KEYS if pattern.fullmatch(key)), None)
        if neutral is not None:
            values = [value for k, value in user if k == key]
            pairs.append((key, values[-1] if values else neutral))
    # An empty helper empties the list git has gathered so far, whichever key it is read from:
    # every list is emptied first, then the user's helpers are given again in their own order.
    if any(HELPER_LISTS.fullmatch(key) for key in repository):
        helpers = [(key, value) for key, value in user if HELPER_LISTS.fullmatch(key)]
        pairs += [(key, "") for key in dict.fromkeys(k for k in repository if HELPER_LISTS.fullmatch(k))]
        pairs += [(key, "") for key in dict.fromkeys(k for k, _ in helpers)]
        pairs += helpers
    return pairs


@functools.cache
def _listing(location: str, git_dir: str | None) -> tuple[list[str], list[tuple[str, str]]]:
    """The keys the repository's own configuration sets, and every global or system setting in
    the order git reads them.
    No answer (not a repository, git missing) lists nothing: git will say so itself."""
    env = {**_kept(), **({"GIT_DIR": git_dir} if git_dir else {})}
    try:
        done = processes.run_git(
            argv("config", "--list", "--show-scope", "-z"),
            cwd=Path(location),
            env=env,
            timeout=LISTING_TIMEOUT_SECONDS,
            binary=True,
        )
    except (OSError, processes.TimeoutExpired):
        return [], []
    fields = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    repository: list[str] = []
    user: list[tuple[str, str]] = []
    for scope, entry in zip(fields[::2], fields[1::2], strict=False):
        key, _, value = entry.partition("\n")
        if scope in USER_SCOPES:
            user.append((key, value))
        elif scope != "command":
            repository.append(key)
    return repository, user


def _config_pairs(ours: dict[str, str]) -> list[tuple[str, str]]:
    count = int(ours.get("GIT_CONFIG_COUNT", "0"))
    return [(ours[f"GIT_CONFIG_KEY_{i}"], ours[f"GIT_CONFIG_VALUE_{i}"]) for i in range(count)]


def _as_variables(pairs: list[tuple[str, str]]) -> dict[str, str]:
    if not pairs:
        return {}
    variables = {"GIT_CONFIG_COUNT": str(len(pairs))}
    for i, (key, value) in enumerate(pairs):
        variables[f"GIT_CONFIG_KEY_{i}"] = key
        variables[f"GIT_CONFIG_VALUE_{i}"] = value
    return variables
