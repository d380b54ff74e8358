"""Recall across every project (#45) and the recall update (#42), a third design: tantivy REPLACES
FTS5 as each project's own recall index, and a search over every project opens the projects'
tantivy indexes together and merges them with one exact BM25 over all of them.

Why it can be exact. tantivy scores a document of index i, for each phrase p of the query, as
idf_i(p) · (k1 + 1) · tf / (tf + k1 · (1 − b + b · dl / avgdl_i)), with idf_i(p) the sum over the
phrase's terms of ln(1 + (N_i − n_i + 0.5) / (n_i + 0.5)) from that index's own statistics
(`Query.explain` shows every factor). tantivy-py 0.27 exposes N_i (`Searcher.num_docs`) and n_i
(`Searcher.doc_freq`), and a boost per clause (`Query.boost_query`, which multiplies the clause's
score), so each index is searched with each
phrase boosted by idf_G(p) / idf_i(p): its IDF is then the global one (statistics summed over every
index). What no query can carry is the average length: tantivy-py exposes no field's token count
(no `total_num_tokens`, no field norms, no multi-index searcher); `explain` shows avgdl_i, which the
update here reads once after its commit and keeps beside the index. With the global IDF, the
boosted local score s' and the exact global score s differ only in avgdl, and for every phrase
s / s' = D(avgdl_i) / D(avgdl_G) with D(a) = tf + k1(1 − b) + k1 b dl / a: a weighted mean of 1 and
r_i = avgdl_G / avgdl_i, so s ∈ [s' · min(1, r_i), s' · max(1, r_i)]. Each index gives its best k'
by s'; the candidates whose upper bound can reach the 10th best lower bound are scored exactly
(from `explain`'s tf and dl, with avgdl_G); the result is exact, and says so, when the 10th best
exact score is at least every unexhausted index's k'-th s' times its max(1, r_i); otherwise those
indexes are asked again with 4 × k'. Exact means: the top 10 one tantivy index holding every
project's documents gives (the reference here, built from the same documents), up to tantivy's
f32 arithmetic and the order of tied scores.

It measures, on the archive `scripts/bench_recall_everywhere.py --keep DIR` built (100 projects of
one 10 MB savepoint), its per-project tantivy indexes and the reference index kept under --out:
1. a new project's 10 MB savepoint, in turn: its Layer 1, its FTS5 update (recall/fulltext.py as
   the worker runs it) and the same update into tantivy (the snapshot verified, its entries parsed
   and their facts taken as fulltext does, entries saved twice kept once, added and committed),
   wall and CPU, the two updates alternating which goes first;
2. searches warm in process over the 100 tantivy indexes (the four queries of
   bench_recall_machine_index.py, and one common word with `--role tool`), each in turn with
   today's federated FTS5 search; top 10 with excerpts read from verified snapshots as recall reads them;
3. the same from a fresh process (importing what `precompact recall` imports, tantivy, opening the
   100 indexes), wall and CPU, against a one-project `precompact recall` CLI;
4. the rankings against the reference (top-10 scores and entries), and what concatenating the
   indexes' own scores would give; disk sizes; the tokenizer differences with FTS5 and the custom
   analyzer (tantivy's simple tokenizer, lowercase, ASCII folding, no 40-byte cut) that removes them.

Usage: .venv/bin/pip install tantivy==0.27.0 (not a product dependency), then
  nice -n 10 .venv/bin/python scripts/bench_recall_federated_tantivy.py --data DIR --out DIR2 [--runs 5] [--reuse-indexes]
(prints its figures as JSON)
"""

from __future__ import annotations

import argparse
import hashlib
import heapq
import json
import math
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

try:
    import tantivy
except ImportError:
    raise SystemExit(
        "bench: this benchmark needs tantivy, which precompact does not ship: .venv/bin/pip install tantivy==0.27.0"
    ) from None

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
sys.path.insert(0, str(REPO / "scripts"))

from bench_recall_everywhere import MB, copied
from bench_recall_machine_index import QUERIES, summary
from precompact.config import settings as configuration
from precompact.local import registry, snapshot
from precompact.recall import everywhere
from precompact.recall import fulltext as recall
from support.commands import PRECOMPACT
from support.transcript_gen import generate

