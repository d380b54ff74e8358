"""What a snapshot's bytes say about themselves: the shape every rule of verdicts.py judges a
snapshot by, wherever its bytes were read (logs/, git, a bundle). Apart from the git evidence
(evidence.py), which a SessionStart's brief never reads: building that module's shapes is a
cost of every brief for nothing."""

from __future__ import annotations

from precompact.records import Record


class Snapshot(Record, frozen=True):
    """What a snapshot's bytes say about themselves, and where they were read (verdicts.read_snapshot
    reads them)."""

    sha256: str
    sequence: object
    instance: object
    previous: str | None  # the predecessor hash written inside; None for an instance's first
    where: str
    data: bytes
