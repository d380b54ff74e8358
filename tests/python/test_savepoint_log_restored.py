"""review13b F5: a savepoint whose lines came from `precompact restore` has no COMPACT_SUMMARY
line; `dropped` must say so, not blame PostCompact."""

from __future__ import annotations

from precompact.local import savepoint_log
from precompact.restore import dropped


def created(sequence: int) -> dict:
    return {"event": "SAVEPOINT_CREATED", "instance": "Trial #1", "sequence": sequence, "snapshot_hash": "sha256:ab"}


def test_restored_lines_mark_their_savepoint_restored_and_a_written_one_is_not():
    restored_line = savepoint_log.restored_lines(
        savepoint_log.Savepoint(sequence=1, created=created(1)), [], "c0ffee", "b", "origin"
    )
    written = [created(2), {"event": "LAYER_2_COMMITTED", "instance": "Trial #1", "sequence": 2, "commit": "c2"}]
    forged = [created(3), {"event": "LAYER_2_COMMITTED", "instance": "Trial #1", "sequence": 3, "restored": "yes"}]
    folded = {s.sequence: s for s in savepoint_log.fold([*restored_line, *written, *forged])}
    assert folded[1].restored is True
    assert folded[2].restored is False and folded[3].restored is False
    assert "not restored from the remote" in dropped.NOT_RESTORED