TOP = 10
FIRST_ASK = 10  # k': each index's best by its boosted score, before the bound says whether it suffices
LAST_ASK = 40  # k' grows 4x per round up to this; beyond, the result reports how far it is from proven
K1, B = 1.2, 0.75  # tantivy's BM25 constants (Query.explain shows them)
F32_SLACK = 1e-5  # tantivy scores in f32: bounds are widened by this much, relative
ANALYZER = "precompact"
STATS = "precompact-stats.json"  # beside each index: its documents and their tokens, read after its commit


def progress(text: str) -> None:
    print(f"bench: {text}", file=sys.stderr, flush=True)


def analyzer() -> tantivy.TextAnalyzer:
    """FTS5's `unicode61 remove_diacritics 2`, as near as tantivy's filters go: runs of letters
    and digits, lowercased, diacritics folded (ASCII folding also maps a few letters FTS5 keeps,
    such as ø and ß), and no cut of long tokens (tantivy's default drops those over 40 bytes: a
    SHA-256 could not be found)."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
        .build()
    )


def schema(with_project: bool = False) -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("text", stored=False, tokenizer_name=ANALYZER, index_option="position")
    for name in ("instance", "role", "tool", "agent") + (("project",) if with_project else ()):
        builder.add_text_field(name, stored=True, tokenizer_name="raw", index_option="basic")
    for name in ("sequence", "position", "start", "stop"):
        builder.add_unsigned_field(name, stored=True)
    builder.add_float_field("time", stored=True, indexed=True, fast=True)
    return builder.build()


def opened(path: Path, fields: tantivy.Schema | None = None) -> tantivy.Index:
    index = tantivy.Index(fields, str(path)) if fields is not None else tantivy.Index.open(str(path))
    index.register_tokenizer(ANALYZER, analyzer())
    return index


def document(facts: dict, project: str | None = None) -> tantivy.Document:
    doc = tantivy.Document()
    for name in ("text", "instance", "role", "tool", "agent"):
        doc.add_text(name, facts[name])
    if project is not None:
        doc.add_text("project", project)
    for name in ("sequence", "position", "start", "stop"):
        doc.add_unsigned(name, facts[name])
    doc.add_float("time", facts["time"])
    return doc


def tantivy_update(
    project: Path, index_dir: Path, reference: tantivy.IndexWriter | None = None, feed: bool = True
) -> int:
    """What fulltext.update does for a project with no index yet, into tantivy: every savepoint in
    scope, its snapshot checked against this machine's record, its entries parsed and their
    facts taken (fulltext.entry_facts), an entry saved twice kept once (by its bytes' digest, as
    fulltext keys them); one commit; then the index's token count read back (one `explain`) and
    kept beside it. Returns the documents added. Without `feed`, all but tantivy's part: the
    snapshots checked and their entries read, the floor any index update pays."""
    loaded = configuration.load(project)
    shutil.rmtree(index_dir, ignore_errors=True)
    index_dir.mkdir(parents=True)
    index = opened(index_dir, schema())
    writer = index.writer(heap_size=50_000_000, num_threads=1)
    snapshots = recall._Snapshots(loaded.logs, None)
    seen: set[bytes] = set()
    tool_names: dict[str, str] = {}
    probe = None
    for savepoint in recall.in_scope(loaded.logs, loaded.instance):
        reader, _ = snapshots.checked(savepoint)
        assert not isinstance(reader, str), reader
        for position, ((start, stop), entry) in enumerate(recall.saved_entries(reader), 1):
            digest = hashlib.blake2b(reader.entry_bytes((start, stop)), digest_size=16).digest()
            if digest in seen:
                continue
            seen.add(digest)
            role, tool, text = recall.entry_facts(entry, tool_names)
            when = recall.entry_time(entry)
            facts = {
                "text": text,
                "instance": savepoint.instance,
                "role": role,
                "tool": tool or "",
                "agent": savepoint.agent,
                "sequence": savepoint.sequence,
                "position": position,
                "start": start,
                "stop": stop,
                "time": when if when is not None else 0.0,
            }
            if not feed:
                continue
            writer.add_document(document(facts))
            if reference is not None:
                reference.add_document(document(facts, str(project)))
            if probe is None and text.strip():
                probe = text
    if not feed:
        return len(seen)
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    tokens = 0
    if probe is not None:
        term = analyzer().analyze(probe)[0]
        found = searcher.search(tantivy.Query.term_query(index.schema, "text", term), 1).hits
        facts_of = _term_factors(tantivy.Query.term_query(index.schema, "text", term).explain(searcher, found[0][1]))
        tokens = round(facts_of[0]["avgdl"] * searcher.num_docs)
    (index_dir / STATS).write_text(json.dumps({"docs": searcher.num_docs, "tokens": tokens}))
    return searcher.num_docs


def _term_factors(explanation: tantivy.Explanation) -> list[dict]:
    """Each BM25 term factor of an explained score, in the query's order: tf, dl, avgdl."""
    out: list[dict] = []

    def walk(node: dict) -> None:
        if node.get("description", "").startswith("freq / (freq + k1"):
            values = {d["description"].split(",")[0]: d["value"] for d in node["details"]}
            out.append({"tf": values["freq"], "dl": values["dl"], "avgdl": values["avgdl"]})
            return
        for child in node.get("details", ()):
            walk(child)

    walk(json.loads(explanation.to_json()))
    return out


