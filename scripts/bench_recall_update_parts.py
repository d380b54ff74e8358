"""The recall index update's parts, each measured alone on one increment of a generated session
(`--mb` MB of history, the last tenth of it new, as scripts/bench_recall_update.py replays it):
tantivy's indexing of the new entries (schema 5's fields, without each filter field, with the
text and `entry` only, and the shipped schema 6: the text and `entry` a fast field only), the
SQLite bookkeeping's lookups and inserts against an index already holding the nine tenths before
(the shipped schema, without each of its two secondary indexes, and with many rows per INSERT;
`holds` as schema 5 wrote it, a row per entry: schema 6 writes one only for an entry held again), and finding and parsing the entries (one orjson call per entry,
as `SnapshotReader.located_entries` does, against one call per 1 MB piece and each entry's place
found by writing it again). CPU of this process (`time.process_time`, tantivy's threads
included), medians of `--runs`. Issue #42's fourth and fifth rounds (docs/performance.md).
Usage: .venv/bin/python scripts/bench_recall_update_parts.py [--mb 100] [--runs 7] [--json]"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import tantivy

import throwaway_home

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from precompact.local.canonical import canonical
from precompact.recall import fulltext
from support.transcript_gen import generate

MB = 1_000_000
FILTERS = ("entry", "holder", "role", "tool", "time")


def cpu_ms(work: Callable[[], object], runs: int) -> float:
    spent = []
    for _ in range(runs):
        began = time.process_time()
        work()
        spent.append((time.process_time() - began) * 1000)
    return round(statistics.median(spent), 1)


def schema_of(kept: tuple[str, ...], entry_indexed: bool = True) -> tantivy.Schema:
    """Schema 5's text schema with only the filter fields `kept` (`entry` a fast field only when
    not `entry_indexed`: with no other field, schema 6's, `fulltext._text_schema`)."""
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("text", tokenizer_name=fulltext.ANALYZER, index_option="position")
    fields = {
        "entry": lambda: builder.add_unsigned_field("entry", indexed=entry_indexed, fast=True),
        "holder": lambda: builder.add_unsigned_field("holder", indexed=True),
        "role": lambda: builder.add_text_field("role", tokenizer_name="raw", index_option="basic"),
        "tool": lambda: builder.add_text_field("tool", tokenizer_name="raw", index_option="basic"),
        "time": lambda: builder.add_float_field("time", indexed=True),
    }
    for name, add in fields.items():
        if name in kept:
            add()
    return builder.build()


def tantivy_parts(facts: list[tuple[str, str | None, str]], runs: int) -> dict[str, float]:
    variants = {"schema 5": (FILTERS, True)}
    variants |= {f"without {name}": (tuple(f for f in FILTERS if f != name), True) for name in FILTERS}
    variants |= {
        "text and entry only": (("entry",), True),
        "schema 6 (shipped): text and entry, a fast field only": (("entry",), False),
    }
    found = {}
    for label, (kept, entry_indexed) in variants.items():
        schema = schema_of(kept, entry_indexed)

        def indexed(schema=schema, kept=kept) -> None:
            with tempfile.TemporaryDirectory() as place:
                index = tantivy.Index(schema, place, reuse=True)
                index.register_tokenizer(fulltext.ANALYZER, fulltext._analyzer())
                writer = index.writer(heap_size=fulltext.WRITER_HEAP_BYTES, num_threads=1)
                for n, (role, tool, words) in enumerate(facts, start=1):
                    document = tantivy.Document()  # as fulltext._index fills it (schema 6: the text and `entry`)
                    document.add_text("text", words)
                    if "entry" in kept:
                        document.add_unsigned("entry", n)
                    if "holder" in kept:
                        document.add_unsigned("holder", 2)
                    if "role" in kept:
                        document.add_text("role", role)
                    if "tool" in kept and tool is not None:
                        document.add_text("tool", tool)
                    if "time" in kept:
                        document.add_float("time", 1.7e9 + n)
                    writer.add_document(document)
                writer.commit()
                writer.wait_merging_threads()

        found[label] = cpu_ms(indexed, runs)
    return found


