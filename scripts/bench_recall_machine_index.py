"""Recall across every project (#45), the other design: one machine-wide tantivy index (BM25 with
block-max WAND, which prunes: it stops scoring matches that cannot enter the best `limit`) fed
from the entries each project's own index (recall/fulltext.py) holds, against today's federated
search (recall/everywhere.py) over the same archive.

It measures, on an archive `scripts/bench_recall_everywhere.py --keep DIR` built and kept:
- feeding the one index a project's savepoint (its entries' text, role, tool, time, agent,
  project, instance, savepoint and place), against that savepoint's Layer 1 time: the tantivy
  share alone (the worker already has the entries' text while it indexes the project) and with
  the text read again from the verified snapshot; and the floor under it (the text alone);
- the searches, warm in this process and in a fresh process (importing precompact's CLI as
  `precompact recall` does), each in turn with today's federated one and a one-project CLI recall
  at the same load; top hits only (count=False: asking tantivy for the total count, or ordering
  by a field, makes it score every match again);
- the top-10 overlap of the two rankings, and the index's size on disk.

Usage: .venv/bin/python scripts/bench_recall_machine_index.py --data DIR [--runs 5] [--reuse-index]
(prints its figures as JSON)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

import throwaway_home

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
from precompact.config import settings as configuration
from precompact.local import registry, snapshot
from precompact.recall import everywhere
from precompact.recall import fulltext as recall
from support.commands import PRECOMPACT
from support.transcript_gen import generate

RARE = "the quokka ledger overflowed at row 4096"
QUERIES = {
    "rare phrase": f'"{RARE}"',
    "two common words": "flaky test",
    "one common word": "handler",
    "two exact phrases": '"fix the flaky test" "module 3"',
}
TOP = 10
POOL = 50  # hits asked of tantivy before entries saved twice (same role, tool, text) are folded, as fulltext does
_TOKEN = re.compile(r"[^\W_]+")  # tantivy's default tokenizer: runs of letters and digits, lowercased


def progress(text: str) -> None:
    print(f"bench: {text}", file=sys.stderr, flush=True)


def summary(values: list[float]) -> dict:
    return {"median": statistics.median(values), "max": max(values)}


def schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("text", stored=False, tokenizer_name="default", index_option="position")
    for name in ("project", "instance", "role", "tool", "agent"):
        builder.add_text_field(name, stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_unsigned_field("sequence", stored=True)
    builder.add_unsigned_field("position", stored=True)
    builder.add_unsigned_field("start", stored=True)  # the entry's place in its snapshot, for its excerpt
    builder.add_unsigned_field("stop", stored=True)
    builder.add_unsigned_field("content", stored=True)  # a digest of (role, tool, text): saved twice -> one hit
    builder.add_float_field("time", stored=True, indexed=True, fast=True)
    return builder.build()


def project_entries(project: Path) -> tuple[list[dict], float]:
    """What the project's own index holds of each entry, with its text read again from its
    verified snapshot (fulltext's contentless FTS5 keeps no text), and the seconds reading took."""
    loaded = configuration.load(project)
    began = time.perf_counter()
    scope = {(s.instance, s.sequence): s for s in recall.in_scope(loaded.logs, loaded.instance)}
    snapshots = recall._Snapshots(loaded.logs, None)
    connection = sqlite3.connect(f"file:{recall.index_path(loaded.logs)}?mode=ro", uri=True)
    rows = connection.execute(
        "SELECT e.start, e.stop, e.role, e.tool, e.time, s.instance, s.sequence, s.stamp, min(h.position)"
        " FROM entries e JOIN savepoints s ON s.id = e.holder JOIN holds h ON h.entry = e.id AND h.savepoint = e.holder"
        " GROUP BY e.id"
    ).fetchall()
    connection.close()
    entries = []
    for start, stop, role, tool, when, instance, sequence, stamp, position in rows:
        savepoint = scope[(instance, sequence)]
        reader = snapshots.reader(savepoint, stamp)
        assert not isinstance(reader, str), reader
        _, _, text = recall.entry_facts(reader.entry_at((start, stop)), {})
        content = hashlib.blake2b(f"{role}\0{tool}\0{text}".encode(), digest_size=8).digest()
        entries.append(
            {
                "text": text,
                "project": str(project),
                "instance": instance,
                "role": role,
                "tool": tool or "",
                "agent": savepoint.agent,
                "sequence": sequence,
                "position": position,
                "start": start,
                "stop": stop,
                "content": int.from_bytes(content, "big"),
                "time": when if when is not None else 0.0,
            }
        )
    return entries, time.perf_counter() - began


def feed(writer: tantivy.IndexWriter, entries: list[dict]) -> tuple[float, float]:
    """Adds the entries and commits: wall seconds, and CPU seconds of this process (tantivy's
    indexing thread included)."""
    began, cpu = time.perf_counter(), time.process_time()
    for entry in entries:
        document = tantivy.Document()
        for name in ("text", "project", "instance", "role", "tool", "agent"):
            document.add_text(name, entry[name])
        for name in ("sequence", "position", "start", "stop", "content"):
            document.add_unsigned(name, entry[name])
        document.add_float("time", entry["time"])
        writer.add_document(document)
    writer.commit()
    return time.perf_counter() - began, time.process_time() - cpu


def build(index_dir: Path, projects: list[Path]) -> dict:
    shutil.rmtree(index_dir, ignore_errors=True)
    index_dir.mkdir(parents=True)
    index = tantivy.Index(schema(), str(index_dir))
    writer = index.writer(heap_size=50_000_000, num_threads=1)
    reading, feeding, feeding_cpu, counts = [], [], [], []
    for n, project in enumerate(projects):
        progress(f"machine-wide tantivy index: project {n + 1}/{len(projects)}")
        entries, read_s = project_entries(project)
        reading.append(read_s)
        wall, cpu = feed(writer, entries)
        feeding.append(wall)
        feeding_cpu.append(cpu)
        counts.append(len(entries))
    writer.wait_merging_threads()
    return {
        "read_text_again_s": summary(reading),
        "tantivy_add_commit_s": summary(feeding),
        "tantivy_add_commit_cpu_s": summary(feeding_cpu),
        "entries_each": summary(counts),
    }


def query_of(index: tantivy.Index, query: str, role: str | None = None, any_phrase: bool = False) -> tantivy.Query:
    """fulltext's request as tantivy's: every phrase must match (a phrase of one word, its term),
    or with `any_phrase` any of them."""
    sch = index.schema
    clauses = []
    for words in recall._phrases(query):
        tokens = [t.lower() for w in words for t in _TOKEN.findall(w)]
        one = (
            tantivy.Query.term_query(sch, "text", tokens[0])
            if len(tokens) == 1
            else tantivy.Query.phrase_query(sch, "text", tokens)
        )
        clauses.append((tantivy.Occur.Should if any_phrase else tantivy.Occur.Must, one))
    if any_phrase and len(clauses) > 1:
        clauses = [(tantivy.Occur.Must, tantivy.Query.boolean_query(clauses))]
    if role is not None:
        clauses.append((tantivy.Occur.Must, tantivy.Query.term_query(sch, "role", role)))
    return clauses[0][1] if len(clauses) == 1 else tantivy.Query.boolean_query(clauses)


def top(index: tantivy.Index, query: str, count: bool = False, role: str | None = None) -> list[tuple]:
    """The best TOP hits, entries saved twice folded into their best-ranked one, each with its
    excerpt read from its snapshot as fulltext reads one: the project's configuration loaded, its
    savepoint still in scope (this machine's record vouches for it), the snapshot mapped while its
    files are the ones its project's index checked (else checked again)."""
    searcher = index.searcher()
    found = searcher.search(query_of(index, query, role), POOL, count=count)
    if not found.hits and len(recall._phrases(query)) > 1:  # as fulltext: no entry holds every word, then any
        found = searcher.search(query_of(index, query, role, any_phrase=True), POOL, count=count)
    hits, seen = [], set()
    opened: dict[str, tuple] = {}
    phrases = recall._phrases(query)
    for score, address in found.hits:
        doc = searcher.doc(address)
        if doc.get_first("content") in seen:
            continue
        seen.add(doc.get_first("content"))
        project = doc.get_first("project")
        if project not in opened:
            loaded = configuration.load(Path(project))
            scope = {(s.instance, s.sequence): s for s in recall._in_scope_kept(loaded.logs, loaded.instance)}
            with recall._kept_open(loaded.logs) as connection:  # the project's own index: the stamps it checked
                assert connection is not None
                indexed = recall._indexed(connection)
            opened[project] = (scope, indexed, recall._Snapshots(loaded.logs, None))
        scope, indexed, snapshots = opened[project]
        key = (doc.get_first("instance"), doc.get_first("sequence"))
        reader = snapshots.reader(scope[key], indexed[key][1])
        assert not isinstance(reader, str), reader
        _, _, text = recall.entry_facts(reader.entry_at((doc.get_first("start"), doc.get_first("stop"))), {})
        hits.append(
            (
                project,
                doc.get_first("instance"),
                doc.get_first("sequence"),
                doc.get_first("position"),
                score,
                recall.excerpt(text, phrases),
            )
        )
        if len(hits) == TOP:
            break
    return hits


def one_savepoint(root: Path, index_dir: Path, runs: int) -> dict:
    """A new project's 10 MB savepoint, in turn at the same load: its Layer 1, its project's own
    index update (the worker's), and feeding that savepoint to the one index (wall and CPU)."""
    index = tantivy.Index.open(str(index_dir))
    writer = index.writer(heap_size=50_000_000, num_threads=1)
    rows: dict[str, list[float]] = {}
    for n in range(runs):
        progress(f"one savepoint, Layer 1 against feeding it: {n + 1}/{runs}")
        project = copied(root / "template", root / f"paired{n}", f"Paired #{n}")
        transcript = generate(root / f"paired{n}.jsonl", 10 * MB, project=project, seed=1000 + n)
        loaded = configuration.load(project)
        began, cpu = time.perf_counter(), time.process_time()
        snapshot.create_savepoint(
            snapshot.Settings.of(loaded), snapshot.Session(f"paired{n}", str(transcript.path), str(project), "auto")
        )
        rows.setdefault("layer_1_s", []).append(time.perf_counter() - began)
        rows.setdefault("layer_1_cpu_s", []).append(time.process_time() - cpu)
        began, cpu = time.perf_counter(), time.process_time()
        recall.update(loaded.logs, loaded.instance)
        rows.setdefault("project_index_update_s", []).append(time.perf_counter() - began)
        rows.setdefault("project_index_update_cpu_s", []).append(time.process_time() - cpu)
        entries, _ = project_entries(project)
        wall, cpu_s = feed(writer, entries)
        rows.setdefault("tantivy_feed_s", []).append(wall)
        rows.setdefault("tantivy_feed_cpu_s", []).append(cpu_s)
        writer.delete_documents_by_term("project", str(project))  # not one of the projects searched
        writer.commit()
        transcript.path.unlink()
        registry.forget(project)
        shutil.rmtree(project)
    writer.wait_merging_threads()
    out: dict = {name: summary(values) for name, values in rows.items()}
    out["feed_over_layer_1_cpu"] = out["tantivy_feed_cpu_s"]["median"] / out["layer_1_cpu_s"]["median"]
    out["feed_over_layer_1_wall"] = out["tantivy_feed_s"]["median"] / out["layer_1_s"]["median"]
    return out


def text_floor(project: Path, scratch: Path, runs: int) -> dict:
    """What feeding one project's entries costs in CPU, down to its floor, alternated `runs`
    times: the prototype's documents, the same entries as text alone, and all of it as one
    document (the tokenising and the postings, no per-document cost)."""
    entries, _ = project_entries(project)
    text_only = tantivy.SchemaBuilder().add_text_field("text", index_option="position").build()

    def fresh_writer(fields: tantivy.Schema) -> tantivy.IndexWriter:
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir()
        return tantivy.Index(fields, str(scratch)).writer(heap_size=50_000_000, num_threads=1)

    def documents(writer: tantivy.IndexWriter) -> None:
        feed(writer, entries)

    def texts(writer: tantivy.IndexWriter) -> None:
        for entry in entries:
            writer.add_document(tantivy.Document(text=entry["text"]))
        writer.commit()

    def one_document(writer: tantivy.IndexWriter) -> None:
        writer.add_document(tantivy.Document(text="\n".join(entry["text"] for entry in entries)))
        writer.commit()

    ways = {"documents_cpu_s": (schema(), documents), "text_alone_cpu_s": (text_only, texts)}
    ways["one_document_cpu_s"] = (text_only, one_document)
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(runs):
        for name, (fields, way) in ways.items():
            writer = fresh_writer(fields)
            cpu = time.process_time()
            way(writer)
            times[name].append(time.process_time() - cpu)
    shutil.rmtree(scratch, ignore_errors=True)
    return {"entries": len(entries), "characters": sum(len(e["text"]) for e in entries)} | {
        name: summary(values) for name, values in times.items()
    }


FRESH = """
import sys, time
import precompact.edges.cli  # what `precompact recall` imports before it searches
import tantivy
sys.path.insert(0, {scripts!r})
began = time.perf_counter()
from bench_recall_machine_index import top  # this bench's own imports: not a search's, left out
print(time.perf_counter() - began)
top(tantivy.Index.open({index!r}), {query!r})
"""


def fresh_process(index_dir: Path, query: str) -> float:
    """A new process that imports what `precompact recall` does and tantivy, opens the one
    index and searches: its wall time, less the import of this bench (which `top` lives in)."""
    code = FRESH.format(scripts=str(REPO / "scripts"), index=str(index_dir), query=query)
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True)
    return time.perf_counter() - began - float(done.stdout.split()[0])


