"""Recall across every project this machine archived (`recall --everywhere`, plain `recall`
outside a project, the MCP tool's `everywhere`, the viewer's home page).

Federated: each registered project keeps its own index (recall/fulltext.py) and they are opened
together, in this process, one after the other; no machine-wide copy of any project's words
exists, so `projects --forget` purges the registry's line, the documents made of other agents'
sessions and the project's Layer 2 git directory, and no lock is held
on more than one project at a time. The ranking is one BM25 over all of them, not a list per
project: each index gives its matches with BM25's weight of each phrase in them, and the
IDF of each phrase is computed over the entries of every project together. (Each entry's length
is weighed against its own project's average, which FTS5 keeps per index.) For one phrase an
index gives only its best, whose order no IDF changes; for several, every match, as its own
IDFs could rank past its best one that the IDFs over every project rank among them. docs/sessions.md and
docs/performance.md give the measurement this design was chosen by.

Trust: only projects in this machine's registry are searched (precompact wrote or imported a
savepoint there), and in each only the savepoints this machine wrote and its record vouches for
(fulltext's own rule); hits are quoted data, and nothing found here is put into a brief.
"""

from __future__ import annotations

import heapq
import operator
import os
from dataclasses import dataclass, field
from pathlib import Path

from precompact.boundary import git_env, logs_dir, quoting
from precompact.errors import PrecompactError
from precompact.local import registry, savepoint_log
from precompact.recall import fulltext
from precompact.remote import gitstore
from precompact.transcript import agents


@dataclass(frozen=True)
class Project:
    """A registered project as `precompact projects` lists it."""

    path: Path
    instances: tuple[str, ...]
    registered: str
    present: bool
    savepoints: int = 0
    last_savepoint: str | None = None
    problem: str | None = None  # why its index could not be read


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
            listed.append(Project(found.path, found.instances, found.registered, True, problem=str(e)))
            continue
        newest = max((s.timestamp for s in saved if s.timestamp), default=None)
        listed.append(Project(found.path, found.instances, found.registered, True, len(saved), newest))
    return listed


@dataclass(frozen=True)
class Forgotten:
    project: registry.Registered
    removed: tuple[Path, ...]  # precompact's git directories removed with it
    kept: tuple[tuple[Path, Path], ...]  # (git directory, the other registered project that uses it)


def forget(path: Path) -> Forgotten:
    """Removes every copy precompact keeps of the project's text outside it (the documents it
    made of its Codex and Gemini sessions, and its Layer 2 git directory, under the state
    directory; each project's recall index is in its own logs/), then the project from the
    registry, the one user-level file that names it. A git directory another registered project
    uses is kept; one holding savepoints the remote never got refuses the whole forget, before
    anything is removed (they may be the only copy). RegistryError when it is not registered."""
    known = registry.registered(path)
    if known is None:
        raise registry.RegistryError(
            f"{quoting.inline(os.path.abspath(path))} is not a registered project; `precompact projects` lists them"
        )
    others = {
        store: other.path
        for other in registry.projects()
        if other.path != known.path
        for store in git_env.stores_of(other.path)
    }
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
    agents.forget(known.logs)
    for store in removed:
        gitstore.remove_store(store)
    return Forgotten(registry.forget(known.path) or known, tuple(removed), tuple(kept))


class ForgetRefused(PrecompactError):
    """`projects --forget` would remove savepoints that exist nowhere else."""


@dataclass
class Searched:
    results: fulltext.Results = field(default_factory=fulltext.Results)
    projects: int = 0  # the projects searched


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
        notes.append("no project is registered on this machine yet: `precompact init` or a savepoint registers one")
        return searched
    with logs_dir.answers_kept_together():
        pools = _pools(present, phrases, since_unix, role, tool, agent, limit, notes)
    entries = sum(pool.entries for _, pool in pools)
    weights = [fulltext.idf(entries, sum(pool.having[n] for _, pool in pools)) for n in range(len(phrases))]
    ranked = heapq.nsmallest(
        limit,
        (
            (-sum(map(operator.mul, weights, row_weights)), order, index, row)
            for order, (_, pool) in enumerate(pools)
            for index, (row, row_weights) in enumerate(zip(pool.rows, pool.weights, strict=True))
        ),
        key=lambda scored: scored[:3],
    )
    results = searched.results
    results.matched = sum(pool.matched for _, pool in pools)
    # Excerpts are read project by project, then each hit put back at its place in the ranking.
    shown: list[tuple[int, fulltext.Hit]] = []
    for order, (found, pool) in enumerate(pools):
        chosen = [(rank, index) for rank, (_, o, index, _) in enumerate(ranked) if o == order]
        if not chosen:
            continue
        own = fulltext.Results()
        made = fulltext.pool_hits(pool, [pool.rows[index] for _, index in chosen], phrases, str(found.path), own)
        notes.extend(own.notes)
        results.matched += own.matched  # entries withheld or saved twice, taken off the count
        shown.extend((chosen[number][0], hit) for number, hit in zip(made, own.hits, strict=True))
    results.hits = [hit for _, hit in sorted(shown, key=lambda pair: pair[0])]
    return searched


def _pools(
    present: list[registry.Registered],
    phrases: list[list[str]],
    since_unix: float | None,
    role: str | None,
    tool: str | None,
    agent: str | None,
    limit: int,
    notes: list[str],
) -> list[tuple[registry.Registered, fulltext.Pool]]:
    """Each project's share of the search (every phrase, else any of them when no project has
    an entry holding them all)."""
    pools: list[tuple[registry.Registered, fulltext.Pool]] = []
    for any_phrase in (False, True):
        pools = []
        for found in present:
            try:
                pool = fulltext.pool(
                    found.logs, found.instances, phrases, any_phrase, since_unix, role, tool, agent, limit
                )
            except (OSError, PrecompactError) as e:
                if not any_phrase:
                    notes.append(
                        f"project {quoting.inline(str(found.path))} not searched: {quoting.single_line(str(e))}"
                    )
                continue
            if not any_phrase:
                notes.extend(pool.notes)
            pools.append((found, pool))
        if any(pool.rows for _, pool in pools) or len(phrases) == 1 or any_phrase:
            break
        notes.append("no entry holds every word; these hold some of them")
    return pools