def idf(docs: int, having: int) -> float:
    return math.log(1 + (docs - having + 0.5) / (having + 0.5))


@dataclass
class Part:
    """One project's tantivy index, kept open as fulltext keeps its connection."""

    project: Path
    index: tantivy.Index
    searcher: tantivy.Searcher
    docs: int
    tokens: int


class Federated:
    """The projects' tantivy indexes opened together; `search` ranks by one BM25 over all."""

    def __init__(self, projects: list[Path], index_dirs: list[Path]):
        self.parts = []
        for project, index_dir in zip(projects, index_dirs, strict=True):
            index = opened(index_dir)
            searcher = index.searcher()
            kept = json.loads((index_dir / STATS).read_text())
            assert kept["docs"] == searcher.num_docs, f"{index_dir}: its statistics are not its commit's"
            self.parts.append(Part(project, index, searcher, kept["docs"], kept["tokens"]))
        self.docs = sum(p.docs for p in self.parts)
        self.avgdl = sum(p.tokens for p in self.parts) / self.docs
        self.analyzer = analyzer()
        self.opened: dict[str, tuple] = {}

    def phrases(self, query: str) -> list[list[str]]:
        return [self.analyzer.analyze(" ".join(words)) for words in recall._phrases(query)]

    def search(
        self, query: str, role: str | None = None, boosted: bool = True, exact: bool = True
    ) -> tuple[list[tuple], dict]:
        """The best TOP (score, part, address) over every index by global BM25, and what it took;
        with `exact`, proven (up to f32 and ties) unless an index would have to give more than
        LAST_ASK; without, bounded: no entry left out scores more than the avgdl spread above
        the 10th. With `boosted` off: each index's own scores concatenated."""
        phrases = self.phrases(query)
        terms = {t for p in phrases for t in p}
        having = {n: {t: part.searcher.doc_freq("text", t) for t in terms} for n, part in enumerate(self.parts)}
        total = {t: sum(h[t] for h in having.values()) for t in terms}
        global_idf = [sum(idf(self.docs, total[t]) for t in p) for p in phrases]
        asked = {}
        for n, part in enumerate(self.parts):
            if all(having[n][t] for t in terms):
                local_idf = [sum(idf(part.docs, having[n][t]) for t in p) for p in phrases]
                boosts = [g / loc for g, loc in zip(global_idf, local_idf, strict=True)] if boosted else None
                asked[n] = self._query(part, phrases, boosts, role)
        ratio = {n: self.avgdl * self.parts[n].docs / self.parts[n].tokens for n in asked}
        high = {n: max(1.0, r) * (1 + F32_SLACK) for n, r in ratio.items()}
        want = dict.fromkeys(asked, FIRST_ASK)
        got = {n: self.parts[n].searcher.search(asked[n], FIRST_ASK, count=False).hits for n in asked}
        if not boosted:
            candidates = [(score, n, address) for n, hits in got.items() for score, address in hits]
            return sorted(candidates, key=lambda c: -c[0])[:TOP], {}
        # The spread of avgdl: bounded, an entry whose upper bound is within it of the 10th is
        # not scored exactly; exact, it is.
        allowed = 1 + (max((max(1.0, r) / min(1.0, r) for r in ratio.values()), default=1.0) - 1 if not exact else 0.0)
        allowed *= 1 + 2 * F32_SLACK
        scored: dict[tuple[int, int, int], float] = {}
        rounds = explained = 0
        while True:
            rounds += 1
            candidates = sorted(
                ((score * high[n], n, address) for n, hits in got.items() for score, address in hits),
                key=lambda c: -c[0],
            )
            kept: list[float] = []  # the best TOP exact scores so far, a min-heap
            left_out = 0.0  # the upper bound of the best candidate not scored exactly
            for upper, n, address in candidates:
                key = (n, address.segment_ord, address.doc)
                if len(kept) == TOP and kept[0] * allowed >= upper:
                    left_out = upper
                    break
                if key not in scored:
                    scored[key] = self._exact(n, asked[n], address, global_idf)
                    explained += 1
                heapq.heappush(kept, scored[key])
                if len(kept) > TOP:
                    heapq.heappop(kept)
            best = sorted(
                (
                    (scored[(n, a.segment_ord, a.doc)], n, a)
                    for _, n, a in candidates
                    if (n, a.segment_ord, a.doc) in scored
                ),
                key=lambda c: (-c[0], c[1], c[2].segment_ord, c[2].doc),
            )[:TOP]
            tenth = best[-1][0] if len(best) == TOP else 0.0
            # An entry an index did not give scores at most its last s' times max(1, r_i).
            beyond = {n: hits[-1][0] * max(1.0, ratio[n]) for n, hits in got.items() if len(hits) == want[n]}
            short = [n for n, bound in beyond.items() if bound > tenth * allowed]
            if not short or max(want[n] for n in short) >= LAST_ASK:
                worst = max([left_out, *(beyond[n] for n in short)])
                took = {"rounds": rounds, "explained": explained, "indexes": len(asked)}
                gap = worst / tenth - 1 if tenth else 0.0
                return best, took | {"proven_exact": gap <= 2 * F32_SLACK, "left_out_at_most_over_10th": max(0.0, gap)}
            for n in short:
                want[n] *= 4
                got[n] = self.parts[n].searcher.search(asked[n], want[n], count=False).hits

    def _query(
        self, part: Part, phrases: list[list[str]], boosts: list[float] | None, role: str | None
    ) -> tantivy.Query:
        sch = part.index.schema
        clauses = []
        for n, tokens in enumerate(phrases):
            one = (
                tantivy.Query.term_query(sch, "text", tokens[0])
                if len(tokens) == 1
                else tantivy.Query.phrase_query(sch, "text", tokens)
            )
            clauses.append(tantivy.Query.boost_query(one, boosts[n]) if boosts is not None else one)
        if role is not None:  # a filter, not a score: its clause adds 0
            clauses.append(tantivy.Query.const_score_query(tantivy.Query.term_query(sch, "role", role), 0.0))
        if len(clauses) == 1:
            return clauses[0]  # as bench_recall_machine_index asks it: no boolean query of one clause
        return tantivy.Query.boolean_query([(tantivy.Occur.Must, c) for c in clauses])

    def _exact(self, n: int, query: tantivy.Query, address: tantivy.DocAddress, global_idf: list[float]) -> float:
        factors = _term_factors(query.explain(self.parts[n].searcher, address))
        return sum(
            weight * (K1 + 1) * f["tf"] / (f["tf"] + K1 * (1 - B + B * f["dl"] / self.avgdl))
            for weight, f in zip(global_idf, factors, strict=True)
        )

    def hits(self, query: str, role: str | None = None, exact: bool = True) -> list[tuple]:
        """The search's top hits with their excerpts, read from their verified snapshots as
        bench_recall_machine_index.top reads them (the stamps the project's own index checked)."""
        best, _ = self.search(query, role, exact=exact)
        phrases = recall._phrases(query)
        out = []
        for score, n, address in best:
            part = self.parts[n]
            doc = part.searcher.doc(address)
            key = str(part.project)
            if key not in self.opened:
                loaded = configuration.load(part.project)
                scope = {(s.instance, s.sequence): s for s in recall._in_scope_kept(loaded.logs, loaded.instance)}
                with recall._kept_open(loaded.logs) as connection:
                    assert connection is not None
                    indexed = recall._indexed(connection)
                self.opened[key] = (scope, indexed, recall._Snapshots(loaded.logs, None))
            scope, indexed, snapshots = self.opened[key]
            where = (doc.get_first("instance"), doc.get_first("sequence"))
            reader = snapshots.reader(scope[where], indexed[where][1])
            assert not isinstance(reader, str), reader
            _, _, text = recall.entry_facts(reader.entry_at((doc.get_first("start"), doc.get_first("stop"))), {})
            out.append((key, *where, doc.get_first("position"), score, recall.excerpt(text, phrases)))
        return out


