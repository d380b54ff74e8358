"""Recall across every project (#45): the ranking of a query of several phrases is exact, one
BM25 over every project's entries (docs/sessions.md "Recall across every project"), even for
an entry its own project's BM25 ranks outside its best `limit`. The expected order is computed
here from FTS5's formula: per phrase, the IDF over every project's entries times the phrase's
term weight in the entry (FTS5's score of that phrase alone, divided by its project's IDF)."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

from precompact.recall import everywhere
from support.conversations import START, Conversation, save
from support.projects import new_project

LIMIT = 2
PHRASES = ("apple", "banana")


def fts5_idf(entries: int, having: int) -> float:
    value = math.log((entries - having + 0.5) / (having + 0.5))
    return value if value > 0 else 1e-6


def index_of(project: Path) -> sqlite3.Connection:
    return sqlite3.connect(project / "logs" / "precompact-recall.sqlite")


def counts(connection: sqlite3.Connection) -> tuple[int, list[int]]:
    (entries,) = connection.execute("SELECT count(*) FROM entries").fetchone()
    having = [
        connection.execute("SELECT count(*) FROM entry_text WHERE entry_text MATCH ?", (f'"{p}"',)).fetchone()[0]
        for p in PHRASES
    ]
    return entries, having


def term_weights(connection: sqlite3.Connection) -> dict[int, list[float]]:
    """Per entry holding every phrase: each phrase's BM25 term weight, its IDF left out."""
    entries, having = counts(connection)
    weights: dict[int, list[float]] = {}
    for n, phrase in enumerate(PHRASES):
        for rowid, score in connection.execute(
            "SELECT rowid, bm25(entry_text) FROM entry_text WHERE entry_text MATCH ?", (f'"{phrase}"',)
        ):
            weights.setdefault(rowid, [0.0] * len(PHRASES))[n] = -score / fts5_idf(entries, having[n])
    return {rowid: w for rowid, w in weights.items() if all(w)}


def entry_of(connection: sqlite3.Connection, instance: str, sequence: int, position: int) -> int:
    (entry,) = connection.execute(
        "SELECT h.entry FROM holds h JOIN savepoints s ON s.id = h.savepoint "
        "WHERE s.instance = ? AND s.sequence = ? AND h.position = ?",
        (instance, sequence, position),
    ).fetchone()
    return entry


def test_a_query_of_two_phrases_is_ranked_by_one_bm25_even_past_a_projects_own_best(tmp_path):
    """`apple` is rare in x and common in y, `banana` common in x and absent from y: x's own
    BM25 puts its apple-heavy entries first, the BM25 over both its banana-heavy one."""
    x = new_project(tmp_path, "x", git_layer=False, chain_layer=False)
    talk = Conversation(tmp_path / "x.jsonl", "s-x", START)
    for n in range(3):
        talk.turn_with(f"apple apple apple {'apple ' * n}banana heavy{n}", f"cmd x{n}", f"out x{n}", f"done x{n}")
    talk.turn_with("banana banana banana banana apple favoured", "cmd r", "out r", "done r")
    for n in range(8):
        talk.turn_with(f"banana filler{n}", f"cmd f{n}", f"out f{n}", f"done f{n}")
    save(x, talk)
    y = new_project(tmp_path, "y", git_layer=False, chain_layer=False)
    talk = Conversation(tmp_path / "y.jsonl", "s-y", START)
    for n in range(20):
        talk.turn_with(f"apple note{n}", f"cmd y{n}", f"out y{n}", f"done y{n}")
    talk.turn_with("apple banana both", "cmd b", "out b", "done b")
    save(y, talk)

    found = everywhere.search(" ".join(PHRASES), limit=LIMIT)

    indexes = {str(p.path): index_of(p.path) for p in (x, y)}
    tallies = [counts(c) for c in indexes.values()]
    entries = sum(n for n, _ in tallies)
    idfs = [fts5_idf(entries, sum(having[k] for _, having in tallies)) for k in range(len(PHRASES))]
    scored = sorted(
        (-sum(i * w for i, w in zip(idfs, weights, strict=True)), project, rowid)
        for project, connection in indexes.items()
        for rowid, weights in term_weights(connection).items()
    )
    expected = [(project, rowid) for _, project, rowid in scored[:LIMIT]]
    got = [
        (hit.project, entry_of(indexes[hit.project], hit.instance, hit.sequence, hit.position))
        for hit in found.results.hits
    ]
    assert got == expected
    # The case is one: x's own BM25 ranks its favoured entry past its best LIMIT.
    xs = indexes[str(x.path)]
    (favoured,) = xs.execute("SELECT rowid FROM entry_text WHERE entry_text MATCH 'favoured'").fetchone()
    own = [
        row[0]
        for row in xs.execute(
            "SELECT rowid FROM entry_text WHERE entry_text MATCH ? ORDER BY bm25(entry_text) LIMIT ?",
            ('"apple" AND "banana"', LIMIT),
        )
    ]
    assert (str(x.path), favoured) in got and favoured not in own
    assert found.results.matched == 5  # four entries of x and one of y hold both
    # The filters hold for every match gathered: the phrases are only in what the user said.
    said = everywhere.search(" ".join(PHRASES), role="assistant", limit=LIMIT).results
    assert (said.hits, said.matched) == ([], 0)