def sqlite_parts(count: int, runs: int) -> dict[str, float]:
    """Lookups and inserts of `count` new entries into an index already holding 9 × `count`."""

    def rows(first: int, holder: int) -> list[tuple]:
        made = []
        for n in range(first, first + count):
            digest = hashlib.blake2b(str(n).encode(), digest_size=16).digest()
            made.append(
                (n, fulltext._key(digest), digest, holder, n, n * 600, n * 600 + 590, "assistant", None, 1.7e9 + n)
            )
        return made

    found = {}
    for variant, schema in (
        ("shipped", fulltext._SCHEMA),
        ("without entries_key", fulltext._SCHEMA.replace("CREATE INDEX entries_key ON entries(key);", "")),
        ("without holds_entry", fulltext._SCHEMA.replace("CREATE INDEX holds_entry ON holds(entry, savepoint);", "")),
        ("shipped, 100 rows per INSERT", fulltext._SCHEMA),
    ):
        with tempfile.TemporaryDirectory() as place:
            path = os.path.join(place, "index.sqlite")
            connection = sqlite3.connect(path, isolation_level=None)
            connection.executescript(schema)
            connection.execute("BEGIN")
            for holder in range(1, 10):
                made = rows((holder - 1) * count + 1, holder)
                connection.executemany("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", made)
                connection.executemany("INSERT INTO holds VALUES (?, ?, ?)", [(holder, row[0], row[0]) for row in made])
            connection.execute("COMMIT")
            new = rows(9 * count + 1, 10)
            holds = [(10, row[0], row[0]) for row in new]
            spent: dict[str, list[float]] = {"lookups": [], "entries": [], "holds": []}
            for _ in range(runs):
                connection.execute(f"PRAGMA cache_size=-{fulltext.CACHE_KIB}")
                connection.execute("BEGIN IMMEDIATE")
                began = time.process_time()
                for at in range(0, count, fulltext.BATCH_ENTRIES):
                    keys = [row[1] for row in new[at : at + fulltext.BATCH_ENTRIES]]
                    connection.execute(
                        f"SELECT digest, id FROM entries WHERE key IN ({','.join('?' * len(keys))})", keys
                    ).fetchall()
                looked = time.process_time()
                if variant.endswith("per INSERT"):
                    for at in range(0, count, 100):
                        part = new[at : at + 100]
                        connection.execute(
                            "INSERT INTO entries VALUES " + ",".join(["(?,?,?,?,?,?,?,?,?,?)"] * len(part)),
                            list(itertools.chain.from_iterable(part)),
                        )
                else:
                    connection.executemany("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", new)
                inserted = time.process_time()
                if variant.endswith("per INSERT"):
                    for at in range(0, count, 100):
                        part = holds[at : at + 100]
                        connection.execute(
                            "INSERT INTO holds VALUES " + ",".join(["(?,?,?)"] * len(part)),
                            list(itertools.chain.from_iterable(part)),
                        )
                else:
                    connection.executemany("INSERT INTO holds VALUES (?, ?, ?)", holds)
                held = time.process_time()
                connection.execute("ROLLBACK")
                spent["lookups"].append((looked - began) * 1000)
                spent["entries"].append((inserted - looked) * 1000)
                spent["holds"].append((held - inserted) * 1000)
            connection.close()
        for part_name, values in spent.items():
            found[f"{variant}: {part_name}"] = round(statistics.median(values), 1)
    return found


def parse_parts(entries: list[object], runs: int) -> dict[str, float]:
    """The entries' places and values in their history bytes (canonical, comma-separated)."""
    data = b"".join(canonical(entry) + b"," for entry in entries)[:-1]

    def each() -> None:  # as SnapshotReader.located_entries finds them
        position, end = 0, len(data)
        while position < end:
            candidate = data.find(b'},{"', position, end)
            while True:
                stop = end if candidate == -1 else candidate + 1
                try:
                    orjson.loads(data[position:stop])
                    break
                except orjson.JSONDecodeError:
                    candidate = data.find(b'},{"', candidate + 1, end)
            position = stop + 1

    def pieces() -> None:  # one parse per 1 MB piece (pieces cut at entries, as chunks are)
        view, position, end = memoryview(data), 0, len(data)
        while position < end:
            cut = data.find(b'},{"', min(end, position + MB))
            stop = end if cut == -1 else cut + 1
            for entry in orjson.loads(b"[" + data[position:stop] + b"]"):
                again = orjson.dumps(entry, option=orjson.OPT_SORT_KEYS)
                if view[position : position + len(again)] != again:
                    raise AssertionError("an entry not in canonical form")
                position += len(again) + 1

    return {
        "one parse per entry": cpu_ms(each, runs),
        "one parse per 1 MB, places by writing again": cpu_ms(pieces, runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="precompact-bench-update-parts-") as scratch:
        made = generate(Path(scratch) / "increment.jsonl", args.mb * MB // 10, project=Path(scratch), planted=[])
        entries = [orjson.loads(line) for line in made.path.read_bytes().splitlines()]
    facts = [fulltext.entry_facts(entry, {}) for entry in entries]
    result = {
        "increment_mb": args.mb / 10,
        "entries": len(entries),
        "words_mb": round(sum(len(words) for _, _, words in facts) / MB, 2),
        "tantivy_ms": tantivy_parts(facts, args.runs),
        "sqlite_ms": sqlite_parts(len(entries), args.runs),
        "parse_ms": parse_parts(entries, args.runs),
        "load": os.getloadavg(),
    }
    print(json.dumps(result, indent=2) if args.json else result)


if __name__ == "__main__":
    throwaway_home.use()
    main()