def reference_top(reference: tantivy.Index, federated: Federated, query: str, role: str | None) -> list[tuple]:
    """The best TOP of the one index holding every project's documents, the same query unboosted."""
    searcher = reference.searcher()
    q = federated._query(Part(Path(), reference, searcher, 0, 0), federated.phrases(query), None, role)
    out = []
    for score, address in searcher.search(q, TOP, count=False).hits:
        doc = searcher.doc(address)
        out.append((score, doc.get_first("project"), doc.get_first("sequence"), doc.get_first("position")))
    return out


def named(federated: Federated, ranked: list[tuple]) -> list[tuple]:
    out = []
    for score, n, address in ranked:
        doc = federated.parts[n].searcher.doc(address)
        out.append((score, str(federated.parts[n].project), doc.get_first("sequence"), doc.get_first("position")))
    return out


def agreement(ours: list[tuple], theirs: list[tuple]) -> dict:
    """Top-10 agreement with the reference: the scores rank by rank, and the entries, of which
    only those scoring above the reference's 10th are fixed (the rest tie with others outside)."""
    tenth = theirs[-1][0] if theirs else 0.0
    fixed = {t[1:] for t in theirs if t[0] > tenth * (1 + F32_SLACK)}
    return {
        "largest_score_difference": max((abs(a[0] - b[0]) / b[0] for a, b in zip(ours, theirs)), default=0.0),
        "same_entries": len({o[1:] for o in ours} & {t[1:] for t in theirs}),
        "entries_above_the_tie": len(fixed),
        "of_those_found": len(fixed & {o[1:] for o in ours}),
        "reference_top3": [list(t) for t in theirs[:3]],
        "ours_top3": [list(o) for o in ours[:3]],
    }


