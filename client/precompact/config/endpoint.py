"""How a URL precompact talks to is shown: the Solana RPC endpoint (`git_url_shown` is the git
remote's, below). The RPC endpoint (`chain.cluster`), wherever it is shown or kept: a
message, a verdict, `logs/precompact-errors.log`, the index (which Layer 2 pushes), `status
--json`, the brief, the MCP tools, the viewer.

Hosted endpoints carry the user's API key in the URL (`https://mainnet.helius-rpc.com/?api-key=...`,
`https://solana-mainnet.g.alchemy.com/v2/<key>`, `https://x.quiknode.pro/<token>/`), and these
texts are pasted into issues and read by the model. So an endpoint is shown as its scheme, host
and port, with any path, query or fragment as "…", never a user or password; the whole URL is
used only to connect (`chain/rpc.Cluster`). Redaction is not relied on: it cannot know every
provider's key. Stdlib and git_env's rule of which schemes keep a user only (the hook imports
config)."""

from __future__ import annotations

import hashlib
import ipaddress
import re
import urllib.parse

from precompact.boundary import git_env

HIDDEN = "…"
# A value with no host to show: all of it is left out.
NO_HOST = "(not a URL with a host)"
# What a shown endpoint is made of: a URL's plain characters, so it needs no quoting anywhere.
_PLAIN = re.compile(r"[A-Za-z0-9:/._~%\[\]-]+")


def shown(url: str) -> str:
    """`url` as precompact shows it: `scheme://host[:port]`, then `/…` when the URL has a path,
    query or fragment; only plain URL characters, whatever `url` holds (the index's copy is
    outside input). A shown form shows as itself."""
    parts = _split(url)
    host = parts.hostname if parts is not None else None
    if parts is None or not host:
        return NO_HOST
    try:
        address = ipaddress.ip_address(host)
        host = f"[{address}]" if address.version == 6 else str(address)
    except ValueError:
        host = urllib.parse.quote(host, safe="%")
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:  # not a number, or out of range
        port = f":{HIDDEN}"
    hidden = f"/{HIDDEN}" if parts.path not in ("", "/") or parts.query or parts.fragment else ""
    scheme = parts.scheme if _PLAIN.fullmatch(parts.scheme) else HIDDEN
    return f"{scheme}://{host}{port}{hidden}"


def hidden_digest(url: str) -> str | None:
    """When `shown(url)` leaves part of `url` out (a user, a password, a path, a query), the
    start of the whole URL's SHA-256, for `trust`: a change to the hidden part still shows as a
    change, and the key does not."""
    parts = _split(url)
    if parts is not None and not (
        parts.username or parts.password or parts.path not in ("", "/") or parts.query or parts.fragment
    ):
        return None
    return hashlib.sha256(url.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def scrubbed(text: str, url: str) -> str:
    """`text` (an HTTP library's error, an endpoint's own error message) with every part of `url`
    that `shown` leaves out replaced by "…": such texts may repeat the URL they were given."""
    text = text.replace(url, shown(url))
    parts = _split(url)
    if parts is None:
        return text
    userinfo = parts.netloc.rpartition("@")[0]
    secrets = [
        userinfo,
        parts.path + (f"?{parts.query}" if parts.query else ""),
        parts.path,
        parts.query,
        parts.fragment,
    ]
    for secret in sorted((s for s in secrets if len(s) > 1), key=len, reverse=True):
        text = text.replace(secret, HIDDEN)
    return text


def _split(url: str) -> urllib.parse.SplitResult | None:
    try:
        return urllib.parse.urlsplit(url)
    except ValueError:  # an unclosed IPv6 bracket, a netloc that normalises into another
        return None


def git_url_shown(url: str) -> str:
    """A git remote's URL as precompact shows it, wherever it is shown (doctor, trust, a refusal,
    `projects --forget`): no password, and for any scheme but ssh no user either
    (`https://TOKEN@github.com/...` carries a token as the user; git_env.url_problem refuses both
    in git.url), a query or fragment as "…". The path is kept, as it names the repository, but
    for each segment that holds a git host's token (`…/ghp_…/repo.git`, GitLab's
    `…/oauth2/glpat-…/…`: `git_env.holds_token`, which url_problem refuses too), shown as "…".
    What is left is a URL git can be given with a credential helper supplying the rest when it
    holds no "…". A password holding a `/`, which git would not take as one, is hidden up to the
    last `@` all the same. `host:path` and paths have only such segments to hide."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        host, colon, path = url.partition(":")
        if git_env.is_local_url(url) or not colon:
            return git_env.tokens_hidden(url, HIDDEN)
        return f"{host}:{git_env.tokens_hidden(path, HIDDEN)}"
    end = git_env.userinfo_end(rest)
    if end != -1:
        user = rest[:end]
        name = user.partition(":")[0]
        login = f"{name}@" if name and scheme.lower() in git_env.LOGIN_SCHEMES else ""
        # A password holding a `/`, `?` or `#`: what the user was is not shown either.
        within = git_env.AUTHORITY_END.search(user) is None
        rest = (login if within else f"{HIDDEN}@") + rest[end + 1 :]
    if cut := re.search(r"[?#]", rest):
        rest = rest[: cut.start() + 1] + HIDDEN
    path_start = m.start() if (m := git_env.AUTHORITY_END.search(rest)) else len(rest)
    return f"{scheme}://{rest[:path_start]}{git_env.tokens_hidden(rest[path_start:], HIDDEN)}"
