"""Recall across every project this machine archived (`recall --everywhere`, plain `recall`
outside a project, the viewer's home page): commands the user runs, never the model's MCP tools,
which serve the session's own project only (edges/mcp_server.py).

Federated: each registered project keeps its own index (recall/fulltext.py) and they are opened
together, in this process, one after the other; no machine-wide copy of any project's words
exists, so `projects --forget` purges the registry's line, the documents made of other agents'
sessions and the project's Layer 2 git directory, and no lock is held
on more than one project at a time. The ranking is one BM25 over all of them, not a list per
project: each phrase's IDF and the average entry length are those of every project together.
Each project's tantivy index is asked with each phrase boosted to the IDF over every project,
its best matches are scored exactly with the average over every project, and the merge stops
once nothing left out could pass the last hit by more than the spread of the projects' average
lengths (`_merged`: exact where scores differ; a tie is shown with that bound, `Searched.bound`).
docs/sessions.md and docs/performance.md give the measurement this design was chosen by.

Trust: only projects in this machine's registry are searched (precompact wrote or imported a
savepoint there), and in each only the savepoints this machine wrote and its record vouches for
(fulltext's own rule); hits are quoted data, and nothing found here is put into a brief.
"""

from __future__ import annotations

import heapq
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from precompact.boundary import git_env, logs_dir, quoting
from precompact.errors import PrecompactError
from precompact.local import registry, savepoint_log
from precompact.recall import fulltext
from precompact.transcript import agents

if TYPE_CHECKING:
    import tantivy


@dataclass(frozen=True)
class Project:
    """A registered project as `precompact projects` lists it."""

    path: Path
    instances: tuple[str, ...]
    registered: str
    present: bool
    savepoints: int = 0
    last_savepoint: str | None = None
    reason: str | None = None  # why its index could not be read, as the error said it (it names paths: quote it)


def projects() -> list[Project]:
    """Every registered project: still there or not, its savepoints and the newest one's time."""
    listed = []
    for found in registry.projects():
        if not found.present():
            listed.append(Project(found.path, found.instances, found.registered, False))
            continue
        try:
            saved = [s for s in savepoint_log.read(found.logs).savepoints if s.instance in found.instances]
        except (OSError, PrecompactError) as e:
            listed.append(Project(found.path, found.instances, found.registered, True, reason=str(e)))
            continue
        # When its hook saved it: one written later from its queue entry holds the conversation as
        # it was then (docs/sessions.md), and may be written after a savepoint saved later.
        newest = max(reversed(saved), key=lambda s: s.made_at, default=None)
        last = newest.made_timestamp if newest is not None else None
        listed.append(Project(found.path, found.instances, found.registered, True, len(saved), last))
    return listed


# What registers a project: a forgotten one's savepoints do not (local/registry.py).
NONE_REGISTERED_FIX = (
    "`precompact init` registers one, as does a savepoint in a project you did not forget "
    "(`precompact projects --add PATH` registers one you forgot)"
)


def registered(path: Path) -> registry.Registered:
    """The project the registry lists at `path` (`show --project`, `projects --forget`): a path
    merely trusted once, or forgotten, is not one. RegistryError naming the listing when none."""
    known = registry.registered(path)
    if known is None:
        raise registry.RegistryError(
            f"{quoting.inline(os.path.abspath(path))} is not a registered project; `precompact projects` lists "
            "them (`precompact projects --add PATH` registers a project of yours again)"
        )
    return known


@dataclass(frozen=True)
class Forgotten:
    project: registry.Registered
    removed: tuple[Path, ...]  # precompact's git directories removed with it
    kept: tuple[tuple[Path, Path], ...]  # (git directory, the other registered project that uses it)
    again: bool = False  # it was forgotten already: what its hooks made outside it since is removed