def build(projects: list[Path], out: Path) -> dict:
    """Each project's tantivy index (its update as the worker would run it) and the reference."""
    reference_dir = out / "reference"
    shutil.rmtree(reference_dir, ignore_errors=True)
    reference_dir.mkdir(parents=True)
    reference = opened(reference_dir, schema(with_project=True))
    writer = reference.writer(heap_size=200_000_000, num_threads=1)
    docs = []
    for n, project in enumerate(projects):
        progress(f"tantivy index of project {n + 1}/{len(projects)}")
        docs.append(tantivy_update(project, out / "indexes" / project.name, writer))
    progress("the reference index: committing and merging")
    writer.commit()
    writer.wait_merging_threads()
    return {"documents_each": summary(docs)}


def one_savepoint(root: Path, out: Path, runs: int) -> dict:
    """A new project's 10 MB savepoint, in turn at the same load: its Layer 1, then its FTS5
    update, its tantivy update and that update without tantivy's part (reading_only), in
    turns reversed every other run (the snapshot is in the page cache for all: Layer 1 has just
    written it)."""
    rows: dict[str, list[float]] = {}

    def timed(name: str, function) -> None:
        began, cpu = time.perf_counter(), time.process_time()
        function()
        rows.setdefault(f"{name}_s", []).append(time.perf_counter() - began)
        rows.setdefault(f"{name}_cpu_s", []).append(time.process_time() - cpu)

    for n in range(runs):
        progress(f"one savepoint: Layer 1, FTS5 update, tantivy update: {n + 1}/{runs}")
        project = copied(root / "template", root / f"fed45-{n}", f"Fed45 #{n}")
        transcript = generate(root / f"fed45-{n}.jsonl", 10 * MB, project=project, seed=4500 + n)
        loaded = configuration.load(project)
        session = snapshot.Session(f"fed45-{n}", str(transcript.path), str(project), "auto")
        timed(
            "layer_1",
            lambda loaded=loaded, session=session: snapshot.create_savepoint(snapshot.Settings.of(loaded), session),
        )
        updates = [
            ("fts5_update", lambda loaded=loaded: recall.update(loaded.logs, loaded.instance)),
            ("tantivy_update", lambda project=project: tantivy_update(project, out / "paired")),
            ("reading_only", lambda project=project: tantivy_update(project, out / "paired", feed=False)),
        ]
        for name, function in updates if n % 2 == 0 else reversed(updates):
            timed(name, function)
        transcript.path.unlink()
        registry.forget(project)
        shutil.rmtree(project)
    shutil.rmtree(out / "paired", ignore_errors=True)
    result: dict = {name: summary(values) for name, values in rows.items()}
    for unit in ("", "_cpu"):
        result[f"tantivy_over_fts5{unit or '_wall'}"] = (
            result[f"tantivy_update{unit}_s"]["median"] / result[f"fts5_update{unit}_s"]["median"]
        )
        result[f"tantivy_over_layer_1{unit or '_wall'}"] = (
            result[f"tantivy_update{unit}_s"]["median"] / result[f"layer_1{unit}_s"]["median"]
        )
    return result


