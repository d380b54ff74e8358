"""Recall across every project (#45): the ranking of a query of several phrases is one BM25
over every project's entries (docs/sessions.md "Recall across every project"), even for an entry
its own project's BM25 ranks outside its best `limit`. The expected order is the one tantivy
gives when a single index holds every project's entries (the reference the merge of the
projects' own indexes must agree with: docs/performance.md)."""

from __future__ import annotations

import hashlib
import json

import tantivy

from precompact.recall import everywhere
from precompact.recall import fulltext as recall
from support.conversations import START, Conversation, save
from support.projects import Project, new_project

LIMIT = 2
PHRASES = ("apple", "banana")


def reference(projects: list[Project]) -> tuple[tantivy.Index, dict[int, tuple[str, str]]]:
    """One index holding every project's entries, each once (as recall indexes them), with the
    same analyzer; its documents' numbers -> (project, the entry's reference)."""
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("text", tokenizer_name=recall.ANALYZER, index_option="position")
    builder.add_unsigned_field("number", indexed=True, fast=True)
    index = tantivy.Index(builder.build())
    index.register_tokenizer(recall.ANALYZER, recall._analyzer())
    writer = index.writer(num_threads=1)
    named: dict[int, tuple[str, str]] = {}
    for project in projects:
        seen: set[bytes] = set()
        snapshots = recall._Snapshots(project.logs, None)
        for savepoint in recall.in_scope(project.logs, project.instance):
            reader, _ = snapshots.checked(savepoint)
            assert not isinstance(reader, str), reader
            for position, (place, entry) in enumerate(recall.saved_entries(reader), 1):
                digest = hashlib.blake2b(reader.entry_bytes(place), digest_size=16).digest()
                if digest in seen:
                    continue
                seen.add(digest)
                document = tantivy.Document()
                document.add_text("text", recall.entry_facts(entry, {})[2])
                document.add_unsigned("number", len(named))
                writer.add_document(document)
                named[len(named)] = (str(project.path), f"{savepoint.sequence}:{position}")
    writer.commit()
    index.reload()
    return index, named


def reference_best(index: tantivy.Index, named: dict[int, tuple[str, str]], limit: int) -> list[tuple[str, str]]:
    searcher = index.searcher()
    query = tantivy.Query.boolean_query(
        [(tantivy.Occur.Must, tantivy.Query.term_query(index.schema, "text", p)) for p in PHRASES]
    )
    found = searcher.search(query, limit).hits
    return [named[int(n)] for n in searcher.fast_field_values("number", [address for _, address in found])]


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

    index, named = reference([x, y])
    got = [(hit.project, hit.ref) for hit in found.results.hits]
    assert got == reference_best(index, named, LIMIT)
    # The case is one: x's own BM25 ranks its favoured entry past its best LIMIT.
    favoured = recall.search(x.logs, x.instance, "favoured").hits[0].ref
    own = [hit.ref for hit in recall.search(x.logs, x.instance, " ".join(PHRASES), limit=LIMIT).hits]
    assert (str(x.path), favoured) in got and favoured not in own
    assert found.results.matched == 5  # four entries of x and one of y hold both
    # The filters hold for every match gathered: the phrases are only in what the user said.
    said = everywhere.search(" ".join(PHRASES), role="assistant", limit=LIMIT).results
    assert (said.hits, said.matched) == ([], 0)


def test_a_tie_across_projects_of_different_entry_lengths_is_shown_with_its_bound(tmp_path):
    """Entries of two projects tie under one BM25 (the same one-word text), but each project's
    own index weighs their length against its own average, long in x and short in y: the merge
    cannot tell from the boosted scores alone which ties pass, stops within the spread of the
    averages and says how far an entry left out could be above the last one shown."""
    x = new_project(tmp_path, "x", git_layer=False, chain_layer=False)
    talk = Conversation(tmp_path / "x.jsonl", "s-x", START)
    for n in range(4):
        talk.turn_with("zebra", f"cmd x{n} " + "padding " * 60, f"out x{n} " + "words " * 60, f"done x{n}")
    save(x, talk)
    y = new_project(tmp_path, "y", git_layer=False, chain_layer=False)
    talk = Conversation(tmp_path / "y.jsonl", "s-y", START)
    for n in range(4):
        talk.turn_with("zebra", f"cmd y{n}", f"out y{n}", f"done y{n}")
    save(y, talk)

    found = everywhere.search("zebra", limit=LIMIT)

    index, _ = reference([x, y])
    searcher = index.searcher()
    query = tantivy.Query.term_query(index.schema, "text", "zebra")
    scores = {round(score, 4) for score, _ in searcher.search(query, 10).hits}
    assert len(scores) == 1, "every match ties in the reference"
    assert found.bound is not None and 0 < found.bound < 1
    assert found.results.hits and all(hit.excerpt == "zebra" for hit in found.results.hits)
    assert any(f"up to {found.bound:.1%}" in note for note in found.results.notes)


def test_ties_across_projects_come_in_the_registrys_order_then_as_indexed_however_tantivy_merged(tmp_path):
    """Two projects alike but for their path, each saved four times with one entry per save
    that ties with the others (each save's update a commit of its own, a segment tantivy orders
    as it likes): the ties come project by project in the registry's order, each project's in
    the order its own recall shows them, and the same once every index is rebuilt into one
    segment. (Which ties a part gives at its cut stays tantivy's: not asserted.)"""
    projects = []
    for name in ("x", "y"):
        project = new_project(tmp_path, name, git_layer=False, chain_layer=False)
        talk = Conversation(tmp_path / f"{name}.jsonl", f"s-{name}", START)
        for word in ("one", "two", "three", "four"):
            talk.turn_with(f"zebra {word}", f"cmd {word}", f"out {word}", f"done {word}")
            save(project, talk)
            recall.update(project.logs, project.instance)
        projects.append(project)
    for p in projects:
        segments = json.loads((p.logs / recall.TEXT_DIR / "meta.json").read_bytes())["segments"]
        assert len(segments) > 1, "the ties are in several segments"
    own = [(str(p.path), hit.ref) for p in projects for hit in recall.search(p.logs, p.instance, "zebra", limit=8).hits]
    assert len(own) == 8

    def everywhere_shows(limit: int) -> list[tuple[str | None, str]]:
        found = everywhere.search("zebra", limit=limit)
        assert found.bound is None, "the projects' average entry lengths are the same"
        return [(hit.project, hit.ref) for hit in found.results.hits]

    assert everywhere_shows(8) == own
    for p in projects:
        recall.update(p.logs, p.instance, rebuild=True)
    assert everywhere_shows(8) == own