def forget(path: Path, url: str | None = None) -> Forgotten:
    """Removes every copy precompact keeps of the project's text outside it (the documents it
    made of its Codex and Gemini sessions, and its Layer 2 git directory, under the state
    directory; each project's recall index is in its own logs/), then the project from the
    registry, the one user-level file that names it. A git directory another registered project
    uses is kept; one holding savepoints the remote does not hold now refuses the whole forget,
    before anything is removed (they may be the only copy): the remote is asked (at `url`, else
    the project's approved git.url), and one that cannot be asked refuses it too. A project
    forgotten already is forgotten again: its copies outside it removed, its mark kept.
    RegistryError when it is neither registered nor forgotten."""
    from precompact.config import settings as configuration
    from precompact.remote import gitstore  # only here: GitPython's import is a tenth of a search's command

    known = registry.registered(path)
    where = registry.forgotten(path) if known is None else None
    if where is not None:  # forgotten already: what its hooks made outside it since is removed again
        known = registry.Registered(where, (), "")
    elif known is None:
        known = registered(path)
    others = {
        store: other.path
        for other in registry.projects()
        if other.path != known.path
        for store in git_env.stores_of(other.path)
    }
    if url is not None:
        configuration.check_git_url(url, "--url")
    removed, kept = [], []
    for store, unpushed in gitstore.unpushed(known.path).items():
        if store in others:
            kept.append((store, others[store]))
        elif unpushed:
            fix = "`precompact flush` there pushes them" if known.present() else "they may be the only copy"
            raise ForgetRefused(
                f"not forgotten: its git directory {store} holds savepoints the remote never got "
                f"({', '.join(quoting.inline(b) for b in unpushed)}); {fix}, or remove that directory by hand first"
            )
        else:
            removed.append(store)
    if removed:
        _check_held(
            known, url if url is not None else _approved_url(known, removed), skipped=[store for store, _ in kept]
        )
    agents.forget(known.logs)
    for store in removed:
        gitstore.remove_store(store)
    return Forgotten(registry.forget(known.path) or known, tuple(removed), tuple(kept), again=where is not None)


def _approved_url(known: registry.Registered, stores: list[Path]) -> str:
    """The URL the project's savepoints were pushed to, from its approved configuration (a URL
    a repository wrote would be its word on whether the savepoints are safe)."""
    from precompact.config import settings as configuration
    from precompact.remote import gitstore

    cannot = f"not forgotten: cannot tell whether the remote holds the savepoints of its git directory {', '.join(map(str, stores))}"
    given = f"`precompact projects --forget {quoting.inline(str(known.path))} --url URL` asks the remote at URL"
    if not known.present():
        raise ForgetRefused(
            f"{cannot}: the project, whose git.url names the remote, is no longer there; {given}, or remove that directory by hand first"
        )
    try:
        return gitstore.remote_url(gitstore.Target.of(configuration.load(known.path)))
    except PrecompactError as e:
        raise ForgetRefused(f"{cannot}: {e}; {given}") from None


def _check_held(known: registry.Registered, url: str, skipped: list[Path]) -> None:
    """Refuses the forget unless the remote at `url`, asked now, holds every branch of each git
    directory of the project that is to be removed (all but `skipped`)."""
    from precompact.config import endpoint
    from precompact.remote import gitstore

    shown = endpoint.git_url_shown(url)
    try:
        lacking = gitstore.not_held_by(known.path, url, skipped)
    except gitstore.GitStoreError as e:
        raise ForgetRefused(
            f"not forgotten: cannot tell whether {quoting.inline(shown)} still holds the savepoints of its git directory ({e}); "
            "run it again once the remote answers, or remove that directory by hand first (they may be the only copy)"
        ) from None
    for store, missing in lacking.items():
        if not missing:
            continue
        branches = ", ".join(quoting.inline(b) for b in missing)
        fix = (
            "`precompact flush` there pushes them again"
            if known.present()
            else f"`git --git-dir {store} push {shown} 'refs/heads/*:refs/heads/*'` puts them back"
        )
        raise ForgetRefused(
            f"not forgotten: {quoting.inline(shown)} does not hold what its git directory {store} holds ({branches}: deleted or forced over since they were pushed) and they may be the only copy; {fix}, or remove that directory by hand first"
        )


class ForgetRefused(PrecompactError):
    """`projects --forget` would remove savepoints that exist nowhere else."""


@dataclass
class Searched:
    results: fulltext.Results = field(default_factory=fulltext.Results)
    projects: int = 0  # the projects searched
    # None when the hits are proven the best by one BM25 over every project; else how far above
    # the last hit shown, at most (a fraction of its score), an entry left out could score: the
    # merge stops once only entries within the spread of the projects' average entry lengths
    # could still pass it (module docstring).
    bound: float | None = None