def timed_runs(function, runs: int) -> dict:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        function()
        times.append(time.perf_counter() - began)
    return summary(times)


FRESH = """
import json, sys, time
from pathlib import Path
import precompact.edges.cli  # what `precompact recall` imports before it searches
import tantivy
sys.path.insert(0, {scripts!r})
began, cpu = time.perf_counter(), time.process_time()
from bench_recall_federated_tantivy import Federated  # this bench's own imports: not a search's, left out
bench_import, bench_import_cpu = time.perf_counter() - began, time.process_time() - cpu
opening = time.perf_counter()
federated = Federated([Path(p) for p in {projects!r}], [Path(p) for p in {dirs!r}])
opening = time.perf_counter() - opening
federated.hits({query!r}, exact={exact!r})
print(json.dumps([bench_import, bench_import_cpu, opening]))
"""


def fresh_process(projects: list[Path], dirs: list[Path], query: str, exact: bool) -> tuple[float, float, float]:
    """A new process: what `precompact recall` imports, tantivy, the 100 indexes opened, the
    search with its excerpts. Its wall and CPU time (less this bench's own import), and the opening's share."""
    code = FRESH.format(
        scripts=str(REPO / "scripts"),
        projects=[str(p) for p in projects],
        dirs=[str(d) for d in dirs],
        query=query,
        exact=exact,
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    bench_import, bench_import_cpu, opening = json.loads(done.stdout.splitlines()[-1])
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall - bench_import, cpu - bench_import_cpu, opening


def cli(cwd: Path, *args: str) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    subprocess.run([PRECOMPACT, *args], cwd=cwd, capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - began, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def searches(projects: list[Path], dirs: list[Path], out: Path, runs: int) -> dict:
    federated = Federated(projects, dirs)
    reference = opened(out / "reference")
    asked = [(name, query, None) for name, query in QUERIES.items()] + [
        ("one common word, --role tool", "handler", "tool")
    ]
    result = {}
    for name, query, role in asked:
        progress(f"searching: {name}")
        theirs = reference_top(reference, federated, query, role)
        row: dict = {}
        for mode, exact in (("exact", True), ("bounded", False)):
            ranked, took = federated.search(query, role, exact=exact)
            row[f"{mode}_search"] = took | {"against_reference": agreement(named(federated, ranked), theirs)}
        concatenated, _ = federated.search(query, role, boosted=False)
        row["own_scores_concatenated_against_reference"] = agreement(named(federated, concatenated), theirs)
        del row["own_scores_concatenated_against_reference"]["reference_top3"]
        everywhere.search(query, role=role)  # its first search opens the 100 projects: not a warm one
        # In turn, at the same load: tantivy federated, exact then bounded, then today's FTS5 federated search.
        for mode, exact in (("exact", True), ("bounded", False)):
            row[f"tantivy_{mode}_warm_s"] = timed_runs(
                lambda query=query, role=role, exact=exact: federated.hits(query, role, exact), runs
            )
        row["fts5_federated_warm_s"] = timed_runs(
            lambda query=query, role=role: everywhere.search(query, role=role).results.text(recall.DEFAULT_BUDGET),
            runs,
        )
        if role is None:
            times: dict[str, list[float]] = {}
            for _ in range(runs):
                for mode, exact in (("exact", True), ("bounded", False)):
                    wall, cpu, opened_s = fresh_process(projects, dirs, query, exact)
                    times.setdefault(f"tantivy_{mode}_fresh_process_s", []).append(wall)
                    times.setdefault(f"tantivy_{mode}_fresh_process_cpu_s", []).append(cpu)
                    times.setdefault("opening_100_indexes_s", []).append(opened_s)
                wall, cpu = cli(projects[-1], "recall", query)
                times.setdefault("cli_one_project_fts5_s", []).append(wall)
                times.setdefault("cli_one_project_fts5_cpu_s", []).append(cpu)
            row |= {name: summary(values) for name, values in times.items()}
            for mode in ("exact", "bounded"):
                row[f"{mode}_fresh_over_one_project_cli"] = (
                    row[f"tantivy_{mode}_fresh_process_s"]["median"] / row["cli_one_project_fts5_s"]["median"]
                )
        result[name] = row
    return result


def tokenizers() -> dict:
    """What each tokenizer finds: tantivy's default, the analyzer above, and FTS5's unicode61
    remove_diacritics 2 (recall/fulltext.py's)."""
    sha = hashlib.sha256(b"precompact").hexdigest()
    texts = ["un café au lait", "naïve résumé", "die Straße", "Søren wrote it", f"commit {sha} landed"]
    asks = {"cafe": "café", "naive": "naïve", "strasse": "Straße", "soren": "Søren", sha: sha}
    found: dict[str, dict] = {}
    for name, tokenizer in (("tantivy default", "default"), ("tantivy, the analyzer above", ANALYZER)):
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("text", tokenizer_name=tokenizer, index_option="position")
        index = tantivy.Index(builder.build())
        index.register_tokenizer(ANALYZER, analyzer())
        writer = index.writer(num_threads=1)
        for text in texts:
            writer.add_document(tantivy.Document(text=text))
        writer.commit()
        index.reload()
        searcher = index.searcher()
        fold = (
            analyzer()
            if tokenizer == ANALYZER
            else tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.lowercase()).build()
        )
        found[name] = {
            ask: bool(searcher.search(tantivy.Query.term_query(index.schema, "text", fold.analyze(ask)[0]), 1).hits)
            for ask in asks
        }
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='unicode61 remove_diacritics 2')")
    connection.executemany("INSERT INTO t VALUES (?)", [(t,) for t in texts])
    found["FTS5 unicode61 remove_diacritics 2"] = {
        ask: bool(connection.execute("SELECT 1 FROM t WHERE t MATCH ?", (f'"{ask}"',)).fetchall()) for ask in asks
    }
    return found