def cli(cwd: Path, *args: str) -> float:
    began = time.perf_counter()
    subprocess.run([PRECOMPACT, *args], cwd=cwd, capture_output=True, text=True, check=True)
    return time.perf_counter() - began


def timed(function, runs: int) -> dict:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        function()
        times.append(time.perf_counter() - began)
    return summary(times)


def searches(index_dir: Path, root: Path, one: Path, runs: int) -> dict:
    index = tantivy.Index.open(str(index_dir))
    out = {}
    for name, query in QUERIES.items():
        progress(f"searching: {name}")
        ours = top(index, query)
        federated = everywhere.search(query)
        theirs = [(h.project, h.instance, h.sequence, h.position) for h in federated.results.hits[:TOP]]
        overlap = len({h[:4] for h in ours} & set(theirs))
        row: dict = {"federated_matched": federated.results.matched, "top10_overlap": overlap}
        row["tantivy_top"] = [list(h[:5]) for h in ours[:3]]
        row["federated_top"] = [list(h) for h in theirs[:3]]
        # In turn, at the same load: tantivy, then federated, then tantivy counting every match.
        row["tantivy_warm_s"] = timed(lambda query=query: top(index, query), runs)
        row["federated_warm_s"] = timed(
            lambda query=query: everywhere.search(query).results.text(recall.DEFAULT_BUDGET), runs
        )
        row["tantivy_warm_counting_s"] = timed(lambda query=query: top(index, query, count=True), runs)
        fresh, one_cli, everywhere_cli = [], [], []
        for _ in range(runs):
            fresh.append(fresh_process(index_dir, query))
            one_cli.append(cli(one, "recall", query))
            everywhere_cli.append(cli(root, "recall", query))
        row["tantivy_fresh_process_s"] = summary(fresh)
        row["cli_one_project_s"] = summary(one_cli)
        row["cli_everywhere_federated_s"] = summary(everywhere_cli)
        row["fresh_over_one_project_cli"] = (
            row["tantivy_fresh_process_s"]["median"] / row["cli_one_project_s"]["median"]
        )
        out[name] = row
    progress("searching: handler, role tool")
    out["one common word, --role tool"] = {
        "tantivy_warm_s": timed(lambda: top(index, "handler", role="tool"), runs),
        "federated_warm_s": timed(
            lambda: everywhere.search("handler", role="tool").results.text(recall.DEFAULT_BUDGET), runs
        ),
    }
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--data", type=Path, required=True, help="An archive kept by bench_recall_everywhere.py --keep."
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--reuse-index", action="store_true", help="Search the tantivy index built before.")
    args = parser.parse_args()
    root = args.data.resolve()
    for variable in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        os.environ[variable] = str(root / variable.lower())
    kept = json.loads((root / "built.json").read_text())
    projects = [Path(p) for p in kept["paths"]]
    index_dir = root / "machine-index"
    result: dict = {
        "projects": len(projects),
        "mb_each": kept["mb"],
        "tantivy": tantivy.__version__,
    }
    if not args.reuse_index:
        result["build"] = build(index_dir, projects)
        layer_1 = statistics.median(r["layer_1_s"] for r in kept["rows"])
        result["layer_1_s"] = layer_1
        result["tantivy_share_of_layer_1"] = result["build"]["tantivy_add_commit_s"]["median"] / layer_1
        result["with_text_read_again_share"] = (
            result["build"]["tantivy_add_commit_s"]["median"] + result["build"]["read_text_again_s"]["median"]
        ) / layer_1
    result["one_savepoint"] = one_savepoint(root, index_dir, 3)
    result["text_floor"] = text_floor(projects[3], root / "text-floor-index", 5)
    result["index_bytes"] = sum(f.stat().st_size for f in index_dir.iterdir() if f.is_file())
    result["per_project_index_bytes"] = sum(recall.index_path(p / "logs").stat().st_size for p in projects)
    result["segments"] = tantivy.Index.open(str(index_dir)).searcher().num_segments
    result["searches"] = searches(index_dir, root, projects[-1], args.runs)
    result["load"] = os.getloadavg()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    throwaway_home.use()
    main()