K1, B = 1.2, 0.75  # tantivy's BM25 constants (its explanations show them)
F32_SLACK = 1e-5  # tantivy scores in 32-bit floats: bounds are widened by this much, relative
GROWTH = 4  # an index asked for more matches asks for this many times as many, up to this many times the limit


def search(
    query: str,
    since: str | None = None,
    role: str | None = None,
    tool: str | None = None,
    agent: str | None = None,
    limit: int = fulltext.MAX_HITS,
) -> Searched:
    """The entries of every registered project that best match `query`, best first, ranked by
    one BM25 over all of them; each hit names its project."""
    phrases, since_unix = fulltext.request(query, role, since)
    tokens = fulltext.analyzed(phrases)
    searched = Searched()
    notes = searched.results.notes
    present = []
    for found in registry.projects():
        if found.present():
            present.append(found)
        else:
            notes.append(
                f"project {quoting.inline(str(found.path))} is not there any more (moved or deleted): not searched; "
                f"`precompact projects --forget {quoting.inline(str(found.path))}` removes it"
            )
    searched.projects = len(present)
    if not present:
        notes.append(f"no project is registered on this machine yet: {NONE_REGISTERED_FIX}")
        return searched
    parts: list[tuple[registry.Registered, fulltext.Part]] = []
    with logs_dir.answers_kept_together():
        for found in present:
            try:
                opened = fulltext.part(found.logs, found.instances, agent)
            except (OSError, PrecompactError) as e:
                notes.append(f"project {quoting.inline(str(found.path))} not searched: {quoting.inline(str(e))}")
                continue
            if opened is not None:
                notes.extend(opened.notes)
                parts.append((found, opened))
    if not tokens or not parts:
        return searched
    ranked: list[tuple[float, int, tantivy.DocAddress]] = []
    for any_phrase in (False, True):
        ranked, searched.bound, searched.results.matched = _merged(
            [p for _, p in parts], tokens, any_phrase, since_unix, role, tool, limit
        )
        if ranked and any_phrase:
            notes.append(fulltext.ANY_WORD_NOTE)
        if ranked or len(tokens) == 1:
            break
    if searched.bound is not None:
        notes.append(
            f"ranked by one BM25 over every project, up to {searched.bound:.1%}: an entry not shown may score "
            "that much above the last one shown (the projects' average entry lengths differ)"
        )
    results = searched.results
    # Excerpts are read project by project, then each hit put back at its place in the ranking.
    shown: list[tuple[int, fulltext.Hit]] = []
    for order, (found, opened) in enumerate(parts):
        chosen = [(rank, address) for rank, (_, n, address) in enumerate(ranked) if n == order]
        if not chosen:
            continue
        own = fulltext.Results()
        made = opened.hits([address for _, address in chosen], phrases, str(found.path), own)
        notes.extend(own.notes)
        results.matched += own.matched  # entries withheld or saved twice, taken off the count
        shown.extend((chosen[number][0], hit) for number, hit in zip(made, own.hits, strict=True))
    results.hits = [hit for _, hit in sorted(shown, key=lambda pair: pair[0])]
    return searched


def idf(entries: int, having: int) -> float:
    """tantivy's BM25 IDF of a word `having` of `entries` hold."""
    return math.log(1 + (entries - having + 0.5) / (having + 0.5))