def disk(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--data", type=Path, required=True, help="An archive kept by bench_recall_everywhere.py --keep."
    )
    parser.add_argument("--out", type=Path, required=True, help="Where the tantivy indexes are built and kept.")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--reuse-indexes", action="store_true", help="Search the tantivy indexes built before.")
    args = parser.parse_args()
    root, out = args.data.resolve(), args.out.resolve()
    for variable in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        os.environ[variable] = str(root / variable.lower())
    kept = json.loads((root / "built.json").read_text())
    projects = [Path(p) for p in kept["paths"]]
    dirs = [out / "indexes" / p.name for p in projects]
    result: dict = {"projects": len(projects), "mb_each": kept["mb"], "tantivy": tantivy.__version__}
    result["load_at_start"] = os.getloadavg()
    if not args.reuse_indexes:
        result["build"] = build(projects, out)
    result["tokenizers"] = tokenizers()
    result["tantivy_indexes_bytes"] = sum(disk(d) for d in dirs)
    result["fts5_indexes_bytes"] = sum(recall.index_path(p / "logs").stat().st_size for p in projects)
    result["one_savepoint"] = one_savepoint(root, out, args.runs)
    result["searches"] = searches(projects, dirs, out, args.runs)
    result["load_at_end"] = os.getloadavg()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