def _merged(
    parts: list[fulltext.Part],
    tokens: list[list[str]],
    any_phrase: bool,
    since: float | None,
    role: str | None,
    tool: str | None,
    limit: int,
) -> tuple[list[tuple[float, int, tantivy.DocAddress]], float | None, int]:
    """The best `limit` matches over every part by one BM25 over all of them, (score, part,
    address) best first, a tie in the parts' order (the registry's) then in the order each
    part's entries were indexed, however tantivy merged them (which entries tied at a part's
    cut it gives is tantivy's choice); None or the bound on what was left out
    (Searched.bound); the matches in all.

    Each index is asked with each phrase boosted by its IDF over every index (word counts
    summed) over its own: its IDF is then the global one, and its boosted score s' differs from
    the global score s only in the entries' average length, per phrase s / s' being a weighted
    mean of 1 and r = avgdl over every index / the index's own, so s' * min(1, r) <= s <= s' * max(1, r).
    Candidates are scored exactly (their tf and length from tantivy's explanation, the global
    average) best upper bound first, until no candidate's bound and no index's last match
    times max(1, r) can pass the limit-th score by more than the spread of r; an index whose
    last match could is asked for more (GROWTH times, up to GROWTH times the limit)."""
    documents = sum(p.documents for p in parts)
    if not documents:
        return [], None, 0
    average = sum(p.tokens for p in parts) / documents
    words = {w for phrase in tokens for w in phrase}
    having = [{w: p.having(w) for w in words} for p in parts]
    total = {w: sum(h[w] for h in having) for w in words}
    global_idf = [sum(idf(documents, total[w]) for w in phrase) for phrase in tokens]
    asked: dict[int, fulltext.Asked] = {}
    for n, p in enumerate(parts):
        held = [all(having[n][w] for w in phrase) for phrase in tokens]
        if not (any(held) if any_phrase else all(held)) or not p.tokens:
            continue
        local = [sum(idf(p.documents, having[n][w]) for w in phrase) for phrase in tokens]
        boosts = [g / own if own > 0 else 0.0 for g, own in zip(global_idf, local, strict=True)]
        asked[n] = p.query(tokens, any_phrase, boosts, since, role, tool)
    if not asked:
        return [], None, 0
    ratio = {n: average * parts[n].documents / parts[n].tokens for n in asked}
    high = {n: max(1.0, r) * (1 + F32_SLACK) for n, r in ratio.items()}
    allowed = max(max(1.0, r) / min(1.0, r) for r in ratio.values()) * (1 + 2 * F32_SLACK)
    want = dict.fromkeys(asked, limit)
    got: dict[int, list[tuple[float, tantivy.DocAddress, int]]] = {}
    matched = 0
    for n, query in asked.items():
        got[n], count = parts[n].best(query, limit, count=True)
        matched += count
    scored: dict[tuple[int, int], float] = {}  # (part, entry id) -> its exact score

    def exact(n: int, address: tantivy.DocAddress, entry: int) -> float:
        key = (n, entry)
        if key not in scored:
            factors = parts[n].factors(tokens, address)
            scored[key] = sum(
                weight * (K1 + 1) * tf / (tf + K1 * (1 - B + B * length / average))
                for weight, found in zip(global_idf, factors, strict=True)
                if found is not None
                for tf, length in (found,)
            )
        return scored[key]

    while True:
        # (upper bound, part, address, entry id)
        candidates = sorted(
            ((score * high[n], n, address, entry) for n, hits in got.items() for score, address, entry in hits),
            key=lambda c: (-c[0], c[1], c[3]),
        )
        kept: list[float] = []  # the best `limit` exact scores so far, a min-heap
        left_out = 0.0  # the upper bound of the best candidate not scored exactly
        for upper, n, address, entry in candidates:
            if len(kept) == limit and kept[0] * allowed >= upper:
                left_out = upper
                break
            heapq.heappush(kept, exact(n, address, entry))
            if len(kept) > limit:
                heapq.heappop(kept)
        chosen = sorted(
            ((scored[(n, entry)], n, entry, address) for _, n, address, entry in candidates if (n, entry) in scored),
            key=lambda c: (-c[0], c[1], c[2]),
        )[:limit]
        best = [(score, n, address) for score, n, _, address in chosen]
        last = best[-1][0] if len(best) == limit else 0.0
        # An entry an index did not give scores at most its last s' times max(1, r).
        beyond = {n: hits[-1][0] * high[n] for n, hits in got.items() if len(hits) == want[n]}
        short = [n for n, bound in beyond.items() if bound > last * allowed]
        if not short or max(want[n] for n in short) >= GROWTH * limit:
            worst = max([left_out, *(beyond[n] for n in short)])
            gap = worst / last - 1 if last else 0.0
            return best, (gap if gap > 2 * F32_SLACK else None), matched
        for n in short:
            want[n] *= GROWTH
            got[n], _ = parts[n].best(asked[n], want[n])
